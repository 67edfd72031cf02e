/* The scenario: its JSON parsed and checked key by key, defaults filled,
 * the plan checked against the model and the machine (topology and
 * accelerator are loaded here), and the one rule for dp.  Every error names
 * the scenario's line of the key that is wrong.  The step builder reads the
 * result through scenario.h; nothing here knows about task graphs. */
#include "scenario.h"
#include "collective.h"
#include "scenario_plan.h"
#include "sim_data.h"
#include "topo_place.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define STEP_MAX_MICRO_BATCHES 65536
#define STEP_MAX_BUCKETS 200000

struct StepScenario {
    char *name;        /* the scenario's "name", else its file: the output's label */
    char *path;        /* its file, for messages */
    char *accelerator; /* NULL: the topology's */
    char *topology;
    int nodes;
    Topo *topo;        /* loaded while parsing, to check the plan against it */
    bool topo_shared;  /* owned by a StepCache */
    StepCache *cache;  /* while parsing: where the topology comes from (NULL: load it) */
    Accel *acc;
    Workload *w;
    int global_batch, micro_batch;
    AccelDtype dtype;
    MemoryPrecision precision;
    MemoryOptimizer optimizer;
    StepPlan plan;
    bool flow_contention; /* scale DP collectives by the flow simulation's contention */
    int nccl_version;     /* NCCL version code the collectives follow; 0: the newest */
    int nccl_library;     /* CollLibrary ("nccl_library"); -1: the topology's default */
    StepAttention attention; /* "attention": fused by default where the chip has a fused kernel */
    StepCrossEntropy cross_entropy; /* "cross_entropy": unfused by default */
    int gpus_per_process; /* GPUs one process drives (launches serially); 1 = one per GPU */
    bool dp_given;        /* else dp = ranks / (tp x pp): the replicas fill the machine */
    int nvariants;
    int variant_stage[2]; /* zero stage per variant (weight_update list) */
    char *variant_label[2];
    CollParams *coll_params; /* "collective_params" (a calibrated overlay), else the default */
    int *rank_map; /* job rank -> topology rank ("placement"); NULL: contiguous, the identity */
    char *placement; /* its name (and seed) for reports */
    Finetune finetune; /* "finetune" (finetune.h): FINETUNE_NONE for training from scratch */
    bool act_func_fp8; /* "activation_func_fp8_input_store" (fp8 only) */
    bool fp8_dpa;      /* "fp8_dot_product_attention" (fp8, fused attention only) */
    bool fp8_params;   /* "fp8_param_gather" (fp8 only) */
    Fp8Recipe fp8_recipe; /* "fp8_recipe" (fp8 only; delayed by default) */
};

struct StepCache {
    GMutex lock;
    GHashTable *topos; /* "nodes:topology" -> Topo */
};

StepCache *step_cache_new(void)
{
    StepCache *c = g_new0(StepCache, 1);
    g_mutex_init(&c->lock);
    c->topos = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, (GDestroyNotify)topo_free);
    return c;
}

void step_cache_free(StepCache *c)
{
    if (!c)
        return;
    g_hash_table_destroy(c->topos);
    g_mutex_clear(&c->lock);
    g_free(c);
}

/* topo_load through the cache: a topology is read-only once loaded. */
static Topo *cached_topo(StepScenario *sc, const TopoOptions *to, GError **err)
{
    if (!sc->cache)
        return topo_load(sc->topology, to, err);
    char *key = g_strdup_printf("%d:%s", to->nodes, sc->topology);
    g_mutex_lock(&sc->cache->lock);
    Topo *t = g_hash_table_lookup(sc->cache->topos, key);
    if (!t && (t = topo_load(sc->topology, to, err)))
        g_hash_table_insert(sc->cache->topos, g_strdup(key), t);
    g_mutex_unlock(&sc->cache->lock);
    g_free(key);
    sc->topo_shared = t != NULL;
    return t;
}

/* The line of `item`, recovered from sim_json_error's message. */
static int item_line(const SimJsonDoc *d, const cJSON *item)
{
    GError *e = NULL;
    sim_json_error(d, item, &e, "x");
    int line = 0;
    const char *p = e->message + strlen(sim_json_path(d));
    if (*p == ':')
        line = atoi(p + 1);
    g_error_free(e);
    return line;
}

/* An inline model: its text is re-parsed by the workload module, shifted so
 * that its errors name the line of "model" in the scenario. */
