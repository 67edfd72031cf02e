/* The scenario: its JSON parsed and checked key by key, defaults filled,
 * the model read, and the plan checked against the model, the batch and
 * (through scenario_machine.c, which loads the topology and accelerator and
 * holds the one rule for dp) the machine.  Every error names the scenario's
 * line of the key that is wrong.  The step builder reads the result through
 * scenario.h; nothing here knows about task graphs. */
#include "scenario_internal.h"
#include "collective.h"
#include "scenario_plan.h"

#include <stdlib.h>
#include <string.h>

#define STEP_MAX_MICRO_BATCHES 65536
#define STEP_MAX_BUCKETS 200000
#define SCENARIO_MAX_PROSE 65536 /* "description" and "source": bytes */
/* The step graph's tasks at most, as step_tasks_estimate counts them: the
 * examples hold 80 to 131,000 (GPT-3 175B on 1024 A100s, interleaved); an
 * estimate of 9.7 million (GPT-3 175B, ZeRO-2's 3,300 buckets after each
 * of 1,300 micro-batches) runs in 4.4 s and 0.7 GB here, where 16,384
 * micro-batches of it aborted in allocation after 31 s and 6.4 GB. */
#define STEP_MAX_TASKS 1e7

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

/* An inline model's "base" (a preset's name or a workload file): its JSON
 * with the model's other keys in place of its own (a preset at another
 * seq_len); else the model as given.  NULL, the error at "base", if the
 * base does not load. */
static cJSON *inline_model_json(const SimJsonDoc *d, const cJSON *m, GError **err)
{
    const cJSON *base = cJSON_GetObjectItemCaseSensitive(m, "base");
    if (!base)
        return cJSON_Duplicate(m, true);
    if (!cJSON_IsString(base)) {
        sim_json_error(d, base, err, "\"base\" names a workload preset or file");
        return NULL;
    }
    if (!sim_json_not_stdin(d, base, err))
        return NULL;
    GError *e = NULL;
    cJSON *copy = workload_load_json(base->valuestring, &e);
    if (!copy) {
        sim_json_error(d, base, err, "model base \"%s\": %s", SIM_ECHO(base->valuestring), e->message);
        g_error_free(e);
        return NULL;
    }
    for (const cJSON *c = m->child; c; c = c->next)
        if (strcmp(c->string, "base")) {
            cJSON_DeleteItemFromObjectCaseSensitive(copy, c->string);
            cJSON_AddItemToObject(copy, c->string, cJSON_Duplicate(c, true));
        }
    return copy;
}

/* An inline model: its text is re-parsed by the workload module, shifted so
 * that its errors name the line of "model" in the scenario. */
