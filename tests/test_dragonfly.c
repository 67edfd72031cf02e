/* The dragonfly family: link counts per block, route shapes and lengths
 * under minimal, valiant and adaptive routing, the global-port arithmetic
 * when a group's ports do not divide evenly, the bisection, and every new
 * key's bad input reported at its line. */
#include "test_load.h"
#include "test_main.h"

#include <glib/gstdio.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define CAP 64

static char *write_tmp(const char *text)
{
    static int seq;
    char *name = g_strdup_printf("shardsim-df-%d-%d.json", (int)getpid(), seq++);
    char *path = g_build_filename(g_get_tmp_dir(), name, NULL);
    g_free(name);
    g_file_set_contents(path, text, -1, NULL);
    return path;
}

/* A small dragonfly: `groups` x `a` switches, `h` global ports each, 2
 * nodes per switch, 4 GPUs and 4 NICs per node, NVLink mesh inside; local
 * and global links of the given latencies. */
static char *df_lat_text(int groups, int a, int h, int nodes, const char *routing, const char *local,
                         const char *global)
{
    return g_strdup_printf("{\n \"name\": \"df\",\n \"family\": \"dragonfly\",\n \"routing\": \"%s\",\n"
                           " \"nodes\": %d,\n \"ranks_per_node\": 4,\n \"nics_per_node\": 4,\n"
                           " \"intra\": \"fully_connected\",\n"
                           " \"nvlink\": {\"bandwidth\": \"150GB/s\", \"latency\": \"500ns\"},\n"
                           " \"pcie\": {\"bandwidth\": \"63GB/s\", \"latency\": \"300ns\"},\n"
                           " \"nic\": {\"bandwidth\": \"200Gbps\", \"latency\": \"1us\"},\n"
                           " \"groups\": %d,\n \"switches_per_group\": %d,\n \"nodes_per_switch\": 2,\n"
                           " \"global_links_per_switch\": %d,\n"
                           " \"local\": {\"bandwidth\": \"200Gbps\", \"latency\": \"%s\"},\n"
                           " \"global\": {\"bandwidth\": \"200Gbps\", \"latency\": \"%s\"}\n}\n",
                           routing, nodes, groups, a, h, local, global);
}

static char *df_text(int groups, int a, int h, int nodes, const char *routing)
{
    return df_lat_text(groups, a, h, nodes, routing, "100ns", "500ns");
}

static Topo *df(int groups, int a, int h, int nodes, const char *routing)
{
    char *text = df_text(groups, a, h, nodes, routing);
    char *path = write_tmp(text);
    Topo *t = load(path, 0);
    g_unlink(path);
    g_free(path);
    g_free(text);
    return t;
}

/* The group of a switch vertex "gG.swI", -1 for anything else. */
static int sw_group(const char *name)
{
    int G, i;
    char tail;
    return sscanf(name, "g%d.sw%d%c", &G, &i, &tail) == 2 ? G : -1;
}

static bool is_global(const Topo *t, int l)
{
    int a = sw_group(topo_link_src_name(t, l)), b = sw_group(topo_link_dst_name(t, l));
    return a >= 0 && b >= 0 && a != b;
}

static bool chain_ok(const Topo *t, int s, int d, const int *l, int n)
{
    if (n <= 0 || n > topo_max_route_length(t) || strcmp(topo_link_src_name(t, l[0]), topo_rank_name(t, s)) ||
        strcmp(topo_link_dst_name(t, l[n - 1]), topo_rank_name(t, d)))
        return false;
    for (int i = 0; i + 1 < n; i++)
        if (strcmp(topo_link_dst_name(t, l[i]), topo_link_src_name(t, l[i + 1])))
            return false;
    return true;
}

