/*
 * calibrate.c - measuring the cost model of a storage driver on the storage behind a directory
 * (see model.h).
 *
 * Calibration is a tool, not a method, but it runs through the driver interface like the
 * methods do (tessi_drv_pread, _pwrite, _submit, _lock, _sync, _evict), so any driver can be
 * calibrated and a profile prices what the methods pay: the driver's own calls, batches (an
 * io_uring submission for posix) and locks. The uncached variant uses a second handle opened
 * with TESSI_OPEN_DIRECT where the driver has one (posix: O_DIRECT), else the driver's evict
 * where it can drop and verify the cache, else none; never on memory storage (TESSI_CAP_MEMORY).
 *
 * Each measurement: two warm-up operations, one timed to size a sample to the target time,
 * then `reps` samples of `iters` operations; a parameter is the median over the samples and its
 * spread their range. Two sizes give the start-up and the per-byte time by a straight-line fit
 * (T = s + size * tt); two batch lengths the fixed and per-request cost of a list batch;
 * two iovec counts of one vectored call of small pieces the cost of a memory piece.
 * Operations touch 4 KiB-aligned slots, in file order for the page-cache figures and in a
 * scrambled order for the uncached ones (see next_offset). A write sample starts with the
 * file's pages clean (written back, untimed), an uncached read sample with the file evicted,
 * and neither touches a slot twice: every write dirties a clean page (as writing new data
 * does) and every uncached read misses. The dirty write figures (an overwrite of data written
 * recently) come from the same writes onto a file whose every page was just written (untimed)
 * and is not written back in between.
 */
#include "model/model.h"

#include "driver/driver.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#define SLOT 4096         /* alignment of every access (O_DIRECT needs it) */
#define SMALL_CACHED 64   /* bytes of a small access served from the page cache */
#define SMALL_DEVICE 4096 /* bytes of a small access that reaches the device: one page */
#define BATCH_LO 2        /* list batch lengths of the fit (a batch of one is a plain call) */
#define BATCH_HI 64
#define DT_LO 4           /* regions of the datatype-I/O requests of the fit */
#define DT_HI 1024
#define DT_SIZE 64        /* bytes per region of those requests, every other DT_SIZE bytes */
#define MAX_REPS 16
#define FLOOR 1e-12       /* no fitted parameter goes below this: noise can make a fit negative */

typedef enum { OP_READ, OP_WRITE, OP_COPY, OP_LOCK, OP_BATCH, OP_GATHER, OP_DTIO } op_kind;

typedef struct op {
    op_kind kind;
    tessi_storage *st; /* OP_READ, OP_WRITE: the buffered or the direct handle */
    int64_t size; /* bytes per access (per request of OP_BATCH, per piece of OP_GATHER) */
    int64_t k;    /* requests per batch (OP_BATCH), pieces of one vectored call (OP_GATHER),
                   * regions per request (OP_DTIO) */
    bool write;   /* OP_BATCH, OP_GATHER and OP_DTIO direction */
    const tess_type *type; /* OP_DTIO: k regions of DT_SIZE bytes, DT_SIZE apart */
    bool sync;    /* fdatasync after each operation: a write reaches the device */
    bool fresh;   /* before each sample (untimed), reads: evict the file from the page cache;
                   * writes: write back its dirty pages, so each write dirties clean pages as
                   * new data does; and no slot is touched twice in a sample */
} op;

typedef struct calib {
    const struct tess_driver *drv;
    char path[4200];   /* the temporary file */
    tessi_storage st;  /* buffered handle */
    tessi_storage dst; /* direct handle (TESSI_OPEN_DIRECT) */
    bool st_open, dst_open;
    int64_t fsize;     /* file bytes (a power of two) */
    int64_t big;       /* large access (a power of two dividing fsize) */
    char *buf, *buf2;  /* big bytes each, SLOT-aligned, touched before any timing */
    int reps;
    double target;     /* seconds per sample */
    uint64_t seq;      /* accesses so far: drives the slot order */
    bool scatter;      /* scatter the slots (uncached figures, see next_offset) */
    tessi_io_req reqs[BATCH_HI];
    struct iovec iov[BATCH_HI];
} calib;

