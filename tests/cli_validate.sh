#!/usr/bin/env bash
# shardsim validate from the command line: JSON contract, trace formats, bad input.
# Usage: bash cli_validate.sh SHARDSIM_BINARY SOURCE_DIR
set -u
bin=$1
src=$2
traces=$src/tests/data/traces
. "$(dirname "${BASH_SOURCE[0]}")/lib_check.sh" # $tmp, check, expect_exit

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
expect_exit 2 "give --nodes" validate -t dgx-a100 --ranks 8 "$tmp/osu.txt"
check "OSU without --nodes is bad input (never one node by default)" [ $? -eq 0 ]
expect_exit 2 "measured allgather, not allreduce" validate -t dgx-a100 --ranks 8 --nodes 1 --op allreduce "$tmp/osu.txt"
check "--op cannot contradict an OSU title" [ $? -eq 0 ]
"$bin" validate --json -t dgx-a100 --ranks 8 --nodes 1 "$tmp/osu.txt" >"$tmp/o.json" 2>"$tmp/err"
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
expect_exit 2 "one node, not the 2 asked for" validate -t dgx-a100 "$traces/nccl-tests_allreduce_abci-a100-40gb_2node-16gpu_sharp.txt"
check "16 ranks on 2 hosts do not fit one DGX" [ $? -eq 0 ]
printf '# nThread 1 nGpus 1\n#  size count type redop time algbw busbw error time algbw busbw error\n 8 2 float sum x 0.0 0.0 0 1 0 0 0\n' >"$tmp/bad.txt"
expect_exit 2 "bad.txt:3:" validate --op allreduce --ranks 2 -t dgx-a100 "$tmp/bad.txt"
check "a malformed row names its line" [ $? -eq 0 ]
# Rank lines of 5, 3 and 8 ranks on three hosts: the model's equal blocks per node would predict 2 x 8
python3 - "$traces/nccl-tests_allreduce_h100-sxm-dell-xe9680_2node16gpu_8x400g-ib_nccl2.26.2_nccl-tests-issue309.txt" "$tmp/uneven.txt" <<'PY'
import re, sys
out = []
for line in open(sys.argv[1]):
    m = re.match(r"#\s+Rank\s+(\d+) .* on\s+(\S+) device", line)
    if m and 5 <= int(m.group(1)) <= 7:
        line = line.replace(" on " + m.group(2), " on hostthree", 1)
    out.append(line)
open(sys.argv[2], "w").writelines(out)
PY
expect_exit 2 "uneven.txt: the Rank lines put 3 to 8 ranks on each of 3 hosts" validate -t dgx-h100-cluster "$tmp/uneven.txt"
check "unequal ranks per host are refused, not predicted as equal blocks" [ $? -eq 0 ]
# a row whose "#wrong" counts wrong results: still predicted, with a warning
python3 - "$traces/nccl-tests_allreduce_h100-nebius_2node16gpu_ndr-ib_dstack-docs.txt" "$tmp/wrong.txt" <<'PY'
import sys
out = []
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) == 13 and f[0] == "1048576":
        f[8] = "3"
        line = " ".join(f) + "\n"
    out.append(line)
open(sys.argv[2], "w").writelines(out)
PY
"$bin" validate -t dgx-h100-cluster --nodes 2 "$tmp/wrong.txt" >/dev/null 2>"$tmp/wrong.err"
check "a row the benchmark found wrong is still predicted" [ $? -eq 0 ]
check "and warned about" grep -q 'wrong.txt: 1 row failed the benchmark.s own check ("#wrong" above 0)' "$tmp/wrong.err"
expect_exit 2 "unknown --op" validate --op nope -t dgx1-v100 "$v100"
check "an unknown --op is bad input" [ $? -eq 0 ]

expect_exit 2 "says 8 ranks, not 4" validate --ranks 4 -t dgx1-v100 "$v100"
check "--ranks cannot contradict the trace" [ $? -eq 0 ]
expect_exit 2 "measured allreduce, not broadcast" validate --op broadcast -t dgx1-v100 "$v100"
check "--op cannot contradict the trace" [ $? -eq 0 ]

