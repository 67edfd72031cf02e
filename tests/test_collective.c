#include "collective.h"
#include "scenario.h"
#include "test_load.h"
#include "test_main.h"

#include <cjson/cJSON.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static double rel(double a, double b) { return fabs(a - b) / b; }

typedef struct {
    double lo, hi;
} Band;

/* Where flows / closed form should land on an uncontended topology, and why
 * it may leave 1 +- 5%. */
static Band flow_band(CollAlgo a, CollOp op, const CollGroup *g, const CollCost *c, bool torus)
{
    int n = coll_group_size(g);
    if (a == COLL_TORUS) /* neighbour rings on links of their own, phase after phase: exact */
        return (Band){0.99, 1.01};
    if (torus) /* the pattern's multi-hop routes share links: contended, no claim */
        return (Band){0.7, 1.7};
    switch (a) {
    case COLL_TREE: {
        /* every hop starts once data reaches it, so the transfer overlaps part
         * of the step latencies the closed form adds to it (at 2 nodes too:
         * both count the halved network load) */
        double lat = c->latency_s / c->time_s;
        return (Band){(1 - lat) - 0.04, 1.05};
    }
    case COLL_DIRECT: /* the closed form's per-rank bandwidth is the rings found; direct uses every link */
        return (Band){0.85, 1.05};
    case COLL_RING:
        if (op == COLL_BROADCAST || op == COLL_REDUCE) /* a chain's fill: n - 1 of its >= 16 segments */
            return (Band){0.95, 1 + (n - 1) / 16.0};
        return (Band){0.95, 1.05};
    default: return (Band){0.95, 1.05};
    }
}

/* A fat tree of DGX A100-like nodes (PCIe 4.0 to each GPU's NIC), written
 * to `dir` and loaded. */
static Topo *fat_tree(const char *dir, int nodes, const char *nic, int per_leaf, int spines, int over)
{
    char *path = g_build_filename(dir, "ft.json", NULL);
    char *text = g_strdup_printf(
        "{\"name\": \"ft\", \"family\": \"fat_tree\", \"nodes\": %d, \"ranks_per_node\": 8, \"nics_per_node\": 8,"
        " \"intra\": \"nvswitch\", \"nvlink\": {\"bandwidth\": \"25GB/s\", \"count\": 12, \"latency\": \"250ns\"},"
        " \"pcie\": {\"bandwidth\": \"31.5GB/s\", \"latency\": \"300ns\"},"
        " \"nic\": {\"bandwidth\": \"%s\", \"latency\": \"350ns\"}, \"nodes_per_leaf\": %d, \"spines\": %d,"
        " \"oversubscription\": %d, \"uplink\": {\"latency\": \"200ns\"}}",
        nodes, nic, per_leaf, spines, over);
    CU_ASSERT_TRUE(g_file_set_contents(path, text, -1, NULL));
    Topo *t = load(path, 0);
    g_unlink(path);
    g_free(path);
    g_free(text);
    return t;
}

/* A NIC faster than the PCIe link that feeds it (400 Gb/s on a PCIe 4.0
 * GPU): the NICs carry what the GPUs bring them, in the closed form as in
 * the flows, and a faster NIC never makes a collective slower. */
static void test_nic_behind_pcie(void)
{
    char *dir = g_dir_make_tmp("shardsim-XXXXXX", NULL);
    const char *nic[] = {"100Gbps", "200Gbps", "400Gbps", "800Gbps"};
    double inter[4], prev[3] = {INFINITY, INFINITY, INFINITY}, prevc[3] = {INFINITY, INFINITY, INFINITY};
    const double sizes[] = {1 << 20, 25e6, 1 << 30};
    for (int i = 0; i < 4; i++) {
        Topo *t = fat_tree(dir, 8, nic[i], 8, 8, 1);
        CU_ASSERT_PTR_NOT_NULL_FATAL(t);
        CollGroup *g = group(t);
        CU_ASSERT_PTR_NOT_NULL_FATAL(g);
        inter[i] = coll_group_inter_bw(g);
        for (int k = 0; k < 3; k++) { /* the protocol NCCL picks; Simple's closed form against its flows */
            CollCost c, s;
            CU_ASSERT_TRUE_FATAL(coll_cost(g, COLL_REDUCESCATTER, COLL_RING, COLL_PROTO_AUTO, sizes[k], &c));
            CU_ASSERT_TRUE_FATAL(coll_cost(g, COLL_REDUCESCATTER, COLL_RING, COLL_SIMPLE, sizes[k], &s));
            double f = coll_simulate(g, COLL_REDUCESCATTER, COLL_RING, c.proto, sizes[k]);
            CU_ASSERT_TRUE(rel(coll_simulate(g, COLL_REDUCESCATTER, COLL_RING, COLL_SIMPLE, sizes[k]), s.time_s) < 0.05);
            CU_ASSERT_TRUE(f <= prev[k] * (1 + 1e-9) && c.time_s <= prevc[k] * (1 + 1e-9));
            prev[k] = f;
            prevc[k] = c.time_s;
        }
        coll_group_free(g);
        topo_free(t);
    }
    g_rmdir(dir);
    g_free(dir);
    /* 12.5 and 25 GB/s NICs bound the node; from 400 Gb/s its PCIe links do */
    CU_ASSERT_TRUE(rel(inter[1], 2 * inter[0]) < 1e-9);
    CU_ASSERT_TRUE(inter[2] > inter[1] && inter[2] < 1.3 * inter[1]);
    CU_ASSERT_DOUBLE_EQUAL(inter[3], inter[2], 1e-3);
}

/* Across nodes of a fully connected mesh (AMD's Infinity Fabric presets,
 * Polaris's 4 GPUs on 2 NICs) the ring search finds several differently
 * ordered intra rings, fewer than the NICs: the ring's flows split each
 * NIC's channel over every intra ring by its bandwidth, and rotate each
 * ring so that channels leave a node by different NICs, so they carry what
 * the closed form's bandwidths say (channel c on ring c mod nch, each cut
 * where an NVSwitch node's would be, left several channels on one NIC and
 * two on one ring's links: 2.75x on MI300X, 2.00x on Polaris).  Printed. */
static void test_mesh_flows(void)
{
    static const char *const mesh[] = {"mi300x-cluster", "mi355x-cluster", "polaris"};
    for (size_t i = 0; i < G_N_ELEMENTS(mesh); i++) {
        Topo *t = load(mesh[i], 2);
        CU_ASSERT_PTR_NOT_NULL_FATAL(t);
        CollGroup *g = group(t);
        CU_ASSERT_PTR_NOT_NULL_FATAL(g);
        for (CollOp op = COLL_ALLREDUCE; op <= COLL_ALLGATHER; op++) {
            CollCost c;
            CU_ASSERT_TRUE_FATAL(coll_cost(g, op, COLL_RING, COLL_SIMPLE, 1 << 30, &c));
            double r = coll_simulate(g, op, COLL_RING, COLL_SIMPLE, 1 << 30) / c.time_s;
            printf("\n%s, 2 nodes, 1 GiB ring %s: flows / closed form %.3fx", mesh[i], coll_op_name(op), r);
            CU_ASSERT_TRUE(fabs(r - 1) < 0.01);
        }
        /* the known gap (README): the tree's flows still take ring c mod nch
         * per channel; held to where it stands */
        CollCost c;
        CU_ASSERT_TRUE_FATAL(coll_cost(g, COLL_ALLREDUCE, COLL_TREE, COLL_SIMPLE, 64 << 20, &c));
        double r = coll_simulate(g, COLL_ALLREDUCE, COLL_TREE, COLL_SIMPLE, 64 << 20) / c.time_s;
        printf("\n%s, 2 nodes, 64 MiB tree allreduce: flows / closed form %.2fx", mesh[i], r);
        CU_ASSERT_TRUE(r > 0.95 && r < 1.6);
        coll_group_free(g);
        topo_free(t);
    }
    printf("\n");
}

/* Every algorithm and op the model offers, closed form against flows. */
static void test_closed_form_matches_flows(void)
{
    static const struct {
        const char *topo;
        int nodes;
    } cases[] = {{"ring8", 0},  {"fc8", 0},  {"dgx-a100", 0},  {"dgx-h100", 0},  {"dgx1-v100", 0},
                 {"dgx-a100-cluster", 2}, {"dgx-a100-cluster", 8}, {"dgx-a100-cluster", 64},
                 {"dgx-h100-cluster", 4}, {"tpu-v3-pod", 4}};
    int tested = 0, tested_torus = 0;
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        Topo *t = load(cases[i].topo, cases[i].nodes);
        CU_ASSERT_PTR_NOT_NULL_FATAL(t);
        CollGroup *g = group(t);
        CU_ASSERT_PTR_NOT_NULL_FATAL(g);
        bool torus = strncmp(cases[i].topo, "tpu", 3) == 0;
        tested_torus += torus && coll_cost(g, COLL_ALLREDUCE, COLL_TORUS, COLL_PROTO_AUTO, 1 << 20, &(CollCost){0});
        for (int a = 0; a < COLL_NUM_ALGOS; a++)
            for (int op = 0; op < COLL_NUM_OPS; op++) {
                /* 512 ranks: the ring and tree all-reduce only (n^2 patterns are slow) */
                if (coll_group_size(g) > 128 && !(op == COLL_ALLREDUCE && (a == COLL_RING || a == COLL_TREE)))
                    continue;
                for (double bytes = 16.0 * 1048576; bytes <= 1024.0 * 1048576; bytes *= 64) {
                    CollCost c;
                    if (!coll_cost(g, op, a, COLL_PROTO_AUTO, bytes, &c))
                        continue;
                    double r = coll_simulate(g, op, a, c.proto, bytes) / c.time_s;
                    Band band = flow_band(a, op, g, &c, torus);
                    tested++;
                    if (r < band.lo || r > band.hi)
                        fprintf(stderr, "%s x%d %s %s %.0f: flows/closed %.3f outside [%.3f, %.3f]\n", cases[i].topo,
                                cases[i].nodes, coll_algo_name(a), coll_op_name(op), bytes, r, band.lo, band.hi);
                    CU_ASSERT_TRUE(r >= band.lo && r <= band.hi);
                }
            }
        coll_group_free(g);
        topo_free(t);
    }
    CU_ASSERT_TRUE(tested > 100);
    CU_ASSERT_EQUAL(tested_torus, 1); /* tests/test_torus.c: more tori */
}

