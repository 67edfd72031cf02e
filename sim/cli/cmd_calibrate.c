/* shardsim calibrate: its options, the overlay file it writes and the human
 * form of the report; the fit itself is traces/calibrate.c. */
#include "sim_file.h"
#include "calibrate.h"
#include "cli.h"

#include <math.h>
#include <stdio.h>

static void print_errors(const char *what, const cJSON *e, bool sizes)
{
    if (cJSON_GetObjectItem(e, "n_rows")->valueint == 0) {
        printf("# %-28s no rows\n", what);
        return;
    }
    const cJSON *l = cJSON_GetObjectItem(e, "median_abs_pct_error_large"),
                *s = cJSON_GetObjectItem(e, "median_abs_pct_error_small");
    char ls[32] = "-", ss[32] = "-";
    if (cJSON_IsNumber(l))
        g_snprintf(ls, sizeof ls, "%.1f%%", l->valuedouble);
    if (cJSON_IsNumber(s))
        g_snprintf(ss, sizeof ss, "%.1f%%", s->valuedouble);
    const cJSON *lg = cJSON_GetObjectItem(e, "mean_abs_log_error");
    printf("# %-28s median |error| %5.1f%%", what, cJSON_GetObjectItem(e, "median_abs_pct_error")->valuedouble);
    if (sizes)
        printf(" (from 1 MiB: %s, below: %s)", ls, ss);
    printf(" over %d rows", cJSON_GetObjectItem(e, "n_rows")->valueint);
    if (cJSON_IsNumber(lg))
        printf("; mean |log error| %.3f", lg->valuedouble);
    printf("\n");
}

static void print_report(const cJSON *r)
{
    printf("%-40s %12s %12s %8s  %s\n", "parameter", "prior", "fitted", "+-", "status");
    const cJSON *p;
    cJSON_ArrayForEach(p, cJSON_GetObjectItem(r, "parameters"))
    {
        double sd = cJSON_GetObjectItem(p, "log_sd")->valuedouble;
        char pm[16] = "-";
        if (isfinite(sd))
            g_snprintf(pm, sizeof pm, "%.1f%%", (exp(sd) - 1) * 100);
        printf("%-40s %12.4g %12.4g %8s  %s\n", cJSON_GetObjectItem(p, "key")->valuestring,
               cJSON_GetObjectItem(p, "prior")->valuedouble, cJSON_GetObjectItem(p, "value")->valuedouble, pm,
               cJSON_GetObjectItem(p, "status")->valuestring);
    }
    printf("# %d parameter(s) these inputs do not exercise keep their values\n",
           cJSON_GetArraySize(cJSON_GetObjectItem(r, "unused")));
    const cJSON *cv = cJSON_GetObjectItem(r, "cross_validated");
    bool sizes = cJSON_GetObjectItem(r, "topology") != NULL; /* collectives: by message size */
    print_errors("before (prior):", cJSON_GetObjectItem(r, "before"), sizes);
    print_errors("after (fitted on all rows):", cJSON_GetObjectItem(r, "after"), sizes);
    printf("# cross-validated: %s\n", cJSON_GetObjectItem(cv, "scheme")->valuestring);
    print_errors("  held out, prior:", cJSON_GetObjectItem(cv, "before"), sizes);
    print_errors("  held out, fitted:", cv, sizes);
}

/* Writes `overlay` (deleted) to `path` when there is one. */
static bool write_overlay(const char *path, cJSON *overlay, GError **err)
{
    if (!path) {
        cJSON_Delete(overlay);
        return true;
    }
    char *text = cJSON_Print(overlay);
    GString *s = g_string_new(text);
    g_string_append_c(s, '\n');
    bool ok = sim_file_write(path, s->str, (gssize)s->len, err);
    if (!ok && err && *err)
        (*err)->code = SIM_ERROR_INPUT;
    g_string_free(s, TRUE);
    free(text);
    cJSON_Delete(overlay);
    return ok;
}

static void print_result(cJSON *report, const char *output, bool json)
{
    if (json) {
        cli_print_json(report);
        return;
    }
    print_report(report);
    if (output)
        printf("# overlay written to %s\n", output);
    cJSON_Delete(report);
}

static int run_accel(const char *accel, int argc, char **argv, const char *output, bool json)
{
    GError *err = NULL;
    AccelCalibration *c = calib_accel_new(accel, &err);
    bool ok = c != NULL;
    for (int i = 1; ok && i < argc; i++)
        ok = calib_accel_add(c, argv[i], &err);
    ok = ok && calib_accel_run(c, &err) && write_overlay(output, calib_accel_overlay_json(c), &err);
    if (ok)
        print_result(calib_accel_report_json(c), output, json);
    calib_accel_free(c);
    return ok ? 0 : cli_fail(err);
}

