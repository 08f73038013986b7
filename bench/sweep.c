/*
 * sweep.c - `tessera bench sweep`: independent I/O through a vector file view of regions of R
 * data bytes followed by H hole bytes, over the (R, H) grid, reads and writes, one process.
 *
 * Columns, all in one run: every Tessera method (hint tess_method) and `auto`; the MPI
 * library's MPI-IO (MPI_COMM_SELF, MPI_File_set_view) with data sieving enabled and disabled
 * (romio_ds_read / romio_ds_write; OMPIO ignores these hints); and a lower bound, the faster of
 * two hand-written loops on a plain file descriptor: one pread/pwrite per region, and 4 MiB
 * chunks of the extent read into a buffer with the regions copied out (writes: read, copied in,
 * written back; no locks). Memory is one contiguous buffer of the data.
 *
 * Per point: count = min(--data / R, regions of R + H that fit in --max-extent) regions per
 * call. Every implementation uses the point's one file in turn (bench_time_turns): the file is
 * put into the same state before each of its repetitions (bench_turn_file_ready: before writes
 * prefilled with the fill byte in writes of --prefill-write bytes, 1 MiB: large folios, over
 * allocated blocks; before reads the expected image, written back), then the implementation
 * opens it, makes one untimed call (its first turn: the calibration, calls per repetition for
 * >= --min-ms) and its timed calls, and closes it. So every implementation starts from the same
 * page-cache state and no order of file creation favours one (see bench.h). Repetitions
 * alternate between the implementations, each starting one later (a, b, c, ..., then b, c,
 * ..., a, ...); the median is printed as MB/s of data.
 * Page-cache figures: nothing is dropped; the timed writes overwrite pages the untimed call
 * dirtied.
 *
 * Checks: after every turn of writes the file is compared byte for byte with the expected image
 * (holes keep the fill byte); after every turn of reads one more read is compared with the data.
 */
#include "bench.h"

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef TESS_BENCH_MPI
#include <mpi.h>
#endif

enum { MAX_GRID = 8, MAX_REPS = 101, FILL = 0x5A };
#define CHUNK (INT64_C(4) << 20)

typedef enum { K_TESS, K_MPI, K_PREAD, K_CHUNKS } impl_kind;

typedef struct impl {
    const char *name;
    impl_kind kind;
    const char *arg; /* K_TESS: tess_method; K_MPI: romio_ds_* */
} impl;

static const impl impls[] = {
    {"naive", K_TESS, "naive"}, {"sieve", K_TESS, "sieve"},      {"list", K_TESS, "list"},
    {"pmd", K_TESS, "pmd"},     {"auto", K_TESS, "auto"},        {"mpi-ds", K_MPI, "enable"},
    {"mpi-nods", K_MPI, "disable"}, {"pread", K_PREAD, NULL},    {"chunks", K_CHUNKS, NULL},
};
enum { NIMPL = sizeof impls / sizeof impls[0], I_AUTO = 4, I_DS = 5, I_NODS = 6, I_PREAD = 7,
       I_CHUNKS = 8 };

typedef struct sweep_opts {
    int64_t rs[MAX_GRID], hs[MAX_GRID], data, max_extent, prefill;
    int nrs, nhs;
    unsigned ops, methods;
    const char *dir, *results;
    int use_mpi, quick, keep, cpu_time;
    bench_timing timing;
} sweep_opts;

/* One grid point: the data, the expected file, the view. */
typedef struct point {
    int64_t R, H, count, data, extent;
    unsigned char *stream, *image, *rbuf, *filebuf;
    tess_type *ft;
#ifdef TESS_BENCH_MPI
    MPI_Datatype mft;
#endif
} point;

/* One implementation on one point: its file and handle, its timings. */
typedef struct runner {
    const impl *im;
    point *p;
    int write, ran, ok;
    tess_file *f;
    int fd;
    unsigned char *chunk;
#ifdef TESS_BENCH_MPI
    MPI_File fh;
#endif
    double sec;
    int method; /* auto's choice (tess_stats.last_method) */
} runner;

