/* A scenario's keys for the newer parallelisms of the step: expert
 * parallelism ("ep") and the experts' "capacity_factor" of a mixture of
 * experts, interleaved 1F1B's "virtual_stages", context parallelism
 * "cp", FSDP hybrid sharding's "shard_group" and ZeRO-Offload's
 * "offload_optimizer" with its bandwidths.  Parsed with the rest of "parallelism" (scenario_plan.c), and
 * checked against the model and dp once dp is resolved (scenario.c): each
 * error at the key's line. */
#include "scenario_plan.h"
#include "par_layout.h"

#include <string.h>

const char *const scenario_par_keys[] = {"ep", "expert_tp", "capacity_factor", "virtual_stages", "cp", "shard_group",
                                         "offload_optimizer", "pcie_bandwidth", "host_memory_bandwidth",
                                         "account_for_embedding_in_pipeline_split",
                                         "account_for_loss_in_pipeline_split", "pipeline_layout", "moe_a2a_overlap", "recompute_modules",
                                         "recompute_keep", "cp_impl", "cp_repeat_kv", "ep_dispatcher", "moe_routing",
                                         "pipeline_microbatches", NULL};

/* "cp_impl"'s names, in the plan's cp_impl order. */
static const char *const cpi_names[] = {"te_p2p", "pytorch_allgather", "pytorch_alltoall", NULL};

const char *step_cp_impl_name(int cp_impl) { return cpi_names[cp_impl]; }

/* "ep_dispatcher"'s and "moe_routing"'s names, in their enums' order. */
static const char *const epd_names[] = {"alltoall", "deepep", NULL};
static const char *const route_names[] = {"uniform", "round_robin", NULL};

static const cJSON *item(const cJSON *where, const char *key);
static bool parse_modules(const SimJsonDoc *d, const cJSON *par, StepPlan *p, GError **err);

bool scenario_par_parse(const SimJsonDoc *d, const cJSON *par, StepPlan *p, GError **err)
{
    long ep = 1, vpp = 1, cp = 1, sg = 0, etp = 0, pmb = 0;
    const char *layout = NULL;
    if (!sim_json_get_int(d, par, "ep", false, 1, 1 << 16, &ep, err) ||
        !sim_json_get_int(d, par, "expert_tp", false, 1, 1 << 16, &etp, err) ||
        !sim_json_get_int(d, par, "cp", false, 1, 1 << 16, &cp, err) ||
        !sim_json_get_int(d, par, "shard_group", false, 1, 1 << 24, &sg, err) ||
        !sim_json_get_bool(d, par, "offload_optimizer", &p->offload_optimizer, err) ||
        !sim_json_get_quantity(d, par, "pcie_bandwidth", false, 1e6, 1e13, SIM_UNIT_BYTES_PER_S, &p->pcie_bps, err) ||
        !sim_json_get_quantity(d, par, "host_memory_bandwidth", false, 1e6, 1e14, SIM_UNIT_BYTES_PER_S,
                               &p->host_mem_bps, err) ||
        !sim_json_get_int(d, par, "virtual_stages", false, 1, 1 << 16, &vpp, err) ||
        !sim_json_get_int(d, par, "pipeline_microbatches", false, 1, 1 << 24, &pmb, err) ||
        !sim_json_get_bool(d, par, "account_for_embedding_in_pipeline_split", &p->split_embedding, err) ||
        !sim_json_get_bool(d, par, "account_for_loss_in_pipeline_split", &p->split_loss, err) ||
        !sim_json_get_number(d, par, "capacity_factor", false, 0.01, 64, &p->capacity_factor, err) ||
        !sim_json_get_string(d, par, "pipeline_layout", false, &layout, err) ||
        !sim_json_get_bool(d, par, "moe_a2a_overlap", &p->ep_overlap, err))
        return false;
    if (layout && (strlen(layout) < 1 || strlen(layout) >= sizeof p->pipeline_layout)) {
        sim_json_error(d, item(par, "pipeline_layout"), err, "\"pipeline_layout\" must have 1 to %d characters",
                       (int)sizeof p->pipeline_layout - 1);
        return false;
    }
    if (layout)
        g_strlcpy(p->pipeline_layout, layout, sizeof p->pipeline_layout);
    p->ep = (int)ep;
    p->etp = (int)etp;
    p->vpp = (int)vpp;
    p->pp_microbatches = (int)pmb;
    p->cp = (int)cp;
    int cpi = 0;
    if (!scenario_get_choice(d, par, "cp_impl", cpi_names, &cpi, err))
        return false;
    p->cp_impl = cpi;
    int epd = 0, route = 0;
    if (!scenario_get_choice(d, par, "ep_dispatcher", epd_names, &epd, err) ||
        !scenario_get_choice(d, par, "moe_routing", route_names, &route, err))
        return false;
    p->ep_dispatcher = epd;
    p->moe_routing = route;
    p->cp_repeat_kv = false; /* SDPA's enable_gqa (torchtitan since ff0829c1, transformers) */
    const cJSON *rkv = cJSON_GetObjectItemCaseSensitive(par, "cp_repeat_kv");
    if (rkv && !cJSON_IsNull(rkv) && cpi == CP_IMPL_TE_P2P) {
        sim_json_error(d, rkv, err, "\"cp_repeat_kv\" is PyTorch's context_parallel's: it needs \"cp_impl\" "
                                    "\"pytorch_allgather\" or \"pytorch_alltoall\" (Transformer Engine's ring carries "
                                    "the grouped KV)");
        return false;
    }
    if (!sim_json_get_bool(d, par, "cp_repeat_kv", &p->cp_repeat_kv, err))
        return false;
    p->shard_group = (int)sg;
    const cJSON *keep = cJSON_GetObjectItemCaseSensitive(par, "recompute_keep");
    if (keep && p->recompute != WORKLOAD_RECOMPUTE_FULL) {
        sim_json_error(d, keep, err, "\"recompute_keep\" names what full recomputation keeps: it needs \"recompute\": \"full\"");
        return false;
    }
    if (keep && !finetune_parse_linears(d, keep, "recompute_keep", true, &p->recompute_keep, err))
        return false;
    return parse_modules(d, par, p, err);
}

