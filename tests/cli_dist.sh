#!/usr/bin/env bash
# `sweep --mpi` and `plan --mpi` under mpirun print and writes byte for byte what one process
# does: text, --json, --csv; with more ranks than points; with threads per
# rank; with failing points; and a bad scenario is one clear error, exit 2.
# Usage: bash cli_dist.sh SHARDSIM_BINARY SOURCE_DIR
set -uo pipefail
shardsim=$1
src=$2
fail() { echo "FAIL: $*" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$src" || fail "no $src"
. tests/mpi_env.sh
pass=0

# same(NAME, NP, ARGS...): one process, then NP ranks with --mpi; stdout,
# exit status and the CSV must be identical.
same() {
    local name=$1 np=$2
    shift 2
    "$shardsim" "$@" --csv "$tmp/$name.1.csv" >"$tmp/$name.1" 2>"$tmp/$name.1.err"
    local rc1=$?
    mpi_launcher "$np"
    ASAN_OPTIONS=detect_leaks=0 timeout 300 "${launcher[@]}" "$shardsim" "$@" --mpi --csv "$tmp/$name.n.csv" \
        >"$tmp/$name.n" 2>"$tmp/$name.n.err"
    local rcn=$?
    [ "$rc1" -eq "$rcn" ] || { cat "$tmp/$name.n.err" >&2; fail "$name: exit $rc1 alone, $rcn on $np ranks"; }
    cmp -s "$tmp/$name.1" "$tmp/$name.n" || { diff "$tmp/$name.1" "$tmp/$name.n" | head >&2; fail "$name: stdout differs on $np ranks"; }
    cmp -s "$tmp/$name.1.csv" "$tmp/$name.n.csv" || fail "$name: the CSV differs on $np ranks"
    [ -s "$tmp/$name.1" ] || fail "$name: no output"
    pass=$((pass + 1))
}

grid=(--vary nodes=1,2,4,8,16 --vary parallelism.weight_update=replicated,sharded)
same text 2 sweep examples/default.json "${grid[@]}" --jobs 1
same json 2 sweep examples/default.json "${grid[@]}" --json --jobs 2
same uneven 3 sweep examples/default.json --vary nodes=1,2,4,8 --jobs 1 --json
same fewer 3 sweep examples/default.json --vary nodes=2 --jobs 1
# some points fail (dp x tp beyond 1 node): their errors travel too
same failing 2 sweep examples/gpt3-6.7b-tp8-a100.json --vary nodes=1,2,4 --vary parallelism.tp=8,16 --jobs 1
grep -q "error:" "$tmp/failing.n" || fail "failing: no point failed, the case tests nothing"

# plan --mpi: the candidates' three passes split over the ranks, same table, JSON and CSV
cat >"$tmp/q.json" <<'EOF2'
{"name": "q", "accelerator": "a100-80gb", "topology": "dgx-a100-cluster", "nodes": 1,
 "model": "gpt3-125m", "global_batch": 64, "micro_batch": 1,
 "parallelism": {"dp": 8, "tp": 1, "pp": 1}}
EOF2
same plan 2 plan "$tmp/q.json" --gpus 8-16 --tokens 2B --top 5
same planjson 3 plan "$tmp/q.json" --gpus 8-16 --tokens 2B --top 5 --json
# constraints and a location (its candidates screened in their own pass)
same planloc 2 plan "$tmp/q.json" --gpus 8-16 --tokens 2B --top 5 --fix zero=1 --deny selective-recompute \
    --locate tp=2,pp=2 --locate gpus=16,tp=1,mb=2 --json

# bad input under mpirun: exit 2, the message once (rank 0 speaks)
printf '{"model": "gpt3-6.7b",\n "nodes": "many"}\n' >"$tmp/bad.json"
mpi_launcher 2
ASAN_OPTIONS=detect_leaks=0 timeout 120 "${launcher[@]}" "$shardsim" sweep "$tmp/bad.json" --vary nodes=1,2 --mpi \
    >"$tmp/bad.out" 2>"$tmp/bad.err"
rc=$?
[ $rc -eq 2 ] || { cat "$tmp/bad.err" >&2; fail "bad scenario under mpirun: exit $rc, expected 2"; }
n=$(grep -c "^shardsim: .*bad.json:[0-9]*: missing required field" "$tmp/bad.err")
[ "$n" -eq 1 ] || { cat "$tmp/bad.err" >&2; fail "bad scenario: $n messages with FILE:LINE, expected 1"; }
pass=$((pass + 1))
echo "cli_dist: $pass checks passed"
