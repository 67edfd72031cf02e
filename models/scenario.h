/* The scenario as the step builder reads it: parsed, validated against the
 * model and the machine, defaults filled, dp resolved.  Parsing and every
 * rule about what a scenario may say live in scenario.c (with its machine
 * in scenario_machine.c); the public entry
 * points (step_scenario_load, step_json_dp, ...) are declared in step.h. */
#ifndef SCENARIO_H
#define SCENARIO_H

#include "accel.h"
#include "collective.h"
#include "finetune.h"
#include "fp8_recipe.h"
#include "memory.h"
#include "step.h"
#include "topo.h"
#include "workload.h"

/* The parallelism plan of one variant. */
typedef struct {
    int dp, tp, pp;
    int zero_stage;  /* 0..3; weight-update sharding (Xu et al.) is stage 1 */
    WorkloadRecompute recompute;
    bool gpipe;
    bool sequence_parallel;
    double bucket_bytes;
    bool overlap;
    double compression; /* wire bytes / gradient bytes, (0, 1] */
    /* sharded update (ZeRO-1/2): all-gather the updated weights layer by
     * layer behind the next forward instead of at the end of the step;
     * -1 = not given (true: Xu et al.'s design) */
    int allgather_overlap;
    /* AccelDtype of the gradients on the wire and in the gradient buffers;
     * -1 = not given (the working precision's gradient type) */
    int grad_reduce_dtype;
    /* scenario_par.c: mixture of experts' expert parallelism (the routed
     * experts split over ep consecutive dp ranks) and capacity factor */
    int ep;
    double capacity_factor;
    /* Megatron-Core's expert_tensor_parallel_size: the routed experts split
     * over etp of the tp ranks (0: tp, every tp rank holding 1/tp of each
     * expert); below tp, "MoE parallel folding": the expert-parallel group
     * runs over the tp x dp ranks (ep x etp of them) */
    int etp;
    int vpp; /* interleaved 1F1B: model chunks per pipeline stage (1: plain 1F1B) */
    int cp;  /* context parallelism: the sequence split over cp devices (ring attention); ranks tp-cp-dp-pp */
    /* "cp_impl": whose ring attention (par_cp.c): Transformer Engine's P2P
     * ring (the default), or PyTorch's context_parallel rotating KV by one
     * all-gather or by all-to-all */
    enum { CP_IMPL_TE_P2P, CP_IMPL_PYTORCH_ALLGATHER, CP_IMPL_PYTORCH_ALLTOALL } cp_impl;
    /* "cp_repeat_kv" (PyTorch's only; default false, SDPA's enable_gqa as
     * torchtitan since ff0829c1, 2026-01, and transformers run it): the
     * model repeats the grouped KV heads to the query's before SDPA, so the
     * ring carries them repeated (torchtitan's Llama until then) */
    bool cp_repeat_kv;
    int shard_group; /* FSDP hybrid sharding: ZeRO-3 inside groups of this many dp ranks (0: all dp) */
    bool offload_optimizer;       /* ZeRO-Offload: optimizer state and update on the host */
    double pcie_bps, host_mem_bps; /* per device; per node (shared by its devices) */
    /* step_interfere.c: compute overlapped by communication kernels slows
     * (their SMs and HBM traffic); false: overlap is free */
    bool comm_interference;
    /* Megatron-Core's userbuffers: sequence parallelism's all-gather and
     * reduce-scatter split in tp chunks pipelined with the GEMMs */
    bool tp_comm_overlap;
    /* par_zeropp.c: quantised sharded-DP collectives.  ZeRO++ (ZeRO-3):
     * int8 weight gathers (qwZ), backward gathers from a node's secondary
     * copy (hpZ), int4 hierarchical gradient all-to-all (qgZ); SDP4Bit
     * (ZeRO-1/2): 4-bit weight differences, 8-bit / 4-bit gradients */
    bool qwz, hpz, qgz;
    bool sdp4bit_weights, sdp4bit_gradients;
    /* par_pact.c: DeepSpeed's partition_activations (checkpoints split over
     * tp), cpu_checkpointing (the checkpoints, or their partitions, kept in
     * host memory; cpu_checkpointing_blocking: copied on the compute stream,
     * as PyTorch's save_on_cpu does, not on a side stream); Lynx's
     * recompute overlapped with communication */
    bool partition_activations, cpu_checkpointing, cpu_checkpointing_blocking, recompute_overlap;
    /* How the framework implements tensor and sharded data parallelism, for
     * memory: "tp_impl" "dtensor" (PyTorch DTensor's ColwiseParallel under
     * sequence parallelism saves its all-gathered input; Megatron, the
     * default, saves the shard and gathers it again in the backward);
     * "zero_impl" "fsdp" (FSDP1/FSDP2 mixed precision: the sharded parameter
     * is the fp32 master, cast per unit at its all-gather: no persistent
     * 16-bit shard under stage 3; DeepSpeed, the default, keeps one);
     * "fsdp2" as "fsdp", with FSDP2's per-parameter copies timed
     * (zero_fsdp2_costs in par_zero.c) */
    bool tp_dtensor, zero_fsdp, zero_fsdp2;
    /* "recompute_layers": with full recomputation, only the first N layers
     * of each model chunk recompute (Megatron's recompute_method "block",
     * NeMo's activations_checkpoint_num_layers); 0: every layer */
    int recompute_layers;
    /* "cpu_offloading_num_layers": Megatron-Core's cpu_offloading (through
     * Transformer Engine): the first N layers' saved activations go to the
     * host after their forward and come back before their backward
     * (par_pact.c); 0: none */
    int offload_layers;
    /* Megatron's account_for_embedding_in_pipeline_split /
     * account_for_loss_in_pipeline_split: the embedding (loss) counts as a
     * layer of the first (last) model chunk, which holds one transformer
     * layer less; pp x virtual_stages then divides layers + 1 (+ 2) */
    bool split_embedding, split_loss;
    /* Megatron's pipeline_model_parallel_layout ("" for none): which model
     * chunk holds which layers (par_layout.c) */
    char pipeline_layout[256];
    /* Megatron's overlap_moe_expert_parallel_comm ("moe_a2a_overlap"): a
     * layer's expert all-to-alls hidden behind another micro-batch's
     * compute of the opposite direction (par_moe.c) */
    bool ep_overlap;
    /* "ep_dispatcher": how a token reaches its experts' ranks (par_moe.c):
     * STEP_EP_ALLTOALL sends each of its top_k copies (Megatron-Core's
     * alltoall dispatcher), STEP_EP_DEEPEP once per rank holding any of its
     * experts (DeepEP, Megatron's flex dispatcher); "moe_routing" says which
     * experts a token picks: STEP_ROUTE_UNIFORM any k at random,
     * STEP_ROUTE_ROUND_ROBIN k consecutive ones (NeMo AutoModel's
     * FakeBalancedGate) */
    enum { STEP_EP_ALLTOALL, STEP_EP_DEEPEP } ep_dispatcher;
    /* "pipeline_microbatches": the micro-batches one pipeline schedule runs
     * before it drains; the step repeats it (PyTorch's pipelining, as
     * torchtitan and NeMo AutoModel accumulate gradients: local batch /
     * micro-batch a schedule); 0: the step's all in one (Megatron-LM) */
    int pp_microbatches;
    enum { STEP_ROUTE_UNIFORM, STEP_ROUTE_ROUND_ROBIN } moe_routing;
    /* "recompute_modules": Megatron-Core's selective recomputation by
     * module, WORKLOAD_RC_* bits (workload.h); "core_attn" also sets
     * recompute SELECTIVE */
    unsigned recompute_modules;
    /* "recompute_keep": under full recomputation, the linear layers whose
     * forward outputs the checkpoint keeps, so their GEMMs do not run again
     * (JAX's save_only_these_names policies, MaxText's remat_policy
     * save_qkv_proj, custom): WORKLOAD_LINEAR_* bits */
    unsigned recompute_keep;
} StepPlan;

