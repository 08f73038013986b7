/*
 * randtype_params.c - random arguments for one constructor of the random-type generator, and
 * their placements: the constructor reduced to its MPI definition, a list of "blen instances of
 * child c at byte disp + j * extent(c)" (see randtype_int.h).
 */
#include "randtype_int.h"

#include <stdlib.h>
#include <string.h>


const char *const rti_kind_name[NKINDS] = {
    "contiguous",   "vector",        "hvector", "indexed", "hindexed", "blockindexed",
    "hblockindexed", "struct",       "resized", "subarray", "darray",
};

static int64_t pick_count(ctx *c)
{
    int x = (int)rt_int(c->r, 0, 99);
    if (x < 3)
        return 0;
    if (x < 66)
        return rt_int(c->r, 1, 4);
    if (x < 90)
        return rt_int(c->r, 5, 16);
    return rt_int(c->r, 17, 200);
}

static int64_t pick_blen(ctx *c, int zero_pct)
{
    int x = (int)rt_int(c->r, 0, 99);
    if (x < zero_pct)
        return 0;
    if (x < 80)
        return rt_int(c->r, 1, 3);
    if (x < 95)
        return rt_int(c->r, 4, 8);
    return rt_int(c->r, 9, 40);
}

/* Blocks of the indexed family: counts, lengths and displacements (in bytes when `bytes`, the
 * h-variants, else in units of the child extent). `cap` bounds the total instances. Monotone
 * mode makes the displacements increase past each block's data. */
static void pick_blocks(ctx *c, params *p, const node *kid, int same_len, int bytes,
                        int64_t cap)
{
    int mono = (c->flags & RT_MONOTONIC) != 0, nonneg = (c->flags & RT_NONNEG) != 0;
    int64_t n = pick_count(c);
    if (n > MAXBLOCKS)
        n = rt_int(c->r, 17, MAXBLOCKS);
    if (same_len) {
        p->blen = pick_blen(c, 4);
        if (p->blen > cap)
            p->blen = cap;
        if (p->blen && n > cap / p->blen)
            n = cap / p->blen;
    }
    p->count = n;
    int64_t e = rti_ext_of(kid), span = kid->tub - kid->tlb;
    int style = (int)rt_int(c->r, 0, 3); /* 0: random, 1: increasing, 2: regular, 3: adjacent */
    if (mono || nonneg)
        style = 1 + (int)rt_int(c->r, 0, 2);
    int64_t regular = (mono || nonneg) ? rt_int(c->r, 0, 8) : rt_int(c->r, -4, 8);
    int64_t cur = nonneg ? rt_int(c->r, 0, 8) : rt_int(c->r, -16, 16);
    int64_t left = cap;
    for (int64_t b = 0; b < n; b++) {
        int64_t len = same_len ? p->blen : pick_blen(c, 12);
        if (!same_len && len > left)
            len = left;
        left -= len;
        p->bl[b] = len;
        int64_t d;
        if (bytes) {
            int64_t room = len * e; /* bytes the block's instances step over */
            switch (style) {
            case 0: d = rt_int(c->r, -(4 * e + 64), 4 * e + 64); break;
            case 2: d = cur; cur += regular * (e ? e : 1) + room; break;
            case 3: d = cur; cur += room; break;
            default:
                d = cur;
                cur += room + rt_int(c->r, 0, 12);
                if (mono && len > 0 && span > e)
                    cur += span - e;
                break;
            }
        } else {
            switch (style) {
            case 0: d = rt_int(c->r, -24, 24); break;
            case 2: d = cur; cur += regular + len; break;
            case 3: d = cur; cur += len; break;
            default: d = cur; cur += len + rt_int(c->r, 0, 3); break;
            }
        }
        p->dp[b] = d;
    }
}

