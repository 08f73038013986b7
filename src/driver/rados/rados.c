/*
 * rados.c - the Ceph RADOS driver: files `rados:POOL/NAME` striped RAID-0 over RADOS objects
 * (layout in rados.h). Every call is one or more librados operations, sent asynchronously so
 * that the objects of one call are served in parallel:
 *  - a contiguous or vectored call and a batch of list I/O requests become one compound
 *    operation per object touched, carrying up to tess_list_max_pairs extents (more extents
 *    make more operations); a compound write is atomic on its object;
 *  - sieving writes (rmw) read each object's piece with its version and write it back guarded
 *    by rados_write_op_assert_version, retried when another writer came between: no locks;
 *  - the file size lives in the head object; writes raise it lazily (one compare-and-set
 *    request at sync, get_size, set_size and close: a server-side maximum, so concurrent
 *    writers agree), reads past the size known refresh it first;
 *  - datatype I/O (dtio.c) ships the filetype to the OSDs' Lua class.
 * Writes carry LIBRADOS_OPERATION_FULL_TRY, so a full OSD answers ENOSPC instead of blocking.
 *
 * Driver hints (the table below): tess_rados_conf (ceph.conf path; default librados' search,
 * $CEPH_CONF first), tess_rados_user (client name without "client.", default admin),
 * tess_rados_timeout (seconds an operation may wait for an OSD or monitor, default 30; 0 waits
 * forever), striping_unit (default 4 MiB), striping_factor (default 4), tess_rados_object_size
 * (a multiple of the unit, at most 65536 units; default the largest multiple of the unit up to
 * 64 MiB, at least one unit). The core's tess_list_max_pairs bounds the extents per object per
 * request. Layout hints matter at create only: opens read the layout from the head object.
 * Capabilities: vectored calls and batches, the lock-free read-modify-write, datatype I/O; no
 * locks (so no atomic mode); TESSI_CAP_INSECURE when the cluster does not authenticate.
 */
#include "driver/rados/rados.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LAYOUT_XATTR "tessera.layout"
#define MIB (INT64_C(1) << 20)

enum { H_CONF, H_USER, H_TIMEOUT, H_UNIT, H_FACTOR, H_OBJSIZE, NHINTS };

static const tessi_hint_def rados_hint_defs[NHINTS] = {
    [H_CONF] = {.key = "tess_rados_conf", .kind = TESSI_HINT_PATH, .scope = TESSI_SCOPE_DRIVER,
                .min = 1, .def_text = "", .doc = "ceph.conf of the cluster (default: librados' "
                "search, $CEPH_CONF first)"},
    [H_USER] = {.key = "tess_rados_user", .kind = TESSI_HINT_NAME, .scope = TESSI_SCOPE_DRIVER,
                .def_text = "", .doc = "cephx user, without \"client.\" (default admin)"},
    [H_TIMEOUT] = {.key = "tess_rados_timeout", .kind = TESSI_HINT_INT,
                   .scope = TESSI_SCOPE_DRIVER, .min = 0, .max = 86400, .def = 30,
                   .doc = "seconds an operation may wait for an OSD or monitor (0: forever)"},
    [H_UNIT] = {.key = "striping_unit", .kind = TESSI_HINT_INT, .scope = TESSI_SCOPE_DRIVER,
                .min = 1, .max = INT64_C(1) << 30, .def = 4 * MIB,
                .doc = "stripe unit of a new file, bytes"},
    [H_FACTOR] = {.key = "striping_factor", .kind = TESSI_HINT_INT,
                  .scope = TESSI_SCOPE_DRIVER, .min = 1, .max = 4096, .def = 4,
                  .doc = "objects per stripe row of a new file"},
    [H_OBJSIZE] = {.key = "tess_rados_object_size", .kind = TESSI_HINT_INT,
                   .scope = TESSI_SCOPE_DRIVER, .min = 1, .max = INT64_C(1) << 30, .def = 0,
                   .def_text = "the largest multiple of the unit up to 64 MiB",
                   .doc = "bytes per object of a new file (a multiple of the unit)"},
};
#define SIZE_XATTR "tessera.size"
#define OBJSIZE_TARGET (INT64_C(64) << 20)
#define RMW_RETRIES 1000

