/* NVLink SHARP ("nvls"): all-reduce inside one node whose NVSwitch
 * reduces; closed form and flows. */
#include "coll_internal.h"

/* NVLink SHARP: each GPU sends its data into the switch once and gets the
 * reduced result back once; NVIDIA quotes the sustained rate as a bus
 * bandwidth, which the data file turns into a fraction of the link rate. */
static bool cost_nvls(const CollGroup *g, CollOp op, CollProto p, double bytes, CollCost *c)
{
    if (op != COLL_ALLREDUCE || !g->nvls || p != COLL_SIMPLE)
        return false;
    c->latency_s = g->p.nvls_latency;
    c->algbw_Bps = g->gpu_link * g->p.nvls_fraction;
    return true;
}

/* NVLS: every rank pushes its data into the switch and pulls the result;
 * as flows, each rank sends to every other its share, sized so that a rank's
 * link carries what the switch protocol moves at the quoted rate. */
static void build_nvls(CollBuilder *b, CollOp op, CollProto p, double bytes)
{
    const CollGroup *g = b->g;
    int n = g->n;
    int len = topo_route(g->t, g->ranks[0], g->ranks[1], 0, b->links, coll_route_cap(g));
    double cap = len > 0 ? coll_link_cap(g, b->links[0]) : g->gpu_link;
    double per_rank = bytes * cap / (g->gpu_link * g->p.nvls_fraction);
    sim_time_t lat = sim_time_from_s(g->p.nvls_latency);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            if (i == j)
                continue;
            int f = coll_add_flow(b, i, j, per_rank / (n - 1), lat, (uint32_t)(i + j));
            sim_graph_depend(b->graph, b->start, f);
            g_array_append_val(b->ends, f);
        }
}

/* As build_nvls: every ordered pair once. */
static int64_t count_nvls(const CollGroup *g, CollOp op, CollProto p, double bytes)
{
    int64_t n = g->n;
    return n * (n - 1);
}

static const char *why_not_nvls(const CollGroup *g, CollOp op, CollProto p)
{
    return "nvls needs one node whose NVSwitch reduces (\"nvlink_sharp\" in the topology), all-reduce only, "
           "Simple protocol";
}

const CollAlgoDesc coll_nvls_algo = {COLL_NVLS, "nvls", NULL, true, cost_nvls, build_nvls, count_nvls, why_not_nvls};