static Workload *parse_inline_model(const SimJsonDoc *d, const cJSON *m, GError **err)
{
    cJSON *copy = cJSON_Duplicate(m, true);
    if (!cJSON_GetObjectItemCaseSensitive(copy, "name")) /* the workload format wants one */
        cJSON_AddStringToObject(copy, "name", "custom");
    if (!cJSON_GetObjectItemCaseSensitive(copy, "type"))
        cJSON_AddStringToObject(copy, "type", "transformer");
    if (!cJSON_GetObjectItemCaseSensitive(copy, "source")) {
        char *src = g_strdup_printf("given inline in scenario %s", sim_json_path(d));
        cJSON_AddStringToObject(copy, "source", src);
        g_free(src);
    }
    char *body = cJSON_PrintUnformatted(copy);
    cJSON_Delete(copy);
    int line = item_line(d, m);
    GString *text = g_string_new(NULL);
    for (int i = 1; i < line; i++)
        g_string_append_c(text, '\n');
    g_string_append(text, body);
    cJSON_free(body);
    Workload *w = workload_parse(sim_json_path(d), text->str, text->len, err);
    g_string_free(text, TRUE);
    return w;
}

static const cJSON *key_or(const cJSON *obj, const char *key, const cJSON *fallback)
{
    const cJSON *it = obj ? cJSON_GetObjectItemCaseSensitive(obj, key) : NULL;
    return it && !cJSON_IsNull(it) ? it : fallback;
}

/* "attention": "fused" (FlashAttention-2/3, cuDNN fused attention) is the
 * default where the accelerator's preset has a fused kernel; "fused-v1" is
 * the FlashAttention-1 generation (flash-attn 1.x and its Triton port, what
 * 2023 trainings ran); "fused-v2" is FlashAttention-2 (flash-attn 2.x and
 * PyTorch SDPA's flash backend: what torchtitan runs on Hopper, where
 * "fused" is FA3 / cuDNN; the same as "fused" on Ampere); "unfused"
 * materialises the s x s scores (Megatron-LM before FlashAttention). */
static bool parse_attention(StepScenario *sc, const SimJsonDoc *d, const cJSON *root, GError **err)
{
    const char *att = NULL;
    if (!sim_json_get_string(d, root, "attention", false, &att, err))
        return false;
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(root, "attention");
    sc->attention = accel_has_fused_attention(sc->acc) ? STEP_ATTN_FUSED : STEP_ATTN_UNFUSED;
    if (!att)
        return true;
    if (!strcmp(att, "fused"))
        sc->attention = STEP_ATTN_FUSED;
    else if (!strcmp(att, "fused-v1"))
        sc->attention = STEP_ATTN_FUSED_V1;
    else if (!strcmp(att, "fused-v2"))
        sc->attention = STEP_ATTN_FUSED_V2;
    else if (!strcmp(att, "unfused"))
        sc->attention = STEP_ATTN_UNFUSED;
    else {
        sim_json_error(d, it, err,
                       "\"attention\" = \"%s\" is not one of \"fused\", \"fused-v1\", \"fused-v2\", \"unfused\"",
                       SIM_ECHO(att));
        return false;
    }
    if (sc->attention != STEP_ATTN_UNFUSED && !accel_has_fused_attention(sc->acc)) {
        sim_json_error(d, it, err,
                       "accelerator %s has no fused attention kernel (FlashAttention-2 needs Ampere/MI200 or newer): "
                       "use \"attention\": \"unfused\"",
                       SIM_ECHO(accel_name(sc->acc)));
        return false;
    }
    return true;
}

static bool parse_cross_entropy(StepScenario *sc, const SimJsonDoc *d, const cJSON *root, GError **err)
{
    static const char *const names[] = {"unfused", "fp32", "fused", "loss_parallel"};
    const char *ce = NULL;
    if (!sim_json_get_string(d, root, "cross_entropy", false, &ce, err))
        return false;
    sc->cross_entropy = STEP_CE_UNFUSED;
    if (!ce)
        return true;
    for (int i = 0; i < (int)G_N_ELEMENTS(names); i++)
        if (!strcmp(ce, names[i])) {
            sc->cross_entropy = (StepCrossEntropy)i;
            return true;
        }
    sim_json_error(d, cJSON_GetObjectItemCaseSensitive(root, "cross_entropy"), err,
                   "\"cross_entropy\" = \"%s\" is not one of \"unfused\", \"fp32\", \"fused\", \"loss_parallel\"",
                   SIM_ECHO(ce));
    return false;
}

/* The topology and accelerator, loaded once here: whatever is wrong between
 * them and the scenario is reported at the scenario's line that asked. */
