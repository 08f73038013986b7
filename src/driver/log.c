/*
 * log.c - the log-structured container driver (hint tess_driver = log, or a path
 * "log:<directory>"): paper 001 section 3.3.5's PLFS layer. Every writer (each thread of each
 * process that writes through a handle) appends its data to a log of its own and an entry per
 * write to an index of its own, so N streams into one logical file become N files on storage
 * and writers never touch each other's files. A read merges every writer's index (later
 * writes win, holes read as zeros). Format, ordering and crash safety: log.h; the merged index:
 * logindex.c. The files of the container are reached through the posix driver's table, so
 * short counts, EINTR and locks are handled in one place.
 *
 * Reading. A handle keeps the merged index and brings it up to date before a read or get_size
 * when the logs grew: its own writers' entries at once, the other writers' (other handles,
 * processes, nodes) before every read by default (one fstat per other writer, and one of the
 * writers file for new writers), or with tess_log_refresh = sync only after open, sync and a
 * lock, which is MPI's consistency rule (sync-barrier-sync) and suits containers of many
 * writers.
 *
 * Capabilities: vectored calls (a write is one append, whatever the memory layout); locks,
 * shared and exclusive, when the container's lock file takes fcntl locks (then atomic mode and
 * sieving writes work: a sieving write reads its window and appends it whole under the lock,
 * and taking a lock makes the next read look at every writer), tried without waiting too, so
 * the write gate is live and plain writes lock only while some handle sieves. No batches, no
 * direct I/O.
 * preallocate sets the size only: nothing can be reserved for bytes a log appends later.
 *
 * Its hints:
 *   tess_log_refresh   read | sync: when a reader looks for the other writers' new entries
 *                      (above)                                                     (read)
 */
#include "driver/logfile.h"

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* iovecs of a read kept on the stack. */
#define SMALL_IOV 16

enum { H_REFRESH, NHINTS };

static const char *const refresh_choices[] = {"read", "sync", NULL};

static const tessi_hint_def log_hint_defs[NHINTS] = {
    [H_REFRESH] = {.key = "tess_log_refresh", .kind = TESSI_HINT_CHOICE,
                   .scope = TESSI_SCOPE_DRIVER, .choices = refresh_choices, .def = 0,
                   .doc = "when a log reader looks for other writers' new entries: every read, "
                          "or after open, sync and lock only"},
};

static atomic_uint_least64_t log_serials; /* numbers the handles */

/* ------------------------------------------------------------------ open, close */

static int log_close(void *hv)
{
    tessi_log_file *h = hv;
    int rc = 0, err;
    for (int32_t i = 0; i < h->nw; i++) {
        tessi_log_writer *w = h->w[i];
        if (w && (err = PX->close(w->index)) && rc == 0)
            rc = err;
        if (w && w->data && (err = PX->close(w->data)) && rc == 0)
            rc = err;
        if (w && w->hold >= 0)
            close(w->hold); /* the log is free for a later writer */
        free(w);
    }
    if (h->lock && (err = PX->close(h->lock)) && rc == 0)
        rc = err;
    if (h->dirfd >= 0 && close(h->dirfd) && rc == 0)
        rc = -errno;
    if (h->writers_fd >= 0 && close(h->writers_fd) && rc == 0)
        rc = -errno;
    tessi_log_map_free(&h->map);
    pthread_rwlock_destroy(&h->rw);
    free(h->w);
    free(h->dir);
    free(h);
    return rc;
}

