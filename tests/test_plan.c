/* shardsim plan (models/plan*.c): its own invariants (the published
 * configurations are checked in tests/test_plan_megatron.c,
 * test_plan_published.c and test_plan_zero.c):
 *  - the pruned screen's best k and fronts equal the exhaustive screen's,
 *    the step's lower bound never exceeds the simulated step, and the
 *    output does not depend on the number of threads;
 *  - --fix and --deny: every candidate searched has the fixed values and
 *    none of the denied features, and fewer are searched;
 *  - --locate: the located layout's rank and step are those of the
 *    exhaustive screen (the pruned screen keeps every candidate whose bound
 *    beats the located one);
 *  - time to train: Young's interval and goodput;
 *  - steps of many micro-batches extrapolated from three shorter ones are
 *    those simulated at their own count (--exact-steps), to 1e-5. */
#include "test_plan_check.h"

#include <glib/gstdio.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static double num(const cJSON *o, const char *key) { return cJSON_GetObjectItem(o, key)->valuedouble; }

static void print_best(const cJSON *j, int rows)
{
    const cJSON *b;
    int k = 0;
    printf("%5s %-40s %9s %6s %8s\n", "rank", "configuration", "step(s)", "MFU%", "days");
    cJSON_ArrayForEach(b, cJSON_GetObjectItem(j, "best"))
    {
        if (k++ >= rows)
            break;
        printf("%5.0f %-40s %9.4f %6.1f %8.2f\n", num(b, "rank"), cJSON_GetObjectItem(b, "label")->valuestring,
               num(b, "step_time_s"), 100 * num(b, "mfu"), num(cJSON_GetObjectItem(b, "time_to_train"), "days"));
    }
}

/* A small search where everything can be simulated: the pruned screen
 * finds the same best k and fronts, no bound exceeds its step, and threads
 * change nothing. */
static void test_pruned_equals_exhaustive(void)
{
    const char *sc = "{\"accelerator\": \"a100-80gb\", \"topology\": \"dgx-a100-cluster\", \"nodes\": 1,"
                     " \"model\": \"gpt3-125m\", \"global_batch\": 32, \"micro_batch\": 1,"
                     " \"parallelism\": {\"dp\": 8, \"tp\": 1, \"pp\": 1}}";
    PlanOptions o;
    plan_options_default(&o);
    o.top = 5;
    o.gpus_lo = 4;
    o.gpus_hi = 8;
    o.jobs = 1;
    cJSON *pruned = plan_check_json(sc, &o);
    o.jobs = 2;
    cJSON *threads = plan_check_json(sc, &o);
    o.exhaustive = true;
    o.jobs = 1;
    cJSON *all = plan_check_json(sc, &o);
    CU_ASSERT_FATAL(pruned && threads && all);
    /* the temporary scenario's name differs; everything else must not */
    cJSON_DeleteItemFromObject(pruned, "scenario");
    cJSON_DeleteItemFromObject(threads, "scenario");
    char *a = cJSON_PrintUnformatted(pruned), *b = cJSON_PrintUnformatted(threads);
    CU_ASSERT_STRING_EQUAL(a, b);
    cJSON_free(a);
    cJSON_free(b);
    char *x = cJSON_PrintUnformatted(cJSON_GetObjectItem(pruned, "best"));
    char *y = cJSON_PrintUnformatted(cJSON_GetObjectItem(all, "best"));
    CU_ASSERT_STRING_EQUAL(x, y);
    cJSON_free(x);
    cJSON_free(y);
    /* the fronts: the same configurations and steps (their ranks beyond the
     * best k count only the simulated) */
    const char *fronts[] = {"gpus_days", "cost_days"};
    for (int f = 0; f < 2; f++) {
        const cJSON *u = cJSON_GetObjectItem(cJSON_GetObjectItem(pruned, "pareto"), fronts[f]);
        const cJSON *v = cJSON_GetObjectItem(cJSON_GetObjectItem(all, "pareto"), fronts[f]);
        CU_ASSERT_EQUAL(cJSON_GetArraySize(u), cJSON_GetArraySize(v));
        for (int i = 0; i < cJSON_GetArraySize(u) && i < cJSON_GetArraySize(v); i++) {
            const cJSON *pu = cJSON_GetArrayItem(u, i), *pv = cJSON_GetArrayItem(v, i);
            CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(pu, "label")->valuestring,
                                   cJSON_GetObjectItem(pv, "label")->valuestring);
            CU_ASSERT_EQUAL(num(pu, "step_time_s"), num(pv, "step_time_s"));
        }
    }
    printf("\ngpt3-125m on 4-8 A100: %.0f candidates, exhaustive screen %.0f simulations, pruned %.0f\n",
           num(all, "candidates"), num(all, "screen_simulated"), num(pruned, "screen_simulated"));
    print_best(pruned, 5);
    CU_ASSERT(num(pruned, "screen_simulated") < num(all, "screen_simulated"));
    CU_ASSERT(num(cJSON_GetObjectItem(pruned, "discarded"), "pruned by the bound") > 0);
    cJSON_Delete(pruned);
    cJSON_Delete(threads);
    cJSON_Delete(all);
}

