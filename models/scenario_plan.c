/* A scenario's "parallelism": its keys, the plan's defaults, and the rules
 * between keys that contradict each other ("zero_stage" against
 * "weight_update", "sequence_parallel" with tp 1), each an error at the
 * key's line.  "allgather_overlap" on a variant without a ZeRO-1/2 sharded
 * update is inert, not contradictory (a sweep over weight updates or ZeRO
 * stages meets it on every point): the result warns instead.  A list
 * of weight updates becomes the variants to compare.  What the plan means
 * against the model and the machine (dp among it) is checked in scenario.c. */
#include "scenario_plan.h"

#include <string.h>

bool scenario_check_keys(const SimJsonDoc *d, const cJSON *obj, const char *where, const char *const *allowed,
                         GError **err)
{
    for (const cJSON *c = obj->child; c; c = c->next) {
        bool ok = false;
        for (const char *const *a = allowed; *a && !ok; a++)
            ok = !strcmp(c->string, *a);
        if (!ok) {
            GString *list = g_string_new(NULL);
            for (const char *const *a = allowed; *a; a++)
                g_string_append_printf(list, "%s%s", a == allowed ? "" : ", ", *a);
            sim_json_error(d, c, err, "unknown key \"%s\" in %s (allowed: %s)", SIM_ECHO(c->string), where,
                           list->str);
            g_string_free(list, TRUE);
            return false;
        }
    }
    return true;
}

static int pick(const char *s, const char *const *names)
{
    for (int i = 0; names[i]; i++)
        if (!g_ascii_strcasecmp(s, names[i]))
            return i;
    return -1;
}

bool scenario_get_choice(const SimJsonDoc *d, const cJSON *obj, const char *key, const char *const *names, int *out,
                         GError **err)
{
    const char *s = NULL;
    if (!sim_json_get_string(d, obj, key, false, &s, err))
        return false;
    if (!s)
        return true;
    int v = pick(s, names);
    if (v < 0) {
        GString *list = g_string_new(NULL);
        for (int i = 0; names[i]; i++)
            g_string_append_printf(list, "%s\"%s\"", i ? ", " : "", names[i]);
        sim_json_error(d, cJSON_GetObjectItemCaseSensitive(obj, key), err, "\"%s\" = \"%s\" is not one of %s", key,
                       SIM_ECHO(s), list->str);
        g_string_free(list, TRUE);
        return false;
    }
    *out = v;
    return true;
}

/* What a plan is when the scenario does not say: one replica per device of
 * the machine (dp 0 until resolve_dp), no tp or pp, 25 MiB buckets that
 * overlap the backward, uncompressed, replicated update. */
static StepPlan plan_default(void)
{
    return (StepPlan){.dp = 0, .tp = 1, .pp = 1, .overlap = true, .bucket_bytes = 25.0 * 1024 * 1024,
                      .compression = 1.0, .allgather_overlap = -1, .grad_reduce_dtype = -1, .ep = 1,
                      .capacity_factor = 1, .vpp = 1, .cp = 1, .pcie_bps = STEP_DEFAULT_PCIE_BPS,
                      .host_mem_bps = STEP_DEFAULT_HOST_MEM_BPS, .comm_interference = true};
}

/* "weight_update" (a string, or a list to compare) against "zero_stage"
 * `zs` (-1: not given): the variants, each with its ZeRO stage.  Keys that
 * say different things are errors: neither silently wins. */
