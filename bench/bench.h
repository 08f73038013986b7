/*
 * bench.h - shared machinery of the `tessera bench ...` workloads: timing (clock_gettime,
 * medians over repetitions, warm-up), warmed buffers, files, tables, and the optional MPI
 * environment. Options: options.h; summary first, details below: report.h.
 *
 * Benchmarks print figures; they never assert a time. Correctness checks inside a benchmark
 * (pack output against MPI_Pack, files byte for byte) are printed as ok/FAIL columns.
 */
#ifndef TESS_BENCH_H
#define TESS_BENCH_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "options.h"
#include "report.h"
#include "tessera.h"

/* ------------------------------------------------------------------ errors */

/** Print "tessera: <context>: <tess_strerror(rc)> (<tess_last_error()>)" to stderr; returns rc.
 *  (bench_fail, a message of any kind: options.h.) */
int bench_tess_fail(int rc, const char *context);

/* ------------------------------------------------------------------ timing */

/**
 * Seconds from the benchmark clock: CLOCK_MONOTONIC (wall time, the default) or, after
 * bench_use_cpu_clock(1), CLOCK_PROCESS_CPUTIME_ID (CPU time of all threads of the process,
 * user + system, io_uring workers included: immune to being descheduled on a busy machine, but
 * blind to time spent waiting, e.g. for a lock held by another process).
 */
double bench_now(void);
void bench_use_cpu_clock(int on);
/** A description of the clock in use, for the output's header. */
const char *bench_clock_name(void);

/** One call of the operation being timed; returns 0 or a negative error (timing stops). */
typedef int (*bench_fn)(void *ctx);

/** How to time a case. */
typedef struct bench_timing {
    int reps;           /**< repetitions; the median is reported (>= 1) */
    double min_rep_sec; /**< each repetition runs the operation enough times to last this long */
} bench_timing;

/**
 * Calibrate a case: run fn once untimed (warm-up), then find the number of calls per
 * repetition (doubling) that makes a repetition last at least t->min_rep_sec. *iters >= 1.
 */
int bench_calibrate(bench_fn fn, void *ctx, const bench_timing *t, int64_t *iters);
/** Time one repetition: iters calls of fn; *sec_per_call receives the mean seconds per call. */
int bench_rep(bench_fn fn, void *ctx, int64_t iters, double *sec_per_call);
/** The median of n values (sorts v in place); 0 for n == 0. */
double bench_median(double *v, int n);

/**
 * Time two alternatives of the same work side by side (bench_time_many: calibrated, then
 * t->reps repetitions alternating a, b, then b, a, ...) and return the median seconds per call
 * of each; -1 when a call failed. b may be NULL (then *med_b is 0).
 */
int bench_time_pair(bench_fn a, void *ctx_a, bench_fn b, void *ctx_b, const bench_timing *t,
                    double *med_a, double *med_b);

/**
 * Time n alternatives of the same work side by side: calibrate each (fn[i] NULL: skipped),
 * then run t->reps repetitions of all of them, each repetition starting one alternative later
 * (0, 1, ..., n-1, then 1, ..., n-1, 0, ...) so that drift in the machine and the order hit
 * them alike. med[i] gets the median seconds per call of alternative i, 0 when it is skipped
 * or one of its calls failed (the others go on). Returns the number that failed.
 */
int bench_time_many(int n, const bench_fn *fn, void *const *ctx, const bench_timing *t,
                    double *med);

/**
 * Turns on one shared file. Where the alternatives timed side by side each write or read a
 * file, the page cache's state of that file weighs on the figures: on Linux 6.x with ext4 a
 * small write into a file's 1 MiB folios costs several times one into base pages, and files
 * created one after another cost differently even at the same folio size (the first slowest).
 * With turns, every alternative uses the same file, which begin() puts into the same state
 * (bench_turn_file_ready, then the alternative's handle opened) before each of its
 * repetitions; end() checks what it did and closes its handle, so no other alternative's
 * handle is open on the file during a turn.
 */
typedef struct bench_turns {
    /** Before alternative i's repetition: the file's state, i's handle. 0, or nonzero to drop i
     *  (having released whatever it took: end is not called then). */
    int (*begin)(void *ctx, int i);
    /** After a turn that began (last: i's last repetition): checks, close i's handle. 0, or
     *  nonzero to drop i. */
    int (*end)(void *ctx, int i, int last);
    void *ctx;
} bench_turns;

/**
 * bench_time_many in turns: repetition by repetition, each repetition starting one alternative
 * later, alternative i gets begin(i), one untimed call (in its first turn: bench_calibrate),
 * its timed repetition, then end(i). turns NULL: bench_time_many. Returns the number that
 * failed; med[i] as for bench_time_many.
 */
int bench_time_turns(int n, const bench_fn *fn, void *const *ctx, const bench_timing *t,
                     const bench_turns *turns, double *med);

/* ----------------------------------------------------------------- buffers */

/** A 64-byte aligned buffer of n bytes (n may be 0), every page touched (filled with byte). */
void *bench_alloc(int64_t n, int byte);
void bench_free(void *p);
/** Fill n bytes with a deterministic pseudo-random sequence derived from seed. */
void bench_fill_random(void *p, int64_t n, uint64_t seed);
/** A small deterministic random generator (xorshift64*). */
uint64_t bench_rand(uint64_t *state);

/* ------------------------------------------------------------------- files */

