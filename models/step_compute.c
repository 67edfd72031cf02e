/* Compute costs of the step: per-layer forward, backward and head times on
 * the accelerator (GEMMs plus memory-bound element-wise passes), the cost
 * of recomputation (full: the forward again; selective: the attention core)
 * and the step's model and hardware FLOPs.  All layers cost the same but
 * DeepSeek's dense_layers, and its MTP modules run with the head. */
#include "step_build.h"

#include <math.h>
#include <string.h>

/* Selective recomputation redoes the attention core: the GEMMs Q K^T and
 * P V.  Their names in the workload's layer. */
static bool is_attention_core(const WorkloadGemm *g)
{
    return !strcmp(g->name, "attn_score") || !strcmp(g->name, "attn_value");
}

/* FlashAttention-1 (flash-attn 1.x, its Triton port) against the preset's
 * FlashAttention-2/3 rate: "around 2x speedup compared to FlashAttention"
 * (Dao 2023, FlashAttention-2, abstract; 1.7-3.0x in its Figures 4-6),
 * unless the preset measured FA1 on its chip (Hopper: against FA3, more). */
#define STEP_FA1_SLOWDOWN 2.0

/* Transformer Engine's fp8_dot_product_attention runs cuDNN's fused kernel
 * with FP8 Q, K, V (and dO backward): at the preset's measured FP8 rate
 * where it has one for that direction, else at the 16-bit kernel's (no
 * measured figure, no guess).  Only the "fused" (cuDNN / FA3) generation:
 * TE's FP8 attention is cuDNN's. */
static AccelDtype fused_attention_dtype(const Ctx *c, bool backward)
{
    if (step_scenario_fp8_dpa(c->sc) && step_scenario_attention(c->sc) == STEP_ATTN_FUSED &&
        accel_has_fp8_attention(c->acc, backward))
        return ACCEL_FP8;
    return step_attention_dtype(c);
}

/* A sliding-window layer's fused kernel: each of the device's s / cp
 * queries meets on average w - w^2 / (2 s) keys (min(i, w) over positions
 * i; s / 2 when w >= s), one kernel whatever cp (the window is local: its
 * keys sit in the device's block or the one before). */
static double windowed_attention_time(const Ctx *c, double heads, bool backward)
{
    const WorkloadTransformer *tr = workload_transformer(c->w);
    double s = tr->seq_len, w = fmin(tr->sliding_window, s), keys = w - w * w / (2 * s);
    return accel_attention_time_keys(c->acc, fused_attention_dtype(c, backward), heads, s / c->p.cp, keys,
                                     workload_attention_head_dim(c->w), backward);
}

/* The fused attention kernel of one layer (both core products at once).
 * Context parallelism (ring attention): the device's s / cp queries meet
 * the s / cp keys of each of the cp blocks in turn, one kernel per block,
 * the causal work balanced over the ranks as Megatron's chunking does: cp
 * kernels of an s / cp block (causal: its half), 1 / cp of the sequence's
 * FLOPs at the efficiency of the shorter key loop. */
double step_fused_attention_time(const Ctx *c, int mb, bool backward)
{
    const WorkloadTransformer *tr = workload_transformer(c->w);
    double heads = (double)mb * tr->heads / c->p.tp, cp = c->p.cp;
    double t = cp * accel_attention_time(c->acc, fused_attention_dtype(c, backward), heads, tr->seq_len / cp,
                                         workload_attention_head_dim(c->w), tr->causal, backward);
    double share = workload_window_share(tr);
    if (share > 0)
        t = (1 - share) * t + share * windowed_attention_time(c, heads, backward);
    if (step_scenario_attention(c->sc) == STEP_ATTN_FUSED_V2)
        return t * accel_attention_v2_slowdown(c->acc, backward);
    if (step_scenario_attention(c->sc) != STEP_ATTN_FUSED_V1)
        return t;
    double s = accel_attention_v1_slowdown(c->acc, backward);
    return t * (s > 0 ? s : STEP_FA1_SLOWDOWN);
}

/* The linear layers' GEMMs run in the working precision (FP8 included);
 * the attention core and the logits in the activations' type. */
