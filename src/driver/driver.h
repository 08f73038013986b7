/*
 * driver.h - the storage driver table and the wrappers every access goes through.
 *
 * A driver moves bytes between memory and one storage object; it never decides how to combine
 * regions (that is a method's job). Drivers return negative errno values. Methods and the file
 * layer call a driver only through the tessi_drv_* wrappers below: they are the one place for
 * tracing (the tess_stats counters of paper 000 Table I) and for fault injection.
 *
 * Adding a driver: one file defining a `const struct tess_driver tess_<name>_driver` filled by
 * field name, plus one line in registry.c.
 */
#ifndef TESS_DRIVER_H
#define TESS_DRIVER_H

#include "tessi.h"

#include <errno.h>
#include <sys/uio.h>
#include <time.h>

/** Version of struct tess_driver; a table with another version is refused by the registry. */
#define TESSI_DRIVER_VERSION 2

/** Most iovecs one vectored storage call takes (Linux UIO_MAXIOV). */
#define TESSI_IOV_MAX 1024

/** One request of a batch: a file-contiguous run at off gathered from/scattered to iov. */
typedef struct tessi_io_req {
    int64_t off;               /* file byte offset of the run */
    const struct iovec *iov;   /* memory side, niov <= TESSI_IOV_MAX entries */
    int64_t niov;
    int64_t len;               /* total bytes of iov (filled by the caller) */
    int64_t result;            /* out: bytes moved, or a negative errno */
} tessi_io_req;

/** Operation classes: submit's direction and the fault-injection mask bits. */
enum {
    TESSI_OP_READ = 1,   /* pread, preadv, read batches */
    TESSI_OP_WRITE = 2,  /* pwrite, pwritev, write batches */
    TESSI_OP_LOCK = 4,   /* lock and unlock */
    TESSI_OP_SYNC = 8,   /* sync */
    TESSI_OP_SIZE = 16,  /* get_size, set_size */
    TESSI_OP_OPEN = 32,  /* open */
    TESSI_OP_DELETE = 64, /* delete */
    TESSI_OP_ALL = 127
};

/**
 * A storage driver. Every function returns 0 (or a byte count) on success and a negative errno
 * on failure. `h` is the handle open() produced.
 *
 * Transfers are complete: pread/preadv return fewer bytes than asked only at end of file;
 * pwrite/pwritev move everything or fail. Drivers retry short counts and EINTR themselves.
 * Optional entries may be NULL; the wrappers say what the caller sees then.
 */
struct tess_driver {
    int version;            /* TESSI_DRIVER_VERSION */
    const char *name;       /* the value of hint tess_driver that selects it */
    /* flags are TESS_RDONLY/WRONLY/RDWR/CREATE/EXCL; info carries driver-specific hints */
    int (*open)(const char *path, int flags, const tess_info *info, void **h);
    int (*close)(void *h);  /* releases h even when it fails */
    int64_t (*pread)(void *h, void *buf, int64_t len, int64_t off);
    int64_t (*pwrite)(void *h, const void *buf, int64_t len, int64_t off);
    /* one file-contiguous run at off, memory gathered by an iovec list of any length */
    int64_t (*preadv)(void *h, const struct iovec *iov, int64_t niov, int64_t off);
    int64_t (*pwritev)(void *h, const struct iovec *iov, int64_t niov, int64_t off);
    /* byte-range lock on [off, off + len), len > 0, exclusive (writers) or shared (readers),
     * waiting for it; it excludes the locks of every other handle, in this process too.
     * -ENOLCK or -EOPNOTSUPP (or NULL functions) say the storage has no locks */
    int (*lock)(void *h, int64_t off, int64_t len, bool exclusive);
    int (*unlock)(void *h, int64_t off, int64_t len);
    int (*sync)(void *h);
    int (*get_size)(void *h, int64_t *size);
    int (*set_size)(void *h, int64_t size);
    /* Optional: reserve storage for bytes [0, size) (the size grows to size, never shrinks);
     * -EOPNOTSUPP where the storage cannot (tessi_drv_preallocate then writes zeros beyond the
     * end of file) */
    int (*preallocate)(void *h, int64_t size);
    /* remove the storage object at path (no handle needed); info as for open */
    int (*remove)(const char *path, const tess_info *info);
    /* Optional: add the driver's hints in use on h (the values open took, defaults included)
     * to out, for tess_file_get_info */
    int (*get_info)(void *h, tess_info *out);
    /* Optional (may be NULL): run n requests of one direction (TESSI_OP_READ or TESSI_OP_WRITE)
     * as one batch, filling each result. Returns 0 when every request ran (check each result),
     * -EOPNOTSUPP when batching is unavailable on this handle (nothing ran: fall back), or
     * another negative errno when the batch failed as a whole. */
    int (*submit)(void *h, int op, tessi_io_req *reqs, int64_t n);
};

