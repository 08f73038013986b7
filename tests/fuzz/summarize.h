/*
 * summarize.h - what both decode fuzzers (tests/fuzz/fuzz_decode.c under libFuzzer, and
 * tests/unit/test_decode_fuzz.c in make check) do with every type that decodes: the walks that
 * summarize it and bounded walks that follow its data, each under a time budget.
 */
#ifndef TESS_FUZZ_SUMMARIZE_H
#define TESS_FUZZ_SUMMARIZE_H

#include "tessera.h"

/** Data bytes of the stream a check walks, packs and unpacks at most. */
#define SUMMARIZE_MAX_BYTES (INT64_C(1) << 14)
/** Seconds any one call may take (sanitized builds on a loaded machine included). */
#define SUMMARIZE_BUDGET 1.0

/**
 * Check decoded type t: tess_type_footprint, tess_type_describe into a 256-byte buffer,
 * tess_type_encode's measuring pass, a cursor walk over the first min(size, SUMMARIZE_MAX_BYTES) stream bytes (regions inside the
 * true bounds, adding up), and, when those regions span at most 256 KiB of addresses near 0,
 * tess_pack of that prefix, of a part of it from an inner offset, and tess_unpack, compared
 * with copies made region by region. Returns NULL, or what failed (a static string).
 */
const char *summarize_check(const tess_type *t);

#endif
