#!/bin/bash
# Input that says two things, or absurd things, is an error (exit 2, FILE:LINE
# of the key that causes it, nothing on stdout), never a silent choice: keys
# that contradict each other, non-finite and unphysical numbers and unit
# strings, outputs that would overwrite an input or each other, 0 or negative
# integer options; run and sweep follow one dp rule; echoed values are capped.
set -u
BIN=$1
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fail=0

# expect NAME FRAGMENT [FILE:LINE] -- ARGS...: exit 2, stderr holds FRAGMENT
# (and "shardsim: FILE:LINE: " when given), stdout empty
expect() {
    local name=$1 frag=$2 pos=$3
    shift 4
    "$BIN" "$@" > "$TMP/out" 2> "$TMP/err"
    local rc=$?
    [ $rc -eq 2 ] || { echo "FAIL $name: exit $rc, expected 2"; cat "$TMP/err"; fail=1; }
    grep -qF -- "$frag" "$TMP/err" || { echo "FAIL $name: stderr lacks '$frag':"; cat "$TMP/err"; fail=1; }
    if [ -n "$pos" ] && ! grep -qF -- "shardsim: $pos: " "$TMP/err"; then
        echo "FAIL $name: stderr does not start with shardsim: $pos:"; cat "$TMP/err"; fail=1
    fi
    [ -s "$TMP/out" ] && { echo "FAIL $name: stdout not empty"; fail=1; }
    grep -q CRITICAL "$TMP/err" && { echo "FAIL $name: GLib criticals on stderr"; fail=1; }
    [ "$(wc -c < "$TMP/err")" -le 1200 ] || { echo "FAIL $name: stderr of $(wc -c < "$TMP/err") bytes"; fail=1; }
}

S="$TMP/s"
mkdir -p "$S"
head='"topology": "dgx-a100-cluster", "nodes": 1, "model": "gpt3-125m", "global_batch": 64'

# ---- contradictions: at the line of the key ----
printf '{%s,\n "parallelism": {"weight_update": "sharded",\n   "zero_stage": 0}}\n' "$head" > "$S/zs0.json"
expect zero_stage_0_sharded 'contradicts "weight_update": "sharded"' "$S/zs0.json:3" -- run "$S/zs0.json"
printf '{%s,\n "parallelism": {"weight_update": ["replicated", "sharded"],\n   "zero_stage": 0}}\n' "$head" \
    > "$S/zs0list.json"
expect zero_stage_0_list 'contradicts' "$S/zs0list.json:3" -- run "$S/zs0list.json"
printf '{%s,\n "parallelism": {"zero_stage": 2,\n   "weight_update": "replicated"}}\n' "$head" > "$S/zs2.json"
expect zero_stage_2_replicated 'contradicts' "$S/zs2.json:2" -- run "$S/zs2.json"
# allgather_overlap where it cannot apply is inert, and said so (a sweep over
# weight updates or ZeRO stages meets it on every point)
printf '{%s,\n "parallelism": {"weight_update": "replicated",\n   "allgather_overlap": true}}\n' "$head" > "$S/ago.json"
"$BIN" run --json "$S/ago.json" > "$S/ago.out" 2>/dev/null
grep -q 'has no effect on a replicated weight update' "$S/ago.out" || { echo "FAIL allgather_replicated: no warning"; fail=1; }
printf '{%s,\n "parallelism": {"zero_stage": 3,\n   "allgather_overlap": false}}\n' "$head" > "$S/ago3.json"
"$BIN" run --json "$S/ago3.json" > "$S/ago3.out" 2>/dev/null
grep -q 'has no effect with ZeRO-3' "$S/ago3.out" || { echo "FAIL allgather_zero3: no warning"; fail=1; }
# the same contradiction in a sweep's base
expect sweep_contradiction 'contradicts' "$S/zs0.json:3" -- sweep "$S/zs0.json" --vary nodes=1,2

# ---- non-finite and absurd numbers, unit strings and sizes ----
printf '{"topology": "dgx-a100-cluster", "model": "gpt3-125m",\n "global_batch": 1e400}\n' > "$S/inf.json"
expect json_inf '"global_batch" must be a finite number' "$S/inf.json:2" -- run "$S/inf.json"
cat > "$S/topo.json" <<'EOF'
{"name": "two", "endpoints": ["a", "b"],
 "links": [
  {"src": "a", "dst": "b",
   "bandwidth": "1e300Gbps", "latency": "1us", "kind": "net"}
 ]}
EOF
expect bandwidth_overflow '"bandwidth" must be between 1 kB/s and 1 PB/s' "$S/topo.json:4" -- \
    collective --topology "$S/topo.json" --sizes 1M
sed 's/"1e300Gbps"/"100Gbps"/; s/"1us"/"1e9s"/' "$S/topo.json" > "$S/lat.json"
expect latency_absurd '"latency" must be between 0 s and 1 s' "$S/lat.json:4" -- \
    collective --topology "$S/lat.json" --sizes 1M
