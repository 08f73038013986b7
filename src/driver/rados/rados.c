/*
 * rados.c - the Ceph RADOS driver: files `rados:POOL/NAME` striped RAID-0 over RADOS objects
 * (layout in rados.h). This file: connections (shared per conf, user and timeout), open, close,
 * capabilities, remove, and the driver table. Every call is one or more librados operations:
 * byte I/O, list I/O and sieving writes as compound operations (io.c), layout and file size in
 * the head object (head.c), datatype I/O shipped to the OSDs (dtio.c).
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
#define OBJSIZE_TARGET (INT64_C(64) << 20)

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

void tessi_rados_count_programs(tessi_rados *r, int64_t n)
{
    if (r->trace && n > 0)
        tessi_emit(r->trace, &(tessi_event){.kind = TESSI_EV_SERVER, .n = n, .flag = true});
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
    tessi_rados_dtio_init(r);
    r->objsize = objsize ? objsize : unit >= OBJSIZE_TARGET ? unit : OBJSIZE_TARGET / unit * unit;
    if (r->objsize / unit > 65536)
        r->objsize = unit * 65536;
    if ((rc = conn_get(conf, user, timeout, &r->conn)))
        goto fail_conn;
    r->insecure = r->conn->insecure;
    if ((rc = rados_ioctx_create(r->conn->cluster, pool, &r->io)))
        goto fail;
    if (flags & TESS_CREATE) {
        rc = tessi_rados_head_create(r);
        if (rc == -EEXIST && !(flags & TESS_EXCL))
            rc = 0;
        if (rc)
            goto fail_io;
    }
    if ((rc = tessi_rados_head_read(r)))
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
    int rc = tessi_rados_publish(r);
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


/* ------------------------------------------------------------------ size, sync, remove */

static int drv_get_size(void *h, int64_t *size)
{
    return tessi_rados_size(h, size);
}

/* RADOS acknowledges a write once it is durable on the OSD: sync publishes the size. */
static int drv_sync(void *h)
{
    return tessi_rados_publish(h);
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
    .pread = tessi_rados_pread,
    .pwrite = tessi_rados_pwrite,
    .preadv = tessi_rados_preadv,
    .pwritev = tessi_rados_pwritev,
    .sync = drv_sync,
    .get_size = drv_get_size,
    .set_size = tessi_rados_set_size,
    .submit = tessi_rados_submit,
    .rmw = tessi_rados_rmw,
    .dtio = tessi_rados_dtio,
    .remove = drv_remove,
    .striping = drv_striping,
    .attach = drv_attach,
    .describe = drv_describe,
};
