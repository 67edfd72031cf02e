#!/bin/bash
# shardsim sweep: a small grid (GPT-3 125M, 1-2 DGX A100 nodes, replicated vs
# sharded) runs; JSON, CSV and PNG are well formed; bad input exits 2 with a
# message; the output does not depend on the number of threads.
set -u
BIN=$1
SRC=$2
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fail=0

cat > "$TMP/base.json" <<'EOF'
{
  "topology": "dgx-a100-cluster", "nodes": 1,
  "model": "gpt3-125m", "global_batch": 64, "micro_batch": 2,
  "parallelism": {"weight_update": "replicated"}
}
EOF
GRID=(--vary nodes=1,2 --vary parallelism.weight_update=replicated,sharded)

# JSON: 4 points in order, each a full result; the base gives no dp, so dp followed nodes
if ! "$BIN" sweep "$TMP/base.json" "${GRID[@]}" --json --jobs 3 > "$TMP/out.json" 2> "$TMP/err"; then
    echo "FAIL json sweep:"; cat "$TMP/err"; fail=1
fi
[ -s "$TMP/err" ] && { echo "FAIL: stderr not empty (no tty, no failures):"; cat "$TMP/err"; fail=1; }
python3 - "$TMP/out.json" <<'PY' || { echo "FAIL sweep JSON"; fail=1; }
import json, sys
d = json.load(open(sys.argv[1]))
assert list(d["vary"]) == ["nodes", "parallelism.weight_update"], d["vary"]
assert d["vary"]["nodes"] == [1, 2]
pts = d["points"]
assert len(pts) == 4 and d["ran"] == 4 and d["failed"] == 0
want = [(1, "replicated"), (1, "sharded"), (2, "replicated"), (2, "sharded")]
for i, (p, (n, wu)) in enumerate(zip(pts, want)):
    assert p["index"] == i
    assert p["values"] == {"nodes": n, "parallelism.weight_update": wu}, p["values"]
    r = p["result"]
    assert r["config"]["devices"] == 8 * n and r["config"]["dp"] == 8 * n
    assert p["derived"]["parallelism.dp"] == 8 * n
    assert r["config"]["dp_from"] == "ranks / (tp x pp)", r["config"]["dp_from"]  # as run says (review 9)
    assert r["config"]["weight_update"] == wu
    for k in ["step_time_s", "samples_per_s", "tokens_per_s", "mfu", "flops_per_device"]:
        assert r[k] > 0, k
    assert r["memory_per_device_bytes"]["total"] > 0 and isinstance(r["fits"], bool)
# twice the devices, same global batch: faster; sharding saves memory
assert pts[2]["result"]["step_time_s"] < pts[0]["result"]["step_time_s"]
assert pts[1]["result"]["memory_per_device_bytes"]["total"] < pts[0]["result"]["memory_per_device_bytes"]["total"]
assert any("dp follows nodes" in n for n in d["notes"])
PY

# table, CSV and plots; the same bytes whatever the number of threads
if ! "$BIN" sweep "$TMP/base.json" "${GRID[@]}" --jobs 1 --csv "$TMP/out.csv" --plot "$TMP/scaling.png" \
        --plot-memory "$TMP/mem.svg" > "$TMP/table1" 2> "$TMP/err"; then
    echo "FAIL table sweep:"; cat "$TMP/err"; fail=1
