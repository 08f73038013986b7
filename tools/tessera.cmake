# The `tessera` command: subcommand dispatch (tools/tessera.c), calibration, and the benchmark
# workloads (bench/, the library tessera_bench, which test_workloads links too). With MPI found,
# the MPI comparison columns and the collective workloads are compiled in (TESS_BENCH_MPI=1).

# The option parser and the --results lines need no Tessera: tessera-formats (bench/formats.c, a
# plain MPI program built in tests/external.cmake) uses them too.
add_library(tessera_bench_options STATIC ${PROJECT_SOURCE_DIR}/bench/options.c
                                         ${PROJECT_SOURCE_DIR}/bench/report.c)
target_include_directories(tessera_bench_options PUBLIC ${PROJECT_SOURCE_DIR}/bench)

set(TESS_BENCH_SOURCES common.c types.c types_shapes.c indep.c pmd.c pmd_run.c log.c)
set(TESS_BENCH_COLL_SOURCES coll_types.c coll_options.c coll_verify.c coll_runner.c coll_report.c
                            tile.c block3d.c flash.c hpio.c btio.c mpiio.c)
if(MPI_C_FOUND)
  list(APPEND TESS_BENCH_SOURCES ${TESS_BENCH_COLL_SOURCES})
endif()
list(TRANSFORM TESS_BENCH_SOURCES PREPEND ${PROJECT_SOURCE_DIR}/bench/)
add_library(tessera_bench STATIC ${TESS_BENCH_SOURCES})
target_include_directories(tessera_bench PUBLIC ${PROJECT_SOURCE_DIR}/bench ${PROJECT_SOURCE_DIR}/tools)
target_link_libraries(tessera_bench PUBLIC tessera_bench_options)
# src/ for the internal headers of workloads that call a driver directly (log.c)
target_include_directories(tessera_bench PRIVATE ${PROJECT_SOURCE_DIR}/src)
if(MPI_C_FOUND)
  target_link_libraries(tessera_bench PUBLIC tessera_mpi_static MPI::MPI_C)
  target_compile_definitions(tessera_bench PUBLIC TESS_BENCH_MPI=1)
  # `tessera bench mpiio` (bench/mpiio.c) launches these: the build tree's (options override them)
  target_compile_definitions(tessera_bench PRIVATE TESS_BENCH_MPIEXEC="${MPIEXEC_EXECUTABLE}")
  if(TARGET tessera_mpiio)
    target_compile_definitions(tessera_bench PRIVATE
                               TESS_BENCH_MPIIO_LIB="$<TARGET_FILE:tessera_mpiio>")
  endif()
  if(TARGET tessera_formats)
    target_compile_definitions(tessera_bench PRIVATE
      TESS_BENCH_FORMATS="$<TARGET_FILE:tessera_formats>"
      TESS_BENCH_FORMATS_BUILT="$<TARGET_PROPERTY:tessera_formats,TESS_FORMATS>")
  endif()
else()
  target_link_libraries(tessera_bench PUBLIC tessera_static)
endif()

# The target is tessera_cli because `tessera` names the shared library; the program is `tessera`.
add_executable(tessera_cli ${PROJECT_SOURCE_DIR}/tools/tessera.c ${PROJECT_SOURCE_DIR}/tools/calibrate.c
                           ${PROJECT_SOURCE_DIR}/tools/demo.c ${PROJECT_SOURCE_DIR}/tools/log.c)
# src/ for the internal headers of tools that reach inside (calibrate: model/model.h)
target_include_directories(tessera_cli PRIVATE ${PROJECT_SOURCE_DIR}/src)
target_link_libraries(tessera_cli PRIVATE tessera_bench m)
set_target_properties(tessera_cli PROPERTIES OUTPUT_NAME tessera)
install(TARGETS tessera_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
