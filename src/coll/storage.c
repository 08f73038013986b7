/*
 * storage.c - the aggregator's storage half of a two-phase round, through the independent
 * methods (paper 002 section 6.3). Per stretch of the window: when the union's file bytes per
 * region, (hi - lo) / regions, are below tess_cb_sieve_threshold the stretch is moved as one
 * span [lo, hi) (sieving, with the collective buffer as the sieve buffer: no second buffer, no
 * copy), else region by region (naive for one region, list or datatype I/O for more, batches
 * of TP_CHUNK regions described by an hindexed type). A written span with holes is first read
 * only where the holes are: holes closer than the threshold are read together where the model
 * prices reading the data between them below reading them apart, when the write
 * gate admits the read-modify-write (driver/gate.c; else the regions are written). Such a span
 * is written under a lock on its extent; other writes lock when the gate says plain writes
 * must. Storage with an atomic read-modify-write of its own (TESSI_CAP_RMW, RADOS) writes a
 * span with holes through it instead, unlocked and without asking the gate, so a concurrent
 * writer of the holes is never undone.
 */
#include "coll/tp.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ storage */

/* Regions of t moved by list I/O or by datatype I/O (where the storage runs it: the regions go
 * to the storage servers as the type t, one request per object): datatype when tess_method
 * names it, list when it names another method, else the one the estimates price lower. */
static const struct tess_method *list_or_datatype(const tessi_coll_access *a, const tess_type *t,
                                                  int64_t count, int64_t fs_lo, int64_t fs_hi,
                                                  int64_t bytes, bool write)
{
    const struct tess_method *dt = &tessi_method_datatype, *list = &tessi_method_list;
    if (!(a->st->caps & TESSI_CAP_DATATYPE) || (a->hints->method && a->hints->method != dt))
        return list;
    if (a->hints->method == dt)
        return dt;
    int64_t k = t->num_regions * count;
    tessi_est e = {.m = &a->hints->model, .write = write, .buf = 1, .bytes = bytes,
                   .regions = k, .lo = fs_lo, .hi = fs_hi, .pieces = k};
    tessi_cost cd, cl;
    dt->estimate(&e, &cd);
    list->estimate(&e, &cl);
    return cd.seconds < cl.seconds ? dt : list;
}

/* Move `bytes` bytes of the regions of t (count instances from file byte fbase) between the
 * storage and the round's buffer, memory byte = file byte + mshift, by the independent method
 * that fits: naive for one region, else list or datatype I/O (list_or_datatype). *done as the
 * method says. */
static int move(tp *p, round *rd, const tess_type *t, int64_t count, int64_t fbase,
                int64_t mshift, int64_t bytes, bool write, int64_t *done)
{
    tessi_coll_access *a = p->a;
    tessi_rsrc fs, ms;
    int64_t regions = 0;
    int rc = tessi_rsrc_open(&fs, t, count, fbase, 0, bytes, &regions);
    if (rc)
        return rc;
    if ((rc = tessi_rsrc_open(&ms, t, count, fbase + mshift, 0, bytes, NULL))) {
        tessi_rsrc_close(&fs);
        return rc;
    }
    fs.lo = fbase + t->true_lb;
    fs.hi = fbase + (count - 1) * t->extent + t->true_ub;
    tessi_access acc = {.st = a->st, .hints = a->hints, .view = a->view, .file = &fs,
                        .mem = &ms, .buf = rd->buf, .memtype = t, .count = count,
                        .bytes = bytes, .ftype = t, .fdisp = fbase, .fstart = 0};
    const struct tess_method *m = t->num_regions == 1 && (count == 1 || t->dense)
                                      ? &tessi_method_naive
                                      : list_or_datatype(a, t, count, fs.lo, fs.hi, bytes, write);
    rc = write ? m->write(&acc, done) : m->read(&acc, done);
    tessi_storage_emit(a->st, (tessi_event){.kind = TESSI_EV_REGIONS, .n = regions});
    tessi_rsrc_close(&fs);
    tessi_rsrc_close(&ms);
    return rc;
}

/* After a read that ended at stream byte `from` of the regions of t: the file ends there. Zero
 * the rest of those regions in the buffer and note where the file ends. */
