/*
 * coll_options.c - the command side of the collective workloads: the options every workload
 * takes (one table for bench_parse), the hints they become, MPI set-up, messages, and
 * coll_main, the whole of `tessera bench <workload>`.
 */
#include "coll_impl.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

const char *const coll_method_names[COLL_NMETHODS] = {
    "mpi",    "naive",      "sieve",         "list",        "pmd",
    "tp-even", "tp-aligned", "tp-persistent", "tp-balanced", "auto"};

/* ================================================================ messages */

static int g_rank; /* for messages */

void coll_set_rank(int rank) { g_rank = rank; }

int coll_fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "tessera: [rank %d] ", g_rank);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return -1;
}

int coll_tfail(int rc, const char *what)
{
    return coll_fail("%s: %s (%s)", what, tess_strerror(rc), tess_last_error());
}

int coll_mfail(int rc, const char *what)
{
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(rc, text, &len) != MPI_SUCCESS)
        len = 0;
    text[len < MPI_MAX_ERROR_STRING ? len : MPI_MAX_ERROR_STRING - 1] = '\0';
    return coll_fail("%s: MPI error %d: %s", what, rc, text);
}

int coll_agree(int ok)
{
    int all = 0;
    if (MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD) != MPI_SUCCESS)
        return 0;
    return all;
}

int64_t coll_over_ranks(int64_t v, MPI_Op op)
{
    int64_t r = 0;
    if (MPI_Allreduce(&v, &r, 1, MPI_INT64_T, op, MPI_COMM_WORLD) != MPI_SUCCESS)
        return -1;
    return r;
}

/* =============================================================== options */

#define TP_ALL (1u << COLL_M_TP_EVEN | 1u << COLL_M_TP_ALIGNED | 1u << COLL_M_TP_PERSISTENT | \
                1u << COLL_M_TP_BALANCED | 1u << COLL_RM_TP_LIST | 1u << COLL_RM_TP_SIEVE |    \
                1u << COLL_RM_TP_DATATYPE)

static const bench_choice method_choices[] = {
    {"mpi", 1u << COLL_M_MPI},
    {"naive", 1u << COLL_M_NAIVE},
    {"sieve", 1u << COLL_M_SIEVE},
    {"list", 1u << COLL_M_LIST},
    {"pmd", 1u << COLL_M_PMD},
    {"tp-even", 1u << COLL_M_TP_EVEN},
    {"tp-aligned", 1u << COLL_M_TP_ALIGNED},
    {"tp-persistent", 1u << COLL_M_TP_PERSISTENT},
    {"tp-balanced", 1u << COLL_M_TP_BALANCED},
    {"auto", 1u << COLL_M_AUTO},
    {"datatype", 1u << COLL_RM_DATATYPE},
    {"tp-list", 1u << COLL_RM_TP_LIST},
    {"tp-sieve", 1u << COLL_RM_TP_SIEVE},
    {"tp-datatype", 1u << COLL_RM_TP_DATATYPE},
    {"tp", TP_ALL},
    {"all", (1u << COLL_NALL) - 1},
    {NULL, 0}};

static const bench_choice driver_choices[] = {{"posix", 0}, {"rados", 1}, {NULL, 0}};

int (*coll_rados_run)(const coll_env *e, coll_pattern *p, const coll_opts *o, int built);

enum { COLL_NSHARED = 23 };

