/*
 * coll_common.c - the runner of the collective workloads (see coll.h).
 *
 * For one access pattern and each selected method, on MPI_COMM_WORLD:
 *   1. rank 0 creates the method's file and fills it with HOLE_BYTE up to the pattern's file
 *      size (holes of a noncontiguous pattern then have a defined content that writes keep);
 *   2. the file is opened (tess_file_open_mpi with the method's hints, or MPI_File_open),
 *      one untimed write operation warms everything up, then `reps` timed operations run:
 *      MPI_Barrier, the operation (all its calls, set_view where the view changes), the
 *      operation's time reduced with MAX over ranks; the median is printed. Fewer repetitions
 *      run when an operation is slow (the budget option). The counters (tess_file_stats) of
 *      the last repetition are reduced over ranks;
 *   3. the read buffer is set to 0xEE, one read operation is verified on every rank (data
 *      bytes equal what was written, holes of a noncontiguous buffer untouched), then reads
 *      are timed like writes;
 *   4. after the collective close, rank 0 compares the file byte for byte with the expected
 *      image and with the first Tessera method's file (the reference).
 * MPI-IO runs last; its file and reads are checked the same way, printed as information only
 * (the MPI library is compared with, never taken as the truth).
 *
 * Page-cache figures: nothing is dropped from the cache; writes are synced only with --sync.
 */
#include "coll.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The fill of every file before a method writes it (the holes' expected content). */
#define HOLE_BYTE 0x5A
/* The fill of the read buffer before a verified read (holes must keep it). */
#define READ_FILL 0xEE
/* The fill of the holes of the write buffer (must never reach the file). */
#define WRITE_HOLE 0xAB

const char *const coll_method_names[COLL_NMETHODS] = {
    "mpi",    "naive",      "sieve",         "list",        "pmd",
    "tp-even", "tp-aligned", "tp-persistent", "tp-balanced", "auto"};

/* ================================================================ messages */

static int g_rank; /* for messages */

static int fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "tessera: [rank %d] ", g_rank);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return -1;
}

static int tfail(int rc, const char *what)
{
    return fail("%s: %s (%s)", what, tess_strerror(rc), tess_last_error());
}

static int mfail(int rc, const char *what)
{
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(rc, text, &len) != MPI_SUCCESS)
        len = 0;
    text[len < MPI_MAX_ERROR_STRING ? len : MPI_MAX_ERROR_STRING - 1] = '\0';
    return fail("%s: MPI error %d: %s", what, rc, text);
}

/* ============================================================ dual types */

void coll_type_named(tess_type *t, MPI_Datatype m, coll_type *out)
{
    out->t = t;
    out->m = m;
    out->own_m = 0;
}

void coll_type_free(coll_type *t)
{
    if (!t)
        return;
    tess_type_free(t->t);
    if (t->own_m && t->m != MPI_DATATYPE_NULL)
        MPI_Type_free(&t->m);
    t->t = NULL;
    t->m = MPI_DATATYPE_NULL;
    t->own_m = 0;
}

static int fits_int(int64_t v, const char *what)
{
    if (v < INT_MIN || v > INT_MAX)
        return fail("%s: %lld does not fit the int argument of the MPI constructor", what,
                    (long long)v);
    return 0;
}

/*
 * Finish a dual constructor: trc is the Tessera constructor's return, mrc the MPI one's (the
 * MPI type in *m). Commits the MPI type and compares size, lb and extent; with fix_bounds the
 * Tessera type is resized to MPI's bounds instead (structs: MPI pads, Tessera does not).
 */
static int dual_finish(coll_type *out, tess_type *t, int trc, MPI_Datatype m, int mrc,
                       const char *what, int fix_bounds)
{
    out->t = NULL;
    out->m = MPI_DATATYPE_NULL;
    out->own_m = 0;
    if (trc != 0) {
        if (mrc == MPI_SUCCESS)
            MPI_Type_free(&m);
        return tfail(trc, what);
    }
    if (mrc != MPI_SUCCESS) {
        tess_type_free(t);
        return mfail(mrc, what);
    }
    out->t = t;
    out->m = m;
    out->own_m = 1;
    int rc = MPI_Type_commit(&out->m);
    if (rc != MPI_SUCCESS) {
        coll_type_free(out);
        return mfail(rc, "MPI_Type_commit");
    }
    MPI_Count msize = 0, mlb = 0, mext = 0;
    if ((rc = MPI_Type_size_x(out->m, &msize)) != MPI_SUCCESS ||
        (rc = MPI_Type_get_extent_x(out->m, &mlb, &mext)) != MPI_SUCCESS) {
        coll_type_free(out);
        return mfail(rc, "MPI_Type_size_x/get_extent_x");
    }
    if (fix_bounds && (tess_type_lb(out->t) != (int64_t)mlb ||
                       tess_type_extent(out->t) != (int64_t)mext)) {
        tess_type *r = NULL;
        int trc2 = tess_type_resized(out->t, (int64_t)mlb, (int64_t)mext, &r);
        if (trc2 != 0) {
            coll_type_free(out);
            return tfail(trc2, "tess_type_resized (struct bounds)");
        }
        tess_type_free(out->t);
        out->t = r;
    }
    if (tess_type_size(out->t) != (int64_t)msize || tess_type_lb(out->t) != (int64_t)mlb ||
        tess_type_extent(out->t) != (int64_t)mext) {
        fail("%s: Tessera and MPI disagree: size %lld/%lld lb %lld/%lld extent %lld/%lld", what,
             (long long)tess_type_size(out->t), (long long)msize,
             (long long)tess_type_lb(out->t), (long long)mlb,
             (long long)tess_type_extent(out->t), (long long)mext);
        coll_type_free(out);
        return -1;
    }
    return 0;
}

int coll_type_contiguous(int64_t count, const coll_type *old, coll_type *out)
{
    tess_type *t = NULL;
    MPI_Datatype m = MPI_DATATYPE_NULL;
    if (fits_int(count, "contiguous count"))
        return dual_finish(out, NULL, TESS_ERR_ARG, m, MPI_ERR_ARG, "contiguous", 0), -1;
    int trc = tess_type_contiguous(count, old->t, &t);
    int mrc = MPI_Type_contiguous((int)count, old->m, &m);
    return dual_finish(out, t, trc, m, mrc, "contiguous", 0);
}

int coll_type_vector(int64_t count, int64_t blocklen, int64_t stride, const coll_type *old,
                     coll_type *out)
{
    tess_type *t = NULL;
    MPI_Datatype m = MPI_DATATYPE_NULL;
    if (fits_int(count, "vector count") || fits_int(blocklen, "vector blocklen") ||
        fits_int(stride, "vector stride"))
        return dual_finish(out, NULL, TESS_ERR_ARG, m, MPI_ERR_ARG, "vector", 0), -1;
    int trc = tess_type_vector(count, blocklen, stride, old->t, &t);
    int mrc = MPI_Type_vector((int)count, (int)blocklen, (int)stride, old->m, &m);
    return dual_finish(out, t, trc, m, mrc, "vector", 0);
}

int coll_type_hvector(int64_t count, int64_t blocklen, int64_t stride_bytes, const coll_type *old,
                      coll_type *out)
{
    tess_type *t = NULL;
    MPI_Datatype m = MPI_DATATYPE_NULL;
    if (fits_int(count, "hvector count") || fits_int(blocklen, "hvector blocklen"))
        return dual_finish(out, NULL, TESS_ERR_ARG, m, MPI_ERR_ARG, "hvector", 0), -1;
    int trc = tess_type_hvector(count, blocklen, stride_bytes, old->t, &t);
    int mrc = MPI_Type_create_hvector((int)count, (int)blocklen, (MPI_Aint)stride_bytes, old->m,
                                      &m);
    return dual_finish(out, t, trc, m, mrc, "hvector", 0);
}

enum { MAX_DIMS = 8 };

int coll_type_subarray(int ndims, const int64_t *sizes, const int64_t *subsizes,
                       const int64_t *starts, int order_c, const coll_type *old, coll_type *out)
{
    tess_type *t = NULL;
    MPI_Datatype m = MPI_DATATYPE_NULL;
    int s[MAX_DIMS], ss[MAX_DIMS], st[MAX_DIMS];
    if (ndims < 1 || ndims > MAX_DIMS)
        return fail("subarray: %d dimensions (1 to %d)", ndims, MAX_DIMS);
    for (int i = 0; i < ndims; i++) {
        if (fits_int(sizes[i], "subarray size") || fits_int(subsizes[i], "subarray subsize") ||
            fits_int(starts[i], "subarray start"))
            return dual_finish(out, NULL, TESS_ERR_ARG, m, MPI_ERR_ARG, "subarray", 0), -1;
        s[i] = (int)sizes[i];
        ss[i] = (int)subsizes[i];
        st[i] = (int)starts[i];
    }
    int trc = tess_type_subarray(ndims, sizes, subsizes, starts,
                                 order_c ? TESS_ORDER_C : TESS_ORDER_FORTRAN, old->t, &t);
    int mrc = MPI_Type_create_subarray(ndims, s, ss, st,
                                       order_c ? MPI_ORDER_C : MPI_ORDER_FORTRAN, old->m, &m);
    return dual_finish(out, t, trc, m, mrc, "subarray", 0);
}

int coll_type_darray_block(int size, int rank, int ndims, const int64_t *gsizes,
                           const int *psizes, int order_c, const coll_type *old, coll_type *out)
{
    tess_type *t = NULL;
    MPI_Datatype m = MPI_DATATYPE_NULL;
    int g[MAX_DIMS], dist[MAX_DIMS], darg[MAX_DIMS], ps[MAX_DIMS];
    if (ndims < 1 || ndims > MAX_DIMS)
        return fail("darray: %d dimensions (1 to %d)", ndims, MAX_DIMS);
    for (int i = 0; i < ndims; i++) {
        if (fits_int(gsizes[i], "darray gsize"))
            return dual_finish(out, NULL, TESS_ERR_ARG, m, MPI_ERR_ARG, "darray", 0), -1;
        g[i] = (int)gsizes[i];
        dist[i] = MPI_DISTRIBUTE_BLOCK;
        darg[i] = MPI_DISTRIBUTE_DFLT_DARG;
        ps[i] = psizes[i];
    }
    int tdist[MAX_DIMS], tdarg[MAX_DIMS];
    for (int i = 0; i < ndims; i++) {
        tdist[i] = TESS_DISTRIBUTE_BLOCK;
        tdarg[i] = TESS_DISTRIBUTE_DFLT_DARG;
    }
    int trc = tess_type_darray(size, rank, ndims, gsizes, tdist, tdarg, psizes,
                               order_c ? TESS_ORDER_C : TESS_ORDER_FORTRAN, old->t, &t);
    int mrc = MPI_Type_create_darray(size, rank, ndims, g, dist, darg, ps,
                                     order_c ? MPI_ORDER_C : MPI_ORDER_FORTRAN, old->m, &m);
    return dual_finish(out, t, trc, m, mrc, "darray", 0);
}

int coll_type_struct(int n, const int64_t *blocklens, const int64_t *displs_bytes,
                     const coll_type *types, coll_type *out)
{
    tess_type *t = NULL;
    MPI_Datatype m = MPI_DATATYPE_NULL;
    int mrc = MPI_ERR_ARG, trc = TESS_ERR_NOMEM;
    int *bl = malloc(sizeof *bl * (size_t)(n > 0 ? n : 1));
    MPI_Aint *dp = malloc(sizeof *dp * (size_t)(n > 0 ? n : 1));
    MPI_Datatype *mt = malloc(sizeof *mt * (size_t)(n > 0 ? n : 1));
    tess_type **tt = malloc(sizeof *tt * (size_t)(n > 0 ? n : 1));
    if (!bl || !dp || !mt || !tt)
        goto done;
    for (int i = 0; i < n; i++) {
        if (fits_int(blocklens[i], "struct blocklen")) {
            trc = TESS_ERR_ARG;
            goto done;
        }
        bl[i] = (int)blocklens[i];
        dp[i] = (MPI_Aint)displs_bytes[i];
        mt[i] = types[i].m;
        tt[i] = types[i].t;
    }
    trc = tess_type_struct(n, blocklens, displs_bytes, tt, &t);
    mrc = MPI_Type_create_struct(n, bl, dp, mt, &m);
done:
    free(bl);
    free(dp);
    free(mt);
    free(tt);
    return dual_finish(out, t, trc, m, mrc, "struct", 1);
}