/* "recompute_modules": Megatron-Core's names (transformer_config.py,
 * recompute_modules), each once.  Listed, they are what is recomputed, as
 * under Megatron's recompute_granularity "selective" (the attention core
 * only where "core_attn" is listed); "recompute" must then be "none" or
 * "selective". */
static bool parse_modules(const SimJsonDoc *d, const cJSON *par, StepPlan *p, GError **err)
{
    static const struct { const char *name; unsigned bit; } mods[] = {
        {"core_attn", WORKLOAD_RC_CORE_ATTN}, {"mla_up_proj", WORKLOAD_RC_MLA_UP}, {"layernorm", WORKLOAD_RC_LAYERNORM},
        {"moe_act", WORKLOAD_RC_MOE_ACT},     {"mlp", WORKLOAD_RC_MLP},            {"moe", WORKLOAD_RC_MOE},
        {"shared_experts", WORKLOAD_RC_SHARED}};
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(par, "recompute_modules");
    if (!m)
        return true;
    if (!cJSON_IsArray(m)) {
        sim_json_error(d, m, err, "\"recompute_modules\" must be an array of module names");
        return false;
    }
    if (p->recompute == WORKLOAD_RECOMPUTE_FULL || p->recompute == WORKLOAD_RECOMPUTE_OP) {
        sim_json_error(d, m, err, "\"recompute_modules\" is Megatron-Core's selective recomputation: not with \"recompute\": \"%s\"",
                       p->recompute == WORKLOAD_RECOMPUTE_OP ? "op" : "full");
        return false;
    }
    for (const cJSON *e = m->child; e; e = e->next) {
        size_t i = 0;
        while (i < G_N_ELEMENTS(mods) && !(cJSON_IsString(e) && !g_ascii_strcasecmp(e->valuestring, mods[i].name)))
            i++;
        if (i == G_N_ELEMENTS(mods)) {
            sim_json_error(d, e, err,
                           "\"recompute_modules\": \"%s\" is not one of \"core_attn\", \"mla_up_proj\", \"layernorm\", "
                           "\"moe_act\", \"mlp\", \"moe\", \"shared_experts\"",
                           cJSON_IsString(e) ? SIM_ECHO(e->valuestring) : "(not a string)");
            return false;
        }
        if (p->recompute_modules & mods[i].bit) {
            sim_json_error(d, e, err, "\"recompute_modules\" lists \"%s\" twice", mods[i].name);
            return false;
        }
        p->recompute_modules |= mods[i].bit;
    }
    /* the attention core is recomputed only where listed */
    p->recompute = p->recompute_modules & WORKLOAD_RC_CORE_ATTN ? WORKLOAD_RECOMPUTE_SELECTIVE : WORKLOAD_RECOMPUTE_NONE;
    return true;
}

