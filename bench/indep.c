/*
 * indep.c - `tessera bench indep`: HPIO-style independent noncontiguous I/O.
 *
 * A pattern is `count` regions of `size` bytes separated by `spacing` bytes of hole, in memory
 * (contiguous "c" or noncontiguous "nc") and in the file (c or nc): c-c, nc-c, c-nc, nc-nc as in
 * HPIO. Noncontiguous memory is an hvector memory type; a noncontiguous file is an hvector
 * filetype set with tess_file_set_view (MPI_File_set_view for MPI-IO). Each Tessera method
 * (hint tess_method = naive, sieve, list, pmd, auto) and, when MPI is present, the MPI library's
 * MPI-IO with its defaults (MPI_COMM_SELF) writes the pattern into the case's one file and reads
 * it back; all of them are timed side by side, their repetitions alternating, so that drift in
 * the machine's load hits them alike. Printed per implementation and operation: MB/s
 * (median), ratio to MPI-IO, the paper-000 Table I characteristics of one call
 * (tess_file_stats), and checks: after every write turn the file is compared byte for byte
 * with the expected image and with the reference file (MPI's, or the first method's without
 * MPI); after every read turn one more read is compared with the written data, and holes in a
 * noncontiguous memory buffer must stay untouched.
 *
 * The figures are page-cache figures. The implementations use the case's one file in turns
 * (bench_time_turns): before each repetition of an implementation the file is put into the
 * same state (bench_turn_file_ready: before writes prefilled with the hole byte in writes of
 * --prefill-write bytes; before reads the expected image, written back); the implementation then
 * opens it, makes one untimed call and its timed calls, and closes it. So every implementation
 * starts from the same page-cache state (folio sizes and file creation order weigh on small
 * writes, see bench.h) and no case pays for the writeback of what ran before; the timed calls
 * are not synced and nothing is dropped from the cache.
 */
#include "bench.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifdef TESS_BENCH_MPI
#include <mpi.h>
#endif

enum { MAX_SIZES = 16, NMETHODS = 5 };
/*
 * Every file is pre-filled with this byte over the pattern's extent before the first write, so
 * the holes of a noncontiguous file have a defined content that a read-modify-write must keep.
 * (In a fresh file the holes are undefined for MPI-IO: ROMIO's sieving write fills holes past
 * the end of file with whatever its buffer held.)
 */
#define HOLE_BYTE 0x5A

static const char *const all_methods[NMETHODS] = {"naive", "sieve", "list", "pmd", "auto"};
static const char *const pattern_names[4] = {"c-c", "nc-c", "c-nc", "nc-nc"};

typedef struct indep_opts {
    int64_t sizes[MAX_SIZES];
    int nsizes;
    int64_t count, spacing, prefill;
    unsigned patterns;    /* bit index = mem_nc + 2 * file_nc */
    unsigned methods;     /* bit i: all_methods[i] */
    const char *dir, *results;
    int use_mpi, quick, keep, cpu_time;
    bench_timing timing;
} indep_opts;

/* One pattern at one region size: buffers, types and the expected file image. */
typedef struct pcase {
    int mem_nc, file_nc;
    int64_t size, count, spacing;
    int64_t packed;     /* desired bytes per call: count * size */
    int64_t mem_span;   /* bytes of the memory buffer */
    int64_t file_span;  /* expected file length */
    int64_t prefill;    /* bytes per prefill write (bench_prefill) */
    unsigned char *stream;  /* the packed data stream (count * size random bytes) */
    unsigned char *wbuf;    /* write buffer: stream scattered by the memory layout, holes 0xAB */
    unsigned char *rbuf;    /* read buffer */
    unsigned char *expect;  /* expected file image: zeros with the regions filled */
    unsigned char *filebuf; /* scratch: a file read back */
    unsigned char *refbuf;  /* the reference file's content */
    int have_ref;
    tess_type *tmem, *tfile;
    int64_t tcount;
#ifdef TESS_BENCH_MPI
    MPI_Datatype mmem, mfile;
    int have_mmem, have_mfile;
#endif
    int mcount;
} pcase;

typedef struct result {
    int ran;                 /* timings valid */
    double wsec, rsec;       /* median seconds per call */
    tess_stats ws, rs;       /* one write, one read */
    int have_stats;
    char wcheck[48], rcheck[48];
} result;