static bool load_machine(StepScenario *sc, const SimJsonDoc *d, const cJSON *root, GError **err)
{
    /* presets named in the scenario must exist: say so at their line */
    static const struct {
        const char *key, *subdir, *what;
    } presets[] = {{"topology", "topologies/presets", "topology preset"},
                   {"accelerator", "models/presets/accelerators", "accelerator"}};
    for (size_t i = 0; i < G_N_ELEMENTS(presets); i++) {
        const cJSON *it = cJSON_GetObjectItemCaseSensitive(root, presets[i].key);
        if (!cJSON_IsString(it) || sim_data_is_path(it->valuestring))
            continue;
        GError *e = NULL;
        char *path = sim_data_resolve(presets[i].subdir, presets[i].what, it->valuestring, &e);
        g_free(path);
        if (e) {
            sim_json_error(d, it, err, "%s", e->message);
            g_error_free(e);
            return false;
        }
    }
    const cJSON *topo_it = cJSON_GetObjectItemCaseSensitive(root, "topology");
    const cJSON *nodes_it = key_or(root, "nodes", topo_it);
    TopoOptions to = {.nodes = sc->nodes};
    GError *e = NULL;
    sc->topo = cached_topo(sc, &to, &e);
    if (!sc->topo) {
        /* the topology's own file:line is in the message; the scenario's line says which key asked */
        if (e->domain == SIM_ERROR && e->code == SIM_ERROR_INPUT)
            sim_json_error(d, sc->nodes ? nodes_it : topo_it, err, "%s", e->message);
        else
            g_propagate_error(err, g_steal_pointer(&e));
        g_clear_error(&e);
        return false;
    }
    const cJSON *acc_it = key_or(root, "accelerator", topo_it);
    const char *an = sc->accelerator ? sc->accelerator : topo_accelerator(sc->topo);
    if (!an) {
        sim_json_error(d, topo_it, err, "topology %s names no accelerator: give \"accelerator\"",
                       SIM_ECHO(topo_name(sc->topo)));
        return false;
    }
    sc->acc = accel_load(an, &e);
    if (!sc->acc) {
        if (e->domain == SIM_ERROR && e->code == SIM_ERROR_INPUT)
            sim_json_error(d, acc_it, err, "%s", e->message);
        else
            g_propagate_error(err, g_steal_pointer(&e));
        g_clear_error(&e);
        return false;
    }
    if (!parse_attention(sc, d, root, err) || !parse_cross_entropy(sc, d, root, err))
        return false;
    if (!accel_has_dtype(sc->acc, sc->dtype)) {
        bool given = key_or(root, "precision", NULL) != NULL;
        sim_json_error(d, key_or(root, "precision", acc_it), err, "accelerator %s has no %s arithmetic%s",
                       SIM_ECHO(accel_name(sc->acc)), accel_dtype_name(sc->dtype),
                       given ? "" : " (the default \"precision\"): give another \"precision\"");
        return false;
    }
    return true;
}

/* One rule for run and sweep alike: dp as given, else the replicas fill the
 * machine, dp = ranks / (tp x pp).  Returns 0 and sets `err` (no position)
 * when tp x pp does not divide the ranks. */
static int fill_dp(const Topo *t, int tp, int pp, GError **err)
{
    int ranks = topo_num_ranks(t);
    if (ranks % ((long)tp * pp)) {
        g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT,
                    "\"dp\" is not given, so the replicas fill the machine, but topology %s has %d ranks (%d nodes "
                    "x %d), not a multiple of tp x pp = %d x %d: give dp or change tp, pp",
                    SIM_ECHO(topo_name(t)), ranks, topo_num_nodes(t), topo_ranks_per_node(t), tp, pp);
        return 0;
    }
    return (int)(ranks / ((long)tp * pp));
}

static bool resolve_dp(StepScenario *sc, const SimJsonDoc *d, const cJSON *root, const cJSON *where, GError **err)
{
    StepPlan *p = &sc->plan;
    const Topo *t = sc->topo;
    sc->dp_given = p->dp > 0;
    if (!sc->dp_given) {
        GError *e = NULL;
        p->dp = fill_dp(t, p->tp * p->cp, p->pp, &e); /* context parallelism: cp x tp devices per replica-stage */
        if (!p->dp) {
            const cJSON *at = key_or(where, "tp", key_or(where, "pp", key_or(root, "nodes", key_or(root, "topology", root))));
            sim_json_error(d, at, err, "%s", e->message);
            g_error_free(e);
            return false;
        }
    }
    long devices = (long)p->dp * p->tp * p->pp * p->cp;
    int ranks = topo_num_ranks(t);
    if (devices > ranks) {
        char *cp = p->cp > 1 ? g_strdup_printf(" x cp %d", p->cp) : g_strdup("");
        sim_json_error(d, key_or(where, "dp", where), err,
                       "dp x tp x pp = %d x %d x %d%s = %ld devices, but topology %s has %d ranks (%d nodes x %d)", p->dp,
                       p->tp, p->pp, cp, devices, SIM_ECHO(topo_name(t)), ranks, topo_num_nodes(t),
                       topo_ranks_per_node(t));
        g_free(cp);
        return false;
    }
    return true;
}

