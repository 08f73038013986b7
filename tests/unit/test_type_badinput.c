/*
 * test_type_badinput.c - bad arguments to every datatype call: the error code, a message, and
 * *out untouched; nesting beyond the maximum depth; hostile encodings.
 */
#include "type/type.h" /* TESSI_MAX_DEPTH; tessi_error to clear the message */
#include "type_expect.h"

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

int main(void)
{
    test_bad_input();
    printf("test_type_badinput: %d checks passed\n", checks);
    return 0;
}