/* The next slot for accesses of size bytes: slots are size rounded up to SLOT; their number
 * is a power of two, and any window of that many consecutive accesses visits all of them.
 * Page-cache figures visit them in increasing file order, as an access does its regions: a
 * scattered order costs a small write on a random page of a 128 MiB file about 10 us here
 * against 4-5 us in file order (page walks and cache misses no access of Tessera's pays), and
 * made the full calibration's write.s 2-3 times the quick one's (16 MiB). Uncached figures
 * (c->scatter) scatter the slots by an odd multiplier, so no read is served by read-ahead. */
static int64_t next_offset(calib *c, int64_t size)
{
    int64_t slot = size < SLOT ? SLOT : size;
    uint64_t nslots = (uint64_t)(c->fsize / slot);
    uint64_t i = c->seq++;
    return (int64_t)((c->scatter ? i * 0x9E3779B1u : i) & (nslots - 1)) * slot;
}

/* One operation; 0 or a negative errno. */
static int run_op(calib *c, const op *o)
{
    switch (o->kind) {
    case OP_READ:
    case OP_WRITE: {
        int64_t off = next_offset(c, o->size);
        int64_t n = o->kind == OP_READ ? tessi_drv_pread(o->st, c->buf, o->size, off)
                                       : tessi_drv_pwrite(o->st, c->buf, o->size, off);
        if (n < 0)
            return (int)n;
        if (n != o->size)
            return -EIO;
        break;
    }
    case OP_COPY:
        memcpy(c->buf2, c->buf, (size_t)o->size);
        break;
    case OP_LOCK: {
        int64_t off = next_offset(c, SLOT);
        int rc = tessi_drv_lock(&c->st, off, SLOT, true);
        if (rc)
            return rc;
        return tessi_drv_unlock(&c->st, off, SLOT);
    }
    case OP_BATCH: {
        int64_t slot = o->size < SLOT ? SLOT : o->size;
        for (int64_t i = 0; i < o->k; i++) {
            c->iov[i] = (struct iovec){.iov_base = c->buf + i * slot, .iov_len = (size_t)o->size};
            c->reqs[i] = (tessi_io_req){.off = next_offset(c, o->size), .iov = &c->iov[i],
                                        .niov = 1, .len = o->size};
        }
        int rc = tessi_drv_submit(&c->st, o->write ? TESSI_OP_WRITE : TESSI_OP_READ, c->reqs,
                                  o->k);
        if (rc)
            return rc;
        for (int64_t i = 0; i < o->k; i++)
            if (c->reqs[i].result != o->size)
                return c->reqs[i].result < 0 ? (int)c->reqs[i].result : -EIO;
        break;
    }
    case OP_GATHER: { /* k pieces of memory, SLOT apart, to or from one file range */
        for (int64_t i = 0; i < o->k; i++)
            c->iov[i] = (struct iovec){.iov_base = c->buf + i * SLOT, .iov_len = (size_t)o->size};
        int64_t off = next_offset(c, o->k * o->size);
        int64_t n = o->write ? tessi_drv_pwritev(&c->st, c->iov, o->k, off)
                             : tessi_drv_preadv(&c->st, c->iov, o->k, off);
        if (n < 0)
            return (int)n;
        if (n != o->k * o->size)
            return -EIO;
        break;
    }
    case OP_DTIO: { /* one request: the type's k regions in one stripe unit */
        int64_t off = next_offset(c, 2 * DT_SIZE * o->k), len = DT_SIZE * o->k;
        int64_t n = tessi_drv_dtio(&c->st, o->write ? TESSI_OP_WRITE : TESSI_OP_READ, off,
                                   o->type, 0, len, c->buf);
        if (n < 0)
            return (int)n;
        if (n != len)
            return -EIO;
        break;
    }
    }
    return o->sync ? tessi_drv_sync(&c->st) : 0;
}

static int op_error(const calib *c, const op *o, int neg_errno)
{
    static const char *const names[] = {"read", "write", "memcpy", "lock", "batch", "gather",
                                        "datatype request"};
    return tessi_error(tessi_errno_code(neg_errno), "calibrate: %s of %lld bytes on %s: %s",
                       names[o->kind], (long long)o->size, c->path, strerror(-neg_errno));
}

