/* The group of ranks a collective runs on, and what the model derives from
 * the topology for it: ranks grouped by node, the intra-node ring channels
 * (a greedy search in the spirit of NCCL's), the NICs, and (through
 * coll_tree.c) the trees' shape. */
#include "coll_internal.h"

#include <string.h>

static int hw_of_kind(TopoLinkKind k)
{
    switch (k) {
    case TOPO_LINK_NVLINK:
    case TOPO_LINK_NVLINK_BRIDGE:
    case TOPO_LINK_ICI: return HW_NVLINK;
    case TOPO_LINK_NET: return HW_NET;
    default: return HW_PCIE;
    }
}

/* A path whose links live in a pool shared by a set of paths. */
typedef struct {
    int len;
    int *links;
} Path;

/* Routes src -> dst into `pool` (coll_route_cap(g) free ints). */
static Path route_into(const CollGroup *g, int src, int dst, uint32_t salt, int *pool)
{
    Path pa = {topo_route(g->t, src, dst, salt, pool, coll_route_cap(g)), pool};
    return pa;
}

/* Bandwidth a ring order would get from the residual link capacities; the
 * residuals of its links summed into *sum (NULL: not wanted). */
static double ring_bandwidth(const CollGroup *g, const int *order, int p, const Path *paths, const double *resid,
                             int *use, int *touched, double *sum)
{
    int nt = 0;
    for (int i = 0; i < p; i++) {
        const Path *pa = &paths[order[i] * p + order[(i + 1) % p]];
        for (int k = 0; k < pa->len; k++) {
            if (use[pa->links[k]]++ == 0)
                touched[nt++] = pa->links[k];
        }
    }
    double bw = INFINITY, s = 0;
    for (int i = 0; i < nt; i++) {
        double b = resid[touched[i]] / use[touched[i]];
        if (b < bw)
            bw = b;
        s += resid[touched[i]];
        use[touched[i]] = 0;
    }
    if (sum)
        *sum = s;
    return bw;
}

/* The search's state: the node's paths between its ranks, the links'
 * residual capacities, a channel's cap (INFINITY: none), the best order so
 * far. */
typedef struct {
    int p;
    const Path *paths;
    double *resid;
    int *use, *touched;
    double cap, bound, best_bw, best_sum;
    int best[COLL_MAX_PPN];
} RingSearch;

/* The narrowest residual on the path from a to b: no ring through that hop
 * gets more. */
static double hop_resid(const RingSearch *rs, int a, int b)
{
    const Path *pa = &rs->paths[a * rs->p + b];
    double c = INFINITY;
    for (int k = 0; k < pa->len; k++)
        c = fmin(c, rs->resid[pa->links[k]]);
    return c;
}

/* No ring beats, on the residual capacities, what its worst rank could
 * send to (or receive from) its best neighbour alone: each rank sends on
 * one path and receives on one.  On a switched node (NVSwitch) the first
 * order meets this bound, and the search can stop there. */
static double ring_bound(const RingSearch *rs)
{
    double bound = INFINITY;
    for (int dir = 0; dir < 2; dir++)
        for (int a = 0; a < rs->p; a++) {
            double most = 0;
            for (int b = 0; b < rs->p; b++)
                if (a != b)
                    most = fmax(most, dir ? hop_resid(rs, b, a) : hop_resid(rs, a, b));
            bound = fmin(bound, most);
        }
    return bound;
}

/* Every ring order from rank 0, in lexicographic order; the first of the
 * best is kept (a later one must be better by 1e-9), so the search stops
 * once the best meets the bound: nothing after it could replace it, and a
 * prefix whose hops already hold less than the best (ub) is not extended.
 * Under a cap, orders that reach it tie, and the one leaving its links the
 * most (the largest sum of their residuals) wins: the next channels keep the
 * links the others need. */
