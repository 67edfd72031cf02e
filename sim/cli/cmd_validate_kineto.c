/* "shardsim validate --kineto PROFILE.json": a PyTorch profiler trace's
 * kernel time per class, measured against the accelerator model
 * (traces/kineto.h), as a table or one JSON object; --gemm-table writes its
 * GEMM operators for calibrate --accelerator. */
#include "sim_file.h"
#include "cli.h"
#include "kineto.h"
#include "scenario.h"
#include "step.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static double num(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItem(o, k);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static void print_table(const cJSON *r)
{
    printf("== %s on %s: %g kernels, %.6f s of kernel time over a span of %.6f s ==\n",
           cJSON_GetObjectItem(r, "profile")->valuestring, cJSON_GetObjectItem(r, "accelerator")->valuestring,
           num(r, "kernels"), num(r, "kernel_time_s"), num(r, "span_s"));
    printf("  %-14s %8s %12s %8s %12s %12s %8s\n", "class", "kernels", "measured_s", "share", "covered_s",
           "predicted_s", "pred/meas");
    const cJSON *c;
    double total = num(r, "kernel_time_s");
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(r, "classes"))
    {
        if (num(c, "kernels") == 0)
            continue;
        char ratio[32] = "-";
        if (!isnan(num(c, "ratio")))
            snprintf(ratio, sizeof ratio, "%.3f", num(c, "ratio"));
        printf("  %-14s %8g %12.6f %7.1f%% %12.6f %12.6f %8s\n", cJSON_GetObjectItem(c, "class")->valuestring,
               num(c, "kernels"), num(c, "measured_s"), total > 0 ? 100 * num(c, "measured_s") / total : 0,
               num(c, "measured_covered_s"), num(c, "predicted_s"), ratio);
    }
    printf("  covered: the kernels whose operator has shapes (record_shapes=True) the model prices: %.1f%% of "
           "the kernel time\n",
           100 * num(r, "priced_share"));
}

int cmd_validate_kineto(const char *profile, const char *accel, const char *scenario, const char *gemm_table, bool json)
{
    if (!!accel == !!scenario)
        return cli_usage_error("validate: --kineto needs the GPU: --accelerator PRESET or --scenario FILE, one of them");
    const char *ins[] = {profile, scenario}, *outs[] = {gemm_table}, *opts[] = {"--gemm-table"};
    int rc = cli_check_outputs("validate", ins, scenario ? 2 : 1, outs, opts, 1);
    if (rc)
        return rc;
    GError *err = NULL;
    StepScenario *sc = NULL;
    Accel *own = NULL;
    const Accel *acc = NULL;
    if (scenario) {
        sc = step_scenario_load(scenario, &err);
        acc = sc ? step_scenario_accel(sc) : NULL;
    } else
        acc = own = accel_load(accel, &err);
    KinetoProfile *p = acc ? kineto_load(profile, &err) : NULL;
    cJSON *res = p ? kineto_compare(p, acc) : NULL;
    if (res && gemm_table) {
        char *t = kineto_gemm_table(p);
        if (!t)
            g_set_error(&err, SIM_ERROR, SIM_ERROR_INPUT,
                        "%s: no GEMM operator with shapes (profile with record_shapes=True) for --gemm-table", profile);
        else if (!sim_file_write(gemm_table, t, -1, &err))
            err->code = SIM_ERROR_INTERNAL, err->domain = SIM_ERROR;
        g_free(t);
        if (err) {
            cJSON_Delete(res);
            res = NULL;
        }
    }
    kineto_free(p);
    if (res) {
        if (json)
            cli_print_json(res);
        else {
            print_table(res);
            cJSON_Delete(res);
        }
        rc = 0;
    } else
        rc = cli_fail(err);
    accel_free(own);
    step_scenario_free(sc);
    return rc;
}
