/* MPI collectives on CPU clusters: the algorithms MPI libraries run
 * (recursive doubling, Rabenseifner, ring, binomial and k-nomial trees,
 * Bruck, linear and pairwise all-to-all, node-aware hierarchies: Open MPI's
 * coll/han, MPICH's ch4 compositions) chosen as each library's default
 * selection does (Open MPI 5.0.x coll/tuned fixed rules and han; MPICH 4.x
 * csel JSON), each costed step by step.
 *
 * Cost of one step (Hockney per message, with contention): ranks are placed
 * in contiguous blocks of `ppn` per node; a step is the set of messages sent
 * at once, and takes the longest of
 *   - a rank's own time: path latency + per-message software overhead +
 *     bytes / path bandwidth for each message it sends (plus the reduction
 *     of what it received, at the core's streaming rate),
 *   - a node's NIC: the bytes leaving (or entering) the node / NIC bandwidth,
 *   - a node's memory: the bytes the step moves through DRAM / memory bandwidth.
 * The platform comes from the topology (shared-memory and network paths:
 * latency and bandwidth of their links) and from models/presets/mpi.json (the
 * node's memory bandwidth, the libraries' software costs; every number with
 * its source).  Pure functions: same input, same numbers. */
#ifndef MPI_MODEL_H
#define MPI_MODEL_H

#include "collective.h"
#include "topo.h"

/* HPE Cray MPICH runs MPICH's ch4 selection with its own defaults (the
 * SMP-aware allreduce's size limit, the shared-memory single-copy size, the
 * CXI rendezvous threshold it sets): models/presets/mpi.json "cray-mpich". */
typedef enum { MPI_LIB_OPENMPI, MPI_LIB_MPICH, MPI_LIB_CRAY_MPICH, MPI_NUM_LIBS } MpiLib;

const char *mpi_lib_name(MpiLib l); /* "openmpi", "mpich", "cray-mpich" */
/* "openmpi"/"ompi"/"open-mpi", "mpich", "cray-mpich"/"craympich"
 * (case-insensitive); -1 if unknown. */
int mpi_lib_parse(const char *s);

typedef struct MpiModel MpiModel;

/* `nodes` x `ppn` ranks, contiguous per node, on topology `t` (which must
 * have at least that many nodes and ranks per node).  `params` is the MPI
 * parameter file, NULL for models/presets/mpi.json. */
MpiModel *mpi_model_new(const Topo *t, int nodes, int ppn, MpiLib lib, const char *params, GError **err);
void mpi_model_free(MpiModel *m);

/* What the model found, for reports and tests. */
typedef struct {
    int nodes, ppn;
    double lat_shm, lat_net; /* one-way latency of the paths, s (0 where no such path) */
    double bw_core;          /* one rank's shared-memory copy bandwidth, B/s */
    double bw_nic;           /* a node's network payload bandwidth (all its NICs), B/s */
    double bw_net;           /* one rank's network path (its NIC), B/s */
    double bw_mem;           /* a node's achievable memory bandwidth, B/s (INFINITY: not described) */
    double copy_traffic;     /* DRAM bytes per byte copied between two processes */
    double overhead;         /* library software cost per message, s */
    double shm_overhead;     /* the node's software per shared-memory message beyond it (models/presets/mpi.json), s */
    /* The NICs' transport (models/presets/mpi.json "transports", by the
     * topology's "transport"; zero / INFINITY where it has none): */
    double net_overhead;     /* its software cost per network message at each end, s */
    double net_eager;        /* largest network message sent eagerly, bytes */
    double net_rndv_trips;   /* round trips of the path a larger one adds (its rendezvous) */
    double net_rndv_events;  /* and the completion events its receiver handles beyond an eager one's */
    double net_ll_payload;   /* largest payload the core writes to the NIC with the command, bytes */
    double net_host_read;    /* what a larger one adds: the NIC reads the host over PCIe, s */
    int libfabric_version;   /* version code whose defaults net_eager follows (0: not stated, the oldest's) */
    bool pml_cm;             /* Open MPI's pml cm (mtl ofi): on several nodes every message goes through the NICs */
} MpiPlatform;
const MpiPlatform *mpi_model_platform(const MpiModel *m);

/* The libfabric the MPI runs on ("2.2", "1.22.0"), over the topology's
 * "libfabric_version": the transport's eager limit follows that version's
 * default (models/presets/mpi.json).  False (m untouched) when `version`
 * is not a version. */
bool mpi_model_set_libfabric_version(MpiModel *m, const char *version);

/* Open MPI's point-to-point layer ("cm", "ob1", "ucx"), over the one the
 * NICs' transport implies (models/presets/mpi.json "openmpi_pml"): under
 * cm the ofi MTL sends every message through one libfabric provider, so
 * on several nodes the node-local ones go through the NICs too; ob1 and
 * ucx use shared memory inside a node.  No effect on MPICH, whose ch4
 * always uses its shared-memory module between local ranks.  False (m
 * untouched) for another name. */
bool mpi_model_set_pml(MpiModel *m, const char *pml);

typedef struct {
    double time_s;
    const char *algo; /* "han(binomial-reduce,...)" style name of what ran; static */
} MpiCost;

/* Time of one collective of `bytes` (nccl-tests' convention: the whole
 * buffer of one rank; all-gather and all-to-all: the whole receive buffer).
 * False (out untouched) for an op the model does not cover. */
bool mpi_cost(const MpiModel *m, CollOp op, double bytes, MpiCost *out);

/* The parameters `shardsim calibrate` fits (keys "mpi.overhead", ...):
 * what the model was made with, from models/presets/mpi.json and the
 * topology, read and replaced by index.  A parameter file that is an
 * overlay ({"overlay", "parameters": {KEY: VALUE or {"value"}}}) applies its
 * "mpi." keys over the default file; its other keys are the NCCL model's. */
enum { MPI_NUM_PARAMS = 9 };
const char *mpi_param_key(int i);
const char *mpi_param_unit(int i); /* "s", "B/s" */
double mpi_model_param(const MpiModel *m, int i);
/* Whether the file is such an overlay (false when unreadable). */
bool mpi_params_is_overlay(const char *path);
/* False (m untouched) for a value that is not finite and positive. */
bool mpi_model_set_param(MpiModel *m, int i, double v);

/* One message of `bytes` between rank 0 and the first rank of the second
 * node (or rank 1 on one node): osu_latency's one-way time with window 1;
 * with `window` > 1 the time of `window` messages sent back to back
 * (osu_bw), the latency paid once. */
double mpi_p2p_time(const MpiModel *m, double bytes, int window);
/* osu_bibw's window: `window` messages each way at once; each rank sends
 * and receives, so pays twice the per-message software costs, while the
 * wire carries each direction apart. */
double mpi_p2p_bidir_time(const MpiModel *m, double bytes, int window);

#endif
