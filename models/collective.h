/* Collective communication: all-reduce, reduce-scatter, all-gather, broadcast,
 * reduce and all-to-all, each as ring, double binary tree, recursive
 * halving-doubling, direct, hierarchical, in-network (SHARP/CollNet) or
 * in-switch inside a node (NVLink SHARP, "NVLS"), with
 * NCCL-style protocols (LL, LL128, Simple) and channels.
 *
 * Two views of one model:
 *  - coll_cost: a closed-form alpha-beta cost.  Alpha is a base latency plus a
 *    per-step latency of the protocol on the link class crossed (the structure
 *    of NCCL's tuner); beta comes from the topology: the ring channels found on
 *    the node's links and the nodes' NIC bandwidth.
 *  - coll_append / coll_simulate: the same algorithm decomposed into pipelined
 *    chunk flows on the flow network, so contention with other traffic and
 *    oversubscribed fabrics come out of the simulation.
 * On an uncontended topology the two agree within a band per algorithm and op
 * that tests/test_collective.c states and holds (5% for rings at 16 MiB and up).
 *
 * Parameters (latencies, protocol efficiencies, achievable fraction of each
 * link kind) are data: models/presets/collectives.json. */
#ifndef COLLECTIVE_H
#define COLLECTIVE_H

#include "sim_exec.h"
#include "topo.h"

typedef enum {
    COLL_ALLREDUCE,
    COLL_REDUCESCATTER,
    COLL_ALLGATHER,
    COLL_BROADCAST,
    COLL_REDUCE,
    COLL_ALLTOALL,
    COLL_NUM_OPS
} CollOp;

typedef enum {
    COLL_ALGO_AUTO = -1,
    COLL_RING,
    COLL_TREE,
    COLL_RHD,
    COLL_DIRECT,
    COLL_HIER,
    COLL_COLLNET,
    COLL_NVLS, /* reduction inside the NVSwitch (NVLink SHARP); across nodes with in-network reduction */
    COLL_NVLS_TREE, /* NVLink SHARP inside each node, double binary tree across (NCCL 2.18+) */
    COLL_PAT,  /* reduce-scatter / all-gather at one rank per node (NCCL 2.23+) */
    COLL_TORUS, /* per-dimension bidirectional rings on a TPU torus (coll_torus.c) */
    COLL_NUM_ALGOS
} CollAlgo;

typedef enum { COLL_PROTO_AUTO = -1, COLL_LL, COLL_LL128, COLL_SIMPLE, COLL_NUM_PROTOS } CollProto;

const char *coll_op_name(CollOp op);       /* "allreduce" */
const char *coll_algo_name(CollAlgo a);    /* "ring" */
const char *coll_proto_name(CollProto p);  /* "simple" */
/* Every algorithm's name, in CollAlgo order, joined by '|' (for help texts). */
const char *coll_algo_choices(void);
/* Parse names (also nccl-tests style "all_reduce", "reduce_scatter"); -2 if unknown. */
int coll_op_parse(const char *s);
int coll_algo_parse(const char *s);
int coll_proto_parse(const char *s);
/* nccl-tests' bus-bandwidth factor: busbw = algbw * factor. */
double coll_busbw_factor(CollOp op, int nranks);

/* The model's parameters (models/presets/collectives.json, or a file of the
 * same form, or an overlay: {"overlay": "...", "parameters": {KEY: VALUE}}
 * on the default), each scalar addressed by its dotted key
 * ("link_efficiency.net", "base_latency.ring.simple"). */
typedef struct CollParams CollParams;
CollParams *coll_params_new(const char *path, GError **err); /* NULL: the default */
CollParams *coll_params_copy(const CollParams *p);
void coll_params_free(CollParams *p);
int coll_params_count(void);
const char *coll_params_key(int i);
int coll_params_find(const char *key); /* -1 if unknown */
double coll_params_get(const CollParams *p, int i);
bool coll_params_set(CollParams *p, int i, double v); /* false outside the key's bounds */
/* What a file may say for key i, the log-space spread calibration assumes
 * for it, and whether calibration fits it. */
void coll_params_bounds(int i, double *lo, double *hi, double *prior_sd, bool *fit);

/* The participating ranks on a topology, with what the model derived from it. */
typedef struct CollGroup CollGroup;

/* `ranks` (topology rank ids, copied) or NULL for all ranks.  Loads the
 * parameters from `params_path` or, when NULL, the default data file. */
CollGroup *coll_group_new(const Topo *t, const int *ranks, int nranks, const char *params_path, GError **err);
/* The same with parameters in hand (copied). */
CollGroup *coll_group_new_with(const Topo *t, const int *ranks, int nranks, const CollParams *p, GError **err);
/* Puts parameters `p` in place of the group's where they leave what the
 * group derived from the topology unchanged; false (nothing done) where a
 * new group must be made. */
