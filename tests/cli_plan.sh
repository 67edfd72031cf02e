#!/bin/bash
# shardsim plan: a small question (GPT-3 125M on 8-16 A100) answers with a
# ranked table, one JSON object, a CSV and a plot; the output does not depend
# on the threads; bad input exits 2 with a clear message on stderr.
set -u
BIN=$1
SRC=$2
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fail=0

cat > "$TMP/q.json" <<'EOF2'
{"name": "q", "accelerator": "a100-80gb", "topology": "dgx-a100-cluster", "nodes": 1,
 "model": "gpt3-125m", "global_batch": 64, "micro_batch": 1,
 "parallelism": {"dp": 8, "tp": 1, "pp": 1}}
EOF2
Q=(plan "$TMP/q.json" --gpus 8-16 --tokens 2B --top 5)

# review 9: equal objectives (every cost $0) rank the faster first, and no two
# ranked candidates are one configuration under two labels (ZeRO stages at dp 1)
"$BIN" plan "$TMP/q.json" --gpus 8 --top 60 --json -j 1 --price-per-gpu-hour 0 --objective cost > "$TMP/zero.json" 2> "$TMP/err" ||
    { echo "FAIL zero-price plan:"; cat "$TMP/err"; fail=1; }
python3 - "$TMP/zero.json" <<'PY' || { echo "FAIL: zero-price plan ranks by time, without duplicates"; fail=1; }
import json, sys
b = json.load(open(sys.argv[1]))["best"]
t = [x["time_to_train"]["wall_s"] if isinstance(x["time_to_train"], dict) else x["step_time_s"] for x in b]
assert all(x["cost"] == 0 for x in b)
assert t == sorted(t), t[:8]
for x in b:
    c = x["config"]
    assert c["dp"] > 1 or c["zero_stage"] == 0, c
PY

# review 9: every ranked candidate carries run's p10-p90 band; a mixture of
# experts' is at least the published MoE steps' spread, and the text says so
python3 - "$TMP/zero.json" <<'PY' || { echo "FAIL: plan's bands"; fail=1; }
import json, sys
for x in json.load(open(sys.argv[1]))["best"]:
    assert x["step_time_p10_s"] <= x["step_time_s"] <= x["step_time_p90_s"], x
PY
cat > "$TMP/moe.json" <<'EOF2'
{"name": "qm", "accelerator": "h100-sxm", "topology": "dgx-h100-cluster", "nodes": 1,
 "model": "qwen3-30b-a3b", "global_batch": 64, "micro_batch": 1, "precision": "bf16",
 "parallelism": {"dp": 8, "tp": 1, "pp": 1, "ep": 8}}
EOF2
"$BIN" plan "$TMP/moe.json" --gpus 8 --top 1 --fix tp=1,pp=1,cp=1,ep=8,mb=1 --json > "$TMP/moe.out" 2> "$TMP/err" ||
    { echo "FAIL moe plan:"; cat "$TMP/err"; fail=1; }
python3 - "$TMP/moe.out" <<'PY' || { echo "FAIL: a MoE plan's band"; fail=1; }
import json, math, sys
b = json.load(open(sys.argv[1]))["best"][0]
assert b["step_time_p90_s"] >= b["step_time_s"] * math.exp(0.6), b
PY
"$BIN" plan "$TMP/moe.json" --gpus 8 --top 1 --fix tp=1,pp=1,cp=1,ep=8,mb=1 | grep -q "mixture-of-experts steps' spread" ||
    { echo "FAIL: the MoE plan's text does not state its band"; fail=1; }

# JSON: one object; the best are ranked, full, within the limits
if ! "$BIN" "${Q[@]}" --json -j 1 > "$TMP/out.json" 2> "$TMP/err"; then
    echo "FAIL json plan:"; cat "$TMP/err"; fail=1
