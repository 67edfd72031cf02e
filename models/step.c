#include "step.h"
#include "scenario.h"

#include "accel.h"
#include "collective.h"
#include "memory.h"
#include "topo.h"
#include "workload.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* Costs                                                                */
/* ------------------------------------------------------------------ */

/* One collective kind used by the step, for the report. */
typedef struct {
    const char *name; /* static */
    const char *group;
    CollOp op;
    int group_size;
    double bytes;
    CollCost cost;
    int count; /* per step on one device */
} CollUse;

typedef struct {
    const StepScenario *sc;
    StepPlan p;
    const Topo *topo; /* the scenario's */
    const Accel *acc;
    const Workload *w;
    WorkloadParallel wp;
    int m;          /* micro-batches per replica */
    int devices;
    int *stage_l0;  /* first layer of each stage (pp + 1 entries) */
    CollGroup *tp_group, *dp_group;
    CollGroup **p2p_group; /* stage s -> s+1 */
    GArray *colls;  /* CollUse */
    /* per-layer costs (identical layers), seconds */
    double t_fwd, t_bwd, t_recompute;
    double t_tp_fwd, t_tp_bwd, t_tp_recompute;
    double t_head_fwd, t_head_bwd;
    double layer_params, head_params; /* per device (after tp) */
    double grad_bytes_per_param, param_bytes; /* gradients: in grad_dtype (wire and buckets) */
    AccelDtype grad_dtype;
    bool fp32_grads;                  /* fp32 gradient buffers in mixed precision (fp32 reduction) */
    bool ag_overlap;                  /* sharded: updated weights gathered behind the next forward */
    double opt_bytes_per_param;       /* HBM traffic of the update */
    double p2p_bytes;
    /* data-parallel collectives: all tp x pp groups run at once and share
     * NICs and fabric; their closed-form time is scaled by this factor from
     * a flow simulation of the concurrent groups (1: no contention) */
    double dp_factor, dp_flow_alone_s, dp_flow_concurrent_s;
    int dp_flow_groups;
} Ctx;

static int rank_of(const Ctx *c, int stage, int d, int t)
{
    return stage * c->p.dp * c->p.tp + d * c->p.tp + t;
}

static double gemms_time(const Ctx *c, const WorkloadGemm *g, int n, bool backward)
{
    double t = 0;
    for (int i = 0; i < n; i++) {
        if (backward) {
            WorkloadGemm b[2];
            workload_gemm_backward(&g[i], b);
            for (int k = 0; k < 2; k++)
                t += accel_bgemm_time(c->acc, step_scenario_dtype(c->sc), b[k].batch, b[k].m, b[k].n, b[k].k);
        } else {
            t += accel_bgemm_time(c->acc, step_scenario_dtype(c->sc), g[i].batch, g[i].m, g[i].n, g[i].k);
        }
    }
    return t;
}

/* Records a collective kind and returns its time (0 for a group of one). */
static double coll_use(Ctx *c, const char *name, const char *group_name, const CollGroup *g, CollOp op, double bytes,
                       int count)
{
    if (!g || coll_group_size(g) < 2 || bytes <= 0)
        return 0;
    CollCost cost;
    if (!coll_cost(g, op, COLL_ALGO_AUTO, COLL_PROTO_AUTO, bytes, &cost))
        return 0;
    if (g == c->dp_group && c->dp_factor > 1) {
        cost.time_s *= c->dp_factor;
        cost.algbw_Bps /= c->dp_factor;
    }
    for (guint i = 0; i < c->colls->len; i++) {
        CollUse *u = &g_array_index(c->colls, CollUse, i);
        if (!strcmp(u->name, name) && u->bytes == bytes) {
            u->count += count;
            return cost.time_s;
        }
    }
    CollUse u = {name, group_name, op, coll_group_size(g), bytes, cost, count};
    g_array_append_val(c->colls, u);
    return cost.time_s;
}

/* HBM bytes moved per parameter by one optimizer update (read + write), on
 * top of the gradient read: fp32 master copy when mixed precision, state
 * tensors, the working weights written back.  LAMB makes a second pass for
 * its trust ratio (norms of weights and update). */
static double optimizer_traffic(const StepScenario *sc, double g)
{
    bool mixed = step_scenario_precision(sc) != MEMORY_FP32;
    double master = 4;             /* fp32 weights: read + write each */
    double state = step_scenario_optimizer(sc) == MEMORY_OPT_SGD ? 0 : step_scenario_optimizer(sc) == MEMORY_OPT_SGD_MOMENTUM ? 1 : 2;
    double bytes = g + 2 * master + 2 * 4 * state;
    if (mixed)
        bytes += 2; /* write the 16-bit working copy */
    if (step_scenario_optimizer(sc) == MEMORY_OPT_LAMB)
        bytes += 4 + 4; /* re-read weights and update for the trust ratio */
    return bytes + g;   /* + the gradient-norm pass (clipping / loss-scale check) */
}


/* How much slower one data-parallel collective gets when the DP groups of
 * every (pipeline stage, tensor rank) run theirs at the same time: the flow
 * simulation of all of them together against one alone, on one bucket.  The
 * groups of a stage share nodes (and, on nodes with fewer NICs than GPUs,
 * NICs); groups of different stages share only the fabric.  When simulating
 * every group would take too many flows, only the tp groups of stage 0 are
 * simulated (they share the most). */
static void dp_contention(Ctx *c)
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
                ids[d] = rank_of(c, s, d, t);
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

