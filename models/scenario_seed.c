/* A scenario's keys for the seed techniques of issue 12: ZeRO++ ("zeropp":
 * qwZ, hpZ, qgZ), SDP4Bit ("sdp4bit": weights, gradients), DeepSpeed's
 * "partition_activations" and "cpu_checkpointing" (with
 * "cpu_checkpointing_copy": checkpoints in host memory), and Lynx's
 * "recompute_overlap", and "recompute_layers" (full recomputation of the
 * first N layers of each model chunk only, Megatron's "block" method).  Parsed with the rest of "parallelism"
 * (scenario_plan.c) and checked against the variants' ZeRO stages, the
 * model and the machine once dp is known (scenario.c): each error at the
 * key's line.  The techniques are modelled in par_zeropp.c and par_pact.c. */
#include "scenario_plan.h"

#include <string.h>

const char *const scenario_seed_keys[] = {"zeropp",           "sdp4bit",          "partition_activations",
                                          "cpu_checkpointing", "cpu_checkpointing_copy", "recompute_overlap",
                                          "recompute_layers",  "cpu_offloading_num_layers", NULL};

/* `key`: true (every part), false, or an object of the parts' booleans. */
static bool get_parts(const SimJsonDoc *d, const cJSON *par, const char *key, const char *const *parts, bool **out,
                      GError **err)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(par, key);
    if (!it || cJSON_IsNull(it))
        return true;
    if (cJSON_IsBool(it)) {
        for (int i = 0; parts[i]; i++)
            *out[i] = cJSON_IsTrue(it);
        return true;
    }
    if (!cJSON_IsObject(it)) {
        sim_json_error(d, it, err, "\"%s\" must be true, false or an object of booleans", key);
        return false;
    }
    char *where = g_strdup_printf("\"%s\"", key);
    bool ok = scenario_check_keys(d, it, where, parts, err);
    g_free(where);
    for (int i = 0; ok && parts[i]; i++)
        ok = sim_json_get_bool(d, it, parts[i], out[i], err);
    return ok;
}

static bool get_recompute_layers(const SimJsonDoc *d, const cJSON *par, StepPlan *p, GError **err)
{
    long n = 0, off = 0;
    if (!sim_json_get_int(d, par, "recompute_layers", false, 1, 1 << 16, &n, err) ||
        !sim_json_get_int(d, par, "cpu_offloading_num_layers", false, 0, 1 << 16, &off, err))
        return false;
    p->recompute_layers = (int)n;
    p->offload_layers = (int)off;
    return true;
}

/* "cpu_checkpointing_copy": "async" (a side stream, DeepSpeed's and
 * axolotl's hooks) or "blocking" (the compute stream: PyTorch's
 * save_on_cpu, which transformers' and accelerate's offload wrap). */
static bool get_checkpoint_copy(const SimJsonDoc *d, const cJSON *par, StepPlan *p, GError **err)
{
    static const char *const names[] = {"async", "blocking", NULL};
    int v = 0;
    if (!scenario_get_choice(d, par, "cpu_checkpointing_copy", names, &v, err))
        return false;
    p->cpu_checkpointing_blocking = v == 1;
    return true;
}

bool scenario_seed_parse(const SimJsonDoc *d, const cJSON *par, StepPlan *p, GError **err)
{
    static const char *const zpp[] = {"qwz", "hpz", "qgz", NULL};
    static const char *const sdp[] = {"weights", "gradients", NULL};
    bool *zo[] = {&p->qwz, &p->hpz, &p->qgz}, *so[] = {&p->sdp4bit_weights, &p->sdp4bit_gradients};
    return get_parts(d, par, "zeropp", zpp, zo, err) && get_parts(d, par, "sdp4bit", sdp, so, err) &&
           sim_json_get_bool(d, par, "partition_activations", &p->partition_activations, err) &&
           sim_json_get_bool(d, par, "cpu_checkpointing", &p->cpu_checkpointing, err) &&
           get_checkpoint_copy(d, par, p, err) &&
           sim_json_get_bool(d, par, "recompute_overlap", &p->recompute_overlap, err) && get_recompute_layers(d, par, p, err);
}

static const cJSON *item(const cJSON *where, const char *key)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(where, key);
    return it ? it : where;
}

static bool fail(const SimJsonDoc *d, const cJSON *where, const char *key, GError **err, const char *msg)
{
    sim_json_error(d, item(where, key), err, "\"%s\" %s", key, msg);
    return false;
}

/* The quantised collectives: ZeRO++ on ZeRO-3 (DeepSpeed's stage 3),
 * SDP4Bit on a ZeRO-1/2 sharded update (its weight differences need the
 * previous weights whole on every rank: Megatron's distributed optimizer). */
