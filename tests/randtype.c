/*
 * randtype.c - random nested datatypes with a brute-force byte-map oracle (see randtype.h).
 *
 * The oracle never looks at Tessera: every constructor is reduced to its MPI definition, a
 * list of placements "blen instances of child c at byte disp + j * extent(c)", and the typemap
 * is the concatenation of the children's typemaps at those places. Bounds follow MPI: over the
 * placements with blen > 0, lb = min(disp + lb(c)), ub = max(disp + (blen-1)*extent(c) + ub(c));
 * no placement with data or bounds gives lb = ub = 0; resized, subarray and darray then set
 * lb and extent explicitly. A struct's extent is then rounded up to a multiple of its
 * alignment: the largest C alignment (_Alignof) of the predefined types in the members that
 * hold data (MPI's epsilon; every other constructor takes its old type's alignment unpadded).
 */
#include "randtype.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ rng */

void rt_seed(rt_rng *r, uint64_t seed) { r->s = seed; }

uint64_t rt_mix(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

uint64_t rt_u64(rt_rng *r)
{
    r->s += 0x9e3779b97f4a7c15ull;
    return rt_mix(r->s);
}

int64_t rt_int(rt_rng *r, int64_t lo, int64_t hi)
{
    if (hi <= lo)
        return lo;
    return lo + (int64_t)(rt_u64(r) % (uint64_t)(hi - lo + 1));
}

int rt_chance(rt_rng *r, int percent) { return (int)(rt_u64(r) % 100) < percent; }

/* ------------------------------------------------------------ strings */

typedef struct {
    char *p;
    size_t len, cap;
} sbuf;

#define RECIPE_MAX (256 * 1024)

static void sb_printf(sbuf *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(sbuf *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int need = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (need < 0)
        return;
    if (s->len + (size_t)need + 1 > s->cap) {
        size_t cap = s->cap ? s->cap : 64;
        while (cap < s->len + (size_t)need + 1)
            cap *= 2;
        char *p = realloc(s->p, cap);
        if (!p)
            return;
        s->p = p;
        s->cap = cap;
    }
    va_start(ap, fmt);
    vsnprintf(s->p + s->len, s->cap - s->len, fmt, ap);
    va_end(ap);
    s->len += (size_t)need;
}

static char *sb_take(sbuf *s)
{
    if (!s->p) {
        char *e = malloc(1);
        if (e)
            e[0] = '\0';
        return e;
    }
    if (s->len > RECIPE_MAX) {
        s->p[RECIPE_MAX] = '\0';
        memcpy(s->p + RECIPE_MAX - 4, "...", 4);
    }
    char *p = s->p;
    s->p = NULL;
    s->len = s->cap = 0;
    return p;
}

static char errbuf[4096];
const char *rt_error(void) { return errbuf; }

/* ------------------------------------------------------------ leaves */

#define NLEAVES 12
#define LEAF(nm, ctype) {nm, sizeof(ctype), _Alignof(ctype)}
static const struct {
    const char *name;
    int64_t size, align;
} leaf_info[NLEAVES] = {
    LEAF("byte", unsigned char), LEAF("char", char),         LEAF("int8", int8_t),
    LEAF("int16", int16_t),      LEAF("int32", int32_t),     LEAF("int64", int64_t),
    LEAF("uint8", uint8_t),      LEAF("uint16", uint16_t),   LEAF("uint32", uint32_t),
    LEAF("uint64", uint64_t),    LEAF("float", float),       LEAF("double", double),
};

static tess_type *leaf_type(int i)
{
    switch (i) {
    case 0: return TESS_BYTE;
    case 1: return TESS_CHAR;
    case 2: return TESS_INT8;
    case 3: return TESS_INT16;
    case 4: return TESS_INT32;
    case 5: return TESS_INT64;
    case 6: return TESS_UINT8;
    case 7: return TESS_UINT16;
    case 8: return TESS_UINT32;
    case 9: return TESS_UINT64;
    case 10: return TESS_FLOAT;
    default: return TESS_DOUBLE;
    }
}

#ifdef TESS_TEST_MPI
static MPI_Datatype leaf_mpi(int i)
{
    switch (i) {
    case 0: return MPI_BYTE;
    case 1: return MPI_CHAR;
    case 2: return MPI_INT8_T;
    case 3: return MPI_INT16_T;
    case 4: return MPI_INT32_T;
    case 5: return MPI_INT64_T;
    case 6: return MPI_UINT8_T;
    case 7: return MPI_UINT16_T;
    case 8: return MPI_UINT32_T;
    case 9: return MPI_UINT64_T;
    case 10: return MPI_FLOAT;
    default: return MPI_DOUBLE;
    }
}
#endif

/* ------------------------------------------------------------- nodes */

typedef struct node {
    tess_type *t;
    int64_t *off, n;   /* byte map */
    int64_t lb, ub;    /* MPI bounds */
    int64_t tlb, tub;  /* true bounds (0, 0 when n == 0) */
    int64_t align;     /* C alignment of its most-aligned predefined type (1 when empty) */
    int mono;          /* strictly increasing offsets and tub - tlb <= ub - lb */
    int phantom;       /* a block with blocklen > 0 of an empty type, here or below */
    int nodata;        /* no block with blocklen > 0 */
    unsigned ctors;    /* constructors used, bit 1 << kind */
    int markers;       /* the MPI type carries explicit lb/ub markers (resized, subarray, darray
                          below, or a fix-up resize of MPI's padded extent) */
    int sticky;        /* mixes blocks with and without markers: MPI's sticky-marker rule gives
                          the bounds over the marked blocks only (sticky_lb, sticky_ub) */
    int64_t sticky_lb, sticky_ub;
    int depth;
    char *rec;
#ifdef TESS_TEST_MPI
    MPI_Datatype m;
    int m_owned;
#endif
} node;

typedef struct {
    rt_rng *r;
    unsigned flags;
    int64_t max_ext;
    int use_mpi;
    int failed;
#ifdef TESS_TEST_MPI
    int pads, phantoms, stickies;
    sbuf note;
#endif
} ctx;

static void node_free(node *n)
{
    if (!n)
        return;
    tess_type_free(n->t);
    free(n->off);
    free(n->rec);
#ifdef TESS_TEST_MPI
    if (n->m_owned)
        MPI_Type_free(&n->m);
#endif
    free(n);
}

static void node_true_bounds(node *n)
{
    n->tlb = n->tub = 0;
    n->mono = 1;
    for (int64_t k = 0; k < n->n; k++) {
        int64_t o = n->off[k];
        if (k == 0 || o < n->tlb)
            n->tlb = o;
        if (k == 0 || o + 1 > n->tub)
            n->tub = o + 1;
        if (k > 0 && o <= n->off[k - 1])
            n->mono = 0;
    }
    if (n->tub - n->tlb > n->ub - n->lb)
        n->mono = 0;
}

static node *make_leaf(ctx *c, int64_t budget)
{
    node *n = calloc(1, sizeof *n);
    if (!n)
        return NULL;
    int i;
    do {
        i = (int)rt_int(c->r, 0, NLEAVES - 1);
    } while (leaf_info[i].size > budget);
    n->t = leaf_type(i);
    n->n = leaf_info[i].size;
    n->off = malloc((size_t)n->n * sizeof *n->off);
    sbuf s = {0};
    sb_printf(&s, "%s", leaf_info[i].name);
    n->rec = sb_take(&s);
    if (!n->off || !n->rec) {
        node_free(n);
        return NULL;
    }
    for (int64_t k = 0; k < n->n; k++)
        n->off[k] = k;
    n->lb = 0;
    n->ub = n->n;
    n->align = leaf_info[i].align;
    node_true_bounds(n);
#ifdef TESS_TEST_MPI
    n->m = leaf_mpi(i);
    n->m_owned = 0;
#endif
    return n;
}

/* --------------------------------------------------------- constructors */

enum {
    K_CONTIG,
    K_VECTOR,
    K_HVECTOR,
    K_INDEXED,
    K_HINDEXED,
    K_BLOCKIDX,
    K_HBLOCKIDX,
    K_STRUCT,
    K_RESIZED,
    K_SUBARRAY,
    K_DARRAY,
    NKINDS
};

static const char *const kind_name[NKINDS] = {
    "contiguous",   "vector",        "hvector", "indexed", "hindexed", "blockindexed",
    "hblockindexed", "struct",       "resized", "subarray", "darray",
};

#define MAXKIDS 3
#define MAXBLOCKS 64

typedef struct {
    int kind;
    int64_t count, blen, stride;   /* stride: units (vector) or bytes (hvector) */
    int64_t bl[MAXBLOCKS], dp[MAXBLOCKS];
    int kid[MAXBLOCKS];
    int64_t rlb, rext;
    int ndims, order;
    int64_t sizes[3], subs[3], starts[3];
    int nprocs, rank, distr[3], darg[3], psz[3];
} params;

/* a placement: blen instances of kids[kid] at byte disp + j * extent(kid) */
typedef struct {
    int64_t disp, blen;
    int kid;
} place;

static int64_t ext_of(const node *n) { return n->ub - n->lb; }

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
    int64_t e = ext_of(kid), span = kid->tub - kid->tlb;
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

static void pick_params(ctx *c, params *p, node **kids, int nkids, int64_t budget, int attempt)
{
    int mono = (c->flags & RT_MONOTONIC) != 0, nonneg = (c->flags & RT_NONNEG) != 0;
    const node *k0 = kids[0];
    int64_t e = ext_of(k0);
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
            int64_t ke = ext_of(kn);
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

/* The placements of a constructor. Returns the number (or -1 on no memory); *pl malloc'ed.
 * *set_bounds is 1 when the constructor sets lb/ub itself (*lb, *ub). */
static int64_t placements(const params *p, node **kids, place **pl, int *set_bounds,
                          int64_t *lb, int64_t *ub)
{
    const node *k0 = kids[0];
    int64_t e = ext_of(k0);
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

static int64_t iabs64(int64_t x) { return x < 0 ? -x : x; }

static char *make_recipe(const params *p, node **kids)
{
    sbuf s = {0};
    const char *k0 = kids[0]->rec;
    sb_printf(&s, "%s(", kind_name[p->kind]);
    switch (p->kind) {
    case K_CONTIG: sb_printf(&s, "%lld, %s", (long long)p->count, k0); break;
    case K_VECTOR:
    case K_HVECTOR:
        sb_printf(&s, "%lld, %lld, %lld, %s", (long long)p->count, (long long)p->blen,
                  (long long)p->stride, k0);
        break;
    case K_INDEXED:
    case K_HINDEXED:
    case K_BLOCKIDX:
    case K_HBLOCKIDX:
    case K_STRUCT: {
        int blk = p->kind == K_BLOCKIDX || p->kind == K_HBLOCKIDX;
        sb_printf(&s, "%lld, ", (long long)p->count);
        if (blk) {
            sb_printf(&s, "%lld, ", (long long)p->blen);
        } else {
            sb_printf(&s, "{");
            for (int64_t b = 0; b < p->count; b++)
                sb_printf(&s, "%s%lld", b ? "," : "", (long long)p->bl[b]);
            sb_printf(&s, "}, ");
        }
        sb_printf(&s, "{");
        for (int64_t b = 0; b < p->count; b++)
            sb_printf(&s, "%s%lld", b ? "," : "", (long long)p->dp[b]);
        sb_printf(&s, "}, ");
        if (p->kind == K_STRUCT) {
            sb_printf(&s, "{");
            for (int64_t b = 0; b < p->count; b++)
                sb_printf(&s, "%s%s", b ? ", " : "", kids[p->kid[b]]->rec);
            sb_printf(&s, "}");
        } else {
            sb_printf(&s, "%s", k0);
        }
        break;
    }
    case K_RESIZED:
        sb_printf(&s, "%s, lb %lld, extent %lld", k0, (long long)p->rlb, (long long)p->rext);
        break;
    case K_SUBARRAY:
    case K_DARRAY: {
        if (p->kind == K_DARRAY)
            sb_printf(&s, "size %d, rank %d, ", p->nprocs, p->rank);
        sb_printf(&s, "%d, {", p->ndims);
        for (int d = 0; d < p->ndims; d++)
            sb_printf(&s, "%s%lld", d ? "," : "", (long long)p->sizes[d]);
        if (p->kind == K_SUBARRAY) {
            sb_printf(&s, "}, {");
            for (int d = 0; d < p->ndims; d++)
                sb_printf(&s, "%s%lld", d ? "," : "", (long long)p->subs[d]);
            sb_printf(&s, "}, {");
            for (int d = 0; d < p->ndims; d++)
                sb_printf(&s, "%s%lld", d ? "," : "", (long long)p->starts[d]);
        } else {
            static const char *dn[] = {"?", "block", "cyclic", "none"};
            sb_printf(&s, "}, {");
            for (int d = 0; d < p->ndims; d++)
                sb_printf(&s, "%s%s", d ? "," : "", dn[p->distr[d]]);
            sb_printf(&s, "}, {");
            for (int d = 0; d < p->ndims; d++)
                sb_printf(&s, "%s%d", d ? "," : "", p->darg[d]);
            sb_printf(&s, "}, {");
            for (int d = 0; d < p->ndims; d++)
                sb_printf(&s, "%s%d", d ? "," : "", p->psz[d]);
        }
        sb_printf(&s, "}, %s, %s", p->order == TESS_ORDER_C ? "C" : "Fortran", k0);
        break;
    }
    }
    sb_printf(&s, ")");
    return sb_take(&s);
}

static int tess_make(const params *p, node **kids, tess_type **out)
{
    tess_type *t0 = kids[0]->t;
    switch (p->kind) {
    case K_CONTIG: return tess_type_contiguous(p->count, t0, out);
    case K_VECTOR: return tess_type_vector(p->count, p->blen, p->stride, t0, out);
    case K_HVECTOR: return tess_type_hvector(p->count, p->blen, p->stride, t0, out);
    case K_INDEXED: return tess_type_indexed(p->count, p->bl, p->dp, t0, out);
    case K_HINDEXED: return tess_type_hindexed(p->count, p->bl, p->dp, t0, out);
    case K_BLOCKIDX: return tess_type_blockindexed(p->count, p->blen, p->dp, t0, out);
    case K_HBLOCKIDX: return tess_type_hblockindexed(p->count, p->blen, p->dp, t0, out);
    case K_STRUCT: {
        tess_type *ts[MAXBLOCKS];
        for (int64_t b = 0; b < p->count; b++)
            ts[b] = kids[p->kid[b]]->t;
        return tess_type_struct(p->count, p->bl, p->dp, ts, out);
    }
    case K_RESIZED: return tess_type_resized(t0, p->rlb, p->rext, out);
    case K_SUBARRAY:
        return tess_type_subarray(p->ndims, p->sizes, p->subs, p->starts, p->order, t0, out);
    default:
        return tess_type_darray(p->nprocs, p->rank, p->ndims, p->sizes, p->distr, p->darg,
                                p->psz, p->order, t0, out);
    }
}

#ifdef TESS_TEST_MPI
static int set_by_ctor(int kind) { return kind == K_RESIZED || kind == K_SUBARRAY || kind == K_DARRAY; }

static int mpi_make(const params *p, node **kids, MPI_Datatype *out)
{
    MPI_Datatype m0 = kids[0]->m;
    int ib[MAXBLOCKS], id[MAXBLOCKS];
    MPI_Aint ad[MAXBLOCKS];
    MPI_Datatype ms[MAXBLOCKS];
    for (int64_t b = 0; b < p->count && b < MAXBLOCKS; b++) {
        ib[b] = (int)p->bl[b];
        id[b] = (int)p->dp[b];
        ad[b] = (MPI_Aint)p->dp[b];
        ms[b] = kids[p->kid[b]]->m;
    }
    int cnt = (int)p->count;
    switch (p->kind) {
    case K_CONTIG: return MPI_Type_contiguous(cnt, m0, out);
    case K_VECTOR: return MPI_Type_vector(cnt, (int)p->blen, (int)p->stride, m0, out);
    case K_HVECTOR: return MPI_Type_create_hvector(cnt, (int)p->blen, p->stride, m0, out);
    case K_INDEXED: return MPI_Type_indexed(cnt, ib, id, m0, out);
    case K_HINDEXED: return MPI_Type_create_hindexed(cnt, ib, ad, m0, out);
    case K_BLOCKIDX: return MPI_Type_create_indexed_block(cnt, (int)p->blen, id, m0, out);
    case K_HBLOCKIDX: return MPI_Type_create_hindexed_block(cnt, (int)p->blen, ad, m0, out);
    case K_STRUCT: return MPI_Type_create_struct(cnt, ib, ad, ms, out);
    case K_RESIZED: return MPI_Type_create_resized(m0, p->rlb, p->rext, out);
    case K_SUBARRAY: {
        int sz[3], ss[3], st[3];
        for (int d = 0; d < p->ndims; d++) {
            sz[d] = (int)p->sizes[d];
            ss[d] = (int)p->subs[d];
            st[d] = (int)p->starts[d];
        }
        return MPI_Type_create_subarray(p->ndims, sz, ss, st,
                                        p->order == TESS_ORDER_C ? MPI_ORDER_C
                                                                 : MPI_ORDER_FORTRAN,
                                        m0, out);
    }
    default: {
        int gs[3], di[3], da[3], ps[3];
        for (int d = 0; d < p->ndims; d++) {
            gs[d] = (int)p->sizes[d];
            di[d] = p->distr[d] == TESS_DISTRIBUTE_BLOCK    ? MPI_DISTRIBUTE_BLOCK
                    : p->distr[d] == TESS_DISTRIBUTE_CYCLIC ? MPI_DISTRIBUTE_CYCLIC
                                                            : MPI_DISTRIBUTE_NONE;
            da[d] = p->darg[d] == TESS_DISTRIBUTE_DFLT_DARG ? MPI_DISTRIBUTE_DFLT_DARG
                                                            : p->darg[d];
            ps[d] = p->psz[d];
        }
        return MPI_Type_create_darray(p->nprocs, p->rank, p->ndims, gs, di, da, ps,
                                      p->order == TESS_ORDER_C ? MPI_ORDER_C
                                                               : MPI_ORDER_FORTRAN,
                                      m0, out);
    }
    }
}

/* Build the MPI type of n and make its lb/extent the oracle's (MPI pads struct extents). */
static int mpi_node(ctx *c, const params *p, node **kids, node *n)
{
    MPI_Datatype m;
    if (p->kind == K_DARRAY && n->n == 0) {
        /* Open MPI 4.1 gives an empty darray true bounds (INT64_MAX, 1) that later make a struct
         * holding it pack its second instance at the wrong place: use the equivalent empty
         * type with the darray's bounds */
        MPI_Datatype z;
        MPI_Type_contiguous(0, MPI_BYTE, &z);
        MPI_Type_create_resized(z, n->lb, n->ub - n->lb, &m);
        MPI_Type_free(&z);
    } else if (mpi_make(p, kids, &m) != MPI_SUCCESS) {
        snprintf(errbuf, sizeof errbuf, "MPI constructor failed for %s", n->rec);
        return -1;
    }
    MPI_Aint lb, ext;
    MPI_Type_get_extent(m, &lb, &ext);
    /* Open MPI 4.1 packs the second instance of a struct with blocks of empty types at the wrong
     * place even when its reported bounds are right (struct {2 char @-6, 1 empty darray of
     * extent 2880 @3606, 1 @-2330}: extent 8816, yet instance 1 is read near 8706); the same
     * type resized to the same bounds packs right */
    int force = n->phantom;
    if (lb != n->lb || ext != n->ub - n->lb || force) {
        /* alignment padding: MPI rounds the extent up for the alignment of its elements (the
         * standard's epsilon). Tessera and MPICH pad structs; Open MPI 4.1 pads h-variants too
         * (sometimes by more than one step: hindexed of 11 blocks of 14 int64 gets 1184 for
         * 1169) but not a struct with a resized member; MPICH 4.0 does not pad a struct whose
         * members are all of one type (it builds it as hindexed). */
        int64_t ours = n->ub - n->lb;
        int pad = lb == n->lb && ((ext > ours && ext - ours < 16 && ext % 2 == 0) ||
                                  (p->kind == K_STRUCT && ext < ours && ours - ext < n->align));
        if (lb == n->lb && ext == n->ub - n->lb)
            ; /* forced */
        else if (pad)
            c->pads++;
        else if (n->phantom || (n->nodata && !set_by_ctor(p->kind)))
            c->phantoms++; /* MPI libraries differ on blocks of empty types with bounds and on
                              types whose blocks all have length 0 (MPICH gives vector(3, 0, 5)
                              extent 20, Open MPI 0, Tessera 0) */
        else if (n->sticky && lb == n->sticky_lb && ext == n->sticky_ub - n->sticky_lb)
            c->stickies++; /* the MPI standard's sticky markers (Open MPI); MPICH and Tessera
                              take the bounds over all blocks */
        else
            sb_printf(&c->note, "MPI lb %lld extent %lld, oracle lb %lld extent %lld: %s\n",
                      (long long)lb, (long long)ext, (long long)n->lb,
                      (long long)(n->ub - n->lb), n->rec);
        MPI_Datatype r;
        MPI_Type_create_resized(m, n->lb, n->ub - n->lb, &r);
        n->markers = 1; /* MPI's type now carries lb/ub markers */
        MPI_Type_free(&m);
        m = r;
    }
    n->m = m;
    n->m_owned = 1;
    return 0;
}
#endif

static node *gen(ctx *c, int depth, int64_t budget, int root);

/* One constructor level over freshly generated children. */
static node *gen_ctor(ctx *c, int kind, int depth, int64_t budget)
{
    node *kids[MAXKIDS] = {NULL, NULL, NULL};
    int nkids = 1;
    node *n = NULL;
    place *pl = NULL;
    if (kind == K_STRUCT) {
        nkids = (int)rt_int(c->r, 1, MAXKIDS);
        for (int k = 0; k < nkids; k++) {
            int d = (int)rt_int(c->r, 0, depth - 1);
            kids[k] = gen(c, d, budget / (nkids * rt_int(c->r, 1, 3)) + 1, 0);
            if (!kids[k])
                goto fail;
        }
    } else if (kind == K_SUBARRAY || kind == K_DARRAY) {
        kids[0] = gen(c, depth - 1, budget / rt_int(c->r, 4, 64) + 1, 0);
    } else {
        kids[0] = gen(c, depth - 1, budget / rt_int(c->r, 1, 8) + 1, 0);
    }
    if (!kids[0])
        goto fail;
    /* MPICH 4.0 (yaksa) divides by zero packing blocks of an empty type of extent 0 */
    for (int k = 0; c->use_mpi && k < nkids; k++) {
        if (kids[k]->n == 0 && ext_of(kids[k]) == 0) {
            node_free(kids[k]);
            if (!(kids[k] = make_leaf(c, budget)))
                goto fail;
        }
    }
    /* Open MPI 4.1 rejects subarray and darray of an empty old type or one of extent 0
     * (MPI_ERR_TYPE) */
    if (c->use_mpi && (kind == K_SUBARRAY || kind == K_DARRAY) &&
        (ext_of(kids[0]) == 0 || kids[0]->n == 0))
        kind = K_CONTIG;

    for (int attempt = 0; attempt < 24; attempt++) {
        params p;
        memset(&p, 0, sizeof p);
        p.kind = kind;
        pick_params(c, &p, kids, nkids, budget, attempt);
        int set_bounds;
        int64_t slb = 0, sub = 0;
        int64_t np = placements(&p, kids, &pl, &set_bounds, &slb, &sub);
        if (np < 0)
            goto fail;
        /* size and bounds first, cheaply */
        int64_t size = 0, lb = 0, ub = 0, big = 0, mlb = 0, mub = 0, align = 1;
        int any = 0, phantom = 0, marked = 0, unmarked = 0;
        for (int64_t i = 0; i < np; i++) {
            const node *k = kids[pl[i].kid];
            if (pl[i].blen == 0)
                continue;
            if (k->phantom || k->n == 0)
                phantom = 1;
            if (k->n > 0 && k->align > align)
                align = k->align;
            size += pl[i].blen * k->n;
            int64_t lo = pl[i].disp + k->lb, hi = pl[i].disp + (pl[i].blen - 1) * ext_of(k) + k->ub;
            if (!any || lo < lb)
                lb = lo;
            if (!any || hi > ub)
                ub = hi;
            any = 1;
            if (k->markers) { /* the bounds over the blocks that carry lb/ub markers only */
                if (!marked || lo < mlb)
                    mlb = lo;
                if (!marked || hi > mub)
                    mub = hi;
                marked = 1;
            } else {
                unmarked = 1;
            }
            if (k->n) {
                int64_t tl = pl[i].disp + k->tlb,
                        th = pl[i].disp + (pl[i].blen - 1) * ext_of(k) + k->tub;
                if (iabs64(tl) > big)
                    big = iabs64(tl);
                if (iabs64(th) > big)
                    big = iabs64(th);
            }
        }
        if (set_bounds) {
            lb = slb;
            ub = sub;
        }
        if (kind == K_STRUCT && (ub - lb) % align)
            ub += align - (ub - lb) % align;
        if (iabs64(lb) > big)
            big = iabs64(lb);
        if (iabs64(ub) > big)
            big = iabs64(ub);
        if (size > budget || big > c->max_ext) {
            free(pl);
            pl = NULL;
            continue;
        }
        n = calloc(1, sizeof *n);
        if (!n)
            goto fail;
        n->n = size;
        n->lb = lb;
        n->ub = ub;
        n->align = size > 0 ? align : 1;
        n->phantom = phantom;
        n->nodata = !any;
        n->markers = set_bounds || marked;
        n->sticky = !set_bounds && marked && unmarked;
        n->sticky_lb = mlb;
        n->sticky_ub = mub;
        n->off = malloc((size_t)(size ? size : 1) * sizeof *n->off);
        if (!n->off)
            goto fail;
        int64_t w = 0;
        for (int64_t i = 0; i < np; i++) {
            const node *k = kids[pl[i].kid];
            int64_t ke = ext_of(k);
            for (int64_t j = 0; j < pl[i].blen; j++) {
                int64_t base = pl[i].disp + j * ke;
                for (int64_t b = 0; b < k->n; b++)
                    n->off[w++] = base + k->off[b];
            }
        }
        free(pl);
        pl = NULL;
        node_true_bounds(n);
        if (((c->flags & RT_MONOTONIC) && !n->mono) ||
            ((c->flags & RT_NONNEG) && (n->lb < 0 || n->tlb < 0))) {
            node_free(n);
            n = NULL;
            continue;
        }
        n->rec = make_recipe(&p, kids);
        if (!n->rec)
            goto fail;
        int d = 0;
        for (int k = 0; k < nkids; k++)
            if (kids[k]->depth > d)
                d = kids[k]->depth;
        n->depth = d + 1;
        n->ctors = 1u << kind;
        for (int k = 0; k < nkids; k++)
            n->ctors |= kids[k]->ctors;
        int rc = tess_make(&p, kids, &n->t);
        if (rc != 0) {
            snprintf(errbuf, sizeof errbuf, "%s failed: %d (%s): %s\n  call: %s",
                     kind_name[kind], rc, tess_strerror(rc), tess_last_error(), n->rec);
            n->t = NULL;
            c->failed = 1;
            goto fail;
        }
#ifdef TESS_TEST_MPI
        if (c->use_mpi && mpi_node(c, &p, kids, n) != 0) {
            c->failed = 1;
            goto fail;
        }
#endif
        for (int k = 0; k < nkids; k++)
            node_free(kids[k]);
        return n;
    }
    /* nothing fitted: a predefined type instead */
    for (int k = 0; k < nkids; k++)
        node_free(kids[k]);
    return make_leaf(c, budget);
fail:
    free(pl);
    node_free(n);
    for (int k = 0; k < nkids; k++)
        node_free(kids[k]);
    return NULL;
}

static node *gen(ctx *c, int depth, int64_t budget, int root)
{
    if (depth <= 0 || (!root && rt_chance(c->r, 12)))
        return make_leaf(c, budget);
    int kind;
    do {
        kind = (int)rt_int(c->r, 0, NKINDS - 1);
    } while ((c->flags & RT_NO_ARRAY) && (kind == K_SUBARRAY || kind == K_DARRAY));
    return gen_ctor(c, kind, depth, budget);
}

/* ---------------------------------------------------------------- API */

static int cmp64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

rt_type *rt_random_limits(rt_rng *rng, int depth, unsigned flags, int64_t max_bytes,
                          int64_t max_extent)
{
    ctx c;
    memset(&c, 0, sizeof c);
    c.r = rng;
    c.flags = flags;
    c.max_ext = max_extent;
#ifdef TESS_TEST_MPI
    c.use_mpi = !(flags & RT_NO_MPI);
#endif
    errbuf[0] = '\0';
    node *n = NULL;
    for (int tries = 0; tries < 1000; tries++) {
        n = gen(&c, depth, max_bytes, 1);
        if (!n) {
            if (!c.failed)
                snprintf(errbuf, sizeof errbuf, "rt_random: out of memory");
            goto fail;
        }
        if ((flags & RT_NO_EMPTY) && n->n == 0) {
            node_free(n);
            n = NULL;
            continue;
        }
        break;
    }
    if (!n) {
        snprintf(errbuf, sizeof errbuf, "rt_random: no non-empty type in 1000 tries");
        goto fail;
    }
    rt_type *t = calloc(1, sizeof *t);
    if (!t)
        goto fail;
    t->type = n->t;
    t->offsets = n->off;
    t->nbytes = n->n;
    t->lb = n->lb;
    t->extent = n->ub - n->lb;
    t->true_lb = n->tlb;
    t->true_ub = n->tub;
    t->monotonic = n->mono;
    t->phantom = n->phantom;
    t->depth = n->depth;
    t->ctors = n->ctors;
    t->recipe = n->rec;
    n->t = NULL;
    n->off = NULL;
    n->rec = NULL;
    /* overlap: a repeated offset */
    if (t->nbytes > 1) {
        int64_t *s = malloc((size_t)t->nbytes * sizeof *s);
        if (!s) {
            free(t);
            goto fail;
        }
        memcpy(s, t->offsets, (size_t)t->nbytes * sizeof *s);
        qsort(s, (size_t)t->nbytes, sizeof *s, cmp64);
        for (int64_t k = 1; k < t->nbytes; k++)
            if (s[k] == s[k - 1])
                t->overlap = 1;
        free(s);
    }
    t->nregions = 0;
    for (int64_t k = 0; k < t->nbytes; k++)
        if (k == 0 || t->offsets[k] != t->offsets[k - 1] + 1)
            t->nregions++;
#ifdef TESS_TEST_MPI
    t->mpi = MPI_DATATYPE_NULL;
    if (c.use_mpi) {
        if (n->m_owned) {
            t->mpi = n->m;
            n->m_owned = 0;
        } else {
            MPI_Type_dup(n->m, &t->mpi); /* a predefined type: give the caller its own */
        }
        MPI_Type_commit(&t->mpi);
    }
    t->mpi_pads = c.pads;
    t->mpi_phantom_diffs = c.phantoms;
    t->mpi_sticky_diffs = c.stickies;
    t->mpi_note = c.note.len ? sb_take(&c.note) : NULL;
#endif
    node_free(n);
    return t;
fail:
    node_free(n);
#ifdef TESS_TEST_MPI
    free(c.note.p);
#endif
    return NULL;
}

rt_type *rt_random(rt_rng *rng, int depth, unsigned flags)
{
    return rt_random_limits(rng, depth, flags, RT_MAX_BYTES, RT_MAX_EXTENT);
}

void rt_free(rt_type *t)
{
    if (!t)
        return;
    tess_type_free(t->type);
    free(t->offsets);
    free(t->recipe);
#ifdef TESS_TEST_MPI
    if (t->mpi != MPI_DATATYPE_NULL)
        MPI_Type_free(&t->mpi);
    free(t->mpi_note);
#endif
    free(t);
}

void rt_span(const rt_type *t, int64_t count, int64_t *lo, int64_t *hi)
{
    if (t->nbytes == 0 || count <= 0) {
        *lo = *hi = 0;
        return;
    }
    *lo = t->true_lb;
    *hi = t->true_ub + (count - 1) * t->extent;
}

int64_t rt_regions(const rt_type *t, int64_t count, tess_region **regs, int64_t **prefix)
{
    int64_t nr = 0, cap = t->nregions * count + 1;
    tess_region *r = malloc((size_t)cap * sizeof *r);
    int64_t *pf = prefix ? malloc((size_t)(cap + 1) * sizeof *pf) : NULL;
    if (!r || (prefix && !pf)) {
        free(r);
        free(pf);
        return -1;
    }
    int64_t data = 0;
    for (int64_t i = 0; i < count; i++) {
        for (int64_t k = 0; k < t->nbytes; k++, data++) {
            int64_t o = i * t->extent + t->offsets[k];
            if (nr > 0 && r[nr - 1].off + r[nr - 1].len == o) {
                r[nr - 1].len++;
            } else {
                if (pf)
                    pf[nr] = data;
                r[nr++] = (tess_region){o, 1};
            }
        }
    }
    if (pf)
        pf[nr] = data;
    *regs = r;
    if (prefix)
        *prefix = pf;
    return nr;
}

int rt_overlaps(const rt_type *t, int64_t count)
{
    if (t->overlap)
        return 1;
    if (count <= 1 || t->nbytes == 0 || t->true_ub - t->true_lb <= t->extent)
        return 0;
    int64_t n = count * t->nbytes;
    int64_t *s = malloc((size_t)n * sizeof *s);
    if (!s)
        return 1;
    for (int64_t i = 0; i < count; i++)
        for (int64_t k = 0; k < t->nbytes; k++)
            s[i * t->nbytes + k] = i * t->extent + t->offsets[k];
    qsort(s, (size_t)n, sizeof *s, cmp64);
    int dup = 0;
    for (int64_t k = 1; k < n && !dup; k++)
        dup = s[k] == s[k - 1];
    free(s);
    return dup;
}