fi
[ -s "$TMP/err" ] && { echo "FAIL: stderr not empty:"; cat "$TMP/err"; fail=1; }
python3 - "$TMP/out.json" <<'PY' || { echo "FAIL plan JSON"; fail=1; }
import json, sys
text = open(sys.argv[1]).read()
d = json.loads(text)                      # one object, nothing else
assert isinstance(d, dict)
best = d["best"]
assert len(best) == 5 and d["simulated_in_full"] == 5
assert [b["rank"] for b in best] == [1, 2, 3, 4, 5]
for b in best:
    print(b["rank"], b["label"], b["step_time_s"], b["time_to_train"]["days"])
    assert b["simulated_in_full"] and b["config"]["gpus"] in (8, 16)
    assert b["memory_per_device_bytes"] <= 80 * 2**30
    assert 0 < b["time_to_train"]["goodput"] <= 1
    assert b["step_lower_bound_s"] <= b["screen_step_time_s"]
days = [b["time_to_train"]["days"] for b in best]
assert days == sorted(days), days          # objective time: fewest days first
assert d["inputs"]["tokens"] == 2e9 and "failures_per_gpu_hour" in d["inputs"]["sources"]
disc = d["discarded"]
assert disc["does not divide"] > 0 and d["ranked"] > 0
assert d["candidates"] == sum(disc.values()) + d["ranked"]
assert d["reference"]["label"] == "tp1 pp1 dp8 mb1 z0 none"
assert len(d["pareto"]["gpus_days"]) >= 1 and len(d["pareto"]["cost_days"]) >= 1
PY

# table, CSV, plot; same bytes with 2 threads
if ! "$BIN" "${Q[@]}" -j 2 --csv "$TMP/p.csv" --plot "$TMP/p.png" > "$TMP/table" 2> "$TMP/err"; then
    echo "FAIL table plan:"; cat "$TMP/err"; fail=1
fi
cat "$TMP/table"
grep -q "^   1 " "$TMP/table" || { echo "FAIL: no rank 1 row"; fail=1; }
grep -q "discarded:.*does not divide" "$TMP/table" || { echo "FAIL: no discard counts"; fail=1; }
grep -q "scenario's own configuration" "$TMP/table" || { echo "FAIL: no reference line"; fail=1; }
# a hybrid-sharded scenario: the search shards over all dp ranks, so its own configuration is not ranked as another
"$BIN" plan "$SRC/examples/gpt3-6.7b-hsdp-a100.json" > "$TMP/hsdp" 2> "$TMP/err" || { echo "FAIL hsdp plan:"; cat "$TMP/err"; fail=1; }
grep -q 'own configuration is not in the search space: its hybrid sharding ("shard_group": 8) is not searched' "$TMP/hsdp" ||
    { echo "FAIL: hybrid sharding's reference line"; cat "$TMP/hsdp"; fail=1; }
head -c 8 "$TMP/p.png" | od -An -tx1 | grep -q "89 50 4e 47" || { echo "FAIL: not a PNG"; fail=1; }
# checkpoints in host memory over a slow host link: the plan prices its own configuration as run does
# (the search once dropped "pcie_bandwidth" from every candidate: 0.604 s at the default 25 GB/s against run's 1.345 s)
cat > "$TMP/ck.json" <<'J'
{"accelerator": "a100-80gb", "topology": "dgx-a100-cluster", "nodes": 2, "model": "gpt3-1.3b", "global_batch": 64,
 "micro_batch": 1, "parallelism": {"tp": 1, "pp": 1, "recompute": "full", "cpu_checkpointing": true,
 "cpu_checkpointing_copy": "blocking", "pcie_bandwidth": 2e9}}
J
"$BIN" run --json "$TMP/ck.json" > "$TMP/ck.run" && "$BIN" plan "$TMP/ck.json" --gpus 16 --json > "$TMP/ck.plan" &&
    python3 - "$TMP/ck.run" "$TMP/ck.plan" <<'PY' || { echo "FAIL: plan's reference differs from run under cpu_checkpointing"; fail=1; }
