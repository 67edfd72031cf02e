#include "collective.h"
#include "sim_data.h"

#include <math.h>
#include <string.h>

#define MAX_CH 32
#define TREE_CORR 23 /* tree corrections: 64 B to 256 MiB */
#define MAX_ENUM_PPN 8 /* exhaustive ring search up to this many ranks per node */

enum { HW_NVLINK, HW_PCIE, HW_NET, HW_NUM };
enum { KIND_RING, KIND_TREE, KIND_COLLNET, KIND_NUM }; /* parameter families */

typedef struct {
    double base[COLL_NUM_ALGOS][COLL_NUM_PROTOS];
    double step[HW_NUM][2][COLL_NUM_PROTOS]; /* [hw][ring|tree][proto] */
    double ll_intra_factor;
    double proto_bw[KIND_NUM][COLL_NUM_PROTOS];
    double ll128_max_per_ch;
    double link_eff[TOPO_LINK_SHM + 1];
    int max_channels;
    double launch_s;
    bool ll128_multinode;
    double ring_plateau;                    /* latency factor of multi-node Simple ring all-reduce */
    double tree_correction[COLL_NUM_PROTOS][TREE_CORR]; /* tree bandwidth factor by log2(bytes/64) */
    double nvls_latency, nvls_fraction; /* NVLS: latency, algorithm bandwidth / GPU link rate */
    double net_overhead; /* floor of a multi-node ring's intra-node step */
} CollParams;

struct CollGroup {
    const Topo *t;
    CollParams p;
    int n, nnodes, ppn;
    int *ranks;      /* group order */
    int *node_start; /* nnodes + 1 offsets into by_node */
    int *by_node;    /* group indices grouped by node, nodes in order of first appearance */
    /* intra-node ring channels, as local indices 0..ppn-1 */
    int nch;
    int ring[MAX_CH][MAX_ENUM_PPN > 64 ? MAX_ENUM_PPN : 64];
    double ring_bw[MAX_CH];
    double intra_bw, inter_bw;
    int intra_hw;
    int nics;
    bool in_network;
    bool nvls;          /* single node whose NVSwitch reduces */
    bool rotate;        /* ring channels rotate per node (not on a physical ring of nodes) */
    /* seconds per byte that each pair sends when the pattern's flows share the
     * links evenly: all pairs (direct), partners at distance n/2^(r+1) (rhd);
     * worked out on first use (0 = not yet) */
    double direct_spb, rhd_spb[32];
    double gpu_link;    /* raw bandwidth of a rank's first link into the node fabric */
    int gpus_per_thread;
    /* double binary tree: the most tree edges at one node (both trees), the
     * deepest node, and the most a rank sends on intra-node links per byte
     * of the message (its chains' up and down hops) */
    int tree_deg, tree_depth;
    double tree_intra;
};

/* ---------------- names ---------------- */

static const char *op_names[] = {"allreduce", "reducescatter", "allgather", "broadcast", "reduce", "alltoall"};
static const char *op_alt[] = {"all_reduce", "reduce_scatter", "all_gather", "broadcast", "reduce", "all_to_all"};
static const char *algo_names[] = {"ring", "tree", "rhd", "direct", "hier", "collnet", "nvls"};
static const char *proto_names[] = {"ll", "ll128", "simple"};

const char *coll_op_name(CollOp op) { return op >= 0 && op < COLL_NUM_OPS ? op_names[op] : "?"; }
const char *coll_algo_name(CollAlgo a) { return a == COLL_ALGO_AUTO ? "auto" : a >= 0 && a < COLL_NUM_ALGOS ? algo_names[a] : "?"; }
const char *coll_proto_name(CollProto p) { return p == COLL_PROTO_AUTO ? "auto" : p >= 0 && p < COLL_NUM_PROTOS ? proto_names[p] : "?"; }

int coll_op_parse(const char *s)
{
    for (int i = 0; i < COLL_NUM_OPS; i++)
        if (!g_ascii_strcasecmp(s, op_names[i]) || !g_ascii_strcasecmp(s, op_alt[i]))
            return i;
    return -2;
}

int coll_algo_parse(const char *s)
{
    if (!g_ascii_strcasecmp(s, "auto"))
        return COLL_ALGO_AUTO;
    for (int i = 0; i < COLL_NUM_ALGOS; i++)
        if (!g_ascii_strcasecmp(s, algo_names[i]))
            return i;
    if (!g_ascii_strcasecmp(s, "hierarchical"))
        return COLL_HIER;
    if (!g_ascii_strcasecmp(s, "sharp"))
        return COLL_COLLNET;
    return -2;
}

int coll_proto_parse(const char *s)
{
    if (!g_ascii_strcasecmp(s, "auto"))
        return COLL_PROTO_AUTO;
    for (int i = 0; i < COLL_NUM_PROTOS; i++)
        if (!g_ascii_strcasecmp(s, proto_names[i]))
            return i;
    return -2;
}

double coll_busbw_factor(CollOp op, int n)
{
    if (n <= 1)
        return 1;
    switch (op) {
    case COLL_ALLREDUCE: return 2.0 * (n - 1) / n;
    case COLL_REDUCESCATTER:
    case COLL_ALLGATHER:
    case COLL_ALLTOALL: return (double)(n - 1) / n;
    default: return 1;
    }
}

/* ---------------- parameters ---------------- */

static bool get_proto_triple(const SimJsonDoc *d, const cJSON *obj, const char *key, double out[COLL_NUM_PROTOS],
                             double hi, GError **err)
{
    const cJSON *o = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!cJSON_IsObject(o)) {
        sim_json_error(d, o ? o : obj, err, "\"%s\" must be an object with ll, ll128, simple", key);
        return false;
    }
    for (int p = 0; p < COLL_NUM_PROTOS; p++)
        if (!sim_json_get_number(d, o, proto_names[p], true, 0, hi, &out[p], err))
            return false;
    return true;
}

static const cJSON *get_object(const SimJsonDoc *d, const cJSON *obj, const char *key, GError **err)
{
    const cJSON *o = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!cJSON_IsObject(o))
        sim_json_error(d, o ? o : obj, err, "\"%s\" must be an object", key);
    return cJSON_IsObject(o) ? o : NULL;
}

static bool params_read(const char *path, CollParams *p, GError **err);

/* The default file is read once per process (groups are made by the hundred
 * in a step simulation), under a lock since sweep runs steps in threads. */
static bool params_load(const char *path, CollParams *p, GError **err)
{
    static GMutex lock;
    static CollParams cached;
    static char *cached_path;
    if (path)
        return params_read(path, p, err);
    char *def = sim_data_dir("models/presets/collectives.json");
    bool ok = true;
    g_mutex_lock(&lock);
    if (!cached_path || strcmp(cached_path, def) != 0) {
        ok = params_read(def, &cached, err);
        g_free(cached_path);
        cached_path = ok ? g_strdup(def) : NULL;
    }
    if (ok)
        *p = cached;
    g_mutex_unlock(&lock);
    g_free(def);
    return ok;
}

