/*
 * test_type_basic.c - hand-checked datatype cases: predefined sizes, MPI semantics examples
 * (negative strides, resized, negative displacements, mixed structs, zero-length blocks,
 * count 0), the normalizations visible through depth/regions/describe, and describe itself.
 * test_type_memory checks the memory of huge types, test_type_badinput bad input.
 *
 * Every expected layout below was worked out by hand from the MPI definitions.
 */
#include "type_expect.h"

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
    test_describe();
    printf("test_type_basic: %d checks passed\n", checks);
    return 0;
}
