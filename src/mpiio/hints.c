/*
 * hints.c - the hints of a file: MPI_Info to Tessera's hints at open, the hint files, and
 * MPI_File_get_info / MPI_File_set_info.
 *
 * Precedence (highest first): the info given to MPI_File_open, the file named by TESS_HINTS,
 * the file named by ROMIO_HINTS (else /etc/romio-hints, as ROMIO). The files have ROMIO's
 * format: one "key value" pair per line, whitespace-separated; a line starting with '#', or
 * without exactly two words, is skipped; within a file the first line of a key wins. Rank 0
 * reads them and sends them to the others, so every rank has the same defaults.
 *
 * ROMIO's hints are taken the way ROMIO takes them: enable / disable / automatic in either
 * case, sizes as positive integers; a value ROMIO would ignore is ignored (not an error), and
 * sizes beyond Tessera's bounds are clamped. Tessera's own hints (tess_*) are passed on as
 * given, and a bad value makes the open fail with a message naming the hint.
 */
#include "mpiio.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define HINT_FILE_MAX (64 * 1024)
#define DEFAULT_ROMIO_FILE "/etc/romio-hints"

/* ROMIO's size hints Tessera understands, with Tessera's upper bound for each. */
static const struct {
    const char *key;
    int64_t max;
} size_hints[] = {
    {"cb_buffer_size", INT64_C(1) << 30},   {"cb_nodes", INT32_MAX},
    {"ind_rd_buffer_size", INT64_C(1) << 40}, {"ind_wr_buffer_size", INT64_C(1) << 40},
    {"striping_unit", INT64_C(1) << 40},
};

static const char *const switch_hints[] = {"romio_cb_read", "romio_cb_write", "romio_ds_read",
                                           "romio_ds_write"};

/*
 * The value to pass on for key, or NULL to ignore the pair. out holds a normalized value
 * (MPI_MAX_INFO_VAL + 1 bytes).
 */
static const char *accept(const char *key, const char *val, char *out)
{
    for (size_t i = 0; i < sizeof switch_hints / sizeof switch_hints[0]; i++) {
        if (strcmp(key, switch_hints[i]) != 0)
            continue;
        static const char *const ok[] = {"enable", "disable", "automatic"};
        for (int k = 0; k < 3; k++)
            if (strcasecmp(val, ok[k]) == 0)
                return ok[k];
        return NULL;
    }
    for (size_t i = 0; i < sizeof size_hints / sizeof size_hints[0]; i++) {
        if (strcmp(key, size_hints[i].key) != 0)
            continue;
        char *end;
        errno = 0;
        long long v = strtoll(val, &end, 10);
        if (end == val || *end || errno || v <= 0)
            return NULL;
        snprintf(out, MPI_MAX_INFO_VAL + 1, "%lld",
                 v > size_hints[i].max ? (long long)size_hints[i].max : v);
        return out;
    }
    return val;
}

/* Set key to val in ti (filtered by accept); only if absent when !override. 0 or TESS_ERR_*. */
static int put(tess_info *ti, const char *key, const char *val, bool override)
{
    char norm[MPI_MAX_INFO_VAL + 1];
    int found = 0;
    const char *v = accept(key, val, norm);
    if (!v || strlen(key) > 255 || strlen(v) > 1023)
        return 0;
    if (!override && (tess_info_get(ti, key, NULL, 0, &found), found))
        return 0;
    return tess_info_set(ti, key, v);
}

/* Read a hint file into buf (NUL-terminated; empty when missing). */
static void read_file(const char *path, char *buf, size_t cap)
{
    buf[0] = '\0';
    FILE *fp = path ? fopen(path, "r") : NULL;
    if (!fp)
        return;
    size_t n = fread(buf, 1, cap - 1, fp);
    buf[n] = '\0';
    fclose(fp);
}

/* Add the pairs of a hint file's text, first occurrence of a key winning, keys already in ti
   kept (the files are applied highest precedence first). */
static int parse_file(tess_info *ti, char *text)
{
    char *line_save = NULL;
    for (char *line = strtok_r(text, "\n", &line_save); line;
         line = strtok_r(NULL, "\n", &line_save)) {
        char *save = NULL;
        if (line[0] == '#')
            continue;
        char *key = strtok_r(line, " \t\r", &save);
        char *val = key ? strtok_r(NULL, " \t\r", &save) : NULL;
        if (!val || strtok_r(NULL, " \t\r", &save))
            continue;
        int rc = put(ti, key, val, false);
        if (rc)
            return rc;
    }
    return 0;
}

/*
 * The text of the hint files on every rank (collective; rank 0 reads them): TESS_HINTS' file, a
 * NUL, ROMIO_HINTS' file, a NUL. *text is malloc'ed; NULL when neither file exists.
 */
