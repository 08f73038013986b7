/*
 * tessera.h - the public C API of Tessera, fast structured parallel I/O.
 *
 * Conventions (see README.md):
 *  - Every count, offset, length and extent is int64_t.
 *  - Functions returning int return 0 on success or a negative TESS_ERR_* code; on failure
 *    tess_last_error() returns a message (thread-local) saying what went wrong and where.
 *  - Bad input is rejected before anything changes: no output handle is set, no file byte written.
 *  - The library never prints, aborts or exits.
 */
#ifndef TESSERA_H
#define TESSERA_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TESSERA_VERSION_MAJOR 0
#define TESSERA_VERSION_MINOR 1

/** Marks the library's exported symbols (everything else in the library is hidden). */
#if defined(__GNUC__) || defined(__clang__)
#define TESS_API __attribute__((visibility("default")))
#else
#define TESS_API
#endif

/* ---------------------------------------------------------------- errors */

/** Error codes: every failing call returns one of these (all negative). */
enum tess_error {
    TESS_OK = 0,
    TESS_ERR_ARG = -1,         /**< invalid argument (NULL handle, negative count, bad flag, ...) */
    TESS_ERR_OVERFLOW = -2,    /**< a size, extent or offset does not fit in int64_t */
    TESS_ERR_NOMEM = -3,       /**< memory allocation failed */
    TESS_ERR_IO = -4,          /**< the storage reported an I/O error (EIO and others) */
    TESS_ERR_NOSPACE = -5,     /**< no space left on the storage (ENOSPC) */
    TESS_ERR_VIEW = -6,        /**< a file view is not legal (decreasing or overlapping filetype, ...) */
    TESS_ERR_NOENT = -7,       /**< the file does not exist */
    TESS_ERR_EXIST = -8,       /**< the file exists and TESS_EXCL was given */
    TESS_ERR_ACCESS = -9,      /**< permission denied, or the access mode forbids the call */
    TESS_ERR_DECODE = -10,     /**< an encoded datatype is malformed or exceeds the limits */
    TESS_ERR_UNSUPPORTED = -11,/**< the operation is not supported by this build or storage */
    TESS_ERR_TRUNCATE = -12,   /**< an output buffer is too small */
    TESS_ERR_INTERNAL = -13,   /**< an internal invariant failed (a bug: please report it) */
    TESS_ERR_QUOTA = -14,      /**< a storage quota is exhausted (EDQUOT) */
    TESS_ERR_READONLY = -15    /**< the storage is read-only (EROFS) */
};

/** A static English description of an error code ("unknown error" for other values). */
TESS_API const char *tess_strerror(int code);

/** The detail message of the last failing call on this thread ("" if none). */
TESS_API const char *tess_last_error(void);

/* ------------------------------------------------------------- datatypes */

/**
 * A datatype: an immutable, reference-counted description of a layout of bytes (MPI's
 * typemap), held as a normalized dataloop tree. Regular types cost O(depth) memory whatever
 * their count. Types may be shared between threads.
 */
typedef struct tess_type tess_type;

/** Predefined types (never freed; tess_type_free on them is a no-op). */
TESS_API extern tess_type *const TESS_BYTE, *const TESS_CHAR, *const TESS_INT8, *const TESS_INT16,
    *const TESS_INT32, *const TESS_INT64, *const TESS_UINT8, *const TESS_UINT16,
    *const TESS_UINT32, *const TESS_UINT64, *const TESS_FLOAT, *const TESS_DOUBLE;

/** Array orders for tess_type_subarray and tess_type_darray. */
#define TESS_ORDER_C 0
#define TESS_ORDER_FORTRAN 1

/** Distributions for tess_type_darray (MPI_Type_create_darray). */
#define TESS_DISTRIBUTE_BLOCK 1
#define TESS_DISTRIBUTE_CYCLIC 2
#define TESS_DISTRIBUTE_NONE 3
#define TESS_DISTRIBUTE_DFLT_DARG (-1)

