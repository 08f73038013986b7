/*
 * twophase.c - two-phase collective I/O (paper 000 II-C) with file realms described by datatypes
 * (paper 002), access descriptions instead of offset lists, storage through the independent
 * methods, and an exchange that moves data straight between user buffers and collective buffers.
 *
 * Over the group's transport (transport.h), never MPI itself. One call, on every member (the
 * steps are in realms.c, describe.c, window.c, exchange.c and storage.c):
 *
 *  1. Realms. From every rank's record (file extent of its access) the aggregate access region
 *     [glo, ghi) is known everywhere, and every rank computes the same realm for each aggregator.
 *     A realm is a datatype tiled from a base offset (paper 002 section 5.2); its data stream is
 *     the realm's bytes in file order ("realm stream"). even, aligned and balanced realms are one
 *     contiguous range (TESS_BYTE tiled from the range's start); cyclic, persistent and user
 *     realms are a periodic type shared by all aggregators, aggregator a's tiled from
 *     anchor + a * shift.
 *       even:       [glo, ghi) cut into naggs ranges of ceil((ghi - glo) / naggs) bytes;
 *       aligned:    the same from glo rounded down to striping_unit, range size rounded up to it;
 *       balanced:   boundaries where the cumulative data volume of all ranks crosses i/naggs of
 *                   the total, found by sampling (three allreduces of 64 points per boundary,
 *                   resolution (ghi - glo) / 64^3);
 *       persistent: fixed by the first collective access with data: blocks of
 *                   Z = ceil(ghi / naggs) (rounded up to striping_unit when given) dealt
 *                   round-robin from byte 0, so the first access is cut into naggs contiguous
 *                   realms and later accesses anywhere in the file keep their owner;
 *       cyclic:     blocks of tess_realm_size dealt round-robin from byte 0;
 *       user:       the realm type of tess_file_set_realms.
 *  2. Descriptions (describe.c, with the wire format). A client sends each aggregator whose
 *     realm its access meets its encoded filetype or, where that is smaller, the (offset,
 *     length) pairs of its file regions inside the realm. The aggregator decodes and from then
 *     on intersects by tessi_stream_at (O(depth log n) per query), never by offset list.
 *  3. Rounds. Each aggregator covers its realm stream in windows of at most cb_buffer_size bytes
 *     (half of it when pipelined): the first at the realm's start, which every rank knows, each
 *     later one at the next byte that holds data (so holes of any size cost nothing); aligned
 *     realms start windows on striping_unit. The window is the collective buffer: the realm's
 *     bytes packed (for contiguous realms, the file range). Every round has one small allreduce
 *     (the agreement): error so far, end of file seen, and every aggregator's next window; then
 *     the exchange of the round.
 *  4. Exchange. For a window and a client, both sides compute the client's stream range inside
 *     the window, so the aggregator's side is the client's filetype over the collective buffer
 *     and the client's side its memory type over its buffer: segments (tess_seg) from which the
 *     transport builds its transfers. A transfer of many small blocks is packed into a staging
 *     buffer first where the model says the copy is cheaper than the transport's blocks
 *     (exchange.c); large pieces are never copied. A member's own share is copied directly,
 *     cursor to cursor.
 *  5. Storage, per contiguous stretch of the window, through the independent methods (paper
 *     002 section 6.3): the union of the clients' regions is found exactly with a bitmap over
 *     the buffer (see mark); when its file bytes per region, (hi - lo) / regions, are below
 *     tess_cb_sieve_threshold the stretch is moved as one span [lo, hi) (sieving, with the
 *     collective buffer as the sieve buffer: no second buffer, no copy), else region by region
 *     (naive for one region, list I/O for more, batches of TP_CHUNK regions described by an
 *     hindexed type). A written span with holes is first read only where the holes are: holes
 *     closer than the threshold are read together where the model prices that below reading
 *     them apart (storage.c). The members step aside at the write gate before the
 *     descriptions' exchange (driver/gate.c), so an aggregator's read-modify-write waits for
 *     no member; aggregators then hold a write lock on the extent of every write they make.
 *  6. Pipelining (tess_cb_pipeline, when cb_buffer_size >= 2): the buffer is two halves; a write
 *     stores window k-1 while window k is exchanged, a read reads window k+1 while window k is
 *     exchanged.
 *
 * Errors: a process that fails keeps taking part until the next agreement, which stops every
 * rank at the same round with the error; the final agreement reports storage errors of the last
 * writes. Nothing waits for a message that a failed rank will not send.
 */
