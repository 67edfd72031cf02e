/* Topologies: JSON in, a graph of vertices and directed links out, plus
 * routing.  Regular families keep their parameters and route in closed form
 * (no tables, O(path length) per route); explicit graphs precompute one
 * next-hop table per destination rank at load time, which also proves every
 * rank reaches every other. */
#include "topo_internal.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* Graph building                                                      */

int topo_add_vertex(Topo *t, const char *name)
{
    if (t->nverts == t->vcap) {
        t->vcap = t->vcap ? 2 * t->vcap : 64;
        t->vname = g_renew(const char *, t->vname, t->vcap);
    }
    t->vname[t->nverts] = g_string_chunk_insert(t->names, name);
    return t->nverts++;
}

int topo_add_vertexf(Topo *t, const char *fmt, ...)
{
    char buf[128];
    va_list ap;
    va_start(ap, fmt);
    g_vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return topo_add_vertex(t, buf);
}

int topo_add_link(Topo *t, int src, int dst, const TopoLinkSpec *s)
{
    if (t->nlinks == t->lcap) {
        t->lcap = t->lcap ? 2 * t->lcap : 64;
        t->lsrc = g_renew(int, t->lsrc, t->lcap);
        t->ldst = g_renew(int, t->ldst, t->lcap);
        t->lbw = g_renew(double, t->lbw, t->lcap);
        t->llat = g_renew(double, t->llat, t->lcap);
        t->lkind = g_renew(uint8_t, t->lkind, t->lcap);
    }
    int id = t->nlinks++;
    t->lsrc[id] = src;
    t->ldst[id] = dst;
    t->lbw[id] = s->bw;
    t->llat[id] = s->lat;
    t->lkind[id] = (uint8_t)s->kind;
    return id;
}

static Topo *topo_new(void)
{
    Topo *t = g_new0(Topo, 1);
    t->names = g_string_chunk_new(4096);
    return t;
}

void topo_free(Topo *t)
{
    if (!t)
        return;
    g_free(t->name);
    g_free(t->accel);
    g_free(t->family_name);
    g_free(t->vname);
    g_string_chunk_free(t->names);
    g_free(t->lsrc);
    g_free(t->ldst);
    g_free(t->lbw);
    g_free(t->llat);
    g_free(t->lkind);
    g_free(t->next);
    g_free(t);
}

/* ------------------------------------------------------------------ */
/* Families                                                            */


