/* DeepSeek-V2/V3 multi-head latent attention (MLA) as Megatron-Core's
 * MLASelfAttention computes it (megatron/core/transformer/
 * multi_latent_attention.py): q = q_up(norm(q_down(x))) of heads x (nope +
 * rope); [kv latent, k_rope] = kv_down(x); [k_nope, v] =
 * kv_up(norm(kv latent)) of heads x (nope + v); the rope key shared by the
 * heads; core attention with qk head dim nope + rope and v head dim v;
 * linear_proj from heads x v to hidden.  Tensor parallelism: the down
 * projections are TELinear "duplicated" (whole on every tp rank, on its
 * 1/tp of the tokens under sequence parallelism), the up projections
 * column-parallel (TELayerNormColumnParallelLinear: the latent norms fused
 * in), linear_proj row-parallel.  Also the workload.h functions of
 * DeepSeek's other pieces: the attention head dimension the fused kernel is
 * costed at, the KV width, the multi-token prediction modules. */
#include "workload_mla.h"

bool workload_mla_on(const WorkloadTransformer *t) { return t->kv_lora_rank > 0; }

const char *workload_dense_check(const WorkloadTransformer *t)
{
    return t->experts > 0 || workload_mla_on(t) ? "is modelled for dense blocks with multi-head attention (no experts, no MLA)"
                                                : NULL;
}

const char *workload_mla_check(const WorkloadTransformer *t)
{
    if (t->q_lora_rank < 0 || t->kv_lora_rank < 0 || t->qk_nope_head_dim < 0 || t->qk_rope_head_dim < 0 ||
        t->v_head_dim < 0)
        return "MLA dimensions must be >= 0";
    if (t->kv_lora_rank == 0 && (t->q_lora_rank || t->qk_nope_head_dim || t->qk_rope_head_dim || t->v_head_dim))
        return "q_lora_rank, qk_nope_head_dim, qk_rope_head_dim and v_head_dim need kv_lora_rank > 0 (MLA)";
    if (t->kv_lora_rank > 0 && (t->qk_nope_head_dim < 1 || t->qk_rope_head_dim < 1 || t->v_head_dim < 1))
        return "MLA needs qk_nope_head_dim, qk_rope_head_dim and v_head_dim >= 1";
    if (t->kv_lora_rank > 0 && t->kv_heads != t->heads)
        return "MLA has no grouped-query attention: kv_heads must equal heads";
    if (t->kv_lora_rank > 0 && (t->head_dim > 0 || t->qk_norm))
        return "head_dim and qk_norm do not apply to MLA (its heads are qk_nope_head_dim + qk_rope_head_dim and v_head_dim wide)";
    if (t->dense_layers < 0 || t->dense_layers > t->layers)
        return "dense_layers must be in [0, layers]";
    if (t->dense_layers > 0 && t->experts == 0)
        return "dense_layers needs experts > 0";
    if (t->mtp_layers < 0)
        return "mtp_layers must be >= 0";
    return NULL;
}

static double qk_dim(const WorkloadTransformer *t) { return (double)t->qk_nope_head_dim + t->qk_rope_head_dim; }

double workload_mla_params(const WorkloadTransformer *t)
{
    double h = t->hidden, a = t->heads, q = t->q_lora_rank, kv = t->kv_lora_rank, r = t->qk_rope_head_dim;
    double query = q > 0 ? h * q + q + q * a * qk_dim(t) : h * a * qk_dim(t); /* down, norm, up */
    double keyval = h * (kv + r) + kv + kv * a * ((double)t->qk_nope_head_dim + t->v_head_dim);
    return query + keyval + a * t->v_head_dim * h; /* + linear_proj */
}

double workload_mla_kv_width(const WorkloadTransformer *t) { return t->heads * (qk_dim(t) + t->v_head_dim); }

