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
 * processes, nodes) before every read by default (one fstat per writer and one probe for new
 * writers), or with tess_log_refresh = sync only after open, sync and a lock, which is MPI's
 * consistency rule (sync-barrier-sync) and suits containers of many writers.
 *
 * Capabilities: vectored calls (a write is one append, whatever the memory layout); locks,
 * shared and exclusive, when the container's lock file takes fcntl locks (then atomic mode and
 * sieving writes work: a sieving write reads its window and appends it whole under the lock,
 * and taking a lock makes the next read look at every writer). No batches, no direct I/O.
 * preallocate sets the size only: nothing can be reserved for bytes a log appends later.
 *
 * Its hints:
 *   tess_log_refresh   read | sync: when a reader looks for the other writers' new entries
 *                      (above)                                                     (read)
 */
#include "driver/driver.h"
#include "driver/log.h"

#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

extern const struct tess_driver tess_posix_driver;
#define PX (&tess_posix_driver)

/* Index entries read per call while merging. */
#define CHUNK_ENTRIES 1024
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

typedef struct log_writer {
    int32_t id;
    bool own;                  /* this handle writes it (thread, pid) */
    bool header_ok, damaged;   /* header read and valid; header invalid (no entries taken) */
    pthread_t thread;
    pid_t pid;
    void *index, *data;        /* posix handles; another writer's data is opened when needed */
    _Atomic int64_t index_end; /* own: bytes of the index written, whole entries */
    int64_t data_end;          /* own: bytes of the data log in use (its thread only) */
    int64_t consumed;          /* bytes of the index merged into the map */
    int64_t seen_size;         /* another's: the index size at the last look */
    int64_t data_size;         /* another's: the data log size at the last look */
    int64_t entries;           /* entries merged */
    tessi_log_header header;
} log_writer;

typedef struct log_file {
    char *dir;
    int dirfd;
    bool rd, wr;
    bool refresh_on_sync;      /* tess_log_refresh = sync */
    uint64_t serial;           /* unique per open handle (the writer cache's key) */
    void *lock;                /* posix handle of the lock file (NULL: none) */
    unsigned lock_caps;
    pthread_rwlock_t rw;       /* the writers table and the map */
    log_writer **w;            /* by writer number; NULL: not seen yet */
    int32_t nw, capw;
    int32_t known;             /* writers [0, known) are all in w */
    tessi_log_map map;
    atomic_bool stale;         /* look at the other writers before the next read */
    atomic_bool dir_dirty;     /* files were created since the last sync */
    atomic_bool parent_dirty;  /* the container was created since the last sync */
} log_file;

/* ------------------------------------------------------------------ stamps */

static _Atomic int64_t log_clock;    /* the latest stamp this process gave or saw */
static atomic_uint_least64_t log_serials;

/* A stamp later than every stamp this process gave or saw before. */
static int64_t log_stamp(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    int64_t now = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec, last = atomic_load(&log_clock);
    int64_t next = now > last ? now : last + 1;
    while (!atomic_compare_exchange_weak(&log_clock, &last, next))
        next = now > last ? now : last + 1;
    return next;
}

/* Another writer's stamp was read: later stamps of this process must exceed it. */
static void log_observe(int64_t stamp)
{
    int64_t last = atomic_load(&log_clock);
    while (last < stamp && !atomic_compare_exchange_weak(&log_clock, &last, stamp))
        ;
}

/* ------------------------------------------------------------------ files of the container */

/* Open the file `name` of the container with the posix driver. */
static int child_open(const log_file *h, const char *name, int flags, void **ph)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", h->dir, name); /* the length was checked at open */
    return PX->open(path, flags, NULL, ph);
}

/* ------------------------------------------------------------------ writers */

