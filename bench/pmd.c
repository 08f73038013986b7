/*
 * pmd.c - `tessera bench pmd`: performance-model-directed data sieving (paper 003) next to
 * naive I/O, classic data sieving, list I/O and `auto`, on paper 003's three access scenarios
 *   1 mixed:  region and hole sizes both vary widely (16 B .. 16 KiB, 16 B .. 256 KiB),
 *   2 sparse: small regions, large holes (512 B .. 2 KiB, 32 KiB .. 256 KiB),
 *   3 dense:  regions with small holes (64 B .. 1 KiB, 8 B .. 64 B),
 * (sizes log-uniform, octave by octave, from a fixed seed) with 1, 2, 4, 8 and 16 processes,
 * and a sweep over the hole size at a fixed region size (one process). With MPI, ROMIO's
 * independent MPI_File_write_at / MPI_File_read_at with data sieving enabled and disabled
 * (hints romio_ds_write, romio_ds_read) run the same pattern.
 *
 * Processes are forked children, each with its own file handle on one shared file, writing
 * and then reading its own interleaved part of it: the file is a sequence of rounds, round c
 * holding chunk c of every process in rank order, a chunk being --chunk consecutive regions of
 * the process's pattern with their holes. Every process has the same pattern (so the work is
 * balanced); between a process's chunks lie the other processes' chunks, which classic sieving
 * reads (and read-modify-writes) and PMD does not. One access is one call moving all of the
 * process's regions from a contiguous buffer through an hindexed file view.
 *
 * Timing: each child makes one untimed call, then K calls per repetition (K from the untimed
 * call's time, so a repetition lasts about --min-ms), all children started together; a
 * repetition's figure is the slowest child's mean time per call (how long the parallel access
 * takes). The median over --reps repetitions is printed in milliseconds. Page-cache figures:
 * the file is not synced or dropped. Memory per method: the largest staging buffer one call
 * held (tess_stats.peak_buffer_bytes; for ROMIO, ROMIO's rule: min(buffer hint, extent of the
 * access) when it sieves, else 0).
 *
 * Checks: after the writes the parent compares the whole file with the expected image (holes
 * keep the fill byte), and each child compares what it read with what it wrote.
 *
 * MPI: the ROMIO columns run in children that each call MPI_Init as MPI singletons (I/O on
 * MPI_COMM_SELF), with OMPI_MCA_io=romio321 unless OMPI_MCA_io is set (Open MPI's ROMIO; MPICH
 * has no other). Run the benchmark without mpirun: under a launcher, rank 0 runs it without the
 * ROMIO columns (its children cannot become singletons there) and the other ranks exit.
 */
#include "bench.h"

#include "../tools/cmds.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#ifdef TESS_BENCH_MPI
#include <mpi.h>
#endif

#define FILL_BYTE 0x5A
enum { MAX_PROCS = 64, MAX_SWEEP = 24, MAX_REPS = 101, NIMPL = 7 };

/* The implementations compared, in column order: Tessera methods, then ROMIO. */
typedef struct impl {
    const char *name;   /* column name */
    const char *method; /* tess_method, or NULL for ROMIO */
    int romio_ds;       /* ROMIO: 1 data sieving enabled, 0 disabled */
} impl;

static const impl impls[NIMPL] = {
    {"naive", "naive", 0}, {"sieve", "sieve", 0}, {"pmd", "pmd", 0}, {"list", "list", 0},
    {"auto", "auto", 0},   {"romio-ds", NULL, 1}, {"romio-nods", NULL, 0},
};
enum { I_NAIVE, I_SIEVE, I_PMD, I_LIST, I_AUTO, I_ROMIO_DS, I_ROMIO_NODS };

typedef struct opts {
    int procs[8], nprocs;
    int scen[3], nscen;
    int64_t regions[4];   /* regions per process, by scenario (0: the default) */
    int64_t chunk;        /* regions per interleaved chunk */
    int64_t sweep_region, sweep_holes[MAX_SWEEP], sweep_count;
    int nsweep;
    int impl_on[NIMPL];
    int reps;
    double min_rep_sec;
    char dir[1024];
    const char *profile;  /* tess_profile hint, or NULL */
    int use_mpi, quick, keep, do_sweep, cpu_time;
} opts;

/* ------------------------------------------------------------------ patterns */

/* One process's regions in its own coordinates (from 0), increasing, holes between. */
typedef struct pattern {
    int64_t n, *off, *len;
    int64_t data, end; /* data bytes; end of the last region */
} pattern;

static void pattern_free(pattern *p)
{
    free(p->off);
    free(p->len);
    memset(p, 0, sizeof *p);
}

/* A size in [lo, hi) drawn octave by octave: an octave [2^e, 2^(e+1)) uniformly, then a size
 * in it uniformly (log-uniform to within the octave). lo and hi are powers of two. */
static int64_t draw(uint64_t *rng, int64_t lo, int64_t hi)
{
    int elo = 0, ehi = 0;
    while ((INT64_C(1) << elo) < lo)
        elo++;
    while ((INT64_C(1) << ehi) < hi)
        ehi++;
    int e = elo + (int)(bench_rand(rng) % (uint64_t)(ehi - elo));
    int64_t base = INT64_C(1) << e;
    return base + (int64_t)(bench_rand(rng) % (uint64_t)base);
}