static bool ctx_init(Ctx *c, const StepScenario *sc, int variant, GError **err)
{
    memset(c, 0, sizeof *c);
    c->sc = sc;
    c->p = step_scenario_plan(sc, variant);
    c->w = step_scenario_workload(sc);
    c->colls = g_array_new(FALSE, TRUE, sizeof(CollUse));
    c->topo = step_scenario_topo(sc);
    c->acc = step_scenario_accel(sc);
    const StepPlan *p = &c->p;
    c->devices = p->dp * p->tp * p->pp;
    c->m = step_scenario_global_batch(sc) / (p->dp * step_scenario_micro_batch(sc));
    c->wp = workload_parallel_default();
    c->wp.tp = p->tp;
    c->wp.sequence_parallel = p->sequence_parallel;
    c->wp.recompute = p->recompute;
    c->wp.act_bytes = accel_dtype_bytes(step_scenario_dtype(sc));
    const WorkloadTransformer *tr = workload_transformer(c->w);
    int L = tr->layers;
    c->stage_l0 = g_new(int, p->pp + 1);
    for (int s = 0; s <= p->pp; s++) /* the first L % pp stages take one layer more */
        c->stage_l0[s] = s * (L / p->pp) + (s < L % p->pp ? s : L % p->pp);

    /* groups: Megatron's rank order (tp fastest, then dp, then pp) */
    int *ids = g_new(int, p->dp > p->tp ? p->dp : p->tp);
    for (int t = 0; t < p->tp; t++)
        ids[t] = rank_of(c, 0, 0, t);
    if (p->tp > 1 && !(c->tp_group = coll_group_new(c->topo, ids, p->tp, NULL, err)))
        goto fail_ids;
    for (int d = 0; d < p->dp; d++)
        ids[d] = rank_of(c, 0, d, 0);
    if (p->dp > 1 && !(c->dp_group = coll_group_new(c->topo, ids, p->dp, NULL, err)))
        goto fail_ids;
    c->p2p_group = g_new0(CollGroup *, p->pp);
    for (int s = 0; s + 1 < p->pp; s++) {
        int pair[2] = {rank_of(c, s, 0, 0), rank_of(c, s + 1, 0, 0)};
        /* stages whose boundary looks the same (same node or not) share a group */
        for (int q = 0; q < s && !c->p2p_group[s]; q++) {
            bool same_a = topo_node_of(c->topo, pair[0]) == topo_node_of(c->topo, pair[1]);
            bool same_b = topo_node_of(c->topo, rank_of(c, q, 0, 0)) == topo_node_of(c->topo, rank_of(c, q + 1, 0, 0));
            if (same_a == same_b && c->p2p_group[q] && coll_group_size(c->p2p_group[q]) == 2) {
                c->p2p_group[s] = c->p2p_group[q];
            }
        }
        if (!c->p2p_group[s] && !(c->p2p_group[s] = coll_group_new(c->topo, pair, 2, NULL, err)))
            goto fail_ids;
    }
    g_free(ids);

    /* per-layer compute */
    WorkloadGemm g[WORKLOAD_MAX_GEMMS];
    int mb = step_scenario_micro_batch(sc);
    int ng = workload_layer_gemms(c->w, 0, mb, &c->wp, g);
    double ew = workload_layer_elementwise_bytes(c->w, 0, mb, &c->wp);
    c->t_fwd = gemms_time(c, g, ng, false) + accel_mem_time(c->acc, ew);
    c->t_bwd = gemms_time(c, g, ng, true) + accel_mem_time(c->acc, 2 * ew);
    if (p->recompute == WORKLOAD_RECOMPUTE_FULL) {
        c->t_recompute = c->t_fwd;
    } else if (p->recompute == WORKLOAD_RECOMPUTE_SELECTIVE) {
        /* the attention core: Q K^T, softmax + dropout, P V */
        double t = 0;
        for (int i = 0; i < ng; i++)
            if (!strcmp(g[i].name, "attn_score") || !strcmp(g[i].name, "attn_value"))
                t += gemms_time(c, &g[i], 1, false);
        double e = c->wp.act_bytes, heads = (double)tr->heads / p->tp, s = tr->seq_len;
        t += accel_mem_time(c->acc, (2 * e + (2 * e + 1)) * mb * heads * s * s);
        c->t_recompute = t;
    }
    int nh = workload_head_gemms(c->w, mb, &c->wp, g);
    double logits = (double)mb * tr->seq_len * tr->vocab / p->tp;
    /* cross-entropy: softmax over fp32 logits, read/write a few times */
    c->t_head_fwd = gemms_time(c, g, nh, false) + accel_mem_time(c->acc, logits * 4 * 3);
    c->t_head_bwd = gemms_time(c, g, nh, true) + accel_mem_time(c->acc, logits * 4 * 2);

    /* tensor-parallel collectives: 2 per layer forward, 2 backward
     * (Megatron's f and g); sequence parallel turns each all-reduce into a
     * reduce-scatter plus an all-gather of the same full-size buffer. */
    double act = (double)mb * tr->seq_len * tr->hidden * c->wp.act_bytes;
    if (p->tp > 1) {
        int per_step = 2 * c->m * (c->stage_l0[1] - c->stage_l0[0]);
        if (p->sequence_parallel) {
            double ag = coll_use(c, "tp_allgather", "tp", c->tp_group, COLL_ALLGATHER, act, 2 * per_step);
            double rs = coll_use(c, "tp_reducescatter", "tp", c->tp_group, COLL_REDUCESCATTER, act, 2 * per_step);
            c->t_tp_fwd = c->t_tp_bwd = 2 * (ag + rs);
        } else {
            double ar = coll_use(c, "tp_allreduce", "tp", c->tp_group, COLL_ALLREDUCE, act, 2 * per_step);
            c->t_tp_fwd = c->t_tp_bwd = 2 * ar;
        }
        if (p->recompute == WORKLOAD_RECOMPUTE_FULL)
            c->t_tp_recompute = c->t_tp_fwd;
    }
    /* pipeline: Megatron's scatter/gather optimisation sends 1/tp of the
     * activation from each tensor-parallel rank over its own link */
    c->p2p_bytes = act / p->tp;

    c->layer_params = workload_params_layer(c->w, 0) / p->tp;
    c->head_params = workload_params_head(c->w) / p->tp;
    c->param_bytes = memory_param_bytes(step_scenario_precision(sc));
    /* gradients travel in grad_reduce_dtype; reducing fp32 gradients in
     * mixed precision means fp32 gradient buffers (Megatron's main_grad),
     * which the optimizer reads too */
    c->grad_dtype = p->grad_reduce_dtype >= 0        ? (AccelDtype)p->grad_reduce_dtype
                    : step_scenario_precision(sc) == MEMORY_FP32 ? ACCEL_FP32
                                                   : step_scenario_dtype(sc);
    c->grad_bytes_per_param = accel_dtype_bytes(c->grad_dtype);
    c->fp32_grads = step_scenario_precision(sc) != MEMORY_FP32 && c->grad_bytes_per_param == 4;
    c->opt_bytes_per_param = optimizer_traffic(sc, memory_grad_bytes(step_scenario_precision(sc), c->fp32_grads));
    c->ag_overlap = (p->zero_stage == 1 || p->zero_stage == 2) && p->dp > 1 && p->allgather_overlap != 0;
    dp_contention(c);
    return true;
fail_ids:
    g_free(ids);
    return false;
}

