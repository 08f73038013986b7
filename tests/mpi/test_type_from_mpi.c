/*
 * test_type_from_mpi.c - tess_type_from_mpi checked against the MPI library itself.
 *
 * Random nested MPI datatypes (every combiner, up to 4 levels, negative displacements and
 * strides, zero block lengths, resized types, structs of mixed types with MPI's alignment
 * padding, subarrays, darrays, the large-count constructors when the MPI library has them) are
 * imported; the import must have MPI's size, lb, extent, true lb and true extent, and must
 * pack a buffer of varied byte values exactly as MPI_Pack does (whole and in two pieces), and
 * unpack exactly as MPI_Unpack does (from_mpi_check.c). test_type_from_mpi_fixed checks the
 * named types, the pair types, sizes beyond 2^32 and the error cases.
 *
 * Usage: test_type_from_mpi [ntypes [seed]]   (run with 1 process)
 */
#include "from_mpi_check.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* ---------------------------------------------------------- random types */

enum { K_DUP, K_CONTIG, K_VECTOR, K_HVECTOR, K_INDEXED, K_HINDEXED, K_BLOCK, K_HBLOCK,
       K_STRUCT, K_SUBARRAY, K_DARRAY, K_RESIZED, K_KINDS };

static const char *const kind_names[K_KINDS] = {
    "dup", "contiguous", "vector", "hvector", "indexed", "hindexed", "indexed_block",
    "hindexed_block", "struct", "subarray", "darray", "resized"};

/* The arguments of one constructor call (int64 here; narrowed per MPI binding). */
typedef struct {
    int kind;
    int64_t count, blen, stride, lb, extent;
    int64_t blens[MAX_BLOCKS], displs[MAX_BLOCKS];
    MPI_Datatype olds[MAX_BLOCKS];
    int ndims, order, size, rank;
    int64_t sizes[3], subsizes[3], starts[3];
    int distribs[3], dargs[3], psizes[3];
} params;

/* Call the classic constructor; returns MPI's error code. */
static int make_classic(const params *p, MPI_Datatype *t)
{
    int bl[MAX_BLOCKS], di[MAX_BLOCKS], sz[3], sub[3], st[3];
    MPI_Aint da[MAX_BLOCKS];
    for (int64_t i = 0; i < p->count && i < MAX_BLOCKS; i++) {
        bl[i] = (int)p->blens[i];
        di[i] = (int)p->displs[i];
        da[i] = (MPI_Aint)p->displs[i];
    }
    for (int i = 0; i < p->ndims; i++) {
        sz[i] = (int)p->sizes[i];
        sub[i] = (int)p->subsizes[i];
        st[i] = (int)p->starts[i];
    }
    int c = (int)p->count, b = (int)p->blen;
    MPI_Datatype old = p->olds[0];
    switch (p->kind) {
    case K_DUP: return MPI_Type_dup(old, t);
    case K_CONTIG: return MPI_Type_contiguous(c, old, t);
    case K_VECTOR: return MPI_Type_vector(c, b, (int)p->stride, old, t);
    case K_HVECTOR: return MPI_Type_create_hvector(c, b, (MPI_Aint)p->stride, old, t);
    case K_INDEXED: return MPI_Type_indexed(c, bl, di, old, t);
    case K_HINDEXED: return MPI_Type_create_hindexed(c, bl, da, old, t);
    case K_BLOCK: return MPI_Type_create_indexed_block(c, b, di, old, t);
    case K_HBLOCK: return MPI_Type_create_hindexed_block(c, b, da, old, t);
    case K_STRUCT: return MPI_Type_create_struct(c, bl, da, p->olds, t);
    case K_SUBARRAY: return MPI_Type_create_subarray(p->ndims, sz, sub, st, p->order, old, t);
    case K_DARRAY:
        return MPI_Type_create_darray(p->size, p->rank, p->ndims, sz, p->distribs, p->dargs,
                                      p->psizes, p->order, old, t);
    default: return MPI_Type_create_resized(old, (MPI_Aint)p->lb, (MPI_Aint)p->extent, t);
    }
}

