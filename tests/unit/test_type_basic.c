/*
 * test_type_basic.c - hand-checked datatype cases: predefined sizes, MPI semantics examples
 * (negative strides, resized, negative displacements, mixed structs, zero-length blocks,
 * count 0), the normalizations visible through depth/regions/describe/footprint, O(depth)
 * memory for huge regular types, and bad input (error code, message, *out untouched).
 *
 * Every expected layout below was worked out by hand from the MPI definitions.
 */
#include "check.h"
#include "type/type.h" /* TESSI_MAX_DEPTH; tessi_error to clear the message */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N(a) ((int64_t)(sizeof(a) / sizeof((a)[0])))

static int checks;

#define EQ(got, exp)                                                                         \
    do {                                                                                     \
        long long g_ = (long long)(got), e_ = (long long)(exp);                              \
        checks++;                                                                            \
        if (g_ != e_) {                                                                      \
            fprintf(stderr, "%s:%d: %s is %lld, expected %lld\n", __FILE__, __LINE__, #got,  \
                    g_, e_);                                                                 \
            exit(1);                                                                         \
        }                                                                                    \
    } while (0)

static void show(const tess_type *t)
{
    char text[4096];
    tess_type_describe(t, text, sizeof text);
    fprintf(stderr, "type:\n%s", text);
}

/* size, lb, extent, true lb, true extent and region count of one instance */
static void expect_bounds(const tess_type *t, int64_t size, int64_t lb, int64_t extent,
                          int64_t true_lb, int64_t true_extent, int64_t regions, int line)
{
    int64_t got[6] = {tess_type_size(t),    tess_type_lb(t),          tess_type_extent(t),
                      tess_type_true_lb(t), tess_type_true_extent(t), tess_type_num_regions(t)};
    int64_t want[6] = {size, lb, extent, true_lb, true_extent, regions};
    static const char *what[6] = {"size", "lb", "extent", "true_lb", "true_extent", "num_regions"};
    for (int k = 0; k < 6; k++) {
        checks++;
        if (got[k] != want[k]) {
            fprintf(stderr, "%s:%d: %s is %lld, expected %lld\n", __FILE__, line, what[k],
                    (long long)got[k], (long long)want[k]);
            show(t);
            exit(1);
        }
    }
}
#define BOUNDS(t, size, lb, ext, tlb, text, reg)                                             \
    expect_bounds(t, size, lb, ext, tlb, text, reg, __LINE__)

/*
 * The regions of `count` instances are exactly exp[0..n) (merged, typemap order); packing a
 * patterned buffer yields the bytes of those regions in order; unpacking into a zeroed buffer
 * fills exactly those bytes (when they do not overlap).
 */
static void expect_layout(tess_type *t, int64_t count, const tess_region *exp, int64_t n,
                          int overlap, int line)
{
    tess_cursor *c;
    tess_region got[64];
    int64_t ng = -1;
    CHECK(n <= 63);
    CHECK_OK(tess_cursor_create(t, count, &c));
    CHECK_OK(tess_cursor_next(c, got, 64, -1, &ng));
    checks++;
    int bad = ng != n;
    for (int64_t k = 0; !bad && k < n; k++)
        bad = got[k].off != exp[k].off || got[k].len != exp[k].len;
    if (bad) {
        fprintf(stderr, "%s:%d: regions differ\n  got:     ", __FILE__, line);
        for (int64_t k = 0; k < ng; k++)
            fprintf(stderr, " {%lld,%lld}", (long long)got[k].off, (long long)got[k].len);
        fprintf(stderr, "\n  expected:");
        for (int64_t k = 0; k < n; k++)
            fprintf(stderr, " {%lld,%lld}", (long long)exp[k].off, (long long)exp[k].len);
        fprintf(stderr, "\n");
        show(t);
        exit(1);
    }
    tess_cursor_free(c);

    /* pack and unpack over a buffer covering the regions */
    int64_t lo = 0, hi = 0, total = 0;
    for (int64_t k = 0; k < n; k++) {
        if (k == 0 || exp[k].off < lo)
            lo = exp[k].off;
        if (k == 0 || exp[k].off + exp[k].len > hi)
            hi = exp[k].off + exp[k].len;
        total += exp[k].len;
    }
    uint8_t *mem = malloc((size_t)(hi - lo) + 1), *packed = malloc((size_t)total + 1),
            *want = malloc((size_t)total + 1);
    CHECK(mem && packed && want);
    uint8_t *origin = mem - lo;
    for (int64_t i = 0; i < hi - lo; i++)
        mem[i] = (uint8_t)(i * 7 + 3 + i / 251);
    int64_t w = 0;
    for (int64_t k = 0; k < n; k++)
        for (int64_t b = 0; b < exp[k].len; b++)
            want[w++] = origin[exp[k].off + b];
    int64_t np = -1;
    CHECK_OK(tess_pack(origin, count, t, 0, packed, total, &np));
    EQ(np, total);
    checks++;
    if (memcmp(packed, want, (size_t)total) != 0) {
        fprintf(stderr, "%s:%d: packed bytes differ\n", __FILE__, line);
        show(t);
        exit(1);
    }
    if (!overlap) {
        memset(mem, 0, (size_t)(hi - lo));
        for (int64_t i = 0; i < total; i++)
            packed[i] = (uint8_t)(i % 255 + 1); /* never 0 */
        CHECK_OK(tess_unpack(packed, total, origin, count, t, 0, &np));
        EQ(np, total);
        int64_t filled = 0;
        for (int64_t i = 0; i < hi - lo; i++)
            filled += mem[i] != 0;
        EQ(filled, total); /* nothing outside the regions written */
        w = 0;
        for (int64_t k = 0; k < n; k++)
            for (int64_t b = 0; b < exp[k].len; b++)
                EQ(origin[exp[k].off + b], packed[w++]);
    }
    free(mem);
    free(packed);
    free(want);
}
#define LAYOUT(t, count, ...)                                                                \
    do {                                                                                     \
        static const tess_region e_[] = {__VA_ARGS__};                                       \
        expect_layout(t, count, e_, N(e_), 0, __LINE__);                                     \
    } while (0)