static void test_link_counts(void)
{
    /* 4 groups x 3 switches, 2 global ports each: 6 ports per group, 2 links per pair */
    Topo *t = df(4, 3, 2, 24, "minimal");
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_EQUAL(topo_num_ranks(t), 96);
    CU_ASSERT_EQUAL(topo_num_nodes(t), 24);
    int mesh = 96 * 3, pcie = 2 * 96, nic = 2 * 96, local = 4 * 3 * 2, global = 4 * 6;
    CU_ASSERT_EQUAL(topo_num_links(t), mesh + pcie + nic + local + global);
    CU_ASSERT_STRING_EQUAL(topo_family(t), "dragonfly");
    CU_ASSERT_STRING_EQUAL(topo_routing(t), "minimal");
    int nglobal = 0;
    for (int l = 0; l < topo_num_links(t); l++)
        nglobal += is_global(t, l);
    CU_ASSERT_EQUAL(nglobal, global);
    topo_free(t);
    /* adaptive adds its pooled links: 2 per switch to the group, 2 per
     * switch to the hub, 2 per group, one per ordered pair of groups */
    t = df(4, 3, 2, 24, "adaptive");
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_EQUAL(topo_num_links(t), mesh + pcie + nic + local + global + 24 + 24 + 8 + 12);
    topo_free(t);
}

/* Every pair: a chain from rank to rank; its length by where the two sit;
 * minimal crosses one global link between groups, valiant two. */
static void test_routes(void)
{
    static const char *const routings[] = {"minimal", "valiant", "adaptive"};
    int l[CAP];
    for (int v = 0; v < 3; v++) {
        Topo *t = df(4, 3, 2, 24, routings[v]);
        CU_ASSERT_PTR_NOT_NULL_FATAL(t);
        int bad = 0, longest = 0;
        for (int s = 0; s < 96; s++)
            for (int d = 0; d < 96; d++) {
                if (s == d)
                    continue;
                int n = topo_route(t, s, d, (uint32_t)(s + d), l, CAP);
                bad += !chain_ok(t, s, d, l, n);
                longest = n > longest ? n : longest;
                int ns = s / 4, nd = d / 4, sws = ns / 2, swd = nd / 2, gs = sws / 3, gd = swd / 3;
                int globals = 0;
                for (int k = 0; k < n; k++)
                    globals += is_global(t, l[k]);
                if (ns == nd)
                    bad += n != 1; /* the NVLink mesh */
                else if (sws == swd)
                    bad += n != 4; /* pcie, nic, nic, pcie */
                else if (gs == gd)
                    bad += n != (v == 2 ? 6 : 5); /* + a local link, or the hub's two */
                else if (v == 0)
                    bad += globals != 1 || n < 5 || n > 7;
                else if (v == 1)
                    bad += globals != 2 || n < 6 || n > 9;
                else
                    bad += globals != 0 || n != 9; /* the five pooled links */
            }
        CU_ASSERT_EQUAL(bad, 0);
        CU_ASSERT_TRUE(longest <= topo_max_route_length(t));
        if (bad)
            fprintf(stderr, "\n%s: %d bad routes\n", routings[v], bad);
        topo_free(t);
    }
}

/* One group (its switches on their local links alone): every routing
 * wires and routes it, adaptive's pools with no global port (it divided by
 * the g - 1 other groups: SIGFPE, found by an attack on the inputs). */
static void test_one_group(void)
{
    static const char *const routings[] = {"minimal", "valiant", "adaptive"};
    int l[CAP];
    for (size_t i = 0; i < G_N_ELEMENTS(routings); i++) {
        Topo *t = df(1, 2, 1, 4, routings[i]);
        CU_ASSERT_PTR_NOT_NULL_FATAL(t);
        int n = topo_route(t, 0, 15, 0, l, CAP); /* node 0 to node 3, on the other switch */
        CU_ASSERT_TRUE(n >= 3);
        for (int k = 0; k < n; k++)
            CU_ASSERT_FALSE(is_global(t, l[k]));
        topo_free(t);
    }
}

/* Uneven ports: 4 groups x 5 switches x 1 port = 5 ports for 3 other
 * groups: 1 link to each, and of the partial row the port to the group
 * opposite (offset 2 pairs with itself) is wired, the other stays dark; 5 groups x 3 x 2 = 6 ports for 4: one each,
 * the partial row's two stay dark.  Every global link has its reverse. */
