/* Workloads: a transformer's or CNN's parameters, per-layer GEMMs,
 * element-wise bytes, activation memory and FLOPs (workload.h); reading and
 * checking a description is workload_json.c's. */
#include "workload_internal.h"
#include "workload_mla.h"

#include <math.h>
#include <string.h>

WorkloadParallel workload_parallel_default(void)
{
    return (WorkloadParallel){.tp = 1, .sequence_parallel = false, .recompute = WORKLOAD_RECOMPUTE_NONE, .act_bytes = 2,
                              .ep = 1, .capacity_factor = 1, .cp = 1};
}

void workload_free(Workload *w)
{
    if (!w)
        return;
    for (int i = 0; i < w->n_cnn; i++)
        g_free(w->cnn[i].name);
    g_free(w->cnn);
    g_free(w->name);
    g_free(w);
}

/* ---- accessors ---- */

const char *workload_name(const Workload *w) { return w->name; }
WorkloadKind workload_kind(const Workload *w) { return w->kind; }
const WorkloadTransformer *workload_transformer(const Workload *w)
{
    return w->kind == WORKLOAD_TRANSFORMER ? &w->t : NULL;
}
int workload_num_layers(const Workload *w) { return w->kind == WORKLOAD_TRANSFORMER ? w->t.layers : w->n_cnn; }
int workload_tokens_per_sample(const Workload *w) { return w->kind == WORKLOAD_TRANSFORMER ? w->t.seq_len : 1; }

/* Layer indices past `layers` are the MTP modules' layers (not counted in
 * workload_num_layers, reachable for their costs). */
static bool valid_layer(const Workload *w, int layer)
{
    int n = workload_num_layers(w) + (w->kind == WORKLOAD_TRANSFORMER ? w->t.mtp_layers : 0);
    return layer >= 0 && layer < n;
}

/* A mixture-of-experts layer: past the dense_layers (any layer index from
 * `layers` on is an MTP module's, a MoE layer too). */
static bool moe_layer(const WorkloadTransformer *t, int layer) { return t->experts > 0 && layer >= t->dense_layers; }

bool workload_layer_is_moe(const Workload *w, int layer)
{
    return w->kind == WORKLOAD_TRANSFORMER && layer >= 0 && moe_layer(&w->t, layer);
}


/* Without a head_dim the widths are hidden's, computed as they always were
 * (byte-identical results for the presets that predate head_dim). */
double workload_head_dim(const WorkloadTransformer *t)
{
    return t->head_dim > 0 ? t->head_dim : (double)t->hidden / t->heads;
}
double workload_q_dim(const WorkloadTransformer *t)
{
    return t->head_dim > 0 ? (double)t->heads * t->head_dim : t->hidden;
}
double workload_kv_dim(const WorkloadTransformer *t)
{
    return t->head_dim > 0 ? (double)t->kv_heads * t->head_dim : (double)t->hidden * t->kv_heads / t->heads;
}
static double kv_dim(const WorkloadTransformer *t) { return workload_kv_dim(t); }

double workload_window_share(const WorkloadTransformer *t)
{
    if (t->sliding_window <= 0)
        return 0;
    int full = t->full_attention_every > 0 ? t->layers / t->full_attention_every : 0;
    return (double)(t->layers - full) / t->layers;
}

/* Qwen3's q and k RMSNorms: head_dim weights each (shared by the heads). */
static double qk_norm_params(const WorkloadTransformer *t) { return t->qk_norm ? 2 * workload_head_dim(t) : 0; }

static double norm_params(const WorkloadTransformer *t)
{
    return t->norm == WORKLOAD_NORM_LAYERNORM ? 2.0 * t->hidden : (double)t->hidden;
}

/* ---- parameters ---- */

