/*
 * policy.c - the collective policy: where the aggregators go, how many a call uses, and whether
 * it goes two-phase or independent.
 *
 * romio_cb_* = automatic decides per call from the records every rank shares (no interleaving
 * rule), pricing both ways with the methods' own estimates (method/method.h) and the model's
 * primitives, each as the time until the last process is done:
 *  - independent: each rank's access by the cheapest method the file's hints allow, memory
 *    pieces included (its record: data, file regions, extent, memory blocks). Writes that hold
 *    locks (sieving may run on the file) of ranks whose extents overlap take turns under them:
 *    a rank's time counts once per rank its extent meets. The ranks run at once only as far as
 *    the group has processors: the sum of their times over the processors bounds the time too.
 *    Plus the agreement on errors that ends the call.
 *  - two-phase with A aggregators: each aggregator's share of the aggregate data, regions and
 *    extent, moved by the cheapest method with cb_buffer_size as its window, plus receiving its
 *    share from the clients (a copy of every byte, and either the transport's price of the
 *    file-side blocks or a copy more where staging them is cheaper: exchange.c); the A
 *    aggregators work at once as far as the processors go. Plus the clients' side (a copy of
 *    their bytes, and their memory blocks or a copy more), and an agreement per round besides
 *    the set-up and the end. A step (an agreement, a round's exchange) costs what the group
 *    measured its steps to cost (the records' allgather of recent calls), which on a group with
 *    more processes than processors is the scheduler's delay, not the network's.
 * The exchange's part is multiplied by what the group measured its exchanges to take against
 * the model in recent two-phase calls (tessi_coll.xscale): on a crowded machine every message
 * waits for the scheduler, which one call shows.
 * Two-phase runs when it is cheaper. So a sparse, non-overlapping but fragmented pattern goes
 * collective whenever the aggregate is dense enough for the aggregators' windows to beat each
 * rank's small regions, and a pattern of locked writes that overlap goes collective rather
 * than in turns.
 *
 * The prices (the methods' estimates: most of a decision's work, several microseconds) are kept
 * for the next call: a call whose records have the same shapes, as in a loop of equal calls,
 * only applies the current measurements to them.
 *
 * The aggregator count, unless cb_nodes gives it or periodic realms fix it (one per node), is
 * the count the same model prices lowest among 1, 2, 4, ..., the number of nodes and the group
 * size (ties to fewer): more aggregators share the storage and the exchange but pay more
 * contention per storage call, and beyond the group's processors they only take turns.
 */
#include "coll/coll.h"

#include "type/type.h"

#include <stdlib.h>
#include <string.h>

/* Seconds a collective step (a small allreduce, or a round's messages) costs besides storage
 * and data until the group has measured its own (tessi_coll.step_s): about what an allreduce
 * takes between the processes of one node. */
#define STEP_SECONDS 10e-6

/*
 * Where the aggregators go. Placement: the first rank of every node, then the second of every
 * node, and so on, so any count spreads over the nodes. Periodic realms (fixed for the file's
 * lifetime) use cb_nodes, by default one per node (ROMIO's rule: a node's processes share its
 * memory bandwidth and its path to storage); other realms take the count of each call from
 * tessi_coll_decide.
 */
int tessi_coll_place_aggregators(tessi_coll *c)
{
    int P = c->g.size, nnodes = 0;
    int *node = malloc(sizeof(int) * (size_t)P * 2);
    int *count = calloc((size_t)P + 1, sizeof(int));
    c->aggs = malloc(sizeof(int) * (size_t)P);
    if (!node || !count || !c->aggs) {
        free(node);
        free(count);
        return tessi_error(TESS_ERR_NOMEM, "tess_file_open_group: out of memory (%d ranks)", P);
    }
    int *within = node + P;
    c->g.ops->nodes(c->g.ctx, node);
    for (int r = 0; r < P; r++)
        nnodes = node[r] + 1 > nnodes ? node[r] + 1 : nnodes;
    /* the order: ranks by (index within their node, node), by a counting sort on that key */
    for (int r = 0; r < P; r++) /* within[r]: r's index among its node's ranks */
        within[r] = count[node[r]]++;
    memset(count, 0, sizeof(int) * ((size_t)P + 1));
    for (int r = 0; r < P; r++)
        count[within[r] + 1]++;
    for (int i = 0; i < P; i++)
        count[i + 1] += count[i];
    for (int r = 0; r < P; r++) /* each index lists every node having that many ranks once */
        c->aggs[count[within[r]]++] = r;
    c->nodes = nnodes;
    c->naggs = (int)(c->h.cb_nodes ? (c->h.cb_nodes < P ? c->h.cb_nodes : P) : nnodes);
    free(count);
    free(node);
    return 0;
}

