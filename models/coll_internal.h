/* Private to the collective model (models/coll_*.c, collective.c): the group
 * and its parameters, the helpers every algorithm shares, and the table of
 * algorithms.  Each algorithm family lives in its own file (coll_ring.c,
 * coll_tree.c, ...) and describes itself with one CollAlgoDesc; the list in
 * coll_algos.c is the only place that names them all. */
#ifndef COLL_INTERNAL_H
#define COLL_INTERNAL_H

#include "collective.h"
#include "sim_json.h"

#include <math.h>

#define MAX_CH 32
#define TREE_CORR 23 /* tree corrections: 64 B to 256 MiB */
#define MAX_ENUM_PPN 8 /* exhaustive ring search up to this many ranks per node */
#define COLL_MAX_PPN 128 /* ranks per node (NVLink domain: 72 on GB200 NVL72) */

enum { HW_NVLINK, HW_PCIE, HW_NET, HW_NUM };
enum { KIND_RING, KIND_TREE, KIND_COLLNET, KIND_NUM }; /* parameter families */
/* NVIDIA GPU generations, as NCCL's tuner tells them apart (compCapIndex) */
enum { GEN_NOT_NCCL = -2, GEN_VOLTA = 0, GEN_AMPERE, GEN_HOPPER, GEN_BLACKWELL, GEN_NUM };

/* What a transport's software stack leaves NCCL's tuner ("nccl_profiles"),
 * for NCCL versions from `since` (0: every earlier one) and before `before`
 * (0: every later one), on GPU generations before `gen_below` (GEN_NUM: all;
 * a GPU the tuner does not know counts as older): the algorithms and
 * protocols it may choose among (bit masks by CollAlgo and CollProto; 0: no
 * limit; NVLS off clears NVLS and NVLSTree).  A shipped environment
 * (GPUDirect-TCPXO's nccl-env-profile.sh, held by its guest config checker)
 * binds NCCL's tuner; one its net plugin sets (`plugin`: aws-ofi-nccl's
 * NCCL_PROTO on EFA, what the transport can carry) binds every library that
 * loads the plugin and every operation. */
#define COLL_MAX_PROFILES 4
typedef struct {
    int since, before, gen_below;
    bool plugin;
    unsigned algos, protos;
} CollNcclProfile;

/* A NIC transport's costs beyond what the tuner's network latencies hold
 * (coll_params.c: "transports"). */
typedef struct {
    bool given;
    double latency;  /* s, added to every network step */
    double step;     /* s, its own network step in place of NCCL's tables' (0: theirs) */
    double overhead; /* s, posting one message (per network step) */
    double fraction; /* achievable fraction of the NIC's line rate */
    bool rated;      /* NCCL's tuner sees the latency and overhead (its net plugin reports them) */
    int nprofiles;   /* "nccl_profiles": the first that holds applies */
    CollNcclProfile profile[COLL_MAX_PROFILES];
    double eager_max;  /* bytes a message carries eagerly (0: no limit) */
    double rendezvous; /* s, what an LL or LL128 message past eager_max adds (Simple's overhead holds it) */
} CollTransport;

/* What the measurements behind the parameters covered, and how far off the
 * predictions were on them (coll_uncert.c). */
#define UNC_MAX_TOPOS 16
typedef struct {
    double lo[2], hi[2]; /* p10, p90 of log(predicted / measured): [0] below 1 MiB, [1] from 1 MiB */
    double size_lo, size_hi;
    int nodes_hi, ranks_hi;
    int ntopos;
    char topos[UNC_MAX_TOPOS][48]; /* the topologies measured */
} CollUncert;

#define RCCL_MAX_RANGES 8
#define RCCL_RANGE_NAMES 4
/* RCCL's protocol by size across nodes for one GPU architecture from one
 * RCCL version on: LL for bytes per rank in (ll[0], ll[1]], LL128 (where
 * ll128) in (ll128[0], ll128[1] + (log2(nodes) - 1) * ll128_step], else
 * Simple; an op with ll[1] = ll128[1] = 0 is left to the tuner. */
