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
    *out = (tessi_cost){.seconds = 0};
    if (bytes > 0)
        tessi_group_cost(m, write, &g, out);
    return tessi_stage_cheaper(m, write, TESSI_GROUP_DIRECT, bytes, regions, pieces, buf, out);
}

/* Pieces per round of calls: taken from the sources ahead of their calls, which then run back
 * to back (tessi_drv_each). */
#define NAIVE_ROUND 64

/* The storage calls for the next `limit` data bytes of the access: one per file region, cut
 * where a memory region ends; memory is the contiguous run of bytes at `run`, or (run NULL) the
 * memory source. Adds the bytes moved to *moved; *eof: a read reached the end of the file (the
 * prefix moved is the result). */
static int calls(tessi_access *a, bool write, char *run, int64_t limit, int64_t *moved,
                 bool *eof)
{
    tessi_io_req req[NAIVE_ROUND];
    struct iovec iov[NAIVE_ROUND];
    tess_region f, m;
    int64_t used = 0;
    int rc = 0;
    while (used < limit) {
        int64_t k = 0;
        for (; k < NAIVE_ROUND && used < limit; k++) {
            if ((rc = tessi_rsrc_peek(a->file, &f)) || (!run && (rc = tessi_rsrc_peek(a->mem, &m))))
                return rc;
            if (f.len == 0 || (!run && m.len == 0))
                return tessi_error(TESS_ERR_INTERNAL, "naive: a stream ended early");
            int64_t len = tessi_min64(f.len, limit - used);
            if (!run)
                len = tessi_min64(len, m.len);
            iov[k] = (struct iovec){.iov_base = run ? run + used : a->buf + m.off,
                                    .iov_len = (size_t)len};
            req[k] = (tessi_io_req){.off = f.off, .iov = &iov[k], .niov = 1, .len = len};
            tessi_rsrc_take(a->file, len);
            if (!run)
                tessi_rsrc_take(a->mem, len);
            used += len;
        }
        int64_t ran = tessi_drv_each(a->st, write ? TESSI_OP_WRITE : TESSI_OP_READ, req, k);
        for (int64_t i = 0; i < ran; i++) {
            if (req[i].result < 0)
                return tessi_drv_error(a->st, (int)req[i].result, write ? "pwrite" : "pread",
                                       req[i].off, req[i].len);
            *moved += req[i].result;
            if ((*eof = req[i].result < req[i].len))
                return 0;
        }
    }
    return 0;
}

/* The staged loop: chunks of at most the stage size; a write packs a chunk of memory and
 * writes its file regions from it, a read reads them into it and unpacks it. */
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
        int64_t len = tessi_min64(left, cap), in = 0;
        if (write)
            rc = tessi_stage_mem(a, pos, stage, len, false);
        if (rc == 0)
            rc = calls(a, write, stage, len, &in, &eof);
        if (rc == 0 && !write)
            rc = tessi_stage_mem(a, pos, stage, in, true);
        *done += in;
        pos += in;
        left -= in;
    }
    free(stage);
    return rc;
}

int tessi_naive_move(tessi_access *a, bool write, int64_t *done)
{
    tess_region m;
    bool eof = false;
    *done = 0;
    if (tessi_stage_wanted(a, write, a->file->pos, naive_price))
        return staged_move(a, write, done);
    int rc = tessi_mem_contiguous(a) ? tessi_rsrc_peek(a->mem, &m) : 0;
    return rc ? rc : calls(a, write, tessi_mem_contiguous(a) ? a->buf + m.off : NULL,
                           a->bytes - a->file->pos, done, &eof);
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