/*
 * Constructors. All follow MPI's definitions; the new type is stored in *out (set only on
 * success) and must be released with tess_type_free. The old type(s) may be freed right after.
 * Blocklengths and counts are in units of the old type; "h" variants and struct take byte
 * displacements, the others displacements in units of the old type's extent. Zero-length
 * blocks are allowed (they contribute nothing, not even bounds). As MPI_Type_create_struct
 * does, tess_type_struct rounds its extent up to a multiple of the alignment of its
 * most-aligned predefined member (the alignment the C compiler gives that type), so that an
 * array of C structs described member by member has the C struct's size as its extent; no other
 * constructor pads. Members without data (zero-length blocks, empty types) align nothing, and a
 * resized member keeps its old type's alignment. tess_type_resized sets any other extent.
 */
TESS_API int tess_type_contiguous(int64_t count, tess_type *old, tess_type **out);
TESS_API int tess_type_vector(int64_t count, int64_t blocklen, int64_t stride, tess_type *old,
                              tess_type **out);
TESS_API int tess_type_hvector(int64_t count, int64_t blocklen, int64_t stride_bytes,
                               tess_type *old, tess_type **out);
TESS_API int tess_type_indexed(int64_t count, const int64_t *blocklens, const int64_t *displs,
                               tess_type *old, tess_type **out);
TESS_API int tess_type_hindexed(int64_t count, const int64_t *blocklens,
                                const int64_t *displs_bytes, tess_type *old, tess_type **out);
TESS_API int tess_type_blockindexed(int64_t count, int64_t blocklen, const int64_t *displs,
                                    tess_type *old, tess_type **out);
TESS_API int tess_type_hblockindexed(int64_t count, int64_t blocklen, const int64_t *displs_bytes,
                                     tess_type *old, tess_type **out);
TESS_API int tess_type_struct(int64_t count, const int64_t *blocklens, const int64_t *displs_bytes,
                              tess_type *const *types, tess_type **out);
/** MPI_Type_create_subarray semantics; order is TESS_ORDER_C or TESS_ORDER_FORTRAN. */
TESS_API int tess_type_subarray(int ndims, const int64_t *sizes, const int64_t *subsizes,
                                const int64_t *starts, int order, tess_type *old, tess_type **out);
/** MPI_Type_create_darray semantics (process `rank` of `size` in a psizes grid). */
TESS_API int tess_type_darray(int size, int rank, int ndims, const int64_t *gsizes,
                              const int *distribs, const int *dargs, const int *psizes, int order,
                              tess_type *old, tess_type **out);
/** MPI_Type_create_resized: same typemap, lower bound lb and extent (extent >= 0). */
TESS_API int tess_type_resized(tess_type *old, int64_t lb, int64_t extent, tess_type **out);

/** Take one more reference to t (returns t). Release each reference with tess_type_free. */
TESS_API tess_type *tess_type_ref(tess_type *t);
/** Release a reference; no-op on NULL and on predefined types. */
TESS_API void tess_type_free(tess_type *t);

TESS_API int64_t tess_type_size(const tess_type *t); /**< data bytes in one instance */
TESS_API int64_t tess_type_extent(const tess_type *t); /**< ub - lb */
TESS_API int64_t tess_type_lb(const tess_type *t); /**< lower bound (resized markers count) */
TESS_API int64_t tess_type_true_lb(const tess_type *t); /**< lowest data byte offset (0 if empty) */
TESS_API int64_t tess_type_true_extent(const tess_type *t); /**< highest data byte end - true_lb */
/** Contiguous regions in one instance, in typemap order, adjacent ones merged. */
TESS_API int64_t tess_type_num_regions(const tess_type *t);
/** Nesting depth of the normalized dataloop tree (0 for predefined types). */
TESS_API int tess_type_depth(const tess_type *t);
/**
 * Bytes of memory the type's representation occupies: its nodes, their arrays and pack plans,
 * each node counted once however many parents share it (0 for predefined types). The walk
 * costs time linear in the distinct nodes; it returns TESS_ERR_NOMEM if its own small table
 * cannot be allocated.
 */
