/*
 * demo.c - `tessera demo [--verbose] [--mpiexec CMD] [--np N]`: the benchmarks, small, and one
 * summary row per workload.
 *
 * Each benchmark runs as a child process (`tessera bench <name> --quick --results FILE`, the
 * collective ones under CMD -n N), its output kept in a temporary file. The summary compares,
 * per workload and direction, every Tessera method with the MPI library's MPI-IO over the
 * workload's cases: the ratio MPI-IO time / Tessera time of each case, their geometric mean, and
 * the method with the best mean is named. --verbose prints every benchmark's complete output
 * under the summary; a benchmark that fails has its output printed in any case.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#ifdef TESS_BENCH_MPI
#include <mpi.h>
#endif

#include "bench.h"
#include "cmds.h"

/* What the demo runs, in order. */
typedef struct demo_run {
    const char *name;  /* the bench command */
    int mpi;           /* run under the MPI launcher */
    int io;            /* an I/O workload with --results (a summary row) */
    const char *what;  /* the summary's description */
} demo_run;

static const demo_run runs[] = {
    {"indep", 0, 1, "HPIO independent, 4 layouts x 2 sizes"},
    {"pmd", 0, 1, "paper 003 scenarios, hole sweep; ROMIO"},
    {"tile", 1, 1, "tile reader (paper 000), collective"},
    {"block3d", 1, 1, "ROMIO coll_perf 3-D block, collective"},
    {"btio", 1, 1, "NAS BTIO, collective"},
    {"types", 0, 0, "pack/unpack vs MPI_Pack (see --verbose)"},
};
enum { NRUNS = sizeof runs / sizeof runs[0], MAX_ARGS = 32, MAX_CASES = 64, MAX_IMPLS = 16 };

/* One result line of a benchmark (bench/report.h). */
typedef struct rec {
    char workload[32], name[64], impl[32];
    int mpi, write;
    double sec;
} rec;

