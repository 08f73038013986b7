/*
 * view.c - file views: validation by the MPI-IO rules, and the file-region source that maps an
 * access (offset in etypes, length in bytes) to file regions without walking from the start.
 */
#include "view/view.h"

#include "type/walk.h"

void tessi_view_init(tessi_view *v)
{
    *v = (tessi_view){.disp = 0, .etype = TESS_BYTE, .filetype = TESS_BYTE, .esize = 1,
                      .fsize = 1, .fextent = 1};
}

void tessi_view_release(tessi_view *v)
{
    tess_type_free(v->etype);
    tess_type_free(v->filetype);
    tessi_view_init(v);
}

int tessi_view_set(tessi_view *v, int64_t disp, tess_type *etype, tess_type *filetype)
{
    int64_t end;
    if (!etype || !filetype)
        return tessi_error(TESS_ERR_ARG, "tess_file_set_view: %s is NULL",
                           etype ? "filetype" : "etype");
    if (disp < 0)
        return tessi_error(TESS_ERR_ARG, "tess_file_set_view: disp %lld < 0", (long long)disp);
    if (etype->size <= 0 || filetype->size <= 0)
        return tessi_error(TESS_ERR_VIEW, "tess_file_set_view: the %s has no data bytes",
                           etype->size <= 0 ? "etype" : "filetype");
    if (filetype->size % etype->size)
        return tessi_error(TESS_ERR_VIEW,
                           "tess_file_set_view: etype size %lld does not divide filetype size %lld",
                           (long long)etype->size, (long long)filetype->size);
    if (!filetype->monotonic)
        return tessi_error(TESS_ERR_VIEW, "tess_file_set_view: filetype regions decrease or "
                           "overlap (a view needs increasing, disjoint regions)");
    if (filetype->extent < filetype->true_ub - filetype->true_lb)
        return tessi_error(TESS_ERR_VIEW, "tess_file_set_view: filetype extent %lld is less "
                           "than its data span %lld, so consecutive tiles overlap",
                           (long long)filetype->extent,
                           (long long)(filetype->true_ub - filetype->true_lb));
    if (disp + filetype->true_lb < 0)
        return tessi_error(TESS_ERR_VIEW, "tess_file_set_view: data at file byte %lld < 0 "
                           "(disp %lld, filetype true lb %lld)",
                           (long long)(disp + filetype->true_lb), (long long)disp,
                           (long long)filetype->true_lb);
    if (!tessi_add(disp, filetype->true_ub, &end))
        return tessi_error(TESS_ERR_OVERFLOW, "tess_file_set_view: disp %lld + filetype upper "
                           "bound %lld overflows int64", (long long)disp,
                           (long long)filetype->true_ub);
    tess_type *e = tess_type_ref(etype), *f = tess_type_ref(filetype);
    tessi_view_release(v);
    *v = (tessi_view){.disp = disp, .etype = e, .filetype = f, .esize = e->size,
                      .fsize = f->size, .fextent = f->extent};
    return 0;
}

/*
 * Where an access lands: the tiles [*tile0, *tile0 + *ntiles) it touches and the file byte of
 * the first tile's origin, checking that every byte it can reach fits in int64.
 */
static int access_tiles(const tessi_view *v, int64_t offset, int64_t bytes, int64_t *tile0,
                        int64_t *ntiles, int64_t *base)
{
    int64_t first, end, last_origin, last_byte;
    if (!tessi_mul(offset, v->esize, &first) || !tessi_add(first, bytes, &end))
        return tessi_error(TESS_ERR_OVERFLOW, "access at offset %lld etypes (of %lld bytes) "
                           "+ %lld bytes overflows int64", (long long)offset,
                           (long long)v->esize, (long long)bytes);
    *tile0 = first / v->fsize;
    int64_t tlast = (end - 1) / v->fsize;
    *ntiles = tlast - *tile0 + 1;
    if (!tessi_mul(tlast, v->fextent, &last_origin) ||
        !tessi_add(last_origin, v->disp, &last_origin) ||
        !tessi_add(last_origin, v->filetype->true_ub, &last_byte))
        return tessi_error(TESS_ERR_OVERFLOW, "access at offset %lld etypes reaches a file "
                           "byte beyond int64 (tile %lld of extent %lld)", (long long)offset,
                           (long long)tlast, (long long)v->fextent);
    *base = v->disp + *tile0 * v->fextent;
    return 0;
}

