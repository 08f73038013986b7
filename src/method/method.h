/*
 * method.h - independent access methods: how the file regions and memory regions of one access
 * are turned into storage calls (paper 000 section II), and what that costs. Each method is one
 * table filled by field name: its algorithm (read, write) and its price (estimate), side by
 * side in its own file; methods reach storage only through the tessi_drv_* wrappers of driver.h
 * and price themselves only with the primitives of model/model.h. `auto` (registry.c) and the
 * collective policy (coll/policy.c) ask every registered method for its estimate of the same
 * access and compare the figures; nothing else prices a method.
 *
 * Adding a method: one file defining `const struct tess_method tessi_method_<name>` plus one
 * line in registry.c. Its id in tess_stats is its place in the registry (the public
 * TESS_METHOD_* names the first five).
 */
#ifndef TESS_METHOD_H
#define TESS_METHOD_H

#include "base/hints.h"
#include "driver/driver.h"
#include "model/model.h"
#include "view/view.h"

/** Version of struct tess_method; the registry only hands out tables of this version. */
#define TESSI_METHOD_VERSION 2


/** Longest path hint tess_debug_decisions takes (hint values are at most 1023 bytes). */
#define TESSI_HINT_PATH_MAX 1024

/**
 * The method hints of a file, parsed once at open (from the hint table of base/hints.c, by
 * core/file.c), and the cost model the file's methods are priced with, prepared at open from
 * the profile (tess_profile, tess_model): p = 1 (one process per independent file handle),
 * list_max = list_max_pairs, batched only where this handle can batch, locks only where this
 * handle can read-modify-write.
 */
typedef struct tessi_hints {
    const struct tess_method *method; /* tess_method; NULL means auto */
    int ds_read, ds_write;            /* romio_ds_read, romio_ds_write */
    int64_t rd_buffer;                /* ind_rd_buffer_size: sieve read window, bytes */
    int64_t wr_buffer;                /* ind_wr_buffer_size: sieve write window, bytes */
    int64_t list_max_pairs;           /* tess_list_max_pairs: file regions per list call */
    tessi_model model;                /* the cost model (see above) */
    tessi_model dirty;                /* the same for an overwrite of recent data
                                         (tessi_model_dirty) */
    bool model_defaults;              /* no profile was found: the documented defaults */
    char decisions[TESSI_HINT_PATH_MAX]; /* tess_debug_decisions: auto's log file ("": none) */
} tessi_hints;

/**
 * The shape of an access: accesses of the same shape (same filetype, same phase within a tile,
 * same data bytes and direction, priced with the same number of contending processes) have the
 * same file regions up to a translation, so the same estimates and the same PMD plan. A stale
 * match (a freed filetype whose address and invariants a new one repeats) can only cost speed:
 * every method is correct for every access.
 */
typedef struct tessi_shape {
    bool write, dirty;
    const tess_type *filetype;
    int64_t fsize, fextent, fregions, phase, bytes;
    int64_t p; /* the model's contending processes */
} tessi_shape;

/** What `auto` remembers: the last decision and the shape it was made for. */
typedef struct tessi_auto {
    bool valid;
    tessi_shape shape;
    const tess_type *memtype;         /* the memory side it was made for */
    const struct tess_method *choice;
    double est[TESS_METHOD_MAX];      /* every method's seconds, by id, for the whole access */
    int64_t est_regions;              /* regions the estimate looked at */
    double est_scale;                 /* data of the access / data looked at (1: exact) */
} tessi_auto;

/** Most groups of a PMD plan kept for reuse (at most TESSI_PMD_MEMO_GROUPS * 48 bytes per file
 * and direction). */
#define TESSI_PMD_MEMO_GROUPS 1024

/** How pmd moves an access: the way the model prices lowest (ties: alone, plan, classic). */
typedef enum {
    TESSI_PMD_PLAN = 0, /* its plan: Algorithm 2's groups */
    TESSI_PMD_ALONE,    /* every region alone: one run (naive's calls, or list batches) */
    TESSI_PMD_CLASSIC   /* classic sieving's windows, by sieve's own code */
} tessi_pmd_way;

/** What pmd remembers: the way it chose for the last shape, and that access's groups (when
 * there were at most TESSI_PMD_MEMO_GROUPS; n < 0: more, planned afresh each time). */
typedef struct tessi_pmd_memo {
    bool valid;
    tessi_shape shape;
    tessi_pmd_way way;
    int64_t lo;           /* file extent start of the access planned: groups move with it */
    tessi_group *groups;  /* n groups in file order (malloc'ed, cap entries) */
    int64_t n, cap;
} tessi_pmd_memo;