/* Scenario s (1 mixed, 2 sparse, 3 dense) with n regions; s == 0: the sweep's fixed sizes. */
static int pattern_make(pattern *p, int s, int64_t n, int64_t region, int64_t hole)
{
    static const int64_t lim[4][4] = {{0, 0, 0, 0},
                                      {16, 16384, 16, 262144},
                                      {512, 2048, 32768, 262144},
                                      {64, 1024, 8, 64}};
    uint64_t rng = 0x5eed0000u + (uint64_t)s;
    memset(p, 0, sizeof *p);
    p->n = n;
    p->off = malloc(sizeof *p->off * (size_t)n);
    p->len = malloc(sizeof *p->len * (size_t)n);
    if (!p->off || !p->len)
        return bench_fail("bench pmd: out of memory for %lld regions", (long long)n);
    int64_t at = 0;
    for (int64_t i = 0; i < n; i++) {
        if (i > 0)
            at += s ? draw(&rng, lim[s][2], lim[s][3]) : hole;
        p->off[i] = at;
        p->len[i] = s ? draw(&rng, lim[s][0], lim[s][1]) : region;
        at += p->len[i];
        p->data += p->len[i];
    }
    p->end = at;
    return 0;
}

/* File offset of region i of process k of P, chunks of C regions interleaved (see the top):
 * chunk c of every process starts at P * S_c in the file (S_c: chunk c's start in own
 * coordinates), process k's at P * S_c + k * E_c (E_c: the chunk's own extent). */
static int64_t file_off(const pattern *p, int64_t C, int P, int k, int64_t i)
{
    int64_t c = i / C, s = p->off[c * C];
    int64_t e = (c + 1) * C < p->n ? p->off[(c + 1) * C] - s : p->end - s;
    return (int64_t)P * s + (int64_t)k * e + (p->off[i] - s);
}

/* Data byte j of process k. */
static unsigned char value(int k, int64_t j)
{
    return (unsigned char)(j * 131 + (j >> 8) * 7 + k * 29 + 1);
}

/* ------------------------------------------------------------------ one job */

/* What a child reports to the parent (one write, atomic on a pipe). */
enum { REC_READY = 1, REC_REP, REC_FAIL };
typedef struct rec {
    int child, kind, ok;
    double sec;               /* REC_REP: mean seconds per call */
    int64_t peak;             /* REC_REP, Tessera: largest staging buffer of a call */
    int last_method;          /* REC_REP, Tessera: the method that ran the last call */
} rec;

/* One run: an implementation, a pattern and P processes. */
typedef struct job {
    const opts *o;
    const impl *im;
    const pattern *p;
    int P;
    int64_t chunk;
    const char *path;
} job;

typedef struct result {
    int ran, ok;
    double sec[2];            /* median seconds per call: [0] write, [1] read */
    int64_t peak[2];
    int last_method[2];
} result;

/* The child's side of an implementation. */
typedef struct child {
    const job *j;
    int k;
    int64_t data;
    unsigned char *wbuf, *rbuf;
    tess_file *f;
    tess_type *ft;
#ifdef TESS_BENCH_MPI
    MPI_File fh;
    MPI_Datatype mft;
    int mpi_up;
#endif
} child;

static int send_rec(int fd, const rec *r)
{
    return write(fd, r, sizeof *r) == (ssize_t)sizeof *r ? 0 : -1;
}

/* Wait for the parent's go (one byte); -1 when the parent gave up (closed the gate). */
static int wait_gate(int fd)
{
    char c;
    ssize_t n;
    while ((n = read(fd, &c, 1)) < 0 && errno == EINTR)
        ;
    return n == 1 ? 0 : -1;
}

static int tess_open_child(child *c)
{
    const job *j = c->j;
    tess_info *info = NULL;
    int64_t *lens = malloc(sizeof *lens * (size_t)j->p->n);
    int64_t *offs = malloc(sizeof *offs * (size_t)j->p->n);
    int rc = lens && offs ? tess_info_create(&info) : TESS_ERR_NOMEM;
    if (rc == 0)
        rc = tess_info_set(info, "tess_method", j->im->method);
    if (rc == 0 && j->o->profile)
        rc = tess_info_set(info, "tess_profile", j->o->profile);
    if (rc == 0)
        rc = tess_file_open(j->path, TESS_RDWR, info, &c->f);
    for (int64_t i = 0; rc == 0 && i < j->p->n; i++) {
        lens[i] = j->p->len[i];
        offs[i] = file_off(j->p, j->chunk, j->P, c->k, i);
    }
    if (rc == 0)
        rc = tess_type_hindexed(j->p->n, lens, offs, TESS_BYTE, &c->ft);
    if (rc == 0)
        rc = tess_file_set_view(c->f, 0, TESS_BYTE, c->ft);
    if (rc)
        bench_tess_fail(rc, "bench pmd: open and view");
    tess_info_free(info);
    free(lens);
    free(offs);
    return rc ? -1 : 0;
}

static int tess_io_child(child *c, int write)
{
    int64_t n = 0;
    int rc = write ? tess_file_write_at(c->f, 0, c->wbuf, c->data, TESS_BYTE, &n)
                   : tess_file_read_at(c->f, 0, c->rbuf, c->data, TESS_BYTE, &n);
    if (rc)
        return bench_tess_fail(rc, write ? "tess_file_write_at" : "tess_file_read_at");
    return n == c->data ? 0 : bench_fail("bench pmd: moved %lld of %lld bytes", (long long)n,
                                         (long long)c->data);
}