/* The double binary tree across nodes: on a non-blocking rail-optimised fat
 * tree, flows and closed form agree at 1 GiB (they differed by 4.1x at 64
 * nodes when both trees of a pair used different NICs and the pipeline
 * filled by whole segments); the network carries 2x the message per node
 * from 3 nodes on, as a ring's 2(n-1)/n, and once at 2 nodes (one edge per
 * tree), where NCCL's tuner rates it by its per-channel cap (Ampere's 23.6
 * GB/s, under a channel's 200 Gb/s NIC share) and so keeps the ring for large
 * messages. */
static void test_tree_across_nodes(void)
{
    int nodes[] = {2, 8, 64};
    for (size_t i = 0; i < G_N_ELEMENTS(nodes); i++) {
        Topo *t = load("dgx-a100-cluster", nodes[i]);
        CU_ASSERT_PTR_NOT_NULL_FATAL(t);
        CollGroup *g = group(t);
        CU_ASSERT_PTR_NOT_NULL_FATAL(g);
        double bytes = 1 << 30;
        CollCost tree, ring, best;
        CU_ASSERT_TRUE_FATAL(coll_cost(g, COLL_ALLREDUCE, COLL_TREE, COLL_SIMPLE, bytes, &tree));
        CU_ASSERT_TRUE_FATAL(coll_cost(g, COLL_ALLREDUCE, COLL_RING, COLL_SIMPLE, bytes, &ring));
        CU_ASSERT_TRUE_FATAL(coll_cost(g, COLL_ALLREDUCE, COLL_ALGO_AUTO, COLL_PROTO_AUTO, bytes, &best));
        double f = coll_simulate(g, COLL_ALLREDUCE, COLL_TREE, COLL_SIMPLE, bytes);
        fprintf(stderr, "tree x%d 1 GiB: closed %.3f ms, flows %.3f ms\n", nodes[i], tree.time_s * 1e3, f * 1e3);
        CU_ASSERT_TRUE(rel(f, tree.time_s) < (nodes[i] > 2 ? 0.02 : 0.05));
        /* 2 x bytes over the NICs, Simple tree efficiency 0.92; at 2 nodes
         * NCCL rates it by the per-channel cap instead (8 channels x 23.6 GB/s
         * on Ampere, under 0.92 x the raised bwIntra), algbw = bus / 2 */
        double net = 2 * bytes / coll_group_inter_bw(g) / 0.92, xfer = tree.time_s - tree.latency_s;
        double rated = nodes[i] == 2 ? bytes / (0.5 * 8 * 23.6e9 * 0.96) : net; /* cap in the NICs' carried terms */
        CU_ASSERT_DOUBLE_EQUAL(bytes / tree.tuner_algbw_Bps, rated, 1e-9 * rated);
        if (nodes[i] > 2) {
            CU_ASSERT_DOUBLE_EQUAL(xfer, net, 1e-9 * net);
        } else { /* half the network bytes: the NVLink chains bind, not the NICs */
            CU_ASSERT_TRUE(xfer < 0.75 * net && xfer >= 0.5 * net * (1 - 1e-9));
            CU_ASSERT_TRUE(tree.time_s < ring.time_s);
        }
        if (nodes[i] <= 8) /* NCCL's rating: the ring wins large all-reduces (at 64 nodes its latency loses) */
            CU_ASSERT_EQUAL(best.algo, COLL_RING);
        coll_group_free(g);
        topo_free(t);
    }
}

/* A fat tree whose leaves have a quarter of the bandwidth up to the spines:
 * a ring that must cross leaf groups runs four times slower on the flow
 * model, while the closed form (which sees only NICs and NVLink) does not
 * change. */
static void test_oversubscribed_fat_tree(void)
{
    char *dir = g_dir_make_tmp("shardsim-XXXXXX", NULL);
    double flow[2], closed[2];
    int over[2] = {1, 4};
    for (int i = 0; i < 2; i++) {
        Topo *t = fat_tree(dir, 16, "200Gbps", 4, 4, over[i]);
        CU_ASSERT_PTR_NOT_NULL_FATAL(t);
        CollGroup *g = group(t);
        CU_ASSERT_PTR_NOT_NULL_FATAL(g);
        CollCost c;
        CU_ASSERT_TRUE(coll_cost(g, COLL_ALLREDUCE, COLL_RING, COLL_SIMPLE, 4e9, &c));
        closed[i] = c.time_s - c.latency_s;
        flow[i] = coll_simulate(g, COLL_ALLREDUCE, COLL_RING, COLL_SIMPLE, 4e9) - c.latency_s;
        coll_group_free(g);
        topo_free(t);
    }
    g_rmdir(dir);
    g_free(dir);
    CU_ASSERT_DOUBLE_EQUAL(closed[1], closed[0], 1e-9);
    CU_ASSERT_TRUE(rel(flow[0], closed[0]) < 0.02);
    double factor = flow[1] / flow[0];
    fprintf(stderr, "oversubscription 4: flow model %.3fx slower\n", factor);
    CU_ASSERT_TRUE(factor > 3.8 && factor < 4.2);
}

/* With coll_group_set_fabric on, the closed form's bandwidth term follows
 * the flows' on fat trees of 16 nodes, 4 a leaf (1:1, 2:1 and 4:1), ring and
 * tree, all-reduce and all-gather; off it is the NICs' as before. */
static void test_fabric_in_closed_form(void)
{
    char *dir = g_dir_make_tmp("shardsim-XXXXXX", NULL);
    struct { CollOp op; CollAlgo a; } cases[] = {
        {COLL_ALLREDUCE, COLL_RING}, {COLL_ALLREDUCE, COLL_TREE}, {COLL_ALLGATHER, COLL_RING}};
    int over[] = {1, 2, 4};
    for (size_t i = 0; i < G_N_ELEMENTS(over); i++) {
        Topo *t = fat_tree(dir, 16, "200Gbps", 4, 4, over[i]);
        CU_ASSERT_PTR_NOT_NULL_FATAL(t);
        CollGroup *g = group(t);
        CU_ASSERT_PTR_NOT_NULL_FATAL(g);
        for (size_t k = 0; k < G_N_ELEMENTS(cases); k++) {
            CollCost off, on;
            double bytes = 4e9;
            coll_group_set_fabric(g, false);
            CU_ASSERT_TRUE_FATAL(coll_cost(g, cases[k].op, cases[k].a, COLL_SIMPLE, bytes, &off));
            coll_group_set_fabric(g, true);
            CU_ASSERT_TRUE_FATAL(coll_cost(g, cases[k].op, cases[k].a, COLL_SIMPLE, bytes, &on));
            double flow = coll_simulate(g, cases[k].op, cases[k].a, COLL_SIMPLE, bytes) - on.latency_s;
            double beta = on.time_s - on.latency_s;
            fprintf(stderr, "oversubscription %d, %s %s: fabric x%.3f, closed form / flows %.4f\n", over[i],
                    coll_algo_name(cases[k].a), coll_op_name(cases[k].op), on.fabric_factor, beta / flow);
            CU_ASSERT_EQUAL(off.fabric_factor, 0);
            CU_ASSERT_DOUBLE_EQUAL(on.latency_s, off.latency_s, 1e-15);
            CU_ASSERT_DOUBLE_EQUAL(beta / (off.time_s - off.latency_s), on.fabric_factor, 1e-9);
            /* at 1:1 the rings bind at the NICs; the trees' hops collide on
             * the statically routed uplinks (the flows' 1.25x) */
            CU_ASSERT_TRUE(over[i] > 1                ? on.fabric_factor > 1.5
                           : cases[k].a == COLL_RING ? on.fabric_factor == 1
                                                     : on.fabric_factor >= 1);
            CU_ASSERT_TRUE(rel(beta, flow) < 0.005);
        }
        coll_group_free(g);
        topo_free(t);
    }
    g_rmdir(dir);
    g_free(dir);
}

