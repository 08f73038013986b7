/*
 * import.c - tess_type_from_mpi: rebuild an MPI datatype as a Tessera type.
 *
 * An MPI type is decoded level by level with MPI_Type_get_envelope / MPI_Type_get_contents,
 * which return the arguments of the constructor call that made it: the old types are imported
 * first (recursively, at most MAX_NESTING levels), then the Tessera constructor with the same
 * semantics is called with the same arguments. Named types are mapped by kind and size.
 *
 * With an MPI 4 library the large-count calls (MPI_Type_get_envelope_c, _contents_c) are used
 * for every type: a type made by a large-count constructor (MPI_Type_vector_c, ...) cannot be
 * described by the classic calls (MPICH 4.0 then returns garbage rather than an error), while a
 * type made by a classic constructor reports no large counts and returns its arguments in the
 * int and address arrays as before. Which array an argument comes from is therefore decided per
 * type: see argkind.
 *
 * Every level is checked against MPI after it is built: its size must equal MPI_Type_size_x, and
 * it is given MPI's lb and extent with tess_type_resized where they differ. They differ where
 * the library pads differently (Open MPI pads hvector and hindexed, MPICH leaves a struct of
 * one member type unpadded) and for the pair types;
 * fixing every level (not only the top) keeps replication exact, since a parent places copies of
 * a child extent by extent. It also makes the result follow the MPI library's own rules for
 * bounds where libraries differ: Open MPI keeps MPI-1's "sticky" lb/ub markers (a struct holding
 * a resized type takes its bounds from the markers alone), MPICH does not.
 */
#include "tessera_group.h"
#include "tessera_mpi.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

_Static_assert(sizeof(MPI_Aint) <= sizeof(int64_t), "MPI_Aint is wider than int64_t");
_Static_assert(sizeof(MPI_Count) <= sizeof(int64_t), "MPI_Count is wider than int64_t");

/*
 * MPI nesting levels decoded before giving up; bounds the recursion (and so the C stack).
 * Tessera itself allows TESSI_MAX_DEPTH levels, but MPI's dup and resized levels, and levels
 * that normalization fuses, add none, so the MPI bound is looser.
 */
#define MAX_NESTING 128

/* MPI 4 has the large-count (MPI_Count) forms of the constructors and of the decoding calls. */
#if MPI_VERSION >= 4
#define HAVE_LARGE_COUNT 1
#else
#define HAVE_LARGE_COUNT 0
#endif

/*
 * The combiners of the MPI-1 constructors MPI_Type_hvector, MPI_Type_hindexed and
 * MPI_Type_struct, removed in MPI 3.0. MPICH still defines them (its C MPI_Type_hvector reports
 * MPI_COMBINER_HVECTOR; only the Fortran bindings make the _INTEGER ones); Open MPI defines them
 * only when built with --enable-mpi1-compatibility. Their contents layout is that of the MPI-2
 * combiners.
 */
#if defined(MPICH_VERSION) || (defined(OPEN_MPI) && OMPI_ENABLE_MPI1_COMPAT)
#define HAVE_MPI1_COMBINERS 1
#else
#define HAVE_MPI1_COMBINERS 0
#endif

static const char fn[] = "tess_type_from_mpi";

/* Record the failure of an MPI call, with MPI's error text, as TESS_ERR_ARG (the calls made
   here fail only on an invalid datatype handle). */
static int mpi_error(int rc, const char *call)
{
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(rc, text, &len) != MPI_SUCCESS)
        len = 0;
    text[len < MPI_MAX_ERROR_STRING ? len : MPI_MAX_ERROR_STRING - 1] = '\0';
    return tess_error_set(TESS_ERR_ARG, "%s: %s failed (MPI error %d: %s)", fn, call, rc, text);
}

/* The combiner with the MPI-1 forms mapped to their MPI-2 equivalents. */
static int base_combiner(int combiner)
{
#if HAVE_MPI1_COMBINERS
    if (combiner == MPI_COMBINER_HVECTOR_INTEGER)
        return MPI_COMBINER_HVECTOR;
    if (combiner == MPI_COMBINER_HINDEXED_INTEGER)
        return MPI_COMBINER_HINDEXED;
    if (combiner == MPI_COMBINER_STRUCT_INTEGER)
        return MPI_COMBINER_STRUCT;
#endif
    return combiner;
}