/* ------------------------------------------------------------------ the loops of the bound */

/* Regions [i, j) between memory (stream) and the chunk holding file bytes from region i. */
static void copy_regions(const point *p, unsigned char *chunk, unsigned char *mem, int64_t i,
                         int64_t j, int to_mem)
{
    int64_t R = p->R, RH = p->R + p->H;
    unsigned char *c = chunk, *m = mem + i * R;
#define COPY_LOOP(SZ)                                                                          \
    for (int64_t k = i; k < j; k++, c += RH, m += (SZ))                                        \
        memcpy(to_mem ? m : c, to_mem ? c : m, (SZ));                                          \
    return
    switch (R) {
    case 8: COPY_LOOP(8);
    case 64: COPY_LOOP(64);
    case 1024: COPY_LOOP(1024);
    default: COPY_LOOP((size_t)R);
    }
#undef COPY_LOOP
}

static int full(ssize_t n, int64_t want, const char *what)
{
    return n == (ssize_t)want ? 0 : bench_fail("sweep: %s: %s", what,
                                               n < 0 ? strerror(errno) : "short transfer");
}

static int run_chunks(runner *r, unsigned char *mem)
{
    const point *p = r->p;
    int64_t RH = p->R + p->H, per = (CHUNK - p->R) / RH + 1; /* regions a chunk holds */
    for (int64_t i = 0; i < p->count; i += per) {
        int64_t j = i + per < p->count ? i + per : p->count, lo = i * RH;
        int64_t len = (j - 1) * RH + p->R - lo;
        if ((!r->write || p->H > 0) &&
            full(pread(r->fd, r->chunk, (size_t)len, (off_t)lo), len, "pread"))
            return -1;
        copy_regions(p, r->chunk, mem, i, j, !r->write);
        if (r->write && full(pwrite(r->fd, r->chunk, (size_t)len, (off_t)lo), len, "pwrite"))
            return -1;
    }
    return 0;
}

static int run_pread(runner *r, unsigned char *mem)
{
    const point *p = r->p;
    for (int64_t i = 0; i < p->count; i++) {
        off_t at = (off_t)(i * (p->R + p->H));
        ssize_t n = r->write ? pwrite(r->fd, mem + i * p->R, (size_t)p->R, at)
                             : pread(r->fd, mem + i * p->R, (size_t)p->R, at);
        if (full(n, p->R, r->write ? "pwrite" : "pread"))
            return -1;
    }
    return 0;
}

/* ------------------------------------------------------------------ one call */

static int run_once(void *ctx)
{
    runner *r = ctx;
    point *p = r->p;
    unsigned char *mem = r->write ? p->stream : p->rbuf;
    switch (r->im->kind) {
    case K_TESS: {
        int64_t n = 0;
        int rc = r->write ? tess_file_write_at(r->f, 0, mem, p->data, TESS_BYTE, &n)
                          : tess_file_read_at(r->f, 0, mem, p->data, TESS_BYTE, &n);
        if (rc)
            return bench_tess_fail(rc, r->write ? "tess_file_write_at" : "tess_file_read_at");
        return n == p->data ? 0 : bench_fail("sweep: %s moved %lld of %lld bytes", r->im->name,
                                             (long long)n, (long long)p->data);
    }
    case K_MPI: {
#ifdef TESS_BENCH_MPI
        MPI_Status st;
        int n = 0;
        int rc = r->write ? MPI_File_write_at(r->fh, 0, mem, (int)p->data, MPI_BYTE, &st)
                          : MPI_File_read_at(r->fh, 0, mem, (int)p->data, MPI_BYTE, &st);
        if (rc != MPI_SUCCESS)
            return bench_mpi_fail(rc, r->write ? "MPI_File_write_at" : "MPI_File_read_at");
        MPI_Get_count(&st, MPI_BYTE, &n);
        return n == p->data ? 0 : bench_fail("sweep: %s moved %d of %lld bytes", r->im->name, n,
                                             (long long)p->data);
#else
        return -1;
#endif
    }
    case K_PREAD:
        return run_pread(r, mem);
    case K_CHUNKS:
        return run_chunks(r, mem);
    }
    return -1;
}

