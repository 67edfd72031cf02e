/* The compute and memory side of the step (issue 12): fused attention, FP8
 * training, GEMM tile and wave quantisation, the peak's working set, and the
 * accelerator presets (every one loads; every one with FP8 runs an FP8
 * step). */
#include "accel.h"
#include "memory.h"
#include "step.h"
#include "test_main.h"
#include "workload.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static cJSON *run_text(const char *text, GError **err) { return step_run_text("t.json", text, err); }

static double num(const cJSON *r, const char *a, const char *b)
{
    const cJSON *o = cJSON_GetObjectItem(r, a);
    if (b)
        o = cJSON_GetObjectItem(o, b);
    return cJSON_IsNumber(o) ? o->valuedouble : NAN;
}

/* GPT-style model on one DGX node, ZeRO-3 over 8 ranks. */
static char *scen(const char *acc, const char *topo, int seq, int hidden, const char *prec, const char *attention,
                  const char *par)
{
    char att[64] = "";
    if (attention)
        snprintf(att, sizeof att, " \"attention\": \"%s\",", attention);
    return g_strdup_printf("{\"accelerator\": \"%s\", \"topology\": \"%s\", \"nodes\": 1,%s\n"
                           " \"model\": {\"layers\": 8, \"hidden\": %d, \"heads\": %d, \"seq_len\": %d, \"vocab\": 50304},\n"
                           " \"global_batch\": 16, \"micro_batch\": 1, \"precision\": \"%s\", \"optimizer\": \"adamw\",\n"
                           " \"parallelism\": %s}\n",
                           acc, topo, att, hidden, hidden / 128 > 0 ? hidden / 128 : 1, seq, prec,
                           par ? par : "{\"dp\": 8, \"zero_stage\": 3, \"recompute\": \"none\"}");
}

static cJSON *run_ok(char *text)
{
    GError *err = NULL;
    cJSON *r = run_text(text, &err);
    if (!r) {
        printf("\n%s\n-> %s\n", text, err->message);
        g_clear_error(&err);
    }
    g_free(text);
    return r;
}

/* Fused attention is the default on A100 and H100, faster than the unfused
 * path at long sequences, and keeps no s x s activations. */