/** Writes remembered to tell an overwrite of recent data (dirty pages) from new data. */
#define TESSI_RECENT_WRITES 8
/** Seconds a written page may stay dirty in the page cache (Linux's dirty_expire default). */
#define TESSI_DIRTY_SECONDS 30.0

/** The extent of a recent write and when it was made. */
typedef struct tessi_recent {
    int64_t lo, hi;
    double at;
} tessi_recent;

/** What the methods of one file remember between its accesses (core/file.h keeps one per file),
 * per direction ([false] reads, [true] writes), so alternating reads and writes of one shape
 * keep both; and the last writes. */
typedef struct tessi_memo {
    tessi_auto decision[2];
    tessi_pmd_memo plan[2];
    tessi_recent recent[TESSI_RECENT_WRITES];
    int next_recent;
    bool counted;          /* regions holds the file regions of accesses of shape `counted_shape` */
    tessi_shape counted_shape;
    int64_t regions;
} tessi_memo;

static inline bool tessi_same_shape(const tessi_shape *x, const tessi_shape *y)
{
    return x->write == y->write && x->dirty == y->dirty && x->filetype == y->filetype &&
           x->fsize == y->fsize &&
           x->fextent == y->fextent && x->fregions == y->fregions && x->phase == y->phase &&
           x->bytes == y->bytes && x->p == y->p;
}

/**
 * One access as a method sees it. The file side is a region source positioned at the start of
 * the access (file offsets, increasing); the memory side a region source over count instances of
 * the memory type (offsets relative to buf), also at the start. Both carry `bytes` data bytes.
 * Methods consume both in step and never flatten either.
 */
typedef struct tessi_access {
    tessi_storage *st;        /* driver, handle, stats */
    const tessi_hints *hints;
    const tessi_view *view;
    tessi_rsrc *file;
    tessi_rsrc *mem;
    char *buf;                /* the caller's buffer: only read from by writes */
    const tess_type *memtype;
    int64_t count;
    int64_t bytes;
    bool dirty;               /* a write over data written recently (tessi_memo_dirty) */
    tessi_memo *memo;         /* what methods remember of this file (NULL: nothing) */
    /* The file side as a description (datatype I/O): the file regions are the stream bytes
     * [fstart, fstart + bytes) of the tiling of ftype from byte fdisp (ftype NULL: none). */
    const tess_type *ftype;
    int64_t fdisp, fstart;
} tessi_access;

/** The model that prices access a: the file's, or its dirty form for an overwrite of recent
 *  data. */
static inline const tessi_model *tessi_access_model(const tessi_access *a)
{
    return a->dirty ? &a->hints->dirty : &a->hints->model;
}

/** Release what a memo holds (it may be used again, empty). */
void tessi_memo_release(tessi_memo *m);

/**
 * A write of the file extent [lo, hi) at time now: true when one of the last
 * TESSI_RECENT_WRITES writes covered that extent less than TESSI_DIRTY_SECONDS ago (its pages
 * are most likely still dirty in the page cache). The write is then remembered.
 */
bool tessi_memo_dirty(tessi_memo *m, int64_t lo, int64_t hi, double now);

/** The shape of access a in direction write. */
void tessi_shape_of(const tessi_access *a, bool write, tessi_shape *out);

/**
 * An access as an estimate sees it: the whole access of one process, or a part of one (an
 * aggregator's window of a collective access). The summary is always filled; r[0..nr) may
 * give the file regions themselves, increasing, for the methods whose price depends on where
 * they lie (sieving windows, pmd's plan): either all of them (nr == regions: the estimate is
 * exact, as the counters of tess_stats will show) or none (nr == 0: such methods price an
 * even spread of `regions` regions of bytes / regions bytes over [lo, hi)).
 */
typedef struct tessi_est {
    const tessi_model *m; /* the prices; p, list_max, locks and batched as the caller's storage */
    bool write;
    int64_t buf;          /* the staging buffer a sieving method may use (its window), >= 1 */
    int64_t bytes;        /* data bytes (0: nothing to move, free) */
    int64_t regions;      /* contiguous file regions (>= 1 when bytes > 0) */
    int64_t lo, hi;       /* file extent of the data */
    int64_t pieces;       /* pieces where memory regions and file regions are both
                             contiguous (>= regions; regions when memory is contiguous) */
    const tess_region *r; /* the file regions, nr of them (see above) */
    int64_t nr;
} tessi_est;

/**
 * A method. read/write move the access and store in *done the data bytes moved. A read moves
 * fewer than `bytes` only at end of file: *done is then the length of the stream prefix whose
 * file bytes exist (the caller zero-fills the rest). On failure they return a TESS_ERR_* code
 * with a message (and *done the bytes moved before it). estimate prices an access (*out, from
 * zero) the way read/write would move it: storage calls, bytes and locks exactly when the
 * regions are given, and the model's seconds.
 */
