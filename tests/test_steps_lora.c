/* LoRA fine-tuning against MLPerf Training v5.1's Llama 2 70B LoRA runs
 * (tests/data/steps/mlperf-5.1-{h200,b200,mi355x}-llama2-70b-lora.csv;
 * provenance, mapping and the per-run medians in their headers and in
 * mlperf-5.1-llama2-70b-lora.source), every row printed.
 *
 * Nothing here is fitted: each chip's efficiencies were calibrated on
 * pre-training (h200: h100-sxm's llm-foundry fit; b200: NeMo 25.02's two
 * rows; mi355x: AMD's Llama 3.1 8B row), and the LoRA step is the model's
 * physics (models/finetune.h): the frozen base's GEMMs forward and data
 * gradient only, the adapters' small GEMMs and dropout, no base gradients
 * or optimizer state.  These are held-out checks of a workload the chips
 * were not calibrated on.
 *
 * Each row's recipe switches come from the run's own printed config (or its
 * config_*.sh): the layout, tp_comm_overlap (ub_tp_comm_overlap),
 * activation_func_fp8_input_store (saved activations only) and
 * fp8_dot_product_attention (saved activations, and the kernel at the
 * preset's FP8 fractions where public: H200 the forward only,
 * fused_attention.fp8_fwd from H100/H200 kernel figures, the backward at the
 * 16-bit rate; B200 forward and backward, fp8_fwd / fp8_bwd from cuDNN
 * 9.13.1's published B200 SDPA benchmark, the cuDNN these runs installed
 * with NVTE_FP8_DPA_BWD 1).
 *
 * Asserted (the held-out goal is 10-15 %): H200, B200 and MI355X,
 * every row within 10 %; B200's median within 8 % (6.4 %: the 1-node rows
 * 5.5-9.3 % slow, 13-16 % at the 16-bit attention rate; the attention is
 * ~21 % of the single-node step there), on a preset whose GEMM efficiencies
 * two pre-training rows fitted weakly (+-34 %).  NVIDIA measured this very
 * workload on an 8-GPU H200 node 1.15x / 1.11x = 1.036x faster with cuDNN's
 * FP8 attention than with its BF16 one ("Accelerating Transformers with
 * NVIDIA cuDNN 9", NVIDIA technical blog,
 * developer.nvidia.com/blog/accelerating-transformers-with-nvidia-cudnn-9,
 * Table 1), where the model's FP8 forward alone gives 1.016x on the H200
 * row that ran it, Dell XE9680L: -4.5 % (-6.0 % at the 16-bit rate)
 * against +1.5..+3.2 % for the 8-GPU rows without.  Every row, all of which ran,
 * predicted to fit (B200 tp 1: 175 of 180 GiB).  The model's FLOPs per
 * sample within 10 % of the recipe's own MODEL_TFLOP_PER_SAMPLE 2598 (an
 * independent count: config_common.sh of every NVIDIA-derived
 * implementation; the model counts the attention core as dense s x s
 * products, the recipe its own way). */
#include "test_steps.h"

#define H200 STEPS "mlperf-5.1-h200-llama2-70b-lora.csv"
#define B200 STEPS "mlperf-5.1-b200-llama2-70b-lora.csv"
#define MI355X STEPS "mlperf-5.1-mi355x-llama2-70b-lora.csv"

static void test_h200(void)
{
    Summary s = run_table(H200);
    CU_ASSERT_TRUE(s.n == 8);
    CU_ASSERT_TRUE(s.worst <= 0.10);
    CU_ASSERT_TRUE(s.fits == s.n);
}

/* The earlier rounds' H200 runs of the same benchmark (MLPerf Training
 * v5.0, v4.1, v4.0: tests/data/steps/mlperf-{5.0,4.1,4.0}-h200-llama2-70b-
 * lora.csv, NVIDIA's NeMo 1 implementation and its derivatives), held out
 * too: the one- to four-node rows within 10 % (-1.8 % to +9.8 %); the two
 * 64-node rows (512 GPUs, one sample per data-parallel rank a step) the
 * model runs far too fast, Oracle's without CUDA graphs +75.5 %, Azure's with
 * them +26.7 % (1.39x Oracle's throughput on the same layout): a cost per
 * step that the model does not have. */
