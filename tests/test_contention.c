/* Contention reaches the training step: an oversubscribed fat tree slows the
 * data-parallel collectives by what the flow model gives for them (one DP
 * group or many), leaves tensor parallelism inside a node alone, and still
 * counts when the flow simulation is past its budget (the uplink bound);
 * hybrid sharding's replica groups share a node's NICs; the other groups
 * (pipeline sends) and dp without the contention runs see the fabric on
 * their own routes, and the other replicas' copies of them beside. */
#include "collective.h"
#include "step.h"
#include "step_build.h"
#include "test_main.h"

#include <glib/gstdio.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define NODES 64
static const int overs[] = {1, 2, 4, 8};
#define NOVER ((int)G_N_ELEMENTS(overs))
static char *dir;

/* The DGX A100 cluster preset's fat tree (20 nodes per leaf, 20 spines) at
 * `over`:1, written once per ratio. */
static char *topo_path(int over)
{
    if (!dir)
        dir = g_dir_make_tmp("shardsim-contention-XXXXXX", NULL);
    char name[32];
    snprintf(name, sizeof name, "ft%d.json", over);
    char *path = g_build_filename(dir, name, NULL);
    char *text = g_strdup_printf(
        "{\"name\": \"ft%d\", \"accelerator\": \"a100-80gb\", \"family\": \"fat_tree\", \"fabric\": \"infiniband\","
        " \"nodes\": %d, \"ranks_per_node\": 8, \"nics_per_node\": 8, \"intra\": \"nvswitch\","
        " \"nvlink\": {\"bandwidth\": \"25GB/s\", \"count\": 12, \"latency\": \"250ns\"},"
        " \"pcie\": {\"bandwidth\": \"31.5GB/s\", \"latency\": \"300ns\"},"
        " \"nic\": {\"bandwidth\": \"200Gbps\", \"latency\": \"350ns\"},"
        " \"nodes_per_leaf\": 20, \"spines\": 20, \"oversubscription\": %d, \"uplink\": {\"latency\": \"200ns\"}}",
        over, NODES, over);
    CU_ASSERT_TRUE(g_file_set_contents(path, text, -1, NULL));
    g_free(text);
    return path;
}

/* The step of scenario TEXT (freed), or NULL with the error printed. */
static cJSON *run_text(char *text)
{
    GError *err = NULL;
    cJSON *r = step_run_text("t.json", text, &err);
    if (!r)
        printf("\nunexpected error: %s\n", err->message);
    g_clear_error(&err);
    g_free(text);
    return r;
}

/* GPT-3 6.7B on all 512 GPUs with tensor parallelism `tp`, at `over`:1. */
static cJSON *run(int over, int tp)
{
    char *path = topo_path(over);
    char *text = g_strdup_printf("{\"topology\": \"%s\", \"model\": \"gpt3-6.7b\", \"global_batch\": 512,"
                                 " \"micro_batch\": 1, \"precision\": \"bf16\", \"optimizer\": \"adam\","
                                 " \"parallelism\": {\"dp\": %d, \"tp\": %d, \"weight_update\": \"replicated\"}}",
                                 path, 8 * NODES / tp, tp);
    g_free(path);
    return run_text(text);
}

/* tp 2's exact results, kept for the bound's test (each run is seconds
 * under the sanitizers). */
static cJSON *tp2_exact[NOVER];

static double num(const cJSON *r, const char *a, const char *b)
{
    const cJSON *o = cJSON_GetObjectItem(r, a);
    if (b)
        o = cJSON_GetObjectItem(o, b);
    return cJSON_IsNumber(o) ? o->valuedouble : NAN;
}

static const char *method(const cJSON *r)
{
    const cJSON *m = cJSON_GetObjectItem(cJSON_GetObjectItem(r, "dp_contention"), "method");
    return cJSON_IsString(m) ? m->valuestring : "";
}

/* The report's first collective called `name`. */
static const cJSON *coll(const cJSON *r, const char *name)
{
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(r, "collectives"))
        if (!strcmp(cJSON_GetObjectItem(c, "name")->valuestring, name))
            return c;
    return NULL;
}

