/*
 * driver.h - the storage driver table and the wrappers every access goes through.
 *
 * A driver moves bytes between memory and one storage object; it never decides how to combine
 * regions (that is a method's job). Drivers return negative errno values. Methods and the file
 * layer call a driver only through the tessi_drv_* wrappers below: they are the one place for
 * tracing (every call is an event of base/tracer.h: the tess_stats counters of paper 000
 * Table I are one tracer) and for fault injection. A driver says after open what its handle
 * can do (capabilities) and declares its own hints; the core reads no driver-specific hint.
 *
 * Adding a driver: one file defining a `const struct tess_driver tess_<name>_driver` filled by
 * field name (mem.c is the template), plus one line in registry.c. tests/driver/test_drivers.c
 * runs every registered driver through the same cases.
 */
#ifndef TESS_DRIVER_H
#define TESS_DRIVER_H

#include "base/hints.h"
#include "base/tracer.h"

#include <errno.h>
#include <sys/uio.h>

/** Version of struct tess_driver; a table with another version is refused by the registry. */
#define TESSI_DRIVER_VERSION 4

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
    TESSI_OP_SYNC = 8,   /* sync, evict */
    TESSI_OP_SIZE = 16,  /* get_size, set_size, preallocate */
    TESSI_OP_OPEN = 32,  /* open */
    TESSI_OP_DELETE = 64, /* delete */
    TESSI_OP_ALL = 127
};

/** An open flag of the driver table only (never accepted by tess_file_open): the handle
 *  bypasses caches, every access aligned to the storage's block size (calibration's uncached
 *  variant); drivers without such a mode fail the open with -EINVAL. */
#define TESSI_OPEN_DIRECT 0x10000

