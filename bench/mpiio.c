/*
 * mpiio.c - `tessera bench mpiio`: the same MPI-IO programs on ROMIO, on OMPIO and on Tessera
 * through libtessera_mpiio (issue 9), in one run.
 *
 * The command is a driver, not an MPI program: the I/O component of an MPI process is fixed when
 * it starts (Open MPI's `--mca io`, or the preloaded library), so every (workload, way) pair is
 * its own mpiexec launch. The workloads are the existing programs, unchanged:
 *   block3d, tile: `tessera bench block3d|tile --methods mpi --results F` (bench/block3d.c,
 *     bench/tile.c on the collective runner, coll_*.c: MPI_File_write_at_all / read_at_all of the
 *     pattern, files and reads verified); on the Tessera way also `--methods mpi,auto`: `auto`
 *     is the same access through tess_file_*_at_all directly, timed interleaved with the MPI-IO
 *     calls in the same processes, which gives the library's own overhead;
 *   hdf5, pnetcdf: `tessera-formats --format h5|nc` (bench/formats.c): coll_perf's 3-D block as one
 *     HDF5 dataset (collective H5Dwrite/H5Dread) and one PnetCDF variable
 *     (ncmpi_put_vara_int_all / get_vara_int_all).
 * Ways: Open MPI: ROMIO (`--mca io romio321`), OMPIO (`--mca io ompio`), Tessera (`-x
 * LD_PRELOAD=libtessera_mpiio.so`); MPICH: ROMIO, Tessera (`-genv LD_PRELOAD ...`).
 * Each round launches every pair once, the ways in a rotating order so that drift in the
 * machine's load hits all alike; a figure is the median over rounds of each launch's median.
 * Page-cache figures: nothing is synced or dropped.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "cmds.h"

#ifndef TESS_BENCH_MPIEXEC
#define TESS_BENCH_MPIEXEC "mpiexec"
#endif
#ifndef TESS_BENCH_MPIIO_LIB
#define TESS_BENCH_MPIIO_LIB ""
#endif
#ifndef TESS_BENCH_FORMATS
#define TESS_BENCH_FORMATS ""
#endif
/* the formats tessera-formats was built with ("h5,nc"): HDF5 for this MPI, PnetCDF only where
   libpnetcdf was built for it (Debian: Open MPI) */
#ifndef TESS_BENCH_FORMATS_BUILT
#define TESS_BENCH_FORMATS_BUILT ""
#endif

enum { WAY_ROMIO, WAY_OMPIO, WAY_TESS, NWAYS };
static const char *const way_names[NWAYS] = {"ROMIO", "OMPIO", "Tessera"};
#if defined(OPEN_MPI)
static const int way_on[NWAYS] = {1, 1, 1};
#else
static const int way_on[NWAYS] = {1, 0, 1}; /* MPICH: ROMIO is its only MPI-IO */
#endif

enum { WL_BLOCK3D, WL_TILE, WL_HDF5, WL_PNETCDF, NWL };
static const char *const wl_names[NWL] = {"block3d", "tile", "hdf5", "pnetcdf"};

enum { MAX_ROUNDS = 21 };

/* The options (one struct, filled by mpiio_parse). */
typedef struct mpiio_opts {
    int64_t np, rounds, reps, n, frames;
    int quick;
    const char *dir, *mpiexec, *lib, *formats, *log;
    char self[1024];
} mpiio_opts;

/* Figures of one (workload, direction): per way, per round; and the direct tess_* figure. */
typedef struct cell {
    double sec[NWAYS][MAX_ROUNDS];
    int nsec[NWAYS];
    double direct[MAX_ROUNDS]; /* tess_*_at_all directly, in the Tessera launch */
    int ndirect;
    int64_t bytes;
    char check[NWAYS][64]; /* the first non-"ok" check, else "ok" */
    char why[NWAYS][128];  /* why a figure is missing */
} cell;

static cell cells[NWL][2]; /* [workload][0 write, 1 read] */

#if defined(OPEN_MPI)
#define DEFAULT_NP "4"
#else
#define DEFAULT_NP "2" /* MPICH busy-polls: 2 processes on this 2-core machine */
#endif

