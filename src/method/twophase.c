/*
 * twophase.c - two-phase collective I/O (paper 000 II-C) with file realms described by datatypes
 * (paper 002), access descriptions instead of offset lists, storage through the independent
 * methods, and an exchange that moves data straight between user buffers and collective buffers.
 *
 * Over a communicator table (comm.h), never MPI itself. One call, on every rank:
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
 *  2. Descriptions (paper 000's future work: datatype I/O underneath two-phase). A client sends
 *     each aggregator whose realm its access meets a header and either its encoded filetype
 *     (tess_type_encode: O(type) bytes) or, where that is smaller, the (offset, length) pairs of
 *     its file regions inside the realm. Message: six int64 (native byte order: the group shares
 *     one architecture) {kind 1 = type | 2 = pairs, disp, origin, start, end, n} then n encoded
 *     bytes or n pairs. The client's data stream bytes [start, end) are the part of its access in
 *     the realm; stream byte s is byte s - origin of the described type tiled from disp (pairs:
 *     an hindexed type of absolute offsets, origin = start). The aggregator decodes and from then
 *     on intersects by cursor (tessi_stream_at: O(depth log n) per query), never by offset list.
 *  3. Rounds. Each aggregator covers its realm stream in windows of at most cb_buffer_size bytes
 *     (half of it when pipelined), each window starting at the next byte that holds data (so
 *     holes of any size cost nothing); aligned realms start windows on striping_unit. The window
 *     is the collective buffer: the realm's bytes packed (for contiguous realms, the file range).
 *     Every round has one small allreduce (the agreement): error so far, end of file seen, and
 *     every aggregator's next window; then the exchange of the round.
 *  4. Exchange. For a window and a client, both sides compute the client's stream range inside
 *     the window, so the aggregator's side is the client's filetype over the collective buffer
 *     and the client's side its memory type over its buffer: segments (comm.h) from which the
 *     communicator builds derived datatypes, so no noncontiguous user buffer is staged. A
 *     process's own share is copied directly, cursor to cursor.
 *  5. Storage, per contiguous stretch of the window, through the independent methods (paper
 *     002 section 6.3): the union of the clients' regions is found exactly with a bitmap over
 *     the buffer (see mark); when its file bytes per region, (hi - lo) / regions, are below
 *     tess_cb_sieve_threshold the stretch is moved as one span [lo, hi) (sieving, with the
 *     collective buffer as the sieve buffer: no second buffer, no copy), else region by region
 *     (naive for one region, list I/O for more, batches of TP_CHUNK regions described by an
 *     hindexed type). A written span with holes is first read only where the holes are: holes
 *     closer than the threshold are read together. On files where independent sieving writes can
 *     happen, every write holds a write lock on its extent (the same rule as file.c).
 *  6. Pipelining (tess_cb_pipeline, when cb_buffer_size >= 2): the buffer is two halves; a write
 *     stores window k-1 while window k is exchanged, a read reads window k+1 while window k is
 *     exchanged.
 *
 * Errors: a process that fails keeps taking part until the next agreement, which stops every
 * rank at the same round with the error; the final agreement reports storage errors of the last
 * writes. Nothing waits for a message that a failed rank will not send.
 */
#include "method/comm.h"

#include "type/type.h"

#include <stdlib.h>
#include <string.h>

__extension__ typedef __int128 i128;

#define TP_CHUNK 1024  /* regions per storage call description */
#define TP_HDR 6       /* int64 words of a description header */
#define TP_SAMPLES 64  /* balanced realms: samples per boundary and level */
#define TP_LEVELS 3    /* balanced realms: refinement levels */
#define TP_DONE INT64_MAX

enum { DESC_TYPE = 1, DESC_PAIRS = 2 };
enum { MODE_NONE = 0, MODE_SPAN, MODE_REGIONS };

static inline int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static inline int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }
static inline int64_t clamp64(int64_t v, int64_t lo, int64_t hi) { return min64(max64(v, lo), hi); }

/* Floor division for b > 0 (C division truncates toward zero). */
static inline int64_t floor_div(int64_t a, int64_t b) { return a / b - (a % b < 0); }

/* ------------------------------------------------------------------ type geometry */

/* Data bytes of one instance of monotonic t (a view's or realm's type) at offsets below y
 * (relative to t's origin): descends one block per level, O(depth log blocks). */
static int64_t node_before(const tess_type *t, int64_t y)
{
    int64_t acc = 0;
    for (;;) {
        if (t->kind == TESSI_BUILTIN)
            return acc + clamp64(y, 0, t->size);
        if (y <= t->true_lb)
            return acc;
        if (y >= t->true_ub)
            return acc + t->size;
        int64_t lo = 0, hi = tessi_num_blocks(t) - 1; /* last block whose data starts below y */
        while (lo < hi) {
            int64_t mid = lo + (hi - lo + 1) / 2;
            if (tessi_block_displ(t, mid) + tessi_block_child(t, mid)->true_lb < y)
                lo = mid;
            else
                hi = mid - 1;
        }
        const tess_type *ch = tessi_block_child(t, lo);
        int64_t d = tessi_block_displ(t, lo), n = tessi_block_len(t, lo), j = 0;
        if (t->kind == TESSI_INDEXED || t->kind == TESSI_STRUCT)
            acc += t->prefix[lo];
        else
            acc += lo * t->blocklen * ch->size;
        if (ch->extent > 0)
            j = clamp64((y - d - ch->true_lb) / ch->extent, 0, n - 1);
        acc += j * ch->size;
        y -= d + j * ch->extent;
        t = ch;
    }
}

int tessi_stream_at(const tess_type *t, int64_t base, int64_t x, int64_t *s)
{
    i128 rel = (i128)x - base - t->true_lb;
    *s = 0;
    if (rel <= 0)
        return 0;
    i128 k = rel / t->extent;
    int64_t y = (int64_t)(rel - k * t->extent) + t->true_lb;
    i128 v = k * t->size + node_before(t, y);
    if (v > INT64_MAX)
        return tessi_error(TESS_ERR_OVERFLOW, "two-phase: stream position at file byte %lld "
                           "overflows int64", (long long)x);
    *s = (int64_t)v;
    return 0;
}

