/*
 * plan.h - pack plans: the copy kernel chosen for a type when it is created (plan.c), run by
 * tess_pack / tess_unpack (pack.c).
 *
 * A plan describes the packed stream of one instance as a pattern repeated over nested levels:
 * pattern instance (i_0, i_1, ...) sits at shift + sum(i_l * levels[l].stride) from the type's
 * origin, levels innermost first, and holds the pattern's moves in order:
 *   RUNS    one region of `len` bytes (strided loops: vectors, subarray rows, nested vectors
 *           whose blocks are single regions);
 *   MOVES   a few regions at fixed offsets (struct and small indexed leaves, small vectors, the
 *           blocks of a nested vector's inner instances), all `len` bytes long when len > 0;
 *   BLOCKS  the blocks of an indexed or blockindexed node of predefined elements (`leaf`), read
 *           from its arrays: indexed leaves move blocks of known length without the cursor.
 * Shapes that fit none of these (a struct of vectors, an indexed type of structs) have no plan
 * and pack through the cursor.
 */
#ifndef TESS_PLAN_H
#define TESS_PLAN_H

#include "type/type.h"

/* The most moves a MOVES pattern holds (a pattern this small stays in L1 and in registers). */
#define TESSI_PLAN_MAX_MOVES 16
/* Levels a plan may have: two per loop node (instances in a block, blocks) plus one. */
#define TESSI_PLAN_MAX_LEVELS (2 * TESSI_MAX_DEPTH + 1)

typedef enum { TESSI_PLAN_RUNS = 1, TESSI_PLAN_MOVES, TESSI_PLAN_BLOCKS } tessi_plan_kind;

typedef struct {
    int64_t n, stride;
} tessi_level;

typedef struct {
    int64_t off, len;
} tessi_move;

struct tessi_plan {
    uint8_t kind;           /* tessi_plan_kind */
    uint8_t nlevels;
    int64_t bytes;          /* data bytes of one pattern instance */
    int64_t shift;          /* added to every move offset */
    int64_t len;            /* RUNS: the region's length; MOVES: the moves' common length, or 0
                               when they differ; BLOCKS: the blocks' common length (a
                               blockindexed leaf) or the longest block's (an indexed leaf) */
    union {
        int64_t nmoves;         /* MOVES: entries of the moves after the levels */
        const tess_type *leaf;  /* BLOCKS: the node whose blocks are the moves (a child of the
                                   type or the type itself, so it lives as long as the plan) */
    };
    tessi_level levels[];   /* nlevels entries, innermost first; MOVES: then the moves */
};

_Static_assert(TESSI_PLAN_MAX_LEVELS <= UINT8_MAX, "plan levels counted in a byte");

/** The moves of a MOVES plan. */
static inline const tessi_move *tessi_plan_moves(const tessi_plan *p)
{
    return (const tessi_move *)(p->levels + p->nlevels);
}

/**
 * Copies into a dense destination of at least `bytes` bytes use streaming stores (pack.c; by
 * default the size of the largest cache). For tests, which set it low to run that path.
 */
void tessi_pack_stream_at(int64_t bytes);

#endif
