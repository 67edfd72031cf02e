/* The step's result: the breakdown of the busiest stage's time (compute,
 * exposed communication, optimizer, pipeline bubble) from the simulated
 * task times, the per-device memory of the stage that needs most, MFU and
 * FLOP/s, the configuration as run, the collectives used and the DP
 * contention; and the comparison of variants.  Keys and their order are
 * the `shardsim run --json` format. */
#include "step_build.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

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

typedef struct {
    double compute, exposed, optimizer, bubble;
    double interference; /* of compute: what overlapped communication kernels added */
    int stage;
} Breakdown;

/* Task times of the graph's compute streams, per stage: optimizer apart,
 * and of the rest what overlapped communication added (interf). */
static void busy_times(const Build *b, const int *stage_of_res, const int *kind_of_res, double *busy, double *optt,
                       double *interf)
{
    SimGraph *g = b->g;
    size_t nt = sim_graph_num_tasks(g);
    for (size_t t = 0; t < nt; t++) {
        int rs = sim_graph_task_resource(g, (int)t);
        if (rs < 0 || kind_of_res[rs] != 0)
            continue;
        double d = sim_time_to_s(sim_graph_task_end(g, (int)t) - sim_graph_task_start(g, (int)t));
        if (!strcmp(sim_graph_task_category(g, (int)t), "optimizer"))
            optt[stage_of_res[rs]] += d;
        else {
            busy[stage_of_res[rs]] += d;
            if (b->unstretched)
                interf[stage_of_res[rs]] += sim_time_to_s(sim_graph_task_duration(g, (int)t) - b->unstretched[t]);
        }
    }
}

/* Communication of stage bs not hidden behind its compute. */
static double exposed_comm(const Build *b, int bs, const int *stage_of_res, const int *kind_of_res)
{
    SimGraph *g = b->g;
    size_t nt = sim_graph_num_tasks(g);
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
    g_free(comp);
    g_free(comm);
    return exposed;
}

/* The breakdown on the busiest stage (compute and optimizer time). */
static Breakdown breakdown(const Build *b, double step)
{
    int pp = b->c->p.pp;
    double *busy = g_new0(double, pp), *optt = g_new0(double, pp), *interf = g_new0(double, pp);
    int nres = sim_graph_num_resources(b->g);
    int *stage_of_res = g_new(int, nres);
    int *kind_of_res = g_new(int, nres); /* 0 compute, 1 comm-like */
    for (int k = 0; k < nres; k++)
        stage_of_res[k] = -1;
    for (int s = 0; s < pp; s++) {
        stage_of_res[b->res[s].compute] = s, kind_of_res[b->res[s].compute] = 0;
        stage_of_res[b->res[s].comm] = s, kind_of_res[b->res[s].comm] = 1;
        stage_of_res[b->res[s].tp] = s, kind_of_res[b->res[s].tp] = 1;
        stage_of_res[b->res[s].p2p] = s, kind_of_res[b->res[s].p2p] = 1;
        stage_of_res[b->res[s].host] = s, kind_of_res[b->res[s].host] = 1;
    }
    busy_times(b, stage_of_res, kind_of_res, busy, optt, interf);
    int bs = 0;
    for (int s = 1; s < pp; s++)
        if (busy[s] + optt[s] > busy[bs] + optt[bs] + 1e-15)
            bs = s;
    Breakdown r = {.compute = busy[bs], .optimizer = optt[bs], .interference = interf[bs], .stage = bs};
    r.exposed = exposed_comm(b, bs, stage_of_res, kind_of_res);
    r.bubble = step - r.compute - r.optimizer - r.exposed;
    if (r.bubble < 1e-12 * step) /* the parts' rounding, not a bubble */
        r.bubble = 0;
    g_free(busy);
    g_free(optt);
    g_free(interf);
    g_free(stage_of_res);
    g_free(kind_of_res);
    return r;
}

/* A layer's largest weight per device (a transformer's linear layers; a
 * CNN's layer as a whole). */