/** What a handle can do (tess_driver.caps, after open). */
enum {
    TESSI_CAP_VECTORED = 1,     /* preadv/pwritev are one storage call each */
    TESSI_CAP_BATCHED = 2,      /* submit runs a batch of requests as one call */
    TESSI_CAP_LOCKS = 4,        /* exclusive byte-range locks */
    TESSI_CAP_SHARED_LOCKS = 8, /* shared (reader) byte-range locks too */
    TESSI_CAP_DIRECT = 16,      /* accesses bypass any cache (e.g. O_DIRECT): an uncached handle */
    TESSI_CAP_MEMORY = 32,      /* the storage is memory: no device behind it (tmpfs, mem:) */
    TESSI_CAP_RMW = 64,         /* rmw: an atomic read-modify-write that needs no lock */
    TESSI_CAP_DATATYPE = 128,   /* dtio: datatype I/O run by the storage servers */
    TESSI_CAP_INSECURE = 256    /* the connection to the storage is not authenticated (a
                                   warning in tess_stats.auth_insecure) */
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
    /* the driver's own hints (scope TESSI_SCOPE_DRIVER): validated by the core on every open
     * path with the same parser the driver uses in open (tessi_hints_parse) */
    const tessi_hint_def *hints;
    int nhints;
    /* flags are TESS_RDONLY/WRONLY/RDWR/CREATE/EXCL and TESSI_OPEN_DIRECT; info carries the
     * hints */
    int (*open)(const char *path, int flags, const tess_info *info, void **h);
    int (*close)(void *h);  /* releases h even when it fails */
    /* TESSI_CAP_* of this handle */
    unsigned (*caps)(void *h);
    int64_t (*pread)(void *h, void *buf, int64_t len, int64_t off);
    int64_t (*pwrite)(void *h, const void *buf, int64_t len, int64_t off);
    /* one file-contiguous run at off, memory gathered by an iovec list of any length */
    int64_t (*preadv)(void *h, const struct iovec *iov, int64_t niov, int64_t off);
    int64_t (*pwritev)(void *h, const struct iovec *iov, int64_t niov, int64_t off);
    /* byte-range lock on [off, off + len), len > 0, exclusive (writers) or shared (readers),
     * waiting for it; it excludes the locks of every other handle, in this process too.
     * Optional: NULL, -ENOLCK or -EOPNOTSUPP say the storage has no locks */
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
    /* Optional: run n requests of one direction (TESSI_OP_READ or TESSI_OP_WRITE) as one
     * batch, filling each result. Returns 0 when every request ran (check each result),
     * -EOPNOTSUPP when batching is unavailable on this handle (nothing ran: fall back), or
     * another negative errno when the batch failed as a whole. */
    int (*submit)(void *h, int op, tessi_io_req *reqs, int64_t n);
    /* Optional: drop the object's cached data, so that the next reads reach the device;
     * -EOPNOTSUPP where it cannot be done or verified (calibration's uncached variant) */
    int (*evict)(void *h);
    /* Optional: a one-line description of the storage behind h (a path and file system) */
    void (*describe)(void *h, char *buf, size_t cap);
    /* Optional: 1 when another handle holds a lock on a byte of [off, off + len), 0 when none
     * does, without taking a lock or waiting (locks belong to handles, as for `lock`: this
     * handle's own locks do not count). NULL or -EOPNOTSUPP: not available (the write gate is
     * then static, see gate.c) */
    int (*test_lock)(void *h, int64_t off, int64_t len);
    /* Optional (TESSI_CAP_RMW): a read-modify-write of [off, off + len) that needs no lock. The
     * driver reads the range into stage (unless `covered`: the new data covers it all), calls
     * fill(arg, stage) to put the new data in, and writes stage back atomically against every
     * other writer of those bytes (e.g. guarded by object versions, repeating read and fill on
     * a conflict: fill must give the same data each time). */
    int (*rmw)(void *h, char *stage, int64_t off, int64_t len, bool covered,
               int (*fill)(void *arg, char *stage), void *arg);
    /* Optional (TESSI_CAP_DATATYPE): datatype I/O (paper 000 III). Move the stream bytes
     * [start, start + bytes) of the view that tiles the file with filetype from byte disp (a
     * monotonic type), packed in stream order in `packed`, with one request per storage server
     * object touched. op is TESSI_OP_READ or TESSI_OP_WRITE. Returns the bytes moved: reads stop
     * at end of file (the stream prefix whose file bytes exist), writes move everything;
     * -E2BIG when one request would carry more regions than the servers take (the caller
     * splits the range). */
    int64_t (*dtio)(void *h, int op, int64_t disp, const tess_type *filetype, int64_t start,
                    int64_t bytes, void *packed);
    /* Optional: the striping of the storage behind h, as the cost model prices requests per
     * object (datatype I/O): stripe unit, objects per stripe row, bytes per object. */
    void (*striping)(void *h, int64_t *unit, int64_t *factor, int64_t *objsize);
    /* Optional: where the handle's own events go, given once after open. A driver that talks
     * to storage servers reports there the requests it sends (TESSI_EV_SERVER), whatever call
     * sends them. */
    void (*attach)(void *h, const tessi_trace *trace);
};

/** Look up a driver by name; NULL if there is none. */
const struct tess_driver *tessi_driver_find(const char *name);
/** The i-th registered driver (0, 1, ...); NULL past the last. */
const struct tess_driver *tessi_driver_at(int i);
/** The driver a path names by a prefix "<driver>:" (*rest: the path after it), else NULL
 *  (*rest: path). */
const struct tess_driver *tessi_driver_of_path(const char *path, const char **rest);

/**
 * The write gate of an open storage object (gate.c; README.md, "Locking"): whether this handle's
 * plain writes need a lock, and whether it may read-modify-write. Handles announce themselves
 * with shared locks on two bytes at the top of the offset space, taken at open and when a
 * handle first needs to read-modify-write, and checked at most every TESSI_GATE_POLL seconds
 * while it writes, so that a handle that writes without locks never coexists with another that
 * read-modify-writes.
 */
