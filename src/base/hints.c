/*
 * hints.c - the table of the core's hints and the one parser (hints.h). README.md's hint tables
 * list the same keys; the doc strings here are the one-line summary.
 */
#include "base/hints.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Hint values are at most 1023 bytes (tess_info_set), so they always fit. */
#define VALUE_CAP 1024
#define TIB (INT64_C(1) << 40)

const char *const tessi_hint_tristate[] = {"automatic", "enable", "disable", NULL};
const char *const tessi_hint_onoff[] = {"disable", "enable", NULL};
static const char *const model_names[] = {"cached", "uncached", NULL};
static const char *const realm_names[] = {"even", "aligned", "persistent", "balanced", "cyclic",
                                          NULL};

#define FILE_INT(k, lo, hi, d, text) \
    {.key = k, .kind = TESSI_HINT_INT, .scope = TESSI_SCOPE_FILE, .min = lo, .max = hi, .def = d, \
     .doc = text}
#define COLL_INT(k, lo, hi, d, dtext, text) \
    {.key = k, .kind = TESSI_HINT_INT, .scope = TESSI_SCOPE_COLL, .min = lo, .max = hi, .def = d, \
     .def_text = dtext, .doc = text}
#define CHOICE(k, sc, names, text) \
    {.key = k, .kind = TESSI_HINT_CHOICE, .scope = sc, .choices = names, .doc = text}

const tessi_hint_def tessi_hints_table[TESSI_NHINTS] = {
    [TESSI_H_METHOD] = {.key = "tess_method", .kind = TESSI_HINT_NAME, .scope = TESSI_SCOPE_FILE,
                        .def_text = "auto", .doc = "independent-I/O method: auto or a method name"},
    [TESSI_H_DS_READ] = CHOICE("romio_ds_read", TESSI_SCOPE_FILE, tessi_hint_tristate,
                               "data sieving of reads: allowed, forced or ruled out"),
    [TESSI_H_DS_WRITE] = CHOICE("romio_ds_write", TESSI_SCOPE_FILE, tessi_hint_tristate,
                                "data sieving of writes: allowed, forced or ruled out"),
    [TESSI_H_RD_BUFFER] = FILE_INT("ind_rd_buffer_size", 1, TIB, 4 << 20,
                                   "sieve read window, bytes"),
    /* 1 MiB, twice ROMIO's 512 KiB: ext4 (Linux 6.x) walks every block of each large folio a
     * write touches, so 512 KiB windows into a file written in 1 MiB pieces walk each folio
     * twice; with 1 MiB windows `tessera bench sweep` sieved writes of 8 B-1 KiB regions with
     * 8-64 B holes 1.1-1.5x faster, relative to 4 MiB chunked copies in the same run */
    [TESSI_H_WR_BUFFER] = FILE_INT("ind_wr_buffer_size", 1, TIB, 1 << 20,
                                   "sieve write window, bytes"),
    /* 1024: the most iovecs one vectored call takes (TESSI_IOV_MAX) */
    [TESSI_H_LIST_MAX_PAIRS] = FILE_INT("tess_list_max_pairs", 1, 1024, 64,
                                        "file regions per list-I/O call"),
    [TESSI_H_DRIVER] = {.key = "tess_driver", .kind = TESSI_HINT_NAME,
                        .scope = TESSI_SCOPE_FILE, .def_text = "posix",
                        .doc = "storage driver"},
    [TESSI_H_PROFILE] = {.key = "tess_profile", .kind = TESSI_HINT_PATH,
                         .scope = TESSI_SCOPE_FILE, .min = 0, .def_text = "",
                         .doc = "cost-model profile file (empty: $TESS_PROFILE, then "
                                "$XDG_CONFIG_HOME/tessera/profile, ~/.config/tessera/profile)"},
    [TESSI_H_MODEL] = CHOICE("tess_model", TESSI_SCOPE_FILE, model_names,
                             "which variant of the profile prices the methods"),
    [TESSI_H_DECISIONS] = {.key = "tess_debug_decisions", .kind = TESSI_HINT_PATH,
                           .scope = TESSI_SCOPE_FILE, .min = 1, .def_text = "",
                           .doc = "file `auto` appends one line per decision to"},
    [TESSI_H_CB_NODES] = COLL_INT("cb_nodes", 1, INT64_MAX, 0, "one per node",
                                  "aggregators (clamped to the group size)"),
    [TESSI_H_CB_BUFFER] = COLL_INT("cb_buffer_size", 1, INT64_C(1) << 30, 16 << 20, NULL,
                                   "collective buffer per aggregator, bytes"),
    [TESSI_H_CB_READ] = CHOICE("romio_cb_read", TESSI_SCOPE_COLL, tessi_hint_tristate,
                               "two-phase for collective reads"),
    [TESSI_H_CB_WRITE] = CHOICE("romio_cb_write", TESSI_SCOPE_COLL, tessi_hint_tristate,
                                "two-phase for collective writes"),
    [TESSI_H_REALMS] = CHOICE("tess_realms", TESSI_SCOPE_COLL, realm_names,
                              "how the aggregate access is split among the aggregators"),
    [TESSI_H_STRIPING_UNIT] = COLL_INT("striping_unit", 1, TIB, 0, "1 MiB where aligned realms "
                                       "need one", "aligned realm boundaries, bytes"),
    [TESSI_H_REALM_SIZE] = COLL_INT("tess_realm_size", 1, TIB, 0, "striping_unit, else 1 MiB",
                                    "block of cyclic realms, bytes"),
    [TESSI_H_CB_SIEVE] = COLL_INT("tess_cb_sieve_threshold", 0, TIB, 16 << 10, NULL,
                                  "file bytes per region below which an aggregator sieves"),
    [TESSI_H_CB_PIPELINE] = CHOICE("tess_cb_pipeline", TESSI_SCOPE_COLL, tessi_hint_onoff,
                                   "overlap the exchange with storage (two half buffers)"),
    /* thread teams (tessera_team.h); 0: not given, resolved at open (core/file.c) */
    [TESSI_H_OMP_SMIN] = FILE_INT("tess_omp_smin", 1, TIB, 0,
                                  "team access: smallest block one member moves, bytes"),
    [TESSI_H_OMP_ACTIVE] = FILE_INT("tess_omp_active", 1, 4096, 0,
                                    "team access: members that move data"),
    [TESSI_H_CB_PACK] = CHOICE("tess_cb_pack", TESSI_SCOPE_COLL, tessi_hint_tristate,
                               "pack an exchange's small pieces into a contiguous buffer: when "
                               "the model says so, always, or never"),
};

