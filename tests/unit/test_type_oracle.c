/*
 * test_type_oracle.c - thousands of random nested datatypes (tests/randtype.c) checked against
 * the brute-force byte map: invariants, region counts, pack/unpack of 1..3 instances (whole,
 * partial at random offsets, in chunks), cursor walks with limits, cursor seeks, encode/decode
 * round trips and describe.
 *
 * usage: test_type_oracle [-n types] [-s seed] [-i first] [-d depth] [-v]
 * Type i is made from seed and i alone. Every eighth (i % 8 == 7) is made with RT_MONOTONIC |
 * RT_NONNEG | RT_NO_EMPTY (the kind file views take), which also checks that the generator keeps
 * those promises. A failure prints the seed and the index of the type (rerun with -s SEED -i INDEX -n 1), the
 * generator's recipe and Tessera's describe text.
 */
#include "check.h"
#include "randtype.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GUARD 64

static uint64_t g_seed;
static int64_t g_index;
static const rt_type *g_rt;
static char g_what[256];

static void show_describe(const tess_type *t)
{
    static char text[1 << 16];
    int rc = tess_type_describe(t, text, sizeof text);
    fprintf(stderr, "  describe (rc %d):\n%s", rc, text);
}

static void fail_at(const char *file, int line, const char *msg)
{
    fprintf(stderr, "%s:%d: FAILED: %s\n", file, line, msg);
    if (g_what[0])
        fprintf(stderr, "  while checking: %s\n", g_what);
    fprintf(stderr, "  seed %llu, type #%lld (rerun: test_type_oracle -s %llu -i %lld -n 1)\n",
            (unsigned long long)g_seed, (long long)g_index, (unsigned long long)g_seed,
            (long long)g_index);
    if (g_rt) {
        fprintf(stderr,
                "  oracle: size %lld lb %lld extent %lld true_lb %lld true_ub %lld regions %lld"
                " overlap %d\n  recipe: %s\n",
                (long long)g_rt->nbytes, (long long)g_rt->lb, (long long)g_rt->extent,
                (long long)g_rt->true_lb, (long long)g_rt->true_ub, (long long)g_rt->nregions,
                g_rt->overlap, g_rt->recipe);
        if (g_rt->type)
            show_describe(g_rt->type);
    }
    exit(1);
}

