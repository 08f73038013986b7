/*
 * test_subarray.c - tess_type_subarray and tess_type_darray against a brute-force oracle.
 *
 * The oracle does not build types: it enumerates every element of the global array in memory
 * order, decides from MPI's definitions whether this process holds it (subarray: inside the
 * box; darray: the owner formula of each dimension, BLOCK i / b, CYCLIC (i / b) % p), and lists
 * the element type's known byte regions at element * extent. The type's regions, walked with a
 * cursor, must equal that list. Also: every rank's darray together covers each byte exactly
 * once, footprints stay O(ndims) for huge arrays, and bad arguments are refused with a message.
 */
#include "check.h"
#include "type/type.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    tess_region *r;
    int64_t n, cap;
} rlist;

/* Append a region, merging it with the previous one when they touch. */
static void rl_add(rlist *l, int64_t off, int64_t len)
{
    if (len == 0)
        return;
    if (l->n > 0 && l->r[l->n - 1].off + l->r[l->n - 1].len == off) {
        l->r[l->n - 1].len += len;
        return;
    }
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 64;
        l->r = realloc(l->r, (size_t)l->cap * sizeof *l->r);
        CHECK(l->r);
    }
    l->r[l->n++] = (tess_region){off, len};
}

/* The regions of one instance of t, in typemap order, walked by a cursor. */
static rlist walk(const tess_type *t)
{
    rlist l = {0};
    tess_cursor *c;
    tess_region buf[7];
    int64_t n;
    CHECK_OK(tess_cursor_create(t, 1, &c));
    for (;;) {
        CHECK_OK(tess_cursor_next(c, buf, 7, -1, &n));
        if (n == 0)
            break;
        for (int64_t i = 0; i < n; i++)
            rl_add(&l, buf[i].off, buf[i].len);
    }
    tess_cursor_free(c);
    return l;
}

static void check_same(const rlist *got, const rlist *want, const char *what)
{
    if (got->n != want->n) {
        fprintf(stderr, "%s: %lld regions, oracle has %lld\n", what, (long long)got->n,
                (long long)want->n);
        CHECK(got->n == want->n);
    }
    for (int64_t i = 0; i < got->n; i++) {
        if (got->r[i].off != want->r[i].off || got->r[i].len != want->r[i].len) {
            fprintf(stderr, "%s: region %lld is [%lld, +%lld), oracle [%lld, +%lld)\n", what,
                    (long long)i, (long long)got->r[i].off, (long long)got->r[i].len,
                    (long long)want->r[i].off, (long long)want->r[i].len);
            CHECK(0);
        }
    }
}

/* ------------------------------------------------------------- element types */

/* An element type with its typemap known independently: regions relative to its origin. */
typedef struct {
    tess_type *t;
    int64_t extent;
    int nreg;
    tess_region reg[2];
    const char *name;
} elem;

static elem elems[5];
static int nelems;

static void make_elems(void)
{
    tess_type *v;
    elems[nelems++] = (elem){TESS_BYTE, 1, 1, {{0, 1}}, "byte"};
    elems[nelems++] = (elem){TESS_INT32, 4, 1, {{0, 4}}, "int32"};
    elems[nelems++] = (elem){TESS_DOUBLE, 8, 1, {{0, 8}}, "double"};
    /* two int16 at bytes 0 and 3, bounds [-2, 8): a hole, a gap and a negative lb */
    CHECK_OK(tess_type_hvector(2, 1, 3, TESS_INT16, &v));
    elems[nelems] = (elem){NULL, 10, 2, {{0, 2}, {3, 2}}, "hvector-resized"};
    CHECK_OK(tess_type_resized(v, -2, 10, &elems[nelems++].t));
    tess_type_free(v);
    /* extent 0: every element lies on the same bytes (legal in MPI) */
    elems[nelems] = (elem){NULL, 0, 1, {{0, 4}}, "int32-extent0"};
    CHECK_OK(tess_type_resized(TESS_INT32, 0, 0, &elems[nelems++].t));
}

