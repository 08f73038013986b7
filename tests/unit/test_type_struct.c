/*
 * test_type_struct.c - struct types follow the C compiler's layout of real C structs: the
 * extent of tess_type_struct is padded to the alignment of its most-aligned predefined member
 * (MPI's rule), so arrays of C structs described member by member round-trip through pack,
 * unpack and file I/O. The oracle is the C compiler itself: offsetof, sizeof, and copies made
 * member by member.
 */
#include "check.h"
#include "test_file_common.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* A struct description: its members' predefined types, counts and offsets. */
typedef struct {
    const char *name;
    size_t size; /* sizeof */
    int n;
    tess_type *types[4];
    int64_t counts[4], offs[4];
} layout;

typedef struct {
    int32_t a;
    double b[2];
    char c[3];
} s_mixed; /* the issue's {int32, 2 double, 3 char}: sizeof 32 */

typedef struct {
    int32_t a;
    char c[3];
    double b[2];
} s_packed; /* the same members in the order that needs no inner gap: sizeof 24 */

typedef struct {
    char c;
    double d;
} s_char_double;

typedef struct {
    double x, y, z;
    int32_t id;
} s_point;

typedef struct {
    int16_t s;
    char c;
} s_short;

typedef struct {
    float f;
    char c[5];
} s_float;

typedef struct {
    int64_t a;
    int8_t b;
    uint16_t c;
} s_int64;

/* A member as make_layout takes it: type, count, offset. */
#define MEMBER(st, m, type)                                                                    \
    type, (int64_t)(sizeof(((st *)0)->m) / (size_t)tess_type_size(type)), offsetof(st, m)

static layout make_layout(const char *name, size_t size, int n, ...)
{
    layout l = {.name = name, .size = size, .n = n};
    va_list ap;
    va_start(ap, n);
    for (int i = 0; i < n; i++) {
        l.types[i] = va_arg(ap, tess_type *);
        l.counts[i] = va_arg(ap, int64_t);
        l.offs[i] = (int64_t)va_arg(ap, size_t);
    }
    va_end(ap);
    return l;
}

static tess_type *build(const layout *l)
{
    tess_type *t;
    CHECK_OK(tess_type_struct(l->n, l->counts, l->offs, l->types, &t));
    return t;
}

/* The packed stream of count structs, member by member (the reference). */
static void ref_pack(const layout *l, const unsigned char *base, int64_t count, unsigned char *out)
{
    for (int64_t i = 0; i < count; i++)
        for (int m = 0; m < l->n; m++) {
            size_t len = (size_t)(l->counts[m] * tess_type_size(l->types[m]));
            memcpy(out, base + (size_t)i * l->size + (size_t)l->offs[m], len);
            out += len;
        }
}

