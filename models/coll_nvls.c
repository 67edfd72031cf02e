/* NVLink SHARP: all-reduce reduced inside the NVSwitch.  "nvls" inside one
 * node (NCCL 2.17+), and across nodes where the network reduces too
 * (NVLS + CollNet/SHARP); "nvlstree" (NCCL 2.18+): NVLS inside every node and
 * NCCL's double binary tree between the nodes.  Closed forms and flows. */
#include "coll_internal.h"

/* The rate NVLink SHARP sustains on one GPU's links in an 8-GPU node:
 * NVIDIA quotes it as a bus bandwidth on Hopper, which the data file turns
 * into a fraction of the link rate; Blackwell's switches reduce a smaller
 * share of their faster links (NCCL's own NVLS efficiency per generation,
 * the data file's factor). */
static double nvls_rate_8(const CollGroup *g)
{
    double f = g->p.nvls_fraction * (g->gpu_gen >= GEN_BLACKWELL ? g->p.nvls_blackwell : 1);
    return g->gpu_link * f;
}

/* The rate with the group's n GPUs.  For each byte of the message a GPU's
 * links carry 1 + 1 / n bytes each way among n GPUs (the reduction loads its
 * data for every GPU's share and returns its own share; the multicast stores
 * its share and brings everyone's), so fewer GPUs get less of the rate:
 * (1 + 1/8) / (1 + 1/n), 0.9 at 4 (NCCL_ALGO=NVLS runs on 2-6 H100s agree:
 * collectives.json).  More GPUs get no more, an empirical cap, not physics:
 * a GB200 NVL72 rack measures below its 8-GPU rate (tests/data/traces). */
static double nvls_rate(const CollGroup *g)
{
    return nvls_rate_8(g) * fmin(1, (1 + 1.0 / 8) / (1 + 1.0 / g->ppn));
}

/* What NCCL's tuner rates NVLS at inside one NVLink domain: where NCCL's
 * graph search applies, its figure (coll_nccl.c: on 4 H100s 160 GB/s against
 * the ring's 240, so NCCL 2.29.2 ran Ring there, on 6 NVLS), though NVLS
 * runs at 0.9 of the 8-GPU rate on 4 (nvls_rate); elsewhere the 8-GPU rate
 * scaled by the heads, a channel per GPU up to 32. */
static double nvls_rating(const CollGroup *g)
{
    return coll_nccl_nvs_graph(g) ? coll_nccl_nvls_rated_algbw(g) : nvls_rate_8(g) * fmin(g->ppn, 32) / 8;
}

/* Seconds per byte of the message on a node's NICs, per direction, for the
 * tree between nodes: each tree edge carries its tree's half each way, and a
 * node has tree_deg edges in both trees (2 at two nodes: the message once;
 * up to 4 from three on: twice, NCCL's bwInter / 2). */
static double tree_net_spb(const CollGroup *g) { return 0.5 * g->tree_deg / g->inter_bw; }

/* NCCL's NVLS channels (nvls.cc): 16 on every GPU to 2.24; from 2.25 32 from
 * compute capability 10 (Hopper 16); from 2.27 24 on Blackwell inside one
 * NVLink domain (a node or an MNNVL rack), 32 across nodes. */
static double nvls_channels(const CollGroup *g)
{
    if (g->gpu_gen < GEN_BLACKWELL || !coll_version_has(g, g->p.ver_nvls_ch_sm100))
        return 16;
    return g->nnodes <= 1 && coll_version_has(g, g->p.ver_nvls_ch_sm100_nvl) ? 24 : 32;
}

/* NVLS's pipeline fill inside one NVLink domain.  Its kernel moves a message
 * in rounds of one chunk per channel and head (enqueue.cc calcCollChunking,
 * NVLS, v2.23-v2.28: nvlsChunkSize 128 KiB, 64 KiB below 64 rounds' worth,
 * 32 KiB below 8, 16 KiB below 2); heads: every GPU of the domain, at most
 * NCCL_MAX_NVLS_ARITY 32 (search.cc, device.h); channels as nvls_channels.
 * Each chunk goes through the kernel's three warp
 * roles (scatter into the switch, reduce and multicast, gather out), so as
 * for NVLSTree the last starts two rounds after the first: a modelling
 * assumption, the same stage count as nvls_tree_fill_s, not fitted. */