/* --------------------------------------------------------------- the oracle */

typedef struct {
    int ndims, order;
    int64_t g[8];
    /* subarray */
    int64_t sub[8], start[8];
    /* darray */
    int darray, size, rank, distrib[8], darg[8], psize[8];
} shape;

/* Is index i of dimension d held? Straight from the MPI definitions. */
static bool holds(const shape *s, int d, int64_t i, int coord)
{
    if (!s->darray)
        return i >= s->start[d] && i < s->start[d] + s->sub[d];
    int64_t g = s->g[d], p = s->psize[d], b;
    switch (s->distrib[d]) {
    case TESS_DISTRIBUTE_NONE:
        return true;
    case TESS_DISTRIBUTE_BLOCK:
        b = s->darg[d] == TESS_DISTRIBUTE_DFLT_DARG ? (g + p - 1) / p : s->darg[d];
        return i / b == coord;
    default:
        b = s->darg[d] == TESS_DISTRIBUTE_DFLT_DARG ? 1 : s->darg[d];
        return (i / b) % p == coord;
    }
}

static rlist oracle(const shape *s, const elem *e)
{
    rlist l = {0};
    int64_t total = 1, idx[8];
    int coord[8];
    for (int d = 0; d < s->ndims; d++)
        total *= s->g[d];
    /* process grid coordinates, row-major (MPI_Cart_create numbering) */
    int rest = s->rank;
    for (int d = s->ndims - 1; d >= 0; d--) {
        coord[d] = s->darray ? rest % s->psize[d] : 0;
        rest = s->darray ? rest / s->psize[d] : 0;
    }
    for (int64_t lin = 0; lin < total; lin++) {
        /* multi-index of the lin-th element in memory order */
        int64_t q = lin;
        for (int k = 0; k < s->ndims; k++) {
            int d = s->order == TESS_ORDER_C ? s->ndims - 1 - k : k;
            idx[d] = q % s->g[d];
            q /= s->g[d];
        }
        bool in = true;
        for (int d = 0; d < s->ndims && in; d++)
            in = holds(s, d, idx[d], coord[d]);
        if (in)
            for (int k = 0; k < e->nreg; k++)
                rl_add(&l, lin * e->extent + e->reg[k].off, e->reg[k].len);
    }
    return l;
}

static int build(const shape *s, tess_type *old, tess_type **out)
{
    if (!s->darray)
        return tess_type_subarray(s->ndims, s->g, s->sub, s->start, s->order, old, out);
    return tess_type_darray(s->size, s->rank, s->ndims, s->g, s->distrib, s->darg, s->psize,
                            s->order, old, out);
}

static void describe_shape(const shape *s, char *buf, size_t cap)
{
    size_t n = (size_t)snprintf(buf, cap, "%s order=%s", s->darray ? "darray" : "subarray",
                                s->order == TESS_ORDER_C ? "C" : "F");
    if (s->darray)
        n += (size_t)snprintf(buf + n, cap - n, " size=%d rank=%d", s->size, s->rank);
    for (int d = 0; d < s->ndims && n < cap; d++) {
        if (s->darray)
            n += (size_t)snprintf(buf + n, cap - n, " [g=%lld dist=%d darg=%d p=%d]",
                                  (long long)s->g[d], s->distrib[d], s->darg[d], s->psize[d]);
        else
            n += (size_t)snprintf(buf + n, cap - n, " [g=%lld sub=%lld start=%lld]",
                                  (long long)s->g[d], (long long)s->sub[d],
                                  (long long)s->start[d]);
    }
}

