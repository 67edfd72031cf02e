/* RCCL across nodes (models/coll_rccl.c): the protocol set by the bytes per
 * rank from the architecture's table (LL, LL128, Simple), chosen by the RCCL
 * version, raised with the node count for the all-reduce, LL128 only where
 * the NIC is not behind the host CPU and never on one node, and LL128 without
 * NCCL's per-channel ceiling. */
#include "collective.h"
#include "test_load.h"
#include "test_main.h"

#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#define PRESETS SHARDSIM_SOURCE_DIR "/topologies/presets/"

static CollGroup *rccl_group(const Topo *t, const char *version)
{
    CollGroup *g = group(t);
    CU_ASSERT_TRUE_FATAL(g != NULL);
    coll_group_set_library(g, COLL_LIB_RCCL);
    if (version)
        coll_group_set_nccl_version(g, coll_nccl_version_parse(version));
    return g;
}

static CollProto proto_at(const CollGroup *g, CollOp op, double bytes)
{
    CollCost c;
    CU_ASSERT_TRUE_FATAL(coll_cost(g, op, COLL_ALGO_AUTO, COLL_PROTO_AUTO, bytes, &c));
    return c.proto;
}

/* RCCL 2.22 (ROCm 6.4) and 2.25 on MI300X: LL to 1 MiB, LL128 to 9 MiB,
 * then Simple; from 2.28 LL stops at 512 KiB and LL128 at 4.2 MB (4415057 B). */
static void test_mi300x_by_version(void)
{
    Topo *t = load("mi300x-cluster", 2);
    CU_ASSERT_TRUE_FATAL(t != NULL);
    double MiB = 1 << 20;
    CollGroup *old = rccl_group(t, "2.22.3"), *cur = rccl_group(t, NULL), *mid = rccl_group(t, "2.27.7");
    CU_ASSERT_EQUAL(proto_at(mid, COLL_ALLREDUCE, MiB), COLL_LL);
    CU_ASSERT_EQUAL(proto_at(mid, COLL_ALLREDUCE, 8 * MiB), COLL_LL128);
    /* 2.25's table has ranges for all-gather (LL to 96 KiB per rank), 2.22's not */
    CU_ASSERT_EQUAL(proto_at(mid, COLL_ALLGATHER, 16 * 98304.0 + 16), COLL_LL128);
    coll_group_free(mid);
    CU_ASSERT_EQUAL(proto_at(old, COLL_ALLREDUCE, 8), COLL_LL);
    CU_ASSERT_EQUAL(proto_at(old, COLL_ALLREDUCE, MiB), COLL_LL);
    CU_ASSERT_EQUAL(proto_at(old, COLL_ALLREDUCE, MiB + 4), COLL_LL128);
    CU_ASSERT_EQUAL(proto_at(old, COLL_ALLREDUCE, 8 * MiB), COLL_LL128);
    CU_ASSERT_EQUAL(proto_at(old, COLL_ALLREDUCE, 16 * MiB), COLL_SIMPLE);
    CU_ASSERT_EQUAL(proto_at(cur, COLL_ALLREDUCE, 512 * 1024), COLL_LL);
    CU_ASSERT_EQUAL(proto_at(cur, COLL_ALLREDUCE, MiB), COLL_LL128);
    CU_ASSERT_EQUAL(proto_at(cur, COLL_ALLREDUCE, 4415057), COLL_LL128);
    CU_ASSERT_EQUAL(proto_at(cur, COLL_ALLREDUCE, 4415057 + 7), COLL_SIMPLE);
    /* an older RCCL has no table: its tuner chooses (Simple at 2 MiB here
     * is not forced; LL128 is off) */
    CollGroup *older = rccl_group(t, "2.20.5");
    CU_ASSERT_NOT_EQUAL(proto_at(older, COLL_ALLREDUCE, 2 * MiB), COLL_LL128);
    coll_group_free(old);
    coll_group_free(cur);
    coll_group_free(older);
    topo_free(t);
}

/* The all-reduce's LL128 range grows by its factor per doubling of nodes
 * beyond two (3145728 B in 2.28): 6 MiB is Simple on 2 nodes, LL128 on 4. */