typedef struct {
    char names[RCCL_RANGE_NAMES][16]; /* accelerator name prefixes */
    int nnames, from_version;
    bool ll128;
    double ll[COLL_NUM_OPS][2], ll128_range[COLL_NUM_OPS][2], ll128_step[COLL_NUM_OPS];
} CollRcclRanges;

#define RCCL_MAX_ALT 4
#define RCCL_CORR 27 /* RCCL's correction factors: 64 B to 4 GiB and up */
/* A tuning model RCCL assigns an architecture (accelerator name prefixes). */
typedef struct {
    char names[RCCL_RANGE_NAMES][16];
    int nnames, from_version;
    double step[HW_NUM][2][COLL_NUM_PROTOS], ratio[2][2][COLL_NUM_PROTOS], corr[2][COLL_NUM_PROTOS][RCCL_CORR];
} CollRcclMesh;

/* RCCL's tuner (coll_rccl.c reads the "rccl" object): the times of its
 * default model, and the tuning model it rates 8-GPU meshes by. */
typedef struct {
    double base[COLL_NUM_PROTOS];            /* every algorithm's */
    double step[HW_NUM][2][COLL_NUM_PROTOS]; /* [hw][ring|tree][proto], what a step takes */
    double ll_intra_factor, ring_plateau;
    bool ll128;
    double mesh_step[HW_NUM][2][COLL_NUM_PROTOS]; /* tuner only: latencies it rates by */
    double mesh_ratio[2][2][COLL_NUM_PROTOS];     /* [2 nodes | more][ring|tree][proto] bus bandwidth ratios */
    double mesh_corr[2][COLL_NUM_PROTOS][RCCL_CORR]; /* [ring|tree]: the tuner's bandwidth by log2(bytes/64) */
    /* MSCCL's all-pairs all-reduce on one node of `msccl_ranks` (0: none) */
    int msccl_ranks, msccl_before; /* msccl_before: the RCCL version that removed it (0: none) */
    double msccl_ll_max, msccl_simple_max, msccl_small_max, msccl_small_chunks, msccl_chunks, msccl_elem;
    /* across nodes RCCL sets the protocol by the bytes per rank (coll_rccl.c) */
    int nranges;
    CollRcclRanges ranges[RCCL_MAX_RANGES];
    int nalt; /* tuning models by architecture, in place of mesh_* */
    CollRcclMesh alt[RCCL_MAX_ALT];
} CollRccl;

/* The latency tables the NCCL versions before `before` rate by, as
 * differences from the newest ones (coll_nccl.c): ring (and its relatives)
 * and tree base latencies, every step latency. */
#define ERA_ALGOS 2
#define COLL_MAX_ERAS 12
typedef struct {
    int before; /* version code */
    double base[ERA_ALGOS][COLL_NUM_PROTOS];
    double step[HW_NUM][2][COLL_NUM_PROTOS];
} CollEra;

