/*
 * model.h - the cost model (paper 003): its parameters, the price of the primitives every method
 * is made of (a call, a byte, a list batch, a copy, a lock, and the three ways of moving a run
 * of regions), profiles of measured parameters, and calibration. What a method costs is the
 * method's own business: each method prices itself with these primitives (method/method.h).
 *
 * Paper 003 prices one contiguous access of `size` bytes as
 *
 *     T = te*p + tt*size/n + p*(seek + syscall) + size*cud/n + lq_dep
 *
 * with p client processes sharing the storage, n storage servers, te the connection set-up,
 * tt the transfer time per byte, s = seek + syscall the start-up of one call, cud the device
 * time per byte and lq_dep the latency of outstanding I/Os; reads and writes have their own
 * parameters. Tessera adds what the paper leaves out but its methods pay: the memory copy
 * between a staging buffer and user memory (mc), the read of a sieving read-modify-write, the
 * byte-range lock around it, and the fixed and per-request costs of a list I/O batch.
 *
 * Everything here is pure arithmetic over a tessi_model except calibrate (which measures the
 * storage) and the profile functions (which read and write a small text file). Costs are in
 * seconds, per-byte parameters in seconds per byte.
 */
#ifndef TESS_MODEL_H
#define TESS_MODEL_H

#include "base/base.h"

#include <stddef.h>

/* ------------------------------------------------------------------ parameters */

/** Parameters of one direction (reads or writes). */
typedef struct tessi_model_dir {
    double te;        /* s: connection set-up per access (paper 003 te; 0 on local storage) */
    double s;         /* s: start-up of one access: seek + system call (paper 003 s) */
    double tt;        /* s/B: transfer time per byte (paper 003 tt) */
    double cud;       /* s/B: device time per byte (paper 003 cud) */
    double lq_dep;    /* s: latency of outstanding I/Os, once per access (paper 003 lq_dep) */
    double list_call; /* s: fixed cost of one list batch of >= 2 requests */
    double list_pair; /* s: added cost of each (offset, length) request in a batch */
    double iov;       /* s: added cost of each memory piece of a vectored call after the first */
    double s_dirty;   /* writes only: s and tt onto pages still dirty from a recent write (an */
    double tt_dirty;  /* overwrite; s and tt price writes of new data onto clean pages) */
    double dt_call;   /* s: one datatype-I/O request to a storage server (its round trip and
                         the server's set-up: decoding the type, starting its program) */
    double dt_region; /* s: the server's work per file region of a datatype-I/O request */
} tessi_model_dir;

/**
 * The model. dir[false] prices reads, dir[true] writes (index with a `bool write`).
 * p and list_max describe the caller, not the storage: a profile sets them to 1 and
 * TESSI_MODEL_LIST_MAX, and a method overwrites them (processes sharing the storage, hint
 * tess_list_max_pairs) before planning.
 */
typedef struct tessi_model {
    tessi_model_dir dir[2];
    double mc;        /* s/B: memcpy between a staging buffer and user memory */
    double lock;      /* s: one lock + unlock pair of a byte range */
    bool locks;       /* sieving writes can read-modify-write (byte-range locks, or the
                         storage's own atomic read-modify-write); else they run naive */
    bool batched;     /* the storage runs a list of requests as one call (else one per request) */
    bool dtio;        /* the storage servers run datatype I/O (one request per object) */
    int64_t unit, factor, objsize; /* the storage's striping: stripe unit, objects per stripe
                         row, bytes per object (unit 0: one object holds the file) */
    int64_t n;        /* storage servers the bytes are striped over (>= 1) */
    int64_t p;        /* client processes contending for the storage (>= 1) */
    int64_t list_max; /* requests per list batch (>= 1) */
} tessi_model;

/** Default requests per list batch: the default of hint tess_list_max_pairs. */
#define TESSI_MODEL_LIST_MAX 64

