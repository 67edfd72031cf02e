/* Flow-model speed: a ring all-reduce on a rail-optimised fat tree of DGX A100
 * nodes, at 1024 GPUs by default.  Prints wall time, simulated time, flows and
 * rate recomputations. */
#include "collective.h"

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int nodes = argc > 1 ? atoi(argv[1]) : 128;
    double bytes = argc > 2 ? atof(argv[2]) : 1073741824.0;
    GError *err = NULL;
    TopoOptions o = {.nodes = nodes};
    Topo *t = topo_load("dgx-a100-cluster", &o, &err);
    CollGroup *g = t ? coll_group_new(t, NULL, 0, NULL, &err) : NULL;
    if (!g) {
        fprintf(stderr, "bench_collective: %s\n", err->message);
        return 1;
    }
    gint64 t0 = g_get_monotonic_time();
    SimEngine *e = sim_engine_new();
    SimNet *net = sim_net_new(e);
    SimGraph *graph = sim_graph_new();
    coll_net_build(g, net);
    coll_append(g, graph, COLL_ALLREDUCE, COLL_RING, COLL_SIMPLE, bytes, NULL, 0, NULL);
    gint64 t1 = g_get_monotonic_time();
    sim_time_t end = sim_graph_run(graph, e, net);
    gint64 t2 = g_get_monotonic_time();
    printf("ring all-reduce of %.0f B over %d GPUs (%d nodes) on the flow model:\n", bytes, topo_num_ranks(t), nodes);
    printf("  build %.3f s, run %.3f s, total %.3f s wall; %zu tasks, %llu events, %llu rate recomputations\n",
           (t1 - t0) / 1e6, (t2 - t1) / 1e6, (t2 - t0) / 1e6, sim_graph_num_tasks(graph),
           (unsigned long long)sim_engine_events(e), (unsigned long long)sim_net_recomputes(net));
    printf("  simulated time %.3f ms\n", sim_time_to_s(end) * 1e3);
    sim_graph_free(graph);
    sim_net_free(net);
    sim_engine_free(e);
    coll_group_free(g);
    topo_free(t);
    return 0;
}
