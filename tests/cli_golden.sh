#!/usr/bin/env bash
# Golden outputs: every example, `collective` on every preset (closed form for
# every op; flows at two sizes) and `validate` on every trace in tests/data,
# compared byte for byte (exit status, stdout, stderr) with the outputs
# recorded in tests/data/golden.  It holds behaviour fixed across refactoring;
# a deliberate change of output is recorded again with
#   bash tests/cli_golden.sh BUILD/shardsim . --update
# and the diff of tests/data/golden reviewed in the commit.
# Usage: bash cli_golden.sh SHARDSIM_BINARY SOURCE_DIR [--update]
set -u
bin=$(realpath "$1")
src=$2
update=${3:-}
gold=$src/tests/data/golden
cd "$src" || exit 1
root=$(pwd -P)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The trace -> preset pairs validate is run on (the nearest preset where the
# project has none of that exact machine; an error is recorded like a result).
validate_preset() {
  case $1 in
    *v100-sxm2*) echo dgx1-v100 ;;
    *abci*) echo abci-a100 ;;
    *perlmutter*) echo perlmutter-gpu ;;
    *polaris_1node*) echo "polaris --nodes 1 --proto simple" ;; # Simple as the page pinned it for the job (the trace's notes)
    *polaris*) echo polaris ;;
    *a100-40gb-oci*1node*) echo oci-bm-gpu4.8 ;;
    *sendrecv_a100*) echo "dgx-a100 --ranks 8" ;;
    *a100-40gb_1node8gpu_g8-one-process_superbench*) echo dgx-a100 ;;
    *a100-40gb-oci*2node*) echo oci-bm-gpu4.8 ;;
    *h100-sxm_2node*) echo "dgx-h100-cluster --nodes 2" ;;
    *h100-sxm-dell-xe9680_2node*) echo "dgx-h100-cluster --nodes 2" ;;
    *h100-sxm_4node*) echo "dgx-h100-cluster --nodes 4" ;;
    *h100-sxm_1node8gpu*|*h100-aws-p5_1node8gpu*|*h100-dgx_1node8gpu*) echo dgx-h100 ;;
    *h100-sxm_1node[246]gpu*) # 2, 4 or 6 of a node's 8 GPUs, NCCL_ALGO as the file's name says
      local g=${1#*1node} algo=""
      case $1 in *_algo-nvls_*) algo=" --algo nvls" ;; *_algo-ring_*) algo=" --algo ring" ;; esac
      echo "dgx-h100 --ranks ${g%%gpu*}$algo" ;;
    *h100-together-ai_2node*) echo "dgx-h100-cluster --nodes 2" ;; # no Rank lines: the nodes given
    *h100-oci-bm-gpu-h100.8_2node*) echo oci-bm-gpu-h100.8 ;;
    *_h200-*_2node*) echo "dgx-h200-cluster --nodes 2" ;; # 2 x 8 H200 (Dell, OCI, Nebius, GCP A3 Ultra), not GH200
    *a100-80gb-crusoe_2node*) echo "dgx-a100-cluster --nodes 2" ;; # no Rank lines: the nodes given
    *h100-nebius_2node*) echo "dgx-h100-cluster --nodes 2" ;;
    *b200-lambda-1cc_2node*|*b200-gcp-a4_2node*) echo "dgx-b200-cluster --nodes 2" ;;
    *h100-sxm_2-4-8node*) echo dgx-h100-cluster ;; # runs of 8, 2 and 4 nodes: the preset grows
    *gb200-nvl72*) echo gb200-nvl72 ;;
    *h100-pcie*) echo h100-pcie-nvlink ;;
    osu_*gh200-alps*2node8proc*) echo "gh200-slingshot --ranks 8 --nodes 2" ;; # 4 ranks on each node
    *aws-p4de_2node*) echo "aws-p4d --nodes 2" ;; # no Rank lines: the nodes given
    *aws-p4d*) echo aws-p4d ;;
    *aws-p5_2node*) echo "aws-p5 --nodes 2" ;;
    *gcp-a3mega_2node16gpu_tcpxo_dstack*|*gcp-a3mega_2node16gpu_8x200g-tcpxo*) echo "gcp-a3mega --nodes 2" ;; # no Rank lines: the nodes given
    *gcp-a3mega*) echo gcp-a3mega ;;
    *gcp-a3high_2node*) echo "gcp-a3high --nodes 2" ;; # no Rank lines: the nodes given
    osu_*gh200-alps*1node2proc*) echo "gh200-slingshot --nodes 1 --ranks 2" ;; # two ranks of one node
    osu_*gh200-alps*) echo "gh200-slingshot --nodes 2" ;; # host-buffer MPI between two nodes
    *gh200*) echo gh200-slingshot ;;
    *mi300x_8gpu*) echo mi300x-node ;;
    *mi300x_2node*) echo mi300x-cluster ;;
    *mi325x*) echo mi325x-cluster ;;
    *mi355x*) echo mi355x-cluster ;;
    osu_*oci-bm-optimized3.36*) echo oci-bm-optimized3.36 ;;
    osu_*cirrus-ex4000_2node576proc*) echo "cirrus-ex4000 --ranks 576 --nodes 2" ;;
    osu_*olivia-cpu*) echo "olivia-cpu --nodes 2" ;;
    osu_*betzy-epyc7742*) echo "betzy-epyc7742 --nodes 2" ;;
    osu_bw*|osu_latency*) echo "dgx-a100-cluster --nodes 2" ;;
    osu_*) echo "localhost --ranks 2 --nodes 1" ;;
    *) echo localhost ;;
  esac
}