static AccelDtype gemm_dtype(const Ctx *c, const WorkloadGemm *g)
{
    return is_attention_core(g) || !strcmp(g->name, "logits") ? step_activation_dtype(c) : step_scenario_dtype(c->sc);
}

/* Whether a linear saves its 16-bit input instead of an FP8 copy and
 * quantizes it again in the backward (Megatron-Core's
 * set_save_original_input, TE >= 2.6): under a non-delayed recipe
 * linear_proj (attention keeps O) and the shared experts' fc1 (the router
 * keeps its input); the linears behind an output-discarding recomputation
 * ("layernorm": MLA's down projections; "moe_act": the experts' fc2). */
static bool saves_original(const Ctx *c, const WorkloadGemm *g)
{
    unsigned rm = c->wp.recompute_modules;
    if (!strcmp(g->name, "q_down") || !strcmp(g->name, "kv_down"))
        return rm & WORKLOAD_RC_LAYERNORM;
    if (!strcmp(g->name, "expert_down"))
        return rm & WORKLOAD_RC_MOE_ACT;
    if (!strcmp(g->name, "attn_out"))
        return c->wp.fp8_save_original;
    if (!strcmp(g->name, "shared_up"))
        return c->wp.fp8_save_original && !(rm & WORKLOAD_RC_SHARED);
    return false;
}

/* Transformer Engine's FP8 casts around one linear GEMM (m x k)(k x n),
 * memory bound, by recipe (fp8_recipe.h): forward, the input, with its
 * columnwise data for the weight gradient unless the linear saves the
 * 16-bit input (then quantized again in the backward), and the weight the
 * same way once per step (TE caches it across micro-batches); backward,
 * the output gradient, both orientations. */
static double fp8_cast_time(const Ctx *c, const WorkloadGemm *g, bool backward)
{
    if (step_scenario_dtype(c->sc) != ACCEL_FP8 || gemm_dtype(c, g) != ACCEL_FP8)
        return 0;
    Fp8Recipe r = step_scenario_fp8_recipe(c->sc);
    /* LoRA's frozen layer: no weight gradient, so no columnwise data of its
     * input or output gradient; an FP8 base's weight is not cast */
    bool frozen = c->wp.frozen_linears;
    bool any = accel_fp8_any_layout(c->acc), orig = !frozen && saves_original(c, g);
    double e = c->wp.act_bytes;
    double w = frozen && step_scenario_finetune(c->sc)->fp8_base ? 0 : g->k * g->n / (c->m > 0 ? c->m : 1);
    /* "fp8_casts": "fused": a compiler (XLA) puts an activation's or
     * gradient's scaling, amax and cast in the fusion that produces it (one
     * multi-output fusion writing FP8): no pass of its own; the weight, a
     * parameter, is cast on its own */
    double act = step_scenario_fp8_casts_fused(c->sc) ? 0 : 1;
    double bytes;
    if (backward)
        bytes = act * (fp8_cast_bytes(r, e, !frozen, any, false) * g->m * g->n +
                       (orig ? fp8_requant_bytes(r, e, any) * g->m * g->k : 0));
    else
        bytes = act * fp8_cast_bytes(r, e, !frozen && !orig, any, false) * g->m * g->k +
                fp8_cast_bytes(r, e, !frozen, any, true) * w;
    return accel_mem_time(c->acc, g->batch * bytes);
}

static double gemms_time(const Ctx *c, const WorkloadGemm *g, int n, bool backward)
{
    double t = 0;
    for (int i = 0; i < n; i++) {
        if (c->wp.fused_attention && is_attention_core(&g[i]))
            continue; /* one fused kernel: step_fused_attention_time */
        AccelDtype dt = gemm_dtype(c, &g[i]);
        t += fp8_cast_time(c, &g[i], backward);
        if (backward) {
            WorkloadGemm b[2];
            workload_gemm_backward(&g[i], b);
            /* LoRA: a frozen layer (not the attention core) has no wgrad */
            int nb = c->wp.frozen_linears && !is_attention_core(&g[i]) ? 1 : 2;
            for (int k = 0; k < nb; k++)
                t += accel_bgemm_time(c->acc, dt, b[k].batch, b[k].m, b[k].n, b[k].k);
        } else {
            t += accel_bgemm_time(c->acc, dt, g[i].batch, g[i].m, g[i].n, g[i].k);
        }
    }
    return t;
}

