/* NCCL over HPE Slingshot (libfabric CXI through aws-ofi-nccl) on GH200:
 * the tuner chooses by NCCL's tables alone (the plugin reports no network
 * latency off AWS) while the times pay what CXI adds, and a 2-node tree is
 * rated by NCCL's per-channel cap, so GH200's 200 Gb/s NICs take the tree
 * for large all-reduces where 200 Gb/s NICs on A100 keep the ring. */
#include "collective.h"
#include "test_load.h"
#include "test_main.h"

#include <math.h>

/* A ring across 2 GH200 nodes crosses the network 4 times in an all-reduce:
 * each crossing's time carries CXI's 1 us latency, and a Simple one its 10 us
 * per message (collectives.json transports.cxi); the rating carries neither. */
static void test_cxi_latency_unseen_by_tuner(void)
{
    Topo *t = load("gh200-slingshot", 2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CollGroup *g = group(t);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    CollCost ll = allreduce_cost(g, COLL_RING, COLL_LL, 8), simple = allreduce_cost(g, COLL_RING, COLL_SIMPLE, 8);
    CU_ASSERT_TRUE(ll.tuner_latency_s > 0 && simple.tuner_latency_s > 0);
    CU_ASSERT_DOUBLE_EQUAL(ll.latency_s - ll.tuner_latency_s, 4 * 1e-6, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(simple.latency_s - simple.tuner_latency_s, 4 * (1e-6 + 10e-6), 1e-12);
    /* one node: no network, nothing added, no separate rating */
    Topo *one = load("gh200-slingshot", 1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(one);
    CollGroup *g1 = group(one);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g1);
    CU_ASSERT_EQUAL(allreduce_cost(g1, COLL_RING, COLL_SIMPLE, 8).tuner_latency_s, 0);
    coll_group_free(g1);
    topo_free(one);
    coll_group_free(g);
    topo_free(t);
}

/* InfiniBand (NCCL's own transport, whose latencies the tables are) adds
 * nothing, so times and ratings are the same figures. */
static void test_ib_rated_as_timed(void)
{
    Topo *t = load("dgx-h100-cluster", 2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CollGroup *g = group(t);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    CU_ASSERT_EQUAL(allreduce_cost(g, COLL_RING, COLL_SIMPLE, 8).tuner_latency_s, 0);
    coll_group_free(g);
    topo_free(t);
}

/* At 2 nodes NCCL rates a tree by min(0.92 x bwIntra, cap) per channel,
 * bwIntra raised to twice the channel's NIC share: GH200 (4 channels of one
 * 200 Gb/s NIC, 24 GB/s each; Hopper's cap 41.4 GB/s) rates it at 4 x 41.4 /
 * 2 = 82.8 GB/s of nominal rate (79.5 carried), over the ring's 96 x 8/14 =
 * 54.9, and runs it at 128 MiB;
 * A100 nodes with one 200 Gb/s NIC per GPU (cap 23.6) keep the ring. From 3
 * nodes the tree is rated by its NICs again. */
static void test_two_node_tree_rating(void)
{
    double bytes = 128.0 * (1 << 20);
    Topo *t = load("gh200-slingshot", 2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CollGroup *g = group(t);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    CollCost tree = allreduce_cost(g, COLL_TREE, COLL_SIMPLE, bytes), ring = allreduce_cost(g, COLL_RING, COLL_SIMPLE, bytes);
    double corr = 0.9; /* NCCL's tree correction at 128 MiB (log2(bytes / 64) = 21) */
    /* NCCL's cap is on the NICs' nominal rate; the model's rates are what CXI
     * carries of it (bandwidth_fraction 0.96) */
    CU_ASSERT_DOUBLE_EQUAL(tree.tuner_algbw_Bps, 0.5 * 4 * 41.4e9 * 0.96 * corr, 1e3);
    CU_ASSERT_DOUBLE_EQUAL(ring.tuner_algbw_Bps, coll_group_inter_bw(g) * 8 / 14, 1e3);
    CollCost best = allreduce_cost(g, COLL_ALGO_AUTO, COLL_PROTO_AUTO, bytes);
    CU_ASSERT_EQUAL(best.algo, COLL_TREE);
    CU_ASSERT_EQUAL(best.proto, COLL_SIMPLE);
    coll_group_free(g);
    topo_free(t);

    Topo *a = load("dgx-a100-cluster", 2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CollGroup *ga = group(a);
    CU_ASSERT_PTR_NOT_NULL_FATAL(ga);
    CU_ASSERT_EQUAL(allreduce_cost(ga, COLL_ALGO_AUTO, COLL_PROTO_AUTO, bytes).algo, COLL_RING);
    coll_group_free(ga);
    topo_free(a);

    Topo *t3 = load("gh200-slingshot", 3);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t3);
    CollGroup *g3 = group(t3);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g3);
    CollCost tree3 = allreduce_cost(g3, COLL_TREE, COLL_SIMPLE, bytes);
    CU_ASSERT_DOUBLE_EQUAL(tree3.tuner_algbw_Bps, 0.92 * coll_group_inter_bw(g3) / 2 * corr, 1e3);
    coll_group_free(g3);
    topo_free(t3);
}

static const TestCase tests[] = {
    {"CXI's latency is timed, not rated", test_cxi_latency_unseen_by_tuner},
    {"InfiniBand is rated as timed", test_ib_rated_as_timed},
    {"a 2-node tree is rated by NCCL's per-channel cap", test_two_node_tree_rating},
};
TEST_MAIN("coll_cxi", tests)
