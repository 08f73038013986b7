/* summarize.c - see summarize.h. */
#include "summarize.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

#define TIMED(call, slow) (t0 = now(), (call), now() - t0 > SUMMARIZE_BUDGET ? (slow) : NULL)

/* Addresses a check may form: the regions' offsets from a heap buffer stay far from wrapping. */
#define NEAR (INT64_C(1) << 40)
#define SPAN_MAX (INT64_C(256) << 10)

/* The regions of the first n stream bytes of t (a malloc'ed array; *nreg entries). */
static const char *walk(const tess_type *t, int64_t n, tess_region **regs, int64_t *nreg)
{
    tess_cursor *c;
    int64_t lo = tess_type_true_lb(t), hi = lo + tess_type_true_extent(t), k = 0, got, sum = 0;
    tess_region *r = malloc((size_t)(n + 1) * sizeof *r);
    if (!r || tess_cursor_create(t, 1, &c) != 0) {
        free(r);
        return "cursor";
    }
    do {
        if (tess_cursor_next(c, r + k, n + 1 - k, n - sum, &got) != 0)
            break;
        for (int64_t i = k; i < k + got; i++) {
            if (r[i].len <= 0 || r[i].off < lo || r[i].off + r[i].len > hi)
                got = -1;
            else
                sum += r[i].len;
        }
        k += got;
    } while (got > 0 && sum < n && k <= n);
    tess_cursor_free(c);
    if (got < 0 || sum != n || k > n) {
        free(r);
        return "cursor walk: regions outside the true bounds or not adding up";
    }
    *regs = r;
    *nreg = k;
    return NULL;
}

/* Pack, partial pack and unpack of the first n bytes against region-by-region copies. */
static const char *pack_checks(const tess_type *t, int64_t n, const tess_region *r, int64_t nr)
{
    int64_t lo = r[0].off, hi = r[0].off + r[0].len;
    for (int64_t i = 1; i < nr; i++) {
        lo = r[i].off < lo ? r[i].off : lo;
        hi = r[i].off + r[i].len > hi ? r[i].off + r[i].len : hi;
    }
    if (lo < -NEAR || hi > NEAR || hi - lo > SPAN_MAX)
        return NULL;
    unsigned char *buf = malloc((size_t)(hi - lo)), *ref = malloc((size_t)n),
                  *out = malloc((size_t)n), *back = calloc(1, (size_t)(hi - lo)),
                  *expect = calloc(1, (size_t)(hi - lo));
    const char *why = NULL;
    double t0;
    int64_t got = 0, pos = 0;
    if (!buf || !ref || !out || !back || !expect) {
        why = "out of memory";
        goto done;
    }
    for (int64_t i = 0; i < hi - lo; i++)
        buf[i] = (unsigned char)(i * 131 + 7);
    for (int64_t i = 0; i < nr; i++) {
        memcpy(ref + pos, buf + (r[i].off - lo), (size_t)r[i].len);
        memcpy(expect + (r[i].off - lo), ref + pos, (size_t)r[i].len);
        pos += r[i].len;
    }
    unsigned char *origin = buf - lo, *back_origin = back - lo;
    if ((why = TIMED(tess_pack(origin, 1, t, 0, out, n, &got), "pack: too slow")))
        goto done;
    if (got != n || memcmp(out, ref, (size_t)n) != 0) {
        why = "pack differs from the regions' bytes";
        goto done;
    }
    int64_t from = n / 3, len = n / 2;
    if ((why = TIMED(tess_pack(origin, 1, t, from, out, len, &got), "partial pack: too slow")))
        goto done;
    if (got != len || memcmp(out, ref + from, (size_t)len) != 0) {
        why = "partial pack differs from the regions' bytes";
        goto done;
    }
    if ((why = TIMED(tess_unpack(ref, n, back_origin, 1, t, 0, &got), "unpack: too slow")))
        goto done;
    if (got != n || memcmp(back, expect, (size_t)(hi - lo)) != 0)
        why = "unpack differs from the regions' bytes";
done:
    free(buf);
    free(ref);
    free(out);
    free(back);
    free(expect);
    return why;
}

const char *summarize_check(const tess_type *t)
{
    double t0;
    const char *why;
    int64_t fp = 0;
    if ((why = TIMED(fp = tess_type_footprint(t), "footprint: too slow")))
        return why;
    if (fp < 0)
        return "footprint failed";
    char text[256];
    int rc = 0;
    if ((why = TIMED(rc = tess_type_describe(t, text, sizeof text), "describe: too slow")))
        return why;
    if ((rc != 0 && rc != TESS_ERR_TRUNCATE) || !memchr(text, '\0', sizeof text))
        return "describe failed";
    size_t len = 0;
    if ((why = TIMED(rc = tess_type_encode(t, NULL, 0, &len), "encode: too slow")))
        return why;
    if (rc != 0 || len == 0)
        return "encode failed";

    int64_t size = tess_type_size(t), n = size < SUMMARIZE_MAX_BYTES ? size : SUMMARIZE_MAX_BYTES;
    if (n == 0)
        return NULL;
    tess_region *r = NULL;
    int64_t nr = 0;
    const char *err = NULL;
    why = TIMED(err = walk(t, n, &r, &nr), "cursor walk: too slow");
    if (!why && !err)
        why = pack_checks(t, n, r, nr);
    free(r);
    return why ? why : err;
}
