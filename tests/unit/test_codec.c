/*
 * test_codec.c - tess_type_encode / tess_type_decode.
 *
 * Round trips over hand-picked and random nested types (all constructors, negative
 * displacements and strides, resized bounds, zero-length blocks, empty types, shared subtrees):
 * the decoded type must have the same size, bounds, region count and typemap (compared region
 * by region, walked with a cursor over two instances so the extent is exercised too), and
 * encoding it again must give the same bytes. Every strict prefix of an encoding is refused,
 * truncated output buffers report the size needed, and hand-made hostile encodings (huge
 * counts, deep nesting, forward references, overflowing displacements) are refused with
 * TESS_ERR_DECODE and a message.
 */
#include "check.h"
#include "type/type.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ typemaps */

typedef struct {
    tess_region *r;
    int64_t n, cap;
} rlist;

static void rl_add(rlist *l, int64_t off, int64_t len)
{
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

/* The regions of `count` instances of t in typemap order (adjacent ones merged). */
static rlist walk(const tess_type *t, int64_t count)
{
    rlist l = {0};
    tess_cursor *c;
    tess_region buf[16];
    int64_t n;
    CHECK_OK(tess_cursor_create(t, count, &c));
    for (;;) {
        CHECK_OK(tess_cursor_next(c, buf, 16, -1, &n));
        if (n == 0)
            break;
        for (int64_t i = 0; i < n; i++)
            rl_add(&l, buf[i].off, buf[i].len);
    }
    tess_cursor_free(c);
    return l;
}

static void check_same_type(const tess_type *a, const tess_type *b)
{
    CHECK(tess_type_size(a) == tess_type_size(b));
    CHECK(tess_type_extent(a) == tess_type_extent(b));
    CHECK(tess_type_lb(a) == tess_type_lb(b));
    CHECK(tess_type_true_lb(a) == tess_type_true_lb(b));
    CHECK(tess_type_true_extent(a) == tess_type_true_extent(b));
    CHECK(tess_type_num_regions(a) == tess_type_num_regions(b));
    rlist x = walk(a, 2), y = walk(b, 2);
    CHECK(x.n == y.n);
    for (int64_t i = 0; i < x.n; i++)
        CHECK(x.r[i].off == y.r[i].off && x.r[i].len == y.r[i].len);
    free(x.r);
    free(y.r);
}

/* ------------------------------------------------------------------ round trip */

static int64_t roundtrips, prefixes_refused;

/* Encode t, check the size protocol, decode, compare, and refuse every truncation. */
static void roundtrip(const tess_type *t)
{
    size_t len = 0, len2 = 0, len3 = 0;
    CHECK_OK(tess_type_encode(t, NULL, 0, &len));
    CHECK(len > 8);
    unsigned char *buf = malloc(len + 1), *again = malloc(len + 1);
    CHECK(buf && again);
    CHECK_ERR(tess_type_encode(t, buf, len - 1, &len2), TESS_ERR_TRUNCATE);
    CHECK(len2 == len);
    CHECK_ERR(tess_type_encode(t, buf, 0, &len2), TESS_ERR_TRUNCATE);
    CHECK_OK(tess_type_encode(t, buf, len + 1, &len2));
    CHECK(len2 == len);

    tess_type *u = NULL;
    CHECK_OK(tess_type_decode(buf, len, &u));
    check_same_type(t, u);
    /* decoding normalizes what was already normal: the encoding is a fixed point */
    CHECK_OK(tess_type_encode(u, again, len + 1, &len3));
    CHECK(len3 == len && memcmp(buf, again, len) == 0);
    tess_type_free(u);

    /* every strict prefix is incomplete; one byte more is trailing garbage */
    size_t step = len <= 600 ? 1 : len / 300;
    for (size_t cut = 0; cut < len; cut += step) {
        u = (tess_type *)&roundtrips;
        CHECK_ERR(tess_type_decode(buf, cut, &u), TESS_ERR_DECODE);
        CHECK(u == (tess_type *)&roundtrips);
        prefixes_refused++;
    }
    buf[len] = 0;
    CHECK_ERR(tess_type_decode(buf, len + 1, &u), TESS_ERR_DECODE);
    free(buf);
    free(again);
    roundtrips++;
}

/* ------------------------------------------------------------- random types */

static uint64_t rng = 0x2545f4914f6cdd1dull;
static int64_t rnd(int64_t n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (int64_t)(rng % (uint64_t)n);
}
static int64_t between(int64_t lo, int64_t hi) { return lo + rnd(hi - lo + 1); }

static tess_type *random_builtin(void)
{
    tess_type *const b[] = {TESS_BYTE,  TESS_CHAR,   TESS_INT8,   TESS_INT16,
                            TESS_INT32, TESS_INT64,  TESS_UINT8,  TESS_UINT16,
                            TESS_UINT32, TESS_UINT64, TESS_FLOAT, TESS_DOUBLE};
    return b[rnd(12)];
}

/*
 * A random type of at most `depth` levels built with every constructor. Counts stay small
 * (a few blocks of a few instances per level) so a walk of the typemap stays cheap.
 */
static tess_type *random_type(int depth)
{
    if (depth == 0 || rnd(5) == 0)
        return random_builtin();
    tess_type *c = random_type(depth - 1), *t = NULL, *kids[3] = {NULL, NULL, NULL};
    int64_t n = between(1, 4), bl[4], d[4], blen = between(0, 3);
    for (int k = 0; k < 4; k++) {
        bl[k] = between(0, 3);
        d[k] = between(-6, 6);
    }
    switch (rnd(11)) {
    case 0:
        CHECK_OK(tess_type_contiguous(between(0, 4), c, &t));
        break;
    case 1:
        CHECK_OK(tess_type_vector(n, blen, between(-4, 4), c, &t));
        break;
    case 2:
        CHECK_OK(tess_type_hvector(n, blen, between(-40, 40), c, &t));
        break;
    case 3:
        CHECK_OK(tess_type_indexed(n, bl, d, c, &t));
        break;
    case 4:
        for (int k = 0; k < 4; k++)
            d[k] *= 7;
        CHECK_OK(tess_type_hindexed(n, bl, d, c, &t));
        break;
    case 5:
        CHECK_OK(tess_type_blockindexed(n, blen, d, c, &t));
        break;
    case 6:
        for (int k = 0; k < 4; k++)
            d[k] *= 5;
        CHECK_OK(tess_type_hblockindexed(n, blen, d, c, &t));
        break;
    case 7: {
        int64_t m = between(1, 3);
        kids[0] = c;
        for (int k = 1; k < m; k++)
            kids[k] = random_type(depth - 1);
        for (int k = 0; k < m; k++)
            d[k] *= 9;
        CHECK_OK(tess_type_struct(m, bl, d, kids, &t));
        for (int k = 1; k < m; k++)
            tess_type_free(kids[k]);
        break;
    }
    case 8:
        CHECK_OK(tess_type_resized(c, between(-20, 20), between(0, 40), &t));
        break;
    case 9: {
        int64_t sizes[2] = {between(1, 4), between(1, 4)}, sub[2], st[2];
        for (int k = 0; k < 2; k++) {
            sub[k] = between(1, sizes[k]);
            st[k] = between(0, sizes[k] - sub[k]);
        }
        CHECK_OK(tess_type_subarray(2, sizes, sub, st, (int)rnd(2), c, &t));
        break;
    }
    default: {
        int64_t g[2] = {between(1, 5), between(1, 5)};
        int dist[2] = {TESS_DISTRIBUTE_CYCLIC, TESS_DISTRIBUTE_BLOCK}, darg[2] = {2, -1};
        int ps[2] = {2, 2};
        CHECK_OK(tess_type_darray(4, (int)rnd(4), 2, g, dist, darg, ps, (int)rnd(2), c, &t));
        break;
    }
    }
    tess_type_free(c);
    return t;
}

/* ------------------------------------------------------------- fixed types */

static void fixed_types(void)
{
    tess_type *t, *u, *v, *w;

    for (unsigned i = 0; i < 12; i++) {
        tess_type *const b[] = {TESS_BYTE,  TESS_CHAR,   TESS_INT8,   TESS_INT16,
                                TESS_INT32, TESS_INT64,  TESS_UINT8,  TESS_UINT16,
                                TESS_UINT32, TESS_UINT64, TESS_FLOAT, TESS_DOUBLE};
        unsigned char buf[16];
        size_t len;
        roundtrip(b[i]);
        CHECK_OK(tess_type_encode(b[i], buf, sizeof buf, &len));
        CHECK_OK(tess_type_decode(buf, len, &t));
        CHECK(t == b[i]); /* predefined types decode to themselves */
    }

    /* empty types, with and without bounds of their own */
    CHECK_OK(tess_type_contiguous(0, TESS_DOUBLE, &t));
    roundtrip(t);
    CHECK_OK(tess_type_resized(t, -16, 48, &u));
    roundtrip(u);
    tess_type_free(t);
    tess_type_free(u);

    /* a vector with a negative stride, resized to a negative lower bound */
    CHECK_OK(tess_type_vector(5, 2, -3, TESS_INT32, &t));
    roundtrip(t);
    CHECK_OK(tess_type_resized(t, -100, 7, &u));
    roundtrip(u);
    tess_type_free(t);

    /* a struct of mixed types at negative displacements, with a zero-length block */
    int64_t bl[4] = {2, 0, 3, 1}, d[4] = {-40, 8, 16, -3};
    tess_type *kids[4] = {TESS_DOUBLE, TESS_INT16, u, TESS_CHAR};
    CHECK_OK(tess_type_struct(4, bl, d, kids, &v));
    roundtrip(v);
    tess_type_free(u);

    /* vector of that struct, an indexed of the vector, and a resized of it all */
    CHECK_OK(tess_type_hvector(3, 2, -200, v, &t));
    roundtrip(t);
    int64_t ibl[3] = {1, 2, 1}, id[3] = {5, -2, 9};
    CHECK_OK(tess_type_indexed(3, ibl, id, t, &u));
    roundtrip(u);
    CHECK_OK(tess_type_resized(u, 3, 5, &w));
    roundtrip(w);
    tess_type_free(t);
    tess_type_free(u);
    tess_type_free(v);
    tess_type_free(w);

    /* the same subtree under two struct members is encoded once (REF) and shared again */
    CHECK_OK(tess_type_vector(100, 1, 3, TESS_DOUBLE, &v));
    int64_t sbl[2] = {1, 2}, sd[2] = {0, 1 << 20};
    kids[0] = v;
    CHECK_OK(tess_type_resized(v, 0, 4096, &kids[1]));
    CHECK_OK(tess_type_struct(2, sbl, sd, kids, &t));
    roundtrip(t);
    tess_type_free(kids[1]);
    tess_type_free(v);
    tess_type_free(t);

    /* a darray whose every dimension has a short last block: its levels share subtrees */
    int64_t g[4] = {101, 53, 29, 17};
    int dist[4] = {TESS_DISTRIBUTE_CYCLIC, TESS_DISTRIBUTE_CYCLIC, TESS_DISTRIBUTE_CYCLIC,
                   TESS_DISTRIBUTE_BLOCK};
    int darg[4] = {3, 2, 4, -1}, ps[4] = {2, 3, 2, 2};
    CHECK_OK(tess_type_darray(24, 17, 4, g, dist, darg, ps, TESS_ORDER_C, TESS_INT32, &t));
    size_t len;
    CHECK_OK(tess_type_encode(t, NULL, 0, &len));
    CHECK(len < 1024); /* O(ndims) nodes, not 2^ndims copies */
    roundtrip(t);
    tess_type_free(t);

    /* a huge regular type: a 3-D subarray of a 10^4 cube of doubles */
    int64_t cube[3] = {10000, 10000, 10000}, sub[3] = {100, 200, 300}, st[3] = {1, 2, 3};
    CHECK_OK(tess_type_subarray(3, cube, sub, st, TESS_ORDER_FORTRAN, TESS_DOUBLE, &t));
    CHECK_OK(tess_type_encode(t, NULL, 0, &len));
    CHECK(len < 256);
    tess_type *back;
    unsigned char *buf = malloc(len);
    CHECK(buf);
    CHECK_OK(tess_type_encode(t, buf, len, &len));
    CHECK_OK(tess_type_decode(buf, len, &back));
    CHECK(tess_type_size(back) == tess_type_size(t));
    CHECK(tess_type_extent(back) == tess_type_extent(t));
    CHECK(tess_type_num_regions(back) == tess_type_num_regions(t));
    CHECK(tess_type_footprint(back) == tess_type_footprint(t));
    free(buf);
    tess_type_free(back);
    tess_type_free(t);

    /* the deepest type allowed: TESSI_MAX_DEPTH struct levels */
    t = tess_type_ref(TESS_INT32);
    for (int level = 0; level < TESSI_MAX_DEPTH; level++) {
        int64_t b2[2] = {1, 1}, d2[2] = {0, 1000 + level};
        tess_type *k2[2] = {t, TESS_CHAR};
        CHECK_OK(tess_type_struct(2, b2, d2, k2, &u));
        tess_type_free(t);
        t = u;
    }
    CHECK(tess_type_depth(t) == TESSI_MAX_DEPTH);
    roundtrip(t);
    tess_type_free(t);
}

/* ------------------------------------------------------------- hostile input */

typedef struct {
    unsigned char b[8192];
    size_t n;
} wire;

static void w_u8(wire *w, unsigned v)
{
    CHECK(w->n < sizeof w->b);
    w->b[w->n++] = (unsigned char)v;
}
static void w_i64(wire *w, int64_t v)
{
    for (int i = 0; i < 8; i++)
        w_u8(w, (unsigned)((uint64_t)v >> (8 * i)) & 0xff);
}
static void w_header(wire *w)
{
    w->n = 0;
    w_u8(w, 'T'), w_u8(w, 'S'), w_u8(w, 'T'), w_u8(w, 'Y');
    w_u8(w, 2), w_u8(w, 0), w_u8(w, 0), w_u8(w, 0);
}
/* A composite node's fixed fields (alignment 1). */
static void w_node(wire *w, unsigned tag, int64_t lb, int64_t extent, int64_t count,
                   int64_t disp0)
{
    w_u8(w, tag);
    w_u8(w, 1);
    w_i64(w, lb);
    w_i64(w, extent);
    w_i64(w, count);
    w_i64(w, disp0);
}

static void refuse(const wire *w, const char *why)
{
    tess_type *t = NULL;
    int rc = tess_type_decode(w->b, w->n, &t);
    if (rc != TESS_ERR_DECODE || !tess_last_error()[0] || t) {
        fprintf(stderr, "hostile input (%s) gave %d: %s\n", why, rc, tess_last_error());
        CHECK(0);
    }
}

static void hostile(void)
{
    wire w;
    tess_type *t;
    const int64_t big = INT64_C(1) << 60;

    /* a valid baseline: contig of 4 doubles */
    w_header(&w);
    w_node(&w, 1, 0, 32, 4, 0);
    w_u8(&w, 0), w_u8(&w, 11);
    CHECK_OK(tess_type_decode(w.b, w.n, &t));
    CHECK(tess_type_size(t) == 32 && tess_type_extent(t) == 32);
    tess_type_free(t);

    w.b[0] = 'X';
    refuse(&w, "bad magic");
    w.b[0] = 'T';
    w.b[4] = 3;
    refuse(&w, "future version");
    w.b[4] = 1;
    refuse(&w, "version 1 (no alignments)");
    w.b[4] = 2;
    w.b[9] = 0;
    refuse(&w, "alignment 0");
    w.b[9] = 12;
    refuse(&w, "alignment not a power of 2");
    w.b[9] = 8;
    CHECK_OK(tess_type_decode(w.b, w.n, &t));
    CHECK(tess_type_size(t) == 32);
    tess_type_free(t);
    w.b[9] = 1;
    w.b[7] = 1;
    refuse(&w, "reserved bytes");
    w.b[7] = 0;
    refuse(&(wire){.n = 3, .b = "TST"}, "shorter than a header");

    w_header(&w);
    w_u8(&w, 7);
    refuse(&w, "unknown tag");
    w_header(&w);
    w_u8(&w, 0), w_u8(&w, 12);
    refuse(&w, "unknown builtin");
    w_header(&w);
    w_u8(&w, 6), w_i64(&w, 0);
    refuse(&w, "reference with nothing before it");

    /* a struct that refers to itself */
    w_header(&w);
    w_node(&w, 5, 0, 8, 1, 0);
    w_i64(&w, 1), w_i64(&w, 0);
    w_u8(&w, 6), w_i64(&w, 0);
    refuse(&w, "self reference");

    /* counts claiming far more entries than the bytes present */
    w_header(&w);
    w_node(&w, 4, 0, 8, big, 0);
    w_i64(&w, 1), w_i64(&w, 0), w_u8(&w, 0), w_u8(&w, 0);
    refuse(&w, "indexed count 2^60");
    w_header(&w);
    w_node(&w, 5, 0, 8, INT64_MAX, 0);
    refuse(&w, "struct count INT64_MAX");
    w_header(&w);
    w_node(&w, 3, 0, 8, big, 0);
    w_i64(&w, 1);
    refuse(&w, "blockindexed count 2^60");
    w_header(&w);
    w_node(&w, 4, 0, 8, -1, 0);
    refuse(&w, "negative count");

    /* a contig of 2^60 doubles, of 2^60 of those: the size overflows */
    w_header(&w);
    w_node(&w, 1, 0, 0, big, 0);
    w_node(&w, 1, 0, 0, big, 0);
    w_u8(&w, 0), w_u8(&w, 11);
    refuse(&w, "size overflow");

    /* a displacement that overflows when disp0 is added */
    w_header(&w);
    w_node(&w, 3, 0, 8, 1, INT64_MAX);
    w_i64(&w, 1), w_i64(&w, 1);
    w_u8(&w, 0), w_u8(&w, 0);
    refuse(&w, "displacement overflow");

    /* negative blocklength, negative extent, lb + extent overflow */
    w_header(&w);
    w_node(&w, 2, 0, 8, 2, 0);
    w_i64(&w, -1), w_i64(&w, 8);
    w_u8(&w, 0), w_u8(&w, 11);
    refuse(&w, "negative blocklength");
    w_header(&w);
    w_node(&w, 2, 0, 8, INT64_MAX, 0);
    w_i64(&w, 0), w_i64(&w, 8);
    w_u8(&w, 0), w_u8(&w, 11);
    refuse(&w, "2^63 empty blocks");
    w_header(&w);
    w_node(&w, 1, 0, -8, 1, 0);
    w_u8(&w, 0), w_u8(&w, 11);
    refuse(&w, "negative extent");
    w_header(&w);
    w_node(&w, 1, INT64_MAX, 8, 1, 0);
    w_u8(&w, 0), w_u8(&w, 11);
    refuse(&w, "lb + extent overflow");

    /* nesting deeper than TESSI_MAX_DEPTH */
    w_header(&w);
    for (int level = 0; level <= TESSI_MAX_DEPTH; level++)
        w_node(&w, 2, 0, 0, 2, 0), w_i64(&w, 1), w_i64(&w, 1000);
    w_u8(&w, 0), w_u8(&w, 0);
    refuse(&w, "too deep");

    /* an empty type aligns nothing */
    w_header(&w);
    w_node(&w, 1, 0, 16, 0, 0);
    w_u8(&w, 0), w_u8(&w, 11);
    CHECK_OK(tess_type_decode(w.b, w.n, &t));
    CHECK(tess_type_size(t) == 0 && tess_type_extent(t) == 16);
    tess_type_free(t);
    w.b[9] = 8;
    refuse(&w, "alignment 8 of an empty type");

    /* trailing bytes after a valid type */
    w_header(&w);
    w_u8(&w, 0), w_u8(&w, 3), w_u8(&w, 0);
    refuse(&w, "trailing byte");

    /* arguments */
    CHECK_ERR(tess_type_decode(NULL, 8, &t), TESS_ERR_ARG);
    CHECK_ERR(tess_type_decode(w.b, w.n, NULL), TESS_ERR_ARG);
    size_t len;
    CHECK_ERR(tess_type_encode(NULL, NULL, 0, &len), TESS_ERR_ARG);
    CHECK_ERR(tess_type_encode(TESS_BYTE, NULL, 0, NULL), TESS_ERR_ARG);
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 3000;
    fixed_types();
    hostile();
    for (int k = 0; k < rounds; k++) {
        tess_type *t = random_type(4);
        roundtrip(t);
        tess_type_free(t);
    }
    printf("test_codec: %lld round trips, %lld truncated encodings refused\n",
           (long long)roundtrips, (long long)prefixes_refused);
    return 0;
}
