/* NeMo 25.09 / 25.11 / 26.02 (Megatron-Bridge's performance summary) MoE
 * pre-training rows with an attention wider than the hidden size and a
 * sliding window: Qwen3-30B-A3B, Qwen3-235B-A22B and GPT-OSS 120B on
 * DGX-H100, DGX-B200 and DGX-GB200 (tests/data/steps/nemo-bridge-moe.csv:
 * provenance, the mapping, the rows left out, and the diagnosis of the
 * errors in its header), never fitted on.  Every row printed with its error;
 * asserted: a regression guard at today's figures plus a margin (median
 * |tokens/s error| <= 60 %, max <= 250 %: 56.0 % and 241.3 % on 2026-12-04),
 * not a goal and not a fit.  The model is too fast on every row: it has no
 * fixed per-layer cost for a fine-grained MoE layer (Qwen3-30B at micro-batch
 * 1: 2.6-3.4x), and GPT-OSS's per-token layer compute is short by ~1.8x on
 * GB200; the cross-node all-to-all of EP 64 on 8 B200 nodes is right (the
 * B200 - GB200 step difference, 4.9 s predicted, 5.0 s measured). */
#include "test_steps.h"

static void test_table(void)
{
    Summary s = run_table(STEPS "nemo-bridge-moe.csv");
    CU_ASSERT_TRUE(s.n == 20);
    CU_ASSERT_TRUE(s.median <= 0.60);
    CU_ASSERT_TRUE(s.worst <= 2.50);
}

/* The EP 64 all-to-all through 8 B200 nodes' NICs against the same step on
 * one GB200 NVL72 rack (26.02 GPT-OSS rows 1 and 2): the step difference
 * the model predicts is the measured one within 10 % (4.87 s vs 4.99 s). */
static double row_step(const char *accel, const char *topo, int nodes)
{
    char *text = NULL;
    CU_ASSERT_FATAL(g_file_get_contents(STEPS "nemo-gpt-oss-120b.json", &text, NULL, NULL));
    cJSON *root = cJSON_Parse(text);
    g_free(text);
    char n[16];
    snprintf(n, sizeof n, "%d", nodes);
    set_key(root, "accelerator", accel);
    set_key(root, "topology", topo);
    set_key(root, "nodes", n);
    cJSON *res = steps_run_scenario("nemo-gpt-oss-120b.json", root, accel);
    double t = cJSON_GetObjectItem(res, "step_time_s")->valuedouble;
    cJSON_Delete(res);
    cJSON_Delete(root);
    return t;
}

static void test_cross_node_alltoall(void)
{
    double tokens = 1280.0 * 4096 / 64; /* per GPU and step */
    double measured = tokens / 8047 - tokens / 15784;
    double predicted = row_step("b200", "dgx-b200-cluster", 8) - row_step("gb200", "gb200-nvl72", 1);
    printf("\nEP 64: B200 x 8 nodes - GB200 NVL72 step: predicted %.2f s, measured %.2f s\n", predicted, measured);
    CU_ASSERT_DOUBLE_EQUAL(predicted, measured, 0.1 * measured);
}

static const TestCase tests[] = {
    {"NeMo 25.09-26.02 Qwen3 / GPT-OSS MoE on H100/B200/GB200, held out: every row with its error", test_table},
    {"EP 64 across 8 B200 nodes: the all-to-all's share of the step", test_cross_node_alltoall},
};

TEST_MAIN("steps_nemo_moe", tests)
