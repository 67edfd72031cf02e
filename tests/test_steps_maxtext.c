/* MaxText's Llama 3 70B on 128-2048 DGX H100 (NVIDIA dgxc-benchmarking
 * v25.04; tests/data/steps/maxtext-h100-llama3-70b.csv: provenance and the
 * mapping), FSDP over 128 or 256 GPUs with replicas across, BF16 and FP8,
 * held out, never fitted on: another framework (JAX/XLA) than the PyTorch
 * and Megatron-Core tables the h100-sxm preset was fitted and checked on.
 * Every row printed; asserted: every row predicted to fit (they ran on
 * 80 GB parts), the weak scaling flat as measured (the predicted step
 * within 3 % across 128-2048 GPUs at each precision; 2.9 % and 4.6 %
 * measured), and a regression guard at today's figures plus a margin
 * (median |tokens/s error| <= 18 %, max <= 25 %: 14.7 % and 20.2 % on
 * 2026-12-06).  Not a goal: the model is too slow on every row (BF16 by
 * 10-13 %, FP8 by 17-20 %) where the NeMo and llm-foundry H100 rows sit
 * within a few percent; the save_qkv_proj policy run as full
 * recomputation (which recomputes q, k, v too) explains a few points; the
 * rest (XLA's GEMM and fusion
 * rates above the step-level ceiling fitted on PyTorch FSDP, its FP8 casts
 * fused into neighbouring ops) is not modelled. */
#include "test_steps.h"

#define TABLE STEPS "maxtext-h100-llama3-70b.csv"

static void test_table(void)
{
    Summary s = run_table(TABLE);
    CU_ASSERT_TRUE(s.n == 10);
    CU_ASSERT_EQUAL(s.fits, s.n);
    CU_ASSERT_TRUE(s.median <= 0.18);
    CU_ASSERT_TRUE(s.worst <= 0.25);
    /* rows 1-5 BF16, 6-10 FP8, 128 to 2048 GPUs: the predicted step's
     * spread is log(pred/meas) less the measured step's */
    static const double meas[2][5] = {{15.563, 15.444, 15.519, 15.603, 15.898}, {9.074, 9.488, 9.244, 9.483, 9.339}};
    for (int p = 0; p < 2; p++) {
        double lo = INFINITY, hi = -INFINITY;
        for (int i = 0; i < 5; i++) {
            double pred = meas[p][i] * exp(s.row_logr[5 * p + i]);
            lo = fmin(lo, pred), hi = fmax(hi, pred);
        }
        printf("%s: predicted step %.3f-%.3f s over 128-2048 GPUs (spread %.1f%%)\n", p ? "FP8" : "BF16", lo, hi,
               100 * (hi / lo - 1));
        CU_ASSERT_TRUE(hi / lo - 1 < 0.03);
    }
}

static const TestCase tests[] = {
    {"MaxText Llama 3 70B on 128-2048 H100, FSDP, held out: every row with its error", test_table},
};

TEST_MAIN("steps_maxtext", tests)