static bool params_read(const char *path, CollParams *p, GError **err)
{
    SimJsonDoc *d = sim_json_load_file(path, err);
    if (!d)
        return false;
    const cJSON *r = sim_json_root(d);
    bool ok = false;
    const cJSON *base, *step, *pbw, *eff;
    memset(p, 0, sizeof *p);
    if (!(base = get_object(d, r, "base_latency", err)) || !(step = get_object(d, r, "step_latency", err)) ||
        !(pbw = get_object(d, r, "protocol_bandwidth", err)) || !(eff = get_object(d, r, "link_efficiency", err)))
        goto out;
    static const struct {
        int algo;
        const char *key;
    } bases[] = {{COLL_RING, "ring"}, {COLL_TREE, "tree"}, {COLL_COLLNET, "collnet"}, {COLL_RHD, "rhd"},
                 {COLL_DIRECT, "direct"}};
    for (size_t i = 0; i < G_N_ELEMENTS(bases); i++)
        if (!get_proto_triple(d, base, bases[i].key, p->base[bases[i].algo], 1, err))
            goto out;
    memcpy(p->base[COLL_HIER], p->base[COLL_RING], sizeof p->base[COLL_HIER]);
    static const char *hw[] = {"nvlink", "pcie", "net"};
    for (int h = 0; h < HW_NUM; h++) {
        const cJSON *o = get_object(d, step, hw[h], err);
        if (!o || !get_proto_triple(d, o, "ring", p->step[h][0], 1, err) ||
            !get_proto_triple(d, o, "tree", p->step[h][1], 1, err))
            goto out;
    }
    static const char *kinds[] = {"ring", "tree", "collnet"};
    for (int k = 0; k < KIND_NUM; k++)
        if (!get_proto_triple(d, pbw, kinds[k], p->proto_bw[k], 1, err))
            goto out;
    static const char *lk[] = {"nvlink", "pcie", "net", "ici", "shm"};
    for (int k = 0; k <= TOPO_LINK_SHM; k++)
        if (!sim_json_get_number(d, eff, lk[k], true, 0.01, 1, &p->link_eff[k], err))
            goto out;
    long maxch = 16;
    p->ll_intra_factor = 1;
    if (!sim_json_get_number(d, r, "ll_intra_latency_factor_multinode", false, 0, 100, &p->ll_intra_factor, err) ||
        !sim_json_get_number(d, r, "ll128_max_bw_per_channel", true, 1, 1e15, &p->ll128_max_per_ch, err) ||
        !sim_json_get_int(d, r, "max_channels", false, 1, MAX_CH, &maxch, err) ||
        !sim_json_get_number(d, r, "host_launch_s", true, 0, 1, &p->launch_s, err))
        goto out;
    p->max_channels = (int)maxch;
    if (!sim_json_get_bool(d, r, "ll128_multinode", &p->ll128_multinode, err))
        goto out;
    const cJSON *nv = get_object(d, r, "nvls", err);
    if (!nv || !sim_json_get_number(d, nv, "latency_s", true, 0, 1, &p->nvls_latency, err) ||
        !sim_json_get_number(d, nv, "bandwidth_fraction", true, 0.01, 2, &p->nvls_fraction, err))
        goto out;
    p->ring_plateau = 1;
    if (!sim_json_get_number(d, r, "ring_plateau_factor", false, 1, 10, &p->ring_plateau, err) ||
        !sim_json_get_number(d, r, "net_overhead_s", false, 0, 1, &p->net_overhead, err))
        goto out;
    for (int q = 0; q < COLL_NUM_PROTOS; q++)
        for (int i = 0; i < TREE_CORR; i++)
            p->tree_correction[q][i] = 1;
    const cJSON *tc = cJSON_GetObjectItemCaseSensitive(r, "tree_correction");
    if (tc) {
        for (int q = 0; q < COLL_NUM_PROTOS; q++) {
            const cJSON *arr = cJSON_GetObjectItemCaseSensitive(tc, proto_names[q]);
            if (!cJSON_IsArray(arr) || cJSON_GetArraySize(arr) != TREE_CORR) {
                sim_json_error(d, arr ? arr : tc, err, "tree_correction.%s must be an array of %d numbers",
                               proto_names[q], TREE_CORR);
                goto out;
            }
            for (int i = 0; i < TREE_CORR; i++) {
                const cJSON *v = cJSON_GetArrayItem(arr, i);
                if (!cJSON_IsNumber(v) || !(v->valuedouble > 0 && v->valuedouble <= 1)) {
                    sim_json_error(d, v, err, "tree_correction.%s[%d] must be in (0, 1]", proto_names[q], i);
                    goto out;
                }
                p->tree_correction[q][i] = v->valuedouble;
            }
        }
    }
    ok = true;
out:
    sim_json_free(d);
    return ok;
}

/* ---------------- the group and its channels ---------------- */

static int hw_of_kind(TopoLinkKind k)
{
    switch (k) {
    case TOPO_LINK_NVLINK:
    case TOPO_LINK_ICI: return HW_NVLINK;
    case TOPO_LINK_NET: return HW_NET;
    default: return HW_PCIE;
    }
}

static double link_cap(const CollGroup *g, int l)
{
    return topo_link_bandwidth(g->t, l) * g->p.link_eff[topo_link_kind(g->t, l)];
}

/* Routes have no fixed bound (a chain of endpoints or a big torus makes them
 * long): buffers are sized by the topology's longest route. */
static int route_cap(const CollGroup *g)
{
    int m = topo_max_route_length(g->t);
    return m > 0 ? m : 1;
}

/* A path whose links live in a pool shared by a set of paths. */
typedef struct {
    int len;
    int *links;
} Path;

/* Routes src -> dst into `pool` (route_cap(g) free ints). */
static Path route_into(const CollGroup *g, int src, int dst, uint32_t salt, int *pool)
{
    Path pa = {topo_route(g->t, src, dst, salt, pool, route_cap(g)), pool};
    return pa;
}

/* Bandwidth a ring order would get from the residual link capacities. */
static double ring_bandwidth(const CollGroup *g, const int *order, int p, const Path *paths, const double *resid,
                             int *use, int *touched)
{
    int nt = 0;
    for (int i = 0; i < p; i++) {
        const Path *pa = &paths[order[i] * p + order[(i + 1) % p]];
        for (int k = 0; k < pa->len; k++) {
            if (use[pa->links[k]]++ == 0)
                touched[nt++] = pa->links[k];
        }
    }
    double bw = INFINITY;
    for (int i = 0; i < nt; i++) {
        double b = resid[touched[i]] / use[touched[i]];
        if (b < bw)
            bw = b;
        use[touched[i]] = 0;
    }
    return bw;
}

static void next_perm_search(const CollGroup *g, int *cur, int depth, int p, bool *used, const Path *paths,
                             const double *resid, int *use, int *touched, double *best_bw, int *best)
{
    if (depth == p) {
        double bw = ring_bandwidth(g, cur, p, paths, resid, use, touched);
        if (bw > *best_bw * (1 + 1e-9)) {
            *best_bw = bw;
            memcpy(best, cur, sizeof(int) * (size_t)p);
        }
        return;
    }
    for (int i = 1; i < p; i++) {
        if (used[i])
            continue;
        used[i] = true;
        cur[depth] = i;
        next_perm_search(g, cur, depth + 1, p, used, paths, resid, use, touched, best_bw, best);
        used[i] = false;
    }
}

/* Greedy channel search in the spirit of NCCL's: take the ring order with the
 * most bandwidth on what is left of the links, subtract it, repeat. */
static bool find_rings(CollGroup *g, GError **err)
{
    int p = g->ppn;
    g->nch = 0;
    g->intra_bw = INFINITY;
    g->intra_hw = HW_NVLINK;
    if (p <= 1)
        return true;
    const int *local = &g->by_node[g->node_start[0]];
    int nl = topo_num_links(g->t);
    Path *paths = g_new0(Path, (size_t)p * p);
    GArray *pool = g_array_new(FALSE, FALSE, sizeof(int));
    int *buf = g_new(int, route_cap(g)), total_len = 0;
    size_t *off = g_new0(size_t, (size_t)p * p);
    for (int a = 0; a < p; a++)
        for (int b = 0; b < p; b++) {
            if (a == b)
                continue;
            Path *pa = &paths[a * p + b];
            *pa = route_into(g, g->ranks[local[a]], g->ranks[local[b]], 0, buf);
            if (pa->len <= 0) {
                g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "%s: no route from rank %d to rank %d",
                            topo_name(g->t), g->ranks[local[a]], g->ranks[local[b]]);
                g_free(paths);
                g_free(off);
                g_free(buf);
                g_array_free(pool, TRUE);
                return false;
            }
            off[a * p + b] = pool->len;
            g_array_append_vals(pool, buf, (guint)pa->len);
            total_len += pa->len;
        }
    for (int i = 0; i < p * p; i++) /* the pool has stopped moving */
        paths[i].links = (int *)(void *)pool->data + off[i];
    g_free(off);
    g_free(buf);
    g->gpu_link = topo_link_bandwidth(g->t, paths[0 * p + 1].links[0]);
    double *resid = g_new(double, nl);
    for (int l = 0; l < nl; l++)
        resid[l] = link_cap(g, l);
    int *use = g_new0(int, nl), *touched = g_new(int, (size_t)total_len + 1);
    int cur[64], best[64];
    bool used[64] = {false};
    double total = 0, first = 0;
    while (g->nch < g->p.max_channels) {
        double best_bw = 0;
        if (p <= MAX_ENUM_PPN) {
            cur[0] = 0;
            next_perm_search(g, cur, 1, p, used, paths, resid, use, touched, &best_bw, best);
        } else {
            for (int i = 0; i < p && i < 64; i++)
                best[i] = i;
            best_bw = ring_bandwidth(g, best, p, paths, resid, use, touched);
        }
        if (!(best_bw > 0) || !isfinite(best_bw) || best_bw < 0.05 * first)
            break;
        if (first == 0)
            first = best_bw;
        memcpy(g->ring[g->nch], best, sizeof(int) * (size_t)p);
        g->ring_bw[g->nch++] = best_bw;
        total += best_bw;
        for (int i = 0; i < p; i++) {
            const Path *pa = &paths[best[i] * p + best[(i + 1) % p]];
            for (int k = 0; k < pa->len; k++)
                resid[pa->links[k]] = fmax(0, resid[pa->links[k]] - best_bw);
        }
    }
    /* the slowest link kind on the first ring sets the per-step latency class */
    int worst = -1;
    for (int i = 0; i < p && g->nch > 0; i++) {
        const Path *pa = &paths[g->ring[0][i] * p + g->ring[0][(i + 1) % p]];
        for (int k = 0; k < pa->len; k++)
            worst = hw_of_kind(topo_link_kind(g->t, pa->links[k])) > worst ? hw_of_kind(topo_link_kind(g->t, pa->links[k]))
                                                                          : worst;
    }
    g->intra_hw = worst < 0 ? HW_NVLINK : worst;
    g->intra_bw = total > 0 ? total : INFINITY;
    g_free(paths);
    g_array_free(pool, TRUE);
    g_free(resid);
    g_free(use);
    g_free(touched);
    return true;
}