/* What `shardsim collective --flows` gives for the step's DP group alone on
 * that fabric: every rank of the machine in order (tp 1), `bytes`. */
static double flows(int over, double bytes, CollCost *cc)
{
    char *path = topo_path(over);
    Topo *t = topo_load(path, &(TopoOptions){0}, NULL);
    g_free(path);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CollGroup *g = coll_group_new(t, NULL, 0, NULL, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    CU_ASSERT_TRUE_FATAL(coll_cost(g, COLL_ALLREDUCE, COLL_ALGO_AUTO, COLL_PROTO_AUTO, bytes, cc));
    double s = coll_simulate(g, COLL_ALLREDUCE, cc->algo, cc->proto, bytes);
    coll_group_free(g);
    topo_free(t);
    return s;
}

/* Pure data parallelism over 64 nodes on 4 leaves: the step grows with the
 * oversubscription, strictly since the gradients' all-reduce is exposed, and
 * the all-reduce grows by exactly what the flow model gives for the group
 * (shardsim collective --flows): factor = flows on this fabric / flows on a
 * non-blocking one, which at 1:1 is this one.  The all-reduce itself stays
 * within 12% of the flow model's time: the closed form's own distance from
 * it on the non-blocking fabric (9% for this tree at 24 MiB), and 2% more
 * for the factor being found on a full 25 MiB bucket. */
static void test_dp_oversubscribed(void)
{
    double step[NOVER], ar[NOVER], fl[NOVER], bucket = 0;
    for (int i = 0; i < NOVER; i++) {
        cJSON *r = run(overs[i], 1);
        CU_ASSERT_PTR_NOT_NULL_FATAL(r);
        CU_ASSERT_STRING_EQUAL(method(r), "exact");
        step[i] = num(r, "step_time_s", NULL);
        const cJSON *c = coll(r, "grad_allreduce");
        CU_ASSERT_PTR_NOT_NULL_FATAL(c);
        ar[i] = num(c, "time_s", NULL);
        bucket = num(c, "bytes", NULL);
        CollCost cc;
        fl[i] = flows(overs[i], bucket, &cc);
        CU_ASSERT_STRING_EQUAL(coll_algo_name(cc.algo), cJSON_GetObjectItem(c, "algo")->valuestring);
        /* the factor comes from the bucket's flow simulation: 25 MiB */
        CollCost c25;
        double f25 = flows(overs[i], 26214400, &c25);
        CU_ASSERT_DOUBLE_EQUAL(num(r, "dp_contention", "flow_time_alone_s"), f25, 1e-9);
        CU_ASSERT_DOUBLE_EQUAL(num(r, "dp_contention", "factor"),
                               fmax(1, f25 / num(r, "dp_contention", "flow_time_nonblocking_s")), 1e-9);
        CU_ASSERT_TRUE(fabs(ar[i] / fl[i] - 1) < 0.12);
        if (i == 0)
            CU_ASSERT_TRUE(num(r, "breakdown", "exposed_communication") > 0);
        cJSON_Delete(r);
    }
    for (int i = 1; i < NOVER; i++) {
        CU_ASSERT_TRUE(step[i] > step[i - 1]);
        /* by what the flow model gives (its ratio at 25 MiB applied to the bucket) */
        CU_ASSERT_DOUBLE_EQUAL(ar[i] / ar[0], fl[i] / fl[0], 0.02 * fl[i] / fl[0]);
    }
    CU_ASSERT_TRUE(ar[NOVER - 1] > 2 * ar[0]);
}

/* The groups outside the contention runs see the fabric on their own
 * routes (coll_group_set_fabric): a pipeline's sends between stages on
 * different leaves (8 nodes a leaf here, so stage 0's nodes 0-15 send to
 * 16-31) slow with the oversubscription, by its 4x on the bandwidth term;
 * and without the contention runs ("flow_contention": false, plan's
 * screening) the data-parallel group alone does too, within 5% of what the
 * runs give (2% here). */
static char *leaf_path(int over, int per_leaf)
{
    char *path = topo_path(over), *text = NULL;
    CU_ASSERT_TRUE_FATAL(g_file_get_contents(path, &text, NULL, NULL));
    char **parts = g_strsplit(text, "\"nodes_per_leaf\": 20, \"spines\": 20,", 2);
    char *leaf = g_strdup_printf("\"nodes_per_leaf\": %d, \"spines\": %d,", per_leaf, per_leaf);
    char *t8 = g_strjoinv(leaf, parts);
    g_strfreev(parts);
    g_free(leaf);
    CU_ASSERT_TRUE_FATAL(strstr(t8, "\"nodes_per_leaf\": 20") == NULL);
    char *p8 = g_strdup_printf("%s.leaf%d.json", path, per_leaf);
    CU_ASSERT_TRUE(g_file_set_contents(p8, t8, -1, NULL));
    g_free(t8);
    g_free(text);
    g_free(path);
    return p8;
}

/* The step of a bf16 Adam scenario with micro-batches of 1 on the topology
 * at `path`, the rest of its fields as given. */
static cJSON *run_on(const char *path, const char *fields)
{
    return run_text(g_strdup_printf("{\"topology\": \"%s\", \"micro_batch\": 1, \"precision\": \"bf16\","
                                    " \"optimizer\": \"adam\", %s}",
                                    path, fields));
}

/* The time of the step's collective `name` under run_on(path, fields), and
 * (step not NULL) the step's. */
static double coll_time_on(const char *path, const char *fields, const char *name, double *step)
{
    cJSON *r = run_on(path, fields);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    double t = num(coll(r, name), "time_s", NULL);
    if (step)
        *step = num(r, "step_time_s", NULL);
    cJSON_Delete(r);
    return t;
}

static void test_other_groups(void)
{
    double send[2], step[2], ar[2][2];
    int over[2] = {1, 4};
    for (int i = 0; i < 2; i++) {
        char *path = leaf_path(over[i], 8);
        send[i] = coll_time_on(path, "\"model\": \"gpt3-6.7b\", \"global_batch\": 512, \"parallelism\": {\"dp\": 16,"
                                     " \"tp\": 8, \"pp\": 4, \"weight_update\": \"replicated\"}",
                               "pp_send_activation", &step[i]);
        for (int fc = 0; fc < 2; fc++) {
            char *fields = g_strdup_printf("\"model\": \"gpt3-6.7b\", \"global_batch\": 512, \"flow_contention\": %s,"
                                           " \"parallelism\": {\"dp\": 512, \"weight_update\": \"replicated\"}",
                                           fc ? "true" : "false");
            ar[i][fc] = coll_time_on(path, fields, "grad_allreduce", NULL);
            g_free(fields);
        }
        g_unlink(path);
        g_free(path);
    }
    printf("\npp send %.1f -> %.1f us, step %.4f -> %.4f s; dp all-reduce x%.3f alone, x%.3f in the contention runs\n",
           send[0] * 1e6, send[1] * 1e6, step[0], step[1], ar[1][0] / ar[0][0], ar[1][1] / ar[0][1]);
    CU_ASSERT_TRUE(send[1] > 3 * send[0]);
    CU_ASSERT_TRUE(step[1] > step[0]);
    CU_ASSERT_TRUE(ar[1][0] > 2 * ar[0][0]);
    CU_ASSERT_TRUE(fabs((ar[1][0] / ar[0][0]) / (ar[1][1] / ar[0][1]) - 1) < 0.05);
}

/* A ring (context parallelism) or a pipeline is as slow as its slowest
 * hop: on leaves of 2 nodes, cp 4 over 4 nodes has its first hop inside a
 * leaf and the next across the spines, and its sends slow with the
 * oversubscription (review 10: the first hop that left a node stood for
 * the ring, and saw nothing). */
static void test_slowest_hop(void)
{
    double send[2];
    int over[2] = {1, 4};
    for (int i = 0; i < 2; i++) {
        char *path = leaf_path(over[i], 2);
        send[i] = coll_time_on(path, "\"nodes\": 4, \"model\": \"gpt3-1.3b\", \"global_batch\": 4, \"parallelism\":"
                                     " {\"dp\": 1, \"tp\": 8, \"cp\": 4, \"weight_update\": \"replicated\"}",
                               "cp_send_kv", NULL);
        g_unlink(path);
        g_free(path);
    }
    printf("\ncp 4 over 2-node leaves: a KV send %.1f -> %.1f us\n", send[0] * 1e6, send[1] * 1e6);
    CU_ASSERT_TRUE(send[1] > 2 * send[0]);
}

/* Leaves of 20 nodes with `up` full-rate uplinks each (20: non-blocking;
 * 5: 4:1 as examples/topologies/dgx-a100-4to1.json builds it, where a lone
 * flow between leaves still runs at its NIC's rate). */
static char *full_rate_path(int up)
{
    char *path = topo_path(1), *text = NULL, *out = g_strdup_printf("%s.up%d.json", path, up);
    CU_ASSERT_TRUE_FATAL(g_file_get_contents(path, &text, NULL, NULL));
    char **parts = g_strsplit(text, "\"spines\": 20, \"oversubscription\": 1", 2);
    char *ups = g_strdup_printf("\"spines\": %d, \"oversubscription\": %d", up, 20 / up);
    char *t = g_strjoinv(ups, parts);
    CU_ASSERT_TRUE(g_file_set_contents(out, t, -1, NULL));
    g_strfreev(parts);
    g_free(ups);
    g_free(t);
    g_free(text);
    g_free(path);
    return out;
}

/* `ngroups` groups of `size` ranks (group k's i-th: rank_of(k, i)) running
 * `op` of `bytes` at once on the flow model. */
static double groups_flows(const char *path, int ngroups, int size, int (*rank_of)(int k, int i), CollOp op,
                           CollAlgo algo, double bytes)
{
    GError *err = NULL;
    Topo *t = topo_load(path, NULL, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    SimEngine *e = sim_engine_new();
    SimNet *net = sim_net_new(e);
    SimGraph *graph = sim_graph_new();
    CollGroup **g = g_new(CollGroup *, ngroups);
    int *ids = g_new(int, size);
    for (int k = 0; k < ngroups; k++) {
        for (int i = 0; i < size; i++)
            ids[i] = rank_of(k, i);
        g[k] = coll_group_new(t, ids, size, NULL, &err);
        CU_ASSERT_PTR_NOT_NULL_FATAL(g[k]);
        coll_append(g[k], graph, op, algo, COLL_SIMPLE, bytes, NULL, 0, NULL);
    }
    coll_net_build(g[0], net);
    double s = sim_time_to_s(sim_graph_run(graph, e, net));
    for (int k = 0; k < ngroups; k++)
        coll_group_free(g[k]);
    g_free(g);
    g_free(ids);
    sim_graph_free(graph);
    sim_net_free(net);
    sim_engine_free(e);
    topo_free(t);
    return s;
}

/* Pair k of the first stage boundary of dp 16 x tp 8 x pp 4: job rank k to
 * 128 + k. */
static int boundary_rank(int k, int i) { return i ? 128 + k : k; }

/* A pipeline's sends run in every replica at once: with full-rate uplinks
 * at 4:1 (20 nodes a leaf, stage 1's nodes 16-31 straddling two leaves),
 * one pair alone crosses at its NIC's rate, but the 96 pairs of 12 nodes
 * that leave leaf 0 share its 5 uplinks per rail (before, the step priced
 * the lone pair: unchanged from 1:1).  The send slows by what the flows of
 * every pair together give: the time the uplinks add, within 5% (the
 * flows' pipeline fill, 26 us here, is not the closed form's and cancels). */
#define PP4_FIELDS(fc)                                                                                                 \
    "\"model\": \"gpt3-6.7b\", \"global_batch\": 512, \"flow_contention\": " fc ", \"parallelism\": {\"dp\": 16,"          \
    " \"tp\": 8, \"pp\": 4, \"weight_update\": \"replicated\"}"

static void test_replicas_share_uplinks(void)
{
    double send[2], fl[2], ar[2][2];
    int up[2] = {20, 5};
    for (int i = 0; i < 2; i++) {
        char *path = full_rate_path(up[i]);
        cJSON *r = run_on(path, PP4_FIELDS("true"));
        CU_ASSERT_PTR_NOT_NULL_FATAL(r);
        const cJSON *c = coll(r, "pp_send_activation");
        CU_ASSERT_PTR_NOT_NULL_FATAL(c);
        send[i] = num(c, "time_s", NULL);
        fl[i] = groups_flows(path, 128, 2, boundary_rank, COLL_BROADCAST, COLL_RING, num(c, "bytes", NULL));
        if (i == 1)
            CU_ASSERT_TRUE(num(c, "fabric_factor", NULL) > 2);
        ar[i][1] = num(coll(r, "grad_allreduce"), "time_s", NULL);
        cJSON_Delete(r);
        ar[i][0] = coll_time_on(path, PP4_FIELDS("false"), "grad_allreduce", NULL);
        g_unlink(path);
        g_free(path);
    }
    printf("\npp send, every replica at once, 1:1 -> 4:1 full-rate uplinks: %.1f -> %.1f us, +%.1f us; flows"
           " %.1f -> %.1f us, +%.1f us\n",
           send[0] * 1e6, send[1] * 1e6, (send[1] - send[0]) * 1e6, fl[0] * 1e6, fl[1] * 1e6, (fl[1] - fl[0]) * 1e6);
    CU_ASSERT_DOUBLE_EQUAL(send[1] - send[0], fl[1] - fl[0], 0.05 * (fl[1] - fl[0]));
    CU_ASSERT_TRUE(send[1] > 2 * send[0]);
    /* stage 0's dp groups stay in leaf 0 (alone they saw no fabric);
     * stage 1's straddle two, where static routing makes them collide at
     * 1:1 too: without the contention run the copies show it */
    printf("dp all-reduce of that job without the contention run %.3f ms (1:1) and %.3f ms (4:1), with it %.3f"
           " and %.3f ms\n",
           ar[0][0] * 1e3, ar[1][0] * 1e3, ar[0][1] * 1e3, ar[1][1] * 1e3);
    for (int i = 0; i < 2; i++)
        CU_ASSERT_DOUBLE_EQUAL(ar[i][0], ar[i][1], 0.05 * ar[i][1]);
}

/* A pipeline step waits for its slowest pair: with dp 3 x tp 2, stage 0's
 * first two pairs stay in node 0 (ranks 0-5 to 6-11) and the other four
 * leave it, so the boundary is priced through the NICs, as dp 4's, whose
 * stages fill a node each (before, its first pair stood for it: an
 * NVLink send, 45.9 us against 371.9). */
static void test_boundary_slowest_pair(void)
{
    double send[2];
    int dp[2] = {3, 4};
    char *path = full_rate_path(20);
    for (int i = 0; i < 2; i++) {
        char *fields = g_strdup_printf("\"nodes\": %d, \"model\": \"gpt3-6.7b\", \"global_batch\": 96, \"parallelism\":"
                                       " {\"dp\": %d, \"tp\": 2, \"pp\": 16, \"weight_update\": \"replicated\"}",
                                       dp[i] * 4, dp[i]);
        send[i] = coll_time_on(path, fields, "pp_send_activation", NULL);
        g_free(fields);
    }
    g_unlink(path);
    g_free(path);
    printf("\npp send at a boundary with pairs inside and across nodes %.1f us, across only %.1f us\n", send[0] * 1e6,
           send[1] * 1e6);
    CU_ASSERT_DOUBLE_EQUAL(send[0], send[1], 1e-3 * send[1]);
}

/* Without the contention run (plan's screening) FSDP hybrid sharding's
 * replica groups, 16 ranks apart, see each other on the uplinks: their
 * all-reduce comes within 5% of the contention run's (review 11: at
 * pipeline depth 1 the stride's parallel groups were dropped, and it was
 * 1298 us against 1719). */
static void test_replicas_without_runs(void)
{
    char *path = full_rate_path(5);
    double ar[2];
    for (int fc = 0; fc < 2; fc++) {
        char *fields = g_strdup_printf("\"model\": \"gpt3-1.3b\", \"global_batch\": 1024, \"flow_contention\": %s,"
                                       " \"parallelism\": {\"dp\": 512, \"zero_stage\": 3, \"zero_impl\": \"fsdp2\","
                                       " \"shard_group\": 16}",
                                       fc ? "true" : "false");
        ar[fc] = coll_time_on(path, fields, "hybrid_allreduce", NULL);
        g_free(fields);
    }
    g_unlink(path);
    g_free(path);
    printf("\nhybrid sharding's replica all-reduce at 4:1: %.1f us alone with its copies, %.1f us in the contention run\n",
           ar[0] * 1e6, ar[1] * 1e6);
    CU_ASSERT_DOUBLE_EQUAL(ar[0], ar[1], 0.05 * ar[1]);
}

/* Expert-parallel group k of 16 (two nodes) of 512 ranks. */
static int ep_rank(int k, int i) { return 16 * k + i; }

/* An all-to-all's closed form bounds by the busiest link of its pattern
 * (coll_pattern_spb); every expert-parallel group's pattern loads the
 * fabric beside it.  Qwen3-30B-A3B with ep 16 over pairs of nodes on
 * leaves of 20: a group's cross-rail sends climb to the spines (one leaf a
 * rail), where every group's meet; with 5 full-rate uplinks a leaf (4:1)
 * the dispatch slows by what the flows of all 32 groups together give
 * (before, the lone group's pattern: unchanged from 1:1). */
static void test_ep_groups_share_uplinks(void)
{
    double a2a[2], fl[2];
    int up[2] = {20, 5};
    for (int i = 0; i < 2; i++) {
        char *path = full_rate_path(up[i]);
        cJSON *r = run_on(path, "\"model\": \"qwen3-30b-a3b\", \"global_batch\": 1024, \"parallelism\":"
                                " {\"dp\": 512, \"ep\": 16, \"weight_update\": \"sharded\", \"zero_stage\": 1}");
        CU_ASSERT_PTR_NOT_NULL_FATAL(r);
        const cJSON *c = coll(r, "ep_dispatch");
        CU_ASSERT_PTR_NOT_NULL_FATAL(c);
        CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(c, "algo")->valuestring, "direct");
        CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(c, "proto")->valuestring, "simple");
        a2a[i] = num(c, "time_s", NULL);
        fl[i] = groups_flows(path, 32, 16, ep_rank, COLL_ALLTOALL, COLL_DIRECT, num(c, "bytes", NULL));
        /* the listing says what slowed it */
        CU_ASSERT_TRUE(i == 1 ? num(c, "fabric_factor", NULL) > 3 : !cJSON_GetObjectItem(c, "fabric_factor"));
        if (i == 1)
            printf("\nep 16 dispatch at 4:1: fabric_factor %.4g", num(c, "fabric_factor", NULL));
        cJSON_Delete(r);
        g_unlink(path);
        g_free(path);
    }
    printf("\nep 16 dispatch, every group at once, 1:1 -> 4:1 full-rate uplinks: %.3f -> %.3f ms (x%.3f); flows"
           " %.3f -> %.3f ms (x%.3f)\n",
           a2a[0] * 1e3, a2a[1] * 1e3, a2a[1] / a2a[0], fl[0] * 1e3, fl[1] * 1e3, fl[1] / fl[0]);
    CU_ASSERT_DOUBLE_EQUAL(a2a[1] / a2a[0], fl[1] / fl[0], 0.02 * fl[1] / fl[0]);
    CU_ASSERT_TRUE(a2a[1] > 2 * a2a[0]);
}

