/* Tensor parallelism (Megatron-LM): the tensor-parallel group of a stage's
 * device and its collectives, 2 per layer forward and 2 backward (the f and
 * g operators around attention and the MLP).  Sequence parallelism turns
 * each all-reduce into a reduce-scatter plus an all-gather of the same
 * full-size buffer.  Full recomputation repeats the forward's collectives.
 * One task per layer and pass stands for its collectives, tagged with them
 * for the report's counts.
 * The GEMMs' split by tp is the workload module's (WorkloadParallel.tp). */
#include "step_build.h"

#include <math.h>
#include <string.h>

/* The blocks of a layer whose input and output cross the tp group: attention
 * and the MLP; a mixture of experts folded over tp x dp (expert_tp below tp)
 * dispatches each rank's own sequence shard to its experts and combines
 * them back into it, so only attention's pair remains (Megatron-Core's
 * MoE parallel folding: no tensor-parallel communication inside experts
 * with expert_tensor_parallel_size 1). */
static int tp_blocks(const Ctx *c)
{
    const WorkloadTransformer *tr = workload_transformer(c->w);
    return tr && tr->experts > 0 && moe_etp(c) < c->p.tp ? 1 : 2;
}

/* Whether block b's (0 attention, 1 the MLP) all-gather carries FP8 data:
 * in FP8 Transformer Engine's linears (layernorm_linear.py, linear.py) and
 * torchao's Float8ColwiseParallel gather their input after the cast, and
 * gather the output gradient so in the backward; MLA gathers its
 * compressed latents and a MoE block's dispatcher the hidden states in 16
 * bits first (Megatron-Core gather_from_sequence_parallel_region).  A MoE
 * model's dense layers take its MoE layers' collectives. */
/* Whether block b is a MoE block's, whose dispatcher gathers and scatters
 * the hidden states itself (gather_from_sequence_parallel_region), in line
 * and before any FP8 cast. */
static bool dispatcher_block(const Ctx *c, int b) { return b == 1 && workload_transformer(c->w)->experts > 0; }

static bool ag_quantized(const Ctx *c, int b)
{
    if (step_scenario_dtype(c->sc) != ACCEL_FP8)
        return false;
    return b == 0 ? workload_transformer(c->w)->kv_lora_rank == 0 /* not MLA */ : !dispatcher_block(c, b);
}

/* Block b's all-gather time (tp_use[2]: the MLP's, where it differs). */
static double ag_time(const Ctx *c, int b)
{
    return step_coll_time(c, b == 1 && c->tp_use[2] >= 0 ? c->tp_use[2] : c->tp_use[0]);
}

/* A block's collectives, all-gather and reduce-scatter (or all-reduce). */
static double block_time(const Ctx *c, int b) { return ag_time(c, b) + step_coll_time(c, c->tp_use[1]); }

/* The group of stage 0, replica 0 (every tp group looks the same), and the
 * per-layer collective times. */
bool tp_init(Ctx *c, GError **err)
{
    const StepPlan *p = &c->p;
    if (p->tp == 1)
        return true;
    int *ids = g_new(int, p->tp);
    for (int t = 0; t < p->tp; t++)
        ids[t] = step_rank_of(c, 0, 0, t);
    c->tp_group = step_group_new(c, ids, p->tp, err);
    g_free(ids);
    if (!c->tp_group)
        return false;
    step_siblings_strided(c, c->tp_group, 0, 1, p->tp);
    const WorkloadTransformer *tr = workload_transformer(c->w);
    double elems = step_device_tokens(c) * tr->hidden;
    double act = elems * c->wp.act_bytes;
    if (p->sequence_parallel) {
        /* the reduce-scatters stay 16-bit */
        double q = ag_quantized(c, 0) || ag_quantized(c, 1) ? elems * fp8_gathered_bytes(step_scenario_fp8_recipe(c->sc)) : act;
        c->tp_use[0] = step_coll(c, "tp_allgather", "tp", c->tp_group, COLL_ALLGATHER, ag_quantized(c, 0) ? q : act);
        c->tp_use[1] = step_coll(c, "tp_reducescatter", "tp", c->tp_group, COLL_REDUCESCATTER, act);
        if (tp_blocks(c) == 2 && ag_quantized(c, 1) != ag_quantized(c, 0))
            c->tp_use[2] = step_coll(c, "tp_allgather", "tp", c->tp_group, COLL_ALLGATHER, ag_quantized(c, 1) ? q : act);
    } else {
        c->tp_use[0] = step_coll(c, "tp_allreduce", "tp", c->tp_group, COLL_ALLREDUCE, act);
    }
    c->t_tp_fwd = c->t_tp_bwd = block_time(c, 0) + (tp_blocks(c) == 2 ? block_time(c, 1) : 0);
    /* full recomputation repeats the forward's collectives (layer_tasks
     * gives its pass the same tp task) */
    if (p->recompute == WORKLOAD_RECOMPUTE_FULL)
        c->t_tp_recompute = c->t_tp_recompute_dense = c->t_tp_fwd;
    /* a checkpointed MLP ("mlp": a dense layer's; "moe": a MoE layer's)
     * runs its block's collectives again, where the layer has two */
    double block = tp_blocks(c) == 2 ? block_time(c, 1) : 0;
    bool moe = tr->experts > 0;
    if (p->recompute_modules & WORKLOAD_RC_MLP)
        *(moe ? &c->t_tp_recompute_dense : &c->t_tp_recompute) = block;
    if (moe && (p->recompute_modules & WORKLOAD_RC_MOE))
        c->t_tp_recompute = block;
    return true;
}

