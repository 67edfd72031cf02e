/* Placement (topologies/topo_place.h): contiguous is what the collective
 * command always did, rail_aligned spreads a node's ranks over its NICs,
 * scattered is deterministic per seed and spreads over the cluster; and on
 * an oversubscribed fat tree the flow model makes a scattered ring slower
 * than a contiguous one by what the spine links allow, while adaptive
 * routing's pooled spines make up for it. */
#include "coll_sweep.h"
#include "test_load.h"
#include "test_main.h"
#include "topo_place.h"

#include <glib/gstdio.h>
#include <string.h>
#include <unistd.h>

/* 64 nodes of 8 GPUs, 8 per leaf, 8 spines, 4:1 oversubscribed: one spine
 * link carries 8 x 50 GB/s / (4 x 8) = 12.5 GB/s, a NIC 50 GB/s. */
static Topo *fat_tree(const char *routing, int nics)
{
    char *text = g_strdup_printf(
        "{\"name\": \"ft\", \"family\": \"fat_tree\", \"routing\": \"%s\", \"nodes\": 64, \"ranks_per_node\": 8,"
        " \"nics_per_node\": %d, \"intra\": \"nvswitch\","
        " \"nvlink\": {\"bandwidth\": \"25GB/s\", \"count\": 18, \"latency\": \"250ns\"},"
        " \"pcie\": {\"bandwidth\": \"63GB/s\", \"latency\": \"300ns\"},"
        " \"nic\": {\"bandwidth\": \"400Gbps\", \"latency\": \"350ns\"},"
        " \"nodes_per_leaf\": 8, \"spines\": 8, \"oversubscription\": 4, \"uplink\": {\"latency\": \"200ns\"}}",
        routing, nics);
    char *path = g_strdup_printf("%s/shardsim-place-%d.json", g_get_tmp_dir(), (int)getpid());
    g_file_set_contents(path, text, -1, NULL);
    Topo *t = load(path, 0);
    g_unlink(path);
    g_free(path);
    g_free(text);
    return t;
}

static int *place(const Topo *t, TopoPlacement p, uint64_t seed, int n, int per)
{
    GError *err = NULL;
    int *ids = topo_place(t, p, seed, n, per, &err);
    if (!ids)
        fprintf(stderr, "\n%s\n", err ? err->message : "?");
    g_clear_error(&err);
    return ids;
}

static void test_names(void)
{
    TopoPlacement p;
    for (int i = 0; i < 3; i++) {
        CU_ASSERT_TRUE(topo_placement_parse(topo_placement_name((TopoPlacement)i), &p));
        CU_ASSERT_EQUAL(p, i);
    }
    CU_ASSERT_TRUE(topo_placement_parse("rail-aligned", &p));
    CU_ASSERT_EQUAL(p, TOPO_PLACE_RAIL_ALIGNED);
    CU_ASSERT_FALSE(topo_placement_parse("random", &p));
    CU_ASSERT_FALSE(topo_placement_parse("", &p));
}