#ifdef TESS_BENCH_MPI
static int mpi_open_child(child *c)
{
    const job *j = c->j;
    int n = (int)j->p->n;
    int *lens = malloc(sizeof *lens * (size_t)n);
    MPI_Aint *offs = malloc(sizeof *offs * (size_t)n);
    MPI_Info info = MPI_INFO_NULL;
    if (!lens || !offs) {
        free(lens);
        free(offs);
        return bench_fail("bench pmd: out of memory");
    }
    for (int i = 0; i < n; i++) {
        lens[i] = (int)j->p->len[i];
        offs[i] = (MPI_Aint)file_off(j->p, j->chunk, j->P, c->k, i);
    }
    const char *ds = j->im->romio_ds ? "enable" : "disable";
    int rc = MPI_Init(NULL, NULL);
    c->mpi_up = rc == MPI_SUCCESS;
    if (rc == MPI_SUCCESS)
        rc = MPI_Type_create_hindexed(n, lens, offs, MPI_BYTE, &c->mft);
    if (rc == MPI_SUCCESS)
        rc = MPI_Type_commit(&c->mft);
    if (rc == MPI_SUCCESS)
        rc = MPI_Info_create(&info);
    if (rc == MPI_SUCCESS)
        rc = MPI_Info_set(info, "romio_ds_write", ds);
    if (rc == MPI_SUCCESS)
        rc = MPI_Info_set(info, "romio_ds_read", ds);
    if (rc == MPI_SUCCESS)
        rc = MPI_File_open(MPI_COMM_SELF, j->path, MPI_MODE_RDWR, info, &c->fh);
    if (rc == MPI_SUCCESS)
        rc = MPI_File_set_view(c->fh, 0, MPI_BYTE, c->mft, "native", info);
    if (info != MPI_INFO_NULL)
        MPI_Info_free(&info);
    free(lens);
    free(offs);
    return rc == MPI_SUCCESS ? 0 : bench_fail("bench pmd: MPI set-up failed (error %d)", rc);
}

static int mpi_io_child(child *c, int write)
{
    MPI_Status st;
    int n = 0;
    int rc = write ? MPI_File_write_at(c->fh, 0, c->wbuf, (int)c->data, MPI_BYTE, &st)
                   : MPI_File_read_at(c->fh, 0, c->rbuf, (int)c->data, MPI_BYTE, &st);
    if (rc != MPI_SUCCESS || MPI_Get_count(&st, MPI_BYTE, &n) != MPI_SUCCESS || n != c->data)
        return bench_fail("bench pmd: MPI_File_%s_at failed (error %d, %d bytes)",
                          write ? "write" : "read", rc, n);
    return 0;
}
#endif

static int child_io(child *c, int write)
{
#ifdef TESS_BENCH_MPI
    if (!c->j->im->method)
        return mpi_io_child(c, write);
#endif
    return tess_io_child(c, write);
}

/* Compare the child's regions in the file (read with pread) with its data. */
static int verify_file(child *c)
{
    int fd = open(c->j->path, O_RDONLY);
    if (fd < 0)
        return 0;
    int ok = 1;
    const pattern *p = c->j->p;
    unsigned char *b = c->rbuf;
    for (int64_t i = 0, j = 0; ok && i < p->n; j += p->len[i], i++) {
        int64_t fo = file_off(p, c->j->chunk, c->j->P, c->k, i);
        ok = pread(fd, b, (size_t)p->len[i], (off_t)fo) == (ssize_t)p->len[i] &&
             memcmp(b, c->wbuf + j, (size_t)p->len[i]) == 0;
    }
    close(fd);
    return ok;
}

/* One phase, each step when the parent opens the gate: warm up and say ready, then run the
 * repetitions. */
static int child_phase(child *c, int write, int gate, int res, int ok)
{
    rec r = {.child = c->k, .kind = REC_READY, .ok = ok};
    if (wait_gate(gate))
        return -1;
    double t0 = bench_now();
    if (child_io(c, write))
        return -1;
    double one = bench_now() - t0;
    int64_t k = one > 0 ? (int64_t)(c->j->o->min_rep_sec / one) + 1 : 1;
    k = k < 1 ? 1 : k > 100000 ? 100000 : k;
    if (send_rec(res, &r))
        return -1;
    for (int rep = 0; rep < c->j->o->reps; rep++) {
        if (wait_gate(gate))
            return -1;
        if (c->f)
            tess_file_reset_stats(c->f);
        t0 = bench_now();
        for (int64_t i = 0; i < k; i++)
            if (child_io(c, write))
                return -1;
        r = (rec){.child = c->k, .kind = REC_REP, .ok = ok,
                  .sec = (bench_now() - t0) / (double)k};
        tess_stats s;
        if (c->f && tess_file_stats(c->f, &s) == 0) {
            r.peak = s.peak_buffer_bytes;
            r.last_method = (int)s.last_method;
        }
        if (send_rec(res, &r))
            return -1;
    }
    return 0;
}

/* A child: set up, write phase, check its part of the file, read phase, check what it read. */
static int child_main(const job *j, int k, int gate, int res)
{
    child c = {.j = j, .k = k, .data = j->p->data};
    int rc = -1;
    c.wbuf = bench_alloc(c.data, 0);
    c.rbuf = bench_alloc(c.data, 0);
    if (!c.wbuf || !c.rbuf)
        goto out;
    for (int64_t i = 0; i < c.data; i++)
        c.wbuf[i] = value(k, i);
#ifdef TESS_BENCH_MPI
    if (!j->im->method && mpi_open_child(&c))
        goto out;
#endif
    if (j->im->method && tess_open_child(&c))
        goto out;
    if (child_phase(&c, 1, gate, res, 1) || wait_gate(gate))
        goto out;
    int ok = verify_file(&c); /* every process has finished writing: the gate opened */
    memset(c.rbuf, 0, (size_t)c.data);
    rec r = {.child = k, .kind = REC_READY, .ok = ok};
    if (send_rec(res, &r) || child_phase(&c, 0, gate, res, ok) || wait_gate(gate))
        goto out;
    r.ok = ok && memcmp(c.rbuf, c.wbuf, (size_t)c.data) == 0;
    rc = send_rec(res, &r);
out:
    if (rc) {
        rec r = {.child = k, .kind = REC_FAIL};
        send_rec(res, &r);
    }
    int crc = c.f ? tess_file_close(c.f) : 0;
    if (crc) {
        bench_tess_fail(crc, "tess_file_close");
        rc = -1;
    }
    tess_type_free(c.ft);
#ifdef TESS_BENCH_MPI
    if (c.mpi_up) {
        if (c.fh != MPI_FILE_NULL && !j->im->method)
            MPI_File_close(&c.fh);
        MPI_Finalize();
    }
#endif
    bench_free(c.wbuf);
    bench_free(c.rbuf);
    return rc ? 1 : 0;
}