static void test_train_model(void)
{
    /* Young's interval and goodput move the right way with the failure rate */
    const char *sc = "{\"accelerator\": \"h100-sxm\", \"topology\": \"dgx-h100-cluster\", \"nodes\": 1,"
                     " \"model\": \"gpt3-125m\", \"global_batch\": 64, \"micro_batch\": 1,"
                     " \"parallelism\": {\"dp\": 8}}";
    PlanOptions o;
    plan_options_default(&o);
    o.top = 1;
    o.train.tokens = 1e9;
    cJSON *lo = plan_check_json(sc, &o);
    o.train.failures_per_gpu_hour = 1e-2;
    cJSON *hi = plan_check_json(sc, &o);
    CU_ASSERT_FATAL(lo && hi);
    const cJSON *tl = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(lo, "best"), 0), "time_to_train");
    const cJSON *th = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(hi, "best"), 0), "time_to_train");
    printf("\ngoodput %.4f at the default failure rate, %.4f at 1e-2 per GPU-hour; interval %.0f s, %.0f s\n",
           num(tl, "goodput"), num(th, "goodput"), num(tl, "checkpoint_interval_s"), num(th, "checkpoint_interval_s"));
    CU_ASSERT(num(th, "goodput") < num(tl, "goodput") && num(tl, "goodput") <= 1);
    CU_ASSERT(num(th, "checkpoint_interval_s") < num(tl, "checkpoint_interval_s"));
    /* Young: tau = sqrt(2 w / lambda) */
    double lambda = 1e-2 * 8 / 3600;
    CU_ASSERT_DOUBLE_EQUAL(num(th, "checkpoint_interval_s"), sqrt(2 * num(th, "checkpoint_write_s") / lambda),
                           1e-6 * num(th, "checkpoint_interval_s"));
    cJSON_Delete(lo);
    cJSON_Delete(hi);
}

static const char small[] = "{\"accelerator\": \"a100-80gb\", \"topology\": \"dgx-a100-cluster\", \"nodes\": 1,"
                            " \"model\": \"gpt3-125m\", \"global_batch\": 32, \"micro_batch\": 1,"
                            " \"parallelism\": {\"dp\": 8, \"tp\": 1, \"pp\": 1}}";

static void test_constraints(void)
{
    PlanOptions o;
    plan_options_default(&o);
    o.top = 1000;
    o.gpus_lo = 4;
    o.gpus_hi = 8;
    o.exhaustive = true;
    cJSON *all = plan_check_json(small, &o);
    GError *err = NULL;
    CU_ASSERT_FATAL(plan_parse_match("--fix", "recompute=full,mb=2", &o.fix, &err));
    CU_ASSERT_FATAL(plan_parse_features("--deny", "interleaving,sequence-parallel", true, &o.deny, &err));
    cJSON *some = plan_check_json(small, &o);
    CU_ASSERT_FATAL(all && some);
    printf("\n%.0f candidates, %.0f with --fix recompute=full,mb=2 --deny interleaving,sequence-parallel\n",
           num(all, "candidates"), num(some, "candidates"));
    CU_ASSERT(num(some, "candidates") < num(all, "candidates") && num(some, "ranked") > 0);
    const cJSON *b;
    cJSON_ArrayForEach(b, cJSON_GetObjectItem(some, "best"))
    {
        const cJSON *c = cJSON_GetObjectItem(b, "config");
        CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(c, "recompute")->valuestring, "full");
        CU_ASSERT(num(c, "micro_batch") == 2 && num(c, "virtual_stages") == 1);
        CU_ASSERT(cJSON_IsFalse(cJSON_GetObjectItem(c, "sequence_parallel")));
    }
    CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(cJSON_GetObjectItem(some, "constraints"), "fixed")->valuestring,
                           "mb=2,recompute=full");
    /* contradictory constraints leave nothing, and say so */
    CU_ASSERT_FATAL(plan_parse_features("--deny", "full-recompute", true, &o.deny, &err));
    CU_ASSERT(plan_check_json(small, &o) == NULL);
    /* a key given two values, an unknown key or feature */
    CU_ASSERT(!plan_parse_match("--fix", "tp=2,tp=4", &o.fix, &err));
    g_clear_error(&err);
    CU_ASSERT(!plan_parse_match("--fix", "tq=2", &o.fix, &err));
    g_clear_error(&err);
    CU_ASSERT(!plan_parse_match("--fix", "recompute=some", &o.fix, &err));
    g_clear_error(&err);
    CU_ASSERT(!plan_parse_features("--deny", "magic", true, &o.deny, &err));
    g_clear_error(&err);
    cJSON_Delete(all);
    cJSON_Delete(some);
}