/* ------------------------------------------------------------------ set-up */

static void point_free(point *p)
{
    bench_free(p->stream);
    bench_free(p->image);
    bench_free(p->rbuf);
    bench_free(p->filebuf);
    tess_type_free(p->ft);
#ifdef TESS_BENCH_MPI
    if (p->mft != MPI_DATATYPE_NULL)
        MPI_Type_free(&p->mft);
#endif
    memset(p, 0, sizeof *p);
}

static int point_init(point *p, int64_t R, int64_t H, const sweep_opts *o, int mpi)
{
    memset(p, 0, sizeof *p);
#ifdef TESS_BENCH_MPI
    p->mft = MPI_DATATYPE_NULL;
#endif
    p->R = R;
    p->H = H;
    p->count = o->data / R;
    if (p->count * (R + H) - H > o->max_extent)
        p->count = (o->max_extent + H) / (R + H);
    if (p->count < 1)
        p->count = 1;
    p->data = p->count * R;
    p->extent = p->count * (R + H) - H;
    if (p->data > (1 << 30) || p->count > (1 << 30))
        return bench_fail("sweep: %lld regions of %lld bytes: keep a call under 1 GiB",
                          (long long)p->count, (long long)R);
    p->stream = bench_alloc(p->data, 0);
    p->rbuf = bench_alloc(p->data, 0);
    p->image = bench_alloc(p->extent, FILL);
    p->filebuf = bench_alloc(p->extent, 0);
    if (!p->stream || !p->rbuf || !p->image || !p->filebuf)
        return bench_fail("sweep: out of memory for a %lld-byte extent", (long long)p->extent);
    bench_fill_random(p->stream, p->data, (uint64_t)(R * 7919 + H));
    for (int64_t i = 0; i < p->count; i++)
        memcpy(p->image + i * (R + H), p->stream + i * R, (size_t)R);
    int rc = tess_type_vector(p->count, R, R + H, TESS_BYTE, &p->ft);
    if (rc)
        return bench_tess_fail(rc, "tess_type_vector");
#ifdef TESS_BENCH_MPI
    if (mpi && (MPI_Type_vector((int)p->count, (int)R, (int)(R + H), MPI_BYTE, &p->mft) !=
                    MPI_SUCCESS ||
                MPI_Type_commit(&p->mft) != MPI_SUCCESS))
        return bench_fail("sweep: MPI_Type_vector failed");
#else
    (void)mpi;
#endif
    return 0;
}

/* Open the implementation's handle on the point's file (prefilled by the caller). */
static int runner_open(runner *r, const char *path)
{
    const impl *im = r->im;
    r->fd = -1;
    if (im->kind == K_TESS) {
        tess_info *info = NULL;
        int rc = tess_info_create(&info);
        if (rc == 0)
            rc = tess_info_set(info, "tess_method", im->arg);
        if (rc == 0)
            rc = tess_file_open(path, TESS_RDWR, info, &r->f);
        tess_info_free(info);
        if (rc == 0)
            rc = tess_file_set_view(r->f, 0, TESS_BYTE, r->p->ft);
        return rc ? bench_tess_fail(rc, "sweep: open") : 0;
    }
    if (im->kind == K_MPI) {
#ifdef TESS_BENCH_MPI
        MPI_Info info;
        MPI_Info_create(&info);
        MPI_Info_set(info, "romio_ds_read", im->arg);
        MPI_Info_set(info, "romio_ds_write", im->arg);
        int rc = MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_RDWR, info, &r->fh);
        if (rc == MPI_SUCCESS)
            rc = MPI_File_set_view(r->fh, 0, MPI_BYTE, r->p->mft, "native", info);
        MPI_Info_free(&info);
        return rc == MPI_SUCCESS ? 0 : bench_mpi_fail(rc, "sweep: MPI_File_open/set_view");
#else
        return -1;
#endif
    }
    r->fd = open(path, O_RDWR);
    if (r->fd < 0)
        return bench_fail("sweep: open %s: %s", path, strerror(errno));
    if (im->kind == K_CHUNKS && !(r->chunk = bench_alloc(CHUNK, 0)))
        return bench_fail("sweep: out of memory");
    return 0;
}

