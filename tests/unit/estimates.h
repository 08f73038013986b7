/*
 * estimates.h - every method's own estimate of one access whose file regions are known (the
 * exact path of tessi_est), for the tests that check estimates by hand or against the counters
 * of tess_stats.
 */
#ifndef TESS_TEST_ESTIMATES_H
#define TESS_TEST_ESTIMATES_H

#include "method/method.h"

typedef struct method_costs {
    tessi_cost naive, list, sieve, pmd;
} method_costs;

/* The regions r[0..n) (increasing), pieces with memory (0: contiguous memory, n). */
static inline tessi_est test_est(const tessi_model *m, bool write, int64_t buf,
                                 const tess_region *r, int64_t n, int64_t pieces)
{
    int64_t data = 0;
    for (int64_t i = 0; i < n; i++)
        data += r[i].len;
    return (tessi_est){.m = m, .write = write, .buf = buf, .bytes = data, .regions = n,
                       .lo = n ? r[0].off : 0, .hi = n ? r[n - 1].off + r[n - 1].len : 0,
                       .pieces = pieces ? pieces : n, .r = r, .nr = n};
}

static inline void estimate_all(const tessi_model *m, bool write, int64_t buf,
                                 const tess_region *r, int64_t n, int64_t pieces,
                                 method_costs *out)
{
    tessi_est e = test_est(m, write, buf, r, n, pieces);
    tessi_method_naive.estimate(&e, &out->naive);
    tessi_method_list.estimate(&e, &out->list);
    tessi_method_sieve.estimate(&e, &out->sieve);
    tessi_method_pmd.estimate(&e, &out->pmd);
}

#endif
