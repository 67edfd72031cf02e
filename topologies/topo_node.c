/* The small families: fully_connected (a link per ordered pair of
 * ranks), single_switch and nvswitch_node (every rank to one crossbar), and
 * pcie_tree (GPUs under PCIe switches under CPU sockets, sockets meshed).
 * Link ids are laid out for the closed-form routes in topo_route.c. */
#include "topo_internal.h"

bool topo_build_fully_connected(Topo *t, const TopoCtx *c, GError **err)
{
    static const char *const keys[] = {"ranks_per_node", "nodes", "link", NULL};
    long nodes, rpn, file_nodes = 1;
    TopoLinkSpec s;
    if (!topo_check_family_keys(c, keys, err) ||
        !sim_json_get_int(c->doc, c->root, "nodes", false, 1, TOPO_MAX_NODES, &file_nodes, err) ||
        !topo_get_nodes_rpn(c, 0, &nodes, &rpn, err) ||
        !topo_parse_spec(c->doc, c->root, "link", TOPO_LINK_NVLINK, &s, err))
        return false;
    /* every pair has its own link: more nodes would wire them to each other
     * with the same links, a network nobody has */
    if (nodes != file_nodes) {
        sim_json_error(c->doc, c->root, err,
                       "fully_connected describes %ld node(s), not %ld; use the fat_tree family for several",
                       file_nodes, nodes);
        return false;
    }
    int64_t n = nodes * rpn;
    if (n * (n - 1) > (int64_t)1 << 28) {
        sim_json_error(c->doc, c->root, err, "a fully connected graph of %lld ranks has too many links",
                       (long long)n);
        return false;
    }
    t->fam = TOPO_ROUTE_FULLY_CONNECTED;
    t->nnodes = (int)nodes;
    t->rpn = (int)rpn;
    t->nranks = (int)n;
    t->max_route = 1;
    for (int r = 0; r < t->nranks; r++)
        topo_add_vertexf(t, "gpu%d", r);
    for (int i = 0; i < t->nranks; i++)
        for (int j = 0; j < t->nranks; j++)
            if (i != j)
                topo_add_link(t, i, j, &s);
    return true;
}

static bool build_switch(Topo *t, const TopoCtx *c, bool nvswitch, GError **err)
{
    static const char *const keys[] = {"ranks_per_node", "nodes", "link", NULL};
    static const char *const nvkeys[] = {"ranks_per_node", "nodes", "nvlink", NULL};
    long nodes, rpn;
    TopoLinkSpec s;
    if (!topo_check_family_keys(c, nvswitch ? nvkeys : keys, err) ||
        !topo_get_nodes_rpn(c, nvswitch ? 8 : 0, &nodes, &rpn, err) ||
        !topo_parse_spec(c->doc, c->root, nvswitch ? "nvlink" : "link", nvswitch ? TOPO_LINK_NVLINK : TOPO_LINK_NET, &s,
                    err))
        return false;
    if (nvswitch && nodes != 1) {
        sim_json_error(c->doc, c->root, err,
                       "nvswitch_node describes one node, not the %ld asked for; a cluster preset (such as "
                       "dgx-a100-cluster) or a fat_tree topology describes several",
                       nodes);
        return false;
    }
    t->fam = TOPO_ROUTE_SWITCH;
    t->nnodes = (int)nodes;
    t->rpn = (int)rpn;
    t->nranks = t->nnodes * t->rpn;
    t->max_route = 2;
    for (int r = 0; r < t->nranks; r++)
        topo_add_vertexf(t, "gpu%d", r);
    int sw = topo_add_vertex(t, nvswitch ? "nvswitch" : "switch");
    for (int r = 0; r < t->nranks; r++) {
        topo_add_link(t, r, sw, &s);
        topo_add_link(t, sw, r, &s);
    }
    return true;
}

bool topo_build_single_switch(Topo *t, const TopoCtx *c, GError **err)
{
    return build_switch(t, c, false, err);
}

bool topo_build_nvswitch_node(Topo *t, const TopoCtx *c, GError **err)
{
    return build_switch(t, c, true, err);
}

bool topo_build_pcie_tree(Topo *t, const TopoCtx *c, GError **err)
{
    static const char *const keys[] = {"sockets", "switches_per_socket", "gpus_per_switch", "pcie", "uplink",
                                       "inter_socket", NULL};
    const SimJsonDoc *doc = c->doc;
    long sockets = 2, sps = 1, gps = 0;
    TopoLinkSpec pcie, up, qpi = {0};
    if (!topo_check_family_keys(c, keys, err) ||
        !sim_json_get_int(doc, c->root, "sockets", false, 1, 64, &sockets, err) ||
        !sim_json_get_int(doc, c->root, "switches_per_socket", false, 1, 64, &sps, err) ||
        !sim_json_get_int(doc, c->root, "gpus_per_switch", true, 1, 1024, &gps, err) ||
        !topo_parse_spec(doc, c->root, "pcie", TOPO_LINK_PCIE, &pcie, err))
        return false;
    up = pcie;
    if (cJSON_GetObjectItemCaseSensitive(c->root, "uplink") &&
        !topo_parse_spec(doc, c->root, "uplink", TOPO_LINK_PCIE, &up, err))
        return false;
    if (sockets > 1 && !topo_parse_spec(doc, c->root, "inter_socket", TOPO_LINK_PCIE, &qpi, err))
        return false;
    if (!topo_opt_nodes_fixed(c, 1, err))
        return false;
    t->fam = TOPO_ROUTE_PCIE_TREE;
    t->pt_sockets = (int)sockets;
    t->pt_sps = (int)sps;
    t->pt_gps = (int)gps;
    t->nranks = (int)(sockets * sps * gps);
    t->rpn = t->nranks;
    t->nnodes = 1;
    t->max_route = 5;
    int nsw = (int)(sockets * sps);
    for (int r = 0; r < t->nranks; r++)
        topo_add_vertexf(t, "gpu%d", r);
    int v_sw = t->nverts;
    for (int s = 0; s < nsw; s++)
        topo_add_vertexf(t, "pcisw%d", s);
    int v_cpu = t->nverts;
    for (int s = 0; s < sockets; s++)
        topo_add_vertexf(t, "cpu%d", s);
    for (int r = 0; r < t->nranks; r++) {
        topo_add_link(t, r, v_sw + r / t->pt_gps, &pcie);
        topo_add_link(t, v_sw + r / t->pt_gps, r, &pcie);
    }
    t->pt_b_up = t->nlinks;
    for (int s = 0; s < nsw; s++) {
        topo_add_link(t, v_sw + s, v_cpu + s / t->pt_sps, &up);
        topo_add_link(t, v_cpu + s / t->pt_sps, v_sw + s, &up);
    }
    t->pt_b_cpu = t->nlinks;
    for (int a = 0; a < sockets; a++)
        for (int b = 0; b < sockets; b++)
            if (a != b)
                topo_add_link(t, v_cpu + a, v_cpu + b, &qpi);
    return true;
}