int coll_type_resized(const coll_type *old, int64_t lb, int64_t extent, coll_type *out)
{
    tess_type *t = NULL;
    MPI_Datatype m = MPI_DATATYPE_NULL;
    int trc = tess_type_resized(old->t, lb, extent, &t);
    int mrc = MPI_Type_create_resized(old->m, (MPI_Aint)lb, (MPI_Aint)extent, &m);
    return dual_finish(out, t, trc, m, mrc, "resized", 0);
}

/* ============================================================== patterns */

int coll_pattern_init(coll_pattern *p, int nviews, int nmems, int ncalls)
{
    memset(p, 0, sizeof *p);
    if (nviews < 1 || nmems < 1 || ncalls < 1)
        return fail("pattern: needs at least one view, memory type and call");
    p->views = calloc((size_t)nviews, sizeof *p->views);
    p->mems = calloc((size_t)nmems, sizeof *p->mems);
    p->calls = calloc((size_t)ncalls, sizeof *p->calls);
    if (!p->views || !p->mems || !p->calls) {
        coll_pattern_free(p);
        return fail("pattern: out of memory");
    }
    p->nviews = nviews;
    p->nmems = nmems;
    p->ncalls = ncalls;
    return 0;
}

void coll_pattern_free(coll_pattern *p)
{
    if (p->views)
        for (int i = 0; i < p->nviews; i++) {
            coll_type_free(&p->views[i].etype);
            coll_type_free(&p->views[i].filetype);
        }
    if (p->mems)
        for (int i = 0; i < p->nmems; i++)
            coll_type_free(&p->mems[i]);
    free(p->views);
    free(p->mems);
    free(p->calls);
    p->views = NULL;
    p->mems = NULL;
    p->calls = NULL;
    p->nviews = p->nmems = p->ncalls = 0;
}

void coll_note(coll_pattern *p, const char *fmt, ...)
{
    size_t len = strlen(p->notes);
    if (len + 4 >= sizeof p->notes)
        return;
    p->notes[len++] = ' ';
    p->notes[len++] = ' ';
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->notes + len, sizeof p->notes - len - 1, fmt, ap);
    va_end(ap);
    len = strlen(p->notes);
    p->notes[len] = '\n';
    p->notes[len + 1] = '\0';
}

/* =============================================================== options */

void coll_opts_default(coll_opts *o, const char *workload)
{
    memset(o, 0, sizeof *o);
    o->workload = workload;
    o->reps = 5;
    o->budget = 10.0;
    o->min_rep = 0.05;
    o->methods = (1u << COLL_NMETHODS) - 1;
    const char *tmp = getenv("TMPDIR");
    snprintf(o->dir, sizeof o->dir, "%s", tmp && *tmp ? tmp : "/tmp");
}

