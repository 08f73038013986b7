# The ABI (issue 8): the shared libraries export only the documented tess_ API, every public
# function declared is exported (tests/unit/test_exports.sh, which skips with 77 without nm).
add_test(NAME test_exports
         COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/unit/test_exports.sh ${CMAKE_NM}
                 $<TARGET_FILE:tessera> ${PROJECT_SOURCE_DIR}/include/tessera.h
                 ${PROJECT_SOURCE_DIR}/include/tessera_group.h)
set_tests_properties(test_exports PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 60 LABELS unit)
if(MPI_C_FOUND)
  add_test(NAME test_exports_mpi
           COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/unit/test_exports.sh ${CMAKE_NM}
                   $<TARGET_FILE:tessera_mpi> ${PROJECT_SOURCE_DIR}/include/tessera_mpi.h)
  set_tests_properties(test_exports_mpi PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 60 LABELS unit)
endif()

# The layers (issue 8): no include from src/base, type, view, model, driver or method into
# src/core, and no file-level include cycle (tests/unit/test_layers.sh).
add_test(NAME test_layers
         COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/unit/test_layers.sh ${PROJECT_SOURCE_DIR})
set_tests_properties(test_layers PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 60 LABELS unit)
