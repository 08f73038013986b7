/*
 * log.c - `tessera bench log`: the log-structured container driver (log:) next to the posix
 * driver on the same access, and what its merged index costs.
 *
 * Throughput: T threads share one handle (as a thread team does) and write one file in the N-1
 * strided pattern of paper 001 (thread i writes blocks i, i + T, ...; --size bytes each, --total
 * bytes in all); then each thread reads the blocks of the next thread, then one thread reads the
 * whole file sequentially in 4 MiB calls (through the log: every run of one log is one call).
 * posix writes one file; log gives each thread its own log. The driver tables are called
 * directly (no method, no counters). A fresh file per repetition, posix and log alternating;
 * medians of --reps. Page-cache figures: nothing is synced or dropped. A last untimed sequential
 * read checks every byte (ok/FAIL).
 *
 * Index rebuild: a container with N entries of 64 bytes from one writer, either strided (no
 * overlap: one extent per entry) or at random offsets over N * 64 bytes (overlapping: the
 * sweep's worst case), then the time a new handle takes to open it and merge every entry
 * (open + get_size), with the merged index's extents and memory.
 */
#include "bench.h"
#include "cmds.h"
#include "driver/driver.h"
#include "driver/log.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern const struct tess_driver tess_posix_driver, tess_log_driver;

enum { MAX_LIST = 8, MAX_THREADS = 64, MAX_REPS = 99 };
#define SEQ_CALL (INT64_C(4) << 20)
#define ENTRY_BYTES 64

typedef struct opts {
    int threads[MAX_LIST], nthreads;
    int64_t sizes[MAX_LIST], entries[MAX_LIST], total, reps;
    int nsizes, nentries, keep, quick;
    const char *dir;
} opts;

/* One case of the throughput part on one driver. */
typedef struct tput {
    const struct tess_driver *drv;
    void *h;
    int threads;
    int64_t size, nblocks;
    char *buf[MAX_THREADS];
    pthread_barrier_t bar;
    int phase; /* 0 write, 1 read another thread's blocks */
    int rc;
} tput;

typedef struct tput_arg {
    tput *c;
    int t;
    double start, end; /* when this thread began and finished its calls */
} tput_arg;

/* The byte pattern of thread t's blocks (every block of a thread holds the same bytes). */
static void fill(char *buf, int64_t n, int t) { bench_fill_random(buf, n, 0x109u + (uint64_t)t); }

static void *tput_thread(void *arg)
{
    tput_arg *a = arg;
    tput *c = a->c;
    int from = c->phase == 0 ? a->t : (a->t + 1) % c->threads;
    pthread_barrier_wait(&c->bar);
    a->start = bench_now();
    for (int64_t j = from; j < c->nblocks; j += c->threads) {
        int64_t n = c->phase == 0 ? c->drv->pwrite(c->h, c->buf[a->t], c->size, j * c->size)
                                  : c->drv->pread(c->h, c->buf[a->t], c->size, j * c->size);
        if (n != c->size)
            c->rc = -1;
    }
    a->end = bench_now();
    return NULL;
}

/* Run one phase on every thread, started together; from the first start to the last end. */
static double tput_phase(tput *c, int phase)
{
    pthread_t tid[MAX_THREADS];
    tput_arg a[MAX_THREADS];
    double start = 0, end = 0;
    c->phase = phase;
    for (int t = 0; t < c->threads; t++) {
        a[t] = (tput_arg){.c = c, .t = t};
        pthread_create(&tid[t], NULL, tput_thread, &a[t]);
    }
    for (int t = 0; t < c->threads; t++) {
        pthread_join(tid[t], NULL);
        start = t == 0 || a[t].start < start ? a[t].start : start;
        end = a[t].end > end ? a[t].end : end;
    }
    return end - start;
}

/* Read the whole file in SEQ_CALL calls; with check, compare each block with its thread's
 * pattern. The seconds, or -1 when something read differs. */
