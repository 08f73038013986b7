/*
 * build.c - normalization of a block list into a dataloop node (tessi_build, tessi_resize).
 *
 * Every constructor turns its arguments into a block list (count blocks of blen instances of a
 * child at byte displacements) and hands it to tessi_build, which normalizes it:
 *   1. bounds (lb, extent) and alignment are computed from the input, before anything is
 *      dropped; a struct's extent is padded to a multiple of its alignment (MPI's epsilon);
 *   2. a child that is exactly m back-to-back instances of a grandchild (a tiling contig) is
 *      unwrapped into the block (loop fusion: vector of contiguous -> vector of elements);
 *   3. zero-length blocks are dropped, blocks of mixed predefined children become bytes
 *      (struct-to-indexed), adjacent blocks of the same child are merged;
 *   4. the most regular kind is chosen: contig < vector < blockindexed < indexed < struct, and
 *      evenly spaced instances of a vector whose blocks continue at that spacing
 *      (count * stride == spacing) become one longer vector;
 *   5. a result that is one dense run of bytes becomes contig of its element.
 * Invariants (size, bounds, regions, monotonicity) and the pack plan are computed once here;
 * regular shapes have no per-block arrays, so a vector of 10^9 blocks is one small node, and
 * the arrays of an irregular node share its allocation.
 */
#include "type/type.h"

#include <stdlib.h>
#include <string.h>

typedef tessi_i128 i128; /* base.h; a short name for this file */

static bool fits(i128 v) { return v >= INT64_MIN && v <= INT64_MAX; }

static int64_t bl_len(const tessi_blocks *in, int64_t b) { return in->blens ? in->blens[b] : in->blen; }
static i128 bl_displ(const tessi_blocks *in, int64_t b)
{
    return (i128)in->disp0 + (in->displs ? (i128)in->displs[b] : (i128)b * in->stride);
}
static tess_type *bl_type(const tessi_blocks *in, int64_t b)
{
    return in->types ? in->types[b] : in->type;
}

/* Bounds of n instances of c at displacement d: [lo, hi) of MPI bounds, and of the data. */
static void block_bounds(const tess_type *c, i128 d, int64_t n, i128 *lo, i128 *hi, i128 *tlo,
                         i128 *thi)
{
    i128 span = (i128)(n - 1) * c->extent;
    i128 lo_step = span < 0 ? span : 0, hi_step = span > 0 ? span : 0;
    *lo = d + lo_step + c->lb;
    *hi = d + hi_step + c->lb + c->extent;
    *tlo = d + lo_step + c->true_lb;
    *thi = d + hi_step + c->true_ub;
}

/* MPI bounds and alignment of a validated input (blocks of length 0 contribute nothing). */
typedef struct {
    int64_t lb, extent;
    uint8_t align;
} shape;

/*
 * Validate the input and compute its MPI bounds and alignment: the largest alignment among the
 * blocks that hold data (empty types, like MPI's zero-length types, align nothing).
 */
static int input_shape(const char *who, const tessi_blocks *in, shape *out)
{
    i128 lo = 0, hi = 0;
    bool any = false;
    uint8_t align = 1;
    if (in->count < 0)
        return tessi_error(TESS_ERR_ARG, "%s: count %lld < 0", who, (long long)in->count);
    for (int64_t b = 0; b < in->count; b++) {
        tess_type *c = bl_type(in, b);
        int64_t n = bl_len(in, b);
        if (!c)
            return tessi_error(TESS_ERR_ARG, "%s: type of block %lld is NULL", who, (long long)b);
        if (n < 0)
            return tessi_error(TESS_ERR_ARG, "%s: blocklength %lld of block %lld < 0", who,
                               (long long)n, (long long)b);
        if (n == 0) {
            if (!in->blens)
                break;
            continue;
        }
        i128 d = bl_displ(in, b), blo, bhi, tlo, thi;
        block_bounds(c, d, n, &blo, &bhi, &tlo, &thi);
        if (!fits(d) || !fits(d + (i128)(n - 1) * c->extent) || !fits(blo) || !fits(bhi) ||
            !fits(tlo) || !fits(thi))
            return tessi_error(TESS_ERR_OVERFLOW, "%s: block %lld reaches beyond int64 bytes", who,
                               (long long)b);
        if (!any || blo < lo)
            lo = blo;
        if (!any || bhi > hi)
            hi = bhi;
        any = true;
        if (c->size > 0 && c->align > align)
            align = c->align;
        /* a regular list has the same shape everywhere: first and last block bound it */
        if (!in->blens && !in->displs && !in->types && b == 0 && in->count > 2)
            b = in->count - 2;
    }
    if (in->pad && (hi - lo) % align)
        hi += align - (hi - lo) % align;
    if (!fits(hi - lo) || !fits(hi))
        return tessi_error(TESS_ERR_OVERFLOW, "%s: extent beyond int64 bytes", who);
    *out = (shape){(int64_t)lo, (int64_t)(hi - lo), align};
    return 0;
}

