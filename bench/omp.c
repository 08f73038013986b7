/*
 * omp.c - `tessera bench omp`: paper 001 3.4's micro-benchmarks of OpenMP I/O, and a BTIO-like
 * OpenMP write, at 1, 2, 4, 8 threads and segment sizes from 64 KiB to 64 MiB, in one run.
 *
 * A segment is what one call writes or reads across all threads (the paper's "segment size"):
 * each of T threads moves segment / T bytes per call, thread t's part of call c at byte
 * (c * T + t) * (segment / T) of one shared file of --volume bytes. Writes:
 *   critical  one shared descriptor, every pwrite inside `#pragma omp critical` (serialized)
 *   ordered   one shared descriptor, pwrites in an `omp for ordered` loop in thread order
 *   separate  one file per thread (no synchronization at all); the merge into the shared
 *             layout, by one thread, is timed on its own (merge column)
 *   write_all omp_file_write_all on one file (tessera_omp.h)
 *   new sep   separate files deleted and made anew before every repetition (untimed), as the
 *             log container is: the files of both get fresh pages, where the other methods
 *             overwrite pages already cached (fresh pages cost the kernel more: 0.6-0.7x the
 *             speed here)
 *   log       omp_file_write_all on a log: container (one data log per worker; it only appends,
 *             so it is made anew before every repetition)
 * Reads: shared (every thread preads the shared file, no lock, as in the paper), separate
 * (each thread its own file), read_all, log read_all. The targets: write_all at least 0.9x
 * separate (without the merge) at every thread count, and read_all likewise against separate
 * reads; the summary prints both ratios and write_all's ratio to the serialized (critical)
 * write, then the log container's ratios to separate files (overwritten, and new). Where the
 * time goes: per thread count, the time of a write_all call of zero bytes (its barriers alone);
 * the detail tables give its share of a write_all call at every size (sync).
 *
 * BTIO-like: an N^3 array of doubles whose y-slabs the threads own (thread t holds rows
 * [t*N/T, (t+1)*N/T) of every z plane: N pieces per thread, strided in the file) is written
 * --steps times (one whole array per step): omp_file_write_list_at_all against every piece
 * pwritten inside `critical`, and against hand-rolled concurrent pwrites (no lock).
 *
 * Timing: one parallel region per repetition, the master's clock from a barrier before the
 * first call to a barrier after the last (the thread pool exists beforehand); an untimed
 * warm-up repetition of every method first (buffers touched, file pages allocated: later
 * repetitions overwrite cached pages), then --reps repetitions with the methods interleaved;
 * medians. Page cache: nothing is synced or dropped. O_DIRECT: the same with every descriptor
 * (and the collective file: O_DIRECT, the posix driver's hint) opened O_DIRECT, where the file
 * system takes it (log: has no direct mode). Every file written is checked byte for byte after
 * the last repetition (a bad one fails the run), every read buffer against what was written.
 */
#include "bench.h"
#include "cmds.h"
#include "tessera_omp.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <omp.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { MAX_LIST = 12, MAX_T = 64, MAX_REPS = 99, ALIGN = 4096 };
enum { W_CRIT, W_ORD, W_SEP, W_ALL, W_NEW, W_LOG, NW };
enum { R_SHARED, R_SEP, R_ALL, R_LOG, NR };
static const char *const wname[NW] = {"critical", "ordered", "separate", "write_all",
                                         "new separate", "log"};
static const char *const rname[NR] = {"shared", "separate", "read_all", "log"};

typedef struct opts {
    int threads[MAX_LIST], nthreads;
    int64_t sizes[MAX_LIST], volume, dvolume, reps, btio_n, steps;
    int nsizes, quick, keep, no_log, no_direct;
    const char *dir;
} opts;

/* One case: T threads, seg bytes per thread per call, calls per repetition. */
typedef struct ctx {
    int T;
    int64_t seg, calls;
    bool direct;
    char *buf[MAX_T], *rbuf[MAX_T], *tmp;
    char shared[4200], sep[MAX_T][4200], logc[4200];
    int shared_fd, sep_fd[MAX_T];
} ctx;

/* ------------------------------------------------------------------ helpers */

