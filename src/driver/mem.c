/*
 * mem.c - the in-memory storage driver (hint tess_driver = mem, or a path "mem:<name>"): files
 * are named byte arrays in this process, shared by every handle that opens the same name,
 * kept until deleted (tess_file_delete) and their last handle closed. No locks (the storage
 * has none: sieving writes fall back, atomic mode is refused), no batches, no cache.
 *
 * This is the template for a new driver: a handle type, the table filled by field name with
 * every entry the storage supports (the optional ones left out), capabilities after open, and
 * its hints declared (none here). tests/driver/test_drivers.c runs it with the others.
 */
#include "driver/driver.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct mem_obj {
    char *name;
    char *data;
    int64_t size, cap;
    int64_t opens;        /* handles open on it */
    bool removed;         /* deleted: freed at the last close */
    pthread_mutex_t mu;   /* data, size, cap */
    struct mem_obj *next;
} mem_obj;

typedef struct mem_file {
    mem_obj *o;
    bool rd, wr;
} mem_file;

static pthread_mutex_t registry_mu = PTHREAD_MUTEX_INITIALIZER;
static mem_obj *objs; /* the named objects (removed ones are not in the list) */

static mem_obj *find(const char *name)
{
    for (mem_obj *o = objs; o; o = o->next)
        if (strcmp(o->name, name) == 0)
            return o;
    return NULL;
}

static void unlist(mem_obj *o)
{
    for (mem_obj **at = &objs; *at; at = &(*at)->next)
        if (*at == o) {
            *at = o->next;
            return;
        }
}

static void obj_free(mem_obj *o)
{
    pthread_mutex_destroy(&o->mu);
    free(o->name);
    free(o->data);
    free(o);
}

static int mem_open(const char *path, int flags, const tess_info *info, void **h)
{
    (void)info;
    if (flags & TESSI_OPEN_DIRECT) /* no cache to bypass */
        return -EINVAL;
    mem_file *m = calloc(1, sizeof *m);
    if (!m)
        return -ENOMEM;
    m->rd = !(flags & TESS_WRONLY);
    m->wr = !(flags & TESS_RDONLY);
    int rc = 0;
    pthread_mutex_lock(&registry_mu);
    mem_obj *o = find(path);
    if (o && (flags & TESS_CREATE) && (flags & TESS_EXCL)) {
        rc = -EEXIST;
    } else if (!o && !(flags & TESS_CREATE)) {
        rc = -ENOENT;
    } else if (!o) {
        if (!(o = calloc(1, sizeof *o)) || !(o->name = strdup(path))) {
            free(o);
            rc = -ENOMEM;
        } else {
            pthread_mutex_init(&o->mu, NULL);
            o->next = objs;
            objs = o;
        }
    }
    if (rc == 0)
        o->opens++;
    pthread_mutex_unlock(&registry_mu);
    if (rc) {
        free(m);
        return rc;
    }
    m->o = o;
    *h = m;
    return 0;
}

static int mem_close(void *h)
{
    mem_file *m = h;
    pthread_mutex_lock(&registry_mu);
    bool last = --m->o->opens == 0 && m->o->removed;
    pthread_mutex_unlock(&registry_mu);
    if (last)
        obj_free(m->o);
    free(m);
    return 0;
}

static unsigned mem_caps(void *h)
{
    (void)h;
    return TESSI_CAP_VECTORED | TESSI_CAP_MEMORY;
}

/* Make the object at least `end` bytes long (new bytes zero). Caller holds o->mu. */
static int grow(mem_obj *o, int64_t end)
{
    if (end <= o->size)
        return 0;
    if (end > o->cap) {
        int64_t cap = o->cap ? o->cap : 4096;
        while (cap < end)
            cap = cap > INT64_MAX / 2 ? end : 2 * cap;
        char *d = (uint64_t)cap <= SIZE_MAX ? realloc(o->data, (size_t)cap) : NULL;
        if (!d)
            return -ENOSPC; /* the memory is the storage: out of it is out of space */
        o->data = d;
        o->cap = cap;
    }
    memset(o->data + o->size, 0, (size_t)(end - o->size));
    o->size = end;
    return 0;
}

