/*
 * from_mpi_check.h - shared by test_type_from_mpi (random MPI types) and
 * test_type_from_mpi_fixed (named types, sizes beyond 2^32, errors): tess_type_from_mpi
 * checked against the MPI library itself.
 */
#ifndef TESS_FROM_MPI_CHECK_H
#define TESS_FROM_MPI_CHECK_H

#include "check.h"
#include "tessera_mpi.h"

#include <stdbool.h>
#include <stdint.h>

#define MCHECK(call)                                                                         \
    do {                                                                                     \
        int mcheck_rc_ = (call);                                                             \
        if (mcheck_rc_ != MPI_SUCCESS) {                                                     \
            fprintf(stderr, "%s:%d: %s failed with MPI error %d\n", __FILE__, __LINE__,      \
                    #call, mcheck_rc_);                                                      \
            exit(1);                                                                         \
        }                                                                                    \
    } while (0)

/* Random types stay below these (a larger one is replaced by a named type): packing stays fast. */
#define MAX_SIZE (1 << 15)
#define MAX_SPAN (1 << 18)
#define MAX_BLOCKS 6

/* A small reproducible generator: rnd() raw, range(lo, hi) uniform in [lo, hi]. */
extern uint64_t rng_state;
uint64_t rnd(void);
int64_t range(int64_t lo, int64_t hi);

/* The number of the type being checked, and its constructor calls (the failure report). */
extern int type_no;
extern char desc[1 << 15];
extern size_t desc_len;
void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void say_array(const char *name, const int64_t *a, int64_t n);

/* The combiner of t (MPI 4's large-count envelope where there is one). */
int combiner_of(MPI_Datatype t);
/* Free a type if it is derived (predefined ones must not be freed). */
void tfree(MPI_Datatype *t);

typedef struct {
    MPI_Datatype dt;
    const char *name;
} named;

/*
 * Whether MPI_Pack writes every byte of the packed stream of dt in a noncontiguous layout
 * (MPICH 4.0 leaves the padding bytes of long doubles unwritten: those cannot be compared).
 */
bool packs_all_bytes(MPI_Datatype dt);

/* The named types random types are made of (pair types included): init_leaves fills them. */
extern named leaves[32];
extern int nleaves;
void init_leaves(void);
/* A random one, said. */
MPI_Datatype leaf(void);

void extents(MPI_Datatype t, MPI_Count *size, MPI_Aint *lb, MPI_Aint *ext, MPI_Aint *tlb,
             MPI_Aint *text);

/*
 * Import *dt and check it against MPI: size and bounds, true bounds as MPI_Unpack shows them,
 * pack and unpack of count instances as MPI_Pack / MPI_Unpack do them (whole and in two
 * pieces). *dt is committed here.
 */
void check_type(MPI_Datatype *dt, int count);

#endif
