/*
 * mpi.h - Open MPI's mpi.h plus MPI_LB and MPI_UB (removed in MPI-3.0). Four of ROMIO's tests
 * (noncontig, i_noncontig, noncontig_coll, noncontig_coll2) still mark bounds with them; Open
 * MPI 4.1 keeps the two datatypes in libmpi but hides them from its header unless it was
 * configured with --enable-mpi1-compatibility. Only ROMIO's tests are compiled with this
 * directory on their include path; under MPICH, whose header still has both, it changes nothing.
 */
#include_next <mpi.h>

#if defined(OPEN_MPI) && !OMPI_ENABLE_MPI1_COMPAT
#undef MPI_LB
#undef MPI_UB
OMPI_DECLSPEC extern struct ompi_predefined_datatype_t ompi_mpi_lb;
OMPI_DECLSPEC extern struct ompi_predefined_datatype_t ompi_mpi_ub;
#define MPI_LB OMPI_PREDEFINED_GLOBAL(MPI_Datatype, ompi_mpi_lb)
#define MPI_UB OMPI_PREDEFINED_GLOBAL(MPI_Datatype, ompi_mpi_ub)
#endif