static double seq_read(tput *c, char *big, char *want, bool check)
{
    int64_t total = c->nblocks * c->size;
    double t0 = bench_now();
    for (int64_t off = 0; off < total; off += SEQ_CALL) {
        int64_t n = total - off < SEQ_CALL ? total - off : SEQ_CALL;
        if (c->drv->pread(c->h, big, n, off) != n)
            return -1;
        for (int64_t at = off, k; check && at < off + n; at += k) { /* block by block */
            int64_t j = at / c->size, in = at - j * c->size;
            k = tessi_min64(c->size - in, off + n - at);
            fill(want, c->size, (int)(j % c->threads));
            if (memcmp(big + (at - off), want + in, (size_t)k) != 0)
                return -1;
        }
    }
    return bench_now() - t0;
}

/* One repetition of case c on its driver at path: write, read, sequential read (secs[0..2]). */
static int tput_rep(tput *c, const char *path, char *big, char *want, bool check, double *secs,
                    bool *ok)
{
    int rc = c->drv->open(path, TESS_RDWR | TESS_CREATE | TESS_EXCL, NULL, &c->h);
    if (rc)
        return bench_fail("%s: cannot create %s: %s", c->drv->name, path, strerror(-rc));
    c->rc = 0;
    secs[0] = tput_phase(c, 0);
    secs[1] = tput_phase(c, 1);
    secs[2] = seq_read(c, big, want, false);
    if (check)
        *ok = c->rc == 0 && secs[2] >= 0 && seq_read(c, big, want, true) >= 0;
    c->drv->close(c->h);
    c->drv->remove(path, NULL);
    return c->rc == 0 && secs[2] >= 0 ? 0 : bench_fail("%s: a call failed", c->drv->name);
}

static int throughput(const opts *o, bench_table *tab)
{
    const struct tess_driver *drv[2] = {&tess_posix_driver, &tess_log_driver};
    char path[2][512], *big = bench_alloc(SEQ_CALL, 0), *want = bench_alloc(SEQ_CALL, 0);
    for (int d = 0; d < 2; d++)
        snprintf(path[d], sizeof path[d], "%s/tess_bench_log_%ld.%s", o->dir, (long)getpid(),
                 drv[d]->name);
    int rc = 0;
    for (int ti = 0; rc == 0 && ti < o->nthreads; ti++)
        for (int si = 0; rc == 0 && si < o->nsizes; si++) {
            tput c[2];
            double v[2][3][MAX_REPS], med[2][3];
            bool ok[2] = {false, false};
            for (int d = 0; d < 2; d++) {
                c[d] = (tput){.drv = drv[d], .threads = o->threads[ti], .size = o->sizes[si],
                              .nblocks = o->total / o->sizes[si]};
                pthread_barrier_init(&c[d].bar, NULL, (unsigned)o->threads[ti]);
                for (int t = 0; t < c[d].threads; t++) /* warmed: every page touched */
                    fill(c[d].buf[t] = bench_alloc(c[d].size, 0), c[d].size, t);
            }
            for (int rep = 0; rc == 0 && rep < o->reps; rep++)
                for (int d = 0; rc == 0 && d < 2; d++) {
                    double secs[3] = {0, 0, 0};
                    rc = tput_rep(&c[d], path[d], big, want, rep == o->reps - 1, secs, &ok[d]);
                    for (int p = 0; p < 3; p++)
                        v[d][p][rep] = secs[p];
                }
            double bytes = (double)(c[0].nblocks * c[0].size);
            for (int d = 0; rc == 0 && d < 2; d++)
                for (int p = 0; p < 3; p++)
                    med[d][p] = bytes / bench_median(v[d][p], (int)o->reps) / 1e9;
            char sz[32];
            bench_fmt_bytes(o->sizes[si], sz, sizeof sz);
            if (rc == 0)
                printf("%d thread%s x %-9s write %5.2f vs %5.2f GB/s (%.2fx)   read %5.2f vs "
                       "%5.2f (%.2fx)   whole file %5.2f vs %5.2f (%.2fx)%s\n",
                       o->threads[ti], o->threads[ti] > 1 ? "s" : " ", sz, med[1][0], med[0][0],
                       med[1][0] / med[0][0], med[1][1], med[0][1], med[1][1] / med[0][1],
                       med[1][2], med[0][2], med[1][2] / med[0][2],
                       ok[0] && ok[1] ? "" : "   CHECK FAILED");
            for (int d = 0; rc == 0 && d < 2; d++) {
                bench_table_cell(tab, "%d", o->threads[ti]);
                bench_table_cell(tab, "%s", sz);
                bench_table_cell(tab, "%s", drv[d]->name);
                for (int p = 0; p < 3; p++)
                    bench_table_cell(tab, "%.2f", med[d][p]);
                bench_table_cell(tab, "%s", ok[d] ? "ok" : "FAIL");
                bench_table_end_row(tab);
            }
            for (int d = 0; d < 2; d++) {
                pthread_barrier_destroy(&c[d].bar);
                for (int t = 0; t < c[d].threads; t++)
                    bench_free(c[d].buf[t]);
            }
        }
    bench_free(big);
    bench_free(want);
    return rc;
}

