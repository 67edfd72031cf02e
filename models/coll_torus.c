/* Collectives on a TPU torus (torus2d, torus3d), every dimension's links busy
 * at once.  A reduce-scatter along one dimension's 1-D rings leaves each chip
 * 1/d of what it held; the next dimension's rings reduce that shard, and so
 * on (2(n-1)/n per phase of an all-reduce, on a shrinking shard); an
 * all-gather runs the dimensions back; an all-reduce is the two.  One order
 * of dimensions alone keeps only the two links of the current dimension busy
 * (2 of a 2-D chip's 4, 2 of a 3-D chip's 6), so the message is split into
 * one part per dimension, part j taking the dimensions in the order j, j+1,
 * ... (a rotation): in every phase each part is on a different dimension and
 * every link carries traffic.  The parts' shares balance the first (largest)
 * phase over the dimensions' bandwidths; on a square torus that cuts the
 * bandwidth term by the number of dimensions, which is how Google states it:
 * a gather or reduction over several mesh axes has its available bandwidth
 * multiplied by the number of axes (Austin et al. 2025, "How to Scale Your
 * Model", jax-ml/scaling-book sharding.md at 04d8de5), and the pods' quoted
 * all-reduce bandwidth (340 TB/s for 1024 TPU v3 chips, 1.1 PB/s for 4096 TPU
 * v4 chips: cloud.google.com/tpu/docs/v3, /v4) is every link of every chip.
 * Where the split loses (small messages on a torus whose dimensions differ:
 * the phase waits for the longest ring's latency), one order alone runs.
 * Every ring is bidirectional: its data splits between the two ways round (by
 * their bandwidth), on the wraparound links too.  Schedule: the 2-D torus
 * all-reduce of Ying et al. 2018 ("Image Classification at Supercomputer
 * Scale", arXiv:1811.06992) and Kumar et al. 2019 ("Scale MLPerf-0.6 models
 * on Google TPU-v3 Pods", arXiv:1909.09756), bidirectional ("pincer") rings
 * as in Google's patent application US 2018/0240039 A1; its reduce-scatter
 * and all-gather halves carry Xu et al. 2020's sharded weight update
 * (arXiv:2004.13336); in three dimensions for TPU v4 slices (Jouppi et al.,
 * ISCA 2023).
 *
 * Latency: a ring of d chips takes d - 1 steps, at the per-step latency of
 * the ICI link class (the collective parameters' nvlink class, which ICI maps
 * to: an assumption, not a TPU measurement), plus the ring's base latency
 * once; a phase lasts as long as its slowest ring; there is no network step:
 * every hop is between neighbouring chips.  The phases wait for each other
 * (the flows do the same, so closed form and flows agree exactly).  The group
 * must be the whole torus (a data-parallel group of a pure DP job); any other
 * group has no rings of whole dimensions here. */
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

/* How the message is cut: part j reduces the active dimensions (those of
 * size > 1) in the order act[j], act[j+1], ... (a rotation) and carries f[j]
 * of the bytes; a part of share 0 does not run. */
typedef struct {
    int na, act[3];
    double f[3];
} Split;

/* The dimension part j runs at position q of its reduce-scatter. */
static int part_dim(const Split *s, int j, int q) { return s->act[(j + q) % s->na]; }

/* The share of the message each chip of part j holds entering position q:
 * 1 over the sizes of the dimensions it reduced before. */
static double part_share(const Torus *tt, const Split *s, int j, int q)
{
    double b = 1;
    for (int r = 0; r < q; r++)
        b /= tt->dims[part_dim(s, j, r)];
    return b;
}

/* The positions the phases run, in order: reduce-scatter 0 .. na-1, then
 * all-gather na-1 .. 0 (each undoes the matching reduce-scatter, on the same
 * bytes); returns the count. */
static int phases(const Split *s, CollOp op, int *pos)
{
    int n = 0;
    if (op != COLL_ALLGATHER)
        for (int q = 0; q < s->na; q++)
            pos[n++] = q;
    if (op != COLL_REDUCESCATTER)
        for (int q = s->na - 1; q >= 0; q--)
            pos[n++] = q;
    return n;
}

static bool torus_op(CollOp op) { return op == COLL_ALLREDUCE || op == COLL_REDUCESCATTER || op == COLL_ALLGATHER; }

static double step_lat(const CollGroup *g, CollProto p) { return g->p.step[HW_NVLINK][0][p]; }

/* Bytes each chip sends around part j's ring at position q (both ways
 * together) per byte of the message: (d-1)/d of what it holds, over the
 * protocol's efficiency. */
static double ring_bytes(const CollGroup *g, CollProto p, const Torus *tt, const Split *s, int j, int q)
{
    int d = tt->dims[part_dim(s, j, q)];
    return s->f[j] * part_share(tt, s, j, q) * (d - 1) / d / g->p.proto_bw[KIND_RING][p];
}

/* The schedule's time for `bytes`: the base latency, and per phase its
 * slowest ring; *lat gets the latency part (per phase the slowest ring's). */
