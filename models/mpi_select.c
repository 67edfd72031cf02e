/* What each library runs by default, and its cost.
 *
 * Open MPI 5.0.x: coll/han (priority 35) takes allreduce, reduce, bcast and
 * allgather on communicators that span nodes (it disqualifies itself when
 * every rank is on one node); everything else, and han's node-local and
 * leader levels, is coll/tuned (priority 30) with its fixed decision rules
 * (ompi/mca/coll/tuned/coll_tuned_decision_fixed.c at v5.0.8: algorithm by
 * communicator size and message size).  han's allreduce pipelines 64 KiB
 * segments through node reduce (tuned), leaders' reduce and bcast (libnbc,
 * binomial) and node bcast (tuned).
 *
 * MPICH 4.x (ch4, maint/tuning/coll/{ch4,mpir}/generic.json at v4.3.2):
 * allreduce over several nodes is composition alpha (node reduce, leaders'
 * allreduce by MPIR's rules, node bcast) up to 32 KiB (Cray MPICH: to its
 * MPICH_ALLREDUCE_MAX_SMP_SIZE, models/presets/mpi.json), above it composition
 * beta (MPIR's flat allreduce over every rank), inside a node the POSIX
 * release_gather trees; bcast by node below 12 KiB (and on a power of two
 * below 512 KiB), else composition gamma (MPIR's flat bcast); all-to-all is
 * flat: Bruck up to 256 bytes per peer,
 * "scattered" (32 requests in flight) up to 32 KiB, then pairwise exchange. */
#include "mpi_internal.h"

static MpiComm world(const MpiModel *m) { return (MpiComm){m->p.nodes * m->p.ppn, m->p.ppn}; }
static MpiComm node_comm(const MpiModel *m) { return (MpiComm){m->p.ppn, m->p.ppn}; }
static MpiComm leaders(const MpiModel *m) { return (MpiComm){m->p.nodes, 1}; }

static bool done(MpiCost *out, double t, const char *algo)
{
    out->time_s = t;
    out->algo = algo;
    return true;
}

/* ---------------- Open MPI coll/tuned fixed rules ---------------- */

/* bcast: binomial, k-nomial (radix 4) or linear as the rules pick; the
 * pipelined chain and split-binary variants are costed as the binomial tree. */
static double tuned_bcast(const MpiModel *m, MpiComm c, double b, const char **name)
{
    int n = c.n;
    if (n < 2)
        return 0;
    bool knomial = (n >= 16 && n < 32 && b < 4096) || (n >= 32 && n < 64 && b >= 2048) || (n >= 64 && n < 128) ||
                   (n >= 256 && b >= 65536);
    bool linear = n < 16 && b >= 8192 && b < 1048576;
    if (name)
        *name = knomial ? "knomial" : linear ? "linear" : "binomial";
    return mpi_bcast_tree(m, c, b, knomial ? m->l.knomial_radix : linear ? n : 2);
}

/* reduce (commutative): linear below 8 ranks, else the binomial tree (the
 * binary-tree variants the rules pick for some sizes are costed as it). */
static double tuned_reduce(const MpiModel *m, MpiComm c, double b, const char **name)
{
    if (c.n < 2)
        return 0;
    bool linear = c.n < 8;
    if (name)
        *name = linear ? "linear" : "binomial";
    return mpi_reduce_tree(m, c, b, linear ? c.n : 2);
}