/* Run argv with stdout and stderr into the file out; the exit status (-1: did not run). */
static int run_child(char *const *argv, int out)
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        dup2(out, STDOUT_FILENO);
        dup2(out, STDERR_FILENO);
        execvp(argv[0], argv);
        fprintf(stderr, "tessera demo: cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void copy_out(int fd)
{
    char buf[65536];
    ssize_t n;
    lseek(fd, 0, SEEK_SET);
    fflush(stdout);
    while ((n = read(fd, buf, sizeof buf)) > 0)
        fwrite(buf, 1, (size_t)n, stdout);
}

static int read_results(FILE *f, rec *r, int cap)
{
    int n = 0;
    char line[512], kind[16], op[16];
    rewind(f);
    while (n < cap && fgets(line, sizeof line, f))
        if (sscanf(line, "%31[^\t]\t%63[^\t]\t%31[^\t]\t%15[^\t]\t%15[^\t]\t%lf", r[n].workload,
                   r[n].name, r[n].impl, kind, op, &r[n].sec) == 6 && r[n].sec > 0) {
            r[n].mpi = strcmp(kind, "mpi") == 0;
            r[n].write = strcmp(op, "write") == 0;
            n++;
        }
    return n;
}

/* The summary cell of one workload and direction: the Tessera method whose ratios (MPI-IO
 * time / its time, per case) have the best geometric mean over the cases that have an MPI-IO
 * figure, with the mean and the range of its ratios. */
static void best_cell(const rec *r, int n, const char *workload, int write, char *out,
                      size_t cap)
{
    const char *cases[MAX_CASES], *impls[MAX_IMPLS];
    double mpi[MAX_CASES];
    int ncases = 0, nimpls = 0;
    for (int i = 0; i < n; i++) {
        if (strcmp(r[i].workload, workload) != 0 || r[i].write != write)
            continue;
        int c = 0;
        while (c < ncases && strcmp(cases[c], r[i].name) != 0)
            c++;
        if (c == ncases && ncases < MAX_CASES) {
            cases[ncases] = r[i].name;
            mpi[ncases++] = 0;
        }
        if (c < ncases && r[i].mpi && (mpi[c] == 0 || r[i].sec < mpi[c]))
            mpi[c] = r[i].sec; /* several MPI-IO variants (ROMIO with, without sieving): the faster */
        int k = 0;
        while (k < nimpls && strcmp(impls[k], r[i].impl) != 0)
            k++;
        if (!r[i].mpi && k == nimpls && nimpls < MAX_IMPLS)
            impls[nimpls++] = r[i].impl;
    }
    double best = 0, lo = 0, hi = 0;
    int besti = -1, counted = 0;
    for (int k = 0; k < nimpls; k++) {
        double logsum = 0, klo = INFINITY, khi = 0;
        int m = 0, missing = 0;
        for (int c = 0; c < ncases; c++) {
            if (mpi[c] == 0)
                continue;
            double sec = 0;
            for (int i = 0; i < n; i++)
                if (r[i].write == write && !r[i].mpi && strcmp(r[i].workload, workload) == 0 &&
                    strcmp(r[i].name, cases[c]) == 0 && strcmp(r[i].impl, impls[k]) == 0)
                    sec = r[i].sec;
            if (sec == 0) {
                missing = 1; /* a method that did not run every case is not compared */
                break;
            }
            double ratio = mpi[c] / sec;
            logsum += log(ratio);
            klo = ratio < klo ? ratio : klo;
            khi = ratio > khi ? ratio : khi;
            m++;
        }
        double mean = m ? exp(logsum / m) : 0;
        if (!missing && m && mean > best) {
            best = mean;
            besti = k;
            lo = klo;
            hi = khi;
            counted = m;
        }
    }
    if (besti < 0)
        snprintf(out, cap, "-");
    else if (counted == 1)
        snprintf(out, cap, "%-13s %6.2fx", impls[besti], best);
    else
        snprintf(out, cap, "%-13s %6.2fx [%.2f-%.2f]", impls[besti], best, lo, hi);
}

static int count_cases(const rec *r, int n, const char *workload)
{
    int count = 0;
    for (int i = 0; i < n; i++) {
        if (strcmp(r[i].workload, workload) != 0)
            continue;
        int seen = 0;
        for (int j = 0; j < i && !seen; j++)
            seen = strcmp(r[j].workload, workload) == 0 && strcmp(r[j].name, r[i].name) == 0;
        count += !seen;
    }
    return count;
}

static void print_summary(const rec *r, int n, const int *status)
{
    char lib[160] = "the MPI library";
#ifdef TESS_BENCH_MPI
    char ver[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    if (MPI_Get_library_version(ver, &len) == MPI_SUCCESS) {
        ver[strcspn(ver, "\n\r,")] = '\0';
        snprintf(lib, sizeof lib, "%.150s", ver);
    }
#endif
    printf("tessera demo: Tessera against %s's MPI-IO, small cases (--quick), page-cache "
           "figures\n", lib);
    bench_print_machine(stdout);
    printf("ratio = MPI-IO time / Tessera time (> 1: Tessera faster), geometric mean over the "
           "workload's cases [lowest-highest];\nMPI-IO: the library's default component (pmd: "
           "ROMIO, the faster of data sieving on and off)\n\n");
    printf("%-8s %5s  %-38s  %-34s  %s\n", "workload", "cases", "what", "write: best method",
           "read: best method");
    for (int i = 0; i < NRUNS; i++) {
        char w[64] = "", rd[64] = "";
        if (runs[i].io) {
            best_cell(r, n, runs[i].name, 1, w, sizeof w);
            best_cell(r, n, runs[i].name, 0, rd, sizeof rd);
        }
        if (status[i] != 0) {
            snprintf(w, sizeof w, "FAILED (exit %d): output below", status[i]);
            rd[0] = '\0';
        }
        char cases[16] = "-";
        if (runs[i].io)
            snprintf(cases, sizeof cases, "%d", count_cases(r, n, runs[i].name));
        char line[256];
        int k = snprintf(line, sizeof line, "%-8s %5s  %-38s  %-34s  %s", runs[i].name, cases,
                         runs[i].what, w, rd);
        while (k > 0 && k < (int)sizeof line && line[k - 1] == ' ')
            line[--k] = '\0';
        printf("%s\n", line);
    }
}

static void usage(FILE *f)
{
    fputs("usage: tessera demo [--verbose] [--mpiexec CMD] [--np N]\n"
          "  Runs the benchmarks small (types, indep, pmd; tile, block3d and btio under CMD -n N)\n"
          "  and prints one summary row per workload; --verbose adds every benchmark's complete\n"
          "  output. CMD: the MPI launcher and its flags (default \"mpirun\"), N: processes\n"
          "  (default 4).\n",
          f);
}

int tess_cmd_demo(int argc, char **argv)
{
    int verbose = 0, np = 4;
    char launcher[512] = "mpirun";
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--verbose") == 0 || strcmp(argv[i], "-v") == 0) {
            verbose = 1;
        } else if (strcmp(argv[i], "--mpiexec") == 0 && i + 1 < argc) {
            snprintf(launcher, sizeof launcher, "%s", argv[++i]);
        } else if (strcmp(argv[i], "--np") == 0 && i + 1 < argc && atoi(argv[i + 1]) > 0) {
            np = atoi(argv[++i]);
        } else {
            int help = strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0;
            usage(help ? stdout : stderr);
            return help ? 0 : 2;
        }
    }
    char self[4096], results[1200], nps[16];
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    if (len <= 0)
        return bench_fail("demo: cannot find the tessera program: %s", strerror(errno)), 1;
    self[len] = '\0';
    snprintf(results, sizeof results, "%s/tessera-demo-%ld.results", bench_default_dir(),
             (long)getpid());
    snprintf(nps, sizeof nps, "%d", np);
    int outs[NRUNS], status[NRUNS], failed = 0;
    for (int i = 0; i < NRUNS; i++) {
        char path[1200], *args[MAX_ARGS], words[512];
        int k = 0;
        snprintf(words, sizeof words, "%s", launcher);
        if (runs[i].mpi) {
            char *save = NULL;
            for (char *w = strtok_r(words, " ", &save); w && k < MAX_ARGS - 12;
                 w = strtok_r(NULL, " ", &save))
                args[k++] = w;
            args[k++] = "-n";
            args[k++] = nps;
        }
        char *tail[] = {self, "bench", (char *)runs[i].name, "--quick", "--results", results};
        for (size_t t = 0; t < (runs[i].io ? 6u : 4u); t++)
            args[k++] = tail[t];
        args[k] = NULL;
        snprintf(path, sizeof path, "%s/tessera-demo-XXXXXX", bench_default_dir());
        outs[i] = mkstemp(path);
        if (outs[i] < 0)
            return bench_fail("demo: cannot create %s: %s", path, strerror(errno)), 1;
        unlink(path);
        if (isatty(STDERR_FILENO))
            fprintf(stderr, "running tessera bench %s (%d of %d) ...\r", runs[i].name, i + 1,
                    (int)NRUNS);
        status[i] = run_child(args, outs[i]);
        failed += status[i] != 0;
    }
    if (isatty(STDERR_FILENO))
        fprintf(stderr, "%60s\r", "");
    FILE *rf = fopen(results, "r");
    static rec r[4096];
    int n = rf ? read_results(rf, r, (int)(sizeof r / sizeof r[0])) : 0;
    if (rf)
        fclose(rf);
    unlink(results);
    print_summary(r, n, status);
    if (!verbose)
        printf("\nevery table of every benchmark: tessera demo --verbose (make demo VERBOSE=1)\n");
    for (int i = 0; i < NRUNS; i++) {
        if (verbose || status[i] != 0) {
            printf("\n========\n$ %s%s%s%stessera bench %s --quick\n========\n",
                   runs[i].mpi ? launcher : "", runs[i].mpi ? " -n " : "", runs[i].mpi ? nps : "",
                   runs[i].mpi ? " " : "", runs[i].name);
            copy_out(outs[i]);
        }
        close(outs[i]);
    }
    return failed ? 1 : 0;
}