#include "coll/tp.h"

#include <stdlib.h>
#include <string.h>

int tessi_tp_tiled_open(tessi_rsrc *src, const tess_type *t, int64_t base, int64_t first,
                        int64_t bytes, int64_t *regions)
{
    int64_t k = 0, count = 0, kbase = base;
    *src = (tessi_rsrc){.cur = NULL};
    int rc = bytes ? tessi_walk_tiles(t, base, first, bytes, &k, &count, &kbase) : 0;
    return rc ? rc : tessi_rsrc_open(src, t, count, kbase, first - k * t->size, bytes, regions);
}

/* Make room for need elements in *arr (capacity *cap). */
int tessi_tp_grow(void *arr, int64_t *cap, int64_t need, size_t el)
{
    if (need <= *cap)
        return 0;
    int64_t n = *cap ? *cap : 16;
    while (n < need)
        n *= 2;
    void *q = realloc(*(void **)arr, (size_t)n * el);
    if (!q)
        return tessi_error(TESS_ERR_NOMEM, "two-phase: out of memory (%lld entries)",
                           (long long)n);
    *(void **)arr = q;
    *cap = n;
    return 0;
}

/* My stream position of file byte x, clamped to [lo, hi]. */
int tessi_tp_view_pos(const tp *p, int64_t x, int64_t lo, int64_t hi, int64_t *s)
{
    int rc = tessi_stream_at(p->a->view->filetype, p->a->view->disp, x, s);
    *s = clamp64(*s, lo, hi);
    return rc;
}

/* A client's stream position of file byte x, clamped to its range. */
int tessi_tp_client_pos(const client *c, int64_t x, int64_t *s)
{
    int rc = tessi_stream_at(c->t, c->disp, x, s);
    *s = clamp64(*s + c->origin, c->start, c->end);
    return rc;
}

/*
 * The agreement of a round (tessi_group_agree): the first error (and a rank that had it), the
 * lowest end of file a read found, and (windows) every aggregator's next window into p->wn.
 * Returns the agreed verdict.
 */
static int agree(tp *p, const char *who, bool windows)
{
    int64_t *v = p->c->tp->vec, n = 3 + (windows ? p->A : 0);
    v[2] = p->eof;
    for (int b = 0; windows && b < p->A; b++)
        v[3 + b] = b == p->me ? p->mine_next : TP_DONE;
    double t0 = tessi_now();
    int rc = tessi_group_agree(&p->c->g, p->rc, who, v, n);
    p->xsec += tessi_now() - t0;
    p->eof = v[2];
    for (int b = 0; windows && b < p->A; b++)
        p->wn[b] = v[3 + b];
    return rc;
}

/* Everything before the rounds: realms, my ranges, descriptions, the buffer, and every
 * aggregator's first window: the start of its realm (floor), known everywhere without an
 * agreement (later windows start at data: a realm whose data begins more than a window past its
 * start costs one empty round). Returns communication failures; local ones are noted. */
