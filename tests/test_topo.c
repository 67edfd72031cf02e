#include "sim_engine.h"
#include "test_load.h"
#include "sim_error.h"
#include "sim_net.h"
#include "topo.h"
#include "test_main.h"

#include <CUnit/Basic.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define CAP 4096

/* Checks that a route is a chain of links from src's node to dst's node. */
static bool route_ok(const Topo *t, int src, int dst, const int *l, int n)
{
    if (src == dst)
        return n == 0;
    if (n <= 0 || n > topo_max_route_length(t))
        return false;
    if (strcmp(topo_link_src_name(t, l[0]), topo_rank_name(t, src)) != 0)
        return false;
    if (strcmp(topo_link_dst_name(t, l[n - 1]), topo_rank_name(t, dst)) != 0)
        return false;
    for (int i = 0; i + 1 < n; i++)
        if (strcmp(topo_link_dst_name(t, l[i]), topo_link_src_name(t, l[i + 1])) != 0)
            return false;
    return true;
}

static void test_every_preset(void)
{
    static const struct {
        const char *name;
        int ranks, nodes;
        bool inr;
    } want[] = {
        {"ring8", 8, 1, false},           {"fc8", 8, 1, false},
        {"switch8", 8, 8, false},         {"dgx-a100", 8, 1, false},
        {"dgx-h100", 8, 1, false},        {"dgx1-v100", 8, 1, false},
        {"abci-a100", 16, 2, true},       {"dgx-a100-cluster", 64, 8, false},
        {"dgx-h100-cluster", 64, 8, false}, {"tpu-v3-pod", 1024, 256, false},
        {"tpu-v4-pod", 64, 16, false},    {"pcie-8gpu", 8, 1, false},
        {"localhost", 2, 1, false},       {"mi300x-node", 8, 1, false},
        {"mi355x-cluster", 16, 2, false}, {"dgx2-v100-cluster", 400, 25, false},
        {"dgx-b200", 8, 1, false},        {"dgx-b200-cluster", 64, 8, false},
        {"dgx-h200", 8, 1, false},        {"dgx-h200-cluster", 64, 8, false},
        {"gb200-nvl72", 72, 1, false},    {"mi325x-node", 8, 1, false},
        {"mi325x-cluster", 16, 2, false}, {"alps-gh200-dragonfly", 896, 224, false},
        {"gh200-slingshot", 8, 2, false}, {"h100-pcie-nvlink", 2, 1, false},
        {"oci-bm-gpu4.8", 16, 2, false},  {"oci-bm-gpu-h100.8", 16, 2, false},
        {"mi300x-cluster", 16, 2, false},
        {"oci-bm-optimized3.36", 144, 4, false},
        {"cirrus-ex4000", 576, 2, false}, {"olivia-cpu", 512, 2, false},
        {"aws-p4d", 16, 2, false},        {"gcp-a3mega", 16, 2, false},
        {"gcp-a3high", 16, 2, false},
        {"aws-p5", 16, 2, false},         {"betzy-epyc7742", 256, 2, false},
        {"perlmutter-gpu", 8, 2, false},  {"polaris", 8, 2, false},
    };
    char **names = topo_list_presets();
    CU_ASSERT_EQUAL(g_strv_length(names), G_N_ELEMENTS(want));
    for (size_t i = 0; i < G_N_ELEMENTS(want); i++)
        CU_ASSERT_TRUE(g_strv_contains((const char *const *)names, want[i].name));
    int links[CAP];
    for (char **p = names; *p; p++) {
        Topo *t = load(*p, 0);
        CU_ASSERT_PTR_NOT_NULL_FATAL(t);
        CU_ASSERT_STRING_EQUAL(topo_name(t), *p);
        for (size_t i = 0; i < G_N_ELEMENTS(want); i++) {
            if (strcmp(want[i].name, *p) != 0)
                continue;
            CU_ASSERT_EQUAL(topo_num_ranks(t), want[i].ranks);
            CU_ASSERT_EQUAL(topo_num_nodes(t), want[i].nodes);
            CU_ASSERT_EQUAL(topo_has_in_network_reduction(t), want[i].inr);
        }
        CU_ASSERT_EQUAL(topo_num_ranks(t), topo_num_nodes(t) * topo_ranks_per_node(t));
        for (int l = 0; l < topo_num_links(t); l++) {
            CU_ASSERT_TRUE(topo_link_bandwidth(t, l) > 0);
            CU_ASSERT_TRUE(topo_link_latency(t, l) >= 0 && topo_link_latency(t, l) < 1e-4);
        }
        /* all pairs on small ones, a deterministic sample on big ones */
        int R = topo_num_ranks(t), bad = 0;
        uint32_t x = 12345;
        for (int k = 0; k < (R <= 64 ? R * R : 20000); k++) {
            int s = k / R, d = k % R;
            if (R > 64) {
                x = x * 1664525u + 1013904223u;
                s = (int)((x >> 8) % (uint32_t)R);
                x = x * 1664525u + 1013904223u;
                d = (int)((x >> 8) % (uint32_t)R);
            }
            int n = topo_route(t, s, d, (uint32_t)k, links, CAP);
            bad += !route_ok(t, s, d, links, n);
            CU_ASSERT_EQUAL(topo_node_of(t, s), s / topo_ranks_per_node(t));
        }
        CU_ASSERT_EQUAL(bad, 0);
        if (bad)
            fprintf(stderr, "\n%s: %d bad routes\n", *p, bad);
        topo_free(t);
    }
    g_strfreev(names);
}

