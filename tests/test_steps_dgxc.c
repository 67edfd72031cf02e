/* NVIDIA's DGX Cloud benchmarking recipes on DGX H100 (dgxc-benchmarking,
 * three releases of Llama 3.1 8B / 70B / 405B and two of GPT-3 175B, 8 to
 * 2304 GPUs, and v25.05.05's Llama 3.1 405B and Nemotron-4 15B / 340B, Megatron-Core through NeMo with TP, PP, CP, VP, the
 * distributed optimizer, BF16 and FP8), held out for h100-sxm: found after
 * the preset and the step model were written, never fitted on
 * (tests/data/steps/dgxc-*-h100-*.csv: provenance, the mapping, the rows
 * left out).  Every row printed.  Asserted:
 *  - a regression guard per table at today's figures plus a margin
 *    (median |tokens/s error| <= 7 %, the max per table), not a goal and
 *    not a fit, and every row, all of which ran, predicted to fit;
 *  - over the 128 rows, the median within 6 % and most rows inside
 *    h100-sxm's held-out band (p10..p90 of log(predicted / measured) step);
 *  - the attention the recipes name: the Llama rows of v24.11.1, whose
 *    configure.sh exports NVTE_FUSED_ATTN=1 (cuDNN), are nearer their
 *    measured steps with cuDNN's rates ("fused") than with FlashAttention-2's
 *    ("fused-v2"). */
#include "test_steps.h"

/* Each table's rows and its guard on the largest |error| (today's plus a
 * margin: 7.7, 6.3, 11.0, 18.9, 6.4 and 4.8 % on 2026-12-07). */
static const struct {
    const char *file;
    int rows;
    double worst;
} tables[] = {
    {STEPS "dgxc-v24.11.1-h100-llama3.1.csv", 34, 0.10}, {STEPS "dgxc-v25.02-h100-llama3.1.csv", 34, 0.10},
    {STEPS "dgxc-v25.04-h100-llama3.1.csv", 34, 0.14},   {STEPS "dgxc-v24.11.1-h100-gpt3-175b.csv", 10, 0.22},
    {STEPS "dgxc-v25.04-h100-gpt3-175b.csv", 10, 0.10},   {STEPS "dgxc-v25.05.05-h100.csv", 6, 0.08},
};
#define NTABLES (int)(sizeof tables / sizeof tables[0])

static int cmp_abs(const void *a, const void *b)
{
    double x = fabs(*(const double *)a), y = fabs(*(const double *)b);
    return (x > y) - (x < y);
}

static void test_tables(void)
{
    double all[256];
    int n = 0;
    for (int t = 0; t < NTABLES; t++) {
        Summary s = run_table(tables[t].file);
        CU_ASSERT_EQUAL(s.n, tables[t].rows);
        CU_ASSERT_EQUAL(s.fits, s.n);
        CU_ASSERT_TRUE(s.median <= 0.07);
        CU_ASSERT_TRUE(s.worst <= tables[t].worst);
        for (int i = 0; i < s.n && n < 256; i++)
            all[n++] = s.row_logr[i];
    }
    CU_ASSERT_EQUAL_FATAL(n, 128);
    Accel *h = steps_accel("h100-sxm");
    CU_ASSERT_PTR_NOT_NULL_FATAL(h);
    double b10, b90;
    CU_ASSERT_TRUE(accel_band(h, &b10, &b90));
    accel_free(h);
    int inside = 0;
    double err[256];
    for (int i = 0; i < n; i++) {
        inside += all[i] >= b10 && all[i] <= b90;
        err[i] = expm1(-all[i]); /* tokens/s: predicted / measured - 1 */
    }
    qsort(err, (size_t)n, sizeof err[0], cmp_abs);
    double median = (fabs(err[n / 2 - 1]) + fabs(err[n / 2])) / 2;
    printf("\nall %d rows: median |error| %.1f%%, max %.1f%%; %d inside h100-sxm's band [%.3f, %.3f]\n", n,
           100 * median, 100 * fabs(err[n - 1]), inside, b10, b90);
    CU_ASSERT_TRUE(median <= 0.06);
    CU_ASSERT_TRUE(inside >= n * 3 / 4);
}

/* v24.11.1's Llama recipes name cuDNN's attention (NVTE_FUSED_ATTN=1,
 * NVTE_FLASH_ATTN=0): run with FlashAttention-2's rates instead, the rows
 * come out further from their measured steps. */
static void test_attention(void)
{
    Summary cudnn = run_table(tables[0].file), fa2 = run_table_with(tables[0].file, NULL, "fused-v2");
    CU_ASSERT_TRUE(cudnn.median < fa2.median);
    CU_ASSERT_TRUE(steps_mean_logr(&fa2) > steps_mean_logr(&cudnn)); /* FlashAttention-2 slower */
}

static const TestCase tests[] = {
    {"dgxc-benchmarking's DGX H100 tables, held out: every row with its error", test_tables},
    {"the Llama recipes' cuDNN attention against FlashAttention-2's rates", test_attention},
};

TEST_MAIN("steps_dgxc", tests)
