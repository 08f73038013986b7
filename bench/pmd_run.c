/*
 * pmd_run.c - the processes of `tessera bench pmd` (see pmd.c for the benchmark): for each
 * implementation, P forked processes, driven command by command through pipes (gates) by the
 * parent, which gives the implementations the row's one file in turns and collects their
 * timings and checks.
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
    int64_t calls[2]; /* calls per repetition, [0] write, [1] read; 0 until the first untimed call */
    unsigned char *wbuf, *rbuf;
    tess_file *f;
    tess_type *ft;
#ifdef TESS_BENCH_MPI
    MPI_File fh;
    MPI_Datatype mft;
    int mpi_up;
#endif
} child;

/* What the parent tells a child through its gate, one byte per step. A turn (see pmd_run_all)
 * is OPEN, an untimed call, a timed repetition, CLOSE; after writes the parent then compares
 * the whole file (every process's regions and the holes) with the expected image. */
enum { CMD_OPEN = 'o', CMD_WARM_WRITE = 'w', CMD_WARM_READ = 'r', CMD_REP_WRITE = 'W',
       CMD_REP_READ = 'R', CMD_CLOSE = 'c' };

static int send_rec(int fd, const rec *r)
{
    return write(fd, r, sizeof *r) == (ssize_t)sizeof *r ? 0 : -1;
}

/* The parent's next command; -1 when the parent is done or gave up (closed the gate). */
static int wait_gate(int fd)
{
    char c;
    ssize_t n;
    while ((n = read(fd, &c, 1)) < 0 && errno == EINTR)
        ;
    return n == 1 ? (unsigned char)c : -1;
}

/* The child's file view: its regions of the shared file, built once. */
static int tess_view_child(child *c)
{
    const job *j = c->j;
    int64_t *lens = malloc(sizeof *lens * (size_t)j->p->n);
    int64_t *offs = malloc(sizeof *offs * (size_t)j->p->n);
    int rc = lens && offs ? 0 : TESS_ERR_NOMEM;
    for (int64_t i = 0; rc == 0 && i < j->p->n; i++) {
        lens[i] = j->p->len[i];
        offs[i] = pmd_file_off(j->p, j->chunk, j->P, c->k, i);
    }
    if (rc == 0)
        rc = tess_type_hindexed(j->p->n, lens, offs, TESS_BYTE, &c->ft);
    free(lens);
    free(offs);
    return rc ? bench_tess_fail(rc, "bench pmd: file view") : 0;
}