TESS_API int64_t tess_type_footprint(const tess_type *t);
/**
 * Write the normalized dataloop tree, human readable, NUL-terminated, into buf. A node shared
 * by several parents is printed once, labelled ("#1: struct(...)"), and referred to as "#1"
 * afterwards, so the text is linear in the distinct nodes. Returns 0, or TESS_ERR_TRUNCATE
 * when cap is too small: buf then holds the text cut at cap - 1 bytes, terminated, and
 * tess_last_error() says how many bytes the whole text needs.
 */
TESS_API int tess_type_describe(const tess_type *t, char *buf, size_t cap);

/* ---------------------------------------------------------- partial processing */

/** A contiguous region: byte offset (relative to the buffer or file origin) and length. */
typedef struct {
    int64_t off, len;
} tess_region;

/**
 * A cursor walks the regions of `count` instances of a type (instance i at i*extent) in
 * typemap order without flattening; its state is a small fixed stack.
 */
typedef struct tess_cursor tess_cursor;

TESS_API int tess_cursor_create(const tess_type *t, int64_t count, tess_cursor **out);
/** Position at byte data_byte of the packed stream (0 <= data_byte <= count*size). */
TESS_API int tess_cursor_seek(tess_cursor *c, int64_t data_byte);
/**
 * Produce up to max_regions regions totalling at most max_bytes (max_bytes < 0: no limit) from
 * the current position; a region may be cut at the byte limit and resumed by the next call.
 * Adjacent regions are merged. *n receives the number produced; 0 means the end.
 */
TESS_API int tess_cursor_next(tess_cursor *c, tess_region *out, int64_t max_regions,
                              int64_t max_bytes, int64_t *n);
/**
 * A run of equal regions: n regions of len bytes, region k at off + k * stride (the cursor's
 * natural unit: a strided leaf of a million blocks is one run).
 */
typedef struct {
    int64_t off, len, stride, n;
} tess_run;

/**
 * Produce up to max_runs runs totalling at most max_bytes bytes (max_bytes < 0: no limit) from
 * the current position (a run may be cut at either end). Runs are not merged with each other.
 * *n receives the number produced; 0 means the end. Do not interleave with tess_cursor_next on
 * one cursor without a tess_cursor_seek in between.
 */
TESS_API int tess_cursor_next_runs(tess_cursor *c, tess_run *out, int64_t max_runs,
                                   int64_t max_bytes, int64_t *n);
/** The packed-stream byte the cursor is at. */
TESS_API int64_t tess_cursor_position(const tess_cursor *c);
TESS_API void tess_cursor_free(tess_cursor *c);

/**
 * Pack: copy the data bytes [data_offset, data_offset + max_bytes) of the packed stream of
 * `count` instances of t laid out at `in` into `out`. *packed receives the bytes copied
 * (less than max_bytes at the end of the stream).
 */
TESS_API int tess_pack(const void *in, int64_t count, const tess_type *t, int64_t data_offset,
                       void *out, int64_t max_bytes, int64_t *packed);
/** Unpack: the inverse of tess_pack, `bytes` packed bytes into the stream at data_offset. */
TESS_API int tess_unpack(const void *in, int64_t bytes, void *out, int64_t count,
                         const tess_type *t, int64_t data_offset, int64_t *unpacked);

/**
 * A portable, self-contained wire form of a type (little-endian, versioned), for shipping
 * access descriptions between processes and to servers. A subtree shared by several parents
 * is written once and referred to afterwards, so the size and the time are linear in the
 * distinct nodes. With buf NULL or cap too small, *len receives the size needed and
 * TESS_ERR_TRUNCATE is returned (if buf was not NULL).
 */
TESS_API int tess_type_encode(const tess_type *t, void *buf, size_t cap, size_t *len);
/**
 * Rebuild a type from its wire form. Validates everything (depth, counts, sizes, overflow);
 * work is bounded by the encoded length; returns TESS_ERR_DECODE on anything malformed.
 */
TESS_API int tess_type_decode(const void *buf, size_t len, tess_type **out);

