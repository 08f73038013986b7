/*
 * test_coll_oracle.c - collective writes and reads checked against a brute-force byte map.
 *
 * Every case draws, from one seed that all ranks share, a random file view and memory type per
 * rank (tests/randtype.c: all constructors, nested up to 3 levels; byte maps from the constructor
 * definitions, never from Tessera), etypes, offsets and counts (zero on some ranks, empty memory
 * types too), and hints: tess_realms even | aligned | persistent | balanced | cyclic or a user
 * realm type (tess_file_set_realms, anchors before and after byte 0), cb_nodes, cb_buffer_size
 * down to a few dozen bytes (dozens of rounds), striping_unit, tess_realm_size,
 * tess_cb_sieve_threshold (always span, never span, default), tess_cb_pipeline, romio_cb_*
 * (mostly enable; automatic and disable too), and tess_cb_pack (the exchange's staging: forced,
 * ruled out, or the model's choice; the staged bytes are checked to follow the hint). Ranks' writes are disjoint (their tiles
 * interleave in lanes, or lie in separate blocks); reads reuse the view with new memory types
 * and then, every other case, all ranks read one shared view (overlapping reads), some past
 * the end of file.
 *
 * Because every rank can recompute every rank's access from the seed, rank 0 builds the
 * expected file after a write from all of them by brute force (a byte per data byte), and each
 * rank checks its read buffer (guards included) against the file read with POSIX calls.
 *
 * usage: mpiexec -n P test_coll_oracle [cases [seed [first case]]]
 */
#include "coll_test.h"
#include "randtype.h"

#include <inttypes.h>

#define GUARD 32

typedef struct {
    rt_type *mt;
    int64_t offset, count, total;
} mem_acc;

typedef struct {
    rt_type *ft;
    int64_t es;
    tess_type *etype;
    tess_type *filetype; /* the view's filetype (lanes: the lane-tiled one; owned) */
    int64_t disp;        /* the view's displacement */
    int64_t tile;        /* bytes between tiles */
    int64_t base;        /* file byte of the type origin of tile 0 */
    mem_acc m[2];        /* write, then read */
} rank_acc;

static uint64_t g_seed;
static int64_t g_sum[5]; /* resent, request, flat request bytes, accesses, packed bytes */
static int g_pack;       /* the case's tess_cb_pack: 0 automatic, 1 enable, 2 disable */

static uint64_t mix3(uint64_t a, uint64_t b, uint64_t c)
{
    return rt_mix(a ^ rt_mix(b * 0x9E3779B97F4A7C15u ^ rt_mix(c + 0x632BE59BD9B4E019u)));
}

/* The byte rank q's memory holds at offset x (from the memory type's origin) in case c. */
static unsigned char memval(int c, int q, int64_t x)
{
    return (unsigned char)mix3(g_seed ^ (uint64_t)c, (uint64_t)q, (uint64_t)x);
}

static int64_t file_off(const rank_acc *r, const mem_acc *m, int64_t j)
{
    int64_t k = m->offset * r->es + j, fs = r->ft->nbytes;
    return r->base + (k / fs) * r->tile + r->ft->offsets[k % fs];
}

static int64_t mem_off(const mem_acc *m, int64_t j)
{
    int64_t ms = m->mt->nbytes;
    return (j / ms) * m->mt->extent + m->mt->offsets[j % ms];
}

static rt_type *must(rt_type *t)
{
    if (!t) {
        snprintf(ct_where + strlen(ct_where), sizeof ct_where - strlen(ct_where), " (%s)",
                 rt_error());
        ct_fail(__FILE__, __LINE__, "rt_random failed");
    }
    return t;
}

/* A random memory access over view filetype ft with etype es (total a multiple of es). */
static void gen_mem(rt_rng *r, const rt_type *ft, int64_t es, bool write, mem_acc *m)
{
    for (;;) { /* a read's memory must not overlap itself, also across instances */
        m->mt = must(rt_random_limits(r, (int)rt_int(r, 0, 3), RT_NO_MPI, 2048, 8192));
        int64_t ms = m->mt->nbytes, fs = ft->nbytes;
        m->count = 0;
        if (ms > 0 && !rt_chance(r, 12)) {
            int64_t most = 6 * fs / ms > 1 ? 6 * fs / ms : 1;
            m->count = rt_int(r, 1, most);
            while ((m->count * ms) % es)
                m->count++;
        }
        if (write || !rt_overlaps(m->mt, m->count))
            break;
        rt_free(m->mt);
    }
    int64_t ms = m->mt->nbytes, fs = ft->nbytes;
    m->total = m->count * ms;
    m->offset = rt_int(r, 0, 2 * fs / es);
}