static double xla_largest_weight(const Ctx *c)
{
    WorkloadGemm g[WORKLOAD_MAX_GEMMS];
    int n = workload_transformer(c->w) ? workload_layer_gemms(c->w, 0, 1, &c->wp, g) : 0;
    double most = n > 0 ? 0 : c->layer_params;
    for (int i = 0; i < n; i++)
        if (workload_gemm_linear(&g[i]))
            most = fmax(most, g[i].batch * g[i].n * g[i].k);
    return most;
}

bool step_stage_memory(const Ctx *c, int s, MemoryBreakdown *mbk, StepHostMemory *host, GError **err)
{
    const StepPlan *p = &c->p;
    MemoryConfig mc = memory_config_default();
    mc.params = pipeline_stage_params(c, s);
    mc.dp = c->zero_ranks; /* hybrid sharding: the shard group */
    mc.zero_stage = p->zero_stage;
    mc.precision = step_scenario_precision(c->sc);
    mc.fp32_grad_accum = c->fp32_grads;
    mc.fsdp_fp32_shards = p->zero_fsdp;
    mc.no_master = step_scenario_no_master(c->sc);
    mc.moment_bytes = step_scenario_moment_bytes(c->sc);
    mc.optimizer = step_scenario_optimizer(c->sc);
    mc.bucket_bytes = p->dp > 1 ? p->bucket_bytes : 0;
    mc.tp_overlap_bytes = tp_userbuffer_bytes(c);
    /* ZeRO-3 (FSDP): two layers gathered (the current one and the
     * prefetched next) and the root unit, the parameters outside the layers
     * (embeddings, final norm, output layer), which FSDP1 and FSDP2 do not
     * reshard after the forward (the backward needs them at once): gathered
     * from the forward's start to the backward's end.  Their reduce-scatter
     * stream's pool keeps the largest gradient it reduced in the reduce
     * dtype: the root unit's or two layers' (FSDP2 holds one reduce-scatter
     * input until the next is issued).  XLA instead gathers the parameters
     * outside the layers where they are used and frees them: at the peak,
     * the forward's end and the backward's start, the last stage holds the
     * output layer's alone (the input embedding's gradient needs no
     * gathered weight); it reduce-scatters each weight's gradient as the
     * backward makes it (combined only up to a few MiB to a few hundred:
     * the recipes' xla_gpu_reduce_scatter_combine_threshold_bytes), so the
     * full gradients held at once are the largest tensor's, not two
     * layers'; and its buffers are planned when the program compiles, with
     * no allocator's holes between them. */
    bool xla = step_scenario_framework(c->sc) == STEP_FRAMEWORK_JAX;
    if (xla)
        mc.fragmentation = 0;
    if (p->zero_stage == 3) {
        double root = mc.params - step_stage_layer_params(c, s);
        if (xla)
            root = s == c->p.pp - 1 ? fmin(root, pipeline_output_layer_params(c)) : 0;
        mc.zero3_gathered_params = 2 * c->layer_params + (c->zero_ranks > 1 ? root : 0);
        double held = xla ? xla_largest_weight(c) : 2 * c->layer_params;
        if (c->zero_ranks > 1)
            mc.stream_pool_bytes = fmax(root, held) * c->grad_bytes_per_param;
        /* under a pipeline the stage's weights stay gathered through a
         * schedule and its gradients accumulate whole, in the reduce dtype
         * (par_zero.c, zero_pass_begin) */
        if (c->p.pp > 1 && c->zero_ranks > 1 && !xla) {
            mc.zero3_gathered_params = mc.params;
            mc.stream_pool_bytes = mc.params * c->grad_bytes_per_param;
        }
    }
    /* FP8: TE's cached weight copies (the FP8 weight, none when the
     * parameter is FP8, and its transpose).  Under ZeRO-3 nothing is cached:
     * each layer's gathered weight is cast per pass and its FP8 copy (1 B
     * per parameter) saved for the backward, like an activation, unless the
     * parameters are FP8 ("fp8_param_gather"): TE then saves the gathered
     * parameter itself, whose storage FSDP frees after the forward and
     * gathers again for the backward (Megatron-Bridge also sets
     * keep_fp8_transpose_cache false under Megatron-FSDP).  A layer whose
     * forward ran checkpointed (full or per-op recomputation) saved no
     * copy: its recomputation casts the weight again. */
    bool fp8 = mc.precision == MEMORY_MIXED_FP8;
    mc.fp8_params = fp8 && step_scenario_fp8_params(c->sc);
    mc.fp8_copy_bytes = fp8_weight_copy_bytes(step_scenario_fp8_recipe(c->sc), accel_fp8_any_layout(c->acc), mc.fp8_params);
    bool fp8_saved = fp8 && p->zero_stage == 3 && !mc.fp8_params;
    mc.fp8_weight_params = fp8 && p->zero_stage != 3 && !c->wp.frozen_linears ? step_stage_layer_params(c, s) : 0;
    mc.activation_bytes = 0;
    WorkloadParallel kept = c->wp; /* a layer "recompute_layers" leaves out keeps everything */
    kept.recompute = WORKLOAD_RECOMPUTE_NONE;
    kept.recompute_modules = 0;
    bool checkpointed = p->recompute == WORKLOAD_RECOMPUTE_FULL || p->recompute == WORKLOAD_RECOMPUTE_OP;
    for (int l = c->stage_l0[s]; l < c->stage_l0[s + 1]; l++) {
        bool rec = step_layer_recomputed(c, s, l - c->stage_l0[s]);
        if (!pact_layer_offloaded(c, s, l - c->stage_l0[s])) /* in host memory at the peak */
            mc.activation_bytes +=
                workload_layer_activation_bytes(c->w, l, step_scenario_micro_batch(c->sc), rec ? &c->wp : &kept) +
                (fp8_saved && !(rec && checkpointed) ? c->layer_params : 0);
    }
    const WorkloadTransformer *tr = workload_transformer(c->w);
    if (tr && s == c->p.pp - 1) /* the MTP modules' layers, with the head */
        for (int k = 0; k < tr->mtp_layers; k++)
            mc.activation_bytes +=
                workload_layer_activation_bytes(c->w, tr->layers + k, step_scenario_micro_batch(c->sc), &c->wp);
    mc.activation_bytes /= c->p.vpp; /* interleaved: in flight by model chunks */
    mc.inflight_microbatches = pipeline_inflight(c, s);
    mc.working_set_bytes = compute_working_set(c, s);
    if (!memory_estimate(&mc, mbk, err) || !moe_memory(c, s, &mc, mbk, err))
        return false;
    lora_memory(c, s, mbk); /* LoRA's frozen base */
    offload_memory(c, mbk, &host->optimizer);
    zeropp_memory(c, s, mbk);
    pact_memory(c, s, mbk, &host->checkpoints);
    memory_apply_fragmentation(mbk, mc.fragmentation);
    return true;
}

