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

/* What a group of all of TOPO's ranks carries inside a node and between
 * nodes (bytes/s), its ring channels, and the all-reduce of 1 GiB NCCL's
 * tuner would choose on it; TOPO is freed. */
typedef struct {
    double intra, inter;
    int channels;
    CollAlgo gib_algo;
} Rings;

static Rings rings_of(Topo *t)
{
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CollGroup *g = group(t);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    Rings r = {coll_group_intra_bw(g), coll_group_inter_bw(g), coll_group_ring_channels(g),
               allreduce_cost(g, COLL_ALGO_AUTO, COLL_PROTO_AUTO, 1 << 30).algo};
    coll_group_free(g);
    topo_free(t);
    return r;
}

/* Polaris on one node: every one of a GPU's 3 links (4 NVLinks of 25 GB/s
 * each way, NCCL's 0.77 of them) in both directions, 231 GB/s in all, over 6
 * channels; the two rings of one cycle alone would carry 154.  An 8-GPU
 * node of NVSwitches is not split: its first ring meets the bound. */
static void test_all_to_all_node(void)
{
    Rings r = rings_of(load("polaris", 1));
    CU_ASSERT_DOUBLE_EQUAL(r.intra / 1e9, 3 * 100 * 0.77, 0.5);
    CU_ASSERT_EQUAL(r.channels, 6);
    r = rings_of(load("dgx-a100", 1));
    CU_ASSERT_DOUBLE_EQUAL(r.intra / 1e9, 12 * 25 * 0.77, 0.5);
    CU_ASSERT_EQUAL(r.channels, 1);
    /* GH200's 4-GPU node likewise (6 NVLinks per pair, the default NVLink
     * efficiency 0.82 of collectives.json): 3 x 150 x 0.82 */
    r = rings_of(load("gh200-slingshot", 1));
    CU_ASSERT_EQUAL(r.channels, 6);
    CU_ASSERT_DOUBLE_EQUAL(r.intra / 1e9, 3 * 150 * 0.82, 0.5);
}

/* A TPU host's chips keep the greedy's ring: no NCCL searches there. */
static void test_tpu_not_split(void)
{
    CU_ASSERT_EQUAL(rings_of(load("tpu-v3-pod", 1)).channels, 1);
}

/* RCCL's MI300X node (7 xGMI links per GPU) keeps the greedy's rings: the
 * split would carry more (every link both ways), RCCL does not search for it. */
static void test_rccl_keeps_its_rings(void)
{
    CU_ASSERT_TRUE(rings_of(load("mi300x-node", 1)).intra < 0.95 * 7 * 64e9 * 0.77);
}

/* Perlmutter, 2 nodes: 4 NICs at 0.74 of 25 GB/s (GPUDirect through the
 * EPYC's host bridge) = 74 GB/s, and the 1 GiB all-reduce on NCCL's ring
 * (its tables rate the ring above the tree there); without the host
 * bridge's factor (the cxi transport's 0.96) the NICs carry 96. */
static void test_host_bridge_nic(void)
{
    Rings r = rings_of(load("perlmutter-gpu", 2));
    CU_ASSERT_DOUBLE_EQUAL(r.inter / 1e9, 4 * 25 * 0.74, 0.01);
    CU_ASSERT_EQUAL(r.gib_algo, COLL_RING);
    /* the tree's rating: NCCL's Ampere cap of 23.6 GB/s a channel, in what
     * the NICs carry (x 0.74), x 0.5 for the tree's two halves, x 0.9 for
     * NCCL's tree correction at 128 MiB */
    Topo *t = load("perlmutter-gpu", 2);
    CollGroup *g = group(t);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    CU_ASSERT_DOUBLE_EQUAL(allreduce_cost(g, COLL_TREE, COLL_SIMPLE, 128.0 * (1 << 20)).tuner_algbw_Bps,
                           0.5 * 4 * 23.6e9 * 0.74 * 0.9, 1e3);
    coll_group_free(g);
    topo_free(t);
    CU_ASSERT_DOUBLE_EQUAL(rings_of(load_edited("perlmutter-gpu", "\"efficiency\": 0.74,", "", 2)).inter / 1e9,
                           4 * 25 * 0.96, 0.01);
}

static const TestCase tests[] = {
    {"4 GPUs all to all: every link in both directions", test_all_to_all_node},
    {"RCCL keeps its rings", test_rccl_keeps_its_rings},
    {"TPU hosts are not split", test_tpu_not_split},
    {"GPUDirect through a host bridge", test_host_bridge_nic},
};
TEST_MAIN("coll_rings", tests)