/* The plan `variant` runs: the scenario's, with that variant's ZeRO stage. */
StepPlan step_scenario_plan(const StepScenario *sc, int variant);

const char *step_scenario_name(const StepScenario *sc); /* the output's label */
const char *step_scenario_path(const StepScenario *sc); /* its file, for messages */
int step_scenario_par_line(const StepScenario *sc);    /* its "parallelism" line, for messages */
const Topo *step_scenario_topo(const StepScenario *sc);
const Accel *step_scenario_accel(const StepScenario *sc);
/* The scenario named its accelerator (else it is the topology's). */
bool step_scenario_accel_given(const StepScenario *sc);
const Workload *step_scenario_workload(const StepScenario *sc);
int step_scenario_global_batch(const StepScenario *sc);
int step_scenario_micro_batch(const StepScenario *sc);
AccelDtype step_scenario_dtype(const StepScenario *sc); /* the arithmetic */
MemoryPrecision step_scenario_precision(const StepScenario *sc);
MemoryOptimizer step_scenario_optimizer(const StepScenario *sc);
/* Scale DP collectives by the flow simulation's contention. */
bool step_scenario_flow_contention(const StepScenario *sc);
/* Runs the scenario on accelerator `a` (copied) from now on: calibration
 * tries efficiency values; what was checked against the chip at parsing
 * (data types, memory) must not change. */
