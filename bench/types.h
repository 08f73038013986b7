/*
 * types.h - the shapes of `tessera bench types` (bench/types_shapes.c): each the same layout as
 * a Tessera type, an MPI type, a reference list of regions and a hand-written loop; timed and
 * reported by bench/types.c.
 */
#ifndef TESS_BENCH_TYPES_H
#define TESS_BENCH_TYPES_H

#include "bench.h"

#ifdef TESS_BENCH_MPI
#include <mpi.h>
#endif

typedef struct types_opts {
    int64_t bytes;     /* packed bytes per call (target; shapes round down) */
    int64_t array;     /* subarray: edge of the full 3-D array of doubles */
    int64_t sub;       /* subarray: edge of the sub-block */
    int64_t seed;      /* indexed shape's random blocks */
    const char *only;  /* run only shapes whose name contains this */
    int use_mpi;
    int quick;
    bench_timing timing;
} types_opts;

/* The shapes, for their hand-written loops. */
typedef enum { SH_CONTIG, SH_VECTOR, SH_NESTED, SH_SUBARRAY, SH_INDEXED, SH_STRUCT } shape_kind;

/* One benchmark case: the same layout as a Tessera type, an MPI type and reference regions. */
typedef struct shape {
    char name[40];
    shape_kind kind;
    int64_t p[3];        /* the hand loop's parameters (see each make_*) */
    int64_t *ibl, *idp;  /* indexed: blocks in doubles */
    tess_type *tt;
    int64_t count;       /* instances packed per call */
    int64_t packed;      /* data bytes per call */
    int64_t span;        /* bytes of the source buffer (highest data byte + 1) */
    int64_t nreg;        /* reference regions */
    int64_t *roff, *rlen;
#ifdef TESS_BENCH_MPI
    MPI_Datatype mt;
    int have_mt;
#endif
} shape;

/* The shapes, by number: contig, vector bl 1, 8, 64, nested vector, subarray, indexed, struct. */
#define TYPES_NSHAPES 8

/** Build shape i (0 or -1 with a message); s must be zeroed, and freed with shape_free. */
int types_make_shape(int i, shape *s, const types_opts *o, int use_mpi);
void shape_free(shape *s);
/** The reference pack and unpack, region by region. */
void ref_pack(const shape *s, const unsigned char *in, unsigned char *out);
void ref_unpack(const shape *s, const unsigned char *in, unsigned char *out);
/** The hand-written loop of the shape: pack (to_packed) or unpack. */
void hand(const shape *s, unsigned char *typed, unsigned char *packed, int to_packed);
#ifdef TESS_BENCH_MPI
/** 0 for MPI_SUCCESS, else -1 after printing what failed with MPI's message. */
int mpi_ok(int rc, const shape *s, const char *what);
#endif

#endif