bool step_fits(const Ctx *c, const MemoryBreakdown *mem)
{
    bool prealloc = step_scenario_framework(c->sc) == STEP_FRAMEWORK_JAX && step_scenario_memory_fraction_given(c->sc);
    return memory_fits(mem, accel_hbm_bytes(c->acc), step_scenario_memory_fraction(c->sc), prealloc);
}

/* The memory of the stage that needs most; host memory, the most any
 * stage keeps there (the first stages of 1F1B hold more micro-batches'
 * checkpoints than the one whose HBM peaks). */
bool step_peak_memory(const Ctx *c, MemoryBreakdown *mem, int *mem_stage, StepHostMemory *host, GError **err)
{
    *mem = (MemoryBreakdown){0};
    *mem_stage = 0;
    *host = (StepHostMemory){0, 0};
    for (int s = 0; s < c->p.pp; s++) {
        MemoryBreakdown mbk;
        StepHostMemory h;
        if (!step_stage_memory(c, s, &mbk, &h, err))
            return false;
        if (s == 0 || mbk.total > mem->total) {
            *mem = mbk;
            *mem_stage = s;
        }
        host->optimizer = fmax(host->optimizer, h.optimizer);
        host->checkpoints = fmax(host->checkpoints, h.checkpoints);
    }
    return true;
}

/* Whether any variant of the scenario has the ZeRO-1/2 sharded update that
 * "allgather_overlap" moves (a list of weight updates compares variants: the
 * key is meant for the sharded one). */