/* -1: run; otherwise the exit status (0 after --help, 2 on bad usage, 1 on an error). */
static int mpiio_parse(int argc, char **argv, mpiio_opts *o)
{
    *o = (mpiio_opts){.dir = bench_default_dir(), .mpiexec = TESS_BENCH_MPIEXEC,
                      .lib = TESS_BENCH_MPIIO_LIB, .formats = TESS_BENCH_FORMATS};
    bench_opt opts[] = {
        {.name = "np", .kind = BENCH_OPT_SIZE, .dst = &o->np, .min = 1, .max = 1024, .arg = "N",
         .help = "processes of every launch", .def = DEFAULT_NP},
        {.name = "rounds", .kind = BENCH_OPT_SIZE, .dst = &o->rounds, .min = 1,
         .max = MAX_ROUNDS, .arg = "K", .help = "launches of every program and way; medians",
         .def = "3", .quick = "1"},
        BENCH_OPT_REPS(&o->reps, 1000, "3"),
        {.name = "n", .kind = BENCH_OPT_SIZE, .dst = &o->n, .min = 1, .max = 100000,
         .arg = "N", .help = "3-D block side for block3d, hdf5, pnetcdf", .def = "128",
         .quick = "64"},
        {.name = "frames", .kind = BENCH_OPT_SIZE, .dst = &o->frames, .min = 1, .max = 100000,
         .arg = "F", .help = "tile reader frames", .def = "2", .quick = "1"},
        BENCH_OPT_QUICKLY(&o->quick, "small and short"),
        BENCH_OPT_DIR(&o->dir),
        {.name = "log", .kind = BENCH_OPT_TEXT, .dst = &o->log, .arg = "FILE",
         .help = "every launch's command and output (default DIR/tessera-mpiio.log)"},
        {.name = "mpiexec", .kind = BENCH_OPT_TEXT, .dst = &o->mpiexec, .arg = "P",
         .help = "the launcher (default: the build tree's, " TESS_BENCH_MPIEXEC ")"},
        {.name = "lib", .kind = BENCH_OPT_TEXT, .dst = &o->lib, .arg = "P",
         .help = "libtessera_mpiio.so (default: the build tree's)"},
        {.name = "formats", .kind = BENCH_OPT_TEXT, .dst = &o->formats, .arg = "P",
         .help = "the tessera-formats program (default: the build tree's)"},
    };
    const bench_command cmd = {
        .name = "mpiio", .opts = opts, .nopts = BENCH_NOPTS(opts),
        .about = "  Not under mpirun: it launches mpiexec. The same MPI-IO programs on ROMIO, OMPIO "
                 "(Open MPI\n  only) and on Tessera through libtessera_mpiio (LD_PRELOAD): "
                 "coll_perf's 3-D block and the\n  tile reader (MPI-IO), an HDF5 collective "
                 "dataset write and read, a PnetCDF variable write\n  and read. MB/s, Tessera "
                 "against the better of the others, and the library's overhead\n  against "
                 "calling tess_* directly for the same access (block3d, tile).\n"};
    int status = bench_parse(&cmd, argc, argv, 0);
    if (status >= 0)
        return status;
    ssize_t k = readlink("/proc/self/exe", o->self, sizeof o->self - 1);
    if (k <= 0)
        return bench_fail("bench mpiio: cannot find this program (/proc/self/exe)"), 1;
    o->self[k] = '\0';
    return -1;
}

/* ------------------------------------------------------------ launches */

/* Append s to cmd, single-quoted for the shell. */
static void arg(char *cmd, size_t cap, const char *s)
{
    size_t len = strlen(cmd);
    if (len + 4 >= cap)
        return;
    cmd[len++] = ' ';
    cmd[len++] = '\'';
    for (; *s && len + 6 < cap; s++) {
        if (*s == '\'') {
            memcpy(cmd + len, "'\\''", 4);
            len += 4;
        } else {
            cmd[len++] = *s;
        }
    }
    cmd[len++] = '\'';
    cmd[len] = '\0';
}

static void argf(char *cmd, size_t cap, const char *fmt, long long v)
{
    char b[64];
    snprintf(b, sizeof b, fmt, v);
    arg(cmd, cap, b);
}

/*
 * Launch workload w on way `way`; read the figures it appended to the results file (--results,
 * bench/report.h: workload, case, method, tessera|mpi, write|read, seconds per op, bytes per
 * op, check) into the cells. 0 or -1.
 */