/* ------------------------------------------------------------ node making */

/* Bytes of the per-block arrays a node of this kind and count carries. */
static size_t arrays_bytes(tessi_kind kind, int64_t count)
{
    size_t n = (size_t)count;
    switch (kind) {
    case TESSI_BLOCKINDEXED: return n * sizeof(int64_t);
    case TESSI_INDEXED: return (3 * n + 1) * sizeof(int64_t);
    case TESSI_STRUCT: return (3 * n + 1) * sizeof(int64_t) + n * sizeof(tess_type *);
    default: return 0;
    }
}

int64_t tessi_node_bytes(const tess_type *t)
{
    if (t->predefined)
        return 0;
    return (int64_t)(sizeof *t + arrays_bytes(t->kind, t->count)) + tessi_plan_bytes(t->plan);
}

/* A node of the given kind; the arrays of an irregular kind (count entries) follow it. */
static tess_type *node_alloc(tessi_kind kind, int64_t count)
{
    tess_type *t = calloc(1, sizeof *t + arrays_bytes(kind, count));
    if (!t)
        return NULL;
    t->kind = kind;
    t->count = count;
    atomic_init(&t->refs, 1);
    int64_t *arr = (int64_t *)(t + 1);
    if (kind == TESSI_BLOCKINDEXED) {
        t->displs = arr;
    } else if (tessi_has_blocklens(t)) {
        t->displs = arr;
        t->blocklens = arr + count;
        t->prefix = arr + 2 * count;
        if (kind == TESSI_STRUCT)
            t->children = (tess_type **)(arr + 3 * count + 1);
    }
    return t;
}

static void node_release(tess_type *t)
{
    if (t->kind == TESSI_STRUCT) {
        for (int64_t b = 0; b < t->count; b++)
            tess_type_free(t->children[b]);
    } else {
        tess_type_free(t->child);
    }
    tessi_plan_release(t);
    free(t);
}

tess_type *tess_type_ref(tess_type *t)
{
    if (t && !t->predefined)
        atomic_fetch_add(&t->refs, 1);
    return t;
}

void tess_type_free(tess_type *t)
{
    if (!t || t->predefined)
        return;
    if (atomic_fetch_sub(&t->refs, 1) == 1)
        node_release(t);
}

/* Free a node that failed to finish: its children were not referenced yet. */
static void node_discard(tess_type *t)
{
    tessi_plan_release(t);
    free(t);
}

/* True if c is exactly m back-to-back instances of its child with the natural bounds, so that a
 * block of n instances of c is a block of n * m instances of c->child at displacement + disp0. */
static bool tiling_contig(const tess_type *c)
{
    return c->kind == TESSI_CONTIG && (i128)c->count * c->child->extent == c->extent &&
           c->lb == c->disp0 + c->child->lb;
}

/*
 * Compute the invariants and the plan of a node whose loop is filled in, then take a
 * reference to each child. Returns TESS_ERR_OVERFLOW when a derived quantity does not fit in
 * int64 (the node is then the caller's to discard, children unreferenced).
 */
