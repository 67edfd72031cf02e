/* The training step: sanity properties of the simulated step and its output. */
#include "collective.h"
#include "memory.h"
#include "step.h"
#include "test_json.h"
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

/* run's memory for ZeRO-3 is memory_estimate's for the same configuration:
 * fused attention (A100's default), and the peak's working set: the larger
 * of the loss's (three fp32 vocab x tokens buffers, with the output layer's
 * saved bf16 input, tokens x hidden) and, in the backward,
 * the unsharded gradient of one layer being reduce-scattered. */
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
    wp.fused_attention = true;
    MemoryConfig mc = memory_config_default();
    mc.params = workload_params_total(w);
    mc.dp = 8;
    mc.zero_stage = 3;
    const WorkloadTransformer *tr = workload_transformer(w);
    mc.working_set_bytes =
        fmax(2.0 * tr->seq_len * (tr->vocab * 12 + tr->hidden * 2), 2 * workload_params_layer(w, 0));
    mc.precision = MEMORY_MIXED_BF16;
    mc.optimizer = MEMORY_OPT_ADAM;
    mc.bucket_bytes = 50.0 * 1024 * 1024;
    /* two layers and FSDP's root unit (embeddings, final norm) gathered;
     * the reduce-scatter stream's pool keeps the larger of the root's and
     * two layers' bf16 gradients */
    double root = workload_params_head(w), layer = workload_params_layer(w, 0);
    mc.zero3_gathered_params = 2 * layer + root;
    mc.stream_pool_bytes = fmax(root, 2 * layer) * 2;
    for (int l = 0; l < workload_num_layers(w); l++)
        mc.activation_bytes += workload_layer_activation_bytes(w, l, 2, &wp);
    mc.inflight_microbatches = 1;
    MemoryBreakdown mb;
    CU_ASSERT_TRUE_FATAL(memory_estimate(&mc, &mb, &err));
    CU_ASSERT_DOUBLE_EQUAL(get(r, "memory_per_device_bytes", "weights"), mb.params, 1e-3);
    CU_ASSERT_DOUBLE_EQUAL(get(r, "memory_per_device_bytes", "gradients"), mb.grads, 1e-3);
    CU_ASSERT_DOUBLE_EQUAL(get(r, "memory_per_device_bytes", "optimizer_state"), mb.optimizer, 1e-3);
    CU_ASSERT_DOUBLE_EQUAL(get(r, "memory_per_device_bytes", "activations"), mb.activations, 1e-3);
    CU_ASSERT_DOUBLE_EQUAL(get(r, "memory_per_device_bytes", "working_set"), mb.working_set, 1e-3);
    CU_ASSERT_DOUBLE_EQUAL(get(r, "memory_per_device_bytes", "buffers"), mb.buffers, 1e-3);
    CU_ASSERT_DOUBLE_EQUAL(get(r, "memory_per_device_bytes", "fragmentation"), mb.fragmentation, 1e-3);
    CU_ASSERT_DOUBLE_EQUAL(get(r, "memory_per_device_bytes", "total"), mb.total, 1e-3);
    CU_ASSERT_DOUBLE_EQUAL(get(r, "memory_per_device_bytes", "allocator_reserved"),
                           mb.total - MEMORY_DEFAULT_RESERVE_BYTES, 1e-3);
    /* ZeRO-3 shards everything: the optimizer state is 1/8 of stage 0's */
    CU_ASSERT_DOUBLE_EQUAL(mb.optimizer, 12 * mc.params / 8, 1);
    workload_free(w);
    cJSON_Delete(r);
}

/* ZeRO-3 gathers the parameters twice per micro-batch and reduce-scatters
 * every micro-batch's gradients: it moves more data-parallel bytes per step
 * than ZeRO-1 (whose step may still be shorter or longer: ZeRO-3 hides its
 * traffic behind compute, ZeRO-1 only its gathers behind the forward). */
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

