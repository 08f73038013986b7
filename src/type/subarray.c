/*
 * subarray.c - tess_type_subarray and tess_type_darray (MPI_Type_create_subarray and
 * MPI_Type_create_darray semantics), built only from the public constructors so that
 * normalization applies and the result costs O(ndims) memory whatever the array sizes.
 *
 * Both types are the cartesian product of one index set per dimension, visited in array order
 * (the fastest dimension innermost), with lower bound 0 and the extent of the whole array.
 * Every index set either type produces has the same shape, `dimset` below: nfull blocks of blen
 * consecutive indices spaced period apart, then possibly one shorter block (the tail). A
 * subarray dimension is one block; a BLOCK distribution is one block (perhaps cut short by the
 * array end, perhaps empty); a CYCLIC(darg) distribution is nfull blocks of darg plus the tail
 * the array end cuts off. So one builder serves both.
 */
#include "type/type.h"

#include <stdio.h>
#include <stdlib.h>

/*
 * The indices one process holds in one dimension of g indices: nfull blocks of blen indices,
 * block k at first + k * period, then a block of tail indices (0 < tail < blen) at
 * first + nfull * period when tail > 0. Canonical form (dimset_canon): a lone block is a full
 * block (nfull 1, tail 0), and period equals blen unless there are two or more blocks, so that
 * every field is at most g and products with other dimensions' sizes cannot overflow.
 */
typedef struct {
    int64_t g;
    int64_t first, blen, period, nfull, tail;
} dimset;

static void dimset_canon(dimset *d)
{
    if (d->nfull == 0 && d->tail > 0) {
        d->nfull = 1;
        d->blen = d->tail;
        d->tail = 0;
    }
    if (d->nfull + (d->tail > 0) < 2)
        d->period = d->blen;
}

static bool dimset_empty(const dimset *d) { return d->nfull == 0; }

static bool dimset_full(const dimset *d)
{
    return d->first == 0 && d->nfull == 1 && d->blen == d->g && d->tail == 0;
}

/*
 * Fold a full faster dimension `fast` into the next slower one `slow`: the two become one
 * dimension of fast.g * slow.g indices, which saves a loop level (a 10^4 x 10^4 x 10^4 array with
 * whole rows selected is then a 2-level type). Products are at most the array's element count,
 * which the caller has checked fits in int64.
 */
static void dimset_fold(dimset *slow, const dimset *fast)
{
    slow->g *= fast->g;
    slow->first *= fast->g;
    slow->blen *= fast->g;
    slow->period *= fast->g;
    slow->tail *= fast->g;
}

/* Re-issue the message a failed constructor left, prefixed with the public function's name. */
static int wrap_error(int rc, const char *fn)
{
    char msg[400];
    snprintf(msg, sizeof msg, "%s", tess_last_error());
    return tessi_error(rc, "%s: %s", fn, msg);
}

/*
 * One loop level: the index set d of a dimension whose consecutive indices are `stride` bytes
 * apart, each index holding one instance of `inner` (placed by its typemap from the index's
 * origin). *out holds the data of the whole dimension, relative to index 0's origin. With a
 * tail the level is a struct {full blocks, tail} whose two members share one element node, so
 * memory stays O(ndims) (the element is referenced twice, stored once).
 */
static int build_dim(const char *fn, const dimset *d, int64_t stride, tess_type *inner,
                     tess_type **out)
{
    tess_type *elem = NULL, *members[2] = {NULL, NULL};
    int64_t blens[2] = {1, 1}, displs[2];
    int64_t n = 0;
    int rc;

    /* blocks of consecutive indices step by the element's extent, so make it the stride */
    if (inner->lb == 0 && inner->extent == stride) {
        elem = tess_type_ref(inner);
    } else {
        rc = tess_type_resized(inner, 0, stride, &elem);
        if (rc)
            goto fail;
    }
    rc = tess_type_hvector(d->nfull, d->blen, d->period * stride, elem, &members[n]);
    if (rc)
        goto fail;
    displs[n++] = d->first * stride;
    if (d->tail > 0) {
        rc = tess_type_contiguous(d->tail, elem, &members[n]);
        if (rc)
            goto fail;
        displs[n++] = (d->first + d->nfull * d->period) * stride;
    }
    rc = tess_type_struct(n, blens, displs, members, out);
fail:
    tess_type_free(members[0]);
    tess_type_free(members[1]);
    tess_type_free(elem);
    return rc ? wrap_error(rc, fn) : 0;
}

/*
 * The product type: dims[0..n) fastest first, old the element type. Lower bound 0, extent
 * old's extent times the number of array elements; empty (size 0) if any set is empty.
 */
