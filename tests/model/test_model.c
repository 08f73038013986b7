/*
 * test_model.c - the cost model's formulas against values computed by hand (paper 003's T and
 * Tessera's additions), the methods' own estimates against hand-traced windows of sieve.c and
 * against a brute-force sum over the PMD plan, and the estimates of an even spread (no regions
 * given) against those of the same regions given.
 */
#include "check.h"
#include "estimates.h"
#include "method/pmd.h"

#include <math.h>
#include <string.h>

static void near(double got, double want, int line)
{
    if (!(fabs(got - want) <= 1e-9 * fabs(want) + 1e-15)) {
        fprintf(stderr, "line %d: got %.17g, want %.17g\n", line, got, want);
        exit(1);
    }
}
#define NEAR(got, want) near((got), (want), __LINE__)

/* te 0.5, s 1, tt 0.25, cud 0.25, lq_dep 0.125 for reads; s 2, tt 0.5 for writes; n 2, p 2. */
static tessi_model paper_model(void)
{
    tessi_model m = {.locks = true, .batched = true, .n = 2, .p = 2, .list_max = 4,
                     .mc = 0.01, .lock = 0.75};
    m.dir[0] = (tessi_model_dir){.te = 0.5, .s = 1, .tt = 0.25, .cud = 0.25, .lq_dep = 0.125,
                                 .list_call = 1, .list_pair = 0.5};
    m.dir[1] = (tessi_model_dir){.s = 2, .tt = 0.5};
    return m;
}

static void test_access(void)
{
    tessi_model m = paper_model();
    CHECK_OK(tessi_model_check(&m));
    /* T = te*p + tt*size/n + p*s + size*cud/n + lq_dep = 1 + 1 + 2 + 1 + 0.125 for size 8 */
    NEAR(tessi_model_access(&m, false, 8), 5.125);
    NEAR(tessi_model_call(&m, false), 3.125);
    NEAR(tessi_model_byte(&m, false), 0.25);
    NEAR(tessi_model_access(&m, true, 8), 4 + 2); /* p*s + tt*size/n */
    /* batches: one request is a call; 4 requests: p*(te + call + 4 pair) + lq_dep */
    NEAR(tessi_model_batch(&m, false, 1), 3.125);
    NEAR(tessi_model_batch(&m, false, 4), 2 * (0.5 + 1 + 2) + 0.125);
    NEAR(tessi_model_alone(&m, false), 7.125 / 4); /* a quarter batch beats a call */
    m.batched = false;
    NEAR(tessi_model_batch(&m, false, 4), 4 * 3.125);
    NEAR(tessi_model_alone(&m, false), 3.125);
}

static void test_groups(void)
{
    tessi_model m = paper_model();
    tessi_cost c = {0};
    tessi_group d = {.kind = TESSI_GROUP_DIRECT, .count = 3, .len = 50, .data = 10};
    tessi_group_cost(&m, false, &d, &c);
    NEAR(c.seconds, 3 * 3.125 + 10 * 0.25);
    CHECK(c.calls == 3 && c.bytes == 10 && c.locks == 0 && c.peak == 0);

    /* 9 regions in batches of 4: two full batches (7.125 each) and a lone one (a call) */
    c = (tessi_cost){0};
    tessi_group l = {.kind = TESSI_GROUP_LIST, .count = 9, .len = 500, .data = 90};
    tessi_group_cost(&m, false, &l, &c);
    NEAR(c.seconds, 2 * 7.125 + 3.125 + 90 * 0.25);
    CHECK(c.calls == 3 && c.bytes == 90);
    m.batched = false;
    c = (tessi_cost){0};
    tessi_group_cost(&m, false, &l, &c);
    NEAR(c.seconds, 9 * 3.125 + 90 * 0.25);
    CHECK(c.calls == 9);
    m.batched = true;

    /* sieve read of 100 bytes holding 40: one access + copy out */
    c = (tessi_cost){0};
    tessi_group s = {.kind = TESSI_GROUP_SIEVE, .count = 2, .len = 100, .data = 40};
    tessi_group_cost(&m, false, &s, &c);
    NEAR(c.seconds, 3.125 + 100 * 0.25 + 40 * 0.01);
    CHECK(c.calls == 1 && c.bytes == 100 && c.peak == 100);

    /* sieve write with holes: p*lock + read access(100) + write access(100) + copy in;
     * write call = p*s = 4, write byte = tt/n = 0.25 */
    c = (tessi_cost){0};
    s.rmw = s.lock = true;
    tessi_group_cost(&m, true, &s, &c);
    NEAR(c.seconds, 2 * 0.75 + (3.125 + 25) + (4 + 25) + 0.4);
    CHECK(c.calls == 2 && c.bytes == 200 && c.locks == 1 && c.peak == 100);
    /* all covered: no read, no lock */
    c = (tessi_cost){0};
    s.rmw = s.lock = false;
    s.data = 100;
    tessi_group_cost(&m, true, &s, &c);
    NEAR(c.seconds, 4 + 25 + 1);
    CHECK(c.calls == 1 && c.bytes == 100 && c.locks == 0);
    /* a locked group on storage without locks cannot run */
    c = (tessi_cost){0};
    s.lock = true;
    m.locks = false;
    tessi_group_cost(&m, true, &s, &c);
    CHECK(isinf(c.seconds));
}

