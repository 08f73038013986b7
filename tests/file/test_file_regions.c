/*
 * test_file_regions.c - the bulk region path of the independent methods (naive's rounds of
 * calls, tessi_rsrc_next, tessi_drv_each's tight loop and its one event per round) against
 * brute-force byte maps.
 *
 * Part 1: a region source consumed in bulk (random round sizes and byte limits, random seeks)
 * gives exactly the pieces a peek and a take of each would give, and those pieces are the
 * stream's bytes in the byte map of the random-type oracle (tests/randtype.c), regions counted
 * alike.
 * Part 2: naive and list reads and writes through strided views whose regions (R data bytes,
 * H hole bytes, tiles that touch or not) and offsets are random, so that round and refill
 * boundaries (64 regions) fall anywhere, compared with a byte map computed here: the memory
 * after a read (a file that ends inside the access too), the whole file after a write. The
 * counters must count one storage call per file region for naive (io_ops, accessed bytes,
 * smallest and largest access), with and without a tracing hook (which must see every call),
 * and an injected write failure after j calls must leave exactly the first j regions written.
 *
 * Usage: test_file_regions [cases [seed]]
 */
#include "driver/driver.h"
#include "randtype.h"
#include "test_file_common.h"
#include "view/view.h"

#include <inttypes.h>

/* ------------------------------------------------------------ part 1: region sources */

/* Consume source a in bulk and b by peek/take with the same limits; compare the pieces with
 * each other and with the byte map of t (count instances from base, stream bytes
 * [start, start + bytes)). */
static void source_case(const rt_type *t, int64_t count, int64_t base, int64_t start,
                        int64_t bytes, rt_rng *r)
{
    int64_t ca = 0, cb = 0, pos = 0, n;
    bool counting = rt_chance(r, 30);
    tessi_rsrc a, b;
    tess_region out[160], p;
    CHECK_OK(tessi_rsrc_open(&a, t->type, count, base, start, bytes, counting ? &ca : NULL));
    CHECK_OK(tessi_rsrc_open(&b, t->type, count, base, start, bytes, counting ? &cb : NULL));
    for (int rounds = 0;; rounds++) {
        if (rt_chance(r, 5) && pos < bytes) { /* reposition both */
            pos = rt_int(r, 0, bytes);
            CHECK_OK(tessi_rsrc_seek(&a, pos));
            CHECK_OK(tessi_rsrc_seek(&b, pos));
        }
        int64_t max = rt_chance(r, 50) ? 64 : rt_int(r, 1, 160);
        int64_t max_bytes = rt_chance(r, 30) ? INT64_MAX : rt_int(r, 1, bytes + 1);
        CHECK_OK(tessi_rsrc_next(&a, out, max, max_bytes, &n));
        CHECK(n <= max);
        int64_t k = 0, mb = max_bytes;
        for (; k < max && mb > 0; k++) {
            CHECK_OK(tessi_rsrc_peek(&b, &p));
            if (p.len == 0)
                break;
            p.len = p.len < mb ? p.len : mb;
            tessi_rsrc_take(&b, p.len);
            mb -= p.len;
            CHECK(k < n && out[k].off == p.off && out[k].len == p.len);
            for (int64_t i = 0; i < p.len; i++) /* the oracle's bytes, in stream order */
                CHECK(p.off + i == rt_byte_at(t, base, start + pos + i));
            pos += p.len;
        }
        CHECK(k == n && a.pos == b.pos && a.pos == pos);
        if (n == 0) {
            CHECK(pos == bytes);
            break;
        }
        CHECK(rounds < 4 * bytes + 10);
    }
    CHECK(ca == cb);
    tessi_rsrc_close(&a);
    tessi_rsrc_close(&b);
}

/* An hvector of c blocks of len bytes, stride len + hole, resized to extent ext. */
static tess_type *strided(int64_t c, int64_t len, int64_t hole, int64_t ext)
{
    tess_type *v, *t;
    CHECK_OK(tess_type_hvector(c, len, len + hole, TESS_BYTE, &v));
    CHECK_OK(tess_type_resized(v, 0, ext, &t));
    tess_type_free(v);
    return t;
}

/* The byte map of strided(c, len, hole, ext) from base: offset of data byte j. */
typedef struct {
    int64_t c, len, hole, ext, base;
} stride_map;

static int64_t map_at(const stride_map *m, int64_t j)
{
    int64_t tile = j / (m->c * m->len), in = j % (m->c * m->len);
    return m->base + tile * m->ext + (in / m->len) * (m->len + m->hole) + in % m->len;
}