bool step_json_dp(const cJSON *scenario, long *dp, GError **err)
{
    const cJSON *par = cJSON_GetObjectItemCaseSensitive(scenario, "parallelism");
    const cJSON *v = cJSON_IsObject(par) ? cJSON_GetObjectItemCaseSensitive(par, "dp") : NULL;
    if (cJSON_IsNumber(v)) {
        *dp = (long)v->valuedouble;
        return true;
    }
    const cJSON *topo = cJSON_GetObjectItemCaseSensitive(scenario, "topology");
    if (!cJSON_IsString(topo)) {
        g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "\"topology\" must be a string");
        return false;
    }
    long k[4] = {0, 1, 1, 1}; /* nodes, tp, pp, cp */
    const char *names[4] = {"nodes", "tp", "pp", "cp"};
    const cJSON *objs[4] = {scenario, par, par, par};
    for (int i = 0; i < 4; i++) {
        const cJSON *x = cJSON_IsObject(objs[i]) ? cJSON_GetObjectItemCaseSensitive(objs[i], names[i]) : NULL;
        if (!x || cJSON_IsNull(x))
            continue;
        if (!cJSON_IsNumber(x) || x->valuedouble != floor(x->valuedouble) || x->valuedouble < 1 ||
            x->valuedouble > (i == 0 ? 1 << 20 : 1 << 16)) {
            g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "\"%s\" must be an integer between 1 and %d", names[i],
                        i == 0 ? 1 << 20 : 1 << 16);
            return false;
        }
        k[i] = (long)x->valuedouble;
    }
    TopoOptions to = {.nodes = (int)k[0]};
    Topo *t = topo_load(topo->valuestring, &to, err);
    if (!t)
        return false;
    int n = fill_dp(t, (int)(k[1] * k[3]), (int)k[2], err);
    topo_free(t);
    *dp = n;
    return n > 0;
}

/* "precision" (tf32: fp32 storage, tf32 arithmetic) and "optimizer". */
static bool parse_training(StepScenario *sc, const SimJsonDoc *d, const cJSON *root, const char *prec,
                           const char *opt, GError **err)
{
    if (!memory_precision_from_name(prec, &sc->precision) && g_ascii_strcasecmp(prec, "tf32")) {
        sim_json_error(d, cJSON_GetObjectItemCaseSensitive(root, "precision"), err,
                       "\"precision\" = \"%s\" is not one of \"bf16\", \"fp16\", \"fp32\", \"tf32\", \"fp8\"",
                       SIM_ECHO(prec));
        return false;
    }
    if (!g_ascii_strcasecmp(prec, "tf32")) {
        sc->precision = MEMORY_FP32;
        sc->dtype = ACCEL_TF32;
    } else {
        sc->dtype = sc->precision == MEMORY_FP32         ? ACCEL_FP32
                    : sc->precision == MEMORY_MIXED_FP16 ? ACCEL_FP16
                    : sc->precision == MEMORY_MIXED_FP8  ? ACCEL_FP8 /* the linear layers' GEMMs */
                                                         : ACCEL_BF16;
    }
    if (!g_ascii_strcasecmp(opt, "sgd_momentum") || !g_ascii_strcasecmp(opt, "sgd-momentum") ||
        !g_ascii_strcasecmp(opt, "momentum"))
        sc->optimizer = MEMORY_OPT_SGD_MOMENTUM;
    else if (!memory_optimizer_from_name(opt, &sc->optimizer)) {
        sim_json_error(d, cJSON_GetObjectItemCaseSensitive(root, "optimizer"), err,
                       "\"optimizer\" = \"%s\" is not one of \"sgd\", \"sgd_momentum\", \"adam\", \"adamw\", \"lamb\"",
                       SIM_ECHO(opt));
        return false;
    }
    return true;
}

/* "model": a preset's name, a workload file, or hyper-parameters inline;
 * a transformer for now. */
static bool parse_model(StepScenario *sc, const SimJsonDoc *d, const cJSON *root, GError **err)
{
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(root, "model");
    if (!m || cJSON_IsNull(m)) {
        sim_json_error(d, root, err, "missing required field \"model\"");
        return false;
    }
    if (cJSON_IsString(m)) {
        GError *e = NULL;
        sc->w = workload_load(m->valuestring, &e);
        if (!sc->w) {
            /* a file's error after the line of "model", as a topology's or an accelerator's */
            if (strchr(m->valuestring, '/') || g_str_has_suffix(m->valuestring, ".json"))
                sim_json_error(d, m, err, "%s", e->message);
            else
                sim_json_error(d, m, err, "model \"%s\": %s", SIM_ECHO(m->valuestring), e->message);
            g_error_free(e);
            return false;
        }
    } else if (cJSON_IsObject(m)) {
        sc->w = parse_inline_model(d, m, err);
        if (!sc->w)
            return false;
    } else {
        sim_json_error(d, m, err, "\"model\" must be a preset name or an object of hyper-parameters");
        return false;
    }
    return true;
}

/* The plan against the model: tp divides what it splits, pp no more stages
 * than layers, and a graph small enough to simulate in reasonable time. */