static int parse_methods(coll_opts *o, const char *s, int quiet)
{
    char tmp[512];
    if (strlen(s) >= sizeof tmp) {
        if (!quiet)
            fprintf(stderr, "tessera: --methods: list too long\n");
        return -1;
    }
    strcpy(tmp, s);
    unsigned mask = 0;
    char *save = NULL;
    for (char *tok = strtok_r(tmp, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        int k = -1;
        for (int i = 0; i < COLL_NMETHODS; i++)
            if (strcmp(tok, coll_method_names[i]) == 0)
                k = i;
        if (strcmp(tok, "tp") == 0) { /* every two-phase realm variant */
            mask |= 1u << COLL_M_TP_EVEN | 1u << COLL_M_TP_ALIGNED |
                    1u << COLL_M_TP_PERSISTENT | 1u << COLL_M_TP_BALANCED;
            continue;
        }
        if (strcmp(tok, "all") == 0) {
            mask |= (1u << COLL_NMETHODS) - 1;
            continue;
        }
        if (k < 0) {
            if (!quiet) {
                fprintf(stderr, "tessera: --methods: unknown method '%s' (one of", tok);
                for (int i = 0; i < COLL_NMETHODS; i++)
                    fprintf(stderr, " %s", coll_method_names[i]);
                fprintf(stderr, ", tp, all)\n");
            }
            return -1;
        }
        mask |= 1u << k;
    }
    if (!mask) {
        if (!quiet)
            fprintf(stderr, "tessera: --methods: empty list\n");
        return -1;
    }
    o->methods = mask;
    return 0;
}

int coll_parse_size(const char *name, const char *arg, int64_t min, int64_t *out, int quiet)
{
    int64_t v = 0;
    if (quiet) {
        /* same parse, no message: every rank parses the same argv */
        char *end = NULL;
        errno = 0;
        long long x = strtoll(arg, &end, 10);
        if (errno || end == arg || x < 0)
            return -1;
        v = x;
        if (*end == 'k' || *end == 'K')
            v <<= 10, end++;
        else if (*end == 'm' || *end == 'M')
            v <<= 20, end++;
        else if (*end == 'g' || *end == 'G')
            v <<= 30, end++;
        if (*end)
            return -1;
    } else if (bench_parse_size(name, arg, &v) != 0) {
        return -1;
    }
    if (v < min) {
        if (!quiet)
            fprintf(stderr, "tessera: %s: at least %lld\n", name, (long long)min);
        return -1;
    }
    *out = v;
    return 0;
}

int coll_opt(coll_opts *o, int ch, const char *arg, int quiet)
{
    int64_t v = 0;
    switch (ch) {
    case COLL_OPT_QUICK: o->quick = 1; return 1;
    case COLL_OPT_TEST: o->test = 1; return 1;
    case COLL_OPT_SILENT: o->silent = 1; return 1;
    case COLL_OPT_SYNC: o->sync = 1; return 1;
    case COLL_OPT_KEEP: o->keep = 1; return 1;
    case COLL_OPT_RESULTS: o->results = arg; return 1;
    case COLL_OPT_REPS:
        if (coll_parse_size("--reps", arg, 1, &v, quiet) != 0 || v > 1000) {
            if (!quiet)
                fprintf(stderr, "tessera: --reps: 1 to 1000\n");
            return -1;
        }
        o->reps = (int)v;
        o->reps_set = 1;
        return 1;
    case COLL_OPT_MIN_MS: {
        char *end = NULL;
        double d = strtod(arg, &end);
        if (end == arg || *end || !(d >= 0)) {
            if (!quiet)
                fprintf(stderr, "tessera: --min-ms: a number of milliseconds >= 0\n");
            return -1;
        }
        o->min_rep = d / 1000.0;
        o->min_rep_set = 1;
        return 1;
    }
    case COLL_OPT_BUDGET: {
        char *end = NULL;
        double d = strtod(arg, &end);
        if (end == arg || *end || !(d > 0)) {
            if (!quiet)
                fprintf(stderr, "tessera: --budget: a positive number of seconds\n");
            return -1;
        }
        o->budget = d;
        return 1;
    }
    case COLL_OPT_METHODS: return parse_methods(o, arg, quiet) == 0 ? 1 : -1;
    case COLL_OPT_DIR: snprintf(o->dir, sizeof o->dir, "%s", arg); return 1;
    case COLL_OPT_CB_NODES:
        return coll_parse_size("--cb-nodes", arg, 1, &o->cb_nodes, quiet) ? -1 : 1;
    case COLL_OPT_CB_BUFFER:
        return coll_parse_size("--cb-buffer-size", arg, 1, &o->cb_buffer_size, quiet) ? -1 : 1;
    case COLL_OPT_STRIPING:
        return coll_parse_size("--striping-unit", arg, 1, &o->striping_unit, quiet) ? -1 : 1;
    case COLL_OPT_DS_READ:
        return coll_parse_size("--ds-read", arg, 1, &o->ds_read, quiet) ? -1 : 1;
    case COLL_OPT_DS_WRITE:
        return coll_parse_size("--ds-write", arg, 1, &o->ds_write, quiet) ? -1 : 1;
    case COLL_OPT_LIST_PAIRS:
        return coll_parse_size("--list-pairs", arg, 1, &o->list_pairs, quiet) ? -1 : 1;
    case COLL_OPT_HINT:
    case COLL_OPT_MPI_HINT: {
        const char **list = ch == COLL_OPT_HINT ? o->hints : o->mpi_hints;
        int *n = ch == COLL_OPT_HINT ? &o->nhints : &o->nmpi_hints;
        const char *eq = strchr(arg, '=');
        if (!eq || eq == arg || *n >= COLL_MAX_HINTS) {
            if (!quiet)
                fprintf(stderr, "tessera: %s: key=value (at most %d)\n",
                        ch == COLL_OPT_HINT ? "--hint" : "--mpi-hint", COLL_MAX_HINTS);
            return -1;
        }
        list[(*n)++] = arg;
        return 1;
    }
    default: return 0;
    }
}

void coll_opts_finish(coll_opts *o)
{
    if (o->quick && !o->reps_set)
        o->reps = 3;
    if (o->quick && !o->min_rep_set)
        o->min_rep = 0.01;
}

void coll_usage_common(FILE *f)
{
    fputs("  --methods LIST      of mpi,naive,sieve,list,pmd,tp-even,tp-aligned,tp-persistent,\n"
          "                      tp-balanced,auto (tp = every tp-*, all = everything;\n"
          "                      default all)\n"
          "                      naive..pmd: tess_file_write_at/read_at, romio_cb_*=disable;\n"
          "                      tp-R: tess_file_*_at_all, romio_cb_*=enable, tess_realms=R;\n"
          "                      auto: tess_file_*_at_all with the library's defaults;\n"
          "                      mpi: MPI_File_write_at_all/read_at_all of the MPI library\n"
          "  --reps N            timed repetitions, median printed (default 5, --quick 3)\n"
          "  --min-ms MS         each repetition repeats the op to last MS ms (default 50,\n"
          "                      --quick 10); the time of one op is printed\n"
          "  --budget SEC        seconds per method and direction; slow methods run fewer\n"
          "                      repetitions (at least 1; default 10)\n"
          "  --sync              include tess_file_sync / MPI_File_sync in write times\n"
          "                      (default: page-cache figures, nothing synced)\n"
          "  --cb-nodes N, --cb-buffer-size S, --striping-unit S\n"
          "                      collective hints, given to Tessera and MPI-IO alike\n"
          "                      (default: each library's own; striping_unit for tp-aligned\n"
          "                      is 1m when not given)\n"
          "  --ds-read S, --ds-write S, --list-pairs N\n"
          "                      ind_rd/wr_buffer_size, tess_list_max_pairs (Tessera)\n"
          "  --hint K=V          extra Tessera hint (repeatable); --mpi-hint K=V: for MPI-IO\n"
          "  --dir DIR           directory of the files (default $TMPDIR or /tmp)\n"
          "  --keep              keep the files\n"
          "  --results FILE      append one line per method and direction to FILE:\n"
          "                      workload, case, method, tessera|mpi, write|read, seconds\n"
          "                      per op, bytes per op, check (TAB-separated)\n"
          "  --test              verify only: one write and one read per method, no timing,\n"
          "                      one summary line (the test suite's mode); --silent: with\n"
          "                      --test, print only failures\n"
          "  --quick             small sizes for the demo\n",
          f);
}

/* =================================================================== env */

int coll_env_begin(coll_env *e)
{
    memset(e, 0, sizeof *e);
    int inited = 0;
    if (MPI_Initialized(&inited) != MPI_SUCCESS)
        return fail("MPI_Initialized failed");
    if (!inited) {
        if (MPI_Init(NULL, NULL) != MPI_SUCCESS)
            return fail("MPI_Init failed");
        e->inited_here = 1;
    }
    if (MPI_Comm_rank(MPI_COMM_WORLD, &e->rank) != MPI_SUCCESS ||
        MPI_Comm_size(MPI_COMM_WORLD, &e->size) != MPI_SUCCESS)
        return fail("MPI_Comm_rank/size failed");
    g_rank = e->rank;
    return 0;
}

void coll_env_end(coll_env *e)
{
    int fin = 0;
    if (e->inited_here && MPI_Finalized(&fin) == MPI_SUCCESS && !fin)
        MPI_Finalize();
    e->inited_here = 0;
}

/* ============================================================== content */

/* The byte at file offset x of every correctly written file: a hash of x (splitmix64). */
static uint64_t mix64(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Fill dst[0, len) with the content of file bytes [x, x + len). */
static void fill_content(unsigned char *dst, int64_t x, int64_t len)
{
    int64_t i = 0;
    while (i < len) {
        uint64_t h = mix64((uint64_t)((x + i) >> 3));
        int b = (int)((x + i) & 7);
        for (; b < 8 && i < len; b++, i++)
            dst[i] = (unsigned char)(h >> (8 * b));
    }
}

/* Bit maps (coverage of the file, data bytes of the memory buffer). */
static void bits_set(unsigned char *map, int64_t off, int64_t len)
{
    int64_t end = off + len;
    while (off < end && (off & 7)) {
        map[off >> 3] |= (unsigned char)(1u << (off & 7));
        off++;
    }
    if (end - off >= 8) {
        memset(map + (off >> 3), 0xFF, (size_t)((end - off) >> 3));
        off += (end - off) & ~(int64_t)7;
    }
    while (off < end) {
        map[off >> 3] |= (unsigned char)(1u << (off & 7));
        off++;
    }
}

static int bit_get(const unsigned char *map, int64_t i) { return (map[i >> 3] >> (i & 7)) & 1; }

/* ============================================================ the walker */

typedef int (*piece_fn)(void *ctx, int64_t foff, int64_t moff, int64_t len);

enum { WALK_BATCH = 512 };

/*
 * Call fn for every piece of call c in stream order: file bytes [foff, foff + len) (absolute,
 * through the view) hold memory bytes [moff, moff + len) (offsets in the rank's buffer).
 */
static int walk_call(const coll_pattern *p, const coll_call *c, piece_fn fn, void *ctx)
{
    const coll_view *v = &p->views[c->view];
    const tess_type *mt = p->mems[c->mem].t;
    int64_t msize = tess_type_size(mt), esize = tess_type_size(v->etype.t);
    int64_t fsize = tess_type_size(v->filetype.t), nbytes, start, ninst;
    if (c->count == 0 || msize == 0)
        return 0;
    if (fsize <= 0 || esize <= 0)
        return fail("walk: empty filetype or etype");
    if (__builtin_mul_overflow(c->count, msize, &nbytes) ||
        __builtin_mul_overflow(c->offset, esize, &start) ||
        __builtin_add_overflow(start, nbytes, &ninst))
        return fail("walk: access size overflows");
    ninst = ninst / fsize + 2;
    tess_cursor *fc = NULL, *mc = NULL;
    tess_region *fr = malloc(sizeof *fr * WALK_BATCH), *mr = malloc(sizeof *mr * WALK_BATCH);
    int rc = -1;
    if (!fr || !mr) {
        fail("walk: out of memory");
        goto out;
    }
    int trc = tess_cursor_create(v->filetype.t, ninst, &fc);
    if (trc || (trc = tess_cursor_seek(fc, start)) ||
        (trc = tess_cursor_create(mt, c->count, &mc))) {
        tfail(trc, "walk: tess_cursor_create/seek");
        goto out;
    }
    int64_t nf = 0, nm = 0, fi = 0, mi = 0, left = nbytes;
    while (left > 0) {
        if (fi == nf) {
            if ((trc = tess_cursor_next(fc, fr, WALK_BATCH, left, &nf))) {
                tfail(trc, "walk: tess_cursor_next (file)");
                goto out;
            }
            fi = 0;
            if (nf == 0) {
                fail("walk: the view ended before the access");
                goto out;
            }
        }
        if (mi == nm) {
            if ((trc = tess_cursor_next(mc, mr, WALK_BATCH, -1, &nm))) {
                tfail(trc, "walk: tess_cursor_next (memory)");
                goto out;
            }
            mi = 0;
            if (nm == 0) {
                fail("walk: the memory type ended before the access");
                goto out;
            }
        }
        int64_t len = fr[fi].len < mr[mi].len ? fr[fi].len : mr[mi].len;
        if (len > left)
            len = left;
        if (fn(ctx, v->disp + fr[fi].off, c->buf_off + mr[mi].off, len) != 0)
            goto out;
        fr[fi].off += len;
        fr[fi].len -= len;
        mr[mi].off += len;
        mr[mi].len -= len;
        if (fr[fi].len == 0)
            fi++;
        if (mr[mi].len == 0)
            mi++;
        left -= len;
    }
    rc = 0;
out:
    tess_cursor_free(fc);
    tess_cursor_free(mc);
    free(fr);
    free(mr);
    return rc;
}

/* --------------------------------------------------- the access, analyzed */

/* Per call, this rank's access in paper 000 Table I terms. */
typedef struct call_info {
    int64_t n;          /* desired bytes */
    int64_t frc;        /* contiguous file regions (adjacent pieces merged) */
    int64_t pieces;     /* pieces contiguous in file and memory (naive's calls) */
    int64_t first, end; /* file extent [first, end) (first = INT64_MAX when no data) */
    int64_t min_fr, max_fr;
    int64_t cur_fr;     /* length of the file region being counted */
    int64_t last_fend, last_mend;
} call_info;

static int analyze_piece(void *ctx, int64_t foff, int64_t moff, int64_t len)
{
    call_info *ci = ctx;
    if (foff < 0 || moff < 0)
        return fail("access: negative file or memory offset (%lld, %lld)", (long long)foff,
                    (long long)moff);
    int file_cont = ci->n > 0 && foff == ci->last_fend;
    int mem_cont = ci->n > 0 && moff == ci->last_mend;
    if (!file_cont) {
        if (ci->n > 0) {
            if (ci->cur_fr < ci->min_fr)
                ci->min_fr = ci->cur_fr;
            if (ci->cur_fr > ci->max_fr)
                ci->max_fr = ci->cur_fr;
        }
        ci->frc++;
        ci->cur_fr = 0;
    }
    if (!(file_cont && mem_cont))
        ci->pieces++;
    ci->cur_fr += len;
    if (foff < ci->first)
        ci->first = foff;
    if (foff + len > ci->end)
        ci->end = foff + len;
    ci->last_fend = foff + len;
    ci->last_mend = moff + len;
    ci->n += len;
    return 0;
}

typedef struct fill_ctx {
    unsigned char *wbuf, *mmask, *cov;
    int64_t buf_bytes;
} fill_ctx;

static int fill_piece(void *ctx, int64_t foff, int64_t moff, int64_t len)
{
    fill_ctx *f = ctx;
    if (moff < 0 || moff + len > f->buf_bytes)
        return fail("pattern: memory piece [%lld, %lld) outside the %lld-byte buffer",
                    (long long)moff, (long long)(moff + len), (long long)f->buf_bytes);
    fill_content(f->wbuf + moff, foff, len);
    bits_set(f->mmask, moff, len);
    bits_set(f->cov, foff, len);
    return 0;
}

/* ================================================================= stats */

/* Counters of one operation reduced over ranks. */
typedef struct rstats {
    double mean[8]; /* desired, accessed, io_ops, resent, regions, lock_ops, request_bytes,
                       flat_request_bytes */
    int64_t max[8];
    int64_t min_access, max_access; /* over ranks with storage calls */
    double io_s, xchg_s;            /* max over ranks */
    int active;                     /* ranks with storage calls */
} rstats;

enum { S_DES, S_ACC, S_OPS, S_RES, S_REG, S_LCK, S_REQ, S_FLAT, S_N };

static int reduce_stats(const tess_stats *s, int nprocs, rstats *r)
{
    int64_t v[S_N] = {s->desired_bytes, s->accessed_bytes, s->io_ops,
                      s->resent_bytes,  s->regions,        s->lock_ops,
                      s->request_bytes, s->flat_request_bytes};
    int64_t sum[S_N], mx[S_N], mm[1], mn[1];
    int has = s->io_ops > 0;
    mn[0] = has ? s->min_access : INT64_MAX;
    mm[0] = has ? s->max_access : 0;
    double d[2] = {s->io_seconds, s->exchange_seconds}, dm[2];
    int64_t act = has;
    if (MPI_Allreduce(v, sum, S_N, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD) != MPI_SUCCESS ||
        MPI_Allreduce(v, mx, S_N, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD) != MPI_SUCCESS)
        return fail("stats: MPI_Allreduce failed");
    int64_t gmin = 0, gmax = 0, gact = 0;
    if (MPI_Allreduce(&mn[0], &gmin, 1, MPI_INT64_T, MPI_MIN, MPI_COMM_WORLD) != MPI_SUCCESS ||
        MPI_Allreduce(&mm[0], &gmax, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD) != MPI_SUCCESS ||
        MPI_Allreduce(&act, &gact, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD) != MPI_SUCCESS ||
        MPI_Allreduce(d, dm, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD) != MPI_SUCCESS)
        return fail("stats: MPI_Allreduce failed");
    for (int i = 0; i < S_N; i++) {
        r->mean[i] = (double)sum[i] / nprocs;
        r->max[i] = mx[i];
    }
    r->min_access = gmin == INT64_MAX ? 0 : gmin;
    r->max_access = gmax;
    r->io_s = dm[0];
    r->xchg_s = dm[1];
    r->active = (int)gact;
    return 0;
}

/* ================================================================ methods */

enum { K_INDEP, K_COLL, K_MPI };

typedef struct mres {
    int selected, ran, unavailable;
    char why[200];
    double wsec, rsec;
    int wreps, rreps;
    int64_t witers, riters; /* ops per repetition */
    rstats ws, rs;
    int have_stats;
    char wcheck[64], rcheck[64];
    int wok, rok; /* verified (Tessera: failures counted when not) */
    int wdone, rdone; /* the direction's figures exist */
} mres;

/* What a run shares between methods (per rank). */
typedef struct shared {
    const coll_env *env;
    coll_pattern *p;
    const coll_opts *o;
    unsigned char *wbuf, *rbuf, *mmask, *cov; /* cov: the OR over ranks (rank 0 only) */
    int64_t file_size;
    int64_t pid0; /* rank 0's pid: file names */
    char ref_path[1200];
    int have_ref;
    int ref_method;
    char mpi_hints[512];
    char mpi_component[64];
} shared;

typedef struct runner {
    int kind;
    tess_file *tf;
    MPI_File mf;
    shared *s;
    int cur_view;
} runner;

static int r_set_view(runner *r, int vi)
{
    const coll_view *v = &r->s->p->views[vi];
    r->cur_view = vi;
    if (r->kind == K_MPI) {
        int rc = MPI_File_set_view(r->mf, (MPI_Offset)v->disp, v->etype.m, v->filetype.m,
                                   "native", MPI_INFO_NULL);
        return rc == MPI_SUCCESS ? 0 : mfail(rc, "MPI_File_set_view");
    }
    int rc = tess_file_set_view(r->tf, v->disp, v->etype.t, v->filetype.t);
    return rc == 0 ? 0 : tfail(rc, "tess_file_set_view");
}

static int r_call(runner *r, const coll_call *c, int write)
{
    coll_pattern *p = r->s->p;
    unsigned char *buf = (write ? r->s->wbuf : r->s->rbuf) + c->buf_off;
    const coll_type *mt = &p->mems[c->mem];
    int64_t want = c->count * tess_type_size(mt->t), got = 0;
    if (r->kind == K_MPI) {
        MPI_Status st;
        int rc = write ? MPI_File_write_at_all(r->mf, (MPI_Offset)c->offset, buf, (int)c->count,
                                               mt->m, &st)
                       : MPI_File_read_at_all(r->mf, (MPI_Offset)c->offset, buf, (int)c->count,
                                              mt->m, &st);
        if (rc != MPI_SUCCESS)
            return mfail(rc, write ? "MPI_File_write_at_all" : "MPI_File_read_at_all");
        MPI_Count n = 0;
        if (MPI_Get_elements_x(&st, MPI_BYTE, &n) != MPI_SUCCESS)
            return fail("MPI_Get_elements_x failed");
        got = (int64_t)n;
    } else {
        int rc;
        if (r->kind == K_COLL)
            rc = write ? tess_file_write_at_all(r->tf, c->offset, buf, c->count, mt->t, &got)
                       : tess_file_read_at_all(r->tf, c->offset, buf, c->count, mt->t, &got);
        else
            rc = write ? tess_file_write_at(r->tf, c->offset, buf, c->count, mt->t, &got)
                       : tess_file_read_at(r->tf, c->offset, buf, c->count, mt->t, &got);
        if (rc != 0)
            return tfail(rc, r->kind == K_COLL
                                 ? (write ? "tess_file_write_at_all" : "tess_file_read_at_all")
                                 : (write ? "tess_file_write_at" : "tess_file_read_at"));
    }
    if (got != want)
        return fail("%s moved %lld of %lld bytes", write ? "write" : "read", (long long)got,
                    (long long)want);
    return 0;
}

/* One operation: every call of the pattern. Collective calls are made on every rank even after
   a local error (so that no rank waits for another in a collective); independent I/O stops. */
static int r_op(runner *r, int write)
{
    coll_pattern *p = r->s->p;
    int err = 0;
    for (int i = 0; i < p->ncalls; i++) {
        const coll_call *c = &p->calls[i];
        if (c->view != r->cur_view && r_set_view(r, c->view) != 0)
            err = 1;
        if (r->kind == K_INDEP && (c->count == 0 || err))
            continue;
        if (r_call(r, c, write) != 0)
            err = 1;
    }
    if (write && r->s->o->sync) {
        if (r->kind == K_MPI) {
            int rc = MPI_File_sync(r->mf);
            if (rc != MPI_SUCCESS)
                err = 1, mfail(rc, "MPI_File_sync");
        } else {
            int rc = tess_file_sync(r->tf);
            if (rc != 0)
                err = 1, tfail(rc, "tess_file_sync");
        }
    }
    return err;
}

/*
 * One repetition on all ranks: MPI_Barrier, iters ops back to back, MPI_Barrier; *t gets the
 * max over ranks of that time divided by iters. The closing barrier matters for independent
 * methods on an oversubscribed machine: without it a rank that ran its ops while the others
 * were descheduled would report only its own share, not the span of the whole operation. With
 * reset, the counters are reset before the last op (so they describe one op). -1 if any rank
 * failed.
 */
static int r_rep(runner *r, int write, int64_t iters, int reset, double *t)
{
    if (MPI_Barrier(MPI_COMM_WORLD) != MPI_SUCCESS)
        return fail("MPI_Barrier failed");
    double t0 = bench_now();
    int err = 0;
    /* every op runs even after an error: a rank that stopped early would leave the others
       waiting in a collective call */
    for (int64_t i = 0; i < iters; i++) {
        if (reset && i == iters - 1 && r->kind != K_MPI)
            tess_file_reset_stats(r->tf);
        err |= r_op(r, write);
    }
    if (MPI_Barrier(MPI_COMM_WORLD) != MPI_SUCCESS)
        return fail("MPI_Barrier failed");
    double in[2] = {(bench_now() - t0) / (double)iters, (double)err}, out[2];
    if (MPI_Allreduce(in, out, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD) != MPI_SUCCESS)
        return fail("MPI_Allreduce failed");
    *t = out[0];
    return out[1] != 0 ? -1 : 0;
}

static int r_op_timed(runner *r, int write, double *t) { return r_rep(r, write, 1, 0, t); }

/* ------------------------------------------------------------- checking */

/* Every rank: the read buffer against what was written (data) and READ_FILL (holes). Returns
   the first bad offset or -1. */
static int64_t check_read_local(const shared *s)
{
    const unsigned char *w = s->wbuf, *r = s->rbuf, *m = s->mmask;
    int64_t n = s->p->buf_bytes;
    for (int64_t g = 0; g < n; g += 8) {
        int64_t len = n - g < 8 ? n - g : 8;
        unsigned char mb = m[g >> 3];
        if (len == 8 && mb == 0xFF && memcmp(w + g, r + g, 8) == 0)
            continue;
        if (len == 8 && mb == 0) {
            int ok = 1;
            for (int k = 0; k < 8; k++)
                ok &= r[g + k] == READ_FILL;
            if (ok)
                continue;
        }
        for (int64_t i = g; i < g + len; i++) {
            unsigned char want = bit_get(m, i) ? w[i] : READ_FILL;
            if (r[i] != want)
                return i;
        }
    }
    return -1;
}

/* All ranks: text "ok" or "BAD r<rank>@<offset>" (identical on every rank); 1 if ok. */
static int check_read_all(const shared *s, char *text, size_t cap)
{
    int64_t bad = check_read_local(s);
    int64_t in[2] = {bad >= 0 ? s->env->rank : INT64_MAX, 0}, out[2];
    if (MPI_Allreduce(in, out, 1, MPI_INT64_T, MPI_MIN, MPI_COMM_WORLD) != MPI_SUCCESS) {
        snprintf(text, cap, "ERR");
        return 0;
    }
    if (out[0] == INT64_MAX) {
        snprintf(text, cap, "ok");
        return 1;
    }
    int64_t where = s->env->rank == out[0] ? bad : 0, w = 0;
    if (MPI_Allreduce(&where, &w, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD) != MPI_SUCCESS)
        w = -1;
    snprintf(text, cap, "BAD r%lld@%lld", (long long)out[0], (long long)w);
    return 0;
}

static int read_full(int fd, unsigned char *buf, int64_t len, int64_t off)
{
    int64_t got = 0;
    while (got < len) {
        ssize_t k = pread(fd, buf + got, (size_t)(len - got), (off_t)(off + got));
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        got += k;
    }
    return 0;
}

enum { CHECK_CHUNK = 4 << 20 };

/* Rank 0: the file against the expected image and (when there is one) the reference file. */
static int check_file(shared *s, const char *path, char *text, size_t cap)
{
    int fd = open(path, O_RDONLY), rfd = -1, rc = 0;
    unsigned char *got = malloc(CHECK_CHUNK), *exp = malloc(CHECK_CHUNK),
                  *ref = malloc(CHECK_CHUNK);
    struct stat st;
    int use_ref = s->have_ref && strcmp(path, s->ref_path) != 0;
    if (fd < 0 || !got || !exp || !ref || fstat(fd, &st) != 0) {
        snprintf(text, cap, "ERR(open)");
        rc = -1;
        goto out;
    }
    if ((int64_t)st.st_size != s->file_size) {
        snprintf(text, cap, "BAD len %lld", (long long)st.st_size);
        goto out;
    }
    if (use_ref && (rfd = open(s->ref_path, O_RDONLY)) < 0) {
        snprintf(text, cap, "ERR(ref)");
        rc = -1;
        goto out;
    }
    int ref_diff = 0;
    int64_t ref_at = -1;
    for (int64_t off = 0; off < s->file_size; off += CHECK_CHUNK) {
        int64_t len = s->file_size - off < CHECK_CHUNK ? s->file_size - off : CHECK_CHUNK;
        if (read_full(fd, got, len, off) != 0) {
            snprintf(text, cap, "ERR(read)");
            rc = -1;
            goto out;
        }
        fill_content(exp, off, len);
        for (int64_t i = 0; i < len; i++)
            if (!bit_get(s->cov, off + i))
                exp[i] = HOLE_BYTE;
        if (memcmp(got, exp, (size_t)len) != 0) {
            int64_t i = 0;
            while (got[i] == exp[i])
                i++;
            snprintf(text, cap, "BAD@%lld", (long long)(off + i));
            goto out;
        }
        if (use_ref && !ref_diff) {
            if (read_full(rfd, ref, len, off) != 0) {
                snprintf(text, cap, "ERR(ref)");
                rc = -1;
                goto out;
            }
            if (memcmp(got, ref, (size_t)len) != 0) {
                int64_t i = 0;
                while (got[i] == ref[i])
                    i++;
                ref_diff = 1;
                ref_at = off + i;
            }
        }
    }
    if (ref_diff)
        snprintf(text, cap, "REF-DIFF@%lld", (long long)ref_at);
    else
        snprintf(text, cap, "ok");
out:
    if (fd >= 0)
        close(fd);
    if (rfd >= 0)
        close(rfd);
    free(got);
    free(exp);
    free(ref);
    return rc;
}

/* Rank 0 creates the file filled with HOLE_BYTE to the file size; every rank learns the result. */
static int prefill(shared *s, const char *path)
{
    int ok = 1;
    if (s->env->rank == 0) {
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0) {
            fail("create %s: %s", path, strerror(errno));
            ok = 0;
        } else {
            unsigned char *chunk = malloc(CHECK_CHUNK);
            if (!chunk)
                ok = 0;
            else
                memset(chunk, HOLE_BYTE, CHECK_CHUNK);
            for (int64_t off = 0; ok && off < s->file_size;) {
                int64_t n = s->file_size - off < CHECK_CHUNK ? s->file_size - off : CHECK_CHUNK;
                ssize_t k = pwrite(fd, chunk, (size_t)n, (off_t)off);
                if (k < 0 && errno == EINTR)
                    continue;
                if (k <= 0) {
                    fail("write %s: %s", path, k < 0 ? strerror(errno) : "short write");
                    ok = 0;
                    break;
                }
                off += k;
            }
            free(chunk);
            if (close(fd) != 0)
                ok = 0;
        }
    }
    if (MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD) != MPI_SUCCESS)
        return fail("MPI_Bcast failed");
    return ok ? 0 : -1;
}