/* The GEMMs of a layer (with their FP8 casts) whose names are among
 * `names` (NULL-terminated), forward or `backward`, and the elements
 * their inputs hold. */
static double named_gemms_time(const Ctx *c, const WorkloadGemm *g, int ng, const char *const *names, bool backward,
                               double *elems)
{
    double t = 0;
    if (elems)
        *elems = 0;
    for (int i = 0; i < ng; i++)
        for (const char *const *n = names; *n; n++)
            if (!strcmp(g[i].name, *n)) {
                t += gemms_time(c, &g[i], 1, backward);
                if (elems)
                    *elems += g[i].batch * g[i].m * g[i].k;
            }
    return t;
}

/* The GEMMs each tensor-parallel collective of a layer sits against: the
 * block's input all-gather feeds the first, the output reduce-scatter
 * follows the last.  tp_comm_overlap hides a collective behind its own
 * GEMM only, not behind attention or the norms: Megatron-Core's
 * userbuffers (Transformer Engine's ub_overlap_ag / ub_overlap_rs) pair
 * the all-gather with qkv and fc1 and the reduce-scatter with proj and
 * fc2, and PyTorch's async tensor parallelism fuses the same pairs
 * (fused_all_gather_matmul, fused_matmul_reduce_scatter).  MLA gathers
 * the compressed latents for its up projections: its down projections
 * run on the device's own tokens, before the all-gather. */
static void tp_partner_times(const Ctx *c, const WorkloadGemm *g, int ng, double out[2][4])
{
    static const char *const sets[4][5] = {{"qkv", "q_up", "q_proj", "kv_up", NULL},
                                           {"attn_out", NULL},
                                           {"mlp_up", "expert_up", "shared_up", NULL},
                                           {"mlp_down", "expert_down", "shared_down", NULL}};
    for (int k = 0; k < 4; k++)
        for (int pass = 0; pass < 2; pass++)
            out[pass][k] = named_gemms_time(c, g, ng, sets[k], pass == 1, NULL);
}

/* Megatron's "mla_up_proj" recomputation: the q and kv up projections'
 * forward GEMMs and the rope kernels building Q, K, V again. */
static double mla_up_time(const Ctx *c, const WorkloadGemm *g, int ng, int mb)
{
    static const char *const up[] = {"q_up", "kv_up", "q_proj", NULL};
    double t = named_gemms_time(c, g, ng, up, false, NULL);
    const WorkloadTransformer *tr = workload_transformer(c->w);
    double T = (double)mb * tr->seq_len / c->p.cp, a = (double)tr->heads / c->p.tp;
    double qk = (double)tr->qk_nope_head_dim + tr->qk_rope_head_dim, v = tr->v_head_dim;
    /* as workload_mla.c's rope kernels: q read and written, kv read, K and V written */
    double bytes = T * a * (2 * qk + (tr->qk_nope_head_dim + v) + qk + v) * c->wp.act_bytes;
    return t + accel_mem_time(c->acc, bytes);
}

/* recompute_modules' forward pieces of one layer (`moe`: a MoE layer),
 * run again before its backward (Megatron-Core, transformer_layer.py,
 * moe_layer.py, experts.py): the norms' outputs ("layernorm": read and
 * write a row each), the routed experts' activation ("moe_act": SwiGLU
 * reads two, writes one), a checkpointed dense MLP ("mlp": its GEMMs,
 * activation and fused norm), MoE layer ("moe": router, experts, shared
 * experts, the activations, the permutations; its all-to-alls are
 * t_ep_recompute) or shared experts ("shared_experts").  The FP8
 * re-quantization of the discarded inputs is fp8_cast_time's. */
