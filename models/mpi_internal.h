/* Private to the MPI collective model (models/mpi_*.c): the model object,
 * the library parameters, and the step-cost primitives the algorithms and
 * the libraries' selections share. */
#ifndef MPI_INTERNAL_H
#define MPI_INTERNAL_H

#include "mpi_model.h"

#include <math.h>

/* What models/presets/mpi.json says of one library. */
typedef struct {
    double overhead;                     /* per message, s */
    double ddt_round, ddt_block;         /* Bruck's datatype costs, s */
    double han_segment;                  /* Open MPI han pipeline segment, bytes */
    int knomial_radix;                   /* Open MPI tuned k-nomial bcast */
    int throttle;                        /* MPICH scattered all-to-all window */
    int reduce_radix, bcast_radix;       /* MPICH release_gather trees */
    double bcast_cell;                   /* MPICH release_gather buffer, bytes */
    double rndv_shm;                     /* shared memory: eager (two copies) below, single-copy rendezvous from, bytes */
    double rndv_cost_shm;                /* the rendezvous' fixed cost beyond the RTS latency (CMA syscall), s */
    double smp_max;                      /* MPICH: largest allreduce run node-aware (composition alpha), bytes */
    double cxi_rndv_thr;                 /* a CXI rendezvous threshold the library sets itself, bytes (0: libfabric's) */
} MpiLibParams;

struct MpiModel {
    MpiPlatform p;
    MpiLib lib;
    MpiLibParams l;
    double reduce_streams; /* bytes a core streams per byte it reduces */
    double llc;            /* a node's last-level caches, bytes (0: not described: always DRAM) */
    double bw_dram;        /* p.bw_mem before the cache residency of one collective's buffers */
    double core_copy;      /* a core's copy rate between processes where the file gives one, B/s (0: the path's) */
    /* the transport's rendezvous threshold by libfabric version: `rndv_thr`
     * before the first `thr_from`, then each from its version on */
    double rndv_thr, rndv_get_min, thr_val[4];
    int thr_from[4], n_thr;
    bool cxi;              /* the NICs' transport is libfabric's CXI provider */
};

/* One rank's cost of moving `bytes` to a rank on its node, beyond the path
 * latency and the per-message overhead: eager through a shared FIFO cell
 * (the sender copies in, the receiver copies out) below the library's
 * rendezvous threshold, else the RTS, a CMA get and one copy. */
static inline double mpi_shm_copy(const MpiModel *m, double bytes)
{
    if (bytes < m->l.rndv_shm)
        return 2 * bytes / m->p.bw_core;
    return m->p.lat_shm + m->l.rndv_cost_shm + bytes / m->p.bw_core;
}

/* The software one shared-memory message costs each of its ends: the
 * library's, and what the node's cores add to hand a queue cell over (a
 * per-node fit where models/presets/mpi.json has one; 0 elsewhere). */
static inline double mpi_shm_soft(const MpiModel *m) { return m->p.overhead + m->p.shm_overhead; }

/* The software one network message costs a core at `ends` of its ends on
 * that core (1: it sends or receives it; 2: it sends one and receives one):
 * the library's and the transport's per message.  The one place for it:
 * point-to-point, exchanges, all-to-all, the linear scatter and the roots'
 * work in pipelined trees all pay this. */
static inline double mpi_net_soft(const MpiModel *m, int ends)
{
    return ends * (m->p.overhead + m->p.net_overhead);
}

/* One network message's cost to its sender beyond its latency: the
 * software and the bytes. */
static inline double mpi_net_send(const MpiModel *m, double bytes)
{
    return mpi_net_soft(m, 1) + bytes / m->p.bw_net;
}

/* The same message when the sender also receives one in the same step (an
 * exchange: osu_bibw, a shift, recursive doubling; mpi_p2p_bidir_time): its
 * core also runs the library's and the transport's software of the
 * message it receives (its own send's completion event and the incoming
 * one come back together, where a one-way message's sender handles its
 * completion during the flight). */
static inline double mpi_net_exchange(const MpiModel *m, double bytes)
{
    return mpi_net_send(m, bytes) + mpi_net_soft(m, 1);
}

/* A network message's latency: the path's, the receiver's transport
 * software (its completion event), the NIC's read of the host when the
 * payload does not travel with the command and, past the transport's eager
 * limit, its rendezvous: the target pulls the rest, round trips of the path
 * (the NICs overlap them with the sender's next messages), and handles its
 * extra completion events. */
