/* The step builder: one variant of a scenario becomes a task graph, is run
 * on sim/'s engine, and is reported (step_report.c).  This file composes
 * the concerns: it sets up their costs (ctx_init), builds each stage's
 * chain of passes in the pipeline's order, a pass being layer after layer
 * of compute with what tensor parallelism, ZeRO and recomputation add to
 * it, then the sends between stages, the gradient synchronisation and the
 * weight update.  Each concern's tasks and costs live in its own file:
 * par_tp.c, par_pipeline.c, par_dp.c, par_zero.c, par_contention.c,
 * step_compute.c (see step_build.h). */
#include "step.h"
#include "step_build.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

int step_task(SimGraph *g, const char *name, int res, double seconds, const char *cat)
{
    int t = sim_graph_task(g, name, res, sim_time_from_s(seconds));
    sim_graph_task_set_info(g, t, cat, 0);
    return t;
}

CollGroup *step_group_new(const Ctx *c, const int *ids, int n, GError **err)
{
    CollGroup *g = coll_group_new_with(c->topo, ids, n, step_scenario_coll_params(c->sc), err);
    if (g) { /* the scenario's process layout, library and NCCL version, for every group of the step */
        coll_group_set_gpus_per_thread(g, step_scenario_gpus_per_process(c->sc));
        int lib = step_scenario_nccl_library(c->sc);
        coll_group_set_library(g, lib >= 0 ? (CollLibrary)lib : coll_library_default(c->topo));
        coll_group_set_nccl_version(g, step_scenario_nccl_version(c->sc));
        coll_group_set_fabric(g, true); /* but the dp and replica groups' (dp_init, rep_init) */
    }
    return g;
}

/* The job rank of stage s's tp x dp index j. */
static int rank_of_j(const Ctx *c, int s, int j) { return step_rank_of(c, s, j / c->p.tp, j % c->p.tp); }

void step_siblings_strided(const Ctx *c, CollGroup *g, int s, int stride, int n)
{
    int J = c->p.dp * c->p.tp, per = n * stride, s0 = s < 0 ? 0 : s, s1 = s < 0 ? c->p.pp : s + 1;
    if (!g || c->bound_only || stride < 1 || n < 2 || J % per || (s1 - s0) * (J / n) < 2)
        return;
    int count = (s1 - s0) * (J / n) - 1, *ids = g_new(int, (size_t)count * n), k = 0;
    for (int st = s0; st < s1; st++)
        for (int b = 0; b < J / per; b++)
            for (int o = 0; o < stride; o++)
                for (int i = 0; i < n && (st > s0 || b || o); i++)
                    ids[k++] = rank_of_j(c, st, b * per + o + i * stride);
    coll_group_set_siblings(g, ids, count);
    g_free(ids);
}

void step_siblings_pairs(const Ctx *c, CollGroup *g, int s, int s2, int count,
                         void (*pair_j)(const Ctx *c, int k, int arg, int *j, int *j2), int arg)
{
    if (!g || c->bound_only || count < 2)
        return;
    int *ids = g_new(int, 2 * (size_t)(count - 1));
    for (int k = 1; k < count; k++) {
        int j, j2;
        pair_j(c, k, arg, &j, &j2);
        ids[2 * (k - 1)] = rank_of_j(c, s, j);
        ids[2 * (k - 1) + 1] = rank_of_j(c, s2, j2);
    }
    coll_group_set_siblings(g, ids, count - 1);
    g_free(ids);
}

int step_pair_kind(const Ctx *c, int a, int b)
{
    if (topo_node_of(c->topo, a) == topo_node_of(c->topo, b))
        return 0;
    return topo_route_on_fabric(c->topo, a, b) ? 2 : 1;
}

void step_dep(SimGraph *g, int before, int after)
{
    if (before >= 0 && after >= 0)
        sim_graph_depend(g, before, after);
}

