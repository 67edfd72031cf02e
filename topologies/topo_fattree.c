/* fat_tree: a rail-optimised two-level Clos.  Each node's GPUs sit on an
 * NVSwitch (or are fully connected, or neither) and share NICs; NIC k of every
 * node in unit u = node / nodes_per_leaf hangs off leaf u * nics + k (its
 * rail); every leaf connects to every spine.  The uplink bandwidth follows from
 * the leaf's ports and the oversubscription unless given; "fabric" and
 * "routing" say how a route picks its spine (topo_route.c).  Vertices and links
 * are created in blocks (intra-node, GPU-NIC, NIC-leaf, leaf-spine) whose
 * first ids topo_route.c routes from. */
#include "topo_internal.h"

#include <math.h>
#include <string.h>

/* What the file asks for, before any vertex exists. */
typedef struct {
    long nodes, rpn, nics, npl, groups, leaves, spines;
    bool need_spine;
    TopoMultipath routing;
    TopoLinkSpec nvl, pcie, nic, up;
} FatTree;

/* "fabric" names the inter-node network; it sets the default "routing" as
 * its switches route a fat tree (sources in topologies/README.md). */
static const struct {
    const char *name;
    TopoMultipath routing;
    TopoTransport transport; /* the NICs' default transport on this fabric */
} fabrics[] = {
    {"infiniband", TOPO_MULTIPATH_DMODK, TOPO_TRANSPORT_IB}, /* OpenSM ftree: by destination LID */
    {"roce", TOPO_MULTIPATH_ECMP, TOPO_TRANSPORT_ROCE},      /* Ethernet switches: 5-tuple hash */
    {"ethernet", TOPO_MULTIPATH_ECMP, TOPO_TRANSPORT_NONE},  /* RDMA or TCP: the NIC says */
    {"spectrum-x", TOPO_MULTIPATH_ADAPTIVE, TOPO_TRANSPORT_ROCE}, /* per-packet adaptive routing */
    {"slingshot", TOPO_MULTIPATH_ADAPTIVE, TOPO_TRANSPORT_CXI},
};
static const char *const routings[] = {"dmodk", "ecmp", "adaptive"}; /* TopoMultipath order */

/* "fabric" and "routing": routing given, else the fabric's, else ECMP (a
 * fabric not named is taken for a generic Ethernet one). */
static bool parse_routing(const SimJsonDoc *doc, const cJSON *root, TopoMultipath *out, TopoTransport *tr,
                          GError **err)
{
    const char *fabric = NULL, *routing = NULL;
    if (!sim_json_get_string(doc, root, "fabric", false, &fabric, err) ||
        !sim_json_get_string(doc, root, "routing", false, &routing, err))
        return false;
    *out = TOPO_MULTIPATH_ECMP;
    if (fabric) {
        size_t i = 0;
        while (i < G_N_ELEMENTS(fabrics) && strcmp(fabric, fabrics[i].name) != 0)
            i++;
        if (i == G_N_ELEMENTS(fabrics)) {
            sim_json_error(doc, cJSON_GetObjectItemCaseSensitive(root, "fabric"), err,
                           "unknown \"fabric\" \"%s\" (known: infiniband, roce, ethernet, spectrum-x, slingshot)",
                           fabric);
            return false;
        }
        *out = fabrics[i].routing;
        *tr = fabrics[i].transport;
    }
    if (routing) {
        int i = 0;
        while (i < (int)G_N_ELEMENTS(routings) && strcmp(routing, routings[i]) != 0)
            i++;
        if (i == (int)G_N_ELEMENTS(routings)) {
            sim_json_error(doc, cJSON_GetObjectItemCaseSensitive(root, "routing"), err,
                           "unknown \"routing\" \"%s\" (known: dmodk, ecmp, adaptive)", routing);
            return false;
        }
        *out = (TopoMultipath)i;
    }
    return true;
}