/* Put w in slot id of the writers table (caller holds rw exclusively). */
static int set_slot(log_file *h, int32_t id, log_writer *w)
{
    if (id >= h->capw) {
        int32_t cap = h->capw ? h->capw : 16;
        while (cap <= id)
            cap = cap > INT32_MAX / 2 ? INT32_MAX : 2 * cap;
        log_writer **p = realloc(h->w, (size_t)cap * sizeof *p);
        if (!p)
            return -ENOMEM;
        memset(p + h->capw, 0, (size_t)(cap - h->capw) * sizeof *p);
        h->w = p;
        h->capw = cap;
    }
    h->w[id] = w;
    h->nw = id >= h->nw ? id + 1 : h->nw;
    return 0;
}

/* Find the writers created since the last look: numbers from `known` upward until one is
 * missing (numbers are dense). Caller holds rw exclusively. */
static int probe(log_file *h)
{
    for (;; h->known++) {
        int32_t id = h->known;
        if (id < h->nw && h->w[id])
            continue;
        char name[32];
        void *ix;
        snprintf(name, sizeof name, "index.%d", (int)id);
        int rc = child_open(h, name, TESS_RDONLY, &ix);
        if (rc)
            return rc == -ENOENT ? 0 : rc;
        log_writer *w = calloc(1, sizeof *w);
        if (!w || (rc = set_slot(h, id, w))) {
            PX->close(ix);
            free(w);
            return w ? rc : -ENOMEM;
        }
        w->id = id;
        w->index = ix;
    }
}

/* A new writer for the calling thread: claim the lowest free number from `known` up by
 * creating its index exclusively (a number once claimed stays used, even if what follows
 * fails: its index then has no entries). Caller holds rw exclusively. */
static int writer_create(log_file *h, log_writer **out)
{
    char name[32];
    void *ix = NULL, *data = NULL;
    int32_t id = h->known;
    int rc;
    do {
        snprintf(name, sizeof name, "index.%d", (int)id);
        rc = child_open(h, name, TESS_RDWR | TESS_CREATE | TESS_EXCL, &ix);
    } while (rc == -EEXIST && id++ < INT32_MAX - 1);
    if (rc)
        return rc;
    atomic_store(&h->dir_dirty, true);
    log_writer *w = calloc(1, sizeof *w);
    unsigned char b[TESSI_LOG_HEADER];
    tessi_log_header hd = {.writer = id, .pid = (uint32_t)getpid(), .tid = gettid(),
                           .stamp = log_stamp()};
    gethostname(hd.host, TESSI_LOG_HOST);
    tessi_log_header_encode(&hd, b);
    snprintf(name, sizeof name, "data.%d", (int)id);
    rc = w ? child_open(h, name, TESS_RDWR | TESS_CREATE, &data) : -ENOMEM;
    int64_t put = rc ? 0 : PX->pwrite(ix, b, TESSI_LOG_HEADER, 0);
    rc = rc ? rc : put < 0 ? (int)put : set_slot(h, id, w);
    if (rc) {
        PX->close(ix);
        if (data)
            PX->close(data);
        free(w);
        return rc;
    }
    w->id = id;
    w->own = w->header_ok = true;
    w->thread = pthread_self();
    w->pid = getpid();
    w->index = ix;
    w->data = data;
    w->header = hd;
    w->consumed = TESSI_LOG_HEADER;
    atomic_store(&w->index_end, TESSI_LOG_HEADER);
    *out = w;
    return 0;
}

/* The writer of the calling thread on this handle (made at its first write). */
static _Thread_local struct {
    uint64_t serial;
    pid_t pid;
    log_writer *w;
} tls_writer;

static int own_writer(log_file *h, log_writer **out)
{
    if (!h->wr)
        return -EBADF;
    pid_t pid = getpid(); /* a forked child is another writer */
    if (tls_writer.serial == h->serial && tls_writer.pid == pid) {
        *out = tls_writer.w;
        return 0;
    }
    pthread_t self = pthread_self();
    log_writer *w = NULL;
    int rc = 0;
    pthread_rwlock_wrlock(&h->rw);
    for (int32_t i = 0; i < h->nw && !w; i++)
        if (h->w[i] && h->w[i]->own && h->w[i]->pid == pid && pthread_equal(h->w[i]->thread, self))
            w = h->w[i];
    if (!w)
        rc = writer_create(h, &w);
    pthread_rwlock_unlock(&h->rw);
    if (rc)
        return rc;
    tls_writer.serial = h->serial;
    tls_writer.pid = pid;
    tls_writer.w = w;
    *out = w;
    return 0;
}