#define LAYOUT_OVERLAP(t, count, ...)                                                        \
    do {                                                                                     \
        static const tess_region e_[] = {__VA_ARGS__};                                       \
        expect_layout(t, count, e_, N(e_), 1, __LINE__);                                     \
    } while (0)

static int contains(const tess_type *t, const char *word)
{
    char text[8192];
    CHECK_OK(tess_type_describe(t, text, sizeof text));
    return strstr(text, word) != NULL;
}

static int starts_with(const tess_type *t, const char *word)
{
    char text[8192];
    CHECK_OK(tess_type_describe(t, text, sizeof text));
    return strncmp(text, word, strlen(word)) == 0;
}

/* ----------------------------------------------------------- predefined */

static void test_predefined(void)
{
    struct {
        tess_type *t;
        int64_t size;
    } p[] = {{TESS_BYTE, 1},  {TESS_CHAR, 1},   {TESS_INT8, 1},   {TESS_INT16, 2},
             {TESS_INT32, 4}, {TESS_INT64, 8},  {TESS_UINT8, 1},  {TESS_UINT16, 2},
             {TESS_UINT32, 4}, {TESS_UINT64, 8}, {TESS_FLOAT, 4}, {TESS_DOUBLE, 8}};
    for (int i = 0; i < (int)N(p); i++) {
        CHECK(p[i].t != NULL);
        BOUNDS(p[i].t, p[i].size, 0, p[i].size, 0, p[i].size, 1);
        EQ(tess_type_depth(p[i].t), 0);
        tess_type_free(p[i].t); /* no-op */
        CHECK(tess_type_ref(p[i].t) == p[i].t);
        EQ(tess_type_size(p[i].t), p[i].size);
        for (int j = 0; j < i; j++)
            CHECK(p[j].t != p[i].t);
    }
    EQ(sizeof(float), 4);
    EQ(sizeof(double), 8);
}

/* ------------------------------------------------------- MPI semantics */

