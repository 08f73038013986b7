/*
 * comm_mpi.h - the communicator table (method/comm.h) over an MPI communicator. Internal to
 * libtessera_mpi.
 */
#ifndef TESS_COMM_MPI_H
#define TESS_COMM_MPI_H

#include <mpi.h>

#include "method/comm.h"

extern const struct tessi_comm tessi_comm_mpi;

/**
 * Make the table's context over comm, a communicator this call takes over (the caller has
 * duplicated it; it is freed with the context, or here on failure). Collective over comm: finds
 * every rank's node (MPI_Comm_split_type, shared memory) and agrees on failures, so all ranks
 * get a context or all get an error. Sets MPI_ERRORS_RETURN on comm.
 */
int tessi_comm_mpi_create(MPI_Comm comm, void **ctx);

/** Turn an MPI error code into TESS_ERR_IO with MPI's text, naming the call. */
int tessi_mpi_error(int code, const char *call);

#endif