/* count instances of t are one contiguous run of bytes. */
static bool one_run(const tess_type *t, int64_t count)
{
    return t->num_regions == 1 && (count <= 1 || t->size == t->extent);
}

int tessi_rsrc_open(tessi_rsrc *s, const tess_type *t, int64_t count, int64_t base,
                    int64_t start, int64_t bytes, int64_t *regions)
{
    /* field by field: the region queue (a kilobyte) needs no zeroing */
    s->type = t;
    s->count = count;
    s->cur = NULL;
    s->base = base;
    s->start = start;
    s->bytes = bytes;
    s->pos = s->fetched = s->lo = s->hi = s->qi = s->qn = s->hw = s->run_n = 0;
    s->regions = regions;
    s->last_end = -1;
    if (bytes == 0)
        return 0;
    if (one_run(t, count)) { /* stream byte x at base + first_off + x */
        s->lo = base + t->first_off + start;
        s->hi = s->lo + bytes;
        return tessi_rsrc_seek(s, 0);
    }
    int rc = tess_cursor_create(t, count, &s->cur);
    if (rc == 0 && (rc = tessi_rsrc_seek(s, 0)))
        tessi_rsrc_close(s);
    return rc;
}

int tessi_view_regions(tessi_rsrc *s, const tessi_view *v, int64_t offset, int64_t bytes,
                       int64_t *regions)
{
    int64_t tile0 = 0, ntiles = 0, base = 0;
    tess_region r;
    s->cur = NULL;
    int rc = bytes ? access_tiles(v, offset, bytes, &tile0, &ntiles, &base) : 0;
    if (rc == 0)
        rc = tessi_rsrc_open(s, v->filetype, ntiles, base,
                             offset * v->esize - tile0 * v->fsize, bytes, regions);
    if (rc || bytes == 0 || !s->cur) /* a failed open has released everything; a run knows its
                                        extent */
        return rc;
    if ((rc = tessi_rsrc_seek(s, bytes - 1)) || (rc = tessi_rsrc_peek(s, &r)))
        goto fail;
    s->hi = r.off + 1;
    if ((rc = tessi_rsrc_seek(s, 0)) || (rc = tessi_rsrc_peek(s, &r)))
        goto fail;
    s->lo = r.off;
    return 0;
fail:
    tessi_rsrc_close(s);
    return rc;
}

void tessi_rsrc_close(tessi_rsrc *s)
{
    tess_cursor_free(s->cur);
    s->cur = NULL;
}

int tessi_rsrc_seek(tessi_rsrc *s, int64_t pos)
{
    s->qi = s->qn = s->run_n = 0;
    s->pos = s->fetched = pos;
    if (s->cur)
        return tess_cursor_seek(s->cur, s->start + pos);
    if (pos < s->bytes) { /* one run: its rest is the one pending region */
        s->q[0] = (tess_region){.off = s->lo + pos, .len = s->bytes - pos};
        s->qn = 1;
        s->fetched = s->bytes;
    }
    return 0;
}

/* Whether the source has regions not yet in q. */
static inline bool more(const tessi_rsrc *s)
{
    return s->run_n > 0 || s->fetched < s->bytes;
}

/* Refill q from the cursor's runs, keeping the (at most one) pending region first and merging
 * the new regions into it when they touch. A strided run is expanded here, as far as q has
 * room; its rest waits in s->run for the next refill. */