/* Build the type for s over e and compare it with the oracle. */
static void check_shape(const shape *s, const elem *e)
{
    char what[512];
    tess_type *t;
    describe_shape(s, what, sizeof what);
    int rc = build(s, e->t, &t);
    if (rc) {
        fprintf(stderr, "%s over %s: %s\n", what, e->name, tess_last_error());
        CHECK_OK(rc);
    }
    rlist want = oracle(s, e), got = walk(t);
    check_same(&got, &want, what);
    int64_t elements = 1, size = 0, lo = INT64_MAX, hi = INT64_MIN;
    for (int d = 0; d < s->ndims; d++)
        elements *= s->g[d];
    for (int64_t i = 0; i < want.n; i++) {
        size += want.r[i].len;
        lo = want.r[i].off < lo ? want.r[i].off : lo;
        hi = want.r[i].off + want.r[i].len > hi ? want.r[i].off + want.r[i].len : hi;
    }
    CHECK(tess_type_size(t) == size);
    CHECK(tess_type_lb(t) == 0);
    CHECK(tess_type_extent(t) == elements * e->extent);
    if (size > 0 && e->extent > 0) {
        CHECK(tess_type_true_lb(t) == lo);
        CHECK(tess_type_true_extent(t) == hi - lo);
        CHECK(tess_type_num_regions(t) == want.n);
    }
    free(want.r);
    free(got.r);
    tess_type_free(t);
}

/* ------------------------------------------------------------- random shapes */

static uint64_t rng = 0x9e3779b97f4a7c15u;
static int64_t rnd(int64_t n) /* uniform in 0..n-1 */
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (int64_t)(rng % (uint64_t)n);
}

static void random_dims(shape *s)
{
    s->ndims = 1 + (int)rnd(4);
    s->order = rnd(2) ? TESS_ORDER_C : TESS_ORDER_FORTRAN;
    int64_t cap = s->ndims <= 2 ? 30 : 7;
    for (int d = 0; d < s->ndims; d++)
        s->g[d] = 1 + rnd(cap);
}

static void random_subarray(shape *s)
{
    memset(s, 0, sizeof *s);
    random_dims(s);
    for (int d = 0; d < s->ndims; d++) {
        s->sub[d] = 1 + rnd(s->g[d]);
        s->start[d] = rnd(s->g[d] - s->sub[d] + 1);
    }
}

/* A random valid darray grid; the caller loops over the ranks. */
static void random_darray(shape *s)
{
    memset(s, 0, sizeof *s);
    random_dims(s);
    s->darray = 1;
    s->size = 1;
    for (int d = 0; d < s->ndims; d++) {
        int64_t g = s->g[d];
        s->distrib[d] = 1 + (int)rnd(3);
        s->psize[d] = s->distrib[d] == TESS_DISTRIBUTE_NONE ? 1 : 1 + (int)rnd(4);
        int p = s->psize[d];
        if (rnd(3) == 0)
            s->darg[d] = TESS_DISTRIBUTE_DFLT_DARG;
        else if (s->distrib[d] == TESS_DISTRIBUTE_BLOCK)
            s->darg[d] = (int)((g + p - 1) / p + rnd(3)); /* blocks must cover the array */
        else
            s->darg[d] = 1 + (int)rnd(5);
        s->size *= p;
    }
}

/* With old = TESS_BYTE, the darrays of all ranks tile the global array exactly once. */
static void check_partition(shape *s)
{
    int64_t total = 1;
    for (int d = 0; d < s->ndims; d++)
        total *= s->g[d];
    unsigned char *hits = calloc((size_t)total, 1);
    CHECK(hits);
    for (s->rank = 0; s->rank < s->size; s->rank++) {
        tess_type *t;
        CHECK_OK(build(s, TESS_BYTE, &t));
        rlist l = walk(t);
        for (int64_t i = 0; i < l.n; i++)
            for (int64_t b = l.r[i].off; b < l.r[i].off + l.r[i].len; b++) {
                CHECK(b >= 0 && b < total);
                hits[b]++;
            }
        free(l.r);
        tess_type_free(t);
    }
    for (int64_t b = 0; b < total; b++)
        CHECK(hits[b] == 1);
    free(hits);
}

/* ------------------------------------------------------------------- footprint */

