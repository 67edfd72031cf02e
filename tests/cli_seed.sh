#!/bin/bash
# The seed techniques' keys (ZeRO++ "zeropp", "sdp4bit",
# "partition_activations", "cpu_checkpointing", "recompute_overlap"): each
# bad combination is an error at the key's line (exit 2, nothing on stdout),
# and a good one runs.
set -u
BIN=$1
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fail=0

# expect NAME FRAGMENT FILE:LINE FILE: exit 2, stderr holds FRAGMENT at FILE:LINE, stdout empty
expect() {
    local name=$1 frag=$2 pos=$3 file=$4
    "$BIN" run "$file" > "$TMP/out" 2> "$TMP/err"
    local rc=$?
    [ $rc -eq 2 ] || { echo "FAIL $name: exit $rc, expected 2"; cat "$TMP/err"; fail=1; }
    grep -qF -- "$frag" "$TMP/err" || { echo "FAIL $name: stderr lacks '$frag':"; cat "$TMP/err"; fail=1; }
    grep -qF -- "shardsim: $pos: " "$TMP/err" || { echo "FAIL $name: not at $pos:"; cat "$TMP/err"; fail=1; }
    [ -s "$TMP/out" ] && { echo "FAIL $name: stdout not empty"; fail=1; }
}

# case NAME FRAGMENT PARALLELISM-LINES...: the last line holds the key at fault (line 3 + lines - 1)
n=0
case_() {
    local name=$1 frag=$2
    shift 2
    local f="$TMP/$name.json" line=$((2 + $#))
    {
        printf '{"topology": "dgx-a100-cluster", "nodes": 2, "model": "gpt3-1.3b", "global_batch": 96,\n'
        printf ' "parallelism": {\n'
        local first=1
        for l in "$@"; do
            [ $first -eq 1 ] || printf ',\n'
            printf '   %s' "$l"
            first=0
        done
        printf '}}\n'
    } > "$f"
    expect "$name" "$frag" "$f:$line" "$f"
    n=$((n + 1))
}

case_ zeropp_zero1 'needs "zero_stage": 3' '"zero_stage": 1' '"zeropp": true'
case_ zeropp_replicated 'needs "zero_stage": 3' '"zeropp": {"qwz": true}'
case_ zeropp_unknown 'unknown key "qxz"' '"zero_stage": 3' '"zeropp": {"qxz": true}'
case_ zeropp_type 'must be true, false or an object' '"zero_stage": 3' '"zeropp": 1'
case_ zeropp_hybrid 'with "shard_group"' '"zero_stage": 3' '"shard_group": 8' '"zeropp": {"hpz": true}'
case_ zeropp_fsdp2 'is DeepSpeed'"'"'s: not with "zero_impl"' '"zero_stage": 3' '"zero_impl": "fsdp2"' '"zeropp": {"qwz": true}'
case_ zeropp_compress 'contradicts "gradient_compression"' '"zero_stage": 3' '"gradient_compression": 0.5' \
    '"zeropp": {"qgz": true}'
case_ hpz_tp8 'hpZ needs 2 or more dp ranks' '"zero_stage": 3' '"tp": 8' '"zeropp": {"hpz": true}'
case_ sdp4bit_zero3 'for ZeRO-3 use "zeropp"' '"zero_stage": 3' '"sdp4bit": true'
case_ sdp4bit_replicated 'needs a ZeRO-1/2 sharded update' '"weight_update": ["replicated", "sharded"]' \
    '"sdp4bit": {"weights": true}'
case_ pa_tp1 'needs "tp" > 1' '"recompute": "full"' '"partition_activations": true'
case_ pa_selective 'needs "recompute": "full"' '"tp": 2' '"recompute": "selective"' '"partition_activations": true'
case_ pa_sp 'contradicts "sequence_parallel"' '"tp": 2' '"recompute": "full"' '"sequence_parallel": true' \
    '"partition_activations": true'
case_ cpu_ckpt 'needs a transformer and "recompute": "full"' '"tp": 2' '"recompute": "selective"' \
    '"cpu_checkpointing": true'
case_ cpu_copy_alone 'needs "cpu_checkpointing": true' '"recompute": "full"' '"cpu_checkpointing_copy": "async"'
case_ cpu_copy_name '"cpu_checkpointing_copy" = "sync" is not one of "async", "blocking"' '"recompute": "full"' '"cpu_checkpointing": true' \
    '"cpu_checkpointing_copy": "sync"'
case_ cpu_ckpt_block 'with "partition_activations", "cpu_checkpointing"' '"recompute": "full"' \
    '"cpu_checkpointing": true' '"recompute_layers": 4'
case_ lynx_none '(Lynx) needs a transformer and "recompute"' '"tp": 2' '"recompute_overlap": true'
# dp 12 on 8-GPU nodes: the node's dp ranks do not tile dp
case_ qgz_tiling 'must be a multiple of the 8 dp ranks' '"dp": 12' '"zero_stage": 3' '"zeropp": {"qgz": true}'

# a good combination of every key runs, and lists what it models
cat > "$TMP/ok.json" <<'J'
{"topology": "dgx-a100-cluster", "nodes": 2, "model": "gpt3-1.3b", "global_batch": 64,
 "parallelism": {"zero_stage": 3, "tp": 2, "recompute": "full", "partition_activations": true,
   "cpu_checkpointing": true, "pcie_bandwidth": 20e9, "recompute_overlap": true,
   "zeropp": {"qwz": true, "hpz": true, "qgz": true}}}
J
"$BIN" run --json "$TMP/ok.json" > "$TMP/ok.out" 2> "$TMP/err" || { echo "FAIL ok: $(cat "$TMP/err")"; fail=1; }
for k in qwz_allgather hpz_allgather qgz_alltoall_intra qgz_alltoall_inter checkpoint_allgather; do
    grep -q "\"$k\"" "$TMP/ok.out" || { echo "FAIL ok: $k not listed"; fail=1; }
done
[ $fail -eq 0 ] && echo "cli_seed: all $n error cases and the good scenario passed"
exit $fail