/* tp 2 and tp 8 stay inside a node: their collectives do not change with the
 * fabric, and the step never gets faster as the fabric narrows (with tp 2
 * the old ratio of two flow runs on the same narrowed fabric made 2:1 a
 * hair faster than 1:1). */
static void test_tp_inside_node(void)
{
    static const int tps[] = {2, 8};
    for (size_t k = 0; k < G_N_ELEMENTS(tps); k++) {
        double step_prev = 0, tp_t = NAN;
        for (int i = 0; i < NOVER; i++) {
            cJSON *r = run(overs[i], tps[k]);
            CU_ASSERT_PTR_NOT_NULL_FATAL(r);
            CU_ASSERT_STRING_EQUAL(method(r), "exact");
            double s = num(r, "step_time_s", NULL);
            const cJSON *c = coll(r, "tp_allreduce");
            CU_ASSERT_PTR_NOT_NULL_FATAL(c);
            if (i == 0)
                tp_t = num(c, "time_s", NULL);
            CU_ASSERT_EQUAL(num(c, "time_s", NULL), tp_t);
            CU_ASSERT_TRUE(s >= step_prev);
            if (i > 0 && tps[k] == 2) /* DP groups of 256 cross leaves: exposed, so strictly */
                CU_ASSERT_TRUE(s > step_prev);
            step_prev = s;
            if (tps[k] == 2 && !tp2_exact[i])
                tp2_exact[i] = r;
            else
                cJSON_Delete(r);
        }
    }
}