static int log_open(const char *path, int flags, const tess_info *info, void **out)
{
    tessi_hint_val v[NHINTS];
    bool created = false;
    char *dir;
    if (tessi_hints_parse(log_hint_defs, NHINTS, info, "log", v))
        return -EINVAL;
    if (flags & TESSI_OPEN_DIRECT) /* appends of any length: no direct mode */
        return -EINVAL;
    int rc = tessi_log_path(path, &dir);
    if (rc == 0 && (flags & TESS_CREATE))
        rc = tessi_log_create(dir, flags & TESS_EXCL, &created);
    tessi_log_file *h = rc ? NULL : calloc(1, sizeof *h);
    if (!h) {
        free(dir);
        return rc ? rc : -ENOMEM;
    }
    h->dir = dir;
    h->rd = !(flags & TESS_WRONLY);
    h->wr = !(flags & TESS_RDONLY);
    h->refresh_on_sync = v[H_REFRESH].i == 1;
    h->serial = atomic_fetch_add(&log_serials, 1) + 1;
    atomic_init(&h->stale, true);
    atomic_init(&h->dir_dirty, false);
    atomic_init(&h->parent_dirty, created);
    pthread_rwlock_init(&h->rw, NULL);
    h->writers_fd = -1;
    h->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    rc = h->dirfd < 0 ? -errno : tessi_log_check(h->dirfd);
    if (rc == 0 && (h->writers_fd = openat(h->dirfd, "writers", O_RDONLY | O_CLOEXEC)) < 0)
        rc = errno == ENOENT ? -EINVAL : -errno; /* not a whole container */
    if (rc == 0) {
        int lrc = tessi_log_child_open(h, "lock", h->wr ? TESS_RDWR : TESS_RDONLY, &h->lock);
        h->lock_caps = lrc ? 0 : PX->caps(h->lock);
        h->lock = lrc ? NULL : h->lock;
        rc = lrc == -ENOENT ? 0 : lrc; /* no lock file: a container without locks */
    }
    if (rc == 0)
        rc = tessi_log_observe_tails(h);
    if (rc) {
        log_close(h);
        return rc;
    }
    *out = h;
    return 0;
}

static unsigned log_caps(void *hv)
{
    tessi_log_file *h = hv;
    return TESSI_CAP_VECTORED |
           (h->lock_caps & (TESSI_CAP_LOCKS | TESSI_CAP_SHARED_LOCKS | TESSI_CAP_MEMORY));
}

/* ------------------------------------------------------------------ data */

/* A position in an iovec list, moving forward. */
typedef struct iov_cursor {
    const struct iovec *iov;
    int64_t i;
    size_t in;
} iov_cursor;

/* The next len bytes of the cursor's memory as iovecs in out; returns how many. */
static int64_t cursor_take(iov_cursor *c, int64_t len, struct iovec *out)
{
    int64_t k = 0;
    while (len > 0) {
        while (c->in == c->iov[c->i].iov_len) {
            c->i++;
            c->in = 0;
        }
        size_t m = c->iov[c->i].iov_len - c->in;
        m = (int64_t)m > len ? (size_t)len : m;
        out[k++] = (struct iovec){.iov_base = (char *)c->iov[c->i].iov_base + c->in, .iov_len = m};
        c->in += m;
        len -= (int64_t)m;
    }
    return k;
}

static void cursor_zero(iov_cursor *c, int64_t len, struct iovec *part)
{
    int64_t k = cursor_take(c, len, part);
    for (int64_t i = 0; i < k; i++)
        memset(part[i].iov_base, 0, part[i].iov_len);
}

/* Read logical [off, off + len) of the map into the cursor's memory: extents from their logs
 * (runs of one log in one call), holes and cut bytes as zeros. Caller holds rw. */
static int read_extents(tessi_log_file *h, int64_t off, int64_t len, iov_cursor *c,
                        struct iovec *part)
{
    const tessi_log_map *m = &h->map;
    int64_t x = off, end = off + len, k = tessi_log_map_find(m, off);
    while (x < end) {
        const tessi_log_extent *e = k < m->n ? &m->ext[k] : NULL;
        int64_t upto = !e || e->start >= end ? end : e->start > x ? e->start
                                                   : tessi_min64(tessi_log_end(e), end);
        if (!e || e->start > x || e->zero) {
            cursor_zero(c, upto - x, part);
            k += e && e->start <= x;
            x = upto;
            continue;
        }
        int64_t phys = e->phys + (x - e->start);
        for (k++; upto < end && k < m->n; k++) { /* the run goes on in the same log */
            const tessi_log_extent *p = &m->ext[k - 1], *q = &m->ext[k];
            if (q->zero || q->writer != e->writer || q->start != tessi_log_end(p) ||
                q->phys != p->phys + p->len)
                break;
            upto = tessi_min64(tessi_log_end(q), end);
        }
        int64_t n = cursor_take(c, upto - x, part);
        int64_t got = PX->preadv(h->w[e->writer]->data, part, n, phys);
        if (got != upto - x)
            return got < 0 ? (int)got : -EIO; /* the log is shorter than its index says */
        x = upto;
    }
    return 0;
}

