/* Hierarchical collectives: reduce-scatter inside nodes, all-reduce across
 * nodes per local index, all-gather inside nodes; across nodes either a ring
 * ("hier") or one trip through a switch that reduces (SHARP/CollNet,
 * "collnet").  Closed form and flows for both. */
#include "coll_internal.h"

/* SHARP operations of one CollNet call that wait for the one before them.
 * NCCL's CollNet keeps every one of its channels, half the ring's (one per
 * NIC: one up, one down; 2.8 init.cc and enqueue.cc), nthreads halved from
 * 512 while the message is under channels x nthreads x the protocol's
 * thread threshold (8 bytes LL, 64 Simple), and cuts the message into whole
 * minimum chunks of nthreads x 8 bytes (LL) or x 64 (Simple) per channel
 * (the all-reduce kernel); each channel with a chunk posts its own SHARP
 * operation, and a job whose SHARP quota holds fewer group channels runs
 * them in turn. */
static int collnet_serial_ops(const CollGroup *g, CollProto p, double bytes)
{
    int lim = g->p.sharp_group_channels, nc = g->nics / 2 > 1 ? g->nics / 2 : 1;
    if (lim <= 0 || nc <= lim)
        return 0;
    double per_thread = p == COLL_LL ? 8 : 64;
    int nt = 512;
    while (bytes < nc * nt * per_thread && nt % 128 == 0)
        nt /= 2;
    double min_chunk = nt * per_thread, chunk = ceil(bytes / (nc * min_chunk)) * min_chunk;
    int active = (int)fmin(nc, ceil(bytes / chunk));
    return active > lim ? (active - 1) / lim : 0;
}

/* Reduce-scatter inside nodes, all-reduce across nodes among ranks of equal
 * local index (each on its own NIC), all-gather inside nodes. */
static bool cost_hier(const CollGroup *g, CollOp op, CollProto p, double bytes, CollCost *c, bool in_network)
{
    bool ar = op == COLL_ALLREDUCE;
    if (!(ar || (!in_network && (op == COLL_REDUCESCATTER || op == COLL_ALLGATHER))) || g->nnodes < 2 || g->ppn < 2)
        return false;
    /* CollNet's LL ran only before NCCL 2.9 ("Oneshot CollNet only supports Simple") */
    if (in_network && (!g->in_network || p == COLL_LL128 ||
                       (p == COLL_LL && (g->library == COLL_LIB_RCCL || coll_version_has(g, g->p.ver_collnet_simple_only)))))
        return false;
    int kind = in_network ? KIND_COLLNET : KIND_RING;
    double k = ar ? 2 : 1; /* an all-reduce is a reduce-scatter and an all-gather */
    double eff = g->p.proto_bw[kind][p];
    double intra = k * (g->ppn - 1) / g->ppn / (g->intra_bw * eff);
    double shard_rank_bw = g->inter_bw / g->ppn * eff;
    /* in-network reduction sends each byte up once and receives it once;
     * a ring across nodes sends (N-1)/N of it per phase */
    double inter = (in_network ? 1.0 : k * (g->nnodes - 1) / g->nnodes) / g->ppn / shard_rank_bw;
    double netlat = in_network ? g->p.step[HW_NET][1][p] : k * (g->nnodes - 1) * g->p.step[HW_NET][0][p];
    c->latency_s = g->p.base[in_network ? COLL_COLLNET : COLL_HIER][p] +
                   k * (g->ppn - 1) * coll_intra_step_lat(g, in_network ? 1 : 0, p) + netlat;
    int waits = in_network ? collnet_serial_ops(g, p, bytes) : 0;
    if (waits > 0) { /* NCCL's tuner knows nothing of SHARP's queue */
        c->tuner_latency_s = c->latency_s;
        c->latency_s += waits * netlat;
    }
    c->algbw_Bps = 1.0 / (intra + inter);
    return true;
}

/* Reduce-scatter in every node, all-reduce across nodes per local index (or
 * one trip through the switch with in-network reduction), all-gather. */