/* The file offset of stream byte s of t tiled from base. */
static int file_at(const tess_type *t, int64_t base, int64_t s, int64_t *x)
{
    tess_cursor c;
    tessi_run r;
    int64_t k = s / t->size, n;
    int rc = tessi_cursor_init(&c, t, 1);
    if (rc || (rc = tess_cursor_seek(&c, s - k * t->size)))
        return rc;
    tessi_cursor_runs(&c, &r, 1, 1, &n);
    i128 v = (i128)base + (i128)k * t->extent + r.off;
    if (n != 1 || v > INT64_MAX || v < INT64_MIN)
        return tessi_error(TESS_ERR_OVERFLOW, "two-phase: file offset of stream byte %lld "
                           "overflows int64", (long long)s);
    *x = (int64_t)v;
    return 0;
}

/* The tiles [k, k + *count) that `bytes` stream bytes from `first` touch, and where tile k is. */
static int tiles_of(const tess_type *t, int64_t base, int64_t first, int64_t bytes, int64_t *k,
                    int64_t *count, int64_t *kbase)
{
    *k = first / t->size;
    i128 end = ((i128)first + bytes + t->size - 1) / t->size;
    i128 b = (i128)base + (i128)*k * t->extent;
    if (b > INT64_MAX || b < INT64_MIN || end > INT64_MAX)
        return tessi_error(TESS_ERR_OVERFLOW, "two-phase: tile origin beyond int64");
    *count = (int64_t)end - *k;
    *kbase = (int64_t)b;
    return 0;
}

int tessi_tiled_open(tessi_rsrc *src, const tess_type *t, int64_t base, int64_t first,
                     int64_t bytes, int64_t *regions)
{
    int64_t k = 0, count = 0, kbase = base;
    *src = (tessi_rsrc){.cur = NULL};
    int rc = bytes ? tiles_of(t, base, first, bytes, &k, &count, &kbase) : 0;
    return rc ? rc : tessi_rsrc_open(src, t, count, kbase, first - k * t->size, bytes, regions);
}

/* Regions of `bytes` stream bytes from `first` of t tiled from base, adjacent ones merged,
 * counted run by run (a strided run of n regions costs O(1)); stops at cap. */
static int count_regions(const tess_type *t, int64_t base, int64_t first, int64_t bytes,
                         int64_t cap, int64_t *n)
{
    int64_t k = 0, count = 0, kbase = 0, got, left = bytes, prev_end = INT64_MIN;
    tessi_run runs[64];
    tess_cursor c;
    *n = 0;
    if (bytes == 0)
        return 0;
    int rc = tiles_of(t, base, first, bytes, &k, &count, &kbase);
    if (rc || (rc = tessi_cursor_init(&c, t, count)) ||
        (rc = tess_cursor_seek(&c, first - k * t->size)))
        return rc;
    while (left > 0 && *n < cap) {
        tessi_cursor_runs(&c, runs, 64, left, &got);
        if (got == 0)
            return tessi_error(TESS_ERR_INTERNAL, "two-phase: region count ran out of data");
        for (int64_t i = 0; i < got; i++) {
            const tessi_run *r = &runs[i];
            bool dense = r->n == 1 || r->stride == r->len;
            *n += (dense ? 1 : r->n) - (r->off == prev_end);
            prev_end = r->off + (r->n - 1) * r->stride + r->len;
            left -= r->n * r->len;
        }
    }
    *n = min64(*n, cap);
    return 0;
}

/* --------------------------------------------------------------- agreement */

int tessi_coll_agree(tessi_coll *c, int rc, const char *who)
{
    int64_t v[2] = {rc, rc ? -(int64_t)c->rank - 1 : 0};
    int err = c->comm->allreduce(c->ctx, v, 2, TESSI_REDUCE_MIN);
    if (rc || err)
        return rc ? rc : err;
    if (v[0])
        return tessi_error((int)v[0], "%s: failed on rank %lld: %s", who,
                           (long long)(-v[1] - 1), tess_strerror((int)v[0]));
    return 0;
}

/* ------------------------------------------------------------------ state */

typedef struct {
    const tess_type *t; /* TESS_BYTE for a contiguous realm */
    int64_t base;       /* origin of tile 0 */
    int64_t s0, s1;     /* realm stream bytes of the aggregate access region */
    int64_t floor;      /* lowest window start (aligned realms may start before s0) */
    bool contig;
} realm;

typedef struct {        /* a client as an aggregator knows it (from its description) */
    int rank;
    tess_type *t;       /* owned */
    int64_t disp, origin, start, end;
} client;

typedef struct {        /* a contiguous file piece of a window: [f, f + len) at buffer byte q */
    int64_t f, len, q;
} stretch;

typedef struct {        /* a client's stream range [lo, hi) inside stretch st */
    int64_t st, cl, lo, hi;
} piece;

typedef struct {        /* storage plan of one stretch */
    int64_t lo, hi, nunion, cov; /* union of the data: extent, regions, bytes */
    int mode;
    bool holes, locked;
} splan;

typedef struct {
    bool active;        /* planned (and prepared unless the process failed) */
    char *buf;          /* its half of the collective buffer */
    uint64_t *bits;     /* which bytes of it hold data (see mark) */
    stretch *str;
    int64_t nstr, capstr;
    piece *pc;
    int64_t npc, cappc;
    splan *sp;
    tessi_seg *aseg;    /* aggregator side, grouped by client */
    tessi_seg *cseg;    /* client side, grouped by aggregator */
    int64_t ncseg, capcseg;
    tessi_xfer *send, *recv;
    tessi_xfer self_from, self_to;
    void *x;            /* prepared exchange */
    int64_t resent;
} round;

/*
 * Everything of size O(group) a call needs, allocated when the file is opened: a call never
 * fails for want of it between two collective steps (a rank that cannot take part hangs the
 * others).
 */