static int node_finish(tess_type *t, const shape *sh)
{
    int64_t nb = tessi_num_blocks(t);
    i128 size = 0, regions = 0, tlo = 0, thi = 0, first = 0, last = 0;
    bool mono = true, any = false;
    const tess_type *el = NULL;
    int depth = 0;
    for (int64_t b = 0; b < nb; b++) {
        const tess_type *c = tessi_block_child(t, b);
        int64_t n = tessi_block_len(t, b);
        i128 d = tessi_block_displ(t, b), blo, bhi, btlo, bthi;
        block_bounds(c, d, n, &blo, &bhi, &btlo, &bthi);
        bool chains = c->last_end == (i128)c->extent + c->first_off;
        i128 bfirst = d + c->first_off;
        i128 blast = d + (i128)(n - 1) * c->extent + c->last_end;
        size += (i128)n * c->size;
        regions += (i128)n * c->num_regions - (chains ? n - 1 : 0);
        mono = mono && c->monotonic && (n == 1 || (i128)c->extent >= c->true_ub - c->true_lb);
        if (any) {
            if (bfirst == last)
                regions--;
            mono = mono && bfirst >= last;
        }
        if (!any || btlo < tlo)
            tlo = btlo;
        if (!any || bthi > thi)
            thi = bthi;
        if (!any)
            first = bfirst;
        last = blast;
        el = !el || el == c->el ? c->el : TESS_BYTE;
        depth = c->depth + 1 > depth ? c->depth + 1 : depth;
        any = true;
        if (!fits(size) || !fits(regions) || !fits(tlo) || !fits(thi))
            return tessi_error(TESS_ERR_OVERFLOW, "datatype size or bounds beyond int64");
        /* vector blocks repeat: account for blocks 1 .. count-2 at once */
        if (t->kind == TESSI_VECTOR && b == 0 && nb > 2) {
            int64_t mid = nb - 2;
            i128 gap_first = d + t->stride + c->first_off;
            size += (i128)mid * n * c->size;
            regions += (i128)mid * ((i128)n * c->num_regions - (chains ? n - 1 : 0));
            if (gap_first == blast)
                regions -= mid;
            mono = mono && (mid == 0 || gap_first >= blast);
            last = blast + (i128)mid * t->stride;
            i128 lo2, hi2, tlo2, thi2;
            block_bounds(c, d + (i128)mid * t->stride, n, &lo2, &hi2, &tlo2, &thi2);
            if (tlo2 < tlo)
                tlo = tlo2;
            if (thi2 > thi)
                thi = thi2;
            if (!fits(size) || !fits(regions) || !fits(last))
                return tessi_error(TESS_ERR_OVERFLOW, "datatype size beyond int64");
            b = nb - 2;
        }
    }
    if (depth > TESSI_MAX_DEPTH)
        return tessi_error(TESS_ERR_ARG, "datatype nesting deeper than %d levels", TESSI_MAX_DEPTH);
    if (any && !fits(thi - tlo))
        return tessi_error(TESS_ERR_OVERFLOW, "datatype true extent beyond int64");
    t->size = (int64_t)size;
    t->lb = sh->lb;
    t->extent = sh->extent;
    t->align = t->size > 0 ? sh->align : 1;
    t->true_lb = any ? (int64_t)tlo : 0;
    t->true_ub = any ? (int64_t)thi : 0;
    t->num_regions = (int64_t)regions;
    t->first_off = any ? (int64_t)first : 0;
    t->last_end = any ? (int64_t)last : 0;
    t->el = el ? el : TESS_BYTE;
    t->el_size = t->el->size;
    t->depth = depth ? depth : 1;
    t->monotonic = mono;
    t->dense = t->num_regions == 1 && t->size == sh->extent && t->first_off == sh->lb;
    int rc = tessi_plan_attach(t);
    if (rc)
        return rc;
    if (t->kind == TESSI_STRUCT)
        for (int64_t k = 0; k < t->count; k++)
            tess_type_ref(t->children[k]);
    else
        tess_type_ref(t->child);
    return 0;
}

/* Finish node t into *out, or discard it. */
static int finish(tess_type *t, const shape *sh, tess_type **out)
{
    int rc = node_finish(t, sh);
    if (rc) {
        node_discard(t);
        return rc;
    }
    *out = t;
    return 0;
}

