/* The fabric above the NICs in a collective's time.  The closed form takes
 * its beta from the NICs (and, for direct and halving-doubling, from the
 * busiest link of the whole pattern), so an oversubscribed fat tree, a
 * dragonfly's global links, static routing's collisions on them and a
 * scattered placement of the ranks never reached `collective` or `validate`:
 * only --flows saw them.  coll_fabric_factor routes the chosen algorithm's
 * flows and sets the busiest switch-to-switch link (topo_link_is_fabric)
 * against the busiest other link; where the first binds, the ratio scales
 * the closed form's bandwidth term, as `run` scales its data-parallel groups
 * by their flows on the fabric against a non-blocking one
 * (par_contention.c).  Where the flows never cross a fabric link (one leaf,
 * one node) it is 1. */
#include "coll_internal.h"

#include <math.h>
#include <string.h>

/* The size the flows are built at: every flow's bytes scale with it (and
 * with the protocol's efficiency) alike, so the ratio does not depend on
 * either; small enough that a tree runs one segment a hop. */
#define FABRIC_REF_BYTES (1024.0 * 1024)
/* Flows one factor may build (COLL_MAX_FLOWS, what --flows takes): a
 * 65536-rank ring of 8 channels, 64 GB200 NVL72 racks; about 0.8 s and
 * 600 MB at the top (2-core Debian 12 machine). */
#define FABRIC_MAX_FLOWS COLL_MAX_FLOWS

/* The algorithms whose closed form takes its beta from the NICs alone, in
 * one pipelined stage.  Direct and halving-doubling already bound by the
 * pattern's busiest link; in-network reduction (CollNet, NVLS across nodes)
 * is the switches' own; the hierarchical all-reduce's phases run one after
 * another and the fabric would slow only its network phase, which this
 * whole-collective ratio cannot say (left to --flows). */
static bool beta_from_nics(CollAlgo a)
{
    return a == COLL_RING || a == COLL_TREE || a == COLL_NVLS_TREE || a == COLL_PAT;
}

/* Whether the group's ranks inside a node reach each other through a
 * switch-to-switch link (a topology with "intra": "none", whose GPUs of
 * different rails meet at the spines): then the closed form's own
 * intra-node rings were found on those links and already see the fabric. */
static bool intra_on_fabric(const CollGroup *g)
{
    int n = g->node_start[1] - g->node_start[0];
    bool found = false;
    for (int j = 1; j < n && !found; j++)
        found = topo_route_on_fabric(g->t, g->ranks[g->by_node[0]], g->ranks[g->by_node[j]]);
    return found;
}

/* Adds every byte of the flows `fl` (group indices) to the links of their
 * routes between `ranks` (`used` gets each link the first time it is
 * loaded). */
static void add_flows(const CollGroup *g, const GArray *fl, const int *ranks, double *load, GArray *used, int *links)
{
    for (guint f = 0; f < fl->len; f++) {
        const CollFlowRec *r = &g_array_index(fl, CollFlowRec, f);
        int n = topo_route(g->t, ranks[r->src], ranks[r->dst], r->salt, links, coll_route_cap(g));
        for (int i = 0; i < n && r->bytes > 0; i++) {
            if (load[links[i]] == 0)
                g_array_append_val(used, links[i]);
            load[links[i]] += r->bytes;
        }
    }
}

static int rec_cmp(const void *a, const void *b)
{
    const CollFlowRec *x = a, *y = b;
    if (x->src != y->src)
        return x->src < y->src ? -1 : 1;
    if (x->dst != y->dst)
        return x->dst < y->dst ? -1 : 1;
    return x->salt < y->salt ? -1 : x->salt > y->salt;
}

/* Whether topo_route ignores the salt: D-mod-K and a fat tree's adaptive
 * split route by the endpoints alone; ECMP hashes the salt in, and a
 * dragonfly's routes are taken to. */
static bool salt_free(const Topo *t)
{
    const char *r = topo_routing(t), *f = topo_family(t);
    return !r || !strcmp(r, "dmodk") || (!strcmp(r, "adaptive") && f && !strcmp(f, "fat_tree"));
}

/* fl with the flows of one route (source, destination, and salt where the
 * routing reads it) as one, their bytes summed: a ring's 2 (n - 1) steps
 * over a hop, on every channel, load it as one flow of all their bytes, and
 * the siblings route each hop once. */