/* Pack, unpack and write/read an array of count structs of layout l filled with random data. */
static void roundtrip(const layout *l, int64_t count)
{
    tess_type *t = build(l);
    if (tess_type_extent(t) != (int64_t)l->size) {
        fprintf(stderr, "%s: extent %lld, sizeof %zu\n", l->name, (long long)tess_type_extent(t),
                l->size);
        CHECK(0);
    }
    CHECK(tess_type_lb(t) == 0);
    size_t bytes = (size_t)count * l->size;
    int64_t packed_len = count * tess_type_size(t);
    unsigned char *src = malloc(bytes), *dst = malloc(bytes), *ref = malloc((size_t)packed_len);
    unsigned char *packed = malloc((size_t)packed_len);
    CHECK(src && dst && ref && packed);
    for (size_t i = 0; i < bytes; i++)
        src[i] = (unsigned char)(rand() & 0xff);
    ref_pack(l, src, count, ref);

    int64_t got;
    CHECK_OK(tess_pack(src, count, t, 0, packed, packed_len, &got));
    CHECK(got == packed_len && memcmp(packed, ref, (size_t)packed_len) == 0);
    /* unpack touches the members only: padding keeps what was there */
    memset(dst, 0xA5, bytes);
    CHECK_OK(tess_unpack(packed, packed_len, dst, count, t, 0, &got));
    CHECK(got == packed_len);
    unsigned char *expect = malloc(bytes);
    CHECK(expect);
    memset(expect, 0xA5, bytes);
    for (int64_t i = 0; i < count; i++)
        for (int m = 0; m < l->n; m++) {
            size_t at = (size_t)i * l->size + (size_t)l->offs[m];
            memcpy(expect + at, src + at, (size_t)(l->counts[m] * tess_type_size(l->types[m])));
        }
    CHECK(memcmp(dst, expect, bytes) == 0);

    /* file I/O: the array as memory type, the file holds the packed members */
    char path[64];
    tf_path(path, sizeof path, "struct");
    tess_file *f;
    CHECK_OK(tess_file_open(path, TESS_RDWR | TESS_CREATE, NULL, &f));
    CHECK_OK(tess_file_write_at(f, 0, src, count, t, &got));
    CHECK(got == packed_len);
    memset(dst, 0xA5, bytes);
    CHECK_OK(tess_file_read_at(f, 0, dst, count, t, &got));
    CHECK(got == packed_len);
    CHECK_OK(tess_file_close(f));
    CHECK(memcmp(dst, expect, bytes) == 0);
    unsigned char *file;
    CHECK(tf_get(path, &file) == packed_len);
    CHECK(memcmp(file, ref, (size_t)packed_len) == 0);
    free(file);
    unlink(path);

    free(expect);
    free(src);
    free(dst);
    free(ref);
    free(packed);
    tess_type_free(t);
}

static void test_c_structs(void)
{
    layout ls[] = {
        make_layout("mixed", sizeof(s_mixed), 3, MEMBER(s_mixed, a, TESS_INT32),
                    MEMBER(s_mixed, b, TESS_DOUBLE), MEMBER(s_mixed, c, TESS_CHAR)),
        make_layout("packed", sizeof(s_packed), 3, MEMBER(s_packed, a, TESS_INT32),
                    MEMBER(s_packed, c, TESS_CHAR), MEMBER(s_packed, b, TESS_DOUBLE)),
        make_layout("char_double", sizeof(s_char_double), 2,
                    MEMBER(s_char_double, c, TESS_CHAR), MEMBER(s_char_double, d, TESS_DOUBLE)),
        make_layout("point", sizeof(s_point), 4, MEMBER(s_point, x, TESS_DOUBLE),
                    MEMBER(s_point, y, TESS_DOUBLE), MEMBER(s_point, z, TESS_DOUBLE),
                    MEMBER(s_point, id, TESS_INT32)),
        make_layout("short", sizeof(s_short), 2, MEMBER(s_short, s, TESS_INT16),
                    MEMBER(s_short, c, TESS_CHAR)),
        make_layout("float", sizeof(s_float), 2, MEMBER(s_float, f, TESS_FLOAT),
                    MEMBER(s_float, c, TESS_CHAR)),
        make_layout("int64", sizeof(s_int64), 3, MEMBER(s_int64, a, TESS_INT64),
                    MEMBER(s_int64, b, TESS_INT8), MEMBER(s_int64, c, TESS_UINT16)),
    };
    CHECK(sizeof(s_mixed) == 32 && sizeof(s_packed) == 24); /* the two extents */
    for (size_t k = 0; k < sizeof ls / sizeof ls[0]; k++)
        for (int64_t count = 1; count <= 1000; count *= 10)
            roundtrip(&ls[k], count);
}

/* A struct whose members are structs and arrays of structs. */
typedef struct {
    s_char_double pair[2];
    int16_t tag;
    s_short tail;
} s_nested;