bool topo_parse_intra(const SimJsonDoc *doc, const cJSON *root, int *intra_out, GError **err)
{
    const char *intra = "nvswitch";
    if (!sim_json_get_string(doc, root, "intra", false, &intra, err))
        return false;
    if (strcmp(intra, "nvswitch") == 0) {
        *intra_out = TOPO_INTRA_NVSWITCH;
    } else if (strcmp(intra, "fully_connected") == 0) {
        *intra_out = TOPO_INTRA_FC;
    } else if (strcmp(intra, "none") == 0) {
        *intra_out = TOPO_INTRA_NONE;
    } else {
        sim_json_error(doc, cJSON_GetObjectItemCaseSensitive(root, "intra"), err,
                       "unknown \"intra\" \"%s\" (known: nvswitch, fully_connected, none)", intra);
        return false;
    }
    return true;
}

int64_t topo_node_links(int intra, long nodes, long rpn, long nics)
{
    int64_t ranks = (int64_t)nodes * rpn;
    int64_t mesh = intra == TOPO_INTRA_FC ? ranks * (rpn - 1) : intra == TOPO_INTRA_NVSWITCH ? 2 * ranks : 0;
    return mesh + 2 * ranks + 2 * (int64_t)nodes * nics;
}

/* A leaf's uplinks at full rate: its nodes' ports, more where it is
 * undersubscribed (oversubscription below 1). */
static double leaf_up_ports(long leaf_ports, double over) { return (double)leaf_ports / fmin(over, 1); }

/* The leaf <-> spine link: latency required; bandwidth given, or a leaf's
 * downlinks (one NIC of each of its `leaf_ports` nodes) over `over`, spread
 * across the spines. */
static bool parse_uplink(const SimJsonDoc *doc, const cJSON *root, long leaf_ports, double over, FatTree *f,
                         GError **err)
{
    const cJSON *u = cJSON_GetObjectItemCaseSensitive(root, "uplink");
    if (!u || !cJSON_IsObject(u)) {
        sim_json_error(doc, u ? u : root, err, "missing required link description \"uplink\" (with \"latency\")");
        return false;
    }
    static const char *const ukeys[] = {"bandwidth", "latency", "count", "kind", NULL};
    if (!topo_check_keys(doc, u, ukeys, err))
        return false;
    double lat = 0;
    if (!topo_parse_latency(doc, u, &lat, err))
        return false;
    f->up.kind = TOPO_LINK_NET;
    if (!topo_parse_kind(doc, u, &f->up.kind, false, err))
        return false;
    f->up.lat = lat;
    if (cJSON_GetObjectItemCaseSensitive(u, "bandwidth")) {
        if (cJSON_GetObjectItemCaseSensitive(root, "oversubscription")) {
            sim_json_error(doc, u, err, "give either \"oversubscription\" or an uplink \"bandwidth\", not both");
            return false;
        }
        return topo_parse_link_fields(doc, u, &f->up, false, err);
    }
    f->up.bw = (double)leaf_ports * f->nic.bw / (over * (double)f->spines);
    /* More spines than a leaf has ports up at full rate (its nodes, more
     * where it is undersubscribed) cut each uplink below one NIC's rate
     * before any oversubscription (which thins the uplinks on purpose): no
     * switch one buys, and a flow that routing keeps on one spine would run
     * at it.  A description slip, not a what-if (the default spine count is
     * kept below it, parse_fat_tree). */
    double up_ports = leaf_up_ports(leaf_ports, over);
    if (f->routing != TOPO_MULTIPATH_ADAPTIVE && f->spines > up_ports * (1 + 1e-9)) {
        sim_json_error(doc, cJSON_GetObjectItemCaseSensitive(root, "spines"), err,
                       "%ld spines for leaves of %ld nodes (oversubscription %g): each uplink would carry %.3g GB/s, "
                       "less than one NIC's %.3g, and %s routing keeps a flow on one spine; give at most %ld spines, "
                       "an uplink \"bandwidth\", or \"routing\": \"adaptive\"",
                       f->spines, leaf_ports, over, f->up.bw * fmax(over, 1) / 1e9, f->nic.bw / 1e9,
                       routings[f->routing], (long)floor(up_ports + 1e-9));
        return false;
    }
    return true;
}