/* One line of the closing summary: a pattern at one size, MPI-IO against the methods. */
typedef struct summary {
    int pat;
    int64_t size;
    double mpi_w, mpi_r;                 /* MPI-IO MB/s (0: not run) */
    double auto_w, auto_r;               /* method "auto" MB/s (0: not run) */
    double best_w, best_r;               /* best Tessera method MB/s */
    const char *best_w_name, *best_r_name;
} summary;

/* ------------------------------------------------------------------ helpers */

static const char *fmt_compact(int64_t n, char *buf, size_t cap)
{
    if (n >= (INT64_C(1) << 30) && n % (INT64_C(1) << 30) == 0)
        snprintf(buf, cap, "%lldG", (long long)(n >> 30));
    else if (n >= (INT64_C(1) << 20) && n % (INT64_C(1) << 20) == 0)
        snprintf(buf, cap, "%lldM", (long long)(n >> 20));
    else if (n >= 1024 && n % 1024 == 0)
        snprintf(buf, cap, "%lldK", (long long)(n >> 10));
    else if (n < 1000000)
        snprintf(buf, cap, "%lld", (long long)n);
    else
        snprintf(buf, cap, "%.1fM", (double)n / 1048576.0);
    return buf;
}

/* Offset of memory region i and of file region i. */
static int64_t mem_off(const pcase *p, int64_t i) { return i * (p->mem_nc ? p->size + p->spacing : p->size); }
static int64_t file_off(const pcase *p, int64_t i) { return i * (p->file_nc ? p->size + p->spacing : p->size); }

/* Compare a written file with the expected image and the reference; fill check text. */
static int check_file(pcase *p, const char *path, char *check, size_t cap)
{
    int fd = open(path, O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        if (fd >= 0)
            close(fd);
        snprintf(check, cap, "ERR");
        return bench_fail("indep: open %s: %s", path, strerror(errno));
    }
    int64_t len = (int64_t)st.st_size;
    int rd = len == p->file_span ? bench_read_full(fd, p->filebuf, len, 0) : 0;
    close(fd);
    if (rd != 0) {
        snprintf(check, cap, "ERR");
        return bench_fail("indep: read %s: short", path);
    }
    if (len != p->file_span) {
        snprintf(check, cap, "DIFF(len %lld)", (long long)len);
        return 0;
    }
    for (int64_t i = 0; i < len; i++)
        if (p->filebuf[i] != p->expect[i]) {
            snprintf(check, cap, "DIFF@%lld", (long long)i);
            return 0;
        }
    if (!p->have_ref) {
        memcpy(p->refbuf, p->filebuf, (size_t)len);
        p->have_ref = 1;
        snprintf(check, cap, "OK");
    } else if (memcmp(p->refbuf, p->filebuf, (size_t)len) != 0) {
        snprintf(check, cap, "DIFF(ref)");
    } else {
        snprintf(check, cap, "OK");
    }
    return 0;
}

/* After a read: data regions equal the stream, holes of a noncontiguous buffer untouched. */
static void check_read(const pcase *p, char *check, size_t cap)
{
    int64_t hole_end = 0;
    for (int64_t i = 0; i < p->count; i++) {
        int64_t mo = mem_off(p, i);
        for (int64_t h = hole_end; h < mo; h++)
            if (p->rbuf[h] != 0xEE) {
                snprintf(check, cap, "BAD(hole@%lld)", (long long)h);
                return;
            }
        if (memcmp(p->rbuf + mo, p->stream + i * p->size, (size_t)p->size) != 0) {
            snprintf(check, cap, "BAD(region %lld)", (long long)i);
            return;
        }
        hole_end = mo + p->size;
    }
    snprintf(check, cap, "OK");
}

/* --------------------------------------------------------------- case set-up */

static void pcase_free(pcase *p)
{
    bench_free(p->stream);
    bench_free(p->wbuf);
    bench_free(p->rbuf);
    bench_free(p->expect);
    bench_free(p->filebuf);
    bench_free(p->refbuf);
    tess_type_free(p->tmem);
    tess_type_free(p->tfile);
#ifdef TESS_BENCH_MPI
    if (p->have_mmem)
        MPI_Type_free(&p->mmem);
    if (p->have_mfile)
        MPI_Type_free(&p->mfile);
#endif
    memset(p, 0, sizeof *p);
}

#ifdef TESS_BENCH_MPI
/* The MPI type of one side: MPI_BYTE when contiguous, else count regions of size bytes every
   stride bytes (committed; *own set). */