static void test_semantics(void)
{
    tess_type *a, *b, *c;

    /* vector with a negative stride: blocks at 0, -16, -32 bytes, in that (typemap) order */
    CHECK_OK(tess_type_vector(3, 2, -4, TESS_INT32, &a));
    BOUNDS(a, 24, -32, 40, -32, 40, 3);
    LAYOUT(a, 1, {0, 8}, {-16, 8}, {-32, 8});
    /* two instances: the second at +40 */
    LAYOUT(a, 2, {0, 8}, {-16, 8}, {-32, 8}, {40, 8}, {24, 8}, {8, 8});
    tess_type_free(a);

    /* hvector with a negative byte stride and a gap */
    CHECK_OK(tess_type_hvector(3, 1, -6, TESS_INT32, &a));
    BOUNDS(a, 12, -12, 16, -12, 16, 3);
    LAYOUT(a, 1, {0, 4}, {-6, 4}, {-12, 4});
    tess_type_free(a);

    /* resized: lb -4, extent 20 around 8 data bytes; instances at 0, 20, 40 */
    CHECK_OK(tess_type_contiguous(2, TESS_INT32, &a));
    CHECK_OK(tess_type_resized(a, -4, 20, &b));
    tess_type_free(a);
    BOUNDS(b, 8, -4, 20, 0, 8, 1);
    CHECK_OK(tess_type_contiguous(3, b, &c));
    BOUNDS(c, 24, -4, 60, 0, 48, 3);
    LAYOUT(c, 1, {0, 8}, {20, 8}, {40, 8});
    LAYOUT(b, 3, {0, 8}, {20, 8}, {40, 8}); /* count 3 of b is the same */
    tess_type_free(b);
    tess_type_free(c);

    /* resized markers travel: contiguous(2, resized(int16, lb -2, extent 6)) */
    CHECK_OK(tess_type_resized(TESS_INT16, -2, 6, &a));
    CHECK_OK(tess_type_contiguous(2, a, &b));
    BOUNDS(b, 4, -2, 12, 0, 8, 2);
    LAYOUT(b, 1, {0, 2}, {6, 2});
    tess_type_free(a);
    tess_type_free(b);

    /* resized to extent 0: all instances at the same place */
    CHECK_OK(tess_type_resized(TESS_INT32, 0, 0, &a));
    CHECK_OK(tess_type_contiguous(3, a, &b));
    BOUNDS(b, 12, 0, 0, 0, 4, 3);
    LAYOUT_OVERLAP(b, 1, {0, 4}, {0, 4}, {0, 4});
    tess_type_free(a);
    tess_type_free(b);

    /* resized smaller than the data: instances overlap their neighbours' bounds */
    CHECK_OK(tess_type_contiguous(4, TESS_INT16, &a));
    CHECK_OK(tess_type_resized(a, 2, 3, &b));
    BOUNDS(b, 8, 2, 3, 0, 8, 1);
    LAYOUT_OVERLAP(b, 2, {0, 8}, {3, 8});
    tess_type_free(a);
    tess_type_free(b);

    /* hindexed with negative displacements and a zero-length block far away */
    {
        int64_t bl[] = {2, 0, 1}, d[] = {-10, 100, 6};
        CHECK_OK(tess_type_hindexed(3, bl, d, TESS_INT16, &a));
        BOUNDS(a, 6, -10, 18, -10, 18, 2);
        LAYOUT(a, 1, {-10, 4}, {6, 2});
        tess_type_free(a);
    }
    /* indexed in units of the old extent (a resized old type: extent 12) */
    {
        int64_t bl[] = {1, 2}, d[] = {3, -2};
        CHECK_OK(tess_type_resized(TESS_INT32, 0, 12, &b));
        CHECK_OK(tess_type_indexed(2, bl, d, b, &a));
        /* block 0: 1 instance at 36; block 1: instances at -24, -12 */
        BOUNDS(a, 12, -24, 72, -24, 64, 3);
        LAYOUT(a, 1, {36, 4}, {-24, 4}, {-12, 4});
        tess_type_free(a);
        /* blockindexed and hblockindexed of the same */
        int64_t d2[] = {1, 0}, hd[] = {5, -5};
        CHECK_OK(tess_type_blockindexed(2, 2, d2, b, &a));
        /* block 0: instances at 12, 24; block 1: at 0, 12 (the byte 12..16 twice) */
        BOUNDS(a, 16, 0, 36, 0, 28, 4);
        LAYOUT_OVERLAP(a, 1, {12, 4}, {24, 4}, {0, 4}, {12, 4});
        tess_type_free(a);
        CHECK_OK(tess_type_hblockindexed(2, 1, hd, b, &a));
        BOUNDS(a, 8, -5, 22, -5, 14, 2);
        LAYOUT(a, 1, {5, 4}, {-5, 4});
        tess_type_free(a);
        tess_type_free(b);
    }

    /* struct of mixed types: int32 @0, 2 doubles @8, 3 chars @24: the extent (27) is padded
     * to a multiple of the doubles' alignment, as in MPI and in the C struct */
    {
        int64_t bl[] = {1, 2, 3}, d[] = {0, 8, 24};
        tess_type *ts[] = {TESS_INT32, TESS_DOUBLE, TESS_CHAR};
        CHECK_OK(tess_type_struct(3, bl, d, ts, &a));
        BOUNDS(a, 23, 0, 32, 0, 27, 2);
        LAYOUT(a, 1, {0, 4}, {8, 19});
        LAYOUT(a, 2, {0, 4}, {8, 19}, {32, 4}, {40, 19});
        tess_type_free(a);
    }
    /* struct with negative displacements, a zero-length block and a derived member */
    {
        CHECK_OK(tess_type_vector(2, 1, 2, TESS_INT16, &b)); /* {0,2} {4,2}, extent 6 */
        int64_t bl[] = {1, 0, 2, 1}, d[] = {10, -100, -8, 40};
        tess_type *ts[] = {TESS_INT16, TESS_DOUBLE, TESS_FLOAT, b};
        CHECK_OK(tess_type_struct(4, bl, d, ts, &a));
        BOUNDS(a, 14, -8, 56, -8, 54, 4); /* 54 padded for the floats (the doubles are empty) */
        LAYOUT(a, 1, {10, 2}, {-8, 8}, {40, 2}, {44, 2});
        tess_type_free(a);
        tess_type_free(b);
    }

    /* zero-length blocks and count 0: size 0, extent 0, no regions */
    {
        int64_t bl[] = {0, 0}, d[] = {5, -9};
        tess_type *ts[] = {TESS_INT32, TESS_DOUBLE};
        tess_type *e[7];
        CHECK_OK(tess_type_contiguous(0, TESS_INT32, &e[0]));
        CHECK_OK(tess_type_vector(0, 3, 4, TESS_INT32, &e[1]));
        CHECK_OK(tess_type_vector(5, 0, 4, TESS_INT32, &e[2]));
        CHECK_OK(tess_type_indexed(2, bl, d, TESS_INT32, &e[3]));
        CHECK_OK(tess_type_hindexed(0, NULL, NULL, TESS_INT32, &e[4]));
        CHECK_OK(tess_type_struct(2, bl, d, ts, &e[5]));
        CHECK_OK(tess_type_struct(0, NULL, NULL, NULL, &e[6]));
        for (int i = 0; i < 7; i++) {
            BOUNDS(e[i], 0, 0, 0, 0, 0, 0);
            int64_t np = -1;
            uint8_t x[4];
            CHECK_OK(tess_pack(x, 3, e[i], 0, x, 4, &np));
            EQ(np, 0);
            tess_type_free(e[i]);
        }
        /* zero-length blocks do not count toward bounds: only the middle block does */
        int64_t bl2[] = {0, 3, 0}, d2[] = {-50, 2, 50};
        CHECK_OK(tess_type_indexed(3, bl2, d2, TESS_INT16, &a));
        BOUNDS(a, 6, 4, 6, 4, 6, 1);
        LAYOUT(a, 1, {4, 6});
        tess_type_free(a);
    }

    /* an empty type with bounds (resized) still has its extent, and blocks of it (blocklen > 0:
     * not zero-length blocks) carry its bounds, as MPI's lb/ub rules say */
    {
        CHECK_OK(tess_type_contiguous(0, TESS_INT32, &a));
        CHECK_OK(tess_type_resized(a, 4, 12, &b));
        tess_type_free(a);
        BOUNDS(b, 0, 4, 12, 0, 0, 0);
        CHECK_OK(tess_type_contiguous(3, b, &c));
        BOUNDS(c, 0, 4, 36, 0, 0, 0);
        tess_type_free(c);
        int64_t bl[] = {1, 1}, d[] = {100, 0};
        tess_type *ts[] = {b, TESS_INT32};
        CHECK_OK(tess_type_struct(2, bl, d, ts, &c));
        /* lb = min(100 + 4, 0) = 0, ub = max(100 + 16, 4) = 116 */
        BOUNDS(c, 4, 0, 116, 0, 4, 1);
        LAYOUT(c, 2, {0, 4}, {116, 4});
        tess_type_free(c);
        tess_type_free(b);
    }

    /* subarray: 2-D 4x5 of int16, 2x3 at (1,1), C and Fortran order */
    {
        int64_t sizes[] = {4, 5}, subs[] = {2, 3}, starts[] = {1, 1};
        CHECK_OK(tess_type_subarray(2, sizes, subs, starts, TESS_ORDER_C, TESS_INT16, &a));
        /* rows 1 and 2, columns 1..3: bytes (5*r + 1) * 2 */
        BOUNDS(a, 12, 0, 40, 12, 16, 2);
        LAYOUT(a, 1, {12, 6}, {22, 6});
        LAYOUT(a, 2, {12, 6}, {22, 6}, {52, 6}, {62, 6});
        tess_type_free(a);
        CHECK_OK(tess_type_subarray(2, sizes, subs, starts, TESS_ORDER_FORTRAN, TESS_INT16, &a));
        /* column-major 4x5: element (i,j) at (i + 4j) * 2; columns 1..3, rows 1..2 */
        BOUNDS(a, 12, 0, 40, 10, 20, 3);
        LAYOUT(a, 1, {10, 4}, {18, 4}, {26, 4});
        tess_type_free(a);
    }

    /* darray: 1-D 10 ints over 3 processes */
    {
        int64_t g[] = {10};
        int dist[] = {TESS_DISTRIBUTE_BLOCK}, darg[] = {TESS_DISTRIBUTE_DFLT_DARG}, ps[] = {3};
        CHECK_OK(tess_type_darray(3, 1, 1, g, dist, darg, ps, TESS_ORDER_C, TESS_INT32, &a));
        BOUNDS(a, 16, 0, 40, 16, 16, 1); /* block of 4: elements 4..7 */
        LAYOUT(a, 1, {16, 16});
        tess_type_free(a);
        CHECK_OK(tess_type_darray(3, 2, 1, g, dist, darg, ps, TESS_ORDER_C, TESS_INT32, &a));
        BOUNDS(a, 8, 0, 40, 32, 8, 1); /* elements 8, 9 */
        tess_type_free(a);
        int cyc[] = {TESS_DISTRIBUTE_CYCLIC}, two[] = {2};
        CHECK_OK(tess_type_darray(3, 1, 1, g, cyc, two, ps, TESS_ORDER_C, TESS_INT32, &a));
        /* cyclic(2): blocks {0,1} {2,3} {4,5} {6,7} {8,9} -> process 1 has {2,3} and {8,9} */
        BOUNDS(a, 16, 0, 40, 8, 32, 2);
        LAYOUT(a, 1, {8, 8}, {32, 8});
        tess_type_free(a);
        /* 2-D 4x6 on a 2x2 grid, rank 1 = grid coordinates (0, 1): rows 0..1, columns 3..5 */
        int64_t g2[] = {4, 6};
        int d2[] = {TESS_DISTRIBUTE_BLOCK, TESS_DISTRIBUTE_BLOCK};
        int a2[] = {TESS_DISTRIBUTE_DFLT_DARG, TESS_DISTRIBUTE_DFLT_DARG}, p2[] = {2, 2};
        CHECK_OK(tess_type_darray(4, 1, 2, g2, d2, a2, p2, TESS_ORDER_C, TESS_BYTE, &a));
        BOUNDS(a, 6, 0, 24, 3, 9, 2);
        LAYOUT(a, 1, {3, 3}, {9, 3});
        tess_type_free(a);
        /* Fortran order, same grid (process grid stays row-major): rows 0..1, columns 3..5 of
         * a column-major 4x6: element (i,j) at i + 4j */
        CHECK_OK(tess_type_darray(4, 1, 2, g2, d2, a2, p2, TESS_ORDER_FORTRAN, TESS_BYTE, &a));
        BOUNDS(a, 6, 0, 24, 12, 10, 3);
        LAYOUT(a, 1, {12, 2}, {16, 2}, {20, 2});
        tess_type_free(a);
    }

    /* a type may be freed while types built on it live; references */
    CHECK_OK(tess_type_vector(2, 1, 3, TESS_INT32, &a));
    CHECK_OK(tess_type_hvector(2, 1, 100, a, &b));
    tess_type_free(a);
    BOUNDS(b, 16, 0, 116, 0, 116, 4);
    LAYOUT(b, 1, {0, 4}, {12, 4}, {100, 4}, {112, 4});
    CHECK(tess_type_ref(b) == b);
    tess_type_free(b);
    EQ(tess_type_size(b), 16); /* still referenced once */
    tess_type_free(b);
}