/* Each rank's first network link towards the next node is its NIC.  Where
 * nodes are joined without a network (rings and tori of nodes), the link that
 * most of the node's ranks cross to reach the next node stands in for it. */
static void find_nics(CollGroup *g)
{
    g->inter_bw = INFINITY;
    g->nics = 0;
    if (g->nnodes <= 1)
        return;
    int nl = topo_num_links(g->t), p = g->node_start[1] - g->node_start[0];
    bool *seen = g_new0(bool, nl);
    int *uses = g_new0(int, nl);
    Path *paths = g_new0(Path, p);
    int cap = route_cap(g), *pool = g_new(int, (size_t)p * cap);
    for (int i = 0; i < p; i++) {
        int src = g->ranks[g->by_node[g->node_start[0] + i]];
        int j = g->node_start[1] + i < g->node_start[2] ? g->node_start[1] + i : g->node_start[1];
        int dst = g->ranks[g->by_node[j]];
        paths[i] = route_into(g, src, dst, 0, pool + (size_t)i * cap);
        for (int k = 0; k < paths[i].len; k++)
            uses[paths[i].links[k]]++;
    }
    double sum = 0;
    for (int i = 0; i < p; i++) {
        const Path *pa = &paths[i];
        int pick = -1;
        for (int k = 0; k < pa->len && pick < 0; k++)
            if (topo_link_kind(g->t, pa->links[k]) == TOPO_LINK_NET)
                pick = pa->links[k];
        if (pick < 0) /* no NIC: the most shared link, the narrowest among equals */
            for (int k = 0; k < pa->len; k++) {
                int l = pa->links[k];
                if (pick < 0 || uses[l] > uses[pick] || (uses[l] == uses[pick] && link_cap(g, l) < link_cap(g, pick)))
                    pick = l;
            }
        if (pick >= 0 && !seen[pick]) {
            seen[pick] = true;
            sum += link_cap(g, pick);
            g->nics++;
        }
    }
    g_free(paths);
    g_free(pool);
    g_free(uses);
    g_free(seen);
    g->inter_bw = sum > 0 ? sum : INFINITY;
}

/* ---------------- NCCL's double binary tree ---------------- */

/* Parent of node r in NCCL's binary tree over nn nodes (src/graph/trees.cc,
 * ncclGetBtree): the root 0 has one child; r's parent clears r's lowest set
 * bit and sets the next one up, or only clears it past the end. */
static int btree_parent(int nn, int r)
{
    if (r <= 0)
        return -1;
    int bit = r & -r, up = (r ^ bit) | (bit << 1);
    return up < nn ? up : r ^ bit;
}

/* Tree t (0 or 1) of the double binary tree (ncclGetDtree): the second is the
 * first mirrored (nn even) or shifted by one (nn odd), so that a node inner in
 * one tree is a leaf of the other. */
static int dtree_parent(int nn, int t, int r)
{
    if (t == 0)
        return btree_parent(nn, r);
    if (nn % 2 == 1) {
        int u = btree_parent(nn, (r - 1 + nn) % nn);
        return u < 0 ? -1 : (u + 1) % nn;
    }
    int u = btree_parent(nn, nn - 1 - r);
    return u < 0 ? -1 : nn - 1 - u;
}

static int ring_channels(const CollGroup *g);

/* Tree channels come in pairs, one per ring channel (so one per NIC across
 * nodes), each pair running both trees on the same ranks and NIC, as NCCL's
 * channel c and c + nChannels do (src/graph/connect.cc, connectTrees). */
static int tree_pairs(const CollGroup *g) { return ring_channels(g); }

/* Share of the message on pair c: by bandwidth inside one node, even across. */
static double tree_share(const CollGroup *g, int c)
{
    return g->nnodes <= 1 && g->nch > 0 ? g->ring_bw[c % g->nch] / g->intra_bw : 1.0 / tree_pairs(g);
}

/* Local index of the j-th rank (top first) of pair c's chain in every node:
 * intra ring c rotated so that pairs' tops (the rank on the network, where
 * parent and children attach, as NCCL's tree pattern does) are spread over
 * the ranks and so over the NICs; the top has the same local index on every
 * node, so tree hops stay on one rail. */
static int tree_local(const CollGroup *g, int c, int j)
{
    int p = g->ppn, k = tree_pairs(g), stride = k < p ? p / k : 1, pos = (c * stride + j) % p;
    return g->nch > 0 ? g->ring[c % g->nch][pos] : pos;
}

/* What the closed form needs of the trees' shape (see cost_tree). */
static void tree_shape(CollGroup *g)
{
    int nn = g->nnodes, p = g->ppn, k = tree_pairs(g);
    int *deg = g_new0(int, nn);
    g->tree_depth = 0;
    for (int t = 0; t < (nn > 1 ? 2 : 1); t++)
        for (int r = 0; r < nn; r++) {
            int u = dtree_parent(nn, t, r), d = 0;
            if (u >= 0) {
                deg[r]++;
                deg[u]++;
            }
            for (int v = r; (v = dtree_parent(nn, t, v)) >= 0 && d < nn;)
                d++;
            g->tree_depth = d > g->tree_depth ? d : g->tree_depth;
        }
    g->tree_deg = 0;
    for (int r = 0; r < nn; r++)
        g->tree_deg = deg[r] > g->tree_deg ? deg[r] : g->tree_deg;
    g_free(deg);
    /* a chain's inner ranks send up and down, its top only down (its up goes
     * to the network, or nowhere at the root), its bottom only up */
    double *load = g_new0(double, p), most = 0;
    for (int c = 0; c < k && p > 1; c++) {
        double w = tree_share(g, c);
        for (int j = 0; j < p; j++)
            load[tree_local(g, c, j)] += w * (j == 0 || j == p - 1 ? 1 : 2);
    }
    for (int j = 0; j < p; j++)
        most = fmax(most, load[j]);
    g->tree_intra = most;
    g_free(load);
}

CollGroup *coll_group_new(const Topo *t, const int *ranks, int nranks, const char *params_path, GError **err)
{
    int total = topo_num_ranks(t);
    if (!ranks)
        nranks = total;
    if (nranks < 1) {
        g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "a collective needs at least one rank");
        return NULL;
    }
    CollGroup *g = g_new0(CollGroup, 1);
    g->t = t;
    g->gpus_per_thread = 1;
    if (!params_load(params_path, &g->p, err)) {
        g_free(g);
        return NULL;
    }
    g->n = nranks;
    g->ranks = g_new(int, nranks);
    for (int i = 0; i < nranks; i++) {
        g->ranks[i] = ranks ? ranks[i] : i;
        if (g->ranks[i] < 0 || g->ranks[i] >= total) {
            g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "rank %d is not in topology %s (%d ranks)", g->ranks[i],
                        topo_name(t), total);
            coll_group_free(g);
            return NULL;
        }
    }
    /* group by node, nodes in order of first appearance */
    GHashTable *idx = g_hash_table_new(g_direct_hash, g_direct_equal);
    GArray *counts = g_array_new(FALSE, TRUE, sizeof(int));
    int *node_of = g_new(int, nranks);
    for (int i = 0; i < nranks; i++) {
        int nd = topo_node_of(t, g->ranks[i]);
        gpointer v;
        if (!g_hash_table_lookup_extended(idx, GINT_TO_POINTER(nd), NULL, &v)) {
            v = GINT_TO_POINTER(counts->len);
            g_hash_table_insert(idx, GINT_TO_POINTER(nd), v);
            int z = 0;
            g_array_append_val(counts, z);
        }
        node_of[i] = GPOINTER_TO_INT(v);
        g_array_index(counts, int, node_of[i])++;
    }
    g->nnodes = (int)counts->len;
    g->node_start = g_new0(int, g->nnodes + 1);
    g->ppn = 0;
    for (int k = 0; k < g->nnodes; k++) {
        int c = g_array_index(counts, int, k);
        g->node_start[k + 1] = g->node_start[k] + c;
        if (c > g->ppn)
            g->ppn = c;
    }
    g->by_node = g_new(int, nranks);
    int *fill = g_new0(int, g->nnodes);
    for (int i = 0; i < nranks; i++)
        g->by_node[g->node_start[node_of[i]] + fill[node_of[i]]++] = i;
    bool uniform = true;
    for (int k = 0; k < g->nnodes; k++)
        uniform &= g->node_start[k + 1] - g->node_start[k] == g->ppn;
    g_free(fill);
    g_free(node_of);
    g_array_free(counts, TRUE);
    g_hash_table_destroy(idx);
    if (!uniform || g->ppn > 64) {
        g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT,
                    !uniform ? "a collective's ranks must be spread evenly over its nodes (%d nodes, up to %d ranks on one)"
                             : "a collective can have at most 64 ranks per node (%d nodes, %d ranks on one)",
                    g->nnodes, g->ppn);
        coll_group_free(g);
        return NULL;
    }
    g->in_network = topo_has_in_network_reduction(t) && g->nnodes > 1;
    g->nvls = topo_has_nvlink_sharp(t) && g->nnodes == 1 && g->ppn > 1;
    if (!find_rings(g, err)) {
        coll_group_free(g);
        return NULL;
    }
    find_nics(g);
    tree_shape(g);
    g->rotate = strcmp(topo_family(t), "ring") != 0;
    return g;
}

