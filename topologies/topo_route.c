/* Routing: the path between two ranks as link ids.  Families route in closed
 * form from their indices (no tables, O(route length) per call, read-only):
 * dimension order on tori and rings, up and down the tree on fat trees with
 * the spine picked by the fabric's routing (D-mod-K, ECMP hash, or adaptive's
 * even split as a pooled link), up and down on PCIe trees, one or two hops on
 * fully-connected and switch graphs.  Explicit graphs follow next-hop tables
 * built here at load time by BFS, which also proves every rank reaches every
 * other.  The link ids assumed here are the builders' creation order. */
#include "topo_internal.h"

#include <string.h>

/* ------------------------------------------------------------------ */
/* Explicit graphs: next-hop tables                                    */

/* Links by source and by destination vertex (CSR), ascending ids within each list. */
typedef struct {
    int *out_start, *out, *in_start, *in;
} Adjacency;

static void adjacency_build(const Topo *t, Adjacency *a)
{
    int V = t->nverts, L = t->nlinks;
    a->out_start = g_new0(int, V + 1);
    a->out = g_new(int, L);
    a->in_start = g_new0(int, V + 1);
    a->in = g_new(int, L);
    for (int l = 0; l < L; l++) {
        a->out_start[t->lsrc[l] + 1]++;
        a->in_start[t->ldst[l] + 1]++;
    }
    for (int v = 0; v < V; v++) {
        a->out_start[v + 1] += a->out_start[v];
        a->in_start[v + 1] += a->in_start[v];
    }
    int *ofill = g_new(int, V), *ifill = g_new(int, V);
    memcpy(ofill, a->out_start, sizeof(int) * (size_t)V);
    memcpy(ifill, a->in_start, sizeof(int) * (size_t)V);
    for (int l = 0; l < L; l++) {
        a->out[ofill[t->lsrc[l]]++] = l;
        a->in[ifill[t->ldst[l]]++] = l;
    }
    g_free(ofill);
    g_free(ifill);
}

static void adjacency_free(Adjacency *a)
{
    g_free(a->out_start);
    g_free(a->out);
    g_free(a->in_start);
    g_free(a->in);
}

/* dist[v] = hops from v to rank d (-1: none), by BFS backwards over in-links.
 * Ranks only relay traffic when `forward` says so. */
static void bfs_to(const Topo *t, const Adjacency *a, int d, bool forward, int *dist, int *queue)
{
    for (int v = 0; v < t->nverts; v++)
        dist[v] = -1;
    int qh = 0, qt = 0;
    dist[d] = 0;
    queue[qt++] = d;
    while (qh < qt) {
        int u = queue[qh++];
        if (u != d && u < t->nranks && !forward)
            continue;
        for (int i = a->in_start[u]; i < a->in_start[u + 1]; i++) {
            int v = t->lsrc[a->in[i]];
            if (dist[v] < 0) {
                dist[v] = dist[u] + 1;
                queue[qt++] = v;
            }
        }
    }
}

/* nx[v] = v's lowest-numbered out-link one hop closer to d (-1: none).
 * Returns the longest distance from a rank to d. */
static int next_hops(const Topo *t, const Adjacency *a, int d, bool forward, const int *dist, int *nx)
{
    int longest = 0;
    for (int v = 0; v < t->nverts; v++) {
        nx[v] = -1;
        if (dist[v] <= 0)
            continue;
        for (int i = a->out_start[v]; i < a->out_start[v + 1]; i++) {
            int w = t->ldst[a->out[i]];
            if (dist[w] == dist[v] - 1 && (w == d || w >= t->nranks || forward)) {
                nx[v] = a->out[i];
                break;
            }
        }
        if (v < t->nranks && dist[v] > longest)
            longest = dist[v];
    }
    return longest;
}

/* One table per destination rank; the first rank that cannot reach it is an
 * error at its entry in "endpoints" (items). */
bool topo_explicit_tables(Topo *t, const TopoCtx *c, bool forward, const cJSON **items, GError **err)
{
    int V = t->nverts, L = t->nlinks;
    if (V <= 0 || L < 0)
        return true;
    if ((int64_t)t->nranks * V > TOPO_MAX_EXPLICIT_TABLE) {
        sim_json_error(c->doc, c->root, err, "explicit topology too large (%d ranks x %d nodes); use a family",
                       t->nranks, V);
        return false;
    }
    Adjacency a;
    adjacency_build(t, &a);
    t->next = g_new(int, (size_t)t->nranks * V);
    int *dist = g_new(int, V), *queue = g_new(int, V);
    bool ok = true;
    t->max_route = 0;
    for (int d = 0; d < t->nranks && ok; d++) {
        int *nx = t->next + (size_t)d * V;
        bfs_to(t, &a, d, forward, dist, queue);
        int longest = next_hops(t, &a, d, forward, dist, nx);
        if (longest > t->max_route)
            t->max_route = longest;
        for (int s = 0; s < t->nranks && ok; s++) {
            if (s != d && nx[s] < 0) {
                sim_json_error(c->doc, items[s], err, "endpoint \"%s\" has no path to \"%s\"", t->vname[s],
                               t->vname[d]);
                ok = false;
            }
        }
    }
    g_free(dist);
    g_free(queue);
    adjacency_free(&a);
    return ok;
}