/* Reads and writes: a call costs 1, a byte 1/1024, a copied byte 1/4096, a lock 0.5. */
static tessi_model simple_model(void)
{
    tessi_model m = {.locks = true, .batched = false, .n = 1, .p = 1, .list_max = 64,
                     .mc = 1.0 / 4096, .lock = 0.5};
    for (int w = 0; w < 2; w++)
        m.dir[w] = (tessi_model_dir){.s = 1, .tt = 1.0 / 1024};
    return m;
}

static void estimate(const tessi_model *m, bool write, int64_t buf, const tess_region *r,
                     int64_t n, method_costs *e)
{
    estimate_all(m, write, buf, r, n, 0, e);
}

static void test_estimates(void)
{
    tessi_model m = simple_model();
    method_costs e;
    /*
     * Regions [0,100) [300,400) [2000,2100) [2150,2500), buffer 1024, reads.
     * naive: 4 calls, 650 bytes. Sieve (sieve.c): window [0,1024) (the next data byte, 2000,
     * is past it), then [2000,2500) to the end of the access: 2 calls, 1524 bytes, copy 650.
     */
    tess_region r[] = {{0, 100}, {300, 100}, {2000, 100}, {2150, 350}};
    estimate(&m, false, 1024, r, 4, &e);
    NEAR(e.naive.seconds, 4 + 650.0 / 1024);
    CHECK(e.naive.calls == 4 && e.naive.bytes == 650);
    NEAR(e.list.seconds, e.naive.seconds); /* no batching: the same calls */
    NEAR(e.sieve.seconds, 2 + 1524.0 / 1024 + 650.0 / 4096);
    CHECK(e.sieve.calls == 2 && e.sieve.bytes == 1524 && e.sieve.peak == 1024);

    /*
     * Buffer 256, regions [0,100) [200,700) [1000,1010): a region crossing windows.
     * Reads: [0,256) [256,512) [512,768) (to start + buffer: data ends at 700 but the access
     * goes on) [1000,1010): 4 calls, 778 bytes.
     * Writes: windows end at their last data byte: [0,256) holds 156 of 256 (read first),
     * [256,512) and [512,700) and [1000,1010) are covered: 5 calls, 256*2 + 256 + 188 + 10
     * bytes, 1 lock (covered windows are plain writes, unlocked for a handle alone on a file).
     */
    tess_region x[] = {{0, 100}, {200, 500}, {1000, 10}};
    estimate(&m, false, 256, x, 3, &e);
    CHECK(e.sieve.calls == 4 && e.sieve.bytes == 778 && e.sieve.peak == 256);
    NEAR(e.sieve.seconds, 4 + 778.0 / 1024 + 610.0 / 4096);
    estimate(&m, true, 256, x, 3, &e);
    CHECK(e.sieve.calls == 5 && e.sieve.bytes == 966 && e.sieve.locks == 1);
    NEAR(e.sieve.seconds, 0.5 + 5 + 966.0 / 1024 + 610.0 / 4096);
    /* without locks sieve.c writes naively */
    m.locks = false;
    estimate(&m, true, 256, x, 3, &e);
    CHECK(e.sieve.calls == 3 && e.sieve.bytes == 610 && e.sieve.locks == 0);
    NEAR(e.sieve.seconds, e.naive.seconds);
    m.locks = true;

    /* a region spanning many windows: [0, 10*256 + 1) = 11 windows, all covered */
    tess_region huge = {0, 2561};
    estimate(&m, true, 256, &huge, 1, &e);
    CHECK(e.sieve.calls == 11 && e.sieve.bytes == 2561 && e.sieve.locks == 0);
    estimate(&m, false, 256, &huge, 1, &e);
    CHECK(e.sieve.calls == 11 && e.sieve.bytes == 2561);

    /* nothing: everything free */
    estimate(&m, false, 256, NULL, 0, &e);
    CHECK(e.naive.seconds == 0 && e.sieve.seconds == 0 && e.pmd.seconds == 0 &&
          e.list.seconds == 0 && e.sieve.peak == 0);

    /* batched list of 4 per call: 3 batches for 10 regions */
    m.batched = true;
    m.list_max = 4;
    m.dir[0].list_call = 0.5;
    m.dir[0].list_pair = 0.25;
    tess_region ten[10];
    for (int i = 0; i < 10; i++)
        ten[i] = (tess_region){i * 10000, 100};
    estimate(&m, false, 1 << 20, ten, 10, &e);
    CHECK(e.list.calls == 3);
    NEAR(e.list.seconds, 1.5 + 1.5 + 1.0 + 1000.0 / 1024);
}