static bool ag_overlap_applies(const StepScenario *sc)
{
    for (int v = 0; v < step_scenario_num_variants(sc); v++) {
        StepPlan p = step_scenario_plan(sc, v);
        if (p.zero_stage == 1 || p.zero_stage == 2)
            return true;
    }
    return false;
}

/* What a planner should not miss: the chips computed are not the
 * topology's own, or most of the machine sits idle, or a JAX step that does
 * not fit might (`fits`: the memory's verdict). */
static void add_warnings(cJSON *out, const Build *b, bool fits)
{
    const Ctx *c = b->c;
    cJSON *warn = cJSON_CreateArray();
    const char *ta = topo_accelerator(c->topo);
    if (step_scenario_accel_given(c->sc) && ta && strcmp(ta, accel_name(c->acc)) != 0) {
        char *w = g_strdup_printf("the scenario computes on %s, but topology %s describes %s", accel_name(c->acc),
                                  topo_name(c->topo), ta);
        cJSON_AddItemToArray(warn, cJSON_CreateString(w));
        g_free(w);
    }
    if (c->devices * 2 <= topo_num_ranks(c->topo)) {
        char *w = g_strdup_printf("dp x tp x %spp = %d uses %d of the topology's %d ranks", c->p.cp > 1 ? "cp x " : "",
                                  c->devices, c->devices, topo_num_ranks(c->topo));
        cJSON_AddItemToArray(warn, cJSON_CreateString(w));
        g_free(w);
    }
    if (c->p.allgather_overlap >= 0 && !ag_overlap_applies(c->sc))
        cJSON_AddItemToArray(warn, cJSON_CreateString(c->p.zero_stage == 3
                                                          ? "\"allgather_overlap\" has no effect with ZeRO-3, "
                                                            "which gathers every layer's parameters anyway"
                                                          : "\"allgather_overlap\" has no effect on a replicated "
                                                            "weight update"));
    if (c->dp_ct.warning)
        cJSON_AddItemToArray(warn, cJSON_CreateString(c->dp_ct.warning));
    if (c->rep_ct.warning)
        cJSON_AddItemToArray(warn, cJSON_CreateString(c->rep_ct.warning));
    if (c->fabric_warning)
        cJSON_AddItemToArray(warn, cJSON_CreateString(c->fabric_warning));
    if (!b->interfere_settled) {
        char *w = g_strdup_printf("the slowdown of compute by overlapped communication had not settled after %d "
                                  "reruns: the step time is the last one's",
                                  b->interfere_passes);
        cJSON_AddItemToArray(warn, cJSON_CreateString(w));
        g_free(w);
    }
    if (!fits && step_scenario_framework(c->sc) == STEP_FRAMEWORK_JAX)
        cJSON_AddItemToArray(warn, cJSON_CreateString(
                                       "as one XLA program it does not fit, but XLA's rematerialization pass may "
                                       "recompute more to make it fit, more slowly than predicted, unless the program "
                                       "turns it off (--xla_disable_hlo_passes=rematerialization, as MaxText's and "
                                       "Paxml's GPU recipes do)"));
    if (cJSON_GetArraySize(warn) > 0)
        cJSON_AddItemToObject(out, "warnings", warn);
    else
        cJSON_Delete(warn);
}

