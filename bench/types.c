/*
 * types.c - `tessera bench types`: pack and unpack throughput of Tessera's datatype engine
 * next to MPI_Pack/MPI_Unpack of the same MPI datatype, built from the same parameters.
 *
 * For each shape the benchmark builds (1) the Tessera type, (2) the equivalent MPI type and
 * (3) a reference list of (offset, length) regions computed by brute force straight from the
 * constructor definitions. Before timing, tess_pack's output is compared with the reference
 * pack and with MPI_Pack's output, and both unpacks with the reference unpack: the check column
 * says ok or what failed. Then pack and unpack are timed for both libraries, alternating
 * repetitions, and the medians are printed in GB/s (1e9 bytes of packed data per second).
 */
#include "bench.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#ifdef TESS_BENCH_MPI
#include <mpi.h>
#endif

typedef struct types_opts {
    int64_t bytes;     /* packed bytes per call (target; shapes round down) */
    int64_t array;     /* subarray: edge of the full 3-D array of doubles */
    int64_t sub;       /* subarray: edge of the sub-block */
    int64_t seed;      /* indexed shape's random blocks */
    const char *only;  /* run only shapes whose name contains this */
    int use_mpi;
    int quick;
    bench_timing timing;
} types_opts;

/* One benchmark case: the same layout as a Tessera type, an MPI type and reference regions. */
typedef struct shape {
    char name[40];
    tess_type *tt;
    int64_t count;       /* instances packed per call */
    int64_t packed;      /* data bytes per call */
    int64_t span;        /* bytes of the source buffer (highest data byte + 1) */
    int64_t nreg;        /* reference regions */
    int64_t *roff, *rlen;
#ifdef TESS_BENCH_MPI
    MPI_Datatype mt;
    int have_mt;
#endif
} shape;

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

static void ref_pack(const shape *s, const unsigned char *in, unsigned char *out)
{
    int64_t pos = 0;
    for (int64_t i = 0; i < s->nreg; i++) {
        memcpy(out + pos, in + s->roff[i], (size_t)s->rlen[i]);
        pos += s->rlen[i];
    }
}

static void ref_unpack(const shape *s, const unsigned char *in, unsigned char *out)
{
    int64_t pos = 0;
    for (int64_t i = 0; i < s->nreg; i++) {
        memcpy(out + s->roff[i], in + pos, (size_t)s->rlen[i]);
        pos += s->rlen[i];
    }
}

static void shape_free(shape *s)
{
    tess_type_free(s->tt);
    free(s->roff);
    free(s->rlen);
#ifdef TESS_BENCH_MPI
    if (s->have_mt)
        MPI_Type_free(&s->mt);
#endif
    memset(s, 0, sizeof *s);
}

#ifdef TESS_BENCH_MPI
static int mpi_ok(int rc, const shape *s, const char *what)
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
    int64_t *bl = malloc((size_t)cap * sizeof *bl), *dp = malloc((size_t)cap * sizeof *dp);
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
    s->count = 1;
    rc = ref_reserve(s, n);
    if (rc != 0)
        goto done;
    for (int64_t i = 0; i < n; i++)
        ref_add(s, dp[i] * 8, bl[i] * 8);
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
            ibl[i] = (int)bl[i];
            idp[i] = (int)dp[i];
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

/*
 * struct of mixed types: { int32 a; double b[2]; char c[3]; } at byte offsets 0, 8, 24,
 * resized to an extent of 32 bytes (23 data bytes per element); count elements per call.
 */
