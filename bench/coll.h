/*
 * coll.h - shared machinery of the collective workloads (`tessera bench tile | block3d | flash |
 * hpio | btio`, bench/<name>.c): dual Tessera/MPI datatypes, the description of one access
 * pattern, and the runner that puts that pattern through every Tessera method and through the
 * MPI library's own MPI-IO, times it, checks every file and every read, and prints the table.
 *
 * A workload builds, on every rank, a coll_pattern: file views (displacement, etype, filetype),
 * memory types, and the sequence of calls of one operation (view, offset in etypes, count of the
 * memory type, where in the rank's buffer). Every rank has the same number of calls (the calls
 * are collective); a rank without data in a call gives count 0. Types are built twice, with the
 * Tessera constructor and with the MPI constructor of the same name (coll_type_*), and their
 * size and extent compared, so Tessera and MPI-IO run the very same access.
 *
 * The data written is a function of the file offset only (content_byte(x) in coll_common.c), so
 * patterns with overlapping writes (the tile reader's overlapping tiles) have one correct file,
 * which is computed and compared byte for byte with every method's file.
 *
 * Everything here is collective over MPI_COMM_WORLD; rank 0 prints. Needs MPI and
 * libtessera_mpi (tessera_mpi.h).
 */
#ifndef TESS_BENCH_COLL_H
#define TESS_BENCH_COLL_H

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>

#include "bench.h"
#include "tessera_mpi.h"

/* ------------------------------------------------------------ dual types */

/** A datatype built twice: as a Tessera type and as the equivalent MPI type (committed). */
typedef struct coll_type {
    tess_type *t;
    MPI_Datatype m;
    int own_m; /* m was created here (freed by coll_type_free) */
} coll_type;

/*
 * Constructors: each calls the Tessera constructor and the MPI constructor of the same name
 * (MPI's int arguments are range-checked), commits the MPI type and checks that size, lb and
 * extent agree. Return 0, or -1 with a message on stderr; *out is then empty (safe to free).
 * order_c: 1 for C order, 0 for Fortran order.
 */
/** A predefined pair (TESS_DOUBLE, MPI_DOUBLE), never freed. */
void coll_type_named(tess_type *t, MPI_Datatype m, coll_type *out);
int coll_type_contiguous(int64_t count, const coll_type *old, coll_type *out);
int coll_type_vector(int64_t count, int64_t blocklen, int64_t stride, const coll_type *old,
                     coll_type *out);
int coll_type_hvector(int64_t count, int64_t blocklen, int64_t stride_bytes, const coll_type *old,
                      coll_type *out);
int coll_type_subarray(int ndims, const int64_t *sizes, const int64_t *subsizes,
                       const int64_t *starts, int order_c, const coll_type *old, coll_type *out);
/** MPI_Type_create_darray with MPI_DISTRIBUTE_BLOCK and default dargs in every dimension. */
int coll_type_darray_block(int size, int rank, int ndims, const int64_t *gsizes,
                           const int *psizes, int order_c, const coll_type *old, coll_type *out);
/**
 * MPI_Type_create_struct. MPI pads a struct's extent for alignment, Tessera does not: the
 * Tessera type is resized to MPI's lb and extent where they differ (as tess_type_from_mpi does).
 */
int coll_type_struct(int n, const int64_t *blocklens, const int64_t *displs_bytes,
                     const coll_type *types, coll_type *out);
int coll_type_resized(const coll_type *old, int64_t lb, int64_t extent, coll_type *out);
/** Release both halves (no-op on an empty or named pair). */
void coll_type_free(coll_type *t);

/* ------------------------------------------------------------- patterns */

/** A file view: MPI_File_set_view(disp, etype, filetype) and tess_file_set_view alike. */
typedef struct coll_view {
    int64_t disp;
    coll_type etype, filetype;
} coll_view;

/** One collective call of an operation (the same sequence of calls on every rank). */
typedef struct coll_call {
    int view;        /* index into coll_pattern.views; set (collectively) when it changes */
    int mem;         /* index into coll_pattern.mems: the memory type */
    int64_t offset;  /* in etypes of the view */
    int64_t count;   /* instances of the memory type (0: this rank has no data in the call) */
    int64_t buf_off; /* byte offset of this call's memory in the rank's buffer */
} coll_call;