static int launch(const mpiio_opts *o, FILE *log, int w, int way)
{
    char cmd[8192] = "", file[1300], results[1200];
    snprintf(results, sizeof results, "%s/tessera-mpiio-%ld.results", o->dir, (long)getpid());
    unlink(results);
    snprintf(cmd, sizeof cmd, "cd");
    arg(cmd, sizeof cmd, o->dir);
    strcat(cmd, " &&");
    arg(cmd, sizeof cmd, o->mpiexec);
    snprintf(cmd + strlen(cmd), sizeof cmd - strlen(cmd), " -n %lld", (long long)o->np);
#if defined(OPEN_MPI)
    strcat(cmd, " --oversubscribe");
    if (way == WAY_ROMIO)
        strcat(cmd, " --mca io romio321");
    else if (way == WAY_OMPIO)
        strcat(cmd, " --mca io ompio");
    if (way == WAY_TESS) {
        char env[1100];
        snprintf(env, sizeof env, "LD_PRELOAD=%s", o->lib);
        strcat(cmd, " -x");
        arg(cmd, sizeof cmd, env);
    }
#else
    if (way == WAY_TESS) {
        strcat(cmd, " -genv LD_PRELOAD");
        arg(cmd, sizeof cmd, o->lib);
    }
#endif
    if (w == WL_BLOCK3D || w == WL_TILE) {
        arg(cmd, sizeof cmd, o->self);
        arg(cmd, sizeof cmd, "bench");
        arg(cmd, sizeof cmd, wl_names[w]);
        arg(cmd, sizeof cmd, way == WAY_TESS ? "--methods=mpi,auto" : "--methods=mpi");
        snprintf(file, sizeof file, "--results=%s", results);
        arg(cmd, sizeof cmd, file);
        argf(cmd, sizeof cmd, "--reps=%lld", o->reps);
        argf(cmd, sizeof cmd, w == WL_BLOCK3D ? "--n=%lld" : "--frames=%lld",
             w == WL_BLOCK3D ? o->n : o->frames);
        snprintf(file, sizeof file, "--dir=%s", o->dir);
        arg(cmd, sizeof cmd, file);
    } else {
        arg(cmd, sizeof cmd, o->formats);
        arg(cmd, sizeof cmd, w == WL_HDF5 ? "--format=h5" : "--format=nc");
        snprintf(file, sizeof file, "tessera-mpiio-%ld-%s.%s", (long)getpid(), way_names[way],
                 w == WL_HDF5 ? "h5" : "nc");
        char opt[1400];
        snprintf(opt, sizeof opt, "--file=%s", file);
        arg(cmd, sizeof cmd, opt);
        argf(cmd, sizeof cmd, "--n=%lld", o->n);
        argf(cmd, sizeof cmd, "--reps=%lld", o->reps);
        snprintf(opt, sizeof opt, "--results=%s", results);
        arg(cmd, sizeof cmd, opt);
    }
    strcat(cmd, " < /dev/null 2>&1");
    fprintf(log, "\n$ %s\n", cmd);
    fflush(log);
    FILE *p = popen(cmd, "r");
    if (!p)
        return -1;
    char line[4096];
    while (fgets(line, sizeof line, p))
        fputs(line, log);
    int status = pclose(p), got = 0;
    FILE *rf = fopen(results, "r");
    while (rf && fgets(line, sizeof line, rf)) {
        fputs(line, log);
        char method[64], dir[16], check[64];
        double sec = 0, bytes = 0;
        if (sscanf(line, "%*[^\t]\t%*[^\t]\t%63[^\t]\t%*[^\t]\t%15[^\t]\t%lf\t%lf\t%63[^\t\n]",
                   method, dir, &sec, &bytes, check) != 5)
            continue;
        cell *c = &cells[w][strcmp(dir, "read") == 0];
        c->bytes = (int64_t)bytes;
        int direct = strcmp(method, "auto") == 0;
        if (direct && c->ndirect < MAX_ROUNDS)
            c->direct[c->ndirect++] = sec;
        if (!direct && c->nsec[way] < MAX_ROUNDS) {
            c->sec[way][c->nsec[way]++] = sec;
            got = 1;
        }
        if (!direct && strcmp(check, "ok") != 0 && strcmp(c->check[way], "ok") == 0)
            snprintf(c->check[way], sizeof c->check[way], "%s", check);
    }
    if (rf)
        fclose(rf);
    unlink(results);
    if (w == WL_HDF5 || w == WL_PNETCDF) {
        char path[2400];
        snprintf(path, sizeof path, "%s/%s", o->dir, file);
        unlink(path);
    }
    if (status != 0 || !got) {
        for (int d = 0; d < 2; d++)
            if (!cells[w][d].why[way][0])
                snprintf(cells[w][d].why[way], sizeof cells[w][d].why[way],
                         status != 0 ? "failed (exit status %d; see the log)"
                                     : "no figures (see the log)",
                         status);
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------- output */

static double median_of(const double *v, int n)
{
    double t[MAX_ROUNDS];
    memcpy(t, v, sizeof *t * (size_t)n);
    return bench_median(t, n);
}

static double mbps(const cell *c, int way)
{
    return c->nsec[way] ? (double)c->bytes / median_of(c->sec[way], c->nsec[way]) / 1e6 : 0;
}

static void print_report(const mpiio_opts *o, const char *library)
{
    printf("\n== tessera bench mpiio: %lld processes, %lld round(s) x %lld repetition(s), N=%lld, "
           "%lld tile frame(s) ==\n",
           (long long)o->np, (long long)o->rounds, (long long)o->reps, (long long)o->n,
           (long long)o->frames);
    printf("  MPI: %s; Tessera: %s (LD_PRELOAD); files in %s (page cache: nothing synced)\n",
           library, o->lib, o->dir);
    bench_print_machine(stdout);
    printf("\nsummary (Tessera through libtessera_mpiio against the better of %s):\n",
           way_on[WAY_OMPIO] ? "ROMIO and OMPIO" : "ROMIO (MPICH has no OMPIO)");
    for (int w = 0; w < NWL; w++)
        for (int d = 0; d < 2; d++) {
            const cell *c = &cells[w][d];
            char row[32];
            snprintf(row, sizeof row, "%s %s", wl_names[w], d ? "read" : "write");
            int best = -1;
            for (int way = 0; way < WAY_TESS; way++)
                if (way_on[way] && c->nsec[way] && (best < 0 || mbps(c, way) > mbps(c, best)))
                    best = way;
            if (!c->nsec[WAY_TESS] || best < 0) {
                printf("  %-16s n/a (%s)\n", row,
                       !c->nsec[WAY_TESS] ? (c->why[WAY_TESS][0] ? c->why[WAY_TESS]
                                                                  : "not run")
                                          : "no MPI-IO figure");
                continue;
            }
            double t = mbps(c, WAY_TESS), b = mbps(c, best);
            printf("  %-16s Tessera %8.0f MB/s = %5.2fx %s (%.0f MB/s)%s%s\n", row, t, t / b,
                   way_names[best], b, strcmp(c->check[WAY_TESS], "ok") ? "  CHECK " : "",
                   strcmp(c->check[WAY_TESS], "ok") ? c->check[WAY_TESS] : "");
        }

    printf("\ndetail: MB/s (median over rounds of each launch's median; 1e6 bytes of all ranks "
           "per second)\n");
    static const char *const heads[] = {"row", "op", "MB", "ROMIO", "OMPIO", "Tessera",
                                        "T/ROMIO", "T/OMPIO", "direct", "overhead", "checks"};
    static const int widths[] = {8, 5, 7, 9, 9, 9, 8, 8, 9, 9, 24};
    bench_table t;
    bench_table_init(&t, stdout, 11, heads, widths);
    bench_table_header(&t);
    for (int w = 0; w < NWL; w++)
        for (int d = 0; d < 2; d++) {
            const cell *c = &cells[w][d];
            bench_table_cell(&t, "%s", d ? "" : wl_names[w]);
            bench_table_cell(&t, "%s", d ? "read" : "write");
            bench_table_cell(&t, "%.1f", (double)c->bytes / 1e6);
            for (int way = 0; way < NWAYS; way++) {
                if (!way_on[way] || !c->nsec[way])
                    bench_table_cell(&t, "%s", way_on[way] ? "n/a" : "-");
                else
                    bench_table_cell(&t, "%.0f", mbps(c, way));
            }
            for (int way = 0; way < WAY_TESS; way++) {
                if (way_on[way] && c->nsec[way] && c->nsec[WAY_TESS])
                    bench_table_cell(&t, "%.2fx", mbps(c, WAY_TESS) / mbps(c, way));
                else
                    bench_table_cell(&t, "-");
            }
            if (c->ndirect && c->nsec[WAY_TESS]) {
                double dsec = median_of(c->direct, c->ndirect);
                double tsec = median_of(c->sec[WAY_TESS], c->nsec[WAY_TESS]);
                bench_table_cell(&t, "%.0f", (double)c->bytes / dsec / 1e6);
                bench_table_cell(&t, "%+.1f%%", (tsec / dsec - 1) * 100);
            } else {
                bench_table_cell(&t, "-");
                bench_table_cell(&t, "-");
            }
            char checks[128] = "";
            for (int way = 0; way < NWAYS; way++)
                if (way_on[way] && c->nsec[way]) {
                    size_t l = strlen(checks);
                    snprintf(checks + l, sizeof checks - l, "%s%c:%s", l ? " " : "",
                             way_names[way][0], c->check[way]);
                }
            bench_table_cell(&t, "%s", checks[0] ? checks : "-");
            bench_table_end_row(&t);
        }
    printf("  direct: the same access through tess_file_*_at_all in the Tessera launch (the "
           "`auto` method of\n  tessera bench block3d|tile), timed interleaved with the MPI-IO "
           "calls; overhead = library time / direct\n  time - 1 (target: under 3%%). checks "
           "(block3d, tile): the file against the expected image and every\n  read, per way "
           "(R ROMIO, O OMPIO, T Tessera); hdf5 and pnetcdf check their reads (a failed check\n"
           "  fails the launch). n/a: the launch failed or the program lacks the format (see "
           "the log).\n");
}

/* Whether workload w can run here; if not, the reason goes into both directions' cells. */
static int workload_available(const mpiio_opts *o, int w, cell *c)
{
    const char *why = NULL;
    if (w == WL_HDF5 || w == WL_PNETCDF) {
        const char *fmt = w == WL_HDF5 ? "h5" : "nc";
        const char *built = TESS_BENCH_FORMATS_BUILT;
        if (!o->formats[0])
            why = "no tessera-formats program (--formats)";
        else if (strcmp(o->formats, TESS_BENCH_FORMATS) == 0 &&
                 !strstr(built, fmt))
            why = w == WL_HDF5 ? "tessera-formats was built without HDF5 for this MPI"
                               : "tessera-formats was built without PnetCDF: libpnetcdf is not "
                                 "built for this MPI";
    }
    for (int d = 0; why && d < 2; d++)
        snprintf(c[d].why[WAY_TESS], sizeof c[d].why[WAY_TESS], "%s", why);
    return why == NULL;
}

int tess_bench_mpiio(int argc, char **argv)
{
    mpiio_opts o;
    int status = mpiio_parse(argc, argv, &o);
    if (status >= 0)
        return status;
    if (getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMI_RANK") || getenv("PMIX_RANK"))
        return bench_fail("bench mpiio launches mpiexec itself: run it without mpirun"), 2;
    if (!o.lib[0] || access(o.lib, R_OK) != 0)
        return bench_fail("bench mpiio: no libtessera_mpiio.so ('%s'; --lib)", o.lib), 1;
    char logpath[1200];
    snprintf(logpath, sizeof logpath, "%s", o.log ? o.log : "");
    if (!o.log)
        snprintf(logpath, sizeof logpath, "%s/tessera-mpiio.log", o.dir);
    FILE *log = fopen(logpath, "w");
    if (!log)
        return bench_fail("bench mpiio: cannot write the log %s", logpath), 1;
    char library[MPI_MAX_LIBRARY_VERSION_STRING] = "";
    int len = 0;
    MPI_Get_library_version(library, &len);
    library[strcspn(library, "\n\r,")] = '\0';
    memset(cells, 0, sizeof cells);
    for (int w = 0; w < NWL; w++)
        for (int d = 0; d < 2; d++)
            for (int way = 0; way < NWAYS; way++)
                snprintf(cells[w][d].check[way], sizeof cells[w][d].check[way], "ok");
    printf("tessera bench mpiio: %lld round(s) of %d programs x %d ways at %lld processes; "
           "launches logged in %s\n",
           (long long)o.rounds, NWL, way_on[WAY_OMPIO] ? 3 : 2, (long long)o.np, logpath);
    fflush(stdout);
    int failures = 0;
    for (int r = 0; r < o.rounds; r++)
        for (int w = 0; w < NWL; w++)
            for (int k = 0; k < NWAYS; k++) {
                int way = (k + r + w) % NWAYS;
                if (!way_on[way])
                    continue;
                if (!workload_available(&o, w, cells[w]))
                    continue;
                failures += launch(&o, log, w, way) != 0;
            }
    fclose(log);
    print_report(&o, library);
    if (failures)
        printf("\n%d launch(es) failed: see %s\n", failures, logpath);
    return failures ? 1 : 0;
}
