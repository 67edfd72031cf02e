#!/bin/bash
# shardsim run: bad scenarios exit 2 with FILE:LINE on stderr; the default
# example exits 0 and prints one JSON object with the documented keys.
set -u
BIN=$1
SRC=$2
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fail=0

bad() { # NAME TEXT EXPECTED-FRAGMENT
    printf '%s\n' "$2" > "$TMP/$1.json"
    "$BIN" run "$TMP/$1.json" > "$TMP/out" 2> "$TMP/err"
    rc=$?
    if [ $rc -ne 2 ]; then echo "FAIL $1: exit $rc, expected 2"; fail=1; fi
    if ! grep -q "shardsim: $TMP/$1.json:[0-9][0-9]*: " "$TMP/err"; then
        echo "FAIL $1: no FILE:LINE on stderr:"; cat "$TMP/err"; fail=1
    fi
    if ! grep -qF "$3" "$TMP/err"; then echo "FAIL $1: stderr lacks '$3':"; cat "$TMP/err"; fail=1; fi
    if [ -s "$TMP/out" ]; then echo "FAIL $1: stdout not empty"; fail=1; fi
}

bad unknown_key '{"topology": "dgx-a100-cluster", "model": "gpt3-1.3b", "global_batch": 8,
 "parallelism": {"dp": 8,
   "dpp": 2}}' 'unknown key "dpp"'
bad syntax '{"topology": "dgx-a100-cluster",
 "model": "gpt3-1.3b",, "global_batch": 8}' 'invalid JSON'
bad zero_stage '{"topology": "dgx-a100-cluster", "model": "gpt3-1.3b", "global_batch": 8,
 "parallelism": {"zero_stage": 4}}' 'zero_stage'
bad recompute '{"topology": "dgx-a100-cluster", "model": "gpt3-1.3b", "global_batch": 8,
 "parallelism": {"recompute": "some"}}' 'recompute'
bad model '{"topology": "dgx-a100-cluster",
 "model": "no-such-model", "global_batch": 8}' 'no-such-model'
bad batch '{"topology": "dgx-a100-cluster", "model": "gpt3-1.3b",
 "global_batch": 0}' 'global_batch'
bad allgather_overlap '{"topology": "dgx-a100-cluster", "model": "gpt3-1.3b", "global_batch": 8,
 "parallelism": {"dp": 8, "weight_update": "sharded",
   "allgather_overlap": "yes"}}' 'allgather_overlap'
bad grad_reduce_dtype '{"topology": "dgx-a100-cluster", "model": "gpt3-1.3b", "global_batch": 8,
 "parallelism": {"dp": 8,
   "grad_reduce_dtype": "fp8"}}' 'grad_reduce_dtype'

bad model_base '{"topology": "dgx-a100-cluster", "global_batch": 8,
 "model": {"base": "no-such-model", "seq_len": 4096}}' 'model base "no-such-model"'
bad model_base_type '{"topology": "dgx-a100-cluster", "global_batch": 8,
 "model": {"base": 7}}' '"base" names a workload preset or file'
bad model_base_stdin '{"topology": "dgx-a100-cluster", "global_batch": 8,
 "model": {"base": "-"}}' '"base" = "-": a file named in a file is not read from standard input'
bad model_stdin '{"topology": "dgx-a100-cluster", "global_batch": 8,
 "model": "-"}' '"model" = "-": a file named in a file is not read from standard input'
bad accelerator_stdin '{"topology": "dgx-a100-cluster", "nodes": 1, "global_batch": 8, "model": "gpt3-1.3b",
 "accelerator": "-"}' '"accelerator" = "-": a file named in a file is not read from standard input'
bad topology_stdin '{"global_batch": 8, "model": "gpt3-1.3b",
 "topology": "-"}' '"topology" = "-": a file named in a file is not read from standard input'
bad params_stdin '{"topology": "dgx-a100-cluster", "nodes": 1, "global_batch": 8, "model": "gpt3-1.3b",
 "collective_params": "-"}' '"collective_params" = "-": a file named in a file is not read from standard input'
# and one file further: an accelerator overlay's base, a topology's accelerator
printf '{"overlay": "x", "base": "-", "parameters": {}}\n' > "$TMP/ov.json"
bad overlay_base_stdin '{"topology": "dgx-a100-cluster", "nodes": 1, "global_batch": 8, "model": "gpt3-1.3b",
 "accelerator": "'"$TMP"'/ov.json"}' 'ov.json:1: "base" = "-": a file named in a file is not read from standard input'
sed 's/"accelerator": "a100-80gb"/"accelerator": "-"/' "$SRC/topologies/presets/dgx-a100-cluster.json" > "$TMP/topo.json"
grep -q '"accelerator": "-"' "$TMP/topo.json" || { echo "FAIL: the topology preset names no a100-80gb"; fail=1; }
bad topo_accel_stdin '{"nodes": 1, "global_batch": 8, "model": "gpt3-1.3b",
 "topology": "'"$TMP"'/topo.json"}' '"accelerator" = "-": a file named in a file is not read from standard input'
bad model_base_key '{"topology": "dgx-a100-cluster", "global_batch": 8,
 "model": {"base": "gpt3-1.3b", "seq_lenn": 4096}}' 'unknown field "seq_lenn"'