static void next_perm_search(const CollGroup *g, RingSearch *rs, int *cur, int depth, bool *used, double ub)
{
    bool capped = isfinite(rs->cap);
    if (!capped && rs->best_bw * (1 + 1e-9) >= rs->bound)
        return;
    /* uncapped, a ring must beat the best; capped, it may tie it */
    if (ub < rs->best_bw * (capped ? 1 - 1e-9 : 1 + 1e-9))
        return;
    int p = rs->p;
    if (depth == p) {
        double sum, bw = fmin(ring_bandwidth(g, cur, p, rs->paths, rs->resid, rs->use, rs->touched, &sum), rs->cap);
        bool tie = capped && bw >= rs->best_bw * (1 - 1e-9);
        if (bw > rs->best_bw * (1 + 1e-9) || (tie && sum > rs->best_sum * (1 + 1e-9))) {
            rs->best_bw = bw;
            rs->best_sum = sum;
            memcpy(rs->best, cur, sizeof(int) * (size_t)p);
        }
        return;
    }
    for (int i = 1; i < p; i++) {
        if (used[i])
            continue;
        double u = fmin(ub, hop_resid(rs, cur[depth - 1], i));
        if (depth == p - 1)
            u = fmin(u, hop_resid(rs, i, cur[0])); /* the hop that closes the ring */
        used[i] = true;
        cur[depth] = i;
        next_perm_search(g, rs, cur, depth + 1, used, u);
        used[i] = false;
    }
}

/* The best ring order on the residual capacities into rs->best (its
 * bandwidth, capped; 0 if none). */
static double best_ring(const CollGroup *g, RingSearch *rs)
{
    int p = rs->p, cur[COLL_MAX_PPN];
    bool used[COLL_MAX_PPN] = {false};
    rs->best_bw = rs->best_sum = 0;
    if (p <= MAX_ENUM_PPN) {
        cur[0] = 0;
        rs->bound = ring_bound(rs);
        if (isfinite(rs->cap) && rs->bound < rs->cap * (1 - 1e-9))
            return 0; /* no order reaches the cap */
        next_perm_search(g, rs, cur, 1, used, INFINITY);
    } else {
        for (int i = 0; i < p && i < COLL_MAX_PPN; i++)
            rs->best[i] = i;
        rs->best_bw = fmin(ring_bandwidth(g, rs->best, p, rs->paths, rs->resid, rs->use, rs->touched, NULL), rs->cap);
    }
    return rs->best_bw;
}

/* Greedy channel search in the spirit of NCCL's: take the ring order with the
 * most bandwidth on what is left of the links, at most `cap` each (INFINITY:
 * all it gets), subtract it, repeat.  Fills g's rings; returns their total. */
static double greedy_rings(CollGroup *g, RingSearch *rs, const double *cap0, double cap)
{
    int p = rs->p, nl = topo_num_links(g->t), *best = rs->best;
    memcpy(rs->resid, cap0, sizeof(double) * (size_t)nl);
    double total = 0, first = 0;
    g->nch = 0;
    rs->cap = cap;
    while (g->nch < g->p.max_channels && g->nch < MAX_CH) {
        double best_bw = best_ring(g, rs);
        if (!(best_bw > 0) || !isfinite(best_bw) || best_bw < 0.05 * first ||
            (isfinite(cap) && best_bw < cap * (1 - 1e-9)))
            break;
        if (first == 0)
            first = best_bw;
        memcpy(g->ring[g->nch], best, sizeof(int) * (size_t)p);
        g->ring_bw[g->nch++] = best_bw;
        total += best_bw;
        for (int i = 0; i < p; i++) {
            const Path *pa = &rs->paths[best[i] * p + best[(i + 1) % p]];
            for (int k = 0; k < pa->len; k++)
                rs->resid[pa->links[k]] = fmax(0, rs->resid[pa->links[k]] - best_bw);
        }
    }
    return total;
}

/* The most every ring together can carry on a node: no rank sends (or
 * receives) more than the links its paths leave (or enter) it by. */
static double rank_bound(const RingSearch *rs, const double *cap0)
{
    int p = rs->p;
    double bound = INFINITY;
    for (int dir = 0; dir < 2; dir++)
        for (int a = 0; a < p; a++) {
            double sum = 0;
            for (int b = 0; b < p; b++) {
                const Path *pa = dir ? &rs->paths[b * p + a] : &rs->paths[a * p + b];
                int l = b == a ? -1 : dir ? pa->links[pa->len - 1] : pa->links[0];
                bool seen = false;
                for (int c = 0; c < b && l >= 0 && !seen; c++) {
                    const Path *q = dir ? &rs->paths[c * p + a] : &rs->paths[a * p + c];
                    seen = c != a && (dir ? q->links[q->len - 1] : q->links[0]) == l;
                }
                sum += l >= 0 && !seen ? cap0[l] : 0;
            }
            bound = fmin(bound, sum);
        }
    return bound;
}