/* ------------------------------------------------------------------ */
/* Routing                                                             */

uint32_t topo_ecmp_hash(uint32_t src, uint32_t dst, uint32_t salt)
{
    uint64_t x = ((uint64_t)src << 32 | dst) ^ ((uint64_t)salt * 0x9E3779B97F4A7C15ULL);
    x ^= x >> 33; /* murmur3 finaliser */
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return (uint32_t)x;
}

#define PUSH(id)                                                                                                    \
    do {                                                                                                            \
        if (n >= cap)                                                                                               \
            return -1;                                                                                              \
        links[n++] = (id);                                                                                          \
    } while (0)

/* Dimension order (x, then y, then z); in each ring the shorter way round,
 * the positive way on a tie. */
static int route_torus(const Topo *t, int src, int dst, int *links, int cap)
{
    int n = 0, cur = src, stride = 1;
    for (int k = 0; k < t->ndims; k++) {
        int d = t->dims[k];
        int xs = (cur / stride) % d, xd = (dst / stride) % d;
        int fwd = ((xd - xs) % d + d) % d;
        if (fwd) {
            bool back = t->dslots[k] == 2 && d - fwd < fwd;
            int steps = back ? d - fwd : fwd, x = xs;
            for (int i = 0; i < steps; i++) {
                PUSH(cur * t->per_chip + t->doff[k] + (back ? 1 : 0));
                int nx = back ? (x + d - 1) % d : (x + 1) % d;
                cur += (nx - x) * stride;
                x = nx;
            }
        }
        stride *= d;
    }
    return n;
}

/* D-mod-K (Zahavi; what OpenSM's ftree engine does on a regular tree):
 * destination NICs numbered leaf by leaf as they are populated (the last
 * unit may hold fewer nodes), and a leaf's up-port is that index mod the
 * number of up-ports.  Numbering only populated ports is what ftree's
 * least-loaded-port counters amount to, and it keeps a part-filled unit from
 * piling its extra destinations on spine 0.  A two-level tree has one up
 * choice; a third level would take index / spines mod its ports.  In a full
 * unit every spine -> leaf link then carries at most ceil(nodes_per_leaf /
 * spines) destinations, so shift patterns never collide. */
static int dmodk_spine(const Topo *t, int nd, int rail)
{
    int unit = nd / t->ft_npl, left = t->nnodes - unit * t->ft_npl;
    int in_unit = left < t->ft_npl ? left : t->ft_npl; /* nodes on each of the unit's leaves */
    int64_t idx = (int64_t)unit * t->ft_k * t->ft_npl + (int64_t)rail * in_unit + nd % t->ft_npl;
    return (int)(idx % t->ft_s);
}

/* leaf_s -> spine layer -> leaf_d, by the fabric's routing. */
static int route_spine(const Topo *t, int src, int dst, int leaf_s, int leaf_d, uint32_t salt, int *links, int cap)
{
    int n = 0;
    if (t->ft_routing == TOPO_MULTIPATH_ADAPTIVE) {
        PUSH(t->ft_b_pool + 2 * leaf_s);
        PUSH(t->ft_b_pool + 2 * leaf_d + 1);
        return n;
    }
    int sp = t->ft_routing == TOPO_MULTIPATH_DMODK ? dmodk_spine(t, dst / t->ft_g, leaf_d % t->ft_k)
                                                   : (int)(topo_ecmp_hash((uint32_t)src, (uint32_t)dst, salt) %
                                                           (uint32_t)t->ft_s);
    PUSH(t->ft_b_up + 2 * (leaf_s * t->ft_s + sp));
    PUSH(t->ft_b_up + 2 * (leaf_d * t->ft_s + sp) + 1);
    return n;
}

int topo_route_in_node(int intra, int b_intra, int g, int src, int dst, int *links, int cap)
{
    int n = 0;
    if (intra == TOPO_INTRA_NVSWITCH) {
        PUSH(b_intra + 2 * src);
        PUSH(b_intra + 2 * dst + 1);
    } else if (intra == TOPO_INTRA_FC) {
        int i = src % g, j = dst % g;
        PUSH(b_intra + src * (g - 1) + (j < i ? j : j - 1));
    } else {
        return 0;
    }
    return n;
}

