/* shardsim plan (models/plan*.c) against published configurations and its
 * own invariants:
 *  - Megatron-LM Table 1 (Narayanan et al. 2021), the 1.7B row (32 A100
 *    80GB, t1 p1 d32, batch 512, full recomputation): the plan's best is at
 *    least as fast in the model as the published layout, whose rank is
 *    printed (exact within the best 10, else a lower bound: the screen
 *    prunes);
 *  - BLOOM's final layout (BigScience 2022, arXiv:2211.05100 section 3.4.2:
 *    176B on 384 A100 80GB, tp4 pp12 dp8, ZeRO-1, bf16, global batch 2048,
 *    micro-batch 2): the same;
 *  - time to train agrees with 6 x parameters x tokens / (GPUs x peak x
 *    MFU) at the predicted MFU (within the attention FLOPs 6 N leaves out);
 *  - the pruned screen's best k and fronts equal the exhaustive screen's,
 *    the step's lower bound never exceeds the simulated step, and the
 *    output does not depend on the number of threads. */
#include "plan.h"
#include "test_main.h"

#include <glib/gstdio.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static char *write_tmp(const char *text)
{
    char *path = NULL;
    int fd = g_file_open_tmp("test-plan-XXXXXX.json", &path, NULL);
    CU_ASSERT_FATAL(fd >= 0);
    close(fd);
    CU_ASSERT_FATAL(g_file_set_contents(path, text, -1, NULL));
    return path;
}

/* The plan's JSON (NULL on error, printed). */
static cJSON *plan_json(const char *scenario, const PlanOptions *o)
{
    char *path = write_tmp(scenario);
    GError *err = NULL;
    SimDist *d = sim_dist_new(FALSE, &err);
    Plan *p = plan_new(path, o, &err);
    cJSON *j = p && plan_run(p, d, &err) ? plan_result_json(p) : NULL;
    if (!j)
        printf("plan: %s\n", err ? err->message : "?");
    g_clear_error(&err);
    plan_free(p);
    sim_dist_free(d);
    g_unlink(path);
    g_free(path);
    return j;
}

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

/* The published layout against the plan's best; prints both and the rank. */
static void check_published(const char *what, const char *scenario, int gpus, double peak, int seq_len, int hidden)
{
    PlanOptions o;
    plan_options_default(&o);
    o.top = 10;
    o.train.tokens = 300e9;
    cJSON *j = plan_json(scenario, &o);
    CU_ASSERT_FATAL(j != NULL);
    printf("\n%s: %.0f candidates, %.0f screened, %.0f ranked\n", what, num(j, "candidates"), num(j, "screened"),
           num(j, "ranked"));
    print_best(j, 10);
    const cJSON *ref = cJSON_GetObjectItem(j, "reference");
    CU_ASSERT_FATAL(cJSON_IsObject(ref));
    const cJSON *best = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "best"), 0);
    const cJSON *rank = cJSON_GetObjectItem(ref, "rank");
    printf("published %s: step %.4f s in full, rank %s%.0f of %.0f ranked (best %.4f s, %.2fx faster)\n",
           cJSON_GetObjectItem(ref, "label")->valuestring, num(ref, "step_time_s"),
           cJSON_IsNumber(rank) && num(ref, "rank") > 10 ? ">= " : "", cJSON_IsNumber(rank) ? num(ref, "rank") : -1,
           num(j, "ranked"), num(best, "step_time_s"), num(ref, "step_time_s") / num(best, "step_time_s"));
    CU_ASSERT(cJSON_IsNumber(rank));
    CU_ASSERT(num(best, "step_time_s") <= num(ref, "step_time_s") * (1 + 1e-12));
    CU_ASSERT(num(cJSON_GetObjectItem(best, "config"), "gpus") == gpus);
    /* time to train against 6 N T / (GPUs x peak x MFU), compute time only:
     * MFU counts the model's FLOPs, 6 N per token plus attention's
     * (Narayanan et al. eq. 3: a share of about s / 6h more), so the
     * simulated time may exceed the estimate by that share, never fall short */
    const cJSON *t = cJSON_GetObjectItem(best, "time_to_train");
    double tokens = num(t, "steps") * num(cJSON_GetObjectItem(best, "config"), "global_batch") * seq_len;
    double est = 6 * num(j, "parameters") * tokens / (gpus * peak * num(best, "mfu"));
    double ratio = num(t, "compute_s") / est;
    printf("time to train: %.2f days of compute; 6 N T / (G peak MFU) at MFU %.1f %%: %.2f days (ratio %.3f, "
           "attention share s/6h %.3f)\n",
           num(t, "compute_s") / 86400, 100 * num(best, "mfu"), est / 86400, ratio, seq_len / (6.0 * hidden));
    CU_ASSERT(ratio >= 1 - 1e-9 && ratio <= 1 + seq_len / (6.0 * hidden) + 0.03);
    cJSON_Delete(j);
}

static void test_megatron(void)
{
    check_published("Megatron-LM Table 1, 1.7B on 32 A100",
                    "{\"accelerator\": \"a100-80gb\", \"topology\": \"dgx-a100-cluster\", \"nodes\": 4,"
                    " \"model\": \"megatron-gpt-1.7b\", \"global_batch\": 512, \"micro_batch\": 1,"
                    " \"precision\": \"fp16\", \"optimizer\": \"adam\", \"attention\": \"unfused\","
                    " \"parallelism\": {\"dp\": 32, \"tp\": 1, \"pp\": 1, \"recompute\": \"full\"}}",
                    32, 312e12, 2048, 2304);
}

static void test_bloom(void)
{
    /* BLOOM-176B (BigScience 2022, Table 1 and section 3.4): 70 layers,
     * hidden 14336, 112 heads, vocabulary 250,880, sequence 2048, ALiBi (no
     * learned positions: "rotary" stands for it, neither has position
     * parameters); Jean Zay's 48 nodes of 8 A100 80GB */
    check_published("BLOOM 176B on 384 A100 80GB",
                    "{\"accelerator\": \"a100-80gb\", \"topology\": \"dgx-a100-cluster\", \"nodes\": 48,"
                    " \"model\": {\"name\": \"bloom-176b\", \"layers\": 70, \"hidden\": 14336, \"heads\": 112,"
                    " \"seq_len\": 2048, \"vocab\": 250880, \"position\": \"rotary\"},"
                    " \"global_batch\": 2048, \"micro_batch\": 2, \"precision\": \"bf16\", \"optimizer\": \"adam\","
                    " \"parallelism\": {\"dp\": 8, \"tp\": 4, \"pp\": 12, \"zero_stage\": 1, \"recompute\": \"full\"}}",
                    384, 312e12, 2048, 14336);
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
    cJSON *pruned = plan_json(sc, &o);
    o.jobs = 2;
    cJSON *threads = plan_json(sc, &o);
    o.exhaustive = true;
    o.jobs = 1;
    cJSON *all = plan_json(sc, &o);
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
    cJSON *lo = plan_json(sc, &o);
    o.train.failures_per_gpu_hour = 1e-2;
    cJSON *hi = plan_json(sc, &o);
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

static const TestCase tests[] = {
    {"time to train: failures, checkpoints", test_train_model},
    {"pruned screen = exhaustive, threads", test_pruned_equals_exhaustive},
    {"Megatron-LM Table 1 1.7B: best and rank", test_megatron},
    {"BLOOM 176B on 384 A100: best and rank", test_bloom},
};

TEST_MAIN("plan", tests)