static void test_locate(void)
{
    PlanOptions o;
    plan_options_default(&o);
    o.top = 3;
    o.gpus_lo = 4;
    o.gpus_hi = 8;
    const char *specs[] = {"tp=2,pp=2", "gpus=4,tp=4,mb=1,recompute=full", "tp=1,pp=1,dp=8,mb=1,recompute=none"};
    GError *err = NULL;
    for (int l = 0; l < 3; l++) {
        plan_match_any(&o.locate[l]);
        CU_ASSERT_FATAL(plan_parse_match("--locate", specs[l], &o.locate[o.nlocate++], &err));
    }
    cJSON *pruned = plan_check_json(small, &o);
    o.exhaustive = true;
    cJSON *all = plan_check_json(small, &o);
    CU_ASSERT_FATAL(pruned && all);
    CU_ASSERT(num(pruned, "screen_simulated") < num(all, "screen_simulated"));
    for (int l = 0; l < 3; l++) {
        const cJSON *a = cJSON_GetArrayItem(cJSON_GetObjectItem(pruned, "located"), l);
        const cJSON *b = cJSON_GetArrayItem(cJSON_GetObjectItem(all, "located"), l);
        printf("located %s: %s rank %.0f of %.0f (exhaustive %.0f of %.0f), step %.6f s, %.3fx the best\n", specs[l],
               cJSON_GetObjectItem(a, "label")->valuestring, num(a, "rank"), num(pruned, "ranked"), num(b, "rank"),
               num(all, "ranked"), num(a, "step_time_s"), num(a, "step_ratio_to_best"));
        CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(a, "label")->valuestring, cJSON_GetObjectItem(b, "label")->valuestring);
        CU_ASSERT_EQUAL(num(a, "rank"), num(b, "rank"));
        CU_ASSERT_EQUAL(num(a, "step_time_s"), num(b, "step_time_s"));
        CU_ASSERT(num(a, "step_ratio_to_best") >= 1 && num(a, "matches") >= 1);
    }
    cJSON_Delete(pruned);
    cJSON_Delete(all);
}

/* A scenario's "expert_tp" 1 stays on every candidate, so layouts whose ep
 * exceeds dp (the experts folded over tp x dp) are searched, the
 * scenario's own among them: ranked, not discarded. */
static void test_expert_tp(void)
{
    const char *sc = "{\"accelerator\": \"h100-sxm\", \"topology\": \"dgx-h100-cluster\", \"nodes\": 4,"
                     " \"model\": \"qwen3-30b-a3b\", \"global_batch\": 64, \"micro_batch\": 1, \"precision\": \"fp8\","
                     " \"parallelism\": {\"dp\": 8, \"tp\": 2, \"pp\": 2, \"sequence_parallel\": true, \"ep\": 16,"
                     " \"expert_tp\": 1}}";
    PlanOptions o;
    plan_options_default(&o);
    o.top = 3;
    o.jobs = 1;
    GError *err = NULL;
    CU_ASSERT_FATAL(plan_parse_match("--fix", "tp=2,pp=2,gpus=32,mb=1", &o.fix, &err));
    cJSON *j = plan_check_json(sc, &o);
    CU_ASSERT_PTR_NOT_NULL_FATAL(j);
    const cJSON *ref = cJSON_GetObjectItem(j, "reference");
    CU_ASSERT_TRUE(cJSON_IsObject(ref));
    CU_ASSERT_PTR_NULL(cJSON_GetObjectItem(ref, "discarded"));
    CU_ASSERT_TRUE(num(ref, "rank") >= 1);
    cJSON_Delete(j);
}

/* Pipelines of many micro-batches, screened and simulated in full from
 * three shorter steps: the same candidates, ranks and steps as simulated at
 * each one's own micro-batch count, interleaving, ZeRO 1-3, recomputation
 * and MoE's experts among them.  Steps to 1e-5: each step's interference
 * of communication with compute is solved to 1e-6 (step_interfere.c), and
 * the extrapolation carries that to a few 1e-6. */