static int setup(tp *p)
{
    tessi_coll_access *a = p->a;
    struct tessi_tp_ws *ws = p->c->tp;
    int rc;
    p->rl = ws->rl;
    p->rs = ws->rs;
    p->re = ws->re;
    p->w = ws->w;
    p->wn = ws->wn;
    for (int i = 0; i < 2; i++) {
        p->r[i].send = ws->xf + 2 * i * p->P;
        p->r[i].recv = p->r[i].send + p->P;
    }
    p->glo = INT64_MAX;
    for (int r = 0; r < p->P; r++)
        if (a->recs[r].bytes > 0) {
            p->glo = tessi_min64(p->glo, a->recs[r].lo);
            p->ghi = tessi_max64(p->ghi, a->recs[r].hi);
        }
    if ((rc = tessi_tp_realms(p)))
        return rc;
    if (p->rc == 0)
        note(p, tessi_tp_my_ranges(p));
    if ((rc = tessi_tp_describe(p)))
        return rc;
    for (int b = 0; b < p->A; b++)
        p->wn[b] = p->rl[b].s1 > p->rl[b].floor ? p->rl[b].floor : TP_DONE;
    if (p->me >= 0 && p->rc == 0) {
        const realm *r = &p->rl[p->me];
        int64_t need = tessi_min64(p->win, r->s1 - r->floor), halves = p->pipe ? 2 : 1;
        int64_t words = (need + 63) / 64;
        if (need > 0 && (!(p->cbuf = malloc((size_t)(need * halves))) ||
                         !(p->bits = malloc(sizeof(uint64_t) * (size_t)(words * halves)))))
            note(p, tessi_error(TESS_ERR_NOMEM, "two-phase: cannot allocate a %lld-byte "
                                "collective buffer", (long long)(need * halves)));
        if (p->cbuf)
            tessi_storage_emit(a->st, (tessi_event){.kind = TESSI_EV_BUFFER,
                                                    .len = need * halves});
        p->r[0].buf = p->cbuf;
        p->r[1].buf = p->cbuf ? p->cbuf + (halves - 1) * need : NULL;
        p->r[0].bits = p->bits;
        p->r[1].bits = p->bits ? p->bits + (halves - 1) * words : NULL;
    }
    return 0;
}

/* Take the agreed windows as the next round's; false when every realm is done. */
static bool next_round(tp *p)
{
    bool any = false;
    for (int b = 0; b < p->A; b++)
        any |= (p->w[b] = p->wn[b]) != TP_DONE;
    return any;
}

