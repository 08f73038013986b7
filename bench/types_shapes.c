/*
 * types_shapes.c - the shapes of `tessera bench types` (see types.h): the Tessera type, the MPI
 * type built from the same parameters, the reference regions computed by brute force from the
 * constructor definitions, and the hand-written loop.
 */
#include "types.h"

#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ reference regions */

static int ref_reserve(shape *s, int64_t n)
{
    if (n < 0 || (uint64_t)n > SIZE_MAX / sizeof(int64_t))
        return bench_fail("types: %s: too many regions", s->name);
    s->roff = malloc((size_t)(n ? n : 1) * sizeof(int64_t));
    s->rlen = malloc((size_t)(n ? n : 1) * sizeof(int64_t));
    if (!s->roff || !s->rlen)
        return bench_fail("types: %s: out of memory for %lld reference regions", s->name,
                          (long long)n);
    s->nreg = 0;
    return 0;
}

/* Append a region; one that starts where the previous one ends extends it (merged regions). */
static void ref_add(shape *s, int64_t off, int64_t len)
{
    if (s->nreg > 0 && s->roff[s->nreg - 1] + s->rlen[s->nreg - 1] == off) {
        s->rlen[s->nreg - 1] += len;
        return;
    }
    s->roff[s->nreg] = off;
    s->rlen[s->nreg] = len;
    s->nreg++;
}

/* packed bytes and span from the reference regions */
static void ref_finish(shape *s)
{
    int64_t packed = 0, span = 0;
    for (int64_t i = 0; i < s->nreg; i++) {
        packed += s->rlen[i];
        if (s->roff[i] + s->rlen[i] > span)
            span = s->roff[i] + s->rlen[i];
    }
    s->packed = packed;
    s->span = span;
}

void ref_pack(const shape *s, const unsigned char *in, unsigned char *out)
{
    int64_t pos = 0;
    for (int64_t i = 0; i < s->nreg; i++) {
        memcpy(out + pos, in + s->roff[i], (size_t)s->rlen[i]);
        pos += s->rlen[i];
    }
}

void ref_unpack(const shape *s, const unsigned char *in, unsigned char *out)
{
    int64_t pos = 0;
    for (int64_t i = 0; i < s->nreg; i++) {
        memcpy(out + s->roff[i], in + pos, (size_t)s->rlen[i]);
        pos += s->rlen[i];
    }
}

void shape_free(shape *s)
{
    tess_type_free(s->tt);
    free(s->roff);
    free(s->rlen);
    free(s->ibl);
    free(s->idp);
#ifdef TESS_BENCH_MPI
    if (s->have_mt)
        MPI_Type_free(&s->mt);
#endif
    memset(s, 0, sizeof *s);
}

#ifdef TESS_BENCH_MPI
int mpi_ok(int rc, const shape *s, const char *what)
{
    if (rc == MPI_SUCCESS)
        return 0;
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(rc, msg, &len) != MPI_SUCCESS)
        snprintf(msg, sizeof msg, "error %d", rc);
    return bench_fail("types: %s: %s: %s", s->name, what, msg);
}

static int fits_int(int64_t v) { return v >= INT_MIN && v <= INT_MAX; }

static int mpi_commit(shape *s)
{
    int rc = MPI_Type_commit(&s->mt);
    if (rc != MPI_SUCCESS) {
        MPI_Type_free(&s->mt);
        return mpi_ok(rc, s, "MPI_Type_commit");
    }
    s->have_mt = 1;
    return 0;
}
#endif

/* ---------------------------------------------------------------- the shapes */

/* contiguous doubles: the memcpy baseline */
static int make_contig(shape *s, const types_opts *o, int use_mpi)
{
    int64_t n = o->bytes / 8;
    snprintf(s->name, sizeof s->name, "contig double");
    s->kind = SH_CONTIG;
    int rc = tess_type_contiguous(n, TESS_DOUBLE, &s->tt);
    if (rc != 0)
        return bench_tess_fail(rc, "tess_type_contiguous");
    s->count = 1;
    if (ref_reserve(s, 1) != 0)
        return -1;
    ref_add(s, 0, n * 8);
    ref_finish(s);
#ifdef TESS_BENCH_MPI
    if (use_mpi) {
        if (!fits_int(n))
            return bench_fail("types: %s: count too large for MPI", s->name);
        if (mpi_ok(MPI_Type_contiguous((int)n, MPI_DOUBLE, &s->mt), s, "MPI_Type_contiguous"))
            return -1;
        return mpi_commit(s);
    }
#else
    (void)use_mpi;
#endif
    return 0;
}

