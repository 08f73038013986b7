# The collective workloads of `tessera bench tile|block3d|flash|hpio|btio` (bench/), small, in
# their --test mode at 2 and 4 processes: every Tessera method's file byte for byte against the
# expected image and the other methods' files, every read against the data written.
if(MPI_C_FOUND)
  tess_add_mpi_test(test_workloads NP 2 TIMEOUT 60)
  tess_add_mpi_test(test_workloads NP 4 TIMEOUT 60)
  target_sources(test_workloads PRIVATE
    ${PROJECT_SOURCE_DIR}/bench/common.c
    ${PROJECT_SOURCE_DIR}/bench/coll_common.c
    ${PROJECT_SOURCE_DIR}/bench/tile.c
    ${PROJECT_SOURCE_DIR}/bench/block3d.c
    ${PROJECT_SOURCE_DIR}/bench/flash.c
    ${PROJECT_SOURCE_DIR}/bench/hpio.c
    ${PROJECT_SOURCE_DIR}/bench/btio.c)
  target_include_directories(test_workloads PRIVATE ${PROJECT_SOURCE_DIR}/bench ${PROJECT_SOURCE_DIR}/tools)
endif()
