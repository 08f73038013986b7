/*
 * test_decode_fuzz.c - a generator and mutation fuzzer for tess_type_decode (no libFuzzer
 * needed, so it runs in `make check`; tests/fuzz/fuzz_decode.c is the coverage-guided target).
 *
 *   test_decode_fuzz [inputs [seed]]      default 200000 inputs, seed 1
 *   test_decode_fuzz --corpus DIR         write the seed corpus to DIR (for fuzz_decode)
 *
 * With TESS_FUZZ_LAST=<file> set, each input is written to <file> before it is decoded, so the
 * input that crashed a run can be replayed (e.g. with tests/fuzz/fuzz_decode).
 *
 * Inputs come from three sources: a generator that writes random but well-formed node streams
 * (random tags, small counts, interesting field values, references to earlier nodes), the
 * encodings of constructed types, and mutations of a corpus of both (bit flips, interesting
 * bytes and 64-bit values, truncation, insertion, deletion, duplication, splicing); inputs
 * that decode are added to the corpus so mutations build on each other. Every input must
 * either decode to a type that is consistent (re-encoding and decoding it again gives the same
 * invariants and the same bytes; its regions add up to its size inside its true bounds) and
 * that summarize_check accepts (footprint, describe, encode, a bounded walk, pack and unpack,
 * each within a time budget: tests/fuzz/summarize.h), or be refused with TESS_ERR_DECODE and a
 * message. Crashes, leaks and undefined behaviour are
 * caught by the sanitizers of the test build.
 */
#include "check.h"
#include "fuzz/summarize.h"
#include "type/type.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_INPUT 8192
#define CORPUS_MAX 1024

static uint64_t rng;
static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}
static int64_t rnd(int64_t n) { return (int64_t)(next() % (uint64_t)n); }

/* Values that sit on the edges the decoder and constructors must handle. */
static int64_t interesting(void)
{
    static const int64_t v[] = {0, 1, -1, 2, 3, 4, 7, 8, -8, 16, 255, 256, 4096,
                                INT64_C(1) << 31, INT64_C(1) << 32, INT64_C(1) << 62,
                                INT64_MAX, INT64_MIN, INT64_MAX - 7, INT64_MIN + 1,
                                -(INT64_C(1) << 40)};
    return rnd(3) == 0 ? rnd(64) - 32 : v[rnd((int64_t)(sizeof v / sizeof v[0]))];
}

/* ------------------------------------------------------------------ buffers */

typedef struct {
    unsigned char b[MAX_INPUT];
    size_t n;
} input;

static void put_u8(input *in, unsigned v)
{
    if (in->n < MAX_INPUT)
        in->b[in->n++] = (unsigned char)v;
}
static void put_i64(input *in, int64_t v)
{
    for (int i = 0; i < 8; i++)
        put_u8(in, (unsigned)((uint64_t)v >> (8 * i)) & 0xff);
}
static void put_header(input *in)
{
    static const unsigned char h[8] = {'T', 'S', 'T', 'Y', 1, 0, 0, 0};
    in->n = 0;
    for (int i = 0; i < 8; i++)
        put_u8(in, h[i]);
}

/* ----------------------------------------------------------------- generator */

/* A small field value: mostly plausible, sometimes on an edge. */
static int64_t field(int64_t lo, int64_t hi)
{
    return rnd(10) == 0 ? interesting() : lo + rnd(hi - lo + 1);
}

/*
 * Write one random node (and its children) in the wire form; *nodes counts the composite
 * nodes completed so far, which REF may name.
 */
