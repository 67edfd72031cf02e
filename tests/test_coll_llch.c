/* LL trees across nodes at the channels a size uses: NCCL's LL ceiling
 * (llMaxBws) is the comm's over all its channels, and a small message runs on
 * fewer (enqueue.cc: a channel per 512 threads x 8 bytes), so the time pays
 * that share of the ceiling while the tuner's rating keeps the full one.
 * One node (no network, no proxies) is unchanged. */
#include "collective.h"
#include "test_load.h"
#include "test_main.h"

/* 2 H100 nodes: 4 KiB runs on one channel, so its LL tree moves the bytes at
 * 1/k of the ceiling (k ring channels), and the tuner still rates the full
 * ceiling: its rating is faster than the time. */
static void test_two_nodes_share(void)
{
    Topo *t = load("dgx-h100-cluster", 2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CollGroup *g = group(t);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    CollCost one = allreduce_cost(g, COLL_TREE, COLL_LL, 4096);
    CollCost tiny = allreduce_cost(g, COLL_TREE, COLL_LL, 8);
    CU_ASSERT_TRUE_FATAL(one.algbw_Bps > 0 && one.tuner_algbw_Bps > 0);
    CU_ASSERT_TRUE(one.tuner_algbw_Bps > 4 * one.algbw_Bps);
    /* 4 KiB costs microseconds over 8 bytes (one channel's share), not the
     * fraction of one that the full ceiling gives */
    CU_ASSERT_TRUE(one.time_s - tiny.time_s > 1e-6);
    /* a size on every channel runs at the full ceiling */
    CollCost big = allreduce_cost(g, COLL_TREE, COLL_LL, 64.0 * (1 << 20));
    CU_ASSERT_TRUE(big.algbw_Bps > 0 && big.algbw_Bps >= 0.99 * big.tuner_algbw_Bps);
    /* the flows agree with the closed form */
    double closed = allreduce_cost(g, COLL_TREE, COLL_LL, 65536).time_s;
    CU_ASSERT_TRUE(fabs(coll_simulate(g, COLL_ALLREDUCE, COLL_TREE, COLL_LL, 65536) - closed) < 0.1 * closed);
    coll_group_free(g);
    topo_free(t);
}

/* One node: the LL ceiling is the GPUs', not the proxies': no share. */
static void test_one_node_unchanged(void)
{
    Topo *t = load("dgx-h100", 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CollGroup *g = group(t);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    CollCost c = allreduce_cost(g, COLL_TREE, COLL_LL, 4096);
    CU_ASSERT_TRUE(c.algbw_Bps > 0 && c.algbw_Bps >= 0.99 * c.tuner_algbw_Bps);
    coll_group_free(g);
    topo_free(t);
}

static const TestCase tests[] = {
    {"an LL tree across nodes runs at its channels' share of the ceiling", test_two_nodes_share},
    {"one node's LL tree keeps the full ceiling", test_one_node_unchanged},
};
TEST_MAIN("coll_llch", tests)