static double dmax(double a, double b) { return a > b ? a : b; }

/* What one collective step costs this group: the smallest of the ranks' measured times (the
 * last to arrive waits for nobody else; see tessi_coll.step_s), else STEP_SECONDS. Where the
 * group has more processes than processors every step waits for the scheduler, and that can
 * be a thousand times the allreduce itself: then a two-phase call's extra steps decide. */
static double step_seconds(const tessi_coll *c)
{
    int64_t ns = INT64_MAX;
    for (int r = 0; r < c->g.size; r++)
        if (c->recs[r].step_ns > 0 && c->recs[r].step_ns < ns)
            ns = c->recs[r].step_ns;
    return ns == INT64_MAX ? STEP_SECONDS : (double)ns * 1e-9;
}

/* The factor by which this group's exchanges took longer than modelled: the smallest over the
 * ranks that measured one (a rank's exchange time includes its waits for the others), else 1. */
static double measured_xscale(const tessi_coll *c)
{
    int64_t m = INT64_MAX;
    for (int r = 0; r < c->g.size; r++)
        if (c->recs[r].xscale > 0 && c->recs[r].xscale < m)
            m = c->recs[r].xscale;
    return m == INT64_MAX ? 1.0 : (double)m * 1e-3;
}

/* What the decision needs of the records, gathered once. */
typedef struct {
    int active;                  /* ranks with data */
    int64_t glo, ghi, data, regions;
    double ind_max, ind_sum;     /* independent: slowest rank (turns included), sum */
    double cli_max, cli_sum;     /* two-phase, the clients' side: slowest rank, sum */
} summary;

/* The processes' work at once: as many as there are processors in the group. */
static double parallel(const tessi_coll *c, int n)
{
    double cpus = (double)c->nodes * (double)(c->cores > 0 ? c->cores : 1);
    return n < cpus ? (n > 0 ? n : 1) : cpus;
}

/* The model's time for rank r's access done independently: the cheapest method the file's
 * hints allow, pricing an even spread of its record (memory blocks split file regions). */
static double independent_seconds(const tessi_model *m, const tessi_hints *h, bool write,
                                  const tessi_coll_rec *r)
{
    int64_t k = r->regions > 0 ? r->regions : 1;
    int64_t pieces = r->mblocks > 1 ? tessi_min64(k + r->mblocks - 1, r->bytes) : k;
    tessi_est e = {.m = m, .write = write, .buf = write ? h->wr_buffer : h->rd_buffer,
                   .bytes = r->bytes, .regions = k, .lo = r->lo, .hi = r->hi,
                   .pieces = tessi_max64(pieces, k)};
    tessi_cost c;
    tessi_method_cheapest(h, &e, &c);
    return c.seconds;
}

/* One side of a transfer of `bytes` bytes in `blocks` blocks: a copy (the transport's, or
 * Tessera's into a staging buffer), and the blocks described or one more copy (exchange.c
 * stages where that is cheaper). */
