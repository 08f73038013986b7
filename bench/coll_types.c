/*
 * coll_types.c - the dual types and patterns of the collective workloads (see coll.h): every
 * datatype is built with the Tessera constructor and the MPI constructor of the same name, and
 * the two are checked to agree, so Tessera and MPI-IO run the very same access.
 */
#include "coll_impl.h"

#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ============================================================ dual types */

void coll_type_named(tess_type *t, MPI_Datatype m, coll_type *out)
{
    out->t = t;
    out->m = m;
    out->own_m = 0;
}

void coll_type_free(coll_type *t)
{
    if (!t)
        return;
    tess_type_free(t->t);
    if (t->own_m && t->m != MPI_DATATYPE_NULL)
        MPI_Type_free(&t->m);
    t->t = NULL;
    t->m = MPI_DATATYPE_NULL;
    t->own_m = 0;
}

static int fits_int(int64_t v, const char *what)
{
    if (v < INT_MIN || v > INT_MAX)
        return coll_fail("%s: %lld does not fit the int argument of the MPI constructor", what,
                    (long long)v);
    return 0;
}

/*
 * Finish a dual constructor: trc is the Tessera constructor's return, mrc the MPI one's (the
 * MPI type in *m). Commits the MPI type and compares size, lb and extent; with fix_bounds the
 * Tessera type is resized to MPI's bounds instead (structs: MPI pads, Tessera does not).
 */
static int dual_finish(coll_type *out, tess_type *t, int trc, MPI_Datatype m, int mrc,
                       const char *what, int fix_bounds)
{
    out->t = NULL;
    out->m = MPI_DATATYPE_NULL;
    out->own_m = 0;
    if (trc != 0) {
        if (mrc == MPI_SUCCESS)
            MPI_Type_free(&m);
        return coll_tfail(trc, what);
    }
    if (mrc != MPI_SUCCESS) {
        tess_type_free(t);
        return coll_mfail(mrc, what);
    }
    out->t = t;
    out->m = m;
    out->own_m = 1;
    int rc = MPI_Type_commit(&out->m);
    if (rc != MPI_SUCCESS) {
        coll_type_free(out);
        return coll_mfail(rc, "MPI_Type_commit");
    }
    MPI_Count msize = 0, mlb = 0, mext = 0;
    if ((rc = MPI_Type_size_x(out->m, &msize)) != MPI_SUCCESS ||
        (rc = MPI_Type_get_extent_x(out->m, &mlb, &mext)) != MPI_SUCCESS) {
        coll_type_free(out);
        return coll_mfail(rc, "MPI_Type_size_x/get_extent_x");
    }
    if (fix_bounds && (tess_type_lb(out->t) != (int64_t)mlb ||
                       tess_type_extent(out->t) != (int64_t)mext)) {
        tess_type *r = NULL;
        int trc2 = tess_type_resized(out->t, (int64_t)mlb, (int64_t)mext, &r);
        if (trc2 != 0) {
            coll_type_free(out);
            return coll_tfail(trc2, "tess_type_resized (struct bounds)");
        }
        tess_type_free(out->t);
        out->t = r;
    }
    if (tess_type_size(out->t) != (int64_t)msize || tess_type_lb(out->t) != (int64_t)mlb ||
        tess_type_extent(out->t) != (int64_t)mext) {
        coll_fail("%s: Tessera and MPI disagree: size %lld/%lld lb %lld/%lld extent %lld/%lld", what,
             (long long)tess_type_size(out->t), (long long)msize,
             (long long)tess_type_lb(out->t), (long long)mlb,
             (long long)tess_type_extent(out->t), (long long)mext);
        coll_type_free(out);
        return -1;
    }
    return 0;
}

int coll_type_contiguous(int64_t count, const coll_type *old, coll_type *out)
{
    tess_type *t = NULL;
    MPI_Datatype m = MPI_DATATYPE_NULL;
    if (fits_int(count, "contiguous count"))
        return dual_finish(out, NULL, TESS_ERR_ARG, m, MPI_ERR_ARG, "contiguous", 0), -1;
    int trc = tess_type_contiguous(count, old->t, &t);
    int mrc = MPI_Type_contiguous((int)count, old->m, &m);
    return dual_finish(out, t, trc, m, mrc, "contiguous", 0);
}

