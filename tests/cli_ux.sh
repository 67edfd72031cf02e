#!/usr/bin/env bash
# A new-user review's follow-ups: what used to pass in silence now says so.
#  - a trace validated on a topology of another chip warns on stderr
#    ("shardsim: warning: ..."), only where both the trace's device lines and
#    the topology's accelerator name a chip; stdout (--json) is unchanged;
#  - --nccl-version past the newest modelled warns and names the newest, and one before the oldest (2.8) the oldest;
#  - an unknown accelerator in a topology file is reported at that file's line
#    by collective and run;
#  - a batch that does not divide fails before the topology is built;
#  - plan's text table ends with a legend of its configuration words;
#  - a short option's value may be glued to it, as getopt reads it ("-j1",
#    "-tdgx-a100"), the same bytes as with a space.
# Usage: bash cli_ux.sh SHARDSIM_BINARY SOURCE_DIR
set -u
bin=$1
src=$2
. "$(dirname "${BASH_SOURCE[0]}")/lib_check.sh" # $tmp, check, expect_exit
traces=$src/tests/data/traces
v100=$traces/nccl-tests_allreduce_v100-sxm2-16gb_8gpu_hybrid-cube-mesh.txt
a100=$traces/nccl-tests_allreduce_a100-40gb-oci-bm-gpu4.8_1node8gpu_nccl2.25.1_ocitutorials-ol.txt
mi300x=$traces/rccl-tests_allreduce_mi300x_8gpu_1node.txt
gh200=$traces/nccl-tests_allreduce_gh200_2node8gpu_slingshot_cscs-santis-cxi-container.txt
osu=$traces/osu_latency_oci-bm-optimized3.36_2node.txt