void coll_group_free(CollGroup *g)
{
    if (!g)
        return;
    g_free(g->ranks);
    g_free(g->node_start);
    g_free(g->by_node);
    g_free(g);
}

int coll_group_size(const CollGroup *g) { return g->n; }
int coll_group_nodes(const CollGroup *g) { return g->nnodes; }
double coll_group_intra_bw(const CollGroup *g) { return g->intra_bw; }
double coll_group_inter_bw(const CollGroup *g) { return g->inter_bw; }
int coll_group_channels(const CollGroup *g) { return g->nch; }
void coll_group_set_gpus_per_thread(CollGroup *g, int n) { g->gpus_per_thread = n > 0 ? n : 1; }

/* ---------------- closed-form costs ---------------- */

static bool proto_allowed(const CollGroup *g, CollProto p)
{
    /* NCCL enables LL128 by default only over NVLink inside one node; across
     * a network it is off (NCCL 2.8 tuner: typeInter must not be NET). */
    return p != COLL_LL128 || (g->intra_hw == HW_NVLINK && (g->nnodes == 1 || g->p.ll128_multinode));
}

static double min_bw(double a, double b) { return a < b ? a : b; }

/* Per-rank bandwidth of a ring that spans the group: inside a node the
 * channels found, across nodes the NICs. */
static int ring_channels(const CollGroup *g);

/* Per-rank bandwidth of a ring that spans the group: inside a node the
 * channels found, across nodes the NICs.  Across nodes each channel leaves
 * every node once by a NIC, so a rank's intra-node links carry only the
 * channels that do not exit there. */
static double ring_bus_bw(const CollGroup *g)
{
    double bw = INFINITY;
    if (g->ppn > 1) {
        bw = g->intra_bw;
        if (g->nnodes > 1) {
            int k = ring_channels(g), exits = k / g->ppn;
            bw *= (double)k / (k - exits);
        }
    }
    if (g->nnodes > 1)
        bw = min_bw(bw, g->inter_bw);
    return bw;
}

static double intra_step_lat(const CollGroup *g, int kind, CollProto p)
{
    double l = g->p.step[g->intra_hw][kind][p];
    if (g->nnodes > 1 && p == COLL_LL)
        l *= g->p.ll_intra_factor;
    return l;
}

static int ilog2_ceil(int n)
{
    int k = 0;
    while ((1 << k) < n)
        k++;
    return k;
}

static double ring_lat(const CollGroup *g, CollOp op, CollProto p)
{
    int n = g->n, nn = g->nnodes;
    int steps = op == COLL_ALLREDUCE ? 2 * (n - 1) : n - 1;
    int inter = nn <= 1 ? 0 : op == COLL_ALLREDUCE ? 2 * nn : nn - 1;
    if (inter > steps)
        inter = steps;
    double intra = intra_step_lat(g, 0, p);
    if (nn > 1) /* every step of a ring across nodes also posts to the network */
        intra = fmax(intra, g->p.net_overhead * (p == COLL_SIMPLE ? 3 : 1));
    return g->p.base[COLL_RING][p] + (steps - inter) * intra + inter * g->p.step[HW_NET][0][p];
}

/* NCCL's "plateau effect": multi-node Simple ring all-reduce pays more per step. */
static double ring_plateau(const CollGroup *g, CollOp op, CollProto p, double bytes)
{
    bool on = p == COLL_SIMPLE && op == COLL_ALLREDUCE && g->nnodes > 1 &&
              bytes / ((double)ring_channels(g) * g->n) >= 64;
    return on ? g->p.ring_plateau : 1;
}

static bool cost_ring(const CollGroup *g, CollOp op, CollProto p, double bytes, CollCost *c)
{
    if (op == COLL_ALLTOALL)
        return false;
    double bw = ring_bus_bw(g) * g->p.proto_bw[KIND_RING][p];
    if (p == COLL_LL128)
        bw = min_bw(bw, g->p.ll128_max_per_ch * (g->nch > g->nics ? g->nch : (g->nics > 0 ? g->nics : 1)));
    c->latency_s = ring_lat(g, op, p);
    c->algbw_Bps = bw / coll_busbw_factor(op, g->n);
    return true;
}

/* NCCL's static correction of tree bandwidth by log2(bytes/64) (tuning.cc). */
static double tree_correction(const CollGroup *g, CollProto p, double bytes)
{
    int lg = 0;
    for (double v = bytes / 64; v >= 2 && lg < 63; v /= 2)
        lg++;
    return lg < TREE_CORR ? g->p.tree_correction[p][lg] : 1;
}

/* Double binary tree: reduce up and broadcast down, pipelined, so the time is
 * the busiest link's bytes over its bandwidth plus a step latency per level
 * up and down (NCCL's tuner: algorithm bandwidth = tree bus bandwidth x 0.5).
 * Across nodes every tree edge carries its tree's half of the message each
 * way, and a node's NICs carry its edges in both trees: 4 halves (inner in
 * one tree, leaf in the other), i.e. 2x the message, as a ring's 2(n-1)/n.
 * At 2 nodes a node has only 2 edges, but NCCL rates trees there by a
 * per-channel cap (tuning.cc perChMaxTreeBws, 2 nodes: 18.5 GB/s Volta,
 * 22.5 Ampere, 41.4 Hopper) at or below a channel's NIC rate on DGX-class
 * nodes, and measured 2-node runs agree (crediting the halved load moves the
 * OCI A100 2-node trace from 0.1% to 20% error and ABCI's from 6% to 16%):
 * the rate counts 4 halves from 2 nodes on.  The flows keep the physics, so
 * at 2 nodes they may be faster, down to the intra-node chains' bound.
 * Inside a node a chain's inner ranks send each byte up and down. */
static bool cost_tree(const CollGroup *g, CollOp op, CollProto p, double bytes, CollCost *c)
{
    (void)bytes;
    if (op != COLL_ALLREDUCE)
        return false;
    c->latency_s = g->p.base[COLL_TREE][p] +
                   2 * ((g->ppn - 1) * intra_step_lat(g, 1, p) + g->tree_depth * g->p.step[HW_NET][1][p]);
    double spb = g->ppn > 1 ? g->tree_intra / g->intra_bw : 0;
    if (g->nnodes > 1)
        spb = fmax(spb, 0.5 * (g->tree_deg > 4 ? g->tree_deg : 4) / g->inter_bw);
    c->algbw_Bps = spb > 0 ? g->p.proto_bw[KIND_TREE][p] / spb : INFINITY;
    return true;
}

#define PATTERN_MAX_RANKS 2048 /* routing every pair costs n^2 routes */

/* The most loaded link's seconds per byte when every listed pair sends one
 * byte at once: a bound the topology puts on any schedule of that pattern. */
static double pattern_spb(const CollGroup *g, int dist)
{
    int n = g->n, nl = topo_num_links(g->t);
    double *load = g_new0(double, nl);
    int *links = g_new(int, route_cap(g));
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            if (i == j || (dist > 0 && j != (i ^ dist)))
                continue;
            int len = topo_route(g->t, g->ranks[i], g->ranks[j], (uint32_t)(i + j), links, route_cap(g));
            for (int k = 0; k < len; k++)
                load[links[k]] += 1;
        }
    double spb = 0;
    for (int l = 0; l < nl; l++)
        spb = fmax(spb, load[l] / link_cap(g, l));
    g_free(links);
    g_free(load);
    return spb;
}

/* Cached in the group: a group is used by one thread. */
static double direct_spb(const CollGroup *g)
{
    CollGroup *m = (CollGroup *)g;
    if (m->direct_spb == 0 && g->n <= PATTERN_MAX_RANKS)
        m->direct_spb = pattern_spb(g, 0);
    return m->direct_spb;
}

