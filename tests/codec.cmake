# Datatype wire form (encode/decode), subarray and darray: unit tests, the decode fuzzers and
# the comparison with the MPI library's MPI_Type_create_subarray / MPI_Type_create_darray.
tess_add_unit_test(test_subarray)
tess_add_unit_test(test_codec)
# 200000 generated and mutated inputs; a long run: tests/test_decode_fuzz 5000000 <seed>
tess_add_unit_test(test_decode_fuzz SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/summarize.c ARGS 200000)
# Open MPI's own allocations look like leaks to LeakSanitizer; our code's leaks are caught by the
# unit tests above.
tess_add_mpi_test(test_subarray_mpi NP 1 ENVIRONMENT ASAN_OPTIONS=detect_leaks=0)

# libFuzzer target: CC=clang cmake -DTESS_FUZZ=ON ...; then tests/fuzz_decode corpus_dir
# (seed it with tests/test_decode_fuzz --corpus corpus_dir).
if(TESS_FUZZ)
  if(NOT CMAKE_C_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "TESS_FUZZ=ON needs clang: CC=clang cmake -DTESS_FUZZ=ON ...")
  endif()
  # libFuzzer steers by coverage, so the library is compiled again with instrumentation.
  add_library(tessera_fuzzcov STATIC ${TESS_SOURCES})
  target_include_directories(tessera_fuzzcov PUBLIC ${PROJECT_SOURCE_DIR}/include
                                             PRIVATE ${PROJECT_SOURCE_DIR}/src)
  target_compile_options(tessera_fuzzcov PRIVATE -fsanitize=fuzzer-no-link,address,undefined)
  target_link_libraries(tessera_fuzzcov PUBLIC Threads::Threads)
  if(URING_FOUND)
    target_compile_definitions(tessera_fuzzcov PRIVATE TESS_HAVE_LIBURING=1)
    target_link_libraries(tessera_fuzzcov PUBLIC PkgConfig::URING)
  endif()
  add_executable(fuzz_decode ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/fuzz_decode.c
                             ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/summarize.c)
  target_compile_options(fuzz_decode PRIVATE -fsanitize=fuzzer,address,undefined)
  target_link_options(fuzz_decode PRIVATE -fsanitize=fuzzer,address,undefined)
  target_link_libraries(fuzz_decode PRIVATE tessera_fuzzcov)
endif()