struct tessi_tp_ws {
    realm *rl;           /* per aggregator */
    int64_t *rs, *re;    /* per aggregator: my stream range in its realm */
    int64_t *w, *wn;     /* per aggregator: window of the round being planned; agreed next */
    int64_t *counts;     /* 2 * size: description bytes sent to / received from each rank */
    int64_t *vec;        /* 3 + naggs: an agreement */
    int64_t *bal;        /* balanced realms: bounds, sample points and sums */
    tessi_xfer *xf;      /* 4 * size: send and receive tables of two rounds */
};

typedef struct {
    tessi_coll_access *a;
    tessi_coll *c;
    const struct tessi_comm *cm;
    int P, A, me;        /* group size, aggregators, my aggregator index (-1: none) */
    bool pipe;           /* two halves, exchange overlapped with storage */
    bool pfr_new;        /* this call fixed the persistent realms */
    int64_t glo, ghi;    /* aggregate access region */
    int64_t win;         /* window bytes (a half when pipelined) */
    int64_t align;       /* window start alignment (1: none) */
    int64_t thr;         /* sieve threshold */
    realm *rl;
    int64_t *rs, *re, *w, *wn;
    int64_t mine_next;   /* my realm's next window, for the next agreement */
    client *cl;
    int64_t ncl;
    char *cbuf;
    uint64_t *bits;      /* the coverage bitmaps of both halves */
    stretch *tmp;        /* scratch stretches for client-side windows */
    int64_t ntmp, captmp;
    round r[2];
    int64_t eof;         /* lowest missing file byte a read found (agreed after each round) */
    int rc;              /* this process's first failure */
    double xsec;
} tp;

static void note(tp *p, int rc)
{
    if (rc && !p->rc)
        p->rc = rc;
}

/* Make room for need elements in *arr (capacity *cap). */
static int grow(void *arr, int64_t *cap, int64_t need, size_t el)
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
static int view_pos(const tp *p, int64_t x, int64_t lo, int64_t hi, int64_t *s)
{
    int rc = tessi_stream_at(p->a->view->filetype, p->a->view->disp, x, s);
    *s = clamp64(*s, lo, hi);
    return rc;
}

/* A client's stream position of file byte x, clamped to its range. */
static int client_pos(const client *c, int64_t x, int64_t *s)
{
    int rc = tessi_stream_at(c->t, c->disp, x, s);
    *s = clamp64(*s + c->origin, c->start, c->end);
    return rc;
}

/* ------------------------------------------------------------------ realms */

static int64_t round_up(int64_t v, int64_t m) { return (int64_t)(((i128)v + m - 1) / m * m); }

/* Periodic realm of aggregator a: tiles from the one holding glo. */
static int periodic_realm(tp *p, const tessi_realm_type *pt, int a, realm *r)
{
    const tess_type *t = pt->type;
    i128 anchor = (i128)pt->anchor + (i128)a * pt->shift;
    i128 k = ((i128)p->glo - anchor - t->true_lb) / t->extent;
    if ((i128)p->glo - anchor - t->true_lb < 0 && ((i128)p->glo - anchor - t->true_lb) % t->extent)
        k--;
    i128 base = anchor + k * t->extent;
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
    lo = max64(lo, p->glo);
    hi = min64(hi, p->ghi);
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
        int rc = view_pos(p, pts[i], a->start, a->start + a->bytes, &s);
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
                    lo[i] + (int64_t)(((i128)(hi[i] - lo[i]) * (j + 1) + TP_SAMPLES - 1) /
                                      TP_SAMPLES);
        memset(cum, 0, sizeof(int64_t) * (size_t)n);
        if (p->rc == 0)
            note(p, my_cum(p, pts, n, cum));
        double t0 = tessi_now();
        rc = p->cm->allreduce(p->c->ctx, cum, n, TESSI_REDUCE_SUM);
        p->xsec += tessi_now() - t0;
        if (rc)
            return rc;
        for (int64_t i = 0; i < nb; i++) {
            int64_t target = (int64_t)((i128)total * (i + 1) / A), j = 0;
            while (j < TP_SAMPLES - 1 && cum[i * TP_SAMPLES + j] < target)
                j++;
            if (j > 0)
                lo[i] = pts[i * TP_SAMPLES + j - 1];
            hi[i] = pts[i * TP_SAMPLES + j];
        }
    }
    for (int i = 0; i < nb; i++)
        bnd[i + 1] = max64(hi[i], bnd[i]);
    return 0;
}

/* Every aggregator's realm (the same on every rank). Returns communication failures; local
 * ones are noted. */
static int make_realms(tp *p)
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

/* ------------------------------------------------------------------ descriptions */

/* My stream range [rs, re) in each realm. */
static int my_ranges(tp *p)
{
    const tessi_coll_access *a = p->a;
    int64_t s = a->start, e = a->start + a->bytes;
    for (int b = 0; b < p->A; b++) {
        const realm *r = &p->rl[b];
        p->rs[b] = p->re[b] = s;
        if (a->bytes == 0 || r->s1 <= r->s0)
            continue;
        if (!r->contig) {
            p->re[b] = e;
            continue;
        }
        int rc = view_pos(p, r->base + r->s0, s, e, &p->rs[b]);
        if (rc || (rc = view_pos(p, r->base + r->s1, s, e, &p->re[b])))
            return rc;
    }
    return 0;
}

/* The size of my description for each aggregator (scounts, by rank): the encoded filetype, or
 * the pairs where they are fewer bytes (contiguous realms); and what a flattened exchange would
 * send: 16 bytes per file region, regions cut at realm ends. */
static int describe_sizes(tp *p, size_t enc_len, int64_t *scounts, int64_t *total,
                          int64_t *flat)
{
    const tessi_coll_access *a = p->a;
    const tessi_view *v = a->view;
    int64_t nreg;
    int rc = 0;
    for (int b = 0; rc == 0 && b < p->A; b++) {
        int64_t n = p->re[b] - p->rs[b], size = TP_HDR * 8 + (int64_t)enc_len;
        if (n <= 0)
            continue;
        if (p->rl[b].contig) {
            if ((rc = count_regions(v->filetype, v->disp, p->rs[b], n, INT64_MAX, &nreg)))
                break;
            *flat += 16 * nreg;
            if (16 * nreg < (int64_t)enc_len)
                size = TP_HDR * 8 + 16 * nreg;
        }
        scounts[p->c->aggs[b]] = size;
        *total += size;
    }
    if (rc == 0 && a->bytes > 0 && !p->rl[0].contig &&
        (rc = count_regions(v->filetype, v->disp, a->start, a->bytes, INT64_MAX, &nreg)) == 0)
        *flat += 16 * nreg;
    return rc;
}