static double split_time(const CollGroup *g, CollOp op, CollProto p, const Torus *tt, const Split *s, double bytes,
                         double *lat)
{
    int pos[6];
    int np = phases(s, op, pos);
    double t = g->p.base[COLL_TORUS][p];
    *lat = t;
    for (int i = 0; i < np; i++) {
        double slow = 0, slow_lat = 0;
        for (int j = 0; j < s->na; j++) {
            if (!(s->f[j] > 0))
                continue;
            int k = part_dim(s, j, pos[i]);
            double l = (tt->dims[k] - 1) * step_lat(g, p);
            double r = l + bytes * ring_bytes(g, p, tt, s, j, pos[i]) / (tt->bw[k][0] + tt->bw[k][1]);
            if (r > slow) {
                slow = r;
                slow_lat = l;
            }
        }
        t += slow;
        *lat += slow_lat;
    }
    return t;
}

/* The split run for `bytes`: every dimension's part at once, the shares
 * making the first (largest) phase's rings equally long (part j's share
 * proportional to its first dimension's bandwidth times d/(d-1)), or one
 * order alone (the first dimension first on a tie) where that is faster: on
 * a torus whose dimensions differ, a phase of parts waits for the longest
 * ring's latency.  (The best shares for the later phases too differ by less
 * than 0.1% in time on 32x16 and 8x8x4: a grid search over them was tried.) */
static void choose_split(const CollGroup *g, CollOp op, CollProto p, const Torus *tt, double bytes, Split *s)
{
    s->na = 0;
    for (int k = 0; k < 3; k++)
        if (tt->dims[k] > 1)
            s->act[s->na++] = k;
    Split all = *s;
    double sum = 0;
    for (int j = 0; j < s->na; j++) {
        int k = s->act[j], d = tt->dims[k];
        all.f[j] = (tt->bw[k][0] + tt->bw[k][1]) * d / (d - 1);
        sum += all.f[j];
    }
    for (int j = 0; j < s->na; j++)
        all.f[j] /= sum;
    double lat, best = split_time(g, op, p, tt, &all, bytes, &lat);
    *s = all;
    for (int j = 0; j < all.na; j++) {
        Split one = all;
        for (int i = 0; i < one.na; i++)
            one.f[i] = i == j;
        double t = split_time(g, op, p, tt, &one, bytes, &lat);
        if (t < best) {
            best = t;
            *s = one;
        }
    }
}

static bool cost_torus(const CollGroup *g, CollOp op, CollProto p, double bytes, CollCost *c)
{
    Torus tt;
    if (!torus_op(op) || !torus_of(g, &tt))
        return false;
    Split s;
    choose_split(g, op, p, &tt, bytes, &s);
    double lat, t = split_time(g, op, p, &tt, &s, bytes, &lat);
    c->latency_s = lat;
    if (bytes > 0 && t > lat)
        c->algbw_Bps = bytes / (t - lat);
    else { /* no bytes: the schedule's rate at one byte, for the record */
        double l1, t1 = split_time(g, op, p, &tt, &s, 1, &l1);
        c->algbw_Bps = t1 > l1 ? 1 / (t1 - l1) : INFINITY;
    }
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

/* Phase after phase, each waiting for the one before: in each, every part's
 * rings of its dimension (every line of it), each way round with its share
 * of the bytes. */
static void build_torus(CollBuilder *b, CollOp op, CollProto p, double bytes)
{
    const CollGroup *g = b->g;
    Torus tt;
    if (!torus_op(op) || !torus_of(g, &tt)) /* the caller asked for what cost refused: nothing to run */
        return;
    Split sp;
    choose_split(g, op, p, &tt, bytes, &sp);
    int *idx = g_new(int, g->n), *order = g_new(int, g->n);
    for (int i = 0; i < g->n; i++)
        idx[g->ranks[i]] = i;
    int pos[6];
    int np = phases(&sp, op, pos), dep = b->start;
    for (int i = 0; i < np; i++) {
        int done = coll_barrier(b);
        for (int j = 0; j < sp.na; j++) {
            if (!(sp.f[j] > 0))
                continue;
            int k = part_dim(&sp, j, pos[i]), d = tt.dims[k], s = tt.stride[k];
            double hop = bytes * ring_bytes(g, p, &tt, &sp, j, pos[i]), sum = tt.bw[k][0] + tt.bw[k][1];
            for (int chip = 0; chip < g->n; chip++) {
                if ((chip / s) % d != 0) /* one ring per line of the dimension: start at its coordinate 0 */
                    continue;
                for (int w = 0; w < 2; w++) {
                    if (tt.bw[k][w] <= 0)
                        continue;
                    ring_chips(&tt, chip, k, w == 1, order);
                    for (int m = 0; m < d; m++)
                        order[m] = idx[order[m]];
                    int e = coll_append_ring(b, order, d, true, hop * tt.bw[k][w] / sum, (d - 1) * step_lat(g, p),
                                             ring_segments(d), dep, (uint32_t)(2 * k + w));
                    sim_graph_depend(b->graph, e, done);
                }
            }
        }
        dep = done;
    }
    g_array_append_val(b->ends, dep);
    g_free(idx);
    g_free(order);
}

/* As build_torus: per phase and running part, each chip sends on each way
 * of the part's dimension once per segment. */
static int64_t count_torus(const CollGroup *g, CollOp op, CollProto p, double bytes)
{
    Torus tt;
    if (!torus_op(op) || !torus_of(g, &tt))
        return 0;
    Split s;
    choose_split(g, op, p, &tt, bytes, &s);
    int pos[6];
    int np = phases(&s, op, pos);
    int64_t n = 0;
    for (int i = 0; i < np; i++)
        for (int j = 0; j < s.na; j++) {
            if (!(s.f[j] > 0))
                continue;
            int k = part_dim(&s, j, pos[i]);
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
