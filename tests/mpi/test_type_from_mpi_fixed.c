/*
 * test_type_from_mpi_fixed.c - tess_type_from_mpi on fixed cases: every named type (and the
 * kind it maps to), the pair types, sizes beyond 2^32, MPI-1 constructors (MPICH), and the
 * error cases (before MPI_Init and after MPI_Finalize, unsupported combiners, nesting bounds).
 *
 * Usage: test_type_from_mpi_fixed   (run with 1 process)
 */
#include "from_mpi_check.h"
#include "type/type.h"

#include <string.h>

/* ------------------------------------------------------------ fixed cases */

/* Named types map to the predefined type of their kind and size. */
static void test_named(void)
{
    const struct {
        MPI_Datatype dt;
        tess_type *want;
    } kinds[] = {
        {MPI_BYTE, TESS_BYTE}, {MPI_CHAR, TESS_CHAR}, {MPI_SIGNED_CHAR, TESS_INT8},
        {MPI_UNSIGNED_CHAR, TESS_UINT8}, {MPI_INT8_T, TESS_INT8}, {MPI_UINT8_T, TESS_UINT8},
        {MPI_INT16_T, TESS_INT16}, {MPI_UINT16_T, TESS_UINT16}, {MPI_INT32_T, TESS_INT32},
        {MPI_UINT32_T, TESS_UINT32}, {MPI_INT64_T, TESS_INT64}, {MPI_UINT64_T, TESS_UINT64},
        {MPI_SHORT, TESS_INT16}, {MPI_INT, TESS_INT32}, {MPI_UNSIGNED, TESS_UINT32},
        {MPI_LONG_LONG, TESS_INT64}, {MPI_UNSIGNED_LONG_LONG, TESS_UINT64},
        {MPI_FLOAT, TESS_FLOAT}, {MPI_DOUBLE, TESS_DOUBLE},
        {MPI_LONG, sizeof(long) == 8 ? TESS_INT64 : TESS_INT32},
        {MPI_UNSIGNED_LONG, sizeof(long) == 8 ? TESS_UINT64 : TESS_UINT32},
        {MPI_AINT, sizeof(MPI_Aint) == 8 ? TESS_INT64 : TESS_INT32},
    };
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        tess_type *t = NULL;
        CHECK_OK(tess_type_from_mpi(kinds[k].dt, &t));
        CHECK(t == kinds[k].want);
        tess_type_free(t);
    }
    /* every named type, pair types included, packs as MPI packs it */
    const MPI_Datatype all[] = {
        MPI_WCHAR, MPI_C_BOOL, MPI_PACKED, MPI_LONG_DOUBLE, MPI_C_FLOAT_COMPLEX,
        MPI_C_DOUBLE_COMPLEX, MPI_C_LONG_DOUBLE_COMPLEX, MPI_OFFSET, MPI_COUNT,
        MPI_FLOAT_INT, MPI_DOUBLE_INT, MPI_LONG_INT, MPI_SHORT_INT, MPI_2INT,
        MPI_LONG_DOUBLE_INT, MPI_INTEGER, MPI_REAL, MPI_DOUBLE_PRECISION, MPI_COMPLEX,
        MPI_DOUBLE_COMPLEX, MPI_LOGICAL, MPI_CHARACTER, MPI_2REAL, MPI_2DOUBLE_PRECISION,
        MPI_2INTEGER,
    };
    for (size_t k = 0; k < sizeof all / sizeof all[0]; k++) {
        int size = 0;
        if (all[k] == MPI_DATATYPE_NULL || MPI_Type_size(all[k], &size) != MPI_SUCCESS ||
            size == 0)
            continue;
        char name[MPI_MAX_OBJECT_NAME];
        int len;
        MCHECK(MPI_Type_get_name(all[k], name, &len));
        if (!packs_all_bytes(all[k])) {
            printf("note: MPI_Pack skips padding bytes of %s: not compared\n", name);
            continue;
        }
        desc_len = 0;
        say("%s", name);
        MPI_Datatype dt = all[k];
        check_type(&dt, 3);
    }
    /* a complex number is two reals (the element is internal: type/type.h) */
    tess_type *t = NULL;
    CHECK_OK(tess_type_from_mpi(MPI_C_DOUBLE_COMPLEX, &t));
    CHECK(tess_type_size(t) == 16 && tess_type_num_regions(t) == 1 && t->el == TESS_DOUBLE);
    tess_type_free(t);
    CHECK_OK(tess_type_from_mpi(MPI_C_FLOAT_COMPLEX, &t));
    CHECK(tess_type_size(t) == 8 && t->el == TESS_FLOAT);
    tess_type_free(t);
}