static void test_fused_attention(void)
{
    const char *accs[][2] = {{"a100-80gb", "dgx-a100"}, {"h100-sxm", "dgx-h100"}};
    for (int i = 0; i < 2; i++) {
        cJSON *def = run_ok(scen(accs[i][0], accs[i][1], 16384, 2048, "bf16", NULL, NULL));
        cJSON *un = run_ok(scen(accs[i][0], accs[i][1], 16384, 2048, "bf16", "unfused", NULL));
        CU_ASSERT_PTR_NOT_NULL_FATAL(def);
        CU_ASSERT_PTR_NOT_NULL_FATAL(un);
        CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(cJSON_GetObjectItem(def, "config"), "attention")->valuestring,
                               "fused");
        double tf = num(def, "step_time_s", NULL), tu = num(un, "step_time_s", NULL);
        double af = num(def, "memory_per_device_bytes", "activations"),
               au = num(un, "memory_per_device_bytes", "activations");
        printf("\n  %s seq 16k: fused %.3f s, unfused %.3f s; activations %.1f / %.1f GiB", accs[i][0], tf, tu,
               af / (1 << 30), au / (1 << 30));
        CU_ASSERT_TRUE(tf < 0.8 * tu);
        /* unfused keeps b a s^2 (2 + 1 + 2) bytes per layer more: 8 layers, 16 heads */
        double core = 8 * 16 * 16384.0 * 16384 * 5;
        CU_ASSERT_TRUE(au - af > 0.95 * core);
        cJSON_Delete(def);
        cJSON_Delete(un);
    }
    /* FlashAttention-1 is slower than the FA2/FA3 default, faster than unfused */
    cJSON *v1 = run_ok(scen("a100-80gb", "dgx-a100", 16384, 2048, "bf16", "fused-v1", NULL));
    cJSON *v2 = run_ok(scen("a100-80gb", "dgx-a100", 16384, 2048, "bf16", "fused", NULL));
    cJSON *un = run_ok(scen("a100-80gb", "dgx-a100", 16384, 2048, "bf16", "unfused", NULL));
    CU_ASSERT_PTR_NOT_NULL_FATAL(v1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(v2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(un);
    CU_ASSERT_TRUE(num(v2, "step_time_s", NULL) < num(v1, "step_time_s", NULL));
    CU_ASSERT_TRUE(num(v1, "step_time_s", NULL) < num(un, "step_time_s", NULL));
    CU_ASSERT_DOUBLE_EQUAL(num(v1, "memory_per_device_bytes", "total"), num(v2, "memory_per_device_bytes", "total"),
                           1);
    cJSON_Delete(v1);
    cJSON_Delete(v2);
    cJSON_Delete(un);
}

/* V100 has no fused kernel: unfused by default, "fused" is an error at its line. */
static void test_no_fused_on_v100(void)
{
    cJSON *r = run_ok(scen("v100-sxm2-32gb", "dgx1-v100", 1024, 1024, "fp16", NULL, NULL));
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(cJSON_GetObjectItem(r, "config"), "attention")->valuestring,
                           "unfused");
    cJSON_Delete(r);
    char *t = scen("v100-sxm2-32gb", "dgx1-v100", 1024, 1024, "fp16", "fused", NULL);
    GError *err = NULL;
    CU_ASSERT_PTR_NULL(run_text(t, &err));
    CU_ASSERT_TRUE(err && strstr(err->message, "t.json:1:") && strstr(err->message, "fused attention"));
    g_clear_error(&err);
    g_free(t);
    t = scen("a100-80gb", "dgx-a100", 1024, 1024, "bf16", "flash", NULL);
    CU_ASSERT_PTR_NULL(run_text(t, &err));
    CU_ASSERT_TRUE(err && strstr(err->message, "\"attention\"") && strstr(err->message, "\"fused-v2\""));
    g_clear_error(&err);
    g_free(t);
    t = scen("v100-sxm2-32gb", "dgx1-v100", 1024, 1024, "fp16", "fused-v2", NULL);
    CU_ASSERT_PTR_NULL(run_text(t, &err));
    CU_ASSERT_TRUE(err && strstr(err->message, "fused attention"));
    g_clear_error(&err);
    g_free(t);
}

/* "fused-v2", FlashAttention-2 (PyTorch SDPA's flash backend): on Hopper,
 * where "fused" is FlashAttention-3 / cuDNN, slower than it and faster than
 * the FA1 generation, with the same memory; on Ampere, whose "fused" is
 * FA2, the same step as "fused". */
static void test_fused_v2(void)
{
    const char *kinds[] = {"fused", "fused-v2", "fused-v1"};
    double t[3], m[3];
    for (int i = 0; i < 3; i++) {
        cJSON *r = run_ok(scen("h100-sxm", "dgx-h100", 8192, 2048, "bf16", kinds[i], NULL));
        CU_ASSERT_PTR_NOT_NULL_FATAL(r);
        CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(cJSON_GetObjectItem(r, "config"), "attention")->valuestring,
                               kinds[i]);
        t[i] = num(r, "step_time_s", NULL);
        m[i] = num(r, "memory_per_device_bytes", "total");
        cJSON_Delete(r);
    }
    printf("\n  h100 seq 8k: fused %.4f s, fused-v2 %.4f s, fused-v1 %.4f s", t[0], t[1], t[2]);
    CU_ASSERT_TRUE(t[0] < t[1] && t[1] < t[2]);
    CU_ASSERT_DOUBLE_EQUAL(m[0], m[1], 1);
    CU_ASSERT_DOUBLE_EQUAL(m[1], m[2], 1);
    cJSON *a = run_ok(scen("a100-80gb", "dgx-a100", 8192, 2048, "bf16", "fused", NULL));
    cJSON *b = run_ok(scen("a100-80gb", "dgx-a100", 8192, 2048, "bf16", "fused-v2", NULL));
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    CU_ASSERT_EQUAL(num(a, "step_time_s", NULL), num(b, "step_time_s", NULL));
    cJSON_Delete(a);
    cJSON_Delete(b);
}

