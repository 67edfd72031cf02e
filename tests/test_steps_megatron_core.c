/* Megatron-LM's H100 scaling runs (Megatron-Core r0.8.0, 2024), held out
 * for h100-sxm, never fitted on: the weak-scaling table (GPT 1.7B to 462B on
 * 48 to 6144 H100s, TP 1-8, PP 1-16, DP 48, 4096-token sequences;
 * tests/data/steps/megatron-core-0.8-h100-weak-scaling.csv) and the GPT-3
 * strong-scaling end points (96 and 4608 GPUs;
 * megatron-core-0.8-h100-strong-scaling.csv); provenance, the derived
 * tokens/s and what each column assumes are in their headers.  Every row
 * printed at the micro-batch column (the largest of 1, 2, 4 that the model
 * predicts to fit, a planner's rule chosen after seeing the rows at
 * micro-batch 1) and at micro-batch 1.
 * Asserted: the table as printed (aggregate = TFLOP/s x GPUs, MFU over
 * BF16's 989 TFLOP/s), the architecture's size, the column's rule, the
 * physics behind it (at one of four micro-batches the 32B row's fp32
 * reduce-scatter stays exposed), and the errors at today's figures. */
#include "test_steps.h"

#define TABLE STEPS "megatron-core-0.8-h100-weak-scaling.csv"
#define STRONG STEPS "megatron-core-0.8-h100-strong-scaling.csv"

/* Row K of table FILE with its header (row_open), freed by row_close. */
typedef struct {
    gchar *text, **lines, **head, **f;
} Row;

static Row row_open(const char *file, int k)
{
    Row r = {0};
    r.lines = steps_table_rows(file, &r.text);
    r.head = steps_cells(r.lines[0]);
    r.f = steps_cells(r.lines[k]);
    return r;
}

static void row_close(Row *r)
{
    g_strfreev(r->f);
    g_strfreev(r->head);
    g_strfreev(r->lines);
    g_free(r->text);
}

/* A row's step result with micro_batch MB (0: the row's own). */
static cJSON *row_run(const char *file, gchar **head, gchar **f, int mb)
{
    cJSON *root = steps_row_scenario(file, head, f);
    if (mb) {
        char v[16];
        g_snprintf(v, sizeof v, "%d", mb);
        set_key(root, "micro_batch", v);
    }
    cJSON *res = steps_run_scenario(file, root, f[col(head, "ref.model")]);
    cJSON_Delete(root);
    return res;
}

/* The scenario's model (megatron-core-0.8-h100-gpt.json) at L layers,
 * hidden H and HEADS heads: its parameter count. */