/* The PMD estimate is the sum of the costs of the plan's groups (checked by planning again and
 * summing), and never worse than moving every region alone when the run can be a list. */
static void test_pmd_estimate(void)
{
    tessi_model m = simple_model();
    tess_region r[200];
    int64_t off = 0;
    for (int i = 0; i < 200; i++) {
        int64_t hole = (i * 7919) % 13 == 0 ? 5000 : (i * 31) % 300;
        r[i] = (tess_region){off + hole, 20 + (i * 17) % 90};
        off = r[i].off + r[i].len;
    }
    for (int w = 0; w < 2; w++) {
        method_costs e;
        estimate(&m, w, 2048, r, 200, &e);
        tessi_planner pl;
        tessi_group g[400];
        int64_t used, made, ng;
        tessi_cost sum = {0};
        CHECK_OK(tessi_plan_init(&pl, &m, w, 2048));
        CHECK_OK(tessi_plan_push(&pl, r, 200, g, 400, &used, &ng));
        CHECK_OK(tessi_plan_flush(&pl, g + ng, 2, &made));
        ng += made;
        for (int64_t k = 0; k < ng; k++)
            tessi_group_cost(&m, w, &g[k], &sum);
        NEAR(e.pmd.seconds, sum.seconds);
        CHECK(e.pmd.calls == sum.calls && e.pmd.bytes == sum.bytes && e.pmd.locks == sum.locks &&
              e.pmd.peak == sum.peak);
        CHECK(e.pmd.seconds <= e.naive.seconds * (1 + 1e-12));
        CHECK(e.pmd.peak <= 2048 && e.pmd.peak <= e.sieve.peak);
    }
}