/* The options every collective workload takes, into t (at least COLL_NSHARED entries). */
static int shared_options(coll_opts *o, bench_opt *t)
{
    const bench_opt all[] = {
        {.name = "methods", .kind = BENCH_OPT_SET, .dst = &o->methods, .arg = "LIST",
         .choices = method_choices, .def = "all",
         .help = "tp = every tp-*, all = everything. naive..pmd: tess_file_write_at/read_at, "
                 "romio_cb_*=disable; tp-R: tess_file_*_at_all, romio_cb_*=enable, "
                 "tess_realms=R; auto: tess_file_*_at_all with the library's defaults; mpi: "
                 "MPI_File_write_at_all/read_at_all of the MPI library. --driver rados: "
                 "naive, list, sieve, datatype, tp-list, tp-sieve, tp-datatype"},
        {.name = "reps", .kind = BENCH_OPT_SIZE, .dst = &o->reps, .min = 1, .max = 1000,
         .arg = "N", .help = "timed repetitions, median printed (--driver rados: at least N, more "
                             "while --budget lasts, methods alternating)", .def = "5",
         .quick = "3"},
        {.name = "min-ms", .kind = BENCH_OPT_MS, .dst = &o->min_rep, .arg = "MS",
         .help = "each repetition repeats the op to last MS ms; the time of one op is printed",
         .def = "50", .quick = "10"},
        {.name = "budget", .kind = BENCH_OPT_SECONDS, .dst = &o->budget, .arg = "SEC",
         .help = "seconds per method and direction; slow methods run fewer repetitions (at "
                 "least 1; --driver rados: a method estimated over 4 x SEC per op is skipped "
                 "and its estimate printed)", .def = "10"},
        {.name = "sync", .kind = BENCH_OPT_FLAG, .dst = &o->sync,
         .help = "include tess_file_sync / MPI_File_sync in write times (default: page-cache "
                 "figures, nothing synced)"},
        {.name = "cb-nodes", .kind = BENCH_OPT_SIZE, .dst = &o->cb_nodes, .min = 1, .arg = "N",
         .help = "collective hint, to Tessera and MPI-IO alike (default: each library's own)"},
        {.name = "cb-buffer-size", .kind = BENCH_OPT_SIZE, .dst = &o->cb_buffer_size, .min = 1,
         .arg = "S", .help = "collective hint, to Tessera and MPI-IO alike"},
        {.name = "striping-unit", .kind = BENCH_OPT_SIZE, .dst = &o->striping_unit, .min = 1,
         .arg = "S", .help = "collective hint, to Tessera and MPI-IO alike (tp-aligned: 1m "
                             "when not given)"},
        {.name = "ds-read", .kind = BENCH_OPT_SIZE, .dst = &o->ds_read, .min = 1, .arg = "S",
         .help = "ind_rd_buffer_size (Tessera)"},
        {.name = "ds-write", .kind = BENCH_OPT_SIZE, .dst = &o->ds_write, .min = 1, .arg = "S",
         .help = "ind_wr_buffer_size (Tessera)"},
        {.name = "list-pairs", .kind = BENCH_OPT_SIZE, .dst = &o->list_pairs, .min = 1,
         .arg = "N", .help = "tess_list_max_pairs (Tessera)"},
        {.name = "hint", .kind = BENCH_OPT_PAIRS, .dst = o->hints, .cap = COLL_MAX_HINTS,
         .n = &o->nhints, .arg = "K=V", .help = "extra Tessera hint (repeatable)"},
        {.name = "mpi-hint", .kind = BENCH_OPT_PAIRS, .dst = o->mpi_hints,
         .cap = COLL_MAX_HINTS, .n = &o->nmpi_hints, .arg = "K=V",
         .help = "extra MPI-IO hint (repeatable)"},
        {.name = "driver", .kind = BENCH_OPT_CHOICE, .dst = &o->rados, .arg = "D",
         .choices = driver_choices, .def = "posix",
         .help = "posix (files in --dir) or rados (Tessera's methods on RADOS: naive, list, "
                 "sieve, datatype and two-phase over list, sieve, datatype at each of --delays; "
                 "--methods picks among them)"},
        {.name = "cluster", .kind = BENCH_OPT_TEXT, .dst = &o->cluster, .arg = "DIR",
         .help = "rados: the `tessera cluster` in DIR (its ceph.conf unless --hint "
                 "tess_rados_conf=..., its OSDs' delays and counters)"},
        {.name = "delays", .kind = BENCH_OPT_SIZES, .dst = o->delays, .arg = "LIST",
         .cap = COLL_MAX_DELAYS, .n = &o->ndelays,
         .help = "rados with --cluster: added per-request delays in microseconds, each "
                 "calibrated on the OSDs before its runs (default: as the cluster is)"},
        BENCH_OPT_DIR(&o->dir),
        BENCH_OPT_KEEP(&o->keep),
        BENCH_OPT_RESULTS(&o->results),
        {.name = "test", .kind = BENCH_OPT_TEST, .dst = &o->test,
         .help = "verify only: one write and one read per method, no timing, one summary line "
                 "(the test suite's mode)"},
        {.name = "silent", .kind = BENCH_OPT_FLAG, .dst = &o->silent,
         .help = "with --test, print only failures"},
        BENCH_OPT_QUICKLY(&o->quick, "small sizes for the demo"),
    };
    int n = BENCH_NOPTS(all);
    memcpy(t, all, sizeof all);
    return n;
}

