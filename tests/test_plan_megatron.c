/* plan on Megatron-LM's Table 1 (Narayanan et al. 2021; rows in
 * tests/data/published/narayanan2021-table1.csv): each row's model on its
 * GPUs, planned under the constraints of Megatron-LM 2021 (full
 * recomputation, no distributed optimizer: --fix recompute=full,zero=0;
 * no sequence parallelism, tp_comm_overlap or context parallelism: --deny;
 * interleaving and any micro-batch allowed, the table gives neither), the
 * published (t, p, d) located at its best micro-batch and interleaving.
 * The checks are those of tests/test_plan_check.h.  The paper's step is
 * its TFLOP/s turned back into seconds with eq. 3 (the model's FLOPs with
 * recomputation, workload_achieved_flops).
 *
 * known_low: in the model, 7.5B to 145.6B are faster with less
 * tensor parallelism or a different pipeline than the published layout.
 * Why, measured (each row also planned with --exhaustive, every candidate
 * ranked, and again with --memory-fraction 0.9):
 *  - not the screen: the fast model and the full simulation agree to
 *    < 0.1 % on 18.4B's candidates, and --exhaustive gives the same ranks
 *    (76.1B is the exception: the published layout's full step is 2.7 %
 *    above its screen, 15.53 vs 15.13 s; beyond the best k the rank is the
 *    screen's);
 *  - memory headroom, for the largest rows: the best candidates use 73-79
 *    GiB of the 80 (the published 30-50 GiB); with 10 % kept free (printed
 *    below each such row) 145.6B ranks 2nd (1.001x the best) and 76.1B
 *    5th of 40 (1.07x); the ZeRO check (test_plan_zero) finds the memory
 *    model 1.15-1.6x more generous than what the paper could run.  1T
 *    ranks 1st of 13 without headroom since the allocator's fragmentation
 *    is counted (memory.h: the candidates that needed 73-79 GiB no longer
 *    fit);
 *  - the step model's tp trade-off, for 7.5B, 18.4B and 39.1B: smaller tp
 *    buys larger GEMMs and fewer exposed tp all-reduces (Megatron 2021 does
 *    not overlap them: 1.5 s of 18.4B's 9.05 s step at tp 8, 0.25 s at tp 2)
 *    for a bubble interleaving keeps small; these stay 1.12-1.17x slower
 *    than the best with the headroom too.  The published layouts' own
 *    steps are within 10 % (tests/test_megatron.c). */
#include "test_plan_check.h"
#include "workload.h"

static bool known_low(const char *workload)
{
    static const char *const low[] = {"megatron-gpt-7.5b", "megatron-gpt-18.4b", "megatron-gpt-39.1b",
                                      "megatron-gpt-76.1b", "megatron-gpt-145.6b"};
    for (size_t i = 0; i < G_N_ELEMENTS(low); i++)
        if (!strcmp(workload, low[i]))
            return true;
    return false;
}

static void test_table1(void)
{
    int n = 0;
    char ***rows = plan_check_csv("narayanan2021-table1.csv", &n);
    CU_ASSERT_FATAL(n == 10);
    plan_check_header();
    for (int i = 0; i < n; i++) {
        if (!plan_check_wanted(i))
            continue;
        char **r = rows[i];
        int tp = atoi(r[1]), pp = atoi(r[2]), gpus = atoi(r[3]), batch = atoi(r[4]);
        double tflops = g_ascii_strtod(r[5], NULL);
        char *sc = g_strdup_printf("{\"name\": \"%s\", \"accelerator\": \"a100-80gb\", \"topology\": \"dgx-a100-cluster\","
                                   " \"nodes\": %d, \"model\": \"%s\", \"global_batch\": %d, \"micro_batch\": 1,"
                                   " \"precision\": \"fp16\", \"optimizer\": \"adam\", \"attention\": \"unfused\","
                                   " \"parallelism\": {\"dp\": %d, \"tp\": %d, \"pp\": %d, \"recompute\": \"full\"}}",
                                   r[0], gpus / 8, r[0], batch, gpus / (tp * pp), tp, pp);
        GError *err = NULL;
        Workload *w = workload_load(r[0], &err);
        CU_ASSERT_FATAL(w != NULL);
        /* FLOPs of one step (eq. 3 with recomputation) over the paper's rate */
        double published_s = workload_achieved_flops(w, batch, true, 1.0, 1) / (tflops * 1e12 * gpus);
        const WorkloadTransformer *tr = workload_transformer(w);
        int hidden = tr->hidden, seq = tr->seq_len;
        workload_free(w);
        PlanOptions o;
        plan_options_default(&o);
        o.top = 5;
        o.train.tokens = 300e9;
        CU_ASSERT_FATAL(plan_parse_match("--fix", "recompute=full,zero=0", &o.fix, &err));
        CU_ASSERT_FATAL(plan_parse_features("--deny", "sequence-parallel,tp-comm-overlap,context-parallel", true,
                                            &o.deny, &err));
        char *loc = g_strdup_printf("tp=%d,pp=%d", tp, pp);
        plan_match_any(&o.locate[0]);
        CU_ASSERT_FATAL(plan_parse_match("--locate", loc, &o.locate[o.nlocate++], &err));
        g_free(loc);
        plan_check_row(r[0] + strlen("megatron-gpt-"), sc, &o, published_s, hidden, seq, known_low(r[0]));
        g_free(sc);
    }
    plan_check_csv_free(rows);
}

static const TestCase tests[] = {
    {"Megatron-LM Table 1 under Megatron 2021's features", test_table1},
};

TEST_MAIN("plan_megatron", tests)
