/*
 * test_pmd_grouping.c - PMD Algorithms 1 and 2 (paper 003) on hand-made region lists. The
 * model parameters are chosen so every cost is exact in binary (a call costs 1, a byte 1/1024),
 * and each expected plan is worked out by hand in the comments. Then: the plan does not depend
 * on how the regions are chunked, and on random lists every plan is a valid cover (checked by
 * brute force against the region list). Last, the documented default parameters against the
 * orderings measured on the machine they describe.
 */
#include "check.h"
#include "method/pmd.h"


/* Reads and writes: one call costs 1, one byte 1/1024; no copy cost; a lock pair 1/2; no list
 * batching. Algorithm 1 for reads then joins a region iff its hole < 1024 bytes. */
static tessi_model unit_model(void)
{
    tessi_model m = {.locks = true, .batched = false, .n = 1, .p = 1, .list_max = 64,
                     .lock = 0.5};
    for (int w = 0; w < 2; w++) {
        m.dir[w].s = 1.0;
        m.dir[w].tt = 1.0 / 1024;
    }
    return m;
}

#define MAXG 64

/* Plan all regions, feeding them in chunks of `chunk` and draining with the smallest output
 * array allowed (so the partial-consumption path runs), then flush. */
static int64_t plan(const tessi_model *m, bool write, int64_t buf, const tess_region *r,
                    int64_t n, int64_t chunk, tessi_group *g)
{
    tessi_planner pl;
    int64_t ng = 0;
    CHECK_OK(tessi_plan_init(&pl, m, write, buf));
    for (int64_t i = 0; i < n;) {
        int64_t take = n - i < chunk ? n - i : chunk, used, made;
        CHECK_OK(tessi_plan_push(&pl, r + i, take, g + ng, TESSI_PLAN_EMIT_MAX, &used, &made));
        CHECK(used >= 1 && used <= take);
        ng += made;
        i += used;
        CHECK(ng + TESSI_PLAN_EMIT_MAX <= MAXG);
    }
    int64_t made;
    CHECK_OK(tessi_plan_flush(&pl, g + ng, TESSI_PLAN_EMIT_MAX, &made));
    return ng + made;
}