/* The breakdown adds up to the step time (bubble is the remainder, clipped
 * at 0, so an over-count would show here). */
static void check_breakdown(const cJSON *r)
{
    double sum = get(r, "breakdown", "compute") + get(r, "breakdown", "exposed_communication") +
                 get(r, "breakdown", "optimizer") + get(r, "breakdown", "pipeline_bubble");
    double step = get(r, "step_time_s", NULL);
    if (fabs(sum - step) > 1e-9 * step + 1e-12)
        printf("\nbreakdown sums to %.9g, step %.9g\n", sum, step);
    CU_ASSERT_TRUE(fabs(sum - step) <= 1e-9 * step + 1e-12);
}

/* Sum of bytes x count of the collectives whose name starts with `prefix`. */
static double coll_bytes(const cJSON *r, const char *prefix)
{
    double sum = 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(r, "collectives"))
    {
        if (g_str_has_prefix(cJSON_GetObjectItem(c, "name")->valuestring, prefix))
            sum += get(c, "bytes", NULL) * get(c, "count_per_step", NULL);
    }
    return sum;
}

/* Longest (max) or shortest (!max) time of one collective called `name`. */
static double coll_time(const cJSON *r, const char *name, bool max)
{
    double t = max ? 0 : INFINITY;
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(r, "collectives"))
    {
        double ct = get(c, "time_s", NULL);
        if (!strcmp(cJSON_GetObjectItem(c, "name")->valuestring, name) && (max ? ct > t : ct < t))
            t = ct;
    }
    return t;
}

/* Gathering the updated weights behind the next forward (allgather_overlap)
 * never makes a sharded step longer than gathering them at the end: the
 * same gathers on the same stream, moved from after the optimizer (where
 * nothing hides them) to where forward compute can.  Both move the same
 * bytes, and pipeline stage 0 gathers exactly its own parameters. */
static void test_allgather_overlap_monotone(void)
{
    GError *err = NULL;
    Workload *w = workload_load("gpt3-2.7b", &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(w);
    for (int zs = 1; zs <= 2; zs++)
        for (int tp = 1; tp <= 2; tp++)
            for (int pp = 1; pp <= 2; pp++)
                for (int mb = 1; mb <= 4; mb *= 4) {
                    double t[2], bytes[2];
                    int dp = 16 / (tp * pp);
                    for (int ov = 0; ov < 2; ov++) {
                        char par[256];
                        snprintf(par, sizeof par,
                                 "{\"dp\": %d, \"tp\": %d, \"pp\": %d, \"zero_stage\": %d, \"allgather_overlap\": %s}",
                                 dp, tp, pp, zs, ov ? "true" : "false");
                        char *s = scen("\"gpt3-2.7b\"", 2, dp * mb * 4, mb, "adam", par);
                        cJSON *r = run(s);
                        g_free(s);
                        CU_ASSERT_PTR_NOT_NULL_FATAL(r);
                        t[ov] = get(r, "step_time_s", NULL);
                        bytes[ov] = coll_bytes(r, "param_allgather");
                        CU_ASSERT_EQUAL(cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetObjectItem(r, "config"),
                                                                          "allgather_overlap")),
                                        ov);
                        check_breakdown(r);
                        cJSON_Delete(r);
                    }
                    if (t[1] > t[0])
                        printf("\nzero %d tp %d pp %d mb %d: overlapped %.6f s > at the end %.6f s\n", zs, tp, pp, mb,
                               t[1], t[0]);
                    CU_ASSERT_TRUE(t[1] <= t[0]);
                    /* stage 0: its layers (the first of an odd split) + the embeddings, 2 bytes each */
                    int nl0 = (workload_num_layers(w) + pp - 1) / pp;
                    double want = 2 * (nl0 * workload_params_layer(w, 0) + workload_params_head(w)) / tp;
                    CU_ASSERT_DOUBLE_EQUAL(bytes[0], want, 1e-9 * want);
                    CU_ASSERT_DOUBLE_EQUAL(bytes[1], want, 1e-9 * want);
                }
    workload_free(w);
}