/* Past the work budget the uplink bound scales the DP collectives, says so,
 * still grows with the oversubscription, and never claims more than the
 * flow simulation finds (it is a lower bound of the collective's time). */
static void test_uplink_bound(void)
{
    double prev = 0;
    for (int i = 0; i < NOVER; i++) {
        cJSON *exact = tp2_exact[i] ? tp2_exact[i] : run(overs[i], 2);
        tp2_exact[i] = NULL;
        dp_contention_set_work_budget(1000);
        cJSON *r = run(overs[i], 2);
        dp_contention_set_work_budget(0);
        CU_ASSERT_PTR_NOT_NULL_FATAL(exact);
        CU_ASSERT_PTR_NOT_NULL_FATAL(r);
        CU_ASSERT_STRING_EQUAL(method(r), "uplink bound");
        const cJSON *w = cJSON_GetArrayItem(cJSON_GetObjectItem(r, "warnings"), 0);
        CU_ASSERT_TRUE(cJSON_IsString(w) && strstr(w->valuestring, "uplink bound"));
        double f = num(r, "dp_contention", "factor"), fx = num(exact, "dp_contention", "factor");
        double up = num(r, "dp_contention", "uplink_bound_s");
        CU_ASSERT_TRUE(up > 0);
        CU_ASSERT_TRUE(up <= num(exact, "dp_contention", "flow_time_concurrent_s"));
        CU_ASSERT_TRUE(f <= fx * 1.001);
        CU_ASSERT_TRUE(f >= prev);
        if (overs[i] >= 4) /* the uplinks bind: 2 and more times the closed form */
            CU_ASSERT_TRUE(f > 1.5);
        prev = f;
        cJSON_Delete(r);
        cJSON_Delete(exact);
    }
}