static void test_node_count(void)
{
    Topo *t2 = load("mi300x-cluster", 2), *t4 = load("mi300x-cluster", 4);
    CU_ASSERT_TRUE_FATAL(t2 && t4);
    CollGroup *g2 = rccl_group(t2, NULL), *g4 = rccl_group(t4, NULL);
    CU_ASSERT_EQUAL(proto_at(g2, COLL_ALLREDUCE, 6 << 20), COLL_SIMPLE);
    CU_ASSERT_EQUAL(proto_at(g4, COLL_ALLREDUCE, 6 << 20), COLL_LL128);
    CU_ASSERT_EQUAL(proto_at(g4, COLL_ALLREDUCE, 8 << 20), COLL_SIMPLE);
    coll_group_free(g2);
    coll_group_free(g4);
    topo_free(t2);
    topo_free(t4);
}

/* All-gather and reduce-scatter compare the bytes per rank (the buffer over
 * the 16 ranks) with MI355X's (gfx950) 64 KiB LL and 8 MiB LL128 limits. */
static void test_per_rank(void)
{
    Topo *t = load("mi355x-cluster", 2);
    CU_ASSERT_TRUE_FATAL(t != NULL);
    CollGroup *g = rccl_group(t, NULL);
    CU_ASSERT_EQUAL(proto_at(g, COLL_ALLGATHER, 16 * 65536.0), COLL_LL);
    CU_ASSERT_EQUAL(proto_at(g, COLL_ALLGATHER, 16 * 65536.0 + 16), COLL_LL128);
    CU_ASSERT_EQUAL(proto_at(g, COLL_REDUCESCATTER, 16 * 8388608.0), COLL_LL128);
    CU_ASSERT_EQUAL(proto_at(g, COLL_REDUCESCATTER, 16 * 8388608.0 + 16), COLL_SIMPLE);
    /* gfx950's all-reduce: LL to 256 KiB, LL128 to 70640910 B. An
     * independent check: RCCL's own two-node MI350X sweep (ROCm/rocm-systems
     * pull request #9406, its "Before" table) ran LL128 at 32 and 64 MB and
     * Simple at 128 MB. */
    CU_ASSERT_EQUAL(proto_at(g, COLL_ALLREDUCE, 262144), COLL_LL);
    CU_ASSERT_EQUAL(proto_at(g, COLL_ALLREDUCE, 262144 + 4), COLL_LL128);
    CU_ASSERT_EQUAL(proto_at(g, COLL_ALLREDUCE, 32 << 20), COLL_LL128);
    CU_ASSERT_EQUAL(proto_at(g, COLL_ALLREDUCE, 64 << 20), COLL_LL128);
    CU_ASSERT_EQUAL(proto_at(g, COLL_ALLREDUCE, 128 << 20), COLL_SIMPLE);
    /* a protocol asked for is honoured (NCCL_PROTO set: RCCL keeps out) */
    CollCost c;
    CU_ASSERT_TRUE(coll_cost(g, COLL_ALLREDUCE, COLL_ALGO_AUTO, COLL_SIMPLE, 1 << 20, &c));
    CU_ASSERT_EQUAL(c.proto, COLL_SIMPLE);
    coll_group_free(g);
    topo_free(t);
}

/* LL128 on AMD: across nodes only, never on one node (the tuning rates it
 * as LL there), not where the NIC hangs off the host CPU, and at the
 * protocol's share of the ring's rate, above NCCL's per-channel ceiling. */
