/*
 * test_coll_policy.c - the collective decision (coll/policy.c) on constructed records, without
 * a group: each case states what the answer must be and why, from the shape of the access and
 * what the group measured, not from the model's figures.
 *  - every rank reading or writing one contiguous block of its own goes independent;
 *  - writes of 8-byte elements interleaved between the ranks go two-phase (one large access
 *    per aggregator instead of thousands of small ones or read-modify-writes per rank);
 *  - PFR (paper 002 section 6.4: each rank 512 records of 3200 B, 100 KiB apart): priced with
 *    the exchange a crowded machine showed (40 times the model's) it goes independent, and the
 *    two-phase price grows with the measured factor and the measured collective step;
 *  - the prices of equal records are reused and records of new shapes priced afresh;
 *  - measurements: a rank that measured nothing does not count, the smallest measurement of
 *    the others does; tessi_coll_learn keeps the factor >= 1 and smooths it, and counts
 *    independent calls for nothing; every rank decides alike from the same records.
 */
#include "base/hints.h"
#include "check.h"
#include "coll/coll.h"

#include <stdlib.h>
#include <string.h>

enum { P = 4 };

static struct tess_group_ops ops = {.version = TESS_GROUP_OPS_VERSION, .xblock = 1e-7};
static tessi_coll_rec recs[P];
static int64_t scratch[2 * P];
static tessi_hints hints;

/* A group of P processes on one node of two processors, ROMIO's default hints. */
static void setup(tessi_coll *c, int64_t cb_nodes)
{
    free(c->memo);
    memset(c, 0, sizeof *c);
    memset(recs, 0, sizeof recs);
    c->g.ops = &ops;
    c->g.size = P;
    c->h = (tessi_coll_hints){.cb_nodes = cb_nodes, .cb_buffer = 16 << 20,
                              .cb_read = TESSI_DS_AUTOMATIC, .cb_write = TESSI_DS_AUTOMATIC,
                              .realms = TESSI_REALM_EVEN, .pack = TESSI_DS_AUTOMATIC};
    c->naggs = cb_nodes ? (int)cb_nodes : 1;
    c->nodes = 1;
    c->cores = 2;
    c->recs = recs;
    c->scratch = scratch;
    CHECK_OK(tessi_coll_memo_init(c));
    memset(&hints, 0, sizeof hints);
    hints.ds_read = hints.ds_write = TESSI_DS_AUTOMATIC;
    hints.rd_buffer = hints.wr_buffer = 4 << 20;
    hints.list_max_pairs = TESSI_MODEL_LIST_MAX;
    tessi_model_defaults(&hints.model);
    tessi_model_dirty(&hints.model, &hints.dirty);
}

static void rec(int r, int64_t bytes, int64_t lo, int64_t hi, int64_t regions)
{
    recs[r] = (tessi_coll_rec){.op = 2, .bytes = bytes, .lo = lo, .hi = hi, .regions = regions,
                               .mblocks = 1};
}

static tessi_coll_choice decide(tessi_coll *c, bool write)
{
    tessi_coll_choice how;
    tessi_coll_decide(c, &hints, write, false, &how);
    CHECK(how.naggs >= 1 && how.naggs <= P);
    CHECK(how.tp > 0 && how.ind > 0);
    return how;
}

static void pfr(tessi_coll *c)
{
    setup(c, 2); /* the paper's cb_nodes: half the processes */
    for (int r = 0; r < P; r++) /* 512 points per rank, 32 steps of 3200 B per point */
        rec(r, 512 * 3200, (int64_t)r * 512 * 102400, ((int64_t)r * 512 + 511) * 102400 + 3200,
            512);
}

static void test_shapes(void)
{
    tessi_coll c = {0};
    for (int w = 0; w < 2; w++) {
        setup(&c, 0);
        for (int r = 0; r < P; r++)
            rec(r, 1 << 20, (int64_t)r << 20, (int64_t)(r + 1) << 20, 1);
        CHECK(!decide(&c, w).twophase);
    }
    setup(&c, 0);
    for (int r = 0; r < P; r++) /* element k of rank r at (k * P + r) * 8 */
        rec(r, 16384 * 8, 8 * r, 8 * ((int64_t)16383 * P + r) + 8, 16384);
    CHECK(decide(&c, true).twophase); /* (reads may sieve: each rank reads 4 times its data) */
    for (int r = 0; r < P; r++) /* the same group, new shapes: priced afresh */
        rec(r, 1 << 20, (int64_t)r << 20, (int64_t)(r + 1) << 20, 1);
    CHECK(!decide(&c, true).twophase);
    rec(2, 16384 * 8, 8 * 2, 8 * ((int64_t)16383 * P + 2) + 8, 16384);
    tessi_coll_choice one = decide(&c, true);
    rec(2, 1 << 20, (int64_t)2 << 20, (int64_t)3 << 20, 1);
    CHECK(decide(&c, true).ind != one.ind);
    free(c.memo);
}

static void test_measured(void)
{
    tessi_coll c = {0};
    for (int w = 0; w < 2; w++) {
        pfr(&c);
        tessi_coll_choice fresh = decide(&c, w);
        CHECK(fresh.xscale == 1 && fresh.xtp > 0 && fresh.xtp < fresh.tp);
        for (int r = 1; r < P; r++) /* rank 0 measured nothing yet */
            recs[r].xscale = r == 2 ? 40000 : 90000;
        tessi_coll_choice crowded = decide(&c, w);
        CHECK(crowded.xscale == 40.0);
        CHECK(crowded.tp > fresh.tp + 30 * fresh.xtp);
        CHECK(!crowded.twophase);
        CHECK(crowded.ind == fresh.ind); /* independent calls owe the exchange nothing */
        pfr(&c);
        for (int r = 0; r < P; r++) /* a scheduler's delay on every collective step */
            recs[r].step_ns = 2000000 + r;
        tessi_coll_choice slow = decide(&c, w);
        CHECK(slow.tp > fresh.tp + 2 * 0.002);
        CHECK(!slow.twophase);
    }
    free(c.memo);
}

static void test_learn(void)
{
    tessi_coll c = {0};
    tessi_coll_rec mine;
    setup(&c, 0);
    tessi_coll_choice how = {.twophase = true, .xtp = 1e-3, .xscale = 1};
    tessi_coll_learn(&c, &how, 5e-6, 10e-3);
    CHECK(c.xscale == 10 && c.step_s == 5e-6);
    tessi_coll_learn(&c, &how, -1, 0.2e-3); /* faster than the model: counts as the model */
    CHECK(c.xscale == 5.5 && c.step_s == 5e-6);
    tessi_coll_stamp(&c, &mine);
    CHECK(mine.xscale == 5500 && mine.step_ns == 5000);
    how.twophase = false; /* an independent call measures no exchange */
    tessi_coll_learn(&c, &how, 1e-5, 1.0);
    CHECK(c.xscale == 5.5 && c.step_s > 7.49e-6 && c.step_s < 7.51e-6);
    how = (tessi_coll_choice){.twophase = true, .xtp = 1e-6, .xscale = 1};
    tessi_coll_learn(&c, &how, -1, 1e3); /* one absurd call is bounded */
    CHECK(c.xscale <= 1000);
    free(c.memo);
}

int main(void)
{
    test_shapes();
    test_measured();
    test_learn();
    return 0;
}
