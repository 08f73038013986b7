/*
 * stage.c - moving the data of an access between a staging buffer and user memory with the
 * pack engine (tess_pack / tess_unpack at a data offset), one call per side for a whole
 * window, never region by region: the file side of a window is the view's filetype tiled over
 * the window's bytes, the memory side the memory type; a side that is one contiguous run is
 * used in place. See method.h.
 */
#include "method/method.h"

#include "type/type.h"

#include <stdlib.h>
#include <string.h>

bool tessi_mem_contiguous(const tessi_access *a)
{
    const tess_type *t = a->memtype;
    return t->num_regions == 1 && (a->count <= 1 || t->size == t->extent);
}

void tessi_access_pieces(const tessi_access *a, int64_t bytes, int64_t *regions, int64_t *pieces)
{
    const tessi_rsrc *f = a->file, *m = a->mem;
    int64_t fr = f->cur ? tessi_type_blocks(f->type, bytes) : 1;
    int64_t mr = tessi_mem_contiguous(a) ? 1 : tessi_type_blocks(a->memtype, bytes);
    *regions = fr;
    if (f->type == m->type && f->start == m->start) /* the same regions on both sides */
        *pieces = fr > mr ? fr : mr;
    else /* every end of a memory region inside a file region cuts it */
        *pieces = fr + mr - 1;
}

bool tessi_stage_cheaper(const tessi_model *m, bool write, tessi_group_kind kind,
                         int64_t bytes, int64_t regions, int64_t pieces, int64_t buf,
                         tessi_cost *out)
{
    if (bytes <= 0 || pieces <= regions)
        return false;
    tessi_group g = {.kind = kind, .count = regions + (bytes - 1) / buf, .data = bytes};
    tessi_cost staged = {.seconds = tessi_model_copy(m, bytes), .peak = tessi_min64(bytes, buf)};
    tessi_group_cost(m, write, &g, &staged);
    if (staged.seconds >= out->seconds)
        return false;
    *out = staged;
    return true;
}

int tessi_stage_alloc(tessi_access *a, int64_t len, char **buf, char **tmp)
{
    bool both_nc = a->file->hi - a->file->lo != a->bytes && !tessi_mem_contiguous(a);
    *tmp = NULL;
    /* malloc, not posix_memalign: glibc serves a large memalign so that freeing it trims the
     * heap, and every access then faulted in its buffer afresh (nc-nc sieving reads ran 3-4x
     * slower). The raw pointer sits just below the aligned start, for tessi_stage_free. */
    int64_t relay = both_nc ? (len < TESSI_STAGE_TMP ? len : TESSI_STAGE_TMP) : 0;
    char *raw = malloc((size_t)(len + relay) + TESSI_STAGE_ALIGN);
    if (!raw)
        return tessi_error(TESS_ERR_NOMEM, "cannot allocate a %lld-byte staging buffer",
                           (long long)len);
    *buf = raw + TESSI_STAGE_ALIGN - (uintptr_t)raw % TESSI_STAGE_ALIGN;
    memcpy(*buf - sizeof raw, &raw, sizeof raw);
    if (both_nc)
        *tmp = *buf + len;
    tessi_note_buffer(a, len);
    return 0;
}

void tessi_stage_free(char *buf)
{
    if (buf) {
        char *raw;
        memcpy(&raw, buf - sizeof raw, sizeof raw);
        free(raw);
    }
}

/* The first byte of user memory holding stream byte pos, when memory is one contiguous run. */
static char *mem_run(const tessi_access *a, int64_t pos)
{
    return tessi_mem_contiguous(a) ? a->buf + a->memtype->first_off + pos : NULL;
}

/* Pack (to_packed) or unpack len stream bytes from pos of count instances of t laid out from
 * typed; a failure is the engine's error (never expected: the ranges are the access's). */
static int engine(char *typed, int64_t count, const tess_type *t, int64_t pos, char *packed,
                  int64_t len, bool to_packed)
{
    int64_t moved = 0;
    int rc = to_packed ? tess_pack(typed, count, t, pos, packed, len, &moved)
                       : tess_unpack(packed, len, typed, count, t, pos, &moved);
    if (rc == 0 && moved != len)
        rc = tessi_error(TESS_ERR_INTERNAL, "stage: the pack engine moved %lld of %lld bytes",
                         (long long)moved, (long long)len);
    return rc;
}

int tessi_stage_mem(tessi_access *a, int64_t pos, char *packed, int64_t len, bool to_mem)
{
    const tessi_rsrc *m = a->mem;
    if (len <= 0)
        return 0;
    /* the memory source's instances from its base (only offsets of data bytes are formed
     * into addresses) */
    char *typed = (char *)((uintptr_t)a->buf + (uintptr_t)m->base);
    return engine(typed, m->count, m->type, m->start + pos, packed, len, !to_mem);
}

int tessi_stage_move(tessi_access *a, char *stage, int64_t ws, int64_t pos, int64_t len,
                     bool to_mem, char *tmp)
{
    tessi_rsrc *f = a->file;
    tess_region r;
    if (len <= 0)
        return 0;
    int rc = tessi_rsrc_peek(f, &r); /* the source is at pos: r holds its first data byte */
    if (rc)
        return rc;
    char *mem = mem_run(a, pos), *run = r.len >= len ? stage + (r.off - ws) : NULL;
    /* the file side as a typed buffer: the view's tiles from the one holding stream byte pos
     * (its origin lies within one tile extent of the window); only offsets inside the window
     * are formed into addresses */
    const tess_type *ft = f->type;
    int64_t k = (f->start + pos) / ft->size, fpos = f->start + pos - k * ft->size;
    int64_t ntiles = f->count - k, origin = f->base + k * ft->extent;
    char *tiles = (char *)((uintptr_t)stage + (uintptr_t)(origin - ws));
    if (mem && run) {
        memcpy(to_mem ? mem : run, to_mem ? run : mem, (size_t)len);
        return 0;
    }
    if (mem) /* file typed <-> memory packed */
        return engine(tiles, ntiles, ft, fpos, mem, len, to_mem);
    if (run) /* file packed <-> memory typed */
        return tessi_stage_mem(a, pos, run, len, to_mem);
    if (!tmp)
        return tessi_error(TESS_ERR_INTERNAL, "stage: both sides noncontiguous and no buffer");
    for (int64_t at = 0; rc == 0 && at < len; at += TESSI_STAGE_TMP) {
        int64_t n = len - at < TESSI_STAGE_TMP ? len - at : TESSI_STAGE_TMP;
        if (to_mem)
            rc = engine(tiles, ntiles, ft, fpos + at, tmp, n, true);
        else
            rc = engine(a->buf, a->count, a->memtype, pos + at, tmp, n, true);
        if (rc == 0)
            rc = to_mem ? engine(a->buf, a->count, a->memtype, pos + at, tmp, n, false)
                        : engine(tiles, ntiles, ft, fpos + at, tmp, n, false);
    }
    return rc;
}

bool tessi_stage_wanted(const tessi_access *a, bool write, int64_t from, tessi_stage_price *price)
{
    int64_t bytes = a->bytes - from, regions, pieces;
    tessi_cost c;
    if (tessi_mem_contiguous(a) || bytes <= 0)
        return false;
    tessi_access_pieces(a, bytes, &regions, &pieces);
    return price(tessi_access_model(a), write, bytes, regions, pieces, tessi_stage_size(a, write),
                 &c);
}
