/*
 * comm.h - what collective methods need from a group of processes, without depending on MPI:
 * the communicator table (struct tessi_comm), the typed exchange it performs, the collective
 * state of a file, and the entry of the two-phase method.
 *
 * The table is implemented over MPI in src/mpi/comm_mpi.c (libtessera_mpi); a thread team can
 * implement the same table. Collective methods (twophase.c) and the _all calls (core/
 * collective.c) only ever call it, so libtessera never links MPI.
 *
 * Every function of the table is collective over the group unless it says otherwise: all
 * members call it in the same order. Functions return 0 or a negative TESS_ERR_* code with a
 * message; a failure of the communication itself (as opposed to bad arguments) cannot be
 * recovered and leaves the group unusable.
 */
#ifndef TESS_COMM_H
#define TESS_COMM_H

#include "method/method.h"

/** Version of struct tessi_comm; a table of another version is refused when a file is opened. */
#define TESSI_COMM_VERSION 1

/** Reductions of tessi_comm.allreduce. */
enum { TESSI_REDUCE_SUM = 0, TESSI_REDUCE_MIN, TESSI_REDUCE_MAX };

/**
 * One piece of memory of a typed exchange: `bytes` data bytes of the stream of a type tiled from
 * byte `disp` (relative to the xfer's buf; instance k at disp + k * extent), starting at stream
 * byte `first`. A list of contiguous regions is written as segments of TESS_BYTE (first 0).
 */
typedef struct tessi_seg {
    const tess_type *type;
    int64_t disp;
    int64_t first;
    int64_t bytes;
} tessi_seg;

/**
 * What one process moves to or from one peer in an exchange: the concatenation of the streams of
 * nseg segments over buf, `bytes` in all (0: nothing with this peer). The sending and receiving
 * sides of a pair describe the same number of bytes; byte i of the sender's concatenation lands
 * on byte i of the receiver's. Receiving segments must not overlap each other.
 */
typedef struct tessi_xfer {
    char *buf;
    const tessi_seg *seg;
    int64_t nseg;
    int64_t bytes;
} tessi_xfer;

/**
 * The communicator table, filled by field name. `ctx` is the implementation's state for one
 * group (for MPI: a communicator duplicated when the file was opened).
 */
struct tessi_comm {
    int version;      /* TESSI_COMM_VERSION */
    const char *name; /* "mpi", ... (messages) */
    /* local: this process's rank in [0, size), and the group size */
    int (*rank)(void *ctx);
    int (*size)(void *ctx);
    /* local: the node (shared-memory domain) of every rank, numbered from 0 in order of first
     * appearance: node[r] for r in [0, size) */
    void (*nodes)(void *ctx, int *node);
    int (*barrier)(void *ctx);
    /* vals[0..n) is replaced by the element-wise reduction over the group */
    int (*allreduce)(void *ctx, int64_t *vals, int64_t n, int op);
    /* every process gives len bytes at rec; all receives size * len bytes, rank order */
    int (*allgather)(void *ctx, const void *rec, int64_t len, void *all);
    /* personalized exchange of variable byte counts: the send buffer holds, packed in rank order,
     * scounts[r] bytes for each rank r. On success *recv is a malloc'ed buffer (NULL when nothing
     * arrived; free it) holding, packed in rank order, rcounts[r] bytes from each rank r */
    int (*alltoallv)(void *ctx, const void *send, const int64_t *scounts, void **recv,
                     int64_t *rcounts);
    /* typed exchange, in steps so that a caller can agree on failures before any data moves
     * and overlap the transfer with other work:
     *  xprepare (local, may fail): describe the exchange; send[r] and recv[r] for every rank r
     *      (the entries of this process itself must be empty: the caller copies locally).
     *      The descriptions are used at once; their memory must stay valid until xwait.
     *  xstart (collective): start moving data;  xwait: wait until it has all moved;
     *  xfree (local): release the prepared exchange (after xwait, or instead of xstart) */
    int (*xprepare)(void *ctx, const tessi_xfer *send, const tessi_xfer *recv, void **x);
    int (*xstart)(void *ctx, void *x);
    int (*xwait)(void *ctx, void *x);
    void (*xfree)(void *ctx, void *x);
    /* release ctx (collective: every member frees its own) */
    void (*free)(void *ctx);
};

/* ------------------------------------------------------------------ collective state */

/** tess_realms values. */
enum {
    TESSI_REALM_EVEN = 0,   /* aggregate access region split evenly (ROMIO's default) */
    TESSI_REALM_ALIGNED,    /* even, boundaries on multiples of striping_unit */
    TESSI_REALM_PERSISTENT, /* fixed at the first collective access, anchored at byte 0 */
    TESSI_REALM_BALANCED,   /* equal data volume per aggregator */
    TESSI_REALM_CYCLIC,     /* blocks of tess_realm_size dealt round-robin (a realm type) */
    TESSI_REALM_USER        /* the realm type given to tess_file_set_realms */
};