/* Close the implementation's handle (the file stays for the next turn). */
static void runner_close(runner *r)
{
    if (r->f) {
        int rc = tess_file_close(r->f);
        if (rc)
            bench_tess_fail(rc, "tess_file_close");
        r->f = NULL;
    }
#ifdef TESS_BENCH_MPI
    if (r->im->kind == K_MPI && r->fh != MPI_FILE_NULL)
        MPI_File_close(&r->fh);
#endif
    if (r->fd >= 0)
        close(r->fd);
    r->fd = -1;
    bench_free(r->chunk);
    r->chunk = NULL;
}

/* The file against the expected image. */
static int file_ok(const point *p, const char *path)
{
    int fd = open(path, O_RDONLY);
    int ok = fd >= 0 && bench_read_full(fd, p->filebuf, p->extent, 0) == 0 &&
             memcmp(p->filebuf, p->image, (size_t)p->extent) == 0;
    if (fd >= 0)
        close(fd);
    return ok;
}

/* ------------------------------------------------------------------ timing */

/* One direction of a point in turns on the point's one file (bench_time_turns). */
typedef struct turns_ctx {
    runner *rn;
    const point *p;
    bench_turn_file *file;
    const char *path;
    int write;
} turns_ctx;

/* Before a turn: the file as every implementation gets it (bench_turn_file_ready: the fill
 * byte for writes, the expected image for reads) and this implementation's handle on it. */
static int turn_begin(void *v, int i)
{
    turns_ctx *c = v;
    int rc = bench_turn_file_ready(c->file, c->write);
    if (rc == 0 && (rc = runner_open(&c->rn[i], c->path)) != 0)
        runner_close(&c->rn[i]);
    return rc;
}

/* After a turn: check the file written or the data read (every turn), after the last one
 * note auto's choice; close the handle. */
static int turn_end(void *v, int i, int last)
{
    turns_ctx *c = v;
    runner *r = &c->rn[i];
    const point *p = c->p;
    if (c->write) {
        r->ok = r->ok && file_ok(p, c->path);
    } else {
        memset(p->rbuf, 0, (size_t)p->data);
        r->ok = r->ok && run_once(r) == 0 && memcmp(p->rbuf, p->stream, (size_t)p->data) == 0;
    }
    tess_stats s;
    if (last && r->f) {
        tess_file_reset_stats(r->f);
        if (run_once(r) == 0 && tess_file_stats(r->f, &s) == 0)
            r->method = (int)s.last_method;
    }
    runner_close(r);
    return 0;
}

/* Time the selected runners on one direction, in turns on the point's file. */
static void time_runners(runner *rn, const bool *on, const sweep_opts *o, bench_turn_file *file,
                         int write)
{
    bench_fn fn[NIMPL];
    void *ctx[NIMPL];
    double sec[NIMPL];
    turns_ctx tc = {.rn = rn, .p = rn[0].p, .file = file, .path = file->path, .write = write};
    bench_turns turns = {.begin = turn_begin, .end = turn_end, .ctx = &tc};
    for (int i = 0; i < NIMPL; i++) {
        fn[i] = on[i] ? run_once : NULL;
        ctx[i] = &rn[i];
        rn[i].write = write;
        rn[i].ok = 1;
    }
    bench_time_turns(NIMPL, fn, ctx, &o->timing, &turns, sec);
    for (int i = 0; i < NIMPL; i++) {
        rn[i].ran = sec[i] > 0;
        rn[i].sec = sec[i];
    }
}

/* ------------------------------------------------------------------ report */

typedef struct tally {
    int points, beat_romio, near_bound, have_romio;
    double worst_romio, worst_bound;
} tally;

static double mbs(const point *p, const runner *r) { return r->ran ? p->data / r->sec / 1e6 : 0; }