/* ------------------------------------------------------------------ connections */

struct tessi_rados_conn {
    tessi_rados_conn *next;
    rados_t cluster;
    char conf[1024], user[128];
    int64_t timeout;
    int64_t refs;
    pid_t pid;      /* the process that connected: a forked child must connect anew */
    bool insecure;
};

static pthread_mutex_t conn_mu = PTHREAD_MUTEX_INITIALIZER;
static tessi_rados_conn *conns;

static int conn_get(const char *conf, const char *user, int64_t timeout, tessi_rados_conn **out)
{
    int rc = 0;
    pthread_mutex_lock(&conn_mu);
    for (tessi_rados_conn *c = conns; c; c = c->next) {
        if (strcmp(c->conf, conf) == 0 && strcmp(c->user, user) == 0 &&
            c->timeout == timeout && c->pid == getpid()) {
            c->refs++;
            *out = c;
            goto out;
        }
    }
    tessi_rados_conn *c = calloc(1, sizeof *c);
    if (!c) {
        rc = -ENOMEM;
        goto out;
    }
    snprintf(c->conf, sizeof c->conf, "%s", conf);
    snprintf(c->user, sizeof c->user, "%s", user);
    c->timeout = timeout;
    char t[32], auth[64] = "";
    snprintf(t, sizeof t, "%" PRId64, timeout);
    if ((rc = rados_create(&c->cluster, user[0] ? user : NULL)) == 0) {
        if ((rc = rados_conf_read_file(c->cluster, conf[0] ? conf : NULL)) == 0 &&
            (rc = rados_conf_set(c->cluster, "rados_osd_op_timeout", t)) == 0 &&
            (rc = rados_conf_set(c->cluster, "rados_mon_op_timeout", t)) == 0 &&
            (rc = rados_conf_set(c->cluster, "client_mount_timeout", timeout ? t : "300")) == 0 &&
            (rc = rados_conf_set(c->cluster, "log_to_stderr", "false")) == 0 &&
            (rc = rados_conf_set(c->cluster, "err_to_stderr", "false")) == 0)
            rc = rados_connect(c->cluster);
        if (rc) {
            rados_shutdown(c->cluster);
            free(c);
            goto out;
        }
    } else {
        free(c);
        goto out;
    }
    rados_conf_get(c->cluster, "auth_client_required", auth, sizeof auth);
    c->insecure = strstr(auth, "cephx") == NULL;
    c->refs = 1;
    c->pid = getpid();
    c->next = conns;
    conns = c;
    *out = c;
out:
    pthread_mutex_unlock(&conn_mu);
    return rc;
}

/* Connections stay open for the life of the process once made (connecting costs tens of
 * milliseconds and several threads); put only drops the reference. A child process after fork
 * has the parent's handles but not their threads: it makes its own connection. */
static void conn_put(tessi_rados_conn *c)
{
    pthread_mutex_lock(&conn_mu);
    c->refs--;
    pthread_mutex_unlock(&conn_mu);
}

/* ------------------------------------------------------------------ helpers */

void tessi_rados_oid(const tessi_rados *r, int64_t idx, char *oid)
{
    snprintf(oid, TESSI_RADOS_NAME_MAX + 24, "%s.%" PRId64, r->name, idx);
}

void tessi_rados_count(tessi_rados *r, int64_t n)
{
    if (r->trace && n > 0)
        tessi_emit(r->trace, &(tessi_event){.kind = TESSI_EV_SERVER, .n = n});
}

void tessi_rados_extend(tessi_rados *r, int64_t end)
{
    pthread_mutex_lock(&r->mu);
    if (end > r->size_pending && end > r->size_known)
        r->size_pending = end;
    pthread_mutex_unlock(&r->mu);
}