/* ------------------------------------------------------------ open/close */

static int set_hint(tess_info *info, const char *k, const char *v)
{
    int rc = tess_info_set(info, k, v);
    return rc == 0 ? 0 : tfail(rc, "tess_info_set");
}

static int set_size_hint(tess_info *info, const char *k, int64_t v)
{
    char text[32];
    snprintf(text, sizeof text, "%lld", (long long)v);
    return set_hint(info, k, text);
}

static int tess_hints(const coll_opts *o, int m, tess_info **out)
{
    tess_info *info = NULL;
    int rc = tess_info_create(&info);
    if (rc != 0)
        return tfail(rc, "tess_info_create");
    int e = 0;
    switch (m) {
    case COLL_M_NAIVE:
    case COLL_M_SIEVE:
    case COLL_M_LIST:
    case COLL_M_PMD:
        e |= set_hint(info, "tess_method", coll_method_names[m]);
        e |= set_hint(info, "romio_cb_read", "disable");
        e |= set_hint(info, "romio_cb_write", "disable");
        break;
    case COLL_M_TP_EVEN:
    case COLL_M_TP_ALIGNED:
    case COLL_M_TP_PERSISTENT:
    case COLL_M_TP_BALANCED:
        e |= set_hint(info, "romio_cb_read", "enable");
        e |= set_hint(info, "romio_cb_write", "enable");
        e |= set_hint(info, "tess_realms", coll_method_names[m] + 3);
        if (m == COLL_M_TP_ALIGNED && !o->striping_unit)
            e |= set_size_hint(info, "striping_unit", INT64_C(1) << 20);
        break;
    default: break;
    }
    if (o->cb_nodes)
        e |= set_size_hint(info, "cb_nodes", o->cb_nodes);
    if (o->cb_buffer_size)
        e |= set_size_hint(info, "cb_buffer_size", o->cb_buffer_size);
    if (o->striping_unit)
        e |= set_size_hint(info, "striping_unit", o->striping_unit);
    if (o->ds_read)
        e |= set_size_hint(info, "ind_rd_buffer_size", o->ds_read);
    if (o->ds_write)
        e |= set_size_hint(info, "ind_wr_buffer_size", o->ds_write);
    if (o->list_pairs)
        e |= set_size_hint(info, "tess_list_max_pairs", o->list_pairs);
    for (int i = 0; i < o->nhints; i++) {
        char k[256];
        const char *eq = strchr(o->hints[i], '=');
        snprintf(k, sizeof k, "%.*s", (int)(eq - o->hints[i]), o->hints[i]);
        e |= set_hint(info, k, eq + 1);
    }
    if (e) {
        tess_info_free(info);
        return -1;
    }
    *out = info;
    return 0;
}