/* ------------------------------------------------------------------- hints */

/** A set of hints: string keys and values (ROMIO's names where ROMIO has one). */
typedef struct tess_info tess_info;

TESS_API int tess_info_create(tess_info **out);
/** Set key to value (both copied; keys up to 255 bytes, values up to 1023 bytes). */
TESS_API int tess_info_set(tess_info *i, const char *key, const char *value);
/** Look up key: *found is 1 and value holds it (NUL-terminated), or *found is 0. */
TESS_API int tess_info_get(const tess_info *i, const char *key, char *value, size_t cap,
                           int *found);
/** *n receives the number of keys set in i. */
TESS_API int tess_info_get_nkeys(const tess_info *i, int64_t *n);
/**
 * The key number k (0 <= k < nkeys, in the order keys were first set) into key, NUL-terminated
 * (TESS_ERR_TRUNCATE when cap is too small; keys are at most 255 bytes).
 */
TESS_API int tess_info_get_nthkey(const tess_info *i, int64_t k, char *key, size_t cap);
TESS_API void tess_info_free(tess_info *i);

/* ------------------------------------------------------------------- files */

typedef struct tess_file tess_file;

/** Open flags (exactly one of the first three, optionally with the others). */
#define TESS_RDONLY 0x1
#define TESS_WRONLY 0x2
#define TESS_RDWR 0x4
#define TESS_CREATE 0x8
#define TESS_EXCL 0x10

/**
 * Open a file through the storage driver named by hint "tess_driver" (default "posix").
 * The info is copied; it may be freed after the call. Hints are listed in README.md.
 */
TESS_API int tess_file_open(const char *path, int flags, const tess_info *info, tess_file **out);
/** Close the file and release everything it holds (also on error). */
TESS_API int tess_file_close(tess_file *f);
/**
 * Set the view (MPI-IO rules): the filetype tiles the file from byte disp; its regions must be
 * in nondecreasing, non-overlapping order, also across tiles; etype's size divides the
 * filetype's size. The types are referenced, not copied; the caller may free its handles.
 * The default view is disp 0, etype and filetype TESS_BYTE.
 */
TESS_API int tess_file_set_view(tess_file *f, int64_t disp, tess_type *etype, tess_type *filetype);
/**
 * Read count instances of memtype at offset (in etypes of the view) into buf. Reading past the
 * end of file is a short read: *bytes is the number of bytes read (the rest of the buffer's
 * data bytes are set to zero). Methods are chosen with the hint "tess_method".
 */
TESS_API int tess_file_read_at(tess_file *f, int64_t offset, void *buf, int64_t count,
                               tess_type *memtype, int64_t *bytes);
/** Write count instances of memtype from buf at offset (in etypes of the view). */
TESS_API int tess_file_write_at(tess_file *f, int64_t offset, const void *buf, int64_t count,
                                tess_type *memtype, int64_t *bytes);
TESS_API int tess_file_sync(tess_file *f);
TESS_API int tess_file_get_size(tess_file *f, int64_t *size);
TESS_API int tess_file_set_size(tess_file *f, int64_t size);

/**
 * Delete the file at path through the storage driver named by hint "tess_driver" of info
 * (info may be NULL: the default driver). Hints are validated as tess_file_open validates them.
 * Returns 0, TESS_ERR_NOENT when there is no such file, TESS_ERR_ACCESS or TESS_ERR_READONLY
 * when the storage refuses, TESS_ERR_ARG for a NULL path or a bad hint. Handles still open on
 * the file keep working where the storage allows it (POSIX: until they are closed).
 */
TESS_API int tess_file_delete(const char *path, const tess_info *info);