static void ctx_free(Ctx *c)
{
    if (c->p2p_group) {
        for (int s = 0; s + 1 < c->p.pp; s++) {
            bool shared = false;
            for (int q = s + 1; q + 1 < c->p.pp; q++)
                shared |= c->p2p_group[q] == c->p2p_group[s];
            if (!shared)
                coll_group_free(c->p2p_group[s]);
        }
        g_free(c->p2p_group);
    }
    coll_group_free(c->tp_group);
    coll_group_free(c->dp_group);
    g_free(c->stage_l0);
    if (c->colls)
        g_array_free(c->colls, TRUE);
}

/* Parameters held by stage s's device: its layers, the embeddings on the
 * first stage and, with a pipeline and tied embeddings, the copy of the
 * word embeddings the last stage needs for the logits. */
static double stage_params(const Ctx *c, int s)
{
    double p = (c->stage_l0[s + 1] - c->stage_l0[s]) * c->layer_params;
    if (s == 0)
        p += c->head_params;
    if (s == c->p.pp - 1 && c->p.pp > 1 && workload_transformer(c->w)->tied_embeddings)
        p += (double)workload_transformer(c->w)->vocab * workload_transformer(c->w)->hidden / c->p.tp;
    return p;
}

/* ------------------------------------------------------------------ */
/* The graph                                                            */
/* ------------------------------------------------------------------ */

typedef struct {
    int compute, comm, tp, p2p; /* resources */
    int rank;
} StageRes;

static int task(SimGraph *g, const char *name, int res, double seconds, const char *cat)
{
    int t = sim_graph_task(g, name, res, sim_time_from_s(seconds));
    sim_graph_task_set_info(g, t, cat, 0);
    return t;
}

static void dep(SimGraph *g, int before, int after)
{
    if (before >= 0 && after >= 0)
        sim_graph_depend(g, before, after);
}

/* Tasks ending one micro-batch's pass through a stage (the last task of the
 * chain, per direction) and their first task. */
typedef struct {
    int first, last;
} Span;

typedef struct {
    Ctx *c;
    SimGraph *g;
    StageRes *res;
    int **layer_bwd_end; /* [stage][local layer]: last task of that layer's backward, last micro-batch */
    int *head_bwd_end;   /* [stage] */
    int *grad_first_dep; /* unused */
} Build;

/* ZeRO-3: all-gather of one layer's parameters on the comm stream. */
static int zero3_gather(Build *b, int s, double t_ag, int after)
{
    int t = task(b->g, "zero3_allgather", b->res[s].comm, t_ag, "comm");
    dep(b->g, after, t);
    return t;
}

/* Sharded update with allgather_overlap: the all-gather of `params` updated
 * parameters on stage s's comm stream, in pieces of at most a bucket, issued
 * after `after` (layer order).  Returns the last piece. */
static int param_gather(Build *b, int s, double params, int after)
{
    Ctx *c = b->c;
    double bytes = params * c->param_bytes;
    int nb = (int)ceil(bytes / c->p.bucket_bytes - 1e-9);
    if (nb < 1)
        nb = 1;
    int prev = after;
    for (int k = 0; k < nb; k++) {
        double t = coll_use(c, "param_allgather", "dp", c->dp_group, COLL_ALLGATHER, bytes / nb, s == 0 ? 1 : 0);
        int ag = task(b->g, "param_allgather", b->res[s].comm, t, "comm");
        dep(b->g, prev, ag);
        prev = ag;
    }
    return prev;
}

/* One layer's compute after `cur` and the layer's gathered weights `ag`,
 * then its tensor-parallel collective; records the span's first task and,
 * when `hist` is given, the compute task for ZeRO-3's prefetch.  Returns the
 * last task. */
static int layer_tasks(Build *b, StageRes *r, const char *name, double t_comp, const char *tp_name, double t_tp,
                       int cur, int ag, Span *sp, int *hist)
{
    int t = task(b->g, name, r->compute, t_comp, "compute");
    dep(b->g, cur, t);
    dep(b->g, ag, t);
    if (sp->first < 0)
        sp->first = t;
    if (hist) {
        hist[0] = hist[1];
        hist[1] = t;
    }
    if (t_tp > 0) {
        int tt = task(b->g, tp_name, r->tp, t_tp, "tp");
        dep(b->g, t, tt);
        return tt;
    }
    return t;
}

