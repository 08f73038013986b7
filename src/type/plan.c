/*
 * plan.c - choosing a type's pack kernel once, when the type is created (see plan.h).
 *
 * A node whose instance is at most TESSI_PLAN_MAX_MOVES regions gets those regions as a MOVES
 * pattern (found by a short cursor walk over one instance, bounded so that a type whose few
 * regions are made of very many merged blocks gives up instead). Otherwise the plan follows the
 * node's loop: a vector or contig of elements is a RUNS pattern over its blocks; one of a child
 * with a plan adds the child's instances and its blocks as two levels on top of the child's
 * plan; an indexed or blockindexed node of elements moves its own blocks (BLOCKS). A new
 * innermost level that keeps the pattern within TESSI_PLAN_MAX_MOVES moves is unrolled into
 * it, so a nested vector's inner blocks become one fixed pattern per outer block. The work is
 * O(levels + moves) per node, bounded whatever the type's counts, except for an indexed node's
 * longest block, found in one pass over the block lengths its constructor already copied.
 */
#include "type/plan.h"

#include <stdlib.h>
#include <string.h>

/* A plan under construction. */
typedef struct {
    tessi_plan_kind kind;
    int nlevels;
    int64_t shift, len, nmoves, bytes;
    const tess_type *leaf;
    tessi_move moves[TESSI_PLAN_MAX_MOVES];
    tessi_level levels[TESSI_PLAN_MAX_LEVELS];
} draft;

/* Append a region to a MOVES draft, merging it with the previous one when they touch. */
static bool add_move(draft *d, int64_t off, int64_t len)
{
    if (d->nmoves > 0 && d->moves[d->nmoves - 1].off + d->moves[d->nmoves - 1].len == off) {
        d->moves[d->nmoves - 1].len += len;
        return true;
    }
    if (d->nmoves == TESSI_PLAN_MAX_MOVES)
        return false;
    d->moves[d->nmoves++] = (tessi_move){off, len};
    return true;
}

/* Cursor runs tried before giving up on a MOVES pattern for a node with few regions. */
#define WALK_RUNS (4 * TESSI_PLAN_MAX_MOVES)

/* The regions of one instance of t as a MOVES draft; false when there are too many. */
static bool walk_moves(const tess_type *t, draft *d)
{
    tess_cursor c;
    tessi_run runs[WALK_RUNS];
    int64_t n;
    if (tessi_cursor_init(&c, t, 1) || tessi_cursor_runs(&c, runs, WALK_RUNS, -1, &n) ||
        c.depth > 0)
        return false; /* more runs than the walk allows */
    *d = (draft){.kind = TESSI_PLAN_MOVES, .bytes = t->size};
    for (int64_t k = 0; k < n; k++) {
        const tessi_run *r = &runs[k];
        if (r->n > 1 && r->stride == r->len) { /* touching regions: one move */
            if (!add_move(d, r->off, r->len * r->n))
                return false;
            continue;
        }
        if (r->n > TESSI_PLAN_MAX_MOVES)
            return false;
        for (int64_t i = 0; i < r->n; i++)
            if (!add_move(d, (int64_t)((uint64_t)r->off + (uint64_t)i * (uint64_t)r->stride),
                          r->len))
                return false;
    }
    return true;
}

/* Add an outer level of n pattern instances, stride bytes apart. False on overflow. */
static bool add_level(draft *d, int64_t n, int64_t stride)
{
    if (n == 1)
        return true;
    if (d->nlevels == 0 && d->kind != TESSI_PLAN_BLOCKS && n <= TESSI_PLAN_MAX_MOVES &&
        (d->kind == TESSI_PLAN_RUNS ? 1 : d->nmoves) * n <= TESSI_PLAN_MAX_MOVES) {
        /* unroll a small innermost level into the pattern */
        draft u = *d;
        u.kind = TESSI_PLAN_MOVES;
        u.nmoves = 0;
        for (int64_t j = 0; j < n; j++) {
            int64_t at = (int64_t)((uint64_t)j * (uint64_t)stride);
            if (d->kind == TESSI_PLAN_RUNS) {
                if (!add_move(&u, at, d->len))
                    return false;
            } else {
                for (int64_t m = 0; m < d->nmoves; m++)
                    if (!add_move(&u, (int64_t)((uint64_t)at + (uint64_t)d->moves[m].off),
                                  d->moves[m].len))
                        return false;
            }
        }
        if (!tessi_mul(u.bytes, n, &u.bytes))
            return false;
        *d = u;
        return true;
    }
    tessi_level *outer = d->nlevels ? &d->levels[d->nlevels - 1] : NULL;
    if (outer && (tessi_i128)outer->n * outer->stride == stride) /* contiguous repetition */
        return tessi_mul(outer->n, n, &outer->n);
    if (d->nlevels == TESSI_PLAN_MAX_LEVELS)
        return false;
    d->levels[d->nlevels++] = (tessi_level){n, stride};
    return true;
}