/*
 * The real-valued parameters, once (X-macro): enum id, profile key, field of tessi_model,
 * unit, default, description. The defaults describe a local Linux file system served from the
 * page cache on a current x86-64 server; a model without a profile uses them and says so
 * (tessi_profile.defaults). Rounded from measurements on the 2-core ext4 VM Tessera is developed
 * on (November 2026; `tessera calibrate` and small pread/pwrite probes walking a file in
 * increasing order, as an access does):
 *  - pread of 8 B-4 KiB: 0.37-0.65 us; calibrate read.s 0.54-0.56 us; naive's calls in
 *    `tessera bench sweep` about 0.5 us per region;
 *  - read.tt: calibrate 8-12 GB/s (0.08-0.12 ns/B: 8 MiB reads over a 128 MiB file); the reads
 *    sieving makes (512 KiB-4 MiB windows into one buffer) 0.088-0.105 ns/B over 16-64 MiB
 *    extents, 0.05-0.06 ns/B over a 9 MiB one that stays in the 32 MiB L3 (C probes). The
 *    default is the low end of calibrate's range: at 0.1 ns/B pmd and `auto` moved every
 *    1 KiB region alone at 4 KiB holes (reads) and 8 KiB holes (writes, whose
 *    read-modify-write reads the holes), 1.4-1.8x (reads) and 1.7-2.6x (writes) slower than
 *    classic sieving (`tessera bench pmd`'s sweep); at 0.08 they sieve there and move regions
 *    alone at 16 KiB (reads) and 64 KiB (writes), where that was faster (see
 *    tests/model/test_pmd_grouping.c; at 8 KiB reads and 16 KiB writes the two tie). Sieve
 *    copies of 1 KiB pieces measured 0.03-0.04 ns/B, below mc; but mc and iov also decide
 *    staging and packing near 1 KiB memory pieces (a piece's copy against its iovec or MPI
 *    block), and lowering mc alone moved those choices for the worse (hpio nc-c 1 KiB reads,
 *    4 processes);
 *  - pwrite of 8 B-4 KiB onto clean pages: 4.5-5.3 us (load 3-4), calibrate write.s 2.6-5.2 us;
 *    onto pages dirty from a recent write: 3.9-4.5 us (load 3-4), calibrate write.s_dirty
 *    2.4-5.4 us. What a small write costs depends on the page cache's folios (Linux 6.18, ext4:
 *    the write walks every block of the folio it lands in), so on how the file was written
 *    before: 8-3200 B pwrites one after another, one process, quiet machine, into a file
 *    written in 4 KiB pieces 1.1-2.8 us, in 1 MiB pieces 4.3-5.2 us, in 4 MiB pieces 6.3-7.4 us,
 *    into a new (sparse) file 6.2-8.2 us. The defaults price files written in large pieces (as
 *    collective buffers, sieving windows and most applications write them): naive's 8-64 B
 *    calls in `tessera bench sweep`'s 16 KiB-hole rows took 4.0 us each, a 3200 B call in
 *    `tessera bench hpio --pattern pfr` 5.6 us at one process and 11-14 us at two writing the
 *    same file (ext4 runs a file's buffered writes one at a time: p * s);
 *  - write.tt 4.8-6.7 GB/s, 8 MiB writes 0.18 ns/B onto clean pages; 512 KiB-4 MiB writes onto
 *    dirty pages 0.12-0.14 ns/B over 16-64 MiB extents at best, 0.15-0.19 (median, load 3;
 *    0.04-0.05 within the cache);
 *  - list batches (io_uring): a read request costs what a call does (0.52-0.53 us per request,
 *    0.4-0.5 us per batch), a write request 5.5-8.9 us, about twice a plain call;
 *  - byte-range lock + unlock pair 0.78-0.89 us; memcpy 0.03 ns/B within the cache, 0.15-0.17
 *    ns/B beyond it.
 */
