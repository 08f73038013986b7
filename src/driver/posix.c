/*
 * posix.c - the POSIX storage driver: a file descriptor, pread/pwrite(v) loops that finish
 * short counts and retry EINTR, fcntl byte-range locks, shared and exclusive (open-file-
 * description locks where the kernel has them, so two handles of one process exclude each
 * other; classic process locks otherwise), fsync, fstat, ftruncate, fallocate, unlink, page
 * cache eviction (fsync + POSIX_FADV_DONTNEED, verified with mincore), and, when built with
 * liburing, request batches as one io_uring submission.
 *
 * Its hints:
 *   tess_posix_uring   enable | disable: request batches go to io_uring (builds with liburing
 *                      only; elsewhere the hint is checked and has no effect). io_uring pays
 *                      where each call waits for a device or a network; on data in the page
 *                      cache plain vectored calls can be faster.               (enable)
 *   tess_posix_direct  enable | disable: open with O_DIRECT, bypassing the page cache; every
 *                      access must then be aligned to the device's block (buffer address,
 *                      offset and length; 4 KiB is safe) or fails with EINVAL.  (disable)
 * TESSI_OPEN_DIRECT opens with O_DIRECT as well (calibration's uncached variant).
 */
#include "driver/driver.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#ifdef TESS_HAVE_LIBURING
#include <liburing.h>
#endif

/* Ring entries; larger batches are submitted in slices of this size. */
#define POSIX_RING_ENTRIES 128
#define FS_TMPFS 0x01021994
#define FS_RAMFS 0x858458f6

enum { H_URING, H_DIRECT, NHINTS };

static const tessi_hint_def posix_hint_defs[NHINTS] = {
    [H_URING] = {.key = "tess_posix_uring", .kind = TESSI_HINT_CHOICE,
                 .scope = TESSI_SCOPE_DRIVER, .choices = tessi_hint_onoff, .def = 1,
                 .doc = "list-I/O batches as one io_uring submission (builds with liburing)"},
    [H_DIRECT] = {.key = "tess_posix_direct", .kind = TESSI_HINT_CHOICE,
                  .scope = TESSI_SCOPE_DRIVER, .choices = tessi_hint_onoff, .def = 0,
                  .doc = "O_DIRECT: bypass the page cache (every access aligned)"},
};

typedef struct posix_file {
    int fd;
    bool uring;         /* hint tess_posix_uring */
    bool direct;        /* opened with O_DIRECT (TESSI_OPEN_DIRECT) */
    bool locks;         /* the file system answered a lock query */
    bool memory;        /* tmpfs or ramfs: no device behind the pages */
    bool classic_locks; /* the kernel refused F_OFD_SETLKW: use F_SETLKW */
#ifdef TESS_HAVE_LIBURING
    pthread_mutex_t ring_mutex; /* one batch at a time on the shared ring */
    int ring_state;             /* 0 not yet set up, 1 ready, -1 unavailable */
    struct io_uring ring;
#endif
} posix_file;

/* The hints (validated by the core before open: a bad value here is -EINVAL). */
static int posix_hints(const tess_info *info, bool *uring, bool *direct)
{
    tessi_hint_val v[NHINTS];
    if (tessi_hints_parse(posix_hint_defs, NHINTS, info, "posix", v))
        return -EINVAL;
    *uring = v[H_URING].i;
    *direct = *direct || v[H_DIRECT].i;
    return 0;
}

/* Can this file be locked? F_OFD_GETLK (or F_GETLK) asks without taking or waiting. */
static bool lock_query(int fd)
{
    struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 1};
    if (fcntl(fd, F_OFD_GETLK, &fl) == 0)
        return true;
    fl = (struct flock){.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 1};
    return errno == EINVAL && fcntl(fd, F_GETLK, &fl) == 0;
}