/* FP8 (Transformer Engine): faster than bf16 but below 2x (attention, the
 * logits and the casts stay 16 bit); ZeRO-3 gathers 1-byte parameters (half
 * of bf16's bytes); refused where the chip has no FP8 (A100), at the
 * precision key's line.  Memory: under ZeRO-3 (FSDP: TE casts each gathered
 * layer per pass) the weights are bf16's and each layer's FP8 weight copy,
 * 1 B per parameter, is saved with the activations, while the linear
 * layers' inputs are kept in 1 byte (5 sbh less per GPT layer); under
 * ZeRO-1 the cached FP8 weight and transpose add 2 B per layer parameter
 * (not per embedding parameter). */
static void test_fp8(void)
{
    cJSON *b = run_ok(scen("h100-sxm", "dgx-h100", 4096, 4096, "bf16", NULL, NULL));
    cJSON *f = run_ok(scen("h100-sxm", "dgx-h100", 4096, 4096, "fp8", NULL, NULL));
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    double tb = num(b, "step_time_s", NULL), tf = num(f, "step_time_s", NULL);
    printf("\n  h100 fp8 %.3f s, bf16 %.3f s: x%.2f", tf, tb, tb / tf);
    CU_ASSERT_TRUE(tf < 0.9 * tb);
    CU_ASSERT_TRUE(tf > 0.5 * tb);
    CU_ASSERT_DOUBLE_EQUAL(num(f, "memory_per_device_bytes", "weights"), num(b, "memory_per_device_bytes", "weights"), 1);
    GError *err = NULL;
    const char *m = "{\"name\": \"m\", \"type\": \"transformer\", \"source\": \"test\", \"layers\": 8, "
                    "\"hidden\": 4096, \"heads\": 32, \"seq_len\": 4096, \"vocab\": 50304}";
    Workload *w = workload_parse("m", m, strlen(m), &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(w);
    double lp = workload_params_layer(w, 0), sbh = 4096.0 * 4096;
    workload_free(w);
    CU_ASSERT_DOUBLE_EQUAL(num(f, "memory_per_device_bytes", "activations"),
                           num(b, "memory_per_device_bytes", "activations") - 8 * 5 * sbh + 8 * lp, 1);
    const char *z1 = "{\"dp\": 8, \"zero_stage\": 1, \"recompute\": \"none\"}";
    cJSON *b1 = run_ok(scen("h100-sxm", "dgx-h100", 4096, 4096, "bf16", NULL, z1));
    cJSON *f1 = run_ok(scen("h100-sxm", "dgx-h100", 4096, 4096, "fp8", NULL, z1));
    CU_ASSERT_PTR_NOT_NULL_FATAL(b1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f1);
    CU_ASSERT_DOUBLE_EQUAL(num(f1, "memory_per_device_bytes", "weights"),
                           num(b1, "memory_per_device_bytes", "weights") + 2 * 8 * lp, 1);
    cJSON_Delete(b1);
    cJSON_Delete(f1);
    CU_ASSERT_DOUBLE_EQUAL(num(f, "memory_per_device_bytes", "optimizer_state"),
                           num(b, "memory_per_device_bytes", "optimizer_state"), 1);
    const cJSON *cf = cJSON_GetObjectItem(f, "collectives"), *cb = cJSON_GetObjectItem(b, "collectives");
    double gf = 0, gb = 0, rf = 0, rb = 0;
    for (const cJSON *c = cf->child; c; c = c->next)
        if (!strcmp(cJSON_GetObjectItem(c, "name")->valuestring, "zero3_allgather"))
            gf = num(c, "bytes", NULL);
        else if (!strcmp(cJSON_GetObjectItem(c, "name")->valuestring, "zero3_reducescatter"))
            rf = num(c, "bytes", NULL);
    for (const cJSON *c = cb->child; c; c = c->next)
        if (!strcmp(cJSON_GetObjectItem(c, "name")->valuestring, "zero3_allgather"))
            gb = num(c, "bytes", NULL);
        else if (!strcmp(cJSON_GetObjectItem(c, "name")->valuestring, "zero3_reducescatter"))
            rb = num(c, "bytes", NULL);
    CU_ASSERT_TRUE(gb > 0);
    CU_ASSERT_DOUBLE_EQUAL(gf, gb / 2, 1);
    CU_ASSERT_DOUBLE_EQUAL(rf, rb, 1); /* gradients stay bf16 */
    CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(cJSON_GetObjectItem(f, "config"), "grad_reduce_dtype")->valuestring,
                           "bf16");
    cJSON_Delete(b);
    cJSON_Delete(f);

    char *t = scen("a100-80gb", "dgx-a100", 2048, 2048, "fp8", NULL, NULL);
    CU_ASSERT_PTR_NULL(run_text(t, &err));
    CU_ASSERT_TRUE(err && strstr(err->message, "no fp8 arithmetic"));
    g_clear_error(&err);
    g_free(t);
}