static bool check_plan_model(const StepScenario *sc, const SimJsonDoc *d, const cJSON *where, GError **err)
{
    const StepPlan *p = &sc->plan;
    const WorkloadTransformer *tr = workload_transformer(sc->w);
    if (!tr) /* a CNN: data parallel (scenario_par.c) */
        return scenario_cnn_check(d, where, p, sc->w, err);
    const cJSON *tp_it = key_or(where, "tp", where), *pp_it = key_or(where, "pp", where);
    if (tr->heads % p->tp || tr->hidden % p->tp || tr->ffn % p->tp || tr->kv_heads % p->tp) {
        sim_json_error(d, tp_it, err, "\"tp\" = %d must divide the heads (%d), kv heads (%d), hidden (%d) and ffn (%d)",
                       p->tp, tr->heads, tr->kv_heads, tr->hidden, tr->ffn);
        return false;
    }
    if (p->pp > tr->layers) {
        sim_json_error(d, pp_it, err, "\"pp\" = %d exceeds the model's %d layers", p->pp, tr->layers);
        return false;
    }
    if (p->sequence_parallel && tr->seq_len % p->tp) {
        sim_json_error(d, cJSON_GetObjectItemCaseSensitive(where, "sequence_parallel"), err,
                       "sequence parallelism needs tp (%d) to divide seq_len (%d)", p->tp, tr->seq_len);
        return false;
    }
    /* the graph grows with micro-batches and buckets: refuse what cannot be
     * simulated in reasonable time rather than run for minutes */
    double buckets = workload_params_total(sc->w) / ((double)p->tp * p->pp) * 4 / p->bucket_bytes;
    if (buckets > STEP_MAX_BUCKETS) {
        char *bb = sim_format_quantity(p->bucket_bytes, SIM_UNIT_BYTES);
        sim_json_error(d, key_or(where, "bucket_bytes", where), err,
                       "\"bucket_bytes\" = %s makes %.0f gradient buckets per device; at most %d can be simulated",
                       bb, buckets, STEP_MAX_BUCKETS);
        g_free(bb);
        return false;
    }
    return true;
}

/* The global batch against dp and the micro-batch (dp_given: as the
 * scenario gave it, not filled). */
static bool check_batch_dp(const StepScenario *sc, const SimJsonDoc *d, const cJSON *root, int dp, bool dp_given,
                           GError **err)
{
    const cJSON *gb_it = cJSON_GetObjectItemCaseSensitive(root, "global_batch");
    if (sc->global_batch % ((long)dp * sc->micro_batch)) {
        sim_json_error(d, gb_it, err, "\"global_batch\" %d is not a multiple of dp x micro_batch = %d x %d%s",
                       sc->global_batch, dp, sc->micro_batch,
                       dp_given ? "" : " (dp fills the machine: ranks / (tp x pp))");
        return false;
    }
    long micro_batches = sc->global_batch / ((long)dp * sc->micro_batch);
    if (micro_batches > STEP_MAX_MICRO_BATCHES) {
        sim_json_error(d, gb_it, err,
                       "%ld micro-batches per step (global_batch / (dp x micro_batch)); at most %d can be simulated: "
                       "raise micro_batch or dp",
                       micro_batches, STEP_MAX_MICRO_BATCHES);
        return false;
    }
    return true;
}

static bool check_batch(const StepScenario *sc, const SimJsonDoc *d, const cJSON *root, GError **err)
{
    return check_batch_dp(sc, d, root, sc->plan.dp, sc->dp_given, err);
}

/* The batch checked before the topology is built, where dp is known without
 * it (given, or the ranks read from the topology file): a job that cannot run
 * fails at once, not after building a large machine.  Where it cannot tell,
 * check_batch does after the build. */
static bool precheck_batch(const StepScenario *sc, const SimJsonDoc *d, const cJSON *root, GError **err)
{
    const StepPlan *p = &sc->plan;
    if (p->dp > 0)
        return check_batch_dp(sc, d, root, p->dp, true, err);
    TopoOptions to = {.nodes = sc->nodes};
    long per_replica = (long)p->tp * p->cp * p->pp;
    int ranks = topo_peek_ranks(sc->topology, &to);
    if (ranks <= 0 || ranks % per_replica)
        return true; /* resolve_dp says what is wrong */
    return check_batch_dp(sc, d, root, (int)(ranks / per_replica), false, err);
}

/* "collective_params": the collective model's parameters or an overlay
 * (what `shardsim calibrate -o` writes); the default file otherwise. */
static bool load_coll_params(StepScenario *sc, const SimJsonDoc *d, const cJSON *root, GError **err)
{
    const char *path = NULL;
    if (!sim_json_get_string(d, root, "collective_params", false, &path, err))
        return false;
    GError *e = NULL;
    sc->coll_params = coll_params_new(path, &e);
    if (!sc->coll_params) {
        const cJSON *it = cJSON_GetObjectItemCaseSensitive(root, "collective_params");
        sim_json_error(d, it ? it : root, err, "%s", e->message);
        g_error_free(e);
        return false;
    }
    return true;
}

