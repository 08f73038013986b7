# The installed package (issue 8): `cmake --install` into a temporary prefix, then a small program
# built against it with pkg-config (tessera, tessera-mpi) and with find_package(Tessera)
# (Tessera::tessera, Tessera::tessera_mpi), and run. Not in sanitizer builds: their libraries
# need the sanitizer runtime in every program that links them.
if(NOT TESS_SANITIZE)
  set(TESS_INSTALL_TEST_ARGS ${CMAKE_C_COMPILER})
  if(MPI_C_FOUND)
    list(APPEND TESS_INSTALL_TEST_ARGS ${MPI_C_COMPILER} ${MPIEXEC_EXECUTABLE} ${TESS_MPIEXEC_FLAGS})
  endif()
  add_test(NAME test_install
           COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/install/run.sh ${PROJECT_BINARY_DIR}
                   ${TESS_INSTALL_TEST_ARGS})
  set_tests_properties(test_install PROPERTIES TIMEOUT 120 LABELS unit
    ENVIRONMENT "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;OMPI_MCA_rmaps_base_oversubscribe=1")
endif()