static void test_ll128(void)
{
    Topo *one = load("mi300x-node", 0), *two = load("mi355x-cluster", 2);
    CU_ASSERT_TRUE_FATAL(one && two);
    CollGroup *g1 = rccl_group(one, NULL), *g2 = rccl_group(two, NULL);
    CollCost c, s;
    CU_ASSERT_FALSE(coll_cost(g1, COLL_ALLREDUCE, COLL_RING, COLL_LL128, 1 << 20, &c));
    CU_ASSERT_TRUE_FATAL(coll_cost(g2, COLL_ALLREDUCE, COLL_RING, COLL_LL128, 1 << 30, &c));
    CU_ASSERT_TRUE_FATAL(coll_cost(g2, COLL_ALLREDUCE, COLL_RING, COLL_SIMPLE, 1 << 30, &s));
    CollParams *p = coll_params_new(NULL, NULL);
    CU_ASSERT_TRUE_FATAL(p != NULL);
    double share = coll_params_get(p, coll_params_find("protocol_bandwidth.ring.ll128"));
    double nccl_cap = coll_params_get(p, coll_params_find("ll128_max_bw_per_channel")) * 8;
    coll_params_free(p);
    CU_ASSERT_DOUBLE_EQUAL(c.algbw_Bps / s.algbw_Bps, share, 1e-9);
    CU_ASSERT_TRUE(c.algbw_Bps * coll_busbw_factor(COLL_ALLREDUCE, 16) > nccl_cap);
    coll_group_free(g1);
    coll_group_free(g2);

    /* the same cluster with its NICs behind the host CPU */
    gchar *text = NULL, *dir = g_dir_make_tmp("shardsim-rccl-XXXXXX", NULL);
    CU_ASSERT_TRUE_FATAL(dir && g_file_get_contents(PRESETS "mi300x-cluster.json", &text, NULL, NULL));
    char *brace = strchr(text, '{');
    CU_ASSERT_TRUE_FATAL(brace != NULL);
    gchar *phb = g_strdup_printf("{\"nic_path\": \"phb\",%s", brace + 1);
    gchar *path = g_build_filename(dir, "mi300x-phb.json", NULL);
    CU_ASSERT_TRUE_FATAL(g_file_set_contents(path, phb, -1, NULL));
    Topo *host = load(path, 2);
    CU_ASSERT_TRUE_FATAL(host != NULL);
    CollGroup *gh = rccl_group(host, NULL);
    CU_ASSERT_FALSE(coll_cost(gh, COLL_ALLREDUCE, COLL_RING, COLL_LL128, 1 << 20, &c));
    CU_ASSERT_EQUAL(proto_at(gh, COLL_ALLREDUCE, 1 << 20), COLL_SIMPLE); /* LL128's range runs Simple */
    coll_group_free(gh);
    topo_free(host);
    g_unlink(path);
    g_rmdir(dir);
    g_free(path);
    g_free(phb);
    g_free(text);
    g_free(dir);
    topo_free(one);
    topo_free(two);
}

/* NVIDIA groups and NCCL on AMD are untouched: no table, the tuner's choice. */
static void test_nccl_untouched(void)
{
    Topo *t = load("mi300x-cluster", 2);
    CU_ASSERT_TRUE_FATAL(t != NULL);
    CollGroup *g = group(t);
    CU_ASSERT_TRUE_FATAL(g != NULL);
    coll_group_set_library(g, COLL_LIB_NCCL);
    CollCost c;
    CU_ASSERT_FALSE(coll_cost(g, COLL_ALLREDUCE, COLL_RING, COLL_LL128, 2 << 20, &c));
    coll_group_free(g);
    topo_free(t);
}

/* gfx950 takes its own tuning model (tuning_model_6): at 8 MiB it rates the
 * tree's LL128 above the ring's, where the MI300X mesh model (5) keeps the
 * ring; the two-node MI355X run on RCCL 2.27.7 (tests/data) agrees: 110 us,
 * the tree's rate, not the ring's ~190 us. */
static void test_arch_model(void)
{
    Topo *a = load("mi355x-cluster", 2), *b = load("mi300x-cluster", 2);
    CU_ASSERT_TRUE_FATAL(a && b);
    CollGroup *ga = rccl_group(a, "2.27.7"), *gb = rccl_group(b, "2.27.7");
    CollCost c;
    CU_ASSERT_TRUE_FATAL(coll_cost(ga, COLL_ALLREDUCE, COLL_ALGO_AUTO, COLL_PROTO_AUTO, 8 << 20, &c));
    CU_ASSERT_EQUAL(c.algo, COLL_TREE);
    CU_ASSERT_EQUAL(c.proto, COLL_LL128);
    CU_ASSERT_TRUE_FATAL(coll_cost(gb, COLL_ALLREDUCE, COLL_ALGO_AUTO, COLL_PROTO_AUTO, 8 << 20, &c));
    CU_ASSERT_EQUAL(c.algo, COLL_RING);
    CU_ASSERT_EQUAL(c.proto, COLL_LL128);
    coll_group_free(ga);
    coll_group_free(gb);
    topo_free(a);
    topo_free(b);
}

static const TestCase tests[] = {
    {"architecture's tuning model", test_arch_model},
    {"MI300X by RCCL version", test_mi300x_by_version},
    {"node count", test_node_count},
    {"bytes per rank", test_per_rank},
    {"LL128", test_ll128},
    {"NCCL untouched", test_nccl_untouched},
};
TEST_MAIN("rccl_multinode", tests)