fi
"$BIN" sweep "$TMP/base.json" "${GRID[@]}" --jobs 4 > "$TMP/table4" 2>/dev/null
cmp -s "$TMP/table1" "$TMP/table4" || { echo "FAIL: --jobs 1 and --jobs 4 differ"; diff "$TMP/table1" "$TMP/table4"; fail=1; }
"$BIN" sweep "$TMP/base.json" "${GRID[@]}" --json --jobs 1 > "$TMP/again.json" 2>/dev/null
cmp -s "$TMP/out.json" "$TMP/again.json" || { echo "FAIL: two JSON runs differ"; fail=1; }
[ "$(grep -c '^[12] ' "$TMP/table1")" -eq 4 ] || { echo "FAIL: table lacks 4 rows:"; cat "$TMP/table1"; fail=1; }
[ "$(wc -l < "$TMP/out.csv")" -eq 5 ] || { echo "FAIL: CSV has $(wc -l < "$TMP/out.csv") lines, not 5"; fail=1; }
python3 - "$TMP/out.csv" <<'PY' || { echo "FAIL CSV"; fail=1; }
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
assert len(rows) == 4
assert [r["nodes"] for r in rows] == ["1", "1", "2", "2"]
assert [r["parallelism.weight_update"] for r in rows] == ["replicated", "sharded"] * 2
for r in rows:
    assert float(r["flops_per_device"]) > 1e12  # SI: FLOP/s, not TFLOP/s
    assert float(r["step_time_s"]) > 0 and int(r["devices"]) in (8, 16) and r["fits"] in ("true", "false")
    assert r["error"] == ""
PY
head -c 8 "$TMP/scaling.png" | od -An -tx1 | tr -d ' \n' | grep -q '^89504e470d0a1a0a$' ||
    { echo "FAIL: --plot did not write a PNG"; fail=1; }
python3 -c "import sys, xml.dom.minidom as m; m.parse(sys.argv[1])" "$TMP/mem.svg" 2>/dev/null ||
    { echo "FAIL: --plot-memory SVG not well formed"; fail=1; }
# a value that would close the SVG terminal's CDATA sections
"$BIN" sweep "$TMP/base.json" --vary 'name=x]]>y,z' --plot-memory "$TMP/cdata.svg" >/dev/null 2>"$TMP/err" &&
    python3 -c "import sys, xml.dom.minidom as m; m.parse(sys.argv[1])" "$TMP/cdata.svg" 2>/dev/null ||
    { echo "FAIL: a label with ]]> makes the SVG ill-formed"; fail=1; }

# invalid points are rows with an error, the rest still runs (exit 0):
# at 4 nodes dp is 32, and 32 x micro_batch 4 does not divide global_batch 64
"$BIN" sweep "$TMP/base.json" --vary nodes=1,2,4 --vary micro_batch=2,4 --csv "$TMP/err.csv" --json \
    > "$TMP/part.json" 2> "$TMP/err"
rc=$?
[ $rc -eq 0 ] || { echo "FAIL partial sweep: exit $rc"; cat "$TMP/err"; fail=1; }
grep -q "1 of 6 points failed" "$TMP/err" || { echo "FAIL partial sweep stderr:"; cat "$TMP/err"; fail=1; }
python3 - "$TMP/part.json" "$TMP/err.csv" <<'PY' || { echo "FAIL partial sweep output"; fail=1; }
import csv, json, sys
d = json.load(open(sys.argv[1]))
bad = [p for p in d["points"] if "error" in p]
assert len(bad) == 1 and bad[0]["values"] == {"nodes": 4, "micro_batch": 4}, bad
assert "global_batch" in bad[0]["error"] and "result" not in bad[0]
rows = list(csv.DictReader(open(sys.argv[2], newline="")))
assert '"global_batch"' in rows[5]["error"] and rows[5]["step_time_s"] == ""
PY