static int mpi_info(const coll_opts *o, MPI_Info *out)
{
    MPI_Info info;
    if (MPI_Info_create(&info) != MPI_SUCCESS)
        return fail("MPI_Info_create failed");
    char v[32];
    int e = 0;
    if (o->cb_nodes) {
        snprintf(v, sizeof v, "%lld", (long long)o->cb_nodes);
        e |= MPI_Info_set(info, "cb_nodes", v) != MPI_SUCCESS;
    }
    if (o->cb_buffer_size) {
        snprintf(v, sizeof v, "%lld", (long long)o->cb_buffer_size);
        e |= MPI_Info_set(info, "cb_buffer_size", v) != MPI_SUCCESS;
    }
    if (o->striping_unit) {
        snprintf(v, sizeof v, "%lld", (long long)o->striping_unit);
        e |= MPI_Info_set(info, "striping_unit", v) != MPI_SUCCESS;
    }
    for (int i = 0; i < o->nmpi_hints; i++) {
        char k[256];
        const char *eq = strchr(o->mpi_hints[i], '=');
        snprintf(k, sizeof k, "%.*s", (int)(eq - o->mpi_hints[i]), o->mpi_hints[i]);
        e |= MPI_Info_set(info, k, eq + 1) != MPI_SUCCESS;
    }
    if (e) {
        MPI_Info_free(&info);
        return fail("MPI_Info_set failed");
    }
    *out = info;
    return 0;
}

/* The MPI-IO hints worth showing, and which implementation it is. */
static void mpi_describe(shared *s, MPI_File fh)
{
    static const char *const keys[] = {"cb_nodes", "cb_buffer_size", "romio_cb_read",
                                       "romio_cb_write", "romio_ds_read", "romio_ds_write",
                                       "striping_unit"};
    MPI_Info info;
    size_t len = 0;
    int romio = 0, tessera = 0;
    s->mpi_hints[0] = '\0';
    if (MPI_File_get_info(fh, &info) == MPI_SUCCESS) {
        char val[64];
        if (MPI_Info_get(info, "tess_method", (int)sizeof val - 1, val, &tessera) != MPI_SUCCESS)
            tessera = 0;
        for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
            char val[256];
            int flag = 0;
            if (MPI_Info_get(info, keys[i], (int)sizeof val - 1, val, &flag) == MPI_SUCCESS &&
                flag) {
                int k = snprintf(s->mpi_hints + len, sizeof s->mpi_hints - len, "%s%s=%s",
                                 len ? " " : "", keys[i], val);
                if (k > 0 && (size_t)k < sizeof s->mpi_hints - len)
                    len += (size_t)k;
                if (strncmp(keys[i], "romio_", 6) == 0)
                    romio = 1;
            }
        }
        MPI_Info_free(&info);
    }
    if (!len)
        snprintf(s->mpi_hints, sizeof s->mpi_hints, "(none of cb_nodes, cb_buffer_size, romio_* "
                                                    "reported by MPI_File_get_info)");
    const char *io = getenv("OMPI_MCA_io");
    if (tessera) { /* libtessera_mpiio preloaded or linked: its hints name it */
        snprintf(s->mpi_component, sizeof s->mpi_component, "Tessera (libtessera_mpiio)");
        return;
    }
#if defined(OPEN_MPI)
    if (io && *io)
        snprintf(s->mpi_component, sizeof s->mpi_component, "%s", io);
    else
        snprintf(s->mpi_component, sizeof s->mpi_component, "%s (Open MPI default)",
                 romio ? "romio" : "ompio");
#elif defined(MPICH)
    (void)io;
    snprintf(s->mpi_component, sizeof s->mpi_component, "ROMIO (MPICH%s)",
             romio ? "" : "; no romio_* hints reported");
#else
    (void)io;
    snprintf(s->mpi_component, sizeof s->mpi_component, "%s", romio ? "ROMIO" : "unknown");
#endif
}

static void file_path(const shared *s, int m, char *out, size_t cap)
{
    snprintf(out, cap, "%s/tessera-%s-%lld-%s.dat", s->o->dir, s->o->workload,
             (long long)s->pid0, coll_method_names[m]);
}

/* All ranks: 1 if ok on every rank. */
static int agree(int ok)
{
    int all = 0;
    if (MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD) != MPI_SUCCESS)
        return 0;
    return all;
}

/* A method being run: its open file and its timing state. */
typedef struct mstate {
    runner r;
    int open;     /* the file is open on every rank */
    int alive;    /* no error so far (the same on every rank) */
    int reps;     /* timed repetitions (0: the warm-up op is the figure) */
    int64_t iters;
    double tw;    /* the warm-up op's time */
    double *t;    /* the repetitions' times */
    tess_stats st;
} mstate;

static int kind_of(int m)
{
    return m == COLL_M_MPI ? K_MPI : (m >= COLL_M_NAIVE && m <= COLL_M_PMD) ? K_INDEP : K_COLL;
}

/* Create (prefill) and open the method's file on every rank. Returns -1 only when the run
   cannot go on (an MPI call failed); a method that cannot open is marked in res. */
static int method_open(shared *s, int m, mstate *ms, mres *res)
{
    const coll_opts *o = s->o;
    memset(ms, 0, sizeof *ms);
    ms->r = (runner){.kind = kind_of(m), .tf = NULL, .mf = MPI_FILE_NULL, .s = s,
                     .cur_view = -1};
    char path[1200];
    file_path(s, m, path, sizeof path);
    memset(res, 0, sizeof *res);
    res->selected = 1;
    snprintf(res->wcheck, sizeof res->wcheck, "-");
    snprintf(res->rcheck, sizeof res->rcheck, "-");
    if (prefill(s, path) != 0) {
        snprintf(res->why, sizeof res->why, "could not create %.150s", path);
        return 0;
    }
    int lrc = 0;
    if (ms->r.kind == K_MPI) {
        MPI_Info info;
        if (mpi_info(o, &info) != 0) {
            lrc = -1;
        } else {
            int rc = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR | MPI_MODE_CREATE, info,
                                   &ms->r.mf);
            MPI_Info_free(&info);
            if (rc != MPI_SUCCESS)
                lrc = mfail(rc, "MPI_File_open");
        }
    } else {
        tess_info *info = NULL;
        if (tess_hints(o, m, &info) != 0) {
            lrc = -1;
        } else {
            int rc = tess_file_open_mpi(MPI_COMM_WORLD, path, TESS_RDWR | TESS_CREATE, info,
                                        &ms->r.tf);
            tess_info_free(info);
            if (rc != 0) {
                lrc = rc;
                snprintf(res->why, sizeof res->why, "%s", tess_last_error());
                if (rc != TESS_ERR_ARG)
                    tfail(rc, "tess_file_open_mpi");
            }
        }
    }
    /* MIN of {opened, -opened, refused}: opened everywhere, somewhere, hints refused
       everywhere (TESS_ERR_ARG on every rank) */
    int in[3] = {lrc == 0, -(lrc == 0), lrc == TESS_ERR_ARG}, out[3];
    if (MPI_Allreduce(in, out, 3, MPI_INT, MPI_MIN, MPI_COMM_WORLD) != MPI_SUCCESS)
        return fail("MPI_Allreduce failed");
    int all_opened = out[0], any_opened = -out[1], all_arg = out[2];
    if (!all_opened) {
        if (any_opened)
            /* a collective open that failed on some ranks only: the library broke its contract;
               the handles that did open cannot be closed collectively and are left open */
            snprintf(res->why, sizeof res->why, "open failed on some ranks only");
        else if (all_arg && ms->r.kind != K_MPI)
            res->unavailable = 1; /* the hints were refused: a method this library lacks */
        else if (!res->why[0])
            snprintf(res->why, sizeof res->why, "open failed (see messages above)");
        if (s->env->rank == 0 && !o->keep)
            unlink(path);
        return 0;
    }
    if (ms->r.kind == K_MPI && s->env->rank == 0)
        mpi_describe(s, ms->r.mf);
    ms->open = ms->alive = 1;
    return 0;
}

static int method_stats(mstate *ms)
{
    if (ms->r.kind == K_MPI)
        return 0;
    int rc = tess_file_stats(ms->r.tf, &ms->st);
    return rc == 0 ? 0 : tfail(rc, "tess_file_stats");
}

/*
 * One direction (write or read) for every open method. Each method first runs one untimed op
 * (a read is verified on every rank); then the timed repetitions of all methods are
 * interleaved (repetition 1 of every method, then repetition 2, ...), so that drift in the
 * machine's load, which other work on a small machine causes, hits every method alike.
 */
static void phase(shared *s, mstate *ms, mres *res, int write, const int *order, int n)
{
    const coll_opts *o = s->o;
    int maxreps = 0;
    for (int k = 0; k < n; k++) {
        int m = order[k];
        mstate *x = &ms[m];
        mres *r = &res[m];
        if (!x->alive)
            continue;
        if (!write)
            memset(s->rbuf, READ_FILL, (size_t)s->p->buf_bytes);
        if (x->r.kind != K_MPI)
            tess_file_reset_stats(x->r.tf);
        if (r_op_timed(&x->r, write, &x->tw) != 0) {
            x->alive = 0;
            snprintf(r->why, sizeof r->why, "%s failed (see messages above)",
                     write ? "write" : "read");
            continue;
        }
        if (!write)
            r->rok = check_read_all(s, r->rcheck, sizeof r->rcheck);
        x->reps = o->test ? 0 : o->reps;
        x->iters = 1;
        if (!o->test && x->tw < o->min_rep) {
            double want = o->min_rep / (x->tw > 1e-7 ? x->tw : 1e-7);
            x->iters = want > 100000 ? 100000 : (int64_t)want + 1;
        }
        double per_rep = x->tw * (double)x->iters;
        if (per_rep * x->reps > o->budget)
            x->reps = (int)(o->budget / per_rep);
        if (x->reps < 1) {
            /* --test, or one op takes longer than the budget: the warm-up op is the figure
               (its counters were reset before it; --test prints none) */
            x->reps = 0;
            x->iters = 1;
            if (!o->test && agree(method_stats(x) == 0) == 0)
                x->alive = 0;
        } else {
            free(x->t);
            x->t = malloc(sizeof *x->t * (size_t)x->reps);
            if (agree(x->t != NULL) == 0) {
                x->alive = 0;
                snprintf(r->why, sizeof r->why, "out of memory");
            }
        }
        if (x->reps > maxreps)
            maxreps = x->reps;
    }
    for (int rep = 0; rep < maxreps; rep++)
        for (int k = 0; k < n; k++) {
            mstate *x = &ms[order[k]];
            if (!x->alive || rep >= x->reps)
                continue;
            int last = rep == x->reps - 1;
            if (r_rep(&x->r, write, x->iters, last, &x->t[rep]) != 0) {
                x->alive = 0;
                snprintf(res[order[k]].why, sizeof res[order[k]].why,
                         "%s failed (see messages above)", write ? "write" : "read");
            } else if (last && agree(method_stats(x) == 0) == 0) {
                x->alive = 0;
            }
        }
    for (int k = 0; k < n; k++) {
        int m = order[k];
        mstate *x = &ms[m];
        mres *r = &res[m];
        if (!x->alive)
            continue;
        double sec = x->reps > 0 ? bench_median(x->t, x->reps) : x->tw;
        if (write) {
            r->wdone = 1;
            r->wsec = sec;
            r->wreps = x->reps;
            r->witers = x->iters;
        } else {
            r->rdone = 1;
            r->rsec = sec;
            r->rreps = x->reps;
            r->riters = x->iters;
        }
        if (x->r.kind != K_MPI && !o->test &&
            agree(reduce_stats(&x->st, s->env->size, write ? &r->ws : &r->rs) == 0) == 0)
            x->alive = 0;
    }
}

/* Close (collective), then rank 0 checks the file; the first verified Tessera file becomes the
   reference the later files are compared with. */