import json, sys
run, plan = (json.load(open(f)) for f in sys.argv[1:3])
assert plan["reference"]["step_time_s"] == run["step_time_s"], (plan["reference"]["step_time_s"], run["step_time_s"])
assert plan["ranked"] > 0
PY
python3 - "$TMP/p.csv" <<'PY' || { echo "FAIL plan CSV"; fail=1; }
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
assert len(rows) >= 5 and rows[0]["rank"] == "1" and rows[0]["simulated_in_full"] == "true"
assert all(float(r["step_lower_bound_s"]) <= float(r["step_time_s"]) for r in rows)
PY
"$BIN" "${Q[@]}" -j 1 > "$TMP/table1" 2>/dev/null
cmp -s "$TMP/table" "$TMP/table1" || { echo "FAIL: output depends on the threads"; diff "$TMP/table" "$TMP/table1" | head; fail=1; }
grep -q "^# Pareto front, GPUs against days: [0-9]* configuration" "$TMP/table" || { echo "FAIL: no Pareto line"; fail=1; }
if grep -q "^# Pareto front, GPUs against days: 1 configurations" "$TMP/table"; then echo "FAIL: 1 configurations"; fail=1; fi
# steps of many micro-batches: extrapolated from three shorter ones, said so in the table and the
# CSV; --exact-steps simulates them at their own count (the same ranks, steps within 1e-5)
printf '{"accelerator": "a100-80gb", "topology": "dgx-a100-cluster", "nodes": 2, "model": "gpt3-1.3b",
 "global_batch": 512, "micro_batch": 1, "parallelism": {"dp": 4, "tp": 1, "pp": 4}}\n' > "$TMP/pp.json"
"$BIN" plan "$TMP/pp.json" --gpus 16 --fix pp=4,mb=1 --top 5 --csv "$TMP/x.csv" --price-per-gpu-hour 3.5 --pue 1.3 \
    > "$TMP/x.txt" 2>&1 || fail=1
"$BIN" plan "$TMP/pp.json" --gpus 16 --fix pp=4,mb=1 --top 5 --exact-steps --csv "$TMP/y.csv" > "$TMP/y.txt" 2>&1 || fail=1
grep -q "^# steps of many micro-batches, each extrapolated from three shorter ones.*: 64 screened, 5 of the best in full" "$TMP/x.txt" \
    && ! grep -q "shorter ones" "$TMP/y.txt" || { echo "FAIL: extrapolated steps not stated"; fail=1; }
python3 - "$TMP/x.csv" "$TMP/y.csv" <<'PY' || { echo "FAIL: --exact-steps against extrapolated steps"; fail=1; }
import csv, sys
x, y = (list(csv.DictReader(open(f, newline=""))) for f in sys.argv[1:])
assert len(x) == len(y) == 64 and [r["label"] for r in x] == [r["label"] for r in y]
assert all(r["step_extrapolated"] == "true" for r in x) and all(r["step_extrapolated"] == "false" for r in y)
assert all(abs(float(a["step_time_s"]) / float(b["step_time_s"]) - 1) <= 1e-5 for a, b in zip(x, y))
PY

# the table states what its cost and energy columns assume
grep -q '^# cost at \$3.5 per GPU-hour; energy at 400 W per GPU drawn at [0-9.]*%, PUE 1.3$' "$TMP/x.txt" \
    || { echo "FAIL: the table's cost and energy line"; head -3 "$TMP/x.txt"; fail=1; }

# --fix and --deny in capitals are the same question
"$BIN" plan "$TMP/q.json" --gpus 8 --top 2 --fix TP=2,Recompute=Full --deny Sequence-Parallel --json > "$TMP/caps1.json" 2>&1
"$BIN" plan "$TMP/q.json" --gpus 8 --top 2 --fix tp=2,recompute=full --deny sequence-parallel --json > "$TMP/caps2.json" 2>&1
cmp -s "$TMP/caps1.json" "$TMP/caps2.json" && grep -q '"tp":[[:space:]]*2' "$TMP/caps1.json" \
    || { echo "FAIL: --fix / --deny in capitals"; head -3 "$TMP/caps1.json"; fail=1; }

