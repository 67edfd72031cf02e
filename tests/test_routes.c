/* Collectives over long routes (chains of endpoints, large tori): their flow
 * decompositions build and run, and coll_flow_count says how many flows a
 * decomposition makes before anyone builds it. */
#include "collective.h"
#include "test_load.h"
#include "test_main.h"

#include <glib/gstdio.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* Flow tasks in a graph (coll_append labels them "comm"). */
static int count_flows(const SimGraph *graph)
{
    int n = 0;
    for (size_t i = 0; i < sim_graph_num_tasks(graph); i++) {
        const char *c = sim_graph_task_category(graph, (int)i);
        n += c && strcmp(c, "comm") == 0;
    }
    return n;
}

/* A chain of `n` endpoints, one per node: routes up to n-1 links long. */
static char *write_chain(int n)
{
    GString *s = g_string_new("{\"name\": \"chain\", \"ranks_per_node\": 1, \"endpoints\": [");
    for (int i = 0; i < n; i++)
        g_string_append_printf(s, "%s\"e%d\"", i ? ", " : "", i);
    g_string_append(s, "], \"links\": [");
    for (int i = 0; i + 1 < n; i++)
        g_string_append_printf(s,
                               "%s{\"src\": \"e%d\", \"dst\": \"e%d\", \"bandwidth\": \"25GB/s\", \"latency\": \"1us\", "
                               "\"kind\": \"nvlink\"}",
                               i ? ", " : "", i, i + 1);
    g_string_append(s, "]}");
    char *dir = g_dir_make_tmp("test_routes_XXXXXX", NULL);
    char *path = g_build_filename(dir, "chain.json", NULL);
    g_file_set_contents(path, s->str, -1, NULL);
    g_string_free(s, TRUE);
    g_free(dir);
    return path;
}

static void remove_chain(char *path)
{
    char *dir = g_path_get_dirname(path);
    g_remove(path);
    g_rmdir(dir);
    g_free(dir);
    g_free(path);
}

/* Every algorithm and op on a 200-endpoint chain runs on the flow network to
 * a finite time no shorter than the closed form's bandwidth term allows. */
