/*
 * test_pack_kernels.c - every pack kernel (src/type/plan.h) against a brute-force byte map.
 *
 * Each shape family is built twice: as a Tessera type, and as the list of byte offsets of its
 * typemap enumerated straight from the constructor's definition (the oracle, which never looks
 * at Tessera). The test asserts which kernel the type got, so that a change in the choice
 * cannot silently leave a kernel untested, then packs and unpacks several instances: the whole
 * stream, parts from random data offsets with random lengths, and the stream in random chunks,
 * checking the bytes around the output and, for unpack, every byte of the typed buffer.
 *
 *   test_pack_kernels [-n rounds] [-s seed]
 */
#include "check.h"
#include "type/plan.h"

#include <string.h>
#include <unistd.h>

static uint64_t rng;
static int64_t rnd(int64_t lo, int64_t hi)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return lo + (int64_t)(rng % (uint64_t)(hi - lo + 1));
}

/* The oracle: offsets of one instance's data bytes in typemap order, and the extent. */
typedef struct {
    int64_t *off, n, cap;
    int64_t extent;
} bytemap;

static void add_bytes(bytemap *m, int64_t at, int64_t len)
{
    if (m->n + len > m->cap) {
        m->cap = 2 * (m->n + len);
        m->off = realloc(m->off, (size_t)m->cap * sizeof *m->off);
        CHECK(m->off);
    }
    for (int64_t k = 0; k < len; k++)
        m->off[m->n++] = at + k;
}

/* A random element type, its size and its C alignment. */
static tess_type *element_aligned(int64_t *size, int64_t *align)
{
    static tess_type *const *el[] = {&TESS_INT8, &TESS_INT16, &TESS_INT32, &TESS_DOUBLE};
    static const int64_t al[] = {_Alignof(int8_t), _Alignof(int16_t), _Alignof(int32_t),
                                 _Alignof(double)};
    int i = (int)rnd(0, 3);
    *size = tess_type_size(*el[i]);
    *align = al[i];
    return *el[i];
}

static tess_type *element(int64_t *size)
{
    int64_t align;
    return element_aligned(size, &align);
}

/* ------------------------------------------------------------ the families */

enum {
    K_CURSOR,
    K_RUNS,
    K_MOVES_SAME,
    K_MOVES_MIXED,
    K_BLOCKS_SHORT,
    K_BLOCKS_INDEXED,
    K_BLOCKS_BLOCK,
    NKERNELS
};
static const char *const kernel_name[NKERNELS] = {
    "cursor", "runs", "moves (one length)", "moves (mixed)", "blocks (indexed, 16-byte moves)",
    "blocks (indexed, long blocks)", "blocks (blockindexed)"};

static int kernel_of(const tess_type *t)
{
    const tessi_plan *p = t->plan;
    if (!p)
        return K_CURSOR;
    switch (p->kind) {
    case TESSI_PLAN_RUNS: return K_RUNS;
    case TESSI_PLAN_MOVES: return p->len ? K_MOVES_SAME : K_MOVES_MIXED;
    default:
        if (p->leaf->kind == TESSI_BLOCKINDEXED)
            return K_BLOCKS_BLOCK;
        return p->len <= 128 ? K_BLOCKS_SHORT : K_BLOCKS_INDEXED; /* pack.c's limit */
    }
}

/* vector(n, bl, st) of an element, st possibly negative (hvector in bytes) */
static tess_type *f_vector(bytemap *m)
{
    int64_t e, n = rnd(17, 400), bl = rnd(1, 9), st = rnd(bl + 1, bl + 5) * (rnd(0, 3) ? 1 : -1);
    tess_type *el = element(&e), *t;
    CHECK_OK(tess_type_hvector(n, bl, st * e, el, &t));
    for (int64_t b = 0; b < n; b++)
        add_bytes(m, b * st * e, bl * e);
    m->extent = ((n - 1) * (st < 0 ? -st : st) + bl) * e;
    return t;
}

/* vector of byte blocks of any length up to 80: every copy width of the row loops, the fixed
 * sizes, the 16-byte head and the tail move after it, and the longer blocks */
static tess_type *f_byte_vector(bytemap *m)
{
    int64_t n = rnd(17, 200), bl = rnd(1, 80), st = rnd(bl + 1, bl + 9) * (rnd(0, 3) ? 1 : -1);
    tess_type *t;
    CHECK_OK(tess_type_hvector(n, bl, st, TESS_INT8, &t));
    for (int64_t b = 0; b < n; b++)
        add_bytes(m, b * st, bl);
    m->extent = (n - 1) * (st < 0 ? -st : st) + bl;
    return t;
}

