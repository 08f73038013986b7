/*
 * io.c - byte I/O of the RADOS driver (layout in rados.h): every call becomes object extents,
 * grouped into one compound operation per object (up to tess_list_max_pairs extents each),
 * sent asynchronously so that the objects of one call are served in parallel; a compound write
 * is atomic on its object. Sieving writes (tessi_rados_rmw) read each object's piece with its
 * version and write it back guarded by rados_write_op_assert_version, retried when another
 * writer came between: no locks. Writes carry LIBRADOS_OPERATION_FULL_TRY, so a full OSD
 * answers ENOSPC instead of blocking.
 */
#include "driver/rados/rados.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define RMW_RETRIES 1000

int tessi_rados_ext_push(extv *v, int64_t obj, int64_t objoff, int64_t len, char *mem)
{
    if (v->n == v->cap) {
        int64_t cap = v->cap ? 2 * v->cap : 64;
        ext *e = realloc(v->e, (size_t)cap * sizeof *e);
        if (!e)
            return -ENOMEM;
        v->e = e, v->cap = cap;
    }
    v->e[v->n] = (ext){.obj = obj, .objoff = objoff, .len = len, .seq = v->n, .mem = mem};
    v->n++;
    return 0;
}

/* Map the file run [off, off + len) with memory gathered by iov into object extents. */
static int ext_add(extv *v, const tessi_rados *r, const struct iovec *iov, int64_t niov,
                   int64_t off, int64_t len)
{
    int64_t i = 0, in = 0;
    while (len > 0 && i < niov) {
        int64_t n = (int64_t)iov[i].iov_len - in, obj, objoff;
        if (n > len)
            n = len;
        int64_t u = tessi_rados_unit_left(r, off);
        if (n > u)
            n = u;
        tessi_rados_locate(r, off, &obj, &objoff);
        if (n > 0) {
            int rc = tessi_rados_ext_push(v, obj, objoff, n, (char *)iov[i].iov_base + in);
            if (rc)
                return rc;
        }
        off += n, len -= n, in += n;
        if (in == (int64_t)iov[i].iov_len)
            i++, in = 0;
    }
    return 0;
}

