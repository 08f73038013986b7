/*
 * list.c - list I/O (paper 000 II-D). File regions are taken in batches of at most
 * tess_list_max_pairs (default 64); the memory side of each region is gathered/scattered with
 * iovecs pointing into the caller's buffer (no staging copy), at most TESSI_IOV_MAX per batch.
 * A batch of one file region is one vectored call (preadv/pwritev); a batch of several is one
 * driver batch (an io_uring submission with the POSIX driver when liburing is present) or, where
 * the driver cannot batch, one vectored call per file region. Moves exactly the desired bytes.
 * With noncontiguous memory whose pieces are smaller than the file regions, the memory side
 * goes through a bounded staging buffer instead (one iovec per file region) when the model
 * prices one copy of the data below the iovecs it saves.
 */
#include "method/method.h"

#include <stdlib.h>

typedef struct {
    tessi_io_req *reqs; /* one per file region (or part of one) */
    struct iovec *iov;  /* shared by the requests, TESSI_IOV_MAX entries */
    int64_t nreq, niov;
    char *stage;        /* staged: the memory side of the chunk, packed (else NULL) */
    int64_t in, len;    /* staged: bytes of the chunk batched so far, and its length */
} batch;

/* build() for contiguous memory (one run, the memory source's one region): the file regions
 * in bulk, one iovec each into the run. */
static int build_run(tessi_access *a, batch *b)
{
    tess_region m, f[64];
    int64_t n, used = 0, left = tessi_min64(a->hints->list_max_pairs, TESSI_IOV_MAX);
    int rc = tessi_rsrc_peek(a->mem, &m);
    while (rc == 0 && left > 0 && used < m.len) {
        if ((rc = tessi_rsrc_next(a->file, f, tessi_min64(left, 64), m.len - used, &n)) || n == 0)
            break;
        used += tessi_run_reqs(a->buf + m.off + used, f, n, b->reqs + b->nreq,
                               b->iov + b->niov);
        b->nreq += n;
        b->niov += n;
        left -= n;
    }
    if (rc == 0 && used > 0)
        tessi_rsrc_take(a->mem, used);
    return rc;
}

/* Take the next batch of file regions and the memory pieces that match them (staged: the
 * chunk's bytes in the stage, one iovec per file region, up to the chunk's end). */
static int build(tessi_access *a, batch *b)
{
    tess_region f, m;
    b->nreq = b->niov = 0;
    if (!b->stage && tessi_mem_contiguous(a))
        return build_run(a, b);
    while (b->nreq < a->hints->list_max_pairs && b->niov < TESSI_IOV_MAX &&
           (!b->stage || b->in < b->len)) {
        int rc = tessi_rsrc_peek(a->file, &f);
        if (rc)
            return rc;
        if (f.len == 0)
            return 0;
        tessi_io_req *r = &b->reqs[b->nreq++];
        *r = (tessi_io_req){.off = f.off, .iov = b->iov + b->niov};
        if (b->stage) {
            int64_t len = f.len < b->len - b->in ? f.len : b->len - b->in;
            b->iov[b->niov++] = (struct iovec){.iov_base = b->stage + b->in,
                                               .iov_len = (size_t)len};
            tessi_rsrc_take(a->file, len);
            b->in += len;
            r->len = len;
            r->niov = 1;
            continue;
        }
        while (f.len > 0 && b->niov < TESSI_IOV_MAX) {
            if ((rc = tessi_rsrc_peek(a->mem, &m)))
                return rc;
            if (m.len == 0)
                return tessi_error(TESS_ERR_INTERNAL, "list: memory stream ended early");
            int64_t len = m.len < f.len ? m.len : f.len;
            b->iov[b->niov++] = (struct iovec){.iov_base = a->buf + m.off, .iov_len = (size_t)len};
            tessi_rsrc_take(a->mem, len);
            tessi_rsrc_take(a->file, len);
            f.len -= len;
            r->len += len;
            r->niov++;
        }
    }
    return 0;
}

/* Run a batch: one driver batch when it has several requests and the driver batches, else one
 * vectored call per request (tessi_drv_each), up to the first that fails or ends short.
 * Returns 0 (look at the results, in order) or a negative errno for the batch as a whole. */
static int run(tessi_access *a, batch *b, bool write)
{
    int op = write ? TESSI_OP_WRITE : TESSI_OP_READ;
    int rc = b->nreq > 1 ? tessi_drv_submit(a->st, op, b->reqs, b->nreq) : -EOPNOTSUPP;
    if (rc != -EOPNOTSUPP)
        return rc;
    tessi_drv_each(a->st, op, b->reqs, b->nreq); /* the caller stops at the short one */
    return 0;
}

