/*
 * type.h - the internal representation of a datatype: a normalized dataloop tree.
 *
 * Every node is a loop of `count` blocks; block b holds blen(b) consecutive instances of a
 * child (instance j at displ(b) + j * child->extent, relative to the node's origin + disp0).
 * Leaves are the predefined types. Normalization guarantees: no zero-length blocks, a child that
 * is one dense run of bytes is folded into its parent as predefined elements, adjacent blocks are
 * merged, and shapes are reduced to the most regular kind (indexed with equal blocks ->
 * blockindexed -> vector -> contig; struct of one child type -> indexed).
 *
 * Code outside src/type reads a node through the invariants (size ... dense) and the block
 * accessors below (tessi_num_blocks, tessi_block_displ, tessi_block_len, tessi_block_child);
 * the loop fields are kind-specific and live in unions.
 */
#ifndef TESS_TYPE_H
#define TESS_TYPE_H

#include "base/base.h"

#include <stdatomic.h>

typedef enum {
    TESSI_BUILTIN = 0,  /* predefined: size == extent == el_size, no children */
    TESSI_CONTIG,       /* count instances of child back to back (stride = child extent) */
    TESSI_VECTOR,       /* count blocks of blocklen instances, block b at b * stride */
    TESSI_BLOCKINDEXED, /* count blocks of blocklen instances, block b at displs[b] */
    TESSI_INDEXED,      /* count blocks of blocklens[b] instances at displs[b] */
    TESSI_STRUCT        /* count blocks of blocklens[b] instances of children[b] at displs[b] */
} tessi_kind;

/*
 * The most levels a type may have; constructors reject deeper nesting. It bounds the cursor's
 * stack, the decoder's recursion and a pack plan's levels.
 */
#define TESSI_MAX_DEPTH 64

typedef struct tessi_plan tessi_plan;

struct tess_type {
    uint8_t kind;            /* tessi_kind */
    bool predefined;
    bool monotonic;          /* regions strictly increasing and non-overlapping */
    bool dense;              /* one region, size == extent, starting at lb */
    uint8_t align;           /* alignment (bytes, a power of 2) of its most-aligned predefined
                                element as the C compiler lays it out: pads struct extents */
    int16_t depth;           /* 0 for predefined */
    atomic_int_least64_t refs;

    /* invariants, computed once at creation */
    int64_t size;            /* data bytes */
    int64_t lb, extent;      /* MPI bounds (resized markers included) */
    int64_t true_lb, true_ub;/* lowest data byte, highest data byte end (0, 0 if empty) */
    int64_t num_regions;     /* regions in one instance, typemap order, adjacent merged */
    int64_t first_off;       /* start of the first region in typemap order (size > 0) */
    int64_t last_end;        /* end of the last region in typemap order (size > 0) */
    const tess_type *el;     /* the predefined element all data is made of (TESS_BYTE if mixed) */
    int64_t el_size;         /* el->size */
    const tessi_plan *plan;  /* pack kernel chosen at creation (NULL: pack walks the cursor) */

    /* the loop: fields by kind; the arrays share the node's allocation */
    int64_t count;           /* CONTIG: instances (one block of count); others: blocks */
    int64_t disp0;           /* added to every block displacement */
    union {
        tess_type *child;        /* all loops but STRUCT */
        tess_type **children;    /* STRUCT: count entries */
        const char *name;        /* BUILTIN */
    };
    union {
        int64_t blocklen;        /* CONTIG (== count), VECTOR, BLOCKINDEXED */
        int64_t *blocklens;      /* INDEXED, STRUCT: count entries */
    };
    union {
        int64_t stride;          /* VECTOR: bytes between block starts */
        int64_t *displs;         /* BLOCKINDEXED, INDEXED, STRUCT: count entries, bytes */
    };
    int64_t *prefix;         /* INDEXED, STRUCT: data bytes before block b (count + 1 entries) */
};

/**
 * Contiguous blocks that `bytes` data bytes of t tiled make, from t's invariants: its regions
 * per data byte, rounded up (a dense type tiles into one block; adjacent regions of
 * consecutive instances are counted apart).
 */
static inline int64_t tessi_type_blocks(const tess_type *t, int64_t bytes)
{
    if (bytes <= 0)
        return 0;
    if (t->dense)
        return 1;
    return (int64_t)(((tessi_i128)bytes * t->num_regions + t->size - 1) / t->size);
}

/** True if the node's blocks have their own lengths (blocklens) and prefix sums. */
static inline bool tessi_has_blocklens(const tess_type *t)
{
    return t->kind == TESSI_INDEXED || t->kind == TESSI_STRUCT;
}

/** Number of blocks of node t. */
static inline int64_t tessi_num_blocks(const tess_type *t)
{
    return t->kind == TESSI_CONTIG ? (t->count > 0) : t->kind == TESSI_BUILTIN ? 0 : t->count;
}

