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
 * The data written is a function of the file offset only (fill_content in coll_verify.c), so
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
/** Methods only the RADOS runner has (--driver rados; bits after the COLL_M_* ones). With
 *  --driver rados, --methods selects among naive, list, sieve and these. */
enum { COLL_RM_DATATYPE = COLL_NMETHODS, COLL_RM_TP_LIST, COLL_RM_TP_SIEVE, COLL_RM_TP_DATATYPE,
       COLL_NALL };
/** The --methods bits the RADOS runner runs. */
#define COLL_RADOS_METHODS                                                                     \
    (1u << COLL_M_NAIVE | 1u << COLL_M_LIST | 1u << COLL_M_SIEVE | 1u << COLL_RM_DATATYPE |   \
     1u << COLL_RM_TP_LIST | 1u << COLL_RM_TP_SIEVE | 1u << COLL_RM_TP_DATATYPE)

enum { COLL_MAX_HINTS = 16, COLL_MAX_DELAYS = 8 };

typedef struct coll_opts {
    const char *workload; /* "tile", ... (file names, messages) */
    int quick;            /* small sizes (the workload's options have their --quick defaults) */
    int test;             /* verify only: one untimed write and read per method, no tables,
                             one summary line; MPI-IO still runs (its checks are information) */
    int silent;           /* with test: print nothing unless something failed */
    int64_t reps;         /* timed repetitions, median printed (default 5; quick 3) */
    double budget;        /* seconds per method and direction: fewer reps when an op is slow */
    double min_rep;       /* seconds a repetition lasts at least (ops repeated; default 0.05) */
    int sync;             /* include tess_file_sync / MPI_File_sync in every timed write */
    int keep;             /* keep the files */
    unsigned methods;     /* bit mask of COLL_M_* */
    const char *dir;      /* directory of the files */
    const char *results;  /* --results FILE, or NULL */
    int64_t cb_nodes, cb_buffer_size, striping_unit; /* 0: not set (library defaults) */
    int64_t ds_read, ds_write, list_pairs;            /* 0: not set */
    const char *hints[COLL_MAX_HINTS];                /* extra "key=value" for Tessera opens */
    int nhints;
    const char *mpi_hints[COLL_MAX_HINTS];            /* extra "key=value" for MPI_File_open */
    int nmpi_hints;
    int rados;            /* --driver rados: the workload runs on RADOS (coll_rados_run) */
    const char *cluster;  /* --cluster DIR: the `tessera cluster` whose delay --delays sets */
    int64_t delays[COLL_MAX_DELAYS]; /* --delays: added per-request delays in us (rados) */
    int ndelays;
    bench_report *report; /* rank 0: where the details go (set by coll_main) */
    bench_table *summary; /* rank 0: the summary table, one row per case (set by coll_main) */
} coll_opts;

/* ------------------------------------------------------------------ run */

/** The MPI environment of a collective benchmark (MPI_COMM_WORLD). */
typedef struct coll_env {
    int rank, size;
    int inited_here; /* MPI_Init was called by coll_main: it finalizes */
} coll_env;

/**
 * Run the pattern through every selected method (collective), then free it. built: this rank's
 * pattern was built without error (when any rank's was not, every rank returns 1 at once).
 * Rank 0 prints the case's summary row, and the table, the Table I formulas (p->table1), the
 * request-size comparison and the ratios into the details. Returns 0 when every Tessera file and
 * read verified, 1 otherwise (the same on all ranks).
 */
int coll_run(const coll_env *e, coll_pattern *p, const coll_opts *o, int built);

/**
 * The pattern on the RADOS driver instead of POSIX files (--driver rados): every method at each
 * delay, the Table I counters per client, the OSDs' own counts, paper 000's Tables II-IV next to
 * them. Same contract as coll_run. NULL unless the program has it (tools/tessera.c sets it where
 * librados is built in: bench/coll_rados.c).
 */
extern int (*coll_rados_run)(const coll_env *e, coll_pattern *p, const coll_opts *o, int built);
/** The RADOS runner (bench/coll_rados.c, in the `tessera` program where librados is built in). */
int coll_run_rados(const coll_env *e, coll_pattern *p, const coll_opts *o, int built);

/** A collective workload: what `tessera bench <name>` runs after its options are parsed. */
typedef struct coll_workload {
    const char *name;  /**< "tile" */
    const char *about; /**< the usage lines that describe it */
    /** Check the workload's own options together (NULL: nothing to check); message unless
     *  quiet; 0 or -1 (bad usage). */
    int (*check)(const void *params, int quiet);
    /** Build and run its patterns (coll_run each, on every rank); the number of failed runs. */
    int (*run)(const coll_env *e, const coll_opts *o, void *params);
} coll_workload;

/**
 * The whole of `tessera bench <w->name> [options]`: MPI set-up, the options (own, whose values
 * go into params, then the common ones of every collective workload), the header and the
 * summary, w->run, the details, MPI finalization. Returns the exit status (0, 1 failures, 2
 * bad usage), the same on every rank.
 */
int coll_main(const coll_workload *w, bench_opt *own, int nown, void *params, int argc,
              char **argv);

/** Ceiling of a / b for positive b. */
static inline int64_t coll_ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

#endif
