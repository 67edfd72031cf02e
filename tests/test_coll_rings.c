/* A node's ring channels and what its NICs carry: on 4 GPUs joined all to
 * all (Polaris, Perlmutter) NCCL's channels use every link, six rings at half
 * a link's rate where the greedy's first two would block the rest; RCCL's
 * nodes keep their own rings; GPUDirect through a host bridge (a NIC
 * "efficiency" below its transport's) lowers what the NICs carry and, with
 * it, the 2-node tree's rating in the same terms, so the tuner keeps NCCL's
 * ring where NCCL's tables rate the ring higher. */
#include "collective.h"
#include "test_load.h"
#include "test_main.h"

#include <math.h>

/* Polaris on one node: every one of a GPU's 3 links (4 NVLinks of 25 GB/s
 * each way, NCCL's 0.77 of them) in both directions, 231 GB/s in all, over 6
 * channels; the two rings of one cycle alone would carry 154. */
static void test_all_to_all_node(void)
{
    Topo *t = load("polaris", 1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CollGroup *g = group(t);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    CU_ASSERT_DOUBLE_EQUAL(coll_group_intra_bw(g) / 1e9, 3 * 100 * 0.77, 0.5);
    CU_ASSERT_EQUAL(coll_group_ring_channels(g), 6);
    coll_group_free(g);
    topo_free(t);
    /* an 8-GPU node of NVSwitches is not split: its first ring meets the bound */
    t = load("dgx-a100", 1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    g = group(t);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    CU_ASSERT_DOUBLE_EQUAL(coll_group_intra_bw(g) / 1e9, 12 * 25 * 0.77, 0.5);
    coll_group_free(g);
    topo_free(t);
}

/* RCCL's MI300X node (7 xGMI links per GPU) keeps the greedy's rings: the
 * split would carry more, RCCL does not search for it. */
static void test_rccl_keeps_its_rings(void)
{
    Topo *t = load("mi300x-node", 1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CollGroup *g = group(t);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    double bound = 7 * 64e9 * 0.77; /* every link both ways */
    CU_ASSERT_TRUE(coll_group_intra_bw(g) < 0.95 * bound);
    coll_group_free(g);
    topo_free(t);
}

/* Perlmutter, 2 nodes: 4 NICs at 0.74 of 25 GB/s (GPUDirect through the
 * EPYC's host bridge) = 74 GB/s; the 1 GiB all-reduce runs NCCL's ring (its
 * tables rate the ring above the tree there), and without the host bridge's
 * factor (the cxi transport's 0.96) it carries 96. */
static void test_host_bridge_nic(void)
{
    Topo *t = load("perlmutter-gpu", 2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CollGroup *g = group(t);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    CU_ASSERT_DOUBLE_EQUAL(coll_group_inter_bw(g) / 1e9, 4 * 25 * 0.74, 0.01);
    CollCost best = allreduce_cost(g, COLL_ALGO_AUTO, COLL_PROTO_AUTO, 1 << 30);
    CU_ASSERT_EQUAL(best.algo, COLL_RING);
    coll_group_free(g);
    topo_free(t);
    t = load_edited("perlmutter-gpu", "\"efficiency\": 0.74,", "", 2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    g = group(t);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    CU_ASSERT_DOUBLE_EQUAL(coll_group_inter_bw(g) / 1e9, 4 * 25 * 0.96, 0.01);
    coll_group_free(g);
    topo_free(t);
}

static const TestCase tests[] = {
    {"4 GPUs all to all: every link in both directions", test_all_to_all_node},
    {"RCCL keeps its rings", test_rccl_keeps_its_rings},
    {"GPUDirect through a host bridge", test_host_bridge_nic},
};
TEST_MAIN("coll_rings", tests)
