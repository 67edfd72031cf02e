/* Dimension-wise collectives on a TPU torus (torus2d, torus3d): a
 * reduce-scatter is one reduce-scatter per dimension in turn, each along the
 * 1-D rings of that dimension and on 1/(the dimensions before) of the data;
 * an all-gather runs the dimensions in reverse; an all-reduce is the two.
 * Every ring is bidirectional: the data splits between the two ways round
 * (by their bandwidth), so each chip sends on both its links of the
 * dimension, the wraparound ones included.  That is the 2-D torus all-reduce
 * of Google's TPU pods (Ying et al. 2018, "Image Classification at
 * Supercomputer Scale", arXiv:1811.06992; Kumar et al. 2019, "Scale
 * MLPerf-0.6 models on Google TPU-v3 Pods", arXiv:1909.09756), rows then
 * columns of bidirectional ("pincer") rings as in Google's patent application
 * US 2018/0240039 A1; its reduce-scatter and all-gather halves carry Xu et
 * al. 2020's sharded weight update (arXiv:2004.13336); in three dimensions
 * for TPU v4 slices (Jouppi et al., ISCA 2023).
 *
 * Latency: each dimension's ring takes d - 1 steps, at the per-step latency
 * of the ICI link class (the collective parameters' nvlink class, which ICI
 * maps to: an assumption, not a TPU measurement) and the ring's base latency
 * once; there is no network step: every hop is between neighbouring chips.
 * The group must be the whole torus (a data-parallel group of a pure DP
 * job); any other group has no rings of whole dimensions here.
 *
 * Not modelled: splitting the message over several dimension orders at once
 * so that every link of a chip is busy in every phase (here a phase uses the
 * two links of its dimension, 2 of a 3-D chip's 6). */
#include "coll_internal.h"

/* The torus seen by one group: dimension sizes, and per dimension the
 * achievable bandwidth of a chip's link each way round (0 the second way
 * where a ring of 2 has one link). */
typedef struct {
    int nd, dims[3], stride[3];
    double bw[3][2];
} Torus;

/* The torus under g, false where g is not a whole 2-D or 3-D torus. */
static bool torus_of(const CollGroup *g, Torus *tt)
{
    tt->nd = topo_torus_dims(g->t, tt->dims);
    if (tt->nd < 2 || g->n != topo_num_ranks(g->t))
        return false;
    /* every chip once: the group is the whole torus in some order */
    bool *seen = g_new0(bool, g->n), ok = true;
    for (int i = 0; i < g->n && ok; i++) {
        ok = !seen[g->ranks[i]];
        seen[g->ranks[i]] = true;
    }
    g_free(seen);
    if (!ok)
        return false;
    int links[2];
    for (int k = 0, s = 1; k < 3; s *= tt->dims[k], k++) {
        tt->stride[k] = s;
        tt->bw[k][0] = tt->bw[k][1] = 0;
        int d = tt->dims[k];
        if (d < 2)
            continue;
        /* chip 0's neighbours one step each way: one link each (dimension order) */
        int fwd = topo_route(g->t, 0, s, 0, links, 2), l0 = links[0];
        int back = topo_route(g->t, 0, (d - 1) * s, 0, links, 2), l1 = links[0];
        if (fwd != 1 || back != 1)
            return false;
        tt->bw[k][0] = coll_link_cap(g, l0);
        if (l1 != l0)
            tt->bw[k][1] = coll_link_cap(g, l1);
    }
    return true;
}

/* The dimensions the phases run, in order: reduce-scatter 0, 1, 2, then
 * all-gather 2, 1, 0 (each undoes the matching reduce-scatter); returns the
 * count. */
static int phases(const Torus *tt, CollOp op, int *dim)
{
    int n = 0;
    if (op != COLL_ALLGATHER)
        for (int k = 0; k < 3; k++)
            if (tt->dims[k] > 1)
                dim[n++] = k;
    if (op != COLL_REDUCESCATTER)
        for (int k = 2; k >= 0; k--)
            if (tt->dims[k] > 1)
                dim[n++] = k;
    return n;
}

/* The bytes each chip holds entering dimension k's ring: the message over
 * the sizes of the dimensions reduced before it. */
static double phase_bytes(const Torus *tt, int k, double bytes)
{
    double b = bytes;
    for (int j = 0; j < k; j++)
        b /= tt->dims[j];
    return b;
}

static bool torus_op(CollOp op) { return op == COLL_ALLREDUCE || op == COLL_REDUCESCATTER || op == COLL_ALLGATHER; }

