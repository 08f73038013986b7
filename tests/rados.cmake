# The RADOS driver (builds with librados only): a local cluster (1 monitor, 3 memstore OSDs,
# cephx on) is started by the fixture test rados_cluster_start and stopped by rados_cluster_stop;
# the tests find it through TESS_TEST_RADOS_CONF. Without the Ceph daemons the start skips
# (77) and so do the tests. test_rados_faults starts and stops its own BlueStore cluster.
if(TESS_HAVE_RADOS)
  set(TESS_RADOS_DIR ${CMAKE_CURRENT_BINARY_DIR}/rados-cluster)
  add_test(NAME rados_cluster_start
           COMMAND $<TARGET_FILE:tessera_cli> cluster start --dir ${TESS_RADOS_DIR} --osds 3 --cephx)
  add_test(NAME rados_cluster_stop
           COMMAND $<TARGET_FILE:tessera_cli> cluster stop --dir ${TESS_RADOS_DIR})
  set_tests_properties(rados_cluster_start PROPERTIES FIXTURES_SETUP rados TIMEOUT 180
                       SKIP_RETURN_CODE 77)
  set_tests_properties(rados_cluster_stop PROPERTIES FIXTURES_CLEANUP rados TIMEOUT 60)
  function(tess_add_rados_test name)
    cmake_parse_arguments(T "" "TIMEOUT" "ARGS;SOURCES" ${ARGN})
    add_executable(${name} ${CMAKE_CURRENT_SOURCE_DIR}/rados/${name}.c ${T_SOURCES})
    target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/src ${CMAKE_CURRENT_SOURCE_DIR}
                               ${RADOS_INCLUDE_DIR})
    target_link_libraries(${name} PRIVATE tessera_static)
    add_test(NAME ${name} COMMAND ${name} ${T_ARGS} WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
    if(NOT T_TIMEOUT)
      set(T_TIMEOUT 300)
    endif()
    set_tests_properties(${name} PROPERTIES TIMEOUT ${T_TIMEOUT} SKIP_RETURN_CODE 77
                         FIXTURES_REQUIRED rados LABELS rados
                         ENVIRONMENT "TESS_TEST_RADOS_CONF=${TESS_RADOS_DIR}/ceph.conf")
  endfunction()
  # Under the sanitizers (a second pass of the same code, several times slower) the driver,
  # oracle and hostile-request tests run, smaller; the multi-process and fault tests, which test
  # the cluster's behaviour more than new code paths, run in the optimized build only.
  tess_add_rados_test(test_rados_driver)
  if(TESS_SANITIZE)
    tess_add_rados_test(test_rados_oracle ARGS 15 SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/randtype.c)
    tess_add_rados_test(test_rados_hostile ARGS $<TARGET_FILE:test_decode_fuzz> 300)
  else()
    tess_add_rados_test(test_rados_oracle SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/randtype.c)
    tess_add_rados_test(test_rados_hostile ARGS $<TARGET_FILE:test_decode_fuzz>)
    tess_add_rados_test(test_rados_concurrent)
    # its own cluster: alone, so that its timing bounds hold on two cores
    tess_add_rados_test(test_rados_faults ARGS $<TARGET_FILE:tessera_cli>)
    set_tests_properties(test_rados_faults PROPERTIES RUN_SERIAL ON)
  endif()
endif()
