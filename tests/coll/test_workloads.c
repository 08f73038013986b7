/*
 * test_workloads.c - the collective workloads (bench/tile.c, block3d.c, flash.c, hpio.c,
 * btio.c) run small in their --test mode: every Tessera method (independent naive, sieve, list,
 * pmd; two-phase with each file realm variant; the library's automatic choice) writes the
 * pattern and reads it back once; every file is compared byte for byte with the expected image
 * (computed from the access pattern by the benchmark, not by the library) and with the other
 * methods' files, and every read buffer with the data written and its untouched holes. MPI-IO
 * runs too; its results are information only.
 *
 * Run at 2 and 4 processes: covers idle ranks (tile's extra rounds, btio on a non-square
 * count), several views per op (tile rounds, PFR), noncontiguous memory (flash, hpio nc-*,
 * btio) and both filetype forms of block3d (darray, subarray) and hpio (vector, tiled).
 * Prints one summary line on success (nothing else), the failing tables otherwise.
 *
 * usage: mpiexec -n <2|4> test_workloads [--dir DIR]
 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "cmds.h"

typedef int (*workload_fn)(int argc, char **argv);

int main(int argc, char **argv)
{
    if (MPI_Init(&argc, &argv) != MPI_SUCCESS) {
        fprintf(stderr, "test_workloads: MPI_Init failed\n");
        return 1;
    }
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *dir = NULL;
    for (int i = 1; i + 1 < argc; i++)
        if (strcmp(argv[i], "--dir") == 0)
            dir = argv[i + 1];

    static const struct {
        const char *name;
        workload_fn fn;
        const char *extra[4];
    } runs[] = {
        {"tile", tess_bench_tile, {NULL}},
        {"block3d", tess_bench_block3d, {NULL}},
        {"block3d", tess_bench_block3d, {"--type", "subarray", "--n", "19"}},
        {"flash", tess_bench_flash, {NULL}},
        {"hpio", tess_bench_hpio, {"--patterns", "c-c,nc-c,nc-nc,pfr"}},
        {"hpio", tess_bench_hpio, {"--ftype", "tiled", "--patterns", "c-nc"}},
        {"btio", tess_bench_btio, {NULL}},
    };
    int nruns = (int)(sizeof runs / sizeof runs[0]), failed = 0;
    char failures[512] = "";
    for (int r = 0; r < nruns; r++) {
        char *args[16];
        int n = 0;
        args[n++] = (char *)runs[r].name;
        args[n++] = "--test";
        args[n++] = "--silent";
        if (dir) {
            args[n++] = "--dir";
            args[n++] = (char *)dir;
        }
        for (int k = 0; k < 4 && runs[r].extra[k]; k++)
            args[n++] = (char *)runs[r].extra[k];
        args[n] = NULL;
        int rc = runs[r].fn(n, args);
        if (rc != 0) {
            failed++;
            size_t len = strlen(failures);
            snprintf(failures + len, sizeof failures - len, " %s", runs[r].name);
        }
    }
    if (rank == 0) {
        if (failed)
            printf("test_workloads: %d of %d workload runs FAILED at %d processes:%s\n", failed,
                   nruns, size, failures);
        else
            printf("test_workloads: %d workload runs (tile, block3d x2, flash, hpio x2, btio)"
                   " verified at %d processes\n", nruns, size);
    }
    MPI_Finalize();
    return failed ? 1 : 0;
}
