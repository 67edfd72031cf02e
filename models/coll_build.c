/* What every decomposition into flows shares: a flow between two ranks on
 * the topology's route, barriers, a pipelined ring or chain, and the load a
 * traffic pattern puts on the busiest link (a bound on any schedule of it). */
#include "coll_internal.h"

/* A flow task from group index src to dst.  `delay` is the step's latency
 * as the cost model counts it (NCCL's per-step constant, which holds an
 * endpoint-to-switch path); the path's switch-to-switch hops add theirs. */
int coll_add_flow(CollBuilder *b, int src, int dst, double bytes, sim_time_t delay, uint32_t salt)
{
    const Topo *t = b->g->t;
    int *links = b->links;
    int len = topo_route(t, b->g->ranks[src], b->g->ranks[dst], salt, links, coll_route_cap(b->g));
    /* cannot fail: the group's ranks are in the topology, every explicit graph
     * was proved connected at load, and the buffer holds the longest route */
    if (len < 0)
        g_error("collective: no route from rank %d to rank %d", b->g->ranks[src], b->g->ranks[dst]);
    int id = sim_graph_flow_task(b->graph, b->label, SIM_NO_RESOURCE, bytes, links, len);
    if (b->record) {
        CollFlowRec r = {src, dst, bytes, salt};
        g_array_append_val(b->record, r);
    }
    sim_graph_task_set_info(b->graph, id, "comm", bytes);
    /* NCCL's per-step latency stands for an endpoint-to-switch path; every
     * switch-to-switch hop of this one (a fat tree's spine, slower or not)
     * adds its own latency.  The network adds the path's wire at delivery. */
    double wire = 0, fabric = 0;
    for (int k = 0; k < len; k++) {
        double l = topo_link_latency(t, links[k]);
        wire += l;
        if (topo_link_is_fabric(t, links[k]))
            fabric += l;
    }
    sim_time_t w = sim_time_from_s(wire), total = sim_time_add(delay, sim_time_from_s(fabric));
    if (total > w)
        sim_graph_task_set_delay(b->graph, id, total - w);
    return id;
}

int coll_barrier(CollBuilder *b)
{
    return sim_graph_task(b->graph, b->label, SIM_NO_RESOURCE, 0);
}

void coll_rounds_init(CollRounds *r, const CollBuilder *b, int n)
{
    r->n = n;
    r->last = g_new(int, n);
    r->next = g_new(int, n);
    for (int i = 0; i < n; i++)
        r->last[i] = b->start;
}

void coll_rounds_next(CollRounds *r)
{
    int *t = r->last;
    r->last = r->next;
    r->next = t;
}

void coll_rounds_end(CollRounds *r, CollBuilder *b)
{
    g_array_append_vals(b->ends, r->last, (guint)r->n);
    g_free(r->last);
    g_free(r->next);
}

/* A ring (cyclic) or chain over `order` (group indices): each hop carries
 * `hop_bytes` in `nseg` pipelined segments.  Segment s of hop i waits for
 * segment s-1 of the same hop (the sender is busy) and for the data from the
 * previous hop: segment s-1 on a ring (one step behind), segment s on a chain
 * (forwarded as it arrives).  The ring's per-step latencies are spread over its
 * segments; a chain pays each hop's latency once.  Returns a barrier task. */
int coll_append_ring(CollBuilder *b, const int *order, int len, bool cyclic, double hop_bytes, double lat_total,
                     int nseg, int dep, uint32_t salt)
{
    int end = coll_barrier(b);
    int hops = cyclic ? len : len - 1;
    if (hops <= 0 || len < 2) {
        sim_graph_depend(b->graph, dep, end);
        return end;
    }
    int *prev = g_new(int, hops), *cur = g_new(int, hops);
    double seg = hop_bytes / nseg;
    for (int s = 0; s < nseg; s++) {
        for (int i = 0; i < hops; i++) {
            sim_time_t delay = cyclic ? sim_time_from_s(lat_total / nseg) : s == 0 ? sim_time_from_s(lat_total / hops) : 0;
            int f = coll_add_flow(b, order[i], order[(i + 1) % len], seg, delay, salt);
            if (s == 0)
                sim_graph_depend(b->graph, dep, f);
            else
                sim_graph_depend(b->graph, prev[i], f);
            if (cyclic && s > 0)
                sim_graph_depend(b->graph, prev[(i + hops - 1) % hops], f);
            if (!cyclic && i > 0)
                sim_graph_depend(b->graph, cur[i - 1], f);
            cur[i] = f;
        }
        int *t = prev;
        prev = cur;
        cur = t;
    }
    for (int i = 0; i < hops; i++)
        sim_graph_depend(b->graph, prev[i], end);
    g_free(prev);
    g_free(cur);
    return end;
}

/* The pattern's routes (every pair, or partners at distance `dist`)
 * between `ranks`, a count on each link they cross: every link, or the
 * fabric's switch-to-switch links only. */
static void pattern_load(const CollGroup *g, const int *ranks, int dist, bool fabric_only, double *load, int *links)
{
    for (int i = 0; i < g->n; i++)
        for (int j = 0; j < g->n; j++) {
            if (i == j || (dist > 0 && j != (i ^ dist)))
                continue;
            int len = topo_route(g->t, ranks[i], ranks[j], (uint32_t)(i + j), links, coll_route_cap(g));
            for (int k = 0; k < len; k++)
                if (!fabric_only || topo_link_is_fabric(g->t, links[k]))
                    load[links[k]] += 1;
        }
}

/* The busiest link's seconds per unit of load. */
static double busiest_spb(const CollGroup *g, const double *load, int nl)
{
    double spb = 0;
    for (int l = 0; l < nl; l++)
        spb = fmax(spb, load[l] / coll_link_cap(g, l));
    return spb;
}

/* The most loaded link's seconds per byte when every listed pair sends one
 * byte at once: a bound the topology puts on any schedule of that pattern. */
double coll_pattern_spb(const CollGroup *g, int dist, double *alone)
{
    int n = g->n, nl = topo_num_links(g->t);
    double *load = g_new0(double, nl);
    int *links = g_new(int, coll_route_cap(g));
    pattern_load(g, g->ranks, dist, false, load, links);
    if (alone)
        *alone = busiest_spb(g, load, nl);
    /* with the fabric on, the siblings' patterns load its links too (as
     * coll_fabric.c's factor counts them), as many as its flow budget holds */
    int64_t pairs = dist > 0 ? n : (int64_t)n * (n - 1);
    for (int k = 0; g->fabric && k < g->nsib && (k + 2) * pairs <= COLL_MAX_FLOWS; k++)
        pattern_load(g, g->sib_ids + (size_t)k * n, dist, true, load, links);
    double spb = busiest_spb(g, load, nl);
    g_free(links);
    g_free(load);
    return spb;
}
