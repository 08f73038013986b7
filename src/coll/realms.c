/*
 * realms.c - file realms (paper 002): which part of the file each aggregator owns in a
 * two-phase call (see twophase.c), the periodic realm type of cyclic realms, and the check of
 * the realm types tess_file_set_realms installs.
 */
#include "coll/tp.h"

#include <stdlib.h>
#include <string.h>

int tessi_realms_cyclic(int naggs, int64_t block, tessi_realm_type *out)
{
    tess_type *blk = NULL;
    int64_t ext;
    if (!tessi_mul(block, naggs, &ext))
        return tessi_error(TESS_ERR_OVERFLOW, "tess_file_open_group: tess_realm_size %lld times "
                           "%d aggregators overflows", (long long)block, naggs);
    int rc = tess_type_contiguous(block, TESS_BYTE, &blk);
    if (rc == 0)
        rc = tess_type_resized(blk, 0, ext, &out->type);
    tess_type_free(blk);
    out->anchor = 0;
    out->shift = block;
    return rc;
}

/* The regions of one tile, adjacent ones merged (at most cap of them: num_regions). */
typedef struct {
    tess_region *r;
    int64_t n, cap;
} tile;

static int tile_region(void *arg, const tessi_run *run)
{
    tile *tl = arg;
    for (int64_t k = 0; k < run->n; k++) {
        int64_t off = run->off + k * run->stride;
        if (tl->n > 0 && tl->r[tl->n - 1].off + tl->r[tl->n - 1].len == off)
            tl->r[tl->n - 1].len += run->len;
        else if (tl->n < tl->cap)
            tl->r[tl->n++] = (tess_region){off, run->len};
        else
            return tessi_error(TESS_ERR_INTERNAL, "tess_file_set_realms: more regions than the "
                               "type counts");
    }
    return 0;
}

int tessi_realms_check(const tess_type *t, int64_t shift, int naggs)
{
    int64_t period = t->extent, nreg = t->num_regions, n = 0, size;
    if (t->size <= 0 || period <= 0 || !t->monotonic || t->true_ub - t->true_lb > period)
        return tessi_error(TESS_ERR_VIEW, "tess_file_set_realms: the realm type must have data "
                           "in increasing, non-overlapping regions within its extent");
    if (shift < 0 || !tessi_mul(t->size, naggs, &size) || size != period)
        return tessi_error(TESS_ERR_VIEW, "tess_file_set_realms: %d realms of %lld bytes do not "
                           "fill the period of %lld bytes", naggs, (long long)t->size,
                           (long long)period);
    if (nreg > (INT64_C(1) << 20) / naggs)
        return tessi_error(TESS_ERR_UNSUPPORTED, "tess_file_set_realms: %lld regions per realm "
                           "tile are too many to check", (long long)nreg);
    tess_region *r = malloc(sizeof(tess_region) * (size_t)(3 * nreg * naggs + 1));
    tile tl = {.r = r, .cap = nreg};
    int rc = r ? tessi_walk(t, 0, 0, t->size, tile_region, &tl)
               : tessi_error(TESS_ERR_NOMEM, "tess_file_set_realms: out of memory");
    /* the tile's regions (r[0..tl.n)), shifted for each aggregator and wrapped into the period,
     * go after them */
    tess_region *all = r, *w = r ? r + tl.n : NULL;
    for (int a = 0; rc == 0 && a < naggs; a++)
        for (int64_t i = 0; i < tl.n; i++) {
            tess_region g = r[i];
            int64_t off = (int64_t)((((tessi_i128)g.off + (tessi_i128)a * shift) % period +
                                     period) % period);
            int64_t first = g.len < period - off ? g.len : period - off;
            w[n++] = (tess_region){off, first};
            if (first < g.len) /* wraps into the next period */
                w[n++] = (tess_region){0, g.len - first};
        }
    r = w;
    /* sort by offset (insertion sort on a bounded, mostly ordered list) and check the cover */
    for (int64_t i = 1; rc == 0 && i < n; i++)
        for (int64_t j = i; j > 0 && r[j - 1].off > r[j].off; j--) {
            tess_region x = r[j];
            r[j] = r[j - 1];
            r[j - 1] = x;
        }
    for (int64_t i = 0, at = 0; rc == 0 && i < n; at += r[i].len, i++)
        if (r[i].off != at)
            rc = tessi_error(TESS_ERR_VIEW, "tess_file_set_realms: the realms %s at byte %lld "
                             "of the period", r[i].off < at ? "overlap" : "leave a hole",
                             (long long)(r[i].off < at ? r[i].off : at));
    free(all);
    return rc;
}

