/*
 * exchange.c - planning a round's exchange. For a window and a client, both sides compute the
 * client's stream range inside the window, so the aggregator's side is the client's filetype
 * over the collective buffer and the client's side its memory type over its buffer: segments
 * (tess_seg) from which the transport builds its transfers (MPI: derived datatypes). A member's
 * own share is copied directly, cursor to cursor (tessi_xfer_copy).
 *
 * Staging (hint tess_cb_pack). A transfer of many small blocks (FLASH's 8-byte memory pieces:
 * about a million per process) costs the transport per block (MPI: an entry of a derived
 * datatype, built and walked every round; tess_group_ops.xblock seconds each), while packing it
 * into a contiguous buffer costs one copy of its bytes (the model's mc). Per round and peer, a
 * transfer whose blocks cost more than that copy is packed into the round's staging buffer
 * before the exchange (sends) or unpacked from it after (receives); large pieces stay described
 * and are never copied by Tessera. A round stages at most cb_buffer_size bytes; what does not
 * fit, or finds no memory, goes described.
 */
#include "coll/tp.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ rounds */

void tessi_tp_round_reset(tp *p, round *rd)
{
    if (rd->x)
        p->cm->xfree(p->c->g.ctx, rd->x);
    rd->x = NULL;
    rd->active = false;
    rd->nstr = rd->npc = rd->ncseg = rd->resent = rd->nstg = rd->packed = 0;
    memset(rd->send, 0, sizeof(tess_xfer) * (size_t)p->P);
    memset(rd->recv, 0, sizeof(tess_xfer) * (size_t)p->P);
    rd->self_from = rd->self_to = (tess_xfer){0};
}

void tessi_tp_round_free(tp *p, round *rd)
{
    if (rd->send)
        tessi_tp_round_reset(p, rd);
    free(rd->str);
    free(rd->pc);
    free(rd->sp);
    free(rd->aseg);
    free(rd->cseg);
    free(rd->stage);
    free(rd->stg);
    free(rd->stgseg);
}

/* The aggregator side of a round: my window's stretches, the clients' pieces, segments into
 * the buffer grouped by client. */
static int plan_aggregator(tp *p, round *rd)
{
    int64_t w = p->w[p->me];
    int rc = tessi_tp_window_stretches(p, p->me, w, &rd->str, &rd->nstr, &rd->capstr);
    for (int64_t i = 0; rc == 0 && i < rd->nstr; i++) {
        const stretch *s = &rd->str[i];
        for (int64_t k = 0; rc == 0 && k < p->ncl; k++) {
            int64_t lo, hi;
            if ((rc = tessi_tp_client_pos(&p->cl[k], s->f, &lo)) ||
                (rc = tessi_tp_client_pos(&p->cl[k], s->f + s->len, &hi)) || hi <= lo)
                continue;
            if ((rc = tessi_tp_grow(&rd->pc, &rd->cappc, rd->npc + 1, sizeof(piece))) == 0)
                rd->pc[rd->npc++] = (piece){i, k, lo, hi};
        }
    }
    if (rc)
        return rc;
    free(rd->sp);
    free(rd->aseg);
    rd->sp = calloc((size_t)rd->nstr + 1, sizeof(splan));
    rd->aseg = malloc(sizeof(tess_seg) * (size_t)(rd->npc + 1));
    int64_t *first = calloc((size_t)p->ncl + 1, sizeof(int64_t));
    if (!rd->sp || !rd->aseg || !first) {
        free(first);
        return tessi_error(TESS_ERR_NOMEM, "two-phase: out of memory (round plan)");
    }
    for (int64_t k = 0; k < rd->npc; k++)
        first[rd->pc[k].cl + 1]++;
    for (int64_t k = 0; k < p->ncl; k++)
        first[k + 1] += first[k];
    for (int64_t k = 0; k < rd->npc; k++) {
        const piece *pc = &rd->pc[k];
        const client *c = &p->cl[pc->cl];
        const stretch *s = &rd->str[pc->st];
        int64_t slot = first[pc->cl]++;
        rd->aseg[slot] = (tess_seg){c->t, c->disp - s->f + s->q, pc->lo - c->origin,
                                     pc->hi - pc->lo};
    }
    int64_t at = 0;
    for (int64_t k = 0; k < p->ncl; k++) {
        const client *c = &p->cl[k];
        int64_t n = first[k] - at, bytes = 0;
        for (int64_t j = at; j < first[k]; j++)
            bytes += rd->aseg[j].bytes;
        if (n > 0) {
            tess_xfer x = {.buf = rd->buf, .seg = rd->aseg + at, .nseg = n, .bytes = bytes};
            if (c->rank == p->c->g.rank)
                *(p->a->write ? &rd->self_to : &rd->self_from) = x;
            else
                (p->a->write ? rd->recv : rd->send)[c->rank] = x;
        }
        at = first[k];
    }
    free(first);
    return 0;
}

