#!/bin/bash
# Bad input to the step's newer parallelisms (expert parallelism and the
# capacity factor of a mixture of experts, ...): exit 2, "FILE:LINE" of the
# key at fault, nothing on stdout.
set -u
BIN=$1
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fail=0

# expect NAME FRAGMENT FILE:LINE -- ARGS...
expect() {
    local name=$1 frag=$2 pos=$3
    shift 4
    "$BIN" "$@" > "$TMP/out" 2> "$TMP/err"
    local rc=$?
    [ $rc -eq 2 ] || { echo "FAIL $name: exit $rc, expected 2"; cat "$TMP/err"; fail=1; }
    grep -qF -- "$frag" "$TMP/err" || { echo "FAIL $name: stderr lacks '$frag':"; cat "$TMP/err"; fail=1; }
    grep -qF -- "shardsim: $pos: " "$TMP/err" || { echo "FAIL $name: stderr does not start with shardsim: $pos:"; cat "$TMP/err"; fail=1; }
    [ -s "$TMP/out" ] && { echo "FAIL $name: stdout not empty"; fail=1; }
    grep -q CRITICAL "$TMP/err" && { echo "FAIL $name: GLib criticals on stderr"; fail=1; }
}

S=$TMP
moe='"topology": "dgx-h100-cluster", "nodes": 2, "model": "mixtral-8x7b", "global_batch": 16'
dense='"topology": "dgx-h100-cluster", "nodes": 2, "model": "gpt3-125m", "global_batch": 16'

# ---- a layout whose groups the topology cannot hold: the error the step
# finds, at the scenario's "parallelism" line ----
printf '{"topology": "dgx-h100-cluster", "nodes": 2, "model": {"base": "gpt3-125m", "seq_len": 3072}, "global_batch": 3,\n "parallelism": {"dp": 1, "tp": 4, "sequence_parallel": true,\n  "cp": 3}}\n' > "$S/uneven.json"
expect uneven "must be spread evenly over its nodes" "$S/uneven.json:2" -- run "$S/uneven.json"

