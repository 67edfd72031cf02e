/* dragonfly (Kim, Dally, Scott, Abts, "Technology-Driven, Highly-Scalable
 * Dragonfly Topology", ISCA 2008; HPE Slingshot): `groups` groups of
 * `switches_per_group` switches, every pair of switches in a group joined by
 * a local link, and `global_links_per_switch` global ports on each switch
 * joining the groups.  Node n hangs all its NICs off switch n /
 * nodes_per_switch (switches numbered group by group); inside a node the
 * GPUs sit on an NVSwitch, are fully connected, or neither, as in fat_tree.
 *
 * Global ports: port q = switch * h + port of group G (A = a x h of them)
 * goes to group G + o, o = q mod (g-1) + 1 (the "consecutive" arrangement),
 * its j = q / (g-1)-th link of that offset, and meets the j-th port of
 * offset g - o there.  Where A is not a multiple of g-1 the last, partial
 * row of ports pairs up only where both offsets have a port; the rest stay
 * dark.  So every ordered pair of groups at offset o has m(o) links, all
 * computed from indices (no tables).
 *
 * Routing ("routing", default from "fabric": slingshot -> adaptive, else
 * minimal): minimal = local, global, local (the global link of the pair
 * picked by an ECMP hash of (src, dst, salt)); valiant = minimal to an
 * intermediate group picked by the hash, then minimal on (Valiant 1982);
 * adaptive (UGAL-like: Slingshot spreads packets over minimal and
 * non-minimal paths) is, in a flow model, an even split over all of them,
 * expressed as pooled links as fat_tree's adaptive is: switch -> group
 * (its local links and its own global ports), group egress (all the group's
 * global ports), group pair (its m direct links plus half of the group's
 * other ports, since a non-minimal path spends two global hops), group
 * ingress, group -> switch.  The physical links stay (same ids for every
 * routing) and carry nothing under adaptive.  Inside a group minimal and
 * valiant take the direct local link; adaptive spreads over a hub. */
#include "topo_internal.h"

#include <string.h>

enum { DF_MINIMAL, DF_VALIANT, DF_ADAPTIVE };
static const char *const df_routings[] = {"minimal", "valiant", "adaptive"};

/* What the file asks for, before any vertex exists. */
typedef struct {
    long nodes, rpn, nics, groups, a, h, nps;
    int routing;
    TopoLinkSpec nvl, pcie, nic, local, global;
} Dragonfly;

/* ------------------------------------------------------------------ */
/* Global-port arithmetic                                              */

/* Ports per row (g - 1), full rows, and ports in the partial row. */
static void df_rows(const Topo *t, int *w, int *base, int *r)
{
    int A = t->df_a * t->df_h;
    *w = t->df_groups - 1;
    *base = *w > 0 ? A / *w : 0; /* one group: no port is wired */
    *r = *w > 0 ? A % *w : 0;
}

/* Links between two groups at offset o (1 .. g-1). */
static int df_links_at(const Topo *t, int o)
{
    int w, base, r;
    df_rows(t, &w, &base, &r);
    return base + (o - 1 < r && w - o < r ? 1 : 0);
}

/* A group's ports that are wired, in port order. */
static int df_used_ports(const Topo *t)
{
    int w, base, r;
    df_rows(t, &w, &base, &r);
    int lo = w - r > 0 ? w - r : 0;
    return base * w + (r > lo ? r - lo : 0);
}

/* The position of port q among the wired ones, -1 when it is dark. */
static int df_port_index(const Topo *t, int q)
{
    int w, base, r;
    df_rows(t, &w, &base, &r);
    if (q < base * w)
        return q;
    int x = q - base * w; /* the partial row: offset x + 1 */
    if (!(x < r && w - 1 - x < r))
        return -1;
    int lo = w - r > 0 ? w - r : 0;
    return base * w + (x - lo);
}

/* The global link of group G's j-th port at offset o, and the switches
 * (indices in their groups) at its two ends. */
static int df_global(const Topo *t, int G, int o, int j, int *sw_from, int *sw_to)
{
    int w = t->df_groups - 1;
    int q = (o - 1) + j * w, q2 = (w - o) + j * w;
    *sw_from = q / t->df_h;
    *sw_to = q2 / t->df_h;
    return t->df_b_global + G * df_used_ports(t) + df_port_index(t, q);
}

