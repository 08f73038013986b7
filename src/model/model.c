/*
 * model.c - the cost model: parameters and the price of the primitives (see model.h).
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

double tessi_model_lock(const tessi_model *m)
{
    return m->locks ? (double)m->p * m->lock : INFINITY;
}

double tessi_model_copy(const tessi_model *m, int64_t bytes) { return (double)bytes * m->mc; }

double tessi_model_pieces(const tessi_model *m, bool write, int64_t pieces)
{
    return pieces > 0 ? (double)m->p * (double)pieces * m->dir[write].list_pair : 0;
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

static int64_t scale_count(int64_t v, double k)
{
    double s = (double)v * k + 0.5;
    return s >= 9.2e18 ? INT64_MAX : (int64_t)s;
}

void tessi_cost_add(tessi_cost *c, const tessi_cost *one, int64_t k)
{
    c->seconds += (double)k * one->seconds;
    c->calls = sat_add(c->calls, sat_mul(k, one->calls));
    c->bytes = sat_add(c->bytes, sat_mul(k, one->bytes));
    c->locks = sat_add(c->locks, sat_mul(k, one->locks));
    if (one->peak > c->peak)
        c->peak = one->peak;
}

void tessi_cost_scale(tessi_cost *c, double k)
{
    c->seconds *= k;
    c->calls = scale_count(c->calls, k);
    c->bytes = scale_count(c->bytes, k);
    c->locks = scale_count(c->locks, k);
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
            c->seconds += tessi_model_lock(m);
            c->locks = sat_add(c->locks, 1);
        }
        if (write && g->rmw) {
            c->seconds += tessi_model_access(m, false, g->len);
            c->calls = sat_add(c->calls, 1);
            c->bytes = sat_add(c->bytes, g->len);
        }
        c->seconds += tessi_model_access(m, write, g->len) + tessi_model_copy(m, g->data);
        c->calls = sat_add(c->calls, 1);
        c->bytes = sat_add(c->bytes, g->len);
        if (g->len > c->peak)
            c->peak = g->len;
        break;
    }
}