static void test_uneven_ports(void)
{
    static const struct {
        int g, a, h, per_group;
    } cases[] = {{4, 5, 1, 4}, {5, 3, 2, 4}, {2, 2, 3, 6}};
    int l[CAP];
    for (size_t c = 0; c < G_N_ELEMENTS(cases); c++) {
        int g = cases[c].g, a = cases[c].a;
        Topo *t = df(g, a, cases[c].h, 2 * g * a, "minimal");
        CU_ASSERT_PTR_NOT_NULL_FATAL(t);
        int nglobal = 0, unpaired = 0;
        for (int x = 0; x < topo_num_links(t); x++) {
            if (!is_global(t, x))
                continue;
            nglobal++;
            bool rev = false;
            for (int y = 0; y < topo_num_links(t) && !rev; y++)
                rev = strcmp(topo_link_src_name(t, y), topo_link_dst_name(t, x)) == 0 &&
                      strcmp(topo_link_dst_name(t, y), topo_link_src_name(t, x)) == 0;
            unpaired += !rev;
        }
        CU_ASSERT_EQUAL(nglobal, g * cases[c].per_group);
        CU_ASSERT_EQUAL(unpaired, 0);
        int bad = 0, R = topo_num_ranks(t);
        for (int s = 0; s < R; s += 3)
            for (int d = 0; d < R; d += 5)
                if (s != d)
                    bad += !chain_ok(t, s, d, l, topo_route(t, s, d, 7, l, CAP));
        CU_ASSERT_EQUAL(bad, 0);
        topo_free(t);
    }
}

/* Half the groups against the other half: (g/2)^2 pairs x m links x 25 GB/s each way. */
static void test_bisection(void)
{
    Topo *t = df(4, 3, 2, 24, "minimal");
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    double cut = 0;
    for (int l = 0; l < topo_num_links(t); l++)
        if (is_global(t, l) && sw_group(topo_link_src_name(t, l)) < 2 && sw_group(topo_link_dst_name(t, l)) >= 2)
            cut += topo_link_bandwidth(t, l);
    CU_ASSERT_DOUBLE_EQUAL(cut, 2 * 2 * 2 * 25e9, 1);
    topo_free(t);
}

/* Closed form and flows: the NICs bound the closed form; a ring across
 * groups pays for the thin global links on the flow network, less with
 * adaptive routing than with minimal; with fat enough links the two agree. */
static void test_collective(void)
{
    double flow[2];
    for (int v = 0; v < 2; v++) {
        Topo *t = df(4, 3, 2, 24, v ? "adaptive" : "minimal");
        CU_ASSERT_PTR_NOT_NULL_FATAL(t);
        CollGroup *g = group(t);
        CU_ASSERT_PTR_NOT_NULL_FATAL(g);
        CU_ASSERT_DOUBLE_EQUAL(coll_group_inter_bw(g) / 1e9, 4 * 25.0 * 0.96, 4 * 25.0 * 0.04 + 1e-9);
        CollCost c;
        CU_ASSERT_TRUE(coll_cost(g, COLL_ALLREDUCE, COLL_RING, COLL_SIMPLE, 1 << 30, &c));
        flow[v] = coll_simulate(g, COLL_ALLREDUCE, COLL_RING, COLL_SIMPLE, 1 << 30);
        CU_ASSERT_TRUE(flow[v] > c.time_s);
        coll_group_free(g);
        topo_free(t);
    }
    CU_ASSERT_TRUE(flow[1] < flow[0]);
    /* 8 parallel local and global links: the NICs bound the ring on every
     * routing, and the flow model agrees with the closed form */
    static const char *const routings[] = {"minimal", "valiant", "adaptive"};
    for (int v = 0; v < 3; v++) {
        char *text = df_text(4, 3, 2, 24, routings[v]);
        char **parts = g_strsplit(text, "\"200Gbps\", \"latency\": \"", -1); /* nic, local, global */
        char *fat = g_strdup_printf("%s\"200Gbps\", \"latency\": \"%s\"200Gbps\", \"count\": 8, \"latency\": \"%s"
                                    "\"200Gbps\", \"count\": 8, \"latency\": \"%s",
                                    parts[0], parts[1], parts[2], parts[3]);
        char *path = write_tmp(fat);
        Topo *t = load(path, 0);
        CU_ASSERT_PTR_NOT_NULL_FATAL(t);
        CollGroup *g = group(t);
        CU_ASSERT_PTR_NOT_NULL_FATAL(g);
        CollCost c;
        CU_ASSERT_TRUE(coll_cost(g, COLL_ALLREDUCE, COLL_RING, COLL_SIMPLE, 1 << 30, &c));
        CU_ASSERT_DOUBLE_EQUAL(coll_simulate(g, COLL_ALLREDUCE, COLL_RING, COLL_SIMPLE, 1 << 30) / c.time_s, 1, 0.05);
        coll_group_free(g);
        topo_free(t);
        g_unlink(path);
        g_free(path);
        g_free(fat);
        g_strfreev(parts);
        g_free(text);
    }
}

