/*
 * test_subarray_mpi.c - tess_type_subarray / tess_type_darray against the MPI library's
 * MPI_Type_create_subarray / MPI_Type_create_darray on random shapes.
 *
 * The typemaps are compared through packing: a buffer over the whole array is filled with a
 * byte pattern that names each byte's offset (byte k of the offset, for k = 0, 1, 2 in turn),
 * and MPI_Pack of the MPI type must produce exactly the bytes tess_pack produces. Three
 * patterns together identify every packed byte's offset, so equal output means an equal
 * typemap (order included). Every darray rank is built in one process (darray needs no
 * communication), so the test runs with 1 process: `test_subarray_mpi [rounds]`.
 */
#include "check.h"

#include <mpi.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng = 0x853c49e6748fea9bull;
static int rnd(int n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (int)(rng % (uint64_t)n);
}

/* An element type built the same way on both sides. */
typedef struct {
    MPI_Datatype m;
    tess_type *t;
    const char *name;
} elem;

static elem elems[5];
static int nelems;

static void make_elems(void)
{
    MPI_Datatype v;
    tess_type *tv;
    elems[nelems++] = (elem){MPI_BYTE, TESS_BYTE, "byte"};
    elems[nelems++] = (elem){MPI_INT, TESS_INT32, "int"};
    elems[nelems++] = (elem){MPI_DOUBLE, TESS_DOUBLE, "double"};
    /* two ints with a hole between them */
    MPI_Type_vector(2, 1, 2, MPI_INT, &elems[nelems].m);
    MPI_Type_commit(&elems[nelems].m);
    CHECK_OK(tess_type_vector(2, 1, 2, TESS_INT32, &elems[nelems].t));
    elems[nelems++].name = "vector";
    /* an int with a lower bound of -4 and an extent of 12 */
    MPI_Type_create_resized(MPI_INT, -4, 12, &v);
    MPI_Type_commit(&v);
    CHECK_OK(tess_type_resized(TESS_INT32, -4, 12, &tv));
    elems[nelems++] = (elem){v, tv, "resized"};
}

typedef struct {
    int darray, ndims, order, size, rank;
    int g[4], sub[4], start[4], distrib[4], darg[4], psize[4];
} shape;

static int64_t compared_bytes, compared_types;