/* The empty type with the given bounds. */
static int make_empty(const shape *sh, tess_type **out)
{
    tess_type *t = node_alloc(TESSI_CONTIG, 0);
    if (!t)
        return tessi_error(TESS_ERR_NOMEM, "datatype: out of memory");
    t->child = TESS_BYTE;
    return finish(t, sh, out);
}

static int reloop(const tess_type *old, int64_t shift, const shape *sh, tess_type **out);

static bool unwrap_fits(const tess_type *c, i128 d, i128 n)
{
    i128 lo, hi, tlo, thi;
    if (!fits(n) || !fits(d + c->disp0))
        return false;
    block_bounds(c->child, d + c->disp0, (int64_t)n, &lo, &hi, &tlo, &thi);
    return fits(lo) && fits(hi) && fits(tlo) && fits(thi) && fits(hi - lo) &&
           fits(d + c->disp0 + (n - 1) * (i128)c->child->extent);
}

static bool shift_fits(const tess_type *c, i128 shift)
{
    int64_t nb = tessi_num_blocks(c);
    for (int64_t b = 0; b < nb; b++) {
        i128 lo, hi, tlo, thi, d = (i128)tessi_block_displ(c, b) + shift;
        block_bounds(tessi_block_child(c, b), d, tessi_block_len(c, b), &lo, &hi, &tlo, &thi);
        if (!fits(d) || !fits(lo) || !fits(hi) || !fits(tlo) || !fits(thi) || !fits(hi - lo) ||
            !fits(d + (i128)(tessi_block_len(c, b) - 1) * tessi_block_child(c, b)->extent))
            return false;
        if (c->kind == TESSI_VECTOR && b == 0 && nb > 2)
            b = nb - 2;
    }
    return true;
}

/*
 * A regular node: n blocks of B instances of c, block k at d0 + k * S. Applies loop fusion
 * (a single or touching sequence of blocks is a contig; a contig of a tiling vector is a vector)
 * and takes a new reference to the child it keeps.
 */
static int make_regular(int64_t n, int64_t B, int64_t S, int64_t d0, tess_type *c,
                        const shape *sh, tess_type **out)
{
    i128 total;
    while (tiling_contig(c)) {
        if (!unwrap_fits(c, d0, (i128)B * c->count) ||
            !unwrap_fits(c, d0 + (i128)(n - 1) * S, (i128)B * c->count))
            break;
        i128 nb = (i128)B * c->count;
        if (!fits(nb))
            return tessi_error(TESS_ERR_OVERFLOW, "datatype: element count beyond int64");
        d0 += c->disp0;
        B = (int64_t)nb;
        c = c->child;
    }
    total = (i128)n * B;
    if (total == 1 && c->kind != TESSI_BUILTIN && shift_fits(c, d0))
        return reloop(c, d0, sh, out);
    bool single = n == 1 || (i128)S == (i128)B * c->extent;
    /* the child instances start at evenly spaced origins (step apart): a child vector whose
     * blocks continue at that step (count * stride == step) fuses with them into one vector, and
     * a child that is one block (a contig with a gap after it, a subarray row) becomes the
     * block of a vector with that step */
    i128 instances = single ? total : (B == 1 ? n : 0);
    i128 step = single ? c->extent : S;
    if (instances > 0 && c->kind == TESSI_VECTOR && c->stride > 0 &&
        (i128)c->count * c->stride == step && fits(instances * c->count) &&
        fits((i128)d0 + c->disp0)) {
        n = (int64_t)(instances * c->count);
        B = c->blocklen;
        S = c->stride;
        d0 += c->disp0;
        c = c->child;
        single = false;
    } else if (instances > 1 && c->kind == TESSI_CONTIG && c->count > 0 && fits(step) &&
               fits((i128)d0 + c->disp0)) {
        n = (int64_t)instances;
        B = c->count;
        S = (int64_t)step;
        d0 += c->disp0;
        c = c->child;
        single = false;
    }
    if (!single && (i128)S == (i128)B * c->extent) { /* the fused blocks touch */
        single = true;
        total = (i128)n * B;
    }
    if (!fits((i128)d0 + (single ? 0 : (i128)(n - 1) * S)))
        return tessi_error(TESS_ERR_OVERFLOW, "datatype: block displacement beyond int64");
    if (single && !fits(total))
        return tessi_error(TESS_ERR_OVERFLOW, "datatype: element count beyond int64");
    tess_type *t = node_alloc(single ? TESSI_CONTIG : TESSI_VECTOR, single ? (int64_t)total : n);
    if (!t)
        return tessi_error(TESS_ERR_NOMEM, "datatype: out of memory");
    if (single) {
        t->blocklen = t->count;
    } else {
        t->blocklen = B;
        t->stride = S;
    }
    t->disp0 = d0;
    t->child = c;
    return finish(t, sh, out);
}

