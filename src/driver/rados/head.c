/*
 * head.c - the head object of a RADOS file (layout in rados.h): its layout xattr, written at
 * create and read at open, and the file size. The size is raised lazily: a handle notes the end
 * of its writes (tessi_rados_extend) and publishes it with one compare-and-set request (a
 * server-side maximum, so concurrent writers agree) at sync, get_size, set_size and close;
 * reads past the size known refresh it first.
 */
#include "driver/rados/rados.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#define LAYOUT_XATTR "tessera.layout"
#define SIZE_XATTR "tessera.size"

/* Raise the head object's size to at least size (one request; -ECANCELED from the guard means
 * the stored size is already at least size). */
static int size_raise(tessi_rados *r, int64_t size)
{
    char v[24];
    snprintf(v, sizeof v, "%020" PRId64, size);
    rados_write_op_t op = rados_create_write_op();
    if (!op)
        return -ENOMEM;
    rados_write_op_assert_exists(op);
    rados_write_op_cmpxattr(op, SIZE_XATTR, LIBRADOS_CMPXATTR_OP_GT, v, 20);
    rados_write_op_setxattr(op, SIZE_XATTR, v, 20);
    int rc = rados_write_op_operate(op, r->io, r->name, NULL, LIBRADOS_OPERATION_FULL_TRY);
    rados_release_write_op(op);
    tessi_rados_count(r, 1);
    return rc == -ECANCELED ? 0 : rc;
}

/* One xattr of the head object as a string (one request): its length or a negative errno. */
static int head_xattr(tessi_rados *r, const char *name, char *v, size_t cap)
{
    int rc = rados_getxattr(r->io, r->name, name, v, cap - 1);
    tessi_rados_count(r, 1);
    if (rc >= 0)
        v[rc] = 0;
    return rc;
}

static int size_read(tessi_rados *r, int64_t *size)
{
    char v[32];
    int rc = head_xattr(r, SIZE_XATTR, v, sizeof v);
    if (rc < 0)
        return rc;
    char *end;
    long long s = strtoll(v, &end, 10);
    if (rc != 20 || *end || s < 0)
        return -EIO;
    *size = s;
    return 0;
}

/* Publish this handle's extension of the file (if any). */
int tessi_rados_publish(tessi_rados *r)
{
    pthread_mutex_lock(&r->mu);
    int64_t p = r->size_pending;
    pthread_mutex_unlock(&r->mu);
    if (p == 0)
        return 0;
    int rc = size_raise(r, p);
    if (rc == 0) {
        pthread_mutex_lock(&r->mu);
        if (r->size_pending == p)
            r->size_pending = 0;
        if (p > r->size_known)
            r->size_known = p;
        pthread_mutex_unlock(&r->mu);
    }
    return rc;
}

int tessi_rados_size(tessi_rados *r, int64_t *size)
{
    int rc = tessi_rados_publish(r);
    if (rc == 0 && (rc = size_read(r, size)) == 0) {
        pthread_mutex_lock(&r->mu);
        r->size_known = *size;
        if (r->size_pending > *size)
            *size = r->size_pending;
        pthread_mutex_unlock(&r->mu);
    }
    return rc;
}

/* Create the head object with its layout and size 0. The create is always exclusive, so that
 * the whole request (create and xattrs) fails with -EEXIST on an existing file and leaves its
 * layout and size alone (an idempotent create would reset them: opening an existing file with
 * TESS_CREATE would lose its size); the caller ignores -EEXIST unless excl. */
int tessi_rados_head_create(tessi_rados *r)
{
    char layout[96], zero[24];
    int n = snprintf(layout, sizeof layout, "1 %" PRId64 " %" PRId64 " %" PRId64, r->unit,
                     r->factor, r->objsize);
    snprintf(zero, sizeof zero, "%020d", 0);
    rados_write_op_t op = rados_create_write_op();
    if (!op)
        return -ENOMEM;
    rados_write_op_create(op, LIBRADOS_CREATE_EXCLUSIVE, NULL);
    rados_write_op_setxattr(op, LAYOUT_XATTR, layout, (size_t)n);
    rados_write_op_setxattr(op, SIZE_XATTR, zero, 20);
    int rc = rados_write_op_operate(op, r->io, r->name, NULL, LIBRADOS_OPERATION_FULL_TRY);
    rados_release_write_op(op);
    tessi_rados_count(r, 1);
    return rc;
}

/* Read the layout and the size from the head object (two requests). */
int tessi_rados_head_read(tessi_rados *r)
{
    char layout[96];
    int rc = head_xattr(r, LAYOUT_XATTR, layout, sizeof layout);
    if (rc < 0)
        return rc;
    long long u, f, o;
    if (sscanf(layout, "1 %lld %lld %lld", &u, &f, &o) != 3 || u < 1 || f < 1 || o < u ||
        o % u || o / u > 65536)
        return -EINVAL;
    r->unit = u, r->factor = f, r->objsize = o;
    return size_read(r, &r->size_known);
}

/* Truncate or extend: objects past the new end are removed, the object holding it truncated,
 * then the size is stored exactly. */
int tessi_rados_set_size(void *h, int64_t size)
{
    tessi_rados *r = h;
    int64_t old;
    int rc = tessi_rados_size(r, &old);
    if (rc)
        return rc;
    if (size < old) {
        int64_t last, off;
        tessi_rados_locate(r, old - 1, &last, &off);
        last = (last / r->factor + 1) * r->factor - 1; /* the whole object set */
        for (int64_t obj = 0; obj <= last && rc == 0; obj++) {
            int64_t set = obj / r->factor, pos = obj % r->factor;
            int64_t rows = r->objsize / r->unit;
            int64_t base = set * r->objsize * r->factor + pos * r->unit;
            /* object bytes kept: for each row, the part of its unit below size */
            int64_t keep = 0;
            for (int64_t row = 0; row < rows; row++) {
                int64_t f = base + row * r->unit * r->factor;
                if (f >= size)
                    break;
                keep = row * r->unit + (size - f < r->unit ? size - f : r->unit);
            }
            char oid[TESSI_RADOS_NAME_MAX + 24];
            tessi_rados_oid(r, obj, oid);
            rados_write_op_t w = rados_create_write_op();
            rados_write_op_assert_exists(w);
            if (keep == 0)
                rados_write_op_remove(w);
            else
                rados_write_op_truncate(w, (uint64_t)keep);
            rc = rados_write_op_operate(w, r->io, oid, NULL, LIBRADOS_OPERATION_FULL_TRY);
            rados_release_write_op(w);
            tessi_rados_count(r, 1);
            if (rc == -ENOENT)
                rc = 0;
        }
    }
    if (rc)
        return rc;
    char v[24];
    snprintf(v, sizeof v, "%020" PRId64, size);
    rc = rados_setxattr(r->io, r->name, SIZE_XATTR, v, 20);
    tessi_rados_count(r, 1);
    if (rc == 0) {
        pthread_mutex_lock(&r->mu);
        r->size_known = size;
        r->size_pending = 0;
        pthread_mutex_unlock(&r->mu);
    }
    return rc;
}
