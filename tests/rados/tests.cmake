# The RADOS driver (builds with librados only), on a real local cluster: the fixture test
# rados_cluster_start starts one monitor and 3 memstore OSDs with cephx on, rados_cluster_stop
# stops them; the tests find the cluster through TESS_TEST_RADOS_CONF (and CEPH_CONF, librados'
# own default). Where no cluster can start the start skips (77) and so do the tests.
# test_rados_faults starts and stops its own BlueStore cluster. Every test is labelled rados.
if(TESS_HAVE_RADOS)
  set(TESS_RADOS_DIR ${CMAKE_CURRENT_BINARY_DIR}/rados-cluster)
  set(TESS_RADOS_ENV TESS_TEST_RADOS_CONF=${TESS_RADOS_DIR}/ceph.conf
                     CEPH_CONF=${TESS_RADOS_DIR}/ceph.conf)
  # No cluster can start here (daemons not installed, or they do not come up): the start skips
  # with the reason and the end of the daemons' logs, leaves no conf, and every test skips.
  add_test(NAME rados_cluster_start
           COMMAND sh -c "\"$0\" cluster start --dir \"$1\" --osds 3 --cephx && exit 0; \
                          echo 'no RADOS cluster could start here: the RADOS tests skip'; \
                          tail -n 5 \"$1\"/log/*.log 2>/dev/null; exit 77"
                   $<TARGET_FILE:tessera_cli> ${TESS_RADOS_DIR})
  add_test(NAME rados_cluster_stop
           COMMAND $<TARGET_FILE:tessera_cli> cluster stop --dir ${TESS_RADOS_DIR})
  tess_test_properties(rados_cluster_start unit ON 180)
  tess_test_properties(rados_cluster_stop unit ON 60)
  set_tests_properties(rados_cluster_start PROPERTIES FIXTURES_SETUP rados)
  set_tests_properties(rados_cluster_stop PROPERTIES FIXTURES_CLEANUP rados)
  set_property(TEST rados_cluster_start rados_cluster_stop APPEND PROPERTY LABELS rados)

  # A test on the fixture's cluster: labels, environment, the fixture.
  function(tess_rados_test test label slow timeout)
    tess_test_properties(${test} ${label} ${slow} "${timeout}" ${TESS_RADOS_ENV})
    set_tests_properties(${test} PROPERTIES FIXTURES_REQUIRED rados)
    set_property(TEST ${test} APPEND PROPERTY LABELS rados)
  endfunction()

  # tess_add_rados_test(<name> [SLOW] [TIMEOUT s] [SOURCES f...] [ARGS a...]): <name>.c in this
  # folder
  function(tess_add_rados_test name)
    cmake_parse_arguments(T "SLOW" "TIMEOUT" "ARGS;SOURCES" ${ARGN})
    tess_test_program(${name} tessera_static "${T_SOURCES}" "")
    target_include_directories(${name} PRIVATE ${RADOS_INCLUDE_DIR})
    add_test(NAME ${name} COMMAND ${name} ${T_ARGS} WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
    tess_rados_test(${name} unit "${T_SLOW}" "${T_TIMEOUT}")
  endfunction()

  # The driver conformance suite (tests/driver/test_drivers.c) on the cluster.
  add_test(NAME test_drivers_rados COMMAND test_drivers --needs ${TESS_RADOS_DIR}/ceph.conf
                                          rados=tessera/ striping_unit=4096
                                          striping_factor=3
           WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
  tess_rados_test(test_drivers_rados unit OFF "")

  # Concurrent collective writers (MPI, two groups of ranks): at 2 ranks in every tree (MPICH's
  # too), at 4 in the optimized one.
  if(MPI_C_FOUND)
    tess_test_program(test_rados_collective tessera_mpi_static "" "")
    target_include_directories(test_rados_collective PRIVATE ${RADOS_INCLUDE_DIR})
    set(nps 2)
    if(NOT TESS_SANITIZE)
      list(APPEND nps 4)
    endif()
    foreach(np ${nps})
      add_test(NAME test_rados_collective_np${np}
               COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${np} ${TESS_MPIEXEC_FLAGS}
                       $<TARGET_FILE:test_rados_collective>
               WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
      tess_rados_test(test_rados_collective_np${np} mpi ON 300)
    endforeach()
    # The RADOS bench end to end on a small tile (every method verifies what it reads back; the
    # untimed settling of the file between ops must keep the bytes): exit 0 only when all agree.
    # Optimized build only: under the sanitizers the CLI's mpirun children report the MPI and
    # Ceph plugins' allocations, unloaded before exit, as leaks of unknown modules.
    if(NOT TESS_SANITIZE)
      add_test(NAME bench_tile_rados
               COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 2 ${TESS_MPIEXEC_FLAGS}
                       $<TARGET_FILE:tessera_cli> bench tile --driver rados
                       --cluster ${TESS_RADOS_DIR} --frames 1 --tile-w 64 --tile-h 48
                       --overlap-x 8 --overlap-y 4 --methods list,sieve,datatype,tp-datatype
                       --budget 0.2 --reps 1 --hint striping_unit=4096 --hint striping_factor=3
               WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
      tess_rados_test(bench_tile_rados mpi OFF 300)
    endif()
  endif()

  # Under the sanitizers (a second pass of the same code, several times slower) the contract,
  # oracle and hostile-request tests run, smaller; the multi-process and fault tests, which
  # test the cluster's behaviour more than new code paths, run in the optimized build only.
  tess_add_rados_test(test_rados_driver)
  if(TESS_SANITIZE)
    tess_add_rados_test(test_rados_oracle SLOW ARGS 15 SOURCES ${TESS_RANDTYPE_SOURCES})
    tess_add_rados_test(test_rados_hostile SLOW ARGS $<TARGET_FILE:test_decode_fuzz> 300)
  else()
    tess_add_rados_test(test_rados_oracle SLOW SOURCES ${TESS_RANDTYPE_SOURCES})
    tess_add_rados_test(test_rados_hostile SLOW ARGS $<TARGET_FILE:test_decode_fuzz>)
    tess_add_rados_test(test_rados_concurrent SLOW)
    # its own cluster: alone, so that its timing bounds hold on two cores
    tess_add_rados_test(test_rados_faults SLOW ARGS $<TARGET_FILE:tessera_cli>)
    set_tests_properties(test_rados_faults PROPERTIES RUN_SERIAL ON)
  endif()
endif()
