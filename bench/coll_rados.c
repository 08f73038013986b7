/*
 * coll_rados.c - the collective workloads on the RADOS driver (`tessera bench tile|block3d|
 * flash --driver rados`, paper 000 section V on a local Ceph cluster).
 *
 * For each added per-request delay of --delays (set on the --cluster with tess_cluster_delay, the
 * OSDs' dispatch delay injection) and each method, on MPI_COMM_WORLD:
 *   naive, list, sieve, datatype   tess_file_write_at / read_at (independent), tess_method M
 *   tp-list, tp-sieve, tp-datatype tess_file_*_at_all, romio_cb_*=enable; the aggregators
 *                                  move their buffers with list I/O, as sieved spans, or with
 *                                  datatype I/O
 * every method works on the same file, so on the same objects and OSDs (RADOS places an object
 * by its name: with a file per method, one method's objects could share an OSD that another's
 * spread over, and at an added delay that alone decided their ratio). Each method empties the
 * file, writes it once (timed: the first estimate of an op), reads it back and verifies it
 * (every data byte is a function of its file offset, so overlapping writers agree).
 * Then the timed repetitions run in rounds that alternate the methods: each round times every
 * method's write, then every method's read (the slowest rank each), starting one method later
 * each round, so that a slow spell of the machine or the cluster falls on every method alike;
 * each op that follows a write (the verifying read too) first gets the file settled (see settle),
 * so that every op starts from one storage state, whichever method wrote last. A method gets
 * as many repetitions as --budget holds at its first write's time (at most MAX_REPS, at least
 * one); the medians and quartiles are printed, and each method against datatype as the median
 * (and quartiles) of the per-round ratios. Printed per method: MB/s, the
 * Table I counters per client (desired and accessed bytes, requests, regions; requests are
 * RADOS operations, stats.server_requests), the client's CPU per op (the process, librados'
 * threads included), and the OSDs' own view from their perf counters (admin sockets in
 * --cluster D/run): operations and execution seconds per operation, summed over the OSDs, so
 * each method's time splits into server time and round trips. The summary (stdout) has a row
 * per delay and direction: datatype I/O against list I/O and naive; the details give every
 * method, next to paper 000's operations and accessed bytes per client (Tables II-IV).
 * --methods picks the methods.
 *
 * Every method is bounded by --budget. Naive sends one request per piece of the matched memory
 * and file regions (FLASH: one per double, about 100,000 per client even at --quick): its
 * requests per client are counted from the pattern and one small request is timed at each
 * delay. Another method that ran at the delay before is estimated from its time there plus its
 * requests at the time this delay adds to each. A method estimated over SKIP_BUDGETS x
 * --budget per op is skipped, and the row says so with the estimate; one whose first write
 * takes longer than that gets no timed repetitions (its figures are that write and the
 * verifying read).
 */
#include "coll_impl.h"
#include "cmds.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#define NRM 7
/* naive is skipped when one op is estimated to take more than this many --budget */
#define SKIP_BUDGETS 4

static const struct {
    const char *name, *method, *threshold;
    int coll;
    unsigned bit; /* its --methods bit */
} rm[NRM] = {
    {"naive", "naive", NULL, 0, 1u << COLL_M_NAIVE},
    {"list", "list", NULL, 0, 1u << COLL_M_LIST},
    {"sieve", "sieve", NULL, 0, 1u << COLL_M_SIEVE},
    {"datatype", "datatype", NULL, 0, 1u << COLL_RM_DATATYPE},
    {"tp-list", "list", "0", 1, 1u << COLL_RM_TP_LIST},
    {"tp-sieve", "list", "1073741824", 1, 1u << COLL_RM_TP_SIEVE},
    {"tp-datatype", "datatype", "0", 1, 1u << COLL_RM_TP_DATATYPE},
};

static unsigned char content(int64_t x)
{
    return (unsigned char)((uint64_t)x * 2654435761u >> 11);
}

/* ----------------------------------------------------------- OSD counters */

/* One admin-socket command; the reply (malloc'ed, NUL-terminated) or NULL. */
static char *asok(const char *path, const char *cmd)
{
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    if (fd < 0 || strlen(path) >= sizeof a.sun_path)
        return NULL;
    strcpy(a.sun_path, path);
    char *out = NULL;
    unsigned char len[4];
    if (connect(fd, (struct sockaddr *)&a, sizeof a) == 0 &&
        write(fd, cmd, strlen(cmd) + 1) == (ssize_t)strlen(cmd) + 1 &&
        recv(fd, len, 4, MSG_WAITALL) == 4) {
        size_t n = (size_t)len[0] << 24 | (size_t)len[1] << 16 | (size_t)len[2] << 8 | len[3];
        out = malloc(n + 1);
        size_t got = 0;
        while (out && got < n) {
            ssize_t k = read(fd, out + got, n - got);
            if (k <= 0)
                break;
            got += (size_t)k;
        }
        if (out)
            out[got] = 0;
    }
    close(fd);
    return out;
}