/* What models/presets/collectives.json says (coll_params.c). */
struct CollParams {
    double base[COLL_NUM_ALGOS][COLL_NUM_PROTOS];
    double step[HW_NUM][2][COLL_NUM_PROTOS]; /* [hw][ring|tree][proto] */
    double ll_intra_factor;
    double proto_bw[KIND_NUM][COLL_NUM_PROTOS];
    double ll128_max_per_ch;
    double ring_ll128_one_per_node; /* the ring's LL128 factor with one rank per node */
    double ring_ll_one_node;        /* the ring's LL factor inside one node */
    double link_eff[TOPO_LINK_NVLINK_BRIDGE + 1];
    int max_channels;
    double launch_s;
    double p2p_ll_threshold; /* all-to-all: LL up to this many bytes per peer, then Simple */
    bool ll128_multinode;
    double ring_plateau;                    /* latency factor of multi-node Simple ring all-reduce */
    double ring_plateau_volta;              /* the same on Volta GPUs (compute capability 7) */
    double tree_correction[COLL_NUM_PROTOS][TREE_CORR]; /* tree bandwidth factor by log2(bytes/64) */
    double nvls_latency, nvls_fraction; /* NVLS: latency, algorithm bandwidth / GPU link rate */
    double nvls_rating_lat;             /* the tuner's NVLS latency inside a node from ver_nvls_rating_lat */
    double nvls_tree_net_rating;        /* the tuner's NVLSTree network step from ver_nvls_tree_net_rating */
    double tree_pattern_penalty;        /* the tuner's factor on a Hopper tree across nodes from its version */
    double nvls_blackwell;              /* NVLS rate on Blackwell relative to Hopper's */
    int sharp_group_channels; /* SHARP operations a job runs at once (0: any number) */
    double net_overhead; /* floor of a multi-node ring's intra-node step */
    double net_overhead_amd; /* the same on AMD hosts */
    /* NCCL's ceilings of LL bus bandwidth (tuning.cc llMaxBws), B/s: on one
     * node by GPU generation, across nodes by host CPU [other | AMD] and
     * [2 nodes | more] */
    double ll_max_one[GEN_NUM], ll_max_multi[2][2];
    /* NCCL's per-channel ceiling of a tree's bus bandwidth at 2 nodes by GPU
     * generation (tuning.cc perChMaxTreeBws, N2 column), B/s */
    double tree_max_ch_two[GEN_NUM];
    /* NCCL's per-channel ceiling of an LL128 tree's bus bandwidth by GPU
     * generation and [1 node | 2 | more] (perChMaxTreeLL128Bws), B/s;
     * INFINITY where the file gives none */
    double tree_ll128_max_ch[GEN_NUM][3];
    int ver_ll_max_blackwell; /* first version with Blackwell's own row */
    int ver_collnet_simple_only; /* from it CollNet runs Simple only */
    int ver_ring_ll_rating;      /* from it the tuner rates LL rings at ring_ll_rating */
    int ver_ll128_hopper;        /* from it LL128 runs across nodes on Hopper and later */
    int ver_ll128;               /* the first NCCL with the LL128 protocol */
    int ver_nvls_rating_lat;     /* from it the tuner rates NVLS inside a node at nvls_rating_lat */
    int ver_nvls_tree_net_rating, ver_tree_pattern_penalty;
    double ring_ll_rating;
    /* before ver_ring_ll_rating: all-reduce, reduce or across nodes; the rest in one node; 0: none given */
    double ring_ll_rating_old[2];
    int n_eras;
    CollEra era[COLL_MAX_ERAS];
    CollUncert unc;
    /* what came with NCCL versions (coll_algos.c reads the "nccl" object) */
    int ver_nvls, ver_nvls_tree, ver_pat; /* first version code with each */
    int ver_nvls_ch_sm100, ver_nvls_ch_sm100_nvl; /* Blackwell's 32 NVLS channels; 24 inside one NVLink domain */
    int ver_net_overhead; /* from it the ring's network post overhead replaces the x1.8 LL factor */
    double nvls_net_lat, nvls_tree_net_lat; /* per network step, NVLS(+CollNet) and NVLSTree */
    double pat_base, pat_per_rank, pat_log_div, pat_bw; /* PAT: 8 us + log2(nodes) x net / 3.5 + 2.8 us x ranks; x0.75 */
    CollTransport transport[TOPO_TRANSPORT_NUM];
    CollRccl rccl;
};

