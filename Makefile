# Tessera: the two commands are `make demo` and `make check` (see README.md).
# Both install what a fresh Debian machine lacks, configure and build first.

BUILD      ?= build
ASAN_BUILD ?= build-asan
MPICH_BUILD ?= build-mpich
TSAN_BUILD ?= build-tsan
JOBS       ?= 2
# Open MPI is the MPI the tests and benchmarks use by default; MPICH is built and tested too.
MPICC      ?= mpicc.openmpi
MPIEXEC    ?= mpirun.openmpi
# Debian packages the build, the tests and the benchmarks need.
PACKAGES   := cmake gcc gfortran make pkg-config openmpi-bin libopenmpi-dev mpich libmpich-dev \
              liburing-dev clang libclang-rt-14-dev libomp-dev ceph-mon ceph-osd ceph-common \
              librados-dev lua5.3 \
              dpkg-dev libhdf5-openmpi-dev libhdf5-mpich-dev libpnetcdf-dev
# ROMIO's test programs (Debian's mpich source package), fetched by `setup` (see
# tests/external/romio_fetch.sh); every build tree runs them from here.
ROMIO_DIR  ?= $(abspath $(BUILD))/romio

MPIFC      ?= mpif90.openmpi
CMAKE_FLAGS := -DTESS_WERROR=ON -DMPI_C_COMPILER=$(MPICC) -DMPI_Fortran_COMPILER=$(MPIFC) \
               -DMPIEXEC_EXECUTABLE=$$(command -v $(MPIEXEC)) -DTESS_MPIEXEC_FLAGS=--oversubscribe \
               -DTESS_ROMIO_TESTS=$(ROMIO_DIR)/test

export OMPI_ALLOW_RUN_AS_ROOT := 1
export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM := 1
export OMPI_MCA_rmaps_base_oversubscribe := 1
# Open MPI and its helpers keep some allocations until exit; LeakSanitizer must not blame us.
# fast_unwind_on_malloc=0: Open MPI's plugins are unloaded at exit; only the slow unwinder still
# finds their frames, so that the suppressions match.
export LSAN_OPTIONS := suppressions=$(CURDIR)/tests/lsan.supp:print_suppressions=0:fast_unwind_on_malloc=0

.PHONY: all setup build build-asan build-mpich build-tsan check demo clean

all: build

# Install the missing packages (apt-get, as root or through sudo), then fetch ROMIO's tests.
setup:
	@missing=""; for p in $(PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing; \
	fi
	sh tests/external/romio_fetch.sh $(ROMIO_DIR)

build: setup
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo $(CMAKE_FLAGS) >/dev/null
	cmake --build $(BUILD) -j$(JOBS)

build-asan: setup
	cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DTESS_SANITIZE=ON $(CMAKE_FLAGS) >/dev/null
	cmake --build $(ASAN_BUILD) -j$(JOBS)

# The second MPI: MPICH (its 4.0 build busy-polls, so its tests run at 1 and 2 processes only,
# one test at a time).
build-mpich: setup
	cmake -S . -B $(MPICH_BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTESS_WERROR=ON -DMPI_C_COMPILER=mpicc.mpich \
	      -DMPI_Fortran_COMPILER=mpif90.mpich -DMPIEXEC_EXECUTABLE=$$(command -v mpirun.mpich) \
	      -DTESS_ROMIO_TESTS=$(ROMIO_DIR)/test >/dev/null
	cmake --build $(MPICH_BUILD) -j$(JOBS)

# The thread tests (label `threads`: thread teams on pthreads and the OpenMP interface) under
# ThreadSanitizer, built with clang so that OpenMP is Clang's libomp, whose Archer tool (shipped
# with libomp-dev, loaded by the runtime) tells TSan about the runtime's synchronization; GCC's
# libgomp is not instrumented and gets no TSan run (README.md).
build-tsan: setup
	CC=clang cmake -S . -B $(TSAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DTESS_TSAN=ON -DTESS_WERROR=ON \
	      -DTESS_WITH_MPI=OFF >/dev/null
	cmake --build $(TSAN_BUILD) -j$(JOBS) --target test_team test_omp

# The whole suite, once optimized and once under AddressSanitizer + UndefinedBehaviorSanitizer
# (both with Open MPI), then the MPI tests again with MPICH, then the thread tests under
# ThreadSanitizer. Tests labelled `large` (4 GiB files) are left out: `ctest -L large` runs them.
check: build build-asan build-mpich build-tsan
	cd $(BUILD) && ctest --output-on-failure -j$(JOBS) -LE large
	cd $(ASAN_BUILD) && ctest --output-on-failure -j$(JOBS) -LE large
	cd $(MPICH_BUILD) && ctest --output-on-failure -R '_np[12]$$' -LE large
	cd $(TSAN_BUILD) && TSAN_OPTIONS="ignore_noninstrumented_modules=1 halt_on_error=1" \
	    ctest --output-on-failure -L threads

# The benchmarks, small: a summary row per workload; `make demo VERBOSE=1` adds every table.
demo: build
	$(BUILD)/tools/tessera demo --mpiexec "$(MPIEXEC) --oversubscribe" $(if $(VERBOSE),--verbose)

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(MPICH_BUILD) $(TSAN_BUILD)