/* The choices as "a|b|c" for messages. */
static void choice_list(const char *const *names, char *out, size_t cap)
{
    out[0] = '\0';
    for (int i = 0; names[i]; i++) {
        size_t used = strlen(out);
        snprintf(out + used, cap - used, "%s%s", i ? "|" : "", names[i]);
    }
}

static int parse_one(const tessi_hint_def *d, const char *val, const char *who,
                     tessi_hint_val *v)
{
    char list[256], *end;
    switch (d->kind) {
    case TESSI_HINT_INT: {
        errno = 0;
        long long x = strtoll(val, &end, 10);
        if (val[0] < '0' || val[0] > '9' || *end || errno || x < d->min || x > d->max)
            return tessi_error(TESS_ERR_ARG, "%s: hint %s = '%s' is not an integer in "
                               "[%lld, %lld]", who, d->key, val, (long long)d->min,
                               (long long)d->max);
        v->i = x;
        return 0;
    }
    case TESSI_HINT_CHOICE:
        for (int i = 0; d->choices[i]; i++)
            if (strcmp(val, d->choices[i]) == 0) {
                v->i = i;
                return 0;
            }
        choice_list(d->choices, list, sizeof list);
        return tessi_error(TESS_ERR_ARG, "%s: hint %s = '%s' is not one of %s", who, d->key, val,
                           list);
    case TESSI_HINT_NAME:
    case TESSI_HINT_PATH:
        if ((int64_t)strlen(val) < (d->kind == TESSI_HINT_NAME ? 1 : d->min))
            return tessi_error(TESS_ERR_ARG, "%s: hint %s is empty", who, d->key);
        if (!(v->s = strdup(val)))
            return tessi_error(TESS_ERR_NOMEM, "%s: out of memory", who);
        return 0;
    }
    return tessi_error(TESS_ERR_INTERNAL, "%s: hint %s has no kind", who, d->key);
}

int tessi_hints_parse(const tessi_hint_def *defs, int n, const tess_info *info, const char *who,
                      tessi_hint_val *vals)
{
    char val[VALUE_CAP];
    int rc = 0;
    for (int k = 0; k < n; k++) {
        const tessi_hint_def *d = &defs[k];
        int found = 0;
        vals[k] = (tessi_hint_val){.i = d->def};
        if (rc == 0 && info)
            rc = tess_info_get(info, d->key, val, sizeof val, &found);
        if (rc == 0 && found && (rc = parse_one(d, val, who, &vals[k])) == 0)
            vals[k].given = true;
        if (rc == 0 && !vals[k].s && d->def_text && d->def_text[0] &&
            (d->kind == TESSI_HINT_NAME || d->kind == TESSI_HINT_PATH) &&
            !(vals[k].s = strdup(d->def_text)))
            rc = tessi_error(TESS_ERR_NOMEM, "%s: out of memory", who);
    }
    if (rc)
        tessi_hints_release(vals, n);
    return rc;
}

void tessi_hints_release(tessi_hint_val *vals, int n)
{
    for (int k = 0; k < n; k++) {
        free(vals[k].s);
        vals[k].s = NULL;
    }
}

int tessi_hints_to_info(const tessi_hint_def *defs, int n, const tessi_hint_val *vals,
                        tess_info *out)
{
    char text[24];
    int rc = 0;
    for (int k = 0; rc == 0 && k < n; k++) {
        const tessi_hint_def *d = &defs[k];
        const char *v = NULL;
        if (d->kind == TESSI_HINT_INT && vals[k].i >= d->min) {
            snprintf(text, sizeof text, "%lld", (long long)vals[k].i);
            v = text;
        } else if (d->kind == TESSI_HINT_CHOICE) {
            v = d->choices[vals[k].i];
        } else if (d->kind == TESSI_HINT_NAME || d->kind == TESSI_HINT_PATH) {
            v = vals[k].s && vals[k].s[0] ? vals[k].s : NULL;
        }
        if (v)
            rc = tess_info_set(out, d->key, v);
    }
    return rc;
}
