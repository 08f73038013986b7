/*
 * coll.h - the collective state of a file opened over a group, and the entry points of the
 * collective layer: aggregator placement and the two-phase-or-independent policy (policy.c),
 * realm types (realms.c), and two-phase I/O (twophase.c with describe.c, window.c, storage.c,
 * exchange.c). MPI-free: the group is reached only through its transport (transport.h).
 */
#ifndef TESS_COLL_H
#define TESS_COLL_H

#include "coll/transport.h"
#include "method/method.h"

/** The collective hints of a file (from the hint table, equal on every member). */
typedef struct tessi_coll_hints {
    int64_t cb_nodes;        /* aggregators (0: one per node; clamped to the group size) */
    int64_t cb_buffer;       /* cb_buffer_size: collective buffer per aggregator, bytes */
    int cb_read, cb_write;   /* romio_cb_read / romio_cb_write: TESSI_DS_* */
    int realms;              /* tess_realms: TESSI_REALM_* */
    int64_t striping_unit;   /* striping_unit (0: not given) */
    int64_t realm_size;      /* tess_realm_size: block of cyclic realms */
    int64_t sieve_threshold; /* tess_cb_sieve_threshold: bytes of file per region below which an
                                aggregator sieves its buffer */
    bool pipeline;           /* tess_cb_pipeline: overlap exchange and storage (two halves) */
    int pack;                /* tess_cb_pack: TESSI_DS_* (staging of an exchange's transfers) */
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
 * What every member learns about every other at the start of a collective access (one
 * allgather): the local verdict and the shape of its access.
 */
typedef struct tessi_coll_rec {
    int64_t rc;       /* 0, or the TESS_ERR_* this member failed with */
    int64_t op;       /* 1 read, 2 write: a mismatch is an error everywhere */
    int64_t bytes;    /* data bytes of the access (0: no data) */
    int64_t lo, hi;   /* file extent [lo, hi) of the access (0, 0 without data) */
    int64_t regions;  /* estimated contiguous file regions of the access */
    int64_t mblocks;  /* estimated contiguous memory blocks of the access */
    int64_t atomic;   /* 1: this member is in atomic mode (every member then goes independent) */
    int64_t step_ns;  /* this member's recent time of a collective step (tessi_coll.step_s), ns;
                         0: none measured yet */
    int64_t xscale;   /* tessi_coll.xscale in thousandths (0: none measured yet) */
    int64_t early;    /* 1: this member's read is done already (a read ahead, tessi_coll.ahead)
                         and rc is its outcome as well */
} tessi_coll_rec;

struct tessi_tp_ws;

/** The collective state of a file opened over a group. */
typedef struct tessi_coll {
    tessi_coll_group g;
    tessi_coll_hints h;
    int naggs;           /* aggregators of periodic realms (cb_nodes, else one per node) */
    int *aggs;           /* every rank in the order aggregators are taken (size entries): a
                            call with A aggregators uses aggs[0..A) */
    int nodes;           /* nodes of the group */
    int cores;           /* processors of the smallest node (agreed at open) */
    double step_s;       /* this member's time of the records' allgather, smoothed over calls
                            (0: none yet). The rank that arrives last waits for nobody, so the
                            smallest over the ranks is what one collective step costs the group:
                            a small allreduce or message, and on a group with more processes
                            than processors the scheduling that every step waits for */
    double xscale;       /* this member's measured over modelled seconds of the exchange in
                            its recent two-phase calls, smoothed, >= 1 (0: none yet). A transport
                            slowed by a crowded machine (every message waiting for the
                            scheduler) shows here; the decision prices the exchange times the
                            smallest over the ranks */
    /* the periodic realms: cyclic (made at open), user (tess_file_set_realms), persistent
     * (fixed by the first collective access with data); NULL type until then */
    tessi_realm_type periodic;
    tessi_coll_rec *recs;   /* every rank's record of the current call (size entries) */
    int64_t *scratch;       /* 2 * size entries for decisions that must not fail */
    struct tessi_tp_ws *tp; /* the two-phase workspace (O(size), made at open) */
    struct tessi_coll_memo *memo; /* the decision's last prices (policy.c; NULL: none) */
    /* Read ahead: this member's last collective read ran independently on every member, and
     * the record of that read. A read of the same shape is then made before the records'
     * exchange, whose records carry its outcome: where every member read ahead and the group
     * again decides independent, that one exchange is the whole call (no agreement after). A
     * wrong guess costs the read only: a two-phase call reads again. */
    bool ahead_ok;
    tessi_coll_rec ahead;
    /* The file's method hints (copied at open), their models' p set by each call to the
     * members that access the storage at once: a call the group runs independently picks each
     * member's method as the policy priced it (several writers of one file take turns at the
     * storage) */
    tessi_hints shared;
} tessi_coll;

/** One collective access as the two-phase method sees it (validated, bytes > 0 somewhere). */
typedef struct tessi_coll_access {
    tessi_coll *c;
    tessi_storage *st;
    const tessi_hints *hints;   /* the independent hints (list_max_pairs for list I/O) */
    const tessi_view *view;
    bool write;
    bool lock_writes;           /* plain writes lock their extents (the write gate says so) */
    bool readable;              /* the storage handle can read (read-modify-write possible) */
    int naggs;                  /* aggregators of this call (tessi_coll_decide) */
    char *buf;
    const tess_type *memtype;
    int64_t count;
    int64_t start;              /* first byte of the access in the view's data stream */
    int64_t bytes;              /* data bytes of this member's access */
    const tessi_coll_rec *recs; /* every rank's record, size entries */
} tessi_coll_access;

/* ------------------------------------------------------------------ policy.c */

/**
 * Where the aggregators go (c->aggs, c->nodes, c->naggs): the first rank of every node, then
 * the second of every node, ...; periodic realms use cb_nodes of them, by default one per node
 * (local).
 */
int tessi_coll_place_aggregators(tessi_coll *c);

/** How a collective access runs. */
typedef struct tessi_coll_choice {
    bool twophase;
    int naggs;              /* aggregators when two-phase */
    double ind, tp;         /* the model's seconds of each way (0 where not priced) */
    double xtp;             /* of tp: the exchange's seconds before xscale (0: not priced) */
    double xscale;          /* the measured factor applied to the exchange (1 when none) */
} tessi_coll_choice;

/**
 * How the collective access of the records c->recs runs: two-phase or independent by
 * romio_cb_* of its direction, and for `automatic` by the cost model; with how many
 * aggregators: cb_nodes when given, c->naggs for periodic realms, else the model's choice.
 * lock_writes: writes hold locks (sieving may run on the file). The same answer on every
 * member (a function of the shared records and of values equal everywhere; c->memo only keeps
 * the prices of the previous records).
 */
void tessi_coll_decide(tessi_coll *c, const tessi_hints *h, bool write, bool lock_writes,
                       tessi_coll_choice *out);

/** Allocate c->memo (the prices of the last call's records, reused by a call of the same
 *  shapes; freed with free()). Local; after c->g is set. */
int tessi_coll_memo_init(tessi_coll *c);

/** This member's measurements for its record (step_ns, xscale) before the records'
 *  allgather. */
void tessi_coll_stamp(const tessi_coll *c, tessi_coll_rec *mine);

/**
 * Learn from a collective call (local): step, this member's seconds in the records' allgather
 * (< 0: not measured); xchg, its seconds exchanging in the two-phase access run as `how` says
 * (tess_stats exchange_seconds of the call; < 0: not measured).
 */
void tessi_coll_learn(tessi_coll *c, const tessi_coll_choice *how, double step, double xchg);

/* ------------------------------------------------------------------ realms.c */

/** The periodic realm type of cyclic realms: blocks of `block` bytes dealt to naggs. */
int tessi_realms_cyclic(int naggs, int64_t block, tessi_realm_type *out);

/**
 * Check that the tiles of t from anchor + a * shift, a in [0, naggs), partition the file
 * (tess_file_set_realms): TESS_ERR_VIEW with the reason otherwise.
 */
int tessi_realms_check(const tess_type *t, int64_t shift, int naggs);

/* ------------------------------------------------------------------ twophase.c */

/**
 * Two-phase collective I/O. Collective over a->c: every member calls it with the same records.
 * *done receives the bytes this member moved (a read short at end of file: the stream prefix
 * whose file bytes exist; the caller zeroes the rest). Returns the same verdict on every
 * member: 0, or an error (the local one where this member failed, else a message naming a
 * failed rank).
 */
int tessi_twophase(tessi_coll_access *a, int64_t *done);

/** Allocate / release the two-phase workspace of c (everything of size O(group) a call needs,
 *  so that no call fails for memory between two collective steps). init is local. */
int tessi_twophase_init(tessi_coll *c);
void tessi_twophase_fini(tessi_coll *c);

#endif
