/* One collective on the flow model, timed: the part that bench_collective and
 * bench_alltoall share (each is its own program, so this is a header).  Prints
 * a title line, then the wall times, flows, events, rate recomputations and
 * work, then the simulated time; returns 0, or 1 when the topology or group
 * cannot be built. */
#ifndef BENCH_FLOWS_H
#define BENCH_FLOWS_H

#include "collective.h"

#include <stdio.h>
#include <time.h>

/* Process CPU seconds (user and system): on a shared machine the wall time
 * also counts other programs' turns on the core, this does not. */
static double bench_cpu_s(void)
{
    struct timespec ts;
    return clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) == 0 ? (double)ts.tv_sec + ts.tv_nsec / 1e9 : 0;
}

static int bench_flows(const char *prog, const char *topo, int nodes, CollOp op, CollAlgo algo, CollProto proto,
                       double bytes, const char *where)
{
    GError *err = NULL;
    TopoOptions o = {.nodes = nodes};
    Topo *t = topo_load(topo, &o, &err);
    CollGroup *g = t ? coll_group_new(t, NULL, 0, NULL, &err) : NULL;
    if (!g) {
        fprintf(stderr, "%s: %s\n", prog, err->message);
        g_clear_error(&err);
        topo_free(t);
        return 1;
    }
    gint64 t0 = g_get_monotonic_time();
    double c0 = bench_cpu_s();
    SimEngine *e = sim_engine_new();
    SimNet *net = sim_net_new(e);
    SimGraph *graph = sim_graph_new();
    coll_net_build(g, net);
    coll_append(g, graph, op, algo, proto, bytes, NULL, 0, NULL);
    gint64 t1 = g_get_monotonic_time();
    sim_time_t end = sim_graph_run(graph, e, net);
    gint64 t2 = g_get_monotonic_time();
    double c2 = bench_cpu_s();
    printf("%s %s of %.0f B over %d ranks (%s, %d nodes) on the flow model:\n", coll_algo_name(algo),
           coll_op_name(op), bytes, topo_num_ranks(t), where, topo_num_nodes(t));
    printf("  build %.3f s, run %.3f s, total %.3f s wall (%.3f s CPU); %zu tasks (%lld flows), %llu events, %llu rate "
           "recomputations (%llu flow rates set), %.3g links and flow hops visited%s\n",
           (t1 - t0) / 1e6, (t2 - t1) / 1e6, (t2 - t0) / 1e6, c2 - c0, sim_graph_num_tasks(graph),
           (long long)coll_flow_count(g, op, algo, proto, bytes), (unsigned long long)sim_engine_events(e),
           (unsigned long long)sim_net_recomputes(net), (unsigned long long)sim_net_rate_updates(net),
           (double)sim_net_work(net), sim_net_overrun(net) ? " (work limit reached)" : "");
    printf("  simulated time %.6f ms\n", sim_time_to_s(end) * 1e3);
    sim_graph_free(graph);
    sim_net_free(net);
    sim_engine_free(e);
    coll_group_free(g);
    topo_free(t);
    return 0;
}

#endif