static int ext_cmp(const void *x, const void *y)
{
    const ext *a = x, *b = y;
    if (a->obj != b->obj)
        return a->obj < b->obj ? -1 : 1;
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

int tessi_rados_ext_group(extv *v, int64_t maxper, oprec **ops, int64_t *nops)
{
    if (v->n > 1)
        qsort(v->e, (size_t)v->n, sizeof *v->e, ext_cmp);
    oprec *o = malloc(sizeof *o * (size_t)(v->n ? v->n : 1));
    if (!o)
        return -ENOMEM;
    int64_t k = 0;
    for (int64_t i = 0; i < v->n; k++) {
        int64_t j = i + 1;
        while (j < v->n && v->e[j].obj == v->e[i].obj && (maxper <= 0 || j - i < maxper))
            j++;
        o[k] = (oprec){.obj = v->e[i].obj, .first = i, .n = j - i};
        i = j;
    }
    *ops = o;
    *nops = k;
    return 0;
}

int tessi_rados_ext_run(tessi_rados *r, bool write, extv *v, oprec *ops, int64_t nops,
                        const oprec *guard)
{
    rados_completion_t c[TESSI_RADOS_INFLIGHT];
    void *opv[TESSI_RADOS_INFLIGHT];
    int64_t slot_of[TESSI_RADOS_INFLIGHT];
    int64_t next = 0, head = 0;
    int err = 0;
    /* after a failure nothing more is sent (each request could wait a whole timeout) */
    while (head < next || (!err && next < nops)) {
        if (!err && next < nops && next - head < TESSI_RADOS_INFLIGHT) {
            oprec *o = &ops[next];
            int s = (int)(next % TESSI_RADOS_INFLIGHT), rc;
            char oid[TESSI_RADOS_NAME_MAX + 24];
            tessi_rados_oid(r, o->obj, oid);
            slot_of[s] = next;
            if ((rc = rados_aio_create_completion2(NULL, NULL, &c[s]))) {
                o->rc = rc;
                c[s] = NULL;
                next++;
                err = err ? err : rc;
                continue;
            }
            if (write) {
                rados_write_op_t w = rados_create_write_op();
                if (guard && guard[next].ver)
                    rados_write_op_assert_version(w, guard[next].ver);
                else if (guard)
                    rados_write_op_create(w, LIBRADOS_CREATE_EXCLUSIVE, NULL);
                for (int64_t i = o->first; i < o->first + o->n; i++)
                    rados_write_op_write(w, v->e[i].mem, (size_t)v->e[i].len,
                                         (uint64_t)v->e[i].objoff);
                rc = rados_aio_write_op_operate(w, r->io, c[s], oid, NULL,
                                                LIBRADOS_OPERATION_FULL_TRY);
                opv[s] = w;
            } else {
                rados_read_op_t rd = rados_create_read_op();
                for (int64_t i = o->first; i < o->first + o->n; i++)
                    rados_read_op_read(rd, (uint64_t)v->e[i].objoff, (size_t)v->e[i].len,
                                       v->e[i].mem, &v->e[i].got, &v->e[i].prval);
                rc = rados_aio_read_op_operate(rd, r->io, c[s], oid, 0);
                opv[s] = rd;
            }
            slot_of[s] = next;
            if (rc) { /* not sent: nothing to wait for */
                o->rc = rc;
                rados_aio_release(c[s]);
                if (write)
                    rados_release_write_op(opv[s]);
                else
                    rados_release_read_op(opv[s]);
                c[s] = NULL;
                err = err ? err : rc;
            }
            next++;
            continue;
        }
        /* wait for the oldest request in flight */
        int s = (int)(head % TESSI_RADOS_INFLIGHT);
        oprec *o = &ops[slot_of[s]];
        head++;
        if (!c[s])
            continue;
        rados_aio_wait_for_complete(c[s]);
        o->rc = rados_aio_get_return_value(c[s]);
        o->ver = rados_aio_get_version(c[s]);
        rados_aio_release(c[s]);
        if (write)
            rados_release_write_op(opv[s]);
        else
            rados_release_read_op(opv[s]);
        if (!write) {
            for (int64_t i = o->first; i < o->first + o->n; i++) {
                ext *e = &v->e[i];
                size_t got = o->rc == 0 && e->prval >= 0 ? e->got : 0;
                if (o->rc == 0 && e->prval < 0 && e->prval != -ENOENT)
                    o->rc = e->prval;
                if (got < (size_t)e->len)
                    memset(e->mem + got, 0, (size_t)e->len - got);
            }
            if (o->rc == -ENOENT) {
                o->rc = 0;
                o->ver = 0;
            }
        }
        if (o->rc < 0 && o->rc != -ERANGE && o->rc != -EOVERFLOW && o->rc != -EEXIST)
            err = err ? err : o->rc;
    }
    tessi_rados_count(r, next);
    return err;
}

/* Clip a read of [off, off + len) to the file size: the bytes that exist (refreshing the size
 * from the head object when the read reaches past the size known). */
static int64_t clip_read(tessi_rados *r, int64_t off, int64_t len, int *err)
{
    pthread_mutex_lock(&r->mu);
    int64_t size = r->size_known > r->size_pending ? r->size_known : r->size_pending;
    pthread_mutex_unlock(&r->mu);
    if (off + len > size && (*err = tessi_rados_size(r, &size)))
        return 0;
    return off >= size ? 0 : (size - off < len ? size - off : len);
}

/* Move the requests (list I/O batch, or one run): one compound request per object (per
 * list_max extents). Fills each result. */
static int move_reqs(tessi_rados *r, bool write, tessi_io_req *reqs, int64_t n)
{
    extv v = {0};
    oprec *ops = NULL;
    int64_t nops = 0;
    int rc = 0;
    for (int64_t i = 0; i < n && rc == 0; i++) {
        int64_t len = reqs[i].len;
        if (!write)
            len = clip_read(r, reqs[i].off, len, &rc);
        reqs[i].result = len;
        if (rc == 0)
            rc = ext_add(&v, r, reqs[i].iov, reqs[i].niov, reqs[i].off, len);
    }
    if (rc == 0 && (rc = tessi_rados_ext_group(&v, r->list_max, &ops, &nops)) == 0)
        rc = tessi_rados_ext_run(r, write, &v, ops, nops, NULL);
    for (int64_t k = 0; rc == 0 && k < nops; k++)
        if (ops[k].rc < 0)
            rc = ops[k].rc;
    for (int64_t i = 0; write && rc == 0 && i < n; i++)
        tessi_rados_extend(r, reqs[i].off + reqs[i].len);
    free(ops);
    free(v.e);
    return rc;
}

static int64_t move_run(void *h, bool write, const struct iovec *iov, int64_t niov, int64_t off)
{
    tessi_io_req q = {.off = off, .iov = iov, .niov = niov, .len = tessi_iov_len(iov, niov)};
    int rc = move_reqs(h, write, &q, 1);
    return rc ? rc : q.result;
}

int64_t tessi_rados_pread(void *h, void *buf, int64_t len, int64_t off)
{
    struct iovec iov = {.iov_base = buf, .iov_len = (size_t)len};
    return move_run(h, false, &iov, 1, off);
}

int64_t tessi_rados_pwrite(void *h, const void *buf, int64_t len, int64_t off)
{
    struct iovec iov = {.iov_base = (void *)buf, .iov_len = (size_t)len};
    return move_run(h, true, &iov, 1, off);
}

int64_t tessi_rados_preadv(void *h, const struct iovec *iov, int64_t niov, int64_t off)
{
    return move_run(h, false, iov, niov, off);
}

int64_t tessi_rados_pwritev(void *h, const struct iovec *iov, int64_t niov, int64_t off)
{
    return move_run(h, true, iov, niov, off);
}

int tessi_rados_submit(void *h, int op, tessi_io_req *reqs, int64_t n)
{
    return move_reqs(h, op == TESSI_OP_WRITE, reqs, n);
}

/* Sieving write without locks: read [off, off + len) with each object's version, let fill put
 * the new data in, write each object's piece back guarded by that version; repeat when another
 * writer changed an object in between. */
int tessi_rados_rmw(void *h, char *stage, int64_t off, int64_t len, bool covered,
                    int (*fill)(void *arg, char *stage), void *arg)
{
    tessi_rados *r = h;
    struct iovec iov = {.iov_base = stage, .iov_len = (size_t)len};
    int rc;
    if (covered) {
        if ((rc = fill(arg, stage)))
            return rc;
        int64_t put = move_run(h, true, &iov, 1, off);
        return put < 0 ? (int)put : 0;
    }
    for (int attempt = 0; attempt < RMW_RETRIES; attempt++) {
        extv v = {0};
        oprec *rd = NULL, *wr = NULL;
        int64_t nrd = 0, nwr = 0;
        bool conflict = false;
        if ((rc = ext_add(&v, r, &iov, 1, off, len)) || (rc = tessi_rados_ext_group(&v, 0, &rd, &nrd)) ||
            (rc = tessi_rados_ext_run(r, false, &v, rd, nrd, NULL)) || (rc = fill(arg, stage)))
            goto next;
        for (int64_t k = 0; k < nrd && rc == 0; k++)
            rc = rd[k].rc;
        if (rc || (rc = tessi_rados_ext_group(&v, 0, &wr, &nwr)) ||
            (rc = tessi_rados_ext_run(r, true, &v, wr, nwr, rd)))
            goto next;
        for (int64_t k = 0; k < nwr; k++)
            conflict |= wr[k].rc < 0;
    next:
        free(rd);
        free(wr);
        free(v.e);
        if (rc)
            return rc;
        if (!conflict) {
            tessi_rados_extend(r, off + len);
            return 0;
        }
        /* another writer came between: back off a random time that grows with the attempts,
         * so that writers of the same objects stop colliding */
        unsigned cap = 200u << (attempt < 10 ? attempt : 10);
        usleep((useconds_t)(rand_r(&r->seed) % cap));
    }
    return -EAGAIN;
}
