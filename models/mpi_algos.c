/* The MPI algorithms, each as a sum of steps (mpi_internal.h): what a step
 * costs on the platform (a rank's messages, its node's NIC and memory), the
 * patterns of recursive doubling and halving, rings, shifts (Bruck, pairwise
 * exchange) and k-nomial trees, and the collectives built from them. */
#include "mpi_internal.h"

/* Destinations of sender i in the pattern; returns how many (<= cap). */
static int pattern_dsts(MpiComm c, MpiPattern pat, int d, int k, int rem, int i, int *dst, int cap)
{
    switch (pat) {
    case MPI_PAT_XOR: {
        int pof2 = c.n - rem, nr = i < 2 * rem ? (i % 2 ? i / 2 : -1) : i - rem;
        if (nr < 0 || (nr ^ d) >= pof2)
            return 0;
        int p = nr ^ d;
        dst[0] = p < rem ? 2 * p + 1 : p + rem;
        return 1;
    }
    case MPI_PAT_SHIFT:
        dst[0] = (int)(((long)i + d) % c.n);
        return dst[0] != i;
    case MPI_PAT_TREE: {
        long span = (long)d * k;
        int n = 0;
        if (i % span != 0)
            return 0;
        for (int j = 1; j < k && n < cap && (long)i + (long)j * d < c.n; j++)
            dst[n++] = i + j * d;
        return n;
    }
    case MPI_PAT_FOLD:
        if (i < 2 * rem && i % 2 == 0 && i + 1 < c.n) {
            dst[0] = i + 1;
            return 1;
        }
        return 0;
    }
    return 0;
}

typedef struct {
    double rank_max;   /* the slowest rank's own time */
    double *out, *in, *mem; /* per node: NIC bytes out, in; DRAM bytes */
    int nn;
} StepAcc;

static void acc_message(const MpiModel *m, MpiComm c, StepAcc *a, int i, int j, double bytes, double *t, double *lat,
                        bool reduce, bool exchange)
{
    const MpiPlatform *p = &m->p;
    int ni = i / c.per_node, nj = j / c.per_node;
    bool net = ni != nj;
    double l = net ? mpi_net_latency(m, bytes) : p->lat_shm;
    if (l > *lat)
        *lat = l;
    *t += !net ? mpi_shm_soft(m) + mpi_shm_copy(m, bytes) : exchange ? mpi_net_exchange(m, bytes) : mpi_net_send(m, bytes);
    if (net) {
        a->out[ni] += bytes;
        a->in[nj] += bytes;
        a->mem[ni] += bytes; /* the NIC's DMA read */
        a->mem[nj] += bytes; /* and write */
    } else {
        a->mem[ni] += bytes * p->copy_traffic;
    }
    if (reduce) {
        *t += bytes * m->reduce_streams / p->bw_core;
        a->mem[nj] += bytes * (m->reduce_streams + 1);
    }
}

static double acc_finish(const MpiModel *m, StepAcc *a)
{
    double t = a->rank_max;
    for (int k = 0; k < a->nn; k++) {
        double nic = (a->out[k] > a->in[k] ? a->out[k] : a->in[k]) / m->p.bw_nic, mem = a->mem[k] / m->p.bw_mem;
        if (nic > t)
            t = nic;
        if (mem > t)
            t = mem;
    }
    g_free(a->out);
    return t;
}

static StepAcc acc_new(MpiComm c)
{
    StepAcc a = {0};
    a.nn = (c.n + c.per_node - 1) / c.per_node;
    a.out = g_new0(double, 3 * (size_t)a.nn);
    a.in = a.out + a.nn;
    a.mem = a.in + a.nn;
    return a;
}

/* Whether any of the destinations is on another node (then the bytes the
 * parent's NIC sends are what bound it). */
static bool net_any(MpiComm c, int i, const int *dst, int nd)
{
    for (int j = 0; j < nd; j++)
        if (dst[j] / c.per_node != i / c.per_node)
            return true;
    return false;
}

/* A shift on a communicator of whole nodes, in closed form: how many of a
 * node's ranks send off the node. */
