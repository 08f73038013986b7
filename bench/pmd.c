/*
 * pmd.c - `tessera bench pmd`: performance-model-directed data sieving (paper 003) next to
 * naive I/O, classic data sieving, list I/O and `auto`, on paper 003's three access scenarios
 *   1 mixed:  region and hole sizes both vary widely (16 B .. 16 KiB, 16 B .. 256 KiB),
 *   2 sparse: small regions, large holes (512 B .. 2 KiB, 32 KiB .. 256 KiB),
 *   3 dense:  regions with small holes (64 B .. 1 KiB, 8 B .. 64 B),
 * (sizes log-uniform, octave by octave, from a fixed seed) with 1, 2, 4, 8 and 16 processes,
 * and a sweep over the hole size at a fixed region size (one process). With MPI, ROMIO's
 * independent MPI_File_write_at / MPI_File_read_at with data sieving enabled and disabled
 * (hints romio_ds_write, romio_ds_read) run the same pattern.
 *
 * Processes are forked children, each with its own file handle on one shared file, writing
 * and then reading its own interleaved part of it: the file is a sequence of rounds, round c
 * holding chunk c of every process in rank order, a chunk being --chunk consecutive regions of
 * the process's pattern with their holes. Every process has the same pattern (so the work is
 * balanced); between a process's chunks lie the other processes' chunks, which classic sieving
 * reads (and read-modify-writes) and PMD does not. One access is one call moving all of the
 * process's regions from a contiguous buffer through an hindexed file view.
 *
 * Timing: the implementations use the row's one file in turns. Before each repetition of an
 * implementation the file is put into the same state (bench_turn_file_ready: before writes
 * prefilled with the fill byte in writes of --prefill-write bytes; before reads the expected
 * image, written back); then the implementation's processes open the file, each makes
 * one untimed call and K timed calls (K from its first untimed call's time, so a repetition
 * lasts about --min-ms), all started together, and they close it. So every implementation
 * starts from the same page-cache state (the file's folio sizes and the order files were
 * created in weigh on small writes, see bench.h), with no other implementation's handle open,
 * and no row pays for the writeback of what ran before; the timed calls are not synced and
 * nothing is dropped. A repetition's figure is the slowest child's mean time per call (how long
 * the parallel access takes). The turns alternate repetition by repetition, each repetition
 * starting one implementation later. The median over --reps repetitions is printed in
 * milliseconds. Memory per method: the largest staging buffer one call held
 * (tess_stats.peak_buffer_bytes; for ROMIO, ROMIO's rule: min(buffer hint, extent of the access)
 * when it sieves, else 0).
 *
 * Checks: after every turn of writes the parent compares the whole file with the expected image
 * (holes keep the fill byte), and each child compares what it read with what it wrote.
 *
 * MPI: the ROMIO columns run in children that each call MPI_Init as MPI singletons (I/O on
 * MPI_COMM_SELF), with OMPI_MCA_io=romio321 unless OMPI_MCA_io is set (Open MPI's ROMIO; MPICH
 * has no other). Run the benchmark without mpirun: under a launcher, rank 0 runs it without the
 * ROMIO columns (its children cannot become singletons there) and the other ranks exit.
 */
#include "bench.h"
#include "cmds.h"
#include "pmd.h"

#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#ifdef TESS_BENCH_MPI
#include <mpi.h>
#endif

/* ------------------------------------------------------------------ patterns */

static void pattern_free(pattern *p)
{
    free(p->off);
    free(p->len);
    memset(p, 0, sizeof *p);
}

/* A size in [lo, hi) drawn octave by octave: an octave [2^e, 2^(e+1)) uniformly, then a size
 * in it uniformly (log-uniform to within the octave). lo and hi are powers of two. */
static int64_t draw(uint64_t *rng, int64_t lo, int64_t hi)
{
    int elo = 0, ehi = 0;
    while ((INT64_C(1) << elo) < lo)
        elo++;
    while ((INT64_C(1) << ehi) < hi)
        ehi++;
    int e = elo + (int)(bench_rand(rng) % (uint64_t)(ehi - elo));
    int64_t base = INT64_C(1) << e;
    return base + (int64_t)(bench_rand(rng) % (uint64_t)base);
}