/* ================================================================== main */

int coll_main(const coll_workload *w, bench_opt *own, int nown, void *params, int argc,
              char **argv)
{
    coll_env env = {0};
    int inited = 0;
    if (MPI_Initialized(&inited) != MPI_SUCCESS)
        return coll_fail("MPI_Initialized failed"), 1;
    if (!inited) {
        if (MPI_Init(NULL, NULL) != MPI_SUCCESS)
            return coll_fail("MPI_Init failed"), 1;
        env.inited_here = 1;
    }
    int status = 1;
    if (MPI_Comm_rank(MPI_COMM_WORLD, &env.rank) != MPI_SUCCESS ||
        MPI_Comm_size(MPI_COMM_WORLD, &env.size) != MPI_SUCCESS) {
        coll_fail("MPI_Comm_rank/size failed");
        goto out;
    }
    coll_set_rank(env.rank);
    int quiet = env.rank != 0;
    coll_opts o = {.workload = w->name, .dir = bench_default_dir()};
    bench_opt shared[COLL_NSHARED];
    bench_command cmd = {.name = w->name, .about = w->about, .opts = own, .nopts = nown,
                         .shared = shared, .nshared = shared_options(&o, shared)};
    status = bench_parse(&cmd, argc, argv, quiet);
    if (status < 0 && w->check && w->check(params, quiet) != 0)
        status = 2;
    if (status < 0 && o.rados && !coll_rados_run) {
        if (!quiet)
            fprintf(stderr, "tessera bench %s: --driver rados: this program was built without "
                            "librados\n", w->name);
        status = 2;
    }
    if (status < 0 && !(o.methods & (o.rados ? COLL_RADOS_METHODS : (1u << COLL_NMETHODS) - 1))) {
        if (!quiet)
            fprintf(stderr, "tessera bench %s: --methods: none of them runs with --driver %s "
                            "(rados runs naive, list, sieve, datatype, tp-list, tp-sieve and "
                            "tp-datatype; the last four run only there)\n", w->name,
                    o.rados ? "rados" : "posix");
        status = 2;
    }
    if (status < 0 && o.ndelays && !o.cluster) {
        if (!quiet)
            fprintf(stderr, "tessera bench %s: --delays needs --cluster DIR\n", w->name);
        status = 2;
    }
    if (status >= 0)
        goto out;
    bench_report rep;
    bench_table sum;
    int ok = quiet || o.test || bench_report_begin(&rep, w->name, o.results) == 0;
    if (!coll_agree(ok)) {
        status = 1;
        goto out;
    }
    if (!quiet && !o.test) {
        o.report = &rep;
        o.summary = &sum;
        coll_summary_begin(&sum, &o, env.size);
    }
    status = w->run(&env, &o, params) ? 1 : 0;
    if (o.report)
        bench_report_end(&rep);
out:
    if (env.inited_here) {
        int fin = 0;
        if (MPI_Finalized(&fin) == MPI_SUCCESS && !fin)
            MPI_Finalize();
    }
    return status;
}

