/* Narayanan et al. 2021 ("Efficient Large-Scale Language Model Training on
 * GPU Clusters Using Megatron-LM", SC21), Table 1: achieved teraFLOP/s per
 * GPU of GPT models from 1.7 B to 1 T parameters on 32 to 3072 A100 GPUs
 * (Selene: DGX A100 80 GB nodes, 8 HDR InfiniBand NICs each).
 *
 * Each row is run as a scenario on dgx-a100-cluster (nodes = GPUs / 8) with
 * the row's t, p, d and batch, mixed-precision fp16 Adam, full activation
 * recomputation, micro-batch 1, and the per-GPU TFLOP/s is computed as the
 * paper does (eq. 3 with recomputation, workload_achieved_flops) from the
 * simulated step time.  What is NOT modelled: the interleaved schedule the
 * paper used for some runs (we run non-interleaved 1F1B, whose bubble is
 * larger), the paper's micro-batch sizes (not in the table; 1 is assumed),
 * data loading and logging.  Attention is "unfused": the paper predates
 * FlashAttention (Megatron's fused softmax still writes the s x s scores).  Every row must be within 10 % (the issue asks 15 %; A100 gemm_eff_max is calibrated on this table, see models/README.md). */
#include "step.h"
#include "test_main.h"
#include "workload.h"

#include <math.h>
#include <stdio.h>

typedef struct {
    const char *model;
    int t, p, gpus, batch;
    double tflops; /* achieved per GPU, as printed */
} Row;

/* Table 1 as printed: parameters (B), heads, hidden, layers are in the
 * workload presets megatron-gpt-*; here t, p, GPUs, batch and TFLOP/s. */
static const Row rows[] = {
    {"megatron-gpt-1.7b", 1, 1, 32, 512, 137},     {"megatron-gpt-3.6b", 2, 1, 64, 512, 138},
    {"megatron-gpt-7.5b", 4, 1, 128, 512, 142},    {"megatron-gpt-18.4b", 8, 1, 256, 1024, 135},
    {"megatron-gpt-39.1b", 8, 2, 512, 1536, 138},  {"megatron-gpt-76.1b", 8, 4, 1024, 1792, 140},
    {"megatron-gpt-145.6b", 8, 8, 1536, 2304, 148}, {"megatron-gpt-310.1b", 8, 16, 1920, 2160, 155},
    {"megatron-gpt-529.6b", 8, 35, 2520, 2520, 163}, {"megatron-gpt-1t", 8, 64, 3072, 3072, 163},
};

static char *scenario(const Row *r)
{
    return g_strdup_printf("{\"accelerator\": \"a100-80gb\", \"topology\": \"dgx-a100-cluster\", \"nodes\": %d,\n"
                           " \"model\": \"%s\", \"global_batch\": %d, \"micro_batch\": 1,\n"
                           " \"precision\": \"fp16\", \"optimizer\": \"adam\", \"attention\": \"unfused\",\n"
                           " \"parallelism\": {\"dp\": %d, \"tp\": %d, \"pp\": %d, \"weight_update\": \"replicated\",\n"
                           "   \"recompute\": \"full\", \"schedule\": \"1f1b\"}}\n",
                           r->gpus / 8, r->model, r->batch, r->gpus / (r->t * r->p), r->t, r->p);
}

static void test_table1(void)
{
    printf("\n%-22s %4s %4s %5s %6s %9s %9s %7s\n", "model", "t", "p", "GPUs", "batch", "paper", "model",
           "error");
    for (size_t i = 0; i < G_N_ELEMENTS(rows); i++) {
        const Row *r = &rows[i];
        char *text = scenario(r);
        GError *err = NULL;
        cJSON *res = step_run_text(r->model, text, &err);
        g_free(text);
        if (!res) {
            printf("%s: %s\n", r->model, err->message);
            g_clear_error(&err);
        }
        CU_ASSERT_PTR_NOT_NULL_FATAL(res);
        double step = cJSON_GetObjectItem(res, "step_time_s")->valuedouble;
        Workload *w = workload_load(r->model, &err);
        CU_ASSERT_PTR_NOT_NULL_FATAL(w);
        double tf = workload_achieved_flops(w, r->batch, true, step, r->gpus) / 1e12;
        double e = tf / r->tflops - 1;
        printf("%-22s %4d %4d %5d %6d %9.0f %9.1f %+6.1f%%\n", r->model, r->t, r->p, r->gpus, r->batch, r->tflops,
               tf, 100 * e);
        CU_ASSERT_TRUE(fabs(e) <= 0.10);
        /* the run's own figure counts the same FLOPs (GEMM sums, within 2 %) */
        double own = cJSON_GetObjectItem(res, "flops_per_device")->valuedouble / 1e12; /* SI: FLOP/s */
        CU_ASSERT_TRUE(fabs(own / tf - 1) < 0.02);
        workload_free(w);
        cJSON_Delete(res);
    }
}

static const TestCase tests[] = {
    {"Narayanan et al. 2021 Table 1 within 10%", test_table1},
};
TEST_MAIN("megatron", tests)