# bad input: exit 2, a message, nothing on stdout
bad() { # NAME EXPECTED-FRAGMENT ARGS...
    local name=$1 frag=$2
    shift 2
    "$BIN" sweep "$@" > "$TMP/out" 2> "$TMP/err"
    rc=$?
    if [ $rc -ne 2 ]; then echo "FAIL $name: exit $rc, expected 2"; cat "$TMP/err"; fail=1; fi
    grep -qF -- "$frag" "$TMP/err" || { echo "FAIL $name: stderr lacks '$frag':"; cat "$TMP/err"; fail=1; }
}
bad no_equals "expected KEY=V1,V2" "$TMP/base.json" --vary nodes
bad bad_range "not a member of the progression" "$TMP/base.json" --vary nodes=1,2,4,...,100
bad twice "varied twice" "$TMP/base.json" --vary nodes=1 --vary nodes=2
bad deep_key "more than 16 components in the key" "$TMP/base.json" --vary "$(printf 'a.%.0s' $(seq 40))a=1"
bad no_vary "--vary" "$TMP/base.json"
bad plot_ext ".png or .svg" "$TMP/base.json" --vary nodes=1 --plot "$TMP/x.txt"
bad through_string "\"topology\" is not an object" "$TMP/base.json" --vary topology.nodes=2
# an unknown key fails every point: the message names the point and the key
bad unknown_key 'point 0 (parallelism.dpp=1): unknown key "dpp"' "$TMP/base.json" --vary parallelism.dpp=1,2
printf '{"topology": "dgx-a100-cluster",\n "model": "gpt3-125m", "global_batch": 0}\n' > "$TMP/badbase.json"
bad bad_base "$TMP/badbase.json:2: " "$TMP/badbase.json" --vary nodes=1,2

"$BIN" sweep --help | grep -q "dp = nodes x ranks per node" || { echo "FAIL: --help lacks the dp rule"; fail=1; }

# the points' warnings under the table, each once with its points: an
# accelerator computed on another chip's topology, as run prints it
cat > "$TMP/h100.json" <<'EOF'
{
  "accelerator": "h100-sxm", "topology": "dgx-h100-cluster", "nodes": 1,
  "model": "gpt3-125m", "global_batch": 64, "micro_batch": 2,
  "parallelism": {"weight_update": "sharded"}
}
EOF
"$BIN" sweep "$TMP/h100.json" --vary topology=dgx-a100-cluster,dgx-h100-cluster,dgx-a100 > "$TMP/warn.txt" 2> "$TMP/err" ||
    { echo "FAIL sweep over topologies:"; cat "$TMP/err"; fail=1; }
grep -q '^# warning (point 0): the scenario computes on h100-sxm, but topology dgx-a100-cluster describes a100' "$TMP/warn.txt" &&
    grep -q '^# warning (point 2): the scenario computes on h100-sxm, but topology dgx-a100 describes a100' "$TMP/warn.txt" ||
    { echo "FAIL: the accelerator mismatch is not under the sweep's table:"; cat "$TMP/warn.txt"; fail=1; }
[ "$(grep -c 'computes on h100-sxm' "$TMP/warn.txt")" -eq 2 ] ||
    { echo "FAIL: each warning once:"; cat "$TMP/warn.txt"; fail=1; }

# validate --plot (delivered with sweep): the picture, and the JSON unchanged
TRACE="$SRC/tests/data/traces/nccl-tests_allreduce_abci-a100-40gb_2node-16gpu_sharp.txt"
if [ -f "$TRACE" ]; then
    "$BIN" validate -t abci-a100 --json --plot "$TMP/val.png" "$TRACE" > "$TMP/val.json" 2> "$TMP/err" ||
        { echo "FAIL validate --plot:"; cat "$TMP/err"; fail=1; }
    head -c 8 "$TMP/val.png" | od -An -tx1 | tr -d ' \n' | grep -q '^89504e470d0a1a0a$' ||
        { echo "FAIL: validate --plot did not write a PNG"; fail=1; }
    python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert len(d['rows']) > 10" "$TMP/val.json" ||
        { echo "FAIL: validate --json with --plot"; fail=1; }
    "$BIN" validate -t abci-a100 --plot "$TMP/val.gif" "$TRACE" > /dev/null 2>&1
    [ $? -eq 2 ] || { echo "FAIL: validate --plot .gif did not exit 2"; fail=1; }
fi

[ $fail -eq 0 ] && echo "cli_sweep: all passed"
exit $fail
