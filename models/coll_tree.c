/* NCCL's double binary tree all-reduce: the trees over nodes, chains inside
 * nodes, the shape the closed form needs, the closed form (with NCCL's size
 * correction) and the pipelined flows up and down. */
#include "coll_internal.h"

#include <string.h>

/* Parent of node r in NCCL's binary tree over nn nodes (src/graph/trees.cc,
 * ncclGetBtree): the root 0 has one child; r's parent clears r's lowest set
 * bit and sets the next one up, or only clears it past the end. */
static int btree_parent(int nn, int r)
{
    if (r <= 0)
        return -1;
    int bit = r & -r, up = (r ^ bit) | (bit << 1);
    return up < nn ? up : r ^ bit;
}

/* Tree t (0 or 1) of the double binary tree (ncclGetDtree): the second is the
 * first mirrored (nn even) or shifted by one (nn odd), so that a node inner in
 * one tree is a leaf of the other. */
int coll_dtree_parent(int nn, int t, int r)
{
    if (t == 0)
        return btree_parent(nn, r);
    if (nn % 2 == 1) {
        int u = btree_parent(nn, (r - 1 + nn) % nn);
        return u < 0 ? -1 : (u + 1) % nn;
    }
    int u = btree_parent(nn, nn - 1 - r);
    return u < 0 ? -1 : nn - 1 - u;
}


/* Tree channels come in pairs, one per ring channel (so one per NIC across
 * nodes), each pair running both trees on the same ranks and NIC, as NCCL's
 * channel c and c + nChannels do (src/graph/connect.cc, connectTrees). */
static int tree_pairs(const CollGroup *g) { return coll_ring_channels(g); }

/* Share of the message on pair c: by bandwidth inside one node, even across. */
static double tree_share(const CollGroup *g, int c)
{
    return g->nnodes <= 1 && g->nch > 0 ? g->ring_bw[c % g->nch] / g->intra_bw : 1.0 / tree_pairs(g);
}

/* Local index of the j-th rank (top first) of pair c's chain in every node:
 * intra ring c rotated so that pairs' tops (the rank on the network, where
 * parent and children attach, as NCCL's tree pattern does) are spread over
 * the ranks and so over the NICs; the top has the same local index on every
 * node, so tree hops stay on one rail. */
static int tree_local(const CollGroup *g, int c, int j)
{
    int p = g->ppn, k = tree_pairs(g), stride = k < p ? p / k : 1, pos = (c * stride + j) % p;
    return g->nch > 0 ? g->ring[c % g->nch][pos] : pos;
}

/* What the closed form needs of the trees' shape (see cost_tree). */
void coll_tree_shape(CollGroup *g)
{
    int nn = g->nnodes, p = g->ppn, k = tree_pairs(g);
    int *deg = g_new0(int, nn);
    g->tree_depth = 0;
    for (int t = 0; t < (nn > 1 ? 2 : 1); t++)
        for (int r = 0; r < nn; r++) {
            int u = coll_dtree_parent(nn, t, r), d = 0;
            if (u >= 0) {
                deg[r]++;
                deg[u]++;
            }
            for (int v = r; (v = coll_dtree_parent(nn, t, v)) >= 0 && d < nn;)
                d++;
            g->tree_depth = d > g->tree_depth ? d : g->tree_depth;
        }
    g->tree_deg = 0;
    for (int r = 0; r < nn; r++)
        g->tree_deg = deg[r] > g->tree_deg ? deg[r] : g->tree_deg;
    g_free(deg);
    /* a chain's inner ranks send up and down, its top only down (its up goes
     * to the network, or nowhere at the root), its bottom only up */
    double *load = g_new0(double, p), most = 0;
    for (int c = 0; c < k && p > 1; c++) {
        double w = tree_share(g, c);
        for (int j = 0; j < p; j++)
            load[tree_local(g, c, j)] += w * (j == 0 || j == p - 1 ? 1 : 2);
    }
    for (int j = 0; j < p; j++)
        most = fmax(most, load[j]);
    g->tree_intra = most;
    g_free(load);
}