static bool build_fat_tree(Topo *t, const TopoCtx *c, GError **err)
{
    static const char *const keys[] = {"ranks_per_node", "nodes", "nics_per_node", "intra", "nvlink", "pcie",
                                       "nic", "nodes_per_leaf", "spines", "oversubscription", "uplink", NULL};
    const SimJsonDoc *doc = c->doc;
    const cJSON *root = c->root;
    long nodes, rpn, nics, npl, spines = 0;
    double over = 1;
    TopoLinkSpec nvl = {0}, pcie, nic, up;
    if (!topo_check_family_keys(c, keys, err) || !topo_get_nodes_rpn(c, 0, &nodes, &rpn, err))
        return false;
    nics = rpn;
    if (!sim_json_get_int(doc, root, "nics_per_node", false, 1, TOPO_MAX_RANKS, &nics, err))
        return false;
    if (rpn % nics != 0) {
        sim_json_error(doc, cJSON_GetObjectItemCaseSensitive(root, "nics_per_node"), err,
                       "%ld GPUs per node cannot share %ld NICs evenly", rpn, nics);
        return false;
    }
    const char *intra = "nvswitch";
    if (!sim_json_get_string(doc, root, "intra", false, &intra, err))
        return false;
    if (strcmp(intra, "nvswitch") == 0) {
        t->ft_intra = TOPO_INTRA_NVSWITCH;
    } else if (strcmp(intra, "fully_connected") == 0) {
        t->ft_intra = TOPO_INTRA_FC;
    } else if (strcmp(intra, "none") == 0) {
        t->ft_intra = TOPO_INTRA_NONE;
    } else {
        sim_json_error(doc, cJSON_GetObjectItemCaseSensitive(root, "intra"), err,
                       "unknown \"intra\" \"%s\" (known: nvswitch, fully_connected, none)", intra);
        return false;
    }
    if (t->ft_intra != TOPO_INTRA_NONE && !topo_parse_spec(doc, root, "nvlink", TOPO_LINK_NVLINK, &nvl, err))
        return false;
    if (!topo_parse_spec(doc, root, "pcie", TOPO_LINK_PCIE, &pcie, err) ||
        !topo_parse_spec(doc, root, "nic", TOPO_LINK_NET, &nic, err))
        return false;
    npl = nodes;
    if (!sim_json_get_int(doc, root, "nodes_per_leaf", false, 1, TOPO_MAX_NODES, &npl, err) ||
        !sim_json_get_int(doc, root, "spines", false, 1, 1 << 16, &spines, err) ||
        !sim_json_get_number(doc, root, "oversubscription", false, 1e-3, 1e6, &over, err))
        return false;
    long leaf_ports = npl; /* a leaf's design capacity sets its uplinks, even when fewer nodes fill it */
    if (npl > nodes)
        npl = nodes;
    long groups = (nodes + npl - 1) / npl;
    long leaves = groups * nics;
    if (spines == 0)
        spines = nics; /* default: as many spines as rails */
    bool need_spine = leaves > 1;
    if (need_spine) {
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
        up.kind = TOPO_LINK_NET;
        if (!topo_parse_kind(doc, u, &up.kind, false, err))
            return false;
        up.lat = lat;
        if (cJSON_GetObjectItemCaseSensitive(u, "bandwidth")) {
            if (cJSON_GetObjectItemCaseSensitive(root, "oversubscription")) {
                sim_json_error(doc, u, err, "give either \"oversubscription\" or an uplink \"bandwidth\", not both");
                return false;
            }
            if (!topo_parse_link_fields(doc, u, &up, false, err))
                return false;
        } else {
            /* A leaf's downlinks (one NIC of each of its nodes) over `over`, spread across the spines. */
            up.bw = (double)leaf_ports * nic.bw / (over * (double)spines);
        }
    }
    if (2 * (int64_t)leaves * spines > (int64_t)1 << 28) {
        sim_json_error(doc, root, err, "%ld leaves x %ld spines: too many links", leaves, spines);
        return false;
    }

    t->fam = TOPO_ROUTE_FAT_TREE;
    t->nnodes = (int)nodes;
    t->rpn = (int)rpn;
    t->nranks = (int)(nodes * rpn);
    t->ft_g = (int)rpn;
    t->ft_k = (int)nics;
    t->ft_npl = (int)npl;
    t->ft_groups = (int)groups;
    t->ft_s = need_spine ? (int)spines : 0;
    t->max_route = 6;

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
    for (long l = 0; l < leaves; l++)
        topo_add_vertexf(t, "leaf%ld", l);
    int v_spine = t->nverts;
    for (int s = 0; s < t->ft_s; s++)
        topo_add_vertexf(t, "spine%d", s);

    t->ft_b_intra = t->nlinks;
    if (t->ft_intra == TOPO_INTRA_NVSWITCH) {
        for (int r = 0; r < t->nranks; r++) {
            topo_add_link(t, r, v_nvsw + r / t->ft_g, &nvl);
            topo_add_link(t, v_nvsw + r / t->ft_g, r, &nvl);
        }
    } else if (t->ft_intra == TOPO_INTRA_FC) {
        for (int r = 0; r < t->nranks; r++) {
            int base = r - r % t->ft_g;
            for (int j = 0; j < t->ft_g; j++)
                if (base + j != r)
                    topo_add_link(t, r, base + j, &nvl);
        }
    }
    int gpn = t->ft_g / t->ft_k; /* GPUs sharing one NIC */
    t->ft_b_pcie = t->nlinks;
    for (int r = 0; r < t->nranks; r++) {
        int nicv = v_nic + (r / t->ft_g) * t->ft_k + (r % t->ft_g) / gpn;
        topo_add_link(t, r, nicv, &pcie);
        topo_add_link(t, nicv, r, &pcie);
    }
    t->ft_b_nic = t->nlinks;
    for (int n = 0; n < t->nnodes; n++) {
        for (int k = 0; k < t->ft_k; k++) {
            int leaf = v_leaf + (n / t->ft_npl) * t->ft_k + k;
            topo_add_link(t, v_nic + n * t->ft_k + k, leaf, &nic);
            topo_add_link(t, leaf, v_nic + n * t->ft_k + k, &nic);
        }
    }
    t->ft_b_up = t->nlinks;
    for (long l = 0; l < leaves && t->ft_s > 0; l++) {
        for (int s = 0; s < t->ft_s; s++) {
            topo_add_link(t, v_leaf + (int)l, v_spine + s, &up);
            topo_add_link(t, v_spine + s, v_leaf + (int)l, &up);
        }
    }
    return true;
}

/* ------------------------------------------------------------------ */
/* Loading                                                             */

static const char *const family_names[] = {"ring",          "fully_connected", "single_switch", "nvswitch_node",
                                           "fat_tree",      "torus2d",         "torus3d",       "pcie_tree"};

