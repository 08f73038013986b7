# MPI datatype import (tess_type_from_mpi, src/mpi/import.c): random nested MPI datatypes of
# every combiner checked against the MPI library's own bounds, MPI_Pack and MPI_Unpack.
tess_add_mpi_test(test_type_from_mpi NP 1 TIMEOUT 120
                  SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/mpi/from_mpi_check.c)
# named and pair types, sizes beyond 2^32, the error cases
tess_add_mpi_test(test_type_from_mpi_fixed NP 1
                  SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/mpi/from_mpi_check.c)