/* The node's ring channels.  Taking each ring at all it can get is not always
 * best: on 4 GPUs joined all to all (Perlmutter, Polaris, GH200 nodes) the
 * two directions of one cycle take every link a third cycle would need (each
 * directed Hamiltonian cycle of 4 nodes shares a link with every other but
 * its reverse), two rings where six at half the rate carry 1.5x.  NCCL's
 * search (src/graph/search.cc, ncclTopoCompute) tries channel speeds from a
 * table, high to low, down to about half the best per-channel rate it has
 * found, and keeps the most channels x speed; an approximation of it here:
 * where the greedy's rings leave a rank's links short of what they could
 * send, the greedy again with every channel at half the first's rate, kept
 * if it carries more than 1% more (NCCL's backtracking and its doubling of
 * channels afterwards are not modelled).  On one node only: across nodes
 * NCCL searches rings through the NICs, which bound them.  Not for RCCL,
 * which takes the predefined rings of the AMD nodes it knows
 * (src/graph/rome_models.cc, romeTopoModels), nor for TPUs: the rings follow
 * the topology's default library (a later --nccl-library does not redo
 * them). */
static double search_rings(CollGroup *g, RingSearch *rs)
{
    int nl = topo_num_links(g->t);
    double *cap0 = g_new(double, nl);
    memcpy(cap0, rs->resid, sizeof(double) * (size_t)nl);
    double total = greedy_rings(g, rs, cap0, INFINITY), first = g->nch > 0 ? g->ring_bw[0] : 0;
    bool split = g->nnodes == 1 && coll_library_default(g->t) == COLL_LIB_NCCL && g->gpu_gen != GEN_NOT_NCCL &&
                 first > 0 && total < rank_bound(rs, cap0) * (1 - 1e-9);
    if (split) {
        double half = greedy_rings(g, rs, cap0, first / 2);
        total = half > total * 1.01 ? half : greedy_rings(g, rs, cap0, INFINITY);
    }
    g_free(cap0);
    return total;
}

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
    int *buf = g_new(int, coll_route_cap(g)), total_len = 0;
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
    RingSearch rs = {.p = p, .paths = paths, .resid = g_new(double, nl), .use = g_new0(int, nl),
                     .touched = g_new(int, (size_t)total_len + 1)};
    for (int l = 0; l < nl; l++)
        rs.resid[l] = coll_link_cap(g, l);
    double total = search_rings(g, &rs);
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
    g_free(rs.resid);
    g_free(rs.use);
    g_free(rs.touched);
    return true;
}

/* Each rank's first network link towards the next node is its NIC.  Where
 * nodes are joined without a network (rings and tori of nodes), the link that
 * most of the node's ranks cross to reach the next node stands in for it.
 * A NIC carries no more than its ranks bring it: each rank's narrowest link
 * on the way (a PCIe link slower than the NIC, a PCIe switch's uplink shared
 * by several ranks: its share), so that the closed forms see what the flows
 * do. */
static double before_nic(const CollGroup *g, const Path *pa, int pick, const int *uses, double *nominal)
{
    double bw = INFINITY;
    *nominal = INFINITY; /* the same at the links' nominal rates (NCCL's terms) */
    for (int k = 0; k < pa->len && pa->links[k] != pick; k++) {
        int l = pa->links[k];
        bw = fmin(bw, coll_link_cap(g, l) / uses[l]);
        *nominal = fmin(*nominal, topo_link_bandwidth(g->t, l) / uses[l]);
    }
    return bw;
}

