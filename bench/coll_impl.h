/*
 * coll_impl.h - what the files of the collective runner share (coll_types.c, coll_options.c,
 * coll_verify.c, coll_runner.c, coll_report.c); workloads use coll.h only.
 *
 * For one access pattern and each selected method, on MPI_COMM_WORLD:
 *   1. rank 0 creates the method's file and fills it with HOLE_BYTE up to the pattern's file
 *      size (holes of a noncontiguous pattern then have a defined content that writes keep);
 *   2. the file is opened (tess_file_open_mpi with the method's hints, or MPI_File_open),
 *      one untimed write operation warms everything up, then `reps` timed operations run:
 *      MPI_Barrier, the operation (all its calls, set_view where the view changes), the
 *      operation's time reduced with MAX over ranks; the median is printed. Fewer repetitions
 *      run when an operation is slow (the budget option). The counters (tess_file_stats) of
 *      the last repetition are reduced over ranks;
 *   3. the read buffer is set to 0xEE, one read operation is verified on every rank (data
 *      bytes equal what was written, holes of a noncontiguous buffer untouched), then reads
 *      are timed like writes;
 *   4. after the collective close, rank 0 compares the file byte for byte with the expected
 *      image and with the first Tessera method's file (the reference).
 * MPI-IO runs last; its file and reads are checked the same way, printed as information only
 * (the MPI library is compared with, never taken as the truth).
 *
 * Page-cache figures: nothing is dropped from the cache; writes are synced only with --sync.
 */
#ifndef TESS_BENCH_COLL_IMPL_H
#define TESS_BENCH_COLL_IMPL_H

#include "coll.h"

/* The fill of every file before a method writes it (the holes' expected content). */
#define HOLE_BYTE 0x5A
/* The fill of the read buffer before a verified read (holes must keep it). */
#define READ_FILL 0xEE
/* The fill of the holes of the write buffer (must never reach the file). */
#define WRITE_HOLE 0xAB

/* ---------------------------------------------------------------- messages */

/** The rank that prefixes messages (set by coll_main). */
void coll_set_rank(int rank);
/** "tessera: [rank r] <message>" on stderr; returns -1. */
int coll_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/** A Tessera error: what, the code's name and tess_last_error(); returns -1. */
int coll_tfail(int rc, const char *what);
/** An MPI error: what and MPI_Error_string; returns -1. */
int coll_mfail(int rc, const char *what);
/** All ranks: 1 if ok on every rank. */
int coll_agree(int ok);
/** All ranks: v reduced over the ranks with op (MPI_MAX, MPI_MIN); -1 on error. */
int64_t coll_over_ranks(int64_t v, MPI_Op op);

/* ------------------------------------------------------- the access (verify) */

/* Per call, this rank's access in paper 000 Table I terms. */
typedef struct call_info {
    int64_t n;          /* desired bytes */
    int64_t frc;        /* contiguous file regions (adjacent pieces merged) */
    int64_t pieces;     /* pieces contiguous in file and memory (naive's calls) */
    int64_t first, end; /* file extent [first, end) (first = INT64_MAX when no data) */
    int64_t min_fr, max_fr;
    int64_t cur_fr;     /* length of the file region being counted */
    int64_t last_fend, last_mend;
} call_info;

/* What a run shares between methods (per rank). */
typedef struct shared {
    const coll_env *env;
    coll_pattern *p;
    const coll_opts *o;
    unsigned char *wbuf, *rbuf, *mmask, *cov; /* cov: the OR over ranks (rank 0 only) */
    int64_t file_size;
    int64_t pid0; /* rank 0's pid: file names */
    char ref_path[1200];
    int have_ref;
    int ref_method;
    char mpi_hints[512];
    char mpi_component[64];
} shared;

/**
 * Every rank: analyze the pattern's calls into ci (Table I inputs), fill the write buffer with
 * the content of the file bytes it goes to, mark the buffer's data bytes (mmask) and the file's
 * written bytes (cov, then OR-reduced to rank 0); s->file_size is the end of the written bytes
 * over ranks. Collective; 0, or -1 on any rank's error (the same everywhere).
 */