static int posix_open(const char *path, int flags, const tess_info *info, void **h)
{
    bool uring, direct = flags & TESSI_OPEN_DIRECT;
    int oflags = O_CLOEXEC;
    struct statfs sfs;
    if (posix_hints(info, &uring, &direct))
        return -EINVAL;
    oflags |= (flags & TESS_RDWR) ? O_RDWR : (flags & TESS_WRONLY) ? O_WRONLY : O_RDONLY;
    oflags |= (flags & TESS_CREATE) ? O_CREAT : 0;
    oflags |= (flags & TESS_EXCL) ? O_EXCL : 0;
    oflags |= direct ? O_DIRECT : 0;
    posix_file *p = calloc(1, sizeof *p);
    if (!p)
        return -ENOMEM;
    do
        p->fd = open(path, oflags, 0666);
    while (p->fd < 0 && errno == EINTR);
    if (p->fd < 0) {
        int err = errno;
        free(p);
        return -err;
    }
    p->uring = uring;
    p->direct = direct;
    p->locks = lock_query(p->fd);
    p->memory = fstatfs(p->fd, &sfs) == 0 && (sfs.f_type == FS_TMPFS || sfs.f_type == FS_RAMFS);
#ifdef TESS_HAVE_LIBURING
    pthread_mutex_init(&p->ring_mutex, NULL);
    p->ring_state = uring ? 0 : -1;
#endif
    *h = p;
    return 0;
}

static unsigned posix_caps(void *h)
{
    posix_file *p = h;
    unsigned caps = TESSI_CAP_VECTORED;
    caps |= p->locks ? TESSI_CAP_LOCKS | TESSI_CAP_SHARED_LOCKS : 0;
    caps |= p->direct ? TESSI_CAP_DIRECT : 0;
    caps |= p->memory ? TESSI_CAP_MEMORY : 0;
#ifdef TESS_HAVE_LIBURING
    caps |= p->uring ? TESSI_CAP_BATCHED : 0;
#endif
    return caps;
}

static int posix_close(void *h)
{
    posix_file *p = h;
#ifdef TESS_HAVE_LIBURING
    if (p->ring_state == 1)
        io_uring_queue_exit(&p->ring);
    pthread_mutex_destroy(&p->ring_mutex);
#endif
    /* close is never retried on EINTR: on Linux the descriptor is released anyway */
    int rc = close(p->fd) ? -errno : 0;
    free(p);
    return rc;
}

/*
 * Move the iovec list to/from the file at off, starting `skip` bytes into the list. Loops over
 * short counts, EINTR and TESSI_IOV_MAX. Returns the bytes moved (including skip): fewer than
 * the list only at end of file for reads; a write that makes no progress fails with EIO.
 */