static double shift_step(const MpiModel *m, MpiComm c, int d, double bytes, bool reduce)
{
    const MpiPlatform *p = &m->p;
    int pn = c.per_node, nn = c.n / pn;
    long k = ((long)d % c.n + c.n) % c.n;
    if (k == 0 || bytes < 0)
        return 0;
    long intra = nn <= 1 ? pn : (pn - k > 0 ? pn - k : 0) + (pn - (c.n - k) > 0 ? pn - (c.n - k) : 0);
    if (intra > pn)
        intra = pn;
    long inter = pn - intra;
    double red = reduce ? bytes * m->reduce_streams / p->bw_core : 0;
    double t = 0;
    if (intra > 0)
        t = p->lat_shm + mpi_shm_soft(m) + mpi_shm_copy(m, bytes) + red;
    if (inter > 0) {
        double tn = mpi_net_latency(m, bytes) + mpi_net_exchange(m, bytes) + red; /* each rank also receives */
        t = tn > t ? tn : t;
        double nic = inter * bytes / p->bw_nic;
        t = nic > t ? nic : t;
    }
    double mem = (intra * bytes * p->copy_traffic + 2.0 * inter * bytes +
                  (reduce ? pn * bytes * (m->reduce_streams + 1) : 0)) / p->bw_mem;
    return mem > t ? mem : t;
}

double mpi_step(const MpiModel *m, MpiComm c, MpiPattern pat, int d, int k, int rem, double bytes, bool reduce)
{
    if (c.n < 2 || bytes < 0)
        return 0;
    if (pat == MPI_PAT_SHIFT && c.n % c.per_node == 0)
        return shift_step(m, c, d, bytes, reduce);
    int cap = pat == MPI_PAT_TREE ? (k > 1 ? k - 1 : 1) : 1;
    bool pull = pat == MPI_PAT_TREE && !reduce, exchange = pat == MPI_PAT_XOR || pat == MPI_PAT_SHIFT;
    int *dst = g_new(int, cap);
    StepAcc a = acc_new(c);
    for (int i = 0; i < c.n; i++) {
        int nd = pattern_dsts(c, pat, d, k, rem, i, dst, cap);
        double t = 0, lat = 0;
        for (int j = 0; j < nd; j++)
            acc_message(m, c, &a, i, dst[j], bytes, &t, &lat, reduce, exchange);
        /* a tree's children pull the same buffer at once (single-copy
         * rendezvous: CMA, RDMA read): the parent pays each message's
         * overhead, the bytes once; eager, it copies into every child's
         * cell and each child copies out on its own */
        if (pull && nd > 1)
            t -= (nd - 1) * (net_any(c, i, dst, nd) ? bytes / m->p.bw_net
                             : bytes < m->l.rndv_shm ? bytes / m->p.bw_core
                                                     : mpi_shm_copy(m, bytes));
        if (nd > 0 && t + lat > a.rank_max)
            a.rank_max = t + lat;
    }
    g_free(dst);
    return acc_finish(m, &a);
}

/* Every rank sends each other rank a message and receives one from it, as
 * osu_bibw's ranks do (mpi_p2p_bidir_time): each message costs the rank's
 * core the library's and the transport's software at both ends; across the
 * network the NIC's DMA of one message overlaps the core's work on the
 * next (the window's pipeline), in shared memory the core copies, so that
 * adds. The latency is the point-to-point message's (the transport's
 * eager or rendezvous, the receiver's completion), once per window. */
double mpi_all_pairs(const MpiModel *m, MpiComm c, double bytes, int window)
{
    const MpiPlatform *p = &m->p;
    if (c.n < 2)
        return 0;
    long pn = c.per_node, n = c.n, inter = n - pn, intra = pn - 1;
    double lat = inter > 0 ? mpi_net_latency(m, bytes) : p->lat_shm;
    long rounds = window > 0 ? (n - 2) / window + 1 : 1;
    double rank = mpi_net_train(m, bytes, inter, 2, intra * (mpi_shm_soft(m) + mpi_shm_copy(m, bytes)), rounds * lat);
    double nic = pn * inter * bytes / p->bw_nic;
    double mem = (pn * intra * bytes * p->copy_traffic + 2.0 * pn * inter * bytes) / p->bw_mem;
    double t = rank > nic ? rank : nic;
    return mem > t ? mem : t;
}

/* ---------------- trees ---------------- */

static int rounds_of(int n, int radix, long *top)
{
    int r = 0;
    long s = 1;
    while (s < n) {
        s *= radix;
        r++;
    }
    *top = s / radix;
    return r;
}

