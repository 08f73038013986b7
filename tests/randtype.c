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
#include "randtype_int.h"

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

#define RECIPE_MAX (256 * 1024)

void rti_printf(sbuf *s, const char *fmt, ...)
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

char *rti_take(sbuf *s)
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

char rti_errbuf[4096];
const char *rt_error(void) { return rti_errbuf; }

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

void rti_node_free(node *n)
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

void rti_true_bounds(node *n)
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

node *rti_make_leaf(ctx *c, int64_t budget)
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
    rti_printf(&s, "%s", leaf_info[i].name);
    n->rec = rti_take(&s);
    if (!n->off || !n->rec) {
        rti_node_free(n);
        return NULL;
    }
    for (int64_t k = 0; k < n->n; k++)
        n->off[k] = k;
    n->lb = 0;
    n->ub = n->n;
    n->align = leaf_info[i].align;
    rti_true_bounds(n);
#ifdef TESS_TEST_MPI
    n->m = leaf_mpi(i);
    n->m_owned = 0;
#endif
    return n;
}

node *rti_gen(ctx *c, int depth, int64_t budget, int root)
{
    if (depth <= 0 || (!root && rt_chance(c->r, 12)))
        return rti_make_leaf(c, budget);
    int kind;
    do {
        kind = (int)rt_int(c->r, 0, NKINDS - 1);
    } while ((c->flags & RT_NO_ARRAY) && (kind == K_SUBARRAY || kind == K_DARRAY));
    return rti_gen_ctor(c, kind, depth, budget);
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
    rti_errbuf[0] = '\0';
    node *n = NULL;
    for (int tries = 0; tries < 1000; tries++) {
        n = rti_gen(&c, depth, max_bytes, 1);
        if (!n) {
            if (!c.failed)
                snprintf(rti_errbuf, sizeof rti_errbuf, "rt_random: out of memory");
            goto fail;
        }
        if ((flags & RT_NO_EMPTY) && n->n == 0) {
            rti_node_free(n);
            n = NULL;
            continue;
        }
        break;
    }
    if (!n) {
        snprintf(rti_errbuf, sizeof rti_errbuf, "rt_random: no non-empty type in 1000 tries");
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
    t->mpi_note = c.note.len ? rti_take(&c.note) : NULL;
#endif
    rti_node_free(n);
    return t;
fail:
    rti_node_free(n);
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
