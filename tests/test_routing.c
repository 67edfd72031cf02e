/* Fat-tree routing as a fabric property: the default by "fabric", D-mod-K
 * spreading destinations evenly over the spines, ECMP spreading salts, the
 * adaptive split as a pooled spine layer, and what each does to 16 rings
 * running at once in a shift pattern on a non-blocking tree. */
#include "collective.h"
#include "sim_engine.h"
#include "sim_exec.h"
#include "topo.h"

#include "test_main.h"

#include <glib/gstdio.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define CAP 16

/* A non-blocking tree of one GPU (and NIC) per node: 64 nodes, 16 per leaf
 * (4 leaves), 16 spines; `extra` adds keys ("\"routing\": \"ecmp\", "). */
static Topo *tree(const char *extra, GError **err)
{
    char *text = g_strdup_printf("{\"family\": \"fat_tree\", %s\"ranks_per_node\": 1, \"nodes\": 64, "
                                 "\"intra\": \"none\", \"nodes_per_leaf\": 16, \"spines\": 16,\n"
                                 "\"pcie\": {\"bandwidth\": \"50GB/s\", \"latency\": \"300ns\"},\n"
                                 "\"nic\": {\"bandwidth\": \"25GB/s\", \"latency\": \"350ns\"},\n"
                                 "\"uplink\": {\"latency\": \"200ns\"}}\n",
                                 extra);
    char *dir = g_dir_make_tmp("test_routing_XXXXXX", NULL);
    char *path = g_build_filename(dir, "ft.json", NULL);
    Topo *t = NULL;
    if (g_file_set_contents(path, text, -1, err))
        t = topo_load(path, NULL, err);
    g_remove(path);
    g_rmdir(dir);
    g_free(path);
    g_free(dir);
    g_free(text);
    return t;
}

static Topo *tree_ok(const char *extra)
{
    GError *err = NULL;
    Topo *t = tree(extra, &err);
    if (!t)
        fprintf(stderr, "\n%s: %s\n", extra, err ? err->message : "?");
    g_clear_error(&err);
    return t;
}

/* The spine a cross-leaf route takes ("spine7", or "spines" when pooled). */
static const char *spine_of(const Topo *t, int src, int dst, uint32_t salt)
{
    int l[CAP];
    int n = topo_route(t, src, dst, salt, l, CAP);
    if (n != 6 || strcmp(topo_link_dst_name(t, l[2]), topo_link_src_name(t, l[3])) != 0)
        return "?";
    return topo_link_dst_name(t, l[2]);
}

