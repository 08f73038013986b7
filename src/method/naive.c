/*
 * naive.c - POSIX I/O (paper 000 II-A): the memory-region and file-region streams are matched
 * piece by piece and every piece is one storage call. Moves exactly the desired bytes; the
 * number of calls is at least the number of file regions. With noncontiguous memory whose
 * pieces are smaller than the file regions, the memory side goes through a bounded staging
 * buffer instead (item 2 of issue 7) when the model prices one copy of the data below the
 * calls it saves: then there is one call per file region.
 */
#include "method/method.h"

#include <stdlib.h>

/* The price of moving `bytes` data bytes in `regions` file regions that memory cuts into
 * `pieces` (*out, from zero): one call per piece, or, staged through a buffer of at most buf
 * bytes, one per region (and per end of a chunk inside one) plus a copy of the data, whichever
 * is cheaper; staging only where memory cuts regions. Returns whether that is staging. */
static bool naive_price(const tessi_model *m, bool write, int64_t bytes, int64_t regions,
                        int64_t pieces, int64_t buf, tessi_cost *out)
{
    tessi_group g = {.kind = TESSI_GROUP_DIRECT, .count = pieces, .data = bytes};
    tessi_cost staged = {.seconds = 0};
    *out = (tessi_cost){.seconds = 0};
    if (bytes <= 0)
        return false;
    tessi_group_cost(m, write, &g, out);
    if (pieces <= regions)
        return false;
    g.count = regions + (bytes - 1) / buf;
    tessi_group_cost(m, write, &g, &staged);
    staged.seconds += tessi_model_copy(m, bytes);
    staged.peak = bytes < buf ? bytes : buf;
    if (staged.seconds >= out->seconds)
        return false;
    *out = staged;
    return true;
}

/* Whether the rest of access a (from the file source's position) goes through a staging
 * buffer: memory is noncontiguous and naive_price says staging is cheaper, priced from the
 * types' region counts (tessi_access_pieces: O(1), no walk). */
static bool naive_stages(const tessi_access *a, bool write)
{
    int64_t bytes = a->bytes - a->file->pos, regions, pieces;
    tessi_cost c;
    if (tessi_mem_contiguous(a) || bytes <= 0)
        return false;
    tessi_access_pieces(a, bytes, &regions, &pieces);
    return naive_price(tessi_access_model(a), write, bytes, regions, pieces,
                       tessi_stage_size(a, write), &c);
}

/* One storage call; a failure becomes the driver's error. *n gets the bytes moved. */
static int call(tessi_access *a, bool write, char *p, int64_t len, int64_t off, int64_t *n)
{
    *n = write ? tessi_drv_pwrite(a->st, p, len, off) : tessi_drv_pread(a->st, p, len, off);
    return *n < 0 ? tessi_drv_error(a->st, (int)*n, write ? "pwrite" : "pread", off, len) : 0;
}

/* The staged loop: chunks of at most the sieve buffer's size; a write packs a chunk of memory
 * and writes its file regions from it, a read reads them into it and unpacks it. */
static int staged_move(tessi_access *a, bool write, int64_t *done)
{
    int64_t pos = a->file->pos, left = a->bytes - pos;
    int64_t cap = tessi_min64(left, tessi_stage_size(a, write));
    char *stage = malloc((size_t)cap);
    if (!stage)
        return tessi_error(TESS_ERR_NOMEM, "naive: cannot allocate a %lld-byte stage",
                           (long long)cap);
    tessi_note_buffer(a, cap);
    int rc = 0;
    bool eof = false;
    while (rc == 0 && !eof && left > 0) {
        int64_t len = left < cap ? left : cap, in = 0;
        if (write)
            rc = tessi_stage_mem(a, pos, stage, len, false);
        while (rc == 0 && in < len) {
            tess_region f;
            int64_t n;
            if ((rc = tessi_rsrc_peek(a->file, &f)))
                break;
            if (f.len == 0) {
                rc = tessi_error(TESS_ERR_INTERNAL, "naive: file stream ended early");
                break;
            }
            int64_t piece = f.len < len - in ? f.len : len - in;
            if ((rc = call(a, write, stage + in, piece, f.off, &n)))
                break;
            in += n;
            if ((eof = n < piece)) /* end of file: the prefix read so far is the result */
                break;
            tessi_rsrc_take(a->file, piece);
        }
        if (rc == 0 && !write)
            rc = tessi_stage_mem(a, pos, stage, in, true);
        if (rc == 0) {
            *done += in;
            pos += in;
            left -= in;
        }
    }
    free(stage);
    return rc;
}

int tessi_naive_move(tessi_access *a, bool write, int64_t *done)
{
    tess_region f, m;
    *done = 0;
    if (naive_stages(a, write))
        return staged_move(a, write, done);
    for (;;) {
        int rc = tessi_rsrc_peek(a->file, &f);
        if (rc || (rc = tessi_rsrc_peek(a->mem, &m)))
            return rc;
        if (f.len == 0)
            return 0;
        if (m.len == 0)
            return tessi_error(TESS_ERR_INTERNAL, "naive: memory stream ended before the file's");
        int64_t len = f.len < m.len ? f.len : m.len, n;
        if ((rc = call(a, write, a->buf + m.off, len, f.off, &n)))
            return rc;
        *done += n;
        if (n < len) /* end of file: the prefix read so far is the result */
            return 0;
        tessi_rsrc_take(a->file, len);
        tessi_rsrc_take(a->mem, len);
    }
}

static int naive_read(tessi_access *a, int64_t *done) { return tessi_naive_move(a, false, done); }

/* One call per piece (per file region when memory is contiguous), every data byte once; or
 * staged, whichever naive_price says is cheaper (the choice tessi_naive_move makes). */
static void naive_estimate(const tessi_est *e, tessi_cost *out)
{
    naive_price(e->m, e->write, e->bytes, e->regions, e->pieces, e->buf, out);
}

static int naive_write(tessi_access *a, int64_t *done) { return tessi_naive_move(a, true, done); }

const struct tess_method tessi_method_naive = {
    .version = TESSI_METHOD_VERSION,
    .name = "naive",
    .read = naive_read,
    .write = naive_write,
    .estimate = naive_estimate,
};