/* A module that does nothing on this model (Megatron-Core leaves it inert)
 * or that Megatron-Core refuses with another option: the reason, or NULL. */
static const char *module_misfit(const StepPlan *p, const WorkloadTransformer *tr, const char **name)
{
    unsigned rm = p->recompute_modules;
    bool mla = tr->kv_lora_rank > 0, moe = tr->experts > 0;
    static const struct { unsigned bit; const char *name, *why; } rules[] = {
        {WORKLOAD_RC_MLA_UP, "mla_up_proj", "needs multi-head latent attention (\"kv_lora_rank\")"},
        {WORKLOAD_RC_LAYERNORM, "layernorm",
         "recomputes the norms Megatron-Core runs apart from a linear (MLA's input norm, a MoE layer's pre-MLP norm); "
         "this model has none (Transformer Engine fuses its norms into LayerNormLinear)"},
        {WORKLOAD_RC_MOE_ACT, "moe_act", "needs a mixture of experts"},
        {WORKLOAD_RC_MOE, "moe", "needs a mixture of experts"},
        {WORKLOAD_RC_SHARED, "shared_experts", "needs shared experts (\"shared_experts\" > 0)"},
        {WORKLOAD_RC_MLP, "mlp", "recomputes a dense MLP; every layer of this model is a mixture of experts"}};
    bool fits[] = {mla, mla || moe, moe, moe, tr->shared_experts > 0, !moe || tr->dense_layers > 0};
    for (size_t i = 0; i < G_N_ELEMENTS(rules); i++)
        if ((rm & rules[i].bit) && !fits[i]) {
            *name = rules[i].name;
            return rules[i].why;
        }
    if ((rm & WORKLOAD_RC_MOE) && p->ep_overlap) {
        *name = "moe";
        return "cannot run with \"moe_a2a_overlap\" (Megatron-Core: disable moe in recompute_modules when enabling "
               "overlap_moe_expert_parallel_comm)";
    }
    for (size_t i = 0; i < G_N_ELEMENTS(rules) && p->offload_layers; i++)
        if (rm & rules[i].bit) {
            *name = rules[i].name;
            return "with \"cpu_offloading_num_layers\" is not modelled";
        }
    return NULL;
}

bool scenario_modules_check(const SimJsonDoc *d, const cJSON *where, const StepPlan *p, bool fp8_delayed,
                            bool finetune, GError **err)
{
    const cJSON *at = item(where, "recompute_modules");
    if ((p->recompute_modules & ~(unsigned)WORKLOAD_RC_CORE_ATTN) && finetune) {
        sim_json_error(d, at, err, "\"recompute_modules\" beyond \"core_attn\" with \"finetune\" is not modelled");
        return false;
    }
    unsigned od = p->recompute_modules & (WORKLOAD_RC_LAYERNORM | WORKLOAD_RC_MOE_ACT);
    if (!od || !fp8_delayed)
        return true;
    /* the recomputed tensor is quantized again, with the scale of the moment */
    sim_json_error(d, at, err,
                   "\"recompute_modules\" \"%s\" in FP8 needs a \"fp8_recipe\" other than \"delayed\" (Megatron-Core: "
                   "delayed scaling does not support moe_act and layernorm recompute)",
                   od & WORKLOAD_RC_LAYERNORM ? "layernorm" : "moe_act");
    return false;
}

static const cJSON *item(const cJSON *where, const char *key)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(where, key);
    return it ? it : where;
}

/* Whether the scenario writes `key` (null: as left out). */
static bool given(const cJSON *where, const char *key)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(where, key);
    return it && !cJSON_IsNull(it);
}

/* Megatron's embedding/loss accounting in the pipeline split: a pipeline,
 * and pp x virtual_stages chunks of layers + 1 (+ 2) (Megatron-Core's
 * get_num_layers_to_build); a chunk may hold the embedding or the loss
 * alone (one counted layer a chunk), a stage keeps a transformer layer. */
static bool check_layout(const SimJsonDoc *d, const cJSON *where, const StepPlan *p, const WorkloadTransformer *tr,
                         GError **err);

