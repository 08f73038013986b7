/*
 * tessera_group.h - how a front end plugs a group of processes or threads into Tessera.
 *
 * A front end (libtessera_mpi over MPI communicators, an MPI-IO library, a thread API) opens a
 * file over a group with tess_file_open_group, giving a transport table (struct
 * tess_group_ops) and its state for the group. From then on the collective calls of tessera.h
 * on that file (tess_file_set_view, tess_file_set_realms, tess_file_read_at_all,
 * tess_file_write_at_all, tess_file_close) reach the other members only through that table.
 * This header uses only tessera.h: no MPI, no internal header.
 *
 * The conventions of tessera.h apply: int64_t sizes, 0 or a negative TESS_ERR_* return with a
 * message in tess_last_error() (a transport sets it with tess_error_set).
 */
#ifndef TESSERA_GROUP_H
#define TESSERA_GROUP_H

#include "tessera.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Version of struct tess_group_ops; a table of another version is refused at open. */
#define TESS_GROUP_OPS_VERSION 2

/** Reductions of tess_group_ops.allreduce. */
#define TESS_REDUCE_SUM 0 /**< element-wise sum */
#define TESS_REDUCE_MIN 1 /**< element-wise minimum */
#define TESS_REDUCE_MAX 2 /**< element-wise maximum */

/**
 * One piece of memory of a typed exchange: `bytes` data bytes of the stream of `type` tiled
 * from byte `disp` (relative to the transfer's buf; instance k at disp + k * extent, k >= 0),
 * starting at stream byte `first`. A list of contiguous regions is segments of TESS_BYTE.
 */
typedef struct tess_seg {
    const tess_type *type;
    int64_t disp;
    int64_t first;
    int64_t bytes;
} tess_seg;

/**
 * What one member moves to or from one peer in an exchange: the concatenation of the streams
 * of nseg segments over buf, `bytes` in all (0: nothing with this peer). The sending and the
 * receiving side of a pair describe the same number of bytes; byte i of the sender's
 * concatenation lands on byte i of the receiver's. Receiving segments never overlap.
 */
typedef struct tess_xfer {
    char *buf;
    const tess_seg *seg;
    int64_t nseg;
    int64_t bytes;
} tess_xfer;

/**
 * The transport of a group, filled by field name. `ctx` is the transport's state for one
 * member of one group (over MPI: a duplicated communicator). Every function is collective over
 * the group (all members call it, in the same order) unless it says "local". Functions return 0
 * or a negative TESS_ERR_* with a message (tess_error_set); a failure of the communication
 * itself cannot be recovered: the group is unusable afterwards (Tessera then only frees it).
 */
struct tess_group_ops {
    int version;      /**< TESS_GROUP_OPS_VERSION */
    const char *name; /**< "mpi", "threads", ... (messages) */
    /** local: this member's rank in [0, size) */
    int (*rank)(void *ctx);
    /** local: the number of members */
    int (*size)(void *ctx);
    /** local: the node (shared-memory domain) of every rank, numbered from 0 in order of
     *  first appearance: node[r] for r in [0, size) (aggregators go one per node first) */
    void (*nodes)(void *ctx, int *node);
    int (*barrier)(void *ctx);
    /** vals[0..n) is replaced by the element-wise reduction (TESS_REDUCE_*) over the group */
    int (*allreduce)(void *ctx, int64_t *vals, int64_t n, int op);
    /** every member gives len bytes at rec; all receives size * len bytes, rank order */
    int (*allgather)(void *ctx, const void *rec, int64_t len, void *all);
    /** personalized exchange of byte counts: send holds, packed in rank order, scounts[r]
     *  bytes for each rank r. On success *recv is a malloc'ed buffer (NULL when nothing
     *  arrived; the caller frees it) holding, packed in rank order, rcounts[r] bytes from each
     *  rank r */
    int (*alltoallv)(void *ctx, const void *send, const int64_t *scounts, void **recv,
                     int64_t *rcounts);
    /** Typed exchange, in steps (so a caller agrees on failures before data moves and
     *  overlaps the transfer with other work). xprepare (local, may fail): send[r] and recv[r]
     *  for every rank r (this member's own entries are empty: the caller copies locally); the
     *  descriptions stay valid until xwait. */
    int (*xprepare)(void *ctx, const tess_xfer *send, const tess_xfer *recv, void **x);
    /** start moving the prepared exchange */
    int (*xstart)(void *ctx, void *x);
    /** wait until it has all moved */
    int (*xwait)(void *ctx, void *x);
    /** local: release a prepared exchange (after xwait, or instead of xstart) */
    void (*xfree)(void *ctx, void *x);
    /** release ctx (every member frees its own, together) */
    void (*free)(void *ctx);
    /** Seconds the typed exchange spends per contiguous block of a transfer beyond moving its
     *  bytes (MPI: describing the block in a derived datatype and walking it; 0 when blocks
     *  cost nothing more than their bytes). Tessera packs a transfer whose blocks cost more
     *  than copying its bytes into a contiguous staging buffer first (hint tess_cb_pack). */
    double xblock;
};

/**
 * Open a file collectively over the group (ops, ctx): every member calls it with the same path,
 * flags and collective hints. Steps, each ending in an agreement so that every member gets the
 * same result: the arguments (the same path and flags everywhere); every hint validated on
 * every member; with TESS_CREATE, rank 0 creates the file (TESS_EXCL: fails if it exists);
 * the others open it; the collective state (equal collective hints everywhere; data sieving
 * agreed: if any member may sieve writes, every member takes the protecting locks). Nothing is
 * created when any member fails before the creation. Takes over ctx: ops->free(ctx) is called
 * on failure and at tess_file_close. *out is set only on success.
 *
 * Returns 0 or: TESS_ERR_ARG (NULL arguments, bad flags or hints, a path, flags or collective
 * hints differing between members, a table of another version), the errors of tess_file_open,
 * or the transport's error.
 */
TESS_API int tess_file_open_group(const struct tess_group_ops *ops, void *ctx, const char *path,
                                  int flags, const tess_info *info, tess_file **out);

/**
 * Record the message tess_last_error() returns on this thread (printf format) and return code:
 * a transport or front end reports its failures the way Tessera does.
 */
TESS_API int tess_error_set(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/**
 * A cursor over the stream of segment s, positioned at its first byte (*out; release it with
 * tess_cursor_free): its region offsets are relative to *disp (add *disp, then the transfer's
 * buf). With tess_cursor_next_runs a transport walks a segment run by run.
 */
TESS_API int tess_seg_cursor(const tess_seg *s, tess_cursor **out, int64_t *disp);

#ifdef __cplusplus
}
#endif
#endif
