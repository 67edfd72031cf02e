/* Workloads: what one training step computes, stores and moves, per layer.
 *
 * Two families, both read from JSON (models/presets/workloads/NAME.json, or a
 * path; presets are searched under $SHARDSIM_DATA_DIR like accelerators):
 *   - transformers (decoder or encoder) from their hyper-parameters;
 *   - CNNs from a layer table (convolutions and fully connected layers).
 * models/README.md gives the formats, the formulas and their sources.
 *
 * Conventions.  A "layer" is a transformer block (all identical) or one row
 * of a CNN's table.  Everything outside the layers (embeddings, final norm,
 * the logits projection or a CNN's classifier when it is not in the table)
 * is the "head".  Counts are per micro-batch of `micro_batch` sequences (or
 * images).  FLOPs count a multiply-add as 2.  Tensor parallelism (degree tp,
 * Megatron-style column/row splits) divides the GEMMs' sharded dimension, and
 * the numbers returned are then those of ONE device.  All functions taking a
 * const Workload * are pure.
 *
 * Backward: each forward GEMM (m, n, k) becomes two GEMMs of the same FLOPs,
 * dX = dY W^T (m, k, n) and dW = X^T dY (k, n, m): backward = 2 x forward
 * (workload_gemm_backward).  Elementwise backward traffic ~ 2 x forward. */
#ifndef WORKLOAD_H
#define WORKLOAD_H

#include "sim_error.h"

#include <stdbool.h>
#include <stddef.h>

typedef struct Workload Workload;

typedef enum { WORKLOAD_TRANSFORMER, WORKLOAD_CNN } WorkloadKind;

typedef enum { WORKLOAD_NORM_LAYERNORM, WORKLOAD_NORM_RMSNORM } WorkloadNorm;
typedef enum { WORKLOAD_POS_LEARNED, WORKLOAD_POS_ROTARY } WorkloadPosition;

/* The hyper-parameters of a transformer, as read from its JSON. */
typedef struct {
    int layers;
    int hidden;       /* h (d_model) */
    int heads;        /* a: attention heads */
    int kv_heads;     /* key/value heads (GQA); = heads for multi-head attention */
    int ffn;          /* MLP inner size (default 4h) */
    int seq_len;      /* s */
    int vocab;        /* V */
    int type_vocab;   /* BERT token-type embeddings (0: none) */
    bool gated_mlp;   /* SwiGLU: gate, up and down matrices */
    bool tied_embeddings; /* the logits reuse the input embedding matrix */
    bool bias;        /* linear layers and norms carry biases */
    bool dropout;     /* dropout after attention and MLP (masks are stored) */
    bool embedding_norm; /* a norm right after the embeddings (BERT) */
    bool causal;      /* decoder (masked) self-attention; JSON default true, false for encoders */
    WorkloadNorm norm;
    WorkloadPosition position;
    /* Mixture of experts (0 experts: a dense MLP).  Every layer's MLP is
     * `experts` routed experts of width expert_ffn, each token sent to top_k
     * of them by a router (hidden x experts), plus shared_experts experts
     * every token goes through (DeepSeek). */
    int experts, top_k, expert_ffn, shared_experts;
    /* Attention geometry (Qwen3, GPT-OSS).  head_dim: each head's width
     * (0: hidden / heads), so the attention is heads x head_dim wide, which
     * may differ from hidden (Megatron's kv_channels): QKV projects hidden
     * to (heads + 2 kv_heads) x head_dim, the output projection heads x
     * head_dim back to hidden.  qk_norm: an RMSNorm on each head's q and k
     * (Qwen3; Megatron's qk_layernorm), head_dim weights each.
     * sliding_window > 0: a causal window, each query attending to at most
     * that many keys (GPT-OSS: 128), on every layer but each
     * full_attention_every-th (Megatron's window_attn_skip_freq: layers
     * N, 2N, ... (1-based) attend to the whole sequence; 0: every layer is
     * windowed). */
    int head_dim;
    bool qk_norm;
    int sliding_window, full_attention_every;
    /* DeepSeek-V2/V3 (workload_mla.c).  Multi-head latent attention when
     * kv_lora_rank > 0: queries through a q_lora_rank bottleneck (0: one
     * hidden -> heads x (nope + rope) projection), keys and values through a
     * kv_lora_rank latent plus one shared rope key; heads of qk_nope_head_dim
     * + qk_rope_head_dim for Q K^T and v_head_dim for P V.  dense_layers: the
     * first N layers of a mixture of experts have a dense MLP of width ffn
     * (first_k_dense_replace).  mtp_layers: multi-token prediction modules
     * after the last layer (one more MoE layer each, a 2h -> h projection,
     * three norms and another logits and loss), outside the layer count and
     * workload_params_total (DeepSeek-V3's card: 671B without them). */
    int q_lora_rank, kv_lora_rank, qk_nope_head_dim, qk_rope_head_dim, v_head_dim;
    int dense_layers, mtp_layers;
} WorkloadTransformer;

