/* The seed techniques of issue 12 against hand-computed answers: ZeRO++
 * (Wang et al. 2023) and SDP4Bit (Jia et al. 2024) bytes on the wire,
 * groups and memory, and their papers' qualitative results; partitioned
 * activation checkpoints (ZeRO-R, Rajbhandari et al. 2020 sec. 6.1); Lynx
 * (Chen et al., arXiv 2406.08756): recomputation hidden in the
 * tensor-parallel all-reduces.  Expected values are computed here from the
 * models' hyper-parameters and the stated wire formats: int8 / int4 values
 * in blocks of 256 with one fp32 scale each. */
#include "step.h"
#include "test_json.h"
#include "test_main.h"

#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define INT8 (1 + 4.0 / 256)
#define INT4 (0.5 + 4.0 / 256)

static cJSON *run(const char *text)
{
    GError *err = NULL;
    cJSON *r = step_run_text("t.json", text, &err);
    if (!r) {
        printf("\nunexpected error: %s\n", err->message);
        g_error_free(err);
        return NULL;
    }
    /* one variant: its result */
    cJSON *res = cJSON_GetObjectItem(r, "results");
    if (res) {
        cJSON *one = cJSON_DetachItemFromArray(res, 0);
        cJSON_Delete(r);
        return one;
    }
    return r;
}

/* The first listed collective named `name` (NULL: none). */
static const cJSON *coll(const cJSON *r, const char *name)
{
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(r, "collectives"))
    {
        if (!strcmp(cJSON_GetObjectItem(c, "name")->valuestring, name))
            return c;
    }
    return NULL;
}

/* A DGX A100 cluster whose NICs run at `nic` (a bandwidth string): the
 * preset with that one value changed, in a file of the temp dir. */
static char *slow_topology(const char *nic)
{
    char *src = g_build_filename(SHARDSIM_SOURCE_DIR, "topologies", "presets", "dgx-a100-cluster.json", NULL);
    char *text = NULL;
    CU_ASSERT_FATAL(g_file_get_contents(src, &text, NULL, NULL));
    g_free(src);
    const char *key = "\"bandwidth\": \"200Gbps\"";
    char *at = strstr(text, key);
    CU_ASSERT_PTR_NOT_NULL_FATAL(at);
    *at = 0;
    char *out = g_strdup_printf("%s\"bandwidth\": \"%s\"%s", text, nic, at + strlen(key));
    char *path = g_strdup_printf("%s/shardsim-seed-%d-%s.json", g_get_tmp_dir(), (int)getpid(), nic);
    CU_ASSERT_FATAL(g_file_set_contents(path, out, -1, NULL));
    g_free(text);
    g_free(out);
    return path;
}

static char *scen(const char *topo, int nodes, const char *model, int gb, int mb, const char *par)
{
    return g_strdup_printf("{\"topology\": \"%s\", \"nodes\": %d, \"model\": \"%s\", \"global_batch\": %d,\n"
                           " \"micro_batch\": %d, \"precision\": \"bf16\", \"optimizer\": \"adam\",\n"
                           " \"parallelism\": %s}\n",
                           topo, nodes, model, gb, mb, par);
}

static double step_time(const char *topo, int nodes, const char *model, int gb, int mb, const char *par)
{
    char *t = scen(topo, nodes, model, gb, mb, par);
    cJSON *r = run(t);
    g_free(t);
    double s = r ? get(r, "step_time_s", NULL) : NAN;
    cJSON_Delete(r);
    return s;
}

/* ZeRO++ on 4 DGX A100 nodes (dp 32, 8 per node), GPT-3 6.7B: a layer of
 * 12 h^2 + 13 h parameters (h 4096) gathered in bf16 (2 bytes) by ZeRO-3;
 * qwZ gathers int8 + scales; hpZ gathers the backward's in the node's 8,
 * once per micro-batch, and holds 2 / 8 bytes per parameter more; qgZ
 * sends int4 + scales of the layer inside the node and 1 / 8 of it across
 * the 4 nodes, 8 x 2 / INT4 ~ 31x less than bf16's reduce-scatter.  On
 * one node hpZ has nothing to do. */