static int64_t posix_rwv(int fd, bool wr, const struct iovec *iov, int64_t niov, int64_t off,
                         int64_t skip)
{
    int64_t done = skip, i = 0;
    size_t in = (size_t)skip; /* bytes of iov[i] already moved */
    while (i < niov && in >= iov[i].iov_len)
        in -= iov[i++].iov_len;
    while (i < niov) {
        ssize_t n;
        if (in > 0 || i == niov - 1) { /* one element, or the rest of one: a plain call
                                         * (the kernel then copies no iovec array in) */
            char *b = (char *)iov[i].iov_base + in;
            size_t len = iov[i].iov_len - in;
            n = wr ? pwrite(fd, b, len, off + done) : pread(fd, b, len, off + done);
        } else {
            int cnt = (int)(niov - i < TESSI_IOV_MAX ? niov - i : TESSI_IOV_MAX);
            n = wr ? pwritev(fd, iov + i, cnt, off + done) : preadv(fd, iov + i, cnt, off + done);
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -errno;
        if (n == 0) /* iov[i] has bytes left (empty elements are skipped) */
            return wr ? -EIO : done;
        done += n;
        in += (size_t)n;
        while (i < niov && in >= iov[i].iov_len)
            in -= iov[i++].iov_len;
    }
    return done;
}

/* One call of len bytes at off: plain pread/pwrite until every byte moved (the common case of
 * many small calls makes one), at end of file a short read, a write without progress EIO. */
static int64_t posix_rw1(void *h, bool wr, void *buf, int64_t len, int64_t off)
{
    int fd = ((posix_file *)h)->fd;
    int64_t done = 0;
    while (done < len) {
        char *b = (char *)buf + done;
        ssize_t n = wr ? pwrite(fd, b, (size_t)(len - done), off + done)
                       : pread(fd, b, (size_t)(len - done), off + done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -errno;
        if (n == 0)
            return wr ? -EIO : done;
        done += n;
    }
    return done;
}

static int64_t posix_pread(void *h, void *buf, int64_t len, int64_t off)
{
    return posix_rw1(h, false, buf, len, off);
}

static int64_t posix_pwrite(void *h, const void *buf, int64_t len, int64_t off)
{
    return posix_rw1(h, true, (void *)buf, len, off);
}

static int64_t posix_preadv(void *h, const struct iovec *iov, int64_t niov, int64_t off)
{
    return posix_rwv(((posix_file *)h)->fd, false, iov, niov, off, 0);
}

static int64_t posix_pwritev(void *h, const struct iovec *iov, int64_t niov, int64_t off)
{
    return posix_rwv(((posix_file *)h)->fd, true, iov, niov, off, 0);
}

/* Set (F_WRLCK, F_RDLCK) or clear (F_UNLCK) a lock on [off, off + len), waiting for it. */
static int posix_lock_op(posix_file *p, short type, int64_t off, int64_t len)
{
    struct flock fl = {.l_type = type, .l_whence = SEEK_SET, .l_start = off, .l_len = len};
    for (;;) {
        int rc = fcntl(p->fd, p->classic_locks ? F_SETLKW : F_OFD_SETLKW, &fl);
        if (rc == 0)
            return 0;
        if (errno == EINTR)
            continue;
        if (errno == EINVAL && !p->classic_locks) { /* kernel without OFD locks */
            p->classic_locks = true;
            continue;
        }
        return errno == ENOSYS ? -EOPNOTSUPP : -errno;
    }
}

static int posix_lock(void *h, int64_t off, int64_t len, bool exclusive)
{
    return posix_lock_op(h, exclusive ? F_WRLCK : F_RDLCK, off, len);
}

static int posix_unlock(void *h, int64_t off, int64_t len)
{
    return posix_lock_op(h, F_UNLCK, off, len);
}

/* Open-file-description locks only (a classic process lock would be shared by every handle of
 * the process, and the write gate needs one owner per handle). */
static int posix_test_lock(void *h, int64_t off, int64_t len)
{
    posix_file *p = h;
    struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = off, .l_len = len};
    if (p->classic_locks)
        return -EOPNOTSUPP;
    if (fcntl(p->fd, F_OFD_GETLK, &fl) == 0)
        return fl.l_type != F_UNLCK;
    return errno == EINVAL || errno == ENOSYS ? -EOPNOTSUPP : -errno;
}

static int posix_sync(void *h)
{
    int rc;
    while ((rc = fsync(((posix_file *)h)->fd)) < 0 && errno == EINTR)
        ;
    return rc ? -errno : 0;
}

static int posix_get_size(void *h, int64_t *size)
{
    struct stat st;
    if (fstat(((posix_file *)h)->fd, &st))
        return -errno;
    *size = (int64_t)st.st_size;
    return 0;
}

static int posix_set_size(void *h, int64_t size)
{
    int rc;
    while ((rc = ftruncate(((posix_file *)h)->fd, (off_t)size)) < 0 && errno == EINTR)
        ;
    return rc ? -errno : 0;
}

/*
 * fallocate(2) with mode 0 is posix_fallocate's system call: it allocates [0, size) and grows
 * the file, never shrinking it. It is called directly because glibc's posix_fallocate, where
 * the file system refuses, emulates by rewriting one byte per block inside the file, which can
 * undo a concurrent writer's byte; the caller's fallback (tessi_drv_preallocate) writes only
 * beyond the end of file instead.
 */
static int posix_preallocate(void *h, int64_t size)
{
    int rc;
    if (size == 0)
        return 0;
    while ((rc = fallocate(((posix_file *)h)->fd, 0, 0, (off_t)size)) < 0 && errno == EINTR)
        ;
    if (rc == 0)
        return 0;
    return errno == EOPNOTSUPP || errno == ENOSYS ? -EOPNOTSUPP : -errno;
}

static int posix_remove(const char *path, const tess_info *info)
{
    bool uring, direct = false;
    if (posix_hints(info, &uring, &direct))
        return -EINVAL;
    return unlink(path) ? -errno : 0;
}

/* Write dirty pages back, drop the file's pages from the cache, and check that the first
 * 4 MiB are really gone (not on tmpfs, where the page cache is the storage). */
static int posix_evict(void *h)
{
    posix_file *p = h;
    struct stat st;
    if (p->memory)
        return -EOPNOTSUPP;
    if (fdatasync(p->fd) != 0 || fstat(p->fd, &st) != 0)
        return -errno;
    int rc = posix_fadvise(p->fd, 0, 0, POSIX_FADV_DONTNEED);
    if (rc)
        return -rc;
    int64_t len = st.st_size < (4 << 20) ? (int64_t)st.st_size : 4 << 20, resident = 0;
    long page = sysconf(_SC_PAGESIZE);
    if (len < page)
        return 0;
    unsigned char vec[(4 << 20) / 4096];
    void *map = mmap(NULL, (size_t)len, PROT_READ, MAP_SHARED, p->fd, 0);
    if (map == MAP_FAILED)
        return -EOPNOTSUPP;
    int64_t pages = len / page;
    bool ok = page == 4096 && mincore(map, (size_t)len, vec) == 0;
    for (int64_t i = 0; ok && i < pages; i++)
        resident += vec[i] & 1;
    munmap(map, (size_t)len);
    return ok && resident < pages / 2 ? 0 : -EOPNOTSUPP;
}

static const char *fs_name(long type)
{
    static const struct {
        long magic;
        const char *name;
    } fs[] = {{0xEF53, "ext2/3/4"},     {0x58465342, "xfs"},    {0x9123683E, "btrfs"},
              {FS_TMPFS, "tmpfs"},       {0x6969, "nfs"},        {0x0BD00BD0, "lustre"},
              {0x47504653, "gpfs"},     {0x794C7630, "overlay"}, {0x2FC12FC1, "zfs"},
              {0x19830326, "beegfs"},   {0x65735546, "fuse"},   {0xF2F52010, "f2fs"},
              {0xFF534D42, "cifs"},     {0x73717368, "squashfs"}, {FS_RAMFS, "ramfs"}};
    for (size_t i = 0; i < sizeof fs / sizeof fs[0]; i++)
        if (fs[i].magic == type)
            return fs[i].name;
    return "unknown file system";
}

static void posix_describe(void *h, char *buf, size_t cap)
{
    struct statfs sfs;
    snprintf(buf, cap, "%s", fstatfs(((posix_file *)h)->fd, &sfs) == 0
                                 ? fs_name((long)sfs.f_type) : "?");
}

#ifdef TESS_HAVE_LIBURING
/* Set the ring up on first use; a kernel or sandbox without io_uring makes batching
 * unavailable for this handle (the caller falls back to one call per request). */
static bool posix_ring_ready(posix_file *p)
{
    if (p->ring_state == 0)
        p->ring_state = io_uring_queue_init(POSIX_RING_ENTRIES, &p->ring, 0) == 0 ? 1 : -1;
    return p->ring_state == 1;
}

/* Submit reqs[0..n) (n <= ring entries) and reap their completions into result. */
static int posix_ring_wait(posix_file *p, bool wr, tessi_io_req *reqs, int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        struct io_uring_sqe *sqe = io_uring_get_sqe(&p->ring);
        const struct iovec *v = reqs[i].iov;
        uint64_t off = (uint64_t)reqs[i].off;
        unsigned nv = (unsigned)reqs[i].niov;
        bool plain = nv == 1 && v->iov_len <= (1u << 30); /* read/write: no iovec import */
        if (plain && wr)
            io_uring_prep_write(sqe, p->fd, v->iov_base, (unsigned)v->iov_len, off);
        else if (plain)
            io_uring_prep_read(sqe, p->fd, v->iov_base, (unsigned)v->iov_len, off);
        else if (wr)
            io_uring_prep_writev(sqe, p->fd, v, nv, off);
        else
            io_uring_prep_readv(sqe, p->fd, v, nv, off);
        io_uring_sqe_set_data64(sqe, (uint64_t)i);
    }
    int rc;
    while ((rc = io_uring_submit_and_wait(&p->ring, (unsigned)n)) == -EINTR)
        ;
    if (rc < 0)
        return rc;
    for (int64_t k = 0; k < n; k++) {
        struct io_uring_cqe *cqe;
        while ((rc = io_uring_wait_cqe(&p->ring, &cqe)) == -EINTR)
            ;
        if (rc < 0)
            return rc;
        reqs[io_uring_cqe_get_data64(cqe)].result = cqe->res;
        io_uring_cqe_seen(&p->ring, cqe);
    }
    return 0;
}