static bool check_split(const SimJsonDoc *d, const cJSON *where, const StepPlan *p, const WorkloadTransformer *tr,
                        GError **err)
{
    if (p->pipeline_layout[0])
        return check_layout(d, where, p, tr, err);
    if (!p->split_embedding && !p->split_loss)
        return true;
    const char *key = p->split_embedding ? "account_for_embedding_in_pipeline_split" : "account_for_loss_in_pipeline_split";
    int n = tr->layers + p->split_embedding + p->split_loss, chunks = p->pp * p->vpp;
    if (p->pp == 1)
        sim_json_error(d, item(where, key), err, "\"%s\" needs a pipeline (\"pp\" > 1)", key);
    else if (n % chunks || p->vpp * (n / chunks) < 2)
        sim_json_error(d, item(where, key), err,
                       "\"%s\": pp x virtual_stages = %d must divide the %d layers and the %d counted with them, "
                       "and every stage keep a layer",
                       key, chunks, tr->layers, n - tr->layers);
    else
        return true;
    return false;
}

/* A pipeline_layout: a pipeline, no account_for_* beside it, a layout
 * that parses and places the model, at least one layer per stage. */
static bool check_layout(const SimJsonDoc *d, const cJSON *where, const StepPlan *p, const WorkloadTransformer *tr,
                         GError **err)
{
    const cJSON *at = item(where, "pipeline_layout");
    int chunks = p->pp * p->vpp, *n = g_new0(int, chunks);
    const char *why = NULL;
    bool ok = false;
    if (p->pp == 1)
        why = "needs a pipeline (\"pp\" > 1)";
    else if (p->split_embedding || p->split_loss)
        why = "replaces account_for_embedding/loss_in_pipeline_split: give one or the other";
    else if (layout_chunks(p->pipeline_layout, chunks, tr->layers, tr->mtp_layers, n, &why)) {
        ok = true;
        for (int s = 0; s < p->pp && ok; s++) {
            int sum = 0;
            for (int j = 0; j < p->vpp; j++)
                sum += n[j * p->pp + s];
            ok = sum > 0;
        }
        why = ok ? NULL : "leaves a pipeline stage without a layer";
    }
    g_free(n);
    if (!ok)
        sim_json_error(d, at, err, "\"pipeline_layout\" %s (pp %d x virtual_stages %d, %d layers, %d MTP)", why, p->pp,
                       p->vpp, tr->layers, tr->mtp_layers);
    return ok;
}

/* Interleaved 1F1B as Megatron-LM runs it: a pipeline, 1F1B, every stage
 * the same number of chunks of equal layers (but the embedding's and the
 * loss's, check_split), whole rounds of pp micro-batches. */
static bool check_interleaving(const SimJsonDoc *d, const cJSON *where, const StepPlan *p, int max_zero_stage,
                               const WorkloadTransformer *tr, int micro_batches, GError **err)
{
    if (!check_split(d, where, p, tr, err))
        return false;
    int pmb = p->pp_microbatches;
    if (pmb > 0 && (p->pp == 1 || micro_batches % pmb || (p->vpp > 1 && pmb % p->pp))) {
        sim_json_error(d, item(where, "pipeline_microbatches"), err,
                       "\"pipeline_microbatches\" %d needs a pipeline (\"pp\" > 1: %d) and must divide the step's "
                       "%d micro-batches (a multiple of pp under \"virtual_stages\")",
                       pmb, p->pp, micro_batches);
        return false;
    }
    /* PyTorch's pipelining over FSDP syncs gradients once a schedule
     * (par_zero.c); DDP's and ZeRO-1/2's sync per schedule is not modelled,
     * nor Megatron's a2a overlap inside PyTorch's schedule */
    if (pmb > 0 && (max_zero_stage != 3 || p->ep_overlap)) {
        sim_json_error(d, item(where, "pipeline_microbatches"), err,
                       "\"pipeline_microbatches\" is PyTorch's pipelining over FSDP: it needs \"zero_stage\": 3%s",
                       p->ep_overlap ? " and no \"moe_a2a_overlap\" (Megatron's)" : "");
        return false;
    }
    /* ZeRO-3 under a pipeline is PyTorch's pipelining over FSDP (par_zero.c):
     * DeepSpeed's pipeline engine refuses ZeRO-2/3 ("ZeRO-2 and ZeRO-3 are
     * incompatible with pipeline parallelism", pipe/engine.py) */
    if (max_zero_stage == 3 && p->pp > 1 && !p->zero_fsdp) {
        sim_json_error(d, item(where, "zero_stage"), err,
                       "ZeRO-3 under a pipeline (\"pp\" %d) is PyTorch's pipelining over FSDP: set \"zero_impl\" "
                       "to \"fsdp2\" or \"fsdp\" (DeepSpeed's pipeline engine refuses ZeRO-3)", p->pp);
        return false;
    }
    if (p->vpp == 1)
        return true;
    const cJSON *at = item(where, "virtual_stages");
    if (p->pp == 1 || p->gpipe)
        sim_json_error(d, at, err, "\"virtual_stages\" needs a 1F1B pipeline (\"pp\" > 1, \"schedule\": \"1f1b\")");
    else if (!p->split_embedding && !p->split_loss && !p->pipeline_layout[0] && tr->layers % (p->pp * p->vpp))
        sim_json_error(d, at, err, "\"virtual_stages\": pp x virtual_stages = %d must divide the %d layers",
                       p->pp * p->vpp, tr->layers);
    else if (micro_batches % p->pp)
        sim_json_error(d, at, err, "\"virtual_stages\" needs the micro-batches (%d) to be a multiple of pp (%d)",
                       micro_batches, p->pp);
    else if (max_zero_stage == 2)
        sim_json_error(d, at, err, "\"virtual_stages\" with ZeRO-2 is not modelled (use zero_stage 0, 1 or 3)");
    else
        return true;
    return false;
}