/* contiguous is coll_sweep_ranks, the collective command's placement. */
static void test_contiguous(void)
{
    Topo *t = load("dgx-h100-cluster", 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    static const int ns[] = {1, 2, 8, 12, 24, 64};
    for (size_t k = 0; k < G_N_ELEMENTS(ns); k++) {
        int used, *want = coll_sweep_ranks(t, ns[k], &used);
        CU_ASSERT_PTR_NOT_NULL_FATAL(want);
        int *got = place(t, TOPO_PLACE_CONTIGUOUS, 1, ns[k], ns[k] / used);
        CU_ASSERT_PTR_NOT_NULL_FATAL(got);
        CU_ASSERT_EQUAL(memcmp(got, want, sizeof(int) * (size_t)ns[k]), 0);
        g_free(got);
        g_free(want);
    }
    topo_free(t);
}

/* The NIC a rank's first hop out of the node reaches. */
static const char *nic_of(const Topo *t, int r, int other_node_rank)
{
    int l[16];
    int n = topo_route(t, r, other_node_rank, 0, l, 16);
    return n > 0 ? topo_link_dst_name(t, l[0]) : "";
}

/* 4 NICs for 8 GPUs: 4 ranks per node contiguous share 2 NICs, rail-aligned use 4. */
static void test_rail_aligned(void)
{
    Topo *t = fat_tree("dmodk", 4);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    int *c = place(t, TOPO_PLACE_CONTIGUOUS, 1, 8, 4), *r = place(t, TOPO_PLACE_RAIL_ALIGNED, 1, 8, 4);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    int distinct[2] = {0, 0};
    for (int v = 0; v < 2; v++) {
        const int *ids = v ? r : c;
        for (int i = 0; i < 4; i++) {
            bool seen = false;
            for (int j = 0; j < i; j++)
                seen |= strcmp(nic_of(t, ids[i], ids[4]), nic_of(t, ids[j], ids[4])) == 0;
            distinct[v] += !seen;
        }
        for (int i = 0; i < 4; i++) /* the same local index on both nodes: the same rail */
            CU_ASSERT_EQUAL(ids[i] % 8, ids[4 + i] % 8);
    }
    CU_ASSERT_EQUAL(distinct[0], 2);
    CU_ASSERT_EQUAL(distinct[1], 4);
    g_free(c);
    g_free(r);
    /* every GPU of the node: rail-aligned is contiguous */
    c = place(t, TOPO_PLACE_CONTIGUOUS, 1, 16, 8);
    r = place(t, TOPO_PLACE_RAIL_ALIGNED, 1, 16, 8);
    CU_ASSERT_EQUAL(memcmp(c, r, sizeof(int) * 16), 0);
    g_free(c);
    g_free(r);
    topo_free(t);
}

static void test_scattered(void)
{
    Topo *t = fat_tree("dmodk", 8);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    int *a = place(t, TOPO_PLACE_SCATTERED, 7, 60, 6), *b = place(t, TOPO_PLACE_SCATTERED, 7, 60, 6);
    int *c = place(t, TOPO_PLACE_SCATTERED, 8, 60, 6);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    CU_ASSERT_EQUAL(memcmp(a, b, sizeof(int) * 60), 0); /* the same seed, the same placement */
    CU_ASSERT_NOT_EQUAL(memcmp(a, c, sizeof(int) * 60), 0);
    bool *used = g_new0(bool, 512);
    int dup = 0, bad_node = 0, units = 0, rails_differ = 0;
    bool unit_seen[8] = {false};
    for (int i = 0; i < 60; i++) {
        CU_ASSERT_TRUE(a[i] >= 0 && a[i] < 512);
        dup += used[a[i]];
        used[a[i]] = true;
        bad_node += topo_node_of(t, a[i]) != topo_node_of(t, a[i - i % 6]); /* 6 per node, in order */
        if (i % 6 == 0 && !unit_seen[a[i] / 64]) {
            unit_seen[a[i] / 64] = true;
            units++;
        }
        if (i >= 6 && i % 6 == 0)
            for (int k = 0; k < 6; k++)
                rails_differ += a[i + k] % 8 != a[k] % 8;
    }
    CU_ASSERT_EQUAL(dup, 0);
    CU_ASSERT_EQUAL(bad_node, 0);
    CU_ASSERT_TRUE(units >= 4); /* 10 nodes of 64 drawn: contiguous would sit in 2 leaf units */
    CU_ASSERT_TRUE(rails_differ > 0);
    g_free(used);
    g_free(a);
    g_free(b);
    g_free(c);
    /* refusals */
    GError *err = NULL;
    CU_ASSERT_PTR_NULL(topo_place(t, TOPO_PLACE_SCATTERED, 1, 8, 9, &err));
    CU_ASSERT_TRUE(err && err->code == SIM_ERROR_INPUT);
    g_clear_error(&err);
    CU_ASSERT_PTR_NULL(topo_place(t, TOPO_PLACE_CONTIGUOUS, 1, 65 * 8, 8, &err));
    CU_ASSERT_TRUE(err && err->code == SIM_ERROR_INPUT && strstr(err->message, "need 65 nodes"));
    g_clear_error(&err);
    topo_free(t);
}

/* A 1 GiB ring all-reduce on 8 nodes of 64: contiguous stays in one leaf
 * unit (and on the flow model takes what the closed form says); scattered
 * crosses the spines, where D-mod-K gives each flow one 12.5 GB/s spine link
 * against a 50 GB/s NIC: at least 2x slower, at most the 4x of that ratio
 * (flows sharing a spine link aside, 5x); adaptive routing spreads over all
 * 8 spines (100 GB/s per leaf), so scattering costs almost nothing there. */
static void test_oversubscribed(void)
{
    double t[2][2];
    for (int v = 0; v < 2; v++) {
        Topo *ft = fat_tree(v ? "adaptive" : "dmodk", 8);
        CU_ASSERT_PTR_NOT_NULL_FATAL(ft);
        for (int s = 0; s < 2; s++) {
            int *ids = place(ft, s ? TOPO_PLACE_SCATTERED : TOPO_PLACE_CONTIGUOUS, 1, 64, 8);
            CU_ASSERT_PTR_NOT_NULL_FATAL(ids);
            GError *err = NULL;
            CollGroup *g = coll_group_new(ft, ids, 64, NULL, &err);
            CU_ASSERT_PTR_NOT_NULL_FATAL(g);
            t[v][s] = coll_simulate(g, COLL_ALLREDUCE, COLL_RING, COLL_SIMPLE, 1 << 30);
            CollCost c;
            CU_ASSERT_TRUE(coll_cost(g, COLL_ALLREDUCE, COLL_RING, COLL_SIMPLE, 1 << 30, &c));
            if (s == 0)
                CU_ASSERT_DOUBLE_EQUAL(t[v][s] / c.time_s, 1, 0.05);
            coll_group_free(g);
            g_free(ids);
        }
        topo_free(ft);
    }
    double r = t[0][1] / t[0][0];
    CU_ASSERT_TRUE(r > 2 && r < 5);
    CU_ASSERT_DOUBLE_EQUAL(t[1][1] / t[1][0], 1, 0.1);
    if (!(r > 2 && r < 5))
        fprintf(stderr, "\nscattered / contiguous = %.2f\n", r);
}

static const TestCase tests[] = {
    {"names", test_names},
    {"contiguous is the collective command's", test_contiguous},
    {"rail aligned", test_rail_aligned},
    {"scattered", test_scattered},
    {"oversubscribed fat tree", test_oversubscribed},
};

TEST_MAIN("placement", tests)