static int df_local(const Topo *t, int G, int i, int k)
{
    return t->df_b_local + (G * t->df_a + i) * (t->df_a - 1) + (k < i ? k : k - 1);
}

/* ------------------------------------------------------------------ */
/* Parsing and wiring                                                  */

static bool parse_df_routing(const SimJsonDoc *doc, const cJSON *root, int *out, GError **err)
{
    static const char *const fabrics[] = {"slingshot", "infiniband", "roce", "ethernet", NULL};
    const char *fabric = NULL, *routing = NULL;
    if (!sim_json_get_string(doc, root, "fabric", false, &fabric, err) ||
        !sim_json_get_string(doc, root, "routing", false, &routing, err))
        return false;
    *out = DF_MINIMAL;
    if (fabric) {
        int i = 0;
        while (fabrics[i] && strcmp(fabric, fabrics[i]) != 0)
            i++;
        if (!fabrics[i]) {
            sim_json_error(doc, cJSON_GetObjectItemCaseSensitive(root, "fabric"), err,
                           "unknown \"fabric\" \"%s\" (known: slingshot, infiniband, roce, ethernet)", fabric);
            return false;
        }
        *out = i == 0 ? DF_ADAPTIVE : DF_MINIMAL;
    }
    if (routing) {
        int i = 0;
        while (i < 3 && strcmp(routing, df_routings[i]) != 0)
            i++;
        if (i == 3) {
            sim_json_error(doc, cJSON_GetObjectItemCaseSensitive(root, "routing"), err,
                           "unknown \"routing\" \"%s\" (known: minimal, valiant, adaptive)", routing);
            return false;
        }
        *out = i;
    }
    return true;
}

/* Reads and checks every field, in the order errors are reported. */
static bool parse_dragonfly(const TopoCtx *c, int *intra, Dragonfly *f, GError **err)
{
    static const char *const keys[] = {"ranks_per_node", "nodes", "nics_per_node", "intra", "nvlink", "pcie",
                                       "nic", "groups", "switches_per_group", "nodes_per_switch",
                                       "global_links_per_switch", "local", "global", "fabric", "routing", NULL};
    const SimJsonDoc *doc = c->doc;
    const cJSON *root = c->root;
    if (!topo_check_family_keys(c, keys, err) || !topo_get_nodes_rpn(c, 0, &f->nodes, &f->rpn, err))
        return false;
    f->nics = f->rpn;
    f->h = 1;
    if (!sim_json_get_int(doc, root, "nics_per_node", false, 1, TOPO_MAX_RANKS, &f->nics, err))
        return false;
    if (f->rpn % f->nics != 0) {
        sim_json_error(doc, cJSON_GetObjectItemCaseSensitive(root, "nics_per_node"), err,
                       "%ld GPUs per node cannot share %ld NICs evenly", f->rpn, f->nics);
        return false;
    }
    if (!topo_parse_intra(doc, root, intra, err) || !parse_df_routing(doc, root, &f->routing, err))
        return false;
    if (*intra != TOPO_INTRA_NONE && !topo_parse_spec(doc, root, "nvlink", TOPO_LINK_NVLINK, &f->nvl, err))
        return false;
    if (!topo_parse_spec(doc, root, "pcie", TOPO_LINK_PCIE, &f->pcie, err) ||
        !topo_parse_spec(doc, root, "nic", TOPO_LINK_NET, &f->nic, err) ||
        !sim_json_get_int(doc, root, "groups", true, 1, 1 << 12, &f->groups, err) ||
        !sim_json_get_int(doc, root, "switches_per_group", true, 1, 1 << 10, &f->a, err) ||
        !sim_json_get_int(doc, root, "nodes_per_switch", true, 1, 1 << 10, &f->nps, err) ||
        !sim_json_get_int(doc, root, "global_links_per_switch", f->groups > 1, 1, 1 << 10, &f->h, err))
        return false;
    if (f->a > 1 && !topo_parse_spec(doc, root, "local", TOPO_LINK_NET, &f->local, err))
        return false;
    if (f->groups > 1 && !topo_parse_spec(doc, root, "global", TOPO_LINK_NET, &f->global, err))
        return false;
    if (f->groups > 1 && f->a * f->h < f->groups - 1) {
        sim_json_error(doc, cJSON_GetObjectItemCaseSensitive(root, "global_links_per_switch"), err,
                       "%ld switches x %ld global links per group cannot reach the other %ld groups", f->a, f->h,
                       f->groups - 1);
        return false;
    }
    int64_t cap = (int64_t)f->groups * f->a * f->nps;
    if (f->nodes > cap) {
        const cJSON *at = cJSON_GetObjectItemCaseSensitive(root, "nodes");
        sim_json_error(doc, !at || (c->opt && c->opt->nodes > 0) ? root : at, err,
                       "%ld nodes do not fit: the dragonfly holds %lld (groups x switches_per_group x "
                       "nodes_per_switch = %ld x %ld x %ld)",
                       f->nodes, (long long)cap, f->groups, f->a, f->nps);
        return false;
    }
    /* every block's links, the pooled ones included: memory stays bounded */
    int64_t sw = (int64_t)f->groups * f->a;
    int64_t links = topo_node_links(*intra, f->nodes, f->rpn, f->nics) + sw * (f->a - 1 + f->h) + 4 * sw +
                    (int64_t)f->groups * (f->groups + 1);
    if (links > TOPO_MAX_LINKS) {
        sim_json_error(doc, root, err, "this dragonfly would have %lld links, more than %d", (long long)links,
                       TOPO_MAX_LINKS);
        return false;
    }
    return true;
}