# an objective in capitals is the objective
"$BIN" "${Q[@]}" --objective Cost --json > "$TMP/cost1.json" 2>/dev/null
"$BIN" "${Q[@]}" --objective cost --json > "$TMP/cost2.json" 2>/dev/null
cmp -s "$TMP/cost1.json" "$TMP/cost2.json" && grep -q '"objective":[[:space:]]*"cost"' "$TMP/cost1.json" \
    || { echo "FAIL: --objective Cost"; fail=1; }

# limits: --max-nodes 1 drops 16 GPUs, --days 1e-9 drops everything (exit 2)
"$BIN" "${Q[@]}" --max-nodes 1 --json > "$TMP/mn.json" 2>/dev/null
python3 -c "
import json,sys; d=json.load(open('$TMP/mn.json'))
assert d['discarded']['over the node limit'] > 0 and all(b['config']['gpus'] == 8 for b in d['best'])" \
    || { echo "FAIL --max-nodes"; fail=1; }
"$BIN" "${Q[@]}" --days 0.000001 > /dev/null 2> "$TMP/err"; rc=$?
[ $rc -eq 2 ] && grep -q "no configuration trains within --days 1e-06: the fastest that fits takes [0-9.e+-]* days" "$TMP/err" || { echo "FAIL --days: rc $rc"; cat "$TMP/err"; fail=1; }

# stages of unequal layers (12 layers on 8 stages) are marked, 12 on 4 are
# not, and --deny uneven-pipeline leaves them out
"$BIN" plan "$TMP/q.json" --gpus 8 --tokens 2B --fix pp=8 --json > "$TMP/un.json" 2> "$TMP/err" ||
    { echo "FAIL plan on 8 stages:"; cat "$TMP/err"; fail=1; }
"$BIN" plan "$TMP/q.json" --gpus 8 --tokens 2B --fix pp=4 --json > "$TMP/even.json" 2> "$TMP/err" ||
    { echo "FAIL plan on 4 stages:"; cat "$TMP/err"; fail=1; }
python3 - "$TMP/un.json" "$TMP/even.json" <<'PY' || { echo "FAIL uneven-pipeline labels"; fail=1; }
import json, sys
un, even = (json.load(open(f)) for f in sys.argv[1:])
assert un["best"] and all(b["label"].endswith(" uneven") for b in un["best"]), [b["label"] for b in un["best"]]
assert even["best"] and not any("uneven" in b["label"] for b in even["best"])
PY

# constraints and locations: only what --fix/--deny allow; the located
# layout's rank, step and gap on the table and in --json
"$BIN" "${Q[@]}" -j 1 --fix recompute=full,zero=1 --deny sequence-parallel --locate tp=2,pp=2 \
    --locate tp=1,pp=1,dp=8,mb=1 --json > "$TMP/loc.json" 2> "$TMP/err" || { echo "FAIL --locate:"; cat "$TMP/err"; fail=1; }
python3 - "$TMP/loc.json" <<'PY' || { echo "FAIL --fix/--locate JSON"; fail=1; }
import json, sys
d = json.load(open(sys.argv[1]))
assert d["constraints"]["fixed"] == "zero=1,recompute=full", d["constraints"]
assert "sequence-parallel" in d["constraints"]["denied"] and "offload" in d["constraints"]["denied"]
for b in d["best"]:
    c = b["config"]
    assert c["recompute"] == "full" and c["zero_stage"] == 1 and not c["sequence_parallel"], b["label"]
loc = d["located"]
assert [l["locate"] for l in loc] == ["tp=2,pp=2", "tp=1,pp=1,dp=8,mb=1"]
for l in loc:
    print(l["locate"], "->", l["label"], "rank", l["rank"], "of", d["ranked"], "step", l["step_time_s"],
          "x%.3f" % l["step_ratio_to_best"])
    assert l["rank_exact"] and l["rank"] >= 1 and l["simulated_in_full"] and l["step_ratio_to_best"] >= 1
    assert l["config"]["tp"] == int(l["locate"].split(",")[0].split("=")[1])