static int share_files(MPI_Comm comm, int rank, char **text, const char *who)
{
    char *mine = NULL;
    int64_t len = 0, t = 0;
    *text = NULL;
    if (rank == 0 && !(mine = malloc(2 * HINT_FILE_MAX)))
        len = -1;
    if (mine) {
        const char *romio = getenv("ROMIO_HINTS");
        read_file(getenv("TESS_HINTS"), mine, HINT_FILE_MAX);
        t = (int64_t)strlen(mine) + 1;
        read_file(romio ? romio : DEFAULT_ROMIO_FILE, mine + t, HINT_FILE_MAX);
        len = t + (int64_t)strlen(mine + t) + 1;
        len = len > 2 ? len : 0;
    }
    MPI_Bcast(&len, 1, MPI_INT64_T, 0, comm);
    if (len <= 0) { /* the usual case: one small broadcast */
        free(mine);
        return len == 0 ? MPI_SUCCESS
                        : tessi_mio_error(MPI_ERR_NO_MEM, who, "out of memory (hint files)");
    }
    *text = rank == 0 ? mine : malloc((size_t)len);
    int ok = *text != NULL, all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, comm);
    if (all)
        MPI_Bcast(*text, (int)len, MPI_CHAR, 0, comm);
    if (!all) {
        free(*text);
        *text = NULL;
        return tessi_mio_error(MPI_ERR_NO_MEM, who, "out of memory (hint files)");
    }
    return MPI_SUCCESS;
}

int tessi_mio_hints_make(MPI_Comm comm, MPI_Info info, tess_info **out, const char *who)
{
    int rank = 0, rc = 0, nkeys = 0;
    char *files = NULL;
    tess_info *ti = NULL;
    *out = NULL;
    MPI_Comm_rank(comm, &rank);
    int code = share_files(comm, rank, &files, who);
    if (code)
        return code;
    if (info != MPI_INFO_NULL && MPI_Info_get_nkeys(info, &nkeys) != MPI_SUCCESS) {
        free(files);
        return tessi_mio_error(MPI_ERR_INFO, who, "invalid info object");
    }
    size_t second = files ? strlen(files) + 1 : 0; /* parsing cuts the text up */
    if ((rc = tess_info_create(&ti)) == 0 && files && (rc = parse_file(ti, files)) == 0)
        rc = parse_file(ti, files + second);
    for (int i = 0; rc == 0 && i < nkeys; i++) {
        char key[MPI_MAX_INFO_KEY + 1], val[MPI_MAX_INFO_VAL + 1];
        int flag = 0;
        if (MPI_Info_get_nthkey(info, i, key) == MPI_SUCCESS &&
            MPI_Info_get(info, key, MPI_MAX_INFO_VAL, val, &flag) == MPI_SUCCESS && flag)
            rc = put(ti, key, val, true);
    }
    free(files);
    if (rc) {
        tess_info_free(ti);
        return tessi_mio_tess_error(rc, who);
    }
    *out = ti;
    return MPI_SUCCESS;
}

/* ------------------------------------------------------------------ get_info */

/*
 * What MPI_File_get_info reports besides Tessera's hints in use (tess_file_get_info: ROMIO's
 * names where ROMIO has one, defaults included): ROMIO's other usual keys with the values that
 * describe Tessera, and romio_visibility_immediate: a write is visible to every process as
 * soon as it returns (no client cache), so HDF5 need not sync after collective writes.
 */
static const struct {
    const char *key, *value;
} romio_extra[] = {
    {"striping_factor", "1"}, {"romio_no_indep_rw", "false"}, {"cb_config_list", "*:1"},
    {"romio_visibility_immediate", "true"},
};

int tessi_mio_hints_get(tessi_mio_file *mf, MPI_Info *out)
{
    static const char who[] = "MPI_File_get_info";
    char key[256], val[1024];
    int64_t n = 0;
    tess_info *ti = NULL;
    MPI_Info info = MPI_INFO_NULL;
    int rc = tess_file_get_info(mf->tf, &ti);
    if (rc == 0)
        rc = tess_info_get_nkeys(ti, &n);
    if (rc) {
        tess_info_free(ti);
        return tessi_mio_tess_error(rc, who);
    }
    int err = MPI_Info_create(&info);
    for (int64_t k = 0; err == MPI_SUCCESS && k < n; k++) {
        int found = 0;
        /* MPI refuses empty values (tess_profile is "" without a profile) */
        if (tess_info_get_nthkey(ti, k, key, sizeof key) == 0 &&
            tess_info_get(ti, key, val, sizeof val, &found) == 0 && found && val[0])
            err = MPI_Info_set(info, key, val);
    }
    for (size_t i = 0; err == MPI_SUCCESS && i < sizeof romio_extra / sizeof romio_extra[0];
         i++) {
        int found = 0;
        if (tess_info_get(mf->hints, romio_extra[i].key, val, sizeof val, &found) || !found)
            snprintf(val, sizeof val, "%s", romio_extra[i].value);
        err = MPI_Info_set(info, romio_extra[i].key, val);
    }
    tess_info_free(ti);
    if (err != MPI_SUCCESS) {
        if (info != MPI_INFO_NULL)
            MPI_Info_free(&info);
        return tessi_mio_error(MPI_ERR_INTERN, who, "MPI_Info_set failed (MPI error %d)", err);
    }
    *out = info;
    return MPI_SUCCESS;
}