/* NCCL's static correction of tree bandwidth by log2(bytes/64) (tuning.cc). */
static double tree_correction(const CollGroup *g, CollProto p, double bytes)
{
    int lg = 0;
    for (double v = bytes / 64; v >= 2 && lg < 63; v /= 2)
        lg++;
    return lg < TREE_CORR ? g->p.tree_correction[p][lg] : 1;
}

/* Seconds per byte of the tree's busiest link, and the tuner's rating of it
 * (see cost_tree). */
static double tree_spb(const CollGroup *g, bool rated)
{
    double spb = g->ppn > 1 ? g->tree_intra / g->intra_bw : 0;
    if (g->nnodes > 1) {
        int deg = rated && g->tree_deg < 4 ? 4 : g->tree_deg;
        spb = fmax(spb, 0.5 * deg / (rated ? coll_tree_rated_net_bw_two_nodes(g) : g->inter_bw));
    }
    return spb;
}

/* NCCL's LL and LL128 ceilings are on bus bandwidth, for the tree twice the
 * algorithm bandwidth (tuning.cc: ratio 0.5): the most algorithm bandwidth
 * LL (by its hosts or GPUs) and LL128 (per channel) get. */
static double tree_ll_cap(const CollGroup *g, CollProto p)
{
    return p == COLL_LL ? 0.5 * coll_ll_max_bus_bw(g) : p == COLL_LL128 ? 0.5 * coll_tree_ll128_max_bus_bw(g) : INFINITY;
}

/* The LL ceiling a size really runs at.  Across nodes NCCL's ceiling is the
 * comm's, over all its channels: LL's network buffers sit in host memory,
 * and each channel's lines cross PCIe and its proxy's flag scan on their
 * own (net.cc: LL buffers never GDR; sendProxyProgress checks every line's
 * flags), so a size on fewer channels (coll_channels_used) gets that share
 * of it.  The tuner rates by the comm's full ceiling (tuning.cc). */
static double tree_ll_cap_at(const CollGroup *g, CollProto p, double bytes)
{
    double cap = tree_ll_cap(g, p);
    if (p != COLL_LL || g->nnodes < 2 || !isfinite(cap))
        return cap;
    int k = coll_ring_channels(g), nc = coll_channels_used(g, 1, p, bytes);
    return k > 0 && nc < k ? cap * nc / k : cap;
}

/* A network hop's step latency: the transport's rendezvous too where the
 * channel's message (its share of the bytes) is past the eager limit. */
static double tree_net_step(const CollGroup *g, CollProto p, double bytes)
{
    double msg = bytes / coll_channels_used(g, 1, p, bytes);
    return g->p.step[HW_NET][1][p] + coll_transport_eager_overhead(g, p, msg);
}

/* An LL tree across nodes readies its channels' network messages one after
 * another: LL's network buffers sit in host memory, and the proxy thread
 * scans a channel's lines for their flags before it posts the send
 * (net.cc sendProxyProgress), so with NCCL's network post overhead per
 * channel (tuning.cc getNetOverhead: 1 us Intel, 2 us AMD) the last of nc
 * channels leaves (nc - 1) overheads after the first; the next level's proxy
 * keeps pace with arrivals spaced that far apart, so the tree pays it once.
 * LL128 and Simple are readied by the GPU's own counter (no scan) and are
 * left out.  NCCL's tuner does not see it.  No constant of its own: checked,
 * not fitted, on the 2-node runs' 4-32 KiB rise (4-12 us measured on every
 * Intel-host site, 1.35 us modelled before). */
static double tree_post_s(const CollGroup *g, CollProto p, double bytes)
{
    if (g->nnodes < 2 || p != COLL_LL)
        return 0;
    return (coll_channels_used(g, 1, p, bytes) - 1) * coll_net_overhead(g);
}

