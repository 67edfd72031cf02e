/* Private to topologies/: the Topo struct, the graph-building calls, the
 * parsing helpers every family uses, and the builder interface.
 *
 * Who owns what:
 *   topo.c          the Topo object, accessors, the family table, loading
 *   topo_parse.c    JSON helpers (quantities, link specs, sizes), explicit graphs
 *   topo_node.c     fully_connected, single_switch, nvswitch_node, pcie_tree
 *   topo_torus.c    ring, torus2d, torus3d
 *   topo_fattree.c  fat_tree (rail-optimised, oversubscribed)
 *   topo_dragonfly.c dragonfly (groups of switches, global links; its routes)
 *   topo_route.c    topo_route and the explicit graphs' next-hop tables
 *
 * A builder reads its fields from the root object, sets the sizes, the
 * routing kind and max_route, and adds vertices (ranks first) and links.  Link
 * ids are positions in creation order and routing computes them from indices,
 * so a builder's order of add_link calls is part of its contract. */
#ifndef TOPO_INTERNAL_H
#define TOPO_INTERNAL_H

#include "sim_data.h"
#include "topo.h"

/* How topo_route finds a path: one closed form per graph shape. */
typedef enum {
    TOPO_ROUTE_EXPLICIT, /* next-hop tables */
    TOPO_ROUTE_TORUS,    /* ring = 1-D torus, torus2d, torus3d */
    TOPO_ROUTE_FULLY_CONNECTED,
    TOPO_ROUTE_SWITCH, /* single_switch, nvswitch_node */
    TOPO_ROUTE_FAT_TREE,
    TOPO_ROUTE_PCIE_TREE,
    TOPO_ROUTE_DRAGONFLY,
} TopoRouting;

enum { TOPO_INTRA_NONE, TOPO_INTRA_NVSWITCH, TOPO_INTRA_FC };

/* How a route with several equal-cost paths picks one (topologies/README.md
 * gives each one's source). */
typedef enum {
    TOPO_MULTIPATH_DMODK,    /* by destination index mod up-ports (InfiniBand: OpenSM ftree = D-Mod-K) */
    TOPO_MULTIPATH_ECMP,     /* by a hash of (src, dst, salt) (Ethernet / RoCE) */
    TOPO_MULTIPATH_ADAPTIVE, /* split evenly over every path (adaptive routing, packet spraying) */
} TopoMultipath;

/* Bounds that keep memory and int arithmetic safe. */
#define TOPO_MAX_RANKS (1 << 22)
#define TOPO_MAX_NODES (1 << 20)
#define TOPO_MAX_LINKS (1 << 24) /* a generated family's links: about 400 MB of link arrays */
#define TOPO_MAX_EXPLICIT_TABLE (1 << 26) /* ranks x vertices next-hop entries */

struct Topo {
    char *name;
    char *accel;
    char *family_name;
    TopoRouting fam;
    int nranks, rpn, nnodes;
    bool inr;
    bool nvls; /* NVSwitch reduces in the switch (NVLink SHARP) */

    /* vertices: ranks first (0 .. nranks-1), then switches/NICs/CPUs */
    int nverts, vcap;
    const char **vname;
    GStringChunk *names;

    int nlinks, lcap;
    int *lsrc, *ldst;
    double *lbw, *llat;
    uint8_t *lkind;
    double *leff;        /* given efficiency, 0 = the kind's default */
    uint8_t *ltransport; /* TopoTransport */
    double host_launch;  /* s, 0 = not given */
    TopoHostCpu host_cpu;
    bool nic_phb;        /* "nic_path": "phb": NICs on the host CPU, not a GPU's PCIe switch */
    bool nic_pxb;        /* "nic_path": "pxb" stated: every GPU shares a PCIe switch with its NIC */
    char *libfabric;     /* "libfabric_version" as written; NULL = not given */

    int max_route;

    /* torus (and ring) */
    int ndims, dims[3], dslots[3], doff[3], per_chip;
    bool bidir;

    /* fat tree */
    int ft_g, ft_k, ft_npl, ft_groups, ft_s, ft_intra;
    int ft_b_intra, ft_b_pcie, ft_b_nic, ft_b_up;
    TopoMultipath ft_routing; /* how a route picks its spine */
    int ft_b_pool;            /* adaptive: leaf <-> spine-layer pooled links (-1: none) */

    /* dragonfly (topo_dragonfly.c) */
    int df_groups, df_a, df_h, df_nps, df_g, df_k, df_intra, df_routing;
    int df_b_intra, df_b_pcie, df_b_nic, df_b_local, df_b_global, df_b_pool, df_b_hub, df_b_grp, df_b_pair;

    /* pcie tree */
    int pt_sockets, pt_sps, pt_gps;
    int pt_b_up, pt_b_cpu;

    /* explicit */
    int *next; /* [dst_rank * nverts + v] = link id of the next hop, -1 none */
};

typedef struct {
    double bw;  /* bytes/s, count included */
    double lat; /* s */
    TopoLinkKind kind;
    double eff;              /* "efficiency", 0 = not given */
    TopoTransport transport; /* "transport", NONE = not given */
} TopoLinkSpec;