/* One expert's MLP: up (and gate) and down, with biases when the model has them. */
static double expert_params(const WorkloadTransformer *t)
{
    double h = t->hidden, f = t->expert_ffn;
    return (t->gated_mlp ? 3 : 2) * h * f + (t->bias ? (t->gated_mlp ? 2 : 1) * f + h : 0);
}

/* Tokens x MLP width that the activation function sees, summed over the
 * MLP's experts: T x ffn for a dense MLP; routed tokens padded to the
 * capacity factor plus the shared experts' for a mixture of experts. */
static double mlp_token_width(const WorkloadTransformer *t, bool moe, const WorkloadParallel *par, double T)
{
    if (!moe)
        return T * t->ffn;
    double cf = par && par->capacity_factor > 0 ? par->capacity_factor : 1;
    return (cf * t->top_k + t->shared_experts) * T * t->expert_ffn;
}

/* Routed tokens a device's experts take per micro-batch, padded: each
 * token's top_k copies times the capacity factor. */
static double routed_tokens(const WorkloadTransformer *t, const WorkloadParallel *par, double T)
{
    double cf = par && par->capacity_factor > 0 ? par->capacity_factor : 1;
    return cf * t->top_k * T;
}

static double cnn_layer_params(const CnnLayer *c)
{
    double p;
    if (c->type == CNN_CONV)
        p = (double)c->kernel * c->kernel * c->in / c->groups * c->out;
    else
        p = (double)c->in * c->out;
    if (c->bias)
        p += c->out;
    if (c->bn)
        p += 2.0 * c->out; /* gamma and beta; running statistics are buffers */
    return p;
}

static double transformer_layer_params(const WorkloadTransformer *t, int layer);

double workload_params_layer(const Workload *w, int layer)
{
    if (!valid_layer(w, layer))
        return 0;
    if (w->kind == WORKLOAD_CNN)
        return cnn_layer_params(&w->cnn[layer]);
    return transformer_layer_params(&w->t, layer);
}

static double transformer_layer_params(const WorkloadTransformer *t, int layer)
{
    double h = t->hidden, q = workload_q_dim(t), kv = kv_dim(t), f = t->ffn;
    double attn = workload_mla_on(t) ? workload_mla_params(t) : h * (q + 2 * kv) + q * h + qk_norm_params(t);
    double mlp = (t->gated_mlp ? 3 : 2) * h * f;
    double bias = t->bias ? (q + 2 * kv) + h + (t->gated_mlp ? 2 : 1) * f + h : 0;
    if (moe_layer(t, layer)) { /* the router, shared and routed experts instead of one MLP */
        double one = expert_params(t);
        mlp = h * t->experts + t->shared_experts * one + t->experts * one;
        bias = t->bias ? (q + 2 * kv) + h : 0;
    }
    return attn + mlp + bias + 2 * norm_params(t);
}

double workload_params_layer_experts(const Workload *w, int layer)
{
    if (!valid_layer(w, layer) || w->kind != WORKLOAD_TRANSFORMER || !moe_layer(&w->t, layer))
        return 0;
    return w->t.experts * expert_params(&w->t);
}

double workload_params_active(const Workload *w)
{
    double p = workload_params_total(w);
    for (int i = 0; i < workload_num_layers(w); i++)
        p -= workload_params_layer_experts(w, i) * (1 - (double)w->t.top_k / (w->t.experts ? w->t.experts : 1));
    return p;
}

double workload_params_embedding(const Workload *w)
{
    if (w->kind == WORKLOAD_CNN)
        return 0;
    const WorkloadTransformer *t = &w->t;
    double h = t->hidden;
    double p = (double)t->vocab * h + (double)t->type_vocab * h;
    if (t->position == WORKLOAD_POS_LEARNED)
        p += (double)t->seq_len * h;
    if (!t->tied_embeddings)
        p += (double)t->vocab * h;
    return p;
}