static double nvls_fill_s(const CollGroup *g, double bytes, double algbw)
{
    double ops = nvls_channels(g) * fmin(g->ppn, 32);
    double chunk = 131072;
    if (bytes < 64 * ops * chunk)
        chunk = 65536;
    if (bytes < 8 * ops * chunk)
        chunk = 32768;
    if (bytes < 2 * ops * chunk)
        chunk = 16384;
    return 2 * fmin(bytes, ops * chunk) / algbw;
}

/* The latency NCCL's tuner rates NVLS by inside one NVLink domain: its
 * hwLat[NVLINK][NVLS], 23 us to 2.22, 25 us from 2.23, where the time keeps
 * nvls.latency_s (on 8 H100s 2.23 on run the LL ring at 1 MiB, 28 us, rated
 * below NVLS's 25 + 3.9); NVLSTree's rating starts from it too. */
static double nvls_rated_latency(const CollGroup *g)
{
    return coll_from_version(g, g->p.ver_nvls_rating_lat, g->p.nvls_rating_lat, g->p.nvls_latency);
}

/* What NCCL's tuner rates NVLSTree's latency at: the NVLS step as above and
 * two network steps per tree level, 14 us to 2.28, 20.9 from 2.29
 * (hwLat[NET][NVLS_TREE]); its time keeps nvls.latency_s and 14 us. */
static double nvls_tree_rated_latency(const CollGroup *g)
{
    double net = coll_from_version(g, g->p.ver_nvls_tree_net_rating, g->p.nvls_tree_net_rating, g->p.nvls_tree_net_lat);
    return nvls_rated_latency(g) + 2 * coll_ilog2_ceil(g->nnodes) * net;
}

/* Every GPU sends its data into the switch once and gets the reduced result
 * back once; across nodes (in-network reduction) every node sends its reduced
 * data to the network once and gets the result once, over its NICs. */
static bool cost_nvls(const CollGroup *g, CollOp op, CollProto p, double bytes, CollCost *c)
{
    if (op != COLL_ALLREDUCE || p != COLL_SIMPLE || !coll_nvls_capable(g) || !coll_version_has(g, g->p.ver_nvls) ||
        (g->nnodes > 1 && !g->in_network))
        return false;
    c->latency_s = g->p.nvls_latency + (g->nnodes > 1 ? g->p.nvls_net_lat : 0);
    c->algbw_Bps = nvls_rate(g);
    if (g->nnodes > 1)
        c->algbw_Bps = fmin(c->algbw_Bps, g->inter_bw);
    else {
        c->tuner_latency_s = nvls_rated_latency(g); /* NCCL's tuner does not see the fill */
        c->latency_s += nvls_fill_s(g, bytes, c->algbw_Bps);
        c->tuner_algbw_Bps = nvls_rating(g);
    }
    return true;
}

/* NVLSTree's rounds: one chunk per channel and head (enqueue.cc, NVLS_TREE:
 * nvlsChunkSize 128 KiB, at most 64 KiB from 4 nodes, 64 KiB below 4 rounds'
 * worth, 32 KiB below one; NVLS channels as nvls_channels (32 on Blackwell
 * across nodes from 2.25); a head per NIC).  Returns the chunk; *ops the
 * chunks of one round. */
static double nvls_tree_chunk(const CollGroup *g, double bytes, double *ops)
{
    double heads = g->nics > 0 ? fmin(g->nics, g->ppn) : g->ppn;
    *ops = nvls_channels(g) * heads;
    double chunk = g->nnodes >= 4 ? 65536 : 131072;
    if (bytes < 4 * *ops * chunk && chunk > 65536)
        chunk = 65536;
    if (bytes < *ops * chunk && chunk > 32768)
        chunk = 32768;
    return chunk;
}

/* NVLSTree's pipeline fill: each chunk goes through NVLS into the heads, the
 * tree across the network and NVLS out again: the last of those three stages
 * starts two rounds after the first.  The stage count is a modelling
 * assumption, checked on the two 2-node H100 runs in tests/data/traces (both
 * about 180 us over the bandwidth-and-latency time at 256 MiB-2 GiB; four
 * stages, one per warp group of the kernel, overshoots below 64 MiB).  A round
 * is no shorter than the network step that carries its chunks across (the
 * tree's Simple step, nccl.nvlstree_net_step_latency_s, or the transport's):
 * below a few MiB the rounds are latency, not bytes; from 8 MiB at 2 nodes the
 * bytes take longer, so large sizes keep the fill above. */
static double nvls_tree_fill_s(const CollGroup *g, double bytes, double algbw)
{
    double ops, chunk = nvls_tree_chunk(g, bytes, &ops);
    double round = fmin(bytes, ops * chunk) / algbw;
    return 2 * fmax(round, g->p.nvls_tree_net_lat);
}