/* Whether the backward gathers a column-parallel linear's input again
 * (async_bwd_pass): Megatron's sequence parallelism, no userbuffers. */
static bool regathers(const Ctx *c)
{
    return c->tp_group && c->p.sequence_parallel && !c->p.tp_dtensor && !c->p.tp_comm_overlap;
}

/* The layer's tensor-parallel collectives on stage s's tp stream after its
 * compute `after`; returns the task, or `after` when there are none. */
int tp_after(Build *b, int s, const char *name, double seconds, int after)
{
    if (seconds <= 0)
        return after;
    int t = step_task(b->g, name, b->res[s].tp, seconds, "tp");
    step_dep(b->g, after, t);
    const Ctx *c = b->c;
    int n = tp_blocks(c), split = c->tp_use[2] >= 0; /* the MLP's all-gather apart */
    /* the backward gathers qkv's and fc1's inputs again (async_bwd_pass; a
     * MoE block's dispatcher does not) */
    bool again = regathers(c) && !strcmp(name, "tp_backward");
    bool mlp_again = again && n == 2 && !dispatcher_block(c, 1);
    step_coll_tag(b, t, c->tp_use[0], 1 + again + (n == 2 && !split) * (1 + mlp_again), s);
    step_coll_tag(b, t, c->tp_use[1], n, s);
    if (split)
        step_coll_tag(b, t, c->tp_use[2], 1 + mlp_again, s);
    return t;
}

/* GEMMs that ran beside `covered` seconds of the layer's tp collectives
 * lose those collectives' SM share of them (step_interfere.c), unless
 * interference is turned off. */
static void slow_gemms(const Ctx *c, double covered, double *t_comp)
{
    if (!c->p.comm_interference)
        return;
    double f, f1, h;
    interfere_shares(c, c->tp_use[0], &f, &h);
    interfere_shares(c, c->tp_use[1], &f1, &h);
    *t_comp += covered * (f > f1 ? f : f1);
}

/* One collective's exposed time under tp_comm_overlap: Megatron-Core's
 * userbuffers split it in tp chunks sent ring-wise while its GEMM works
 * on the chunk before, so one chunk is exposed, and what the GEMM
 * `gemm` cannot cover of the rest.  Adds the covered time to *covered. */
static double overlap_one(const Ctx *c, double t, double gemm, double *covered)
{
    double hidden = t - t / c->p.tp, cov = hidden < gemm ? hidden : gemm;
    *covered += cov;
    return t - cov;
}

/* One pass's exposed time: each block's all-gather hides behind the GEMM
 * it feeds and its reduce-scatter behind the GEMM before it (the
 * backward runs them in reverse: the output's gradient is gathered for
 * attn_out's or fc2's backward, the input's scattered after qkv's or
 * fc1's); `partner` is tp_gemm's.  A pass of one block's collectives is
 * the last block's (a MoE layer's attention alone, a recomputed MLP).
 * The hidden part slows its GEMMs by the collective's SM share
 * (step_interfere.c) unless turned off. */
static double overlap_pass(Ctx *c, double t_tp, const double partner[2][4], bool bwd, double *t_comp)
{
    if (t_tp <= 0)
        return t_tp;
    double rs = step_coll_time(c, c->tp_use[1]);
    int last = tp_blocks(c) - 1, first = t_tp < 1.5 * block_time(c, last) ? last : 0;
    double exposed = 0, covered = 0;
    for (int b = first; b <= last; b++) {
        exposed += overlap_one(c, ag_time(c, b), partner[bwd][2 * b + bwd], &covered);
        exposed += overlap_one(c, rs, partner[bwd][2 * b + !bwd], &covered);
    }
    slow_gemms(c, covered, t_comp);
    return exposed;
}

