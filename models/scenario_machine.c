/* The machine a scenario runs on: its topology (loaded once per StepCache,
 * shared by a sweep's or a plan's points), its accelerator and what depends on
 * the accelerator ("attention", "framework" with "memory_fraction" and
 * "fp8_casts", "cross_entropy"), the collective model's
 * parameters, the one rule for dp (as given, else the replicas fill the
 * machine; run, sweep and step_json_dp alike) and where the job's ranks sit
 * ("placement").  Every error names the scenario's line of the key that
 * asked; the keys themselves are read in scenario.c. */
#include "scenario_internal.h"
#include "scenario_plan.h"
#include "collective.h"
#include "sim_data.h"
#include "topo_place.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

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
    if (!workload_transformer(sc->w)) {
        sim_json_error(d, it, err, "\"attention\" is for transformers: a CNN has none");
        return false;
    }
    if (!g_ascii_strcasecmp(att, "fused"))
        sc->attention = STEP_ATTN_FUSED;
    else if (!g_ascii_strcasecmp(att, "fused-v1"))
        sc->attention = STEP_ATTN_FUSED_V1;
    else if (!g_ascii_strcasecmp(att, "fused-v2"))
        sc->attention = STEP_ATTN_FUSED_V2;
    else if (!g_ascii_strcasecmp(att, "unfused"))
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

/* "cross_entropy"'s names, in StepCrossEntropy's order. */
static const char *const ce_names[] = {"unfused", "fp32", "fused", "loss_parallel", "fp32_fused", "te", "compiled", "bf16",
                                      "chunked"};

const char *step_cross_entropy_name(StepCrossEntropy ce) { return ce_names[ce]; }

static bool parse_cross_entropy(StepScenario *sc, const SimJsonDoc *d, const cJSON *root, GError **err)
{
    const char *ce = NULL;
    if (!sim_json_get_string(d, root, "cross_entropy", false, &ce, err))
        return false;
    /* XLA compiles the loss with the logits' producer (its own fusion) */
    sc->cross_entropy = sc->framework == STEP_FRAMEWORK_JAX && workload_transformer(sc->w) ? STEP_CE_COMPILED
                                                                                           : STEP_CE_UNFUSED;
    if (!ce)
        return true;
    if (!workload_transformer(sc->w)) { /* a CNN's loss over its classes is not modelled */
        sim_json_error(d, cJSON_GetObjectItemCaseSensitive(root, "cross_entropy"), err,
                       "\"cross_entropy\" is for transformers: a CNN's loss is not modelled");
        return false;
    }
    for (int i = 0; i < (int)G_N_ELEMENTS(ce_names); i++)
        if (!g_ascii_strcasecmp(ce, ce_names[i])) {
            sc->cross_entropy = (StepCrossEntropy)i;
            return true;
        }
    GString *names = g_string_new(NULL); /* the table's, not a second list of them */
    for (int i = 0; i < (int)G_N_ELEMENTS(ce_names); i++)
        g_string_append_printf(names, "%s\"%s\"", i ? ", " : "", ce_names[i]);
    sim_json_error(d, cJSON_GetObjectItemCaseSensitive(root, "cross_entropy"), err,
                   "\"cross_entropy\" = \"%s\" is not one of %s", SIM_ECHO(ce), names->str);
    g_string_free(names, TRUE);
    return false;
}

/* "framework" (scenario.h): read before "cross_entropy", whose default
 * follows it; a chip that runs only XLA's programs (TPUs) runs its step as
 * jax does, and MaxText's and Praxis's pipelines differentiate through a
 * loop over the micro-batches: every forward before the backwards (GPipe),
 * unless "schedule" says otherwise. */