static int read_short(tp *p, round *rd, const tess_type *t, int64_t count, int64_t fbase,
                      int64_t mshift, int64_t from, int64_t bytes)
{
    tessi_rsrc src;
    tess_region r;
    int rc = tessi_rsrc_open(&src, t, count, fbase, from, bytes - from, NULL);
    if (rc == 0 && (rc = tessi_rsrc_peek(&src, &r)) == 0)
        p->eof = tessi_min64(p->eof, r.off);
    while (rc == 0 && r.len > 0) {
        memset(rd->buf + r.off + mshift, 0, (size_t)r.len);
        tessi_rsrc_take(&src, r.len);
        rc = tessi_rsrc_peek(&src, &r);
    }
    tessi_rsrc_close(&src);
    return rc;
}

/* A batch of regions described to the storage at once. */

/* Move the chunk's regions (and empty it). */
static int chunk_flush(tp *p, round *rd, chunk *ck, int64_t mshift, bool write)
{
    tess_type *t = NULL;
    int64_t done;
    if (ck->n == 0)
        return 0;
    int rc = tess_type_hindexed(ck->n, ck->len, ck->off, TESS_BYTE, &t);
    if (rc == 0)
        rc = move(p, rd, t, 1, 0, mshift, ck->bytes, write, &done);
    if (rc == 0 && !write && done < ck->bytes)
        rc = read_short(p, rd, t, 1, 0, mshift, done, ck->bytes);
    tess_type_free(t);
    ck->n = ck->bytes = 0;
    return rc;
}

static int chunk_add(tp *p, round *rd, chunk *ck, int64_t mshift, bool write, int64_t off,
                     int64_t len)
{
    ck->off[ck->n] = off;
    ck->len[ck->n++] = len;
    ck->bytes += len;
    return ck->n == TP_CHUNK ? chunk_flush(p, rd, ck, mshift, write) : 0;
}

/* Whether the read of a span's holes goes on through `gap` data bytes to the next hole rather
 * than read that hole apart: below the sieve threshold, and where reading the gap costs less
 * than a region on its own (the model: 128-B holes between 8-KiB regions are read apart, not
 * all 8 KiB of data between them). */
static bool hole_merge(const tp *p, int64_t gap)
{
    const tessi_model *m = &p->a->hints->model;
    return gap < p->thr && (double)gap * tessi_model_byte(m, false) < tessi_model_alone(m, false);
}

/* Move the data regions of stretch i through ck; holes: read the windows around its holes
 * instead (holes a hole_merge gap apart share a window). */
static int stretch_move(tp *p, round *rd, int64_t i, chunk *ck, bool holes, bool write)
{
    const stretch *st = &rd->str[i];
    const splan *sp = &rd->sp[i];
    int64_t mshift = st->q - st->f, pos = sp->lo + mshift, end = sp->hi + mshift, cs = -1, ce = -1;
    bool w = write && !holes;
    int rc = 0;
    while (rc == 0 && (pos = tessi_tp_bits_find(rd->bits, pos, end, !holes)) < end) {
        int64_t stop = tessi_tp_bits_find(rd->bits, pos, end, holes);
        if (!holes) {
            rc = chunk_add(p, rd, ck, mshift, w, pos - mshift, stop - pos);
        } else { /* a hole [pos, stop): a new window when the data since the last is long */
            if (cs >= 0 && !hole_merge(p, pos - ce)) {
                rc = chunk_add(p, rd, ck, mshift, w, cs - mshift, ce - cs);
                cs = -1;
            }
            if (cs < 0)
                cs = pos;
            ce = stop;
        }
        pos = stop;
    }
    if (rc == 0 && cs >= 0)
        rc = chunk_add(p, rd, ck, mshift, w, cs - mshift, ce - cs);
    return rc ? rc : chunk_flush(p, rd, ck, mshift, w);
}

/* A span written with holes is a read-modify-write (admitted by the write gate before it was
 * planned as a span): always locked; other writes when plain writes must lock. */
static int lock_span(tp *p, splan *sp)
{
    if (sp->lock.held || !(p->a->lock_writes || (sp->mode == MODE_SPAN && sp->holes)))
        return 0;
    return tessi_lock_range(p->a->st, &sp->lock, sp->lo, sp->hi - sp->lo, true, false);
}

int tessi_tp_unlock_span(tp *p, splan *sp)
{
    return tessi_unlock_range(p->a->st, &sp->lock, 0);
}

/* The storage half before the exchange: mark the data, plan every stretch; reads read, writes
 * lock and read the hole windows of spans. */
