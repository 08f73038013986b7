#!/bin/sh
# test_exports.sh - the ABI of a shared library: its dynamic symbol table holds only the
# documented API. usage: test_exports.sh <nm> <library.so> <header>...
# Every defined dynamic symbol (version nodes aside) must be a tess_* (or, libtessera_omp,
# omp_file_*) function or TESS_* object declared with TESS_API in one of the given public
# headers, and every TESS_API
# function those headers declare must be exported. Exits 77 (skip) when nm is missing.
nm=$1 lib=$2
shift 2
command -v "$nm" >/dev/null 2>&1 || { echo "no $nm: skipped"; exit 77; }
[ -f "$lib" ] || { echo "no $lib"; exit 1; }
exported=$("$nm" -D --defined-only "$lib" | awk '$2 != "A" {sub(/@.*/, "", $3); print $3}' | sort -u)
[ -n "$exported" ] || { echo "$lib exports nothing"; exit 1; }
# the names declared with TESS_API (functions) and the predefined-type objects (*const TESS_*)
declared=$( (grep -h '^TESS_API' "$@" | grep -o '\(tess\|omp_file\)_[a-z0-9_]*(' | tr -d '('
             grep -ho '[*]const TESS_[A-Z0-9_]*' "$@" | sed 's/.*const //') | sort -u)
status=0
for s in $exported; do
    case $s in
    tess_* | TESS_* | omp_file_*) ;;
    *) echo "$lib exports $s: not a tess_ name"; status=1; continue ;;
    esac
    echo "$declared" | grep -qx "$s" || { echo "$lib exports $s: not declared with TESS_API in $*"; status=1; }
done
# TESS_API functions of these headers that the library does not export (objects aside: the
# predefined types are checked by name below)
for s in $declared; do
    case $s in TESS_*) continue ;; esac
    echo "$exported" | grep -qx "$s" || { echo "$s is declared in $* but $lib does not export it"; status=1; }
done
case $lib in
*tessera_mpi* | *tessera_omp*) ;;
*) echo "$exported" | grep -qx TESS_DOUBLE || { echo "$lib does not export TESS_DOUBLE"; status=1; } ;;
esac
[ $status = 0 ] && echo "$lib: $(echo "$exported" | wc -l) symbols, all documented tess_ API"
exit $status