int tessi_rados_wait(rados_completion_t c)
{
    rados_aio_wait_for_complete(c);
    int rc = rados_aio_get_return_value(c);
    rados_aio_release(c);
    return rc;
}

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
static int publish(tessi_rados *r)
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
    int rc = publish(r);
    if (rc == 0 && (rc = size_read(r, size)) == 0) {
        pthread_mutex_lock(&r->mu);
        r->size_known = *size;
        if (r->size_pending > *size)
            *size = r->size_pending;
        pthread_mutex_unlock(&r->mu);
    }
    return rc;
}

/* ------------------------------------------------------------------ open, close */

/* The hints (validated by the core before open: a bad value here is -EINVAL), and the core's
 * tess_list_max_pairs. */
static int rados_hints(const tess_info *info, tessi_hint_val *v, int64_t *list_max)
{
    tessi_hint_val lm;
    if (tessi_hints_parse(rados_hint_defs, NHINTS, info, "rados", v))
        return -EINVAL;
    if (tessi_hints_parse(&tessi_hints_table[TESSI_H_LIST_MAX_PAIRS], 1, info, "rados", &lm)) {
        tessi_hints_release(v, NHINTS);
        return -EINVAL;
    }
    *list_max = lm.i;
    return 0;
}

/* Create the head object with its layout and size 0 (exclusive when excl). */
static int head_create(tessi_rados *r, bool excl)
{
    char layout[96], zero[24];
    int n = snprintf(layout, sizeof layout, "1 %" PRId64 " %" PRId64 " %" PRId64, r->unit,
                     r->factor, r->objsize);
    snprintf(zero, sizeof zero, "%020d", 0);
    rados_write_op_t op = rados_create_write_op();
    if (!op)
        return -ENOMEM;
    rados_write_op_create(op, excl ? LIBRADOS_CREATE_EXCLUSIVE : LIBRADOS_CREATE_IDEMPOTENT, NULL);
    rados_write_op_setxattr(op, LAYOUT_XATTR, layout, (size_t)n);
    rados_write_op_setxattr(op, SIZE_XATTR, zero, 20);
    int rc = rados_write_op_operate(op, r->io, r->name, NULL, LIBRADOS_OPERATION_FULL_TRY);
    rados_release_write_op(op);
    tessi_rados_count(r, 1);
    return rc;
}

/* Read the layout and the size from the head object (two requests). */
static int head_read(tessi_rados *r)
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

static int drv_open(const char *path, int flags, const tess_info *info, void **h)
{
    char pool[256];
    tessi_hint_val v[NHINTS];
    int64_t list_max;
    int rc;
    if (strncmp(path, "rados:", 6) == 0)
        path += 6;
    const char *slash = strchr(path, '/');
    if ((flags & TESSI_OPEN_DIRECT) || !slash || slash == path || !slash[1] ||
        (size_t)(slash - path) >= sizeof pool || strlen(slash + 1) > TESSI_RADOS_NAME_MAX ||
        rados_hints(info, v, &list_max))
        return -EINVAL;
    int64_t unit = v[H_UNIT].i, factor = v[H_FACTOR].i, objsize = v[H_OBJSIZE].i;
    char conf[1024], user[128];
    snprintf(conf, sizeof conf, "%s", v[H_CONF].s ? v[H_CONF].s : "");
    snprintf(user, sizeof user, "%s", v[H_USER].s ? v[H_USER].s : "");
    int64_t timeout = v[H_TIMEOUT].i;
    bool too_long = (v[H_CONF].s && strlen(v[H_CONF].s) >= sizeof conf) ||
                    (v[H_USER].s && strlen(v[H_USER].s) >= sizeof user);
    tessi_hints_release(v, NHINTS);
    if (too_long || (objsize && (objsize % unit || objsize / unit > 65536)))
        return -EINVAL;
    tessi_rados *r = calloc(1, sizeof *r);
    if (!r)
        return -ENOMEM;
    memcpy(pool, path, (size_t)(slash - path));
    pool[slash - path] = 0;
    snprintf(r->name, sizeof r->name, "%s", slash + 1);
    pthread_mutex_init(&r->mu, NULL);
    r->unit = unit, r->factor = factor, r->list_max = list_max;
    r->seed = (unsigned)getpid() ^ (unsigned)(uintptr_t)r;
    r->objsize = objsize ? objsize : unit >= OBJSIZE_TARGET ? unit : OBJSIZE_TARGET / unit * unit;
    if (r->objsize / unit > 65536)
        r->objsize = unit * 65536;
    if ((rc = conn_get(conf, user, timeout, &r->conn)))
        goto fail_conn;
    r->insecure = r->conn->insecure;
    if ((rc = rados_ioctx_create(r->conn->cluster, pool, &r->io)))
        goto fail;
    if (flags & TESS_CREATE) {
        rc = head_create(r, flags & TESS_EXCL);
        if (rc == -EEXIST && !(flags & TESS_EXCL))
            rc = 0;
        if (rc)
            goto fail_io;
    }
    if ((rc = head_read(r)))
        goto fail_io;
    *h = r;
    return 0;
fail_io:
    rados_ioctx_destroy(r->io);
fail:
    conn_put(r->conn);
fail_conn:
    pthread_mutex_destroy(&r->mu);
    free(r);
    return rc;
}