#define TESSI_MODEL_PARAMS(X)                                                                  \
    X(READ_TE, "read.te", dir[0].te, "s", 0.0, "read connection set-up per access")            \
    X(READ_S, "read.s", dir[0].s, "s", 5e-7, "read start-up per call (seek + syscall)")        \
    X(READ_TT, "read.tt", dir[0].tt, "s/B", 8e-11, "read transfer time per byte")              \
    X(READ_CUD, "read.cud", dir[0].cud, "s/B", 0.0, "read device time per byte")               \
    X(READ_LQ, "read.lq_dep", dir[0].lq_dep, "s", 0.0, "read latency of outstanding I/O")      \
    X(READ_LIST_CALL, "read.list_call", dir[0].list_call, "s", 5e-7, "read list batch call")   \
    X(READ_LIST_PAIR, "read.list_pair", dir[0].list_pair, "s", 5e-7, "read list per request")  \
    X(READ_IOV, "read.iov", dir[0].iov, "s", 1e-7, "read vectored call per memory piece")        \
    X(WRITE_TE, "write.te", dir[1].te, "s", 0.0, "write connection set-up per access")         \
    X(WRITE_S, "write.s", dir[1].s, "s", 4.5e-6, "write start-up per call (seek + syscall)")     \
    X(WRITE_TT, "write.tt", dir[1].tt, "s/B", 1.8e-10, "write transfer time per byte")           \
    X(WRITE_CUD, "write.cud", dir[1].cud, "s/B", 0.0, "write device time per byte")            \
    X(WRITE_LQ, "write.lq_dep", dir[1].lq_dep, "s", 0.0, "write latency of outstanding I/O")   \
    X(WRITE_LIST_CALL, "write.list_call", dir[1].list_call, "s", 5e-6, "write list batch call") \
    X(WRITE_LIST_PAIR, "write.list_pair", dir[1].list_pair, "s", 5.5e-6, "write list per request") \
    X(WRITE_IOV, "write.iov", dir[1].iov, "s", 2e-7, "write vectored call per memory piece")     \
    X(WRITE_S_DIRTY, "write.s_dirty", dir[1].s_dirty, "s", 4e-6,                                \
      "write start-up per call onto pages dirty from a recent write")                          \
    X(WRITE_TT_DIRTY, "write.tt_dirty", dir[1].tt_dirty, "s/B", 1.6e-10,                         \
      "write transfer time per byte onto pages dirty from a recent write")                     \
    X(MC, "mc", mc, "s/B", 1e-10, "memcpy time per byte (sieve copy-out/in)")                  \
    X(LOCK, "lock", lock, "s", 1e-6, "byte-range lock + unlock pair")                          \
    X(READ_DT_CALL, "read.dt_call", dir[0].dt_call, "s", 1e-3, "read datatype-I/O request")   \
    X(READ_DT_REGION, "read.dt_region", dir[0].dt_region, "s", 1e-6,                           \
      "read datatype-I/O server work per region")                                              \
    X(WRITE_DT_CALL, "write.dt_call", dir[1].dt_call, "s", 1e-3, "write datatype-I/O request") \
    X(WRITE_DT_REGION, "write.dt_region", dir[1].dt_region, "s", 1e-6,                         \
      "write datatype-I/O server work per region")

#define TESSI_PARAM_ENUM(id, key, field, unit, def, doc) TESSI_PARAM_##id,
enum { TESSI_MODEL_PARAMS(TESSI_PARAM_ENUM) TESSI_NPARAMS };
#undef TESSI_PARAM_ENUM

/** Parameters from this one on are measured only where the storage has them (datatype I/O):
 *  a profile may leave them out (they keep their defaults). */
#define TESSI_PARAM_FIRST_OPTIONAL TESSI_PARAM_READ_DT_CALL

/** Profile key, unit ("s" or "s/B") and description of parameter id (< TESSI_NPARAMS). */
const char *tessi_param_key(int id);
const char *tessi_param_unit(int id);
const char *tessi_param_doc(int id);
/** Read or write parameter id of m. */
double tessi_param_get(const tessi_model *m, int id);
void tessi_param_set(tessi_model *m, int id, double v);

/** Fill m with the documented defaults (locks and batching available, n = p = 1). */
void tessi_model_defaults(tessi_model *m);