static bool writes(const op *o)
{
    return o->kind == OP_WRITE ||
           ((o->kind == OP_BATCH || o->kind == OP_GATHER || o->kind == OP_DTIO) && o->write);
}

/* Time `iters` operations, after the untimed preparation of a fresh sample. */
static int sample(calib *c, const op *o, int64_t iters, double *per_op)
{
    int rc = !o->fresh ? 0 : writes(o) ? tessi_drv_sync(&c->st) : tessi_drv_evict(&c->st);
    double t0 = tessi_now();
    for (int64_t i = 0; rc == 0 && i < iters; i++)
        rc = run_op(c, o);
    *per_op = (tessi_now() - t0) / (double)iters;
    return rc;
}

/* c->reps samples of operation o, seconds per operation, into out. */
static int measure(calib *c, const op *o, double *out)
{
    double t1;
    int rc = run_op(c, o);
    if (rc == 0)
        rc = run_op(c, o);
    if (rc == 0)
        rc = sample(c, o, 1, &t1);
    if (rc)
        return op_error(c, o, rc);
    /* a fresh sample must not revisit a slot: at most one sweep of the file's slots */
    int64_t slot = o->kind == OP_DTIO ? 2 * DT_SIZE * o->k : o->size < SLOT ? SLOT : o->size;
    int64_t cap = o->fresh ? c->fsize / slot / (o->kind == OP_BATCH ? o->k : 1) : 1 << 20;
    double want = c->target / (t1 > 1e-9 ? t1 : 1e-9);
    int64_t iters = want < 1 ? 1 : want > (double)cap ? cap : (int64_t)want;
    for (int r = 0; r < c->reps; r++)
        if ((rc = sample(c, o, iters, &out[r])))
            return op_error(c, o, rc);
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* x to 4 significant digits: repetitions of a measurement differ well before the fourth, and
 * the profile stays readable (the nearest double of a 4-digit decimal prints as 4 digits). */
static double round4(double x)
{
    char s[40];
    snprintf(s, sizeof s, "%.4g", x);
    return strtod(s, NULL);
}

/* Parameter id of variant var from per-sample values x[0..n): clamp, median, range. */
static void set_param(tessi_profile *pf, tessi_calib_spread *sp, int var, int id, double *x,
                      int n)
{
    for (int i = 0; i < n; i++)
        if (!(x[i] >= FLOOR))
            x[i] = FLOOR;
    qsort(x, (size_t)n, sizeof *x, cmp_double);
    double med = round4(n % 2 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]));
    tessi_param_set(&pf->model[var], id, med);
    if (sp)
        sp->v[var][id] = (tessi_spread){.med = med, .min = x[0], .max = x[n - 1],
                                        .measured = true};
}

/* Write every byte of the file (untimed): its pages are then dirty. */
static int dirty_all(calib *c)
{
    for (int64_t off = 0; off < c->fsize; off += c->big) {
        int64_t w = tessi_drv_pwrite(&c->st, c->buf, c->big, off);
        if (w != c->big)
            return tessi_error(w < 0 ? tessi_errno_code((int)w) : TESS_ERR_NOSPACE,
                               "calibrate: cannot write %lld bytes to %s: %s",
                               (long long)c->fsize, c->path, w < 0 ? strerror((int)-w)
                                                                   : "short");
    }
    return 0;
}

/*
 * s and tt of one direction from a small and a large access: per sample r,
 * tt = (T_big - T_small) / (big - small) and s = T_small - small * tt. dirty (writes, page
 * cache): onto pages just written, into s_dirty and tt_dirty.
 */
static int measure_dir(calib *c, tessi_profile *pf, tessi_calib_spread *sp, int var, bool write,
                       tessi_storage *st, int64_t small, bool evict, bool sync, bool dirty)
{
    double a[MAX_REPS], b[MAX_REPS], s[MAX_REPS], tt[MAX_REPS];
    op o = {.kind = write ? OP_WRITE : OP_READ, .st = st, .size = small, .sync = sync,
            .fresh = (write && !dirty) || evict};
    int rc = dirty ? dirty_all(c) : 0;
    if (rc)
        return rc;
    rc = measure(c, &o, a);
    o.size = c->big;
    if (rc == 0)
        rc = measure(c, &o, b);
    if (rc)
        return rc;
    for (int r = 0; r < c->reps; r++) {
        tt[r] = (b[r] - a[r]) / (double)(c->big - small);
        s[r] = a[r] - (double)small * (tt[r] > FLOOR ? tt[r] : FLOOR);
    }
    set_param(pf, sp, var, dirty ? TESSI_PARAM_WRITE_S_DIRTY : write ? TESSI_PARAM_WRITE_S
                                                                     : TESSI_PARAM_READ_S,
              s, c->reps);
    set_param(pf, sp, var, dirty ? TESSI_PARAM_WRITE_TT_DIRTY : write ? TESSI_PARAM_WRITE_TT
                                                                      : TESSI_PARAM_READ_TT,
              tt, c->reps);
    return 0;
}

