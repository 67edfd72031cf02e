/* Topology JSON: what every family's fields are made of.  Quantities with
 * units (bandwidth, latency) and their physical bounds, link kinds, link
 * objects and a family's named link classes, the check that rejects unknown
 * keys, the sizes (nodes, ranks_per_node, TopoOptions.nodes) - and the
 * explicit graph, which is nothing but such fields. */
#include "topo_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* Quantities, kinds, link specs                                      */

typedef struct {
    const char *unit;
    double mult;
} Unit;

static const Unit rate_units[] = {
    {"B/s", 1},          {"kB/s", 1e3},          {"KB/s", 1e3},          {"MB/s", 1e6},
    {"GB/s", 1e9},       {"TB/s", 1e12},         {"KiB/s", 1024.0},      {"MiB/s", 1048576.0},
    {"GiB/s", 1073741824.0}, {"TiB/s", 1099511627776.0}, {"bps", 1.0 / 8},   {"b/s", 1.0 / 8},
    {"kbps", 1e3 / 8},   {"Kbps", 1e3 / 8},      {"kb/s", 1e3 / 8},      {"Kb/s", 1e3 / 8},
    {"Mbps", 1e6 / 8},   {"Mb/s", 1e6 / 8},      {"Gbps", 1e9 / 8},      {"Gb/s", 1e9 / 8},
    {"Tbps", 1e12 / 8},  {"Tb/s", 1e12 / 8},    {"PB/s", 1e15}, /* the bound the errors name */
};

static const Unit time_units[] = {
    {"s", 1}, {"ms", 1e-3}, {"us", 1e-6}, {"ns", 1e-9}, {"ps", 1e-12},
};

#define BW_HINT "bytes/s, or e.g. \"25GB/s\", \"200Gbps\""
/* physical bounds of one link: a modem's kB/s to far beyond any NVLink; a
 * second of latency is already another continent */
#define MIN_LINK_BW 1e3
#define MAX_LINK_BW 1e15
#define MAX_LINK_LATENCY 1.0
#define LAT_HINT "seconds, or e.g. \"500ns\", \"1.5us\""


static bool parse_with_unit(const char *text, const Unit *units, size_t nunits, double *out)
{
    char *end = NULL;
    double v = strtod(text, &end);
    if (end == text || !isfinite(v))
        return false;
    while (*end == ' ')
        end++;
    for (size_t i = 0; i < nunits; i++) {
        if (strcmp(end, units[i].unit) == 0) {
            *out = v * units[i].mult;
            return true;
        }
    }
    return false;
}

/* A quantity given as a plain number in base units or as a string with a
 * unit, within physical bounds [lo, hi] stated in `unit` ("1 kB/s and 1
 * PB/s"): "1e300Gbps" is no link anyone built. */
static bool get_quantity(const SimJsonDoc *doc, const cJSON *obj, const char *key, bool required, double lo,
                         double hi, SimUnit unit, const Unit *units, size_t nunits, const char *hint, double *out,
                         GError **err)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!it || cJSON_IsNull(it)) {
        if (required)
            sim_json_error(doc, obj, err, "missing required field \"%s\"", key);
        return !required;
    }
    double v = 0;
    if (cJSON_IsNumber(it)) {
        v = it->valuedouble;
    } else if (cJSON_IsString(it)) {
        if (!parse_with_unit(it->valuestring, units, nunits, &v)) {
            sim_json_error(doc, it, err, "\"%s\": cannot read \"%s\" (%s)", key, SIM_ECHO(it->valuestring), hint);
            return false;
        }
    } else {
        sim_json_error(doc, it, err, "\"%s\" must be a number or a string with a unit (%s)", key, hint);
        return false;
    }
    GError *e = NULL;
    char *what = g_strdup_printf("\"%s\"", key);
    bool ok = sim_check_range(what, v, lo, hi, unit, &e);
    g_free(what);
    if (!ok) {
        sim_json_error(doc, it, err, "%s", e->message);
        g_error_free(e);
        return false;
    }
    *out = v;
    return true;
}

/* Keys that document a value are allowed anywhere. */
static bool is_annotation(const char *k)
{
    return g_str_has_prefix(k, "source") || g_str_has_prefix(k, "comment") || g_str_has_prefix(k, "note") ||
           k[0] == '_' || strcmp(k, "description") == 0;
}

/* A misspelt key would silently fall back to a default: reject it. */
bool topo_check_keys(const SimJsonDoc *doc, const cJSON *obj, const char *const *allowed, GError **err)
{
    return sim_json_only_keys(doc, obj, allowed, is_annotation, err);
}