/* Per-hop latency from the path (issue 10), as on a fat tree: local and
 * global links are fabric hops, each of which adds its own latency to a
 * flow's step.  Two ranks in different groups run a ring all-reduce (two
 * steps, both directions at once) with local and global links 0.5 us
 * slower: each step takes 0.5 us more per local or global link of the
 * longer direction's route (adaptive: a pooled route weighs as a minimal
 * path, local + global + local). */
static void test_fabric_hops(void)
{
    static const char *const routings[] = {"minimal", "valiant", "adaptive"};
    for (int v = 0; v < 3; v++) {
        double span[2];
        int hops = 0;
        for (int slow = 0; slow < 2; slow++) {
            char *text = df_lat_text(3, 2, 1, 12, routings[v], slow ? "600ns" : "100ns", slow ? "1us" : "500ns");
            char *path = write_tmp(text);
            Topo *t = load(path, 0);
            CU_ASSERT_PTR_NOT_NULL_FATAL(t);
            int ranks[2] = {0, topo_num_ranks(t) - 1}; /* node 0 in group 0, the last node in group 2 */
            GError *err = NULL;
            CollGroup *g = coll_group_new(t, ranks, 2, NULL, &err);
            CU_ASSERT_PTR_NOT_NULL_FATAL(g);
            span[slow] = coll_simulate(g, COLL_ALLREDUCE, COLL_RING, COLL_SIMPLE, 8192);
            for (int dir = 0; dir < 2 && !slow; dir++) {
                int links[CAP], n = topo_route(t, ranks[dir], ranks[1 - dir], 0, links, CAP), h = 0;
                double fabric_lat = 0;
                for (int k = 0; k < n; k++) {
                    int a = sw_group(topo_link_src_name(t, links[k])), b = sw_group(topo_link_dst_name(t, links[k]));
                    h += a >= 0 && b >= 0; /* switch to switch: local or global */
                    if (topo_link_is_fabric(t, links[k]))
                        fabric_lat += topo_link_latency(t, links[k]);
                }
                if (v == 2) { /* pooled: no physical switch-to-switch link, a minimal path's latency */
                    CU_ASSERT_EQUAL(h, 0);
                    CU_ASSERT_DOUBLE_EQUAL(fabric_lat, 100e-9 + 500e-9 + 100e-9, 1e-12);
                    h = 3;
                }
                hops = h > hops ? h : hops;
            }
            coll_group_free(g);
            topo_free(t);
            g_unlink(path);
            g_free(path);
            g_free(text);
        }
        CU_ASSERT_TRUE(hops >= 1);
        CU_ASSERT_DOUBLE_EQUAL(span[1] - span[0], 2 * hops * 0.5e-6, 2e-8);
        if (fabs(span[1] - span[0] - 2 * hops * 0.5e-6) > 2e-8)
            fprintf(stderr, "\n%s: %d hops, %.6g us more\n", routings[v], hops, (span[1] - span[0]) * 1e6);
    }
}