/* Move an iovec list to (wr) or from the object at off. */
static int64_t mem_rwv(mem_file *m, bool wr, const struct iovec *iov, int64_t niov, int64_t off)
{
    mem_obj *o = m->o;
    int64_t len = tessi_iov_len(iov, niov), done = 0, end;
    if (wr ? !m->wr : !m->rd)
        return -EBADF;
    if (off < 0 || !tessi_add(off, len, &end))
        return -EFBIG;
    pthread_mutex_lock(&o->mu);
    int rc = wr ? grow(o, end) : 0;
    for (int64_t i = 0; rc == 0 && i < niov; i++) {
        int64_t n = (int64_t)iov[i].iov_len, at = off + done;
        if (!wr)
            n = at >= o->size ? 0 : tessi_min64(n, o->size - at);
        if (n > 0 && wr)
            memcpy(o->data + at, iov[i].iov_base, (size_t)n);
        else if (n > 0)
            memcpy(iov[i].iov_base, o->data + at, (size_t)n);
        done += n;
        if (n < (int64_t)iov[i].iov_len) /* end of the object */
            break;
    }
    pthread_mutex_unlock(&o->mu);
    return rc ? rc : done;
}

static int64_t mem_pread(void *h, void *buf, int64_t len, int64_t off)
{
    struct iovec v = {.iov_base = buf, .iov_len = (size_t)len};
    return mem_rwv(h, false, &v, 1, off);
}

static int64_t mem_pwrite(void *h, const void *buf, int64_t len, int64_t off)
{
    struct iovec v = {.iov_base = (void *)buf, .iov_len = (size_t)len};
    return mem_rwv(h, true, &v, 1, off);
}

static int64_t mem_preadv(void *h, const struct iovec *iov, int64_t niov, int64_t off)
{
    return mem_rwv(h, false, iov, niov, off);
}

static int64_t mem_pwritev(void *h, const struct iovec *iov, int64_t niov, int64_t off)
{
    return mem_rwv(h, true, iov, niov, off);
}

static int mem_sync(void *h)
{
    (void)h;
    return 0;
}

static int mem_get_size(void *h, int64_t *size)
{
    mem_obj *o = ((mem_file *)h)->o;
    pthread_mutex_lock(&o->mu);
    *size = o->size;
    pthread_mutex_unlock(&o->mu);
    return 0;
}

/* Set the size (truncate or extend with zeros); preallocate only ever extends. */
static int resize(mem_file *m, int64_t size, bool shrink)
{
    mem_obj *o = m->o;
    if (!m->wr)
        return -EBADF;
    pthread_mutex_lock(&o->mu);
    int rc = grow(o, size);
    if (shrink && size < o->size)
        o->size = size;
    pthread_mutex_unlock(&o->mu);
    return rc;
}

static int mem_set_size(void *h, int64_t size) { return resize(h, size, true); }

static int mem_preallocate(void *h, int64_t size) { return resize(h, size, false); }

static int mem_remove(const char *path, const tess_info *info)
{
    (void)info;
    pthread_mutex_lock(&registry_mu);
    mem_obj *o = find(path);
    bool now = o && o->opens == 0;
    if (o) {
        unlist(o);
        o->removed = true;
    }
    pthread_mutex_unlock(&registry_mu);
    if (now)
        obj_free(o);
    return o ? 0 : -ENOENT;
}

static void mem_describe(void *h, char *buf, size_t cap)
{
    (void)h;
    snprintf(buf, cap, "process memory");
}

const struct tess_driver tess_mem_driver = {
    .version = TESSI_DRIVER_VERSION,
    .name = "mem",
    .open = mem_open,
    .close = mem_close,
    .caps = mem_caps,
    .pread = mem_pread,
    .pwrite = mem_pwrite,
    .preadv = mem_preadv,
    .pwritev = mem_pwritev,
    .sync = mem_sync,
    .get_size = mem_get_size,
    .set_size = mem_set_size,
    .preallocate = mem_preallocate,
    .remove = mem_remove,
    .describe = mem_describe,
};
