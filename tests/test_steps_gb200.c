/* GB200: the gb200 preset, which takes b200's fitted efficiencies (the same
 * Blackwell GPU; GB200's higher peaks at 1200 W are the preset's own),
 * against NeMo 25.04's DGX-GB200 FP8 pre-training table
 * (tests/data/steps/nemo-25.04-gb200-fp8.csv; provenance and mapping in its
 * header), never fitted on: GPT3-175B (TP/PP/VP on 128 GPUs), Llama 3 8B
 * (one 8-GPU slice), Llama 3 70B (Megatron-Core FSDP on 64), Mixtral 8x7B
 * (EP 8 on 64).  Every row printed; asserted: the transfer is exact (every
 * efficiency equal to b200's), median |tokens/s error| <= 10 % (the issue's
 * goal on unseen runs), max <= 25 %.  dgxc-benchmarking's v25.05.05 GB200
 * tables (tests/data/steps/dgxc-v25.05.05-gb200.csv: Llama 3.1 405B and
 * Nemotron-4 340B, TP/PP/CP/VP on 128-256 GPUs of NVL72 racks, the same
 * NeMo 25.04, BF16 and FP8), found later and never fitted on either: every
 * row printed, a guard at today's figures (median 15.6 %, max 24.5 %: the
 * model fast on every row, by more in FP8; NeMo's own table of that
 * container is not), every row predicted to fit.  Both Blackwell presets'
 * step band is the p10/p90 of log(predicted / measured) over the twenty
 * held-out Blackwell rows (these four, dgxc's fourteen and b200's two,
 * nemo-25.02-b200-fp8-heldout.csv).  Fit, a
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

static void test_dgxc(void)
{
    Summary s = run_table(STEPS "dgxc-v25.05.05-gb200.csv");
    CU_ASSERT_EQUAL(s.n, 14);
    CU_ASSERT_EQUAL(s.fits, s.n);
    CU_ASSERT_TRUE(s.median <= 0.18); /* a guard: 15.6 % and 24.5 % on 2026-12-07 */
    CU_ASSERT_TRUE(s.worst <= 0.27);
    CU_ASSERT_TRUE(s.logr[s.n - 1] < 0); /* every row faster than measured */
}

static void test_band(void)
{
    Summary s[3] = {run_table(STEPS "nemo-25.04-gb200-fp8.csv"), run_table(STEPS "nemo-25.02-b200-fp8-heldout.csv"),
                    run_table(STEPS "dgxc-v25.05.05-gb200.csv")};
    double p10, p90;
    band_of(s, 3, &p10, &p90);
    printf("%d held-out Blackwell rows: log(predicted/measured step) p10 %.3f p90 %.3f\n", s[0].n + s[1].n + s[2].n, p10,
           p90);
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
    {"dgxc-benchmarking v25.05.05 GB200, held out: every row with its error", test_dgxc},
    {"b200's and gb200's step band: the twenty held-out Blackwell rows' p10/p90", test_band},
};

TEST_MAIN("steps_gb200", tests)