/**
 * Fill path (created, or overwritten in place and cut to size) with byte up to size in writes
 * of `piece` bytes (option --prefill-write): the size decides the file's folios in the page
 * cache (see common.c). 0, or -1 with a message.
 */
int bench_prefill(const char *path, int64_t size, int byte, int64_t piece);
/** bench_prefill with the file's content taken from src (size bytes). */
int bench_prefill_from(const char *path, const void *src, int64_t size, int64_t piece);
/** pread exactly len bytes at off (retrying short reads); 0, or -1 at end of file or error. */
int bench_read_full(int fd, void *buf, int64_t len, int64_t off);
/**
 * Bring the file system holding dir to rest between timed rows, outside any timing: write back
 * every dirty page and commit the journal (syncfs), waiting until done. A row then starts with
 * nothing left by earlier rows (or by its own set-up) for the kernel to write back during its
 * timing. 0, or -1 with a message.
 */
int bench_settle(const char *dir);

/**
 * The row's one file as a turn needs it (bench_turns), the same for every alternative.
 * Before a write turn: the fill byte, prefilled in `piece`-byte writes and left dirty. Every
 * page is then dirty, as after any write turn's untimed call the pages its timed calls
 * overwrite are, so no write-back is needed between write turns: the file is written back
 * (bench_settle) before the first write turn (then prefilled again: its blocks allocated) and
 * again between turns once it has been dirty for 10 s, long before the kernel's flusher would
 * start on it during a turn. Before a read turn: the image, prefilled, read through once and
 * written back (every page clean and read, the access time written back). A read turn after
 * read turns finds the file as the first of them did (a read changes neither the content nor
 * the page-cache state) and is not prepared again, unless something wrote the file since (its
 * change time, modification time or size moved).
 */
typedef struct bench_turn_file {
    const char *path, *dir; /* the file; its directory, for bench_settle */
    int64_t size, piece;    /* the file's size; bytes per prefill write (--prefill-write) */
    int fill;               /* the content before a write turn */
    const void *image;      /* the content before a read turn (size bytes) */
    int reads_ready;        /* the image is in place, written back; stamp below */
    int64_t stamp[3];       /* ctime and mtime (ns) and size after the image's prefill */
    long prefills, settles; /* turns prepared with a prefill, write-backs (bench_settle) */
    double dirty_since;     /* when write prefills began leaving it dirty (monotonic s), or 0 */
} bench_turn_file;

/** Put f's file into the state a turn in that direction starts from (above). 0, or -1 with a
 *  message (the next turn prefills again). */
int bench_turn_file_ready(bench_turn_file *f, int write);

/* ------------------------------------------------------------------ format */

/** Format a byte count as "512 B", "4.0 KiB", "16.0 MiB" into buf. */
const char *bench_fmt_bytes(int64_t n, char *buf, size_t cap);

/* ----------------------------------------------------------------- machine */

/** Print a line with the CPUs online and the load average (figures depend on both). */
void bench_print_machine(FILE *out);

/* ------------------------------------------------------------------ tables */

#define BENCH_TABLE_MAX_COLS 24

/**
 * A table printed row by row as results arrive (long benchmarks show progress). Columns have
 * a fixed width; the first column is left-aligned, the others right-aligned. A cell wider than
 * its column widens only its own row.
 */
typedef struct bench_table {
    FILE *out;
    int ncols;
    int width[BENCH_TABLE_MAX_COLS];
    const char *head[BENCH_TABLE_MAX_COLS];
    int col;                               /* next cell of the current row */
    char line[1024];                       /* the row being built */
    size_t len;
} bench_table;

/** Define the columns: ncols pairs of (header, width) after out. */
void bench_table_init(bench_table *t, FILE *out, int ncols, const char *const *heads,
                      const int *widths);
/** Print the header line and a rule under it. */
void bench_table_header(bench_table *t);
/** Append one cell (printf format) to the current row. */
void bench_table_cell(bench_table *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/** Finish the current row (missing cells print empty) and print it. */
void bench_table_end_row(bench_table *t);

/* --------------------------------------------------------------------- MPI */

/**
 * The MPI environment of a benchmark. bench_mpi_init initializes MPI when this program was
 * built with MPI (TESS_BENCH_MPI) and `use` is nonzero; otherwise it leaves active = 0 and
 * the MPI columns print "n/a". Only rank 0 of MPI_COMM_WORLD runs the benchmark (all MPI
 * work is done on MPI_COMM_SELF); other ranks are told to stay idle.
 */
typedef struct bench_mpi {
    int active;        /**< MPI is initialized and usable */
    int rank, size;    /**< in MPI_COMM_WORLD */
    char library[160]; /**< first line of MPI_Get_library_version, or a reason it is absent */
} bench_mpi;

int bench_mpi_init(bench_mpi *m, int use, int *argc, char ***argv);
void bench_mpi_finalize(bench_mpi *m);
#ifdef TESS_BENCH_MPI
/** Print "tessera: <what>: <MPI_Error_string(rc)>" to stderr; returns -1. */
int bench_mpi_fail(int rc, const char *what);
#endif

/* --------------------------------------------------------------- workloads */

/** `tessera bench types [options]`; argv[0] is "types". Returns the process exit status. */
int bench_types_main(int argc, char **argv);
/** `tessera bench indep [options]`; argv[0] is "indep". Returns the process exit status. */
int bench_indep_main(int argc, char **argv);
/** `tessera bench sweep [options]`; argv[0] is "sweep". Returns the process exit status. */
int bench_sweep_main(int argc, char **argv);

#endif