double workload_params_head(const Workload *w)
{
    if (w->kind == WORKLOAD_CNN)
        return 0;
    double p = workload_params_embedding(w);
    if (w->t.embedding_norm)
        p += norm_params(&w->t);
    if (w->final_norm)
        p += norm_params(&w->t);
    return p;
}

double workload_params_total(const Workload *w)
{
    double p = workload_params_head(w);
    for (int i = 0; i < workload_num_layers(w); i++)
        p += workload_params_layer(w, i);
    return p;
}

/* ---- GEMMs ---- */

static int tp_of(const WorkloadParallel *par) { return par && par->tp > 1 ? par->tp : 1; }
static int cp_of(const WorkloadParallel *par) { return par && par->cp > 1 ? par->cp : 1; }
/* The ranks a layer's token rows split over: tp under sequence parallelism. */
static int sp_of(const WorkloadParallel *par) { return par && par->sequence_parallel ? tp_of(par) : 1; }
static int ep_of(const WorkloadParallel *par) { return par && par->ep > 1 ? par->ep : 1; }

int workload_layer_gemms(const Workload *w, int layer, int micro_batch, const WorkloadParallel *par,
                         WorkloadGemm *out)
{
    if (!valid_layer(w, layer) || micro_batch < 1)
        return 0;
    double b = micro_batch;
    if (w->kind == WORKLOAD_CNN) {
        const CnnLayer *c = &w->cnn[layer];
        if (c->type == CNN_FC) {
            out[0] = (WorkloadGemm){"fc", 1, b, c->out, c->in};
        } else {
            double hw = (double)c->out_hw * c->out_hw;
            out[0] = (WorkloadGemm){"conv", c->groups, b * hw, (double)c->out / c->groups,
                                    (double)c->in / c->groups * c->kernel * c->kernel};
        }
        return 1;
    }
    const WorkloadTransformer *t = &w->t;
    /* context parallelism: the device's s / cp queries against all s keys */
    double tp = tp_of(par), s = t->seq_len, h = t->hidden, a = t->heads, d = workload_head_dim(t), sq = s / cp_of(par),
           T = b * sq, q = workload_q_dim(t);
    int n = 0;
    if (workload_mla_on(t)) {
        n = workload_mla_gemms(t, b, sq, tp, par && par->sequence_parallel, out);
    } else {
        out[n++] = (WorkloadGemm){"qkv", 1, T, (q + 2 * kv_dim(t)) / tp, h};
        out[n++] = (WorkloadGemm){"attn_score", b * a / tp, sq, s, d};
        out[n++] = (WorkloadGemm){"attn_value", b * a / tp, sq, d, s};
        out[n++] = (WorkloadGemm){"attn_out", 1, T, h, q / tp};
    }
    if (!moe_layer(t, layer)) {
        out[n++] = (WorkloadGemm){"mlp_up", 1, T, (t->gated_mlp ? 2.0 : 1.0) * t->ffn / tp, h};
        out[n++] = (WorkloadGemm){"mlp_down", 1, T, h, t->ffn / tp};
        return n;
    }
    /* the device's E / ep experts each take their share of ep devices' tokens */
    double ep = ep_of(par), fe = t->expert_ffn, up = t->gated_mlp ? 2.0 : 1.0;
    /* expert tensor parallelism: the etp ranks sharing the device's experts bring T / tp tokens each */
    double etp = par && par->etp > 0 ? par->etp : tp, Tg = T * etp / tp;
    double local = t->experts / ep, per_expert = routed_tokens(t, par, Tg) * ep / t->experts;
    out[n++] = (WorkloadGemm){"router", 1, T, t->experts, h};
    out[n++] = (WorkloadGemm){"expert_up", local, per_expert, up * fe / etp, h};
    out[n++] = (WorkloadGemm){"expert_down", local, per_expert, h, fe / etp};
    if (t->shared_experts > 0) {
        out[n++] = (WorkloadGemm){"shared_up", 1, T, up * fe * t->shared_experts / tp, h};
        out[n++] = (WorkloadGemm){"shared_down", 1, T, h, fe * t->shared_experts / tp};
    }
    return n;
}

