/*
 * test_pack_mpi.c - the pack kernels against the MPI library's MPI_Pack and MPI_Unpack, on the
 * shapes of `tessera bench types` with random parameters: vectors of doubles, nested vectors,
 * 3-D subarrays, random indexed types, C-like structs of int32, doubles and chars (no resize:
 * MPI pads the extent as Tessera does), and a struct of a vector (the cursor's path).
 *
 * For count instances: tess_pack of the whole stream equals MPI_Pack's output; parts from random
 * data offsets with random lengths equal the same bytes of it; tess_unpack of the whole stream
 * and of the stream in random chunks give the buffer MPI_Unpack gives.
 *
 *   test_pack_mpi [-n rounds] [-s seed]
 */
#include "check.h"

#include <mpi.h>
#include <string.h>
#include <unistd.h>

static uint64_t rng;
static int64_t rnd(int64_t lo, int64_t hi)
{
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return lo + (int64_t)((rng >> 33) % (uint64_t)(hi - lo + 1));
}

#define MOK(call) CHECK((call) == MPI_SUCCESS)

/* The same layout both ways. */
typedef struct {
    const char *name;
    tess_type *t;
    MPI_Datatype m;
} shape;

static void vector_shape(shape *s)
{
    int n = (int)rnd(1, 2000), bl = (int)rnd(1, 64), st = bl + (int)rnd(1, 64);
    s->name = "vector";
    CHECK_OK(tess_type_vector(n, bl, st, TESS_DOUBLE, &s->t));
    MOK(MPI_Type_vector(n, bl, st, MPI_DOUBLE, &s->m));
}

static void nested_shape(shape *s)
{
    int ic = (int)rnd(2, 6), ib = (int)rnd(1, 4), is = ib + (int)rnd(1, 4);
    int m = (int)rnd(1, 500), ob = (int)rnd(1, 3), os = ob + (int)rnd(0, 3);
    tess_type *ti;
    MPI_Datatype mi;
    s->name = "nested vector";
    CHECK_OK(tess_type_vector(ic, ib, is, TESS_DOUBLE, &ti));
    CHECK_OK(tess_type_vector(m, ob, os, ti, &s->t));
    tess_type_free(ti);
    MOK(MPI_Type_vector(ic, ib, is, MPI_DOUBLE, &mi));
    MOK(MPI_Type_vector(m, ob, os, mi, &s->m));
    MOK(MPI_Type_free(&mi));
}

static void subarray_shape(shape *s)
{
    int g[3], sub[3], st[3];
    int64_t g64[3], sub64[3], st64[3];
    for (int d = 0; d < 3; d++) {
        g[d] = (int)rnd(1, 40);
        sub[d] = (int)rnd(1, g[d]);
        st[d] = (int)rnd(0, g[d] - sub[d]);
        g64[d] = g[d], sub64[d] = sub[d], st64[d] = st[d];
    }
    s->name = "subarray";
    CHECK_OK(tess_type_subarray(3, g64, sub64, st64, TESS_ORDER_C, TESS_DOUBLE, &s->t));
    MOK(MPI_Type_create_subarray(3, g, sub, st, MPI_ORDER_C, MPI_DOUBLE, &s->m));
}

static void indexed_shape(shape *s)
{
    enum { MAXB = 3000 };
    static int ibl[MAXB], idp[MAXB];
    static int64_t bl[MAXB], dp[MAXB];
    int n = (int)rnd(1, MAXB), disp = 0;
    for (int b = 0; b < n; b++) {
        bl[b] = ibl[b] = (int)rnd(1, 16);
        dp[b] = idp[b] = disp;
        disp += ibl[b] + (int)rnd(1, 16);
    }
    s->name = "indexed";
    CHECK_OK(tess_type_indexed(n, bl, dp, TESS_DOUBLE, &s->t));
    MOK(MPI_Type_indexed(n, ibl, idp, MPI_DOUBLE, &s->m));
}

/* {int32, k doubles, c chars} at the C struct's offsets, as a compiler lays them out */
static void struct_shape(shape *s)
{
    int64_t k = rnd(1, 3), c = rnd(1, 7), dbl = (4 + _Alignof(double) - 1) / _Alignof(double) *
                                                    _Alignof(double);
    int64_t bl[3] = {1, k, c}, dp[3] = {0, dbl, dbl + 8 * k};
    int ibl[3] = {1, (int)k, (int)c};
    MPI_Aint adp[3] = {0, (MPI_Aint)dbl, (MPI_Aint)(dbl + 8 * k)};
    tess_type *ts[3] = {TESS_INT32, TESS_DOUBLE, TESS_CHAR};
    MPI_Datatype ms[3] = {MPI_INT32_T, MPI_DOUBLE, MPI_CHAR};
    s->name = "struct";
    CHECK_OK(tess_type_struct(3, bl, dp, ts, &s->t));
    MOK(MPI_Type_create_struct(3, ibl, adp, ms, &s->m));
}