/* Hybrid sharding is FSDP's ZeRO-3 inside groups that divide dp;
 * ZeRO-Offload moves a sharded optimizer (DeepSpeed: ZeRO 1-3). */
static bool check_sharding(const SimJsonDoc *d, const cJSON *where, const StepPlan *p, int max_zero_stage,
                           GError **err)
{
    int dpr = p->dp * p->cp; /* the ranks holding the same weights */
    if (p->shard_group && max_zero_stage != 3) {
        sim_json_error(d, item(where, "shard_group"), err,
                       "\"shard_group\" (FSDP hybrid sharding) needs \"zero_stage\": 3 (parameters sharded)");
        return false;
    }
    if (p->shard_group && dpr % p->shard_group) {
        sim_json_error(d, item(where, "shard_group"), err, "\"shard_group\" = %d must divide dp x cp = %d",
                       p->shard_group, dpr);
        return false;
    }
    if (p->offload_optimizer && (p->zero_stage == 0 || max_zero_stage == 0)) {
        sim_json_error(d, item(where, "offload_optimizer"), err,
                       "\"offload_optimizer\" (ZeRO-Offload) needs a sharded weight update (zero_stage 1-3)");
        return false;
    }
    static const char *const bw[] = {"pcie_bandwidth", "host_memory_bandwidth"};
    for (int k = 0; k < 2; k++)
        if (!p->offload_optimizer && !(k == 0 && (p->cpu_checkpointing || p->offload_layers)) &&
            !cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(where, bw[k])) &&
            cJSON_GetObjectItemCaseSensitive(where, bw[k])) {
            sim_json_error(d, item(where, bw[k]), err, "\"%s\" needs \"offload_optimizer\": true%s", bw[k],
                           k == 0 ? " (or \"cpu_checkpointing\": true, or \"cpu_offloading_num_layers\")" : "");
            return false;
        }
    return true;
}

