/* NeMo AutoModel's DGX-H100 pre-training table (PyTorch FSDP2 with expert
 * parallelism through DeepEP; tests/data/steps/automodel-h100.csv: the
 * provenance, the mapping and the rows left out in its header), never
 * fitted on: Qwen3 MoE 30B on 8 GPUs (two measurements), DeepSeek V3 on 256
 * and 1024, Kimi K2 on 256, and a dense Llama 3.1 70B with FSDP 32 x context
 * parallelism 2 on 64.  Every row printed with its error; asserted: a
 * regression guard at today's figures plus a margin (median 13.8 %, max
 * 29.3 % on 2026-12-07; every row predicted to fit, as every one ran with
 * its bf16 weights and moments), the dispatcher's and the routing's effect on the
 * Qwen3 row, the ranks a token reaches under each routing, DeepEP's
 * forwarding across nodes and a pipeline schedule per accumulation step. */
#include "step_build.h"
#include "test_steps.h"

static void test_table(void)
{
    Summary s = run_table(STEPS "automodel-h100.csv");
    CU_ASSERT_EQUAL(s.n, 6);
    CU_ASSERT_TRUE(s.median <= 0.16);
    CU_ASSERT_TRUE(s.worst <= 0.34);
    CU_ASSERT_EQUAL(s.fits, s.n);
}

/* A token's ranks: round robin over E / ep consecutive experts per rank
 * (Qwen3: 8 of 16 on one rank; DeepSeek V3: 8 across two ranks of 4; Kimi
 * K2: ranks of 12, the starts 0, 8, 4 mod 12 reach 1, 2 and 1 ranks), and
 * uniform routing's closed form against a count over every choice of k. */