/* Write the pairs of my file regions in realm b at out; *np receives their number. */
static int write_pairs(tp *p, int b, char *out, int64_t *np)
{
    const tessi_view *v = p->a->view;
    tessi_rsrc src;
    tess_region r;
    *np = 0;
    int rc = tessi_tiled_open(&src, v->filetype, v->disp, p->rs[b], p->re[b] - p->rs[b], NULL);
    while (rc == 0 && (rc = tessi_rsrc_peek(&src, &r)) == 0 && r.len > 0) {
        memcpy(out + 16 * *np, &r.off, 8);
        memcpy(out + 16 * *np + 8, &r.len, 8);
        ++*np;
        tessi_rsrc_take(&src, r.len);
    }
    tessi_rsrc_close(&src);
    return rc;
}

/* Decode the description of rank r (len bytes at msg) into client c. */
static int decode_client(const char *msg, int64_t len, int r, client *c)
{
    int64_t hdr[TP_HDR], body = len - TP_HDR * 8;
    if (body < 0)
        return tessi_error(TESS_ERR_DECODE, "two-phase: short description from rank %d", r);
    memcpy(hdr, msg, sizeof hdr);
    *c = (client){.rank = r, .disp = hdr[1], .origin = hdr[2], .start = hdr[3], .end = hdr[4]};
    int rc;
    if (hdr[0] == DESC_TYPE && hdr[5] == body) {
        rc = tess_type_decode(msg + TP_HDR * 8, (size_t)body, &c->t);
    } else if (hdr[0] == DESC_PAIRS && hdr[5] >= 1 && hdr[5] <= body / 16 &&
               body == 16 * hdr[5]) {
        int64_t np = hdr[5], *arr = malloc(sizeof(int64_t) * (size_t)np * 2);
        if (!arr)
            return tessi_error(TESS_ERR_NOMEM, "two-phase: out of memory (%lld pairs)",
                               (long long)np);
        for (int64_t i = 0; i < np; i++) { /* arr: lengths, then offsets */
            memcpy(arr + np + i, msg + TP_HDR * 8 + 16 * i, 8);
            memcpy(arr + i, msg + TP_HDR * 8 + 16 * i + 8, 8);
        }
        rc = tess_type_hindexed(np, arr, arr + np, TESS_BYTE, &c->t);
        free(arr);
    } else {
        return tessi_error(TESS_ERR_DECODE, "two-phase: malformed description from rank %d", r);
    }
    if (rc == 0 && (c->t->size <= 0 || c->t->extent <= 0 || !c->t->monotonic ||
                    c->start > c->end || c->start < c->origin)) {
        tess_type_free(c->t);
        c->t = NULL;
        rc = tessi_error(TESS_ERR_DECODE, "two-phase: inconsistent description from rank %d", r);
    }
    return rc;
}

/* Build and exchange the descriptions; aggregators decode theirs into p->cl. A process that
 * fails here sends nothing (the setup agreement stops the call). Returns communication
 * failures. */
static int describe(tp *p)
{
    tessi_coll_access *a = p->a;
    const tessi_view *v = a->view;
    int64_t *scounts = p->c->tp->counts, *rcounts = scounts + p->P, total = 0, flat = 0;
    size_t enc_len = 0;
    char *sbuf = NULL, *enc = NULL, *at;
    void *rbuf = NULL;
    memset(scounts, 0, sizeof(int64_t) * (size_t)p->P);
    if (p->rc == 0 && a->bytes > 0) {
        tess_type_encode(v->filetype, NULL, 0, &enc_len);
        if (!(enc = malloc(enc_len)))
            note(p, tessi_error(TESS_ERR_NOMEM, "two-phase: out of memory (encoding)"));
        else
            note(p, tess_type_encode(v->filetype, enc, enc_len, &enc_len));
    }
    if (p->rc == 0)
        note(p, describe_sizes(p, enc_len, scounts, &total, &flat));
    if (p->rc == 0 && total > 0 && !(sbuf = malloc((size_t)total)))
        note(p, tessi_error(TESS_ERR_NOMEM, "two-phase: out of memory (descriptions)"));
    at = sbuf;
    for (int b = 0; p->rc == 0 && b < p->A; b++) {
        int64_t size = scounts[p->c->aggs[b]], np;
        if (size == 0)
            continue;
        int64_t hdr[TP_HDR] = {DESC_TYPE, v->disp, 0, p->rs[b], p->re[b], (int64_t)enc_len};
        if (size == TP_HDR * 8 + (int64_t)enc_len) {
            memcpy(at + TP_HDR * 8, enc, enc_len);
        } else {
            note(p, write_pairs(p, b, at + TP_HDR * 8, &np));
            hdr[0] = DESC_PAIRS;
            hdr[1] = 0;
            hdr[2] = p->rs[b];
            hdr[5] = np;
            if (p->rc == 0 && TP_HDR * 8 + 16 * np != size)
                note(p, tessi_error(TESS_ERR_INTERNAL, "two-phase: %lld pairs written, %lld "
                                    "counted", (long long)np,
                                    (long long)(size - TP_HDR * 8) / 16));
        }
        memcpy(at, hdr, sizeof hdr);
        at += size;
    }
    if (p->rc)
        memset(scounts, 0, sizeof(int64_t) * (size_t)p->P);
    else {
        a->st->stats.request_bytes += total;
        a->st->stats.flat_request_bytes += flat;
    }
    double t0 = tessi_now();
    int rc = p->cm->alltoallv(p->c->ctx, sbuf, scounts, &rbuf, rcounts);
    p->xsec += tessi_now() - t0;
    free(sbuf);
    free(enc);
    if (rc)
        return rc;
    int64_t nfrom = 0;
    for (int r = 0; r < p->P; r++)
        nfrom += rcounts[r] > 0;
    if (nfrom && p->rc == 0 && !(p->cl = calloc((size_t)nfrom, sizeof(client))))
        note(p, tessi_error(TESS_ERR_NOMEM, "two-phase: out of memory (clients)"));
    at = rbuf;
    for (int r = 0; p->rc == 0 && r < p->P; at += rcounts[r], r++)
        if (rcounts[r] > 0) {
            note(p, decode_client(at, rcounts[r], r, &p->cl[p->ncl]));
            p->ncl += p->cl[p->ncl].t != NULL;
        }
    free(rbuf);
    return 0;
}

