/*
 * type.c - datatype constructors and normalization into dataloops.
 *
 * Every constructor turns its arguments into a block list (count blocks of blen instances of a
 * child at byte displacements) and hands it to tessi_build, which normalizes it:
 *   1. bounds (lb, extent) are computed from the input, before anything is dropped;
 *   2. a child that is exactly m back-to-back instances of a grandchild (a tiling contig) is
 *      unwrapped into the block (loop fusion: vector of contiguous -> vector of elements);
 *   3. zero-length blocks are dropped, blocks of mixed predefined children become bytes
 *      (struct-to-indexed), adjacent blocks of the same child are merged;
 *   4. the most regular kind is chosen: contig < vector < blockindexed < indexed < struct, and
 *      evenly spaced instances of a vector whose blocks continue at that spacing
 *      (count * stride == spacing) become one longer vector;
 *   5. a result that is one dense run of bytes becomes contig of its element.
 * Invariants (size, bounds, regions, monotonicity) are computed once here; regular shapes never
 * allocate per-block arrays, so a vector of 10^9 blocks is one small node.
 */
#include "type/type.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef tessi_i128 i128; /* base.h; a short name for this file */

#define BUILTIN(var, nm, sz)                                                                   \
    static struct tess_type var = {.kind = TESSI_BUILTIN, .predefined = true, .name = nm,       \
                                   .size = sz, .lb = 0, .extent = sz, .true_lb = 0,             \
                                   .true_ub = sz, .num_regions = 1, .first_off = 0,             \
                                   .last_end = sz, .el = &var, .el_size = sz, .depth = 0,       \
                                   .monotonic = true, .dense = true,                            \
                                   .footprint = sizeof(struct tess_type)}

BUILTIN(builtin_byte, "byte", 1);
BUILTIN(builtin_char, "char", 1);
BUILTIN(builtin_int8, "int8", 1);
BUILTIN(builtin_int16, "int16", 2);
BUILTIN(builtin_int32, "int32", 4);
BUILTIN(builtin_int64, "int64", 8);
BUILTIN(builtin_uint8, "uint8", 1);
BUILTIN(builtin_uint16, "uint16", 2);
BUILTIN(builtin_uint32, "uint32", 4);
BUILTIN(builtin_uint64, "uint64", 8);
BUILTIN(builtin_float, "float", 4);
BUILTIN(builtin_double, "double", 8);

tess_type *const TESS_BYTE = &builtin_byte, *const TESS_CHAR = &builtin_char,
                 *const TESS_INT8 = &builtin_int8, *const TESS_INT16 = &builtin_int16,
                 *const TESS_INT32 = &builtin_int32, *const TESS_INT64 = &builtin_int64,
                 *const TESS_UINT8 = &builtin_uint8, *const TESS_UINT16 = &builtin_uint16,
                 *const TESS_UINT32 = &builtin_uint32, *const TESS_UINT64 = &builtin_uint64,
                 *const TESS_FLOAT = &builtin_float, *const TESS_DOUBLE = &builtin_double;

static bool fits(i128 v) { return v >= INT64_MIN && v <= INT64_MAX; }

/* ------------------------------------------------------------ references */

tess_type *tess_type_ref(tess_type *t)
{
    if (t && !t->predefined)
        atomic_fetch_add(&t->refs, 1);
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
    free(t->blocklens);
    free(t->displs);
    free(t->prefix);
    free(t->children);
    free(t);
}

void tess_type_free(tess_type *t)
{
    if (!t || t->predefined)
        return;
    if (atomic_fetch_sub(&t->refs, 1) == 1)
        node_release(t);
}

/* ---------------------------------------------------------------- blocks */

/* An input block list: block b holds blen(b) instances of type(b) at byte disp0 + displ(b). */
typedef struct {
    int64_t count;
    const int64_t *blens; /* NULL: every block has blen */
    int64_t blen;
    const int64_t *displs; /* NULL: block b at b * stride */
    int64_t stride;
    tess_type *const *types; /* NULL: every block is of type */
    tess_type *type;
    int64_t disp0;
} blocks;