/* A random strided layout: often a few bytes (many regions per round), tiles that touch (the
 * last block of one merges with the first of the next, also across refills) or not. */
static stride_map random_map(rt_rng *r, int64_t base)
{
    stride_map m = {.c = rt_int(r, 1, rt_chance(r, 50) ? 4 : 150),
                    .len = rt_chance(r, 60) ? rt_int(r, 1, 16) : rt_int(r, 1, 600),
                    .hole = rt_chance(r, 60) ? rt_int(r, 1, 16) : rt_int(r, 1, 2000),
                    .base = base};
    int64_t span = m.c * (m.len + m.hole) - m.hole;
    int kind = (int)rt_int(r, 0, 2);
    m.ext = kind == 0 ? span : kind == 1 ? span + m.hole : span + rt_int(r, 1, 5000);
    return m;
}

static void sources(int cases, rt_rng *r)
{
    for (int i = 0; i < cases; i++) {
        if (rt_chance(r, 50)) { /* the oracle's random types */
            rt_type *t = rt_random_limits(r, 3, RT_NO_EMPTY | RT_NO_MPI, 8192, 65536);
            if (!t) {
                fprintf(stderr, "%s\n", rt_error());
                exit(1);
            }
            int64_t count = rt_int(r, 1, 6), total = count * t->nbytes;
            int64_t start = rt_int(r, 0, total - 1);
            source_case(t, count, rt_int(r, -1000, 1000), start,
                        rt_int(r, 1, total - start), r);
            rt_free(t);
            continue;
        }
        stride_map m = random_map(r, 0);
        tess_type *ft = strided(m.c, m.len, m.hole, m.ext);
        rt_type t = {.type = ft, .nbytes = m.c * m.len, .extent = m.ext};
        t.offsets = malloc(sizeof(int64_t) * (size_t)t.nbytes);
        CHECK(t.offsets);
        for (int64_t j = 0; j < t.nbytes; j++)
            t.offsets[j] = map_at(&m, j);
        int64_t count = rt_int(r, 1, 40), total = count * t.nbytes;
        int64_t start = rt_int(r, 0, total - 1);
        source_case(&t, count, rt_int(r, 0, 100), start, rt_int(r, 1, total - start), r);
        free(t.offsets);
        tess_type_free(ft);
    }
}

/* -------------------------------------------------- part 2: naive and list over views */

typedef struct {
    int64_t io, bytes;
} tally;

static void tally_event(void *ctx, const tessi_event *e)
{
    tally *t = ctx;
    CHECK(e->kind != TESSI_EV_IO_CALLS); /* a hook sees every call on its own */
    t->io += e->kind == TESSI_EV_IO;
    t->bytes += e->kind == TESSI_EV_IO && e->moved > 0 ? e->moved : 0;
}

static const struct tessi_tracer counting = {.version = TESSI_TRACER_VERSION, .name = "test",
                                             .event = tally_event};

/* The file regions (maximal contiguous runs) of stream bytes [0, total) of map m at offset
 * `first`: reg[0..*nreg) as (off, len). */
static void file_regions(const stride_map *m, int64_t first, int64_t total, tess_region *reg,
                         int64_t *nreg)
{
    int64_t n = 0;
    for (int64_t j = 0; j < total; j++) {
        int64_t o = map_at(m, first + j);
        if (n > 0 && reg[n - 1].off + reg[n - 1].len == o)
            reg[n - 1].len++;
        else
            reg[n++] = (tess_region){o, 1};
    }
    *nreg = n;
}

static void fill_random(unsigned char *p, int64_t n, rt_rng *r)
{
    for (int64_t i = 0; i < n; i++)
        p[i] = (unsigned char)rt_u64(r);
}

/* The counters of one naive access that ran the calls for reg[0..calls) and moved `moved`
 * bytes: one storage call per file region. */
static void check_naive_stats(tess_file *f, const tess_region *reg, int64_t calls, int64_t moved)
{
    tess_stats s;
    int64_t lo = INT64_MAX, hi = 0;
    for (int64_t i = 0; i < calls; i++) {
        lo = reg[i].len < lo ? reg[i].len : lo;
        hi = reg[i].len > hi ? reg[i].len : hi;
    }
    CHECK_OK(tess_file_stats(f, &s));
    CHECK(s.io_ops == calls && s.accessed_bytes == moved);
    CHECK(calls == 0 || (s.min_access == lo && s.max_access == hi));
}