/* Sizes and offsets beyond 2^31 and 2^32 bytes (never allocated: only the invariants). */
static void test_large(void)
{
    MPI_Datatype a, b, c;
    MPI_Aint displs[2] = {-((MPI_Aint)1 << 33), (MPI_Aint)5 << 31};
    int blens[2] = {3, 1};
    MCHECK(MPI_Type_vector(1 << 30, 2, 3, MPI_DOUBLE, &a)); /* 16 GiB of data */
    MCHECK(MPI_Type_create_hindexed(2, blens, displs, a, &b));
    MCHECK(MPI_Type_contiguous(3, b, &c));
    MPI_Datatype all[3] = {a, b, c};
    for (int k = 0; k < 3; k++) {
        tess_type *t = NULL;
        MPI_Count size;
        MPI_Aint lb, ext, tlb, text;
        CHECK_OK(tess_type_from_mpi(all[k], &t));
        extents(all[k], &size, &lb, &ext, &tlb, &text);
        CHECK(tess_type_size(t) == size && tess_type_lb(t) == lb && tess_type_extent(t) == ext);
        CHECK(tess_type_true_lb(t) == tlb && tess_type_true_extent(t) == text);
        CHECK(size > ((int64_t)1 << 32));
        tess_type_free(t);
    }
    MCHECK(MPI_Type_free(&a));
    MCHECK(MPI_Type_free(&b));
    MCHECK(MPI_Type_free(&c));
#if MPI_VERSION >= 4
    /* counts beyond int only exist in the large-count constructors */
    MPI_Count cbl[2] = {(MPI_Count)3 << 31, 1}, cd[2] = {-((MPI_Count)1 << 40), (MPI_Count)1 << 41};
    MCHECK(MPI_Type_vector_c((MPI_Count)3 << 31, 1, 2, MPI_INT, &a));
    MCHECK(MPI_Type_create_hindexed_c(2, cbl, cd, MPI_INT, &b));
    MCHECK(MPI_Type_create_resized_c(b, -((MPI_Count)1 << 42), (MPI_Count)1 << 44, &c));
    MPI_Datatype big[3] = {a, b, c};
    for (int k = 0; k < 3; k++) {
        tess_type *t = NULL;
        MPI_Count size;
        MPI_Aint lb, ext, tlb, text;
        CHECK_OK(tess_type_from_mpi(big[k], &t));
        extents(big[k], &size, &lb, &ext, &tlb, &text);
        CHECK(tess_type_size(t) == size && tess_type_lb(t) == lb && tess_type_extent(t) == ext);
        CHECK(tess_type_true_lb(t) == tlb && tess_type_true_extent(t) == text);
        tess_type_free(t);
    }
    MCHECK(MPI_Type_free(&a));
    MCHECK(MPI_Type_free(&b));
    MCHECK(MPI_Type_free(&c));
#endif
}