static double model_params(const char *l, const char *h, const char *heads)
{
    char *m = g_strdup_printf("{\"name\": \"gpt\", \"type\": \"transformer\", \"source\": \"test\", \"layers\": %s, "
                              "\"hidden\": %s, \"heads\": %s, \"seq_len\": 4096, \"vocab\": 131072, "
                              "\"tied_embeddings\": false, \"position\": \"learned\", \"norm\": \"layernorm\"}",
                              l, h, heads);
    GError *err = NULL;
    Workload *w = workload_parse("gpt", m, strlen(m), &err);
    g_free(m);
    g_clear_error(&err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(w);
    double p = workload_params_total(w);
    workload_free(w);
    return p;
}

/* The printed table agrees with itself: aggregate petaFLOP/s is TFLOP/s x
 * GPUs, MFU is TFLOP/s over 989 (989.5 as NVIDIA rounds it), GPUs = tp x
 * pp x dp; the inline model has the table's parameter count (12 L h^2 +
 * 2 V h; learned positions (s h), norms and biases add under 1 %). */
static void test_printed(void)
{
    gchar *text = NULL, **lines = steps_table_rows(TABLE, &text), **head = steps_cells(lines[0]);
    int n = 0;
    for (int i = 1; lines[i]; i++, n++) {
        gchar **f = steps_cells(lines[i]);
        double tf = atof(f[col(head, "ref.tflops_per_gpu")]), gpus = atof(f[col(head, "ref.gpus")]);
        CU_ASSERT_DOUBLE_EQUAL(tf * gpus / 1e3, atof(f[col(head, "ref.pflops")]), 0.051);
        CU_ASSERT_DOUBLE_EQUAL(100 * tf / 989, atof(f[col(head, "ref.mfu")]), 0.5);
        CU_ASSERT_EQUAL(atoi(f[col(head, "parallelism.tp")]) * atoi(f[col(head, "parallelism.pp")]) *
                            atoi(f[col(head, "parallelism.dp")]),
                        (int)gpus);
        double p = model_params(f[col(head, "model.layers")], f[col(head, "model.hidden")], f[col(head, "model.heads")]),
               want = atof(f[col(head, "ref.params")]);
        if (!(p >= want && p / want - 1 < 0.01))
            printf("%s: %.0f parameters, the table %.0f\n", f[1], p, want);
        CU_ASSERT_TRUE(p >= want && p / want - 1 < 0.01);
        g_strfreev(f);
    }
    CU_ASSERT_EQUAL(n, 9);
    g_strfreev(head);
    g_strfreev(lines);
    g_free(text);
}

/* The micro-batch column is the rule: 1, 2 or 4, dividing the batch per
 * pipeline, the row's fits, twice it (up to that batch and 4) does not. */
static void check_rule(const char *file)
{
    gchar *text = NULL, **lines = steps_table_rows(file, &text), **head = steps_cells(lines[0]);
    for (int i = 1; lines[i]; i++) {
        gchar **f = steps_cells(lines[i]);
        int mb = atoi(f[col(head, "micro_batch")]), per = atoi(f[col(head, "global_batch")]) /
                                                         (atoi(f[col(head, "parallelism.dp")]) * atoi(f[col(head, "parallelism.pp")]));
        CU_ASSERT_TRUE((mb == 1 || mb == 2 || mb == 4) && per % mb == 0);
        cJSON *own = row_run(file, head, f, 0);
        CU_ASSERT_TRUE(cJSON_IsTrue(cJSON_GetObjectItem(own, "fits")));
        cJSON_Delete(own);
        if (2 * mb <= 4 && per % (2 * mb) == 0) {
            cJSON *twice = row_run(file, head, f, 2 * mb);
            CU_ASSERT_FALSE(cJSON_IsTrue(cJSON_GetObjectItem(twice, "fits")));
            cJSON_Delete(twice);
        }
        g_strfreev(f);
    }
    g_strfreev(head);
    g_strfreev(lines);
    g_free(text);
}

static void test_micro_batch_rule(void)
{
    check_rule(TABLE);
    check_rule(STRONG);
}

/* Why the rule: the 32B row (TP 8, DP 48 across 48 nodes) reduces 15.7 GB
 * of fp32 gradients per GPU per step through one 400G NIC, ~0.38 s, behind
 * only the last micro-batch's backward; at 4 micro-batches of 1 most of it
 * is exposed, at one micro-batch of 4 little. */
static void test_exposed_at_mb1(void)
{
    Row r = row_open(TABLE, 4);
    CU_ASSERT_STRING_EQUAL(r.f[col(r.head, "ref.model")], "32b");
    cJSON *one = row_run(TABLE, r.head, r.f, 1), *four = row_run(TABLE, r.head, r.f, 4);
    double e1 = steps_num(cJSON_GetObjectItem(one, "breakdown"), "exposed_communication"),
           e4 = steps_num(cJSON_GetObjectItem(four, "breakdown"), "exposed_communication");
    printf("\n32B: exposed communication %.3f s at 4 micro-batches of 1, %.3f s at one of 4\n", e1, e4);
    CU_ASSERT_TRUE(e1 > 0.3 && e4 < 0.15);
    cJSON_Delete(one);
    cJSON_Delete(four);
    row_close(&r);
}

/* The reserve of the row at micro-batch 4 in PRECISION, with
 * tp_comm_overlap ON or not. */
static double reserve_of(const Row *r, const char *precision, bool on)
{
    cJSON *root = steps_row_scenario(TABLE, r->head, r->f);
    set_key(root, "micro_batch", "4");
    set_key(root, "precision", precision);
    set_key(root, "parallelism.tp_comm_overlap", on ? "true" : "false");
    cJSON *res = steps_run_scenario(TABLE, root, "70b");
    double b = steps_num(cJSON_GetObjectItem(res, "memory_per_device_bytes"), "reserve");
    if (on && !strcmp(precision, "bf16"))
        CU_ASSERT_FALSE(cJSON_IsTrue(cJSON_GetObjectItem(res, "fits")));
    cJSON_Delete(res);
    cJSON_Delete(root);
    return b;
}

/* Transformer Engine's userbuffers under tp_comm_overlap: ten buffers of
 * (4096 x micro-batch) x hidden, 2 bytes each in BF16; in FP8 the six
 * all-gather ones 1 byte, held outside the caching allocator (the
 * reserve).  The 70B row at micro-batch 4: 2.68 GB, which take it past 80
 * GiB (the rule's micro-batch 2). */
static void test_userbuffers(void)
{
    Row r = row_open(TABLE, 5);
    CU_ASSERT_STRING_EQUAL(r.f[col(r.head, "ref.model")], "70b");
    double elems = 4096.0 * 4 * 8192;
    CU_ASSERT_DOUBLE_EQUAL(reserve_of(&r, "bf16", true) - reserve_of(&r, "bf16", false), 10 * 2 * elems, 1);
    CU_ASSERT_DOUBLE_EQUAL(reserve_of(&r, "fp8", true) - reserve_of(&r, "fp8", false), (6 * 1 + 4 * 2) * elems, 1);
    row_close(&r);
}

/* Held out: median and max |tokens/s error| at today's figures (the
 * issue's goal on unseen runs is a median within 10 %); micro-batch 1
 * printed beside, guarded too. */
static void test_table(void)
{
    Summary s = run_table(TABLE);
    CU_ASSERT_TRUE(s.n == 9 && s.fits == 9);
    CU_ASSERT_TRUE(s.median <= 0.03);
    CU_ASSERT_TRUE(s.worst <= 0.19);
    static const char *const mb1[] = {"micro_batch", "1", NULL};
    Summary m = run_table_keys(TABLE, mb1);
    CU_ASSERT_TRUE(m.n == 9 && m.fits == 9);
    CU_ASSERT_TRUE(m.median <= 0.07);
    CU_ASSERT_TRUE(m.worst <= 0.28);
}

/* The strong-scaling end points: GPT-3 (177B) at a fixed batch of 1152 on
 * 96 and 4608 GPUs, MFU 47 % and 42 % as printed (to 1 %: the ratio 0.874 to
 * 0.914); the model's MFU ratio printed against it, each end guarded at
 * today's error. */
static void test_strong(void)
{
    Summary s = run_table(STRONG);
    CU_ASSERT_TRUE_FATAL(s.n == 2 && s.fits == 2);
    double r = exp(s.row_logr[0] - s.row_logr[1]) * 42.0 / 47.0; /* MFU(4608) / MFU(96), predicted */
    printf("MFU from 96 to 4608 GPUs: measured 47%% -> 42%% (ratio 0.894, 0.874-0.914 as printed to 1%%); the model's ratio %.3f\n",
           r);
    CU_ASSERT_TRUE(fabs(s.row_logr[0]) <= 0.10 && fabs(s.row_logr[1]) <= 0.03);
}

static const TestCase tests[] = {
    {"the table as printed: aggregate, MFU, GPUs, parameter counts", test_printed},
    {"micro-batch column: the largest of 1, 2, 4 predicted to fit", test_micro_batch_rule},
    {"32B: the fp32 reduce-scatter exposed at 4 micro-batches of 1, not at one of 4", test_exposed_at_mb1},
    {"Transformer Engine's userbuffers under tp_comm_overlap: BF16 and FP8", test_userbuffers},
    {"Megatron-Core r0.8.0 H100 weak scaling, held out: every row with its error", test_table},
    {"Megatron-Core r0.8.0 GPT-3 strong scaling, 96 and 4608 GPUs, held out", test_strong},
};

TEST_MAIN("steps_megatron_core", tests)