/* The capacity of a pooled link, `spec` scaled by `n` links. */
static TopoLinkSpec scaled(const TopoLinkSpec *s, double n)
{
    TopoLinkSpec x = *s;
    x.bw *= n;
    return x;
}

/* Adaptive routing's pooled links (see the opening comment); inside a
 * group, a switch's share of a hub through which traffic to another switch
 * spreads over the direct link and the two-hop paths through the others
 * (half a link each): a x local / 2 each way. */
static void wire_pools(Topo *t, const Dragonfly *f, int v_sw)
{
    int g = t->df_groups, a = t->df_a, U = df_used_ports(t);
    int v_grp = t->nverts;
    for (int G = 0; G < g; G++) {
        topo_add_vertexf(t, "g%d.out", G);
        topo_add_vertexf(t, "g%d.egress", G);
        topo_add_vertexf(t, "g%d.ingress", G);
        topo_add_vertexf(t, "g%d.in", G);
        topo_add_vertexf(t, "g%d.local", G);
    }
    /* Latencies: a pooled route's links add up to a minimal path's, a local
     * hop at each end (where the group has more than one switch) and one
     * global hop (on the pair), and a hub's to one local hop, so that the
     * path latency and its fabric hops (topo_link_is_fabric) are a real
     * route's, not one per pooled link. */
    TopoLinkSpec sw_up = scaled(&f->global, t->df_h);
    if (a > 1)
        sw_up.bw += f->local.bw * (a - 1);
    sw_up.lat = a > 1 ? f->local.lat : 0;
    TopoLinkSpec grp = scaled(&f->global, U), hub = scaled(&f->local, a / 2.0), hub_out = hub;
    grp.lat = hub_out.lat = 0;
    t->df_b_pool = t->nlinks;
    for (int s = 0; g > 1 && s < g * a; s++) {
        topo_add_link(t, v_sw + s, v_grp + 5 * (s / a), &sw_up);
        topo_add_link(t, v_grp + 5 * (s / a) + 3, v_sw + s, &sw_up);
    }
    t->df_b_hub = t->nlinks;
    for (int s = 0; a > 1 && s < g * a; s++) {
        topo_add_link(t, v_sw + s, v_grp + 5 * (s / a) + 4, &hub);
        topo_add_link(t, v_grp + 5 * (s / a) + 4, v_sw + s, &hub_out);
    }
    t->df_b_grp = t->nlinks;
    for (int G = 0; g > 1 && G < g; G++) {
        topo_add_link(t, v_grp + 5 * G, v_grp + 5 * G + 1, &grp);
        topo_add_link(t, v_grp + 5 * G + 2, v_grp + 5 * G + 3, &grp);
    }
    t->df_b_pair = t->nlinks;
    for (int G = 0; g > 1 && G < g; G++)
        for (int D = 0; D < g; D++) {
            if (D == G)
                continue;
            int m = df_links_at(t, ((D - G) % g + g) % g);
            TopoLinkSpec pair = scaled(&f->global, m + (U - m) / 2.0);
            topo_add_link(t, v_grp + 5 * G + 1, v_grp + 5 * D + 2, &pair);
        }
}