/* FSDP hybrid sharding (shard groups of 8) on 4 nodes whose 800 Gb/s leave
 * through `nics` NICs, with tensor parallelism `tp`. */
static cJSON *run_hybrid(int nics, int tp, char **path)
{
    if (!dir)
        dir = g_dir_make_tmp("shardsim-contention-XXXXXX", NULL);
    char name[32];
    snprintf(name, sizeof name, "nics%d.json", nics);
    *path = g_build_filename(dir, name, NULL);
    char *topo = g_strdup_printf(
        "{\"name\": \"nics%d\", \"accelerator\": \"a100-80gb\", \"family\": \"fat_tree\", \"fabric\": \"roce\","
        " \"nodes\": 4, \"ranks_per_node\": 8, \"nics_per_node\": %d, \"intra\": \"nvswitch\","
        " \"nvlink\": {\"bandwidth\": \"25GB/s\", \"count\": 12, \"latency\": \"250ns\"},"
        " \"pcie\": {\"bandwidth\": \"31.5GB/s\", \"latency\": \"300ns\"},"
        " \"nic\": {\"bandwidth\": \"%dGbps\", \"latency\": \"500ns\"}, \"uplink\": {\"latency\": \"500ns\"}}",
        nics, nics, 800 / nics);
    CU_ASSERT_TRUE(g_file_set_contents(*path, topo, -1, NULL));
    g_free(topo);
    char *text = g_strdup_printf("{\"topology\": \"%s\", \"model\": \"gpt3-1.3b\", \"global_batch\": 32,"
                                 " \"micro_batch\": 1, \"precision\": \"bf16\", \"optimizer\": \"adam\","
                                 " \"parallelism\": {\"dp\": %d, \"tp\": %d, \"zero_stage\": 3, \"shard_group\": 8}}",
                                 *path, 32 / tp, tp);
    return run_text(text);
}