static void test_params(void)
{
    tessi_model m;
    tessi_model_defaults(&m);
    CHECK_OK(tessi_model_check(&m));
    CHECK(m.n == 1 && m.p == 1 && m.list_max == TESSI_MODEL_LIST_MAX && m.locks && m.batched);
    for (int id = 0; id < TESSI_NPARAMS; id++) {
        CHECK(tessi_param_key(id)[0] && tessi_param_doc(id)[0]);
        CHECK(strcmp(tessi_param_unit(id), "s") == 0 || strcmp(tessi_param_unit(id), "s/B") == 0);
        for (int j = 0; j < id; j++)
            CHECK(strcmp(tessi_param_key(id), tessi_param_key(j)) != 0);
        tessi_model t = m;
        tessi_param_set(&t, id, 123.5);
        CHECK(tessi_param_get(&t, id) == 123.5);
        t = m;
        tessi_param_set(&t, id, -1);
        CHECK_ERR(tessi_model_check(&t), TESS_ERR_ARG);
        tessi_param_set(&t, id, NAN);
        CHECK_ERR(tessi_model_check(&t), TESS_ERR_ARG);
        tessi_param_set(&t, id, INFINITY);
        CHECK_ERR(tessi_model_check(&t), TESS_ERR_ARG);
    }
    CHECK(tessi_param_get(&m, TESSI_PARAM_READ_S) == m.dir[0].s);
    CHECK(tessi_param_get(&m, TESSI_PARAM_WRITE_TT) == m.dir[1].tt);
    CHECK(tessi_param_get(&m, TESSI_PARAM_LOCK) == m.lock);
    CHECK(isnan(tessi_param_get(&m, TESSI_NPARAMS)) && tessi_param_key(-1)[0] == '\0');
    tessi_model t = m;
    t.n = 0;
    CHECK_ERR(tessi_model_check(&t), TESS_ERR_ARG);
    t = m;
    t.list_max = 0;
    CHECK_ERR(tessi_model_check(&t), TESS_ERR_ARG);
    CHECK_ERR(tessi_model_check(NULL), TESS_ERR_ARG);
    tessi_planner pl;
    tessi_group g[TESSI_PLAN_EMIT_MAX];
    int64_t used, made;
    CHECK_ERR(tessi_plan_init(&pl, &m, false, 0), TESS_ERR_ARG);
    CHECK_OK(tessi_plan_init(&pl, &m, false, 10));
    tess_region bad[] = {{10, 5}, {12, 5}};
    CHECK_ERR(tessi_plan_push(&pl, bad, 2, g, TESSI_PLAN_EMIT_MAX, &used, &made), TESS_ERR_ARG);
    CHECK(pl.next == 1); /* the first went in; the overlapping one changed nothing */
    /* pmd's estimate of regions that go back is no plan: infinitely expensive */
    method_costs e;
    estimate(&m, false, 10, bad, 2, &e);
    CHECK(isinf(e.pmd.seconds));
}

/*
 * No regions given (nr == 0, as the collective policy prices a rank from its record): naive
 * and list are exact; sieve and pmd price an even spread, which is what a strided pattern is,
 * so they agree with the regions given when the spread fills whole windows and groups.
 */
static void test_spread(void)
{
    tessi_model m = simple_model();
    m.batched = true;
    m.dir[0].list_call = m.dir[1].list_call = 0.5;
    m.dir[0].list_pair = m.dir[1].list_pair = 1.0 / 64;
    static tess_region r[4096];
    const int64_t lens[] = {8, 100, 1000}, holes[] = {8, 64, 1000, 20000};
    for (int w = 0; w < 2; w++)
        for (int li = 0; li < 3; li++)
            for (int hi = 0; hi < 4; hi++) {
                int64_t len = lens[li], hole = holes[hi], n = 4096;
                int64_t buf = 64 * (len + hole) - hole; /* groups and windows of 64 regions */
                for (int64_t i = 0; i < n; i++)
                    r[i] = (tess_region){i * (len + hole), len};
                method_costs exact, spread;
                estimate(&m, w, buf, r, n, &exact);
                tessi_est e = test_est(&m, w, buf, r, n, 0);
                e.nr = 0;
                e.r = NULL;
                tessi_method_naive.estimate(&e, &spread.naive);
                tessi_method_list.estimate(&e, &spread.list);
                tessi_method_sieve.estimate(&e, &spread.sieve);
                tessi_method_pmd.estimate(&e, &spread.pmd);
                NEAR(spread.naive.seconds, exact.naive.seconds);
                NEAR(spread.list.seconds, exact.list.seconds);
                NEAR(spread.pmd.seconds, exact.pmd.seconds);
                CHECK(spread.pmd.calls == exact.pmd.calls);
                NEAR(spread.sieve.seconds, exact.sieve.seconds);
                CHECK(spread.sieve.calls == exact.sieve.calls &&
                      spread.sieve.bytes == exact.sieve.bytes);
                CHECK(spread.sieve.peak == exact.sieve.peak);
            }
    /* nothing to move costs nothing, with or without regions */
    tessi_est none = {.m = &m, .buf = 1};
    method_costs z;
    tessi_method_pmd.estimate(&none, &z.pmd);
    tessi_method_sieve.estimate(&none, &z.sieve);
    CHECK(z.pmd.seconds == 0 && z.sieve.seconds == 0 && z.sieve.peak == 0);
}

/* Object and object offset of file byte x in a RAID-0 striping (unit, factor objects per row,
 * objsize bytes per object), by the forward mapping. */