static int method_close(shared *s, int m, mstate *ms, mres *res)
{
    const coll_opts *o = s->o;
    free(ms->t);
    ms->t = NULL;
    if (!ms->open)
        return 0;
    int crc = 0;
    if (ms->r.kind == K_MPI) {
        int rc = MPI_File_close(&ms->r.mf);
        if (rc != MPI_SUCCESS)
            crc = mfail(rc, "MPI_File_close");
    } else {
        int rc = tess_file_close(ms->r.tf);
        if (rc != 0)
            crc = tfail(rc, "tess_file_close");
    }
    ms->open = 0;
    if (agree(crc == 0) == 0 && ms->alive) {
        ms->alive = 0;
        snprintf(res->why, sizeof res->why, "close failed (see messages above)");
    }
    char path[1200];
    file_path(s, m, path, sizeof path);
    int fok = 0;
    if (s->env->rank == 0) {
        check_file(s, path, res->wcheck, sizeof res->wcheck);
        fok = strcmp(res->wcheck, "ok") == 0;
        if (fok && !s->have_ref && ms->r.kind != K_MPI) {
            snprintf(s->ref_path, sizeof s->ref_path, "%s", path);
            s->have_ref = 1;
            s->ref_method = m;
        } else if (!o->keep) {
            unlink(path);
        }
    }
    int both[2] = {fok, s->have_ref};
    if (MPI_Bcast(both, 2, MPI_INT, 0, MPI_COMM_WORLD) != MPI_SUCCESS)
        return fail("MPI_Bcast failed");
    fok = both[0];
    s->have_ref = both[1];
    res->wok = fok;
    res->ran = ms->alive;
    res->have_stats = ms->alive && ms->r.kind != K_MPI && !o->test;
    return 0;
}

/* Every selected method: open all, writes (interleaved), reads (interleaved), close and check.
   Tessera methods first, MPI-IO last. Returns -1 when the run could not go on. */
static int run_methods(shared *s, mres *res)
{
    mstate ms[COLL_NMETHODS];
    int order[COLL_NMETHODS], n = 0, rc = 0;
    memset(ms, 0, sizeof ms);
    for (int i = 1; i <= COLL_NMETHODS; i++) {
        int m = i % COLL_NMETHODS;
        if (s->o->methods & (1u << m))
            order[n++] = m;
    }
    for (int k = 0; k < n && rc == 0; k++)
        rc = method_open(s, order[k], &ms[order[k]], &res[order[k]]);
    if (rc == 0) {
        phase(s, ms, res, 1, order, n);
        phase(s, ms, res, 0, order, n);
    }
    for (int k = 0; k < n; k++)
        if (method_close(s, order[k], &ms[order[k]], &res[order[k]]) != 0)
            rc = -1;
    return rc;
}

/* ================================================================ output */

static const char *fmt_sz(double n, char *buf, size_t cap)
{
    if (n < 10240)
        snprintf(buf, cap, "%.0f", n);
    else if (n < 10.0 * 1048576)
        snprintf(buf, cap, "%.1fK", n / 1024);
    else if (n < 10.0 * 1073741824)
        snprintf(buf, cap, "%.2fM", n / 1048576);
    else
        snprintf(buf, cap, "%.2fG", n / 1073741824);
    return buf;
}

static const char *fmt_n(double n, char *buf, size_t cap)
{
    if (n < 100 && n != (double)(int64_t)n)
        snprintf(buf, cap, "%.2f", n); /* a mean over ranks: 0.25 is not 0 */
    else if (n < 1e6)
        snprintf(buf, cap, "%.0f", n);
    else
        snprintf(buf, cap, "%.4gM", n / 1e6);
    return buf;
}

/* The access in Table I terms, over all ranks (every rank holds the same values). */
typedef struct access_sum {
    double n, frc, pieces, fext;       /* per client: mean over ranks of the sum over calls */
    double sieve_rd_ops, sieve_wr_ops; /* sum over calls of ceil(file ext / ds buffer); mean */
    double sieve_wr_acc;               /* write: file ext, twice for calls with holes; mean */
    double list_ops;                   /* sum over calls of ceil(fr count / pairs); mean */
    int64_t max_fr, min_fr;            /* file region sizes, over ranks and calls */
    double agg_n;                      /* desired bytes of one op, all ranks */
    int64_t *agg_ext, *agg_n_call;     /* per call: aggregate access extent, data of all ranks */
    double enc, flat;                  /* request description bytes per client and op (mean) */
    int64_t enc_max, flat_max;
    int64_t enc_first;                 /* encoded size of the first view's filetype */
    int64_t ds_rd, ds_wr, tp_buf, pairs;
    int ds_rd_set, ds_wr_set, tp_set, pairs_set;
} access_sum;

static double mean_over_ranks(double v, int nprocs)
{
    double sum = 0;
    if (MPI_Allreduce(&v, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD) != MPI_SUCCESS)
        return -1;
    return sum / nprocs;
}

static int64_t max_over_ranks(int64_t v, MPI_Op op)
{
    int64_t r = 0;
    if (MPI_Allreduce(&v, &r, 1, MPI_INT64_T, op, MPI_COMM_WORLD) != MPI_SUCCESS)
        return -1;
    return r;
}

/* Collective: the Table I inputs and the request sizes from the per-call analysis. */
static int summarize(const shared *s, const call_info *ci, access_sum *a)
{
    const coll_pattern *p = s->p;
    const coll_opts *o = s->o;
    int np = s->env->size;
    a->ds_rd = o->ds_read ? o->ds_read : INT64_C(4) << 20;
    a->ds_wr = o->ds_write ? o->ds_write : INT64_C(512) << 10;
    a->tp_buf = o->cb_buffer_size ? o->cb_buffer_size : INT64_C(16) << 20;
    a->pairs = o->list_pairs ? o->list_pairs : 64;
    a->ds_rd_set = o->ds_read != 0;
    a->ds_wr_set = o->ds_write != 0;
    a->tp_set = o->cb_buffer_size != 0;
    a->pairs_set = o->list_pairs != 0;
    int64_t *first = malloc(sizeof *first * (size_t)p->ncalls);
    int64_t *end = malloc(sizeof *end * (size_t)p->ncalls);
    int64_t *nc = malloc(sizeof *nc * (size_t)p->ncalls);
    int64_t *enc_view = malloc(sizeof *enc_view * (size_t)p->nviews);
    a->agg_ext = malloc(sizeof *a->agg_ext * (size_t)p->ncalls);
    a->agg_n_call = malloc(sizeof *a->agg_n_call * (size_t)p->ncalls);
    int rc = -1;
    if (!first || !end || !nc || !enc_view || !a->agg_ext || !a->agg_n_call) {
        fail("out of memory");
        goto out;
    }
    for (int v = 0; v < p->nviews; v++) {
        size_t len = 0;
        int trc = tess_type_encode(p->views[v].filetype.t, NULL, 0, &len);
        if (trc != 0 && trc != TESS_ERR_TRUNCATE) {
            tfail(trc, "tess_type_encode");
            goto out;
        }
        enc_view[v] = (int64_t)len;
    }
    a->enc_first = enc_view[p->calls[0].view];
    double n = 0, frc = 0, pieces = 0, fext = 0, srd = 0, swr = 0, swa = 0, lops = 0, enc = 0,
           flat = 0;
    int64_t maxfr = 0, minfr = INT64_MAX;
    for (int c = 0; c < p->ncalls; c++) {
        const call_info *k = &ci[c];
        first[c] = k->n ? k->first : INT64_MAX;
        end[c] = k->n ? k->end : 0;
        nc[c] = k->n;
        if (!k->n)
            continue;
        int64_t ext = k->end - k->first;
        n += (double)k->n;
        frc += (double)k->frc;
        pieces += (double)k->pieces;
        fext += (double)ext;
        srd += (double)coll_ceil_div(ext, a->ds_rd);
        int holes = ext > k->n;
        swr += (double)(coll_ceil_div(ext, a->ds_wr) * (holes ? 2 : 1));
        swa += (double)(ext * (holes ? 2 : 1));
        lops += (double)coll_ceil_div(k->frc, a->pairs);
        if (k->max_fr > maxfr)
            maxfr = k->max_fr;
        if (k->min_fr < minfr)
            minfr = k->min_fr;
        enc += (double)(enc_view[p->calls[c].view] + 24);
        flat += 16.0 * (double)k->frc;
    }
    if (MPI_Allreduce(first, a->agg_ext, p->ncalls, MPI_INT64_T, MPI_MIN, MPI_COMM_WORLD) !=
            MPI_SUCCESS ||
        MPI_Allreduce(MPI_IN_PLACE, end, p->ncalls, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD) !=
            MPI_SUCCESS ||
        MPI_Allreduce(nc, a->agg_n_call, p->ncalls, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD) !=
            MPI_SUCCESS) {
        fail("MPI_Allreduce failed");
        goto out;
    }
    a->agg_n = 0;
    for (int c = 0; c < p->ncalls; c++) {
        a->agg_ext[c] = end[c] > 0 ? end[c] - a->agg_ext[c] : 0;
        a->agg_n += (double)a->agg_n_call[c];
    }
    a->n = mean_over_ranks(n, np);
    a->frc = mean_over_ranks(frc, np);
    a->pieces = mean_over_ranks(pieces, np);
    a->fext = mean_over_ranks(fext, np);
    a->sieve_rd_ops = mean_over_ranks(srd, np);
    a->sieve_wr_ops = mean_over_ranks(swr, np);
    a->sieve_wr_acc = mean_over_ranks(swa, np);
    a->list_ops = mean_over_ranks(lops, np);
    a->enc = mean_over_ranks(enc, np);
    a->flat = mean_over_ranks(flat, np);
    a->enc_max = max_over_ranks((int64_t)enc, MPI_MAX);
    a->flat_max = max_over_ranks((int64_t)flat, MPI_MAX);
    a->max_fr = max_over_ranks(maxfr, MPI_MAX);
    a->min_fr = max_over_ranks(minfr, MPI_MIN);
    rc = 0;
out:
    free(first);
    free(end);
    free(nc);
    free(enc_view);
    return rc;
}

static void print_main_table(const access_sum *a, const mres *res)
{
    static const char *const heads[] = {"method",  "op",       "MB/s",    "vs MPI",  "reps",
                                        "desired", "accessed", "acc_max", "io_ops",  "ops_max",
                                        "resent",  "regions",  "locks",   "min_acc", "max_acc",
                                        "io_s",    "xchg_s",   "check"};
    static const int widths[] = {13, 5, 8, 6, 7, 8, 8, 8, 7, 7, 8, 7, 6, 7, 7, 7, 7, 6};
    bench_table t;
    bench_table_init(&t, stdout, 18, heads, widths);
    bench_table_header(&t);
    const mres *mpi = &res[COLL_M_MPI];
    char b[32];
    for (int m = 0; m < COLL_NMETHODS; m++) {
        const mres *r = &res[m];
        if (!r->selected)
            continue;
        for (int op = 0; op < 2; op++) {
            bench_table_cell(&t, "%s", op == 0 ? coll_method_names[m] : "");
            bench_table_cell(&t, "%s", op == 0 ? "write" : "read");
            if (r->unavailable || !(op == 0 ? r->wdone : r->rdone)) {
                bench_table_cell(&t, "%s", r->unavailable ? "n/a" : "FAILED");
                bench_table_end_row(&t);
                printf("    (%s%s)\n", r->unavailable ? "not in this library: " : "",
                       r->why[0] ? r->why : "see messages above");
                break;
            }
            double sec = op == 0 ? r->wsec : r->rsec;
            double msec = mpi->ran ? (op == 0 ? mpi->wsec : mpi->rsec) : 0;
            bench_table_cell(&t, "%.1f", sec > 0 ? a->agg_n / sec / 1e6 : 0.0);
            if (m == COLL_M_MPI)
                bench_table_cell(&t, "%s", "-");
            else if (msec > 0 && sec > 0)
                bench_table_cell(&t, "%.2fx", msec / sec);
            else
                bench_table_cell(&t, "%s", "n/a");
            if ((op == 0 ? r->wreps : r->rreps) == 0)
                bench_table_cell(&t, "%s", "warm"); /* the warm-up op only (over budget) */
            else
                bench_table_cell(&t, "%dx%lld", op == 0 ? r->wreps : r->rreps,
                                 (long long)(op == 0 ? r->witers : r->riters));
            const rstats *st = op == 0 ? &r->ws : &r->rs;
            if (r->have_stats) {
                bench_table_cell(&t, "%s", fmt_sz(st->mean[S_DES], b, sizeof b));
                bench_table_cell(&t, "%s", fmt_sz(st->mean[S_ACC], b, sizeof b));
                bench_table_cell(&t, "%s", fmt_sz((double)st->max[S_ACC], b, sizeof b));
                bench_table_cell(&t, "%s", fmt_n(st->mean[S_OPS], b, sizeof b));
                bench_table_cell(&t, "%s", fmt_n((double)st->max[S_OPS], b, sizeof b));
                bench_table_cell(&t, "%s", fmt_sz(st->mean[S_RES], b, sizeof b));
                bench_table_cell(&t, "%s", fmt_n(st->mean[S_REG], b, sizeof b));
                bench_table_cell(&t, "%s", fmt_n(st->mean[S_LCK], b, sizeof b));
                bench_table_cell(&t, "%s", fmt_sz((double)st->min_access, b, sizeof b));
                bench_table_cell(&t, "%s", fmt_sz((double)st->max_access, b, sizeof b));
                bench_table_cell(&t, "%.4f", st->io_s);
                bench_table_cell(&t, "%.4f", st->xchg_s);
            } else {
                for (int i = 0; i < 12; i++)
                    bench_table_cell(&t, "%s", "-");
            }
            const char *chk = op == 0 ? r->wcheck : r->rcheck;
            if (m == COLL_M_MPI)
                bench_table_cell(&t, "%s*", chk);
            else
                bench_table_cell(&t, "%s", chk);
            bench_table_end_row(&t);
        }
    }
}