/* Pack both types over the same patterned buffer and compare the packed bytes. */
static void compare(const shape *s, const elem *e)
{
    MPI_Datatype m;
    tess_type *t;
    int64_t g64[4], sub64[4], st64[4];
    int mpi_order = s->order == TESS_ORDER_C ? MPI_ORDER_C : MPI_ORDER_FORTRAN;
    for (int d = 0; d < s->ndims; d++) {
        g64[d] = s->g[d];
        sub64[d] = s->sub[d];
        st64[d] = s->start[d];
    }
    if (s->darray) {
        int mdist[4];
        for (int d = 0; d < s->ndims; d++)
            mdist[d] = s->distrib[d] == TESS_DISTRIBUTE_BLOCK    ? MPI_DISTRIBUTE_BLOCK
                       : s->distrib[d] == TESS_DISTRIBUTE_CYCLIC ? MPI_DISTRIBUTE_CYCLIC
                                                                 : MPI_DISTRIBUTE_NONE;
        int mdarg[4];
        for (int d = 0; d < s->ndims; d++)
            mdarg[d] = s->darg[d] == TESS_DISTRIBUTE_DFLT_DARG ? MPI_DISTRIBUTE_DFLT_DARG
                                                               : s->darg[d];
        CHECK(MPI_Type_create_darray(s->size, s->rank, s->ndims, s->g, mdist, mdarg,
                                     s->psize, mpi_order, e->m, &m) == MPI_SUCCESS);
        CHECK_OK(tess_type_darray(s->size, s->rank, s->ndims, g64, s->distrib, s->darg,
                                  s->psize, s->order, e->t, &t));
    } else {
        CHECK(MPI_Type_create_subarray(s->ndims, s->g, s->sub, s->start, mpi_order, e->m,
                                       &m) == MPI_SUCCESS);
        CHECK_OK(tess_type_subarray(s->ndims, g64, sub64, st64, s->order, e->t, &t));
    }
    MPI_Type_commit(&m);

    MPI_Aint lb, extent;
    MPI_Type_get_extent(m, &lb, &extent);
    CHECK(lb == tess_type_lb(t) && extent == tess_type_extent(t));
    int msize, packsize;
    MPI_Type_size(m, &msize);
    CHECK(msize == tess_type_size(t));
    MPI_Pack_size(1, m, MPI_COMM_SELF, &packsize);

    size_t len = (size_t)extent + 64; /* element data lies within [0, extent) of the array */
    unsigned char *in = malloc(len), *a = malloc((size_t)packsize + 1),
                  *b = malloc((size_t)msize + 1);
    CHECK(in && a && b);
    for (int k = 0; k < 3; k++) {
        for (size_t i = 0; i < len; i++)
            in[i] = (unsigned char)(i >> (8 * k));
        int pos = 0;
        int64_t packed = -1;
        CHECK(MPI_Pack(in, 1, m, a, packsize, &pos, MPI_COMM_SELF) == MPI_SUCCESS);
        CHECK_OK(tess_pack(in, 1, t, 0, b, msize, &packed));
        if (pos != packed || memcmp(a, b, (size_t)pos) != 0) {
            fprintf(stderr, "%s rank %d order %s over %s: MPI packs %d bytes, tess %lld, "
                    "differ\n", s->darray ? "darray" : "subarray", s->rank,
                    s->order == TESS_ORDER_C ? "C" : "Fortran", e->name, pos,
                    (long long)packed);
            for (int d = 0; d < s->ndims; d++)
                fprintf(stderr, "  dim %d: g %d sub %d start %d dist %d darg %d p %d\n", d,
                        s->g[d], s->sub[d], s->start[d], s->distrib[d], s->darg[d],
                        s->psize[d]);
            CHECK(0);
        }
        compared_bytes += pos;
    }
    compared_types++;
    free(in);
    free(a);
    free(b);
    MPI_Type_free(&m);
    tess_type_free(t);
}

static void random_dims(shape *s)
{
    memset(s, 0, sizeof *s);
    s->ndims = 1 + rnd(4);
    s->order = rnd(2) ? TESS_ORDER_C : TESS_ORDER_FORTRAN;
    for (int d = 0; d < s->ndims; d++)
        s->g[d] = 1 + rnd(s->ndims <= 2 ? 40 : 8);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rounds = argc > 1 ? atoi(argv[1]) : 300;
    make_elems();
    for (int k = 0; k < rounds; k++) {
        shape s;
        random_dims(&s);
        for (int d = 0; d < s.ndims; d++) {
            s.sub[d] = 1 + rnd(s.g[d]);
            s.start[d] = rnd(s.g[d] - s.sub[d] + 1);
        }
        compare(&s, &elems[rnd(nelems)]);

        random_dims(&s);
        s.darray = 1;
        s.size = 1;
        for (int d = 0; d < s.ndims; d++) {
            s.distrib[d] = 1 + rnd(3);
            s.psize[d] = s.distrib[d] == TESS_DISTRIBUTE_NONE ? 1 : 1 + rnd(3);
            int g = s.g[d], p = s.psize[d];
            if (rnd(3) == 0 || s.distrib[d] == TESS_DISTRIBUTE_NONE)
                s.darg[d] = TESS_DISTRIBUTE_DFLT_DARG;
            else if (s.distrib[d] == TESS_DISTRIBUTE_BLOCK)
                s.darg[d] = (g + p - 1) / p + rnd(3);
            else
                s.darg[d] = 1 + rnd(5);
            s.size *= p;
        }
        const elem *e = &elems[rnd(nelems)];
        for (s.rank = 0; s.rank < s.size; s.rank++)
            compare(&s, e);
    }
    for (int i = 3; i < nelems; i++) {
        MPI_Type_free(&elems[i].m);
        tess_type_free(elems[i].t);
    }
    printf("test_subarray_mpi: %lld types compared with MPI_Pack (%lld bytes)\n",
           (long long)compared_types, (long long)compared_bytes);
    MPI_Finalize();
    return 0;
}