static int drv_close(void *h)
{
    tessi_rados *r = h;
    int rc = publish(r);
    rados_ioctx_destroy(r->io);
    conn_put(r->conn);
    pthread_mutex_destroy(&r->mu);
    free(r);
    return rc;
}

static unsigned drv_caps(void *h)
{
    tessi_rados *r = h;
    return TESSI_CAP_VECTORED | TESSI_CAP_BATCHED | TESSI_CAP_RMW | TESSI_CAP_DATATYPE |
           (r->insecure ? TESSI_CAP_INSECURE : 0);
}

static void drv_striping(void *h, int64_t *unit, int64_t *factor, int64_t *objsize)
{
    tessi_rados *r = h;
    *unit = r->unit, *factor = r->factor, *objsize = r->objsize;
}

static void drv_attach(void *h, const tessi_trace *trace)
{
    ((tessi_rados *)h)->trace = trace;
}

static void drv_describe(void *h, char *buf, size_t cap)
{
    tessi_rados *r = h;
    char fsid[64] = "?", pool[256] = "?";
    rados_cluster_fsid(r->conn->cluster, fsid, sizeof fsid);
    rados_ioctx_get_pool_name(r->io, pool, sizeof pool);
    snprintf(buf, cap, "RADOS pool %s of cluster %s, stripes of %lld x %lld bytes", pool, fsid,
             (long long)r->factor, (long long)r->unit);
}

/* ------------------------------------------------------------------ extents */

/* One object extent of a call: object obj, bytes [objoff, objoff + len) <-> mem. */
typedef struct ext {
    int64_t obj, objoff, len, seq;
    char *mem;
    size_t got;  /* reads: bytes the OSD returned */
    int prval;   /* reads: the extent's own result */
} ext;

typedef struct extv {
    ext *e;
    int64_t n, cap;
} extv;

/* One request: extents [first, first + n) of one object. */
typedef struct oprec {
    int64_t obj, first, n;
    uint64_t ver;  /* the object's version after the request */
    int rc;
} oprec;

static int ext_push(extv *v, int64_t obj, int64_t objoff, int64_t len, char *mem)
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
            int rc = ext_push(v, obj, objoff, n, (char *)iov[i].iov_base + in);
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

/* Group the extents by object (stable) into requests of at most maxper extents each (maxper
 * <= 0: one request per object). *ops is malloc'ed. */
static int ext_group(extv *v, int64_t maxper, oprec **ops, int64_t *nops)
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

/* Run the requests: reads fill the extents' memory (an absent object or a short object reads
 * as zeros); writes store it, each request guarded by guard[k] when given (the object's version
 * from a read: assert_version, or exclusive create when it had none). Every request is sent
 * (TESSI_RADOS_INFLIGHT at a time); ops[k].rc gets each result. Returns the first error other
 * than a guard conflict (-ERANGE, -EOVERFLOW, -EEXIST), else 0. */