/* vector of double: count blocks of bl doubles, stride 2*bl doubles (half the memory is data) */
static int make_vector(shape *s, const types_opts *o, int64_t bl, int use_mpi)
{
    int64_t count = o->bytes / (8 * bl);
    if (count < 1)
        count = 1;
    int64_t stride = 2 * bl;
    snprintf(s->name, sizeof s->name, "vector dbl bl=%lld", (long long)bl);
    s->kind = SH_VECTOR;
    s->p[0] = count, s->p[1] = bl, s->p[2] = stride;
    int rc = tess_type_vector(count, bl, stride, TESS_DOUBLE, &s->tt);
    if (rc != 0)
        return bench_tess_fail(rc, "tess_type_vector");
    s->count = 1;
    if (ref_reserve(s, count) != 0)
        return -1;
    for (int64_t i = 0; i < count; i++)
        ref_add(s, i * stride * 8, bl * 8);
    ref_finish(s);
#ifdef TESS_BENCH_MPI
    if (use_mpi) {
        if (!fits_int(count) || !fits_int(stride))
            return bench_fail("types: %s: too large for MPI", s->name);
        if (mpi_ok(MPI_Type_vector((int)count, (int)bl, (int)stride, MPI_DOUBLE, &s->mt), s,
                   "MPI_Type_vector"))
            return -1;
        return mpi_commit(s);
    }
#else
    (void)use_mpi;
#endif
    return 0;
}

/*
 * nested vector: inner = vector(4, 2, 4) of double (4 blocks of 16 bytes, 32 bytes apart,
 * extent 112 bytes); outer = vector(m, 2, 3) of inner (2 inner instances every 3 extents).
 */
enum { NV_IC = 4, NV_IBL = 2, NV_IST = 4, NV_OBL = 2, NV_OST = 3 };

static int make_nested(shape *s, const types_opts *o, int use_mpi)
{
    int64_t inner_ext = ((NV_IC - 1) * NV_IST + NV_IBL) * 8;
    int64_t per_outer = NV_OBL * NV_IC * NV_IBL * 8;
    int64_t m = o->bytes / per_outer;
    if (m < 1)
        m = 1;
    snprintf(s->name, sizeof s->name, "nested vector");
    s->kind = SH_NESTED;
    s->p[0] = m;
    tess_type *inner = NULL;
    int rc = tess_type_vector(NV_IC, NV_IBL, NV_IST, TESS_DOUBLE, &inner);
    if (rc != 0)
        return bench_tess_fail(rc, "tess_type_vector (inner)");
    rc = tess_type_vector(m, NV_OBL, NV_OST, inner, &s->tt);
    tess_type_free(inner);
    if (rc != 0)
        return bench_tess_fail(rc, "tess_type_vector (outer)");
    s->count = 1;
    if (ref_reserve(s, m * NV_OBL * NV_IC) != 0)
        return -1;
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < NV_OBL; j++) {
            int64_t base = (i * NV_OST + j) * inner_ext;
            for (int64_t k = 0; k < NV_IC; k++)
                ref_add(s, base + k * NV_IST * 8, NV_IBL * 8);
        }
    ref_finish(s);
#ifdef TESS_BENCH_MPI
    if (use_mpi) {
        MPI_Datatype in;
        if (!fits_int(m))
            return bench_fail("types: %s: too large for MPI", s->name);
        if (mpi_ok(MPI_Type_vector(NV_IC, NV_IBL, NV_IST, MPI_DOUBLE, &in), s, "MPI_Type_vector"))
            return -1;
        rc = MPI_Type_vector((int)m, NV_OBL, NV_OST, in, &s->mt);
        MPI_Type_free(&in);
        if (mpi_ok(rc, s, "MPI_Type_vector (outer)"))
            return -1;
        return mpi_commit(s);
    }
#else
    (void)use_mpi;
#endif
    return 0;
}

/* 3-D subarray: a sub^3 block in the middle of an array^3 array of doubles, C order */
static int make_subarray(shape *s, const types_opts *o, int use_mpi)
{
    int64_t n = o->array, b = o->sub, st = (n - b) / 2;
    snprintf(s->name, sizeof s->name, "subarray %lld^3 of %lld^3", (long long)b, (long long)n);
    s->kind = SH_SUBARRAY;
    s->p[0] = n, s->p[1] = b, s->p[2] = st;
    int64_t sizes[3] = {n, n, n}, subs[3] = {b, b, b}, starts[3] = {st, st, st};
    int rc = tess_type_subarray(3, sizes, subs, starts, TESS_ORDER_C, TESS_DOUBLE, &s->tt);
    if (rc != 0)
        return bench_tess_fail(rc, "tess_type_subarray");
    s->count = 1;
    if (ref_reserve(s, b * b) != 0)
        return -1;
    for (int64_t z = 0; z < b; z++)
        for (int64_t y = 0; y < b; y++)
            ref_add(s, (((st + z) * n + (st + y)) * n + st) * 8, b * 8);
    ref_finish(s);
    s->span = n * n * n * 8; /* the whole array is the buffer */
#ifdef TESS_BENCH_MPI
    if (use_mpi) {
        if (!fits_int(n))
            return bench_fail("types: %s: too large for MPI", s->name);
        int isz[3] = {(int)n, (int)n, (int)n}, isub[3] = {(int)b, (int)b, (int)b};
        int ist[3] = {(int)st, (int)st, (int)st};
        if (mpi_ok(MPI_Type_create_subarray(3, isz, isub, ist, MPI_ORDER_C, MPI_DOUBLE, &s->mt),
                   s, "MPI_Type_create_subarray"))
            return -1;
        return mpi_commit(s);
    }
#else
    (void)use_mpi;
#endif
    return 0;
}