static void test_algorithms_and_auto(void)
{
    Topo *t = load("dgx-a100-cluster", 32);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CollGroup *g = group(t);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    CU_ASSERT_EQUAL(coll_group_size(g), 256);
    CU_ASSERT_EQUAL(coll_group_nodes(g), 32);
    for (double bytes = 8; bytes < 1e10; bytes *= 8) {
        CollCost best, c;
        CU_ASSERT_TRUE_FATAL(coll_cost(g, COLL_ALLREDUCE, COLL_ALGO_AUTO, COLL_PROTO_AUTO, bytes, &best));
        for (int a = 0; a < COLL_NUM_ALGOS; a++)
            for (int p = 0; p < COLL_NUM_PROTOS; p++)
                if ((a == COLL_RING || a == COLL_TREE) && coll_cost(g, COLL_ALLREDUCE, a, p, bytes, &c))
                    CU_ASSERT_TRUE(best.time_s <= c.time_s * (1 + 1e-12));
        CU_ASSERT_TRUE(best.time_s > 0);
    }
    /* every algorithm in the table says why it refuses an op, in its own words */
    const char *none = coll_why_not(g, COLL_ALLREDUCE, COLL_ALGO_AUTO, COLL_PROTO_AUTO);
    int refused = 0;
    for (int a = 0; a < COLL_NUM_ALGOS; a++)
        for (int op = 0; op < COLL_NUM_OPS; op++) {
            CollCost c;
            if (coll_cost(g, op, a, COLL_PROTO_AUTO, 1 << 20, &c))
                continue;
            const char *why = coll_why_not(g, op, a, COLL_PROTO_AUTO);
            CU_ASSERT_TRUE(why && *why && strcmp(why, none) != 0);
            refused++;
        }
    CU_ASSERT_TRUE(refused > 0);
    CollCost ring, tree;
    /* logarithmic tree latency beats the ring's linear one for tiny messages */
    CU_ASSERT_TRUE(coll_cost(g, COLL_ALLREDUCE, COLL_RING, COLL_LL, 8, &ring));
    CU_ASSERT_TRUE(coll_cost(g, COLL_ALLREDUCE, COLL_TREE, COLL_LL, 8, &tree));
    CU_ASSERT_TRUE(tree.latency_s < ring.latency_s);
    /* reduce-scatter plus all-gather move the bytes of one all-reduce */
    CollCost ar, rs, ag;
    CU_ASSERT_TRUE(coll_cost(g, COLL_ALLREDUCE, COLL_RING, COLL_SIMPLE, 1e9, &ar));
    CU_ASSERT_TRUE(coll_cost(g, COLL_REDUCESCATTER, COLL_RING, COLL_SIMPLE, 1e9, &rs));
    CU_ASSERT_TRUE(coll_cost(g, COLL_ALLGATHER, COLL_RING, COLL_SIMPLE, 1e9, &ag));
    CU_ASSERT_DOUBLE_EQUAL(1e9 / ar.algbw_Bps, 1e9 / rs.algbw_Bps + 1e9 / ag.algbw_Bps, 1e-12);
    /* no in-network reduction on this fabric */
    CU_ASSERT_FALSE(coll_cost(g, COLL_ALLREDUCE, COLL_COLLNET, COLL_SIMPLE, 1e6, &ar));
    coll_group_free(g);
    topo_free(t);
}

/* Every algorithm's flow decomposition runs to completion, and on an
 * uncontended topology lands near its closed form. */
static void test_every_decomposition_runs(void)
{
    Topo *t = load("abci-a100", 4);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CollGroup *g = group(t);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    for (int a = 0; a < COLL_NUM_ALGOS; a++)
        for (int op = 0; op < COLL_NUM_OPS; op++) {
            CollCost c;
            if (!coll_cost(g, op, a, COLL_SIMPLE, 256e6, &c))
                continue;
            double f = coll_simulate(g, op, a, COLL_SIMPLE, 256e6);
            fprintf(stderr, "%-8s %-14s closed %9.1f us  flows %9.1f us\n", coll_algo_name(a), coll_op_name(op),
                    c.time_s * 1e6, f * 1e6);
            CU_ASSERT_TRUE(f > 0.5 * c.time_s && f < 2.0 * c.time_s);
        }
    coll_group_free(g);
    topo_free(t);
}

typedef struct {
    double large, small;
} Summary;

/* `shardsim validate --json` of a trace on a topology (and NCCL version),
 * parsed; NULL (said on stderr) where it fails. */
static cJSON *validate_json(const char *topo, const char *trace, const char *version)
{
    char *argv[] = {SHARDSIM_BINARY, "validate", "--json", "--topology", (char *)topo, (char *)trace, NULL, NULL, NULL};
    if (version) {
        argv[6] = "--nccl-version";
        argv[7] = (char *)version;
    }
    char *out = NULL, *errs = NULL;
    int status = 0;
    cJSON *j = NULL;
    if (g_spawn_sync(NULL, argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, &errs, &status, NULL) &&
        g_spawn_check_wait_status(status, NULL))
        j = cJSON_Parse(out);
    if (!j)
        fprintf(stderr, "validate failed: %s\n", errs ? errs : "");
    g_free(out);
    g_free(errs);
    return j;
}

static bool validate(const char *topo, const char *trace, const char *version, Summary *s)
{
    cJSON *j = validate_json(topo, trace, version);
    if (!j)
        return false;
    s->large = cJSON_GetObjectItem(j, "median_abs_pct_error_large")->valuedouble;
    s->small = cJSON_GetObjectItem(j, "median_abs_pct_error_small")->valuedouble;
    fprintf(stderr, "%s: median error %.1f%% from 1 MiB, %.1f%% below\n", trace, s->large, s->small);
    cJSON_Delete(j);
    return true;
}

#define DATA SHARDSIM_SOURCE_DIR "/tests/data/traces/"

/* The error bounds on the real runs of tests/data/traces:
 * the targets (10% from 1 MiB, 25% below) where they are met; where they are
 * not yet (small messages across nodes), what is achieved today, so that a
 * regression still fails. */
static void test_validation_bounds(void)
{
    static const struct {
        const char *topo, *trace, *version;
        double large, small;
    } cases[] = {
        {"dgx1-v100", DATA "nccl-tests_allreduce_v100-sxm2-16gb_8gpu_hybrid-cube-mesh.txt", NULL, 5, 5},
        {"abci-a100", DATA "nccl-tests_allreduce_abci-a100-40gb_2node-16gpu_sharp.txt", NULL, 8, 20},
        /* RCCL's own tuner (the library read from the trace): issue 11's targets */
        {"mi300x-node", DATA "rccl-tests_allreduce_mi300x_8gpu_1node.txt", NULL, 8, 20},
        /* RCCL 2.27.7 on its own IB transport over the same Pollara NICs (never seen) */
        {"mi355x-cluster", DATA "rccl-tests_allreduce_mi355x_2node-16gpu_pollara400_rccl2.27.7_vultr.txt", NULL, 8, 20},
        /* RCCL 2.26.6 through AMD's ANP plugin: 1.3-2x slower than that run from 4 to 256 MiB,
         * where RCCL runs the tree's LL128; what is achieved today */
        {"mi355x-cluster", DATA "rccl-tests_allreduce_mi355x_2node-16gpu_pollara400.txt", NULL, 11, 20},
        /* issue 11: the fabrics people buy now, with their own presets */
        {"oci-bm-gpu4.8", DATA "nccl-tests_allreduce_a100-40gb-oci-bm-gpu4.8_1node8gpu_nccl2.25.1_ocitutorials-ol.txt",
         NULL, 8, 20},
        {"oci-bm-gpu4.8",
         DATA "nccl-tests_allreduce_a100-40gb-oci-bm-gpu4.8_2node16gpu_nccl2.26.5_ocitutorials-ubuntu.txt", NULL, 8, 20},
        {"dgx-a100", DATA "nccl-tests_allreduce_a100-40gb-oci-bm-gpu4.8_1node8gpu_nccl2.25.1_ocitutorials-ol.txt", NULL,
         8, 20},
        {"dgx-a100-cluster",
         DATA "nccl-tests_allreduce_a100-40gb-oci-bm-gpu4.8_2node16gpu_nccl2.26.5_ocitutorials-ubuntu.txt", NULL, 2,
         100},
        /* 2 x 8 A100 over 16 x 100G RoCE (oracle-quickstart/oci-hpc-oke, never seen, no version printed):
         * the LL tree's 25 us where it ran 36-55 us to 128 KiB, the LL ring at 2-8 MiB where it ran
         * faster (LL128 by NCCL's PXB rule?), the ring from 1 GiB where its tree beat the ring's bound;
         * what is achieved today */
        {"oci-bm-gpu4.8", DATA "nccl-tests_allreduce_a100-40gb-oci-bm-gpu4.8_2node16gpu_oke-rdma-readme.txt", NULL,
         19, 37},
        /* not yet at the 8% target: CXI's large-message cost on this run (see README) */
        {"gh200-slingshot", DATA "nccl-tests_allreduce_gh200_2node2gpu_slingshot_cscs-alps.txt", NULL, 16, 20},
        /* the same Slingshot with 4 GPUs a node (CSCS's NCCL page): the 2-node tree as NCCL rates it
         * (per-channel cap, CXI's latency unseen); LL messages past CXI's eager limit pay its
         * rendezvous (the 4 KiB step), which also takes the LL ring at 2 MiB 12% slow where NCCL ran
         * something faster (9.5% from 1 MiB, was 7.6% with that row at 1.2%); 25-47% fast at
         * 64-512 KiB (LL's ~4 GB/s over CXI, unexplained); what is achieved today */
        {"gh200-slingshot", DATA "nccl-tests_allreduce_gh200_2node8gpu_slingshot_cscs-alps-ce.txt", NULL, 10, 20},
        /* never seen: 2 x 4 GH200 of Santis in CSCS's CXI container (cray-network-stack); its tree
         * runs at the NICs' rate from 64 MiB, where the model keeps NCCL's medium-size correction */
        {"gh200-slingshot", DATA "nccl-tests_allreduce_gh200_2node8gpu_slingshot_cscs-santis-cxi-container.txt", NULL,
         12, 17},
        /* MI300X over 8 x 400G ConnectX-7 RoCE (AAC10): RCCL's 220 us floor on this machine (40 us on
         * AAC14's MI355X) reaches 64 MiB; what is achieved today */
        {"mi300x-cluster", DATA "rccl-tests_allreduce_mi300x_2node-16gpu_roce.txt", NULL, 24, 80},
        /* NCCL beats the ring bound there: NVLSTree (NCCL 2.18+; the trace prints no version) */
        {"dgx-h100-cluster", DATA "nccl-tests_allreduce_h100-sxm_2node16gpu_8hca_multinode-guide.txt", NULL, 3, 100},
        /* ... and without it (NCCL 2.17) the ring's bound misses by a fifth */
        {"dgx-h100-cluster", DATA "nccl-tests_allreduce_h100-sxm_2node16gpu_8hca_multinode-guide.txt", "2.17", 100, 100},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        Summary s;
        CU_ASSERT_TRUE_FATAL(validate(cases[i].topo, cases[i].trace, cases[i].version, &s));
        if (cases[i].version && strcmp(cases[i].version, "2.17") == 0)
            CU_ASSERT_TRUE(s.large > 15);
        CU_ASSERT_TRUE(s.large <= cases[i].large);
        CU_ASSERT_TRUE(s.small <= cases[i].small);
    }
}