/**
 * Allocate storage for the first size bytes of the file (MPI_File_preallocate): afterwards
 * writes to bytes below size cannot fail for want of space. A file shorter than size grows to
 * size (the new bytes read as zeros); a longer file keeps its size and contents (never shrinks).
 * Where the storage cannot reserve space (the file system refuses fallocate), zeros are written
 * beyond the end of file only, so bytes already in the file are never rewritten; holes inside
 * the file then stay unallocated, and a write beyond the end of file by another process during
 * the call may be overwritten by those zeros (MPI_File_preallocate is collective: nobody writes
 * then). Not collective here: a front end calls it on one process.
 * Returns 0, TESS_ERR_ARG (size < 0), TESS_ERR_ACCESS (opened read-only), TESS_ERR_NOSPACE,
 * TESS_ERR_QUOTA or the storage's error.
 */
TESS_API int tess_file_preallocate(tess_file *f, int64_t size);

/**
 * Atomic mode (MPI_File_set_atomicity). With on != 0, every access of f (independent or
 * collective, read or write) holds a byte-range lock on its file extent for its whole duration:
 * shared for reads, exclusive for writes. So an access is atomic against every other access
 * through Tessera that takes locks (every access of a file in atomic mode, and every write of a
 * file where data sieving may write): no reader sees part of a concurrent write and concurrent
 * writes to overlapping bytes do not interleave. Collective accesses where any process of the
 * group is in atomic mode run as independent accesses (each under its lock) on every process.
 * Storage without byte-range locks cannot give this guarantee: turning atomic mode on there
 * fails with TESS_ERR_UNSUPPORTED (and leaves it off), and a lock the storage refuses later is
 * an error of the access, never a silent unlocked access. on == 0 returns to the default
 * (nonatomic) mode. The processes of a group may differ.
 */
TESS_API int tess_file_set_atomicity(tess_file *f, int on);
/** *on receives 1 in atomic mode, else 0. */
TESS_API int tess_file_get_atomicity(const tess_file *f, int *on);

/**
 * The hints in use on f, defaults included, as a new info object in *out (free it with
 * tess_info_free): every hint README.md lists that applies to the file, ROMIO's names and value
 * spellings where ROMIO has one (cb_buffer_size, cb_nodes, romio_cb_read, romio_cb_write,
 * romio_ds_read, romio_ds_write, ind_rd_buffer_size, ind_wr_buffer_size, striping_unit where
 * realms use one), Tessera's own, and the storage driver's. Giving the result to
 * tess_file_open opens a file with the same settings.
 */
TESS_API int tess_file_get_info(const tess_file *f, tess_info **out);

/*
 * Collective access. On a file opened with a communicator (tess_file_open_mpi in tessera_mpi.h)
 * every process of the group calls these together, each with its own offset, buffer, count and
 * memory type (count 0: no data); each returns the same verdict on every process (an error on
 * one process, bad input included, is an error on all: nothing hangs). Data goes through
 * two-phase I/O (aggregators, collective buffers, file realms) or, when the hints or the cost
 * model say so, through the independent methods. *bytes as for tess_file_read_at /
 * tess_file_write_at. On a file opened with tess_file_open they are the independent calls.
 *
 * Collective hints (tess_info, given to tess_file_open_mpi; the same on every process):
 *   cb_nodes (aggregators; default one per node), cb_buffer_size (bytes per aggregator,
 *   default 16 MiB, at most 1 GiB), romio_cb_read / romio_cb_write (enable | disable |
 *   automatic, default automatic: the cost model decides per call), tess_realms (even |
 *   aligned | persistent | balanced | cyclic, default even), striping_unit (aligned realm
 *   boundaries, default 1 MiB), tess_realm_size (cyclic block, default striping_unit or
 *   1 MiB), tess_cb_sieve_threshold (file bytes per region below which an aggregator sieves,
 *   default 16 KiB), tess_cb_pipeline (enable | disable, default disable). README.md has the
 *   details.
 */
TESS_API int tess_file_read_at_all(tess_file *f, int64_t offset, void *buf, int64_t count,
                                   tess_type *memtype, int64_t *bytes);
TESS_API int tess_file_write_at_all(tess_file *f, int64_t offset, const void *buf, int64_t count,
                                    tess_type *memtype, int64_t *bytes);