/* Operations and their execution seconds, summed over the OSDs of the cluster in dir (-1 when
 * an OSD did not answer): op_prepare_latency, from the op's dequeue to its execution done (the
 * object class's run included, the wait for the commit not). It counts every client op; the
 * OSD leaves a class call that changes nothing (a datatype read) out of op_process_latency. */
static void osd_counters(const char *dir, double *ops, double *secs)
{
    *ops = *secs = 0;
    bool bad = false;
    for (int osd = 0; dir && osd < 64; osd++) {
        char path[1200];
        snprintf(path, sizeof path, "%s/run/osd.%d.asok", dir, osd);
        if (access(path, F_OK))
            break;
        char *j = asok(path, "{\"prefix\": \"perf dump\"}");
        const char *p = j ? strstr(j, "\"op_prepare_latency\"") : NULL;
        const char *c = p ? strstr(p, "\"avgcount\":") : NULL, *s = p ? strstr(p, "\"sum\":") : NULL;
        if (c && s) {
            *ops += strtod(c + 11, NULL);
            *secs += strtod(s + 6, NULL);
        } else {
            bad = true;
        }
        free(j);
    }
    if (bad)
        *ops = *secs = -1;
}

/* ----------------------------------------------------------------- a run */

/* Timed repetitions per method and direction, at most. */
#define MAX_REPS 999

typedef struct {
    tess_file *f;
    char path[256];
    double secs[2];      /* median op seconds: [0] write, [1] read */
    double q1[2], q3[2]; /* their quartiles */
    double *t[2];        /* op seconds of each round (0: did not run in that round) */
    double cpu[2];       /* client CPU seconds per op (the process, librados' threads included),
                            mean over the ranks */
    double req[2], acc[2], des[2], reg[2]; /* per client, last repetition */
    double osd_ops[2], osd_s[2];           /* per op, summed over OSDs */
    int ok, ran, reps;   /* reps 0: over budget, the figures are the untimed write and the
                            verifying read (one op each) */
    double est;          /* skipped: the estimated seconds of one op (> SKIP_BUDGETS x --budget) */
    int64_t est_req;     /* and the requests per client it counted */
    char est_how[128];   /* how it was estimated */
} result;

/* Fill the packed data of each call (a function of the file offsets) and unpack into mem. */
static int prepare(const coll_pattern *p, char *mem, unsigned char **packed)
{
    for (int c = 0; c < p->ncalls; c++) {
        const coll_call *k = &p->calls[c];
        const coll_view *v = &p->views[k->view];
        int64_t bytes = k->count * tess_type_size(p->mems[k->mem].t), n, i = 0;
        packed[c] = malloc((size_t)(bytes ? bytes : 1));
        if (!packed[c])
            return -1;
        if (!bytes)
            continue;
        int64_t fs = tess_type_size(v->filetype.t), fe = tess_type_extent(v->filetype.t);
        int64_t start = k->offset * tess_type_size(v->etype.t), k0 = start / fs;
        tess_cursor *cur;
        if (tess_cursor_create(v->filetype.t, (start + bytes - 1) / fs - k0 + 1, &cur) ||
            tess_cursor_seek(cur, start - k0 * fs))
            return -1;
        tess_region r[64];
        while (i < bytes && tess_cursor_next(cur, r, 64, bytes - i, &n) == 0 && n > 0)
            for (int64_t q = 0; q < n; q++)
                for (int64_t b = 0; b < r[q].len; b++)
                    packed[c][i++] = content(v->disp + k0 * fe + r[q].off + b);
        tess_cursor_free(cur);
        if (tess_unpack(packed[c], bytes, mem + k->buf_off, k->count, p->mems[k->mem].t, 0, &n))
            return -1;
    }
    return 0;
}

/* One operation: every call of the pattern (views set where they change). */
static int op(tess_file *f, const coll_pattern *p, char *mem, int write, int coll, int sync)
{
    int view = -1, rc = 0;
    for (int c = 0; c < p->ncalls && rc == 0; c++) {
        const coll_call *k = &p->calls[c];
        if (k->view != view) {
            const coll_view *v = &p->views[k->view];
            if ((rc = tess_file_set_view(f, v->disp, v->etype.t, v->filetype.t)))
                break;
            view = k->view;
        }
        int64_t moved;
        tess_type *mt = p->mems[k->mem].t;
        char *b = mem + k->buf_off;
        if (coll)
            rc = write ? tess_file_write_at_all(f, k->offset, b, k->count, mt, &moved)
                       : tess_file_read_at_all(f, k->offset, b, k->count, mt, &moved);
        else
            rc = write ? tess_file_write_at(f, k->offset, b, k->count, mt, &moved)
                       : tess_file_read_at(f, k->offset, b, k->count, mt, &moved);
    }
    if (rc == 0 && write && sync)
        rc = tess_file_sync(f);
    return rc;
}

/* A barrier that sleeps while it waits: MPI's own polls the CPU, which on a small machine
 * would starve the OSDs while rank 0 calibrates the delay. */