/* Scenario s (1 mixed, 2 sparse, 3 dense) with n regions; s == 0: the sweep's fixed sizes. */
static int pattern_make(pattern *p, int s, int64_t n, int64_t region, int64_t hole)
{
    static const int64_t lim[4][4] = {{0, 0, 0, 0},
                                      {16, 16384, 16, 262144},
                                      {512, 2048, 32768, 262144},
                                      {64, 1024, 8, 64}};
    uint64_t rng = 0x5eed0000u + (uint64_t)s;
    memset(p, 0, sizeof *p);
    p->n = n;
    p->off = malloc(sizeof *p->off * (size_t)n);
    p->len = malloc(sizeof *p->len * (size_t)n);
    if (!p->off || !p->len)
        return bench_fail("bench pmd: out of memory for %lld regions", (long long)n);
    int64_t at = 0;
    for (int64_t i = 0; i < n; i++) {
        if (i > 0)
            at += s ? draw(&rng, lim[s][2], lim[s][3]) : hole;
        p->off[i] = at;
        p->len[i] = s ? draw(&rng, lim[s][0], lim[s][1]) : region;
        at += p->len[i];
        p->data += p->len[i];
    }
    p->end = at;
    return 0;
}

/* ------------------------------------------------------------------ printing */

static const char *ms(double sec, char *buf, size_t cap)
{
    snprintf(buf, cap, sec >= 1 ? "%.0f" : sec >= 0.01 ? "%.2f" : "%.3f", sec * 1e3);
    return buf;
}

static const char *mem(int64_t n, char *buf, size_t cap)
{
    if (n == 0)
        snprintf(buf, cap, "0");
    else if (n < 1024)
        snprintf(buf, cap, "%lldB", (long long)n);
    else if (n < (1 << 20))
        snprintf(buf, cap, "%.0fK", (double)n / 1024);
    else
        snprintf(buf, cap, "%.1fM", (double)n / 1048576);
    return buf;
}

/* The targets, tallied as rows are printed. */
typedef struct tally {
    int pmd_rows, pmd_within, cross_rows, cross_better, auto_rows, auto_within, mem_rows,
        mem_below;
    double pmd_worst, auto_worst;
} tally;

/* One row per operation: times of every implementation, what auto chose, memory, checks. */
static void print_rows(bench_table *tab, const char *label, const result *r, const opts *o,
                       int scenario, tally *ty, int sweep)
{
    static const char *const opname[2] = {"write", "read"};
    char b[64];
    for (int w = 0; w < 2; w++) {
        bench_table_cell(tab, "%s", w == 0 ? label : "");
        bench_table_cell(tab, "%s", opname[w]);
        for (int i = 0; i < NIMPL; i++)
            bench_table_cell(tab, "%s", !o->impl_on[i] ? "-" : !r[i].ran ? "error"
                                                             : ms(r[i].sec[w], b, sizeof b));
        bench_table_cell(tab, "%s", r[I_AUTO].ran ? tess_method_name(r[I_AUTO].last_method[w])
                                                  : "-");
        /* pmd against the better of naive and classic sieving; auto against the best method */
        double naive = r[I_NAIVE].sec[w], sieve = r[I_SIEVE].sec[w], pmd = r[I_PMD].sec[w];
        double base = naive < sieve ? naive : sieve, best = base;
        for (int i = I_PMD; i <= I_LIST; i++)
            if (r[i].sec[w] < best)
                best = r[i].sec[w];
        bool have = r[I_NAIVE].ran && r[I_SIEVE].ran && r[I_PMD].ran;
        bench_table_cell(tab, "%s", have ? (snprintf(b, sizeof b, "%.2f", pmd / base), b) : "-");
        bool auto_ok = have && r[I_LIST].ran && r[I_AUTO].ran;
        bench_table_cell(tab, "%s", auto_ok ? (snprintf(b, sizeof b, "%.2f",
                                                        r[I_AUTO].sec[w] / best), b) : "-");
        for (int i = I_SIEVE; i <= I_AUTO; i++)
            if (i != I_LIST)
                bench_table_cell(tab, "%s", mem(r[i].peak[w], b, sizeof b));
        bench_table_cell(tab, "%s", mem(r[I_ROMIO_DS].peak[w], b, sizeof b));
        bool ok = true;
        for (int i = 0; i < NIMPL; i++)
            ok = ok && (!o->impl_on[i] || r[i].ok);
        bench_table_cell(tab, "%s", ok ? "ok" : "FAIL");
        bench_table_end_row(tab);
        if (have) {
            ty->pmd_rows++;
            ty->pmd_within += pmd <= 1.10 * base;
            if (pmd / base > ty->pmd_worst)
                ty->pmd_worst = pmd / base;
            if (scenario == 1) { /* mixed sizes: naive and sieve each win some of the pattern */
                ty->cross_rows++;
                ty->cross_better += pmd < naive && pmd < sieve;
            }
            if (scenario == 2) {
                ty->mem_rows++;
                ty->mem_below += r[I_PMD].peak[w] < r[I_SIEVE].peak[w];
            }
        }
        if (auto_ok && sweep) {
            ty->auto_rows++;
            ty->auto_within += r[I_AUTO].sec[w] <= 1.10 * best;
            if (r[I_AUTO].sec[w] / best > ty->auto_worst)
                ty->auto_worst = r[I_AUTO].sec[w] / best;
        }
    }
}