# a preset's band says whose rows it is: "measured" or "transferred", nothing else, no other key
python3 - "$SRC/models/presets/accelerators/h200.json" "$TMP" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["uncertainty"]["basis"] = "guessed"
json.dump(d, open(sys.argv[2] + "/basis.json", "w"), indent=1)
d["uncertainty"]["basis"] = "transferred"
d["uncertainty"]["width"] = 1
json.dump(d, open(sys.argv[2] + "/width.json", "w"), indent=1)
PY
bad accel_basis '{"topology": "dgx-h200-cluster", "nodes": 1, "global_batch": 8, "model": "gpt3-1.3b",
 "accelerator": "'"$TMP"'/basis.json"}' '"basis" = "guessed" is not one of "measured", "transferred"'
bad accel_band_key '{"topology": "dgx-h200-cluster", "nodes": 1, "global_batch": 8, "model": "gpt3-1.3b",
 "accelerator": "'"$TMP"'/width.json"}' 'unknown field "width"'

# a preset as the base of an inline model: its other keys replace the
# preset's (its sequence length here), the rest is the preset's; and a sweep
# over model.seq_len on a model given by name does the same
base='{"topology": "dgx-a100-cluster", "nodes": 1, "global_batch": 8, "micro_batch": 1,
 "model": {"base": "gpt3-1.3b", "seq_len": 4096}}'
printf '%s\n' "$base" > "$TMP/base.json"
printf '%s\n' "${base/\{\"base\": \"gpt3-1.3b\", \"seq_len\": 4096\}/\"gpt3-1.3b\"}" > "$TMP/named.json"
if ! python3 - "$BIN" "$TMP" <<'PY'
import json, subprocess, sys
b, t = sys.argv[1], sys.argv[2]
run = lambda f: json.loads(subprocess.run([b, "run", "--json", f], capture_output=True, text=True, check=True).stdout)
based, named = run(t + "/base.json"), run(t + "/named.json")
assert based["flops_per_device"] > 0 and based["model_flops_per_step"] > 1.9 * named["model_flops_per_step"], (based, named)
sw = subprocess.run([b, "sweep", "--json", t + "/named.json", "--vary", "model.seq_len=2048,4096"],
                    capture_output=True, text=True, check=True).stdout
pt = json.loads(sw)["points"][1]
assert pt["values"]["model.seq_len"] == 4096 and pt["result"]["step_time_s"] == based["step_time_s"], pt
PY
then echo "FAIL model base / sweep of model.seq_len"; fail=1; fi

# a missing file is an error too (exit non-zero, message on stderr)
"$BIN" run "$TMP/none.json" > /dev/null 2> "$TMP/err"
if [ $? -eq 0 ]; then echo "FAIL missing file: exit 0"; fail=1; fi

# the default example
if ! "$BIN" run --json "$SRC/examples/default.json" > "$TMP/out.json" 2> "$TMP/err"; then
    echo "FAIL default example:"; cat "$TMP/err"; fail=1
fi
if ! python3 - "$TMP/out.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
def check(r):
    for k in ["step_time_s", "breakdown", "memory_per_device_bytes", "fits", "mfu", "flops_per_device"]:
        assert k in r, k
    # SI: FLOP/s per device, the step's hardware FLOPs over its time and devices
    f = r["hardware_flops_per_step"] / r["step_time_s"] / r["config"]["devices"]
    assert abs(r["flops_per_device"] / f - 1) < 1e-9 and r["flops_per_device"] > 1e12, r["flops_per_device"]
    assert "tflops_per_device" not in r
    for k in ["compute", "exposed_communication", "optimizer", "pipeline_bubble"]:
        assert isinstance(r["breakdown"][k], (int, float)) and r["breakdown"][k] >= 0, k
    for k in ["weights", "gradients", "optimizer_state", "activations", "total"]:
        assert r["memory_per_device_bytes"][k] >= 0, k
    assert r["step_time_s"] > 0 and 0 < r["mfu"] < 1 and isinstance(r["fits"], bool)
    b = r["breakdown"]
    assert abs(b["compute"] + b["exposed_communication"] + b["optimizer"] + b["pipeline_bubble"] - r["step_time_s"]) <= 1e-6 * r["step_time_s"] + 1e-9
check(d)
for v in d.get("variants", []):
    check(v)
assert len(d["variants"]) == 2 and d["variants"][1]["config"]["weight_update"] == "sharded"
# the sharded variant gathers its updated weights behind the forward (the default), in bf16 gradients
assert d["variants"][1]["config"]["allgather_overlap"] is True and d["variants"][0]["config"]["allgather_overlap"] is False
assert all(v["config"]["grad_reduce_dtype"] == "bf16" for v in d["variants"])
PY
then echo "FAIL default example JSON"; fail=1; fi

# every example runs; --timeline writes a trace
for f in "$SRC"/examples/*.json; do
    if ! "$BIN" run "$f" > /dev/null 2> "$TMP/err"; then echo "FAIL example $f:"; cat "$TMP/err"; fail=1; fi
done
if ! "$BIN" run --timeline "$TMP/tl.json" "$SRC/examples/default.json" > /dev/null 2> "$TMP/err"; then
    echo "FAIL --timeline:"; cat "$TMP/err"; fail=1
fi
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert len(d['traceEvents']) > 10" "$TMP/tl.json" || { echo "FAIL timeline JSON"; fail=1; }
# determinism: same input, same bytes
"$BIN" run --json "$SRC/examples/default.json" > "$TMP/again.json" 2>/dev/null
cmp -s "$TMP/out.json" "$TMP/again.json" || { echo "FAIL: two runs differ"; fail=1; }

[ $fail -eq 0 ] && echo "cli_run: all passed"
exit $fail
