/* MI300X and MI325X: the mi300x and mi325x presets against MLPerf Training
 * v5.1's Llama 2 70B LoRA runs (tests/data/steps/mlperf-5.1-mi3{00,25}x-
 * llama2-70b-lora{,-heldout}.csv; provenance and mapping in their headers and
 * .source files), every row printed.
 *
 * What is fitted and what is not, per chip: the FP8 GEMM ceiling alone, on
 * AMD's own submission (the calibration row); attention's fractions are
 * aiter's measured v3 kernels on MI300X (on MI325X scaled by the two chips'
 * measured BF16 GEMM ratio), the BF16 ceiling follows the FP8 fit by AMD's
 * measured BF16/FP8 ratio (sources in the presets).  Held out, never fitted
 * on: every other submitter's run of the recipe (other hosts, software
 * images, LLMBoost; two nodes with cp 2).  One workload: they test the
 * transfer between systems and layouts, not between workloads.
 *
 * Asserted: each calibration row within 1 % (the fit), and again with the
 * other split of GEMM and attention time; the held-out rows within the bounds
 * below; each fitted FP8 ceiling below AMD's Max-Achievable FLOPs for the
 * chip (hipBLASLt alone) at a plausible in-step ratio; each band is
 * h100-sxm's held-out band widened by the largest step shift, over NeMo
 * 24.07's nine layouts, between the two splits, and holds every held-out
 * row; "recompute_layers" (the MI300X recipe's 21 of 80) costs its share of
 * full recomputation's time and activations; every row, having run, is
 * predicted to fit (MI300X's one-node rows at 188.6 of 192 GiB). */
#include "test_steps.h"

#define NEMO STEPS "nemo-24.07-h100-fp8.csv"
#define TWO_NODES STEPS "mlperf-5.1-cdna3-llama2-70b-lora-2node-heldout.csv"

typedef struct {
    const char *chip, *fabric, *calib, *heldout, *alt;
    int heldout_rows;
    double maf_fp8, maf_bf16; /* AMD's Max-Achievable FLOPs / peak (the presets' source) */
} Chip;

static const Chip chips[] = {
    {"mi300x", "mi300x-cluster", STEPS "mlperf-5.1-mi300x-llama2-70b-lora.csv",
     STEPS "mlperf-5.1-mi300x-llama2-70b-lora-heldout.csv", STEPS "mi300x-attention-in-step.json", 3, 1273 / 2614.9,
     708 / 1307.4},
    {"mi325x", "mi325x-cluster", STEPS "mlperf-5.1-mi325x-llama2-70b-lora.csv",
     STEPS "mlperf-5.1-mi325x-llama2-70b-lora-heldout.csv", STEPS "mi325x-attention-in-step.json", 6, 1519 / 2614.9,
     843 / 1307.4},
};

/* Held-out rows.  One node: the calibrated recipe on another system (host,
 * cooling, software image), each within 5 % (the nine are -1.5 % .. +4.0 %:
 * the spread between systems, as MI355X's three at +3.3..+5.5 %).  Two
 * nodes (MangoBoost, cp 2, 16 GPUs): each within 10 %, the goal on
 * unseen runs; both are 4.6 % fast: ring attention's per-step kernels on
 * s / cp blocks are charged, its partial outputs' rescaling and the ring's
 * synchronisation are not. */
#define HELDOUT_BOUND 0.05
#define TWO_NODE_BOUND 0.10

static void test_calibration(void)
{
    for (size_t i = 0; i < G_N_ELEMENTS(chips); i++) {
        Summary c = run_table(chips[i].calib), a = run_table_on(chips[i].calib, chips[i].alt);
        CU_ASSERT_TRUE(c.n == 1 && a.n == 1 && c.fits == 1);
        CU_ASSERT_TRUE(c.worst <= 0.01);
        CU_ASSERT_TRUE(a.worst <= 0.01); /* the other split fits the row as well */
    }
}

