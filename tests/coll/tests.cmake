# Two-phase collective I/O without mpirun: the members of the group are threads (the thread
# transport), random interleaved views against a byte map; issue 11's collective open checks.
tess_add_unit_test(test_coll_threads TIMEOUT 120)
# The two-phase-or-independent decision on constructed records (shapes and measured exchanges).
tess_add_unit_test(test_coll_policy)

# Collective I/O over MPI (tess_file_open_mpi, tess_file_read_at_all / write_at_all, two-phase
# with every kind of file realm): the brute-force byte-map oracle on random views and memory
# types, edge cases (no data, bad input and storage faults on one rank, hints, end of file,
# automatic choice, Table I counters), and a sparse file beyond 2 GiB.
foreach(np 2 4)
  tess_add_mpi_test(test_coll_oracle NP ${np} TIMEOUT 150 SOURCES ${TESS_RANDTYPE_SOURCES})
  tess_add_mpi_test(test_coll_edge NP ${np} TIMEOUT 120)
endforeach()
tess_add_mpi_test(test_coll_big NP 2 TIMEOUT 120)

# The collective workloads of `tessera bench tile|block3d|flash|hpio|btio` (bench/), small, in
# their --test mode at 2 and 4 processes: every Tessera method's file byte for byte against the
# expected image and the other methods' files, every read against the data written.
tess_add_mpi_test(test_workloads NP 2 TIMEOUT 180 LIBRARIES tessera_bench)
tess_add_mpi_test(test_workloads NP 4 TIMEOUT 180 SLOW)