/**
 * File realms by datatype (paper 002), collective on a file opened with a communicator: with N
 * aggregators (hint cb_nodes), aggregator a owns the data bytes of `realm` tiled from
 * disp + a * shift (tiles at every multiple of the realm type's extent, before disp too). The
 * realms must partition the file: the type's regions increase within its extent, N times its
 * size is its extent, and the N shifted tilings cover every byte once (checked; TESS_ERR_VIEW
 * otherwise, on every process). Example, blocks of B bytes dealt round-robin: realm = B bytes
 * resized to extent N * B, shift = B. The type is referenced, not copied. realm NULL returns to
 * the hint tess_realms' even realms. On a file without a communicator it does nothing.
 */
TESS_API int tess_file_set_realms(tess_file *f, int64_t disp, tess_type *realm, int64_t shift);

/**
 * The independent methods, as tess_stats reports them (hint tess_method selects one by name;
 * its default, "auto", picks one per access by the cost model). A method added to a build gets
 * the next id after these (tess_method_name names every id of the build; TESS_METHOD_COUNT
 * counts the five below and the NONE id).
 */
enum tess_method_id {
    TESS_METHOD_NONE = 0, /**< no access yet */
    TESS_METHOD_NAIVE,    /**< one storage call per contiguous piece */
    TESS_METHOD_SIEVE,    /**< classic data sieving: windows of the buffer hint's size */
    TESS_METHOD_LIST,     /**< list I/O: batches of (offset, length) requests */
    TESS_METHOD_PMD,      /**< performance-model-directed sieving (paper 003) */
    TESS_METHOD_DATATYPE, /**< datatype I/O: the filetype shipped to the storage servers */
    TESS_METHOD_COUNT
};

/** The tess_method hint value of a TESS_METHOD_* id ("none" for NONE, "unknown" otherwise). */
TESS_API const char *tess_method_name(int id);

/** Capacity of the per-method arrays of tess_stats (adding a method changes no layout). */
#define TESS_METHOD_MAX 16

/** How tess_stats_combine merges a field of two processes' stats. */
#define TESS_STATS_SUM 0      /**< the sum */
#define TESS_STATS_MAX 1      /**< the largest */
#define TESS_STATS_MIN_SET 2  /**< the smallest nonzero (0: none had one) */

/**
 * The fields of tess_stats, once: X(type, name, reduction, doc) for a number, A(type, name,
 * count, reduction, doc) for an array. The struct, tess_stats_combine and tess_stats_format
 * are generated from this list; new fields are only ever appended.
 */
