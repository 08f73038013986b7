/*
 * stats.c - tess_stats: the counters as a tracer (every event a file reports lands here),
 * and the functions generated from TESS_STATS_FIELDS (merging and printing), the sized copy,
 * and the process-wide tracing hook.
 */
#include "base/tracer.h"

#include <stdio.h>
#include <string.h>

static const struct tessi_tracer *hook;
static void *hook_ctx;

void tessi_tracer_install(const struct tessi_tracer *t, void *ctx)
{
    hook = t && t->version == TESSI_TRACER_VERSION ? t : NULL;
    hook_ctx = ctx;
}

bool tessi_tracer_hooked(void) { return hook != NULL; }

void tessi_emit(const tessi_trace *t, const tessi_event *e)
{
    if (t->tracer)
        t->tracer->event(t->ctx, e);
    if (hook)
        hook->event(hook_ctx, e);
}

void tessi_stats_reset(tess_stats *s)
{
    *s = (tess_stats){.min_access = INT64_MAX};
}

static void stats_event(void *ctx, const tessi_event *e)
{
    tess_stats *s = ctx;
    switch (e->kind) {
    case TESSI_EV_IO:
    case TESSI_EV_IO_CALLS:
        s->io_ops += e->kind == TESSI_EV_IO ? 1 : e->n;
        s->io_seconds += e->seconds;
        s->accessed_bytes += e->moved > 0 ? e->moved : 0;
        if (e->n > 0 && e->min_len < s->min_access)
            s->min_access = e->min_len;
        if (e->n > 0 && e->max_len > s->max_access)
            s->max_access = e->max_len;
        break;
    case TESSI_EV_LOCK:
        s->lock_ops++;
        break;
    case TESSI_EV_LOCK_FALLBACK:
        s->lock_fallbacks++;
        break;
    case TESSI_EV_ACCESS:
        s->desired_bytes += e->len;
        break;
    case TESSI_EV_REGIONS:
        s->regions += e->n;
        break;
    case TESSI_EV_METHOD:
        s->last_method = e->method;
        if (e->method > 0 && e->method < TESS_METHOD_MAX)
            s->method_accesses[e->method]++;
        s->model_defaults = e->flag;
        break;
    case TESSI_EV_DECISION:
        s->auto_decisions++;
        s->auto_reused += e->flag;
        for (int i = 0; i < e->nest && i < TESS_METHOD_MAX; i++)
            s->est_seconds[i] = e->est[i];
        s->est_regions = e->n;
        s->est_scale = e->scale;
        break;
    case TESSI_EV_BUFFER:
        if (e->len > s->peak_buffer_bytes)
            s->peak_buffer_bytes = e->len;
        break;
    case TESSI_EV_EXCHANGE:
        s->exchange_seconds += e->seconds;
        s->resent_bytes += e->n;
        s->packed_bytes += e->len;
        break;
    case TESSI_EV_REQUEST:
        s->request_bytes += e->len;
        s->flat_request_bytes += e->n;
        break;
    case TESSI_EV_SERVER:
        s->server_requests += e->n;
        if (e->flag)
            s->server_programs += e->n;
        break;
    }
}

const struct tessi_tracer tessi_stats_tracer = {
    .version = TESSI_TRACER_VERSION,
    .name = "stats",
    .event = stats_event,
};

/* Whether the field [off, off + len) lies within the caller's size. */
#define FITS(field, size) (offsetof(tess_stats, field) + sizeof(((tess_stats *)0)->field) <= (size))

static void merge_int(int64_t *acc, int64_t in, int how)
{
    if (how == TESS_STATS_SUM)
        *acc += in;
    else if (how == TESS_STATS_MAX)
        *acc = in > *acc ? in : *acc;
    else if (in && (!*acc || in < *acc))
        *acc = in;
}

static void merge_real(double *acc, double in, int how)
{
    if (how == TESS_STATS_SUM)
        *acc += in;
    else if (how == TESS_STATS_MAX)
        *acc = in > *acc ? in : *acc;
    else if (in != 0 && (*acc == 0 || in < *acc))
        *acc = in;
}

#define MERGE(acc, in, how) _Generic((acc), int64_t: merge_int, double: merge_real)(&(acc), in, how)

int tess_stats_combine(tess_stats *acc, const tess_stats *in, size_t size)
{
    if (!acc || !in)
        return tessi_error(TESS_ERR_ARG, "tess_stats_combine: %s is NULL", acc ? "in" : "acc");
#define COMBINE_X(type, name, how, doc)                                                      \
    if (FITS(name, size))                                                                    \
        MERGE(acc->name, in->name, how);
#define COMBINE_A(type, name, count, how, doc)                                               \
    if (FITS(name, size))                                                                    \
        for (int i = 0; i < (count); i++)                                                    \
            MERGE(acc->name[i], in->name[i], how);
    TESS_STATS_FIELDS(COMBINE_X, COMBINE_A)
#undef COMBINE_X
#undef COMBINE_A
    return 0;
}

/* Append "name value\n" (name[idx] when idx >= 0) to buf at *used; stops growing when full. */
static void put_text(char *buf, size_t cap, size_t *used, const char *name, int idx,
                     const char *value)
{
    char key[64];
    if (idx >= 0)
        snprintf(key, sizeof key, "%s[%d]", name, idx);
    else
        snprintf(key, sizeof key, "%s", name);
    int n = snprintf(buf + *used, cap - *used, "%s %s\n", key, value);
    *used += n > 0 ? (size_t)n : 0;
    if (*used >= cap)
        *used = cap;
}

static void put_int(char *buf, size_t cap, size_t *used, const char *name, int idx, int64_t v)
{
    char text[24];
    snprintf(text, sizeof text, "%lld", (long long)v);
    put_text(buf, cap, used, name, idx, text);
}

static void put_real(char *buf, size_t cap, size_t *used, const char *name, int idx, double v)
{
    char text[32];
    snprintf(text, sizeof text, "%.6g", v);
    put_text(buf, cap, used, name, idx, text);
}

#define PUT(buf, cap, used, name, idx, v) \
    _Generic((v), double: put_real, default: put_int)(buf, cap, used, name, idx, v)

int tess_stats_format(const tess_stats *s, size_t size, char *buf, size_t cap)
{
    size_t used = 0;
    if (!s || !buf || cap == 0)
        return tessi_error(TESS_ERR_ARG, "tess_stats_format: %s", !s ? "s is NULL"
                                                                    : "no buffer");
    buf[0] = '\0';
#define FORMAT_X(type, name, how, doc)                                                       \
    if (FITS(name, size))                                                                    \
        PUT(buf, cap, &used, #name, -1, s->name);
#define FORMAT_A(type, name, count, how, doc)                                                \
    for (int i = 0; FITS(name, size) && i < (count); i++)                                   \
        if (i == 0 || strcmp(tess_method_name(i), "unknown") != 0) /* ids of this build */  \
            PUT(buf, cap, &used, #name, i, s->name[i]);
    TESS_STATS_FIELDS(FORMAT_X, FORMAT_A)
#undef FORMAT_X
#undef FORMAT_A
    if (used >= cap) {
        buf[cap - 1] = '\0';
        return tessi_error(TESS_ERR_TRUNCATE, "tess_stats_format: %zu bytes are not enough",
                           cap);
    }
    return 0;
}