/* A container of n ENTRY_BYTES entries by one writer, strided or at random offsets. */
static int make_container(const char *path, int64_t n, bool random)
{
    void *h;
    char data[ENTRY_BYTES];
    uint64_t rng = 0x10cu + (uint64_t)n;
    memset(data, 'x', sizeof data);
    int rc = tess_log_driver.open(path, TESS_RDWR | TESS_CREATE | TESS_EXCL, NULL, &h);
    for (int64_t i = 0; rc == 0 && i < n; i++) {
        int64_t off = random ? (int64_t)(bench_rand(&rng) % (uint64_t)(n * ENTRY_BYTES))
                             : i * 2 * ENTRY_BYTES;
        if (tess_log_driver.pwrite(h, data, ENTRY_BYTES, off) != ENTRY_BYTES)
            rc = -1;
    }
    if (rc == 0)
        rc = tess_log_driver.close(h);
    return rc ? bench_fail("log: cannot make a container of %lld entries", (long long)n) : 0;
}

static int rebuild(const opts *o, bench_table *tab)
{
    char path[512];
    snprintf(path, sizeof path, "%s/tess_bench_logidx_%ld", o->dir, (long)getpid());
    for (int ei = 0; ei < o->nentries; ei++)
        for (int random = 0; random < 2; random++) {
            int64_t n = o->entries[ei], extents = 0;
            double v[MAX_REPS];
            if (make_container(path, n, random))
                return -1;
            for (int rep = 0; rep < o->reps; rep++) {
                void *h;
                int64_t size;
                const tessi_log_map *m;
                tessi_log_writer_info *w;
                int32_t nw;
                double t0 = bench_now();
                int rc = tess_log_driver.open(path, TESS_RDONLY, NULL, &h);
                if (rc == 0 && (rc = tess_log_driver.get_size(h, &size)) == 0)
                    v[rep] = bench_now() - t0;
                if (rc == 0 && (rc = tessi_log_snapshot(h, &m, &w, &nw)) == 0) {
                    extents = m->n;
                    free(w);
                }
                tess_log_driver.close(h);
                if (rc)
                    return bench_fail("log: cannot read %s: %s", path, strerror(-rc));
            }
            double sec = bench_median(v, (int)o->reps);
            bench_table_cell(tab, "%lld", (long long)n);
            bench_table_cell(tab, "%s", random ? "random" : "strided");
            bench_table_cell(tab, "%lld", (long long)extents);
            bench_table_cell(tab, "%.1f", (double)extents * sizeof(tessi_log_extent) / 1048576.0);
            bench_table_cell(tab, "%.2f", sec * 1e3);
            bench_table_cell(tab, "%.0f", sec * 1e9 / (double)n);
            bench_table_end_row(tab);
            tess_log_driver.remove(path, NULL);
        }
    return 0;
}

