/* Direct: every rank sends its share to every other at once (all-to-all,
 * and all-reduce as a reduce-scatter then an all-gather); closed form and
 * flows. */
#include "coll_internal.h"

/* Cached in the group: a group is used by one thread.  *alone: without
 * the siblings' patterns. */
static double direct_spb(const CollGroup *g, double *alone)
{
    CollGroup *m = (CollGroup *)g;
    if (m->direct_spb == 0 && g->n <= COLL_PATTERN_MAX_RANKS)
        m->direct_spb = coll_pattern_spb(g, 0, &m->direct_spb_alone);
    *alone = m->direct_spb_alone;
    return m->direct_spb;
}

/* Every rank sends its share to every other at once. */
static bool cost_direct(const CollGroup *g, CollOp op, CollProto p, double bytes, CollCost *c)
{
    if (op == COLL_BROADCAST || op == COLL_REDUCE)
        return false;
    int n = g->n;
    double remote = g->nnodes > 1 ? (double)(n - g->ppn) / n : 0;
    double local = (double)(g->ppn - 1) / n;
    double per_rank_inter = g->nnodes > 1 ? g->inter_bw / g->ppn : INFINITY;
    double per_rank_intra = g->ppn > 1 ? g->intra_bw : INFINITY;
    double alone, spb = direct_spb(g, &alone), nics = fmax(remote / per_rank_inter, local / per_rank_intra);
    double t = fmax(nics, spb / n) / g->p.proto_bw[KIND_RING][p];
    c->fabric_factor = coll_pattern_factor(g, fmax(nics, spb / n), fmax(nics, alone / n));
    int phases = op == COLL_ALLREDUCE ? 2 : 1;
    double step = g->nnodes > 1 ? g->p.step[HW_NET][0][p] : coll_intra_step_lat(g, 0, p);
    c->latency_s = g->p.base[COLL_DIRECT][p] + phases * step;
    c->algbw_Bps = 1.0 / (phases * t);
    return true;
}

/* Everyone sends its share to everyone at once (twice for all-reduce: a
 * reduce-scatter, then an all-gather of the reduced shards). */
static void build_direct(CollBuilder *b, CollOp op, CollProto p, double bytes)
{
    const CollGroup *g = b->g;
    int n = g->n;
    double eff = g->p.proto_bw[KIND_RING][p];
    double step = g->nnodes > 1 ? g->p.step[HW_NET][0][p] : coll_intra_step_lat(g, 0, p);
    int phases = op == COLL_ALLREDUCE ? 2 : 1;
    int *gate = g_new(int, n);
    for (int i = 0; i < n; i++)
        gate[i] = b->start;
    for (int ph = 0; ph < phases; ph++) {
        int *arrived = g_new(int, n);
        for (int i = 0; i < n; i++)
            arrived[i] = coll_barrier(b);
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++) {
                if (i == j)
                    continue;
                int f = coll_add_flow(b, i, j, bytes / n / eff, sim_time_from_s(step), (uint32_t)(i + j));
                sim_graph_depend(b->graph, gate[i], f);
                sim_graph_depend(b->graph, f, arrived[j]);
            }
        for (int i = 0; i < n; i++) {
            gate[i] = arrived[i];
            if (ph == phases - 1)
                g_array_append_val(b->ends, arrived[i]);
        }
        g_free(arrived);
    }
    g_free(gate);
}

/* As build_direct: every ordered pair, twice for all-reduce. */
static int64_t count_direct(const CollGroup *g, CollOp op, CollProto p, double bytes)
{
    int64_t n = g->n;
    return (op == COLL_ALLREDUCE ? 2 : 1) * n * (n - 1);
}

static const char *why_not_direct(const CollGroup *g, CollOp op, CollProto p)
{
    return "direct runs all-reduce, reduce-scatter, all-gather and all-to-all only";
}

const CollAlgoDesc coll_direct_algo = {COLL_DIRECT, "direct", NULL, false, cost_direct, build_direct, count_direct,
                                       why_not_direct};