/** Byte displacement of block b of node t (relative to the node origin). */
static inline int64_t tessi_block_displ(const tess_type *t, int64_t b)
{
    switch (t->kind) {
    case TESSI_CONTIG: return t->disp0;
    case TESSI_VECTOR: return (int64_t)((uint64_t)t->disp0 + (uint64_t)b * (uint64_t)t->stride);
    default: return (int64_t)((uint64_t)t->disp0 + (uint64_t)t->displs[b]);
    }
}

/** Instances in block b of node t. */
static inline int64_t tessi_block_len(const tess_type *t, int64_t b)
{
    return tessi_has_blocklens(t) ? t->blocklens[b] : t->blocklen;
}

/** Child type of block b of node t. */
static inline const tess_type *tessi_block_child(const tess_type *t, int64_t b)
{
    return t->kind == TESSI_STRUCT ? t->children[b] : t->child;
}

/** Data bytes of one instance of node t before its block b (0 <= b <= number of blocks). */
static inline int64_t tessi_block_bytes_before(const tess_type *t, int64_t b)
{
    if (tessi_has_blocklens(t))
        return t->prefix[b];
    return t->kind == TESSI_BUILTIN ? 0 : b * t->blocklen * t->child->size;
}

/* ------------------------------------------------------------ internal API */

/** Bytes of memory node t occupies itself (its allocation and its plan; children excluded). */
int64_t tessi_node_bytes(const tess_type *t);

/**
 * The internal form of every constructor: count blocks of blens[b] (or blen) instances of
 * types[b] (or type) at byte displacement disp0 + displs[b] (or disp0 + b * stride), as the
 * public constructors take them. A struct's extent is padded to its alignment when `pad`.
 */
typedef struct {
    int64_t count;
    const int64_t *blens; /* NULL: every block has blen */
    int64_t blen;
    const int64_t *displs; /* NULL: block b at b * stride */
    int64_t stride;
    tess_type *const *types; /* NULL: every block is of type */
    tess_type *type;
    int64_t disp0;
    bool pad;
} tessi_blocks;

/** Normalize and build a type from a block list (type.c's constructors all end here). */
int tessi_build(const char *who, const tessi_blocks *in, tess_type **out);

/** The loop of `old` with the bounds lb, extent (tess_type_resized without the checks). */
int tessi_resize(const tess_type *old, int64_t lb, int64_t extent, tess_type **out);

/**
 * Compute and attach the pack plan of a finished node (plan.c). Fails only on memory
 * exhaustion; a node without a specialized kernel gets no plan.
 */
int tessi_plan_attach(tess_type *t);
/** Release a node's plan. */
void tessi_plan_release(tess_type *t);
/** Bytes of a plan (0 for none). */
int64_t tessi_plan_bytes(const tessi_plan *p);

/**
 * Distinct composite nodes of a type, reached once each: a set of node pointers (open
 * addressing) with a value per node. Walks that do not follow the data (footprint, describe,
 * encode, comparisons) visit a node once through it, so their cost is linear in the number of
 * distinct nodes even when subtrees are shared many times over.
 */
typedef struct {
    const void **keys;
    int64_t *vals;
    size_t cap, used;
} tessi_nodemap;

/** The value stored for key, or -1 when key is absent. */
int64_t tessi_nodemap_get(const tessi_nodemap *m, const void *key);
/** Store key -> val (key absent or present). TESS_ERR_NOMEM on exhaustion (message set). */
int tessi_nodemap_put(tessi_nodemap *m, const void *key, int64_t val);
void tessi_nodemap_free(tessi_nodemap *m);

/**
 * A run: n regions of len bytes each, region k at off + k * stride. The cursor's internal
 * product; pack/unpack consume runs directly so a strided leaf costs one call, not n.
 */
typedef struct {
    int64_t off, len, stride, n;
} tessi_run;

/* One level of a cursor: node t's instance at byte base, at block b, instance j of the block. */
typedef struct {
    const tess_type *t;
    int64_t base, b, j;
} tessi_frame;

/*
 * The cursor: a stack of frames from a virtual top node (count instances of the type) down to
 * the current leaf block (a block of predefined elements, `skip` bytes of it consumed).
 */
struct tess_cursor {
    const tess_type *type;
    int64_t count, total;   /* instances; count * size */
    int64_t pos;            /* stream bytes produced as runs */
    tess_type top;          /* virtual node: count instances of type (fused where it tiles) */
    int depth;              /* frames in use; 0 at the end */
    int64_t skip;           /* bytes of the current leaf block already produced */
    tessi_frame f[TESSI_MAX_DEPTH + 2];
    tessi_run pend;         /* tess_cursor_next: regions produced but not yet delivered */
    int64_t pend_cut;       /* bytes of pend's first region already delivered */
};

/** Initialize a cursor in place (no allocation) at stream byte 0. */
int tessi_cursor_init(tess_cursor *c, const tess_type *t, int64_t count);

/**
 * Produce runs from the cursor: at most max_runs runs and max_bytes bytes (< 0: no limit).
 * Runs are not merged with each other. *n receives the count; 0 means the end.
 */
int tessi_cursor_runs(tess_cursor *c, tessi_run *out, int64_t max_runs, int64_t max_bytes,
                      int64_t *n);

#endif