/**
 * Check that m can be priced with: every parameter finite and >= 0, n, p, list_max >= 1.
 * TESS_ERR_ARG with a message naming the first bad field otherwise.
 */
int tessi_model_check(const tessi_model *m);

/* --------------------------------------------------------------- primitives */

/**
 * Fixed cost of one storage call: te*p + p*s + lq_dep (paper 003's size-independent terms; p
 * processes queue behind each other's set-up and start-up, the outstanding-I/O latency is paid
 * once).
 */
double tessi_model_call(const tessi_model *m, bool write);

/** Cost of one byte moved to or from storage: (tt + cud) / n (striped over n servers). */
double tessi_model_byte(const tessi_model *m, bool write);

/** Paper 003's T for one contiguous access of size bytes: call + size * byte. */
double tessi_model_access(const tessi_model *m, bool write, int64_t size);

/**
 * The model that prices an overwrite of recently written data: m with the write start-up and
 * transfer time onto dirty pages (s_dirty, tt_dirty) in place of those onto clean ones. A
 * read-modify-write's read is priced as any read.
 */
void tessi_model_dirty(const tessi_model *m, tessi_model *out);

/**
 * Fixed cost of a list batch of k requests, k >= 1. One request is one vectored call (what
 * list I/O does with a batch of one): tessi_model_call. Several, on storage that batches:
 * p*(te + list_call + k*list_pair) + lq_dep (one submission; each request still costs the
 * storage some work, and p processes contend for both). Without batching: k calls.
 */
double tessi_model_batch(const tessi_model *m, bool write, int64_t k);

/**
 * Fixed cost of one region handled on its own: the cheaper of a call of its own and its share
 * of a full list batch (batch(list_max) / list_max). This is what a region saves when it is
 * sieved together with its neighbour instead.
 */
double tessi_model_alone(const tessi_model *m, bool write);

/* ------------------------------------------------------------- ways of moving */

/** How a run of consecutive regions is moved (the building blocks every method is priced by). */
typedef enum {
    TESSI_GROUP_DIRECT = 0, /* one storage call per region, straight to/from user memory */
    TESSI_GROUP_LIST,       /* list batches of <= list_max regions (no staging, no holes) */
    TESSI_GROUP_SIEVE       /* one access of the whole extent through a staging buffer */
} tessi_group_kind;

/**
 * A group of consecutive file regions: regions first .. first + count - 1 (their index in the
 * order a planner saw them, from 0). off/len is the file extent from the first region's start
 * to the last one's end; data the requested bytes in it. For a SIEVE write, rmw says the
 * extent has holes and must be read first, and lock that the read-modify-write must hold a
 * write lock on [off, off + len); an all-covered group needs neither.
 */
typedef struct tessi_group {
    tessi_group_kind kind;
    bool rmw, lock;
    int64_t first, count;
    int64_t off, len, data;
} tessi_group;

/** Storage calls, bytes moved and lock pairs of a plan or method; and its modelled time. */
typedef struct tessi_cost {
    double seconds; /* model estimate */
    int64_t calls;  /* storage calls (a list batch counts once; lock calls not included) */
    int64_t bytes;  /* bytes moved to/from storage: holes and read-modify-write reads included */
    int64_t locks;  /* lock + unlock pairs */
    int64_t peak;   /* largest staging buffer, bytes */
} tessi_cost;

/** Price of one lock + unlock pair taken by p processes (infinite where the storage has no
 *  locks: whatever needs one cannot run). */
double tessi_model_lock(const tessi_model *m);

/** Added price of k memory pieces of vectored calls beyond one per call (p processes). */
double tessi_model_iov(const tessi_model *m, bool write, int64_t k);

/** Price of copying `bytes` bytes between a staging buffer and user memory. */
double tessi_model_copy(const tessi_model *m, int64_t bytes);

/**
 * Cost of one group (added into *c; seconds, calls, bytes, locks summed, peak maxed):
 *  DIRECT: count calls + data bytes;
 *  LIST:   full batches of list_max and one batch of the rest (tessi_model_batch) + data bytes;
 *  SIEVE read:  one call + len bytes + a copy of data bytes out of the staging buffer;
 *  SIEVE write: [lock] + [rmw: one read call + len read bytes] + one write call + len
 *               written bytes + a copy of data bytes into the staging buffer.
 */