/* Read one record; -1 at end (every child gone) or on a failure record. */
static int get_rec(int fd, rec *r)
{
    ssize_t n;
    while ((n = read(fd, r, sizeof *r)) < 0 && errno == EINTR)
        ;
    return n == (ssize_t)sizeof *r && r->kind != REC_FAIL ? 0 : -1;
}

/* Let every child take its next step. */
static int open_gates(const int *gates, int P)
{
    for (int i = 0; i < P; i++)
        if (write(gates[i], "g", 1) != 1)
            return -1;
    return 0;
}

/* Create the shared file filled with FILL_BYTE over the P processes' extent. */
static int prefill(const char *path, int64_t size)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        return bench_fail("bench pmd: create %s: %s", path, strerror(errno));
    static unsigned char chunk[1 << 20];
    memset(chunk, FILL_BYTE, sizeof chunk);
    for (int64_t at = 0; at < size;) {
        int64_t n = size - at < (int64_t)sizeof chunk ? size - at : (int64_t)sizeof chunk;
        ssize_t k = pwrite(fd, chunk, (size_t)n, (off_t)at);
        if (k <= 0) {
            close(fd);
            return bench_fail("bench pmd: write %s: %s", path, strerror(errno));
        }
        at += k;
    }
    return close(fd) == 0 ? 0 : bench_fail("bench pmd: close %s", path);
}

/* The whole file against the expected image: every process's regions, the fill byte between. */
static int check_image(const job *j)
{
    int fd = open(j->path, O_RDONLY);
    const pattern *p = j->p;
    int64_t size = (int64_t)j->P * p->end, at = 0;
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || st.st_size != size) {
        if (fd >= 0)
            close(fd);
        return 0;
    }
    unsigned char *img = bench_alloc(size, FILL_BYTE), *got = bench_alloc(size, 0);
    int ok = img && got;
    for (int k = 0; ok && k < j->P; k++)
        for (int64_t i = 0, d = 0; i < p->n; d += p->len[i], i++) {
            int64_t fo = file_off(p, j->chunk, j->P, k, i);
            for (int64_t b = 0; b < p->len[i]; b++)
                img[fo + b] = value(k, d + b);
        }
    while (ok && at < size) {
        ssize_t n = pread(fd, got + at, (size_t)(size - at), (off_t)at);
        ok = n > 0;
        at += n > 0 ? n : 0;
    }
    ok = ok && memcmp(img, got, (size_t)size) == 0;
    close(fd);
    bench_free(img);
    bench_free(got);
    return ok;
}

/* Collect one record of the given kind from each of P children: *slowest gets the largest
 * time, *first child 0's record (its peak raised to the largest of all), *ok the checks. */
static int collect(int res, int P, int kind, double *slowest, rec *first, int *ok)
{
    int64_t peak = 0;
    *slowest = 0;
    for (int i = 0; i < P; i++) {
        rec r;
        if (get_rec(res, &r) || r.kind != kind)
            return -1;
        *ok = *ok && r.ok;
        if (r.sec > *slowest)
            *slowest = r.sec;
        if (r.child == 0)
            *first = r;
        if (r.peak > peak)
            peak = r.peak;
    }
    first->peak = peak;
    return 0;
}

/* One implementation's P processes on its own file, and what they reported. */
typedef struct runner {
    job j;
    char path[1200];
    int res, gates[MAX_PROCS], started;
    pid_t pids[MAX_PROCS];
    int alive, ok;
    double t[MAX_REPS];
} runner;

static runner runners[NIMPL];

/* In a new process: close every pipe end of the other runners (so that closing a runner's
 * gates always reaches its processes, and its result pipe ends when they do). */
static void close_others(const runner *own)
{
    for (int i = 0; i < NIMPL; i++) {
        if (&runners[i] == own)
            continue;
        for (int k = 0; k < runners[i].started; k++)
            close(runners[i].gates[k]);
        if (runners[i].res >= 0)
            close(runners[i].res);
    }
}

/* Create the implementation's file and fork its processes (they wait at their gates). Pipes
 * are close-on-exec: the MPI library's helper processes must not hold them. */
static int runner_start(runner *rn)
{
    int P = rn->j.P, res[2];
    rn->started = 0;
    rn->res = -1;
    rn->ok = 1;
    if (prefill(rn->path, (int64_t)P * rn->j.p->end) || pipe2(res, O_CLOEXEC))
        return -1;
    fflush(stdout);
    for (; rn->started < P; rn->started++) {
        int g[2];
        if (pipe2(g, O_CLOEXEC))
            break;
        pid_t pid = fork();
        if (pid < 0) {
            close(g[0]);
            close(g[1]);
            break;
        }
        if (pid == 0) {
            close(res[0]);
            close(g[1]);
            for (int i = 0; i < rn->started; i++)
                close(rn->gates[i]);
            close_others(rn);
            _exit(child_main(&rn->j, rn->started, g[0], res[1]));
        }
        close(g[0]);
        rn->gates[rn->started] = g[1];
        rn->pids[rn->started] = pid;
    }
    close(res[1]);
    rn->res = res[0];
    rn->alive = rn->started == P;
    if (!rn->alive)
        bench_fail("bench pmd: cannot start %d processes: %s", P, strerror(errno));
    return rn->alive ? 0 : -1;
}

/* Let the processes take one step and collect their records; a failure ends the runner. */
static int runner_step(runner *rn, int kind, double *slowest, rec *first)
{
    if (!rn->alive)
        return -1;
    if (open_gates(rn->gates, rn->j.P) ||
        collect(rn->res, rn->j.P, kind, slowest, first, &rn->ok)) {
        rn->alive = 0;
        return -1;
    }
    return 0;
}

