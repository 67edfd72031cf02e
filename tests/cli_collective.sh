#!/usr/bin/env bash
# shardsim collective from the command line: the JSON contract, nccl-tests'
# bandwidth definitions, determinism and bad input.
# Usage: bash cli_collective.sh SHARDSIM_BINARY SOURCE_DIR
set -u
bin=$1
src=${2:-$(dirname "${BASH_SOURCE[0]}")/..}
. "$(dirname "${BASH_SOURCE[0]}")/lib_check.sh" # $tmp, check, expect_exit
bad() { # PATTERN ARGS...: exit 2, the pattern on stderr, nothing on stdout
  local pattern=$1
  shift
  "$bin" collective "$@" >"$tmp/out" 2>"$tmp/err"
  [ $? -eq 2 ] && grep -q -- "$pattern" "$tmp/err" && [ ! -s "$tmp/out" ]
}

for op in allreduce reducescatter allgather broadcast reduce alltoall; do
  "$bin" collective --json -t dgx-a100-cluster --nodes 2 --op $op --sizes 8B:1GiB:8 >"$tmp/$op.json" 2>"$tmp/err"
  check "$op exits 0" [ $? -eq 0 ]
  check "$op: times positive, busbw = algbw x nccl-tests factor" python3 - "$tmp/$op.json" "$op" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); op = sys.argv[2]; n = d["ranks"]
f = {"allreduce": 2 * (n - 1) / n, "reducescatter": (n - 1) / n, "allgather": (n - 1) / n,
     "alltoall": (n - 1) / n, "broadcast": 1, "reduce": 1}[op]
assert n == 16 and d["nodes"] == 2 and len(d["rows"]) == 10
prev = 0
for r in d["rows"]:
    assert r["time_s"] > 0 and r["time_s"] >= prev, r
    prev = r["time_s"]
    assert abs(r["algbw_Bps"] - r["size_bytes"] / r["time_s"]) <= 1e-9 * r["algbw_Bps"]
    assert abs(r["busbw_Bps"] - f * r["algbw_Bps"]) <= 1e-9 * r["busbw_Bps"]
PY
done

"$bin" collective --json -t dgx-h100 --sizes 1M,1G --flows >"$tmp/a.json" 2>/dev/null
"$bin" collective --json -t dgx-h100 --sizes 1M,1G --flows >"$tmp/b.json" 2>/dev/null
check "same input, byte-identical output" cmp -s "$tmp/a.json" "$tmp/b.json"
check "flow times are reported and agree on an uncontended node" python3 - "$tmp/a.json" <<'PY'
import json, sys
for r in json.load(open(sys.argv[1]))["rows"]:
    assert abs(r["flow_time_s"] - r["time_s"]) <= 0.02 * r["time_s"], r
PY

# The tuner rates the GPUs' time, never the host's launch floor, whether or
# not an era gives the group a tuner twin: an era that changes no table (as
# 2.18-2.22's tree rows, which the newest tables keep) changes no choice
# where the launches of -g 8 bound every candidate's time.
python3 - "$2/models/presets/collectives.json" "$tmp/era.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
p["nccl"]["eras"].append({"before": "2.23", "base_latency": {"tree": p["base_latency"]["tree"]}})
json.dump(p, open(sys.argv[2], "w"))
PY
era=(collective --json -t dgx-a100 --nccl-version 2.20 --gpus-per-process 8 --sizes 256:32KiB:4)
"$bin" "${era[@]}" >"$tmp/noera.json" 2>&1
"$bin" "${era[@]}" --params "$tmp/era.json" >"$tmp/era-out.json" 2>&1
check "an era equal to the newest tables changes no choice" python3 - "$tmp/noera.json" "$tmp/era-out.json" <<'PY'
import json, sys
a, b = (json.load(open(f))["rows"] for f in sys.argv[1:])
assert len(a) == 4 and [(r["algo"], r["proto"], r["time_s"]) for r in a] == \
    [(r["algo"], r["proto"], r["time_s"]) for r in b], (a, b)
PY