static void merge_routes(const CollGroup *g, GArray *fl)
{
    if (salt_free(g->t))
        for (guint i = 0; i < fl->len; i++)
            g_array_index(fl, CollFlowRec, i).salt = 0;
    g_array_sort(fl, rec_cmp);
    guint k = 0;
    for (guint i = 0; i < fl->len; i++) {
        CollFlowRec *r = &g_array_index(fl, CollFlowRec, i), *last = k ? &g_array_index(fl, CollFlowRec, k - 1) : NULL;
        if (last && rec_cmp(last, r) == 0)
            last->bytes += r->bytes;
        else
            g_array_index(fl, CollFlowRec, k++) = *r;
    }
    g_array_set_size(fl, k);
}

/* The siblings' flows beside g's: g's own moved to each sibling's ranks
 * (a copy of the same shape in the job's layout, whose schedule is g's),
 * as many siblings as FABRIC_MAX_FLOWS holds, in the order given. */
static void add_siblings(const CollGroup *g, const GArray *fl, double *load, GArray *used, int *links)
{
    int64_t room = fl->len ? (FABRIC_MAX_FLOWS - (int64_t)fl->len) / fl->len : g->nsib;
    for (int k = 0; k < g->nsib && k < room; k++)
        add_flows(g, fl, g->sib_ids + (size_t)k * g->n, load, used, links);
}

/* The busiest link's seconds (bytes over capacity) among `used`, of the
 * fabric's switch-to-switch links (`fabric`) or of the others. */
static double busiest(const CollGroup *g, const double *load, const GArray *used, bool fabric)
{
    double m = 0;
    for (guint i = 0; i < used->len; i++) {
        int l = g_array_index(used, int, i);
        if (topo_link_is_fabric(g->t, l) == fabric)
            m = fmax(m, load[l] / coll_link_cap(g, l));
    }
    return m;
}

/* Every byte of the algorithm's flows on every link of its route: the
 * busiest switch-to-switch link's seconds over the busiest other link's,
 * which the closed form's beta stands for.  Bounds, not a simulation: in
 * these pipelined schedules the busiest links are busy the whole time, so
 * the ratio is the simulated flows' (tests/test_collective.c holds the two
 * together), at O(flows).  The siblings' flows load the fabric too, and
 * the busiest fabric link over all of them counts (a copy of the
 * collective held up there holds up the step); the other links stay g's
 * own, the closed form's.  Every flow's bytes scale alike with the size and
 * the protocol's efficiency, so one factor an op and algorithm, built at
 * Simple. */
static double factor_of(const CollGroup *g, CollOp op, CollAlgo a)
{
    if (intra_on_fabric(g))
        return 1;
    if (coll_flow_count(g, op, a, COLL_SIMPLE, FABRIC_REF_BYTES) > FABRIC_MAX_FLOWS)
        return NAN;
    GArray *fl = coll_flows_of(g, op, a, COLL_SIMPLE, FABRIC_REF_BYTES);
    merge_routes(g, fl);
    double *load = g_new0(double, topo_num_links(g->t));
    GArray *used = g_array_new(FALSE, FALSE, sizeof(int)); /* the links the flows touch, once each */
    int *links = g_new(int, coll_route_cap(g));
    add_flows(g, fl, g->ranks, load, used, links);
    double rest = busiest(g, load, used, false);
    add_siblings(g, fl, load, used, links);
    double fabric = busiest(g, load, used, true);
    g_free(links);
    g_array_free(used, TRUE);
    g_array_free(fl, TRUE);
    g_free(load);
    return rest > 0 && fabric > rest ? fabric / rest : 1;
}

double coll_fabric_factor(const CollGroup *g, CollOp op, CollAlgo a, CollProto p)
{
    if (!g->fabric || g->nnodes < 2 || !beta_from_nics(a) || op < 0 || op >= COLL_NUM_OPS || p < 0 ||
        p >= COLL_NUM_PROTOS)
        return 1;
    CollGroup *m = (CollGroup *)g; /* a cache: a group is used by one thread */
    double *slot = &m->fabric_factor[op][a];
    if (*slot == 0)
        *slot = factor_of(g, op, a);
    return *slot;
}

void coll_group_set_fabric(CollGroup *g, bool on)
{
    g->fabric = on;
    coll_fabric_forget(g);
}

void coll_group_set_siblings(CollGroup *g, const int *ids, int count)
{
    g_free(g->sib_ids);
    g->nsib = ids && count > 0 ? count : 0;
    g->sib_ids = g->nsib ? g_memdup2(ids, (gsize)count * g->n * sizeof(int)) : NULL;
    coll_fabric_forget(g);
}

void coll_fabric_forget(CollGroup *g)
{
    memset(g->fabric_factor, 0, sizeof g->fabric_factor);
    g->direct_spb = g->direct_spb_alone = 0; /* the patterns' busiest links count the siblings where the fabric is on */
    memset(g->rhd_spb, 0, sizeof g->rhd_spb);
    memset(g->rhd_spb_alone, 0, sizeof g->rhd_spb_alone);
}
