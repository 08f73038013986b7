/*
 * list.c - list I/O (paper 000 II-D). File regions are taken in batches of at most
 * tess_list_max_pairs (default 64); the memory side of each region is gathered/scattered with
 * iovecs pointing into the caller's buffer (no staging copy), at most TESSI_IOV_MAX per batch.
 * A batch of one file region is one vectored call (preadv/pwritev); a batch of several is one
 * driver batch (an io_uring submission with the POSIX driver when liburing is present) or, where
 * the driver cannot batch, one vectored call per file region. Moves exactly the desired bytes.
 */
#include "method/method.h"

#include <stdlib.h>

typedef struct {
    tessi_io_req *reqs; /* one per file region (or part of one) */
    struct iovec *iov;  /* shared by the requests, TESSI_IOV_MAX entries */
    int64_t nreq, niov;
} batch;

/* Take the next batch of file regions and the memory pieces that match them. */
static int build(tessi_access *a, batch *b)
{
    tess_region f, m;
    b->nreq = b->niov = 0;
    while (b->nreq < a->hints->list_max_pairs && b->niov < TESSI_IOV_MAX) {
        int rc = tessi_rsrc_peek(a->file, &f);
        if (rc)
            return rc;
        if (f.len == 0)
            return 0;
        tessi_io_req *r = &b->reqs[b->nreq++];
        *r = (tessi_io_req){.off = f.off, .iov = b->iov + b->niov};
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

/* Run a batch: one call when it is one file-contiguous run, else one driver batch, else (no
 * batching here) one vectored call per request, up to the first that fails or ends short.
 * Returns 0 (look at the results, in order) or a negative errno for the batch as a whole. */
static int run(tessi_access *a, batch *b, bool write)
{
    tessi_io_req *r = b->reqs;
    int rc = b->nreq > 1 ? tessi_drv_submit(a->st, write ? TESSI_OP_WRITE : TESSI_OP_READ,
                                            r, b->nreq)
                         : -EOPNOTSUPP;
    for (int64_t i = 0; rc == -EOPNOTSUPP && i < b->nreq; i++) {
        r[i].result = write ? tessi_drv_pwritev(a->st, r[i].iov, r[i].niov, r[i].off)
                            : tessi_drv_preadv(a->st, r[i].iov, r[i].niov, r[i].off);
        if (r[i].result < r[i].len) /* an error or end of file: the caller stops here */
            break;
    }
    return rc == -EOPNOTSUPP ? 0 : rc;
}

static int list_move(tessi_access *a, bool write, int64_t *done)
{
    batch b = {.reqs = malloc(sizeof(tessi_io_req) * (size_t)a->hints->list_max_pairs),
               .iov = malloc(sizeof(struct iovec) * TESSI_IOV_MAX)};
    int rc = 0;
    *done = 0;
    if (!b.reqs || !b.iov) {
        rc = tessi_error(TESS_ERR_NOMEM, "list: cannot allocate a batch");
        goto fail;
    }
    while (*done < a->bytes) {
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
        for (int64_t i = 0; i < b.nreq; i++) {
            tessi_io_req *r = &b.reqs[i];
            if (r->result < 0) {
                rc = tessi_drv_error(a->st, (int)r->result, write ? "pwritev" : "preadv",
                                     r->off, r->len);
                goto fail;
            }
            *done += r->result;
            if (r->result < r->len) /* end of file */
                goto fail;
        }
    }
fail:
    free(b.reqs);
    free(b.iov);
    return rc;
}

static int list_read(tessi_access *a, int64_t *done) { return list_move(a, false, done); }

/* Batches of list_max file regions (a file region whose memory pieces fill a batch's iovecs
 * is cut: one more request per TESSI_IOV_MAX pieces), every data byte once, and the iovec
 * entries of memory pieces beyond one per file region. */
static void list_estimate(const tessi_est *e, tessi_cost *out)
{
    int64_t cuts = e->pieces > e->regions ? (e->pieces - 1) / TESSI_IOV_MAX : 0;
    tessi_group g = {.kind = TESSI_GROUP_LIST, .count = e->regions + cuts, .data = e->bytes};
    *out = (tessi_cost){.seconds = 0};
    if (e->bytes > 0)
        tessi_group_cost(e->m, e->write, &g, out);
    out->seconds += tessi_model_pieces(e->m, e->write, e->pieces - e->regions);
}

static int list_write(tessi_access *a, int64_t *done) { return list_move(a, true, done); }

const struct tess_method tessi_method_list = {
    .version = TESSI_METHOD_VERSION,
    .name = "list",
    .read = list_read,
    .write = list_write,
    .estimate = list_estimate,
};