static void table_init(bench_table *tab, FILE *out, const char *first)
{
    static const char *heads[18];
    static const int widths[18] = {9, 5, 7, 7, 7, 7, 7, 8, 10, 6, 9, 9, 6, 6, 6, 6, 5};
    heads[0] = first;
    const char *rest[] = {"op",      "naive",   "sieve",  "pmd",   "list",  "auto",
                          "romio-ds", "romio-nods", "auto->", "pmd/nv|sv", "auto/best",
                          "mem:sv", "pmd",    "auto",  "romio", "check"};
    for (int i = 0; i < 16; i++)
        heads[i + 1] = rest[i];
    bench_table_init(tab, out, 17, heads, widths);
}

/* ------------------------------------------------------------------ the command */

/* Launched by mpirun/mpiexec? *rank receives the rank (0 if not). */
static int under_launcher(int *rank)
{
    static const char *const vars[][2] = {{"OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK"},
                                          {"PMI_SIZE", "PMI_RANK"},
                                          {"PMIX_RANK", "PMIX_RANK"}};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
        if (getenv(vars[i][0])) {
            const char *r = getenv(vars[i][1]);
            *rank = r ? atoi(r) : 0;
            return 1;
        }
    *rank = 0;
    return 0;
}

static void print_targets(const tally *ty)
{
    printf("\ntargets:\n");
    printf("  pmd within 10%% of the better of naive and classic sieve: %d of %d rows "
           "(worst ratio %.2f)\n", ty->pmd_within, ty->pmd_rows, ty->pmd_worst);
    printf("  pmd strictly better than both where they cross (scenario 1, mixed): %d of %d "
           "rows\n", ty->cross_better, ty->cross_rows);
    printf("  auto within 10%% of the best Tessera method on every sweep point: %d of %d rows "
           "(worst ratio %.2f)\n", ty->auto_within, ty->auto_rows, ty->auto_worst);
    printf("  pmd peak buffer below classic sieving's in scenario 2 (sparse): %d of %d rows\n",
           ty->mem_below, ty->mem_rows);
}

/* The case's summary line: for each direction, the fastest Tessera implementation and the faster
 * of ROMIO's two, in ms, and ROMIO / Tessera (> 1: Tessera faster). Records --results. */