/* Ample compute (micro-batch 8: a layer's forward takes several times its
 * all-gather): with the gathers behind the forward, what a sharded step
 * exposes is its tail of reduce-scatters (half the bytes of the replicated
 * step's all-reduces) and the gathers that must precede the first forward
 * (the embeddings and layer 0: nothing runs before them in the steady state,
 * since they carry the previous step's update).  So its exposed
 * communication is at most the replicated step's plus those front gathers;
 * and it hides most of what gathering at the end exposes. */
static void test_allgather_overlap_hides(void)
{
    GError *err = NULL;
    static const struct {
        const char *model;
        int nodes, dp, mb;
    } cases[] = {{"gpt3-1.3b", 2, 16, 8}, {"gpt3-2.7b", 8, 64, 8}, {"gpt3-6.7b", 4, 32, 4}};
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        Workload *w = workload_load(cases[i].model, &err);
        CU_ASSERT_PTR_NOT_NULL_FATAL(w);
        double exposed[3], ag_total = 0, front = 0, front_lo = 0;
        static const char *const plans[] = {"\"weight_update\": \"replicated\"",
                                            "\"weight_update\": \"sharded\", \"allgather_overlap\": false",
                                            "\"weight_update\": \"sharded\""};
        for (int k = 0; k < 3; k++) {
            char par[256], model[64];
            snprintf(par, sizeof par, "{\"dp\": %d, %s}", cases[i].dp, plans[k]);
            snprintf(model, sizeof model, "\"%s\"", cases[i].model);
            char *s = scen(model, cases[i].nodes, cases[i].dp * cases[i].mb * 4, cases[i].mb, "adam", par);
            cJSON *r = run(s);
            g_free(s);
            CU_ASSERT_PTR_NOT_NULL_FATAL(r);
            check_breakdown(r);
            exposed[k] = get(r, "breakdown", "exposed_communication");
            if (k == 2) {
                double bucket = 25.0 * 1024 * 1024;
                double pieces = ceil(2 * workload_params_head(w) / bucket) + ceil(2 * workload_params_layer(w, 0) / bucket);
                front = pieces * coll_time(r, "param_allgather", true);
                front_lo = pieces * coll_time(r, "param_allgather", false);
                CU_ASSERT_TRUE(front_lo > 0);
                const cJSON *c;
                cJSON_ArrayForEach(c, cJSON_GetObjectItem(r, "collectives"))
                {
                    if (!strcmp(cJSON_GetObjectItem(c, "name")->valuestring, "param_allgather"))
                        ag_total += get(c, "time_s", NULL) * get(c, "count_per_step", NULL);
                }
            }
            cJSON_Delete(r);
        }
        if (exposed[2] > exposed[0] + 1.01 * front)
            printf("\n%s: sharded exposes %.6f s, replicated %.6f s, front gathers %.6f s\n", cases[i].model,
                   exposed[2], exposed[0], front);
        CU_ASSERT_TRUE(exposed[2] <= exposed[0] + 1.01 * front);
        /* and the first forward does wait for its weights */
        CU_ASSERT_TRUE(exposed[2] >= 0.99 * front_lo);
        /* the front is a small part of all the gathers, and the rest is hidden */
        CU_ASSERT_TRUE(front < 0.25 * ag_total);
        CU_ASSERT_TRUE(exposed[2] <= exposed[1] - 0.9 * (ag_total - front));
        workload_free(w);
    }
}

/* grad_reduce_dtype: fp32 sends twice the gradient bytes of the default
 * (bf16 here) in every data-parallel gradient collective, whatever the
 * ZeRO stage, and keeps fp32 gradient buffers (Megatron's main_grad); the
 * parameter all-gathers do not change.  fp16 moves what bf16 does. */
