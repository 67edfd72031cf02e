/* Topologies: the Topo object (creation, the vertex and link arrays builders
 * append to, accessors), the table of families, and loading: a preset name or
 * path -> JSON -> the common fields -> the family's builder (topo_node.c,
 * topo_torus.c, topo_fattree.c; topo_parse.c for explicit graphs).  Routing is
 * topo_route.c. */
#include "topo_internal.h"

#include <stdarg.h>
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
        t->leff = g_renew(double, t->leff, t->lcap);
        t->ltransport = g_renew(uint8_t, t->ltransport, t->lcap);
    }
    int id = t->nlinks++;
    t->lsrc[id] = src;
    t->ldst[id] = dst;
    t->lbw[id] = s->bw;
    t->llat[id] = s->lat;
    t->lkind[id] = (uint8_t)s->kind;
    t->leff[id] = s->eff;
    t->ltransport[id] = (uint8_t)s->transport;
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
    g_free(t->libfabric);
    g_free(t->vname);
    g_string_chunk_free(t->names);
    g_free(t->lsrc);
    g_free(t->ldst);
    g_free(t->lbw);
    g_free(t->llat);
    g_free(t->lkind);
    g_free(t->leff);
    g_free(t->ltransport);
    g_free(t->next);
    g_free(t);
}

/* ------------------------------------------------------------------ */
/* Loading                                                             */

/* Every family, in the order error messages list them.  A new family is a
 * builder (topo_internal.h says what it must do) and a line here. */
static const struct {
    const char *name; /* the "family" value */
    TopoBuildFn build;
} families[] = {
    {"ring", topo_build_ring},
    {"fully_connected", topo_build_fully_connected},
    {"single_switch", topo_build_single_switch},
    {"nvswitch_node", topo_build_nvswitch_node},
    {"fat_tree", topo_build_fat_tree},
    {"torus2d", topo_build_torus2d},
    {"torus3d", topo_build_torus3d},
    {"pcie_tree", topo_build_pcie_tree},
    {"dragonfly", topo_build_dragonfly},
};

/* The builder of `fam`, NULL (and an error listing the families) if none. */
static TopoBuildFn find_family(const SimJsonDoc *doc, const cJSON *root, const char *fam, GError **err)
{
    for (size_t i = 0; i < G_N_ELEMENTS(families); i++)
        if (strcmp(fam, families[i].name) == 0)
            return families[i].build;
    GString *s = g_string_new(NULL);
    for (size_t i = 0; i < G_N_ELEMENTS(families); i++)
        g_string_append_printf(s, "%s%s", i ? ", " : "", families[i].name);
    sim_json_error(doc, cJSON_GetObjectItemCaseSensitive(root, "family"), err,
                   "unknown family \"%s\" (known: %s; or omit \"family\" and list \"links\")", fam, s->str);
    g_string_free(s, TRUE);
    return NULL;
}

/* "host_cpu": the hosts' processor family, which NCCL's tuner reads (its
 * network post overhead and LL bandwidth ceilings differ on AMD hosts). */
static bool get_host_cpu(const SimJsonDoc *doc, const cJSON *root, TopoHostCpu *out, GError **err)
{
    static const char *const names[] = {[TOPO_CPU_INTEL] = "intel", [TOPO_CPU_AMD] = "amd", [TOPO_CPU_ARM] = "arm",
                                        [TOPO_CPU_POWER] = "power"};
    const char *s = NULL;
    *out = TOPO_CPU_UNKNOWN;
    if (!sim_json_get_string(doc, root, "host_cpu", false, &s, err))
        return false;
    for (int i = TOPO_CPU_INTEL; s && i <= TOPO_CPU_POWER; i++)
        if (strcmp(s, names[i]) == 0)
            *out = (TopoHostCpu)i;
    if (s && *out == TOPO_CPU_UNKNOWN) {
        sim_json_error(doc, cJSON_GetObjectItemCaseSensitive(root, "host_cpu"), err,
                       "\"host_cpu\" must be intel, amd, arm or power");
        return false;
    }
    return true;
}