/* n bytes aligned to a page (O_DIRECT), every page touched; NULL when out of memory. */
static char *page_alloc(int64_t n)
{
    void *p = NULL;
    if (posix_memalign(&p, ALIGN, (size_t)(n > 0 ? n : 1)))
        return NULL;
    memset(p, 0, (size_t)n);
    return p;
}

static int open_fd(const char *path, bool direct)
{
    return open(path, O_RDWR | O_CREAT | (direct ? O_DIRECT : 0), 0644);
}

static int pio(int fd, char *buf, int64_t len, int64_t off, bool write)
{
    ssize_t n = write ? pwrite(fd, buf, (size_t)len, (off_t)off)
                      : pread(fd, buf, (size_t)len, (off_t)off);
    return n == (ssize_t)len ? 0 : -1;
}

/* The seconds of one parallel region running body(c, t) for every call c of every thread t:
 * from a barrier before the first call to a barrier after the last. */
#define TIMED_REGION(T, sec, err, ...)                                                        \
    do {                                                                                      \
        double t0_ = 0, t1_ = 0;                                                              \
        int e_ = 0;                                                                           \
        _Pragma("omp parallel num_threads(T) reduction(+ : e_)")                              \
        {                                                                                     \
            int t = omp_get_thread_num();                                                     \
            _Pragma("omp barrier") _Pragma("omp master") t0_ = omp_get_wtime();               \
            _Pragma("omp barrier") __VA_ARGS__;                                               \
            _Pragma("omp barrier") _Pragma("omp master") t1_ = omp_get_wtime();               \
            (void)t;                                                                          \
        }                                                                                     \
        (sec) = t1_ - t0_;                                                                    \
        (err) = e_;                                                                           \
    } while (0)

/* ------------------------------------------------------------------ writes */

/* One repetition of write method m (or, m == NW, the merge of the separate files). */
static int write_rep(ctx *x, int m, double *sec)
{
    int T = x->T, err = 0, fd = -1;
    int64_t seg = x->seg, calls = x->calls;
    if (m == W_ALL || m == W_LOG) { /* opened outside the region, used inside (paper 3.2.8) */
        if (m == W_LOG)
            tess_file_delete(x->logc, NULL); /* a fresh container: the logs only grow */
        if (omp_file_open_all(&fd, m == W_LOG ? x->logc : x->shared,
                              O_RDWR | O_CREAT | (x->direct ? O_DIRECT : 0)))
            return bench_fail("omp_file_open_all %s: %s", x->shared, tess_last_error());
    }
    switch (m) {
    case W_CRIT:
        TIMED_REGION(T, *sec, err, for (int64_t c = 0; c < calls; c++) {
            _Pragma("omp critical") e_ += pio(x->shared_fd, x->buf[t], seg, (c * T + t) * seg, 1);
        });
        break;
    case W_ORD:
        TIMED_REGION(T, *sec, err, {
            _Pragma("omp for ordered schedule(static, 1)") for (int64_t i = 0; i < calls * T; i++) {
                _Pragma("omp ordered") e_ += pio(x->shared_fd, x->buf[t], seg, i * seg, 1);
            }
        });
        break;
    case W_NEW:
        for (int t = 0; t < T; t++) { /* fresh files, as the container's are */
            close(x->sep_fd[t]);
            unlink(x->sep[t]);
            if ((x->sep_fd[t] = open_fd(x->sep[t], x->direct)) < 0)
                return bench_fail("bench omp: cannot open %s: %s", x->sep[t], strerror(errno));
        }
        /* fall through */
    case W_SEP:
        TIMED_REGION(T, *sec, err, for (int64_t c = 0; c < calls; c++) {
            e_ += pio(x->sep_fd[t], x->buf[t], seg, c * seg, 1);
        });
        break;
    case W_ALL:
    case W_LOG:
        TIMED_REGION(T, *sec, err, for (int64_t c = 0; c < calls; c++) {
            e_ += omp_file_write_all(x->buf[t], (long)seg, fd, OMP_FILE_UNKNOWN) != 0;
        });
        break;
    default: { /* the merge: one thread, the separate files into the shared layout */
        double t0 = bench_now();
        for (int64_t c = 0; c < calls && !err; c++)
            for (int t = 0; t < T && !err; t++)
                err = pio(x->sep_fd[t], x->tmp, seg, c * seg, 0) ||
                      pio(x->shared_fd, x->tmp, seg, (c * T + t) * seg, 1);
        *sec = bench_now() - t0;
    }
    }
    if (fd >= 0 && omp_file_close_all(fd))
        err++;
    if (err)
        return bench_fail("bench omp: %s at %d threads: %s", m < NW ? wname[m] : "merge", T,
                          m == W_ALL || m == W_LOG ? tess_last_error() : strerror(errno));
    return 0;
}

