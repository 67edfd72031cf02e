/* The attention geometry of a transformer workload (workload.h): head_dim
 * (an attention heads x head_dim wide, not hidden), Qwen3's q/k norms and
 * GPT-OSS's sliding window; the presets that use them against their
 * published parameter counts; bad values refused. */
#include "accel.h"
#include "test_main.h"
#include "test_workload.h"
#include "workload.h"

#include <math.h>
#include <string.h>

static Workload *parse(const char *extra)
{
    char *text = g_strdup_printf("{\"name\": \"x\", \"type\": \"transformer\", \"source\": \"s\", \"layers\": 4, "
                                 "\"hidden\": 1024, \"heads\": 16, \"kv_heads\": 4, \"seq_len\": 2048, "
                                 "\"vocab\": 32000, \"gated_mlp\": true%s}",
                                 extra);
    GError *err = NULL;
    Workload *w = workload_parse("w.json", text, strlen(text), &err);
    if (!w)
        fprintf(stderr, "%s\n", err->message);
    g_clear_error(&err);
    g_free(text);
    return w;
}

/* Totals and active parameters as the model cards state them (Qwen3:
 * 30.5 B / 3.3 B, 235 B / 22 B; GPT-OSS 120B: 116.83 B / 5.13 B, its
 * active count without the input embedding's 201088 x 2880). */
static void test_param_counts(void)
{
    static const struct { const char *name; double total, active, tol, no_embedding; } m[] = {
        {"qwen3-30b-a3b", 30.5e9, 3.3e9, 0.02, 0},
        {"qwen3-235b-a22b", 235e9, 22e9, 0.02, 0},
        {"gpt-oss-120b", 116.83e9, 5.13e9, 0.005, 201088.0 * 2880},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(m); i++) {
        Workload *w = load(m[i].name);
        CU_ASSERT_PTR_NOT_NULL_FATAL(w);
        double t = workload_params_total(w), a = workload_params_active(w) - m[i].no_embedding;
        printf("\n%-16s %.3f B params, %.3f B active", m[i].name, t / 1e9, a / 1e9);
        CU_ASSERT_TRUE(fabs(t / m[i].total - 1) < m[i].tol);
        CU_ASSERT_TRUE(fabs(a / m[i].active - 1) < m[i].tol);
        workload_free(w);
    }
}

/* head_dim = hidden / heads stated is the default: the same parameters,
 * GEMMs and activations to the last bit. */
static void test_default_width(void)
{
    Workload *a = parse(""), *b = parse(", \"head_dim\": 64");
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    WorkloadParallel par = workload_parallel_default();
    par.tp = 2;
    par.fused_attention = true;
    CU_ASSERT_EQUAL(workload_params_total(a), workload_params_total(b));
    CU_ASSERT_EQUAL(workload_layer_forward_flops(a, 0, 2, &par), workload_layer_forward_flops(b, 0, 2, &par));
    CU_ASSERT_EQUAL(workload_layer_activation_bytes(a, 0, 2, &par), workload_layer_activation_bytes(b, 0, 2, &par));
    CU_ASSERT_EQUAL(workload_layer_elementwise_bytes(a, 0, 2, &par), workload_layer_elementwise_bytes(b, 0, 2, &par));
    workload_free(a);
    workload_free(b);
}

/* Qwen3-30B-A3B's attention is 32 x 128 = 4096 wide on a 2048 hidden: QKV
 * 2048 -> (32 + 2 x 4) x 128, the output projection 4096 -> 2048, the
 * score and value products per head of 128; the q/k norms 2 x 128 weights. */
static void test_wide_attention(void)
{
    Workload *w = load("qwen3-30b-a3b");
    CU_ASSERT_PTR_NOT_NULL_FATAL(w);
    const WorkloadTransformer *t = workload_transformer(w);
    CU_ASSERT_EQUAL(workload_head_dim(t), 128);
    CU_ASSERT_EQUAL(workload_q_dim(t), 4096);
    CU_ASSERT_EQUAL(workload_kv_dim(t), 512);
    WorkloadGemm g[WORKLOAD_MAX_GEMMS];
    WorkloadParallel par = workload_parallel_default();
    par.tp = 2;
    int n = workload_layer_gemms(w, 0, 1, &par, g);
    CU_ASSERT_TRUE(n >= 4);
    CU_ASSERT_EQUAL(g[0].n, 5120 / 2);
    CU_ASSERT_EQUAL(g[0].k, 2048);
    CU_ASSERT_EQUAL(g[1].k, 128);
    CU_ASSERT_EQUAL(g[1].batch, 16);
    CU_ASSERT_EQUAL(g[3].n, 2048);
    CU_ASSERT_EQUAL(g[3].k, 4096 / 2);
    /* attention weights: 2048 x 5120 + 4096 x 2048 + 256 (q/k norms) */
    double experts = workload_params_layer_experts(w, 0), router = 2048.0 * 128, norms = 2 * 2048.0;
    CU_ASSERT_EQUAL(workload_params_layer(w, 0) - experts - router - norms, 2048.0 * 5120 + 4096.0 * 2048 + 256);
    /* the q/k norms add elementwise traffic and keep their inputs */
    Workload *plain = parse(", \"head_dim\": 128"), *qk = parse(", \"head_dim\": 128, \"qk_norm\": true");
    WorkloadParallel one = workload_parallel_default();
    CU_ASSERT_TRUE(workload_layer_elementwise_bytes(qk, 0, 1, &one) > workload_layer_elementwise_bytes(plain, 0, 1, &one));
    CU_ASSERT_TRUE(workload_layer_activation_bytes(qk, 0, 1, &one) > workload_layer_activation_bytes(plain, 0, 1, &one));
    workload_free(plain);
    workload_free(qk);
    workload_free(w);
}

