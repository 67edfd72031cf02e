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
/* Flows one factor may build: a 16384-rank ring. */
#define FABRIC_MAX_FLOWS (1 << 20)

/* The algorithms whose closed form takes its beta from the NICs alone.
 * Direct and halving-doubling already bound by the pattern's busiest link;
 * in-network reduction (CollNet, NVLS across nodes) is the switches' own. */
static bool beta_from_nics(CollAlgo a)
{
    return a == COLL_RING || a == COLL_TREE || a == COLL_HIER || a == COLL_NVLS_TREE || a == COLL_PAT;
}

/* Every byte of the algorithm's flows on every link of its route: the
 * busiest switch-to-switch link's seconds (bytes over capacity) over the
 * busiest other link's, which the closed form's beta stands for.  Bounds,
 * not a simulation: in these pipelined schedules the busiest links are busy
 * the whole time, so the ratio is the simulated flows' (tests/test_collective.c
 * holds the two together), at O(flows).  Every flow's bytes scale alike with
 * the size and the protocol's efficiency, so one factor an op and algorithm,
 * built at Simple. */
static double factor_of(const CollGroup *g, CollOp op, CollAlgo a)
{
    CollProto p = COLL_SIMPLE;
    if (coll_flow_count(g, op, a, p, FABRIC_REF_BYTES) > FABRIC_MAX_FLOWS)
        return NAN;
    int nl = topo_num_links(g->t);
    double *load = g_new0(double, nl), fabric = 0, rest = 0;
    SimGraph *graph = sim_graph_new();
    coll_append(g, graph, op, a, p, FABRIC_REF_BYTES, NULL, 0, NULL);
    for (int k = 0; k < (int)sim_graph_num_tasks(graph); k++) {
        const int *ls;
        int n = sim_graph_task_links(graph, k, &ls);
        for (int i = 0; i < n; i++)
            load[ls[i]] += sim_graph_task_bytes(graph, k);
    }
    for (int l = 0; l < nl; l++) {
        double s = load[l] / coll_link_cap(g, l);
        if (topo_link_is_fabric(g->t, l))
            fabric = fmax(fabric, s);
        else
            rest = fmax(rest, s);
    }
    sim_graph_free(graph);
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

void coll_fabric_forget(CollGroup *g) { memset(g->fabric_factor, 0, sizeof g->fabric_factor); }