static int64_t object_of(int64_t x, int64_t unit, int64_t factor, int64_t objsize,
                         int64_t *objoff)
{
    int64_t rows = objsize / unit, row = x / unit / factor;
    *objoff = (row % rows) * unit + x % unit;
    return (row / rows) * factor + (x / unit) % factor;
}

/*
 * Datatype I/O's estimate prices what the RADOS driver sends: one request per object touched;
 * a compound request where the object's extents (runs contiguous in the object and in the
 * stream) are at most list_max, priced as list batches of those extents, else the servers'
 * program at dt_call plus dt_region per extent. Expected here by brute force over every byte.
 * Where every object's extents fit, the price is list's for the same regions. Without
 * datatype I/O on the storage: list's price.
 */
static void test_datatype_estimate(void)
{
    tessi_model m;
    tessi_model_defaults(&m);
    m.dtio = true;
    m.unit = 4096, m.factor = 3, m.objsize = 4 * 4096;
    static int64_t end[64], s_end[64], ext[64];
    unsigned seed = 7;
    int mixed = 0;
    for (int round = 0; round < 300; round++) {
        tess_region r[40];
        int64_t n = 1 + round % 40, at = 0;
        m.list_max = 1 + round % 7;
        for (int64_t i = 0; i < n; i++) {
            seed = seed * 1103515245u + 12345u;
            r[i].off = at + (seed >> 8) % (round % 2 ? 9000 : 300);
            r[i].len = 1 + (seed >> 4) % (round % 3 ? 5000 : 40);
            at = r[i].off + r[i].len;
        }
        for (int o = 0; o < 64; o++)
            end[o] = s_end[o] = -1, ext[o] = 0;
        int64_t spos = 0;
        for (int64_t i = 0; i < n; i++)
            for (int64_t x = r[i].off; x < r[i].off + r[i].len; x++, spos++) {
                int64_t off, o = object_of(x, m.unit, m.factor, m.objsize, &off);
                CHECK(o < 64);
                ext[o] += off != end[o] || spos != s_end[o];
                end[o] = off + 1, s_end[o] = spos + 1;
            }
        int64_t objects = 0, programs = 0, program_ext = 0, compound_ext = 0;
        for (int o = 0; o < 64; o++) {
            objects += ext[o] > 0;
            programs += ext[o] > m.list_max;
            program_ext += ext[o] > m.list_max ? ext[o] : 0;
            compound_ext += ext[o] <= m.list_max ? ext[o] : 0;
        }
        mixed += programs > 0 && programs < objects;
        for (int w = 0; w < 2; w++) {
            tessi_est e = test_est(&m, w, 1, r, n, 0);
            tessi_cost c, list = {.seconds = 0};
            tessi_group g = {.kind = TESSI_GROUP_LIST, .count = compound_ext};
            if (compound_ext)
                tessi_group_cost(&m, w, &g, &list);
            tessi_method_datatype.estimate(&e, &c);
            CHECK(c.calls == objects && c.bytes == e.bytes && c.peak == 0);
            near(c.seconds, list.seconds + (double)programs * m.dir[w].dt_call +
                                (double)program_ext * m.dir[w].dt_region +
                                (double)e.bytes * tessi_model_byte(&m, w), __LINE__);
        }
    }
    CHECK(mixed > 10); /* the rounds exercise calls with both kinds of request */
    /* block3d's shape: rows inside stripe units, 8 per object: the requests and price are list's */
    m.list_max = 64;
    m.factor = 4;
    m.dir[0].dt_call = m.dir[1].dt_call = 1e-3;
    tess_region rows[32];
    for (int i = 0; i < 32; i++)
        rows[i] = (tess_region){.off = 4096 * (i / 8) + 256 * (i % 8), .len = 64};
    for (int w = 0; w < 2; w++) {
        tessi_est e = test_est(&m, w, 1 << 20, rows, 32, 0);
        tessi_cost c, l;
        tessi_method_datatype.estimate(&e, &c);
        tessi_method_list.estimate(&e, &l);
        CHECK(c.calls == 4);
        near(c.seconds, l.seconds, __LINE__);
        m.list_max = 4; /* 8 extents per object: the program */
        tessi_method_datatype.estimate(&e, &c);
        near(c.seconds, 4 * 1e-3 + 32 * m.dir[w].dt_region + 2048 * tessi_model_byte(&m, w),
             __LINE__);
        m.list_max = 64;
    }
    /* without regions: the units of the extent; without striping: one object per call */
    tessi_est e = {.m = &m, .buf = 1, .bytes = 100, .regions = 10, .lo = 4096, .hi = 4 * 4096,
                   .pieces = 10};
    tessi_cost c, l;
    tessi_method_datatype.estimate(&e, &c);
    CHECK(c.calls == 3);
    for (int k = 0; k < 50; k++) { /* across object sets: the objects by brute force */
        seed = seed * 1103515245u + 12345u;
        e.lo = (seed >> 8) % 100000;
        e.hi = e.lo + 1 + (seed >> 4) % 200000;
        memset(ext, 0, sizeof ext);
        int64_t objects = 0, off;
        for (int64_t x = e.lo; x < e.hi; x += 64) {
            int64_t o = object_of(x, m.unit, m.factor, m.objsize, &off);
            CHECK(o < 64);
            objects += !ext[o];
            ext[o] = 1;
        }
        int64_t last = object_of(e.hi - 1, m.unit, m.factor, m.objsize, &off);
        objects += !ext[last];
        tessi_method_datatype.estimate(&e, &c);
        CHECK(c.calls == objects);
    }
    m.unit = 0;
    tessi_method_datatype.estimate(&e, &c);
    CHECK(c.calls == 1);
    /* a strided access of many regions: datatype where a request costs little against many
     * list batches, list where datatype's requests are dear; no datatype I/O: list's price */
    e.regions = e.pieces = 10000;
    e.bytes = 80000;
    e.hi = 100000000;
    e.buf = 1 << 20;
    m.dir[0].dt_call = 1e-4;
    m.dir[0].dt_region = 1e-8;
    CHECK(tessi_method_cheapest(NULL, &e, NULL) == &tessi_method_datatype);
    m.dir[0].dt_call = 10;
    CHECK(tessi_method_cheapest(NULL, &e, NULL) != &tessi_method_datatype);
    m.dtio = false;
    tessi_method_datatype.estimate(&e, &c);
    tessi_method_list.estimate(&e, &l);
    CHECK(c.seconds == l.seconds && c.calls == l.calls);
}

