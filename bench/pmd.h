/*
 * pmd.h - what the two halves of `tessera bench pmd` share: bench/pmd.c (scenarios, the command,
 * the tables) and bench/pmd_run.c (the forked processes that run one implementation on one
 * pattern). The benchmark itself is described at the top of pmd.c.
 */
#ifndef TESS_BENCH_PMD_H
#define TESS_BENCH_PMD_H

#include <stdint.h>

#define FILL_BYTE 0x5A
enum { MAX_PROCS = 64, MAX_SWEEP = 24, MAX_REPS = 101, NIMPL = 7 };

/* The implementations compared, in column order: Tessera methods, then ROMIO. */
typedef struct impl {
    const char *name;   /* column name */
    const char *method; /* tess_method, or NULL for ROMIO */
    int romio_ds;       /* ROMIO: 1 data sieving enabled, 0 disabled */
} impl;

extern const impl impls[NIMPL];
enum { I_NAIVE, I_SIEVE, I_PMD, I_LIST, I_AUTO, I_ROMIO_DS, I_ROMIO_NODS };

typedef struct opts {
    int procs[8], nprocs;
    int scen[3], nscen;
    int64_t regions[4];   /* regions per process, by scenario (0: the default) */
    int64_t chunk;        /* regions per interleaved chunk */
    int64_t sweep_region, sweep_holes[MAX_SWEEP], sweep_count;
    int64_t prefill;      /* bytes per prefill write (bench_prefill) */
    int nsweep;
    int impl_on[NIMPL];
    int reps;
    double min_rep_sec;
    const char *dir, *results;
    const char *profile;  /* tess_profile hint, or NULL */
    int use_mpi, quick, keep, do_sweep, cpu_time;
} opts;

/* One process's regions in its own coordinates (from 0), increasing, holes between. */
typedef struct pattern {
    int64_t n, *off, *len;
    int64_t data, end; /* data bytes; end of the last region */
} pattern;

typedef struct result {
    int ran, ok;
    double sec[2];            /* median seconds per call: [0] write, [1] read */
    int64_t peak[2];
    int last_method[2];
} result;


/* File offset of region i of process k of P when chunks of C regions are interleaved. */
int64_t pmd_file_off(const pattern *p, int64_t C, int P, int k, int64_t i);

/*
 * Run every selected implementation on one pattern with P processes (forked), chunks of `chunk`
 * regions interleaved; r[i] receives implementation i's figures. Returns the number of
 * implementations that failed or did not check.
 */
int pmd_run_all(const opts *o, const pattern *p, int P, int64_t chunk, result *r);

#endif