/* Rank q's view and accesses in case c (every rank computes every rank's). */
static void gen_rank(int c, int q, rank_acc *a)
{
    rt_rng r;
    rt_seed(&r, mix3(g_seed, (uint64_t)c, (uint64_t)q + 1000));
    memset(a, 0, sizeof *a);
    a->ft = must(rt_random_limits(&r, (int)rt_int(&r, 0, 3),
                                  RT_MONOTONIC | RT_NONNEG | RT_NO_EMPTY | RT_NO_MPI, 2048, 8192));
    a->es = 1;
    if (a->ft->nbytes % 4 == 0 && rt_chance(&r, 30))
        a->es = 4;
    else if (a->ft->nbytes % 2 == 0 && rt_chance(&r, 30))
        a->es = 2;
    gen_mem(&r, a->ft, a->es, true, &a->m[0]);
    gen_mem(&r, a->ft, a->es, false, &a->m[1]);
}

/* The etype of es bytes. */
static tess_type *make_etype(int64_t es)
{
    tess_type *t;
    if (es == 1)
        return TESS_BYTE;
    CT_OK(tess_type_contiguous(es, TESS_BYTE, &t));
    return t;
}

typedef struct {
    int P, lanes;
    int64_t L, block, disp;
    rank_acc *acc;
} layout;

/* Lay the ranks' views out: lanes (rank q's tiles in lane q of every period of P lanes) or
 * blocks (rank q's tiles from disp + q * block). */
static void lay_out(layout *lo, int c)
{
    rt_rng r;
    rt_seed(&r, mix3(g_seed, (uint64_t)c, 77));
    lo->lanes = rt_chance(&r, 50);
    lo->disp = rt_int(&r, 0, 100);
    lo->L = 1;
    for (int q = 0; q < lo->P; q++)
        if (lo->acc[q].ft->true_ub > lo->L)
            lo->L = lo->acc[q].ft->true_ub;
    lo->L = (lo->L + 3) / 4 * 4;
    for (int q = 0; q < lo->P; q++) {
        rank_acc *a = &lo->acc[q];
        a->etype = make_etype(a->es);
        if (lo->lanes) {
            tess_type *s;
            int64_t one = 1, d = q * lo->L;
            tess_type *ty = a->ft->type;
            CT_OK(tess_type_struct(1, &one, &d, &ty, &s));
            CT_OK(tess_type_resized(s, 0, lo->P * lo->L, &a->filetype));
            tess_type_free(s);
            a->disp = lo->disp;
            a->tile = lo->P * lo->L;
            a->base = lo->disp + q * lo->L;
        } else {
            a->filetype = tess_type_ref(a->ft->type);
            a->tile = a->ft->extent;
        }
    }
    if (!lo->lanes) { /* blocks: as long as the furthest access of any rank */
        lo->block = 1;
        for (int q = 0; q < lo->P; q++)
            for (int ph = 0; ph < 2; ph++) {
                rank_acc *a = &lo->acc[q];
                a->base = 0;
                if (a->m[ph].total > 0 && file_off(a, &a->m[ph], a->m[ph].total - 1) + 1 > lo->block)
                    lo->block = file_off(a, &a->m[ph], a->m[ph].total - 1) + 1;
            }
        for (int q = 0; q < lo->P; q++) {
            lo->acc[q].disp = lo->disp + q * lo->block;
            lo->acc[q].base = lo->acc[q].disp;
        }
    }
}

/* The furthest file byte + 1 any access of the case reaches. */
static int64_t reach(const layout *lo)
{
    int64_t hi = 0;
    for (int q = 0; q < lo->P; q++)
        for (int ph = 0; ph < 2; ph++) {
            const rank_acc *a = &lo->acc[q];
            const mem_acc *m = &a->m[ph];
            if (m->total > 0 && file_off(a, m, m->total - 1) + 1 > hi)
                hi = file_off(a, m, m->total - 1) + 1;
        }
    return hi;
}

/* A memory buffer for m (guards around the span), filled with memval; *origin = type origin. */
static unsigned char *mem_buffer(const mem_acc *m, int c, int q, int64_t *lo, int64_t *len,
                                 unsigned char **origin)
{
    int64_t hi;
    rt_span(m->mt, m->count, lo, &hi);
    *len = hi - *lo + 2 * GUARD;
    unsigned char *buf = malloc((size_t)*len);
    CT_CHECK(buf);
    for (int64_t i = 0; i < *len; i++)
        buf[i] = memval(c, q, *lo - GUARD + i);
    *origin = buf + GUARD - *lo;
    return buf;
}