static void test_zeropp_bytes_memory(void)
{
    char *t = scen("dgx-a100-cluster", 4, "gpt3-6.7b", 64, 1, "{\"zero_stage\": 3}");
    cJSON *z3 = run(t);
    g_free(t);
    t = scen("dgx-a100-cluster", 4, "gpt3-6.7b", 64, 1, "{\"zero_stage\": 3, \"zeropp\": true}");
    cJSON *zp = run(t);
    g_free(t);
    CU_ASSERT_PTR_NOT_NULL_FATAL(z3);
    CU_ASSERT_PTR_NOT_NULL_FATAL(zp);
    double h = 4096, lp = 12 * h * h + 13 * h, m = 64 / 32;
    CU_ASSERT_DOUBLE_EQUAL(get(coll(z3, "zero3_allgather"), "bytes", NULL), 2 * lp, 1);
    CU_ASSERT_PTR_NULL(coll(zp, "zero3_allgather"));
    CU_ASSERT_PTR_NULL(coll(zp, "zero3_reducescatter"));
    const cJSON *qw = coll(zp, "qwz_allgather"), *hp = coll(zp, "hpz_allgather");
    const cJSON *qi = coll(zp, "qgz_alltoall_intra"), *qx = coll(zp, "qgz_alltoall_inter");
    CU_ASSERT_PTR_NOT_NULL_FATAL(qw);
    CU_ASSERT_PTR_NOT_NULL_FATAL(hp);
    CU_ASSERT_PTR_NOT_NULL_FATAL(qi);
    CU_ASSERT_PTR_NOT_NULL_FATAL(qx);
    CU_ASSERT_DOUBLE_EQUAL(get(qw, "bytes", NULL), INT8 * lp, 1);
    CU_ASSERT_EQUAL(get(qw, "group_size", NULL), 32);
    CU_ASSERT_DOUBLE_EQUAL(get(hp, "bytes", NULL), 2 * lp, 1);
    CU_ASSERT_EQUAL(get(hp, "group_size", NULL), 8);
    /* forward gathers of 32 layers x m micro-batches over the dp group, backward's in the node */
    CU_ASSERT_EQUAL(get(qw, "count_per_step", NULL), 32 * m);
    CU_ASSERT_EQUAL(get(hp, "count_per_step", NULL), 32 * m);
    CU_ASSERT_DOUBLE_EQUAL(get(qi, "bytes", NULL), INT4 * lp, 1);
    CU_ASSERT_EQUAL(get(qi, "group_size", NULL), 8);
    CU_ASSERT_DOUBLE_EQUAL(get(qx, "bytes", NULL), INT4 * lp / 8, 1);
    CU_ASSERT_EQUAL(get(qx, "group_size", NULL), 4);
    double P = get(zp, "config", "params");
    CU_ASSERT_DOUBLE_EQUAL(get(zp, "memory_per_device_bytes", "weights") - get(z3, "memory_per_device_bytes", "weights"),
                           2 * P / 8, 1);
    /* the quantisation kernels run: more compute than ZeRO-3's */
    CU_ASSERT(get(zp, "breakdown", "compute") > get(z3, "breakdown", "compute"));
    cJSON_Delete(z3);
    cJSON_Delete(zp);
    /* one node: the dp group is the node, hpZ has no second copy to keep */
    double w[2];
    for (int k = 0; k < 2; k++) {
        t = scen("dgx-a100-cluster", 1, "gpt3-1.3b", 8, 1, k ? "{\"zero_stage\": 3, \"zeropp\": {\"hpz\": true}}"
                                                           : "{\"zero_stage\": 3}");
        cJSON *r = run(t);
        g_free(t);
        CU_ASSERT_PTR_NOT_NULL_FATAL(r);
        w[k] = get(r, "memory_per_device_bytes", "weights");
        CU_ASSERT_PTR_NULL(coll(r, "hpz_allgather"));
        cJSON_Delete(r);
    }
    CU_ASSERT_EQUAL(w[0], w[1]);
}