PY
"$BIN" "${Q[@]}" -j 1 --locate tp=2,pp=2 > "$TMP/loc.txt" 2>&1
grep -q "^# located tp=2,pp=2 ([0-9]* matching): tp2 pp2 .* ranks [0-9]* of [0-9]* (top .*, exact; the [0-9]* pruned rank below it): step .* the best's step" \
    "$TMP/loc.txt" || { echo "FAIL: no located line:"; cat "$TMP/loc.txt"; fail=1; }
"$BIN" "${Q[@]}" -j 1 --locate tp=8,pp=8 > "$TMP/loc.txt" 2>&1
grep -q "^# located tp=8,pp=8 (0 matching): none ranks" "$TMP/loc.txt" || { echo "FAIL: no unmatched line"; cat "$TMP/loc.txt"; fail=1; }

# --memory-fraction 0.05: every ranked candidate below 4 GiB of the 80, more that do not fit
"$BIN" "${Q[@]}" -j 1 --memory-fraction 0.05 --json > "$TMP/mf.json" 2>/dev/null
python3 - "$TMP/mf.json" "$TMP/out.json" <<'PY' || { echo "FAIL --memory-fraction"; fail=1; }
import json, sys
d, full = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
assert d["constraints"]["memory_fraction"] == 0.05
assert d["constraints"]["allocator_memory_fraction"] == 1  # the scenario's own share: none given
assert all(b["memory_per_device_bytes"] <= 0.05 * 80 * 2**30 for b in d["best"])
assert d["discarded"]["does not fit"] > full["discarded"]["does not fit"], (d["discarded"], full["discarded"])
PY

# bad input: exit 2, "shardsim: " and what is wrong
bad() { # EXPECTED-TEXT ARGS...
    local want=$1; shift
    "$BIN" "$@" > "$TMP/bo" 2> "$TMP/be"; local rc=$?
    if [ $rc -ne 2 ] || ! grep -q "^shardsim: .*$want" "$TMP/be" || [ -s "$TMP/bo" ]; then
        echo "FAIL bad input ($*): rc $rc, stderr:"; cat "$TMP/be"; fail=1
    fi
}
bad "expected one SCENARIO" plan
bad "no-such.json" plan "$TMP/no-such.json"
bad "\-\-gpus" plan "$TMP/q.json" --gpus 16-8
bad "\-\-gpus" plan "$TMP/q.json" --gpus abc
bad "plan: \-\-objective fastest is not one of" plan "$TMP/q.json" --objective fastest
bad "plan: \-\-gpus 0: give a GPU count" plan "$TMP/q.json" --gpus 0
bad "\-\-tokens" plan "$TMP/q.json" --tokens -5
bad "\-\-tokens" plan "$TMP/q.json" --tokens 3X
bad "\-\-tokens" plan "$TMP/q.json" --tokens 3m      # milli, not mega: refused
# the suffixes in either case but M: 2t = 2T, 300b = 300B tokens
for t in 2t:2e12 300b:3e11 1.5P:1.5e15; do
    "$BIN" plan "$TMP/q.json" --gpus 8 --top 1 --tokens "${t%%:*}" --json > "$TMP/tok.json" ||
        { echo "FAIL: --tokens ${t%%:*} refused"; exit 1; }
    python3 -c "import json,sys; v=json.load(open(sys.argv[1]))['inputs']['tokens']; assert v == float(sys.argv[2]), v" \
        "$TMP/tok.json" "${t##*:}" || { echo "FAIL: --tokens ${t%%:*}"; exit 1; }
