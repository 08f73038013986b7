# The `tessera` command: subcommand dispatch (tools/tessera.c), calibration, and the benchmark
# workloads (bench/, the library tessera_bench, which test_workloads links too). With MPI found,
# the MPI comparison columns and the collective workloads are compiled in (TESS_BENCH_MPI=1).

# The option parser and the --results lines need no Tessera: tessera-formats (bench/formats.c, a
# plain MPI program built in tests/external/tests.cmake) uses them too.
add_library(tessera_bench_options STATIC ${PROJECT_SOURCE_DIR}/bench/options.c
                                         ${PROJECT_SOURCE_DIR}/bench/report.c)
target_include_directories(tessera_bench_options PUBLIC ${PROJECT_SOURCE_DIR}/bench)

set(TESS_BENCH_SOURCES common.c types.c types_shapes.c indep.c sweep.c pmd.c pmd_run.c log.c)
set(TESS_BENCH_COLL_SOURCES coll_types.c coll_options.c coll_verify.c coll_runner.c coll_report.c
                            tile.c block3d.c flash.c hpio.c btio.c mpiio.c)
if(MPI_C_FOUND)
  list(APPEND TESS_BENCH_SOURCES ${TESS_BENCH_COLL_SOURCES})
endif()
# the OpenMP benchmark needs libtessera_omp (built where the compiler has OpenMP)
if(TARGET tessera_omp_static)
  list(APPEND TESS_BENCH_SOURCES omp.c)
endif()
list(TRANSFORM TESS_BENCH_SOURCES PREPEND ${PROJECT_SOURCE_DIR}/bench/)
add_library(tessera_bench STATIC ${TESS_BENCH_SOURCES})
target_include_directories(tessera_bench PUBLIC ${PROJECT_SOURCE_DIR}/bench ${PROJECT_SOURCE_DIR}/tools)
target_link_libraries(tessera_bench PUBLIC tessera_bench_options)
# src/ for the internal headers of workloads that call a driver directly (log.c)
target_include_directories(tessera_bench PRIVATE ${PROJECT_SOURCE_DIR}/src)
if(TARGET tessera_omp_static)
  target_link_libraries(tessera_bench PUBLIC tessera_omp_static)
  target_compile_definitions(tessera_bench PUBLIC TESS_BENCH_OMP=1)
endif()
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
if(TESS_HAVE_RADOS)
  # `tessera cluster`: the cluster script is embedded in the program
  add_custom_command(OUTPUT ${PROJECT_BINARY_DIR}/cluster_sh.c
    COMMAND ${CMAKE_COMMAND} -DIN=${PROJECT_SOURCE_DIR}/tools/cluster.sh
            -DOUT=${PROJECT_BINARY_DIR}/cluster_sh.c -DNAME=tess_cluster_sh
            -P ${PROJECT_SOURCE_DIR}/cmake/embed.cmake
    DEPENDS ${PROJECT_SOURCE_DIR}/tools/cluster.sh ${PROJECT_SOURCE_DIR}/cmake/embed.cmake)
  target_sources(tessera_cli PRIVATE ${PROJECT_SOURCE_DIR}/tools/cluster.c
                                     ${PROJECT_BINARY_DIR}/cluster_sh.c)
  target_compile_definitions(tessera_cli PRIVATE TESS_HAVE_RADOS=1)
  if(MPI_C_FOUND)
    # `tessera bench tile|block3d|flash --driver rados`: its delays are set through cluster.c,
    # so the collective workloads on RADOS are compiled into the program (test_workloads, which
    # links tessera_bench alone, has no --driver rados)
    target_sources(tessera_cli PRIVATE ${PROJECT_SOURCE_DIR}/bench/coll_rados.c)
  endif()
endif()