typedef struct {
    char kv[24][64];
    const char *list[25];
    int n;
    bool user;
    int64_t naggs;
} hintset;

static void hint(hintset *h, const char *k, const char *fmt, long long v)
{
    snprintf(h->kv[h->n], sizeof h->kv[0], "%s", k);
    snprintf(h->kv[h->n + 1], sizeof h->kv[0], fmt, v);
    h->list[h->n] = h->kv[h->n];
    h->list[h->n + 1] = h->kv[h->n + 1];
    h->n += 2;
    h->list[h->n] = NULL;
}

static void hint_s(hintset *h, const char *k, const char *v)
{
    snprintf(h->kv[h->n], sizeof h->kv[0], "%s", k);
    snprintf(h->kv[h->n + 1], sizeof h->kv[0], "%s", v);
    h->list[h->n] = h->kv[h->n];
    h->list[h->n + 1] = h->kv[h->n + 1];
    h->n += 2;
    h->list[h->n] = NULL;
}

/* The case's hints (the same on every rank). The buffer is at least 1/48 of the extent the
 * accesses span, so that a case has at most a few dozen rounds. */
static void gen_hints(int c, int P, int64_t extent, hintset *h)
{
    static const char *const realms[] = {"even", "aligned", "persistent", "balanced", "cyclic",
                                         "user"};
    static const char *const cb[] = {"enable", "automatic", "disable"};
    rt_rng r;
    rt_seed(&r, mix3(g_seed, (uint64_t)c, 99));
    memset(h, 0, sizeof *h);
    const char *realm = realms[rt_int(&r, 0, 5)];
    h->user = strcmp(realm, "user") == 0;
    if (!h->user)
        hint_s(h, "tess_realms", realm);
    h->naggs = rt_int(&r, 1, P);
    if (h->user || rt_chance(&r, 75))
        hint(h, "cb_nodes", "%lld", h->naggs);
    else
        h->naggs = 1; /* the default: one per node */
    int64_t minbuf = (extent > 0 ? extent : 0) / 48 + 1, buf = rt_int(&r, minbuf, minbuf * 8);
    if (rt_chance(&r, 85))
        hint(h, "cb_buffer_size", "%lld", buf);
    if (rt_chance(&r, 50))
        hint(h, "striping_unit", "%lld", rt_int(&r, 1, 4) * rt_int(&r, 16, 512));
    if (rt_chance(&r, 50))
        hint(h, "tess_realm_size", "%lld", rt_int(&r, 1, 2048));
    int64_t thr = rt_int(&r, 0, 3);
    if (thr < 3)
        hint(h, "tess_cb_sieve_threshold", "%lld", thr == 0 ? 0 : thr == 1 ? 64 : 1 << 30);
    hint_s(h, "tess_cb_pipeline", rt_chance(&r, 50) ? "enable" : "disable");
    int64_t k = rt_int(&r, 0, 9);
    hint_s(h, "romio_cb_write", cb[k < 8 ? 0 : k - 7]);
    k = rt_int(&r, 0, 9);
    hint_s(h, "romio_cb_read", cb[k < 8 ? 0 : k - 7]);
    static const char *const pack[] = {"automatic", "enable", "disable"};
    g_pack = (int)rt_int(&r, 0, 2);
    hint_s(h, "tess_cb_pack", pack[g_pack]);
}

/* User realms: blocks of b bytes dealt round-robin from an anchor near byte 0. */
static void set_user_realms(tess_file *f, int c, int64_t naggs)
{
    rt_rng r;
    rt_seed(&r, mix3(g_seed, (uint64_t)c, 55));
    int64_t b = rt_int(&r, 1, 600), anchor = rt_int(&r, -300, 300);
    tess_type *blk, *realm;
    CT_OK(tess_type_contiguous(b, TESS_BYTE, &blk));
    CT_OK(tess_type_resized(blk, 0, b * naggs, &realm));
    CT_OK(tess_file_set_realms(f, anchor, realm, b));
    tess_type_free(blk);
    tess_type_free(realm);
}

static void check_stats(tess_file *f, int64_t total)
{
    tess_stats s;
    CT_OK(tess_file_stats(f, &s));
    CT_EQ(s.desired_bytes, total);
    CT_CHECK(s.resent_bytes >= 0 && s.resent_bytes <= total);
    CT_CHECK(s.exchange_seconds >= 0);
    CT_CHECK(s.flat_request_bytes >= 0 && s.request_bytes >= 0);
    CT_CHECK(s.packed_bytes >= 0);
    if (g_pack == 2) /* staging ruled out */
        CT_EQ(s.packed_bytes, 0);
    g_sum[0] += s.resent_bytes;
    g_sum[1] += s.request_bytes;
    g_sum[2] += s.flat_request_bytes;
    g_sum[3]++;
    g_sum[4] += g_pack == 1 ? s.packed_bytes : 0;
}