/* The price of list I/O over `bytes` data bytes in `regions` file regions that memory cuts
 * into `pieces` (*out, from zero): batches of list_max file regions (a file region whose memory
 * pieces fill a batch's iovecs is cut: one more request per TESSI_IOV_MAX pieces), every data
 * byte once, each memory piece beyond one per request one more iovec for the kernel to walk;
 * or, staged through a buffer of at most buf bytes, one iovec per region (and per end of a
 * chunk inside one) plus a copy of the data, whichever is cheaper; staging only where memory
 * cuts regions. Returns whether that is staging. */
static bool list_price(const tessi_model *m, bool write, int64_t bytes, int64_t regions,
                       int64_t pieces, int64_t buf, tessi_cost *out)
{
    int64_t cuts = pieces > regions ? (pieces - 1) / TESSI_IOV_MAX : 0;
    tessi_group g = {.kind = TESSI_GROUP_LIST, .count = regions + cuts, .data = bytes};
    *out = (tessi_cost){.seconds = 0};
    if (bytes > 0) {
        tessi_group_cost(m, write, &g, out);
        if (pieces > g.count)
            out->seconds += tessi_model_iov(m, write, pieces - g.count);
    }
    return tessi_stage_cheaper(m, write, TESSI_GROUP_LIST, bytes, regions, pieces, buf, out);
}

/* Run the batches of the access (staged: chunk by chunk, a write packing each chunk first, a
 * read unpacking what it read). */
static int list_move(tessi_access *a, bool write, int64_t *done)
{
    batch b = {.reqs = malloc(sizeof(tessi_io_req) * (size_t)a->hints->list_max_pairs),
               .iov = malloc(sizeof(struct iovec) * TESSI_IOV_MAX)};
    int64_t cap = 0, from = 0; /* staged: the chunk's size and its first data byte */
    int rc = 0;
    bool eof = false;
    *done = 0;
    if (b.reqs && b.iov && tessi_stage_wanted(a, write, 0, list_price)) {
        cap = tessi_min64(a->bytes, tessi_stage_size(a, write));
        if ((b.stage = malloc((size_t)cap)))
            tessi_note_buffer(a, cap);
    }
    if (!b.reqs || !b.iov || (cap > 0 && !b.stage)) {
        rc = tessi_error(TESS_ERR_NOMEM, "list: cannot allocate a batch");
        goto fail;
    }
    while (!eof && *done < a->bytes) {
        if (b.stage && b.in == b.len) { /* the next chunk */
            from = *done;
            b.in = 0;
            b.len = a->bytes - from < cap ? a->bytes - from : cap;
            if (write && (rc = tessi_stage_mem(a, from, b.stage, b.len, false)))
                goto fail;
        }
        if ((rc = build(a, &b)))
            goto fail;
        if (b.nreq == 0) {
            rc = tessi_error(TESS_ERR_INTERNAL, "list: file stream ended early");
            goto fail;
        }
        int err = run(a, &b, write);
        if (err) {
            rc = tessi_drv_error(a->st, err, write ? "write batch" : "read batch",
                                 b.reqs[0].off, b.reqs[0].len);
            goto fail;
        }
        for (int64_t i = 0; i < b.nreq && !eof; i++) {
            tessi_io_req *r = &b.reqs[i];
            if (r->result < 0) {
                rc = tessi_drv_error(a->st, (int)r->result, write ? "pwritev" : "preadv",
                                     r->off, r->len);
                goto fail;
            }
            *done += r->result;
            eof = r->result < r->len; /* end of file: the prefix moved is the result */
        }
        if (b.stage && !write && (eof || b.in == b.len))
            rc = tessi_stage_mem(a, from, b.stage, *done - from, true);
        if (rc)
            goto fail;
    }
fail:
    free(b.reqs);
    free(b.iov);
    free(b.stage);
    return rc;
}

static int list_read(tessi_access *a, int64_t *done) { return list_move(a, false, done); }

/* Batches of list_max file regions, direct or staged, whichever list_price says is cheaper
 * (the choice list_move makes). */
static void list_estimate(const tessi_est *e, tessi_cost *out)
{
    list_price(e->m, e->write, e->bytes, e->regions, e->pieces, e->buf, out);
}

static int list_write(tessi_access *a, int64_t *done) { return list_move(a, true, done); }

const struct tess_method tessi_method_list = {
    .version = TESSI_METHOD_VERSION,
    .name = "list",
    .read = list_read,
    .write = list_write,
    .estimate = list_estimate,
};
