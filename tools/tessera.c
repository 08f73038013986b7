/*
 * tessera.c - the `tessera` command. Subcommands are rows of a dispatch table: a command is a
 * word path ("bench types") and a handler receiving the arguments after that path (argv[0] is
 * the last word). Later issues add rows (calibrate, inspect, advise, ...); nothing else here
 * needs to change.
 */
#include <stdio.h>
#include <string.h>

#include "bench.h"
#include "cmds.h"
#include "tessera.h"

typedef int (*command_fn)(int argc, char **argv);

typedef struct command {
    const char *words[3]; /* the command path, NULL-terminated (at most 2 words) */
    command_fn run;
    const char *summary;
} command;

static const command commands[] = {
    {.words = {"bench", "types", NULL},
     .run = bench_types_main,
     .summary = "pack/unpack GB/s of datatype shapes, Tessera next to MPI_Pack/MPI_Unpack"},
    {.words = {"bench", "indep", NULL},
     .run = bench_indep_main,
     .summary = "HPIO-style independent I/O: every method and MPI-IO, MB/s and Table I counters"},
    {.words = {"bench", "pmd", NULL},
     .run = tess_bench_pmd,
     .summary = "paper 003's scenarios: PMD sieving next to naive, sieve, list, auto and ROMIO"},
    {.words = {"bench", "log", NULL},
     .run = tess_bench_log,
     .summary = "the log: container driver next to posix (threads, one file), index rebuild"},
#ifdef TESS_BENCH_MPI
    {.words = {"bench", "tile", NULL},
     .run = tess_bench_tile,
     .summary = "tile reader (paper 000 V-B), collective: every method next to MPI-IO"},
    {.words = {"bench", "block3d", NULL},
     .run = tess_bench_block3d,
     .summary = "ROMIO coll_perf 3-D block, collective: every method next to MPI-IO"},
    {.words = {"bench", "flash", NULL},
     .run = tess_bench_flash,
     .summary = "FLASH I/O checkpoint (paper 000 V-D), collective: every method next to MPI-IO"},
    {.words = {"bench", "hpio", NULL},
     .run = tess_bench_hpio,
     .summary = "HPIO and PFR patterns (paper 002), collective: every method next to MPI-IO"},
    {.words = {"bench", "btio", NULL},
     .run = tess_bench_btio,
     .summary = "NAS BTIO collective pattern: every method next to MPI-IO"},
    {.words = {"bench", "mpiio", NULL},
     .run = tess_bench_mpiio,
     .summary = "MPI-IO, HDF5, PnetCDF programs on ROMIO, OMPIO and libtessera_mpiio"},
#endif
    {.words = {"demo", NULL},
     .run = tess_cmd_demo,
     .summary = "the benchmarks, small: one row per workload, Tessera against MPI-IO"},
    {.words = {"log", "flatten", NULL},
     .run = tess_cmd_log_flatten,
     .summary = "turn a log: container into a plain file (holes stay sparse)"},
    {.words = {"log", "stat", NULL},
     .run = tess_cmd_log_stat,
     .summary = "a log: container's writers, entries and fragmentation"},
    {.words = {"calibrate", NULL},
     .run = tess_cmd_calibrate,
     .summary = "measure the cost model's parameters on a file system and save the profile"},
};

enum { NCOMMANDS = sizeof commands / sizeof commands[0] };

static int command_nwords(const command *c)
{
    int n = 0;
    while (n < 2 && c->words[n])
        n++;
    return n;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: tessera <command> [options]      (tessera <command> --help for options)\n"
               "       tessera --help | --version\n\ncommands:\n");
    for (int i = 0; i < NCOMMANDS; i++) {
        char path[64] = "";
        for (int w = 0; w < command_nwords(&commands[i]); w++) {
            if (w)
                strcat(path, " ");
            strcat(path, commands[i].words[w]);
        }
        fprintf(f, "  %-14s %s\n", path, commands[i].summary);
    }
    fprintf(f, "\nThe demo: tessera demo [--verbose]\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
        strcmp(argv[1], "help") == 0) {
        usage(stdout);
        return 0;
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("tessera %d.%d\n", TESSERA_VERSION_MAJOR, TESSERA_VERSION_MINOR);
        return 0;
    }
    /* the longest command path that matches the leading arguments wins */
    const command *best = NULL;
    int best_n = 0, prefix = 0;
    for (int i = 0; i < NCOMMANDS; i++) {
        int n = command_nwords(&commands[i]), k = 0;
        while (k < n && k + 1 < argc && strcmp(commands[i].words[k], argv[k + 1]) == 0)
            k++;
        if (k == n && n > best_n) {
            best = &commands[i];
            best_n = n;
        }
        if (k > prefix)
            prefix = k;
    }
    if (!best) {
        /* `tessera bench --help`: a group word followed by a help flag lists the commands */
        if (prefix > 0 && prefix + 1 < argc &&
            (strcmp(argv[prefix + 1], "--help") == 0 || strcmp(argv[prefix + 1], "-h") == 0)) {
            usage(stdout);
            return 0;
        }
        if (prefix > 0)
            fprintf(stderr, "tessera: incomplete or unknown command after '%s'\n", argv[1]);
        else
            fprintf(stderr, "tessera: unknown command '%s'\n", argv[1]);
        usage(stderr);
        return 2;
    }
    return best->run(argc - best_n, argv + best_n);
}
