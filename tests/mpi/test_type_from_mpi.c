/*
 * test_type_from_mpi.c - tess_type_from_mpi checked against the MPI library itself.
 *
 * Random nested MPI datatypes (every combiner, up to 4 levels, negative displacements and
 * strides, zero block lengths, resized types, structs of mixed types with MPI's alignment
 * padding, subarrays, darrays, the large-count constructors when the MPI library has them) are
 * imported; the import must have MPI's size, lb, extent, true lb and true extent, and must
 * pack a buffer of varied byte values exactly as MPI_Pack does (whole and in two pieces), and
 * unpack exactly as MPI_Unpack does. Then: every named type (and the kind it maps to), the pair
 * types, sizes beyond 2^32, and the error cases.
 *
 * Usage: test_type_from_mpi [ntypes [seed]]   (run with 1 process)
 */
#include "check.h"
#include "tessera_mpi.h"
#include "type/type.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

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

/* ------------------------------------------------------------------ random */

static uint64_t rng_state;

static uint64_t rnd(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 2685821657736338717ull;
}

/* Uniform in [lo, hi]. */
static int64_t range(int64_t lo, int64_t hi) { return lo + (int64_t)(rnd() % (uint64_t)(hi - lo + 1)); }

/* ------------------------------------------------ description of a random type */

/* The number of the random type being checked, and its constructor calls (failure report). */
static int type_no;
static char desc[1 << 15];
static size_t desc_len;

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
    va_list ap;
    if (desc_len >= sizeof desc - 1)
        return;
    va_start(ap, fmt);
    int n = vsnprintf(desc + desc_len, sizeof desc - desc_len, fmt, ap);
    va_end(ap);
    desc_len += n > 0 ? (size_t)n : 0;
    if (desc_len > sizeof desc - 1)
        desc_len = sizeof desc - 1;
}

static void say_array(const char *name, const int64_t *a, int64_t n)
{
    say(" %s=[", name);
    for (int64_t i = 0; i < n; i++)
        say(i ? ",%lld" : "%lld", (long long)a[i]);
    say("]");
}

/* ------------------------------------------------------------ MPI helpers */

static int combiner_of(MPI_Datatype t)
{
    int comb;
#if MPI_VERSION >= 4
    MPI_Count ni, na, nc, nd;
    MCHECK(MPI_Type_get_envelope_c(t, &ni, &na, &nc, &nd, &comb));
#else
    int ni, na, nd;
    MCHECK(MPI_Type_get_envelope(t, &ni, &na, &nd, &comb));
#endif
    return comb;
}

/* Free a type if it is derived (predefined ones must not be freed). */
static void tfree(MPI_Datatype *t)
{
    int comb = combiner_of(*t);
    if (comb != MPI_COMBINER_NAMED && comb != MPI_COMBINER_F90_REAL &&
        comb != MPI_COMBINER_F90_INTEGER && comb != MPI_COMBINER_F90_COMPLEX)
        MCHECK(MPI_Type_free(t));
}

typedef struct {
    MPI_Datatype dt;
    const char *name;
} named;

/* The named types random types are made of (pair types included). */
static named leaves[32];
static int nleaves;

/*
 * Whether MPI_Pack writes every byte of the packed stream when dt sits in a noncontiguous
 * layout (a vector of two with a gap). MPICH 4.0 copies long doubles there as values, i.e. only
 * their 10 significant bytes of 16, and leaves the other 6 bytes of the stream unwritten: such
 * types cannot be compared byte for byte and are left out.
 */
