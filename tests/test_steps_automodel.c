/* NeMo AutoModel's DGX-H100 pre-training table (PyTorch FSDP2 with expert
 * parallelism through DeepEP; tests/data/steps/automodel-h100.csv: the
 * provenance, the mapping and the rows left out in its header), never
 * fitted on: Qwen3 MoE 30B on 8 GPUs (two measurements), DeepSeek V3 and
 * Kimi K2 on 256, and a dense Llama 3.1 70B with FSDP 32 x context
 * parallelism 2 on 64.  Every row printed with its error; asserted: a
 * regression guard at today's figures plus a margin (the table's errors on
 * 2026-12-07 are in the test's output), the dispatcher's and the routing's
 * effect on the Qwen3 row, and the ranks a token reaches under each
 * routing. */
#include "step_build.h"
#include "test_steps.h"

static void test_table(void)
{
    Summary s = run_table(STEPS "automodel-h100.csv");
    CU_ASSERT_EQUAL(s.n, 5);
    CU_ASSERT_TRUE(s.median <= 0.12);
    CU_ASSERT_TRUE(s.worst <= 0.30);
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

static void test_dispatchers(void)
{
    double rr = qwen_step("deepep", "round_robin"), uni = qwen_step("deepep", "uniform"),
           all = qwen_step("alltoall", "uniform");
    printf("\nQwen3 MoE 30B on 8 H100: DeepEP round robin %.2f s, DeepEP uniform %.2f s, alltoall %.2f s "
           "(measured 21.77 s)\n", rr, uni, all);
    CU_ASSERT_TRUE(rr < uni && uni < all);
}

static const TestCase tests[] = {
    {"NeMo AutoModel on DGX H100 (FSDP2, EP over DeepEP, CP), held out: every row with its error", test_table},
    {"the ranks a token's experts fall on, round robin and uniform", test_ranks_per_token},
    {"the Qwen3 row by dispatcher and routing", test_dispatchers},
};

TEST_MAIN("steps_automodel", tests)
