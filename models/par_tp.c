/* Tensor parallelism (Megatron-LM): the tensor-parallel group of a stage's
 * device and its collectives, 2 per layer forward and 2 backward (the f and
 * g operators around attention and the MLP).  Sequence parallelism turns
 * each all-reduce into a reduce-scatter plus an all-gather of the same
 * full-size buffer.  Full recomputation repeats the forward's collectives.
 * One task per layer and pass stands for its collectives, tagged with them
 * for the report's counts.
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
    c->tp_group = step_group_new(c, ids, p->tp, err);
    g_free(ids);
    if (!c->tp_group)
        return false;
    const WorkloadTransformer *tr = workload_transformer(c->w);
    double act = (double)step_scenario_micro_batch(c->sc) * tr->seq_len / c->p.cp * tr->hidden * c->wp.act_bytes;
    if (p->sequence_parallel) {
        c->tp_use[0] = step_coll(c, "tp_allgather", "tp", c->tp_group, COLL_ALLGATHER, act);
        c->tp_use[1] = step_coll(c, "tp_reducescatter", "tp", c->tp_group, COLL_REDUCESCATTER, act);
    } else {
        c->tp_use[0] = step_coll(c, "tp_allreduce", "tp", c->tp_group, COLL_ALLREDUCE, act);
    }
    c->t_tp_fwd = c->t_tp_bwd = 2 * (step_coll_time(c, c->tp_use[0]) + step_coll_time(c, c->tp_use[1]));
    /* full recomputation repeats the forward's collectives (layer_tasks
     * gives its pass the same tp task) */
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
    for (int k = 0; k < 2; k++)
        step_coll_tag(b, t, b->c->tp_use[k], 2, s);
    return t;
}