/* -------------------------------------------------------- normalization */

static void test_normalization(void)
{
    tess_type *a, *b, *c;

    /* a vector of contiguous fuses into one level */
    CHECK_OK(tess_type_contiguous(4, TESS_DOUBLE, &a));
    CHECK_OK(tess_type_vector(5, 1, 3, a, &b));
    EQ(tess_type_depth(b), 1);
    BOUNDS(b, 160, 0, 416, 0, 416, 5);
    CHECK(starts_with(b, "vector"));
    tess_type_free(a);
    tess_type_free(b);

    /* contiguous of a vector whose stride continues across instances: one vector */
    CHECK_OK(tess_type_vector(4, 2, 5, TESS_INT32, &a)); /* extent 68 */
    EQ(tess_type_depth(a), 1);
    CHECK_OK(tess_type_resized(a, 0, 80, &b));
    CHECK_OK(tess_type_contiguous(3, b, &c));
    EQ(tess_type_depth(c), 1);
    BOUNDS(c, 96, 0, 240, 0, 228, 12);
    CHECK(starts_with(c, "vector"));
    tess_type_free(b);
    tess_type_free(c);
    /* hvector of it with the matching stride: the same regions (fusing it too would be
     * welcome but is not required: the extent differs from the contiguous case) */
    CHECK_OK(tess_type_hvector(3, 1, 80, a, &c));
    BOUNDS(c, 96, 0, 228, 0, 228, 12);
    tess_type_free(c);
    /* a stride that does not continue the pattern cannot fuse */
    CHECK_OK(tess_type_hvector(3, 1, 84, a, &c));
    EQ(tess_type_num_regions(c), 12);
    EQ(tess_type_extent(c), 236);
    tess_type_free(c);
    tess_type_free(a);

    /* a dense vector (stride == blocklen) is contiguous: one region */
    CHECK_OK(tess_type_vector(6, 3, 3, TESS_INT16, &a));
    EQ(tess_type_depth(a), 1);
    BOUNDS(a, 36, 0, 36, 0, 36, 1);
    tess_type_free(a);

    /* struct of one base type becomes indexed */
    {
        int64_t bl[] = {1, 2, 1}, d[] = {0, 16, 40};
        tess_type *ts[] = {TESS_DOUBLE, TESS_DOUBLE, TESS_DOUBLE};
        CHECK_OK(tess_type_struct(3, bl, d, ts, &a));
        EQ(tess_type_depth(a), 1);
        CHECK(starts_with(a, "indexed"));
        CHECK(!contains(a, "struct"));
        BOUNDS(a, 32, 0, 48, 0, 48, 3);
        LAYOUT(a, 1, {0, 8}, {16, 16}, {40, 8});
        tess_type_free(a);
    }
    /* indexed with equal block lengths: blockindexed, or vector when regularly spaced */
    {
        int64_t bl[] = {2, 2, 2}, d1[] = {0, 5, 13}, d2[] = {0, 5, 10};
        CHECK_OK(tess_type_indexed(3, bl, d1, TESS_INT32, &a));
        EQ(tess_type_depth(a), 1);
        CHECK(starts_with(a, "blockindexed"));
        BOUNDS(a, 24, 0, 60, 0, 60, 3);
        tess_type_free(a);
        CHECK_OK(tess_type_indexed(3, bl, d2, TESS_INT32, &a));
        EQ(tess_type_depth(a), 1);
        CHECK(starts_with(a, "vector"));
        BOUNDS(a, 24, 0, 48, 0, 48, 3);
        tess_type_free(a);
    }
    /* adjacent blocks merge; zero-length blocks vanish */
    {
        int64_t bl[] = {1, 1}, d[] = {0, 1};
        CHECK_OK(tess_type_indexed(2, bl, d, TESS_INT32, &a));
        BOUNDS(a, 8, 0, 8, 0, 8, 1);
        EQ(tess_type_depth(a), 1);
        tess_type_free(a);
        int64_t hb[] = {1, 1, 1}, hd[] = {0, 4, 8};
        CHECK_OK(tess_type_hindexed(3, hb, hd, TESS_INT32, &a));
        BOUNDS(a, 12, 0, 12, 0, 12, 1);
        tess_type_free(a);
        int64_t zb[] = {2, 0, 2}, zd[] = {0, 7, 2};
        CHECK_OK(tess_type_indexed(3, zb, zd, TESS_INT32, &a));
        BOUNDS(a, 16, 0, 16, 0, 16, 1);
        CHECK(!contains(a, "@28")); /* the zero-length block at 7 * 4 bytes is gone */
        tess_type_free(a);
    }
    /* nested contiguous collapses */
    CHECK_OK(tess_type_contiguous(3, TESS_INT32, &a));
    CHECK_OK(tess_type_contiguous(5, a, &b));
    CHECK_OK(tess_type_contiguous(7, b, &c));
    EQ(tess_type_depth(c), 1);
    BOUNDS(c, 420, 0, 420, 0, 420, 1);
    tess_type_free(a);
    tess_type_free(b);
    tess_type_free(c);
}