/* The client side of a round: for every aggregator's window, my memory stream pieces. */
static int plan_client(tp *p, round *rd)
{
    tessi_coll_access *a = p->a;
    int64_t *at = malloc(sizeof(int64_t) * (size_t)p->A * 2);
    int rc = at ? 0 : tessi_error(TESS_ERR_NOMEM, "two-phase: out of memory (client plan)");
    for (int b = 0; rc == 0 && b < p->A; b++) {
        at[2 * b] = rd->ncseg;
        at[2 * b + 1] = 0;
        if (p->w[b] == TP_DONE || p->re[b] <= p->rs[b])
            continue;
        if ((rc = tessi_tp_window_stretches(p, b, p->w[b], &p->tmp, &p->ntmp, &p->captmp)))
            break;
        for (int64_t i = 0; rc == 0 && i < p->ntmp; i++) {
            int64_t lo, hi, f = p->tmp[i].f;
            if ((rc = tessi_tp_view_pos(p, f, p->rs[b], p->re[b], &lo)) ||
                (rc = tessi_tp_view_pos(p, f + p->tmp[i].len, p->rs[b], p->re[b], &hi)) || hi <= lo)
                continue;
            at[2 * b + 1] += hi - lo;
            tess_seg *last = rd->ncseg > at[2 * b] ? &rd->cseg[rd->ncseg - 1] : NULL;
            if (last && last->first + last->bytes == lo - a->start)
                last->bytes += hi - lo;
            else if ((rc = tessi_tp_grow(&rd->cseg, &rd->capcseg, rd->ncseg + 1,
                                         sizeof(tess_seg))) == 0)
                rd->cseg[rd->ncseg++] = (tess_seg){a->memtype, 0, lo - a->start, hi - lo};
        }
    }
    for (int b = 0; rc == 0 && b < p->A; b++) {
        int64_t n = (b + 1 < p->A ? at[2 * b + 2] : rd->ncseg) - at[2 * b];
        if (n == 0)
            continue;
        int r = p->c->aggs[b];
        tess_xfer x = {.buf = a->buf, .seg = rd->cseg + at[2 * b], .nseg = n,
                        .bytes = at[2 * b + 1]};
        if (r == p->c->g.rank) {
            *(a->write ? &rd->self_from : &rd->self_to) = x;
        } else {
            (a->write ? rd->send : rd->recv)[r] = x;
            rd->resent += x.bytes;
        }
    }
    free(at);
    return rc;
}

/* ------------------------------------------------------------------ staging */

/* Whether packing transfer x pays (tess_cb_pack: the model, always, never). */
static bool stage_pays(const tp *p, const tess_xfer *x)
{
    int64_t blocks = 0;
    if (x->bytes == 0 || p->c->h.pack == TESSI_DS_DISABLE)
        return false;
    for (int64_t i = 0; i < x->nseg; i++)
        blocks += tessi_type_blocks(x->seg[i].type, x->seg[i].bytes);
    if (blocks <= 1)
        return false;
    return p->c->h.pack == TESSI_DS_ENABLE ||
           (double)blocks * p->cm->xblock > tessi_model_copy(&p->a->hints->model, x->bytes);
}

/* Pack the bytes of transfer x into out, or (unpack) out's bytes into x's segments. */
static int xfer_pack(const tess_xfer *x, char *out, bool unpack)
{
    for (int64_t i = 0; i < x->nseg; i++) {
        const tess_seg *s = &x->seg[i];
        int64_t n = 0, count;
        if (s->bytes == 0)
            continue;
        count = (s->first + s->bytes - 1) / s->type->size + 1;
        int rc = unpack ? tess_unpack(out, s->bytes, x->buf + s->disp, count, s->type, s->first,
                                      &n)
                        : tess_pack(x->buf + s->disp, count, s->type, s->first, out, s->bytes,
                                    &n);
        if (rc == 0 && n != s->bytes)
            rc = tessi_error(TESS_ERR_INTERNAL, "two-phase: packed %lld of %lld bytes",
                             (long long)n, (long long)s->bytes);
        if (rc)
            return rc;
        out += s->bytes;
    }
    return 0;
}