void rti_pick_params(ctx *c, params *p, node **kids, int nkids, int64_t budget, int attempt)
{
    int mono = (c->flags & RT_MONOTONIC) != 0, nonneg = (c->flags & RT_NONNEG) != 0;
    const node *k0 = kids[0];
    int64_t e = rti_ext_of(k0);
    int64_t cap = k0->n ? budget / k0->n : 100000; /* instances of kid 0 that fit */
    if (attempt > 8 && cap > 4)
        cap = 4;
    switch (p->kind) {
    case K_CONTIG:
        p->count = pick_count(c);
        if (p->count > cap)
            p->count = cap;
        break;
    case K_VECTOR:
    case K_HVECTOR: {
        p->count = pick_count(c);
        p->blen = pick_blen(c, 3);
        if (p->blen > cap)
            p->blen = cap;
        if (p->blen && p->count > cap / p->blen)
            p->count = cap / p->blen;
        int64_t bl = p->blen;
        int x = (int)rt_int(c->r, 0, 9);
        if (p->kind == K_VECTOR) {
            if (x < 2)
                p->stride = bl; /* contiguous: must fuse */
            else if (x < 3)
                p->stride = 0;
            else
                p->stride = rt_int(c->r, -(2 * bl + 3), 2 * bl + 3);
            if (mono || nonneg)
                p->stride = bl + rt_int(c->r, 0, 3);
            /* Open MPI 4.1 packs a (h)vector whose byte stride is -1 as if contiguous */
            if (c->use_mpi && p->stride * e == -1)
                p->stride = -2;
        } else {
            int64_t room = bl * e;
            if (x < 2)
                p->stride = room;
            else if (x < 4)
                p->stride = e * rt_int(c->r, -(2 * bl + 3), 2 * bl + 3);
            else
                p->stride = rt_int(c->r, -(room + 24), room + 24);
            if (mono || nonneg) {
                p->stride = room + rt_int(c->r, 0, 16);
                if (mono && bl > 0 && k0->tub - k0->tlb > e)
                    p->stride += k0->tub - k0->tlb - e;
            }
            /* Open MPI 4.1 packs a (h)vector whose byte stride is -1 as if contiguous */
            if (c->use_mpi && p->stride == -1)
                p->stride = -2;
        }
        break;
    }
    case K_INDEXED:
    case K_HINDEXED:
    case K_BLOCKIDX:
    case K_HBLOCKIDX: {
        int same = p->kind == K_BLOCKIDX || p->kind == K_HBLOCKIDX;
        int h = p->kind == K_HINDEXED || p->kind == K_HBLOCKIDX;
        pick_blocks(c, p, k0, same, h, cap);
        break;
    }
    case K_STRUCT: {
        int64_t n = pick_count(c);
        if (n > 12)
            n = rt_int(c->r, 5, 12);
        if (n == 0 && rt_chance(c->r, 50))
            n = 1;
        p->count = n;
        int style = (mono || nonneg) ? 1 : (int)rt_int(c->r, 0, 1);
        int64_t cur = nonneg ? rt_int(c->r, 0, 8) : rt_int(c->r, -32, 32);
        int64_t used = 0;
        for (int64_t b = 0; b < n; b++) {
            int k = (int)rt_int(c->r, 0, nkids - 1);
            const node *kn = kids[k];
            int64_t len = pick_blen(c, 12);
            if (len > 4)
                len = rt_int(c->r, 1, 4);
            if (kn->n && (used + len * kn->n > budget || attempt > 8))
                len = (budget - used) / kn->n > 0 ? 1 : 0;
            used += len * kn->n;
            p->kid[b] = k;
            p->bl[b] = len;
            int64_t ke = rti_ext_of(kn);
            if (style == 0) {
                p->dp[b] = rt_int(c->r, -(2 * ke + 48), 2 * ke + 48);
            } else {
                /* increasing: this block's data starts past the previous block's data */
                if (mono && kn->n && len > 0)
                    cur -= kn->tlb;
                p->dp[b] = cur;
                if (len > 0 && kn->n)
                    cur += (len - 1) * ke + (mono ? kn->tub : ke) + rt_int(c->r, 0, 12);
                else
                    cur += rt_int(c->r, 0, 8);
            }
        }
        break;
    }
    case K_RESIZED: {
        int64_t span = k0->n ? k0->tub - k0->tlb : 0;
        int x = (int)rt_int(c->r, 0, 9);
        if (x < 3)
            p->rlb = k0->lb + rt_int(c->r, -8, 8);
        else if (x < 6)
            p->rlb = k0->tlb - rt_int(c->r, 0, 8);
        else
            p->rlb = rt_int(c->r, -64, 64);
        x = (int)rt_int(c->r, 0, 9);
        if (x < 2)
            p->rext = span;
        else if (x < 3)
            p->rext = 0;
        else if (x < 6)
            p->rext = e + rt_int(c->r, -8, 16);
        else
            p->rext = rt_int(c->r, 0, span + 32);
        if (p->rext < 0)
            p->rext = 0;
        if (mono && p->rext < span)
            p->rext = span + rt_int(c->r, 0, 8);
        if (nonneg && p->rlb < 0)
            p->rlb = rt_int(c->r, 0, 8);
        break;
    }
    case K_SUBARRAY: {
        p->ndims = (int)rt_int(c->r, 1, 3);
        p->order = rt_chance(c->r, 50) ? TESS_ORDER_C : TESS_ORDER_FORTRAN;
        int64_t left = cap < 1 ? 1 : cap;
        for (int d = 0; d < p->ndims; d++) {
            p->sizes[d] = rt_int(c->r, 1, 7);
            p->subs[d] = rt_int(c->r, 1, p->sizes[d]);
            if (p->subs[d] > left)
                p->subs[d] = 1;
            left /= p->subs[d];
            p->starts[d] = rt_int(c->r, 0, p->sizes[d] - p->subs[d]);
        }
        break;
    }
    case K_DARRAY: {
        p->ndims = (int)rt_int(c->r, 1, 3);
        p->order = rt_chance(c->r, 50) ? TESS_ORDER_C : TESS_ORDER_FORTRAN;
        p->nprocs = 1;
        for (int d = 0; d < p->ndims; d++) {
            p->sizes[d] = rt_int(c->r, 1, 9);
            int x = (int)rt_int(c->r, 0, 9);
            p->distr[d] = x < 4 ? TESS_DISTRIBUTE_BLOCK : x < 8 ? TESS_DISTRIBUTE_CYCLIC
                                                                 : TESS_DISTRIBUTE_NONE;
            p->psz[d] = p->distr[d] == TESS_DISTRIBUTE_NONE ? 1 : (int)rt_int(c->r, 1, 3);
            p->darg[d] = TESS_DISTRIBUTE_DFLT_DARG;
            if (p->distr[d] == TESS_DISTRIBUTE_BLOCK && rt_chance(c->r, 40)) {
                int64_t minb = (p->sizes[d] + p->psz[d] - 1) / p->psz[d];
                p->darg[d] = (int)rt_int(c->r, minb, minb + 3);
            } else if (p->distr[d] == TESS_DISTRIBUTE_CYCLIC && rt_chance(c->r, 60)) {
                p->darg[d] = (int)rt_int(c->r, 1, 4);
            }
            p->nprocs *= p->psz[d];
        }
        p->rank = (int)rt_int(c->r, 0, p->nprocs - 1);
        break;
    }
    }
}