/* A use of g for `op` (p2p: a send over a pair) of `bytes`, added once. */
static int add_use(Ctx *c, const char *name, const char *group_name, const CollGroup *g, CollOp op, double bytes,
                   bool p2p)
{
    if (!g || coll_group_size(g) < 2 || bytes <= 0)
        return -1;
    for (guint i = 0; i < c->colls->len; i++) {
        const CollUse *u = &g_array_index(c->colls, CollUse, i);
        if (!strcmp(u->name, name) && u->bytes == bytes && u->g == g && u->op == op)
            return (int)i;
    }
    CollCost cost;
    if (!(p2p ? coll_p2p_cost(g, bytes, &cost) : coll_cost(g, op, COLL_ALGO_AUTO, COLL_PROTO_AUTO, bytes, &cost)))
        return -1;
    if (isnan(cost.fabric_factor) && !c->fabric_warning)
        c->fabric_warning = g_strdup_printf("the fabric above the NICs was not routed for %s over %d ranks (more flows "
                                            "than coll_fabric.c routes): its collectives are timed as on a "
                                            "non-blocking fabric", name, coll_group_size(g));
    double f = g == c->dp_group ? c->dp_ct.factor : g == c->rep_group ? c->rep_ct.factor : 1;
    if (f > 1) {
        cost.time_s *= f;
        cost.algbw_Bps /= f;
    }
    CollUse u = {name, group_name, op, NULL, g, coll_group_size(g), bytes, cost};
    g_array_append_val(c->colls, u);
    return (int)c->colls->len - 1;
}

int step_coll(Ctx *c, const char *name, const char *group_name, const CollGroup *g, CollOp op, double bytes)
{
    return add_use(c, name, group_name, g, op, bytes, false);
}

int step_p2p(Ctx *c, const char *name, const char *group_name, const CollGroup *g, double bytes, bool recv)
{
    int u = add_use(c, name, group_name, g, COLL_BROADCAST, bytes, true);
    if (u >= 0)
        g_array_index(c->colls, CollUse, u).op_name = recv ? "recv" : "send";
    return u;
}

double step_coll_time(const Ctx *c, int use)
{
    return use < 0 ? 0 : g_array_index(c->colls, CollUse, use).cost.time_s;
}

void step_coll_tag(Build *b, int task, int use, int times, int stage)
{
    if (use < 0 || task < 0 || times <= 0)
        return;
    CollTag t = {task, use, times, stage};
    g_array_append_val(b->tags, t);
    /* the bytes the task moves, for timelines (a send's receive is the same bytes) */
    const CollUse *u = &g_array_index(b->c->colls, CollUse, use);
    if (!u->op_name || strcmp(u->op_name, "recv") != 0)
        sim_graph_task_set_info(b->g, task, sim_graph_task_category(b->g, task),
                                sim_graph_task_bytes(b->g, task) + u->bytes * times);
}

int step_coll_task(Build *b, const char *name, int s, int res, int use, const char *cat)
{
    const CollUse *u = &g_array_index(b->c->colls, CollUse, use);
    int t = step_task(b->g, name ? name : u->name, res, u->cost.time_s, cat);
    step_coll_tag(b, t, use, 1, s);
    return t;
}

/* The variant's costs.  The order is the report's order of collectives:
 * tensor parallel, then pipeline sends, then what the passes use. */