static const char *const kind_names[] = {"nvlink", "pcie", "net", "ici", "shm", "nvlink_bridge"};

const char *topo_link_kind_name(TopoLinkKind k)
{
    return (unsigned)k < G_N_ELEMENTS(kind_names) ? kind_names[k] : "?";
}

bool topo_parse_kind(const SimJsonDoc *doc, const cJSON *obj, TopoLinkKind *kind, bool required, GError **err)
{
    const char *s = NULL;
    if (!sim_json_get_string(doc, obj, "kind", required, &s, err))
        return false;
    if (!s)
        return true;
    for (size_t i = 0; i < G_N_ELEMENTS(kind_names); i++) {
        if (strcmp(s, kind_names[i]) == 0) {
            *kind = (TopoLinkKind)i;
            return true;
        }
    }
    sim_json_error(doc, cJSON_GetObjectItemCaseSensitive(obj, "kind"), err,
                   "unknown link kind \"%s\" (known: nvlink, pcie, net, ici, shm, nvlink_bridge)", s);
    return false;
}

bool topo_parse_latency(const SimJsonDoc *doc, const cJSON *obj, double *lat, GError **err)
{
    return get_quantity(doc, obj, "latency", true, 0, MAX_LINK_LATENCY, SIM_UNIT_SECONDS, time_units,
                        G_N_ELEMENTS(time_units), LAT_HINT, lat, err);
}

static const char *const transport_names[] = {"", "ib", "roce", "tcp", "tcpx", "cxi", "efa", "tcpxo"};

const char *topo_transport_name(TopoTransport tr)
{
    return (unsigned)tr < G_N_ELEMENTS(transport_names) ? transport_names[tr] : "?";
}

/* "transport": how NCCL drives the NIC; only a network link has one. */
bool topo_parse_transport(const SimJsonDoc *doc, const cJSON *obj, TopoTransport *out, GError **err)
{
    const char *s = NULL;
    *out = TOPO_TRANSPORT_NONE;
    if (!sim_json_get_string(doc, obj, "transport", false, &s, err))
        return false;
    if (!s)
        return true;
    for (size_t i = 1; i < G_N_ELEMENTS(transport_names); i++) {
        if (strcmp(s, transport_names[i]) == 0) {
            *out = (TopoTransport)i;
            return true;
        }
    }
    sim_json_error(doc, cJSON_GetObjectItemCaseSensitive(obj, "transport"), err,
                   "unknown transport \"%s\" (known: ib, roce, tcp, tcpx, cxi, efa, tcpxo)", SIM_ECHO(s));
    return false;
}

/* bandwidth, latency, count, kind, efficiency, transport: shared by explicit
 * links and family link specs. */
bool topo_parse_link_fields(const SimJsonDoc *doc, const cJSON *obj, TopoLinkSpec *s, bool kind_required,
                            GError **err)
{
    double bw = 0, lat = 0;
    long count = 1;
    if (!get_quantity(doc, obj, "bandwidth", true, MIN_LINK_BW, MAX_LINK_BW, SIM_UNIT_BYTES_PER_S, rate_units,
                      G_N_ELEMENTS(rate_units), BW_HINT, &bw, err))
        return false;
    if (!topo_parse_latency(doc, obj, &lat, err))
        return false;
    if (!sim_json_get_int(doc, obj, "count", false, 1, 1 << 16, &count, err))
        return false;
    if (!topo_parse_kind(doc, obj, &s->kind, kind_required, err))
        return false;
    s->eff = 0;
    if (!sim_json_get_number(doc, obj, "efficiency", false, 0.01, 1, &s->eff, err) ||
        !topo_parse_transport(doc, obj, &s->transport, err))
        return false;
    s->bw = bw * (double)count; /* bonded links act as one wider link */
    s->lat = lat;
    return true;
}

/* A family's named link class, e.g. "nic": {"bandwidth": "200Gbps", "latency": 1e-6}. */
bool topo_parse_spec(const SimJsonDoc *doc, const cJSON *root, const char *key, TopoLinkKind def_kind,
                     TopoLinkSpec *s, GError **err)
{
    const cJSON *o = cJSON_GetObjectItemCaseSensitive(root, key);
    if (!o || cJSON_IsNull(o)) {
        sim_json_error(doc, root, err, "missing required link description \"%s\"", key);
        return false;
    }
    if (!cJSON_IsObject(o)) {
        sim_json_error(doc, o, err, "\"%s\" must be an object with \"bandwidth\" and \"latency\"", key);
        return false;
    }
    static const char *const keys[] = {"bandwidth", "latency", "count", "kind", "efficiency", "transport", NULL};
    if (!topo_check_keys(doc, o, keys, err))
        return false;
    s->kind = def_kind;
    if (!topo_parse_link_fields(doc, o, s, false, err))
        return false;
    if (s->transport != TOPO_TRANSPORT_NONE && s->kind != TOPO_LINK_NET) {
        sim_json_error(doc, cJSON_GetObjectItemCaseSensitive(o, "transport"), err,
                       "\"%s\": only a network link (kind net) has a transport", key);
        return false;
    }
    return true;
}