/* "nic_path": how a GPU reaches its NIC, in NCCL's path types: "pxb" through
 * a PCIe switch (DGX/HGX), "phb" through the host CPU (Grace, Slingshot
 * blades); unset: not known.  NCCL runs LL128 across nodes only up to PXB
 * (PXN on Hopper), so before Hopper only a stated "pxb" turns it on. */
static bool get_nic_path(const SimJsonDoc *doc, const cJSON *root, bool *phb, bool *pxb, GError **err)
{
    const char *s = NULL;
    *phb = *pxb = false;
    if (!sim_json_get_string(doc, root, "nic_path", false, &s, err))
        return false;
    if (s && strcmp(s, "phb") != 0 && strcmp(s, "pxb") != 0) {
        sim_json_error(doc, cJSON_GetObjectItemCaseSensitive(root, "nic_path"), err,
                       "\"nic_path\" must be pxb (a PCIe switch shared with the GPU) or phb (the host CPU)");
        return false;
    }
    *phb = s && strcmp(s, "phb") == 0;
    *pxb = s && strcmp(s, "pxb") == 0;
    return true;
}

/* "libfabric_version": the libfabric the hosts' MPI runs on ("2.2",
 * "1.22.0"), whose CXI provider's defaults the MPI model follows; kept as
 * written, checked to be a version. */
static bool get_libfabric(const SimJsonDoc *doc, const cJSON *root, char **out, GError **err)
{
    const char *s = NULL;
    if (!sim_json_get_string(doc, root, "libfabric_version", false, &s, err))
        return false;
    int parts = 0; /* 2 or 3 numbers between dots; 0 for anything else */
    for (const char *q = s; q && *q; q++) {
        size_t digits = strspn(q, "0123456789");
        q += digits;
        if (!digits || (*q && *q != '.') || (*q == '.' && !q[1])) {
            parts = 0;
            break;
        }
        parts++;
        if (!*q)
            break;
    }
    if (s && (parts < 2 || parts > 3)) {
        sim_json_error(doc, cJSON_GetObjectItemCaseSensitive(root, "libfabric_version"), err,
                       "\"libfabric_version\" must be a version such as \"2.2\" or \"1.22.0\"");
        return false;
    }
    *out = g_strdup(s);
    return true;
}

/* An "accelerator" that names a preset must name one there is: said at its
 * line here, not where a scenario or a command first loads it (a file path is
 * read, and reported, by whoever loads it). */
