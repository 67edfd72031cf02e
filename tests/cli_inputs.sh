#!/usr/bin/env bash
# Every command's inputs: devices, directories and FIFOs refused by name, size
# caps (64 MiB for JSON, 1 GiB for traces) enforced before memory grows, and
# "-" read as standard input.  Each refusal exits 2 within seconds.
# Usage: bash cli_inputs.sh SHARDSIM_BINARY SOURCE_DIR
set -u
bin=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
refused() { # PATTERN ARGS...: exit 2 within 10 s, PATTERN on stderr, nothing on stdout
  local pattern=$1
  shift
  timeout 10 "$bin" "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
  local rc=$?
  if [ "$rc" -ne 2 ] || ! grep -q -- "$pattern" "$tmp/err" || [ -s "$tmp/out" ]; then
    echo "FAIL (exit $rc, want 2 and '$pattern'): shardsim $*"
    cat "$tmp/err"
    fail=1
  fi
}
mkfifo "$tmp/fifo"
v100=$src/tests/data/traces/nccl-tests_allreduce_v100-sxm2-16gb_8gpu_hybrid-cube-mesh.txt

refused "/dev/zero: is a device" run /dev/zero
refused "is a directory" run "$tmp"
refused "fifo: is a FIFO" run "$tmp/fifo"
refused "/dev/zero: is a device" collective -t /dev/zero --sizes 1MiB
refused "/dev/zero: is a device" validate -t dgx1-v100 /dev/zero
# a trace naming no hosts is not put on one node it cannot fit; a run refused before its first row prints nothing
refused "16 ranks, more than one node of topology oci-bm-gpu-h100.8 holds (8), and the trace names no hosts: give the run's node count with --nodes" \
    validate -t oci-bm-gpu-h100.8 "$src/tests/data/traces/nccl-tests_allgather_h100-gcp-a3high_2node16gpu_tcpx_dstack-docs.txt"
refused "nvls across nodes needs in-network reduction" validate -t oci-bm-gpu-h100.8 --algo nvls \
    "$src/tests/data/traces/nccl-tests_allreduce_h100-oci-bm-gpu-h100.8_2node16gpu_16x200g-roce_nccl2.23.4_oci-hpc-troubleshooting.txt"
refused "fifo: is a FIFO" validate -t dgx1-v100 "$tmp/fifo"
refused "/dev/zero: is a device" sweep /dev/zero --vary nodes=1,2
printf '{"topology": "/dev/zero", "model": "gpt3-1.3b", "global_batch": 8}\n' >"$tmp/topo-dev.json"
refused "/dev/zero: is a device" run "$tmp/topo-dev.json"

# over the JSON cap: refused from its size before it is read, and from a pipe as it streams
truncate -s 65M "$tmp/big.json"
refused "limit for JSON input" run "$tmp/big.json"
timeout 20 bash -c "head -c 70000000 /dev/zero | tr '\\0' ' ' | '$bin' run - >'$tmp/out' 2>'$tmp/err'"
rc=$?
if [ "$rc" -ne 2 ] || ! grep -q "<stdin>: larger than 64 MiB" "$tmp/err"; then
  echo "FAIL: 70 MB on standard input: exit $rc"; cat "$tmp/err"; fail=1
fi
# over the trace cap: a sparse 1.1 GiB file, refused without reading it
truncate -s 1100M "$tmp/huge.txt"
refused "limit for a trace" validate -t dgx1-v100 "$tmp/huge.txt"

# "-" is standard input
"$bin" run --json - <"$src/examples/default.json" >"$tmp/stdin.json" 2>"$tmp/err"
"$bin" run --json "$src/examples/default.json" >"$tmp/file.json" 2>>"$tmp/err"
if ! cmp -s "$tmp/stdin.json" "$tmp/file.json"; then echo "FAIL: run - differs from run FILE"; cat "$tmp/err"; fail=1; fi
"$bin" validate --json -t dgx1-v100 - <"$v100" >"$tmp/v.json" 2>"$tmp/err"
rc=$?
if [ "$rc" -ne 0 ] || ! grep -q '"median_abs_pct_error"' "$tmp/v.json"; then
  echo "FAIL: validate - (exit $rc)"; cat "$tmp/err"; fail=1
fi
"$bin" sweep --json - --vary nodes=1,2 <"$src/examples/sweep-gpt3-1.3b-a100.json" >"$tmp/sweep.json" 2>"$tmp/err"
rc=$?
if [ "$rc" -ne 0 ] || ! grep -q '"scenario":[[:space:]]*"<stdin>"' "$tmp/sweep.json"; then
  echo "FAIL: sweep - (exit $rc)"; cat "$tmp/err"; fail=1
fi
printf '{"topology": "dgx-a100", "model": "gpt3-1.3b",\n "global_batch": 8,,}\n' >"$tmp/bad.json"
"$bin" run - <"$tmp/bad.json" >/dev/null 2>"$tmp/err"
if [ $? -ne 2 ] || ! grep -q "^shardsim: <stdin>:2: invalid JSON" "$tmp/err"; then
  echo "FAIL: errors in standard input are named <stdin>:LINE"; cat "$tmp/err"; fail=1