static void test_held_out(void)
{
    for (size_t i = 0; i < G_N_ELEMENTS(chips); i++) {
        Summary h = run_table(chips[i].heldout);
        CU_ASSERT_TRUE(h.n == chips[i].heldout_rows && h.fits == h.n);
        CU_ASSERT_TRUE(h.worst <= HELDOUT_BOUND);
    }
    Summary t = run_table(TWO_NODES);
    CU_ASSERT_TRUE(t.n == 2 && t.fits == 2);
    CU_ASSERT_TRUE(t.worst <= TWO_NODE_BOUND);
}

static double param(const Accel *a, const char *key)
{
    for (int i = 0; i < accel_param_count(); i++)
        if (!strcmp(accel_param_key(i), key))
            return accel_param_get(a, i);
    return -1;
}

/* Each fitted FP8 ceiling sits below what hipBLASLt reaches alone on the
 * chip (AMD's MAF table) at 0.7-1 of it (A100's fitted in-step ceiling is
 * 0.83 of its microbenchmark, MI355X's 0.83); the BF16 ceiling follows it by
 * the MAF BF16/FP8 ratio. */
static void test_fit_is_physical(void)
{
    for (size_t i = 0; i < G_N_ELEMENTS(chips); i++) {
        Accel *a = steps_accel(chips[i].chip);
        CU_ASSERT_PTR_NOT_NULL_FATAL(a);
        double fp8 = param(a, "efficiency.gemm_eff_max.fp8"), bf16 = param(a, "efficiency.gemm_eff_max.bf16");
        printf("\n%s: fp8 ceiling %.3f = %.2f of AMD's MAF %.3f; bf16 %.3f\n", chips[i].chip, fp8,
               fp8 / chips[i].maf_fp8, chips[i].maf_fp8, bf16);
        CU_ASSERT_TRUE(fp8 > 0.7 * chips[i].maf_fp8 && fp8 < chips[i].maf_fp8);
        CU_ASSERT_DOUBLE_EQUAL(bf16, fp8 * chips[i].maf_bf16 / chips[i].maf_fp8, 0.002);
        accel_free(a);
    }
}

static void test_band(void)
{
    for (size_t i = 0; i < G_N_ELEMENTS(chips); i++) {
        printf("\nNeMo's H100 layouts on %s, twice: the errors against H100's numbers mean nothing, the shift between "
               "the runs is the point\n",
               chips[i].chip);
        Summary p = run_table_as(NEMO, chips[i].chip, chips[i].fabric, "fused"),
                q = run_table_as(NEMO, chips[i].alt, chips[i].fabric, "fused");
        CU_ASSERT_TRUE_FATAL(p.n == q.n && p.n >= 9);
        double w = 0;
        for (int k = 0; k < p.n; k++)
            w = fmax(w, fabs(q.row_logr[k] - p.row_logr[k]));
        printf("%s, the other split: largest |log step shift| over %d layouts %.3f\n", chips[i].chip, p.n, w);
        CU_ASSERT_TRUE(w > 0.005);
        double r10, r90;
        steps_band_widened(chips[i].chip, "h100-sxm", w, &r10, &r90);
        Summary s = run_table(chips[i].heldout);
        for (int k = 0; k < s.n; k++)
            CU_ASSERT_TRUE(s.logr[k] >= r10 && s.logr[k] <= r90);
        Summary t = run_table(TWO_NODES); /* row i is this chip's */
        CU_ASSERT_TRUE_FATAL(t.n == 2);
        CU_ASSERT_TRUE(t.row_logr[i] >= r10 && t.row_logr[i] <= r90);
    }
}

/* Llama 2 70B at 8192 tokens on one MI300X node with "recompute" RC. */
static cJSON *recompute_run(const char *rc, double *act)
{
    char *text = g_strdup_printf(
        "{\"accelerator\": \"mi300x\", \"topology\": \"mi300x-cluster\", \"nodes\": 1,\n"
        " \"model\": {\"name\": \"llama2-70b\", \"layers\": 80, \"hidden\": 8192, \"heads\": 64, \"kv_heads\": 8,"
        " \"ffn\": 28672, \"seq_len\": 8192, \"vocab\": 32000, \"gated_mlp\": true, \"tied_embeddings\": false,"
        " \"bias\": false, \"dropout\": false, \"norm\": \"rmsnorm\", \"position\": \"rotary\", \"source\": \"test\"},\n"
        " \"global_batch\": 8, \"micro_batch\": 1, \"precision\": \"fp8\", \"attention\": \"fused\",\n"
        " \"parallelism\": {\"dp\": 8, \"recompute\": %s}}",
        rc);
    GError *err = NULL;
    cJSON *res = step_run_text("recompute.json", text, &err);
    if (!res)
        printf("%s\n", err->message);
    CU_ASSERT_PTR_NOT_NULL_FATAL(res);
    g_clear_error(&err);
    g_free(text);
    *act = cJSON_GetObjectItem(cJSON_GetObjectItem(res, "memory_per_device_bytes"), "activations")->valuedouble;
    return res;
}