typedef enum {
    WORKLOAD_RECOMPUTE_NONE,
    WORKLOAD_RECOMPUTE_SELECTIVE, /* attention core (softmax, dropout) recomputed */
    WORKLOAD_RECOMPUTE_FULL,      /* only each layer's input is kept */
    WORKLOAD_RECOMPUTE_OP,        /* PyTorch's per-op checkpointing, torchtitan's "op" policy (workload_sac.c) */
} WorkloadRecompute;

/* How a device's share of a layer is cut and what it keeps. */
typedef struct {
    int tp;                 /* tensor-parallel degree (>= 1) */
    bool sequence_parallel; /* Korthikanti et al. 2022: norms and dropouts split over tp too */
    WorkloadRecompute recompute;
    double act_bytes;       /* bytes per activation element: 2 (fp16/bf16), 4 (fp32) */
    /* FlashAttention-style fused attention: no s x s scores in HBM (no
     * softmax/dropout traffic, no stored probabilities: only the fp32
     * log-sum-exp per query row is kept) */
    bool fused_attention;
    int ep;                 /* expert parallelism: the routed experts split over ep devices (>= 1) */
    int etp;                /* expert tensor parallelism: each routed expert split over etp of the tp
                               ranks (0: tp); below tp each tp rank's own T / tp tokens are dispatched
                               (sequence parallelism) and the experts run over ep x etp of the tp x dp ranks */
    double capacity_factor; /* expert capacity / its balanced share of tokens: padded compute (1: dropless, balanced) */
    bool ep_deepep;         /* DeepEP's dispatch: received tokens grouped by source rank, one permute by expert each
                               way (no sort of the received chunks as Megatron's alltoall dispatcher's) */
    int cp;                 /* context parallelism: each device holds seq_len / cp of every sequence's tokens,
                               its queries attending to all seq_len keys (ring attention); >= 1 */
    /* Bytes per element of the linear layers' inputs kept for the weight
     * gradient; 0: act_bytes.  FP8 (Transformer Engine's Linear,
     * LayerNormLinear): 1, the FP8 transpose it casts for the wgrad GEMM,
     * while the bf16 input is dropped unless another op keeps it (the
     * attention output O, which a fused attention kernel saves). */
    double linear_input_bytes;
    /* Under sequence parallelism, the QKV and MLP-up linears keep their
     * all-gathered input (T x hidden, not / tp): PyTorch DTensor's
     * ColwiseParallel behind PrepareModuleInput(Shard(1) -> Replicate())
     * gathers before F.linear, and autograd saves what F.linear got.
     * Megatron-LM saves the shard and gathers it again in the backward. */
    bool sp_gathered_inputs;
    /* LoRA (models/finetune.h): the linear layers' weights are frozen (no
     * weight gradient, so no linear input is kept for one), and the linear
     * layers in lora_targets (WORKLOAD_LINEAR_* bits) carry rank lora_rank
     * adapters, whose inputs are kept (with lora_dropout > 0 the dropped-out
     * copy and its 1-byte mask: NeMo's dropout_position "pre") */
    bool frozen_linears;
    /* Megatron's activation_func_fp8_input_store (FP8 training): the MLP
     * activation function's input kept in 1 byte for its backward, cast
     * back there; 0: act_bytes */
    double act_func_input_bytes;
    /* Transformer Engine's fp8_dot_product_attention: the fused attention's
     * saved Q, K, V and O in 1 byte; 0: act_bytes */
    double attn_io_bytes;
    unsigned lora_targets;
    int lora_rank;
    double lora_dropout;
    /* Megatron-Core's recompute_modules beyond "core_attn" (which is
     * recompute SELECTIVE): WORKLOAD_RC_* bits, what each leaves unsaved in
     * workload_layer_activation_bytes */
    unsigned recompute_modules;
    /* FP8 under a recipe other than delayed scaling: Megatron-Core (with TE
     * >= 2.6) sets linear_proj and the shared experts' fc1 to save their
     * 16-bit input (held anyway by attention, the router) instead of an
     * FP8 copy (set_save_original_input) */
    bool fp8_save_original;
    /* "elementwise": "eager": PyTorch eager's element-wise kernels one op
     * at a time (workload_layer_pass_bytes) instead of fused ones */
    bool eager_elementwise;
    /* under recompute FULL, the linears (WORKLOAD_LINEAR_* bits) whose
     * forward outputs are kept with the layer's input ("recompute_keep") */
    unsigned recompute_keep;
} WorkloadParallel;

