/*
 * report.h - how a benchmark's output is laid out: a summary line per case first, the detail
 * tables below.
 *
 * Between bench_report_begin and bench_report_end a benchmark prints its header and one summary
 * line per case to stdout, as each case finishes (so a long run shows progress), and its detail
 * tables to r->detail, a memory stream printed under the summary by bench_report_end. With
 * --results FILE, bench_result appends one line per case, implementation and direction to FILE
 * (`tessera demo` reads the first six columns, `tessera bench mpiio` all eight):
 *     <workload> TAB <case> TAB <implementation> TAB tessera|mpi TAB write|read TAB
 *     <seconds per op> TAB <bytes per op, all processes> TAB <check>
 * The check is the benchmark's verdict on that op's data (the collective workloads and
 * tessera-formats: "ok" when verified).
 */
#ifndef TESS_BENCH_REPORT_H
#define TESS_BENCH_REPORT_H

#include <stdio.h>

typedef struct bench_report {
    FILE *detail;        /**< the detail tables: a memory stream (or stdout if none could open) */
    char *buf;
    size_t len;
    FILE *results;       /**< --results FILE, or NULL */
    const char *workload;
} bench_report;

/** Start: results_path may be NULL. 0, or -1 with a message (the results file did not open). */
int bench_report_begin(bench_report *r, const char *workload, const char *results_path);
/** Print the details under the summary (a blank line and a rule first) and release everything. */
void bench_report_end(bench_report *r);
/** One line for --results: seconds per op of an implementation (mpi: the MPI library's), the
 *  bytes one op moves (all processes) and the check of its data. Nothing when sec <= 0. */
void bench_result(const bench_report *r, const char *case_name, const char *impl, int mpi,
                  int write, double sec, double bytes, const char *check);

#endif