static void test_footprint(void)
{
    const int64_t big = 10000;
    int64_t sizes[3] = {big, big, big};
    tess_type *t;

    /* 3-D subarrays of a 10^4 x 10^4 x 10^4 array of doubles, both orders */
    const int64_t subs[][3] = {{100, 200, 300}, {big, 200, 300}, {100, big, big}, {1, 1, 1},
                               {big - 1, big - 2, big - 3}};
    for (size_t k = 0; k < sizeof subs / sizeof subs[0]; k++) {
        for (int order = 0; order < 2; order++) {
            int64_t starts[3] = {big - subs[k][0], 0, (big - subs[k][2]) / 2};
            CHECK_OK(tess_type_subarray(3, sizes, subs[k], starts, order, TESS_DOUBLE, &t));
            CHECK(tess_type_footprint(t) < 1024);
            CHECK(tess_type_size(t) == subs[k][0] * subs[k][1] * subs[k][2] * 8);
            CHECK(tess_type_extent(t) == big * big * big * 8);
            tess_type_free(t);
        }
    }

    /* 3-D darrays of the same array on a 2 x 2 x 2 grid */
    int psizes[3] = {2, 2, 2}, dflt[3] = {-1, -1, -1};
    int block[3] = {TESS_DISTRIBUTE_BLOCK, TESS_DISTRIBUTE_BLOCK, TESS_DISTRIBUTE_BLOCK};
    int cyclic[3] = {TESS_DISTRIBUTE_CYCLIC, TESS_DISTRIBUTE_CYCLIC, TESS_DISTRIBUTE_CYCLIC};
    int mixed[3] = {TESS_DISTRIBUTE_BLOCK, TESS_DISTRIBUTE_NONE, TESS_DISTRIBUTE_CYCLIC};
    int mixed_p[3] = {4, 1, 2}, dargs[3] = {25, 5, 10};
    for (int rank = 0; rank < 8; rank++) {
        CHECK_OK(tess_type_darray(8, rank, 3, sizes, block, dflt, psizes, TESS_ORDER_C,
                                  TESS_DOUBLE, &t));
        CHECK(tess_type_footprint(t) < 1024);
        CHECK(tess_type_size(t) == big * big * big);
        tess_type_free(t);
        CHECK_OK(tess_type_darray(8, rank, 3, sizes, cyclic, dargs, psizes, TESS_ORDER_FORTRAN,
                                  TESS_DOUBLE, &t));
        CHECK(tess_type_footprint(t) < 1024);
        tess_type_free(t);
        CHECK_OK(tess_type_darray(8, rank, 3, sizes, mixed, dflt, mixed_p, TESS_ORDER_C,
                                  TESS_DOUBLE, &t));
        CHECK(tess_type_footprint(t) < 1024);
        tess_type_free(t);
    }
    /*
     * Cyclic blocks that do not divide the array leave a short last block in every dimension:
     * each level is then a struct {full blocks, last block} over the shared inner level. The
     * memory is O(ndims) distinct nodes (tess_type_footprint counts a shared node once).
     */
    int64_t odd[3] = {10001, 10003, 10007};
    int odd_dargs[3] = {3, 5, 7};
    CHECK_OK(tess_type_darray(8, 5, 3, odd, cyclic, odd_dargs, psizes, TESS_ORDER_C,
                              TESS_DOUBLE, &t));
    CHECK(tess_type_footprint(t) < 3 * 512);
    tess_type_free(t);

    /* many dimensions that are whole fold into one loop level */
    int64_t g20[20], s20[20], st20[20];
    for (int d = 0; d < 20; d++) {
        g20[d] = 2;
        s20[d] = 2;
        st20[d] = 0;
    }
    s20[0] = 1; /* C order: dimension 0 is the slowest, the rest fold under it */
    CHECK_OK(tess_type_subarray(20, g20, s20, st20, TESS_ORDER_C, TESS_INT32, &t));
    CHECK(tess_type_depth(t) <= 1);
    CHECK(tess_type_size(t) == (int64_t)4 << 19);
    tess_type_free(t);
    /* partial dimensions fuse in pairs (a vector of blocks of two instances), so 20 of them
     * take 10 levels and 38 (about the most whose element count fits in int64) 19 */
    int64_t gd[38], sd[38], std[38];
    for (int d = 0; d < 38; d++) {
        gd[d] = 3;
        sd[d] = 2;
        std[d] = 0;
    }
    CHECK_OK(tess_type_subarray(20, gd, sd, std, TESS_ORDER_C, TESS_INT32, &t));
    CHECK(tess_type_depth(t) == 10);
    tess_type_free(t);
    CHECK_OK(tess_type_subarray(38, gd, sd, std, TESS_ORDER_C, TESS_BYTE, &t));
    CHECK(tess_type_depth(t) == 19);
    tess_type_free(t);
}