/* "placement" (topo_place.h) and "placement_seed": where the job's
 * dp x tp x pp ranks sit, nodes filled in turn. */
static bool parse_placement(StepScenario *sc, const SimJsonDoc *d, const cJSON *root, GError **err)
{
    const char *name = "contiguous";
    long seed = 1;
    TopoPlacement p;
    if (!sim_json_get_string(d, root, "placement", false, &name, err) ||
        !sim_json_get_int(d, root, "placement_seed", false, 0, 1L << 30, &seed, err))
        return false;
    const cJSON *at = cJSON_GetObjectItemCaseSensitive(root, "placement");
    if (!topo_placement_parse(name, &p)) {
        sim_json_error(d, at, err, "\"placement\" = \"%s\" is not one of %s", SIM_ECHO(name), TOPO_PLACE_CHOICES);
        return false;
    }
    if (cJSON_GetObjectItemCaseSensitive(root, "placement_seed") && p != TOPO_PLACE_SCATTERED) {
        sim_json_error(d, cJSON_GetObjectItemCaseSensitive(root, "placement_seed"), err,
                       "\"placement_seed\" is for \"placement\": \"scattered\" only");
        return false;
    }
    if (p == TOPO_PLACE_CONTIGUOUS)
        return true;
    sc->placement = p == TOPO_PLACE_SCATTERED ? g_strdup_printf("scattered, seed %ld", seed)
                                              : g_strdup(topo_placement_name(p));
    int devices = sc->plan.dp * sc->plan.tp * sc->plan.pp, rpn = topo_ranks_per_node(sc->topo);
    GError *e = NULL;
    sc->rank_map = topo_place(sc->topo, p, (uint64_t)seed, devices, devices < rpn ? devices : rpn, &e);
    if (!sc->rank_map) {
        sim_json_error(d, at, err, "%s", e->message);
        g_error_free(e);
        return false;
    }
    return true;
}

/* The checks run in the order a reader fixes a scenario: its own keys, the
 * model, the plan against the model, the machine, dp and the batch. */