static void gen_node(input *in, int depth, int64_t *nodes)
{
    int64_t tag = depth == 0 ? (rnd(2) ? 0 : 6) : rnd(8);
    if (tag == 0 || tag == 7) {
        put_u8(in, 0);
        put_u8(in, (unsigned)(rnd(20) == 0 ? rnd(256) : rnd(12)));
        return;
    }
    if (tag == 6) {
        if (*nodes == 0 && rnd(4)) {
            put_u8(in, 0), put_u8(in, (unsigned)rnd(12));
            return;
        }
        put_u8(in, 6);
        put_i64(in, rnd(10) == 0 ? interesting() : rnd(*nodes + 1));
        return;
    }
    int64_t count = rnd(12) == 0 ? interesting() : rnd(5);
    int64_t entries = count >= 0 && count <= 6 ? count : 2;
    put_u8(in, (unsigned)tag);
    put_i64(in, field(-32, 32));  /* lb */
    put_i64(in, field(0, 96));    /* extent */
    put_i64(in, count);
    put_i64(in, field(-16, 16));  /* disp0 */
    if (tag == 2 || tag == 3)
        put_i64(in, field(1, 3)); /* blocklen */
    if (tag == 2)
        put_i64(in, field(-48, 48)); /* stride */
    if (tag == 4 || tag == 5)
        for (int64_t b = 0; b < entries; b++)
            put_i64(in, field(1, 3));
    if (tag >= 3)
        for (int64_t b = 0; b < entries; b++)
            put_i64(in, field(-64, 64));
    int64_t kids = tag == 5 ? entries : 1;
    for (int64_t k = 0; k < kids; k++)
        gen_node(in, depth - 1, nodes);
    (*nodes)++;
}

static void generate(input *in)
{
    int64_t nodes = 0;
    put_header(in);
    gen_node(in, (int)rnd(6), &nodes);
}

/* ------------------------------------------------------------------ seeds */

static input *corpus;
static int ncorpus, corpus_next;

static void corpus_add(const input *in)
{
    if (ncorpus < CORPUS_MAX) {
        corpus[ncorpus++] = *in;
    } else {
        corpus[corpus_next] = *in; /* replace the oldest of the grown part */
        corpus_next = corpus_next + 1 < CORPUS_MAX ? corpus_next + 1 : 64;
    }
}

static void seed_type(tess_type *t)
{
    input in;
    size_t len;
    CHECK_OK(tess_type_encode(t, in.b, sizeof in.b, &len));
    in.n = len;
    corpus_add(&in);
    tess_type_free(t);
}

/* Encodings of constructed types: every node kind, resized, shared subtrees, deep nesting. */
static void seed_corpus(void)
{
    tess_type *t, *u, *v;
    int64_t bl[3] = {2, 1, 3}, d[3] = {-16, 40, 8}, d2[3] = {0, 2, 5};
    seed_type(TESS_DOUBLE);
    CHECK_OK(tess_type_contiguous(3, TESS_INT32, &t));
    seed_type(t);
    CHECK_OK(tess_type_vector(4, 2, -3, TESS_INT16, &t));
    seed_type(t);
    CHECK_OK(tess_type_blockindexed(3, 2, d2, TESS_DOUBLE, &t));
    seed_type(t);
    CHECK_OK(tess_type_hindexed(3, bl, d, TESS_INT32, &t));
    seed_type(t);
    tess_type *kids[3] = {TESS_DOUBLE, TESS_CHAR, NULL};
    CHECK_OK(tess_type_resized(TESS_INT32, -4, 12, &kids[2]));
    CHECK_OK(tess_type_struct(3, bl, d, kids, &u));
    seed_type(tess_type_ref(u));
    CHECK_OK(tess_type_hvector(3, 2, 100, u, &v));
    seed_type(tess_type_ref(v));
    kids[0] = v;
    kids[1] = u;
    CHECK_OK(tess_type_struct(3, bl, d, kids, &t)); /* u appears twice: a REF */
    seed_type(t);
    CHECK_OK(tess_type_resized(v, 7, 3, &t));
    seed_type(t);
    tess_type_free(kids[2]);
    tess_type_free(u);
    tess_type_free(v);
    int64_t g[3] = {11, 7, 5}, sub[3] = {3, 4, 5}, st[3] = {2, 1, 0};
    CHECK_OK(tess_type_subarray(3, g, sub, st, TESS_ORDER_C, TESS_DOUBLE, &t));
    seed_type(t);
    int dist[3] = {TESS_DISTRIBUTE_CYCLIC, TESS_DISTRIBUTE_BLOCK, TESS_DISTRIBUTE_CYCLIC};
    int darg[3] = {2, -1, 3}, ps[3] = {2, 2, 2};
    CHECK_OK(tess_type_darray(8, 5, 3, g, dist, darg, ps, TESS_ORDER_FORTRAN, TESS_INT32, &t));
    seed_type(t);
    t = tess_type_ref(TESS_INT64);
    for (int level = 0; level < TESSI_MAX_DEPTH; level++) {
        int64_t b2[2] = {1, 2}, dd[2] = {0, 64 + level};
        tess_type *k2[2] = {t, TESS_CHAR};
        CHECK_OK(tess_type_struct(2, b2, dd, k2, &u));
        tess_type_free(t);
        t = u;
    }
    seed_type(t);
    for (int k = 0; k < 48; k++) {
        input in;
        generate(&in);
        corpus_add(&in);
    }
}

