/* PAT, NCCL's "parallel aggregated trees" (NCCL 2.23+): reduce-scatter and
 * all-gather in log2(n) rounds at distances doubling (all-gather) or halving
 * (reduce-scatter), for one rank per node, where a ring's n - 1 network steps
 * dominate small and medium messages.  Closed form and flows. */
#include "coll_internal.h"

static int ilog2_floor(int n)
{
    int k = 0;
    while (n >>= 1)
        k++;
    return k;
}

/* Only where NCCL enables it by default (tuning.cc, ncclPatEnable): one rank
 * per node, the version that has it; Simple protocol. */
static bool pat_runs(const CollGroup *g, CollOp op, CollProto p)
{
    return (op == COLL_REDUCESCATTER || op == COLL_ALLGATHER) && p == COLL_SIMPLE && g->ppn == 1 &&
           g->nnodes > 1 && coll_version_has(g, g->p.ver_pat);
}

/* NCCL's tuner: latency 8 us + log2(nodes) x the network step / 3.5 + 2.8 us
 * per rank (the network step with one rank per node is the tree's); bus
 * bandwidth 0.75 of the channels', rated as algorithm bandwidth without the
 * ring's n / (n - 1).  The bytes that cross are a ring's, (n - 1) / n of the
 * message per rank: the time counts those, the choice NCCL's rating. */
static bool cost_pat(const CollGroup *g, CollOp op, CollProto p, double bytes, CollCost *c)
{
    if (!pat_runs(g, op, p))
        return false;
    int n = g->n;
    c->latency_s = g->p.pat_base + ilog2_floor(g->nnodes) * g->p.step[HW_NET][1][p] / g->p.pat_log_div +
                   n * g->p.pat_per_rank;
    double bus = g->inter_bw * g->p.pat_bw;
    c->algbw_Bps = bus * n / (n - 1);
    c->tuner_algbw_Bps = bus;
    return true;
}

static int pat_rounds(const CollGroup *g) { return coll_ilog2_ceil(g->n); }

/* Round k (in the order run) at distance d: rank i sends min(d, n - d) shares
 * of bytes / n to i - d (all-gather, d = 1, 2, 4, ...; reduce-scatter the
 * rounds reversed), after its own previous send and the one it received. */
static void build_pat(CollBuilder *b, CollOp op, CollProto p, double bytes)
{
    const CollGroup *g = b->g;
    int n = g->n, rounds = pat_rounds(g);
    CollCost c;
    if (!cost_pat(g, op, p, bytes, &c))
        c = (CollCost){.latency_s = g->p.pat_base};
    sim_time_t lat = sim_time_from_s(c.latency_s / (rounds > 0 ? rounds : 1));
    CollRounds rd;
    coll_rounds_init(&rd, b, n);
    int prev_d = 0;
    for (int k = 0; k < rounds; k++) {
        int r = op == COLL_REDUCESCATTER ? rounds - 1 - k : k, d = 1 << r;
        double share = (d < n - d ? d : n - d) * bytes / n / g->p.pat_bw;
        for (int i = 0; i < n; i++) {
            int to = ((i - d) % n + n) % n;
            rd.next[i] = coll_add_flow(b, i, to, share, lat, (uint32_t)k);
            sim_graph_depend(b->graph, rd.last[i], rd.next[i]);
            if (prev_d) /* what i received last round came from i + prev_d */
                sim_graph_depend(b->graph, rd.last[(i + prev_d) % n], rd.next[i]);
        }
        prev_d = d;
        coll_rounds_next(&rd);
    }
    coll_rounds_end(&rd, b);
}

static int64_t count_pat(const CollGroup *g, CollOp op, CollProto p, double bytes)
{
    return (int64_t)g->n * pat_rounds(g);
}

static const char *why_not_pat(const CollGroup *g, CollOp op, CollProto p)
{
    if (g->ppn == 1 && g->nnodes > 1 && !coll_version_has(g, g->p.ver_pat))
        return "pat came with NCCL 2.23";
    return "pat runs reduce-scatter and all-gather with one rank per node (NCCL's default), Simple protocol";
}

const CollAlgoDesc coll_pat_algo = {COLL_PAT, "pat", NULL, true, cost_pat, build_pat, count_pat, why_not_pat};