/* The shared layout in path (through Tessera: a log container too): call c, thread t holds
 * thread t's pattern. 0 or -1. */
static int check_layout(ctx *x, const char *path)
{
    tess_file *f;
    int64_t got, size = 0, bad = 0;
    if (tess_file_open(path, TESS_RDONLY, NULL, &f))
        return -1;
    tess_file_get_size(f, &size);
    for (int64_t c = 0; c < x->calls && !bad; c++)
        for (int t = 0; t < x->T && !bad; t++)
            bad = tess_file_read_at(f, (c * x->T + t) * x->seg, x->tmp, x->seg, TESS_BYTE, &got) ||
                  got != x->seg || memcmp(x->tmp, x->buf[t], (size_t)x->seg) != 0;
    tess_file_close(f);
    return bad || size != x->calls * x->T * x->seg ? -1 : 0;
}

/* ------------------------------------------------------------------ reads */

static int read_rep(ctx *x, int m, double *sec)
{
    int T = x->T, err = 0, fd = -1;
    int64_t seg = x->seg, calls = x->calls;
    for (int t = 0; t < T; t++)
        memset(x->rbuf[t], 0, (size_t)seg);
    if ((m == R_ALL || m == R_LOG) &&
        omp_file_open_all(&fd, m == R_LOG ? x->logc : x->shared,
                          O_RDONLY | (x->direct ? O_DIRECT : 0)))
        return bench_fail("omp_file_open_all: %s", tess_last_error());
    switch (m) {
    case R_SHARED:
        TIMED_REGION(T, *sec, err, for (int64_t c = 0; c < calls; c++) {
            e_ += pio(x->shared_fd, x->rbuf[t], seg, (c * T + t) * seg, 0);
        });
        break;
    case R_SEP:
        TIMED_REGION(T, *sec, err, for (int64_t c = 0; c < calls; c++) {
            e_ += pio(x->sep_fd[t], x->rbuf[t], seg, c * seg, 0);
        });
        break;
    default:
        TIMED_REGION(T, *sec, err, for (int64_t c = 0; c < calls; c++) {
            e_ += omp_file_read_all(x->rbuf[t], (long)seg, fd, OMP_FILE_UNKNOWN) != 0;
        });
    }
    if (fd >= 0 && omp_file_close_all(fd))
        err++;
    for (int t = 0; t < T && !err; t++) /* the last call's part of every thread */
        err = memcmp(x->rbuf[t], x->buf[t], (size_t)seg) != 0;
    if (err)
        return bench_fail("bench omp: %s read at %d threads failed or read wrong bytes: %s",
                          rname[m], T, tess_last_error());
    return 0;
}

/* ------------------------------------------------------------------ one case */

typedef struct result {
    double w[NW + 1], r[NR]; /* seconds per repetition; w[NW]: the merge */
    bool has_log;
} result;

static void ctx_free(ctx *x, bool keep)
{
    for (int t = 0; t < MAX_T; t++) {
        if (x->sep_fd[t] >= 0)
            close(x->sep_fd[t]);
        if (!keep && x->sep[t][0])
            unlink(x->sep[t]);
        free(x->buf[t]);
        free(x->rbuf[t]);
    }
    if (x->shared_fd >= 0)
        close(x->shared_fd);
    if (!keep) {
        unlink(x->shared);
        tess_file_delete(x->logc, NULL);
    }
    free(x->tmp);
}