static bool ctx_init(Ctx *c, const StepScenario *sc, int variant, bool bound_only, GError **err)
{
    memset(c, 0, sizeof *c);
    c->bound_only = bound_only;
    c->tp_use[0] = c->tp_use[1] = c->tp_use[2] = -1;
    c->sc = sc;
    c->p = step_scenario_plan(sc, variant);
    c->w = step_scenario_workload(sc);
    c->colls = g_array_new(FALSE, TRUE, sizeof(CollUse));
    c->topo = step_scenario_topo(sc);
    c->acc = step_scenario_accel(sc);
    const StepPlan *p = &c->p;
    c->m = step_scenario_global_batch(sc) / (p->dp * step_scenario_micro_batch(sc));
    /* checked with the scenario; a schedule of them all where it would not divide */
    c->m_flush = p->pp_microbatches > 0 && c->m % p->pp_microbatches == 0 ? p->pp_microbatches : c->m;
    /* context parallelism: the cp ranks of a sequence hold the same weights,
     * so from here on dp counts them too (Megatron-LM reduces gradients and
     * shards the optimizer over dp x cp); ranks are tp-cp-dp-pp */
    c->dp_data = p->dp;
    c->p.dp *= p->cp;
    c->devices = p->dp * p->tp * p->pp;
    c->zero_ranks = p->shard_group > 0 ? p->shard_group : p->dp;
    c->wp = workload_parallel_default();
    c->wp.tp = p->tp;
    c->wp.sequence_parallel = p->sequence_parallel;
    c->wp.sp_gathered_inputs = p->sequence_parallel && p->tp_dtensor;
    c->wp.recompute = p->recompute;
    c->wp.recompute_modules = p->recompute_modules & ~(unsigned)WORKLOAD_RC_CORE_ATTN;
    c->wp.act_bytes = accel_dtype_bytes(step_activation_dtype(c));
    c->wp.fused_attention = step_scenario_attention(sc) != STEP_ATTN_UNFUSED;
    c->wp.eager_elementwise = step_scenario_eager_elementwise(sc);
    c->wp.recompute_keep = p->recompute_keep;
    /* Transformer Engine's FP8 linear layers keep their inputs in FP8 */
    c->wp.linear_input_bytes = step_scenario_precision(sc) == MEMORY_MIXED_FP8 ? 1 : 0;
    c->wp.fp8_save_original = step_scenario_precision(sc) == MEMORY_MIXED_FP8 && step_scenario_fp8_recipe(sc) != FP8_DELAYED;
    c->wp.ep = p->ep;
    c->wp.etp = p->etp;
    c->wp.capacity_factor = p->capacity_factor;
    c->wp.ep_deepep = p->ep_dispatcher == STEP_EP_DEEPEP;
    c->wp.cp = p->cp;
    c->wp.act_func_input_bytes = step_scenario_act_func_fp8(sc) ? 1 : 0;
    c->wp.attn_io_bytes = step_scenario_fp8_dpa(sc) ? 1 : 0;
    finetune_apply(step_scenario_finetune(sc), &c->wp);
    pipeline_partition(c);
    if (!tp_init(c, err) || !cp_init(c, err) || !moe_init(c, err) || !dp_init(c, err) || !zero_init(c, err) ||
        !zeropp_init(c, err) ||
        !pipeline_init(c, err))
        return false;
    compute_costs(c);
    pact_costs(c);
    tp_overlap_costs(c);
    moe_overlap_costs(c);
    dp_costs(c);
    zero_fsdp2_costs(c);
    dp_contention(c);
    return true;
}

static void ctx_free(Ctx *c)
{
    pipeline_free(c);
    moe_free(c);
    coll_group_free(c->cp_group);
    coll_group_free(c->cp_all_group);
    coll_group_free(c->rep_group);
    zeropp_free(c);
    g_free(c->l_fwd);
    g_free(c->l_bwd);
    g_free(c->l_params);
    g_free(c->chunk_layers);
    coll_group_free(c->tp_group);
    coll_group_free(c->dp_group);
    g_free(c->dp_ct.warning);
    g_free(c->fabric_warning);
    g_free(c->rep_ct.warning);
    if (c->colls)
        g_array_free(c->colls, TRUE);
}

/* One stream per kind of work on each stage's device. */
static void build_init(Build *b, Ctx *c)
{
    int pp = c->p.pp;
    *b = (Build){.c = c, .g = sim_graph_new(), .tags = g_array_new(FALSE, FALSE, sizeof(CollTag))};
    b->res = g_new(StageRes, pp);
    b->layer_bwd_end = g_new(int *, pp);
    b->head_bwd_end = g_new(int, pp);
    b->offload_d2h = g_new(int, c->p.offload_layers + 1);
    b->fw = g_new(Span, (size_t)pp * c->p.vpp * c->m);
    b->bw = g_new(Span, (size_t)pp * c->p.vpp * c->m);
    static const char *const kinds[] = {"compute", "comm", "tp", "p2p"};
    for (int s = 0; s < pp; s++) {
        int r = step_rank_of(c, s, 0, 0);
        int *ids[] = {&b->res[s].compute, &b->res[s].comm, &b->res[s].tp, &b->res[s].p2p};
        b->res[s].rank = r;
        for (int k = 0; k < 4; k++) {
            char name[64];
            snprintf(name, sizeof name, "gpu%d.%s", r, kinds[k]);
            *ids[k] = sim_graph_resource(b->g, name);
        }
        b->res[s].host = b->res[s].p2p;
        if (c->p.offload_optimizer || c->p.offload_layers || c->p.cpu_checkpointing) {
            char name[64];
            snprintf(name, sizeof name, "gpu%d.host", r);
            b->res[s].host = sim_graph_resource(b->g, name);
        }
        int nl = step_stage_layers(c, s);
        b->layer_bwd_end[s] = g_new(int, nl);
        for (int l = 0; l < nl; l++)
            b->layer_bwd_end[s][l] = -1;
        b->head_bwd_end[s] = -1;
    }
}

