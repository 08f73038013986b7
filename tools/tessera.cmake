# The `tessera` command: subcommand dispatch (tools/tessera.c) and the benchmark workloads
# (bench/). With MPI found, the MPI comparison columns are compiled in (TESS_BENCH_MPI=1).
# The target is tessera_cli because `tessera` names the shared library; the program is `tessera`.
add_executable(tessera_cli
  ${PROJECT_SOURCE_DIR}/tools/tessera.c
  ${PROJECT_SOURCE_DIR}/tools/calibrate.c
  ${PROJECT_SOURCE_DIR}/bench/common.c
  ${PROJECT_SOURCE_DIR}/bench/types.c
  ${PROJECT_SOURCE_DIR}/bench/indep.c
  ${PROJECT_SOURCE_DIR}/bench/pmd.c)
# src/ for the internal headers of tools that reach inside (calibrate: model/model.h)
target_include_directories(tessera_cli PRIVATE ${PROJECT_SOURCE_DIR}/bench ${PROJECT_SOURCE_DIR}/tools
                                               ${PROJECT_SOURCE_DIR}/src)
target_link_libraries(tessera_cli PRIVATE tessera_static)
if(MPI_C_FOUND)
  # the collective workloads need libtessera_mpi
  target_sources(tessera_cli PRIVATE
    ${PROJECT_SOURCE_DIR}/bench/coll_common.c ${PROJECT_SOURCE_DIR}/bench/tile.c
    ${PROJECT_SOURCE_DIR}/bench/block3d.c ${PROJECT_SOURCE_DIR}/bench/flash.c
    ${PROJECT_SOURCE_DIR}/bench/hpio.c ${PROJECT_SOURCE_DIR}/bench/btio.c
    ${PROJECT_SOURCE_DIR}/bench/mpiio.c)
  target_link_libraries(tessera_cli PRIVATE tessera_mpi_static MPI::MPI_C)
  target_compile_definitions(tessera_cli PRIVATE TESS_BENCH_MPI=1)
  # `tessera bench mpiio` launches these (the build tree's; options override them)
  target_compile_definitions(tessera_cli PRIVATE TESS_BENCH_MPIEXEC="${MPIEXEC_EXECUTABLE}")
  if(TARGET tessera_mpiio)
    target_compile_definitions(tessera_cli PRIVATE
                               TESS_BENCH_MPIIO_LIB="$<TARGET_FILE:tessera_mpiio>")
  endif()
  if(TARGET tessera_formats)
    target_compile_definitions(tessera_cli PRIVATE
      TESS_BENCH_FORMATS="$<TARGET_FILE:tessera_formats>"
      TESS_BENCH_FORMATS_BUILT="$<TARGET_PROPERTY:tessera_formats,TESS_FORMATS>")
  endif()
endif()
set_target_properties(tessera_cli PROPERTIES OUTPUT_NAME tessera)
install(TARGETS tessera_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
