/* NCCL over HPE Slingshot (libfabric CXI through aws-ofi-nccl) on GH200:
 * the tuner chooses by NCCL's tables alone (the plugin reports no network
 * latency off AWS) while the times pay what CXI adds, and a 2-node tree is
 * rated by NCCL's per-channel cap, so GH200's 200 Gb/s NICs take the tree
 * for large all-reduces where 200 Gb/s NICs on A100 keep the ring. */
#include "collective.h"
#include "test_load.h"
#include "test_main.h"

#include <math.h>

/* A preset's group of all its ranks; net_free frees both. */
typedef struct {
    Topo *t;
    CollGroup *g;
} Net;

static Net net(const char *preset, int nodes)
{
    Net n = {load(preset, nodes), NULL};
    CU_ASSERT_PTR_NOT_NULL_FATAL(n.t);
    n.g = group(n.t);
    CU_ASSERT_PTR_NOT_NULL_FATAL(n.g);
    return n;
}

static void net_free(Net *n)
{
    coll_group_free(n->g);
    topo_free(n->t);
}

/* What an 8 B ring all-reduce's time holds that NCCL's rating does not. */
static const struct {
    const char *preset;
    int nodes;
    CollProto proto;
    double unseen_s; /* 0: rated as timed (tuner_latency_s 0) */
} unseen[] = {
    /* a ring across 2 GH200 nodes crosses the network 4 times: each
     * crossing's time carries CXI's 1 us latency, and a Simple one its 10 us
     * per message (collectives.json transports.cxi) */
    {"gh200-slingshot", 2, COLL_LL, 4 * 1e-6},
    {"gh200-slingshot", 2, COLL_SIMPLE, 4 * (1e-6 + 10e-6)},
    /* one node: no network, nothing added */
    {"gh200-slingshot", 1, COLL_SIMPLE, 0},
    /* InfiniBand, NCCL's own transport, whose latencies the tables are */
    {"dgx-h100-cluster", 2, COLL_SIMPLE, 0},
};

static void test_latency_rated_as_the_tables(void)
{
    for (size_t i = 0; i < G_N_ELEMENTS(unseen); i++) {
        Net n = net(unseen[i].preset, unseen[i].nodes);
        CollCost c = allreduce_cost(n.g, COLL_RING, unseen[i].proto, 8);
        if (unseen[i].unseen_s == 0) {
            CU_ASSERT_EQUAL(c.tuner_latency_s, 0);
        } else {
            CU_ASSERT_TRUE(c.tuner_latency_s > 0);
            CU_ASSERT_DOUBLE_EQUAL(c.latency_s - c.tuner_latency_s, unseen[i].unseen_s, 1e-12);
        }
        net_free(&n);
    }
}

/* At 2 nodes NCCL rates a tree by min(0.92 x bwIntra, cap) per channel,
 * bwIntra raised to twice the channel's NIC share: GH200 (4 channels of one
 * 200 Gb/s NIC, 24 GB/s each; Hopper's cap 41.4 GB/s) rates it at 4 x 41.4 /
 * 2 = 82.8 GB/s of nominal rate (79.5 carried), over the ring's 96 x 8/14 =
 * 54.9, and runs it at 128 MiB; A100 nodes with one 200 Gb/s NIC per GPU
 * (cap 23.6) keep the ring. From 3 nodes the tree is rated by its NICs again. */
static const struct {
    const char *preset;
    int nodes;
    double tree_rating_Bps; /* 0: by the NICs, 0.92 x inter_bw / 2; < 0: not checked */
    CollAlgo best;          /* the tuner's choice; COLL_ALGO_AUTO: not checked */
    bool ring_checked;      /* the ring it beats, rated at inter_bw x 8/14 */
} tree2[] = {
    /* NCCL's cap is on the NICs' nominal rate; the model's rates are what
     * CXI carries of it (bandwidth_fraction 0.96) */
    {"gh200-slingshot", 2, 0.5 * 4 * 41.4e9 * 0.96, COLL_TREE, true},
    {"dgx-a100-cluster", 2, -1, COLL_RING, false},
    {"gh200-slingshot", 3, 0, COLL_ALGO_AUTO, false},
};

static void test_two_node_tree_rating(void)
{
    double bytes = 128.0 * (1 << 20);
    double corr = 0.9; /* NCCL's tree correction at 128 MiB (log2(bytes / 64) = 21) */
    for (size_t i = 0; i < G_N_ELEMENTS(tree2); i++) {
        Net n = net(tree2[i].preset, tree2[i].nodes);
        double want = tree2[i].tree_rating_Bps > 0 ? tree2[i].tree_rating_Bps : 0.92 * coll_group_inter_bw(n.g) / 2;
        if (tree2[i].tree_rating_Bps >= 0)
            CU_ASSERT_DOUBLE_EQUAL(allreduce_cost(n.g, COLL_TREE, COLL_SIMPLE, bytes).tuner_algbw_Bps, want * corr, 1e3);
        if (tree2[i].best != COLL_ALGO_AUTO) {
            CollCost best = allreduce_cost(n.g, COLL_ALGO_AUTO, COLL_PROTO_AUTO, bytes);
            CU_ASSERT_EQUAL(best.algo, tree2[i].best);
            CU_ASSERT_EQUAL(best.proto, COLL_SIMPLE);
        }
        if (tree2[i].ring_checked)
            CU_ASSERT_DOUBLE_EQUAL(allreduce_cost(n.g, COLL_RING, COLL_SIMPLE, bytes).tuner_algbw_Bps,
                                   coll_group_inter_bw(n.g) * 8 / 14, 1e3);
        net_free(&n);
    }
}

static const TestCase tests[] = {
    {"CXI's latency is timed, not rated; InfiniBand is rated as timed", test_latency_rated_as_the_tables},
    {"a 2-node tree is rated by NCCL's per-channel cap", test_two_node_tree_rating},
};
TEST_MAIN("coll_cxi", tests)