/* Close the gates (processes still waiting give up), reap, remove the file. */
static void runner_stop(runner *rn, result *out)
{
    for (int i = 0; i < rn->started; i++)
        close(rn->gates[i]);
    if (rn->res >= 0)
        close(rn->res);
    for (int i = 0; i < rn->started; i++) {
        int status;
        while (waitpid(rn->pids[i], &status, 0) < 0 && errno == EINTR)
            ;
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
            rn->alive = 0;
    }
    if (!rn->j.o->keep)
        unlink(rn->path);
    out->ran = rn->alive;
    out->ok = rn->alive && rn->ok;
}

/*
 * Run every implementation on one pattern with P processes. The implementations take turns
 * repetition by repetition (a, b, c, ..., a, b, c, ...), so drift in the machine's load hits
 * them alike; each has its own file and its own processes, which wait at their gates while the
 * others run.
 */
static int run_all(const opts *o, const pattern *p, int P, int64_t chunk, result *r)
{
    runner *rn = runners;
    int failures = 0;
    for (int i = 0; i < NIMPL; i++) { /* all empty before any starts (see close_others) */
        memset(&r[i], 0, sizeof r[i]);
        memset(&rn[i], 0, sizeof rn[i]);
        rn[i].res = -1;
    }
    for (int i = 0; i < NIMPL; i++) {
        if (!o->impl_on[i])
            continue;
        rn[i].j = (job){.o = o, .im = &impls[i], .p = p, .P = P, .chunk = chunk,
                        .path = rn[i].path};
        snprintf(rn[i].path, sizeof rn[i].path, "%s/tessera-bench-pmd-%ld-%s.dat", o->dir,
                 (long)getpid(), impls[i].name);
        runner_start(&rn[i]);
    }
    for (int phase = 0; phase < 2; phase++) { /* 0 writes, 1 reads */
        rec first[NIMPL] = {{0}}, scratch;
        double sec;
        for (int i = 0; i < NIMPL; i++) /* warm-up */
            runner_step(&rn[i], REC_READY, &sec, &scratch);
        for (int rep = 0; rep < o->reps; rep++)
            for (int i = 0; i < NIMPL; i++) {
                rec f;
                if (runner_step(&rn[i], REC_REP, &rn[i].t[rep], &f))
                    continue;
                if (f.peak < first[i].peak)
                    f.peak = first[i].peak;
                first[i] = f;
            }
        for (int i = 0; i < NIMPL; i++) { /* every process checks its part */
            if (runner_step(&rn[i], REC_READY, &sec, &scratch))
                continue;
            if (phase == 0 && !check_image(&rn[i].j))
                rn[i].ok = 0;
            result *out = &r[i];
            out->sec[phase] = bench_median(rn[i].t, o->reps);
            out->peak[phase] = first[i].peak;
            out->last_method[phase] = first[i].last_method;
        }
    }
    for (int i = 0; i < NIMPL; i++) {
        if (!o->impl_on[i])
            continue;
        runner_stop(&rn[i], &r[i]);
        if (!r[i].ok)
            failures++;
        if (!impls[i].method) { /* ROMIO's rule for its sieve buffer (default hints) */
            int64_t ext = file_off(p, chunk, P, 0, p->n - 1) + p->len[p->n - 1] -
                          file_off(p, chunk, P, 0, 0);
            r[i].peak[0] = impls[i].romio_ds ? (ext < 512 * 1024 ? ext : 512 * 1024) : 0;
            r[i].peak[1] = impls[i].romio_ds ? (ext < 4 << 20 ? ext : 4 << 20) : 0;
        }
    }
    return failures;
}

/* ------------------------------------------------------------------ printing */

static const char *ms(double sec, char *buf, size_t cap)
{
    snprintf(buf, cap, sec >= 1 ? "%.0f" : sec >= 0.01 ? "%.2f" : "%.3f", sec * 1e3);
    return buf;
}

static const char *mem(int64_t n, char *buf, size_t cap)
{
    if (n == 0)
        snprintf(buf, cap, "0");
    else if (n < 1024)
        snprintf(buf, cap, "%lldB", (long long)n);
    else if (n < (1 << 20))
        snprintf(buf, cap, "%.0fK", (double)n / 1024);
    else
        snprintf(buf, cap, "%.1fM", (double)n / 1048576);
    return buf;
}

/* The targets, tallied as rows are printed. */
typedef struct tally {
    int pmd_rows, pmd_within, cross_rows, cross_better, auto_rows, auto_within, mem_rows,
        mem_below;
    double pmd_worst, auto_worst;
} tally;

