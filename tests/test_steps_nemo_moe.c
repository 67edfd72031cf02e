/* NeMo 25.09 / 25.11 / 26.02 (Megatron-Bridge's performance summary) MoE
 * pre-training rows with an attention wider than the hidden size and a
 * sliding window: Qwen3-30B-A3B, Qwen3-235B-A22B and GPT-OSS 120B on
 * DGX-H100, DGX-B200 and DGX-GB200 (tests/data/steps/nemo-bridge-moe.csv:
 * provenance, the mapping, the rows left out, and the diagnosis of the
 * errors in its header), never fitted on.  Every row printed with its error;
 * asserted: a regression guard at today's figures plus a margin (median
 * |tokens/s error| <= 52 %, max <= 245 %: 42.4 % and 228.2 % on 2026-12-07
 * with the 26.02 presets' dispatcher and all-to-all overlap (Qwen3-30B's
 * DeepEP / HybridEP, Qwen3-235B's moe_a2a_overlap on H100: those rows
 * +21.2 / +146.5 / +9.8 / -11.5 % -> +41.3 / +228.2 / +16.9 / +33.4 %;
 * 41.7 % and 225.2 % without); 43.9 % and 225.6 % on 2026-12-06
 * with the MoE layer's token copies as Megatron-Core makes them (the sort by
 * local expert and back; the copies' backward once); 48.5 % and 240.3 %
 * with the recipes' fp8_recipe and the 26.02 GPT-OSS rows' recompute_modules;
 * 51.1 % and 241.3 % before), not a goal and not a fit.  The model is too fast on all but the two
 * Qwen3-235B H100 rows whose EP 32 all-to-all crosses 4 nodes: the dropless
 * Qwen3-30B rows of 25.11 / 26.02 on B200 and H100 (2.4-3.3x) take twice the
 * time of the same layouts' 25.09 tokendrop rows, for a cause not identified
 * (an exposed host issue cost was tested and rejected: the table's header),
 * and GPT-OSS's per-token layer compute is short by ~1.8x on GB200; the
 * cross-node all-to-all of EP 64 on 8 B200 nodes is right (the
 * B200 - GB200 step difference, 4.9 s predicted, 5.0 s measured). */
#include "test_steps.h"

static void test_table(void)
{
    Summary s = run_table(STEPS "nemo-bridge-moe.csv");
    CU_ASSERT_TRUE(s.n == 24);
    CU_ASSERT_TRUE(s.median <= 0.52);
    CU_ASSERT_TRUE(s.worst <= 2.45);
    CU_ASSERT_TRUE(s.fits >= 22);
}

/* The EP 64 all-to-all through 8 B200 nodes' NICs against the same step on
 * one GB200 NVL72 rack (26.02 GPT-OSS rows 1 and 2): the step difference
 * the model predicts is the measured one within 10 % (4.87 s vs 4.99 s). */
static double row_step(const char *accel, const char *topo, int nodes)
{
    char n[16];
    snprintf(n, sizeof n, "%d", nodes);
    const char *kv[] = {"accelerator", accel, "topology", topo, "nodes", n, NULL};
    return steps_file_step("nemo-gpt-oss-120b.json", kv);
}

static void test_cross_node_alltoall(void)
{
    double tokens = 1280.0 * 4096 / 64; /* per GPU and step */
    double measured = tokens / 8047 - tokens / 15784;
    double predicted = row_step("b200", "dgx-b200-cluster", 8) - row_step("gb200", "gb200-nvl72", 1);
    printf("\nEP 64: B200 x 8 nodes - GB200 NVL72 step: predicted %.2f s, measured %.2f s\n", predicted, measured);
    CU_ASSERT_DOUBLE_EQUAL(predicted, measured, 0.1 * measured);
}

/* The 8192-token row's scenario carries the gpt-oss-120b preset inline (a
 * preset's seq_len cannot be overridden by a table column): the same model
 * but for seq_len. */
