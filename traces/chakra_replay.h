/* Replaying a Chakra ET on a modelled platform, and writing a simulated
 * step as Chakra ET.
 *
 * Replay (chakra_replay): every node becomes a task of shardsim's task-graph
 * executor, on a stream of its rank: the node's "stream" attribute where it
 * has one (stream -1: on none, a pure synchronisation), else "compute" for
 * compute and memory nodes, "comm" for communication, "cpu" for is_cpu_op
 * nodes.  A stream runs one node at a time, in file order among the ready.
 * Dependencies are the recorded ones.  Times, with CHAKRA_TIMES_MODEL:
 *  - COMP_NODE with num_ops: num_ops / (peak FLOP/s of the scenario's
 *    precision x the accelerator's best GEMM efficiency), or the HBM time
 *    of tensor_size bytes where that is longer; without num_ops its
 *    recorded duration (shardsim_duration_ps, else duration_micros);
 *  - MEM_LOAD/MEM_STORE: tensor_size bytes at the HBM's achievable rate;
 *  - COMM_COLL_NODE: the collective model (NCCL's tuner choice of algorithm
 *    and protocol) for comm_type and comm_size bytes on the group; the group
 *    is the ranks whose files hold collectives of the node's pg_name (no
 *    pg_name: the world), and the k-th collective of a group on each member
 *    is one collective: it starts when every member has reached it.
 *    GATHER is priced as REDUCE, SCATTER as BROADCAST, BARRIER as a
 *    zero-byte all-reduce.  A group of one rank (its peers are not in the
 *    trace) keeps the recorded time;
 *  - COMM_SEND_NODE / COMM_RECV_NODE: the k-th send from a to b with a tag
 *    meets the k-th receive on b from a with that tag; the transfer
 *    (priced as the step prices pipeline sends: a two-rank broadcast) runs
 *    on the sender's stream once both have been reached; the receive ends
 *    no earlier than the transfer.  Zero bytes: a synchronisation, its
 *    recorded time.
 * A communication node of the host (is_cpu_op: PyTorch's record_param_comms)
 * without comm_type or peer is a host op: its recorded time on "cpu".
 * CHAKRA_TIMES_RECORDED takes every node's recorded duration instead.
 * Trace rank r runs on topology rank r, or on the GlobalMetadata's
 * "shardsim_topology_rank" where the file gives it.  Collectives are priced
 * in closed form, each on its own: concurrent collectives do not share
 * links here. */
#ifndef CHAKRA_REPLAY_H
#define CHAKRA_REPLAY_H

#include "accel.h"
#include "chakra_et.h"
#include "collective.h"
#include "sim_exec.h"

#include <cjson/cJSON.h>

typedef enum { CHAKRA_TIMES_MODEL, CHAKRA_TIMES_RECORDED } ChakraTimes;

typedef struct {
    const Topo *topo;
    const Accel *acc;
    AccelDtype dtype;
    const CollParams *params; /* NULL: the default */
    int nccl_version;         /* 0: the newest */
    ChakraTimes times;
} ChakraPlatform;

/* The replay's result: {"chakra_ranks", "nodes", "step_time_s",
 * "per_rank": [{"rank", "topology_rank", "end_s", "busy_s": {stream: s}}],
 * "collectives", "point_to_point", "times"}; the graph is handed over when
 * `graph` is not NULL.  Errors name the file and node. */
cJSON *chakra_replay(const ChakraTrace *t, const ChakraPlatform *pf, SimGraph **graph, GError **err);

/* Writes a run graph of the step as DIR/shardsim.R.et, one file per
 * device the step simulated (resources "gpuN.KIND": one per pipeline stage,
 * standing for its tensor- and data-parallel peers), ranks in order of
 * first appearance.  Each task is a node with its simulated duration
 * (shardsim_duration_ps exactly, duration_micros rounded) and its resource
 * as "stream"; compute tasks are COMP_NODEs, communication tasks
 * COMM_COLL_NODEs of a group of their device alone (pg_name "gpuN.KIND"),
 * comm_type from the task's name, comm_size its bytes; a dependency between
 * two devices becomes a zero-byte send/receive pair on no stream.  Replayed,
 * it gives the step time back exactly.  Returns the number of files. */
int chakra_export(const SimGraph *g, const char *dir, GError **err);

#endif