/* ZeRO++'s result (Wang et al. 2023, sec. 5, Figs. 7-8: its speedup over
 * ZeRO-3 grows as the inter-node bandwidth falls, and is largest at the
 * smallest batch per GPU): GPT-3 6.7B on 4 nodes, NICs of 200, 50 and
 * 12.5 Gb/s, 1 and 4 sequences per GPU. */
static void test_zeropp_speedup_trend(void)
{
    static const char *const nics[] = {"200Gbps", "50Gbps", "12.5Gbps"};
    static const int mbs[] = {4, 1};
    double sp[3][2];
    for (int i = 0; i < 3; i++) {
        char *topo = slow_topology(nics[i]);
        for (int j = 0; j < 2; j++) {
            double z3 = step_time(topo, 4, "gpt3-6.7b", 32 * mbs[j], mbs[j], "{\"zero_stage\": 3}");
            double zp = step_time(topo, 4, "gpt3-6.7b", 32 * mbs[j], mbs[j], "{\"zero_stage\": 3, \"zeropp\": true}");
            sp[i][j] = z3 / zp;
            printf("\n  nic %-9s %d seq/GPU: ZeRO-3 %.3f s, ZeRO++ %.3f s, speedup %.2fx", nics[i], mbs[j], z3, zp,
                   sp[i][j]);
        }
        g_unlink(topo);
        g_free(topo);
    }
    for (int j = 0; j < 2; j++) {
        CU_ASSERT(sp[1][j] > sp[0][j]);
        CU_ASSERT(sp[2][j] > sp[1][j]);
    }
    for (int i = 1; i < 3; i++)
        CU_ASSERT(sp[i][1] > sp[i][0]); /* the smaller batch gains more */
    CU_ASSERT(sp[2][1] > 1.5);             /* a slow network: communication-bound, ZeRO++ wins big */
    CU_ASSERT(sp[0][0] > 0.95 && sp[0][0] < 1.05); /* fast network, big batch: little to gain */
}

/* SDP4Bit (Jia et al. 2024) on a ZeRO-1 update, GPT-3 1.3B on 4 nodes:
 * the updated weights' gather moves 4-bit differences (INT4 / 2 of bf16's
 * bytes), the gradients go 8-bit inside the node and 4-bit across nodes
 * (1 / 8 of them).  Its effect (sec. 5, end-to-end: "up to 4.08x" on 128
 * GPUs): the slower the network, the larger the speedup, within 4.08x on
 * a slow one; where communication hides behind compute already (50 and
 * 200 Gb/s here), its quantisation kernels cost a little. */