cases() { # NAME<TAB>ARGS, one per line, in a fixed order
  local f p op nodes
  for f in examples/*.json; do printf 'run-%s\trun --json %s\n' "$(basename "$f" .json)" "$f"; done
  printf 'sweep-gpt3-1.3b\tsweep --json examples/sweep-gpt3-1.3b-a100.json --vary nodes=1,2,4\n'
  for f in topologies/presets/*.json; do
    p=$(basename "$f" .json)
    nodes="--nodes 2 " # two nodes where the preset grows, else its own size
    ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 "$bin" collective -t "$p" --nodes 2 --sizes 8 >/dev/null 2>&1 || nodes=""
    for op in allreduce reducescatter allgather broadcast reduce alltoall; do
      printf 'coll-%s-%s\tcollective --json -t %s --op %s --sizes 8B:1GiB\n' "$p" "$op" "$p" "$op"
      printf 'flows-%s-%s\tcollective --json -t %s %s--op %s --sizes 1MiB,64MiB --flows\n' "$p" "$op" "$p" "$nodes" "$op"
    done
  done
  for lib in openmpi mpich; do # the MPI model on the CPU cluster preset
    for op in allreduce alltoall; do
      printf 'mpi-%s-%s\tcollective --json -t oci-bm-optimized3.36 --library mpi --mpi-library %s --op %s --sizes 4B:256MiB\n' "$lib" "$op" "$lib" "$op"
    done
  done
  for f in tests/data/traces/*.txt; do
    case $f in *train-*) continue ;; esac
    printf 'validate-%s\tvalidate --json -t %s %s\n' "$(basename "$f" .txt)" "$(validate_preset "$(basename "$f")")" "$f"
  done
}

# Under AddressSanitizer, LeakSanitizer's check at exit costs about 50 ms a
# process here (an empty program: 68 ms against 20 without it), most of this
# test's time over 500 cases.  Leaks are checked in the first case of each
# kind (run, sweep, coll, flows, mpi, validate: every command's code path) and
# by the unit and CLI tests; the other cases compare outputs.
declare -A leak_checked
# The recorded form, built in bash (no sed or cmp per case: spawning a
# process costs milliseconds here, a fifth of this test's time over 500
# cases); a file's trailing newlines are kept (read -d '').
slurp() { # FILE VAR
  IFS= read -r -d '' "$2" <"$1" || true
}
run_case() { # NAME ARGS -> the recorded form, in $got
  local kind=${1%%-*} opts=${ASAN_OPTIONS:-} out err rc
  if [ -n "${leak_checked[$kind]:-}" ]; then
    opts=${opts:+$opts:}detect_leaks=0
  fi
  leak_checked[$kind]=1
  # shellcheck disable=SC2086
  ASAN_OPTIONS=$opts timeout 120 "$bin" $2 >"$tmp/out" 2>"$tmp/err"
  rc=$?
  slurp "$tmp/out" out
  slurp "$tmp/err" err
  # presets are named by absolute path in messages: not part of the behaviour
  got="exit $rc"$'\n'"--- stdout"$'\n'"${out//"$root/"/}--- stderr"$'\n'"${err//"$root/"/}"
}

n=0
fail=0
cases >"$tmp/cases"
if [ "$update" = --update ]; then
  rm -f "$gold"/*.out
  cp "$tmp/cases" "$gold/cases.tsv"
fi
if ! cmp -s "$tmp/cases" "$gold/cases.tsv"; then
  echo "FAIL: the list of cases changed (examples, presets or traces added or removed); record again with --update"
  diff "$gold/cases.tsv" "$tmp/cases" | head -20
  fail=1
fi
while IFS=$'\t' read -r name args; do
  n=$((n + 1))
  run_case "$name" "$args"
  if [ "$update" = --update ]; then
    printf '%s' "$got" >"$gold/$name.out"
    continue
  fi
  want=
  [ -e "$gold/$name.out" ] && slurp "$gold/$name.out" want
  if [ "$got" != "$want" ]; then
    echo "FAIL $name: shardsim $args"
    printf '%s' "$got" >"$tmp/got"
    diff "$gold/$name.out" "$tmp/got" | head -10
    fail=1
  fi
done <"$gold/cases.tsv"
[ "$fail" -eq 0 ] && echo "golden: $n cases identical to tests/data/golden"
exit "$fail"
