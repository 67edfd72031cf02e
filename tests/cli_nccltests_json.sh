#!/usr/bin/env bash
# nccl-tests' JSON report (-J, nccl-tests 2.17 and later) read as its printed
# table is: published runs written in that layout at test time
# (tests/nccltests_json.py, no number changed) validate and calibrate to the
# same figures as their text, and bad reports are bad input at their line.
# What a run's environment left NCCL's tuner (NCCL_ALGO, NCCL_PROTO: the
# report's env, NCCL's "set by environment" log line) is what the model's
# tuner picks from.
# Usage: bash cli_nccltests_json.sh SHARDSIM_BINARY SOURCE_DIR
set -u
bin=$1
src=$2
traces=$src/tests/data/traces
. "$(dirname "${BASH_SOURCE[0]}")/lib_check.sh" # $tmp, check, expect_exit
to_json() { python3 "$src/tests/nccltests_json.py" "$@"; }

# The same figures from the text and from the report: every row, the summary,
# ranks, nodes and NCCL version (the names of the files aside).
same_validation() { # TEXT JSON ARGS...
  local text=$1 json=$2
  shift 2
  "$bin" validate --json "$@" "$text" >"$tmp/a.json" 2>/dev/null &&
    "$bin" validate --json "$@" "$json" >"$tmp/b.json" 2>/dev/null &&
    python3 - "$tmp/a.json" "$tmp/b.json" <<'PY'
import json, sys
def strip(d):
    if isinstance(d, dict):
        return {k: strip(v) for k, v in d.items() if k not in ("trace", "name", "file")}
    if isinstance(d, list):
        return [strip(v) for v in d]
    return d
a, b = (strip(json.load(open(p))) for p in sys.argv[1:])
assert a == b, "text and report differ"
rows = sum(len(t["rows"]) for t in a.get("traces", [a]))
assert rows >= 6, rows
PY
}

dell=$traces/nccl-tests_allreduce_h100-sxm-dell-xe9680_2node16gpu_8x400g-ib_nccl2.26.2_nccl-tests-issue309.txt
to_json "$dell" ./build/all_reduce_perf >"$tmp/dell.json"
check "a 2-node H100 run: the report validates as its text (16 ranks, 2 hosts, NCCL 2.26.2 from the report)" \
  same_validation "$dell" "$tmp/dell.json" -t dgx-h100-cluster --nodes 2
"$bin" validate -t dgx-h100-cluster --nodes 2 "$tmp/dell.json" >"$tmp/out" 2>&1
check "its rank count, hosts and version come from the report" grep -q "16 ranks on 2 node(s), topology dgx-h100-cluster, NCCL 2.26.2" "$tmp/out"

g8=$traces/nccl-tests_allreduce_h100-sxm_1node8gpu_g8-one-process_nccl-tests-issue290.txt
to_json "$g8" all_reduce_perf >"$tmp/g8.json"
check "one process driving 8 GPUs (config.ngpus 8): the same launch floor" same_validation "$g8" "$tmp/g8.json" -t dgx-h100

dt=$traces/nccl-tests_allreduce_h200-dell-xe9680_2node16gpu_8x400g-roce-spectrumx_nccl2.30.4_openshift-guide-all-datatypes.txt
to_json "$dt" /opt/nccl-tests/build/all_reduce_perf >"$tmp/dt.json"
check "-d all: each datatype's table a run, as in the text" same_validation "$dt" "$tmp/dt.json" -t dgx-h200-cluster --nodes 2

to_json "$dell" all_reduce_perf --in-place-only --cpu-time >"$tmp/ip.json"
"$bin" validate -t dgx-h100-cluster --nodes 2 "$tmp/ip.json" >"$tmp/out" 2>"$tmp/err"
check "in-place results only (out_of_place null) and -C's cpu_time are read" grep -q "32 rows" "$tmp/out"