bool scenario_cnn_check(const SimJsonDoc *d, const cJSON *where, const StepPlan *p, const Workload *w,
                        GError **err)
{
    static const char *const keys[] = {"tp", "pp", "sequence_parallel", "ep", "expert_tp", "capacity_factor", "virtual_stages",
                                       "cp", "shard_group", "recompute", "schedule", "pipeline_microbatches",
                                       "ep_dispatcher", "moe_routing", "pipeline_layout", "moe_a2a_overlap",
                                       "recompute_modules", "recompute_keep", "account_for_embedding_in_pipeline_split",
                                       "account_for_loss_in_pipeline_split", "cp_impl", "cp_repeat_kv",
                                       "tp_comm_overlap", NULL};
    for (const char *const *k = keys; *k; k++) {
        const cJSON *it = cJSON_GetObjectItemCaseSensitive(where, *k);
        /* what the key says when left out: 1, false, "none", "1f1b", [];
         * pipeline_microbatches' 1 is a pipeline's */
        bool dflt = !it || cJSON_IsNull(it) || cJSON_IsFalse(it) ||
                    (cJSON_IsNumber(it) && it->valuedouble == 1 && strcmp(*k, "capacity_factor") != 0 &&
                     strcmp(*k, "pipeline_microbatches") != 0) ||
                    (cJSON_IsArray(it) && cJSON_GetArraySize(it) == 0) ||
                    (cJSON_IsString(it) && (!strcmp(it->valuestring, "none") || !strcmp(it->valuestring, "1f1b")));
        if (!dflt) {
            sim_json_error(d, it, err,
                           "model \"%s\" is a CNN: its step is data parallel only (\"%s\" is for transformers)",
                           SIM_ECHO(workload_name(w)), *k);
            return false;
        }
    }
    const cJSON *zs = cJSON_GetObjectItemCaseSensitive(where, "zero_stage");
    if (p->zero_stage == 3 || (cJSON_IsNumber(zs) && zs->valuedouble == 3)) {
        sim_json_error(d, item(where, "zero_stage"), err,
                       "ZeRO-3 of a CNN is not modelled: use zero_stage 0-2 (\"weight_update\": \"sharded\" is "
                       "Xu et al.'s)");
        return false;
    }
    return true;
}

/* The experts' split: ep over the experts and, with expert_tp (etp) below
 * tp, over the tp x dp ranks (Megatron-Core's MoE parallel folding: ep x etp
 * must divide tp x dp; sequence parallelism, so each tp rank dispatches its
 * own tokens); etp over each expert's width. */
static bool check_expert_tp(const SimJsonDoc *d, const cJSON *where, const StepPlan *p, const WorkloadTransformer *tr,
                            GError **err)
{
    int etp = p->etp > 0 ? p->etp : p->tp;
    if (etp == p->tp && (tr->experts % p->ep || p->dp % p->ep)) {
        sim_json_error(d, item(where, "ep"), err, "\"ep\" = %d must divide the experts (%d) and dp (%d)", p->ep,
                       tr->experts, p->dp);
        return false;
    }
    if (p->tp % etp || (etp < p->tp && !p->sequence_parallel)) {
        sim_json_error(d, item(where, "expert_tp"), err,
                       "\"expert_tp\" = %d must divide tp (%d), and below it needs sequence parallelism", etp, p->tp);
        return false;
    }
    if (etp < p->tp && (tr->experts % p->ep || ((long)p->tp * p->dp) % ((long)p->ep * etp))) {
        sim_json_error(d, item(where, "ep"), err, "\"ep\" = %d must divide the experts (%d), and ep x expert_tp (%d) "
                       "must divide tp x dp (%d)", p->ep, tr->experts, p->ep * etp, p->tp * p->dp);
        return false;
    }
    if (tr->expert_ffn % etp) {
        sim_json_error(d, item(where, etp == p->tp && p->etp == 0 ? "tp" : "expert_tp"), err,
                       "\"%s\" = %d must divide expert_ffn (%d)", p->etp ? "expert_tp" : "tp", etp, tr->expert_ffn);
        return false;
    }
    return true;
}

/* A mixture of experts' dispatcher, routing and ZeRO-3 against the rest of
 * the plan (its ep and expert_tp already checked). */