struct CollGroup {
    const Topo *t;
    CollParams p;  /* what the costs read: p0 with the library's constants and the transport's latency */
    CollParams p0; /* as given */
    int n, nnodes, ppn;
    int *ranks;      /* group order */
    int *node_start; /* nnodes + 1 offsets into by_node */
    int *by_node;    /* group indices grouped by node, nodes in order of first appearance */
    /* intra-node ring channels, as local indices 0..ppn-1 */
    int nch;
    int ring[MAX_CH][COLL_MAX_PPN];
    double ring_bw[MAX_CH];
    double intra_bw, inter_bw;
    double inter_nominal; /* as inter_bw, at the links' nominal rates (NCCL's terms) */
    int intra_hw;
    int nics;
    bool in_network;
    bool nvls;          /* single node whose NVSwitch reduces */
    bool nvls_type_ok;  /* the datatype is one NVLink SHARP reduces (coll_group_set_datatype) */
    bool rotate;        /* ring channels rotate per node (not on a physical ring of nodes) */
    /* seconds per byte that each pair sends when the pattern's flows share the
     * links evenly: all pairs (direct), partners at distance n/2^(r+1) (rhd);
     * worked out on first use (0 = not yet) */
    double direct_spb, rhd_spb[32];
    double direct_spb_alone, rhd_spb_alone[32]; /* the same without the siblings' patterns */
    /* coll_fabric.c: whether costs see the fabric above the NICs, and each
     * op's and algorithm's factor on the bandwidth term (0 = not yet, NAN =
     * too many flows) */
    bool fabric;
    double fabric_factor[COLL_NUM_OPS][COLL_NUM_ALGOS];
    int *sib_ids; /* the groups that run its collectives at the same time (coll_group_set_siblings): nsib x n ranks */
    int nsib;
    double gpu_link;    /* raw bandwidth of a rank's first link into the node fabric */
    int gpus_per_thread;
    int nccl_version; /* NCCL version code; 0: the newest the model knows */
    bool launch_waits;       /* a launch waits for the GPUs' prior work: host and GPU time add */
    unsigned allowed_algos, allowed_protos; /* the run's NCCL_ALGO / NCCL_PROTO as masks (1 << CollAlgo / CollProto); 0: unset */
    TopoTransport transport; /* of the NICs (NONE: the network defaults) */
    bool eager_paid;         /* LL/LL128 messages past the transport's eager limit pay its overhead (not in a twin that does not see it) */
    int gpu_gen;             /* GEN_*, -1: a GPU the tuner does not know */
    TopoHostCpu host_cpu;
    bool nic_on_host;        /* NIC reached through the host CPU (NCCL: PHB) */
    bool nic_on_switch;      /* NIC on each GPU's PCIe switch, stated (NCCL: PXB) */
    /* double binary tree: the most tree edges at one node (both trees), the
     * deepest node, and the most a rank sends on intra-node links per byte
     * of the message (its chains' up and down hops) */
    int tree_deg, tree_depth;
    double tree_intra;
    CollLibrary library;
    /* RCCL on an 8-GPU mesh: the same group with the tuning model's
     * latencies and bandwidth ratios, which coll_cost rates choices by
     * (coll_rccl.c); an older NCCL: with its version's latency tables
     * (coll_nccl.c); NULL: the times rate themselves */
    struct CollGroup *tuner;
};

/* The fabric's factor on the closed form's bandwidth term for `a` and `p`
 * (coll_fabric.c): 1 unless coll_group_set_fabric is on and the algorithm's
 * flows cross a switch-to-switch link; NAN where they are too many to
 * route.  coll_fabric_forget drops the cached factors. */
double coll_fabric_factor(const CollGroup *g, CollOp op, CollAlgo a, CollProto p);
void coll_fabric_forget(CollGroup *g);
/* A shallow copy of g that rates choices as another tuner would (g->tuner,
 * freed with g_free): it shares g's arrays and owns no tuner or siblings of
 * its own (coll_group.c). */
CollGroup *coll_group_twin(const CollGroup *g);

/* Loads the parameters from `path` (a full file, or an overlay on the
 * default), or the default data file when NULL. */
bool coll_params_load(const char *path, CollParams *p, GError **err);
/* Overlays (coll_keys.c): files with "overlay" and "parameters". */
bool coll_params_is_overlay(const SimJsonDoc *d);
bool coll_params_apply_overlay(const SimJsonDoc *d, CollParams *p, GError **err);
/* Reads an "uncertainty" (default file) or "calibration" (overlay) block
 * into u; classes or bounds it does not give keep u's. */
bool coll_uncert_read(const SimJsonDoc *d, const cJSON *obj, CollUncert *u, GError **err);
/* The "nccl" object of the parameter file (root `r`): version gates and the
 * NVLS, NVLSTree and PAT constants (coll_algos.c). */