/* Make the dense run `t` describes into contig of its element (frees t on success). */
static int make_dense(tess_type *t, tess_type **out)
{
    const tess_type *el = t->el;
    shape sh = {t->lb, t->extent, t->align};
    tess_type *d = node_alloc(TESSI_CONTIG, t->size / el->size);
    if (!d)
        return tessi_error(TESS_ERR_NOMEM, "datatype: out of memory");
    d->blocklen = d->count;
    d->disp0 = t->lb;
    d->child = (tess_type *)el;
    int rc = finish(d, &sh, out);
    if (!rc)
        tess_type_free(t);
    return rc;
}

/* Arrays of a normalized irregular list. */
typedef struct {
    int64_t count;
    int64_t *blens, *displs;
    tess_type **types;
} list;

static void list_free(list *l)
{
    free(l->blens);
    free(l->displs);
    free(l->types);
}

/*
 * Structural equality of two types (same loops, bounds and alignment all the way down), so
 * that one can stand for the other. Pairs proven equal are remembered, so shared subtrees are
 * compared once, and the work per question is bounded: past the budget the answer is "not
 * known to be equal", which only leaves a type less normalized, never wrong.
 */
typedef struct {
    tessi_nodemap proven; /* a -> b: proven equal */
    int64_t budget;       /* node pairs and array entries still allowed */
} sameness;

#define SAME_BUDGET (INT64_C(1) << 14)

static bool same_type(sameness *s, const tess_type *a, const tess_type *b)
{
    if (a == b)
        return true;
    if (a->kind != b->kind || a->kind == TESSI_BUILTIN || a->count != b->count ||
        a->disp0 != b->disp0 || a->lb != b->lb || a->extent != b->extent ||
        a->size != b->size || a->align != b->align)
        return false;
    if (tessi_nodemap_get(&s->proven, a) == (int64_t)(intptr_t)b)
        return true;
    s->budget -= 1 + (a->kind >= TESSI_BLOCKINDEXED ? a->count : 0);
    if (s->budget < 0)
        return false;
    size_t n = sizeof(int64_t) * (size_t)a->count;
    switch (a->kind) {
    case TESSI_CONTIG:
        break;
    case TESSI_VECTOR:
        if (a->blocklen != b->blocklen || a->stride != b->stride)
            return false;
        break;
    case TESSI_BLOCKINDEXED:
        if (a->blocklen != b->blocklen || memcmp(a->displs, b->displs, n))
            return false;
        break;
    default:
        if (memcmp(a->displs, b->displs, n) || memcmp(a->blocklens, b->blocklens, n))
            return false;
        break;
    }
    if (a->kind != TESSI_STRUCT) {
        if (!same_type(s, a->child, b->child))
            return false;
    } else {
        for (int64_t k = 0; k < a->count; k++)
            if (!same_type(s, a->children[k], b->children[k]))
                return false;
    }
    /* remembering is an optimization: without memory the next question recomputes */
    tessi_nodemap_put(&s->proven, a, (int64_t)(intptr_t)b);
    return true;
}

static bool same(sameness *s, const tess_type *a, const tess_type *b)
{
    s->budget = SAME_BUDGET;
    return same_type(s, a, b);
}

/* Copy the input into a list: unwrap tiling contigs, drop empty blocks, merge adjacent ones.
 * A child equal in structure to the previous block's or the first block's is replaced by it, so
 * that separately built copies of one type still make an indexed list (struct-to-indexed). */