static double exchange_side(const tessi_coll *c, const tessi_model *m, int64_t bytes,
                            int64_t blocks)
{
    double described = (double)blocks * c->g.ops->xblock, staged = tessi_model_copy(m, bytes);
    if (c->h.pack != TESSI_DS_AUTOMATIC)
        described = staged = c->h.pack == TESSI_DS_ENABLE && blocks > 1 ? staged : described;
    return tessi_model_copy(m, bytes) + (described < staged ? described : staged);
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

/* Gather the records into s. Ranks whose extents meet are found in O(P log P) from the sorted
 * starts and ends (c->scratch; no allocation, so every rank decides alike). */
static void summarize(const tessi_coll *c, const tessi_hints *h, bool write, bool lock_writes,
                      bool independent, summary *s)
{
    int P = c->g.size;
    tessi_model mi = h->model;
    int64_t *starts = c->scratch, *ends = c->scratch + P, k = 0;
    *s = (summary){.glo = INT64_MAX};
    for (int r = 0; r < P; r++)
        if (c->recs[r].bytes > 0) {
            starts[k] = c->recs[r].lo;
            ends[k++] = c->recs[r].hi;
        }
    s->active = (int)k;
    mi.p = k > 0 ? k : 1;
    qsort(starts, (size_t)k, sizeof(int64_t), cmp64);
    qsort(ends, (size_t)k, sizeof(int64_t), cmp64);
    for (int r = 0; r < P; r++) {
        const tessi_coll_rec *x = &c->recs[r];
        if (x->bytes == 0)
            continue;
        s->glo = tessi_min64(s->glo, x->lo);
        s->ghi = tessi_max64(s->ghi, x->hi);
        s->data += x->bytes;
        s->regions += x->regions;
        double cli = exchange_side(c, &h->model, x->bytes, x->mblocks);
        s->cli_max = dmax(s->cli_max, cli);
        s->cli_sum += cli;
        if (!independent)
            continue;
        double t = independent_seconds(&mi, h, write, x);
        /* locked writes of the ranks whose extent meets this one's (started before its end,
         * not ended by its start) take turns */
        int64_t meet = bound(starts, k, x->hi, false) - bound(ends, k, x->lo, true);
        s->ind_max = dmax(s->ind_max, t * (double)(write && lock_writes && meet > 1 ? meet : 1));
        s->ind_sum += t;
    }
}

/* The model's price of the access done two-phase by A aggregators, in parts: the storage (io)
 * and the exchange's transfers (xfer), the aggregators' turns on the processors included, and
 * its rounds; without the collective steps and the measured factor (tp_seconds adds them). */
typedef struct {
    int A;
    double io, xfer, rounds;
} tp_price;

static tp_price twophase_price(const tessi_coll *c, const summary *s, const tessi_model *m0,
                               bool write, bool lock_writes, int A)
{
    tessi_model m = *m0;
    m.p = A;
    int64_t share = (s->data + A - 1) / A, per = tessi_max64(s->regions / A, 1);
    int64_t ext = tessi_max64((s->ghi - s->glo) / A, share);
    tessi_est e = {.m = &m, .write = write, .buf = c->h.cb_buffer, .bytes = share,
                   .regions = per, .lo = 0, .hi = ext, .pieces = per};
    tessi_cost st;
    tessi_method_cheapest(NULL, &e, &st); /* an aggregator is bound by no independent hint */
    double rounds = (double)((ext + c->h.cb_buffer - 1) / c->h.cb_buffer);
    double io = st.seconds + (write && lock_writes ? rounds * tessi_model_lock(&m) : 0);
    double clients = dmax(s->cli_max, s->cli_sum / parallel(c, s->active));
    double turns = (double)A / parallel(c, A);
    return (tp_price){.A = A, .io = io * turns, .rounds = rounds,
                      .xfer = exchange_side(c, &m, share, per) * turns + clients};
}

/* The seconds of price p with collective steps of `step` seconds and the exchange (transfers
 * and steps: the descriptions' exchange, an agreement and an exchange per round, the end)
 * times xscale; *xchg: that exchange before xscale. */
static double tp_seconds(const tp_price *p, double step, double xscale, double *xchg)
{
    *xchg = p->xfer + (2 * p->rounds + 2) * step;
    return p->io + *xchg * xscale;
}

/* Candidates of the aggregator count: c->naggs, 1, 2, 4, ..., the group size. */
enum { TP_CANDIDATES = 34 };

/*
 * The prices of the last call's records. A call whose records have the shapes of the previous
 * one's (a loop of equal calls) reuses them: the methods' estimates are most of a decision's
 * work. The measurements (step, exchange factor) are applied afresh every call.
 */
struct tessi_coll_memo {
    bool valid, write, lock_writes, independent;
    const tessi_hints *h;
    summary s;
    int n;                     /* tp[0..n): candidates priced, tp[0] for c->naggs */
    tp_price tp[TP_CANDIDATES];
    tessi_coll_rec shapes[];   /* the records priced (size entries) */
};

int tessi_coll_memo_init(tessi_coll *c)
{
    c->memo = calloc(1, sizeof *c->memo + sizeof(tessi_coll_rec) * (size_t)c->g.size);
    return c->memo ? 0 : tessi_error(TESS_ERR_NOMEM, "tess_file_open_group: out of memory");
}

/* Do the records have the shapes the memo was priced for (and the rest of its key)? */
static bool memo_hit(const tessi_coll *c, const tessi_hints *h, bool write, bool lock_writes,
                     bool independent)
{
    const struct tessi_coll_memo *mo = c->memo;
    if (!mo || !mo->valid || mo->h != h || mo->write != write || mo->lock_writes != lock_writes ||
        mo->independent != independent)
        return false;
    for (int r = 0; r < c->g.size; r++) {
        const tessi_coll_rec *a = &c->recs[r], *b = &mo->shapes[r];
        if (a->bytes != b->bytes || a->lo != b->lo || a->hi != b->hi ||
            a->regions != b->regions || a->mblocks != b->mblocks)
            return false;
    }
    return true;
}

/* Price the records into the memo (or into *scratch where there is no memo). */
static const struct tessi_coll_memo *price(tessi_coll *c, const tessi_hints *h, bool write,
                                           bool lock_writes, bool independent, bool counted,
                                           struct tessi_coll_memo *scratch)
{
    struct tessi_coll_memo *mo = c->memo ? c->memo : scratch;
    int P = c->g.size;
    if (memo_hit(c, h, write, lock_writes, independent))
        return mo;
    summarize(c, h, write, lock_writes, independent, &mo->s);
    mo->n = 0;
    mo->tp[mo->n++] = twophase_price(c, &mo->s, &h->model, write, lock_writes, c->naggs);
    for (int A = 1; counted && A < P; A *= 2) /* 1, 2, 4, ... below P, and P */
        mo->tp[mo->n++] = twophase_price(c, &mo->s, &h->model, write, lock_writes, A);
    if (counted)
        mo->tp[mo->n++] = twophase_price(c, &mo->s, &h->model, write, lock_writes, P);
    mo->h = h;
    mo->write = write;
    mo->lock_writes = lock_writes;
    mo->independent = independent;
    mo->valid = c->memo != NULL;
    if (c->memo)
        memcpy(mo->shapes, c->recs, sizeof(tessi_coll_rec) * (size_t)P);
    return mo;
}

void tessi_coll_decide(tessi_coll *c, const tessi_hints *h, bool write, bool lock_writes,
                       tessi_coll_choice *out)
{
    int mode = write ? c->h.cb_write : c->h.cb_read;
    bool periodic = c->h.realms != TESSI_REALM_EVEN && c->h.realms != TESSI_REALM_ALIGNED &&
                    c->h.realms != TESSI_REALM_BALANCED;
    bool counted = c->h.cb_nodes == 0 && !periodic;
    *out = (tessi_coll_choice){.twophase = mode != TESSI_DS_DISABLE, .naggs = c->naggs,
                               .xscale = measured_xscale(c)};
    if (mode == TESSI_DS_DISABLE || (mode == TESSI_DS_ENABLE && !counted))
        return;
    struct tessi_coll_memo scratch;
    const struct tessi_coll_memo *mo =
        price(c, h, write, lock_writes, mode == TESSI_DS_AUTOMATIC, counted, &scratch);
    double step = step_seconds(c);
    /* the count the model prices lowest, ties to fewer (c->naggs first: kept unless beaten) */
    for (int i = 0; i < mo->n; i++) {
        double x, t = tp_seconds(&mo->tp[i], step, out->xscale, &x);
        if (i == 0 || t < out->tp || (t == out->tp && mo->tp[i].A < out->naggs)) {
            out->tp = t;
            out->xtp = x;
            out->naggs = mo->tp[i].A;
        }
    }
    if (mode == TESSI_DS_AUTOMATIC) {
        out->ind = dmax(mo->s.ind_max, mo->s.ind_sum / parallel(c, mo->s.active)) + step;
        out->twophase = out->tp < out->ind;
    }
}

void tessi_coll_stamp(const tessi_coll *c, tessi_coll_rec *mine)
{
    mine->step_ns = (int64_t)(c->step_s * 1e9 + 0.5); /* both >= 0: rounded */
    mine->xscale = (int64_t)(c->xscale * 1e3 + 0.5);
}

/* Smoothing of the measurements: the weight of the newest. */
#define LEARN_WEIGHT 0.5
/* The exchange's factor stays within [1, XSCALE_MAX]: the model's copies are its floor, and one
 * odd call cannot rule it. */
#define XSCALE_MAX 1000.0

static double smooth(double old, double x)
{
    return old > 0 ? (1 - LEARN_WEIGHT) * old + LEARN_WEIGHT * x : x;
}

void tessi_coll_learn(tessi_coll *c, const tessi_coll_choice *how, double step, double xchg)
{
    if (step >= 0)
        c->step_s = smooth(c->step_s, step);
    if (how && how->twophase && xchg >= 0 && how->xtp > 0) {
        double x = xchg / how->xtp;
        c->xscale = smooth(c->xscale, x < 1 ? 1 : x > XSCALE_MAX ? XSCALE_MAX : x);
    }
}