static double step_lat(const CollGroup *g, CollProto p) { return g->p.step[HW_NVLINK][0][p]; }

static bool cost_torus(const CollGroup *g, CollOp op, CollProto p, double bytes, CollCost *c)
{
    Torus tt;
    if (!torus_op(op) || !torus_of(g, &tt))
        return false;
    int dim[6];
    int np = phases(&tt, op, dim);
    double eff = g->p.proto_bw[KIND_RING][p], per_byte = 0, lat = g->p.base[COLL_TORUS][p];
    for (int i = 0; i < np; i++) {
        int k = dim[i], d = tt.dims[k];
        /* 1 byte of the message puts (d-1)/d of its phase share on the ring's two ways */
        per_byte += phase_bytes(&tt, k, 1) * (d - 1) / d / ((tt.bw[k][0] + tt.bw[k][1]) * eff);
        lat += (d - 1) * step_lat(g, p);
    }
    c->latency_s = lat;
    c->algbw_Bps = per_byte > 0 ? 1 / per_byte : INFINITY;
    return true;
}

/* The chips (ids) of dimension k's ring through `chip`, from it the positive
 * or the negative way round. */
static void ring_chips(const Torus *tt, int chip, int k, bool back, int *order)
{
    int d = tt->dims[k], s = tt->stride[k], x = (chip / s) % d, base = chip - x * s;
    for (int j = 0; j < d; j++) {
        int xj = back ? (x - j + d) % d : (x + j) % d;
        order[j] = base + xj * s;
    }
}

static int ring_segments(int d) { return d - 1 < 8 ? d - 1 : 8; }

/* Phase after phase, each waiting for the one before: every ring of the
 * phase's dimension, each way round with its share of the bytes. */
static void build_torus(CollBuilder *b, CollOp op, CollProto p, double bytes)
{
    const CollGroup *g = b->g;
    Torus tt;
    if (!torus_op(op) || !torus_of(g, &tt)) /* the caller asked for what cost refused: nothing to run */
        return;
    int *idx = g_new(int, g->n), *order = g_new(int, g->n);
    for (int i = 0; i < g->n; i++)
        idx[g->ranks[i]] = i;
    int dim[6];
    int np = phases(&tt, op, dim), dep = b->start;
    double eff = g->p.proto_bw[KIND_RING][p];
    for (int i = 0; i < np; i++) {
        int k = dim[i], d = tt.dims[k], s = tt.stride[k], done = coll_barrier(b);
        double hop = phase_bytes(&tt, k, bytes) * (d - 1) / d / eff, sum = tt.bw[k][0] + tt.bw[k][1];
        for (int chip = 0; chip < g->n; chip++) {
            if ((chip / s) % d != 0) /* one ring per line of the dimension: start at its coordinate 0 */
                continue;
            for (int w = 0; w < 2; w++) {
                if (tt.bw[k][w] <= 0)
                    continue;
                ring_chips(&tt, chip, k, w == 1, order);
                for (int j = 0; j < d; j++)
                    order[j] = idx[order[j]];
                int e = coll_append_ring(b, order, d, true, hop * tt.bw[k][w] / sum, (d - 1) * step_lat(g, p),
                                         ring_segments(d), dep, (uint32_t)(2 * k + w));
                sim_graph_depend(b->graph, e, done);
            }
        }
        dep = done;
    }
    g_array_append_val(b->ends, dep);
    g_free(idx);
    g_free(order);
}

/* As build_torus: per phase, each chip sends on each way of the dimension
 * once per segment. */
static int64_t count_torus(const CollGroup *g, CollOp op, CollProto p, double bytes)
{
    Torus tt;
    if (!torus_op(op) || !torus_of(g, &tt))
        return 0;
    int dim[6];
    int np = phases(&tt, op, dim);
    int64_t n = 0;
    for (int i = 0; i < np; i++) {
        int k = dim[i];
        n += (int64_t)g->n * ((tt.bw[k][0] > 0) + (tt.bw[k][1] > 0)) * ring_segments(tt.dims[k]);
    }
    return n;
}

static const char *why_not_torus(const CollGroup *g, CollOp op, CollProto p)
{
    return torus_op(op) ? "torus needs a 2-D or 3-D torus (torus2d, torus3d) and every chip of it in the group"
                        : "torus runs all-reduce, reduce-scatter and all-gather only";
}

const CollAlgoDesc coll_torus_algo = {COLL_TORUS, "torus", "multidim", true,
                                      cost_torus, build_torus, count_torus, why_not_torus};
