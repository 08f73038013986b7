/*
 * cmds.h - entry points of the `tessera` subcommands that live in tools/ (tools/tessera.c
 * dispatches to them; the benchmark entry points are declared in bench/bench.h). Each receives
 * the arguments after its command words, argv[0] being the last word, and returns the exit
 * status: 0 success, 1 failure, 2 bad usage.
 */
#ifndef TESS_CMDS_H
#define TESS_CMDS_H

/** `tessera calibrate [--quick] [--out FILE] [path]`: measure the cost model, save a profile. */
int tess_cmd_calibrate(int argc, char **argv);

/** `tessera demo [--verbose] [--mpiexec CMD] [--np N]` (tools/demo.c): the benchmarks, small,
 *  and one summary row per workload. */
int tess_cmd_demo(int argc, char **argv);

/** `tessera log flatten CONTAINER FILE` (tools/log.c): a `log` container as a plain file. */
int tess_cmd_log_flatten(int argc, char **argv);
/** `tessera log stat CONTAINER`: its writers, entries and fragmentation. */
int tess_cmd_log_stat(int argc, char **argv);

/*
 * The collective workloads (bench/tile.c, block3d.c, flash.c, hpio.c, btio.c; run under mpirun;
 * need MPI and libtessera_mpi): `tessera bench tile|block3d|flash|hpio|btio [options]`. Each
 * puts its access pattern through every Tessera method and the MPI library's MPI-IO and prints
 * MB/s, the paper 000 Table I counters and the file checks.
 */
int tess_bench_tile(int argc, char **argv);
int tess_bench_block3d(int argc, char **argv);
int tess_bench_flash(int argc, char **argv);
int tess_bench_hpio(int argc, char **argv);
int tess_bench_btio(int argc, char **argv);

/**
 * `tessera bench mpiio [options]` (bench/mpiio.c; not under mpirun: it launches mpiexec): the
 * same MPI-IO programs on ROMIO, OMPIO and Tessera through libtessera_mpiio, in one run.
 */
int tess_bench_mpiio(int argc, char **argv);

/** `tessera bench log [options]` (bench/log.c): the log container driver next to posix, and
 *  its index rebuild. */
int tess_bench_log(int argc, char **argv);

/** `tessera bench pmd [options]` (bench/pmd.c): PMD sieving vs naive, sieve, list, auto, ROMIO. */
int tess_bench_pmd(int argc, char **argv);

#endif
