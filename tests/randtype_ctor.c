/*
 * randtype_ctor.c - one constructor level of the random-type generator: the Tessera type, the
 * oracle's byte map and bounds by MPI's rules, and the MPI type (see randtype_int.h).
 */
#include "randtype_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int64_t iabs64(int64_t x) { return x < 0 ? -x : x; }

static char *make_recipe(const params *p, node **kids)
{
    sbuf s = {0};
    const char *k0 = kids[0]->rec;
    rti_printf(&s, "%s(", rti_kind_name[p->kind]);
    switch (p->kind) {
    case K_CONTIG: rti_printf(&s, "%lld, %s", (long long)p->count, k0); break;
    case K_VECTOR:
    case K_HVECTOR:
        rti_printf(&s, "%lld, %lld, %lld, %s", (long long)p->count, (long long)p->blen,
                  (long long)p->stride, k0);
        break;
    case K_INDEXED:
    case K_HINDEXED:
    case K_BLOCKIDX:
    case K_HBLOCKIDX:
    case K_STRUCT: {
        int blk = p->kind == K_BLOCKIDX || p->kind == K_HBLOCKIDX;
        rti_printf(&s, "%lld, ", (long long)p->count);
        if (blk) {
            rti_printf(&s, "%lld, ", (long long)p->blen);
        } else {
            rti_printf(&s, "{");
            for (int64_t b = 0; b < p->count; b++)
                rti_printf(&s, "%s%lld", b ? "," : "", (long long)p->bl[b]);
            rti_printf(&s, "}, ");
        }
        rti_printf(&s, "{");
        for (int64_t b = 0; b < p->count; b++)
            rti_printf(&s, "%s%lld", b ? "," : "", (long long)p->dp[b]);
        rti_printf(&s, "}, ");
        if (p->kind == K_STRUCT) {
            rti_printf(&s, "{");
            for (int64_t b = 0; b < p->count; b++)
                rti_printf(&s, "%s%s", b ? ", " : "", kids[p->kid[b]]->rec);
            rti_printf(&s, "}");
        } else {
            rti_printf(&s, "%s", k0);
        }
        break;
    }
    case K_RESIZED:
        rti_printf(&s, "%s, lb %lld, extent %lld", k0, (long long)p->rlb, (long long)p->rext);
        break;
    case K_SUBARRAY:
    case K_DARRAY: {
        if (p->kind == K_DARRAY)
            rti_printf(&s, "size %d, rank %d, ", p->nprocs, p->rank);
        rti_printf(&s, "%d, {", p->ndims);
        for (int d = 0; d < p->ndims; d++)
            rti_printf(&s, "%s%lld", d ? "," : "", (long long)p->sizes[d]);
        if (p->kind == K_SUBARRAY) {
            rti_printf(&s, "}, {");
            for (int d = 0; d < p->ndims; d++)
                rti_printf(&s, "%s%lld", d ? "," : "", (long long)p->subs[d]);
            rti_printf(&s, "}, {");
            for (int d = 0; d < p->ndims; d++)
                rti_printf(&s, "%s%lld", d ? "," : "", (long long)p->starts[d]);
        } else {
            static const char *dn[] = {"?", "block", "cyclic", "none"};
            rti_printf(&s, "}, {");
            for (int d = 0; d < p->ndims; d++)
                rti_printf(&s, "%s%s", d ? "," : "", dn[p->distr[d]]);
            rti_printf(&s, "}, {");
            for (int d = 0; d < p->ndims; d++)
                rti_printf(&s, "%s%d", d ? "," : "", p->darg[d]);
            rti_printf(&s, "}, {");
            for (int d = 0; d < p->ndims; d++)
                rti_printf(&s, "%s%d", d ? "," : "", p->psz[d]);
        }
        rti_printf(&s, "}, %s, %s", p->order == TESS_ORDER_C ? "C" : "Fortran", k0);
        break;
    }
    }
    rti_printf(&s, ")");
    return rti_take(&s);
}

static int tess_make(const params *p, node **kids, tess_type **out)
{
    tess_type *t0 = kids[0]->t;
    switch (p->kind) {
    case K_CONTIG: return tess_type_contiguous(p->count, t0, out);
    case K_VECTOR: return tess_type_vector(p->count, p->blen, p->stride, t0, out);
    case K_HVECTOR: return tess_type_hvector(p->count, p->blen, p->stride, t0, out);
    case K_INDEXED: return tess_type_indexed(p->count, p->bl, p->dp, t0, out);
    case K_HINDEXED: return tess_type_hindexed(p->count, p->bl, p->dp, t0, out);
    case K_BLOCKIDX: return tess_type_blockindexed(p->count, p->blen, p->dp, t0, out);
    case K_HBLOCKIDX: return tess_type_hblockindexed(p->count, p->blen, p->dp, t0, out);
    case K_STRUCT: {
        tess_type *ts[MAXBLOCKS];
        for (int64_t b = 0; b < p->count; b++)
            ts[b] = kids[p->kid[b]]->t;
        return tess_type_struct(p->count, p->bl, p->dp, ts, out);
    }
    case K_RESIZED: return tess_type_resized(t0, p->rlb, p->rext, out);
    case K_SUBARRAY:
        return tess_type_subarray(p->ndims, p->sizes, p->subs, p->starts, p->order, t0, out);
    default:
        return tess_type_darray(p->nprocs, p->rank, p->ndims, p->sizes, p->distr, p->darg,
                                p->psz, p->order, t0, out);
    }
}