/* Indices of dimension d owned by the darray's process (or the subarray's range). */
static int64_t dim_indices(const params *p, int d, int64_t *idx)
{
    int64_t n = 0;
    if (p->kind == K_SUBARRAY) {
        for (int64_t i = 0; i < p->subs[d]; i++)
            idx[n++] = p->starts[d] + i;
        return n;
    }
    /* process coordinates: row-major in the process grid, whatever the array order */
    int64_t below = 1;
    for (int k = p->ndims - 1; k > d; k--)
        below *= p->psz[k];
    int64_t coord = (p->rank / below) % p->psz[d];
    int64_t g = p->sizes[d], np = p->psz[d];
    switch (p->distr[d]) {
    case TESS_DISTRIBUTE_BLOCK: {
        int64_t b = p->darg[d] == TESS_DISTRIBUTE_DFLT_DARG ? (g + np - 1) / np : p->darg[d];
        for (int64_t i = coord * b; i < (coord + 1) * b && i < g; i++)
            idx[n++] = i;
        break;
    }
    case TESS_DISTRIBUTE_CYCLIC: {
        int64_t k = p->darg[d] == TESS_DISTRIBUTE_DFLT_DARG ? 1 : p->darg[d];
        for (int64_t i = 0; i < g; i++)
            if ((i / k) % np == coord)
                idx[n++] = i;
        break;
    }
    default:
        for (int64_t i = 0; i < g; i++)
            idx[n++] = i;
        break;
    }
    return n;
}