int coll_prepare(shared *s, call_info *ci);
/** Every rank: the read buffer against the data written and untouched holes; text "ok" or
 *  "BAD r<rank>@<offset>" (the same on every rank); 1 if ok. */
int coll_check_read(const shared *s, char *text, size_t cap);
/** Rank 0: the file against the expected image and the reference file; text "ok", "BAD@...",
 *  "REF-DIFF@..." or "ERR(...)"; -1 when the file could not be read. */
int coll_check_file(shared *s, const char *path, char *text, size_t cap);
/** Rank 0 creates path filled with HOLE_BYTE up to the file size; every rank learns the
 *  result. 0 or -1. */
int coll_prefill(shared *s, const char *path);

/* ------------------------------------------------------------ hints (options) */

/** The Tessera hints of method m (the method's own, then the options'). 0 or -1. */
int coll_tess_hints(const coll_opts *o, int m, tess_info **out);
/** The MPI-IO hints of the options. 0 or -1. */
int coll_mpi_info(const coll_opts *o, MPI_Info *out);

/* -------------------------------------------------------------- results (report) */

/* Counters of one operation reduced over ranks. */
typedef struct rstats {
    double mean[8]; /* desired, accessed, io_ops, resent, regions, lock_ops, request_bytes,
                       flat_request_bytes */
    int64_t max[8];
    int64_t min_access, max_access; /* over ranks with storage calls */
    double io_s, xchg_s;            /* max over ranks */
    int active;                     /* ranks with storage calls */
} rstats;

enum { S_DES, S_ACC, S_OPS, S_RES, S_REG, S_LCK, S_REQ, S_FLAT, S_N };

/* What one method did. */
typedef struct mres {
    int selected, ran, unavailable;
    char why[200];
    double wsec, rsec;
    int wreps, rreps;
    int64_t witers, riters; /* ops per repetition */
    rstats ws, rs;
    int have_stats;
    char wcheck[64], rcheck[64];
    int wok, rok; /* verified (Tessera: failures counted when not) */
    int wdone, rdone; /* the direction's figures exist */
} mres;

/* The access in Table I terms, over all ranks (every rank holds the same values). */
typedef struct access_sum {
    double n, frc, pieces, fext;       /* per client: mean over ranks of the sum over calls */
    double sieve_rd_ops, sieve_wr_ops; /* sum over calls of ceil(file ext / ds buffer); mean */
    double sieve_wr_acc;               /* write: file ext, twice for calls with holes; mean */
    double list_ops;                   /* sum over calls of ceil(fr count / pairs); mean */
    int64_t max_fr, min_fr;            /* file region sizes, over ranks and calls */
    double agg_n;                      /* desired bytes of one op, all ranks */
    int64_t *agg_ext, *agg_n_call;     /* per call: aggregate access extent, data of all ranks */
    double enc, flat;                  /* request description bytes per client and op (mean) */
    int64_t enc_max, flat_max;
    int64_t enc_first;                 /* encoded size of the first view's filetype */
    int64_t ds_rd, ds_wr, tp_buf, pairs;
    int ds_rd_set, ds_wr_set, tp_set, pairs_set;
} access_sum;

/** Collective: the counters of one op reduced over the ranks. 0 or -1. */
int coll_reduce_stats(const tess_stats *s, int nprocs, rstats *r);
/** Collective: the Table I inputs and the request sizes from the per-call analysis. 0 or -1. */
int coll_summarize(const shared *s, const call_info *ci, access_sum *a);
/** Rank 0: the MPI-IO hints in use and which implementation it is, into s. */
void coll_mpi_describe(shared *s, MPI_File fh);
/** Rank 0, before the first case: the command's header line and the summary table's header. */
void coll_summary_begin(bench_table *sum, const coll_opts *o, int nprocs);
/** Rank 0: the case's header in the details (what runs, how it is timed, the machine). */
void coll_print_header(const shared *s, const access_sum *a, FILE *out);
/** Rank 0: the case's results: the summary row, then every table into out. */
void coll_print_results(const shared *s, const access_sum *a, const mres *res, FILE *out);
/** Rank 0 in --test mode: the one-line verdict (unless silent and fine), the table on failure. */
void coll_print_test(const shared *s, const access_sum *a, const mres *res, int failures);

#endif