static bool parse_framework(StepScenario *sc, const SimJsonDoc *d, const cJSON *root, GError **err)
{
    static const char *const frameworks[] = {"pytorch", "jax", NULL};
    int f = -1; /* -1: not given */
    if (!scenario_get_choice(d, root, "framework", frameworks, &f, err))
        return false;
    bool xla = accel_xla_only(sc->acc);
    if (f == 0 && xla) {
        sim_json_error(d, cJSON_GetObjectItemCaseSensitive(root, "framework"), err,
                       "accelerator %s runs only XLA-compiled programs (PyTorch/XLA too): \"framework\": \"jax\"",
                       SIM_ECHO(accel_name(sc->acc)));
        return false;
    }
    sc->framework = f == 1 || xla ? STEP_FRAMEWORK_JAX : STEP_FRAMEWORK_PYTORCH;
    const cJSON *par = cJSON_GetObjectItemCaseSensitive(root, "parallelism");
    if (sc->framework == STEP_FRAMEWORK_JAX && sc->plan.pp > 1 && !cJSON_GetObjectItemCaseSensitive(par, "schedule"))
        sc->plan.gpipe = true;
    return true;
}

/* "memory_fraction", the share of HBM the allocator may hold, and
 * "fp8_casts", whose default follows the framework. */
static bool parse_allocator_casts(StepScenario *sc, const SimJsonDoc *d, const cJSON *root, GError **err)
{
    static const char *const casts[] = {"kernels", "fused", NULL};
    sc->memory_fraction = 1;
    int k = -1; /* -1: not given */
    if (!scenario_get_choice(d, root, "fp8_casts", casts, &k, err) ||
        !sim_json_get_number(d, root, "memory_fraction", false, 0.01, 1, &sc->memory_fraction, err))
        return false;
    sc->memory_fraction_given = cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(root, "memory_fraction"));
    sc->fp8_casts_fused = k >= 0 ? k == 1 : sc->framework == STEP_FRAMEWORK_JAX;
    if (k >= 0 && sc->precision != MEMORY_MIXED_FP8) {
        sim_json_error(d, cJSON_GetObjectItemCaseSensitive(root, "fp8_casts"), err,
                       "\"fp8_casts\" is for FP8 training: give \"precision\": \"fp8\"");
        return false;
    }
    return true;
}

/* Under "framework": "jax" the step is one XLA program: PyTorch's and
 * Megatron's ways of running it (per-op checkpointing, FSDP's and
 * DTensor's implementations, Transformer Engine's userbuffers, PyTorch's
 * context_parallel) are not
 * its own, so they are refused at the key that asks for them. */
bool scenario_check_framework(const StepScenario *sc, const SimJsonDoc *d, const cJSON *where, GError **err)
{
    const StepPlan *p = &sc->plan;
    if (sc->framework != STEP_FRAMEWORK_JAX)
        return true;
    static const struct { const char *key, *value; } what[] = {
        {"recompute", "\"op\""}, {"zero_impl", "\"fsdp\""}, {"zero_impl", "\"fsdp2\""},
        {"tp_impl", "\"dtensor\""}, {"tp_comm_overlap", "true"}, {"cp_impl", "\"pytorch_allgather\""},
        {"cp_impl", "\"pytorch_alltoall\""}};
    int i = p->recompute == WORKLOAD_RECOMPUTE_OP ? 0
            : p->zero_fsdp                      ? 1 + p->zero_fsdp2
            : p->tp_dtensor                     ? 3
            : p->tp_comm_overlap                ? 4
            : p->cp_impl != CP_IMPL_TE_P2P && p->cp > 1 ? 4 + (int)p->cp_impl
                                                : -1;
    if (i >= 0)
        sim_json_error(d, key_or(where, what[i].key, where), err,
                       "\"%s\": %s is PyTorch's or Megatron-Core's: not with \"framework\": \"jax\" (one XLA program)",
                       what[i].key, what[i].value);
    return i < 0;
}

/* The topology and accelerator, loaded once here: whatever is wrong between
 * them and the scenario is reported at the scenario's line that asked. */