struct tess_method {
    int version;      /* TESSI_METHOD_VERSION */
    const char *name; /* the value of hint tess_method that selects it */
    /* its writes may read-modify-write bytes between the access's regions: it holds a write
     * lock (tessi_drv_lock) on every range it writes, itself; romio_ds_* steer `auto` towards
     * (enable) or away from (disable) such methods. For the other methods the file layer
     * locks a write's extent when sieving writes can happen on the file (core/access.c). */
    bool sieves;
    int (*read)(tessi_access *a, int64_t *done);
    int (*write)(tessi_access *a, int64_t *done);
    void (*estimate)(const tessi_est *e, tessi_cost *out);
};

extern const struct tess_method tessi_method_naive, tessi_method_sieve, tessi_method_list,
    tessi_method_pmd, tessi_method_datatype;

/** The i-th registered method (i = 0, 1, ...; NULL past the last). Its id is i + 1. */
const struct tess_method *tessi_method_at(int i);

/** The method named name, or NULL. */
const struct tess_method *tessi_method_find(const char *name);

/** The id of a registered method in tess_stats (TESS_METHOD_NONE for others). */
int tessi_method_id(const struct tess_method *m);

/**
 * Whether the file hints h let a method run accesses of direction write: the method tess_method
 * names, if one is named; else romio_ds_<dir> = enable: the sieving methods, disable: the
 * others, automatic: all. h NULL: every method (an aggregator's own choice).
 */
bool tessi_method_allowed(const tessi_hints *h, bool write, const struct tess_method *m);

/**
 * The method the estimates price lowest for e among those h allows, and its cost in *cost
 * (may be NULL). Ties go to a method that does not sieve, then to the earlier registered one
 * (naive, list, sieve, pmd). Used by `auto` and by the collective policy alike.
 */
const struct tess_method *tessi_method_cheapest(const tessi_hints *h, const tessi_est *e,
                                                tessi_cost *cost);

/**
 * Append the n bytes of line to the tess_debug_decisions file of h (nothing when there is
 * none; a write that fails is dropped: a debug log never fails an access).
 */
void tessi_log_decision(const tessi_hints *h, const char *line, int n);

/** Report that method m runs an access on s (defaults: the model is the documented one). */
static inline void tessi_method_note(tessi_storage *s, const struct tess_method *m, bool defaults)
{
    tessi_storage_emit(s, (tessi_event){.kind = TESSI_EV_METHOD, .method = tessi_method_id(m),
                                        .flag = defaults});
}

/**
 * The method for one access in *m: the hint's method if one is set, else `auto`'s choice by
 * the methods' estimates (see registry.c). Records auto's decision and estimates in the stats and, with
 * hint tess_debug_decisions, in the decision log (the caller counts the method that runs with
 * tessi_method_note). The file source may be consumed and
 * repositioned (at 0 on return); the counters of regions it sees are kept exact. Fails only on
 * a failure of the region source (or memory), before any storage call.
 */
int tessi_method_choose(tessi_access *a, bool write, const struct tess_method **m);

/**
 * The naive loop from the sources' current positions to the end of the access: one storage call
 * per matched (file piece, memory piece), so one call per file region when memory is
 * contiguous. Sieve falls back to it when the storage refuses locks. *done gets the bytes moved
 * by this call.
 */
int tessi_naive_move(tessi_access *a, bool write, int64_t *done);

/** The memory side of the access is one contiguous run of bytes (its data, not its extent). */
bool tessi_mem_contiguous(const tessi_access *a);

/**
 * The file regions (*regions) and the pieces they make with the memory regions (*pieces) in
 * `bytes` data bytes of access a, from the types' region counts (O(1), no walk: the types'
 * regions per data byte; pieces assume every memory region end cuts a file region, except
 * where both sides are the same type at the same position). What a method that decides at
 * run time prices its choice with; estimates have the exact counts (tessi_est).
 */
void tessi_access_pieces(const tessi_access *a, int64_t bytes, int64_t *regions,
                         int64_t *pieces);

/**
 * Naive's and list's staged form: when memory cuts the `regions` file regions of `bytes` data
 * bytes into more `pieces`, their memory side may go through a staging buffer of at most buf
 * bytes instead: one copy of the data, and groups of kind `kind` (TESSI_GROUP_DIRECT or _LIST)
 * over one request per region (and per end of a chunk of the buffer inside one). When that
 * prices below *out (the method's direct price), *out becomes it and true is returned.
 */
bool tessi_stage_cheaper(const tessi_model *m, bool write, tessi_group_kind kind,
                         int64_t bytes, int64_t regions, int64_t pieces, int64_t buf,
                         tessi_cost *out);