/* Bad input is refused with a message and *out untouched. */
static void test_errors(void)
{
    tess_type *const sentinel = TESS_DOUBLE;
    tess_type *t = sentinel;
    MPI_Datatype a, b;

    CHECK_ERR(tess_type_from_mpi(MPI_INT, NULL), TESS_ERR_ARG);
    CHECK_ERR(tess_type_from_mpi(MPI_DATATYPE_NULL, &t), TESS_ERR_ARG);
    CHECK(t == sentinel);

    /* MPI allows a negative extent, Tessera does not; also when nested */
    MCHECK(MPI_Type_create_resized(MPI_INT, 8, -4, &a));
    CHECK_ERR(tess_type_from_mpi(a, &t), TESS_ERR_UNSUPPORTED);
    MCHECK(MPI_Type_contiguous(2, a, &b));
    CHECK_ERR(tess_type_from_mpi(b, &t), TESS_ERR_UNSUPPORTED);
    CHECK(t == sentinel);
    MCHECK(MPI_Type_free(&a));
    MCHECK(MPI_Type_free(&b));

    /* a Fortran 90 parameterized type, alone and inside a vector (the MPI library may lack
       Fortran support: then there is nothing to check) */
    if (MPI_Type_create_f90_real(6, MPI_UNDEFINED, &a) == MPI_SUCCESS) {
        CHECK_ERR(tess_type_from_mpi(a, &t), TESS_ERR_UNSUPPORTED);
        CHECK(strstr(tess_last_error(), "F90") != NULL);
        MCHECK(MPI_Type_vector(2, 1, 2, a, &b));
        CHECK_ERR(tess_type_from_mpi(b, &t), TESS_ERR_UNSUPPORTED);
        CHECK(t == sentinel);
        MCHECK(MPI_Type_free(&b));
    }

    /* MPI nesting beyond the import's bound (dups add no Tessera level) */
    MCHECK(MPI_Type_dup(MPI_INT, &a));
    for (int k = 0; k < 140; k++) {
        MCHECK(MPI_Type_dup(a, &b));
        MCHECK(MPI_Type_free(&a));
        a = b;
    }
    CHECK_ERR(tess_type_from_mpi(a, &t), TESS_ERR_UNSUPPORTED);
    CHECK(t == sentinel);
    MCHECK(MPI_Type_free(&a));

    /* Tessera's own nesting bound: a struct of the previous level and a char after a gap
     * cannot be normalized away, so every level adds one */
    MCHECK(MPI_Type_dup(MPI_INT, &a));
    for (int k = 0; k < 70; k++) {
        MPI_Aint lb, ext, displs[2] = {0, 0};
        int blens[2] = {1, 1};
        MCHECK(MPI_Type_get_extent(a, &lb, &ext));
        displs[1] = ext + 1;
        MPI_Datatype members[2] = {a, MPI_CHAR};
        MCHECK(MPI_Type_create_struct(2, blens, displs, members, &b));
        MCHECK(MPI_Type_free(&a));
        a = b;
    }
    int rc = tess_type_from_mpi(a, &t);
    CHECK(rc < 0 && tess_last_error()[0] != '\0' && t == sentinel);
    MCHECK(MPI_Type_free(&a));
}

#if defined(MPICH_VERSION)
/* MPICH still has the MPI-1 constructors removed in MPI 3.0. */
static void test_mpi1(void)
{
    MPI_Datatype a, b, c, types[2] = {MPI_DOUBLE, MPI_CHAR};
    int blens[2] = {2, 3};
    MPI_Aint displs[2] = {-40, 24};
    MCHECK(MPI_Type_hvector(3, 2, -20, MPI_SHORT, &a));
    MCHECK(MPI_Type_hindexed(2, blens, displs, a, &b));
    MCHECK(MPI_Type_struct(2, blens, displs, types, &c));
    desc_len = 0;
    say("MPI-1 hvector/hindexed/struct");
    check_type(&a, 2);
    check_type(&b, 2);
    check_type(&c, 2);
    MCHECK(MPI_Type_free(&a));
    MCHECK(MPI_Type_free(&b));
    MCHECK(MPI_Type_free(&c));
}
#endif

int main(int argc, char **argv)
{
    tess_type *t = NULL;

    CHECK_ERR(tess_type_from_mpi(MPI_INT, &t), TESS_ERR_ARG); /* before MPI_Init */
    MCHECK(MPI_Init(&argc, &argv));
    /* MPI errors come back as codes (the F90 probe) */
    MCHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MCHECK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    rng_state = 20240611ull * 2 + 1;
    test_named();
    test_large();
    test_errors();
#if defined(MPICH_VERSION)
    test_mpi1();
#endif
    printf("test_type_from_mpi_fixed: named and pair types, sizes beyond 2^32, errors OK\n");
    MCHECK(MPI_Finalize());
    CHECK_ERR(tess_type_from_mpi(MPI_INT, &t), TESS_ERR_ARG); /* after MPI_Finalize */
    return 0;
}