static int route_fat_tree(const Topo *t, int src, int dst, uint32_t salt, int *links, int cap)
{
    int n = 0, g = t->ft_g, k = t->ft_k, gpn = g / k;
    int ns = src / g, nd = dst / g;
    if (ns == nd && (t->ft_intra == TOPO_INTRA_NVSWITCH || t->ft_intra == TOPO_INTRA_FC))
        return topo_route_in_node(t->ft_intra, t->ft_b_intra, g, src, dst, links, cap);
    int nic_s = ns * k + (src % g) / gpn, nic_d = nd * k + (dst % g) / gpn;
    PUSH(t->ft_b_pcie + 2 * src);
    if (nic_s != nic_d) {
        int leaf_s = (ns / t->ft_npl) * k + nic_s % k, leaf_d = (nd / t->ft_npl) * k + nic_d % k;
        PUSH(t->ft_b_nic + 2 * nic_s);
        if (leaf_s != leaf_d) {
            int m = route_spine(t, src, dst, leaf_s, leaf_d, salt, links + n, cap - n);
            if (m < 0)
                return -1;
            n += m;
        }
        PUSH(t->ft_b_nic + 2 * nic_d + 1);
    }
    PUSH(t->ft_b_pcie + 2 * dst + 1);
    return n;
}

static int route_pcie(const Topo *t, int src, int dst, int *links, int cap)
{
    int n = 0, sw_s = src / t->pt_gps, sw_d = dst / t->pt_gps;
    PUSH(2 * src);
    if (sw_s != sw_d) {
        int so_s = sw_s / t->pt_sps, so_d = sw_d / t->pt_sps;
        PUSH(t->pt_b_up + 2 * sw_s);
        if (so_s != so_d)
            PUSH(t->pt_b_cpu + so_s * (t->pt_sockets - 1) + (so_d < so_s ? so_d : so_d - 1));
        PUSH(t->pt_b_up + 2 * sw_d + 1);
    }
    PUSH(2 * dst + 1);
    return n;
}

static int route_explicit(const Topo *t, int src, int dst, int *links, int cap)
{
    const int *nx = t->next + (size_t)dst * t->nverts;
    int n = 0, cur = src;
    while (cur != dst) {
        int l = nx[cur];
        if (l < 0)
            return -1;
        PUSH(l);
        cur = t->ldst[l];
    }
    return n;
}

const char *topo_routing(const Topo *t)
{
    static const char *const names[] = {"dmodk", "ecmp", "adaptive"};
    if (t->fam == TOPO_ROUTE_DRAGONFLY)
        return topo_dragonfly_routing(t);
    return t->fam == TOPO_ROUTE_FAT_TREE && t->ft_s > 0 ? names[t->ft_routing] : NULL;
}

int topo_route(const Topo *t, int src, int dst, uint32_t salt, int *links, int cap)
{
    if (src < 0 || dst < 0 || src >= t->nranks || dst >= t->nranks)
        return -1;
    if (src == dst)
        return 0;
    int n = 0;
    switch (t->fam) {
    case TOPO_ROUTE_TORUS:
        return route_torus(t, src, dst, links, cap);
    case TOPO_ROUTE_FULLY_CONNECTED:
        PUSH(src * (t->nranks - 1) + (dst < src ? dst : dst - 1));
        return n;
    case TOPO_ROUTE_SWITCH:
        PUSH(2 * src);
        PUSH(2 * dst + 1);
        return n;
    case TOPO_ROUTE_FAT_TREE:
        return route_fat_tree(t, src, dst, salt, links, cap);
    case TOPO_ROUTE_PCIE_TREE:
        return route_pcie(t, src, dst, links, cap);
    case TOPO_ROUTE_EXPLICIT:
        return route_explicit(t, src, dst, links, cap);
    case TOPO_ROUTE_DRAGONFLY:
        return topo_route_dragonfly(t, src, dst, salt, links, cap);
    }
    return -1;
}

bool topo_route_on_fabric(const Topo *t, int src, int dst)
{
    if (t->fam != TOPO_ROUTE_FAT_TREE && t->fam != TOPO_ROUTE_DRAGONFLY)
        return false; /* no fabric links (topo_link_is_fabric) */
    int buf[32], cap = t->max_route > 0 ? t->max_route : 1, *links = cap <= 32 ? buf : g_new(int, cap);
    int len = topo_route(t, src, dst, 0, links, cap);
    bool on = false;
    for (int k = 0; k < len && !on; k++)
        on = topo_link_is_fabric(t, links[k]);
    if (links != buf)
        g_free(links);
    return on;
}
