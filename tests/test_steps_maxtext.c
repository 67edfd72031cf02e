/* MaxText (JAX/XLA) on DGX H100, NVIDIA dgxc-benchmarking's recipes, held
 * out, never fitted on: another framework than the PyTorch and
 * Megatron-Core tables the h100-sxm preset was fitted and checked on (the
 * "framework": "jax" model, 2026-12-07, was then written with the MaxText
 * tables in view: since then they are checks in view; Paxml's and the
 * Google Cloud recipes' rows came after it).
 * Llama 3 70B on 128-2048 GPUs (v25.04, remat save_qkv_proj) and Llama 2
 * 70B on 64-2048 GPUs (v24.11.1, remat custom), BF16 and FP8, FSDP over 64
 * to 256 GPUs with replicas across (tests/data/steps/maxtext-h100-*.csv:
 * provenance and the mapping; the remat policies as "recompute_keep").
 * Every row printed; asserted, as guards at today's figures plus a margin,
 * not goals and not fits:
 *  - Llama 3: every row predicted to fit, median |tokens/s error| <= 13 %,
 *    max <= 17 % (11.5 % and 15.6 % on 2026-12-07), the model too slow on
 *    every row, and its step flat across 128-2048 GPUs (within 3 %; 2.9 %
 *    and 4.6 % measured).  As one XLA program ("framework": "jax", in
 *    94 % of HBM as the recipe's XLA_PYTHON_CLIENT_MEM_FRACTION): no
 *    caching allocator's holes, the embedding not held gathered, each
 *    weight's gradient reduce-scattered as it is made, 69.9 GiB; PyTorch's
 *    terms gave 81.0 GiB, 8 of 10 rows predicted not to fit;
 *  - Llama 2 (4096 tokens): every row predicted to fit, median <= 10 %,
 *    max <= 17 % (7.8 % and 14.6 %).  Its FP8 steps grow 17 % from 64 to
 *    2048 GPUs where the model's stay flat (FSDP's gathers hidden).
 * The model is slow on every Llama 3 row (BF16 by 8-11 %, FP8 by 12-16 % of
 * tokens/s; FP8 by 15-19 % before XLA's fused casts): XLA's GEMM and
 * fusion rates above the step-level ceiling fitted on PyTorch FSDP; not
 * modelled.
 *
 * Paxml's GPT-3 5B (BF16, FP8) and 175B (FP8) on 16-2048 H100 (the same
 * benchmark suite's v24.11.1, a JAX container of March 2024 with
 * Transformer Engine's layers and FP8 casts; tests/data/steps/
 * paxml-h100-gpt.csv), added after the model for "jax" was written: the
 * model is fast on every row, the other way from MaxText's, median 19.7 %,
 * max 30.4 % on 2026-12-07 (guards: <= 22 %, <= 33 %, every row fast);
 * the 5B rows fit, the 175B rows (the recipe's q/k/v and output
 * projections kept: 45 GiB of activations, 80.2 GiB in all) are predicted
 * not to, where they ran in 90 % of 80 GB.
 *
 * MaxText's own recipes on Google Cloud (AI-Hypercomputer/gpu-recipes: one
 * logged step each, Llama 2 7B on 256 H100 of A3 Mega over TCPXO, Llama
 * 3.1 70B on 256 H200 of A3 Ultra) and JAX-Toolbox's Llama 2 7B on one
 * DGX H100 (tests/data/steps/maxtext-gpu-recipes.csv), their remat policies
 * with the attention's "context" kept (core_attn): +3.7 %, -6.1 % and
 * -1.9 % on 2026-12-07, all predicted to fit (guard: <= 8 %).
 *
 * The 38 rows' spread, p10 and p90 of log(predicted / measured step), is
 * the compute band a jax step carries (models/step_band.c): checked to
 * match a run's band within 0.005. */
#include "test_steps.h"

