/* torchtitan's Llama 3.1 8B / 70B / 405B runs on Meta's Grand Teton H100
 * hosts, 8 to 512 GPUs, FSDP2 alone and with TP, PP and CP, 8k to 256k
 * tokens (tests/data/steps/torchtitan-h100-llama3.1.csv: provenance, the
 * mapping, the rows left out), never fitted on, on the h100-sxm preset: the
 * runs' H100s are 500 W parts with 96 GB of HBM2e at 2.4 TB/s, which no
 * preset describes and whose clocks under that cap no public source gives,
 * so every error below holds the chip's share too.  Every row printed;
 * asserted: a regression guard at today's figures plus a margin (median
 * |tokens/s error| <= 30 %, max <= 90 %: 25.0 % and 81.1 % on 2026-12-06,
 * Tables 1 and 3 with torchtitan's per-op checkpointing, "recompute": "op",
 * and their eager rows "elementwise": "eager"),
 * not a goal and not a fit; and what the table shows apart from the chip:
 *  - the CP 4 and CP 8 rows (PyTorch's experimental ring attention) are
 *    the worst of their tables by far: 8B at +72 / +81 %, 405B at +55 /
 *    +81 %, against +27-33 % at CP 1-2; their attention runs at about half
 *    the rate of CP 1-2's, which the model's TE-style ring does not see;
 *  - the model's gain from AsyncTP (tp_comm_overlap) against the measured
 *    one (70B on 256 GPUs: 1.06x, 1.09x and 1.16x measured): within 10 %
 *    on every pair since the FP8 rows' all-gathers carry FP8 data, as
 *    torchao's Float8ColwiseParallel gathers them (2.5-12.9 % too large
 *    before).
 * And, held out, what eager mode costs over torch.compile on the same
 * step (Tables 1 and 3): within 3 % of the measured ratio. */
#include "test_steps.h"

#define TABLE STEPS "torchtitan-h100-llama3.1.csv"

static void test_table(void)
{
    Summary s = run_table(TABLE);
    CU_ASSERT_TRUE(s.n == 21);
    CU_ASSERT_TRUE(s.median <= 0.30);
    CU_ASSERT_TRUE(s.worst <= 0.90);
    /* rows 4-7: 8B at CP 1, 2, 4, 8; rows 14-17: 405B at CP 1, 2, 4, 8 */
    for (int base = 3; base <= 13; base += 10) {
        double lo = fmin(s.row_logr[base], s.row_logr[base + 1]);
        CU_ASSERT_TRUE(s.row_logr[base + 2] < lo && s.row_logr[base + 3] < lo);
    }
    /* Tables 1 and 3 (rows 1-3, 8-10: eager, compiled, Float8) under per-op checkpointing */
    printf("Tables 1 and 3, recompute op:");
    for (int base = 0; base <= 7; base += 7)
        printf("%s %+.1f / %+.1f / %+.1f%%", base ? " and" : "", 100 * expm1(-s.row_logr[base]),
               100 * expm1(-s.row_logr[base + 1]), 100 * expm1(-s.row_logr[base + 2]));
    printf("\n");
    /* eager over compiled (rows 1/2 and 8/9): the step ratio the model gives
     * ("elementwise": "eager") against the measured one, within 3 % */
    for (int base = 0; base <= 7; base += 7) {
        double d = s.row_logr[base] - s.row_logr[base + 1];
        printf("Table %d, eager against torch.compile: the model's step ratio %+.1f%% off the measured\n",
               base ? 3 : 1, 100 * expm1(d));
        CU_ASSERT_TRUE(fabs(d) < 0.03);
    }
    /* AsyncTP's gain: predicted step ratio against the measured one, the
     * three pairs (rows 11/12, 18/19, 20/21), within 10 % (12.9 % off on
     * the first before the FP8 all-gathers) */
    const int pairs[3][2] = {{10, 11}, {17, 18}, {19, 20}};
    for (int k = 0; k < 3; k++) {
        double pred_gain = s.row_logr[pairs[k][0]] - s.row_logr[pairs[k][1]];
        printf("AsyncTP pair %d: the model's gain %+.1f%% off the measured\n", k + 1, 100 * expm1(pred_gain));
        CU_ASSERT_TRUE(fabs(expm1(pred_gain)) < 0.10);
    }
}

static const TestCase tests[] = {
    {"torchtitan Llama 3.1 on 8-512 H100 (500 W, HBM2e), held out: every row with its error", test_table},
};

TEST_MAIN("steps_torchtitan", tests)