/* An expected group: kind, first region, count, offset, length, data (GW: and rmw == lock). */
#define G(k, f, c, o, l, d)                                                                    \
    {.kind = TESSI_GROUP_##k, .first = f, .count = c, .off = o, .len = l, .data = d}
#define GW(k, f, c, o, l, d, rmw_)                                                             \
    {.kind = TESSI_GROUP_##k, .first = f, .count = c, .off = o, .len = l, .data = d,           \
     .rmw = rmw_, .lock = rmw_}

static bool same(const tessi_group *a, const tessi_group *b)
{
    return a->kind == b->kind && a->first == b->first && a->count == b->count &&
           a->off == b->off && a->len == b->len && a->data == b->data && a->rmw == b->rmw &&
           a->lock == b->lock;
}

static void expect(const tessi_model *m, bool write, int64_t buf, const tess_region *r, int64_t n,
                   const tessi_group *want, int64_t nwant)
{
    tessi_group got[MAXG];
    for (int64_t chunk = 1; chunk <= n + 1; chunk += (chunk < 4 ? 1 : n)) {
        int64_t ng = plan(m, write, buf, r, n, chunk, got);
        if (ng != nwant) {
            fprintf(stderr, "expected %lld groups, got %lld (chunk %lld)\n", (long long)nwant,
                    (long long)ng, (long long)chunk);
            exit(1);
        }
        for (int64_t i = 0; i < ng; i++) {
            const tessi_group *a = &got[i], *b = &want[i];
            if (!same(a, b)) {
                fprintf(stderr,
                        "group %lld: got kind %d first %lld count %lld off %lld len %lld data "
                        "%lld rmw %d lock %d; want kind %d first %lld count %lld off %lld len "
                        "%lld data %lld rmw %d lock %d\n",
                        (long long)i, a->kind, (long long)a->first, (long long)a->count,
                        (long long)a->off, (long long)a->len, (long long)a->data, a->rmw,
                        a->lock, b->kind, (long long)b->first, (long long)b->count,
                        (long long)b->off, (long long)b->len, (long long)b->data, b->rmw,
                        b->lock);
                exit(1);
            }
        }
    }
}

/* Regions of len bytes every stride bytes from off. */
static void strided(tess_region *r, int64_t n, int64_t off, int64_t len, int64_t stride)
{
    for (int64_t i = 0; i < n; i++)
        r[i] = (tess_region){off + i * stride, len};
}

static void test_algorithm1(void)
{
    tessi_model m = unit_model();
    /* read: join iff hole/1024 < 1: the break-even hole of 1024 bytes is not sieved */
    CHECK(tessi_pmd_join(&m, false, true, 1023, 100));
    CHECK(!tessi_pmd_join(&m, false, true, 1024, 100));
    CHECK(tessi_pmd_join(&m, false, true, 0, 5000));
    /* write: hole read and rewritten, region read: 2*hole + len < 1024 */
    CHECK(tessi_pmd_join(&m, true, true, 400, 223));  /* 1023 */
    CHECK(!tessi_pmd_join(&m, true, true, 400, 224)); /* 1024: break-even */
    /* adjacent to an all-covered group: no read needed, only the copy (0 here) */
    CHECK(tessi_pmd_join(&m, true, true, 0, 1 << 20));
    CHECK(!tessi_pmd_join(&m, true, false, 0, 1 << 20));
    /* the copy counts: with mc = 1/1024 a 100-byte region after a 1000-byte hole breaks even
     * at 1100/1024 > 1 */
    m.mc = 1.0 / 1024;
    CHECK(!tessi_pmd_join(&m, false, true, 1000, 100));
    CHECK(tessi_pmd_join(&m, false, true, 900, 100));
    /* p processes multiply the call the join saves (paper 003: p*(seek + syscall)) */
    m.mc = 0;
    m.p = 16;
    CHECK(tessi_pmd_join(&m, false, true, 16383, 100));
    CHECK(!tessi_pmd_join(&m, false, true, 16384, 100));
    /* no locks: a write never sieves across a hole */
    m.p = 1;
    m.locks = false;
    CHECK(!tessi_pmd_join(&m, true, true, 1, 1));
    CHECK(tessi_pmd_join(&m, true, true, 0, 1));
}

static void test_boundaries(void)
{
    tessi_model m = unit_model();
    tessi_group g[MAXG];
    /* empty list: nothing */
    CHECK(plan(&m, false, 1024, NULL, 0, 1, g) == 0);
    /* one region: moved directly */
    tess_region one[] = {{5000, 100}};
    tessi_group w1[] = {G(DIRECT, 0, 1, 5000, 100, 100)};
    expect(&m, false, 1024, one, 1, w1, 1);
    /* the buffer: an extent of exactly 1024 is one group, 1025 is not */
    tess_region fit[] = {{0, 600}, {700, 324}};
    tessi_group wfit[] = {G(SIEVE, 0, 2, 0, 1024, 924)};
    expect(&m, false, 1024, fit, 2, wfit, 1);
    tess_region over[] = {{0, 600}, {700, 325}};
    tessi_group wover[] = {G(DIRECT, 0, 2, 0, 1025, 925)};
    expect(&m, false, 1024, over, 2, wover, 1);
    /* a region longer than the buffer is always alone */
    tess_region big[] = {{0, 5000}, {5010, 10}};
    tessi_group wbig[] = {G(DIRECT, 0, 2, 0, 5020, 5010)};
    expect(&m, false, 1024, big, 2, wbig, 1);
    /* the break-even hole: 1023 joins, 1024 does not */
    tess_region even[] = {{0, 100}, {1123, 100}, {2247, 100}};
    tessi_group weven[] = {G(SIEVE, 0, 2, 0, 1223, 200), G(DIRECT, 2, 1, 2247, 100, 100)};
    expect(&m, false, 4096, even, 3, weven, 2);
}

/* Paper 003 scenario 3: dense, small holes. 20 regions of 100 bytes every 128: every hole (28)
 * joins; the 1024-byte buffer holds 8 regions (8*128 - 28 = 996; 9 would need 1124). */
static void test_dense(void)
{
    tessi_model m = unit_model();
    tess_region r[20];
    strided(r, 20, 0, 100, 128);
    tessi_group want[] = {G(SIEVE, 0, 8, 0, 996, 800), G(SIEVE, 8, 8, 1024, 996, 800),
                          G(SIEVE, 16, 4, 2048, 484, 400)};
    expect(&m, false, 1024, r, 20, want, 3);
}

/* Paper 003 scenario 2: sparse, large holes. Holes of 9900 bytes never join: one run of ten
 * direct calls; and as one list run when batches are cheap. */
static void test_sparse(void)
{
    tessi_model m = unit_model();
    tess_region r[10];
    strided(r, 10, 0, 100, 10000);
    tessi_group want[] = {G(DIRECT, 0, 10, 0, 90100, 1000)};
    expect(&m, false, 1 << 20, r, 10, want, 1);
    /* batches of 4: batch(k) = 0.5 + 0.25 k. Ten regions: 1.5 + 1.5 + batch(2) = 4 < 10. */
    m.batched = true;
    m.list_max = 4;
    m.dir[0].list_call = 0.5;
    m.dir[0].list_pair = 0.25;
    tessi_group wlist[] = {G(LIST, 0, 10, 0, 90100, 1000)};
    expect(&m, false, 1 << 20, r, 10, wlist, 1);
    /* one lone region: a batch of one is a plain call, a tie: DIRECT */
    tessi_group wone[] = {G(DIRECT, 0, 1, 0, 100, 100)};
    expect(&m, false, 1 << 20, r, 1, wone, 1);
}

/*
 * Paper 003 scenario 1: mixed region and hole sizes (buffer 4096).
 *  r0 [0,100) r1 [200,300) r2 [400,1400): holes 100, 100 join; r3 at 5000 (hole 3600) closes
 *    {r0..r2}: sieve 1 + 1400/1024 < alone 3 + 1200/1024: SIEVE.
 *  r3 [5000,5050): r4 at 7000 (hole 1950) closes {r3}: one region, to the run.
 *  r4 [7000,7010) r5 [7500,7600): hole 490 joins; r6 at 20000 closes {r4,r5}:
 *    1 + 600/1024 < 2 + 110/1024: the run {r3} goes out DIRECT, then the SIEVE group.
 *  r6 [20000,20100) r7 [21123,21200): hole 1023 joins; r8 at 22224 (hole 1024) closes it:
 *    1 + 1200/1024 = 2224/1024 < 2 + 177/1024 = 2225/1024: SIEVE (by 1/1024).
 *  r8 [22224,22300): alone to the end: DIRECT.
 */
static void test_mixed(void)
{
    tessi_model m = unit_model();
    tess_region r[] = {{0, 100},    {200, 100},   {400, 1000},  {5000, 50},   {7000, 10},
                       {7500, 100}, {20000, 100}, {21123, 77},  {22224, 76}};
    tessi_group want[] = {G(SIEVE, 0, 3, 0, 1400, 1200), G(DIRECT, 3, 1, 5000, 50, 50),
                          G(SIEVE, 4, 2, 7000, 600, 110), G(SIEVE, 6, 2, 20000, 1200, 177),
                          G(DIRECT, 8, 1, 22224, 76, 76)};
    expect(&m, false, 4096, r, 9, want, 5);
}

/*
 * With list batches cheaper than calls (alone = batch(4)/4 = 0.375), sieving must beat 0.375
 * per region: two regions with a 383-byte hole join (383/1024 < 0.375) but the closed group,
 * 1 + 583/1024, loses to 2*0.375 + 200/1024, so both go to the run (a LIST of 2: 0.5 + 0.5 = 1
 * < 2 calls). Twenty regions of 100 every 200 within a 4096 buffer: 1 + 3900/1024 < 7.5 +
 * 2000/1024: SIEVE.
 */
static void test_list_alternative(void)
{
    tessi_model m = unit_model();
    m.batched = true;
    m.list_max = 4;
    m.dir[0].list_call = 0.5;
    m.dir[0].list_pair = 0.25;
    tess_region two[] = {{0, 100}, {483, 100}};
    tessi_group wtwo[] = {G(LIST, 0, 2, 0, 583, 200)};
    expect(&m, false, 4096, two, 2, wtwo, 1);
    tess_region r[20];
    strided(r, 20, 0, 100, 200);
    tessi_group want[] = {G(SIEVE, 0, 20, 0, 3900, 2000)};
    expect(&m, false, 4096, r, 20, want, 1);
}

/*
 * Writes (RMW): ten 10-byte regions with 10-byte holes join (2*10 + 10 < 1024); the group
 * costs lock 0.5 + read (1 + 190/1024) + write (1 + 190/1024) = 2.5 + 380/1024 < 10 + 100/1024:
 * SIEVE with read-modify-write under lock. Two such regions: 2.5 + 60/1024 > 2 + 20/1024: the
 * group's fixed costs are not paid back, DIRECT. Adjacent regions (a group all covered): no
 * read, no lock: 1 + 20/1024 < 2 + 20/1024: SIEVE. Without locks no write sieves across holes.
 */
static void test_writes(void)
{
    tessi_model m = unit_model();
    tess_region r[10];
    strided(r, 10, 0, 10, 20);
    tessi_group want[] = {GW(SIEVE, 0, 10, 0, 190, 100, true)};
    expect(&m, true, 1024, r, 10, want, 1);
    tessi_group wtwo[] = {GW(DIRECT, 0, 2, 0, 30, 20, false)};
    expect(&m, true, 1024, r, 2, wtwo, 1);
    tess_region adj[] = {{0, 10}, {10, 10}};
    tessi_group wadj[] = {GW(SIEVE, 0, 2, 0, 20, 20, false)};
    expect(&m, true, 1024, adj, 2, wadj, 1);
    m.locks = false;
    tessi_group wnolock[] = {GW(DIRECT, 0, 10, 0, 190, 100, false)};
    expect(&m, true, 1024, r, 10, wnolock, 1);
}

/* Paper 003 Fig. 3: more processes make calls dearer, so sieving pays across larger holes. */
static void test_processes(void)
{
    tessi_model m = unit_model();
    tess_region r[4];
    strided(r, 4, 0, 100, 2100); /* holes of 2000 */
    tessi_group one[] = {G(DIRECT, 0, 4, 0, 6400, 400)};
    expect(&m, false, 1 << 20, r, 4, one, 1);
    m.p = 16;
    tessi_group many[] = {G(SIEVE, 0, 4, 0, 6400, 400)};
    expect(&m, false, 1 << 20, r, 4, many, 1);
}

static void test_errors(void)
{
    tessi_model m = unit_model();
    tessi_planner pl;
    tessi_group g[4];
    int64_t used, made;
    CHECK_ERR(tessi_plan_init(&pl, &m, false, 0), TESS_ERR_ARG);
    tessi_model bad = m;
    bad.dir[0].s = -1;
    CHECK_ERR(tessi_plan_init(&pl, &bad, false, 10), TESS_ERR_ARG);
    CHECK_OK(tessi_plan_init(&pl, &m, false, 1024));
    tess_region r[] = {{100, 10}, {105, 10}};
    CHECK_ERR(tessi_plan_push(&pl, r, 2, g, 1, &used, &made), TESS_ERR_ARG); /* cap < 2 */
    CHECK_ERR(tessi_plan_push(&pl, r, 2, g, 4, &used, &made), TESS_ERR_ARG); /* overlap */
    CHECK(used == 1);
    tess_region empty = {200, 0}, back = {50, 5}, wrap = {INT64_MAX - 5, 10}, neg = {-1, 5};
    CHECK_ERR(tessi_plan_push(&pl, &empty, 1, g, 4, &used, &made), TESS_ERR_ARG);
    CHECK_ERR(tessi_plan_push(&pl, &back, 1, g, 4, &used, &made), TESS_ERR_ARG);
    CHECK_ERR(tessi_plan_push(&pl, &wrap, 1, g, 4, &used, &made), TESS_ERR_ARG);
    CHECK_ERR(tessi_plan_push(&pl, &neg, 1, g, 4, &used, &made), TESS_ERR_ARG);
    CHECK_ERR(tessi_plan_flush(&pl, g, 1, &made), TESS_ERR_ARG);
    /* after the rejected regions the planner still holds the first one */
    CHECK_OK(tessi_plan_flush(&pl, g, 4, &made));
    CHECK(made == 1 && g[0].first == 0 && g[0].count == 1 && g[0].off == 100);
}

static uint64_t rng = 88172645463325252u;
static int64_t rnd(int64_t n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (int64_t)(rng % (uint64_t)n);
}

/* Random lists and models: the plan covers every region once, in order, with consistent
 * extents; SIEVE groups fit the buffer; chunking changes nothing; flushing mid-way still
 * covers. Checked against the region list by brute force. */
static void test_random(void)
{
    enum { N = 300 };
    static tess_region r[N];
    static tessi_group a[N * 2], b[N * 2];
    for (int trial = 0; trial < 300; trial++) {
        tessi_model m = unit_model();
        m.dir[0].s = m.dir[1].s = 0.1 + (double)rnd(100) / 10;
        m.mc = (double)rnd(3) / 4096;
        m.lock = (double)rnd(4);
        m.locks = rnd(4) != 0;
        m.batched = rnd(2);
        m.list_max = 1 + rnd(8);
        m.dir[0].list_call = m.dir[1].list_call = (double)rnd(4) / 2;
        m.dir[0].list_pair = m.dir[1].list_pair = (double)rnd(4) / 4;
        m.p = 1 + rnd(4);
        bool write = rnd(2);
        int64_t buf = 1 + rnd(5000), n = rnd(N), off = rnd(100);
        for (int64_t i = 0; i < n; i++) {
            int64_t hole = rnd(4) == 0 ? rnd(20000) : rnd(3) == 0 ? 0 : rnd(600);
            r[i] = (tess_region){off + hole, 1 + rnd(rnd(5) == 0 ? 3000 : 200)};
            off = r[i].off + r[i].len;
        }
        tessi_planner pl;
        int64_t na = 0, nb = 0, used, made;
        CHECK_OK(tessi_plan_init(&pl, &m, write, buf));
        CHECK_OK(tessi_plan_push(&pl, r, n, a, N * 2, &used, &made));
        CHECK(used == n); /* room for 2 groups per region: everything is consumed */
        na = made;
        CHECK_OK(tessi_plan_flush(&pl, a + na, 2, &made));
        na += made;
        /* chunked in random pieces, with a flush at a random point */
        int64_t cut = n ? rnd(n) : 0;
        CHECK_OK(tessi_plan_init(&pl, &m, write, buf));
        for (int64_t i = 0; i < n;) {
            int64_t take = 1 + rnd(7);
            if (take > n - i)
                take = n - i;
            if (i <= cut && cut < i + take)
                take = cut - i + 1;
            CHECK_OK(tessi_plan_push(&pl, r + i, take, b + nb, 2, &used, &made));
            nb += made;
            i += used;
            if (i == cut + 1 && trial % 2) {
                CHECK_OK(tessi_plan_flush(&pl, b + nb, 2, &made));
                nb += made;
            }
        }
        CHECK_OK(tessi_plan_flush(&pl, b + nb, 2, &made));
        nb += made;
        if (trial % 2 == 0) /* no mid-way flush: exactly the same plan */
            for (int64_t k = 0; k < na || k < nb; k++)
                CHECK(na == nb && same(&a[k], &b[k]));
        for (int pass = 0; pass < 2; pass++) {
            const tessi_group *g = pass ? b : a;
            int64_t ng = pass ? nb : na, next = 0;
            for (int64_t k = 0; k < ng; k++) {
                CHECK(g[k].first == next && g[k].count >= 1 && next + g[k].count <= n);
                int64_t data = 0, last = g[k].first + g[k].count - 1;
                for (int64_t i = g[k].first; i <= last; i++)
                    data += r[i].len;
                CHECK(g[k].off == r[g[k].first].off);
                CHECK(g[k].len == r[last].off + r[last].len - g[k].off);
                CHECK(g[k].data == data);
                if (g[k].kind == TESSI_GROUP_SIEVE) {
                    CHECK(g[k].count >= 2 && g[k].len <= buf);
                    CHECK(g[k].rmw == (write && data < g[k].len) && g[k].lock == g[k].rmw);
                    CHECK(!g[k].lock || m.locks);
                } else {
                    CHECK(!g[k].rmw && !g[k].lock);
                    CHECK(g[k].kind == TESSI_GROUP_DIRECT || m.batched);
                }
                next += g[k].count;
            }
            CHECK(next == n);
        }
    }
}

/*
 * The documented defaults against orderings measured on the machine they describe (model.h),
 * page cache, files in 1 MiB folios, ms per access:
 *  - `tessera bench pmd`'s sweep, 1024 regions of 1 KiB, one process, fifteen runs in November
 *    2026. Reads (4 MiB windows): at 4 KiB holes classic sieving took 0.33-0.71 and one call
 *    per region 0.79-1.07; at 16 KiB holes sieving 1.70-2.34, the calls 0.68-1.07. Writes onto
 *    dirty pages (512 KiB windows): at 8 KiB holes sieving 1.51-2.28, the calls 2.74-4.43; at
 *    64 KiB holes sieving 11.3-16.8, the calls 4.37-7.35. (At 8 KiB holes for reads and 16 KiB
 *    for writes the two tied within the spread: no order to check.)
 *  - `tessera bench hpio --pattern pfr --quick`, two processes writing one file at once, 128
 *    regions of 3200 B with 22400-byte holes each per call onto dirty pages, under Open MPI and
 *    MPICH: sieving 0.45-0.50, the calls 1.4-1.8 (each pwrite waits for the other process's).
 * The plan must sieve where sieving was faster in every run and move every region alone where
 * the calls were.
 */
static bool sieves(bool write, int64_t n, int64_t len, int64_t hole, int64_t p)
{
    static tess_region r[1024];
    tessi_group g[MAXG];
    tessi_model d, m;
    tessi_model_defaults(&d);
    tessi_model_dirty(&d, &m);
    m.p = p;
    strided(r, n, 0, len, len + hole);
    int64_t ng = plan(&m, write, write ? 512 << 10 : 4 << 20, r, n, n, g), sieved = 0;
    for (int64_t i = 0; i < ng; i++)
        sieved += g[i].kind == TESSI_GROUP_SIEVE ? g[i].count : 0;
    CHECK(sieved == 0 || sieved > n / 2); /* one way for the whole even spread */
    return sieved > 0;
}

static void test_defaults_measured(void)
{
    CHECK(sieves(false, 1024, 1024, 4096, 1));
    CHECK(!sieves(false, 1024, 1024, 16384, 1));
    CHECK(sieves(true, 1024, 1024, 8192, 1));
    CHECK(!sieves(true, 1024, 1024, 65536, 1));
    CHECK(sieves(true, 128, 3200, 22400, 2));
}

int main(void)
{
    test_algorithm1();
    test_boundaries();
    test_dense();
    test_sparse();
    test_mixed();
    test_list_alternative();
    test_writes();
    test_processes();
    test_errors();
    test_random();
    test_defaults_measured();
    printf("test_pmd_grouping: ok\n");
    return 0;
}