/* ------------------------------------------------------------------ bad input */

static void test_bad_input(void)
{
    tess_type *const untouched = (tess_type *)&test_bad_input, *t = untouched;
    int64_t g[2] = {4, 5}, sub[2] = {2, 3}, st[2] = {1, 1};
    int64_t zero[2] = {0, 5}, neg[2] = {-1, 1}, over[2] = {5, 3}, past[2] = {3, 1};
    int64_t huge[2] = {INT64_C(1) << 32, INT64_C(1) << 32}, one[2] = {1, 1}, nil[2] = {0, 0};

    CHECK_ERR(tess_type_subarray(0, g, sub, st, TESS_ORDER_C, TESS_BYTE, &t), TESS_ERR_ARG);
    CHECK_ERR(tess_type_subarray(-3, g, sub, st, TESS_ORDER_C, TESS_BYTE, &t), TESS_ERR_ARG);
    CHECK_ERR(tess_type_subarray(2, NULL, sub, st, TESS_ORDER_C, TESS_BYTE, &t), TESS_ERR_ARG);
    CHECK_ERR(tess_type_subarray(2, g, NULL, st, TESS_ORDER_C, TESS_BYTE, &t), TESS_ERR_ARG);
    CHECK_ERR(tess_type_subarray(2, g, sub, NULL, TESS_ORDER_C, TESS_BYTE, &t), TESS_ERR_ARG);
    CHECK_ERR(tess_type_subarray(2, g, sub, st, TESS_ORDER_C, NULL, &t), TESS_ERR_ARG);
    CHECK_ERR(tess_type_subarray(2, g, sub, st, TESS_ORDER_C, TESS_BYTE, NULL), TESS_ERR_ARG);
    CHECK_ERR(tess_type_subarray(2, g, sub, st, 7, TESS_BYTE, &t), TESS_ERR_ARG);
    CHECK_ERR(tess_type_subarray(2, zero, sub, st, TESS_ORDER_C, TESS_BYTE, &t), TESS_ERR_ARG);
    CHECK_ERR(tess_type_subarray(2, g, nil, st, TESS_ORDER_C, TESS_BYTE, &t), TESS_ERR_ARG);
    CHECK_ERR(tess_type_subarray(2, g, over, st, TESS_ORDER_C, TESS_BYTE, &t), TESS_ERR_ARG);
    CHECK_ERR(tess_type_subarray(2, g, sub, neg, TESS_ORDER_C, TESS_BYTE, &t), TESS_ERR_ARG);
    CHECK_ERR(tess_type_subarray(2, g, sub, past, TESS_ORDER_FORTRAN, TESS_BYTE, &t),
              TESS_ERR_ARG);
    CHECK_ERR(tess_type_subarray(2, huge, one, nil, TESS_ORDER_C, TESS_DOUBLE, &t),
              TESS_ERR_OVERFLOW);
    int64_t huge3[3] = {INT64_C(1) << 30, INT64_C(1) << 30, INT64_C(1) << 30};
    int64_t one3[3] = {1, 1, 1}, nil3[3] = {0, 0, 0};
    /* the element count alone overflows even though the extent is 0 */
    tess_type *flat;
    CHECK_OK(tess_type_resized(TESS_BYTE, 0, 0, &flat));
    CHECK_ERR(tess_type_subarray(3, huge3, one3, nil3, TESS_ORDER_C, flat, &t),
              TESS_ERR_OVERFLOW);
    tess_type_free(flat);
    CHECK(t == untouched);

    int64_t dg[2] = {10, 12};
    int dist[2] = {TESS_DISTRIBUTE_BLOCK, TESS_DISTRIBUTE_CYCLIC}, dflt[2] = {-1, -1};
    int ps[2] = {2, 3};
#define DARRAY(size, rank, nd, gs, di, da, pp, ord, old, out)                                  \
    tess_type_darray(size, rank, nd, gs, di, da, pp, ord, old, out)
    CHECK_ERR(DARRAY(0, 0, 2, dg, dist, dflt, ps, 0, TESS_BYTE, &t), TESS_ERR_ARG);
    CHECK_ERR(DARRAY(6, -1, 2, dg, dist, dflt, ps, 0, TESS_BYTE, &t), TESS_ERR_ARG);
    CHECK_ERR(DARRAY(6, 6, 2, dg, dist, dflt, ps, 0, TESS_BYTE, &t), TESS_ERR_ARG);
    CHECK_ERR(DARRAY(6, 0, 0, dg, dist, dflt, ps, 0, TESS_BYTE, &t), TESS_ERR_ARG);
    CHECK_ERR(DARRAY(6, 0, 2, NULL, dist, dflt, ps, 0, TESS_BYTE, &t), TESS_ERR_ARG);
    CHECK_ERR(DARRAY(6, 0, 2, dg, NULL, dflt, ps, 0, TESS_BYTE, &t), TESS_ERR_ARG);
    CHECK_ERR(DARRAY(6, 0, 2, dg, dist, NULL, ps, 0, TESS_BYTE, &t), TESS_ERR_ARG);
    CHECK_ERR(DARRAY(6, 0, 2, dg, dist, dflt, NULL, 0, TESS_BYTE, &t), TESS_ERR_ARG);
    CHECK_ERR(DARRAY(6, 0, 2, dg, dist, dflt, ps, 0, NULL, &t), TESS_ERR_ARG);
    CHECK_ERR(DARRAY(6, 0, 2, dg, dist, dflt, ps, 0, TESS_BYTE, NULL), TESS_ERR_ARG);
    CHECK_ERR(DARRAY(6, 0, 2, dg, dist, dflt, ps, 2, TESS_BYTE, &t), TESS_ERR_ARG);
    int64_t dg0[2] = {10, 0};
    CHECK_ERR(DARRAY(6, 0, 2, dg0, dist, dflt, ps, 0, TESS_BYTE, &t), TESS_ERR_ARG);
    int ps0[2] = {0, 3}, ps_small[2] = {1, 3}, ps_big[2] = {3, 3};
    CHECK_ERR(DARRAY(6, 0, 2, dg, dist, dflt, ps0, 0, TESS_BYTE, &t), TESS_ERR_ARG);
    CHECK_ERR(DARRAY(6, 0, 2, dg, dist, dflt, ps_small, 0, TESS_BYTE, &t), TESS_ERR_ARG);
    CHECK_ERR(DARRAY(6, 0, 2, dg, dist, dflt, ps_big, 0, TESS_BYTE, &t), TESS_ERR_ARG);
    int ps_wide[2] = {65536, 65536}; /* the grid product overflows an int */
    CHECK_ERR(DARRAY(6, 0, 2, dg, dist, dflt, ps_wide, 0, TESS_BYTE, &t), TESS_ERR_ARG);
    int dist_bad[2] = {TESS_DISTRIBUTE_BLOCK, 9};
    CHECK_ERR(DARRAY(6, 0, 2, dg, dist_bad, dflt, ps, 0, TESS_BYTE, &t), TESS_ERR_ARG);
    int darg0[2] = {-1, 0}, darg_neg[2] = {-7, 1};
    CHECK_ERR(DARRAY(6, 0, 2, dg, dist, darg0, ps, 0, TESS_BYTE, &t), TESS_ERR_ARG);
    CHECK_ERR(DARRAY(6, 0, 2, dg, dist, darg_neg, ps, 0, TESS_BYTE, &t), TESS_ERR_ARG);
    int darg_short[2] = {4, 1}; /* BLOCK: 4 * 2 < 10 does not cover the dimension */
    CHECK_ERR(DARRAY(6, 0, 2, dg, dist, darg_short, ps, 0, TESS_BYTE, &t), TESS_ERR_ARG);
    int dist_none[2] = {TESS_DISTRIBUTE_NONE, TESS_DISTRIBUTE_CYCLIC};
    CHECK_ERR(DARRAY(6, 0, 2, dg, dist_none, dflt, ps, 0, TESS_BYTE, &t), TESS_ERR_ARG);
    int64_t dhuge[2] = {INT64_C(1) << 40, INT64_C(1) << 40};
    CHECK_ERR(DARRAY(6, 0, 2, dhuge, dist, dflt, ps, 0, TESS_INT32, &t), TESS_ERR_OVERFLOW);
#undef DARRAY
    CHECK(t == untouched);
}

