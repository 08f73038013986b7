/*
 * model.c - the cost model: parameters, the price of single accesses and of plan groups, and
 * the streaming estimate of every independent method for one access (see model.h).
 *
 * Counters (calls, bytes, locks) saturate at INT64_MAX instead of overflowing: an estimate of
 * an absurd access stays absurd rather than turning negative.
 */
#include "model/model.h"

#include <math.h>
#include <stddef.h>

/* ------------------------------------------------------------------ parameters */

#define PARAM_ROW(id, key, field, unit, def, doc) [TESSI_PARAM_##id] = {key, unit, doc, def},
static const struct {
    const char *key, *unit, *doc;
    double def;
} params[TESSI_NPARAMS] = {TESSI_MODEL_PARAMS(PARAM_ROW)};
#undef PARAM_ROW

static bool param_ok(int id) { return id >= 0 && id < TESSI_NPARAMS; }
const char *tessi_param_key(int id) { return param_ok(id) ? params[id].key : ""; }
const char *tessi_param_unit(int id) { return param_ok(id) ? params[id].unit : ""; }
const char *tessi_param_doc(int id) { return param_ok(id) ? params[id].doc : ""; }

double tessi_param_get(const tessi_model *m, int id)
{
    switch (id) {
#define PARAM_GET(id, key, field, unit, def, doc)                                              \
    case TESSI_PARAM_##id:                                                                     \
        return m->field;
        TESSI_MODEL_PARAMS(PARAM_GET)
#undef PARAM_GET
    default:
        return NAN;
    }
}

void tessi_param_set(tessi_model *m, int id, double v)
{
    switch (id) {
#define PARAM_SET(id, key, field, unit, def, doc)                                              \
    case TESSI_PARAM_##id:                                                                     \
        m->field = v;                                                                          \
        break;
        TESSI_MODEL_PARAMS(PARAM_SET)
#undef PARAM_SET
    default:
        break;
    }
}

void tessi_model_defaults(tessi_model *m)
{
    *m = (tessi_model){.locks = true, .batched = true, .n = 1, .p = 1,
                       .list_max = TESSI_MODEL_LIST_MAX};
    for (int id = 0; id < TESSI_NPARAMS; id++)
        tessi_param_set(m, id, params[id].def);
}

int tessi_model_check(const tessi_model *m)
{
    if (!m)
        return tessi_error(TESS_ERR_ARG, "model: NULL model");
    for (int id = 0; id < TESSI_NPARAMS; id++) {
        double v = tessi_param_get(m, id);
        if (!isfinite(v) || v < 0)
            return tessi_error(TESS_ERR_ARG, "model: %s = %g is not a finite value >= 0",
                               params[id].key, v);
    }
    if (m->n < 1 || m->p < 1 || m->list_max < 1)
        return tessi_error(TESS_ERR_ARG, "model: n = %lld, p = %lld, list_max = %lld must be >= 1",
                           (long long)m->n, (long long)m->p, (long long)m->list_max);
    return 0;
}

/* --------------------------------------------------------------- single costs */

double tessi_model_call(const tessi_model *m, bool write)
{
    const tessi_model_dir *d = &m->dir[write];
    return (double)m->p * (d->te + d->s) + d->lq_dep;
}

double tessi_model_byte(const tessi_model *m, bool write)
{
    const tessi_model_dir *d = &m->dir[write];
    return (d->tt + d->cud) / (double)m->n;
}

double tessi_model_access(const tessi_model *m, bool write, int64_t size)
{
    return tessi_model_call(m, write) + (double)size * tessi_model_byte(m, write);
}

double tessi_model_batch(const tessi_model *m, bool write, int64_t k)
{
    const tessi_model_dir *d = &m->dir[write];
    if (k == 1)
        return tessi_model_call(m, write);
    if (!m->batched)
        return (double)k * tessi_model_call(m, write);
    return (double)m->p * (d->te + d->list_call + (double)k * d->list_pair) + d->lq_dep;
}

double tessi_model_alone(const tessi_model *m, bool write)
{
    double call = tessi_model_call(m, write);
    double share = tessi_model_batch(m, write, m->list_max) / (double)m->list_max;
    return share < call ? share : call;
}

