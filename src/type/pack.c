/*
 * pack.c - pack and unpack by cursor runs.
 *
 * A run is n equal regions at a fixed stride; the copy loops below are specialized for the
 * common region sizes so that a vector of doubles costs one 8-byte move per element instead of a
 * memcpy call. A stream that is one contiguous region is a single memcpy.
 */
#include "type/type.h"

#include <string.h>

typedef tessi_i128 i128; /* base.h; a short name for this file */

/* Runs fetched from the cursor per batch. */
#define PACK_BATCH 64

#define GATHER_FIXED(SZ)                                                                       \
    for (int64_t k = 0; k < n; k++, d += SZ, s += stride)                                      \
        memcpy(d, s, SZ);                                                                      \
    break

#define SCATTER_FIXED(SZ)                                                                      \
    for (int64_t k = 0; k < n; k++, s += SZ, d += stride)                                      \
        memcpy(d, s, SZ);                                                                      \
    break

/* Copy run r from the typed buffer `typed` into the packed bytes at `packed`. */
static void gather(char *packed, const char *typed, const tessi_run *r)
{
    char *d = packed;
    const char *s = typed + r->off;
    int64_t n = r->n, stride = r->stride, len = r->len;
    switch (len) {
    case 1: GATHER_FIXED(1);
    case 2: GATHER_FIXED(2);
    case 4: GATHER_FIXED(4);
    case 8: GATHER_FIXED(8);
    case 12: GATHER_FIXED(12);
    case 16: GATHER_FIXED(16);
    case 24: GATHER_FIXED(24);
    case 32: GATHER_FIXED(32);
    case 64: GATHER_FIXED(64);
    default:
        for (int64_t k = 0; k < n; k++, d += len, s += stride)
            memcpy(d, s, (size_t)len);
    }
}

/* Copy run r from the packed bytes at `packed` into the typed buffer `typed`. */
static void scatter(char *typed, const char *packed, const tessi_run *r)
{
    char *d = typed + r->off;
    const char *s = packed;
    int64_t n = r->n, stride = r->stride, len = r->len;
    switch (len) {
    case 1: SCATTER_FIXED(1);
    case 2: SCATTER_FIXED(2);
    case 4: SCATTER_FIXED(4);
    case 8: SCATTER_FIXED(8);
    case 12: SCATTER_FIXED(12);
    case 16: SCATTER_FIXED(16);
    case 24: SCATTER_FIXED(24);
    case 32: SCATTER_FIXED(32);
    case 64: SCATTER_FIXED(64);
    default:
        for (int64_t k = 0; k < n; k++, s += len, d += stride)
            memcpy(d, s, (size_t)len);
    }
}

/* Move up to max_bytes stream bytes from data_offset between `typed` and `packed`. */
static int transfer(const char *who, char *typed, int64_t count, const tess_type *t,
                    int64_t data_offset, char *packed, int64_t max_bytes, int64_t *moved,
                    bool to_packed)
{
    if (!t || !moved)
        return tessi_error(TESS_ERR_ARG, "%s: NULL type or byte count", who);
    if (count < 0 || max_bytes < 0 || data_offset < 0)
        return tessi_error(TESS_ERR_ARG, "%s: negative count, byte count or offset", who);
    i128 total = (i128)count * t->size;
    if (total > INT64_MAX)
        return tessi_error(TESS_ERR_OVERFLOW, "%s: %lld instances overflow", who, (long long)count);
    if (data_offset > total)
        return tessi_error(TESS_ERR_ARG, "%s: offset %lld past the stream's %lld bytes", who,
                           (long long)data_offset, (long long)total);
    int64_t want = (int64_t)total - data_offset < max_bytes ? (int64_t)total - data_offset : max_bytes;
    if (want > 0 && (!typed || !packed))
        return tessi_error(TESS_ERR_ARG, "%s: NULL buffer", who);
    *moved = 0;
    if (want == 0)
        return 0;
    if (t->dense || (count == 1 && t->num_regions == 1)) {
        char *at = typed + t->first_off + data_offset;
        memcpy(to_packed ? packed : at, to_packed ? at : packed, (size_t)want);
        *moved = want;
        return 0;
    }
    tess_cursor c;
    tessi_run runs[PACK_BATCH];
    int rc = tessi_cursor_init(&c, t, count);
    if (!rc)
        rc = tess_cursor_seek(&c, data_offset);
    if (rc)
        return rc;
    int64_t done = 0, n;
    do {
        tessi_cursor_runs(&c, runs, PACK_BATCH, want - done, &n);
        for (int64_t k = 0; k < n; k++) {
            if (to_packed)
                gather(packed + done, typed, &runs[k]);
            else
                scatter(typed, packed + done, &runs[k]);
            done += runs[k].len * runs[k].n;
        }
    } while (n > 0 && done < want);
    *moved = done;
    return 0;
}

int tess_pack(const void *in, int64_t count, const tess_type *t, int64_t data_offset, void *out,
              int64_t max_bytes, int64_t *packed)
{
    return transfer("tess_pack", (char *)in, count, t, data_offset, out, max_bytes, packed, true);
}

int tess_unpack(const void *in, int64_t bytes, void *out, int64_t count, const tess_type *t,
                int64_t data_offset, int64_t *unpacked)
{
    return transfer("tess_unpack", out, count, t, data_offset, (char *)in, bytes, unpacked, false);
}