#ifdef TESS_TEST_MPI
static int set_by_ctor(int kind) { return kind == K_RESIZED || kind == K_SUBARRAY || kind == K_DARRAY; }

static int mpi_make(const params *p, node **kids, MPI_Datatype *out)
{
    MPI_Datatype m0 = kids[0]->m;
    int ib[MAXBLOCKS], id[MAXBLOCKS];
    MPI_Aint ad[MAXBLOCKS];
    MPI_Datatype ms[MAXBLOCKS];
    for (int64_t b = 0; b < p->count && b < MAXBLOCKS; b++) {
        ib[b] = (int)p->bl[b];
        id[b] = (int)p->dp[b];
        ad[b] = (MPI_Aint)p->dp[b];
        ms[b] = kids[p->kid[b]]->m;
    }
    int cnt = (int)p->count;
    switch (p->kind) {
    case K_CONTIG: return MPI_Type_contiguous(cnt, m0, out);
    case K_VECTOR: return MPI_Type_vector(cnt, (int)p->blen, (int)p->stride, m0, out);
    case K_HVECTOR: return MPI_Type_create_hvector(cnt, (int)p->blen, p->stride, m0, out);
    case K_INDEXED: return MPI_Type_indexed(cnt, ib, id, m0, out);
    case K_HINDEXED: return MPI_Type_create_hindexed(cnt, ib, ad, m0, out);
    case K_BLOCKIDX: return MPI_Type_create_indexed_block(cnt, (int)p->blen, id, m0, out);
    case K_HBLOCKIDX: return MPI_Type_create_hindexed_block(cnt, (int)p->blen, ad, m0, out);
    case K_STRUCT: return MPI_Type_create_struct(cnt, ib, ad, ms, out);
    case K_RESIZED: return MPI_Type_create_resized(m0, p->rlb, p->rext, out);
    case K_SUBARRAY: {
        int sz[3], ss[3], st[3];
        for (int d = 0; d < p->ndims; d++) {
            sz[d] = (int)p->sizes[d];
            ss[d] = (int)p->subs[d];
            st[d] = (int)p->starts[d];
        }
        return MPI_Type_create_subarray(p->ndims, sz, ss, st,
                                        p->order == TESS_ORDER_C ? MPI_ORDER_C
                                                                 : MPI_ORDER_FORTRAN,
                                        m0, out);
    }
    default: {
        int gs[3], di[3], da[3], ps[3];
        for (int d = 0; d < p->ndims; d++) {
            gs[d] = (int)p->sizes[d];
            di[d] = p->distr[d] == TESS_DISTRIBUTE_BLOCK    ? MPI_DISTRIBUTE_BLOCK
                    : p->distr[d] == TESS_DISTRIBUTE_CYCLIC ? MPI_DISTRIBUTE_CYCLIC
                                                            : MPI_DISTRIBUTE_NONE;
            da[d] = p->darg[d] == TESS_DISTRIBUTE_DFLT_DARG ? MPI_DISTRIBUTE_DFLT_DARG
                                                            : p->darg[d];
            ps[d] = p->psz[d];
        }
        return MPI_Type_create_darray(p->nprocs, p->rank, p->ndims, gs, di, da, ps,
                                      p->order == TESS_ORDER_C ? MPI_ORDER_C
                                                               : MPI_ORDER_FORTRAN,
                                      m0, out);
    }
    }
}