static void test_extrapolated_steps(void)
{
    /* gradient accumulation without a pipeline; MoE on 1F1B; interleaving
     * (the largest gap a review found, 6.1e-6 before the slope was taken
     * from the later two steps) */
    const char *fix[] = {"pp=1,tp=8", "pp=2", "tp=2,pp=2,dp=4,mb=4,zero=1,tp_overlap=off"};
    const char *scs[] = {
        "{\"accelerator\": \"a100-80gb\", \"topology\": \"dgx-a100-cluster\", \"nodes\": 2,"
        " \"model\": \"gpt3-1.3b\", \"global_batch\": 512, \"micro_batch\": 1,"
        " \"parallelism\": {\"dp\": 2, \"tp\": 8, \"pp\": 1}}",
        "{\"accelerator\": \"h100-sxm\", \"topology\": \"dgx-h100-cluster\", \"nodes\": 2,"
        " \"model\": \"mixtral-8x7b\", \"global_batch\": 128, \"micro_batch\": 1,"
        " \"parallelism\": {\"dp\": 4, \"tp\": 2, \"pp\": 2, \"ep\": 4, \"sequence_parallel\": true}}",
        "{\"accelerator\": \"a100-80gb\", \"topology\": \"dgx-a100-cluster\", \"nodes\": 2,"
        " \"model\": \"gpt3-6.7b\", \"global_batch\": 768, \"micro_batch\": 1,"
        " \"parallelism\": {\"tp\": 8, \"pp\": 2, \"recompute\": \"full\"}}"};
    const char *names[] = {"gpt3-1.3b", "mixtral-8x7b", "gpt3-6.7b"};
    for (size_t n = 0; n < G_N_ELEMENTS(scs); n++) {
        PlanOptions o;
        plan_options_default(&o);
        o.top = 12;
        o.gpus_lo = o.gpus_hi = 16;
        GError *err = NULL;
        CU_ASSERT_FATAL(plan_parse_match("--fix", fix[n], &o.fix, &err));
        cJSON *fast = plan_check_json(scs[n], &o);
        o.exact_steps = true;
        cJSON *exact = plan_check_json(scs[n], &o);
        CU_ASSERT_FATAL(fast && exact);
        CU_ASSERT(jnum(fast, "screen_extrapolated") > 0 && jnum(fast, "full_extrapolated") > 0);
        CU_ASSERT(jnum(exact, "screen_extrapolated") == 0 && jnum(exact, "full_extrapolated") == 0);
        CU_ASSERT_EQUAL(jnum(fast, "ranked"), jnum(exact, "ranked"));
        const cJSON *u = cJSON_GetObjectItem(fast, "best"), *v = cJSON_GetObjectItem(exact, "best");
        CU_ASSERT_EQUAL_FATAL(cJSON_GetArraySize(u), cJSON_GetArraySize(v));
        double worst = 0;
        int extrap = 0;
        for (int i = 0; i < cJSON_GetArraySize(u); i++) {
            const cJSON *a = cJSON_GetArrayItem(u, i), *b = cJSON_GetArrayItem(v, i);
            CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(a, "label")->valuestring,
                                   cJSON_GetObjectItem(b, "label")->valuestring);
            extrap += cJSON_IsTrue(cJSON_GetObjectItem(a, "step_extrapolated"));
            const char *keys[] = {"step_time_s", "screen_step_time_s", "mfu", "tokens_per_s", "memory_per_device_bytes"};
            for (size_t k = 0; k < G_N_ELEMENTS(keys); k++)
                worst = fmax(worst, fabs(jnum(a, keys[k]) / jnum(b, keys[k]) - 1));
        }
        printf("\n%s --fix %s: %d of the best %d extrapolated; %.0f / %.0f screened / full steps; largest difference "
               "%.1e\n", names[n], fix[n], extrap, cJSON_GetArraySize(u), jnum(fast, "screen_extrapolated"),
               jnum(fast, "full_extrapolated"), worst);
        CU_ASSERT(extrap > 0);
        CU_ASSERT(worst <= 1e-5);
        cJSON_Delete(fast);
        cJSON_Delete(exact);
    }
}

static const TestCase tests[] = {
    {"steps of many micro-batches: extrapolated = exact", test_extrapolated_steps},
    {"expert_tp 1: ep beyond dp searched", test_expert_tp},
    {"time to train: failures, checkpoints", test_train_model},
    {"pruned screen = exhaustive, threads", test_pruned_equals_exhaustive},
    {"--fix, --deny: only what they allow is searched", test_constraints},
    {"--locate: the exact rank, pruned or exhaustive", test_locate},
};

TEST_MAIN("plan", tests)
