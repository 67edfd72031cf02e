/* Per-device memory: model states (parameters, gradients, optimizer state)
 * under data parallelism with ZeRO stages 0-3, buffers, activations of the
 * micro-batches in flight, and whether it all fits in HBM.
 *
 * Model states follow Rajbhandari et al. 2020 (ZeRO, SC20), section 3.1/5:
 * with P bytes per parameter for the working weights, G for gradients and K
 * for optimizer state (incl. the fp32 master copy in mixed precision), Psi
 * parameters and N_d data-parallel ranks:
 *   stage 0 (replicated):              (P + G + K) Psi
 *   stage 1 (optimizer state sharded): (P + G) Psi + K Psi / N_d
 *   stage 2 (+ gradients sharded):     P Psi + (G + K) Psi / N_d
 *   stage 3 (+ parameters sharded):    (P + G + K) Psi / N_d
 * Weight-update sharding (Xu et al. 2020) has stage 1's memory.  FSDP
 * FULL_SHARD is stage 3, SHARD_GRAD_OP stage 2.
 *
 *   precision           P  G   K (optimizer)
 *   fp32                4  4   sgd 0, sgd+momentum 4, adam/adamw/lamb 8
 *   mixed fp16 / bf16   2  2   the above + 4 (fp32 master weights)
 *   fp8 (TE)            2  2   the above + 4
 * so mixed-precision Adam has K = 12 as in the ZeRO paper.  With
 * fp32_grad_accum (Megatron's fp32 main_grad) G is 4 in mixed precision.
 * FP8 adds Transformer Engine's FP8 copies of the linear layers' weights
 * (the weight and its transpose, 1 B each, cached across micro-batches when
 * the framework passes is_first_microbatch, as Megatron-Core does): 2 B per
 * fp8_weight_params, not sharded by ZeRO (TE casts the device's full
 * weights).  Embeddings, the output layer and norms have none.  FSDP's
 * stage 3 in mixed precision has no 16-bit shard (fsdp_fp32_shards):
 * (G + K) Psi / N_d.
 *
 * All functions are pure. */
#ifndef MEMORY_H
#define MEMORY_H

#include "sim_error.h"

#include <stdbool.h>

/* MIXED_FP8: Transformer Engine's FP8 training: bf16 weights, gradients and
 * activations, fp32 master weights and optimizer state, plus FP8 copies of
 * the linear layers' weights (fp8_weight_params). */
typedef enum { MEMORY_FP32, MEMORY_MIXED_FP16, MEMORY_MIXED_BF16, MEMORY_MIXED_FP8 } MemoryPrecision;

typedef enum {
    MEMORY_OPT_SGD,          /* no state */
    MEMORY_OPT_SGD_MOMENTUM, /* momentum buffer */
    MEMORY_OPT_ADAM,
    MEMORY_OPT_ADAMW,
    MEMORY_OPT_LAMB,         /* same state as Adam */
} MemoryOptimizer;

/* The reserve outside the framework's caching allocator: the CUDA context
 * and its loaded kernels (several hundred MiB) and NCCL's own buffers
 * (cudaMalloc'd by NCCL, not PyTorch: NCCL_BUFFSIZE 4 MiB for Simple, about
 * 4.7 MiB LL128 and 0.5 MiB LL per channel and peer, per communicator).  1.5
 * GiB is an assumption in the 1-2 GiB range commonly budgeted, not a
 * measurement.  It is not in torch.cuda.memory_stats()'s reserved bytes. */
#define MEMORY_DEFAULT_RESERVE_BYTES (1.5 * 1024 * 1024 * 1024)