# through a scenario: the scenario's line of "topology", then the topology's
printf '{"model": "gpt3-125m", "global_batch": 8, "accelerator": "a100-80gb",\n "topology": "%s"}\n' \
    "$S/topo.json" > "$S/viatopo.json"
expect bandwidth_via_scenario "$S/topo.json:4: \"bandwidth\" must be between" "$S/viatopo.json:2" -- \
    run "$S/viatopo.json"
printf '{%s,\n "parallelism": {\n   "bucket_bytes": "1000TiB"}}\n' "$head" > "$S/bucket.json"
expect bucket_huge '"bucket_bytes" must be between 1 B and 64 GiB, not 1000 TiB' "$S/bucket.json:3" -- \
    run "$S/bucket.json"
printf '{%s,\n "parallelism": {\n   "bucket_bytes": 0}}\n' "$head" > "$S/bucket0.json"
expect bucket_zero '"bucket_bytes" must be between 1 B and 64 GiB, not 0 B' "$S/bucket0.json:3" -- \
    run "$S/bucket0.json"
expect collective_size_huge 'between 1 B and 1 TiB' "" -- collective --topology dgx-a100-cluster --sizes 8B:1PiB

# ---- outputs that are inputs or each other: refused before any work ----
printf '{%s}\n' "$head" > "$S/ok.json"
cp "$S/ok.json" "$S/ok.orig"
expect timeline_is_input '--timeline' "" -- run "$S/ok.json" --timeline "$S/ok.json"
(cd "$S" && "$BIN" run ok.json --timeline ./ok.json > /dev/null 2>&1; [ $? -eq 2 ]) ||
    { echo "FAIL: run --timeline ./ok.json (the input by another name) not refused"; fail=1; }
ln -s ok.json "$S/link.json"
expect timeline_link_to_input '--timeline' "" -- run "$S/ok.json" --timeline "$S/link.json"
expect csv_is_input '--csv' "" -- sweep "$S/ok.json" --vary nodes=1 --csv "$S/ok.json"
expect plot_is_plot_memory '--plot and --plot-memory' "" -- \
    sweep "$S/ok.json" --vary nodes=1 --plot "$S/a.png" --plot-memory "$S/../s/a.png"
expect csv_is_plot '--csv and --plot' "" -- sweep "$S/ok.json" --vary nodes=1 --csv "$S/a.png" --plot "$S/a.png"
cmp -s "$S/ok.json" "$S/ok.orig" || { echo "FAIL: an input was overwritten"; fail=1; }
[ -e "$S/a.png" ] && { echo "FAIL: a refused sweep wrote its output"; fail=1; }

# ---- flags the run would pass over are refused (review 8) ----
expect seed_contiguous '--placement-seed goes with --placement scattered' "" -- \
    collective --topology dgx-a100-cluster --placement-seed 5
expect mpi_nccl_version '--library mpi takes no --nccl-version' "" -- \
    collective --topology dgx-a100-cluster --library mpi --nccl-version 2.8
expect gpp_divides '--gpus-per-process 3: a node of dgx-a100 has 8 GPUs' "" -- \
    collective --topology dgx-a100 --gpus-per-process 3

# ---- integer options: 0 and negatives are errors, not the default ----
for v in 0 -1 x 99999999999 1; do
    [ "$v" = 1 ] || expect "nodes_$v" '--nodes must be a whole number between 1 and' "" -- \
        collective --topology dgx-a100-cluster --nodes "$v"
    expect "ranks_$v" '--ranks must be a whole number between 2 and' "" -- \
        collective --topology dgx-a100-cluster --ranks "$v"
    [ "$v" = 1 ] && continue
    expect "jobs_$v" '--jobs must be a whole number between 1 and 4096' "" -- sweep "$S/ok.json" --vary nodes=1 --jobs "$v"
    expect "validate_nodes_$v" '--nodes must be a whole number' "" -- validate -t dgx-a100-cluster --nodes "$v" x.txt
done

# ---- errors of the scenario's meaning: at the scenario's key ----
printf '{%s,\n "parallelism": {\n   "dp": 16}}\n' "$head" > "$S/toobig.json"
expect devices_beyond_ranks 'dp x tp x pp = 16 x 1 x 1 = 16 devices' "$S/toobig.json:3" -- run "$S/toobig.json"
# with cp the product names it (review 9: the note said dp x tp x pp of a product that had cp in it)
printf '{"topology": "dgx-a100-cluster", "nodes": 1, "model": "gpt3-125m", "global_batch": 64,\n "parallelism": {"cp": 4, "dp": 8}}\n' > "$S/toobigcp.json"
expect devices_beyond_ranks_cp 'dp x tp x pp x cp = 8 x 1 x 1 x 4 = 32 devices' "$S/toobigcp.json:2" -- run "$S/toobigcp.json"
printf '{"topology": "dgx-a100-cluster", "nodes": 4, "model": "gpt3-125m", "global_batch": 64,\n "parallelism": {"cp": 2, "dp": 4}}\n' > "$S/fewcp.json"
"$BIN" run "$S/fewcp.json" | grep -qF "note: dp x tp x cp x pp = 8 uses 8 of the topology's 32 ranks" ||
    { echo "FAIL: the unused-ranks note under cp"; "$BIN" run "$S/fewcp.json" | grep note; fail=1; }