static bool parse_variants(const SimJsonDoc *d, const cJSON *par, long zs, StepPlan *p, int *nvariants, int stages[2],
                           GError **err)
{
    static const char *const wu_names[] = {"replicated", "sharded", NULL};
    const cJSON *wu = cJSON_GetObjectItemCaseSensitive(par, "weight_update");
    int wus[2] = {-1, -1}, nwu = 0;
    if (wu && cJSON_IsArray(wu)) {
        int n = cJSON_GetArraySize(wu);
        if (n < 1 || n > 2) {
            sim_json_error(d, wu, err, "\"weight_update\" list must hold 1 or 2 of \"replicated\", \"sharded\"");
            return false;
        }
        for (const cJSON *c = wu->child; c; c = c->next) {
            int v = cJSON_IsString(c) ? pick(c->valuestring, wu_names) : -1;
            if (v < 0) {
                sim_json_error(d, c, err, "\"weight_update\" entry %s%s%s is not \"replicated\" or \"sharded\"",
                               cJSON_IsString(c) ? "\"" : "", cJSON_IsString(c) ? SIM_ECHO(c->valuestring) : "(not a string)",
                               cJSON_IsString(c) ? "\"" : "");
                return false;
            }
            if (nwu == 1 && wus[0] == v) {
                sim_json_error(d, c, err, "\"weight_update\" lists \"%s\" twice: give distinct entries", wu_names[v]);
                return false;
            }
            wus[nwu++] = v;
        }
    } else if (wu && !cJSON_IsNull(wu)) {
        if (!scenario_get_choice(d, par, "weight_update", wu_names, &wus[0], err))
            return false;
        nwu = 1;
    }
    if (nwu == 0) {
        wus[0] = zs > 0 ? 1 : 0;
        nwu = 1;
    }
    const cJSON *zsi = cJSON_GetObjectItemCaseSensitive(par, "zero_stage");
    for (int i = 0; i < nwu; i++)
        if (wus[i] == 1 && zs == 0) {
            sim_json_error(d, zsi, err,
                           "\"zero_stage\": 0 is the replicated weight update; it contradicts \"weight_update\": "
                           "\"sharded\" (ZeRO-1): give one of them");
            return false;
        }
    *nvariants = nwu;
    for (int i = 0; i < nwu; i++) {
        if (wus[i] == 0 && zs > 0) {
            sim_json_error(d, zsi, err,
                           "\"zero_stage\" %ld shards the weight update; it contradicts \"weight_update\": "
                           "\"replicated\"",
                           zs);
            return false;
        }
        stages[i] = wus[i] == 0 ? 0 : zs > 0 ? (int)zs : 1;
    }
    p->zero_stage = stages[0];
    return true;
}

/* Gradient buckets live in HBM next to the gradients: beyond 64 GiB a
 * bucket is no plan anyone runs. */
#define STEP_MAX_BUCKET_BYTES (64.0 * 1024 * 1024 * 1024)