static const char *combiner_name(int combiner)
{
    switch (base_combiner(combiner)) {
    case MPI_COMBINER_NAMED: return "MPI_COMBINER_NAMED";
    case MPI_COMBINER_DUP: return "MPI_COMBINER_DUP";
    case MPI_COMBINER_CONTIGUOUS: return "MPI_COMBINER_CONTIGUOUS";
    case MPI_COMBINER_VECTOR: return "MPI_COMBINER_VECTOR";
    case MPI_COMBINER_HVECTOR: return "MPI_COMBINER_HVECTOR";
    case MPI_COMBINER_INDEXED: return "MPI_COMBINER_INDEXED";
    case MPI_COMBINER_HINDEXED: return "MPI_COMBINER_HINDEXED";
    case MPI_COMBINER_INDEXED_BLOCK: return "MPI_COMBINER_INDEXED_BLOCK";
    case MPI_COMBINER_HINDEXED_BLOCK: return "MPI_COMBINER_HINDEXED_BLOCK";
    case MPI_COMBINER_STRUCT: return "MPI_COMBINER_STRUCT";
    case MPI_COMBINER_SUBARRAY: return "MPI_COMBINER_SUBARRAY";
    case MPI_COMBINER_DARRAY: return "MPI_COMBINER_DARRAY";
    case MPI_COMBINER_F90_REAL: return "MPI_COMBINER_F90_REAL";
    case MPI_COMBINER_F90_COMPLEX: return "MPI_COMBINER_F90_COMPLEX";
    case MPI_COMBINER_F90_INTEGER: return "MPI_COMBINER_F90_INTEGER";
    case MPI_COMBINER_RESIZED: return "MPI_COMBINER_RESIZED";
    default: return "an unknown combiner";
    }
}

/* ------------------------------------------------------------ contents */

/*
 * The arguments of the constructor call that made one MPI type, as MPI_Type_get_contents
 * returns them, and how many of each array the decoder has consumed. `types` holds ntypes
 * handles that this decoder owns (the derived ones must be freed, see contents_release).
 */
typedef struct {
    int combiner;
    int64_t ni, na, nc, nd;
    int *ints;
    MPI_Aint *addrs;
    MPI_Count *counts;
    MPI_Datatype *types;
    int64_t ntypes;
    int64_t ki, ka, kc;
} contents;

/*
 * Where a constructor argument comes back. A type made by a large-count constructor has every
 * count, displacement and bound in the large-count array (and nothing else there is); a classic
 * one has counts in the int array and byte displacements in the address array.
 *  ARG_INT:   an int in both forms (ndims, order, size, rank, distribs, dargs, psizes)
 *  ARG_COUNT: int, or MPI_Count (counts, block lengths, displacements in old extents, sizes)
 *  ARG_ADDR:  MPI_Aint, or MPI_Count (byte displacements and strides, lb, extent)
 */
typedef enum { ARG_INT, ARG_COUNT, ARG_ADDR } argkind;

/* Which array kind k comes from: 'i' ints, 'a' addresses, 'c' large counts. */
static char arg_source(const contents *c, argkind k)
{
    if (k == ARG_INT)
        return 'i';
    if (c->nc > 0)
        return 'c';
    return k == ARG_COUNT ? 'i' : 'a';
}

static int64_t arg_avail(const contents *c, argkind k)
{
    switch (arg_source(c, k)) {
    case 'i': return c->ni - c->ki;
    case 'a': return c->na - c->ka;
    default: return c->nc - c->kc;
    }
}

static int layout_error(const contents *c)
{
    return tess_error_set(TESS_ERR_INTERNAL,
                          "%s: MPI_Type_get_contents returned %lld integers, %lld addresses, %lld "
                          "large counts and %lld datatypes, which is not the layout of %s",
                          fn, (long long)c->ni, (long long)c->na, (long long)c->nc,
                          (long long)c->nd, combiner_name(c->combiner));
}

/* Consume n arguments of kind k into dst (TESS_ERR_INTERNAL if MPI returned fewer). */
static int take(contents *c, argkind k, int64_t n, int64_t *dst)
{
    if (n < 0 || n > arg_avail(c, k))
        return layout_error(c);
    for (int64_t j = 0; j < n; j++) {
        switch (arg_source(c, k)) {
        case 'i': dst[j] = c->ints[c->ki++]; break;
        case 'a': dst[j] = (int64_t)c->addrs[c->ka++]; break;
        default: dst[j] = (int64_t)c->counts[c->kc++]; break;
        }
    }
    return 0;
}

