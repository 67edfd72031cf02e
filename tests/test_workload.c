#include "workload.h"
#include "test_main.h"
#include "test_workload.h"

#include <CUnit/Basic.h>
#include <math.h>
#include <string.h>

static bool within(double got, double want, double rel)
{
    bool ok = fabs(got - want) <= rel * fabs(want);
    if (!ok)
        fprintf(stderr, "\n  got %.6g, want %.6g (+-%g%%)\n", got, want, rel * 100);
    return ok;
}

static void test_all_presets_load(void)
{
    char *dir = workload_preset_dir();
    GDir *d = g_dir_open(dir, 0, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    int n = 0;
    for (const char *f; (f = g_dir_read_name(d));) {
        if (!g_str_has_suffix(f, ".json"))
            continue;
        char *name = g_strndup(f, strlen(f) - 5);
        Workload *w = load(name);
        CU_ASSERT_PTR_NOT_NULL(w);
        if (w) {
            CU_ASSERT_STRING_EQUAL(workload_name(w), name);
            CU_ASSERT_TRUE(workload_params_total(w) > 1e6);
            CU_ASSERT_TRUE(workload_forward_flops_per_sample(w) > 1e9);
        }
        workload_free(w);
        g_free(name);
        n++;
    }
    g_dir_close(d);
    g_free(dir);
    CU_ASSERT_TRUE(n >= 22);
}

static void test_param_counts(void)
{
    Workload *w = load("gpt3-175b");
    CU_ASSERT_PTR_NOT_NULL_FATAL(w);
    CU_ASSERT_TRUE(within(workload_params_total(w), 174.6e9, 0.005));
    /* 12 h^2 + 13 h per GPT layer */
    CU_ASSERT_DOUBLE_EQUAL(workload_params_layer(w, 5), 12.0 * 12288 * 12288 + 13.0 * 12288, 0.5);
    CU_ASSERT_DOUBLE_EQUAL(workload_params_embedding(w), (50257.0 + 2048) * 12288, 0.5);
    workload_free(w);

    w = load("llama2-7b");
    CU_ASSERT_TRUE(within(workload_params_total(w), 6.74e9, 0.01));
    CU_ASSERT_DOUBLE_EQUAL(workload_params_embedding(w), 2.0 * 32000 * 4096, 0.5); /* untied */
    workload_free(w);
    w = load("llama2-13b");
    CU_ASSERT_TRUE(within(workload_params_total(w), 13.0e9, 0.01));
    workload_free(w);
    w = load("llama2-70b");
    CU_ASSERT_TRUE(within(workload_params_total(w), 69e9, 0.015));
    workload_free(w);
    /* Llama 3.1: 8.03B, 70.6B and 406B, as the released checkpoints' model
     * cards round them (the architecture's own counts: 8,030,261,248,
     * 70,553,706,496 and 405,853,388,800) */
    static const struct { const char *name; double params; } llama3[] = {
        {"llama3.1-8b", 8.03e9}, {"llama3.1-70b", 70.6e9}, {"llama3.1-405b", 406e9}};
    for (size_t i = 0; i < G_N_ELEMENTS(llama3); i++) {
        w = load(llama3[i].name);
        CU_ASSERT_PTR_NOT_NULL_FATAL(w);
        CU_ASSERT_TRUE(within(workload_params_total(w), llama3[i].params, 0.002));
        CU_ASSERT_DOUBLE_EQUAL(workload_params_embedding(w), 2.0 * 128256 * workload_transformer(w)->hidden, 0.5);
        workload_free(w);
    }

    /* GPT-3 paper Table 2.1 sizes, to the precision of their names. */
    static const struct { const char *name; double params; double rel; } gpt3[] = {
        {"gpt3-125m", 125e6, 0.02}, {"gpt3-350m", 350e6, 0.02}, {"gpt3-760m", 760e6, 0.03},
        {"gpt3-1.3b", 1.3e9, 0.04}, {"gpt3-2.7b", 2.7e9, 0.04},  {"gpt3-6.7b", 6.7e9, 0.03},
        {"gpt3-13b", 13e9, 0.03},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(gpt3); i++) {
        w = load(gpt3[i].name);
        CU_ASSERT_TRUE(within(workload_params_total(w), gpt3[i].params, gpt3[i].rel));
        workload_free(w);
    }
}

/* Narayanan et al. 2021 Table 1 prints parameters in billions to 0.1 B,
 * computed with their eq. 2 (which leaves out the final layernorm's 2h):
 * ours must round to the printed value. */
static void test_megatron_table1_params(void)
{
    static const struct { const char *name; double billions; } rows[] = {
        {"megatron-gpt-1.7b", 1.7},     {"megatron-gpt-3.6b", 3.6},     {"megatron-gpt-7.5b", 7.5},
        {"megatron-gpt-18.4b", 18.4},   {"megatron-gpt-39.1b", 39.1},   {"megatron-gpt-76.1b", 76.1},
        {"megatron-gpt-145.6b", 145.6}, {"megatron-gpt-310.1b", 310.1}, {"megatron-gpt-529.6b", 529.6},
        {"megatron-gpt-1t", 1008.0},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(rows); i++) {
        Workload *w = load(rows[i].name);
        CU_ASSERT_PTR_NOT_NULL_FATAL(w);
        double b = workload_params_total(w) / 1e9;
        if (fabs(b - rows[i].billions) > 0.05)
            fprintf(stderr, "\n  %s: %.4f B, table %.1f B\n", rows[i].name, b, rows[i].billions);
        CU_ASSERT_TRUE(fabs(b - rows[i].billions) <= 0.05);
        workload_free(w);
    }
}

/* The per-GEMM sum against Megatron's closed form: without recomputation
 * training = 3 x forward; with full recomputation the layers' forward runs
 * twice (4 x) while the logits do not (3 x). */
static void test_flops_formula_agreement(void)
{
    static const char *const names[] = {"gpt3-175b", "megatron-gpt-1t", "megatron-gpt-1.7b", "gpt3-125m"};
    for (size_t i = 0; i < G_N_ELEMENTS(names); i++) {
        Workload *w = load(names[i]);
        CU_ASSERT_PTR_NOT_NULL_FATAL(w);
        double B = 1536;
        double layers = 0;
        for (int l = 0; l < workload_num_layers(w); l++)
            layers += workload_layer_forward_flops(w, l, 1, NULL);
        double head = workload_head_forward_flops(w, 1, NULL);
        CU_ASSERT_TRUE(within(B * 3 * (layers + head), workload_megatron_flops(w, B, false), 0.02));
        CU_ASSERT_TRUE(within(B * (4 * layers + 3 * head), workload_megatron_flops(w, B, true), 0.02));

        /* Tensor parallelism splits the work evenly. */
        WorkloadParallel par = workload_parallel_default();
        par.tp = 8;
        CU_ASSERT_TRUE(within(8 * workload_layer_forward_flops(w, 0, 2, &par), 2 * workload_layer_forward_flops(w, 0, 1, NULL),
                              1e-12));
        CU_ASSERT_TRUE(within(8 * workload_head_forward_flops(w, 2, &par), 2 * head, 1e-12));
        workload_free(w);
    }

    /* Narayanan et al. 2021 section 5.1: GPT-3 175B on 1024 A100s at 140
     * TFLOP/s per GPU, 300 B tokens -> about 34 days (their 8TP/(nX)
     * estimate); with the full formula and batch 1536. */
    Workload *w = load("gpt3-175b");
    double iters = 300e9 / (1536.0 * 2048);
    double iter_s = workload_megatron_flops(w, 1536, true) / (1024 * 140e12);
    CU_ASSERT_TRUE(within(iters * iter_s / 86400, 34, 0.05));
    CU_ASSERT_TRUE(within(workload_achieved_flops(w, 1536, true, iter_s, 1024), 140e12, 1e-12));
    CU_ASSERT_EQUAL(workload_achieved_flops(w, 1536, true, 0, 1024), 0);
    workload_free(w);
}

static void test_gemm_shapes(void)
{
    Workload *w = load("llama2-70b");
    CU_ASSERT_PTR_NOT_NULL_FATAL(w);
    WorkloadParallel par = workload_parallel_default();
    par.tp = 8;
    WorkloadGemm g[WORKLOAD_MAX_GEMMS];
    int n = workload_layer_gemms(w, 0, 1, &par, g);
    CU_ASSERT_EQUAL_FATAL(n, 6);
    CU_ASSERT_STRING_EQUAL(g[0].name, "qkv");
    CU_ASSERT_DOUBLE_EQUAL(g[0].m, 4096, 0);
    CU_ASSERT_DOUBLE_EQUAL(g[0].n, (8192 + 2 * 1024) / 8.0, 0); /* 8 KV heads of 128 */
    CU_ASSERT_DOUBLE_EQUAL(g[0].k, 8192, 0);
    CU_ASSERT_DOUBLE_EQUAL(g[1].batch, 64 / 8.0, 0);
    CU_ASSERT_DOUBLE_EQUAL(g[1].k, 128, 0);
    CU_ASSERT_DOUBLE_EQUAL(g[4].n, 2 * 28672 / 8.0, 0); /* gate and up */
    CU_ASSERT_DOUBLE_EQUAL(g[5].k, 28672 / 8.0, 0);
    CU_ASSERT_EQUAL(workload_layer_gemms(w, 80, 1, &par, g), 0);
    CU_ASSERT_EQUAL(workload_layer_gemms(w, -1, 1, &par, g), 0);

    WorkloadGemm bw[2];
    workload_gemm_backward(&g[0], bw);
    CU_ASSERT_DOUBLE_EQUAL(workload_gemm_flops(&bw[0]) + workload_gemm_flops(&bw[1]), 2 * workload_gemm_flops(&g[0]),
                           1);
    CU_ASSERT_DOUBLE_EQUAL(bw[0].m, g[0].m, 0);
    CU_ASSERT_DOUBLE_EQUAL(bw[0].n, g[0].k, 0);
    CU_ASSERT_DOUBLE_EQUAL(bw[1].m, g[0].k, 0);
    workload_free(w);
}

static void test_resnet50(void)
{
    Workload *w = load("resnet50");
    CU_ASSERT_PTR_NOT_NULL_FATAL(w);
    CU_ASSERT_EQUAL(workload_kind(w), WORKLOAD_CNN);
    CU_ASSERT_PTR_NULL(workload_transformer(w));
    CU_ASSERT_TRUE(within(workload_forward_macs_per_sample(w), 4.1e9, 0.05));
    CU_ASSERT_TRUE(within(workload_params_total(w), 25.6e6, 0.02));
    /* torchvision's exact count */
    CU_ASSERT_DOUBLE_EQUAL(workload_params_total(w), 25557032, 0.5);
    WorkloadGemm g[WORKLOAD_MAX_GEMMS];
    CU_ASSERT_EQUAL_FATAL(workload_layer_gemms(w, 0, 32, NULL, g), 1);
    CU_ASSERT_DOUBLE_EQUAL(g[0].m, 32.0 * 112 * 112, 0);
    CU_ASSERT_DOUBLE_EQUAL(g[0].n, 64, 0);
    CU_ASSERT_DOUBLE_EQUAL(g[0].k, 3.0 * 49, 0);
    CU_ASSERT_TRUE(workload_layer_activation_bytes(w, 0, 32, NULL) > 0);
    CU_ASSERT_TRUE(workload_layer_elementwise_bytes(w, 0, 32, NULL) > 0);
    workload_free(w);
}

/* Korthikanti et al. 2022 closed forms for a GPT layer, bytes, 16-bit. */
static void test_activation_memory(void)
{
    Workload *w = load("gpt3-175b");
    CU_ASSERT_PTR_NOT_NULL_FATAL(w);
    double s = 2048, b = 1, h = 12288, a = 96, t = 8, sbh = s * b * h;
    WorkloadParallel p = workload_parallel_default();
    CU_ASSERT_TRUE(within(workload_layer_activation_bytes(w, 0, 1, &p), sbh * (34 + 5 * a * s / h), 1e-12));
    p.tp = 8;
    CU_ASSERT_TRUE(within(workload_layer_activation_bytes(w, 0, 1, &p), sbh * (10 + 24 / t + 5 * a * s / (h * t)), 1e-12));
    p.sequence_parallel = true;
    CU_ASSERT_TRUE(within(workload_layer_activation_bytes(w, 0, 1, &p), sbh / t * (34 + 5 * a * s / h), 1e-12));
    p.recompute = WORKLOAD_RECOMPUTE_SELECTIVE;
    CU_ASSERT_TRUE(within(workload_layer_activation_bytes(w, 0, 1, &p), sbh * 34 / t, 1e-12));
    p.sequence_parallel = false;
    CU_ASSERT_TRUE(within(workload_layer_activation_bytes(w, 0, 1, &p), sbh * (10 + 24 / t), 1e-12));
    p.recompute = WORKLOAD_RECOMPUTE_FULL;
    CU_ASSERT_TRUE(within(workload_layer_activation_bytes(w, 0, 1, &p), 2 * sbh, 1e-12));
    p.sequence_parallel = true;
    CU_ASSERT_TRUE(within(workload_layer_activation_bytes(w, 0, 1, &p), 2 * sbh / t, 1e-12));
    /* linear in the micro-batch */
    CU_ASSERT_TRUE(within(workload_layer_activation_bytes(w, 0, 4, &p), 4 * 2 * sbh / t, 1e-12));
    /* DTensor's gathered linear inputs: the checkpoint is still the shard;
     * without recomputation the QKV and MLP inputs (2 sbh each) are whole */
    p.sp_gathered_inputs = true;
    CU_ASSERT_TRUE(within(workload_layer_activation_bytes(w, 0, 1, &p), 2 * sbh / t, 1e-12));
    p.recompute = WORKLOAD_RECOMPUTE_NONE;
    CU_ASSERT_TRUE(within(workload_layer_activation_bytes(w, 0, 1, &p),
                          sbh / t * (34 + 5 * a * s / h) + 4 * sbh * (1 - 1 / t), 1e-12));
    p.sp_gathered_inputs = false;
    workload_free(w);

    /* Llama: no dropout masks, GQA shrinks K and V. */
    w = load("llama2-70b");
    p = workload_parallel_default();
    const WorkloadTransformer *c = workload_transformer(w);
    double T = c->seq_len, H = c->hidden, kv = 1024, f = c->ffn, A = c->heads;
    double want = 2 * (4 * T * H) + 2 * (2 * T * H + 2 * T * kv + 3 * T * f) + 2 * A * T * T;
    CU_ASSERT_TRUE(within(workload_layer_activation_bytes(w, 0, 1, &p), want, 1e-12));
    workload_free(w);
}

static void test_elementwise_bytes(void)
{
    Workload *w = load("gpt3-175b");
    WorkloadParallel p = workload_parallel_default();
    double one = workload_layer_elementwise_bytes(w, 0, 1, &p);
    CU_ASSERT_TRUE(one > 0);
    CU_ASSERT_TRUE(within(workload_layer_elementwise_bytes(w, 0, 3, &p), 3 * one, 1e-12));
    p.tp = 8;
    double tp8 = workload_layer_elementwise_bytes(w, 0, 1, &p);
    p.sequence_parallel = true;
    double sp8 = workload_layer_elementwise_bytes(w, 0, 1, &p);
    CU_ASSERT_TRUE(tp8 < one && sp8 < tp8);
    CU_ASSERT_TRUE(within(sp8, one / 8, 1e-12)); /* everything split */
    /* Softmax and dropout on the s x s scores dominate at s = 2048: 2 + 5 bytes per score */
    double scores = 96.0 * 2048 * 2048;
    CU_ASSERT_TRUE(one > 9 * scores);
    workload_free(w);
}

static void expect_error(const char *text, const char *message)
{
    GError *err = NULL;
    Workload *w = workload_parse("w.json", text, strlen(text), &err);
    CU_ASSERT_PTR_NULL(w);
    workload_free(w);
    CU_ASSERT_PTR_NOT_NULL_FATAL(err);
    CU_ASSERT_EQUAL(err->code, SIM_ERROR_INPUT);
    if (strcmp(err->message, message) != 0)
        fprintf(stderr, "\n  got:  %s\n  want: %s\n", err->message, message);
    CU_ASSERT_STRING_EQUAL(err->message, message);
    g_clear_error(&err);
}

static void test_bad_input(void)
{
    expect_error("{\"name\": \"x\", \"type\": \"transformer\",\n \"layers\": 2, \"hidden\": 64, \"heads\": 4,\n"
                 " \"seq_len\": 8, \"vocab\": 10}",
                 "w.json:1: missing required field \"source\"");
    expect_error("{\"name\": \"x\", \"type\": \"transformer\", \"source\": \"s\",\n \"layers\": 0, \"hidden\": 64,"
                 " \"heads\": 4,\n \"seq_len\": 8, \"vocab\": 10}",
                 "w.json:2: \"layers\" must be between 1 and 100000, not 0");
    expect_error("{\"name\": \"x\", \"type\": \"transformer\", \"source\": \"s\",\n \"layers\": 2, \"hidden\": 64,"
                 " \"heads\": 4, \"kv_heads\": 3,\n \"seq_len\": 8, \"vocab\": 10}",
                 "w.json:1: heads must be a multiple of kv_heads");
    expect_error("{\"name\": \"x\", \"type\": \"transformer\", \"source\": \"s\",\n \"layers\": 2, \"hidden\": 64,"
                 " \"heads\": 4,\n \"seq_len\": 8, \"vocab\": 10, \"gated_mlp\": 1}",
                 "w.json:3: \"gated_mlp\" must be true or false");
    expect_error("{\"name\": \"x\", \"type\": \"transformer\", \"source\": \"s\",\n \"layers\": 2, \"hidden\": 64,"
                 " \"heads\": 4,\n \"seq_len\": 8, \"vocab\": 10, \"hiden\": 3}",
                 "w.json:3: unknown field \"hiden\" (known here: name, type, description, source, layers, hidden, "
                 "heads, kv_heads, ffn, seq_len, vocab, type_vocab, gated_mlp, tied_embeddings, bias, dropout, "
                 "embedding_norm, final_norm, norm, position, causal, experts, top_k, expert_ffn, shared_experts, head_dim, "
                 "qk_norm, sliding_window, full_attention_every, q_lora_rank, kv_lora_rank, qk_nope_head_dim, "
                 "qk_rope_head_dim, v_head_dim, dense_layers, mtp_layers)");
    expect_error("{\"name\": \"x\", \"type\": \"transformer\", \"source\": \"s\",\n \"layers\": 2, \"hidden\": 64,"
                 " \"heads\": 4,\n \"seq_len\": 8, \"vocab\": 10, \"norm\": \"batchnorm\"}",
                 "w.json:3: \"norm\" must be \"layernorm\" or \"rmsnorm\", not \"batchnorm\"");
    expect_error("{\"name\": \"x\", \"type\": \"rnn\", \"source\": \"s\"}",
                 "w.json:1: \"type\" must be \"transformer\" or \"cnn\", not \"rnn\"");
    expect_error("{\"name\": \"x\", \"type\": \"cnn\", \"source\": \"s\", \"input_hw\": 32,\n \"layers\": [\n"
                 "  {\"name\": \"c\", \"type\": \"conv\", \"in\": 3, \"out\": 8, \"kernel\": 3, \"out_hw\": 32},\n"
                 "  {\"name\": \"d\", \"type\": \"pool\", \"in\": 8, \"out\": 8}]}",
                 "w.json:4: layer type must be \"conv\" or \"fc\", not \"pool\"");
    expect_error("{\"name\": \"x\", \"type\": \"cnn\", \"source\": \"s\", \"input_hw\": 32,\n \"layers\": [\n"
                 "  {\"name\": \"c\", \"type\": \"conv\", \"in\": 3, \"out\": 8, \"kernel\": 3}]}",
                 "w.json:3: missing required field \"out_hw\"");
    expect_error("{\"name\": \"x\", \"type\": \"cnn\", \"source\": \"s\", \"input_hw\": 32, \"layers\": []}",
                 "w.json:1: \"layers\" must be a non-empty array");

    GError *err = NULL;
    CU_ASSERT_PTR_NULL(workload_load("gpt-9", &err));
    CU_ASSERT_PTR_NOT_NULL_FATAL(err);
    CU_ASSERT_TRUE(g_str_has_prefix(err->message, "unknown workload \"gpt-9\""));
    g_clear_error(&err);

    WorkloadTransformer c = {.layers = 2, .hidden = 64, .heads = 4, .kv_heads = 0, .ffn = 256, .seq_len = 8, .vocab = 10};
    CU_ASSERT_PTR_NULL(workload_new_transformer("t", &c, &err));
    CU_ASSERT_PTR_NOT_NULL_FATAL(err);
    CU_ASSERT_STRING_EQUAL(err->message, "kv_heads must be in [1, heads]");
    g_clear_error(&err);
    c.kv_heads = 4;
    Workload *w = workload_new_transformer("t", &c, &err);
    CU_ASSERT_PTR_NOT_NULL(w);
    CU_ASSERT_EQUAL(workload_num_layers(w), 2);
    CU_ASSERT_EQUAL(workload_tokens_per_sample(w), 8);
    workload_free(w);
}

/* A MoE layer's token copies (Megatron-Core's alltoall dispatcher): the
 * permute and the unpermute, read and write of every routed row; with
 * several experts on the device the sort by expert and back too; the
 * backward one pass more (the routing weights' gradient reads the
 * experts' outputs again); none in a dense layer. */
static void test_permute_bytes(void)
{
    Workload *w = load("mixtral-8x7b");
    const WorkloadTransformer *t = workload_transformer(w);
    WorkloadParallel p = workload_parallel_default();
    double rows = 2.0 * t->seq_len * t->top_k * t->hidden * 2; /* micro-batch 2, bf16 */
    p.ep = 8; /* one expert per device: no sort */
    CU_ASSERT_TRUE(within(workload_layer_permute_bytes(w, 0, 2, &p, false), 4 * rows, 1e-12));
    CU_ASSERT_TRUE(within(workload_layer_permute_bytes(w, 0, 2, &p, true), 5 * rows, 1e-12));
    p.ep = 4; /* two per device: sorted and back */
    CU_ASSERT_TRUE(within(workload_layer_permute_bytes(w, 0, 2, &p, false), 8 * rows, 1e-12));
    CU_ASSERT_TRUE(within(workload_layer_permute_bytes(w, 0, 2, &p, true), 9 * rows, 1e-12));
    p.tp = 2;
    p.sequence_parallel = true; /* the device's half of the tokens */
    CU_ASSERT_TRUE(within(workload_layer_permute_bytes(w, 0, 2, &p, false), 4 * rows, 1e-12));
    workload_free(w);
    Workload *dense = load("gpt3-175b");
    CU_ASSERT_EQUAL(workload_layer_permute_bytes(dense, 0, 2, &p, true), 0);
    workload_free(dense);
}

/* DeepSeek-V3 as its card counts it: 671B total, 37B active (37.6B here:
 * the card rounds down), MLA's attention block about 187M parameters
 * (down, norms, up, output), the 3 dense layers without experts, the MTP
 * module apart (a MoE layer, eh_proj 2h x h, three norms); MLA's GEMMs
 * split as Megatron-Core's MLASelfAttention (down projections whole, up
 * column-parallel, linear_proj row-parallel); bad MLA keys refused. */
static void test_deepseek_v3(void)
{
    GError *err = NULL;
    Workload *w = workload_load("deepseek-v3", &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(w);
    CU_ASSERT_DOUBLE_EQUAL(workload_params_total(w) / 1e9, 671.0, 0.5);
    CU_ASSERT_DOUBLE_EQUAL(workload_params_active(w) / 1e9, 37.6, 0.1);
    double h = 7168, attn = h * 1536 + 1536 + 1536 * 128 * 192 + h * 576 + 512 + 512 * 128 * 256 + 128 * 128 * h;
    printf("\n    deepseek-v3: %.1f B parameters, %.1f B active, MLA block %.1f M\n", workload_params_total(w) / 1e9,
           workload_params_active(w) / 1e9, attn / 1e6);
    CU_ASSERT_DOUBLE_EQUAL(workload_params_layer(w, 0), attn + 3 * h * 18432 + 2 * h, 1);
    CU_ASSERT_EQUAL(workload_params_layer_experts(w, 2), 0);
    CU_ASSERT_DOUBLE_EQUAL(workload_params_layer_experts(w, 3), 256 * 3 * h * 2048, 1);
    CU_ASSERT_TRUE(!workload_layer_is_moe(w, 2) && workload_layer_is_moe(w, 3) && workload_layer_is_moe(w, 61));
    CU_ASSERT_DOUBLE_EQUAL(workload_params_mtp(w), workload_params_layer(w, 60) + 2 * h * h + 3 * h, 1);
    CU_ASSERT_DOUBLE_EQUAL(workload_attention_head_dim(w), 160, 0);
    WorkloadParallel par = workload_parallel_default();
    par.tp = 2;
    par.sequence_parallel = true;
    WorkloadGemm g[WORKLOAD_MAX_GEMMS];
    int n = workload_layer_gemms(w, 0, 1, &par, g);
    CU_ASSERT_EQUAL(n, 9); /* 7 attention GEMMs, mlp_up, mlp_down */
    CU_ASSERT_STRING_EQUAL(g[0].name, "q_down");
    CU_ASSERT_DOUBLE_EQUAL(g[0].m, 4096 / 2, 0); /* duplicated: the rank's tokens under sp */
    CU_ASSERT_DOUBLE_EQUAL(g[0].n, 1536, 0);
    CU_ASSERT_DOUBLE_EQUAL(g[1].n, 128 * 192 / 2, 0); /* q_up: column-parallel */
    CU_ASSERT_DOUBLE_EQUAL(g[4].k, 192, 0);            /* attn_score: nope + rope */
    CU_ASSERT_DOUBLE_EQUAL(g[5].n, 128, 0);            /* attn_value: v_head_dim */
    CU_ASSERT_DOUBLE_EQUAL(g[6].k, 128 * 128 / 2, 0);  /* attn_out: row-parallel */
    CU_ASSERT_EQUAL(workload_layer_gemms(w, 3, 1, &par, g), 12); /* a MoE layer */
    workload_free(w);
    expect_error("{\"name\": \"x\", \"type\": \"transformer\", \"source\": \"s\",\n \"layers\": 2, \"hidden\": 64,"
                 " \"heads\": 4,\n \"seq_len\": 8, \"vocab\": 10, \"q_lora_rank\": 16}",
                 "w.json:1: q_lora_rank, qk_nope_head_dim, qk_rope_head_dim and v_head_dim need kv_lora_rank > 0 (MLA)");
    expect_error("{\"name\": \"x\", \"type\": \"transformer\", \"source\": \"s\",\n \"layers\": 2, \"hidden\": 64,"
                 " \"heads\": 4,\n \"seq_len\": 8, \"vocab\": 10, \"dense_layers\": 1}",
                 "w.json:1: dense_layers needs experts > 0");
    expect_error("{\"name\": \"x\", \"type\": \"transformer\", \"source\": \"s\",\n \"layers\": 2, \"hidden\": 64,"
                 " \"heads\": 4,\n \"seq_len\": 8, \"vocab\": 10, \"dense_layers\": 3}",
                 "w.json:3: \"dense_layers\" must be between 0 and 2, not 3");
}

static const TestCase tests[] = {
    {"all presets load", test_all_presets_load},
    {"deepseek-v3: MLA, dense layers, MTP", test_deepseek_v3},
    {"parameter counts", test_param_counts},
    {"megatron table 1 parameters", test_megatron_table1_params},
    {"flops formula agreement", test_flops_formula_agreement},
    {"gemm shapes", test_gemm_shapes},
    {"resnet50", test_resnet50},
    {"activation memory", test_activation_memory},
    {"elementwise bytes", test_elementwise_bytes},
    {"a MoE layer's token copies", test_permute_bytes},
    {"bad input", test_bad_input},
};
TEST_MAIN("workload", tests)
