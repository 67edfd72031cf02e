#!/usr/bin/env bash
# shardsim calibrate from the command line: the overlay it writes is
# deterministic, read by collective, validate and (through a scenario's
# "collective_params") run, and changes their answers the way its numbers
# say; bad input exits 2 with FILE:LINE.
# Usage: bash cli_calibrate.sh SHARDSIM_BINARY SOURCE_DIR
set -u
bin=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
traces=$src/tests/data/traces
mi355=$traces/rccl-tests_allreduce_mi355x_2node-16gpu_pollara400.txt
json() { python3 -c "import json,sys; d=json.load(sys.stdin); print(eval('d' + sys.argv[1]))" "$1"; }
check() { # WHAT CONDITION
  if ! python3 -c "import sys; sys.exit(0 if ($2) else 1)"; then
    echo "FAIL: $1 ($2)"
    fail=1
  fi
}
refused() { # PATTERN ARGS...: exit 2, PATTERN on stderr, nothing on stdout
  local pattern=$1
  shift
  timeout 60 "$bin" "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
  local rc=$?
  if [ "$rc" -ne 2 ] || ! grep -q -- "$pattern" "$tmp/err" || [ -s "$tmp/out" ]; then
    echo "FAIL (exit $rc, want 2 and '$pattern'): shardsim $*"
    cat "$tmp/err"
    fail=1
  fi
}

# Calibrate; twice gives the same bytes.
"$bin" calibrate -t mi355x-cluster "$mi355" -o "$tmp/a.json" --json >"$tmp/report.json" || { echo "FAIL: calibrate"; exit 1; }
"$bin" calibrate -t mi355x-cluster "$mi355" -o "$tmp/b.json" >/dev/null || fail=1
cmp -s "$tmp/a.json" "$tmp/b.json" || { echo "FAIL: two calibrations differ"; fail=1; }
before=$(json "['before']['median_abs_pct_error']" <"$tmp/report.json")
after=$(json "['after']['median_abs_pct_error']" <"$tmp/report.json")
check "calibration lowers the error" "$after < $before"

# validate with the overlay gives the calibrated error.
v=$("$bin" validate --json -t mi355x-cluster --params "$tmp/a.json" "$mi355" | json "['median_abs_pct_error']")
check "validate --params OVERLAY gives the calibrated error" "abs($v - $after) < 1e-9"

# collective reads it: a halved network efficiency halves the NIC-bound bandwidth.
printf '{"overlay": "test", "parameters": {"transports.ib.bandwidth_fraction": {"value": 0.48}}}\n' >"$tmp/slow.json"
base=$("$bin" collective --json -t dgx-a100-cluster --nodes 2 --sizes 4GiB --algo ring | json "['rows'][0]['time_s']")
slow=$("$bin" collective --json -t dgx-a100-cluster --nodes 2 --sizes 4GiB --algo ring --params "$tmp/slow.json" | json "['rows'][0]['time_s']")
check "collective --params OVERLAY: half the network efficiency, about twice the time" "1.8 < $slow / $base < 2.05"

# run reads it through the scenario: slower network, slower step.
python3 - "$src/examples/default.json" "$tmp/slow.json" "$tmp/slow-scenario.json" <<'EOF'
import json, sys
s = json.load(open(sys.argv[1]))
s["collective_params"] = sys.argv[2]
s["parallelism"]["weight_update"] = "replicated"
s["parallelism"]["overlap"] = False
json.dump(s, open(sys.argv[3], "w"))
s.pop("collective_params")
json.dump(s, open(sys.argv[3] + ".base", "w"))
EOF
cp "$tmp/slow-scenario.json.base" "$tmp/base-scenario.json"
t0=$("$bin" run --json "$tmp/base-scenario.json" | json "['step_time_s']")
t1=$("$bin" run --json "$tmp/slow-scenario.json" | json "['step_time_s']")
check "run with collective_params: the slower network makes a longer step" "$t1 > $t0 * 1.01"

# Bad input.
refused "give --topology (collectives) or --accelerator" calibrate "$mi355"
refused "at least one trace" calibrate -t mi355x-cluster
refused "No such file" calibrate -t mi355x-cluster "$tmp/none.txt"
refused "predicted by the MPI model" calibrate -t oci-bm-optimized3.36 "$traces/osu_allreduce_oci-bm-optimized3.36_4node144proc_rocev2-100g_ocitutorials.txt"
refused "would be overwritten" calibrate -t mi355x-cluster "$mi355" -o "$mi355"
printf '{"overlay": "x",\n "parameters": {"link_efficiency.warp": 0.5}}\n' >"$tmp/bad.json"
refused "bad.json:2: unknown collective parameter" collective -t dgx-a100 --sizes 1MiB --params "$tmp/bad.json"
refused "bad.json:2: unknown collective parameter" calibrate -t mi355x-cluster --params "$tmp/bad.json" "$mi355"
python3 - "$src/examples/default.json" "$tmp/bad.json" "$tmp/bad-scenario.json" <<'EOF'
import json, sys
s = json.load(open(sys.argv[1]))
s["collective_params"] = sys.argv[2]
json.dump(s, open(sys.argv[3], "w"), indent=1)
EOF
refused "bad-scenario.json:[0-9]*: .*bad.json:2: unknown collective parameter" run "$tmp/bad-scenario.json"
exit $fail
