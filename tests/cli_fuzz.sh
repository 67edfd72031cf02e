#!/usr/bin/env bash
# A short libFuzzer run of every reader (JSON inputs, topologies, nccl-tests,
# OSU, Chakra ET, Kineto profiles): 4 s each by default (FUZZ_SECONDS; thousands to tens of thousands
# of inputs for most readers, inside the suite's 10 minutes), built with clang into the ctest
# build folder.  Fails on any crash, hang, leak or sanitizer report.
# Without clang's libFuzzer it exits 77 with a message (tests/CMakeLists.txt
# may map 77 to "skipped"); .ci/install-deps installs clang and
# libclang-rt-14-dev, so CI always fuzzes.
# Usage: bash cli_fuzz.sh SHARDSIM_BINARY SOURCE_DIR
set -uo pipefail
build=$(dirname "$1")
src=$2
# The reproducers in tests/fuzz/known/ are among the seeds, so the two bugs
# found earlier are checked on every run.
FUZZ_BUILD=$build/fuzz bash "$src/tests/fuzz/run.sh" "${FUZZ_SECONDS:-4}"
rc=$?
case $rc in
0) echo "cli_fuzz: 6 passed, 0 failed" ;;
77) echo "cli_fuzz: SKIPPED (no libFuzzer; see above)" ;;
*) echo "cli_fuzz: fuzzing found a problem (reproducers in $build/fuzz/artifacts)" ;;
esac
exit $rc