static int fill(tessi_rsrc *s)
{
    int64_t keep = s->qn - s->qi;
    if (keep)
        s->q[0] = s->q[s->qi];
    s->qi = 0;
    s->qn = keep;
    while (s->qn < TESSI_RSRC_BATCH && more(s)) {
        if (s->run_n == 0) {
            tessi_run u;
            int64_t got;
            int rc = tessi_cursor_runs(s->cur, &u, 1, s->bytes - s->fetched, &got);
            if (rc)
                return rc;
            if (got == 0)
                return tessi_error(TESS_ERR_INTERNAL, "region cursor ended %lld bytes early",
                                   (long long)(s->bytes - s->fetched));
            s->run_off = u.off + s->base;
            s->run_len = u.len;
            s->run_stride = u.stride;
            s->run_n = u.n;
            s->fetched += u.len * u.n;
        }
        tess_region *q = s->q;
        int64_t qn = s->qn, off = s->run_off, len = s->run_len, k = s->run_n;
        for (; k > 0 && qn < TESSI_RSRC_BATCH; k--, off += s->run_stride) {
            if (qn > 0 && q[qn - 1].off + q[qn - 1].len == off)
                q[qn - 1].len += len;
            else
                q[qn++] = (tess_region){.off = off, .len = len};
        }
        s->qn = qn;
        s->run_off = off;
        s->run_n = k;
    }
    return 0;
}

int tessi_rsrc_peek(tessi_rsrc *s, tess_region *r)
{
    if (s->qn - s->qi <= 1 && more(s)) {
        int rc = fill(s);
        if (rc)
            return rc;
    }
    *r = s->qi < s->qn ? s->q[s->qi] : (tess_region){.off = s->hi, .len = 0};
    return 0;
}

void tessi_rsrc_take(tessi_rsrc *s, int64_t len)
{
    tess_region *r = &s->q[s->qi];
    if (s->regions && s->pos >= s->hw && r->off != s->last_end)
        (*s->regions)++;
    s->last_end = r->off + len;
    s->pos += len;
    if (s->pos > s->hw)
        s->hw = s->pos;
    r->off += len;
    r->len -= len;
    if (r->len == 0)
        s->qi++;
}

int tessi_rsrc_next(tessi_rsrc *s, tess_region *out, int64_t max, int64_t max_bytes, int64_t *n)
{
    int64_t k = 0;
    while (k < max && max_bytes > 0) {
        if (s->qn - s->qi <= 1 && more(s)) {
            int rc = fill(s);
            if (rc)
                return rc;
        }
        if (s->qi == s->qn)
            break;
        /* the regions that can no longer grow: all but the last pending one, until the cursor
         * has delivered everything (the next refill may merge into it) */
        int64_t ready = s->qn - s->qi - more(s);
        if (s->regions || ready == 0) { /* counting, or only a growing region: by the piece */
            tess_region r = s->q[s->qi];
            r.len = tessi_min64(r.len, max_bytes);
            tessi_rsrc_take(s, r.len);
            out[k++] = r;
            max_bytes -= r.len;
            continue;
        }
        ready = tessi_min64(ready, max - k);
        const tess_region *q = s->q + s->qi;
        int64_t i = 0, moved = 0;
        for (; i < ready && q[i].len <= max_bytes - moved; i++) {
            out[k + i] = q[i];
            moved += q[i].len;
        }
        s->qi += i;
        k += i;
        if (i < ready && max_bytes > moved) { /* the next region is cut at max_bytes */
            out[k++] = (tess_region){.off = q[i].off, .len = max_bytes - moved};
            s->q[s->qi].off += max_bytes - moved;
            s->q[s->qi].len -= max_bytes - moved;
            moved = max_bytes;
        }
        s->pos += moved;
        max_bytes -= moved;
    }
    *n = k;
    return 0;
}

int tessi_rsrc_stream_at(const tessi_rsrc *s, int64_t x, int64_t *pos)
{
    int64_t at = 0;
    int rc = 0;
    if (s->cur)
        rc = tessi_stream_at(s->type, s->base, x, &at);
    else /* one run (or nothing) */
        at = s->start + (x > s->lo ? x - s->lo : 0);
    *pos = tessi_min64(tessi_max64(at - s->start, 0), s->bytes);
    return rc;
}

int tessi_rsrc_offset_at(const tessi_rsrc *s, int64_t pos, int64_t *off)
{
    if (!s->cur) {
        *off = s->lo + pos;
        return 0;
    }
    return tessi_offset_at(s->type, s->base, s->start + pos, off);
}
