/* plan on the published layouts of Korthikanti et al. 2022 and BLOOM
 * (rows in tests/data/published/, each with its .source), each planned
 * under the features its software had, the published layout located
 * exactly; the checks are those of tests/test_plan_check.h.
 *  - Korthikanti et al. 2022 ("present work": sequence parallelism and
 *    selective recomputation, Megatron-LM 2022 on A100 80 GB): no
 *    distributed optimizer (--fix zero=0), no tp_comm_overlap nor context
 *    parallelism (--deny); recomputation, sequence parallelism, micro-batch
 *    and interleaving free.  The published step is the paper's iteration
 *    time with sequence parallelism + selective recomputation.
 *  - BLOOM 176B (Megatron-DeepSpeed 2022): ZeRO-1 and full recomputation
 *    (--fix zero=1,recompute=full), no sequence parallelism, interleaving,
 *    tp_comm_overlap or context parallelism (--deny); the published tp4
 *    pp12 dp8 at micro-batch 2 located.  BLOOM published no step time. */
#include "test_plan_check.h"

static void test_korthikanti(void)
{
    int n = 0;
    char ***rows = plan_check_csv("korthikanti2022-table.csv", &n);
    CU_ASSERT_FATAL(n == 4);
    plan_check_header();
    for (int i = 0; i < n; i++) {
        if (!plan_check_wanted(i))
            continue;
        char **r = rows[i];
        int layers = atoi(r[1]), hidden = atoi(r[2]), heads = atoi(r[3]), seq = atoi(r[4]), vocab = atoi(r[5]);
        int tp = atoi(r[6]), pp = atoi(r[7]), vpp = atoi(r[8]), gpus = atoi(r[9]), gb = atoi(r[10]), mb = atoi(r[11]);
        double published_s = g_ascii_strtod(r[13], NULL);
        char *sc = g_strdup_printf(
            "{\"name\": \"korthikanti-%s\", \"accelerator\": \"a100-80gb\", \"topology\": \"dgx-a100-cluster\","
            " \"nodes\": %d, \"model\": {\"name\": \"gpt-%s\", \"layers\": %d, \"hidden\": %d, \"heads\": %d,"
            " \"seq_len\": %d, \"vocab\": %d, \"tied_embeddings\": true, \"position\": \"learned\"},"
            " \"global_batch\": %d, \"micro_batch\": %d, \"precision\": \"fp16\", \"optimizer\": \"adam\","
            " \"attention\": \"unfused\", \"parallelism\": {\"dp\": %d, \"tp\": %d, \"pp\": %d, \"virtual_stages\": %d,"
            " \"recompute\": \"selective\", \"sequence_parallel\": true}}",
            r[0], (gpus + 7) / 8, r[0], layers, hidden, heads, seq, vocab, gb, mb, gpus / (tp * pp), tp, pp, vpp);
        GError *err = NULL;
        PlanOptions o;
        plan_options_default(&o);
        o.top = 5;
        o.train.tokens = 300e9;
        CU_ASSERT_FATAL(plan_parse_match("--fix", "zero=0", &o.fix, &err));
        CU_ASSERT_FATAL(plan_parse_features("--deny", "tp-comm-overlap,context-parallel", true, &o.deny, &err));
        char *loc = g_strdup_printf("tp=%d,pp=%d,vpp=%d,mb=%d,recompute=selective,sp=on", tp, pp, vpp, mb);
        plan_match_any(&o.locate[0]);
        CU_ASSERT_FATAL(plan_parse_match("--locate", loc, &o.locate[o.nlocate++], &err));
        g_free(loc);
        char *what = g_strdup_printf("korthikanti %s", r[0]);
        plan_check_row(what, sc, &o, published_s, hidden, seq, false);
        g_free(what);
        g_free(sc);
    }
    plan_check_csv_free(rows);
}

static void test_bloom(void)
{
    int n = 0;
    char ***rows = plan_check_csv("bigscience2022-bloom.csv", &n);
    CU_ASSERT_FATAL(n == 1);
    if (!plan_check_wanted(4)) { /* the row after Korthikanti's four */
        plan_check_csv_free(rows);
        return;
    }
    char **r = rows[0];
    int hidden = atoi(r[2]), seq = atoi(r[4]), tp = atoi(r[6]), pp = atoi(r[7]), dp = atoi(r[8]), gpus = atoi(r[9]);
    int zero = atoi(r[10]), mb = atoi(r[12]);
    /* ALiBi: no learned positions ("rotary" stands for it: neither has position parameters) */
    char *sc = g_strdup_printf(
        "{\"name\": \"bloom\", \"accelerator\": \"a100-80gb\", \"topology\": \"dgx-a100-cluster\", \"nodes\": %d,"
        " \"model\": {\"name\": \"%s\", \"layers\": %s, \"hidden\": %d, \"heads\": %s, \"seq_len\": %d, \"vocab\": %s,"
        " \"position\": \"rotary\"}, \"global_batch\": %s, \"micro_batch\": %d, \"precision\": \"bf16\","
        " \"optimizer\": \"adam\", \"parallelism\": {\"dp\": %d, \"tp\": %d, \"pp\": %d, \"zero_stage\": %d,"
        " \"recompute\": \"full\"}}",
        gpus / 8, r[0], r[1], hidden, r[3], seq, r[5], r[11], mb, dp, tp, pp, zero);
    GError *err = NULL;
    PlanOptions o;
    plan_options_default(&o);
    o.top = 5;
    o.train.tokens = 366e9; /* BLOOM's 366 B tokens (arXiv:2211.05100 section 3.5) */
    char *fix = g_strdup_printf("zero=%d,recompute=full", zero);
    CU_ASSERT_FATAL(plan_parse_match("--fix", fix, &o.fix, &err));
    g_free(fix);
    CU_ASSERT_FATAL(plan_parse_features("--deny", "sequence-parallel,interleaving,tp-comm-overlap,context-parallel",
                                        true, &o.deny, &err));
    char *loc = g_strdup_printf("tp=%d,pp=%d,dp=%d,mb=%d", tp, pp, dp, mb);
    plan_match_any(&o.locate[0]);
    CU_ASSERT_FATAL(plan_parse_match("--locate", loc, &o.locate[o.nlocate++], &err));
    g_free(loc);
    plan_check_header();
    plan_check_row("bloom 176b", sc, &o, NAN, hidden, seq, false);
    g_free(sc);
    plan_check_csv_free(rows);
}

static const TestCase tests[] = {
    {"Korthikanti et al. 2022 under Megatron 2022's features", test_korthikanti},
    {"BLOOM 176B under Megatron-DeepSpeed's features", test_bloom},
};

TEST_MAIN("plan_published", tests)