void tessi_group_cost(const tessi_model *m, bool write, const tessi_group *g, tessi_cost *c);

/** Add k copies of one (seconds, calls, bytes, locks; peak maxed), saturating at INT64_MAX. */
void tessi_cost_add(tessi_cost *c, const tessi_cost *one, int64_t k);

/** Scale seconds, calls, bytes and locks by k (peak unchanged): a sample's cost extrapolated. */
void tessi_cost_scale(tessi_cost *c, double k);

/**
 * Fixed cost of `requests` datatype-I/O requests carrying `regions` file regions in all:
 * requests * (p*(te + dt_call) + lq_dep) + regions * dt_region (the servers walk the regions).
 */
double tessi_model_dtio(const tessi_model *m, bool write, int64_t requests, int64_t regions);

/* ------------------------------------------------------------------- profiles */

/** Model variants in a profile: served from the page cache, or from the device. */
enum { TESSI_CACHED = 0, TESSI_UNCACHED = 1 };

/** How calibration bypassed the page cache for the uncached variant. */
typedef enum {
    TESSI_UNCACHED_NONE = 0, /* it could not: the profile has no uncached variant */
    TESSI_UNCACHED_DIRECT,   /* O_DIRECT accesses */
    TESSI_UNCACHED_DROP      /* buffered accesses after fsync + posix_fadvise(DONTNEED) */
} tessi_uncached_mode;

/** Where a profile came from. */
typedef enum {
    TESSI_PROFILE_NONE = 0, /* none found: documented defaults */
    TESSI_PROFILE_HINT,     /* hint tess_profile */
    TESSI_PROFILE_ENV,      /* environment variable TESS_PROFILE */
    TESSI_PROFILE_HOME      /* $XDG_CONFIG_HOME/tessera/profile or ~/.config/tessera/profile */
} tessi_profile_source;

/**
 * A profile: the model of a storage in both variants plus where and when it was measured.
 * The profile file is text, `key = value` per line, '#' comments; see profile.c for the format.
 */
typedef struct tessi_profile {
    tessi_model model[2];       /* [TESSI_CACHED], [TESSI_UNCACHED] (valid when uncached != NONE) */
    tessi_uncached_mode uncached;
    /* thread teams (tessera_team.h), measured in the page cache; 0: not measured */
    int64_t team_smin;          /* s_min: the smallest block at which one thread's write
                                   bandwidth stops growing, bytes */
    int64_t team_active;        /* active threads: the fewest threads writing s_min blocks that
                                   reach the highest bandwidth */
    char driver[64];            /* the storage driver measured ("posix" when the file has none) */
    char storage[1024];         /* the path that was calibrated (and its file system) */
    char date[64];              /* when, ISO 8601 UTC */
    char machine[256];          /* host name, OS, architecture, CPUs */
    char path[4096];            /* the file it was loaded from ("" for defaults) */
    tessi_profile_source source;
    bool defaults;              /* no profile: the documented defaults */
} tessi_profile;

/** The documented defaults (defaults = true, no uncached variant, source NONE). */
void tessi_profile_defaults(tessi_profile *pf);

/**
 * Where the profile of files of driver `driver` is: hint (the value of hint tess_profile, may be
 * NULL or "") if given, else $TESS_PROFILE if set and not empty, else the driver's file in
 * $XDG_CONFIG_HOME/tessera/ if XDG_CONFIG_HOME is set (absolute), else in
 * $HOME/.config/tessera/: "profile" for the posix driver, "profile.<driver>" for the others.
 * TESS_ERR_NOENT when none applies (no HOME), TESS_ERR_TRUNCATE when the path does not fit in
 * cap. The file need not exist.
 */
int tessi_profile_locate(const char *hint, const char *driver, char *path, size_t cap,
                         tessi_profile_source *source);