/* Build the MPI type of n and make its lb/extent the oracle's (MPI pads struct extents). */
static int mpi_node(ctx *c, const params *p, node **kids, node *n)
{
    MPI_Datatype m;
    if (p->kind == K_DARRAY && n->n == 0) {
        /* Open MPI 4.1 gives an empty darray true bounds (INT64_MAX, 1) that later make a struct
         * holding it pack its second instance at the wrong place: use the equivalent empty
         * type with the darray's bounds */
        MPI_Datatype z;
        MPI_Type_contiguous(0, MPI_BYTE, &z);
        MPI_Type_create_resized(z, n->lb, n->ub - n->lb, &m);
        MPI_Type_free(&z);
    } else if (mpi_make(p, kids, &m) != MPI_SUCCESS) {
        snprintf(rti_errbuf, sizeof rti_errbuf, "MPI constructor failed for %s", n->rec);
        return -1;
    }
    MPI_Aint lb, ext;
    MPI_Type_get_extent(m, &lb, &ext);
    /* Open MPI 4.1 packs the second instance of a struct with blocks of empty types at the wrong
     * place even when its reported bounds are right (struct {2 char @-6, 1 empty darray of
     * extent 2880 @3606, 1 @-2330}: extent 8816, yet instance 1 is read near 8706); the same
     * type resized to the same bounds packs right */
    int force = n->phantom;
    if (lb != n->lb || ext != n->ub - n->lb || force) {
        /* alignment padding: MPI rounds the extent up for the alignment of its elements (the
         * standard's epsilon). Tessera and MPICH pad structs; Open MPI 4.1 pads h-variants too
         * (sometimes by more than one step: hindexed of 11 blocks of 14 int64 gets 1184 for
         * 1169) but not a struct with a resized member; MPICH 4.0 does not pad a struct whose
         * members are all of one type (it builds it as hindexed). */
        int64_t ours = n->ub - n->lb;
        int pad = lb == n->lb && ((ext > ours && ext - ours < 16 && ext % 2 == 0) ||
                                  (p->kind == K_STRUCT && ext < ours && ours - ext < n->align));
        if (lb == n->lb && ext == n->ub - n->lb)
            ; /* forced */
        else if (pad)
            c->pads++;
        else if (n->phantom || (n->nodata && !set_by_ctor(p->kind)))
            c->phantoms++; /* MPI libraries differ on blocks of empty types with bounds and on
                              types whose blocks all have length 0 (MPICH gives vector(3, 0, 5)
                              extent 20, Open MPI 0, Tessera 0) */
        else if (n->sticky && lb == n->sticky_lb && ext == n->sticky_ub - n->sticky_lb)
            c->stickies++; /* the MPI standard's sticky markers (Open MPI); MPICH and Tessera
                              take the bounds over all blocks */
        else
            rti_printf(&c->note, "MPI lb %lld extent %lld, oracle lb %lld extent %lld: %s\n",
                      (long long)lb, (long long)ext, (long long)n->lb,
                      (long long)(n->ub - n->lb), n->rec);
        MPI_Datatype r;
        MPI_Type_create_resized(m, n->lb, n->ub - n->lb, &r);
        n->markers = 1; /* MPI's type now carries lb/ub markers */
        MPI_Type_free(&m);
        m = r;
    }
    n->m = m;
    n->m_owned = 1;
    return 0;
}
#endif

