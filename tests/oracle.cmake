# The random-datatype oracle (tests/randtype.c): Tessera's datatype engine checked against a
# brute-force byte map (test_type_oracle), hand-worked cases (test_type_basic) and, with MPI,
# the MPI library's MPI_Pack/MPI_Unpack (test_type_mpi). Each program takes -n <types> and
# -s <seed>; a failure prints the seed and type index to rerun with -i <index> -n 1.
tess_add_unit_test(test_type_basic)
tess_add_unit_test(test_type_oracle SLOW SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/randtype.c)
# The MPI libraries leak at finalize from components they dlopen (no usable stacks to suppress);
# Tessera's own leaks are caught by test_type_oracle, which runs the same code.
tess_add_mpi_test(test_type_mpi NP 1 SLOW SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/randtype.c
                  DEFINITIONS TESS_TEST_MPI=1 ENVIRONMENT ASAN_OPTIONS=detect_leaks=0)
