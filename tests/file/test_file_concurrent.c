/*
 * test_file_concurrent.c - the lost-update bug of ROMIO/OMPIO must not happen: two processes
 * write interleaved noncontiguous patterns with data sieving (read-modify-write windows that
 * span the other writers' bytes) while a third writes contiguous pieces with the default method,
 * all at once, over the same file. Every byte has exactly one writer, so the final file is
 * determined; it must equal the expected bytes after every round.
 *
 * Layout: NB blocks of B bytes. Block k belongs to A if k % 4 == 0, to B if k % 4 == 1 (both
 * through a strided view, small write windows, tess_method sieve, pmd or auto, changing with
 * the round) and to C if k % 4 >= 2 (C writes blocks 4i+2 and 4i+3 as one contiguous piece per
 * call, default hints, in PASSES passes a little apart, the last one with the final bytes). pmd
 * and auto sieve or not as the machine's cost model says; sieve does whenever the write gate
 * admits it (driver/gate.c: C writes unlocked until it notices a sieving writer, locked from
 * then on); otherwise it writes only its data. Whatever the gate decides, no update is lost.
 *
 * Usage: test_file_concurrent [rounds]
 */
#include "test_file_common.h"


#define NB 256
#define B 64
#define CHUNK 8 /* blocks of its own that A or B write per call */
#define PASSES 4

static char path[64];

static unsigned char value(int round, int64_t byte)
{
    return (unsigned char)(round * 131 + byte * 7 + byte / B);
}

static const char *const methods[] = {"sieve", "pmd", "auto"};

/* A (first = 0) or B (first = 1): their blocks through a view, in several writes. */
static int sieving_writer(int round, int first, const char *method)
{
    tess_file *f;
    tess_type *v, *ft;
    tess_stats s;
    unsigned char buf[CHUNK * B];
    int64_t n;
    const char *kv[] = {"tess_method", method, "ind_wr_buffer_size", "1000", NULL};
    CHECK_OK(tf_open(path, TESS_WRONLY, &f, kv));
    CHECK_OK(tess_type_vector(1, B, B, TESS_BYTE, &v));
    CHECK_OK(tess_type_resized(v, 0, 4 * B, &ft));
    CHECK_OK(tess_file_set_view(f, first * B, TESS_BYTE, ft));
    for (int64_t c = 0; c < NB / 4; c += CHUNK) {
        for (int64_t j = 0; j < CHUNK * B; j++) {
            int64_t blk = 4 * (c + j / B) + first;
            buf[j] = value(round, blk * B + j % B);
        }
        CHECK_OK(tess_file_write_at(f, c * B, buf, CHUNK * B, TESS_BYTE, &n));
        CHECK(n == CHUNK * B);
    }
    CHECK_OK(tess_file_stats(f, &s));
    CHECK(s.accessed_bytes >= NB / 4 * B && s.lock_ops % 2 == 0);
    /* sieve read-modify-wrote (under locks) or was refused by the gate (a lock fallback) */
    CHECK(strcmp(method, "sieve") != 0 || (s.accessed_bytes > NB / 4 * B && s.lock_ops > 0) ||
          s.lock_fallbacks > 0);
    CHECK_OK(tess_file_close(f));
    tess_type_free(v);
    tess_type_free(ft);
    return 0;
}

/* C: blocks 4i+2 .. 4i+3 as contiguous writes with the default hints, PASSES times. */
static int contiguous_writer(int round)
{
    tess_file *f;
    tess_stats s;
    unsigned char buf[2 * B];
    int64_t n;
    CHECK_OK(tess_file_open(path, TESS_WRONLY, NULL, &f));
    for (int pass = PASSES - 1; pass >= 0; pass--) {
        for (int64_t i = NB / 4 - 1; i >= 0; i--) {
            int64_t off = (4 * i + 2) * B;
            for (int64_t j = 0; j < 2 * B; j++)
                buf[j] = value(round + pass, off + j);
            CHECK_OK(tess_file_write_at(f, off, buf, 2 * B, TESS_BYTE, &n));
            CHECK(n == 2 * B);
        }
        usleep(300);
    }
    CHECK_OK(tess_file_stats(f, &s));
    CHECK(s.lock_ops % 2 == 0 && s.lock_ops <= 2 * PASSES * NB / 4); /* none, or a lock and an
                                                                          unlock around a write */
    CHECK_OK(tess_file_close(f));
    return 0;
}

/* Writers 0 and 1 sieve (the methods rotate over the rounds), writer 2 writes contiguously. */
static int writer(int w, int round)
{
    return w < 2 ? sieving_writer(round, w, methods[(round + w) % 3]) : contiguous_writer(round);
}

static void one_round(int round)
{
    unsigned char old[NB * B], *now;
    for (int64_t k = 0; k < NB * B; k++)
        old[k] = (unsigned char)~value(round, k);
    tf_put(path, old, NB * B);
    tf_race(3, round, writer);
    CHECK(tf_get(path, &now) == NB * B);
    for (int64_t k = 0; k < NB * B; k++)
        if (now[k] != value(round, k)) {
            fprintf(stderr, "round %d: byte %lld (block %lld, writer %c) lost its update\n",
                    round, (long long)k, (long long)(k / B), "ABCC"[(k / B) % 4]);
            exit(1);
        }
    free(now);
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 50;
    tf_path(path, sizeof path, "concurrent");
    for (int r = 0; r < rounds; r++)
        one_round(r);
    unlink(path);
    return 0;
}
