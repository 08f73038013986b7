#!/bin/sh
# The installed tree, used as a user would (ctest test_install; seconds): `cmake --install` into
# a temporary prefix, then a small program compiled, linked and run against that tree four ways:
# pkg-config tessera, pkg-config tessera-mpi (an MPI program under mpiexec), find_package(Tessera)
# with Tessera::tessera and with Tessera::tessera_mpi.
#
# usage: run.sh BUILD_DIR CC [MPICC MPIEXEC [MPIEXEC_FLAGS...]]   (no MPICC: the core only)
set -eu
build=$(cd "$1" && pwd); cc=$2; shift 2
mpicc=${1:-}; mpiexec=${2:-}
[ $# -ge 2 ] && shift 2 || shift $#
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/tessera-install.XXXXXX")
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix

step() { echo "== $*"; }
command -v pkg-config >/dev/null || { echo "skipped: pkg-config is not installed"; exit 77; }

step "cmake --install $build --prefix $prefix"
cmake --install "$build" --prefix "$prefix" >/dev/null
pcdir=$(dirname "$(find "$prefix" -name tessera.pc)")
libdir=$(PKG_CONFIG_PATH=$pcdir pkg-config --variable=libdir tessera)
export PKG_CONFIG_PATH="$pcdir"

step "pkg-config tessera: $cc consumer.c \$(pkg-config --cflags --libs tessera)"
$cc -Wall -Wextra -Werror -o "$work/consumer-pc" "$here/consumer.c" $(pkg-config --cflags --libs tessera) \
    -Wl,-rpath,"$libdir"
"$work/consumer-pc" "$work"

if [ -n "$mpicc" ]; then
    step "pkg-config tessera-mpi: $mpicc consumer_mpi.c \$(pkg-config --cflags --libs tessera-mpi)"
    $mpicc -Wall -Wextra -Werror -o "$work/consumer-mpi-pc" "$here/consumer_mpi.c" \
        $(pkg-config --cflags --libs tessera-mpi) -Wl,-rpath,"$libdir"
    "$mpiexec" -n 2 "$@" "$work/consumer-mpi-pc" "$work"
fi

step "find_package(Tessera): Tessera::tessera${mpicc:+ and Tessera::tessera_mpi}"
cmake -S "$here" -B "$work/cmake" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_C_COMPILER="$cc" \
      ${mpicc:+-DMPI_C_COMPILER="$(command -v "$mpicc")"} >/dev/null
cmake --build "$work/cmake" >/dev/null
"$work/cmake/consumer" "$work"
if [ -n "$mpicc" ]; then
    "$mpiexec" -n 2 "$@" "$work/cmake/consumer_mpi" "$work"
fi
echo "installed tree: every way compiled, linked and ran"
