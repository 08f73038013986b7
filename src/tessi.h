/*
 * tessi.h - internal helpers shared by every layer: error reporting and checked arithmetic.
 * Not installed; nothing here is part of the public API.
 */
#ifndef TESSI_H
#define TESSI_H

#include "tessera.h"

#include <stdbool.h>
#include <stdint.h>

/**
 * Record a detail message for tess_last_error() (printf format) and return code, so that a
 * failure path reads `return tessi_error(TESS_ERR_ARG, "tess_type_vector: count %lld < 0", ...)`.
 */
int tessi_error(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/** Map a negative errno from a driver to a TESS_ERR_* code. */
int tessi_errno_code(int neg_errno);

/* Checked int64 arithmetic: return false (and leave *r unspecified) on overflow. */
static inline bool tessi_add(int64_t a, int64_t b, int64_t *r) { return !__builtin_add_overflow(a, b, r); }
static inline bool tessi_mul(int64_t a, int64_t b, int64_t *r) { return !__builtin_mul_overflow(a, b, r); }

#endif