/** The collective hints of a file (parsed once at open; defaults in core/collective.c). */
typedef struct tessi_coll_hints {
    int64_t cb_nodes;        /* aggregators (clamped to the group size) */
    int64_t cb_buffer;       /* cb_buffer_size: collective buffer per aggregator, bytes */
    int cb_read, cb_write;   /* romio_cb_read / romio_cb_write: TESSI_DS_* */
    int realms;              /* tess_realms: TESSI_REALM_* */
    int64_t striping_unit;   /* striping_unit (0: not given) */
    int64_t realm_size;      /* tess_realm_size: block of cyclic realms */
    int64_t sieve_threshold; /* tess_cb_sieve_threshold: bytes of file per region below which an
                                aggregator sieves its buffer */
    bool pipeline;           /* tess_cb_pipeline: overlap exchange and storage (two halves) */
} tessi_coll_hints;

/**
 * Periodic realms (cyclic, persistent, user): aggregator a owns the data bytes of `type` tiled
 * from anchor + a * shift, tiles at every multiple of the type's extent, negative ones included.
 */
typedef struct tessi_realm_type {
    tess_type *type; /* reference held; NULL: none */
    int64_t anchor, shift;
} tessi_realm_type;

/**
 * What every process learns about every other at the start of a collective access (one
 * allgather): the local verdict and the shape of its access.
 */
typedef struct tessi_coll_rec {
    int64_t rc;       /* 0, or the TESS_ERR_* this process failed with */
    int64_t op;       /* 1 read, 2 write: a mismatch is an error everywhere */
    int64_t bytes;    /* data bytes of the access (0: no data) */
    int64_t lo, hi;   /* file extent [lo, hi) of the access (0, 0 without data) */
    int64_t regions;  /* estimated contiguous file regions of the access */
    int64_t atomic;   /* 1: this process is in atomic mode (every rank then goes independent) */
} tessi_coll_rec;

struct tessi_tp_ws;

/** The collective state of a file opened with a communicator (tess_file.coll). */
typedef struct tessi_coll {
    const struct tessi_comm *comm;
    void *ctx;
    int rank, size;
    tessi_coll_hints h;
    int naggs;           /* aggregators */
    int *aggs;           /* their ranks, naggs entries */
    int my_agg;          /* this process's index in aggs, or -1 */
    /* the periodic realms: cyclic (made at open), user (tess_file_set_realms), persistent
     * (fixed by the first collective access with data); NULL type until then */
    tessi_realm_type periodic;
    tessi_coll_rec *recs;   /* every rank's record of the current call (size entries) */
    int64_t *scratch;       /* 2 * size entries for decisions that must not fail */
    struct tessi_tp_ws *tp; /* the two-phase method's workspace (O(size), made at open) */
} tessi_coll;

/** One collective access as the two-phase method sees it (validated, bytes > 0 somewhere). */
typedef struct tessi_coll_access {
    tessi_coll *c;
    tessi_storage *st;
    const tessi_hints *hints;   /* the independent hints (list_max_pairs for list I/O) */
    const tessi_view *view;
    bool write;
    bool lock_writes;           /* take write locks (independent sieving may run on the file) */
    bool readable;              /* the storage handle can read (read-modify-write possible) */
    char *buf;
    const tess_type *memtype;
    int64_t count;
    int64_t start;              /* first byte of the access in the view's data stream */
    int64_t bytes;              /* data bytes of this process's access */
    const tessi_coll_rec *recs; /* every rank's record, size entries */
} tessi_coll_access;

/**
 * Two-phase collective I/O (twophase.c). Collective over a->c: every rank calls it with the same
 * records. *done receives the bytes this process moved (a read short at end of file: the stream
 * prefix whose file bytes exist; the caller zeroes the rest). Returns the same verdict on every
 * rank: 0, or an error (the local one where this process failed, else a message naming a failed
 * rank).
 */
int tessi_twophase(tessi_coll_access *a, int64_t *done);

/** Allocate / release the two-phase workspace of c (everything of size O(group) a call needs,
 *  so that no call fails for memory between two collective steps). init is local. */
int tessi_twophase_init(tessi_coll *c);
void tessi_twophase_fini(tessi_coll *c);

/**
 * Agree on a verdict (collective): returns rc where this process failed, else the error of a
 * failed rank with a message naming it ("<who>: failed on rank N: ..."), else 0.
 */
int tessi_coll_agree(tessi_coll *c, int rc, const char *who);

/**
 * Initialize cursor c in place at the start of segment s (tiles normalized so that the cursor
 * covers only the instances the segment touches); *disp receives the byte displacement, from the
 * xfer's buf, that the cursor's offsets are relative to.
 */
int tessi_seg_cursor(const tessi_seg *s, tess_cursor *c, int64_t *disp);

/**
 * Data bytes of the stream of `t` tiled from `base` (tile k at base + k * extent, k >= 0) that
 * lie before file byte x: the first stream byte whose file offset is >= x. Types with data only.
 */
int tessi_stream_at(const tess_type *t, int64_t base, int64_t x, int64_t *s);

/**
 * Open a region source over `bytes` bytes of the stream of t tiled from base, from stream byte
 * first (tessi_rsrc of view.h, offsets plus base).
 */
int tessi_tiled_open(tessi_rsrc *src, const tess_type *t, int64_t base, int64_t first,
                     int64_t bytes, int64_t *regions);

#endif