static double rhd_spb(const CollGroup *g, int r)
{
    CollGroup *m = (CollGroup *)g;
    if (r < 32 && m->rhd_spb[r] == 0 && g->n <= PATTERN_MAX_RANKS)
        m->rhd_spb[r] = pattern_spb(g, g->n >> (r + 1));
    return r < 32 ? m->rhd_spb[r] : 0;
}

/* Recursive halving-doubling: log2(n) rounds of pairwise exchange at halving
 * sizes; a round whose partner is on another node runs on the NICs. */
static bool cost_rhd(const CollGroup *g, CollOp op, CollProto p, double bytes, CollCost *c)
{
    int n = g->n;
    if ((n & (n - 1)) != 0 || !(op == COLL_ALLREDUCE || op == COLL_REDUCESCATTER || op == COLL_ALLGATHER))
        return false;
    int rounds = ilog2_ceil(n);
    double per_rank_intra = g->ppn > 1 ? g->intra_bw : INFINITY;
    double per_rank_inter = g->nnodes > 1 ? g->inter_bw / g->ppn : INFINITY;
    double t = 0, lat = g->p.base[COLL_RHD][p];
    int phases = op == COLL_ALLREDUCE ? 2 : 1;
    for (int r = 0; r < rounds; r++) {
        int dist = n >> (r + 1); /* halving: far partners first */
        bool inter = dist >= g->ppn && g->nnodes > 1;
        double bw = (inter ? per_rank_inter : per_rank_intra) * g->p.proto_bw[KIND_RING][p];
        double chunk = bytes / (double)(2 << r);
        t += phases * fmax(chunk / bw, chunk * rhd_spb(g, r) / g->p.proto_bw[KIND_RING][p]);
        lat += phases * (inter ? g->p.step[HW_NET][0][p] : intra_step_lat(g, 0, p));
    }
    c->latency_s = lat;
    c->algbw_Bps = t > 0 ? bytes / t : INFINITY;
    return true;
}

/* Every rank sends its share to every other at once. */
static bool cost_direct(const CollGroup *g, CollOp op, CollProto p, double bytes, CollCost *c)
{
    if (op == COLL_BROADCAST || op == COLL_REDUCE)
        return false;
    int n = g->n;
    double remote = g->nnodes > 1 ? (double)(n - g->ppn) / n : 0;
    double local = (double)(g->ppn - 1) / n;
    double per_rank_inter = g->nnodes > 1 ? g->inter_bw / g->ppn : INFINITY;
    double per_rank_intra = g->ppn > 1 ? g->intra_bw : INFINITY;
    double t = fmax(fmax(remote / per_rank_inter, local / per_rank_intra), direct_spb(g) / n) /
               g->p.proto_bw[KIND_RING][p];
    int phases = op == COLL_ALLREDUCE ? 2 : 1;
    double step = g->nnodes > 1 ? g->p.step[HW_NET][0][p] : intra_step_lat(g, 0, p);
    c->latency_s = g->p.base[COLL_DIRECT][p] + phases * step;
    c->algbw_Bps = 1.0 / (phases * t);
    return true;
}

/* Reduce-scatter inside nodes, all-reduce across nodes among ranks of equal
 * local index (each on its own NIC), all-gather inside nodes. */
static bool cost_hier(const CollGroup *g, CollOp op, CollProto p, double bytes, CollCost *c, bool in_network)
{
    bool ar = op == COLL_ALLREDUCE;
    if (!(ar || (!in_network && (op == COLL_REDUCESCATTER || op == COLL_ALLGATHER))) || g->nnodes < 2 || g->ppn < 2)
        return false;
    if (in_network && (!g->in_network || p == COLL_LL128))
        return false;
    int kind = in_network ? KIND_COLLNET : KIND_RING;
    double k = ar ? 2 : 1; /* an all-reduce is a reduce-scatter and an all-gather */
    double eff = g->p.proto_bw[kind][p];
    double intra = k * (g->ppn - 1) / g->ppn / (g->intra_bw * eff);
    double shard_rank_bw = g->inter_bw / g->ppn * eff;
    /* in-network reduction sends each byte up once and receives it once;
     * a ring across nodes sends (N-1)/N of it per phase */
    double inter = (in_network ? 1.0 : k * (g->nnodes - 1) / g->nnodes) / g->ppn / shard_rank_bw;
    double netlat = in_network ? g->p.step[HW_NET][1][p] : k * (g->nnodes - 1) * g->p.step[HW_NET][0][p];
    c->latency_s = g->p.base[in_network ? COLL_COLLNET : COLL_HIER][p] +
                   k * (g->ppn - 1) * intra_step_lat(g, in_network ? 1 : 0, p) + netlat;
    c->algbw_Bps = 1.0 / (intra + inter);
    return true;
}

/* NVLink SHARP: each GPU sends its data into the switch once and gets the
 * reduced result back once; NVIDIA quotes the sustained rate as a bus
 * bandwidth, which the data file turns into a fraction of the link rate. */
static bool cost_nvls(const CollGroup *g, CollOp op, CollProto p, CollCost *c)
{
    if (op != COLL_ALLREDUCE || !g->nvls || p != COLL_SIMPLE)
        return false;
    c->latency_s = g->p.nvls_latency;
    c->algbw_Bps = g->gpu_link * g->p.nvls_fraction;
    return true;
}

static bool cost_one(const CollGroup *g, CollOp op, CollAlgo a, CollProto p, double bytes, CollCost *c)
{
    if (!proto_allowed(g, p))
        return false;
    if (g->n == 1) {
        c->latency_s = 0;
        c->algbw_Bps = INFINITY;
        c->time_s = 0;
        c->algo = a;
        c->proto = p;
        return true;
    }
    bool ok;
    switch (a) {
    case COLL_RING: ok = cost_ring(g, op, p, bytes, c); break;
    case COLL_TREE: ok = cost_tree(g, op, p, bytes, c); break;
    case COLL_RHD: ok = cost_rhd(g, op, p, bytes, c); break;
    case COLL_DIRECT: ok = cost_direct(g, op, p, bytes, c); break;
    case COLL_HIER: ok = cost_hier(g, op, p, bytes, c, false); break;
    case COLL_COLLNET: ok = cost_hier(g, op, p, bytes, c, true); break;
    case COLL_NVLS: ok = cost_nvls(g, op, p, c); break;
    default: ok = false;
    }
    if (!ok || !(c->algbw_Bps > 0))
        return false;
    /* NCCL's own corrections to this model: trees fall short of it at medium
     * sizes, and multi-node Simple rings pay a higher per-step cost. */
    if (a == COLL_TREE)
        c->algbw_Bps *= tree_correction(g, p, bytes);
    if (a == COLL_RING)
        c->latency_s *= ring_plateau(g, op, p, bytes);
    /* One thread driving several devices launches on them one after another,
     * and the collective starts when the last has launched. */
    if (g->gpus_per_thread > 1)
        c->latency_s += g->p.launch_s * g->gpus_per_thread;
    c->time_s = c->latency_s + bytes / c->algbw_Bps;
    c->algo = a;
    c->proto = p;
    return true;
}

/* Algorithms NCCL's tuner chooses among; the others are opt-in. */
static bool auto_candidate(CollAlgo a)
{
    return a == COLL_RING || a == COLL_TREE || a == COLL_COLLNET || a == COLL_NVLS;
}

bool coll_cost(const CollGroup *g, CollOp op, CollAlgo algo, CollProto proto, double bytes, CollCost *out)
{
    bool found = false;
    CollCost best = {0};
    /* auto: NCCL's choices first; an op none of them runs (all-to-all) takes any */
    for (int pass = 0; pass < 2 && !found; pass++)
    for (int a = 0; a < COLL_NUM_ALGOS; a++) {
        if (algo != COLL_ALGO_AUTO ? a != (int)algo : pass == 0 && !auto_candidate(a))
            continue;
        for (int p = 0; p < COLL_NUM_PROTOS; p++) {
            if (proto != COLL_PROTO_AUTO && p != (int)proto)
                continue;
            CollCost c;
            if (cost_one(g, op, a, p, bytes, &c) && (!found || c.time_s < best.time_s)) {
                best = c;
                found = true;
            }
        }
    }
    if (found)
        *out = best;
    return found;
}

