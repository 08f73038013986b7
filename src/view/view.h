/*
 * view.h - file views (MPI-IO's disp, etype, filetype) and the file-region source of one access.
 *
 * The filetype tiles the file from byte disp: tile k's data bytes lie at
 * disp + k * extent(filetype) + (the filetype's typemap offsets). Offsets of an access count
 * etypes of the view's data stream. A legal view's regions increase strictly, also across
 * tiles, so the file regions of any access come out in increasing file order.
 */
#ifndef TESS_VIEW_H
#define TESS_VIEW_H

#include "base/base.h"

typedef struct tessi_view {
    int64_t disp;
    tess_type *etype, *filetype; /* references held by the view */
    int64_t esize;               /* data bytes of an etype */
    int64_t fsize, fextent;      /* data bytes and extent of a filetype tile */
} tessi_view;

/** The default view: disp 0, etype and filetype TESS_BYTE. */
void tessi_view_init(tessi_view *v);
/** Drop the view's type references. */
void tessi_view_release(tessi_view *v);
/**
 * Check a view against the MPI-IO rules and install it in v (releasing the old types). On
 * error v is unchanged: TESS_ERR_ARG (NULL type, disp < 0), TESS_ERR_VIEW (empty etype or
 * filetype, etype size not dividing filetype size, regions decreasing or overlapping within a
 * tile or across tiles, data before byte 0), TESS_ERR_OVERFLOW (bounds beyond int64).
 */
int tessi_view_set(tessi_view *v, int64_t disp, tess_type *etype, tess_type *filetype);

/* Regions buffered per refill of a region source. */
#define TESSI_RSRC_BATCH 64

/**
 * A region source: the regions of `bytes` data bytes of a type's stream, from stream byte
 * `start` of `count` instances, each offset plus `base`, produced lazily by a cursor (memory
 * O(depth + batch), never a walk from the start). Regions that touch are merged, also across
 * refills. peek/take consume it piece by piece; seek repositions it in O(depth). A source whose
 * instances are one contiguous run of bytes (the default view, contiguous memory) needs no
 * cursor: cur is NULL and [lo, hi) is the run, so the commonest access costs no allocation.
 * Used for the file side of an access (tessi_view_regions) and for the memory side
 * (tessi_rsrc_open on the memory type, offsets relative to the buffer).
 */
typedef struct tessi_rsrc {
    const tess_type *type; /* the type and its instances */
    int64_t count;
    tess_cursor *cur;  /* NULL when bytes == 0 or the instances are one run */
    int64_t base;      /* added to every region offset */
    int64_t start;     /* the cursor's stream byte where the source begins */
    int64_t bytes;     /* data bytes of the source */
    int64_t pos;       /* bytes consumed, counted from start */
    int64_t fetched;   /* bytes taken from the cursor (into q or run), counted from start */
    int64_t run_off, run_len, run_stride, run_n; /* the rest of the cursor's last run, not yet
                                                    in q: run_n regions (base added) */
    int64_t lo, hi;    /* extent [lo, hi) of the data (view sources and one-run sources; lo == hi
                          if empty) */
    tess_region q[TESSI_RSRC_BATCH]; /* q[qi..qn): pending regions, base added */
    int64_t qi, qn;
    int64_t *regions;  /* counter of distinct contiguous regions consumed (may be NULL) */
    int64_t hw, last_end; /* counting state: furthest position consumed, end of last piece */
} tessi_rsrc;

/**
 * Open a source over count instances of t. `regions` (may be NULL) is incremented once per
 * contiguous region consumed, however often seek revisits it.
 */
int tessi_rsrc_open(tessi_rsrc *s, const tess_type *t, int64_t count, int64_t base,
                    int64_t start, int64_t bytes, int64_t *regions);
/**
 * Open the file regions of an access of `bytes` data bytes at stream offset `offset` etypes
 * of the view, in increasing file order, starting at the right tile; lo/hi are set. Fails
 * before any I/O with TESS_ERR_OVERFLOW when the offset in bytes or the last file byte the
 * access reaches does not fit in int64_t.
 */
int tessi_view_regions(tessi_rsrc *s, const tessi_view *v, int64_t offset, int64_t bytes,
                       int64_t *regions);
/** The current region's unconsumed part (r->len == 0 at the end of the source). */
int tessi_rsrc_peek(tessi_rsrc *s, tess_region *r);
/** Consume len bytes (0 < len <= the peeked length) of the current region. */
void tessi_rsrc_take(tessi_rsrc *s, int64_t len);
/**
 * Consume whole regions in bulk: up to max of them, max_bytes data bytes in all (the last one
 * cut there), into out[0..*n); *n < max only at the end of the source or of max_bytes. The
 * same pieces as a peek and a take of each (regions counted alike), for loops that issue one
 * call per region: a copy per region, not two calls.
 */
int tessi_rsrc_next(tessi_rsrc *s, tess_region *out, int64_t max, int64_t max_bytes, int64_t *n);
/** Reposition at data byte pos of the source (0 <= pos <= bytes). */
int tessi_rsrc_seek(tessi_rsrc *s, int64_t pos);
/**
 * Where file byte x falls in the source: *pos gets the number of its data bytes at offsets
 * below x (0 .. bytes). The source's type must be monotonic (a view's is). O(depth log blocks),
 * no walk: how a method finds the data of a window [x0, x1) as the stream range
 * [pos(x0), pos(x1)).
 */
int tessi_rsrc_stream_at(const tessi_rsrc *s, int64_t x, int64_t *pos);
/** The file offset of data byte pos (< bytes) of the source. O(depth log blocks). */
int tessi_rsrc_offset_at(const tessi_rsrc *s, int64_t pos, int64_t *off);
void tessi_rsrc_close(tessi_rsrc *s);

#endif
