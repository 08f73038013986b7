/*
 * common.c - timing, buffers, files, tables and the MPI environment shared by the
 * `tessera bench` workloads (see bench.h).
 */
#include "bench.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#ifdef TESS_BENCH_MPI
#include <mpi.h>
#endif

/* ------------------------------------------------------------------ errors */

int bench_tess_fail(int rc, const char *context)
{
    fprintf(stderr, "tessera: %s: %s (%s)\n", context, tess_strerror(rc), tess_last_error());
    return rc;
}

/* ------------------------------------------------------------------ timing */

static clockid_t bench_clock = CLOCK_MONOTONIC;

void bench_use_cpu_clock(int on) { bench_clock = on ? CLOCK_PROCESS_CPUTIME_ID : CLOCK_MONOTONIC; }

const char *bench_clock_name(void)
{
    return bench_clock == CLOCK_MONOTONIC ? "wall clock (CLOCK_MONOTONIC)"
                                          : "process CPU time (CLOCK_PROCESS_CPUTIME_ID)";
}

double bench_now(void)
{
    struct timespec ts;
    if (clock_gettime(bench_clock, &ts) != 0)
        return 0.0; /* cannot happen on Linux; a zero clock makes every figure visibly wrong */
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int bench_calibrate(bench_fn fn, void *ctx, const bench_timing *t, int64_t *iters)
{
    int rc = fn(ctx); /* warm-up: first touch, caches, lazy set-up inside the library */
    if (rc != 0)
        return rc;
    int64_t n = 1;
    for (;;) {
        double t0 = bench_now();
        for (int64_t i = 0; i < n; i++) {
            rc = fn(ctx);
            if (rc != 0)
                return rc;
        }
        double dt = bench_now() - t0;
        if (dt >= t->min_rep_sec || n >= (INT64_C(1) << 40))
            break;
        /* aim straight for the target with a 20% margin once the time is measurable */
        if (dt > 1e-4) {
            double want = (double)n * t->min_rep_sec * 1.2 / dt;
            int64_t next = want > 1e12 ? INT64_C(1000000000000) : (int64_t)want;
            n = next > n ? next : n * 2;
            break;
        }
        n *= 2;
    }
    *iters = n;
    return 0;
}

int bench_rep(bench_fn fn, void *ctx, int64_t iters, double *sec_per_call)
{
    double t0 = bench_now();
    for (int64_t i = 0; i < iters; i++) {
        int rc = fn(ctx);
        if (rc != 0)
            return rc;
    }
    *sec_per_call = (bench_now() - t0) / (double)iters;
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double bench_median(double *v, int n)
{
    if (n <= 0)
        return 0.0;
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

int bench_time_pair(bench_fn a, void *ctx_a, bench_fn b, void *ctx_b, const bench_timing *t,
                    double *med_a, double *med_b)
{
    bench_fn fn[2] = {a, b};
    void *ctx[2] = {ctx_a, ctx_b};
    double med[2];
    int failed = bench_time_many(b ? 2 : 1, fn, ctx, t, med);
    *med_a = med[0];
    *med_b = b ? med[1] : 0.0;
    return failed ? -1 : 0;
}

int bench_time_many(int n, const bench_fn *fn, void *const *ctx, const bench_timing *t,
                    double *med)
{
    return bench_time_turns(n, fn, ctx, t, NULL, med);
}

int bench_time_turns(int n, const bench_fn *fn, void *const *ctx, const bench_timing *t,
                     const bench_turns *turns, double *med)
{
    enum { MAX_REPS = 1000 };
    int reps = t->reps < 1 ? 1 : t->reps > MAX_REPS ? MAX_REPS : t->reps, failed = 0;
    int64_t *iters = calloc((size_t)n, sizeof *iters);
    double *sec = malloc(sizeof *sec * (size_t)n * (size_t)reps);
    if (!iters || !sec) {
        for (int i = 0; i < n; i++)
            med[i] = 0.0;
        free(iters);
        free(sec);
        return n;
    }
    for (int i = 0; i < n; i++) /* without turns: every alternative calibrated up front */
        if (fn[i] && (turns || bench_calibrate(fn[i], ctx[i], t, &iters[i]) != 0)) {
            iters[i] = turns ? -1 : 0; /* -1: calibrated in its first turn */
            failed += !turns;
        }
    for (int r = 0; r < reps; r++)
        for (int k = 0; k < n; k++) {
            int i = (k + r) % n, rc = 0;
            if (iters[i] == 0)
                continue;
            if (turns && turns->begin(turns->ctx, i) != 0) {
                iters[i] = 0;
                failed++;
                continue;
            }
            if (turns) /* an untimed call first in every turn; the first one calibrates */
                rc = iters[i] < 0 ? bench_calibrate(fn[i], ctx[i], t, &iters[i]) : fn[i](ctx[i]);
            if (rc == 0)
                rc = bench_rep(fn[i], ctx[i], iters[i], &sec[i * reps + r]);
            if (turns && turns->end(turns->ctx, i, r == reps - 1) != 0)
                rc = -1;
            if (rc != 0) {
                iters[i] = 0;
                failed++;
            }
        }
    for (int i = 0; i < n; i++)
        med[i] = iters[i] > 0 ? bench_median(&sec[i * reps], reps) : 0.0;
    free(iters);
    free(sec);
    return failed;
}

/* ----------------------------------------------------------------- buffers */

void *bench_alloc(int64_t n, int byte)
{
    if (n < 0 || (uint64_t)n > SIZE_MAX - 64)
        return NULL;
    size_t sz = ((size_t)n + 63) & ~(size_t)63; /* aligned_alloc wants a multiple of 64 */
    if (sz == 0)
        sz = 64;
    void *p = aligned_alloc(64, sz);
    if (p)
        memset(p, byte, sz); /* first touch now, never inside a timed region */
    return p;
}

void bench_free(void *p) { free(p); }

uint64_t bench_rand(uint64_t *state)
{
    uint64_t x = *state ? *state : 0x9e3779b97f4a7c15ull;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    return x * 0x2545f4914f6cdd1dull;
}

void bench_fill_random(void *p, int64_t n, uint64_t seed)
{
    unsigned char *b = p;
    uint64_t s = seed * 0x9e3779b97f4a7c15ull + 1;
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t r = bench_rand(&s);
        memcpy(b + i, &r, 8);
    }
    if (i < n) {
        uint64_t r = bench_rand(&s);
        memcpy(b + i, &r, (size_t)(n - i));
    }
}

/* ------------------------------------------------------------------- files */

/* Write size bytes to path in writes of `piece` bytes: from src when it is not NULL, else the
 * byte. An existing file is overwritten in place and cut to size: its blocks and page-cache
 * folios stay, so prefilling it again before each turn (bench_turns) costs only the write
 * and its writeback (half of truncating it first: 0.1 against 0.2 s for 64 MiB here). */
static int prefill(const char *path, int64_t size, const unsigned char *src, int byte,
                   int64_t piece)
{
    int fd = open(path, O_WRONLY | O_CREAT, 0644);
    if (fd < 0)
        return bench_fail("create %s: %s", path, strerror(errno));
    /* The write size decides the page cache's folios: 1 MiB writes give 1 MiB folios (Linux
     * 6.x, ext4), as a file written or read in large pieces has; one page per write gives base
     * pages. A small write into a large folio costs in proportion to the folio (1 KiB into a
     * 1 MiB folio: 4.7-6 us, against 0.7 us into a base page) and, at the same folio size,
     * differently from file to file by the order they were created in. */
    unsigned char *chunk = src ? NULL : bench_alloc(piece, byte);
    int rc = src || chunk ? 0 : bench_fail("out of memory");
    for (int64_t at = 0; rc == 0 && at < size;) {
        int64_t n = size - at < piece ? size - at : piece;
        ssize_t k = pwrite(fd, src ? src + at : chunk, (size_t)n, (off_t)at);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            rc = bench_fail("write %s: %s", path, k < 0 ? strerror(errno) : "short write");
        else
            at += k;
    }
    bench_free(chunk);
    if (rc == 0 && ftruncate(fd, (off_t)size) != 0)
        rc = bench_fail("truncate %s: %s", path, strerror(errno));
    if (close(fd) != 0 && rc == 0)
        rc = bench_fail("close %s: %s", path, strerror(errno));
    return rc;
}

int bench_prefill(const char *path, int64_t size, int byte, int64_t piece)
{
    return prefill(path, size, NULL, byte, piece);
}

int bench_prefill_from(const char *path, const void *src, int64_t size, int64_t piece)
{
    return prefill(path, size, src, 0, piece);
}

int bench_read_full(int fd, void *buf, int64_t len, int64_t off)
{
    int64_t got = 0;
    while (got < len) {
        ssize_t k = pread(fd, (unsigned char *)buf + got, (size_t)(len - got), (off_t)(off + got));
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        got += k;
    }
    return 0;
}

int bench_settle(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY);
    int rc = fd >= 0 && syncfs(fd) == 0 ? 0 : bench_fail("syncfs %s: %s", dir, strerror(errno));
    if (fd >= 0)
        close(fd);
    return rc;
}

/* A write turn's file stays dirty at most this long before it is written back (between turns;
 * the kernel itself writes back what has been dirty for 30 s: vm.dirty_expire_centisecs). */
enum { DIRTY_SEC = 10 };

/* What tells whether anything wrote the file since: a write moves its change and modification
 * times (fine-grained once they were looked at) or its size. */
static void turn_file_stamp(const struct stat *st, int64_t stamp[3])
{
    stamp[0] = (int64_t)st->st_ctim.tv_sec * 1000000000 + st->st_ctim.tv_nsec;
    stamp[1] = (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
    stamp[2] = (int64_t)st->st_size;
}

/* Read the whole file once, in `piece`-byte reads (untimed): its access time moves now, not in
 * the first read turn, and every folio has been read as later read turns find it. */
static int read_through(const bench_turn_file *f)
{
    int fd = open(f->path, O_RDONLY);
    unsigned char *buf = bench_alloc(f->piece, 0);
    int rc = fd >= 0 && buf ? 0 : bench_fail("read %s: %s", f->path, strerror(errno));
    for (int64_t at = 0; rc == 0 && at < f->size; at += f->piece)
        rc = bench_read_full(fd, buf, f->size - at < f->piece ? f->size - at : f->piece, at);
    if (fd >= 0)
        close(fd);
    bench_free(buf);
    return rc;
}

/* Seconds on the monotonic wall clock (the timing's clock may be the CPU clock). */
static double wall_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int settle(bench_turn_file *f)
{
    f->settles++;
    return bench_settle(f->dir);
}

int bench_turn_file_ready(bench_turn_file *f, int write)
{
    struct stat st;
    int64_t now[3];
    if (!write && f->reads_ready && stat(f->path, &st) == 0) {
        turn_file_stamp(&st, now);
        if (memcmp(now, f->stamp, sizeof now) == 0)
            return 0; /* read turns since the image's prefill: nothing to do */
    }
    f->reads_ready = 0;
    f->prefills++;
    int rc = 0;
    if (write && (f->dirty_since == 0 || wall_now() - f->dirty_since > DIRTY_SEC)) {
        /* The first write turn finds a file of any state (or none): filled and written back
         * once, its blocks are allocated. Later, the file is written back long before the
         * kernel's flusher would start on it during a turn. */
        if (f->dirty_since == 0)
            rc = bench_prefill(f->path, f->size, f->fill, f->piece);
        if (rc == 0)
            rc = settle(f);
        f->dirty_since = 0;
    }
    if (rc == 0)
        rc = write ? bench_prefill(f->path, f->size, f->fill, f->piece)
                   : bench_prefill_from(f->path, f->image, f->size, f->piece);
    if (rc == 0 && write && f->dirty_since == 0)
        f->dirty_since = wall_now();
    if (rc != 0 || write)
        return rc;
    if ((rc = read_through(f)) != 0 || (rc = settle(f)) != 0)
        return rc;
    f->dirty_since = 0;
    if (stat(f->path, &st) != 0)
        return bench_fail("stat %s: %s", f->path, strerror(errno));
    turn_file_stamp(&st, f->stamp);
    f->reads_ready = 1;
    return 0;
}

const char *bench_fmt_bytes(int64_t n, char *buf, size_t cap)
{
    if (n < 1024)
        snprintf(buf, cap, "%lld B", (long long)n);
    else if (n < (INT64_C(1) << 20))
        snprintf(buf, cap, "%.1f KiB", (double)n / 1024.0);
    else if (n < (INT64_C(1) << 30))
        snprintf(buf, cap, "%.1f MiB", (double)n / 1048576.0);
    else
        snprintf(buf, cap, "%.2f GiB", (double)n / 1073741824.0);
    return buf;
}

/* ------------------------------------------------------------------ machine */

void bench_print_machine(FILE *out)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    char load[64] = "unknown";
    FILE *f = fopen("/proc/loadavg", "r");
    if (f) {
        if (fgets(load, sizeof load, f)) {
            /* keep the three averages */
            char *p = load;
            for (int sp = 0; *p; p++)
                if (*p == ' ' && ++sp == 3)
                    break;
            *p = '\0';
        }
        fclose(f);
    }
    fprintf(out, "  machine: %ld CPUs online, load average %s (other work on the machine skews"
                 " figures)\n", cpus, load);
}

/* ------------------------------------------------------------------ tables */

void bench_table_init(bench_table *t, FILE *out, int ncols, const char *const *heads,
                      const int *widths)
{
    memset(t, 0, sizeof *t);
    t->out = out;
    t->ncols = ncols > BENCH_TABLE_MAX_COLS ? BENCH_TABLE_MAX_COLS : ncols;
    for (int i = 0; i < t->ncols; i++) {
        t->head[i] = heads[i];
        t->width[i] = widths[i];
    }
}

static void table_put(bench_table *t, int col, const char *text)
{
    int w = t->width[col];
    int room = (int)(sizeof t->line - t->len);
    if (room <= 1)
        return;
    int k = col == 0 ? snprintf(t->line + t->len, (size_t)room, "%-*s", w, text)
                     : snprintf(t->line + t->len, (size_t)room, "  %*s", w, text);
    if (k > 0)
        t->len += (size_t)(k < room ? k : room - 1);
}

void bench_table_header(bench_table *t)
{
    t->len = 0;
    t->line[0] = '\0';
    for (int i = 0; i < t->ncols; i++)
        table_put(t, i, t->head[i]);
    fprintf(t->out, "%s\n", t->line);
    size_t rule = t->len;
    for (size_t i = 0; i < rule; i++)
        fputc('-', t->out);
    fputc('\n', t->out);
    t->len = 0;
    t->line[0] = '\0';
    t->col = 0;
    fflush(t->out);
}

void bench_table_cell(bench_table *t, const char *fmt, ...)
{
    char cell[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cell, sizeof cell, fmt, ap);
    va_end(ap);
    if (t->col >= t->ncols)
        return;
    table_put(t, t->col, cell);
    t->col++;
}

void bench_table_end_row(bench_table *t)
{
    while (t->col < t->ncols)
        bench_table_cell(t, "%s", "");
    /* trim trailing blanks */
    while (t->len > 0 && t->line[t->len - 1] == ' ')
        t->line[--t->len] = '\0';
    fprintf(t->out, "%s\n", t->line);
    fflush(t->out);
    t->len = 0;
    t->line[0] = '\0';
    t->col = 0;
}

/* --------------------------------------------------------------------- MPI */

int bench_mpi_init(bench_mpi *m, int use, int *argc, char ***argv)
{
    memset(m, 0, sizeof *m);
    m->size = 1;
#ifdef TESS_BENCH_MPI
    if (!use) {
        snprintf(m->library, sizeof m->library, "not used (--no-mpi)");
        return 0;
    }
    int inited = 0;
    if (MPI_Initialized(&inited) != MPI_SUCCESS)
        return bench_fail("MPI_Initialized failed");
    if (!inited && MPI_Init(argc, argv) != MPI_SUCCESS)
        return bench_fail("MPI_Init failed");
    if (MPI_Comm_rank(MPI_COMM_WORLD, &m->rank) != MPI_SUCCESS ||
        MPI_Comm_size(MPI_COMM_WORLD, &m->size) != MPI_SUCCESS)
        return bench_fail("MPI_Comm_rank/size failed");
    char ver[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    if (MPI_Get_library_version(ver, &len) != MPI_SUCCESS)
        snprintf(ver, sizeof ver, "unknown MPI library");
    ver[strcspn(ver, "\n\r,")] = '\0';
    for (char *q = ver; *q; q++)
        if (*q == '\t')
            *q = ' ';
    snprintf(m->library, sizeof m->library, "%.150s", ver);
    m->active = 1;
    return 0;
#else
    (void)use;
    (void)argc;
    (void)argv;
    snprintf(m->library, sizeof m->library, "n/a (built without MPI)");
    return 0;
#endif
}

#ifdef TESS_BENCH_MPI
int bench_mpi_fail(int rc, const char *what)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(rc, msg, &len) != MPI_SUCCESS)
        snprintf(msg, sizeof msg, "error %d", rc);
    return bench_fail("%s: %s", what, msg);
}
#endif

void bench_mpi_finalize(bench_mpi *m)
{
#ifdef TESS_BENCH_MPI
    if (m->active) {
        int fin = 0;
        if (MPI_Finalized(&fin) == MPI_SUCCESS && !fin)
            MPI_Finalize();
        m->active = 0;
    }
#else
    (void)m;
#endif
}