static int64_t log_preadv(void *hv, const struct iovec *iov, int64_t niov, int64_t off)
{
    tessi_log_file *h = hv;
    struct iovec small[SMALL_IOV], *part = small;
    if (!h->rd)
        return -EBADF;
    if (off < 0)
        return -EINVAL;
    if (niov > SMALL_IOV && !(part = malloc((size_t)niov * sizeof *part)))
        return -ENOMEM;
    int rc = tessi_log_lock_fresh(h);
    int64_t len = tessi_iov_len(iov, niov), n = 0;
    if (rc == 0) {
        n = off >= h->map.size ? 0 : tessi_min64(len, h->map.size - off);
        iov_cursor c = {.iov = iov};
        rc = read_extents(h, off, n, &c, part);
        pthread_rwlock_unlock(&h->rw);
    }
    if (part != small)
        free(part);
    return rc ? rc : n;
}

static int64_t log_pread(void *h, void *buf, int64_t len, int64_t off)
{
    struct iovec v = {.iov_base = buf, .iov_len = (size_t)len};
    return log_preadv(h, &v, 1, off);
}

static int64_t log_pwritev(void *hv, const struct iovec *iov, int64_t niov, int64_t off)
{
    tessi_log_file *h = hv;
    tessi_log_writer *w;
    int64_t len = tessi_iov_len(iov, niov), end;
    if (!h->wr)
        return -EBADF;
    if (off < 0 || !tessi_add(off, len, &end))
        return -EFBIG;
    int rc = len ? tessi_log_own_writer(h, &w) : 0;
    if (rc || len == 0)
        return rc;
    int64_t put = PX->pwritev(w->data, iov, niov, w->data_end);
    if (put < 0) /* what it put is unreferenced: the next write goes over it */
        return put;
    tessi_log_entry e = {.kind = TESSI_LOG_DATA, .writer = w->id, .logical = off,
                         .physical = w->data_end, .length = len};
    if ((rc = tessi_log_append(w, &e)))
        return rc;
    w->data_end += len;
    return len;
}

static int64_t log_pwrite(void *h, const void *buf, int64_t len, int64_t off)
{
    struct iovec v = {.iov_base = (void *)buf, .iov_len = (size_t)len};
    return log_pwritev(h, &v, 1, off);
}

/* ------------------------------------------------------------------ size, sync, locks */

static int log_get_size(void *hv, int64_t *size)
{
    tessi_log_file *h = hv;
    int rc = tessi_log_lock_fresh(h);
    if (rc == 0) {
        *size = h->map.size;
        pthread_rwlock_unlock(&h->rw);
    }
    return rc;
}

/* A set_size (TESSI_LOG_TRUNCATE) or preallocate (TESSI_LOG_EXTEND) entry. */
static int size_entry(tessi_log_file *h, int kind, int64_t size)
{
    tessi_log_writer *w;
    int rc = size < 0 ? -EINVAL : tessi_log_own_writer(h, &w);
    if (rc)
        return rc;
    tessi_log_entry e = {.kind = kind, .writer = w->id, .logical = size};
    return tessi_log_append(w, &e);
}

static int log_set_size(void *h, int64_t size) { return size_entry(h, TESSI_LOG_TRUNCATE, size); }

static int log_preallocate(void *h, int64_t size) { return size_entry(h, TESSI_LOG_EXTEND, size); }

/* fsync a directory (the container's, or the one holding it). */
static int sync_dir(int fd)
{
    int rc;
    while ((rc = fsync(fd)) < 0 && errno == EINTR)
        ;
    return rc ? -errno : 0;
}

/* Make what this handle wrote durable: each log before its index, then the directory entries
 * of new files; then look at the other writers (the next read refreshes). */