static double modules_time(const Ctx *c, const WorkloadGemm *g, int ng, int mb, bool moe)
{
    unsigned rm = c->wp.recompute_modules;
    const WorkloadTransformer *tr = workload_transformer(c->w);
    double e = c->wp.act_bytes, act = tr->gated_mlp ? 3 : 2, sp = c->wp.sequence_parallel ? c->p.tp : 1;
    double rows = (double)mb * tr->seq_len / c->p.cp * tr->hidden / sp, t = 0, n;
    if (rm & WORKLOAD_RC_MLA_UP)
        t += mla_up_time(c, g, ng, mb);
    if ((rm & WORKLOAD_RC_LAYERNORM) && (moe || tr->kv_lora_rank > 0)) /* MLA's input norm, the pre-MLP norm */
        t += accel_mem_time(c->acc, 2 * e * rows * ((tr->kv_lora_rank > 0) + moe));
    if (!moe && (rm & WORKLOAD_RC_MLP)) {
        static const char *const mlp[] = {"mlp_down", NULL}, *const up[] = {"mlp_up", NULL};
        t += named_gemms_time(c, g, ng, mlp, false, &n) + named_gemms_time(c, g, ng, up, false, NULL);
        t += accel_mem_time(c->acc, act * e * n + 2 * e * rows);
    }
    if (!moe)
        return t;
    if (rm & WORKLOAD_RC_MOE) {
        static const char *const mlp[] = {"router", "expert_up", "shared_up", NULL},
                                 *const down[] = {"expert_down", "shared_down", NULL};
        double perm = workload_layer_permute_bytes(c->w, tr->layers - 1, mb, &c->wp, false); /* a MoE layer's */
        t += named_gemms_time(c, g, ng, mlp, false, NULL) + named_gemms_time(c, g, ng, down, false, &n);
        return t + accel_mem_time(c->acc, act * e * n + perm); /* activations, the token copies */
    }
    for (int i = 0; i < ng && (rm & WORKLOAD_RC_MOE_ACT); i++)
        if (!strcmp(g[i].name, "expert_down")) /* its input is the activation's output */
            t += accel_mem_time(c->acc, act * e * g[i].batch * g[i].m * g[i].k);
    if (rm & WORKLOAD_RC_SHARED) {
        static const char *const up[] = {"shared_up", NULL}, *const down[] = {"shared_down", NULL};
        t += named_gemms_time(c, g, ng, up, false, NULL) + named_gemms_time(c, g, ng, down, false, &n);
        t += accel_mem_time(c->acc, act * e * n);
    }
    return t;
}

static double recompute_core_time(const Ctx *c, const WorkloadGemm *g, int ng, int mb, double fwd);

/* What recomputing one layer's activations costs before its backward
 * (`fwd`: the layer's forward, full recomputation's). */
static double recompute_time(const Ctx *c, const WorkloadGemm *g, int ng, int mb, bool moe, double fwd)
{
    return modules_time(c, g, ng, mb, moe) + recompute_core_time(c, g, ng, mb, fwd);
}

/* Recompute OP: the block's mm's the policy did not keep (workload_sac.c),
 * each its share of the fused GEMM (so at its own shape's efficiency), and
 * every element-wise op of the forward: the norms and the activation feed
 * the recomputed mm's and the backward (a dense block: layer 0's). */
static double op_sac_time(const Ctx *c, const WorkloadGemm *g, int ng, int mb)
{
    const WorkloadTransformer *tr = workload_transformer(c->w);
    double xf, xb; /* the rotary and eager passes, repeated */
    workload_layer_pass_bytes(c->w, 0, mb, &c->wp, &xf, &xb);
    double t = accel_mem_time(c->acc, workload_layer_elementwise_bytes(c->w, 0, mb, &c->wp) + xf);
    for (int i = 0; i < ng; i++) {
        WorkloadGemm piece = g[i];
        piece.n *= workload_op_sac_share(tr, g[i].name);
        if (piece.n > 0)
            t += gemms_time(c, &piece, 1, false);
    }
    return t;
}

