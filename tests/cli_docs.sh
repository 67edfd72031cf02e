#!/usr/bin/env bash
# Documentation is tested: every command shown in README.md and the folder
# READMEs runs, and every figure marked with a check comment is recomputed
# (tests/doccheck.py says how).  Usage: bash cli_docs.sh SHARDSIM_BINARY SOURCE_DIR
set -u
command -v python3 >/dev/null || { echo "python3 is needed (.ci/install-deps installs it)"; exit 77; }
exec python3 "$2/tests/doccheck.py" "$1" "$2" "${@:3}"