/* Frees the build; its graph too unless handed over. */
static void build_free(Build *b, bool keep_graph)
{
    if (!keep_graph)
        sim_graph_free(b->g);
    for (int s = 0; s < b->c->p.pp; s++)
        g_free(b->layer_bwd_end[s]);
    g_free(b->layer_bwd_end);
    g_free(b->head_bwd_end);
    g_free(b->offload_d2h);
    g_free(b->res);
    g_free(b->unstretched);
    g_free(b->fw);
    g_free(b->bw);
    g_array_free(b->tags, TRUE);
}

/* One layer's compute after `cur` and the layer's gathered weights `ag`,
 * then its tensor-parallel collective; records the span's first task and,
 * when `hist` is given, the compute task for ZeRO-3's prefetch; then a
 * mixture of experts' all-to-alls (t_ep).  Returns the last task. */
static int layer_tasks(Build *b, int s, const char *name, double t_comp, const char *tp_name, double t_tp, int cur,
                       int ag, Span *sp, int *hist, const char *ep_name, double t_ep)
{
    int t = step_task(b->g, name, b->res[s].compute, t_comp, "compute");
    step_dep(b->g, cur, t);
    step_dep(b->g, ag, t);
    if (sp->first < 0)
        sp->first = t;
    if (hist) {
        hist[0] = hist[1];
        hist[1] = t;
    }
    /* ring attention's exposed KV passing (par_cp.c), then a mixture of
     * experts' dispatch and combine (par_moe.c) */
    t = cp_after(b, s, tp_name, t);
    return moe_after(b, s, ep_name, t_ep, tp_after(b, s, tp_name, t_tp, t));
}

/* One micro-batch's forward through chunk j of stage s after `prev` (the
 * stage's layers, or their j-th of vpp under interleaving). */
static Span forward_pass(Build *b, int s, int j, int mbi, int prev)
{
    Ctx *c = b->c;
    Span sp = {-1, -1};
    ZeroPass z;
    zero_pass_begin(&z, b, s, j, mbi, 0, prev);
    int cur = prev;
    for (int l = step_chunk_l0(c, s, j); l < step_chunk_l0(c, s, j + 1); l++) {
        sim_graph_set_default_tag(b->g, SIM_TAG_LAYER, c->stage_l0[s] + l);
        int ag = zero_layer_gather(&z, b, s, l);
        cur = layer_tasks(b, s, "forward", step_layer_fwd(c, s, l), "tp_forward", c->t_tp_fwd, cur, ag, &sp, z.hist, "ep_forward", step_layer_ep(c, s, l, c->t_ep_fwd));
        cur = pact_forward_end(b, s, l, cur);
    }
    sim_graph_set_default_tag(b->g, SIM_TAG_LAYER, -1);
    if (s == c->p.pp - 1 && j == c->p.vpp - 1) {
        int t = step_task(b->g, "head_forward", b->res[s].compute, c->t_head_fwd, "compute");
        step_dep(b->g, cur, t);
        /* the last stage's copy of tied word embeddings (pp > 1) */
        double extra = pipeline_stage_params(c, s) - step_stage_layer_params(c, s) - (s == 0 ? c->head_params : 0);
        step_dep(b->g, zero_head_gather(&z, b, s, extra), t);
        if (sp.first < 0)
            sp.first = t;
        cur = t;
    }
    sp.last = cur;
    return sp;
}

/* One micro-batch's backward through stage s after `prev`: per layer,
 * recomputation first when asked.  Notes when each layer's gradients are
 * ready for the buckets (the last micro-batch's; every one under ZeRO-2). */
