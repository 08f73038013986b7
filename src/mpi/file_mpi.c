/*
 * file_mpi.c - tess_file_open_mpi: a file opened by a group of MPI processes.
 *
 * Steps, each ending in an agreement so that every rank gets the same result: the arguments
 * (the same path and flags everywhere: compared through a hash), the creation by rank 0 alone
 * (so TESS_EXCL means "nobody had created it"), the open by every other rank, the group's
 * communicator table (comm_mpi.c) and the collective state (core/collective.c). Whatever fails,
 * the handles opened so far are closed and the duplicated communicator freed.
 */
#include "tessera_mpi.h"

#include "core/collective.h"
#include "mpi/comm_mpi.h"

/* FNV-1a of the path: equal paths give equal hashes (the check compares hashes). */
static int64_t path_hash(const char *p)
{
    uint64_t h = UINT64_C(14695981039346656037);
    for (; *p; p++)
        h = (h ^ (unsigned char)*p) * UINT64_C(1099511628211);
    return (int64_t)(h >> 1);
}

/* The verdict of rc over comm, as tessi_coll_agree gives it (before the group's table exists). */
static int agree(MPI_Comm comm, int rank, int rc)
{
    int64_t v[2] = {rc, rc ? -(int64_t)rank - 1 : 0};
    int err = MPI_Allreduce(MPI_IN_PLACE, v, 2, MPI_INT64_T, MPI_MIN, comm);
    if (rc || err != MPI_SUCCESS)
        return rc ? rc : tessi_mpi_error(err, "MPI_Allreduce");
    if (v[0])
        return tessi_error((int)v[0], "tess_file_open_mpi: failed on rank %lld: %s",
                           (long long)(-v[1] - 1), tess_strerror((int)v[0]));
    return 0;
}

/* The same path and flags on every rank (and the local arguments present). */
static int check_args(MPI_Comm comm, int rank, const char *path, int flags, tess_file **out)
{
    int rc = !path || !out ? tessi_error(TESS_ERR_ARG, "tess_file_open_mpi: %s is NULL",
                                         path ? "out" : "path")
                           : 0;
    int64_t h = path ? path_hash(path) : 0;
    int64_t v[6] = {rc, rc ? -(int64_t)rank - 1 : 0, h, -h, flags, -(int64_t)flags};
    int err = MPI_Allreduce(MPI_IN_PLACE, v, 6, MPI_INT64_T, MPI_MIN, comm);
    if (rc || err != MPI_SUCCESS)
        return rc ? rc : tessi_mpi_error(err, "MPI_Allreduce");
    if (v[0])
        return tessi_error((int)v[0], "tess_file_open_mpi: failed on rank %lld: %s",
                           (long long)(-v[1] - 1), tess_strerror((int)v[0]));
    if (v[2] != -v[3] || v[4] != -v[5])
        return tessi_error(TESS_ERR_ARG, "tess_file_open_mpi: the processes give different %s",
                           v[2] != -v[3] ? "paths" : "flags");
    return 0;
}

int tess_file_open_mpi(MPI_Comm comm, const char *path, int flags, const tess_info *info,
                       tess_file **out)
{
    int inited = 0, finalized = 0, rank = 0, rc;
    MPI_Comm dup = MPI_COMM_NULL;
    tess_file *f = NULL;
    void *ctx = NULL;
    MPI_Initialized(&inited);
    MPI_Finalized(&finalized);
    if (!inited || finalized)
        return tessi_error(TESS_ERR_ARG, "tess_file_open_mpi: MPI is not initialized");
    if (comm == MPI_COMM_NULL)
        return tessi_error(TESS_ERR_ARG, "tess_file_open_mpi: comm is MPI_COMM_NULL");
    if ((rc = MPI_Comm_dup(comm, &dup)) != MPI_SUCCESS)
        return tessi_mpi_error(rc, "MPI_Comm_dup");
    MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
    MPI_Comm_rank(dup, &rank);
    if ((rc = check_args(dup, rank, path, flags, out)))
        goto fail;
    bool create = flags & TESS_CREATE;
    if (create && (rc = agree(dup, rank, rank == 0 ? tess_file_open(path, flags, info, &f) : 0)))
        goto fail;
    if ((!create || rank != 0) &&
        (rc = tess_file_open(path, flags & ~(TESS_CREATE | TESS_EXCL), info, &f)))
        f = NULL;
    if ((rc = agree(dup, rank, rc)))
        goto fail;
    rc = tessi_comm_mpi_create(dup, &ctx); /* takes over dup */
    dup = MPI_COMM_NULL;
    if (rc || (rc = tessi_coll_attach(f, &tessi_comm_mpi, ctx))) /* takes over ctx */
        goto fail;
    *out = f;
    return 0;
fail:
    if (f) /* not collective yet: closes this handle only */
        tess_file_close(f);
    if (dup != MPI_COMM_NULL)
        MPI_Comm_free(&dup);
    return rc;
}