static void test_grad_reduce_dtype(void)
{
    for (int zs = 0; zs <= 3; zs++) {
        double grad[3], param[3], gmem[3];
        static const char *const dts[] = {NULL, "fp32", "fp16"};
        for (int k = 0; k < 3; k++) {
            char par[256];
            if (dts[k])
                snprintf(par, sizeof par, "{\"dp\": 16, \"zero_stage\": %d, \"grad_reduce_dtype\": \"%s\"}", zs, dts[k]);
            else
                snprintf(par, sizeof par, "{\"dp\": 16, \"zero_stage\": %d}", zs);
            char *s = scen("\"gpt3-1.3b\"", 2, 64, 1, "adam", par);
            cJSON *r = run(s);
            g_free(s);
            CU_ASSERT_PTR_NOT_NULL_FATAL(r);
            check_breakdown(r);
            grad[k] = coll_bytes(r, "grad_") + coll_bytes(r, "zero3_reducescatter");
            param[k] = coll_bytes(r, "param_allgather") + coll_bytes(r, "zero3_allgather");
            gmem[k] = get(r, "memory_per_device_bytes", "gradients");
            CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(cJSON_GetObjectItem(r, "config"), "grad_reduce_dtype")->valuestring,
                                   dts[k] ? dts[k] : "bf16");
            cJSON_Delete(r);
        }
        CU_ASSERT_TRUE(grad[0] > 0);
        CU_ASSERT_DOUBLE_EQUAL(grad[1], 2 * grad[0], 1e-9 * grad[0]);
        CU_ASSERT_DOUBLE_EQUAL(grad[2], grad[0], 1e-9 * grad[0]);
        CU_ASSERT_DOUBLE_EQUAL(param[1], param[0], 1e-9 * param[0] + 1e-9);
        CU_ASSERT_DOUBLE_EQUAL(gmem[1], 2 * gmem[0], 1e-6 * gmem[0]);
        CU_ASSERT_DOUBLE_EQUAL(gmem[2], gmem[0], 1e-6 * gmem[0]);
    }
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
    expect_error("{\"topology\": \"dgx-a100-cluster\", \"model\": \"gpt3-1.3b\", \"global_batch\": 8,\n"
                 " \"parallelism\": {\"dp\": 8,\n \"grad_reduce_dtype\": \"int8\"}}",
                 "bad.json:3: \"grad_reduce_dtype\" = \"int8\" is not one of");
    expect_error("{\"topology\": \"dgx-a100-cluster\", \"model\": \"gpt3-1.3b\", \"global_batch\": 8,\n"
                 " \"parallelism\": {\"dp\": 8,\n \"tp_impl\": \"jax\"}}",
                 "bad.json:3: \"tp_impl\" = \"jax\" is not one of \"megatron\", \"dtensor\"");
    expect_error("{\"topology\": \"dgx-a100-cluster\", \"model\": \"gpt3-1.3b\", \"global_batch\": 8,\n"
                 " \"parallelism\": {\"dp\": 8, \"zero_stage\": 3,\n \"zero_impl\": 3}}",
                 "bad.json:3:");
    expect_error("{\"topology\": \"dgx-a100-cluster\", \"model\": \"gpt3-1.3b\", \"global_batch\": 8,\n"
                 " \"parallelism\": {\"dp\": 8}, \"cross_entropy\": \"parallel\"}",
                 "bad.json:2: \"cross_entropy\" = \"parallel\" is not one of");
    expect_error("{\"topology\": \"dgx-a100-cluster\", \"model\": \"gpt3-1.3b\", \"global_batch\": 8,\n"
                 " \"parallelism\": {\"dp\": 8, \"weight_update\": \"sharded\",\n \"allgather_overlap\": 1}}",
                 "bad.json:3: \"allgather_overlap\" must be true or false");
}