#if MPI_VERSION >= 4
/* Call the large-count constructor (MPI 4); dup has none. */
static int make_large(const params *p, MPI_Datatype *t)
{
    MPI_Count bl[MAX_BLOCKS], di[MAX_BLOCKS], sz[3], sub[3], st[3];
    for (int64_t i = 0; i < p->count && i < MAX_BLOCKS; i++) {
        bl[i] = p->blens[i];
        di[i] = p->displs[i];
    }
    for (int i = 0; i < p->ndims; i++) {
        sz[i] = p->sizes[i];
        sub[i] = p->subsizes[i];
        st[i] = p->starts[i];
    }
    MPI_Count c = p->count, b = p->blen;
    MPI_Datatype old = p->olds[0];
    switch (p->kind) {
    case K_DUP: return MPI_Type_dup(old, t);
    case K_CONTIG: return MPI_Type_contiguous_c(c, old, t);
    case K_VECTOR: return MPI_Type_vector_c(c, b, p->stride, old, t);
    case K_HVECTOR: return MPI_Type_create_hvector_c(c, b, p->stride, old, t);
    case K_INDEXED: return MPI_Type_indexed_c(c, bl, di, old, t);
    case K_HINDEXED: return MPI_Type_create_hindexed_c(c, bl, di, old, t);
    case K_BLOCK: return MPI_Type_create_indexed_block_c(c, b, di, old, t);
    case K_HBLOCK: return MPI_Type_create_hindexed_block_c(c, b, di, old, t);
    case K_STRUCT: return MPI_Type_create_struct_c(c, bl, di, p->olds, t);
    case K_SUBARRAY: return MPI_Type_create_subarray_c(p->ndims, sz, sub, st, p->order, old, t);
    case K_DARRAY:
        return MPI_Type_create_darray_c(p->size, p->rank, p->ndims, sz, p->distribs, p->dargs,
                                        p->psizes, p->order, old, t);
    default: return MPI_Type_create_resized_c(old, p->lb, p->extent, t);
    }
}
#define HAVE_LARGE 1
#else
#define HAVE_LARGE 0
#endif

/* Random types made, per kind, by the classic [0] and the large-count [1] constructors. */
static int made[K_KINDS][2];

static int make(const params *p, bool large, MPI_Datatype *t)
{
#if HAVE_LARGE
    int rc = large ? make_large(p, t) : make_classic(p, t);
#else
    int rc = make_classic(p, t);
#endif
    made[p->kind][large && p->kind != K_DUP] += rc == MPI_SUCCESS;
    return rc;
}

/* Random arguments for the subarray / darray kinds. */
static void gen_subarray(params *p, bool allow_empty)
{
    p->ndims = (int)range(1, 3);
    p->order = range(0, 1) ? MPI_ORDER_C : MPI_ORDER_FORTRAN;
    for (int i = 0; i < p->ndims; i++) {
        p->sizes[i] = range(1, 5);
        p->subsizes[i] = range(allow_empty && range(0, 7) == 0 ? 0 : 1, p->sizes[i]);
        p->starts[i] = range(0, p->sizes[i] - p->subsizes[i]);
    }
}

static void gen_darray(params *p)
{
    p->ndims = (int)range(1, 3);
    p->order = range(0, 1) ? MPI_ORDER_C : MPI_ORDER_FORTRAN;
    p->size = 1;
    for (int i = 0; i < p->ndims; i++) {
        int64_t g = range(1, 6);
        int ps = (int)range(1, 3);
        p->sizes[i] = g;
        switch (range(0, 2)) {
        case 0:
            p->distribs[i] = MPI_DISTRIBUTE_NONE;
            ps = 1;
            p->dargs[i] = MPI_DISTRIBUTE_DFLT_DARG;
            break;
        case 1:
            p->distribs[i] = MPI_DISTRIBUTE_BLOCK;
            p->dargs[i] = range(0, 1) ? MPI_DISTRIBUTE_DFLT_DARG
                                      : (int)range((g + ps - 1) / ps, (g + ps - 1) / ps + 2);
            break;
        default:
            p->distribs[i] = MPI_DISTRIBUTE_CYCLIC;
            p->dargs[i] = range(0, 1) ? MPI_DISTRIBUTE_DFLT_DARG : (int)range(1, 3);
            break;
        }
        p->psizes[i] = ps;
        p->size *= ps;
    }
    p->rank = (int)range(0, p->size - 1);
}