/* ----------------------------------------------------------- memory */

static void test_memory(void)
{
    tess_type *a, *b, *c;

    /* a vector of 10^9 blocks */
    CHECK_OK(tess_type_vector(1000000000, 1, 2, TESS_DOUBLE, &a));
    BOUNDS(a, 8000000000LL, 0, 15999999992LL, 0, 15999999992LL, 1000000000);
    CHECK(tess_type_footprint(a) > 0 && tess_type_footprint(a) < 1024);
    /* its last element packs from the right place (seek, not a walk) */
    {
        static const int64_t off = 15999999984LL; /* element 10^9 - 1 at 2 * 8 * (10^9 - 1) */
        double v = 42.5, got = 0;
        /* the origin lies 16 GB below v: only the element at `off` is ever touched */
        const char *origin = (const char *)((uintptr_t)&v - (uintptr_t)off);
        int64_t np;
        CHECK_OK(tess_pack(origin, 1, a, 8000000000LL - 8, &got, 8, &np));
        EQ(np, 8);
        CHECK(got == 42.5);
    }
    tess_type_free(a);

    /* a 3-D subarray of a 10^4 x 10^4 x 10^4 array of double */
    {
        int64_t sizes[] = {10000, 10000, 10000}, subs[] = {5000, 3000, 2000}, st[] = {1, 2, 3};
        CHECK_OK(tess_type_subarray(3, sizes, subs, st, TESS_ORDER_C, TESS_DOUBLE, &a));
        int64_t tlb = ((1LL * 10000 + 2) * 10000 + 3) * 8;
        int64_t last = ((5000LL * 10000 + 3001) * 10000 + 2003) * 8; /* end of the last row */
        BOUNDS(a, 30000000000LL * 8, 0, 8000000000000LL, tlb, last - tlb, 15000000);
        CHECK(tess_type_footprint(a) > 0 && tess_type_footprint(a) < 1024);
        tess_type_free(a);
        CHECK_OK(tess_type_subarray(3, sizes, subs, st, TESS_ORDER_FORTRAN, TESS_DOUBLE, &a));
        /* Fortran: dimension 0 is contiguous; rows of 5000 doubles, 3000 x 2000 of them */
        EQ(tess_type_num_regions(a), 6000000);
        EQ(tess_type_size(a), 30000000000LL * 8);
        CHECK(tess_type_footprint(a) > 0 && tess_type_footprint(a) < 1024);
        tess_type_free(a);
    }
    /* darrays of the same array: block x cyclic x none, and cyclic(7) with a partial tail */
    {
        int64_t g[] = {10000, 10000, 10000};
        int dist[] = {TESS_DISTRIBUTE_BLOCK, TESS_DISTRIBUTE_CYCLIC, TESS_DISTRIBUTE_NONE};
        int darg[] = {TESS_DISTRIBUTE_DFLT_DARG, TESS_DISTRIBUTE_DFLT_DARG,
                      TESS_DISTRIBUTE_DFLT_DARG};
        int ps[] = {2, 4, 1};
        CHECK_OK(tess_type_darray(8, 5, 3, g, dist, darg, ps, TESS_ORDER_C, TESS_DOUBLE, &a));
        EQ(tess_type_size(a), 5000LL * 2500 * 10000 * 8);
        EQ(tess_type_extent(a), 8000000000000LL);
        CHECK(tess_type_footprint(a) > 0 && tess_type_footprint(a) < 1024);
        tess_type_free(a);
        int cyc[] = {TESS_DISTRIBUTE_CYCLIC, TESS_DISTRIBUTE_CYCLIC, TESS_DISTRIBUTE_BLOCK};
        int darg2[] = {7, 3, TESS_DISTRIBUTE_DFLT_DARG}, ps2[] = {3, 1, 2};
        CHECK_OK(tess_type_darray(6, 1, 3, g, cyc, darg2, ps2, TESS_ORDER_FORTRAN, TESS_DOUBLE,
                                  &a));
        /* rank 1 = grid coordinates (0, 0, 1). dim 0: 1428 blocks of 7 and a last block of 4
         * (block 1428), dealt round-robin to 3: coordinate 0 gets blocks 0, 3, ..., 1428 = 476
         * full blocks and the partial one = 3336 elements; dim 1: psize 1 owns all 10^4;
         * dim 2: the second block of 5000 */
        EQ(tess_type_size(a), 3336LL * 10000 * 5000 * 8);
        EQ(tess_type_extent(a), 8000000000000LL);
        CHECK(tess_type_footprint(a) > 0 && tess_type_footprint(a) < 1024);
        tess_type_free(a);
    }

    /* tess_type_footprint covers the whole tree: a vector over an irregular indexed type costs
     * at least the indexed type, and a struct of two costs at least both */
    {
        enum { NB = 1000 };
        int64_t *bl = malloc(NB * sizeof *bl), *d = malloc(NB * sizeof *d);
        CHECK(bl && d);
        for (int i = 0; i < NB; i++) { /* irregular, never adjacent: nothing merges */
            bl[i] = 1 + i % 2;
            d[i] = 10 * i + (i * i) % 7;
        }
        CHECK_OK(tess_type_indexed(NB, bl, d, TESS_INT32, &a));
        for (int i = 0; i < NB; i++)
            d[i] += 1;
        CHECK_OK(tess_type_indexed(NB, bl, d, TESS_INT16, &b));
        int64_t fa = tess_type_footprint(a), fb = tess_type_footprint(b);
        CHECK(fa >= NB * 2 * (int64_t)sizeof(int64_t)); /* its block arrays are counted */
        CHECK(fb >= NB * 2 * (int64_t)sizeof(int64_t));
        CHECK_OK(tess_type_vector(10, 1, 2, a, &c));
        EQ(tess_type_depth(c), 2);
        CHECK(tess_type_footprint(c) > fa);
        tess_type_free(c);
        int64_t sbl[] = {1, 1}, sd[] = {0, 1 << 20};
        tess_type *ts[] = {a, b};
        CHECK_OK(tess_type_struct(2, sbl, sd, ts, &c));
        CHECK(tess_type_footprint(c) >= fa + fb);
        tess_type_free(c);
        tess_type_free(a);
        tess_type_free(b);
        free(bl);
        free(d);
    }
}