/* Vertices, then links block by block; each block's first id is kept for routing. */
static void wire_dragonfly(Topo *t, const Dragonfly *f)
{
    int g = t->df_groups, a = t->df_a;
    for (int r = 0; r < t->nranks; r++)
        topo_add_vertexf(t, "gpu%d", r);
    int v_nvsw = t->nverts;
    if (t->df_intra == TOPO_INTRA_NVSWITCH)
        for (int n = 0; n < t->nnodes; n++)
            topo_add_vertexf(t, "node%d.nvswitch", n);
    int v_nic = t->nverts;
    for (int n = 0; n < t->nnodes; n++)
        for (int k = 0; k < t->df_k; k++)
            topo_add_vertexf(t, "node%d.nic%d", n, k);
    int v_sw = t->nverts;
    for (int G = 0; G < g; G++)
        for (int i = 0; i < a; i++)
            topo_add_vertexf(t, "g%d.sw%d", G, i);

    t->df_b_intra = t->nlinks;
    for (int r = 0; r < t->nranks; r++) {
        int base = r - r % t->df_g;
        if (t->df_intra == TOPO_INTRA_NVSWITCH) {
            topo_add_link(t, r, v_nvsw + r / t->df_g, &f->nvl);
            topo_add_link(t, v_nvsw + r / t->df_g, r, &f->nvl);
        } else if (t->df_intra == TOPO_INTRA_FC) {
            for (int j = 0; j < t->df_g; j++)
                if (base + j != r)
                    topo_add_link(t, r, base + j, &f->nvl);
        }
    }
    int gpn = t->df_g / t->df_k;
    t->df_b_pcie = t->nlinks;
    for (int r = 0; r < t->nranks; r++) {
        int nicv = v_nic + (r / t->df_g) * t->df_k + (r % t->df_g) / gpn;
        topo_add_link(t, r, nicv, &f->pcie);
        topo_add_link(t, nicv, r, &f->pcie);
    }
    t->df_b_nic = t->nlinks;
    for (int n = 0; n < t->nnodes; n++)
        for (int k = 0; k < t->df_k; k++) {
            topo_add_link(t, v_nic + n * t->df_k + k, v_sw + n / t->df_nps, &f->nic);
            topo_add_link(t, v_sw + n / t->df_nps, v_nic + n * t->df_k + k, &f->nic);
        }
    t->df_b_local = t->nlinks;
    for (int G = 0; G < g && a > 1; G++)
        for (int i = 0; i < a; i++)
            for (int k = 0; k < a; k++)
                if (k != i)
                    topo_add_link(t, v_sw + G * a + i, v_sw + G * a + k, &f->local);
    t->df_b_global = t->nlinks;
    for (int G = 0; G < g && g > 1; G++)
        for (int q = 0; q < a * t->df_h; q++) {
            if (df_port_index(t, q) < 0)
                continue;
            int o = q % (g - 1) + 1, j = q / (g - 1), from, to;
            df_global(t, G, o, j, &from, &to);
            topo_add_link(t, v_sw + G * a + from, v_sw + ((G + o) % g) * a + to, &f->global);
        }
    t->df_b_pool = t->df_b_hub = t->df_b_grp = t->df_b_pair = -1;
    if (t->df_routing == DF_ADAPTIVE && g * a > 1)
        wire_pools(t, f, v_sw);
}

bool topo_build_dragonfly(Topo *t, const TopoCtx *c, GError **err)
{
    Dragonfly f = {0};
    if (!parse_dragonfly(c, &t->df_intra, &f, err))
        return false;
    t->fam = TOPO_ROUTE_DRAGONFLY;
    t->nnodes = (int)f.nodes;
    t->rpn = (int)f.rpn;
    t->nranks = (int)(f.nodes * f.rpn);
    t->df_g = (int)f.rpn;
    t->df_k = (int)f.nics;
    t->df_groups = (int)f.groups;
    t->df_a = (int)f.a;
    t->df_h = (int)f.h;
    t->df_nps = (int)f.nps;
    t->df_routing = f.routing;
    /* pcie, nic, then up to l-g-l-g-l (valiant) or five pooled links, nic, pcie */
    t->max_route = 9;
    wire_dragonfly(t, &f);
    return true;
}

