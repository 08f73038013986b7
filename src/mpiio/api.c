/*
 * api.c - the data-access entry points: blocking, nonblocking and split collective, with
 * explicit offsets, the individual pointer and the shared pointer; and, with an MPI 4 library,
 * their large-count "_c" forms. Each is one line over tessi_mio_access (access.c).
 *
 * Nonblocking calls (MPI_File_iread...) do their I/O before they return and give back an MPI
 * generalized request that is already complete, whose status holds the bytes moved; an error
 * is returned by the call itself (the request is then MPI_REQUEST_NULL). So are the
 * nonblocking collectives (MPI_File_iread_all...): every rank must start them before any can
 * return, as if they were blocking (the standard allows an implementation to complete them at
 * the start; a program that makes a rank wait for another between the start and the wait of a
 * nonblocking collective file call deadlocks here).
 *
 * Split collectives do the I/O in the _begin call; _end fills the status. One split collective
 * may be active per file (MPI_ERR_IO otherwise, as in ROMIO).
 */
#include "mpiio.h"

#include <stdlib.h>

static int bad_handle(const char *who)
{
    return tessi_mio_raise(NULL, tessi_mio_error(MPI_ERR_FILE, who, "invalid file handle"));
}

static int blocking(const char *who, MPI_File fh, int kind, MPI_Offset offset, const void *buf,
                    MPI_Count count, MPI_Datatype dt, MPI_Status *status)
{
    tessi_mio_file *mf = tessi_mio_lookup(fh);
    int64_t bytes = 0;
    if (!mf)
        return bad_handle(who);
    int rc = tessi_mio_access(mf, who, kind, offset, (void *)buf, count, dt, MPI_SUCCESS,
                              &bytes);
    if (rc == MPI_SUCCESS)
        tessi_mio_status(status, bytes);
    return tessi_mio_raise(mf, rc);
}

/* ------------------------------------------------------------------ nonblocking */

static int query_done(void *extra, MPI_Status *status)
{
    tessi_mio_status(status, *(int64_t *)extra);
    status->MPI_SOURCE = MPI_UNDEFINED;
    status->MPI_TAG = MPI_UNDEFINED;
    status->MPI_ERROR = MPI_SUCCESS;
    return MPI_SUCCESS;
}

static int free_done(void *extra)
{
    free(extra);
    return MPI_SUCCESS;
}

static int cancel_done(void *extra, int complete)
{
    (void)extra, (void)complete; /* complete from the start: nothing to cancel */
    return MPI_SUCCESS;
}

static int nonblocking(const char *who, MPI_File fh, int kind, MPI_Offset offset,
                       const void *buf, MPI_Count count, MPI_Datatype dt, MPI_Request *req)
{
    tessi_mio_file *mf = tessi_mio_lookup(fh);
    int64_t *bytes = malloc(sizeof *bytes);
    if (!mf) {
        free(bytes);
        return bad_handle(who);
    }
    int pre = !req ? tessi_mio_error(MPI_ERR_ARG, who, "request is NULL")
              : !bytes ? tessi_mio_error(MPI_ERR_NO_MEM, who, "out of memory") : MPI_SUCCESS;
    int64_t moved = 0;
    mf->calls[TESSI_MIO_N_NONBLOCKING]++;
    int rc = tessi_mio_access(mf, who, kind, offset, (void *)buf, count, dt, pre, &moved);
    if (rc == MPI_SUCCESS) {
        *bytes = moved;
        int err = MPI_Grequest_start(query_done, free_done, cancel_done, bytes, req);
        if (err == MPI_SUCCESS)
            bytes = NULL; /* the request owns it */
        if (err == MPI_SUCCESS && (err = MPI_Grequest_complete(*req)) != MPI_SUCCESS)
            MPI_Request_free(req);
        if (err != MPI_SUCCESS)
            rc = tessi_mio_error(MPI_ERR_INTERN, who, "the generalized request failed (MPI "
                                 "error %d)", err);
    }
    free(bytes);
    if (rc != MPI_SUCCESS && req)
        *req = MPI_REQUEST_NULL;
    return tessi_mio_raise(mf, rc);
}

/* ------------------------------------------------------------------ split collective */