void step_scenario_set_accel(StepScenario *sc, const Accel *a);
/* The collective model's parameters every group of the step uses. */
const CollParams *step_scenario_coll_params(const StepScenario *sc);
/* The NCCL version code its collectives follow ("nccl_version"); 0: the newest. */
int step_scenario_nccl_version(const StepScenario *sc);
/* The collective library its collectives follow ("nccl_library": a
 * CollLibrary); -1: the topology's default (coll_library_default). */
int step_scenario_nccl_library(const StepScenario *sc);
/* How attention runs: fused kernels keep no s x s scores in HBM. */
typedef enum { STEP_ATTN_UNFUSED, STEP_ATTN_FUSED, STEP_ATTN_FUSED_V1, STEP_ATTN_FUSED_V2 } StepAttention;
StepAttention step_scenario_attention(const StepScenario *sc);
/* How the loss runs over the logits ("cross_entropy"), which sets its
 * traffic over the logits and the last stage's working set per logit:
 * "unfused" (default: PyTorch's cross_entropy on fp32 logits), "fp32"
 * (Megatron-Core's vocab-parallel cross entropy: an fp32 copy, softmax and
 * gradient in place), "fp32_fused" (the same under
 * cross_entropy_loss_fusion, its "native" implementation: the passes fused
 * by torch.compile), "te" (Megatron-Core's cross_entropy_fusion_impl "te":
 * Transformer Engine's Triton kernel on the 16-bit logits), "fused" (a fused
 * kernel on the 16-bit logits: flash-attn's / apex's xentropy,
 * llm-foundry's default), "compiled" (a compiler-fused loss on the 16-bit
 * logits: torch.compile's, XLA's), "bf16" (PyTorch's cross_entropy on the
 * 16-bit logits, no upcast), "loss_parallel" (PyTorch DTensor's
 * loss_parallel() on vocab-sharded logits, torchtitan's; with tp 1 it is
 * PyTorch's cross_entropy, "unfused"), "chunked" (a fused linear cross
 * entropy: the output layer and the loss a chunk of tokens at a time, their
 * gradients made in the forward, the logits never whole: Liger-Kernel's,
 * as TRL and Axolotl run it). */
typedef enum {
    STEP_CE_UNFUSED,
    STEP_CE_FP32,
    STEP_CE_FUSED,
    STEP_CE_LOSS_PARALLEL,
    STEP_CE_FP32_FUSED,
    STEP_CE_TE,
    STEP_CE_COMPILED,
    STEP_CE_BF16,
    STEP_CE_CHUNKED
} StepCrossEntropy;
StepCrossEntropy step_scenario_cross_entropy(const StepScenario *sc);
const char *step_cross_entropy_name(StepCrossEntropy ce);
const char *step_cp_impl_name(int cp_impl); /* "cp_impl"'s name of StepPlan's cp_impl */
/* "elementwise": "eager": PyTorch eager's element-wise kernels, one per op
 * (workload_layer_pass_bytes); false: fused kernels (default). */