/* One micro-batch forward (dir 0) or backward (dir 1) of stage s. */
static Span stage_pass(Build *b, int s, int mbi, int dir, int prev, bool last_mb)
{
    Ctx *c = b->c;
    SimGraph *g = b->g;
    StageRes *r = &b->res[s];
    int nl = c->stage_l0[s + 1] - c->stage_l0[s];
    bool last_stage = s == c->p.pp - 1;
    bool z3 = c->p.zero_stage == 3 && c->p.dp > 1;
    double t_ag = 0;
    if (z3)
        t_ag = coll_use(c, "zero3_allgather", "dp", c->dp_group, COLL_ALLGATHER,
                        c->layer_params * c->param_bytes, s == 0 ? nl : 0);
    Span sp = {-1, -1};
    int cur = prev;
    /* ZeRO-3 prefetch: the gather of layer i waits for layer i-2's compute */
    int ag_prev = -1, comp_hist[2] = {-1, -1};
    if (dir == 0) {
        /* steady state of the sharded update with allgather_overlap: the
         * previous step's optimizer is done when this step starts; the
         * first micro-batch's forward of each layer waits for that layer's
         * gathered weights (the embeddings before the first layer) */
        bool gather = c->ag_overlap && mbi == 0;
        if (gather && s == 0)
            ag_prev = param_gather(b, s, c->head_params, -1);
        for (int l = 0; l < nl; l++) {
            int ag = -1;
            if (z3) {
                ag = zero3_gather(b, s, t_ag, comp_hist[0] >= 0 ? comp_hist[0] : prev);
                dep(g, ag_prev, ag);
                ag_prev = ag;
            } else if (gather) {
                ag = ag_prev = param_gather(b, s, c->layer_params, ag_prev);
            }
            cur = layer_tasks(b, r, "forward", c->t_fwd, "tp_forward", c->t_tp_fwd, cur, ag, &sp, comp_hist);
        }
        if (last_stage) {
            int t = task(g, "head_forward", r->compute, c->t_head_fwd, "compute");
            dep(g, cur, t);
            /* the last stage's copy of tied word embeddings (pp > 1) */
            double extra = stage_params(c, s) - nl * c->layer_params - (s == 0 ? c->head_params : 0);
            if (gather && extra > 0.5)
                dep(g, param_gather(b, s, extra, ag_prev), t);
            if (sp.first < 0)
                sp.first = t;
            cur = t;
        }
        sp.last = cur;
        return sp;
    }
    /* backward */
    if (last_stage) {
        int t = task(g, "head_backward", r->compute, c->t_head_bwd, "compute");
        dep(g, cur, t);
        sp.first = t;
        cur = t;
        if (last_mb || c->p.zero_stage >= 2)
            b->head_bwd_end[s] = t;
    }
    double t_rs = 0;
    if (z3)
        t_rs = coll_use(c, "zero3_reducescatter", "dp", c->dp_group, COLL_REDUCESCATTER,
                        c->layer_params * c->grad_bytes_per_param * c->p.compression, s == 0 ? nl : 0);
    for (int l = nl - 1; l >= 0; l--) {
        int ag = -1;
        if (z3) {
            ag = zero3_gather(b, s, t_ag, comp_hist[0] >= 0 ? comp_hist[0] : prev);
            dep(g, ag_prev, ag);
            ag_prev = ag;
        }
        if (c->t_recompute > 0)
            cur = layer_tasks(b, r, "recompute", c->t_recompute, "tp_recompute", c->t_tp_recompute, cur, ag, &sp,
                              NULL);
        cur = layer_tasks(b, r, "backward", c->t_bwd, "tp_backward", c->t_tp_bwd, cur, ag, &sp, comp_hist);
        if (z3) {
            int rs = task(g, "zero3_reducescatter", r->comm, t_rs, "comm");
            dep(g, cur, rs);
            if (last_mb)
                b->layer_bwd_end[s][l] = rs; /* the optimizer waits for these */
        } else if (last_mb || c->p.zero_stage == 2) {
            b->layer_bwd_end[s][l] = cur;
        }
    }
    sp.last = cur;
    return sp;
}

/* Gradient buckets of stage s after the backward tasks recorded in
 * b->layer_bwd_end (last micro-batch, or every micro-batch under ZeRO-2):
 * all-reduce (replicated) or reduce-scatter (sharded).  Returns the tasks
 * the optimizer must wait for, appended to `ends`; `bucket_params` gets the
 * parameters of each bucket. */
static void grad_buckets(Build *b, int s, int fallback_dep, GArray *ends, GArray *bucket_params, bool count)
{
    Ctx *c = b->c;
    SimGraph *g = b->g;
    StageRes *r = &b->res[s];
    int nl = c->stage_l0[s + 1] - c->stage_l0[s];
    bool sharded = c->p.zero_stage >= 1;
    CollOp op = sharded ? COLL_REDUCESCATTER : COLL_ALLREDUCE;
    const char *cname = sharded ? "grad_reducescatter" : "grad_allreduce";
    double gb = c->grad_bytes_per_param;
    double pending = 0;
    int pending_dep = -1;
    /* gradients become ready in backward order: head (last stage) first,
     * then layers from last to first, the embeddings last (stage 0) */
    int nitems = nl + 2;
    for (int k = 0; k < nitems; k++) {
        double params = 0;
        int ready = -1;
        if (k == 0) {
            if (s == c->p.pp - 1 && c->p.pp > 1 && workload_transformer(c->w)->tied_embeddings)
                params = stage_params(c, s) - nl * c->layer_params;
            if (s == c->p.pp - 1)
                ready = b->head_bwd_end[s];
        } else if (k <= nl) {
            int l = nl - k;
            params = c->layer_params;
            ready = b->layer_bwd_end[s][l];
        } else {
            if (s == 0)
                params = c->head_params;
            ready = b->layer_bwd_end[s][0];
        }
        if (!c->p.overlap)
            ready = fallback_dep;
        if (params > 0) {
            pending += params;
            if (ready >= 0)
                pending_dep = ready;
        }
        bool flush = pending > 0 && (pending * gb >= c->p.bucket_bytes || k == nitems - 1);
        if (!flush)
            continue;
        double bytes = pending * gb;
        int prev = pending_dep >= 0 ? pending_dep : fallback_dep;
        if (c->p.compression < 1) {
            /* compress before and decompress after: a memory-bound pass over
             * the gradients and the compressed data, twice */
            int cp = task(g, "compress", r->compute, accel_mem_time(c->acc, 2 * bytes * (1 + c->p.compression)),
                          "compute");
            dep(g, prev, cp);
            prev = cp;
        }
        /* a layer larger than a bucket goes out as several buckets */
        int nb = (int)ceil(bytes / c->p.bucket_bytes - 1e-9);
        if (nb < 1)
            nb = 1;
        double piece = pending / nb;
        for (int k2 = 0; k2 < nb; k2++) {
            double t = coll_use(c, cname, "dp", c->dp_group, op, piece * gb * c->p.compression,
                                count && s == 0 ? 1 : 0);
            int ct = task(g, cname, r->comm, t, "comm");
            dep(g, prev, ct);
            g_array_append_val(ends, ct);
            g_array_append_val(bucket_params, piece);
        }
        pending = 0;
        pending_dep = -1;
    }
}

typedef struct {
    sim_time_t start, end;
} Iv;

static int iv_cmp(const void *a, const void *b)
{
    const Iv *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start ? 1 : x->end < y->end ? -1 : x->end > y->end;
}

/* Sorted, merged union of intervals in place; returns the new count. */
static size_t iv_merge(Iv *v, size_t n)
{
    if (!n)
        return 0;
    qsort(v, n, sizeof *v, iv_cmp);
    size_t k = 0;
    for (size_t i = 1; i < n; i++) {
        if (v[i].start <= v[k].end) {
            if (v[i].end > v[k].end)
                v[k].end = v[i].end;
        } else {
            v[++k] = v[i];
        }
    }
    return k + 1;
}