/* ------------------------------------------------------------------ group costs */

static int64_t sat_add(int64_t a, int64_t b)
{
    int64_t r;
    return tessi_add(a, b, &r) ? r : INT64_MAX;
}

static int64_t sat_mul(int64_t a, int64_t b)
{
    int64_t r;
    return tessi_mul(a, b, &r) ? r : INT64_MAX;
}

void tessi_group_cost(const tessi_model *m, bool write, const tessi_group *g, tessi_cost *c)
{
    double byte = tessi_model_byte(m, write);
    switch (g->kind) {
    case TESSI_GROUP_DIRECT:
        c->seconds += (double)g->count * tessi_model_call(m, write) + (double)g->data * byte;
        c->calls = sat_add(c->calls, g->count);
        c->bytes = sat_add(c->bytes, g->data);
        break;
    case TESSI_GROUP_LIST: {
        int64_t full = g->count / m->list_max, rest = g->count % m->list_max;
        c->seconds += (double)full * tessi_model_batch(m, write, m->list_max) +
                      (rest ? tessi_model_batch(m, write, rest) : 0) + (double)g->data * byte;
        c->calls = sat_add(c->calls, m->batched ? full + (rest > 0) : g->count);
        c->bytes = sat_add(c->bytes, g->data);
        break;
    }
    case TESSI_GROUP_SIEVE:
        if (write && g->lock) {
            /* the storage refuses locks: a locked read-modify-write cannot run */
            c->seconds += m->locks ? (double)m->p * m->lock : INFINITY;
            c->locks = sat_add(c->locks, 1);
        }
        if (write && g->rmw) {
            c->seconds += tessi_model_access(m, false, g->len);
            c->calls = sat_add(c->calls, 1);
            c->bytes = sat_add(c->bytes, g->len);
        }
        c->seconds += tessi_model_access(m, write, g->len) + (double)g->data * m->mc;
        c->calls = sat_add(c->calls, 1);
        c->bytes = sat_add(c->bytes, g->len);
        if (g->len > c->peak)
            c->peak = g->len;
        break;
    }
}

bool tessi_pmd_join(const tessi_model *m, bool write, bool group_covered, int64_t hole,
                    int64_t len)
{
    double rd = tessi_model_byte(m, false), v;
    if (!write)
        v = (double)hole * rd + (double)len * m->mc;
    else if (hole == 0 && group_covered)
        v = (double)len * m->mc;
    else if (!m->locks)
        return false;
    else
        v = (double)hole * (rd + tessi_model_byte(m, true)) + (double)len * (rd + m->mc);
    return v < tessi_model_alone(m, write);
}

/* ------------------------------------------------------------- method estimates */

int tessi_pattern_init(tessi_pattern *pt, const tessi_model *m, bool write, int64_t buf)
{
    if (!pt)
        return tessi_error(TESS_ERR_ARG, "tessi_pattern_init: NULL pattern");
    int rc = tessi_model_check(m);
    if (rc)
        return rc;
    *pt = (tessi_pattern){.m = m, .write = write, .buf = buf};
    return tessi_plan_init(&pt->plan, m, write, buf);
}

/* Add k classic-sieve windows of len bytes holding data bytes each (a write window is locked;
 * it is read first unless covered). */
static void sieve_windows(tessi_pattern *pt, int64_t k, int64_t len, int64_t data)
{
    tessi_group w = {.kind = TESSI_GROUP_SIEVE, .count = 1, .len = len, .data = data,
                     .lock = pt->write, .rmw = pt->write && data < len};
    tessi_cost one = {0};
    tessi_group_cost(pt->m, pt->write, &w, &one);
    tessi_cost *c = &pt->est.sieve;
    c->seconds += (double)k * one.seconds;
    c->calls = sat_add(c->calls, sat_mul(k, one.calls));
    c->bytes = sat_add(c->bytes, sat_mul(k, one.bytes));
    c->locks = sat_add(c->locks, sat_mul(k, one.locks));
}