/**
 * Load a profile file. Never trusts it: TESS_ERR_ARG with "path:line: reason" for anything
 * malformed (missing header or key, unknown or repeated key, a value that is not a finite
 * number >= 0, a line over 1023 bytes, a file over 64 KiB, ...), TESS_ERR_NOENT when it does
 * not exist; *out is set only on success.
 */
int tessi_profile_load(const char *path, tessi_profile *out);

/**
 * Write pf to path (created with its missing parent directories; replaced atomically through a
 * temporary file and rename). Values are written with the fewest digits that read back exactly.
 */
int tessi_profile_save(const char *path, const tessi_profile *pf);

/**
 * The profile for files of driver `driver` opened with hint value `hint` (may be NULL): locate
 * and load it. When the default location (or no location) is used and no file is there, *out
 * holds the defaults (defaults = true) and 0 is returned. A profile named by the hint or
 * TESS_PROFILE that does not exist, and any profile that does not load, is an error; one that
 * measured another driver is an error when the hint names it, and gives the defaults when
 * TESS_PROFILE does (profiles are keyed by driver: one file's profile does not price another).
 */
int tessi_profile_resolve(const char *hint, const char *driver, tessi_profile *out);

/* ----------------------------------------------------------------- calibration */

/** Median and range of a measured parameter over the repetitions. */
typedef struct tessi_spread {
    double med, min, max;
    bool measured; /* false: not measurable here, the value is set by convention (e.g. te = 0) */
} tessi_spread;

typedef struct tessi_calib_spread {
    tessi_spread v[2][TESSI_NPARAMS]; /* [variant][parameter] */
} tessi_calib_spread;

/**
 * Measure the model of driver `driver` on the storage behind directory dir (a temporary file is
 * created there through the driver and removed): per-call start-up s of small reads and
 * writes, transfer time tt of large ones, the memcpy rate, the lock pair, and list batches (fit
 * of batch time against its request count), each as the median of repetitions after warm-up,
 * every storage operation through the driver's wrappers. The page-cache variant is always
 * measured; the uncached one through a direct handle (TESSI_OPEN_DIRECT, posix: O_DIRECT) when
 * the driver has one here, else through the driver's evict (posix: fsync +
 * posix_fadvise(DONTNEED), verified) when it works, else not, and never on memory storage
 * (TESSI_CAP_MEMORY: tmpfs, ramfs, mem); out->uncached says which. Uncached writes include
 * reaching the device (direct, or a sync after the write). te, cud and lq_dep cannot be told
 * apart from s and tt on a single local storage: they are set to 0 (and not measured); n = 1.
 * quick: a smaller file and fewer repetitions (about a second). out gets the profile (driver,
 * storage, date, machine filled, path empty); spread (may be NULL) the median and range of
 * every parameter.
 */
int tessi_calibrate(const char *driver, const char *dir, bool quick, tessi_profile *out,
                    tessi_calib_spread *spread);

/** What tessi_calibrate_team measured: bandwidths, bytes per second. */
typedef struct tessi_team_curve {
    int nsizes, nthreads;
    int64_t size[16];       /* block sizes of the s_min sweep (one thread) */
    double size_bw[16];
    int threads[8];         /* thread counts of the active-threads sweep (blocks of s_min) */
    double threads_bw[8];
} tessi_team_curve;

/**
 * Measure s_min and active threads (paper 001 3.4.4) for driver `driver` on the storage behind
 * dir, in the page cache: one thread writing blocks of 8 KiB, 16 KiB, ... (up to 64 MiB, 4 MiB
 * quick) to a file through the driver; s_min is the smallest block reaching 90% of the best
 * bandwidth. Then 1, 2, ... 8 threads (each its own handle and part of the file) writing
 * blocks of s_min; active threads is the fewest reaching 90% of the best. Sets
 * out->team_smin and out->team_active; curve (may be NULL) gets the bandwidths.
 */
int tessi_calibrate_team(const char *driver, const char *dir, bool quick, tessi_profile *out,
                         tessi_team_curve *curve);

#endif