# ---- mixture of experts ----
printf '{%s,\n "parallelism": {"dp": 16,\n  "ep": 8}}\n' "$dense" > "$S/ep_dense.json"
expect ep_dense '"ep" needs a mixture-of-experts model' "$S/ep_dense.json:3" -- run "$S/ep_dense.json"
printf '{%s,\n "parallelism": {\n  "capacity_factor": 1.25}}\n' "$dense" > "$S/cf_dense.json"
expect cf_dense '"capacity_factor" needs a mixture-of-experts model' "$S/cf_dense.json:3" -- run "$S/cf_dense.json"
printf '{%s,\n "parallelism": {"dp": 16,\n  "ep": 3}}\n' "$moe" > "$S/ep3.json"
expect ep_divides '"ep" = 3 must divide the experts (8) and dp (16)' "$S/ep3.json:3" -- run "$S/ep3.json"
printf '{%s,\n "parallelism": {"dp": 4, "tp": 4,\n  "ep": 8}}\n' "$moe" > "$S/ep_dp.json"
expect ep_dp '"ep" = 8 must divide the experts (8) and dp (4)' "$S/ep_dp.json:3" -- run "$S/ep_dp.json"
printf '{%s,\n "parallelism": {"ep": 8,\n  "capacity_factor": 0}}\n' "$moe" > "$S/cf0.json"
expect cf_zero '"capacity_factor"' "$S/cf0.json:3" -- run "$S/cf0.json"
printf '{%s,\n "parallelism": {"ep": 8,\n  "capacity_factor": "1.25"}}\n' "$moe" > "$S/cfs.json"
expect cf_string '"capacity_factor"' "$S/cfs.json:3" -- run "$S/cfs.json"
printf '{%s,\n "parallelism": {"ep": 8,\n  "zero_stage": 3}}\n' "$moe" > "$S/z3.json"
expect moe_zero3_deepspeed 'ZeRO-3 of a mixture of experts is FSDP'"'"'s' "$S/z3.json:3" -- run "$S/z3.json"
# ZeRO-3 of a MoE under FSDP runs (FSDP2 with EP, as NeMo AutoModel: experts sharded over the ranks holding them)
printf '{%s,\n "parallelism": {"ep": 8, "zero_impl": "fsdp2",\n  "zero_stage": 3}}\n' "$moe" > "$S/z3f.json"
"$BIN" run "$S/z3f.json" > "$TMP/out" 2> "$TMP/err" || { echo "FAIL moe_zero3: exit $?"; cat "$TMP/err"; fail=1; }
grep -q "zero3_expert_allgather" "$TMP/out" || { echo "FAIL moe_zero3: no expert gathers over ep's 2 copies"; fail=1; }
printf '{%s,\n "parallelism": {"ep": 8, "dp": 8, "pp": 2, "zero_impl": "fsdp2",\n  "zero_stage": 3}}\n' "$moe" > "$S/z3ok.json"
"$BIN" run "$S/z3ok.json" > "$TMP/out" 2> "$TMP/err" || { echo "FAIL moe_zero3_ep_dp: exit $?"; cat "$TMP/err"; fail=1; }
printf '{%s,\n "parallelism": {"ep": 8, "zero_stage": 3, "zero_impl": "fsdp2",\n  "shard_group": 8}}\n' "$moe" > "$S/z3hsdp.json"
expect moe_hsdp '"shard_group" (hybrid sharding) with a mixture of experts is not modelled' "$S/z3hsdp.json:3" -- run "$S/z3hsdp.json"
printf '{%s,\n "parallelism": {"ep": 1,\n  "ep_dispatcher": "deepep"}}\n' "$moe" > "$S/deep_ep1.json"
expect deepep_ep1 '"ep_dispatcher": "deepep" needs "ep" > 1 (1)' "$S/deep_ep1.json:3" -- run "$S/deep_ep1.json"
printf '{%s,\n "parallelism": {"ep": 8, "tp": 2, "sequence_parallel": true,\n  "ep_dispatcher": "deepep"}}\n' "$moe" > "$S/deep_etp.json"
expect deepep_etp 'and expert tensor parallelism 1 (2)' "$S/deep_etp.json:3" -- run "$S/deep_etp.json"
printf '{%s,\n "parallelism": {"ep": 8,\n  "moe_routing": "round_robin"}}\n' "$moe" > "$S/route_a2a.json"
expect routing_alltoall '"moe_routing" acts on "ep_dispatcher": "deepep"' "$S/route_a2a.json:3" -- run "$S/route_a2a.json"
printf '{%s,\n "parallelism": {"pp": 2,\n  "pipeline_microbatches": 1}}\n' "$dense" > "$S/pmb_z0.json"
expect pmb_zero0 '"pipeline_microbatches" is PyTorch'"'"'s pipelining over FSDP: it needs "zero_stage": 3' "$S/pmb_z0.json:3" -- run "$S/pmb_z0.json"
for k in '"pipeline_microbatches": 2' '"ep_dispatcher": "deepep"' '"moe_routing": "round_robin"' \
         '"pipeline_layout": "E|L"' '"moe_a2a_overlap": true' '"recompute_modules": ["core_attn"]' \
         '"account_for_loss_in_pipeline_split": true' '"pipeline_microbatches": 1'; do
    printf '{"topology": "dgx-a100", "model": "resnet50", "global_batch": 256,\n "parallelism": {\n  %s}}\n' "$k" > "$S/cnn_k.json"
    expect "cnn ${k%%:*}" 'is a CNN' "$S/cnn_k.json:3" -- run "$S/cnn_k.json"
done
# choices read as every choice does, case aside (review 8)
printf '{%s,\n "parallelism": {"ep": 8},\n "precision": "fp8", "fp8_recipe": "TENSORWISE", "attention": "Fused", "cross_entropy": "TE"}\n' "$moe" > "$S/case.json"
sed 's/"TENSORWISE"/"tensorwise"/; s/"Fused"/"fused"/; s/"TE"/"te"/' "$S/case.json" > "$S/case_lc.json"
"$BIN" run --json "$S/case.json" > "$S/case.out" 2>&1 && "$BIN" run --json "$S/case_lc.json" > "$S/case_lc.out" 2>&1 &&
    cmp -s <(grep -v '"scenario"' "$S/case.out") <(grep -v '"scenario"' "$S/case_lc.out") ||
    { echo "FAIL choices by case"; cat "$S/case.out"; fail=1; }
# ZeRO-3 under a pipeline is FSDP's (DeepSpeed's pipeline engine refuses it; review 8)
printf '{%s,\n "parallelism": {"pp": 2,\n  "zero_stage": 3}}\n' "$dense" > "$S/z3pp.json"
expect z3_pp_deepspeed 'ZeRO-3 under a pipeline ("pp" 2) is PyTorch'"'"'s pipelining over FSDP' "$S/z3pp.json:3" -- run "$S/z3pp.json"
# a dense model refuses the MoE keys even at their defaults (review 8)
for k in '"ep_dispatcher": "alltoall"' '"moe_routing": "uniform"'; do
    printf '{%s,\n "parallelism": {\n  %s}}\n' "$dense" "$k" > "$S/dense_k.json"
    expect "dense ${k%%:*}" 'needs a mixture-of-experts model' "$S/dense_k.json:3" -- run "$S/dense_k.json"
