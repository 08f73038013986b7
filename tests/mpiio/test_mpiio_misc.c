/*
 * test_mpiio_misc.c - the calls on whole files, hints, views and types, teardown.
 *
 *  - hints: a ROMIO_HINTS file (ROMIO's format, a value in upper case, a comment, a malformed
 *    line), a TESS_HINTS file that overrides it, the open's info that overrides both; get_info
 *    shows the result, ROMIO's usual keys and romio_visibility_immediate; a value ROMIO would
 *    ignore is ignored; set_info is collective and harmless;
 *  - get_view returns committed duplicates of the program's types, even after it freed them;
 *  - the datatype cache follows the program freeing types and MPI reusing their handles;
 *  - set_size, preallocate, get_size against stat(2); get_amode; get_group; sync;
 *  - MPI_File_delete and MPI_MODE_DELETE_ON_CLOSE;
 *  - MPI_File_c2f / f2c before MPI_Init;
 *  - TESS_MPIIO_VERBOSE=1: one line per file at close, from rank 0;
 *  - a file left open at MPI_Finalize is closed by it (its line is printed, its data is there).
 */
#include "mio_test.h"

static int rank, size;
static char path[256];

static void expect_hint(MPI_Info info, const char *key, const char *want)
{
    char val[MPI_MAX_INFO_VAL];
    int flag = 0;
    MT_OK(MPI_Info_get(info, key, MPI_MAX_INFO_VAL - 1, val, &flag));
    if (!flag || strcmp(val, want) != 0) {
        snprintf(mt_where + strlen(mt_where), sizeof mt_where - strlen(mt_where),
                 ": hint %s is '%.100s', expected '%s'", key, flag ? val : "(absent)", want);
        mt_fail(__FILE__, __LINE__, "wrong hint");
    }
}

static void hints(void)
{
    MPI_File fh;
    MPI_Info info, used;
    char romio[300], tess[300];
    snprintf(mt_where, sizeof mt_where, "hints");
    snprintf(romio, sizeof romio, "%s.romio", path);
    snprintf(tess, sizeof tess, "%s.tess", path);
    if (rank == 0) {
        const char *r = "# ROMIO's format\ncb_buffer_size 1048576\nromio_cb_write ENABLE\n"
                        "ind_rd_buffer_size 65536\nthis line has three\nstriping_factor 4\n"
                        "cb_buffer_size 999\n";
        const char *t = "cb_buffer_size 2097152\ntess_method list\n";
        mt_spit(romio, (const unsigned char *)r, (int64_t)strlen(r));
        mt_spit(tess, (const unsigned char *)t, (int64_t)strlen(t));
    }
    setenv("ROMIO_HINTS", romio, 1);
    setenv("TESS_HINTS", tess, 1);
    MPI_Barrier(MPI_COMM_WORLD);
    MT_OK(MPI_Info_create(&info));
    MT_OK(MPI_Info_set(info, "ind_rd_buffer_size", "131072"));
    MT_OK(MPI_Info_set(info, "romio_ds_read", "sometimes")); /* ROMIO ignores it: so do we */
    MT_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR | MPI_MODE_CREATE, info, &fh));
    MPI_Info_free(&info);
    unsetenv("ROMIO_HINTS");
    unsetenv("TESS_HINTS");
    MT_OK(MPI_File_get_info(fh, &used));
    expect_hint(used, "cb_buffer_size", "2097152");   /* TESS_HINTS over ROMIO_HINTS */
    expect_hint(used, "romio_cb_write", "enable");    /* ROMIO's spelling accepted */
    expect_hint(used, "ind_rd_buffer_size", "131072"); /* the info over both files */
    expect_hint(used, "tess_method", "list");
    expect_hint(used, "striping_factor", "4");
    expect_hint(used, "romio_ds_read", "automatic");
    expect_hint(used, "romio_visibility_immediate", "true");
    expect_hint(used, "ind_wr_buffer_size", "1048576"); /* Tessera's default */
    char val[MPI_MAX_INFO_VAL];
    int flag = 0;
    MT_OK(MPI_Info_get(used, "cb_nodes", MPI_MAX_INFO_VAL - 1, val, &flag));
    MT_CHECK(flag && atoi(val) >= 1);
    MPI_Info_free(&used);
    MT_OK(MPI_Info_create(&info));
    MT_OK(MPI_Info_set(info, "cb_buffer_size", "4096"));
    MT_OK(MPI_File_set_info(fh, info));
    MPI_Info_free(&info);
    MT_OK(MPI_File_close(&fh));
    if (rank == 0) {
        unlink(romio);
        unlink(tess);
    }
}

