/* Tensor parallelism (Megatron-LM): the tensor-parallel group of a stage's
 * device and its collectives, 2 per layer forward and 2 backward (the f and
 * g operators around attention and the MLP).  Sequence parallelism turns
 * each all-reduce into a reduce-scatter plus an all-gather of the same
 * full-size buffer.  Full recomputation repeats the forward's collectives.
 * One task per layer and pass stands for its collectives, tagged with them
 * for the report's counts.
 * The GEMMs' split by tp is the workload module's (WorkloadParallel.tp). */
#include "step_build.h"

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
    const WorkloadTransformer *tr = workload_transformer(c->w);
    double elems = (double)step_scenario_micro_batch(c->sc) * tr->seq_len / c->p.cp * tr->hidden;
    double act = elems * c->wp.act_bytes;
    if (p->sequence_parallel) {
        /* in FP8 the all-gathers carry the quantized input (forward) and
         * output gradient (backward); the reduce-scatters stay 16-bit */
        double ag = step_scenario_dtype(c->sc) == ACCEL_FP8
                        ? elems * fp8_gathered_bytes(step_scenario_fp8_recipe(c->sc))
                        : act;
        c->tp_use[0] = step_coll(c, "tp_allgather", "tp", c->tp_group, COLL_ALLGATHER, ag);
        c->tp_use[1] = step_coll(c, "tp_reducescatter", "tp", c->tp_group, COLL_REDUCESCATTER, act);
    } else {
        c->tp_use[0] = step_coll(c, "tp_allreduce", "tp", c->tp_group, COLL_ALLREDUCE, act);
    }
    c->t_tp_fwd = c->t_tp_bwd = tp_blocks(c) * (step_coll_time(c, c->tp_use[0]) + step_coll_time(c, c->tp_use[1]));
    /* full recomputation repeats the forward's collectives (layer_tasks
     * gives its pass the same tp task) */
    if (p->recompute == WORKLOAD_RECOMPUTE_FULL)
        c->t_tp_recompute = c->t_tp_recompute_dense = c->t_tp_fwd;
    /* a checkpointed MLP ("mlp": a dense layer's; "moe": a MoE layer's)
     * runs its block's collectives again, where the layer has two */
    double block = tp_blocks(c) == 2 ? c->t_tp_fwd / 2 : 0;
    bool moe = tr->experts > 0;
    if (p->recompute_modules & WORKLOAD_RC_MLP)
        *(moe ? &c->t_tp_recompute_dense : &c->t_tp_recompute) = block;
    if (moe && (p->recompute_modules & WORKLOAD_RC_MOE))
        c->t_tp_recompute = block;
    return true;
}

/* The layer's tensor-parallel collectives on stage s's tp stream after its
 * compute `after`; returns the task, or `after` when there are none. */
int tp_after(Build *b, int s, const char *name, double seconds, int after)
{
    if (seconds <= 0)
        return after;
    int t = step_task(b->g, name, b->res[s].tp, seconds, "tp");
    step_dep(b->g, after, t);
    for (int k = 0; k < 2; k++)
        step_coll_tag(b, t, b->c->tp_use[k], tp_blocks(b->c), s);
    return t;
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
    double ag = step_coll_time(c, c->tp_use[0]), rs = step_coll_time(c, c->tp_use[1]);
    int last = tp_blocks(c) - 1, first = t_tp < 1.5 * (ag + rs) ? last : 0;
    double exposed = 0, covered = 0;
    for (int b = first; b <= last; b++) {
        exposed += overlap_one(c, ag, partner[bwd][2 * b + bwd], &covered);
        exposed += overlap_one(c, rs, partner[bwd][2 * b + !bwd], &covered);
    }
    if (c->p.comm_interference) {
        double f, f1, h;
        interfere_shares(c, c->tp_use[0], &f, &h);
        interfere_shares(c, c->tp_use[1], &f1, &h);
        *t_comp += covered * (f > f1 ? f : f1); /* the GEMMs lose SMs */
    }
    return exposed;
}

void tp_overlap_costs(Ctx *c)
{
    if (!c->p.tp_comm_overlap || !c->tp_group || c->l_fwd)
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