/* Hybrid sharding's replica all-reduces run eight at once, one per GPU of
 * a node: with a NIC per GPU each has its own, with four NICs two share
 * each.  The same 800 Gb/s per node gives the same all-reduce either way
 * (before, the four-NIC node's ran at twice its share). */
static void test_hybrid_shares_nics(void)
{
    double t[2], f[2];
    const int nics[2] = {8, 4};
    for (int i = 0; i < 2; i++) {
        char *path;
        cJSON *r = run_hybrid(nics[i], 1, &path);
        CU_ASSERT_PTR_NOT_NULL_FATAL(r);
        const cJSON *m = cJSON_GetObjectItem(cJSON_GetObjectItem(r, "dp_contention"), "replica_method");
        CU_ASSERT_TRUE(cJSON_IsString(m) && !strcmp(m->valuestring, "exact"));
        const cJSON *c = coll(r, "hybrid_allreduce");
        CU_ASSERT_PTR_NOT_NULL_FATAL(c);
        t[i] = num(c, "time_s", NULL);
        f[i] = num(r, "dp_contention", "replica_factor");
        CU_ASSERT_DOUBLE_EQUAL(num(r, "dp_contention", "factor"), 1, 1e-9); /* shard groups inside a node */
        cJSON_Delete(r);
        CU_ASSERT_EQUAL(g_unlink(path), 0);
        g_free(path);
    }
    printf("\nhybrid all-reduce: 8 NICs %.4g s (factor %.3f), 4 NICs %.4g s (factor %.3f)\n", t[0], f[0], t[1], f[1]);
    CU_ASSERT_DOUBLE_EQUAL(f[0], 1, 1e-9);
    CU_ASSERT_TRUE(f[1] > 1.8 && f[1] < 2.05);
    CU_ASSERT_DOUBLE_EQUAL(t[1] / t[0], 1, 0.05);
}