/* allreduce (commutative op), algorithm ids as tuned numbers them. */
static int tuned_allreduce_alg(int n, double b)
{
    if (n < 4)
        return b < 8 ? 4 : b < 4096 ? 3 : b < 8192 ? 4 : b < 16384 ? 3 : b < 65536 ? 4 : b < 262144 ? 5 : 6;
    if (n < 8)
        return b < 16 ? 4 : b < 8192 ? 3 : 6;
    if (n < 16)
        return b < 8192 ? 3 : 6;
    if (n < 32)
        return b < 64 ? 5 : b < 4096 ? 3 : 6;
    if (n < 64)
        return b < 128 ? 5 : 6;
    if (n < 128)
        return b < 262144 ? 3 : 6;
    if (n < 256)
        return b < 131072 ? 2 : b < 262144 ? 3 : 6;
    if (n < 512)
        return b < 4096 ? 2 : 6;
    if (n < 2048)
        return b < 2048 ? 2 : b < 16384 ? 3 : 6;
    if (n < 4096)
        return b < 2048 ? 2 : b < 4096 ? 5 : b < 16384 ? 3 : 6;
    return b < 2048 ? 2 : b < 16384 ? 5 : b < 32768 ? 3 : 6;
}

static bool tuned_allreduce(const MpiModel *m, MpiComm c, double b, MpiCost *out)
{
    switch (tuned_allreduce_alg(c.n, b)) {
    case 2: /* nonoverlapping: reduce, then bcast */
        return done(out, tuned_reduce(m, c, b, NULL) + tuned_bcast(m, c, b, NULL), "tuned:nonoverlapping");
    case 3: return done(out, mpi_allreduce_rd(m, c, b), "tuned:recursive_doubling");
    case 4: return done(out, mpi_allreduce_ring(m, c, b), "tuned:ring");
    case 5: return done(out, mpi_allreduce_ring(m, c, b), "tuned:segmented_ring");
    default: return done(out, mpi_allreduce_rabenseifner(m, c, b), "tuned:rabenseifner");
    }
}

/* alltoall by the block each rank sends each peer: 1 linear, 2 pairwise,
 * 3 modified Bruck, 4 linear_sync (coll_tuned_alltoall_algorithm_max_requests
 * defaults to 0, no limit: every request at once, costed as linear),
 * 5 two_proc (a pairwise exchange of two ranks). */
static int tuned_alltoall_alg(int n, double b)
{
    if (n == 2)
        return b < 2 ? 2 : b < 4 ? 5 : b < 16 ? 2 : b < 64 ? 5 : b < 256 ? 2 : b < 4096 ? 5 : b < 32768 ? 2
             : b < 262144 ? 4 : b < 1048576 ? 5 : 2;
    if (n < 8)
        return b < 8192 ? 4 : b < 16384 ? 1 : b < 65536 ? 4 : b < 524288 ? 1 : b < 1048576 ? 2 : 1;
    if (n < 16)
        return b < 262144 ? 4 : 1;
    if (n < 32)
        return b < 4 ? 4 : b < 512 ? 3 : b < 8192 ? 4 : b < 32768 ? 1 : b < 262144 ? 4 : b < 524288 ? 1 : 4;
    if (n < 64)
        return b < 512 ? 3 : b < 524288 ? 1 : 4;
    if (n < 128)
        return b < 1024 ? 3 : b < 2048 ? 1 : b < 4096 ? 4 : b < 262144 ? 1 : 2;
    if (n < 256)
        return b < 1024 ? 3 : b < 2048 ? 4 : b < 262144 ? 1 : 2;
    if (n < 512)
        return b < 1024 ? 3 : b < 8192 ? 4 : b < 32768 ? 1 : 2;
    if (n < 1024)
        return b < 512 ? 3 : b < 8192 ? 4 : b < 16384 ? 1 : b < 131072 ? 4 : b < 262144 ? 1 : 2;
    if (n < 2048)
        return b < 512 ? 3 : b < 1024 ? 4 : b < 2048 ? 1 : b < 16384 ? 4 : b < 262144 ? 1 : 4;
    if (n < 4096)
        return b < 1024 ? 3 : b < 4096 ? 4 : b < 8192 ? 1 : b < 131072 ? 4 : 1;
    return b < 2048 ? 3 : b < 8192 ? 4 : b < 16384 ? 1 : b < 32768 ? 4 : b < 65536 ? 1 : 4;
}

