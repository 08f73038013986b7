/*
 * policy.c - the collective policy: where the aggregators go, and whether an access goes
 * two-phase or independent.
 *
 * romio_cb_* = automatic decides per call from the records every rank shares (no interleaving
 * rule): the methods' own estimates (method/method.h) price the best independent method of
 * each rank against two-phase (the aggregators' shares, moved the cheapest way, plus moving
 * every byte between processes and a fixed cost per round), each as the slowest process;
 * two-phase runs when it is cheaper. So a sparse, non-overlapping but fragmented pattern goes
 * collective whenever the aggregate is dense enough for the aggregators' windows to beat each
 * rank's small regions.
 */
#include "coll/coll.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Seconds a round of two-phase costs besides storage and data: the agreement (a small
 * allreduce) and the messages' latency, about what an allreduce and a message take between the
 * processes of one node. Used by romio_cb_* = automatic only. */
#define ROUND_SECONDS 20e-6

/*
 * Where the aggregators go. Default count: one per node (ROMIO's rule: a node's processes share
 * its memory bandwidth and its path to storage, so a second aggregator on a node adds exchange
 * traffic without adding bandwidth). Placement: the first rank of every node, then the second
 * of every node, and so on, so any count spreads over the nodes.
 */
int tessi_coll_place_aggregators(tessi_coll *c)
{
    int P = c->g.size, nnodes = 0;
    int *node = malloc(sizeof(int) * (size_t)P * 3);
    if (!node)
        return tessi_error(TESS_ERR_NOMEM, "tess_file_open_group: out of memory (%d ranks)", P);
    int *within = node + P, *order = within + P, *count;
    c->g.ops->nodes(c->g.ctx, node);
    for (int r = 0; r < P; r++)
        nnodes = node[r] + 1 > nnodes ? node[r] + 1 : nnodes;
    /* order: ranks by (index within their node, node), by a counting sort on that key */
    if (!(count = calloc((size_t)P + 1, sizeof(int)))) {
        free(node);
        return tessi_error(TESS_ERR_NOMEM, "tess_file_open_group: out of memory (%d ranks)", P);
    }
    for (int r = 0; r < P; r++) /* within[r]: r's index among its node's ranks */
        within[r] = count[node[r]]++;
    memset(count, 0, sizeof(int) * ((size_t)P + 1));
    for (int r = 0; r < P; r++)
        count[within[r] + 1]++;
    for (int i = 0; i < P; i++)
        count[i + 1] += count[i];
    for (int r = 0; r < P; r++) /* each index lists every node having that many ranks once */
        order[count[within[r]]++] = r;
    free(count);
    c->naggs = (int)(c->h.cb_nodes ? (c->h.cb_nodes < P ? c->h.cb_nodes : P) : nnodes);
    c->aggs = malloc(sizeof(int) * (size_t)c->naggs);
    if (!c->aggs) {
        free(node);
        return tessi_error(TESS_ERR_NOMEM, "tess_file_open_group: out of memory");
    }
    c->my_agg = -1;
    for (int a = 0; a < c->naggs; a++) {
        c->aggs[a] = order[a];
        if (order[a] == c->g.rank)
            c->my_agg = a;
    }
    free(node);
    return 0;
}

/*
 * The model's time for one rank's access done independently: the cheapest method the file's
 * hints allow, each pricing the rank's record (regions, data, extent: an even spread). A
 * sieving method's writes also wait for the `meet` ranks whose extents overlap (this one
 * included) to take their turns under their locks.
 */
static double independent_seconds(const tessi_model *m, const tessi_hints *h, bool write,
                                  const tessi_coll_rec *r, int64_t meet)
{
    if (r->bytes == 0)
        return 0;
    int64_t k = r->regions > 0 ? r->regions : 1;
    tessi_est e = {.m = m, .write = write, .buf = write ? h->wr_buffer : h->rd_buffer,
                   .bytes = r->bytes, .regions = k, .lo = r->lo, .hi = r->hi, .pieces = k};
    double best = INFINITY;
    tessi_cost c;
    for (int i = 0; tessi_method_at(i); i++) {
        const struct tess_method *meth = tessi_method_at(i);
        if (!tessi_method_allowed(h, write, meth))
            continue;
        meth->estimate(&e, &c);
        double t = c.seconds * (write && meth->sieves && meet > 1 ? (double)meet : 1);
        best = t < best ? t : best;
    }
    return best;
}

