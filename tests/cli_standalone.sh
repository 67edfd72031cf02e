#!/usr/bin/env bash
# The repository stands alone: no tracked file may read or name the project's
# shared folder beside the clone (a user's clone has nothing beside it).
# Usage: bash cli_standalone.sh SHARDSIM_BINARY SOURCE_DIR
set -u
src=$2
cd "$src" || exit 1
# the pattern is split so that this file does not match itself
pat='\.\./'"shared"
if command -v git >/dev/null && git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  hits=$(git grep -n -I -e "$pat" -- . ':!tests/data/traces' || true)
else
  hits=$(grep -rnI --exclude-dir=.git --exclude-dir='build*' --exclude-dir=traces -e "$pat" . || true)
fi
if [ -n "$hits" ]; then
  echo "files refer to the folder beside the clone:"
  echo "$hits"
  exit 1
fi
# every trace a test names must be in tests/data/traces
missing=0
for name in $(grep -ohE '[A-Za-z0-9_.-]+-tests_[A-Za-z0-9_.-]+\.txt|osu_[a-z_]+_[A-Za-z0-9_.-]+\.txt' tests/*.c tests/*.sh README.md 2>/dev/null | sort -u); do
  if [ ! -f "tests/data/traces/$name" ]; then
    echo "named but not in tests/data/traces: $name"
    missing=1
  fi
done
[ "$missing" -eq 0 ] || exit 1
echo "standalone: no reference outside the repository"