int workload_mla_gemms(const WorkloadTransformer *t, double b, double sq, double tp, bool sp, WorkloadGemm *out)
{
    double h = t->hidden, a = t->heads, s = t->seq_len, T = b * sq, q = t->q_lora_rank, kv = t->kv_lora_rank;
    double Td = sp ? T / tp : T; /* duplicated down projections: all of the device's tokens without sp */
    int n = 0;
    if (q > 0) {
        out[n++] = (WorkloadGemm){"q_down", 1, Td, q, h};
        out[n++] = (WorkloadGemm){"q_up", 1, T, a * qk_dim(t) / tp, q};
    } else {
        out[n++] = (WorkloadGemm){"q_proj", 1, T, a * qk_dim(t) / tp, h};
    }
    out[n++] = (WorkloadGemm){"kv_down", 1, Td, kv + t->qk_rope_head_dim, h};
    out[n++] = (WorkloadGemm){"kv_up", 1, T, a * ((double)t->qk_nope_head_dim + t->v_head_dim) / tp, kv};
    out[n++] = (WorkloadGemm){"attn_score", b * a / tp, sq, s, qk_dim(t)};
    out[n++] = (WorkloadGemm){"attn_value", b * a / tp, sq, t->v_head_dim, s};
    out[n++] = (WorkloadGemm){"attn_out", 1, T, h, a * t->v_head_dim / tp};
    return n;
}

void workload_mla_elementwise(const WorkloadTransformer *t, double T, double e, double *rows, double *split)
{
    double a = t->heads, q = t->q_lora_rank, kv = t->kv_lora_rank;
    *rows = 2 * T * (q + kv) * e; /* the latent norms: read, write */
    /* Megatron's fused MLA rope kernels: q read and written; the kv up
     * projection's output and k_rope read, K and V written */
    double qkv = T * a * qk_dim(t) * 2 + T * a * ((double)t->qk_nope_head_dim + t->v_head_dim) +
                 T * t->qk_rope_head_dim + T * a * (qk_dim(t) + t->v_head_dim);
    *split = qkv * e;
}

void workload_mla_saved(const WorkloadTransformer *t, double T, double e, double li, double ab, bool fused,
                        bool recompute_up, bool orig, double *rows, double *split)
{
    double a = t->heads, q = t->q_lora_rank, kv = t->kv_lora_rank;
    /* each latent norm's input and its output, the up projection's input */
    *rows = T * (q + kv) * (e + li);
    /* the core's Q, K, V (not under "mla_up_proj" recomputation: the up
     * projections' outputs are discarded and rebuilt) and O (linear_proj's
     * input: the fused kernel keeps it; linear_proj an FP8 copy under
     * delayed scaling, under the other recipes Megatron sets it to save the
     * original: multi_latent_attention.py, set_save_original_input) */
    double ov = T * a * t->v_head_dim;
    double o = fused ? ov * ab + (li != e && !orig ? ov * li : 0) : ov * (orig ? e : li);
    *split = (recompute_up ? 0 : T * a * (2 * qk_dim(t) + t->v_head_dim) * ab) + o;
}

/* ---- the model-level pieces (workload.h) ---- */

double workload_attention_head_dim(const Workload *w)
{
    const WorkloadTransformer *t = workload_transformer(w);
    if (workload_mla_on(t))
        return (qk_dim(t) + t->v_head_dim) / 2;
    return workload_head_dim(t);
}

double workload_kv_width(const Workload *w)
{
    const WorkloadTransformer *t = workload_transformer(w);
    return workload_mla_on(t) ? workload_mla_kv_width(t) : 2 * workload_kv_dim(t);
}

/* Megatron-Core's MultiTokenPredictionLayer: enorm, hnorm, eh_proj (a
 * column-parallel 2h -> h linear), a transformer layer (index `layers`:
 * workload.c's MTP layer), final_layernorm; the embedding and output layer
 * are the model's. */
double workload_params_mtp(const Workload *w)
{
    const WorkloadTransformer *t = workload_transformer(w);
    if (!t || t->mtp_layers == 0)
        return 0;
    double h = t->hidden, norm = t->norm == WORKLOAD_NORM_LAYERNORM ? 2 * h : h;
    return t->mtp_layers * (workload_params_layer(w, t->layers) + 2 * h * h + 3 * norm);
}

int workload_mtp_gemms(const Workload *w, int micro_batch, const WorkloadParallel *par, WorkloadGemm *out)
{
    const WorkloadTransformer *t = workload_transformer(w);
    if (!t || t->mtp_layers == 0 || micro_batch < 1)
        return 0;
    double tp = par && par->tp > 1 ? par->tp : 1, cp = par && par->cp > 1 ? par->cp : 1;
    double T = (double)micro_batch * t->seq_len / cp;
    out[0] = (WorkloadGemm){"mtp_proj", 1, T, t->hidden / tp, 2.0 * t->hidden};
    out[1] = (WorkloadGemm){"mtp_logits", 1, T, (double)t->vocab / tp, t->hidden};
    return 2;
}