/* Reads and checks every field, in the order errors are reported. */
static bool parse_fat_tree(const TopoCtx *c, int *intra, FatTree *f, GError **err)
{
    static const char *const keys[] = {"ranks_per_node", "nodes", "nics_per_node", "intra", "nvlink", "pcie",
                                       "nic", "nodes_per_leaf", "spines", "oversubscription", "uplink", "fabric",
                                       "routing", NULL};
    const SimJsonDoc *doc = c->doc;
    const cJSON *root = c->root;
    double over = 1;
    if (!topo_check_family_keys(c, keys, err) || !topo_get_nodes_rpn(c, 0, &f->nodes, &f->rpn, err))
        return false;
    f->nics = f->rpn;
    if (!sim_json_get_int(doc, root, "nics_per_node", false, 1, TOPO_MAX_RANKS, &f->nics, err))
        return false;
    if (f->rpn % f->nics != 0 && f->nics % f->rpn != 0) {
        sim_json_error(doc, cJSON_GetObjectItemCaseSensitive(root, "nics_per_node"), err,
                       "%ld GPUs per node cannot share %ld NICs evenly", f->rpn, f->nics);
        return false;
    }
    TopoTransport fabric_tr = TOPO_TRANSPORT_NONE;
    if (!topo_parse_intra(doc, root, intra, err) || !parse_routing(doc, root, &f->routing, &fabric_tr, err))
        return false;
    if (*intra != TOPO_INTRA_NONE && !topo_parse_spec(doc, root, "nvlink", TOPO_LINK_NVLINK, &f->nvl, err))
        return false;
    if (!topo_parse_spec(doc, root, "pcie", TOPO_LINK_PCIE, &f->pcie, err) ||
        !topo_parse_spec(doc, root, "nic", TOPO_LINK_NET, &f->nic, err))
        return false;
    if (f->nic.transport == TOPO_TRANSPORT_NONE)
        f->nic.transport = fabric_tr;
    if (f->nics > f->rpn) { /* several NICs per GPU (OCI BM.GPU4.8: 16 for 8): one rail of their sum */
        f->nic.bw *= (double)(f->nics / f->rpn);
        f->nics = f->rpn;
    }
    f->npl = f->nodes;
    f->spines = 0;
    if (!sim_json_get_int(doc, root, "nodes_per_leaf", false, 1, TOPO_MAX_NODES, &f->npl, err) ||
        !sim_json_get_int(doc, root, "spines", false, 1, 1 << 16, &f->spines, err) ||
        !sim_json_get_number(doc, root, "oversubscription", false, 1e-3, 1e6, &over, err))
        return false;
    long leaf_ports = f->npl; /* a leaf's design capacity sets its uplinks, even when fewer nodes fill it */
    if (f->npl > f->nodes)
        f->npl = f->nodes;
    f->groups = (f->nodes + f->npl - 1) / f->npl;
    f->leaves = f->groups * f->nics;
    if (f->spines == 0) { /* default: as many spines as rails, no more than a leaf's ports fill */
        f->spines = f->nics;
        double up_ports = leaf_up_ports(leaf_ports, over);
        if (f->routing != TOPO_MULTIPATH_ADAPTIVE && f->spines > up_ports)
            f->spines = up_ports >= 1 ? (long)floor(up_ports) : 1;
    }
    f->need_spine = f->leaves > 1;
    if (f->need_spine && !parse_uplink(doc, root, leaf_ports, over, f, err))
        return false;
    /* every block's links, a pool's included: memory stays bounded */
    int64_t node = topo_node_links(*intra, f->nodes, f->rpn, f->nics);
    int64_t links = node + (f->need_spine ? 2 * (int64_t)f->leaves * (f->spines + 1) : 0);
    if (links > TOPO_MAX_LINKS) {
        sim_json_error(doc, root, err, "this fat tree would have %lld links, more than %d (%ld leaves x %ld spines, %lld "
                       "links of the nodes)", (long long)links, TOPO_MAX_LINKS, f->leaves, f->spines, (long long)node);
        return false;
    }
    return true;
}