static void test_h200_earlier(void)
{
    static const char *const rounds[] = {STEPS "mlperf-5.0-h200-llama2-70b-lora.csv",
                                         STEPS "mlperf-4.1-h200-llama2-70b-lora.csv",
                                         STEPS "mlperf-4.0-h200-llama2-70b-lora.csv"};
    static const int rows[] = {11, 8, 1};
    int small = 0, big = 0;
    for (int k = 0; k < 3; k++) {
        Summary s = run_table(rounds[k]);
        CU_ASSERT_EQUAL(s.n, rows[k]);
        CU_ASSERT_EQUAL(s.fits, s.n);
        CU_ASSERT_TRUE(s.median <= 0.06); /* a guard: 5.4 %, 1.6 %, 1.6 % on 2026-12-07 */
        for (int i = 0; i < s.n; i++) {
            double e = fabs(expm1(-s.row_logr[i]));
            if (e <= 0.10)
                small++;
            else
                big += e > 0.25; /* the 64-node rows */
        }
    }
    CU_ASSERT_EQUAL(small, 18);
    CU_ASSERT_EQUAL(big, 2);
}

static void test_b200(void)
{
    Summary s = run_table(B200);
    CU_ASSERT_TRUE(s.n == 17);
    CU_ASSERT_TRUE(s.worst <= 0.10);
    CU_ASSERT_TRUE(s.median <= 0.08);
    CU_ASSERT_TRUE(s.fits == s.n);
}

static void test_mi355x(void)
{
    Summary s = run_table(MI355X);
    CU_ASSERT_TRUE(s.n == 4);
    CU_ASSERT_TRUE(s.worst <= 0.10);
    CU_ASSERT_TRUE(s.fits == s.n);
}

/* The recipe's configs state MODEL_TFLOP_PER_SAMPLE=2598 (the MFU figure
 * NVIDIA's callbacks log): the model's count for one 8192-token sample. */
static void test_flops_per_sample(void)
{
    gchar *text = NULL;
    CU_ASSERT_FATAL(g_file_get_contents(STEPS "mlperf-5.1-llama2-70b-lora.json", &text, NULL, NULL));
    GError *err = NULL;
    cJSON *r = step_run_text("mlperf-5.1-llama2-70b-lora.json", text, &err);
    g_free(text);
    if (!r)
        printf("%s\n", err->message);
    g_clear_error(&err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    double per = cJSON_GetObjectItem(r, "model_flops_per_step")->valuedouble / 8 / 1e12;
    printf("\nmodel FLOPs per sample %.0f TFLOP, the recipe's MODEL_TFLOP_PER_SAMPLE 2598 (%+.1f%%)\n", per,
           100 * (per / 2598 - 1));
    CU_ASSERT_TRUE(fabs(per / 2598 - 1) <= 0.10);
    cJSON_Delete(r);
}

static const TestCase tests[] = {
    {"MLPerf v5.1 Llama 2 70B LoRA on H200 (1-8 nodes), held out: every row within 10%, all fit", test_h200},
    {"MLPerf v5.0, v4.1, v4.0 on H200, held out: 18 of 20 rows within 10%, the two 64-node rows far too fast", test_h200_earlier},
    {"the same on B200 (1-16 nodes), held out: every row within 10%, median 8% (FP8 attention at cuDNN 9.13.1's B200 rates), all fit", test_b200},
    {"the same on MI355X (AMD, Dell, GigaComputing, Supermicro), held out: every row within 10%, all fit", test_mi355x},
    {"the model's FLOPs per sample against the recipe's own count", test_flops_per_sample},
};

TEST_MAIN("steps_lora", tests)