/* a struct of 2..4 byte arrays of 1..40 bytes, apart: moves of mixed lengths, each copied
 * over a row of instances with the widths of its length */
static tess_type *f_byte_struct(bytemap *m)
{
    int n = (int)rnd(2, 4);
    int64_t bl[4], dp[4], at = rnd(0, 8);
    tess_type *ts[4] = {TESS_INT8, TESS_INT8, TESS_INT8, TESS_INT8}, *t;
    for (int k = 0; k < n; k++) {
        bl[k] = rnd(1, 40);
        dp[k] = at;
        add_bytes(m, at, bl[k]);
        at += bl[k] + rnd(1, 9);
    }
    CHECK_OK(tess_type_struct(n, bl, dp, ts, &t));
    m->extent = dp[n - 1] + bl[n - 1] - dp[0];
    return t;
}

/* vector of blocks of 256 bytes or more (unpacked with streaming stores into a destination of
 * the streaming size), stride possibly negative */
static tess_type *f_long_vector(bytemap *m)
{
    int64_t e;
    tess_type *el = element(&e), *t;
    int64_t n = rnd(17, 60), bl = (rnd(256, 700) + e - 1) / e;
    int64_t st = rnd(bl + 1, bl + 40) * (rnd(0, 3) ? 1 : -1);
    CHECK_OK(tess_type_hvector(n, bl, st * e, el, &t));
    for (int64_t b = 0; b < n; b++)
        add_bytes(m, b * st * e, bl * e);
    m->extent = ((n - 1) * (st < 0 ? -st : st) + bl) * e;
    return t;
}

/* vector(mo, ob, os) of vector(ic, ib, is) of an element: a nested vector */
static tess_type *f_nested(bytemap *m)
{
    int64_t e, ic = rnd(2, 4), ib = rnd(1, 3), is = ib + rnd(1, 3), mo = rnd(17, 200),
               ob = rnd(1, 3), os = ob + rnd(1, 3);
    tess_type *el = element(&e), *in, *t;
    CHECK_OK(tess_type_vector(ic, ib, is, el, &in));
    CHECK_OK(tess_type_vector(mo, ob, os, in, &t));
    tess_type_free(in);
    int64_t iext = ((ic - 1) * is + ib) * e;
    for (int64_t i = 0; i < mo; i++)
        for (int64_t j = 0; j < ob; j++)
            for (int64_t k = 0; k < ic; k++)
                add_bytes(m, (i * os + j) * iext + k * is * e, ib * e);
    m->extent = ((mo - 1) * os + ob) * iext;
    return t;
}

/* a 3-D subarray, C order */
static tess_type *f_subarray(bytemap *m)
{
    int64_t e, g[3], s[3], st[3];
    tess_type *el = element(&e), *t;
    for (int d = 0; d < 3; d++) {
        g[d] = rnd(2, 12);
        s[d] = rnd(1, g[d]);
        st[d] = rnd(0, g[d] - s[d]);
    }
    CHECK_OK(tess_type_subarray(3, g, s, st, TESS_ORDER_C, el, &t));
    for (int64_t z = 0; z < s[0]; z++)
        for (int64_t y = 0; y < s[1]; y++)
            add_bytes(m, (((st[0] + z) * g[1] + st[1] + y) * g[2] + st[2]) * e, s[2] * e);
    m->extent = g[0] * g[1] * g[2] * e;
    return t;
}

/* a struct of 2..6 predefined members at random displacements (padded extent) */
static tess_type *f_struct(bytemap *m)
{
    int n = (int)rnd(2, 6);
    int64_t bl[6], dp[6], lo = 0, hi = 0, align = 1;
    tess_type *ts[6], *t;
    for (int k = 0; k < n; k++) {
        int64_t e, a;
        ts[k] = element_aligned(&e, &a);
        bl[k] = rnd(1, 3);
        dp[k] = rnd(-40, 120);
        add_bytes(m, dp[k], bl[k] * e);
        lo = k == 0 || dp[k] < lo ? dp[k] : lo;
        hi = k == 0 || dp[k] + bl[k] * e > hi ? dp[k] + bl[k] * e : hi;
        align = a > align ? a : align;
    }
    CHECK_OK(tess_type_struct(n, bl, dp, ts, &t));
    m->extent = (hi - lo + align - 1) / align * align;
    return t;
}

/* indexed with random blocks (gaps, overlaps, negative displacements) of an element */
static tess_type *f_indexed(bytemap *m)
{
    int64_t e, n = rnd(17, 300), bl[300], dp[300], lo = 0, hi = 0;
    tess_type *el = element(&e), *t;
    for (int64_t b = 0; b < n; b++) {
        bl[b] = rnd(1, 20);
        dp[b] = rnd(-50, 3000);
        add_bytes(m, dp[b] * e, bl[b] * e);
        lo = b == 0 || dp[b] < lo ? dp[b] : lo;
        hi = b == 0 || dp[b] + bl[b] > hi ? dp[b] + bl[b] : hi;
    }
    CHECK_OK(tess_type_indexed(n, bl, dp, el, &t));
    m->extent = (hi - lo) * e;
    return t;
}