static int mpi_layout(int nc, int64_t count, int64_t size, int64_t stride, MPI_Datatype *t,
                      int *own)
{
    *t = MPI_BYTE;
    if (!nc)
        return 0;
    if (MPI_Type_create_hvector((int)count, (int)size, (MPI_Aint)stride, MPI_BYTE, t) !=
        MPI_SUCCESS)
        return -1;
    *own = 1;
    return MPI_Type_commit(t) == MPI_SUCCESS ? 0 : -1;
}
#endif

static int pcase_init(pcase *p, int pat, int64_t size, const indep_opts *o, int use_mpi)
{
    memset(p, 0, sizeof *p);
    p->mem_nc = pat & 1;
    p->file_nc = (pat >> 1) & 1;
    p->size = size;
    p->count = o->count;
    p->spacing = o->spacing;
    int64_t stride = size + o->spacing;
    if (__builtin_mul_overflow(size, o->count, &p->packed) ||
        __builtin_mul_overflow(stride, o->count - 1, &p->mem_span) || p->packed > INT_MAX ||
        p->mem_span > INT_MAX - size)
        return bench_fail("indep: pattern too large (%lld x %lld bytes): keep it under 2 GiB",
                          (long long)o->count, (long long)size);
    p->mem_span = p->mem_nc ? (o->count - 1) * stride + size : p->packed;
    p->file_span = p->file_nc ? (o->count - 1) * stride + size : p->packed;
    p->prefill = o->prefill;
    p->stream = bench_alloc(p->packed, 0);
    p->wbuf = bench_alloc(p->mem_span, 0xAB);
    p->rbuf = bench_alloc(p->mem_span, 0xEE);
    p->expect = bench_alloc(p->file_span, HOLE_BYTE);
    p->filebuf = bench_alloc(p->file_span, 0);
    p->refbuf = bench_alloc(p->file_span, 0);
    if (!p->stream || !p->wbuf || !p->rbuf || !p->expect || !p->filebuf || !p->refbuf)
        return bench_fail("indep: out of memory for %lld-byte buffers", (long long)p->mem_span);
    bench_fill_random(p->stream, p->packed, (uint64_t)(pat * 1000003 + size));
    for (int64_t i = 0; i < p->count; i++) {
        memcpy(p->wbuf + mem_off(p, i), p->stream + i * size, (size_t)size);
        memcpy(p->expect + file_off(p, i), p->stream + i * size, (size_t)size);
    }
    int rc;
    if (p->mem_nc) {
        rc = tess_type_hvector(o->count, size, stride, TESS_BYTE, &p->tmem);
        if (rc != 0)
            return bench_tess_fail(rc, "tess_type_hvector (memory)");
        p->tcount = 1;
    } else {
        p->tmem = TESS_BYTE;
        p->tcount = p->packed;
    }
    if (p->file_nc) {
        rc = tess_type_hvector(o->count, size, stride, TESS_BYTE, &p->tfile);
        if (rc != 0)
            return bench_tess_fail(rc, "tess_type_hvector (file)");
    } else {
        p->tfile = TESS_BYTE;
    }
    p->mcount = (int)p->tcount;
#ifdef TESS_BENCH_MPI
    if (use_mpi) {
        if (o->count > INT_MAX || size > INT_MAX)
            return bench_fail("indep: pattern too large for MPI");
        if (mpi_layout(p->mem_nc, o->count, size, stride, &p->mmem, &p->have_mmem) != 0 ||
            mpi_layout(p->file_nc, o->count, size, stride, &p->mfile, &p->have_mfile) != 0)
            return bench_fail("indep: MPI_Type_create_hvector failed");
    }
#else
    (void)use_mpi;
#endif
    return 0;
}

/* --------------------------------------------------------------------- Tessera */

typedef struct tctx {
    pcase *p;
    tess_file *f;
    int write;
} tctx;

/* One call of the case: the write or the read. */
static int op_tess(void *v)
{
    tctx *c = v;
    int64_t bytes = 0;
    int rc = c->write ? tess_file_write_at(c->f, 0, c->p->wbuf, c->p->tcount, c->p->tmem, &bytes)
                      : tess_file_read_at(c->f, 0, c->p->rbuf, c->p->tcount, c->p->tmem, &bytes);
    const char *what = c->write ? "tess_file_write_at" : "tess_file_read_at";
    if (rc != 0)
        return bench_tess_fail(rc, what);
    if (bytes != c->p->packed)
        return bench_fail("%s: moved %lld of %lld bytes", what, (long long)bytes,
                          (long long)c->p->packed);
    return 0;
}