unsigned workload_gemm_linear(const WorkloadGemm *g)
{
    static const struct { const char *name; unsigned bit; } t[] = {
        {"qkv", WORKLOAD_LINEAR_QKV}, {"attn_out", WORKLOAD_LINEAR_PROJ},
        {"mlp_up", WORKLOAD_LINEAR_FC1}, {"mlp_down", WORKLOAD_LINEAR_FC2}};
    for (size_t i = 0; i < G_N_ELEMENTS(t); i++)
        if (!strcmp(g->name, t[i].name))
            return t[i].bit;
    return 0;
}

/* LoRA: a target's base layer's full input and output widths, and whether
 * it is row-parallel (its input split over tp). */
static void lora_target_dims(const WorkloadTransformer *t, unsigned bit, double *in, double *out, bool *row)
{
    double h = t->hidden, f = t->ffn, up = t->gated_mlp ? 2 : 1;
    *row = bit == WORKLOAD_LINEAR_PROJ || bit == WORKLOAD_LINEAR_FC2;
    double q = workload_q_dim(t);
    *in = bit == WORKLOAD_LINEAR_FC2 ? f : bit == WORKLOAD_LINEAR_PROJ ? q : h;
    *out = bit == WORKLOAD_LINEAR_QKV ? q + 2 * kv_dim(t) : bit == WORKLOAD_LINEAR_FC1 ? up * f : h;
}

/* What full recomputation keeps beside the layer's input ("recompute_keep"):
 * the kept linears' outputs, T tokens of e bytes (column-parallel ones
 * split over tp), and the fused attention's output with its log-sum-exp. */
static double kept_outputs(const WorkloadTransformer *t, double T, double e, const WorkloadParallel *par)
{
    double bytes = 0, in, out;
    bool row;
    if (par && (par->recompute_keep & WORKLOAD_KEEP_CORE_ATTN)) /* O, and 4 bytes of log-sum-exp a head */
        bytes += T * (workload_q_dim(t) * e + 4.0 * t->heads) / tp_of(par);
    for (unsigned bit = 1; par && bit <= WORKLOAD_LINEAR_FC2; bit <<= 1)
        if (par->recompute_keep & bit) {
            lora_target_dims(t, bit, &in, &out, &row);
            bytes += T * out * e / (row ? 1 : tp_of(par));
        }
    return bytes;
}

static bool lora_on(const Workload *w, const WorkloadParallel *par)
{
    return w->kind == WORKLOAD_TRANSFORMER && w->t.experts == 0 && par && par->frozen_linears &&
           par->lora_targets && par->lora_rank > 0;
}

int workload_lora_gemms(const Workload *w, int micro_batch, const WorkloadParallel *par, WorkloadGemm *out)
{
    if (!lora_on(w, par) || micro_batch < 1)
        return 0;
    double tp = tp_of(par), T = (double)micro_batch * w->t.seq_len / cp_of(par), r = par->lora_rank;
    int n = 0;
    for (unsigned bit = 1; bit <= WORKLOAD_LINEAR_FC2; bit <<= 1) {
        if (!(par->lora_targets & bit))
            continue;
        double in, o;
        bool row;
        lora_target_dims(&w->t, bit, &in, &o, &row);
        out[n++] = (WorkloadGemm){"lora_a", 1, T, row ? r : r / tp, row ? in / tp : in};
        out[n++] = (WorkloadGemm){"lora_b", 1, T, o / tp, r};
    }
    return n;
}

double workload_lora_params_layer(const Workload *w, const WorkloadParallel *par)
{
    if (!lora_on(w, par))
        return 0;
    double p = 0;
    for (unsigned bit = 1; bit <= WORKLOAD_LINEAR_FC2; bit <<= 1) {
        double in, o;
        bool row;
        lora_target_dims(&w->t, bit, &in, &o, &row);
        if (par->lora_targets & bit)
            p += (in + o) * par->lora_rank / tp_of(par);
    }
    return p;
}

