# Thread-collective I/O (tessera_team.h): every interface against a byte map, over plain pthreads
# teams; bad input on one member is an error on every member.
tess_add_unit_test(test_team TIMEOUT 120)
set_property(TEST test_team APPEND PROPERTY LABELS threads) # also under ThreadSanitizer
# The OpenMP interface (tessera_omp.h, libtessera_omp): every call of paper 001's Table 3.1,
# nested teams, end of file and bad input, with the build compiler's OpenMP runtime.
if(TARGET tessera_omp_static)
  tess_add_unit_test(test_omp TIMEOUT 120 LIBRARIES tessera_omp_static)
  set_property(TEST test_omp APPEND PROPERTY LABELS threads)
endif()
# Hybrid: a file opened over MPI accessed by a thread team in every rank (2 ranks x 2 threads).
tess_add_mpi_test(test_team_mpi NP 2 TIMEOUT 120)
