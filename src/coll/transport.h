/*
 * transport.h - what collective I/O needs of a group besides the public transport table
 * (struct tess_group_ops, include/tessera_group.h): the group as a member sees it, the one
 * error agreement, and copying a transfer's bytes between two segment lists in one address
 * space. The thread transport (coll/thread.h) and the two-phase rounds build on it.
 */
#ifndef TESS_TRANSPORT_H
#define TESS_TRANSPORT_H

#include "tessera_group.h"

#include "base/base.h"

/** A group as one member sees it: the transport, its state, this member's rank, the size. */
typedef struct tessi_coll_group {
    const struct tess_group_ops *ops;
    void *ctx;
    int rank, size;
} tessi_coll_group;

/**
 * Set g up over (ops, ctx) (local): TESS_ERR_ARG for a table of another version or with a
 * missing function, which every member has alike.
 */
int tessi_group_init(tessi_coll_group *g, const struct tess_group_ops *ops, void *ctx);

/**
 * Agree on a verdict (collective; the one place errors are agreed by reduction): v has nv >= 2
 * entries, v[0] and v[1] are filled here and v[2..nv) are the caller's values, reduced by MIN in
 * the same call (v may be NULL when nv is 2). Returns rc where this member failed, else the
 * transport's error, else a failed member's error with "<who>: failed on rank N: ...", else 0.
 * v[2..nv) hold the reduced values whenever the reduction ran.
 */
int tessi_group_agree(const tessi_coll_group *g, int rc, const char *who, int64_t *v, int64_t nv);

/**
 * Copy the bytes of transfer `from` onto those of transfer `to` (the same count) in one address
 * space: a member's share with itself, or a thread transport's exchange. Cursor to cursor, or,
 * where one side has many times the blocks of the other (FLASH's 8-byte memory pieces against
 * a collective buffer's long runs), a cursor over the long runs and the pack engine's kernels
 * for the small pieces.
 */
int tessi_xfer_copy(const tess_xfer *from, const tess_xfer *to);

#endif