static void find_nics(CollGroup *g)
{
    g->inter_bw = g->inter_nominal = INFINITY;
    g->nics = 0;
    if (g->nnodes <= 1)
        return;
    int nl = topo_num_links(g->t), p = g->node_start[1] - g->node_start[0];
    bool *seen = g_new0(bool, nl);
    int *uses = g_new0(int, nl);
    Path *paths = g_new0(Path, p);
    int cap = coll_route_cap(g), *pool = g_new(int, (size_t)p * cap);
    for (int i = 0; i < p; i++) {
        int src = g->ranks[g->by_node[g->node_start[0] + i]];
        int j = g->node_start[1] + i < g->node_start[2] ? g->node_start[1] + i : g->node_start[1];
        int dst = g->ranks[g->by_node[j]];
        paths[i] = route_into(g, src, dst, 0, pool + (size_t)i * cap);
        for (int k = 0; k < paths[i].len; k++)
            uses[paths[i].links[k]]++;
    }
    double sum = 0, nominal = 0, *supply = g_new0(double, nl), *supply0 = g_new0(double, nl);
    int *picks = g_new(int, p);
    for (int i = 0; i < p; i++) {
        const Path *pa = &paths[i];
        int pick = -1;
        for (int k = 0; k < pa->len && pick < 0; k++)
            if (topo_link_kind(g->t, pa->links[k]) == TOPO_LINK_NET)
                pick = pa->links[k];
        if (pick < 0) /* no NIC: the most shared link, the narrowest among equals */
            for (int k = 0; k < pa->len; k++) {
                int l = pa->links[k];
                if (pick < 0 || uses[l] > uses[pick] || (uses[l] == uses[pick] && coll_link_cap(g, l) < coll_link_cap(g, pick)))
                    pick = l;
            }
        if (pick >= 0 && g->transport == TOPO_TRANSPORT_NONE)
            g->transport = topo_link_transport(g->t, pick);
        picks[i] = pick;
        bool net = pick >= 0 && topo_link_kind(g->t, pick) == TOPO_LINK_NET;
        double nominal_before = INFINITY;
        if (pick >= 0) {
            supply[pick] += net ? before_nic(g, pa, pick, uses, &nominal_before) : INFINITY;
            supply0[pick] += nominal_before;
        }
    }
    for (int i = 0; i < p; i++)
        if (picks[i] >= 0 && !seen[picks[i]]) {
            seen[picks[i]] = true;
            sum += fmin(coll_link_cap(g, picks[i]), supply[picks[i]]);
            nominal += fmin(topo_link_bandwidth(g->t, picks[i]), supply0[picks[i]]);
            g->nics++;
        }
    g_free(supply);
    g_free(supply0);
    g_free(picks);
    g_free(paths);
    g_free(pool);
    g_free(uses);
    g_free(seen);
    g->inter_bw = sum > 0 ? sum : INFINITY;
    g->inter_nominal = nominal > 0 ? nominal : INFINITY;
}


/* What the NICs' transport adds to every network step, in every algorithm
 * (on g->p, fresh from the parameters). */
void coll_group_add_transport_latency(CollGroup *g)
{
    const CollTransport *tr = &g->p.transport[g->transport];
    g->eager_paid = g->nnodes > 1 && tr->given;
    if (g->nnodes <= 1 || !tr->given)
        return;
    /* LL and LL128 write small flagged lines straight into the peer's buffer
     * (eager); a Simple step is one large message, the transport's
     * rendezvous: only it pays the per-message overhead.  A transport with
     * its own network step (measured on it, not on InfiniBand as NCCL's
     * tables are) takes it in place of the tables' */
    for (int k = 0; k < 2; k++)
        for (int q = 0; q < COLL_NUM_PROTOS; q++) {
            double *s = &g->p.step[HW_NET][k][q];
            *s = (tr->step > 0 ? tr->step : *s) + tr->latency + (q == COLL_SIMPLE ? tr->overhead : 0);
        }
    /* NVLSTree's network steps are its tree's, Simple's, in the time and in
     * the rating of the versions that rate them apart */
    double *nt[] = {&g->p.nvls_tree_net_lat, &g->p.nvls_tree_net_rating};
    for (int k = 0; k < 2; k++)
        if (k == 0 || *nt[k] > 0) /* a rating of 0: none given, the time's is rated */
            *nt[k] = (tr->step > 0 ? tr->step : *nt[k]) + tr->latency + tr->overhead;
}

