/*
 * access.c - every data access, and the individual file pointer.
 *
 * One function serves the 30 read and write calls (and their nonblocking and split forms):
 * it checks the call as ROMIO does (count, offset, access mode, sequential mode, whole etypes),
 * finds the position (the explicit offset, the individual pointer, or the shared pointer moved
 * by fetch-and-add; for the ordered calls, the shared pointer moved once by the total and
 * every rank placed after the ranks below it), converts external32 data, and runs Tessera's
 * access: tess_file_read_at / write_at for independent calls, the _all forms (two-phase or
 * auto) for collective ones.
 *
 * Collective calls never hang on an error: a rank whose own checks failed still joins the
 * collective (with arguments Tessera rejects), so every rank gets an error; the ordered calls
 * agree in the exchange that places them.
 *
 * File pointers count etypes of the current view. After a read the individual pointer moves by
 * the whole etypes read (a read cut short by the end of file moves it to where the data
 * ended); shared pointers move by the amount requested, before the access, as in ROMIO.
 */
#include "mpiio.h"

#include <stdlib.h>

void tessi_mio_status(MPI_Status *status, int64_t bytes)
{
    if (status == MPI_STATUS_IGNORE)
        return;
    MPI_Status_set_elements_x(status, MPI_BYTE, (MPI_Count)bytes);
    MPI_Status_set_cancelled(status, 0);
}

/* The local checks of an access; *t, *total (data bytes) and *unit (external32) on success. */
static int check(tessi_mio_file *mf, const char *who, int kind, MPI_Offset offset,
                 MPI_Count count, MPI_Datatype dt, tess_type **t, int64_t *total,
                 int64_t *unit)
{
    bool write = kind & TESSI_MIO_WRITE;
    int rc;
    *unit = 1;
    if (count < 0)
        return tessi_mio_error(MPI_ERR_COUNT, who, "count %lld < 0", (long long)count);
    if ((kind & TESSI_MIO_AT) && offset < 0)
        return tessi_mio_error(MPI_ERR_ARG, who, "offset %lld < 0", (long long)offset);
    if (write && (mf->amode & MPI_MODE_RDONLY))
        return tessi_mio_error(MPI_ERR_READ_ONLY, who, "the file was opened MPI_MODE_RDONLY");
    if (!write && (mf->amode & MPI_MODE_WRONLY))
        return tessi_mio_error(MPI_ERR_ACCESS, who, "the file was opened MPI_MODE_WRONLY");
    if ((mf->amode & MPI_MODE_SEQUENTIAL) && !(kind & TESSI_MIO_SHARED))
        return tessi_mio_error(MPI_ERR_UNSUPPORTED_OPERATION, who, "a file opened with "
                               "MPI_MODE_SEQUENTIAL is accessed through the shared pointer only");
    if ((rc = tessi_mio_type(dt, who, t)))
        return rc;
    if (__builtin_mul_overflow((int64_t)count, tess_type_size(*t), total))
        return tessi_mio_error(MPI_ERR_COUNT, who, "%lld items of %lld bytes overflow",
                               (long long)count, (long long)tess_type_size(*t));
    if (*total % mf->esize)
        return tessi_mio_error(MPI_ERR_IO, who, "%lld bytes are not a whole number of etypes "
                               "(%lld bytes each)", (long long)*total, (long long)mf->esize);
    if (mf->datarep == TESSI_MIO_EXTERNAL32)
        return tessi_mio_external32_unit(dt, who, unit);
    return MPI_SUCCESS;
}

/*
 * The ordered calls: where this rank's etypes go (collective). One allgather tells every rank
 * each rank's amount and verdict; rank 0 moves the shared pointer by the total and broadcasts
 * where it was. The verdict is the same everywhere.
 */
