/*
 * posix.c - the POSIX storage driver: a file descriptor, pread/pwrite(v) loops that finish
 * short counts and retry EINTR, fcntl byte-range locks, shared and exclusive (open-file-
 * description locks where the kernel has them, so two handles of one process exclude each
 * other; classic process locks otherwise), fsync, fstat, ftruncate, fallocate, unlink, and,
 * when built with liburing, request batches as one io_uring submission.
 */
#include "driver/driver.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifdef TESS_HAVE_LIBURING
#include <liburing.h>
#endif

/* Ring entries; larger batches are submitted in slices of this size. */
#define POSIX_RING_ENTRIES 128

typedef struct posix_file {
    int fd;
    bool uring;         /* hint tess_posix_uring (enable: true) */
    bool classic_locks; /* the kernel refused F_OFD_SETLKW: use F_SETLKW */
#ifdef TESS_HAVE_LIBURING
    pthread_mutex_t ring_mutex; /* one batch at a time on the shared ring */
    int ring_state;             /* 0 not yet set up, 1 ready, -1 unavailable */
    struct io_uring ring;
#endif
} posix_file;

/*
 * Driver hint tess_posix_uring = enable | disable (default enable): whether request batches go
 * to io_uring (builds with liburing only; elsewhere the hint is checked and has no effect).
 * io_uring pays where each call waits for a device or a network; on data in the page cache
 * plain vectored calls can be faster. -EINVAL for any other value.
 */
static int posix_hints(const tess_info *info, bool *uring)
{
    char v[16];
    int found = 0;
    int rc = info ? tess_info_get(info, "tess_posix_uring", v, sizeof v, &found) : 0;
    *uring = true;
    if (!found)
        return 0;
    if (rc == 0 && (strcmp(v, "enable") == 0 || strcmp(v, "disable") == 0)) {
        *uring = v[0] == 'e';
        return 0;
    }
    return -EINVAL;
}

static int posix_open(const char *path, int flags, const tess_info *info, void **h)
{
    bool uring;
    int oflags = O_CLOEXEC;
    if (posix_hints(info, &uring))
        return -EINVAL;
    oflags |= (flags & TESS_RDWR) ? O_RDWR : (flags & TESS_WRONLY) ? O_WRONLY : O_RDONLY;
    oflags |= (flags & TESS_CREATE) ? O_CREAT : 0;
    oflags |= (flags & TESS_EXCL) ? O_EXCL : 0;
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
#ifdef TESS_HAVE_LIBURING
    pthread_mutex_init(&p->ring_mutex, NULL);
    p->ring_state = uring ? 0 : -1;
#else
    (void)uring;
#endif
    *h = p;
    return 0;
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
        if (in > 0) { /* finish a partly moved element on its own */
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

static int64_t posix_pread(void *h, void *buf, int64_t len, int64_t off)
{
    struct iovec v = {.iov_base = buf, .iov_len = (size_t)len};
    return posix_rwv(((posix_file *)h)->fd, false, &v, 1, off, 0);
}

static int64_t posix_pwrite(void *h, const void *buf, int64_t len, int64_t off)
{
    struct iovec v = {.iov_base = (void *)buf, .iov_len = (size_t)len};
    return posix_rwv(((posix_file *)h)->fd, true, &v, 1, off, 0);
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
    bool uring;
    if (posix_hints(info, &uring))
        return -EINVAL;
    return unlink(path) ? -errno : 0;
}

static int posix_get_info(void *h, tess_info *out)
{
    int rc = tess_info_set(out, "tess_posix_uring", ((posix_file *)h)->uring ? "enable"
                                                                             : "disable");
    return rc ? -ENOMEM : 0;
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
    .open = posix_open,
    .close = posix_close,
    .pread = posix_pread,
    .pwrite = posix_pwrite,
    .preadv = posix_preadv,
    .pwritev = posix_pwritev,
    .lock = posix_lock,
    .unlock = posix_unlock,
    .sync = posix_sync,
    .get_size = posix_get_size,
    .set_size = posix_set_size,
    .preallocate = posix_preallocate,
    .remove = posix_remove,
    .get_info = posix_get_info,
    .submit = POSIX_SUBMIT,
};