int coll_type_vector(int64_t count, int64_t blocklen, int64_t stride, const coll_type *old,
                     coll_type *out)
{
    tess_type *t = NULL;
    MPI_Datatype m = MPI_DATATYPE_NULL;
    if (fits_int(count, "vector count") || fits_int(blocklen, "vector blocklen") ||
        fits_int(stride, "vector stride"))
        return dual_finish(out, NULL, TESS_ERR_ARG, m, MPI_ERR_ARG, "vector", 0), -1;
    int trc = tess_type_vector(count, blocklen, stride, old->t, &t);
    int mrc = MPI_Type_vector((int)count, (int)blocklen, (int)stride, old->m, &m);
    return dual_finish(out, t, trc, m, mrc, "vector", 0);
}

int coll_type_hvector(int64_t count, int64_t blocklen, int64_t stride_bytes, const coll_type *old,
                      coll_type *out)
{
    tess_type *t = NULL;
    MPI_Datatype m = MPI_DATATYPE_NULL;
    if (fits_int(count, "hvector count") || fits_int(blocklen, "hvector blocklen"))
        return dual_finish(out, NULL, TESS_ERR_ARG, m, MPI_ERR_ARG, "hvector", 0), -1;
    int trc = tess_type_hvector(count, blocklen, stride_bytes, old->t, &t);
    int mrc = MPI_Type_create_hvector((int)count, (int)blocklen, (MPI_Aint)stride_bytes, old->m,
                                      &m);
    return dual_finish(out, t, trc, m, mrc, "hvector", 0);
}

enum { MAX_DIMS = 8 };

int coll_type_subarray(int ndims, const int64_t *sizes, const int64_t *subsizes,
                       const int64_t *starts, int order_c, const coll_type *old, coll_type *out)
{
    tess_type *t = NULL;
    MPI_Datatype m = MPI_DATATYPE_NULL;
    int s[MAX_DIMS], ss[MAX_DIMS], st[MAX_DIMS];
    if (ndims < 1 || ndims > MAX_DIMS)
        return coll_fail("subarray: %d dimensions (1 to %d)", ndims, MAX_DIMS);
    for (int i = 0; i < ndims; i++) {
        if (fits_int(sizes[i], "subarray size") || fits_int(subsizes[i], "subarray subsize") ||
            fits_int(starts[i], "subarray start"))
            return dual_finish(out, NULL, TESS_ERR_ARG, m, MPI_ERR_ARG, "subarray", 0), -1;
        s[i] = (int)sizes[i];
        ss[i] = (int)subsizes[i];
        st[i] = (int)starts[i];
    }
    int trc = tess_type_subarray(ndims, sizes, subsizes, starts,
                                 order_c ? TESS_ORDER_C : TESS_ORDER_FORTRAN, old->t, &t);
    int mrc = MPI_Type_create_subarray(ndims, s, ss, st,
                                       order_c ? MPI_ORDER_C : MPI_ORDER_FORTRAN, old->m, &m);
    return dual_finish(out, t, trc, m, mrc, "subarray", 0);
}

int coll_type_darray_block(int size, int rank, int ndims, const int64_t *gsizes,
                           const int *psizes, int order_c, const coll_type *old, coll_type *out)
{
    tess_type *t = NULL;
    MPI_Datatype m = MPI_DATATYPE_NULL;
    int g[MAX_DIMS], dist[MAX_DIMS], darg[MAX_DIMS], ps[MAX_DIMS];
    if (ndims < 1 || ndims > MAX_DIMS)
        return coll_fail("darray: %d dimensions (1 to %d)", ndims, MAX_DIMS);
    for (int i = 0; i < ndims; i++) {
        if (fits_int(gsizes[i], "darray gsize"))
            return dual_finish(out, NULL, TESS_ERR_ARG, m, MPI_ERR_ARG, "darray", 0), -1;
        g[i] = (int)gsizes[i];
        dist[i] = MPI_DISTRIBUTE_BLOCK;
        darg[i] = MPI_DISTRIBUTE_DFLT_DARG;
        ps[i] = psizes[i];
    }
    int tdist[MAX_DIMS], tdarg[MAX_DIMS];
    for (int i = 0; i < ndims; i++) {
        tdist[i] = TESS_DISTRIBUTE_BLOCK;
        tdarg[i] = TESS_DISTRIBUTE_DFLT_DARG;
    }
    int trc = tess_type_darray(size, rank, ndims, gsizes, tdist, tdarg, psizes,
                               order_c ? TESS_ORDER_C : TESS_ORDER_FORTRAN, old->t, &t);
    int mrc = MPI_Type_create_darray(size, rank, ndims, g, dist, darg, ps,
                                     order_c ? MPI_ORDER_C : MPI_ORDER_FORTRAN, old->m, &m);
    return dual_finish(out, t, trc, m, mrc, "darray", 0);
}