/* indexed of double: random block lengths in [1,16] and gaps in [1,16] doubles, seeded */
static int make_indexed(shape *s, const types_opts *o, int use_mpi)
{
    snprintf(s->name, sizeof s->name, "indexed random");
    uint64_t st = (uint64_t)o->seed;
    /* draw blocks until the packed size reaches the target */
    int64_t cap = o->bytes / 8 + 1, n = 0, total = 0, disp = 0;
    int64_t *bl = calloc((size_t)cap, sizeof *bl), *dp = calloc((size_t)cap, sizeof *dp);
    int rc = -1;
#ifdef TESS_BENCH_MPI
    int *ibl = NULL, *idp = NULL;
#endif
    if (!bl || !dp) {
        bench_fail("types: %s: out of memory", s->name);
        goto done;
    }
    while (total < o->bytes / 8 && n < cap) {
        int64_t len = 1 + (int64_t)(bench_rand(&st) % 16);
        int64_t gap = 1 + (int64_t)(bench_rand(&st) % 16);
        bl[n] = len;
        dp[n] = disp;
        disp += len + gap;
        total += len;
        n++;
    }
    rc = tess_type_indexed(n, bl, dp, TESS_DOUBLE, &s->tt);
    if (rc != 0) {
        bench_tess_fail(rc, "tess_type_indexed");
        goto done;
    }
    s->kind = SH_INDEXED;
    s->p[0] = n;
    s->ibl = bl; /* the shape keeps the blocks for its hand loop */
    s->idp = dp;
    bl = dp = NULL;
    s->count = 1;
    rc = ref_reserve(s, n);
    if (rc != 0)
        goto done;
    for (int64_t i = 0; i < n; i++)
        ref_add(s, s->idp[i] * 8, s->ibl[i] * 8);
    ref_finish(s);
#ifdef TESS_BENCH_MPI
    if (use_mpi) {
        rc = -1;
        if (!fits_int(n) || !fits_int(disp)) {
            bench_fail("types: %s: too large for MPI", s->name);
            goto done;
        }
        ibl = malloc((size_t)n * sizeof *ibl);
        idp = malloc((size_t)n * sizeof *idp);
        if (!ibl || !idp) {
            bench_fail("types: %s: out of memory", s->name);
            goto done;
        }
        for (int64_t i = 0; i < n; i++) {
            ibl[i] = (int)s->ibl[i];
            idp[i] = (int)s->idp[i];
        }
        if (mpi_ok(MPI_Type_indexed((int)n, ibl, idp, MPI_DOUBLE, &s->mt), s, "MPI_Type_indexed"))
            goto done;
        rc = mpi_commit(s);
    }
#else
    (void)use_mpi;
#endif
done:
#ifdef TESS_BENCH_MPI
    free(ibl);
    free(idp);
#endif
    free(bl);
    free(dp);
    return rc;
}

/* struct of mixed types, described member by member; Tessera and MPI pad its extent (27) to
 * the C struct's size (32) */
typedef struct {
    int32_t a;
    double b[2];
    char c[3];
} rec;