static inline double mpi_net_latency(const MpiModel *m, double bytes)
{
    const MpiPlatform *p = &m->p;
    double l = p->lat_net + p->net_overhead + (bytes > p->net_ll_payload ? p->net_host_read : 0);
    return bytes > p->net_eager ? l + p->net_rndv_trips * 2 * p->lat_net + p->net_rndv_events * p->net_overhead : l;
}

/* One rank's `k` network messages of `bytes` posted back to back (osu_bw's
 * window, a linear all-to-all's or scatter's sends), beside `core` seconds
 * of its core's other work in the same step (its shared-memory copies):
 * the core's software of each message (at `ends` ends) runs under the
 * NIC's DMA of the previous one, a two-stage pipeline, after `lat`, the
 * latency paid. */
static inline double mpi_net_train(const MpiModel *m, double bytes, long k, int ends, double core, double lat)
{
    if (k <= 0)
        return lat + core;
    double soft = mpi_net_soft(m, ends), wire = bytes / m->p.bw_net;
    return lat + fmax(core + k * soft + wire, soft + k * wire);
}

/* A communicator: n ranks, `per_node` consecutive ranks on each node. */
typedef struct {
    int n, per_node;
} MpiComm;

/* Patterns of one step (who sends to whom at once). */
typedef enum {
    MPI_PAT_XOR,   /* i <-> i ^ d among the 2^k ranks left after folding `rem` (recursive doubling) */
    MPI_PAT_SHIFT, /* i -> (i + d) mod n (ring: d = 1; Bruck, pairwise exchange) */
    MPI_PAT_TREE,  /* round of a k-nomial tree with stride d: i = 0 mod d*k sends to i + j*d, j < k */
    MPI_PAT_FOLD,  /* the non-power-of-two fold: even i < 2 rem sends to i + 1 */
} MpiPattern;

/* Time of one step: every sender sends `bytes` per message of the pattern
 * (`reduce`: the receiver reduces it into its buffer). */
double mpi_step(const MpiModel *m, MpiComm c, MpiPattern pat, int d, int k, int rem, double bytes, bool reduce);

/* All pairs at once (linear all-to-all): every rank sends `bytes` to each
 * other rank, `window` messages in flight (0: all). */
double mpi_all_pairs(const MpiModel *m, MpiComm c, double bytes, int window);

/* The building blocks, on communicator c (times in s). */
double mpi_bcast_tree(const MpiModel *m, MpiComm c, double bytes, int radix);
double mpi_reduce_tree(const MpiModel *m, MpiComm c, double bytes, int radix);
/* The root's own work in those trees, latencies aside: a pipeline's
 * throughput (mpi_algos.c). */
double mpi_reduce_root_busy(const MpiModel *m, MpiComm c, double bytes, int radix);
double mpi_bcast_root_busy(const MpiModel *m, MpiComm c, double bytes, int radix);
double mpi_allreduce_rd(const MpiModel *m, MpiComm c, double bytes);
double mpi_allreduce_rabenseifner(const MpiModel *m, MpiComm c, double bytes);
double mpi_allreduce_ring(const MpiModel *m, MpiComm c, double bytes);
double mpi_alltoall_bruck(const MpiModel *m, MpiComm c, double per_peer);
double mpi_alltoall_pairwise(const MpiModel *m, MpiComm c, double per_peer);
double mpi_allgather_ring(const MpiModel *m, MpiComm c, double total);
double mpi_allgather_rd(const MpiModel *m, MpiComm c, double total);
double mpi_allgather_bruck(const MpiModel *m, MpiComm c, double total);
double mpi_allgather_neighbor(const MpiModel *m, MpiComm c, double total);
double mpi_scatter_linear(const MpiModel *m, MpiComm c, double total);
double mpi_scatter_binomial(const MpiModel *m, MpiComm c, double total);
double mpi_reducescatter_rh(const MpiModel *m, MpiComm c, double total);
double mpi_reducescatter_ring(const MpiModel *m, MpiComm c, double total);

/* The libraries' selections (mpi_select.c). */
bool mpi_select_openmpi(const MpiModel *m, CollOp op, double bytes, MpiCost *out);
bool mpi_select_mpich(const MpiModel *m, CollOp op, double bytes, MpiCost *out);

static inline int mpi_pof2_floor(int n)
{
    int p = 1;
    while (p * 2 <= n)
        p *= 2;
    return p;
}

#endif