/*
 * Consume n arguments of kind k into a new array *out (free it with free(); NULL on failure).
 * n is checked against what MPI returned before anything is allocated, so a corrupt count
 * cannot cause a huge allocation.
 */
static int take_array(contents *c, argkind k, int64_t n, int64_t **out)
{
    *out = NULL;
    if (n < 0 || n > arg_avail(c, k))
        return layout_error(c);
    *out = malloc(sizeof(int64_t) * (size_t)(n > 0 ? n : 1));
    if (!*out)
        return tess_error_set(TESS_ERR_NOMEM, "%s: no memory for %lld arguments", fn, (long long)n);
    return take(c, k, n, *out);
}

/* All arguments consumed, and the number of datatypes is nd: else the layout is not known. */
static int take_done(const contents *c, int64_t nd)
{
    if (c->ki != c->ni || c->ka != c->na || c->kc != c->nc || c->nd != nd)
        return layout_error(c);
    return 0;
}

/*
 * The combiner and argument counts of dt. Returns MPI's error code and records no message, so
 * that contents_release can use it without overwriting the message of an earlier failure.
 */
#if HAVE_LARGE_COUNT
#define ENVELOPE_CALL "MPI_Type_get_envelope_c"
static int envelope(MPI_Datatype dt, contents *c)
{
    MPI_Count ni, na, nc, nd;
    int rc = MPI_Type_get_envelope_c(dt, &ni, &na, &nc, &nd, &c->combiner);
#else
#define ENVELOPE_CALL "MPI_Type_get_envelope"
static int envelope(MPI_Datatype dt, contents *c)
{
    int ni, na, nd, nc = 0;
    int rc = MPI_Type_get_envelope(dt, &ni, &na, &nd, &c->combiner);
#endif
    c->ni = ni;
    c->na = na;
    c->nc = nc;
    c->nd = nd;
    return rc;
}

/* calloc of n elements of size bytes (at least one), NULL when n is too large for size_t. */
static void *alloc_array(int64_t n, size_t size)
{
    if ((uint64_t)n > SIZE_MAX / size)
        return NULL;
    return calloc(n > 0 ? (size_t)n : 1, size);
}

/* Fetch the arguments of a derived type whose envelope is in c. */
static int fetch(MPI_Datatype dt, contents *c)
{
    int rc;
    c->ints = alloc_array(c->ni, sizeof *c->ints);
    c->addrs = alloc_array(c->na, sizeof *c->addrs);
    c->counts = alloc_array(c->nc, sizeof *c->counts);
    c->types = alloc_array(c->nd, sizeof *c->types);
    if (!c->ints || !c->addrs || !c->counts || !c->types)
        return tess_error_set(TESS_ERR_NOMEM, "%s: no memory for the arguments of %s", fn,
                              combiner_name(c->combiner));
#if HAVE_LARGE_COUNT
    rc = MPI_Type_get_contents_c(dt, c->ni, c->na, c->nc, c->nd, c->ints, c->addrs, c->counts,
                                 c->types);
    if (rc != MPI_SUCCESS)
        return mpi_error(rc, "MPI_Type_get_contents_c");
#else
    rc = MPI_Type_get_contents(dt, (int)c->ni, (int)c->na, (int)c->nd, c->ints, c->addrs,
                               c->types);
    if (rc != MPI_SUCCESS)
        return mpi_error(rc, "MPI_Type_get_contents");
#endif
    c->ntypes = c->nd;
    return 0;
}

/*
 * Free what fetch allocated. The datatypes MPI_Type_get_contents returned are new references
 * when derived (one per array entry, duplicates included) and must be freed; predefined ones
 * must not be: the named types and, by the standard, the Fortran 90 parameterized types.
 * Failures here cannot be reported (a result or an earlier error is already decided) and are
 * ignored.
 */
static void contents_release(contents *c)
{
    for (int64_t k = 0; k < c->ntypes; k++) {
        contents e = {0};
        if (envelope(c->types[k], &e) == MPI_SUCCESS && e.combiner != MPI_COMBINER_NAMED &&
            e.combiner != MPI_COMBINER_F90_REAL && e.combiner != MPI_COMBINER_F90_COMPLEX &&
            e.combiner != MPI_COMBINER_F90_INTEGER)
            MPI_Type_free(&c->types[k]);
    }
    free(c->ints);
    free(c->addrs);
    free(c->counts);
    free(c->types);
}

/* ---------------------------------------------------------- named types */

/*
 * The predefined Tessera type of kind cls and size bytes, or NULL if there is none:
 * 'c' character, 'i' signed integer, 'u' unsigned integer, 'f' floating point.
 */
static tess_type *element(char cls, int64_t size)
{
    switch (cls) {
    case 'c': return size == 1 ? TESS_CHAR : NULL;
    case 'i':
        return size == 1 ? TESS_INT8 : size == 2 ? TESS_INT16 : size == 4 ? TESS_INT32
             : size == 8 ? TESS_INT64 : NULL;
    case 'u':
        return size == 1 ? TESS_UINT8 : size == 2 ? TESS_UINT16 : size == 4 ? TESS_UINT32
             : size == 8 ? TESS_UINT64 : NULL;
    case 'f': return size == 4 ? TESS_FLOAT : size == 8 ? TESS_DOUBLE : NULL;
    default: return NULL;
    }
}

/* size bytes with no finer description. */
static int bytes_type(int64_t size, tess_type **out)
{
    if (size == 1) {
        *out = TESS_BYTE;
        return 0;
    }
    return tess_type_contiguous(size, TESS_BYTE, out);
}

/*
 * A scalar of kind cls ('b' bytes, 'z' complex: two reals, or the kinds of element()) and size
 * bytes: the predefined type when there is one, else bytes.
 */
static int scalar_type(char cls, int64_t size, tess_type **out)
{
    tess_type *e = cls == 'z' ? element('f', size / 2) : element(cls, size);
    if (cls == 'z' && e && size % 2 == 0)
        return tess_type_contiguous(2, e, out);
    if (cls != 'z' && e) {
        *out = e;
        return 0;
    }
    return bytes_type(size, out);
}

/* The kind of a named type, or 0 if it is not in the table. */
static char named_kind(MPI_Datatype dt)
{
    /* Not static: MPI handles need not be constant expressions (Open MPI's are addresses). */
    const struct {
        MPI_Datatype dt;
        char cls;
    } map[] = {
        {MPI_CHAR, 'c'}, {MPI_SIGNED_CHAR, 'i'}, {MPI_UNSIGNED_CHAR, 'u'}, {MPI_BYTE, 'b'},
        {MPI_PACKED, 'b'}, {MPI_WCHAR, 'b'}, {MPI_C_BOOL, 'b'},
        {MPI_SHORT, 'i'}, {MPI_INT, 'i'}, {MPI_LONG, 'i'}, {MPI_LONG_LONG_INT, 'i'},
        {MPI_INT8_T, 'i'}, {MPI_INT16_T, 'i'}, {MPI_INT32_T, 'i'}, {MPI_INT64_T, 'i'},
        {MPI_AINT, 'i'}, {MPI_OFFSET, 'i'}, {MPI_COUNT, 'i'},
        {MPI_UNSIGNED_SHORT, 'u'}, {MPI_UNSIGNED, 'u'}, {MPI_UNSIGNED_LONG, 'u'},
        {MPI_UNSIGNED_LONG_LONG, 'u'}, {MPI_UINT8_T, 'u'}, {MPI_UINT16_T, 'u'},
        {MPI_UINT32_T, 'u'}, {MPI_UINT64_T, 'u'},
        {MPI_FLOAT, 'f'}, {MPI_DOUBLE, 'f'}, {MPI_LONG_DOUBLE, 'f'},
        {MPI_C_FLOAT_COMPLEX, 'z'}, {MPI_C_DOUBLE_COMPLEX, 'z'},
        {MPI_C_LONG_DOUBLE_COMPLEX, 'z'},
        {MPI_CHARACTER, 'c'}, {MPI_INTEGER, 'i'}, {MPI_REAL, 'f'},
        {MPI_DOUBLE_PRECISION, 'f'}, {MPI_COMPLEX, 'z'}, {MPI_DOUBLE_COMPLEX, 'z'},
        {MPI_LOGICAL, 'b'},
    };
    for (size_t k = 0; k < sizeof map / sizeof map[0]; k++)
        if (map[k].dt == dt)
            return map[k].cls;
    return 0;
}

/*
 * The pair types of MPI_MINLOC / MPI_MAXLOC: the standard defines each as the C struct
 * { value; int; } (MPI_Type_create_struct with the struct's offsets), so the compiler's layout
 * of that struct is their typemap. The caller then applies MPI's extent (the struct's padding).
 * Returns 1 (and leaves *out alone) if dt is not a pair type.
 */
static int pair_type(MPI_Datatype dt, tess_type **out)
{
    struct float_int { float v; int i; };
    struct double_int { double v; int i; };
    struct long_int { long v; int i; };
    struct short_int { short v; int i; };
    struct int_int { int v; int i; };
    struct long_double_int { long double v; int i; };
    const struct {
        MPI_Datatype dt;
        char cls;
        int64_t vsize, ioff;
    } map[] = {
        {MPI_FLOAT_INT, 'f', sizeof(float), offsetof(struct float_int, i)},
        {MPI_DOUBLE_INT, 'f', sizeof(double), offsetof(struct double_int, i)},
        {MPI_LONG_INT, 'i', sizeof(long), offsetof(struct long_int, i)},
        {MPI_SHORT_INT, 'i', sizeof(short), offsetof(struct short_int, i)},
        {MPI_2INT, 'i', sizeof(int), offsetof(struct int_int, i)},
        {MPI_LONG_DOUBLE_INT, 'f', sizeof(long double), offsetof(struct long_double_int, i)},
    };
    size_t k = 0, n = sizeof map / sizeof map[0];
    while (k < n && map[k].dt != dt)
        k++;
    if (k == n)
        return 1;
    tess_type *value;
    int rc = scalar_type(map[k].cls, map[k].vsize, &value);
    if (rc)
        return rc;
    int64_t blens[2] = {1, 1}, displs[2] = {0, map[k].ioff};
    tess_type *types[2] = {value, element('i', sizeof(int))};
    rc = tess_type_struct(2, blens, displs, types, out);
    tess_type_free(value);
    return rc;
}

/* A named type: by kind and size, a pair type by its typemap, else bytes if it has no holes. */
static int convert_named(MPI_Datatype dt, int64_t size, int64_t lb, int64_t extent,
                         tess_type **out)
{
    char cls = named_kind(dt), name[MPI_MAX_OBJECT_NAME] = "";
    MPI_Aint tlb, textent;
    int rc, len = 0;
    if (cls)
        return scalar_type(cls, size, out);
    rc = pair_type(dt, out);
    if (rc <= 0)
        return rc;
    rc = MPI_Type_get_true_extent(dt, &tlb, &textent);
    if (rc != MPI_SUCCESS)
        return mpi_error(rc, "MPI_Type_get_true_extent");
    if (lb == 0 && extent == size && tlb == 0 && textent == size)
        return bytes_type(size, out);
    if (MPI_Type_get_name(dt, name, &len) != MPI_SUCCESS)
        name[0] = '\0';
    return tess_error_set(TESS_ERR_UNSUPPORTED,
                          "%s: named datatype %s has holes (size %lld, extent %lld) and its "
                          "typemap is not known", fn, name[0] ? name : "(unnamed)",
                          (long long)size, (long long)extent);
}

/* -------------------------------------------------------- derived types */

static int convert(MPI_Datatype dt, int level, tess_type **out);

static int map_order(int64_t order)
{
    return order == MPI_ORDER_C ? TESS_ORDER_C : order == MPI_ORDER_FORTRAN ? TESS_ORDER_FORTRAN
                                                                            : -1;
}

static int map_distrib(int64_t d)
{
    return d == MPI_DISTRIBUTE_BLOCK ? TESS_DISTRIBUTE_BLOCK
         : d == MPI_DISTRIBUTE_CYCLIC ? TESS_DISTRIBUTE_CYCLIC
         : d == MPI_DISTRIBUTE_NONE ? TESS_DISTRIBUTE_NONE : -1;
}

/* count, blocklength, stride: vector (stride in old extents) or hvector (stride in bytes). */
static int build_vector(contents *c, tess_type *old, bool bytes, tess_type **out)
{
    int64_t a[2] = {0, 0}, stride = 0;
    int rc = take(c, ARG_COUNT, 2, a);
    if (!rc)
        rc = take(c, bytes ? ARG_ADDR : ARG_COUNT, 1, &stride);
    if (!rc)
        rc = take_done(c, 1);
    if (rc)
        return rc;
    return bytes ? tess_type_hvector(a[0], a[1], stride, old, out)
                 : tess_type_vector(a[0], a[1], stride, old, out);
}

/* count, blocklengths[count], displacements[count] (in old extents or in bytes). */
static int build_indexed(contents *c, tess_type *old, bool bytes, tess_type **out)
{
    int64_t count = 0, *blens = NULL, *displs = NULL;
    int rc = take(c, ARG_COUNT, 1, &count);
    if (rc)
        goto fail;
    rc = take_array(c, ARG_COUNT, count, &blens);
    if (rc)
        goto fail;
    rc = take_array(c, bytes ? ARG_ADDR : ARG_COUNT, count, &displs);
    if (rc)
        goto fail;
    rc = take_done(c, 1);
    if (rc)
        goto fail;
    rc = bytes ? tess_type_hindexed(count, blens, displs, old, out)
               : tess_type_indexed(count, blens, displs, old, out);
fail:
    free(blens);
    free(displs);
    return rc;
}

/* count, blocklength, displacements[count] (in old extents or in bytes). */
static int build_block(contents *c, tess_type *old, bool bytes, tess_type **out)
{
    int64_t a[2] = {0, 0}, *displs = NULL;
    int rc = take(c, ARG_COUNT, 2, a);
    if (rc)
        goto fail;
    rc = take_array(c, bytes ? ARG_ADDR : ARG_COUNT, a[0], &displs);
    if (rc)
        goto fail;
    rc = take_done(c, 1);
    if (rc)
        goto fail;
    rc = bytes ? tess_type_hblockindexed(a[0], a[1], displs, old, out)
               : tess_type_blockindexed(a[0], a[1], displs, old, out);
fail:
    free(displs);
    return rc;
}

/* count, blocklengths[count], byte displacements[count], types[count]. */
static int build_struct(contents *c, tess_type *const *kids, tess_type **out)
{
    int64_t count = 0, *blens = NULL, *displs = NULL;
    int rc = take(c, ARG_COUNT, 1, &count);
    if (rc)
        goto fail;
    rc = take_array(c, ARG_COUNT, count, &blens);
    if (rc)
        goto fail;
    rc = take_array(c, ARG_ADDR, count, &displs);
    if (rc)
        goto fail;
    rc = take_done(c, count);
    if (rc)
        goto fail;
    rc = tess_type_struct(count, blens, displs, kids, out);
fail:
    free(blens);
    free(displs);
    return rc;
}

/* ndims, sizes[ndims], subsizes[ndims], starts[ndims], order. */
static int build_subarray(contents *c, tess_type *old, tess_type **out)
{
    int64_t ndims = 0, order = 0, *sizes = NULL, *subsizes = NULL, *starts = NULL;
    bool empty = false;
    int rc = take(c, ARG_INT, 1, &ndims);
    if (rc)
        goto fail;
    rc = take_array(c, ARG_COUNT, ndims, &sizes);
    if (!rc)
        rc = take_array(c, ARG_COUNT, ndims, &subsizes);
    if (!rc)
        rc = take_array(c, ARG_COUNT, ndims, &starts);
    if (!rc)
        rc = take(c, ARG_INT, 1, &order);
    if (!rc)
        rc = take_done(c, 1);
    if (rc)
        goto fail;
    /* MPI 4 allows empty subarrays (a subsize of 0), tess_type_subarray does not: such a type
       has no data, and the caller gives it MPI's bounds. ndims came from an int. */
    for (int64_t i = 0; i < ndims; i++)
        empty = empty || subsizes[i] == 0;
    rc = empty ? tess_type_contiguous(0, old, out)
               : tess_type_subarray((int)ndims, sizes, subsizes, starts, map_order(order), old,
                                    out);
fail:
    free(sizes);
    free(subsizes);
    free(starts);
    return rc;
}

/* size, rank, ndims, gsizes[ndims], distribs[ndims], dargs[ndims], psizes[ndims], order. */
static int build_darray(contents *c, tess_type *old, tess_type **out)
{
    int64_t head[3] = {0, 0, 0}, order = 0, *gsizes = NULL, *ints = NULL;
    int *distribs = NULL, *dargs = NULL, *psizes = NULL;
    int rc = take(c, ARG_INT, 3, head);
    if (rc)
        goto fail;
    int64_t ndims = head[2];
    rc = take_array(c, ARG_COUNT, ndims, &gsizes);
    if (!rc && ndims > arg_avail(c, ARG_INT) / 3)
        rc = layout_error(c);
    if (!rc)
        rc = take_array(c, ARG_INT, 3 * ndims, &ints);
    if (!rc)
        rc = take(c, ARG_INT, 1, &order);
    if (!rc)
        rc = take_done(c, 1);
    if (rc)
        goto fail;
    distribs = alloc_array(ndims, sizeof *distribs);
    dargs = alloc_array(ndims, sizeof *dargs);
    psizes = alloc_array(ndims, sizeof *psizes);
    if (!distribs || !dargs || !psizes) {
        rc = tess_error_set(TESS_ERR_NOMEM, "%s: no memory for %lld darray dimensions", fn,
                            (long long)ndims);
        goto fail;
    }
    /* every value here came from an int array, so the conversions are exact */
    for (int64_t i = 0; i < ndims; i++) {
        distribs[i] = map_distrib(ints[i]);
        dargs[i] = ints[ndims + i] == MPI_DISTRIBUTE_DFLT_DARG ? TESS_DISTRIBUTE_DFLT_DARG
                                                               : (int)ints[ndims + i];
        psizes[i] = (int)ints[2 * ndims + i];
    }
    rc = tess_type_darray((int)head[0], (int)head[1], (int)ndims, gsizes, distribs, dargs,
                          psizes, map_order(order), old, out);
fail:
    free(gsizes);
    free(ints);
    free(distribs);
    free(dargs);
    free(psizes);
    return rc;
}

/* lb, extent (bytes). */
static int build_resized(contents *c, tess_type *old, tess_type **out)
{
    int64_t a[2] = {0, 0};
    int rc = take(c, ARG_ADDR, 2, a);
    if (!rc)
        rc = take_done(c, 1);
    if (rc)
        return rc;
    return tess_type_resized(old, a[0], a[1], out);
}

/*
 * A derived type whose arguments are in c: import its old types, then rebuild it. convert
 * passes only the combiners of the switch below.
 */
static int convert_derived(contents *c, int level, tess_type **out)
{
    tess_type **kids = alloc_array(c->nd, sizeof *kids);
    int64_t nkids = 0;
    int rc = 0;
    if (!kids) {
        rc = tess_error_set(TESS_ERR_NOMEM, "%s: no memory for %lld datatypes", fn,
                            (long long)c->nd);
        goto fail;
    }
    for (; nkids < c->nd; nkids++) {
        /* a struct often repeats one type: import it once */
        if (nkids > 0 && c->types[nkids] == c->types[nkids - 1])
            kids[nkids] = tess_type_ref(kids[nkids - 1]);
        else
            rc = convert(c->types[nkids], level + 1, &kids[nkids]);
        if (rc)
            goto fail;
    }
    if (base_combiner(c->combiner) != MPI_COMBINER_STRUCT && c->nd != 1) {
        rc = layout_error(c);
        goto fail;
    }
    switch (base_combiner(c->combiner)) {
    case MPI_COMBINER_DUP:
        rc = take_done(c, 1);
        if (!rc)
            *out = tess_type_ref(kids[0]);
        break;
    case MPI_COMBINER_CONTIGUOUS: {
        int64_t count = 0;
        rc = take(c, ARG_COUNT, 1, &count);
        if (!rc)
            rc = take_done(c, 1);
        if (!rc)
            rc = tess_type_contiguous(count, kids[0], out);
        break;
    }
    case MPI_COMBINER_VECTOR: rc = build_vector(c, kids[0], false, out); break;
    case MPI_COMBINER_HVECTOR: rc = build_vector(c, kids[0], true, out); break;
    case MPI_COMBINER_INDEXED: rc = build_indexed(c, kids[0], false, out); break;
    case MPI_COMBINER_HINDEXED: rc = build_indexed(c, kids[0], true, out); break;
    case MPI_COMBINER_INDEXED_BLOCK: rc = build_block(c, kids[0], false, out); break;
    case MPI_COMBINER_HINDEXED_BLOCK: rc = build_block(c, kids[0], true, out); break;
    case MPI_COMBINER_STRUCT: rc = build_struct(c, kids, out); break;
    case MPI_COMBINER_SUBARRAY: rc = build_subarray(c, kids[0], out); break;
    case MPI_COMBINER_DARRAY: rc = build_darray(c, kids[0], out); break;
    case MPI_COMBINER_RESIZED: rc = build_resized(c, kids[0], out); break;
    }
fail:
    for (int64_t k = 0; k < nkids; k++)
        tess_type_free(kids[k]);
    free(kids);
    return rc;
}

/*
 * Import dt at nesting level `level`, then give the result MPI's lb and extent and check its
 * size against MPI's.
 */
static int convert(MPI_Datatype dt, int level, tess_type **out)
{
    contents c = {0};
    tess_type *t = NULL, *resized = NULL;
    MPI_Aint lb, extent;
    MPI_Count size;
    int rc;
    if (level >= MAX_NESTING) {
        rc = tess_error_set(TESS_ERR_UNSUPPORTED, "%s: MPI datatype nested deeper than %d levels",
                            fn, MAX_NESTING);
        goto fail;
    }
    rc = MPI_Type_get_extent(dt, &lb, &extent);
    if (rc != MPI_SUCCESS) {
        rc = mpi_error(rc, "MPI_Type_get_extent");
        goto fail;
    }
    rc = MPI_Type_size_x(dt, &size);
    if (rc != MPI_SUCCESS) {
        rc = mpi_error(rc, "MPI_Type_size_x");
        goto fail;
    }
    if (extent < 0) {
        rc = tess_error_set(TESS_ERR_UNSUPPORTED,
                            "%s: MPI datatype with negative extent %lld (lb %lld): Tessera types "
                            "have extent >= 0", fn, (long long)extent, (long long)lb);
        goto fail;
    }
    rc = envelope(dt, &c);
    if (rc != MPI_SUCCESS) {
        rc = mpi_error(rc, ENVELOPE_CALL);
        goto fail;
    }
    if (c.ni < 0 || c.na < 0 || c.nc < 0 || c.nd < 0) {
        rc = layout_error(&c);
        goto fail;
    }
    switch (base_combiner(c.combiner)) {
    case MPI_COMBINER_NAMED:
        rc = convert_named(dt, size, lb, extent, &t);
        break;
    case MPI_COMBINER_F90_REAL:
    case MPI_COMBINER_F90_COMPLEX:
    case MPI_COMBINER_F90_INTEGER:
        rc = tess_error_set(TESS_ERR_UNSUPPORTED,
                            "%s: Fortran 90 parameterized datatypes (%s) are not supported", fn,
                            combiner_name(c.combiner));
        break;
    case MPI_COMBINER_DUP:
    case MPI_COMBINER_CONTIGUOUS:
    case MPI_COMBINER_VECTOR:
    case MPI_COMBINER_HVECTOR:
    case MPI_COMBINER_INDEXED:
    case MPI_COMBINER_HINDEXED:
    case MPI_COMBINER_INDEXED_BLOCK:
    case MPI_COMBINER_HINDEXED_BLOCK:
    case MPI_COMBINER_STRUCT:
    case MPI_COMBINER_SUBARRAY:
    case MPI_COMBINER_DARRAY:
    case MPI_COMBINER_RESIZED:
        rc = fetch(dt, &c);
        if (!rc)
            rc = convert_derived(&c, level, &t);
        break;
    default:
        rc = tess_error_set(TESS_ERR_UNSUPPORTED, "%s: unknown MPI combiner %d", fn, c.combiner);
        break;
    }
    if (rc)
        goto fail;
    if (tess_type_size(t) != size) {
        rc = tess_error_set(TESS_ERR_INTERNAL,
                            "%s: the import of a %s type has %lld data bytes, MPI_Type_size_x says "
                            "%lld", fn, combiner_name(c.combiner), (long long)tess_type_size(t),
                            (long long)size);
        goto fail;
    }
    if (tess_type_lb(t) != lb || tess_type_extent(t) != extent) {
        rc = tess_type_resized(t, lb, extent, &resized);
        if (rc)
            goto fail;
        tess_type_free(t);
        t = resized;
    }
    *out = t;
    t = NULL;
fail:
    tess_type_free(t);
    contents_release(&c);
    return rc;
}

int tess_type_from_mpi(MPI_Datatype dt, tess_type **out)
{
    int initialized = 0, finalized = 0;
    if (!out)
        return tess_error_set(TESS_ERR_ARG, "%s: out is NULL", fn);
    if (MPI_Initialized(&initialized) != MPI_SUCCESS || !initialized)
        return tess_error_set(TESS_ERR_ARG, "%s: MPI is not initialized", fn);
    if (MPI_Finalized(&finalized) != MPI_SUCCESS || finalized)
        return tess_error_set(TESS_ERR_ARG, "%s: MPI is finalized", fn);
    if (dt == MPI_DATATYPE_NULL)
        return tess_error_set(TESS_ERR_ARG, "%s: datatype is MPI_DATATYPE_NULL", fn);
    return convert(dt, 0, out);
}
