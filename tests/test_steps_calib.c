/* The calibrated accelerators' measured steps (issue 12), every row printed.
 *
 * B200: NeMo 25.02's DGX-B200 FP8 table (tests/data/steps/nemo-25.02-b200-
 * fp8-{calib,heldout}.csv): the b200 preset fitted on two rows (GPT3-175B,
 * Llama 3 8B), checked on the other two (Llama 3 70B, Mixtral 8x7B): median
 * <= 10 %, max <= 25 %.
 *
 * H100 80GB: llm-foundry's MPT FSDP benchmarks on
 * H100 (mosaicml/llm-foundry scripts/train/benchmarking/README.md, the three
 * h100_80gb tables; the provenance and the mapping are in the headers of
 * tests/data/steps/llmfoundry-mpt-h100-80gb-{calib,heldout}.csv) and NeMo
 * 24.07's DGX-H100 FP8 pre-training table (NVIDIA/NeMo docs/source/
 * performance/performance_summary.md; tests/data/steps/nemo-24.07-h100-fp8.csv).
 *
 * The h100-sxm preset's efficiencies were fitted (`shardsim calibrate
 * --accelerator h100-sxm`) on the calibration half only: the 8-64 GPU
 * table's MPT-1B, 7B and 30B rows.  The held-out half, never fitted on, is
 * the same table's 760M, 3B, 13B and 70B rows (sizes between and beyond the
 * fitted ones) and the whole 128-512 GPU table (another campaign, 2024);
 * and, held out by source, NeMo's Megatron-Core runs (FP8, TP/PP/CP/VP on
 * 8-512 GPUs).
 * Every row is printed (measured, predicted, error); asserted: on the
 * held-out half and on NeMo's table, median |tokens/s error| <= 10 % (the
 * issue's goal on unseen runs) and max <= 25 %; on the calibration half,
 * median <= 5 %; the preset's step band ("uncertainty") is all 60 held-out
 * rows' p10/p90 of log(predicted / measured); each MPT row's architecture is
 * the one that ran (its NumParams).  Whether each row is predicted to fit is
 * printed here; tests/test_memory_peak.c asserts it for every row, with
 * each row's memory breakdown. */
#include "accel.h"
#include "calibrate.h"
#include "step.h"
#include "test_main.h"
#include "workload.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STEPS SHARDSIM_SOURCE_DIR "/tests/data/steps/"

static int col(gchar **head, const char *name)
{
    for (int i = 0; head[i]; i++)
        if (!strcmp(head[i], name))
            return i;
    return -1;
}