bool coll_params_read_nccl(const SimJsonDoc *d, const cJSON *r, CollParams *p, GError **err);

/* The "ll_max_bus_bandwidth" and "eras" of the "nccl" object (coll_nccl.c). */
bool coll_nccl_read(const SimJsonDoc *d, const cJSON *o, CollParams *p, GError **err);
/* Where the group's NCCL version rates by other latency tables than the
 * newest, a tuner twin with them (g->tuner; g->p final, no twin yet). */
void coll_nccl_make_tuner(CollGroup *g);
/* GEN_* of the topology's GPUs, GEN_NOT_NCCL (TPUs) or -1 (coll_nccl.c). */
int coll_nccl_gpu_generation(const Topo *t);
/* NCCL's graph search inside one NVSwitch domain (coll_nccl.c): whether the
 * group rates by it, and the ring's bus bandwidth and NVLS's algorithm
 * bandwidth its tuner then rates (B/s). */
bool coll_nccl_nvs_graph(const CollGroup *g);
double coll_nccl_ring_rated_bus_bw(const CollGroup *g);
double coll_nccl_nvls_rated_algbw(const CollGroup *g);

/* Whether the group's NCCL version has what came in version `code`. */
static inline bool coll_version_has(const CollGroup *g, int code)
{
    return g->nccl_version == 0 || g->nccl_version >= code;
}
/* A value NCCL's tuner takes from version `code` on: `from` there (where a
 * parameters file gives one, > 0), `before` in older versions. */
static inline double coll_from_version(const CollGroup *g, int code, double from, double before)
{
    return from > 0 && coll_version_has(g, code) ? from : before;
}
/* Every node's NVSwitch reduces (NVLink SHARP) and has ranks to reduce. */
static inline bool coll_nvls_capable(const CollGroup *g)
{
    return topo_has_nvlink_sharp(g->t) && g->ppn > 1 && g->nvls_type_ok;
}

/* NCCL's ceiling on the bus bandwidth of an LL ring or tree (tuning.cc
 * llMaxBw), INFINITY where there is none: RCCL (its AMD build rates by
 * bwRatio instead), TPUs (no NCCL), one node of GPUs the tuner does not
 * know (coll_group.c). */
double coll_ll_max_bus_bw(const CollGroup *g);
/* NCCL's ceiling of an LL128 tree's bus bandwidth over the group's channels
 * (coll_nccl.c), B/s; INFINITY where none applies. */
double coll_tree_ll128_max_bus_bw(const CollGroup *g);
/* The bus bandwidth NCCL's tuner rates a 2-node tree's network part at (coll_nccl.c). */
double coll_tree_rated_net_bw_two_nodes(const CollGroup *g);
/* The network post overhead of one ring step on the group's hosts. */
static inline double coll_net_overhead(const CollGroup *g)
{
    return g->host_cpu == TOPO_CPU_AMD ? g->p.net_overhead_amd : g->p.net_overhead;
}

/* Adds the NICs' transport latency to g->p's network steps (coll_group.c). */
void coll_group_add_transport_latency(CollGroup *g);

/* The "rccl" object of the parameter file (coll_rccl.c). */
bool coll_params_read_rccl(const SimJsonDoc *d, const cJSON *r, CollParams *p, GError **err);
/* Sets g->p from g->p0: the library's constants, the NICs' transport
 * latency; and makes or drops the tuner twin (coll_rccl.c). */
void coll_rccl_apply(CollGroup *g);
/* Frees the tuner twin (its arrays are the group's). */
void coll_rccl_free(CollGroup *g);
/* RCCL's tuning-model correction of the tuner's bandwidth of algorithm a
 * (tree; ring across nodes), 1 for the others. */
double coll_rccl_tuner_correction(const CollGroup *g, CollAlgo a, CollProto p, double bytes);
/* Whether RCCL runs `op` of `bytes` with an MSCCL algorithm rather than its
 * tuner's choice, and with which protocol (the algorithm: direct). */
