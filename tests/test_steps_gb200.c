/* GB200: the gb200 preset, which takes b200's fitted efficiencies (the same
 * Blackwell GPU; GB200's higher peaks at 1200 W are the preset's own),
 * against NeMo 25.04's DGX-GB200 FP8 pre-training table
 * (tests/data/steps/nemo-25.04-gb200-fp8.csv; provenance and mapping in its
 * header), never fitted on: GPT3-175B (TP/PP/VP on 128 GPUs), Llama 3 8B
 * (one 8-GPU slice), Llama 3 70B (Megatron-Core FSDP on 64), Mixtral 8x7B
 * (EP 8 on 64).  Every row printed; asserted: the transfer is exact (every
 * efficiency equal to b200's), median |tokens/s error| <= 10 % (the issue's
 * goal on unseen runs), max <= 25 %; both Blackwell presets' step band is the
 * p10/p90 of log(predicted / measured) over the six held-out Blackwell rows
 * (these four and b200's two, nemo-25.02-b200-fp8-heldout.csv).  Fit, a
 * guard (3 of 4 predicted to fit): Llama 3 70B under FSDP at mb 1 without
 * offloading or recomputation (NeMo's model_configs_gb200.csv) comes out at
 * 193 GiB with FP8 parameters (269 GiB before 2026-12-04), over GB200's 186
 * GiB by less than the model's 10 % fragmentation allowance (18 GiB). */
#include "test_steps.h"

static void test_transfer(void)
{
    Accel *g = steps_accel("gb200"), *b = steps_accel("b200");
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    for (int i = 0; i < accel_param_count(); i++)
        CU_ASSERT_DOUBLE_EQUAL(accel_param_get(g, i), accel_param_get(b, i), 1e-12);
    CU_ASSERT_TRUE(accel_peak_flops(g, ACCEL_BF16) > accel_peak_flops(b, ACCEL_BF16)); /* its own peaks */
    accel_free(g);
    accel_free(b);
}

static void test_table(void)
{
    Summary s = run_table(STEPS "nemo-25.04-gb200-fp8.csv");
    CU_ASSERT_TRUE(s.n == 4);
    CU_ASSERT_TRUE(s.fits >= 3);
    CU_ASSERT_TRUE(s.median <= 0.10);
    CU_ASSERT_TRUE(s.worst <= 0.25);
}

static void test_band(void)
{
    Summary s[2] = {run_table(STEPS "nemo-25.04-gb200-fp8.csv"), run_table(STEPS "nemo-25.02-b200-fp8-heldout.csv")};
    double p10, p90;
    band_of(s, 2, &p10, &p90);
    printf("%d held-out Blackwell rows: log(predicted/measured step) p10 %.3f p90 %.3f\n", s[0].n + s[1].n, p10, p90);
    const char *names[] = {"gb200", "b200"};
    for (int i = 0; i < 2; i++) {
        Accel *a = steps_accel(names[i]);
        CU_ASSERT_PTR_NOT_NULL_FATAL(a);
        double r10, r90;
        CU_ASSERT_TRUE(accel_band(a, &r10, &r90));
        CU_ASSERT_DOUBLE_EQUAL(r10, p10, 0.002);
        CU_ASSERT_DOUBLE_EQUAL(r90, p90, 0.002);
        accel_free(a);
    }
}

static const TestCase tests[] = {
    {"gb200 takes b200's fitted efficiencies, its own peaks", test_transfer},
    {"NeMo 25.04 GB200 FP8, held out: median <= 10%, max <= 25%", test_table},
    {"b200's and gb200's step band: the six held-out Blackwell rows' p10/p90", test_band},
};

TEST_MAIN("steps_gb200", tests)