/* Length of (a \ b), both merged. */
static double iv_minus(const Iv *a, size_t na, const Iv *b, size_t nb)
{
    double total = 0;
    size_t j = 0;
    for (size_t i = 0; i < na; i++) {
        sim_time_t s = a[i].start, e = a[i].end;
        while (j < nb && b[j].end <= s)
            j++;
        size_t k = j;
        sim_time_t cur = s;
        while (k < nb && b[k].start < e) {
            if (b[k].start > cur)
                total += sim_time_to_s(b[k].start - cur);
            if (b[k].end > cur)
                cur = b[k].end;
            k++;
        }
        if (cur < e)
            total += sim_time_to_s(e - cur);
    }
    return total;
}

static cJSON *coll_report(const Ctx *c)
{
    cJSON *arr = cJSON_CreateArray();
    for (guint i = 0; i < c->colls->len; i++) {
        const CollUse *u = &g_array_index(c->colls, CollUse, i);
        if (u->count == 0) /* seen only on stages other than the one reported */
            continue;
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", u->name);
        cJSON_AddStringToObject(o, "group", u->group);
        cJSON_AddStringToObject(o, "op", coll_op_name(u->op));
        cJSON_AddNumberToObject(o, "group_size", u->group_size);
        cJSON_AddNumberToObject(o, "bytes", u->bytes);
        cJSON_AddStringToObject(o, "algo", coll_algo_name(u->cost.algo));
        cJSON_AddStringToObject(o, "proto", coll_proto_name(u->cost.proto));
        cJSON_AddNumberToObject(o, "time_s", u->cost.time_s);
        cJSON_AddNumberToObject(o, "count_per_step", u->count);
        cJSON_AddItemToArray(arr, o);
    }
    return arr;
}