done
printf '{%s,\n "parallelism": {"ep": 8, "ep_dispatcher": "deepep",\n  "capacity_factor": 1.25}}\n' "$moe" > "$S/deepcf.json"
expect deepep_cf 'DeepEP is dropless' "$S/deepcf.json:3" -- run "$S/deepcf.json"
printf '{%s,\n "parallelism": {"ep": 8,\n  "ep_dispatcher": "nccl"}}\n' "$moe" > "$S/epd.json"
expect ep_dispatcher_name '"ep_dispatcher"' "$S/epd.json:3" -- run "$S/epd.json"
printf '{%s,\n "parallelism": {\n  "ep_dispatcher": "deepep"}}\n' "$dense" > "$S/epd_dense.json"
expect ep_dispatcher_dense '"ep_dispatcher" needs a mixture-of-experts model' "$S/epd_dense.json:3" -- run "$S/epd_dense.json"
printf '{%s,\n "parallelism": {"pp": 2,\n  "pipeline_microbatches": 3}}\n' "$dense" > "$S/pmb3.json"
expect pmb_divides '"pipeline_microbatches" 3 needs a pipeline ("pp" > 1: 2) and must divide the step'"'"'s' "$S/pmb3.json:3" -- run "$S/pmb3.json"
printf '{%s,\n "parallelism": {\n  "pipeline_microbatches": 1}}\n' "$dense" > "$S/pmb_pp1.json"
expect pmb_pp1 '"pipeline_microbatches" 1 needs a pipeline' "$S/pmb_pp1.json:3" -- run "$S/pmb_pp1.json"
printf '{%s,\n "parallelism": {"pp": 2, "virtual_stages": 2,\n  "pipeline_microbatches": 1}}\n' "$dense" > "$S/pmb_vpp.json"
expect pmb_vpp '"pipeline_microbatches" 1 needs a pipeline' "$S/pmb_vpp.json:3" -- run "$S/pmb_vpp.json"
printf '{%s,\n "parallelism": {"pp": 2,\n  "pipeline_microbatches": 0}}\n' "$dense" > "$S/pmb0.json"
expect pmb_zero '"pipeline_microbatches"' "$S/pmb0.json:3" -- run "$S/pmb0.json"
printf '{%s, "precision": "fp32",\n "master_weights": false}\n' "$dense" > "$S/master32.json"
expect master_fp32 '"master_weights": false needs 16-bit parameters' "$S/master32.json:2" -- run "$S/master32.json"
printf '{%s, "optimizer": "sgd",\n "optimizer_moments": "bf16"}\n' "$dense" > "$S/mom_sgd.json"
expect moments_sgd '"optimizer_moments" with "optimizer": "sgd"' "$S/mom_sgd.json:2" -- run "$S/mom_sgd.json"
printf '{%s,\n "optimizer_moments": "int8"}\n' "$dense" > "$S/mom_int8.json"
expect moments_name '"optimizer_moments"' "$S/mom_int8.json:2" -- run "$S/mom_int8.json"
printf '{%s,\n "master_weights": "no"}\n' "$dense" > "$S/master_str.json"
expect master_string '"master_weights"' "$S/master_str.json:2" -- run "$S/master_str.json"
printf '{%s,\n "parallelism": {\n  "moe_routing": "round_robin"}}\n' "$dense" > "$S/route_dense.json"
expect moe_routing_dense '"moe_routing" needs a mixture-of-experts model' "$S/route_dense.json:3" -- run "$S/route_dense.json"
printf '{%s,\n "parallelism": {\n  "ep": 0}}\n' "$moe" > "$S/ep0.json"
expect ep_zero '"ep"' "$S/ep0.json:3" -- run "$S/ep0.json"
printf '{"topology": "dgx-h100-cluster", "nodes": 1, "global_batch": 8,\n "model": {"layers": 2, "hidden": 512, "heads": 8, "seq_len": 128, "vocab": 1000,\n  "experts": 4, "top_k": 5}}\n' > "$S/topk.json"
expect top_k 'top_k must be in [1, experts]' "$S/topk.json:2" -- run "$S/topk.json"
printf '{"topology": "dgx-h100-cluster", "nodes": 1, "global_batch": 8,\n "model": {"layers": 2, "hidden": 512, "heads": 8, "seq_len": 128, "vocab": 1000,\n  "top_k": 2}}\n' > "$S/topk0.json"
expect top_k_dense 'top_k and shared_experts need experts > 0' "$S/topk0.json:2" -- run "$S/topk0.json"
printf '{%s,\n "parallelism": {"tp": 2, "ep": 8,\n  "expert_parallel": 8}}\n' "$moe" > "$S/key.json"
expect unknown_key 'unknown key "expert_parallel"' "$S/key.json:3" -- run "$S/key.json"