static void view_case(const char *path, int method, rt_rng *r)
{
    static const char *const pairs[] = {"1", "5", "64", "100"};
    int64_t disp = rt_int(r, 0, 300);
    stride_map m = random_map(r, disp);
    int64_t first = rt_int(r, 0, 3 * m.c * m.len), total = rt_int(r, 1, 4000);
    while (total > 1 && map_at(&m, first + total - 1) > (1 << 20)) /* files up to 1 MiB */
        total /= 2;
    int64_t nreg, fsize = map_at(&m, first + total - 1) + 1 + rt_int(r, 0, 100);
    tess_region *reg = malloc(sizeof *reg * (size_t)total + 2 * (size_t)(fsize + total));
    CHECK(reg);
    unsigned char *file = (unsigned char *)(reg + total), *want = file + fsize;
    unsigned char *data = want + fsize, *mem = data + total, *got;
    file_regions(&m, first, total, reg, &nreg);
    fill_random(file, fsize, r);
    fill_random(data, total, r);
    bool write = rt_chance(r, 50), hooked = rt_chance(r, 25);
    /* naive only: list's batch attempt (tessi_drv_submit) takes a fault check of its own */
    int64_t fault = write && !hooked && method == 0 && rt_chance(r, 30) ? rt_int(r, 0, nreg - 1)
                                                                         : -1;
    int64_t eof = !write && rt_chance(r, 30) ? rt_int(r, reg[0].off, fsize) : fsize;
    tf_put(path, file, eof);
    const char *kv[] = {"tess_method", method ? "list" : "naive", "tess_list_max_pairs",
                        pairs[rt_int(r, 0, 3)], "tess_posix_uring", "disable", NULL};
    tess_file *f;
    tess_type *ft = strided(m.c, m.len, m.hole, m.ext);
    tally t = {0};
    int64_t moved = -1;
    CHECK_OK(tf_open(path, TESS_RDWR, &f, kv));
    CHECK_OK(tess_file_set_view(f, disp, TESS_BYTE, ft));
    tess_type_free(ft);
    if (hooked)
        tessi_tracer_install(&counting, &t);
    if (fault >= 0)
        tessi_fault_inject(TESSI_OP_WRITE, fault, 1, -EIO);
    int rc = write ? tess_file_write_at(f, first, data, total, TESS_BYTE, &moved)
                   : tess_file_read_at(f, first, mem, total, TESS_BYTE, &moved);
    tessi_tracer_install(NULL, NULL);
    tessi_fault_clear();
    int64_t calls = nreg, expect = 0;
    if (write) {
        memcpy(want, file, (size_t)fsize);
        for (int64_t i = 0, j = 0; i < (fault >= 0 ? fault : nreg); j += reg[i++].len)
            memcpy(want + reg[i].off, data + j, (size_t)reg[i].len);
        CHECK(fault >= 0 ? rc != 0 : rc == 0);
        CHECK(tf_get(path, &got) == fsize && memcmp(got, want, (size_t)fsize) == 0);
        free(got);
        calls = fault >= 0 ? fault : nreg;
        expect = fault >= 0 ? -1 : total;
    } else {
        CHECK_OK(rc);
        for (int64_t j = 0; j < total; j++) { /* a stream prefix exists; the rest reads 0 */
            int64_t o = map_at(&m, first + j);
            CHECK(mem[j] == (o < eof && expect == j ? file[o] : 0));
            expect += o < eof && expect == j;
        }
        for (calls = 0; calls < nreg && reg[calls].off + reg[calls].len <= eof;)
            calls++;
        calls += calls < nreg; /* the call that came back short */
    }
    if (expect >= 0)
        CHECK(moved == expect);
    int64_t io_bytes = 0; /* what the calls run moved */
    for (int64_t i = 0; i < calls; i++)
        io_bytes += reg[i].len;
    if (method == 0) /* naive: one storage call per file region */
        check_naive_stats(f, reg, calls, write ? io_bytes : expect);
    if (hooked) {
        tess_stats s;
        CHECK_OK(tess_file_stats(f, &s));
        CHECK(t.io == s.io_ops && t.bytes == s.accessed_bytes);
    }
    CHECK_OK(tess_file_close(f));
    free(reg);
}

int main(int argc, char **argv)
{
    int cases = argc > 1 ? atoi(argv[1]) : 300;
    uint64_t seed = argc > 2 ? strtoull(argv[2], NULL, 0) : 7;
    char path[256];
    rt_rng r;
    rt_seed(&r, seed);
    sources(cases, &r);
    tf_path(path, sizeof path, "regions");
    for (int i = 0; i < cases; i++)
        view_case(path, i % 2, &r);
    unlink(path);
    printf("%d region-source cases and %d view cases passed (seed %" PRIu64 ")\n", cases,
           cases, seed);
    return 0;
}