/* The summary line of one point and direction, and the targets. */
static void summarize(bench_table *sum, const point *p, runner *rn, int write, tally *ty)
{
    char b[64];
    double a = mbs(p, &rn[I_AUTO]), ds = mbs(p, &rn[I_DS]), nods = mbs(p, &rn[I_NODS]);
    double romio = ds > nods ? ds : nods, pr = mbs(p, &rn[I_PREAD]), ch = mbs(p, &rn[I_CHUNKS]);
    double bound = pr > ch ? pr : ch, best = 0;
    int bi = -1;
    for (int i = 0; i < I_DS; i++)
        if (mbs(p, &rn[i]) > best) {
            best = mbs(p, &rn[i]);
            bi = i;
        }
    bench_table_cell(sum, "%lld", (long long)p->R);
    bench_table_cell(sum, "%lld", (long long)p->H);
    bench_table_cell(sum, "%s", write ? "write" : "read");
    bench_table_cell(sum, "%.1f", a);
    bench_table_cell(sum, "%s", rn[I_AUTO].ran ? tess_method_name(rn[I_AUTO].method) : "-");
    bench_table_cell(sum, "%s", romio > 0 && a > 0 ? (snprintf(b, sizeof b, "%.2fx", a / romio), b)
                                                   : "n/a");
    bench_table_cell(sum, "%s", bound > 0 && a > 0 ? (snprintf(b, sizeof b, "%.2fx", a / bound), b)
                                                   : "n/a");
    bench_table_cell(sum, "%s", bi >= 0 ? (snprintf(b, sizeof b, "%s %.2fx", impls[bi].name,
                                                    a > 0 ? best / a : 0), b) : "-");
    bench_table_end_row(sum);
    if (a <= 0)
        return;
    ty->points++;
    if (romio > 0) {
        ty->have_romio++;
        ty->beat_romio += a >= romio;
        if (ty->have_romio == 1 || a / romio < ty->worst_romio)
            ty->worst_romio = a / romio;
    }
    if (bound > 0) {
        ty->near_bound += a >= 0.8 * bound;
        if (ty->points == 1 || a / bound < ty->worst_bound)
            ty->worst_bound = a / bound;
    }
}

/* The detail row: every implementation's MB/s and check. */
static void detail(bench_table *tab, const point *p, const runner *rn, const bool *on, int write,
                   const bench_report *rep)
{
    char name[64];
    snprintf(name, sizeof name, "R%lld H%lld", (long long)p->R, (long long)p->H);
    bench_table_cell(tab, "%lld", (long long)p->R);
    bench_table_cell(tab, "%lld", (long long)p->H);
    bench_table_cell(tab, "%lld", (long long)p->count);
    bench_table_cell(tab, "%s", write ? "write" : "read");
    bool ok = true;
    for (int i = 0; i < NIMPL; i++) {
        if (!on[i]) {
            bench_table_cell(tab, "%s", "-");
            continue;
        }
        if (!rn[i].ran) {
            bench_table_cell(tab, "%s", "error");
            ok = false;
            continue;
        }
        bench_table_cell(tab, "%.1f", mbs(p, &rn[i]));
        ok = ok && rn[i].ok;
        bench_result(rep, name, impls[i].name, impls[i].kind == K_MPI, write, rn[i].sec,
                     (double)p->data, rn[i].ok ? "ok" : "FAIL");
    }
    bench_table_cell(tab, "%s", ok ? "ok" : "FAIL");
    bench_table_end_row(tab);
}

/* ------------------------------------------------------------------ the command */