/* ------------------------------------------------------------------ mutation */

static void mutate(input *in)
{
    int rounds = 1 + (int)rnd(3);
    for (int r = 0; r < rounds; r++) {
        size_t n = in->n, pos = n ? (size_t)rnd((int64_t)n) : 0;
        switch (rnd(9)) {
        case 0: /* flip bits */
            if (n)
                in->b[pos] ^= (unsigned char)(1u << rnd(8));
            break;
        case 1: /* an interesting byte */
            if (n) {
                static const unsigned char v[] = {0, 1, 2, 5, 6, 7, 0x7f, 0x80, 0xff};
                in->b[pos] = rnd(2) ? v[rnd(9)] : (unsigned char)rnd(256);
            }
            break;
        case 2: /* an interesting 64-bit value over 8 bytes */
            if (n >= 8) {
                uint64_t v = (uint64_t)interesting();
                pos = (size_t)rnd((int64_t)(n - 7));
                for (int i = 0; i < 8; i++)
                    in->b[pos + (size_t)i] = (unsigned char)(v >> (8 * i));
            }
            break;
        case 3: /* truncate */
            in->n = pos;
            break;
        case 4: { /* insert random bytes */
            size_t k = 1 + (size_t)rnd(16);
            if (n + k <= MAX_INPUT) {
                memmove(in->b + pos + k, in->b + pos, n - pos);
                for (size_t i = 0; i < k; i++)
                    in->b[pos + i] = (unsigned char)rnd(256);
                in->n = n + k;
            }
            break;
        }
        case 5: { /* delete a range */
            size_t k = 1 + (size_t)rnd(24);
            if (pos + k <= n) {
                memmove(in->b + pos, in->b + pos + k, n - pos - k);
                in->n = n - k;
            }
            break;
        }
        case 6: { /* duplicate a range somewhere else (inserted) */
            size_t from = n ? (size_t)rnd((int64_t)n) : 0, k = 1 + (size_t)rnd(40);
            if (from + k <= n && n + k <= MAX_INPUT) {
                unsigned char tmp[40];
                memcpy(tmp, in->b + from, k);
                memmove(in->b + pos + k, in->b + pos, n - pos);
                memcpy(in->b + pos, tmp, k);
                in->n = n + k;
            }
            break;
        }
        case 7: { /* splice: our head, another entry's tail */
            const input *o = &corpus[rnd(ncorpus)];
            size_t from = o->n ? (size_t)rnd((int64_t)o->n) : 0;
            if (pos + (o->n - from) <= MAX_INPUT) {
                memcpy(in->b + pos, o->b + from, o->n - from);
                in->n = pos + (o->n - from);
            }
            break;
        }
        default: /* random bytes, with a valid header half of the time */
            in->n = (size_t)rnd(96);
            for (size_t i = 0; i < in->n; i++)
                in->b[i] = (unsigned char)rnd(256);
            if (rnd(2) && in->n >= 8)
                memcpy(in->b, "TSTY\2\0\0\0", 8);
            break;
        }
    }
}

/* ------------------------------------------------------------------ checking */

static int64_t accepted, refused;

/* The regions of a small type, in typemap order, checked against its true bounds. */
static int64_t walk(const tess_type *t, tess_region *out, int64_t cap)
{
    tess_cursor *c;
    int64_t n, k = 0, lo = tess_type_true_lb(t), hi = lo + tess_type_true_extent(t);
    CHECK_OK(tess_cursor_create(t, 1, &c));
    do {
        CHECK_OK(tess_cursor_next(c, out + k, cap - k, -1, &n));
        for (int64_t i = k; i < k + n; i++)
            CHECK(out[i].len > 0 && out[i].off >= lo && out[i].off + out[i].len <= hi);
        k += n;
    } while (n > 0 && k < cap);
    tess_cursor_free(c);
    return k;
}

