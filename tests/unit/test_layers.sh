#!/bin/sh
# The include graph of src/ (issue 8): no file in a lower layer includes src/core (the front
# end sits on the layers, never the reverse), and no file-level include cycle.
# usage: test_layers.sh <source root> ; exit 0 when the graph is clean, 1 with the offending
# edges, 77 when tsort (coreutils) is missing.
root=$1
command -v tsort >/dev/null 2>&1 || { echo "skipped: no tsort"; exit 77; }
cd "$root" || exit 1
edges=$(mktemp) || exit 1
trap 'rm -f "$edges"' EXIT
# every quoted include, resolved as the compiler does: beside the file, then from src/ and include/
find src -name '*.[ch]' | sort | while read -r file; do
  dir=$(dirname "$file")
  sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$file" |
  while read -r inc; do
    for cand in "$dir/$inc" "src/$inc" "include/$inc"; do
      if [ -f "$cand" ]; then
        echo "$file $(realpath --relative-to=. "$cand")"
        break
      fi
    done
  done
done >"$edges"
[ -s "$edges" ] || { echo "no includes found under $root/src"; exit 1; }
status=0
upward=$(grep -E '^src/(base|type|view|model|driver|method)/[^ ]* src/core/' "$edges")
if [ -n "$upward" ]; then
  echo "a lower layer includes src/core:"
  echo "$upward"
  status=1
fi
if ! tsort "$edges" >/dev/null 2>"$edges.err"; then
  echo "include cycle:"
  cat "$edges.err"
  status=1
fi
rm -f "$edges.err"
[ $status = 0 ] && echo "include graph: $(wc -l <"$edges") edges, no upward include, no cycle"
exit $status