static int64_t bl_len(const blocks *in, int64_t b) { return in->blens ? in->blens[b] : in->blen; }
static i128 bl_displ(const blocks *in, int64_t b)
{
    return (i128)in->disp0 + (in->displs ? (i128)in->displs[b] : (i128)b * in->stride);
}
static tess_type *bl_type(const blocks *in, int64_t b) { return in->types ? in->types[b] : in->type; }

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

/* Validate the input and compute its MPI bounds (blocks of length 0 contribute nothing). */
static int input_bounds(const char *who, const blocks *in, int64_t *lb, int64_t *extent)
{
    i128 lo = 0, hi = 0;
    bool any = false;
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
        /* a regular list has the same shape everywhere: first and last block bound it */
        if (!in->blens && !in->displs && !in->types && b == 0 && in->count > 2)
            b = in->count - 2;
    }
    if (!fits(hi - lo))
        return tessi_error(TESS_ERR_OVERFLOW, "%s: extent beyond int64 bytes", who);
    *lb = (int64_t)lo;
    *extent = (int64_t)(hi - lo);
    return 0;
}

/* ------------------------------------------------------------ node making */

static tess_type *node_alloc(tessi_kind kind)
{
    tess_type *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->kind = kind;
    atomic_init(&t->refs, 1);
    return t;
}

/* True if c is exactly m back-to-back instances of its child with the natural bounds, so that a
 * block of n instances of c is a block of n * m instances of c->child at displacement + disp0. */
static bool tiling_contig(const tess_type *c)
{
    return c->kind == TESSI_CONTIG && (i128)c->count * c->child->extent == c->extent &&
           c->lb == c->disp0 + c->child->lb;
}

/*
 * Compute the invariants of a finished node from its loop. Returns TESS_ERR_OVERFLOW when a
 * derived quantity does not fit in int64.
 */
static int node_finish(tess_type *t, int64_t lb, int64_t extent)
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
    t->lb = lb;
    t->extent = extent;
    t->true_lb = any ? (int64_t)tlo : 0;
    t->true_ub = any ? (int64_t)thi : 0;
    t->num_regions = (int64_t)regions;
    t->first_off = any ? (int64_t)first : 0;
    t->last_end = any ? (int64_t)last : 0;
    t->el = el ? el : TESS_BYTE;
    t->el_size = t->el->size;
    t->depth = depth ? depth : 1;
    t->monotonic = mono;
    t->dense = t->num_regions == 1 && t->size == extent && t->first_off == lb;
    t->footprint = (int64_t)sizeof *t;
    if (t->kind == TESSI_INDEXED || t->kind == TESSI_STRUCT)
        t->footprint += (int64_t)(2 * sizeof(int64_t) * t->count + sizeof(int64_t) * (t->count + 1));
    if (t->kind == TESSI_BLOCKINDEXED)
        t->footprint += (int64_t)(sizeof(int64_t) * t->count);
    if (t->kind == TESSI_STRUCT)
        t->footprint += (int64_t)(sizeof(tess_type *) * t->count);
    return 0;
}

/* The empty type with the given bounds. */
static int make_empty(int64_t lb, int64_t extent, tess_type **out)
{
    tess_type *t = node_alloc(TESSI_CONTIG);
    if (!t)
        return tessi_error(TESS_ERR_NOMEM, "datatype: out of memory");
    t->child = TESS_BYTE;
    node_finish(t, lb, extent);
    *out = t;
    return 0;
}

static int reloop(const tess_type *old, int64_t shift, int64_t lb, int64_t extent,
                  tess_type **out);

/*
 * A regular node: n blocks of B instances of c, block k at d0 + k * S. Applies loop fusion
 * (a single or touching sequence of blocks is a contig; a contig of a tiling vector is a vector)
 * and takes a new reference to the child it keeps.
 */
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