static bool packs_all_bytes(MPI_Datatype dt)
{
    MPI_Aint lb, ext, tlb, text;
    MPI_Datatype v;
    int size, pos[2] = {0, 0};
    MCHECK(MPI_Type_get_extent(dt, &lb, &ext));
    MCHECK(MPI_Type_get_true_extent(dt, &tlb, &text));
    MCHECK(MPI_Type_size(dt, &size));
    unsigned char src[4 * 64], out[2][2 * 64];
    if (lb != 0 || tlb != 0 || text > ext || ext > 64)
        return true; /* named types only: all have lb 0 and fit */
    for (int i = 0; i < 4 * 64; i++)
        src[i] = (unsigned char)(i + 1);
    MCHECK(MPI_Type_vector(2, 1, 2, dt, &v));
    MCHECK(MPI_Type_commit(&v));
    for (int k = 0; k < 2; k++) {
        memset(out[k], k ? 0xff : 0, sizeof out[k]);
        MCHECK(MPI_Pack(src, 1, v, out[k], (int)sizeof out[k], &pos[k], MPI_COMM_SELF));
    }
    MCHECK(MPI_Type_free(&v));
    return pos[0] == 2 * size && pos[1] == 2 * size &&
           memcmp(out[0], out[1], (size_t)(2 * size)) == 0;
}

static void init_leaves(void)
{
    const named all[] = {
        {MPI_BYTE, "BYTE"}, {MPI_CHAR, "CHAR"}, {MPI_SHORT, "SHORT"}, {MPI_INT, "INT"},
        {MPI_UNSIGNED, "UNSIGNED"}, {MPI_LONG, "LONG"}, {MPI_FLOAT, "FLOAT"},
        {MPI_DOUBLE, "DOUBLE"}, {MPI_LONG_DOUBLE, "LONG_DOUBLE"},
        {MPI_C_DOUBLE_COMPLEX, "C_DOUBLE_COMPLEX"}, {MPI_C_BOOL, "C_BOOL"},
        {MPI_INT64_T, "INT64_T"}, {MPI_UINT16_T, "UINT16_T"}, {MPI_PACKED, "PACKED"},
        {MPI_AINT, "AINT"}, {MPI_DOUBLE_INT, "DOUBLE_INT"}, {MPI_SHORT_INT, "SHORT_INT"},
        {MPI_FLOAT_INT, "FLOAT_INT"}, {MPI_LONG_INT, "LONG_INT"}, {MPI_2INT, "2INT"},
        {MPI_LONG_DOUBLE_INT, "LONG_DOUBLE_INT"}, {MPI_INTEGER, "INTEGER"},
        {MPI_DOUBLE_PRECISION, "DOUBLE_PRECISION"},
    };
    for (size_t k = 0; k < sizeof all / sizeof all[0]; k++) {
        int size = 0;
        /* a Fortran type of an MPI built without Fortran may be null or empty */
        if (all[k].dt == MPI_DATATYPE_NULL || MPI_Type_size(all[k].dt, &size) != MPI_SUCCESS ||
            size == 0)
            continue;
        if (!packs_all_bytes(all[k].dt)) {
            printf("note: MPI_Pack skips padding bytes of MPI_%s: left out\n", all[k].name);
            continue;
        }
        leaves[nleaves++] = all[k];
    }
    CHECK(nleaves > 0);
}

static MPI_Datatype leaf(void)
{
    const named *n = &leaves[range(0, nleaves - 1)];
    say("%s", n->name);
    return n->dt;
}

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