static void test_nested(void)
{
    layout inner = make_layout("char_double", sizeof(s_char_double), 2,
                               MEMBER(s_char_double, c, TESS_CHAR),
                               MEMBER(s_char_double, d, TESS_DOUBLE));
    layout shrt = make_layout("short", sizeof(s_short), 2, MEMBER(s_short, s, TESS_INT16),
                              MEMBER(s_short, c, TESS_CHAR));
    tess_type *ti = build(&inner), *ts = build(&shrt), *t;
    tess_type *types[3] = {ti, TESS_INT16, ts};
    int64_t counts[3] = {2, 1, 1};
    int64_t offs[3] = {offsetof(s_nested, pair), offsetof(s_nested, tag), offsetof(s_nested, tail)};
    CHECK_OK(tess_type_struct(3, counts, offs, types, &t));
    CHECK(tess_type_extent(t) == (int64_t)sizeof(s_nested));

    enum { N = 57 };
    s_nested src[N], dst[N];
    memset(src, 0, sizeof src);
    memset(dst, 0, sizeof dst);
    for (int i = 0; i < N; i++) {
        src[i].pair[0] = (s_char_double){(char)i, i * 0.5};
        src[i].pair[1] = (s_char_double){(char)(i + 1), i * 0.25};
        src[i].tag = (int16_t)(i * 3);
        src[i].tail = (s_short){(int16_t)(i * 7), (char)(i * 11)};
    }
    int64_t size = tess_type_size(t), got;
    CHECK(size == 2 * 9 + 2 + 3);
    unsigned char *packed = malloc((size_t)(N * size));
    CHECK(packed);
    CHECK_OK(tess_pack(src, N, t, 0, packed, N * size, &got));
    CHECK(got == N * size);
    CHECK_OK(tess_unpack(packed, N * size, dst, N, t, 0, &got));
    for (int i = 0; i < N; i++) {
        CHECK(dst[i].pair[0].c == src[i].pair[0].c && dst[i].pair[0].d == src[i].pair[0].d);
        CHECK(dst[i].pair[1].c == src[i].pair[1].c && dst[i].pair[1].d == src[i].pair[1].d);
        CHECK(dst[i].tag == src[i].tag);
        CHECK(dst[i].tail.s == src[i].tail.s && dst[i].tail.c == src[i].tail.c);
    }
    free(packed);
    tess_type_free(t);
    tess_type_free(ti);
    tess_type_free(ts);
}

/*
 * The rule itself: the cases, members without data align nothing, other constructors
 * are never padded (MPICH does not; Open MPI pads hvector and hindexed), a resized member
 * keeps its type's alignment, and tess_type_resized overrides the padding.
 */