/* Append entry e (stamped now) to w's index, after its data. A failed append is cut off again,
 * so the next entry goes where it should have been. */
static int append_entry(log_writer *w, tessi_log_entry *e)
{
    unsigned char b[TESSI_LOG_ENTRY];
    e->stamp = log_stamp();
    tessi_log_entry_encode(e, b);
    int64_t at = atomic_load(&w->index_end), put = PX->pwrite(w->index, b, TESSI_LOG_ENTRY, at);
    if (put < 0) {
        PX->set_size(w->index, at);
        return (int)put;
    }
    atomic_store(&w->index_end, at + TESSI_LOG_ENTRY);
    return 0;
}

/* ------------------------------------------------------------------ the merged index */

/* Is the data of another writer's entry e inside its data log (1), not (0), or an error? */
static int data_present(const log_file *h, log_writer *w, const tessi_log_entry *e)
{
    if (e->kind != TESSI_LOG_DATA || w->own || e->physical + e->length <= w->data_size)
        return 1;
    int rc = 0;
    if (!w->data) {
        char name[32];
        snprintf(name, sizeof name, "data.%d", (int)w->id);
        if ((rc = child_open(h, name, TESS_RDONLY, &w->data)) == -ENOENT)
            return 0;
    }
    if (rc == 0)
        rc = PX->get_size(w->data, &w->data_size);
    return rc < 0 ? rc : e->physical + e->length <= w->data_size;
}

/* Read w's header once it is there. */
static int read_header(log_writer *w, int64_t size)
{
    unsigned char b[TESSI_LOG_HEADER];
    if (size < TESSI_LOG_HEADER)
        return 0;
    int64_t got = PX->pread(w->index, b, TESSI_LOG_HEADER, 0);
    if (got != TESSI_LOG_HEADER)
        return got < 0 ? (int)got : -EIO;
    w->header_ok = tessi_log_header_decode(b, w->id, &w->header);
    w->damaged = !w->header_ok;
    w->consumed = TESSI_LOG_HEADER;
    return 0;
}

/* Merge the entries w appended since the last look; stop at the first invalid or partial one
 * (a torn tail, or an entry still being written). Caller holds rw exclusively. */
static int take_entries(log_file *h, log_writer *w, unsigned char *buf)
{
    int64_t size;
    int rc = 0;
    if (w->own)
        size = atomic_load(&w->index_end);
    else if ((rc = PX->get_size(w->index, &size)))
        return rc;
    w->seen_size = size;
    if (!w->header_ok && (rc = read_header(w, size)))
        return rc;
    while (w->header_ok && size - w->consumed >= TESSI_LOG_ENTRY) {
        int64_t n = tessi_min64((size - w->consumed) / TESSI_LOG_ENTRY, CHUNK_ENTRIES);
        int64_t got = PX->pread(w->index, buf, n * TESSI_LOG_ENTRY, w->consumed);
        if (got < 0)
            return (int)got;
        n = got / TESSI_LOG_ENTRY;
        for (int64_t k = 0; k < n; k++) {
            tessi_log_entry e;
            if (!tessi_log_entry_decode(buf + k * TESSI_LOG_ENTRY, w->id, &e) ||
                (rc = data_present(h, w, &e)) <= 0)
                return rc;
            if ((rc = tessi_log_map_add(&h->map, &e)))
                return rc;
            log_observe(e.stamp);
            w->consumed += TESSI_LOG_ENTRY;
            w->entries++;
        }
        if (n == 0)
            break;
    }
    return 0;
}

/* Bring the map up to date: this handle's writers, and the others too when `others`. Caller
 * holds rw exclusively. */
