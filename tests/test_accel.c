#include "accel.h"
#include "test_main.h"

#include <CUnit/Basic.h>
#include <math.h>
#include <string.h>

static const char *const presets[] = {"v100-sxm2-16gb", "v100-sxm2-32gb", "a100-40gb", "a100-80gb", "h100-sxm",
                                      "h200", "mi300x", "tpu-v3", "tpu-v4"};

static Accel *load(const char *name)
{
    GError *err = NULL;
    Accel *a = accel_load(name, &err);
    if (!a)
        fprintf(stderr, "%s: %s\n", name, err->message);
    g_clear_error(&err);
    return a;
}

static void test_all_presets_load(void)
{
    for (size_t i = 0; i < G_N_ELEMENTS(presets); i++) {
        Accel *a = load(presets[i]);
        CU_ASSERT_PTR_NOT_NULL_FATAL(a);
        CU_ASSERT_STRING_EQUAL(accel_name(a), presets[i]);
        CU_ASSERT_TRUE(accel_hbm_bytes(a) > 8e9);
        CU_ASSERT_TRUE(accel_hbm_bandwidth(a) > 5e11);
        CU_ASSERT_TRUE(accel_has_dtype(a, ACCEL_BF16) || accel_has_dtype(a, ACCEL_FP16));
        accel_free(a);
    }
}