static StepScenario *scenario_from_doc(const SimJsonDoc *d, StepCache *cache, GError **err)
{
    static const char *const keys[] = {"accelerator", "topology", "nodes", "model", "global_batch", "micro_batch",
                                       "precision", "optimizer", "parallelism", "name", "description", "source",
                                       "flow_contention", "collective_params", "placement", "placement_seed",
                                       "nccl_version", "nccl_library", "attention", "cross_entropy", "gpus_per_process",
                                       "finetune", "activation_func_fp8_input_store",
                                       "fp8_dot_product_attention", "fp8_param_gather", "fp8_recipe", NULL};
    const cJSON *root = sim_json_root(d);
    if (!cJSON_IsObject(root)) {
        sim_json_error(d, root, err, "a scenario must be a JSON object");
        return NULL;
    }
    if (!scenario_check_keys(d, root, "the scenario", keys, err))
        return NULL;
    StepScenario *sc = g_new0(StepScenario, 1);
    sc->cache = cache;
    const char *acc = NULL, *topo = NULL, *prec = "bf16", *opt = "adam", *name = NULL;
    long nodes = 0, gb = 0, mb = 1;
    if (!sim_json_get_string(d, root, "name", false, &name, err) ||
        !sim_json_get_string(d, root, "accelerator", false, &acc, err) ||
        !sim_json_get_string(d, root, "topology", true, &topo, err) ||
        !sim_json_get_int(d, root, "nodes", false, 1, 1 << 20, &nodes, err) ||
        !sim_json_get_int(d, root, "global_batch", true, 1, 1L << 30, &gb, err) ||
        !sim_json_get_int(d, root, "micro_batch", false, 1, 1L << 20, &mb, err) ||
        !sim_json_get_string(d, root, "precision", false, &prec, err) ||
        !sim_json_get_string(d, root, "optimizer", false, &opt, err))
        goto fail;
    sc->name = g_strdup(name ? name : sim_json_path(d));
    sc->path = g_strdup(sim_json_path(d));
    sc->flow_contention = true;
    long gpp = 1;
    if (!sim_json_get_bool(d, root, "flow_contention", &sc->flow_contention, err) ||
        !sim_json_get_int(d, root, "gpus_per_process", false, 1, 64, &gpp, err))
        goto fail;
    if (!load_coll_params(sc, d, root, err))
        goto fail;
    const char *ver = NULL;
    if (!sim_json_get_string(d, root, "nccl_version", false, &ver, err))
        goto fail;
    if (ver && (sc->nccl_version = coll_nccl_version_parse(ver)) <= 0) {
        sim_json_error(d, cJSON_GetObjectItemCaseSensitive(root, "nccl_version"), err,
                       "\"nccl_version\" must be an NCCL version such as \"2.18.3\"");
        goto fail;
    }
    const char *lib = NULL;
    if (!sim_json_get_string(d, root, "nccl_library", false, &lib, err))
        goto fail;
    sc->nccl_library = lib ? coll_library_parse(lib) : -1;
    if (lib && sc->nccl_library < 0) {
        sim_json_error(d, cJSON_GetObjectItemCaseSensitive(root, "nccl_library"), err,
                       "\"nccl_library\" must be \"nccl\" or \"rccl\"");
        goto fail;
    }
    sc->gpus_per_process = (int)gpp;
    sc->accelerator = acc ? g_strdup(acc) : NULL;
    sc->topology = g_strdup(topo);
    sc->nodes = (int)nodes;
    sc->global_batch = (int)gb;
    sc->micro_batch = (int)mb;
    if (!parse_training(sc, d, root, prec, opt, err) || !parse_model(sc, d, root, err) ||
        !finetune_parse(d, root, &sc->finetune, err) ||
        !finetune_check(d, root, &sc->finetune, sc->w, sc->precision == MEMORY_MIXED_FP8, err) ||
        !sim_json_get_bool(d, root, "activation_func_fp8_input_store", &sc->act_func_fp8, err) ||
        !sim_json_get_bool(d, root, "fp8_dot_product_attention", &sc->fp8_dpa, err) ||
        !sim_json_get_bool(d, root, "fp8_param_gather", &sc->fp8_params, err) ||
        !fp8_recipe_parse(d, root, sc->precision == MEMORY_MIXED_FP8, &sc->fp8_recipe, err))
        goto fail;
    const char *fp8_key = sc->act_func_fp8 ? "activation_func_fp8_input_store"
                          : sc->fp8_dpa    ? "fp8_dot_product_attention"
                          : sc->fp8_params ? "fp8_param_gather"
                                           : NULL;
    if (fp8_key && sc->precision != MEMORY_MIXED_FP8) {
        sim_json_error(d, cJSON_GetObjectItemCaseSensitive(root, fp8_key), err, "\"%s\" needs \"precision\": \"fp8\"",
                       fp8_key);
        goto fail;
    }
    const cJSON *par = cJSON_GetObjectItemCaseSensitive(root, "parallelism");
    if (!scenario_plan_parse(d, par, &sc->plan, &sc->nvariants, sc->variant_stage, err))
        goto fail;
    for (int i = 0; i < sc->nvariants; i++) {
        int stage = sc->variant_stage[i];
        sc->variant_label[i] = stage == 0   ? g_strdup("replicated")
                               : stage == 1 ? g_strdup("sharded (ZeRO-1)")
                                            : g_strdup_printf("sharded (ZeRO-%d)", stage);
    }
    const cJSON *where = par ? par : root;
    /* LoRA under ZeRO-3 / FSDP: DeepSpeed and PyTorch FSDP shard the frozen
     * base too (gathered per layer); the model holds it whole (par_lora.c) */
    if (sc->finetune.method != FINETUNE_NONE && MAX(sc->variant_stage[0], sc->variant_stage[sc->nvariants - 1]) == 3) {
        sim_json_error(d, key_or(where, "zero_stage", where), err,
                       "\"finetune\" with ZeRO-3 / FSDP is not modelled (they shard the frozen base as well): use "
                       "\"zero_stage\" 0-2 (\"weight_update\": \"replicated\" or \"sharded\")");
        goto fail;
    }
    if (!check_plan_model(sc, d, where, err) || !precheck_batch(sc, d, root, err) || !load_machine(sc, d, root, err) ||
        !resolve_dp(sc, d, root, where, err) || !check_batch(sc, d, root, err) ||
        !scenario_par_check(d, where, &sc->plan, MAX(sc->variant_stage[0], sc->variant_stage[sc->nvariants - 1]),
                            sc->w, sc->global_batch / (sc->plan.dp * sc->micro_batch), err) ||
        !scenario_seed_check(d, where, &sc->plan, MIN(sc->variant_stage[0], sc->variant_stage[sc->nvariants - 1]),
                             MAX(sc->variant_stage[0], sc->variant_stage[sc->nvariants - 1]), sc->w, sc->topo, err) ||
        !parse_placement(sc, d, root, err) ||
        !fp8_recipe_check(d, root, sc->fp8_recipe, sc->acc, sc->fp8_params, err) ||
        !scenario_modules_check(d, where, &sc->plan,
                                sc->precision == MEMORY_MIXED_FP8 && sc->fp8_recipe == FP8_DELAYED,
                                sc->finetune.method != FINETUNE_NONE, err))
        goto fail;
    if (sc->gpus_per_process > topo_ranks_per_node(sc->topo)) {
        sim_json_error(d, cJSON_GetObjectItemCaseSensitive(root, "gpus_per_process"), err,
                       "\"gpus_per_process\" %d: a node of %s has %d GPUs", sc->gpus_per_process,
                       topo_name(sc->topo), topo_ranks_per_node(sc->topo));
        goto fail;
    }
    if (sc->fp8_dpa && sc->attention == STEP_ATTN_UNFUSED) {
        sim_json_error(d, cJSON_GetObjectItemCaseSensitive(root, "fp8_dot_product_attention"), err,
                       "\"fp8_dot_product_attention\" is a fused attention kernel's: not with \"attention\": \"unfused\"");
        goto fail;
    }
    sc->cache = NULL;
    return sc;
fail:
    step_scenario_free(sc);
    return NULL;
}