/* One slice; a ring that failed is torn down (the kernel cancels what was in flight) and
 * batching is off for this handle from then on. */
static int posix_ring_slice(posix_file *p, bool wr, tessi_io_req *reqs, int64_t n)
{
    int rc = posix_ring_wait(p, wr, reqs, n);
    if (rc < 0) {
        io_uring_queue_exit(&p->ring);
        p->ring_state = -1;
    }
    return rc;
}

/* Finish what the ring left: short transfers and retryable errors continue synchronously, so
 * results keep the driver contract (short only at end of file). */
static void posix_finish(posix_file *p, bool wr, tessi_io_req *r)
{
    if (r->result == -EAGAIN || r->result == -EINTR)
        r->result = 0;
    if (r->result >= 0 && r->result < r->len)
        r->result = posix_rwv(p->fd, wr, r->iov, r->niov, r->off, r->result);
}

static int posix_submit(void *h, int op, tessi_io_req *reqs, int64_t n)
{
    posix_file *p = h;
    bool wr = op == TESSI_OP_WRITE;
    int rc = 0;
    pthread_mutex_lock(&p->ring_mutex);
    if (!posix_ring_ready(p))
        rc = -EOPNOTSUPP;
    for (int64_t i = 0; rc == 0 && i < n; i += POSIX_RING_ENTRIES)
        rc = posix_ring_slice(p, wr, reqs + i,
                              n - i < POSIX_RING_ENTRIES ? n - i : POSIX_RING_ENTRIES);
    pthread_mutex_unlock(&p->ring_mutex);
    for (int64_t i = 0; rc == 0 && i < n; i++)
        posix_finish(p, wr, &reqs[i]);
    return rc;
}
#define POSIX_SUBMIT posix_submit
#else
#define POSIX_SUBMIT NULL
#endif

const struct tess_driver tess_posix_driver = {
    .version = TESSI_DRIVER_VERSION,
    .name = "posix",
    .hints = posix_hint_defs,
    .nhints = NHINTS,
    .open = posix_open,
    .close = posix_close,
    .caps = posix_caps,
    .pread = posix_pread,
    .pwrite = posix_pwrite,
    .preadv = posix_preadv,
    .pwritev = posix_pwritev,
    .lock = posix_lock,
    .unlock = posix_unlock,
    .test_lock = posix_test_lock,
    .sync = posix_sync,
    .get_size = posix_get_size,
    .set_size = posix_set_size,
    .preallocate = posix_preallocate,
    .remove = posix_remove,
    .submit = POSIX_SUBMIT,
    .evict = posix_evict,
    .describe = posix_describe,
};