static void test_rule(void)
{
    tess_type *t, *u, *v;
    int64_t one2[2] = {1, 1}, d16[2] = {0, 16};
    tess_type *dd[2] = {TESS_DOUBLE, TESS_DOUBLE};
    CHECK_OK(tess_type_struct(2, one2, d16, dd, &t));
    CHECK(tess_type_extent(t) == 24);
    tess_type_free(t);
    int64_t d12[2] = {0, 12};
    CHECK_OK(tess_type_struct(2, one2, d12, dd, &t)); /* 20 rounded up to 24 */
    CHECK(tess_type_extent(t) == 24);
    tess_type_free(t);

    /* {int32 @0, 2 double @4, 3 char @20}: 23 bytes, extent 24 */
    int64_t bl3[3] = {1, 2, 3}, d3[3] = {0, 4, 20};
    tess_type *mix[3] = {TESS_INT32, TESS_DOUBLE, TESS_CHAR};
    CHECK_OK(tess_type_struct(3, bl3, d3, mix, &t));
    CHECK(tess_type_extent(t) == 24 && tess_type_size(t) == 23);
    tess_type_free(t);

    /* a zero-length double and an empty type align nothing */
    int64_t z[2] = {3, 0}, d8[2] = {0, 8};
    tess_type *cd[2] = {TESS_CHAR, TESS_DOUBLE};
    CHECK_OK(tess_type_struct(2, z, d8, cd, &t));
    CHECK(tess_type_extent(t) == 3);
    tess_type_free(t);
    CHECK_OK(tess_type_contiguous(0, TESS_DOUBLE, &u));
    tess_type *ce[2] = {TESS_CHAR, u};
    int64_t d3b[2] = {0, 3};
    CHECK_OK(tess_type_struct(2, one2, d3b, ce, &t));
    CHECK(tess_type_extent(t) == 3);
    tess_type_free(t);
    tess_type_free(u);

    /* negative displacements: the span [lb, ub) is padded, lb stays */
    int64_t dn[2] = {0, -4};
    tess_type *dc[2] = {TESS_DOUBLE, TESS_CHAR};
    CHECK_OK(tess_type_struct(2, one2, dn, dc, &t));
    CHECK(tess_type_lb(t) == -4 && tess_type_extent(t) == 16);
    tess_type_free(t);

    /* no padding for the other constructors */
    CHECK_OK(tess_type_hvector(2, 1, 12, TESS_DOUBLE, &t));
    CHECK(tess_type_extent(t) == 20);
    tess_type_free(t);
    CHECK_OK(tess_type_hindexed(2, one2, d12, TESS_DOUBLE, &t));
    CHECK(tess_type_extent(t) == 20);
    tess_type_free(t);

    /* a struct of a derived member (a vector of doubles, extent 24) and a char after it */
    CHECK_OK(tess_type_vector(2, 1, 2, TESS_DOUBLE, &v));
    tess_type *vc[2] = {v, TESS_CHAR};
    int64_t d24[2] = {0, 24};
    CHECK_OK(tess_type_struct(2, one2, d24, vc, &t));
    CHECK(tess_type_extent(t) == 32);
    tess_type_free(t);
    /* a resized member keeps its old type's alignment (MPICH); the struct is still padded */
    CHECK_OK(tess_type_resized(TESS_DOUBLE, 0, 12, &u));
    tess_type *rc2[2] = {u, TESS_CHAR};
    CHECK_OK(tess_type_struct(2, one2, d12, rc2, &t));
    CHECK(tess_type_extent(t) == 16);
    /* and tess_type_resized sets any extent on the padded struct */
    tess_type *w;
    CHECK_OK(tess_type_resized(t, 0, 13, &w));
    CHECK(tess_type_extent(w) == 13);
    tess_type_free(w);
    tess_type_free(t);
    tess_type_free(u);
    tess_type_free(v);

    /* a padded struct survives the wire form, alignment included */
    CHECK_OK(tess_type_struct(2, one2, d8, cd, &t)); /* char @0, double @8 -> 16 */
    size_t len;
    CHECK_OK(tess_type_encode(t, NULL, 0, &len));
    unsigned char *buf = malloc(len);
    CHECK(buf);
    CHECK_OK(tess_type_encode(t, buf, len, &len));
    CHECK_OK(tess_type_decode(buf, len, &u));
    CHECK(tess_type_extent(u) == 16);
    /* char @0 and the decoded struct @1: padded for the struct's doubles, 1 + 16 -> 24 */
    tess_type *cu[2] = {TESS_CHAR, u}, *ct[2] = {TESS_CHAR, t};
    int64_t d1[2] = {0, 1};
    CHECK_OK(tess_type_struct(2, one2, d1, cu, &v));
    CHECK_OK(tess_type_struct(2, one2, d1, ct, &w));
    CHECK(tess_type_extent(v) == 24 && tess_type_extent(w) == 24);
    tess_type_free(v);
    tess_type_free(w);
    free(buf);
    tess_type_free(u);
    tess_type_free(t);
}

int main(void)
{
    srand(7);
    test_rule();
    test_c_structs();
    test_nested();
    printf("test_type_struct: C struct layouts, pack/unpack and file round trips OK\n");
    return 0;
}