/* The caching allocator's fragmentation: the share of its reservation that
 * no live tensor occupies at the peak, 1 - peak allocated / peak reserved.
 * It comes from the memory whose tensors come and go (buffers, activations,
 * the working set), not from the model states allocated once.  0.10 is
 * GMLake's measured level for a virtual-memory allocator that stitches free
 * blocks (Guo et al., ASPLOS 2024, "GMLake: Efficient and Transparent GPU
 * Memory Defragmentation for Large-scale DNN Training with Virtual Memory
 * Stitching": utilization about 90% on 1-16 A100s with DeepSpeed ZeRO-3,
 * FSDP and Colossal-AI, recomputation and LoRA; PyTorch's caching allocator
 * was 5-29 points worse there).  PyTorch's expandable_segments maps pages
 * on demand but does not stitch, so 0.10 is a lower bound for it and for
 * the classic allocator: the model does not call a run out of memory on
 * fragmentation it cannot see. */
#define MEMORY_DEFAULT_FRAGMENTATION 0.10

typedef struct {
    double params;        /* parameters held by this device's model-parallel shard (after TP/PP), Psi */
    int dp;               /* data-parallel degree N_d over which ZeRO shards (>= 1) */
    int zero_stage;       /* 0..3 */
    MemoryPrecision precision;
    MemoryOptimizer optimizer;
    bool fp32_grad_accum; /* fp32 gradients in mixed precision (G = 4) */
    /* Communication buffers: gradient buckets (PyTorch DDP: bucket_cap_mb,
     * 25 MiB by default; DeepSpeed: reduce_bucket_size elements x bytes) and,
     * for stage 3, the parameters gathered at one time (prefetch). */
    double bucket_bytes;
    double zero3_gathered_params; /* parameters all-gathered at a time under stage 3 */
    double activation_bytes;      /* one micro-batch's activations for this device's layers */
    int inflight_microbatches;    /* activations kept at once (>= 1); see memory_1f1b_inflight */
    double reserve_bytes;         /* outside the allocator; e.g. MEMORY_DEFAULT_RESERVE_BYTES */
    double fragmentation;         /* in [0, 0.9]; e.g. MEMORY_DEFAULT_FRAGMENTATION */
    /* Blocks cached by communication streams: PyTorch's caching allocator
     * keeps a freed block for the stream that allocated it and lends it to
     * no other, so what FSDP's reduce-scatter stream once held stays
     * reserved while the compute stream peaks (counted in buffers) */
    double stream_pool_bytes;
    /* Transformer Engine's userbuffers under Megatron's tp_comm_overlap:
     * communication buffers registered once for the overlapped GEMMs, held
     * for the whole run outside PyTorch's caching allocator (counted in the
     * reserve, not fragmented) */
    double tp_overlap_bytes;
    /* The peak's transient working set on top of the steady state: the
     * logits and the loss (fp32) of the last stage, the activations of the
     * layer being recomputed, ZeRO-3's unsharded gradient of the layer being
     * reduce-scattered (the step builder takes the loss's peak or the
     * backward's, whichever is larger: compute_working_set) */
    double working_set_bytes;
    /* MIXED_FP8: parameters whose FP8 weight and transpose are cached (the
     * device's linear-layer weights; 0 where TE casts them per pass, as
     * under ZeRO-3 / FSDP: without fp8_params the FP8 copy each layer saves
     * for the backward is an activation; with them it is the gathered
     * parameter, which FSDP frees and gathers again) */
    double fp8_weight_params;
    /* Bytes per fp8_weight_params cached (in [0, 3]; 2 by default): the FP8
     * weight (none with fp8_params, where it is the parameter) and its
     * transpose (none where FP8 GEMMs take any layout), or a block-scaled
     * recipe's two orientations and scales (fp8_weight_copy_bytes) */
    double fp8_copy_bytes;
    /* MIXED_FP8 with FP8 parameters (Megatron-Core's fp8_param_gather under
     * its distributed optimizer or FSDP: Transformer Engine's
     * fp8_model_init): the working weights are FP8, P = 1 B (the fp32
     * master in the optimizer), gathered in FP8 under ZeRO-3.  Every
     * parameter counts at 1 B (embeddings and norms, a small share, stay
     * 16-bit: a slight underestimate). */
    bool fp8_params;
    /* FSDP (FSDP1's flat parameter, FSDP2's DTensor shards) in mixed
     * precision: the sharded parameter is the fp32 one the optimizer
     * updates (the master in K), cast to the 16-bit type per unit when it is
     * all-gathered (FSDP2's MixedPrecisionPolicy; FSDP1 frees its
     * low-precision shard after each gather), so stage 3 keeps no 16-bit
     * shard: P Psi / N_d is not counted.  DeepSpeed's ZeRO-3 keeps it. */
    bool fsdp_fp32_shards;
    /* The optimizer's own precision (the scenario's "master_weights" and
     * "optimizer_moments"): no_master, the 16-bit parameters updated in
     * place with no fp32 copy (torch.optim.Adam on bf16 parameters; then an
     * FSDP shard is the 16-bit parameter, counted in P, and FSDP2 keeps the
     * sharded gradient in the parameters' type); moment_bytes, each
     * optimizer moment's bytes (0: 4, fp32). */
    bool no_master;
    double moment_bytes;
} MemoryConfig;

