/*
 * pmd_test_common.h - shared by test_pmd_method (pmd and auto against byte maps and the
 * methods' own estimates) and test_pmd_auto (auto's bookkeeping, concurrent writers): the
 * process's scratch file and cost profile, the cost models the tests price with, opening a
 * handle with hints, and the estimates and auto's choice worked out independently of auto.
 */
#ifndef TESS_PMD_TEST_COMMON_H
#define TESS_PMD_TEST_COMMON_H

#include "estimates.h"
#include "randtype.h"
#include "test_file_common.h"

#include "method/pmd.h"

/* The scratch file every test opens and the profile file it is priced by (pt_init). */
extern char pt_path[64], pt_prof[64];

/* Name the scratch and profile files after tag and this process. */
void pt_init(const char *tag);

/* Remove the scratch and profile files. */
void pt_finish(void);

/* A random model, wide enough that plans mix every kind of group (locks: storage takes them). */
tessi_model pt_random_model(rt_rng *r, bool locks);

/* Save m as the cached variant of the profile file pt_prof. */
void pt_save_profile(const tessi_model *m);

/* Save a model where a call costs 1 and a byte 1/1024 (both directions), a lock pair 1/2,
 * nothing else costs anything, and lists are not batched: a region moved alone costs 1. */
void pt_unit_profile(void);

/* The model a file opened with this profile and these hints prices with (file.c's rules). */
tessi_model pt_file_model(const tessi_model *saved, int64_t list_max, bool uring);

/* Hints for a handle: method, buffers, batch size, io_uring, data sieving; NULL or "" unset. */
typedef struct {
    const char *method;
    char rd[24], wr[24], pairs[24];
    const char *uring, *ds_read, *ds_write;
} pt_hints;

/* Open pt_path with these hints and the profile pt_prof. */
int pt_open(const pt_hints *h, int flags, tess_file **f);

/* Random buffers, batch size and io_uring for one handle (method given, may be NULL). */
pt_hints pt_random_hints(rt_rng *r, const char *method);

/* Every method's estimate of the regions reg[0..n) under model m with sieve buffer buf, and the
 * groups of pmd's plan (malloc'ed, *ngroups of them). */
tessi_group *pt_estimate(const tessi_model *m, bool write, int64_t buf, const tess_region *reg,
                         int64_t n, method_costs *e, int64_t *ngroups);

/* auto's rule, written out: the lowest estimate among the candidates, ties to the first (naive,
 * list, sieve, pmd), under romio_ds_* = ds (0 unset, 1 enable: sieve or pmd, 2 disable: naive or
 * list). */
int pt_expected_choice(const method_costs *e, int ds);

#endif