static void add_memory(cJSON *out, const Ctx *c, const MemoryBreakdown *mem, int mem_stage, StepHostMemory host,
                       bool fits)
{
    cJSON *mj = cJSON_AddObjectToObject(out, "memory_per_device_bytes");
    cJSON_AddNumberToObject(mj, "weights", mem->params);
    cJSON_AddNumberToObject(mj, "gradients", mem->grads);
    cJSON_AddNumberToObject(mj, "optimizer_state", mem->optimizer);
    cJSON_AddNumberToObject(mj, "activations", mem->activations);
    cJSON_AddNumberToObject(mj, "buffers", mem->buffers);
    cJSON_AddNumberToObject(mj, "working_set", mem->working_set);
    cJSON_AddNumberToObject(mj, "reserve", mem->reserve);
    cJSON_AddNumberToObject(mj, "fragmentation", mem->fragmentation);
    cJSON_AddNumberToObject(mj, "allocator_reserved", memory_allocator_reserved(mem));
    cJSON_AddNumberToObject(mj, "total", mem->total);
    cJSON_AddNumberToObject(mj, "stage", mem_stage);
    cJSON_AddNumberToObject(mj, "hbm", accel_hbm_bytes(c->acc));
    cJSON_AddNumberToObject(mj, "memory_fraction", step_scenario_memory_fraction(c->sc));
    if (c->p.offload_optimizer) /* ZeRO-Offload: in host memory, not in total */
        cJSON_AddNumberToObject(mj, "host_optimizer_state", host.optimizer);
    if (c->p.cpu_checkpointing) /* cpu_checkpointing: in host memory, not in total */
        cJSON_AddNumberToObject(mj, "host_checkpoints", host.checkpoints);
    cJSON_AddBoolToObject(out, "fits", fits);
}

static void add_throughput(cJSON *out, const Ctx *c, double step)
{
    double model_flops, hw_flops;
    compute_flops(c, &model_flops, &hw_flops);
    double peak = accel_peak_flops(c->acc, step_scenario_dtype(c->sc));
    double B = step_scenario_global_batch(c->sc);
    cJSON_AddNumberToObject(out, "mfu", model_flops / (step * c->devices * peak));
    cJSON_AddNumberToObject(out, "flops_per_device", hw_flops / (step * c->devices));
    cJSON_AddNumberToObject(out, "model_flops_per_step", model_flops);
    cJSON_AddNumberToObject(out, "hardware_flops_per_step", hw_flops);
    cJSON_AddNumberToObject(out, "samples_per_s", B / step);
    cJSON_AddNumberToObject(out, "tokens_per_s", B * workload_tokens_per_sample(c->w) / step);
    cJSON_AddNumberToObject(out, "samples_per_s_per_device", B / step / c->devices);
}

/* The attention geometry where it is not the plain hidden-wide one: its
 * heads x head_dim width, the q/k norms, the sliding window and the share
 * of the layers it covers (workload.h). */
static void report_attention(cJSON *cfg, const WorkloadTransformer *t)
{
    if (t->head_dim <= 0 && t->sliding_window <= 0)
        return;
    cJSON_AddNumberToObject(cfg, "head_dim", workload_head_dim(t));
    cJSON_AddNumberToObject(cfg, "attention_width", workload_q_dim(t));
    cJSON_AddBoolToObject(cfg, "qk_norm", t->qk_norm);
    if (t->sliding_window > 0) {
        cJSON_AddNumberToObject(cfg, "sliding_window", t->sliding_window);
        cJSON_AddNumberToObject(cfg, "window_share", workload_window_share(t));
    }
}