bool coll_rccl_msccl(const CollGroup *g, CollOp op, double bytes, CollProto *proto);
/* The protocol RCCL sets across nodes for `bytes` (false: the tuner's choice). */
bool coll_rccl_multinode_proto(const CollGroup *g, CollOp op, double bytes, CollProto *proto);
/* Whether RCCL runs LL128 on this group (its architecture's range table). */
bool coll_rccl_ll128(const CollGroup *g);

/* ---------------- what the group derived, for every algorithm ---------------- */

/* A link's achievable bandwidth: raw times the efficiency of its kind. */
static inline double coll_link_cap(const CollGroup *g, int l)
{
    double e = topo_link_efficiency(g->t, l); /* the link's own, else its transport's, else its kind's */
    if (!(e > 0)) {
        TopoTransport tr = topo_link_transport(g->t, l);
        e = g->p.transport[tr].given ? g->p.transport[tr].fraction : g->p.link_eff[topo_link_kind(g->t, l)];
    }
    return topo_link_bandwidth(g->t, l) * e;
}

/* Host-side time of one collective call: each thread launches the kernels
 * of the GPUs it drives one after another (collective.c). */
double coll_host_time(const CollGroup *g);

/* Routes have no fixed bound (a chain of endpoints or a big torus makes them
 * long): buffers are sized by the topology's longest route. */
static inline int coll_route_cap(const CollGroup *g)
{
    int m = topo_max_route_length(g->t);
    return m > 0 ? m : 1;
}

/* Channels of a ring spanning the group: the intra-node rings, and across
 * nodes at least one per NIC. */
static inline int coll_ring_channels(const CollGroup *g)
{
    if (g->nnodes <= 1)
        return g->nch > 0 ? g->nch : 1;
    int k = g->nics > g->nch ? g->nics : g->nch;
    return k > 0 ? k : 1;
}

/* Per-step latency of parameter family `kind` (0 ring, 1 tree) on the
 * intra-node link class. */
static inline double coll_intra_step_lat(const CollGroup *g, int kind, CollProto p)
{
    double l = g->p.step[g->intra_hw][kind][p];
    if (g->nnodes > 1 && p == COLL_LL && !coll_version_has(g, g->p.ver_net_overhead))
        l *= g->p.ll_intra_factor;
    return l;
}

/* What the NICs' transport adds to each network step of an LL or LL128
 * message of `msg` payload bytes (per channel and step) past its eager limit:
 * its rendezvous (coll_nccl.c); Simple pays its overhead in every step. */
double coll_transport_eager_overhead(const CollGroup *g, CollProto p, double msg);
/* The channels NCCL runs `bytes` on with algorithm family `kind` (0 ring,
 * 1 tree): fewer than the group's for small messages (coll_nccl.c). */
int coll_channels_used(const CollGroup *g, int kind, CollProto p, double bytes);

static inline int coll_ilog2_ceil(int n)
{
    int k = 0;
    while ((1 << k) < n)
        k++;
    return k;
}

#define COLL_PATTERN_MAX_RANKS 2048 /* routing every pair costs n^2 routes */

/* The most loaded link's seconds per byte when every pair sends one byte at
 * once (dist 0: all pairs; else i and i ^ dist), the siblings' pairs on the
 * fabric's links beside them where the fabric is on; *alone (may be NULL)
 * the same without them (coll_build.c). */
double coll_pattern_spb(const CollGroup *g, int dist, double *alone);
/* The factor the siblings put on a pattern-bound algorithm's bandwidth
 * term: `with` over `alone` where the fabric is on and it is above 1, for
 * CollCost.fabric_factor (0: not asked). */
static inline double coll_pattern_factor(const CollGroup *g, double with, double alone)
{
    return !g->fabric ? 0 : alone > 0 && with > alone ? with / alone : 1;
}

/* Parent of node r (of nn) in tree t (0, 1) of NCCL's double binary tree,
 * -1 at the root (coll_tree.c). */
int coll_dtree_parent(int nn, int t, int r);
/* The double binary tree's shape, for its closed form (coll_tree.c). */
void coll_tree_shape(CollGroup *g);

/* ---------------- building flows (coll_build.c) ---------------- */