/* ------------------------------------------------------------------ windows */

/* The realm stream position of the next window of my realm at or after e (TP_DONE: none):
 * the first byte holding data of some client, aligned down (never below lower). */
static int next_window(tp *p, int64_t e, int64_t lower, int64_t *w)
{
    const realm *r = &p->rl[p->me];
    int64_t x, ymin = TP_DONE, s;
    *w = TP_DONE;
    if (e >= r->s1)
        return 0;
    int rc = r->contig ? (x = r->base + e, 0) : file_at(r->t, r->base, e, &x);
    for (int64_t i = 0; rc == 0 && i < p->ncl; i++) {
        const client *c = &p->cl[i];
        int64_t y;
        if ((rc = client_pos(c, x, &s)) || s >= c->end)
            continue;
        if ((rc = file_at(c->t, c->disp, s - c->origin, &y)) == 0)
            ymin = min64(ymin, y);
    }
    if (rc || ymin == TP_DONE)
        return rc;
    if ((rc = tessi_stream_at(r->t, r->base, ymin, &s)))
        return rc;
    if (s >= r->s1)
        return 0;
    s = max64(s, e);
    if (p->align > 1)
        s = max64(floor_div(r->base + s, p->align) * p->align - r->base, lower);
    *w = s;
    return 0;
}