"$bin" calibrate -t dgx-h100-cluster --nodes 2 --json "$dell" >"$tmp/cal_text.json" 2>/dev/null
"$bin" calibrate -t dgx-h100-cluster --nodes 2 --json "$tmp/dell.json" >"$tmp/cal.json" 2>/dev/null
check "calibrate fits a report as its text: the same fit" python3 - "$tmp/cal_text.json" "$tmp/cal.json" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
for d in (a, b):
    d.pop("traces")
assert a == b and a["n_rows"] == 32, "fits differ"
assert a["after"]["median_abs_pct_error"] < a["before"]["median_abs_pct_error"]
PY

# A pretty-printed report: a bad row is named at its own line.
to_json "$dell" all_reduce_perf --indent >"$tmp/pretty.json"
python3 - "$tmp/pretty.json" "$tmp/bad.json" <<'PY' >"$tmp/line"
import json, sys
d = json.load(open(sys.argv[1]))
d["results"][2]["out_of_place"]["time"] = -5
text = json.dumps(d, indent=1)
open(sys.argv[2], "w").write(text)
# the line where the third result's object opens
lines = text.split("\n")
starts = [i + 1 for i, l in enumerate(lines) if l.strip() == "{" and '"size"' in lines[i + 1]]
print(starts[2])
PY
expect_exit 2 "bad.json:$(cat "$tmp/line"): result 3: out-of-place time" validate -t dgx-h100-cluster --nodes 2 "$tmp/bad.json"
check "a negative time is bad input at its result's line" [ $? -eq 0 ]

# Bad reports: exit 2, the message at FILE:LINE.
bad_report() { # NAME FILE TEXT PATTERN
  printf '%s\n' "$3" >"$tmp/$2"
  expect_exit 2 "$2:$4" validate -t dgx-h100 "$tmp/$2"
  check "$1" [ $? -eq 0 ]
}
bad_report "a result without its fields is bad input" r.json '{"results": [{"size": 8}]}' \
  "1: result 1: not a row of nccl-tests' report"
bad_report "a JSON object that is no report is bad input" n.json '{"config": {"nthreads": 2}}' \
  '1: not an nccl-tests JSON report (-J): no "results"'
bad_report "a cut report is bad input" t.json '{"results": [' "1: invalid JSON"
bad_report "a host name of two words is bad input" h.json \
  '{"config": {"devices": [{"rank": 0, "hostname": "a b"}]}, "results": [1]}' \
  '1: device of rank 0: host name "a b" is not one word'
R='{"size": 1024, "count": 256, "type": "float", "redop": "sum", "root": -1, "out_of_place": {"time": 30.5, "alg_bw": 0.03, "bus_bw": 0.06, "nwrong": 0}'
bad_report "a host name that a form feed splits is not one word (it would count two hosts as one)" v.json \
  '{"config": {"devices": [{"rank": 0, "hostname": "n\fA"}]}, "results": [1]}' "1: device of rank 0: host name"
bad_report "a field that a vertical tab splits is no field (its size would be read from count)" s.json \
  '{"results": [{"size": "\u000b", "count": "1024\u000b256", "type": "float", "redop": "sum", "root": -1, "out_of_place": {"time": 30.5, "alg_bw": 0.03, "bus_bw": 0.06, "nwrong": 0}}]}' \
  "1: result 1: not a row"
bad_report "a half that is no object is bad input, not the other half's time" o.json \
  "{\"results\": [$R, \"in_place\": 7}]}" "1: result 1: not a row"
bad_report "a report measures its halves alike" m.json \
  "{\"results\": [$R, \"in_place\": null}, {\"size\": 2048, \"count\": 512, \"type\": \"float\", \"redop\": \"sum\", \"root\": -1, \"out_of_place\": null, \"in_place\": {\"time\": 31, \"alg_bw\": 0.07, \"bus_bw\": 0.07, \"nwrong\": 0}}]}" \
  "1: result 2 has in_place only, result 1 out_of_place only"