static void add_config(cJSON *out, const Build *b)
{
    const Ctx *c = b->c;
    const StepScenario *sc = c->sc;
    const StepPlan *p = &c->p;
    cJSON *cfg = cJSON_AddObjectToObject(out, "config");
    cJSON_AddStringToObject(cfg, "model", workload_name(c->w));
    cJSON_AddNumberToObject(cfg, "params", workload_params_total(c->w));
    cJSON_AddStringToObject(cfg, "accelerator", accel_name(c->acc));
    cJSON_AddStringToObject(cfg, "topology", topo_name(c->topo));
    cJSON_AddNumberToObject(cfg, "devices", c->devices);
    cJSON_AddNumberToObject(cfg, "topology_ranks", topo_num_ranks(c->topo));
    char *used = step_scenario_rank_map(sc) ? g_strdup_printf("%d of %d ranks (placed %s)", c->devices,
                                                               topo_num_ranks(c->topo), step_scenario_placement(sc))
                 : c->devices == topo_num_ranks(c->topo)
                     ? g_strdup_printf("all %d ranks", c->devices)
                     : g_strdup_printf("ranks 0-%d of %d", c->devices - 1, topo_num_ranks(c->topo));
    cJSON_AddStringToObject(cfg, "devices_used", used);
    g_free(used);
    cJSON_AddNumberToObject(cfg, "dp", c->dp_data);
    /* the one dp rule, said where the figure is read */
    cJSON_AddStringToObject(cfg, "dp_from", step_scenario_dp_given(sc) ? "the scenario" : step_dp_fill_rule(p->cp));
    cJSON_AddNumberToObject(cfg, "tp", p->tp);
    cJSON_AddNumberToObject(cfg, "pp", p->pp);
    if (p->vpp > 1)
        cJSON_AddNumberToObject(cfg, "virtual_stages", p->vpp);
    if (p->cp > 1)
        cJSON_AddNumberToObject(cfg, "cp", p->cp);
    if (p->cp > 1 && p->cp_impl != CP_IMPL_TE_P2P) { /* the default ring is not named, as before it had another */
        cJSON_AddStringToObject(cfg, "cp_impl", step_cp_impl_name(p->cp_impl));
        cJSON_AddBoolToObject(cfg, "cp_repeat_kv", p->cp_repeat_kv);
    }
    if (p->shard_group > 0 && c->rep_group) /* a group of all dp ranks is plain FSDP: no replicas */
        cJSON_AddNumberToObject(cfg, "shard_group", p->shard_group);
    if (p->offload_optimizer)
        cJSON_AddBoolToObject(cfg, "offload_optimizer", true);
    if (workload_transformer(c->w))
        report_attention(cfg, workload_transformer(c->w));
    if (workload_transformer(c->w) && workload_transformer(c->w)->experts > 0) {
        cJSON_AddNumberToObject(cfg, "experts", workload_transformer(c->w)->experts);
        cJSON_AddNumberToObject(cfg, "ep", p->ep);
        if (p->etp > 0)
            cJSON_AddNumberToObject(cfg, "expert_tp", p->etp);
        cJSON_AddNumberToObject(cfg, "capacity_factor", p->capacity_factor);
        cJSON_AddNumberToObject(cfg, "active_params", workload_params_active(c->w));
        if (p->ep_dispatcher == STEP_EP_DEEPEP) { /* only then: the alltoall dispatcher's runs keep their output */
            const WorkloadTransformer *tr = workload_transformer(c->w);
            bool rr = p->moe_routing == STEP_ROUTE_ROUND_ROBIN;
            cJSON_AddStringToObject(cfg, "ep_dispatcher", "deepep");
            cJSON_AddStringToObject(cfg, "moe_routing", rr ? "round_robin" : "uniform");
            cJSON_AddNumberToObject(cfg, "ep_ranks_per_token", moe_ranks_per_token(tr->experts, tr->top_k, p->ep, rr));
        }
    }
    cJSON_AddNumberToObject(cfg, "zero_stage", p->zero_stage);
    cJSON_AddStringToObject(cfg, "weight_update", p->zero_stage ? "sharded" : "replicated");
    cJSON_AddBoolToObject(cfg, "allgather_overlap", c->ag_overlap);
    cJSON_AddBoolToObject(cfg, "comm_interference", p->comm_interference);
    if (p->tp_comm_overlap)
        cJSON_AddBoolToObject(cfg, "tp_comm_overlap", true);
    if (p->qwz || p->hpz || p->qgz) { /* par_zeropp.c */
        cJSON *z = cJSON_AddObjectToObject(cfg, "zeropp");
        cJSON_AddBoolToObject(z, "qwz", p->qwz);
        cJSON_AddBoolToObject(z, "hpz", p->hpz);
        cJSON_AddBoolToObject(z, "qgz", p->qgz);
    }
    if (p->sdp4bit_weights || p->sdp4bit_gradients) {
        cJSON *z = cJSON_AddObjectToObject(cfg, "sdp4bit");
        cJSON_AddBoolToObject(z, "weights", p->sdp4bit_weights);
        cJSON_AddBoolToObject(z, "gradients", p->sdp4bit_gradients);
    }
    static const char *const pk[] = {"partition_activations", "cpu_checkpointing", "recompute_overlap"};
    const bool pv[] = {p->partition_activations, p->cpu_checkpointing, p->recompute_overlap};
    for (int k = 0; k < 3; k++) /* par_pact.c */
        if (pv[k])
            cJSON_AddBoolToObject(cfg, pk[k], true);
    if (p->cpu_checkpointing)
        cJSON_AddStringToObject(cfg, "cpu_checkpointing_copy", p->cpu_checkpointing_blocking ? "blocking" : "async");
    cJSON_AddStringToObject(cfg, "grad_reduce_dtype", accel_dtype_name(c->grad_dtype));
    if (workload_transformer(c->w))
        cJSON_AddStringToObject(cfg, "cross_entropy", step_cross_entropy_name(step_loss_kind(c)));
    cJSON_AddNumberToObject(cfg, "micro_batches", c->m);
    cJSON_AddNumberToObject(cfg, "micro_batch", step_scenario_micro_batch(sc));
    cJSON_AddNumberToObject(cfg, "global_batch", step_scenario_global_batch(sc));
    cJSON_AddStringToObject(cfg, "precision", accel_dtype_name(step_scenario_dtype(sc)));
    StepAttention att = step_scenario_attention(sc);
    cJSON_AddStringToObject(cfg, "attention", att == STEP_ATTN_FUSED      ? "fused"
                                              : att == STEP_ATTN_FUSED_V1 ? "fused-v1"
                                              : att == STEP_ATTN_FUSED_V2 ? "fused-v2"
                                                                          : "unfused");
    cJSON_AddStringToObject(cfg, "schedule", p->gpipe ? "gpipe" : "1f1b");
    cJSON_AddStringToObject(cfg, "recompute",
                            p->recompute == WORKLOAD_RECOMPUTE_FULL        ? "full"
                            : p->recompute == WORKLOAD_RECOMPUTE_SELECTIVE ? "selective"
                            : p->recompute == WORKLOAD_RECOMPUTE_OP        ? "op"
                                                                           : "none");
    if (p->recompute_layers)
        cJSON_AddNumberToObject(cfg, "recompute_layers", p->recompute_layers);
    if (p->recompute_keep) {
        cJSON *keep = cJSON_AddArrayToObject(cfg, "recompute_keep");
        for (unsigned bit = 1; bit <= WORKLOAD_LINEAR_FC2; bit <<= 1)
            if (p->recompute_keep & bit)
                cJSON_AddItemToArray(keep, cJSON_CreateString(finetune_linear_name(bit)));
        if (p->recompute_keep & WORKLOAD_KEEP_CORE_ATTN)
            cJSON_AddItemToArray(keep, cJSON_CreateString("core_attn"));
    }
    if (c->wp.eager_elementwise)
        cJSON_AddStringToObject(cfg, "elementwise", "eager");
    if (step_scenario_framework(sc) == STEP_FRAMEWORK_JAX)
        cJSON_AddStringToObject(cfg, "framework", "jax");
    if (p->zero_fsdp) /* not DeepSpeed's, the default */
        cJSON_AddStringToObject(cfg, "zero_impl", p->zero_fsdp2 ? "fsdp2" : "fsdp");
    static const char *const mods[] = {"mla_up_proj", "layernorm", "moe_act", "mlp", "moe", "shared_experts", "core_attn"};
    cJSON *rm = p->recompute_modules ? cJSON_AddArrayToObject(cfg, "recompute_modules") : NULL;
    for (int i = 0; rm && i < (int)G_N_ELEMENTS(mods); i++)
        if (p->recompute_modules & (1u << i))
            cJSON_AddItemToArray(rm, cJSON_CreateString(mods[i]));
    if (step_scenario_dtype(sc) == ACCEL_FP8)
        cJSON_AddStringToObject(cfg, "fp8_recipe", fp8_recipe_name(step_scenario_fp8_recipe(sc)));
    if (step_scenario_dtype(sc) == ACCEL_FP8 && step_scenario_fp8_casts_fused(sc))
        cJSON_AddStringToObject(cfg, "fp8_casts", "fused");
    lora_report(c, cfg);
    cJSON_AddNumberToObject(cfg, "graph_tasks", (double)sim_graph_num_tasks(b->g));
}