static int run_case(const opts *o, int T, int64_t segment, bool direct, result *res)
{
    ctx x = {.T = T, .seg = segment / T, .direct = direct, .shared_fd = -1};
    int64_t volume = direct ? o->dvolume : o->volume;
    x.calls = volume / segment > 0 ? volume / segment : 1;
    int rc = 0;
    for (int t = 0; t < MAX_T; t++)
        x.sep_fd[t] = -1;
    snprintf(x.shared, sizeof x.shared, "%s/tess_omp_shared_%ld", o->dir, (long)getpid());
    snprintf(x.logc, sizeof x.logc, "log:%s/tess_omp_log_%ld", o->dir, (long)getpid());
    x.tmp = page_alloc(x.seg);
    rc = x.tmp ? 0 : bench_fail("bench omp: out of memory");
    for (int t = 0; t < T && rc == 0; t++) {
        x.buf[t] = page_alloc(x.seg);
        x.rbuf[t] = page_alloc(x.seg);
        if (!x.buf[t] || !x.rbuf[t])
            rc = bench_fail("bench omp: out of memory for buffers of %lld bytes",
                            (long long)x.seg);
        else
            bench_fill_random(x.buf[t], x.seg, 1000 + (uint64_t)t);
        snprintf(x.sep[t], sizeof x.sep[t], "%s/tess_omp_sep_%ld_%d", o->dir, (long)getpid(), t);
        if (rc == 0 && (x.sep_fd[t] = open_fd(x.sep[t], direct)) < 0)
            rc = bench_fail("bench omp: cannot open %s: %s", x.sep[t], strerror(errno));
    }
    if (rc == 0 && (x.shared_fd = open_fd(x.shared, direct)) < 0)
        rc = bench_fail("bench omp: cannot open %s: %s", x.shared, strerror(errno));
    res->has_log = !direct && !o->no_log;
    int nw = res->has_log ? NW : W_NEW, nr = res->has_log ? NR : R_LOG;
    double w[NW + 1][MAX_REPS], r[NR][MAX_REPS];
    for (int rep = -1; rc == 0 && rep < o->reps; rep++) /* rep -1: the warm-up */
        for (int m = 0; m <= nw && rc == 0; m++) {
            if (m == nw && m != NW)
                m = NW; /* the merge */
            double sec = 0;
            rc = write_rep(&x, m, &sec);
            if (rep >= 0)
                w[m][rep] = sec;
            if (rc == 0 && rep == o->reps - 1 && m != W_SEP && m != W_NEW &&
                m != W_LOG && check_layout(&x, x.shared))
                rc = bench_fail("bench omp: %s wrote a wrong file at %d threads", m < NW
                                ? wname[m] : "merge", T);
            if (rc == 0 && rep == o->reps - 1 && m == W_LOG && check_layout(&x, x.logc))
                rc = bench_fail("bench omp: log wrote a wrong container at %d threads", T);
        }
    for (int rep = -1; rc == 0 && rep < o->reps; rep++)
        for (int m = 0; m < nr && rc == 0; m++) {
            double sec = 0;
            rc = read_rep(&x, m, &sec);
            if (rep >= 0)
                r[m][rep] = sec;
        }
    for (int m = 0; rc == 0 && m <= NW; m++)
        res->w[m] = m < nw || m == NW ? bench_median(w[m], (int)o->reps) : 0;
    for (int m = 0; rc == 0 && m < NR; m++)
        res->r[m] = m < nr ? bench_median(r[m], (int)o->reps) : 0;
    ctx_free(&x, o->keep);
    return rc;
}

/* ------------------------------------------------------------------ synchronization */

/* Microseconds of one omp_file_write_all of zero bytes by T threads (median of --reps runs of
 * SYNC_CALLS calls): what a call costs beyond its data, its barriers. -1: it failed. */
#define SYNC_CALLS 1000
static double sync_cost(const opts *o, int T)
{
    char path[4200];
    double sec[MAX_REPS];
    int fd = -1, err = 0;
    snprintf(path, sizeof path, "%s/tess_omp_sync_%ld", o->dir, (long)getpid());
    if (omp_file_open_all(&fd, path, O_RDWR | O_CREAT))
        return bench_fail("omp_file_open_all %s: %s", path, tess_last_error());
    for (int rep = -1; rep < o->reps && !err; rep++) { /* rep -1: the warm-up */
        double s = 0;
        TIMED_REGION(T, s, err, for (int c = 0; c < SYNC_CALLS; c++) {
            e_ += omp_file_write_all(path, 0, fd, OMP_FILE_UNKNOWN) != 0;
        });
        if (rep >= 0)
            sec[rep] = s;
    }
    err += omp_file_close_all(fd) != 0;
    unlink(path);
    if (err)
        return bench_fail("bench omp: zero-byte write_all at %d threads: %s", T,
                          tess_last_error());
    return bench_median(sec, (int)o->reps) / SYNC_CALLS * 1e6;
}

