/*
 * base.h - the base layer every other layer builds on (see design.md): error recording and
 * errno mapping, checked int64 arithmetic, the one 128-bit integer type, a monotonic clock.
 * Internal: not installed; nothing here is part of the public API (hint table: base/hints.h,
 * tracer hook: base/tracer.h).
 */
#ifndef TESS_BASE_H
#define TESS_BASE_H

#include "tessera_group.h"

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

/**
 * Record a detail message for tess_last_error() (printf format) and return code, so that a
 * failure path reads `return tessi_error(TESS_ERR_ARG, "tess_type_vector: count %lld < 0", ...)`.
 * The public tess_error_set (tessera_group.h), under the name the library's own code uses.
 */
#define tessi_error tess_error_set

/** Map a negative errno from a driver to a TESS_ERR_* code. */
int tessi_errno_code(int neg_errno);

/* Checked int64 arithmetic: return false (and leave *r unspecified) on overflow. */
static inline bool tessi_add(int64_t a, int64_t b, int64_t *r)
{
    return !__builtin_add_overflow(a, b, r);
}
static inline bool tessi_mul(int64_t a, int64_t b, int64_t *r)
{
    return !__builtin_mul_overflow(a, b, r);
}

/** 128-bit signed integer for intermediate offsets that may exceed int64 before a check. */
__extension__ typedef __int128 tessi_i128;

static inline int64_t tessi_min64(int64_t a, int64_t b) { return a < b ? a : b; }
static inline int64_t tessi_max64(int64_t a, int64_t b) { return a > b ? a : b; }

/** Seconds on the monotonic clock (for durations). */
static inline double tessi_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

#endif