static bool known_accelerator(const SimJsonDoc *doc, const cJSON *root, const char *accel, GError **err)
{
    GError *e = NULL;
    char *path = sim_data_resolve("models/presets/accelerators", "accelerator", accel, &e);
    g_free(path);
    if (!e)
        return true;
    sim_json_error(doc, cJSON_GetObjectItemCaseSensitive(root, "accelerator"), err, "%s", e->message);
    g_error_free(e);
    return false;
}

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
              sim_json_not_stdin(doc, cJSON_GetObjectItemCaseSensitive(root, "accelerator"), err) &&
              sim_json_get_bool(doc, root, "in_network_reduction", &t->inr, err) &&
              sim_json_get_bool(doc, root, "nvlink_sharp", &t->nvls, err) &&
              sim_json_get_string(doc, root, "family", false, &fam, err) &&
              sim_json_get_number(doc, root, "host_launch_s", false, 0, 1e-3, &t->host_launch, err) &&
              get_host_cpu(doc, root, &t->host_cpu, err) && get_nic_path(doc, root, &t->nic_phb, &t->nic_pxb, err) &&
              get_libfabric(doc, root, &t->libfabric, err);
    if (ok && accel && !known_accelerator(doc, root, accel, err))
        ok = false;
    if (ok) {
        t->name = g_strdup(name);
        t->accel = g_strdup(accel);
        t->family_name = g_strdup(fam ? fam : "explicit");
        TopoBuildFn builder = fam ? find_family(doc, root, fam, err) : topo_build_explicit;
        ok = builder && builder(t, &c, err);
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

int topo_peek_ranks(const char *name_or_path, const TopoOptions *opt)
{
    /* the families whose builders take ranks = nodes x ranks_per_node
     * (topo_get_nodes_rpn), and their default ranks_per_node (0: none) */
    static const struct {
        const char *name;
        long rpn;
    } fams[] = {{"fat_tree", 0}, {"dragonfly", 0}, {"nvswitch_node", 8}, {"single_switch", 0}, {"ring", 0}};
    char *path = sim_data_resolve(TOPO_PRESETS, "topology preset", name_or_path, NULL);
    SimJsonDoc *doc = path ? sim_json_load_file(path, NULL) : NULL;
    g_free(path);
    if (!doc)
        return 0;
    const cJSON *root = sim_json_root(doc);
    const char *fam = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(root, "family"));
    const cJSON *rpn_it = cJSON_GetObjectItemCaseSensitive(root, "ranks_per_node");
    const cJSON *nodes_it = cJSON_GetObjectItemCaseSensitive(root, "nodes");
    long rpn = 0, nodes = opt && opt->nodes > 0 ? opt->nodes : 1;
    for (size_t i = 0; fam && i < G_N_ELEMENTS(fams); i++)
        if (strcmp(fam, fams[i].name) == 0)
            rpn = fams[i].rpn;
    if (!fam || (rpn == 0 && !rpn_it))
        rpn = -1; /* not a family of that form */
    if (rpn >= 0 && rpn_it)
        rpn = cJSON_IsNumber(rpn_it) && rpn_it->valuedouble >= 1 && rpn_it->valuedouble <= TOPO_MAX_RANKS &&
                      rpn_it->valuedouble == (long)rpn_it->valuedouble
                  ? (long)rpn_it->valuedouble
                  : -1;
    if (rpn >= 0 && !(opt && opt->nodes > 0) && nodes_it)
        nodes = cJSON_IsNumber(nodes_it) && nodes_it->valuedouble >= 1 && nodes_it->valuedouble <= TOPO_MAX_NODES &&
                        nodes_it->valuedouble == (long)nodes_it->valuedouble
                    ? (long)nodes_it->valuedouble
                    : -1;
    sim_json_free(doc);
    if (rpn <= 0 || nodes <= 0 || (int64_t)nodes * rpn > TOPO_MAX_RANKS)
        return 0;
    return (int)(nodes * rpn);
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

/* A fat tree's leaf <-> spine links (per spine, then adaptive routing's pooled
 * ones) are wired last (topo_fattree.c); so are a dragonfly's local and
 * global links and its adaptive pools (topo_dragonfly.c). */
bool topo_link_is_fabric(const Topo *t, int l)
{
    if (l < 0 || l >= t->nlinks)
        return false;
    if (t->fam == TOPO_ROUTE_DRAGONFLY)
        return l >= t->df_b_local;
    return t->fam == TOPO_ROUTE_FAT_TREE && t->ft_s > 0 && l >= t->ft_b_up;
}
double topo_link_efficiency(const Topo *t, int l) { return t->leff[l]; }
TopoTransport topo_link_transport(const Topo *t, int l) { return (TopoTransport)t->ltransport[l]; }
double topo_host_launch(const Topo *t) { return t->host_launch; }
TopoHostCpu topo_host_cpu(const Topo *t) { return t->host_cpu; }
bool topo_nic_on_host(const Topo *t) { return t->nic_phb; }
bool topo_nic_on_switch(const Topo *t) { return t->nic_pxb; }
const char *topo_libfabric_version(const Topo *t) { return t->libfabric; }
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