/* ================================================================= hints */

/* One hint as key and value text. */
typedef struct hint {
    char key[64], value[256];
} hint;

enum { MAX_METHOD_HINTS = 10 + COLL_MAX_HINTS };

static void add(hint *h, int *n, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void add(hint *h, int *n, const char *key, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    snprintf(h[*n].key, sizeof h[*n].key, "%s", key);
    vsnprintf(h[*n].value, sizeof h[*n].value, fmt, ap);
    va_end(ap);
    (*n)++;
}

/*
 * The hints of method m (COLL_M_MPI: the MPI library's MPI-IO): the method's own, the collective
 * sizes (both libraries alike), Tessera's sieving and list sizes, then the extra --hint or
 * --mpi-hint pairs. Returns the count (at most MAX_METHOD_HINTS).
 */
static int method_hints(const coll_opts *o, int m, hint *h)
{
    int n = 0, mpi = m == COLL_M_MPI;
    if (m >= COLL_M_NAIVE && m <= COLL_M_PMD) {
        add(h, &n, "tess_method", "%s", coll_method_names[m]);
        add(h, &n, "romio_cb_read", "disable");
        add(h, &n, "romio_cb_write", "disable");
    } else if (m >= COLL_M_TP_EVEN && m <= COLL_M_TP_BALANCED) {
        add(h, &n, "romio_cb_read", "enable");
        add(h, &n, "romio_cb_write", "enable");
        add(h, &n, "tess_realms", "%s", coll_method_names[m] + 3);
        if (m == COLL_M_TP_ALIGNED && !o->striping_unit)
            add(h, &n, "striping_unit", "%d", 1 << 20);
    }
    const struct {
        const char *key;
        int64_t v;
        int tessera_only;
    } sizes[] = {{"cb_nodes", o->cb_nodes, 0},
                 {"cb_buffer_size", o->cb_buffer_size, 0},
                 {"striping_unit", o->striping_unit, 0},
                 {"ind_rd_buffer_size", o->ds_read, 1},
                 {"ind_wr_buffer_size", o->ds_write, 1},
                 {"tess_list_max_pairs", o->list_pairs, 1}};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        if (sizes[i].v && !(mpi && sizes[i].tessera_only))
            add(h, &n, sizes[i].key, "%lld", (long long)sizes[i].v);
    const char *const *extra = mpi ? o->mpi_hints : o->hints;
    for (int i = 0; i < (mpi ? o->nmpi_hints : o->nhints); i++) {
        const char *eq = strchr(extra[i], '=');
        char key[64];
        snprintf(key, sizeof key, "%.*s", (int)(eq - extra[i]), extra[i]);
        add(h, &n, key, "%s", eq + 1);
    }
    return n;
}

int coll_tess_hints(const coll_opts *o, int m, tess_info **out)
{
    hint h[MAX_METHOD_HINTS];
    int n = method_hints(o, m, h);
    tess_info *info = NULL;
    int rc = tess_info_create(&info);
    for (int i = 0; rc == 0 && i < n; i++)
        rc = tess_info_set(info, h[i].key, h[i].value);
    if (rc != 0) {
        tess_info_free(info);
        return coll_tfail(rc, "tess_info_create/set");
    }
    *out = info;
    return 0;
}

int coll_mpi_info(const coll_opts *o, MPI_Info *out)
{
    hint h[MAX_METHOD_HINTS];
    int n = method_hints(o, COLL_M_MPI, h);
    MPI_Info info;
    if (MPI_Info_create(&info) != MPI_SUCCESS)
        return coll_fail("MPI_Info_create failed");
    int e = 0;
    for (int i = 0; i < n; i++)
        e |= MPI_Info_set(info, h[i].key, h[i].value) != MPI_SUCCESS;
    if (e) {
        MPI_Info_free(&info);
        return coll_fail("MPI_Info_set failed");
    }
    *out = info;
    return 0;
}