bool scenario_load_machine(StepScenario *sc, const SimJsonDoc *d, const cJSON *root, GError **err)
{
    /* presets named in the scenario must exist: say so at their line */
    static const struct {
        const char *key, *subdir, *what;
    } presets[] = {{"topology", "topologies/presets", "topology preset"},
                   {"accelerator", "models/presets/accelerators", "accelerator"}};
    for (size_t i = 0; i < G_N_ELEMENTS(presets); i++) {
        const cJSON *it = cJSON_GetObjectItemCaseSensitive(root, presets[i].key);
        if (!sim_json_not_stdin(d, it, err))
            return false;
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
    if (!parse_attention(sc, d, root, err) || !parse_framework(sc, d, root, err) ||
        !parse_allocator_casts(sc, d, root, err) || !parse_cross_entropy(sc, d, root, err))
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

const char *step_dp_fill_rule(int cp) { return cp > 1 ? "ranks / (tp x cp x pp)" : "ranks / (tp x pp)"; }

/* One rule for run and sweep alike: dp as given, else the replicas fill the
 * machine, dp = ranks / (tp x cp x pp) (context parallelism: cp x tp devices
 * per replica-stage).  Returns 0 and sets `err` (no position) when those do
 * not divide the ranks. */
static int fill_dp(const Topo *t, int tp, int cp, int pp, GError **err)
{
    int ranks = topo_num_ranks(t);
    long per = (long)tp * cp * pp;
    if (ranks % per) {
        char *by = cp > 1 ? g_strdup_printf("tp x cp x pp = %d x %d x %d", tp, cp, pp)
                          : g_strdup_printf("tp x pp = %d x %d", tp, pp);
        g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT,
                    "\"dp\" is not given, so the replicas fill the machine, but topology %s has %d ranks (%d nodes "
                    "x %d), not a multiple of %s: give dp or change %s",
                    SIM_ECHO(topo_name(t)), ranks, topo_num_nodes(t), topo_ranks_per_node(t), by,
                    cp > 1 ? "tp, cp, pp" : "tp, pp");
        g_free(by);
        return 0;
    }
    return (int)(ranks / per);
}

bool scenario_resolve_dp(StepScenario *sc, const SimJsonDoc *d, const cJSON *root, const cJSON *where, GError **err)
{
    StepPlan *p = &sc->plan;
    const Topo *t = sc->topo;
    sc->dp_given = p->dp > 0;
    if (!sc->dp_given) {
        GError *e = NULL;
        p->dp = fill_dp(t, p->tp, p->cp, p->pp, &e);
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
        char *cp = p->cp > 1 ? g_strdup_printf(" x %d", p->cp) : g_strdup("");
        sim_json_error(d, key_or(where, "dp", where), err,
                       "dp x tp x pp%s = %d x %d x %d%s = %ld devices, but topology %s has %d ranks (%d nodes x %d)",
                       p->cp > 1 ? " x cp" : "", p->dp, p->tp, p->pp, cp, devices, SIM_ECHO(topo_name(t)), ranks, topo_num_nodes(t),
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
    int n = fill_dp(t, (int)k[1], (int)k[3], (int)k[2], err);
    topo_free(t);
    *dp = n;
    return n > 0;
}

/* "collective_params": the collective model's parameters or an overlay
 * (what `shardsim calibrate -o` writes); the default file otherwise. */
bool scenario_load_coll_params(StepScenario *sc, const SimJsonDoc *d, const cJSON *root, GError **err)
{
    const char *path = NULL;
    if (!sim_json_get_string(d, root, "collective_params", false, &path, err))
        return false;
    if (!sim_json_not_stdin(d, cJSON_GetObjectItemCaseSensitive(root, "collective_params"), err))
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
 * dp x tp x cp x pp ranks sit, nodes filled in turn. */
bool scenario_parse_placement(StepScenario *sc, const SimJsonDoc *d, const cJSON *root, GError **err)
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
    int cp = sc->plan.cp > 1 ? sc->plan.cp : 1; /* dp counts the replicas only (step.c folds cp in later) */
    int devices = sc->plan.dp * sc->plan.tp * sc->plan.pp * cp, rpn = topo_ranks_per_node(sc->topo);
    GError *e = NULL;
    sc->rank_map = topo_place(sc->topo, p, (uint64_t)seed, devices, devices < rpn ? devices : rpn, &e);
    if (!sc->rank_map) {
        sim_json_error(d, at, err, "%s", e->message);
        g_error_free(e);
        return false;
    }
    return true;
}