/* Open the case's file (prefilled by the caller) for the method with its view into c->f. */
static int open_tess(tctx *c, const char *method, const char *path)
{
    tess_info *info = NULL;
    int rc = tess_info_create(&info);
    if (rc == 0)
        rc = tess_info_set(info, "tess_method", method);
    if (rc == 0)
        rc = tess_file_open(path, TESS_RDWR | TESS_CREATE, info, &c->f);
    tess_info_free(info);
    if (rc == 0 && (rc = tess_file_set_view(c->f, 0, TESS_BYTE, c->p->tfile)) != 0) {
        tess_file_close(c->f);
        c->f = NULL;
    }
    return rc == 0 ? 0 : bench_tess_fail(rc, "indep: open");
}

/* One call's storage activity in direction write into *st. */
static int count_one(tctx *c, int write, tess_stats *st)
{
    c->write = write;
    tess_file_reset_stats(c->f);
    int rc = op_tess(c);
    if (rc != 0)
        return rc;
    rc = tess_file_stats(c->f, st);
    return rc == 0 ? 0 : bench_tess_fail(rc, "tess_file_stats");
}

/* --------------------------------------------------------------------- MPI-IO */

#ifdef TESS_BENCH_MPI
typedef struct mctx {
    pcase *p;
    MPI_File fh;
    int write;
} mctx;

/* One call of the case through MPI-IO: the write or the read. */
static int op_mpi(void *v)
{
    mctx *c = v;
    MPI_Status st;
    int rc = c->write ? MPI_File_write_at(c->fh, 0, c->p->wbuf, c->p->mcount, c->p->mmem, &st)
                      : MPI_File_read_at(c->fh, 0, c->p->rbuf, c->p->mcount, c->p->mmem, &st);
    const char *what = c->write ? "MPI_File_write_at" : "MPI_File_read_at";
    if (rc != MPI_SUCCESS)
        return bench_mpi_fail(rc, what);
    int n = 0;
    if (MPI_Get_count(&st, MPI_BYTE, &n) != MPI_SUCCESS || n != c->p->packed)
        return bench_fail("%s: moved %d of %lld bytes", what, n, (long long)c->p->packed);
    return 0;
}

/* The MPI-IO hints worth showing (ROMIO's names), from the first file opened. */
static void mpi_hints(MPI_File fh, char *out, size_t cap)
{
    static const char *const keys[] = {"romio_ds_read", "romio_ds_write", "ind_rd_buffer_size",
                                       "ind_wr_buffer_size"};
    MPI_Info info;
    size_t len = 0;
    out[0] = '\0';
    if (MPI_File_get_info(fh, &info) != MPI_SUCCESS)
        return;
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        char val[256];
        int flag = 0;
        if (MPI_Info_get(info, keys[i], (int)sizeof val - 1, val, &flag) == MPI_SUCCESS && flag) {
            int k = snprintf(out + len, cap - len, "%s%s=%s", len ? " " : "", keys[i], val);
            if (k > 0 && (size_t)k < cap - len)
                len += (size_t)k;
        }
    }
    if (len == 0)
        snprintf(out, cap, "(MPI_File_get_info reports none of romio_ds_read/write, ind_rd/wr_buffer_size)");
    MPI_Info_free(&info);
}

/* Open the case's file (prefilled by the caller) for MPI-IO with its view into c->fh; the
 * hints worth showing from the first file opened into hints. */
static int open_mpi(mctx *c, const char *path, char *hints, size_t hcap)
{
    int rc = MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_RDWR | MPI_MODE_CREATE, MPI_INFO_NULL,
                           &c->fh);
    if (rc != MPI_SUCCESS)
        return bench_mpi_fail(rc, "MPI_File_open");
    if (hints && !hints[0])
        mpi_hints(c->fh, hints, hcap);
    rc = MPI_File_set_view(c->fh, 0, MPI_BYTE, c->p->mfile, "native", MPI_INFO_NULL);
    if (rc != MPI_SUCCESS) {
        MPI_File_close(&c->fh);
        return bench_mpi_fail(rc, "MPI_File_set_view");
    }
    return 0;
}
#endif

/* ------------------------------------------------------------------ printing */