static int build_product(const char *fn, dimset *dims, int n, tess_type *old, tess_type **out)
{
    tess_type *cur = NULL, *next = NULL;
    int64_t elements = 1, total, stride;
    bool empty = false;
    int rc, i, pending;

    for (i = 0; i < n; i++) {
        if (!tessi_mul(elements, dims[i].g, &elements))
            return tessi_error(TESS_ERR_OVERFLOW,
                               "%s: the array's element count overflows int64 at dimension "
                               "size %lld", fn, (long long)dims[i].g);
        dimset_canon(&dims[i]);
        empty = empty || dimset_empty(&dims[i]);
    }
    if (!tessi_mul(elements, old->extent, &total))
        return tessi_error(TESS_ERR_OVERFLOW,
                           "%s: %lld elements of extent %lld overflow int64", fn,
                           (long long)elements, (long long)old->extent);
    if (empty) {
        rc = tess_type_contiguous(0, old, &cur);
        if (rc) {
            rc = wrap_error(rc, fn);
            goto fail;
        }
    } else {
        cur = tess_type_ref(old);
        stride = old->extent;
        pending = 0; /* dims[pending] is the fastest dimension not yet built */
        for (i = 1; i <= n; i++) {
            if (i < n && dimset_full(&dims[pending])) {
                dimset_fold(&dims[i], &dims[pending]);
                pending = i;
                continue;
            }
            rc = build_dim(fn, &dims[pending], stride, cur, &next);
            if (rc)
                goto fail;
            tess_type_free(cur);
            cur = next;
            next = NULL;
            stride *= dims[pending].g; /* <= total: cannot overflow */
            pending = i;
        }
    }
    rc = tess_type_resized(cur, 0, total, out);
    if (rc)
        rc = wrap_error(rc, fn);
fail:
    tess_type_free(cur);
    return rc;
}

int tess_type_subarray(int ndims, const int64_t *sizes, const int64_t *subsizes,
                       const int64_t *starts, int order, tess_type *old, tess_type **out)
{
    static const char fn[] = "tess_type_subarray";
    dimset *dims = NULL;
    int rc, i, d;

    if (ndims < 1)
        return tessi_error(TESS_ERR_ARG, "%s: ndims %d < 1", fn, ndims);
    if (!sizes || !subsizes || !starts || !old || !out)
        return tessi_error(TESS_ERR_ARG, "%s: NULL %s", fn,
                           !sizes ? "sizes" : !subsizes ? "subsizes" : !starts ? "starts"
                           : !old ? "old type" : "out");
    if (order != TESS_ORDER_C && order != TESS_ORDER_FORTRAN)
        return tessi_error(TESS_ERR_ARG,
                           "%s: order %d is neither TESS_ORDER_C nor TESS_ORDER_FORTRAN", fn,
                           order);
    for (i = 0; i < ndims; i++) {
        if (sizes[i] <= 0)
            return tessi_error(TESS_ERR_ARG, "%s: sizes[%d] = %lld must be > 0", fn, i,
                               (long long)sizes[i]);
        if (subsizes[i] <= 0 || subsizes[i] > sizes[i])
            return tessi_error(TESS_ERR_ARG, "%s: subsizes[%d] = %lld must be in 1..%lld", fn,
                               i, (long long)subsizes[i], (long long)sizes[i]);
        if (starts[i] < 0 || starts[i] > sizes[i] - subsizes[i])
            return tessi_error(TESS_ERR_ARG,
                               "%s: starts[%d] = %lld must be in 0..%lld (sizes - subsizes)",
                               fn, i, (long long)starts[i],
                               (long long)(sizes[i] - subsizes[i]));
    }
    dims = malloc((size_t)ndims * sizeof *dims);
    if (!dims)
        return tessi_error(TESS_ERR_NOMEM, "%s: no memory for %d dimensions", fn, ndims);
    for (i = 0; i < ndims; i++) {
        d = order == TESS_ORDER_C ? ndims - 1 - i : i; /* dims[] runs fastest first */
        dims[i] = (dimset){.g = sizes[d], .first = starts[d], .blen = subsizes[d],
                           .period = subsizes[d], .nfull = 1, .tail = 0};
    }
    rc = build_product(fn, dims, ndims, old, out);
    free(dims);
    return rc;
}

/*
 * The indices process coordinate r of p holds in a dimension of g indices distributed in
 * blocks of b (BLOCK: one block of b per process, b * p >= g; CYCLIC: blocks of b dealt round
 * robin). Either way the blocks are [r*b + k*p*b, +b) clipped to [0, g).
 */
static dimset distribute(int64_t g, int64_t p, int64_t r, int64_t b)
{
    dimset d = {.g = g, .first = r * b, .blen = b, .period = p * b, .nfull = 0, .tail = 0};
    int64_t nblocks, last_start, last_len;

    if (d.first >= g)
        return d;
    nblocks = (g - d.first - 1) / d.period + 1; /* blocks starting below g; no overflow */
    last_start = d.first + (nblocks - 1) * d.period;
    last_len = g - last_start < b ? g - last_start : b;
    d.nfull = last_len == b ? nblocks : nblocks - 1;
    d.tail = last_len == b ? 0 : last_len;
    return d;
}