static void summary_row(bench_table *t, const bench_report *rep, const char *label,
                        const result *r, const opts *o, double bytes)
{
    char b1[32], b2[32];
    bench_table_cell(t, "%s", label);
    for (int w = 0; w < 2; w++) {
        int best = -1, romio = -1;
        for (int i = 0; i < NIMPL; i++) {
            if (!o->impl_on[i] || !r[i].ran)
                continue;
            bench_result(rep, label, impls[i].name, !impls[i].method, w == 0, r[i].sec[w], bytes,
                         r[i].ok ? "ok" : "FAIL");
            int *k = impls[i].method ? &best : &romio;
            if (*k < 0 || r[i].sec[w] < r[*k].sec[w])
                *k = i;
        }
        bench_table_cell(t, "%s", best < 0 ? "-" : impls[best].name);
        bench_table_cell(t, "%s", best < 0 ? "-" : ms(r[best].sec[w], b1, sizeof b1));
        bench_table_cell(t, "%s", romio < 0 ? "-" : ms(r[romio].sec[w], b2, sizeof b2));
        if (best >= 0 && romio >= 0 && r[best].sec[w] > 0)
            bench_table_cell(t, "%.2fx", r[romio].sec[w] / r[best].sec[w]);
        else
            bench_table_cell(t, "%s", "-");
    }
    bench_table_end_row(t);
}

static const char *const scenario_names[4] = {"", "mixed region and hole sizes",
                                              "sparse: large holes", "dense: small holes"};

/* Every scenario at every process count, then the sweep; summary rows to sum, details to
 * rep->detail. Returns the number of failed runs, or -1 when a pattern cannot be made. */
static int run_cases(const opts *o, const bench_report *rep, bench_table *sum, tally *ty)
{
    int failures = 0;
    char b1[32], b2[32], label[48];
    bench_table tab;
    for (int si = 0; si < o->nscen; si++) {
        int s = o->scen[si];
        pattern p;
        if (pattern_make(&p, s, o->regions[s], 0, 0)) {
            pattern_free(&p);
            return -1;
        }
        fprintf(rep->detail, "\nscenario %d (%s): %lld regions of %s per process, own extent %s\n",
                s, scenario_names[s], (long long)p.n, bench_fmt_bytes(p.data, b1, sizeof b1),
                bench_fmt_bytes(p.end, b2, sizeof b2));
        table_init(&tab, rep->detail, "procs");
        bench_table_header(&tab);
        for (int pi = 0; pi < o->nprocs; pi++) {
            result r[NIMPL];
            failures += pmd_run_all(o, &p, o->procs[pi], o->chunk, r);
            snprintf(label, sizeof label, "%d", o->procs[pi]);
            print_rows(&tab, label, r, o, s, ty, 0);
            snprintf(label, sizeof label, "scenario %d, %d proc%s", s, o->procs[pi],
                     o->procs[pi] > 1 ? "s" : "");
            summary_row(sum, rep, label, r, o, (double)p.data * o->procs[pi]);
        }
        pattern_free(&p);
    }
    if (!o->do_sweep)
        return failures;
    fprintf(rep->detail, "\nsweep: %lld regions of %s, one process, hole size varied\n",
            (long long)o->sweep_count, bench_fmt_bytes(o->sweep_region, b1, sizeof b1));
    table_init(&tab, rep->detail, "hole");
    bench_table_header(&tab);
    for (int h = 0; h < o->nsweep; h++) {
        pattern p;
        result r[NIMPL];
        if (pattern_make(&p, 0, o->sweep_count, o->sweep_region, o->sweep_holes[h])) {
            pattern_free(&p);
            return -1;
        }
        failures += pmd_run_all(o, &p, 1, o->sweep_count, r);
        print_rows(&tab, bench_fmt_bytes(o->sweep_holes[h], b1, sizeof b1), r, o, 0, ty, 1);
        snprintf(label, sizeof label, "sweep, hole %s", b1);
        summary_row(sum, rep, label, r, o, (double)p.data);
        pattern_free(&p);
    }
    return failures;
}