int tess_bench_log(int argc, char **argv)
{
    opts o = {0};
    bench_opt table[] = {
        {.name = "threads", .kind = BENCH_OPT_INTS, .dst = o.threads, .cap = MAX_LIST,
         .n = &o.nthreads, .min = 1, .max = MAX_THREADS, .arg = "LIST",
         .help = "threads sharing the handle", .def = "1,2"},
        {.name = "sizes", .kind = BENCH_OPT_SIZES, .dst = o.sizes, .cap = MAX_LIST, .n = &o.nsizes,
         .min = 1, .max = SEQ_CALL, .arg = "LIST", .help = "bytes per call",
         .def = "4k,64k,1m", .quick = "64k,1m"},
        {.name = "total", .kind = BENCH_OPT_SIZE, .dst = &o.total, .min = 1, .arg = "SIZE",
         .help = "bytes of the file", .def = "256m", .quick = "64m"},
        {.name = "entries", .kind = BENCH_OPT_SIZES, .dst = o.entries, .cap = MAX_LIST,
         .n = &o.nentries, .min = 1, .max = INT64_C(1) << 28, .arg = "LIST",
         .help = "entries of the index rebuild", .def = "10k,100k,1m", .quick = "10k,100k"},
        BENCH_OPT_DIR(&o.dir),
        BENCH_OPT_REPS(&o.reps, MAX_REPS, "3"),
        BENCH_OPT_QUICKLY(&o.quick, "smaller sizes"),
    };
    const bench_command cmd = {
        .name = "log", .opts = table, .nopts = BENCH_NOPTS(table),
        .about = "  the log container driver (log:) next to posix: threads sharing one handle\n"
                 "  writing and reading one file (N-1 strided), and the index rebuild of a\n"
                 "  container of N entries. Page-cache figures.\n"};
    int status = bench_parse(&cmd, argc, argv, 0);
    if (status >= 0)
        return status;
    if (!o.dir)
        o.dir = bench_default_dir();
    for (int i = 0; i < o.nsizes; i++)
        if (o.sizes[i] > o.total)
            return bench_fail("--sizes: %lld is more than --total", (long long)o.sizes[i]), 2;
    bench_report r;
    if (bench_report_begin(&r, "log", NULL))
        return 1;
    printf("tessera bench log: log container vs posix, page cache (nothing synced), %s\n",
           bench_clock_name());
    bench_print_machine(stdout);
    printf("summary: log vs posix GB/s (log/posix), threads sharing one handle, N-1 strided\n");
    bench_table tab, idx;
    static const char *const heads[] = {"threads", "size", "driver", "write GB/s", "read GB/s",
                                        "whole GB/s", "check"};
    static const int widths[] = {7, 9, 7, 11, 10, 11, 6};
    static const char *const iheads[] = {"entries", "offsets", "extents", "map MiB",
                                         "open+merge ms", "ns/entry"};
    static const int iwidths[] = {9, 8, 9, 8, 14, 9};
    fprintf(r.detail, "Throughput (median of %lld, %s per case):\n", (long long)o.reps,
            "fresh file each repetition");
    bench_table_init(&tab, r.detail, 7, heads, widths);
    bench_table_header(&tab);
    int rc = throughput(&o, &tab);
    fprintf(r.detail, "\nIndex rebuild: a new handle opens a container of N entries (writes of %d "
            "bytes) and merges them (median of %lld):\n", ENTRY_BYTES, (long long)o.reps);
    bench_table_init(&idx, r.detail, 6, iheads, iwidths);
    bench_table_header(&idx);
    if (rc == 0)
        rc = rebuild(&o, &idx);
    bench_report_end(&r);
    return rc ? 1 : 0;
}
