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

/* Take the next round of pieces (at most NAIVE_ROUND, `limit` data bytes) into req/iov: one per
 * file region, cut where a memory region ends; memory is the contiguous run of bytes at `run`
 * (the file regions then come in bulk), or (run NULL) the memory source. *k gets the count,
 * *bytes their data bytes. */
static int round_of(tessi_access *a, char *run, int64_t limit, tessi_io_req *req,
                    struct iovec *iov, int64_t *k, int64_t *bytes)
{
    tess_region f[NAIVE_ROUND], m;
    int64_t n = 0, used = 0;
    int rc;
    if (run) {
        if ((rc = tessi_rsrc_next(a->file, f, NAIVE_ROUND, limit, &n)))
            return rc;
        used = tessi_run_reqs(run, f, n, req, iov);
    }
    for (; !run && n < NAIVE_ROUND && used < limit; n++) {
        if ((rc = tessi_rsrc_peek(a->file, &f[0])) || (rc = tessi_rsrc_peek(a->mem, &m)))
            return rc;
        if (f[0].len == 0 || m.len == 0)
            break;
        int64_t len = tessi_min64(tessi_min64(f[0].len, limit - used), m.len);
        iov[n] = (struct iovec){.iov_base = a->buf + m.off, .iov_len = (size_t)len};
        req[n] = (tessi_io_req){.off = f[0].off, .iov = &iov[n], .niov = 1, .len = len};
        tessi_rsrc_take(a->file, len);
        tessi_rsrc_take(a->mem, len);
        used += len;
    }
    *k = n;
    *bytes = used;
    return n == 0 ? tessi_error(TESS_ERR_INTERNAL, "naive: a stream ended early") : 0;
}

/* The storage calls for the next `limit` data bytes of the access, round by round (see
 * round_of; run: contiguous memory or NULL). Adds the bytes moved to *moved; *eof: a read
 * reached the end of the file (the prefix moved is the result). */
static int calls(tessi_access *a, bool write, char *run, int64_t limit, int64_t *moved,
                 bool *eof)
{
    tessi_io_req req[NAIVE_ROUND];
    struct iovec iov[NAIVE_ROUND];
    int64_t used = 0, k, bytes;
    while (used < limit) {
        int rc = round_of(a, run ? run + used : NULL, limit - used, req, iov, &k, &bytes);
        if (rc)
            return rc;
        int64_t ran = tessi_drv_each(a->st, write ? TESSI_OP_WRITE : TESSI_OP_READ, req, k);
        for (int64_t i = 0; i < ran; i++) {
            if (req[i].result < 0)
                return tessi_drv_error(a->st, (int)req[i].result, write ? "pwrite" : "pread",
                                       req[i].off, req[i].len);
            *moved += req[i].result;
            if ((*eof = req[i].result < req[i].len))
                return 0;
        }
        used += bytes;
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