/* One row per operation: times of every implementation, what auto chose, memory, checks. */
static void print_rows(bench_table *tab, const char *label, const result *r, const opts *o,
                       int scenario, tally *ty, int sweep)
{
    static const char *const opname[2] = {"write", "read"};
    char b[64];
    for (int w = 0; w < 2; w++) {
        bench_table_cell(tab, "%s", w == 0 ? label : "");
        bench_table_cell(tab, "%s", opname[w]);
        for (int i = 0; i < NIMPL; i++)
            bench_table_cell(tab, "%s", !o->impl_on[i] ? "-" : !r[i].ran ? "error"
                                                             : ms(r[i].sec[w], b, sizeof b));
        bench_table_cell(tab, "%s", r[I_AUTO].ran ? tess_method_name(r[I_AUTO].last_method[w])
                                                  : "-");
        /* pmd against the better of naive and classic sieving; auto against the best method */
        double naive = r[I_NAIVE].sec[w], sieve = r[I_SIEVE].sec[w], pmd = r[I_PMD].sec[w];
        double base = naive < sieve ? naive : sieve, best = base;
        for (int i = I_PMD; i <= I_LIST; i++)
            if (r[i].sec[w] < best)
                best = r[i].sec[w];
        bool have = r[I_NAIVE].ran && r[I_SIEVE].ran && r[I_PMD].ran;
        bench_table_cell(tab, "%s", have ? (snprintf(b, sizeof b, "%.2f", pmd / base), b) : "-");
        bool auto_ok = have && r[I_LIST].ran && r[I_AUTO].ran;
        bench_table_cell(tab, "%s", auto_ok ? (snprintf(b, sizeof b, "%.2f",
                                                        r[I_AUTO].sec[w] / best), b) : "-");
        for (int i = I_SIEVE; i <= I_AUTO; i++)
            if (i != I_LIST)
                bench_table_cell(tab, "%s", mem(r[i].peak[w], b, sizeof b));
        bench_table_cell(tab, "%s", mem(r[I_ROMIO_DS].peak[w], b, sizeof b));
        bool ok = true;
        for (int i = 0; i < NIMPL; i++)
            ok = ok && (!o->impl_on[i] || r[i].ok);
        bench_table_cell(tab, "%s", ok ? "ok" : "FAIL");
        bench_table_end_row(tab);
        if (have) {
            ty->pmd_rows++;
            ty->pmd_within += pmd <= 1.10 * base;
            if (pmd / base > ty->pmd_worst)
                ty->pmd_worst = pmd / base;
            if (scenario == 1) { /* mixed sizes: naive and sieve each win some of the pattern */
                ty->cross_rows++;
                ty->cross_better += pmd < naive && pmd < sieve;
            }
            if (scenario == 2) {
                ty->mem_rows++;
                ty->mem_below += r[I_PMD].peak[w] < r[I_SIEVE].peak[w];
            }
        }
        if (auto_ok && sweep) {
            ty->auto_rows++;
            ty->auto_within += r[I_AUTO].sec[w] <= 1.10 * best;
            if (r[I_AUTO].sec[w] / best > ty->auto_worst)
                ty->auto_worst = r[I_AUTO].sec[w] / best;
        }
    }
}

static void table_init(bench_table *tab, const char *first)
{
    static const char *heads[18];
    static const int widths[18] = {9, 5, 7, 7, 7, 7, 7, 8, 10, 6, 9, 9, 6, 6, 6, 6, 5};
    heads[0] = first;
    const char *rest[] = {"op",      "naive",   "sieve",  "pmd",   "list",  "auto",
                          "romio-ds", "romio-nods", "auto->", "pmd/nv|sv", "auto/best",
                          "mem:sv", "pmd",    "auto",  "romio", "check"};
    for (int i = 0; i < 16; i++)
        heads[i + 1] = rest[i];
    bench_table_init(tab, stdout, 17, heads, widths);
}

/* ------------------------------------------------------------------ the command */

static void usage(FILE *f)
{
    fputs("usage: tessera bench pmd [options]\n"
          "  PMD data sieving (paper 003) next to naive, classic sieve, list, auto and ROMIO's\n"
          "  data sieving on/off: scenarios 1 mixed, 2 sparse, 3 dense, with 1..16 forked\n"
          "  processes on one shared file, and a sweep over the hole size (one process).\n"
          "  Times are milliseconds per parallel access (median; slowest process).\n"
          "  --procs LIST        process counts (default 1,2,4,8,16; at most 64)\n"
          "  --scenarios LIST    of 1,2,3 (default all)\n"
          "  --regions N         regions per process in every scenario (default 1024, 256,\n"
          "                      8192 for scenarios 1, 2, 3)\n"
          "  --chunk N           regions per interleaved chunk of a process (default 64)\n"
          "  --sweep-region N    region size of the sweep (default 1k)\n"
          "  --sweep-holes LIST  hole sizes of the sweep (default 16,64,256,1k,2k,4k,8k,16k,\n"
          "                      64k,128k)\n"
          "  --sweep-count N     regions of the sweep (default 1024)\n"
          "  --no-sweep          leave the sweep out\n"
          "  --methods LIST      of naive,sieve,pmd,list,auto,romio-ds,romio-nods (default all)\n"
          "  --profile FILE      cost-model profile for the Tessera methods (hint tess_profile;\n"
          "                      default: the usual lookup, see `tessera calibrate`)\n"
          "  --dir DIR           directory for the file (default $TMPDIR or /tmp)\n"
          "  --reps N            repetitions, the median is printed (default 5)\n"
          "  --min-ms MS         minimum milliseconds per repetition (default 20)\n"
          "  --keep              keep the file of the last run\n"
          "  --no-mpi            leave the ROMIO columns out\n"
          "  --cpu-time          time with each process's CPU time instead of wall time\n"
          "                      (immune to other load on the machine, blind to waiting for\n"
          "                      locks and to io_uring's kernel workers)\n"
          "  --quick             small: --procs 1,2 --regions 64 --sweep-holes 64,4k,64k\n"
          "                      --sweep-count 128 --reps 3 --min-ms 2\n"
          "  -h, --help          this text\n",
          f);
}

/* A bad option value: say so; exit status 2. */
static int bad_usage(const char *msg)
{
    bench_fail("%s", msg);
    return 2;
}

static int parse_list_int(const char *opt, const char *s, int *out, int cap, int *n, int lo,
                          int hi)
{
    int64_t v[16];
    if (bench_parse_size_list(opt, s, v, cap < 16 ? cap : 16, n) != 0)
        return -1;
    for (int i = 0; i < *n; i++) {
        if (v[i] < lo || v[i] > hi)
            return bench_fail("%s: values from %d to %d", opt, lo, hi);
        out[i] = (int)v[i];
    }
    return 0;
}

