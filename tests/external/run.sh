#!/bin/sh
# run.sh - run one unmodified MPI-IO program (ROMIO's tests, our HDF5 and PnetCDF programs) over
# libtessera_mpiio, or over the MPI library's own MPI-IO, and judge it. CTest calls it (see
# tests/external.cmake); it also runs by hand.
#
#   run.sh --mpi openmpi|mpich --mpiexec PATH --np N --mode preload|link|native [--lib LIB]
#          --dir DIR [--check romio|status|expect=FILE] [--compare FILE --native PROGRAM]
#          -- PROGRAM ARGS...
#
# --mode preload: LD_PRELOAD=LIB in every rank (Open MPI: mpirun -x; MPICH: -genv), so that the
#   library's MPI_File_* come first; link: PROGRAM was linked with -ltessera_mpiio ahead of the
#   MPI library; native: the MPI library's own MPI-IO (to develop and check the harness).
# The program runs in DIR (emptied first), so relative file names land there.
# --check romio: exit status 0, "No Errors" printed and no "Found N errors" (ROMIO's tests print
#   their verdict and mostly exit 0 either way); status: exit status 0 only; expect=FILE: exit
#   status 0 and every line of FILE is a line of the output.
# --compare FILE: afterwards run --native PROGRAM (the same program without the library) with the
#   same arguments in DIR/native on the MPI library's own MPI-IO, and compare the FILE both runs
#   wrote byte for byte.
# A preloaded library that the dynamic loader cannot load fails the run (ld.so only warns). In the
# preload and link modes the run sets TESS_MPIIO_VERBOSE=1 and needs at least one of the lines
# the library prints at close ("tessera_mpiio: <file>: ...; calls indep ...", anywhere in a line:
# stdout and stderr interleave): a run that silently fell back to the MPI library's own MPI-IO
# fails.
set -u
mpi="" mpiexec="" np=1 mode="" lib="" dir="" check=romio compare="" native=""
while [ $# -gt 0 ]; do
  case $1 in
    --mpi) mpi=$2; shift 2 ;;
    --mpiexec) mpiexec=$2; shift 2 ;;
    --np) np=$2; shift 2 ;;
    --mode) mode=$2; shift 2 ;;
    --lib) lib=$2; shift 2 ;;
    --dir) dir=$2; shift 2 ;;
    --check) check=$2; shift 2 ;;
    --compare) compare=$2; shift 2 ;;
    --native) native=$2; shift 2 ;;
    --) shift; break ;;
    *) echo "run.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
[ $# -ge 1 ] && [ -n "$mpiexec" ] && [ -n "$dir" ] || { echo "run.sh: bad usage" >&2; exit 2; }
case $mode in
  preload) [ -f "$lib" ] || { echo "run.sh: no library '$lib' to preload" >&2; exit 1; } ;;
  link | native) ;;
  *) echo "run.sh: --mode preload, link or native" >&2; exit 2 ;;
esac

# run_in SUBDIR MODE PROGRAM ARGS...: run under mpiexec in DIR/SUBDIR; output in DIR/SUBDIR.out
run_in() {
  sub=$1 how=$2
  shift 2
  rm -rf "${dir:?}/$sub" && mkdir -p "$dir/$sub" || exit 1
  set -- -np "$np" "$@"
  case $mpi in
    openmpi) [ "$how" = preload ] && set -- -x LD_PRELOAD="$lib" "$@"
             [ "$how" != native ] && set -- -x TESS_MPIIO_VERBOSE=1 "$@" ;;
    mpich) [ "$how" = preload ] && set -- -genv LD_PRELOAD "$lib" "$@"
           [ "$how" != native ] && set -- -genv TESS_MPIIO_VERBOSE 1 "$@" ;;
    *) echo "run.sh: --mpi openmpi or mpich" >&2; exit 2 ;;
  esac
  [ "$mpi" = openmpi ] && set -- --oversubscribe "$@"
  (cd "$dir/$sub" && "$mpiexec" "$@" < /dev/null > "$dir/$sub.out" 2>&1)
  status=$?
  cat "$dir/$sub.out"
  if grep -q 'cannot be preloaded' "$dir/$sub.out"; then
    echo "run.sh: FAIL: the dynamic loader did not preload $lib"
    exit 1
  fi
  if [ "$how" != native ] && ! grep -q 'tessera_mpiio: .*; calls indep' "$dir/$sub.out"; then
    echo "run.sh: FAIL: libtessera_mpiio printed no line at close: the program did not run on it"
    exit 1
  fi
  return $status
}

mkdir -p "$dir" || exit 1
dir=$(cd "$dir" && pwd)
run_in run "$mode" "$@"
status=$?
out="$dir/run.out"
fail() { echo "run.sh: FAIL ($mode, $mpi, np $np): $*"; exit 1; }
[ $status -eq 0 ] || fail "exit status $status"
case $check in
  romio)
    grep -q 'No Errors' "$out" || fail "no \"No Errors\" in the output"
    ! grep -Eq 'Found [0-9]+ error' "$out" || fail "the test found errors"
    ;;
  status) ;;
  expect=*)
    while IFS= read -r line; do
      grep -Fxq -- "$line" "$out" || fail "expected line missing: $line"
    done < "${check#expect=}"
    ;;
  *) echo "run.sh: unknown check $check" >&2; exit 2 ;;
esac
if [ -n "$compare" ]; then
  [ -n "$native" ] || { echo "run.sh: --compare needs --native" >&2; exit 2; }
  shift
  run_in native native "$native" "$@" > /dev/null || fail "the native reference run failed (see $dir/native.out)"
  cmp "$dir/native/$compare" "$dir/run/$compare" || fail "$compare differs from the MPI library's own MPI-IO's"
  echo "run.sh: $compare is byte for byte the file the MPI library's own MPI-IO wrote"
fi
echo "run.sh: PASS ($mode, $mpi, np $np)"