/* The draft of the child's plan shifted to the child's place in its parent. */
static bool from_child(const tess_type *c, int64_t shift, draft *d)
{
    const tessi_plan *p = c->plan;
    if (c->kind == TESSI_BUILTIN) {
        *d = (draft){.kind = TESSI_PLAN_RUNS, .len = c->size, .bytes = c->size, .shift = shift};
        return true;
    }
    if (!p)
        return false;
    *d = (draft){.kind = p->kind, .nlevels = p->nlevels, .len = p->len, .bytes = p->bytes,
                 .shift = (int64_t)((uint64_t)p->shift + (uint64_t)shift)};
    memcpy(d->levels, p->levels, sizeof(tessi_level) * (size_t)p->nlevels);
    if (p->kind == TESSI_PLAN_MOVES) {
        d->nmoves = p->nmoves;
        memcpy(d->moves, tessi_plan_moves(p), sizeof(tessi_move) * (size_t)p->nmoves);
    } else if (p->kind == TESSI_PLAN_BLOCKS) {
        d->leaf = p->leaf;
        d->nmoves = p->leaf->count;
    }
    return true;
}

/* The draft of t's plan; false when t has no kernel. */
static bool choose(const tess_type *t, draft *d)
{
    if (t->size == 0)
        return false;
    if (t->num_regions <= TESSI_PLAN_MAX_MOVES && walk_moves(t, d))
        return true;
    switch (t->kind) {
    case TESSI_CONTIG:
        return from_child(t->child, t->disp0, d) && add_level(d, t->count, t->child->extent);
    case TESSI_VECTOR:
        if (t->child->kind == TESSI_BUILTIN) {
            int64_t len = t->blocklen * t->child->size;
            *d = (draft){.kind = TESSI_PLAN_RUNS, .len = len, .bytes = len, .shift = t->disp0};
            return add_level(d, t->count, t->stride);
        }
        return from_child(t->child, t->disp0, d) &&
               add_level(d, t->blocklen, t->child->extent) && add_level(d, t->count, t->stride);
    case TESSI_BLOCKINDEXED:
    case TESSI_INDEXED:
        if (t->child->kind != TESSI_BUILTIN)
            return false;
        *d = (draft){.kind = TESSI_PLAN_BLOCKS, .nmoves = t->count, .bytes = t->size,
                     .shift = t->disp0, .leaf = t};
        for (int64_t b = 0; b < t->count; b++) /* one pass for blockindexed: equal blocks */
            d->len = tessi_max64(d->len, tessi_block_len(t, b) * t->child->size);
        return true;
    default:
        return false;
    }
}

static int64_t gcd(int64_t a, int64_t b) { return b ? gcd(b, a % b) : a; }

/*
 * A common length selects the fixed-size copy loops: moves of lengths that are multiples of
 * one length (a nested vector's blocks, two of which touch and merged) are cut into pieces of
 * it when the pattern stays within TESSI_PLAN_MAX_MOVES moves.
 */
static void uniform(draft *d)
{
    int64_t g = d->moves[0].len, pieces = 0;
    for (int64_t m = 1; m < d->nmoves; m++)
        g = gcd(g, d->moves[m].len);
    for (int64_t m = 0; m < d->nmoves; m++)
        pieces += d->moves[m].len / g;
    d->len = pieces == d->nmoves ? g : 0;
    if (d->len || pieces > TESSI_PLAN_MAX_MOVES)
        return;
    tessi_move cut[TESSI_PLAN_MAX_MOVES];
    int64_t n = 0;
    for (int64_t m = 0; m < d->nmoves; m++)
        for (int64_t at = 0; at < d->moves[m].len; at += g)
            cut[n++] = (tessi_move){d->moves[m].off + at, g};
    memcpy(d->moves, cut, sizeof(tessi_move) * (size_t)n);
    d->nmoves = n;
    d->len = g;
}

int tessi_plan_attach(tess_type *t)
{
    draft dd, *d = &dd;
    t->plan = NULL;
    if (!choose(t, d))
        return 0;
    if (d->kind == TESSI_PLAN_MOVES)
        uniform(d);
    size_t levels = sizeof(tessi_level) * (size_t)d->nlevels;
    size_t moves = d->kind == TESSI_PLAN_MOVES ? sizeof(tessi_move) * (size_t)d->nmoves : 0;
    tessi_plan *p = malloc(sizeof *p + levels + moves);
    if (!p)
        return tessi_error(TESS_ERR_NOMEM, "datatype: out of memory");
    *p = (tessi_plan){.kind = (uint8_t)d->kind, .nlevels = (uint8_t)d->nlevels,
                      .bytes = d->bytes, .shift = d->shift, .len = d->len};
    if (d->kind == TESSI_PLAN_BLOCKS)
        p->leaf = d->leaf;
    else
        p->nmoves = d->nmoves;
    memcpy(p->levels, d->levels, levels);
    memcpy((char *)p->levels + levels, d->moves, moves);
    t->plan = p;
    return 0;
}

void tessi_plan_release(tess_type *t)
{
    free((void *)t->plan);
    t->plan = NULL;
}

int64_t tessi_plan_bytes(const tessi_plan *p)
{
    if (!p)
        return 0;
    return (int64_t)(sizeof *p + sizeof(tessi_level) * (size_t)p->nlevels +
                     (p->kind == TESSI_PLAN_MOVES ? sizeof(tessi_move) * (size_t)p->nmoves : 0));
}
