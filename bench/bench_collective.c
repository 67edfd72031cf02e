/* Flow-model speed: a ring all-reduce on a rail-optimised fat tree of DGX A100
 * nodes, at 1024 GPUs by default, and a tree all-reduce of 1 MiB on a TPU v3
 * pod (2D torus, 1024 chips by default): the tree's long routes couple most
 * of its flows, so every rate recomputation covers hundreds of them.  Prints
 * wall time, simulated time, flows, rate recomputations and their work.
 * Usage: bench_collective [DGX_NODES [BYTES [TPU_HOSTS]]] */
#include "collective.h"

#include <stdio.h>
#include <stdlib.h>

static int run(const char *preset, int nodes, CollAlgo algo, CollProto proto, double bytes)
{
    GError *err = NULL;
    TopoOptions o = {.nodes = nodes};
    Topo *t = topo_load(preset, &o, &err);
    CollGroup *g = t ? coll_group_new(t, NULL, 0, NULL, &err) : NULL;
    if (!g) {
        fprintf(stderr, "bench_collective: %s\n", err->message);
        g_clear_error(&err);
        topo_free(t);
        return 1;
    }
    gint64 t0 = g_get_monotonic_time();
    SimEngine *e = sim_engine_new();
    SimNet *net = sim_net_new(e);
    SimGraph *graph = sim_graph_new();
    coll_net_build(g, net);
    coll_append(g, graph, COLL_ALLREDUCE, algo, proto, bytes, NULL, 0, NULL);
    gint64 t1 = g_get_monotonic_time();
    sim_time_t end = sim_graph_run(graph, e, net);
    gint64 t2 = g_get_monotonic_time();
    printf("%s all-reduce of %.0f B over %d ranks (%s, %d nodes) on the flow model:\n", coll_algo_name(algo), bytes,
           topo_num_ranks(t), preset, topo_num_nodes(t));
    printf("  build %.3f s, run %.3f s, total %.3f s wall; %zu tasks (%lld flows), %llu events, %llu rate "
           "recomputations, %.3g links and flow hops visited\n",
           (t1 - t0) / 1e6, (t2 - t1) / 1e6, (t2 - t0) / 1e6, sim_graph_num_tasks(graph),
           (long long)coll_flow_count(g, COLL_ALLREDUCE, algo, proto, bytes), (unsigned long long)sim_engine_events(e),
           (unsigned long long)sim_net_recomputes(net), (double)sim_net_work(net));
    printf("  simulated time %.3f ms\n", sim_time_to_s(end) * 1e3);
    sim_graph_free(graph);
    sim_net_free(net);
    sim_engine_free(e);
    coll_group_free(g);
    topo_free(t);
    return 0;
}

int main(int argc, char **argv)
{
    int nodes = argc > 1 ? atoi(argv[1]) : 128;
    double bytes = argc > 2 ? atof(argv[2]) : 1073741824.0;
    int hosts = argc > 3 ? atoi(argv[3]) : 256;
    int rc = run("dgx-a100-cluster", nodes, COLL_RING, COLL_SIMPLE, bytes);
    if (hosts > 0)
        rc |= run("tpu-v3-pod", hosts, COLL_TREE, COLL_LL, 1048576.0);
    return rc;
}