/* NCCL from 2.26 rates a tree 0.85 lower where its graph search fell back
 * from the balanced tree to the simple one (tuning.cc: maxTreePattern ==
 * NCCL_TOPO_PATTERN_TREE), which from Hopper on it tries when the balanced
 * tree fails (search.cc, "Try a simpler tree"): across the nodes of a DGX
 * H100, each GPU beside its own NIC on a PCIe switch, it does.  Not where
 * the NICs hang off the host CPU (GH200): no derivation says it fails there,
 * and the 2 x 4 GH200 run takes the tree's time at 64 MiB. */
static double tree_pattern_factor(const CollGroup *g)
{
    bool simple = g->library == COLL_LIB_NCCL && g->gpu_gen >= GEN_HOPPER && g->gpu_gen < GEN_NUM && g->nnodes > 1 &&
                  !g->nic_on_host;
    return simple ? coll_from_version(g, g->p.ver_tree_pattern_penalty, g->p.tree_pattern_penalty, 1) : 1;
}

/* Double binary tree: reduce up and broadcast down, pipelined, so the time is
 * the busiest link's bytes over its bandwidth plus a step latency per level
 * up and down (NCCL's tuner: algorithm bandwidth = tree bus bandwidth x 0.5).
 * Inside a node a chain's inner ranks send each byte up and down.  Across
 * nodes every tree edge carries its tree's half of the message each way, and
 * a node's NICs carry its edges in both trees: from 3 nodes on 4 halves
 * (inner in one tree, leaf in the other), i.e. 2x the message, as a ring's
 * 2(n-1)/n; at 2 nodes only 2 edges, the message once each way, half a
 * ring's network bytes: the time counts that.
 * NCCL's tuner does not: it rates trees at 2 nodes by the channels' bus
 * bandwidth, as from 3 nodes on (tuning.cc: bw = bwIntra when nNodes <= 2,
 * capped per channel by perChMaxTreeBws), its search having raised bwIntra
 * up to twice the NIC share (coll_tree_rated_net_bw_two_nodes): where a
 * channel's NIC share is near the cap it keeps the ring for large
 * all-reduces (measured 2-node A100 runs run at the ring's rate: the OCI
 * A100 and ABCI traces), where it is far under it (GH200's 200 Gb/s NICs)
 * it takes the tree; tuner_algbw_Bps carries that rating (4 halves). */
static bool cost_tree(const CollGroup *g, CollOp op, CollProto p, double bytes, CollCost *c)
{
    if (op != COLL_ALLREDUCE)
        return false;
    c->latency_s = g->p.base[COLL_TREE][p] +
                   2 * ((g->ppn - 1) * coll_intra_step_lat(g, 1, p) + g->tree_depth * tree_net_step(g, p, bytes));
    c->tuner_latency_s = c->latency_s;
    c->latency_s += tree_post_s(g, p, bytes);
    double spb = tree_spb(g, false), rated = tree_spb(g, true);
    double corr = tree_correction(g, p, bytes); /* NCCL's: trees fall short at medium sizes */
    double cap = tree_ll_cap(g, p);
    c->algbw_Bps = fmin(spb > 0 ? g->p.proto_bw[KIND_TREE][p] / spb : INFINITY, tree_ll_cap_at(g, p, bytes)) * corr;
    c->tuner_algbw_Bps =
        fmin(rated > 0 ? g->p.proto_bw[KIND_TREE][p] / rated : INFINITY, cap) * corr * tree_pattern_factor(g);
    return true;
}

/* Segments per tree hop: about one per 512 KiB (NCCL's largest Simple tree
 * chunk), so that small messages do not pay a wire latency per segment, at
 * most 8, and fewer on groups so large that the flows would pass about 6e4
 * (the flows of a tree run at once, so their max-min sharing is costly). */
static int tree_segments(const CollGroup *g, int chains, double hop_bytes)
{
    double fit = fmin(fmin(8, hop_bytes / 524288.0), 6e4 / (2.0 * g->n * chains));
    return fit <= 1 ? 1 : (int)fit;
}