/* The datasheet numbers the brief quotes, as the presets hold them. */
static void test_datasheet_numbers(void)
{
    Accel *a = load("a100-80gb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_DOUBLE_EQUAL(accel_peak_flops(a, ACCEL_BF16), 312e12, 1);
    CU_ASSERT_DOUBLE_EQUAL(accel_peak_flops(a, ACCEL_FP32), 19.5e12, 1);
    CU_ASSERT_DOUBLE_EQUAL(accel_peak_flops(a, ACCEL_TF32), 156e12, 1);
    CU_ASSERT_DOUBLE_EQUAL(accel_hbm_bandwidth(a), 2039e9, 1);
    CU_ASSERT_DOUBLE_EQUAL(accel_hbm_bytes(a), 80.0 * 1024 * 1024 * 1024, 1);
    CU_ASSERT_FALSE(accel_has_dtype(a, ACCEL_FP8));
    CU_ASSERT_EQUAL(accel_peak_flops(a, ACCEL_FP8), 0);
    CU_ASSERT_TRUE(isinf(accel_gemm_time(a, ACCEL_FP8, 1024, 1024, 1024)));
    accel_free(a);

    a = load("a100-40gb");
    CU_ASSERT_DOUBLE_EQUAL(accel_hbm_bandwidth(a), 1555e9, 1);
    accel_free(a);
    a = load("h100-sxm");
    CU_ASSERT_DOUBLE_EQUAL(accel_peak_flops(a, ACCEL_BF16) / 1e12, 989, 1);
    CU_ASSERT_DOUBLE_EQUAL(accel_hbm_bandwidth(a), 3.35e12, 1);
    CU_ASSERT_TRUE(accel_has_dtype(a, ACCEL_FP8));
    accel_free(a);
    a = load("h200");
    CU_ASSERT_DOUBLE_EQUAL(accel_hbm_bandwidth(a), 4.8e12, 1);
    CU_ASSERT_DOUBLE_EQUAL(accel_hbm_bytes(a) / (1024.0 * 1024 * 1024), 141, 1e-9);
    accel_free(a);
    a = load("v100-sxm2-32gb");
    CU_ASSERT_DOUBLE_EQUAL(accel_peak_flops(a, ACCEL_FP16), 125e12, 1);
    CU_ASSERT_DOUBLE_EQUAL(accel_peak_flops(a, ACCEL_FP32), 15.7e12, 1);
    CU_ASSERT_FALSE(accel_has_dtype(a, ACCEL_BF16));
    CU_ASSERT_DOUBLE_EQUAL(accel_hbm_bandwidth(a), 900e9, 1);
    accel_free(a);
    a = load("mi300x");
    CU_ASSERT_DOUBLE_EQUAL(accel_peak_flops(a, ACCEL_BF16), 1307.4e12, 1);
    CU_ASSERT_DOUBLE_EQUAL(accel_hbm_bandwidth(a), 5.3e12, 1);
    accel_free(a);
    a = load("tpu-v3");
    CU_ASSERT_DOUBLE_EQUAL(accel_peak_flops(a, ACCEL_BF16), 123e12, 1);
    CU_ASSERT_DOUBLE_EQUAL(accel_hbm_bandwidth(a), 900e9, 1);
    accel_free(a);
    a = load("tpu-v4");
    CU_ASSERT_DOUBLE_EQUAL(accel_peak_flops(a, ACCEL_BF16), 275e12, 1);
    CU_ASSERT_DOUBLE_EQUAL(accel_hbm_bandwidth(a), 1200e9, 1);
    accel_free(a);
}

/* Large bf16 GEMMs on A100: ~70-85 % of peak (public cuBLAS benchmarks);
 * small ones much less; a GEMV is memory-bound. */
static void test_gemm_efficiency_curve(void)
{
    Accel *a = load("a100-80gb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    double big = accel_gemm_efficiency(a, ACCEL_BF16, 8192, 8192, 8192);
    CU_ASSERT_TRUE(big >= 0.70 && big <= 0.85);
    double t = accel_gemm_time(a, ACCEL_BF16, 8192, 8192, 8192);
    double achieved = 2.0 * 8192 * 8192 * 8192 / t;
    CU_ASSERT_DOUBLE_EQUAL(achieved / 312e12, big, 1e-12);

    /* Efficiency rises monotonically with size and saturates below eff_max. */
    double prev = 0;
    for (double n = 64; n <= 16384; n *= 2) {
        double e = accel_gemm_efficiency(a, ACCEL_BF16, n, n, n);
        CU_ASSERT_TRUE(e > prev);
        CU_ASSERT_TRUE(e < accel_gemm_eff_max(a, ACCEL_BF16));
        prev = e;
    }
    CU_ASSERT_TRUE(accel_gemm_efficiency(a, ACCEL_BF16, 512, 512, 512) < 0.3);

    /* m = 1: a matrix-vector product, bounded by reading the 8192x8192 matrix. */
    double tv = accel_gemm_time(a, ACCEL_BF16, 1, 8192, 8192);
    double bytes = (8192.0 + 8192.0 * 8192 + 8192) * 2;
    CU_ASSERT_DOUBLE_EQUAL(tv, bytes / (2039e9 * accel_mem_eff(a)), 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(accel_mem_time(a, 1e9), 1e9 / (2039e9 * 0.9), 1e-15);

    /* Batched = one launch with batch times the work: never slower per FLOP. */
    double t1 = accel_gemm_time(a, ACCEL_BF16, 2048, 2048, 128);
    double tb = accel_bgemm_time(a, ACCEL_BF16, 32, 2048, 2048, 128);
    CU_ASSERT_TRUE(tb < 32 * t1);
    CU_ASSERT_TRUE(tb > t1);
    CU_ASSERT_EQUAL(accel_gemm_time(a, ACCEL_BF16, 0, 10, 10), 0);
    CU_ASSERT_EQUAL(accel_mem_time(a, -5), 0);

    /* fp32 runs on SIMT units: 16x slower peak than bf16 tensor cores. */
    CU_ASSERT_TRUE(accel_gemm_time(a, ACCEL_FP32, 8192, 8192, 8192) > 10 * t);
    accel_free(a);
}

static void test_dtype_names(void)
{
    AccelDtype dt;
    for (int i = 0; i < ACCEL_NUM_DTYPES; i++) {
        CU_ASSERT_TRUE(accel_dtype_from_name(accel_dtype_name((AccelDtype)i), &dt));
        CU_ASSERT_EQUAL(dt, i);
    }
    CU_ASSERT_FALSE(accel_dtype_from_name("int8", &dt));
    CU_ASSERT_PTR_NULL(accel_dtype_name(ACCEL_NUM_DTYPES));
    CU_ASSERT_EQUAL(accel_dtype_bytes(ACCEL_TF32), 4);
    CU_ASSERT_EQUAL(accel_dtype_bytes(ACCEL_FP8), 1);
}

static void expect_error(const char *text, const char *message)
{
    GError *err = NULL;
    Accel *a = accel_parse("x.json", text, strlen(text), &err);
    CU_ASSERT_PTR_NULL(a);
    accel_free(a);
    CU_ASSERT_PTR_NOT_NULL_FATAL(err);
    CU_ASSERT_EQUAL(err->code, SIM_ERROR_INPUT);
    if (strcmp(err->message, message) != 0)
        fprintf(stderr, "\n  got:  %s\n  want: %s\n", err->message, message);
    CU_ASSERT_STRING_EQUAL(err->message, message);
    g_clear_error(&err);
}

#define EFF "\"efficiency\": {\"gemm_eff_max\": 0.8, \"gemm_half_flops\": 1e9, \"mem_eff\": 0.9, \"source\": \"s\"}"
#define HBM "\"hbm\": {\"bytes\": \"16GiB\", \"bandwidth\": 9e11, \"source\": \"s\"}"

static void test_bad_input(void)
{
    expect_error("{\"name\": \"x\",\n \"peak_flops\": {\"bf16\": 1e14},\n " HBM ",\n " EFF "}",
                 "x.json:2: missing required field \"source\"");
    expect_error("{\"name\": \"x\",\n \"peak_flops\": {\"bf61\": 1e14, \"source\": \"s\"},\n " HBM ",\n " EFF "}",
                 "x.json:2: unknown field \"bf61\" (known here: fp32, tf32, fp16, bf16, fp8, source)");
    expect_error("{\"name\": \"x\",\n \"peak_flops\": {\"bf16\": -1, \"source\": \"s\"},\n " HBM ",\n " EFF "}",
                 "x.json:2: \"bf16\" must be between 1 GFLOP/s and 1 EFLOP/s, not -1 FLOP/s");
    expect_error("{\"name\": \"x\",\n \"peak_flops\": {\"bf16\": 1e14, \"source\": \"s\"},\n"
                 " \"hbm\": {\"bytes\": \"16 potatoes\", \"bandwidth\": 9e11, \"source\": \"s\"},\n " EFF "}",
                 "x.json:3: \"bytes\": cannot read \"16 potatoes\" as a size in whole bytes (e.g. 25MiB)");
    expect_error("{\"name\": \"x\",\n \"peak_flops\": {\"bf16\": 1e14, \"source\": \"s\"},\n " HBM ",\n"
                 " \"efficiency\": {\"gemm_eff_max\": 1.5, \"gemm_half_flops\": 1e9, \"mem_eff\": 0.9, \"source\": \"s\"}}",
                 "x.json:4: \"gemm_eff_max\" must be between 0.01 and 1, not 1.5");
    /* a value just past a bound is not printed as the bound (review 8) */
    expect_error("{\"name\": \"x\",\n \"peak_flops\": {\"bf16\": 1e14, \"source\": \"s\"},\n " HBM ",\n"
                 " \"efficiency\": {\"gemm_eff_max\": 1.0000001, \"gemm_half_flops\": 1e9, \"mem_eff\": 0.9, \"source\": \"s\"}}",
                 "x.json:4: \"gemm_eff_max\" must be between 0.01 and 1, not 1 (1.0000001000000001)");
    expect_error("{\"name\": \"x\",\n \"peak_flops\": {\"source\": \"s\"},\n " HBM ",\n " EFF "}",
                 "x.json:2: \"peak_flops\" names no data type");
    expect_error("[1, 2]", "x.json:1: an accelerator description must be a JSON object");
    expect_error("{\"name\": \"x\",\n \"peak_flops\": {\"bf16\": 1e14, \"source\": \"s\"},\n " EFF "}",
                 "x.json:1: missing required field \"hbm\"");
    expect_error("{\"name\": \"x\",\n \"peak_flops\": {\"bf16\": 1e14, \"source\": \"s\"},\n " HBM ",\n " EFF ",\n"
                 " \"fp8_gemm\": {\"any_layout\": true}}",
                 "x.json:5: missing required field \"source\"");
    expect_error("{\"name\": \"x\",\n \"peak_flops\": {\"bf16\": 1e14, \"source\": \"s\"},\n " HBM ",\n " EFF ",\n"
                 " \"fp8_gemm\": {\"any_layout\": 1, \"source\": \"s\"}}",
                 "x.json:5: \"any_layout\" must be true or false");

    GError *err = NULL;
    CU_ASSERT_PTR_NULL(accel_load("no-such-chip", &err));
    CU_ASSERT_PTR_NOT_NULL_FATAL(err);
    CU_ASSERT_EQUAL(err->code, SIM_ERROR_INPUT);
    CU_ASSERT_TRUE(g_str_has_prefix(err->message, "unknown accelerator \"no-such-chip\""));
    g_clear_error(&err);
    CU_ASSERT_PTR_NULL(accel_load("/nonexistent/dir/chip.json", &err));
    CU_ASSERT_PTR_NOT_NULL_FATAL(err);
    CU_ASSERT_EQUAL(err->code, SIM_ERROR_INPUT);
    g_clear_error(&err);
}

static void test_env_override_and_path(void)
{
    /* A path is read as given; SHARDSIM_DATA_DIR redirects preset lookups. */
    char *path = g_build_filename(SHARDSIM_SOURCE_DIR, "models", "presets", "accelerators", "tpu-v4.json", NULL);
    Accel *a = load(path);
    CU_ASSERT_PTR_NOT_NULL(a);
    accel_free(a);
    g_free(path);

    char *old = g_strdup(g_getenv("SHARDSIM_DATA_DIR"));
    g_setenv("SHARDSIM_DATA_DIR", "/nonexistent", TRUE);
    GError *err = NULL;
    CU_ASSERT_PTR_NULL(accel_load("a100-80gb", &err));
    CU_ASSERT_PTR_NOT_NULL(err);
    g_clear_error(&err);
    if (old)
        g_setenv("SHARDSIM_DATA_DIR", old, TRUE);
    else
        g_unsetenv("SHARDSIM_DATA_DIR");
    g_free(old);
    a = load("a100-80gb");
    CU_ASSERT_PTR_NOT_NULL(a);
    accel_free(a);
}

static const TestCase tests[] = {
    {"all presets load", test_all_presets_load},
    {"datasheet numbers", test_datasheet_numbers},
    {"gemm efficiency curve", test_gemm_efficiency_curve},
    {"dtype names", test_dtype_names},
    {"bad input", test_bad_input},
    {"env override and path", test_env_override_and_path},
};
TEST_MAIN("accel", tests)
