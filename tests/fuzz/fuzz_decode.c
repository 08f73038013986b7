/*
 * fuzz_decode.c - libFuzzer target for tess_type_decode (built with -DTESS_FUZZ=ON and clang).
 *
 *   tests/fuzz_decode [-max_total_time=120] [corpus_dir]
 *
 * Seed the corpus with `tests/test_decode_fuzz --corpus corpus_dir` (encodings of every node
 * kind). Each input must decode to a consistent type (re-encoding and decoding it again keeps
 * every invariant) that summarize_check accepts (footprint, describe, a bounded cursor walk,
 * pack and unpack, each within a time budget: see summarize.h), or be refused with
 * TESS_ERR_DECODE and a message; anything else traps. The library is built with coverage
 * instrumentation so libFuzzer sees the decoder's, the constructors' and the kernels' branches.
 */
#include "summarize.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static void consistent(tess_type *t)
{
    size_t len = 0;
    tess_type *u = NULL;
    if (tess_type_encode(t, NULL, 0, &len) != 0)
        __builtin_trap();
    unsigned char *buf = malloc(len);
    if (!buf || tess_type_encode(t, buf, len, &len) != 0 || tess_type_decode(buf, len, &u) != 0)
        __builtin_trap();
    if (tess_type_size(u) != tess_type_size(t) || tess_type_extent(u) != tess_type_extent(t) ||
        tess_type_lb(u) != tess_type_lb(t) || tess_type_true_lb(u) != tess_type_true_lb(t) ||
        tess_type_true_extent(u) != tess_type_true_extent(t) ||
        tess_type_num_regions(u) != tess_type_num_regions(t))
        __builtin_trap();
    free(buf);
    tess_type_free(u);
    const char *why = summarize_check(t);
    if (why) {
        fprintf(stderr, "fuzz_decode: %s\n", why);
        __builtin_trap();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tess_type *t = NULL;
    int rc = tess_type_decode(data, size, &t);
    if (rc == 0) {
        consistent(t);
        tess_type_free(t);
    } else if (rc != TESS_ERR_DECODE || !tess_last_error()[0] || t) {
        __builtin_trap();
    }
    return 0;
}
