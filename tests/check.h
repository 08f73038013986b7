/*
 * check.h - the assertions every test program uses. A failed check prints where and why to
 * stderr and exits 1, so ctest reports the program as failed; SKIP exits 77 (skipped).
 */
#ifndef TESS_CHECK_H
#define TESS_CHECK_H

#include "tessera.h"

#include <stdio.h>
#include <stdlib.h>

#define CHECK(cond)                                                                          \
    do {                                                                                     \
        if (!(cond)) {                                                                       \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);         \
            exit(1);                                                                         \
        }                                                                                    \
    } while (0)

/*
 * The test cannot run here (the file system refuses O_DIRECT, a tool is missing, ...): say why
 * on stdout and exit 77, which ctest reports as skipped (SKIP_RETURN_CODE), never as passed.
 */
#define SKIP(...)                                                                            \
    do {                                                                                     \
        printf("skipped: ");                                                                 \
        printf(__VA_ARGS__);                                                                 \
        printf("\n");                                                                        \
        exit(77);                                                                            \
    } while (0)

/* A Tessera call that must succeed. */
#define CHECK_OK(call)                                                                       \
    do {                                                                                     \
        int check_rc_ = (call);                                                              \
        if (check_rc_ != 0) {                                                                \
            fprintf(stderr, "%s:%d: %s returned %d (%s): %s\n", __FILE__, __LINE__, #call,   \
                    check_rc_, tess_strerror(check_rc_), tess_last_error());                 \
            exit(1);                                                                         \
        }                                                                                    \
    } while (0)

/* A Tessera call that must fail with the given code and leave a message. */
#define CHECK_ERR(call, code)                                                                \
    do {                                                                                     \
        int check_rc_ = (call);                                                              \
        if (check_rc_ != (code) || tess_last_error()[0] == '\0') {                           \
            fprintf(stderr, "%s:%d: %s returned %d (%s), expected %d with a message\n",      \
                    __FILE__, __LINE__, #call, check_rc_, tess_strerror(check_rc_), (code)); \
            exit(1);                                                                         \
        }                                                                                    \
    } while (0)

/*
 * The options of the randomized tests: -n <count> (rounds, cases, ...) and -s <seed>; anything
 * else exits with status 2. Unset options keep their defaults.
 */
#include <unistd.h>
static inline void test_args(int argc, char **argv, int64_t *n, uint64_t *seed)
{
    int opt;
    while ((opt = getopt(argc, argv, "n:s:")) != -1) {
        if (opt == 'n')
            *n = atoll(optarg);
        else if (opt == 's')
            *seed = strtoull(optarg, NULL, 0);
        else
            exit(2);
    }
}

#endif