static void print_rows(bench_table *t, const char *name, const pcase *p, const result *r,
                       const result *mpi)
{
    char a[32], b[32], c[32], d[32];
    for (int op = 0; op < 2; op++) {
        double sec = op == 0 ? r->wsec : r->rsec;
        double msec = mpi && mpi->ran ? (op == 0 ? mpi->wsec : mpi->rsec) : 0.0;
        const tess_stats *s = op == 0 ? &r->ws : &r->rs;
        bench_table_cell(t, "%s", op == 0 ? name : "");
        bench_table_cell(t, "%s", op == 0 ? "write" : "read");
        if (!r->ran) {
            bench_table_cell(t, "%s", "error (see above)");
            bench_table_end_row(t);
            return;
        }
        bench_table_cell(t, "%.1f", (double)p->packed / sec / 1e6);
        if (mpi == r)
            bench_table_cell(t, "%s", "-");
        else if (msec > 0)
            bench_table_cell(t, "%.2fx", msec / sec);
        else
            bench_table_cell(t, "%s", "n/a");
        if (r->have_stats) {
            bench_table_cell(t, "%s", fmt_compact(s->desired_bytes, a, sizeof a));
            bench_table_cell(t, "%s", fmt_compact(s->accessed_bytes, b, sizeof b));
            bench_table_cell(t, "%lld", (long long)s->io_ops);
            bench_table_cell(t, "%lld", (long long)s->regions);
            bench_table_cell(t, "%lld", (long long)s->lock_ops);
            bench_table_cell(t, "%s", fmt_compact(s->min_access, c, sizeof c));
            bench_table_cell(t, "%s", fmt_compact(s->max_access, d, sizeof d));
        } else {
            for (int i = 0; i < 7; i++)
                bench_table_cell(t, "%s", "-");
        }
        bench_table_cell(t, "%s", op == 0 ? r->wcheck : r->rcheck);
        bench_table_end_row(t);
    }
}

/* One line of the summary (a pattern at one size): MPI-IO's MB/s, then auto and the best Tessera
 * method as Tessera/MPI-IO ratios (MB/s when MPI-IO did not run). */
static void summary_row(bench_table *t, const summary *sm)
{
    char sz[32];
    bench_table_cell(t, "%s", pattern_names[sm->pat]);
    bench_table_cell(t, "%s", fmt_compact(sm->size, sz, sizeof sz));
    for (int op = 0; op < 2; op++) {
        double m = op ? sm->mpi_r : sm->mpi_w, a = op ? sm->auto_r : sm->auto_w;
        double b = op ? sm->best_r : sm->best_w;
        const char *bn = op ? sm->best_r_name : sm->best_w_name;
        if (m > 0)
            bench_table_cell(t, "%.1f", m);
        else
            bench_table_cell(t, "%s", "n/a");
        if (a > 0 && m > 0)
            bench_table_cell(t, "%.2fx", a / m);
        else if (a > 0)
            bench_table_cell(t, "%.1f", a);
        else
            bench_table_cell(t, "%s", "-");
        if (b > 0 && m > 0)
            bench_table_cell(t, "%s %.2fx", bn, b / m);
        else if (b > 0)
            bench_table_cell(t, "%s %.1f", bn, b);
        else
            bench_table_cell(t, "%s", "-");
    }
    bench_table_end_row(t);
}

/* A Tessera method's figures into the case's summary line. */
static void summary_add(summary *sm, const char *method, const pcase *p, const result *r)
{
    double w = (double)p->packed / r->wsec / 1e6, rd = (double)p->packed / r->rsec / 1e6;
    if (strcmp(method, "auto") == 0) {
        sm->auto_w = w;
        sm->auto_r = rd;
    }
    if (w > sm->best_w) {
        sm->best_w = w;
        sm->best_w_name = method;
    }
    if (rd > sm->best_r) {
        sm->best_r = rd;
        sm->best_r_name = method;
    }
}

/* ------------------------------------------------------------------ the command */

static const bench_choice pattern_choices[] = {
    {"c-c", 1}, {"nc-c", 2}, {"c-nc", 4}, {"nc-nc", 8}, {NULL, 0}};
static const bench_choice method_choices[] = {
    {"naive", 1}, {"sieve", 2}, {"list", 4}, {"pmd", 8}, {"auto", 16}, {NULL, 0}};

/* One implementation of a case: MPI-IO (slot 0) or a Tessera method. */
typedef struct slot {
    const char *name;
    bool wanted;
    tctx t;
#ifdef TESS_BENCH_MPI
    mctx m;
#endif
    result r;
    bool stats_w, stats_r; /* one call's counters taken in that direction */
} slot;

enum { NSLOTS = 1 + NMETHODS };