/* An overwrite of recent data is priced with the dirty write figures; reads and clean writes
 * are not touched. Recent: inside one of the last writes, less than TESSI_DIRTY_SECONDS ago. */
static void test_dirty(void)
{
    tessi_model m = paper_model(), d;
    m.dir[1].s_dirty = 0.5;
    m.dir[1].tt_dirty = 0.125;
    tessi_model_dirty(&m, &d);
    NEAR(tessi_model_access(&d, true, 8), 2 * 0.5 + 8 * 0.125 / 2);
    NEAR(tessi_model_access(&d, false, 8), tessi_model_access(&m, false, 8));
    CHECK(d.dir[1].list_call == m.dir[1].list_call && d.mc == m.mc && d.lock == m.lock);
    tessi_memo memo = {.next_recent = 0};
    CHECK(!tessi_memo_dirty(&memo, 0, 64, 100.0));     /* new data */
    CHECK(tessi_memo_dirty(&memo, 0, 64, 101.0));      /* the same again */
    CHECK(tessi_memo_dirty(&memo, 16, 32, 102.0));     /* inside it */
    CHECK(!tessi_memo_dirty(&memo, 32, 96, 103.0));    /* partly new */
    CHECK(!tessi_memo_dirty(&memo, 1000, 1064, 104.0));
    CHECK(!tessi_memo_dirty(&memo, 40, 50, 103.0 + TESSI_DIRTY_SECONDS)); /* written back by now */
    for (int k = 0; k < TESSI_RECENT_WRITES; k++) /* pushed out by other writes */
        tessi_memo_dirty(&memo, 5000 + 100 * k, 5050 + 100 * k, 200.0);
    CHECK(!tessi_memo_dirty(&memo, 1000, 1064, 201.0));
}

int main(void)
{
    test_access();
    test_datatype_estimate();
    test_groups();
    test_estimates();
    test_pmd_estimate();
    test_params();
    test_spread();
    test_dirty();
    printf("test_model: ok\n");
    return 0;
}