/*
 * A random uncommitted type `depth` levels deep at most (a named type only below the top);
 * its calls are appended to desc.
 */
static MPI_Datatype gen(int depth, bool top)
{
    params p = {.kind = (int)range(0, K_KINDS - 1)};
    bool large = HAVE_LARGE && range(0, 2) == 0;
    MPI_Datatype t;
    int nolds = 1, rc;
    if (depth == 0 || (!top && range(0, 4) == 0))
        return leaf();
    say("%s%s(", kind_names[p.kind], large && p.kind != K_DUP ? "_c" : "");
    if (p.kind == K_STRUCT) {
        nolds = (int)range(0, 4);
        for (int i = 0; i < nolds; i++) {
            say(i ? ", " : "");
            p.olds[i] = gen(depth - 1, false);
        }
    } else {
        p.olds[0] = gen(depth - 1, false);
    }
#ifdef MPICH_VERSION
    /* MPICH 4.0 dies of a division by zero (SIGFPE) in MPI_Unpack of a struct with a block of
       a vector or (h)indexed_block whose block length is 0 and whose old type is not
       contiguous: struct {char; hindexed_block(1, 0, {0}, vector(2, 1, 2, MPI_SHORT))} */
    const int64_t min_blen = 1;
#else
    const int64_t min_blen = 0;
#endif
    MPI_Count osize = 0;
    MPI_Aint olb = 0, oext = 0, otlb = 0, otext = 0;
    if (nolds > 0)
        extents(p.olds[0], &osize, &olb, &oext, &otlb, &otext);
    switch (p.kind) {
    case K_CONTIG: p.count = range(0, 4); break;
    case K_VECTOR:
    case K_HVECTOR:
        p.count = range(0, 4);
        p.blen = range(min_blen, 3);
        p.stride = p.kind == K_VECTOR ? range(-4, 4) : range(-2, 2) * oext + range(-24, 24);
#ifdef OPEN_MPI
        /* Open MPI 4.1 treats a byte stride of exactly -1 as the old type's extent:
           hvector(2, 2, -1, MPI_INT) packs like contiguous(4, MPI_INT) */
        if ((p.kind == K_VECTOR ? p.stride * oext : p.stride) == -1)
            p.stride = -2;
#endif
        break;
    case K_INDEXED:
    case K_HINDEXED:
    case K_BLOCK:
    case K_HBLOCK:
        p.count = range(0, MAX_BLOCKS);
        p.blen = range(min_blen, 3);
        for (int64_t i = 0; i < p.count; i++) {
            p.blens[i] = range(0, 3);
            p.displs[i] = p.kind == K_INDEXED || p.kind == K_BLOCK ? range(-6, 6)
                                                                   : range(-96, 96);
        }
        break;
    case K_STRUCT:
        p.count = nolds;
        for (int64_t i = 0; i < p.count; i++) {
            p.blens[i] = range(0, 3);
            p.displs[i] = range(-64, 96);
        }
        break;
    case K_SUBARRAY: gen_subarray(&p, true); break;
    case K_DARRAY: gen_darray(&p); break;
    case K_RESIZED:
        p.lb = range(-32, 32);
        p.extent = range(0, 2 * oext + 16);
        break;
    default: break;
    }
    rc = make(&p, large, &t);
    if (rc != MPI_SUCCESS && p.kind == K_SUBARRAY) {
        /* an MPI before MPI 4 (Open MPI 4.1) refuses empty subarrays: make a non-empty one */
        gen_subarray(&p, false);
        rc = make(&p, large, &t);
    }
    if (rc != MPI_SUCCESS && (p.kind == K_SUBARRAY || p.kind == K_DARRAY)) {
        /* Open MPI refuses subarrays and darrays of an old type with extent 0 */
        say(" refused by MPI, old type replaced by INT");
        tfree(&p.olds[0]);
        p.olds[0] = MPI_INT;
        rc = make(&p, large, &t);
    }
    say(";");
    if (rc != MPI_SUCCESS) {
        fprintf(stderr, "type %d: the MPI constructor failed with error %d\n%.*s\n", type_no, rc,
                (int)desc_len, desc);
        exit(1);
    }
    switch (p.kind) {
    case K_DUP: break;
    case K_SUBARRAY:
    case K_DARRAY:
        say(" order=%s", p.order == MPI_ORDER_C ? "C" : "F");
        say_array("sizes", p.sizes, p.ndims);
        if (p.kind == K_SUBARRAY) {
            say_array("subsizes", p.subsizes, p.ndims);
            say_array("starts", p.starts, p.ndims);
        } else {
            say(" size=%d rank=%d", p.size, p.rank);
            for (int i = 0; i < p.ndims; i++)
                say(" (distrib %d darg %d psize %d)", p.distribs[i], p.dargs[i], p.psizes[i]);
        }
        break;
    case K_RESIZED: say(" lb=%lld extent=%lld", (long long)p.lb, (long long)p.extent); break;
    default:
        say(" count=%lld blen=%lld stride=%lld", (long long)p.count, (long long)p.blen,
            (long long)p.stride);
        if (p.kind != K_CONTIG && p.kind != K_VECTOR && p.kind != K_HVECTOR) {
            say_array("blens", p.blens, p.count);
            say_array("displs", p.displs, p.count);
        }
        break;
    }
    say(")");
    for (int i = 0; i < nolds; i++)
        tfree(&p.olds[i]);
    MPI_Count size;
    MPI_Aint lb, ext, tlb, text;
    extents(t, &size, &lb, &ext, &tlb, &text);
    if (size > MAX_SIZE || ext > MAX_SPAN || text > MAX_SPAN || lb < -MAX_SPAN ||
        lb > MAX_SPAN || tlb < -MAX_SPAN || tlb > MAX_SPAN) {
        tfree(&t);
        say("=>too big, replaced by ");
        return leaf();
    }
    return t;
}

