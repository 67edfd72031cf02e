/* MLCommons Chakra execution traces (ET): reading and writing the files.
 *
 * A Chakra ET is one file per rank, NAME.RANK.et (Chakra's generator and
 * ASTRA-sim: "one_comp_node.0.et", "workload.3.et").  Each file is a
 * GlobalMetadata message then Node messages, every message preceded by its
 * length as a base-128 varint (Chakra's protoio / protolib framing; no magic
 * number).  The schema is traces/chakra/et_def.proto, Chakra's own; protoc-c
 * turns it into C at build time.  Without protobuf-c every entry point says
 * "built without Chakra support".
 *
 * What is kept of a node is what a replay needs: its type, its data
 * dependencies (they must finish first; ctrl_deps, the PyTorch converter's
 * enclosing operator, are ignored as Chakra's own feeder ignores them), its
 * recorded duration and
 * the attributes Chakra's feeder reads (num_ops, tensor_size, comm_type,
 * comm_size, comm_src, comm_dst, comm_tag, pg_name, is_cpu_op) plus "stream"
 * (the PyTorch converter's CUDA stream) and shardsim's own
 * "shardsim_duration_ps" (exact durations of exported steps).  Loading
 * refuses, with the file and the node's index and byte offset: a truncated
 * or overlong varint, a length past the end of the file, a message protobuf
 * cannot decode, an unknown node type or collective, two nodes with one id,
 * a dependency on a missing node, and a cycle of dependencies. */
#ifndef CHAKRA_ET_H
#define CHAKRA_ET_H

#include "sim_error.h"

#include <stdint.h>

/* Chakra's NodeType and CollectiveCommType values. */
enum { CHAKRA_METADATA = 1, CHAKRA_MEM_LOAD, CHAKRA_MEM_STORE, CHAKRA_COMP, CHAKRA_SEND, CHAKRA_RECV, CHAKRA_COLL };
enum {
    CHAKRA_ALL_REDUCE,
    CHAKRA_REDUCE,
    CHAKRA_ALL_GATHER,
    CHAKRA_GATHER,
    CHAKRA_SCATTER,
    CHAKRA_BROADCAST,
    CHAKRA_ALL_TO_ALL,
    CHAKRA_REDUCE_SCATTER,
    CHAKRA_REDUCE_SCATTER_BLOCK,
    CHAKRA_BARRIER,
    CHAKRA_NUM_COMM_TYPES
};

#define CHAKRA_NO_STREAM INT64_MIN /* no "stream" attribute */

typedef struct {
    uint64_t id;
    char *name;
    int type;
    uint64_t *deps; /* data dependencies (node ids) */
    int ndeps;
    uint64_t duration_us;
    int64_t duration_ps; /* -1: none */
    double num_ops, tensor_size; /* 0: none */
    int comm_type;               /* -1: none */
    int64_t comm_size;           /* -1: none */
    int64_t comm_src, comm_dst, comm_tag; /* -1: none */
    char *pg_name;                        /* "" when none */
    int64_t stream;                       /* CHAKRA_NO_STREAM; -1: on no stream (a pure synchronisation) */
    bool is_cpu_op;
    int *dep_idx; /* deps as indices into the rank's nodes (filled by loading) */
    long offset;  /* byte offset of the node's length prefix, for messages */
} ChakraNode;

typedef struct {
    char *path;    /* for messages */
    char *version; /* GlobalMetadata's */
    int64_t topo_rank; /* GlobalMetadata "shardsim_topology_rank"; -1: none */
    ChakraNode *nodes;
    int n;
} ChakraRank;

typedef struct {
    ChakraRank *ranks;
    int nranks;
} ChakraTrace;

/* Whether this build reads and writes Chakra ET. */
bool chakra_supported(void);

/* One rank's file from memory (`name` for messages).  `rank` must be zeroed;
 * on failure it is left for chakra_rank_clear. */
bool chakra_parse_rank(const char *name, const uint8_t *buf, size_t len, ChakraRank *rank, GError **err);
void chakra_rank_clear(ChakraRank *rank);

/* Every NAME.RANK.et of `dir` (one NAME, ranks 0..N-1, none missing). */
ChakraTrace *chakra_load_dir(const char *dir, GError **err);
void chakra_trace_free(ChakraTrace *t);

/* Writes `rank` as `path` (dependencies as data_deps, each attribute that is
 * set; duration_ps also as duration_micros, rounded). */
bool chakra_write_rank(const char *path, const ChakraRank *rank, GError **err);

const char *chakra_type_name(int type);
const char *chakra_comm_type_name(int comm_type);

#endif