int tessi_tp_storage_before(tp *p, round *rd, chunk *ck)
{
    tessi_coll_access *a = p->a;
    int64_t len = 0;
    for (int64_t i = 0; i < rd->nstr; i++)
        len += rd->str[i].len;
    int rc = tessi_tp_mark(rd, len);
    for (int64_t i = 0; rc == 0 && i < rd->nstr; i++) {
        splan *sp = &rd->sp[i];
        const stretch *s = &rd->str[i];
        tessi_tp_stretch_cover(rd, i, sp);
        if (sp->nunion == 0)
            continue;
        int64_t span = sp->hi - sp->lo;
        sp->holes = sp->cov < span;
        bool sieve = sp->nunion == 1 || span / sp->nunion < p->thr;
        /* a span with holes is written by a read-modify-write: the storage's own, or ours
         * when the gate admits it (asked only then: admission takes the gate's lock) */
        sp->mode = sieve && (!a->write || !sp->holes ||
                             (a->readable && ((a->st->caps & TESSI_CAP_RMW) ||
                                              tessi_gate_admit(a->st))))
                       ? MODE_SPAN : MODE_REGIONS;
        if (a->write) {
            sp->rmw = sp->mode == MODE_SPAN && sp->holes && (a->st->caps & TESSI_CAP_RMW);
            if (!sp->rmw && (rc = lock_span(p, sp)) == 0 && sp->mode == MODE_SPAN && sp->holes)
                rc = stretch_move(p, rd, i, ck, true, false);
        } else if (sp->mode == MODE_SPAN) {
            int64_t done;
            rc = move(p, rd, TESS_BYTE, span, sp->lo, s->q - s->f, span, false, &done);
            if (rc == 0 && done < span)
                rc = read_short(p, rd, TESS_BYTE, span, sp->lo, s->q - s->f, done, span);
        } else {
            rc = stretch_move(p, rd, i, ck, false, false);
        }
    }
    return rc;
}

/* The data of a span written through the storage's read-modify-write: the round's data bytes
 * of [lo, hi) spliced into the span's old bytes (stage, from file byte lo). Runs again after a
 * conflict: it only reads the round's buffer. */
typedef struct {
    const round *rd;
    int64_t lo, hi, mshift;
} span_fill;

static int fill_span(void *arg, char *stage)
{
    const span_fill *f = arg;
    int64_t pos = f->lo + f->mshift, end = f->hi + f->mshift;
    while ((pos = tessi_tp_bits_find(f->rd->bits, pos, end, true)) < end) {
        int64_t stop = tessi_tp_bits_find(f->rd->bits, pos, end, false);
        memcpy(stage + (pos - f->mshift - f->lo), f->rd->buf + pos, (size_t)(stop - pos));
        pos = stop;
    }
    return 0;
}

/* Write span sp of stretch s (holes included) atomically against other writers: the storage
 * reads the span, fill_span splices the data in, the storage writes it back unless another
 * writer came between (then again). */
static int span_rmw(tp *p, const round *rd, const stretch *s, const splan *sp)
{
    int64_t span = sp->hi - sp->lo;
    char *stage = malloc((size_t)span);
    if (!stage)
        return tessi_error(TESS_ERR_NOMEM, "two-phase: cannot allocate a %lld-byte stage",
                           (long long)span);
    span_fill f = {.rd = rd, .lo = sp->lo, .hi = sp->hi, .mshift = s->q - s->f};
    tessi_storage_emit(p->a->st, (tessi_event){.kind = TESSI_EV_BUFFER, .len = span});
    int rc = tessi_drv_rmw(p->a->st, stage, sp->lo, span, false, fill_span, &f);
    free(stage);
    return rc ? tessi_drv_error(p->a->st, rc, "two-phase read-modify-write", sp->lo, span) : 0;
}

/* The storage half after the exchange (writes): write and unlock every stretch. Once something
 * failed, only unlock. */
int tessi_tp_storage_after(tp *p, round *rd, chunk *ck, bool failed)
{
    int rc = 0;
    for (int64_t i = 0; i < rd->nstr; i++) {
        splan *sp = &rd->sp[i];
        const stretch *s = &rd->str[i];
        int64_t done, span = sp->hi - sp->lo;
        if (rc == 0 && !failed && sp->mode == MODE_SPAN && sp->rmw)
            rc = span_rmw(p, rd, s, sp);
        else if (rc == 0 && !failed && sp->mode == MODE_SPAN)
            rc = move(p, rd, TESS_BYTE, span, sp->lo, s->q - s->f, span, true, &done);
        else if (rc == 0 && !failed && sp->mode == MODE_REGIONS)
            rc = stretch_move(p, rd, i, ck, false, true);
        int err = tessi_tp_unlock_span(p, sp);
        if (rc == 0)
            rc = err;
    }
    return rc;
}
