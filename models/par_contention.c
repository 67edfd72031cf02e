/* Contention between data-parallel collectives: every (pipeline stage,
 * tensor rank) has its own DP group, and all of them reduce their
 * gradients at the same time over shared NICs and fabric.  A flow
 * simulation of them together against one alone gives the factor by which
 * the step's DP collectives (step_coll_use) are slowed; the report shows
 * it as "dp_contention". */
#include "step_build.h"

/* How much slower one data-parallel collective gets when the DP groups of
 * every (pipeline stage, tensor rank) run theirs at the same time: the flow
 * simulation of all of them together against one alone, on one bucket.  The
 * groups of a stage share nodes (and, on nodes with fewer NICs than GPUs,
 * NICs); groups of different stages share only the fabric.  When simulating
 * every group would take too many flows, only the tp groups of stage 0 are
 * simulated (they share the most). */
void dp_contention(Ctx *c)
{
    c->dp_factor = 1;
    if (!c->dp_group || !step_scenario_flow_contention(c->sc))
        return;
    const StepPlan *p = &c->p;
    CollOp op = p->zero_stage >= 1 ? COLL_REDUCESCATTER : COLL_ALLREDUCE;
    double bytes = p->bucket_bytes * p->compression;
    if (p->zero_stage == 3)
        bytes = c->layer_params * c->param_bytes;
    CollCost cc;
    if (!coll_cost(c->dp_group, op, COLL_ALGO_AUTO, COLL_PROTO_AUTO, bytes, &cc))
        return;
    int stages = p->pp;
    double est = (double)p->dp * p->tp * p->pp * 8 * 8;
    if (est > 4e5)
        stages = 1;
    int ngroups = stages * p->tp;
    if (ngroups == 1)
        return; /* one group has nobody to contend with */
    SimGraph *g = sim_graph_new();
    CollGroup **groups = g_new0(CollGroup *, ngroups);
    int *ids = g_new(int, p->dp);
    bool ok = true;
    for (int s = 0, k = 0; s < stages && ok; s++)
        for (int t = 0; t < p->tp && ok; t++, k++) {
            for (int d = 0; d < p->dp; d++)
                ids[d] = step_rank_of(c, s, d, t);
            groups[k] = coll_group_new(c->topo, ids, p->dp, NULL, NULL);
            ok = groups[k] != NULL;
            if (ok)
                coll_append(groups[k], g, op, cc.algo, cc.proto, bytes, NULL, 0, "dp");
        }
    if (ok) {
        SimEngine *e = sim_engine_new();
        SimNet *net = sim_net_new(e);
        coll_net_build(c->dp_group, net);
        sim_time_t span = sim_graph_run(g, e, net);
        sim_net_free(net);
        sim_engine_free(e);
        double alone = coll_simulate(c->dp_group, op, cc.algo, cc.proto, bytes);
        double conc = sim_time_to_s(span);
        if (span != SIM_TIME_NEVER && alone > 0) {
            c->dp_flow_alone_s = alone;
            c->dp_flow_concurrent_s = conc;
            c->dp_flow_groups = ngroups;
            c->dp_factor = conc / alone > 1 ? conc / alone : 1;
        }
    }
    for (int k = 0; k < ngroups; k++)
        coll_group_free(groups[k]);
    g_free(groups);
    g_free(ids);
    sim_graph_free(g);
}