/* What a head's proxy thread spends posting NVLSTree's network operations:
 * in every round it serves all the NVLS channels (each channel has every
 * head, nvls.cc), and in each it posts a send and a receive (a tree edge at
 * two nodes is one up and one down per node; deeper trees' extra edges run
 * on other proxies and are left out), each at NCCL's own network post
 * overhead (tuning.cc getNetOverhead: 1 us on Intel and other hosts, 2 us on
 * AMD; nccl.net_overhead_s).  Small chunks in many channels make this, not
 * the bytes, the pace from a few hundred KiB to a few MiB; large sizes keep
 * their bandwidth.  NCCL's tuner does not see it. */
static double nvls_tree_post_s(const CollGroup *g, double bytes)
{
    double ops, chunk = nvls_tree_chunk(g, bytes, &ops);
    double rounds = ceil(bytes / (ops * chunk));
    return rounds * nvls_channels(g) * 2 * coll_net_overhead(g);
}

/* NVLSTree: NVLS reduces inside each node, the node's reduced data goes up
 * and down the double binary tree between nodes over all its NICs, and NVLS
 * multicasts the result.  The two stages are pipelined in one kernel, so the
 * slower sets the rate: the switch's (as "nvls") or the NICs' (tree_net_spb);
 * the kernel runs the tree's primitives, at the tree's protocol efficiency.
 * Latency as NCCL's tuner (tuning.cc, NVLS_TREE): the NVLS step plus two
 * network steps per tree level. */
static bool cost_nvls_tree(const CollGroup *g, CollOp op, CollProto p, double bytes, CollCost *c)
{
    if (op != COLL_ALLREDUCE || p != COLL_SIMPLE || g->nnodes < 2 || !coll_nvls_capable(g) ||
        !coll_version_has(g, g->p.ver_nvls_tree))
        return false;
    c->latency_s = g->p.nvls_latency + 2 * coll_ilog2_ceil(g->nnodes) * g->p.nvls_tree_net_lat;
    c->algbw_Bps = g->p.proto_bw[KIND_TREE][COLL_SIMPLE] * fmin(nvls_rate(g), 1 / tree_net_spb(g));
    c->tuner_latency_s = nvls_tree_rated_latency(g); /* it sees neither the fill nor the posts */
    double fill = nvls_tree_fill_s(g, bytes, c->algbw_Bps), pipe = bytes / c->algbw_Bps + fill;
    c->latency_s += fill + fmax(0, nvls_tree_post_s(g, bytes) - pipe); /* the slower of the two paces */
    return true;
}

/* Inside every node, every rank sends to every other its share, sized so
 * that a rank's link carries what the switch protocol moves at `rate`. */
static void nvls_node_flows(CollBuilder *b, double bytes, double rate, sim_time_t lat)
{
    const CollGroup *g = b->g;
    int p = g->ppn;
    int len = topo_route(g->t, g->ranks[g->by_node[0]], g->ranks[g->by_node[1]], 0, b->links, coll_route_cap(g));
    double cap = len > 0 ? coll_link_cap(g, b->links[0]) : g->gpu_link;
    double per_rank = bytes * cap / rate;
    for (int nd = 0; nd < g->nnodes; nd++)
        for (int i = 0; i < p; i++)
            for (int j = 0; j < p; j++) {
                if (i == j)
                    continue;
                int a = g->by_node[g->node_start[nd] + i], z = g->by_node[g->node_start[nd] + j];
                int f = coll_add_flow(b, a, z, per_rank / (p - 1), lat, (uint32_t)(i + j));
                sim_graph_depend(b->graph, b->start, f);
                g_array_append_val(b->ends, f);
            }
}

static void add_start_end(CollBuilder *b, int src, int dst, double bytes, sim_time_t lat, uint32_t salt)
{
    int f = coll_add_flow(b, src, dst, bytes, lat, salt);
    sim_graph_depend(b->graph, b->start, f);
    g_array_append_val(b->ends, f);
}