#define LLAMA3 STEPS "maxtext-h100-llama3-70b.csv"
#define LLAMA2 STEPS "maxtext-h100-llama2-70b.csv"
#define PAXML STEPS "paxml-h100-gpt.csv"
#define RECIPES STEPS "maxtext-gpu-recipes.csv"

static Summary tables[4]; /* each table's rows, for the JAX band */

/* The predicted step's spread over the rows FIRST..FIRST+N-1 (their
 * measured steps MEAS), printed as LABEL. */
static double spread(const Summary *s, int first, int n, const double *meas, const char *label)
{
    double lo = INFINITY, hi = -INFINITY, mlo = INFINITY, mhi = -INFINITY;
    for (int i = 0; i < n; i++) {
        double pred = meas[i] * exp(s->row_logr[first + i]);
        lo = fmin(lo, pred), hi = fmax(hi, pred), mlo = fmin(mlo, meas[i]), mhi = fmax(mhi, meas[i]);
    }
    printf("%s: predicted step %.3f-%.3f s (spread %.1f%%), measured %.3f-%.3f s (%.1f%%)\n", label, lo, hi,
           100 * (hi / lo - 1), mlo, mhi, 100 * (mhi / mlo - 1));
    return hi / lo - 1;
}

/* The Llama 3 scenario (128 GPUs) under FRAMEWORK: its total GiB, whether it fits. */
static double llama3_gib(const char *framework, bool *fits)
{
    gchar *text = NULL;
    CU_ASSERT_FATAL(g_file_get_contents(STEPS "maxtext-h100-llama3-70b.json", &text, NULL, NULL));
    cJSON *root = cJSON_Parse(text);
    g_free(text);
    set_key(root, "framework", framework);
    cJSON *res = steps_run_scenario("maxtext-h100-llama3-70b.json", root, framework);
    double gib = cJSON_GetObjectItem(cJSON_GetObjectItem(res, "memory_per_device_bytes"), "total")->valuedouble /
                 (1024.0 * 1024 * 1024);
    *fits = cJSON_IsTrue(cJSON_GetObjectItem(res, "fits"));
    cJSON_Delete(res);
    cJSON_Delete(root);
    return gib;
}

static void test_llama3(void)
{
    Summary s = tables[0] = run_table(LLAMA3);
    CU_ASSERT_TRUE(s.n == 10);
    CU_ASSERT_EQUAL(s.fits, s.n);
    CU_ASSERT_TRUE(s.median <= 0.13);
    CU_ASSERT_TRUE(s.worst <= 0.17);
    CU_ASSERT_TRUE(s.p10 > 0); /* too slow on every row */
    static const double bf16[5] = {15.563, 15.444, 15.519, 15.603, 15.898}, fp8[5] = {9.074, 9.488, 9.244, 9.483, 9.339};
    CU_ASSERT_TRUE(spread(&s, 0, 5, bf16, "Llama 3 BF16") < 0.03);
    CU_ASSERT_TRUE(spread(&s, 5, 5, fp8, "Llama 3 FP8") < 0.03);
    bool fx, fp;
    double jax = llama3_gib("jax", &fx), pt = llama3_gib("pytorch", &fp);
    printf("Llama 3 BF16, 128 GPUs: %.2f GiB as one XLA program (%s), %.2f GiB with PyTorch's terms (%s)\n", jax,
           fx ? "fits" : "does not fit", pt, fp ? "fits" : "does not fit");
    CU_ASSERT_TRUE(fx && !fp);
}

static void test_llama2(void)
{
    Summary s = tables[1] = run_table(LLAMA2);
    CU_ASSERT_TRUE(s.n == 12);
    CU_ASSERT_EQUAL(s.fits, s.n);
    CU_ASSERT_TRUE(s.median <= 0.10);
    CU_ASSERT_TRUE(s.worst <= 0.17);
    static const double bf16[6] = {6.999, 7.072, 7.153, 7.091, 7.084, 7.066}, fp8[6] = {4.324, 4.556, 4.959, 5.043, 5.062, 4.93};
    spread(&s, 0, 6, bf16, "Llama 2 BF16");
    spread(&s, 6, 6, fp8, "Llama 2 FP8");
}