typedef struct tessi_gate {
    int kind;          /* TESSI_GATE_* */
    bool may_sieve;    /* STATIC: sieving writes can happen on the file: plain writes lock */
    bool unlocked;     /* LIVE: holds the U byte: its plain writes go unlocked */
    bool admitted;     /* LIVE: holds the R byte, admitted: it may read-modify-write */
    bool used;         /* LIVE: read-modify-wrote since the last poll */
    bool aside;        /* LIVE: stepped aside (tessi_gate_step_aside): U is not taken again
                          before this handle's plain writes next ask */
    double polled;     /* when the gate was last polled */
    double retry;      /* an admission was refused: not asked again before this */
} tessi_gate;

enum {
    TESSI_GATE_NONE = 0, /* a handle that does not write */
    TESSI_GATE_NOLOCKS,  /* storage without locks: plain writes unlocked, no read-modify-write */
    TESSI_GATE_STATIC,   /* locks that cannot be tried without waiting: plain writes lock when
                            sieving writes can happen on the file (may_sieve), whose
                            read-modify-writes then lock their windows */
    TESSI_GATE_LIVE,     /* the protocol of gate.c */
    TESSI_GATE_BROKEN    /* a gate lock failed: plain writes lock, no read-modify-write */
};

/** Seconds between two polls of a writing handle's gate. */
#define TESSI_GATE_POLL 1e-3

/**
 * An open storage object: its driver, the driver's handle and capabilities, and where its
 * events go (trace: the counters in stats, see base/tracer.h).
 */
typedef struct tessi_storage {
    const struct tess_driver *drv;
    void *h;
    unsigned caps;        /* TESSI_CAP_* of h */
    tess_stats stats;
    tessi_trace trace;    /* tessi_stats_tracer over stats (set by tessi_drv_open) */
    /* The caller holds a lock on the whole extent of the access in progress (atomic mode):
     * tessi_drv_lock and tessi_drv_unlock do nothing, so the locks a method takes on parts of
     * the extent neither wait for that lock nor split it. */
    bool extent_locked;
    tessi_gate gate;
} tessi_storage;

/** Report an event of storage s (see base/tracer.h). */
static inline void tessi_storage_emit(tessi_storage *s, tessi_event e)
{
    tessi_emit(&s->trace, &e);
}

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
/** Whether faults are armed for calls of a class in op (then every such call must be checked:
 *  a loop of calls that finds none armed may skip the checks). */
bool tessi_fault_armed(int op);

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

/**
 * RAID-0 striping (stripe unit `unit`, `factor` objects per stripe row, `objsize` bytes per
 * object, a multiple of unit): the object holding file byte x and the byte of that object.
 * Objects come in sets of factor; a set holds objsize / unit rows. One formula for the drivers
 * that stripe and for the methods that price what those drivers send.
 */
static inline void tessi_stripe_locate(int64_t unit, int64_t factor, int64_t objsize, int64_t x,
                                       int64_t *obj, int64_t *objoff)
{
    int64_t block = x / unit, row = block / factor, rows = objsize / unit;
    *obj = (row / rows) * factor + block % factor;
    *objoff = (row % rows) * unit + x % unit;
}

/* ------------------------------------------------------------------- wrappers */

static inline int64_t tessi_iov_len(const struct iovec *iov, int64_t niov)
{
    int64_t n = 0;
    for (int64_t i = 0; i < niov; i++)
        n += (int64_t)iov[i].iov_len;
    return n;
}

/* Report one storage call of one access of len bytes at off that moved `moved` (< 0: failed)
 * and took `seconds`. */
static inline void tessi_trace_call(tessi_storage *s, int op, int64_t off, int64_t len,
                                    int64_t moved, double seconds)
{
    tessi_storage_emit(s, (tessi_event){.kind = TESSI_EV_IO, .op = op, .off = off, .len = len,
                                        .moved = moved, .seconds = seconds, .n = 1,
                                        .min_len = len, .max_len = len});
}

