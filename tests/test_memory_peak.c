/* The memory model's peak on measured steps that ran (issue 12).
 *
 * Every row of the step tables in tests/data/steps is a training run that
 * completed on its GPUs: llm-foundry's MPT FSDP tables on A100-40GB and
 * H100-80GB (mosaicml/llm-foundry scripts/train/benchmarking/README.md; the
 * provenance is in each CSV's header) and NeMo 24.07's DGX-H100 and 25.02's
 * DGX-B200 Megatron-Core tables.  Each row's predicted per-device peak is printed term by term
 * (weights, gradients, optimizer state, activations, buffers, working set,
 * reserve) beside the chip's HBM, and asserted: every row that ran is
 * predicted to fit.  None of these tables reports a measured peak, nor a
 * configuration that failed, so fitting is the only check they allow; the
 * published peaks are in tests/test_memory_published.c. */
#include "calibrate.h"
#include "step.h"
#include "test_main.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STEPS SHARDSIM_SOURCE_DIR "/tests/data/steps/"
#define GIB (1024.0 * 1024 * 1024)

static int col(gchar **head, const char *name)
{
    for (int i = 0; head[i]; i++)
        if (!strcmp(head[i], name))
            return i;
    return -1;
}

static const char *cell(gchar **head, gchar **f, const char *a, const char *b)
{
    int i = col(head, a);
    if (i < 0 && b)
        i = col(head, b);
    return i >= 0 ? f[i] : "-";
}

static double term(const cJSON *m, const char *k) { return cJSON_GetObjectItem(m, k)->valuedouble / GIB; }

/* Runs every row of `file`, prints its breakdown; returns the rows, and in
 * `*fits` how many are predicted to fit. */
static int run_table(const char *file, int *fits)
{
    gchar *text = NULL;
    CU_ASSERT_FATAL(g_file_get_contents(file, &text, NULL, NULL));
    gchar **lines = g_strsplit(text, "\n", -1), **head = NULL;
    int n = 0;
    *fits = 0;
    printf("\n%s (GiB per device)\n%-10s %6s %4s %4s %3s %4s %6s %6s %6s %6s %6s %6s %6s %7s %6s %s\n", file, "model",
           "seq", "GPUs", "prec", "mb", "ckpt", "weight", "grad", "optim", "activ", "buffer", "work", "resv", "total",
           "hbm", "fits");
    for (gchar **l = lines; *l; l++) {
        if (!**l || **l == '#')
            continue;
        gchar **f = g_strsplit(*l, ",", -1);
        if (!head) {
            head = f;
            continue;
        }
        gchar *base = NULL, *path = g_build_filename(STEPS, f[col(head, "scenario")], NULL);
        CU_ASSERT_FATAL(g_file_get_contents(path, &base, NULL, NULL));
        g_free(path);
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
        const cJSON *m = cJSON_GetObjectItem(res, "memory_per_device_bytes");
        bool fit = cJSON_IsTrue(cJSON_GetObjectItem(res, "fits"));
        printf("%-10s %6s %4s %4s %3s %4s %6.2f %6.2f %6.2f %6.2f %6.2f %6.2f %6.2f %7.2f %6.2f %s\n",
               cell(head, f, "ref.mpt", "ref.model"), cell(head, f, "model.seq_len", "ref.seq_len"),
               cell(head, f, "ref.gpus", "parallelism.dp"), cell(head, f, "precision", NULL),
               f[col(head, "micro_batch")], cell(head, f, "parallelism.recompute", NULL), term(m, "weights"),
               term(m, "gradients"), term(m, "optimizer_state"), term(m, "activations"), term(m, "buffers"),
               term(m, "working_set"), term(m, "reserve"), term(m, "total"), term(m, "hbm"), fit ? "yes" : "NO");
        *fits += fit;
        n++;
        free(scen);
        cJSON_Delete(root);
        cJSON_Delete(res);
        g_strfreev(f);
    }
    printf("%d of %d rows that ran predicted to fit\n", *fits, n);
    g_strfreev(head);
    g_strfreev(lines);
    g_free(text);
    return n;
}

static void all_fit(const char *file)
{
    int fits, n = run_table(file, &fits);
    CU_ASSERT_TRUE(n > 0);
    CU_ASSERT_EQUAL(fits, n);
}

static void test_a100(void) { all_fit(STEPS "llmfoundry-mpt-a100-40gb.csv"); }
static void test_h100_calib(void) { all_fit(STEPS "llmfoundry-mpt-h100-80gb-calib.csv"); }
static void test_h100_heldout(void) { all_fit(STEPS "llmfoundry-mpt-h100-80gb-heldout.csv"); }
static void test_nemo(void) { all_fit(STEPS "nemo-24.07-h100-fp8.csv"); }
static void test_nemo_b200(void)
{
    all_fit(STEPS "nemo-25.02-b200-fp8-calib.csv");
    all_fit(STEPS "nemo-25.02-b200-fp8-heldout.csv");
}

static const TestCase tests[] = {
    {"llm-foundry MPT A100-40GB: every row that ran fits", test_a100},
    {"llm-foundry MPT H100-80GB (calibration half): every row that ran fits", test_h100_calib},
    {"llm-foundry MPT H100-80GB (held-out half): every row that ran fits", test_h100_heldout},
    {"NeMo 24.07 DGX-H100 FP8: every row that ran fits", test_nemo},
    {"NeMo 25.02 DGX-B200 FP8: every row that ran fits", test_nemo_b200},
};

TEST_MAIN("memory_peak", tests)
