/* Topologies: the platform a job runs on, described as data.
 *
 * A topology is a graph of endpoints (ranks = accelerators) and switches joined
 * by directed links, each with a bandwidth (bytes/s) and a latency (s).  It is
 * read from a JSON file: either an explicit list of nodes and links, or a
 * builder for a regular family (ring, fully connected, single switch, NVSwitch
 * node, rail-optimised fat tree, 2D/3D torus, PCIe tree, dragonfly) with its
 * parameters.
 * Presets live in topologies/presets/NAME.json, each number with its source.
 *
 * Routing: shortest path; on fat trees the spine is chosen by the fabric's
 * "routing" (D-mod-K by destination on InfiniBand, an ECMP hash of (src, dst,
 * salt) on Ethernet, an even split over all spines for adaptive routing), all
 * deterministic; dimension-order on tori; minimal, Valiant or adaptive on
 * dragonflies (topo_dragonfly.c).  Where a job's ranks sit: topo_place.h. */
#ifndef TOPO_H
#define TOPO_H

#include "sim_error.h"
#include "sim_net.h"

#include <stdint.h>

typedef struct Topo Topo;

typedef enum {
    TOPO_LINK_NVLINK,  /* GPU <-> GPU or GPU <-> NVSwitch */
    TOPO_LINK_PCIE,    /* PCIe or inter-socket */
    TOPO_LINK_NET,     /* NIC <-> switch, switch <-> switch (InfiniBand, Ethernet) */
    TOPO_LINK_ICI,     /* TPU inter-chip interconnect (torus) */
    TOPO_LINK_SHM,     /* host shared memory between processes */
    TOPO_LINK_NVLINK_BRIDGE, /* NVLink over bridges between two PCIe cards: its own efficiency */
} TopoLinkKind;

/* How a network link carries NCCL's traffic ("transport" of a NIC): the
 * verbs of InfiniBand or RoCE, kernel TCP sockets, Google's GPUDirect-TCPX
 * (A3 High) or TCPXO (A3 Mega), libfabric's CXI provider (HPE Slingshot) or AWS EFA.  Each has its
 * own latency, per-message overhead and achievable fraction of the line rate
 * (models/presets/collectives.json, "transports"). */
typedef enum {
    TOPO_TRANSPORT_NONE, /* not said: the network defaults of the collective model */
    TOPO_TRANSPORT_IB,
    TOPO_TRANSPORT_ROCE,
    TOPO_TRANSPORT_TCP,
    TOPO_TRANSPORT_TCPX,
    TOPO_TRANSPORT_CXI,
    TOPO_TRANSPORT_EFA,
    TOPO_TRANSPORT_TCPXO, /* Google GPUDirect-TCPXO (A3 Mega): the NIC runs the TCP stack */
    TOPO_TRANSPORT_NUM
} TopoTransport;

typedef struct {
    int nodes; /* 0: as the file says; else the number of nodes (servers) for families that scale */
} TopoOptions;

/* `name_or_path` is a preset name (looked up in topologies/presets/) or a path
 * to a JSON file.  Errors are SIM_ERROR_INPUT with FILE:LINE. */
Topo *topo_load(const char *name_or_path, const TopoOptions *opt, GError **err);
void topo_free(Topo *t);
/* The rank count topo_load would build, read from the file alone (no graph)
 * for the families of nodes x ranks_per_node; 0 where it cannot tell (other
 * families, a bad file: topo_load says what is wrong). */
int topo_peek_ranks(const char *name_or_path, const TopoOptions *opt);

const char *topo_name(const Topo *t);
/* The accelerator preset the topology was described with ("a100-80gb"), or NULL. */
const char *topo_accelerator(const Topo *t);
int topo_num_ranks(const Topo *t);
int topo_ranks_per_node(const Topo *t);
int topo_num_nodes(const Topo *t);
int topo_node_of(const Topo *t, int rank);

int topo_num_links(const Topo *t);
double topo_link_bandwidth(const Topo *t, int link);
double topo_link_latency(const Topo *t, int link);
TopoLinkKind topo_link_kind(const Topo *t, int link);
/* A switch-to-switch link of the inter-node fabric (a fat tree's leaf <->
 * spine uplinks; a dragonfly's local and global links and their adaptive
 * pools), which an oversubscribed fabric narrows: the closed-form
 * collective model's beta comes from the NICs, and sees them only through
 * the factor its routed flows give (models/coll_fabric.c). */
