/*
 * shared.c - the shared file pointer: one 64-bit counter of etypes per open file, in rank 0's
 * memory, moved by atomic fetch-and-add. No file, no fcntl lock (ROMIO keeps the pointer in a
 * hidden file under a lock, which fails on file systems without locks).
 *
 * Where every process of the file's group shares one node's memory (MPI_Comm_split_type), the
 * counter lives in an MPI-3 shared-memory window (MPI_Win_allocate_shared) and is moved with
 * the processor's atomic instructions: no process needs to be inside MPI for another to move
 * it. Across nodes it is an MPI-3 RMA window (MPI_Win_allocate, a passive-target epoch for the
 * file's lifetime) moved with MPI_Fetch_and_op; there, with an MPI library without
 * asynchronous progress (MPICH's default), an update waits until rank 0 enters MPI. The hint
 * tess_shared_fp = rma forces the RMA window on one node too.
 */
#include "mpiio.h"

#include <string.h>

static int rma_error(int rc, const char *call, const char *who)
{
    return tessi_mio_error(MPI_ERR_INTERN, who, "shared file pointer: %s failed (MPI error %d)",
                           call, rc);
}

int tessi_mio_shared_create(tessi_mio_file *mf, const char *who)
{
    char val[16] = "";
    int found = 0, rc, nnode = 0;
    MPI_Comm node = MPI_COMM_NULL;
    MPI_Aint size = mf->rank == 0 ? (MPI_Aint)sizeof(int64_t) : 0;
    tessi_mio_shared *s = &mf->shared;
    s->win = MPI_WIN_NULL;
    s->counter = NULL;
    tess_info_get(mf->hints, "tess_shared_fp", val, sizeof val, &found);
    bool rma = found && strcmp(val, "rma") == 0;
    int code = found && !rma && strcmp(val, "automatic") != 0
                   ? tessi_mio_error(MPI_ERR_INFO_VALUE, who, "hint tess_shared_fp = '%s' is "
                                     "not one of automatic, rma", val)
                   : MPI_SUCCESS;
    int64_t same[1] = {rma}; /* every rank makes the same kind of window */
    if ((code = tessi_mio_agree_same(mf->comm, code, same, 1, "tess_shared_fp hints", who)))
        return code;
    if (!rma) {
        rc = MPI_Comm_split_type(mf->comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
        if (rc != MPI_SUCCESS)
            return rma_error(rc, "MPI_Comm_split_type", who);
        MPI_Comm_size(node, &nnode);
        MPI_Comm_free(&node);
        rma = nnode != mf->size; /* the same answer on every rank */
    }
    if (!rma) {
        void *base;
        MPI_Aint len;
        int unit;
        rc = MPI_Win_allocate_shared(size, sizeof(int64_t), MPI_INFO_NULL, mf->comm, &base,
                                     &s->win);
        if (rc != MPI_SUCCESS)
            return rma_error(rc, "MPI_Win_allocate_shared", who);
        rc = MPI_Win_shared_query(s->win, 0, &len, &unit, &base);
        if (rc != MPI_SUCCESS || len < (MPI_Aint)sizeof(int64_t)) {
            MPI_Win_free(&s->win);
            return rma_error(rc, "MPI_Win_shared_query", who);
        }
        s->counter = base;
        if (mf->rank == 0)
            __atomic_store_n(s->counter, 0, __ATOMIC_SEQ_CST);
    } else {
        int64_t *base;
        rc = MPI_Win_allocate(size, sizeof(int64_t), MPI_INFO_NULL, mf->comm, &base, &s->win);
        if (rc != MPI_SUCCESS)
            return rma_error(rc, "MPI_Win_allocate", who);
        if (mf->rank == 0)
            *base = 0;
        rc = MPI_Win_lock_all(MPI_MODE_NOCHECK, s->win);
        if (rc != MPI_SUCCESS) {
            MPI_Win_free(&s->win);
            return rma_error(rc, "MPI_Win_lock_all", who);
        }
    }
    /* nobody moves the pointer before rank 0 has set it */
    rc = MPI_Barrier(mf->comm);
    return rc == MPI_SUCCESS ? MPI_SUCCESS : rma_error(rc, "MPI_Barrier", who);
}

void tessi_mio_shared_free(tessi_mio_file *mf)
{
    tessi_mio_shared *s = &mf->shared;
    if (s->win == MPI_WIN_NULL)
        return;
    if (!s->counter)
        MPI_Win_unlock_all(s->win);
    MPI_Win_free(&s->win);
    s->counter = NULL;
}

/* One atomic operation on the counter: add n (MPI_SUM) or replace by n (MPI_REPLACE). */
static int update(tessi_mio_file *mf, int64_t n, MPI_Op op, int64_t *old, const char *who)
{
    tessi_mio_shared *s = &mf->shared;
    if (s->counter) {
        *old = op == MPI_SUM ? __atomic_fetch_add(s->counter, n, __ATOMIC_SEQ_CST)
                             : __atomic_exchange_n(s->counter, n, __ATOMIC_SEQ_CST);
        return MPI_SUCCESS;
    }
    int rc = MPI_Fetch_and_op(&n, old, MPI_INT64_T, 0, 0, op, s->win);
    if (rc == MPI_SUCCESS)
        rc = MPI_Win_flush(0, s->win);
    return rc == MPI_SUCCESS ? MPI_SUCCESS : rma_error(rc, "MPI_Fetch_and_op", who);
}

int tessi_mio_shared_add(tessi_mio_file *mf, int64_t n, int64_t *old, const char *who)
{
    return update(mf, n, MPI_SUM, old, who);
}

int tessi_mio_shared_store(tessi_mio_file *mf, int64_t v, const char *who)
{
    int64_t old;
    return mf->rank == 0 ? update(mf, v, MPI_REPLACE, &old, who) : MPI_SUCCESS;
}

/* ------------------------------------------------------------------ entry points */

TESSI_MIO_API int PMPI_File_get_position_shared(MPI_File fh, MPI_Offset *offset)
{
    TESSI_MIO_FORWARD(MPI_File_get_position_shared, fh, offset);
    static const char who[] = "MPI_File_get_position_shared";
    tessi_mio_file *mf = tessi_mio_lookup(fh);
    int64_t at = 0;
    if (!mf)
        return tessi_mio_raise(NULL, tessi_mio_error(MPI_ERR_FILE, who, "invalid file handle"));
    if (!offset)
        return tessi_mio_raise(mf, tessi_mio_error(MPI_ERR_ARG, who, "offset is NULL"));
    int rc = tessi_mio_shared_add(mf, 0, &at, who);
    if (rc == MPI_SUCCESS)
        *offset = at;
    return tessi_mio_raise(mf, rc);
}
TESSI_MIO_ALIAS(MPI_File_get_position_shared);

TESSI_MIO_API int PMPI_File_seek_shared(MPI_File fh, MPI_Offset offset, int whence)
{
    TESSI_MIO_FORWARD(MPI_File_seek_shared, fh, offset, whence);
    static const char who[] = "MPI_File_seek_shared";
    tessi_mio_file *mf = tessi_mio_lookup(fh);
    int code = MPI_SUCCESS;
    if (!mf)
        return tessi_mio_raise(NULL, tessi_mio_error(MPI_ERR_FILE, who, "invalid file handle"));
    if (whence != MPI_SEEK_SET && whence != MPI_SEEK_CUR && whence != MPI_SEEK_END)
        code = tessi_mio_error(MPI_ERR_ARG, who, "whence %d is not MPI_SEEK_SET, _CUR or "
                               "_END", whence);
    int64_t same[2] = {offset, whence};
    code = tessi_mio_agree_same(mf->comm, code, same, 2, "offsets or whence", who);
    /* rank 0 moves the pointer; the agreement after it tells everyone (and keeps anybody from
       using the pointer before it has moved) */
    if (code == MPI_SUCCESS && mf->rank == 0) {
        int64_t base = 0, to;
        if (whence == MPI_SEEK_CUR)
            code = tessi_mio_shared_add(mf, 0, &base, who);
        else if (whence == MPI_SEEK_END)
            code = tessi_mio_view_eof(mf, who, &base);
        if (code == MPI_SUCCESS && (__builtin_add_overflow(base, offset, &to) || to < 0))
            code = tessi_mio_error(MPI_ERR_ARG, who, "the pointer would move to a negative "
                                   "offset (%lld %+lld)", (long long)base, (long long)offset);
        if (code == MPI_SUCCESS)
            code = tessi_mio_shared_store(mf, to, who);
    }
    return tessi_mio_raise(mf, tessi_mio_agree(mf->comm, code, who));
}
TESSI_MIO_ALIAS(MPI_File_seek_shared);