int coll_type_struct(int n, const int64_t *blocklens, const int64_t *displs_bytes,
                     const coll_type *types, coll_type *out)
{
    tess_type *t = NULL;
    MPI_Datatype m = MPI_DATATYPE_NULL;
    int mrc = MPI_ERR_ARG, trc = TESS_ERR_NOMEM;
    int *bl = malloc(sizeof *bl * (size_t)(n > 0 ? n : 1));
    MPI_Aint *dp = malloc(sizeof *dp * (size_t)(n > 0 ? n : 1));
    MPI_Datatype *mt = malloc(sizeof *mt * (size_t)(n > 0 ? n : 1));
    tess_type **tt = malloc(sizeof *tt * (size_t)(n > 0 ? n : 1));
    if (!bl || !dp || !mt || !tt)
        goto done;
    for (int i = 0; i < n; i++) {
        if (fits_int(blocklens[i], "struct blocklen")) {
            trc = TESS_ERR_ARG;
            goto done;
        }
        bl[i] = (int)blocklens[i];
        dp[i] = (MPI_Aint)displs_bytes[i];
        mt[i] = types[i].m;
        tt[i] = types[i].t;
    }
    trc = tess_type_struct(n, blocklens, displs_bytes, tt, &t);
    mrc = MPI_Type_create_struct(n, bl, dp, mt, &m);
done:
    free(bl);
    free(dp);
    free(mt);
    free(tt);
    return dual_finish(out, t, trc, m, mrc, "struct", 1);
}

int coll_type_resized(const coll_type *old, int64_t lb, int64_t extent, coll_type *out)
{
    tess_type *t = NULL;
    MPI_Datatype m = MPI_DATATYPE_NULL;
    int trc = tess_type_resized(old->t, lb, extent, &t);
    int mrc = MPI_Type_create_resized(old->m, (MPI_Aint)lb, (MPI_Aint)extent, &m);
    return dual_finish(out, t, trc, m, mrc, "resized", 0);
}


/* ============================================================== patterns */

int coll_pattern_init(coll_pattern *p, int nviews, int nmems, int ncalls)
{
    memset(p, 0, sizeof *p);
    if (nviews < 1 || nmems < 1 || ncalls < 1)
        return coll_fail("pattern: needs at least one view, memory type and call");
    p->views = calloc((size_t)nviews, sizeof *p->views);
    p->mems = calloc((size_t)nmems, sizeof *p->mems);
    p->calls = calloc((size_t)ncalls, sizeof *p->calls);
    if (!p->views || !p->mems || !p->calls) {
        coll_pattern_free(p);
        return coll_fail("pattern: out of memory");
    }
    p->nviews = nviews;
    p->nmems = nmems;
    p->ncalls = ncalls;
    return 0;
}

void coll_pattern_free(coll_pattern *p)
{
    if (p->views)
        for (int i = 0; i < p->nviews; i++) {
            coll_type_free(&p->views[i].etype);
            coll_type_free(&p->views[i].filetype);
        }
    if (p->mems)
        for (int i = 0; i < p->nmems; i++)
            coll_type_free(&p->mems[i]);
    free(p->views);
    free(p->mems);
    free(p->calls);
    p->views = NULL;
    p->mems = NULL;
    p->calls = NULL;
    p->nviews = p->nmems = p->ncalls = 0;
}

void coll_note(coll_pattern *p, const char *fmt, ...)
{
    size_t len = strlen(p->notes);
    if (len + 4 >= sizeof p->notes)
        return;
    p->notes[len++] = ' ';
    p->notes[len++] = ' ';
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->notes + len, sizeof p->notes - len - 1, fmt, ap);
    va_end(ap);
    len = strlen(p->notes);
    p->notes[len] = '\n';
    p->notes[len + 1] = '\0';
}