# Runs $bin ARGS into $tmp/out, $tmp/err; true when it exits 0.
runs() { "$bin" "$@" >"$tmp/out" 2>"$tmp/err" || { echo "  exit $?: $(head -c 300 "$tmp/err")"; false; }; }
# stderr holds exactly N lines, each a warning matching PATTERN.
warned() { # N PATTERN
  [ "$(grep -c . "$tmp/err")" -eq "$1" ] && [ "$(grep -c -- "^shardsim: warning: $2" "$tmp/err")" -eq "$1" ] ||
    { echo "  stderr: $(head -c 400 "$tmp/err")"; false; }
}
quiet() { [ ! -s "$tmp/err" ] || { echo "  stderr: $(head -c 300 "$tmp/err")"; false; }; }
is_json() { python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$tmp/out"; }

# (1) the trace's device against the topology's accelerator
check "V100 trace on an A100 topology runs" runs validate --json -t dgx-a100-cluster "$v100"
check "... and warns, naming both" warned 1 \
  "$v100: the trace ran on Tesla V100-SXM2-16GB, topology dgx-a100-cluster models a100-80gb$"
check "... with one JSON object on stdout" is_json
check "V100 trace on dgx1-v100: no warning" runs validate --json -t dgx1-v100 "$v100"
check "... stderr empty" quiet
check "text output warns too" runs validate -t dgx-a100-cluster "$v100"
check "... the same warning" warned 1 "$v100: the trace ran on Tesla V100"
check "an A100-40GB trace on an A100-80GB topology: same chip, no warning" runs validate --json -t dgx-a100 "$a100"
check "... stderr empty" quiet
check "rccl-tests' device lines are read: MI300X on dgx-a100 warns" runs validate --json -t dgx-a100 "$mi300x"
check "... naming AMD Instinct MI300X" warned 1 "$mi300x: the trace ran on AMD Instinct MI300X, topology dgx-a100"
check "MI300X on mi300x-node: no warning" runs validate --json -t mi300x-node "$mi300x"
check "... stderr empty" quiet
check "a topology naming no accelerator: no warning" runs validate --json -t gh200-slingshot "$gh200"
check "... stderr empty" quiet
check "a trace without device lines (OSU): no warning" runs validate --json -t dgx-a100-cluster --nodes 2 "$osu"
check "... stderr empty" quiet
# a superchip matches its GPU's generation (GH200: Hopper), not another's
python3 - "$src/topologies/presets/gh200-slingshot.json" "$tmp" <<'EOF'
import json, sys
t = json.load(open(sys.argv[1]))
for acc in ("h100-sxm", "mi300x"):
    u = {"name": t["name"], "accelerator": acc}
    u.update({k: v for k, v in t.items() if k not in ("name", "accelerator")})
    json.dump(u, open(f"{sys.argv[2]}/gh200-{acc}.json", "w"), indent=1)
EOF
check "GH200 trace on a topology of h100-sxm: no warning" runs validate --json -t "$tmp/gh200-h100-sxm.json" "$gh200"
check "... stderr empty" quiet
check "GH200 trace on a topology of mi300x" runs validate --json -t "$tmp/gh200-mi300x.json" "$gh200"
check "... warns" warned 1 "$gh200: the trace ran on NVIDIA GH200 120GB, topology gh200-slingshot models mi300x$"

# (2) --nccl-version past the newest modelled
check "collective --nccl-version 3.0 runs" runs collective --json -t dgx-a100 --op allreduce --sizes 1M --nccl-version 3.0
cp "$tmp/out" "$tmp/v3.json"
check "... warns, naming the newest modelled" warned 1 \
  "collective: NCCL 3.0 is newer than the newest the model follows, NCCL 2.30: modelled as 2.30$"
check "collective --nccl-version 2.30: no warning" runs collective --json -t dgx-a100 --op allreduce --sizes 1M \
  --nccl-version 2.30
check "... stderr empty" quiet
check "... and 3.0 is modelled as 2.30" cmp -s "$tmp/out" "$tmp/v3.json"
check "RCCL past its newest" runs collective --json -t mi300x-node --op allreduce --sizes 1M --nccl-version 2.29
check "... names RCCL 2.28" warned 1 "collective: RCCL 2.29 is newer than the newest the model follows, RCCL 2.28"
check "collective --nccl-version 2.1 runs" runs collective --json -t dgx-a100 --op allreduce --sizes 1M --nccl-version 2.1
check "... warns, naming the oldest modelled" warned 1 \
  "collective: NCCL 2.1 is older than the oldest the model follows, NCCL 2.8: modelled with 2.8's tables$"
check "collective --nccl-version 2.8: no warning" runs collective --json -t dgx-a100 --op allreduce --sizes 1M \
  --nccl-version 2.8
check "... stderr empty" quiet
check "validate --nccl-version 3.0 runs" runs validate --json -t dgx1-v100 "$v100" --nccl-version 3.0
check "... warns per trace" warned 1 "$v100: NCCL 3.0 is newer than the newest the model follows, NCCL 2.30"
check "... one JSON object" is_json

# (3) an unknown accelerator in a topology file, at the file's line
sed 's/"accelerator": "a100-80gb"/"accelerator": "a100-80"/' "$src/topologies/presets/dgx-a100-cluster.json" \
  >"$tmp/topo.json"
line=$(grep -n '"accelerator"' "$tmp/topo.json" | head -1 | cut -d: -f1)
check "collective reports it at the topology's line" expect_exit 2 \
  "^shardsim: $tmp/topo.json:$line: unknown accelerator \"a100-80\"" collective -t "$tmp/topo.json" --op allreduce
python3 - "$src/examples/default.json" "$tmp" <<'EOF'
import json, sys
s = json.load(open(sys.argv[1]))
del s["accelerator"]
s["topology"] = sys.argv[2] + "/topo.json"
json.dump(s, open(sys.argv[2] + "/scen.json", "w"), indent=1)
EOF
check "run reports it at the topology's line" expect_exit 2 \
  "^shardsim: $tmp/scen.json:[0-9]*: $tmp/topo.json:$line: unknown accelerator \"a100-80\"" run "$tmp/scen.json"

# (4) a batch that does not divide fails before the topology is built: with a
# topology that cannot be built, the batch is what is reported
edit() { # NAME PYTHON-EDIT-OF-s (a scenario) [PYTHON-EDIT-OF-t (its topology)]
  python3 - "$src" "$tmp" "$1" "$2" "${3:-}" <<'EOF'
import json, sys
src, tmp, name, es, et = sys.argv[1:]
s = json.load(open(src + "/examples/default.json"))
t = json.load(open(src + "/topologies/presets/dgx-a100-cluster.json"))
exec(es); exec(et)
json.dump(t, open(f"{tmp}/{name}-topo.json", "w"), indent=1)
s["topology"] = f"{tmp}/{name}-topo.json"
json.dump(s, open(f"{tmp}/{name}.json", "w"), indent=1)
EOF
}
edit big "s['nodes'] = 524288; s['global_batch'] = 1000"
check "524,288 nodes, a batch that does not divide" expect_exit 2 \
  "^shardsim: $tmp/big.json:[0-9]*: \"global_batch\" 1000 is not a multiple of dp x micro_batch = 4194304 x 1" \
  run "$tmp/big.json"
edit broken "s['global_batch'] = 1000" "t['nvlink']['bandwidth'] = 'fast'"
check "the batch before a topology that cannot be built" expect_exit 2 \
  "^shardsim: $tmp/broken.json:[0-9]*: \"global_batch\" 1000 is not a multiple" run "$tmp/broken.json"
edit broken-dp "s['global_batch'] = 1000; s['parallelism']['dp'] = 48" "t['nvlink']['bandwidth'] = 'fast'"
check "the same with dp given" expect_exit 2 \
  "^shardsim: $tmp/broken-dp.json:[0-9]*: \"global_batch\" 1000 is not a multiple of dp x micro_batch = 48 x 1$" \
  run "$tmp/broken-dp.json"
edit topo-only "pass" "t['nvlink']['bandwidth'] = 'fast'"
check "a batch that divides: the topology's error" expect_exit 2 "$tmp/topo-only-topo.json:[0-9]*:.*fast" \
  run "$tmp/topo-only.json"

# (5) plan's legend: under the text table, not in --json
cat >"$tmp/q.json" <<'EOF'
{"name": "q", "accelerator": "a100-80gb", "topology": "dgx-a100-cluster", "nodes": 1,
 "model": "gpt3-125m", "global_batch": 64, "micro_batch": 1,
 "parallelism": {"dp": 8, "tp": 1, "pp": 1}}
EOF
check "plan (text) runs" runs plan "$tmp/q.json" --gpus 8 --tokens 2B --top 3
legend_after_table() {
  local l r
  l=$(grep -n '^# configuration: tpN tensor, ppN pipeline' "$tmp/out" | cut -d: -f1)
  r=$(grep -n '^ *[0-9][0-9]* *[0-9][0-9]* tp[0-9]' "$tmp/out" | tail -1 | cut -d: -f1)
  [ -n "$l" ] && [ -n "$r" ] && [ "$l" -eq $((r + 1)) ] && grep -q 'tpov TP communication overlapped' "$tmp/out" ||
    { echo "  legend line ${l:-none} after row ${r:-none}"; false; }
}
check "... a legend line right under the table" legend_after_table
check "plan --json runs" runs plan "$tmp/q.json" --gpus 8 --tokens 2B --top 3 --json
check "... one JSON object, no legend" is_json
check "... the legend is not in it" bash -c "! grep -q 'tpN tensor' '$tmp/out'"

# a short option's value glued to it
"$bin" collective -t dgx-a100 -n 8 -s 1MiB,2MiB >"$tmp/spaced" 2>&1
check "-tdgx-a100 -n8 -s1MiB,2MiB: the same bytes as with spaces" \
  bash -c "'$bin' collective -tdgx-a100 -n8 -s1MiB,2MiB | cmp -s - '$tmp/spaced'"
check "sweep -j1 runs" runs sweep "$src/examples/default.json" --vary nodes=1,2 -j1
check "-j0 still refused by value: exit 2" expect_exit 2 "jobs" sweep "$src/examples/default.json" --vary nodes=1,2 -j0
check "past --, a word is not split" expect_exit 2 "unexpected argument" collective -t dgx-a100 -s 1MiB -- -n8
check "-- ends the options: validate -t dgx1-v100 -- TRACE runs" runs validate -t dgx1-v100 -- "$v100"
python3 -c "import json,sys; t=json.load(open(sys.argv[1])); t['nvlink']['bandwidth']='1PB/s'; json.dump(t,open(sys.argv[2],'w'))" \
  "$src/topologies/presets/dgx-a100.json" "$tmp/pb.json"
check "the bound the errors name, 1 PB/s, can be written" runs collective -t "$tmp/pb.json" -s 1GiB
abs_bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin") abs_src=$(cd "$src" && pwd)
check "a long option's value is not split: --csv -jx writes -jx" \
  bash -c "cd '$tmp' && '$abs_bin' sweep '$abs_src/examples/default.json' --vary nodes=1,2 --csv -jx >/dev/null && test -s ./-jx"
check "a long option with one dash is refused by name: exit 2" expect_exit 2 "a long option takes two dashes, --nodes" \
  collective -t dgx-a100 -nodes 4 -s 1MiB

echo "cli_ux: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
