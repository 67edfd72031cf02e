/* IBM's fms-fsdp Llama table (PyTorch FSDP1 in eager mode, SDPA flash
 * attention, bf16) on 128 A100 80GB and 96 H100, held out, never fitted on:
 * another framework and other clusters than the llm-foundry, NeMo and
 * torchtitan tables (tests/data/steps/fms-fsdp-llama2.csv: provenance, the
 * mapping, what the sources leave unsaid; the two clusters' files beside
 * it say what they assume).  Every row printed; asserted, as guards at
 * today's figures plus a margin, not goals and not fits:
 *  - the FSDP rows with every block checkpointed (34b, 70b) within 10 %
 *    (-2.3 % to +4.1 % on 2026-12-06);
 *  - every row predicted to fit (all ran);
 *  - the table's median within 10 %, max within 40 % (4.0 % and 28.0 %).
 * The model is fast on the hybrid-sharded rows without checkpointing (7b,
 * 13b: +15 % to +28 %; +16 % to +34 % before the replicas' all-reduces
 * shared the A100 nodes' four NICs, par_contention.c), the smaller models'
 * steps, where the replicas' all-reduce over 400-800 Gb/s per node meets
 * the least compute to hide behind; the cause is not identified (the clusters' NIC layout and the
 * Vela VMs' RoCE are assumptions, torch.compile's later table gains 23-28 %
 * on 7b where the model's eager passes give 8-16 %). */
#include "test_steps.h"

#define FMS STEPS "fms-fsdp-llama2.csv"

static void test_table(void)
{
    Summary s = run_table(FMS);
    CU_ASSERT_TRUE_FATAL(s.n == 10);
    CU_ASSERT_EQUAL(s.fits, s.n);
    CU_ASSERT_TRUE(s.median <= 0.10);
    CU_ASSERT_TRUE(s.worst <= 0.40);
    static const int full[] = {2, 3, 4, 7, 8, 9}; /* 34b and 70b, every block checkpointed */
    double lo = INFINITY, hi = -INFINITY;
    for (size_t i = 0; i < sizeof full / sizeof *full; i++) {
        CU_ASSERT_TRUE(fabs(s.row_logr[full[i]]) <= log(1.10));
        lo = fmin(lo, exp(-s.row_logr[full[i]]) - 1), hi = fmax(hi, exp(-s.row_logr[full[i]]) - 1);
    }
    printf("checkpointed 34B and 70B rows: %+.1f%% to %+.1f%%\n", 100 * lo, 100 * hi);
    double hsdp = 0;
    static const int none[] = {0, 1, 5, 6};
    for (size_t i = 0; i < sizeof none / sizeof *none; i++)
        hsdp = fmax(hsdp, exp(-s.row_logr[none[i]]) - 1);
    printf("hybrid-sharded rows without checkpointing: the model up to %+.1f%% fast\n", 100 * hsdp);
}

static const TestCase tests[] = {
    {"fms-fsdp Llama 2 7B/13B/70B and its 34B on 128 A100 / 96 H100, FSDP1 eager, held out: every row with its error",
     test_table},
};

TEST_MAIN("steps_fms", tests)