static int ordered_offset(tessi_mio_file *mf, const char *who, int code, int64_t etypes,
                          int64_t *at)
{
    int cls = MPI_SUCCESS;
    if (code != MPI_SUCCESS)
        MPI_Error_class(code, &cls);
    int64_t mine[2] = {cls, etypes}, prefix = 0, total = 0, base[2] = {0, 0};
    int64_t *all = mf->scratch;
    int err = MPI_Allgather(mine, 2, MPI_INT64_T, all, 2, MPI_INT64_T, mf->comm);
    if (err != MPI_SUCCESS)
        return code ? code : tessi_mio_error(MPI_ERR_OTHER, who, "MPI_Allgather failed (MPI "
                                             "error %d)", err);
    for (int r = 0; r < mf->size; r++) {
        if (all[2 * r] && code == MPI_SUCCESS)
            code = tessi_mio_error((int)all[2 * r], who, "failed on rank %d", r);
        if (all[2 * r])
            return code;
        prefix += r < mf->rank ? all[2 * r + 1] : 0;
        total += all[2 * r + 1];
    }
    if (mf->rank == 0)
        base[0] = tessi_mio_shared_add(mf, total, &base[1], who);
    err = MPI_Bcast(base, 2, MPI_INT64_T, 0, mf->comm);
    if (err != MPI_SUCCESS || base[0] != MPI_SUCCESS)
        return mf->rank == 0 && base[0] ? (int)base[0]
                                        : tessi_mio_error(MPI_ERR_OTHER, who, "moving the "
                                                          "shared pointer failed on rank 0");
    *at = base[1] + prefix;
    return MPI_SUCCESS;
}

/* external32: pack and convert the data of a write into a new buffer (*out). */
static int to_external(const void *buf, MPI_Count count, tess_type *t, int64_t total,
                       int64_t unit, const char *who, char **out)
{
    int64_t n = 0;
    if (!(*out = malloc(total ? (size_t)total : 1)))
        return tessi_mio_error(MPI_ERR_NO_MEM, who, "out of memory (%lld bytes to convert)",
                               (long long)total);
    int rc = tess_pack(buf, count, t, 0, *out, total, &n);
    if (rc)
        return tessi_mio_tess_error(rc, who);
    tessi_mio_byteswap(*out, total, unit);
    return MPI_SUCCESS;
}

int tessi_mio_access(tessi_mio_file *mf, const char *who, int kind, MPI_Offset offset,
                     void *buf, MPI_Count count, MPI_Datatype dt, int pre, int64_t *bytes)
{
    bool write = kind & TESSI_MIO_WRITE, coll = kind & TESSI_MIO_COLL;
    bool shared = kind & TESSI_MIO_SHARED;
    tess_type *t = NULL, *iot;
    int64_t total = 0, unit = 1, at = offset, done = 0, n;
    char *ext = NULL;
    void *iobuf = buf;
    int64_t iocount = count;
    int rc;
    *bytes = 0;
    int code = pre ? pre : check(mf, who, kind, offset, count, dt, &t, &total, &unit);
    int64_t etypes = code ? 0 : total / mf->esize;
    mf->calls[shared ? (coll ? TESSI_MIO_N_ORDERED : TESSI_MIO_N_SHARED)
                     : (coll ? TESSI_MIO_N_COLL : TESSI_MIO_N_INDEP)]++;
    if (shared && coll) {
        if ((code = ordered_offset(mf, who, code, etypes, &at)))
            return code; /* agreed: nobody goes on */
    } else if (shared && code == MPI_SUCCESS) {
        code = tessi_mio_shared_add(mf, etypes, &at, who);
    } else if (!(kind & TESSI_MIO_AT)) {
        at = mf->fp;
    }
    iot = t;
    if (code == MPI_SUCCESS && unit > 1 && total > 0) {
        code = write ? to_external(buf, count, t, total, unit, who, &ext)
                     : (ext = malloc((size_t)total))
                         ? MPI_SUCCESS
                         : tessi_mio_error(MPI_ERR_NO_MEM, who, "out of memory (%lld bytes "
                                           "to convert)", (long long)total);
        iobuf = ext;
        iot = TESS_BYTE;
        iocount = total;
    }
    if (coll) {
        /* a rank that failed its checks joins with arguments Tessera refuses (count -1) */
        rc = write ? tess_file_write_at_all(mf->tf, at, code ? NULL : iobuf,
                                            code ? -1 : iocount, code ? NULL : iot, &done)
                   : tess_file_read_at_all(mf->tf, at, code ? NULL : iobuf,
                                           code ? -1 : iocount, code ? NULL : iot, &done);
    } else {
        rc = code ? 0
             : write ? tess_file_write_at(mf->tf, at, iobuf, iocount, iot, &done)
                     : tess_file_read_at(mf->tf, at, iobuf, iocount, iot, &done);
    }
    if (code == MPI_SUCCESS && rc)
        code = tessi_mio_tess_error(rc, who);
    if (code == MPI_SUCCESS && ext && !write) {
        tessi_mio_byteswap(ext, done, unit);
        if ((rc = tess_unpack(ext, total, buf, count, t, 0, &n)))
            code = tessi_mio_tess_error(rc, who);
    }
    free(ext);
    if (code != MPI_SUCCESS)
        return code;
    if (!shared && !(kind & TESSI_MIO_AT))
        mf->fp += done / mf->esize;
    *bytes = done;
    return MPI_SUCCESS;
}