/* All-reduce on 2 x 8 H100 as NCCL's own tuner picks it (its host code of
 * v2.26.2-1 and v2.30.3-1 compiled and run on that topology: the LL128 tree
 * at 256 KiB, then NVLSTree from 512 KiB under 2.26 and from 2 MiB under
 * 2.30), through the NVLS ratings by version and the tree's 0.85 where its
 * search falls back to the simple tree pattern. */
static void test_two_node_h100_picks(void)
{
    Topo *t = load("dgx-h100-cluster", 2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CollGroup *g = group(t);
    static const struct {
        int version;
        CollAlgo algo[4];
    } want[] = {{22602, {COLL_TREE, COLL_NVLS_TREE, COLL_NVLS_TREE, COLL_NVLS_TREE}},
                {23003, {COLL_TREE, COLL_TREE, COLL_TREE, COLL_NVLS_TREE}}};
    for (size_t v = 0; v < G_N_ELEMENTS(want); v++) {
        coll_group_set_nccl_version(g, want[v].version);
        for (int k = 0; k < 4; k++) {
            CollCost c;
            CU_ASSERT_TRUE_FATAL(coll_cost(g, COLL_ALLREDUCE, COLL_ALGO_AUTO, COLL_PROTO_AUTO, 262144 << k, &c));
            CU_ASSERT_EQUAL(c.algo, want[v].algo[k]);
            if (c.algo == COLL_TREE)
                CU_ASSERT_EQUAL(c.proto, COLL_LL128);
        }
    }
    coll_group_free(g);
    topo_free(t);
}

/* The signed error (+: the model slower) of a trace's row of `size` bytes on `topo`. */
static double row_error(const char *topo, const char *trace, double size)
{
    cJSON *j = validate_json(topo, trace, NULL), *r;
    double e = NAN;
    cJSON_ArrayForEach(r, cJSON_GetObjectItem(j, "rows"))
        if (cJSON_GetObjectItem(r, "size_bytes")->valuedouble == size)
            e = cJSON_GetObjectItem(r, "pct_error")->valuedouble;
    cJSON_Delete(j);
    return e;
}

/* The LL ring inside an 8x H100 node at 512 KiB, on the two published runs
 * (dgxc-benchmarking, AWS p5), which agree within 1 us there: +21% and +18%
 * at a quarter of the bus bandwidth, within 8% at LL's payload share. */
static void test_ll_ring_on_h100_runs(void)
{
    const char *runs[] = {DATA "nccl-tests_allreduce_h100-dgx_1node8gpu_nvswitch-nvls_dgxc-benchmarking.txt",
                          DATA "nccl-tests_allreduce_h100-aws-p5_1node8gpu_awsome-distributed-training-aws-batch.txt"};
    printf("\n8x H100 LL ring at 512 KiB:");
    for (int i = 0; i < 2; i++) {
        double e = row_error("dgx-h100", runs[i], 524288);
        printf(" %+.1f%%", e);
        CU_ASSERT_TRUE(fabs(e) < 8);
    }
    printf("\n");
}

/* NVLink SHARP on an H100 node: taken for large all-reduces, absent on A100. */
static void test_nvls(void)
{
    Topo *h = load("dgx-h100", 0), *a = load("dgx-a100", 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(h);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CollGroup *gh = group(h), *ga = group(a);
    CollCost c;
    CU_ASSERT_TRUE(coll_cost(gh, COLL_ALLREDUCE, COLL_ALGO_AUTO, COLL_PROTO_AUTO, 16.0 * (1 << 30), &c));
    CU_ASSERT_EQUAL(c.algo, COLL_NVLS);
    /* bus bandwidth = 0.61 x 450 GB/s x 2(n-1)/n, less the 23 us latency and
     * the pipeline fill (0.2% at 16 GiB) */
    double busbw = 16.0 * (1 << 30) / c.time_s * coll_busbw_factor(COLL_ALLREDUCE, 8);
    CU_ASSERT_TRUE(busbw > 470e9 && busbw < 481e9);
    /* at 1 GiB the fill is two rounds of 16 channels x 8 heads x 128 KiB
     * chunks at the NVLS rate, which the tuner does not see */
    CU_ASSERT_TRUE(coll_cost(gh, COLL_ALLREDUCE, COLL_ALGO_AUTO, COLL_PROTO_AUTO, 1 << 30, &c));
    double rate = 0.61 * 450e9, fill = 2 * 16 * 8 * 131072 / rate;
    CU_ASSERT_TRUE(rel(c.latency_s, 23e-6 + fill) < 0.02);
    CU_ASSERT_TRUE(rel(c.tuner_latency_s, 25e-6) < 0.02); /* NCCL's rating from 2.23 */
    coll_group_set_nccl_version(gh, 22203);
    CollCost old;
    CU_ASSERT_TRUE(coll_cost(gh, COLL_ALLREDUCE, COLL_NVLS, COLL_SIMPLE, 1 << 30, &old));
    CU_ASSERT_TRUE(rel(old.tuner_latency_s, 23e-6) < 0.02);
    CU_ASSERT_DOUBLE_EQUAL(old.time_s, c.time_s, 1e-12); /* the rating moved, not the time */
    coll_group_set_nccl_version(gh, 0);
    CU_ASSERT_TRUE(rel(coll_simulate(gh, COLL_ALLREDUCE, COLL_NVLS, COLL_SIMPLE, 1 << 30), c.time_s) < 0.02);
    CU_ASSERT_TRUE(coll_cost(gh, COLL_ALLREDUCE, COLL_ALGO_AUTO, COLL_PROTO_AUTO, 1024, &c));
    CU_ASSERT_NOT_EQUAL(c.algo, COLL_NVLS); /* its 23 us latency loses on small messages */
    CU_ASSERT_FALSE(coll_cost(ga, COLL_ALLREDUCE, COLL_NVLS, COLL_SIMPLE, 1 << 30, &c));
    CU_ASSERT_FALSE(coll_cost(gh, COLL_ALLGATHER, COLL_NVLS, COLL_SIMPLE, 1 << 30, &c));
    coll_group_free(gh);
    coll_group_free(ga);
    topo_free(h);
    topo_free(a);
}

/* Version strings as traces and users write them. */
static void test_nccl_version_parse(void)
{
    CU_ASSERT_EQUAL(coll_nccl_version_parse("2.18.3+cuda12.2"), 21803);
    CU_ASSERT_EQUAL(coll_nccl_version_parse("2.8"), 20800);
    CU_ASSERT_EQUAL(coll_nccl_version_parse("2.22.3-HEAD:7d8d67c"), 22203);
    CU_ASSERT_EQUAL(coll_nccl_version_parse("22605"), 22605);
    CU_ASSERT_EQUAL(coll_nccl_version_parse("2803"), 20803); /* before 2.9: major x 1000 */
    CU_ASSERT_EQUAL(coll_nccl_version_parse("2.8 with nccl-rdma-sharp-plugins"), 20800);
    CU_ASSERT_EQUAL(coll_nccl_version_parse("RCCL 2.26"), -1);
    CU_ASSERT_EQUAL(coll_nccl_version_parse("2.x"), -1);
    CU_ASSERT_EQUAL(coll_nccl_version_parse("2.100"), -1);
    CU_ASSERT_EQUAL(coll_nccl_version_parse(""), -1);
    CU_ASSERT_EQUAL(coll_nccl_version_parse(NULL), -1);
}

/* What `version` picks for `op` on g at sizes 8 B .. 8 GiB: a bit per algorithm. */
static unsigned picks(CollGroup *g, int version, CollOp op)
{
    unsigned seen = 0;
    coll_group_set_nccl_version(g, version);
    for (double bytes = 8; bytes <= 8.0 * (1 << 30); bytes *= 2) {
        CollCost c;
        CU_ASSERT_TRUE_FATAL(coll_cost(g, op, COLL_ALGO_AUTO, COLL_PROTO_AUTO, bytes, &c));
        seen |= 1u << c.algo;
    }
    coll_group_set_nccl_version(g, 0);
    return seen;
}

/* The tuner chooses among what the NCCL version has: NVLS from 2.17,
 * NVLSTree from 2.18 (it beats the NICs' line rate at 2 nodes: each node
 * sends the message once, where a ring sends it 2(n-1)/n times), PAT from
 * 2.23 at one rank per node. */
static void test_nccl_versions(void)
{
    Topo *h1 = load("dgx-h100", 0), *h2 = load("dgx-h100-cluster", 2), *h8 = load("dgx-h100-cluster", 8);
    CU_ASSERT_PTR_NOT_NULL_FATAL(h1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(h2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(h8);
    CollGroup *g1 = group(h1), *g2 = group(h2);
    CU_ASSERT_TRUE(picks(g1, 0, COLL_ALLREDUCE) & (1u << COLL_NVLS));
    CU_ASSERT_TRUE(picks(g1, 21700, COLL_ALLREDUCE) & (1u << COLL_NVLS));
    CU_ASSERT_FALSE(picks(g1, 21605, COLL_ALLREDUCE) & (1u << COLL_NVLS));
    CU_ASSERT_TRUE(picks(g2, 0, COLL_ALLREDUCE) & (1u << COLL_NVLS_TREE));
    CU_ASSERT_TRUE(picks(g2, 21803, COLL_ALLREDUCE) & (1u << COLL_NVLS_TREE));
    unsigned old = picks(g2, 21703, COLL_ALLREDUCE);
    CU_ASSERT_FALSE(old & ((1u << COLL_NVLS_TREE) | (1u << COLL_NVLS))); /* and no NVLS across nodes without SHARP */
    CollCost c, ring;
    coll_group_set_nccl_version(g2, 21703);
    CU_ASSERT_FALSE(coll_cost(g2, COLL_ALLREDUCE, COLL_NVLS_TREE, COLL_SIMPLE, 1 << 30, &c));
    CU_ASSERT_PTR_NOT_NULL(strstr(coll_why_not(g2, COLL_ALLREDUCE, COLL_NVLS_TREE, COLL_SIMPLE), "2.18"));
    coll_group_set_nccl_version(g2, 0);
    double bytes = 8.0 * (1 << 30);
    CU_ASSERT_TRUE_FATAL(coll_cost(g2, COLL_ALLREDUCE, COLL_NVLS_TREE, COLL_SIMPLE, bytes, &c));
    CU_ASSERT_TRUE_FATAL(coll_cost(g2, COLL_ALLREDUCE, COLL_RING, COLL_SIMPLE, bytes, &ring));
    double busbw = bytes / c.time_s * coll_busbw_factor(COLL_ALLREDUCE, 16), nic = coll_group_inter_bw(g2) / 8;
    fprintf(stderr, "nvlstree 2x8 H100 8 GiB: busbw %.1f GB/s (ring %.1f), NIC %.1f GB/s\n", busbw / 1e9,
            bytes / ring.time_s * coll_busbw_factor(COLL_ALLREDUCE, 16) / 1e9, nic / 1e9);
    CU_ASSERT_TRUE(busbw > 1.1 * nic * 8 && c.time_s < ring.time_s); /* above the 8 NICs' rate */
    CU_ASSERT_TRUE(rel(coll_simulate(g2, COLL_ALLREDUCE, COLL_NVLS_TREE, COLL_SIMPLE, bytes), c.time_s) < 0.02);
    /* one rank per node: PAT for reduce-scatter and all-gather from 2.23 */
    int ids[8];
    for (int i = 0; i < 8; i++)
        ids[i] = i * topo_ranks_per_node(h8);
    CollGroup *g8 = coll_group_new(h8, ids, 8, NULL, NULL), *full = group(h8);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g8);
    for (int op = COLL_REDUCESCATTER; op <= COLL_ALLGATHER; op++) {
        CU_ASSERT_TRUE(picks(g8, 0, op) & (1u << COLL_PAT));
        CU_ASSERT_TRUE(picks(g8, 22300, op) & (1u << COLL_PAT));
        CU_ASSERT_FALSE(picks(g8, 22205, op) & (1u << COLL_PAT));
        CU_ASSERT_FALSE(picks(full, 0, op) & (1u << COLL_PAT)); /* 8 ranks per node */
        CU_ASSERT_TRUE_FATAL(coll_cost(g8, op, COLL_PAT, COLL_SIMPLE, 64e6, &c));
        CU_ASSERT_TRUE(rel(coll_simulate(g8, op, COLL_PAT, COLL_SIMPLE, 64e6), c.time_s) < 0.05);
    }
    CU_ASSERT_FALSE(coll_cost(g8, COLL_ALLREDUCE, COLL_PAT, COLL_SIMPLE, 1e6, &c));
    coll_group_free(g1);
    coll_group_free(g2);
    coll_group_free(g8);
    coll_group_free(full);
    topo_free(h1);
    topo_free(h2);
    topo_free(h8);
}

/* NVLS across nodes where the network reduces too (NVLS + SHARP): every node
 * sends the message to the network once, so the rate is the switch's or the
 * NICs', whichever is lower; flows agree. */
static void test_nvls_with_sharp(void)
{
    char *text = NULL, *dir = g_dir_make_tmp("shardsim-XXXXXX", NULL);
    char *path = g_build_filename(dir, "h100-sharp.json", NULL);
    CU_ASSERT_TRUE_FATAL(g_file_get_contents(SHARDSIM_SOURCE_DIR "/topologies/presets/dgx-h100-cluster.json", &text,
                                             NULL, NULL));
    char *with = g_strdup_printf("{\"in_network_reduction\": true,%s", strchr(text, '{') + 1);
    CU_ASSERT_TRUE_FATAL(g_file_set_contents(path, with, -1, NULL));
    Topo *t = load(path, 4);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CollGroup *g = group(t);
    CollCost c;
    CU_ASSERT_TRUE_FATAL(coll_cost(g, COLL_ALLREDUCE, COLL_NVLS, COLL_SIMPLE, 1 << 30, &c));
    double nvls = 0.61 * 450e9; /* the NVLS rate: below the 8 NICs' 384 GB/s */
    CU_ASSERT_DOUBLE_EQUAL(c.algbw_Bps, fmin(nvls, coll_group_inter_bw(g)), 1e-6 * nvls);
    CU_ASSERT_TRUE(rel(coll_simulate(g, COLL_ALLREDUCE, COLL_NVLS, COLL_SIMPLE, 1 << 30), c.time_s) < 0.02);
    coll_group_set_nccl_version(g, 21605);
    CU_ASSERT_FALSE(coll_cost(g, COLL_ALLREDUCE, COLL_NVLS, COLL_SIMPLE, 1 << 30, &c));
    coll_group_free(g);
    topo_free(t);
    g_unlink(path);
    g_rmdir(dir);
    g_free(path);
    g_free(dir);
    g_free(with);
    g_free(text);
}

/* A scenario's "nccl_version" reaches its groups; a bad one is bad input. */
static void test_scenario_nccl_version(void)
{
    char *text = NULL;
    CU_ASSERT_TRUE_FATAL(g_file_get_contents(SHARDSIM_SOURCE_DIR "/examples/llama2-70b-fsdp-h100.json", &text, NULL, NULL));
    const char *versions[] = {"\"2.18\"", "\"2.x\"", "2.18"};
    for (int i = 0; i < 3; i++) {
        char *with = g_strdup_printf("{\"nccl_version\": %s,%s", versions[i], strchr(text, '{') + 1);
        GError *err = NULL;
        StepScenario *sc = step_scenario_parse("s.json", with, strlen(with), &err);
        if (i == 0) {
            CU_ASSERT_PTR_NOT_NULL_FATAL(sc);
            CU_ASSERT_EQUAL(step_scenario_nccl_version(sc), 21800);
        } else {
            CU_ASSERT_PTR_NULL(sc);
            CU_ASSERT_TRUE(err && err->code == SIM_ERROR_INPUT && strstr(err->message, "nccl_version"));
        }
        step_scenario_free(sc);
        g_clear_error(&err);
        g_free(with);
    }
    g_free(text);
}

/* One thread launching on 8 GPUs: the host time, 8 launches, is the floor of
 * a call and overlaps the GPUs (the time is the longer of the two) unless
 * each launch waits for them (NCCL before 2.12), when they add up. */
static void test_process_layout(void)
{
    Topo *t = load("dgx-a100", 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CollGroup *g = group(t);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    CollCost one, small, large, big;
    CU_ASSERT_TRUE(coll_cost(g, COLL_ALLREDUCE, COLL_ALGO_AUTO, COLL_PROTO_AUTO, 8, &one));
    CU_ASSERT_TRUE(coll_cost(g, COLL_ALLREDUCE, COLL_ALGO_AUTO, COLL_PROTO_AUTO, 1 << 30, &big));
    double host1 = coll_group_host_time(g);
    CU_ASSERT_TRUE(host1 > 1e-6 && host1 < one.time_s); /* one launch hides behind the GPUs */
    coll_group_set_gpus_per_thread(g, 8);
    double host8 = coll_group_host_time(g);
    CU_ASSERT_DOUBLE_EQUAL(host8, 8 * host1, 1e-12);
    CU_ASSERT_TRUE(host8 > one.time_s);
    CU_ASSERT_TRUE(coll_cost(g, COLL_ALLREDUCE, COLL_ALGO_AUTO, COLL_PROTO_AUTO, 8, &small));
    CU_ASSERT_DOUBLE_EQUAL(small.time_s, host8, 1e-12);
    CU_ASSERT_TRUE(coll_cost(g, COLL_ALLREDUCE, COLL_ALGO_AUTO, COLL_PROTO_AUTO, 1 << 30, &large));
    CU_ASSERT_DOUBLE_EQUAL(large.time_s, big.time_s, 1e-12); /* overlapped */
    CU_ASSERT_TRUE(rel(coll_simulate(g, COLL_ALLREDUCE, COLL_RING, COLL_LL, 8), host8) < 1e-9);
    coll_group_set_launch_waits(g, true);
    CU_ASSERT_TRUE(coll_cost(g, COLL_ALLREDUCE, COLL_ALGO_AUTO, COLL_PROTO_AUTO, 8, &small));
    CU_ASSERT_DOUBLE_EQUAL(small.time_s, one.time_s + host8, 1e-12);
    CU_ASSERT_TRUE(coll_cost(g, COLL_ALLREDUCE, COLL_ALGO_AUTO, COLL_PROTO_AUTO, 1 << 30, &large));
    CU_ASSERT_DOUBLE_EQUAL(large.time_s, big.time_s + host8, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(large.algbw_Bps, (1 << 30) / (large.time_s - large.latency_s), 1);
    coll_group_free(g);
    topo_free(t);
}

static Topo *topo_text(const char *dir, const char *text)
{
    char *path = g_build_filename(dir, "t.json", NULL);
    CU_ASSERT_TRUE(g_file_set_contents(path, text, -1, NULL));
    GError *err = NULL;
    Topo *t = topo_load(path, NULL, &err);
    if (!t)
        fprintf(stderr, "\n%s\n", err ? err->message : "?");
    g_clear_error(&err);
    g_unlink(path);
    g_free(path);
    return t;
}

/* Two nodes of one GPU on a switch, the NIC with the given fields. */
static Topo *two_nodes(const char *dir, const char *nic_fields)
{
    char *text = g_strdup_printf("{\"family\": \"fat_tree\", \"nodes\": 2, \"ranks_per_node\": 1, \"intra\": \"none\","
                                 " \"pcie\": {\"bandwidth\": \"64GB/s\", \"latency\": \"300ns\"},"
                                 " \"nic\": {\"bandwidth\": \"200Gbps\", \"latency\": \"500ns\"%s}}",
                                 nic_fields);
    Topo *t = topo_text(dir, text);
    g_free(text);
    return t;
}

/* Per-hop latency from the path (issue 10): two nodes under different
 * leaves, their ring through a spine; 10 us more on every leaf-spine link
 * adds 2 x 10 us (up and down) to each of the ring's steps in the flow
 * model, and nothing within a leaf. */
static void test_fabric_hop_latency(void)
{
    char *dir = g_dir_make_tmp("hops-XXXXXX", NULL);
    double t[2];
    for (int i = 0; i < 2; i++) {
        char *text = g_strdup_printf(
            "{\"family\": \"fat_tree\", \"nodes\": 2, \"ranks_per_node\": 1, \"intra\": \"none\","
            " \"nodes_per_leaf\": 1, \"spines\": 1, \"fabric\": \"infiniband\","
            " \"pcie\": {\"bandwidth\": \"64GB/s\", \"latency\": \"300ns\"},"
            " \"nic\": {\"bandwidth\": \"200Gbps\", \"latency\": \"500ns\"},"
            " \"uplink\": {\"latency\": \"%s\"}}",
            i ? "10.5us" : "500ns");
        Topo *topo = topo_text(dir, text);
        g_free(text);
        CU_ASSERT_PTR_NOT_NULL_FATAL(topo);
        CollGroup *g = group(topo);
        t[i] = coll_simulate(g, COLL_ALLREDUCE, COLL_RING, COLL_SIMPLE, 8192);
        coll_group_free(g);
        topo_free(topo);
    }
    /* a 2-rank ring all-reduce: 2 steps (reduce-scatter, all-gather), each
     * through the spine: 2 x 2 x 10 us */
    CU_ASSERT_DOUBLE_EQUAL(t[1] - t[0], 40e-6, 2e-6);
    g_rmdir(dir);
    g_free(dir);
}

/* A NIC's transport brings its bandwidth fraction and its latencies; a
 * link's own efficiency wins over its kind's; more NICs than GPUs add up. */
static void test_transports_and_efficiency(void)
{
    char *dir = g_dir_make_tmp("shardsim-XXXXXX", NULL);
    /* a fabric names its NICs' transport unless they say (Slingshot: CXI) */
    Topo *sling = topo_text(dir, "{\"family\": \"fat_tree\", \"nodes\": 2, \"ranks_per_node\": 1, \"intra\": \"none\","
                                 " \"fabric\": \"slingshot\", \"pcie\": {\"bandwidth\": \"64GB/s\", \"latency\": \"300ns\"},"
                                 " \"nic\": {\"bandwidth\": \"200Gbps\", \"latency\": \"500ns\"}}");
    CU_ASSERT_PTR_NOT_NULL_FATAL(sling);
    int links[8];
    int len = topo_route(sling, 0, 1, 0, links, 8);
    bool cxi_nic = false;
    for (int k = 0; k < len; k++)
        cxi_nic |= topo_link_kind(sling, links[k]) == TOPO_LINK_NET &&
                   topo_link_transport(sling, links[k]) == TOPO_TRANSPORT_CXI;
    CU_ASSERT_TRUE(cxi_nic);
    topo_free(sling);
    Topo *plain = two_nodes(dir, ""), *ib = two_nodes(dir, ", \"transport\": \"ib\""),
         *tcp = two_nodes(dir, ", \"transport\": \"tcp\""), *cxi = two_nodes(dir, ", \"transport\": \"cxi\""),
         *own = two_nodes(dir, ", \"transport\": \"tcp\", \"efficiency\": 0.5");
    CU_ASSERT_PTR_NOT_NULL_FATAL(plain);
    CU_ASSERT_PTR_NOT_NULL_FATAL(ib);
    CU_ASSERT_PTR_NOT_NULL_FATAL(tcp);
    CU_ASSERT_PTR_NOT_NULL_FATAL(cxi);
    CU_ASSERT_PTR_NOT_NULL_FATAL(own);
    CollGroup *gp = group(plain), *gi = group(ib), *gt = group(tcp), *gc = group(cxi), *go = group(own);
    CU_ASSERT_DOUBLE_EQUAL(coll_group_inter_bw(gp), 25e9 * 0.96, 1);
    CU_ASSERT_DOUBLE_EQUAL(coll_group_inter_bw(gi), coll_group_inter_bw(gp), 1);
    CU_ASSERT_DOUBLE_EQUAL(coll_group_inter_bw(gt), 25e9 * 0.6, 1);
    CU_ASSERT_DOUBLE_EQUAL(coll_group_inter_bw(go), 25e9 * 0.5, 1);
    CollCost p, i, t, c, cl;
    CU_ASSERT_TRUE(coll_cost(gp, COLL_ALLREDUCE, COLL_RING, COLL_LL, 8, &p));
    CU_ASSERT_TRUE(coll_cost(gi, COLL_ALLREDUCE, COLL_RING, COLL_LL, 8, &i));
    CU_ASSERT_TRUE(coll_cost(gt, COLL_ALLREDUCE, COLL_RING, COLL_LL, 8, &t));
    CU_ASSERT_DOUBLE_EQUAL(i.time_s, p.time_s, 1e-12);
    CU_ASSERT_TRUE(t.time_s > p.time_s + 20e-6); /* kernel TCP on every step */
    /* CXI's per-message cost falls on Simple (rendezvous) steps, not on LL */
    CU_ASSERT_TRUE(coll_cost(gc, COLL_ALLREDUCE, COLL_RING, COLL_SIMPLE, 1 << 20, &c));
    CU_ASSERT_TRUE(coll_cost(gp, COLL_ALLREDUCE, COLL_RING, COLL_SIMPLE, 1 << 20, &p));
    CU_ASSERT_TRUE(coll_cost(gc, COLL_ALLREDUCE, COLL_RING, COLL_LL, 8, &cl));
    CU_ASSERT_TRUE(c.latency_s - p.latency_s > 2 * (cl.latency_s - i.latency_s));
    coll_group_free(gp);
    coll_group_free(gi);
    coll_group_free(gt);
    coll_group_free(gc);
    coll_group_free(go);
    topo_free(plain);
    topo_free(ib);
    topo_free(tcp);
    topo_free(cxi);
    topo_free(own);
    /* a transport on a link that is not a network link, an unknown one */
    GError *err = NULL;
    char *path = g_build_filename(dir, "t.json", NULL);
    g_file_set_contents(path,
                        "{\"family\": \"ring\", \"ranks_per_node\": 4,\n"
                        " \"link\": {\"bandwidth\": 1e9, \"latency\": 1e-6, \"transport\": \"ib\"}}",
                        -1, NULL);
    CU_ASSERT_PTR_NULL(topo_load(path, NULL, &err));
    CU_ASSERT_TRUE(err && strstr(err->message, "t.json:2") && strstr(err->message, "network link"));
    g_clear_error(&err);
    CU_ASSERT_PTR_NULL(two_nodes(dir, ", \"transport\": \"carrier-pigeon\""));
    g_unlink(path);
    g_free(path);
    g_rmdir(dir);
    g_free(dir);
    /* A100 NVLink at its own efficiency; 16 NICs for 8 GPUs: a 200G rail each */
    Topo *a = load("dgx-a100", 0), *oci = load("oci-bm-gpu4.8", 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_PTR_NOT_NULL_FATAL(oci);
    CollGroup *ga = group(a), *goci = group(oci);
    CU_ASSERT_DOUBLE_EQUAL(coll_group_intra_bw(ga), 300e9 * 0.77, 1e6);
    CU_ASSERT_DOUBLE_EQUAL(coll_group_inter_bw(goci), 16 * 12.5e9 * 0.96, 1e6);
    coll_group_free(ga);
    coll_group_free(goci);
    topo_free(a);
    topo_free(oci);
    /* GPUDirect-TCPX (A3 High) and TCPXO (A3 Mega) are two transports; an
     * NVLink bridge pair runs at the bridge kind's efficiency, not NVSwitch's */
    dir = g_dir_make_tmp("shardsim-XXXXXX", NULL);
    Topo *tx = two_nodes(dir, ", \"transport\": \"tcpx\""), *txo = two_nodes(dir, ", \"transport\": \"tcpxo\"");
    Topo *bridge = load("h100-pcie-nvlink", 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(tx);
    CU_ASSERT_PTR_NOT_NULL_FATAL(txo);
    CU_ASSERT_PTR_NOT_NULL_FATAL(bridge);
    CollGroup *gx = group(tx), *gxo = group(txo), *gb = group(bridge);
    CU_ASSERT_DOUBLE_EQUAL(coll_group_inter_bw(gx), 25e9 * 0.5, 1);
    CU_ASSERT_DOUBLE_EQUAL(coll_group_inter_bw(gxo), 25e9 * 0.94, 1);
    CU_ASSERT_EQUAL(topo_link_kind(bridge, 0), TOPO_LINK_NVLINK_BRIDGE);
    CU_ASSERT_DOUBLE_EQUAL(coll_group_intra_bw(gb), 300e9 * 0.69, 1e6);
    coll_group_free(gx);
    coll_group_free(gxo);
    coll_group_free(gb);
    topo_free(tx);
    topo_free(txo);
    topo_free(bridge);
    g_rmdir(dir);
    g_free(dir);
}

static void test_bad_parameters(void)
{
    Topo *t = load("ring8", 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    char *dir = g_dir_make_tmp("shardsim-XXXXXX", NULL);
    char *path = g_build_filename(dir, "p.json", NULL);
    CU_ASSERT_TRUE(g_file_set_contents(path, "{\n \"base_latency\": {\n  \"ring\": 3\n }\n}\n", -1, NULL));
    GError *err = NULL;
    CU_ASSERT_PTR_NULL(coll_group_new(t, NULL, 0, path, &err));
    CU_ASSERT_PTR_NOT_NULL_FATAL(err);
    CU_ASSERT_EQUAL(err->code, SIM_ERROR_INPUT);
    CU_ASSERT_PTR_NOT_NULL(strstr(err->message, "p.json:"));
    g_clear_error(&err);
    int bad[2] = {0, 99};
    CU_ASSERT_PTR_NULL(coll_group_new(t, bad, 2, NULL, &err));
    CU_ASSERT_PTR_NOT_NULL(err);
    g_clear_error(&err);
    g_unlink(path);
    g_rmdir(dir);
    g_free(path);
    g_free(dir);
    topo_free(t);
}

static void test_names(void)
{
    CU_ASSERT_EQUAL(coll_op_parse("all_reduce"), COLL_ALLREDUCE);
    CU_ASSERT_EQUAL(coll_op_parse("reducescatter"), COLL_REDUCESCATTER);
    CU_ASSERT_EQUAL(coll_op_parse("all-gather"), COLL_ALLGATHER);
    CU_ASSERT_EQUAL(coll_op_parse("AllToAll"), COLL_ALLTOALL);
    CU_ASSERT_EQUAL(coll_op_parse("nope"), -2);
    CU_ASSERT_EQUAL(coll_op_parse("allreduce-allreduce-allreduce-allreduce"), -2);
    CU_ASSERT_EQUAL(coll_algo_parse("auto"), COLL_ALGO_AUTO);
    CU_ASSERT_EQUAL(coll_algo_parse("sharp"), COLL_COLLNET);
    CU_ASSERT_EQUAL(coll_algo_parse("hierarchical"), COLL_HIER);
    /* the table's names round-trip, and the help's choices list them in order */
    GString *all = g_string_new(NULL);
    for (int a = 0; a < COLL_NUM_ALGOS; a++) {
        CU_ASSERT_EQUAL(coll_algo_parse(coll_algo_name(a)), a);
        g_string_append_printf(all, "%s%s", a ? "|" : "", coll_algo_name(a));
    }
    CU_ASSERT_STRING_EQUAL(coll_algo_choices(), all->str);
    g_string_free(all, TRUE);
    CU_ASSERT_STRING_EQUAL(coll_algo_name(COLL_NUM_ALGOS), "?");
    CU_ASSERT_EQUAL(coll_proto_parse("LL128"), COLL_LL128);
    CU_ASSERT_DOUBLE_EQUAL(coll_busbw_factor(COLL_ALLREDUCE, 8), 1.75, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(coll_busbw_factor(COLL_ALLGATHER, 8), 0.875, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(coll_busbw_factor(COLL_BROADCAST, 8), 1, 1e-12);
}

/* A send between two GPUs (pipeline and context-parallel rings) takes
 * NCCL's send/receive protocol, LL only up to 16 KiB, not the collectives'
 * tuner, which picks LL for a pair's broadcast far beyond (a 512 KiB send
 * was once priced faster than one of 256 KiB); so more bytes never take
 * less time. */
static void test_p2p_protocol(void)
{
    Topo *h = load("dgx-h100", 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(h);
    int ids[2] = {0, 1};
    CollGroup *g = coll_group_new(h, ids, 2, NULL, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    CollCost c, prev = {0};
    for (double b = 4096; b <= 64.0 * (1 << 20); b *= 2) {
        CU_ASSERT_TRUE_FATAL(coll_p2p_cost(g, b, &c));
        CU_ASSERT_EQUAL(c.proto, b <= 16384 ? COLL_LL : COLL_SIMPLE);
        CU_ASSERT_TRUE(c.time_s >= prev.time_s);
        prev = c;
    }
    coll_group_free(g);
    topo_free(h);
}

/* NVLS with n GPUs of a node: it runs at (1 + 1/8) / (1 + 1/n) of the
 * 8-GPU rate (0.9 at 4).  NCCL's tuner rates it and the ring by its graph
 * search (coll_nccl.c): the ratings NCCL 2.29.2 printed for 2, 4 and 6 H100s
 * (tests/data/traces, the nccl-collectives-bench-scaling logs' tuning
 * tables: AllReduce Ring LL/LL128/Simple and NVLS, AllGather Ring Simple, in
 * GB/s to NCCL's one decimal; Broadcast's ring at one step), so it picks Ring for a large all-reduce on 2
 * and 4 GPUs and NVLS on 6 and 8, as those logs and the 8-GPU runs show. */
static void test_nvls_below_eight(void)
{
    static const struct { int n; double ll, ll128, simple, nvls, ag; CollAlgo pick; } nccl[] = {
        {2, 141.0, 331.2, 360.0, 102.0, 720.0, COLL_RING},
        {4, 94.0, 220.8, 240.0, 160.0, 480.0, COLL_RING},
        {6, 84.6, 198.7, 216.0, 216.0, 432.0, COLL_NVLS},
        /* 8: not printed there; NCCL 2.30.4 printed these for 8 H200s (the same NVLink), C-TC/multi-gpu-
         * programming-models repro/thesis_microbench/README.md, "NCCL autotuner internals" */
        {8, 80.6, 189.3, 205.7, 272.0, 411.4, COLL_NVLS},
    };
    Topo *h = load("dgx-h100", 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(h);
    int ids[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    double bytes = 1 << 30, rate8 = 0;
    for (int k = 3; k >= 0; k--) {
        CollGroup *g = coll_group_new(h, ids, nccl[k].n, NULL, NULL);
        CU_ASSERT_PTR_NOT_NULL_FATAL(g);
        coll_group_set_nccl_version(g, coll_nccl_version_parse("2.29.2"));
        const double want[4] = {nccl[k].ll, nccl[k].ll128, nccl[k].simple, nccl[k].nvls};
        CollCost c;
        for (int i = 0; i < 4; i++) {
            CU_ASSERT_TRUE_FATAL(coll_cost(g, COLL_ALLREDUCE, i < 3 ? COLL_RING : COLL_NVLS, i < 3 ? (CollProto)i : COLL_SIMPLE,
                                           bytes, &c));
            CU_ASSERT_DOUBLE_EQUAL(c.tuner_algbw_Bps / 1e9, want[i], 0.05);
        }
        if (k == 3)
            rate8 = c.algbw_Bps;
        else if (nccl[k].n == 4)
            CU_ASSERT_DOUBLE_EQUAL(c.algbw_Bps / rate8, 0.9, 1e-9);
        CU_ASSERT_TRUE_FATAL(coll_cost(g, COLL_ALLGATHER, COLL_RING, COLL_SIMPLE, bytes, &c));
        CU_ASSERT_DOUBLE_EQUAL(c.tuner_algbw_Bps / 1e9, nccl[k].ag, 0.05);
        const double bcast[3][2] = {{7.2, 141.0}, {15.9, 331.2}, {11.8, 360.0}}; /* one step: sameChannels */
        for (int p = 0; p < 3; p++) {
            CU_ASSERT_TRUE_FATAL(coll_cost(g, COLL_BROADCAST, COLL_RING, (CollProto)p, bytes, &c));
            CU_ASSERT_DOUBLE_EQUAL(c.tuner_latency_s * 1e6, bcast[p][0], 0.05);
            CU_ASSERT_DOUBLE_EQUAL(c.tuner_algbw_Bps / 1e9, bcast[p][1], 0.05);
        }
        CU_ASSERT_TRUE_FATAL(coll_cost(g, COLL_ALLREDUCE, COLL_ALGO_AUTO, COLL_PROTO_AUTO, bytes, &c));
        CU_ASSERT_EQUAL(c.algo, nccl[k].pick);
        coll_group_free(g);
    }
    topo_free(h);
}

/* The same search on Blackwell and across a rack: NCCL 2.25.1 on a GB200
 * NVL72 rack rates NVLS at 533.3 GB/s (32 heads at 20 GB/s, x 5/6) and the
 * ring at 365.1; 8 B200s under 2.29.2 rate both at 411.4, where NVLS's lower
 * latency keeps it (NVLS's rating from 2.28: x nvlsEfficiency 0.74 x 2 x
 * (c - 1) / c, capped by the inter speed, 90).  A Hopper node of 8 NVLinks
 * a GPU (164.8 GB/s as NCCL counts them): the ring search goes past 2 x 60
 * to 4 x 40 = 160 GB/s. */
static void test_nvls_rating_blackwell(void)
{
    char *dir = g_dir_make_tmp("shardsim-XXXXXX", NULL), *path = g_build_filename(dir, "h8.json", NULL);
    CU_ASSERT_TRUE_FATAL(g_file_set_contents(
        path, "{\"name\": \"h8\", \"accelerator\": \"h100-sxm\", \"nvlink_sharp\": true, \"family\": \"nvswitch_node\","
              " \"ranks_per_node\": 8, \"nvlink\": {\"bandwidth\": \"25GB/s\", \"count\": 8, \"latency\": \"250ns\"}}",
        -1, NULL));
    Topo *h8 = load(path, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(h8);
    int eight[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    CollGroup *g8 = coll_group_new(h8, eight, 8, NULL, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g8);
    CollCost rc8;
    CU_ASSERT_TRUE_FATAL(coll_cost(g8, COLL_ALLREDUCE, COLL_RING, COLL_SIMPLE, 1 << 30, &rc8));
    CU_ASSERT_DOUBLE_EQUAL(rc8.tuner_algbw_Bps / 1e9, 160.0 * 8 / 14, 0.05);
    coll_group_free(g8);
    topo_free(h8);
    g_unlink(path);
    g_rmdir(dir);
    g_free(path);
    g_free(dir);

    Topo *r = load("gb200-nvl72", 0), *b = load("dgx-b200", 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    int ids[72];
    for (int i = 0; i < 72; i++)
        ids[i] = i;
    CollGroup *g = coll_group_new(r, ids, 72, NULL, NULL), *e = coll_group_new(b, ids, 8, NULL, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    CU_ASSERT_PTR_NOT_NULL_FATAL(e);
    coll_group_set_nccl_version(g, coll_nccl_version_parse("2.25.1"));
    coll_group_set_nccl_version(e, coll_nccl_version_parse("2.29.2"));
    CollCost c;
    double bytes = 1 << 30;
    CU_ASSERT_TRUE_FATAL(coll_cost(g, COLL_ALLREDUCE, COLL_NVLS, COLL_SIMPLE, bytes, &c));
    CU_ASSERT_DOUBLE_EQUAL(c.tuner_algbw_Bps / 1e9, 533.3, 0.05);
    CU_ASSERT_TRUE_FATAL(coll_cost(g, COLL_ALLREDUCE, COLL_RING, COLL_SIMPLE, bytes, &c));
    CU_ASSERT_DOUBLE_EQUAL(c.tuner_algbw_Bps / 1e9, 365.1, 0.05);
    for (int a = 0; a < 2; a++) {
        CU_ASSERT_TRUE_FATAL(coll_cost(e, COLL_ALLREDUCE, a ? COLL_NVLS : COLL_RING, COLL_SIMPLE, bytes, &c));
        CU_ASSERT_DOUBLE_EQUAL(c.tuner_algbw_Bps / 1e9, 411.4, 0.05);
    }
    CU_ASSERT_TRUE_FATAL(coll_cost(e, COLL_ALLREDUCE, COLL_ALGO_AUTO, COLL_PROTO_AUTO, bytes, &c));
    CU_ASSERT_EQUAL(c.algo, COLL_NVLS);
    coll_group_free(g);
    coll_group_free(e);
    topo_free(r);
    topo_free(b);
}

/* NCCL before 2.21 rated an LL ring at 1/4 of the bus bandwidth for
 * all-reduce and 1/3 for an all-gather inside one node (the Simple ring's
 * rating: the bus), from 2.21 at 1/2 under llMaxBw (87.7 GB/s on A100). */
static void test_ll_rating_by_version(void)
{
    Topo *a = load("dgx-a100", 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    int ids[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    CollGroup *g = coll_group_new(a, ids, 8, NULL, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    const struct { const char *ver; CollOp op; double ratio; } want[] = {
        {"2.18.3", COLL_ALLREDUCE, 0.25}, {"2.18.3", COLL_ALLGATHER, 1.0 / 3}, {"2.21.5", COLL_ALLREDUCE, 0}};
    for (size_t i = 0; i < G_N_ELEMENTS(want); i++) {
        coll_group_set_nccl_version(g, coll_nccl_version_parse(want[i].ver));
        CollCost ll, simple;
        CU_ASSERT_TRUE_FATAL(coll_cost(g, want[i].op, COLL_RING, COLL_LL, 1 << 20, &ll));
        CU_ASSERT_TRUE_FATAL(coll_cost(g, want[i].op, COLL_RING, COLL_SIMPLE, 1 << 20, &simple));
        double bus = simple.tuner_algbw_Bps * coll_busbw_factor(want[i].op, 8);
        double r = want[i].ratio > 0 ? want[i].ratio : fmin(0.5, 87.7e9 / bus);
        CU_ASSERT_DOUBLE_EQUAL(ll.tuner_algbw_Bps / simple.tuner_algbw_Bps, r, 1e-6);
    }
    coll_group_free(g);
    topo_free(a);
}

/* The ring's protocols inside one NVSwitch node: LL at its payload share,
 * 1/2 of Simple's rate (under NCCL's 141 GB/s Hopper ceiling), LL128 at
 * 0.92 with no per-channel ceiling (NCCL runs 16-24 channels there); so on
 * an A100 node NCCL's tuner picks LL128 between LL and Simple, as NCCL's own
 * rating does (its 40.6 us LL128 latency against LL's 15 and Simple's 56). */
static void test_protocols_in_one_node(void)
{
    Topo *h = load("dgx-h100", 0), *a = load("dgx-a100", 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(h);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    int ids[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    CollGroup *g = coll_group_new(h, ids, 8, NULL, NULL), *ga = coll_group_new(a, ids, 8, NULL, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    CU_ASSERT_PTR_NOT_NULL_FATAL(ga);
    CollCost c[COLL_NUM_PROTOS], pick;
    for (int p = 0; p < COLL_NUM_PROTOS; p++)
        CU_ASSERT_TRUE_FATAL(coll_cost(g, COLL_ALLREDUCE, COLL_RING, (CollProto)p, 1 << 26, &c[p]));
    double simple = c[COLL_SIMPLE].algbw_Bps, ll_cap = 141e9 / (2 * 7.0 / 8);
    CU_ASSERT_DOUBLE_EQUAL(c[COLL_LL].algbw_Bps / fmin(0.5 * simple, ll_cap), 1, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(c[COLL_LL128].algbw_Bps / simple, 0.92, 1e-9);
    printf("\n8x H100 ring bus bandwidth: LL %.0f, LL128 %.0f, Simple %.0f GB/s\n", c[COLL_LL].algbw_Bps * 1.75e-9,
           c[COLL_LL128].algbw_Bps * 1.75e-9, simple * 1.75e-9);
    CU_ASSERT_TRUE_FATAL(coll_cost(ga, COLL_ALLREDUCE, COLL_ALGO_AUTO, COLL_PROTO_AUTO, 8 << 20, &pick));
    CU_ASSERT_EQUAL(pick.algo, COLL_RING);
    CU_ASSERT_EQUAL(pick.proto, COLL_LL128);
    coll_group_set_nccl_version(ga, 20408); /* before LL128 (2.5.6) */
    CU_ASSERT_FALSE(coll_cost(ga, COLL_ALLREDUCE, COLL_RING, COLL_LL128, 8 << 20, &pick));
    CU_ASSERT_STRING_EQUAL(coll_why_not(ga, COLL_ALLREDUCE, COLL_RING, COLL_LL128), "NCCL has LL128 from 2.5");
    coll_group_free(g);
    coll_group_free(ga);
    topo_free(h);
    topo_free(a);
}

static const TestCase tests[] = {
    {"closed form matches flows when uncontended", test_closed_form_matches_flows},
    {"the ring's protocols inside one node", test_protocols_in_one_node},
    {"the LL ring inside an 8x H100 node, on two published runs", test_ll_ring_on_h100_runs},
    {"2 x 8 H100: NCCL's picks by version at 256 KiB-2 MiB", test_two_node_h100_picks},
    {"NVLS with fewer than 8 GPUs: its rate and NCCL's rating", test_nvls_below_eight},
    {"NCCL's NVLS and ring ratings on Blackwell and an NVL72 rack", test_nvls_rating_blackwell},
    {"the LL ring's rating by NCCL version", test_ll_rating_by_version},
    {"a send between two GPUs: NCCL's send/receive protocol", test_p2p_protocol},
    {"double binary tree across nodes", test_tree_across_nodes},
    {"oversubscribed fat tree slows the flow model", test_oversubscribed_fat_tree},
    {"the fabric in the closed form where asked", test_fabric_in_closed_form},
    {"a NIC faster than its PCIe link", test_nic_behind_pcie},
    {"ring flows across nodes of a mesh carry the closed form's bandwidths", test_mesh_flows},
    {"algorithm choice", test_algorithms_and_auto},
    {"every decomposition runs", test_every_decomposition_runs},
    {"validation bounds on real traces", test_validation_bounds},
    {"NVLink SHARP", test_nvls},
    {"NCCL version strings", test_nccl_version_parse},
    {"the NCCL version decides the algorithms", test_nccl_versions},
    {"a scenario's nccl_version", test_scenario_nccl_version},
    {"NVLS across nodes with SHARP", test_nvls_with_sharp},
    {"process layout: host launch cost", test_process_layout},
    {"NIC transports and link efficiency", test_transports_and_efficiency},
    {"per-hop latency of fabric links", test_fabric_hop_latency},
    {"bad parameters", test_bad_parameters},
    {"names", test_names},
};
TEST_MAIN("collective", tests)
