#!/usr/bin/env bash
# Runs the MPI capture program with 2 ranks on this machine (shared memory),
# checks each collective's output with the nccl-tests reader, and validates
# the localhost topology preset against the fresh allreduce trace.
# Usage: bash cli_capture.sh SHARDSIM_BINARY SOURCE_DIR
set -uo pipefail
shardsim=$1
build=$(dirname "$shardsim")
capture=$build/traces/capture/shardsim-capture
check=$build/traces/capture/shardsim-capture-check
fail() { echo "FAIL: $*" >&2; exit 1; }

[ -x "$capture" ] || fail "$capture not built: CMake found no MPI for C (install libopenmpi-dev and reconfigure)"
[ -x "$check" ] || fail "$check not built"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

. "$(dirname "$0")/mpi_env.sh"
mpi_launcher 2

pass=0
for op in allreduce reduce_scatter allgather bcast alltoall; do
    out=$tmp/$op.txt
    ASAN_OPTIONS=detect_leaks=0 timeout 120 "${launcher[@]}" "$capture" --op "$op" -b 8 -e 256K -w 2 -n 5 -o "$out" \
        >"$tmp/$op.log" 2>&1 || { cat "$tmp/$op.log" >&2; fail "capture --op $op failed"; }
    name=$op
    [ "$op" = bcast ] && name=broadcast
    "$check" "$out" "$name" 2 || { cat "$out" >&2; fail "check of the $op capture"; }
    # 8 B .. 256 KiB by factor 2 is 16 sizes (the sharded ones round 8 B to 8 B with 2 ranks)
    rows=$(grep -c '^ *[0-9]' "$out")
    [ "$rows" -eq 16 ] || fail "$op: $rows rows, expected 16"
    pass=$((pass + 1))
done

# bad options: exit status 2, and nothing that looks like a result
ASAN_OPTIONS=detect_leaks=0 timeout 60 "${launcher[@]}" "$capture" --op gather >"$tmp/bad.log" 2>&1
rc=$?
[ $rc -ne 0 ] || fail "capture accepted --op gather"
grep -q 'unknown --op "gather"' "$tmp/bad.log" || { cat "$tmp/bad.log" >&2; fail "no message for --op gather"; }
pass=$((pass + 1))

# the fresh trace through shardsim validate, when that command exists
if "$shardsim" validate --help >/dev/null 2>&1; then
    "$shardsim" validate --topology localhost --json "$tmp/allreduce.txt" >"$tmp/validate.json" 2>"$tmp/validate.err" \
        || { cat "$tmp/validate.err" >&2; fail "shardsim validate --topology localhost on the capture"; }
    grep -Eq '"n_rows":[[:space:]]*16[,}]?' "$tmp/validate.json" || { head -c 2000 "$tmp/validate.json" >&2; fail "validate did not read 16 rows"; }
    pass=$((pass + 1))
else
    echo "note: shardsim validate not available; checked with shardsim-capture-check only"
fi

# the round trip: calibrate the localhost preset on the fresh allreduce capture,
# and the overlay brings validate's error down to the calibration's
"$shardsim" calibrate --topology localhost "$tmp/allreduce.txt" -o "$tmp/overlay.json" --json >"$tmp/calib.json" \
    2>"$tmp/calib.err" || { cat "$tmp/calib.err" >&2; fail "shardsim calibrate --topology localhost on the capture"; }
python3 - "$tmp/calib.json" "$tmp/overlay.json" <<'EOF2' || fail "calibration of the capture"
import json, sys
r, o = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
before, after = r["before"]["median_abs_pct_error"], r["after"]["median_abs_pct_error"]
fitted = [p["key"] for p in r["parameters"] if p["status"] == "fitted"]
print("calibrate on the capture: median |error| %.1f%% -> %.1f%%, fitted %s" % (before, after, fitted))
assert fitted and all(k in o["parameters"] for k in fitted), "fitted parameters missing from the overlay"
assert after <= before + 1, "calibration made the capture worse"
EOF2
"$shardsim" validate --topology localhost --params "$tmp/overlay.json" --json "$tmp/allreduce.txt" >"$tmp/v2.json" \
    || fail "validate --params on the calibrated overlay"
python3 -c "import json,sys; a=json.load(open(sys.argv[1]))['after']['median_abs_pct_error']; b=json.load(open(sys.argv[2]))['median_abs_pct_error']; sys.exit(abs(a-b) > 1e-9)" \
    "$tmp/calib.json" "$tmp/v2.json" || fail "validate with the overlay does not give the calibrated error"
pass=$((pass + 1))

echo "cli_capture: $pass passed, 0 failed"