bool coll_group_set_params(CollGroup *g, const CollParams *p);
void coll_group_free(CollGroup *g);
int coll_group_size(const CollGroup *g);
int coll_group_nodes(const CollGroup *g);
/* Per-rank ring bandwidth inside a node (sum over channels, after link
 * efficiency), and per-node NIC bandwidth; for reports and tests. */
double coll_group_intra_bw(const CollGroup *g);
double coll_group_inter_bw(const CollGroup *g);
int coll_group_channels(const CollGroup *g);
/* The channels a ring across nodes runs on: one per NIC the group's node
 * uses, or per intra-node ring where there are more (the intra count on one
 * node). */
int coll_group_ring_channels(const CollGroup *g);
/* A topology link's achievable bandwidth as the flow network gets it (raw
 * times its kind's efficiency), for callers that build their own net. */
double coll_group_link_cap(const CollGroup *g, int link);
/* The NCCL version whose tuner and algorithms the model follows, as NCCL's
 * version code (major*10000 + minor*100 + patch: 21803 = 2.18.3); 0 (the
 * default) for the newest the model knows.  Gates NVLS (2.17), NVLSTree (2.18)
 * and PAT (2.23). */
void coll_group_set_nccl_version(CollGroup *g, int code);
int coll_group_nccl_version(const CollGroup *g);
/* "2.18", "2.18.3", "2.18.3+cuda12.2", "2.22.3-HEAD:7d8d67c" or a code
 * ("21803", "2803" as NCCL before 2.9 wrote 2.8.3) into a version code; -1 if
 * it is none. */
int coll_nccl_version_parse(const char *s);
/* The newest version code of `lib` whose tuner the model follows (a version
 * past it is modelled as it): NCCL 2.30 (tuning.cc read to v2.30.3-1),
 * RCCL 2.28 (rocm-systems 03a89144); see models/presets/collectives.json. */
int coll_newest_version(int lib);
/* The collective library whose tuner and constants the model follows:
 * NCCL's (the default), or RCCL's, AMD's fork (its own base and per-step
 * latencies, no LL128, and on 8-GPU meshes its MI300-class tuning model
 * choosing the algorithm). */
typedef enum { COLL_LIB_NCCL, COLL_LIB_RCCL, COLL_NUM_LIBS } CollLibrary;
void coll_group_set_library(CollGroup *g, CollLibrary lib);
CollLibrary coll_group_library(const CollGroup *g);
const char *coll_library_name(CollLibrary lib); /* "nccl", "rccl" */
int coll_library_parse(const char *s);          /* -1 if unknown */
/* What a topology runs by default: rccl on AMD GPUs (accelerator or
 * topology named "mi" and a digit: mi300x, mi355x-cluster),
 * else nccl. */
CollLibrary coll_library_default(const Topo *t);
/* The process layout: one thread drives `gpus_per_thread` devices
 * (nccl-tests -g N, a single-process multi-GPU job) and launches on them one
 * after another; threads and processes launch in parallel.  Default 1. */
void coll_group_set_gpus_per_thread(CollGroup *g, int gpus_per_thread);
/* The elements' type by nccl-tests' name ("float", "int8", ...; NULL: a
 * type NVLS reduces): NVLS and NVLSTree need a 16-, 32- or 64-bit one.
 * False for a name it does not know (taken as one NVLS reduces). */
bool coll_group_set_datatype(CollGroup *g, const char *type);
/* Whether a launch waits for the GPUs' previous work (NCCL before 2.12
 * launched one thread's devices with cudaLaunchCooperativeKernelMultiDevice):
 * then the host time adds to every call; otherwise (the default) the host
 * launches the next call while the GPUs run this one, and a call costs the
 * longer of the two. */
void coll_group_set_launch_waits(CollGroup *g, bool waits);
/* What the tuner may pick from, as NCCL_ALGO / NCCL_PROTO set for the run
 * restrict NCCL's: masks of 1 << CollAlgo and 1 << CollProto, 0 for any.
 * The run's own setting replaces what the NICs' transport ships (its
 * profile in collectives.json); an algorithm or protocol asked for by name
 * is run as asked. */
void coll_group_set_allowed(CollGroup *g, unsigned algos, unsigned protos);
/* Whether coll_cost sees the fabric above the NICs (default off): the
 * switch-to-switch links of a fat tree or dragonfly, their oversubscription,
 * static routing's collisions and where the ranks sit.  On, the chosen ring,
 * tree, NVLSTree or PAT schedule's bandwidth term is scaled by
 * the seconds (bytes over capacity) its routed flows take on the busiest of
 * those links over the busiest other's, where above 1 (worked out once per op and
 * algorithm, and cached).  `collective`, `validate` and the step's groups
 * turn it on, but for the data-parallel ones under the contention runs. */