static void test_ranks_per_token(void)
{
    CU_ASSERT_DOUBLE_EQUAL(moe_ranks_per_token(128, 8, 8, true), 1.0, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(moe_ranks_per_token(256, 8, 64, true), 2.0, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(moe_ranks_per_token(384, 8, 32, true), 4.0 / 3, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(moe_ranks_per_token(8, 8, 8, true), 8.0, 1e-12);
    /* 8 experts on 4 ranks, k = 3: count the ranks over all C(8, 3) = 56 choices */
    long total = 0, n = 0;
    for (int a = 0; a < 8; a++)
        for (int b = a + 1; b < 8; b++)
            for (int c = b + 1; c < 8; c++, n++)
                total += 1 + (b / 2 != a / 2) + (c / 2 != b / 2 && c / 2 != a / 2);
    CU_ASSERT_DOUBLE_EQUAL(moe_ranks_per_token(8, 3, 4, false), (double)total / n, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(moe_ranks_per_token(128, 8, 1, false), 1.0, 1e-12);
}

/* The Qwen3 row's step with each dispatcher and routing: DeepEP sending a
 * token once per rank beats Megatron's alltoall dispatcher sending every
 * copy, and the benchmark's round-robin gate (one rank a token) beats
 * uniform routing (5.3 ranks of 8 a token). */
static double qwen_step(const char *dispatcher, const char *routing)
{
    const char *kv[] = {"parallelism.ep_dispatcher", dispatcher, "parallelism.moe_routing", routing, NULL};
    return steps_file_step("automodel-qwen3-30b-a3b.json", kv);
}

/* run --json's config names the dispatcher, the routing and the ranks a
 * token reaches (1 for the Qwen3 row). */
static void test_reported(void)
{
    cJSON *res = steps_file_run("automodel-qwen3-30b-a3b.json", NULL);
    const cJSON *cfg = cJSON_GetObjectItem(res, "config");
    CU_ASSERT_STRING_EQUAL(cJSON_GetStringValue(cJSON_GetObjectItem(cfg, "ep_dispatcher")), "deepep");
    CU_ASSERT_STRING_EQUAL(cJSON_GetStringValue(cJSON_GetObjectItem(cfg, "moe_routing")), "round_robin");
    CU_ASSERT_DOUBLE_EQUAL(cJSON_GetNumberValue(cJSON_GetObjectItem(cfg, "ep_ranks_per_token")), 1.0, 1e-12);
    cJSON_Delete(res);
}

static void test_dispatchers(void)
{
    double rr = qwen_step("deepep", "round_robin"), uni = qwen_step("deepep", "uniform"),
           all = qwen_step("alltoall", "uniform");
    printf("\nQwen3 MoE 30B on 8 H100: DeepEP round robin %.2f s, DeepEP uniform %.2f s, alltoall %.2f s "
           "(measured 21.77 s)\n", rr, uni, all);
    CU_ASSERT_TRUE(rr < uni && uni < all);
}

static double coll_bytes(const cJSON *res, const char *name)
{
    const cJSON *u;
    cJSON_ArrayForEach(u, cJSON_GetObjectItem(res, "collectives"))
        if (!strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(u, "name")), name))
            return cJSON_GetNumberValue(cJSON_GetObjectItem(u, "bytes"));
    return -1;
}

/* DeepSeek V3's EP 64 over 8 nodes through DeepEP: a token crosses the
 * network once to the one node its two ranks are on (4096 tokens x 7168 x
 * 2 B a rank), then NVLink carries it to both ranks (twice that); with
 * Megatron's alltoall dispatcher all 8 copies cross as one all-to-all. */
static void test_internode(void)
{
    cJSON *res = steps_file_run("automodel-deepseek-v3.json", NULL);
    double row = 4096.0 * 7168 * 2;
    CU_ASSERT_DOUBLE_EQUAL(coll_bytes(res, "ep_dispatch"), row, 1);
    CU_ASSERT_DOUBLE_EQUAL(coll_bytes(res, "ep_combine"), row, 1);
    CU_ASSERT_DOUBLE_EQUAL(coll_bytes(res, "ep_dispatch_nvlink"), 2 * row, 1);
    double deepep = cJSON_GetNumberValue(cJSON_GetObjectItem(res, "step_time_s"));
    cJSON_Delete(res);
    const char *all[] = {"parallelism.ep_dispatcher", "alltoall", "parallelism.moe_routing", "uniform", NULL};
    res = steps_file_run("automodel-deepseek-v3.json", all);
    CU_ASSERT_DOUBLE_EQUAL(coll_bytes(res, "ep_dispatch"), 8 * row, 1);
    CU_ASSERT_TRUE(coll_bytes(res, "ep_dispatch_nvlink") < 0);
    CU_ASSERT_TRUE(cJSON_GetNumberValue(cJSON_GetObjectItem(res, "step_time_s")) > deepep);
    cJSON_Delete(res);
}

/* DeepSeek V3 on 1024 GPUs: FSDP over 256 ranks with EP 64 shards each
 * rank's 4 experts over the 4 ranks holding the same ones (ZeRO-3 over the
 * expert-data-parallel group): their 4 x 3 x 7168 x 2048 bf16 weights
 * gathered before each use, their gradients reduce-scattered in fp32; on
 * 256 GPUs (EP takes every rank) there is nothing to shard. */
static void test_expert_fsdp(void)
{
    const char *k1024[] = {"nodes", "128", "parallelism.dp", "256", "global_batch", "8192", NULL};
    cJSON *res = steps_file_run("automodel-deepseek-v3.json", k1024);
    double w = 4.0 * 3 * 7168 * 2048;
    CU_ASSERT_DOUBLE_EQUAL(coll_bytes(res, "zero3_expert_allgather"), 2 * w, 1);
    CU_ASSERT_DOUBLE_EQUAL(coll_bytes(res, "zero3_expert_reducescatter"), 4 * w, 1);
    cJSON_Delete(res);
    res = steps_file_run("automodel-deepseek-v3.json", NULL);
    CU_ASSERT_TRUE(coll_bytes(res, "zero3_expert_allgather") < 0);
    cJSON_Delete(res);
}

/* Kimi K2's two accumulation steps, each a pipeline schedule of 8
 * micro-batches through PP 8 x VP 4: two fills and drains where one
 * schedule of all 16 has one, the same length each (the warm-up depends
 * on pp and the chunks, not on the micro-batches). */
static void test_flushes(void)
{
    const char *one[] = {"parallelism.pipeline_microbatches", "16", NULL};
    cJSON *a = steps_file_run("automodel-kimi-k2.json", NULL), *b = steps_file_run("automodel-kimi-k2.json", one);
    double two = cJSON_GetNumberValue(cJSON_GetObjectItem(cJSON_GetObjectItem(a, "breakdown"), "pipeline_bubble")),
           single = cJSON_GetNumberValue(cJSON_GetObjectItem(cJSON_GetObjectItem(b, "breakdown"), "pipeline_bubble"));
    printf("\nKimi K2, PP 8 x VP 4: bubble %.3f s in two schedules of 8, %.3f s in one of 16\n", two, single);
    CU_ASSERT_TRUE(single > 0 && two / single > 1.8 && two / single < 2.2);
    CU_ASSERT_TRUE(cJSON_GetNumberValue(cJSON_GetObjectItem(a, "step_time_s")) >
                   cJSON_GetNumberValue(cJSON_GetObjectItem(b, "step_time_s")));
    cJSON_Delete(a);
    cJSON_Delete(b);
}

/* The Qwen3 row's memory with the bf16 weights and moments AutoModel
 * trains with against an fp32 master copy and moments: 8 bytes a parameter
 * more (16 against 8), which took the row past the 80 GiB it ran in. */
static double mem(const cJSON *res, const char *key)
{
    return cJSON_GetNumberValue(cJSON_GetObjectItem(cJSON_GetObjectItem(res, "memory_per_device_bytes"), key));
}

static void test_optimizer_precision(void)
{
    const char *master[] = {"master_weights", "true", "optimizer_moments", "fp32", NULL};
    cJSON *a = steps_file_run("automodel-qwen3-30b-a3b.json", NULL), *b = steps_file_run("automodel-qwen3-30b-a3b.json", master);
    double params = mem(a, "gradients") / 2, gib = 1024.0 * 1024 * 1024;
    printf("\nQwen3 MoE 30B on 8 H100: %.2f GiB with bf16 weights and moments, %.2f GiB with an fp32 master and moments\n",
           mem(a, "total") / gib, mem(b, "total") / gib);
    CU_ASSERT_DOUBLE_EQUAL(mem(b, "total") - mem(a, "total"), 8 * params, 0.01 * 8 * params);
    CU_ASSERT_TRUE(cJSON_IsTrue(cJSON_GetObjectItem(a, "fits")) && !cJSON_IsTrue(cJSON_GetObjectItem(b, "fits")));
    cJSON_Delete(a);
    cJSON_Delete(b);
}

static const TestCase tests[] = {
    {"NeMo AutoModel on DGX H100 (FSDP2, EP over DeepEP, CP), held out: every row with its error", test_table},
    {"the ranks a token's experts fall on, round robin and uniform", test_ranks_per_token},
    {"the Qwen3 row by dispatcher and routing", test_dispatchers},
    {"run --json reports the dispatcher, the routing and the ranks a token reaches", test_reported},
    {"DeepEP across nodes: once a node over the network, then NVLink", test_internode},
    {"ZeRO-3 of experts over the ranks holding the same ones", test_expert_fsdp},
    {"pipeline_microbatches: a schedule an accumulation step, a bubble each", test_flushes},
    {"master_weights and optimizer_moments: the Qwen3 row's memory", test_optimizer_precision},
};

TEST_MAIN("steps_automodel", tests)