int workload_head_gemms(const Workload *w, int micro_batch, const WorkloadParallel *par, WorkloadGemm *out)
{
    if (w->kind == WORKLOAD_CNN || micro_batch < 1)
        return 0;
    const WorkloadTransformer *t = &w->t;
    out[0] = (WorkloadGemm){"logits", 1, (double)micro_batch * t->seq_len / cp_of(par), (double)t->vocab / tp_of(par),
                            t->hidden};
    return 1;
}

void workload_gemm_backward(const WorkloadGemm *f, WorkloadGemm out[2])
{
    out[0] = (WorkloadGemm){"dgrad", f->batch, f->m, f->k, f->n};
    out[1] = (WorkloadGemm){"wgrad", f->batch, f->k, f->n, f->m};
}

double workload_gemm_flops(const WorkloadGemm *g) { return 2.0 * g->batch * g->m * g->n * g->k; }

static double sum_flops(const WorkloadGemm *g, int n)
{
    double f = 0;
    for (int i = 0; i < n; i++)
        f += workload_gemm_flops(&g[i]);
    return f;
}

double workload_layer_forward_flops(const Workload *w, int layer, int micro_batch, const WorkloadParallel *par)
{
    WorkloadGemm g[WORKLOAD_MAX_GEMMS];
    return sum_flops(g, workload_layer_gemms(w, layer, micro_batch, par, g));
}

double workload_head_forward_flops(const Workload *w, int micro_batch, const WorkloadParallel *par)
{
    WorkloadGemm g[WORKLOAD_MAX_GEMMS];
    return sum_flops(g, workload_head_gemms(w, micro_batch, par, g));
}

double workload_forward_flops_per_sample(const Workload *w)
{
    double f = workload_head_forward_flops(w, 1, NULL);
    for (int i = 0; i < workload_num_layers(w); i++)
        f += workload_layer_forward_flops(w, i, 1, NULL);
    return f;
}

double workload_forward_macs_per_sample(const Workload *w)
{
    return w->kind == WORKLOAD_CNN ? workload_forward_flops_per_sample(w) / 2 : 0;
}

/* ---- memory-bound work and activations ---- */

static double act_bytes_of(const WorkloadParallel *par) { return par && par->act_bytes > 0 ? par->act_bytes : 2; }

double workload_layer_elementwise_bytes(const Workload *w, int layer, int micro_batch, const WorkloadParallel *par)
{
    if (!valid_layer(w, layer) || micro_batch < 1)
        return 0;
    double e = act_bytes_of(par), b = micro_batch;
    if (w->kind == WORKLOAD_CNN) {
        const CnnLayer *c = &w->cnn[layer];
        double E = b * c->out * (double)c->out_hw * c->out_hw;
        double bytes = c->bn ? 2 * E * e : 0; /* BN + ReLU fused: read, write */
        if (c->residual)
            bytes += 3 * E * e; /* two reads, one write */
        return bytes;
    }
    const WorkloadTransformer *t = &w->t;
    double tp = tp_of(par), T = b * t->seq_len, h = t->hidden;
    double sp = sp_of(par);
    double scores = b * t->heads * (double)t->seq_len * t->seq_len;
    double rows = 2 * 2 * T * h * e     /* two norms: read, write */
                  + 2 * 3 * T * h * e;  /* two residual adds */
    if (t->dropout)
        rows += 2 * (2 * e + 1) * T * h; /* two dropouts: read, write, 1-byte mask */
    double split = 0;
    if (!(par && par->fused_attention)) { /* fused: softmax and dropout stay on chip */
        split += 2 * scores * e;          /* softmax */
        if (t->dropout)
            split += (2 * e + 1) * scores;
    }
    bool moe = moe_layer(t, layer);
    split += (t->gated_mlp ? 3 : 2) * mlp_token_width(t, moe, par, T) * e; /* GeLU: read, write; SwiGLU: read 2, write 1 */
    if (t->qk_norm) /* q and k normed per head: read, write */
        split += 2 * T * (workload_q_dim(t) + kv_dim(t)) * e;
    if (workload_mla_on(t)) {
        double mr, ms;
        workload_mla_elementwise(t, T, e, &mr, &ms);
        rows += mr;
        split += ms;
    }
    return (rows / sp + split / tp) / cp_of(par); /* every term counts the device's tokens */
}

