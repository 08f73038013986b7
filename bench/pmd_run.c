/*
 * pmd_run.c - the processes of `tessera bench pmd` (see pmd.c for the benchmark): for each
 * implementation, P forked processes on one shared file, driven step by step through pipes
 * (gates) by the parent, which collects their timings and checks.
 */
#include "bench.h"
#include "pmd.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#ifdef TESS_BENCH_MPI
#include <mpi.h>
#endif

const impl impls[NIMPL] = {
    {"naive", "naive", 0}, {"sieve", "sieve", 0}, {"pmd", "pmd", 0}, {"list", "list", 0},
    {"auto", "auto", 0},   {"romio-ds", NULL, 1}, {"romio-nods", NULL, 0},
};

/* File offset of region i of process k of P, chunks of C regions interleaved (see the top):
 * chunk c of every process starts at P * S_c in the file (S_c: chunk c's start in own
 * coordinates), process k's at P * S_c + k * E_c (E_c: the chunk's own extent). */
int64_t pmd_file_off(const pattern *p, int64_t C, int P, int k, int64_t i)
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
        offs[i] = pmd_file_off(j->p, j->chunk, j->P, c->k, i);
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
        offs[i] = (MPI_Aint)pmd_file_off(j->p, j->chunk, j->P, c->k, i);
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
        int64_t fo = pmd_file_off(p, c->j->chunk, c->j->P, c->k, i);
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
            int64_t fo = pmd_file_off(p, j->chunk, j->P, k, i);
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
    if (bench_prefill(rn->path, (int64_t)P * rn->j.p->end, FILL_BYTE, rn->j.o->prefill) ||
        pipe2(res, O_CLOEXEC))
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
int pmd_run_all(const opts *o, const pattern *p, int P, int64_t chunk, result *r)
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
        if (bench_settle(o->dir)) /* nothing for the kernel to write back while timing */
            failures++;
        for (int i = 0; i < NIMPL; i++) /* warm-up */
            runner_step(&rn[i], REC_READY, &sec, &scratch);
        for (int rep = 0; rep < o->reps; rep++)
            for (int k = 0; k < NIMPL; k++) { /* each repetition starts one later */
                int i = (k + rep) % NIMPL;
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
            int64_t ext = pmd_file_off(p, chunk, P, 0, p->n - 1) + p->len[p->n - 1] -
                          pmd_file_off(p, chunk, P, 0, 0);
            r[i].peak[0] = impls[i].romio_ds ? (ext < 512 * 1024 ? ext : 512 * 1024) : 0;
            r[i].peak[1] = impls[i].romio_ds ? (ext < 4 << 20 ? ext : 4 << 20) : 0;
        }
    }
    return failures;
}