static void test_defaults(void)
{
    static const struct {
        const char *extra, *want;
    } cases[] = {
        {"", "ecmp"}, /* no fabric named: hashed, as a generic Ethernet */
        {"\"fabric\": \"infiniband\", ", "dmodk"},
        {"\"fabric\": \"roce\", ", "ecmp"},
        {"\"fabric\": \"ethernet\", ", "ecmp"},
        {"\"fabric\": \"spectrum-x\", ", "adaptive"},
        {"\"fabric\": \"slingshot\", ", "adaptive"},
        {"\"fabric\": \"infiniband\", \"routing\": \"ecmp\", ", "ecmp"}, /* routing given wins */
        {"\"fabric\": \"roce\", \"routing\": \"adaptive\", ", "adaptive"},
        {"\"routing\": \"dmodk\", ", "dmodk"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        Topo *t = tree_ok(cases[i].extra);
        CU_ASSERT_PTR_NOT_NULL_FATAL(t);
        CU_ASSERT_STRING_EQUAL(topo_routing(t), cases[i].want);
        topo_free(t);
    }
    /* one path per pair: no routing to speak of */
    GError *err = NULL;
    Topo *t = topo_load("dgx-h100", NULL, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_PTR_NULL(topo_routing(t));
    topo_free(t);
    /* the InfiniBand presets route by destination, the RoCE one hashes */
    static const char *const ib[] = {"abci-a100", "dgx-a100-cluster", "dgx-h100-cluster", "dgx2-v100-cluster"};
    for (size_t i = 0; i < G_N_ELEMENTS(ib); i++) {
        TopoOptions o = {64};
        t = topo_load(ib[i], &o, &err);
        CU_ASSERT_PTR_NOT_NULL_FATAL(t);
        CU_ASSERT_STRING_EQUAL(topo_routing(t), "dmodk");
        topo_free(t);
    }
    TopoOptions o = {64};
    t = topo_load("mi355x-cluster", &o, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_STRING_EQUAL(topo_routing(t), "ecmp");
    topo_free(t);
}

static void test_bad_names(void)
{
    static const struct {
        const char *extra, *msg;
    } cases[] = {
        {"\"fabric\": \"myrinet\", ", "ft.json:1: unknown \"fabric\" \"myrinet\" (known: infiniband"},
        {"\"routing\": \"ftree\", ", "ft.json:1: unknown \"routing\" \"ftree\" (known: dmodk, ecmp, adaptive)"},
        {"\"routing\": 3, ", "ft.json:1:"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        GError *err = NULL;
        Topo *t = tree(cases[i].extra, &err);
        CU_ASSERT_PTR_NULL(t);
        CU_ASSERT_PTR_NOT_NULL_FATAL(err);
        CU_ASSERT_EQUAL(err->code, SIM_ERROR_INPUT);
        if (!strstr(err->message, cases[i].msg))
            fprintf(stderr, "\n%s\n", err->message);
        CU_ASSERT_PTR_NOT_NULL(strstr(err->message, cases[i].msg));
        g_clear_error(&err);
        topo_free(t);
    }
}

/* D-mod-K: deterministic, no salt; the 16 destinations of a leaf seen from
 * another leaf take the 16 spines once each, and all 64 destinations use
 * every spine 4 times. */
static void test_dmodk_spreads(void)
{
    Topo *t = tree_ok("\"routing\": \"dmodk\", ");
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    for (int src = 0; src < 64; src += 21) {
        GHashTable *count = g_hash_table_new(g_str_hash, g_str_equal);
        for (int dst = 0; dst < 64; dst++) {
            if (dst / 16 == src / 16)
                continue;
            const char *sp = spine_of(t, src, dst, 0);
            CU_ASSERT_TRUE(g_str_has_prefix(sp, "spine") && strcmp(sp, "spines") != 0);
            for (uint32_t salt = 1; salt < 8; salt++)
                CU_ASSERT_STRING_EQUAL(spine_of(t, src, dst, salt), sp);
            /* by destination only: another source (on src's leaf) picks the same spine */
            CU_ASSERT_STRING_EQUAL(spine_of(t, src / 16 * 16 + (src + 1) % 16, dst, 0), sp);
            g_hash_table_insert(count, (gpointer)sp,
                                GINT_TO_POINTER(GPOINTER_TO_INT(g_hash_table_lookup(count, sp)) + 1));
        }
        CU_ASSERT_EQUAL(g_hash_table_size(count), 16);
        GHashTableIter it;
        gpointer k, v;
        g_hash_table_iter_init(&it, count);
        while (g_hash_table_iter_next(&it, &k, &v))
            CU_ASSERT_EQUAL(GPOINTER_TO_INT(v), 3); /* 48 destinations on the other leaves, 3 per spine */
        g_hash_table_destroy(count);
    }
    /* a leaf's 16 destinations: each spine once */
    for (int leaf = 1; leaf < 4; leaf++) {
        bool used[16] = {false};
        for (int j = 0; j < 16; j++) {
            const char *sp = spine_of(t, 0, leaf * 16 + j, 0);
            int s = atoi(sp + 5);
            CU_ASSERT_TRUE(s >= 0 && s < 16 && !used[s]);
            if (s >= 0 && s < 16)
                used[s] = true;
        }
    }
    topo_free(t);
}

/* A part-filled last unit (24 nodes, 16 per leaf, 2 rails): destinations are
 * numbered as populated, so one source's 47 destinations spread over the 16
 * spines within one of each other (numbering the unfilled ports too would put
 * both rails' last-unit NICs on spines 0-7). */
static void test_dmodk_part_filled(void)
{
    GError *err = NULL;
    char *dir = g_dir_make_tmp("test_routing_XXXXXX", NULL);
    char *path = g_build_filename(dir, "pf.json", NULL);
    const char *text = "{\"family\": \"fat_tree\", \"fabric\": \"infiniband\", \"ranks_per_node\": 2, \"nodes\": 24,\n"
                       "\"intra\": \"none\", \"nodes_per_leaf\": 16, \"spines\": 16,\n"
                       "\"pcie\": {\"bandwidth\": \"50GB/s\", \"latency\": \"300ns\"},\n"
                       "\"nic\": {\"bandwidth\": \"25GB/s\", \"latency\": \"350ns\"},\n"
                       "\"uplink\": {\"latency\": \"200ns\"}}\n";
    CU_ASSERT_TRUE_FATAL(g_file_set_contents(path, text, -1, &err));
    Topo *t = topo_load(path, NULL, &err);
    g_remove(path);
    g_rmdir(dir);
    g_free(path);
    g_free(dir);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    int count[16] = {0}, total = 0;
    for (int dst = 1; dst < 48; dst++) {
        const char *sp = spine_of(t, 0, dst, 0);
        if (strcmp(sp, "?") == 0)
            continue; /* same leaf: no spine */
        int s = atoi(sp + 5);
        CU_ASSERT_TRUE_FATAL(s >= 0 && s < 16);
        count[s]++;
        total++;
    }
    CU_ASSERT_EQUAL(total, 48 - 16);
    int lo = total, hi = 0;
    for (int s = 0; s < 16; s++) {
        lo = count[s] < lo ? count[s] : lo;
        hi = count[s] > hi ? count[s] : hi;
    }
    CU_ASSERT_TRUE(hi - lo <= 1);
    topo_free(t);
}

/* ECMP: each salt an independent choice, every spine reachable, repeatable. */
static void test_ecmp_salts(void)
{
    Topo *t = tree_ok("\"fabric\": \"roce\", ");
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    GHashTable *seen = g_hash_table_new(g_str_hash, g_str_equal);
    for (uint32_t salt = 0; salt < 400; salt++) {
        const char *sp = spine_of(t, 3, 60, salt);
        CU_ASSERT_STRING_EQUAL(spine_of(t, 3, 60, salt), sp);
        g_hash_table_add(seen, (gpointer)sp);
    }
    CU_ASSERT_EQUAL(g_hash_table_size(seen), 16);
    g_hash_table_destroy(seen);
    topo_free(t);
}

/* Adaptive: the even split over 16 spines is one pooled link each way of 16
 * uplinks' bandwidth; the per-spine links stay, with the same ids. */
static void test_adaptive_pool(void)
{
    Topo *a = tree_ok("\"fabric\": \"slingshot\", "), *d = tree_ok("\"fabric\": \"infiniband\", ");
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    CU_ASSERT_EQUAL(topo_num_links(a), topo_num_links(d) + 2 * 4);
    for (int l = 0; l < topo_num_links(d); l++) {
        CU_ASSERT_STRING_EQUAL(topo_link_src_name(a, l), topo_link_src_name(d, l));
        CU_ASSERT_STRING_EQUAL(topo_link_dst_name(a, l), topo_link_dst_name(d, l));
    }
    int l[CAP];
    CU_ASSERT_EQUAL(topo_route(a, 5, 40, 0, l, CAP), 6);
    CU_ASSERT_STRING_EQUAL(topo_link_src_name(a, l[2]), "leaf0");
    CU_ASSERT_STRING_EQUAL(topo_link_dst_name(a, l[2]), "spines");
    CU_ASSERT_STRING_EQUAL(topo_link_dst_name(a, l[3]), "leaf2");
    CU_ASSERT_DOUBLE_EQUAL(topo_link_bandwidth(a, l[2]), 16 * 25e9, 1);
    CU_ASSERT_DOUBLE_EQUAL(topo_link_bandwidth(a, l[3]), 16 * 25e9, 1);
    CU_ASSERT_EQUAL(topo_route(a, 5, 40, 0, l, 5), -1); /* does not fit */
    CU_ASSERT_EQUAL(topo_route(a, 5, 6, 0, l, CAP), 4);  /* same leaf: no spine */
    topo_free(a);
    topo_free(d);
}

/* Ring r = nodes r, r+16, r+32, r+48: every hop crosses to the next leaf,
 * 16 rings at once are a shift pattern.  Returns concurrent / alone. */
static double rings_factor(const char *extra)
{
    Topo *t = tree_ok(extra);
    if (!t)
        return NAN;
    GError *err = NULL;
    CollGroup *g[16];
    for (int r = 0; r < 16; r++) {
        int ranks[4] = {r, r + 16, r + 32, r + 48};
        g[r] = coll_group_new(t, ranks, 4, NULL, &err);
        if (!g[r]) {
            fprintf(stderr, "\n%s\n", err->message);
            g_clear_error(&err);
            return NAN;
        }
    }
    double bytes = 64e6;
    double alone = coll_simulate(g[0], COLL_ALLREDUCE, COLL_RING, COLL_SIMPLE, bytes);
    SimEngine *e = sim_engine_new();
    SimNet *net = sim_net_new(e);
    SimGraph *graph = sim_graph_new();
    coll_net_build(g[0], net);
    for (int r = 0; r < 16; r++)
        coll_append(g[r], graph, COLL_ALLREDUCE, COLL_RING, COLL_SIMPLE, bytes, NULL, 0, NULL);
    double together = sim_time_to_s(sim_graph_run(graph, e, net));
    sim_graph_free(graph);
    sim_net_free(net);
    sim_engine_free(e);
    for (int r = 0; r < 16; r++)
        coll_group_free(g[r]);
    topo_free(t);
    return together / alone;
}

static void test_sixteen_rings(void)
{
    double dmodk = rings_factor("\"fabric\": \"infiniband\", ");
    double ecmp = rings_factor("\"fabric\": \"roce\", ");
    double adaptive = rings_factor("\"fabric\": \"spectrum-x\", ");
    printf("\n16 rings at once / one alone: dmodk %.3f, ecmp %.3f, adaptive %.3f\n", dmodk, ecmp, adaptive);
    CU_ASSERT_DOUBLE_EQUAL(dmodk, 1.0, 1e-3);    /* every flow on its own spine */
    CU_ASSERT_TRUE(ecmp > 1.5);                  /* hashed flows collide on some spines */
    CU_ASSERT_DOUBLE_EQUAL(adaptive, 1.0, 1e-3); /* the split never overloads one */
}

static const TestCase tests[] = {
    {"routing default by fabric", test_defaults},
    {"unknown fabric or routing", test_bad_names},
    {"D-mod-K spreads destinations over the spines", test_dmodk_spreads},
    {"D-mod-K on a part-filled unit", test_dmodk_part_filled},
    {"ECMP spreads salts over the spines", test_ecmp_salts},
    {"adaptive as a pooled spine layer", test_adaptive_pool},
    {"16 concurrent rings, shift pattern", test_sixteen_rings},
};

TEST_MAIN("routing", tests)
