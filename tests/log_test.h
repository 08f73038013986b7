/*
 * log_test.h - what the log container's tests (tests/unit/test_log.c, tests/mpi/test_log_mpi.c)
 * share: a small random generator and the bytes every write of an operation carries.
 */
#ifndef TESS_LOG_TEST_H
#define TESS_LOG_TEST_H

#include <stdint.h>

static inline unsigned lt_rnd(unsigned *s)
{
    *s = *s * 1103515245u + 12345u;
    return (*s >> 8) & 0xffffff;
}

/* The byte operation `op` writes at file offset pos: every operation's bytes differ. */
static inline unsigned char lt_content(int op, int64_t pos)
{
    uint32_t h = (uint32_t)op * 2654435761u ^ (uint32_t)pos * 40503u;
    h ^= h >> 13;
    h *= 0x5bd1e995u;
    return (unsigned char)(h ^ (h >> 15));
}

#endif