/* A MoE layer's token copies in Megatron-Core's alltoall dispatcher
 * (token_dispatcher.py): the device's routed tokens permuted by expert
 * before the dispatch and unpermuted (weighted and summed) after the
 * combine; where the device holds several experts, the tokens it receives
 * also sorted by expert and back before the combine (sort_chunks_by_idxs,
 * or a transposing copy where tokens are dropped and padded).  DeepEP's
 * kernels gather the sent rows themselves and leave the received ones
 * grouped by source rank, so one permute by local expert and its inverse
 * remain (Megatron's flex dispatcher, NeMo AutoModel).  Each copy
 * reads and writes every routed row once, its gradient the same in the
 * backward, where the unpermute's gradient of the routing weights also
 * reads the experts' saved outputs again. */
double workload_layer_permute_bytes(const Workload *w, int layer, int micro_batch, const WorkloadParallel *par,
                                    bool backward)
{
    if (!valid_layer(w, layer) || micro_batch < 1 || w->kind != WORKLOAD_TRANSFORMER || !moe_layer(&w->t, layer))
        return 0;
    const WorkloadTransformer *t = &w->t;
    double T = (double)micro_batch * t->seq_len, e = act_bytes_of(par);
    double sp = sp_of(par), ep = ep_of(par);
    double rows = t->experts / ep > 1 && !par->ep_deepep ? 2 * 4 : 2 * 2;
    if (backward)
        rows += 1;
    return rows * routed_tokens(t, par, T) * t->hidden * e / sp / cp_of(par);
}

/* LoRA's saved tensors, for a layer whose linear layers are frozen: rows
 * loses the QKV and MLP inputs kept for their weight gradients; each
 * adapter keeps its input (T x in: without dropout the base layer's input
 * itself, which the fused attention kernel already keeps for linear_proj;
 * with dropout the dropped-out copy and its 1-byte mask) and A's output
 * (T x r), in rows where whole on the device and in split where split
 * over tp. */
static void lora_saved(const WorkloadTransformer *t, const WorkloadParallel *par, double T, double e, double *rows,
                       double *lora_rows, double *lora_split)
{
    double li = par->linear_input_bytes > 0 ? par->linear_input_bytes : e, r = par->lora_rank;
    double drop = par->lora_dropout > 0 ? 1 : 0; /* the mask, beside the copy */
    *rows -= 2 * T * t->hidden * li;
    for (unsigned bit = 1; bit <= WORKLOAD_LINEAR_FC2; bit <<= 1) {
        if (!(par->lora_targets & bit))
            continue;
        double in, o;
        bool row;
        lora_target_dims(t, bit, &in, &o, &row);
        double keep = bit == WORKLOAD_LINEAR_PROJ && par->fused_attention && !drop ? 0 : T * in * (e + drop);
        if (row) {
            *lora_split += keep;
            *lora_rows += T * r * e;
        } else {
            *lora_rows += keep;
            *lora_split += T * r * e;
        }
    }
}

