/* Recursive halving-doubling: log2(n) rounds of pairwise exchange, its
 * closed form (bounded by the topology's load of each round's pattern) and
 * its flows. */
#include "coll_internal.h"

/* Round r's pattern bound, cached in the group: a group is used by one
 * thread.  *alone: without the siblings' patterns. */
static double rhd_spb(const CollGroup *g, int r, double *alone)
{
    CollGroup *m = (CollGroup *)g;
    if (r < 32 && m->rhd_spb[r] == 0 && g->n <= COLL_PATTERN_MAX_RANKS)
        m->rhd_spb[r] = coll_pattern_spb(g, g->n >> (r + 1), &m->rhd_spb_alone[r]);
    *alone = r < 32 ? m->rhd_spb_alone[r] : 0;
    return r < 32 ? m->rhd_spb[r] : 0;
}

/* Recursive halving-doubling: log2(n) rounds of pairwise exchange at halving
 * sizes; a round whose partner is on another node runs on the NICs. */
static bool cost_rhd(const CollGroup *g, CollOp op, CollProto p, double bytes, CollCost *c)
{
    int n = g->n;
    if ((n & (n - 1)) != 0 || !(op == COLL_ALLREDUCE || op == COLL_REDUCESCATTER || op == COLL_ALLGATHER))
        return false;
    int rounds = coll_ilog2_ceil(n);
    double per_rank_intra = g->ppn > 1 ? g->intra_bw : INFINITY;
    double per_rank_inter = g->nnodes > 1 ? g->inter_bw / g->ppn : INFINITY;
    double t = 0, t_alone = 0, lat = g->p.base[COLL_RHD][p];
    int phases = op == COLL_ALLREDUCE ? 2 : 1;
    for (int r = 0; r < rounds; r++) {
        int dist = n >> (r + 1); /* halving: far partners first */
        bool inter = dist >= g->ppn && g->nnodes > 1;
        double bw = (inter ? per_rank_inter : per_rank_intra) * g->p.proto_bw[KIND_RING][p];
        double chunk = bytes / (double)(2 << r), eff = g->p.proto_bw[KIND_RING][p], alone, spb = rhd_spb(g, r, &alone);
        t += phases * fmax(chunk / bw, chunk * spb / eff);
        t_alone += phases * fmax(chunk / bw, chunk * alone / eff);
        lat += phases * (inter ? g->p.step[HW_NET][0][p] : coll_intra_step_lat(g, 0, p));
    }
    c->fabric_factor = coll_pattern_factor(g, t, t_alone);
    c->latency_s = lat;
    c->algbw_Bps = t > 0 ? bytes / t : INFINITY;
    return true;
}

/* Recursive halving (reduce-scatter) then doubling (all-gather). */
static void build_rhd(CollBuilder *b, CollOp op, CollProto p, double bytes)
{
    const CollGroup *g = b->g;
    int n = g->n, rounds = coll_ilog2_ceil(n);
    double eff = g->p.proto_bw[KIND_RING][p];
    CollRounds rd;
    coll_rounds_init(&rd, b, n);
    /* rounds by index r: partner at distance n/2^(r+1), a 1/2^(r+1) share;
     * the reduce-scatter runs r = 0, 1, ..., the all-gather back down */
    int order[128], nd = 0;
    if (op != COLL_ALLGATHER)
        for (int r = 0; r < rounds; r++)
            order[nd++] = r;
    if (op != COLL_REDUCESCATTER)
        for (int r = rounds - 1; r >= 0; r--)
            order[nd++] = r;
    for (int k = 0; k < nd; k++) {
        int r = order[k], dist = n >> (r + 1);
        double chunk = bytes / (double)(2 << r) / eff;
        for (int i = 0; i < n; i++) {
            int j = i ^ dist;
            bool net = topo_node_of(g->t, g->ranks[i]) != topo_node_of(g->t, g->ranks[j]);
            double lat = net ? g->p.step[HW_NET][0][p] : coll_intra_step_lat(g, 0, p);
            rd.next[i] = coll_add_flow(b, i, j, chunk, sim_time_from_s(lat), (uint32_t)k);
            sim_graph_depend(b->graph, rd.last[i], rd.next[i]);
            sim_graph_depend(b->graph, rd.last[j], rd.next[i]);
        }
        coll_rounds_next(&rd);
    }
    coll_rounds_end(&rd, b);
}

/* As build_rhd: every rank once per round, the rounds twice for all-reduce. */
static int64_t count_rhd(const CollGroup *g, CollOp op, CollProto p, double bytes)
{
    int64_t n = g->n, rounds = coll_ilog2_ceil(g->n);
    return n * rounds * (op == COLL_ALLREDUCE ? 2 : 1);
}

static const char *why_not_rhd(const CollGroup *g, CollOp op, CollProto p)
{
    return (g->n & (g->n - 1)) ? "recursive halving-doubling needs a power-of-two number of ranks"
                               : "recursive halving-doubling runs all-reduce, reduce-scatter and all-gather only";
}

const CollAlgoDesc coll_rhd_algo = {COLL_RHD, "rhd", NULL, false, cost_rhd, build_rhd, count_rhd, why_not_rhd};