StepScenario *step_scenario_parse_cached(const char *name, const char *text, size_t len, StepCache *cache,
                                         GError **err)
{
    SimJsonDoc *d = sim_json_parse(name, text, len, err);
    if (!d)
        return NULL;
    StepScenario *sc = scenario_from_doc(d, cache, err);
    sim_json_free(d);
    return sc;
}

StepScenario *step_scenario_parse(const char *name, const char *text, size_t len, GError **err)
{
    return step_scenario_parse_cached(name, text, len, NULL, err);
}

StepScenario *step_scenario_load(const char *path, GError **err)
{
    SimJsonDoc *d = sim_json_load_file(path, err);
    if (!d)
        return NULL;
    StepScenario *sc = scenario_from_doc(d, NULL, err);
    sim_json_free(d);
    return sc;
}

void step_scenario_free(StepScenario *sc)
{
    if (!sc)
        return;
    coll_params_free(sc->coll_params);
    g_free(sc->name);
    g_free(sc->path);
    if (!sc->topo_shared)
        topo_free(sc->topo);
    accel_free(sc->acc);
    g_free(sc->accelerator);
    g_free(sc->topology);
    workload_free(sc->w);
    g_free(sc->rank_map);
    g_free(sc->placement);
    for (int i = 0; i < 2; i++)
        g_free(sc->variant_label[i]);
    g_free(sc);
}

int step_scenario_num_variants(const StepScenario *sc) { return sc->nvariants; }

const char *step_scenario_variant_label(const StepScenario *sc, int v)
{
    return v >= 0 && v < sc->nvariants ? sc->variant_label[v] : NULL;
}


StepPlan step_scenario_plan(const StepScenario *sc, int variant)
{
    StepPlan p = sc->plan;
    p.zero_stage = sc->variant_stage[variant];
    return p;
}

const char *step_scenario_name(const StepScenario *sc) { return sc->name; }
const char *step_scenario_path(const StepScenario *sc) { return sc->path; }
const Topo *step_scenario_topo(const StepScenario *sc) { return sc->topo; }
const Accel *step_scenario_accel(const StepScenario *sc) { return sc->acc; }
bool step_scenario_accel_given(const StepScenario *sc) { return sc->accelerator != NULL; }
const Workload *step_scenario_workload(const StepScenario *sc) { return sc->w; }
int step_scenario_global_batch(const StepScenario *sc) { return sc->global_batch; }
int step_scenario_micro_batch(const StepScenario *sc) { return sc->micro_batch; }
AccelDtype step_scenario_dtype(const StepScenario *sc) { return sc->dtype; }
MemoryPrecision step_scenario_precision(const StepScenario *sc) { return sc->precision; }
MemoryOptimizer step_scenario_optimizer(const StepScenario *sc) { return sc->optimizer; }
bool step_scenario_flow_contention(const StepScenario *sc) { return sc->flow_contention; }
const CollParams *step_scenario_coll_params(const StepScenario *sc) { return sc->coll_params; }

void step_scenario_set_accel(StepScenario *sc, const Accel *a)
{
    accel_free(sc->acc);
    sc->acc = accel_copy(a);
}
int step_scenario_nccl_version(const StepScenario *sc) { return sc->nccl_version; }
int step_scenario_nccl_library(const StepScenario *sc) { return sc->nccl_library; }
StepAttention step_scenario_attention(const StepScenario *sc) { return sc->attention; }
StepCrossEntropy step_scenario_cross_entropy(const StepScenario *sc) { return sc->cross_entropy; }
int step_scenario_gpus_per_process(const StepScenario *sc) { return sc->gpus_per_process; }
bool step_scenario_dp_given(const StepScenario *sc) { return sc->dp_given; }
const int *step_scenario_rank_map(const StepScenario *sc) { return sc->rank_map; }
const char *step_scenario_placement(const StepScenario *sc) { return sc->placement ? sc->placement : "contiguous"; }
const Finetune *step_scenario_finetune(const StepScenario *sc) { return &sc->finetune; }
bool step_scenario_act_func_fp8(const StepScenario *sc) { return sc->act_func_fp8; }
bool step_scenario_fp8_dpa(const StepScenario *sc) { return sc->fp8_dpa; }
bool step_scenario_fp8_params(const StepScenario *sc) { return sc->fp8_params; }
Fp8Recipe step_scenario_fp8_recipe(const StepScenario *sc) { return sc->fp8_recipe; }