/* ------------------------------------------------------------------ BTIO-like */

/* N^3 doubles, y-slabs per thread, --steps arrays: write_list_at_all, critical pwrites of the
 * same pieces, hand-rolled concurrent pwrites. Seconds into sec[3]. */
static int btio(const opts *o, int T, double sec[3])
{
    int64_t n = o->btio_n, rows = n / T, row = n * 8, plane = n * row, array = n * plane;
    int64_t piece = rows * row; /* one z plane of a thread's slab */
    char path[4200], *slab[MAX_T] = {0};
    snprintf(path, sizeof path, "%s/tess_omp_btio_%ld", o->dir, (long)getpid());
    int rc = n % T ? bench_fail("--btio-n %lld is not a multiple of %d threads", (long long)n, T)
                   : 0, fd = rc ? -1 : open_fd(path, false), ofd = -1;
    for (int t = 0; t < T && rc == 0; t++)
        if (!(slab[t] = page_alloc(n * piece)))
            rc = bench_fail("bench omp: out of memory for the BTIO slabs");
        else
            bench_fill_random(slab[t], n * piece, 77 + (uint64_t)t);
    double v[3][MAX_REPS];
    for (int rep = -1; rc == 0 && rep < o->reps; rep++)
        for (int m = 0; m < 3 && rc == 0; m++) {
            int err = 0;
            if (m == 0 && omp_file_open_all(&ofd, path, O_RDWR | O_CREAT))
                return bench_fail("omp_file_open_all %s: %s", path, tess_last_error());
            double s = 0;
            TIMED_REGION(T, s, err, {
                struct iovec iov[1024];
                off_t offs[1024];
                for (int64_t st = 0; st < o->steps; st++) {
                    for (int64_t z = 0; z < n; z++) {
                        int64_t off = st * array + z * plane + t * rows * row;
                        if (m == 0) {
                            iov[z] = (struct iovec){slab[t] + z * piece, (size_t)piece};
                            offs[z] = off;
                        } else if (m == 1) {
                            _Pragma("omp critical") e_ += pio(fd, slab[t] + z * piece, piece, off, 1);
                        } else {
                            e_ += pio(fd, slab[t] + z * piece, piece, off, 1);
                        }
                    }
                    if (m == 0)
                        e_ += omp_file_write_list_at_all(iov, offs, (int)n, ofd,
                                                         OMP_FILE_UNKNOWN) != 0;
                }
            });
            if (m == 0 && omp_file_close_all(ofd))
                err++;
            if (err)
                rc = bench_fail("bench omp: BTIO %d failed at %d threads: %s", m, T,
                                tess_last_error());
            if (rep >= 0)
                v[m][rep] = s;
        }
    for (int m = 0; m < 3 && rc == 0; m++)
        sec[m] = bench_median(v[m], (int)o->reps);
    if (fd >= 0)
        close(fd);
    if (!o->keep)
        unlink(path);
    for (int t = 0; t < T; t++)
        free(slab[t]);
    return rc;
}

/* ------------------------------------------------------------------ report */

static double gbs(int64_t bytes, double sec) { return sec > 0 ? (double)bytes / sec * 1e-9 : 0; }

/* One pass (page cache or O_DIRECT): every case, the summary lines per thread count, then the
 * detail table into r->detail. 1: skipped (no O_DIRECT here), 0, or -1. */