#define TESS_STATS_FIELDS(X, A)                                                                 \
    X(int64_t, desired_bytes, TESS_STATS_SUM, "bytes the caller asked to read or write")       \
    X(int64_t, accessed_bytes, TESS_STATS_SUM,                                                  \
      "bytes moved to/from storage (holes, read-modify-write reads included)")                  \
    X(int64_t, io_ops, TESS_STATS_SUM, "storage calls (a vectored call or a batch counts once)") \
    X(int64_t, resent_bytes, TESS_STATS_SUM,                                                    \
      "bytes of this process's access moved to or from another process (collective)")          \
    X(int64_t, regions, TESS_STATS_SUM, "contiguous file regions requested")                    \
    X(int64_t, lock_ops, TESS_STATS_SUM, "lock and unlock calls")                               \
    X(int64_t, min_access, TESS_STATS_MIN_SET, "smallest single storage access, bytes (0: none)") \
    X(int64_t, max_access, TESS_STATS_MAX, "largest single storage access, bytes")             \
    X(int64_t, lock_fallbacks, TESS_STATS_SUM,                                                  \
      "sieving writes done without read-modify-write: the storage refused a lock, or the "    \
      "write gate did not admit one")                                                        \
    X(int64_t, peak_buffer_bytes, TESS_STATS_MAX, "largest staging buffer a method held")      \
    X(double, io_seconds, TESS_STATS_MAX, "seconds spent in storage calls")                    \
    X(double, exchange_seconds, TESS_STATS_MAX,                                                 \
      "seconds exchanging data, descriptions and agreements between processes (collective)")   \
    X(int64_t, last_method, TESS_STATS_MAX, "TESS_METHOD_* that ran the last access")          \
    A(int64_t, method_accesses, TESS_METHOD_MAX, TESS_STATS_SUM,                                \
      "accesses each method ran, by TESS_METHOD_* id")                                          \
    X(int64_t, auto_decisions, TESS_STATS_SUM, "accesses whose method `auto` chose")            \
    X(int64_t, auto_reused, TESS_STATS_SUM,                                                     \
      "of those, decided by reusing the estimates of the previous access of the same shape")    \
    A(double, est_seconds, TESS_METHOD_MAX, TESS_STATS_MAX,                                     \
      "the model's time for each method of the last access `auto` decided, by TESS_METHOD_* id") \
    X(int64_t, est_regions, TESS_STATS_MAX, "file regions that estimate looked at")             \
    X(double, est_scale, TESS_STATS_MAX,                                                        \
      "data bytes of that access / data bytes looked at (1: exact, > 1: extrapolated)")         \
    X(int64_t, model_defaults, TESS_STATS_MAX,                                                  \
      "1 if the cost model is the documented defaults (no profile was found)")                  \
    X(int64_t, request_bytes, TESS_STATS_SUM,                                                   \
      "access descriptions sent to aggregators (collective)")                                   \
    X(int64_t, flat_request_bytes, TESS_STATS_SUM,                                              \
      "what (offset, length) pairs would have cost instead: 16 bytes per file region")          \
    X(int64_t, packed_bytes, TESS_STATS_SUM,                                                    \
      "bytes the exchange packed into or out of contiguous staging buffers (collective)")       \
    X(int64_t, server_requests, TESS_STATS_SUM,                                                 \
      "requests sent to storage servers (RADOS: object operations, size and layout included)")  \
    X(int64_t, auth_insecure, TESS_STATS_MAX,                                                   \
      "1 when the connection to the storage is not authenticated (RADOS without cephx)")         \
    X(int64_t, server_programs, TESS_STATS_SUM,                                                 \
      "of server_requests, those that ran a program on the server (RADOS: datatype I/O)")

#define TESS_STATS_MEMBER_(type, name, reduction, doc) type name;
#define TESS_STATS_ARRAY_(type, name, count, reduction, doc) type name[count];
/**
 * The I/O characteristics of paper 000 Table I and the methods' decisions, per file and
 * process, accumulated since open or the last reset (fields: TESS_STATS_FIELDS).
 */
typedef struct tess_stats {
    TESS_STATS_FIELDS(TESS_STATS_MEMBER_, TESS_STATS_ARRAY_)
} tess_stats;
#undef TESS_STATS_MEMBER_
#undef TESS_STATS_ARRAY_

/**
 * The stats of f into the first `size` bytes of out (size: sizeof the caller's tess_stats, so a
 * program compiled against an older or newer header keeps working: fields the library does not
 * have are zeroed, fields the caller has no room for are left out). Use tess_file_stats.
 */
TESS_API int tess_file_stats_sized(const tess_file *f, tess_stats *out, size_t size);
/** The stats of f (see tess_file_stats_sized). */
static inline int tess_file_stats(const tess_file *f, tess_stats *out)
{
    return tess_file_stats_sized(f, out, sizeof *out);
}
/**
 * Merge another process's stats into acc, field by field as TESS_STATS_FIELDS says (sums,
 * largest values, smallest nonzero access). size as for tess_file_stats_sized.
 */
TESS_API int tess_stats_combine(tess_stats *acc, const tess_stats *in, size_t size);
/**
 * Write the stats as text, one "name value" line per field (arrays: name[i] for each method of
 * this build), NUL-terminated, into buf. Returns 0, or TESS_ERR_TRUNCATE when cap is too small
 * (buf holds a truncated, terminated text).
 */
TESS_API int tess_stats_format(const tess_stats *s, size_t size, char *buf, size_t cap);
TESS_API void tess_file_reset_stats(tess_file *f);

#ifdef __cplusplus
}
#endif
#endif