cJSON *step_scenario_run(const StepScenario *sc, int variant, SimGraph **graph_out, GError **err)
{
    if (variant < 0 || variant >= step_scenario_num_variants(sc)) {
        g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "%s: no variant %d", step_scenario_path(sc), variant);
        return NULL;
    }
    Ctx c;
    if (!ctx_init(&c, sc, variant, err)) {
        ctx_free(&c);
        return NULL;
    }
    const StepPlan *p = &c.p;
    int pp = p->pp, m = c.m;
    SimGraph *g = sim_graph_new();
    Build b = {.c = &c, .g = g};
    b.res = g_new(StageRes, pp);
    b.layer_bwd_end = g_new(int *, pp);
    b.head_bwd_end = g_new(int, pp);
    for (int s = 0; s < pp; s++) {
        int r = rank_of(&c, s, 0, 0);
        char name[64];
        b.res[s].rank = r;
        snprintf(name, sizeof name, "gpu%d.compute", r);
        b.res[s].compute = sim_graph_resource(g, name);
        snprintf(name, sizeof name, "gpu%d.comm", r);
        b.res[s].comm = sim_graph_resource(g, name);
        snprintf(name, sizeof name, "gpu%d.tp", r);
        b.res[s].tp = sim_graph_resource(g, name);
        snprintf(name, sizeof name, "gpu%d.p2p", r);
        b.res[s].p2p = sim_graph_resource(g, name);
        int nl = c.stage_l0[s + 1] - c.stage_l0[s];
        b.layer_bwd_end[s] = g_new(int, nl);
        for (int l = 0; l < nl; l++)
            b.layer_bwd_end[s][l] = -1;
        b.head_bwd_end[s] = -1;
    }
    /* The schedule: per stage, the order of (micro-batch, direction). */
    Span *fw = g_new(Span, (size_t)pp * m), *bw = g_new(Span, (size_t)pp * m);
    int *fsend = g_new(int, (size_t)pp * m), *bsend = g_new(int, (size_t)pp * m);
    double *t_p2p = g_new0(double, pp);
    for (int s = 0; s + 1 < pp; s++)
        t_p2p[s] = coll_use(&c, "pp_send", "pp", c.p2p_group[s], COLL_BROADCAST, c.p2p_bytes, s == 0 ? m : 0);
    /* Each stage's sequence of ops; op k waits for op k-1 (program order). */
    int *order_mb = g_new(int, 2 * (size_t)m), *order_dir = g_new(int, 2 * (size_t)m);
    GArray *ends = g_array_new(FALSE, FALSE, sizeof(int));
    GArray *bparams = g_array_new(FALSE, FALSE, sizeof(double));
    /* Stages are built in an order that respects the data dependencies:
     * forward sends go s -> s+1, backward sends s+1 -> s; a task's
     * dependencies can be added after it, so build every stage's op chain
     * first and connect the sends afterwards. */
    for (int s = 0; s < pp; s++) {
        int n = 0;
        if (p->gpipe || pp == 1) {
            for (int i = 0; i < m; i++, n++)
                order_mb[n] = i, order_dir[n] = 0;
            for (int i = 0; i < m; i++, n++)
                order_mb[n] = i, order_dir[n] = 1;
        } else {
            int warm = pp - s - 1 < m ? pp - s - 1 : m;
            int fi = 0, bi = 0;
            for (; fi < warm; fi++, n++)
                order_mb[n] = fi, order_dir[n] = 0;
            while (bi < m) {
                if (fi < m) {
                    order_mb[n] = fi++, order_dir[n] = 0;
                    n++;
                }
                order_mb[n] = bi++, order_dir[n] = 1;
                n++;
            }
        }
        int prev = -1;
        for (int k = 0; k < n; k++) {
            int i = order_mb[k];
            bool last_mb = i == m - 1;
            if (order_dir[k] == 0) {
                fw[s * m + i] = stage_pass(&b, s, i, 0, prev, last_mb);
                prev = fw[s * m + i].last;
            } else {
                /* ZeRO-2 reduce-scatters every micro-batch's gradients */
                if (p->zero_stage == 2 && p->dp > 1)
                    for (int l = 0; l < c.stage_l0[s + 1] - c.stage_l0[s]; l++)
                        b.layer_bwd_end[s][l] = -1;
                bw[s * m + i] = stage_pass(&b, s, i, 1, prev, last_mb);
                prev = bw[s * m + i].last;
                if (p->zero_stage == 2 && p->dp > 1 && !last_mb) {
                    GArray *e2 = g_array_new(FALSE, FALSE, sizeof(int));
                    GArray *p2 = g_array_new(FALSE, FALSE, sizeof(double));
                    grad_buckets(&b, s, prev, e2, p2, true);
                    g_array_free(e2, TRUE);
                    g_array_free(p2, TRUE);
                }
            }
        }
    }
    /* pipeline sends */
    for (int s = 0; s < pp; s++)
        for (int i = 0; i < m; i++) {
            fsend[s * m + i] = bsend[s * m + i] = -1;
            if (s + 1 < pp) {
                int t = task(g, "send_activation", b.res[s].p2p, t_p2p[s], "p2p");
                dep(g, fw[s * m + i].last, t);
                dep(g, t, fw[(s + 1) * m + i].first);
                fsend[s * m + i] = t;
            }
            if (s > 0) {
                int t = task(g, "send_gradient", b.res[s].p2p, t_p2p[s - 1], "p2p");
                dep(g, bw[s * m + i].last, t);
                dep(g, t, bw[(s - 1) * m + i].first);
                bsend[s * m + i] = t;
            }
            if (s == pp - 1)
                dep(g, fw[s * m + i].last, bw[s * m + i].first);
        }
    /* data-parallel gradient synchronisation and the optimizer */
    for (int s = 0; s < pp; s++) {
        int last_bwd = bw[s * m + m - 1].last;
        double params = stage_params(&c, s);
        g_array_set_size(ends, 0);
        g_array_set_size(bparams, 0);
        if (p->dp > 1 && p->zero_stage < 3)
            grad_buckets(&b, s, last_bwd, ends, bparams, true);
        if (p->dp > 1 && p->zero_stage == 3) {
            for (int l = 0; l < c.stage_l0[s + 1] - c.stage_l0[s]; l++)
                g_array_append_val(ends, b.layer_bwd_end[s][l]);
            if (s == 0 || s == pp - 1) { /* embeddings: one more reduce-scatter */
                double hp = params - (c.stage_l0[s + 1] - c.stage_l0[s]) * c.layer_params;
                double t = coll_use(&c, "grad_reducescatter", "dp", c.dp_group, COLL_REDUCESCATTER,
                                    hp * c.grad_bytes_per_param * p->compression, s == 0 ? 1 : 0);
                int rs = task(g, "grad_reducescatter", b.res[s].comm, t, "comm");
                dep(g, last_bwd, rs);
                g_array_append_val(ends, rs);
            }
        }
        StageRes *r = &b.res[s];
        double shard = p->zero_stage >= 1 ? 1.0 / p->dp : 1.0; /* dp 1: the whole update */
        if ((p->zero_stage == 1 || p->zero_stage == 2) && p->dp > 1) {
            /* per bucket: update the shard, then all-gather the new weights;
             * the gathers overlap the next bucket's update */
            for (guint k = 0; k < bparams->len; k++) {
                double bp = g_array_index(bparams, double, k);
                int o = task(g, "optimizer", r->compute, accel_mem_time(c.acc, bp * shard * c.opt_bytes_per_param),
                             "optimizer");
                dep(g, g_array_index(ends, int, k), o);
                dep(g, last_bwd, o);
                if (c.ag_overlap) /* gathered behind the next step's forward (stage_pass) */
                    continue;
                double t = coll_use(&c, "param_allgather", "dp", c.dp_group, COLL_ALLGATHER, bp * c.param_bytes,
                                    s == 0 ? 1 : 0);
                int ag = task(g, "param_allgather", r->comm, t, "comm");
                dep(g, o, ag);
            }
        } else {
            int o = task(g, "optimizer", r->compute, accel_mem_time(c.acc, params * shard * c.opt_bytes_per_param),
                         "optimizer");
            dep(g, last_bwd, o);
            for (guint k = 0; k < ends->len; k++)
                dep(g, g_array_index(ends, int, k), o);
        }
    }
    SimEngine *e = sim_engine_new();
    sim_time_t span = sim_graph_run(g, e, NULL);
    sim_engine_free(e);
    cJSON *out = NULL;
    if (span == SIM_TIME_NEVER) {
        g_set_error(err, SIM_ERROR, SIM_ERROR_INTERNAL, "%s: the step's task graph has a cycle", step_scenario_path(sc));
        goto done;
    }
    double step = sim_time_to_s(span);

    /* breakdown on the busiest stage */
    size_t nt = sim_graph_num_tasks(g);
    double *busy = g_new0(double, pp), *optt = g_new0(double, pp);
    int nres = sim_graph_num_resources(g);
    int *stage_of_res = g_new(int, nres);
    int *kind_of_res = g_new(int, nres); /* 0 compute, 1 comm-like */
    for (int k = 0; k < nres; k++)
        stage_of_res[k] = -1;
    for (int s = 0; s < pp; s++) {
        stage_of_res[b.res[s].compute] = s, kind_of_res[b.res[s].compute] = 0;
        stage_of_res[b.res[s].comm] = s, kind_of_res[b.res[s].comm] = 1;
        stage_of_res[b.res[s].tp] = s, kind_of_res[b.res[s].tp] = 1;
        stage_of_res[b.res[s].p2p] = s, kind_of_res[b.res[s].p2p] = 1;
    }
    for (size_t t = 0; t < nt; t++) {
        int rs = sim_graph_task_resource(g, (int)t);
        if (rs < 0 || kind_of_res[rs] != 0)
            continue;
        double d = sim_time_to_s(sim_graph_task_end(g, (int)t) - sim_graph_task_start(g, (int)t));
        if (!strcmp(sim_graph_task_category(g, (int)t), "optimizer"))
            optt[stage_of_res[rs]] += d;
        else
            busy[stage_of_res[rs]] += d;
    }
    int bs = 0;
    for (int s = 1; s < pp; s++)
        if (busy[s] + optt[s] > busy[bs] + optt[bs] + 1e-15)
            bs = s;
    Iv *comp = g_new(Iv, nt), *comm = g_new(Iv, nt);
    size_t ncomp = 0, ncomm = 0;
    for (size_t t = 0; t < nt; t++) {
        int rs = sim_graph_task_resource(g, (int)t);
        if (rs < 0 || stage_of_res[rs] != bs)
            continue;
        Iv v = {sim_graph_task_start(g, (int)t), sim_graph_task_end(g, (int)t)};
        if (v.end <= v.start)
            continue;
        if (kind_of_res[rs] == 0)
            comp[ncomp++] = v;
        else
            comm[ncomm++] = v;
    }
    ncomp = iv_merge(comp, ncomp);
    ncomm = iv_merge(comm, ncomm);
    double exposed = iv_minus(comm, ncomm, comp, ncomp);
    double compute = busy[bs], opt = optt[bs];
    double bubble = step - compute - opt - exposed;
    if (bubble < 0)
        bubble = 0;

    /* memory: the stage that needs most */
    MemoryBreakdown mem = {0};
    int mem_stage = 0;
    const WorkloadTransformer *tr = workload_transformer(c.w);
    for (int s = 0; s < pp; s++) {
        MemoryConfig mc = memory_config_default();
        mc.params = stage_params(&c, s);
        mc.dp = p->dp;
        mc.zero_stage = p->zero_stage;
        mc.precision = step_scenario_precision(sc);
        mc.fp32_grad_accum = c.fp32_grads;
        mc.optimizer = step_scenario_optimizer(sc);
        mc.bucket_bytes = p->dp > 1 ? p->bucket_bytes : 0;
        mc.zero3_gathered_params = p->zero_stage == 3 ? 2 * c.layer_params : 0;
        int nl = c.stage_l0[s + 1] - c.stage_l0[s];
        mc.activation_bytes = 0;
        for (int l = c.stage_l0[s]; l < c.stage_l0[s + 1]; l++)
            mc.activation_bytes += workload_layer_activation_bytes(c.w, l, step_scenario_micro_batch(sc), &c.wp);
        (void)nl;
        mc.inflight_microbatches = pp == 1 ? 1 : p->gpipe ? m : memory_1f1b_inflight(pp, s, m);
        MemoryBreakdown mbk;
        if (!memory_estimate(&mc, &mbk, err))
            goto done_stats;
        if (s == 0 || mbk.total > mem.total) {
            mem = mbk;
            mem_stage = s;
        }
    }

    /* FLOPs */
    {
        WorkloadParallel one = c.wp;
        one.tp = 1;
        one.sequence_parallel = false;
        double B = step_scenario_global_batch(sc);
        double layer_f = 0;
        for (int l = 0; l < tr->layers; l++)
            layer_f += workload_layer_forward_flops(c.w, l, 1, &one);
        double head_f = workload_head_forward_flops(c.w, 1, &one);
        double model_flops = 3 * B * (layer_f + head_f);
        double hw_flops = model_flops;
        if (p->recompute == WORKLOAD_RECOMPUTE_FULL)
            hw_flops += B * layer_f;
        else if (p->recompute == WORKLOAD_RECOMPUTE_SELECTIVE) {
            WorkloadGemm gg[WORKLOAD_MAX_GEMMS];
            int ng = workload_layer_gemms(c.w, 0, 1, &one, gg);
            for (int i = 0; i < ng; i++)
                if (!strcmp(gg[i].name, "attn_score") || !strcmp(gg[i].name, "attn_value"))
                    hw_flops += B * tr->layers * workload_gemm_flops(&gg[i]);
        }
        double peak = accel_peak_flops(c.acc, step_scenario_dtype(sc));
        out = cJSON_CreateObject();
        cJSON_AddStringToObject(out, "scenario", step_scenario_name(sc));
        cJSON_AddStringToObject(out, "variant", step_scenario_variant_label(sc, variant));
        cJSON_AddNumberToObject(out, "step_time_s", step);
        /* what a planner should not miss: the chips computed are not the
         * topology's own, or most of the machine sits idle */
        cJSON *warn = cJSON_CreateArray();
        const char *ta = topo_accelerator(c.topo);
        if (step_scenario_accel_given(sc) && ta && strcmp(ta, accel_name(c.acc)) != 0) {
            char *w = g_strdup_printf("the scenario computes on %s, but topology %s describes %s", accel_name(c.acc),
                                      topo_name(c.topo), ta);
            cJSON_AddItemToArray(warn, cJSON_CreateString(w));
            g_free(w);
        }
        if (c.devices * 2 <= topo_num_ranks(c.topo)) {
            char *w = g_strdup_printf("dp x tp x pp = %d uses %d of the topology's %d ranks", c.devices, c.devices,
                                      topo_num_ranks(c.topo));
            cJSON_AddItemToArray(warn, cJSON_CreateString(w));
            g_free(w);
        }
        if (cJSON_GetArraySize(warn) > 0)
            cJSON_AddItemToObject(out, "warnings", warn);
        else
            cJSON_Delete(warn);
        cJSON *bd = cJSON_AddObjectToObject(out, "breakdown");
        cJSON_AddNumberToObject(bd, "compute", compute);
        cJSON_AddNumberToObject(bd, "exposed_communication", exposed);
        cJSON_AddNumberToObject(bd, "optimizer", opt);
        cJSON_AddNumberToObject(bd, "pipeline_bubble", bubble);
        cJSON_AddNumberToObject(bd, "stage", bs);
        cJSON *mj = cJSON_AddObjectToObject(out, "memory_per_device_bytes");
        cJSON_AddNumberToObject(mj, "weights", mem.params);
        cJSON_AddNumberToObject(mj, "gradients", mem.grads);
        cJSON_AddNumberToObject(mj, "optimizer_state", mem.optimizer);
        cJSON_AddNumberToObject(mj, "activations", mem.activations);
        cJSON_AddNumberToObject(mj, "buffers", mem.buffers);
        cJSON_AddNumberToObject(mj, "reserve", mem.reserve);
        cJSON_AddNumberToObject(mj, "total", mem.total);
        cJSON_AddNumberToObject(mj, "stage", mem_stage);
        cJSON_AddNumberToObject(mj, "hbm", accel_hbm_bytes(c.acc));
        cJSON_AddBoolToObject(out, "fits", memory_fits(&mem, accel_hbm_bytes(c.acc)));
        cJSON_AddNumberToObject(out, "mfu", model_flops / (step * c.devices * peak));
        cJSON_AddNumberToObject(out, "flops_per_device", hw_flops / (step * c.devices));
        cJSON_AddNumberToObject(out, "model_flops_per_step", model_flops);
        cJSON_AddNumberToObject(out, "hardware_flops_per_step", hw_flops);
        cJSON_AddNumberToObject(out, "samples_per_s", B / step);
        cJSON_AddNumberToObject(out, "tokens_per_s", B * workload_tokens_per_sample(c.w) / step);
        cJSON_AddNumberToObject(out, "samples_per_s_per_device", B / step / c.devices);
        cJSON *cfg = cJSON_AddObjectToObject(out, "config");
        cJSON_AddStringToObject(cfg, "model", workload_name(c.w));
        cJSON_AddNumberToObject(cfg, "params", workload_params_total(c.w));
        cJSON_AddStringToObject(cfg, "accelerator", accel_name(c.acc));
        cJSON_AddStringToObject(cfg, "topology", topo_name(c.topo));
        cJSON_AddNumberToObject(cfg, "devices", c.devices);
        cJSON_AddNumberToObject(cfg, "topology_ranks", topo_num_ranks(c.topo));
        char *used = c.devices == topo_num_ranks(c.topo)
                         ? g_strdup_printf("all %d ranks", c.devices)
                         : g_strdup_printf("ranks 0-%d of %d", c.devices - 1, topo_num_ranks(c.topo));
        cJSON_AddStringToObject(cfg, "devices_used", used);
        g_free(used);
        cJSON_AddNumberToObject(cfg, "dp", p->dp);
        /* the one dp rule, said where the figure is read */
        cJSON_AddStringToObject(cfg, "dp_from", step_scenario_dp_given(sc) ? "the scenario" : "ranks / (tp x pp)");
        cJSON_AddNumberToObject(cfg, "tp", p->tp);
        cJSON_AddNumberToObject(cfg, "pp", p->pp);
        cJSON_AddNumberToObject(cfg, "zero_stage", p->zero_stage);
        cJSON_AddStringToObject(cfg, "weight_update", p->zero_stage ? "sharded" : "replicated");
        cJSON_AddBoolToObject(cfg, "allgather_overlap", c.ag_overlap);
        cJSON_AddStringToObject(cfg, "grad_reduce_dtype", accel_dtype_name(c.grad_dtype));
        cJSON_AddNumberToObject(cfg, "micro_batches", m);
        cJSON_AddNumberToObject(cfg, "micro_batch", step_scenario_micro_batch(sc));
        cJSON_AddNumberToObject(cfg, "global_batch", step_scenario_global_batch(sc));
        cJSON_AddStringToObject(cfg, "precision", accel_dtype_name(step_scenario_dtype(sc)));
        cJSON_AddStringToObject(cfg, "schedule", p->gpipe ? "gpipe" : "1f1b");
        cJSON_AddStringToObject(cfg, "recompute",
                                p->recompute == WORKLOAD_RECOMPUTE_FULL        ? "full"
                                : p->recompute == WORKLOAD_RECOMPUTE_SELECTIVE ? "selective"
                                                                               : "none");
        cJSON_AddNumberToObject(cfg, "graph_tasks", (double)nt);
        cJSON_AddItemToObject(out, "collectives", coll_report(&c));
        cJSON *ct = cJSON_AddObjectToObject(out, "dp_contention");
        cJSON_AddNumberToObject(ct, "factor", c.dp_factor);
        cJSON_AddNumberToObject(ct, "groups_simulated", c.dp_flow_groups);
        cJSON_AddNumberToObject(ct, "flow_time_alone_s", c.dp_flow_alone_s);
        cJSON_AddNumberToObject(ct, "flow_time_concurrent_s", c.dp_flow_concurrent_s);
    }