/* ------------------------------------------------------------------ */
/* Sizes and keys                                                     */

bool topo_opt_nodes(const TopoCtx *c, long *nodes, GError **err)
{
    if (c->opt && c->opt->nodes < 0) {
        sim_json_error(c->doc, NULL, err, "nodes = %d must be positive", c->opt->nodes);
        return false;
    }
    if (c->opt && c->opt->nodes > 0)
        *nodes = c->opt->nodes;
    return true;
}

/* Single-node families and explicit graphs cannot grow. */
bool topo_opt_nodes_fixed(const TopoCtx *c, int have, GError **err)
{
    long n = have;
    if (!topo_opt_nodes(c, &n, err))
        return false;
    if (n != have) {
        sim_json_error(c->doc, c->root, err,
                       "this topology has a fixed size of %d node(s) and cannot be scaled to %ld nodes", have, n);
        return false;
    }
    return true;
}

bool topo_check_ranks(const TopoCtx *c, long nodes, long rpn, GError **err)
{
    if ((int64_t)nodes * rpn > TOPO_MAX_RANKS) {
        sim_json_error(c->doc, c->root, err, "%ld nodes x %ld ranks per node is more than %d ranks", nodes, rpn,
                       TOPO_MAX_RANKS);
        return false;
    }
    return true;
}

/* nodes and ranks_per_node for the families where ranks = nodes x ranks_per_node. */
bool topo_get_nodes_rpn(const TopoCtx *c, long def_rpn, long *nodes, long *rpn, GError **err)
{
    *nodes = 1;
    *rpn = def_rpn;
    if (!sim_json_get_int(c->doc, c->root, "ranks_per_node", def_rpn <= 0, 1, TOPO_MAX_RANKS, rpn, err))
        return false;
    if (!sim_json_get_int(c->doc, c->root, "nodes", false, 1, TOPO_MAX_NODES, nodes, err))
        return false;
    if (!topo_opt_nodes(c, nodes, err))
        return false;
    return topo_check_ranks(c, *nodes, *rpn, err);
}

static const char *const common_keys[] = {"name", "accelerator", "in_network_reduction", "nvlink_sharp", "family",
                                          "host_launch_s", "host_cpu", "nic_path", "libfabric_version",
                                          NULL};

bool topo_check_family_keys(const TopoCtx *c, const char *const *extra, GError **err)
{
    const char *all[40];
    int n = 0;
    for (const char *const *k = common_keys; *k; k++)
        all[n++] = *k;
    for (const char *const *k = extra; *k && n < 39; k++)
        all[n++] = *k;
    all[n] = NULL;
    return topo_check_keys(c->doc, c->root, all, err);
}

/* ------------------------------------------------------------------ */
/* Explicit graphs                                                    */

static bool name_list(const TopoCtx *c, const char *key, bool required, Topo *t, GHashTable *ids, const cJSON **items,
                      GError **err)
{
    const cJSON *arr = cJSON_GetObjectItemCaseSensitive(c->root, key);
    if (!arr) {
        if (required)
            sim_json_error(c->doc, c->root, err, "missing required field \"%s\"", key);
        return !required;
    }
    if (!cJSON_IsArray(arr) || (required && cJSON_GetArraySize(arr) == 0)) {
        sim_json_error(c->doc, arr, err, "\"%s\" must be a%s array of names", key, required ? " non-empty" : "n");
        return false;
    }
    for (const cJSON *it = arr->child; it; it = it->next) {
        if (!cJSON_IsString(it) || !*it->valuestring) {
            sim_json_error(c->doc, it, err, "\"%s\" must hold names (strings)", key);
            return false;
        }
        if (g_hash_table_contains(ids, it->valuestring)) {
            sim_json_error(c->doc, it, err, "duplicate node name \"%s\"", it->valuestring);
            return false;
        }
        if (t->nverts >= TOPO_MAX_RANKS) {
            sim_json_error(c->doc, it, err, "too many nodes");
            return false;
        }
        int id = topo_add_vertex(t, it->valuestring);
        if (items)
            items[id] = it;
        g_hash_table_insert(ids, (gpointer)it->valuestring, GINT_TO_POINTER(id + 1));
    }
    return true;
}