printf '{"topology": "dgx-a100-cluster", "nodes": 1, "global_batch": 64,\n "model": {"layers": 2, "hidden": 96, "heads": 3, "seq_len": 8, "vocab": 10},\n "parallelism": {\n   "tp": 3}}\n' \
    > "$S/uneven.json"
expect uneven_ranks 'not a multiple of tp x pp = 3 x 1' "$S/uneven.json:4" -- run "$S/uneven.json"
printf '{"topology": "dgx1-v100", "model": "gpt3-125m", "global_batch": 64,\n "precision": "bf16"}\n' \
    > "$S/dtype.json"
expect dtype_missing 'has no bf16 arithmetic' "$S/dtype.json:2" -- run "$S/dtype.json"

# ---- echoed values are capped ----
python3 -c 'import json; print(json.dumps({"topology": "dgx-a100-cluster", "model": "gpt3-125m",
    "global_batch": 8, "precision": "p" * 100000}))' > "$S/long.json"
expect long_value '"precision" = "ppp' "" -- run "$S/long.json"
grep -qF 'ppp..."' "$TMP/err" || { echo "FAIL: the long value is not cut with ...:"; head -c 300 "$TMP/err"; fail=1; }
python3 -c 'import json; print(json.dumps({"topology": "dgx-a100-cluster", "model": "gpt3-125m",
    "global_batch": 8, "k" * 100000: 1}))' > "$S/longkey.json"
expect long_key 'unknown key "kkk' "" -- run "$S/longkey.json"
expect long_vary 'expected KEY=V1,V2' "" -- sweep "$S/ok.json" --vary "$(python3 -c 'print("n" * 100000)')"

# ---- one dp rule: without dp, run and sweep fill the machine alike ----
printf '{"topology": "dgx-a100-cluster", "nodes": 2, "model": "gpt3-125m", "global_batch": 64}\n' > "$S/nodp.json"
"$BIN" run --json "$S/nodp.json" > "$TMP/run.json" 2> "$TMP/err" || { echo "FAIL nodp run:"; cat "$TMP/err"; fail=1; }
for axis in nodes=2 global_batch=64; do
    "$BIN" sweep --json "$S/nodp.json" --vary "$axis" > "$TMP/sweep.json" 2> "$TMP/err" ||
        { echo "FAIL nodp sweep $axis:"; cat "$TMP/err"; fail=1; }
    python3 - "$TMP/run.json" "$TMP/sweep.json" <<'PY' || { echo "FAIL: run and sweep --vary $axis disagree on dp"; fail=1; }
import json, sys
r = json.load(open(sys.argv[1]))
p = json.load(open(sys.argv[2]))["points"][0]
assert r["config"]["dp"] == 16 and r["config"]["devices"] == 16, r["config"]
assert r["config"]["dp_from"] == "ranks / (tp x pp)", r["config"]
assert p["result"]["config"]["dp"] == 16, p["result"]["config"]
assert p["result"]["step_time_s"] == r["step_time_s"], (p["result"]["step_time_s"], r["step_time_s"])
assert p["result"]["config"]["dp_from"] == r["config"]["dp_from"], p["result"]["config"]  # review 9: "the scenario" before
PY
done
# with context parallelism the rule divides by cp too, and the line's factors multiply to the ranks (review 9)
printf '{"topology": "dgx-a100-cluster", "nodes": 2, "model": "gpt3-125m", "global_batch": 64, "parallelism": {"cp": 4}}\n' > "$S/nodpcp.json"
"$BIN" run "$S/nodpcp.json" | grep -qF "dp 4 (= ranks / (tp x cp x pp)) x tp 1 x cp 4 x pp 1" ||
    { echo "FAIL: run's dp line under cp"; "$BIN" run "$S/nodpcp.json" | sed -n 2p; fail=1; }
"$BIN" run "$S/nodp.json" | grep -qF "dp 16 (= ranks / (tp x pp))" || { echo "FAIL: run does not say dp was derived"; fail=1; }
"$BIN" run --json "$S/ok.json" | grep -q '"dp_from":[[:space:]]*"ranks' || { echo "FAIL: dp_from"; fail=1; }
"$BIN" run --help | grep -q "dp = ranks of the topology" || { echo "FAIL: run --help lacks the dp rule"; fail=1; }
"$BIN" sweep --help | grep -q "the same as 'shardsim run'" || { echo "FAIL: sweep --help lacks the dp rule"; fail=1; }

[ $fail -eq 0 ] && echo "cli_contradictions: all passed"
exit $fail