/* Choose the round's transfers to stage, give each a contiguous segment over the staging
 * buffer and pack the sends. Staging is an optimization: without memory for it, nothing is. */
static int stage_round(tp *p, round *rd)
{
    int64_t used = 0;
    int rc = 0;
    for (int dir = 0; rc == 0 && dir < 2; dir++) {
        const tess_xfer *t = dir ? rd->recv : rd->send;
        for (int r = 0; rc == 0 && r < p->P; r++) {
            if (t[r].bytes > p->c->h.cb_buffer - used || !stage_pays(p, &t[r]) ||
                tessi_tp_grow(&rd->stg, &rd->capstg, rd->nstg + 1, sizeof(staged)))
                continue;
            rd->stg[rd->nstg++] = (staged){.orig = t[r], .peer = r, .recv = dir == 1};
            used += t[r].bytes;
        }
    }
    if (rd->nstg == 0)
        return 0;
    char *buf = used > rd->capstage ? realloc(rd->stage, (size_t)used) : rd->stage;
    if (buf) {
        rd->stage = buf;
        rd->capstage = tessi_max64(rd->capstage, used);
    }
    if (!buf || tessi_tp_grow(&rd->stgseg, &rd->capstgseg, rd->nstg, sizeof(tess_seg))) {
        rd->nstg = 0;
        return 0;
    }
    tessi_storage_emit(p->a->st, (tessi_event){.kind = TESSI_EV_BUFFER, .len = rd->capstage});
    int64_t at = 0;
    for (int64_t k = 0; rc == 0 && k < rd->nstg; k++) {
        const staged *g = &rd->stg[k];
        if (!g->recv)
            rc = xfer_pack(&g->orig, rd->stage + at, false);
        rd->stgseg[k] = (tess_seg){TESS_BYTE, 0, 0, g->orig.bytes};
        (g->recv ? rd->recv : rd->send)[g->peer] =
            (tess_xfer){.buf = rd->stage + at, .seg = &rd->stgseg[k], .nseg = 1,
                        .bytes = g->orig.bytes};
        at += g->orig.bytes;
    }
    rd->packed = used;
    return rc;
}

int tessi_tp_unstage(round *rd)
{
    int64_t at = 0;
    int rc = 0;
    for (int64_t k = 0; rc == 0 && k < rd->nstg; k++) {
        if (rd->stg[k].recv)
            rc = xfer_pack(&rd->stg[k].orig, rd->stage + at, true);
        at += rd->stg[k].orig.bytes;
    }
    return rc;
}

/* Plan round rd for the windows p->w: the aggregator's storage-before half, both sides'
 * transfers, and the prepared exchange; then my next window into p->wn. Failures are noted. */
void tessi_tp_plan_round(tp *p, round *rd, chunk *ck)
{
    int rc = 0;
    tessi_tp_round_reset(p, rd);
    rd->active = true;
    p->mine_next = TP_DONE;
    if (p->rc)
        return;
    if (p->me >= 0 && p->w[p->me] != TP_DONE) {
        int64_t w = p->w[p->me];
        if ((rc = plan_aggregator(p, rd)) == 0)
            rc = tessi_tp_storage_before(p, rd, ck);
        note(p, rc);
        if (rc == 0) {
            int64_t end = tessi_min64(w + p->win, p->rl[p->me].s1);
            note(p, tessi_tp_next_window(p, end, end, &p->mine_next));
        }
    }
    if (p->rc == 0 && p->a->bytes > 0)
        note(p, plan_client(p, rd));
    /* both sides of my own share must describe the same bytes */
    if (p->rc == 0 && rd->self_from.bytes != rd->self_to.bytes)
        note(p, tessi_error(TESS_ERR_INTERNAL, "two-phase: own share %lld != %lld bytes",
                            (long long)rd->self_from.bytes, (long long)rd->self_to.bytes));
    if (p->rc == 0) {
        double t0 = tessi_now();
        note(p, stage_round(p, rd));
        p->xsec += tessi_now() - t0;
    }
    if (p->rc == 0)
        note(p, p->cm->xprepare(p->c->g.ctx, rd->send, rd->recv, &rd->x));
}