/* Full, selective (attention core) or per-op recomputation's cost. */
static double recompute_core_time(const Ctx *c, const WorkloadGemm *g, int ng, int mb, double fwd)
{
    const StepPlan *p = &c->p;
    if (p->recompute == WORKLOAD_RECOMPUTE_FULL) { /* less the GEMMs (and the kernel) whose outputs were kept */
        for (int i = 0; i < ng && p->recompute_keep; i++)
            if (workload_gemm_linear(&g[i]) & p->recompute_keep)
                fwd -= gemms_time(c, &g[i], 1, false);
        if (p->recompute_keep & WORKLOAD_KEEP_CORE_ATTN) /* fused attention (scenario.c) */
            fwd -= step_fused_attention_time(c, mb, false);
        return fwd;
    }
    if (p->recompute == WORKLOAD_RECOMPUTE_OP)
        return op_sac_time(c, g, ng, mb);
    if (p->recompute != WORKLOAD_RECOMPUTE_SELECTIVE)
        return 0;
    if (c->wp.fused_attention)
        return step_fused_attention_time(c, mb, false);
    /* the attention core: Q K^T, softmax + dropout, P V */
    const WorkloadTransformer *tr = workload_transformer(c->w);
    double t = 0;
    for (int i = 0; i < ng; i++)
        if (is_attention_core(&g[i]))
            t += gemms_time(c, &g[i], 1, false);
    double e = c->wp.act_bytes, heads = (double)tr->heads / p->tp, s = tr->seq_len;
    t += accel_mem_time(c->acc, (2 * e + (2 * e + 1)) * mb * heads * s * s / p->cp); /* cp: the device's queries */
    return t;
}

/* LoRA's adapters of one layer, forward (*fwd) and backward (*bwd): their
 * GEMMs in the activations' type (NeMo's adapters are not FP8 layers), all
 * three passes (they are trained); the dropout on each adapter's input
 * (read, write and a 1-byte mask, each way) and the add of B's scaled
 * output to the base layer's (two reads and a write). */
static void lora_time(const Ctx *c, int mb, double *fwd, double *bwd)
{
    WorkloadGemm g[8];
    int n = workload_lora_gemms(c->w, mb, &c->wp, g);
    AccelDtype dt = step_activation_dtype(c);
    double e = c->wp.act_bytes, ew = 0;
    *fwd = *bwd = 0;
    for (int i = 0; i < n; i++) {
        WorkloadGemm b[2];
        workload_gemm_backward(&g[i], b);
        *fwd += accel_bgemm_time(c->acc, dt, g[i].batch, g[i].m, g[i].n, g[i].k);
        for (int k = 0; k < 2; k++)
            *bwd += accel_bgemm_time(c->acc, dt, b[k].batch, b[k].m, b[k].n, b[k].k);
        if (!strcmp(g[i].name, "lora_a") && c->wp.lora_dropout > 0)
            ew += g[i].m * g[i].k * (2 * e + 1);
        if (!strcmp(g[i].name, "lora_b"))
            *fwd += accel_mem_time(c->acc, 3 * g[i].m * g[i].n * e);
    }
    *fwd += accel_mem_time(c->acc, ew);
    *bwd += accel_mem_time(c->acc, ew);
}

/* Layer `layer`'s forward and backward compute on a micro-batch of mb. */
static void layer_time(const Ctx *c, int layer, int mb, double *fwd, double *bwd)
{
    WorkloadGemm g[WORKLOAD_MAX_GEMMS];
    int ng = workload_layer_gemms(c->w, layer, mb, &c->wp, g);
    double ew = workload_layer_elementwise_bytes(c->w, layer, mb, &c->wp);
    double perm = workload_layer_permute_bytes(c->w, layer, mb, &c->wp, false),
           perm_bwd = workload_layer_permute_bytes(c->w, layer, mb, &c->wp, true);
    double xf, xb; /* the rotary and eager passes */
    workload_layer_pass_bytes(c->w, layer, mb, &c->wp, &xf, &xb);
    *fwd = gemms_time(c, g, ng, false) + accel_mem_time(c->acc, ew + xf + perm);
    *bwd = gemms_time(c, g, ng, true) + accel_mem_time(c->acc, 2 * ew + xb + perm_bwd);
    if (c->wp.fused_attention) {
        *fwd += step_fused_attention_time(c, mb, false);
        *bwd += step_fused_attention_time(c, mb, true);
    }
}

/* Megatron-Core's multi-token prediction modules after the head, on the
 * last stage: per module its MoE layer and all-to-alls, the 2h -> h
 * projection, three norms (read, write), and its own logits and loss
 * (LOSS_F and LOSS_B: the loss's bytes forward and backward). */
