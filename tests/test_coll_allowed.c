/* The tuner within what a run's NCCL_ALGO / NCCL_PROTO left it
 * (coll_group_set_allowed): on 2 DGX H100 nodes, where the model's own pick
 * for 256 MiB is NVLSTree, ring and tree only leave one of those two; Simple
 * only leaves Simple; an algorithm asked for by name runs as asked; and the
 * run's setting replaces the transport's shipped one (GCP A3 Mega's TCPXO
 * profile under NCCL 2.21.5: Ring, Tree and Simple). */
#include "collective.h"
#include "test_load.h"
#include "test_main.h"

static CollCost pick(CollGroup *g, CollAlgo a, CollProto p, double bytes)
{
    CollCost c = {0};
    CU_ASSERT_TRUE(coll_cost(g, COLL_ALLREDUCE, a, p, bytes, &c));
    return c;
}

static void test_within(void)
{
    Topo *t = load("dgx-h100-cluster", 2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CollGroup *g = group(t);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    double big = 256.0 * (1 << 20);
    CU_ASSERT_EQUAL(pick(g, COLL_ALGO_AUTO, COLL_PROTO_AUTO, big).algo, COLL_NVLS_TREE);
    coll_group_set_allowed(g, 1u << COLL_RING | 1u << COLL_TREE, 0);
    for (double b = 8; b <= big; b *= 16) {
        CollAlgo a = pick(g, COLL_ALGO_AUTO, COLL_PROTO_AUTO, b).algo;
        CU_ASSERT_TRUE(a == COLL_RING || a == COLL_TREE);
    }
    CU_ASSERT_EQUAL(pick(g, COLL_NVLS_TREE, COLL_PROTO_AUTO, big).algo, COLL_NVLS_TREE); /* asked for by name */
    coll_group_set_allowed(g, 0, 1u << COLL_SIMPLE);
    CU_ASSERT_EQUAL(pick(g, COLL_ALGO_AUTO, COLL_PROTO_AUTO, 8).proto, COLL_SIMPLE);
    coll_group_set_allowed(g, 1u << COLL_NVLS, 0); /* NVLS across nodes needs SHARP: none left */
    CollCost c;
    CU_ASSERT_FALSE(coll_cost(g, COLL_ALLREDUCE, COLL_ALGO_AUTO, COLL_PROTO_AUTO, big, &c));
    coll_group_set_allowed(g, 0, 0);
    CU_ASSERT_EQUAL(pick(g, COLL_ALGO_AUTO, COLL_PROTO_AUTO, big).algo, COLL_NVLS_TREE);
    coll_group_free(g);
    topo_free(t);
}

static void test_replaces_transport(void)
{
    Topo *t = load("gcp-a3mega", 2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CollGroup *g = group(t);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    coll_group_set_nccl_version(g, coll_nccl_version_parse("2.21.5")); /* the recipe's image */
    CU_ASSERT_EQUAL(pick(g, COLL_ALGO_AUTO, COLL_PROTO_AUTO, 8).proto, COLL_SIMPLE); /* the shipped NCCL_PROTO */
    coll_group_set_allowed(g, 0, 1u << COLL_LL);
    CU_ASSERT_EQUAL(pick(g, COLL_ALGO_AUTO, COLL_PROTO_AUTO, 8).proto, COLL_LL);
    coll_group_free(g);
    topo_free(t);
}

static const TestCase tests[] = {
    {"within the run's NCCL_ALGO / NCCL_PROTO", test_within},
    {"the run's setting replaces the transport's", test_replaces_transport},
};
TEST_MAIN("coll_allowed", tests)