/* The best Tessera method of one direction among methods [from, COLL_NMETHODS): index or -1. */
static int best_of(const mres *res, int op, int from)
{
    int best = -1;
    for (int m = from; m < COLL_NMETHODS; m++) {
        const mres *r = &res[m];
        if (!r->selected || !r->ran || r->unavailable)
            continue;
        double sec = op == 0 ? r->wsec : r->rsec;
        if (sec > 0 && (best < 0 || sec < (op == 0 ? res[best].wsec : res[best].rsec)))
            best = m;
    }
    return best;
}

static void print_summary(const shared *s, const access_sum *a, const mres *res)
{
    const mres *mpi = &res[COLL_M_MPI];
    double ratio[2][2] = {{0, 0}, {0, 0}};
    printf("\n");
    for (int kind = 0; kind < 2; kind++)
        for (int op = 0; op < 2; op++) {
            /* kind 0: every Tessera method; 1: the collective ones (tp-*, auto), the
               like-for-like comparison with MPI_File_*_at_all */
            int b = best_of(res, op, kind == 0 ? COLL_M_NAIVE : COLL_M_TP_EVEN);
            const char *dir = op == 0 ? "write" : "read ";
            const char *what = kind == 0 ? "best Tessera" : "best collective";
            if (b < 0) {
                printf("%-15s %s: none ran\n", what, dir);
                continue;
            }
            double sec = op == 0 ? res[b].wsec : res[b].rsec;
            printf("%-15s %s: %-13s %9.1f MB/s", what, dir, coll_method_names[b],
                   a->agg_n / sec / 1e6);
            if (mpi->selected && mpi->ran && (op == 0 ? mpi->wdone : mpi->rdone)) {
                double msec = op == 0 ? mpi->wsec : mpi->rsec;
                ratio[kind][op] = msec / sec;
                printf("   MPI-IO %9.1f MB/s   Tessera/MPI-IO = %.2fx%s\n",
                       a->agg_n / msec / 1e6, ratio[kind][op],
                       ratio[kind][op] < 1.0 ? "   <-- Tessera BEHIND" : "");
            } else {
                printf("   (no MPI-IO figure)\n");
            }
        }
    printf("RATIO workload=%s case=\"%s\" np=%d mpiio=\"%s\" write=%.2f read=%.2f"
           " coll_write=%.2f coll_read=%.2f\n",
           s->o->workload, s->p->tag, s->env->size, s->mpi_component, ratio[0][0], ratio[0][1],
           ratio[1][0], ratio[1][1]);
}

static const char *match_text(double f, double m, int at_least)
{
    if (f < 0)
        return "-";
    if (at_least)
        return m >= f * 0.999 ? "yes" : "no";
    double tol = 0.1 * f + 1;
    return (m >= f - tol && m <= f + tol) ? "yes" : "no";
}

static void print_table1(const shared *s, const access_sum *a, const mres *res)
{
    char b1[32], b2[32], b3[32], b4[32], b5[32];
    int np = s->env->size;
    printf("\npaper 000 Table I: formula next to measured (per client per op; mean over ranks for"
           " the independent methods;\n  two-phase: per aggregator, compared with the max over"
           " ranks; A = ranks with storage calls in the measured op)\n");
    printf("  inputs: n = %s, fr count = %s, fr size = %s..%s, file ext = %s (per client, mean"
           " over %d ranks incl. idle ones)\n",
           fmt_sz(a->n, b1, sizeof b1), fmt_n(a->frc, b2, sizeof b2),
           fmt_sz((double)a->min_fr, b3, sizeof b3), fmt_sz((double)a->max_fr, b4, sizeof b4),
           fmt_sz(a->fext, b5, sizeof b5), np);
    double aggext = 0;
    for (int c = 0; c < s->p->ncalls; c++)
        aggext += (double)a->agg_ext[c];
    printf("  agg file ext = %s (sum over the %d call(s) of one op); ds buffer = %s read / %s"
           " write%s; tp buffer = %s%s; fr per access = %lld%s\n",
           fmt_sz(aggext, b1, sizeof b1), s->p->ncalls, fmt_sz((double)a->ds_rd, b2, sizeof b2),
           fmt_sz((double)a->ds_wr, b3, sizeof b3),
           a->ds_rd_set || a->ds_wr_set ? "" : " (library defaults)",
           fmt_sz((double)a->tp_buf, b4, sizeof b4), a->tp_set ? "" : " (cb_buffer_size default)",
           (long long)a->pairs, a->pairs_set ? "" : " (tess_list_max_pairs default)");
    static const char *const heads[] = {"method", "op",     "n",      "acc(f)", "acc(m)",
                                        "ops(f)", "ops(m)", "reg(f)", "reg(m)", "resent",
                                        "A",      "acc ok", "ops ok"};
    static const int widths[] = {13, 5, 8, 9, 8, 9, 7, 9, 7, 8, 3, 6, 6};
    bench_table t;
    bench_table_init(&t, stdout, 13, heads, widths);
    bench_table_header(&t);
    for (int m = COLL_M_NAIVE; m < COLL_NMETHODS; m++) {
        const mres *r = &res[m];
        if (!r->selected || !r->ran || !r->have_stats || m == COLL_M_PMD || m == COLL_M_AUTO)
            continue;
        for (int op = 0; op < 2; op++) {
            const rstats *st = op == 0 ? &r->ws : &r->rs;
            double accf = -1, opsf = -1, accm, opsm;
            char regf[32];
            int at_least = 0, A = st->active;
            accm = st->mean[S_ACC];
            opsm = st->mean[S_OPS];
            switch (m) {
            case COLL_M_NAIVE:
                accf = a->n;
                opsf = a->frc;
                at_least = 1;
                snprintf(regf, sizeof regf, "<=%s", fmt_sz((double)a->max_fr, b1, sizeof b1));
                break;
            case COLL_M_SIEVE:
                accf = op == 0 ? a->sieve_wr_acc : a->fext;
                opsf = op == 0 ? a->sieve_wr_ops : a->sieve_rd_ops;
                snprintf(regf, sizeof regf, "<=%s",
                         fmt_sz((double)(op == 0 ? a->ds_wr : a->ds_rd), b1, sizeof b1));
                break;
            case COLL_M_LIST:
                accf = a->n;
                opsf = a->list_ops;
                snprintf(regf, sizeof regf, "%s", fmt_sz((double)a->max_fr, b1, sizeof b1));
                break;
            default: { /* two-phase */
                accm = (double)st->max[S_ACC];
                opsm = (double)st->max[S_OPS];
                if (A < 1) {
                    snprintf(regf, sizeof regf, "-");
                    break;
                }
                double acc = 0, ops = 0;
                int64_t maxrealm = 0;
                for (int c = 0; c < s->p->ncalls; c++) {
                    int64_t e = a->agg_ext[c];
                    int holes = op == 0 && a->agg_n_call[c] < e;
                    acc += (double)e / A * (holes ? 2 : 1);
                    ops += (double)(coll_ceil_div(e, (int64_t)A * a->tp_buf) * (holes ? 2 : 1));
                    if (coll_ceil_div(e, A) > maxrealm)
                        maxrealm = coll_ceil_div(e, A);
                }
                accf = acc;
                opsf = ops;
                snprintf(regf, sizeof regf, "<=%s",
                         fmt_sz((double)(maxrealm < a->tp_buf ? maxrealm : a->tp_buf), b1,
                                sizeof b1));
                break;
            }
            }
            bench_table_cell(&t, "%s", op == 0 ? coll_method_names[m] : "");
            bench_table_cell(&t, "%s", op == 0 ? "write" : "read");
            bench_table_cell(&t, "%s", fmt_sz(a->n, b1, sizeof b1));
            bench_table_cell(&t, "%s", accf < 0 ? "-" : fmt_sz(accf, b2, sizeof b2));
            bench_table_cell(&t, "%s", fmt_sz(accm, b3, sizeof b3));
            if (opsf < 0)
                bench_table_cell(&t, "%s", "-");
            else
                bench_table_cell(&t, "%s%s", at_least ? ">=" : "", fmt_n(opsf, b4, sizeof b4));
            bench_table_cell(&t, "%s", fmt_n(opsm, b5, sizeof b5));
            bench_table_cell(&t, "%s", regf);
            bench_table_cell(&t, "%s", fmt_sz((double)st->max_access, b1, sizeof b1));
            bench_table_cell(&t, "%s", fmt_sz(st->mean[S_RES], b2, sizeof b2));
            bench_table_cell(&t, "%d", A);
            bench_table_cell(&t, "%s", match_text(accf, accm, 0));
            bench_table_cell(&t, "%s", match_text(opsf, opsm, at_least));
            bench_table_end_row(&t);
        }
    }
    printf("  (f) paper formula, (m) measured; sieve and two-phase writes count a read-modify-"
           "write (x2) for calls whose\n  access has holes; naive's formula is a lower bound"
           " (one call per piece contiguous in file and memory: %s per client)\n",
           fmt_n(a->pieces, b1, sizeof b1));
}

static void print_requests(const access_sum *a, const mres *res)
{
    int any = 0;
    for (int m = COLL_M_TP_EVEN; m <= COLL_M_AUTO; m++)
        any |= res[m].selected && res[m].ran && res[m].have_stats;
    if (!any)
        return;
    char b1[32], b2[32], b3[32], b4[32], b5[32];
    printf("\nrequest bytes sent: datatype-described vs flattened, per client per op (tess_stats "
           "request_bytes: what the client sent to\n  aggregators, its encoded filetype or pairs "
           "where smaller; flat_request_bytes: 16 B per file region cut at realm ends)\n");
    static const char *const heads[] = {"method", "op",  "described", "desc_max", "flattened",
                                        "flat_max", "flat/desc"};
    static const int widths[] = {13, 5, 10, 10, 10, 10, 9};
    bench_table t;
    bench_table_init(&t, stdout, 7, heads, widths);
    bench_table_header(&t);
    for (int m = COLL_M_TP_EVEN; m <= COLL_M_AUTO; m++) {
        const mres *r = &res[m];
        if (!r->selected || !r->ran || !r->have_stats)
            continue;
        for (int op = 0; op < 2; op++) {
            const rstats *st = op == 0 ? &r->ws : &r->rs;
            bench_table_cell(&t, "%s", op == 0 ? coll_method_names[m] : "");
            bench_table_cell(&t, "%s", op == 0 ? "write" : "read");
            bench_table_cell(&t, "%s", fmt_sz(st->mean[S_REQ], b1, sizeof b1));
            bench_table_cell(&t, "%s", fmt_sz((double)st->max[S_REQ], b2, sizeof b2));
            bench_table_cell(&t, "%s", fmt_sz(st->mean[S_FLAT], b3, sizeof b3));
            bench_table_cell(&t, "%s", fmt_sz((double)st->max[S_FLAT], b4, sizeof b4));
            if (st->mean[S_REQ] > 0)
                bench_table_cell(&t, "%.1fx", st->mean[S_FLAT] / st->mean[S_REQ]);
            else
                bench_table_cell(&t, "%s", "-");
            bench_table_end_row(&t);
        }
    }
    printf("  cross-check computed by this benchmark from the access: encoded view %s (24 B + "
           "tess_type_encode of the filetype,\n  %lld B for the first view, per call) per "
           "aggregator reached, vs %s flattened (16 B x %s file regions, not cut at realm"
           " ends)\n",
           fmt_sz(a->enc, b1, sizeof b1), (long long)a->enc_first, fmt_sz(a->flat, b2, sizeof b2),
           fmt_n(a->frc, b5, sizeof b5));
}