bad_report "#wrong is a count" w.json "{\"results\": [${R%0\}}-3}}]}" "1: result 1: not a row"
bad_report "a long field is refused, not echoed" l.json \
  "{\"results\": [{\"size\": 8, \"count\": 2, \"type\": \"$(printf 'x%.0s' $(seq 100))\", \"redop\": \"sum\", \"root\": -1, \"out_of_place\": {\"time\": 1, \"alg_bw\": 0, \"bus_bw\": 0, \"nwrong\": 0}}]}" \
  "1: result 1: not a row"
printf '\xef\xbb\xbf{"results": [\n{"size": 8}]}\n' >"$tmp/bom.json"
expect_exit 2 "bom.json:2: result 1: not a row" validate -t dgx-h100 "$tmp/bom.json"
check "a byte order mark keeps the lines" [ $? -eq 0 ]
printf '{"args": ["all_reduce_perf"], "env": ["NOTE=# OSU RCCL version rccl-tests"], "results": [%s}]}\n' "$R" >"$tmp/osu.json"
"$bin" validate -t dgx-h100 --ranks 8 "$tmp/osu.json" >"$tmp/out" 2>&1
check "a report's strings decide neither its format nor its library" grep -q "allreduce, 8 ranks on 1 node(s), topology dgx-h100$" "$tmp/out"
bad_report "a report without devices needs --ranks, as a table without Rank lines" u.json \
  '{"args": ["all_reduce_perf"], "nccl_version": 22602, "results": [{"size": 1024, "count": 256, "type": "float", "redop": "sum", "root": -1, "out_of_place": {"time": 30.5, "alg_bw": 0.03, "bus_bw": 0.06, "nwrong": null}}]}' \
  " the trace does not say how many ranks"
"$bin" validate -t dgx-h100 --ranks 8 "$tmp/u.json" >"$tmp/out" 2>&1
check "... and runs with it, its collective from args" grep -q "allreduce, 8 ranks on 1 node(s), topology dgx-h100, NCCL 2.26.2" "$tmp/out"

# The run's environment: the 2-node H100 run, given NCCL_ALGO=Ring as its
# report's env or as the line NCCL_DEBUG=INFO prints (a test of the reading:
# that run's page does not say it set the variable), is priced as --algo ring
# would price it, not as the model's own pick (NVLSTree and trees there).
figures() { "$bin" validate --json -t dgx-h100-cluster --nodes 2 "$@" 2>/dev/null |
  python3 -c "import json,sys; d=json.load(sys.stdin); print([(r['predicted_s'], r['algo']) for r in d['rows']])"; }
to_json "$dell" all_reduce_perf --env PATH=/usr/bin --env NCCL_ALGO=Ring >"$tmp/env.json"
figures --algo ring "$dell" >"$tmp/forced"
figures "$tmp/env.json" >"$tmp/env"
figures "$dell" >"$tmp/auto"
check "a report's NCCL_ALGO=Ring is priced as --algo ring" cmp -s "$tmp/forced" "$tmp/env"
check "... which is not the model's own pick" bash -c "! cmp -s '$tmp/forced' '$tmp/auto'"
"$bin" validate --json -t dgx-h100-cluster --nodes 2 "$tmp/env.json" 2>"$tmp/err" | grep -q '"env_algo":.*"ring"'
check "the JSON output says what the environment forced" [ $? -eq 0 ]
check "... and stderr says so" grep -q "the run set NCCL_ALGO=Ring: the model's tuner picks from ring" "$tmp/err"
line=$(grep -n "NCCL version" "$dell" | head -1 | cut -d: -f1)
{ head -n "$line" "$dell"; echo "bm-h100-01:29262:29262 [0] NCCL INFO NCCL_ALGO set by environment to Ring"
  tail -n +"$((line + 1))" "$dell"; } >"$tmp/log.txt"
