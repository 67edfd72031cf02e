/* LoRA as a workload (models/finetune.h): the step's FLOPs, times, memory
 * and data-parallel traffic against closed forms written here from the
 * model's hyper-parameters (not from the code under test), and the
 * scenario errors.  These are checks of the model's physics, not fits. */
#include "step.h"
#include "test_main.h"

#include <cjson/cJSON.h>
#include <glib.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* A Llama-like layer small enough to run fast: h 1024, 8 heads of which 2
 * KV, SwiGLU ffn 2816, 8 layers, seq 2048, vocab 32000. */
#define H 1024.0
#define KV 256.0
#define F 2816.0
#define L 8.0
#define S 2048.0
#define V 32000.0
#define R 16.0

static char *scenario(const char *finetune, const char *precision, const char *par)
{
    return g_strdup_printf(
        "{\"name\": \"lora\", \"accelerator\": \"h100-sxm\", \"topology\": \"dgx-h100-cluster\", \"nodes\": 1,"
        " \"model\": {\"layers\": 8, \"hidden\": 1024, \"heads\": 8, \"kv_heads\": 2, \"ffn\": 2816, \"seq_len\": 2048,"
        " \"vocab\": 32000, \"gated_mlp\": true, \"tied_embeddings\": false, \"bias\": false, \"dropout\": false,"
        " \"norm\": \"rmsnorm\", \"position\": \"rotary\"},"
        " \"global_batch\": 16, \"micro_batch\": 1, \"precision\": \"%s\", \"attention\": \"fused\"%s%s,"
        " \"parallelism\": %s}",
        precision, finetune ? ", \"finetune\": " : "", finetune ? finetune : "",
        par ? par : "{\"dp\": 8, \"tp\": 1, \"pp\": 1, \"weight_update\": \"sharded\"}");
}

static cJSON *run(const char *finetune, const char *precision, const char *par)
{
    char *text = scenario(finetune, precision, par);
    GError *err = NULL;
    cJSON *r = step_run_text("lora.json", text, &err);
    if (!r)
        printf("%s\n", err->message);
    g_clear_error(&err);
    g_free(text);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    return r;
}

static double num(const cJSON *r, const char *a, const char *b)
{
    const cJSON *it = cJSON_GetObjectItem(r, a);
    if (b)
        it = cJSON_GetObjectItem(it, b);
    CU_ASSERT_PTR_NOT_NULL_FATAL(it);
    return it->valuedouble;
}

#define QKV_PROJ "{\"method\": \"lora\", \"rank\": 16, \"targets\": [\"linear_qkv\", \"linear_proj\"]}"

/* Per sequence: the base's linear GEMMs and the logits, forward; the
 * attention core's two products (Q K^T and P V over all s keys); the
 * adapters of linear_qkv (h -> h + 2kv) and linear_proj (h -> h). */
static void closed_form(double *linear, double *core, double *adapters)
{
    *linear = S * (L * 2 * (H * (H + 2 * KV) + H * H + 3 * H * F) + 2 * H * V);
    *core = S * L * 2 * 2 * S * H;
    *adapters = S * L * 2 * R * ((H + H + 2 * KV) + (H + H));
}

/* The base's weight gradients are not run: its matmul FLOPs are 2/3 of
 * full training's (forward + data gradient), the attention core keeps its
 * whole backward, the adapters run all three passes. */
