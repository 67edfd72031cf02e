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
osu_ar=$traces/osu_allreduce_oci-bm-optimized3.36_4node144proc_rocev2-100g_ocitutorials.txt
osu_a2a=$traces/osu_alltoall_oci-bm-optimized3.36_1node36proc_ocitutorials.txt
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

table_refused() { # NAME CONTENT PATTERN: the table $tmp/NAME.csv (CONTENT as printf writes it) refused
  printf "$2" >"$tmp/$1.csv"
  refused "$3" calibrate --accelerator a100-40gb "$tmp/$1.csv"
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

# a full parameters file of before "p2p_ll_threshold" loads, at NCCL's 16 KiB
python3 - "$src/models/presets/collectives.json" "$tmp/old-params.json" <<'EOF'
import json, sys
p = json.load(open(sys.argv[1]))
del p["p2p_ll_threshold"], p["p2p_ll_threshold_source"]
json.dump(p, open(sys.argv[2], "w"))
EOF
protos() { python3 -c "import json,sys; print(' '.join(r['proto'] for r in json.load(sys.stdin)['rows']))"; }
# 16 ranks: 256 KiB is 16 KiB per peer, 512 KiB twice that
a=$("$bin" collective --json -t dgx-h100-cluster --nodes 2 --op alltoall --sizes 256KiB,512KiB | protos)
b=$("$bin" collective --json -t dgx-h100-cluster --nodes 2 --op alltoall --sizes 256KiB,512KiB --params "$tmp/old-params.json" | protos)
check "a parameters file without p2p_ll_threshold: all-to-all LL to 16 KiB per peer" "'$a' == '$b' == 'll simple'"

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

# OSU runs fit the MPI model's parameters ("mpi." keys): synthetic runs made
# by the model itself with known values (the OSU all-reduce and all-to-all
# layouts, and osu_bw for the NIC) give those values back; the overlay is read
# by validate and by collective --library mpi.
printf '{"overlay": "truth", "parameters": {"mpi.overhead": {"value": 3e-7}, "mpi.shm_bandwidth": {"value": 7e9}, "mpi.net_bandwidth": {"value": 9e9}}}\n' >"$tmp/truth.json"
for f in "$osu_ar" "$osu_a2a" "$traces/osu_bw_oci-bm-optimized3.36_2node.txt"; do
  "$bin" validate --json -t oci-bm-optimized3.36 --params "$tmp/truth.json" "$f" >"$tmp/truth-v.json" || fail=1
  python3 - "$f" "$tmp/truth-v.json" "$tmp/syn-$(basename "$f")" <<'EOF'
import json, sys
rows = json.load(open(sys.argv[2]))["traces"][0]["rows"]
out, k, bw = [], 0, False
for line in open(sys.argv[1]):
    f = line.split()
    bw |= "Bandwidth" in line
    if line.startswith("#") or len(f) != 2:
        out.append(line)
        continue
    t = rows[k]["predicted_s"]  # validate's rows, in the file's order; osu_bw: a window of 64 messages
    out.append("%s %.6f\n" % (f[0], 64 * float(f[0]) / t / 1e6 if bw else t * 1e6))
    k += 1
open(sys.argv[3], "w").writelines(out)
EOF
done
"$bin" calibrate --json -t oci-bm-optimized3.36 "$tmp"/syn-osu_*.txt -o "$tmp/mpi.json" >"$tmp/mpi-report.json" ||
  { echo "FAIL: calibrate on OSU runs"; fail=1; }
python3 - "$tmp/mpi-report.json" <<'EOF' || fail=1
import json, sys
r = json.load(open(sys.argv[1]))
got = {p["key"]: p["value"] for p in r["parameters"]}
for k, want in {"mpi.overhead": 3e-7, "mpi.shm_bandwidth": 7e9, "mpi.net_bandwidth": 9e9}.items():
    if abs(got[k] / want - 1) > 0.05:
        print("FAIL: calibrate recovers %s: %g, not %g" % (k, got[k], want))
        sys.exit(1)
if not r["after"]["median_abs_pct_error"] < 1 < r["before"]["median_abs_pct_error"]:
    print("FAIL: the fit on synthetic OSU runs", r["before"], r["after"])
    sys.exit(1)
EOF
after=$(json "['after']['median_abs_pct_error']" <"$tmp/mpi-report.json")
v=$("$bin" validate --json -t oci-bm-optimized3.36 --params "$tmp/mpi.json" "$tmp"/syn-osu_*.txt | json "['median_abs_pct_error']")
check "validate --params MPI OVERLAY gives the calibrated error" "abs($v - $after) < 1e-9"
printf '{"overlay": "test", "parameters": {"mpi.net_bandwidth": {"value": 6.13e9}}}\n' >"$tmp/slowmpi.json"
base=$("$bin" collective --json -t oci-bm-optimized3.36 --library mpi --op alltoall --sizes 1GiB | json "['rows'][0]['time_s']")
slow=$("$bin" collective --json -t oci-bm-optimized3.36 --library mpi --op alltoall --sizes 1GiB --params "$tmp/slowmpi.json" |
  json "['rows'][0]['time_s']")
check "collective --library mpi --params OVERLAY: half the NIC rate, about twice a 144-rank all-to-all" "1.9 < $slow / $base < 2.05"

# Bad input.
refused "give --topology (collectives) or --accelerator" calibrate "$mi355"
refused "at least one trace" calibrate -t mi355x-cluster
refused "No such file" calibrate -t mi355x-cluster "$tmp/none.txt"
refused "calibrate each model on its own traces" calibrate -t oci-bm-optimized3.36 "$osu_ar" "$mi355"
printf '{"overlay": "x",\n "parameters": {"mpi.warp": 1}}\n' >"$tmp/badmpi.json"
refused "badmpi.json:2: unknown MPI model parameter" collective -t oci-bm-optimized3.36 --library mpi --sizes 1MiB --params "$tmp/badmpi.json"
refused "would be overwritten" calibrate -t mi355x-cluster "$mi355" -o "$mi355"
# measurements no run gives (they would overflow the fit, far from their row)
table_refused g 'm,n,k,dtype,seconds\n4096.5,4096,4096,bf16,0.001\n' "g.csv:2: a GEMM row is"
cp "$src/tests/data/steps/mpt-a100-40gb-fsdp.json" "$tmp/"
table_refused s 'scenario,tokens_per_s\nmpt-a100-40gb-fsdp.json,1e-308\n' "s.csv:2: tokens_per_s must be"
# a GEMM faster than the chip's peak (1e-9 s for 4096^3: 137,000 x an A100), a column given twice
table_refused fast 'm,n,k,dtype,seconds\n4096,4096,4096,bf16,1e-9\n' \
    "fast.csv:2: 1.374e+08 TFLOP/s, above this accelerator's fastest peak of"
table_refused dup 'scenario,tokens_per_s,tokens_per_s\nmpt-a100-40gb-fsdp.json,1000,5\n' 'dup.csv:1: column "tokens_per_s" given twice'
table_refused nope 'scenario,tokens_per_s\nnope.json,1000\n' "nope.csv:2: .*nope.json: No such file"
# a model or topology cell names a file beside the table (from any working directory), never standard input
mkdir -p "$tmp/tab"
cp "$src/tests/data/steps/mpt-a100-40gb-fsdp.json" "$tmp/tab/"
printf 'scenario,topology,tokens_per_s\nmpt-a100-40gb-fsdp.json,nope-topology.json,1000\n' >"$tmp/tab/t.csv"
refused 't.csv:2: .*tab/mpt-a100-40gb-fsdp.json:[0-9]*: .*tab/nope-topology.json: No such file' \
    calibrate --accelerator a100-40gb "$tmp/tab/t.csv"
# an error in a row's scenario is said at the key's line in the scenario's file, or at the row where a
# cell set the key (not at a line of the re-printed scenario the row makes)
python3 - "$tmp/tab/mpt-a100-40gb-fsdp.json" "$tmp/tab/rc.json" <<'EOF'
import json, sys
s = json.load(open(sys.argv[1]))
s["parallelism"]["recompute"] = "sometimes"
json.dump(s, open(sys.argv[2], "w"), indent=1)
EOF
line=$(grep -n '"sometimes"' "$tmp/tab/rc.json" | cut -d: -f1)
printf 'scenario,micro_batch,tokens_per_s\nrc.json,1,1000\n' >"$tmp/tab/rc.csv"
refused "rc.csv:2: .*tab/rc.json:$line: \"recompute\" = \"sometimes\"" calibrate --accelerator a100-40gb "$tmp/tab/rc.csv"
printf 'scenario,parallelism.zero_stage,tokens_per_s\nmpt-a100-40gb-fsdp.json,7,1000\n' >"$tmp/tab/zs.csv"
refused 'zs.csv:2: "parallelism.zero_stage" as the row sets it: "zero_stage" must be between 0 and 3' \
    calibrate --accelerator a100-40gb "$tmp/tab/zs.csv"
# review 9: two measurements of one row, a row of another chip, and the collective model's options are
# refused, not ignored
printf 'scenario,step_time_s,tokens_per_s\nmpt-a100-40gb-fsdp.json,1000,100000\n' >"$tmp/tab/two.csv"
refused 'two.csv:2: the row gives both step_time_s and tokens_per_s' calibrate --accelerator a100-40gb "$tmp/tab/two.csv"
printf 'scenario,accelerator,tokens_per_s\nmpt-a100-40gb-fsdp.json,h100-sxm,1000\n' >"$tmp/tab/chip.csv"
refused 'chip.csv:2: the row ran on "h100-sxm", the fit is of a100-40gb' calibrate --accelerator a100-40gb "$tmp/tab/chip.csv"
# a row far beyond a published step table's machine would hold the fit for hours: refused at its line
printf 'scenario,nodes,tokens_per_s\nmpt-a100-40gb-fsdp.json,4096,1000\n' >"$tmp/tab/huge.csv"
refused 'huge.csv:2: the row.s machine has 32768 devices, more than the 16384' calibrate --accelerator a100-40gb "$tmp/tab/huge.csv"
for o in "--params x.json" "--ranks 8" "--nodes 2"; do
    # shellcheck disable=SC2086
    refused "calibrate: ${o%% *} is the collective model's" calibrate --accelerator a100-40gb $o "$tmp/tab/chip.csv"
done
printf 'scenario,model,tokens_per_s\nmpt-a100-40gb-fsdp.json,-,1000\n' >"$tmp/tab/dash.csv"
refused 'dash.csv:2: "model" = "-": a table.s cell names a file or a preset, not standard input' \
    calibrate --accelerator a100-40gb "$tmp/tab/dash.csv"
# a cell is JSON only whole ("2x" is no number), measurements are decimal, no NUL byte, rows as long as the
# header; a spreadsheet's byte-order mark before the header is read past
table_refused tab/mb 'scenario,micro_batch,tokens_per_s\nmpt-a100-40gb-fsdp.json,2x,1000\n' \
    'mb.csv:2: "micro_batch" as the row sets it: "micro_batch" must be a number'
table_refused tab/hex 'scenario,tokens_per_s\nmpt-a100-40gb-fsdp.json,0x10\n' "hex.csv:2: tokens_per_s must be a number"
table_refused tab/nul 'scenario,tokens_per_s\nmpt-a100-40gb-fsdp.json,1000\0\n' "nul.csv:2: binary file (NUL byte)"
table_refused tab/long 'scenario,tokens_per_s\nmpt-a100-40gb-fsdp.json,1000,5\n' "long.csv:2: the row has 3 cells, the header 2"
table_refused tab/sdash 'scenario,tokens_per_s\n-,1000\n' 'sdash.csv:2: "scenario" = "-": a table.s cell names a file, not standard input'
# a quoted cell holds commas (RFC 4180 within a line): a JSON array reaches the scenario whole
table_refused tab/qa 'scenario,parallelism.recompute_modules,tokens_per_s\n"mpt-a100-40gb-fsdp.json", "[""core_attn"",""mlp""]",1000\n' \
    'qa.csv:2: "parallelism.recompute_modules" as the row sets it: "recompute_modules" is Megatron-Core.s selective'
table_refused tab/qopen 'scenario,tokens_per_s\n"mpt-a100-40gb-fsdp.json,1000\n' "qopen.csv:2: cell 1: a quote opened and not closed"
table_refused tab/qtail 'scenario,tokens_per_s\nmpt-a100-40gb-fsdp.json,"1000"5\n' "qtail.csv:2: cell 2: text after a quoted cell"
# an error the scenario says at an object a cell set something inside is the row's, not the file's
table_refused tab/lay 'scenario,tokens_per_s,model.layers\nmpt-a100-40gb-fsdp.json,1000,abc\n' \
    'lay.csv:2: "model" as the row sets it: "layers" must be a number'
# a trailing comma's nameless column, an empty or endless dotted name, a number past double's range
table_refused tab/trail 'scenario,tokens_per_s,\nmpt-a100-40gb-fsdp.json,1000,\n' "trail.csv:1: column 3 has no name"
table_refused tab/dots 'scenario,tokens_per_s,model..layers\nmpt-a100-40gb-fsdp.json,1000,3\n' 'dots.csv:1: column 3 ("model..layers") has an empty part'
table_refused tab/deep "scenario,tokens_per_s,$(printf 'a.%.0s' $(seq 40))a\nmpt-a100-40gb-fsdp.json,1000,1\n" "deep.csv:1: column 3 .* has too many parts"
table_refused tab/inf 'scenario,parallelism.zero_stage,tokens_per_s\nmpt-a100-40gb-fsdp.json,1e999,1000\n' \
    'inf.csv:2: "parallelism.zero_stage" as the row sets it: "zero_stage" must be a number'
printf '\357\273\277scenario,tokens_per_s\nmpt-a100-40gb-fsdp.json,100000\n' >"$tmp/tab/bom.csv"
timeout 120 "$bin" calibrate --accelerator a100-40gb "$tmp/tab/bom.csv" >/dev/null 2>"$tmp/err" ||
    { echo "FAIL: a byte-order mark before the header"; cat "$tmp/err"; fail=1; }
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
