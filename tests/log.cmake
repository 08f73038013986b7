# The log-structured container (driver log): the merged index against a brute-force winner per
# byte, 2 processes x 2 threads writing at once against a byte map (flatten and stat through the
# tessera command), a writer killed with SIGKILL, damaged index tails, the refresh hint.
tess_add_unit_test(test_log TIMEOUT 120 ARGS $<TARGET_FILE:tessera_cli>)
# Under MPI: one container, a log per process, independent, interleaved (sieving under locks) and
# collective access against a byte map.
tess_add_mpi_test(test_log_mpi NP 2 TIMEOUT 120)