/** Look up a driver by name; NULL if there is none. */
const struct tess_driver *tessi_driver_find(const char *name);

/**
 * An open storage object: its driver, the driver's handle, and the counters the wrappers feed
 * (stats.min_access holds INT64_MAX until the first access).
 */
typedef struct tessi_storage {
    const struct tess_driver *drv;
    void *h;
    tess_stats stats;
    /* The caller holds a lock on the whole extent of the access in progress (atomic mode):
     * tessi_drv_lock and tessi_drv_unlock do nothing, so the locks a method takes on parts of
     * the extent neither wait for that lock nor split it. */
    bool extent_locked;
} tessi_storage;

/*
 * Fault injection (for tests, and for any program through the environment).
 *
 * tessi_fault_inject(mask, after, times, err): the calls whose class is in mask (TESSI_OP_*)
 * succeed `after` times, then the next `times` of them (times < 0: all of them) fail with err
 * (a negative errno) without reaching the storage. tessi_fault_clear() disarms it. The state is
 * process-wide and thread-safe.
 *
 * TESS_FAULT, read once at the first wrapped call, arms the same thing:
 *     TESS_FAULT=<ops>:<after>:<errno>[:<times>]
 * ops is a '+'-separated list of read, write, lock, sync, size (get_size, set_size,
 * preallocate), open, delete, all; errno is a name (EIO, ENOSPC, EDQUOT, EROFS, ENOLCK,
 * EOPNOTSUPP, EACCES, EINTR) or a positive number; times defaults
 * to -1 (every later call). Example: TESS_FAULT=write:10:ENOSPC makes the 11th and every later
 * write fail with "no space". A malformed value is ignored.
 */
void tessi_fault_inject(int op_mask, int64_t after_calls, int64_t times, int neg_errno);
void tessi_fault_clear(void);
/** 0, or the negative errno an armed fault injects into this call of class op. */
int tessi_fault_check(int op);

/**
 * Turn a driver failure into a TESS_ERR_* code with a message naming the operation, the range
 * (when len > 0) and the system's text for the errno (used by every caller of the wrappers).
 */
int tessi_drv_error(const tessi_storage *s, int neg_errno, const char *what, int64_t off,
                    int64_t len);

/** True when a lock call's result says the storage has no byte-range locks. */
static inline bool tessi_lock_unsupported(int rc)
{
    return rc == -ENOLCK || rc == -EOPNOTSUPP || rc == -ENOSYS;
}

/* ------------------------------------------------------------------- wrappers */

static inline double tessi_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Account one storage call that moved `moved` bytes (< 0: it failed), started at t0. */
static inline void tessi_trace_io(tess_stats *st, int64_t moved, double t0)
{
    st->io_seconds += tessi_now() - t0;
    st->io_ops++;
    if (moved > 0)
        st->accessed_bytes += moved;
}

/* Account one contiguous storage access of len requested bytes. min_access holds INT64_MAX
 * until the first access (tess_file_stats reports 0 then). */
static inline void tessi_trace_access(tess_stats *st, int64_t len)
{
    if (len < st->min_access)
        st->min_access = len;
    if (len > st->max_access)
        st->max_access = len;
}

static inline int64_t tessi_iov_len(const struct iovec *iov, int64_t niov)
{
    int64_t n = 0;
    for (int64_t i = 0; i < niov; i++)
        n += (int64_t)iov[i].iov_len;
    return n;
}

static inline int tessi_drv_open(tessi_storage *s, const struct tess_driver *drv,
                                 const char *path, int flags, const tess_info *info)
{
    int rc = tessi_fault_check(TESSI_OP_OPEN);
    s->drv = drv;
    s->h = NULL;
    return rc ? rc : drv->open(path, flags, info, &s->h);
}

static inline int tessi_drv_close(tessi_storage *s)
{
    int rc = s->h ? s->drv->close(s->h) : 0;
    s->h = NULL;
    return rc;
}

static inline int64_t tessi_drv_pread(tessi_storage *s, void *buf, int64_t len, int64_t off)
{
    int rc = tessi_fault_check(TESSI_OP_READ);
    if (rc)
        return rc;
    double t0 = tessi_now();
    int64_t got = s->drv->pread(s->h, buf, len, off);
    tessi_trace_io(&s->stats, got, t0);
    tessi_trace_access(&s->stats, len);
    return got;
}