/*
 * Operation o (OP_BATCH or OP_GATHER) with k = BATCH_LO and BATCH_HI, per sample: lo the time
 * of the first, per = the time each of k's units adds beyond its size * tt bytes.
 */
static int measure_per_unit(calib *c, op *o, double tt, double *lo, double *per)
{
    double hi[MAX_REPS];
    o->k = BATCH_LO;
    int rc = measure(c, o, lo);
    o->k = BATCH_HI;
    if (rc == 0)
        rc = measure(c, o, hi);
    for (int r = 0; rc == 0 && r < c->reps; r++)
        per[r] = (hi[r] - lo[r]) / (BATCH_HI - BATCH_LO) - (double)o->size * tt;
    return rc;
}

/*
 * list_call and list_pair of one direction from batches of BATCH_LO and BATCH_HI requests of
 * size bytes: T(k) = call + k * (pair + size * tt), tt being the direction's transfer time.
 */
static int measure_list(calib *c, tessi_profile *pf, tessi_calib_spread *sp, int var,
                        bool write, int64_t size, bool evict, bool sync)
{
    double lo[MAX_REPS], call[MAX_REPS], pair[MAX_REPS];
    double tt = pf->model[var].dir[write].tt;
    op o = {.kind = OP_BATCH, .size = size, .write = write, .sync = sync,
            .fresh = write || evict};
    int rc = measure_per_unit(c, &o, tt, lo, pair);
    if (rc)
        return rc;
    for (int r = 0; r < c->reps; r++)
        call[r] = lo[r] - BATCH_LO * (pair[r] + (double)size * tt);
    set_param(pf, sp, var, write ? TESSI_PARAM_WRITE_LIST_PAIR : TESSI_PARAM_READ_LIST_PAIR,
              pair, c->reps);
    set_param(pf, sp, var, write ? TESSI_PARAM_WRITE_LIST_CALL : TESSI_PARAM_READ_LIST_CALL,
              call, c->reps);
    return 0;
}

/*
 * iov of one direction (page cache) from one vectored call of BATCH_LO and of BATCH_HI memory
 * pieces of size bytes onto one file range: T(k) = s + k * (iov + size * tt).
 */
static int measure_iov(calib *c, tessi_profile *pf, tessi_calib_spread *sp, bool write,
                       int64_t size)
{
    double lo[MAX_REPS], iov[MAX_REPS];
    op o = {.kind = OP_GATHER, .size = size, .write = write};
    int rc = measure_per_unit(c, &o, pf->model[TESSI_CACHED].dir[write].tt, lo, iov);
    if (rc)
        return rc;
    set_param(pf, sp, TESSI_CACHED, write ? TESSI_PARAM_WRITE_IOV : TESSI_PARAM_READ_IOV, iov,
              c->reps);
    return 0;
}

/*
 * dt_call and dt_region of one direction (drivers with datatype I/O) from requests of DT_LO
 * and DT_HI regions of DT_SIZE bytes in one object: T(k) = call + k * (region + DT_SIZE * tt).
 */