static int lookup_end(const TopoCtx *c, const cJSON *link, const char *key, GHashTable *ids, GError **err)
{
    const char *s = NULL;
    if (!sim_json_get_string(c->doc, link, key, true, &s, err))
        return -1;
    int id = GPOINTER_TO_INT(g_hash_table_lookup(ids, s)) - 1;
    if (id < 0)
        sim_json_error(c->doc, cJSON_GetObjectItemCaseSensitive(link, key), err,
                       "link %s \"%s\" names no endpoint or switch", key, s);
    return id;
}

/* One entry of "links": one directed link, or two (forward id first) when bidirectional. */
static bool explicit_link(Topo *t, const TopoCtx *c, const cJSON *l, GHashTable *ids, GError **err)
{
    static const char *const lkeys[] = {"src",   "dst",        "bandwidth", "latency", "kind", "count",
                                        "bidirectional", "efficiency", "transport", NULL};
    const SimJsonDoc *doc = c->doc;
    if (!cJSON_IsObject(l)) {
        sim_json_error(doc, l, err, "a link must be an object");
        return false;
    }
    TopoLinkSpec s;
    bool bidir = true;
    int a, b;
    if (!topo_check_keys(doc, l, lkeys, err) || (a = lookup_end(c, l, "src", ids, err)) < 0 ||
        (b = lookup_end(c, l, "dst", ids, err)) < 0 || !topo_parse_link_fields(doc, l, &s, true, err) ||
        !sim_json_get_bool(doc, l, "bidirectional", &bidir, err))
        return false;
    if (a == b) {
        sim_json_error(doc, l, err, "a link from \"%s\" to itself", t->vname[a]);
        return false;
    }
    if (t->nlinks > (1 << 26) - 2) {
        sim_json_error(doc, l, err, "too many links");
        return false;
    }
    topo_add_link(t, a, b, &s);
    if (bidir)
        topo_add_link(t, b, a, &s);
    return true;
}

/* No "family": "endpoints" (the ranks, in order), "switches", "links". */
bool topo_build_explicit(Topo *t, const TopoCtx *c, GError **err)
{
    static const char *const keys[] = {"name",      "accelerator", "in_network_reduction", "nvlink_sharp",
                                       "ranks_per_node", "endpoints", "switches", "links", "endpoints_forward",
                                       "host_launch_s", "host_cpu", "nic_path", "libfabric_version", NULL};
    const SimJsonDoc *doc = c->doc;
    if (!topo_check_keys(doc, c->root, keys, err))
        return false;
    GHashTable *ids = g_hash_table_new(g_str_hash, g_str_equal);
    const cJSON *eps = cJSON_GetObjectItemCaseSensitive(c->root, "endpoints");
    int neps = cJSON_IsArray(eps) ? cJSON_GetArraySize(eps) : 0;
    const cJSON **items = g_new0(const cJSON *, neps > 0 ? neps : 1);
    bool forward = true;
    long rpn = 0;
    bool ok = name_list(c, "endpoints", true, t, ids, items, err);
    t->nranks = t->nverts;
    ok = ok && name_list(c, "switches", false, t, ids, NULL, err);
    ok = ok && sim_json_get_bool(doc, c->root, "endpoints_forward", &forward, err);
    rpn = t->nranks;
    ok = ok && sim_json_get_int(doc, c->root, "ranks_per_node", false, 1, TOPO_MAX_RANKS, &rpn, err);
    if (ok && t->nranks % rpn != 0) {
        sim_json_error(doc, cJSON_GetObjectItemCaseSensitive(c->root, "ranks_per_node"), err,
                       "%d endpoints cannot be split into nodes of %ld", t->nranks, rpn);
        ok = false;
    }
    const cJSON *links = cJSON_GetObjectItemCaseSensitive(c->root, "links");
    if (ok && !cJSON_IsArray(links)) {
        sim_json_error(doc, links ? links : c->root, err, "\"links\" must be an array of links");
        ok = false;
    }
    for (const cJSON *l = ok ? links->child : NULL; l && ok; l = l->next)
        ok = explicit_link(t, c, l, ids, err);
    if (ok) {
        t->fam = TOPO_ROUTE_EXPLICIT;
        t->rpn = (int)rpn;
        t->nnodes = t->nranks / t->rpn;
        ok = topo_opt_nodes_fixed(c, t->nnodes, err) && topo_explicit_tables(t, c, forward, items, err);
    }
    g_free(items);
    g_hash_table_destroy(ids);
    return ok;
}