/* One constructor level over freshly generated children. */
node *rti_gen_ctor(ctx *c, int kind, int depth, int64_t budget)
{
    node *kids[MAXKIDS] = {NULL, NULL, NULL};
    int nkids = 1;
    node *n = NULL;
    place *pl = NULL;
    if (kind == K_STRUCT) {
        nkids = (int)rt_int(c->r, 1, MAXKIDS);
        for (int k = 0; k < nkids; k++) {
            int d = (int)rt_int(c->r, 0, depth - 1);
            kids[k] = rti_gen(c, d, budget / (nkids * rt_int(c->r, 1, 3)) + 1, 0);
            if (!kids[k])
                goto fail;
        }
    } else if (kind == K_SUBARRAY || kind == K_DARRAY) {
        kids[0] = rti_gen(c, depth - 1, budget / rt_int(c->r, 4, 64) + 1, 0);
    } else {
        kids[0] = rti_gen(c, depth - 1, budget / rt_int(c->r, 1, 8) + 1, 0);
    }
    if (!kids[0])
        goto fail;
    /* MPICH 4.0 (yaksa) divides by zero packing blocks of an empty type of extent 0 */
    for (int k = 0; c->use_mpi && k < nkids; k++) {
        if (kids[k]->n == 0 && rti_ext_of(kids[k]) == 0) {
            rti_node_free(kids[k]);
            if (!(kids[k] = rti_make_leaf(c, budget)))
                goto fail;
        }
    }
    /* Open MPI 4.1 rejects subarray and darray of an empty old type or one of extent 0
     * (MPI_ERR_TYPE) */
    if (c->use_mpi && (kind == K_SUBARRAY || kind == K_DARRAY) &&
        (rti_ext_of(kids[0]) == 0 || kids[0]->n == 0))
        kind = K_CONTIG;

    for (int attempt = 0; attempt < 24; attempt++) {
        params p;
        memset(&p, 0, sizeof p);
        p.kind = kind;
        rti_pick_params(c, &p, kids, nkids, budget, attempt);
        int set_bounds;
        int64_t slb = 0, sub = 0;
        int64_t np = rti_placements(&p, kids, &pl, &set_bounds, &slb, &sub);
        if (np < 0)
            goto fail;
        /* size and bounds first, cheaply */
        int64_t size = 0, lb = 0, ub = 0, big = 0, mlb = 0, mub = 0, align = 1;
        int any = 0, phantom = 0, marked = 0, unmarked = 0;
        for (int64_t i = 0; i < np; i++) {
            const node *k = kids[pl[i].kid];
            if (pl[i].blen == 0)
                continue;
            if (k->phantom || k->n == 0)
                phantom = 1;
            if (k->n > 0 && k->align > align)
                align = k->align;
            size += pl[i].blen * k->n;
            int64_t lo = pl[i].disp + k->lb, hi = pl[i].disp + (pl[i].blen - 1) * rti_ext_of(k) + k->ub;
            if (!any || lo < lb)
                lb = lo;
            if (!any || hi > ub)
                ub = hi;
            any = 1;
            if (k->markers) { /* the bounds over the blocks that carry lb/ub markers only */
                if (!marked || lo < mlb)
                    mlb = lo;
                if (!marked || hi > mub)
                    mub = hi;
                marked = 1;
            } else {
                unmarked = 1;
            }
            if (k->n) {
                int64_t tl = pl[i].disp + k->tlb,
                        th = pl[i].disp + (pl[i].blen - 1) * rti_ext_of(k) + k->tub;
                if (iabs64(tl) > big)
                    big = iabs64(tl);
                if (iabs64(th) > big)
                    big = iabs64(th);
            }
        }
        if (set_bounds) {
            lb = slb;
            ub = sub;
        }
        if (kind == K_STRUCT && (ub - lb) % align)
            ub += align - (ub - lb) % align;
        if (iabs64(lb) > big)
            big = iabs64(lb);
        if (iabs64(ub) > big)
            big = iabs64(ub);
        if (size > budget || big > c->max_ext) {
            free(pl);
            pl = NULL;
            continue;
        }
        n = calloc(1, sizeof *n);
        if (!n)
            goto fail;
        n->n = size;
        n->lb = lb;
        n->ub = ub;
        n->align = size > 0 ? align : 1;
        n->phantom = phantom;
        n->nodata = !any;
        n->markers = set_bounds || marked;
        n->sticky = !set_bounds && marked && unmarked;
        n->sticky_lb = mlb;
        n->sticky_ub = mub;
        n->off = malloc((size_t)(size ? size : 1) * sizeof *n->off);
        if (!n->off)
            goto fail;
        int64_t w = 0;
        for (int64_t i = 0; i < np; i++) {
            const node *k = kids[pl[i].kid];
            int64_t ke = rti_ext_of(k);
            for (int64_t j = 0; j < pl[i].blen; j++) {
                int64_t base = pl[i].disp + j * ke;
                for (int64_t b = 0; b < k->n; b++)
                    n->off[w++] = base + k->off[b];
            }
        }
        free(pl);
        pl = NULL;
        rti_true_bounds(n);
        if (((c->flags & RT_MONOTONIC) && !n->mono) ||
            ((c->flags & RT_NONNEG) && (n->lb < 0 || n->tlb < 0))) {
            rti_node_free(n);
            n = NULL;
            continue;
        }
        n->rec = make_recipe(&p, kids);
        if (!n->rec)
            goto fail;
        int d = 0;
        for (int k = 0; k < nkids; k++)
            if (kids[k]->depth > d)
                d = kids[k]->depth;
        n->depth = d + 1;
        n->ctors = 1u << kind;
        for (int k = 0; k < nkids; k++)
            n->ctors |= kids[k]->ctors;
        int rc = tess_make(&p, kids, &n->t);
        if (rc != 0) {
            snprintf(rti_errbuf, sizeof rti_errbuf, "%s failed: %d (%s): %s\n  call: %s",
                     rti_kind_name[kind], rc, tess_strerror(rc), tess_last_error(), n->rec);
            n->t = NULL;
            c->failed = 1;
            goto fail;
        }
#ifdef TESS_TEST_MPI
        if (c->use_mpi && mpi_node(c, &p, kids, n) != 0) {
            c->failed = 1;
            goto fail;
        }
#endif
        for (int k = 0; k < nkids; k++)
            rti_node_free(kids[k]);
        return n;
    }
    /* nothing fitted: a predefined type instead */
    for (int k = 0; k < nkids; k++)
        rti_node_free(kids[k]);
    return rti_make_leaf(c, budget);
fail:
    free(pl);
    rti_node_free(n);
    for (int k = 0; k < nkids; k++)
        rti_node_free(kids[k]);
    return NULL;
}