static Span backward_pass(Build *b, int s, int j, int mbi, int prev, bool last_mb)
{
    Ctx *c = b->c;
    bool note = last_mb || c->p.zero_stage == 2;
    Span sp = {-1, -1};
    ZeroPass z;
    zero_pass_begin(&z, b, s, j, mbi, 1, prev);
    int cur = prev;
    if (s == c->p.pp - 1 && j == c->p.vpp - 1) {
        int t = step_task(b->g, "head_backward", b->res[s].compute, c->t_head_bwd, "compute");
        step_dep(b->g, cur, t);
        sp.first = t;
        cur = t;
        if (last_mb || c->p.zero_stage >= 2)
            b->head_bwd_end[s] = t;
    }
    /* Lynx (par_pact.c): a recomputation waits only for the layer above's
     * backward compute (the pass's start for the first), not for its
     * communication; the span starts with the backward proper */
    bool lynx = c->p.recompute_overlap, defer_rs = z.z3_rs && c->p.pp > 1;
    int rc_after = prev, rc_prev = -1, above = prev;
    for (int l = step_chunk_l0(c, s, j + 1) - 1; l >= step_chunk_l0(c, s, j); l--) {
        sim_graph_set_default_tag(b->g, SIM_TAG_LAYER, c->stage_l0[s] + l);
        int ag = zero_layer_gather(&z, b, s, l), wait = ag;
        int before = cur, prefetch = above; /* the next layer's activations come back from here */
        cur = pact_before_backward(b, s, l, above, cur);
        above = before;
        if (step_layer_recompute(c, s, l) > 0) {
            Span rsp = {-1, -1};
            /* Lynx fetches the checkpoint during the layer above's
             * recomputation, ahead of that layer's backward all-reduces */
            int from = lynx ? (rc_prev >= 0 ? rc_prev : rc_after) : cur;
            int ck = pact_before_recompute(b, s, from, prefetch);
            int rc = layer_tasks(b, s, "recompute", step_layer_recompute(c, s, l), "tp_recompute",
                                 step_layer_tp_recompute(c, s, l),
                                 ck >= 0 ? ck : from, ag, lynx ? &rsp : &sp, NULL, "ep_recompute",
                                 step_layer_ep(c, s, l, c->t_ep_recompute));
            if (lynx) {
                step_dep(b->g, rc_after, rsp.first);
                rc_prev = rsp.first;
                wait = rc; /* rc waited for ag */
            } else
                cur = rc;
        }
        cur = layer_tasks(b, s, "backward", step_layer_bwd(c, s, l), "tp_backward", c->t_tp_bwd, cur, wait, &sp, z.hist, "ep_backward", step_layer_ep(c, s, l, c->t_ep_bwd));
        rc_after = z.hist[1]; /* this layer's backward compute */
        int ready = defer_rs ? cur : zero_layer_reduce(&z, b, s, l, cur);
        if (note)
            b->layer_bwd_end[s][l] = ready;
    }
    /* a pipeline stage's FSDP gradients reduce-scattered after its last
     * backward of the schedule, every layer at once (PyTorch's pipelining
     * runs FSDP's post-backward for the whole stage then) */
    for (int l = step_chunk_l0(c, s, j + 1) - 1; defer_rs && l >= step_chunk_l0(c, s, j); l--) {
        sim_graph_set_default_tag(b->g, SIM_TAG_LAYER, c->stage_l0[s] + l);
        int ready = zero_layer_reduce(&z, b, s, l, cur);
        if (note)
            b->layer_bwd_end[s][l] = ready;
    }
    sim_graph_set_default_tag(b->g, SIM_TAG_LAYER, -1);
    sp.last = cur;
    return sp;
}

/* Every stage's chain of passes in its pipeline order; op k waits for op
 * k-1 (program order).  A task's dependencies can be added after it, so
 * the chains come first and the sends between them afterwards. */