static int pass(const opts *o, bool direct, bench_report *rep)
{
    if (direct) { /* does the file system take O_DIRECT? */
        char probe[4200];
        snprintf(probe, sizeof probe, "%s/tess_omp_probe_%ld", o->dir, (long)getpid());
        int fd = open(probe, O_RDWR | O_CREAT | O_DIRECT, 0644);
        if (fd >= 0)
            close(fd);
        unlink(probe);
        if (fd < 0) {
            printf("O_DIRECT: refused by the file system of %s (%s): no uncached figures\n",
                   o->dir, strerror(errno));
            return 1;
        }
    }
    const char *mode = direct ? "O_DIRECT" : "page cache";
    static const char *const heads[] = {"threads", "segment", "critical", "ordered", "separate",
                                        "merge", "write_all", "new sep", "log", "all/sep",
                                        "all/crit", "log/sep", "log/new", "sync", "r shared",
                                        "r separate", "read_all", "r log", "r all/sep",
                                        "r log/sep"};
    static const int widths[] = {7, 8, 9, 8, 9, 7, 10, 8, 7, 8, 9, 8, 8, 5, 9, 11, 9, 7, 10,
                                 10};
    enum { NCOLS = sizeof widths / sizeof widths[0] };
    bench_table tab;
    fprintf(rep->detail, "\n%s: GB/s (median of %lld), volume %s per case; merge: the one-thread "
            "merge of the separate files alone; new sep: separate files made anew before every "
            "repetition, as the log container is; sync: the share of a write_all call its "
            "barriers take (a call of zero bytes)\n", mode, (long long)o->reps,
            direct ? "--direct-volume" : "--volume");
    bench_table_init(&tab, rep->detail, NCOLS, heads, widths);
    bench_table_header(&tab);
    for (int i = 0; i < o->nthreads; i++) {
        int T = o->threads[i];
        double lw = 0, lc = 0, lr = 0, worst_w = 1e9, worst_r = 1e9, lmerge = 0;
        double llw = 0, lln = 0, llr = 0; /* the log container's */
        int64_t at_w = 0, at_r = 0, n = 0;
        double sync_us = sync_cost(o, T);
        if (sync_us < 0)
            return -1;
        for (int k = 0; k < o->nsizes; k++) {
            int64_t S = o->sizes[k];
            if (S % ((int64_t)T * ALIGN)) /* each thread's part a whole number of pages */
                continue;
            result res = {0};
            if (run_case(o, T, S, direct, &res))
                return -1;
            int64_t vol = (direct ? o->dvolume : o->volume) / S * S;
            vol = vol ? vol : S;
            double ws = res.w[W_ALL] > 0 ? res.w[W_SEP] / res.w[W_ALL] : 0;
            double wc = res.w[W_ALL] > 0 ? res.w[W_CRIT] / res.w[W_ALL] : 0;
            double rs = res.r[R_ALL] > 0 ? res.r[R_SEP] / res.r[R_ALL] : 0;
            lw += log(ws), lc += log(wc), lr += log(rs), n++;
            lmerge += log((res.w[W_SEP] + res.w[NW]) / res.w[W_ALL]);
            double ls = res.has_log ? res.w[W_SEP] / res.w[W_LOG] : 0;
            double ln = res.has_log ? res.w[W_NEW] / res.w[W_LOG] : 0;
            double lrs = res.has_log ? res.r[R_SEP] / res.r[R_LOG] : 0;
            if (res.has_log)
                llw += log(ls), lln += log(ln), llr += log(lrs);
            if (ws < worst_w)
                worst_w = ws, at_w = S;
            if (rs < worst_r)
                worst_r = rs, at_r = S;
            char b[32];
            bench_table_cell(&tab, "%d", T);
            bench_table_cell(&tab, "%s", bench_fmt_bytes(S, b, sizeof b));
            bench_table_cell(&tab, "%.2f", gbs(vol, res.w[W_CRIT]));
            bench_table_cell(&tab, "%.2f", gbs(vol, res.w[W_ORD]));
            bench_table_cell(&tab, "%.2f", gbs(vol, res.w[W_SEP]));
            bench_table_cell(&tab, "%.2f", gbs(vol, res.w[NW]));
            bench_table_cell(&tab, "%.2f", gbs(vol, res.w[W_ALL]));
            bench_table_cell(&tab, res.has_log ? "%.2f" : "-", gbs(vol, res.w[W_NEW]));
            bench_table_cell(&tab, res.has_log ? "%.2f" : "-", gbs(vol, res.w[W_LOG]));
            bench_table_cell(&tab, "%.2f", ws);
            bench_table_cell(&tab, "%.2f", wc);
            bench_table_cell(&tab, res.has_log ? "%.2f" : "-", ls);
            bench_table_cell(&tab, res.has_log ? "%.2f" : "-", ln);
            double share = sync_us * 1e-6 * (double)(vol / S) / res.w[W_ALL];
            bench_table_cell(&tab, "%.0f%%", 100 * (share < 1 ? share : 1));
            bench_table_cell(&tab, "%.2f", gbs(vol, res.r[R_SHARED]));
            bench_table_cell(&tab, "%.2f", gbs(vol, res.r[R_SEP]));
            bench_table_cell(&tab, "%.2f", gbs(vol, res.r[R_ALL]));
            bench_table_cell(&tab, res.has_log ? "%.2f" : "-", gbs(vol, res.r[R_LOG]));
            bench_table_cell(&tab, "%.2f", rs);
            bench_table_cell(&tab, res.has_log ? "%.2f" : "-", lrs);
            bench_table_end_row(&tab);
        }
        if (!n)
            continue;
        char a[32], b[32];
        printf("%-10s %d threads: write_all/separate %.2fx (worst %.2fx at %s) %s, "
               "/critical %.2fx, /(separate+merge) %.2fx; read_all/separate %.2fx (worst "
               "%.2fx at %s) %s; a call of 0 bytes %.1f us\n", mode, T, exp(lw / n), worst_w,
               bench_fmt_bytes(at_w, a, sizeof a), worst_w >= 0.9 ? "[>= 0.9 met]"
                                                                : "[>= 0.9 missed]",
               exp(lc / n), exp(lmerge / n), exp(lr / n), worst_r,
               bench_fmt_bytes(at_r, b, sizeof b), worst_r >= 0.9 ? "[met]" : "[missed]",
               sync_us);
        if (!direct && !o->no_log)
            printf("%-10s %d threads: log: write/separate %.2fx, /new separate %.2fx (fresh "
                   "pages, as the container's), read/separate %.2fx\n", mode, T,
                   exp(llw / n), exp(lln / n), exp(llr / n));
        fflush(stdout);
    }
    return 0;
}