# ---- interleaved 1F1B ----
gpt='"topology": "dgx-a100-cluster", "nodes": 1, "model": "gpt3-1.3b", "global_batch": 16'
printf '{%s,\n "parallelism": {"dp": 8,\n  "virtual_stages": 2}}\n' "$gpt" > "$S/v_pp1.json"
expect vpp_pp1 '"virtual_stages" needs a 1F1B pipeline' "$S/v_pp1.json:3" -- run "$S/v_pp1.json"
printf '{%s,\n "parallelism": {"dp": 2, "pp": 4, "schedule": "gpipe",\n  "virtual_stages": 2}}\n' "$gpt" > "$S/v_gpipe.json"
expect vpp_gpipe '"virtual_stages" needs a 1F1B pipeline' "$S/v_gpipe.json:3" -- run "$S/v_gpipe.json"
printf '{%s,\n "parallelism": {"dp": 2, "pp": 4,\n  "virtual_stages": 4}}\n' "$gpt" > "$S/v_layers.json"
expect vpp_layers 'pp x virtual_stages = 16 must divide the 24 layers' "$S/v_layers.json:3" -- run "$S/v_layers.json"
printf '{"topology": "dgx-a100-cluster", "nodes": 1, "model": "gpt3-1.3b", "global_batch": 12,\n "parallelism": {"dp": 2, "pp": 4,\n  "virtual_stages": 2}}\n' > "$S/v_mb.json"
expect vpp_microbatches 'micro-batches (6) to be a multiple of pp (4)' "$S/v_mb.json:3" -- run "$S/v_mb.json"
printf '{%s,\n "parallelism": {"dp": 2, "pp": 4, "zero_stage": 2,\n  "virtual_stages": 2}}\n' "$gpt" > "$S/v_z2.json"
expect vpp_zero2 'with ZeRO-2 is not modelled' "$S/v_z2.json:3" -- run "$S/v_z2.json"
printf '{%s,\n "parallelism": {"dp": 2, "pp": 4,\n  "virtual_stages": 0}}\n' "$gpt" > "$S/v0.json"
expect vpp_zero '"virtual_stages"' "$S/v0.json:3" -- run "$S/v0.json"

# ---- context parallelism ----
printf '{%s,\n "parallelism": {"dp": 1, "tp": 2,\n  "cp": 3}}\n' "$gpt" > "$S/cp3.json"
expect cp_seq '"cp" = 3: 2 x cp must divide seq_len (2048)' "$S/cp3.json:3" -- run "$S/cp3.json"
printf '{%s,\n "parallelism": {"dp": 1,\n  "cp": 0}}\n' "$gpt" > "$S/cp0.json"
expect cp_zero '"cp"' "$S/cp0.json:3" -- run "$S/cp0.json"
printf '{%s,\n "parallelism": {"dp": 4, "tp": 2,\n  "cp": 2}}\n' "$gpt" > "$S/cpbig.json"
expect cp_devices 'dp x tp x pp x cp = 4 x 2 x 1 x 2 = 16 devices, but topology' "$S/cpbig.json:2" -- run "$S/cpbig.json"
printf '{%s,\n "parallelism": {"ep": 8,\n  "cp": 2}}\n' "$moe" > "$S/cpmoe.json"
expect cp_moe '"cp" with a mixture of experts is not modelled' "$S/cpmoe.json:3" -- run "$S/cpmoe.json"
printf '{"topology": "dgx-a100-cluster", "nodes": 1, "model": "gpt3-1.3b", "global_batch": 12,\n "parallelism": {"tp": 2,\n  "cp": 8}}\n' > "$S/cpfill.json"
expect cp_fill 'not a multiple of tp x cp x pp' "$S/cpfill.json:2" -- run "$S/cpfill.json"