/* Vertices, then links block by block; each block's first id is kept for routing. */
static void wire_fat_tree(Topo *t, const FatTree *f)
{
    for (int r = 0; r < t->nranks; r++)
        topo_add_vertexf(t, "gpu%d", r);
    int v_nvsw = t->nverts;
    if (t->ft_intra == TOPO_INTRA_NVSWITCH)
        for (int n = 0; n < t->nnodes; n++)
            topo_add_vertexf(t, "node%d.nvswitch", n);
    int v_nic = t->nverts;
    for (int n = 0; n < t->nnodes; n++)
        for (int k = 0; k < t->ft_k; k++)
            topo_add_vertexf(t, "node%d.nic%d", n, k);
    int v_leaf = t->nverts;
    for (long l = 0; l < f->leaves; l++)
        topo_add_vertexf(t, "leaf%ld", l);
    int v_spine = t->nverts;
    for (int s = 0; s < t->ft_s; s++)
        topo_add_vertexf(t, "spine%d", s);
    bool pool = t->ft_routing == TOPO_MULTIPATH_ADAPTIVE && t->ft_s > 0;
    int v_pool = pool ? topo_add_vertex(t, "spines") : -1;

    t->ft_b_intra = t->nlinks;
    if (t->ft_intra == TOPO_INTRA_NVSWITCH) {
        for (int r = 0; r < t->nranks; r++) {
            topo_add_link(t, r, v_nvsw + r / t->ft_g, &f->nvl);
            topo_add_link(t, v_nvsw + r / t->ft_g, r, &f->nvl);
        }
    } else if (t->ft_intra == TOPO_INTRA_FC) {
        for (int r = 0; r < t->nranks; r++) {
            int base = r - r % t->ft_g;
            for (int j = 0; j < t->ft_g; j++)
                if (base + j != r)
                    topo_add_link(t, r, base + j, &f->nvl);
        }
    }
    int gpn = t->ft_g / t->ft_k; /* GPUs sharing one NIC */
    t->ft_b_pcie = t->nlinks;
    for (int r = 0; r < t->nranks; r++) {
        int nicv = v_nic + (r / t->ft_g) * t->ft_k + (r % t->ft_g) / gpn;
        topo_add_link(t, r, nicv, &f->pcie);
        topo_add_link(t, nicv, r, &f->pcie);
    }
    t->ft_b_nic = t->nlinks;
    for (int n = 0; n < t->nnodes; n++) {
        for (int k = 0; k < t->ft_k; k++) {
            int leaf = v_leaf + (n / t->ft_npl) * t->ft_k + k;
            topo_add_link(t, v_nic + n * t->ft_k + k, leaf, &f->nic);
            topo_add_link(t, leaf, v_nic + n * t->ft_k + k, &f->nic);
        }
    }
    t->ft_b_up = t->nlinks;
    for (long l = 0; l < f->leaves && t->ft_s > 0; l++) {
        for (int s = 0; s < t->ft_s; s++) {
            topo_add_link(t, v_leaf + (int)l, v_spine + s, &f->up);
            topo_add_link(t, v_spine + s, v_leaf + (int)l, &f->up);
        }
    }
    /* Adaptive routing splits every flow evenly over the spines, so each of a
     * leaf's uplinks carries 1/spines of all it sends: in a flow model that is
     * exactly one link of spines x the bandwidth, up and down.  The per-spine
     * links above stay (same ids for every routing) and carry nothing. */
    t->ft_b_pool = pool ? t->nlinks : -1;
    TopoLinkSpec agg = f->up;
    agg.bw *= (double)t->ft_s;
    for (long l = 0; pool && l < f->leaves; l++) {
        topo_add_link(t, v_leaf + (int)l, v_pool, &agg);
        topo_add_link(t, v_pool, v_leaf + (int)l, &agg);
    }
}

bool topo_build_fat_tree(Topo *t, const TopoCtx *c, GError **err)
{
    FatTree f = {0};
    if (!parse_fat_tree(c, &t->ft_intra, &f, err))
        return false;
    t->fam = TOPO_ROUTE_FAT_TREE;
    t->nnodes = (int)f.nodes;
    t->rpn = (int)f.rpn;
    t->nranks = (int)(f.nodes * f.rpn);
    t->ft_g = (int)f.rpn;
    t->ft_k = (int)f.nics;
    t->ft_npl = (int)f.npl;
    t->ft_groups = (int)f.groups;
    t->ft_s = f.need_spine ? (int)f.spines : 0;
    t->ft_routing = f.routing;
    t->max_route = 6;
    wire_fat_tree(t, &f);
    return true;
}