/* One point, both directions. Returns the number of failed implementations. */
static int run_point(const sweep_opts *o, const bench_mpi *m, int64_t R, int64_t H,
                     bench_table *sum, bench_table *tab, const bench_report *rep, tally *ty)
{
    point p;
    runner rn[NIMPL];
    bool on[NIMPL];
    int failures = 0;
    if (point_init(&p, R, H, o, m->active)) {
        point_free(&p);
        return 1;
    }
    char path[1200];
    snprintf(path, sizeof path, "%s/tessera-sweep-%ld.dat", o->dir, (long)getpid());
    bench_turn_file file = {.path = path, .dir = o->dir, .size = p.extent, .piece = o->prefill,
                            .fill = FILL, .image = p.image};
    for (int i = 0; i < NIMPL; i++) {
        memset(&rn[i], 0, sizeof rn[i]);
        rn[i].im = &impls[i];
        rn[i].p = &p;
        rn[i].fd = -1;
#ifdef TESS_BENCH_MPI
        rn[i].fh = MPI_FILE_NULL;
#endif
        on[i] = impls[i].kind == K_TESS ? ((o->methods >> i) & 1u) != 0
              : impls[i].kind == K_MPI ? m->active != 0 : true;
    }
    for (int w = 1; w >= 0; w--) {
        if (!((o->ops >> w) & 1u))
            continue;
        time_runners(rn, on, o, &file, w);
        for (int i = 0; i < NIMPL; i++)
            failures += on[i] && (!rn[i].ran || !rn[i].ok);
        summarize(sum, &p, rn, w, ty);
        detail(tab, &p, rn, on, w, rep);
    }
    if (!o->keep)
        unlink(path);
    point_free(&p);
    return failures;
}

static const bench_choice op_choices[] = {{"read", 1}, {"write", 2}, {NULL, 0}};
static const bench_choice method_choices[] = {
    {"naive", 1}, {"sieve", 2}, {"list", 4}, {"pmd", 8}, {"auto", 16}, {NULL, 0}};