/* ------------------------------------------------------------------ realms of a call */

static int64_t round_up(int64_t v, int64_t m) { return (int64_t)(((tessi_i128)v + m - 1) / m * m); }

/* Periodic realm of aggregator a: tiles from the one holding glo. */
static int periodic_realm(tp *p, const tessi_realm_type *pt, int a, realm *r)
{
    const tess_type *t = pt->type;
    tessi_i128 anchor = (tessi_i128)pt->anchor + (tessi_i128)a * pt->shift;
    tessi_i128 rel = (tessi_i128)p->glo - anchor - t->true_lb, k = rel / t->extent;
    if (rel < 0 && rel % t->extent)
        k--;
    tessi_i128 base = anchor + k * t->extent;
    if (base > INT64_MAX || base < INT64_MIN)
        return tessi_error(TESS_ERR_OVERFLOW, "two-phase: realm origin beyond int64");
    *r = (realm){.t = t, .base = (int64_t)base};
    int rc = tessi_stream_at(t, r->base, p->glo, &r->s0);
    if (rc == 0)
        rc = tessi_stream_at(t, r->base, p->ghi, &r->s1);
    r->floor = r->s0;
    return rc;
}

/* Contiguous realm [lo, hi) of file bytes from base (lo, hi clipped to the aggregate region). */
static void range_realm(tp *p, int64_t base, int64_t lo, int64_t hi, realm *r)
{
    lo = tessi_max64(lo, p->glo);
    hi = tessi_min64(hi, p->ghi);
    *r = (realm){.t = TESS_BYTE, .base = base, .contig = true};
    if (hi > lo) {
        r->s0 = lo - base;
        r->s1 = hi - base;
    }
    r->floor = r->s0;
}

/* Data bytes of my access below each of n file offsets (added into cum). */
static int my_cum(const tp *p, const int64_t *pts, int64_t n, int64_t *cum)
{
    const tessi_coll_access *a = p->a;
    for (int64_t i = 0; i < n && a->bytes > 0; i++) {
        int64_t s;
        int rc = tessi_tp_view_pos(p, pts[i], a->start, a->start + a->bytes, &s);
        if (rc)
            return rc;
        cum[i] = s - a->start;
    }
    return 0;
}

/* Balanced boundaries bnd[0..A]: where the data volume of all ranks crosses i/A of the total.
 * Collective: TP_LEVELS allreduces of (A - 1) * TP_SAMPLES values (workspace arrays). */