static void views_and_types(void)
{
    MPI_File fh;
    MPI_Datatype vec, e, f;
    MPI_Offset disp;
    MPI_Status st;
    char rep[MPI_MAX_DATAREP_STRING];
    int ni, na, nd, combiner;
    snprintf(mt_where, sizeof mt_where, "get_view");
    MT_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR | MPI_MODE_CREATE, MPI_INFO_NULL,
                        &fh));
    MT_OK(MPI_Type_vector(4, 1, 3, MPI_INT, &vec));
    MT_OK(MPI_Type_commit(&vec));
    MT_OK(MPI_File_set_view(fh, 12, MPI_INT, vec, "native", MPI_INFO_NULL));
    MPI_Type_free(&vec); /* the file keeps what it needs */
    MT_OK(MPI_File_get_view(fh, &disp, &e, &f, rep));
    MT_CHECK(disp == 12 && e == MPI_INT && strcmp(rep, "native") == 0);
    MT_OK(MPI_Type_get_envelope(f, &ni, &na, &nd, &combiner));
    MT_CHECK(combiner == MPI_COMBINER_DUP);
    MPI_Count fsize;
    MPI_Aint lb, extent;
    MT_OK(MPI_Type_size_x(f, &fsize));
    MT_OK(MPI_Type_get_extent(f, &lb, &extent));
    MT_CHECK(fsize == 16 && extent == 40);
    MT_OK(MPI_Type_free(&f));
    MT_OK(MPI_File_get_type_extent(fh, MPI_DOUBLE, &extent));
    MT_CHECK(extent == 8);

    /* the type cache: free a type, make another (MPI may reuse the handle), write with it */
    snprintf(mt_where, sizeof mt_where, "datatype cache");
    MT_OK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    for (int round = 0; round < 20; round++) {
        MPI_Datatype t;
        int stride = 1 + round % 4, v[8];
        MT_OK(MPI_Type_vector(8, 1, stride, MPI_INT, &t));
        MT_OK(MPI_Type_commit(&t));
        int *mem = calloc(8 * 4, sizeof *mem);
        for (int i = 0; i < 8; i++)
            mem[i * stride] = round * 100 + i + 1000 * rank;
        MT_OK(MPI_File_write_at(fh, 64 * rank, mem, 1, t, &st));
        MT_CHECK(mt_status_bytes(&st) == 32);
        MPI_Type_free(&t);
        free(mem);
        int fd = open(path, O_RDONLY);
        MT_CHECK(pread(fd, v, sizeof v, 64 * rank) == sizeof v);
        close(fd);
        for (int i = 0; i < 8; i++)
            MT_CHECK(v[i] == round * 100 + i + 1000 * rank);
    }

    snprintf(mt_where, sizeof mt_where, "sizes");
    struct stat sb;
    MPI_Offset s;
    MT_OK(MPI_File_set_size(fh, 1000));
    MT_OK(MPI_File_get_size(fh, &s));
    MT_CHECK(s == 1000 && stat(path, &sb) == 0 && sb.st_size == 1000);
    MT_OK(MPI_File_preallocate(fh, 5000));
    MT_OK(MPI_File_get_size(fh, &s));
    MT_CHECK(s == 5000 && stat(path, &sb) == 0 && sb.st_size == 5000);
    MT_OK(MPI_File_preallocate(fh, 10)); /* never shrinks */
    MT_OK(MPI_File_get_size(fh, &s));
    MT_CHECK(s == 5000);
    MT_OK(MPI_File_set_size(fh, 10));
    MT_OK(MPI_File_get_size(fh, &s));
    MT_CHECK(s == 10);
    MT_OK(MPI_File_sync(fh));
    int amode, cmp;
    MT_OK(MPI_File_get_amode(fh, &amode));
    MT_CHECK(amode == (MPI_MODE_RDWR | MPI_MODE_CREATE));
    MPI_Group g, w;
    MT_OK(MPI_File_get_group(fh, &g));
    MPI_Comm_group(MPI_COMM_WORLD, &w);
    MT_OK(MPI_Group_compare(g, w, &cmp));
    MT_CHECK(cmp == MPI_IDENT);
    MPI_Group_free(&g);
    MPI_Group_free(&w);
    MT_OK(MPI_File_close(&fh));
}