bool topo_link_is_fabric(const Topo *t, int link);
/* The fraction of the raw bandwidth the link's own description gives
 * ("efficiency"), or 0 where it leaves that to its kind's default. */
double topo_link_efficiency(const Topo *t, int link);
/* The link's "transport" (NICs); TOPO_TRANSPORT_NONE where not given. */
TopoTransport topo_link_transport(const Topo *t, int link);
/* "ib", "roce", "tcp", "tcpx", "cxi", "efa", "tcpxo" ("" for NONE, "?" out of range). */
const char *topo_transport_name(TopoTransport tr);
/* Host-side cost (s) of launching one collective kernel on one GPU, as the
 * topology's hosts have it ("host_launch_s"), or 0 where not given. */
double topo_host_launch(const Topo *t);
/* The hosts' processor family ("host_cpu"), UNKNOWN where not given. */
typedef enum { TOPO_CPU_UNKNOWN, TOPO_CPU_INTEL, TOPO_CPU_AMD, TOPO_CPU_ARM, TOPO_CPU_POWER } TopoHostCpu;
TopoHostCpu topo_host_cpu(const Topo *t);
/* Whether the NICs hang off the host CPU (NCCL's path PHB: "nic_path": "phb")
 * rather than a PCIe switch shared with their GPU (PXB, the default). */
bool topo_nic_on_host(const Topo *t);
bool topo_nic_on_switch(const Topo *t); /* "nic_path": "pxb" stated */
/* The libfabric the hosts' MPI runs on ("libfabric_version", e.g. "2.2"),
 * NULL where not given. */
const char *topo_libfabric_version(const Topo *t);
/* Names of the link's two ends, for reports ("gpu3", "leaf0"). */
const char *topo_link_src_name(const Topo *t, int link);
const char *topo_link_dst_name(const Topo *t, int link);

/* The path from rank `src` to rank `dst` as link ids, written to `links`
 * (at most `cap`).  Returns the number of links, 0 when src == dst, or -1 if
 * there is no path or it exceeds cap.  `salt` picks among ECMP paths. */
int topo_route(const Topo *t, int src, int dst, uint32_t salt, int *links, int cap);
/* Whether the route from `src` to `dst` (salt 0) crosses a switch-to-switch
 * link of the fabric (topo_link_is_fabric). */
bool topo_route_on_fabric(const Topo *t, int src, int dst);

/* In-network reduction (SHARP/CollNet) offered by the inter-node fabric. */
bool topo_has_in_network_reduction(const Topo *t);
/* Reduction inside the node's NVSwitch (NVLink SHARP, "NVLS": third-generation
 * NVSwitch, H100 and later). */
bool topo_has_nvlink_sharp(const Topo *t);

/* Adds one network link per topology link, with the same ids, to `net`. */
void topo_add_to_net(const Topo *t, SimNet *net);

/* Writes the paths searched for presets, for error messages. */
const char *topo_preset_dir(void);

/* Additions. */
/* How routes pick among equal-cost paths: "dmodk", "ecmp" or "adaptive" on
 * a fat tree with spines, "minimal", "valiant" or "adaptive" on a dragonfly
 * of several groups; NULL where every pair has one path. */
const char *topo_routing(const Topo *t);
/* The builder the topology came from ("fat_tree", ...) or "explicit". */
const char *topo_family(const Topo *t);
/* An upper bound on the number of links of any route: size `links` with it. */
int topo_max_route_length(const Topo *t);
/* The name of a rank's node in the graph ("gpu3", "chip17"); NULL if out of range. */
const char *topo_rank_name(const Topo *t, int rank);
/* "nvlink", "pcie", "net", "ici", "shm", "nvlink_bridge". */
const char *topo_link_kind_name(TopoLinkKind k);
/* A 2-D or 3-D torus (torus2d, torus3d): its sizes in dimension order (chip
 * N at x + X*y + X*Y*z) into dims, and the number of dimensions; 0 for any
 * other topology (a ring of GPUs included). */
int topo_torus_dims(const Topo *t, int dims[3]);
/* The preset names found in topo_preset_dir(), sorted; free with g_strfreev. */
char **topo_list_presets(void);

#endif
