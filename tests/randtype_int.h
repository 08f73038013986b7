/*
 * randtype_int.h - the internals shared by the random-type generator's files (tests only):
 * randtype.c (rng, strings, leaves, nodes, the API), randtype_params.c (a constructor's random
 * arguments and their placements) and randtype_ctor.c (one constructor level, made in Tessera,
 * in the oracle and in MPI).
 */
#ifndef TESS_RANDTYPE_INT_H
#define TESS_RANDTYPE_INT_H

#include "randtype.h"

/* A growing string (recipes, notes). */
typedef struct {
    char *p;
    size_t len, cap;
} sbuf;

void rti_printf(sbuf *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/** The string (malloc'ed, cut at 256 KiB), leaving s empty. */
char *rti_take(sbuf *s);

/* The message of the last failure (rt_error). */
extern char rti_errbuf[4096];

/* A generated type: the Tessera type, its byte map and bounds by MPI's rules, its MPI type. */
typedef struct node {
    tess_type *t;
    int64_t *off, n;   /* byte map */
    int64_t lb, ub;    /* MPI bounds */
    int64_t tlb, tub;  /* true bounds (0, 0 when n == 0) */
    int64_t align;     /* C alignment of its most-aligned predefined type (1 when empty) */
    int mono;          /* strictly increasing offsets and tub - tlb <= ub - lb */
    int phantom;       /* a block with blocklen > 0 of an empty type, here or below */
    int nodata;        /* no block with blocklen > 0 */
    unsigned ctors;    /* constructors used, bit 1 << kind */
    int markers;       /* the MPI type carries explicit lb/ub markers (resized, subarray, darray
                          below, or a fix-up resize of MPI's padded extent) */
    int sticky;        /* mixes blocks with and without markers: MPI's sticky-marker rule gives
                          the bounds over the marked blocks only (sticky_lb, sticky_ub) */
    int64_t sticky_lb, sticky_ub;
    int depth;
    char *rec;
#ifdef TESS_TEST_MPI
    MPI_Datatype m;
    int m_owned;
#endif
} node;

/* One generation's state. */
typedef struct {
    rt_rng *r;
    unsigned flags;
    int64_t max_ext;
    int use_mpi;
    int failed;
#ifdef TESS_TEST_MPI
    int pads, phantoms, stickies;
    sbuf note;
#endif
} ctx;

void rti_node_free(node *n);
/** Set n's true bounds and monotonicity from its byte map and bounds. */
void rti_true_bounds(node *n);
/** A predefined type of at most budget bytes. */
node *rti_make_leaf(ctx *c, int64_t budget);
/** A random type of at most depth levels (a leaf now and then below the root). */
node *rti_gen(ctx *c, int depth, int64_t budget, int root);

/* The constructors. */
enum {
    K_CONTIG,
    K_VECTOR,
    K_HVECTOR,
    K_INDEXED,
    K_HINDEXED,
    K_BLOCKIDX,
    K_HBLOCKIDX,
    K_STRUCT,
    K_RESIZED,
    K_SUBARRAY,
    K_DARRAY,
    NKINDS
};
extern const char *const rti_kind_name[NKINDS];

#define MAXKIDS 3
#define MAXBLOCKS 64

/* A constructor's arguments. */
typedef struct {
    int kind;
    int64_t count, blen, stride;   /* stride: units (vector) or bytes (hvector) */
    int64_t bl[MAXBLOCKS], dp[MAXBLOCKS];
    int kid[MAXBLOCKS];
    int64_t rlb, rext;
    int ndims, order;
    int64_t sizes[3], subs[3], starts[3];
    int nprocs, rank, distr[3], darg[3], psz[3];
} params;

/* a placement: blen instances of kids[kid] at byte disp + j * extent(kid) */
typedef struct {
    int64_t disp, blen;
    int kid;
} place;

static inline int64_t rti_ext_of(const node *n) { return n->ub - n->lb; }

/** Random arguments for p->kind over the children (attempt > 0: smaller ones). */
void rti_pick_params(ctx *c, params *p, node **kids, int nkids, int64_t budget, int attempt);
/**
 * The placements of a constructor. Returns the number (or -1 on no memory); *pl malloc'ed.
 * *set_bounds is 1 when the constructor sets lb/ub itself (*lb, *ub).
 */
int64_t rti_placements(const params *p, node **kids, place **pl, int *set_bounds, int64_t *lb,
                       int64_t *ub);
/** One constructor level of the given kind over freshly generated children. */
node *rti_gen_ctor(ctx *c, int kind, int depth, int64_t budget);

#endif
