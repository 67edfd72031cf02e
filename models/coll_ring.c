/* The ring: all-reduce, reduce-scatter and all-gather around a ring per
 * channel, broadcast and reduce down a chain; its closed form (NCCL's tuner,
 * with its plateau correction) and its flows. */
#include "coll_internal.h"

static double min_bw(double a, double b) { return a < b ? a : b; }

/* Per-rank bandwidth of a ring that spans the group: inside a node the
 * channels found, across nodes the NICs.  Across nodes each channel leaves
 * every node once by a NIC, so a rank's intra-node links carry only the
 * channels that do not exit there. */
static double ring_bus_bw(const CollGroup *g)
{
    double bw = INFINITY;
    if (g->ppn > 1) {
        bw = g->intra_bw;
        if (g->nnodes > 1) {
            int k = coll_ring_channels(g), exits = k / g->ppn;
            bw *= (double)k / (k - exits);
        }
    }
    if (g->nnodes > 1)
        bw = min_bw(bw, g->inter_bw);
    return bw;
}

/* Alpha: a step latency per hop, the network's on the hops between nodes
 * (with the transport's rendezvous where a step's message is past its eager
 * limit: bytes over the ranks and the channels NCCL uses). */
static double ring_lat(const CollGroup *g, CollOp op, CollProto p, double bytes)
{
    int n = g->n, nn = g->nnodes;
    int steps = op == COLL_ALLREDUCE ? 2 * (n - 1) : n - 1;
    int inter = nn <= 1 ? 0 : op == COLL_ALLREDUCE ? 2 * nn : nn - 1;
    if (inter > steps)
        inter = steps;
    double intra = coll_intra_step_lat(g, 0, p);
    if (nn > 1 && coll_version_has(g, g->p.ver_net_overhead)) /* every step of a ring across nodes also posts to the network */
        intra = fmax(intra, coll_net_overhead(g) * (p == COLL_SIMPLE ? 3 : 1));
    double msg = bytes / ((double)g->n * coll_channels_used(g, 0, p, bytes));
    double net = g->p.step[HW_NET][0][p] + coll_transport_eager_overhead(g, p, msg);
    return g->p.base[COLL_RING][p] + (steps - inter) * intra + inter * net;
}

/* NCCL's "plateau effect": multi-node Simple ring all-reduce pays more per step. */
static double ring_plateau(const CollGroup *g, CollOp op, CollProto p, double bytes)
{
    bool on = p == COLL_SIMPLE && op == COLL_ALLREDUCE && g->nnodes > 1 &&
              bytes / ((double)coll_ring_channels(g) * g->n) >= 64;
    if (!on)
        return 1;
    /* NCCL: x1.9 below compute capability 8, x1.4 from it (RCCL: 1) */
    return g->gpu_gen == GEN_VOLTA && g->library == COLL_LIB_NCCL ? g->p.ring_plateau_volta : g->p.ring_plateau;
}

/* The protocol's share of the ring's bus bandwidth, LL under NCCL's
 * measured ceiling, LL128 under its per-channel one (the flows carry the
 * same share as the closed form).  Inside one node LL's lines go straight
 * into the peer's memory, so the ring moves the line format's payload share
 * (ring_ll_one_node); across nodes a proxy relays them through host memory
 * (protocol_bandwidth.ring.ll).  LL128's per-channel ceiling binds across
 * nodes only: in a node NCCL runs the rings its search finds, doubled on fast
 * NVLink (24 on an HGX A100), more than the ceiling needs to pass the whole
 * bus, where the model finds one ring on an NVSwitch. */
static double ring_share(const CollGroup *g, CollProto p)
{
    if (p == COLL_LL128 && g->ppn < 2) /* each GPU sends and receives through its NIC */
        return g->p.ring_ll128_one_per_node;
    if (p == COLL_LL && g->nnodes <= 1)
        return g->p.ring_ll_one_node;
    return g->p.proto_bw[KIND_RING][p];
}

static double ring_cap(const CollGroup *g, CollProto p)
{
    if (p == COLL_LL)
        return coll_ll_max_bus_bw(g);
    if (p == COLL_LL128 && g->nnodes > 1)
        return g->p.ll128_max_per_ch * (g->nch > g->nics ? g->nch : (g->nics > 0 ? g->nics : 1));
    return INFINITY;
}