static void test_paxml(void)
{
    Summary s = tables[2] = run_table(PAXML);
    CU_ASSERT_TRUE(s.n == 13);
    CU_ASSERT_TRUE(s.fits >= 8); /* the 5B rows; not the 175B ones (above) */
    CU_ASSERT_TRUE(s.median <= 0.22);
    CU_ASSERT_TRUE(s.worst <= 0.33);
    CU_ASSERT_TRUE(s.p90 < 0); /* too fast on every row */
    static const double bf16[4] = {0.634, 0.639, 0.643, 0.651}, fp8[4] = {0.47, 0.48, 0.48, 0.5},
                        gpt175b[5] = {7.47, 7.58, 7.60, 7.89, 8.02};
    spread(&s, 0, 4, bf16, "GPT-3 5B BF16");
    spread(&s, 4, 4, fp8, "GPT-3 5B FP8");
    spread(&s, 8, 5, gpt175b, "GPT-3 175B FP8");
}

static void test_recipes(void)
{
    Summary s = tables[3] = run_table(RECIPES);
    CU_ASSERT_TRUE(s.n == 3);
    CU_ASSERT_EQUAL(s.fits, s.n);
    CU_ASSERT_TRUE(s.worst <= 0.08);
}

/* The compute band a jax step carries (models/step_band.c): the p10 and p90
 * of log(predicted / measured step) over the four tables' rows, as a run
 * reports it. */
static void test_band(void)
{
    double all[4 * 128];
    int n = 0;
    for (int t = 0; t < 4; t++)
        for (int i = 0; i < tables[t].n; i++)
            all[n++] = tables[t].row_logr[i];
    qsort(all, (size_t)n, sizeof *all, cmp_double);
    double p10 = quantile(all, n, 0.1), p90 = quantile(all, n, 0.9);
    gchar *text = NULL;
    CU_ASSERT_FATAL(g_file_get_contents(STEPS "maxtext-h100-llama3-70b.json", &text, NULL, NULL));
    cJSON *root = cJSON_Parse(text);
    g_free(text);
    cJSON *res = steps_run_scenario("maxtext-h100-llama3-70b.json", root, "band");
    const cJSON *r = cJSON_GetObjectItem(cJSON_GetObjectItem(res, "uncertainty"), "compute_log_residual");
    printf("\n%d JAX rows: log(predicted/measured step) p10 %.3f p90 %.3f; a jax step's compute band %.3f .. %.3f\n", n,
           p10, p90, cJSON_GetArrayItem(r, 0)->valuedouble, cJSON_GetArrayItem(r, 1)->valuedouble);
    CU_ASSERT_EQUAL(n, 38);
    CU_ASSERT_DOUBLE_EQUAL(cJSON_GetArrayItem(r, 0)->valuedouble, p10, 0.005);
    CU_ASSERT_DOUBLE_EQUAL(cJSON_GetArrayItem(r, 1)->valuedouble, p90, 0.005);
    cJSON_Delete(res);
    cJSON_Delete(root);
}

static const TestCase tests[] = {
    {"MaxText Llama 3 70B on 128-2048 H100, FSDP, held out: every row with its error", test_llama3},
    {"MaxText Llama 2 70B on 64-2048 H100, FSDP, held out: every row with its error", test_llama2},
    {"Paxml GPT-3 5B and 175B on 16-2048 H100, FSDP, held out: every row with its error", test_paxml},
    {"MaxText on Google Cloud's A3 Mega (H100), A3 Ultra (H200) and a DGX H100, held out: every row with its error",
     test_recipes},
    {"the JAX tables' spread: a jax step's compute band", test_band},
};

TEST_MAIN("steps_maxtext", tests)