static Workload *parse_inline_model(const SimJsonDoc *d, const cJSON *m, GError **err)
{
    cJSON *copy = inline_model_json(d, m, err);
    if (!copy)
        return NULL;
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

/* "master_weights" (default true: an fp32 copy the optimizer updates, cast
 * to the 16-bit parameters) and "optimizer_moments" ("fp32", default, or
 * "bf16"/"fp16": torch.optim.Adam's moments follow the parameters' type, so
 * bf16 parameters with no master keep bf16 moments; Megatron's
 * precision-aware optimizer's exp_avg_dtype), after "precision" and
 * "optimizer". */
static bool parse_optimizer_precision(StepScenario *sc, const SimJsonDoc *d, const cJSON *root, GError **err)
{
    bool master = true;
    int m = 0;
    static const char *const moments[] = {"fp32", "bf16", "fp16", NULL};
    if (!sim_json_get_bool(d, root, "master_weights", &master, err) ||
        !scenario_get_choice(d, root, "optimizer_moments", moments, &m, err))
        return false;
    sc->no_master = !master;
    sc->moment_bytes = m == 0 ? 4 : 2;
    if (sc->no_master && sc->precision == MEMORY_FP32) {
        sim_json_error(d, cJSON_GetObjectItemCaseSensitive(root, "master_weights"), err,
                       "\"master_weights\": false needs 16-bit parameters (\"precision\" bf16, fp16 or fp8; fp32 "
                       "training keeps no master copy)");
        return false;
    }
    if (m != 0 && (sc->optimizer == MEMORY_OPT_SGD)) {
        sim_json_error(d, cJSON_GetObjectItemCaseSensitive(root, "optimizer_moments"), err,
                       "\"optimizer_moments\" with \"optimizer\": \"sgd\", which keeps no moments");
        return false;
    }
    return true;
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
    return parse_optimizer_precision(sc, d, root, err);
}

/* "model": a preset's name, a workload file, or hyper-parameters inline
 * (on a "base" preset or file, or all of them); a transformer for now. */
static bool parse_model(StepScenario *sc, const SimJsonDoc *d, const cJSON *root, GError **err)
{
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(root, "model");
    if (!m || cJSON_IsNull(m)) {
        sim_json_error(d, root, err, "missing required field \"model\"");
        return false;
    }
    if (!sim_json_not_stdin(d, m, err))
        return false;
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

/* Gradient buckets per device: its fp32 gradients over the bucket size. */
static double step_buckets(const StepScenario *sc)
{
    const StepPlan *p = &sc->plan;
    return workload_params_total(sc->w) / ((double)p->tp * p->pp) * 4 / p->bucket_bytes;
}

/* About the tasks the step's graph holds (step_build.h), over all stages:
 * per micro-batch and layer a forward, a backward and their collectives
 * (about six each in the examples: eight here), and each stage's gradient
 * buckets, reduced after every micro-batch under ZeRO-2. */
static double step_tasks_estimate(const StepScenario *sc, long micro_batches, bool *zero2)
{
    const StepPlan *p = &sc->plan;
    *zero2 = false;
    for (int v = 0; v < sc->nvariants; v++)
        *zero2 |= sc->variant_stage[v] == 2;
    double layers = workload_num_layers(sc->w) + 2; /* the embedding and the head */
    return (double)micro_batches * layers * 8 + p->pp * step_buckets(sc) * 2 * (*zero2 ? (double)micro_batches : 1);
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
    double buckets = step_buckets(sc);
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
        sim_json_error(d, gb_it, err, "\"global_batch\" %d is not a multiple of dp x micro_batch = %d x %d%s%s%s",
                       sc->global_batch, dp, sc->micro_batch, dp_given ? "" : " (dp fills the machine: ",
                       dp_given ? "" : step_dp_fill_rule(sc->plan.cp), dp_given ? "" : ")");
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
    bool zero2;
    double tasks = step_tasks_estimate(sc, micro_batches, &zero2);
    if (tasks > STEP_MAX_TASKS) {
        sim_json_error(d, gb_it, err,
                       "the step's graph would hold about %.3g tasks (%ld micro-batches per step x %d layers%s); at "
                       "most %.0f can be simulated: raise micro_batch or dp",
                       tasks, micro_batches, workload_num_layers(sc->w),
                       zero2 ? ", the gradient buckets reduced after each under ZeRO-2" : "", STEP_MAX_TASKS);
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
        return true; /* scenario_resolve_dp says what is wrong */
    return check_batch_dp(sc, d, root, (int)(ranks / per_replica), false, err);
}

/* What "recompute": "op" and "recompute_keep" are not modelled with: the
 * other changes to what a checkpoint holds, and LoRA's frozen layers. */
static const char *checkpoint_clash(const StepScenario *sc)
{
    return sc->plan.partition_activations || sc->plan.recompute_overlap || sc->finetune.method != FINETUNE_NONE
               ? "with \"partition_activations\", \"recompute_overlap\" or \"finetune\" is not modelled"
               : NULL;
}

/* "recompute": "op" (workload_sac.c): what the model has of it. */
static bool check_op_recompute(const StepScenario *sc, const SimJsonDoc *d, const cJSON *where, GError **err)
{
    const char *why = workload_op_sac_check(workload_transformer(sc->w), sc->plan.tp, sc->plan.cp);
    if (!why && sc->attention == STEP_ATTN_UNFUSED)
        why = "keeps the fused attention kernel's output: not with \"attention\": \"unfused\"";
    if (!why)
        why = checkpoint_clash(sc);
    if (!why)
        return true;
    sim_json_error(d, key_or(where, "recompute", where), err, "\"recompute\": \"op\" %s", why);
    return false;
}

/* "recompute_keep": GEMMs of a dense block with multi-head attention, one
 * tensor-parallel rank (the recomputation's collectives would change too). */
static bool check_recompute_keep(const StepScenario *sc, const SimJsonDoc *d, const cJSON *where, GError **err)
{
    const WorkloadTransformer *t = workload_transformer(sc->w);
    const char *why = !t ? "needs a transformer" : workload_dense_check(t);
    if (!why)
        why = sc->plan.tp > 1 ? "is modelled with \"tp\": 1" : checkpoint_clash(sc);
    if (!why && (sc->plan.recompute_keep & WORKLOAD_KEEP_CORE_ATTN) && sc->attention == STEP_ATTN_UNFUSED)
        why = "keeps \"core_attn\", a fused attention kernel's output: not with \"attention\": \"unfused\"";
    if (why)
        sim_json_error(d, key_or(where, "recompute_keep", where), err, "\"recompute_keep\" %s", why);
    return !why;
}

/* PyTorch's context_parallel replaces SDPA's fused kernels (flash,
 * memory-efficient, cuDNN: torch.distributed.tensor.experimental.
 * _attention's _sdpa_handler); SDPA has no window and no FP8 kernel. */
static bool check_cp_impl(const StepScenario *sc, const SimJsonDoc *d, const cJSON *where, GError **err)
{
    const WorkloadTransformer *t = workload_transformer(sc->w);
    if (sc->plan.cp_impl == CP_IMPL_TE_P2P || sc->plan.cp == 1) /* no ring: the key changes nothing */
        return true;
    const char *why = sc->attention == STEP_ATTN_UNFUSED ? "replaces SDPA's fused kernels: not with \"attention\": \"unfused\""
                      : sc->fp8_dpa ? "runs SDPA's 16-bit kernels: not with \"fp8_dot_product_attention\""
                      : t && workload_window_share(t) > 0
                          ? "runs SDPA, which has no sliding window: not with a \"sliding_window\" model"
                          : NULL;
    if (why)
        sim_json_error(d, key_or(where, "cp_impl", where), err, "\"cp_impl\": PyTorch's context_parallel %s", why);
    return !why;
}

/* "cross_entropy": "chunked" projects each chunk of tokens onto the whole
 * vocabulary (Liger's kernel takes the full output weight): one tensor-
 * parallel rank. */
static bool check_chunked_loss(const StepScenario *sc, const SimJsonDoc *d, const cJSON *root, GError **err)
{
    if (sc->cross_entropy != STEP_CE_CHUNKED || sc->plan.tp == 1)
        return true;
    sim_json_error(d, key_or(root, "cross_entropy", root), err,
                   "\"cross_entropy\": \"chunked\" (a fused linear cross entropy over the whole vocabulary) is modelled "
                   "with \"tp\": 1");
    return false;
}

/* "elementwise": "fused" (default: one kernel per norm, fused SwiGLU and
 * rotary, as Transformer Engine and torch.compile run them) or "eager"
 * (PyTorch eager, workload_eager.c). */
static bool parse_elementwise(StepScenario *sc, const SimJsonDoc *d, const cJSON *root, GError **err)
{
    const char *s = NULL;
    if (!sim_json_get_string(d, root, "elementwise", false, &s, err))
        return false;
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(root, "elementwise");
    if (s && g_ascii_strcasecmp(s, "fused") && g_ascii_strcasecmp(s, "eager")) {
        sim_json_error(d, it, err, "\"elementwise\" = \"%s\" is not one of \"fused\", \"eager\"", SIM_ECHO(s));
        return false;
    }
    sc->eager_elementwise = s && !g_ascii_strcasecmp(s, "eager"); /* as "recompute" and the other choices */
    const WorkloadTransformer *t = workload_transformer(sc->w);
    const char *why = !sc->eager_elementwise ? NULL
                      : !t                   ? "needs a transformer: it is PyTorch's eager mode of a transformer block"
                      : sc->framework == STEP_FRAMEWORK_JAX
                          ? "is PyTorch's eager mode: \"framework\": \"jax\" runs one compiled program"
                          : workload_dense_check(t);
    if (why)
        sim_json_error(d, it, err, "\"elementwise\": \"eager\" %s", why);
    return !why;
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
                                       "fp8_dot_product_attention", "fp8_param_gather", "fp8_recipe", "elementwise",
                                       "framework", "memory_fraction", "fp8_casts", "master_weights",
                                       "optimizer_moments", NULL};
    const cJSON *root = sim_json_root(d);
    if (!cJSON_IsObject(root)) {
        sim_json_error(d, root, err, "a scenario must be a JSON object");
        return NULL;
    }
    if (!scenario_check_keys(d, root, "the scenario", keys, err))
        return NULL;
    /* free text for people: a string of at most a page or so, since plan
     * and sweep copy the scenario for every candidate (30 MB took minutes) */
    static const char *const prose[] = {"description", "source"};
    for (size_t i = 0; i < G_N_ELEMENTS(prose); i++) {
        const char *text = NULL;
        if (!sim_json_get_string(d, root, prose[i], false, &text, err))
            return NULL;
        if (text && strlen(text) > SCENARIO_MAX_PROSE) {
            sim_json_error(d, cJSON_GetObjectItemCaseSensitive(root, prose[i]), err,
                           "\"%s\" holds %zu bytes; at most %d", prose[i], strlen(text), SCENARIO_MAX_PROSE);
            return NULL;
        }
    }
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
    if (!scenario_load_coll_params(sc, d, root, err))
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
    if ((sc->act_func_fp8 || sc->fp8_dpa) && !workload_transformer(sc->w)) {
        sim_json_error(d, cJSON_GetObjectItemCaseSensitive(root, fp8_key), err,
                       "\"%s\" is for transformers: a CNN has no %s", fp8_key,
                       sc->fp8_dpa && !sc->act_func_fp8 ? "attention" : "MLP activation");
        goto fail;
    }
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
    sc->par_line = sim_json_line(d, where);
    /* LoRA under ZeRO-3 / FSDP: DeepSpeed and PyTorch FSDP shard the frozen
     * base too (gathered per layer); the model holds it whole (par_lora.c) */
    if (sc->finetune.method != FINETUNE_NONE && MAX(sc->variant_stage[0], sc->variant_stage[sc->nvariants - 1]) == 3) {
        sim_json_error(d, key_or(where, "zero_stage", where), err,
                       "\"finetune\" with ZeRO-3 / FSDP is not modelled (they shard the frozen base as well): use "
                       "\"zero_stage\" 0-2 (\"weight_update\": \"replicated\" or \"sharded\")");
        goto fail;
    }
    if (!check_plan_model(sc, d, where, err) || !precheck_batch(sc, d, root, err) || !scenario_load_machine(sc, d, root, err) ||
        !scenario_resolve_dp(sc, d, root, where, err) || !check_batch(sc, d, root, err) ||
        !scenario_par_check(d, where, &sc->plan, MAX(sc->variant_stage[0], sc->variant_stage[sc->nvariants - 1]),
                            sc->w, sc->global_batch / (sc->plan.dp * sc->micro_batch), err) ||
        !scenario_seed_check(d, where, &sc->plan, MIN(sc->variant_stage[0], sc->variant_stage[sc->nvariants - 1]),
                             MAX(sc->variant_stage[0], sc->variant_stage[sc->nvariants - 1]), sc->w, sc->topo, err) ||
        !scenario_parse_placement(sc, d, root, err) ||
        !fp8_recipe_check(d, root, sc->fp8_recipe, sc->acc, err) ||
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
    if ((sc->plan.recompute == WORKLOAD_RECOMPUTE_OP && !check_op_recompute(sc, d, where, err)) ||
        (sc->plan.recompute_keep && !check_recompute_keep(sc, d, where, err)) || !check_cp_impl(sc, d, where, err) ||
        !check_chunked_loss(sc, d, root, err) ||
        !parse_elementwise(sc, d, root, err) ||
        !scenario_check_framework(sc, d, where, err))
        goto fail;
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
int step_scenario_par_line(const StepScenario *sc) { return sc->par_line; }
StepCrossEntropy step_scenario_cross_entropy(const StepScenario *sc) { return sc->cross_entropy; }
StepFramework step_scenario_framework(const StepScenario *sc) { return sc->framework; }
double step_scenario_memory_fraction(const StepScenario *sc) { return sc->memory_fraction; }
bool step_scenario_memory_fraction_given(const StepScenario *sc) { return sc->memory_fraction_given; }
bool step_scenario_fp8_casts_fused(const StepScenario *sc) { return sc->fp8_casts_fused; }
bool step_scenario_eager_elementwise(const StepScenario *sc) { return sc->eager_elementwise; }
int step_scenario_gpus_per_process(const StepScenario *sc) { return sc->gpus_per_process; }
bool step_scenario_dp_given(const StepScenario *sc) { return sc->dp_given; }
const int *step_scenario_rank_map(const StepScenario *sc) { return sc->rank_map; }
const char *step_scenario_placement(const StepScenario *sc) { return sc->placement ? sc->placement : "contiguous"; }
const Finetune *step_scenario_finetune(const StepScenario *sc) { return &sc->finetune; }
bool step_scenario_act_func_fp8(const StepScenario *sc) { return sc->act_func_fp8; }
bool step_scenario_fp8_dpa(const StepScenario *sc) { return sc->fp8_dpa; }
bool step_scenario_fp8_params(const StepScenario *sc) { return sc->fp8_params; }
bool step_scenario_no_master(const StepScenario *sc) { return sc->no_master; }
double step_scenario_moment_bytes(const StepScenario *sc) { return sc->moment_bytes > 0 ? sc->moment_bytes : 4; }
Fp8Recipe step_scenario_fp8_recipe(const StepScenario *sc) { return sc->fp8_recipe; }