/* The stretches of aggregator b's window at w, into *out. */
static int window_stretches(tp *p, int b, int64_t w, stretch **out, int64_t *n, int64_t *cap)
{
    const realm *r = &p->rl[b];
    int64_t len = min64(p->win, r->s1 - w), q = 0;
    tessi_rsrc src;
    tess_region g;
    *n = 0;
    if (r->contig) {
        int rc = grow(out, cap, 1, sizeof(stretch));
        if (rc == 0)
            (*out)[(*n)++] = (stretch){r->base + w, len, 0};
        return rc;
    }
    int rc = tessi_tiled_open(&src, r->t, r->base, w, len, NULL);
    while (rc == 0 && (rc = tessi_rsrc_peek(&src, &g)) == 0 && g.len > 0) {
        if ((rc = grow(out, cap, *n + 1, sizeof(stretch))))
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
        int64_t w = pos >> 6, b = pos & 63, k = min64(64 - b, end - pos);
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
static int64_t bits_find(const uint64_t *bm, int64_t pos, int64_t end, bool set)
{
    while (pos < end) {
        int64_t w = pos >> 6, b = pos & 63;
        uint64_t x = (set ? bm[w] : ~bm[w]) >> b;
        if (x)
            return min64(pos + __builtin_ctzll(x), end);
        pos = (w + 1) << 6;
    }
    return end;
}

/* Mark the bytes of the round's buffer [0, len) that some client's data covers. */
static int mark(round *rd, int64_t len)
{
    tessi_run runs[64];
    memset(rd->bits, 0, (size_t)((len + 63) >> 6) * 8);
    for (int64_t i = 0; i < rd->npc; i++) {
        const tessi_seg *sg = &rd->aseg[i];
        tess_cursor c;
        int64_t disp, left = sg->bytes, n;
        int rc = tessi_seg_cursor(sg, &c, &disp);
        while (rc == 0 && left > 0) {
            tessi_cursor_runs(&c, runs, 64, left, &n);
            for (int64_t k = 0; k < n; k++) {
                const tessi_run *r = &runs[k];
                int64_t at = disp + r->off, span = (r->n - 1) * r->stride;
                if (min64(at, at + span) < 0 || max64(at, at + span) + r->len > len)
                    return tessi_error(TESS_ERR_INTERNAL, "two-phase: a client's data falls "
                                       "outside the window");
                for (int64_t j = 0; j < r->n; j++)
                    bits_set(rd->bits, at + j * r->stride, r->len);
                left -= r->n * r->len;
            }
            if (n == 0)
                rc = tessi_error(TESS_ERR_INTERNAL, "two-phase: a segment ran out of data");
        }
        if (rc)
            return rc;
    }
    return 0;
}

/* ------------------------------------------------------------------ storage */

/* Move `bytes` bytes of the regions of t (count instances from file byte fbase) between the
 * storage and the round's buffer, memory byte = file byte + mshift, by the independent method
 * that fits: naive for one region, list for more. *done as the method says. */
static int move(tp *p, round *rd, const tess_type *t, int64_t count, int64_t fbase,
                int64_t mshift, int64_t bytes, bool write, int64_t *done)
{
    tessi_coll_access *a = p->a;
    tessi_rsrc fs, ms;
    int rc = tessi_rsrc_open(&fs, t, count, fbase, 0, bytes, &a->st->stats.regions);
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
                        .bytes = bytes};
    const struct tess_method *m = t->num_regions == 1 && (count == 1 || t->dense)
                                      ? &tessi_method_naive
                                      : &tessi_method_list;
    rc = write ? m->write(&acc, done) : m->read(&acc, done);
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
        p->eof = min64(p->eof, r.off);
    while (rc == 0 && r.len > 0) {
        memset(rd->buf + r.off + mshift, 0, (size_t)r.len);
        tessi_rsrc_take(&src, r.len);
        rc = tessi_rsrc_peek(&src, &r);
    }
    tessi_rsrc_close(&src);
    return rc;
}

/* A batch of regions described to the storage at once. */
typedef struct {
    int64_t n, bytes;
    int64_t len[TP_CHUNK], off[TP_CHUNK];
} chunk;

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

/* The union of the data in stretch i: its file extent, regions and bytes. */
static void stretch_stats(const round *rd, int64_t i, splan *sp)
{
    const stretch *st = &rd->str[i];
    int64_t pos = st->q, end = st->q + st->len, first = -1, last = -1;
    *sp = (splan){.mode = MODE_NONE};
    while ((pos = bits_find(rd->bits, pos, end, true)) < end) {
        int64_t stop = bits_find(rd->bits, pos, end, false);
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

/* Move the data regions of stretch i through ck; holes: read the windows around its holes
 * instead (holes less than the sieve threshold apart share a window). */
static int stretch_move(tp *p, round *rd, int64_t i, chunk *ck, bool holes, bool write)
{
    const stretch *st = &rd->str[i];
    const splan *sp = &rd->sp[i];
    int64_t mshift = st->q - st->f, pos = sp->lo + mshift, end = sp->hi + mshift, cs = -1, ce = -1;
    bool w = write && !holes;
    int rc = 0;
    while (rc == 0 && (pos = bits_find(rd->bits, pos, end, !holes)) < end) {
        int64_t stop = bits_find(rd->bits, pos, end, holes);
        if (!holes) {
            rc = chunk_add(p, rd, ck, mshift, w, pos - mshift, stop - pos);
        } else { /* a hole [pos, stop): a new window when the data since the last is long */
            if (cs >= 0 && pos - ce >= p->thr) {
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

static int lock_span(tp *p, splan *sp)
{
    if (!p->a->lock_writes || sp->locked)
        return 0;
    int err = tessi_drv_lock(p->a->st, sp->lo, sp->hi - sp->lo, true);
    if (err && !tessi_lock_unsupported(err))
        return tessi_drv_error(p->a->st, err, "lock", sp->lo, sp->hi - sp->lo);
    sp->locked = err == 0;
    return 0;
}

static int unlock_span(tp *p, splan *sp)
{
    if (!sp->locked)
        return 0;
    sp->locked = false;
    int err = tessi_drv_unlock(p->a->st, sp->lo, sp->hi - sp->lo);
    return err ? tessi_drv_error(p->a->st, err, "unlock", sp->lo, sp->hi - sp->lo) : 0;
}

/* The storage half before the exchange: mark the data, plan every stretch; reads read, writes
 * lock and read the hole windows of spans. */
static int storage_before(tp *p, round *rd, chunk *ck)
{
    tessi_coll_access *a = p->a;
    int64_t len = 0;
    for (int64_t i = 0; i < rd->nstr; i++)
        len += rd->str[i].len;
    int rc = mark(rd, len);
    for (int64_t i = 0; rc == 0 && i < rd->nstr; i++) {
        splan *sp = &rd->sp[i];
        const stretch *s = &rd->str[i];
        stretch_stats(rd, i, sp);
        if (sp->nunion == 0)
            continue;
        int64_t span = sp->hi - sp->lo;
        sp->holes = sp->cov < span;
        bool sieve = sp->nunion == 1 || span / sp->nunion < p->thr;
        sp->mode = sieve && (!a->write || !sp->holes || a->readable) ? MODE_SPAN : MODE_REGIONS;
        if (a->write) {
            if ((rc = lock_span(p, sp)) == 0 && sp->mode == MODE_SPAN && sp->holes)
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

/* The storage half after the exchange (writes): write and unlock every stretch. Once something
 * failed, only unlock. */
static int storage_after(tp *p, round *rd, chunk *ck, bool failed)
{
    int rc = 0;
    for (int64_t i = 0; i < rd->nstr; i++) {
        splan *sp = &rd->sp[i];
        const stretch *s = &rd->str[i];
        int64_t done, span = sp->hi - sp->lo;
        if (rc == 0 && !failed && sp->mode == MODE_SPAN)
            rc = move(p, rd, TESS_BYTE, span, sp->lo, s->q - s->f, span, true, &done);
        else if (rc == 0 && !failed && sp->mode == MODE_REGIONS)
            rc = stretch_move(p, rd, i, ck, false, true);
        int err = unlock_span(p, sp);
        if (rc == 0)
            rc = err;
    }
    return rc;
}

/* ------------------------------------------------------------------ rounds */

static void round_reset(tp *p, round *rd)
{
    if (rd->x)
        p->cm->xfree(p->c->ctx, rd->x);
    rd->x = NULL;
    rd->active = false;
    rd->nstr = rd->npc = rd->ncseg = rd->resent = 0;
    memset(rd->send, 0, sizeof(tessi_xfer) * (size_t)p->P);
    memset(rd->recv, 0, sizeof(tessi_xfer) * (size_t)p->P);
    rd->self_from = rd->self_to = (tessi_xfer){0};
}

static void round_free(tp *p, round *rd)
{
    if (rd->send)
        round_reset(p, rd);
    free(rd->str);
    free(rd->pc);
    free(rd->sp);
    free(rd->aseg);
    free(rd->cseg);
}

/* The aggregator side of a round: my window's stretches, the clients' pieces, segments into
 * the buffer grouped by client. */
static int plan_aggregator(tp *p, round *rd)
{
    int64_t w = p->w[p->me];
    int rc = window_stretches(p, p->me, w, &rd->str, &rd->nstr, &rd->capstr);
    for (int64_t i = 0; rc == 0 && i < rd->nstr; i++) {
        const stretch *s = &rd->str[i];
        for (int64_t k = 0; rc == 0 && k < p->ncl; k++) {
            int64_t lo, hi;
            if ((rc = client_pos(&p->cl[k], s->f, &lo)) ||
                (rc = client_pos(&p->cl[k], s->f + s->len, &hi)) || hi <= lo)
                continue;
            if ((rc = grow(&rd->pc, &rd->cappc, rd->npc + 1, sizeof(piece))) == 0)
                rd->pc[rd->npc++] = (piece){i, k, lo, hi};
        }
    }
    if (rc)
        return rc;
    free(rd->sp);
    free(rd->aseg);
    rd->sp = calloc((size_t)rd->nstr + 1, sizeof(splan));
    rd->aseg = malloc(sizeof(tessi_seg) * (size_t)(rd->npc + 1));
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
        rd->aseg[slot] = (tessi_seg){c->t, c->disp - s->f + s->q, pc->lo - c->origin,
                                     pc->hi - pc->lo};
    }
    int64_t at = 0;
    for (int64_t k = 0; k < p->ncl; k++) {
        const client *c = &p->cl[k];
        int64_t n = first[k] - at, bytes = 0;
        for (int64_t j = at; j < first[k]; j++)
            bytes += rd->aseg[j].bytes;
        if (n > 0) {
            tessi_xfer x = {.buf = rd->buf, .seg = rd->aseg + at, .nseg = n, .bytes = bytes};
            if (c->rank == p->c->rank)
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
        if ((rc = window_stretches(p, b, p->w[b], &p->tmp, &p->ntmp, &p->captmp)))
            break;
        for (int64_t i = 0; rc == 0 && i < p->ntmp; i++) {
            int64_t lo, hi, f = p->tmp[i].f;
            if ((rc = view_pos(p, f, p->rs[b], p->re[b], &lo)) ||
                (rc = view_pos(p, f + p->tmp[i].len, p->rs[b], p->re[b], &hi)) || hi <= lo)
                continue;
            at[2 * b + 1] += hi - lo;
            tessi_seg *last = rd->ncseg > at[2 * b] ? &rd->cseg[rd->ncseg - 1] : NULL;
            if (last && last->first + last->bytes == lo - a->start)
                last->bytes += hi - lo;
            else if ((rc = grow(&rd->cseg, &rd->capcseg, rd->ncseg + 1, sizeof(tessi_seg))) == 0)
                rd->cseg[rd->ncseg++] = (tessi_seg){a->memtype, 0, lo - a->start, hi - lo};
        }
    }
    for (int b = 0; rc == 0 && b < p->A; b++) {
        int64_t n = (b + 1 < p->A ? at[2 * b + 2] : rd->ncseg) - at[2 * b];
        if (n == 0)
            continue;
        int r = p->c->aggs[b];
        tessi_xfer x = {.buf = a->buf, .seg = rd->cseg + at[2 * b], .nseg = n,
                        .bytes = at[2 * b + 1]};
        if (r == p->c->rank) {
            *(a->write ? &rd->self_from : &rd->self_to) = x;
        } else {
            (a->write ? rd->send : rd->recv)[r] = x;
            rd->resent += x.bytes;
        }
    }
    free(at);
    return rc;
}

/* Plan round rd for the windows p->w: the aggregator's storage-before half, both sides'
 * transfers, and the prepared exchange; then my next window into p->wn. Failures are noted. */
static void plan_round(tp *p, round *rd, chunk *ck)
{
    int rc = 0;
    round_reset(p, rd);
    rd->active = true;
    p->mine_next = TP_DONE;
    if (p->rc)
        return;
    if (p->me >= 0 && p->w[p->me] != TP_DONE) {
        int64_t w = p->w[p->me];
        if ((rc = plan_aggregator(p, rd)) == 0)
            rc = storage_before(p, rd, ck);
        note(p, rc);
        if (rc == 0) {
            int64_t end = min64(w + p->win, p->rl[p->me].s1);
            note(p, next_window(p, end, end, &p->mine_next));
        }
    }
    if (p->rc == 0 && p->a->bytes > 0)
        note(p, plan_client(p, rd));
    /* both sides of my own share must describe the same bytes */
    if (p->rc == 0 && rd->self_from.bytes != rd->self_to.bytes)
        note(p, tessi_error(TESS_ERR_INTERNAL, "two-phase: own share %lld != %lld bytes",
                            (long long)rd->self_from.bytes, (long long)rd->self_to.bytes));
    if (p->rc == 0)
        note(p, p->cm->xprepare(p->c->ctx, rd->send, rd->recv, &rd->x));
}

/* Copy my own share, cursor to cursor. */
static int self_copy(const tessi_xfer *from, const tessi_xfer *to)
{
    tessi_rsrc fs = {.cur = NULL}, ts = {.cur = NULL};
    tess_region fr = {0, 0}, tr = {0, 0};
    int64_t fi = 0, ti = 0, left = from->bytes;
    int rc = 0;
    while (rc == 0 && left > 0) {
        if (fr.len == 0) {
            tessi_rsrc_close(&fs);
            const tessi_seg *s = &from->seg[fi++];
            if ((rc = tessi_tiled_open(&fs, s->type, s->disp, s->first, s->bytes, NULL)) ||
                (rc = tessi_rsrc_peek(&fs, &fr)))
                break;
        }
        if (tr.len == 0) {
            tessi_rsrc_close(&ts);
            const tessi_seg *s = &to->seg[ti++];
            if ((rc = tessi_tiled_open(&ts, s->type, s->disp, s->first, s->bytes, NULL)) ||
                (rc = tessi_rsrc_peek(&ts, &tr)))
                break;
        }
        int64_t n = min64(fr.len, tr.len);
        memcpy(to->buf + tr.off, from->buf + fr.off, (size_t)n);
        tessi_rsrc_take(&fs, n);
        tessi_rsrc_take(&ts, n);
        left -= n;
        if ((rc = tessi_rsrc_peek(&fs, &fr)) == 0)
            rc = tessi_rsrc_peek(&ts, &tr);
    }
    tessi_rsrc_close(&fs);
    tessi_rsrc_close(&ts);
    return rc;
}

/*
 * The agreement of a round: the first error (and a rank that had it), the lowest end of file a
 * read found, and (windows) every aggregator's next window into p->wn. Returns communication
 * failures; the agreed verdict goes to *agreed.
 */
static int agree(tp *p, const char *who, bool windows, int *agreed)
{
    int64_t *v = p->c->tp->vec, n = 3 + (windows ? p->A : 0);
    v[0] = p->rc;
    v[1] = p->eof;
    v[2] = p->rc ? -(int64_t)p->c->rank - 1 : 0;
    for (int b = 0; windows && b < p->A; b++)
        v[3 + b] = b == p->me ? p->mine_next : TP_DONE;
    double t0 = tessi_now();
    int rc = p->cm->allreduce(p->c->ctx, v, n, TESSI_REDUCE_MIN);
    p->xsec += tessi_now() - t0;
    if (rc)
        return rc;
    p->eof = v[1];
    *agreed = p->rc ? p->rc
                    : v[0] ? tessi_error((int)v[0], "%s: failed on rank %lld: %s", who,
                                         (long long)(-v[2] - 1), tess_strerror((int)v[0]))
                           : 0;
    for (int b = 0; windows && b < p->A; b++)
        p->wn[b] = v[3 + b];
    return 0;
}

/* Everything before the rounds: realms, my ranges, descriptions, the buffer, my first window.
 * Returns communication failures; local ones are noted. */
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
            p->glo = min64(p->glo, a->recs[r].lo);
            p->ghi = max64(p->ghi, a->recs[r].hi);
        }
    if ((rc = make_realms(p)))
        return rc;
    if (p->rc == 0)
        note(p, my_ranges(p));
    if ((rc = describe(p)))
        return rc;
    p->mine_next = TP_DONE;
    if (p->me >= 0 && p->rc == 0) {
        const realm *r = &p->rl[p->me];
        int64_t need = min64(p->win, r->s1 - r->floor), halves = p->pipe ? 2 : 1;
        int64_t words = (need + 63) / 64;
        if (need > 0 && (!(p->cbuf = malloc((size_t)(need * halves))) ||
                         !(p->bits = malloc(sizeof(uint64_t) * (size_t)(words * halves)))))
            note(p, tessi_error(TESS_ERR_NOMEM, "two-phase: cannot allocate a %lld-byte "
                                "collective buffer", (long long)(need * halves)));
        if (p->cbuf && need * halves > a->st->stats.peak_buffer_bytes)
            a->st->stats.peak_buffer_bytes = need * halves;
        p->r[0].buf = p->cbuf;
        p->r[1].buf = p->cbuf ? p->cbuf + (halves - 1) * need : NULL;
        p->r[0].bits = p->bits;
        p->r[1].bits = p->bits ? p->bits + (halves - 1) * words : NULL;
        if (p->rc == 0)
            note(p, next_window(p, r->s0, r->floor, &p->mine_next));
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
    tp p = {.a = a, .c = c, .cm = c->comm, .P = c->size, .A = c->naggs, .me = c->my_agg,
            .pipe = pipe, .win = pipe ? c->h.cb_buffer / 2 : c->h.cb_buffer,
            .eof = TP_DONE, .thr = c->h.sieve_threshold};
    chunk *ck = calloc(1, sizeof(chunk));
    round *cur = &p.r[0], *nxt = &p.r[1], *prev = NULL;
    bool ahead = false; /* cur was planned during the previous exchange (pipelined reads) */
    int agreed = 0, rc;
    *done = 0;
    if (!ck)
        note(&p, tessi_error(TESS_ERR_NOMEM, "two-phase: out of memory"));
    if ((rc = setup(&p)) || (rc = agree(&p, who, true, &agreed)) || agreed)
        goto fail;
    for (;;) {
        if (!ahead) {
            if (!next_round(&p))
                break;
            plan_round(&p, cur, ck);
        }
        if ((rc = agree(&p, who, true, &agreed)) || agreed)
            goto fail;
        double t0 = tessi_now();
        rc = p.cm->xstart(c->ctx, cur->x);
        p.xsec += tessi_now() - t0;
        if (rc)
            goto fail;
        if (pipe && a->write && prev) { /* store the previous window during this exchange */
            note(&p, storage_after(&p, prev, ck, p.rc != 0));
            prev->active = false;
        }
        ahead = pipe && !a->write && next_round(&p);
        if (ahead) /* read the next windows during this exchange */
            plan_round(&p, nxt, ck);
        t0 = tessi_now();
        if (cur->self_from.bytes)
            note(&p, self_copy(&cur->self_from, &cur->self_to));
        rc = p.cm->xwait(c->ctx, cur->x);
        p.xsec += tessi_now() - t0;
        if (rc)
            goto fail;
        a->st->stats.resent_bytes += cur->resent;
        if (a->write && !pipe) {
            note(&p, storage_after(&p, cur, ck, p.rc != 0));
            cur->active = false;
        }
        if (pipe) {
            prev = a->write ? cur : NULL;
            cur = nxt;
            nxt = &p.r[cur == &p.r[0]];
        }
    }
    if (prev && prev->active) {
        note(&p, storage_after(&p, prev, ck, p.rc != 0));
        prev->active = false;
    }
    if ((rc = agree(&p, who, false, &agreed)) || agreed)
        goto fail;
    *done = a->bytes;
    if (!a->write && p.eof != TP_DONE && a->bytes > 0) {
        int64_t s;
        rc = view_pos(&p, p.eof, a->start, a->start + a->bytes, &s);
        *done = s - a->start;
    }
fail:
    for (int i = 0; i < 2; i++) { /* unlock what an interrupted write still holds */
        round *rd = &p.r[i];
        for (int64_t k = 0; rd->sp && k < rd->nstr; k++)
            unlock_span(&p, &rd->sp[k]);
        round_free(&p, rd);
    }
    if (p.pfr_new && (rc || agreed)) { /* the realms were not agreed: fix them next time */
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
    a->st->stats.exchange_seconds += p.xsec;
    return rc ? rc : agreed;
}

/* ------------------------------------------------------------------ workspace */

int tessi_twophase_init(tessi_coll *c)
{
    int A = c->naggs, P = c->size;
    int64_t nbal = (int64_t)(A + 1) + 2 * (A - 1) + 2 * (int64_t)(A - 1) * TP_SAMPLES;
    struct tessi_tp_ws *ws = calloc(1, sizeof *ws);
    if (ws) {
        ws->rl = calloc((size_t)A, sizeof(realm));
        ws->rs = calloc((size_t)A * 4 + (size_t)P * 2 + 3 + (size_t)A + (size_t)nbal,
                        sizeof(int64_t));
        ws->xf = calloc((size_t)P * 4, sizeof(tessi_xfer));
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

int tessi_seg_cursor(const tessi_seg *s, tess_cursor *c, int64_t *disp)
{
    int64_t k = 0, count = 0;
    int rc = tiles_of(s->type, s->disp, s->first, s->bytes, &k, &count, disp);
    if (rc || (rc = tessi_cursor_init(c, s->type, count)))
        return rc;
    return tess_cursor_seek(c, s->first - k * s->type->size);
}
