/*
 * cursor.c - partial processing of a datatype without flattening (MPICH's Segment idea).
 *
 * The cursor keeps one frame per level of the dataloop tree, from a virtual top node (the
 * `count` instances) to the current leaf block. Seeking descends once from the top, dividing the
 * byte offset by block sizes (binary search in the prefix sums of indexed and struct levels), so
 * it costs O(depth + log n). Producing data walks leaf blocks; a vector of predefined elements
 * yields one run for all its remaining blocks.
 */
#include "type/type.h"

#include <stdlib.h>

typedef tessi_i128 i128; /* base.h; a short name for this file */

int tessi_cursor_init(tess_cursor *c, const tess_type *t, int64_t count)
{
    if (!t)
        return tessi_error(TESS_ERR_ARG, "cursor: type is NULL");
    if (count < 0)
        return tessi_error(TESS_ERR_ARG, "cursor: count %lld < 0", (long long)count);
    i128 total = (i128)count * t->size;
    if (total > INT64_MAX)
        return tessi_error(TESS_ERR_OVERFLOW, "cursor: %lld instances of %lld bytes overflow",
                           (long long)count, (long long)t->size);
    /* the frames are written as the cursor descends: only the rest starts zeroed (a cursor
     * lives on the stack of every pack call, and its frames are most of its size) */
    c->type = t;
    c->count = count;
    c->total = (int64_t)total;
    c->top = (tess_type){0};
    c->top.kind = TESSI_CONTIG;
    c->top.count = c->top.blocklen = count;
    c->top.child = (tess_type *)t;
    /* instances that tile exactly continue the type's own loop: fuse them into one level */
    if (t->kind == TESSI_CONTIG && (i128)t->count * t->child->extent == t->extent &&
        (i128)count * t->count <= INT64_MAX) {
        c->top.count = c->top.blocklen = count * t->count;
        c->top.disp0 = t->disp0;
        c->top.child = t->child;
    } else if (t->kind == TESSI_VECTOR && (i128)t->count * t->stride == t->extent &&
               (i128)count * t->count <= INT64_MAX) {
        c->top.kind = TESSI_VECTOR;
        c->top.count = count * t->count;
        c->top.blocklen = t->blocklen;
        c->top.stride = t->stride;
        c->top.disp0 = t->disp0;
        c->top.child = t->child;
    }
    c->top.size = c->top.blocklen * c->top.child->size; /* unused for VECTOR tops */
    return tess_cursor_seek(c, 0);
}

/*
 * Origin of the current child instance of frame f. Origins may lie outside int64 while every data
 * byte fits (a resized child's bounds far from its data), so they wrap: modular arithmetic gives
 * the exact data offsets once the data displacements are added back.
 */
static int64_t child_origin(const tessi_frame *f, const tess_type *ch)
{
    return (int64_t)((uint64_t)f->base + (uint64_t)tessi_block_displ(f->t, f->b) +
                     (uint64_t)f->j * (uint64_t)ch->extent);
}

/* Descend from frame k, positioned at block f->b instance f->j, to the first leaf block. */
static void descend_first(tess_cursor *c, int k)
{
    for (;;) {
        tessi_frame *f = &c->f[k];
        const tess_type *ch = tessi_block_child(f->t, f->b);
        if (ch->kind == TESSI_BUILTIN) {
            c->depth = k + 1;
            c->skip = 0;
            return;
        }
        c->f[k + 1] = (tessi_frame){ch, child_origin(f, ch), 0, 0};
        k++;
    }
}

/* Block of node t holding data byte rem of its instance; rem becomes the offset in the block. */
static int64_t find_block(const tess_type *t, int64_t *rem)
{
    if (t->kind == TESSI_INDEXED || t->kind == TESSI_STRUCT) {
        int64_t lo = 0, hi = t->count - 1; /* last block whose prefix <= rem */
        while (lo < hi) {
            int64_t mid = lo + (hi - lo + 1) / 2;
            if (t->prefix[mid] <= *rem)
                lo = mid;
            else
                hi = mid - 1;
        }
        *rem -= t->prefix[lo];
        return lo;
    }
    int64_t bytes = t->blocklen * t->child->size;
    int64_t b = t->kind == TESSI_CONTIG ? 0 : *rem / bytes;
    *rem -= b * bytes;
    return b;
}

int tess_cursor_seek(tess_cursor *c, int64_t data_byte)
{
    if (!c)
        return tessi_error(TESS_ERR_ARG, "tess_cursor_seek: cursor is NULL");
    if (data_byte < 0 || data_byte > c->total)
        return tessi_error(TESS_ERR_ARG, "tess_cursor_seek: byte %lld outside [0, %lld]",
                           (long long)data_byte, (long long)c->total);
    c->pos = data_byte;
    c->pend = (tessi_run){0};
    c->pend_cut = 0;
    c->skip = 0;
    c->depth = 0;
    if (data_byte == c->total)
        return 0;
    int64_t rem = data_byte;
    c->f[0] = (tessi_frame){&c->top, 0, 0, 0};
    for (int k = 0;; k++) {
        tessi_frame *f = &c->f[k];
        f->b = find_block(f->t, &rem);
        const tess_type *ch = tessi_block_child(f->t, f->b);
        if (ch->kind == TESSI_BUILTIN) {
            c->skip = rem;
            c->depth = k + 1;
            return 0;
        }
        f->j = rem / ch->size;
        rem %= ch->size;
        c->f[k + 1] = (tessi_frame){ch, child_origin(f, ch), 0, 0};
    }
}

