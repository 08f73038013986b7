/*
 * transport.c - the group as a member sees it, the error agreement, segment cursors and copies
 * between transfers (transport.h, tessera_group.h).
 */
#include "coll/transport.h"

#include "type/type.h"
#include "type/walk.h"

#include <stdlib.h>
#include <string.h>

int tessi_group_init(tessi_coll_group *g, const struct tess_group_ops *ops, void *ctx)
{
    if (!ops || ops->version != TESS_GROUP_OPS_VERSION)
        return tessi_error(TESS_ERR_ARG, "group: transport table version %d, expected %d",
                           ops ? ops->version : -1, TESS_GROUP_OPS_VERSION);
    if (!ops->rank || !ops->size || !ops->nodes || !ops->barrier || !ops->allreduce ||
        !ops->allgather || !ops->alltoallv || !ops->xprepare || !ops->xstart || !ops->xwait ||
        !ops->xfree || !ops->free)
        return tessi_error(TESS_ERR_ARG, "group: the %s transport table lacks a function",
                           ops->name ? ops->name : "unnamed");
    *g = (tessi_coll_group){.ops = ops, .ctx = ctx, .rank = ops->rank(ctx), .size = ops->size(ctx)};
    return 0;
}

int tessi_group_agree(const tessi_coll_group *g, int rc, const char *who, int64_t *v, int64_t nv)
{
    int64_t two[2];
    if (!v)
        v = two;
    v[0] = rc;
    v[1] = rc ? -(int64_t)g->rank - 1 : 0;
    int err = g->ops->allreduce(g->ctx, v, nv, TESS_REDUCE_MIN);
    if (rc || err)
        return rc ? rc : err;
    if (v[0])
        return tessi_error((int)v[0], "%s: failed on rank %lld: %s", who,
                           (long long)(-v[1] - 1), tess_strerror((int)v[0]));
    return 0;
}

int tess_seg_cursor(const tess_seg *s, tess_cursor **out, int64_t *disp)
{
    if (!s || !out || !disp || !s->type || s->bytes < 0 || s->first < 0)
        return tessi_error(TESS_ERR_ARG, "tess_seg_cursor: a NULL argument or a negative "
                           "count");
    if (tess_type_size(s->type) == 0 && s->bytes > 0)
        return tessi_error(TESS_ERR_ARG, "tess_seg_cursor: %lld bytes of an empty type",
                           (long long)s->bytes);
    tess_cursor *c = malloc(sizeof *c);
    if (!c)
        return tessi_error(TESS_ERR_NOMEM, "tess_seg_cursor: out of memory");
    int rc = s->bytes ? tessi_walk_cursor(c, s->type, s->disp, s->first, s->bytes, disp)
                      : tessi_cursor_init(c, s->type, 0);
    if (rc) {
        free(c);
        return rc;
    }
    if (!s->bytes)
        *disp = s->disp;
    *out = c;
    return 0;
}

/* One side of a copy: the segments of a transfer, a cursor over the current one. */
typedef struct {
    const tess_xfer *x;
    int64_t next;        /* the segment after the current one */
    tess_cursor c;
    int64_t disp;        /* add to the cursor's offsets (and to buf) */
    tess_region r;       /* the current region's unconsumed part */
    int64_t left;        /* bytes of the current segment not yet taken into r */
} side;

/* The next piece of the side (r.len 0 at the end). */
static int side_peek(side *s)
{
    while (s->r.len == 0) {
        if (s->left == 0) {
            if (s->next == s->x->nseg)
                return 0;
            const tess_seg *g = &s->x->seg[s->next++];
            s->left = g->bytes;
            int rc = g->bytes ? tessi_walk_cursor(&s->c, g->type, g->disp, g->first, g->bytes,
                                                  &s->disp) : 0;
            if (rc)
                return rc;
            continue;
        }
        int64_t n;
        int rc = tess_cursor_next(&s->c, &s->r, 1, s->left, &n);
        if (rc)
            return rc;
        if (n == 0)
            return tessi_error(TESS_ERR_INTERNAL, "copy: a segment ran out of data");
        s->r.off += s->disp;
        s->left -= s->r.len;
    }
    return 0;
}

