# The collective workloads of `tessera bench tile|block3d|flash|hpio|btio` (bench/), small, in
# their --test mode at 2 and 4 processes: every Tessera method's file byte for byte against the
# expected image and the other methods' files, every read against the data written.
tess_add_mpi_test(test_workloads NP 2 TIMEOUT 180 LIBRARIES tessera_bench)
tess_add_mpi_test(test_workloads NP 4 TIMEOUT 180 SLOW)