/* The cell of the first of two columns the table has; "-" without. */
static const char *cell(gchar **head, gchar **f, const char *a, const char *b)
{
    int i = col(head, a);
    if (i < 0 && b)
        i = col(head, b);
    return i >= 0 ? f[i] : "-";
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

typedef struct {
    int n, fits;
    double median, worst;
    double p10, p90;   /* of log(predicted / measured) step time */
    double logr[128]; /* the same, sorted */
} Summary;

/* The q-quantile, linear between order statistics (as calibrate's band). */
static double quantile(const double *sorted, int n, double q)
{
    double pos = q * (n - 1), lo = floor(pos);
    double a = sorted[(int)lo], b = sorted[(int)fmin(lo + 1, n - 1)];
    return a + (b - a) * (pos - lo);
}

/* The architecture is the one that ran: its parameter count, where the
 * table gives it (ref.num_params). */
static void check_params(gchar **head, gchar **f, int seq)
{
    if (col(head, "ref.num_params") < 0)
        return;
    GError *err = NULL;
    char *m = g_strdup_printf("{\"name\": \"mpt\", \"type\": \"transformer\", \"source\": \"test\", \"layers\": %s, "
                              "\"hidden\": %s, \"heads\": %s, \"seq_len\": %d, \"vocab\": 50368}",
                              f[col(head, "model.layers")], f[col(head, "model.hidden")], f[col(head, "model.heads")],
                              seq);
    Workload *w = workload_parse("mpt", m, strlen(m), &err);
    g_free(m);
    g_clear_error(&err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(w);
    CU_ASSERT_DOUBLE_EQUAL(workload_params_total(w), atof(f[col(head, "ref.num_params")]), 0.5);
    workload_free(w);
}

/* Runs every row of the table, prints it, checks its parameter count. */
static Summary run_table(const char *file)
{
    Summary s = {0};
    gchar *text = NULL;
    CU_ASSERT_FATAL(g_file_get_contents(file, &text, NULL, NULL));
    gchar **lines = g_strsplit(text, "\n", -1), **head = NULL;
    double errs[128], *logr = s.logr;
    printf("\n%s\n%-10s %6s %5s %4s %3s %5s %9s %11s %11s %7s %7s %s\n", file, "model", "seq", "GPUs", "prec", "mb",
           "batch", "recompute", "tokens/s", "model", "error", "GiB", "fits");
    for (gchar **l = lines; *l && s.n < 128; l++) {
        if (!**l || **l == '#')
            continue;
        gchar **f = g_strsplit(*l, ",", -1);
        if (!head) {
            head = f;
            continue;
        }
        CU_ASSERT_EQUAL_FATAL(g_strv_length(f), g_strv_length(head));
        gchar *base = NULL, *path = g_build_filename(STEPS, f[col(head, "scenario")], NULL);
        bool read = g_file_get_contents(path, &base, NULL, NULL);
        g_free(path);
        CU_ASSERT_FATAL(read);
        cJSON *root = cJSON_Parse(base);
        g_free(base);
        for (int i = 0; head[i]; i++)
            if (strcmp(head[i], "scenario") && strcmp(head[i], "tokens_per_s") && !g_str_has_prefix(head[i], "ref."))
                calib_accel_set_key(root, head[i], f[i]);
        char *scen = cJSON_Print(root);
        GError *err = NULL;
        cJSON *res = step_run_text(file, scen, &err);
        if (!res)
            printf("%s: %s\n", *l, err->message);
        g_clear_error(&err);
        CU_ASSERT_PTR_NOT_NULL_FATAL(res);
        int seq = atoi(cell(head, f, "model.seq_len", "ref.seq_len")), gb = atoi(f[col(head, "global_batch")]);
        double meas = atof(f[col(head, "tokens_per_s")]);
        double tok = gb * (double)seq / cJSON_GetObjectItem(res, "step_time_s")->valuedouble, e = tok / meas - 1;
        double gib = cJSON_GetObjectItem(cJSON_GetObjectItem(res, "memory_per_device_bytes"), "total")->valuedouble /
                     (1024.0 * 1024 * 1024);
        bool fit = cJSON_IsTrue(cJSON_GetObjectItem(res, "fits"));
        printf("%-10s %6d %5s %4s %3s %5d %9s %11.0f %11.0f %+6.1f%% %7.2f %s\n", cell(head, f, "ref.mpt", "ref.model"),
               seq, cell(head, f, "ref.gpus", "parallelism.dp"), cell(head, f, "precision", NULL),
               f[col(head, "micro_batch")], gb, cell(head, f, "parallelism.recompute", NULL), meas, tok, 100 * e, gib,
               fit ? "yes" : "NO");
        s.fits += fit;
        logr[s.n] = -log1p(e); /* step time: predicted / measured */
        errs[s.n++] = fabs(e);
        s.worst = fmax(s.worst, fabs(e));
        check_params(head, f, seq);
        free(scen);
        cJSON_Delete(root);
        cJSON_Delete(res);
        g_strfreev(f);
    }
    CU_ASSERT_FATAL(s.n > 0);
    qsort(errs, (size_t)s.n, sizeof errs[0], cmp_double);
    qsort(logr, (size_t)s.n, sizeof logr[0], cmp_double);
    s.median = s.n % 2 ? errs[s.n / 2] : (errs[s.n / 2 - 1] + errs[s.n / 2]) / 2;
    s.p10 = quantile(logr, s.n, 0.1);
    s.p90 = quantile(logr, s.n, 0.9);
    printf("%d rows: median |error| %.1f%%, max %.1f%%, log(predicted/measured step) p10 %.3f p90 %.3f; %d of %d "
           "predicted to fit\n",
           s.n, 100 * s.median, 100 * s.worst, s.p10, s.p90, s.fits, s.n);
    g_strfreev(head);
    g_strfreev(lines);
    g_free(text);
    return s;
}

static void test_calibration_half(void)
{
    Summary s = run_table(STEPS "llmfoundry-mpt-h100-80gb-calib.csv");
    CU_ASSERT_TRUE(s.n >= 20);
    CU_ASSERT_TRUE(s.median <= 0.05);
}

static void test_held_out_half(void)
{
    Summary s = run_table(STEPS "llmfoundry-mpt-h100-80gb-heldout.csv");
    CU_ASSERT_TRUE(s.n >= 40);
    CU_ASSERT_TRUE(s.median <= 0.10);
    CU_ASSERT_TRUE(s.worst <= 0.25);
}

static void test_nemo(void)
{
    Summary s = run_table(STEPS "nemo-24.07-h100-fp8.csv");
    CU_ASSERT_TRUE(s.n >= 9);
    CU_ASSERT_TRUE(s.median <= 0.10);
    CU_ASSERT_TRUE(s.worst <= 0.25);
}

/* The preset's step band (step_band.c) is the p10/p90 of every held-out
 * row's log(predicted / measured), both sources together. */
static void test_band(void)
{
    Summary a = run_table(STEPS "llmfoundry-mpt-h100-80gb-heldout.csv"), b = run_table(STEPS "nemo-24.07-h100-fp8.csv");
    double all[256];
    int n = 0;
    for (int i = 0; i < a.n; i++)
        all[n++] = a.logr[i];
    for (int i = 0; i < b.n; i++)
        all[n++] = b.logr[i];
    qsort(all, (size_t)n, sizeof all[0], cmp_double);
    double p10 = quantile(all, n, 0.1), p90 = quantile(all, n, 0.9);
    printf("%d held-out rows: log(predicted/measured step) p10 %.3f p90 %.3f\n", n, p10, p90);
    GError *err = NULL;
    Accel *h = accel_load("h100-sxm", &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(h);
    double r10, r90;
    CU_ASSERT_TRUE(accel_band(h, &r10, &r90));
    CU_ASSERT_DOUBLE_EQUAL(r10, p10, 0.002);
    CU_ASSERT_DOUBLE_EQUAL(r90, p90, 0.002);
    accel_free(h);
}

static void test_b200(void)
{
    Summary c = run_table(STEPS "nemo-25.02-b200-fp8-calib.csv"), h = run_table(STEPS "nemo-25.02-b200-fp8-heldout.csv");
    CU_ASSERT_TRUE(c.n == 2 && h.n == 2);
    CU_ASSERT_TRUE(h.median <= 0.10);
    CU_ASSERT_TRUE(h.worst <= 0.25);
}

/* fused-v1 on Hopper: the preset's own FA1-generation plateaus, not the
 * generic 2x; chips without them (A100) keep the caller's ratio (0). */
static void test_v1_slowdown(void)
{
    GError *err = NULL;
    Accel *h = accel_load("h100-sxm", &err), *a = accel_load("a100-40gb", &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(h);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    double f = accel_attention_v1_slowdown(h, false), b = accel_attention_v1_slowdown(h, true);
    CU_ASSERT_TRUE(f > 2 && f < 4); /* FA3 over FA1 on Hopper: more than FA2's 2x */
    CU_ASSERT_TRUE(b > 2 && b < 5);
    CU_ASSERT_DOUBLE_EQUAL(accel_attention_v1_slowdown(a, false), 0, 0);
    CU_ASSERT_DOUBLE_EQUAL(accel_attention_v1_slowdown(a, true), 0, 0);
    accel_free(h);
    accel_free(a);
}

static const TestCase tests[] = {
    {"fused-v1's slowdown: the preset's where given, none otherwise", test_v1_slowdown},
    {"llm-foundry MPT H100 FSDP, calibration half: median <= 5%", test_calibration_half},
    {"llm-foundry MPT H100 FSDP, held-out half: median <= 10%, max <= 25%", test_held_out_half},
    {"NeMo 24.07 H100 FP8 3-D parallel, held out by source: median <= 10%, max <= 25%", test_nemo},
    {"the h100-sxm preset's step band is the held-out rows' p10/p90", test_band},
    {"NeMo 25.02 B200 FP8, held-out half: median <= 10%, max <= 25%", test_b200},
};

TEST_MAIN("steps_calib", tests)
