#!/usr/bin/env bash
# Runs a test program as ctest does and keeps what it printed on stdout
# (OUT.out) and its exit status (OUT.rc), for tests/doccheck.py's `in` checks:
# a figure a README quotes from a test is read from that test's own run rather
# than computed a second time (tests/CMakeLists.txt lists which, from the
# READMEs).  Usage: saved_run.sh OUT PROGRAM [ARGS...]
set -u
out=$1
shift
mkdir -p "$(dirname "$out")"
rm -f "$out.out" "$out.rc"
"$@" | tee "$out.tmp"
rc=${PIPESTATUS[0]}
mv "$out.tmp" "$out.out"
echo "$rc" >"$out.rc"
exit "$rc"