static void build_stages(Build *b)
{
    Ctx *c = b->c;
    int m = c->m;
    size_t n2 = 2 * (size_t)m * c->p.vpp;
    int *order_mb = g_new(int, n2), *order_dir = g_new(int, n2), *order_chunk = g_new(int, n2);
    for (int s = 0; s < c->p.pp; s++) {
        int n = pipeline_order(c, s, order_mb, order_dir, order_chunk);
        int prev = -1;
        for (int k = 0; k < n; k++) {
            int i = order_mb[k], j = order_chunk[k], x = step_span(c, s, j, i);
            bool last_mb = i == m - 1;
            sim_graph_set_default_tag(b->g, SIM_TAG_MICRO_BATCH, i); /* the pass's tasks, its buckets */
            if (order_dir[k] == 0) {
                b->fw[x] = forward_pass(b, s, j, i, prev);
                prev = b->fw[x].last;
            } else {
                dp_backward_begin(b, s);
                b->bw[x] = backward_pass(b, s, j, i, prev, last_mb);
                prev = b->bw[x].last;
                dp_backward_end(b, s, prev, last_mb);
            }
        }
    }
    sim_graph_set_default_tag(b->g, SIM_TAG_MICRO_BATCH, -1);
    g_free(order_mb);
    g_free(order_dir);
    g_free(order_chunk);
}

/* Data-parallel gradient synchronisation and the optimizer, per stage. */
static void build_update(Build *b)
{
    GArray *ends = g_array_new(FALSE, FALSE, sizeof(int));
    GArray *bparams = g_array_new(FALSE, FALSE, sizeof(double));
    for (int s = 0; s < b->c->p.pp; s++) {
        dp_sync_and_update(b, s, ends, bparams);
        moe_sync_and_update(b, s);
    }
    g_array_free(ends, TRUE);
    g_array_free(bparams, TRUE);
}

void step_memory_track(Build *b)
{
    const Ctx *c = b->c;
    for (int s = 0; s < c->p.pp; s++) {
        MemoryBreakdown mem;
        StepHostMemory host;
        if (!step_stage_memory(c, s, &mem, &host, NULL))
            continue; /* the report says why */
        int inflight = pipeline_inflight(c, s);
        double act = mem.activations / (inflight > 0 ? inflight : 1);
        char name[64];
        snprintf(name, sizeof name, "gpu%d.memory", b->res[s].rank);
        int k = sim_graph_counter(b->g, name, mem.total - mem.activations - mem.working_set);
        for (int j = 0; j < c->p.vpp; j++)
            for (int i = 0; i < c->m; i++) {
                const Span *f = &b->fw[step_span(c, s, j, i)], *w = &b->bw[step_span(c, s, j, i)];
                if (f->first < 0 || w->last < 0 || w->first < 0)
                    continue;
                sim_graph_counter_change(b->g, k, f->first, false, act);
                sim_graph_counter_change(b->g, k, w->last, true, -act);
                sim_graph_counter_change(b->g, k, w->first, false, mem.working_set);
                sim_graph_counter_change(b->g, k, w->last, true, -mem.working_set);
            }
    }
}

/* A step past the simulator's time: the input's doing, whether seen before
 * the graph is built or when it ran. */
static void time_range_error(const StepScenario *sc, GError **err)
{
    g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "%s: the step runs past " SIM_TIME_RANGE_TEXT
                ": an accelerator, a link or a batch far off the scale of training", step_scenario_path(sc));
}

/* ctx_init's errors come from the layout the scenario asks for (a group
 * the topology cannot hold, ...): at its file and "parallelism" line. */
static bool ctx_init_at(Ctx *c, const StepScenario *sc, int variant, bool bound_only, GError **err)
{
    if (ctx_init(c, sc, variant, bound_only, err))
        return true;
    const char *path = step_scenario_path(sc);
    if (err && *err && !g_str_has_prefix((*err)->message, path))
        g_prefix_error(err, "%s:%d: ", path, step_scenario_par_line(sc));
    return false;
}