double mpi_bcast_tree(const MpiModel *m, MpiComm c, double bytes, int radix)
{
    long d;
    int r = rounds_of(c.n, radix, &d);
    double t = 0;
    for (int i = 0; i < r; i++, d /= radix) /* the root's farthest subtree first */
        t += mpi_step(m, c, MPI_PAT_TREE, (int)d, radix, 0, bytes, false);
    return t;
}

double mpi_reduce_tree(const MpiModel *m, MpiComm c, double bytes, int radix)
{
    long top;
    int r = rounds_of(c.n, radix, &top);
    double t = 0;
    long d = 1;
    for (int i = 0; i < r; i++, d *= radix) /* leaves first */
        t += mpi_step(m, c, MPI_PAT_TREE, (int)d, radix, 0, bytes, true);
    return t;
}

static int tree_children(MpiComm c, int radix)
{
    int children = 0;
    for (long d = 1; d < c.n; d *= radix)
        for (int j = 1; j < radix && (long)j * d < c.n; j++)
            children++;
    return children;
}

/* What the root of a k-nomial reduce does itself: receive and reduce each
 * child's buffer, the latencies aside (in a pipeline of segments they
 * overlap the other ranks' work; the root's own work is the throughput).
 * Across nodes each receive costs the software of a network message
 * (mpi_net_soft: the transport's completion event too); the rendezvous'
 * round trip is latency, which the NICs overlap as in osu_bw's window. */
double mpi_reduce_root_busy(const MpiModel *m, MpiComm c, double bytes, int radix)
{
    bool net = c.per_node < c.n;
    double move = net ? mpi_net_soft(m, 1) + bytes / m->p.bw_net : mpi_shm_soft(m) + mpi_shm_copy(m, bytes);
    return tree_children(c, radix) * (move + bytes * m->reduce_streams / m->p.bw_core);
}

/* The root of a k-nomial bcast: each child's message costs it the
 * software of a send (they pull the bytes, once). */
double mpi_bcast_root_busy(const MpiModel *m, MpiComm c, double bytes, int radix)
{
    bool net = c.per_node < c.n;
    int children = tree_children(c, radix);
    return net ? children * mpi_net_soft(m, 1) + bytes / m->p.bw_net : children * mpi_shm_soft(m);
}

/* ---------------- all-reduce ---------------- */

double mpi_allreduce_rd(const MpiModel *m, MpiComm c, double bytes)
{
    int pof2 = mpi_pof2_floor(c.n), rem = c.n - pof2;
    double t = 0;
    if (rem)
        t += 2 * mpi_step(m, c, MPI_PAT_FOLD, 0, 0, rem, bytes, true); /* fold in, and the result back */
    for (int d = 1; d < pof2; d *= 2)
        t += mpi_step(m, c, MPI_PAT_XOR, d, 0, rem, bytes, true);
    return t;
}

/* Reduce-scatter by recursive halving (nearest partner first, half the data
 * each step), then all-gather by recursive doubling in reverse. */
double mpi_allreduce_rabenseifner(const MpiModel *m, MpiComm c, double bytes)
{
    int pof2 = mpi_pof2_floor(c.n), rem = c.n - pof2;
    double t = 0, b = bytes;
    if (rem)
        t += 2 * mpi_step(m, c, MPI_PAT_FOLD, 0, 0, rem, bytes, true);
    for (int d = 1; d < pof2; d *= 2) {
        b /= 2;
        double s = mpi_step(m, c, MPI_PAT_XOR, d, 0, rem, b, true);
        t += s + mpi_step(m, c, MPI_PAT_XOR, d, 0, rem, b, false);
    }
    return t;
}

double mpi_allreduce_ring(const MpiModel *m, MpiComm c, double bytes)
{
    double b = bytes / c.n;
    return (c.n - 1) * (mpi_step(m, c, MPI_PAT_SHIFT, 1, 0, 0, b, true) + mpi_step(m, c, MPI_PAT_SHIFT, 1, 0, 0, b, false));
}

/* ---------------- all-to-all ---------------- */

double mpi_alltoall_bruck(const MpiModel *m, MpiComm c, double per_peer)
{
    double t = 2 * c.n * per_peer / m->p.bw_core; /* the local rotations before and after */
    for (int d = 1; d < c.n; d *= 2) {
        int blocks = 0;
        for (int i = 0; i < c.n; i++)
            blocks += (i & d) != 0;
        /* a derived datatype per round; its blocks packed, unpacked and copied back */
        t += mpi_step(m, c, MPI_PAT_SHIFT, d, 0, 0, blocks * per_peer, false) + m->l.ddt_round +
             3.0 * blocks * m->l.ddt_block;
    }
    return t;
}