static int make_struct(shape *s, const types_opts *o, int use_mpi)
{
    const int64_t bls[3] = {1, 2, 3}, per = 4 + 16 + 3;
    const int64_t dps[3] = {offsetof(rec, a), offsetof(rec, b), offsetof(rec, c)};
    int64_t count = o->bytes / per;
    if (count < 1)
        count = 1;
    snprintf(s->name, sizeof s->name, "struct i32+2dbl+3chr");
    s->kind = SH_STRUCT;
    tess_type *const members[3] = {TESS_INT32, TESS_DOUBLE, TESS_CHAR};
    int rc = tess_type_struct(3, bls, dps, members, &s->tt);
    if (rc != 0)
        return bench_tess_fail(rc, "tess_type_struct");
    if (tess_type_extent(s->tt) != (int64_t)sizeof(rec))
        return bench_fail("types: %s: extent %lld, the C struct's size %zu", s->name,
                          (long long)tess_type_extent(s->tt), sizeof(rec));
    s->count = count;
    if (ref_reserve(s, 3 * count) != 0)
        return -1;
    for (int64_t i = 0; i < count; i++)
        for (int k = 0; k < 3; k++)
            ref_add(s, i * (int64_t)sizeof(rec) + dps[k], k == 0 ? 4 : k == 1 ? 16 : 3);
    ref_finish(s);
    s->span = count * (int64_t)sizeof(rec);
#ifdef TESS_BENCH_MPI
    if (use_mpi) {
        int ibl[3] = {1, 2, 3};
        MPI_Aint idp[3] = {dps[0], dps[1], dps[2]};
        MPI_Datatype mts[3] = {MPI_INT32_T, MPI_DOUBLE, MPI_CHAR};
        if (!fits_int(count))
            return bench_fail("types: %s: too large for MPI", s->name);
        if (mpi_ok(MPI_Type_create_struct(3, ibl, idp, mts, &s->mt), s, "MPI_Type_create_struct"))
            return -1;
        return mpi_commit(s);
    }
#else
    (void)use_mpi;
#endif
    return 0;
}

/* ------------------------------------------------------------ hand-written loops */

/*
 * What a C programmer writes for each shape: element loops over doubles, memcpy for rows and
 * blocks, member copies for the struct. The parameters the compiler can see as constants (the
 * nested vector's, the struct's) are constants, as they would be in such code.
 */
void hand(const shape *s, unsigned char *typed, unsigned char *packed, int to_packed)
{
    switch (s->kind) {
    case SH_CONTIG:
        if (to_packed)
            memcpy(packed, typed, (size_t)s->packed);
        else
            memcpy(typed, packed, (size_t)s->packed);
        return;
    case SH_VECTOR: {
        int64_t count = s->p[0], bl = s->p[1], stride = s->p[2];
        double *t = (double *)typed, *p = (double *)packed;
        for (int64_t i = 0; i < count; i++)
            for (int64_t j = 0; j < bl; j++, p++) {
                if (to_packed)
                    *p = t[i * stride + j];
                else
                    t[i * stride + j] = *p;
            }
        return;
    }
    case SH_NESTED: {
        enum { IEXT = (NV_IC - 1) * NV_IST + NV_IBL };
        double *t = (double *)typed, *p = (double *)packed;
        for (int64_t i = 0; i < s->p[0]; i++)
            for (int j = 0; j < NV_OBL; j++)
                for (int k = 0; k < NV_IC; k++)
                    for (int l = 0; l < NV_IBL; l++, p++) {
                        double *e = t + (i * NV_OST + j) * IEXT + k * NV_IST + l;
                        if (to_packed)
                            *p = *e;
                        else
                            *e = *p;
                    }
        return;
    }
    case SH_SUBARRAY: {
        int64_t n = s->p[0], b = s->p[1], st = s->p[2];
        double *t = (double *)typed, *p = (double *)packed;
        for (int64_t z = 0; z < b; z++)
            for (int64_t y = 0; y < b; y++, p += b) {
                double *row = t + ((st + z) * n + st + y) * n + st;
                memcpy(to_packed ? (void *)p : row, to_packed ? (void *)row : p,
                       (size_t)b * sizeof(double));
            }
        return;
    }
    case SH_INDEXED: {
        double *t = (double *)typed, *p = (double *)packed;
        for (int64_t k = 0; k < s->p[0]; p += s->ibl[k], k++)
            memcpy(to_packed ? (void *)p : t + s->idp[k], to_packed ? (void *)(t + s->idp[k]) : p,
                   (size_t)s->ibl[k] * sizeof(double));
        return;
    }
    case SH_STRUCT: {
        rec *r = (rec *)typed;
        unsigned char *p = packed;
        for (int64_t i = 0; i < s->count; i++, p += 23) {
            if (to_packed) {
                memcpy(p, &r[i].a, 4);
                memcpy(p + 4, r[i].b, 16);
                memcpy(p + 20, r[i].c, 3);
            } else {
                memcpy(&r[i].a, p, 4);
                memcpy(r[i].b, p + 4, 16);
                memcpy(r[i].c, p + 20, 3);
            }
        }
        return;
    }
    }
}

int types_make_shape(int i, shape *s, const types_opts *o, int use_mpi)
{
    switch (i) {
    case 0: return make_contig(s, o, use_mpi);
    case 1: return make_vector(s, o, 1, use_mpi);
    case 2: return make_vector(s, o, 8, use_mpi);
    case 3: return make_vector(s, o, 64, use_mpi);
    case 4: return make_nested(s, o, use_mpi);
    case 5: return make_subarray(s, o, use_mpi);
    case 6: return make_indexed(s, o, use_mpi);
    default: return make_struct(s, o, use_mpi);
    }
}