/* Megatron-Core's and Transformer Engine's backward under sequence
 * parallelism without tp_comm_overlap (Megatron-LM tensor_parallel/
 * layers.py LinearWithGradAccumulationAndAsyncCommunication.backward, TE's
 * _LayerNormLinear / _Linear backward): a block's output gradient is
 * all-gathered before attn_out's or fc2's backward (exposed); qkv's or
 * fc1's input, saved as its sequence shard, is gathered again behind their
 * data-gradient GEMM and their input gradient reduce-scattered behind the
 * weight-gradient GEMM, half of their backward GEMM time each.  A MoE
 * block's dispatcher gathers and scatters in line.  The hidden part slows
 * the GEMMs by its SM share, as overlap_pass's. */
static double async_bwd_pass(Ctx *c, const double partner[2][4], double *t_comp)
{
    double rs = step_coll_time(c, c->tp_use[1]), exposed = 0, covered = 0;
    for (int b = 0; b < tp_blocks(c); b++) {
        double ag = ag_time(c, b), half = partner[1][2 * b] / 2;
        if (dispatcher_block(c, b)) {
            exposed += ag + rs;
            continue;
        }
        double again = fmin(ag, half), scatter = fmin(rs, half);
        exposed += ag + (ag - again) + (rs - scatter);
        covered += again + scatter;
    }
    slow_gemms(c, covered, t_comp);
    return exposed;
}

void tp_overlap_costs(Ctx *c)
{
    if (c->l_fwd || !c->tp_group)
        return;
    if (regathers(c)) {
        if (c->dense_layers) /* the same collectives behind a dense layer's GEMMs */
            async_bwd_pass(c, c->tp_gemm[1], &c->t_bwd_dense);
        c->t_tp_bwd = async_bwd_pass(c, c->tp_gemm[0], &c->t_bwd);
        return;
    }
    if (!c->p.tp_comm_overlap)
        return;
    if (c->dense_layers) { /* the same collectives behind a dense layer's GEMMs */
        overlap_pass(c, c->t_tp_fwd, c->tp_gemm[1], false, &c->t_fwd_dense);
        overlap_pass(c, c->t_tp_bwd, c->tp_gemm[1], true, &c->t_bwd_dense);
    }
    c->t_tp_fwd = overlap_pass(c, c->t_tp_fwd, c->tp_gemm[0], false, &c->t_fwd);
    c->t_tp_bwd = overlap_pass(c, c->t_tp_bwd, c->tp_gemm[0], true, &c->t_bwd);
    c->t_tp_recompute = overlap_pass(c, c->t_tp_recompute, c->tp_gemm[0], false, &c->t_recompute);
    c->t_tp_recompute_dense = overlap_pass(c, c->t_tp_recompute_dense, c->tp_gemm[1], false, &c->t_recompute_dense);
}

/* Transformer Engine's userbuffers (initialize_ub, transformer_engine/
 * pytorch/module/base.py, called by Megatron's _initialize_tp_communicators
 * with the shape (seq_length x micro_batch / cp, hidden)): one buffer of that
 * shape per overlapped GEMM, ten of them (qkv, fc1: fprop, dgrad, wgrad;
 * proj, fc2: fprop, dgrad), in the 16-bit type, but for the six all-gather
 * buffers, which hold FP8 (1 byte) under FP8 training: TE 1.x's count.  Not
 * counted: TE 2.7 on adds two (proj and fc2 wgrad, "external"), and a
 * reduce-scatter run ring-wise (NeMo 2's and Megatron-Bridge's FP8
 * proj/fc2 fprop) keeps (2 tp - 1) / tp of a buffer more: at most ~0.6 GiB
 * on the tables' rows. */
double tp_userbuffer_bytes(const Ctx *c)
{
    const WorkloadTransformer *tr = workload_transformer(c->w);
    if (!tr || !c->tp_group || !c->p.tp_comm_overlap || c->p.tp_dtensor) /* DTensor's AsyncTP: not TE's buffers */
        return 0;
    double elems = step_device_tokens(c) * tr->hidden;
    bool fp8 = step_scenario_precision(c->sc) == MEMORY_MIXED_FP8;
    return elems * (6 * (fp8 ? 1 : c->wp.act_bytes) + 4 * c->wp.act_bytes);
}