/* The case's one file, which the implementations use in turns (bench_time_turns). */
typedef struct turns_ctx {
    slot *sl;
    pcase *p;
    bench_turn_file *file;
    const char *path;
    int write;
    char *hints;
    size_t hcap;
} turns_ctx;

/* Close slot i's handle; 0 or the error. */
static int close_slot(slot *x, int i)
{
    int rc = 0;
#ifdef TESS_BENCH_MPI
    if (i == 0 && (rc = MPI_File_close(&x->m.fh)) != MPI_SUCCESS)
        rc = bench_mpi_fail(rc, "MPI_File_close");
#endif
    if (i > 0) {
        if ((rc = tess_file_close(x->t.f)) != 0)
            rc = bench_tess_fail(rc, "tess_file_close");
        x->t.f = NULL;
    }
    return rc;
}

/* Before a turn: the file as every implementation gets it (bench_turn_file_ready: the hole
 * byte before writes, the expected image before reads) and this implementation's handle on it
 * with its view. */
static int turn_begin(void *v, int i)
{
    turns_ctx *c = v;
    slot *x = &c->sl[i];
    int rc = bench_turn_file_ready(c->file, c->write);
    if (rc != 0)
        return rc;
#ifdef TESS_BENCH_MPI
    if (i == 0) {
        x->m.write = c->write;
        rc = open_mpi(&x->m, c->path, c->hints, c->hcap);
    }
#endif
    if (i > 0) {
        x->t.write = c->write;
        rc = open_tess(&x->t, x->name, c->path);
    }
    return rc;
}

/* Keep the first failed check of a direction (every turn is checked). */
static void note_check(char *check, size_t cap, const char *now)
{
    if (strcmp(check, "-") == 0 || strcmp(check, "OK") == 0)
        snprintf(check, cap, "%s", now);
}

/* After a turn: one checked read (reads), one call's counters (last turn, Tessera), close the
 * handle, the written file against the expected image and the reference (writes). */
static int turn_end(void *v, int i, int last)
{
    turns_ctx *c = v;
    slot *x = &c->sl[i];
    pcase *p = c->p;
    result *r = &x->r;
    char check[48] = "ERR";
    if (!c->write) {
        memset(p->rbuf, 0xEE, (size_t)p->mem_span);
#ifdef TESS_BENCH_MPI
        if (i == 0 && op_mpi(&x->m) == 0)
            check_read(p, check, sizeof check);
#endif
        if (i > 0 && op_tess(&x->t) == 0)
            check_read(p, check, sizeof check);
        note_check(r->rcheck, sizeof r->rcheck, check);
    }
    if (last && i > 0)
        *(c->write ? &x->stats_w : &x->stats_r) =
            count_one(&x->t, c->write, c->write ? &r->ws : &r->rs) == 0;
    int rc = close_slot(x, i);
    if (c->write) {
        if (check_file(p, c->path, check, sizeof check) != 0)
            rc = -1;
        note_check(r->wcheck, sizeof r->wcheck, check);
    }
    return rc;
}

/* One pattern at one size: MPI-IO (when MPI is present) and every selected method, timed side
 * by side in turns on the case's one file (bench_time_turns): the writes, then the reads;
 * detail rows into tab, the summary line into sum. Returns the number of failures. */