static void test_flops(void)
{
    cJSON *full = run(NULL, "bf16", NULL), *lora = run(QKV_PROJ, "bf16", NULL);
    double lin, core, ad, B = 16;
    closed_form(&lin, &core, &ad);
    double f = num(full, "model_flops_per_step", NULL), l = num(lora, "model_flops_per_step", NULL);
    printf("\nmodel FLOPs per step: full %.4g (closed form %.4g), LoRA %.4g (closed form %.4g), ratio %.3f; base "
           "linear layers alone %.3f\n",
           f, B * 3 * (lin + core), l, B * (2 * lin + 3 * core + 3 * ad), l / f,
           (l - B * (3 * core + 3 * ad)) / (f - B * 3 * core));
    CU_ASSERT_DOUBLE_EQUAL(f / (B * 3 * (lin + core)), 1, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(l / (B * (2 * lin + 3 * core + 3 * ad)), 1, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL((l - B * (3 * core + 3 * ad)) / (f - B * 3 * core), 2.0 / 3, 1e-9);
    /* compute time: between the matmuls' 2/3 and all of it (attention,
     * element-wise passes and the adapters' kernels do not shrink) */
    double tf = num(full, "breakdown", "compute"), tl = num(lora, "breakdown", "compute");
    printf("compute per step: full %.4f s, LoRA %.4f s, ratio %.3f\n", tf, tl, tl / tf);
    CU_ASSERT_TRUE(tl / tf > 2.0 / 3 && tl / tf < 0.9);
    cJSON_Delete(full);
    cJSON_Delete(lora);
}

/* Memory: the base's weights whole on every dp rank, no gradient and no
 * optimizer state for them; the adapters' gradients (bf16) and Adam state
 * (12 B, sharded over dp 8 by the sharded update).  Activations shrink: the
 * frozen linear layers keep no input for a weight gradient. */
static void test_memory(void)
{
    cJSON *full = run(NULL, "bf16", NULL), *lora = run(QKV_PROJ, "bf16", NULL);
    double lin, core, ad;
    closed_form(&lin, &core, &ad);
    double adapters = ad / (2 * S); /* parameters: FLOPs per token / 2 */
    double params = num(full, "config", "params");
    double w = num(lora, "memory_per_device_bytes", "weights"), g = num(lora, "memory_per_device_bytes", "gradients");
    double o = num(lora, "memory_per_device_bytes", "optimizer_state");
    printf("\nadapters %.0f params of %.0f; LoRA weights %.0f B, gradients %.0f B, optimizer %.0f B; full training "
           "gradients %.0f B, optimizer %.0f B\n",
           adapters, params, w, g, o, num(full, "memory_per_device_bytes", "gradients"),
           num(full, "memory_per_device_bytes", "optimizer_state"));
    CU_ASSERT_DOUBLE_EQUAL(w, 2 * (params + adapters), 1);
    CU_ASSERT_DOUBLE_EQUAL(g, 2 * adapters, 1);
    CU_ASSERT_DOUBLE_EQUAL(o, 12 * adapters / 8, 1);
    CU_ASSERT_TRUE(num(lora, "memory_per_device_bytes", "activations") <
                   num(full, "memory_per_device_bytes", "activations"));
    cJSON_Delete(full);
    cJSON_Delete(lora);
}

/* The data-parallel gradient reduction carries the adapters' gradients
 * only (bf16), and the sharded update gathers the adapters only. */
static void test_dp_traffic(void)
{
    const char *par[] = {"{\"dp\": 8, \"tp\": 1, \"pp\": 1, \"weight_update\": \"replicated\"}",
                         "{\"dp\": 8, \"tp\": 1, \"pp\": 1, \"weight_update\": \"sharded\"}",
                         "{\"dp\": 8, \"tp\": 1, \"pp\": 1, \"zero_stage\": 2}"};
    double lin, core, ad;
    closed_form(&lin, &core, &ad);
    double adapters = ad / (2 * S);
    for (int k = 0; k < 3; k++) {
        cJSON *r = run(QKV_PROJ, "bf16", par[k]);
        double grad = 0, gather = 0;
        const cJSON *c;
        cJSON_ArrayForEach(c, cJSON_GetObjectItem(r, "collectives")) {
            const char *op = cJSON_GetStringValue(cJSON_GetObjectItem(c, "op"));
            double bytes = num(c, "bytes", NULL) * num(c, "count_per_step", NULL);
            if (strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(c, "group")), "dp"))
                continue;
            printf("  %s %s %.0f B x %.0f\n", cJSON_GetStringValue(cJSON_GetObjectItem(c, "name")), op,
                   num(c, "bytes", NULL), num(c, "count_per_step", NULL));
            if (!strcmp(op, "allgather"))
                gather += bytes;
            else
                grad += bytes;
        }
        printf("\n%s: dp gradient bytes per step %.0f, dp gathers %.0f; adapters' bf16 gradients %.0f\n", par[k], grad,
               gather, 2 * adapters);
        /* one reduction of every gradient per step (ZeRO-2: per micro-batch, 2 of them); the sharded
           updates gather every adapter once */
        CU_ASSERT_DOUBLE_EQUAL(grad / (2 * adapters), k == 2 ? 2 : 1, 0.01);
        CU_ASSERT_DOUBLE_EQUAL(gather / (2 * adapters), k ? 1 : 0, 0.01);
        cJSON_Delete(r);
    }
}