int tessi_twophase(tessi_coll_access *a, int64_t *done)
{
    tessi_coll *c = a->c;
    const char *who = a->write ? "tess_file_write_at_all" : "tess_file_read_at_all";
    bool pipe = c->h.pipeline && c->h.cb_buffer >= 2;
    tp p = {.a = a, .c = c, .cm = c->g.ops, .P = c->g.size, .A = a->naggs, .me = -1,
            .pipe = pipe, .win = pipe ? c->h.cb_buffer / 2 : c->h.cb_buffer,
            .eof = TP_DONE, .thr = c->h.sieve_threshold};
    for (int b = 0; b < p.A; b++)
        if (c->aggs[b] == c->g.rank)
            p.me = b;
    chunk *ck = calloc(1, sizeof(chunk));
    round *cur = &p.r[0], *nxt = &p.r[1], *prev = NULL;
    bool ahead = false; /* cur was planned during the previous exchange (pipelined reads) */
    int rc;
    *done = 0;
    if (!ck)
        note(&p, tessi_error(TESS_ERR_NOMEM, "two-phase: out of memory"));
    /* before the descriptions' exchange, which orders it before every aggregator's admission
     * to read-modify-write (driver/gate.c) */
    if (a->write)
        a->lock_writes = tessi_gate_step_aside(a->st);
    if ((rc = setup(&p)))
        goto fail;
    for (;;) {
        if (!ahead) {
            if (!next_round(&p))
                break;
            tessi_tp_plan_round(&p, cur, ck);
        }
        if ((rc = agree(&p, who, true)))
            goto fail;
        double t0 = tessi_now();
        rc = p.cm->xstart(c->g.ctx, cur->x);
        p.xsec += tessi_now() - t0;
        if (rc)
            goto fail;
        if (pipe && a->write && prev) { /* store the previous window during this exchange */
            note(&p, tessi_tp_storage_after(&p, prev, ck, p.rc != 0));
            prev->active = false;
        }
        ahead = pipe && !a->write && next_round(&p);
        if (ahead) /* read the next windows during this exchange */
            tessi_tp_plan_round(&p, nxt, ck);
        t0 = tessi_now();
        if (cur->self_from.bytes)
            note(&p, tessi_xfer_copy(&cur->self_from, &cur->self_to));
        rc = p.cm->xwait(c->g.ctx, cur->x);
        if (rc == 0 && p.rc == 0)
            note(&p, tessi_tp_unstage(cur));
        p.xsec += tessi_now() - t0;
        if (rc)
            goto fail;
        tessi_storage_emit(a->st, (tessi_event){.kind = TESSI_EV_EXCHANGE, .n = cur->resent,
                                                .len = cur->packed});
        if (a->write && !pipe) {
            note(&p, tessi_tp_storage_after(&p, cur, ck, p.rc != 0));
            cur->active = false;
        }
        if (pipe) {
            prev = a->write ? cur : NULL;
            cur = nxt;
            nxt = &p.r[cur == &p.r[0]];
        }
    }
    if (prev && prev->active) {
        note(&p, tessi_tp_storage_after(&p, prev, ck, p.rc != 0));
        prev->active = false;
    }
    if ((rc = agree(&p, who, false)))
        goto fail;
    *done = a->bytes;
    if (!a->write && p.eof != TP_DONE && a->bytes > 0) {
        int64_t s;
        rc = tessi_tp_view_pos(&p, p.eof, a->start, a->start + a->bytes, &s);
        *done = s - a->start;
    }
fail:
    for (int i = 0; i < 2; i++) { /* unlock what an interrupted write still holds */
        round *rd = &p.r[i];
        for (int64_t k = 0; rd->sp && k < rd->nstr; k++)
            tessi_tp_unlock_span(&p, &rd->sp[k]);
        tessi_tp_round_free(&p, rd);
    }
    if (p.pfr_new && rc) { /* the realms were not agreed: fix them next time */
        tess_type_free(c->periodic.type);
        c->periodic.type = NULL;
    }
    for (int64_t i = 0; i < p.ncl; i++)
        tess_type_free(p.cl[i].t);
    free(p.cl);
    free(p.cbuf);
    free(p.bits);
    free(p.tmp);
    free(ck);
    tessi_storage_emit(a->st, (tessi_event){.kind = TESSI_EV_EXCHANGE, .seconds = p.xsec});
    return rc;
}

/* ------------------------------------------------------------------ workspace */

int tessi_twophase_init(tessi_coll *c)
{
    int A = c->g.size, P = c->g.size; /* a call takes up to every rank as an aggregator */
    int64_t nbal = (int64_t)(A + 1) + 2 * (A - 1) + 2 * (int64_t)(A - 1) * TP_SAMPLES;
    struct tessi_tp_ws *ws = calloc(1, sizeof *ws);
    if (ws) {
        ws->rl = calloc((size_t)A, sizeof(realm));
        ws->rs = calloc((size_t)A * 4 + (size_t)P * 2 + 3 + (size_t)A + (size_t)nbal,
                        sizeof(int64_t));
        ws->xf = calloc((size_t)P * 4, sizeof(tess_xfer));
    }
    if (!ws || !ws->rl || !ws->rs || !ws->xf) {
        c->tp = ws;
        tessi_twophase_fini(c);
        return tessi_error(TESS_ERR_NOMEM, "two-phase: out of memory for a group of %d", P);
    }
    ws->re = ws->rs + A;
    ws->w = ws->re + A;
    ws->wn = ws->w + A;
    ws->counts = ws->wn + A;
    ws->vec = ws->counts + 2 * P;
    ws->bal = ws->vec + 3 + A;
    c->tp = ws;
    return 0;
}

void tessi_twophase_fini(tessi_coll *c)
{
    if (!c->tp)
        return;
    free(c->tp->rl);
    free(c->tp->rs);
    free(c->tp->xf);
    free(c->tp);
    c->tp = NULL;
}
