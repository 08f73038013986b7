/*
 * from_mpi_check.c - the oracle of the tess_type_from_mpi tests: random numbers, the
 * description of the type under test, the named types random types are made of, and
 * check_type, which imports an MPI type and compares it with MPI (see from_mpi_check.h).
 */
#include "from_mpi_check.h"

#include <stdarg.h>
#include <string.h>

/* ------------------------------------------------------------------ random */

uint64_t rng_state;

uint64_t rnd(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 2685821657736338717ull;
}

/* Uniform in [lo, hi]. */
int64_t range(int64_t lo, int64_t hi) { return lo + (int64_t)(rnd() % (uint64_t)(hi - lo + 1)); }

/* ------------------------------------------------ description of a random type */

/* The number of the random type being checked, and its constructor calls (failure report). */
int type_no;
char desc[1 << 15];
size_t desc_len;

void say(const char *fmt, ...)
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

void say_array(const char *name, const int64_t *a, int64_t n)
{
    say(" %s=[", name);
    for (int64_t i = 0; i < n; i++)
        say(i ? ",%lld" : "%lld", (long long)a[i]);
    say("]");
}

/* ------------------------------------------------------------ MPI helpers */

int combiner_of(MPI_Datatype t)
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
void tfree(MPI_Datatype *t)
{
    int comb = combiner_of(*t);
    if (comb != MPI_COMBINER_NAMED && comb != MPI_COMBINER_F90_REAL &&
        comb != MPI_COMBINER_F90_INTEGER && comb != MPI_COMBINER_F90_COMPLEX)
        MCHECK(MPI_Type_free(t));
}

/* The named types random types are made of (pair types included). */
named leaves[32];
int nleaves;

/*
 * Whether MPI_Pack writes every byte of the packed stream when dt sits in a noncontiguous
 * layout (a vector of two with a gap). MPICH 4.0 copies long doubles there as values, i.e. only
 * their 10 significant bytes of 16, and leaves the other 6 bytes of the stream unwritten: such
 * types cannot be compared byte for byte and are left out.
 */
bool packs_all_bytes(MPI_Datatype dt)
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

void init_leaves(void)
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

MPI_Datatype leaf(void)
{
    const named *n = &leaves[range(0, nleaves - 1)];
    say("%s", n->name);
    return n->dt;
}

void extents(MPI_Datatype t, MPI_Count *size, MPI_Aint *lb, MPI_Aint *ext, MPI_Aint *tlb,
                    MPI_Aint *text)
{
    MCHECK(MPI_Type_size_x(t, size));
    MCHECK(MPI_Type_get_extent(t, lb, ext));
    MCHECK(MPI_Type_get_true_extent(t, tlb, text));
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
void check_type(MPI_Datatype *dt, int count)
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