int bench_sweep_main(int argc, char **argv)
{
    sweep_opts o = {.dir = bench_default_dir(), .use_mpi = 1};
    int64_t reps = 0;
    bench_opt opts[] = {
        {.name = "r", .kind = BENCH_OPT_SIZES, .dst = o.rs, .cap = MAX_GRID, .n = &o.nrs,
         .min = 1, .arg = "LIST", .help = "data bytes per region (k suffix)",
         .def = "8,64,1024"},
        {.name = "h", .kind = BENCH_OPT_SIZES, .dst = o.hs, .cap = MAX_GRID, .n = &o.nhs,
         .min = 0, .arg = "LIST", .help = "hole bytes after each region (k suffix)",
         .def = "8,64,1024,16k"},
        {.name = "data", .kind = BENCH_OPT_SIZE, .dst = &o.data, .min = 1, .max = 1 << 30,
         .arg = "BYTES", .help = "data bytes per call (at most; see --max-extent)",
         .def = "1m", .quick = "256k"},
        {.name = "max-extent", .kind = BENCH_OPT_SIZE, .dst = &o.max_extent, .min = 1,
         .arg = "BYTES", .help = "file extent per call, at most (fewer regions then)",
         .def = "64m", .quick = "16m"},
        {.name = "ops", .kind = BENCH_OPT_SET, .dst = &o.ops, .arg = "LIST",
         .choices = op_choices, .help = "directions", .def = "read,write"},
        {.name = "methods", .kind = BENCH_OPT_SET, .dst = &o.methods, .arg = "LIST",
         .choices = method_choices, .help = "Tessera methods (hint tess_method)",
         .def = "naive,sieve,list,pmd,auto"},
        BENCH_OPT_DIR(&o.dir),
        BENCH_OPT_PREFILL(&o.prefill),
        BENCH_OPT_REPS(&reps, MAX_REPS, "3"),
        BENCH_OPT_MIN_MS(&o.timing.min_rep_sec, "20", "5"),
        BENCH_OPT_KEEP(&o.keep),
        BENCH_OPT_NO_MPI(&o.use_mpi, "do not initialize MPI (the MPI-IO columns are left out)"),
        BENCH_OPT_CPU_TIME(&o.cpu_time),
        BENCH_OPT_RESULTS(&o.results),
        BENCH_OPT_QUICKLY(&o.quick, "less data per call, fewer and shorter repetitions"),
    };
    const bench_command cmd = {
        .name = "sweep", .opts = opts, .nopts = BENCH_NOPTS(opts),
        .about = "  Independent reads and writes through a vector view of R-byte regions and H-byte\n"
                 "  holes, over the (R, H) grid: every Tessera method, auto, MPI-IO with data\n"
                 "  sieving enabled and disabled, and a lower bound. Page-cache figures.\n"};
    int status = bench_parse(&cmd, argc, argv, 0);
    if (status >= 0)
        return status;
    o.timing.reps = (int)reps;
    bench_use_cpu_clock(o.cpu_time);

    bench_mpi m;
    bench_report rep;
    if (bench_mpi_init(&m, o.use_mpi, NULL, NULL) != 0)
        return 1;
    int failures = 0;
    if (m.rank != 0 || bench_report_begin(&rep, "sweep", o.results) != 0) {
        failures = m.rank != 0 ? 0 : 1;
        goto out;
    }
    const char *io = getenv("OMPI_MCA_io");
    printf("tessera bench sweep: reads and writes through a vector view, R data and H hole bytes"
           " per region, one process, files in %s\n", o.dir);
    printf("  page-cache figures: one file per point, used by every implementation in turn: "
           "before each repetition it is put into the same state (prefilled in %lld-byte writes "
           "with the fill byte before writes; the data, written back, before reads), then one "
           "untimed call and the timed calls, no sync and no cache drop; MB/s = 1e6 data bytes "
           "per second, median of %d repetitions of >= %.0f ms, implementations alternating, "
           "each repetition starting one later\n", (long long)o.prefill, o.timing.reps,
           o.timing.min_rep_sec * 1e3);
    bench_print_machine(stdout);
    printf("  timing: %s\n  MPI: %s%s%s%s\n", bench_clock_name(), m.library,
           io ? " (OMPI_MCA_io=" : "", io ? io : "", io ? ")" : "");
    printf("  per call: min(%lld bytes / R, regions within a %lld-byte extent) regions; memory "
           "contiguous\n", (long long)o.data, (long long)o.max_extent);
    printf("  ROMIO = the better of MPI-IO with romio_ds_* enable and disable; bound = the "
           "faster of a pread/pwrite loop and 4 MiB chunked copies\n");

    static const char *const sum_heads[] = {"R", "H", "op", "auto MB/s", "auto->", "vs ROMIO",
                                            "vs bound", "best method/auto"};
    static const int sum_widths[] = {5, 6, 6, 10, 7, 9, 9, 17};
    static const char *heads[4 + NIMPL + 1] = {"R", "H", "regions", "op"};
    static const int widths[4 + NIMPL + 1] = {5, 6, 8, 6, 9, 9, 9, 9, 9, 9, 9, 9, 9, 6};
    for (int i = 0; i < NIMPL; i++)
        heads[4 + i] = impls[i].name;
    heads[4 + NIMPL] = "check";
    bench_table sum, tab;
    bench_table_init(&sum, stdout, 8, sum_heads, sum_widths);
    bench_table_init(&tab, rep.detail, 4 + NIMPL + 1, heads, widths);
    printf("\nsummary: auto's MB/s and method, auto against ROMIO and the bound (> 1: faster), "
           "the fastest Tessera method against auto\n");
    bench_table_header(&sum);
    fprintf(rep.detail, "every implementation, MB/s\n");
    bench_table_header(&tab);
    tally ty = {0};
    for (int ri = 0; ri < o.nrs; ri++)
        for (int hi = 0; hi < o.nhs; hi++)
            failures += run_point(&o, &m, o.rs[ri], o.hs[hi], &sum, &tab, &rep, &ty);
    printf("\ntargets:\n  auto >= ROMIO (the better setting): %d of %d points (worst %.2fx)\n"
           "  auto >= 0.8 x bound: %d of %d points (worst %.2fx)\n", ty.beat_romio,
           ty.have_romio, ty.worst_romio, ty.near_bound, ty.points, ty.worst_bound);
    if (failures)
        printf("\n%d failure(s): see the check column and the messages above\n", failures);
    bench_report_end(&rep);
out:
    bench_mpi_finalize(&m);
    return failures ? 1 : 0;
}