static void build_hier(CollBuilder *b, CollOp op, CollProto p, double bytes, bool in_network)
{
    const CollGroup *g = b->g;
    int ppn = g->ppn, nn = g->nnodes;
    bool rs = op != COLL_ALLGATHER, ag = op != COLL_REDUCESCATTER;
    int kind = in_network ? KIND_COLLNET : KIND_RING;
    double eff = g->p.proto_bw[kind][p];
    double lat_intra = (ppn - 1) * coll_intra_step_lat(g, 0, p);
    int intra_seg = ppn - 1 < 8 ? ppn - 1 : 8;
    int *order = g_new(int, ppn > nn ? ppn : nn);
    int rs_done = coll_barrier(b), inter_done = coll_barrier(b);
    sim_graph_depend(b->graph, b->start, rs_done);
    for (int nd = 0; rs && nd < nn; nd++) {
        for (int j = 0; j < ppn; j++)
            order[j] = g->by_node[g->node_start[nd] + (g->nch > 0 ? g->ring[0][j] : j)];
        int e = coll_append_ring(b, order, ppn, true, bytes * (ppn - 1) / ppn / eff, lat_intra, intra_seg, b->start,
                            (uint32_t)nd);
        sim_graph_depend(b->graph, e, rs_done);
    }
    for (int j = 0; j < ppn; j++) {
        for (int nd = 0; nd < nn; nd++)
            order[nd] = g->by_node[g->node_start[nd] + j];
        double shard = bytes / ppn / eff;
        int e;
        if (in_network) {
            e = coll_barrier(b);
            double lat = (1 + collnet_serial_ops(g, p, bytes)) * g->p.step[HW_NET][1][p];
            for (int nd = 0; nd < nn; nd++) {
                int f = coll_add_flow(b, order[nd], order[(nd + 1) % nn], shard, sim_time_from_s(lat), (uint32_t)j);
                sim_graph_depend(b->graph, rs_done, f);
                sim_graph_depend(b->graph, f, e);
            }
        } else {
            int steps = (rs && ag ? 2 : 1) * (nn - 1);
            e = coll_append_ring(b, order, nn, true, shard * steps / nn, steps * g->p.step[HW_NET][0][p],
                            steps < 8 ? steps : 8, rs_done, (uint32_t)j);
        }
        sim_graph_depend(b->graph, e, inter_done);
    }
    if (!ag)
        g_array_append_val(b->ends, inter_done);
    for (int nd = 0; ag && nd < nn; nd++) {
        for (int j = 0; j < ppn; j++)
            order[j] = g->by_node[g->node_start[nd] + (g->nch > 0 ? g->ring[0][j] : j)];
        int e = coll_append_ring(b, order, ppn, true, bytes * (ppn - 1) / ppn / eff, lat_intra, intra_seg, inter_done,
                            (uint32_t)nd);
        g_array_append_val(b->ends, e);
    }
    g_free(order);
}

static bool cost_hier_ring(const CollGroup *g, CollOp op, CollProto p, double bytes, CollCost *c)
{
    return cost_hier(g, op, p, bytes, c, false);
}

static bool cost_collnet(const CollGroup *g, CollOp op, CollProto p, double bytes, CollCost *c)
{
    return cost_hier(g, op, p, bytes, c, true);
}

static void build_hier_ring(CollBuilder *b, CollOp op, CollProto p, double bytes)
{
    build_hier(b, op, p, bytes, false);
}

static void build_collnet(CollBuilder *b, CollOp op, CollProto p, double bytes)
{
    build_hier(b, op, p, bytes, true);
}

/* As build_hier: the intra-node rings' segments on every hop of every node,
 * the phase across nodes per local index. */
static int64_t count_hier(const CollGroup *g, CollOp op, bool in_network)
{
    int64_t nn = g->nnodes, ppn = g->ppn;
    bool rs = op != COLL_ALLGATHER, ag = op != COLL_REDUCESCATTER;
    int64_t intra = ppn >= 2 ? nn * ppn * (ppn - 1 < 8 ? ppn - 1 : 8) : 0;
    int64_t steps = (rs && ag ? 2 : 1) * (nn - 1);
    int64_t inter = in_network ? ppn * nn : nn >= 2 ? ppn * nn * (steps < 8 ? steps : 8) : 0;
    return (rs ? intra : 0) + inter + (ag ? intra : 0);
}

static int64_t count_hier_ring(const CollGroup *g, CollOp op, CollProto p, double bytes)
{
    return count_hier(g, op, false);
}

static int64_t count_collnet(const CollGroup *g, CollOp op, CollProto p, double bytes)
{
    return count_hier(g, op, true);
}

static const char *why_not_hier(const CollGroup *g, CollOp op, CollProto p)
{
    return "hierarchical needs at least two nodes with at least two ranks each, and runs all-reduce, "
           "reduce-scatter and all-gather only";
}

static const char *why_not_collnet(const CollGroup *g, CollOp op, CollProto p)
{
    return "collnet needs several nodes on a fabric with in-network reduction (\"in_network_reduction\" in the "
           "topology), all-reduce only, Simple (and LL before NCCL 2.9)";
}

const CollAlgoDesc coll_hier_algo = {COLL_HIER, "hier", "hierarchical", false,
                                     cost_hier_ring, build_hier_ring, count_hier_ring, why_not_hier};
const CollAlgoDesc coll_collnet_algo = {COLL_COLLNET, "collnet", "sharp", true,
                                        cost_collnet, build_collnet, count_collnet, why_not_collnet};