static bool tuned_alltoall(const MpiModel *m, MpiComm c, double per_peer, MpiCost *out)
{
    switch (tuned_alltoall_alg(c.n, per_peer)) {
    case 2: return done(out, mpi_alltoall_pairwise(m, c, per_peer), "tuned:pairwise");
    case 5: return done(out, mpi_alltoall_pairwise(m, c, per_peer), "tuned:two_proc");
    case 3: return done(out, mpi_alltoall_bruck(m, c, per_peer), "tuned:modified_bruck");
    case 4: return done(out, mpi_all_pairs(m, c, per_peer, 0), "tuned:linear_sync");
    default: return done(out, mpi_all_pairs(m, c, per_peer, 0), "tuned:linear");
    }
}

/* allgather by the block each rank contributes: 2 bruck, 3 recursive
 * doubling (Bruck off a power of two, as Open MPI falls back), 4 ring,
 * 5 neighbor exchange, 6 two_proc (costed as recursive doubling). */
static int tuned_allgather_alg(int n, double b)
{
    if (n == 2)
        return 6;
    if (n < 32)
        return 3;
    if (n < 64)
        return b < 1024 ? 3 : b < 65536 ? 5 : 4;
    if (n < 128)
        return b < 512 ? 3 : b < 65536 ? 5 : 4;
    if (n < 256)
        return b < 512 ? 3 : b < 131072 ? 5 : b < 524288 ? 4 : b < 1048576 ? 5 : 4;
    if (n < 512)
        return b < 32 ? 3 : b < 128 ? 2 : b < 1024 ? 3 : b < 131072 ? 5 : b < 524288 ? 4 : b < 1048576 ? 5 : 4;
    if (n < 1024)
        return b < 64 ? 3 : b < 256 ? 2 : b < 2048 ? 3 : 5;
    if (n < 2048)
        return b < 4 ? 3 : b < 8 ? 2 : b < 16 ? 3 : b < 32 ? 2 : b < 256 ? 3 : b < 512 ? 2 : b < 4096 ? 3 : 5;
    if (n < 4096)
        return b < 32 ? 2 : b < 128 ? 3 : b < 512 ? 2 : b < 4096 ? 3 : 5;
    return b < 2 ? 3 : b < 8 ? 2 : b < 16 ? 3 : b < 512 ? 2 : b < 4096 ? 3 : 5;
}

static bool tuned_allgather(const MpiModel *m, MpiComm c, double total, MpiCost *out)
{
    switch (tuned_allgather_alg(c.n, total / c.n)) {
    case 2: return done(out, mpi_allgather_bruck(m, c, total), "tuned:bruck");
    case 4: return done(out, mpi_allgather_ring(m, c, total), "tuned:ring");
    case 5: return done(out, mpi_allgather_neighbor(m, c, total), c.n % 2 ? "tuned:ring" : "tuned:neighbor");
    default:
        return done(out, mpi_allgather_rd(m, c, total),
                    mpi_pof2_floor(c.n) == c.n ? "tuned:recursive_doubling" : "tuned:bruck");
    }
}

/* reduce_scatter by the whole buffer: 1 non-overlapping (reduce to rank 0,
 * then a linear scatter), 2 recursive halving, 3 ring, 4 butterfly (log n
 * halving exchanges: costed as recursive halving). */