/* ------------------------------------------------------------------ */
/* Routing                                                             */

#define PUSH(id)                                                                                                    \
    do {                                                                                                            \
        if (n >= cap)                                                                                               \
            return -1;                                                                                              \
        links[n++] = (id);                                                                                          \
    } while (0)

/* Minimal from switch i of group G to switch k of group D; the global link
 * of the pair picked by `pick`. */
static int df_minimal(const Topo *t, int G, int i, int D, int k, uint32_t pick, int *links, int cap)
{
    int n = 0;
    if (G == D) {
        if (i != k)
            PUSH(df_local(t, G, i, k));
        return n;
    }
    int g = t->df_groups, o = ((D - G) % g + g) % g, from, to;
    int l = df_global(t, G, o, (int)(pick % (uint32_t)df_links_at(t, o)), &from, &to);
    if (i != from)
        PUSH(df_local(t, G, i, from));
    PUSH(l);
    if (to != k)
        PUSH(df_local(t, D, to, k));
    return n;
}

/* Between two switches, by the topology's routing. */
static int df_switches(const Topo *t, int s, int d, uint32_t h, int *links, int cap)
{
    int a = t->df_a, g = t->df_groups, G = s / a, D = d / a, n = 0;
    if (s == d)
        return 0;
    if (t->df_routing == DF_ADAPTIVE && G == D) {
        PUSH(t->df_b_hub + 2 * s);
        PUSH(t->df_b_hub + 2 * d + 1);
        return n;
    }
    if (G == D || t->df_routing == DF_MINIMAL || (t->df_routing == DF_VALIANT && g <= 2))
        return df_minimal(t, G, s % a, D, d % a, h, links, cap);
    if (t->df_routing == DF_ADAPTIVE) {
        PUSH(t->df_b_pool + 2 * s);
        PUSH(t->df_b_grp + 2 * G);
        PUSH(t->df_b_pair + G * (g - 1) + (D < G ? D : D - 1));
        PUSH(t->df_b_grp + 2 * D + 1);
        PUSH(t->df_b_pool + 2 * d + 1);
        return n;
    }
    /* valiant: an intermediate group other than both ends */
    int I = (int)((h >> 7) % (uint32_t)(g - 2));
    int lo = G < D ? G : D, hi = G < D ? D : G;
    if (I >= lo)
        I++;
    if (I >= hi)
        I++;
    int o = ((I - G) % g + g) % g, from, to;
    df_global(t, G, o, (int)(h % (uint32_t)df_links_at(t, o)), &from, &to);
    n = df_minimal(t, G, s % a, I, to, h, links, cap);
    if (n < 0)
        return -1;
    int m = df_minimal(t, I, to, D, d % a, h >> 16, links + n, cap - n);
    return m < 0 ? -1 : n + m;
}

int topo_route_dragonfly(const Topo *t, int src, int dst, uint32_t salt, int *links, int cap)
{
    int n = 0, g = t->df_g, k = t->df_k, gpn = g / k;
    int ns = src / g, nd = dst / g;
    if (ns == nd && (t->df_intra == TOPO_INTRA_NVSWITCH || t->df_intra == TOPO_INTRA_FC))
        return topo_route_in_node(t->df_intra, t->df_b_intra, g, src, dst, links, cap);
    int nic_s = ns * k + (src % g) / gpn, nic_d = nd * k + (dst % g) / gpn;
    PUSH(t->df_b_pcie + 2 * src);
    if (nic_s != nic_d) {
        PUSH(t->df_b_nic + 2 * nic_s);
        int m = df_switches(t, ns / t->df_nps, nd / t->df_nps, topo_ecmp_hash((uint32_t)src, (uint32_t)dst, salt),
                            links + n, cap - n);
        if (m < 0)
            return -1;
        n += m;
        PUSH(t->df_b_nic + 2 * nic_d + 1);
    }
    PUSH(t->df_b_pcie + 2 * dst + 1);
    return n;
}

const char *topo_dragonfly_routing(const Topo *t)
{
    return t->df_groups > 1 ? df_routings[t->df_routing] : NULL;
}