/* The share NCCL's tuner rates the protocol at: LL at ring_ll_rating from
 * 2.21, at 1/4 (all-reduce, reduce, across nodes) or 1/3 before; the rest as
 * they run. */
static double ring_rated_share(const CollGroup *g, CollOp op, CollProto p)
{
    if (p != COLL_LL || g->library != COLL_LIB_NCCL)
        return ring_share(g, p);
    if (coll_version_has(g, g->p.ver_ring_ll_rating))
        return g->p.ring_ll_rating;
    double old = g->p.ring_ll_rating_old[g->nnodes > 1 || op == COLL_ALLREDUCE || op == COLL_REDUCE ? 0 : 1];
    return old > 0 ? old : ring_share(g, p);
}

static double ring_eff(const CollGroup *g, CollProto p)
{
    double eff = ring_share(g, p), bus = ring_bus_bw(g) * eff, cap = ring_cap(g, p);
    return bus > cap ? eff * cap / bus : eff;
}

/* The LL ceiling a size really runs at across nodes: the channels' share of
 * NCCL's ceiling, as for the tree (coll_tree.c tree_ll_cap_at: each
 * channel's lines cross its own proxy), the ring's channel count by size
 * with its threshold times the ranks (coll_channels_used). */
static double ring_ll_cap_at(const CollGroup *g, CollProto p, double bytes)
{
    double cap = coll_ll_max_bus_bw(g);
    if (p != COLL_LL || g->nnodes < 2 || !isfinite(cap))
        return INFINITY;
    int k = coll_ring_channels(g), nc = coll_channels_used(g, 0, p, bytes);
    return k > 0 && nc < k ? cap * nc / k : cap;
}

static bool cost_ring(const CollGroup *g, CollOp op, CollProto p, double bytes, CollCost *c)
{
    if (op == COLL_ALLTOALL)
        return false;
    double bw = ring_bus_bw(g) * ring_eff(g, p);
    c->latency_s = ring_lat(g, op, p, bytes);
    c->algbw_Bps = min_bw(bw, ring_ll_cap_at(g, p, bytes)) / coll_busbw_factor(op, g->n);
    /* the tuner rates the comm's full ceiling; on one NVSwitch domain its
     * graph search's, not the links' (coll_nccl.c) */
    double rated = coll_nccl_nvs_graph(g) ? coll_nccl_ring_rated_bus_bw(g) : ring_bus_bw(g);
    c->tuner_algbw_Bps = min_bw(rated * ring_rated_share(g, op, p), ring_cap(g, p)) / coll_busbw_factor(op, g->n);
    c->latency_s *= ring_plateau(g, op, p, bytes);
    /* a broadcast or reduce whose channels all follow one ring (sameChannels:
     * an NVSwitch node's) is rated at one step (tuning.cc), not its chain */
    if ((op == COLL_BROADCAST || op == COLL_REDUCE) && coll_nccl_nvs_graph(g))
        c->tuner_latency_s = g->p.base[COLL_RING][p] + coll_intra_step_lat(g, 0, p);
    return true;
}

/* Channel c of a ring across nodes: each node's ranks in intra ring r,
 * rotated so that channels leave each node through different ranks (and so
 * different NICs), and so that a channel enters the next node at the rank of
 * the same local index it left by: the hop stays on one rail, as NCCL's rings
 * do on rail-optimised fabrics.  The rotation makes node 0's exit the local
 * rank (c x stride - 1) mod ppn whatever the ring's order, so channels that
 * share no exit there share none on any node: a node's exit is the one before
 * the previous node's exit on ring r, a permutation of the exits. */
static void channel_order(const CollGroup *g, int c, int r, int *order)
{
    int p = g->ppn, k = 0, nch = coll_ring_channels(g);
    /* spread channels' exits evenly, so ranks sharing a NIC take turns */
    int stride = nch < p ? p / nch : 1, first = ((c * stride) % p + p) % p;
    const int *ring = g->nch > 0 ? g->ring[r] : NULL;
    if (ring && g->nnodes > 1) /* the position after the exit wanted: first - 1 */
        for (int j = 0; j < p; j++)
            if (ring[j] == (first + p - 1) % p) {
                first = (j + 1) % p;
                break;
            }
    for (int nd = 0; nd < g->nnodes; nd++) {
        /* on a ring of nodes the neighbours' order is the physical one */
        int start = g->rotate ? ((first - nd) % p + p) % p : 0;
        for (int j = 0; j < p; j++) {
            int local = ring ? ring[(start + j) % p] : 0;
            order[k++] = g->by_node[g->node_start[nd] + local];
        }
    }
}