static void expect_error(const char *text, int line, const char *what, int nodes)
{
    char *path = write_tmp(text);
    GError *err = NULL;
    TopoOptions o = {nodes};
    Topo *t = topo_load(path, &o, &err);
    CU_ASSERT_PTR_NULL(t);
    topo_free(t);
    CU_ASSERT_PTR_NOT_NULL_FATAL(err);
    CU_ASSERT_EQUAL(err->code, SIM_ERROR_INPUT);
    char *prefix = g_strdup_printf("%s:%d: ", path, line);
    bool ok = g_str_has_prefix(err->message, prefix) && strstr(err->message, what);
    CU_ASSERT_TRUE(ok);
    if (!ok)
        fprintf(stderr, "\nwanted %s...%s, got: %s\n", prefix, what, err->message);
    g_free(prefix);
    g_error_free(err);
    g_unlink(path);
    g_free(path);
}

/* Replaces the first `from` in the small dragonfly's text. */
static void expect_edit(const char *from, const char *to, int line, const char *what, int nodes)
{
    char *text = df_text(4, 3, 2, 24, "minimal");
    char *at = strstr(text, from);
    CU_ASSERT_PTR_NOT_NULL_FATAL(at);
    char *edited = g_strdup_printf("%.*s%s%s", (int)(at - text), text, to, at + strlen(from));
    expect_error(edited, line, what, nodes);
    g_free(edited);
    g_free(text);
}

static void test_bad_input(void)
{
    expect_edit("\"routing\": \"minimal\"", "\"routing\": \"ugal\"", 4, "unknown \"routing\" \"ugal\"", 0);
    expect_edit("\"routing\": \"minimal\"", "\"fabric\": \"myrinet\"", 4, "unknown \"fabric\" \"myrinet\"", 0);
    expect_edit("\"groups\": 4", "\"groups\": 0", 12, "\"groups\" must be", 0);
    expect_edit("\"groups\": 4", "\"groupz\": 4", 12, "unknown field \"groupz\"", 0);
    expect_edit("\"switches_per_group\": 3", "\"switches_per_group\": -1", 13, "\"switches_per_group\"", 0);
    expect_edit("\"nodes_per_switch\": 2", "\"nodes_per_switch\": 1.5", 14, "\"nodes_per_switch\"", 0);
    expect_edit("\"global_links_per_switch\": 2", "\"global_links_per_switch\": 0", 15,
                "\"global_links_per_switch\"", 0);
    /* 8 groups: 3 switches x 2 ports cannot reach 7 others */
    expect_edit("\"groups\": 4", "\"groups\": 8", 15, "cannot reach the other 7 groups", 0);
    expect_edit("\"nodes\": 24", "\"nodes\": 25", 5, "the dragonfly holds 24", 0);
    expect_edit("\"nodes\": 24", "\"nodes\": 2", 1, "the dragonfly holds 24", 30);
    expect_edit(",\n \"global\": {\"bandwidth\": \"200Gbps\", \"latency\": \"500ns\"}", "", 1,
                "missing required link description \"global\"", 0);
    expect_edit("\"local\": {\"bandwidth\": \"200Gbps\",", "\"local\": {\"bandwidth\": \"0Gbps\",", 16,
                "\"bandwidth\" must be between", 0);
    expect_edit("\"nics_per_node\": 4", "\"nics_per_node\": 3", 7, "cannot share 3 NICs", 0);
    /* a node of 4096 GPUs in an NVLink mesh: 16 M links in the node alone */
    expect_edit("\"ranks_per_node\": 4", "\"ranks_per_node\": 4096", 1, "links, more than", 0);
}

static const TestCase tests[] = {
    {"link counts", test_link_counts},   {"routes", test_routes},
    {"uneven global ports", test_uneven_ports}, {"one group", test_one_group}, {"bisection", test_bisection},
    {"collective", test_collective},     {"bad input", test_bad_input},
    {"per-hop latency of local and global links", test_fabric_hops},
};

TEST_MAIN("dragonfly", tests)