typedef struct coll_pattern {
    char title[256];   /* the workload and its sizes, one line */
    char tag[64];      /* short case name for the summary lines ("nc-nc 256B", "N=128") */
    char notes[2048];  /* further lines printed under the title (rank 0's text is printed) */
    int table1;        /* also print paper 000 Table I formula values next to the counters */
    int nviews, nmems, ncalls;
    coll_view *views;
    coll_type *mems;
    coll_call *calls;
    int64_t buf_bytes; /* the rank's memory buffer (every call's memory lies inside it) */
} coll_pattern;

/** Allocate zeroed arrays of views, memory types and calls. 0 or -1 (message printed). */
int coll_pattern_init(coll_pattern *p, int nviews, int nmems, int ncalls);
/** Free the arrays and every type in them. */
void coll_pattern_free(coll_pattern *p);
/** Append a line to p->notes (printf style). */
void coll_note(coll_pattern *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* -------------------------------------------------------------- options */

/** The methods a run can include (bit i of coll_opts.methods = coll_method_names[i]). */
enum {
    COLL_M_MPI,
    COLL_M_NAIVE,
    COLL_M_SIEVE,
    COLL_M_LIST,
    COLL_M_PMD,
    COLL_M_TP_EVEN,
    COLL_M_TP_ALIGNED,
    COLL_M_TP_PERSISTENT,
    COLL_M_TP_BALANCED,
    COLL_M_AUTO,
    COLL_NMETHODS
};
extern const char *const coll_method_names[COLL_NMETHODS];

enum { COLL_MAX_HINTS = 16 };

typedef struct coll_opts {
    const char *workload; /* "tile", ... (file names, messages) */
    int quick;            /* small sizes (the workload applies its own) */
    int test;             /* verify only: one untimed write and read per method, no tables,
                             one summary line; MPI-IO still runs (its checks are information) */
    int silent;           /* with test: print nothing unless something failed */
    int reps;             /* timed repetitions, median printed (default 5; quick 3) */
    int reps_set;
    double budget;        /* seconds per method and direction: fewer reps when an op is slow */
    double min_rep;       /* seconds a repetition lasts at least (ops repeated; default 0.05) */
    int min_rep_set;
    int sync;             /* include tess_file_sync / MPI_File_sync in every timed write */
    int keep;             /* keep the files */
    const char *results;  /* --results FILE: append one line per method and direction (TABs):
                             workload, case, method, tessera|mpi, write|read, seconds per op,
                             bytes per op (all ranks), check (`tessera bench mpiio` reads it) */
    unsigned methods;     /* bit mask of COLL_M_* */
    char dir[1024];       /* directory of the files */
    int64_t cb_nodes, cb_buffer_size, striping_unit; /* 0: not set (library defaults) */
    int64_t ds_read, ds_write, list_pairs;            /* 0: not set */
    const char *hints[COLL_MAX_HINTS];                /* extra "key=value" for Tessera opens */
    int nhints;
    const char *mpi_hints[COLL_MAX_HINTS];            /* extra "key=value" for MPI_File_open */
    int nmpi_hints;
} coll_opts;

/** Defaults: every method, 5 reps of >= 50 ms, 10 s budget, dir $TMPDIR or /tmp. */
void coll_opts_default(coll_opts *o, const char *workload);

/*
 * The options every collective workload takes, for getopt_long: put COLL_LONGOPTS in the
 * option array (before the terminating zero entry) and pass every unknown code to coll_opt.
 */
enum {
    COLL_OPT_QUICK = 1000,
    COLL_OPT_TEST,
    COLL_OPT_SILENT,
    COLL_OPT_REPS,
    COLL_OPT_BUDGET,
    COLL_OPT_MIN_MS,
    COLL_OPT_SYNC,
    COLL_OPT_KEEP,
    COLL_OPT_METHODS,
    COLL_OPT_DIR,
    COLL_OPT_CB_NODES,
    COLL_OPT_CB_BUFFER,
    COLL_OPT_STRIPING,
    COLL_OPT_DS_READ,
    COLL_OPT_DS_WRITE,
    COLL_OPT_LIST_PAIRS,
    COLL_OPT_HINT,
    COLL_OPT_MPI_HINT,
    COLL_OPT_RESULTS
};
#define COLL_LONGOPTS                                                                           \
    {"quick", no_argument, NULL, COLL_OPT_QUICK}, {"test", no_argument, NULL, COLL_OPT_TEST},   \
        {"silent", no_argument, NULL, COLL_OPT_SILENT},                                         \
        {"reps", required_argument, NULL, COLL_OPT_REPS},                                       \
        {"budget", required_argument, NULL, COLL_OPT_BUDGET},                                   \
        {"min-ms", required_argument, NULL, COLL_OPT_MIN_MS},                                   \
        {"sync", no_argument, NULL, COLL_OPT_SYNC}, {"keep", no_argument, NULL, COLL_OPT_KEEP}, \
        {"methods", required_argument, NULL, COLL_OPT_METHODS},                                 \
        {"dir", required_argument, NULL, COLL_OPT_DIR},                                         \
        {"cb-nodes", required_argument, NULL, COLL_OPT_CB_NODES},                               \
        {"cb-buffer-size", required_argument, NULL, COLL_OPT_CB_BUFFER},                        \
        {"striping-unit", required_argument, NULL, COLL_OPT_STRIPING},                          \
        {"ds-read", required_argument, NULL, COLL_OPT_DS_READ},                                 \
        {"ds-write", required_argument, NULL, COLL_OPT_DS_WRITE},                               \
        {"list-pairs", required_argument, NULL, COLL_OPT_LIST_PAIRS},                           \
        {"hint", required_argument, NULL, COLL_OPT_HINT},                                       \
        {"mpi-hint", required_argument, NULL, COLL_OPT_MPI_HINT},                               \
        {"results", required_argument, NULL, COLL_OPT_RESULTS}

/**
 * Handle one common option: returns 1 if handled, 0 if ch is not a common option, -1 on a bad
 * value (message printed on rank 0 only). quiet: print nothing (ranks other than 0).
 */
int coll_opt(coll_opts *o, int ch, const char *arg, int quiet);
/** Parse a size option (k/m/g suffixes) of at least min; quiet: no message. 0 or -1. */
int coll_parse_size(const char *name, const char *arg, int64_t min, int64_t *out, int quiet);
/** After parsing: apply the --quick defaults to what the user did not set. */
void coll_opts_finish(coll_opts *o);
/** The option a workload's loop does not know: 'h' prints usage to stdout and returns 0 (done),
 * anything else prints it to stderr and returns 2 (bad usage); nothing printed when quiet. */
int coll_opt_other(int ch, void (*usage)(FILE *), int quiet);
/** After the option loop: a leftover argument is bad usage (2); else status is returned. */
int coll_opts_rest(const char *name, int argc, char **argv, int status, int quiet);
/** The usage lines of the common options. */
void coll_usage_common(FILE *f);

/* ------------------------------------------------------------------ run */

/** The MPI environment of a collective benchmark (MPI_COMM_WORLD). */
typedef struct coll_env {
    int rank, size;
    int inited_here; /* MPI_Init was called by coll_env_begin: coll_env_end finalizes */
} coll_env;

/** Initialize MPI unless the program already did. 0 or -1 (message printed). */
int coll_env_begin(coll_env *e);
/** Finalize MPI if coll_env_begin initialized it. */
void coll_env_end(coll_env *e);

/**
 * Run the pattern through every selected method (collective). built: this rank's pattern was
 * built without error (when any rank's was not, every rank returns 1 at once). Prints the
 * table, the Table I formulas (p->table1), the request-size comparison and the ratios on rank
 * 0. Returns 0 when every Tessera file and read verified, 1 otherwise (the same on all ranks).
 */
int coll_run(const coll_env *e, coll_pattern *p, const coll_opts *o, int built);

/** Ceiling of a / b for positive b. */
static inline int64_t coll_ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

#endif