int tess_type_darray(int size, int rank, int ndims, const int64_t *gsizes, const int *distribs,
                     const int *dargs, const int *psizes, int order, tess_type *old,
                     tess_type **out)
{
    static const char fn[] = "tess_type_darray";
    dimset *dims = NULL;
    int64_t procs = 1, q, coord, b;
    int rc, i, d;

    if (size < 1)
        return tessi_error(TESS_ERR_ARG, "%s: size %d < 1", fn, size);
    if (rank < 0 || rank >= size)
        return tessi_error(TESS_ERR_ARG, "%s: rank %d not in 0..%d", fn, rank, size - 1);
    if (ndims < 1)
        return tessi_error(TESS_ERR_ARG, "%s: ndims %d < 1", fn, ndims);
    if (!gsizes || !distribs || !dargs || !psizes || !old || !out)
        return tessi_error(TESS_ERR_ARG, "%s: NULL %s", fn,
                           !gsizes ? "gsizes" : !distribs ? "distribs" : !dargs ? "dargs"
                           : !psizes ? "psizes" : !old ? "old type" : "out");
    if (order != TESS_ORDER_C && order != TESS_ORDER_FORTRAN)
        return tessi_error(TESS_ERR_ARG,
                           "%s: order %d is neither TESS_ORDER_C nor TESS_ORDER_FORTRAN", fn,
                           order);
    for (i = 0; i < ndims; i++) {
        if (gsizes[i] <= 0)
            return tessi_error(TESS_ERR_ARG, "%s: gsizes[%d] = %lld must be > 0", fn, i,
                               (long long)gsizes[i]);
        if (psizes[i] <= 0)
            return tessi_error(TESS_ERR_ARG, "%s: psizes[%d] = %d must be > 0", fn, i,
                               psizes[i]);
        if (distribs[i] != TESS_DISTRIBUTE_BLOCK && distribs[i] != TESS_DISTRIBUTE_CYCLIC &&
            distribs[i] != TESS_DISTRIBUTE_NONE)
            return tessi_error(TESS_ERR_ARG,
                               "%s: distribs[%d] = %d is not TESS_DISTRIBUTE_BLOCK, _CYCLIC "
                               "or _NONE", fn, i, distribs[i]);
        if (dargs[i] != TESS_DISTRIBUTE_DFLT_DARG && dargs[i] <= 0)
            return tessi_error(TESS_ERR_ARG,
                               "%s: dargs[%d] = %d must be > 0 or TESS_DISTRIBUTE_DFLT_DARG",
                               fn, i, dargs[i]);
        if (distribs[i] == TESS_DISTRIBUTE_NONE && psizes[i] != 1)
            return tessi_error(TESS_ERR_ARG,
                               "%s: dimension %d is TESS_DISTRIBUTE_NONE but psizes[%d] = %d "
                               "(must be 1)", fn, i, i, psizes[i]);
        if (distribs[i] == TESS_DISTRIBUTE_BLOCK && dargs[i] != TESS_DISTRIBUTE_DFLT_DARG &&
            (int64_t)dargs[i] * psizes[i] < gsizes[i])
            return tessi_error(TESS_ERR_ARG,
                               "%s: BLOCK dimension %d: dargs * psizes = %d * %d < gsizes = "
                               "%lld (the blocks do not cover the array)", fn, i, dargs[i],
                               psizes[i], (long long)gsizes[i]);
        /* psizes are positive ints and size an int: stop before the product can overflow */
        procs *= psizes[i];
        if (procs > size)
            return tessi_error(TESS_ERR_ARG,
                               "%s: the process grid (psizes) has more than size = %d "
                               "processes", fn, size);
    }
    if (procs != size)
        return tessi_error(TESS_ERR_ARG,
                           "%s: the process grid (psizes) has %lld processes, size is %d", fn,
                           (long long)procs, size);
    dims = malloc((size_t)ndims * sizeof *dims);
    if (!dims)
        return tessi_error(TESS_ERR_NOMEM, "%s: no memory for %d dimensions", fn, ndims);
    /*
     * The process grid is row-major whatever the array order (as MPI_Cart_create numbers it):
     * coordinate d is (rank / prod(psizes[d+1..])) % psizes[d].
     */
    q = size;
    for (d = 0; d < ndims; d++) {
        q /= psizes[d];
        coord = (rank / q) % psizes[d];
        if (distribs[d] == TESS_DISTRIBUTE_NONE)
            b = gsizes[d];
        else if (dargs[d] != TESS_DISTRIBUTE_DFLT_DARG)
            b = dargs[d];
        else if (distribs[d] == TESS_DISTRIBUTE_BLOCK)
            b = (gsizes[d] + psizes[d] - 1) / psizes[d];
        else
            b = 1;
        i = order == TESS_ORDER_C ? ndims - 1 - d : d; /* dims[] runs fastest first */
        dims[i] = distribute(gsizes[d], psizes[d], coord, b);
    }
    rc = build_product(fn, dims, ndims, old, out);
    free(dims);
    return rc;
}