/* The collectives stage 0's device runs per step, counted from the graph's
 * tags: what the listing says is what was executed. */
static cJSON *coll_report(const Build *b)
{
    const Ctx *c = b->c;
    int *count = g_new0(int, c->colls->len + 1);
    for (guint i = 0; i < b->tags->len; i++) {
        const CollTag *t = &g_array_index(b->tags, CollTag, i);
        if (t->stage == 0)
            count[t->use] += t->times;
    }
    cJSON *arr = cJSON_CreateArray();
    for (guint i = 0; i < c->colls->len; i++) {
        const CollUse *u = &g_array_index(c->colls, CollUse, i);
        if (count[i] == 0) /* run only on stages other than the one reported */
            continue;
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", u->name);
        cJSON_AddStringToObject(o, "group", u->group);
        cJSON_AddStringToObject(o, "op", u->op_name ? u->op_name : coll_op_name(u->op));
        cJSON_AddNumberToObject(o, "group_size", u->group_size);
        cJSON_AddNumberToObject(o, "bytes", u->bytes);
        cJSON_AddStringToObject(o, "algo", coll_algo_name(u->cost.algo));
        cJSON_AddStringToObject(o, "proto", coll_proto_name(u->cost.proto));
        cJSON_AddNumberToObject(o, "time_s", u->cost.time_s);
        if (u->cost.fabric_factor > 1) /* the switch-to-switch links slowed it, as `collective --json` says */
            cJSON_AddNumberToObject(o, "fabric_factor", u->cost.fabric_factor);
        cJSON_AddNumberToObject(o, "count_per_step", count[i]);
        cJSON_AddItemToArray(arr, o);
    }
    g_free(count);
    return arr;
}