static int measure_dtio(calib *c, tessi_profile *pf, tessi_calib_spread *sp, bool write)
{
    double lo[MAX_REPS], hi[MAX_REPS], call[MAX_REPS], region[MAX_REPS];
    double tt = pf->model[TESSI_CACHED].dir[write].tt;
    tess_type *v[2] = {NULL, NULL};
    int rc = tess_type_vector(DT_LO, DT_SIZE, 2 * DT_SIZE, TESS_BYTE, &v[0]);
    if (rc == 0)
        rc = tess_type_vector(DT_HI, DT_SIZE, 2 * DT_SIZE, TESS_BYTE, &v[1]);
    op o = {.kind = OP_DTIO, .k = DT_LO, .type = v[0], .write = write, .fresh = write};
    if (rc == 0)
        rc = measure(c, &o, lo);
    o.k = DT_HI;
    o.type = v[1];
    if (rc == 0)
        rc = measure(c, &o, hi);
    tess_type_free(v[0]);
    tess_type_free(v[1]);
    if (rc)
        return rc;
    for (int r = 0; r < c->reps; r++) {
        region[r] = (hi[r] - lo[r]) / (DT_HI - DT_LO) - DT_SIZE * tt;
        call[r] = lo[r] - DT_LO * (region[r] + DT_SIZE * tt);
    }
    set_param(pf, sp, TESSI_CACHED, write ? TESSI_PARAM_WRITE_DT_REGION : TESSI_PARAM_READ_DT_REGION,
              region, c->reps);
    set_param(pf, sp, TESSI_CACHED, write ? TESSI_PARAM_WRITE_DT_CALL : TESSI_PARAM_READ_DT_CALL,
              call, c->reps);
    return 0;
}

/* memcpy per byte and the lock pair (the same for both variants: they do not touch storage
 * data). Sets locks = false, not measured, where the storage refuses locks. */
static int measure_memory_and_locks(calib *c, tessi_profile *pf, tessi_calib_spread *sp)
{
    double x[MAX_REPS];
    op o = {.kind = OP_COPY, .size = c->big};
    int rc = measure(c, &o, x);
    if (rc)
        return rc;
    for (int r = 0; r < c->reps; r++)
        x[r] /= (double)c->big;
    set_param(pf, sp, TESSI_CACHED, TESSI_PARAM_MC, x, c->reps);

    rc = tessi_drv_lock(&c->st, 0, SLOT, true);
    if (tessi_lock_unsupported(rc)) {
        pf->model[TESSI_CACHED].locks = false;
        pf->model[TESSI_CACHED].lock = 0;
        return 0;
    }
    if (rc == 0)
        rc = tessi_drv_unlock(&c->st, 0, SLOT);
    if (rc)
        return tessi_error(tessi_errno_code(rc), "calibrate: lock on %s: %s", c->path,
                           strerror(-rc));
    o = (op){.kind = OP_LOCK, .size = SLOT};
    if ((rc = measure(c, &o, x)))
        return rc;
    set_param(pf, sp, TESSI_CACHED, TESSI_PARAM_LOCK, x, c->reps);
    return 0;
}

/* Does the driver batch here? (The ring may be unavailable, e.g. in a sandbox.) */
static bool driver_batches(calib *c)
{
    op o = {.kind = OP_BATCH, .size = SMALL_CACHED, .k = BATCH_LO};
    return run_op(c, &o) == 0;
}

/* The storage, date and machine of the profile. */
static void describe(calib *c, const char *dir, tessi_profile *pf)
{
    char real[4096], host[128] = "?", fs[128] = "?";
    struct utsname u;
    if (!realpath(dir, real))
        snprintf(real, sizeof real, "%s", dir);
    if (c->drv->describe)
        c->drv->describe(c->st.h, fs, sizeof fs);
    snprintf(pf->driver, sizeof pf->driver, "%s", c->drv->name);
    snprintf(pf->storage, sizeof pf->storage, "%.880s (%.127s)", real, fs);
    time_t t = time(NULL);
    struct tm tm;
    if (gmtime_r(&t, &tm))
        strftime(pf->date, sizeof pf->date, "%Y-%m-%dT%H:%M:%SZ", &tm);
    gethostname(host, sizeof host - 1);
    if (uname(&u) == 0)
        snprintf(pf->machine, sizeof pf->machine, "%.100s %.20s %.40s %.20s, %ld CPUs", host,
                 u.sysname, u.release, u.machine, sysconf(_SC_NPROCESSORS_ONLN));
}