/* What a MoE layer's MLP keeps, by recompute_modules: *mlp_in its input
 * (the pre-MLP norm's output: the router saves it in 16 bit, and the
 * shared experts' fc1 an FP8 copy under delayed scaling), *rows the
 * dispatched tokens (expert_up's input) and the fp32 router probabilities,
 * *split the experts' activation inputs and fc2 inputs (routed padded to
 * the capacity factor, and shared).  "moe" keeps the input only, "moe_act"
 * drops the routed fc2 inputs (the activation's output), "shared_experts"
 * the shared experts' tensors, "layernorm" the input (the norm's output). */
static void moe_saved(const WorkloadTransformer *t, const WorkloadParallel *par, double T, double e, double li,
                      double *mlp_in, double *rows, double *split)
{
    unsigned rm = par ? par->recompute_modules : 0;
    double af = par && par->act_func_input_bytes > 0 ? par->act_func_input_bytes : e, gl = t->gated_mlp ? 2 : 1;
    double routed = routed_tokens(t, par, T) * t->expert_ffn, sh = t->shared_experts * T * t->expert_ffn;
    bool copy = t->shared_experts > 0 && li != e && !(par && par->fp8_save_original) && !(rm & WORKLOAD_RC_SHARED);
    *mlp_in = T * t->hidden * e + (copy ? T * t->hidden * li : 0);
    *rows = routed_tokens(t, par, T) * t->hidden * li + T * t->experts * 4;
    *split = gl * routed * af + ((rm & WORKLOAD_RC_MOE_ACT) ? 0 : routed * li);
    if (!(rm & WORKLOAD_RC_SHARED))
        *split += sh * (gl * af + li);
    if (rm & WORKLOAD_RC_MOE) {
        *rows = *split = 0;
        *mlp_in = T * t->hidden * e;
    }
    if (rm & WORKLOAD_RC_LAYERNORM)
        *mlp_in = 0;
}

