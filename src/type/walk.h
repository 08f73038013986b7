/*
 * walk.h - walks over the data of a datatype tiled through a file or a buffer, for the layers
 * that place accesses (collective I/O): one walker with callbacks in the style of MPICH's
 * Segment (any byte range of the stream, runs handed to a callback, never flattened), and the
 * positional questions answered by descending the tree (O(depth log blocks)).
 *
 * "t tiled from base": instance k of t at base + k * extent(t), k >= 0; its stream is the data
 * bytes of the instances in order. Only the accessors of type.h and the invariant fields are
 * used, so the walks hold whatever the node's layout is.
 */
#ifndef TESS_WALK_H
#define TESS_WALK_H

#include "type/type.h"

/**
 * Called with each run of the walk, offsets absolute (base added). Return 0 to go on, 1 to
 * stop the walk (it then returns 0), or a negative TESS_ERR_* to abort it (returned).
 */
typedef int (*tessi_run_fn)(void *arg, const tessi_run *r);

/**
 * The walker: hand the runs of stream bytes [first, first + bytes) of t tiled from base to fn,
 * in stream order (runs are not merged with each other; a run may be a cut region at either
 * end). t must have data (size > 0). O(depth + log blocks) to start, then O(1) per run.
 */
int tessi_walk(const tess_type *t, int64_t base, int64_t first, int64_t bytes, tessi_run_fn fn,
               void *arg);

/**
 * The tiles [*k, *k + *count) that `bytes` stream bytes from `first` touch, and *kbase where
 * tile *k lies. TESS_ERR_OVERFLOW when that lies beyond int64.
 */
int tessi_walk_tiles(const tess_type *t, int64_t base, int64_t first, int64_t bytes, int64_t *k,
                     int64_t *count, int64_t *kbase);

/**
 * A cursor in place over the stream bytes [first, first + bytes) of t tiled from base,
 * positioned at first; its region offsets are relative to *kbase (add it).
 */
int tessi_walk_cursor(tess_cursor *c, const tess_type *t, int64_t base, int64_t first,
                      int64_t bytes, int64_t *kbase);

/**
 * Data bytes of the stream of t tiled from base that lie before file byte x (the first stream
 * byte whose offset is >= x). t must be monotonic with data. O(depth log blocks).
 */
int tessi_stream_at(const tess_type *t, int64_t base, int64_t x, int64_t *s);

/** The offset of stream byte s of t tiled from base (a walk of one byte). */
int tessi_offset_at(const tess_type *t, int64_t base, int64_t s, int64_t *x);

/**
 * Contiguous regions (adjacent ones merged) of the stream bytes [first, first + bytes) of t
 * tiled from base, counted run by run (a strided run of n regions costs O(1)); stops at cap.
 */
int tessi_count_regions(const tess_type *t, int64_t base, int64_t first, int64_t bytes,
                        int64_t cap, int64_t *n);

#endif