fi
# A step past the simulator's time range (2^64 ps) is the input's doing, not a cycle in the graph:
# a 1 GFLOP/s H100 (within the accepted range) on GPT-3 13B, 64 micro-batches per replica
python3 - "$src/models/presets/accelerators/h100-sxm.json" "$tmp/slow.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["peak_flops"]["bf16"] = 1e9
json.dump(d, open(sys.argv[2], "w"))
PY
python3 - "$src/examples/default.json" "$tmp/slow-run.json" "$tmp/slow.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["accelerator"] = sys.argv[3]
d["global_batch"] = 4096
json.dump(d, open(sys.argv[2], "w"))
PY
refused "the step runs past the simulator's time range" run "$tmp/slow-run.json"
# ... and a plan over that chip finds it of every candidate before building their graphs (it took
# minutes building millions of tasks for each, then aborted in allocation)
timeout 60 "$bin" plan "$tmp/slow-run.json" --gpus 64 >"$tmp/out" 2>"$tmp/err" # seconds, not minutes (ASan on a loaded machine: ~15 s)
rc=$?
if [ "$rc" -ne 2 ] || ! grep -q "no configuration is valid" "$tmp/err" || ! grep -q " 0 ranked.* [1-9][0-9]* invalid" "$tmp/out"; then
  echo "FAIL: plan over a 1 GFLOP/s chip (exit $rc)"; cat "$tmp/err"; fail=1
fi
# A step graph past about 10 million tasks is refused at global_batch, not built until memory runs
# out: GPT-3 175B reduce-scattering ZeRO-2's buckets after each of 16384 micro-batches (aborted
# after 31 s and 6.4 GB)
printf '{"accelerator": "a100-80gb", "topology": "dgx-a100-cluster", "nodes": 2, "model": "gpt3-175b",\n "global_batch": 32768, "micro_batch": 1, "precision": "bf16", "optimizer": "adam",\n "parallelism": {"dp": 2, "tp": 8, "pp": 1, "zero_stage": 2}}\n' >"$tmp/zero2.json"
refused 'zero2.json:2: the step.s graph would hold about 1.22e+08 tasks (16384 micro-batches per step x 96 layers, the gradient buckets reduced after each under ZeRO-2)' run "$tmp/zero2.json"
# nccl-tests output before an OSU table is refused, not passed over as the job's output
cat "$v100" "$src/tests/data/traces/osu_allreduce_oci-bm-optimized3.36_4node144proc_rocev2-100g_ocitutorials.txt" >"$tmp/both.txt"
refused "both.txt:[0-9]*: nccl-tests output in an OSU file" validate -t oci-bm-optimized3.36 "$tmp/both.txt"
# plan reads its scenario once: standard input too
"$bin" plan - --gpus 8 <"$src/examples/default.json" >"$tmp/plan.txt" 2>"$tmp/err"
rc=$?
if [ "$rc" -ne 0 ] || ! grep -q "scenario's own configuration" "$tmp/plan.txt"; then
  echo "FAIL: plan - (exit $rc)"; cat "$tmp/err"; fail=1
fi
# ... and says which of its weight updates is the reference
grep -q "^# the scenario compares 2 weight updates: its own configuration is the first (replicated)$" "$tmp/plan.txt" \
  || { echo "FAIL: plan of a scenario comparing weight updates"; fail=1; }

# A preset-or-file option takes a file name with non-ASCII bytes in any locale (GLib converted
# string options from the locale's charset: "Invalid byte sequence" under LC_ALL=C)
cp "$src/topologies/presets/dgx1-v100.json" "$tmp/tö.json"
for loc in C C.UTF-8; do
  if ! LC_ALL=$loc "$bin" validate -t "$tmp/tö.json" "$v100" >"$tmp/out" 2>"$tmp/err" || ! grep -q "median" "$tmp/out"; then
    echo "FAIL: validate -t with a non-ASCII file name under LC_ALL=$loc"; cat "$tmp/err"; fail=1
  fi
  if ! LC_ALL=$loc "$bin" collective -t "$tmp/tö.json" -s 1MiB >"$tmp/out" 2>"$tmp/err"; then
    echo "FAIL: collective -t with a non-ASCII file name under LC_ALL=$loc"; cat "$tmp/err"; fail=1
  fi
done

# a JSON string holding \u0000 (cJSON would end it there), and the loss of a CNN
printf '{"model": "gpt3-1.3b", "topology": "dgx-a100", "global_batch": 8,\n "cross_entropy": "te\\u0000x"}\n' >"$tmp/nul.json"
refused 'nul.json:2: a string holds \\u0000' run "$tmp/nul.json"
printf '{"model": "resnet50", "topology": "dgx1-v100", "global_batch": 256, "micro_batch": 32,\n "cross_entropy": "te"}\n' >"$tmp/cnn.json"
refused 'cnn.json:2: "cross_entropy" is for transformers' run "$tmp/cnn.json"
printf '{"model": "resnet50", "topology": "dgx1-v100", "global_batch": 256, "micro_batch": 32,\n "attention": "fused"}\n' >"$tmp/cnn.json"
refused 'cnn.json:2: "attention" is for transformers' run "$tmp/cnn.json"
printf '{"model": "resnet50", "topology": "dgx-h100", "global_batch": 256, "micro_batch": 32, "precision": "fp8",\n "fp8_dot_product_attention": true}\n' >"$tmp/cnn.json"
refused 'cnn.json:2: "fp8_dot_product_attention" is for transformers' run "$tmp/cnn.json"

[ "$fail" -eq 0 ] && echo "inputs: all refusals and stdin reads as expected"
exit "$fail"