done_stats:
    g_free(busy);
    g_free(optt);
    g_free(stage_of_res);
    g_free(kind_of_res);
    g_free(comp);
    g_free(comm);
done:
    if (graph_out && out)
        *graph_out = g;
    else
        sim_graph_free(g);
    for (int s = 0; s < pp; s++)
        g_free(b.layer_bwd_end[s]);
    g_free(b.layer_bwd_end);
    g_free(b.head_bwd_end);
    g_free(b.res);
    g_free(fw);
    g_free(bw);
    g_free(fsend);
    g_free(bsend);
    g_free(t_p2p);
    g_free(order_mb);
    g_free(order_dir);
    g_array_free(ends, TRUE);
    g_array_free(bparams, TRUE);
    ctx_free(&c);
    return out;
}

cJSON *step_scenario_run_all(const StepScenario *sc, GError **err)
{
    if (step_scenario_num_variants(sc) == 1)
        return step_scenario_run(sc, 0, NULL, err);
    cJSON *res[2] = {NULL, NULL};
    for (int v = 0; v < step_scenario_num_variants(sc); v++)
        if (!(res[v] = step_scenario_run(sc, v, NULL, err))) {
            cJSON_Delete(res[0]);
            return NULL;
        }
    cJSON *top = cJSON_Duplicate(res[0], true);
    cJSON *vars = cJSON_AddArrayToObject(top, "variants");
    cJSON *cmp = cJSON_CreateObject();
    double t0 = cJSON_GetObjectItem(res[0], "step_time_s")->valuedouble;
    double t1 = cJSON_GetObjectItem(res[1], "step_time_s")->valuedouble;
    double m0 = cJSON_GetObjectItem(cJSON_GetObjectItem(res[0], "memory_per_device_bytes"), "total")->valuedouble;
    double m1 = cJSON_GetObjectItem(cJSON_GetObjectItem(res[1], "memory_per_device_bytes"), "total")->valuedouble;
    cJSON_AddStringToObject(cmp, "baseline", step_scenario_variant_label(sc, 0));
    cJSON_AddStringToObject(cmp, "other", step_scenario_variant_label(sc, 1));
    cJSON_AddNumberToObject(cmp, "speedup", t0 / t1);
    cJSON_AddNumberToObject(cmp, "step_time_saved_s", t0 - t1);
    cJSON_AddNumberToObject(cmp, "memory_saved_bytes", m0 - m1);
    cJSON_AddStringToObject(cmp, "faster", t1 < t0 ? step_scenario_variant_label(sc, 1) : step_scenario_variant_label(sc, 0));
    for (int v = 0; v < step_scenario_num_variants(sc); v++)
        cJSON_AddItemToArray(vars, res[v]);
    cJSON_AddItemToObject(top, "comparison", cmp);
    return top;
}

cJSON *step_run_text(const char *name, const char *json_text, GError **err)
{
    StepScenario *sc = step_scenario_parse(name, json_text, strlen(json_text), err);
    if (!sc)
        return NULL;
    cJSON *out = step_scenario_run_all(sc, err);
    step_scenario_free(sc);
    return out;
}