/** A method's price that may stage (naive's, list's): the direct price of `bytes` data bytes in
 *  `regions` file regions that memory cuts into `pieces`, or the staged one through a buffer of
 *  at most buf bytes, whichever is cheaper, into *out; returns whether that is staging. */
typedef bool tessi_stage_price(const tessi_model *m, bool write, int64_t bytes, int64_t regions,
                               int64_t pieces, int64_t buf, tessi_cost *out);

/** Whether the data bytes of access a from `from` on go through the staging buffer: memory is
 *  noncontiguous and `price` says staging is cheaper, priced from the types' region counts
 *  (tessi_access_pieces: O(1), no walk). */
bool tessi_stage_wanted(const tessi_access *a, bool write, int64_t from, tessi_stage_price *price);

/** One storage request per file region f[0..n), each into the next bytes of the contiguous
 * memory at mem (their data in stream order): req[i] with iov[i]. Returns their data bytes. */
static inline int64_t tessi_run_reqs(char *mem, const tess_region *f, int64_t n,
                                     tessi_io_req *req, struct iovec *iov)
{
    int64_t used = 0;
    for (int64_t i = 0; i < n; i++) {
        iov[i] = (struct iovec){.iov_base = mem + used, .iov_len = (size_t)f[i].len};
        req[i] = (tessi_io_req){.off = f[i].off, .iov = &iov[i], .niov = 1, .len = f[i].len};
        used += f[i].len;
    }
    return used;
}

/** The staging buffer naive and list use for the memory side of a write or a read (the sieve
 * buffer hints ind_wr_buffer_size, ind_rd_buffer_size), bytes. */
static inline int64_t tessi_stage_size(const tessi_access *a, bool write)
{
    return write ? a->hints->wr_buffer : a->hints->rd_buffer;
}

/**
 * A staging buffer of len bytes for access a (*buf) and, when neither its memory nor its file
 * side is contiguous, the second one tessi_stage_move needs (*tmp, else NULL; at most
 * TESSI_STAGE_TMP bytes), in one allocation (freed with tessi_stage_free(*buf)): two large
 * blocks freed together would leave the heap's top above the allocator's trim threshold, and
 * every access would fault in fresh pages.
 * Reported to the tracer as one buffer of len bytes. TESS_ERR_NOMEM with a message when it
 * cannot be allocated. The buffer starts on a TESSI_STAGE_ALIGN boundary: the kernel's copy
 * into or out of it (and the pack engine's) runs at a speed that depends on where the
 * destination starts within a cache line, and a heap address would vary from call to call
 * with whatever else was allocated.
 */
#define TESSI_STAGE_ALIGN 4096
/* The piece through which tessi_stage_move relays data when neither side is contiguous: small
 * enough to stay in the core's cache between its fill and its drain, so the relay costs a cache
 * copy, not a third pass over memory (nc-nc sieving reads of a 2.5 MiB window ran 0.6x of
 * MPI-IO with a window-sized relay). */
#define TESSI_STAGE_TMP ((int64_t)64 << 10)
int tessi_stage_alloc(tessi_access *a, int64_t len, char **buf, char **tmp);

/** Free a buffer of tessi_stage_alloc (NULL: nothing). */
void tessi_stage_free(char *buf);

/**
 * Move the data bytes [pos, pos + len) of the access between user memory and a staging buffer
 * that holds the file from byte ws (to_mem: into memory, as a read does; else out of it) with
 * the pack engine (stage.c): one tess_pack or tess_unpack at a data offset for the whole range,
 * or a memcpy when both sides are contiguous there; when neither is, through tmp
 * (min(len, TESSI_STAGE_TMP) bytes) one cache-sized piece at a time.
 * The file source must be positioned at pos; it is not moved. The range's file bytes must lie
 * in the buffer.
 */
int tessi_stage_move(tessi_access *a, char *stage, int64_t ws, int64_t pos, int64_t len,
                     bool to_mem, char *tmp);

/**
 * Move the data bytes [pos, pos + len) of the access between memory and a buffer holding them
 * packed in stream order (to_mem: into memory) with the pack engine: the memory side of
 * tessi_stage_move, for methods whose file side travels packed (datatype I/O). Memory is where
 * the memory source says (its type, instances and base over a->buf: an independent access's
 * memtype and count, two-phase's round buffer at a shift); the source is not moved.
 */
int tessi_stage_mem(tessi_access *a, int64_t pos, char *packed, int64_t len, bool to_mem);

/** Report a staging buffer of len bytes held by a method (stats.peak_buffer_bytes). */
static inline void tessi_note_buffer(tessi_access *a, int64_t len)
{
    tessi_storage_emit(a->st, (tessi_event){.kind = TESSI_EV_BUFFER, .len = len});
}

#endif