static int split_begin(const char *who, MPI_File fh, int kind, MPI_Offset offset,
                       const void *buf, MPI_Count count, MPI_Datatype dt)
{
    tessi_mio_file *mf = tessi_mio_lookup(fh);
    if (!mf)
        return bad_handle(who);
    int pre = mf->split_active ? tessi_mio_error(MPI_ERR_IO, who, "a split collective is "
                                                 "already active on this file")
                               : MPI_SUCCESS;
    mf->calls[TESSI_MIO_N_SPLIT]++;
    int rc = tessi_mio_access(mf, who, kind, offset, (void *)buf, count, dt, pre,
                              &mf->split_bytes);
    if (!pre)
        mf->split_active = true;
    return tessi_mio_raise(mf, rc);
}

static int split_end(const char *who, MPI_File fh, MPI_Status *status)
{
    tessi_mio_file *mf = tessi_mio_lookup(fh);
    if (!mf)
        return bad_handle(who);
    if (!mf->split_active)
        return tessi_mio_raise(mf, tessi_mio_error(MPI_ERR_IO, who, "no split collective was "
                                                   "begun on this file"));
    mf->split_active = false;
    tessi_mio_status(status, mf->split_bytes);
    return MPI_SUCCESS;
}

/* ------------------------------------------------------------------ the entry points */

enum {
    R = 0,
    W = TESSI_MIO_WRITE,
    AT = TESSI_MIO_AT,
    ALL = TESSI_MIO_COLL,
    SH = TESSI_MIO_SHARED,
};