/* Create the temporary file through the driver and fill it (this leaves it cached). */
static int setup(calib *c, const char *dir)
{
    int rc = -EEXIST;
    for (int k = 0; rc == -EEXIST && k < 100; k++) {
        int n = snprintf(c->path, sizeof c->path, "%s/.tessera-calibrate-%ld-%d", dir,
                         (long)getpid(), k);
        if (n < 0 || (size_t)n >= sizeof c->path)
            return tessi_error(TESS_ERR_ARG, "calibrate: directory name too long");
        rc = tessi_drv_open(&c->st, c->drv, c->path, TESS_RDWR | TESS_CREATE | TESS_EXCL, NULL);
    }
    if (rc)
        return tessi_error(tessi_errno_code(rc), "calibrate: cannot create a file in %s with "
                           "the %s driver: %s", dir, c->drv->name, strerror(-rc));
    c->st_open = true;
    if (posix_memalign((void **)&c->buf, SLOT, (size_t)c->big) != 0 ||
        posix_memalign((void **)&c->buf2, SLOT, (size_t)c->big) != 0)
        return tessi_error(TESS_ERR_NOMEM, "calibrate: cannot allocate %lld-byte buffers",
                           (long long)c->big);
    for (int64_t i = 0; i < c->big; i++)
        c->buf[i] = (char)(i * 131 + 7);
    memset(c->buf2, 0, (size_t)c->big);
    if ((rc = dirty_all(c)))
        return rc;
    if ((rc = tessi_drv_sync(&c->st)))
        return tessi_error(tessi_errno_code(rc), "calibrate: sync %s: %s", c->path,
                           strerror(-rc));
    return 0;
}

/* A direct handle works here: it opens and an aligned read succeeds. */
static bool open_direct(calib *c)
{
    if (tessi_drv_open(&c->dst, c->drv, c->path, TESS_RDWR | TESSI_OPEN_DIRECT, NULL))
        return false;
    c->dst_open = true;
    return (c->dst.caps & TESSI_CAP_DIRECT) && tessi_drv_pread(&c->dst, c->buf, SLOT, 0) == SLOT;
}

/* The uncached variant (mode already chosen). mc and the lock are the cached ones. */
static int measure_uncached(calib *c, tessi_profile *pf, tessi_calib_spread *sp, bool drop_ok)
{
    bool direct = pf->uncached == TESSI_UNCACHED_DIRECT;
    tessi_storage *st = direct ? &c->dst : &c->st;
    tessi_model *u = &pf->model[TESSI_UNCACHED];
    const tessi_model *k = &pf->model[TESSI_CACHED];
    c->scatter = true;
    int rc = measure_dir(c, pf, sp, TESSI_UNCACHED, false, st, SMALL_DEVICE, !direct, false,
                         false);
    if (rc == 0)
        rc = measure_dir(c, pf, sp, TESSI_UNCACHED, true, st, SMALL_DEVICE, false, !direct,
                         false);
    if (rc)
        return rc;
    /* uncached writes reach the device: an overwrite costs what new data does */
    u->dir[1].s_dirty = u->dir[1].s;
    u->dir[1].tt_dirty = u->dir[1].tt;
    u->mc = k->mc;
    u->lock = k->lock;
    u->locks = k->locks;
    u->batched = k->batched;
    for (int w = 0; w < 2; w++) { /* datatype requests: as cached (they run in the servers) */
        u->dir[w].dt_call = k->dir[w].dt_call;
        u->dir[w].dt_region = k->dir[w].dt_region;
    }
    if (sp) {
        sp->v[TESSI_UNCACHED][TESSI_PARAM_MC] = sp->v[TESSI_CACHED][TESSI_PARAM_MC];
        sp->v[TESSI_UNCACHED][TESSI_PARAM_LOCK] = sp->v[TESSI_CACHED][TESSI_PARAM_LOCK];
        sp->v[TESSI_UNCACHED][TESSI_PARAM_READ_IOV] = sp->v[TESSI_CACHED][TESSI_PARAM_READ_IOV];
        sp->v[TESSI_UNCACHED][TESSI_PARAM_WRITE_IOV] =
            sp->v[TESSI_CACHED][TESSI_PARAM_WRITE_IOV];
    }
    /* batches go through the buffered handle: uncached only by eviction; where that is
     * impossible the cached batch costs stand (not measured) */
    for (int w = 0; w < 2; w++) {
        u->dir[w].list_call = k->dir[w].list_call;
        u->dir[w].list_pair = k->dir[w].list_pair;
        u->dir[w].iov = k->dir[w].iov; /* memory-side work: the cached figure */
        if (k->batched && drop_ok &&
            (rc = measure_list(c, pf, sp, TESSI_UNCACHED, w, SMALL_DEVICE, true, w)))
            return rc;
    }
    return 0;
}