typedef struct {
    double params;      /* working weights (P bytes each), FP8 copies included */
    double grads;
    double optimizer;   /* optimizer state incl. fp32 master weights */
    double buffers;     /* buckets + stage-3 gathered parameters */
    double activations;
    double reserve;      /* reserve_bytes + fragmentation */
    double fragmentation; /* the allocator's holes: dynamic x f / (1 - f) */
    double working_set;  /* transient peak working set (working_set_bytes) */
    double model_states; /* params + grads + optimizer */
    double total;
} MemoryBreakdown;

/* MemoryConfig with dp 1, stage 0, mixed bf16, Adam, 1 micro-batch in flight,
 * no buffers, no activations, the default reserve and fragmentation. */
MemoryConfig memory_config_default(void);

/* Bytes per parameter for weights, gradients and optimizer state (P, G, K). */
double memory_param_bytes(MemoryPrecision p);
double memory_grad_bytes(MemoryPrecision p, bool fp32_grad_accum);
/* K per parameter with the optimizer's own precision (no_master, moment
 * bytes; 0: 4). */
double memory_optimizer_state_bytes(MemoryOptimizer o, MemoryPrecision p, bool no_master, double moment_bytes);
double memory_optimizer_bytes(MemoryOptimizer o, MemoryPrecision p);

/* Fills `out`; false with SIM_ERROR_INPUT (naming the field) on a bad config. */
bool memory_estimate(const MemoryConfig *cfg, MemoryBreakdown *out, GError **err);
/* (Re)computes b's fragmentation from its buffers, activations and working
 * set (after a caller changed them), keeping reserve and total consistent:
 * dynamic x f / (1 - f), up to whole 2 MiB. */
void memory_apply_fragmentation(MemoryBreakdown *b, double fragmentation);
/* The caching allocator's peak reservation, as torch.cuda.memory_stats()
 * "reserved_bytes.all.peak" reports it: total less the reserve outside it. */
double memory_allocator_reserved(const MemoryBreakdown *b);
/* total <= hbm_bytes (the reserve is already in total), and what the
 * allocator holds within its share of HBM, pool_fraction x hbm_bytes (1:
 * none set); a `preallocated` pool (JAX's XLA_PYTHON_CLIENT_MEM_FRACTION)
 * takes all of its share at once, so the memory outside the allocator
 * must fit beside the whole pool. */
bool memory_fits(const MemoryBreakdown *b, double hbm_bytes, double pool_fraction, bool preallocated);

/* Micro-batches whose activations pipeline stage `stage` (0-based, of `pp`)
 * holds at peak under 1F1B (PipeDream-Flush, Narayanan et al. 2021):
 * min(pp - stage, num_microbatches); 1 without pipelining. */
int memory_1f1b_inflight(int pp, int stage, int num_microbatches);

bool memory_optimizer_from_name(const char *name, MemoryOptimizer *out);
bool memory_precision_from_name(const char *name, MemoryPrecision *out); /* "fp32", "fp16", "bf16", "fp8" */

#endif