/* An FP8 base (fp8_model_init): 1-byte layer weights, no 16-bit copy and no
 * kept transpose; embeddings and output layer 16-bit. */
static void test_fp8_base(void)
{
    cJSON *bf = run("{\"method\": \"lora\", \"rank\": 16, \"targets\": [\"linear_qkv\", \"linear_proj\"]}", "fp8", NULL);
    cJSON *f8 = run("{\"method\": \"lora\", \"rank\": 16, \"targets\": [\"linear_qkv\", \"linear_proj\"], "
                    "\"base_dtype\": \"fp8\"}",
                    "fp8", NULL);
    double lin, core, ad;
    closed_form(&lin, &core, &ad);
    double adapters = ad / (2 * S), head = 2 * V * H + H; /* embeddings, output layer, final norm */
    double layers = num(bf, "config", "params") - head;
    double wb = num(bf, "memory_per_device_bytes", "weights"), w8 = num(f8, "memory_per_device_bytes", "weights");
    printf("\nfp8 training, frozen bf16 base %.0f B (+ TE's FP8 copies), FP8 base %.0f B\n", wb, w8);
    CU_ASSERT_DOUBLE_EQUAL(wb, 4 * layers + 2 * head + 2 * adapters, 1);
    CU_ASSERT_DOUBLE_EQUAL(w8, 1 * layers + 2 * head + 2 * adapters, 1);
    CU_ASSERT_TRUE(num(f8, "step_time_s", NULL) <= num(bf, "step_time_s", NULL)); /* no weight casts */
    cJSON_Delete(bf);
    cJSON_Delete(f8);
}

