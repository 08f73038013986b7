/*
 * randtype.h - a random nested datatype generator and its brute-force oracle (tests only).
 *
 * rt_random() makes, from the same random choices, side by side:
 *  (a) the Tessera type (tess_type_* constructors),
 *  (b) the typemap as an explicit byte map: offsets[k] is the byte offset (relative to the
 *      type's origin) of data byte k of one instance in typemap order, computed straight from
 *      the MPI constructor definitions, with lb/extent/true bounds by MPI's rules (resized,
 *      subarray and darray set lb/extent; zero-length blocks contribute nothing; a struct's
 *      extent is padded to the C alignment of its most-aligned predefined type), and
 *  (c) when compiled with TESS_TEST_MPI, the equivalent committed MPI datatype (resized to the
 *      oracle's lb/extent wherever the MPI library pads an extent differently).
 * Everything is reproducible from the rng state. Sizes are bounded (RT_MAX_BYTES data bytes,
 * bounds within +-RT_MAX_EXTENT bytes) so that tests stay fast.
 *
 * Typical use:
 *     rt_rng r; rt_seed(&r, seed);
 *     rt_type *t = rt_random(&r, 4, 0);
 *     if (!t) { fprintf(stderr, "%s\n", rt_error()); exit(1); }
 *     ... t->type, t->offsets[0 .. t->nbytes) ...
 *     rt_free(t);
 */
#ifndef TESS_RANDTYPE_H
#define TESS_RANDTYPE_H

#include "tessera.h"

#include <stddef.h>
#include <stdint.h>

#ifdef TESS_TEST_MPI
#include <mpi.h>
#endif

/** A small reproducible random number generator (splitmix64). */
typedef struct {
    uint64_t s;
} rt_rng;

void rt_seed(rt_rng *r, uint64_t seed);
uint64_t rt_u64(rt_rng *r);
/** Uniform in [lo, hi] (lo when hi <= lo). */
int64_t rt_int(rt_rng *r, int64_t lo, int64_t hi);
/** 1 with probability percent/100. */
int rt_chance(rt_rng *r, int percent);
/** A well-mixed 64-bit value of x (for deriving per-case seeds: rt_mix(seed ^ i)). */
uint64_t rt_mix(uint64_t x);

/** Flags for rt_random. */
enum {
    /** Offsets strictly increasing within an instance and true_extent <= extent, so that the
     *  type tiles without overlap: a legal MPI-IO filetype (and etype-able by bytes). */
    RT_MONOTONIC = 1u << 0,
    /** lb >= 0 and every data offset >= 0 (filetypes for a view at displacement 0). */
    RT_NONNEG = 1u << 1,
    /** Do not build the MPI type even when compiled with TESS_TEST_MPI. */
    RT_NO_MPI = 1u << 2,
    /** The type has at least one data byte. */
    RT_NO_EMPTY = 1u << 3,
    /** Leave out subarray and darray constructors. */
    RT_NO_ARRAY = 1u << 4,
};

/** Constructors, as bits of rt_type.ctors. */
enum {
    RT_CONTIGUOUS = 1u << 0,
    RT_VECTOR = 1u << 1,
    RT_HVECTOR = 1u << 2,
    RT_INDEXED = 1u << 3,
    RT_HINDEXED = 1u << 4,
    RT_BLOCKINDEXED = 1u << 5,
    RT_HBLOCKINDEXED = 1u << 6,
    RT_STRUCT = 1u << 7,
    RT_RESIZED = 1u << 8,
    RT_SUBARRAY = 1u << 9,
    RT_DARRAY = 1u << 10,
};

/** Default bounds: data bytes of one instance and |any bound or offset|. */
#define RT_MAX_BYTES ((int64_t)64 * 1024)
#define RT_MAX_EXTENT ((int64_t)1024 * 1024)

typedef struct rt_type {
    tess_type *type;    /* the Tessera type (owned: rt_free releases it) */
    int64_t *offsets;   /* nbytes entries, typemap order, relative to the type origin */
    int64_t nbytes;     /* data bytes of one instance (the type's size) */
    int64_t lb, extent; /* MPI bounds */
    int64_t true_lb, true_ub; /* lowest data byte, highest data byte + 1 (0, 0 if empty) */
    int64_t nregions;   /* regions of one instance, typemap order, adjacent merged */
    int overlap;        /* some byte occurs twice in the typemap */
    int monotonic;      /* offsets strictly increasing and true_ub - true_lb <= extent */
    int phantom;        /* a non-empty block of a zero-size type occurs (MPI implementations
                           may count such blocks in their true bounds) */
    int depth;          /* constructor nesting of the recipe (0: predefined) */
    unsigned ctors;     /* RT_CONTIGUOUS | ... : the constructors the recipe uses */
    char *recipe;       /* the constructor calls, human readable (independent of Tessera) */
#ifdef TESS_TEST_MPI
    MPI_Datatype mpi;   /* committed equivalent, or MPI_DATATYPE_NULL (RT_NO_MPI) */
    int mpi_pads;       /* levels where MPI padded the extent for alignment (fixed by resizing) */
    int mpi_phantom_diffs; /* levels with blocks of empty types, or whose blocks all have length
                              0, where MPI's bounds differ from the oracle's (the libraries
                              disagree with each other there; fixed by resizing) */
    int mpi_sticky_diffs; /* struct levels mixing members with and without lb/ub markers
                             (resized, subarray, darray) where MPI applied the standard's sticky
                             markers: bounds over the marked members only. Tessera, like MPICH,
                             takes the bounds over all members; fixed by resizing */
    char *mpi_note;     /* NULL, or MPI bounds that disagreed with the oracle otherwise */
#endif
} rt_type;

/**
 * A random type of at most `depth` constructor levels (0 .. 4 is the intended range) with the
 * default limits. Returns NULL on a Tessera constructor failure for valid input (that is a
 * finding: rt_error() says which call, with the recipe) or on memory exhaustion.
 */
rt_type *rt_random(rt_rng *rng, int depth, unsigned flags);
/** As rt_random with explicit limits (max_bytes >= 1, max_extent >= 64). */
rt_type *rt_random_limits(rt_rng *rng, int depth, unsigned flags, int64_t max_bytes,
                          int64_t max_extent);
void rt_free(rt_type *t);
/** The message of the last rt_random failure. The generator keeps no other state: one rng per
 * thread makes it usable from several threads, though this message is then shared. */
const char *rt_error(void);

/**
 * The merged regions of `count` instances (instance i at i * extent), typemap order: consecutive
 * data bytes at consecutive offsets form one region (also across instances). *regs receives a
 * malloc'ed array, *prefix (if not NULL) a malloc'ed array of nregs + 1 entries: data bytes
 * before region k. Returns the region count, or -1 on memory exhaustion.
 */
int64_t rt_regions(const rt_type *t, int64_t count, tess_region **regs, int64_t **prefix);

/** 1 if `count` instances (instance i at i * extent) touch some byte twice. */
int rt_overlaps(const rt_type *t, int64_t count);

/**
 * The bytes [*lo, *hi) (relative to the origin) that the data of `count` instances touch
 * (0, 0 when there is no data). A buffer for them: malloc(hi - lo), origin = buffer - lo.
 */
void rt_span(const rt_type *t, int64_t count, int64_t *lo, int64_t *hi);

#endif