/* ------------------------------------------------------------------ fixed cases */

/* A few shapes written out by hand, including the MPI standard's own darray examples. */
static void test_fixed(void)
{
    /* C order 3 x 4 subarray [1..2] x [1..2] of int32: rows 1 and 2, columns 1 and 2 */
    int64_t g[2] = {3, 4}, sub[2] = {2, 2}, st[2] = {1, 1};
    tess_type *t;
    CHECK_OK(tess_type_subarray(2, g, sub, st, TESS_ORDER_C, TESS_INT32, &t));
    rlist l = walk(t);
    CHECK(l.n == 2 && l.r[0].off == 20 && l.r[0].len == 8 && l.r[1].off == 36 &&
          l.r[1].len == 8);
    free(l.r);
    tess_type_free(t);
    /* the same in Fortran order: columns 1 and 2 (of 3 rows), rows 1 and 2 */
    CHECK_OK(tess_type_subarray(2, g, sub, st, TESS_ORDER_FORTRAN, TESS_INT32, &t));
    l = walk(t);
    CHECK(l.n == 2 && l.r[0].off == 16 && l.r[0].len == 8 && l.r[1].off == 28 &&
          l.r[1].len == 8);
    free(l.r);
    tess_type_free(t);
    /* CYCLIC(2) of 7 elements over 2 processes: rank 1 holds 2, 3 and 6 */
    int64_t g1[1] = {7};
    int cyc[1] = {TESS_DISTRIBUTE_CYCLIC}, two[1] = {2}, p2[1] = {2};
    CHECK_OK(tess_type_darray(2, 1, 1, g1, cyc, two, p2, TESS_ORDER_C, TESS_BYTE, &t));
    l = walk(t);
    CHECK(l.n == 2 && l.r[0].off == 2 && l.r[0].len == 2 && l.r[1].off == 6 && l.r[1].len == 1);
    CHECK(tess_type_extent(t) == 7);
    free(l.r);
    tess_type_free(t);
    /* BLOCK(4) of 7 over 3 processes: rank 2 holds nothing, but the extent is the array */
    int blk[1] = {TESS_DISTRIBUTE_BLOCK}, four[1] = {4}, p3[1] = {3};
    CHECK_OK(tess_type_darray(3, 2, 1, g1, blk, four, p3, TESS_ORDER_C, TESS_DOUBLE, &t));
    CHECK(tess_type_size(t) == 0 && tess_type_extent(t) == 56 && tess_type_lb(t) == 0);
    tess_type_free(t);
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 400;
    make_elems();
    test_fixed();
    test_bad_input();
    test_footprint();
    for (int k = 0; k < rounds; k++) {
        shape s;
        random_subarray(&s);
        check_shape(&s, &elems[rnd(nelems)]);
        random_darray(&s);
        const elem *e = &elems[rnd(nelems)];
        for (s.rank = 0; s.rank < s.size; s.rank++)
            check_shape(&s, e);
        check_partition(&s);
    }
    for (int i = 0; i < nelems; i++)
        tess_type_free(elems[i].t);
    printf("test_subarray: %d random subarray and darray shapes checked\n", rounds);
    return 0;
}