static void mtp_time(const Ctx *c, int mb, double loss_f, double loss_b, double *fwd, double *bwd)
{
    const WorkloadTransformer *tr = workload_transformer(c->w);
    *fwd = *bwd = 0;
    if (tr->mtp_layers == 0)
        return;
    WorkloadGemm g[4];
    int ng = workload_mtp_gemms(c->w, mb, &c->wp, g);
    double T = (double)mb * tr->seq_len / c->p.cp, norms = 3 * 2 * T * tr->hidden * c->wp.act_bytes;
    layer_time(c, tr->layers, mb, fwd, bwd);
    *fwd += c->t_ep + gemms_time(c, g, ng, false) + accel_mem_time(c->acc, norms + loss_f);
    *bwd += c->t_ep + gemms_time(c, g, ng, true) + accel_mem_time(c->acc, 2 * norms + loss_b);
    *fwd *= tr->mtp_layers;
    *bwd *= tr->mtp_layers;
}

void compute_costs(Ctx *c)
{
    const WorkloadTransformer *tr = workload_transformer(c->w);
    if (!tr) { /* a CNN (step_cnn.c) */
        cnn_costs(c);
        return;
    }
    WorkloadGemm g[WORKLOAD_MAX_GEMMS];
    int mb = step_scenario_micro_batch(c->sc), L = tr->layers;
    int ng = workload_layer_gemms(c->w, L - 1, mb, &c->wp, g); /* a MoE layer where the first are dense */
    layer_time(c, L - 1, mb, &c->t_fwd, &c->t_bwd);
    tp_partner_times(c, g, ng, c->tp_gemm[0]);
    c->t_recompute = recompute_time(c, g, ng, mb, workload_layer_is_moe(c->w, L - 1), c->t_fwd);
    if (c->dense_layers) {
        WorkloadGemm gd[WORKLOAD_MAX_GEMMS];
        int nd = workload_layer_gemms(c->w, 0, mb, &c->wp, gd);
        layer_time(c, 0, mb, &c->t_fwd_dense, &c->t_bwd_dense);
        tp_partner_times(c, gd, nd, c->tp_gemm[1]);
        c->t_recompute_dense = recompute_time(c, gd, nd, mb, false, c->t_fwd_dense);
    }
    double lf, lb;
    lora_time(c, mb, &lf, &lb);
    c->t_fwd += lf;
    c->t_bwd += lb;
    c->t_recompute += c->p.recompute == WORKLOAD_RECOMPUTE_FULL ? lf : 0;
    int nh = workload_head_gemms(c->w, mb, &c->wp, g);
    double logits = (double)mb * tr->seq_len / c->p.cp * tr->vocab / c->p.tp, per_f, per_b;
    step_loss_traffic(c, &per_f, &per_b);
    c->t_head_fwd = gemms_time(c, g, nh, false) + accel_mem_time(c->acc, logits * per_f);
    c->t_head_bwd = gemms_time(c, g, nh, true) + accel_mem_time(c->acc, logits * per_b);
    double mf, mbw;
    mtp_time(c, mb, logits * per_f, logits * per_b, &mf, &mbw);
    c->t_head_fwd += mf;
    c->t_head_bwd += mbw;
}

/* What the layers' attention core counts beyond a sliding window's keys:
 * a windowed layer's queries meet min(w, s) keys, not s (without this, a
 * window far below seq_len took MFU past 100 %). */
static double window_excess_flops(const Ctx *c, const WorkloadParallel *one)
{
    const WorkloadTransformer *tr = workload_transformer(c->w);
    double share = workload_window_share(tr), core = 0;
    if (share <= 0)
        return 0;
    WorkloadGemm gg[WORKLOAD_MAX_GEMMS];
    int ng = workload_layer_gemms(c->w, 0, 1, one, gg);
    for (int i = 0; i < ng; i++)
        core += is_attention_core(&gg[i]) ? workload_gemm_flops(&gg[i]) : 0;
    return share * tr->layers * core * (1 - fmin(tr->sliding_window, tr->seq_len) / tr->seq_len);
}

/* The GEMM FLOPs recompute_modules redo in layer l for one sample (`one`:
 * tp 1): MLA's up projections, a dense MLP ("mlp"), a MoE layer's MLP
 * ("moe") or its shared experts ("shared_experts"). */