static void test_sdp4bit(void)
{
    static const char *const nics[] = {"12.5Gbps", "50Gbps", "200Gbps"};
    double sp[3];
    for (int i = 0; i < 3; i++) {
        char *topo = slow_topology(nics[i]);
        char *t = scen(topo, 4, "gpt3-1.3b", 64, 2, "{\"zero_stage\": 1}");
        cJSON *z1 = run(t);
        g_free(t);
        t = scen(topo, 4, "gpt3-1.3b", 64, 2, "{\"zero_stage\": 1, \"sdp4bit\": true}");
        cJSON *sd = run(t);
        g_free(t);
        g_unlink(topo);
        g_free(topo);
        CU_ASSERT_PTR_NOT_NULL_FATAL(z1);
        CU_ASSERT_PTR_NOT_NULL_FATAL(sd);
        const cJSON *ag = coll(z1, "param_allgather"), *qa = coll(sd, "sdp4bit_param_allgather");
        const cJSON *rs = coll(z1, "grad_reducescatter"), *qi = coll(sd, "sdp4bit_grad_alltoall_intra");
        const cJSON *qx = coll(sd, "sdp4bit_grad_alltoall_inter");
        CU_ASSERT_PTR_NOT_NULL_FATAL(ag);
        CU_ASSERT_PTR_NOT_NULL_FATAL(qa);
        CU_ASSERT_PTR_NOT_NULL_FATAL(rs);
        CU_ASSERT_PTR_NOT_NULL_FATAL(qi);
        CU_ASSERT_PTR_NOT_NULL_FATAL(qx);
        CU_ASSERT_PTR_NULL(coll(sd, "grad_reducescatter"));
        double wparams = get(ag, "bytes", NULL) / 2, gparams = get(rs, "bytes", NULL) / 2; /* bf16 buckets */
        CU_ASSERT_DOUBLE_EQUAL(get(qa, "bytes", NULL), INT4 * wparams, 1);
        CU_ASSERT_DOUBLE_EQUAL(get(qi, "bytes", NULL), INT8 * gparams, 1);
        CU_ASSERT_DOUBLE_EQUAL(get(qx, "bytes", NULL), INT4 * gparams / 8, 1);
        CU_ASSERT_EQUAL(get(qi, "group_size", NULL), 8);
        CU_ASSERT_EQUAL(get(qx, "group_size", NULL), 4);
        sp[i] = get(z1, "step_time_s", NULL) / get(sd, "step_time_s", NULL);
        printf("\n  nic %-9s ZeRO-1 %.3f s, SDP4Bit %.3f s, speedup %.2fx", nics[i], get(z1, "step_time_s", NULL),
               get(sd, "step_time_s", NULL), sp[i]);
        cJSON_Delete(z1);
        cJSON_Delete(sd);
    }
    CU_ASSERT(sp[0] > 1.3 && sp[0] <= 4.08);
    CU_ASSERT(sp[0] > sp[1] + 0.3 && sp[0] > sp[2] + 0.3);
    CU_ASSERT(sp[1] > 0.85 && sp[2] > 0.85); /* the kernels' cost when little is exposed */
}

/* Partitioned checkpoints, GPT-3 1.3B (24 layers, h 2048, seq 2048) with
 * tp 8 on one node, full recomputation, 2 sequences per micro-batch, 8
 * micro-batches: each layer's checkpoint (2 x 2048 x 2048 bf16 values)
 * kept as 1 / 8, all-gathered over tp before each recomputation (24 x 8 a
 * step), which costs time; on the host, two partitions stay in HBM and a
 * slower PCIe makes the step slower. */
static void test_partition_activations(void)
{
    const char *base = "{\"tp\": 8, \"recompute\": \"full\"%s}";
    const char *opts[] = {"", ", \"partition_activations\": true",
                          ", \"partition_activations\": true, \"cpu_checkpointing\": true",
                          ", \"partition_activations\": true, \"cpu_checkpointing\": true, \"pcie_bandwidth\": 2e9"};
    cJSON *r[4];
    for (int k = 0; k < 4; k++) {
        char *par = g_strdup_printf(base, opts[k]);
        char *t = scen("dgx-a100-cluster", 1, "gpt3-1.3b", 16, 2, par);
        r[k] = run(t);
        g_free(t);
        g_free(par);
        CU_ASSERT_PTR_NOT_NULL_FATAL(r[k]);
    }
    double ckpt = 2.0 * 2048 * 2048 * 2;
    CU_ASSERT_DOUBLE_EQUAL(get(r[0], "memory_per_device_bytes", "activations"), 24 * ckpt, 1);
    CU_ASSERT_DOUBLE_EQUAL(get(r[1], "memory_per_device_bytes", "activations"), 24 * ckpt / 8, 1);
    CU_ASSERT_DOUBLE_EQUAL(get(r[2], "memory_per_device_bytes", "activations"), 2 * ckpt / 8, 1);
    const cJSON *ag = coll(r[1], "checkpoint_allgather");
    CU_ASSERT_PTR_NOT_NULL_FATAL(ag);
    CU_ASSERT_DOUBLE_EQUAL(get(ag, "bytes", NULL), ckpt, 1);
    CU_ASSERT_EQUAL(get(ag, "count_per_step", NULL), 24 * 8);
    CU_ASSERT(get(r[1], "step_time_s", NULL) > get(r[0], "step_time_s", NULL));
    CU_ASSERT(get(r[3], "step_time_s", NULL) > get(r[2], "step_time_s", NULL));
    CU_ASSERT(get(r[1], "memory_per_device_bytes", "total") < get(r[0], "memory_per_device_bytes", "total"));
    for (int k = 0; k < 4; k++)
        cJSON_Delete(r[k]);
}

