/* The training step: sanity properties of the simulated step and its output. */
#include "memory.h"
#include "step.h"
#include "test_main.h"
#include "workload.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* A scenario on one DGX A100 (or a cluster of them) in text. */
static char *scen(const char *model, int nodes, int gb, int mb, const char *opt, const char *par)
{
    return g_strdup_printf("{\"topology\": \"dgx-a100-cluster\", \"nodes\": %d, \"model\": %s,\n"
                           " \"global_batch\": %d, \"micro_batch\": %d, \"precision\": \"bf16\", \"optimizer\": \"%s\",\n"
                           " \"parallelism\": %s}\n",
                           nodes, model, gb, mb, opt, par);
}

static cJSON *run(const char *text)
{
    GError *err = NULL;
    cJSON *r = step_run_text("t.json", text, &err);
    if (!r) {
        printf("\nunexpected error: %s\n", err->message);
        g_error_free(err);
    }
    return r;
}

static double get(const cJSON *r, const char *a, const char *b)
{
    const cJSON *o = cJSON_GetObjectItem(r, a);
    if (b)
        o = cJSON_GetObjectItem(o, b);
    return o ? o->valuedouble : NAN;
}

static void test_sharded_memory(void)
{
    static const int dps[] = {2, 8, 16};
    static const char *const opts[] = {"sgd", "sgd_momentum", "adam", "lamb"};
    for (size_t i = 0; i < G_N_ELEMENTS(dps); i++)
        for (size_t o = 0; o < G_N_ELEMENTS(opts); o++) {
            char par[256];
            snprintf(par, sizeof par, "{\"dp\": %d, \"weight_update\": [\"replicated\", \"sharded\"]}", dps[i]);
            char *t = scen("\"gpt3-1.3b\"", 2, 64, 1, opts[o], par);
            cJSON *r = run(t);
            g_free(t);
            CU_ASSERT_PTR_NOT_NULL_FATAL(r);
            const cJSON *v = cJSON_GetObjectItem(r, "variants");
            CU_ASSERT_EQUAL_FATAL(cJSON_GetArraySize(v), 2);
            double rep = get(cJSON_GetArrayItem(v, 0), "memory_per_device_bytes", "optimizer_state");
            double sh = get(cJSON_GetArrayItem(v, 1), "memory_per_device_bytes", "optimizer_state");
            CU_ASSERT_TRUE(sh <= rep);
            CU_ASSERT_TRUE(sh < rep); /* every optimizer has the fp32 master copy in mixed precision */
            /* and a smaller update */
            CU_ASSERT_TRUE(get(cJSON_GetArrayItem(v, 1), "breakdown", "optimizer") <
                           get(cJSON_GetArrayItem(v, 0), "breakdown", "optimizer"));
            cJSON_Delete(r);
        }
}

/* Uniform stages (a tiny vocabulary makes the head negligible), no data
 * parallelism: 1F1B idles (p-1) of (m+p-1) slots. */
static void test_bubble_1f1b(void)
{
    static const int ps[] = {2, 4, 8};
    static const int ms[] = {4, 8, 32};
    const char *model = "{\"layers\": 16, \"hidden\": 2048, \"heads\": 16, \"seq_len\": 2048, \"vocab\": 8}";
    for (size_t i = 0; i < G_N_ELEMENTS(ps); i++)
        for (size_t j = 0; j < G_N_ELEMENTS(ms); j++) {
            int p = ps[i], m = ms[j];
            char par[128];
            snprintf(par, sizeof par, "{\"dp\": 1, \"pp\": %d, \"schedule\": \"1f1b\"}", p);
            char *t = scen(model, 1, m, 1, "sgd", par);
            cJSON *r = run(t);
            g_free(t);
            CU_ASSERT_PTR_NOT_NULL_FATAL(r);
            double bubble = get(r, "breakdown", "pipeline_bubble"), comp = get(r, "breakdown", "compute");
            double frac = bubble / (bubble + comp), want = (double)(p - 1) / (m + p - 1);
            if (fabs(frac - want) > 0.01)
                printf("\np %d m %d: bubble fraction %.4f, expected %.4f\n", p, m, frac, want);
            CU_ASSERT_TRUE(fabs(frac - want) <= 0.01);
            cJSON_Delete(r);
        }
}