static void test_chain_of_200(void)
{
    char *path = write_chain(200);
    Topo *t = load(path, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_EQUAL(topo_max_route_length(t), 199);
    CollGroup *g = group(t);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    CollAlgo algos[] = {COLL_RING, COLL_TREE};
    for (size_t a = 0; a < G_N_ELEMENTS(algos); a++) {
        CollCost c;
        CU_ASSERT_TRUE_FATAL(coll_cost(g, COLL_ALLREDUCE, algos[a], COLL_PROTO_AUTO, 1 << 20, &c));
        double ft = coll_simulate(g, COLL_ALLREDUCE, c.algo, c.proto, 1 << 20);
        CU_ASSERT_TRUE(isfinite(ft) && ft > 0 && ft < 1.0);
        /* a 25 GB/s chain cannot all-reduce 1 MiB faster than 2 (n-1)/n of it over one link */
        CU_ASSERT_TRUE(ft > 2.0 * 199 / 200 * (1 << 20) / 25e9);
    }
    coll_group_free(g);
    topo_free(t);
    remove_chain(path);
}

/* The tree over a 2048-host TPU v3 pod crosses routes of up to 96 links (the
 * decomposition aborted on them); build it without running it. */
static void test_tpu_pod_tree_builds(void)
{
    Topo *t = load("tpu-v3-pod", 2048);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CollGroup *g = group(t);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    SimGraph *graph = sim_graph_new();
    coll_append(g, graph, COLL_ALLREDUCE, COLL_TREE, COLL_LL, 1 << 20, NULL, 0, NULL);
    int flows = count_flows(graph);
    CU_ASSERT_EQUAL(flows, coll_flow_count(g, COLL_ALLREDUCE, COLL_TREE, COLL_LL, 1 << 20));
    CU_ASSERT_TRUE(flows > 8192);
    sim_graph_free(graph);
    coll_group_free(g);
    topo_free(t);
}

/* coll_flow_count is exact for every algorithm and op the group can run. */
static void test_flow_count(void)
{
    static const struct {
        const char *topo;
        int nodes;
    } cases[] = {{"dgx-a100", 0}, {"dgx-h100", 0}, {"dgx-a100-cluster", 4}, {"abci-a100", 0}, {"ring8", 0},
                 {"tpu-v3-pod", 16}, {"pcie-8gpu", 0}};
    double sizes[] = {1024, 64 << 20};
    int checked = 0;
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        Topo *t = load(cases[i].topo, cases[i].nodes);
        CU_ASSERT_PTR_NOT_NULL_FATAL(t);
        CollGroup *g = group(t);
        CU_ASSERT_PTR_NOT_NULL_FATAL(g);
        for (int op = 0; op < COLL_NUM_OPS; op++)
            for (int a = 0; a < COLL_NUM_ALGOS; a++)
                for (size_t k = 0; k < G_N_ELEMENTS(sizes); k++) {
                    CollCost c;
                    if (!coll_cost(g, (CollOp)op, (CollAlgo)a, COLL_PROTO_AUTO, sizes[k], &c))
                        continue;
                    SimGraph *graph = sim_graph_new();
                    coll_append(g, graph, (CollOp)op, c.algo, c.proto, sizes[k], NULL, 0, NULL);
                    int64_t want = coll_flow_count(g, (CollOp)op, c.algo, c.proto, sizes[k]);
                    int got = count_flows(graph);
                    if (got != want)
                        fprintf(stderr, "\n%s %s %s: %d flows, counted %lld\n", cases[i].topo,
                                coll_op_name((CollOp)op), coll_algo_name(c.algo), got, (long long)want);
                    CU_ASSERT_EQUAL(got, want);
                    checked++;
                    sim_graph_free(graph);
                }
        coll_group_free(g);
        topo_free(t);
    }
    CU_ASSERT_TRUE(checked > 50);
}

/* Past its work limit the network stops: the graph's run reports unfinished
 * tasks instead of running on, and the same graph finishes under the default. */
static void test_work_limit(void)
{
    Topo *t = load("tpu-v3-pod", 16);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CollGroup *g = group(t);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    uint64_t limits[] = {1000, SIM_NET_DEFAULT_WORK_LIMIT};
    uint64_t used = 0;
    for (size_t i = 0; i < G_N_ELEMENTS(limits); i++) {
        SimEngine *e = sim_engine_new();
        SimNet *net = sim_net_new(e);
        SimGraph *graph = sim_graph_new();
        coll_net_build(g, net);
        sim_net_set_work_limit(net, limits[i]);
        coll_append(g, graph, COLL_ALLREDUCE, COLL_TREE, COLL_LL, 1 << 20, NULL, 0, NULL);
        sim_time_t end = sim_graph_run(graph, e, net);
        if (i == 0) {
            CU_ASSERT_TRUE(sim_net_overrun(net));
            CU_ASSERT_EQUAL(end, SIM_TIME_NEVER);
        } else {
            CU_ASSERT_FALSE(sim_net_overrun(net));
            CU_ASSERT_TRUE(end > 0 && end != SIM_TIME_NEVER);
            used = sim_net_work(net);
        }
        sim_graph_free(graph);
        sim_net_free(net);
        sim_engine_free(e);
    }
    CU_ASSERT_TRUE(used > 1000); /* the small limit did cut the run short */
    CU_ASSERT_TRUE(isfinite(coll_simulate(g, COLL_ALLREDUCE, COLL_TREE, COLL_LL, 1 << 20)));
    coll_group_free(g);
    topo_free(t);
}

static const TestCase tests[] = {
    {"work limit", test_work_limit},
    {"a chain of 200 endpoints", test_chain_of_200},
    {"a 2048-host TPU pod's tree builds", test_tpu_pod_tree_builds},
    {"flow count", test_flow_count},
};

TEST_MAIN("routes", tests)
