/*
 * comm_mpi.h - the group transport (struct tess_group_ops, tessera_group.h) over an MPI
 * communicator. Internal to libtessera_mpi, which uses only the public headers of Tessera.
 */
#ifndef TESS_COMM_MPI_H
#define TESS_COMM_MPI_H

#include "tessera_group.h"
#include "tessera_mpi.h"

extern const struct tess_group_ops tessi_mpi_group_ops;

/**
 * Make the transport's context over comm, a communicator this call takes over (the caller has
 * duplicated it; it is freed with the context, or here on failure). Collective over comm: finds
 * every rank's node (MPI_Comm_split_type, shared memory) and agrees on failures, so all ranks
 * get a context or all get an error. Sets MPI_ERRORS_RETURN on comm.
 */
int tessi_mpi_group_create(MPI_Comm comm, void **ctx);

/** Turn an MPI error code into TESS_ERR_IO with MPI's text, naming the call. */
int tessi_mpi_error(int code, const char *call);

#endif