/* Overlapping the gradient collectives with backward never makes the step
 * longer, whatever the weight update. */
static void test_overlap_monotone(void)
{
    static const char *const wu[] = {"\"replicated\"", "\"sharded\"", "\"sharded\", \"zero_stage\": 2",
                                     "\"sharded\", \"zero_stage\": 3"};
    for (size_t i = 0; i < G_N_ELEMENTS(wu); i++)
        for (int tp = 1; tp <= 2; tp++) {
            double t[2];
            for (int ov = 0; ov < 2; ov++) {
                char par[256];
                snprintf(par, sizeof par, "{\"dp\": %d, \"tp\": %d, \"weight_update\": %s, \"overlap\": %s}", 16 / tp,
                         tp, wu[i], ov ? "true" : "false");
                char *s = scen("\"gpt3-2.7b\"", 2, 64, 1, "adam", par);
                cJSON *r = run(s);
                g_free(s);
                CU_ASSERT_PTR_NOT_NULL_FATAL(r);
                t[ov] = get(r, "step_time_s", NULL);
                cJSON_Delete(r);
            }
            CU_ASSERT_TRUE(t[1] <= t[0]);
        }
}

static void test_deterministic(void)
{
    char *s = scen("\"gpt3-6.7b\"", 4, 256, 2, "adamw",
                   "{\"dp\": 4, \"tp\": 4, \"pp\": 2, \"weight_update\": [\"replicated\", \"sharded\"], "
                   "\"recompute\": \"selective\", \"sequence_parallel\": true}");
    cJSON *a = run(s), *b = run(s);
    g_free(s);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    char *ta = cJSON_Print(a), *tb = cJSON_Print(b);
    CU_ASSERT_STRING_EQUAL(ta, tb);
    cJSON_free(ta);
    cJSON_free(tb);
    cJSON_Delete(a);
    cJSON_Delete(b);
}

/* run's memory for ZeRO-3 is memory_estimate's for the same configuration. */
static void test_zero3_memory(void)
{
    char *s = scen("\"gpt3-1.3b\"", 1, 64, 2, "adam",
                   "{\"dp\": 8, \"zero_stage\": 3, \"bucket_bytes\": \"50MiB\"}");
    cJSON *r = run(s);
    g_free(s);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    GError *err = NULL;
    Workload *w = workload_load("gpt3-1.3b", &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(w);
    WorkloadParallel wp = workload_parallel_default();
    MemoryConfig mc = memory_config_default();
    mc.params = workload_params_total(w);
    mc.dp = 8;
    mc.zero_stage = 3;
    mc.precision = MEMORY_MIXED_BF16;
    mc.optimizer = MEMORY_OPT_ADAM;
    mc.bucket_bytes = 50.0 * 1024 * 1024;
    mc.zero3_gathered_params = 2 * workload_params_layer(w, 0);
    for (int l = 0; l < workload_num_layers(w); l++)
        mc.activation_bytes += workload_layer_activation_bytes(w, l, 2, &wp);
    mc.inflight_microbatches = 1;
    MemoryBreakdown mb;
    CU_ASSERT_TRUE_FATAL(memory_estimate(&mc, &mb, &err));
    CU_ASSERT_DOUBLE_EQUAL(get(r, "memory_per_device_bytes", "weights"), mb.params, 1e-3);
    CU_ASSERT_DOUBLE_EQUAL(get(r, "memory_per_device_bytes", "gradients"), mb.grads, 1e-3);
    CU_ASSERT_DOUBLE_EQUAL(get(r, "memory_per_device_bytes", "optimizer_state"), mb.optimizer, 1e-3);
    CU_ASSERT_DOUBLE_EQUAL(get(r, "memory_per_device_bytes", "activations"), mb.activations, 1e-3);
    CU_ASSERT_DOUBLE_EQUAL(get(r, "memory_per_device_bytes", "total"), mb.total, 1e-3);
    /* ZeRO-3 shards everything: the optimizer state is 1/8 of stage 0's */
    CU_ASSERT_DOUBLE_EQUAL(mb.optimizer, 12 * mc.params / 8, 1);
    workload_free(w);
    cJSON_Delete(r);
}

/* ZeRO-3 gathers the parameters twice per micro-batch and reduce-scatters
 * every micro-batch's gradients: it moves more data-parallel bytes per step
 * than ZeRO-1 (whose step may still be shorter or longer: ZeRO-3 hides its
 * traffic behind compute, ZeRO-1 exposes its final all-gather). */
static double dp_bytes(const cJSON *r)
{
    double sum = 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(r, "collectives"))
    {
        if (!strcmp(cJSON_GetObjectItem(c, "group")->valuestring, "dp"))
            sum += get(c, "bytes", NULL) * get(c, "count_per_step", NULL);
    }
    return sum;
}