figures "$tmp/log.txt" >"$tmp/log"
check "NCCL's own 'NCCL_ALGO set by environment to Ring' log line does the same" cmp -s "$tmp/forced" "$tmp/log"
figures --algo tree "$tmp/env.json" >"$tmp/a"
figures --algo tree "$dell" >"$tmp/b"
check "--algo chooses over the environment" cmp -s "$tmp/a" "$tmp/b"
# A set, as NCCL parses it: ^NVLSTree leaves the tuner every other
# algorithm (the model's pick then avoids NVLSTree and differs from its own);
# per-collective lists apply to the run's collective; a value NCCL refuses
# leaves the tuner free, and says so.
to_json "$dell" all_reduce_perf --env "NCCL_ALGO=^NVLSTree" >"$tmp/set.json"
figures "$tmp/set.json" >"$tmp/a"
check "^NVLSTree: the model's tuner picks from the rest" \
  bash -c "! grep -q nvlstree '$tmp/a' && grep -q nvlstree '$tmp/auto' && ! cmp -s '$tmp/a' '$tmp/auto'"
to_json "$dell" all_reduce_perf --env "NCCL_ALGO=ring;allreduce:tree" >"$tmp/per.json"
figures "$tmp/per.json" >"$tmp/a"
figures --algo tree "$dell" >"$tmp/b"
check "ring;allreduce:tree: the all-reduce's own list" cmp -s "$tmp/a" "$tmp/b"
to_json "$dell" all_reduce_perf --env "NCCL_ALGO=NVLS" >"$tmp/nvls.json"
expect_exit 2 "what the run's NCCL_ALGO=NVLS, NCCL_PROTO=(unset) leave it.*nvls across nodes needs in-network reduction" \
  validate -t dgx-h100-cluster --nodes 2 "$tmp/nvls.json"
check "what the environment leaves the model cannot run is bad input, and says why" [ $? -eq 0 ]
to_json "$dell" all_reduce_perf --env "NCCL_ALGO=^Tree,Ring,CollNetDirect,CollNetChain,NVLS,NVLSTree,PAT" >"$tmp/none.json"
expect_exit 2 "which leaves NCCL no algorithm for allreduce" validate -t dgx-h100-cluster --nodes 2 "$tmp/none.json"
check "a value that leaves NCCL nothing is bad input" [ $? -eq 0 ]
expect_exit 2 "nvls/auto cannot run allreduce on dgx-h100-cluster: nvls across nodes" \
  validate -t dgx-h100-cluster --nodes 2 --algo nvls "$tmp/env.json"
check "--algo's own failure does not blame the environment" [ $? -eq 0 ]
gh=$traces/nccl-tests_allreduce_gh200_2node8gpu_slingshot_cscs-alps-ce.txt
to_json "$gh" all_reduce_perf --env NCCL_PROTO=LL128 >"$tmp/ll128.json"
"$bin" validate --json -t gh200-slingshot --nodes 2 "$tmp/ll128.json" 2>/dev/null >"$tmp/out"
check "NCCL_PROTO=LL128 turns LL128 on where NCCL's default would not (NICs off the host CPU)" \
  python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert {r['proto'] for r in d['rows']} == {'ll128'}" "$tmp/out"
to_json "$dell" all_reduce_perf --env "NCCL_ALGO=Rings" >"$tmp/bad.json"
figures "$tmp/bad.json" >"$tmp/a"
"$bin" validate -t dgx-h100-cluster --nodes 2 "$tmp/bad.json" 2>"$tmp/err" >/dev/null
check "a value NCCL refuses leaves the tuner free, and says so" \
  bash -c "cmp -s '$tmp/a' '$tmp/auto' && grep -q 'NCCL_ALGO=Rings, which NCCL refuses: the model picks freely' '$tmp/err'"

echo "cli_nccltests_json: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
