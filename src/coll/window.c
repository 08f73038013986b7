/*
 * window.c - an aggregator's windows and their coverage. Each aggregator covers its realm
 * stream in windows of at most cb_buffer_size bytes (half of it when pipelined), each starting
 * at the next byte that holds some client's data (so holes of any size cost nothing); aligned
 * realms start windows on striping_unit. A window is made of stretches: contiguous file pieces
 * (one for a contiguous realm). The union of the clients' regions in a window is a bitmap over
 * the collective buffer.
 */
#include "coll/tp.h"

#include <string.h>

/* ------------------------------------------------------------------ windows */

/* The realm stream position of the next window of my realm at or after e (TP_DONE: none):
 * the first byte holding data of some client, aligned down (never below lower). */
int tessi_tp_next_window(tp *p, int64_t e, int64_t lower, int64_t *w)
{
    const realm *r = &p->rl[p->me];
    int64_t x, ymin = TP_DONE, s;
    *w = TP_DONE;
    if (e >= r->s1)
        return 0;
    int rc = r->contig ? (x = r->base + e, 0) : tessi_offset_at(r->t, r->base, e, &x);
    for (int64_t i = 0; rc == 0 && i < p->ncl; i++) {
        const client *c = &p->cl[i];
        int64_t y;
        if ((rc = tessi_tp_client_pos(c, x, &s)) || s >= c->end)
            continue;
        if ((rc = tessi_offset_at(c->t, c->disp, s - c->origin, &y)) == 0)
            ymin = tessi_min64(ymin, y);
    }
    if (rc || ymin == TP_DONE)
        return rc;
    if ((rc = tessi_stream_at(r->t, r->base, ymin, &s)))
        return rc;
    if (s >= r->s1)
        return 0;
    s = tessi_max64(s, e);
    if (p->align > 1)
        s = tessi_max64(floor_div(r->base + s, p->align) * p->align - r->base, lower);
    *w = s;
    return 0;
}

/* The stretches of aggregator b's window at w, into *out. */
int tessi_tp_window_stretches(tp *p, int b, int64_t w, stretch **out, int64_t *n, int64_t *cap)
{
    const realm *r = &p->rl[b];
    int64_t len = tessi_min64(p->win, r->s1 - w), q = 0;
    tessi_rsrc src;
    tess_region g;
    *n = 0;
    if (r->contig) {
        int rc = tessi_tp_grow(out, cap, 1, sizeof(stretch));
        if (rc == 0)
            (*out)[(*n)++] = (stretch){r->base + w, len, 0};
        return rc;
    }
    int rc = tessi_tp_tiled_open(&src, r->t, r->base, w, len, NULL);
    while (rc == 0 && (rc = tessi_rsrc_peek(&src, &g)) == 0 && g.len > 0) {
        if ((rc = tessi_tp_grow(out, cap, *n + 1, sizeof(stretch))))
            break;
        (*out)[(*n)++] = (stretch){g.off, g.len, q};
        q += g.len;
        tessi_rsrc_take(&src, g.len);
    }
    tessi_rsrc_close(&src);
    return rc;
}

/* ------------------------------------------------------------------ coverage */

/*
 * The union of the clients' regions in a window is a bitmap over the collective buffer, one bit
 * per byte (cb_buffer_size / 8 bytes per buffer): marked from the aggregator-side segments run by
 * run, then read as runs of set bits (data) and clear bits (holes). Exact whatever the clients'
 * overlaps, O(regions + window / 64) per round with small constants (a heap merge of the
 * clients' cursors pays a heap step and a cursor step per region: 20x slower on 4-byte regions).
 */
static void bits_set(uint64_t *bm, int64_t pos, int64_t len)
{
    int64_t end = pos + len;
    while (pos < end) {
        int64_t w = pos >> 6, b = pos & 63, k = tessi_min64(64 - b, end - pos);
        if (b == 0 && end - pos >= 64) { /* whole words */
            int64_t nw = (end - pos) >> 6;
            memset(bm + w, 0xff, (size_t)nw * 8);
            pos += nw << 6;
            continue;
        }
        bm[w] |= ((k == 64 ? ~UINT64_C(0) : (UINT64_C(1) << k) - 1)) << b;
        pos += k;
    }
}

/* The first position in [pos, end) whose bit is set (set) or clear (!set); end if none. */
int64_t tessi_tp_bits_find(const uint64_t *bm, int64_t pos, int64_t end, bool set)
{
    while (pos < end) {
        int64_t w = pos >> 6, b = pos & 63;
        uint64_t x = (set ? bm[w] : ~bm[w]) >> b;
        if (x)
            return tessi_min64(pos + __builtin_ctzll(x), end);
        pos = (w + 1) << 6;
    }
    return end;
}

typedef struct {
    uint64_t *bits;
    int64_t len;
} marking;

static int mark_run(void *arg, const tessi_run *r)
{
    marking *m = arg;
    int64_t span = (r->n - 1) * r->stride;
    if (tessi_min64(r->off, r->off + span) < 0 ||
        tessi_max64(r->off, r->off + span) + r->len > m->len)
        return tessi_error(TESS_ERR_INTERNAL, "two-phase: a client's data falls outside the "
                           "window");
    for (int64_t j = 0; j < r->n; j++)
        bits_set(m->bits, r->off + j * r->stride, r->len);
    return 0;
}

/* Mark the bytes of the round's buffer [0, len) that some client's data covers. */
int tessi_tp_mark(round *rd, int64_t len)
{
    marking m = {.bits = rd->bits, .len = len};
    int rc = 0;
    memset(rd->bits, 0, (size_t)((len + 63) >> 6) * 8);
    for (int64_t i = 0; rc == 0 && i < rd->npc; i++) {
        const tess_seg *sg = &rd->aseg[i];
        rc = tessi_walk(sg->type, sg->disp, sg->first, sg->bytes, mark_run, &m);
    }
    return rc;
}

/* The union of the data in stretch i: its file extent, regions and bytes. */
void tessi_tp_stretch_cover(const round *rd, int64_t i, splan *sp)
{
    const stretch *st = &rd->str[i];
    int64_t pos = st->q, end = st->q + st->len, first = -1, last = -1;
    *sp = (splan){.mode = MODE_NONE};
    while ((pos = tessi_tp_bits_find(rd->bits, pos, end, true)) < end) {
        int64_t stop = tessi_tp_bits_find(rd->bits, pos, end, false);
        if (first < 0)
            first = pos;
        last = stop;
        sp->nunion++;
        sp->cov += stop - pos;
        pos = stop;
    }
    if (sp->nunion) {
        sp->lo = st->f + first - st->q;
        sp->hi = st->f + last - st->q;
    }
}