double workload_layer_activation_bytes(const Workload *w, int layer, int micro_batch, const WorkloadParallel *par)
{
    if (!valid_layer(w, layer) || micro_batch < 1)
        return 0;
    double e = act_bytes_of(par), b = micro_batch;
    WorkloadRecompute rc = par ? par->recompute : WORKLOAD_RECOMPUTE_NONE;
    if (w->kind == WORKLOAD_CNN) {
        const CnnLayer *c = &w->cnn[layer];
        double E = b * c->out * (double)c->out_hw * c->out_hw;
        if (rc == WORKLOAD_RECOMPUTE_FULL)
            return E * e;
        return (c->bn ? 2 : 1) * E * e;
    }
    const WorkloadTransformer *t = &w->t;
    double tp = tp_of(par), T = b * t->seq_len, h = t->hidden, kv = kv_dim(t), f = t->ffn, q = workload_q_dim(t);
    double sp = sp_of(par);
    if (rc == WORKLOAD_RECOMPUTE_FULL)
        return (T * h * e / sp + kept_outputs(t, T, e, par)) / cp_of(par);
    if (rc == WORKLOAD_RECOMPUTE_OP) /* tp 1, cp 1 (workload_op_sac_check) */
        return workload_op_sac_kept(t, b, e);
    /* li: the linear layers' saved inputs (FP8 under Transformer Engine) */
    double li = par && par->linear_input_bytes > 0 ? par->linear_input_bytes : e;
    bool fused = par && par->fused_attention;
    /* Korthikanti et al. 2022, section 4.1: the "10 sbh" kept whole without
     * sequence parallelism: two norm inputs, QKV input, MLP input, and the two
     * 1-byte dropout masks. */
    bool moe = moe_layer(t, layer);
    unsigned rm = par ? par->recompute_modules : 0;
    double mlp_in = T * h * li, moe_rows = 0, moe_split = 0;
    if (moe)
        moe_saved(t, par, T, e, li, &mlp_in, &moe_rows, &moe_split);
    double qkv_in = workload_mla_on(t) && (rm & WORKLOAD_RC_LAYERNORM) ? 0 : T * h * li; /* MLA's input norm apart */
    double rows = 2 * T * h * e + qkv_in + mlp_in + (t->dropout ? 2 * T * h : 0);
    double lora_rows = 0, lora_split = 0;
    bool frozen = lora_on(w, par);
    if (frozen) /* frozen linear layers keep no input for a weight gradient; adapters keep theirs */
        lora_saved(t, par, T, e, &rows, &lora_rows, &lora_split);
    /* The "24 sbh" split by tp: Q, K, V, attention-output projection input
     * (the fused kernel's O, plus the projection's own FP8 copy), activation-
     * function input(s) and output (the down projection's input). */
    double tf = moe ? 0 : T * f; /* a MoE layer's experts: moe_saved */
    if (!moe && (rm & WORKLOAD_RC_MLP)) /* the checkpointed MLP keeps its input only (the norm's) */
        tf = 0, rows -= mlp_in;
    double ab = fused && par->attn_io_bytes > 0 ? par->attn_io_bytes : e; /* Q, K, V, O as the kernel keeps them */
    /* linear_proj's FP8 copy of O; under a non-delayed recipe its 16-bit input instead */
    bool orig = par && par->fp8_save_original;
    double oproj = fused ? T * q * ab + (li != e && !orig ? T * q * li : 0) : T * q * (orig ? e : li);
    if (frozen) /* the fused kernel's O stays (attention's backward); no input copy for a wgrad */
        oproj = fused ? T * q * ab : 0;
    double af = par && par->act_func_input_bytes > 0 ? par->act_func_input_bytes : e; /* the activation's input */
    double split = T * q * ab + 2 * T * kv * ab + oproj + (t->gated_mlp ? 2 : 1) * tf * af + (frozen ? 0 : tf * li);
    if (t->qk_norm) /* the q and k norms' inputs, for their backward */
        split += T * (q + kv) * e;
    if (workload_mla_on(t)) { /* MLA's latents and its Q, K, V, O instead of multi-head attention's */
        double mr, ms;
        workload_mla_saved(t, T, e, li, ab, fused, rm & WORKLOAD_RC_MLA_UP, par && par->fp8_save_original, &mr, &ms);
        split += ms - (T * q * ab + 2 * T * kv * ab + oproj);
        rows += mr;
    }
    rows += lora_rows;
    split += lora_split;
    rows += moe_rows;
    split += moe_split;
    /* The "5 as^2 b" attention core: softmax output, dropout mask and output. */
    double scores = b * t->heads * (double)t->seq_len * t->seq_len;
    double core = scores * e + (t->dropout ? scores * (1 + e) : 0);
    if (fused)
        core = 4.0 * b * t->heads * t->seq_len; /* fp32 log-sum-exp per query row */
    double gathered = par && par->sp_gathered_inputs ? 2 * T * h * li : 0; /* QKV and MLP inputs whole */
    double bytes = (rows - gathered) / sp + gathered + split / tp;
    if (rc != WORKLOAD_RECOMPUTE_SELECTIVE)
        bytes += core / tp;
    return bytes / cp_of(par); /* every term counts the device's tokens (scores: its queries) */
}

/* ---- Megatron FLOPs ---- */

double workload_megatron_flops(const Workload *w, double batch, bool full_recompute)
{
    if (w->kind != WORKLOAD_TRANSFORMER)
        return 0;
    const WorkloadTransformer *t = &w->t;
    double s = t->seq_len, l = t->layers, h = t->hidden, V = t->vocab;
    if (full_recompute)
        return 96 * batch * s * l * h * h * (1 + s / (6 * h) + V / (16 * l * h));
    return 72 * batch * s * l * h * h * (1 + s / (6 * h) + V / (12 * l * h));
}

double workload_achieved_flops(const Workload *w, double batch, bool full_recompute, double iteration_s,
                               int devices)
{
    if (!(iteration_s > 0) || devices < 1)
        return 0;
    return workload_megatron_flops(w, batch, full_recompute) / (iteration_s * devices);
}