# a file of several runs: each validated and reported on its own
mi325=$traces/rccl-tests_allreduce_mi325x_1-2-4-8node_hisohara-aac11.txt
"$bin" validate --json -t mi355x-cluster "$mi325" >"$tmp/runs.json" 2>"$tmp/err"
check "a file of four runs validates" [ $? -eq 0 ]
check "one traces entry per run, with its ranks and nodes" python3 - "$tmp/runs.json" "$mi325" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
t = d["traces"]
assert [x["trace"] for x in t] == [sys.argv[2] + "#run%d" % k for k in (1, 2, 3, 4)], t
assert [(x["run"], x["ranks"], x["nodes"]) for x in t] == [(1, 8, 1), (2, 16, 2), (3, 32, 4), (4, 64, 8)]
assert all(x["ranks_from"] == "busbw/algbw" and x["n_rows"] == 3 for x in t)
assert d["n_rows"] == 12 and len(d["rows"]) == 12
PY
"$bin" validate -t mi355x-cluster "$mi325" >"$tmp/runs.txt" 2>&1
check "screen output names every run" [ "$(grep -c '^# .*#run[1-4]: allreduce' "$tmp/runs.txt")" -eq 4 ]
expect_exit 2 "the trace says 8 ranks (from busbw/algbw), not 16" validate --ranks 16 -t mi355x-cluster "$mi325"
check "--ranks cannot contradict a run" [ $? -eq 0 ]

# point-to-point OSU: a sendrecv of two ranks, with what the times mean
lat=$traces/osu_latency_oci-bm-optimized3.36_2node.txt
bw=$traces/osu_bw_oci-bm-optimized3.36_2node.txt
"$bin" validate --json -t dgx-a100-cluster --nodes 2 "$lat" "$bw" >"$tmp/p2p.json" 2>"$tmp/err"
check "osu_latency and osu_bw validate" [ $? -eq 0 ]
check "as a sendrecv of 2 ranks, bandwidth as the time of a window" python3 - "$tmp/p2p.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
lat, bw = d["traces"]
assert lat["op"] == bw["op"] == "sendrecv" and lat["ranks"] == bw["ranks"] == 2 and lat["nodes"] == 2
assert "one-way" in lat["measured"] and "window of 64" in bw["measured"]
assert abs(lat["rows"][0]["measured_s"] - 1.67e-6) < 1e-15
r = bw["rows"][0]
assert r["size_bytes"] == 268435456 and abs(r["measured_s"] - 64 * 268435456 / 12254.16e6) < 1e-9
assert r["predicted_s"] > 0
PY
# a flag of the other library's model is refused, not passed over (review 8)
expect_exit 2 "--mpi-library is for the MPI model, and no trace here runs on it" validate -t dgx1-v100 --mpi-library mpich "$v100"
check "--mpi-library on an NCCL trace" [ $? -eq 0 ]
expect_exit 2 "--nccl-version is for the NCCL model, and no trace here runs on it" validate -t dgx-a100-cluster --nodes 2 --nccl-version 2.18 "$lat"
check "--nccl-version on an OSU trace" [ $? -eq 0 ]
"$bin" validate -t gh200-slingshot --nodes 2 --mpi-library mpich \
    "$traces/osu_bw_gh200-alps-clariden_2node_host_slingshot11-cxi-hook_mpich-4.3.1_cscs-docs.txt" \
    "$traces/nccl-tests_allreduce_gh200_2node8gpu_slingshot_cscs-alps-ce.txt" >/dev/null 2>&1
check "--mpi-library with an OSU and an nccl-tests trace: the OSU one uses it" [ $? -eq 0 ]
expect_exit 2 "runs 2 ranks, not 4" validate -t dgx-a100-cluster --nodes 2 --ranks 4 "$lat"
check "a point-to-point benchmark has 2 ranks" [ $? -eq 0 ]

# a time the row's own algbw contradicts, or faster than any link, is refused at its line (review 8)
cols0='#  size count type redop time algbw busbw error time algbw busbw error'
printf '%s\n%s\n' "$cols0" '  1048576  262144  float  sum  100.0  20.00  35.00  0  100.0  10.49  18.35  0' >"$tmp/alg.txt"
expect_exit 2 "alg.txt:2: out-of-place time 100 us gives 10.49 GB/s for 1048576 B, the row's algbw says 20" \
    validate -t dgx-a100 --ranks 8 --op allreduce "$tmp/alg.txt"
check "a time against its row's algbw" [ $? -eq 0 ]
printf '%s\n%s\n' "$cols0" '  17179869184  4294967296  float  sum  0.001  0.00  0.00  0  0.001  0.00  0.00  0' >"$tmp/fast.txt"
expect_exit 2 "fast.txt:2: out-of-place time 0.001 us moves 17179869184 B" validate -t dgx-a100 --ranks 8 --op allreduce "$tmp/fast.txt"
check "a time faster than any link" [ $? -eq 0 ]

