# Files, views, hints, the independent methods (naive, sieve, list, auto) over the POSIX driver:
# the byte-map oracle on random views, bad input, reads past the end of file, injected driver
# faults, concurrent sieving and contiguous writers, the bulk region path of naive and list.
tess_add_unit_test(test_file_oracle SLOW SOURCES ${TESS_RANDTYPE_SOURCES})
tess_add_unit_test(test_file_badinput)
tess_add_unit_test(test_file_eof)
tess_add_unit_test(test_file_fault)
tess_add_unit_test(test_file_concurrent)
tess_add_unit_test(test_file_hints)
tess_add_unit_test(test_file_features)
tess_add_unit_test(test_file_regions SOURCES ${TESS_RANDTYPE_SOURCES})
# The benchmarks' turns on one file (bench/common.c): what keeps sweep, pmd and indep fair.
tess_add_unit_test(test_bench_turns LIBRARIES tessera_bench)