const char *coll_why_not(const CollGroup *g, CollOp op, CollAlgo algo, CollProto proto)
{
    if (proto == COLL_LL128 && !proto_allowed(g, proto))
        return "LL128 runs only over NVLink inside one node (ll128_multinode in the collective parameters)";
    switch (algo) {
    case COLL_RING: return op == COLL_ALLTOALL ? "all-to-all has no ring schedule; use direct" : "not available";
    case COLL_TREE: return "the tree runs all-reduce only";
    case COLL_RHD:
        return (g->n & (g->n - 1)) ? "recursive halving-doubling needs a power-of-two number of ranks"
                                   : "recursive halving-doubling runs all-reduce, reduce-scatter and all-gather only";
    case COLL_DIRECT: return "direct runs all-reduce, reduce-scatter, all-gather and all-to-all only";
    case COLL_HIER:
        return "hierarchical needs at least two nodes with at least two ranks each, and runs all-reduce, "
               "reduce-scatter and all-gather only";
    case COLL_COLLNET:
        return "collnet needs several nodes on a fabric with in-network reduction (\"in_network_reduction\" in the "
               "topology), all-reduce only, LL or Simple";
    case COLL_NVLS:
        return "nvls needs one node whose NVSwitch reduces (\"nvlink_sharp\" in the topology), all-reduce only, "
               "Simple protocol";
    default: return "no algorithm can run it";
    }
}

/* ---------------- decomposition into chunk flows ---------------- */

typedef struct {
    const CollGroup *g;
    SimGraph *graph;
    const char *label;
    int start; /* task every flow waits for */
    GArray *ends; /* tasks the collective's end waits for */
    int *links;   /* route scratch, route_cap(g) ints */
} Builder;

/* A flow task from group index src to dst.  `delay` is the step's latency
 * as the cost model counts it; the links' own latency is part of it, so only
 * the rest is added after the bytes arrive. */
static int add_flow(Builder *b, int src, int dst, double bytes, sim_time_t delay, uint32_t salt)
{
    int *links = b->links;
    int len = topo_route(b->g->t, b->g->ranks[src], b->g->ranks[dst], salt, links, route_cap(b->g));
    /* cannot fail: the group's ranks are in the topology, every explicit graph
     * was proved connected at load, and the buffer holds the longest route */
    if (len < 0)
        g_error("collective: no route from rank %d to rank %d", b->g->ranks[src], b->g->ranks[dst]);
    int id = sim_graph_flow_task(b->graph, b->label, SIM_NO_RESOURCE, bytes, links, len);
    sim_graph_task_set_info(b->graph, id, "comm", bytes);
    sim_time_t wire = 0;
    for (int k = 0; k < len; k++)
        wire = sim_time_add(wire, sim_time_from_s(topo_link_latency(b->g->t, links[k])));
    if (delay > wire)
        sim_graph_task_set_delay(b->graph, id, delay - wire);
    return id;
}

static int barrier(Builder *b)
{
    return sim_graph_task(b->graph, b->label, SIM_NO_RESOURCE, 0);
}

/* A ring (cyclic) or chain over `order` (group indices): each hop carries
 * `hop_bytes` in `nseg` pipelined segments.  Segment s of hop i waits for
 * segment s-1 of the same hop (the sender is busy) and for the data from the
 * previous hop: segment s-1 on a ring (one step behind), segment s on a chain
 * (forwarded as it arrives).  The ring's per-step latencies are spread over its
 * segments; a chain pays each hop's latency once.  Returns a barrier task. */
static int append_ring(Builder *b, const int *order, int len, bool cyclic, double hop_bytes, double lat_total,
                       int nseg, int dep, uint32_t salt)
{
    int end = barrier(b);
    int hops = cyclic ? len : len - 1;
    if (hops <= 0 || len < 2) {
        sim_graph_depend(b->graph, dep, end);
        return end;
    }
    int *prev = g_new(int, hops), *cur = g_new(int, hops);
    double seg = hop_bytes / nseg;
    for (int s = 0; s < nseg; s++) {
        for (int i = 0; i < hops; i++) {
            sim_time_t delay = cyclic ? sim_time_from_s(lat_total / nseg) : s == 0 ? sim_time_from_s(lat_total / hops) : 0;
            int f = add_flow(b, order[i], order[(i + 1) % len], seg, delay, salt);
            if (s == 0)
                sim_graph_depend(b->graph, dep, f);
            else
                sim_graph_depend(b->graph, prev[i], f);
            if (cyclic && s > 0)
                sim_graph_depend(b->graph, prev[(i + hops - 1) % hops], f);
            if (!cyclic && i > 0)
                sim_graph_depend(b->graph, cur[i - 1], f);
            cur[i] = f;
        }
        int *t = prev;
        prev = cur;
        cur = t;
    }
    for (int i = 0; i < hops; i++)
        sim_graph_depend(b->graph, prev[i], end);
    g_free(prev);
    g_free(cur);
    return end;
}

/* Channel c of a ring across nodes: each node's ranks in intra ring c mod nch,
 * rotated so that channels leave each node through different ranks (and so
 * different NICs), and so that a channel enters the next node at the rank of
 * the same local index it left by: the hop stays on one rail, as NCCL's rings
 * do on rail-optimised fabrics. */
static void channel_order(const CollGroup *g, int c, int *order)
{
    int p = g->ppn, k = 0, nch = ring_channels(g);
    /* spread channels' exits evenly, so ranks sharing a NIC take turns */
    int stride = nch < p ? p / nch : 1;
    const int *ring = g->nch > 0 ? g->ring[c % g->nch] : NULL;
    for (int nd = 0; nd < g->nnodes; nd++) {
        /* on a ring of nodes the neighbours' order is the physical one */
        int start = g->rotate ? ((c * stride - nd) % p + p) % p : 0;
        for (int j = 0; j < p; j++) {
            int local = ring ? ring[(start + j) % p] : 0;
            order[k++] = g->by_node[g->node_start[nd] + local];
        }
    }
}

static int ring_channels(const CollGroup *g)
{
    if (g->nnodes <= 1)
        return g->nch > 0 ? g->nch : 1;
    int k = g->nics > g->nch ? g->nics : g->nch;
    return k > 0 ? k : 1;
}

static void build_ring(Builder *b, CollOp op, CollProto p, double bytes)
{
    const CollGroup *g = b->g;
    int n = g->n, k = ring_channels(g);
    int steps = op == COLL_ALLREDUCE ? 2 * (n - 1) : n - 1;
    bool cyclic = op != COLL_BROADCAST && op != COLL_REDUCE;
    double hop_total = bytes * (cyclic ? coll_busbw_factor(op, n) : 1.0);
    double lat = ring_lat(g, op, p) * ring_plateau(g, op, p, bytes) - g->p.base[COLL_RING][p];
    double eff = g->p.proto_bw[KIND_RING][p];
    int nseg = steps < 8 ? steps : 8;
    if (!cyclic) {
        /* a chain pipelines in chunks of about a MiB, as NCCL's buffers do; its
         * fill time then stays small beside the transfer */
        double want = bytes / k / 1048576.0, cap = 2e5 / ((double)n * k);
        nseg = (int)fmax(16, fmin(want, fmax(16, cap)));
    }
    int *order = g_new(int, n);
    for (int c = 0; c < k; c++) {
        channel_order(g, c, order);
        if (op == COLL_REDUCE) /* data flows towards the root: reverse the chain */
            for (int i = 0; i < n / 2; i++) {
                int t = order[i];
                order[i] = order[n - 1 - i];
                order[n - 1 - i] = t;
            }
        /* single-node channels carry bytes in proportion to their bandwidth */
        double share = g->nnodes <= 1 && g->nch > 0 ? g->ring_bw[c] / g->intra_bw : 1.0 / k;
        int end = append_ring(b, order, n, cyclic, hop_total * share / eff, lat, nseg, b->start, (uint32_t)c);
        g_array_append_val(b->ends, end);
    }
    g_free(order);
}

/* Segments per tree hop: about one per 512 KiB (NCCL's largest Simple tree
 * chunk), so that small messages do not pay a wire latency per segment, at
 * most 8, and fewer on groups so large that the flows would pass about 6e4
 * (the flows of a tree run at once, so their max-min sharing is costly). */
static int tree_segments(const CollGroup *g, int chains, double hop_bytes)
{
    double fit = fmin(fmin(8, hop_bytes / 524288.0), 6e4 / (2.0 * g->n * chains));
    return fit <= 1 ? 1 : (int)fit;
}

/* One tree of pair c over the group: a chain inside every node (tree_local),
 * the chains' tops joined by NCCL's tree t over nodes.  Fills parent[] and
 * children (kids[3 r ...], nkids[r]); returns the root. */
static int tree_links(const CollGroup *g, int c, int t, int *parent, int *kids, int *nkids)
{
    int nn = g->nnodes, p = g->ppn, root = -1;
    for (int nd = 0; nd < nn; nd++)
        for (int j = 0; j < p; j++) {
            int r = g->by_node[g->node_start[nd] + tree_local(g, c, j)];
            if (j > 0) {
                parent[r] = g->by_node[g->node_start[nd] + tree_local(g, c, j - 1)];
                continue;
            }
            int u = dtree_parent(nn, t, nd);
            parent[r] = u < 0 ? -1 : g->by_node[g->node_start[u] + tree_local(g, c, 0)];
            if (u < 0)
                root = r;
        }
    memset(nkids, 0, sizeof(int) * (size_t)g->n);
    for (int r = 0; r < g->n; r++)
        if (parent[r] >= 0)
            kids[3 * parent[r] + nkids[parent[r]]++] = r;
    return root;
}

