#!/usr/bin/env bash
# shardsim validate from the command line: JSON contract, trace formats, bad input.
# Usage: bash cli_validate.sh SHARDSIM_BINARY SOURCE_DIR
set -u
bin=$1
src=$2
traces=$src/tests/data/traces
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0
check() { # NAME CONDITION...
  local name=$1
  shift
  if "$@"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $name"; fi
}
expect_exit() { # CODE PATTERN ARGS...
  local code=$1 pattern=$2
  shift 2
  "$bin" "$@" >"$tmp/out" 2>"$tmp/err"
  local rc=$?
  [ "$rc" -eq "$code" ] && grep -q -- "$pattern" "$tmp/err" && [ ! -s "$tmp/out" ]
}

v100=$traces/nccl-tests_allreduce_v100-sxm2-16gb_8gpu_hybrid-cube-mesh.txt
[ -f "$v100" ] || { echo "missing $v100 (tests/data/traces)"; exit 1; }

"$bin" validate --json -t dgx1-v100 "$v100" >"$tmp/v.json" 2>"$tmp/err"
check "validate --json exits 0" [ $? -eq 0 ]
check "stdout is one JSON object with the summary keys" python3 - "$tmp/v.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for k in ("median_abs_pct_error", "max_abs_pct_error", "median_abs_pct_error_large",
          "median_abs_pct_error_small", "rows"):
    assert k in d, k
assert len(d["rows"]) == 25 and d["n_rows"] == 25
r = d["rows"][0]
assert r["size_bytes"] == 8 and abs(r["measured_s"] - 48.46e-6) < 1e-12 and r["predicted_s"] > 0
PY
"$bin" validate --json -t dgx1-v100 "$v100" >"$tmp/v2.json" 2>/dev/null
check "same input, byte-identical output" cmp -s "$tmp/v.json" "$tmp/v2.json"

# OSU output: the collective from its title, the rank count from --ranks; sizes in OSU's convention
cat >"$tmp/osu.txt" <<'OSU'
# OSU MPI Allgather Latency Test v7.3
# Size       Avg Latency(us)
1024                   30.00
1048576               400.00
OSU
expect_exit 2 "give --ranks" validate -t dgx-a100 "$tmp/osu.txt"
check "OSU without --ranks is bad input" [ $? -eq 0 ]
"$bin" validate --json -t dgx-a100 --ranks 8 "$tmp/osu.txt" >"$tmp/o.json" 2>"$tmp/err"
check "OSU with --ranks runs" [ $? -eq 0 ]
check "OSU allgather sizes become whole buffers (x ranks)" python3 - "$tmp/o.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert [r["size_bytes"] for r in d["rows"]] == [8192, 8388608], d["rows"]
assert d["traces"][0]["op"] == "allgather"
PY

expect_exit 2 "no-such-file" validate -t dgx1-v100 "$tmp/no-such-file.txt"
check "a missing trace is bad input" [ $? -eq 0 ]
expect_exit 2 "unknown topology preset" validate -t nope "$v100"
check "an unknown topology is bad input" [ $? -eq 0 ]
expect_exit 2 "one node, not 2" validate -t dgx-a100 "$traces/nccl-tests_allreduce_abci-a100-40gb_2node-16gpu_sharp.txt"
check "16 ranks on 2 hosts do not fit one DGX" [ $? -eq 0 ]
printf '# nThread 1 nGpus 1\n#  size count type redop time algbw busbw error time algbw busbw error\n 8 2 float sum x 0.0 0.0 0 1 0 0 0\n' >"$tmp/bad.txt"
expect_exit 2 "bad.txt:3:" validate --op allreduce --ranks 2 -t dgx-a100 "$tmp/bad.txt"
check "a malformed row names its line" [ $? -eq 0 ]
expect_exit 2 "unknown --op" validate --op nope -t dgx1-v100 "$v100"
check "an unknown --op is bad input" [ $? -eq 0 ]

expect_exit 2 "says 8 ranks, not 4" validate --ranks 4 -t dgx1-v100 "$v100"
check "--ranks cannot contradict the trace" [ $? -eq 0 ]
expect_exit 2 "measured allreduce, not broadcast" validate --op broadcast -t dgx1-v100 "$v100"
check "--op cannot contradict the trace" [ $? -eq 0 ]

echo "cli_validate: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