static double modules_flops(const Ctx *c, int l, const WorkloadParallel *one)
{
    unsigned rm = c->wp.recompute_modules;
    bool moe = workload_layer_is_moe(c->w, l);
    WorkloadGemm gg[WORKLOAD_MAX_GEMMS];
    int ng = workload_layer_gemms(c->w, l, 1, one, gg);
    double f = 0;
    for (int i = 0; i < ng; i++) {
        const char *n = gg[i].name;
        bool up = !strcmp(n, "q_up") || !strcmp(n, "kv_up") || !strcmp(n, "q_proj");
        bool mlp = !strcmp(n, "mlp_up") || !strcmp(n, "mlp_down");
        bool shared = !strcmp(n, "shared_up") || !strcmp(n, "shared_down");
        bool experts = shared || !strcmp(n, "router") || !strcmp(n, "expert_up") || !strcmp(n, "expert_down");
        if ((up && (rm & WORKLOAD_RC_MLA_UP)) || (mlp && !moe && (rm & WORKLOAD_RC_MLP)) ||
            (experts && (rm & WORKLOAD_RC_MOE)) || (shared && !(rm & WORKLOAD_RC_MOE) && (rm & WORKLOAD_RC_SHARED)))
            f += workload_gemm_flops(&gg[i]);
    }
    return f;
}

/* Model FLOPs: forward and backward (3 x forward) of the global batch, as
 * if on one device (no tp); hardware FLOPs add what recomputation redoes. */
void compute_flops(const Ctx *c, double *model_flops, double *hw_flops)
{
    const WorkloadTransformer *tr = workload_transformer(c->w);
    if (!tr) {
        cnn_flops(c, model_flops, hw_flops);
        return;
    }
    WorkloadParallel one = c->wp;
    one.tp = 1;
    one.sequence_parallel = false;
    one.ep = 1;
    one.etp = 0;
    one.cp = 1;
    /* model FLOPs count no expert padding (hardware FLOPs do) and no token
     * dropped past a capacity below 1 (nothing computes it) */
    one.capacity_factor = c->wp.capacity_factor < 1 ? c->wp.capacity_factor : 1;
    WorkloadParallel padded = one;
    padded.capacity_factor = c->wp.capacity_factor;
    double B = step_scenario_global_batch(c->sc);
    double layer_f = 0;
    for (int l = 0; l < tr->layers; l++)
        layer_f += workload_layer_forward_flops(c->w, l, 1, &one);
    double excess = window_excess_flops(c, &one);
    layer_f -= excess;
    double head_f = workload_head_forward_flops(c->w, 1, &one);
    if (tr->mtp_layers > 0) { /* the MTP modules: a layer, the projection and logits each */
        WorkloadGemm mg[4];
        int nm = workload_mtp_gemms(c->w, 1, &one, mg);
        for (int i = 0; i < nm; i++)
            head_f += tr->mtp_layers * workload_gemm_flops(&mg[i]);
        head_f += tr->mtp_layers * workload_layer_forward_flops(c->w, tr->layers, 1, &one);
    }
    *model_flops = 3 * B * (layer_f + head_f);
    if (c->wp.frozen_linears) { /* LoRA: the frozen GEMMs' wgrad is not run; the adapters' passes are */
        WorkloadGemm gg[WORKLOAD_MAX_GEMMS];
        int ng = workload_layer_gemms(c->w, 0, 1, &one, gg);
        double frozen = head_f, lora = 0;
        for (int i = 0; i < ng; i++)
            frozen += is_attention_core(&gg[i]) ? 0 : tr->layers * workload_gemm_flops(&gg[i]);
        ng = workload_lora_gemms(c->w, 1, &one, gg);
        for (int i = 0; i < ng; i++)
            lora += tr->layers * workload_gemm_flops(&gg[i]);
        *model_flops += B * (3 * lora - frozen);
    }
    *hw_flops = *model_flops;
    for (int l = 0; l < tr->layers && padded.capacity_factor != 1; l++)
        *hw_flops += 3 * B * (workload_layer_forward_flops(c->w, l, 1, &padded) - workload_layer_forward_flops(c->w, l, 1, &one));
    for (int l = 0; l < tr->layers && (c->wp.recompute_modules & ~(unsigned)WORKLOAD_RC_LAYERNORM); l++)
        *hw_flops += B * modules_flops(c, l, &padded);
    /* what each recompute mode runs again of a layer's GEMMs (layer 0's) */
    WorkloadGemm gg[WORKLOAD_MAX_GEMMS];
    int ng = workload_layer_gemms(c->w, 0, 1, &one, gg);
    if (c->p.recompute == WORKLOAD_RECOMPUTE_FULL) {
        int rec = 0; /* the layers that recompute ("recompute_layers") */
        for (int s = 0; s < c->p.pp; s++)
            for (int l = 0; l < step_stage_layers(c, s); l++)
                rec += step_layer_recomputed(c, s, l);
        double kept = 0; /* "recompute_keep": a dense layer's kept GEMMs (dense blocks only) */
        for (int i = 0; i < ng; i++)
            kept += (workload_gemm_linear(&gg[i]) & c->p.recompute_keep) ||
                            (is_attention_core(&gg[i]) && (c->p.recompute_keep & WORKLOAD_KEEP_CORE_ATTN))
                        ? workload_gemm_flops(&gg[i])
                        : 0;
        *hw_flops += B * (layer_f - tr->layers * kept) * rec / tr->layers;
    } else if (c->p.recompute == WORKLOAD_RECOMPUTE_SELECTIVE) {
        for (int i = 0; i < ng; i++)
            if (is_attention_core(&gg[i]))
                *hw_flops += B * tr->layers * workload_gemm_flops(&gg[i]);
        *hw_flops -= B * excess;
    } else if (c->p.recompute == WORKLOAD_RECOMPUTE_OP) {
        for (int i = 0; i < ng; i++)
            *hw_flops += B * tr->layers * workload_op_sac_share(tr, gg[i].name) * workload_gemm_flops(&gg[i]);
    }
}