static int tuned_reducescatter_alg(int n, double b)
{
    if (n < 4)
        return b < 65536 ? 3 : b < 131072 ? 4 : 3;
    if (n < 8)
        return b < 8 ? 1 : b < 262144 ? 2 : 3;
    if (n < 32)
        return b < 262144 ? 2 : 3;
    if (n < 64)
        return b < 64 ? 1 : b < 2048 ? 2 : b < 524288 ? 4 : 3;
    if (n < 128)
        return b < 256 ? 1 : b < 512 ? 2 : b < 2048 ? 4 : b < 4096 ? 2 : 4;
    if (n < 256)
        return b < 256 ? 1 : b < 512 ? 2 : 4;
    if (n < 512)
        return b < 256 ? 1 : b < 1024 ? 2 : 4;
    if (n < 1024)
        return b < 512 ? 1 : b < 2048 ? 2 : b < 8192 ? 4 : b < 16384 ? 2 : 4;
    if (n < 2048)
        return b < 512 ? 1 : b < 4096 ? 2 : b < 16384 ? 4 : b < 32768 ? 2 : 4;
    if (n < 4096)
        return b < 512 ? 1 : b < 4096 ? 2 : 4;
    return b < 1024 ? 1 : b < 8192 ? 2 : 4;
}

static bool tuned_reducescatter(const MpiModel *m, MpiComm c, double total, MpiCost *out)
{
    switch (tuned_reducescatter_alg(c.n, total)) {
    case 1:
        return done(out, tuned_reduce(m, c, total, NULL) + mpi_scatter_linear(m, c, total), "tuned:non-overlapping");
    case 2: return done(out, mpi_reducescatter_rh(m, c, total), "tuned:recursive_halving");
    case 3: return done(out, mpi_reducescatter_ring(m, c, total), "tuned:ring");
    default: return done(out, mpi_reducescatter_rh(m, c, total), "tuned:butterfly");
    }
}

/* ---------------- Open MPI coll/han ---------------- */

/* Radix of the tree tuned runs for a node-level bcast or reduce. */
static int tuned_bcast_radix(const MpiModel *m, MpiComm c, double b)
{
    const char *name = "binomial";
    (void)tuned_bcast(m, (MpiComm){c.n < 2 ? 2 : c.n, c.per_node}, b, &name);
    return g_str_equal(name, "knomial") ? m->l.knomial_radix : g_str_equal(name, "linear") ? c.n : 2;
}

static int tuned_reduce_radix(MpiComm c) { return c.n < 8 ? c.n : 2; }

/* han pipelines segments through its stages: the first segment pays every
 * stage's latency; after it a segment leaves every time the busiest rank
 * (the node leader: root of the node reduce and bcast and member of the
 * leaders' collectives, which progress in the background) has done its own
 * work on one segment. */
static double han_pipeline(const MpiModel *m, double b, bool low_reduce, bool up_reduce, bool up_bcast,
                           bool low_bcast)
{
    double seg = m->l.han_segment, s = b < seg ? b : seg;
    double nseg = b > seg ? ceil(b / seg) : 1;
    MpiComm node = node_comm(m), lead = leaders(m);
    double first = 0, low = 0, up = 0;
    if (low_reduce && node.n > 1) {
        first += tuned_reduce(m, node, s, NULL);
        low += mpi_reduce_root_busy(m, node, s, tuned_reduce_radix(node));
    }
    if (low_bcast && node.n > 1) {
        int k = tuned_bcast_radix(m, node, s);
        first += mpi_bcast_tree(m, node, s, k);
        low += mpi_bcast_root_busy(m, node, s, k);
    }
    if (up_reduce) {
        first += mpi_reduce_tree(m, lead, s, 2);
        up += mpi_reduce_root_busy(m, lead, s, 2);
    }
    if (up_bcast) {
        first += mpi_bcast_tree(m, lead, s, 2);
        up += mpi_bcast_root_busy(m, lead, s, 2);
    }
    return first + (nseg - 1) * (low > up ? low : up);
}

static double han_allreduce(const MpiModel *m, double b) { return han_pipeline(m, b, true, true, true, true); }
static double han_bcast(const MpiModel *m, double b) { return han_pipeline(m, b, false, false, true, true); }
static double han_reduce(const MpiModel *m, double b) { return han_pipeline(m, b, true, true, false, false); }

