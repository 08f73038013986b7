/*
 * fuzz_decode.c - libFuzzer target for tess_type_decode (built with -DTESS_FUZZ=ON and clang).
 *
 *   tests/fuzz_decode [-max_total_time=120] [corpus_dir]
 *
 * Seed the corpus with `tests/test_decode_fuzz --corpus corpus_dir` (encodings of every node
 * kind). Each input must decode to a consistent type (re-encoding and decoding it again keeps
 * every invariant; a small type's regions add up to its size inside its true bounds) or be
 * refused with TESS_ERR_DECODE and a message; anything else traps. The library is built with
 * coverage instrumentation so libFuzzer sees the decoder's and the constructors' branches.
 */
#include "tessera.h"

#include <stdint.h>
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

    /* a walk costs up to a step per data element: only small types are walked */
    if (tess_type_size(t) > 4096)
        return;
    tess_cursor *c;
    tess_region r[32];
    int64_t n, sum = 0, lo = tess_type_true_lb(t), hi = lo + tess_type_true_extent(t);
    if (tess_cursor_create(t, 1, &c) != 0)
        __builtin_trap();
    do {
        if (tess_cursor_next(c, r, 32, -1, &n) != 0)
            __builtin_trap();
        for (int64_t i = 0; i < n; i++) {
            if (r[i].len <= 0 || r[i].off < lo || r[i].off + r[i].len > hi)
                __builtin_trap();
            sum += r[i].len;
        }
    } while (n > 0);
    tess_cursor_free(c);
    if (sum != tess_type_size(t))
        __builtin_trap();
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