static int parse_methods(const char *s, int *on)
{
    char tmp[256];
    if (strlen(s) >= sizeof tmp)
        return bench_fail("--methods: list too long");
    strcpy(tmp, s);
    memset(on, 0, sizeof(int) * NIMPL);
    char *save = NULL;
    for (char *tok = strtok_r(tmp, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        int k = -1;
        for (int i = 0; i < NIMPL; i++)
            if (strcmp(tok, impls[i].name) == 0)
                k = i;
        if (k < 0)
            return bench_fail("--methods: unknown '%s'", tok);
        on[k] = 1;
    }
    return 0;
}

/* Launched by mpirun/mpiexec? *rank receives the rank (0 if not). */
static int under_launcher(int *rank)
{
    static const char *const vars[][2] = {{"OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK"},
                                          {"PMI_SIZE", "PMI_RANK"},
                                          {"PMIX_RANK", "PMIX_RANK"}};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
        if (getenv(vars[i][0])) {
            const char *r = getenv(vars[i][1]);
            *rank = r ? atoi(r) : 0;
            return 1;
        }
    *rank = 0;
    return 0;
}

static void print_targets(const tally *ty)
{
    printf("\ntargets:\n");
    printf("  pmd within 10%% of the better of naive and classic sieve: %d of %d rows "
           "(worst ratio %.2f)\n", ty->pmd_within, ty->pmd_rows, ty->pmd_worst);
    printf("  pmd strictly better than both where they cross (scenario 1, mixed): %d of %d "
           "rows\n", ty->cross_better, ty->cross_rows);
    printf("  auto within 10%% of the best Tessera method on every sweep point: %d of %d rows "
           "(worst ratio %.2f)\n", ty->auto_within, ty->auto_rows, ty->auto_worst);
    printf("  pmd peak buffer below classic sieving's in scenario 2 (sparse): %d of %d rows\n",
           ty->mem_below, ty->mem_rows);
}

int tess_bench_pmd(int argc, char **argv)
{
    opts o;
    memset(&o, 0, sizeof o);
    static const int def_procs[] = {1, 2, 4, 8, 16};
    static const int64_t def_holes[] = {16, 64, 256, 1024, 2048, 4096, 8192, 16384, 65536,
                                        131072};
    static const int64_t def_regions[4] = {0, 1024, 256, 8192};
    memcpy(o.procs, def_procs, sizeof def_procs);
    o.nprocs = 5;
    o.scen[0] = 1, o.scen[1] = 2, o.scen[2] = 3, o.nscen = 3;
    o.chunk = 64;
    o.sweep_region = 1024;
    memcpy(o.sweep_holes, def_holes, sizeof def_holes);
    o.nsweep = 10;
    o.sweep_count = 1024;
    for (int i = 0; i < NIMPL; i++)
        o.impl_on[i] = 1;
    o.reps = 5;
    o.min_rep_sec = 0.020;
    o.use_mpi = 1;
    o.do_sweep = 1;
    const char *tmpdir = getenv("TMPDIR");
    snprintf(o.dir, sizeof o.dir, "%s", tmpdir && *tmpdir ? tmpdir : "/tmp");
    int set_procs = 0, set_regions = 0, set_holes = 0, set_count = 0, set_reps = 0, set_ms = 0;
    int64_t regions_all = 0;

    static const struct option lo[] = {
        {"procs", required_argument, NULL, 'P'},        {"scenarios", required_argument, NULL, 's'},
        {"regions", required_argument, NULL, 'n'},      {"chunk", required_argument, NULL, 'c'},
        {"sweep-region", required_argument, NULL, 'R'}, {"sweep-holes", required_argument, NULL, 'H'},
        {"sweep-count", required_argument, NULL, 'N'},  {"no-sweep", no_argument, NULL, 'S'},
        {"methods", required_argument, NULL, 'M'},      {"profile", required_argument, NULL, 'f'},
        {"dir", required_argument, NULL, 'd'},          {"reps", required_argument, NULL, 'r'},
        {"min-ms", required_argument, NULL, 'm'},       {"keep", no_argument, NULL, 'k'},
        {"no-mpi", no_argument, NULL, 'x'},             {"quick", no_argument, NULL, 'q'},
        {"cpu-time", no_argument, NULL, 't'},
        {"help", no_argument, NULL, 'h'},               {NULL, 0, NULL, 0}};
    optind = 0;
    int ch;
    int64_t v;
    double d;
    while ((ch = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
        switch (ch) {
        case 'P':
            if (parse_list_int("--procs", optarg, o.procs, 8, &o.nprocs, 1, MAX_PROCS))
                return 2;
            set_procs = 1;
            break;
        case 's':
            if (parse_list_int("--scenarios", optarg, o.scen, 3, &o.nscen, 1, 3))
                return 2;
            break;
        case 'n':
            if (bench_parse_size("--regions", optarg, &regions_all) || regions_all < 1 ||
                regions_all > (1 << 24))
                return bad_usage("--regions: 1 to 16M");
            set_regions = 1;
            break;
        case 'c':
            if (bench_parse_size("--chunk", optarg, &o.chunk) || o.chunk < 1)
                return bad_usage("--chunk: at least 1");
            break;
        case 'R':
            if (bench_parse_size("--sweep-region", optarg, &o.sweep_region) ||
                o.sweep_region < 1 || o.sweep_region > INT_MAX)
                return bad_usage("--sweep-region: 1 to 2G");
            break;
        case 'H':
            if (bench_parse_size_list("--sweep-holes", optarg, o.sweep_holes, MAX_SWEEP,
                                      &o.nsweep))
                return 2;
            set_holes = 1;
            break;
        case 'N':
            if (bench_parse_size("--sweep-count", optarg, &o.sweep_count) || o.sweep_count < 1)
                return bad_usage("--sweep-count: at least 1");
            set_count = 1;
            break;
        case 'S': o.do_sweep = 0; break;
        case 'M':
            if (parse_methods(optarg, o.impl_on))
                return 2;
            break;
        case 'f': o.profile = optarg; break;
        case 'd': snprintf(o.dir, sizeof o.dir, "%s", optarg); break;
        case 'r':
            if (bench_parse_size("--reps", optarg, &v) || v < 1 || v > MAX_REPS)
                return bad_usage("--reps: 1 to 101");
            o.reps = (int)v;
            set_reps = 1;
            break;
        case 'm':
            if (bench_parse_double("--min-ms", optarg, &d))
                return 2;
            o.min_rep_sec = d / 1000.0;
            set_ms = 1;
            break;
        case 'k': o.keep = 1; break;
        case 'x': o.use_mpi = 0; break;
        case 't': o.cpu_time = 1; break;
        case 'q': o.quick = 1; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "tessera: bench pmd: unexpected argument '%s'\n", argv[optind]);
        usage(stderr);
        return 2;
    }
    if (o.quick) {
        static const int64_t quick_holes[] = {64, 4096, 65536};
        if (!set_procs)
            o.procs[0] = 1, o.procs[1] = 2, o.nprocs = 2;
        if (!set_regions)
            regions_all = 64, set_regions = 1;
        if (!set_holes)
            memcpy(o.sweep_holes, quick_holes, sizeof quick_holes), o.nsweep = 3;
        if (!set_count)
            o.sweep_count = 128;
        if (!set_reps)
            o.reps = 3;
        if (!set_ms)
            o.min_rep_sec = 0.002;
    }
    for (int s = 1; s <= 3; s++)
        o.regions[s] = set_regions ? regions_all : def_regions[s];

    int rank = 0, launched = under_launcher(&rank);
    if (rank != 0)
        return 0; /* the benchmark forks its own processes: extra ranks have nothing to do */
    char library[256] = "n/a (built without MPI)";
    bool romio = false;
#ifdef TESS_BENCH_MPI
    romio = o.use_mpi && !launched;
    if (!o.use_mpi)
        snprintf(library, sizeof library, "not used (--no-mpi)");
    else if (launched)
        snprintf(library, sizeof library, "not used (started by an MPI launcher: run "
                                          "`tessera bench pmd` without mpirun for ROMIO)");
    else {
        char ver[MPI_MAX_LIBRARY_VERSION_STRING];
        int len = 0;
        if (MPI_Get_library_version(ver, &len) != MPI_SUCCESS)
            snprintf(ver, sizeof ver, "unknown MPI library");
        ver[strcspn(ver, "\n\r,")] = '\0';
        setenv("OMPI_MCA_io", "romio321", 0); /* Open MPI: its ROMIO component */
        snprintf(library, sizeof library, "%.150s (OMPI_MCA_io=%s)", ver, getenv("OMPI_MCA_io"));
    }
#else
    (void)launched;
#endif
    if (!romio)
        o.impl_on[I_ROMIO_DS] = o.impl_on[I_ROMIO_NODS] = 0;

    char b1[32], b2[32];
    bench_use_cpu_clock(o.cpu_time); /* the children inherit the clock */
    signal(SIGPIPE, SIG_IGN); /* a process that died closes its gate: an error, not a signal */
    printf("tessera bench pmd: PMD data sieving (paper 003), files in %s\n", o.dir);
    printf("  ms per parallel access (median of %d repetitions of >= %.0f ms, slowest of the "
           "processes; one untimed call first); page-cache figures; clock: %s\n", o.reps,
           o.min_rep_sec * 1e3, bench_clock_name());
    bench_print_machine(stdout);
    printf("  MPI: %s\n", library);
    printf("  cost model: %s\n", o.profile ? o.profile : "the usual profile lookup "
                                                          "(tess_stats.model_defaults says "
                                                          "whether one was found)");
    printf("  processes are forked, each with its own handle on one shared file; chunks of "
           "%lld regions interleaved round-robin\n", (long long)o.chunk);
    printf("  pmd/nv|sv = pmd / min(naive, sieve); auto/best = auto / min(naive, sieve, pmd, "
           "list); auto-> = the method auto ran; mem = peak staging buffer of one call\n");

    int failures = 0;
    tally ty = {0};
    bench_table tab;
    for (int si = 0; si < o.nscen; si++) {
        static const char *const names[4] = {"", "mixed region and hole sizes",
                                              "sparse: large holes", "dense: small holes"};
        int s = o.scen[si];
        pattern p;
        if (pattern_make(&p, s, o.regions[s], 0, 0)) {
            pattern_free(&p);
            return 1;
        }
        printf("\nscenario %d (%s): %lld regions of %s per process, own extent %s\n", s,
               names[s], (long long)p.n, bench_fmt_bytes(p.data, b1, sizeof b1),
               bench_fmt_bytes(p.end, b2, sizeof b2));
        table_init(&tab, "procs");
        bench_table_header(&tab);
        for (int pi = 0; pi < o.nprocs; pi++) {
            result r[NIMPL];
            char label[16];
            failures += run_all(&o, &p, o.procs[pi], o.chunk, r);
            snprintf(label, sizeof label, "%d", o.procs[pi]);
            print_rows(&tab, label, r, &o, s, &ty, 0);
        }
        pattern_free(&p);
    }
    if (o.do_sweep) {
        printf("\nsweep: %lld regions of %s, one process, hole size varied\n",
               (long long)o.sweep_count, bench_fmt_bytes(o.sweep_region, b1, sizeof b1));
        table_init(&tab, "hole");
        bench_table_header(&tab);
        for (int h = 0; h < o.nsweep; h++) {
            pattern p;
            result r[NIMPL];
            if (pattern_make(&p, 0, o.sweep_count, o.sweep_region, o.sweep_holes[h])) {
                pattern_free(&p);
                return 1;
            }
            failures += run_all(&o, &p, 1, o.sweep_count, r);
            print_rows(&tab, bench_fmt_bytes(o.sweep_holes[h], b1, sizeof b1), r, &o, 0, &ty, 1);
            pattern_free(&p);
        }
    }
    print_targets(&ty);
    if (failures)
        printf("\n%d run(s) failed or did not check: see the messages above\n", failures);
    return failures ? 1 : 0;
}