/**
 * Open path with driver drv into s (fault class open), and set s up: its trace goes to the
 * counters in s->stats (reset), its capabilities are asked for.
 */
int tessi_drv_open(tessi_storage *s, const struct tess_driver *drv, const char *path, int flags,
                   const tess_info *info);

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
    tessi_trace_call(s, TESSI_OP_READ, off, len, got, tessi_now() - t0);
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
    tessi_trace_call(s, TESSI_OP_WRITE, off, len, put, tessi_now() - t0);
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
    tessi_trace_call(s, TESSI_OP_READ, off, tessi_iov_len(iov, niov), got,
                     tessi_now() - t0);
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
    tessi_trace_call(s, TESSI_OP_WRITE, off, tessi_iov_len(iov, niov), put,
                     tessi_now() - t0);
    return put;
}

/**
 * One storage call per request of reqs[0..n) (op TESSI_OP_READ or TESSI_OP_WRITE; pread/pwrite
 * for a request of one iovec, preadv/pwritev for more), in order, up to the first whose result
 * (set in it) is short of its length: an error or the end of the file. The same calls, fault
 * checks and counters as that many tessi_drv_pread/pwrite/preadv/pwritev, but timed together:
 * the loop of many small calls without a clock reading around each. While no fault is armed
 * for op and no tracing hook is installed, the calls run in a tight loop and are reported as
 * one TESSI_EV_IO_CALLS event; otherwise each is checked and reported on its own (a
 * TESSI_EV_IO event with an equal share of the seconds). Returns the number of requests run.
 */
int64_t tessi_drv_each(tessi_storage *s, int op, tessi_io_req *reqs, int64_t n);

/**
 * Run a batch (see tess_driver.submit). The batch counts as one storage call; each request is
 * one access for min/max_access. -EOPNOTSUPP (no batching here) is returned untraced.
 */
int tessi_drv_submit(tessi_storage *s, int op, tessi_io_req *reqs, int64_t n);

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
    tessi_storage_emit(s, (tessi_event){.kind = TESSI_EV_LOCK, .off = off, .len = len,
                                        .flag = exclusive});
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
    tessi_storage_emit(s, (tessi_event){.kind = TESSI_EV_LOCK, .op = 1, .off = off,
                                        .len = len});
    return s->drv->unlock(s->h, off, len);
}

static inline int tessi_drv_sync(tessi_storage *s)
{
    int rc = tessi_fault_check(TESSI_OP_SYNC);
    return rc ? rc : s->drv->sync(s->h);
}