int tess_bench_pmd(int argc, char **argv)
{
    opts o = {.dir = bench_default_dir(), .use_mpi = 1, .do_sweep = 1};
    static const int64_t def_regions[4] = {0, 1024, 256, 8192};
    static const bench_choice impl_choices[NIMPL + 1] = {
        {"naive", 1u << I_NAIVE}, {"sieve", 1u << I_SIEVE}, {"pmd", 1u << I_PMD},
        {"list", 1u << I_LIST},   {"auto", 1u << I_AUTO},   {"romio-ds", 1u << I_ROMIO_DS},
        {"romio-nods", 1u << I_ROMIO_NODS}, {NULL, 0}};
    int64_t regions_all = 0, reps = 0;
    unsigned impl_mask = 0;
    bench_opt opts_table[] = {
        {.name = "procs", .kind = BENCH_OPT_INTS, .dst = o.procs, .cap = 8, .n = &o.nprocs,
         .min = 1, .max = MAX_PROCS, .arg = "LIST", .help = "process counts",
         .def = "1,2,4,8,16", .quick = "1,2"},
        {.name = "scenarios", .kind = BENCH_OPT_INTS, .dst = o.scen, .cap = 3, .n = &o.nscen,
         .min = 1, .max = 3, .arg = "LIST", .help = "scenarios: 1 mixed, 2 sparse, 3 dense",
         .def = "1,2,3"},
        {.name = "regions", .kind = BENCH_OPT_SIZE, .dst = &regions_all, .min = 1,
         .max = 1 << 24, .arg = "N", .quick = "64",
         .help = "regions per process in every scenario (default 1024, 256, 8192 for "
                 "scenarios 1, 2, 3; --quick 64)"},
        {.name = "chunk", .kind = BENCH_OPT_SIZE, .dst = &o.chunk, .min = 1, .arg = "N",
         .help = "regions per interleaved chunk of a process", .def = "64"},
        {.name = "sweep-region", .kind = BENCH_OPT_SIZE, .dst = &o.sweep_region, .min = 1,
         .max = INT_MAX, .arg = "N", .help = "region size of the sweep", .def = "1k"},
        {.name = "sweep-holes", .kind = BENCH_OPT_SIZES, .dst = o.sweep_holes, .cap = MAX_SWEEP,
         .n = &o.nsweep, .arg = "LIST", .help = "hole sizes of the sweep",
         .def = "16,64,256,1k,2k,4k,8k,16k,64k,128k", .quick = "64,4k,64k"},
        {.name = "sweep-count", .kind = BENCH_OPT_SIZE, .dst = &o.sweep_count, .min = 1,
         .arg = "N", .help = "regions of the sweep", .def = "1024", .quick = "128"},
        {.name = "no-sweep", .kind = BENCH_OPT_UNSET, .dst = &o.do_sweep,
         .help = "leave the sweep out"},
        {.name = "methods", .kind = BENCH_OPT_SET, .dst = &impl_mask, .arg = "LIST",
         .choices = impl_choices, .help = "implementations",
         .def = "naive,sieve,pmd,list,auto,romio-ds,romio-nods"},
        {.name = "profile", .kind = BENCH_OPT_TEXT, .dst = &o.profile, .arg = "FILE",
         .help = "cost-model profile for the Tessera methods (hint tess_profile; default: the "
                 "usual lookup, see `tessera calibrate`)"},
        BENCH_OPT_DIR(&o.dir),
        BENCH_OPT_PREFILL(&o.prefill),
        BENCH_OPT_REPS(&reps, MAX_REPS, "3"),
        BENCH_OPT_MIN_MS(&o.min_rep_sec, "20", "2"),
        BENCH_OPT_KEEP(&o.keep),
        BENCH_OPT_NO_MPI(&o.use_mpi, "leave the ROMIO columns out"),
        BENCH_OPT_CPU_TIME(&o.cpu_time),
        BENCH_OPT_RESULTS(&o.results),
        BENCH_OPT_QUICKLY(&o.quick, "small sizes for the demo"),
    };
    const bench_command cmd = {
        .name = "pmd", .opts = opts_table, .nopts = BENCH_NOPTS(opts_table),
        .about = "  PMD data sieving (paper 003) next to naive, classic sieve, list, auto and ROMIO's\n"
                 "  data sieving on/off: scenarios 1 mixed, 2 sparse, 3 dense, with 1..16 forked\n"
                 "  processes on one shared file, and a sweep over the hole size (one process).\n"
                 "  Times are milliseconds per parallel access (median; slowest process).\n"};
    int status = bench_parse(&cmd, argc, argv, 0);
    if (status >= 0)
        return status;
    o.reps = (int)reps;
    for (int i = 0; i < NIMPL; i++)
        o.impl_on[i] = (impl_mask >> i) & 1;
    for (int s = 1; s <= 3; s++)
        o.regions[s] = regions_all ? regions_all : def_regions[s];

    int rank = 0, launched = under_launcher(&rank);
    if (rank != 0)
        return 0; /* the benchmark forks its own processes: extra ranks have nothing to do */
    char library[256] = "n/a (built without MPI)";
    bool romio = false;
#ifdef TESS_BENCH_MPI
    romio = o.use_mpi && !launched;
    if (!o.use_mpi)
        snprintf(library, sizeof library, "not used (--no-mpi)");
    else if (launched)
        snprintf(library, sizeof library, "not used (started by an MPI launcher: run "
                                          "`tessera bench pmd` without mpirun for ROMIO)");
    else {
        char ver[MPI_MAX_LIBRARY_VERSION_STRING];
        int len = 0;
        if (MPI_Get_library_version(ver, &len) != MPI_SUCCESS)
            snprintf(ver, sizeof ver, "unknown MPI library");
        ver[strcspn(ver, "\n\r,")] = '\0';
        setenv("OMPI_MCA_io", "romio321", 0); /* Open MPI: its ROMIO component */
        snprintf(library, sizeof library, "%.150s (OMPI_MCA_io=%s)", ver, getenv("OMPI_MCA_io"));
    }
#else
    (void)launched;
#endif
    if (!romio)
        o.impl_on[I_ROMIO_DS] = o.impl_on[I_ROMIO_NODS] = 0;

    bench_report rep;
    if (bench_report_begin(&rep, "pmd", o.results) != 0)
        return 1;
    bench_use_cpu_clock(o.cpu_time); /* the children inherit the clock */
    signal(SIGPIPE, SIG_IGN); /* a process that died closes its gate: an error, not a signal */
    printf("tessera bench pmd: PMD data sieving (paper 003), files in %s\n", o.dir);
    printf("  ms per parallel access (median of %d repetitions of >= %.0f ms, slowest of the "
           "processes; one untimed call first); page-cache figures: one file per row, used by "
           "every implementation in turn, put into the same state before each repetition "
           "(prefilled in %lld-byte writes with the fill byte before writes; the data, written "
           "back, before reads); clock: %s\n", o.reps, o.min_rep_sec * 1e3, (long long)o.prefill,
           bench_clock_name());
    bench_print_machine(stdout);
    printf("  MPI: %s\n", library);
    printf("  cost model: %s\n", o.profile ? o.profile : "the usual profile lookup "
                                                          "(tess_stats.model_defaults says "
                                                          "whether one was found)");
    printf("  processes are forked, each with its own handle on one shared file; chunks of "
           "%lld regions interleaved round-robin\n", (long long)o.chunk);
    printf("  pmd/nv|sv = pmd / min(naive, sieve); auto/best = auto / min(naive, sieve, pmd, "
           "list); auto-> = the method auto ran; mem = peak staging buffer of one call\n");
    printf("\nsummary: the fastest Tessera method and the faster of ROMIO with and without data"
           " sieving, ms per access; ratio = ROMIO / Tessera\n");
    static const char *const sum_heads[] = {"case", "write", "ms", "ROMIO", "ratio",
                                            "read", "ms", "ROMIO", "ratio"};
    static const int sum_widths[] = {22, 6, 7, 7, 6, 6, 7, 7, 6};
    bench_table sum;
    bench_table_init(&sum, stdout, 9, sum_heads, sum_widths);
    bench_table_header(&sum);
    tally ty = {0};
    int failures = run_cases(&o, &rep, &sum, &ty);
    if (failures >= 0) {
        print_targets(&ty);
        if (failures)
            printf("\n%d run(s) failed or did not check: see the messages above\n", failures);
    }
    bench_report_end(&rep);
    return failures ? 1 : 0;
}