/* blockindexed with random displacements */
static tess_type *f_blockindexed(bytemap *m)
{
    int64_t e, n = rnd(17, 300), bl = rnd(1, 9), dp[300], lo = 0, hi = 0;
    tess_type *el = element(&e), *t;
    for (int64_t b = 0; b < n; b++) {
        dp[b] = rnd(-50, 3000);
        add_bytes(m, dp[b] * e, bl * e);
        lo = b == 0 || dp[b] < lo ? dp[b] : lo;
        hi = b == 0 || dp[b] + bl > hi ? dp[b] + bl : hi;
    }
    CHECK_OK(tess_type_blockindexed(n, bl, dp, el, &t));
    m->extent = (hi - lo) * e;
    return t;
}

/* contiguous(c) of one of the shapes above, resized to a random extent */
static tess_type *f_resized(bytemap *m, tess_type *(*inner)(bytemap *))
{
    tess_type *in = inner(m), *c, *t;
    int64_t c_count = rnd(1, 3), n = m->n, ext = m->extent;
    CHECK_OK(tess_type_contiguous(c_count, in, &c));
    for (int64_t i = 1; i < c_count; i++)
        for (int64_t k = 0; k < n; k++)
            add_bytes(m, m->off[k] + i * ext, 1);
    int64_t lb = rnd(-64, 64), extent = c_count * ext + rnd(-ext / 2, 64);
    CHECK_OK(tess_type_resized(c, lb, extent < 0 ? 0 : extent, &t));
    m->extent = extent < 0 ? 0 : extent;
    tess_type_free(in);
    tess_type_free(c);
    return t;
}

/* contiguous elements: one dense region, a single copy (streamed when it is large) */
static tess_type *f_contig(bytemap *m)
{
    int64_t e, n = rnd(1, 3000);
    tess_type *el = element(&e), *t;
    CHECK_OK(tess_type_contiguous(n, el, &t));
    add_bytes(m, 0, n * e);
    m->extent = n * e;
    return t;
}

/* a struct of a long vector and a char: no kernel, the cursor packs it */
static tess_type *f_fallback(bytemap *m)
{
    tess_type *v, *t;
    int64_t n = rnd(17, 100);
    CHECK_OK(tess_type_vector(n, 1, 2, TESS_INT32, &v));
    tess_type *ts[2] = {v, TESS_CHAR};
    int64_t bl[2] = {1, 1}, dp[2] = {0, 8 * n};
    CHECK_OK(tess_type_struct(2, bl, dp, ts, &t));
    tess_type_free(v);
    for (int64_t b = 0; b < n; b++)
        add_bytes(m, 8 * b, 4);
    add_bytes(m, 8 * n, 1);
    m->extent = (8 * n + 1 + _Alignof(int32_t) - 1) / _Alignof(int32_t) * _Alignof(int32_t);
    return t;
}

static tess_type *f_resized_vector(bytemap *m) { return f_resized(m, f_vector); }
static tess_type *f_resized_struct(bytemap *m) { return f_resized(m, f_struct); }
static tess_type *f_resized_indexed(bytemap *m) { return f_resized(m, f_indexed); }

static const struct {
    const char *name;
    tess_type *(*make)(bytemap *);
    int kernel; /* -1: depends on the parameters */
} families[] = {
    {"contiguous", f_contig, -1},
    {"vector", f_vector, K_RUNS},
    {"vector of long blocks", f_long_vector, K_RUNS},
    {"vector of byte blocks", f_byte_vector, K_RUNS},
    {"struct of byte arrays", f_byte_struct, -1},
    {"nested vector", f_nested, -1},
    {"subarray", f_subarray, -1},
    {"struct", f_struct, -1},
    {"indexed", f_indexed, -1},
    {"blockindexed", f_blockindexed, -1},
    {"resized contig of vector", f_resized_vector, -1},
    {"resized contig of struct", f_resized_struct, -1},
    {"resized contig of indexed", f_resized_indexed, -1},
    {"struct of a vector", f_fallback, K_CURSOR},
};

/* ---------------------------------------------------------------- checking */

#define GUARD 64

static int64_t kernel_hits[NKERNELS];