static int make_struct(shape *s, const types_opts *o, int use_mpi)
{
    const int64_t bls[3] = {1, 2, 3}, dps[3] = {0, 8, 24}, ext = 32, per = 4 + 16 + 3;
    int64_t count = o->bytes / per;
    if (count < 1)
        count = 1;
    snprintf(s->name, sizeof s->name, "struct i32+2dbl+3chr");
    tess_type *const members[3] = {TESS_INT32, TESS_DOUBLE, TESS_CHAR};
    tess_type *st = NULL;
    int rc = tess_type_struct(3, bls, dps, members, &st);
    if (rc != 0)
        return bench_tess_fail(rc, "tess_type_struct");
    rc = tess_type_resized(st, 0, ext, &s->tt);
    tess_type_free(st);
    if (rc != 0)
        return bench_tess_fail(rc, "tess_type_resized");
    s->count = count;
    if (ref_reserve(s, 3 * count) != 0)
        return -1;
    for (int64_t i = 0; i < count; i++) {
        ref_add(s, i * ext + 0, 4);
        ref_add(s, i * ext + 8, 16);
        ref_add(s, i * ext + 24, 3);
    }
    ref_finish(s);
    s->span = count * ext;
#ifdef TESS_BENCH_MPI
    if (use_mpi) {
        int ibl[3] = {1, 2, 3};
        MPI_Aint idp[3] = {0, 8, 24};
        MPI_Datatype mts[3] = {MPI_INT32_T, MPI_DOUBLE, MPI_CHAR}, raw;
        if (!fits_int(count))
            return bench_fail("types: %s: too large for MPI", s->name);
        if (mpi_ok(MPI_Type_create_struct(3, ibl, idp, mts, &raw), s, "MPI_Type_create_struct"))
            return -1;
        rc = MPI_Type_create_resized(raw, 0, (MPI_Aint)ext, &s->mt);
        MPI_Type_free(&raw);
        if (mpi_ok(rc, s, "MPI_Type_create_resized"))
            return -1;
        return mpi_commit(s);
    }
#else
    (void)use_mpi;
#endif
    return 0;
}

/* -------------------------------------------------------------- timed operations */

typedef struct op_ctx {
    const shape *s;
    const void *src;   /* typed buffer (pack input) */
    void *packbuf;     /* packed buffer (pack output, unpack input) */
    void *dst;         /* typed buffer (unpack output) */
} op_ctx;

static int op_tess_pack(void *p)
{
    op_ctx *c = p;
    int64_t got = 0;
    int rc = tess_pack(c->src, c->s->count, c->s->tt, 0, c->packbuf, c->s->packed, &got);
    if (rc != 0)
        return bench_tess_fail(rc, "tess_pack");
    if (got != c->s->packed)
        return bench_fail("tess_pack: packed %lld of %lld bytes", (long long)got,
                          (long long)c->s->packed);
    return 0;
}

static int op_tess_unpack(void *p)
{
    op_ctx *c = p;
    int64_t got = 0;
    int rc = tess_unpack(c->packbuf, c->s->packed, c->dst, c->s->count, c->s->tt, 0, &got);
    if (rc != 0)
        return bench_tess_fail(rc, "tess_unpack");
    if (got != c->s->packed)
        return bench_fail("tess_unpack: unpacked %lld of %lld bytes", (long long)got,
                          (long long)c->s->packed);
    return 0;
}

#ifdef TESS_BENCH_MPI
static int op_mpi_pack(void *p)
{
    op_ctx *c = p;
    int pos = 0;
    int rc = MPI_Pack(c->src, (int)c->s->count, c->s->mt, c->packbuf, (int)c->s->packed, &pos,
                      MPI_COMM_SELF);
    if (rc != MPI_SUCCESS)
        return mpi_ok(rc, c->s, "MPI_Pack");
    if (pos != c->s->packed)
        return bench_fail("MPI_Pack: packed %d of %lld bytes", pos, (long long)c->s->packed);
    return 0;
}

static int op_mpi_unpack(void *p)
{
    op_ctx *c = p;
    int pos = 0;
    int rc = MPI_Unpack(c->packbuf, (int)c->s->packed, &pos, c->dst, (int)c->s->count, c->s->mt,
                        MPI_COMM_SELF);
    if (rc != MPI_SUCCESS)
        return mpi_ok(rc, c->s, "MPI_Unpack");
    if (pos != c->s->packed)
        return bench_fail("MPI_Unpack: unpacked %d of %lld bytes", pos, (long long)c->s->packed);
    return 0;
}
#endif