/* Double binary tree all-reduce: for every pair of tree channels (tree_pairs)
 * both trees, each with half the pair's share, reduce up and broadcast down.
 * NCCL pipelines in chunks much smaller than a segment here, so each hop's
 * step latency (which the closed form counts per level) delays both the first
 * and the last chunk, and segments of consecutive hops overlap: zero-byte
 * heads carry the first chunk's latencies hop by hop (up to the root, then
 * down) and a hop's segments start once data has reached its sender; tails
 * carry the last chunk's latencies the same way after each hop's last
 * segment; segment s of a hop waits for segment s-1 of the hops that feed it
 * (its children's going up; its parent's, or the root's children's, going
 * down), which holds a hop to the pace of the data it forwards. */
static void build_tree(Builder *b, CollProto p, double bytes)
{
    const CollGroup *g = b->g;
    int n = g->n, k = tree_pairs(g), nt = g->nnodes > 1 ? 2 : 1;
    int nseg = tree_segments(g, k * nt, bytes / (k * nt));
    double eff = g->p.proto_bw[KIND_TREE][p] * tree_correction(g, p, bytes);
    sim_time_t lat_intra = sim_time_from_s(intra_step_lat(g, 1, p));
    sim_time_t lat_net = sim_time_from_s(g->p.step[HW_NET][1][p]);
    int *parent = g_new(int, n), *kids = g_new(int, 3 * (size_t)n), *nkids = g_new(int, n);
    int *head_up = g_new(int, n), *head_down = g_new(int, n), *tail_up = g_new(int, n), *tail_down = g_new(int, n);
    int *up = g_new(int, (size_t)n * nseg), *down = g_new(int, (size_t)n * nseg);
    for (int c = 0; c < k; c++)
        for (int t = 0; t < nt; t++) {
            int root = tree_links(g, c, t, parent, kids, nkids);
            double seg = bytes * tree_share(g, c) / nt / nseg / eff;
            uint32_t salt = (uint32_t)(c * 2 + t);
            for (int r = 0; r < n; r++) {
                bool net = parent[r] >= 0 && topo_node_of(g->t, g->ranks[r]) != topo_node_of(g->t, g->ranks[parent[r]]);
                sim_time_t lat = parent[r] < 0 ? 0 : net ? lat_net : lat_intra;
                head_up[r] = sim_graph_task(b->graph, b->label, SIM_NO_RESOURCE, lat);
                tail_up[r] = sim_graph_task(b->graph, b->label, SIM_NO_RESOURCE, lat);
                head_down[r] = parent[r] < 0 ? head_up[r] : sim_graph_task(b->graph, b->label, SIM_NO_RESOURCE, lat);
                tail_down[r] = parent[r] < 0 ? tail_up[r] : sim_graph_task(b->graph, b->label, SIM_NO_RESOURCE, lat);
                for (int s = 0; s < nseg && parent[r] >= 0; s++) {
                    up[r * nseg + s] = add_flow(b, r, parent[r], seg, 0, salt);
                    down[r * nseg + s] = add_flow(b, parent[r], r, seg, 0, salt);
                }
            }
            for (int r = 0; r < n; r++) {
                if (nkids[r] == 0)
                    sim_graph_depend(b->graph, b->start, head_up[r]);
                for (int i = 0; i < nkids[r]; i++) {
                    int kid = kids[3 * r + i];
                    sim_graph_depend(b->graph, head_up[kid], head_up[r]);
                    sim_graph_depend(b->graph, tail_up[kid], tail_up[r]);
                }
                if (parent[r] < 0)
                    continue;
                sim_graph_depend(b->graph, head_down[parent[r]], head_down[r]);
                sim_graph_depend(b->graph, tail_down[parent[r]], tail_down[r]);
                /* down from the root: fed by the root's children going up */
                int feed = parent[r] == root ? -1 : parent[r];
                for (int s = 0; s < nseg; s++) {
                    int u = up[r * nseg + s], d = down[r * nseg + s];
                    if (s > 0) {
                        sim_graph_depend(b->graph, up[r * nseg + s - 1], u);
                        sim_graph_depend(b->graph, down[r * nseg + s - 1], d);
                    } else {
                        sim_graph_depend(b->graph, head_down[parent[r]], d);
                        if (nkids[r] == 0)
                            sim_graph_depend(b->graph, b->start, u);
                    }
                    for (int i = 0; i < nkids[r]; i++)
                        sim_graph_depend(b->graph, s ? up[kids[3 * r + i] * nseg + s - 1] : head_up[kids[3 * r + i]], u);
                    if (s && feed >= 0)
                        sim_graph_depend(b->graph, down[feed * nseg + s - 1], d);
                    for (int i = 0; s && feed < 0 && i < nkids[root]; i++)
                        sim_graph_depend(b->graph, up[kids[3 * root + i] * nseg + s - 1], d);
                }
                sim_graph_depend(b->graph, up[r * nseg + nseg - 1], tail_up[r]);
                sim_graph_depend(b->graph, down[r * nseg + nseg - 1], tail_down[r]);
                g_array_append_val(b->ends, tail_down[r]);
            }
        }
    g_free(parent);
    g_free(kids);
    g_free(nkids);
    g_free(head_up);
    g_free(head_down);
    g_free(tail_up);
    g_free(tail_down);
    g_free(up);
    g_free(down);
}

/* Recursive halving (reduce-scatter) then doubling (all-gather). */
static void build_rhd(Builder *b, CollOp op, CollProto p, double bytes)
{
    const CollGroup *g = b->g;
    int n = g->n, rounds = ilog2_ceil(n);
    double eff = g->p.proto_bw[KIND_RING][p];
    int *last = g_new(int, n), *next = g_new(int, n);
    for (int i = 0; i < n; i++)
        last[i] = b->start;
    /* rounds by index r: partner at distance n/2^(r+1), a 1/2^(r+1) share;
     * the reduce-scatter runs r = 0, 1, ..., the all-gather back down */
    int order[128], nd = 0;
    if (op != COLL_ALLGATHER)
        for (int r = 0; r < rounds; r++)
            order[nd++] = r;
    if (op != COLL_REDUCESCATTER)
        for (int r = rounds - 1; r >= 0; r--)
            order[nd++] = r;
    for (int k = 0; k < nd; k++) {
        int r = order[k], dist = n >> (r + 1);
        double chunk = bytes / (double)(2 << r) / eff;
        for (int i = 0; i < n; i++) {
            int j = i ^ dist;
            bool net = topo_node_of(g->t, g->ranks[i]) != topo_node_of(g->t, g->ranks[j]);
            double lat = net ? g->p.step[HW_NET][0][p] : intra_step_lat(g, 0, p);
            next[i] = add_flow(b, i, j, chunk, sim_time_from_s(lat), (uint32_t)k);
            sim_graph_depend(b->graph, last[i], next[i]);
            sim_graph_depend(b->graph, last[j], next[i]);
        }
        int *t = last;
        last = next;
        next = t;
    }
    for (int i = 0; i < n; i++)
        g_array_append_val(b->ends, last[i]);
    g_free(last);
    g_free(next);
}

/* Everyone sends its share to everyone at once (twice for all-reduce: a
 * reduce-scatter, then an all-gather of the reduced shards). */
static void build_direct(Builder *b, CollOp op, CollProto p, double bytes)
{
    const CollGroup *g = b->g;
    int n = g->n;
    double eff = g->p.proto_bw[KIND_RING][p];
    double step = g->nnodes > 1 ? g->p.step[HW_NET][0][p] : intra_step_lat(g, 0, p);
    int phases = op == COLL_ALLREDUCE ? 2 : 1;
    int *gate = g_new(int, n);
    for (int i = 0; i < n; i++)
        gate[i] = b->start;
    for (int ph = 0; ph < phases; ph++) {
        int *arrived = g_new(int, n);
        for (int i = 0; i < n; i++)
            arrived[i] = barrier(b);
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++) {
                if (i == j)
                    continue;
                int f = add_flow(b, i, j, bytes / n / eff, sim_time_from_s(step), (uint32_t)(i + j));
                sim_graph_depend(b->graph, gate[i], f);
                sim_graph_depend(b->graph, f, arrived[j]);
            }
        for (int i = 0; i < n; i++) {
            gate[i] = arrived[i];
            if (ph == phases - 1)
                g_array_append_val(b->ends, arrived[i]);
        }
        g_free(arrived);
    }
    g_free(gate);
}