static bool check_moe_keys(const SimJsonDoc *d, const cJSON *where, const StepPlan *p, int max_zero_stage,
                           GError **err)
{
    if (p->ep_dispatcher == STEP_EP_DEEPEP && p->capacity_factor != 1) {
        sim_json_error(d, item(where, "capacity_factor"), err,
                       "\"capacity_factor\" %g with \"ep_dispatcher\": \"deepep\": DeepEP is dropless (capacity "
                       "factor 1)", p->capacity_factor);
        return false;
    }
    /* FSDP2 with expert parallelism (NeMo AutoModel, torchtitan) shards the
     * dense weights over dp and each expert over the ranks holding it (the
     * expert-data-parallel group); hybrid sharding of either is not modelled */
    if (max_zero_stage == 3 && p->shard_group) {
        sim_json_error(d, item(where, "shard_group"), err,
                       "\"shard_group\" (hybrid sharding) with a mixture of experts is not modelled");
        return false;
    }
    if (max_zero_stage == 3 && !p->zero_fsdp) { /* DeepSpeed: "MoE not supported with Stage 3" (engine.py) */
        sim_json_error(d, item(where, "zero_stage"), err,
                       "ZeRO-3 of a mixture of experts is FSDP's (\"zero_impl\": \"fsdp2\" or \"fsdp\"): DeepSpeed "
                       "refuses MoE with stage 3");
        return false;
    }
    /* DeepEP over the ep ranks alone (Megatron's flex dispatcher folds
     * expert tensor parallelism into its group: not modelled) */
    int etp_eff = p->etp > 0 ? p->etp : p->tp;
    if (p->ep_dispatcher == STEP_EP_DEEPEP && (p->ep < 2 || etp_eff > 1)) {
        sim_json_error(d, item(where, "ep_dispatcher"), err,
                       "\"ep_dispatcher\": \"deepep\" needs \"ep\" > 1 (%d) and expert tensor parallelism 1 (%d): "
                       "DeepEP over tp x ep is not modelled",
                       p->ep, etp_eff);
        return false;
    }
    /* the routing decides the ranks DeepEP sends to; alltoall sends every copy */
    if (p->moe_routing != STEP_ROUTE_UNIFORM && p->ep_dispatcher != STEP_EP_DEEPEP) {
        sim_json_error(d, item(where, "moe_routing"), err,
                       "\"moe_routing\" acts on \"ep_dispatcher\": \"deepep\" (the alltoall dispatcher sends every "
                       "copy whatever the routing)");
        return false;
    }
    return true;
}

bool scenario_par_check(const SimJsonDoc *d, const cJSON *where, const StepPlan *p, int max_zero_stage,
                        const Workload *w, int micro_batches, GError **err)
{
    const WorkloadTransformer *tr = workload_transformer(w);
    if (!tr)
        return true; /* scenario_cnn_check */
    if (!check_interleaving(d, where, p, max_zero_stage, tr, micro_batches, err))
        return false;
    if (!check_sharding(d, where, p, max_zero_stage, err))
        return false;
    /* Megatron-LM splits each sequence into 2 cp chunks for causal load balance */
    if (p->cp > 1 && tr->seq_len % (2 * p->cp)) {
        sim_json_error(d, item(where, "cp"), err, "\"cp\" = %d: 2 x cp must divide seq_len (%d)", p->cp, tr->seq_len);
        return false;
    }
    if (p->cp > 1 && p->sequence_parallel && (tr->seq_len / p->cp) % p->tp) {
        sim_json_error(d, item(where, "cp"), err, "\"cp\" = %d: sequence parallelism needs tp (%d) to divide seq_len / cp",
                       p->cp, p->tp);
        return false;
    }
    if (p->cp > 1 && tr->experts > 0) {
        sim_json_error(d, item(where, "cp"), err, "\"cp\" with a mixture of experts is not modelled");
        return false;
    }
    /* given at all, a default included: a dense model has nothing to apply it to */
    bool given_cf = cJSON_GetObjectItemCaseSensitive(where, "capacity_factor") != NULL;
    bool given_epd = given(where, "ep_dispatcher"), given_route = given(where, "moe_routing");
    if (tr->experts == 0 && (p->ep > 1 || given_cf || p->etp || given_epd || given_route)) {
        const char *k = p->ep > 1 ? "ep" : given_cf ? "capacity_factor" : p->etp ? "expert_tp"
                                      : given_epd ? "ep_dispatcher" : "moe_routing";
        sim_json_error(d, item(where, k), err, "\"%s\" needs a mixture-of-experts model (\"experts\" > 0); %s is dense",
                       k, SIM_ECHO(workload_name(w)));
        return false;
    }
    const char *mod = NULL, *why = module_misfit(p, tr, &mod);
    if (why) {
        sim_json_error(d, item(where, "recompute_modules"), err, "\"recompute_modules\": \"%s\" %s", mod, why);
        return false;
    }
    if (p->ep_overlap && (tr->experts == 0 || p->ep == 1)) {
        sim_json_error(d, item(where, "moe_a2a_overlap"), err,
                       "\"moe_a2a_overlap\" needs a mixture of experts over \"ep\" > 1");
        return false;
    }
    if (tr->experts == 0)
        return true;
    if (!check_expert_tp(d, where, p, tr, err))
        return false;
    return check_moe_keys(d, where, p, max_zero_stage, err);
}