static inline int64_t tessi_drv_pwrite(tessi_storage *s, const void *buf, int64_t len,
                                       int64_t off)
{
    int rc = tessi_fault_check(TESSI_OP_WRITE);
    if (rc)
        return rc;
    double t0 = tessi_now();
    int64_t put = s->drv->pwrite(s->h, buf, len, off);
    tessi_trace_io(&s->stats, put, t0);
    tessi_trace_access(&s->stats, len);
    return put;
}

static inline int64_t tessi_drv_preadv(tessi_storage *s, const struct iovec *iov, int64_t niov,
                                       int64_t off)
{
    int rc = tessi_fault_check(TESSI_OP_READ);
    if (rc)
        return rc;
    double t0 = tessi_now();
    int64_t got = s->drv->preadv(s->h, iov, niov, off);
    tessi_trace_io(&s->stats, got, t0);
    tessi_trace_access(&s->stats, tessi_iov_len(iov, niov));
    return got;
}

static inline int64_t tessi_drv_pwritev(tessi_storage *s, const struct iovec *iov,
                                        int64_t niov, int64_t off)
{
    int rc = tessi_fault_check(TESSI_OP_WRITE);
    if (rc)
        return rc;
    double t0 = tessi_now();
    int64_t put = s->drv->pwritev(s->h, iov, niov, off);
    tessi_trace_io(&s->stats, put, t0);
    tessi_trace_access(&s->stats, tessi_iov_len(iov, niov));
    return put;
}

/**
 * Run a batch (see tess_driver.submit). The batch counts as one storage call; each request is
 * one access for min/max_access. -EOPNOTSUPP (no batching here) is returned untraced.
 */
static inline int tessi_drv_submit(tessi_storage *s, int op, tessi_io_req *reqs, int64_t n)
{
    if (!s->drv->submit)
        return -EOPNOTSUPP;
    int rc = tessi_fault_check(op);
    if (rc)
        return rc;
    double t0 = tessi_now();
    rc = s->drv->submit(s->h, op, reqs, n);
    if (rc == -EOPNOTSUPP)
        return rc;
    int64_t moved = 0;
    for (int64_t i = 0; rc == 0 && i < n; i++) {
        moved += reqs[i].result > 0 ? reqs[i].result : 0;
        tessi_trace_access(&s->stats, reqs[i].len);
    }
    tessi_trace_io(&s->stats, rc < 0 ? rc : moved, t0);
    return rc;
}

/* A lock (see tess_driver.lock); nothing while the caller holds the extent (extent_locked). */
static inline int tessi_drv_lock(tessi_storage *s, int64_t off, int64_t len, bool exclusive)
{
    if (s->extent_locked)
        return 0;
    int rc = tessi_fault_check(TESSI_OP_LOCK);
    if (rc)
        return rc;
    if (!s->drv->lock)
        return -EOPNOTSUPP;
    s->stats.lock_ops++;
    return s->drv->lock(s->h, off, len, exclusive);
}

static inline int tessi_drv_unlock(tessi_storage *s, int64_t off, int64_t len)
{
    if (s->extent_locked)
        return 0;
    int rc = tessi_fault_check(TESSI_OP_LOCK);
    if (rc)
        return rc;
    if (!s->drv->unlock)
        return -EOPNOTSUPP;
    s->stats.lock_ops++;
    return s->drv->unlock(s->h, off, len);
}

static inline int tessi_drv_sync(tessi_storage *s)
{
    int rc = tessi_fault_check(TESSI_OP_SYNC);
    return rc ? rc : s->drv->sync(s->h);
}

static inline int tessi_drv_get_size(tessi_storage *s, int64_t *size)
{
    int rc = tessi_fault_check(TESSI_OP_SIZE);
    return rc ? rc : s->drv->get_size(s->h, size);
}

static inline int tessi_drv_set_size(tessi_storage *s, int64_t size)
{
    int rc = tessi_fault_check(TESSI_OP_SIZE);
    return rc ? rc : s->drv->set_size(s->h, size);
}

/**
 * Reserve storage for [0, size) (see tess_driver.preallocate). Where the driver cannot, the
 * bytes from the end of file to size are written as zeros (only beyond the end of file, so no
 * byte a concurrent writer may have written is rewritten); the file never shrinks.
 */
int tessi_drv_preallocate(tessi_storage *s, int64_t size);

/** Remove the object at path with driver drv. */
static inline int tessi_drv_remove(const struct tess_driver *drv, const char *path,
                                   const tess_info *info)
{
    int rc = tessi_fault_check(TESSI_OP_DELETE);
    return rc ? rc : drv->remove ? drv->remove(path, info) : -EOPNOTSUPP;
}

#endif