static void test_zero3_costs_more(void)
{
    double b[2];
    for (int k = 0; k < 2; k++) {
        char *s = scen("\"gpt3-2.7b\"", 2, 64, 1, "adam", k ? "{\"dp\": 16, \"zero_stage\": 3}" : "{\"dp\": 16, \"zero_stage\": 1}");
        cJSON *r = run(s);
        g_free(s);
        CU_ASSERT_PTR_NOT_NULL_FATAL(r);
        b[k] = dp_bytes(r);
        cJSON_Delete(r);
    }
    /* m = 4 micro-batches: ZeRO-1 moves ~2 Psi x 2 B (RS + AG), ZeRO-3 ~3 x 4 x Psi x 2 B */
    CU_ASSERT_TRUE(b[0] > 0);
    CU_ASSERT_TRUE(b[1] > 5 * b[0]);
}

static void expect_error(const char *text, const char *fragment)
{
    GError *err = NULL;
    cJSON *r = step_run_text("bad.json", text, &err);
    CU_ASSERT_PTR_NULL(r);
    CU_ASSERT_PTR_NOT_NULL_FATAL(err);
    CU_ASSERT_EQUAL(err->code, SIM_ERROR_INPUT);
    if (!strstr(err->message, fragment))
        printf("\nmessage '%s' lacks '%s'\n", err->message, fragment);
    CU_ASSERT_PTR_NOT_NULL(strstr(err->message, fragment));
    g_error_free(err);
    cJSON_Delete(r);
}

static void test_errors(void)
{
    expect_error("{\"topology\": \"dgx-a100-cluster\", \"model\": \"gpt3-1.3b\",\n \"global_batch\": 8,\n \"bogus\": 1}",
                 "bad.json:3: unknown key \"bogus\"");
    expect_error("{\"topology\": \"dgx-a100-cluster\", \"model\": \"gpt3-1.3b\", \"global_batch\": 8,\n"
                 " \"parallelism\": {\"dp\": 8,\n \"zero_stage\": 7}}",
                 "bad.json:3:");
    expect_error("{\"topology\": \"dgx-a100-cluster\", \"nodes\": 1, \"model\": \"gpt3-1.3b\", \"global_batch\": 64,\n"
                 " \"parallelism\": {\"dp\": 16}}",
                 "16 devices");
    expect_error("{\"topology\": \"dgx-a100-cluster\", \"model\": \"gpt3-1.3b\", \"global_batch\": 10,\n"
                 " \"parallelism\": {\"dp\": 4}}",
                 "bad.json:1:");
    expect_error("{\"topology\": \"dgx-a100-cluster\", \"model\": \"gpt3-1.3b\", \"global_batch\": 8,\n"
                 " \"parallelism\": {\"dp\": 8, \"weight_update\": \"replicated\",\n \"zero_stage\": 2}}",
                 "bad.json:3:");
    expect_error("{\"topology\": \"dgx-a100-cluster\",\n \"model\": {\"layers\": 2, \"hidden\": 64},\n"
                 " \"global_batch\": 8}",
                 "bad.json:2:");
    expect_error("{\"topology\": \"dgx-a100-cluster\", \"model\": \"gpt3-1.3b\", \"global_batch\": 8,\n"
                 " \"parallelism\": {\"tp\": 3}}",
                 "bad.json:2:");
}