static void build_nvls(CollBuilder *b, CollOp op, CollProto p, double bytes)
{
    const CollGroup *g = b->g;
    CollCost c;
    if (!cost_nvls(g, op, p, bytes, &c))
        c = (CollCost){.latency_s = g->p.nvls_latency};
    sim_time_t lat = sim_time_from_s(c.latency_s);
    nvls_node_flows(b, bytes, nvls_rate(g), lat);
    /* across nodes: every rank's share to and from the network, as to the
     * same rank of the next node (a ring of nodes: one send and one receive
     * of the message per node) */
    for (int nd = 0; g->nnodes > 1 && nd < g->nnodes; nd++)
        for (int j = 0; j < g->ppn; j++)
            add_start_end(b, g->by_node[g->node_start[nd] + j], g->by_node[g->node_start[(nd + 1) % g->nnodes] + j],
                          bytes / g->ppn, lat, (uint32_t)j);
}

static int64_t count_nvls(const CollGroup *g, CollOp op, CollProto p, double bytes)
{
    int64_t nn = g->nnodes, pp = g->ppn;
    return nn * pp * (pp - 1) + (nn > 1 ? nn * pp : 0);
}

/* NVLSTree as flows, the two stages at once (they pipeline): NVLS inside every
 * node; between nodes, for both trees, every rank of a node sends its share
 * (1/ppn of the tree's half) to the same rank of the parent node and gets as
 * much back, so each NIC carries its rail's part of every tree edge. */
static void build_nvls_tree(CollBuilder *b, CollOp op, CollProto p, double bytes)
{
    const CollGroup *g = b->g;
    CollCost c;
    if (!cost_nvls_tree(g, op, p, bytes, &c))
        c = (CollCost){.latency_s = g->p.nvls_latency};
    double eff = g->p.proto_bw[KIND_TREE][COLL_SIMPLE];
    sim_time_t lat = sim_time_from_s(c.latency_s);
    nvls_node_flows(b, bytes / eff, nvls_rate(g), lat);
    int nn = g->nnodes, pp = g->ppn;
    for (int t = 0; t < 2; t++)
        for (int r = 0; r < nn; r++) {
            int u = coll_dtree_parent(nn, t, r);
            for (int j = 0; u >= 0 && j < pp; j++) {
                int a = g->by_node[g->node_start[r] + j], z = g->by_node[g->node_start[u] + j];
                add_start_end(b, a, z, bytes / 2 / pp / eff, lat, (uint32_t)(2 * j + t));
                add_start_end(b, z, a, bytes / 2 / pp / eff, lat, (uint32_t)(2 * j + t));
            }
        }
}

/* As build_nvls_tree: the nodes' pairs, and two flows per rail of every tree edge. */
static int64_t count_nvls_tree(const CollGroup *g, CollOp op, CollProto p, double bytes)
{
    int64_t nn = g->nnodes, pp = g->ppn, edges = 0;
    for (int t = 0; t < 2; t++)
        for (int r = 0; r < nn; r++)
            edges += coll_dtree_parent((int)nn, t, r) >= 0;
    return nn * pp * (pp - 1) + edges * pp * 2;
}

static const char *why_not_nvls(const CollGroup *g, CollOp op, CollProto p)
{
    if (!g->nvls_type_ok)
        return "nvls reduces only 16-, 32- and 64-bit types (NCCL's ncclNvlsSupported: not int8, uint8 or FP8)";
    if (coll_nvls_capable(g) && !coll_version_has(g, g->p.ver_nvls))
        return "nvls came with NCCL 2.17";
    if (coll_nvls_capable(g) && g->nnodes > 1)
        return "nvls across nodes needs in-network reduction (SHARP); without it NCCL runs nvlstree";
    return "nvls needs NVSwitches that reduce (\"nvlink_sharp\" in the topology), all-reduce only, "
           "Simple protocol";
}

static const char *why_not_nvls_tree(const CollGroup *g, CollOp op, CollProto p)
{
    if (!g->nvls_type_ok)
        return "nvlstree reduces only 16-, 32- and 64-bit types (NCCL's ncclNvlsSupported: not int8, uint8 or FP8)";
    if (coll_nvls_capable(g) && g->nnodes > 1 && !coll_version_has(g, g->p.ver_nvls_tree))
        return "nvlstree came with NCCL 2.18";
    return "nvlstree needs two nodes or more whose NVSwitches reduce (\"nvlink_sharp\" in the topology), "
           "all-reduce only, Simple protocol";
}

const CollAlgoDesc coll_nvls_algo = {COLL_NVLS, "nvls", NULL, true, cost_nvls, build_nvls, count_nvls, why_not_nvls};
const CollAlgoDesc coll_nvls_tree_algo = {COLL_NVLS_TREE, "nvlstree", "nvls_tree", true, cost_nvls_tree,
                                          build_nvls_tree, count_nvls_tree, why_not_nvls_tree};