static int log_sync(void *hv)
{
    tessi_log_file *h = hv;
    int rc = 0;
    pthread_rwlock_rdlock(&h->rw);
    for (int32_t i = 0; rc == 0 && i < h->nw; i++)
        if (h->w[i] && h->w[i]->own && (rc = PX->sync(h->w[i]->data)) == 0)
            rc = PX->sync(h->w[i]->index);
    pthread_rwlock_unlock(&h->rw);
    if (rc == 0 && atomic_exchange(&h->dir_dirty, false))
        rc = sync_dir(h->dirfd);
    if (rc == 0 && atomic_exchange(&h->parent_dirty, false)) {
        int fd = openat(h->dirfd, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        rc = fd < 0 ? -errno : sync_dir(fd);
        if (fd >= 0)
            close(fd);
    }
    pthread_rwlock_wrlock(&h->rw);
    if (rc == 0)
        rc = tessi_log_observe_tails(h);
    atomic_store(&h->stale, true);
    pthread_rwlock_unlock(&h->rw);
    return rc;
}

static int log_lock(void *hv, int64_t off, int64_t len, bool exclusive)
{
    tessi_log_file *h = hv;
    if (!(h->lock_caps & TESSI_CAP_LOCKS))
        return -ENOLCK;
    int rc = PX->lock(h->lock, off, len, exclusive);
    if (rc)
        return rc;
    /* what others wrote under their locks is read next, and what this writes is later */
    pthread_rwlock_wrlock(&h->rw);
    rc = tessi_log_observe_tails(h);
    atomic_store(&h->stale, true);
    pthread_rwlock_unlock(&h->rw);
    if (rc)
        PX->unlock(h->lock, off, len);
    return rc;
}

static int log_unlock(void *hv, int64_t off, int64_t len)
{
    tessi_log_file *h = hv;
    return h->lock_caps & TESSI_CAP_LOCKS ? PX->unlock(h->lock, off, len) : -ENOLCK;
}

/* The lock file's answer: with it the write gate is live (gate.c), so plain writes go unlocked
 * while no handle sieves, instead of locking (and looking at every writer) per write. */
static int log_test_lock(void *hv, int64_t off, int64_t len)
{
    tessi_log_file *h = hv;
    return h->lock_caps & TESSI_CAP_LOCKS ? PX->test_lock(h->lock, off, len) : -EOPNOTSUPP;
}

/* ------------------------------------------------------------------ delete, describe */

static int log_remove(const char *path, const tess_info *info)
{
    tessi_hint_val v[NHINTS];
    char *dir;
    if (tessi_hints_parse(log_hint_defs, NHINTS, info, "log", v))
        return -EINVAL;
    int rc = tessi_log_path(path, &dir);
    if (rc == 0)
        rc = tessi_log_remove(dir);
    free(dir);
    return rc;
}

static void log_describe(void *hv, char *buf, size_t cap)
{
    tessi_log_file *h = hv;
    char fs[64] = "?";
    if (h->lock)
        PX->describe(h->lock, fs, sizeof fs);
    pthread_rwlock_rdlock(&h->rw);
    snprintf(buf, cap, "log container of %d writers on %s", (int)h->known, fs);
    pthread_rwlock_unlock(&h->rw);
}

int tessi_log_snapshot(void *hv, const tessi_log_map **map, tessi_log_writer_info **out,
                       int32_t *nw)
{
    tessi_log_file *h = hv;
    pthread_rwlock_wrlock(&h->rw);
    int rc = tessi_log_refresh(h, true);
    tessi_log_writer_info *w = rc ? NULL : calloc((size_t)h->nw + 1, sizeof *w);
    rc = rc ? rc : w ? 0 : -ENOMEM;
    for (int32_t i = 0; rc == 0 && i < h->nw; i++) {
        tessi_log_writer *x = h->w[i];
        if (!x)
            continue;
        w[i] = (tessi_log_writer_info){.id = i, .header_ok = x->header_ok, .header = x->header,
                                       .entries = x->entries, .valid_bytes = x->consumed};
        rc = PX->get_size(x->index, &w[i].index_bytes);
        if (rc == 0 && x->data)
            rc = PX->get_size(x->data, &w[i].data_bytes);
    }
    pthread_rwlock_unlock(&h->rw);
    if (rc) {
        free(w);
        return rc;
    }
    *map = &h->map;
    *out = w;
    *nw = h->nw;
    return 0;
}

const struct tess_driver tess_log_driver = {
    .version = TESSI_DRIVER_VERSION,
    .name = "log",
    .hints = log_hint_defs,
    .nhints = NHINTS,
    .open = log_open,
    .close = log_close,
    .caps = log_caps,
    .pread = log_pread,
    .pwrite = log_pwrite,
    .preadv = log_preadv,
    .pwritev = log_pwritev,
    .lock = log_lock,
    .unlock = log_unlock,
    .test_lock = log_test_lock,
    .sync = log_sync,
    .get_size = log_get_size,
    .set_size = log_set_size,
    .preallocate = log_preallocate,
    .remove = log_remove,
    .describe = log_describe,
};
