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
    ${PROJECT_SOURCE_DIR}/bench/hpio.c ${PROJECT_SOURCE_DIR}/bench/btio.c)
  target_link_libraries(tessera_cli PRIVATE tessera_mpi_static MPI::MPI_C)
  target_compile_definitions(tessera_cli PRIVATE TESS_BENCH_MPI=1)
endif()
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
    target_sources(tessera_cli PRIVATE ${PROJECT_SOURCE_DIR}/bench/coll_rados.c)
  endif()
endif()