static int refresh(log_file *h, bool others)
{
    unsigned char *buf = malloc(CHUNK_ENTRIES * TESSI_LOG_ENTRY);
    int rc = !buf ? -ENOMEM : others ? probe(h) : 0;
    for (int32_t i = 0; rc == 0 && i < h->nw; i++) {
        log_writer *w = h->w[i];
        if (w && !w->damaged && (w->own || others))
            rc = take_entries(h, w, buf);
    }
    free(buf);
    if (rc == 0)
        rc = tessi_log_map_flush(&h->map);
    if (rc == 0 && others)
        atomic_store(&h->stale, false);
    return rc;
}

/* Is the map behind the logs? Caller holds rw (shared). */
static bool changed(log_file *h)
{
    bool others = !h->refresh_on_sync || atomic_load(&h->stale);
    for (int32_t i = 0; i < h->nw; i++)
        if (h->w[i] && h->w[i]->own && atomic_load(&h->w[i]->index_end) != h->w[i]->consumed)
            return true;
    if (!others)
        return false;
    char name[32];
    struct stat st;
    snprintf(name, sizeof name, "index.%d", (int)h->known);
    if (atomic_load(&h->stale) || (h->known < h->nw && h->w[h->known]) ||
        fstatat(h->dirfd, name, &st, 0) == 0)
        return true;
    for (int32_t i = 0; i < h->nw; i++) {
        log_writer *w = h->w[i];
        int64_t size;
        if (w && !w->own && !w->damaged &&
            (PX->get_size(w->index, &size) || size != w->seen_size))
            return true;
    }
    return false;
}

/* Take rw with the map up to date: returns 0 holding it (shared, or exclusive when it had to
 * bring the map up to date), or an error without it. */
static int lock_fresh(log_file *h)
{
    pthread_rwlock_rdlock(&h->rw);
    if (!changed(h))
        return 0;
    pthread_rwlock_unlock(&h->rw);
    pthread_rwlock_wrlock(&h->rw);
    int rc = refresh(h, !h->refresh_on_sync || atomic_load(&h->stale));
    if (rc)
        pthread_rwlock_unlock(&h->rw);
    return rc;
}

/* Push this process's clock past the latest entry of every other writer (the last entry of
 * each index), so that what it writes next is later than everything written before: writes
 * ordered by sync-barrier-sync or by a lock stay ordered across nodes whatever their clocks.
 * Caller holds rw exclusively. */
static int observe_tails(log_file *h)
{
    int rc = probe(h);
    for (int32_t i = 0; rc == 0 && i < h->nw; i++) {
        log_writer *w = h->w[i];
        unsigned char b[TESSI_LOG_ENTRY];
        tessi_log_entry e;
        int64_t size;
        if (!w || w->own || (rc = PX->get_size(w->index, &size)) ||
            size < TESSI_LOG_HEADER + TESSI_LOG_ENTRY)
            continue;
        int64_t last = size - (size - TESSI_LOG_HEADER) % TESSI_LOG_ENTRY - TESSI_LOG_ENTRY;
        if (PX->pread(w->index, b, TESSI_LOG_ENTRY, last) == TESSI_LOG_ENTRY &&
            tessi_log_entry_decode(b, w->id, &e))
            log_observe(e.stamp);
    }
    return rc;
}

/* ------------------------------------------------------------------ open, close */

static int log_close(void *hv)
{
    log_file *h = hv;
    int rc = 0, err;
    for (int32_t i = 0; i < h->nw; i++) {
        log_writer *w = h->w[i];
        if (w && (err = PX->close(w->index)) && rc == 0)
            rc = err;
        if (w && w->data && (err = PX->close(w->data)) && rc == 0)
            rc = err;
        free(w);
    }
    if (h->lock && (err = PX->close(h->lock)) && rc == 0)
        rc = err;
    if (h->dirfd >= 0 && close(h->dirfd) && rc == 0)
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
    log_file *h = rc ? NULL : calloc(1, sizeof *h);
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
    h->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    rc = h->dirfd < 0 ? -errno : tessi_log_check(h->dirfd);
    if (rc == 0) {
        int lrc = child_open(h, "lock", h->wr ? TESS_RDWR : TESS_RDONLY, &h->lock);
        h->lock_caps = lrc ? 0 : PX->caps(h->lock);
        h->lock = lrc ? NULL : h->lock;
        rc = lrc == -ENOENT ? 0 : lrc; /* no lock file: a container without locks */
    }
    if (rc == 0)
        rc = observe_tails(h);
    if (rc) {
        log_close(h);
        return rc;
    }
    *out = h;
    return 0;
}