/* The intra rings each channel of a ring spans: across nodes, with several
 * intra rings, each channel (one per NIC) splits its bytes over every ring
 * by the ring's bandwidth, so that the intra links carry what the closed
 * form's intra bandwidth assumes and every NIC one channel's share
 * (channel c on ring c mod nch made the rings that two channels took
 * carry twice the others'); otherwise channel c on ring c mod nch. */
static int rings_per_channel(const CollGroup *g)
{
    return g->nnodes > 1 && g->rotate && g->nch > 1 ? g->nch : 1;
}

static void build_ring(CollBuilder *b, CollOp op, CollProto p, double bytes)
{
    const CollGroup *g = b->g;
    int n = g->n, k = coll_ring_channels(g), rpc = rings_per_channel(g);
    int steps = op == COLL_ALLREDUCE ? 2 * (n - 1) : n - 1;
    bool cyclic = op != COLL_BROADCAST && op != COLL_REDUCE;
    double hop_total = bytes * (cyclic ? coll_busbw_factor(op, n) : 1.0);
    double lat = ring_lat(g, op, p, bytes) * ring_plateau(g, op, p, bytes) - g->p.base[COLL_RING][p];
    double eff = ring_eff(g, p), ring_sum = 0;
    for (int r = 0; r < g->nch; r++)
        ring_sum += g->ring_bw[r];
    int nseg = steps < 8 ? steps : 8;
    if (!cyclic) {
        /* a chain pipelines in chunks of about a MiB, as NCCL's buffers do; its
         * fill time then stays small beside the transfer */
        double want = bytes / k / 1048576.0, cap = 2e5 / ((double)n * k);
        nseg = (int)fmax(16, fmin(want, fmax(16, cap)));
    }
    int *order = g_new(int, n);
    for (int c = 0; c < k; c++)
        for (int i = 0; i < rpc; i++) {
            int r = rpc > 1 ? i : g->nch > 0 ? c % g->nch : 0;
            channel_order(g, c, r, order);
            if (op == COLL_REDUCE) /* data flows towards the root: reverse the chain */
                for (int j = 0; j < n / 2; j++) {
                    int t = order[j];
                    order[j] = order[n - 1 - j];
                    order[n - 1 - j] = t;
                }
            /* single-node channels carry bytes in proportion to their bandwidth */
            double share = g->nnodes <= 1 && g->nch > 0 ? g->ring_bw[c] / g->intra_bw
                           : rpc > 1                  ? g->ring_bw[r] / ring_sum / k
                                                      : 1.0 / k;
            int end = coll_append_ring(b, order, n, cyclic, hop_total * share / eff, lat, nseg, b->start,
                                       (uint32_t)(c * rpc + i));
            g_array_append_val(b->ends, end);
        }
    g_free(order);
}

/* As build_ring: every channel's segments on every hop. */
static int64_t count_ring(const CollGroup *g, CollOp op, CollProto p, double bytes)
{
    int64_t n = g->n, k = coll_ring_channels(g);
    bool cyclic = op != COLL_BROADCAST && op != COLL_REDUCE;
    int64_t steps = op == COLL_ALLREDUCE ? 2 * (n - 1) : n - 1;
    int64_t nseg = steps < 8 ? steps : 8;
    if (!cyclic) {
        double want = bytes / (double)k / 1048576.0, cap = 2e5 / ((double)n * (double)k);
        nseg = (int64_t)fmax(16, fmin(want, fmax(16, cap)));
    }
    return k * rings_per_channel(g) * nseg * (cyclic ? n : n - 1);
}

static const char *why_not_ring(const CollGroup *g, CollOp op, CollProto p)
{
    return op == COLL_ALLTOALL ? "all-to-all has no ring schedule; use direct" : "not available";
}

const CollAlgoDesc coll_ring_algo = {COLL_RING, "ring", NULL, true, cost_ring, build_ring, count_ring, why_not_ring};