cJSON *step_scenario_run(const StepScenario *sc, int variant, SimGraph **graph_out, GError **err)
{
    if (variant < 0 || variant >= step_scenario_num_variants(sc)) {
        g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "%s: no variant %d", step_scenario_path(sc), variant);
        return NULL;
    }
    Ctx c;
    if (!ctx_init_at(&c, sc, variant, false, err)) {
        ctx_free(&c);
        return NULL;
    }
    /* a stage's layer passes alone past the time range: refused before
     * its graph is built (a plan of such candidates built millions of
     * tasks to find each one past it) */
    double passes = (double)c.m * ((double)workload_num_layers(c.w) / c.p.pp) * (c.t_fwd + c.t_bwd);
    if (!(passes < sim_time_to_s(SIM_TIME_NEVER))) {
        time_range_error(sc, err);
        ctx_free(&c);
        return NULL;
    }
    Build b;
    build_init(&b, &c);
    build_stages(&b);
    pipeline_sends(&b);
    build_update(&b);
    if (graph_out)
        step_memory_track(&b);
    SimEngine *e = sim_engine_new();
    sim_time_t span = sim_graph_run(b.g, e, NULL);
    sim_engine_free(e);
    /* compute overlapped by communication runs slower: stretched and rerun to a fixed point */
    span = interfere_run(&b, span);
    cJSON *out = NULL;
    if (span == SIM_TIME_NEVER && sim_graph_overflowed(b.g))
        time_range_error(sc, err);
    else if (span == SIM_TIME_NEVER)
        g_set_error(err, SIM_ERROR, SIM_ERROR_INTERNAL, "%s: the step's task graph has a cycle", step_scenario_path(sc));
    else
        out = step_report(&b, variant, sim_time_to_s(span), err);
    if (graph_out && out)
        *graph_out = b.g;
    build_free(&b, graph_out && out);
    ctx_free(&c);
    return out;
}

/* Each stage's passes form one chain (program order: every op waits for
 * the one before, each layer's compute for its tensor-parallel collective);
 * stage b cannot start before the first micro-batch's forward has crossed
 * stages 0..b-1 (their first model chunk), runs m micro-batches' passes,
 * and its last backward still has to cross them back.  Whatever else the
 * step adds (sends, gathers, the gradient sync, interference) only
 * lengthens it. */
static double compute_lower_bound(const Ctx *c)
{
    double best = 0, before = 0;
    bool cp = c->p.cp > 1;
    /* a layer's chain: compute, then ring attention's exposed part, the
     * tensor-parallel collective, the experts' all-to-alls */
    double fwd = c->t_tp_fwd + (cp ? c->t_cp[0] : 0);
    double bwd = c->t_tp_bwd + (cp ? c->t_cp[2] : 0);
    double rec_cp = cp && c->p.recompute == WORKLOAD_RECOMPUTE_FULL ? c->t_cp[1] : 0;
    for (int s = 0; s < c->p.pp; s++) {
        double t = 0;
        for (int l = 0; l < step_stage_layers(c, s); l++)
            t += step_layer_fwd(c, s, l) + fwd + step_layer_ep(c, s, l, c->t_ep_fwd + c->t_ep_bwd) +
                 (step_layer_recompute(c, s, l) > 0 ? step_layer_recompute(c, s, l) + step_layer_tp_recompute(c, s, l) +
                                                          rec_cp + step_layer_ep(c, s, l, c->t_ep_recompute)
                                                    : 0) +
                 step_layer_bwd(c, s, l) + bwd;
        if (s == c->p.pp - 1)
            t += c->t_head_fwd + c->t_head_bwd;
        best = MAX(best, before + t * c->m);
        /* the first micro-batch's activations out and its gradients back */
        before += t / c->p.vpp + (s + 1 < c->p.pp ? 2 * c->t_p2p[s] : 0);
    }
    return best;
}

bool step_scenario_estimate(const StepScenario *sc, int variant, StepEstimate *e, GError **err)
{
    if (variant < 0 || variant >= step_scenario_num_variants(sc)) {
        g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "%s: no variant %d", step_scenario_path(sc), variant);
        return false;
    }
    Ctx c;
    MemoryBreakdown mem;
    int stage;
    StepHostMemory host;
    bool ok = ctx_init_at(&c, sc, variant, true, err) && step_peak_memory(&c, &mem, &stage, &host, err);
    if (ok) {
        e->memory_bytes = mem.total;
        e->fits = step_fits(&c, &mem);
        e->step_lower_bound_s = compute_lower_bound(&c);
    }
    ctx_free(&c);
    return ok;
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