bool step_scenario_eager_elementwise(const StepScenario *sc);
/* The framework that runs the step ("framework"): "pytorch" (default:
 * eager PyTorch, Megatron-Core and Transformer Engine: tensors come and go
 * through the caching allocator, FSDP's root unit stays gathered, TE casts
 * to FP8 in kernels of their own) or "jax" (one XLA program: buffers
 * planned when it compiles, parameters outside the layers gathered around
 * their use, FP8 casts fused into the ops that produce their inputs;
 * "cross_entropy" then "compiled" unless given). */
typedef enum { STEP_FRAMEWORK_PYTORCH, STEP_FRAMEWORK_JAX } StepFramework;
StepFramework step_scenario_framework(const StepScenario *sc);
/* The share of HBM the framework's allocator may hold ("memory_fraction",
 * default 1): JAX's XLA_PYTHON_CLIENT_MEM_FRACTION, PyTorch's
 * set_per_process_memory_fraction.  The reserve outside the allocator (the
 * CUDA context, NCCL's buffers) is not in it. */
double step_scenario_memory_fraction(const StepScenario *sc);
bool step_scenario_memory_fraction_given(const StepScenario *sc);
/* FP8 only: the casts of activations and gradients fused into the ops that
 * produce them ("fp8_casts": "fused": a compiler's, XLA's fusions of Flax's
 * FP8 ops; the default under "jax") rather than kernels of their own
 * ("kernels": Transformer Engine's, in PyTorch or in JAX; the default under
 * "pytorch").  The weights' casts are kernels either way. */
bool step_scenario_fp8_casts_fused(const StepScenario *sc);
/* GPUs one process drives, launching on them one after another
 * ("gpus_per_process", default 1: a process per GPU). */
int step_scenario_gpus_per_process(const StepScenario *sc);
/* dp came from the scenario (else it fills the machine: ranks / (tp x pp)). */
bool step_scenario_dp_given(const StepScenario *sc);
/* Job rank -> topology rank ("placement"); NULL for contiguous (the identity). */
const int *step_scenario_rank_map(const StepScenario *sc);
/* The placement's name and seed, "scattered, seed 1"; "contiguous" without a map. */
const char *step_scenario_placement(const StepScenario *sc);
/* "finetune" (finetune.h); method FINETUNE_NONE when absent. */
const Finetune *step_scenario_finetune(const StepScenario *sc);
/* "activation_func_fp8_input_store" (Megatron-Core's TransformerConfig
 * option of that name, FP8 only): the MLP activation's input saved in FP8. */
bool step_scenario_act_func_fp8(const StepScenario *sc);
/* "fp8_dot_product_attention" (Transformer Engine's option of that name,
 * FP8 only): the fused attention keeps Q, K, V and O in FP8 for its
 * backward, and the kernel runs at the preset's measured FP8 rate where it
 * has one ("fused_attention": "fp8_fwd" / "fp8_bwd"), else at its 16-bit
 * rate (step_compute.c). */
bool step_scenario_fp8_dpa(const StepScenario *sc);
/* "fp8_param_gather" (Megatron-Core's option of that name, FP8 only; what
 * torchao's enable_fsdp_float8_all_gather does under FSDP2): the linear
 * layers' weights are held and all-gathered in FP8 (memory.h's fp8_params). */
bool step_scenario_fp8_params(const StepScenario *sc);
/* "master_weights": false (no fp32 copy of the 16-bit parameters) and
 * "optimizer_moments"' bytes (4 fp32, 2 bf16/fp16). */
bool step_scenario_no_master(const StepScenario *sc);
double step_scenario_moment_bytes(const StepScenario *sc);
/* "fp8_recipe": Transformer Engine's scaling recipe of an FP8 scenario
 * (fp8_recipe.h; FP8_DELAYED by default and without FP8). */
Fp8Recipe step_scenario_fp8_recipe(const StepScenario *sc);

#endif