/* ---------------------------------------------------------------- one shape */

static void put_gbs(bench_table *t, int64_t bytes, double sec)
{
    if (sec > 0)
        bench_table_cell(t, "%.2f", (double)bytes / sec / 1e9);
    else
        bench_table_cell(t, "%s", "n/a");
}

static void put_ratio(bench_table *t, double tess_sec, double mpi_sec)
{
    if (tess_sec > 0 && mpi_sec > 0)
        bench_table_cell(t, "%.2fx", mpi_sec / tess_sec);
    else
        bench_table_cell(t, "%s", "n/a");
}

/* Build buffers, check, time, print one row. Returns 0, or -1 when the shape could not run. */
static int run_shape(shape *s, const types_opts *o, const bench_mpi *m, bench_table *tab,
                     int *failures)
{
    int use_mpi = 0;
#ifdef TESS_BENCH_MPI
    use_mpi = m->active && s->have_mt;
#else
    (void)m;
#endif
    int rc = -1;
    unsigned char *src = bench_alloc(s->span, 0), *dst = bench_alloc(s->span, 0);
    unsigned char *ref_dst = bench_alloc(s->span, 0);
    unsigned char *pk_ref = bench_alloc(s->packed, 0), *pk_t = bench_alloc(s->packed, 0);
    unsigned char *pk_m = bench_alloc(s->packed, 0);
    char check[96] = "";
    double t_pack = 0, m_pack = 0, t_unpack = 0, m_unpack = 0;
    if (!src || !dst || !ref_dst || !pk_ref || !pk_t || !pk_m) {
        bench_fail("types: %s: out of memory (%lld-byte buffers)", s->name, (long long)s->span);
        goto done;
    }
    bench_fill_random(src, s->span, 42);
    op_ctx ct = {s, src, pk_t, dst};
    op_ctx cm = {s, src, pk_m, dst};

    /* correctness first: reference pack/unpack against both libraries */
    ref_pack(s, src, pk_ref);
    ref_unpack(s, pk_ref, ref_dst);
    int bad_tp = 0, bad_tu = 0, bad_mp = 0, bad_mu = 0, t_ne_m = 0;
    if (op_tess_pack(&ct) != 0)
        goto done;
    bad_tp = memcmp(pk_t, pk_ref, (size_t)s->packed) != 0;
    memset(dst, 0, (size_t)s->span);
    if (op_tess_unpack(&ct) != 0)
        goto done;
    bad_tu = memcmp(dst, ref_dst, (size_t)s->span) != 0;
#ifdef TESS_BENCH_MPI
    if (use_mpi) {
        if (op_mpi_pack(&cm) != 0)
            goto done;
        bad_mp = memcmp(pk_m, pk_ref, (size_t)s->packed) != 0;
        t_ne_m = memcmp(pk_t, pk_m, (size_t)s->packed) != 0;
        memset(dst, 0, (size_t)s->span);
        if (op_mpi_unpack(&cm) != 0)
            goto done;
        bad_mu = memcmp(dst, ref_dst, (size_t)s->span) != 0;
    }
#endif
    if (bad_tp || bad_tu || bad_mp || bad_mu || t_ne_m) {
        snprintf(check, sizeof check, "FAIL(%s%s%s%s%s)", bad_tp ? "pack " : "",
                 bad_tu ? "unpack " : "", t_ne_m ? "pack!=MPI " : "", bad_mp ? "MPI_Pack " : "",
                 bad_mu ? "MPI_Unpack " : "");
        size_t l = strlen(check);
        if (l >= 2 && check[l - 2] == ' ')
            memmove(check + l - 2, ")", 2);
        (*failures)++;
    } else {
        snprintf(check, sizeof check, "ok");
    }
    /* unpack input for the timed runs: the reference packed stream */
    memcpy(pk_t, pk_ref, (size_t)s->packed);
    memcpy(pk_m, pk_ref, (size_t)s->packed);

    bench_fn mp = NULL, mu = NULL;
#ifdef TESS_BENCH_MPI
    if (use_mpi) {
        mp = op_mpi_pack;
        mu = op_mpi_unpack;
    }
#endif
    if (bench_time_pair(op_tess_pack, &ct, mp, &cm, &o->timing, &t_pack, &m_pack) != 0)
        goto done;
    /* pack leaves its output in pk_t/pk_m: restore the unpack input (identical if checks ok) */
    memcpy(pk_t, pk_ref, (size_t)s->packed);
    memcpy(pk_m, pk_ref, (size_t)s->packed);
    if (bench_time_pair(op_tess_unpack, &ct, mu, &cm, &o->timing, &t_unpack, &m_unpack) != 0)
        goto done;

    char b1[32];
    bench_table_cell(tab, "%s", s->name);
    bench_table_cell(tab, "%s", bench_fmt_bytes(s->packed, b1, sizeof b1));
    bench_table_cell(tab, "%lld", (long long)s->nreg);
    bench_table_cell(tab, "%lld", (long long)tess_type_footprint(s->tt));
    bench_table_cell(tab, "%s", use_mpi ? "-" : "n/a");
    put_gbs(tab, s->packed, t_pack);
    put_gbs(tab, s->packed, use_mpi ? m_pack : 0);
    put_ratio(tab, t_pack, use_mpi ? m_pack : 0);
    put_gbs(tab, s->packed, t_unpack);
    put_gbs(tab, s->packed, use_mpi ? m_unpack : 0);
    put_ratio(tab, t_unpack, use_mpi ? m_unpack : 0);
    bench_table_cell(tab, "%s", check);
    bench_table_end_row(tab);
    rc = 0;
done:
    if (rc != 0) {
        bench_table_cell(tab, "%s", s->name);
        bench_table_cell(tab, "%s", "error (see above)");
        bench_table_end_row(tab);
        (*failures)++;
    }
    bench_free(src);
    bench_free(dst);
    bench_free(ref_dst);
    bench_free(pk_ref);
    bench_free(pk_t);
    bench_free(pk_m);
    return rc;
}

