/* Tensor parallelism (Megatron-LM): the tensor-parallel group of a stage's
 * device and its collectives, 2 per layer forward and 2 backward (the f and
 * g operators around attention and the MLP).  Sequence parallelism turns
 * each all-reduce into a reduce-scatter plus an all-gather of the same
 * full-size buffer.  Full recomputation repeats the forward's collectives.
 * The GEMMs' split by tp is the workload module's (WorkloadParallel.tp). */
#include "step_build.h"

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
    c->tp_group = coll_group_new_with(c->topo, ids, p->tp, step_scenario_coll_params(c->sc), err);
    if (c->tp_group)
        coll_group_set_gpus_per_thread(c->tp_group, step_scenario_gpus_per_process(c->sc));
    g_free(ids);
    if (!c->tp_group)
        return false;
    coll_group_set_nccl_version(c->tp_group, step_scenario_nccl_version(c->sc));
    const WorkloadTransformer *tr = workload_transformer(c->w);
    double act = (double)step_scenario_micro_batch(c->sc) * tr->seq_len * tr->hidden * c->wp.act_bytes;
    int per_step = 2 * c->m * step_stage_layers(c, 0);
    if (p->sequence_parallel) {
        double ag = step_coll_use(c, "tp_allgather", "tp", c->tp_group, COLL_ALLGATHER, act, 2 * per_step);
        double rs = step_coll_use(c, "tp_reducescatter", "tp", c->tp_group, COLL_REDUCESCATTER, act, 2 * per_step);
        c->t_tp_fwd = c->t_tp_bwd = 2 * (ag + rs);
    } else {
        double ar = step_coll_use(c, "tp_allreduce", "tp", c->tp_group, COLL_ALLREDUCE, act, 2 * per_step);
        c->t_tp_fwd = c->t_tp_bwd = 2 * ar;
    }
    if (p->recompute == WORKLOAD_RECOMPUTE_FULL)
        c->t_tp_recompute = c->t_tp_fwd;
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
    return t;
}