/* Megatron-Core's recompute_modules (transformer_config.py):
 *  - MLA_UP ("mla_up_proj"): MLA's up projections and rope (Q, K, V not kept);
 *  - LAYERNORM: output-discarding: the norms Megatron-Core's layer spec runs
 *    apart from a linear (MLA's input norm, a MoE layer's pre-MLP norm; TE
 *    fuses the others into LayerNormLinear) keep no output;
 *  - MOE_ACT: output-discarding: the routed experts' activation output
 *    (fc2's input) not kept;
 *  - MLP: a dense layer's MLP checkpointed (only its input kept);
 *  - MOE: a MoE layer's MLP checkpointed: router, dispatch, experts,
 *    combine, shared experts (only its input kept);
 *  - SHARED: the shared experts checkpointed;
 *  - CORE_ATTN: "core_attn", listed (the attention core: recompute SELECTIVE). */
enum {
    WORKLOAD_RC_MLA_UP = 1,
    WORKLOAD_RC_LAYERNORM = 2,
    WORKLOAD_RC_MOE_ACT = 4,
    WORKLOAD_RC_MLP = 8,
    WORKLOAD_RC_MOE = 16,
    WORKLOAD_RC_SHARED = 32,
    WORKLOAD_RC_CORE_ATTN = 64
};

/* The linear layers of a transformer block by Megatron-Core's (and NeMo's
 * PEFT target_modules') names: linear_qkv, linear_proj (attention output),
 * linear_fc1 (gate and up when gated), linear_fc2 (down). */
enum { WORKLOAD_LINEAR_QKV = 1, WORKLOAD_LINEAR_PROJ = 2, WORKLOAD_LINEAR_FC1 = 4, WORKLOAD_LINEAR_FC2 = 8 };
/* Beside them in "recompute_keep": the fused attention kernel's output O
 * and log-sum-exp ("core_attn"; JAX's "context" name in MaxText's
 * policies), so its forward does not run again. */
enum { WORKLOAD_KEEP_CORE_ATTN = 16 };

/* One GEMM: `batch` independent products (m x k) * (k x n). */
typedef struct {
    const char *name; /* static string: "qkv", "attn_score", ..., "conv" */
    double batch, m, n, k;
} WorkloadGemm;

/* tp 1, no sequence parallelism, no recomputation, 16-bit activations. */
WorkloadParallel workload_parallel_default(void);

/* The WORKLOAD_LINEAR_* bit of a forward GEMM of workload_layer_gemms (0:
 * not one of the four: the attention core, a MoE's GEMMs). */
unsigned workload_gemm_linear(const WorkloadGemm *g);

#define WORKLOAD_MAX_GEMMS 12

Workload *workload_load(const char *name_or_path, GError **err);
/* A preset's or workload file's JSON, a copy the caller owns (an inline
 * model's "base", whose keys the model's own replace). */
cJSON *workload_load_json(const char *name_or_path, GError **err);
Workload *workload_parse(const char *name, const char *text, size_t len, GError **err);
/* Checks `cfg` (err names the offending field, without position). */
Workload *workload_new_transformer(const char *name, const WorkloadTransformer *cfg, GError **err);
void workload_free(Workload *w);
char *workload_preset_dir(void); /* owned by the caller */

const char *workload_name(const Workload *w);
WorkloadKind workload_kind(const Workload *w);
/* The hyper-parameters; NULL for a CNN. */
const WorkloadTransformer *workload_transformer(const Workload *w);
/* A transformer's attention widths: one head's (head_dim, or hidden /
 * heads), the queries' (heads x head_dim: hidden by default) and the keys'
 * (kv_heads x head_dim) = the values'. */