static unsigned log_caps(void *hv)
{
    log_file *h = hv;
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
static int read_extents(log_file *h, int64_t off, int64_t len, iov_cursor *c, struct iovec *part)
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
    log_file *h = hv;
    struct iovec small[SMALL_IOV], *part = small;
    if (!h->rd)
        return -EBADF;
    if (off < 0)
        return -EINVAL;
    if (niov > SMALL_IOV && !(part = malloc((size_t)niov * sizeof *part)))
        return -ENOMEM;
    int rc = lock_fresh(h);
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
    log_file *h = hv;
    log_writer *w;
    int64_t len = tessi_iov_len(iov, niov), end;
    if (!h->wr)
        return -EBADF;
    if (off < 0 || !tessi_add(off, len, &end))
        return -EFBIG;
    int rc = len ? own_writer(h, &w) : 0;
    if (rc || len == 0)
        return rc;
    int64_t put = PX->pwritev(w->data, iov, niov, w->data_end);
    if (put < 0) /* what it put is unreferenced: the next write goes over it */
        return put;
    tessi_log_entry e = {.kind = TESSI_LOG_DATA, .writer = w->id, .logical = off,
                         .physical = w->data_end, .length = len};
    if ((rc = append_entry(w, &e)))
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
    log_file *h = hv;
    int rc = lock_fresh(h);
    if (rc == 0) {
        *size = h->map.size;
        pthread_rwlock_unlock(&h->rw);
    }
    return rc;
}

/* A set_size (TESSI_LOG_TRUNCATE) or preallocate (TESSI_LOG_EXTEND) entry. */
static int size_entry(log_file *h, int kind, int64_t size)
{
    log_writer *w;
    int rc = size < 0 ? -EINVAL : own_writer(h, &w);
    if (rc)
        return rc;
    tessi_log_entry e = {.kind = kind, .writer = w->id, .logical = size};
    return append_entry(w, &e);
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
    log_file *h = hv;
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
        rc = observe_tails(h);
    atomic_store(&h->stale, true);
    pthread_rwlock_unlock(&h->rw);
    return rc;
}

static int log_lock(void *hv, int64_t off, int64_t len, bool exclusive)
{
    log_file *h = hv;
    if (!(h->lock_caps & TESSI_CAP_LOCKS))
        return -ENOLCK;
    int rc = PX->lock(h->lock, off, len, exclusive);
    if (rc)
        return rc;
    /* what others wrote under their locks is read next, and what this writes is later */
    pthread_rwlock_wrlock(&h->rw);
    rc = observe_tails(h);
    atomic_store(&h->stale, true);
    pthread_rwlock_unlock(&h->rw);
    if (rc)
        PX->unlock(h->lock, off, len);
    return rc;
}

static int log_unlock(void *hv, int64_t off, int64_t len)
{
    log_file *h = hv;
    return h->lock_caps & TESSI_CAP_LOCKS ? PX->unlock(h->lock, off, len) : -ENOLCK;
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
    log_file *h = hv;
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
    log_file *h = hv;
    pthread_rwlock_wrlock(&h->rw);
    int rc = refresh(h, true);
    tessi_log_writer_info *w = rc ? NULL : calloc((size_t)h->nw + 1, sizeof *w);
    rc = rc ? rc : w ? 0 : -ENOMEM;
    for (int32_t i = 0; rc == 0 && i < h->nw; i++) {
        log_writer *x = h->w[i];
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
    .sync = log_sync,
    .get_size = log_get_size,
    .set_size = log_set_size,
    .preallocate = log_preallocate,
    .remove = log_remove,
    .describe = log_describe,
};