static Topo *build(const SimJsonDoc *doc, const char *default_name, const TopoOptions *opt, GError **err)
{
    const cJSON *root = sim_json_root(doc);
    if (!cJSON_IsObject(root)) {
        sim_json_error(doc, root, err, "a topology must be a JSON object");
        return NULL;
    }
    TopoCtx c = {doc, root, opt};
    Topo *t = topo_new();
    const char *name = default_name, *accel = NULL, *fam = NULL;
    bool ok = sim_json_get_string(doc, root, "name", false, &name, err) &&
              sim_json_get_string(doc, root, "accelerator", false, &accel, err) &&
              sim_json_get_bool(doc, root, "in_network_reduction", &t->inr, err) &&
              sim_json_get_bool(doc, root, "nvlink_sharp", &t->nvls, err) &&
              sim_json_get_string(doc, root, "family", false, &fam, err);
    if (ok) {
        t->name = g_strdup(name);
        t->accel = g_strdup(accel);
        t->family_name = g_strdup(fam ? fam : "explicit");
        if (!fam) {
            ok = topo_build_explicit(t, &c, err);
        } else if (strcmp(fam, "ring") == 0) {
            ok = topo_build_ring(t, &c, err);
        } else if (strcmp(fam, "fully_connected") == 0) {
            ok = topo_build_fully_connected(t, &c, err);
        } else if (strcmp(fam, "single_switch") == 0) {
            ok = topo_build_single_switch(t, &c, err);
        } else if (strcmp(fam, "nvswitch_node") == 0) {
            ok = topo_build_nvswitch_node(t, &c, err);
        } else if (strcmp(fam, "fat_tree") == 0) {
            ok = build_fat_tree(t, &c, err);
        } else if (strcmp(fam, "torus2d") == 0) {
            ok = topo_build_torus2d(t, &c, err);
        } else if (strcmp(fam, "torus3d") == 0) {
            ok = topo_build_torus3d(t, &c, err);
        } else if (strcmp(fam, "pcie_tree") == 0) {
            ok = topo_build_pcie_tree(t, &c, err);
        } else {
            GString *s = g_string_new(NULL);
            for (size_t i = 0; i < G_N_ELEMENTS(family_names); i++)
                g_string_append_printf(s, "%s%s", i ? ", " : "", family_names[i]);
            sim_json_error(doc, cJSON_GetObjectItemCaseSensitive(root, "family"), err,
                           "unknown family \"%s\" (known: %s; or omit \"family\" and list \"links\")", fam, s->str);
            g_string_free(s, TRUE);
            ok = false;
        }
    }
    if (!ok) {
        topo_free(t);
        return NULL;
    }
    return t;
}

#define TOPO_PRESETS "topologies/presets"

const char *topo_preset_dir(void)
{
    /* per thread: sweep loads topologies from several threads at once */
    static _Thread_local char buf[4096];
    char *d = sim_data_dir(TOPO_PRESETS);
    g_strlcpy(buf, d, sizeof buf);
    g_free(d);
    return buf;
}

char **topo_list_presets(void)
{
    return sim_data_list(TOPO_PRESETS);
}

Topo *topo_load(const char *name_or_path, const TopoOptions *opt, GError **err)
{
    g_return_val_if_fail(name_or_path != NULL, NULL);
    char *path = sim_data_resolve(TOPO_PRESETS, "topology preset", name_or_path, err);
    if (!path)
        return NULL;
    char *b = g_path_get_basename(name_or_path);
    char *base = g_str_has_suffix(b, ".json") ? g_strndup(b, strlen(b) - 5) : g_strdup(b);
    g_free(b);
    Topo *t = NULL;
    SimJsonDoc *doc = sim_json_load_file(path, err);
    if (doc)
        t = build(doc, base, opt, err);
    sim_json_free(doc);
    g_free(path);
    g_free(base);
    return t;
}

/* ------------------------------------------------------------------ */
/* Accessors                                                           */

const char *topo_name(const Topo *t) { return t->name; }
const char *topo_accelerator(const Topo *t) { return t->accel; }
const char *topo_family(const Topo *t) { return t->family_name; }
int topo_num_ranks(const Topo *t) { return t->nranks; }
int topo_ranks_per_node(const Topo *t) { return t->rpn; }
int topo_num_nodes(const Topo *t) { return t->nnodes; }
int topo_node_of(const Topo *t, int rank) { return rank >= 0 && rank < t->nranks ? rank / t->rpn : -1; }
int topo_num_links(const Topo *t) { return t->nlinks; }
double topo_link_bandwidth(const Topo *t, int l) { return t->lbw[l]; }
double topo_link_latency(const Topo *t, int l) { return t->llat[l]; }
TopoLinkKind topo_link_kind(const Topo *t, int l) { return (TopoLinkKind)t->lkind[l]; }
const char *topo_link_src_name(const Topo *t, int l) { return t->vname[t->lsrc[l]]; }
const char *topo_link_dst_name(const Topo *t, int l) { return t->vname[t->ldst[l]]; }
bool topo_has_in_network_reduction(const Topo *t) { return t->inr; }
bool topo_has_nvlink_sharp(const Topo *t) { return t->nvls; }
int topo_max_route_length(const Topo *t) { return t->max_route; }
const char *topo_rank_name(const Topo *t, int rank) { return rank >= 0 && rank < t->nranks ? t->vname[rank] : NULL; }

void topo_add_to_net(const Topo *t, SimNet *net)
{
    for (int l = 0; l < t->nlinks; l++)
        sim_net_add_link(net, t->lbw[l], sim_time_from_s(t->llat[l]));
}
