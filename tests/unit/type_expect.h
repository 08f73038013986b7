/*
 * type_expect.h - the assertions of the hand-checked datatype tests (test_type_basic,
 * test_type_memory, test_type_badinput): bounds of one instance, and the regions of count
 * instances checked through the cursor, pack and unpack.
 */
#ifndef TESS_TYPE_EXPECT_H
#define TESS_TYPE_EXPECT_H

#include "check.h"

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

static inline void show(const tess_type *t)
{
    char text[4096];
    tess_type_describe(t, text, sizeof text);
    fprintf(stderr, "type:\n%s", text);
}

/* size, lb, extent, true lb, true extent and region count of one instance */
static inline void expect_bounds(const tess_type *t, int64_t size, int64_t lb, int64_t extent,
                                 int64_t true_lb, int64_t true_extent, int64_t regions,
                                 const char *file, int line)
{
    int64_t got[6] = {tess_type_size(t),    tess_type_lb(t),          tess_type_extent(t),
                      tess_type_true_lb(t), tess_type_true_extent(t), tess_type_num_regions(t)};
    int64_t want[6] = {size, lb, extent, true_lb, true_extent, regions};
    static const char *what[6] = {"size", "lb", "extent", "true_lb", "true_extent", "num_regions"};
    for (int k = 0; k < 6; k++) {
        checks++;
        if (got[k] != want[k]) {
            fprintf(stderr, "%s:%d: %s is %lld, expected %lld\n", file, line, what[k],
                    (long long)got[k], (long long)want[k]);
            show(t);
            exit(1);
        }
    }
}
#define BOUNDS(t, size, lb, ext, tlb, text, reg)                                             \
    expect_bounds(t, size, lb, ext, tlb, text, reg, __FILE__, __LINE__)

/*
 * The regions of `count` instances are exactly exp[0..n) (merged, typemap order); packing a
 * patterned buffer yields the bytes of those regions in order; unpacking into a zeroed buffer
 * fills exactly those bytes (when they do not overlap).
 */
static inline void expect_layout(tess_type *t, int64_t count, const tess_region *exp,
                                 int64_t n, int overlap, const char *file, int line)
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
        fprintf(stderr, "%s:%d: regions differ\n  got:     ", file, line);
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
        fprintf(stderr, "%s:%d: packed bytes differ\n", file, line);
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
        expect_layout(t, count, e_, N(e_), 0, __FILE__, __LINE__);                                     \
    } while (0)
#define LAYOUT_OVERLAP(t, count, ...)                                                        \
    do {                                                                                     \
        static const tess_region e_[] = {__VA_ARGS__};                                       \
        expect_layout(t, count, e_, N(e_), 1, __FILE__, __LINE__);                                     \
    } while (0)

#endif