#define T_CHECK(cond)                                                                        \
    do {                                                                                     \
        if (!(cond))                                                                         \
            fail_at(__FILE__, __LINE__, #cond);                                              \
    } while (0)

#define T_EQ(got, exp)                                                                       \
    do {                                                                                     \
        long long g_ = (long long)(got), e_ = (long long)(exp);                              \
        if (g_ != e_) {                                                                      \
            char m_[512];                                                                    \
            snprintf(m_, sizeof m_, "%s is %lld, expected %s = %lld", #got, g_, #exp, e_);   \
            fail_at(__FILE__, __LINE__, m_);                                                 \
        }                                                                                    \
    } while (0)

#define T_OK(call)                                                                           \
    do {                                                                                     \
        int rc_ = (call);                                                                    \
        if (rc_ != 0) {                                                                      \
            char m_[768];                                                                    \
            snprintf(m_, sizeof m_, "%s returned %d (%s): %s", #call, rc_, tess_strerror(rc_), \
                     tess_last_error());                                                     \
            fail_at(__FILE__, __LINE__, m_);                                                 \
        }                                                                                    \
    } while (0)

#define WHAT(...) snprintf(g_what, sizeof g_what, __VA_ARGS__)

/* ------------------------------------------------------------- buffers */

typedef struct {
    uint8_t *mem;    /* allocation: GUARD + span + GUARD bytes */
    uint8_t *origin; /* the type origin: mem + GUARD - lo */
    int64_t lo, size;
} buffer;

static void fill(uint8_t *p, int64_t n, uint64_t salt)
{
    for (int64_t i = 0; i < n; i += 8) {
        uint64_t v = rt_mix(salt + (uint64_t)i);
        for (int k = 0; k < 8 && i + k < n; k++)
            p[i + k] = (uint8_t)(v >> (8 * k));
    }
}

static void buf_make(buffer *b, const rt_type *t, int64_t count, uint64_t salt)
{
    int64_t lo, hi;
    rt_span(t, count, &lo, &hi);
    b->lo = lo;
    b->size = hi - lo + 2 * GUARD;
    b->mem = malloc((size_t)b->size);
    CHECK(b->mem);
    b->origin = b->mem + GUARD - lo;
    fill(b->mem, b->size, salt);
}

/* Index into mem of byte `off` relative to the origin. */
static int64_t buf_index(const buffer *b, int64_t off) { return off - b->lo + GUARD; }

/* The packed stream of count instances from b, by the byte map. */
static uint8_t *expected_stream(const rt_type *t, const buffer *b, int64_t count)
{
    int64_t total = count * t->nbytes;
    uint8_t *e = malloc((size_t)total + GUARD);
    CHECK(e);
    fill(e + total, GUARD, 99);
    for (int64_t i = 0; i < count; i++)
        for (int64_t k = 0; k < t->nbytes; k++)
            e[i * t->nbytes + k] = b->mem[buf_index(b, i * t->extent + t->offsets[k])];
    return e;
}

static void check_bytes(const uint8_t *got, const uint8_t *exp, int64_t n, const char *what,
                        int line)
{
    for (int64_t k = 0; k < n; k++) {
        if (got[k] != exp[k]) {
            char m[256];
            snprintf(m, sizeof m, "%s: byte %lld of %lld is 0x%02x, expected 0x%02x", what,
                     (long long)k, (long long)n, got[k], exp[k]);
            fail_at(__FILE__, line, m);
        }
    }
}
#define CHECK_BYTES(got, exp, n, what) check_bytes(got, exp, n, what, __LINE__)

/* ---------------------------------------------------------------- pack */

static void pack_checks(const rt_type *t, int64_t count, rt_rng *r)
{
    int64_t total = count * t->nbytes, packed;
    buffer src;
    buf_make(&src, t, count, rt_u64(r));
    uint8_t *exp = expected_stream(t, &src, count);
    uint8_t *out = malloc((size_t)total + 2 * GUARD);
    CHECK(out);

    /* whole stream, exact and generous max_bytes */
    for (int gen = 0; gen < 2; gen++) {
        int64_t max = gen ? total + GUARD : total;
        WHAT("pack count %lld, data_offset 0, max_bytes %lld", (long long)count, (long long)max);
        fill(out, total + 2 * GUARD, 7);
        packed = -1;
        T_OK(tess_pack(src.origin, count, t->type, 0, out, max, &packed));
        T_EQ(packed, total);
        CHECK_BYTES(out, exp, total, "packed stream");
    }
    /* bytes after the stream untouched */
    {
        uint8_t *ref = malloc((size_t)total + 2 * GUARD);
        CHECK(ref);
        fill(ref, total + 2 * GUARD, 7);
        CHECK_BYTES(out + total, ref + total, 2 * GUARD, "bytes after the packed stream");
        /* partial packs at random offsets */
        for (int rep = 0; rep < 6; rep++) {
            int64_t d = rt_int(r, 0, total), m = rt_int(r, 0, total - d + 8);
            if (rep == 0)
                d = total; /* at the end: nothing */
            WHAT("partial pack count %lld, data_offset %lld, max_bytes %lld", (long long)count,
                 (long long)d, (long long)m);
            fill(out, total + 2 * GUARD, 7);
            packed = -1;
            T_OK(tess_pack(src.origin, count, t->type, d, out, m, &packed));
            int64_t want = m < total - d ? m : total - d;
            T_EQ(packed, want);
            CHECK_BYTES(out, exp + d, want, "partial pack");
            CHECK_BYTES(out + want, ref + want, 2 * GUARD, "bytes after a partial pack");
        }
        free(ref);
    }
    /* the whole stream in random chunks, each resumed where the last stopped */
    fill(out, total + 2 * GUARD, 7);
    int64_t d = 0;
    while (d < total) {
        int64_t m = rt_int(r, 1, total / 3 + 1);
        WHAT("chunked pack count %lld, data_offset %lld, max_bytes %lld", (long long)count,
             (long long)d, (long long)m);
        T_OK(tess_pack(src.origin, count, t->type, d, out + d, m, &packed));
        T_EQ(packed, m < total - d ? m : total - d);
        d += packed;
    }
    CHECK_BYTES(out, exp, total, "chunked pack");
    free(out);
    free(exp);
    free(src.mem);
}

/* -------------------------------------------------------------- unpack */

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* orig with the stream bytes [from, to) written by the byte map, in typemap order */
static void apply(const rt_type *t, const buffer *b, uint8_t *dst, const uint8_t *stream,
                  int64_t from, int64_t to)
{
    for (int64_t s = from; s < to; s++) {
        int64_t i = s / t->nbytes, k = s % t->nbytes;
        dst[buf_index(b, i * t->extent + t->offsets[k])] = stream[s];
    }
}

static void unpack_checks(const rt_type *t, int64_t count, rt_rng *r)
{
    int64_t total = count * t->nbytes, got;
    buffer dst;
    buf_make(&dst, t, count, rt_u64(r));
    uint8_t *orig = malloc((size_t)dst.size), *want = malloc((size_t)dst.size);
    uint8_t *stream = malloc((size_t)total + GUARD);
    CHECK(orig && want && stream);
    memcpy(orig, dst.mem, (size_t)dst.size);
    fill(stream, total + GUARD, rt_u64(r));

    WHAT("unpack count %lld, data_offset 0, bytes %lld", (long long)count, (long long)total);
    got = -1;
    T_OK(tess_unpack(stream, total, dst.origin, count, t->type, 0, &got));
    T_EQ(got, total);
    memcpy(want, orig, (size_t)dst.size);
    apply(t, &dst, want, stream, 0, total);
    int overlap = rt_overlaps(t, count);
    if (!overlap) {
        CHECK_BYTES(dst.mem, want, dst.size, "unpacked buffer (guards included)");
        /* round trip: packing the unpacked buffer gives the stream back */
        uint8_t *again = malloc((size_t)total + 1);
        CHECK(again);
        WHAT("pack after unpack, count %lld", (long long)count);
        T_OK(tess_pack(dst.origin, count, t->type, 0, again, total, &got));
        T_EQ(got, total);
        CHECK_BYTES(again, stream, total, "pack(unpack(stream))");
        free(again);
    } else {
        /* overlapping typemap (erroneous to receive into in MPI): every byte the map does not
         * cover is untouched, every covered byte holds one of the stream bytes aimed at it */
        uint64_t *pairs = malloc((size_t)(total ? total : 1) * sizeof *pairs);
        uint8_t *covered = calloc((size_t)dst.size, 1);
        CHECK(pairs && covered);
        for (int64_t s = 0; s < total; s++) {
            int64_t i = s / t->nbytes, k = s % t->nbytes;
            int64_t j = buf_index(&dst, i * t->extent + t->offsets[k]);
            covered[j] = 1;
            pairs[s] = ((uint64_t)j << 8) | stream[s];
        }
        qsort(pairs, (size_t)total, sizeof *pairs, cmp_u64);
        for (int64_t j = 0; j < dst.size; j++) {
            if (!covered[j]) {
                T_EQ(dst.mem[j], orig[j]);
            } else {
                uint64_t key = ((uint64_t)j << 8) | dst.mem[j];
                T_CHECK(bsearch(&key, pairs, (size_t)total, sizeof *pairs, cmp_u64) != NULL);
            }
        }
        free(pairs);
        free(covered);
    }
    if (!overlap) {
        /* partial unpacks at random offsets */
        for (int rep = 0; rep < 5; rep++) {
            int64_t d = rt_int(r, 0, total), m = rt_int(r, 0, total - d + 8);
            WHAT("partial unpack count %lld, data_offset %lld, bytes %lld", (long long)count,
                 (long long)d, (long long)m);
            memcpy(dst.mem, orig, (size_t)dst.size);
            got = -1;
            T_OK(tess_unpack(stream + d, m, dst.origin, count, t->type, d, &got));
            int64_t n = m < total - d ? m : total - d;
            T_EQ(got, n);
            memcpy(want, orig, (size_t)dst.size);
            apply(t, &dst, want, stream, d, d + n);
            CHECK_BYTES(dst.mem, want, dst.size, "partially unpacked buffer");
        }
        /* the whole stream in chunks */
        memcpy(dst.mem, orig, (size_t)dst.size);
        int64_t d = 0;
        while (d < total) {
            int64_t m = rt_int(r, 1, total / 3 + 1);
            WHAT("chunked unpack count %lld, data_offset %lld, bytes %lld", (long long)count,
                 (long long)d, (long long)m);
            T_OK(tess_unpack(stream + d, m, dst.origin, count, t->type, d, &got));
            T_EQ(got, m < total - d ? m : total - d);
            d += got;
        }
        memcpy(want, orig, (size_t)dst.size);
        apply(t, &dst, want, stream, 0, total);
        CHECK_BYTES(dst.mem, want, dst.size, "chunk-unpacked buffer");
    }
    free(orig);
    free(want);
    free(stream);
    free(dst.mem);
}

/* -------------------------------------------------------------- cursor */

static void region_eq(const tess_region *got, const tess_region *exp, int64_t k, int line)
{
    if (got->off != exp->off || got->len != exp->len) {
        char m[256];
        snprintf(m, sizeof m, "region %lld is {off %lld, len %lld}, expected {off %lld, len %lld}",
                 (long long)k, (long long)got->off, (long long)got->len, (long long)exp->off,
                 (long long)exp->len);
        fail_at(__FILE__, line, m);
    }
}

/* The expected regions from data byte p on: region k (P[k] <= p < P[k+1]) cut at p, then the
 * rest. Returns the index of the first region and writes the cut first region to *first. */
static int64_t suffix_at(const tess_region *R, const int64_t *P, int64_t nr, int64_t p,
                         tess_region *first)
{
    int64_t lo = 0, hi = nr; /* find the last k with P[k] <= p */
    while (hi - lo > 1) {
        int64_t mid = (lo + hi) / 2;
        if (P[mid] <= p)
            lo = mid;
        else
            hi = mid;
    }
    if (nr == 0 || p >= P[nr])
        return nr;
    first->off = R[lo].off + (p - P[lo]);
    first->len = R[lo].len - (p - P[lo]);
    return lo;
}

/* Walk from the cursor's position to the end with random limits, checking every call, and
 * compare the (re-merged) regions with the expected list exp[0..ne). */
static void limited_walk(tess_cursor *c, const tess_region *exp, int64_t ne, int64_t total,
                         rt_rng *r)
{
    tess_region *acc = malloc((size_t)(ne + 1) * sizeof *acc), out[8];
    CHECK(acc);
    int64_t na = 0, pos = tess_cursor_position(c);
    int64_t maxb_top = total / 4 + 2;
    for (int64_t calls = 0;; calls++) {
        T_CHECK(calls <= total + 2); /* progress */
        int64_t maxr = rt_int(r, 1, 8);
        int64_t maxb = rt_chance(r, 25) ? -1 : rt_int(r, 1, rt_chance(r, 50) ? 3 : maxb_top);
        int64_t n = -1;
        WHAT("cursor_next at stream byte %lld, max_regions %lld, max_bytes %lld",
             (long long)pos, (long long)maxr, (long long)maxb);
        T_OK(tess_cursor_next(c, out, maxr, maxb, &n));
        T_CHECK(n >= 0 && n <= maxr);
        int64_t sum = 0;
        for (int64_t k = 0; k < n; k++) {
            T_CHECK(out[k].len > 0);
            if (k > 0) /* regions within one call are merged */
                T_CHECK(out[k].off != out[k - 1].off + out[k - 1].len);
            sum += out[k].len;
        }
        if (maxb >= 0)
            T_CHECK(sum <= maxb);
        if (pos == total)
            T_EQ(n, 0);
        if (n == 0) {
            T_EQ(pos, total);
            break;
        }
        /* a call stops early only at the end of the stream */
        if (n < maxr && (maxb < 0 || sum < maxb))
            T_EQ(pos + sum, total);
        pos += sum;
        T_EQ(tess_cursor_position(c), pos);
        for (int64_t k = 0; k < n; k++) {
            if (na > 0 && acc[na - 1].off + acc[na - 1].len == out[k].off) {
                acc[na - 1].len += out[k].len;
            } else {
                T_CHECK(na < ne); /* more regions than the byte map has */
                acc[na++] = out[k];
            }
        }
    }
    T_EQ(na, ne);
    for (int64_t k = 0; k < ne; k++)
        region_eq(&acc[k], &exp[k], k, __LINE__);
    free(acc);
}

static void cursor_checks(const rt_type *t, int64_t count, rt_rng *r)
{
    tess_region *R;
    int64_t *P;
    int64_t nr = rt_regions(t, count, &R, &P), total = count * t->nbytes, n;
    CHECK(nr >= 0);
    tess_region *out = malloc((size_t)(nr + 2) * sizeof *out), *exp = malloc((size_t)(nr + 1) * sizeof *exp);
    CHECK(out && exp);
    tess_cursor *c = NULL;
    WHAT("cursor_create count %lld", (long long)count);
    T_OK(tess_cursor_create(t->type, count, &c));
    T_EQ(tess_cursor_position(c), 0);

    /* one unlimited call yields exactly the merged regions */
    WHAT("unlimited walk count %lld", (long long)count);
    n = -1;
    T_OK(tess_cursor_next(c, out, nr + 2, -1, &n));
    T_EQ(n, nr);
    for (int64_t k = 0; k < nr; k++)
        region_eq(&out[k], &R[k], k, __LINE__);
    T_EQ(tess_cursor_position(c), total);
    T_OK(tess_cursor_next(c, out, nr + 2, -1, &n));
    T_EQ(n, 0);

    /* walks with random limits from the start */
    for (int rep = 0; rep < 2; rep++) {
        WHAT("seek 0, count %lld", (long long)count);
        T_OK(tess_cursor_seek(c, 0));
        T_EQ(tess_cursor_position(c), 0);
        limited_walk(c, R, nr, total, r);
    }

    /* seeks to random bytes, region boundaries and around them */
    for (int rep = 0; rep < 8; rep++) {
        int64_t p;
        int x = (int)rt_int(r, 0, 9);
        if (x < 2 && nr > 0)
            p = P[rt_int(r, 0, nr)];
        else if (x < 3 && nr > 0)
            p = P[rt_int(r, 0, nr)] + rt_int(r, -1, 1);
        else if (x < 4)
            p = rt_chance(r, 50) ? 0 : total;
        else
            p = rt_int(r, 0, total);
        if (p < 0)
            p = 0;
        if (p > total)
            p = total;
        WHAT("seek to stream byte %lld of %lld (count %lld), then next unlimited", (long long)p,
             (long long)total, (long long)count);
        T_OK(tess_cursor_seek(c, p));
        T_EQ(tess_cursor_position(c), p);
        tess_region first;
        int64_t k0 = suffix_at(R, P, nr, p, &first), ne = nr - k0;
        if (ne > 0) {
            exp[0] = first;
            memcpy(exp + 1, R + k0 + 1, (size_t)(ne - 1) * sizeof *exp);
        }
        if (rt_chance(r, 50)) {
            n = -1;
            T_OK(tess_cursor_next(c, out, nr + 2, -1, &n));
            T_EQ(n, ne);
            for (int64_t k = 0; k < ne; k++)
                region_eq(&out[k], &exp[k], k, __LINE__);
            T_EQ(tess_cursor_position(c), total);
            T_OK(tess_cursor_next(c, out, 1, -1, &n));
            T_EQ(n, 0);
        } else {
            limited_walk(c, exp, ne, total, r);
        }
    }
    tess_cursor_free(c);
    free(out);
    free(exp);
    free(R);
    free(P);
}

/* --------------------------------------------------- describe, encode, decode */

static char *describe_alloc(const tess_type *t)
{
    size_t cap = 256;
    for (;;) {
        char *s = malloc(cap);
        CHECK(s);
        int rc = tess_type_describe(t, s, cap);
        if (rc == 0) {
            T_CHECK(memchr(s, '\0', cap) != NULL);
            return s;
        }
        T_EQ(rc, TESS_ERR_TRUNCATE);
        T_CHECK(memchr(s, '\0', cap) != NULL);
        free(s);
        cap *= 2;
        T_CHECK(cap <= ((size_t)1 << 26));
    }
}

static void describe_checks(const rt_type *t, char **text)
{
    WHAT("describe");
    char *full = describe_alloc(t->type);
    size_t len = strlen(full);
    T_CHECK(len > 0);
    char small[8];
    memset(small, 'X', sizeof small);
    int rc = tess_type_describe(t->type, small, sizeof small);
    T_CHECK(memchr(small, '\0', sizeof small) != NULL);
    if (len >= sizeof small) {
        T_EQ(rc, TESS_ERR_TRUNCATE);
        T_CHECK(strncmp(small, full, strlen(small)) == 0);
    } else {
        T_EQ(rc, 0);
        T_CHECK(strcmp(small, full) == 0);
    }
    char one = 'X';
    T_EQ(tess_type_describe(t->type, &one, 1), TESS_ERR_TRUNCATE);
    T_EQ(one, '\0');
    *text = full;
}

static void codec_checks(const rt_type *t, const char *text, rt_rng *r)
{
    size_t len = 0, len2 = 0;
    WHAT("encode size query");
    T_OK(tess_type_encode(t->type, NULL, 0, &len));
    T_CHECK(len > 0);
    uint8_t *buf = malloc(len + 16), *buf2 = malloc(len + 16);
    CHECK(buf && buf2);
    WHAT("encode into a buffer one byte short");
    T_EQ(tess_type_encode(t->type, buf, len - 1, &len2), TESS_ERR_TRUNCATE);
    T_EQ(len2, len);
    WHAT("encode");
    len2 = 0;
    T_OK(tess_type_encode(t->type, buf, len + 16, &len2));
    T_EQ(len2, len);

    WHAT("decode of the encoding");
    tess_type *d = NULL;
    T_OK(tess_type_decode(buf, len, &d));
    T_CHECK(d != NULL);
    T_EQ(tess_type_size(d), t->nbytes);
    T_EQ(tess_type_extent(d), t->extent);
    T_EQ(tess_type_lb(d), t->lb);
    T_EQ(tess_type_true_lb(d), t->true_lb);
    T_EQ(tess_type_true_extent(d), t->true_ub - t->true_lb);
    T_EQ(tess_type_num_regions(d), t->nregions);
    T_EQ(tess_type_depth(d), tess_type_depth(t->type));
    char *dtext = describe_alloc(d);
    if (strcmp(dtext, text) != 0) {
        fprintf(stderr, "decoded type describes as:\n%s", dtext);
        fail_at(__FILE__, __LINE__, "decoded type's describe text differs from the original's");
    }
    free(dtext);
    /* the encoding is canonical: re-encoding the decoded type gives the same bytes */
    WHAT("re-encode the decoded type");
    T_OK(tess_type_encode(d, buf2, len + 16, &len2));
    T_EQ(len2, len);
    CHECK_BYTES(buf2, buf, (int64_t)len, "re-encoding");
    /* the decoded type packs like the byte map (two instances) */
    if (t->nbytes > 0) {
        WHAT("pack with the decoded type");
        buffer src;
        buf_make(&src, t, 2, rt_u64(r));
        uint8_t *exp = expected_stream(t, &src, 2), *out = malloc((size_t)(2 * t->nbytes));
        CHECK(out);
        int64_t packed;
        T_OK(tess_pack(src.origin, 2, d, 0, out, 2 * t->nbytes, &packed));
        T_EQ(packed, 2 * t->nbytes);
        CHECK_BYTES(out, exp, 2 * t->nbytes, "pack with the decoded type");
        free(out);
        free(exp);
        free(src.mem);
    }
    tess_type_free(d);

    /* truncated encodings are rejected and leave *out alone */
    for (int rep = 0; rep < 4; rep++) {
        size_t cut = rep == 0 ? 0 : rep == 1 ? len - 1 : (size_t)rt_int(r, 0, (int64_t)len - 1);
        tess_type *sentinel = (tess_type *)&g_seed, *x = sentinel;
        WHAT("decode of the first %zu of %zu encoded bytes", cut, len);
        T_EQ(tess_type_decode(buf, cut, &x), TESS_ERR_DECODE);
        T_CHECK(x == sentinel);
        T_CHECK(tess_last_error()[0] != '\0');
    }
    free(buf);
    free(buf2);
}

/* --------------------------------------------------------------- driver */

static void check_type(const rt_type *t, rt_rng *r)
{
    WHAT("invariants");
    T_EQ(tess_type_size(t->type), t->nbytes);
    T_EQ(tess_type_extent(t->type), t->extent);
    T_EQ(tess_type_lb(t->type), t->lb);
    T_EQ(tess_type_true_lb(t->type), t->true_lb);
    T_EQ(tess_type_true_extent(t->type), t->true_ub - t->true_lb);
    T_EQ(tess_type_num_regions(t->type), t->nregions);
    T_CHECK(tess_type_depth(t->type) >= 0);
    T_CHECK(tess_type_footprint(t->type) >= 0);

    char *text;
    describe_checks(t, &text);

    /* count 0: nothing to do */
    int64_t n = -1;
    WHAT("pack count 0");
    uint8_t dummy[8];
    T_OK(tess_pack(dummy, 0, t->type, 0, dummy, 8, &n));
    T_EQ(n, 0);
    tess_cursor *c;
    WHAT("cursor count 0");
    T_OK(tess_cursor_create(t->type, 0, &c));
    tess_region reg;
    T_OK(tess_cursor_next(c, &reg, 1, -1, &n));
    T_EQ(n, 0);
    tess_cursor_free(c);

    for (int64_t count = 1; count <= 3; count++) {
        pack_checks(t, count, r);
        unpack_checks(t, count, r);
        cursor_checks(t, count, r);
    }
    /* many instances of a small type (the cursor fuses tiling instances into one loop) */
    if (t->nbytes > 0 && t->nbytes <= 1024 && t->extent <= 16384) {
        int64_t count = rt_int(r, 4, 40);
        pack_checks(t, count, r);
        unpack_checks(t, count, r);
        cursor_checks(t, count, r);
    }
    codec_checks(t, text, r);
    free(text);
    g_what[0] = '\0';
}

int main(int argc, char **argv)
{
    /* sanitized code runs about 8 times slower: the sanitizer build checks the first 1000 of
     * the 2500 types the optimized build checks, within the test's timeout on 2 loaded cores */
#ifdef __SANITIZE_ADDRESS__
    int64_t ntypes = 1000, first = 0, nmono = 0;
#else
    int64_t ntypes = 2500, first = 0, nmono = 0;
#endif
    int depth = 4, verbose = 0;
    g_seed = 20240611;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-n") && i + 1 < argc)
            ntypes = strtoll(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "-s") && i + 1 < argc)
            g_seed = strtoull(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "-i") && i + 1 < argc)
            first = strtoll(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "-d") && i + 1 < argc)
            depth = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-v"))
            verbose = 1;
        else {
            fprintf(stderr, "usage: %s [-n types] [-s seed] [-i first] [-d depth] [-v]\n", argv[0]);
            return 2;
        }
    }
    int64_t bytes = 0, overlapping = 0, empty = 0, maxdepth = 0;
    for (int64_t i = first; i < first + ntypes; i++) {
        int mono = i % 8 == 7;
        nmono += mono;
        unsigned flags = mono ? RT_MONOTONIC | RT_NONNEG | RT_NO_EMPTY : 0;
        g_index = i;
        g_rt = NULL;
        rt_rng r;
        rt_seed(&r, rt_mix(g_seed ^ rt_mix((uint64_t)i)));
        rt_type *t = rt_random(&r, depth, flags);
        if (!t) {
            fprintf(stderr, "seed %llu type #%lld: generator failed: %s\n",
                    (unsigned long long)g_seed, (long long)i, rt_error());
            return 1;
        }
        g_rt = t;
        if (verbose)
            fprintf(stderr, "#%lld: %s\n", (long long)i, t->recipe);
        if (mono) { /* the generator's promises for filetypes */
            WHAT("generator flags RT_MONOTONIC | RT_NONNEG | RT_NO_EMPTY");
            T_CHECK(t->nbytes > 0 && t->monotonic && t->lb >= 0 && t->true_lb >= 0);
            T_CHECK(t->true_ub - t->true_lb <= t->extent);
            for (int64_t k = 0; k < t->nbytes; k++)
                T_CHECK(t->offsets[k] >= 0 && (k == 0 || t->offsets[k] > t->offsets[k - 1]));
            T_CHECK(!rt_overlaps(t, 3));
        }
        check_type(t, &r);
        bytes += t->nbytes;
        overlapping += t->overlap;
        empty += t->nbytes == 0;
        if (t->depth > maxdepth)
            maxdepth = t->depth;
        rt_free(t);
    }
    printf("test_type_oracle: %lld random types and %lld filetypes OK (seed %llu, first %lld, "
           "depth <= %lld, %lld data bytes, %lld overlapping, %lld empty)\n",
           (long long)(ntypes - nmono), (long long)nmono, (unsigned long long)g_seed, (long long)first,
           (long long)maxdepth, (long long)bytes, (long long)overlapping, (long long)empty);
    return 0;
}