/* The collective write of phase 0; rank 0 checks the whole file. */
static void do_write(const char *path, tess_file *f, const layout *lo, int c, int me)
{
    const rank_acc *a = &lo->acc[me];
    const mem_acc *m = &a->m[0];
    int64_t mlo, mlen, put = -1;
    unsigned char *origin, *mem = mem_buffer(m, c, me, &mlo, &mlen, &origin);
    unsigned char *before = NULL;
    int64_t size0 = 0;
    if (me == 0) { /* random contents first, reaching somewhat before or after the accesses */
        rt_rng r;
        rt_seed(&r, mix3(g_seed, (uint64_t)c, 33));
        size0 = rt_int(&r, 0, reach(lo) + 64);
        before = malloc((size_t)size0 + 1);
        CT_CHECK(before);
        for (int64_t i = 0; i < size0; i++)
            before[i] = (unsigned char)rt_u64(&r);
        ct_put(path, before, size0);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    tess_file_reset_stats(f);
    CT_OK(tess_file_write_at_all(f, m->offset, origin, m->count, m->mt->type, &put));
    CT_EQ(put, m->total);
    check_stats(f, m->total);
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0) {
        int64_t size1 = size0;
        for (int q = 0; q < lo->P; q++) {
            const mem_acc *mq = &lo->acc[q].m[0];
            if (mq->total > 0 && file_off(&lo->acc[q], mq, mq->total - 1) + 1 > size1)
                size1 = file_off(&lo->acc[q], mq, mq->total - 1) + 1;
        }
        unsigned char *want = calloc((size_t)size1 + 1, 1), *after;
        CT_CHECK(want);
        memcpy(want, before, (size_t)size0);
        for (int q = 0; q < lo->P; q++) {
            const mem_acc *mq = &lo->acc[q].m[0];
            for (int64_t j = 0; j < mq->total; j++)
                want[file_off(&lo->acc[q], mq, j)] = memval(c, q, mem_off(mq, j));
        }
        int64_t size2 = ct_get(path, &after);
        if (size2 != size1 || memcmp(after, want, (size_t)size1) != 0) {
            int64_t at = 0;
            while (at < size1 && at < size2 && after[at] == want[at])
                at++;
            fprintf(stderr, "write mismatch: size %" PRId64 " expected %" PRId64
                    ", first difference at byte %" PRId64 "\n", size2, size1, at);
            for (int q = 0; q < lo->P; q++)
                fprintf(stderr, " rank %d: filetype %s\n  memtype %s\n  es %" PRId64
                        " offset %" PRId64 " count %" PRId64 " disp %" PRId64 "\n", q,
                        lo->acc[q].ft->recipe, lo->acc[q].m[0].mt->recipe, lo->acc[q].es,
                        lo->acc[q].m[0].offset, lo->acc[q].m[0].count, lo->acc[q].disp);
            ct_fail(__FILE__, __LINE__, "the file differs from the byte map");
        }
        free(want);
        free(after);
        free(before);
    }
    free(mem);
}

/* A collective read of m over view (a, tile layout); every rank checks its own buffer. */
static void do_read(const char *path, tess_file *f, const rank_acc *a, const mem_acc *m, int c,
                    int me)
{
    int64_t mlo, mlen, got = -1, expect = 0;
    unsigned char *origin, *mem = mem_buffer(m, c + 5000, me, &mlo, &mlen, &origin), *file;
    unsigned char *want = malloc((size_t)mlen);
    CT_CHECK(want);
    memcpy(want, mem, (size_t)mlen);
    int64_t fsize = ct_get(path, &file);
    for (int64_t j = 0; j < m->total; j++) {
        int64_t fo = file_off(a, m, j);
        want[GUARD - mlo + mem_off(m, j)] = fo < fsize ? file[fo] : 0;
        expect += fo < fsize;
    }
    MPI_Barrier(MPI_COMM_WORLD); /* everyone has the file before anyone reads collectively */
    tess_file_reset_stats(f);
    CT_OK(tess_file_read_at_all(f, m->offset, origin, m->count, m->mt->type, &got));
    if (got != expect || memcmp(mem, want, (size_t)mlen) != 0) {
        int64_t at = 0;
        while (at < mlen && mem[at] == want[at])
            at++;
        fprintf(stderr, "[rank %d] read mismatch: got %" PRId64 " expected %" PRId64
                " bytes, first difference at buffer byte %" PRId64 " (guard %d)\n filetype %s\n"
                " memtype %s\n es %" PRId64 " offset %" PRId64 " count %" PRId64 " base %" PRId64
                " tile %" PRId64 " file size %" PRId64 "\n", me, got, expect, at, GUARD,
                a->ft->recipe, m->mt->recipe, a->es, m->offset, m->count, a->base, a->tile,
                fsize);
        for (int64_t j = 0; j < m->total; j++)
            if (GUARD - mlo + mem_off(m, j) == at)
                fprintf(stderr, " that is data byte %" PRId64 " (file byte %" PRId64
                        "): got %d expected %d\n", j, file_off(a, m, j), mem[at], want[at]);
        ct_fail(__FILE__, __LINE__, "the read differs from the byte map");
    }
    check_stats(f, m->total);
    free(file);
    free(want);
    free(mem);
}