/* The --results FILE lines: one per method and direction (see coll_opts.results). */
static int write_results(const shared *s, const access_sum *a, const mres *res)
{
    FILE *f = fopen(s->o->results, "a");
    if (!f)
        return fail("--results %s: %s", s->o->results, strerror(errno));
    for (int m = 0; m < COLL_NMETHODS; m++)
        for (int d = 0; d < 2; d++) {
            const mres *r = &res[m];
            if (!r->selected || !r->ran || !(d ? r->rdone : r->wdone))
                continue;
            fprintf(f, "%s\t%s\t%s\t%s\t%s\t%.9f\t%.0f\t%s\n", s->o->workload, s->p->tag,
                    coll_method_names[m], m == COLL_M_MPI ? "mpi" : "tessera",
                    d ? "read" : "write", d ? r->rsec : r->wsec, a->agg_n,
                    d ? r->rcheck : r->wcheck);
        }
    return fclose(f) == 0 ? 0 : fail("--results %s: write failed", s->o->results);
}

/* ================================================================== run */

int coll_run(const coll_env *e, coll_pattern *p, const coll_opts *o, int built)
{
    g_rank = e->rank;
    int ok = built ? 1 : 0, all = 0;
    if (MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD) != MPI_SUCCESS)
        return 1;
    if (!all) {
        if (e->rank == 0)
            fprintf(stderr, "tessera: %s: the pattern could not be built (see messages)\n",
                    o->workload);
        return 1;
    }
    int calls[2] = {p->ncalls, -p->ncalls}, rcalls[2];
    if (MPI_Allreduce(calls, rcalls, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD) != MPI_SUCCESS)
        return 1;
    if (rcalls[0] != -rcalls[1]) {
        if (e->rank == 0)
            fprintf(stderr, "tessera: %s: ranks disagree on the number of calls\n", o->workload);
        return 1;
    }

    shared s;
    memset(&s, 0, sizeof s);
    s.env = e;
    s.p = p;
    s.o = o;
    snprintf(s.mpi_component, sizeof s.mpi_component, "not run");
    call_info *ci = calloc((size_t)p->ncalls, sizeof *ci);
    access_sum a;
    memset(&a, 0, sizeof a);
    mres res[COLL_NMETHODS];
    memset(res, 0, sizeof res);
    int failures = 0;

    /* analyze every call; check the memory fits the buffer */
    ok = ci != NULL;
    int64_t fend = 0;
    for (int c = 0; ok && c < p->ncalls; c++) {
        const coll_call *k = &p->calls[c];
        if (k->view < 0 || k->view >= p->nviews || k->mem < 0 || k->mem >= p->nmems ||
            k->count < 0 || k->count > INT_MAX) {
            ok = 0;
            fail("call %d: bad view, memory type or count", c);
            break;
        }
        ci[c] = (call_info){.first = INT64_MAX, .min_fr = INT64_MAX};
        if (walk_call(p, k, analyze_piece, &ci[c]) != 0) {
            ok = 0;
            break;
        }
        if (ci[c].n) {
            if (ci[c].cur_fr < ci[c].min_fr)
                ci[c].min_fr = ci[c].cur_fr;
            if (ci[c].cur_fr > ci[c].max_fr)
                ci[c].max_fr = ci[c].cur_fr;
            if (ci[c].end > fend)
                fend = ci[c].end;
        }
    }
    s.file_size = max_over_ranks(ok ? fend : 0, MPI_MAX);
    if (MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD) != MPI_SUCCESS ||
        !ok) {
        failures = 1;
        goto out;
    }
    /* buffers, the written data, the memory mask, and the file coverage (OR over ranks) */
    int64_t covb = (s.file_size + 7) / 8;
    s.wbuf = bench_alloc(p->buf_bytes, WRITE_HOLE);
    s.rbuf = bench_alloc(p->buf_bytes, READ_FILL);
    s.mmask = bench_alloc((p->buf_bytes + 7) / 8, 0);
    s.cov = bench_alloc(covb, 0);
    ok = s.wbuf && s.rbuf && s.mmask && s.cov;
    if (!ok)
        fail("out of memory for %lld-byte buffers", (long long)p->buf_bytes);
    fill_ctx fc = {s.wbuf, s.mmask, s.cov, p->buf_bytes};
    for (int c = 0; ok && c < p->ncalls; c++)
        if (walk_call(p, &p->calls[c], fill_piece, &fc) != 0)
            ok = 0;
    if (MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD) != MPI_SUCCESS ||
        !ok) {
        failures = 1;
        goto out;
    }
    for (int64_t off = 0; off < covb; off += INT64_C(1) << 28) {
        int n = (int)(covb - off < (INT64_C(1) << 28) ? covb - off : (INT64_C(1) << 28));
        int rc = e->rank == 0 ? MPI_Reduce(MPI_IN_PLACE, s.cov + off, n, MPI_UNSIGNED_CHAR,
                                           MPI_BOR, 0, MPI_COMM_WORLD)
                              : MPI_Reduce(s.cov + off, NULL, n, MPI_UNSIGNED_CHAR, MPI_BOR, 0,
                                           MPI_COMM_WORLD);
        if (rc != MPI_SUCCESS) {
            failures = 1;
            mfail(rc, "MPI_Reduce (coverage)");
            goto out;
        }
    }
    if (summarize(&s, ci, &a) != 0) {
        failures = 1;
        goto out;
    }
    s.pid0 = (int64_t)getpid();
    if (MPI_Bcast(&s.pid0, 1, MPI_INT64_T, 0, MPI_COMM_WORLD) != MPI_SUCCESS) {
        failures = 1;
        goto out;
    }

    if (e->rank == 0 && !o->test) {
        char ver[MPI_MAX_LIBRARY_VERSION_STRING], b1[32], b2[32];
        int len = 0;
        if (MPI_Get_library_version(ver, &len) != MPI_SUCCESS)
            snprintf(ver, sizeof ver, "unknown MPI library");
        ver[strcspn(ver, "\n\r,")] = '\0';
        const char *io = getenv("OMPI_MCA_io");
        printf("\n== tessera bench %s: %s ==\n%s", o->workload, p->title, p->notes);
        printf("  %d processes; MPI: %s%s%s%s\n", e->size, ver, io ? " (OMPI_MCA_io=" : "",
               io ? io : "", io ? ")" : "");
        printf("  one op = %d call(s) on %d view(s): %s desired (all ranks), file %s; files in"
               " %s\n",
               p->ncalls, p->nviews, fmt_sz(a.agg_n, b1, sizeof b1),
               fmt_sz((double)s.file_size, b2, sizeof b2), o->dir);
        printf("  %s figures: %s; all methods' files are open at once;"
               " each method runs one untimed op,\n  then the timed repetitions of all methods"
               " are interleaved (repetition 1 of each, then 2, ...) so that load drift hits"
               " all alike;\n  a repetition: MPI_Barrier, I ops, MPI_Barrier; one op's time ="
               " repetition / I, max over ranks; median of R printed (reps RxI;\n  I makes a"
               " repetition last >= %.0f ms, R <= %d cut to fit %.0f s; \"warm\": one op exceeds"
               " the budget, the untimed op's time);\n  MB/s = 1e6 desired bytes (all ranks)"
               " per second\n",
               o->sync ? "synced" : "page-cache",
               o->sync ? "every timed write includes tess_file_sync / MPI_File_sync"
                       : "nothing synced or dropped from the cache",
               o->min_rep * 1e3, o->reps, o->budget);
        printf("  counters (tess_file_stats of the last timed op): per client = mean over ranks;"
               " acc_max/ops_max = max over ranks;\n  min_acc/max_acc = min/max over ranks with"
               " storage calls; io_s/xchg_s = max over ranks; sizes in bytes, K = KiB, M = MiB\n");
        bench_print_machine(stdout);
        fflush(stdout);
    }

    /* Tessera methods first (the first verified file becomes the reference), MPI-IO last */
    if (run_methods(&s, res) != 0)
        failures++;
    for (int m = 1; m < COLL_NMETHODS; m++) {
        const mres *r = &res[m];
        if (r->selected && !r->unavailable && (!r->ran || !r->wok || !r->rok))
            failures++;
    }

    if (e->rank == 0) {
        if (o->test) {
            int nok = 0, nna = 0;
            char na[128] = "";
            for (int m = 1; m < COLL_NMETHODS; m++) {
                if (!res[m].selected)
                    continue;
                if (res[m].unavailable) {
                    nna++;
                    size_t l = strlen(na);
                    snprintf(na + l, sizeof na - l, "%s%s", l ? "," : "", coll_method_names[m]);
                } else if (res[m].ran && res[m].wok && res[m].rok) {
                    nok++;
                }
            }
            if (!o->silent || failures) {
                printf("%s %s np=%d: %d Tessera method(s) verified (file bytes and reads)%s%s%s",
                       o->workload, p->tag, e->size, nok, nna ? "; not in this library: " : "",
                       na, failures ? "; FAILED" : "");
                if (res[COLL_M_MPI].selected)
                    printf("; MPI-IO (information): file %s, read %s",
                           res[COLL_M_MPI].ran ? res[COLL_M_MPI].wcheck : "-",
                           res[COLL_M_MPI].ran ? res[COLL_M_MPI].rcheck : "-");
                printf("\n");
            }
            if (failures)
                print_main_table(&a, res);
        } else {
            print_main_table(&a, res);
            printf("  check: write = the file against the expected image and the reference file"
                   " (%s's), read = every rank's buffer\n  (data and untouched holes);"
                   " * MPI-IO's checks are information only\n",
                   s.have_ref ? coll_method_names[s.ref_method] : "none");
            if (res[COLL_M_MPI].selected)
                printf("  MPI-IO: %s; hints: %s\n", s.mpi_component,
                       s.mpi_hints[0] ? s.mpi_hints : "-");
            print_summary(&s, &a, res);
            if (o->results && write_results(&s, &a, res) != 0)
                failures++;
            if (p->table1)
                print_table1(&s, &a, res);
            print_requests(&a, res);
        }
        fflush(stdout);
        if (s.have_ref && !o->keep)
            unlink(s.ref_path);
    }
out:
    if (MPI_Allreduce(MPI_IN_PLACE, &failures, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD) !=
        MPI_SUCCESS)
        failures = 1;
    free(ci);
    free(a.agg_ext);
    free(a.agg_n_call);
    bench_free(s.wbuf);
    bench_free(s.rbuf);
    bench_free(s.mmask);
    bench_free(s.cov);
    return failures ? 1 : 0;
}

int coll_opt_other(int ch, void (*usage)(FILE *), int quiet)
{
    if (!quiet)
        usage(ch == 'h' ? stdout : stderr);
    return ch == 'h' ? 0 : 2;
}

int coll_opts_rest(const char *name, int argc, char **argv, int status, int quiet)
{
    if (status >= 0 || optind >= argc)
        return status;
    if (!quiet)
        fprintf(stderr, "tessera: bench %s: unexpected argument '%s'\n", name, argv[optind]);
    return 2;
}