static int cmp64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* First index of sorted v[0..n) whose value is >= x (strict: > x). */
static int64_t bound(const int64_t *v, int64_t n, int64_t x, bool strict)
{
    int64_t lo = 0, hi = n;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (v[mid] < x || (strict && v[mid] == x))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/*
 * romio_cb_* = automatic: two-phase when the model says it is faster than every rank doing its
 * own access with its best independent method (both as the slowest process). Sieving writes of
 * ranks whose extents overlap take turns under their locks (paper 000 II-B): a rank's sieving
 * write is priced times the number of ranks whose extents meet its own (found in O(P log P)
 * from the sorted starts and ends; no allocation, so every rank decides alike). Two-phase: each
 * aggregator's share of the aggregate extent, data and regions, priced by the cheapest method
 * with cb_buffer_size as its window; plus every byte copied out of and into process memory (two
 * copies of the slowest rank's bytes) and ROUND_SECONDS per round.
 */
bool tessi_coll_choose_twophase(const tessi_coll *c, const tessi_hints *h, bool write)
{
    int mode = write ? c->h.cb_write : c->h.cb_read;
    if (mode != TESSI_DS_AUTOMATIC)
        return mode == TESSI_DS_ENABLE;
    tessi_model mi = h->model, mc = h->model;
    int64_t glo = INT64_MAX, ghi = 0, data = 0, regions = 0, maxbytes = 0;
    double ind = 0;
    int active = 0;
    for (int r = 0; r < c->g.size; r++)
        active += c->recs[r].bytes > 0;
    mi.p = active > 0 ? active : 1;
    mc.p = c->naggs;
    int64_t *starts = c->scratch, *ends = c->scratch + c->g.size, k = 0;
    for (int r = 0; r < c->g.size; r++)
        if (c->recs[r].bytes > 0) {
            starts[k] = c->recs[r].lo;
            ends[k++] = c->recs[r].hi;
        }
    qsort(starts, (size_t)k, sizeof(int64_t), cmp64);
    qsort(ends, (size_t)k, sizeof(int64_t), cmp64);
    for (int r = 0; r < c->g.size; r++) {
        const tessi_coll_rec *x = &c->recs[r];
        if (x->bytes == 0)
            continue;
        /* ranks whose extent meets [lo, hi): started before hi, not ended by lo */
        int64_t meet = bound(starts, k, x->hi, false) - bound(ends, k, x->lo, true);
        double t = independent_seconds(&mi, h, write, x, meet);
        ind = t > ind ? t : ind;
        glo = x->lo < glo ? x->lo : glo;
        ghi = x->hi > ghi ? x->hi : ghi;
        data += x->bytes;
        regions += x->regions;
        maxbytes = x->bytes > maxbytes ? x->bytes : maxbytes;
    }
    /* each aggregator's share of the aggregate: the cheapest way to move it with the
     * collective buffer as the window (an aggregator is bound by no independent hint) */
    int64_t A = c->naggs, share = (data + A - 1) / A, per = tessi_max64(regions / A, 1);
    tessi_est e = {.m = &mc, .write = write, .buf = c->h.cb_buffer, .bytes = share,
                   .regions = per, .lo = 0, .hi = tessi_max64((ghi - glo) / A, share),
                   .pieces = per};
    tessi_cost agg;
    tessi_method_cheapest(NULL, &e, &agg);
    double rounds = (double)(e.hi - e.lo) / (double)c->h.cb_buffer + 1;
    double coll = agg.seconds + 2 * tessi_model_copy(&mc, maxbytes) + rounds * ROUND_SECONDS;
    return coll < ind;
}