double workload_head_dim(const WorkloadTransformer *t);
double workload_q_dim(const WorkloadTransformer *t);
double workload_kv_dim(const WorkloadTransformer *t);
/* The share of the layers with a sliding window (0 without one): the
 * layers are modelled as identical, so a windowed model's attention is
 * that mix of windowed and full kernels in every layer. */
double workload_window_share(const WorkloadTransformer *t);
int workload_num_layers(const Workload *w);
/* Tokens per sample: seq_len for a transformer, 1 for a CNN. */
int workload_tokens_per_sample(const Workload *w);

/* Parameters.  total = sum over layers + head; embedding = token (+position,
 * +type) embeddings and the output projection when it is not tied. */
double workload_params_total(const Workload *w);
double workload_params_layer(const Workload *w, int layer);
double workload_params_embedding(const Workload *w);
double workload_params_head(const Workload *w); /* total - sum of layers */
/* The routed experts' parameters in a layer (what expert parallelism
 * shards); 0 for a dense layer.  Part of workload_params_layer. */
double workload_params_layer_experts(const Workload *w, int layer);
/* Parameters one token's forward uses (routed experts: top_k of them). */
double workload_params_active(const Workload *w);
/* Whether layer `layer` is a mixture of experts (experts > 0 and past the
 * dense_layers); the MTP modules' layers are. */
bool workload_layer_is_moe(const Workload *w, int layer);
/* The head dimension the fused attention kernel costs as: hidden / heads,
 * or with MLA the mean of the Q K^T and P V head dimensions (192 and 128:
 * 160), which gives its FLOPs and its Q, K, V, O bytes exactly. */
double workload_attention_head_dim(const Workload *w);

/* Keys + values per token across the heads: 2 h kv_heads / heads, or
 * with MLA heads x (qk head dim + v head dim) (what a cp ring passes). */
double workload_kv_width(const Workload *w);

/* Multi-token prediction (mtp_layers modules, on the last pipeline stage):
 * the parameters of the modules apart from the embedding and output layer
 * they share with the model (each: a MoE layer, the 2h -> h projection and
 * three norms), and the forward GEMMs each adds to its layer's: the
 * projection "mtp_proj" and its logits "mtp_logits" (as the head's). */
double workload_params_mtp(const Workload *w);
int workload_mtp_gemms(const Workload *w, int micro_batch, const WorkloadParallel *par, WorkloadGemm *out);

/* Forward GEMMs of one layer for one micro-batch on one device; writes at most
 * WORKLOAD_MAX_GEMMS to `out` and returns how many.  Transformer: qkv,
 * attn_score (Q K^T), attn_value (P V), attn_out, mlp_up (gate and up fused
 * when gated), mlp_down; a mixture of experts has router, expert_up and
 * expert_down (batched over the device's experts: par->ep splits them, each
 * taking capacity_factor x its share of the tokens of ep devices) and
 * shared_up, shared_down.  CNN: the layer's convolution as an implicit GEMM
 * (m = micro_batch * out_hw^2, n = out channels, k = in channels * kernel^2)
 * or its fully connected layer. */
int workload_layer_gemms(const Workload *w, int layer, int micro_batch, const WorkloadParallel *par,
                         WorkloadGemm *out);
/* LoRA: the adapters' forward GEMMs of one layer on one device (par's
 * lora_targets, rank lora_rank; none without), at most 2 per target: A
 * ("lora_a": tokens x in x r) and B ("lora_b": tokens x r x out), split as
 * their base layer is (column-parallel qkv and fc1: r and out over tp;
 * row-parallel proj and fc2: in over tp, and B's out as its column-parallel
 * linear_out), and the adapters' trainable parameters per layer and device:
 * (in + out) x r / tp per target. */
int workload_lora_gemms(const Workload *w, int micro_batch, const WorkloadParallel *par, WorkloadGemm *out);
double workload_lora_params_layer(const Workload *w, const WorkloadParallel *par);
/* The head's forward GEMMs (the logits projection); none for a CNN. */
int workload_head_gemms(const Workload *w, int micro_batch, const WorkloadParallel *par, WorkloadGemm *out);
/* The two backward GEMMs of a forward GEMM (see above). */
void workload_gemm_backward(const WorkloadGemm *fwd, WorkloadGemm out[2]);
double workload_gemm_flops(const WorkloadGemm *g); /* 2 * batch * m * n * k */

