/*
 * walk.c - the walker and the positional descents of walk.h.
 */
#include "type/walk.h"

/* Runs fetched from the cursor per step of the walk. */
#define WALK_BATCH 64

static inline int64_t clamp64(int64_t v, int64_t lo, int64_t hi)
{
    return tessi_min64(tessi_max64(v, lo), hi);
}

int tessi_walk_tiles(const tess_type *t, int64_t base, int64_t first, int64_t bytes, int64_t *k,
                     int64_t *count, int64_t *kbase)
{
    *k = first / t->size;
    tessi_i128 end = ((tessi_i128)first + bytes + t->size - 1) / t->size;
    tessi_i128 b = (tessi_i128)base + (tessi_i128)*k * t->extent;
    if (b > INT64_MAX || b < INT64_MIN || end > INT64_MAX)
        return tessi_error(TESS_ERR_OVERFLOW, "walk: tile origin beyond int64");
    *count = (int64_t)end - *k;
    *kbase = (int64_t)b;
    return 0;
}

int tessi_walk_cursor(tess_cursor *c, const tess_type *t, int64_t base, int64_t first,
                      int64_t bytes, int64_t *kbase)
{
    int64_t k = 0, count = 0;
    int rc = tessi_walk_tiles(t, base, first, bytes, &k, &count, kbase);
    if (rc || (rc = tessi_cursor_init(c, t, count)))
        return rc;
    return tess_cursor_seek(c, first - k * t->size);
}

int tessi_walk(const tess_type *t, int64_t base, int64_t first, int64_t bytes, tessi_run_fn fn,
               void *arg)
{
    tessi_run runs[WALK_BATCH];
    tess_cursor c;
    int64_t kbase, left = bytes, n;
    if (bytes <= 0)
        return 0;
    int rc = tessi_walk_cursor(&c, t, base, first, bytes, &kbase);
    while (rc == 0 && left > 0) {
        tessi_cursor_runs(&c, runs, WALK_BATCH, left, &n);
        if (n == 0)
            return tessi_error(TESS_ERR_INTERNAL, "walk: the stream ended %lld bytes early",
                               (long long)left);
        for (int64_t i = 0; rc == 0 && i < n; i++) {
            tessi_run r = runs[i];
            r.off = (int64_t)((uint64_t)r.off + (uint64_t)kbase);
            left -= r.n * r.len;
            rc = fn(arg, &r);
        }
    }
    return rc > 0 ? 0 : rc;
}

/* Data bytes of one instance of monotonic t at offsets below y (relative to t's origin):
 * descends one block per level, O(depth log blocks). */
static int64_t bytes_below(const tess_type *t, int64_t y)
{
    int64_t acc = 0;
    for (;;) {
        if (t->depth == 0)
            return acc + clamp64(y, 0, t->size);
        if (y <= t->true_lb)
            return acc;
        if (y >= t->true_ub)
            return acc + t->size;
        int64_t lo = 0, hi = tessi_num_blocks(t) - 1; /* last block whose data starts below y */
        while (lo < hi) {
            int64_t mid = lo + (hi - lo + 1) / 2;
            if (tessi_block_displ(t, mid) + tessi_block_child(t, mid)->true_lb < y)
                lo = mid;
            else
                hi = mid - 1;
        }
        const tess_type *ch = tessi_block_child(t, lo);
        int64_t d = tessi_block_displ(t, lo), n = tessi_block_len(t, lo), j = 0;
        acc += tessi_block_bytes_before(t, lo);
        if (ch->extent > 0)
            j = clamp64((y - d - ch->true_lb) / ch->extent, 0, n - 1);
        acc += j * ch->size;
        y -= d + j * ch->extent;
        t = ch;
    }
}

int tessi_stream_at(const tess_type *t, int64_t base, int64_t x, int64_t *s)
{
    tessi_i128 rel = (tessi_i128)x - base - t->true_lb;
    *s = 0;
    if (rel <= 0)
        return 0;
    tessi_i128 k = rel / t->extent;
    int64_t y = (int64_t)(rel - k * t->extent) + t->true_lb;
    tessi_i128 v = k * t->size + bytes_below(t, y);
    if (v > INT64_MAX)
        return tessi_error(TESS_ERR_OVERFLOW, "walk: stream position at byte %lld overflows "
                           "int64", (long long)x);
    *s = (int64_t)v;
    return 0;
}

static int first_offset(void *arg, const tessi_run *r)
{
    *(int64_t *)arg = r->off;
    return 1;
}

int tessi_offset_at(const tess_type *t, int64_t base, int64_t s, int64_t *x)
{
    *x = INT64_MIN;
    int rc = tessi_walk(t, base, s, 1, first_offset, x);
    if (rc == 0 && *x == INT64_MIN)
        rc = tessi_error(TESS_ERR_INTERNAL, "walk: no byte at stream position %lld",
                         (long long)s);
    return rc;
}

typedef struct {
    int64_t n, cap, prev_end;
} counting;

static int count_run(void *arg, const tessi_run *r)
{
    counting *c = arg;
    bool dense = r->n == 1 || r->stride == r->len;
    c->n += (dense ? 1 : r->n) - (r->off == c->prev_end);
    c->prev_end = r->off + (r->n - 1) * r->stride + r->len;
    return c->n >= c->cap;
}

int tessi_count_regions(const tess_type *t, int64_t base, int64_t first, int64_t bytes,
                        int64_t cap, int64_t *n)
{
    counting c = {.cap = cap, .prev_end = INT64_MIN};
    int rc = tessi_walk(t, base, first, bytes, count_run, &c);
    *n = tessi_min64(c.n, cap);
    return rc;
}

int tess_cursor_next_runs(tess_cursor *c, tess_run *out, int64_t max_runs, int64_t max_bytes,
                          int64_t *n)
{
    tessi_run runs[WALK_BATCH];
    if (!c || !n || (!out && max_runs > 0) || max_runs < 0)
        return tessi_error(TESS_ERR_ARG, "tess_cursor_next_runs: %s",
                           max_runs < 0 ? "max_runs < 0" : "a NULL argument");
    *n = 0;
    while (*n < max_runs && max_bytes != 0) {
        int64_t got;
        tessi_cursor_runs(c, runs, tessi_min64(WALK_BATCH, max_runs - *n), max_bytes, &got);
        for (int64_t i = 0; i < got; i++) {
            out[(*n)++] = (tess_run){runs[i].off, runs[i].len, runs[i].stride, runs[i].n};
            if (max_bytes > 0)
                max_bytes -= runs[i].n * runs[i].len;
        }
        if (got == 0)
            break;
    }
    return 0;
}
