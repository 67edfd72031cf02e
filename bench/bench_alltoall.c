/* Flow-model speed on the traffic that couples the most flows: a direct
 * all-to-all (every rank sends to every other at once) on a two-level fat
 * tree with 1 rank per node, 16 nodes per leaf, 4 spines and 4:1
 * oversubscription, at 256 and 1024 ranks by default.  All n(n-1) flows share
 * one connected component, so this measures how much of it each rate change
 * recomputes.  Prints wall time, simulated time, flows, rate recomputations
 * and their work.
 * Usage: bench_alltoall [RANKS... [--bytes B]] */
#include "collective.h"

#include <glib/gstdio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *fat_tree_json =
    "{\"name\": \"bench-fat-tree-4to1\", \"family\": \"fat_tree\", \"ranks_per_node\": 1, \"intra\": \"none\",\n"
    " \"nodes\": 16, \"pcie\": {\"bandwidth\": \"31.5GB/s\", \"latency\": \"300ns\"},\n"
    " \"nic\": {\"bandwidth\": \"200Gbps\", \"latency\": \"350ns\"},\n"
    " \"nodes_per_leaf\": 16, \"spines\": 4, \"oversubscription\": 4, \"uplink\": {\"latency\": \"200ns\"}}\n";

static int run(const char *path, int ranks, double bytes)
{
    GError *err = NULL;
    TopoOptions o = {.nodes = ranks};
    Topo *t = topo_load(path, &o, &err);
    CollGroup *g = t ? coll_group_new(t, NULL, 0, NULL, &err) : NULL;
    if (!g) {
        fprintf(stderr, "bench_alltoall: %s\n", err->message);
        g_clear_error(&err);
        topo_free(t);
        return 1;
    }
    gint64 t0 = g_get_monotonic_time();
    SimEngine *e = sim_engine_new();
    SimNet *net = sim_net_new(e);
    SimGraph *graph = sim_graph_new();
    coll_net_build(g, net);
    coll_append(g, graph, COLL_ALLTOALL, COLL_DIRECT, COLL_SIMPLE, bytes, NULL, 0, NULL);
    gint64 t1 = g_get_monotonic_time();
    sim_time_t end = sim_graph_run(graph, e, net);
    gint64 t2 = g_get_monotonic_time();
    printf("direct all-to-all of %.0f B over %d ranks (fat tree, 16 nodes a leaf, 4 spines, 4:1) on the flow "
           "model:\n",
           bytes, topo_num_ranks(t));
    printf("  build %.3f s, run %.3f s, total %.3f s wall; %lld flows, %llu events, %llu rate recomputations "
           "(%llu flow rates set), %.3g links and flow hops visited%s\n",
           (t1 - t0) / 1e6, (t2 - t1) / 1e6, (t2 - t0) / 1e6,
           (long long)coll_flow_count(g, COLL_ALLTOALL, COLL_DIRECT, COLL_SIMPLE, bytes),
           (unsigned long long)sim_engine_events(e), (unsigned long long)sim_net_recomputes(net),
           (unsigned long long)sim_net_rate_updates(net),           (double)sim_net_work(net), sim_net_overrun(net) ? " (work limit reached)" : "");
    printf("  simulated time %.6f ms\n", sim_time_to_s(end) * 1e3);
    sim_graph_free(graph);
    sim_net_free(net);
    sim_engine_free(e);
    coll_group_free(g);
    topo_free(t);
    return 0;
}

int main(int argc, char **argv)
{
    double bytes = 64.0 * 1048576;
    int ranks[16], nr = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--bytes") == 0 && i + 1 < argc)
            bytes = atof(argv[++i]);
        else if (nr < 16)
            ranks[nr++] = atoi(argv[i]);
    }
    if (nr == 0) {
        ranks[nr++] = 256;
        ranks[nr++] = 1024;
    }
    char *path = NULL;
    GError *err = NULL;
    int fd = g_file_open_tmp("bench-alltoall-XXXXXX.json", &path, &err);
    if (fd < 0 || !g_file_set_contents(path, fat_tree_json, -1, &err)) {
        fprintf(stderr, "bench_alltoall: %s\n", err ? err->message : "cannot write the topology");
        return 1;
    }
    g_close(fd, NULL);
    int rc = 0;
    for (int i = 0; i < nr; i++)
        rc |= run(path, ranks[i], bytes);
    g_unlink(path);
    g_free(path);
    return rc;
}