/* With tp 2 the shard groups of 8 span two nodes, and the four tensor
 * ranks' groups of a node pair share its NICs: their all-gathers are
 * scaled as a plain FSDP group's would be, and the replicas' too. */
static void test_hybrid_shard_groups(void)
{
    char *path;
    cJSON *r = run_hybrid(4, 2, &path);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    double f = num(r, "dp_contention", "factor"), fr = num(r, "dp_contention", "replica_factor");
    printf("\nshard groups across 2 nodes on 4 NICs, tp 2: factor %.3f, replicas %.3f\n", f, fr);
    CU_ASSERT_STRING_EQUAL(method(r), "exact");
    CU_ASSERT_TRUE(f > 1.5 && f < 2.05);
    CU_ASSERT_TRUE(fr > 1.5 && fr < 2.05);
    cJSON_Delete(r);
    CU_ASSERT_EQUAL(g_unlink(path), 0);
    g_free(path);
}

/* Removes the topology files. */
static void test_cleanup(void)
{
    for (int i = 0; i < NOVER && dir; i++) {
        char *p = topo_path(overs[i]);
        CU_ASSERT_EQUAL(g_unlink(p), 0);
        g_free(p);
    }
    if (dir)
        CU_ASSERT_EQUAL(g_rmdir(dir), 0);
    g_free(dir);
    dir = NULL;
}

static const TestCase tests[] = {
    {"dp over leaves grows with oversubscription as the flow model does", test_dp_oversubscribed},
    {"the other groups, and dp without contention runs, see the fabric", test_other_groups},
    {"a ring or a pipeline is as slow as its slowest hop", test_slowest_hop},
    {"every replica's pipeline sends share the uplinks", test_replicas_share_uplinks},
    {"every expert-parallel group's all-to-all shares the uplinks", test_ep_groups_share_uplinks},
    {"a pipeline boundary is priced on its slowest pair", test_boundary_slowest_pair},
    {"hybrid sharding's replica groups see each other without the contention run", test_replicas_without_runs},
    {"tp inside a node is unaffected by the fabric", test_tp_inside_node},
    {"uplink bound past the work budget", test_uplink_bound},
    {"hybrid sharding's replica all-reduces share a node's NICs", test_hybrid_shares_nics},
    {"hybrid sharding's shard groups across nodes contend too", test_hybrid_shard_groups},
    {"cleanup", test_cleanup},
};

TEST_MAIN("contention", tests)
