/* calibrate: parameters recovered from synthetic traces made by the model
 * with known parameters; the overlay it writes read back by every command's
 * loader; bad overlays refused with FILE:LINE; cross-validation on half the
 * sizes of real traces lowers their held-out error. */
#include "calibrate.h"
#include "test_load.h"
#include "test_main.h"

#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

static void write_trace(const char *path, const char *topo, int nodes, int ppn, const CollParams *p);

/* Writes an nccl-tests all_reduce_perf output of `nodes` x `ppn` ranks whose
 * times are the model's with parameters `p` on topology `topo`. */
static char *synthetic_trace(const char *dir, const char *topo, int nodes, int ppn, const CollParams *p)
{
    char *name = g_strdup_printf("synthetic-%dx%d.txt", nodes, ppn);
    char *path = g_build_filename(dir, name, NULL);
    g_free(name);
    write_trace(path, topo, nodes, ppn, p);
    return path;
}

static void write_trace(const char *path, const char *topo, int nodes, int ppn, const CollParams *p)
{
    Topo *t = load(topo, nodes);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    int n = nodes * ppn, tppn = topo_ranks_per_node(t), *ids = g_new(int, n);
    for (int i = 0; i < n; i++)
        ids[i] = (i / ppn) * tppn + i % ppn;
    CollGroup *g = coll_group_new_with(t, ids, n, p, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    GString *s = g_string_new("# synthetic: made by tests/test_calibrate.c from the model\n"
                              "# Collective test starting: all_reduce_perf\n"
                              "# nThread 1 nGpus 1 minBytes 8 maxBytes 4294967296 step: 2(factor)\n"
                              "#\n# Using devices\n");
    for (int i = 0; i < n; i++)
        g_string_append_printf(s, "#  Rank %2d Group  0 Pid %d on node%d device %d [0x%02x] NVIDIA A100\n", i,
                               1000 + i, i / ppn, i % ppn, i % ppn);
    g_string_append(s, "#\n#       size         count      type   redop    root     time   algbw   busbw #wrong"
                       "     time   algbw   busbw #wrong\n"
                       "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)"
                       "            (us)  (GB/s)  (GB/s)\n");
    for (double b = 8; b <= 4294967296.0; b *= 4) {
        CollCost c;
        CU_ASSERT_TRUE_FATAL(coll_cost(g, COLL_ALLREDUCE, COLL_ALGO_AUTO, COLL_PROTO_AUTO, b, &c));
        double us = c.time_s * 1e6, alg = b / c.time_s / 1e9, bus = alg * coll_busbw_factor(COLL_ALLREDUCE, n);
        g_string_append_printf(s, "%12.0f %13.0f     float     sum      -1 %8.2f %7.2f %7.2f      0 %8.2f %7.2f %7.2f      0\n",
                               b, b / 4, us, alg, bus, us, alg, bus);
    }
    CU_ASSERT_TRUE(g_file_set_contents(path, s->str, -1, NULL));
    g_string_free(s, TRUE);
    coll_group_free(g);
    topo_free(t);
    g_free(ids);
}

static void set(CollParams *p, const char *key, double factor)
{
    int i = coll_params_find(key);
    CU_ASSERT_TRUE_FATAL(i >= 0);
    CU_ASSERT_TRUE(coll_params_set(p, i, coll_params_get(p, i) * factor));
}

static const cJSON *param(const cJSON *report, const char *key)
{
    const cJSON *p;
    cJSON_ArrayForEach(p, cJSON_GetObjectItem(report, "parameters"))
    if (strcmp(cJSON_GetObjectItem(p, "key")->valuestring, key) == 0)
        return p;
    return NULL;
}

static Calibration *calibrate2(const char *topo, const char *params, const char *trace, const char *trace2)
{
    ValidateOptions o = {topo, params, -1, COLL_ALGO_AUTO, COLL_PROTO_AUTO, 0, 0, NULL, 0, VALIDATE_LIB_AUTO, NULL, NULL, NULL,
                         false};
    Calibration *c = calib_new(&o);
    GError *err = NULL;
    bool ok = calib_add_trace(c, trace, &err) && (!trace2 || calib_add_trace(c, trace2, &err)) && calib_run(c, &err);
    if (!ok)
        fprintf(stderr, "\n%s\n", err->message);
    g_clear_error(&err);
    CU_ASSERT_TRUE(ok);
    return c;
}

static Calibration *calibrate(const char *topo, const char *params, const char *trace)
{
    return calibrate2(topo, params, trace, NULL);
}

static const char *status(const cJSON *report, const char *key)
{
    const cJSON *p = param(report, key);
    return p ? cJSON_GetObjectItem(p, "status")->valuestring : "not a candidate";
}

/* Every parameter the fit reports as fitted is within 2% of the truth, the
 * perturbed bandwidths among them, and the fitted model reproduces the
 * traces: one node (NVLink-bound) and two nodes (NIC-bound). */
static void test_recovers_synthetic(void)
{
    char *dir = g_dir_make_tmp("calib-XXXXXX", NULL);
    CollParams *truth = coll_params_new(NULL, NULL);
    set(truth, "transports.ib.bandwidth_fraction", 0.80);
    set(truth, "link_efficiency.nvlink", 0.85);
    set(truth, "step_latency.net.ring.simple", 1.6);
    char *trace = synthetic_trace(dir, "dgx2-v100-cluster", 2, 16, truth),
         *trace1 = synthetic_trace(dir, "dgx2-v100-cluster", 1, 16, truth);
    Calibration *c = calibrate2("dgx2-v100-cluster", NULL, trace1, trace);
    cJSON *r = calib_report_json(c);
    int fitted = 0;
    const cJSON *p;
    cJSON_ArrayForEach(p, cJSON_GetObjectItem(r, "parameters"))
    {
        if (strcmp(cJSON_GetObjectItem(p, "status")->valuestring, "fitted") != 0)
            continue;
        int i = coll_params_find(cJSON_GetObjectItem(p, "key")->valuestring);
        double want = coll_params_get(truth, i), got = cJSON_GetObjectItem(p, "value")->valuedouble,
               sd = cJSON_GetObjectItem(p, "log_sd")->valuedouble;
        printf("\n  %s: true %g fitted %g (sd %.3f)", coll_params_key(i), want, got, sd);
        /* within 2%, or within its stated spread where that is wider */
        CU_ASSERT_TRUE(fabs(log(got / want)) <= fmax(0.02, 3 * sd));
        if (g_str_has_suffix(coll_params_key(i), "efficiency.nvlink") || g_str_has_suffix(coll_params_key(i), "fraction"))
            CU_ASSERT_DOUBLE_EQUAL(got / want, 1, 0.02);
        fitted++;
    }
    CU_ASSERT_TRUE(fitted >= 2);
    CU_ASSERT_STRING_EQUAL(status(r, "transports.ib.bandwidth_fraction"), "fitted");
    CU_ASSERT_STRING_EQUAL(status(r, "link_efficiency.nvlink"), "fitted");
    CU_ASSERT_TRUE(cJSON_GetObjectItem(cJSON_GetObjectItem(r, "before"), "max_abs_pct_error")->valuedouble > 10);
    printf("\n  after: max |error| %.2f%%", cJSON_GetObjectItem(cJSON_GetObjectItem(r, "after"), "max_abs_pct_error")->valuedouble);
    CU_ASSERT_TRUE(cJSON_GetObjectItem(cJSON_GetObjectItem(r, "after"), "max_abs_pct_error")->valuedouble < 2); /* MAP: weakly determined latencies stay a little toward their priors */
    cJSON_Delete(r);
    calib_free(c);
    coll_params_free(truth);
    g_unlink(trace);
    g_unlink(trace1);
    g_rmdir(dir);
    g_free(trace);
    g_free(trace1);
    g_free(dir);
}

/* The overlay, written and read back, gives the fitted values, and the
 * default elsewhere. */
static void test_overlay_round_trip(void)
{
    char *dir = g_dir_make_tmp("calib-XXXXXX", NULL);
    CollParams *truth = coll_params_new(NULL, NULL), *def = coll_params_new(NULL, NULL);
    set(truth, "transports.ib.bandwidth_fraction", 0.75);
    char *trace = synthetic_trace(dir, "dgx-a100-cluster", 2, 8, truth);
    Calibration *c = calibrate("dgx-a100-cluster", NULL, trace);
    cJSON *ov = calib_overlay_json(c);
    char *text = cJSON_Print(ov), *path = g_build_filename(dir, "overlay.json", NULL);
    CU_ASSERT_TRUE(g_file_set_contents(path, text, -1, NULL));
    GError *err = NULL;
    CollParams *back = coll_params_new(path, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(back);
    int net = coll_params_find("transports.ib.bandwidth_fraction"), pcie = coll_params_find("link_efficiency.pcie");
    CU_ASSERT_DOUBLE_EQUAL(coll_params_get(back, net) / coll_params_get(truth, net), 1, 0.02);
    CU_ASSERT_EQUAL(coll_params_get(back, pcie), coll_params_get(def, pcie));
    const cJSON *cal = cJSON_GetObjectItem(ov, "calibration");
    CU_ASSERT_EQUAL(cJSON_GetArrayItem(cJSON_GetObjectItem(cal, "nodes"), 1)->valueint, 2);
    const cJSON *band = cJSON_GetObjectItem(cal, "log_residual_large");
    CU_ASSERT_TRUE(cJSON_GetArrayItem(band, 0)->valuedouble <= cJSON_GetArrayItem(band, 1)->valuedouble);
    CU_ASSERT_STRING_EQUAL(cJSON_GetArrayItem(cJSON_GetObjectItem(cal, "topologies"), 0)->valuestring,
                           "dgx-a100-cluster");
    coll_params_free(back);
    coll_params_free(truth);
    coll_params_free(def);
    cJSON_Delete(ov);
    free(text);
    calib_free(c);
    g_unlink(path);
    g_unlink(trace);
    g_rmdir(dir);
    g_free(path);
    g_free(trace);
    g_free(dir);
}

static void expect_bad_overlay(const char *text, const char *want)
{
    char *dir = g_dir_make_tmp("calib-XXXXXX", NULL), *path = g_build_filename(dir, "bad.json", NULL);
    CU_ASSERT_TRUE(g_file_set_contents(path, text, -1, NULL));
    GError *err = NULL;
    CollParams *p = coll_params_new(path, &err);
    CU_ASSERT_PTR_NULL(p);
    CU_ASSERT_PTR_NOT_NULL_FATAL(err);
    if (!strstr(err->message, want) || !strstr(err->message, "bad.json:"))
        fprintf(stderr, "\n%s (wanted %s)\n", err->message, want);
    CU_ASSERT_PTR_NOT_NULL(strstr(err->message, want));
    CU_ASSERT_PTR_NOT_NULL(strstr(err->message, "bad.json:"));
    CU_ASSERT_EQUAL(err->code, SIM_ERROR_INPUT);
    g_clear_error(&err);
    coll_params_free(p);
    g_unlink(path);
    g_rmdir(dir);
    g_free(path);
    g_free(dir);
}

static void test_bad_overlays(void)
{
    expect_bad_overlay("{\"overlay\": \"x\"}", "parameters");
    expect_bad_overlay("{\"overlay\": \"x\",\n \"parameters\": {\"link_efficiency.warp\": 0.5}}", "unknown");
    expect_bad_overlay("{\"overlay\": \"x\",\n \"parameters\": {\"link_efficiency.net\": 1.5}}", "[0.01, 1]");
    expect_bad_overlay("{\"overlay\": \"x\",\n \"parameters\": {\"host_launch_s\": {\"value\": \"fast\"}}}", "number");
}

/* Calibrating on every other size of each real trace predicts the other
 * sizes at least as well as the uncalibrated model (mean |log error|). */
static void test_cross_validation_helps(void)
{
    static const struct {
        const char *topo, *trace;
    } cases[] = {
        {"dgx1-v100", "nccl-tests_allreduce_v100-sxm2-16gb_8gpu_hybrid-cube-mesh.txt"},
        {"abci-a100", "nccl-tests_allreduce_abci-a100-40gb_2node-16gpu_sharp.txt"},
        {"mi300x-node", "rccl-tests_allreduce_mi300x_8gpu_1node.txt"},
        {"mi355x-cluster", "rccl-tests_allreduce_mi355x_2node-16gpu_pollara400.txt"},
        {"mi355x-cluster", "rccl-tests_allreduce_mi300x_2node-16gpu_roce.txt"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        char *path = g_build_filename(SHARDSIM_DATA_DIR, "tests/data/traces", cases[i].trace, NULL);
        Calibration *c = calibrate(cases[i].topo, NULL, path);
        cJSON *r = calib_report_json(c);
        const cJSON *cv = cJSON_GetObjectItem(r, "cross_validated");
        double before = cJSON_GetObjectItem(cJSON_GetObjectItem(cv, "before"), "mean_abs_log_error")->valuedouble,
               after = cJSON_GetObjectItem(cv, "mean_abs_log_error")->valuedouble;
        printf("\n  %s on %s: held-out mean |log error| %.3f -> %.3f", cases[i].trace, cases[i].topo, before, after);
        /* lower, or already within 3% where the prior was that good */
        CU_ASSERT_TRUE(after <= before * 1.01 || after < 0.03);
        cJSON_Delete(r);
        calib_free(c);
        g_free(path);
    }
}

static const TestCase tests[] = {
    {"recovers parameters of a synthetic trace within 2%", test_recovers_synthetic},
    {"overlay round trip", test_overlay_round_trip},
    {"bad overlays refused with FILE:LINE", test_bad_overlays},
    {"cross-validation on half the sizes lowers the held-out error", test_cross_validation_helps},
};
TEST_MAIN("calibrate", tests)