/* Lynx on the same run without interference: each layer's recomputation
 * but the top one's runs during the layer above's two backward all-reduces,
 * longer than them, and the top one's own two all-reduces run during the
 * head's backward (a micro-batch's forward then backward, pp 1), so the step
 * saves m x L x 2 all-reduce times (L 24, m 8), within the paper's "up to 1.37x"; one layer's full
 * activations (the recomputed layer held ahead: a no-recompute run's
 * activations / L) join the working set. */
static void test_lynx(void)
{
    const char *pars[] = {"{\"tp\": 8, \"recompute\": \"full\", \"comm_interference\": false}",
                          "{\"tp\": 8, \"recompute\": \"full\", \"comm_interference\": false, \"recompute_overlap\": true}",
                          "{\"tp\": 8, \"recompute\": \"none\"}"};
    cJSON *r[3];
    for (int k = 0; k < 3; k++) {
        char *t = scen("dgx-a100-cluster", 1, "gpt3-1.3b", 16, 2, pars[k]);
        r[k] = run(t);
        g_free(t);
        CU_ASSERT_PTR_NOT_NULL_FATAL(r[k]);
    }
    double t_ar = get(coll(r[0], "tp_allreduce"), "time_s", NULL);
    double gain = get(r[0], "step_time_s", NULL) - get(r[1], "step_time_s", NULL);
    printf("\n  Lynx saves %.4f s of %.4f s (expected %.4f)", gain, get(r[0], "step_time_s", NULL), 8 * 24 * 2 * t_ar);
    CU_ASSERT_DOUBLE_EQUAL(gain, 8 * 24 * 2 * t_ar, 1e-6);
    CU_ASSERT(get(r[0], "step_time_s", NULL) / get(r[1], "step_time_s", NULL) <= 1.37);
    double layer = get(r[2], "memory_per_device_bytes", "activations") / 24;
    CU_ASSERT_DOUBLE_EQUAL(get(r[1], "memory_per_device_bytes", "working_set") -
                               get(r[0], "memory_per_device_bytes", "working_set"),
                           layer, 1);
    for (int k = 0; k < 3; k++)
        cJSON_Delete(r[k]);
    /* with partitioned checkpoints Lynx also fetches each checkpoint while
     * the layer above recomputes: every gather hides (the top layer's
     * behind the head's backward), m x L of them more */
    const char *pa[] = {"{\"tp\": 8, \"recompute\": \"full\", \"comm_interference\": false, "
                        "\"partition_activations\": true}",
                        "{\"tp\": 8, \"recompute\": \"full\", \"comm_interference\": false, "
                        "\"partition_activations\": true, \"recompute_overlap\": true}"};
    for (int k = 0; k < 2; k++) {
        char *t = scen("dgx-a100-cluster", 1, "gpt3-1.3b", 16, 2, pa[k]);
        r[k] = run(t);
        g_free(t);
        CU_ASSERT_PTR_NOT_NULL_FATAL(r[k]);
    }
    double t_ag = get(coll(r[0], "checkpoint_allgather"), "time_s", NULL);
    gain = get(r[0], "step_time_s", NULL) - get(r[1], "step_time_s", NULL);
    printf("\n  partitioned: Lynx saves %.4f s of %.4f s", gain, get(r[0], "step_time_s", NULL));
    CU_ASSERT_DOUBLE_EQUAL(gain, 8 * 23 * 2 * t_ar + 8 * 24 * t_ag, 1e-6);
    for (int k = 0; k < 2; k++)
        cJSON_Delete(r[k]);
}

static const TestCase tests[] = {
    {"zeropp_bytes_memory", test_zeropp_bytes_memory},
    {"zeropp_speedup_trend", test_zeropp_speedup_trend},
    {"sdp4bit", test_sdp4bit},
    {"partition_activations", test_partition_activations},
    {"lynx", test_lynx},
};

TEST_MAIN("seed", tests)