/* One tree of pair c over the group: a chain inside every node (tree_local),
 * the chains' tops joined by NCCL's tree t over nodes.  Fills parent[] and
 * children (kids[3 r ...], nkids[r]); returns the root. */
static int tree_links(const CollGroup *g, int c, int t, int *parent, int *kids, int *nkids)
{
    int nn = g->nnodes, p = g->ppn, root = -1;
    for (int nd = 0; nd < nn; nd++)
        for (int j = 0; j < p; j++) {
            int r = g->by_node[g->node_start[nd] + tree_local(g, c, j)];
            if (j > 0) {
                parent[r] = g->by_node[g->node_start[nd] + tree_local(g, c, j - 1)];
                continue;
            }
            int u = coll_dtree_parent(nn, t, nd);
            parent[r] = u < 0 ? -1 : g->by_node[g->node_start[u] + tree_local(g, c, 0)];
            if (u < 0)
                root = r;
        }
    memset(nkids, 0, sizeof(int) * (size_t)g->n);
    for (int r = 0; r < g->n; r++)
        if (parent[r] >= 0)
            kids[3 * parent[r] + nkids[parent[r]]++] = r;
    return root;
}

/* Double binary tree all-reduce: for every pair of tree channels (tree_pairs)
 * both trees, each with half the pair's share, reduce up and broadcast down.
 * NCCL pipelines in chunks much smaller than a segment here, so each hop's
 * step latency (which the closed form counts per level) delays both the first
 * and the last chunk, and segments of consecutive hops overlap: zero-byte
 * heads carry the first chunk's latencies hop by hop (up to the root, then
 * down) and a hop's segments start once data has reached its sender; tails
 * carry the last chunk's latencies the same way after each hop's last
 * segment; segment s of a hop waits for segment s-1 of the hops that feed it
 * (its children's going up; its parent's, or the root's children's, going
 * down), which holds a hop to the pace of the data it forwards. */
