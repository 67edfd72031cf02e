#!/usr/bin/env bash
# The dependencies run one way (docs/ARCHITECTURE.md): each folder includes
# headers only from itself and the layers below it.  Fails on an include that
# points up, and on a .c file the architecture map does not name (or a name
# there that is no file).
# Usage: bash cli_layers.sh SHARDSIM_BINARY SOURCE_DIR
set -u
src=$2
cd "$src" || exit 1
# folder: the folders below it that it may use
allowed() {
  case $1 in
    sim/core) echo "sim/core" ;;
    plots) echo "plots sim/core" ;;
    topologies) echo "topologies sim/core" ;;
    models) echo "models topologies plots sim/core" ;;
    traces) echo "traces models topologies plots sim/core" ;;
    sim/cli) echo "sim/cli traces models topologies plots sim/core" ;;
  esac
}
folders="sim/core plots topologies models traces sim/cli"
declare -A home
for d in $folders; do
  for h in "$d"/*.h; do [ -e "$h" ] && home[$(basename "$h")]=$d; done
done
fail=0
for d in $folders; do
  ok=" $(allowed "$d") "
  for f in "$d"/*.c "$d"/*.h; do
    [ -e "$f" ] || continue
    for h in $(grep -ho '^#include "[A-Za-z0-9_]*\.h"' "$f" | sed 's/#include "\(.*\)"/\1/'); do
      owner=${home[$h]:-}
      [ -n "$owner" ] || continue
      if [[ "$ok" != *" $owner "* ]]; then
        echo "FAIL: $f includes $h from $owner, which is above $d"
        fail=1
      fi
    done
    if [[ "$f" == *.c ]] && ! grep -qF "\`$(basename "$f")\`" docs/ARCHITECTURE.md; then
      echo "FAIL: $f is not in docs/ARCHITECTURE.md"
      fail=1
    fi
  done
done
# and every file the map names exists
for name in $(grep -o '`[a-z_0-9]*\.[ch]`' docs/ARCHITECTURE.md | tr -d '`' | sort -u); do
  found=$(find $folders traces/capture -maxdepth 1 -name "$name" | head -1)
  [ -n "$found" ] || { echo "FAIL: docs/ARCHITECTURE.md names $name, which does not exist"; fail=1; }
done
[ "$fail" -eq 0 ] && echo "layers: every include points down; the map names every file"
exit "$fail"