static bool check_quant(const SimJsonDoc *d, const cJSON *where, const StepPlan *p, int min_stage, int max_stage,
                        const Topo *topo, GError **err)
{
    bool zpp = p->qwz || p->hpz || p->qgz, sdp = p->sdp4bit_weights || p->sdp4bit_gradients;
    if (zpp && (min_stage != 3 || max_stage != 3))
        return fail(d, where, "zeropp", err, "(ZeRO++) needs \"zero_stage\": 3 in every variant");
    if (sdp && (min_stage < 1 || max_stage > 2))
        return fail(d, where, "sdp4bit", err,
                    "needs a ZeRO-1/2 sharded update in every variant (for ZeRO-3 use \"zeropp\")");
    const char *key = zpp ? "zeropp" : "sdp4bit";
    if ((zpp || sdp) && p->shard_group)
        return fail(d, where, key, err, "with \"shard_group\" (hybrid sharding) is not modelled");
    if (zpp && p->zero_fsdp)
        return fail(d, where, key, err, "is DeepSpeed's: not with \"zero_impl\": \"fsdp\" or \"fsdp2\"");
    if ((p->qgz || p->sdp4bit_gradients) && p->compression < 1)
        return fail(d, where, key, err, "quantises the gradients: it contradicts \"gradient_compression\"");
    if (!p->hpz && !p->qgz && !p->sdp4bit_gradients)
        return true;
    /* the hierarchy: dp ranks are tp apart, a node holds ranks_per_node / tp of them */
    int dpr = p->dp * p->cp, node_dp = topo_ranks_per_node(topo) / p->tp;
    if (node_dp > dpr)
        node_dp = dpr;
    if (p->hpz && node_dp < 2)
        return fail(d, where, "zeropp", err, "hpZ needs 2 or more dp ranks in a node (tp fills the node)");
    if (node_dp > 1 && dpr % node_dp) {
        sim_json_error(d, item(where, key), err, "\"%s\": dp x cp = %d must be a multiple of the %d dp ranks of a node",
                       key, dpr, node_dp);
        return false;
    }
    return true;
}

/* Block recomputation: full, on at most the layers of one model chunk, and
 * not with the techniques that assume every layer is checkpointed. */
static bool check_recompute_layers(const SimJsonDoc *d, const cJSON *where, const StepPlan *p, const Workload *w,
                                   GError **err)
{
    if (!p->recompute_layers)
        return true;
    const WorkloadTransformer *tr = workload_transformer(w);
    if (!tr || p->recompute != WORKLOAD_RECOMPUTE_FULL)
        return fail(d, where, "recompute_layers", err, "needs a transformer and \"recompute\": \"full\"");
    if (p->partition_activations || p->cpu_checkpointing || p->recompute_overlap)
        return fail(d, where, "recompute_layers", err,
                    "with \"partition_activations\", \"cpu_checkpointing\" or \"recompute_overlap\" is not modelled");
    int chunk = tr->layers / (p->pp * p->vpp);
    if (p->recompute_layers > chunk) {
        sim_json_error(d, item(where, "recompute_layers"), err,
                       "\"recompute_layers\" = %d: a model chunk has %d layers (%d over pp %d x virtual_stages %d)",
                       p->recompute_layers, chunk, tr->layers, p->pp, p->vpp);
        return false;
    }
    return true;
}

/* Megatron-Core's activation offloading (TransformerConfig.__post_init__):
 * fewer layers than the model has, no pipeline, no recomputation. */
static bool check_offload_layers(const SimJsonDoc *d, const cJSON *where, const StepPlan *p, const Workload *w,
                                 GError **err)
{
    if (!p->offload_layers)
        return true;
    const WorkloadTransformer *tr = workload_transformer(w);
    if (!tr)
        return fail(d, where, "cpu_offloading_num_layers", err, "is for transformers");
    if (p->offload_layers >= tr->layers) {
        sim_json_error(d, item(where, "cpu_offloading_num_layers"), err,
                       "\"cpu_offloading_num_layers\" = %d must be below the model's %d layers", p->offload_layers,
                       tr->layers);
        return false;
    }
    if (p->pp > 1)
        return fail(d, where, "cpu_offloading_num_layers", err, "needs \"pp\": 1 (Megatron-Core offloads without a pipeline)");
    if (p->recompute != WORKLOAD_RECOMPUTE_NONE || p->partition_activations)
        return fail(d, where, "cpu_offloading_num_layers", err, "needs \"recompute\": \"none\" (Megatron-Core refuses both)");
    return true;
}

bool scenario_seed_check(const SimJsonDoc *d, const cJSON *where, const StepPlan *p, int min_stage, int max_stage,
                         const Workload *w, const Topo *topo, GError **err)
{
    if (!check_quant(d, where, p, min_stage, max_stage, topo, err))
        return false;
    bool tr = workload_transformer(w) != NULL;
    if (p->partition_activations && !tr)
        return fail(d, where, "partition_activations", err, "is for transformers");
    if (p->partition_activations && p->tp == 1)
        return fail(d, where, "partition_activations", err, "needs \"tp\" > 1 (checkpoints are split over tp)");
    if (p->partition_activations && p->recompute != WORKLOAD_RECOMPUTE_FULL)
        return fail(d, where, "partition_activations", err, "needs \"recompute\": \"full\" (it splits the checkpoints)");
    if (p->partition_activations && p->sequence_parallel)
        return fail(d, where, "partition_activations", err,
                    "contradicts \"sequence_parallel\", whose checkpoints are split over tp already");
    if (p->cpu_checkpointing && (!tr || p->recompute != WORKLOAD_RECOMPUTE_FULL))
        return fail(d, where, "cpu_checkpointing", err,
                    "needs a transformer and \"recompute\": \"full\" (it moves each layer's checkpoint)");
    const cJSON *copy = cJSON_GetObjectItemCaseSensitive(where, "cpu_checkpointing_copy");
    if (copy && !cJSON_IsNull(copy) && !p->cpu_checkpointing)
        return fail(d, where, "cpu_checkpointing_copy", err, "needs \"cpu_checkpointing\": true");
    if (p->recompute_overlap && (!tr || p->recompute == WORKLOAD_RECOMPUTE_NONE))
        return fail(d, where, "recompute_overlap", err, "(Lynx) needs a transformer and \"recompute\"");
    return check_recompute_layers(d, where, p, w, err) && check_offload_layers(d, where, p, w, err);
}