/*
 * Follow sieve.c's windows over region [o, e) (o >= every earlier end). Closed windows are
 * priced now; the open one is [ws, we) with wdata bytes. A read window always spans buf bytes
 * unless it is the last, which ends at the access's end (priced in tessi_pattern_estimate), so
 * reads track ws only; write windows end at their last data byte. A region crossing ws + buf
 * is cut there and its rest fills whole windows and then opens the next.
 */
static void sieve_region(tessi_pattern *pt, int64_t o, int64_t e)
{
    int64_t B = pt->buf;
    if (pt->wopen && o - pt->ws >= B) {
        sieve_windows(pt, 1, pt->write ? pt->we - pt->ws : B, pt->wdata);
        pt->wopen = false;
    }
    if (!pt->wopen) {
        pt->wopen = true;
        pt->ws = pt->we = o;
        pt->wdata = 0;
    }
    if (e - pt->ws <= B) {
        pt->we = e;
        pt->wdata += e - o;
        return;
    }
    /* the window [ws, ws + B) closes holding the region's head; the rest [ws + B, e) fills
     * nfull covered windows and opens the last one */
    sieve_windows(pt, 1, B, pt->wdata + (pt->ws + B - o));
    int64_t rest = e - pt->ws - B, nfull = (rest - 1) / B;
    if (nfull > 0)
        sieve_windows(pt, nfull, B, B);
    pt->ws += B + nfull * B;
    pt->we = e;
    pt->wdata = e - pt->ws;
}

int tessi_pattern_add(tessi_pattern *pt, const tess_region *r, int64_t n)
{
    tessi_group out[TESSI_PLAN_EMIT_MAX];
    if (!pt || (n > 0 && !r) || n < 0)
        return tessi_error(TESS_ERR_ARG, "tessi_pattern_add: NULL pattern or regions, or n < 0");
    for (int64_t i = 0; i < n; i++) {
        int64_t used, made;
        /* the planner checks order, length and overflow before anything here changes */
        int rc = tessi_plan_push(&pt->plan, &r[i], 1, out, TESSI_PLAN_EMIT_MAX, &used, &made);
        if (rc)
            return rc;
        for (int64_t g = 0; g < made; g++)
            tessi_group_cost(pt->m, pt->write, &out[g], &pt->est.pmd);
        if (pt->regions == 0)
            pt->lo = r[i].off;
        pt->regions++;
        pt->data = sat_add(pt->data, r[i].len);
        pt->hi = r[i].off + r[i].len;
        sieve_region(pt, r[i].off, pt->hi);
    }
    return 0;
}

void tessi_pattern_estimate(const tessi_pattern *pt, tessi_estimate *out)
{
    const tessi_model *m = pt->m;
    bool w = pt->write;
    tessi_pattern fin = *pt; /* finish on a copy: pt can take more regions */
    tessi_group rest[TESSI_PLAN_EMIT_MAX];
    int64_t made = 0;

    fin.est.naive = (tessi_cost){0};
    tessi_group direct = {.kind = TESSI_GROUP_DIRECT, .count = pt->regions, .data = pt->data};
    tessi_group_cost(m, w, &direct, &fin.est.naive);

    fin.est.list = (tessi_cost){0};
    tessi_group list = {.kind = TESSI_GROUP_LIST, .count = pt->regions, .data = pt->data};
    tessi_group_cost(m, w, &list, &fin.est.list);

    if (fin.wopen)
        sieve_windows(&fin, 1, (w ? fin.we : fin.hi) - fin.ws, fin.wdata);
    if (pt->regions > 0) /* sieve.c's staging buffer: min(buffer, extent of the access) */
        fin.est.sieve.peak = pt->hi - pt->lo < pt->buf ? pt->hi - pt->lo : pt->buf;
    if (w && !m->locks) { /* sieve.c goes naive when the first lock is refused */
        int64_t peak = fin.est.sieve.peak;
        fin.est.sieve = fin.est.naive;
        fin.est.sieve.peak = peak;
    }

    tessi_plan_flush(&fin.plan, rest, TESSI_PLAN_EMIT_MAX, &made);
    for (int64_t g = 0; g < made; g++)
        tessi_group_cost(m, w, &rest[g], &fin.est.pmd);
    *out = fin.est;
}