double workload_layer_forward_flops(const Workload *w, int layer, int micro_batch, const WorkloadParallel *par);
double workload_head_forward_flops(const Workload *w, int micro_batch, const WorkloadParallel *par);
/* Forward FLOPs of the whole model for one sample on one device (tp 1). */
double workload_forward_flops_per_sample(const Workload *w);
/* CNN only: multiply-accumulates per sample, the unit in which ResNet
 * papers and torchvision quote "FLOPs" (= forward FLOPs / 2). */
double workload_forward_macs_per_sample(const Workload *w);

/* Bytes read + written by the memory-bound (non-GEMM) kernels of one layer's
 * forward pass: norms, activation function, softmax, dropout, residual adds
 * (transformer); batch-norm + ReLU and residual adds (CNN).  */
double workload_layer_elementwise_bytes(const Workload *w, int layer, int micro_batch, const WorkloadParallel *par);
/* A MoE layer's token copies around the all-to-alls (permute, sort by
 * local expert and back, unpermute): bytes read + written in the forward
 * or the backward pass; 0 for a dense layer. */
double workload_layer_permute_bytes(const Workload *w, int layer, int micro_batch, const WorkloadParallel *par,
                                    bool backward);

/* Activation bytes one layer keeps for the backward pass, per micro-batch and
 * device.  With fused_attention the "5as/h" attention core becomes the fp32
 * log-sum-exp, 4 a s b bytes (FlashAttention keeps O and it, and regenerates
 * dropout masks from the RNG state).  Transformer: Korthikanti et al. 2022, generalised to GQA, gated
 * MLPs and no-dropout models; for a GPT-style layer (ffn = 4h, kv = heads,
 * dropout) with act_bytes 2 it is exactly
 *   none, tp 1:             sbh (34 + 5as/h)
 *   none, tp t:             sbh (10 + 24/t + 5as/(ht))
 *   none, tp t + seq. par.: sbh/t (34 + 5as/h)
 *   selective:              sbh (10 + 24/t)   or  34 sbh/t with seq. par.
 *   full:                   2 sbh             or  2 sbh/t with seq. par.
 * With linear_input_bytes 1 (FP8) the QKV, MLP and down-projection inputs
 * (the latter ffn wide) are kept in 1 byte, and the output projection keeps
 * its own FP8 copy beside the fused attention's O: 5 sbh less for the GPT
 * layer at tp 1 (2 sbh + 4 sbh - 1 sbh).
 * CNN: the conv output and the BN/ReLU output of the layer. */
double workload_layer_activation_bytes(const Workload *w, int layer, int micro_batch, const WorkloadParallel *par);

/* Recompute OP (workload_sac.c): the share of a forward GEMM of
 * workload_layer_gemms (by name) that runs again before the backward; the
 * bytes a block keeps for `batch` sequences at `e` bytes per element
 * (tp 1); NULL when the model can run it, else why not. */
double workload_op_sac_share(const WorkloadTransformer *t, const char *gemm);
double workload_op_sac_kept(const WorkloadTransformer *t, double batch, double e);
const char *workload_op_sac_check(const WorkloadTransformer *t, int tp, int cp);

/* The HBM bytes of layer `layer`'s element-wise passes beyond
 * workload_layer_elementwise_bytes, forward (*fwd) and backward (*bwd)
 * (workload_eager.c): the rotary embedding's pass over q and k, and under
 * "elementwise": "eager" (par->eager_elementwise) PyTorch eager's
 * one-kernel-per-op passes in place of the fused kernels. */
void workload_layer_pass_bytes(const Workload *w, int layer, int micro_batch, const WorkloadParallel *par,
                               double *fwd, double *bwd);
/* NULL for a dense block with multi-head attention, the only one the
 * frameworks' modes above ("op", "eager", "recompute_keep") are modelled
 * on; else why not (no experts, no MLA). */
const char *workload_dense_check(const WorkloadTransformer *t);

/* Megatron-LM's model FLOPs per iteration of `batch` sequences (Narayanan et
 * al. 2021, eq. 3): with full recomputation 96 B s l h^2 (1 + s/(6h) +
 * V/(16 l h)); without, 72 B s l h^2 (1 + s/(6h) + V/(12 l h)).  It assumes a
 * GPT layer (ffn = 4h, no GQA); use it only to compare with papers. */
double workload_megatron_flops(const Workload *w, double batch, bool full_recompute);
/* Achieved FLOP/s per device as papers report it. */
double workload_achieved_flops(const Workload *w, double batch, bool full_recompute, double iteration_s,
                               int devices);

#endif