bool mpi_select_openmpi(const MpiModel *m, CollOp op, double bytes, MpiCost *out)
{
    MpiComm w = world(m);
    bool han = m->p.nodes > 1;
    switch (op) {
    case COLL_ALLREDUCE:
        return han ? done(out, han_allreduce(m, bytes), "han(tuned reduce, binomial leaders, tuned bcast)")
                   : tuned_allreduce(m, w, bytes, out);
    case COLL_BROADCAST:
        if (han)
            return done(out, han_bcast(m, bytes), "han(binomial leaders, tuned bcast)");
    {
        const char *name = NULL;
        double t = tuned_bcast(m, w, bytes, &name);
        return done(out, t, g_str_equal(name, "knomial") ? "tuned:knomial" : g_str_equal(name, "linear") ? "tuned:linear" : "tuned:binomial");
    }
    case COLL_REDUCE:
        if (han)
            return done(out, han_reduce(m, bytes), "han(tuned reduce, binomial leaders)");
        return done(out, tuned_reduce(m, w, bytes, NULL), "tuned:reduce");
    case COLL_ALLGATHER: /* han's allgather is costed as tuned's flat choice */
        return tuned_allgather(m, w, bytes, out);
    case COLL_REDUCESCATTER: return tuned_reducescatter(m, w, bytes, out);
    case COLL_ALLTOALL: return tuned_alltoall(m, w, bytes / w.n, out);
    default: return false;
    }
}

/* ---------------- MPICH ---------------- */

/* MPIR_Bcast (MPIR_CVAR_BCAST_SHORT_MSG_SIZE 12288, _LONG_MSG_SIZE 524288,
 * _MIN_PROCS 8): binomial for short messages or few ranks, else a binomial
 * scatter and an all-gather (recursive doubling for medium messages on a
 * power of two, else the ring). */
static double mpir_bcast(const MpiModel *m, MpiComm c, double b, const char **name)
{
    if (c.n < 8 || b < 12288) {
        *name = "binomial";
        return mpi_bcast_tree(m, c, b, 2);
    }
    bool rd = b < 524288 && mpi_pof2_floor(c.n) == c.n;
    *name = rd ? "scatter_recursive_doubling_allgather" : "scatter_ring_allgather";
    return mpi_scatter_binomial(m, c, b) + (rd ? mpi_allgather_rd(m, c, b) : mpi_allgather_ring(m, c, b));
}

/* MPIR_Allreduce: recursive doubling up to 8 bytes or for counts below the
 * communicator's power of two (4-byte elements), else Rabenseifner. */
static double mpir_allreduce(const MpiModel *m, MpiComm c, double b, const char **name)
{
    bool rd = b <= 8 || b / 4 < mpi_pof2_floor(c.n);
    *name = rd ? "recursive_doubling" : "reduce_scatter_allgather";
    return rd ? mpi_allreduce_rd(m, c, b) : mpi_allreduce_rabenseifner(m, c, b);
}

/* release_gather inside a node (ch4/shm/posix/release_gather): no MPI
 * messages, flags in shared memory.  bcast: the root copies a cell of the
 * shared buffer in and releases a radix-64 flag tree, every rank copies the
 * cell out; reduce: every rank copies its cell in, a radix-4 tree's parents
 * reduce their children's cells as their flags arrive.  Buffers larger than
 * a cell pipeline through the cells: the first pays every level, then one
 * cell per the busiest rank's work on it. */
static int levels(int n, int radix)
{
    int l = 0;
    for (long s = 1; s < n; s *= radix)
        l++;
    return l;
}

static double rg_bcast(const MpiModel *m, double b)
{
    if (m->p.ppn < 2)
        return 0;
    double cell = b < m->l.bcast_cell ? b : m->l.bcast_cell, n = b > cell ? ceil(b / cell) : 1;
    double copy = cell / m->p.bw_core;
    return copy + levels(m->p.ppn, m->l.bcast_radix) * m->p.lat_shm + copy + (n - 1) * copy;
}