/* The work manager's s_min and active threads a file in --dir gets without hints (environment,
 * else the calibrated profile, else the defaults): what omp_file_open_all uses in this run. */
static void print_parameters(const opts *o)
{
    char path[4200], smin[32] = "?", active[32] = "?";
    tess_file *f;
    tess_info *info = NULL;
    int found;
    snprintf(path, sizeof path, "%s/tess_omp_params_%ld", o->dir, (long)getpid());
    if (tess_file_open(path, TESS_RDWR | TESS_CREATE, NULL, &f) == 0) {
        if (tess_file_get_info(f, &info) == 0) {
            tess_info_get(info, "tess_omp_smin", smin, sizeof smin, &found);
            tess_info_get(info, "tess_omp_active", active, sizeof active, &found);
            tess_info_free(info);
        }
        tess_file_close(f);
        unlink(path);
    }
    printf("  work manager: s_min %s bytes, active threads %s ($TESS_OMP_SMIN / "
           "$TESS_OMP_ACTIVE, else the profile of `tessera calibrate`, else 1 MiB / CPUs)\n",
           smin, active);
    /* write_all meets the team at two barriers per call, `ordered` once per pwrite: with as
     * many threads as CPUs, libgomp's spinning wait costs them a time slice whenever the
     * machine has other work */
    const char *wait = getenv("OMP_WAIT_POLICY");
    printf("  OMP_WAIT_POLICY %s%s\n", wait ? wait : "unset (the runtime spins, then sleeps)",
           wait && !strcmp(wait, "passive") ? ""
           : "; on a loaded machine barriers and `ordered` pay for the spinning: try passive");
}