/* ------------------------------------------------------------ bad input */

static int sentinel_obj;
#define SENTINEL ((tess_type *)&sentinel_obj)

/* The call fails with `code` and a fresh message, and leaves out alone. */
#define BAD(code, call)                                                                      \
    do {                                                                                     \
        out = SENTINEL;                                                                      \
        tessi_error(0, "%s", "");                                                            \
        CHECK_ERR(call, code);                                                               \
        CHECK(out == SENTINEL);                                                              \
        checks++;                                                                            \
    } while (0)

static void test_bad_input(void)
{
    tess_type *out, *v;
    const int64_t big = INT64_MAX / 2;
    int64_t one[] = {1}, ones[] = {1, 1}, neg[] = {2, -1}, d2[] = {0, 4}, huge_d[] = {INT64_MAX / 4};
    tess_type *ts2[] = {TESS_INT32, TESS_DOUBLE}, *tsnull[] = {TESS_INT32, NULL};

    /* negative counts and block lengths */
    BAD(TESS_ERR_ARG, tess_type_contiguous(-1, TESS_INT32, &out));
    BAD(TESS_ERR_ARG, tess_type_vector(-1, 1, 1, TESS_INT32, &out));
    BAD(TESS_ERR_ARG, tess_type_vector(2, -1, 1, TESS_INT32, &out));
    BAD(TESS_ERR_ARG, tess_type_hvector(-3, 1, 8, TESS_INT32, &out));
    BAD(TESS_ERR_ARG, tess_type_hvector(3, -1, 8, TESS_INT32, &out));
    BAD(TESS_ERR_ARG, tess_type_indexed(-1, one, one, TESS_INT32, &out));
    BAD(TESS_ERR_ARG, tess_type_indexed(2, neg, d2, TESS_INT32, &out));
    BAD(TESS_ERR_ARG, tess_type_hindexed(2, neg, d2, TESS_INT32, &out));
    BAD(TESS_ERR_ARG, tess_type_blockindexed(2, -2, d2, TESS_INT32, &out));
    BAD(TESS_ERR_ARG, tess_type_blockindexed(-2, 1, d2, TESS_INT32, &out));
    BAD(TESS_ERR_ARG, tess_type_hblockindexed(2, -1, d2, TESS_INT32, &out));
    BAD(TESS_ERR_ARG, tess_type_struct(2, neg, d2, ts2, &out));
    BAD(TESS_ERR_ARG, tess_type_struct(-1, one, one, ts2, &out));

    /* NULL handles and arrays */
    BAD(TESS_ERR_ARG, tess_type_contiguous(2, NULL, &out));
    BAD(TESS_ERR_ARG, tess_type_vector(2, 1, 2, NULL, &out));
    BAD(TESS_ERR_ARG, tess_type_resized(NULL, 0, 4, &out));
    BAD(TESS_ERR_ARG, tess_type_indexed(1, NULL, one, TESS_INT32, &out));
    BAD(TESS_ERR_ARG, tess_type_hindexed(1, one, NULL, TESS_INT32, &out));
    BAD(TESS_ERR_ARG, tess_type_blockindexed(1, 1, NULL, TESS_INT32, &out));
    BAD(TESS_ERR_ARG, tess_type_struct(2, ones, d2, NULL, &out));
    BAD(TESS_ERR_ARG, tess_type_struct(2, d2, d2, tsnull, &out));
    tessi_error(0, "%s", "");
    CHECK_ERR(tess_type_contiguous(2, TESS_INT32, NULL), TESS_ERR_ARG);
    tessi_error(0, "%s", "");
    CHECK_ERR(tess_type_vector(2, 1, 2, TESS_INT32, NULL), TESS_ERR_ARG);
    tessi_error(0, "%s", "");
    CHECK_ERR(tess_type_resized(TESS_INT32, 0, 8, NULL), TESS_ERR_ARG);

    /* products beyond int64 */
    BAD(TESS_ERR_OVERFLOW, tess_type_contiguous(INT64_MAX / 4, TESS_DOUBLE, &out)); /* size */
    BAD(TESS_ERR_OVERFLOW, tess_type_vector(INT64_MAX / 8, 1, 4, TESS_INT32, &out)); /* count*stride */
    BAD(TESS_ERR_OVERFLOW, tess_type_vector(3, 1, big, TESS_INT32, &out));           /* stride*extent */
    BAD(TESS_ERR_OVERFLOW, tess_type_hvector(4, 1, big, TESS_BYTE, &out));           /* 3 * stride */
    BAD(TESS_ERR_OVERFLOW, tess_type_vector(1, INT64_MAX / 4, 1, TESS_DOUBLE, &out)); /* blocklen*extent */
    BAD(TESS_ERR_OVERFLOW, tess_type_hvector(2, INT64_MAX / 4, 8, TESS_DOUBLE, &out));
    BAD(TESS_ERR_OVERFLOW, tess_type_indexed(1, one, huge_d, TESS_DOUBLE, &out));    /* displ*extent */
    {
        int64_t bl[] = {1, INT64_MAX / 2}, hd[] = {INT64_MAX - 2, 0};
        BAD(TESS_ERR_OVERFLOW, tess_type_hindexed(2, ones, hd, TESS_INT32, &out)); /* ub */
        BAD(TESS_ERR_OVERFLOW, tess_type_hindexed(2, bl, d2, TESS_INT32, &out)); /* size */
        int64_t bl3[] = {INT64_MAX / 8, INT64_MAX / 8}, d3[] = {0, 0};
        BAD(TESS_ERR_OVERFLOW, tess_type_struct(2, bl3, d3, ts2, &out));          /* size sum */
        BAD(TESS_ERR_OVERFLOW, tess_type_hblockindexed(1, INT64_MAX / 2, d3, TESS_INT32, &out));
    }
    BAD(TESS_ERR_OVERFLOW, tess_type_resized(TESS_INT32, INT64_MAX - 5, 10, &out)); /* lb + extent */
    {
        int64_t sizes[] = {INT64_MAX / 2, 4}, subs[] = {1, 1}, st[] = {0, 0};
        BAD(TESS_ERR_OVERFLOW,
            tess_type_subarray(2, sizes, subs, st, TESS_ORDER_C, TESS_DOUBLE, &out));
    }
    /* instance counts in pack and cursors */
    {
        CHECK_OK(tess_type_contiguous(1024, TESS_DOUBLE, &v));
        tess_cursor *cur = (tess_cursor *)&sentinel_obj;
        int64_t np;
        char x[8];
        tessi_error(0, "%s", "");
        CHECK_ERR(tess_cursor_create(v, INT64_MAX / 1024, &cur), TESS_ERR_OVERFLOW);
        CHECK(cur == (tess_cursor *)&sentinel_obj);
        tessi_error(0, "%s", "");
        CHECK_ERR(tess_pack(x, INT64_MAX / 1024, v, 0, x, 8, &np), TESS_ERR_OVERFLOW);
        tessi_error(0, "%s", "");
        CHECK_ERR(tess_pack(x, -1, v, 0, x, 8, &np), TESS_ERR_ARG);
        tessi_error(0, "%s", "");
        CHECK_ERR(tess_pack(x, 1, v, 8193, x, 8, &np), TESS_ERR_ARG); /* past the stream */
        tessi_error(0, "%s", "");
        CHECK_ERR(tess_cursor_create(NULL, 1, &cur), TESS_ERR_ARG);
        CHECK_OK(tess_cursor_create(v, 2, &cur));
        tessi_error(0, "%s", "");
        CHECK_ERR(tess_cursor_seek(cur, 2 * 8192 + 1), TESS_ERR_ARG);
        tessi_error(0, "%s", "");
        CHECK_ERR(tess_cursor_seek(cur, -1), TESS_ERR_ARG);
        CHECK_OK(tess_cursor_seek(cur, 2 * 8192));
        tess_cursor_free(cur);
        tess_type_free(v);
    }

    /* resized with a negative extent */
    BAD(TESS_ERR_ARG, tess_type_resized(TESS_INT32, 0, -1, &out));

    /* subarray and darray outside their definitions */
    {
        int64_t sizes[] = {4, 5}, subs[] = {2, 3}, st[] = {1, 1}, bigsub[] = {5, 1},
                late[] = {3, 0}, negst[] = {-1, 0};
        BAD(TESS_ERR_ARG, tess_type_subarray(2, sizes, bigsub, st, TESS_ORDER_C, TESS_INT32, &out));
        BAD(TESS_ERR_ARG, tess_type_subarray(2, sizes, subs, late, TESS_ORDER_C, TESS_INT32, &out));
        BAD(TESS_ERR_ARG, tess_type_subarray(2, sizes, subs, negst, TESS_ORDER_C, TESS_INT32, &out));
        BAD(TESS_ERR_ARG, tess_type_subarray(0, sizes, subs, st, TESS_ORDER_C, TESS_INT32, &out));
        BAD(TESS_ERR_ARG, tess_type_subarray(2, sizes, subs, st, 7, TESS_INT32, &out));
        BAD(TESS_ERR_ARG, tess_type_subarray(2, sizes, subs, st, TESS_ORDER_C, NULL, &out));
        int64_t g[] = {10};
        int blk[] = {TESS_DISTRIBUTE_BLOCK}, dflt[] = {TESS_DISTRIBUTE_DFLT_DARG}, small[] = {2},
            ps[] = {3};
        BAD(TESS_ERR_ARG, tess_type_darray(4, 0, 1, g, blk, dflt, ps, TESS_ORDER_C, TESS_INT32, &out));
        BAD(TESS_ERR_ARG, tess_type_darray(3, 3, 1, g, blk, dflt, ps, TESS_ORDER_C, TESS_INT32, &out));
        BAD(TESS_ERR_ARG, tess_type_darray(3, -1, 1, g, blk, dflt, ps, TESS_ORDER_C, TESS_INT32, &out));
        /* block(2) over 3 processes covers 6 of 10 elements */
        BAD(TESS_ERR_ARG, tess_type_darray(3, 0, 1, g, blk, small, ps, TESS_ORDER_C, TESS_INT32, &out));
    }

    /* nesting beyond the maximum depth: a struct of the previous level and a char after a gap
     * cannot be normalized away, so each level adds one (and one region); the first level past
     * TESSI_MAX_DEPTH fails and sets nothing */
    {
        tess_type *t = TESS_INT32;
        int level;
        for (level = 1; level <= TESSI_MAX_DEPTH + 8; level++) {
            tess_type *n = SENTINEL, *members[2] = {t, TESS_CHAR};
            int64_t blens[2] = {1, 1}, displs[2] = {0, tess_type_extent(t) + 1};
            tessi_error(0, "%s", "");
            int rc = tess_type_struct(2, blens, displs, members, &n);
            if (rc != 0) {
                CHECK(rc == TESS_ERR_ARG || rc == TESS_ERR_UNSUPPORTED);
                CHECK(tess_last_error()[0] != '\0');
                CHECK(n == SENTINEL);
                break;
            }
            EQ(tess_type_depth(n), level);
            EQ(tess_type_num_regions(n), level + 1);
            tess_type_free(t);
            t = n;
        }
        EQ(level, TESSI_MAX_DEPTH + 1);
        EQ(tess_type_depth(t), TESSI_MAX_DEPTH);
        tess_type_free(t);
    }

    /* hostile encodings */
    {
        uint8_t junk[64];
        for (int i = 0; i < (int)sizeof junk; i++)
            junk[i] = (uint8_t)(i * 37 + 11);
        for (size_t len = 0; len <= sizeof junk; len += 7) {
            BAD(TESS_ERR_DECODE, tess_type_decode(junk, len, &out));
        }
        out = SENTINEL;
        int rc = tess_type_decode(NULL, 16, &out);
        CHECK(rc == TESS_ERR_ARG || rc == TESS_ERR_DECODE);
        CHECK(out == SENTINEL);
    }
}

/* ------------------------------------------------------------ describe */

static void test_describe(void)
{
    tess_type *a;
    char text[4096], small[6];
    CHECK_OK(tess_type_vector(3, 2, 5, TESS_INT32, &a));
    CHECK_OK(tess_type_describe(a, text, sizeof text));
    CHECK(strlen(text) > 6);
    CHECK(strstr(text, "vector") != NULL);
    CHECK(strstr(text, "int32") != NULL);
    memset(small, 'X', sizeof small);
    tessi_error(0, "%s", "");
    EQ(tess_type_describe(a, small, sizeof small), TESS_ERR_TRUNCATE);
    EQ(small[5], '\0');
    CHECK(strncmp(small, text, 5) == 0);
    CHECK_OK(tess_type_describe(TESS_DOUBLE, text, sizeof text));
    CHECK(strstr(text, "double") != NULL);
    tess_type_free(a);
}

int main(void)
{
    test_predefined();
    test_semantics();
    test_normalization();
    test_memory();
    test_bad_input();
    test_describe();
    printf("test_type_basic: %d checks passed\n", checks);
    return 0;
}