/*
 * A decoded type must be self-consistent: encoding and decoding it again gives a type with the
 * same invariants (and, for small types, the same regions, which add up to the size).
 */
static void check_decoded(tess_type *t)
{
    static unsigned char a[1 << 16];
    static tess_region ra[4097], rb[4097];
    size_t la;
    tess_type *u;
    CHECK_OK(tess_type_encode(t, a, sizeof a, &la));
    CHECK_OK(tess_type_decode(a, la, &u));
    CHECK(tess_type_size(u) == tess_type_size(t));
    CHECK(tess_type_extent(u) == tess_type_extent(t));
    CHECK(tess_type_lb(u) == tess_type_lb(t));
    CHECK(tess_type_true_lb(u) == tess_type_true_lb(t));
    CHECK(tess_type_true_extent(u) == tess_type_true_extent(t));
    CHECK(tess_type_num_regions(u) == tess_type_num_regions(t));
    /* a walk costs up to one step per data element: only types of a few KiB are walked */
    if (tess_type_size(t) <= 4096) {
        int64_t na = walk(t, ra, 4097), nb = walk(u, rb, 4097), sum = 0;
        CHECK(na == nb && memcmp(ra, rb, (size_t)na * sizeof *ra) == 0);
        for (int64_t i = 0; i < na; i++)
            sum += ra[i].len;
        CHECK(sum == tess_type_size(t));
    }
    tess_type_free(u);
    const char *why = summarize_check(t);
    if (why) {
        fprintf(stderr, "decoded type: %s\n", why);
        CHECK(0);
    }
}

static const char *last_path;

static void run_one(const input *in)
{
    tess_type *t = NULL;
    if (last_path) {
        FILE *f = fopen(last_path, "wb");
        CHECK(f && fwrite(in->b, 1, in->n, f) == in->n && fclose(f) == 0);
    }
    int rc = tess_type_decode(in->b, in->n, &t);
    if (rc == 0) {
        accepted++;
        check_decoded(t);
        tess_type_free(t);
        if (rnd(8) == 0)
            corpus_add(in);
        return;
    }
    if (rc != TESS_ERR_DECODE || !tess_last_error()[0] || t) {
        fprintf(stderr, "decode of a %zu-byte input returned %d (%s): %s\n", in->n, rc,
                tess_strerror(rc), tess_last_error());
        CHECK(0);
    }
    refused++;
}

/* Write the seed corpus as files DIR/seed-N, the starting corpus of tests/fuzz/fuzz_decode. */
static int write_corpus(const char *dir)
{
    char path[4096];
    for (int i = 0; i < ncorpus; i++) {
        snprintf(path, sizeof path, "%s/seed-%03d", dir, i);
        FILE *f = fopen(path, "wb");
        CHECK(f && fwrite(corpus[i].b, 1, corpus[i].n, f) == corpus[i].n && fclose(f) == 0);
    }
    printf("test_decode_fuzz: %d seeds written to %s\n", ncorpus, dir);
    free(corpus);
    return 0;
}

int main(int argc, char **argv)
{
    bool corpus_only = argc > 2 && strcmp(argv[1], "--corpus") == 0;
    int64_t inputs = argc > 1 && !corpus_only ? atoll(argv[1]) : 200000;
    uint64_t seed = argc > 2 && !corpus_only ? strtoull(argv[2], NULL, 0) : 1;
    rng = seed * 0x9E3779B97F4A7C15ull | 1;
    last_path = getenv("TESS_FUZZ_LAST");
    corpus = malloc(CORPUS_MAX * sizeof *corpus);
    CHECK(corpus);
    seed_corpus();
    if (corpus_only)
        return write_corpus(argv[2]);
    clock_t start = clock();
    for (int64_t i = 0; i < inputs; i++) {
        input in;
        if (rnd(4) == 0) {
            generate(&in);
        } else {
            in = corpus[rnd(ncorpus)];
            mutate(&in);
        }
        run_one(&in);
    }
    printf("test_decode_fuzz: %lld inputs (seed %llu): %lld decoded, %lld refused, "
           "%.1f s CPU\n", (long long)inputs, (unsigned long long)seed, (long long)accepted,
           (long long)refused, (double)(clock() - start) / CLOCKS_PER_SEC);
    free(corpus);
    return 0;
}
