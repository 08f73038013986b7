/*
 * pmd.h - performance-model-directed sieving (paper 003): Algorithm 1 (when to sieve) and
 * Algorithm 2 (how: grouping), as a streaming planner. pmd.c runs the plans and prices them
 * (its estimate plans the access's regions the same way).
 */
#ifndef TESS_METHOD_PMD_H
#define TESS_METHOD_PMD_H

#include "method/method.h"

/**
 * Algorithm 1 of paper 003 (when to sieve): should a region of len bytes, `hole` bytes after
 * the current group's end, be sieved together with the group rather than moved on its own?
 * Yes when the variable cost that sieving it adds is strictly below what moving it alone
 * costs in fixed terms (tessi_model_alone), i.e. when reading the hole costs less than the
 * call it saves:
 *   read:  hole*byte_r + mc*len                                  (hole read, region copied)
 *   write: hole*(byte_r + byte_w) + len*(byte_r + mc)            (hole read and rewritten,
 *          region read by the read-modify-write and copied in)
 *   write with hole == 0 onto an all-covered group: mc*len (the group stays covered: no read).
 * A write with a hole on storage without locks is never sieved. Fixed costs of the group as a
 * whole (its one call, a read-modify-write's extra read call and lock) are weighed when the group
 * closes (tessi_plan_*), since they are shared by all its regions.
 */
bool tessi_pmd_join(const tessi_model *m, bool write, bool group_covered, int64_t hole,
                    int64_t len);

/** Most groups one pushed region (or a flush) can complete. */
#define TESSI_PLAN_EMIT_MAX 2

/**
 * Algorithm 2 of paper 003 (how to sieve), streaming. Regions are pushed in increasing file
 * order; the planner keeps one open candidate group and one open run of regions moved alone, in
 * O(1) memory whatever the number of regions:
 *  - a region joins the open group when the group's extent stays within buf and Algorithm 1
 *    says yes; else the group closes and the region opens the next one;
 *  - a closing group of >= 2 regions becomes a SIEVE group when its full cost (tessi_group_cost)
 *    is strictly below moving its regions alone (count * alone + data bytes); otherwise its
 *    regions join the run;
 *  - the run is emitted just before the next SIEVE group (and at flush) as DIRECT or LIST,
 *    whichever tessi_group_cost prices lower (DIRECT on a tie, and always where the storage
 *    cannot batch).
 * Groups come out in file order and cover every pushed region exactly once.
 */
typedef struct tessi_planner {
    const tessi_model *m;
    bool write;
    int64_t buf;     /* largest SIEVE extent (the staging buffer), >= 1 */
    int64_t next;    /* index of the next region pushed */
    int64_t end;     /* end of the last region pushed (regions must not go back) */
    tessi_group run; /* open run of regions moved alone (count 0: none) */
    tessi_group grp; /* open candidate group (count 0: none) */
} tessi_planner;

/** Make run (a DIRECT or LIST group of regions moved alone) DIRECT or LIST, whichever the model
 *  prices lower: DIRECT on a tie (it needs no batch arrays) and where the storage cannot batch
 *  (a list is then the same calls). */
void tessi_plan_run_kind(const tessi_model *m, bool write, tessi_group *run);

/** Start a plan for one direction with staging buffer buf (> 0). m must outlive the planner. */
int tessi_plan_init(tessi_planner *pl, const tessi_model *m, bool write, int64_t buf);

/**
 * Push regions r[0..n) and store the groups they complete in out[0..*produced). Consumes
 * regions while at least TESSI_PLAN_EMIT_MAX slots of out are free: *used says how many were
 * consumed (call again with the rest). Regions must have off >= 0, len > 0, off >= the previous
 * region's end (TESS_ERR_ARG otherwise; nothing of that region is consumed).
 */
int tessi_plan_push(tessi_planner *pl, const tess_region *r, int64_t n, tessi_group *out,
                    int64_t cap, int64_t *used, int64_t *produced);

/**
 * Close the open group and run, storing up to TESSI_PLAN_EMIT_MAX groups in out (cap must be
 * at least that). The planner stays usable: the next region pushed starts fresh groups (this is
 * how a caller that keeps regions in chunks bounds what it must remember).
 */
int tessi_plan_flush(tessi_planner *pl, tessi_group *out, int64_t cap, int64_t *produced);

/**
 * Classic sieving's windows (sieve.c), priced one region at a time in increasing file order,
 * as sieve's estimate prices them: pmd weighs its plan against them. e gives the model, the
 * direction, the buffer and the access's data bytes and extent (its regions are not read).
 */
typedef struct tessi_windows {
    const tessi_est *e;
    bool open;           /* a window is open: [ws, we) holding data bytes */
    int64_t ws, we, data;
    tessi_cost c;        /* the windows closed so far */
} tessi_windows;

/** Add the region [off, end) (off >= every earlier region's end). */
void tessi_windows_add(tessi_windows *w, int64_t off, int64_t end);

/** Close the last window and store the price of every window in *out (a write on storage
 *  without locks: naive's, which sieve then runs; peak: sieve's staging buffer). */
void tessi_windows_end(tessi_windows *w, tessi_cost *out);

#endif
