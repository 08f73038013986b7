# The `tessera` command: subcommand dispatch (tools/tessera.c), calibration, and the benchmark
# workloads (bench/, the library tessera_bench, which test_workloads links too). With MPI found,
# the MPI comparison columns and the collective workloads are compiled in (TESS_BENCH_MPI=1).
set(TESS_BENCH_SOURCES common.c options.c report.c types.c types_shapes.c indep.c pmd.c pmd_run.c)
set(TESS_BENCH_COLL_SOURCES coll_types.c coll_options.c coll_verify.c coll_runner.c coll_report.c
                            tile.c block3d.c flash.c hpio.c btio.c)
if(MPI_C_FOUND)
  list(APPEND TESS_BENCH_SOURCES ${TESS_BENCH_COLL_SOURCES})
endif()
list(TRANSFORM TESS_BENCH_SOURCES PREPEND ${PROJECT_SOURCE_DIR}/bench/)
add_library(tessera_bench STATIC ${TESS_BENCH_SOURCES})
target_include_directories(tessera_bench PUBLIC ${PROJECT_SOURCE_DIR}/bench ${PROJECT_SOURCE_DIR}/tools)
if(MPI_C_FOUND)
  target_link_libraries(tessera_bench PUBLIC tessera_mpi_static MPI::MPI_C)
  target_compile_definitions(tessera_bench PUBLIC TESS_BENCH_MPI=1)
else()
  target_link_libraries(tessera_bench PUBLIC tessera_static)
endif()

# The target is tessera_cli because `tessera` names the shared library; the program is `tessera`.
add_executable(tessera_cli ${PROJECT_SOURCE_DIR}/tools/tessera.c ${PROJECT_SOURCE_DIR}/tools/calibrate.c
                           ${PROJECT_SOURCE_DIR}/tools/demo.c)
# src/ for the internal headers of tools that reach inside (calibrate: model/model.h)
target_include_directories(tessera_cli PRIVATE ${PROJECT_SOURCE_DIR}/src)
target_link_libraries(tessera_cli PRIVATE tessera_bench m)
set_target_properties(tessera_cli PROPERTIES OUTPUT_NAME tessera)
install(TARGETS tessera_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