done
bad "\-\-top" plan "$TMP/q.json" --top 0
bad "\-\-max-nodes" plan "$TMP/q.json" --max-nodes 0
bad "\-\-jobs" plan "$TMP/q.json" --jobs 0
locs=(); for i in $(seq 17); do locs+=(--locate tp=1); done
bad "at most 16 \-\-locate" plan "$TMP/q.json" "${locs[@]}"
bad "\-\-global-batch" plan "$TMP/q.json" --global-batch sometimes
bad "\-\-allow" plan "$TMP/q.json" --allow magic
bad "\-\-deny magic: the features are: offload, selective-recompute" plan "$TMP/q.json" --deny magic
bad "\-\-fix tq=2: 'tq=2' is not KEY=VALUE" plan "$TMP/q.json" --fix tq=2
bad "\-\-fix recompute=some" plan "$TMP/q.json" --fix recompute=some
bad "\-\-fix recompute=op: recompute takes none, selective or full (the ones plan searches), not 'op'" plan "$TMP/q.json" --fix recompute=op
bad "\-\-fix zero=4: zero takes 0-3" plan "$TMP/q.json" --fix zero=4
# a scenario whose own recompute plan does not search (PyTorch's per-op checkpointing): refused, not relabelled
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); d['model']='llama2-7b'; d.setdefault('parallelism', {})['recompute']='op'; json.dump(d, open(sys.argv[2], 'w'))" "$TMP/q.json" "$TMP/qop.json"
bad "\"recompute\": \"op\" (PyTorch's per-op checkpointing) is not searched" plan "$TMP/qop.json"
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); d['model']='llama2-7b'; d['parallelism'].update(recompute='full', recompute_keep=['linear_qkv']); json.dump(d, open(sys.argv[2], 'w'))" "$TMP/q.json" "$TMP/qkeep.json"
bad "\"recompute_keep\" (named checkpoints under full recomputation) is not searched" plan "$TMP/qkeep.json"
bad "tp is given two values" plan "$TMP/q.json" --fix tp=2,tp=4
bad "\-\-locate pp" plan "$TMP/q.json" --locate pp
bad "\-\-memory-fraction 1.5 must be at most 1" plan "$TMP/q.json" --memory-fraction 1.5
bad "\-\-power-utilisation 2 must be at most 1" plan "$TMP/q.json" --power-utilisation 2
bad "\-\-memory-fraction" plan "$TMP/q.json" --memory-fraction 0
bad "leave no candidate" plan "$TMP/q.json" --fix recompute=full --deny full-recompute
bad "fix gpus=16 leaves no candidate to search on 8 GPUs" plan "$TMP/q.json" --gpus 8 --fix gpus=16
bad "gpus 12: a job of more than one node takes whole nodes, 8 GPUs each" plan "$TMP/q.json" --gpus 12
bad "leave no candidate" plan "$TMP/q.json" --gpus 8 --fix pp=8 --deny uneven-pipeline
bad "leaves no candidate to search on 8 GPUs (offload is searched only with --allow offload)" plan "$TMP/q.json" --gpus 8 --fix offload=on
# without checkpoints in the job a failure loses half its work: candidates
# that cannot finish at any step are discarded unsimulated, and none is
# ranked with a step it never had (0 s, 0 days)
"$BIN" plan "$TMP/q.json" --gpus 8 --checkpoint-interval-s 1e30 --failures-per-gpu-hour 0.1 --tokens 1e11 \
    > "$TMP/nockpt" 2> "$TMP/err"
if grep -q "^ *[0-9][0-9]* .* 0\.0000 " "$TMP/nockpt"; then
    echo "FAIL: a candidate ranked with a step of 0 s:"; grep "^ *1 " "$TMP/nockpt"; fail=1
fi
bad "\-\-plot" plan "$TMP/q.json" --plot "$TMP/x.pdf"
bad "\-\-csv" plan "$TMP/q.json" --csv "$TMP/q.json"
echo '{"topology": "dgx-a100-cluster", "model": "gpt3-125m"}' > "$TMP/nob.json"
bad "global_batch" plan "$TMP/nob.json"
echo '{"topology": "dgx-a100-cluster", "model": "resnet50", "global_batch": 64}' > "$TMP/cnn.json"
bad "transformer" plan "$TMP/cnn.json"
# --mpi: a build with MPI runs as a singleton rank (mpirun cases: cli_dist.sh);
# one without says so and exits 2
if ! ASAN_OPTIONS=detect_leaks=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
    "$BIN" plan "$TMP/q.json" --gpus 8 --top 2 --mpi >/dev/null 2>"$TMP/mpi.err"; then
    bad "without MPI" plan "$TMP/q.json" --mpi
