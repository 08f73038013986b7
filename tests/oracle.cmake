# The random-datatype oracle (tests/randtype.c): Tessera's datatype engine checked against a
# brute-force byte map (test_type_oracle), hand-worked cases (test_type_basic) and, with MPI,
# the MPI library's MPI_Pack/MPI_Unpack (test_type_mpi). Each program takes -n <types> and
# -s <seed>; a failure prints the seed and type index to rerun with -i <index> -n 1.
tess_add_unit_test(test_type_basic)
tess_add_unit_test(test_type_badinput)
# the heap regular types hold (mallinfo2; re-runs itself with glibc's thread cache off)
tess_add_unit_test(test_type_memory)
tess_add_unit_test(test_type_struct)
# the pack kernels (src/type/plan.h), each against a brute-force byte map
tess_add_unit_test(test_pack_kernels)
# summaries of types sharing subtrees exponentially often: linear in distinct nodes
tess_add_unit_test(test_type_shared TIMEOUT 60)
tess_add_unit_test(test_type_oracle SLOW SOURCES ${TESS_RANDTYPE_SOURCES})
# The MPI libraries leak at finalize from components they dlopen (no usable stacks to suppress);
# Tessera's own leaks are caught by test_type_oracle, which runs the same code.
tess_add_mpi_test(test_type_mpi NP 1 SLOW SOURCES ${TESS_RANDTYPE_SOURCES}
                  DEFINITIONS TESS_TEST_MPI=1 ENVIRONMENT ASAN_OPTIONS=detect_leaks=0)
# struct extents (alignment padding) and packing against MPI_Type_create_struct
tess_add_mpi_test(test_struct_mpi NP 1 ENVIRONMENT ASAN_OPTIONS=detect_leaks=0)
# the pack kernels on the benchmark's shapes against MPI_Pack/MPI_Unpack
tess_add_mpi_test(test_pack_mpi NP 1 ENVIRONMENT ASAN_OPTIONS=detect_leaks=0)