int cmd_calibrate(int argc, char **argv)
{
    char *topology = NULL, *params = NULL, *output = NULL, *ranks_s = NULL, *nodes_s = NULL, *accel = NULL;
    gboolean json = FALSE;
    int ranks = 0, nodes = 0;
    GOptionEntry entries[] = {
        {"topology", 't', 0, G_OPTION_ARG_FILENAME, &topology, "topology preset or JSON file", "PRESET|FILE"},
        {"accelerator", 'a', 0, G_OPTION_ARG_FILENAME, &accel,
         "fit this accelerator's efficiencies to GEMM or step tables instead", "PRESET|FILE"},
        {"params", 0, 0, G_OPTION_ARG_FILENAME, &params,
         "the prior: collective-model parameters or an overlay (default models/presets/collectives.json)", "FILE"},
        {"output", 'o', 0, G_OPTION_ARG_FILENAME, &output, "write the calibrated overlay here", "FILE.json"},
        {"ranks", 'n', 0, G_OPTION_ARG_STRING, &ranks_s, "ranks that ran, when the traces do not say", "N"},
        {"nodes", 0, 0, G_OPTION_ARG_STRING, &nodes_s, "nodes they ran on, when the traces do not say", "N"},
        {"json", 0, 0, G_OPTION_ARG_NONE, &json, "print the report as one JSON object", NULL},
        {NULL, 0, 0, 0, NULL, NULL, NULL},
    };
    GOptionContext *ctx = g_option_context_new(
        "TRACE... - fit the collective model to measured nccl-tests, rccl-tests, OSU or OTF2 runs of a cluster "
        "(--topology), or an accelerator to GEMM timings and measured steps (--accelerator, CSV tables)");
    g_option_context_add_main_entries(ctx, entries, NULL);
    int rc = 2;
    Calibration *c = NULL;
    if (!cli_parse_options(ctx, entries, &argc, &argv))
        goto out;
    if (!topology == !accel) {
        rc = cli_usage_error("calibrate: give --topology (collectives) or --accelerator (compute), one of them");
        goto out;
    }
    if (argc < 2) {
        rc = cli_usage_error("calibrate: name at least one trace file");
        goto out;
    }
    if ((ranks_s && (rc = cli_parse_count("calibrate", "--ranks", ranks_s, 1, 1 << 22, &ranks)) != 0) ||
        (nodes_s && (rc = cli_parse_count("calibrate", "--nodes", nodes_s, 1, 1 << 20, &nodes)) != 0))
        goto out;
    const char *out_opt[] = {"--output"};
    if ((rc = cli_check_outputs("calibrate", (const char *const *)argv + 1, argc - 1,
                                (const char *const *)&output, out_opt, 1)) != 0)
        goto out;
    if (accel) {
        /* the collective model's options mean nothing here: refused, not ignored (review 9) */
        const char *unused = params ? "--params" : ranks_s ? "--ranks" : nodes_s ? "--nodes" : NULL;
        rc = unused ? cli_usage_error("calibrate: %s is the collective model's (--topology); with --accelerator the "
                                      "prior is the accelerator itself (a preset or an overlay file)", unused)
                    : run_accel(accel, argc, argv, output, json);
        goto out;
    }
    /* fitted on the times of what NCCL ran, where its log says, not on the tuner's picks */
    ValidateOptions o = {topology, params, -1,   COLL_ALGO_AUTO,    COLL_PROTO_AUTO, ranks,
                         nodes,    NULL,   0,    VALIDATE_LIB_AUTO, NULL, NULL, NULL, true};
    c = calib_new(&o);
    GError *err = NULL;
    bool ok = true;
    for (int i = 1; ok && i < argc; i++)
        ok = calib_add_trace(c, argv[i], &err);
    ok = ok && calib_run(c, &err) && write_overlay(output, calib_overlay_json(c), &err);
    if (!ok) {
        rc = cli_fail(err);
        goto out;
    }
    print_result(calib_report_json(c), output, json);
    rc = 0;
out:
    calib_free(c);
    g_free(topology);
    g_free(params);
    g_free(output);
    g_free(ranks_s);
    g_free(nodes_s);
    g_free(accel);
    g_option_context_free(ctx);
    return rc;
}