fi
# failures faster than any checkpoint: no step makes a candidate finish, so none is simulated
# (a review's question took 16 s simulating every candidate only to discard them all)
start=$(date +%s)
"$BIN" "${Q[@]}" --failures-per-gpu-hour 1e9 > "$TMP/fail.out" 2> "$TMP/fail.err"
rc=$?
[ $rc -eq 2 ] || { echo "FAIL failing plan: exit $rc"; fail=1; }
grep -q "0 ranked, 0 simulated in full" "$TMP/fail.out" && grep -q "[1-9][0-9]* fails faster than it checkpoints" "$TMP/fail.out" ||
    { echo "FAIL failing plan: counts"; cat "$TMP/fail.out"; fail=1; }
[ $(( $(date +%s) - start )) -le 5 ] || { echo "FAIL failing plan took over 5 s"; fail=1; }

# "pipeline_microbatches" is a local batch a candidate keeps (its own micro-batches of it): the
# scenario's 2 of micro-batch 1 are 1 of micro-batch 2 in that candidate, the step run gives
cat > "$TMP/pmb.json" <<'EOF2'
{"topology": "dgx-h100-cluster", "nodes": 2, "model": "gpt3-1.3b", "global_batch": 64, "micro_batch": 1,
 "parallelism": {"pp": 2, "dp": 8, "zero_stage": 3, "zero_impl": "fsdp2", "pipeline_microbatches": 2}}
EOF2
sed 's/"micro_batch": 1/"micro_batch": 2/; s/"pipeline_microbatches": 2/"pipeline_microbatches": 1/' "$TMP/pmb.json" > "$TMP/pmb2.json"
"$BIN" plan "$TMP/pmb.json" --fix tp=1,pp=2,dp=8,mb=2,zero=3,recompute=none --top 1 --json > "$TMP/pmb.out" 2>&1 &&
    "$BIN" run --json "$TMP/pmb2.json" > "$TMP/pmb2.out" 2>&1 || { echo "FAIL pipeline_microbatches plan/run"; fail=1; }
python3 - "$TMP/pmb.out" "$TMP/pmb2.out" <<'PY' || { echo "FAIL plan keeps the local batch per schedule"; fail=1; }
import json, sys
plan, run = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
assert abs(plan["best"][0]["step_time_s"] - run["step_time_s"]) < 1e-6 * run["step_time_s"], (plan["best"][0], run["step_time_s"])
PY

# Megatron's account_for_* split keys count the embedding and the loss as layers: 30 + 2 over pp 4 x vpp 2;
# the scenario's own configuration is ranked (review 8: it was discarded as "does not divide"), at the step
# run gives, and pp 1 candidates drop the keys instead of failing
cat > "$TMP/split.json" <<'EOF2'
{"topology": "dgx-h100-cluster", "nodes": 2, "model": "megatron-gpt-3.6b", "global_batch": 64, "micro_batch": 1,
 "parallelism": {"tp": 1, "pp": 4, "dp": 4, "virtual_stages": 2, "account_for_embedding_in_pipeline_split": true,
  "account_for_loss_in_pipeline_split": true}}
EOF2
"$BIN" plan "$TMP/split.json" --fix tp=1,pp=4,vpp=2,dp=4,mb=1,zero=0,recompute=none --top 1 --json > "$TMP/split.out" 2>&1 &&
    "$BIN" run --json "$TMP/split.json" > "$TMP/split.run" 2>&1 &&
    "$BIN" plan "$TMP/split.json" --fix pp=1 --top 1 > "$TMP/split1.out" 2>&1 || { echo "FAIL account_for_* plan/run"; fail=1; }
python3 - "$TMP/split.out" "$TMP/split.run" <<'PY' || { echo "FAIL plan ranks a split-key scenario's own configuration"; fail=1; }
import json, sys
plan, run = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
assert abs(plan["best"][0]["step_time_s"] - run["step_time_s"]) < 1e-6 * run["step_time_s"], (plan["best"][0], run["step_time_s"])
PY
grep -q "^ *1 .* pp1 " "$TMP/split1.out" || { echo "FAIL pp 1 candidates of a split-key scenario"; cat "$TMP/split1.out"; fail=1; }

exit $fail