python3 -c "
print('# OSU MPI Latency Test v7.5')
print('# Size          Latency (us)')
for i in range(1, 200003): print(i, 1000.0)" >"$tmp/long.txt"
expect_exit 2 "long.txt:200003: more than 200000 result rows in one file" validate -t dgx-a100-cluster --nodes 2 "$tmp/long.txt"
check "a trace's rows are bounded" [ $? -eq 0 ]

# files that could be read two ways are refused at their line
row='  1048576  262144  float  sum  100.0  10.49  18.35  0  100.0  10.49  18.35  0'
cols='#  size count type redop time algbw busbw error time algbw busbw error'
printf '# Collective test starting: all_reduce_perf\n%s\n%s\n# Collective test starting: sendrecv_perf\n%s\n%s\n' "$cols" "$row" "$cols" "$row" >"$tmp/two.txt"
expect_exit 2 "two.txt:4: second table is sendrecv at line 4, the first was allreduce at line 1" validate -t dgx-a100 "$tmp/two.txt"
check "two collectives in one file are bad input" [ $? -eq 0 ]
printf '# command: ./sendrecv_perf -g 8\n%s\n%s\n' "$cols" "$row" >"$tmp/norank.txt"
expect_exit 2 "use --ranks" validate -t dgx-a100 "$tmp/norank.txt"
check "no Rank lines and a factor of 1: --ranks needed, never 1" [ $? -eq 0 ]
printf '# command: ./all_reduce_perf\n%s\n%s\n%s\n' "$cols" "$row" "${row/1048576/-2097152}" >"$tmp/neg.txt"
expect_exit 2 "neg.txt:4: size \"-2097152\"" validate -t dgx-a100 "$tmp/neg.txt"
check "a negative size is bad input at its line" [ $? -eq 0 ]
printf '# command: ./all_reduce_perf\n%s\n%s\n%s\n' "$cols" "$row" "$row" >"$tmp/twice.txt"
expect_exit 2 "twice.txt:4: size 1048576 does not grow" validate -t dgx-a100 "$tmp/twice.txt"
check "a table given twice is bad input" [ $? -eq 0 ]

# NCCL's own choice from its tuning lines: shown beside the model's pick, and
# --as-logged prices it (NCCL_ALGO=NVLS on 2 H100s, which the tuner gives the ring)
nvls2=$traces/nccl-tests_allreduce_h100-sxm_1node2gpu_nvswitch_nccl2.29.2_algo-nvls_nccl-collectives-bench-scaling.txt
"$bin" validate --json -t dgx-h100 --ranks 2 "$nvls2" >"$tmp/auto.json" 2>/dev/null
"$bin" validate --json -t dgx-h100 --ranks 2 --as-logged "$nvls2" >"$tmp/logged.json" 2>/dev/null
check "the log's choice read; --as-logged runs it" python3 - "$tmp/auto.json" "$tmp/logged.json" <<'PY'
import json, sys
a, l = (json.load(open(f))["traces"][0] for f in sys.argv[1:3])
assert a["nccl_choice_rows"] == 6 and a["nccl_choice_same"] == 0, a
assert all(r["nccl_algo"] == "nvls" and r["nccl_proto"] == "simple" and r["algo"] == "ring" for r in a["rows"])
assert l["nccl_choice_same"] == 6 and all(r["algo"] == "nvls" for r in l["rows"])
assert l["median_abs_pct_error"] < 5 < a["median_abs_pct_error"], (l["median_abs_pct_error"], a["median_abs_pct_error"])
PY
expect_exit 2 "takes no --algo" validate -t dgx-h100 --ranks 2 --as-logged --algo ring "$nvls2"
check "--as-logged with --algo is a usage error" [ $? -eq 0 ]
# calibrate fits what NCCL ran: NVLS's rate, not the ring the tuner would pick
"$bin" calibrate -t dgx-h100 --ranks 2 "$nvls2" -o "$tmp/cal.json" --json >"$tmp/calout.json" 2>/dev/null
check "calibrate fits the logged algorithm" python3 - "$tmp/calout.json" <<'PY'
import json, sys
p = {q["key"]: q for q in json.load(open(sys.argv[1]))["parameters"]}
assert p["nvls.bandwidth_fraction"]["status"] == "fitted", p.get("nvls.bandwidth_fraction")
PY

echo "cli_validate: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