/* Contradictions and the scenario's meaning: errors at the key's line. */
static void test_contradictions(void)
{
    expect_error("{\"topology\": \"dgx-a100-cluster\", \"nodes\": 1, \"model\": \"gpt3-125m\", \"global_batch\": 64,\n"
                 " \"parallelism\": {\"weight_update\": \"sharded\",\n \"zero_stage\": 0}}",
                 "bad.json:3: \"zero_stage\": 0 is the replicated weight update; it contradicts");
    /* allgather_overlap where no variant has a ZeRO-1/2 sharded update is
     * inert: a warning, not an error (sweeps over weight updates meet it) */
    GError *err = NULL;
    cJSON *r = step_run_text("ok.json",
                             "{\"topology\": \"dgx-a100-cluster\", \"nodes\": 1, \"model\": \"gpt3-125m\", "
                             "\"global_batch\": 64,\n \"parallelism\": {\"weight_update\": \"replicated\",\n "
                             "\"allgather_overlap\": true}}",
                             &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    const cJSON *w = cJSON_GetArrayItem(cJSON_GetObjectItem(r, "warnings"), 0);
    CU_ASSERT_TRUE(cJSON_IsString(w) && strstr(w->valuestring, "no effect on a replicated"));
    cJSON_Delete(r);
    /* dp x tp x pp beyond the ranks: at "dp", not at the preset */
    expect_error("{\"topology\": \"dgx-a100-cluster\", \"nodes\": 1, \"model\": \"gpt3-125m\", \"global_batch\": 64,\n"
                 " \"parallelism\": {\n \"dp\": 16}}",
                 "bad.json:3: dp x tp x pp = 16 x 1 x 1 = 16 devices");
    /* no dp, and tp x pp does not divide the ranks: at "pp" */
    expect_error("{\"topology\": \"dgx-a100-cluster\", \"nodes\": 1, \"model\": \"gpt3-1.3b\", \"global_batch\": 64,\n"
                 " \"parallelism\": {\n \"pp\": 3}}",
                 "bad.json:3: \"dp\" is not given, so the replicas fill the machine");
    expect_error("{\"topology\": \"dgx1-v100\", \"model\": \"gpt3-125m\", \"global_batch\": 64,\n"
                 " \"precision\": \"bf16\"}",
                 "bad.json:2: accelerator v100-sxm2-16gb has no bf16 arithmetic");
    expect_error("{\"topology\": \"dgx-a100-cluster\", \"nodes\": 1, \"model\": \"gpt3-125m\", \"global_batch\": 64,\n"
                 " \"parallelism\": {\n \"bucket_bytes\": \"1000TiB\"}}",
                 "bad.json:3: \"bucket_bytes\" must be between 1 B and 64 GiB, not 1000 TiB");
}

/* One dp rule: as given, else ranks / (tp x pp), for step_run_text and
 * step_json_dp (the sweep's) alike. */
static void test_dp_rule(void)
{
    static const struct {
        const char *par;
        int nodes, dp;
    } cases[] = {{"{}", 2, 16}, {"{\"tp\": 2}", 2, 8}, {"{\"tp\": 2, \"pp\": 2}", 4, 8}, {"{\"dp\": 4}", 2, 4}};
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        char *s = scen("\"gpt3-1.3b\"", cases[i].nodes, 64, 1, "adam", cases[i].par);
        cJSON *r = run(s);
        cJSON *j = cJSON_Parse(s);
        g_free(s);
        CU_ASSERT_PTR_NOT_NULL_FATAL(r);
        CU_ASSERT_EQUAL(get(r, "config", "dp"), cases[i].dp);
        long dp = 0;
        CU_ASSERT_TRUE(step_json_dp(j, &dp, NULL));
        CU_ASSERT_EQUAL(dp, cases[i].dp);
        const char *from = cJSON_GetObjectItem(cJSON_GetObjectItem(r, "config"), "dp_from")->valuestring;
        CU_ASSERT_STRING_EQUAL(from, strstr(cases[i].par, "dp") ? "the scenario" : "ranks / (tp x pp)");
        /* SI: FLOP/s per device */
        CU_ASSERT_DOUBLE_EQUAL(get(r, "flops_per_device", NULL),
                               get(r, "hardware_flops_per_step", NULL) / get(r, "step_time_s", NULL) / get(r, "config", "devices"),
                               1e-6 * get(r, "flops_per_device", NULL));
        cJSON_Delete(j);
        cJSON_Delete(r);
    }
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

/* The concurrent time found component by component (method "exact") is the
 * joint flow simulation of every (stage, tensor rank) group on one network. */
static void test_dp_contention_exact(void)
{
    cJSON *r = run("{\"topology\": \"abci-a100\", \"nodes\": 8, \"model\": \"gpt3-2.7b\", \"global_batch\": 64,\n"
                   " \"parallelism\": {\"tp\": 2, \"pp\": 2, \"bucket_bytes\": 4194304}}");
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    const cJSON *m = cJSON_GetObjectItem(cJSON_GetObjectItem(r, "dp_contention"), "method");
    CU_ASSERT_TRUE_FATAL(cJSON_IsString(m) && !strcmp(m->valuestring, "exact"));
    int dp = (int)get(cJSON_GetObjectItem(r, "config"), "dp", NULL), tp = 2, pp = 2;
    TopoOptions o = {.nodes = 8};
    Topo *t = topo_load("abci-a100", &o, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    SimGraph *g = sim_graph_new();
    CollGroup *first = NULL;
    int *ids = g_new(int, dp);
    CollCost cc = {0};
    for (int s = 0; s < pp; s++)
        for (int k = 0; k < tp; k++) {
            for (int d = 0; d < dp; d++)
                ids[d] = s * dp * tp + d * tp + k;
            CollGroup *cg = coll_group_new(t, ids, dp, NULL, NULL);
            CU_ASSERT_PTR_NOT_NULL_FATAL(cg);
            if (!first) {
                first = cg;
                CU_ASSERT_TRUE_FATAL(coll_cost(cg, COLL_ALLREDUCE, COLL_ALGO_AUTO, COLL_PROTO_AUTO, 4194304, &cc));
            }
            coll_append(cg, g, COLL_ALLREDUCE, cc.algo, cc.proto, 4194304, NULL, 0, "dp");
            if (cg != first)
                coll_group_free(cg);
        }
    SimEngine *e = sim_engine_new();
    SimNet *net = sim_net_new(e);
    coll_net_build(first, net);
    double joint = sim_time_to_s(sim_graph_run(g, e, net));
    CU_ASSERT_EQUAL(get(r, "dp_contention", "flow_time_concurrent_s"), joint);
    CU_ASSERT_EQUAL(get(r, "dp_contention", "groups_simulated"), tp * pp);
    CU_ASSERT_TRUE(get(r, "dp_contention", "factor") > 1.05);
    sim_net_free(net);
    sim_engine_free(e);
    sim_graph_free(g);
    coll_group_free(first);
    topo_free(t);
    g_free(ids);
    cJSON_Delete(r);
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
    {"DP contention by components equals the joint simulation", test_dp_contention_exact},
    {"sharded update never uses more optimizer memory", test_sharded_memory},
    {"1F1B bubble fraction (p-1)/(m+p-1)", test_bubble_1f1b},
    {"overlap never slows the step", test_overlap_monotone},
    {"all-gather behind the next forward never slows a sharded step", test_allgather_overlap_monotone},
    {"with ample compute the sharded step hides its all-gathers", test_allgather_overlap_hides},
    {"grad_reduce_dtype fp32 doubles the gradient bytes", test_grad_reduce_dtype},
    {"deterministic JSON", test_deterministic},
    {"ZeRO-3 memory equals memory_estimate", test_zero3_memory},
    {"ZeRO-3 moves more bytes than ZeRO-1", test_zero3_costs_more},
    {"bad scenarios", test_errors},
    {"contradictions and meaning errors at the key's line", test_contradictions},
    {"one dp rule: as given, else ranks / (tp x pp)", test_dp_rule},
    {"partial cluster", test_partial_cluster},
};
TEST_MAIN("step", tests)
