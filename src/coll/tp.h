/*
 * tp.h - the state of one two-phase call, shared by its modules (internal to src/coll):
 *   twophase.c  the call: set-up, the rounds' loop, agreements, the workspace;
 *   realms.c    every aggregator's realm for the call;
 *   describe.c  the access descriptions (wire format) sent to the aggregators;
 *   window.c    an aggregator's windows and the coverage bitmap of a window;
 *   storage.c   the aggregator's storage half of a round (through the independent methods);
 *   exchange.c  planning a round's exchange, both sides.
 * twophase.c's header comment describes the algorithm.
 */
#ifndef TESS_TP_H
#define TESS_TP_H

#include "coll/coll.h"
#include "type/walk.h"

#define TP_CHUNK 1024  /* regions per storage call description */
#define TP_HDR 6       /* int64 words of a description header */
#define TP_SAMPLES 64  /* balanced realms: samples per boundary and level */
#define TP_LEVELS 3    /* balanced realms: refinement levels */
#define TP_DONE INT64_MAX

enum { DESC_TYPE = 1, DESC_PAIRS = 2 };
enum { MODE_NONE = 0, MODE_SPAN, MODE_REGIONS };

static inline int64_t clamp64(int64_t v, int64_t lo, int64_t hi)
{
    return tessi_min64(tessi_max64(v, lo), hi);
}

/* Floor division for b > 0 (C division truncates toward zero). */
static inline int64_t floor_div(int64_t a, int64_t b) { return a / b - (a % b < 0); }

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
    bool holes;
    bool rmw;           /* a span write with holes through the storage's atomic
                           read-modify-write (TESSI_CAP_RMW): the holes are not read first */
    tessi_lock lock;    /* writes: on [lo, hi) */
} splan;

typedef struct {        /* a transfer packed into the round's staging buffer */
    tess_xfer orig;     /* what it described (segments over the user or collective buffer) */
    int peer;
    bool recv;          /* unpacked after the exchange (else packed before it) */
} staged;

typedef struct {
    bool active;        /* planned (and prepared unless the process failed) */
    char *buf;          /* its half of the collective buffer */
    uint64_t *bits;     /* which bytes of it hold data (see window.c) */
    stretch *str;
    int64_t nstr, capstr;
    piece *pc;
    int64_t npc, cappc;
    splan *sp;
    tess_seg *aseg;     /* aggregator side, grouped by client */
    tess_seg *cseg;     /* client side, grouped by aggregator */
    int64_t ncseg, capcseg;
    tess_xfer *send, *recv;
    tess_xfer self_from, self_to;
    void *x;            /* prepared exchange */
    int64_t resent;
    char *stage;        /* staging buffer (see exchange.c), capstage bytes */
    int64_t capstage;
    staged *stg;        /* the staged transfers, nstg of them, and their one segment each */
    tess_seg *stgseg;
    int64_t nstg, capstg, capstgseg;
    int64_t packed;     /* bytes packed or unpacked this round */
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
    tess_xfer *xf;       /* 4 * size: send and receive tables of two rounds */
};

/* A batch of regions described to the storage at once. */
typedef struct {
    int64_t n, bytes;
    int64_t len[TP_CHUNK], off[TP_CHUNK];
} chunk;

typedef struct {
    tessi_coll_access *a;
    tessi_coll *c;
    const struct tess_group_ops *cm;
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
    int rc;              /* this member's first failure */
    double xsec;         /* seconds in collective steps */
} tp;

/* Keep the first failure of this member (the next agreement stops every member). */
static inline void note(tp *p, int rc)
{
    if (rc && !p->rc)
        p->rc = rc;
}

/* twophase.c */
int tessi_tp_grow(void *arr, int64_t *cap, int64_t need, size_t el);
int tessi_tp_view_pos(const tp *p, int64_t x, int64_t lo, int64_t hi, int64_t *s);
int tessi_tp_client_pos(const client *c, int64_t x, int64_t *s);
int tessi_tp_tiled_open(tessi_rsrc *src, const tess_type *t, int64_t base, int64_t first,
                        int64_t bytes, int64_t *regions);
/* realms.c */
int tessi_tp_realms(tp *p);
/* describe.c */
int tessi_tp_my_ranges(tp *p);
int tessi_tp_describe(tp *p);
/* window.c */
int tessi_tp_next_window(tp *p, int64_t e, int64_t lower, int64_t *w);
int tessi_tp_window_stretches(tp *p, int b, int64_t w, stretch **out, int64_t *n, int64_t *cap);
int tessi_tp_mark(round *rd, int64_t len);
int64_t tessi_tp_bits_find(const uint64_t *bm, int64_t pos, int64_t end, bool set);
void tessi_tp_stretch_cover(const round *rd, int64_t i, splan *sp);
/* storage.c */
int tessi_tp_storage_before(tp *p, round *rd, chunk *ck);
int tessi_tp_storage_after(tp *p, round *rd, chunk *ck, bool failed);
int tessi_tp_unlock_span(tp *p, splan *sp);
/* exchange.c */
void tessi_tp_plan_round(tp *p, round *rd, chunk *ck);
int tessi_tp_unstage(round *rd);
void tessi_tp_round_reset(tp *p, round *rd);
void tessi_tp_round_free(tp *p, round *rd);

#endif