int main(int argc, char **argv)
{
    int ntypes = argc > 1 ? atoi(argv[1]) : 5000;
    unsigned long long seed = argc > 2 ? strtoull(argv[2], NULL, 0) : 20240611ull;
    tess_type *t = NULL;

    CHECK_ERR(tess_type_from_mpi(MPI_INT, &t), TESS_ERR_ARG); /* before MPI_Init */
    MCHECK(MPI_Init(&argc, &argv));
    /* MPI errors come back as codes (the empty-subarray probe, the F90 probe) */
    MCHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MCHECK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    init_leaves();
    rng_state = seed * 2 + 1;

    int nnamed = 0;
    for (type_no = 0; type_no < ntypes; type_no++) {
        desc_len = 0;
        MPI_Datatype dt = gen((int)range(1, 4), true);
        nnamed += combiner_of(dt) == MPI_COMBINER_NAMED;
        check_type(&dt, (int)range(1, 3));
        tfree(&dt);
    }
    printf("test_type_from_mpi: %d random types (seed %llu, %d of them named) match MPI\n",
           ntypes, seed, nnamed);
    printf("constructor calls (classic/large-count):");
    for (int k = 0; k < K_KINDS; k++)
        printf(" %s %d/%d", kind_names[k], made[k][0], made[k][1]);
    printf("\n");
    MCHECK(MPI_Finalize());
    CHECK_ERR(tess_type_from_mpi(MPI_INT, &t), TESS_ERR_ARG); /* after MPI_Finalize */
    return 0;
}