/* The current leaf block is done: move to the next leaf block, or to the end. */
static void advance(tess_cursor *c)
{
    int k = c->depth - 1;
    c->skip = 0;
    for (;;) {
        tessi_frame *f = &c->f[k];
        const tess_type *ch = tessi_block_child(f->t, f->b);
        if (ch->kind != TESSI_BUILTIN && ++f->j < tessi_block_len(f->t, f->b)) {
            descend_first(c, k);
            return;
        }
        if (++f->b < tessi_num_blocks(f->t)) {
            f->j = 0;
            descend_first(c, k);
            return;
        }
        if (k == 0) {
            c->depth = 0;
            return;
        }
        k--;
    }
}

int tessi_cursor_runs(tess_cursor *c, tessi_run *out, int64_t max_runs, int64_t max_bytes,
                      int64_t *n)
{
    int64_t k = 0, budget = max_bytes < 0 ? INT64_MAX : max_bytes;
    while (k < max_runs && budget > 0 && c->depth > 0) {
        tessi_frame *f = &c->f[c->depth - 1];
        const tess_type *t = f->t;
        int64_t block = tessi_block_len(t, f->b) * tessi_block_child(t, f->b)->size;
        int64_t off = (int64_t)((uint64_t)f->base + (uint64_t)tessi_block_displ(t, f->b) + (uint64_t)c->skip);
        tessi_run *r = &out[k++];
        if (t->kind == TESSI_VECTOR && c->skip == 0 && budget >= block) {
            int64_t nb = t->count - f->b, fit = budget / block;
            nb = nb < fit ? nb : fit;
            *r = (tessi_run){off, block, t->stride, nb};
            f->b += nb - 1;
            c->skip = block;
        } else {
            int64_t len = block - c->skip < budget ? block - c->skip : budget;
            *r = (tessi_run){off, len, 0, 1};
            c->skip += len;
        }
        budget -= r->len * r->n;
        c->pos += r->len * r->n;
        if (c->skip != block)
            continue;
        if (f->b + 1 < tessi_num_blocks(t) && tessi_block_child(t, f->b + 1)->kind == TESSI_BUILTIN) {
            f->b++; /* the next block of this leaf node: no need to climb */
            c->skip = 0;
        } else {
            advance(c);
        }
    }
    *n = k;
    return 0;
}

int tess_cursor_create(const tess_type *t, int64_t count, tess_cursor **out)
{
    if (!out)
        return tessi_error(TESS_ERR_ARG, "tess_cursor_create: out is NULL");
    tess_cursor *c = malloc(sizeof *c);
    if (!c)
        return tessi_error(TESS_ERR_NOMEM, "tess_cursor_create: out of memory");
    int rc = tessi_cursor_init(c, t, count);
    if (rc) {
        free(c);
        return rc;
    }
    *out = c;
    return 0;
}

void tess_cursor_free(tess_cursor *c) { free(c); }

int64_t tess_cursor_position(const tess_cursor *c)
{
    return c ? c->pos - (c->pend.n * c->pend.len - c->pend_cut) : 0;
}

int tess_cursor_next(tess_cursor *c, tess_region *out, int64_t max_regions, int64_t max_bytes,
                     int64_t *n)
{
    if (!c || !n || (!out && max_regions > 0))
        return tessi_error(TESS_ERR_ARG, "tess_cursor_next: NULL cursor, output or count");
    if (max_regions < 0)
        return tessi_error(TESS_ERR_ARG, "tess_cursor_next: max_regions %lld < 0",
                           (long long)max_regions);
    int64_t k = 0, budget = max_bytes < 0 ? INT64_MAX : max_bytes;
    while (budget > 0) {
        if (c->pend.n == 0) {
            int64_t got;
            tessi_cursor_runs(c, &c->pend, 1, budget, &got);
            c->pend_cut = 0;
            if (!got)
                break;
        }
        int64_t off = c->pend.off + c->pend_cut, len = c->pend.len - c->pend_cut;
        len = len < budget ? len : budget;
        if (k > 0 && out[k - 1].off + out[k - 1].len == off)
            out[k - 1].len += len; /* adjacent: merge, even when the output is full */
        else if (k == max_regions)
            break;
        else
            out[k++] = (tess_region){off, len};
        budget -= len;
        c->pend_cut += len;
        if (c->pend_cut == c->pend.len) {
            if (--c->pend.n > 0)
                c->pend.off += c->pend.stride;
            c->pend_cut = 0;
        }
    }
    *n = k;
    return 0;
}
