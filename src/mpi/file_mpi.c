/*
 * file_mpi.c - tess_file_open_mpi: a file opened by a group of MPI processes. The communicator
 * is duplicated, the transport over it made (comm_mpi.c, collective), and the rest is
 * tess_file_open_group's: validation everywhere, creation by rank 0, agreement at every step.
 */
#include "comm_mpi.h"

int tess_file_open_mpi(MPI_Comm comm, const char *path, int flags, const tess_info *info,
                       tess_file **out)
{
    int inited = 0, finalized = 0, rc;
    MPI_Comm dup = MPI_COMM_NULL;
    void *ctx = NULL;
    MPI_Initialized(&inited);
    MPI_Finalized(&finalized);
    if (!inited || finalized)
        return tess_error_set(TESS_ERR_ARG, "tess_file_open_mpi: MPI is not initialized");
    if (comm == MPI_COMM_NULL)
        return tess_error_set(TESS_ERR_ARG, "tess_file_open_mpi: comm is MPI_COMM_NULL");
    if ((rc = MPI_Comm_dup(comm, &dup)) != MPI_SUCCESS)
        return tessi_mpi_error(rc, "MPI_Comm_dup");
    if ((rc = tessi_mpi_group_create(dup, &ctx))) /* takes over dup */
        return rc;
    return tess_file_open_group(&tessi_mpi_group_ops, ctx, path, flags, info, out);
}