static void free_layout(layout *lo)
{
    for (int q = 0; q < lo->P; q++) {
        rank_acc *a = &lo->acc[q];
        rt_free(a->ft);
        rt_free(a->m[0].mt);
        rt_free(a->m[1].mt);
        tess_type_free(a->etype);
        tess_type_free(a->filetype);
    }
}

static void run_case(const char *path, int c, int P, int me)
{
    layout lo = {.P = P, .acc = calloc((size_t)P, sizeof(rank_acc))};
    hintset h;
    tess_file *f;
    CT_CHECK(lo.acc);
    for (int q = 0; q < P; q++)
        gen_rank(c, q, &lo.acc[q]);
    lay_out(&lo, c);
    gen_hints(c, P, reach(&lo) - lo.disp, &h);
    snprintf(ct_where, sizeof ct_where, "case %d (seed %llu, %s): hints", c,
             (unsigned long long)g_seed, lo.lanes ? "lanes" : "blocks");
    for (int i = 0; i < h.n && strlen(ct_where) < sizeof ct_where - 80; i += 2)
        snprintf(ct_where + strlen(ct_where), sizeof ct_where - strlen(ct_where), " %s=%s",
                 h.list[i], h.list[i + 1]);
    if (h.user)
        snprintf(ct_where + strlen(ct_where), sizeof ct_where - strlen(ct_where), " user realms");
    CT_OK(ct_open(MPI_COMM_WORLD, path, TESS_RDWR | TESS_CREATE, h.list, &f));
    if (h.user)
        set_user_realms(f, c, h.naggs);
    rank_acc *a = &lo.acc[me];
    CT_OK(tess_file_set_view(f, a->disp, a->etype, a->filetype));
    do_write(path, f, &lo, c, me);
    do_read(path, f, a, &a->m[1], c, me);
    if (c % 2) { /* every rank reads rank 0's filetype from one displacement: overlapping */
        rank_acc shared = lo.acc[0];
        rt_rng r;
        rt_seed(&r, mix3(g_seed, (uint64_t)c, (uint64_t)me + 4000));
        shared.disp = shared.base = lo.disp;
        shared.tile = shared.ft->extent;
        mem_acc m;
        gen_mem(&r, shared.ft, shared.es, false, &m);
        CT_OK(tess_file_set_view(f, shared.disp, shared.etype, shared.ft->type));
        do_read(path, f, &shared, &m, c + 10000, me);
        rt_free(m.mt);
    }
    CT_OK(tess_file_close(f));
    free_layout(&lo);
    free(lo.acc);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int P = ct_size(), me = ct_rank(), cases = argc > 1 ? atoi(argv[1]) : 100;
    char path[256];
    g_seed = argc > 2 ? strtoull(argv[2], NULL, 10) : 20240611;
    ct_path(path, sizeof path, "oracle");
    int first = argc > 3 ? atoi(argv[3]) : 0;
    for (int c = first; c < first + cases; c++)
        run_case(path, c, P, me);
    MPI_Allreduce(MPI_IN_PLACE, g_sum, 5, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    /* the forced staged path ran (the cases where it was forced exchange noncontiguous data) */
    CT_CHECK(cases < 20 || g_sum[4] > 0);
    if (me == 0) {
        unlink(path);
        printf("test_coll_oracle: %d cases on %d ranks passed (seed %llu): %lld accesses, "
               "%lld bytes exchanged between processes (%lld packed where forced), access "
               "descriptions %lld bytes (flattened: %lld)\n", cases, P,
               (unsigned long long)g_seed, (long long)g_sum[3], (long long)g_sum[0],
               (long long)g_sum[4], (long long)g_sum[1], (long long)g_sum[2]);
    }
    MPI_Finalize();
    return 0;
}