static int run_case(const indep_opts *o, const bench_mpi *m, const bench_report *rep, int pat,
                    int64_t size, bench_table *tab, bench_table *sum, char *hints, size_t hcap)
{
    pcase p;
    if (pcase_init(&p, pat, size, o, m->active) != 0) {
        pcase_free(&p);
        return 1;
    }
    int failures = 0;
    char b1[32], b2[32], b3[32], b4[32], name[64], path[1200];
    fprintf(rep->detail, "\n%s: %lld regions x %s, spacing %s: %s per call, file extent %s\n",
            pattern_names[pat], (long long)p.count, bench_fmt_bytes(p.size, b1, sizeof b1),
            bench_fmt_bytes(p.spacing, b2, sizeof b2), bench_fmt_bytes(p.packed, b3, sizeof b3),
            bench_fmt_bytes(p.file_span, b4, sizeof b4));
    snprintf(name, sizeof name, "%s %s", pattern_names[pat], fmt_compact(size, b1, sizeof b1));
    snprintf(path, sizeof path, "%s/tessera-indep-%ld.dat", o->dir, (long)getpid());
    enum { N = NSLOTS };
    slot sl[N];
    bench_fn fn[N];
    void *ctx[N];
    double wsec[N], rsec[N];
    memset(sl, 0, sizeof sl);
    for (int i = 0; i < N; i++) {
        slot *x = &sl[i];
        x->name = i ? all_methods[i - 1] : "MPI-IO";
        x->t.p = &p;
        snprintf(x->r.wcheck, sizeof x->r.wcheck, "-");
        snprintf(x->r.rcheck, sizeof x->r.rcheck, "-");
        x->wanted = i ? (o->methods & (1u << (i - 1))) != 0 : m->active != 0;
        fn[i] = x->wanted ? op_tess : NULL;
        ctx[i] = &x->t;
#ifdef TESS_BENCH_MPI
        x->m = (mctx){.p = &p, .fh = MPI_FILE_NULL};
        if (i == 0 && x->wanted) {
            fn[i] = op_mpi;
            ctx[i] = &x->m;
        }
#endif
    }
    bench_turn_file file = {.path = path, .dir = o->dir, .size = p.file_span, .piece = p.prefill,
                            .fill = HOLE_BYTE, .image = p.expect};
    turns_ctx tc = {.sl = sl, .p = &p, .file = &file, .path = path, .write = 1, .hints = hints,
                    .hcap = hcap};
    bench_turns turns = {.begin = turn_begin, .end = turn_end, .ctx = &tc};
    bench_time_turns(N, fn, ctx, &o->timing, &turns, wsec); /* a failure leaves its row "error" */
    for (int i = 0; i < N; i++)
        if (wsec[i] <= 0)
            fn[i] = NULL;
    tc.write = 0;
    bench_time_turns(N, fn, ctx, &o->timing, &turns, rsec);
    if (!o->keep)
        unlink(path);
    summary sm = {.pat = pat, .size = size};
    for (int i = 0; i < N; i++) {
        slot *x = &sl[i];
        result *r = &x->r;
        if (!x->wanted)
            continue;
        r->wsec = wsec[i];
        r->rsec = rsec[i];
        r->ran = wsec[i] > 0 && rsec[i] > 0;
        r->have_stats = x->stats_w && x->stats_r;
        print_rows(tab, x->name, &p, r, sl[0].r.ran ? &sl[0].r : NULL);
        if (!r->ran || strcmp(r->wcheck, "OK") != 0 || strcmp(r->rcheck, "OK") != 0)
            failures++;
        if (!r->ran)
            continue;
        bench_result(rep, name, i ? x->name : "mpi-io", i == 0, 1, r->wsec, (double)p.packed,
                     r->wcheck);
        bench_result(rep, name, i ? x->name : "mpi-io", i == 0, 0, r->rsec, (double)p.packed,
                     r->rcheck);
        if (i == 0) {
            sm.mpi_w = (double)p.packed / r->wsec / 1e6;
            sm.mpi_r = (double)p.packed / r->rsec / 1e6;
        } else {
            summary_add(&sm, x->name, &p, r);
        }
    }
    summary_row(sum, &sm);
    pcase_free(&p);
    return failures;
}