cJSON *step_report(const Build *b, int variant, double step, GError **err)
{
    const Ctx *c = b->c;
    Breakdown bd = breakdown(b, step);
    MemoryBreakdown mem;
    int mem_stage;
    StepHostMemory host = {0, 0};
    if (!step_peak_memory(c, &mem, &mem_stage, &host, err))
        return NULL;
    cJSON *out = cJSON_CreateObject();
    cJSON_AddStringToObject(out, "scenario", step_scenario_name(c->sc));
    cJSON_AddStringToObject(out, "variant", step_scenario_variant_label(c->sc, variant));
    cJSON_AddNumberToObject(out, "step_time_s", step);
    step_band(b, step, bd.exposed, out);
    bool fits = step_fits(c, &mem);
    add_warnings(out, b, fits);
    cJSON *bj = cJSON_AddObjectToObject(out, "breakdown");
    cJSON_AddNumberToObject(bj, "compute", bd.compute);
    cJSON_AddNumberToObject(bj, "compute_slowed_by_communication", bd.interference);
    cJSON_AddNumberToObject(bj, "exposed_communication", bd.exposed);
    cJSON_AddNumberToObject(bj, "optimizer", bd.optimizer);
    cJSON_AddNumberToObject(bj, "pipeline_bubble", bd.bubble);
    cJSON_AddNumberToObject(bj, "stage", bd.stage);
    add_memory(out, c, &mem, mem_stage, host, fits);
    add_throughput(out, c, step);
    add_config(out, b);
    cJSON_AddItemToObject(out, "collectives", coll_report(b));
    cJSON *ct = cJSON_AddObjectToObject(out, "dp_contention");
    const DpContention *o = &c->dp_ct;
    cJSON_AddNumberToObject(ct, "factor", o->factor);
    if (o->method[0])
        cJSON_AddStringToObject(ct, "method", o->method);
    cJSON_AddNumberToObject(ct, "groups_simulated", o->flow_groups);
    cJSON_AddNumberToObject(ct, "flow_time_alone_s", o->flow_alone_s);
    cJSON_AddNumberToObject(ct, "flow_time_concurrent_s", o->flow_concurrent_s);
    cJSON_AddNumberToObject(ct, "flow_time_nonblocking_s", o->flow_nonblocking_s);
    cJSON_AddNumberToObject(ct, "uplink_bound_s", o->uplink_bound_s);
    if (c->rep_ct.method[0]) { /* hybrid sharding: the replicas' all-reduce */
        cJSON_AddNumberToObject(ct, "replica_factor", c->rep_ct.factor);
        cJSON_AddStringToObject(ct, "replica_method", c->rep_ct.method);
    }
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
