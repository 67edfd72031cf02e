/* Time to train: tokens to steps to days, with checkpoints and failures as
 * goodput, then GPU-hours, cost and energy.  The inputs' defaults and their
 * sources are models/presets/plan.json.
 *
 * With C the compute time (steps x step time), w a checkpoint's write time
 * (its bytes over the job's storage bandwidth), tau the interval between
 * checkpoints, lambda the job's failure rate (per-GPU rate x GPUs) and r the
 * restart time: every tau of work costs tau + w, and every failure r plus
 * on average half an interval of lost work, so the wall time W solves
 *   W = C (1 + w / tau) + lambda W (r + (tau + w) / 2)
 * and goodput = C / W.  tau defaults to Young's optimum sqrt(2 w / lambda);
 * where tau is not shorter than C no checkpoint is written during the job
 * and a failure loses C / 2 on average: W = C + lambda W (r + C / 2).
 * Energy = GPUs x board power x utilisation x PUE x W. */
#include "plan_internal.h"
#include "sim_data.h"
#include "sim_json.h"

#include <math.h>
#include <string.h>

static bool preset_value(const cJSON *root, const char *key, double *out, GError **err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(root, key), "value");
    if (cJSON_IsNull(v)) {
        *out = NAN;
        return true;
    }
    if (!cJSON_IsNumber(v) || v->valuedouble < 0) {
        g_set_error(err, SIM_ERROR, SIM_ERROR_INTERNAL, "models/presets/plan.json: \"%s\" needs a \"value\"", key);
        return false;
    }
    *out = v->valuedouble;
    return true;
}

static void add_source(Plan *p, const cJSON *root, const char *key)
{
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(root, key), "source");
    if (cJSON_IsString(s))
        cJSON_AddStringToObject(p->sources, key, s->valuestring);
}

bool plan_train_defaults(Plan *p, GError **err)
{
    char *dir = sim_data_dir("models/presets");
    char *path = g_build_filename(dir, "plan.json", NULL);
    g_free(dir);
    SimJsonDoc *d = sim_json_load_file(path, err);
    g_free(path);
    if (!d)
        return false;
    const cJSON *root = sim_json_root(d);
    PlanTrainInputs *t = &p->train, given = p->o.train;
    double tpp = NAN, *dst[] = {&tpp, &t->failures_per_gpu_hour, &t->restart_s, &t->storage_bps_per_gpu,
                                &t->checkpoint_interval_s, &t->power_utilisation, &t->pue, &t->price_per_gpu_hour};
    const char *keys[] = {"tokens_per_parameter", "failures_per_gpu_hour", "restart_s", "storage_bps_per_gpu",
                          "checkpoint_interval_s", "power_utilisation", "pue", "price_per_gpu_hour"};
    const double *over[] = {NULL, &given.failures_per_gpu_hour, &given.restart_s, &given.storage_bps_per_gpu,
                            &given.checkpoint_interval_s, &given.power_utilisation, &given.pue,
                            &given.price_per_gpu_hour};
    p->sources = cJSON_CreateObject();
    bool ok = true;
    for (size_t i = 0; ok && i < G_N_ELEMENTS(keys); i++) {
        ok = preset_value(root, keys[i], dst[i], err);
        if (over[i] && !isnan(*over[i]))
            *dst[i] = *over[i];
        else
            add_source(p, root, keys[i]);
    }
    t->tokens = !isnan(given.tokens) ? given.tokens : tpp * p->params;
    const cJSON *bw = cJSON_GetObjectItemCaseSensitive(root, "board_watts");
    const cJSON *w = cJSON_GetObjectItemCaseSensitive(bw, p->accel);
    t->board_watts = !isnan(given.board_watts) ? given.board_watts : cJSON_IsNumber(w) ? w->valuedouble : NAN;
    if (isnan(given.board_watts))
        add_source(p, root, "board_watts");
    if (isnan(given.tokens))
        add_source(p, root, "tokens_per_parameter");
    add_source(p, root, "checkpoint_bytes_per_parameter");
    sim_json_free(d);
    return ok;
}

void plan_train_compute(const Plan *p, const PlanCand *c, double step_s, PlanTrain *t)
{
    const PlanTrainInputs *in = &p->train;
    double g = c->gpus;
    *t = (PlanTrain){0};
    t->steps = ceil(in->tokens / ((double)c->gb * p->seq_len));
    t->compute_s = t->steps * step_s;
    t->checkpoint_bytes = p->params * p->ckpt_bytes_per_param;
    t->checkpoint_write_s = t->checkpoint_bytes / (in->storage_bps_per_gpu * g);
    double lambda = in->failures_per_gpu_hour * g / 3600.0, w = t->checkpoint_write_s;
    double tau = in->checkpoint_interval_s;
    if (isnan(tau))
        tau = lambda > 0 ? sqrt(2 * w / lambda) : INFINITY;
    if (tau <= 0)
        tau = INFINITY;
    t->checkpoint_interval_s = tau;
    /* an interval as long as the job writes no checkpoint on the way: a
     * failure then loses half the job's work on average, not half of tau */
    bool checkpoints = tau < t->compute_s;
    double lost = lambda > 0 ? lambda * (in->restart_s + (checkpoints ? (tau + w) / 2 : t->compute_s / 2)) : 0;
    double denom = 1 - lost;
    t->wall_s = denom > 0 ? t->compute_s * (1 + (checkpoints ? w / tau : 0)) / denom : INFINITY;
    t->goodput = isfinite(t->wall_s) && t->wall_s > 0 ? t->compute_s / t->wall_s : 0;
    t->days = t->wall_s / 86400;
    t->gpu_hours = g * t->wall_s / 3600;
    t->cost = t->gpu_hours * in->price_per_gpu_hour;
    t->energy_j = g * in->board_watts * in->power_utilisation * in->pue * t->wall_s;
}

double plan_objective_value(const Plan *p, const PlanCand *c, const PlanResult *r)
{
    switch (p->o.objective) {
    case PLAN_OBJ_COST:
        return r->t.cost;
    case PLAN_OBJ_THROUGHPUT: /* tokens per GPU-second at goodput, larger is better */
        return -(p->train.tokens / (r->t.wall_s * c->gpus));
    default:
        return r->t.wall_s;
    }
}