double mpi_alltoall_pairwise(const MpiModel *m, MpiComm c, double per_peer)
{
    double t = per_peer / m->p.bw_core; /* its own block */
    for (int k = 1; k < c.n; k++)
        t += mpi_step(m, c, MPI_PAT_SHIFT, k, 0, 0, per_peer, false);
    return t;
}

/* ---------------- all-gather, reduce-scatter ---------------- */

double mpi_allgather_ring(const MpiModel *m, MpiComm c, double total)
{
    return (c.n - 1) * mpi_step(m, c, MPI_PAT_SHIFT, 1, 0, 0, total / c.n, false);
}

double mpi_allgather_rd(const MpiModel *m, MpiComm c, double total)
{
    int pof2 = mpi_pof2_floor(c.n);
    if (pof2 != c.n)
        return mpi_allgather_bruck(m, c, total);
    double t = 0;
    for (int d = 1; d < c.n; d *= 2)
        t += mpi_step(m, c, MPI_PAT_XOR, d, 0, 0, total / c.n * d, false);
    return t;
}

double mpi_allgather_bruck(const MpiModel *m, MpiComm c, double total)
{
    double blk = total / c.n, t = total / m->p.bw_core; /* the final rotation */
    for (int d = 1; d < c.n; d *= 2)
        t += mpi_step(m, c, MPI_PAT_SHIFT, d, 0, 0, blk * (d < c.n - d ? d : c.n - d), false);
    return t;
}

/* Neighbor exchange (Chen et al.): n/2 rounds with the left and right
 * neighbours in turn, one block in the first, two after; an odd n runs the
 * ring instead, as Open MPI does. */
double mpi_allgather_neighbor(const MpiModel *m, MpiComm c, double total)
{
    if (c.n % 2)
        return mpi_allgather_ring(m, c, total);
    double blk = total / c.n;
    return mpi_step(m, c, MPI_PAT_SHIFT, 1, 0, 0, blk, false) +
           (c.n / 2 - 1) * mpi_step(m, c, MPI_PAT_SHIFT, 1, 0, 0, 2 * blk, false);
}

/* Binomial scatter from rank 0: in the round of stride d the holders of a
 * subtree's data send the farther half, d blocks, down the tree. */
double mpi_scatter_binomial(const MpiModel *m, MpiComm c, double total)
{
    long d;
    int r = rounds_of(c.n, 2, &d);
    double t = 0, blk = total / c.n;
    for (int i = 0; i < r; i++, d /= 2)
        t += mpi_step(m, c, MPI_PAT_TREE, (int)d, 2, 0, blk * d, false);
    return t;
}

/* The root sends each other rank its block, one blocking send after
 * another (coll_base_scatter.c, basic_linear): its shared-memory copies on
 * its core; its network sends as a window's (mpi_net_train), the last
 * one's latency paid, while they go eagerly; past the transport's eager
 * limit each send returns only once its target has pulled the block, so
 * each pays its whole latency. */
double mpi_scatter_linear(const MpiModel *m, MpiComm c, double total)
{
    const MpiPlatform *p = &m->p;
    double blk = total / c.n;
    long intra = c.per_node - 1, inter = c.n - c.per_node;
    double core = intra * (mpi_shm_soft(m) + mpi_shm_copy(m, blk));
    if (inter <= 0)
        return p->lat_shm + core;
    if (blk > p->net_eager)
        return core + inter * (mpi_net_latency(m, blk) + mpi_net_send(m, blk));
    return mpi_net_train(m, blk, inter, 1, core, mpi_net_latency(m, blk));
}

double mpi_reducescatter_rh(const MpiModel *m, MpiComm c, double total)
{
    int pof2 = mpi_pof2_floor(c.n), rem = c.n - pof2;
    double t = rem ? 2 * mpi_step(m, c, MPI_PAT_FOLD, 0, 0, rem, total, true) : 0, b = total;
    for (int d = pof2 / 2; d >= 1; d /= 2) {
        b /= 2;
        t += mpi_step(m, c, MPI_PAT_XOR, d, 0, rem, b, true);
    }
    return t;
}

double mpi_reducescatter_ring(const MpiModel *m, MpiComm c, double total)
{
    return (c.n - 1) * mpi_step(m, c, MPI_PAT_SHIFT, 1, 0, 0, total / c.n, true);
}