bool scenario_plan_parse(const SimJsonDoc *d, const cJSON *par, StepPlan *p, int *nvariants, int stages[2],
                         GError **err)
{
    static const char *const keys[] = {"dp", "tp", "pp", "weight_update", "zero_stage", "recompute", "schedule",
                                       "sequence_parallel", "bucket_bytes", "overlap", "gradient_compression",
                                       "allgather_overlap", "grad_reduce_dtype", "comm_interference",
                                       "tp_comm_overlap", "tp_impl", "zero_impl", NULL};
    if (!par) {
        *p = plan_default();
        *nvariants = 1;
        stages[0] = 0;
        return true;
    }
    if (!cJSON_IsObject(par)) {
        sim_json_error(d, par, err, "\"parallelism\" must be an object");
        return false;
    }
    GPtrArray *all = g_ptr_array_new();
    for (const char *const *k = keys; *k; k++)
        g_ptr_array_add(all, (gpointer)*k);
    for (const char *const *k = scenario_par_keys; *k; k++)
        g_ptr_array_add(all, (gpointer)*k);
    for (const char *const *k = scenario_seed_keys; *k; k++)
        g_ptr_array_add(all, (gpointer)*k);
    g_ptr_array_add(all, NULL);
    bool known = scenario_check_keys(d, par, "\"parallelism\"", (const char *const *)all->pdata, err);
    g_ptr_array_free(all, TRUE);
    if (!known)
        return false;
    long dp = 0, tp = 1, pp = 1, zs = -1; /* dp 0: not given, the replicas fill the machine */
    if (!sim_json_get_int(d, par, "dp", false, 1, 1 << 24, &dp, err) ||
        !sim_json_get_int(d, par, "tp", false, 1, 1 << 16, &tp, err) ||
        !sim_json_get_int(d, par, "pp", false, 1, 1 << 16, &pp, err) ||
        !sim_json_get_int(d, par, "zero_stage", false, 0, 3, &zs, err))
        return false;
    *p = plan_default();
    p->dp = (int)dp;
    p->tp = (int)tp;
    p->pp = (int)pp;
    static const char *const rc_names[] = {"none", "selective", "full", "op", NULL};
    static const char *const sched_names[] = {"1f1b", "gpipe", NULL};
    int rc = 0, sched = 0;
    if (!scenario_get_choice(d, par, "recompute", rc_names, &rc, err) ||
        !scenario_get_choice(d, par, "schedule", sched_names, &sched, err))
        return false;
    static const WorkloadRecompute rcs[] = {WORKLOAD_RECOMPUTE_NONE, WORKLOAD_RECOMPUTE_SELECTIVE,
                                            WORKLOAD_RECOMPUTE_FULL, WORKLOAD_RECOMPUTE_OP};
    p->recompute = rcs[rc];
    p->gpipe = sched == 1;
    bool ag_overlap = true;
    if (!sim_json_get_bool(d, par, "allgather_overlap", &ag_overlap, err))
        return false;
    const cJSON *ago = cJSON_GetObjectItemCaseSensitive(par, "allgather_overlap");
    if (ago && !cJSON_IsNull(ago))
        p->allgather_overlap = ag_overlap;
    static const char *const grd_names[] = {"bf16", "fp16", "fp32", NULL};
    int grd = -1;
    if (!scenario_get_choice(d, par, "grad_reduce_dtype", grd_names, &grd, err))
        return false;
    if (grd >= 0)
        p->grad_reduce_dtype = grd == 0 ? ACCEL_BF16 : grd == 1 ? ACCEL_FP16 : ACCEL_FP32;
    static const char *const tpi_names[] = {"megatron", "dtensor", NULL}, *const zi_names[] = {"deepspeed", "fsdp", "fsdp2", NULL};
    int tpi = 0, zi = 0;
    if (!scenario_get_choice(d, par, "tp_impl", tpi_names, &tpi, err) ||
        !scenario_get_choice(d, par, "zero_impl", zi_names, &zi, err))
        return false;
    p->tp_dtensor = tpi == 1;
    p->zero_fsdp = zi >= 1;
    p->zero_fsdp2 = zi == 2;
    if (!sim_json_get_bool(d, par, "sequence_parallel", &p->sequence_parallel, err) ||
        !sim_json_get_bool(d, par, "overlap", &p->overlap, err) ||
        !sim_json_get_bool(d, par, "comm_interference", &p->comm_interference, err) ||
        !sim_json_get_bool(d, par, "tp_comm_overlap", &p->tp_comm_overlap, err) ||
        !sim_json_get_size(d, par, "bucket_bytes", false, 1, STEP_MAX_BUCKET_BYTES, &p->bucket_bytes, err) ||
        !sim_json_get_number(d, par, "gradient_compression", false, 1e-6, 1, &p->compression, err))
        return false;
    if (!scenario_par_parse(d, par, p, err) || !scenario_seed_parse(d, par, p, err))
        return false;
    if (p->sequence_parallel && p->tp == 1) {
        sim_json_error(d, cJSON_GetObjectItemCaseSensitive(par, "sequence_parallel"), err,
                       "\"sequence_parallel\" needs \"tp\" > 1");
        return false;
    }
    if (p->tp_comm_overlap && (p->tp == 1 || !p->sequence_parallel)) {
        /* userbuffers overlap the all-gather / reduce-scatter of sequence
         * parallelism; without it there is nothing to pipeline */
        sim_json_error(d, cJSON_GetObjectItemCaseSensitive(par, "tp_comm_overlap"), err,
                       p->tp == 1 ? "\"tp_comm_overlap\" needs \"tp\" > 1"
                                  : "\"tp_comm_overlap\" needs \"sequence_parallel\": true");
        return false;
    }
    return parse_variants(d, par, zs, p, nvariants, stages, err);
}