static double rg_reduce(const MpiModel *m, double b)
{
    if (m->p.ppn < 2)
        return 0;
    int k = m->l.reduce_radix, kids = k - 1 < m->p.ppn - 1 ? k - 1 : m->p.ppn - 1;
    double cell = b < m->l.bcast_cell ? b : m->l.bcast_cell, n = b > cell ? ceil(b / cell) : 1;
    double copy = cell / m->p.bw_core, red = kids * cell * m->reduce_streams / m->p.bw_core;
    /* a parent waits on its children one after another, reducing each one's
     * cell as its flag arrives (MPIDI_POSIX_mpi_release_gather_gather): a
     * line from each child's core per level, not one for them all */
    return copy + levels(m->p.ppn, k) * (kids * m->p.lat_shm + red) + (n - 1) * (copy + red);
}

bool mpi_select_mpich(const MpiModel *m, CollOp op, double bytes, MpiCost *out)
{
    MpiComm w = world(m);
    const char *name = NULL;
    switch (op) {
    case COLL_ALLREDUCE:
        if (m->p.nodes == 1) /* composition gamma: the node's shared-memory collective */
            return done(out, rg_reduce(m, bytes) + rg_bcast(m, bytes), "posix:release_gather");
        if (bytes > m->l.smp_max) { /* composition beta: MPIR's flat allreduce */
            double t = mpir_allreduce(m, w, bytes, &name);
            return done(out, t, g_str_equal(name, "recursive_doubling") ? "composition_beta(recursive_doubling)"
                                                                        : "composition_beta(reduce_scatter_allgather)");
        }
        {
            double up = mpir_allreduce(m, leaders(m), bytes, &name);
            return done(out, rg_reduce(m, bytes) + up + rg_bcast(m, bytes),
                        g_str_equal(name, "recursive_doubling") ? "composition_alpha(recursive_doubling)"
                                                                : "composition_alpha(reduce_scatter_allgather)");
        }
    case COLL_BROADCAST: {
        bool pof2 = mpi_pof2_floor(w.n) == w.n;
        if (w.n < 8 || bytes < 12288 || (pof2 && bytes < 524288)) /* compositions alpha and beta: by node */
            return done(out, mpi_bcast_tree(m, leaders(m), bytes, 2) + rg_bcast(m, bytes), "composition(binomial)");
        double t = mpir_bcast(m, w, bytes, &name); /* composition gamma: MPIR's flat bcast */
        return done(out, t, g_str_equal(name, "scatter_ring_allgather") ? "composition_gamma(scatter_ring_allgather)"
                                                                         : "composition_gamma(scatter_recursive_doubling_allgather)");
    }
    case COLL_REDUCE:
        return done(out, rg_reduce(m, bytes) + mpi_reduce_tree(m, leaders(m), bytes, 2), "composition(binomial)");
    case COLL_ALLGATHER:
        if (mpi_pof2_floor(w.n) == w.n && bytes < 524288)
            return done(out, mpi_allgather_rd(m, w, bytes), "mpir:recursive_doubling");
        if (bytes < 81920)
            return done(out, mpi_allgather_bruck(m, w, bytes), "mpir:brucks");
        return done(out, mpi_allgather_ring(m, w, bytes), "mpir:ring");
    case COLL_REDUCESCATTER:
        if (bytes < 524288)
            return done(out, mpi_reducescatter_rh(m, w, bytes), "mpir:recursive_halving");
        return done(out, mpi_reducescatter_ring(m, w, bytes), "mpir:pairwise");
    case COLL_ALLTOALL: {
        double pp = bytes / w.n;
        if (pp <= 256 && w.n >= 8)
            return done(out, mpi_alltoall_bruck(m, w, pp), "mpir:brucks");
        if (pp <= 32768)
            return done(out, mpi_all_pairs(m, w, pp, m->l.throttle), "mpir:scattered");
        return done(out, mpi_alltoall_pairwise(m, w, pp), "mpir:pairwise");
    }
    default: return false;
    }
}
