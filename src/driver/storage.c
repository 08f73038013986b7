/*
 * storage.c - the out-of-line half of the driver wrappers (driver.h): opening a storage object,
 * batches, error messages, the preallocation fallback and the lock-with-fallback helper.
 */
#include "driver/driver.h"

#include <stdlib.h>
#include <string.h>

int tessi_drv_open(tessi_storage *s, const struct tess_driver *drv, const char *path, int flags,
                   const tess_info *info)
{
    int rc = tessi_fault_check(TESSI_OP_OPEN);
    s->drv = drv;
    s->h = NULL;
    s->caps = 0;
    s->extent_locked = false;
    s->gate = (tessi_gate){.kind = TESSI_GATE_NONE};
    tessi_stats_reset(&s->stats);
    s->trace = (tessi_trace){.tracer = &tessi_stats_tracer, .ctx = &s->stats};
    if (rc == 0)
        rc = drv->open(path, flags, info, &s->h);
    if (rc == 0)
        s->caps = drv->caps(s->h);
    if (rc == 0 && drv->attach)
        drv->attach(s->h, &s->trace);
    return rc;
}

int tessi_drv_submit(tessi_storage *s, int op, tessi_io_req *reqs, int64_t n)
{
    if (!s->drv->submit)
        return -EOPNOTSUPP;
    int rc = tessi_fault_check(op);
    if (rc)
        return rc;
    double t0 = tessi_now();
    rc = s->drv->submit(s->h, op, reqs, n);
    if (rc == -EOPNOTSUPP)
        return rc;
    tessi_event e = {.kind = TESSI_EV_IO, .op = op, .off = n ? reqs[0].off : 0,
                     .seconds = tessi_now() - t0, .min_len = INT64_MAX, .moved = rc};
    for (int64_t i = 0; rc == 0 && i < n; i++) {
        e.moved += reqs[i].result > 0 ? reqs[i].result : 0;
        e.len += reqs[i].len;
        e.min_len = tessi_min64(e.min_len, reqs[i].len);
        e.max_len = tessi_max64(e.max_len, reqs[i].len);
        e.n++;
    }
    tessi_emit(&s->trace, &e);
    return rc;
}

/* The driver call for request r of tessi_drv_each (a write when wr). */
static inline int64_t one_call(tessi_storage *s, bool wr, const tessi_io_req *r)
{
    if (r->niov == 1)
        return wr ? s->drv->pwrite(s->h, r->iov[0].iov_base, r->len, r->off)
                  : s->drv->pread(s->h, r->iov[0].iov_base, r->len, r->off);
    return wr ? s->drv->pwritev(s->h, r->iov, r->niov, r->off)
              : s->drv->preadv(s->h, r->iov, r->niov, r->off);
}

/* tessi_drv_each with a fault check and an event per call (faults armed, or a hook installed
 * that must see every call). */
static int64_t each_checked(tessi_storage *s, int op, tessi_io_req *reqs, int64_t n)
{
    bool wr = op == TESSI_OP_WRITE, faulted = false;
    double t0 = tessi_now();
    int64_t k = 0;
    while (k < n) {
        tessi_io_req *r = &reqs[k++];
        int rc = tessi_fault_check(op);
        if ((faulted = rc != 0)) /* an injected failure reaches no storage: not traced */
            r->result = rc;
        else
            r->result = one_call(s, wr, r);
        if (r->result < r->len)
            break;
    }
    int64_t traced = k - faulted;
    double share = traced > 0 ? (tessi_now() - t0) / (double)traced : 0;
    for (int64_t i = 0; i < traced; i++)
        tessi_trace_call(s, op, reqs[i].off, reqs[i].len, reqs[i].result, share);
    return k;
}

int64_t tessi_drv_each(tessi_storage *s, int op, tessi_io_req *reqs, int64_t n)
{
    if (tessi_fault_armed(op) || tessi_tracer_hooked())
        return each_checked(s, op, reqs, n);
    bool wr = op == TESSI_OP_WRITE;
    int64_t k = 0, len = 0, moved = 0, lo = INT64_MAX, hi = 0;
    double t0 = tessi_now();
    while (k < n) {
        tessi_io_req *r = &reqs[k++];
        int64_t got = r->result = one_call(s, wr, r);
        len += r->len;
        moved += got > 0 ? got : 0;
        lo = tessi_min64(lo, r->len);
        hi = tessi_max64(hi, r->len);
        if (got < r->len)
            break;
    }
    if (k > 0)
        tessi_storage_emit(s, (tessi_event){.kind = TESSI_EV_IO_CALLS, .op = op,
                                            .off = reqs[0].off, .len = len, .moved = moved,
                                            .seconds = tessi_now() - t0, .n = k,
                                            .min_len = lo, .max_len = hi});
    return k;
}

int tessi_drv_error(const tessi_storage *s, int neg_errno, const char *what, int64_t off,
                    int64_t len)
{
    char text[128];
    const char *msg = strerror_r(-neg_errno, text, sizeof text);
    if (len <= 0)
        return tessi_error(tessi_errno_code(neg_errno), "%s %s: %s", s->drv->name, what, msg);
    return tessi_error(tessi_errno_code(neg_errno), "%s %s of %lld bytes at offset %lld: %s",
                       s->drv->name, what, (long long)len, (long long)off, msg);
}

/* Zeros written per call by the preallocation fallback. */
#define ZERO_CHUNK (INT64_C(1) << 20)

int tessi_drv_preallocate(tessi_storage *s, int64_t size)
{
    int rc = tessi_fault_check(TESSI_OP_SIZE);
    if (rc == 0)
        rc = s->drv->preallocate ? s->drv->preallocate(s->h, size) : -EOPNOTSUPP;
    if (rc != -EOPNOTSUPP)
        return rc;
    int64_t at;
    if ((rc = tessi_drv_get_size(s, &at)) || at >= size)
        return rc;
    char *zeros = calloc(1, (size_t)tessi_min64(size - at, ZERO_CHUNK));
    if (!zeros)
        return -ENOMEM;
    while (rc == 0 && at < size) {
        int64_t n = tessi_min64(size - at, ZERO_CHUNK), put = tessi_drv_pwrite(s, zeros, n, at);
        rc = put < 0 ? (int)put : 0;
        at += n;
    }
    free(zeros);
    return rc;
}

int tessi_lock_range(tessi_storage *s, tessi_lock *l, int64_t off, int64_t len, bool exclusive,
                     bool required)
{
    *l = (tessi_lock){.off = off, .len = len};
    if (len <= 0)
        return 0;
    int err = tessi_drv_lock(s, off, len, exclusive);
    if (err == 0) {
        l->held = true;
        return 0;
    }
    if (!tessi_lock_unsupported(err))
        return tessi_drv_error(s, err, "lock", off, len);
    if (required)
        return tessi_error(TESS_ERR_UNSUPPORTED, "%s: a lock of %lld bytes at offset %lld is "
                           "needed (atomic mode), and the storage has no locks: %s",
                           s->drv->name, (long long)len, (long long)off, strerror(-err));
    return 0;
}

int tessi_unlock_range(tessi_storage *s, tessi_lock *l, int rc)
{
    if (!l->held)
        return rc;
    l->held = false;
    int err = tessi_drv_unlock(s, l->off, l->len);
    return err && rc == 0 ? tessi_drv_error(s, err, "unlock", l->off, l->len) : rc;
}