static void deletes(void)
{
    MPI_File fh;
    struct stat sb;
    snprintf(mt_where, sizeof mt_where, "delete");
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        MT_OK(MPI_File_delete(path, MPI_INFO_NULL));
        MT_CHECK(stat(path, &sb) != 0);
        MT_ERR(MPI_File_delete(path, MPI_INFO_NULL), MPI_ERR_NO_SUCH_FILE, path);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MT_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR | MPI_MODE_CREATE |
                        MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL, &fh));
    MT_CHECK(stat(path, &sb) == 0);
    MT_OK(MPI_File_close(&fh));
    MT_CHECK(stat(path, &sb) != 0);
}

/* Run `what` with this process's stderr going to file `log` (the library's verbose lines). */
static int stderr_to(const char *log)
{
    fflush(stderr);
    int saved = dup(2), fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    MT_CHECK(saved >= 0 && fd >= 0 && dup2(fd, 2) == 2);
    close(fd);
    return saved;
}

static void stderr_back(int saved)
{
    fflush(stderr);
    MT_CHECK(dup2(saved, 2) == 2);
    close(saved);
}

/* The lines of log that name path (-1 if the log cannot be read). */
static int lines_naming(const char *log, const char *name)
{
    int64_t n;
    unsigned char *text = mt_slurp(log, &n);
    int lines = 0;
    if (!text)
        return -1;
    text[n] = '\0';
    for (char *p = (char *)text; (p = strstr(p, "tessera_mpiio: ")); p++)
        lines += strncmp(p + 15, name, strlen(name)) == 0 && strstr(p, "desired") != NULL;
    free(text);
    return lines;
}

int main(int argc, char **argv)
{
    MPI_File fh;
    MPI_Status st;
    char log[300], left[300];
    int v[4] = {1, 2, 3, 4};
    /* before MPI_Init: the handle conversions need no MPI */
    MT_CHECK(MPI_File_c2f(MPI_FILE_NULL) == 0 && MPI_File_f2c(0) == MPI_FILE_NULL);
    mt_begin(&argc, &argv, &rank, &size, path, sizeof path, "misc");
    hints();
    views_and_types();
    deletes();

    snprintf(mt_where, sizeof mt_where, "TESS_MPIIO_VERBOSE");
    snprintf(log, sizeof log, "%s.%d.log", path, rank);
    snprintf(left, sizeof left, "%s.left", path);
    setenv("TESS_MPIIO_VERBOSE", "1", 1);
    MT_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR | MPI_MODE_CREATE, MPI_INFO_NULL,
                        &fh));
    MT_OK(MPI_File_write_at_all(fh, 16 * rank, v, 4, MPI_INT, &st));
    int saved = stderr_to(log);
    MT_OK(MPI_File_close(&fh));
    stderr_back(saved);
    MT_CHECK(lines_naming(log, path) == (rank == 0));

    /* left open: MPI_Finalize closes it (its verbose line shows it did) */
    MT_OK(MPI_File_open(MPI_COMM_WORLD, left, MPI_MODE_RDWR | MPI_MODE_CREATE, MPI_INFO_NULL,
                        &fh));
    MT_OK(MPI_File_write_at_all(fh, 16 * rank, v, 4, MPI_INT, &st));
    if (rank == 0)
        unlink(path);
    saved = stderr_to(log);
    MPI_Finalize();
    stderr_back(saved);
    /* MPI is gone: failures are reported by the exit status; rank 0 checks the data (and
       removes the file: the others cannot wait for it any more) */
    int64_t n = 0;
    unsigned char *data = rank == 0 ? mt_slurp(left, &n) : NULL;
    int lines = lines_naming(log, left);
    if (lines != (rank == 0) || (rank == 0 && (!data || n != 16 * size))) {
        fprintf(stderr, "[rank %d] FAILED: the file left open was not closed by MPI_Finalize "
                "(%lld bytes, verbose lines %d)\n", rank, (long long)n, lines);
        return 1;
    }
    for (int q = 0; q < size; q++)
        if (rank == 0 && memcmp(data + 16 * q, v, sizeof v) != 0) {
            fprintf(stderr, "FAILED: rank %d's data is not in the file left open\n", q);
            return 1;
        }
    free(data);
    unlink(log);
    if (rank == 0) {
        unlink(left);
        printf("whole-file calls, hints, views, teardown on %d ranks: ok\n", size);
    }
    return 0;
}