/* Block recomputation of 21 of 80 layers: 21/80 of full recomputation's
 * extra time and of the activations it saves; more layers than a chunk has
 * is an error at the key. */
static void test_recompute_layers(void)
{
    double an, af, ab;
    cJSON *n = recompute_run("\"none\"", &an), *f = recompute_run("\"full\"", &af),
          *b = recompute_run("\"full\", \"recompute_layers\": 21", &ab);
    double tn = cJSON_GetObjectItem(n, "step_time_s")->valuedouble, tf = cJSON_GetObjectItem(f, "step_time_s")->valuedouble,
           tb = cJSON_GetObjectItem(b, "step_time_s")->valuedouble;
    printf("\nrecompute none %.3f s, full %.3f s, 21 of 80 layers %.3f s; activations %.1f / %.1f / %.1f GiB\n", tn, tf,
           tb, an / 1073741824.0, af / 1073741824.0, ab / 1073741824.0);
    CU_ASSERT_TRUE(tf > tn && af < an);
    CU_ASSERT_DOUBLE_EQUAL((tb - tn) / (tf - tn), 21 / 80.0, 0.02);
    CU_ASSERT_DOUBLE_EQUAL((an - ab) / (an - af), 21 / 80.0, 0.001);
    CU_ASSERT_DOUBLE_EQUAL(cJSON_GetObjectItem(cJSON_GetObjectItem(b, "config"), "recompute_layers")->valuedouble, 21, 0);
    cJSON_Delete(n);
    cJSON_Delete(f);
    cJSON_Delete(b);
    GError *err = NULL;
    const char *bad = "{\"accelerator\": \"mi300x\", \"topology\": \"mi300x-cluster\", \"nodes\": 1, \"model\": \"llama2-70b\",\n"
                      " \"global_batch\": 8, \"parallelism\": {\"dp\": 4, \"pp\": 2, \"recompute\": \"full\",\n"
                      " \"recompute_layers\": 41}}";
    CU_ASSERT_PTR_NULL(step_run_text("bad.json", bad, &err));
    CU_ASSERT_TRUE(err && strstr(err->message, "bad.json:3:") && strstr(err->message, "40 layers"));
    if (err)
        printf("%s\n", err->message);
    g_clear_error(&err);
    const char *sel = "{\"accelerator\": \"mi300x\", \"topology\": \"mi300x-cluster\", \"nodes\": 1, \"model\": \"llama2-70b\",\n"
                      " \"global_batch\": 8, \"parallelism\": {\"dp\": 8, \"recompute\": \"selective\", \"recompute_layers\": 4}}";
    CU_ASSERT_PTR_NULL(step_run_text("sel.json", sel, &err));
    CU_ASSERT_TRUE(err && strstr(err->message, "\"recompute\": \"full\""));
    g_clear_error(&err);
}

static const TestCase tests[] = {
    {"MLPerf v5.1 Llama 2 70B LoRA on AMD's 8 x MI300X and 8 x MI325X, the calibration rows: within 1%",
     test_calibration},
    {"the same recipe on the other MI300X / MI325X submissions, held out: each within 5%, two nodes (cp 2) 10%",
     test_held_out},
    {"the fitted FP8 GEMM ceilings lie below AMD's measured Max-Achievable FLOPs", test_fit_is_physical},
    {"mi300x's and mi325x's bands: h100-sxm's held-out band widened by the GEMM/attention split's spread", test_band},
    {"recompute_layers: 21 of 80 layers cost 21/80 of full recomputation's time and activations",
     test_recompute_layers},
};

TEST_MAIN("steps_mi300x", tests)