int tessi_calibrate(const char *driver, const char *dir, bool quick, tessi_profile *out,
                    tessi_calib_spread *spread)
{
    calib *c = NULL;
    tessi_profile *pf = NULL;
    int rc = 0;
    if (!driver || !dir || !out)
        return tessi_error(TESS_ERR_ARG, "tessi_calibrate: NULL driver, directory or profile");
    const struct tess_driver *drv = tessi_driver_find(driver);
    if (!drv)
        return tessi_error(TESS_ERR_ARG, "tessi_calibrate: no driver named '%s'", driver);
    c = calloc(1, sizeof *c);
    pf = calloc(1, sizeof *pf);
    if (!c || !pf) {
        rc = tessi_error(TESS_ERR_NOMEM, "calibrate: out of memory");
        goto fail;
    }
    c->drv = drv;
    c->fsize = quick ? 16 << 20 : 128 << 20;
    c->big = quick ? 1 << 20 : 8 << 20;
    c->reps = quick ? 5 : 11;
    c->target = quick ? 0.01 : 0.05;
    if (spread)
        memset(spread, 0, sizeof *spread);
    tessi_profile_defaults(pf);
    pf->defaults = false;
    for (int var = 0; var < 2; var++) /* not separable from s and tt on one local storage */
        for (int w = 0; w < 2; w++)
            pf->model[var].dir[w].te = pf->model[var].dir[w].cud =
                pf->model[var].dir[w].lq_dep = 0;
    if ((rc = setup(c, dir)))
        goto fail;
    describe(c, dir, pf);

    if ((rc = measure_dir(c, pf, spread, TESSI_CACHED, false, &c->st, SMALL_CACHED, false,
                          false, false)) ||
        (rc = measure_dir(c, pf, spread, TESSI_CACHED, true, &c->st, SMALL_CACHED, false,
                          false, false)) ||
        (rc = measure_dir(c, pf, spread, TESSI_CACHED, true, &c->st, SMALL_CACHED, false,
                          false, true)) ||
        (rc = measure_iov(c, pf, spread, false, SMALL_CACHED)) ||
        (rc = measure_iov(c, pf, spread, true, SMALL_CACHED)) ||
        (rc = measure_memory_and_locks(c, pf, spread)))
        goto fail;
    pf->model[TESSI_CACHED].batched = driver_batches(c);
    for (int w = 0; w < 2 && pf->model[TESSI_CACHED].batched; w++)
        if ((rc = measure_list(c, pf, spread, TESSI_CACHED, w, SMALL_CACHED, false, false)))
            goto fail;
    if (!pf->model[TESSI_CACHED].batched)
        for (int w = 0; w < 2; w++)
            pf->model[TESSI_CACHED].dir[w].list_call = pf->model[TESSI_CACHED].dir[w].list_pair = 0;

    for (int w = 0; w < 2 && (c->st.caps & TESSI_CAP_DATATYPE); w++)
        if ((rc = measure_dtio(c, pf, spread, w)))
            goto fail;

    /* memory storage has no device behind it (a tmpfs may still accept O_DIRECT) */
    bool memory = c->st.caps & TESSI_CAP_MEMORY;
    bool drop_ok = !memory && tessi_drv_evict(&c->st) == 0;
    pf->uncached = !memory && open_direct(c) ? TESSI_UNCACHED_DIRECT
                   : drop_ok                 ? TESSI_UNCACHED_DROP
                                             : TESSI_UNCACHED_NONE;
    if (pf->uncached != TESSI_UNCACHED_NONE && (rc = measure_uncached(c, pf, spread, drop_ok)))
        goto fail;
    *out = *pf;
fail:
    if (c) {
        if (c->dst_open)
            tessi_drv_close(&c->dst);
        if (c->st_open) {
            tessi_drv_close(&c->st);
            tessi_drv_remove(c->drv, c->path, NULL);
        }
        free(c->buf);
        free(c->buf2);
    }
    free(c);
    free(pf);
    return rc;
}