/* NVLS: every rank pushes its data into the switch and pulls the result;
 * as flows, each rank sends to every other its share, sized so that a rank's
 * link carries what the switch protocol moves at the quoted rate. */
static void build_nvls(Builder *b, double bytes)
{
    const CollGroup *g = b->g;
    int n = g->n;
    int len = topo_route(g->t, g->ranks[0], g->ranks[1], 0, b->links, route_cap(g));
    double cap = len > 0 ? link_cap(g, b->links[0]) : g->gpu_link;
    double per_rank = bytes * cap / (g->gpu_link * g->p.nvls_fraction);
    sim_time_t lat = sim_time_from_s(g->p.nvls_latency);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            if (i == j)
                continue;
            int f = add_flow(b, i, j, per_rank / (n - 1), lat, (uint32_t)(i + j));
            sim_graph_depend(b->graph, b->start, f);
            g_array_append_val(b->ends, f);
        }
}

/* Reduce-scatter in every node, all-reduce across nodes per local index (or
 * one trip through the switch with in-network reduction), all-gather. */
static void build_hier(Builder *b, CollOp op, CollProto p, double bytes, bool in_network)
{
    const CollGroup *g = b->g;
    int ppn = g->ppn, nn = g->nnodes;
    bool rs = op != COLL_ALLGATHER, ag = op != COLL_REDUCESCATTER;
    int kind = in_network ? KIND_COLLNET : KIND_RING;
    double eff = g->p.proto_bw[kind][p];
    double lat_intra = (ppn - 1) * intra_step_lat(g, 0, p);
    int intra_seg = ppn - 1 < 8 ? ppn - 1 : 8;
    int *order = g_new(int, ppn > nn ? ppn : nn);
    int rs_done = barrier(b), inter_done = barrier(b);
    sim_graph_depend(b->graph, b->start, rs_done);
    for (int nd = 0; rs && nd < nn; nd++) {
        for (int j = 0; j < ppn; j++)
            order[j] = g->by_node[g->node_start[nd] + (g->nch > 0 ? g->ring[0][j] : j)];
        int e = append_ring(b, order, ppn, true, bytes * (ppn - 1) / ppn / eff, lat_intra, intra_seg, b->start,
                            (uint32_t)nd);
        sim_graph_depend(b->graph, e, rs_done);
    }
    for (int j = 0; j < ppn; j++) {
        for (int nd = 0; nd < nn; nd++)
            order[nd] = g->by_node[g->node_start[nd] + j];
        double shard = bytes / ppn / eff;
        int e;
        if (in_network) {
            e = barrier(b);
            for (int nd = 0; nd < nn; nd++) {
                int f = add_flow(b, order[nd], order[(nd + 1) % nn], shard,
                                 sim_time_from_s(g->p.step[HW_NET][1][p]), (uint32_t)j);
                sim_graph_depend(b->graph, rs_done, f);
                sim_graph_depend(b->graph, f, e);
            }
        } else {
            int steps = (rs && ag ? 2 : 1) * (nn - 1);
            e = append_ring(b, order, nn, true, shard * steps / nn, steps * g->p.step[HW_NET][0][p],
                            steps < 8 ? steps : 8, rs_done, (uint32_t)j);
        }
        sim_graph_depend(b->graph, e, inter_done);
    }
    if (!ag)
        g_array_append_val(b->ends, inter_done);
    for (int nd = 0; ag && nd < nn; nd++) {
        for (int j = 0; j < ppn; j++)
            order[j] = g->by_node[g->node_start[nd] + (g->nch > 0 ? g->ring[0][j] : j)];
        int e = append_ring(b, order, ppn, true, bytes * (ppn - 1) / ppn / eff, lat_intra, intra_seg, inter_done,
                            (uint32_t)nd);
        g_array_append_val(b->ends, e);
    }
    g_free(order);
}

/* How many flows coll_append makes: the builders' loops counted without
 * building (keep in step with them).  Lets callers refuse a decomposition
 * that would not fit in memory before they start one. */
int64_t coll_flow_count(const CollGroup *g, CollOp op, CollAlgo algo, CollProto proto, double bytes)
{
    int64_t n = g->n, k = ring_channels(g), nn = g->nnodes, ppn = g->ppn;
    (void)proto;
    if (n <= 1 || bytes < 0)
        return 0;
    switch (algo) {
    case COLL_TREE: { /* as build_tree: per pair and tree, up and down per segment, every rank but the root */
        int64_t kt = (int64_t)tree_pairs(g) * (nn > 1 ? 2 : 1);
        return kt * tree_segments(g, (int)kt, bytes / (double)kt) * 2 * (n - 1);
    }
    case COLL_RHD: {
        int64_t rounds = ilog2_ceil(g->n);
        return n * rounds * (op == COLL_ALLREDUCE ? 2 : 1);
    }
    case COLL_DIRECT:
        return (op == COLL_ALLREDUCE ? 2 : 1) * n * (n - 1);
    case COLL_NVLS:
        return n * (n - 1);
    case COLL_HIER:
    case COLL_COLLNET: {
        bool rs = op != COLL_ALLGATHER, ag = op != COLL_REDUCESCATTER;
        int64_t intra = ppn >= 2 ? nn * ppn * (ppn - 1 < 8 ? ppn - 1 : 8) : 0;
        int64_t steps = (rs && ag ? 2 : 1) * (nn - 1);
        int64_t inter = algo == COLL_COLLNET ? ppn * nn : nn >= 2 ? ppn * nn * (steps < 8 ? steps : 8) : 0;
        return (rs ? intra : 0) + inter + (ag ? intra : 0);
    }
    default: {
        bool cyclic = op != COLL_BROADCAST && op != COLL_REDUCE;
        int64_t steps = op == COLL_ALLREDUCE ? 2 * (n - 1) : n - 1;
        int64_t nseg = steps < 8 ? steps : 8;
        if (!cyclic) {
            double want = bytes / (double)k / 1048576.0, cap = 2e5 / ((double)n * (double)k);
            nseg = (int64_t)fmax(16, fmin(want, fmax(16, cap)));
        }
        return k * nseg * (cyclic ? n : n - 1);
    }
    }
}

int coll_append(const CollGroup *g, SimGraph *graph, CollOp op, CollAlgo algo, CollProto proto, double bytes,
                const int *deps, int ndeps, const char *label)
{
    Builder b = {g, graph, label ? label : coll_op_name(op), 0, g_array_new(FALSE, FALSE, sizeof(int)),
                 g_new(int, route_cap(g))};
    b.start = sim_graph_task(graph, b.label, SIM_NO_RESOURCE,
                             g->n > 1 && algo >= 0 && proto >= 0 ? sim_time_from_s(g->p.base[algo][proto]) : 0);
    for (int i = 0; i < ndeps; i++)
        sim_graph_depend(graph, deps[i], b.start);
    if (g->n > 1 && bytes >= 0) {
        switch (algo) {
        case COLL_TREE: build_tree(&b, proto, bytes); break;
        case COLL_RHD: build_rhd(&b, op, proto, bytes); break;
        case COLL_DIRECT: build_direct(&b, op, proto, bytes); break;
        case COLL_HIER: build_hier(&b, op, proto, bytes, false); break;
        case COLL_COLLNET: build_hier(&b, op, proto, bytes, true); break;
        case COLL_NVLS: build_nvls(&b, bytes); break;
        default: build_ring(&b, op, proto, bytes); break;
        }
    }
    int end = sim_graph_task(graph, b.label, SIM_NO_RESOURCE, 0);
    sim_graph_depend(graph, b.start, end);
    for (guint i = 0; i < b.ends->len; i++)
        sim_graph_depend(graph, g_array_index(b.ends, int, i), end);
    g_array_free(b.ends, TRUE);
    g_free(b.links);
    return end;
}

void coll_net_build(const CollGroup *g, SimNet *net)
{
    for (int l = 0; l < topo_num_links(g->t); l++)
        sim_net_add_link(net, link_cap(g, l), sim_time_from_s(topo_link_latency(g->t, l)));
}

double coll_simulate(const CollGroup *g, CollOp op, CollAlgo algo, CollProto proto, double bytes)
{
    if (coll_flow_count(g, op, algo, proto, bytes) > COLL_MAX_FLOWS)
        return NAN;
    SimEngine *e = sim_engine_new();
    SimNet *net = sim_net_new(e);
    SimGraph *graph = sim_graph_new();
    coll_net_build(g, net);
    coll_append(g, graph, op, algo, proto, bytes, NULL, 0, NULL);
    sim_time_t t = sim_graph_run(graph, e, net);
    sim_graph_free(graph);
    sim_net_free(net);
    sim_engine_free(e);
    if (t == SIM_TIME_NEVER) /* the network hit its work limit */
        return NAN;
    double s = sim_time_to_s(t);
    return g->gpus_per_thread > 1 ? s + g->p.launch_s * g->gpus_per_thread : s;
}
