/*
 * report.c - summary first, details below, and the --results lines (see report.h).
 */
#include "report.h"

#include <stdlib.h>
#include <string.h>

#include "options.h"

int bench_report_begin(bench_report *r, const char *workload, const char *results_path)
{
    memset(r, 0, sizeof *r);
    r->workload = workload;
    if (results_path && !(r->results = fopen(results_path, "a")))
        return bench_fail("--results: cannot open %s", results_path);
    r->detail = open_memstream(&r->buf, &r->len);
    if (!r->detail)
        r->detail = stdout;
    return 0;
}

void bench_report_end(bench_report *r)
{
    if (r->detail && r->detail != stdout) {
        fclose(r->detail);
        if (r->len) {
            printf("\ndetails\n=======\n");
            fwrite(r->buf, 1, r->len, stdout);
        }
        free(r->buf);
    }
    if (r->results)
        fclose(r->results);
    fflush(stdout);
    memset(r, 0, sizeof *r);
}

void bench_result(const bench_report *r, const char *case_name, const char *impl, int mpi,
                  int write, double sec, double bytes, const char *check)
{
    if (r->results && sec > 0)
        fprintf(r->results, "%s\t%s\t%s\t%s\t%s\t%.9g\t%.0f\t%s\n", r->workload, case_name,
                impl, mpi ? "mpi" : "tessera", write ? "write" : "read", sec, bytes, check);
}