static void quiet_barrier(void)
{
    MPI_Request rq;
    int done = 0;
    MPI_Ibarrier(MPI_COMM_WORLD, &rq);
    while (!done) {
        MPI_Test(&rq, &done, MPI_STATUS_IGNORE);
        if (!done)
            usleep(2000);
    }
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The cluster's ceph.conf: --cluster's, unless a --hint tess_rados_conf=... says otherwise. */
static void set_conf(const coll_opts *o, tess_info *info)
{
    char conf[1100];
    if (o->cluster) {
        snprintf(conf, sizeof conf, "%s/ceph.conf", o->cluster);
        tess_info_set(info, "tess_rados_conf", conf);
    }
    for (int h = 0; h < o->nhints; h++)
        if (strncmp(o->hints[h], "tess_rados_conf=", 16) == 0)
            tess_info_set(info, "tess_rados_conf", o->hints[h] + 16);
}

/* The next run of a cursor's regions (adjacent regions merged; *ahead holds one region read
 * ahead, len 0: none); len 0 at the end. */
static tess_region next_run(tess_cursor *c, tess_region *ahead, int64_t left)
{
    tess_region run = *ahead;
    int64_t n;
    ahead->len = 0;
    if (run.len == 0 && (tess_cursor_next(c, &run, 1, left, &n) || n == 0))
        return (tess_region){0, 0};
    while (run.len < left && tess_cursor_next(c, ahead, 1, left - run.len, &n) == 0 && n > 0) {
        if (ahead->off != run.off + run.len)
            break;
        run.len += ahead->len;
        ahead->len = 0;
    }
    return run;
}

/* The requests per client naive sends for the pattern, estimated: one per piece of the
 * memory-region and file-region streams matched (the larger of the ranks'; pieces that cross
 * an object boundary cost one more each, not counted). */
static int64_t naive_requests(const coll_pattern *p)
{
    int64_t pieces = 0;
    for (int c = 0; c < p->ncalls; c++) {
        const coll_call *k = &p->calls[c];
        const coll_view *v = &p->views[k->view];
        tess_type *mt = p->mems[k->mem].t, *ft = v->filetype.t;
        int64_t bytes = k->count * tess_type_size(mt), fs = tess_type_size(ft);
        if (bytes == 0)
            continue;
        int64_t start = k->offset * tess_type_size(v->etype.t), k0 = start / fs;
        tess_cursor *fc = NULL, *mc = NULL;
        if (tess_cursor_create(ft, (start + bytes - 1) / fs - k0 + 1, &fc) == 0 &&
            tess_cursor_seek(fc, start - k0 * fs) == 0 &&
            tess_cursor_create(mt, k->count, &mc) == 0) {
            tess_region fa = {0, 0}, ma = {0, 0};
            int64_t fl = 0, ml = 0, left = bytes;
            while (left > 0) {
                if (fl == 0 && (fl = next_run(fc, &fa, left).len) == 0)
                    break;
                if (ml == 0 && (ml = next_run(mc, &ma, left).len) == 0)
                    break;
                int64_t piece = fl < ml ? fl : ml;
                fl -= piece, ml -= piece, left -= piece;
                pieces++;
            }
        }
        tess_cursor_free(fc);
        tess_cursor_free(mc);
    }
    int64_t most;
    MPI_Allreduce(&pieces, &most, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
    return most;
}

/* Seconds of one small synchronous write request at the delay set (rank 0 measures, median of
 * 9 one-double writes, every rank gets it). */
static double request_seconds(const coll_env *e, const coll_opts *o)
{
    double t[9] = {0}, med;
    if (e->rank == 0) {
        tess_info *info;
        tess_file *f;
        tess_info_create(&info);
        set_conf(o, info);
        char path[256];
        snprintf(path, sizeof path, "rados:tessera/bench.%s.probe", o->workload);
        if (tess_file_open(path, TESS_RDWR | TESS_CREATE, info, &f) == 0) {
            double x = 1;
            int64_t moved;
            for (int r = 0; r < 9; r++) {
                double t0 = MPI_Wtime();
                tess_file_write_at(f, 8 * r, &x, 1, TESS_DOUBLE, &moved);
                t[r] = MPI_Wtime() - t0;
            }
            tess_file_close(f);
            tess_file_delete(path, info);
        }
        tess_info_free(info);
        qsort(t, 9, sizeof t[0], cmp_d);
    }
    med = t[4];
    MPI_Bcast(&med, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    return med;
}

/* Open method m's file on every rank (its hints, the cluster's conf). */
static int open_method(const coll_env *e, const coll_opts *o, int m, result *res)
{
    snprintf(res->path, sizeof res->path, "rados:tessera/bench.%s", o->workload);
    tess_info *info;
    tess_info_create(&info);
    set_conf(o, info);
    tess_info_set(info, "tess_method", rm[m].method);
    tess_info_set(info, "romio_cb_read", rm[m].coll ? "enable" : "disable");
    tess_info_set(info, "romio_cb_write", rm[m].coll ? "enable" : "disable");
    if (rm[m].threshold)
        tess_info_set(info, "tess_cb_sieve_threshold", rm[m].threshold);
    for (int h = 0; h < o->nhints; h++) {
        char k[256];
        const char *eq = strchr(o->hints[h], '=');
        snprintf(k, sizeof k, "%.*s", (int)(eq - o->hints[h]), o->hints[h]);
        tess_info_set(info, k, eq + 1);
    }
    int rc = tess_file_open_mpi(MPI_COMM_WORLD, res->path, TESS_RDWR | TESS_CREATE, info, &res->f);
    tess_info_free(info);
    if (rc && e->rank == 0)
        fprintf(stderr, "tessera: %s: open %s: %s\n", rm[m].name, res->path, tess_last_error());
    return rc;
}

static double cpu_now(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return (double)(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
           (double)(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

/* One timed op of method m in direction dir (0 write, 1 read) on every rank: the slowest
 * rank's seconds; with counters, the stats and OSD counters of this op into res. */
static double timed_op(const coll_env *e, const coll_pattern *p, const coll_opts *o, int m,
                       int dir, char *mem, result *res, bool counters)
{
    double ops0 = 0, s0 = 0, ops1 = 0, s1 = 0;
    if (counters) {
        tess_file_reset_stats(res->f);
        if (e->rank == 0)
            osd_counters(o->cluster, &ops0, &s0);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    double c0 = cpu_now(), t0 = MPI_Wtime();
    if (op(res->f, p, mem, dir == 0, rm[m].coll, dir == 0))
        res->ok = 0;
    double mine[2] = {MPI_Wtime() - t0, cpu_now() - c0}, all[2];
    MPI_Allreduce(&mine[0], &all[0], 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    MPI_Allreduce(&mine[1], &all[1], 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    res->cpu[dir] += all[1] / e->size;
    if (!counters)
        return all[0];
    if (e->rank == 0)
        osd_counters(o->cluster, &ops1, &s1);
    tess_stats st;
    tess_file_stats(res->f, &st);
    double cnt[4] = {(double)st.server_requests, (double)st.accessed_bytes,
                     (double)st.desired_bytes, (double)st.regions}, sum[4];
    MPI_Allreduce(cnt, sum, 4, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    res->req[dir] = sum[0] / e->size;
    res->acc[dir] = sum[1] / e->size;
    res->des[dir] = sum[2] / e->size;
    res->reg[dir] = sum[3] / e->size;
    bool known = ops0 >= 0 && ops1 >= 0;
    res->osd_ops[dir] = known ? ops1 - ops0 : -1;
    res->osd_s[dir] = known ? s1 - s0 : -1;
    return all[0];
}

/* Bytes per request of settle (a multiple of every usual stripe unit). */
#define SETTLE_CHUNK (4 << 20)

/*
 * Put the file into one storage state that does not depend on which method wrote it last,
 * untimed, on every rank (the view is set to bytes, collectively): rank 0 reads the whole file
 * back in SETTLE_CHUNK requests and writes the same bytes back in SETTLE_CHUNK requests, so that
 * every object ends up written in whole stripe units, as after a bulk load. The reason: the
 * test cluster's memstore keeps every written range of an object as its own buffer piece and a
 * read walks them, so a read would otherwise be timed on the layout the last writer left (list
 * I/O leaves thousands of pieces per object, and a read on them takes several times longer).
 * The bytes are rewritten as read, so a wrong write is still caught by the verifying read.
 * 0 or -1 (on every rank).
 */
static int settle(const coll_env *e, tess_file *f)
{
    int rc = tess_file_set_view(f, 0, TESS_BYTE, TESS_BYTE);
    if (rc == 0 && e->rank == 0) {
        int64_t size = 0, moved;
        char *buf = malloc(SETTLE_CHUNK);
        rc = buf ? tess_file_get_size(f, &size) : -1;
        for (int64_t off = 0; rc == 0 && off < size; off += SETTLE_CHUNK) {
            int64_t n = size - off < SETTLE_CHUNK ? size - off : SETTLE_CHUNK;
            rc = tess_file_read_at(f, off, buf, n, TESS_BYTE, &moved);
            if (rc == 0)
                rc = moved == n ? tess_file_write_at(f, off, buf, n, TESS_BYTE, &moved) : -1;
        }
        if (rc == 0)
            rc = tess_file_sync(f);
        free(buf);
        if (rc)
            fprintf(stderr, "tessera: settling the file: %s\n", tess_last_error());
    }
    return coll_agree(rc == 0) ? 0 : -1;
}

/* Open the file for method m, empty it, write it once (timed, counted: the first estimate of
 * an op), read it back and verify. res->reps: the repetitions it gets at least (run_rounds may add more):
 * --reps where SKIP_BUDGETS x --budget holds them at that op time, at least one; none when the
 * write took more than SKIP_BUDGETS x --budget (the write and the verifying read are its
 * figures then). */
static int setup_method(const coll_env *e, const coll_pattern *p, const coll_opts *o, int m,
                        char *mem, unsigned char **packed, result *res)
{
    res->ok = 1;
    if (open_method(e, o, m, res))
        return 1;
    res->ran = 1;
    if (!coll_agree(e->rank != 0 || tess_file_set_size(res->f, 0) == 0)) {
        if (e->rank == 0)
            fprintf(stderr, "tessera: %s: cannot empty %s: %s\n", rm[m].name, res->path,
                    tess_last_error());
        res->ok = 0;
        return 1;
    }
    double first = timed_op(e, p, o, m, 0, mem, res, true), back = 0;
    memset(mem, 0xEE, (size_t)p->buf_bytes);
    int ok = coll_agree(res->ok) && settle(e, res->f) == 0;
    if (ok)
        back = timed_op(e, p, o, m, 1, mem, res, true);
    ok = ok && res->ok;
    for (int c = 0; ok && c < p->ncalls; c++) {
        const coll_call *k = &p->calls[c];
        int64_t bytes = k->count * tess_type_size(p->mems[k->mem].t), n;
        unsigned char *got = malloc((size_t)(bytes ? bytes : 1));
        ok = got && tess_pack(mem + k->buf_off, k->count, p->mems[k->mem].t, 0, got, bytes,
                              &n) == 0 && memcmp(got, packed[c], (size_t)bytes) == 0;
        free(got);
    }
    if (!res->ok && e->rank == 0)
        fprintf(stderr, "tessera: %s: %s\n", rm[m].name, tess_last_error());
    res->ok = coll_agree(ok);
    res->secs[0] = res->q1[0] = res->q3[0] = first;
    res->secs[1] = res->q1[1] = res->q3[1] = back;
    double most = SKIP_BUDGETS * o->budget / (first > 1e-9 ? first : 1e-9);
    res->reps = first > SKIP_BUDGETS * o->budget || !res->ok ? 0
                : most < 1 ? 1 : most < o->reps ? (int)most : (int)o->reps;
    if (res->reps > 0) { /* the timed repetitions' CPU from here */
        res->cpu[0] = res->cpu[1] = 0;
        for (int dir = 0; dir < 2; dir++)
            res->t[dir] = calloc(MAX_REPS, sizeof(double));
        if (!coll_agree(res->t[0] && res->t[1]))
            res->reps = 0;
    }
    return res->ok ? 0 : 1;
}

/* Close every method's handle, then delete the file (unless --keep). */
static void finish_methods(const coll_env *e, const coll_opts *o, result *res)
{
    const char *path = NULL;
    for (int m = 0; m < NRM; m++)
        if (res[m].f) {
            tess_file_close(res[m].f);
            res[m].f = NULL;
            path = res[m].path;
        }
    MPI_Barrier(MPI_COMM_WORLD);
    if (path && e->rank == 0 && !o->keep) {
        tess_info *info;
        tess_info_create(&info);
        set_conf(o, info);
        tess_file_delete(path, info);
        tess_info_free(info);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* The median and quartiles of the nonzero x[0..n) into med, lo, hi (x is sorted). */
static int quartiles(double *x, int n, double *med, double *lo, double *hi)
{
    qsort(x, (size_t)n, sizeof *x, cmp_d);
    int z = 0;
    while (z < n && x[z] <= 0)
        z++;
    x += z, n -= z;
    if (n > 0)
        *med = x[n / 2], *lo = x[n / 4], *hi = x[(3 * n) / 4];
    return n;
}

/*
 * The timed repetitions of every method set up (res[m].reps > 0), alternating: round r runs
 * each method's write, then each method's read, starting at a method that moves by one every
 * round, so that a slow spell of the machine or the cluster falls on every method alike. A
 * method takes part in a round while it has had fewer than res[m].reps rounds, or fewer than
 * MAX_REPS and its timed ops so far took less than --budget per direction; res[m].reps ends as
 * the rounds it had. Its last round's ops are counted (Table I and the OSD counters; the
 * setup's where no round was).
 */
static void run_rounds(const coll_env *e, const coll_pattern *p, const coll_opts *o,
                       char *mem, result *res)
{
    int act[NRM], k = 0, least[NRM];
    bool written = false; /* the last op was a write: the file is not settled */
    double spent[NRM] = {0};
    for (int m = 0; m < NRM; m++)
        if (res[m].reps > 0) {
            act[k++] = m;
            least[m] = res[m].reps;
            res[m].reps = 0;
        }
    /* the handle settle uses: one that sends an object's extents in one request (naive sends
       one per stripe unit, synchronously) */
    tess_file *sf = k ? res[act[0]].f : NULL;
    for (int j = k - 1; j >= 0; j--)
        if (strcmp(rm[act[j]].method, "naive") != 0)
            sf = res[act[j]].f;
    for (int r = 0; r < MAX_REPS; r++) {
        bool in[NRM] = {false}, any = false;
        for (int j = 0; j < k; j++) {
            int m = act[j];
            in[m] = r < least[m] || spent[m] < 2 * o->budget;
            any |= in[m];
        }
        if (!any)
            break;
        /* counted: a method's round that is likely its last (its time runs out in it, by
         * its mean round so far; round 0 by the first write and read) */
        bool last[NRM];
        for (int j = 0; j < k; j++) {
            int m = act[j];
            double round = r ? spent[m] / r : res[m].secs[0] + res[m].secs[1];
            last[m] = r + 1 == MAX_REPS ||
                      (r + 1 >= least[m] && spent[m] + 2 * round >= 2 * o->budget);
        }
        for (int dir = 0; dir < 2; dir++)
            for (int j = 0; j < k; j++) {
                int m = act[(j + r) % k];
                if (!in[m])
                    continue;
                /* every timed op starts from the same storage state, whoever wrote last */
                if (written && settle(e, sf) != 0)
                    res[m].ok = 0;
                written = dir == 0;
                double t = timed_op(e, p, o, m, dir, mem, &res[m], last[m]);
                res[m].t[dir][r] = t;
                spent[m] += t;
            }
        for (int j = 0; j < k; j++)
            res[act[j]].reps += in[act[j]];
    }
    for (int j = 0; j < k; j++) {
        result *x = &res[act[j]];
        for (int dir = 0; dir < 2; dir++) {
            double sorted[MAX_REPS];
            memcpy(sorted, x->t[dir], sizeof(double) * (size_t)x->reps);
            quartiles(sorted, x->reps, &x->secs[dir], &x->q1[dir], &x->q3[dir]);
            x->cpu[dir] /= x->reps;
        }
    }
}

/* The ratio of other's op time to d's, per round both ran in (median and quartiles into
 * out[0..2]); 0 rounds: the ratio of the medians (quartiles the same). */
static int paired(const result *other, const result *d, int dir, double out[3])
{
    double x[MAX_REPS];
    int n = 0;
    for (int r = 0; other->t[dir] && d->t[dir] && r < other->reps && r < d->reps; r++)
        if (other->t[dir][r] > 0 && d->t[dir][r] > 0)
            x[n++] = other->t[dir][r] / d->t[dir][r];
    if (quartiles(x, n, &out[0], &out[1], &out[2]) == 0)
        out[0] = out[1] = out[2] = other->secs[dir] / d->secs[dir];
    return n;
}

/* Paper 000's I/O operations and data accessed per client (Tables II-IV) for its own
 * parameters: the tile reader (Table II), the 3-D block test at 8 clients (Table III), FLASH I/O
 * (Table IV; no sieving figures there). tp-* rows take the paper's two-phase row. */
typedef struct paper_row {
    const char *w, *m, *ops, *acc;
} paper_row;

static const paper_row *paper(const char *workload, const char *method)
{
    static const paper_row t[] = {
        {"tile", "naive", "768", "2.25M"},         {"tile", "sieve", "2", "5.56M"},
        {"tile", "list", "12", "2.25M"},           {"tile", "datatype", "1", "2.25M"},
        {"tile", "tp", "1", "1.70M"},              {"block3d", "naive", "90,000", "103M"},
        {"block3d", "sieve", "103", "412M"},       {"block3d", "list", "1408", "103M"},
        {"block3d", "datatype", "1", "103M"},      {"block3d", "tp", "26", "103M"},
        {"flash", "naive", "983,040", "7.50M"},    {"flash", "sieve", "-", "-"},
        {"flash", "list", "15,360", "7.50M"},      {"flash", "datatype", "1", "7.50M"},
        {"flash", "tp", "2", "7.50M"},
    };
    static const paper_row none = {"", "", "?", "?"};
    int tp = strncmp(method, "tp-", 3) == 0;
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (strcmp(t[i].w, workload) == 0 && strcmp(t[i].m, tp ? "tp" : method) == 0)
            return &t[i];
    return &none;
}

/* Rank 0: the summary rows of one delay (datatype against list and naive) and its table. */
static void print_delay(const coll_env *e, const coll_opts *o, const coll_pattern *p,
                        const char *delay, const result *res)
{
    FILE *out = o->report->detail;
    double mb = res[3].des[0] * e->size / 1e6;
    for (int dir = 0; dir < 2; dir++) {
        const result *d = &res[3], *l = &res[1], *n = &res[0];
        bench_table *t = o->summary;
        bench_table_cell(t, "%s", p->tag);
        bench_table_cell(t, "%s", delay);
        bench_table_cell(t, "%s", dir ? "read" : "write");
        /* a method not run shows as "-"; one skipped over --budget: "skipped" and the
         * requests it would send; x: the median of the per-round ratios */
        bool dt = d->ran && d->secs[dir] > 0;
        double x[3];
        if (dt)
            bench_table_cell(t, "%.2f", mb / d->secs[dir]);
        else
            bench_table_cell(t, "%s", "-");
        const result *vs[2] = {l, n};
        for (int c = 0; c < 2; c++) {
            if (dt && vs[c]->ran) {
                paired(vs[c], d, dir, x);
                bench_table_cell(t, "%.2fx", x[0]);
            } else {
                bench_table_cell(t, "%s", vs[c]->est > 0 ? "skipped" : "-");
            }
        }
        const result *col[3] = {d, l, n};
        for (int c = 0; c < 3; c++) {
            if (col[c]->ran)
                bench_table_cell(t, "%.0f", col[c]->req[dir]);
            else if (col[c]->est > 0)
                bench_table_cell(t, "%" PRId64, col[c]->est_req);
            else
                bench_table_cell(t, "%s", "-");
        }
        bench_table_end_row(t);
    }
    fprintf(out, "\n== %s on RADOS, %d clients, added delay %s us\n", p->tag, e->size, delay);
    fprintf(out, "  %-12s %9s %9s %10s %10s %9s %9s %9s %17s %17s %9s %9s %s\n", "method",
            "w MB/s", "r MB/s", "desired/c", "accessed/c", "req/c w", "req/c r", "regions/c",
            "osd w: ops s/op", "osd r: ops s/op", "paper ops", "paper acc", "check");
    for (int m = 0; m < NRM; m++) {
        const result *r = &res[m];
        if (r->est > 0) {
            fprintf(out, "  %-12s skipped: about %s = %.0f s per op > %d x --budget %.3g s\n",
                    rm[m].name, r->est_how, r->est, SKIP_BUDGETS, o->budget);
            continue;
        }
        if (!r->ran) {
            fprintf(out, "  %-12s (not run)\n", rm[m].name);
            continue;
        }
        char osd[2][48];
        for (int dir = 0; dir < 2; dir++) {
            if (r->osd_ops[dir] < 0)
                snprintf(osd[dir], sizeof osd[dir], "n/a");
            else
                snprintf(osd[dir], sizeof osd[dir], "%.0f %.4f", r->osd_ops[dir], r->osd_s[dir]);
        }
        const paper_row *pr = paper(o->workload, rm[m].name);
        fprintf(out, "  %-12s %9.2f %9.2f %10.0f %10.0f %9.0f %9.0f %9.0f %17s %17s %9s %9s %s\n",
                rm[m].name, mb / r->secs[0], mb / r->secs[1], r->des[1], r->acc[1], r->req[0],
                r->req[1], r->reg[1], osd[0], osd[1], pr->ops, pr->acc,
                r->ok ? "ok" : "WRONG");
    }
    /* the spread: repetitions, op times, client CPU, and each method against datatype per
     * round (the methods alternate, so a ratio's quartiles show how much noise there is) */
    fprintf(out, "  %-12s %5s %27s %27s %17s %23s %23s\n", "method", "reps",
                 "write ms: median [q1-q3]", "read ms: median [q1-q3]", "cpu ms/op w r",
                 "x datatype w [q1-q3]", "x datatype r [q1-q3]");
    for (int m = 0; m < NRM; m++) {
        const result *r = &res[m];
        if (!r->ran || r->est > 0)
            continue;
        char cell[4][48];
        for (int dir = 0; dir < 2; dir++) {
            double x[3];
            snprintf(cell[dir], sizeof cell[dir], "%.3f [%.3f-%.3f]", r->secs[dir] * 1e3,
                     r->q1[dir] * 1e3, r->q3[dir] * 1e3);
            if (res[3].ran && m != 3 && res[3].secs[dir] > 0) {
                int n = paired(r, &res[3], dir, x);
                snprintf(cell[2 + dir], sizeof cell[2 + dir], "%.3fx [%.2f-%.2f] %s", x[0], x[1],
                         x[2], n ? "" : "(medians)");
            } else {
                snprintf(cell[2 + dir], sizeof cell[2 + dir], "-");
            }
        }
        char reps[16];
        snprintf(reps, sizeof reps, "%d", r->reps);
        fprintf(out, "  %-12s %5s %27s %27s %8.3f %8.3f %23s %23s\n", rm[m].name,
                r->reps ? reps : "1*", cell[0], cell[1], r->cpu[0] * 1e3, r->cpu[1] * 1e3,
                cell[2], cell[3]);
    }
    bool over = false;
    for (int m = 0; m < NRM; m++)
        over |= res[m].ran && res[m].reps == 0 && res[m].est == 0;
    if (over)
        fprintf(out, "  1*: its first write took more than %d x --budget %.3g s: no timed "
                     "repetitions, the figures are that write and the verifying read\n",
                SKIP_BUDGETS, o->budget);
}

int coll_run_rados(const coll_env *e, coll_pattern *p, const coll_opts *o, int built)
{
    int failures = 0;
    char *mem = NULL, *save = NULL;
    unsigned char **packed = NULL;
    if (!coll_agree(built)) {
        if (e->rank == 0)
            fprintf(stderr, "tessera: %s: the pattern could not be built (see messages)\n",
                    o->workload);
        coll_pattern_free(p);
        return 1;
    }
    mem = malloc((size_t)(p->buf_bytes ? p->buf_bytes : 1));
    save = malloc((size_t)(p->buf_bytes ? p->buf_bytes : 1));
    packed = calloc((size_t)(p->ncalls ? p->ncalls : 1), sizeof *packed);
    if (!coll_agree(mem && save && packed && prepare(p, mem, packed) == 0)) {
        coll_fail("cannot prepare the data");
        failures = 1;
        goto out;
    }
    memcpy(save, mem, (size_t)p->buf_bytes);
    int64_t naive_req = o->methods & rm[0].bit ? naive_requests(p) : 0;
    result prev[NRM]; /* each method at the delay before */
    double prev_rs = 0;
    memset(prev, 0, sizeof prev);
    FILE *out = e->rank == 0 && o->report ? o->report->detail : NULL;
    if (out)
        fprintf(out, "%s\n%sRADOS: req/c are librados operations per client and operation (one "
                "per object per compound call, size requests included); 'osd w/r' are the "
                "OSDs' own counts per operation (all clients): operations and "
                "op_prepare_latency seconds (execution, class programs included, the wait for "
                "commit not), summed over the OSDs (server time); the rest of an operation's "
                "time is round trips, queueing, commit and the injected delay. 'paper "
                "ops' and 'paper acc' are paper 000's I/O operations and data accessed per "
                "client for its own parameters (Tables II-IV; 3-D block at 8 clients).\n",
                p->title, p->notes);
    for (int di = 0; di < (o->ndelays ? o->ndelays : 1); di++) {
        char delay[32] = "as set";
        if (o->ndelays) {
            snprintf(delay, sizeof delay, "%lld", (long long)o->delays[di]);
            if (e->rank == 0) {
                char report[512];
                if (tess_cluster_delay(o->cluster, (double)o->delays[di], report, sizeof report))
                    fprintf(stderr, "tessera: %s\n", report);
                else if (out)
                    fprintf(out, "\n%s\n", report);
            }
        }
        quiet_barrier();
        result res[NRM];
        memset(res, 0, sizeof res);
        /* skipped where one op is estimated to take longer than SKIP_BUDGETS x --budget:
         * naive by its requests counted from the pattern, at the time of one request at this
         * delay; a method that ran at the delay before, by its time there and its requests at
         * the time this delay adds to each */
        double rs = request_seconds(e, o);
        for (int m = 0; m < NRM; m++) {
            result *x = &res[m];
            if (m == 0 && naive_req > 0) {
                x->est = (double)naive_req * rs, x->est_req = naive_req;
                snprintf(x->est_how, sizeof x->est_how, "%" PRId64 " requests per client x "
                         "%.2f ms", naive_req, rs * 1e3);
            } else if (prev[m].ran && prev[m].est == 0) {
                int64_t n = (int64_t)(prev[m].req[0] > prev[m].req[1] ? prev[m].req[0]
                                                                      : prev[m].req[1]);
                double slow = prev[m].secs[0] > prev[m].secs[1] ? prev[m].secs[0]
                                                                : prev[m].secs[1];
                x->est = slow + (double)n * (rs > prev_rs ? rs - prev_rs : 0), x->est_req = n;
                snprintf(x->est_how, sizeof x->est_how, "%.2f s at the delay before + %" PRId64
                         " requests per client x %.2f ms more", slow, n,
                         (rs > prev_rs ? rs - prev_rs : 0) * 1e3);
            }
            if (prev[m].est > 0) { /* skipped at the delay before too */
                double more = (double)prev[m].est_req * (rs > prev_rs ? rs - prev_rs : 0);
                x->est = prev[m].est + more, x->est_req = prev[m].est_req;
                snprintf(x->est_how, sizeof x->est_how, "%.2f s estimated at the delay before "
                         "+ %" PRId64 " requests per client x %.2f ms more", prev[m].est,
                         x->est_req, more / (double)x->est_req * 1e3);
            }
            if (x->est <= SKIP_BUDGETS * o->budget)
                x->est = 0;
        }
        for (int m = 0; m < NRM; m++) {
            if (!(o->methods & rm[m].bit) || res[m].est > 0)
                continue;
            memcpy(mem, save, (size_t)p->buf_bytes);
            failures += setup_method(e, p, o, m, mem, packed, &res[m]);
        }
        run_rounds(e, p, o, mem, res);
        if (out)
            print_delay(e, o, p, delay, res);
        finish_methods(e, o, res);
        for (int m = 0; m < NRM; m++) {
            free(res[m].t[0]);
            free(res[m].t[1]);
            res[m].t[0] = res[m].t[1] = NULL;
            prev[m] = res[m];
        }
        prev_rs = rs;
    }
out:
    for (int c = 0; packed && c < p->ncalls; c++)
        free(packed[c]);
    free(packed);
    free(mem);
    free(save);
    coll_pattern_free(p);
    return failures ? 1 : 0;
}