static void check_shape(int fam, int round)
{
    bytemap m = {0};
    tess_type *t = families[fam].make(&m);
    int kernel = kernel_of(t);
    kernel_hits[kernel]++;
    if (families[fam].kernel >= 0 && kernel != families[fam].kernel) {
        fprintf(stderr, "%s (round %d): kernel %s, expected %s\n", families[fam].name, round,
                kernel_name[kernel], kernel_name[families[fam].kernel]);
        CHECK(0);
    }
    CHECK(tess_type_size(t) == m.n && tess_type_extent(t) == m.extent);
    /* now and then more instances of a small type than a kernel's chunk of a row (128) */
    int64_t count = rnd(0, 3) == 0 && m.n <= 64 ? rnd(129, 400) : rnd(1, 5);
    int64_t total = count * m.n, lo = 0, hi = 0;
    for (int64_t i = 0; i < count; i++)
        for (int64_t k = 0; k < m.n; k++) {
            int64_t o = m.off[k] + i * m.extent;
            lo = (i == 0 && k == 0) || o < lo ? o : lo;
            hi = (i == 0 && k == 0) || o + 1 > hi ? o + 1 : hi;
        }
    int64_t span = hi - lo + 2 * GUARD;
    unsigned char *src = malloc((size_t)span), *dst = malloc((size_t)span),
                  *exp_dst = malloc((size_t)span), *exp = malloc((size_t)total),
                  *out = malloc((size_t)total + GUARD);
    CHECK(src && dst && exp && out && exp_dst);
    for (int64_t i = 0; i < span; i++)
        src[i] = (unsigned char)rnd(0, 255);
    unsigned char *origin = src + GUARD - lo, *dorigin = dst + GUARD - lo;
    for (int64_t i = 0; i < count; i++)
        for (int64_t k = 0; k < m.n; k++)
            exp[i * m.n + k] = origin[m.off[k] + i * m.extent];

    for (int rep = 0; rep < 8; rep++) {
        /* rep 0: the whole stream; then a random part; then random chunks */
        int64_t d = rep == 0 ? 0 : rnd(0, total), len = rep == 0 ? total : rnd(0, total - d);
        int64_t got;
        memset(out, 0xEE, (size_t)total + GUARD);
        if (rep < 6) {
            CHECK_OK(tess_pack(origin, count, t, d, out, len, &got));
            CHECK(got == len && memcmp(out, exp + d, (size_t)len) == 0);
            for (int64_t g = len; g < len + GUARD; g++)
                CHECK(out[g] == 0xEE);
        } else {
            for (d = 0; d < total; d += got) {
                CHECK_OK(tess_pack(origin, count, t, d, out + d, rnd(1, total / 4 + 1), &got));
                CHECK(got > 0);
            }
            CHECK(memcmp(out, exp, (size_t)total) == 0);
            d = 0;
            len = total;
        }
        /* unpack the same part into a buffer of known bytes: only its data bytes change, and
         * where the typemap repeats a byte the later one wins */
        memset(dst, 0x5A, (size_t)span);
        memset(exp_dst, 0x5A, (size_t)span);
        for (int64_t s = d; s < d + len; s++) {
            int64_t i = s / m.n, k = s % m.n;
            exp_dst[m.off[k] + i * m.extent - lo + GUARD] = exp[s];
        }
        CHECK_OK(tess_unpack(exp + d, len, dorigin, count, t, d, &got));
        CHECK(got == len && memcmp(dst, exp_dst, (size_t)span) == 0);
    }
    free(src);
    free(dst);
    free(exp_dst);
    free(exp);
    free(out);
    free(m.off);
    tess_type_free(t);
}

int main(int argc, char **argv)
{
    int64_t rounds = 300;
    uint64_t seed = 1;
    test_args(argc, argv, &rounds, &seed);
    rng = seed * 0x9E3779B97F4A7C15ull | 1;
    for (int r = 0; r < rounds; r++) {
        /* every other round, transfers of 64 bytes and more take the paths that only those
         * larger than the caches take by default: streaming stores for dense copies and
         * unpacks of long runs, page-sized chunks for unpacks of mixed moves */
        tessi_pack_stream_at(r % 2 ? 64 : INT64_MAX);
        for (int f = 0; f < (int)(sizeof families / sizeof families[0]); f++)
            check_shape(f, r);
    }
    printf("test_pack_kernels: %lld rounds of %d shape families (seed %llu); kernels:",
           (long long)rounds,
           (int)(sizeof families / sizeof families[0]), (unsigned long long)seed);
    for (int k = 0; k < NKERNELS; k++) {
        printf(" %s %lld%s", kernel_name[k], (long long)kernel_hits[k],
               k + 1 < NKERNELS ? "," : "\n");
        CHECK(kernel_hits[k] >= rounds / 10); /* every kernel ran */
    }
    return 0;
}
