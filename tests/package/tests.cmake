# The ABI (issue 8): the shared libraries export only the documented tess_ API, every public
# function declared is exported (tests/package/test_exports.sh, which skips with 77 without nm).
add_test(NAME test_exports
         COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/test_exports.sh ${CMAKE_NM}
                 $<TARGET_FILE:tessera> ${PROJECT_SOURCE_DIR}/include/tessera.h
                 ${PROJECT_SOURCE_DIR}/include/tessera_group.h
                 ${PROJECT_SOURCE_DIR}/include/tessera_team.h)
set_tests_properties(test_exports PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 60 LABELS unit)
if(TARGET tessera_omp)
  add_test(NAME test_exports_omp
           COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/test_exports.sh ${CMAKE_NM}
                   $<TARGET_FILE:tessera_omp> ${PROJECT_SOURCE_DIR}/include/tessera_omp.h)
  set_tests_properties(test_exports_omp PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 60 LABELS unit)
endif()
if(MPI_C_FOUND)
  add_test(NAME test_exports_mpi
           COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/test_exports.sh ${CMAKE_NM}
                   $<TARGET_FILE:tessera_mpi> ${PROJECT_SOURCE_DIR}/include/tessera_mpi.h)
  set_tests_properties(test_exports_mpi PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 60 LABELS unit)
endif()

# The layers (issue 8): no include from src/base, type, view, model, driver or method into
# src/core, and no file-level include cycle (tests/package/test_layers.sh).
add_test(NAME test_layers
         COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/test_layers.sh ${PROJECT_SOURCE_DIR})
set_tests_properties(test_layers PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 60 LABELS unit)

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
           COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/install/run.sh ${PROJECT_BINARY_DIR}
                   ${TESS_INSTALL_TEST_ARGS})
  set_tests_properties(test_install PROPERTIES TIMEOUT 120 LABELS unit
    ENVIRONMENT "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;OMPI_MCA_rmaps_base_oversubscribe=1")
endif()