static int balanced_bounds(tp *p, int64_t *bnd)
{
    int A = p->A, nb = A - 1, rc = 0;
    int64_t total = 0, n = (int64_t)nb * TP_SAMPLES;
    int64_t *lo = bnd + A + 1, *hi = lo + nb, *pts = hi + nb, *cum = pts + n;
    for (int r = 0; r < p->P; r++)
        total += p->a->recs[r].bytes;
    bnd[0] = p->glo;
    bnd[A] = p->ghi;
    if (nb == 0)
        return 0;
    for (int i = 0; i < nb; i++) {
        lo[i] = p->glo;
        hi[i] = p->ghi;
    }
    for (int level = 0; level < TP_LEVELS; level++) {
        for (int64_t i = 0; i < nb; i++)
            for (int64_t j = 0; j < TP_SAMPLES; j++)
                pts[i * TP_SAMPLES + j] =
                    lo[i] + (int64_t)(((tessi_i128)(hi[i] - lo[i]) * (j + 1) + TP_SAMPLES - 1) /
                                      TP_SAMPLES);
        memset(cum, 0, sizeof(int64_t) * (size_t)n);
        if (p->rc == 0)
            note(p, my_cum(p, pts, n, cum));
        double t0 = tessi_now();
        rc = p->cm->allreduce(p->c->g.ctx, cum, n, TESS_REDUCE_SUM);
        p->xsec += tessi_now() - t0;
        if (rc)
            return rc;
        for (int64_t i = 0; i < nb; i++) {
            int64_t target = (int64_t)((tessi_i128)total * (i + 1) / A), j = 0;
            while (j < TP_SAMPLES - 1 && cum[i * TP_SAMPLES + j] < target)
                j++;
            if (j > 0)
                lo[i] = pts[i * TP_SAMPLES + j - 1];
            hi[i] = pts[i * TP_SAMPLES + j];
        }
    }
    for (int i = 0; i < nb; i++)
        bnd[i + 1] = tessi_max64(hi[i], bnd[i]);
    return 0;
}

/* Every aggregator's realm (the same on every rank). Returns communication failures; local
 * ones are noted. */
int tessi_tp_realms(tp *p)
{
    tessi_coll *c = p->c;
    int A = p->A, rc = 0;
    int64_t su = c->h.striping_unit ? c->h.striping_unit : INT64_C(1) << 20;
    p->align = 1;
    switch (c->h.realms) {
    case TESSI_REALM_EVEN: {
        int64_t z = (p->ghi - p->glo + A - 1) / A;
        for (int a = 0; a < A; a++)
            range_realm(p, p->glo + a * z, p->glo + a * z, p->glo + (a + 1) * z, &p->rl[a]);
        return 0;
    }
    case TESSI_REALM_ALIGNED: {
        int64_t start = p->glo / su * su, z = round_up((p->ghi - start + A - 1) / A, su);
        for (int a = 0; a < A; a++) {
            range_realm(p, start + a * z, start + a * z, start + (a + 1) * z, &p->rl[a]);
            p->rl[a].floor = 0;
        }
        p->align = su;
        return 0;
    }
    case TESSI_REALM_BALANCED: {
        int64_t *bnd = c->tp->bal;
        if ((rc = balanced_bounds(p, bnd)))
            return rc;
        for (int a = 0; a < A; a++)
            range_realm(p, bnd[a], bnd[a], bnd[a + 1], &p->rl[a]);
        return 0;
    }
    case TESSI_REALM_PERSISTENT:
        if (!c->periodic.type) {
            int64_t z = (p->ghi + A - 1) / A;
            tess_type *blk = NULL;
            if (c->h.striping_unit)
                z = round_up(z, c->h.striping_unit);
            if ((rc = tess_type_contiguous(z, TESS_BYTE, &blk)) == 0)
                rc = tess_type_resized(blk, 0, z * A, &c->periodic.type);
            tess_type_free(blk);
            if (rc) { /* no realms: the setup agreement stops the call everywhere */
                note(p, rc);
                for (int a = 0; a < A; a++)
                    p->rl[a] = (realm){.t = TESS_BYTE, .contig = true};
                return 0;
            }
            c->periodic.anchor = 0;
            c->periodic.shift = z;
            p->pfr_new = true;
        }
        break;
    default: /* cyclic and user: the periodic type was set at open or by tess_file_set_realms */
        break;
    }
    for (int a = 0; a < A; a++)
        if ((rc = periodic_realm(p, &c->periodic, a, &p->rl[a])))
            break;
    note(p, rc); /* overflow of a realm origin: no realms for this call */
    for (int a = 0; rc && a < A; a++)
        p->rl[a] = (realm){.t = TESS_BYTE, .contig = true};
    return 0;
}
