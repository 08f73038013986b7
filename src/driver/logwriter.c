/*
 * logwriter.c - the writers of an open `log` handle (logfile.h): stamps, the writers of the
 * container found and their indexes merged into the handle's map when they grew, and a writer
 * per thread: a log nobody holds taken over, else a new one claimed.
 */
#include "driver/logfile.h"

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Index entries read per call while merging. */
#define CHUNK_ENTRIES 1024

/* ------------------------------------------------------------------ stamps */

static _Atomic int64_t log_clock;    /* the latest stamp this process gave or saw */

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
int tessi_log_child_open(const tessi_log_file *h, const char *name, int flags, void **ph)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", h->dir, name); /* the length was checked at open */
    return PX->open(path, flags, NULL, ph);
}

/* ------------------------------------------------------------------ writers */

/* Put w in slot id of the writers table (caller holds rw exclusively). */
static int set_slot(tessi_log_file *h, int32_t id, tessi_log_writer *w)
{
    if (id >= h->capw) {
        int32_t cap = h->capw ? h->capw : 16;
        while (cap <= id)
            cap = cap > INT32_MAX / 2 ? INT32_MAX : 2 * cap;
        tessi_log_writer **p = realloc(h->w, (size_t)cap * sizeof *p);
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

/* The size of the writers file (it only grows). */
static int writers_size(const tessi_log_file *h, int64_t *size)
{
    struct stat st;
    if (fstat(h->writers_fd, &st))
        return -errno;
    *size = (int64_t)st.st_size;
    return 0;
}

/* Find the writers created since the last look: numbers from `known` upward until one is
 * missing (numbers are dense). Caller holds rw exclusively. */
static int probe(tessi_log_file *h)
{
    int64_t wsize = 0;
    int rc = writers_size(h, &wsize); /* first: a writer made during the probe changes it */
    for (; rc == 0; h->known++) {
        int32_t id = h->known;
        if (id < h->nw && h->w[id])
            continue;
        char name[32];
        void *ix;
        snprintf(name, sizeof name, "index.%d", (int)id);
        if ((rc = tessi_log_child_open(h, name, TESS_RDONLY, &ix)) == -ENOENT) {
            h->writers_seen = wsize;
            return 0;
        }
        if (rc)
            break;
        tessi_log_writer *w = calloc(1, sizeof *w);
        if (!w || (rc = set_slot(h, id, w))) {
            PX->close(ix);
            free(w);
            return w ? rc : -ENOMEM;
        }
        w->id = id;
        w->hold = -1;
        w->index = ix;
    }
    return rc;
}

/* Tell readers a writer was added: its number appended to the writers file (O_APPEND: the
 * size only grows, whoever else appends at the same time). */
static int signal_writer(const tessi_log_file *h, int32_t id)
{
    unsigned char rec[4] = {(unsigned char)id, (unsigned char)(id >> 8),
                            (unsigned char)(id >> 16), (unsigned char)(id >> 24)};
    int fd = openat(h->dirfd, "writers", O_WRONLY | O_APPEND | O_CLOEXEC), rc = 0;
    if (fd < 0)
        return -errno;
    if (write(fd, rec, sizeof rec) != (ssize_t)sizeof rec)
        rc = -EIO;
    return close(fd) && rc == 0 ? -errno : rc;
}

/* ------------------------------------------------------------------ the merged index */

/* Is the data of another writer's entry e inside its data log (1), not (0), or an error? */
static int data_present(const tessi_log_file *h, tessi_log_writer *w, const tessi_log_entry *e)
{
    if (e->kind != TESSI_LOG_DATA || w->own || e->physical + e->length <= w->data_size)
        return 1;
    int rc = 0;
    if (!w->data) {
        char name[32];
        snprintf(name, sizeof name, "data.%d", (int)w->id);
        if ((rc = tessi_log_child_open(h, name, TESS_RDONLY, &w->data)) == -ENOENT)
            return 0;
    }
    if (rc == 0)
        rc = PX->get_size(w->data, &w->data_size);
    return rc < 0 ? rc : e->physical + e->length <= w->data_size;
}

/* Read w's header once it is there. */
static int read_header(tessi_log_writer *w, int64_t size)
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
static int take_entries(tessi_log_file *h, tessi_log_writer *w, unsigned char *buf)
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
int tessi_log_refresh(tessi_log_file *h, bool others)
{
    unsigned char *buf = malloc(CHUNK_ENTRIES * TESSI_LOG_ENTRY);
    int rc = !buf ? -ENOMEM : others ? probe(h) : 0;
    for (int32_t i = 0; rc == 0 && i < h->nw; i++) {
        tessi_log_writer *w = h->w[i];
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
static bool changed(tessi_log_file *h)
{
    bool others = !h->refresh_on_sync || atomic_load(&h->stale);
    for (int32_t i = 0; i < h->nw; i++)
        if (h->w[i] && h->w[i]->own && atomic_load(&h->w[i]->index_end) != h->w[i]->consumed)
            return true;
    int64_t wsize = 0;
    if (!others)
        return false;
    if (atomic_load(&h->stale) || writers_size(h, &wsize) || wsize != h->writers_seen)
        return true;
    for (int32_t i = 0; i < h->nw; i++) {
        tessi_log_writer *w = h->w[i];
        int64_t size;
        if (w && !w->own && !w->damaged &&
            (PX->get_size(w->index, &size) || size != w->seen_size))
            return true;
    }
    return false;
}

/* Take rw with the map up to date: returns 0 holding it (shared, or exclusive when it had to
 * bring the map up to date), or an error without it. */
int tessi_log_lock_fresh(tessi_log_file *h)
{
    pthread_rwlock_rdlock(&h->rw);
    if (!changed(h))
        return 0;
    pthread_rwlock_unlock(&h->rw);
    pthread_rwlock_wrlock(&h->rw);
    int rc = tessi_log_refresh(h, !h->refresh_on_sync || atomic_load(&h->stale));
    if (rc)
        pthread_rwlock_unlock(&h->rw);
    return rc;
}

/* Push this process's clock past the latest entry of every other writer (the last entry of
 * each index), so that what it writes next is later than everything written before: writes
 * ordered by sync-barrier-sync or by a lock stay ordered across nodes whatever their clocks.
 * Caller holds rw exclusively. */
int tessi_log_observe_tails(tessi_log_file *h)
{
    int rc = probe(h);
    for (int32_t i = 0; rc == 0 && i < h->nw; i++) {
        tessi_log_writer *w = h->w[i];
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

/* ------------------------------------------------------------------ a writer per thread */

/* Mark writer id's log in use: an exclusive open-file-description lock on the first byte of
 * its index through a descriptor of its own, kept while the writer lives (closing it, or the
 * process dying, frees the log for a later writer). wait: until it is free. Returns the
 * descriptor, -EAGAIN when it is held elsewhere, another negative errno when it cannot be had
 * (the storage has no such locks). */
static int hold_log(const tessi_log_file *h, int32_t id, bool wait)
{
    char name[32];
    struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 1};
    snprintf(name, sizeof name, "index.%d", (int)id);
    int fd = openat(h->dirfd, name, O_RDWR | O_CLOEXEC), rc;
    if (fd < 0)
        return -errno;
    while ((rc = fcntl(fd, wait ? F_OFD_SETLKW : F_OFD_SETLK, &fl)) < 0 && errno == EINTR)
        ;
    if (rc == 0)
        return fd;
    rc = errno == EACCES ? -EAGAIN : -errno;
    close(fd);
    return rc;
}

/* Name the calling thread as the owner in the header of index ix. */
static int write_header(void *ix, int32_t id, tessi_log_header *hd)
{
    unsigned char b[TESSI_LOG_HEADER];
    *hd = (tessi_log_header){.writer = id, .pid = (uint32_t)getpid(), .tid = gettid(),
                             .stamp = log_stamp()};
    gethostname(hd->host, TESSI_LOG_HOST);
    tessi_log_header_encode(hd, b);
    int64_t put = PX->pwrite(ix, b, TESSI_LOG_HEADER, 0);
    return put < 0 ? (int)put : 0;
}

/* Open writer id's index and data log for writing (the data log created if missing). */
static int open_for_writing(const tessi_log_file *h, int32_t id, int index_flags, void **ix,
                            void **data)
{
    char name[32];
    snprintf(name, sizeof name, "index.%d", (int)id);
    int rc = tessi_log_child_open(h, name, TESS_RDWR | index_flags, ix);
    snprintf(name, sizeof name, "data.%d", (int)id);
    if (rc == 0 && (rc = tessi_log_child_open(h, name, TESS_RDWR | TESS_CREATE, data)))
        PX->close(*ix);
    return rc;
}

/* w becomes the calling thread's: it appends at index_end and data_end. */
static void make_own(tessi_log_writer *w, void *ix, void *data, int hold, int64_t index_end,
                     int64_t data_end)
{
    w->own = w->header_ok = true;
    w->thread = pthread_self();
    w->pid = getpid();
    w->hold = hold;
    w->index = ix;
    w->data = data;
    w->data_end = data_end;
    atomic_store(&w->index_end, index_end);
}

/* Take over writer w's log, held (descriptor hold) and merged up to its first invalid entry:
 * what follows (a torn tail) is cut off and the new entries go after the valid ones. Caller
 * holds rw exclusively. */
static int take_over(tessi_log_file *h, tessi_log_writer *w, int hold)
{
    void *ix, *data;
    int64_t data_end;
    tessi_log_header hd;
    int rc = open_for_writing(h, w->id, 0, &ix, &data);
    if (rc)
        return rc;
    if ((rc = PX->set_size(ix, w->consumed)) || (rc = PX->get_size(data, &data_end)) ||
        (rc = write_header(ix, w->id, &hd))) {
        PX->close(ix);
        PX->close(data);
        return rc;
    }
    PX->close(w->index);
    if (w->data)
        PX->close(w->data);
    w->header = hd;
    make_own(w, ix, data, hold, w->consumed, data_end);
    return 0;
}

/* A log nobody holds (its writer closed it or died) for the calling thread, or *out NULL
 * when there is none or the storage cannot tell (no locks). Caller holds rw exclusively. */
static int writer_adopt(tessi_log_file *h, tessi_log_writer **out)
{
    unsigned char *buf = malloc(CHUNK_ENTRIES * TESSI_LOG_ENTRY);
    int rc = buf ? probe(h) : -ENOMEM;
    *out = NULL;
    for (int32_t id = 0; rc == 0 && !*out && id < h->nw; id++) {
        tessi_log_writer *w = h->w[id];
        int hold = w && !w->own && !w->damaged ? hold_log(h, id, false) : -EAGAIN;
        if (hold == -EAGAIN)
            continue;
        if (hold < 0) /* no locks here: every writer gets a new log */
            break;
        if ((rc = take_entries(h, w, buf)) == 0 && w->header_ok) /* a header: made whole */
            rc = take_over(h, w, hold);
        if (rc == 0 && w->own)
            *out = w;
        else
            close(hold);
    }
    free(buf);
    return rc ? rc : tessi_log_map_flush(&h->map);
}

/* A new writer for the calling thread: a log nobody holds, else a new one with the lowest free
 * number from `known` up, claimed by creating its index exclusively (a number once claimed
 * stays used, even if what follows fails: its index then has no entries). Caller holds rw
 * exclusively. */
static int writer_create(tessi_log_file *h, tessi_log_writer **out)
{
    void *ix = NULL, *data = NULL;
    int32_t id = h->known;
    int rc = writer_adopt(h, out);
    if (rc || *out)
        return rc;
    do {
        char name[32];
        snprintf(name, sizeof name, "index.%d", (int)id);
        rc = tessi_log_child_open(h, name, TESS_RDWR | TESS_CREATE | TESS_EXCL, &ix);
    } while (rc == -EEXIST && id++ < INT32_MAX - 1);
    if (rc)
        return rc;
    PX->close(ix);
    atomic_store(&h->dir_dirty, true);
    /* held before the header is written: who looks at a log without a header leaves it */
    int hold = hold_log(h, id, true);
    tessi_log_writer *w = calloc(1, sizeof *w);
    rc = w ? open_for_writing(h, id, 0, &ix, &data) : -ENOMEM;
    if (rc == 0 && ((rc = write_header(ix, id, &w->header)) || (rc = signal_writer(h, id)) ||
                    (rc = set_slot(h, id, w)))) {
        PX->close(ix);
        PX->close(data);
    }
    if (rc) {
        if (hold >= 0)
            close(hold);
        free(w);
        return rc;
    }
    w->id = id;
    w->consumed = TESSI_LOG_HEADER;
    make_own(w, ix, data, hold, TESSI_LOG_HEADER, 0);
    *out = w;
    return 0;
}

/* The writer of the calling thread on this handle (made at its first write). */
static _Thread_local struct {
    uint64_t serial;
    pid_t pid;
    tessi_log_writer *w;
} tls_writer;

int tessi_log_own_writer(tessi_log_file *h, tessi_log_writer **out)
{
    if (!h->wr)
        return -EBADF;
    pid_t pid = getpid(); /* a forked child is another writer */
    if (tls_writer.serial == h->serial && tls_writer.pid == pid) {
        *out = tls_writer.w;
        return 0;
    }
    pthread_t self = pthread_self();
    tessi_log_writer *w = NULL;
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
int tessi_log_append(tessi_log_writer *w, tessi_log_entry *e)
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