/* ------------------------------------------------------------------ individual pointer */

TESSI_MIO_API int PMPI_File_seek(MPI_File fh, MPI_Offset offset, int whence)
{
    TESSI_MIO_FORWARD(MPI_File_seek, fh, offset, whence);
    static const char who[] = "MPI_File_seek";
    tessi_mio_file *mf = tessi_mio_lookup(fh);
    int64_t base = 0, to = 0;
    int rc = MPI_SUCCESS;
    if (!mf)
        return tessi_mio_raise(NULL, tessi_mio_error(MPI_ERR_FILE, who, "invalid file handle"));
    if (mf->amode & MPI_MODE_SEQUENTIAL)
        rc = tessi_mio_error(MPI_ERR_UNSUPPORTED_OPERATION, who, "not with "
                             "MPI_MODE_SEQUENTIAL");
    else if (whence == MPI_SEEK_CUR)
        base = mf->fp;
    else if (whence == MPI_SEEK_END)
        rc = tessi_mio_view_eof(mf, who, &base);
    else if (whence != MPI_SEEK_SET)
        rc = tessi_mio_error(MPI_ERR_ARG, who, "whence %d is not MPI_SEEK_SET, _CUR or _END",
                             whence);
    if (rc == MPI_SUCCESS && (__builtin_add_overflow(base, offset, &to) || to < 0))
        rc = tessi_mio_error(MPI_ERR_ARG, who, "the pointer would move to a negative offset "
                             "(%lld %+lld)", (long long)base, (long long)offset);
    if (rc == MPI_SUCCESS)
        mf->fp = to;
    return tessi_mio_raise(mf, rc);
}
TESSI_MIO_ALIAS(MPI_File_seek);

TESSI_MIO_API int PMPI_File_get_position(MPI_File fh, MPI_Offset *offset)
{
    TESSI_MIO_FORWARD(MPI_File_get_position, fh, offset);
    static const char who[] = "MPI_File_get_position";
    tessi_mio_file *mf = tessi_mio_lookup(fh);
    if (!mf)
        return tessi_mio_raise(NULL, tessi_mio_error(MPI_ERR_FILE, who, "invalid file handle"));
    if (mf->amode & MPI_MODE_SEQUENTIAL)
        return tessi_mio_raise(mf, tessi_mio_error(MPI_ERR_UNSUPPORTED_OPERATION, who,
                                                   "not with MPI_MODE_SEQUENTIAL"));
    if (!offset)
        return tessi_mio_raise(mf, tessi_mio_error(MPI_ERR_ARG, who, "offset is NULL"));
    *offset = mf->fp;
    return MPI_SUCCESS;
}
TESSI_MIO_ALIAS(MPI_File_get_position);