static int ext_run(tessi_rados *r, bool write, extv *v, oprec *ops, int64_t nops,
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
    if (rc == 0 && (rc = ext_group(&v, r->list_max, &ops, &nops)) == 0)
        rc = ext_run(r, write, &v, ops, nops, NULL);
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

static int64_t drv_pread(void *h, void *buf, int64_t len, int64_t off)
{
    struct iovec iov = {.iov_base = buf, .iov_len = (size_t)len};
    return move_run(h, false, &iov, 1, off);
}

static int64_t drv_pwrite(void *h, const void *buf, int64_t len, int64_t off)
{
    struct iovec iov = {.iov_base = (void *)buf, .iov_len = (size_t)len};
    return move_run(h, true, &iov, 1, off);
}

static int64_t drv_preadv(void *h, const struct iovec *iov, int64_t niov, int64_t off)
{
    return move_run(h, false, iov, niov, off);
}

static int64_t drv_pwritev(void *h, const struct iovec *iov, int64_t niov, int64_t off)
{
    return move_run(h, true, iov, niov, off);
}

static int drv_submit(void *h, int op, tessi_io_req *reqs, int64_t n)
{
    return move_reqs(h, op == TESSI_OP_WRITE, reqs, n);
}

/* Sieving write without locks: read [off, off + len) with each object's version, let fill put
 * the new data in, write each object's piece back guarded by that version; repeat when another
 * writer changed an object in between. */
static int drv_rmw(void *h, char *stage, int64_t off, int64_t len, bool covered,
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
        if ((rc = ext_add(&v, r, &iov, 1, off, len)) || (rc = ext_group(&v, 0, &rd, &nrd)) ||
            (rc = ext_run(r, false, &v, rd, nrd, NULL)) || (rc = fill(arg, stage)))
            goto next;
        for (int64_t k = 0; k < nrd && rc == 0; k++)
            rc = rd[k].rc;
        if (rc || (rc = ext_group(&v, 0, &wr, &nwr)) ||
            (rc = ext_run(r, true, &v, wr, nwr, rd)))
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

/* ------------------------------------------------------------------ size, sync, remove */

static int drv_get_size(void *h, int64_t *size)
{
    return tessi_rados_size(h, size);
}

/* Truncate or extend: objects past the new end are removed, the object holding it truncated,
 * then the size is stored exactly. */
static int drv_set_size(void *h, int64_t size)
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

/* RADOS acknowledges a write once it is durable on the OSD: sync publishes the size. */
static int drv_sync(void *h)
{
    return publish(h);
}

/* Remove the file: its data objects (up to its size's last object) and the head. */
static int drv_remove(const char *path, const tess_info *info)
{
    void *h;
    int rc = drv_open(path, TESS_RDWR, info, &h);
    if (rc)
        return rc;
    tessi_rados *r = h;
    int64_t size = r->size_known, last = -1, off;
    if (size > 0)
        tessi_rados_locate(r, size - 1, &last, &off);
    /* objects of the last stripe row set may exist below `last` in any order: remove every
     * object up to the end of last's object set */
    int64_t end = last < 0 ? 0 : (last / r->factor + 1) * r->factor;
    for (int64_t obj = 0; obj < end; obj++) {
        char oid[TESSI_RADOS_NAME_MAX + 24];
        tessi_rados_oid(r, obj, oid);
        int e = rados_remove(r->io, oid);
        tessi_rados_count(r, 1);
        if (e && e != -ENOENT && rc == 0)
            rc = e;
    }
    int e = rados_remove(r->io, r->name);
    if (e && rc == 0)
        rc = e;
    r->size_pending = 0;
    drv_close(h);
    return rc;
}

const struct tess_driver tess_rados_driver = {
    .version = TESSI_DRIVER_VERSION,
    .name = "rados",
    .hints = rados_hint_defs,
    .nhints = NHINTS,
    .open = drv_open,
    .close = drv_close,
    .caps = drv_caps,
    .pread = drv_pread,
    .pwrite = drv_pwrite,
    .preadv = drv_preadv,
    .pwritev = drv_pwritev,
    .sync = drv_sync,
    .get_size = drv_get_size,
    .set_size = drv_set_size,
    .submit = drv_submit,
    .rmw = drv_rmw,
    .dtio = tessi_rados_dtio,
    .remove = drv_remove,
    .striping = drv_striping,
    .attach = drv_attach,
    .describe = drv_describe,
};