int tess_bench_omp(int argc, char **argv)
{
    opts o = {.dir = bench_default_dir()};
    bench_opt table[] = {
        {.name = "threads", .kind = BENCH_OPT_INTS, .dst = o.threads, .cap = MAX_LIST,
         .n = &o.nthreads, .min = 1, .max = MAX_T, .arg = "LIST", .help = "OpenMP threads",
         .def = "1,2,4,8"},
        {.name = "sizes", .kind = BENCH_OPT_SIZES, .dst = o.sizes, .cap = MAX_LIST,
         .n = &o.nsizes, .min = ALIGN, .max = INT64_C(1) << 30, .arg = "LIST",
         .help = "segment sizes: bytes per call across all threads (multiples of threads x "
                 "4 KiB run)", .def = "64k,256k,1m,4m,16m,64m", .quick = "64k,1m,16m"},
        {.name = "volume", .kind = BENCH_OPT_SIZE, .dst = &o.volume, .min = ALIGN, .arg = "SIZE",
         .help = "bytes of the file per case and repetition (page cache)", .def = "256m",
         .quick = "32m"},
        {.name = "direct-volume", .kind = BENCH_OPT_SIZE, .dst = &o.dvolume, .min = ALIGN,
         .arg = "SIZE", .help = "the same with O_DIRECT", .def = "64m", .quick = "16m"},
        {.name = "btio-n", .kind = BENCH_OPT_SIZE, .dst = &o.btio_n, .min = 8, .max = 1024,
         .arg = "N", .help = "BTIO-like: an N^3 array of doubles", .def = "128", .quick = "64"},
        {.name = "steps", .kind = BENCH_OPT_SIZE, .dst = &o.steps, .min = 1, .max = 1000,
         .arg = "N", .help = "BTIO-like: arrays written per repetition", .def = "4", .quick = "2"},
        {.name = "no-log", .kind = BENCH_OPT_FLAG, .dst = &o.no_log,
         .help = "leave out the log: driver rows"},
        {.name = "no-direct", .kind = BENCH_OPT_FLAG, .dst = &o.no_direct,
         .help = "leave out the O_DIRECT pass"},
        BENCH_OPT_DIR(&o.dir),
        BENCH_OPT_KEEP(&o.keep),
        BENCH_OPT_REPS(&o.reps, MAX_REPS, "3"),
        BENCH_OPT_QUICKLY(&o.quick, "fewer sizes, smaller files"),
    };
    const bench_command cmd = {
        .name = "omp", .opts = table, .nopts = BENCH_NOPTS(table),
        .about = "  paper 001 3.4: OpenMP threads writing and reading one file serialized\n"
                 "  (critical, ordered), separate files (+ merge), omp_file_write_all /\n"
                 "  read_all (tessera_omp.h) and the same on a log: container; a BTIO-like\n"
                 "  write. Page cache, then O_DIRECT where the file system allows.\n"};
    int status = bench_parse(&cmd, argc, argv, 0);
    if (status >= 0)
        return status;
    bench_report r;
    if (bench_report_begin(&r, "omp", NULL))
        return 1;
    printf("tessera bench omp: paper 001 3.4 micro-benchmarks, OpenMP (%s), wall clock\n",
#ifdef __clang__
           "Clang, libomp"
#else
           "GCC, libgomp"
#endif
    );
    bench_print_machine(stdout);
    print_parameters(&o);
    printf("summary: collective over separate files (target >= 0.9x at every thread count, "
           "geometric mean over segment sizes, worst size), over the serialized (critical) "
           "write, over separate files with their merge; reads over separate-file reads; then the "
           "log: container's write over separate files, overwritten and new, and its read\n");
    int rc = pass(&o, false, &r);
    if (rc == 0 && !o.no_direct)
        rc = pass(&o, true, &r) < 0 ? -1 : 0;
    if (rc == 0) {
        static const char *const bh[] = {"threads", "list_at_all", "critical", "pwrite", "all/crit",
                                         "all/pwrite"};
        static const int bw[] = {7, 12, 9, 7, 9, 11};
        bench_table tab;
        int64_t bytes = o.btio_n * o.btio_n * o.btio_n * 8 * o.steps;
        fprintf(r.detail, "\nBTIO-like write, page cache: %lld^3 doubles x %lld steps, y-slabs "
                "per thread (GB/s, median of %lld)\n", (long long)o.btio_n, (long long)o.steps,
                (long long)o.reps);
        bench_table_init(&tab, r.detail, 6, bh, bw);
        bench_table_header(&tab);
        for (int i = 0; i < o.nthreads && rc == 0; i++) {
            double s[3];
            if ((rc = btio(&o, o.threads[i], s)))
                break;
            bench_table_cell(&tab, "%d", o.threads[i]);
            for (int m = 0; m < 3; m++)
                bench_table_cell(&tab, "%.2f", gbs(bytes, s[m]));
            bench_table_cell(&tab, "%.2f", s[1] / s[0]);
            bench_table_cell(&tab, "%.2f", s[2] / s[0]);
            bench_table_end_row(&tab);
            printf("BTIO-like  %d threads: write_list_at_all/critical %.2fx, /hand-rolled "
                   "pwrite %.2fx\n", o.threads[i], s[1] / s[0], s[2] / s[0]);
        }
    }
    bench_report_end(&r);
    return rc ? 1 : 0;
}