typedef struct {
    const CollGroup *g;
    SimGraph *graph;
    const char *label;
    int start; /* task every flow waits for */
    GArray *ends; /* tasks the collective's end waits for */
    int *links;   /* route scratch, coll_route_cap(g) ints */
    GArray *record; /* NULL, or each flow's CollFlowRec too (coll_flows_of) */
} CollBuilder;

/* A flow as the builder made it: group indices, bytes, route salt. */
typedef struct {
    int src, dst;
    double bytes;
    uint32_t salt;
} CollFlowRec;

/* The flows coll_append would make, as CollFlowRec (the caller frees);
 * algo and proto concrete. */
GArray *coll_flows_of(const CollGroup *g, CollOp op, CollAlgo algo, CollProto proto, double bytes);

/* A flow task from group index src to dst, `delay` the step's latency as the
 * closed form counts it (the links' own latency included). */
int coll_add_flow(CollBuilder *b, int src, int dst, double bytes, sim_time_t delay, uint32_t salt);
/* A zero-time task, to join on. */
int coll_barrier(CollBuilder *b);
/* Rounds in which every rank sends once, each send after what the ranks
 * did the round before: last[i] what rank i did last (b->start at first),
 * next[i] its send this round; coll_rounds_next moves on a round,
 * coll_rounds_end makes the collective's end wait for the last round. */
typedef struct {
    int *last, *next;
    int n;
} CollRounds;
void coll_rounds_init(CollRounds *r, const CollBuilder *b, int n);
void coll_rounds_next(CollRounds *r);
void coll_rounds_end(CollRounds *r, CollBuilder *b);
/* A pipelined ring (cyclic) or chain over `order`; returns a barrier task. */
int coll_append_ring(CollBuilder *b, const int *order, int len, bool cyclic, double hop_bytes, double lat_total,
                     int nseg, int dep, uint32_t salt);

/* ---------------- the table of algorithms ---------------- */

/* One algorithm.  `cost`, `build` and `flow_count` are called only on groups
 * of two ranks or more, with a concrete protocol the group allows (the
 * one-rank case, protocol limits, the tuner's choice and the host launch
 * cost are collective.c's); `flow_count` must count exactly what `build`
 * adds (tests/test_routes.c checks every algorithm and op).
 *
 * Adding one: a CollAlgo value before COLL_NUM_ALGOS (collective.h); a file
 * models/coll_<family>.c with its four functions and a `const CollAlgoDesc
 * coll_<name>_algo`, declared below; its entry in the list in coll_algos.c;
 * if it has base latencies of its own, their key in coll_params.c and in
 * models/presets/collectives.json.  Names, --algo parsing, auto (when
 * `tuner`) and the tests' every-algorithm loops then pick it up. */
typedef struct {
    CollAlgo id;
    const char *name;  /* as --algo takes it and reports print it */
    const char *alias; /* another name coll_algo_parse takes, or NULL */
    bool tuner;        /* one of those NCCL's tuner picks among (auto) */
    /* closed form: false if it cannot run op with protocol p on g */
    bool (*cost)(const CollGroup *g, CollOp op, CollProto p, double bytes, CollCost *c);
    /* adds the flows to b->graph, each waiting for b->start; what the end
     * waits for goes to b->ends */
    void (*build)(CollBuilder *b, CollOp op, CollProto p, double bytes);
    int64_t (*flow_count)(const CollGroup *g, CollOp op, CollProto p, double bytes);
    /* why cost refuses (the protocol's own limits aside), for messages */
    const char *(*why_not)(const CollGroup *g, CollOp op, CollProto p);
} CollAlgoDesc;

extern const CollAlgoDesc coll_ring_algo, coll_tree_algo, coll_rhd_algo, coll_direct_algo, coll_hier_algo,
    coll_collnet_algo, coll_nvls_algo, coll_nvls_tree_algo, coll_pat_algo, coll_torus_algo;

/* The algorithm `a`, or NULL if it is none (coll_algos.c). */
const CollAlgoDesc *coll_algo_desc(CollAlgo a);

#endif