/* The transient peak on stage s on top of the steady state (memory.h): the
 * larger of
 *  - the last stage's loss at its peak (step_loss_bytes_per_logit) for the
 *    device's tokens of one micro-batch (seq_len / cp of each sequence)
 *    and its 1 / tp of the vocabulary, at the end of the forward, with the
 *    output layer's saved input (the final norm's output: 1 / tp of the
 *    tokens under Megatron's sequence parallelism, all of them where the
 *    linear keeps its gathered input or without sequence parallelism), and
 *  - in the backward, what the loss keeps, plus with recomputation the
 *    activations of the layer being recomputed (one micro-batch, as if it
 *    were not recomputed) less what is kept, plus under ZeRO-3 the
 *    unsharded gradient of the layer being reduce-scattered (the gathered
 *    parameters are already "buffers"), plus what PyTorch's context-parallel
 *    ring holds while a layer's attention runs (cp_working_set). */
double compute_working_set(const Ctx *c, int s)
{
    const WorkloadTransformer *tr = workload_transformer(c->w);
    int mb = step_scenario_micro_batch(c->sc);
    double loss = 0, kept = 0, ws = 0;
    if (s == c->p.pp - 1 && tr) {
        double logits = step_device_tokens(c) * tr->vocab / c->p.tp, per_kept;
        loss = logits * step_loss_bytes_per_logit(c, &per_kept);
        kept = logits * per_kept;
        bool sharded = c->wp.sequence_parallel && !c->wp.sp_gathered_inputs;
        loss += step_device_tokens(c) * tr->hidden * c->wp.act_bytes / (sharded ? c->p.tp : 1);
    }
    if ((c->p.recompute != WORKLOAD_RECOMPUTE_NONE || c->wp.recompute_modules) && step_stage_layers(c, s) > 0) {
        WorkloadParallel all = c->wp;
        all.recompute = WORKLOAD_RECOMPUTE_NONE;
        all.recompute_modules = 0;
        /* the stage's first and last layer: a dense and a MoE one where it has both */
        for (int l = c->stage_l0[s]; l < c->stage_l0[s + 1]; l += MAX(1, step_stage_layers(c, s) - 1))
            ws = fmax(ws, workload_layer_activation_bytes(c->w, l, mb, &all) -
                              workload_layer_activation_bytes(c->w, l, mb, &c->wp));
    }
    if (c->p.zero_stage == 3 && c->p.dp > 1)
        ws += c->layer_params * c->grad_bytes_per_param;
    ws += cp_working_set(c);
    return fmax(loss, kept + ws);
}