CollGroup *coll_group_new(const Topo *t, const int *ranks, int nranks, const char *params_path, GError **err)
{
    CollParams p;
    return coll_params_load(params_path, &p, err) ? coll_group_new_with(t, ranks, nranks, &p, err) : NULL;
}

CollGroup *coll_group_new_with(const Topo *t, const int *ranks, int nranks, const CollParams *p, GError **err)
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
    g->nvls_type_ok = true;
    g->gpu_gen = coll_nccl_gpu_generation(t);
    g->host_cpu = topo_host_cpu(t);
    g->nic_on_host = topo_nic_on_host(t);
    g->nic_on_switch = topo_nic_on_switch(t);
    g->p = *p;
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
    if (!uniform || g->ppn > COLL_MAX_PPN) {
        if (!uniform)
            g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT,
                        "topology %s: a collective's ranks must be spread evenly over its nodes (%d nodes, up to %d "
                        "ranks on one)", SIM_ECHO(topo_name(t)), g->nnodes, g->ppn);
        else
            g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT,
                        "topology %s: a collective can have at most %d ranks per node (%d nodes, %d ranks on one); "
                        "MPI on CPU nodes has no such limit (collective --library mpi)",
                        SIM_ECHO(topo_name(t)), COLL_MAX_PPN, g->nnodes, g->ppn);
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
    g->p0 = *p;
    coll_rccl_apply(g);
    coll_tree_shape(g);
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
    g_free(g->sib_ids);
    coll_rccl_free(g);
    g_free(g);
}

CollGroup *coll_group_twin(const CollGroup *g)
{
    CollGroup *t = g_memdup2(g, sizeof *g);
    t->tuner = NULL;
    t->sib_ids = NULL; /* g's: a twin rates, it routes nothing */
    t->nsib = 0;
    return t;
}

int coll_group_size(const CollGroup *g) { return g->n; }
int coll_group_nodes(const CollGroup *g) { return g->nnodes; }
double coll_group_intra_bw(const CollGroup *g) { return g->intra_bw; }
double coll_group_inter_bw(const CollGroup *g) { return g->inter_bw; }
double coll_group_link_cap(const CollGroup *g, int link) { return coll_link_cap(g, link); }
int coll_group_channels(const CollGroup *g) { return g->nch; }
int coll_group_ring_channels(const CollGroup *g) { return coll_ring_channels(g); }

void coll_group_set_allowed(CollGroup *g, unsigned algos, unsigned protos)
{
    g->allowed_algos = algos & ((1u << COLL_NUM_ALGOS) - 1);
    g->allowed_protos = protos & ((1u << COLL_NUM_PROTOS) - 1);
}
void coll_group_set_gpus_per_thread(CollGroup *g, int n) { g->gpus_per_thread = n > 0 ? n : 1; }

/* NCCL reduces with NVLink SHARP only 16-, 32- and 64-bit types (src/include/
 * device.h ncclNvlsSupported, NCCL 2.29.7: int32/64, uint32/64, half, bf16
 * for sum and min/max, float and double for sum): not int8, uint8 or FP8,
 * whose all-reduces run Ring or Tree (enqueue.cc: nvlsSupport). */
bool coll_group_set_datatype(CollGroup *g, const char *type)
{
    static const char *const no_nvls[] = {"int8", "uint8", "char", "fp8_e4m3", "fp8_e5m2", "f8e4m3", "f8e5m2"};
    static const char *const nvls[] = {"int32", "uint32", "int64", "uint64", "half", "float", "double",
                                       "bfloat16", "int", "uint", "bf16", "fp16", "fp32", "fp64"};
    g->nvls_type_ok = true;
    bool known = type == NULL;
    for (size_t i = 0; type && i < G_N_ELEMENTS(no_nvls); i++)
        if (!strcmp(type, no_nvls[i]))
            g->nvls_type_ok = false, known = true;
    for (size_t i = 0; type && i < G_N_ELEMENTS(nvls); i++)
        known = known || !strcmp(type, nvls[i]);
    return known;
}