/* The activations of the LoRA scenario in fp8 with `extra` keys added. */
static double activations_with(const char *extra)
{
    char *text = scenario(QKV_PROJ, "fp8", NULL);
    char *t2 = g_strdup_printf("%.*s%s}", (int)strlen(text) - 1, text, extra);
    GError *err = NULL;
    cJSON *r = step_run_text("lora.json", t2, &err);
    g_clear_error(&err);
    g_free(text);
    g_free(t2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    double a = num(r, "memory_per_device_bytes", "activations");
    cJSON_Delete(r);
    return a;
}

/* activation_func_fp8_input_store: the SwiGLU inputs (gate and up, 2 x ffn
 * per token) kept in FP8 instead of bf16, 2 x ffn bytes less per token and
 * layer; fp8_dot_product_attention: Q, K, V and O in FP8, h + 2 kv + h
 * bytes less (one micro-batch in flight). */
static void test_act_fp8(void)
{
    double a = activations_with(""), b = activations_with(", \"activation_func_fp8_input_store\": true"),
           c = activations_with(", \"fp8_dot_product_attention\": true");
    printf("\nactivations: %.0f B less with the FP8 activation input (closed form %.0f), %.0f B less with FP8 attention "
           "(closed form %.0f)\n",
           a - b, L * S * 2 * F, a - c, L * S * (2 * H + 2 * KV));
    CU_ASSERT_DOUBLE_EQUAL(a - b, L * S * 2 * F, 1);
    CU_ASSERT_DOUBLE_EQUAL(a - c, L * S * (2 * H + 2 * KV), 1);
}

/* `text` is refused as bad input, the message naming `what`. */
static void expect_text_error(const char *text, const char *what)
{
    GError *err = NULL;
    cJSON *r = step_run_text("lora.json", text, &err);
    CU_ASSERT_PTR_NULL(r);
    cJSON_Delete(r);
    CU_ASSERT_PTR_NOT_NULL_FATAL(err);
    printf("  %s\n", err->message);
    CU_ASSERT_TRUE(err->code == SIM_ERROR_INPUT);
    CU_ASSERT_PTR_NOT_NULL(strstr(err->message, what));
    CU_ASSERT_PTR_NOT_NULL(strstr(err->message, "lora.json:1:"));
    g_error_free(err);
}

static void expect_error(const char *finetune, const char *precision, const char *model, const char *what)
{
    char *text = scenario(finetune, precision, NULL);
    if (model) { /* another model instead of the inline one */
        char *a = strstr(text, "{\"layers\""), *b = strstr(text, "\"global_batch\"");
        char *t2 = g_strdup_printf("%.*s%s, %s", (int)(a - text), text, model, b);
        g_free(text);
        text = t2;
    }
    expect_text_error(text, what);
    g_free(text);
}

static void test_errors(void)
{
    printf("\n");
    expect_error("{\"method\": \"qlora\", \"rank\": 16}", "bf16", NULL, "is not \"lora\"");
    expect_error("{\"method\": \"lora\"}", "bf16", NULL, "rank");
    expect_error("{\"method\": \"lora\", \"rank\": 0}", "bf16", NULL, "rank");
    expect_error("{\"method\": \"lora\", \"rank\": 8, \"targets\": [\"q_proj\"]}", "bf16", NULL, "q_proj");
    expect_error("{\"method\": \"lora\", \"rank\": 8, \"targets\": []}", "bf16", NULL, "non-empty");
    expect_error("{\"method\": \"lora\", \"rank\": 8, \"targets\": [\"linear_qkv\", \"linear_qkv\"]}", "bf16", NULL,
                 "twice");
    expect_error("{\"method\": \"lora\", \"rank\": 8, \"base_dtype\": \"fp8\"}", "bf16", NULL, "needs");
    expect_error("{\"method\": \"lora\", \"rank\": 8, \"alpha\": 16}", "bf16", NULL, "alpha");
    expect_error("{\"method\": \"lora\", \"rank\": 8, \"dropout\": 1.5}", "bf16", NULL, "dropout");
    expect_error("\"lora\"", "bf16", NULL, "must be an object");
    expect_error("{\"method\": \"lora\", \"rank\": 8}", "bf16", "\"mixtral-8x7b\"", "dense transformers");
    char *z3 = scenario(QKV_PROJ, "bf16", "{\"dp\": 8, \"zero_stage\": 3}");
    expect_text_error(z3, "ZeRO-3 / FSDP is not modelled");
    g_free(z3);
    expect_error("{\"method\": \"lora\", \"rank\": 8}, \"activation_func_fp8_input_store\": true", "bf16", NULL,
                 "needs \"precision\": \"fp8\"");
    expect_error("{\"method\": \"lora\", \"rank\": 8}, \"fp8_dot_product_attention\": true", "bf16", NULL,
                 "needs \"precision\": \"fp8\"");
    /* the template's attention is fused: the same with unfused */
    char *text = scenario(QKV_PROJ ", \"fp8_dot_product_attention\": true", "fp8", NULL);
    gchar **parts = g_strsplit(text, "\"attention\": \"fused\"", 2);
    char *unfused = g_strjoinv("\"attention\": \"unfused\"", parts);
    expect_text_error(unfused, "not with \"attention\": \"unfused\"");
    g_strfreev(parts);
    g_free(unfused);
    g_free(text);
}

static const TestCase tests[] = {
    {"LoRA's model FLOPs: the base's matmuls 2/3 of full training's, closed form", test_flops},
    {"LoRA's memory: no base gradients or optimizer state, adapters' only", test_memory},
    {"LoRA's data-parallel traffic: the adapters' gradients only (ZeRO 0-2)", test_dp_traffic},
    {"LoRA on an FP8 base: 1 byte per frozen layer weight", test_fp8_base},
    {"activation_func_fp8_input_store, fp8_dot_product_attention: their saved tensors in 1 byte", test_act_fp8},
    {"finetune errors name the key and the line", test_errors},
};

TEST_MAIN("lora", tests)