static int route(const Topo *t, int s, int d, uint32_t salt, int *links)
{
    int n = topo_route(t, s, d, salt, links, CAP);
    CU_ASSERT_TRUE(route_ok(t, s, d, links, n));
    return n;
}

static void test_route_lengths(void)
{
    int l[CAP];
    Topo *t = load("ring8", 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_EQUAL(route(t, 0, 1, 0, l), 1);
    CU_ASSERT_EQUAL(route(t, 0, 7, 0, l), 1); /* the short way round */
    CU_ASSERT_STRING_EQUAL(topo_link_dst_name(t, l[0]), "gpu7");
    CU_ASSERT_EQUAL(route(t, 0, 3, 0, l), 3);
    CU_ASSERT_EQUAL(route(t, 0, 4, 0, l), 4);
    CU_ASSERT_EQUAL(route(t, 5, 5, 0, l), 0);
    CU_ASSERT_EQUAL(topo_route(t, 0, 4, 0, l, 3), -1); /* does not fit */
    CU_ASSERT_EQUAL(topo_route(t, 0, 8, 0, l, CAP), -1);
    CU_ASSERT_DOUBLE_EQUAL(topo_link_bandwidth(t, l[0]), 25e9, 1);
    CU_ASSERT_EQUAL(topo_link_kind(t, l[0]), TOPO_LINK_NVLINK);
    topo_free(t);

    t = load("fc8", 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_EQUAL(topo_num_links(t), 56);
    for (int s = 0; s < 8; s++)
        for (int d = 0; d < 8; d++)
            CU_ASSERT_EQUAL(route(t, s, d, 0, l), s != d);
    topo_free(t);

    t = load("dgx-a100", 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_EQUAL(route(t, 2, 6, 0, l), 2);
    CU_ASSERT_STRING_EQUAL(topo_link_dst_name(t, l[0]), "nvswitch");
    CU_ASSERT_DOUBLE_EQUAL(topo_link_bandwidth(t, l[0]), 300e9, 1);
    CU_ASSERT_STRING_EQUAL(topo_accelerator(t), "a100-80gb");
    topo_free(t);

    t = load("dgx-h100", 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_EQUAL(route(t, 0, 7, 0, l), 2);
    CU_ASSERT_DOUBLE_EQUAL(topo_link_bandwidth(t, l[1]), 450e9, 1);
    topo_free(t);

    /* DGX-1: NV1, NV2 and SYS pairs of the nvidia-smi matrix */
    t = load("dgx1-v100", 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_EQUAL(route(t, 0, 1, 0, l), 1);
    CU_ASSERT_DOUBLE_EQUAL(topo_link_bandwidth(t, l[0]), 25e9, 1);
    CU_ASSERT_EQUAL(route(t, 0, 3, 0, l), 1);
    CU_ASSERT_DOUBLE_EQUAL(topo_link_bandwidth(t, l[0]), 50e9, 1);
    CU_ASSERT_EQUAL(route(t, 7, 1, 0, l), 1);
    CU_ASSERT_DOUBLE_EQUAL(topo_link_bandwidth(t, l[0]), 50e9, 1);
    int n = route(t, 0, 4, 0, l); /* SYS: never relayed through a GPU */
    CU_ASSERT_EQUAL(n, 5);
    for (int i = 0; i < n; i++)
        CU_ASSERT_EQUAL(topo_link_kind(t, l[i]), TOPO_LINK_PCIE);
    CU_ASSERT_STRING_EQUAL(topo_link_dst_name(t, l[1]), "cpu0");
    CU_ASSERT_STRING_EQUAL(topo_link_dst_name(t, l[2]), "cpu1");
    CU_ASSERT_EQUAL(route(t, 2, 4, 0, l), 1); /* NV1 across the halves */
    topo_free(t);

    t = load("pcie-8gpu", 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_EQUAL(route(t, 0, 3, 0, l), 2);
    CU_ASSERT_EQUAL(route(t, 0, 4, 0, l), 5);
    CU_ASSERT_STRING_EQUAL(topo_link_src_name(t, l[2]), "cpu0");
    CU_ASSERT_STRING_EQUAL(topo_link_dst_name(t, l[2]), "cpu1");
    CU_ASSERT_DOUBLE_EQUAL(topo_link_bandwidth(t, l[2]), 38.4e9, 1);
    topo_free(t);

    t = load("localhost", 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_EQUAL(route(t, 1, 0, 0, l), 1);
    CU_ASSERT_EQUAL(topo_link_kind(t, l[0]), TOPO_LINK_SHM);
    topo_free(t);
}

static void test_fat_tree(void)
{
    int l[CAP];
    Topo *t = load("dgx-a100-cluster", 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    /* same node: over NVSwitch */
    CU_ASSERT_EQUAL(route(t, 0, 5, 0, l), 2);
    CU_ASSERT_EQUAL(topo_link_kind(t, l[0]), TOPO_LINK_NVLINK);
    /* same rail, other node: gpu -> nic -> leaf -> nic -> gpu */
    CU_ASSERT_EQUAL(route(t, 0, 8, 0, l), 4);
    CU_ASSERT_STRING_EQUAL(topo_link_dst_name(t, l[0]), "node0.nic0");
    CU_ASSERT_STRING_EQUAL(topo_link_dst_name(t, l[1]), "leaf0");
    CU_ASSERT_STRING_EQUAL(topo_link_dst_name(t, l[2]), "node1.nic0");
    CU_ASSERT_EQUAL(topo_link_kind(t, l[0]), TOPO_LINK_PCIE);
    CU_ASSERT_EQUAL(topo_link_kind(t, l[1]), TOPO_LINK_NET);
    CU_ASSERT_DOUBLE_EQUAL(topo_link_bandwidth(t, l[1]), 25e9, 1);
    /* other rail, other node: up one rail, over a spine, down the other */
    CU_ASSERT_EQUAL(route(t, 0, 9, 0, l), 6);
    CU_ASSERT_STRING_EQUAL(topo_link_dst_name(t, l[1]), "leaf0");
    CU_ASSERT_TRUE(g_str_has_prefix(topo_link_dst_name(t, l[2]), "spine"));
    CU_ASSERT_STRING_EQUAL(topo_link_dst_name(t, l[3]), "leaf1");
    CU_ASSERT_STRING_EQUAL(topo_link_dst_name(t, l[4]), "node1.nic1");
    /* 20 nodes per leaf x 25 GB/s over 20 spines at 1:1 */
    CU_ASSERT_DOUBLE_EQUAL(topo_link_bandwidth(t, l[2]), 25e9, 1);

    /* InfiniBand: D-mod-K by destination, the salt changes nothing (ECMP's
     * spread over salts is in tests/test_routing.c) */
    CU_ASSERT_STRING_EQUAL(topo_routing(t), "dmodk");
    GHashTable *seen = g_hash_table_new(g_str_hash, g_str_equal);
    for (uint32_t salt = 0; salt < 400; salt++) {
        CU_ASSERT_EQUAL(route(t, 3, 60, salt, l), 6);
        g_hash_table_add(seen, (gpointer)topo_link_dst_name(t, l[2]));
        CU_ASSERT_STRING_EQUAL(topo_link_dst_name(t, l[2]), topo_link_src_name(t, l[3]));
    }
    CU_ASSERT_EQUAL(g_hash_table_size(seen), 1);
    /* node 7 on leaf 4 of 8 nodes each: index 4 x 8 + 7 = 39, mod 20 spines */
    CU_ASSERT_STRING_EQUAL(topo_link_dst_name(t, l[2]), "spine19");
    g_hash_table_destroy(seen);
    topo_free(t);

    /* ABCI: two GPUs per HCA, 4 rails */
    t = load("abci-a100", 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_STRING_EQUAL(topo_accelerator(t), "a100-40gb");
    CU_ASSERT_EQUAL(route(t, 0, 9, 0, l), 4); /* gpu0 and gpu1 of node 1 share rail 0 */
    CU_ASSERT_STRING_EQUAL(topo_link_dst_name(t, l[2]), "node1.nic0");
    CU_ASSERT_EQUAL(route(t, 1, 10, 0, l), 6);
    topo_free(t);

    /* scaling: nodes override; several leaves per rail */
    t = load("dgx-a100-cluster", 50);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_EQUAL(topo_num_ranks(t), 400);
    CU_ASSERT_EQUAL(topo_num_nodes(t), 50);
    CU_ASSERT_EQUAL(route(t, 0, 8 * 19, 0, l), 4);  /* node 19 shares the leaf of node 0 */
    CU_ASSERT_EQUAL(route(t, 0, 8 * 20, 0, l), 6);  /* node 20 is in the next unit */
    CU_ASSERT_STRING_EQUAL(topo_link_dst_name(t, l[3]), "leaf8"); /* unit 1, rail 0 */
    topo_free(t);
}

static char *tmpdir;

static char *write_tmp(const char *name, const char *text)
{
    char *path = g_build_filename(tmpdir, name, NULL);
    g_file_set_contents(path, text, -1, NULL);
    return path;
}

/* The fat tree variants no preset uses: NVLink mesh inside a node, or no intra-node fabric. */
static void test_fat_tree_variants(void)
{
    static const char *const intra[] = {"fully_connected", "none"};
    int l[CAP];
    for (int v = 0; v < 2; v++) {
        char *text = g_strdup_printf(
            "{\"family\": \"fat_tree\", \"nodes\": 3, \"ranks_per_node\": 4, \"nics_per_node\": 2,\n"
            " \"intra\": \"%s\", \"nvlink\": {\"bandwidth\": \"50GB/s\", \"latency\": 0},\n"
            " \"pcie\": {\"bandwidth\": \"32GB/s\", \"latency\": \"300ns\"},\n"
            " \"nic\": {\"bandwidth\": \"100Gbps\", \"latency\": \"300ns\"},\n"
            " \"spines\": 3, \"oversubscription\": 2, \"uplink\": {\"latency\": \"200ns\"}}\n",
            intra[v]);
        char *path = write_tmp("ft.json", text);
        GError *err = NULL;
        Topo *t = topo_load(path, NULL, &err);
        CU_ASSERT_PTR_NOT_NULL_FATAL(t);
        int bad = 0;
        for (int s = 0; s < 12; s++)
            for (int d = 0; d < 12; d++)
                bad += !route_ok(t, s, d, l, topo_route(t, s, d, 0, l, CAP));
        CU_ASSERT_EQUAL(bad, 0);
        int n = route(t, 0, 1, 0, l); /* GPUs 0 and 1 share NIC 0 */
        CU_ASSERT_EQUAL(n, v == 0 ? 1 : 2);
        n = route(t, 0, 2, 0, l); /* same node, other rail */
        CU_ASSERT_EQUAL(n, v == 0 ? 1 : 6);
        CU_ASSERT_EQUAL(route(t, 0, 4, 0, l), 4);
        CU_ASSERT_EQUAL(route(t, 0, 6, 0, l), 6);
        /* 3 nodes x 12.5 GB/s / (2 x 3 spines) */
        CU_ASSERT_DOUBLE_EQUAL(topo_link_bandwidth(t, l[2]), 3 * 12.5e9 / 6, 1);
        topo_free(t);
        g_free(path);
        g_free(text);
    }
}

static void test_torus(void)
{
    int l[CAP];
    Topo *t = load("tpu-v4-pod", 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_EQUAL(topo_num_links(t), 64 * 6);
    /* (0,0,0) -> (1,2,3): x +1, y +2 (tie: positive way), z -1 round the wrap */
    int n = route(t, 0, 1 + 4 * 2 + 16 * 3, 0, l);
    CU_ASSERT_EQUAL(n, 4);
    if (n == 4) {
        CU_ASSERT_STRING_EQUAL(topo_link_dst_name(t, l[0]), "chip1");
        CU_ASSERT_STRING_EQUAL(topo_link_dst_name(t, l[1]), "chip5");
        CU_ASSERT_STRING_EQUAL(topo_link_dst_name(t, l[2]), "chip9");
        CU_ASSERT_STRING_EQUAL(topo_link_dst_name(t, l[3]), "chip57");
    }
    CU_ASSERT_EQUAL(topo_link_kind(t, l[0]), TOPO_LINK_ICI);
    CU_ASSERT_DOUBLE_EQUAL(topo_link_bandwidth(t, l[0]), 50e9, 1);
    /* the reverse route is not the same links reversed: it goes x first too */
    CU_ASSERT_EQUAL(route(t, 57, 0, 0, l), 4);
    CU_ASSERT_STRING_EQUAL(topo_link_dst_name(t, l[0]), "chip56");
    topo_free(t);

    t = load("tpu-v4-pod", 32); /* 128 chips -> 8x4x4 */
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_EQUAL(topo_num_ranks(t), 128);
    CU_ASSERT_EQUAL(topo_num_nodes(t), 32);
    CU_ASSERT_EQUAL(topo_max_route_length(t), 8);
    CU_ASSERT_EQUAL(route(t, 0, 4, 0, l), 4); /* x = 4 is the far side of a ring of 8 */
    topo_free(t);

    t = load("tpu-v3-pod", 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_EQUAL(route(t, 0, 31 * 32 + 31, 0, l), 2); /* both wraps */
    CU_ASSERT_EQUAL(route(t, 0, 16 * 32 + 16, 0, l), 32);
    CU_ASSERT_EQUAL(topo_max_route_length(t), 32);
    topo_free(t);
}

/* Loads `text` and expects an input error at `line` whose message contains `what`. */
static void expect_error(const char *text, int line, const char *what, int nodes)
{
    char *path = write_tmp("bad.json", text);
    GError *err = NULL;
    TopoOptions o = {nodes};
    Topo *t = topo_load(path, &o, &err);
    CU_ASSERT_PTR_NULL(t);
    topo_free(t);
    CU_ASSERT_PTR_NOT_NULL_FATAL(err);
    CU_ASSERT_EQUAL(err->code, SIM_ERROR_INPUT);
    char *prefix = line > 0 ? g_strdup_printf("%s:%d: ", path, line) : g_strdup_printf("%s: ", path);
    CU_ASSERT_TRUE(g_str_has_prefix(err->message, prefix));
    CU_ASSERT_PTR_NOT_NULL(strstr(err->message, what));
    if (!g_str_has_prefix(err->message, prefix) || !strstr(err->message, what))
        fprintf(stderr, "\nwanted %s...%s, got: %s\n", prefix, what, err->message);
    g_free(prefix);
    g_error_free(err);
    g_free(path);
}

#define LINK_AB "{\"src\": \"a\", \"dst\": \"b\", \"bandwidth\": \"25GB/s\", \"latency\": 1e-6, \"kind\": \"nvlink\"}"

static void test_bad_input(void)
{
    GError *err = NULL;
    CU_ASSERT_PTR_NULL(topo_load("no-such-preset", NULL, &err));
    CU_ASSERT_PTR_NOT_NULL_FATAL(err);
    CU_ASSERT_EQUAL(err->code, SIM_ERROR_INPUT);
    CU_ASSERT_PTR_NOT_NULL(strstr(err->message, "no-such-preset"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err->message, "dgx-a100-cluster")); /* lists what exists */
    g_clear_error(&err);

    expect_error("{\n  \"name\": \"x\",\n  \"family\": \"hypercube\"\n}\n", 3, "unknown family \"hypercube\"", 0);
    expect_error("{\n \"endpoints\": [\"a\", \"b\"],\n \"links\": [\n  " LINK_AB ",\n"
                 "  {\"src\": \"a\",\n   \"dst\": \"zz\", \"bandwidth\": 1e9, \"latency\": 0, \"kind\": \"net\"}\n ]\n}\n",
                 6, "\"zz\"", 0);
    expect_error("{\n \"endpoints\": [\"a\", \"b\"],\n \"links\": [\n"
                 "  {\"src\": \"a\", \"dst\": \"b\",\n   \"bandwidth\": -5, \"latency\": 0, \"kind\": \"net\"}\n ]\n}\n",
                 5, "\"bandwidth\" must be between 1 kB/s and 1 PB/s, not -5 B/s", 0);
    expect_error("{\n \"endpoints\": [\"a\", \"b\"],\n \"links\": [\n"
                 "  {\"src\": \"a\", \"dst\": \"b\", \"bandwidth\": 0,\n   \"latency\": 0, \"kind\": \"net\"}\n ]\n}\n",
                 4, "\"bandwidth\" must be between 1 kB/s and 1 PB/s, not 0 B/s", 0);
    expect_error("{\n \"endpoints\": [\"a\", \"b\"],\n \"links\": [\n"
                 "  {\"src\": \"a\", \"dst\": \"b\", \"bandwidth\": \"25 GBs\", \"latency\": 0, \"kind\": \"net\"}\n ]\n}\n",
                 4, "cannot read \"25 GBs\"", 0);
    /* c is listed but nothing reaches it */
    expect_error("{\n \"endpoints\": [\"a\", \"b\",\n   \"c\"],\n \"links\": [\n  " LINK_AB "\n ]\n}\n", 3,
                 "\"c\" has no path", 0);
    /* a one-way link leaves b unable to answer */
    expect_error("{\n \"endpoints\": [\"a\",\n \"b\"],\n \"links\": [\n"
                 "  {\"src\": \"a\", \"dst\": \"b\", \"bandwidth\": 1e9, \"latency\": 0, \"kind\": \"net\", "
                 "\"bidirectional\": false}\n ]\n}\n",
                 3, "\"b\" has no path to \"a\"", 0);
    expect_error("{\n \"family\": \"ring\",\n \"ranks_per_node\": 4,\n \"nodes\": 0,\n"
                 " \"link\": {\"bandwidth\": 1e9, \"latency\": 0}\n}\n",
                 4, "\"nodes\" must be between 1 and 1048576, not 0", 0);
    expect_error("{\n \"family\": \"ring\",\n \"ranks_per_node\": 4,\n \"link\": {\"bandwidth\": 1e9, \"latency\": 0}\n}\n",
                 0, "nodes = -2 must be positive", -2);
    expect_error("{\n \"family\": \"ring\",\n \"ranks_per_node\": 4,\n \"link\": {\"bandwidth\": 1e9, \"latency\": 0},\n"
                 " \"bidirectionnal\": false\n}\n",
                 5, "unknown field \"bidirectionnal\"", 0);
    expect_error("{\n \"family\": \"ring\",\n \"ranks_per_node\": 4,\n \"link\": {\"bandwidth\": 1e9}\n}\n", 4,
                 "missing required field \"latency\"", 0);
    expect_error("{\n \"family\": \"torus3d\",\n \"dims\": [4, 4],\n \"link\": {\"bandwidth\": 1e9, \"latency\": 0}\n}\n",
                 3, "\"dims\"", 0);
    expect_error("{\n \"family\": \"nvswitch_node\",\n \"nvlink\": {\"bandwidth\": 1e9, \"latency\": 0}\n}\n", 1,
                 "nvswitch_node describes one node", 4);
    expect_error("{\n \"endpoints\": [\"a\", \"b\"],\n \"links\": [\n  " LINK_AB "\n ]\n}\n", 1,
                 "cannot be scaled", 3);
    expect_error("{\n \"endpoints\": [\"a\", \"a\"],\n \"links\": []\n}\n", 2, "duplicate", 0);
    expect_error("{\n \"endpoints\": [\"a\", \"b\"],\n \"links\": [\n"
                 "  {\"src\": \"a\", \"dst\": \"b\", \"bandwidth\": 1e9, \"latency\": 0, \"kind\": \"smoke\"}\n ]\n}\n",
                 4, "unknown link kind", 0);
    expect_error("[1, 2]", 1, "JSON object", 0);
    /* more spines than a leaf has nodes: uplinks of an eighth of a NIC under pinned routing (a review's 1:1
     * tree 7.5x slower than one of 4 spines); adaptive routing pools them, an uplink bandwidth says so */
    const char *ft = "{\n \"family\": \"fat_tree\", \"nodes\": 8, \"ranks_per_node\": 8,\n"
                     " \"nvlink\": {\"bandwidth\": \"25GB/s\", \"count\": 18, \"latency\": \"250ns\"},\n"
                     " \"pcie\": {\"bandwidth\": \"63GB/s\", \"latency\": \"300ns\"},\n"
                     " \"nic\": {\"bandwidth\": \"400Gbps\", \"latency\": \"350ns\"}, \"nodes_per_leaf\": 4,\n"
                     " %s%s\n \"uplink\": {\"latency\": \"200ns\"%s}\n}\n";
    char *pinned = g_strdup_printf(ft, "\"spines\": 32,", " \"fabric\": \"infiniband\",", "");
    expect_error(pinned, 6, "32 spines for leaves of 4 nodes (oversubscription 1): each uplink would carry 6.25 GB/s, "
                            "less than one NIC's 50", 0);
    g_free(pinned);
    /* accepted: adaptive routing, a given uplink bandwidth, 8 spines undersubscribed 2:1 (full-rate
     * uplinks), and the default spine count (as many as rails, 8, kept to the 4 a leaf of 4 nodes fills) */
    static const char *const ok[][3] = {{"\"spines\": 32,", " \"routing\": \"adaptive\",", ""},
                                        {"\"spines\": 32,", "", ", \"bandwidth\": \"50GB/s\""},
                                        {"\"spines\": 8,", " \"oversubscription\": 0.5,", ""},
                                        {"", "", ""}};
    for (size_t i = 0; i < G_N_ELEMENTS(ok); i++) {
        char *text = g_strdup_printf(ft, ok[i][0], ok[i][1], ok[i][2]), *path = write_tmp("ok.json", text);
        GError *e = NULL;
        TopoOptions o = {0};
        Topo *t = topo_load(path, &o, &e);
        CU_ASSERT_PTR_NOT_NULL(t);
        if (!t)
            fprintf(stderr, "\n%s\n", e->message);
        g_clear_error(&e);
        topo_free(t);
        g_free(path);
        g_free(text);
    }
    /* links counted before any is made: a fully connected node of 16384 GPUs (268 M links: an allocation
     * abort after 9 s) */
    expect_error("{\"family\": \"fat_tree\", \"ranks_per_node\": 16384, \"nodes\": 1, \"nics_per_node\": 1,\n"
                 " \"intra\": \"fully_connected\", \"nvlink\": {\"bandwidth\": \"25GB/s\", \"latency\": \"1us\"},\n"
                 " \"pcie\": {\"bandwidth\": \"32GB/s\", \"latency\": \"1us\"},\n"
                 " \"nic\": {\"bandwidth\": \"200Gbps\", \"latency\": \"1us\"}}\n",
                 1, "this fat tree would have 268451842 links, more than 16777216", 0);
}

static void test_explicit_and_units(void)
{
    /* A square a-b-d-c-a: a -> d has two 2-hop paths; the lower link id wins. */
    const char *text = "{\n \"name\": \"square\",\n \"accelerator\": \"h100-sxm\",\n"
                       " \"endpoints\": [\"a\", \"b\", \"c\", \"d\"],\n \"ranks_per_node\": 2,\n \"links\": [\n"
                       "  {\"src\": \"a\", \"dst\": \"b\", \"bandwidth\": \"200Gbps\", \"latency\": \"1.5us\", \"kind\": \"net\"},\n"
                       "  {\"src\": \"a\", \"dst\": \"c\", \"bandwidth\": \"25GB/s\", \"count\": 2, \"latency\": \"500ns\", \"kind\": \"nvlink\"},\n"
                       "  {\"src\": \"b\", \"dst\": \"d\", \"bandwidth\": 1e9, \"latency\": 0, \"kind\": \"pcie\"},\n"
                       "  {\"src\": \"c\", \"dst\": \"d\", \"bandwidth\": \"1GiB/s\", \"latency\": 0, \"kind\": \"shm\"}\n ]\n}\n";
    char *path = write_tmp("square.json", text);
    GError *err = NULL;
    Topo *t = topo_load(path, NULL, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_STRING_EQUAL(topo_family(t), "explicit");
    CU_ASSERT_STRING_EQUAL(topo_accelerator(t), "h100-sxm");
    CU_ASSERT_EQUAL(topo_num_nodes(t), 2);
    CU_ASSERT_EQUAL(topo_node_of(t, 3), 1);
    CU_ASSERT_EQUAL(topo_num_links(t), 8);
    CU_ASSERT_DOUBLE_EQUAL(topo_link_bandwidth(t, 0), 25e9, 1);
    CU_ASSERT_DOUBLE_EQUAL(topo_link_latency(t, 0), 1.5e-6, 1e-15);
    CU_ASSERT_STRING_EQUAL(topo_link_src_name(t, 1), "b"); /* the reverse direction follows */
    CU_ASSERT_DOUBLE_EQUAL(topo_link_bandwidth(t, 2), 50e9, 1);
    CU_ASSERT_DOUBLE_EQUAL(topo_link_bandwidth(t, 6), 1073741824.0, 1e-3);
    CU_ASSERT_EQUAL(topo_link_kind(t, 6), TOPO_LINK_SHM);
    CU_ASSERT_STRING_EQUAL(topo_link_kind_name(topo_link_kind(t, 4)), "pcie");
    int l[CAP];
    CU_ASSERT_EQUAL(route(t, 0, 3, 0, l), 2);
    CU_ASSERT_EQUAL(l[0], 0);
    CU_ASSERT_EQUAL(l[1], 4);
    CU_ASSERT_EQUAL(route(t, 3, 0, 0, l), 2);
    CU_ASSERT_EQUAL(l[0], 5); /* d -> b is the lower id than d -> c */

    /* the same input gives the same graph */
    Topo *u = topo_load(path, NULL, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(u);
    CU_ASSERT_EQUAL(topo_num_links(u), topo_num_links(t));
    for (int i = 0; i < topo_num_links(t); i++)
        CU_ASSERT_EQUAL(topo_link_bandwidth(u, i), topo_link_bandwidth(t, i));
    topo_free(u);
    topo_free(t);
    g_free(path);

    /* endpoints relay by default: a chain a-b-c routes a -> c through b */
    text = "{\n \"endpoints\": [\"a\", \"b\", \"c\"],\n \"links\": [\n  " LINK_AB ",\n"
           "  {\"src\": \"b\", \"dst\": \"c\", \"bandwidth\": 1e9, \"latency\": 0, \"kind\": \"net\"}\n ]\n}\n";
    path = write_tmp("chain.json", text);
    t = topo_load(path, NULL, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_EQUAL(route(t, 0, 2, 0, l), 2);
    topo_free(t);
    g_free(path);
}

/* Routes have no length limit: a chain of 200 endpoints routes end to end
 * through all of them, and a 2048-host (8192-chip) TPU pod's longest routes
 * (96 links) fit the bound the topology reports, and no smaller one. */
static void test_long_routes(void)
{
    GString *s = g_string_new("{\"ranks_per_node\": 1, \"endpoints\": [");
    for (int i = 0; i < 200; i++)
        g_string_append_printf(s, "%s\"e%d\"", i ? ", " : "", i);
    g_string_append(s, "], \"links\": [");
    for (int i = 0; i + 1 < 200; i++)
        g_string_append_printf(s, "%s{\"src\": \"e%d\", \"dst\": \"e%d\", \"bandwidth\": \"25GB/s\", "
                               "\"latency\": \"1us\", \"kind\": \"nvlink\"}",
                               i ? ", " : "", i, i + 1);
    g_string_append(s, "]}");
    char *path = write_tmp("longchain.json", s->str);
    g_string_free(s, TRUE);
    Topo *t = load(path, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_EQUAL(topo_num_ranks(t), 200);
    CU_ASSERT_EQUAL(topo_max_route_length(t), 199);
    int *l = g_new(int, 199);
    CU_ASSERT_EQUAL(topo_route(t, 0, 199, 0, l, 199), 199);
    CU_ASSERT_TRUE(route_ok(t, 0, 199, l, 199));
    CU_ASSERT_EQUAL(topo_route(t, 199, 0, 0, l, 199), 199);
    CU_ASSERT_TRUE(route_ok(t, 199, 0, l, 199));
    CU_ASSERT_EQUAL(topo_route(t, 0, 199, 0, l, 198), -1); /* does not fit: refused, not overrun */
    g_free(l);
    topo_free(t);
    g_free(path);

    t = load("tpu-v3-pod", 2048);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_EQUAL(topo_num_ranks(t), 8192);
    int cap = topo_max_route_length(t), longest = 0, bad = 0;
    CU_ASSERT_EQUAL(cap, 96); /* 128 x 64: 64 + 32 hops the shorter way round */
    l = g_new(int, cap);
    for (int src = 0; src < 8192; src += 97)
        for (int dst = 0; dst < 8192; dst += 61) {
            int n = topo_route(t, src, dst, 0, l, cap);
            bad += !route_ok(t, src, dst, l, n);
            longest = n > longest ? n : longest;
        }
    CU_ASSERT_EQUAL(bad, 0);
    CU_ASSERT_TRUE(longest > 64); /* longer than the old fixed route buffers */
    /* the pair from the bug report */
    int n = topo_route(t, 8116, 4056, 0, l, cap);
    CU_ASSERT_TRUE(n > 64 && route_ok(t, 8116, 4056, l, n));
    CU_ASSERT_EQUAL(topo_route(t, 8116, 4056, 0, l, n - 1), -1);
    g_free(l);
    topo_free(t);
}

static void test_data_dir_env(void)
{
    char *dir = g_build_filename(tmpdir, "topologies", "presets", NULL);
    g_mkdir_with_parents(dir, 0700);
    char *f = g_build_filename(dir, "mine.json", NULL);
    g_file_set_contents(f,
                        "{\"family\": \"single_switch\", \"ranks_per_node\": 3, "
                        "\"link\": {\"bandwidth\": \"100Gbps\", \"latency\": \"1us\"}}",
                        -1, NULL);
    g_setenv("SHARDSIM_DATA_DIR", tmpdir, TRUE);
    Topo *t = load("mine", 2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_EQUAL(topo_num_ranks(t), 6);
    CU_ASSERT_STRING_EQUAL(topo_name(t), "mine");
    CU_ASSERT_DOUBLE_EQUAL(topo_link_bandwidth(t, 0), 12.5e9, 1);
    CU_ASSERT_TRUE(g_str_has_prefix(topo_preset_dir(), tmpdir));
    topo_free(t);
    GError *err = NULL;
    CU_ASSERT_PTR_NULL(topo_load("ring8", NULL, &err)); /* not in that directory */
    g_clear_error(&err);
    g_unsetenv("SHARDSIM_DATA_DIR");
    t = load("ring8", 0);
    CU_ASSERT_PTR_NOT_NULL(t);
    topo_free(t);
    g_remove(f);
    g_free(f);
    g_free(dir);
}

static void test_add_to_net(void)
{
    Topo *t = load("dgx1-v100", 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    SimEngine *e = sim_engine_new();
    SimNet *net = sim_net_new(e);
    topo_add_to_net(t, net);
    CU_ASSERT_EQUAL(sim_net_num_links(net), topo_num_links(t));
    sim_net_free(net);
    sim_engine_free(e);
    topo_free(t);
}

static void test_route_speed(void)
{
    Topo *t = load("dgx-h100-cluster", 2048);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_EQUAL(topo_num_ranks(t), 16384);
    int l[CAP], R = topo_num_ranks(t);
    uint32_t x = 7;
    long total = 0;
    gint64 t0 = g_get_monotonic_time();
    for (int i = 0; i < 1000000; i++) {
        x = x * 1664525u + 1013904223u;
        int s = (int)((x >> 8) % (uint32_t)R);
        x = x * 1664525u + 1013904223u;
        int d = (int)((x >> 8) % (uint32_t)R);
        total += topo_route(t, s, d, (uint32_t)i, l, CAP);
    }
    double sec = (double)(g_get_monotonic_time() - t0) / 1e6;
    fprintf(stderr, "\n1e6 routes on 16384 GPUs: %.3f s (%.2f links/route)\n", sec, total / 1e6);
    CU_ASSERT_TRUE(sec < 3.0);
    CU_ASSERT_TRUE(total > 5000000); /* almost all pairs cross the spines */
    topo_free(t);
}

static const TestCase tests[] = {
    {"every preset", test_every_preset},
    {"route lengths", test_route_lengths},
    {"fat tree and ECMP", test_fat_tree},
    {"fat tree variants", test_fat_tree_variants},
    {"torus dimension order", test_torus},
    {"bad input", test_bad_input},
    {"explicit graphs and units", test_explicit_and_units},
    {"long routes", test_long_routes},
    {"SHARDSIM_DATA_DIR", test_data_dir_env},
    {"add to net", test_add_to_net},
    {"route speed", test_route_speed},
};

int main(void)
{
    tmpdir = g_dir_make_tmp("test_topo_XXXXXX", NULL);
    if (!tmpdir)
        return 1;
    int failed = run_tests("topologies", tests, G_N_ELEMENTS(tests));
    static const char *const left[] = {"bad.json", "ft.json", "square.json", "chain.json", "longchain.json", "topologies/presets", "topologies"};
    for (size_t i = 0; i < G_N_ELEMENTS(left); i++) {
        char *p = g_build_filename(tmpdir, left[i], NULL);
        g_remove(p);
        g_free(p);
    }
    g_rmdir(tmpdir);
    g_free(tmpdir);
    return failed ? 1 : 0;
}