static int64_t xfer_blocks(const tess_xfer *x)
{
    int64_t n = 0;
    for (int64_t i = 0; i < x->nseg; i++)
        n += tessi_type_blocks(x->seg[i].type, x->seg[i].bytes);
    return n;
}

/* Move the len bytes at `at` to (from: from) stream bytes [pos, pos + len) of transfer x by the
 * pack engine, segment by segment; *seg and *base (stream position of segment *seg) advance. */
static int pack_span(const tess_xfer *x, int64_t *seg, int64_t *base, int64_t pos, char *at,
                     int64_t len, bool from)
{
    while (len > 0) {
        if (*seg == x->nseg)
            return tessi_error(TESS_ERR_INTERNAL, "copy: transfers of different lengths");
        const tess_seg *g = &x->seg[*seg];
        if (pos >= *base + g->bytes) {
            *base += g->bytes;
            ++*seg;
            continue;
        }
        int64_t first = g->first + (pos - *base), n = tessi_min64(len, *base + g->bytes - pos), k;
        int64_t count = (first + n - 1) / g->type->size + 1;
        int rc = from ? tess_pack(x->buf + g->disp, count, g->type, first, at, n, &k)
                      : tess_unpack(at, n, x->buf + g->disp, count, g->type, first, &k);
        if (rc == 0 && k != n)
            rc = tessi_error(TESS_ERR_INTERNAL, "copy: moved %lld of %lld bytes", (long long)k,
                             (long long)n);
        if (rc)
            return rc;
        pos += n;
        at += n;
        len -= n;
    }
    return 0;
}

/* The copy where transfer big has far fewer, larger blocks than transfer small: a cursor over
 * big's blocks, and the pack engine's kernels (tess_pack / tess_unpack at a data offset) for
 * the many small pieces of small that each block meets. */
static int copy_by_pack(const tess_xfer *big, const tess_xfer *small, bool big_is_from)
{
    side b = {.x = big};
    int64_t pos = 0, seg = 0, base = 0;
    int rc = 0;
    while (rc == 0 && pos < big->bytes) {
        if ((rc = side_peek(&b)))
            break;
        if (b.r.len == 0)
            return tessi_error(TESS_ERR_INTERNAL, "copy: transfers of different lengths");
        rc = pack_span(small, &seg, &base, pos, big->buf + b.r.off, b.r.len, !big_is_from);
        pos += b.r.len;
        b.r.len = 0;
    }
    return rc;
}

/* A side with this many times the blocks of the other is moved by the pack engine. */
#define COPY_PACK_RATIO 8

int tessi_xfer_copy(const tess_xfer *from, const tess_xfer *to)
{
    int64_t bf = xfer_blocks(from), bt = xfer_blocks(to);
    if (bt >= COPY_PACK_RATIO * bf)
        return copy_by_pack(from, to, true);
    if (bf >= COPY_PACK_RATIO * bt)
        return copy_by_pack(to, from, false);
    side f = {.x = from}, t = {.x = to};
    int64_t left = from->bytes;
    int rc = 0;
    while (rc == 0 && left > 0) {
        if ((rc = side_peek(&f)) || (rc = side_peek(&t)))
            break;
        if (f.r.len == 0 || t.r.len == 0)
            return tessi_error(TESS_ERR_INTERNAL, "copy: transfers of different lengths");
        int64_t n = tessi_min64(f.r.len, t.r.len);
        memcpy(to->buf + t.r.off, from->buf + f.r.off, (size_t)n);
        f.r.off += n;
        f.r.len -= n;
        t.r.off += n;
        t.r.len -= n;
        left -= n;
    }
    return rc;
}