/* The rti_placements of a constructor. Returns the number (or -1 on no memory); *pl malloc'ed.
 * *set_bounds is 1 when the constructor sets lb/ub itself (*lb, *ub). */
int64_t rti_placements(const params *p, node **kids, place **pl, int *set_bounds,
                          int64_t *lb, int64_t *ub)
{
    const node *k0 = kids[0];
    int64_t e = rti_ext_of(k0);
    *set_bounds = 0;
    int64_t n = 0, cap;
    switch (p->kind) {
    case K_CONTIG: cap = 1; break;
    case K_VECTOR:
    case K_HVECTOR:
    case K_INDEXED:
    case K_HINDEXED:
    case K_BLOCKIDX:
    case K_HBLOCKIDX:
    case K_STRUCT: cap = p->count; break;
    case K_RESIZED: cap = 1; break;
    default: {
        cap = 1;
        for (int d = 0; d < p->ndims; d++)
            cap *= p->kind == K_SUBARRAY ? p->subs[d] : p->sizes[d];
        break;
    }
    }
    place *q = malloc((size_t)(cap ? cap : 1) * sizeof *q);
    if (!q)
        return -1;
    switch (p->kind) {
    case K_CONTIG:
        q[n++] = (place){0, p->count, 0};
        break;
    case K_VECTOR:
        for (int64_t b = 0; b < p->count; b++)
            q[n++] = (place){b * p->stride * e, p->blen, 0};
        break;
    case K_HVECTOR:
        for (int64_t b = 0; b < p->count; b++)
            q[n++] = (place){b * p->stride, p->blen, 0};
        break;
    case K_INDEXED:
    case K_BLOCKIDX:
        for (int64_t b = 0; b < p->count; b++)
            q[n++] = (place){p->dp[b] * e, p->bl[b], 0};
        break;
    case K_HINDEXED:
    case K_HBLOCKIDX:
        for (int64_t b = 0; b < p->count; b++)
            q[n++] = (place){p->dp[b], p->bl[b], 0};
        break;
    case K_STRUCT:
        for (int64_t b = 0; b < p->count; b++)
            q[n++] = (place){p->dp[b], p->bl[b], p->kid[b]};
        break;
    case K_RESIZED:
        q[n++] = (place){0, 1, 0};
        *set_bounds = 1;
        *lb = p->rlb;
        *ub = p->rlb + p->rext;
        break;
    default: { /* subarray, darray: the selected elements in array order */
        int64_t idx[3][16], cnt[3], dim[3], total = 1;
        int nd = p->ndims;
        /* dimension order from slowest to fastest */
        for (int k = 0; k < nd; k++)
            dim[k] = p->order == TESS_ORDER_C ? k : nd - 1 - k;
        for (int k = 0; k < nd; k++) {
            cnt[k] = dim_indices(p, (int)dim[k], idx[k]);
            total *= cnt[k];
        }
        int64_t pos[3] = {0, 0, 0};
        for (int64_t t = 0; t < total; t++) {
            /* linear index of the element */
            int64_t L = 0;
            if (p->order == TESS_ORDER_C) {
                for (int d = 0; d < nd; d++)
                    L = L * p->sizes[d] + idx[d][pos[d]];
            } else {
                for (int d = nd - 1; d >= 0; d--)
                    L = L * p->sizes[d] + idx[nd - 1 - d][pos[nd - 1 - d]];
            }
            q[n++] = (place){L * e, 1, 0};
            for (int k = nd - 1; k >= 0; k--) {
                if (++pos[k] < cnt[k])
                    break;
                pos[k] = 0;
            }
        }
        int64_t full = e;
        for (int d = 0; d < nd; d++)
            full *= p->sizes[d];
        *set_bounds = 1;
        *lb = 0;
        *ub = full;
        break;
    }
    }
    *pl = q;
    return n;
}