static int tess_open_child(child *c)
{
    const job *j = c->j;
    tess_info *info = NULL;
    int rc = tess_info_create(&info);
    if (rc == 0)
        rc = tess_info_set(info, "tess_method", j->im->method);
    if (rc == 0 && j->o->profile)
        rc = tess_info_set(info, "tess_profile", j->o->profile);
    if (rc == 0)
        rc = tess_file_open(j->path, TESS_RDWR, info, &c->f);
    if (rc == 0)
        rc = tess_file_set_view(c->f, 0, TESS_BYTE, c->ft);
    if (rc)
        bench_tess_fail(rc, "bench pmd: open and view");
    tess_info_free(info);
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
/* MPI_Init (a singleton) and the child's file view as an MPI type. */
static int mpi_init_child(child *c)
{
    const job *j = c->j;
    int n = (int)j->p->n;
    int *lens = malloc(sizeof *lens * (size_t)n);
    MPI_Aint *offs = malloc(sizeof *offs * (size_t)n);
    if (!lens || !offs) {
        free(lens);
        free(offs);
        return bench_fail("bench pmd: out of memory");
    }
    for (int i = 0; i < n; i++) {
        lens[i] = (int)j->p->len[i];
        offs[i] = (MPI_Aint)pmd_file_off(j->p, j->chunk, j->P, c->k, i);
    }
    int rc = MPI_Init(NULL, NULL);
    c->mpi_up = rc == MPI_SUCCESS;
    if (rc == MPI_SUCCESS)
        rc = MPI_Type_create_hindexed(n, lens, offs, MPI_BYTE, &c->mft);
    if (rc == MPI_SUCCESS)
        rc = MPI_Type_commit(&c->mft);
    free(lens);
    free(offs);
    return rc == MPI_SUCCESS ? 0 : bench_fail("bench pmd: MPI set-up failed (error %d)", rc);
}

static int mpi_open_child(child *c)
{
    const char *ds = c->j->im->romio_ds ? "enable" : "disable";
    MPI_Info info = MPI_INFO_NULL;
    int rc = MPI_Info_create(&info);
    if (rc == MPI_SUCCESS)
        rc = MPI_Info_set(info, "romio_ds_write", ds);
    if (rc == MPI_SUCCESS)
        rc = MPI_Info_set(info, "romio_ds_read", ds);
    if (rc == MPI_SUCCESS)
        rc = MPI_File_open(MPI_COMM_SELF, c->j->path, MPI_MODE_RDWR, info, &c->fh);
    if (rc == MPI_SUCCESS)
        rc = MPI_File_set_view(c->fh, 0, MPI_BYTE, c->mft, "native", info);
    if (info != MPI_INFO_NULL)
        MPI_Info_free(&info);
    return rc == MPI_SUCCESS ? 0 : bench_fail("bench pmd: MPI_File_open failed (error %d)", rc);
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

static int child_open(child *c)
{
#ifdef TESS_BENCH_MPI
    if (!c->j->im->method)
        return mpi_open_child(c);
#endif
    return tess_open_child(c);
}

static int child_close(child *c)
{
#ifdef TESS_BENCH_MPI
    if (!c->j->im->method)
        return c->fh == MPI_FILE_NULL || MPI_File_close(&c->fh) == MPI_SUCCESS ? 0 : -1;
#endif
    int rc = c->f ? tess_file_close(c->f) : 0;
    c->f = NULL;
    return rc ? bench_tess_fail(rc, "tess_file_close") : 0;
}

/* One untimed call (the first in a direction sets the calls per repetition: about --min-ms);
 * a read is checked. */
static int child_warm(child *c, int write, rec *r)
{
    if (!write)
        memset(c->rbuf, 0, (size_t)c->data);
    double t0 = bench_now();
    if (child_io(c, write))
        return -1;
    double one = bench_now() - t0;
    if (!c->calls[!write]) {
        int64_t k = one > 0 ? (int64_t)(c->j->o->min_rep_sec / one) + 1 : 1;
        c->calls[!write] = k < 1 ? 1 : k > 100000 ? 100000 : k;
    }
    r->ok = write || memcmp(c->rbuf, c->wbuf, (size_t)c->data) == 0;
    return 0;
}

/* One timed repetition; a read is checked after it. */
static int child_rep(child *c, int write, rec *r)
{
    int64_t k = c->calls[!write] ? c->calls[!write] : 1;
    if (c->f)
        tess_file_reset_stats(c->f);
    double t0 = bench_now();
    for (int64_t i = 0; i < k; i++)
        if (child_io(c, write))
            return -1;
    r->kind = REC_REP;
    r->sec = (bench_now() - t0) / (double)k;
    r->ok = write || memcmp(c->rbuf, c->wbuf, (size_t)c->data) == 0;
    tess_stats s;
    if (c->f && tess_file_stats(c->f, &s) == 0) {
        r->peak = s.peak_buffer_bytes;
        r->last_method = (int)s.last_method;
    }
    return 0;
}

/* A child: set up, then the parent's commands until it closes the gate. */
static int child_main(const job *j, int k, int gate, int res)
{
    child c = {.j = j, .k = k, .data = j->p->data};
    int rc = -1, cmd;
#ifdef TESS_BENCH_MPI
    c.fh = MPI_FILE_NULL;
#endif
    c.wbuf = bench_alloc(c.data, 0);
    c.rbuf = bench_alloc(c.data, 0);
    if (!c.wbuf || !c.rbuf)
        goto out;
    for (int64_t i = 0; i < c.data; i++)
        c.wbuf[i] = value(k, i);
#ifdef TESS_BENCH_MPI
    if (!j->im->method && mpi_init_child(&c))
        goto out;
#endif
    if (j->im->method && tess_view_child(&c))
        goto out;
    while ((cmd = wait_gate(gate)) >= 0) {
        rec r = {.child = k, .kind = REC_READY, .ok = 1};
        int bad = 0;
        switch (cmd) {
        case CMD_OPEN: bad = child_open(&c); break;
        case CMD_WARM_WRITE: bad = child_warm(&c, 1, &r); break;
        case CMD_WARM_READ: bad = child_warm(&c, 0, &r); break;
        case CMD_REP_WRITE: bad = child_rep(&c, 1, &r); break;
        case CMD_REP_READ: bad = child_rep(&c, 0, &r); break;
        case CMD_CLOSE: bad = child_close(&c); break;
        default: bad = bench_fail("bench pmd: unknown command %d", cmd);
        }
        if (bad || send_rec(res, &r))
            goto out;
    }
    rc = 0;
out:
    if (rc) {
        rec r = {.child = k, .kind = REC_FAIL};
        send_rec(res, &r);
    }
    if (child_close(&c))
        rc = -1;
    tess_type_free(c.ft);
#ifdef TESS_BENCH_MPI
    if (c.mpi_up)
        MPI_Finalize();
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

/* Give every child its next command. */
static int open_gates(const int *gates, int P, char cmd)
{
    for (int i = 0; i < P; i++)
        if (write(gates[i], &cmd, 1) != 1)
            return -1;
    return 0;
}

/* The expected file: every process's regions, the fill byte between. */
static unsigned char *make_image(const pattern *p, int64_t C, int P, int64_t size)
{
    unsigned char *img = bench_alloc(size, FILL_BYTE);
    for (int k = 0; img && k < P; k++)
        for (int64_t i = 0, d = 0; i < p->n; d += p->len[i], i++) {
            int64_t fo = pmd_file_off(p, C, P, k, i);
            for (int64_t b = 0; b < p->len[i]; b++)
                img[fo + b] = value(k, d + b);
        }
    return img;
}

/* The whole file against the expected image, read into got (size bytes, kept for the row: a
 * new buffer per turn would pay its first touch every time). */
static int check_image(const char *path, const unsigned char *img, unsigned char *got,
                       int64_t size)
{
    int fd = open(path, O_RDONLY);
    struct stat st;
    int ok = fd >= 0 && fstat(fd, &st) == 0 && st.st_size == size &&
             bench_read_full(fd, got, size, 0) == 0 && memcmp(img, got, (size_t)size) == 0;
    if (fd >= 0)
        close(fd);
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

/* One implementation's P processes and what they reported. */
typedef struct runner {
    job j;
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

/* Fork the implementation's processes (they wait at their gates). Pipes are close-on-exec: the
 * MPI library's helper processes must not hold them. */
static int runner_start(runner *rn)
{
    int P = rn->j.P, res[2];
    rn->started = 0;
    rn->res = -1;
    rn->ok = 1;
    if (pipe2(res, O_CLOEXEC))
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

/* Close the gates (processes still waiting give up, closing their handles) and reap. */
static void runner_halt(runner *rn)
{
    for (int i = 0; i < rn->started; i++)
        close(rn->gates[i]);
    if (rn->res >= 0)
        close(rn->res);
    rn->res = -1;
    for (int i = 0; i < rn->started; i++) {
        int status;
        while (waitpid(rn->pids[i], &status, 0) < 0 && errno == EINTR)
            ;
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
            rn->alive = 0;
    }
    rn->started = 0;
}

/* Give the processes one command and collect their records; a failure ends the runner at once
 * (no handle of it stays open on the file the others use next). */
static int runner_step(runner *rn, char cmd, int kind, double *slowest, rec *first)
{
    if (!rn->alive)
        return -1;
    if (open_gates(rn->gates, rn->j.P, cmd) ||
        collect(rn->res, rn->j.P, kind, slowest, first, &rn->ok)) {
        rn->alive = 0;
        runner_halt(rn);
        return -1;
    }
    return 0;
}

/* One turn of an implementation on the file (see pmd_run_all), got a buffer of the file's
 * size for the check; the repetition's time into *sec and its child-0 record into *f. */
static int runner_turn(runner *rn, int write, bench_turn_file *file, unsigned char *got,
                       double *sec, rec *f)
{
    double scratch;
    rec x;
    if (!rn->alive)
        return -1;
    if (bench_turn_file_ready(file, write) || runner_step(rn, CMD_OPEN, REC_READY, &scratch, &x) ||
        runner_step(rn, write ? CMD_WARM_WRITE : CMD_WARM_READ, REC_READY, &scratch, &x) ||
        runner_step(rn, write ? CMD_REP_WRITE : CMD_REP_READ, REC_REP, sec, f) ||
        runner_step(rn, CMD_CLOSE, REC_READY, &scratch, &x))
        return -1;
    if (write && !check_image(file->path, file->image, got, file->size))
        rn->ok = 0;
    return 0;
}

/*
 * Run every implementation on one pattern with P processes, on one file that they use in
 * turns: before each repetition of an implementation the file is put into the same state
 * (bench_turn_file_ready: the fill byte before writes, the expected image before reads); then
 * its processes open it, make one untimed call and a timed repetition, check, and close it.
 * Every implementation so starts from the same page-cache state, and no other implementation's
 * handle is open meanwhile (bench.h, bench_turns). The turns take place
 * repetition by repetition, each repetition starting one implementation later, so drift in the
 * machine's load hits them alike. Every implementation has its own processes, which wait at
 * their gates while the others run.
 */
int pmd_run_all(const opts *o, const pattern *p, int P, int64_t chunk, result *r)
{
    runner *rn = runners;
    int failures = 0;
    int64_t size = (int64_t)P * p->end;
    char path[1200];
    snprintf(path, sizeof path, "%s/tessera-bench-pmd-%ld.dat", o->dir, (long)getpid());
    unsigned char *img = make_image(p, chunk, P, size), *got = bench_alloc(size, 0);
    for (int i = 0; i < NIMPL; i++) { /* all empty before any starts (see close_others) */
        memset(&r[i], 0, sizeof r[i]);
        memset(&rn[i], 0, sizeof rn[i]);
        rn[i].res = -1;
    }
    if (!img || !got) {
        bench_free(img);
        bench_free(got);
        bench_fail("bench pmd: out of memory for a %lld-byte file", (long long)size);
        return NIMPL;
    }
    bench_turn_file file = {.path = path, .dir = o->dir, .size = size, .piece = o->prefill,
                            .fill = FILL_BYTE, .image = img};
    for (int i = 0; i < NIMPL; i++) {
        if (!o->impl_on[i])
            continue;
        rn[i].j = (job){.o = o, .im = &impls[i], .p = p, .P = P, .chunk = chunk, .path = path};
        runner_start(&rn[i]);
    }
    for (int phase = 0; phase < 2; phase++) { /* 0 writes, 1 reads */
        rec first[NIMPL] = {{0}};
        for (int rep = 0; rep < o->reps; rep++)
            for (int k = 0; k < NIMPL; k++) { /* each repetition starts one later */
                int i = (k + rep) % NIMPL;
                rec f;
                if (runner_turn(&rn[i], phase == 0, &file, got, &rn[i].t[rep], &f))
                    continue;
                if (f.peak < first[i].peak)
                    f.peak = first[i].peak;
                first[i] = f;
            }
        for (int i = 0; i < NIMPL; i++) {
            if (!rn[i].alive)
                continue;
            result *out = &r[i];
            out->sec[phase] = bench_median(rn[i].t, o->reps);
            out->peak[phase] = first[i].peak;
            out->last_method[phase] = first[i].last_method;
        }
    }
    for (int i = 0; i < NIMPL; i++) {
        if (!o->impl_on[i])
            continue;
        runner_halt(&rn[i]);
        r[i].ran = rn[i].alive;
        r[i].ok = rn[i].alive && rn[i].ok;
        if (!r[i].ok)
            failures++;
        if (!impls[i].method) { /* ROMIO's rule for its sieve buffer (default hints) */
            int64_t ext = pmd_file_off(p, chunk, P, 0, p->n - 1) + p->len[p->n - 1] -
                          pmd_file_off(p, chunk, P, 0, 0);
            r[i].peak[0] = impls[i].romio_ds ? (ext < 512 * 1024 ? ext : 512 * 1024) : 0;
            r[i].peak[1] = impls[i].romio_ds ? (ext < 4 << 20 ? ext : 4 << 20) : 0;
        }
    }
    if (!o->keep)
        unlink(path);
    bench_free(img);
    bench_free(got);
    return failures;
}