static void fallback_shape(shape *s)
{
    int n = (int)rnd(17, 100);
    tess_type *tv;
    MPI_Datatype mv;
    CHECK_OK(tess_type_vector(n, 1, 2, TESS_INT32, &tv));
    MOK(MPI_Type_vector(n, 1, 2, MPI_INT32_T, &mv));
    int64_t bl[2] = {1, 1}, dp[2] = {0, 8 * n};
    int ibl[2] = {1, 1};
    MPI_Aint adp[2] = {0, 8 * n};
    tess_type *ts[2] = {tv, TESS_CHAR};
    MPI_Datatype ms[2] = {mv, MPI_CHAR};
    s->name = "struct of a vector";
    CHECK_OK(tess_type_struct(2, bl, dp, ts, &s->t));
    MOK(MPI_Type_create_struct(2, ibl, adp, ms, &s->m));
    tess_type_free(tv);
    MOK(MPI_Type_free(&mv));
}

static void (*const makers[])(shape *) = {vector_shape,  nested_shape,  subarray_shape,
                                          indexed_shape, struct_shape, fallback_shape};

static void check(shape *s)
{
    MOK(MPI_Type_commit(&s->m));
    MPI_Aint lb, ext, tlb, text;
    MOK(MPI_Type_get_extent(s->m, &lb, &ext));
    MOK(MPI_Type_get_true_extent(s->m, &tlb, &text));
    CHECK(tess_type_lb(s->t) == lb && tess_type_extent(s->t) == ext);
    /* now and then more instances of a small type than a kernel's chunk of a row (128) */
    int count = rnd(0, 3) == 0 && tess_type_size(s->t) <= 256 ? (int)rnd(129, 400) : (int)rnd(1, 4);
    int64_t size = tess_type_size(s->t), total = count * size;
    int64_t span = text + (count - 1) * ext, got;
    unsigned char *src = malloc((size_t)span), *ref = malloc((size_t)total),
                  *out = malloc((size_t)total), *a = malloc((size_t)span),
                  *b = malloc((size_t)span);
    CHECK(src && ref && out && a && b);
    for (int64_t i = 0; i < span; i++)
        src[i] = (unsigned char)rnd(0, 255);
    unsigned char *origin = src - tlb;
    int pos = 0;
    MOK(MPI_Pack(origin, count, s->m, ref, (int)total, &pos, MPI_COMM_SELF));
    CHECK(pos == total);
    CHECK_OK(tess_pack(origin, count, s->t, 0, out, total, &got));
    CHECK(got == total && memcmp(out, ref, (size_t)total) == 0);
    for (int rep = 0; rep < 6; rep++) {
        int64_t d = rnd(0, total), len = rnd(0, total - d);
        CHECK_OK(tess_pack(origin, count, s->t, d, out, len, &got));
        if (got != len || memcmp(out, ref + d, (size_t)len) != 0) {
            fprintf(stderr, "%s: pack of %lld bytes from %lld of %lld differs from MPI_Pack\n",
                    s->name, (long long)len, (long long)d, (long long)total);
            CHECK(0);
        }
    }
    /* unpack: whole, and in chunks, into buffers MPI_Unpack also filled */
    memset(a, 0x3C, (size_t)span);
    memset(b, 0x3C, (size_t)span);
    pos = 0;
    MOK(MPI_Unpack(ref, (int)total, &pos, a - tlb, count, s->m, MPI_COMM_SELF));
    CHECK_OK(tess_unpack(ref, total, b - tlb, count, s->t, 0, &got));
    CHECK(got == total && memcmp(a, b, (size_t)span) == 0);
    memset(b, 0x3C, (size_t)span);
    for (int64_t d = 0; d < total; d += got)
        CHECK_OK(tess_unpack(ref + d, rnd(1, total / 3 + 1), b - tlb, count, s->t, d, &got));
    CHECK(memcmp(a, b, (size_t)span) == 0);
    free(src);
    free(ref);
    free(out);
    free(a);
    free(b);
}

int main(int argc, char **argv)
{
    int64_t rounds = 200;
    uint64_t seed = 1;
    test_args(argc, argv, &rounds, &seed);
    MPI_Init(&argc, &argv);
    rng = seed;
    int nmakers = (int)(sizeof makers / sizeof makers[0]);
    for (int r = 0; r < rounds; r++)
        for (int k = 0; k < nmakers; k++) {
            shape s;
            makers[k](&s);
            check(&s);
            tess_type_free(s.t);
            MOK(MPI_Type_free(&s.m));
        }
    printf("test_pack_mpi: %lld rounds of %d shapes (seed %llu) equal to MPI_Pack/MPI_Unpack\n",
           (long long)rounds, nmakers, (unsigned long long)seed);
    MPI_Finalize();
    return 0;
}