static void extents(MPI_Datatype t, MPI_Count *size, MPI_Aint *lb, MPI_Aint *ext, MPI_Aint *tlb,
                    MPI_Aint *text)
{
    MCHECK(MPI_Type_size_x(t, size));
    MCHECK(MPI_Type_get_extent(t, lb, ext));
    MCHECK(MPI_Type_get_true_extent(t, tlb, text));
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

/* ------------------------------------------------------------------ checks */

static void fail(const char *what, const tess_type *t)
{
    static char text[1 << 16];
    text[0] = '\0';
    if (t)
        tess_type_describe(t, text, sizeof text);
    fprintf(stderr, "type %d: %s\nMPI: %.*s\nTessera:\n%s\n", type_no, what, (int)desc_len, desc,
            text);
    exit(1);
}

/* Byte i of a source buffer: varied, so that a misplaced byte shows. */
static unsigned char pattern(int64_t i, unsigned salt)
{
    uint64_t x = (uint64_t)i * 0x9E3779B97F4A7C15ull + salt;
    return (unsigned char)(x >> 56 ^ x >> 29);
}

/* The first buffer offset (from the origin at byte -lo) holding value v, for failure reports. */
static int64_t origin_of(const unsigned char *src, int64_t span, int64_t lo, unsigned char v)
{
    for (int64_t i = 0; i < span; i++)
        if (src[i] == v)
            return i + lo;
    return INT64_MIN;
}

/* Report the first difference between two byte strings, if any. */
static void compare(const char *what, const unsigned char *got, const unsigned char *want,
                    int64_t n, const unsigned char *src, int64_t span, int64_t lo,
                    const tess_type *t)
{
    int64_t k = 0;
    while (k < n && got[k] == want[k])
        k++;
    if (k == n)
        return;
    char msg[400];
    snprintf(msg, sizeof msg,
             "%s: first difference at byte %lld of %lld: %d, MPI %d (bytes of the source at "
             "offsets %lld and %lld hold these values)",
             what, (long long)k, (long long)n, got[k], want[k],
             (long long)origin_of(src, span, lo, got[k]),
             (long long)origin_of(src, span, lo, want[k]));
    fail(msg, t);
}

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

/*
 * Import dt and check it against MPI: size, lb and extent as MPI reports them; true lb and
 * extent as MPI_Unpack shows them (the bytes it writes); pack and unpack of `count` instances
 * as MPI_Pack / MPI_Unpack do them. dt is committed here (MPI_Pack needs that); the import
 * happens before, on the uncommitted type.
 *
 * Two library bugs shape the oracle. MPICH 4.0's true extent covers blocks of empty types
 * (struct {2 x byte at 7, 3 x empty at -21} reports true lb -21, not 7), so the data bytes are
 * found by unpacking instead. Open MPI 4.1 packs count > 1 instances of such a type as if its
 * extent were its size (while MPI_Type_get_extent reports the padded one), so count instances
 * are packed as one instance of MPI_Type_contiguous(count, dt), which by definition has the
 * same typemap.
 */
static void check_type(MPI_Datatype *dt, int count)
{
    tess_type *t = NULL;
    MPI_Datatype whole = *dt;
    MPI_Count size;
    MPI_Aint lb, ext, tlb, text;
    int rc = tess_type_from_mpi(*dt, &t);
    if (rc) {
        char msg[600];
        snprintf(msg, sizeof msg, "tess_type_from_mpi failed: %s: %s", tess_strerror(rc),
                 tess_last_error());
        fail(msg, NULL);
    }
    MCHECK(MPI_Type_commit(dt));
    extents(*dt, &size, &lb, &ext, &tlb, &text);
    if (tess_type_size(t) != size || tess_type_lb(t) != lb || tess_type_extent(t) != ext) {
        char msg[300];
        snprintf(msg, sizeof msg, "size/lb/extent %lld/%lld/%lld, MPI %lld/%lld/%lld",
                 (long long)tess_type_size(t), (long long)tess_type_lb(t),
                 (long long)tess_type_extent(t), (long long)size, (long long)lb, (long long)ext);
        fail(msg, t);
    }
    if (size == 0) {
        tess_type_free(t);
        return;
    }
    if (count > 1) {
        MCHECK(MPI_Type_contiguous(count, *dt, &whole));
        MCHECK(MPI_Type_commit(&whole));
    }

    /* a buffer over the data of count instances by MPI's and by Tessera's true bounds, and
       over byte 0 (the origin): src + (-lo) is the origin, inside the allocation */
    int64_t total = (int64_t)count * size, rep = (int64_t)(count - 1) * ext;
    int64_t lo = min64(0, min64(tlb, tess_type_true_lb(t)));
    int64_t hi = max64(0, max64(tlb + text, tess_type_true_lb(t) + tess_type_true_extent(t)) + rep);
    int64_t span = hi - lo;
    unsigned char *src = malloc((size_t)span), *d1 = malloc((size_t)span),
                  *d2 = malloc((size_t)span), *p1 = malloc((size_t)total),
                  *p2 = malloc((size_t)total);
    CHECK(src && d1 && d2 && p1 && p2);

    /* the data bytes of one instance: where MPI_Unpack writes */
    int pack_size, pos = 0;
    MCHECK(MPI_Pack_size(1, whole, MPI_COMM_SELF, &pack_size));
    CHECK(pack_size >= total);
    unsigned char *mp = malloc((size_t)pack_size);
    CHECK(mp);
    memset(mp, 0xff, (size_t)pack_size);
    memset(d1, 0, (size_t)span);
    MCHECK(MPI_Unpack(mp, pack_size, &pos, d1 - lo, 1, *dt, MPI_COMM_SELF));
    int64_t first = 0, last = span - 1;
    while (first < span && d1[first] == 0)
        first++;
    while (last >= 0 && d1[last] == 0)
        last--;
    if (first + lo != tess_type_true_lb(t) || last + 1 - first != tess_type_true_extent(t)) {
        char msg[300];
        snprintf(msg, sizeof msg, "true lb/extent %lld/%lld, MPI_Unpack writes %lld..%lld",
                 (long long)tess_type_true_lb(t), (long long)tess_type_true_extent(t),
                 (long long)(first + lo), (long long)(last + 1 + lo));
        fail(msg, t);
    }

    for (int64_t i = 0; i < span; i++)
        src[i] = pattern(i, (unsigned)type_no);
    pos = 0;
    MCHECK(MPI_Pack(src - lo, 1, whole, mp, pack_size, &pos, MPI_COMM_SELF));
    if (pos != total)
        fail("MPI_Pack packed an unexpected number of bytes", t);

    int64_t done = -1, done2 = -1, cut = range(0, total);
    CHECK_OK(tess_pack(src - lo, count, t, 0, p1, total, &done));
    CHECK(done == total);
    compare("tess_pack vs MPI_Pack", p1, mp, total, src, span, lo, t);
    memset(p2, 0, (size_t)total);
    CHECK_OK(tess_pack(src - lo, count, t, 0, p2, cut, &done));
    CHECK_OK(tess_pack(src - lo, count, t, cut, p2 + cut, total - cut, &done2));
    CHECK(done == cut && done2 == total - cut);
    compare("tess_pack in two pieces vs MPI_Pack", p2, mp, total, src, span, lo, t);

    /* Unpacking the packed stream of the same buffer: bytes that land on one address all
       carry that address's value, so the result does not depend on the order of overlapping
       writes, and the unpack is well defined even for overlapping types. */
    for (int64_t i = 0; i < span; i++)
        d1[i] = d2[i] = pattern(i, ~(unsigned)type_no);
    pos = 0;
    MCHECK(MPI_Unpack(mp, pack_size, &pos, d1 - lo, 1, whole, MPI_COMM_SELF));
    CHECK_OK(tess_unpack(mp, total, d2 - lo, count, t, 0, &done));
    CHECK(done == total);
    compare("tess_unpack vs MPI_Unpack", d2, d1, span, src, span, lo, t);
    for (int64_t i = 0; i < span; i++)
        d2[i] = pattern(i, ~(unsigned)type_no);
    CHECK_OK(tess_unpack(mp, cut, d2 - lo, count, t, 0, &done));
    CHECK_OK(tess_unpack(mp + cut, total - cut, d2 - lo, count, t, cut, &done2));
    CHECK(done == cut && done2 == total - cut);
    compare("tess_unpack in two pieces vs MPI_Unpack", d2, d1, span, src, span, lo, t);

    if (whole != *dt)
        MCHECK(MPI_Type_free(&whole));
    free(src);
    free(d1);
    free(d2);
    free(p1);
    free(p2);
    free(mp);
    tess_type_free(t);
}

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

    test_named();
    test_large();
    test_errors();
#if defined(MPICH_VERSION)
    test_mpi1();
#endif
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