int bench_indep_main(int argc, char **argv)
{
    indep_opts o = {.dir = bench_default_dir(), .use_mpi = 1};
    int64_t reps = 0;
    bench_opt opts[] = {
        {.name = "sizes", .kind = BENCH_OPT_SIZES, .dst = o.sizes, .cap = MAX_SIZES,
         .n = &o.nsizes, .min = 1, .arg = "LIST", .help = "region sizes in bytes (k/m suffixes)",
         .def = "8,512,32k", .quick = "64,4k"},
        {.name = "count", .kind = BENCH_OPT_SIZE, .dst = &o.count, .min = 1, .arg = "N",
         .help = "regions per call", .def = "4096", .quick = "256"},
        {.name = "spacing", .kind = BENCH_OPT_SIZE, .dst = &o.spacing, .arg = "N",
         .help = "hole between regions in bytes", .def = "128"},
        {.name = "patterns", .kind = BENCH_OPT_SET, .dst = &o.patterns, .arg = "LIST",
         .choices = pattern_choices, .help = "memory-file layouts",
         .def = "c-c,nc-c,c-nc,nc-nc"},
        {.name = "methods", .kind = BENCH_OPT_SET, .dst = &o.methods, .arg = "LIST",
         .choices = method_choices, .help = "Tessera methods (hint tess_method)",
         .def = "naive,sieve,list,pmd,auto"},
        BENCH_OPT_DIR(&o.dir),
        BENCH_OPT_PREFILL(&o.prefill),
        BENCH_OPT_REPS(&reps, 1000, NULL),
        BENCH_OPT_MIN_MS(&o.timing.min_rep_sec, "20", "1"),
        BENCH_OPT_KEEP(&o.keep),
        BENCH_OPT_NO_MPI(&o.use_mpi, "do not initialize MPI (MPI rows are left out)"),
        BENCH_OPT_CPU_TIME(&o.cpu_time),
        BENCH_OPT_RESULTS(&o.results),
        BENCH_OPT_QUICKLY(&o.quick, "small sizes for the demo"),
    };
    const bench_command cmd = {
        .name = "indep", .opts = opts, .nopts = BENCH_NOPTS(opts),
        .about = "  HPIO-style independent I/O: each Tessera method and MPI-IO write then read\n"
                 "  `count` regions of `size` bytes separated by `spacing` bytes, memory and file each\n"
                 "  contiguous (c) or not (nc). Page-cache figures (no sync).\n"};
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
    if (m.rank != 0 || bench_report_begin(&rep, "indep", o.results) != 0) {
        failures = m.rank != 0 ? 0 : 1;
        goto out;
    }

    char hints[512] = "";
    printf("tessera bench indep: HPIO-style independent I/O, one process, files in %s\n", o.dir);
    printf("  page-cache figures (one file per case, used by every implementation in turn,"
           " prefilled in %lld-byte writes (hole byte before writes, the data before reads) and"
           " written back (syncfs) before each repetition; no sync or cache drop in between);"
           " MB/s = 1e6 desired bytes per second,"
           " median of %d repetitions of >= %.0f ms, buffers warmed, one untimed call first,"
           " implementations alternating (each repetition starting one later)\n",
           (long long)o.prefill, o.timing.reps, o.timing.min_rep_sec * 1e3);
    bench_print_machine(stdout);
    printf("  timing: %s\n", bench_clock_name());
    printf("  MPI: %s%s\n", m.library,
           m.size > 1 ? " (extra ranks idle: this benchmark is single-process)" : "");
#ifdef TESS_BENCH_MPI
    if (m.active) {
        const char *io = getenv("OMPI_MCA_io");
        printf("  MPI-IO: MPI_File_write_at/read_at on MPI_COMM_SELF, library defaults%s%s%s\n",
               io ? " (OMPI_MCA_io=" : "", io ? io : "", io ? ")" : "");
    }
#endif
    printf("  each file is pre-filled with 0x%02X over the pattern's extent: writes must keep the"
           " holes\n", HOLE_BYTE);
    printf("  ratio = Tessera/MPI-IO throughput; Table I columns are one call's "
           "tess_file_stats; check: write = file vs expected image and vs the reference file,"
           " read = data and untouched memory holes\n");

    static const char *const heads[] = {"impl", "op",      "MB/s",   "ratio",   "desired",
                                        "accessed", "io_ops", "regions", "locks", "min_acc",
                                        "max_acc",  "check"};
    static const int widths[] = {6, 5, 9, 7, 8, 9, 7, 7, 6, 7, 7, 5};
    static const char *const sum_heads[] = {"pattern", "size",  "MPI W",  "auto W", "best W",
                                            "MPI R",   "auto R", "best R"};
    static const int sum_widths[] = {7, 6, 9, 7, 13, 9, 7, 13};
    bench_table tab, sum;
    bench_table_init(&tab, rep.detail, 12, heads, widths);
    bench_table_init(&sum, stdout, 8, sum_heads, sum_widths);
    printf("\nsummary: MB/s of MPI-IO; auto and the best Tessera method as Tessera/MPI-IO ratios"
           " (MB/s when MPI-IO did not run)\n");
    bench_table_header(&sum);
    fprintf(rep.detail, "every pattern and size: MB/s, ratio to MPI-IO, one call's Table I counters, checks\n");
    bench_table_header(&tab);
    for (int pat = 0; pat < 4; pat++)
        for (int si = 0; (o.patterns & (1u << pat)) && si < o.nsizes; si++)
            failures += run_case(&o, &m, &rep, pat, o.sizes[si], &tab, &sum, hints, sizeof hints);
    if (hints[0])
        printf("\nMPI-IO hints (first file): %s\n", hints);
    if (failures)
        printf("\n%d failure(s): see the check column and messages above\n", failures);
    bench_report_end(&rep);
out:
    bench_mpi_finalize(&m);
    return failures ? 1 : 0;
}