/** Drop the cached data of s (see tess_driver.evict): -EOPNOTSUPP where it cannot. */
static inline int tessi_drv_evict(tessi_storage *s)
{
    int rc = tessi_fault_check(TESSI_OP_SYNC);
    return rc ? rc : s->drv->evict ? s->drv->evict(s->h) : -EOPNOTSUPP;
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

/** A lock-free read-modify-write (see tess_driver.rmw): one storage call moving len bytes
 *  (and reading them first unless covered). -EOPNOTSUPP when the driver has none. */
static inline int tessi_drv_rmw(tessi_storage *s, char *stage, int64_t off, int64_t len,
                                bool covered, int (*fill)(void *arg, char *stage), void *arg)
{
    int rc = tessi_fault_check(TESSI_OP_WRITE);
    if (rc || !s->drv->rmw)
        return rc ? rc : -EOPNOTSUPP;
    double t0 = tessi_now();
    rc = s->drv->rmw(s->h, stage, off, len, covered, fill, arg);
    tessi_trace_call(s, TESSI_OP_WRITE, off, len, rc < 0 ? rc : covered ? len : 2 * len,
                     tessi_now() - t0);
    return rc;
}

/** Datatype I/O (see tess_driver.dtio): one storage call. -EOPNOTSUPP when the driver has
 *  none. */
static inline int64_t tessi_drv_dtio(tessi_storage *s, int op, int64_t disp,
                                     const tess_type *filetype, int64_t start, int64_t bytes,
                                     void *packed)
{
    int rc = tessi_fault_check(op);
    if (rc || !s->drv->dtio)
        return rc ? rc : -EOPNOTSUPP;
    double t0 = tessi_now();
    int64_t moved = s->drv->dtio(s->h, op, disp, filetype, start, bytes, packed);
    tessi_trace_call(s, op, start, bytes, moved, tessi_now() - t0);
    return moved;
}

/** Remove the object at path with driver drv. */
static inline int tessi_drv_remove(const struct tess_driver *drv, const char *path,
                                   const tess_info *info)
{
    int rc = tessi_fault_check(TESSI_OP_DELETE);
    return rc ? rc : drv->remove ? drv->remove(path, info) : -EOPNOTSUPP;
}

/* ------------------------------------------------------------------- locks */

/** A byte-range lock a caller may hold. */
typedef struct tessi_lock {
    int64_t off, len;
    bool held;
} tessi_lock;

/**
 * The one lock-with-fallback helper: lock [off, off + len) of s, exclusive or shared, waiting.
 * Where the storage has no locks: with `required` false the caller goes on without (returns 0
 * with l->held false; a caller that then changes what it does, such as sieving writes going
 * naive, reports TESSI_EV_LOCK_FALLBACK); with `required` true it is TESS_ERR_UNSUPPORTED.
 * Any other failure is its TESS_ERR_* with a message. len <= 0 locks nothing.
 */
int tessi_lock_range(tessi_storage *s, tessi_lock *l, int64_t off, int64_t len, bool exclusive,
                     bool required);

/** Report that a caller goes on without the lock on [off, off + len) the storage refused. */
static inline void tessi_lock_fallback(tessi_storage *s, int64_t off, int64_t len)
{
    tessi_storage_emit(s, (tessi_event){.kind = TESSI_EV_LOCK_FALLBACK, .off = off, .len = len});
}

/** Release l if held (held becomes false). Returns rc, or the unlock's error if rc is 0. */
int tessi_unlock_range(tessi_storage *s, tessi_lock *l, int rc);

/* ------------------------------------------------------------------- the write gate */

/**
 * Set up the gate of s after open: a handle that writes (writable) takes part; may_sieve says
 * whether sieving writes can happen on the file (used only where locks cannot be tried). A LIVE
 * handle starts out writing unlocked if no handle is admitted to read-modify-write.
 */
void tessi_gate_open(tessi_storage *s, bool writable, bool may_sieve);

/** Leave the gate (before the handle closes). */
void tessi_gate_close(tessi_storage *s);

/** Must a plain write (one that writes only its own data) lock its extent? Polls when due
 *  (and ends a step aside). */
bool tessi_gate_locked_writes(tessi_storage *s);

/**
 * Step aside for a collective write whose data other handles (its aggregators) store: let go of
 * U now, so that their admission to read-modify-write does not wait for this handle's next
 * poll (a member that only sends its data to the aggregators never polls during the call), and
 * do not take U again (not even after an admission of this handle) before its plain writes
 * next ask (tessi_gate_locked_writes). Returns whether this handle's plain writes must lock
 * meanwhile. Every member of the call steps aside before a step that synchronizes the group
 * (two-phase: the exchange of the access descriptions), so every aggregator's admission then
 * waits only for handles outside the call.
 */
bool tessi_gate_step_aside(tessi_storage *s);

/**
 * May this handle read-modify-write (write back bytes it did not mean to write)? Asks for
 * admission when not admitted: waits up to TESSI_GATE_WAIT seconds for the handles writing
 * unlocked to notice and lock from then on; false when they do not (or the storage has no
 * locks): the caller then writes only its data (and reports a lock fallback). The read-modify-
 * write itself still locks its window.
 */
bool tessi_gate_admit(tessi_storage *s);

/** Longest wait for an admission, and how long a refused handle waits before asking again. */
#define TESSI_GATE_WAIT 20e-3
#define TESSI_GATE_RETRY 0.25

#endif