void coll_group_set_fabric(CollGroup *g, bool on);
/* The groups of the same shape that run g's collectives at the same time
 * (count x size ranks, copied; a training step's other replicas): with the
 * fabric on, their flows load the switch-to-switch links beside g's, and
 * the busiest of those links over all of them scales g's bandwidth term (a
 * collective in lock step is as slow as its slowest copy). */
void coll_group_set_siblings(CollGroup *g, const int *ids, int count);
/* The host-side time of one call (s): the per-GPU launch cost (the
 * topology's "host_launch_s", else the parameters' host_launch_s) times the
 * GPUs one thread drives. */
double coll_group_host_time(const CollGroup *g);

typedef struct {
    double time_s;
    double latency_s;   /* the alpha part */
    double algbw_Bps;   /* bytes / (time - latency): the beta part */
    CollAlgo algo;
    CollProto proto;
    /* the algorithm bandwidth NCCL's tuner rates it at, where that differs
     * from the physics (the double binary tree at two nodes); auto picks by
     * latency + bytes / this, and reports time_s.  0: algbw_Bps */
    double tuner_algbw_Bps;
    double tuner_latency_s; /* the latency the tuner rates it by; 0: latency_s */
    /* what the fabric above the NICs multiplied the bandwidth term by, where
     * coll_group_set_fabric is on (coll_cost); 0: not asked, NAN: the flows
     * were too many to route (then 1 was taken) */
    double fabric_factor;
} CollCost;

/* Closed-form cost; algo/proto AUTO pick what NCCL's tuner picks: the
 * fastest by its rating (tuner_algbw_Bps), among the algorithms the NCCL
 * version has.  Returns false (cost untouched) if the algorithm cannot run this op
 * on this group (e.g. collnet without in-network reduction). */
bool coll_cost(const CollGroup *g, CollOp op, CollAlgo algo, CollProto proto, double bytes, CollCost *out);
/* A point-to-point send of `bytes` over a pair of ranks (NCCL's
 * ncclSend/ncclRecv, as pipeline and context-parallel rings run them):
 * priced as a broadcast over the pair at NCCL's send/receive protocol (LL
 * up to the p2p threshold, then Simple), not its collectives' tuner. */
bool coll_p2p_cost(const CollGroup *g, double bytes, CollCost *out);

/* The range a measurement of a predicted `time_s` for `bytes` on this group
 * would fall in, p10 to p90: from the residuals of the measurements behind
 * the parameters (the default file's published traces, or a calibration's
 * cross-validated ones), widened where the group lies outside what they
 * covered (sizes, nodes, ranks, another topology).  `widen` (may be NULL) is
 * that factor, 1 inside. */
void coll_band(const CollGroup *g, double bytes, double time_s, double *p10, double *p90, double *widen);

/* Why coll_cost refuses `algo`/`proto` for `op` on this group, for messages. */
const char *coll_why_not(const CollGroup *g, CollOp op, CollAlgo algo, CollProto proto);

/* Appends the collective's chunk flows to `graph` on the topology's links
 * (link ids as in topo, so the caller builds the net with coll_net_build).
 * Every flow waits for the tasks in `deps`.  Returns a zero-time task that
 * ends when the collective has finished everywhere.  `algo`/`proto` must be
 * concrete (take them from coll_cost). */
int coll_append(const CollGroup *g, SimGraph *graph, CollOp op, CollAlgo algo, CollProto proto, double bytes,
                const int *deps, int ndeps, const char *label);

/* The number of flows coll_append would add (for limits on what a caller
 * simulates: each flow costs memory and events). */
int64_t coll_flow_count(const CollGroup *g, CollOp op, CollAlgo algo, CollProto proto, double bytes);

/* Builds the flow network of a topology with each link's achievable bandwidth
 * (raw bandwidth times the efficiency of its kind). */
void coll_net_build(const CollGroup *g, SimNet *net);

/* The most flows coll_simulate builds (each costs a task, its route and
 * events: about a kilobyte with long routes). */
#define COLL_MAX_FLOWS (1 << 22)

/* Runs one collective alone on the flow network and returns its time (s), or
 * NaN where it would take more than COLL_MAX_FLOWS flows or more than the
 * network's work limit (SIM_NET_DEFAULT_WORK_LIMIT). */
double coll_simulate(const CollGroup *g, CollOp op, CollAlgo algo, CollProto proto, double bytes);

#endif