/* Graph building (topo.c).  Ids are handed out in call order. */
int topo_add_vertex(Topo *t, const char *name);
int topo_add_vertexf(Topo *t, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
int topo_add_link(Topo *t, int src, int dst, const TopoLinkSpec *s);

/* What a builder reads from: the document, its root object, the caller's options. */
typedef struct {
    const SimJsonDoc *doc;
    const cJSON *root;
    const TopoOptions *opt;
} TopoCtx;

typedef bool (*TopoBuildFn)(Topo *t, const TopoCtx *c, GError **err);

/* The builders, in topo_node.c, topo_torus.c, topo_fattree.c and topo_parse.c. */
bool topo_build_ring(Topo *t, const TopoCtx *c, GError **err);
bool topo_build_fully_connected(Topo *t, const TopoCtx *c, GError **err);
bool topo_build_single_switch(Topo *t, const TopoCtx *c, GError **err);
bool topo_build_nvswitch_node(Topo *t, const TopoCtx *c, GError **err);
bool topo_build_fat_tree(Topo *t, const TopoCtx *c, GError **err);
bool topo_build_torus2d(Topo *t, const TopoCtx *c, GError **err);
bool topo_build_torus3d(Topo *t, const TopoCtx *c, GError **err);
bool topo_build_pcie_tree(Topo *t, const TopoCtx *c, GError **err);
bool topo_build_dragonfly(Topo *t, const TopoCtx *c, GError **err);
bool topo_build_explicit(Topo *t, const TopoCtx *c, GError **err); /* no "family" */

/* Parsing helpers (topo_parse.c).  Each reports FILE:LINE through `err`. */

/* Rejects keys outside `allowed` (NULL-terminated) and annotations. */
bool topo_check_keys(const SimJsonDoc *doc, const cJSON *obj, const char *const *allowed, GError **err);
/* topo_check_keys on the root with the common keys plus a family's `extra`. */
bool topo_check_family_keys(const TopoCtx *c, const char *const *extra, GError **err);
/* "kind": one of topo_link_kind_name's names; left as is when absent and optional. */
bool topo_parse_kind(const SimJsonDoc *doc, const cJSON *obj, TopoLinkKind *kind, bool required, GError **err);
/* "transport" of `obj`, NONE when absent. */
bool topo_parse_transport(const SimJsonDoc *doc, const cJSON *obj, TopoTransport *out, GError **err);
/* "latency" (required) of `obj`, a number in s or a string with a unit. */
bool topo_parse_latency(const SimJsonDoc *doc, const cJSON *obj, double *lat, GError **err);
/* bandwidth, latency, count, kind of a link object. */
bool topo_parse_link_fields(const SimJsonDoc *doc, const cJSON *obj, TopoLinkSpec *s, bool kind_required,
                            GError **err);
/* A family's named link class root[key], e.g. "nic": {"bandwidth", "latency"}. */
bool topo_parse_spec(const SimJsonDoc *doc, const cJSON *root, const char *key, TopoLinkKind def_kind,
                     TopoLinkSpec *s, GError **err);

/* TopoOptions.nodes, when set, replaces *nodes. */
bool topo_opt_nodes(const TopoCtx *c, long *nodes, GError **err);
/* For families that cannot grow: TopoOptions.nodes must be 0 or `have`. */
bool topo_opt_nodes_fixed(const TopoCtx *c, int have, GError **err);
/* nodes x rpn within TOPO_MAX_RANKS. */
bool topo_check_ranks(const TopoCtx *c, long nodes, long rpn, GError **err);
/* "nodes" (1) and "ranks_per_node" (def_rpn; required when <= 0), with TopoOptions. */
bool topo_get_nodes_rpn(const TopoCtx *c, long def_rpn, long *nodes, long *rpn, GError **err);

/* "intra": nvswitch (default), fully_connected or none (topo_fattree.c). */
bool topo_parse_intra(const SimJsonDoc *doc, const cJSON *root, int *intra_out, GError **err);
/* The links of `nodes` nodes of `rpn` GPUs and `nics` NICs under `intra`:
 * the node's mesh or NVSwitch links, each GPU's to its NIC and each NIC's
 * to the network, both ways (the families count their switches' apart). */
int64_t topo_node_links(int intra, long nodes, long rpn, long nics);

/* The ECMP hash of (src, dst, salt) (topo_route.c). */
uint32_t topo_ecmp_hash(uint32_t src, uint32_t dst, uint32_t salt);
/* A dragonfly route and its routing's name (topo_dragonfly.c). */
int topo_route_dragonfly(const Topo *t, int src, int dst, uint32_t salt, int *links, int cap);
const char *topo_dragonfly_routing(const Topo *t);

/* Routing tables (topo_route.c): one next-hop table per destination rank by
 * BFS; fails at items[s] when endpoint s cannot reach some rank. */
bool topo_explicit_tables(Topo *t, const TopoCtx *c, bool forward, const cJSON **items, GError **err);

/* A route inside one node of a rail-style cluster (fat tree, dragonfly):
 * through the node's NVSwitch (intra TOPO_INTRA_NVSWITCH, links from b_intra,
 * two per rank) or the direct link of a fully connected node (one per
 * ordered pair); g ranks per node.  Returns its length (0 for another
 * kind), -1 past cap (topo_route.c). */
int topo_route_in_node(int intra, int b_intra, int g, int src, int dst, int *links, int cap);

#endif