/* BUF is `void` for reads, `const void` for writes; CNT `int`, or MPI_Count for the _c forms */
#define DEF_AT(fn, BUF, CNT, kind)                                                             \
    TESSI_MIO_API int P##fn(MPI_File fh, MPI_Offset offset, BUF *buf, CNT count,               \
                            MPI_Datatype datatype, MPI_Status *status)                         \
    {                                                                                          \
        TESSI_MIO_FORWARD(fn, fh, offset, buf, count, datatype, status);                       \
        return blocking(#fn, fh, (kind) | AT, offset, buf, count, datatype, status);           \
    }                                                                                          \
    TESSI_MIO_ALIAS(fn)

#define DEF_PTR(fn, BUF, CNT, kind)                                                            \
    TESSI_MIO_API int P##fn(MPI_File fh, BUF *buf, CNT count, MPI_Datatype datatype,           \
                            MPI_Status *status)                                                \
    {                                                                                          \
        TESSI_MIO_FORWARD(fn, fh, buf, count, datatype, status);                               \
        return blocking(#fn, fh, kind, 0, buf, count, datatype, status);                       \
    }                                                                                          \
    TESSI_MIO_ALIAS(fn)

#define DEF_IAT(fn, BUF, CNT, kind)                                                            \
    TESSI_MIO_API int P##fn(MPI_File fh, MPI_Offset offset, BUF *buf, CNT count,               \
                            MPI_Datatype datatype, MPI_Request *request)                       \
    {                                                                                          \
        TESSI_MIO_FORWARD(fn, fh, offset, buf, count, datatype, request);                      \
        return nonblocking(#fn, fh, (kind) | AT, offset, buf, count, datatype, request);       \
    }                                                                                          \
    TESSI_MIO_ALIAS(fn)

#define DEF_IPTR(fn, BUF, CNT, kind)                                                           \
    TESSI_MIO_API int P##fn(MPI_File fh, BUF *buf, CNT count, MPI_Datatype datatype,           \
                            MPI_Request *request)                                              \
    {                                                                                          \
        TESSI_MIO_FORWARD(fn, fh, buf, count, datatype, request);                              \
        return nonblocking(#fn, fh, kind, 0, buf, count, datatype, request);                   \
    }                                                                                          \
    TESSI_MIO_ALIAS(fn)

#define DEF_BEGIN_AT(fn, BUF, CNT, kind)                                                       \
    TESSI_MIO_API int P##fn(MPI_File fh, MPI_Offset offset, BUF *buf, CNT count,               \
                            MPI_Datatype datatype)                                             \
    {                                                                                          \
        TESSI_MIO_FORWARD(fn, fh, offset, buf, count, datatype);                               \
        return split_begin(#fn, fh, (kind) | AT, offset, buf, count, datatype);                \
    }                                                                                          \
    TESSI_MIO_ALIAS(fn)

#define DEF_BEGIN(fn, BUF, CNT, kind)                                                          \
    TESSI_MIO_API int P##fn(MPI_File fh, BUF *buf, CNT count, MPI_Datatype datatype)           \
    {                                                                                          \
        TESSI_MIO_FORWARD(fn, fh, buf, count, datatype);                                       \
        return split_begin(#fn, fh, kind, 0, buf, count, datatype);                            \
    }                                                                                          \
    TESSI_MIO_ALIAS(fn)

#define DEF_END(fn, BUF)                                                                       \
    TESSI_MIO_API int P##fn(MPI_File fh, BUF *buf, MPI_Status *status)                         \
    {                                                                                          \
        TESSI_MIO_FORWARD(fn, fh, buf, status);                                                \
        (void)buf;                                                                             \
        return split_end(#fn, fh, status);                                                     \
    }                                                                                          \
    TESSI_MIO_ALIAS(fn)

/* Every call of one count type: the classic int forms, then the large-count ones. */
#define DEF_ALL(CNT, S)                                                                        \
    DEF_AT(MPI_File_read_at##S, void, CNT, R);                                                 \
    DEF_AT(MPI_File_read_at_all##S, void, CNT, R | ALL);                                       \
    DEF_AT(MPI_File_write_at##S, const void, CNT, W);                                          \
    DEF_AT(MPI_File_write_at_all##S, const void, CNT, W | ALL);                                \
    DEF_PTR(MPI_File_read##S, void, CNT, R);                                                   \
    DEF_PTR(MPI_File_read_all##S, void, CNT, R | ALL);                                         \
    DEF_PTR(MPI_File_read_shared##S, void, CNT, R | SH);                                       \
    DEF_PTR(MPI_File_read_ordered##S, void, CNT, R | SH | ALL);                                \
    DEF_PTR(MPI_File_write##S, const void, CNT, W);                                            \
    DEF_PTR(MPI_File_write_all##S, const void, CNT, W | ALL);                                  \
    DEF_PTR(MPI_File_write_shared##S, const void, CNT, W | SH);                                \
    DEF_PTR(MPI_File_write_ordered##S, const void, CNT, W | SH | ALL);                         \
    DEF_IAT(MPI_File_iread_at##S, void, CNT, R);                                               \
    DEF_IAT(MPI_File_iread_at_all##S, void, CNT, R | ALL);                                     \
    DEF_IAT(MPI_File_iwrite_at##S, const void, CNT, W);                                        \
    DEF_IAT(MPI_File_iwrite_at_all##S, const void, CNT, W | ALL);                              \
    DEF_IPTR(MPI_File_iread##S, void, CNT, R);                                                 \
    DEF_IPTR(MPI_File_iread_all##S, void, CNT, R | ALL);                                       \
    DEF_IPTR(MPI_File_iread_shared##S, void, CNT, R | SH);                                     \
    DEF_IPTR(MPI_File_iwrite##S, const void, CNT, W);                                          \
    DEF_IPTR(MPI_File_iwrite_all##S, const void, CNT, W | ALL);                                \
    DEF_IPTR(MPI_File_iwrite_shared##S, const void, CNT, W | SH);                              \
    DEF_BEGIN_AT(MPI_File_read_at_all_begin##S, void, CNT, R | ALL);                           \
    DEF_BEGIN_AT(MPI_File_write_at_all_begin##S, const void, CNT, W | ALL);                    \
    DEF_BEGIN(MPI_File_read_all_begin##S, void, CNT, R | ALL);                                 \
    DEF_BEGIN(MPI_File_write_all_begin##S, const void, CNT, W | ALL);                          \
    DEF_BEGIN(MPI_File_read_ordered_begin##S, void, CNT, R | SH | ALL);                        \
    DEF_BEGIN(MPI_File_write_ordered_begin##S, const void, CNT, W | SH | ALL)

DEF_ALL(int, );
#if TESSI_MIO_LARGE_COUNT
DEF_ALL(MPI_Count, _c);
#endif

DEF_END(MPI_File_read_at_all_end, void);
DEF_END(MPI_File_write_at_all_end, const void);
DEF_END(MPI_File_read_all_end, void);
DEF_END(MPI_File_write_all_end, const void);
DEF_END(MPI_File_read_ordered_end, void);
DEF_END(MPI_File_write_ordered_end, const void);