/* Fewer devices than the topology: the run says which. */
static void test_partial_cluster(void)
{
    char *s = scen("\"gpt3-1.3b\"", 2, 32, 1, "adam", "{\"dp\": 4}");
    cJSON *r = run(s);
    g_free(s);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    const cJSON *cfg = cJSON_GetObjectItem(r, "config");
    CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(cfg, "devices_used")->valuestring, "ranks 0-3 of 16");
    CU_ASSERT_TRUE(get(r, "mfu", NULL) > 0 && get(r, "mfu", NULL) < 1);
    cJSON_Delete(r);
}

/* Concurrent data-parallel groups: on ABCI nodes two GPUs share a NIC, so the
 * two DP groups of tp = 2 slow each other down; DGX A100 has a NIC per GPU
 * on a non-blocking rail-optimised fabric, so they do not. */
static void test_dp_contention(void)
{
    static const char *const topos[] = {"abci-a100", "dgx-a100-cluster"};
    double f[2];
    for (int i = 0; i < 2; i++) {
        char *t = g_strdup_printf("{\"topology\": \"%s\", \"nodes\": 4, \"model\": \"gpt3-2.7b\",\n"
                                  " \"global_batch\": 64, \"parallelism\": {\"dp\": 16, \"tp\": 2}}",
                                  topos[i]);
        cJSON *r = run(t);
        g_free(t);
        CU_ASSERT_PTR_NOT_NULL_FATAL(r);
        f[i] = get(r, "dp_contention", "factor");
        CU_ASSERT_EQUAL(get(r, "dp_contention", "groups_simulated"), 2);
        cJSON_Delete(r);
    }
    CU_ASSERT_TRUE(f[0] > 1.3);
    CU_ASSERT_DOUBLE_EQUAL(f[1], 1.0, 0.02);
}

/* step_run_text from several threads (as sweep does) gives the same text. */
static void thread_fn(gpointer data, gpointer user)
{
    char **out = data;
    cJSON *r = run((const char *)user);
    *out = r ? cJSON_Print(r) : NULL;
    cJSON_Delete(r);
}

static void test_threads(void)
{
    char *s = scen("\"gpt3-1.3b\"", 2, 64, 1, "adam", "{\"dp\": 8, \"tp\": 2, \"weight_update\": \"sharded\"}");
    char *outs[8] = {NULL};
    GThreadPool *pool = g_thread_pool_new(thread_fn, s, 4, TRUE, NULL);
    for (int i = 0; i < 8; i++)
        g_thread_pool_push(pool, &outs[i], NULL);
    g_thread_pool_free(pool, FALSE, TRUE);
    for (int i = 0; i < 8; i++) {
        CU_ASSERT_PTR_NOT_NULL_FATAL(outs[i]);
        CU_ASSERT_STRING_EQUAL(outs[i], outs[0]);
    }
    for (int i = 0; i < 8; i++)
        cJSON_free(outs[i]);
    g_free(s);
}

static const TestCase tests[] = {
    {"step_run_text from a thread pool", test_threads},
    {"concurrent DP groups contend for shared NICs", test_dp_contention},
    {"sharded update never uses more optimizer memory", test_sharded_memory},
    {"1F1B bubble fraction (p-1)/(m+p-1)", test_bubble_1f1b},
    {"overlap never slows the step", test_overlap_monotone},
    {"deterministic JSON", test_deterministic},
    {"ZeRO-3 memory equals memory_estimate", test_zero3_memory},
    {"ZeRO-3 moves more bytes than ZeRO-1", test_zero3_costs_more},
    {"bad scenarios", test_errors},
    {"partial cluster", test_partial_cluster},
};
TEST_MAIN("step", tests)