static int make_regular(int64_t n, int64_t B, int64_t S, int64_t d0, tess_type *c, int64_t lb,
                        int64_t extent, tess_type **out)
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
        return reloop(c, d0, lb, extent, out);
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
    tess_type *t = node_alloc(single ? TESSI_CONTIG : TESSI_VECTOR);
    if (!t)
        return tessi_error(TESS_ERR_NOMEM, "datatype: out of memory");
    if (single) {
        if (!fits(total)) {
            free(t);
            return tessi_error(TESS_ERR_OVERFLOW, "datatype: element count beyond int64");
        }
        t->count = t->blocklen = (int64_t)total;
    } else {
        t->count = n;
        t->blocklen = B;
        t->stride = S;
    }
    t->disp0 = d0;
    t->child = c;
    int rc = node_finish(t, lb, extent);
    if (rc) {
        free(t);
        return rc;
    }
    tess_type_ref(c);
    *out = t;
    return 0;
}

/* Make the dense run `t` describes into contig of its element (frees t on success). */
static int make_dense(tess_type *t, tess_type **out)
{
    const tess_type *el = t->el;
    tess_type *d = node_alloc(TESSI_CONTIG);
    if (!d)
        return tessi_error(TESS_ERR_NOMEM, "datatype: out of memory");
    d->count = d->blocklen = t->size / el->size;
    d->disp0 = t->lb;
    d->child = (tess_type *)el;
    node_finish(d, t->lb, t->extent);
    tess_type_free(t);
    *out = d;
    return 0;
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

/* True if a and b have the same loop and bounds (so one can stand for the other). */
static bool same_type(const tess_type *a, const tess_type *b)
{
    if (a == b)
        return true;
    if (a->kind != b->kind || a->kind == TESSI_BUILTIN || a->count != b->count ||
        a->blocklen != b->blocklen || a->stride != b->stride || a->disp0 != b->disp0 ||
        a->lb != b->lb || a->extent != b->extent || a->size != b->size)
        return false;
    size_t n = sizeof(int64_t) * (size_t)a->count;
    if ((a->displs && memcmp(a->displs, b->displs, n)) ||
        (a->blocklens && memcmp(a->blocklens, b->blocklens, n)))
        return false;
    if (a->kind != TESSI_STRUCT)
        return same_type(a->child, b->child);
    for (int64_t k = 0; k < a->count; k++)
        if (!same_type(a->children[k], b->children[k]))
            return false;
    return true;
}

/* Copy the input into a list: unwrap tiling contigs, drop empty blocks, merge adjacent ones.
 * A child equal in structure to the previous block's or the first block's is replaced by it, so
 * that separately built copies of one type still make an indexed list (struct-to-indexed). */
static int list_make(const blocks *in, list *l)
{
    int64_t n = in->count;
    l->count = 0;
    l->blens = malloc(sizeof(int64_t) * (size_t)(n ? n : 1));
    l->displs = malloc(sizeof(int64_t) * (size_t)(n ? n : 1));
    l->types = malloc(sizeof(tess_type *) * (size_t)(n ? n : 1));
    if (!l->blens || !l->displs || !l->types)
        return tessi_error(TESS_ERR_NOMEM, "datatype: out of memory for %lld blocks", (long long)n);
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
        if (!fits(len) || !fits(d))
            return tessi_error(TESS_ERR_OVERFLOW, "datatype: block %lld beyond int64", (long long)b);
        int64_t k = l->count++;
        if (k > 0 && same_type(c, l->types[k - 1]))
            c = l->types[k - 1];
        else if (k > 0 && same_type(c, l->types[0]))
            c = l->types[0];
        l->blens[k] = (int64_t)len;
        l->displs[k] = (int64_t)d;
        l->types[k] = c;
        mixed = mixed || c != l->types[0];
    }
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

/* Build the node for a normalized list (the list's arrays are taken or freed). */
static int make_list(list *l, int64_t lb, int64_t extent, tess_type **out)
{
    int64_t n = l->count;
    bool same = true, eqlen = true, arith = true;
    for (int64_t k = 1; k < n; k++) {
        same = same && l->types[k] == l->types[0];
        eqlen = eqlen && l->blens[k] == l->blens[0];
        arith = arith && (i128)l->displs[k] - l->displs[k - 1] == (i128)l->displs[1] - l->displs[0];
    }
    arith = arith && (n < 2 || fits((i128)l->displs[1] - l->displs[0]));
    if (n == 0) {
        list_free(l);
        return make_empty(lb, extent, out);
    }
    if (same && eqlen && arith) {
        int64_t S = n > 1 ? l->displs[1] - l->displs[0] : 0;
        int rc = make_regular(n, l->blens[0], S, l->displs[0], l->types[0], lb, extent, out);
        list_free(l);
        return rc;
    }
    tess_type *t = node_alloc(same ? (eqlen ? TESSI_BLOCKINDEXED : TESSI_INDEXED) : TESSI_STRUCT);
    if (!t) {
        list_free(l);
        return tessi_error(TESS_ERR_NOMEM, "datatype: out of memory");
    }
    t->count = n;
    t->displs = l->displs;
    if (t->kind == TESSI_BLOCKINDEXED) {
        t->blocklen = l->blens[0];
        free(l->blens);
    } else {
        t->blocklens = l->blens;
    }
    if (t->kind == TESSI_STRUCT) {
        t->children = l->types;
    } else {
        t->child = l->types[0];
        free(l->types);
    }
    l->blens = l->displs = NULL;
    l->types = NULL;
    int rc = TESS_ERR_NOMEM;
    if (t->kind == TESSI_INDEXED || t->kind == TESSI_STRUCT) {
        t->prefix = malloc(sizeof(int64_t) * (size_t)(n + 1));
        if (!t->prefix) {
            tessi_error(rc, "datatype: out of memory");
            goto fail;
        }
        t->prefix[0] = 0;
        for (int64_t k = 0; k < n; k++) /* fits: node_finish checks the total below */
            t->prefix[k + 1] = (int64_t)((i128)t->prefix[k] +
                                         (i128)t->blocklens[k] * tessi_block_child(t, k)->size);
    }
    rc = node_finish(t, lb, extent);
    if (rc)
        goto fail;
    if (t->kind == TESSI_STRUCT)
        for (int64_t k = 0; k < t->count; k++)
            tess_type_ref(t->children[k]);
    else
        tess_type_ref(t->child);
    *out = t;
    return 0;
fail:
    if (t->kind == TESSI_STRUCT)
        t->count = 0; /* children not referenced yet */
    else
        t->child = NULL;
    node_release(t);
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
static int reloop(const tess_type *old, int64_t shift, int64_t lb, int64_t extent,
                  tess_type **out)
{
    tess_type *t = NULL;
    int rc;
    if (old->kind == TESSI_BUILTIN || old->kind == TESSI_CONTIG || old->kind == TESSI_VECTOR) {
        bool builtin = old->kind == TESSI_BUILTIN;
        int64_t d0;
        if (!tessi_add(builtin ? 0 : old->disp0, shift, &d0))
            return tessi_error(TESS_ERR_OVERFLOW, "datatype: displacement beyond int64");
        if (builtin)
            rc = make_regular(1, 1, 0, d0, (tess_type *)old, lb, extent, &t);
        else if (old->kind == TESSI_CONTIG && old->count == 0)
            rc = make_empty(lb, extent, &t);
        else
            rc = make_regular(old->kind == TESSI_CONTIG ? 1 : old->count, old->blocklen,
                              old->stride, d0, old->child, lb, extent, &t);
    } else {
        blocks in = {.count = old->count, .blen = old->blocklen, .displs = old->displs,
                     .blens = old->blocklens,
                     .types = old->kind == TESSI_STRUCT ? old->children : NULL, .type = old->child};
        list l = {0};
        if (!tessi_add(old->disp0, shift, &in.disp0))
            return tessi_error(TESS_ERR_OVERFLOW, "datatype: displacement beyond int64");
        rc = list_make(&in, &l);
        if (rc) {
            list_free(&l);
            return rc;
        }
        rc = make_list(&l, lb, extent, &t);
    }
    if (rc)
        return rc;
    return densify(t, out);
}

/* Normalize and build a type from a block list. */
static int build(const char *who, const blocks *in, tess_type **out)
{
    int64_t lb = 0, extent = 0;
    tess_type *t = NULL;
    if (!out)
        return tessi_error(TESS_ERR_ARG, "%s: out is NULL", who);
    int rc = input_bounds(who, in, &lb, &extent);
    if (rc)
        return rc;
    if (!in->blens && !in->displs && !in->types) {
        if (in->count == 0 || in->blen == 0 || in->type->size == 0)
            rc = make_empty(lb, extent, &t);
        else
            rc = make_regular(in->count, in->blen, in->stride, in->disp0, in->type, lb, extent, &t);
    } else {
        list l = {0};
        rc = list_make(in, &l);
        if (rc) {
            list_free(&l);
            return rc;
        }
        rc = make_list(&l, lb, extent, &t);
    }
    if (rc)
        return rc;
    return densify(t, out);
}

/* ---------------------------------------------------------- constructors */

static int check_old(const char *who, const tess_type *old)
{
    return old ? 0 : tessi_error(TESS_ERR_ARG, "%s: old type is NULL", who);
}

int tess_type_contiguous(int64_t count, tess_type *old, tess_type **out)
{
    int rc = check_old("tess_type_contiguous", old);
    if (rc)
        return rc;
    if (count < 0)
        return tessi_error(TESS_ERR_ARG, "tess_type_contiguous: count %lld < 0", (long long)count);
    blocks in = {.count = count ? 1 : 0, .blen = count, .type = old};
    return build("tess_type_contiguous", &in, out);
}

int tess_type_hvector(int64_t count, int64_t blocklen, int64_t stride_bytes, tess_type *old,
                      tess_type **out)
{
    int rc = check_old("tess_type_hvector", old);
    if (rc)
        return rc;
    if (blocklen < 0)
        return tessi_error(TESS_ERR_ARG, "tess_type_hvector: blocklen %lld < 0", (long long)blocklen);
    blocks in = {.count = count, .blen = blocklen, .stride = stride_bytes, .type = old};
    return build("tess_type_hvector", &in, out);
}

int tess_type_vector(int64_t count, int64_t blocklen, int64_t stride, tess_type *old,
                     tess_type **out)
{
    int64_t bytes;
    int rc = check_old("tess_type_vector", old);
    if (rc)
        return rc;
    if (!tessi_mul(stride, old->extent, &bytes))
        return tessi_error(TESS_ERR_OVERFLOW, "tess_type_vector: stride %lld * extent %lld overflows",
                           (long long)stride, (long long)old->extent);
    blocks in = {.count = count, .blen = blocklen, .stride = bytes, .type = old};
    if (blocklen < 0)
        return tessi_error(TESS_ERR_ARG, "tess_type_vector: blocklen %lld < 0", (long long)blocklen);
    return build("tess_type_vector", &in, out);
}

/* Displacements in units of `unit` bytes, as a new byte array (NULL count 0 allowed). */
static int scale_displs(const char *who, int64_t count, const int64_t *displs, int64_t unit,
                        int64_t **bytes)
{
    *bytes = NULL;
    if (count < 0)
        return tessi_error(TESS_ERR_ARG, "%s: count %lld < 0", who, (long long)count);
    if (count > 0 && !displs)
        return tessi_error(TESS_ERR_ARG, "%s: displacements are NULL", who);
    *bytes = malloc(sizeof(int64_t) * (size_t)(count ? count : 1));
    if (!*bytes)
        return tessi_error(TESS_ERR_NOMEM, "%s: out of memory", who);
    for (int64_t k = 0; k < count; k++)
        if (!tessi_mul(displs[k], unit, &(*bytes)[k])) {
            free(*bytes);
            *bytes = NULL;
            return tessi_error(TESS_ERR_OVERFLOW, "%s: displacement %lld * extent %lld overflows",
                               who, (long long)displs[k], (long long)unit);
        }
    return 0;
}

static int indexed_bytes(const char *who, int64_t count, const int64_t *blocklens,
                         const int64_t *displs_bytes, tess_type *old, tess_type **out)
{
    int rc = check_old(who, old);
    if (rc)
        return rc;
    if (count < 0)
        return tessi_error(TESS_ERR_ARG, "%s: count %lld < 0", who, (long long)count);
    if (count > 0 && (!blocklens || !displs_bytes))
        return tessi_error(TESS_ERR_ARG, "%s: blocklens or displacements are NULL", who);
    blocks in = {.count = count, .blens = blocklens, .displs = displs_bytes, .type = old};
    return build(who, &in, out);
}

int tess_type_hindexed(int64_t count, const int64_t *blocklens, const int64_t *displs_bytes,
                       tess_type *old, tess_type **out)
{
    return indexed_bytes("tess_type_hindexed", count, blocklens, displs_bytes, old, out);
}

int tess_type_indexed(int64_t count, const int64_t *blocklens, const int64_t *displs,
                      tess_type *old, tess_type **out)
{
    int64_t *bytes;
    int rc = check_old("tess_type_indexed", old);
    if (rc)
        return rc;
    rc = scale_displs("tess_type_indexed", count, displs, old->extent, &bytes);
    if (rc)
        return rc;
    rc = indexed_bytes("tess_type_indexed", count, blocklens, bytes, old, out);
    free(bytes);
    return rc;
}

static int blockindexed_bytes(const char *who, int64_t count, int64_t blocklen,
                              const int64_t *displs_bytes, tess_type *old, tess_type **out)
{
    int rc = check_old(who, old);
    if (rc)
        return rc;
    if (count < 0 || blocklen < 0)
        return tessi_error(TESS_ERR_ARG, "%s: count %lld or blocklen %lld < 0", who,
                           (long long)count, (long long)blocklen);
    if (count > 0 && !displs_bytes)
        return tessi_error(TESS_ERR_ARG, "%s: displacements are NULL", who);
    blocks in = {.count = count, .blen = blocklen, .displs = displs_bytes, .type = old};
    return build(who, &in, out);
}

int tess_type_hblockindexed(int64_t count, int64_t blocklen, const int64_t *displs_bytes,
                            tess_type *old, tess_type **out)
{
    return blockindexed_bytes("tess_type_hblockindexed", count, blocklen, displs_bytes, old, out);
}

int tess_type_blockindexed(int64_t count, int64_t blocklen, const int64_t *displs, tess_type *old,
                           tess_type **out)
{
    int64_t *bytes;
    int rc = check_old("tess_type_blockindexed", old);
    if (rc)
        return rc;
    rc = scale_displs("tess_type_blockindexed", count, displs, old->extent, &bytes);
    if (rc)
        return rc;
    rc = blockindexed_bytes("tess_type_blockindexed", count, blocklen, bytes, old, out);
    free(bytes);
    return rc;
}

int tess_type_struct(int64_t count, const int64_t *blocklens, const int64_t *displs_bytes,
                     tess_type *const *types, tess_type **out)
{
    if (count < 0)
        return tessi_error(TESS_ERR_ARG, "tess_type_struct: count %lld < 0", (long long)count);
    if (count > 0 && (!blocklens || !displs_bytes || !types))
        return tessi_error(TESS_ERR_ARG, "tess_type_struct: blocklens, displacements or types NULL");
    blocks in = {.count = count, .blens = blocklens, .displs = displs_bytes, .types = types};
    return build("tess_type_struct", &in, out);
}

int tess_type_resized(tess_type *old, int64_t lb, int64_t extent, tess_type **out)
{
    int rc = check_old("tess_type_resized", old);
    if (rc)
        return rc;
    if (!out)
        return tessi_error(TESS_ERR_ARG, "tess_type_resized: out is NULL");
    if (extent < 0)
        return tessi_error(TESS_ERR_ARG, "tess_type_resized: extent %lld < 0", (long long)extent);
    int64_t ub;
    if (!tessi_add(lb, extent, &ub))
        return tessi_error(TESS_ERR_OVERFLOW, "tess_type_resized: lb + extent overflows");
    return reloop(old, 0, lb, extent, out);
}

/* ------------------------------------------------------------- accessors */

int64_t tess_type_size(const tess_type *t) { return t ? t->size : 0; }
int64_t tess_type_extent(const tess_type *t) { return t ? t->extent : 0; }
int64_t tess_type_lb(const tess_type *t) { return t ? t->lb : 0; }
int64_t tess_type_true_lb(const tess_type *t) { return t ? t->true_lb : 0; }
int64_t tess_type_true_extent(const tess_type *t) { return t ? t->true_ub - t->true_lb : 0; }
int64_t tess_type_num_regions(const tess_type *t) { return t ? t->num_regions : 0; }
int tess_type_depth(const tess_type *t) { return t ? t->depth : 0; }

int64_t tess_type_footprint(const tess_type *t)
{
    if (!t || t->predefined)
        return 0;
    int64_t sum = t->footprint;
    for (int64_t b = 0; b < tessi_num_blocks(t); b++) {
        sum += tess_type_footprint(tessi_block_child(t, b));
        if (t->kind != TESSI_STRUCT)
            break; /* one shared child */
    }
    return sum;
}

/* ------------------------------------------------------------- describe */

typedef struct {
    char *buf;
    size_t cap, len;
    bool truncated;
} text;

static void put(text *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(text *x, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    size_t room = x->len < x->cap ? x->cap - x->len : 0;
    int n = vsnprintf(room ? x->buf + x->len : NULL, room, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= room)
        x->truncated = true;
    x->len += n > 0 ? (size_t)n : 0;
}

/* Print at most this many array entries per node. */
#define DESCRIBE_MAX_ENTRIES 8

static void describe_node(text *x, const tess_type *t, int indent)
{
    static const char *kinds[] = {"builtin", "contig", "vector", "blockindexed", "indexed", "struct"};
    put(x, "%*s", indent * 2, "");
    if (t->kind == TESSI_BUILTIN) {
        put(x, "%s\n", t->name);
        return;
    }
    put(x, "%s(count=%lld", kinds[t->kind], (long long)t->count);
    if (t->kind == TESSI_VECTOR || t->kind == TESSI_BLOCKINDEXED)
        put(x, " blocklen=%lld", (long long)t->blocklen);
    if (t->kind == TESSI_VECTOR)
        put(x, " stride=%lld", (long long)t->stride);
    if (t->disp0)
        put(x, " disp0=%lld", (long long)t->disp0);
    if (t->blocklens || t->displs) {
        put(x, " blocks=[");
        for (int64_t b = 0; b < t->count && b < DESCRIBE_MAX_ENTRIES; b++)
            put(x, "%s%lld@%lld", b ? " " : "", (long long)tessi_block_len(t, b),
                (long long)t->displs[b]);
        put(x, "%s]", t->count > DESCRIBE_MAX_ENTRIES ? " ..." : "");
    }
    put(x, ") size=%lld lb=%lld extent=%lld regions=%lld\n", (long long)t->size, (long long)t->lb,
        (long long)t->extent, (long long)t->num_regions);
    for (int64_t b = 0; b < tessi_num_blocks(t); b++) {
        if (t->kind != TESSI_STRUCT) {
            describe_node(x, t->child, indent + 1);
            break;
        }
        if (b == DESCRIBE_MAX_ENTRIES) {
            put(x, "%*s...\n", (indent + 1) * 2, "");
            break;
        }
        describe_node(x, t->children[b], indent + 1);
    }
}

int tess_type_describe(const tess_type *t, char *buf, size_t cap)
{
    if (!t || !buf || cap == 0)
        return tessi_error(TESS_ERR_ARG, "tess_type_describe: NULL type or empty buffer");
    text x = {.buf = buf, .cap = cap};
    buf[0] = '\0';
    describe_node(&x, t, 0);
    if (x.truncated)
        return tessi_error(TESS_ERR_TRUNCATE, "tess_type_describe: %zu bytes needed, %zu given",
                           x.len + 1, cap);
    return 0;
}