/* Every FP8 scenario runs: each preset with FP8, under ZeRO 0-3, tp, pp,
 * selective and full recomputation. */
static void test_fp8_everywhere(void)
{
    const char *accs[] = {"h100-sxm", "h200", "b200", "gb200", "mi300x", "mi325x", "mi355x"};
    const char *plans[] = {
        "{\"dp\": 8, \"zero_stage\": 0}",
        "{\"dp\": 8, \"weight_update\": \"sharded\"}",
        "{\"dp\": 8, \"zero_stage\": 2, \"recompute\": \"selective\"}",
        "{\"dp\": 8, \"zero_stage\": 3, \"recompute\": \"full\"}",
        "{\"dp\": 2, \"tp\": 4, \"sequence_parallel\": true}",
        "{\"dp\": 2, \"tp\": 2, \"pp\": 2, \"recompute\": \"full\"}",
    };
    for (size_t a = 0; a < G_N_ELEMENTS(accs); a++)
        for (size_t p = 0; p < G_N_ELEMENTS(plans); p++) {
            cJSON *r = run_ok(scen(accs[a], "dgx-h100", 4096, 4096, "fp8", NULL, plans[p]));
            CU_ASSERT_PTR_NOT_NULL(r);
            if (r) {
                CU_ASSERT_TRUE(num(r, "step_time_s", NULL) > 0 && isfinite(num(r, "step_time_s", NULL)));
                CU_ASSERT_TRUE(num(r, "mfu", NULL) > 0.05 && num(r, "mfu", NULL) < 1);
            }
            cJSON_Delete(r);
        }
}

/* Every preset loads; those with FP8 have twice the bf16 peak (dense). */
static void test_presets(void)
{
    const char *names[] = {"v100-sxm2-16gb", "v100-sxm2-32gb", "a100-40gb", "a100-80gb", "h100-sxm", "h200",
                           "b200",           "gb200",          "mi300x",    "mi325x",    "mi355x",   "tpu-v3",
                           "tpu-v4"};
    for (size_t i = 0; i < G_N_ELEMENTS(names); i++) {
        GError *err = NULL;
        Accel *a = accel_load(names[i], &err);
        if (!a)
            printf("\n%s: %s", names[i], err->message);
        CU_ASSERT_PTR_NOT_NULL_FATAL(a);
        if (accel_has_dtype(a, ACCEL_FP8))
            CU_ASSERT_DOUBLE_EQUAL(accel_peak_flops(a, ACCEL_FP8), 2 * accel_peak_flops(a, ACCEL_BF16),
                                   0.01 * accel_peak_flops(a, ACCEL_BF16));
        /* Ampere and newer, MI300 and newer run fused attention */
        bool fa = strncmp(names[i], "v100", 4) && strncmp(names[i], "tpu", 3);
        CU_ASSERT_EQUAL(accel_has_fused_attention(a), fa);
        accel_free(a);
    }
}

/* Tile and wave quantisation: a GEMM whose output is a few columns more
 * than one full wave of 256 x 128 tiles on A100's 108 SMs pays for part of
 * a second wave; a size off the tensor cores' 16-byte alignment is slower
 * per FLOP, and the step sees it (hidden 2050 against 2048). */