/* GPT-OSS: a 128-token window on layers 1, 3, ... (1-based), full
 * attention on every second: half the layers windowed; a window shortens
 * the fused kernel (fewer keys per query), never lengthens it. */
static void test_sliding_window(void)
{
    Workload *w = load("gpt-oss-120b");
    CU_ASSERT_PTR_NOT_NULL_FATAL(w);
    CU_ASSERT_DOUBLE_EQUAL(workload_window_share(workload_transformer(w)), 0.5, 1e-12);
    workload_free(w);
    Workload *all = parse(", \"sliding_window\": 256"), *third = parse(", \"sliding_window\": 256, \"full_attention_every\": 3");
    CU_ASSERT_DOUBLE_EQUAL(workload_window_share(workload_transformer(all)), 1, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(workload_window_share(workload_transformer(third)), 0.75, 1e-12); /* 4 layers, the 3rd full */
    workload_free(all);
    workload_free(third);
    GError *err = NULL;
    Accel *a = accel_load("h100-sxm", &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    double s = 4096, wdw = 128, keys = wdw - wdw * wdw / (2 * s);
    double full = accel_attention_time(a, ACCEL_BF16, 64, s, 64, true, false);
    CU_ASSERT_EQUAL(accel_attention_time_keys(a, ACCEL_BF16, 64, s, s / 2, 64, false), full);
    double win = accel_attention_time_keys(a, ACCEL_BF16, 64, s, keys, 64, false);
    CU_ASSERT_TRUE(win > 0 && win < full / 4);
    accel_free(a);
}

static void expect_error(const char *extra, const char *message)
{
    char *text = g_strdup_printf("{\"name\": \"x\", \"type\": \"transformer\", \"source\": \"s\", \"layers\": 4, "
                                 "\"hidden\": 1000, \"heads\": 16, \"kv_heads\": 4, \"seq_len\": 2048, "
                                 "\"vocab\": 32000%s}",
                                 extra);
    GError *err = NULL;
    Workload *w = workload_parse("w.json", text, strlen(text), &err);
    CU_ASSERT_PTR_NULL(w);
    workload_free(w);
    CU_ASSERT_PTR_NOT_NULL_FATAL(err);
    if (strcmp(err->message, message) != 0)
        fprintf(stderr, "\n  got:  %s\n  want: %s\n", err->message, message);
    CU_ASSERT_STRING_EQUAL(err->message, message);
    g_clear_error(&err);
    g_free(text);
}

/* 1000 / 16 is no head width; a head_dim makes grouped-query attention
 * well defined; out-of-range values are refused. */
static void test_bad_input(void)
{
    expect_error("", "w.json:1: grouped-query attention needs hidden divisible by heads (or a head_dim)");
    expect_error(", \"head_dim\": 0", "w.json:1: \"head_dim\" must be between 1 and 65536, not 0");
    expect_error(", \"head_dim\": 64, \"sliding_window\": 0", "w.json:1: \"sliding_window\" must be between 1 and 16777216, not 0");
    expect_error(", \"head_dim\": 64, \"full_attention_every\": 2", "w.json:1: full_attention_every needs a sliding_window");
    expect_error(", \"head_dim\": 64, \"qk_norm\": 1", "w.json:1: \"qk_norm\" must be true or false");
    expect_error(", \"head_dim\": 64, \"sliding_window\": 128, \"causal\": false",
                 "w.json:1: sliding_window is a causal (decoder) window: it needs causal attention");
    Workload *w = parse(", \"head_dim\": 80");
    CU_ASSERT_PTR_NOT_NULL(w); /* 16 x 80 = 1280 wide on hidden 1024 */
    workload_free(w);
}

static const TestCase tests[] = {
    {"Qwen3 / GPT-OSS presets: published parameter counts", test_param_counts},
    {"head_dim = hidden / heads is the default, bit for bit", test_default_width},
    {"an attention wider than hidden (Qwen3-30B-A3B)", test_wide_attention},
    {"sliding-window layers (GPT-OSS)", test_sliding_window},
    {"bad attention keys refused", test_bad_input},
};

TEST_MAIN("workload_attn", tests)