static void build_tree(CollBuilder *b, CollOp op, CollProto p, double bytes)
{
    const CollGroup *g = b->g;
    int n = g->n, k = tree_pairs(g), nt = g->nnodes > 1 ? 2 : 1;
    int nseg = tree_segments(g, k * nt, bytes / (k * nt));
    double eff = g->p.proto_bw[KIND_TREE][p] * tree_correction(g, p, bytes), spb = tree_spb(g, false);
    double cap = tree_ll_cap_at(g, p, bytes);
    if (spb > 0 && g->p.proto_bw[KIND_TREE][p] / spb > cap) /* LL or LL128 at NCCL's ceiling */
        eff *= cap * spb / g->p.proto_bw[KIND_TREE][p];
    sim_time_t lat_intra = sim_time_from_s(coll_intra_step_lat(g, 1, p));
    sim_time_t lat_net = sim_time_from_s(tree_net_step(g, p, bytes)), post = sim_time_from_s(tree_post_s(g, p, bytes));
    int *parent = g_new(int, n), *kids = g_new(int, 3 * (size_t)n), *nkids = g_new(int, n);
    int *head_up = g_new(int, n), *head_down = g_new(int, n), *tail_up = g_new(int, n), *tail_down = g_new(int, n);
    int *up = g_new(int, (size_t)n * nseg), *down = g_new(int, (size_t)n * nseg);
    for (int c = 0; c < k; c++)
        for (int t = 0; t < nt; t++) {
            int root = tree_links(g, c, t, parent, kids, nkids);
            double seg = bytes * tree_share(g, c) / nt / nseg / eff;
            uint32_t salt = (uint32_t)(c * 2 + t);
            for (int r = 0; r < n; r++) {
                bool net = parent[r] >= 0 && topo_node_of(g->t, g->ranks[r]) != topo_node_of(g->t, g->ranks[parent[r]]);
                sim_time_t lat = parent[r] < 0 ? 0 : net ? lat_net : lat_intra;
                head_up[r] = sim_graph_task(b->graph, b->label, SIM_NO_RESOURCE, lat);
                bool top = net && topo_node_of(g->t, g->ranks[parent[r]]) == topo_node_of(g->t, g->ranks[root]);
                /* the last channel's posts, once on the way up (tree_post_s) */
                tail_up[r] = sim_graph_task(b->graph, b->label, SIM_NO_RESOURCE, top ? lat + post : lat);
                head_down[r] = parent[r] < 0 ? head_up[r] : sim_graph_task(b->graph, b->label, SIM_NO_RESOURCE, lat);
                tail_down[r] = parent[r] < 0 ? tail_up[r] : sim_graph_task(b->graph, b->label, SIM_NO_RESOURCE, lat);
                for (int s = 0; s < nseg && parent[r] >= 0; s++) {
                    up[r * nseg + s] = coll_add_flow(b, r, parent[r], seg, 0, salt);
                    down[r * nseg + s] = coll_add_flow(b, parent[r], r, seg, 0, salt);
                }
            }
            for (int r = 0; r < n; r++) {
                if (nkids[r] == 0)
                    sim_graph_depend(b->graph, b->start, head_up[r]);
                for (int i = 0; i < nkids[r]; i++) {
                    int kid = kids[3 * r + i];
                    sim_graph_depend(b->graph, head_up[kid], head_up[r]);
                    sim_graph_depend(b->graph, tail_up[kid], tail_up[r]);
                }
                if (parent[r] < 0)
                    continue;
                sim_graph_depend(b->graph, head_down[parent[r]], head_down[r]);
                sim_graph_depend(b->graph, tail_down[parent[r]], tail_down[r]);
                /* down from the root: fed by the root's children going up */
                int feed = parent[r] == root ? -1 : parent[r];
                for (int s = 0; s < nseg; s++) {
                    int u = up[r * nseg + s], d = down[r * nseg + s];
                    if (s > 0) {
                        sim_graph_depend(b->graph, up[r * nseg + s - 1], u);
                        sim_graph_depend(b->graph, down[r * nseg + s - 1], d);
                    } else {
                        sim_graph_depend(b->graph, head_down[parent[r]], d);
                        if (nkids[r] == 0)
                            sim_graph_depend(b->graph, b->start, u);
                    }
                    for (int i = 0; i < nkids[r]; i++)
                        sim_graph_depend(b->graph, s ? up[kids[3 * r + i] * nseg + s - 1] : head_up[kids[3 * r + i]], u);
                    if (s && feed >= 0)
                        sim_graph_depend(b->graph, down[feed * nseg + s - 1], d);
                    for (int i = 0; s && feed < 0 && i < nkids[root]; i++)
                        sim_graph_depend(b->graph, up[kids[3 * root + i] * nseg + s - 1], d);
                }
                sim_graph_depend(b->graph, up[r * nseg + nseg - 1], tail_up[r]);
                sim_graph_depend(b->graph, down[r * nseg + nseg - 1], tail_down[r]);
                g_array_append_val(b->ends, tail_down[r]);
            }
        }
    g_free(parent);
    g_free(kids);
    g_free(nkids);
    g_free(head_up);
    g_free(head_down);
    g_free(tail_up);
    g_free(tail_down);
    g_free(up);
    g_free(down);
}

/* As build_tree: per pair and tree, up and down per segment, every rank but the root. */
static int64_t count_tree(const CollGroup *g, CollOp op, CollProto p, double bytes)
{
    int64_t n = g->n, nn = g->nnodes;
    int64_t kt = (int64_t)tree_pairs(g) * (nn > 1 ? 2 : 1);
    return kt * tree_segments(g, (int)kt, bytes / (double)kt) * 2 * (n - 1);
}

static const char *why_not_tree(const CollGroup *g, CollOp op, CollProto p) { return "the tree runs all-reduce only"; }

const CollAlgoDesc coll_tree_algo = {COLL_TREE, "tree", NULL, true, cost_tree, build_tree, count_tree, why_not_tree};
