/* The p10-p90 range of a step's time: the accelerator's band (the residuals
 * of the measured steps behind its preset, or a calibrated overlay's) on the
 * step's compute, and its collectives' bands (coll_band: the residuals of the
 * traces behind the collective parameters) on its exposed communication,
 * combined as independent errors weighted by each part's share of the step
 * (docs/UNCERTAINTY.md). */
#include "step_build.h"

#include <math.h>

/* The time-weighted mean log band, lo <= 0 <= hi, of stage 0's collectives. */
static void comm_band(const Build *b, double *lo, double *hi)
{
    const Ctx *c = b->c;
    double w = 0, l = 0, h = 0;
    for (guint i = 0; i < b->tags->len; i++) {
        const CollTag *t = &g_array_index(b->tags, CollTag, i);
        const CollUse *u = &g_array_index(c->colls, CollUse, t->use);
        if (t->stage != 0 || !(u->cost.time_s > 0))
            continue;
        double p10, p90, wt = u->cost.time_s * t->times;
        coll_band(u->g, u->bytes, u->cost.time_s, &p10, &p90, NULL);
        l += wt * log(p10 / u->cost.time_s);
        h += wt * log(p90 / u->cost.time_s);
        w += wt;
    }
    *lo = w > 0 ? l / w : 0;
    *hi = w > 0 ? h / w : 0;
}

/* One XLA program's compute band: the p10 and p90 of log(predicted /
 * measured step) over the JAX tables of tests/data/steps (MaxText, Paxml,
 * the Google Cloud recipes, JAX-Toolbox: 38 rows on H100 and H200, two
 * containers ten months apart on either side of the model), which
 * tests/test_steps_maxtext.c recomputes ([-0.219, 0.131] before ZeRO-3
 * gathered the parameters outside the layers).  A band, not a correction:
 * the PyTorch-fitted compute ceiling is kept, its spread under JAX stated. */
#define JAX_BAND_P10 (-0.215)
#define JAX_BAND_P90 0.141

/* A mixture-of-experts step's band: the p10 and p90 of log(predicted /
 * measured step) over the 78 MoE rows of the published tables in
 * tests/data/steps (Megatron-Core through NeMo and Megatron-Bridge
 * 25.02-26.06, NeMo AutoModel, dgxc-benchmarking: Mixtral, Qwen3, GPT-OSS,
 * DeepSeek-V3, Kimi K2 on H100, B200 and GB200), which
 * tests/test_steps_nemo_moe.c recomputes.  The model is faster than 90 % of
 * those runs, for causes not identified (models/README.md): the whole step's
 * band is at least this wide.  A band, not a correction. */
#define MOE_BAND_P10 (-0.606)
#define MOE_BAND_P90 (-0.065)

static bool is_moe(const Build *b)
{
    const WorkloadTransformer *tr = workload_transformer(b->c->w);
    return tr && tr->experts > 0;
}

void step_band(const Build *b, double step, double exposed_comm, cJSON *out)
{
    double r10, r90, clo, chi;
    bool measured = accel_band(b->c->acc, &r10, &r90);
    bool widened = step_scenario_framework(b->c->sc) == STEP_FRAMEWORK_JAX &&
                   (JAX_BAND_P10 < r10 || JAX_BAND_P90 > r90); /* wider than the chip's own */
    if (widened)
        r10 = fmin(r10, JAX_BAND_P10), r90 = fmax(r90, JAX_BAND_P90);
    comm_band(b, &clo, &chi);
    double fm = step > 0 ? fmin(1, exposed_comm / step) : 0, fc = 1 - fm;
    /* measured = predicted / e^r: the low end of the step from the high end
     * of the compute residuals */
    double lo = -hypot(fc * fmax(r90, 0), fm * -clo), hi = hypot(fc * fmax(-r10, 0), fm * chi);
    bool moe = is_moe(b);
    if (moe) {
        lo = fmin(lo, -fmax(MOE_BAND_P90, 0));
        hi = fmax(hi, -MOE_BAND_P10);
    }
    cJSON_AddNumberToObject(out, "step_time_p10_s", step * exp(lo));
    cJSON_AddNumberToObject(out, "step_time_p90_s", step * exp(hi));
    cJSON *u = cJSON_AddObjectToObject(out, "uncertainty");
    cJSON_AddItemToObject(u, "compute_log_residual", cJSON_CreateDoubleArray((double[]){r10, r90}, 2));
    cJSON_AddStringToObject(u, "compute_basis",
                            !measured ? "no measured step on this accelerator: a judged +-0.3"
                            : accel_band_transferred(b->c->acc)
                                ? "another accelerator's measured steps, carried over (the preset's uncertainty source)"
                                : "the accelerator's measured steps");
    if (widened)
        cJSON_AddStringToObject(u, "framework_basis", "widened to the JAX tables' spread on H100 and H200");
    if (moe) {
        cJSON_AddItemToObject(u, "moe_log_band", cJSON_CreateDoubleArray((double[]){MOE_BAND_P10, MOE_BAND_P90}, 2));
        cJSON_AddStringToObject(u, "moe_basis", "the whole step's band at least the published MoE steps' spread "
                                                "(78 rows on H100, B200, GB200; most ran slower than modelled)");
    }
    cJSON_AddItemToObject(u, "communication_log_band", cJSON_CreateDoubleArray((double[]){clo, chi}, 2));
    cJSON_AddNumberToObject(u, "exposed_communication_share", fm);
}