check "bad --sizes" bad "bad --sizes" -t dgx-a100 --sizes 2.5
check "unknown --op" bad "unknown --op" -t dgx-a100 --op nope
check "unknown --algo" bad "unknown --algo" -t dgx-a100 --algo nope
check "unknown topology" bad "unknown topology preset" -t nope
check "an algorithm that cannot run says why" bad "power-of-two" -t dgx1-v100 --ranks 6 --algo rhd
check "ranks that cannot be spread evenly" bad "spread evenly" -t dgx-a100-cluster --ranks 13
check "a single-node preset does not grow" bad "one node, not the 4 asked for" -t dgx-a100 --nodes 4
check "a missing --topology" bad "--topology is required"
check "thousands of sizes' flows on 4096 ranks are refused before they run" \
  bad "flows in all, more than" -t dgx-a100-cluster --nodes 512 --flows --sizes 1:1TiB:1.01
# one rank moves nothing between devices: refused, as validate refuses a run of one rank (review 8; it printed a 0 time)
check "one rank: nothing to predict" bad "--ranks must be a whole number between 2 and" -t dgx-a100-cluster --ranks 1 --sizes 8B --flows
# a count is digits only, whatever the side of its spaces or a sign (review 9: ' 8' and '+8' passed, '8 ' did not)
for n in ' 8' '+8' '8 '; do
    check "--nodes '$n' refused" bad "--nodes must be a whole number between 1 and" -t dgx-a100-cluster --nodes "$n" --sizes 8B
done
check "the MPI libraries' algorithms on millions of ranks are refused before they run" \
  bad "rank-sizes in all, more than" -t olivia-cpu --nodes 16000 --library mpi
"$bin" validate -t dgx1-v100 --ranks 1 "$src/tests/data/traces/nccl-tests_allreduce_v100-sxm2-16gb_8gpu_hybrid-cube-mesh.txt" \
  >/dev/null 2>"$tmp/one.err"
check "validate refuses a run of one rank: nothing moves between devices" \
  sh -c "grep -q 'the trace says 8 ranks' '$tmp/one.err'"
# the V100 run cut to its first rank: busbw = 2 (n - 1) / n algbw = 0 on one
grep -v "Rank  [1-7] " "$src/tests/data/traces/nccl-tests_allreduce_v100-sxm2-16gb_8gpu_hybrid-cube-mesh.txt" \
  | sed 's/nGpus 8/nGpus 1/' | awk '/^ *[0-9]/ { $7 = "0.00"; $11 = "0.00" } { print }' >"$tmp/one-rank.txt"
"$bin" validate -t dgx1-v100 "$tmp/one-rank.txt" >/dev/null 2>"$tmp/one.err"
rc=$?
check "a one-rank nccl-tests run is refused, exit 2" sh -c "[ $rc -eq 2 ] && grep -q 'one rank took part' '$tmp/one.err'"

# --datatype: NVLS reduces only 16-, 32- and 64-bit types (NCCL's ncclNvlsSupported), so an int8
# all-reduce on 8 H100 runs Ring where bfloat16's runs NVLS; an unknown type, or NVLS forced on int8, is bad input
"$bin" collective --json -t dgx-h100 --sizes 1GiB --datatype int8 >"$tmp/i8.json" 2>&1
"$bin" collective --json -t dgx-h100 --sizes 1GiB --datatype bfloat16 >"$tmp/bf.json" 2>&1
check "--datatype int8 runs Ring, bfloat16 NVLS, on 8 H100" python3 - "$tmp/i8.json" "$tmp/bf.json" <<'PY'
import json, sys
i8, bf = (json.load(open(f))["rows"][0] for f in sys.argv[1:])
assert i8["algo"] == "ring" and bf["algo"] == "nvls" and i8["time_s"] > bf["time_s"], (i8, bf)
PY
"$bin" collective -t dgx-h100 --sizes 1GiB --datatype int4 >/dev/null 2>"$tmp/dt.err"
rc=$?
check "an unknown --datatype is refused, exit 2" sh -c "[ $rc -eq 2 ] && grep -q \"unknown --datatype 'int4'\" '$tmp/dt.err'"
"$bin" collective -t dgx-h100 --sizes 1GiB --datatype f8e4m3 --algo nvls >/dev/null 2>"$tmp/dt.err"
rc=$?
check "nvls forced on an FP8 all-reduce is refused, exit 2" sh -c "[ $rc -eq 2 ] && grep -q 'nvls reduces only' '$tmp/dt.err'"

echo "cli_collective: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