static void test_wave_quantisation(void)
{
    GError *err = NULL;
    Accel *a = accel_load("a100-80gb", &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    /* 108 tiles of 256 x 128 in m = 256 * 12, n = 128 * 9: exactly one wave */
    double m = 256 * 12, n = 128 * 9, k = 8192;
    double full = accel_gemm_time(a, ACCEL_BF16, m, n, k);
    double plus = accel_gemm_time(a, ACCEL_BF16, m, n + 8, k);
    printf("\n  one wave %.1f us, 8 columns more %.1f us", 1e6 * full, 1e6 * plus);
    CU_ASSERT_TRUE(plus > 1.1 * full);
    /* the extra columns run as narrower tiles, not as a whole second wave of 256 x 128 */
    CU_ASSERT_TRUE(plus < 2 * full);
    double e4096 = accel_gemm_efficiency(a, ACCEL_BF16, 8192, 4096, 4096);
    double e4100 = accel_gemm_efficiency(a, ACCEL_BF16, 8192, 4100, 4100);
    CU_ASSERT_TRUE(e4100 < 0.97 * e4096);
    accel_free(a);
    /* the step sees it: per FLOP, hidden 2050 runs slower than 2048 */
    cJSON *r0 = run_ok(scen("a100-80gb", "dgx-a100", 2048, 2048, "bf16", NULL, NULL));
    cJSON *r1 = run_ok(scen("a100-80gb", "dgx-a100", 2048, 2050, "bf16", NULL, NULL));
    CU_ASSERT_PTR_NOT_NULL_FATAL(r0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r1);
    CU_ASSERT_TRUE(num(r1, "mfu", NULL) < 0.97 * num(r0, "mfu", NULL));
    cJSON_Delete(r0);
    cJSON_Delete(r1);
}

/* The peak's working set: without recomputation or ZeRO-3 it is the last
 * stage's loss, mb s V/tp x 3 x 4 bytes (PyTorch's cross_entropy: the
 * fp32 log-softmax and two fp32 gradients); with full recomputation, the
 * larger of that and one layer's activations (nothing of the loss is left
 * in the layers' backward).  "cross_entropy": "fp32" (Megatron's) holds
 * 4 + 2 bytes per logit, "fused" 2 + 2 (and keeps the 2-byte logits through
 * the backward); context parallelism divides the tokens.  The loss's peak
 * also holds the output layer's saved bf16 input, tokens x hidden x 2;
 * "loss_parallel" (DTensor's, with tp > 1) 16 bytes per logit. */
static void test_working_set(void)
{
    cJSON *r = run_ok(scen("a100-80gb", "dgx-a100", 2048, 2048, "bf16", NULL, "{\"dp\": 8, \"recompute\": \"none\"}"));
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    double logits = 2048.0 * 50304 * 12 + 2048.0 * 2048 * 2;
    CU_ASSERT_DOUBLE_EQUAL(num(r, "memory_per_device_bytes", "working_set"), logits, 1);
    cJSON_Delete(r);
    r = run_ok(scen("a100-80gb", "dgx-a100", 2048, 2048, "bf16", NULL, "{\"dp\": 8, \"recompute\": \"full\"}"));
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    double ws = num(r, "memory_per_device_bytes", "working_set");
    CU_ASSERT_TRUE(ws >= logits);
    double total = 0;
    const char *parts[] = {"weights", "gradients", "optimizer_state", "activations", "buffers", "working_set",
                           "reserve"};
    for (size_t i = 0; i < G_N_ELEMENTS(parts); i++)
        total += num(r, "memory_per_device_bytes", parts[i]);
    CU_ASSERT_DOUBLE_EQUAL(total, num(r, "memory_per_device_bytes", "total"), 1);
    cJSON_Delete(r);
    static const struct {
        const char *ce, *par;
        double per_logit, tokens;
    } rows[] = {{"fp32", "{\"dp\": 8}", 6, 2048},
                {"fused", "{\"dp\": 8}", 4, 2048},
                {"unfused", "{\"dp\": 4, \"cp\": 2}", 12, 1024},
                {"loss_parallel", "{\"dp\": 8}", 12, 2048},              /* tp 1: PyTorch's own */
                {"loss_parallel", "{\"dp\": 4, \"tp\": 2}", 16 / 2.0, 2048}}; /* 16 B on V / 2 */
    for (size_t i = 0; i < G_N_ELEMENTS(rows); i++) {
        char *t = scen("a100-80gb", "dgx-a100", 2048, 2048, "bf16", NULL, rows[i].par);
        char *ce = g_strdup_printf("{\"cross_entropy\": \"%s\",%s", rows[i].ce, t + 1);
        g_free(t);
        r = run_ok(ce);
        CU_ASSERT_PTR_NOT_NULL_FATAL(r);
        CU_ASSERT_DOUBLE_EQUAL(num(r, "memory_per_device_bytes", "working_set"),
                               rows[i].tokens * (50304 * rows[i].per_logit + 2048 * 2), 1);
        cJSON_Delete(r);
    }
    GError *err = NULL;
    char *t = scen("a100-80gb", "dgx-a100", 2048, 2048, "bf16", NULL, NULL);
    char *bad = g_strdup_printf("{\"cross_entropy\": \"blocked\",%s", t + 1);
    CU_ASSERT_PTR_NULL(run_text(bad, &err));
    CU_ASSERT_TRUE(err && strstr(err->message, "t.json:1:") && strstr(err->message, "\"cross_entropy\""));
    g_clear_error(&err);
    g_free(t);
    g_free(bad);
}

/* The fused kernel's time: causal does half the work; the backward is 2.5x
 * the forward's FLOPs at a lower rate; longer sequences run nearer the
 * plateau. */
static void test_attention_kernel(void)
{
    GError *err = NULL;
    Accel *a = accel_load("a100-80gb", &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    double f = accel_attention_time(a, ACCEL_BF16, 32, 16384, 128, false, false);
    double fc = accel_attention_time(a, ACCEL_BF16, 32, 16384, 128, true, false);
    double b = accel_attention_time(a, ACCEL_BF16, 32, 16384, 128, false, true);
    CU_ASSERT_TRUE(fc < 0.55 * f && fc > 0.45 * f);
    CU_ASSERT_TRUE(b > 2.5 * f);
    /* FlashAttention-2 paper: up to 73 % of peak forward on A100 */
    double rate = 4 * 32 * 16384.0 * 16384 * 128 / f / accel_peak_flops(a, ACCEL_BF16);
    CU_ASSERT_TRUE(rate > 0.6 && rate <= 0.73);
    double short_rate = 4 * 32 * 512.0 * 512 * 128 / accel_attention_time(a, ACCEL_BF16, 32, 512, 128, false, false) /
                        accel_peak_flops(a, ACCEL_BF16);
    CU_ASSERT_TRUE(short_rate < rate);
    accel_free(a);
    Accel *v = accel_load("v100-sxm2-32gb", &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(v);
    CU_ASSERT_TRUE(isinf(accel_attention_time(v, ACCEL_FP16, 32, 1024, 64, true, false)));
    accel_free(v);
}

/* The fused kernel with FP8 inputs (fp8_dot_product_attention): on H100
 * and H200 its forward runs at the preset's FP8 fraction, which the public
 * head-dim-128 figures bear out independently (FA3 paper, cuDNN's bars,
 * 16k non-causal: FP8 1005 against BF16 595 TFLOP/s, 1.69x); no measured
 * FP8 backward there: none (INFINITY).  On B200 both directions run at
 * cuDNN 9.13.1's measured FP8 rates (cudnn-frontend's published B200 SDPA
 * benchmark, Llama 3.1 405B heads, causal): the plateaus were read as the
 * median over 4k-32k tokens, so each point is an independent check of the
 * curve's shape (half_seq 256): within 12 % from 8k; at 4k the model is
 * 21-30 % fast, as Blackwell's kernels ramp up more slowly than Hopper's
 * half_seq says (a free fit of this table gives 900 forward, 1750 backward:
 * not modelled). */
static void test_attention_fp8(void)
{
    GError *err = NULL;
    const char *hopper[] = {"h100-sxm", "h200"};
    for (int i = 0; i < 2; i++) {
        Accel *a = accel_load(hopper[i], &err);
        CU_ASSERT_PTR_NOT_NULL_FATAL(a);
        CU_ASSERT_TRUE(accel_has_fp8_attention(a, false));
        CU_ASSERT_FALSE(accel_has_fp8_attention(a, true));
        double b16 = accel_attention_time(a, ACCEL_BF16, 32, 16384, 128, false, false);
        double b8 = accel_attention_time(a, ACCEL_FP8, 32, 16384, 128, false, false);
        printf("\n  %s FP8 attention forward x%.2f of BF16's (cuDNN's measured 1.69)", hopper[i], b16 / b8);
        CU_ASSERT_TRUE(b16 / b8 > 1.69 * 0.95 && b16 / b8 < 1.69 * 1.05);
        CU_ASSERT_TRUE(isinf(accel_attention_time(a, ACCEL_FP8, 32, 16384, 128, false, true)));
        accel_free(a);
    }
    Accel *b = accel_load("b200", &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    CU_ASSERT_TRUE(accel_has_fp8_attention(b, false) && accel_has_fp8_attention(b, true));
    /* cudnn-frontend bb37575, sdpa_fp8_benchmark_results_NVIDIA_B200.csv:
     * batch 1, 128 query heads, causal, FP8 TFLOP/s forward / backward. */
    const struct {
        double seq, fwd, bwd;
    } m[] = {{4096, 1230.65, 972.28}, {8192, 1502.11, 1254.69}, {16384, 1692.39, 1469.49}, {32768, 1781.41, 1582.24}};
    for (size_t i = 0; i < G_N_ELEMENTS(m); i++) {
        double f = 4 * 128 * m[i].seq * m[i].seq / 2 * 128;
        double tf = f / accel_attention_time(b, ACCEL_FP8, 128, m[i].seq, 128, true, false) / 1e12;
        double tb = 2.5 * f / accel_attention_time(b, ACCEL_FP8, 128, m[i].seq, 128, true, true) / 1e12;
        printf("\n  b200 FP8 attention %.0f tokens: forward %.0f (cuDNN %.0f), backward %.0f (%.0f) TFLOP/s", m[i].seq,
               tf, m[i].fwd, tb, m[i].bwd);
        double bound = m[i].seq < 8192 ? 0.35 : 0.12;
        CU_ASSERT_TRUE(fabs(tf / m[i].fwd - 1) < bound && fabs(tb / m[i].bwd - 1) < bound);
    }
    accel_free(b);
}

/* `scen`'s FP8 scenario with fp8_dot_product_attention, or without. */
static cJSON *run_fp8_dpa(const char *acc, const char *topo, const char *attention, bool dpa)
{
    char *t = scen(acc, topo, 8192, 4096, "fp8", attention, NULL);
    char *t2 = g_strdup_printf("{\"fp8_dot_product_attention\": %s,%s", dpa ? "true" : "false", t + 1);
    g_free(t);
    return run_ok(t2);
}

/* The step takes the FP8 kernel where the preset has it: faster on H200
 * (the forward) and B200 (both directions); the same time under fused-v2
 * (flash-attn, not Transformer Engine's cuDNN kernel), less memory on all. */
static void test_step_fp8_dpa(void)
{
    const struct {
        const char *acc, *topo, *attention;
        bool faster;
    } cases[] = {{"h200", "dgx-h200", NULL, true}, {"b200", "dgx-b200", NULL, true},
                 {"h100-sxm", "dgx-h100", "fused-v2", false}};
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        cJSON *off = run_fp8_dpa(cases[i].acc, cases[i].topo, cases[i].attention, false);
        cJSON *on = run_fp8_dpa(cases[i].acc, cases[i].topo, cases[i].attention, true);
        CU_ASSERT_PTR_NOT_NULL_FATAL(off);
        CU_ASSERT_PTR_NOT_NULL_FATAL(on);
        double t0 = num(off, "step_time_s", NULL), t1 = num(on, "step_time_s", NULL);
        printf("\n  %s %s: step %.4f s -> %.4f s with FP8 attention", cases[i].acc,
               cases[i].attention ? cases[i].attention : "fused", t0, t1);
        if (cases[i].faster) {
            CU_ASSERT_TRUE(t1 < t0 * 0.999);
        } else {
            CU_ASSERT_DOUBLE_EQUAL(t1, t0, 1e-12 * t0);
        }
        CU_ASSERT_TRUE(num(on, "memory_per_device_bytes", "activations") <
                       num(off, "memory_per_device_bytes", "activations"));
        cJSON_Delete(off);
        cJSON_Delete(on);
    }
}

/* The workload side of fused attention: the "5as/h" core (softmax output,
 * dropout mask and output) becomes the fp32 log-sum-exp, 4 a s b bytes, and
 * the softmax/dropout traffic of the s x s scores disappears; "causal"
 * defaults to true in JSON. */
static void test_workload_fused(void)
{
    GError *err = NULL;
    Workload *w = workload_load("gpt3-1.3b", &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(w);
    const WorkloadTransformer *t = workload_transformer(w);
    CU_ASSERT_TRUE(t->causal);
    WorkloadParallel u = workload_parallel_default(), f = u;
    f.fused_attention = true;
    double s = t->seq_len, a = t->heads, b = 2;
    double au = workload_layer_activation_bytes(w, 0, 2, &u), af = workload_layer_activation_bytes(w, 0, 2, &f);
    CU_ASSERT_DOUBLE_EQUAL(au - af, 5 * a * s * s * b - 4 * a * s * b, 1);
    double eu = workload_layer_elementwise_bytes(w, 0, 2, &u), ef = workload_layer_elementwise_bytes(w, 0, 2, &f);
    CU_ASSERT_DOUBLE_EQUAL(eu - ef, (2 * 2 + (2 * 2 + 1)) * a * s * s * b, 1);
    /* selective recomputation keeps no core either way */
    u.recompute = f.recompute = WORKLOAD_RECOMPUTE_SELECTIVE;
    CU_ASSERT_DOUBLE_EQUAL(workload_layer_activation_bytes(w, 0, 2, &u), workload_layer_activation_bytes(w, 0, 2, &f),
                           1);
    workload_free(w);
    Workload *bert = workload_load("bert-large", &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(bert);
    CU_ASSERT_FALSE(workload_transformer(bert)->causal);
    workload_free(bert);
}

/* The loss's HBM traffic per implementation ("cross_entropy"), bytes per
 * 16-bit logit forward + backward (step_loss.c): Megatron-Core's unfused
 * 52, its native fused 32, Transformer Engine's 10, xentropy's 8, a
 * compiled loss 6, PyTorch's cross_entropy on upcast logits 48 and on the
 * 16-bit ones 18.  One GPU, a 50,304-word vocabulary: the compute differs
 * from "te"'s by exactly that traffic at the preset's memory rate. */
static void test_loss_traffic(void)
{
    static const char *const kinds[] = {"fp32", "fp32_fused", "fused", "unfused", "compiled", "bf16"};
    static const double bytes[] = {52, 32, 8, 48, 6, 18};
    enum { N = G_N_ELEMENTS(kinds) };
    const char *par = "{\"dp\": 1, \"recompute\": \"none\"}";
    char *base = scen("h100-sxm", "dgx-h100", 2048, 1024, "bf16", NULL, par);
    GError *err = NULL;
    Accel *a = accel_load("h100-sxm", &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    double per_byte = accel_mem_time(a, 1e9) / 1e9, logits = 16.0 * 2048 * 50304, t[N + 1];
    for (int k = 0; k <= N; k++) {
        char *text = g_strdup(base), *at = strstr(text, "\"global_batch\"");
        char *with = g_strdup_printf("%.*s\"cross_entropy\": \"%s\", %s", (int)(at - text), text, k < N ? kinds[k] : "te", at);
        cJSON *r = run_ok(with);
        t[k] = num(r, "breakdown", "compute");
        cJSON_Delete(r);
        g_free(text);
    }
    for (int k = 0; k < N; k++)
        CU_ASSERT_DOUBLE_EQUAL(t[k] - t[N], (bytes[k] - 10) * logits * per_byte, 1e-6 * t[N]);
    g_free(base);
    accel_free(a);
}

static const TestCase tests[] = {
    {"the loss's HBM traffic per implementation", test_loss_traffic},
    {"workload: fused attention's activations and traffic", test_workload_fused},
    {"fused attention: default on A100/H100, faster, no s^2 memory", test_fused_attention},
    {"FP8 attention kernel: H100/H200 forward at the FP8 fraction, B200 both at cuDNN's measured rates", test_attention_fp8},
    {"fp8_dot_product_attention: faster step on H200 and B200, unchanged under fused-v2", test_step_fp8_dpa},
    {"V100: unfused by default, fused refused", test_no_fused_on_v100},
    {"fused-v2: FlashAttention-2, between FA3 and FA1 on H100, fused's own on A100", test_fused_v2},
    {"FP8: faster than bf16, FP8 weights, 1-byte gathers, refused on A100", test_fp8},
    {"every FP8 scenario runs", test_fp8_everywhere},
    {"every accelerator preset loads", test_presets},
    {"GEMM tile and wave quantisation", test_wave_quantisation},
    {"peak working set", test_working_set},
    {"fused attention kernel time", test_attention_kernel},
};

TEST_MAIN("step_compute", tests)