static int list_make(const tessi_blocks *in, list *l)
{
    int64_t n = in->count;
    l->count = 0;
    l->blens = malloc(sizeof(int64_t) * (size_t)(n ? n : 1));
    l->displs = malloc(sizeof(int64_t) * (size_t)(n ? n : 1));
    l->types = malloc(sizeof(tess_type *) * (size_t)(n ? n : 1));
    if (!l->blens || !l->displs || !l->types)
        return tessi_error(TESS_ERR_NOMEM, "datatype: out of memory for %lld blocks", (long long)n);
    sameness s = {{0}, 0};
    bool mixed = false;
    for (int64_t b = 0; b < n; b++) {
        tess_type *c = bl_type(in, b);
        i128 len = bl_len(in, b), d = bl_displ(in, b);
        if (len == 0 || c->size == 0)
            continue;
        while (tiling_contig(c)) {
            if (!unwrap_fits(c, d, len * c->count))
                break;
            len *= c->count;
            d += c->disp0;
            c = c->child;
        }
        if (!fits(len) || !fits(d)) {
            tessi_nodemap_free(&s.proven);
            return tessi_error(TESS_ERR_OVERFLOW, "datatype: block %lld beyond int64", (long long)b);
        }
        int64_t k = l->count++;
        if (k > 0 && same(&s, c, l->types[k - 1]))
            c = l->types[k - 1];
        else if (k > 0 && same(&s, c, l->types[0]))
            c = l->types[0];
        l->blens[k] = (int64_t)len;
        l->displs[k] = (int64_t)d;
        l->types[k] = c;
        mixed = mixed || c != l->types[0];
    }
    tessi_nodemap_free(&s.proven);
    /* struct of predefined types of different kinds: count them all in bytes (struct-to-indexed) */
    bool all_builtin = true;
    for (int64_t k = 0; k < l->count; k++)
        all_builtin = all_builtin && l->types[k]->kind == TESSI_BUILTIN;
    if (mixed && all_builtin) {
        for (int64_t k = 0; k < l->count; k++) {
            l->blens[k] *= l->types[k]->size; /* fits: the block's bounds fit */
            l->types[k] = TESS_BYTE;
        }
    }
    /* merge blocks that continue the previous one's instance sequence */
    int64_t m = 0;
    for (int64_t k = 0; k < l->count; k++) {
        if (m > 0 && l->types[k] == l->types[m - 1] &&
            (i128)l->displs[m - 1] + (i128)l->blens[m - 1] * l->types[k]->extent == l->displs[k] &&
            l->types[k]->extent > 0) {
            l->blens[m - 1] += l->blens[k];
            continue;
        }
        l->blens[m] = l->blens[k];
        l->displs[m] = l->displs[k];
        l->types[m] = l->types[k];
        m++;
    }
    l->count = m;
    return 0;
}

/* Build the node for a normalized list (the list's arrays are freed). */
static int make_list(list *l, const shape *sh, tess_type **out)
{
    int64_t n = l->count;
    bool same_child = true, eqlen = true, arith = true;
    int rc;
    for (int64_t k = 1; k < n; k++) {
        same_child = same_child && l->types[k] == l->types[0];
        eqlen = eqlen && l->blens[k] == l->blens[0];
        arith = arith && (i128)l->displs[k] - l->displs[k - 1] == (i128)l->displs[1] - l->displs[0];
    }
    arith = arith && (n < 2 || fits((i128)l->displs[1] - l->displs[0]));
    if (n == 0) {
        rc = make_empty(sh, out);
    } else if (same_child && eqlen && arith) {
        int64_t S = n > 1 ? l->displs[1] - l->displs[0] : 0;
        rc = make_regular(n, l->blens[0], S, l->displs[0], l->types[0], sh, out);
    } else {
        tessi_kind kind = same_child ? (eqlen ? TESSI_BLOCKINDEXED : TESSI_INDEXED) : TESSI_STRUCT;
        tess_type *t = node_alloc(kind, n);
        if (!t) {
            list_free(l);
            return tessi_error(TESS_ERR_NOMEM, "datatype: out of memory for %lld blocks",
                               (long long)n);
        }
        memcpy(t->displs, l->displs, sizeof(int64_t) * (size_t)n);
        if (kind == TESSI_BLOCKINDEXED) {
            t->blocklen = l->blens[0];
        } else {
            memcpy(t->blocklens, l->blens, sizeof(int64_t) * (size_t)n);
            t->prefix[0] = 0;
            for (int64_t k = 0; k < n; k++) /* fits: node_finish checks the total below */
                t->prefix[k + 1] = (int64_t)((i128)t->prefix[k] +
                                             (i128)l->blens[k] * l->types[k]->size);
        }
        if (kind == TESSI_STRUCT)
            memcpy(t->children, l->types, sizeof(tess_type *) * (size_t)n);
        else
            t->child = l->types[0];
        rc = finish(t, sh, out);
    }
    list_free(l);
    return rc;
}

