#!/usr/bin/env bash
# Collectives over long routes from the command line: flow runs whose routes
# are longer than 64 links (a chain of 200 endpoints, the tree over part of an
# 8192-chip TPU pod) finish with a finite time, and runs too big for the flow
# simulator are refused as bad input instead of exhausting memory or time.
# SHARDSIM_SLOW_TESTS=1 adds the full 4096-chip pod tree, timed.
# Usage: bash cli_routes.sh SHARDSIM_BINARY SOURCE_DIR
set -u
bin=$1
. "$(dirname "${BASH_SOURCE[0]}")/lib_check.sh" # $tmp, check, expect_exit
# FILE MIN MAX: every row's flow time is finite and within [MIN, MAX] seconds
flow_time_in() {
  python3 - "$@" <<'PY'
import json, math, sys
d = json.load(open(sys.argv[1])); lo = float(sys.argv[2]); hi = float(sys.argv[3])
assert d["rows"], d
for r in d["rows"]:
    ft = r["flow_time_s"]
    assert isinstance(ft, float) and math.isfinite(ft) and lo <= ft <= hi, r
    assert ft >= r["time_s"] * 0.5, r  # the flows cannot beat the closed form by half
PY
}

python3 - "$tmp/chain200.json" <<'PY'
import json, sys
n = 200
eps = ["e%d" % i for i in range(n)]
links = [{"src": eps[i], "dst": eps[i + 1], "bandwidth": "25GB/s", "latency": "1us", "kind": "nvlink"}
         for i in range(n - 1)]
json.dump({"name": "chain200", "ranks_per_node": 1, "endpoints": eps, "links": links}, open(sys.argv[1], "w"))
PY

for algo in tree ring; do
  "$bin" collective --json -t "$tmp/chain200.json" --algo $algo --sizes 1MiB --flows >"$tmp/chain-$algo.json" 2>"$tmp/err"
  check "200-endpoint chain, $algo: exits 0" [ $? -eq 0 ]
  # 2 x 199/200 MiB over one 25 GB/s link is 84 us; a second is absurd
  check "200-endpoint chain, $algo: a sane finite flow time" flow_time_in "$tmp/chain-$algo.json" 8.3e-5 1.0
done

# 512 ranks on 128 hosts of a 2048-host (8192-chip, 128 x 64) pod: its tree's
# routes run up to 66 links (they aborted the run at 64)
"$bin" collective --json -t tpu-v3-pod --nodes 2048 --ranks 512 --sizes 1MiB --flows >"$tmp/pod.json" 2>"$tmp/err"
check "tpu-v3-pod 2048 hosts, 512 ranks, --flows: exits 0" [ $? -eq 0 ]
check "tpu-v3-pod 2048 hosts, 512 ranks: a sane finite flow time" flow_time_in "$tmp/pod.json" 1e-5 1.0
"$bin" collective --json -t tpu-v3-pod --nodes 2048 --ranks 512 --sizes 1MiB --flows >"$tmp/pod2.json" 2>/dev/null
check "tpu-v3-pod: same input, byte-identical output" cmp -s "$tmp/pod.json" "$tmp/pod2.json"

# more flows than the simulator takes: exit 2, a reason, nothing on stdout
"$bin" collective -t dgx-a100-cluster --nodes 1024 --algo direct --sizes 1MiB --flows >"$tmp/out" 2>"$tmp/err"
check "too many flows: exit 2" [ $? -eq 2 ]
check "too many flows: says so" grep -q -- "--flows: direct allreduce on 8192 ranks is .* flows, more than" "$tmp/err"
check "too many flows: nothing on stdout" [ ! -s "$tmp/out" ]
"$bin" collective -t dgx-a100-cluster --nodes 1024 --algo direct --sizes 1MiB >"$tmp/out" 2>"$tmp/err"
check "without --flows the same collective has its closed form" [ $? -eq 0 ]

if [ "${SHARDSIM_SLOW_TESTS:-0}" = 1 ]; then
  # the whole 4096-chip pod: 102 s (CPU) in a Release build on 2 busy cores; the
  # bound leaves room for a sanitizer build (run this script directly: ctest stops
  # command-line tests at 300 s)
  start=$(date +%s)
  timeout 900 "$bin" collective --json -t tpu-v3-pod --nodes 1024 --sizes 1MiB --flows >"$tmp/big.json" 2>"$tmp/err"
  rc=$?
  secs=$(($(date +%s) - start))
  echo "tpu-v3-pod --nodes 1024 --flows: rc $rc in $secs s"
  check "tpu-v3-pod 1024 hosts --flows: exits 0 within 900 s" [ $rc -eq 0 ]
  check "tpu-v3-pod 1024 hosts: a sane finite flow time" flow_time_in "$tmp/big.json" 1e-5 1.0
fi

echo "cli_routes: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