static void test_inline_preset(void)
{
    char *text = NULL;
    CU_ASSERT_FATAL(g_file_get_contents(STEPS "nemo-gpt-oss-120b-8k.json", &text, NULL, NULL));
    cJSON *root = cJSON_Parse(text), *m = cJSON_GetObjectItem(root, "model");
    g_free(text);
    cJSON_AddStringToObject(m, "type", "transformer");
    char *mt = cJSON_Print(m);
    GError *err = NULL;
    Workload *in = workload_parse("inline", mt, strlen(mt), &err), *pre = workload_load("gpt-oss-120b", &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(in);
    CU_ASSERT_PTR_NOT_NULL_FATAL(pre);
    const WorkloadTransformer *a = workload_transformer(in), *b = workload_transformer(pre);
    CU_ASSERT_EQUAL(a->seq_len, 8192);
    int fa[] = {a->layers, a->hidden, a->heads, a->kv_heads, a->ffn, a->vocab, a->gated_mlp, a->tied_embeddings, a->bias,
                a->dropout, a->norm, a->position, a->experts, a->top_k, a->expert_ffn, a->shared_experts, a->head_dim,
                a->qk_norm, a->sliding_window, a->full_attention_every};
    int fb[] = {b->layers, b->hidden, b->heads, b->kv_heads, b->ffn, b->vocab, b->gated_mlp, b->tied_embeddings, b->bias,
                b->dropout, b->norm, b->position, b->experts, b->top_k, b->expert_ffn, b->shared_experts, b->head_dim,
                b->qk_norm, b->sliding_window, b->full_attention_every};
    for (size_t i = 0; i < G_N_ELEMENTS(fa); i++)
        CU_ASSERT_EQUAL(fa[i], fb[i]);
    CU_ASSERT_EQUAL(workload_params_total(in), workload_params_total(pre));
    workload_free(in);
    workload_free(pre);
    free(mt);
    cJSON_Delete(root);
}

/* Qwen3-235B on 4 H100 nodes at tp 2 x pp 8 x dp 2, PAR appended. */
static cJSON *fold_run(const char *par, GError **err)
{
    return steps_run_with("fold.json",
                          "{\"name\": \"fold\", \"accelerator\": \"h100-sxm\", \"topology\": \"dgx-h100-cluster\", "
                          "\"nodes\": 4, \"model\": \"qwen3-235b-a22b\", \"global_batch\": 64, \"micro_batch\": 1, "
                          "\"precision\": \"fp8\", \"optimizer\": \"adam\", \"parallelism\": {\"dp\": 2, \"tp\": 2, "
                          "\"pp\": 8, \"sequence_parallel\": true, \"account_for_embedding_in_pipeline_split\": true, "
                          "\"account_for_loss_in_pipeline_split\": true",
                          par, "}}", err);
}

static double step_of(cJSON *res)
{
    double t = res ? cJSON_GetObjectItem(res, "step_time_s")->valuedouble : -1;
    cJSON_Delete(res);
    return t;
}

/* Megatron-Core's expert_tensor_parallel_size ("expert_tp"): = tp is the
 * default to the last bit; 1 folds the experts over tp x dp (ep 4 > dp 2
 * runs) with the device's expert FLOPs unchanged; what cannot fold is
 * refused at its key. */
static void test_expert_tp(void)
{
    GError *err = NULL;
    double plain = step_of(fold_run(", \"ep\": 2", &err)), same = step_of(fold_run(", \"ep\": 2, \"expert_tp\": 2", &err));
    CU_ASSERT_TRUE(plain > 0);
    CU_ASSERT_EQUAL(plain, same);
    CU_ASSERT_TRUE(step_of(fold_run(", \"ep\": 4, \"expert_tp\": 1", &err)) > 0);
    CU_ASSERT_PTR_NULL(fold_run(", \"ep\": 4", &err)); /* ep over dp only */
    CU_ASSERT_PTR_NOT_NULL_FATAL(err);
    CU_ASSERT_PTR_NOT_NULL(strstr(err->message, "must divide the experts (128) and dp (2)"));
    g_clear_error(&err);
    CU_ASSERT_PTR_NULL(fold_run(", \"ep\": 8, \"expert_tp\": 1", &err)); /* 8 does not divide tp x dp = 4 */
    CU_ASSERT_PTR_NOT_NULL_FATAL(err);
    CU_ASSERT_PTR_NOT_NULL(strstr(err->message, "ep x expert_tp (8) must divide tp x dp (4)"));
    g_clear_error(&err);
    Workload *w = workload_load("qwen3-235b-a22b", &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(w);
    WorkloadParallel a = workload_parallel_default(), b;
    a.tp = 2;
    a.sequence_parallel = true;
    a.ep = 2;
    b = a;
    b.ep = 4;
    b.etp = 1;
    CU_ASSERT_DOUBLE_EQUAL(workload_layer_forward_flops(w, 0, 1, &a), workload_layer_forward_flops(w, 0, 1, &b),
                           1e-9 * workload_layer_forward_flops(w, 0, 1, &a));
    workload_free(w);
}

/* The later H100 rows (26.02.01 to 26.06, nemo-bridge-h100-moe-26.02.01-26.06.csv):
 * the same presets, so the same model inputs, as the 26.02 rows of the same
 * layout.  Qwen3-30B-A3B's PP 2 x VP 12, EP 8 layout ran at 5113 tokens/s a
 * GPU in 26.02 and 9058 in 26.02.01 (1.77x, the software's alone): the
 * model's one prediction, 3.28x the first, is 1.85x the second; its later
 * rows (EP 16) are nearer too.  Asserted: the same prediction for the same
 * inputs, and every later Qwen3-30B row nearer its prediction than 26.02's. */
static void test_later(void)
{
    Summary old = run_table(STEPS "nemo-bridge-moe.csv"), later = run_table(STEPS "nemo-bridge-h100-moe-26.02.01-26.06.csv");
    CU_ASSERT_EQUAL(later.n, 10);
    CU_ASSERT_EQUAL(later.fits, later.n);
    /* a guard: 56.1 % and 85.3 % on 2026-12-07 with the presets' dispatcher
     * and all-to-all overlap; 14.9 % and 56.3 % with NCCL's all-to-all
     * unoverlapped in every row */
    CU_ASSERT_TRUE(later.median <= 0.60);
    CU_ASSERT_TRUE(later.worst <= 0.90);
    const double old_30b = old.row_logr[5]; /* 26.02 DGX-H100 FP8, Qwen3-30B-A3B */
    const int rows_30b[] = {0, 2, 5, 8};     /* 26.06, 26.04.01, 26.04, 26.02.01 */
    for (int k = 0; k < 4; k++)
        CU_ASSERT_TRUE(fabs(later.row_logr[rows_30b[k]]) < fabs(old_30b));
    /* 26.02.01's row: the 26.02 row's inputs; the step ratio is the measured one */
    CU_ASSERT_DOUBLE_EQUAL(later.row_logr[8] - old_30b, log(9058.0 / 5113.0), 1e-3);
    printf("Qwen3-30B-A3B on 16 H100, PP 2 x VP 12, EP 8: 26.02 %+.1f%%, 26.02.01 %+.1f%% (the same prediction)\n",
           100 * expm1(-old_30b), 100 * expm1(-later.row_logr[8]));
}

/* dgxc-benchmarking v25.05.05's DeepSeek-V3 BF16 rows (NeMo 25.04, token
 * drop, MTP 1; tests/data/steps/dgxc-v25.05.05-deepseek-v3.csv), held out:
 * H100 on 512 and 1024 GPUs at +22.3 % and +27.0 %, GB200 on 128 and 256 at
 * +202.4 % and +201.1 % (10 % MFU measured: the model has nothing of what
 * held those runs back).  Every row printed; a guard at today's figures. */
static void test_dgxc_deepseek(void)
{
    Summary s = run_table(STEPS "dgxc-v25.05.05-deepseek-v3.csv");
    CU_ASSERT_EQUAL(s.n, 4);
    CU_ASSERT_EQUAL(s.fits, s.n);
    CU_ASSERT_TRUE(s.logr[s.n - 1] < 0); /* every row faster than measured */
    CU_ASSERT_TRUE(s.worst <= 2.2);
    for (int i = 0; i < 2; i++) /* the H100 rows */
        CU_ASSERT_TRUE(fabs(expm1(-s.row_logr[i])) <= 0.30);
}

/* The memory lines add up to the total wherever the experts are sharded
 * apart from the dense weights: ZeRO-3 of the experts over the ranks that
 * hold the same ones (ep < dp), with and without a pipeline (where FSDP
 * keeps a stage's experts gathered and their gradients whole). */
static void test_memory_lines(void)
{
    static const char *const lines[] = {"weights", "gradients", "optimizer_state", "activations",
                                        "buffers", "working_set", "reserve"};
    const char *const cases[][7] = {
        {"automodel-qwen3-30b-a3b.json", "parallelism.ep", "2", NULL},
        {"automodel-qwen3-30b-a3b.json", "parallelism.ep", "8", NULL},
        {"automodel-deepseek-v3.json", "parallelism.ep", "2", NULL},
        {"automodel-deepseek-v3.json", "parallelism.ep", "8", "parallelism.zero_impl", "fsdp", NULL},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        cJSON *res = steps_file_run(cases[i][0], cases[i] + 1);
        const cJSON *m = cJSON_GetObjectItem(res, "memory_per_device_bytes");
        double sum = 0, total = cJSON_GetObjectItem(m, "total")->valuedouble;
        for (size_t k = 0; k < G_N_ELEMENTS(lines); k++)
            sum += cJSON_GetObjectItem(m, lines[k])->valuedouble;
        printf("\n%s ep %s: lines %.3f GiB, total %.3f GiB", cases[i][0], cases[i][2], sum / 1073741824.0,
               total / 1073741824.0);
        CU_ASSERT_DOUBLE_EQUAL(sum, total, 1e-9 * total);
        CU_ASSERT_TRUE(cJSON_GetObjectItem(m, "buffers")->valuedouble > 0);
        cJSON_Delete(res);
    }
    printf("\n");
}

/* The band a mixture-of-experts step carries (models/step_band.c): the p10
 * and p90 of log(predicted / measured step) over every MoE row of the
 * published tables in tests/data/steps (Megatron-Core through NeMo and
 * Megatron-Bridge 25.02-26.06, NeMo AutoModel, dgxc-benchmarking: Mixtral,
 * Qwen3, GPT-OSS, DeepSeek-V3 and Kimi K2 on H100, B200 and GB200), as a run
 * reports it.  The model is too fast on most of these rows for causes not
 * identified (models/README.md), so the step's band is at least that wide:
 * a statement of the model's misses, not a correction of them. */
static void test_band(void)
{
    static const char *const files[] = {
        "nemo-bridge-moe.csv", "nemo-bridge-h100-moe-26.02.01-26.06.csv", "nemo-bridge-blackwell-26.02.01-26.06.csv",
        "nemo-bridge-deepseek-v3.csv", "dgxc-v25.05.05-deepseek-v3.csv", "automodel-h100.csv",
        "nemo-25.02-b200-fp8-heldout.csv", "nemo-25.04-gb200-fp8.csv",
    };
    double all[512];
    int n = 0;
    for (size_t f = 0; f < G_N_ELEMENTS(files); f++) {
        char *path = g_build_filename(STEPS, files[f], NULL);
        Summary s = run_table(path);
        g_free(path);
        for (int i = 0; i < s.n && n < 512; i++)
            if (s.row_moe[i])
                all[n++] = s.row_logr[i];
    }
    qsort(all, (size_t)n, sizeof *all, cmp_double);
    double p10 = quantile(all, n, 0.1), p50 = quantile(all, n, 0.5), p90 = quantile(all, n, 0.9);
    /* the 26.06 DGX-H100 row of nemo-bridge-h100-moe-26.02.01-26.06.csv */
    const char *kv[] = {"accelerator", "h100-sxm", "topology", "dgx-h100-cluster", "nodes", "2", "fp8_recipe",
                        "tensorwise", "micro_batch", "1", "global_batch", "1024", "cross_entropy", "te",
                        "parallelism.dp", "16", "parallelism.ep", "16", "parallelism.ep_dispatcher", "deepep", NULL};
    cJSON *res = steps_file_run("nemo-qwen3-30b-a3b.json", kv);
    const cJSON *u = cJSON_GetObjectItem(res, "uncertainty"), *b = cJSON_GetObjectItem(u, "moe_log_band");
    double step = cJSON_GetObjectItem(res, "step_time_s")->valuedouble, measured = 1024 * 4096 / 141216.0;
    double lo = cJSON_GetObjectItem(res, "step_time_p10_s")->valuedouble,
           hi = cJSON_GetObjectItem(res, "step_time_p90_s")->valuedouble;
    printf("\n%d MoE rows: log(predicted/measured step) p10 %.3f median %.3f p90 %.3f; a MoE step's band [%.3f, %.3f]\n",
           n, p10, p50, p90, cJSON_GetNumberValue(cJSON_GetArrayItem(b, 0)), cJSON_GetNumberValue(cJSON_GetArrayItem(b, 1)));
    printf("Qwen3-30B-A3B, 26.06 on 16 H100: %.1f s, p10-p90 %.1f-%.1f s, measured %.1f s\n", step, lo, hi, measured);
    CU_ASSERT_EQUAL(n, 78);
    CU_ASSERT_DOUBLE_EQUAL(cJSON_GetNumberValue(cJSON_GetArrayItem(b, 0)), p10, 0.005);
    CU_ASSERT_DOUBLE_EQUAL(cJSON_GetNumberValue(cJSON_GetArrayItem(b, 1)), p90, 0.005);
    /* measured = predicted / e^r: the step's p90 at least predicted / e^p10
     * (within the constant's rounding); the run inside its band */
    CU_ASSERT_TRUE(hi >= step * exp(-p10 - 0.005));
    CU_ASSERT_TRUE(lo <= step);
    CU_ASSERT_TRUE(measured >= lo && measured <= hi);
    cJSON_Delete(res);
    /* a dense step keeps the chip's band */
    res = steps_file_run("nemo-h100-fp8-llama3-70b.json", NULL);
    CU_ASSERT_PTR_NULL(cJSON_GetObjectItem(cJSON_GetObjectItem(res, "uncertainty"), "moe_log_band"));
    CU_ASSERT_TRUE(cJSON_GetObjectItem(res, "step_time_p90_s")->valuedouble <
                   cJSON_GetObjectItem(res, "step_time_s")->valuedouble * 1.3);
    cJSON_Delete(res);
}

static const TestCase tests[] = {
    {"expert_tp: Megatron-Core's MoE parallel folding", test_expert_tp},
    {"the 8192-token scenario's inline model is the gpt-oss-120b preset", test_inline_preset},
    {"NeMo 25.09-26.02 Qwen3 / GPT-OSS MoE on H100/B200/GB200, held out: every row with its error", test_table},
    {"EP 64 across 8 B200 nodes: the all-to-all's share of the step", test_cross_node_alltoall},
    {"NeMo 26.02.01-26.06 on H100: the same inputs, later software", test_later},
    {"dgxc-benchmarking v25.05.05 DeepSeek-V3 on H100 and GB200, held out: every row with its error", test_dgxc_deepseek},
    {"the memory lines add up to the total under ZeRO-3 of the experts (review 8)", test_memory_lines},
    {"the MoE tables' spread: a MoE step's band", test_band},
};

TEST_MAIN("steps_nemo_moe", tests)