/* Finish a built node: a node that is one dense run becomes contig of its element. */
static int densify(tess_type *t, tess_type **out)
{
    if (t->dense && !(t->kind == TESSI_CONTIG && t->child->kind == TESSI_BUILTIN)) {
        int rc = make_dense(t, &t);
        if (rc) {
            tess_type_free(t);
            return rc;
        }
    }
    *out = t;
    return 0;
}

/*
 * The loop of `old` with every block shifted by `shift` bytes and the given bounds: resized,
 * and a single instance of a child inside a loop (which then needs no level of its own).
 */
static int reloop(const tess_type *old, int64_t shift, const shape *sh, tess_type **out)
{
    tess_type *t = NULL;
    int rc;
    if (old->kind == TESSI_BUILTIN || old->kind == TESSI_CONTIG || old->kind == TESSI_VECTOR) {
        bool builtin = old->kind == TESSI_BUILTIN;
        int64_t d0;
        if (!tessi_add(builtin ? 0 : old->disp0, shift, &d0))
            return tessi_error(TESS_ERR_OVERFLOW, "datatype: displacement beyond int64");
        if (builtin)
            rc = make_regular(1, 1, 0, d0, (tess_type *)old, sh, &t);
        else if (old->kind == TESSI_CONTIG && old->count == 0)
            rc = make_empty(sh, &t);
        else
            rc = make_regular(old->kind == TESSI_CONTIG ? 1 : old->count, old->blocklen,
                              old->stride, d0, old->child, sh, &t);
    } else {
        tessi_blocks in = {.count = old->count, .displs = old->displs,
                           .types = old->kind == TESSI_STRUCT ? old->children : NULL};
        if (tessi_has_blocklens(old))
            in.blens = old->blocklens;
        else
            in.blen = old->blocklen;
        if (old->kind != TESSI_STRUCT)
            in.type = old->child;
        list l = {0};
        if (!tessi_add(old->disp0, shift, &in.disp0))
            return tessi_error(TESS_ERR_OVERFLOW, "datatype: displacement beyond int64");
        rc = list_make(&in, &l);
        if (rc) {
            list_free(&l);
            return rc;
        }
        rc = make_list(&l, sh, &t);
    }
    if (rc)
        return rc;
    return densify(t, out);
}

int tessi_resize(const tess_type *old, int64_t lb, int64_t extent, tess_type **out)
{
    shape sh = {lb, extent, old->align};
    return reloop(old, 0, &sh, out);
}

int tessi_build(const char *who, const tessi_blocks *in, tess_type **out)
{
    shape sh;
    tess_type *t = NULL;
    if (!out)
        return tessi_error(TESS_ERR_ARG, "%s: out is NULL", who);
    int rc = input_shape(who, in, &sh);
    if (rc)
        return rc;
    if (!in->blens && !in->displs && !in->types) {
        if (in->count == 0 || in->blen == 0 || in->type->size == 0)
            rc = make_empty(&sh, &t);
        else
            rc = make_regular(in->count, in->blen, in->stride, in->disp0, in->type, &sh, &t);
    } else {
        list l = {0};
        rc = list_make(in, &l);
        if (rc) {
            list_free(&l);
            return rc;
        }
        rc = make_list(&l, &sh, &t);
    }
    if (rc)
        return rc;
    return densify(t, out);
}