/* ------------------------------------------------------------------ the command */

int bench_types_main(int argc, char **argv)
{
    types_opts o = {.use_mpi = 1};
    int64_t reps = 0;
    int cpu_time = 0;
    bench_opt opts[] = {
        {.name = "bytes", .kind = BENCH_OPT_SIZE, .dst = &o.bytes, .min = 64, .max = 1 << 30,
         .arg = "SIZE", .help = "packed bytes per call for each shape (k/m/g suffixes)",
         .def = "16m", .quick = "1m"},
        {.name = "array", .kind = BENCH_OPT_SIZE, .dst = &o.array, .min = 1, .max = 2048,
         .arg = "N", .help = "3-D subarray: edge of the full array of doubles", .def = "256",
         .quick = "64"},
        {.name = "sub", .kind = BENCH_OPT_SIZE, .dst = &o.sub, .min = 1, .arg = "N",
         .help = "3-D subarray: edge of the centred sub-block (at most --array)", .def = "128",
         .quick = "32"},
        BENCH_OPT_REPS(&reps, 1000, NULL),
        BENCH_OPT_MIN_MS(&o.timing.min_rep_sec, "20", "2"),
        {.name = "seed", .kind = BENCH_OPT_SIZE, .dst = &o.seed, .arg = "N",
         .help = "seed of the indexed shape's random blocks", .def = "1"},
        {.name = "only", .kind = BENCH_OPT_TEXT, .dst = &o.only, .arg = "TEXT",
         .help = "run only the shapes whose name contains TEXT"},
        BENCH_OPT_NO_MPI(&o.use_mpi, "do not initialize MPI (MPI columns print n/a)"),
        BENCH_OPT_CPU_TIME(&cpu_time),
        BENCH_OPT_QUICKLY(&o.quick, "small sizes for the demo"),
    };
    const bench_command cmd = {
        .name = "types", .opts = opts, .nopts = BENCH_NOPTS(opts),
        .about = "  Pack/unpack GB/s of Tessera next to MPI_Pack/MPI_Unpack of the same MPI type.\n"};
    int status = bench_parse(&cmd, argc, argv, 0);
    if (status >= 0)
        return status;
    if (o.sub > o.array) {
        fprintf(stderr, "tessera: --array 1..2048 and 1 <= --sub <= --array\n");
        return 2;
    }
    o.timing.reps = (int)reps;
    bench_use_cpu_clock(cpu_time);

    bench_mpi m;
    if (bench_mpi_init(&m, o.use_mpi, NULL, NULL) != 0)
        return 1;
    int failures = 0;
    if (m.rank != 0)
        goto out; /* single-process benchmark: extra ranks idle */

    char b1[32];
    printf("tessera bench types: pack/unpack throughput, GB/s = 1e9 packed bytes per second\n");
    printf("  target %s packed per call, median of %d repetitions of >= %.0f ms each, buffers "
           "warmed, one untimed call first\n",
           bench_fmt_bytes(o.bytes, b1, sizeof b1), o.timing.reps, o.timing.min_rep_sec * 1e3);
    bench_print_machine(stdout);
    printf("  timing: %s\n", bench_clock_name());
    printf("  MPI: %s%s\n", m.library,
           m.size > 1 ? " (extra ranks idle: this benchmark is single-process)" : "");
    printf("  ratio = Tessera/MPI throughput (>1 means Tessera is faster); type mem = bytes of "
           "the Tessera type (tess_type_footprint);\n"
           "  regions = contiguous regions per call (adjacent ones merged); check = tess_pack vs"
           " MPI_Pack and both pack/unpack vs a brute-force reference\n\n");

    static const char *const heads[] = {"shape",   "bytes/call", "regions", "type mem",
                                        "MPI mem", "pack T",     "pack MPI", "ratio",
                                        "unpk T",  "unpk MPI",   "ratio",    "check"};
    static const int widths[] = {24, 10, 9, 9, 7, 7, 8, 6, 7, 8, 6, 5};
    bench_table tab;
    bench_table_init(&tab, stdout, 12, heads, widths);
    bench_table_header(&tab);

    enum { NSHAPES = 8 };
    for (int i = 0; i < NSHAPES; i++) {
        shape s;
        memset(&s, 0, sizeof s);
        int mk;
        switch (i) {
        case 0: mk = make_contig(&s, &o, m.active); break;
        case 1: mk = make_vector(&s, &o, 1, m.active); break;
        case 2: mk = make_vector(&s, &o, 8, m.active); break;
        case 3: mk = make_vector(&s, &o, 64, m.active); break;
        case 4: mk = make_nested(&s, &o, m.active); break;
        case 5: mk = make_subarray(&s, &o, m.active); break;
        case 6: mk = make_indexed(&s, &o, m.active); break;
        default: mk = make_struct(&s, &o, m.active); break;
        }
        if (mk == 0 && o.only && !strstr(s.name, o.only)) {
            shape_free(&s);
            continue;
        }
        if (mk != 0) {
            bench_table_cell(&tab, "%s", s.name[0] ? s.name : "(shape)");
            bench_table_cell(&tab, "%s", "could not build (see above)");
            bench_table_end_row(&tab);
            failures++;
        } else {
            run_shape(&s, &o, &m, &tab, &failures);
        }
        shape_free(&s);
    }
    if (failures)
        printf("\n%d shape(s) failed a check or could not run\n", failures);
out:
    bench_mpi_finalize(&m);
    return failures ? 1 : 0;
}