# ---- hybrid sharding, offload ----
printf '{%s,\n "parallelism": {"zero_stage": 2,\n  "shard_group": 4}}\n' "$gpt" > "$S/sg2.json"
expect shard_zero2 '"shard_group" (FSDP hybrid sharding) needs "zero_stage": 3' "$S/sg2.json:3" -- run "$S/sg2.json"
printf '{%s,\n "parallelism": {"zero_stage": 3,\n  "shard_group": 3}}\n' "$gpt" > "$S/sg3.json"
expect shard_divides '"shard_group" = 3 must divide dp x cp = 8' "$S/sg3.json:3" -- run "$S/sg3.json"
printf '{%s,\n "parallelism": {"zero_stage": 3,\n  "shard_group": 0}}\n' "$gpt" > "$S/sg0.json"
expect shard_zero '"shard_group"' "$S/sg0.json:3" -- run "$S/sg0.json"
printf '{%s,\n "parallelism": {"weight_update": "replicated",\n  "offload_optimizer": true}}\n' "$gpt" > "$S/off0.json"
expect offload_replicated '"offload_optimizer" (ZeRO-Offload) needs a sharded weight update' "$S/off0.json:3" -- run "$S/off0.json"
printf '{%s,\n "parallelism": {"zero_stage": 1,\n  "pcie_bandwidth": 25e9}}\n' "$gpt" > "$S/pcie.json"
expect pcie_without_offload '"pcie_bandwidth" needs "offload_optimizer": true' "$S/pcie.json:3" -- run "$S/pcie.json"
printf '{%s,\n "parallelism": {"zero_stage": 1, "offload_optimizer": true,\n  "host_memory_bandwidth": -1}}\n' "$gpt" > "$S/hbw.json"
expect host_bw_negative '"host_memory_bandwidth"' "$S/hbw.json:3" -- run "$S/hbw.json"
printf '{%s,\n "parallelism": {"zero_stage": 1,\n  "offload_optimizer": "yes"}}\n' "$gpt" > "$S/offs.json"
expect offload_string '"offload_optimizer"' "$S/offs.json:3" -- run "$S/offs.json"

# ---- convolutional steps: data parallel only ----
cnn='"topology": "tpu-v3-pod", "nodes": 16, "model": "resnet50", "global_batch": 1024'
printf '{%s,\n "parallelism": {\n  "tp": 2}}\n' "$cnn" > "$S/cnn_tp.json"
expect cnn_tp 'is a CNN: its step is data parallel only ("tp" is for transformers)' "$S/cnn_tp.json:3" -- run "$S/cnn_tp.json"
printf '{%s,\n "parallelism": {"dp": 16,\n  "pp": 4}}\n' "$cnn" > "$S/cnn_pp.json"
expect cnn_pp '("pp" is for transformers)' "$S/cnn_pp.json:3" -- run "$S/cnn_pp.json"
printf '{%s,\n "parallelism": {\n  "recompute": "full"}}\n' "$cnn" > "$S/cnn_rc.json"
expect cnn_recompute '("recompute" is for transformers)' "$S/cnn_rc.json:3" -- run "$S/cnn_rc.json"
printf '{%s,\n "parallelism": {\n  "zero_stage": 3}}\n' "$cnn" > "$S/cnn_z3.json"
expect cnn_zero3 'ZeRO-3 of a CNN is not modelled' "$S/cnn_z3.json:3" -- run "$S/cnn_z3.json"
printf '{%s,\n "parallelism": {\n  "capacity_factor": 1}}\n' "$cnn" > "$S/cnn_cf.json"
expect cnn_capacity '("capacity_factor" is for transformers)' "$S/cnn_cf.json:3" -- run "$S/cnn_cf.json"
# and the plain data-parallel step runs
printf '{%s,\n "parallelism": {"weight_update": ["replicated", "sharded"]}}\n' "$cnn" > "$S/cnn_ok.json"
"$BIN" run --json "$S/cnn_ok.json" > "$TMP/out" 2> "$TMP/err" || { echo "FAIL cnn_runs: exit $?"; cat "$TMP/err"; fail=1; }
grep -q '"speedup"' "$TMP/out" || { echo "FAIL cnn_runs: no comparison"; fail=1; }

# FSDP2 says what it adds; a bad zero_impl names the values
printf '{%s,\n "parallelism": {"dp": 16, "zero_stage": 3,\n  "zero_impl": "fsdp2"}}\n' "$dense" > "$S/fsdp2.json"
"$BIN" run "$S/fsdp2.json" > "$TMP/out" 2> "$TMP/err" || { echo "FAIL fsdp2_runs: exit $?"; cat "$TMP/err"; fail=1; }
grep -q "FSDP2: each layer's parameters copied out of its all-gather" "$TMP/out" || { echo "FAIL fsdp2_runs: no FSDP2 line"; fail=1; }
sed 's/"fsdp2"/"fsdp3"/' "$S/fsdp2.json" > "$S/fsdp3.json"
expect zero_impl_bad '"fsdp2"' "$S/fsdp3.json:3" -- run "$S/fsdp3.json"

exit $fail
