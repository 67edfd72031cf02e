/* Contention of data-parallel collectives with the fabric and with each
 * other: every (pipeline stage, tensor rank) has its own DP group, and all of
 * them reduce their gradients at the same time over shared NICs and fabric
 * (under FSDP hybrid sharding, one shard group per replica, and the
 * replicas' all-reduce groups, one per shard position, found separately).
 * The closed form (coll_cost) takes its beta from the NICs, as if the fabric
 * above them never narrowed; the step's DP collectives (step_coll_use) are
 * scaled by the factor
 *   flow time of all groups together on the real fabric
 *   / flow time of one group alone on a non-blocking one,
 * where non-blocking means the fabric's switch-to-switch links
 * (topo_link_is_fabric: a fat tree's uplinks) never bind.  Oversubscription
 * and static routing's collisions thus reach the step even with one DP group;
 * the report shows it as "dp_contention", with how it was found ("method").
 *
 * What is symmetric is simulated once, exactly: groups whose flows share no
 * link cannot contend, so the groups split into components of link sharing
 * (on a rail-optimised fat tree, one per rail); components that are the same
 * graph up to a renaming of links of equal bandwidth and latency finish at
 * the same time, so one of each kind is simulated; the concurrent time is the
 * latest component's.  Past a budget of simulated flows, only a subset is
 * simulated ("sampled"), or none ("uplink bound"); either way the closed form
 * keeps an uplink bound: the bytes all groups send over the busiest fabric
 * link over its capacity, which the collective cannot beat (O(flows of the
 * groups built), no simulation). */
#include "step_build.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* The flow network's work (sim_net_work) that the group alone and the
 * components may take in all: under a second of a Release build with the
 * incremental max-min (2^25: exact up to the 64-node tree of
 * examples/gpt3-6.7b-tp8-a100.json; a Llama-2 70B tp 8 x pp 8 on 512 nodes is
 * sampled in 0.7 s).  Work is counted, not timed, so what is simulated is
 * deterministic. */
#ifndef DP_WORK_BUDGET
#define DP_WORK_BUDGET ((uint64_t)1 << 25)
#endif
static uint64_t work_budget = DP_WORK_BUDGET;

void dp_contention_set_work_budget(uint64_t work) { work_budget = work ? work : DP_WORK_BUDGET; }

/* A fabric link of the non-blocking reference: wide enough never to bind. */
#define DP_NONBLOCKING 1e6
/* Bytes of canonical forms kept for comparing components. */
#define DP_FP_BUDGET ((size_t)64 << 20)

typedef struct {
    Ctx *c;
    const CollGroup *base; /* the collective scaled: dp_group, or rep_group under hybrid sharding */
    const char *what;      /* its groups, in warnings: "data-parallel" or "replica" */
    DpContention *out;     /* where the run's result goes: c->dp_ct or c->rep_ct */
    int all;               /* concurrent groups: one per (stage, tensor rank[, shard]) */
    CollOp op;
    CollCost cc;
    double bytes;
    int ngroups;
    CollGroup **groups;
    int *comp;  /* [group]: its component's root */
    double *load; /* [link]: bytes all groups send over it (fabric links only) */
    bool fabric;  /* the topology has fabric links (else the reference is the real net) */
    gint64 t0;  /* when the run began (us), for progress */
    bool shown;
} Dp;

/* A line of progress on a terminal's stderr once the run is past 2 s. */
static void progress(Dp *d, const char *what, int i, int n)
{
    if (!isatty(STDERR_FILENO) || g_get_monotonic_time() - d->t0 < 2000000)
        return;
    fprintf(stderr, "\rshardsim: dp contention: %s %d/%d\033[K", what, i, n);
    d->shown = true;
}

static int uf_find(int *p, int x)
{
    while (p[x] != x)
        x = p[x] = p[p[x]];
    return x;
}

static SimGraph *group_graph(const Dp *d, int k)
{
    SimGraph *g = sim_graph_new();
    coll_append(d->groups[k], g, d->op, d->cc.algo, d->cc.proto, d->bytes, NULL, 0, "dp");
    return g;
}

/* Adds what the graph's flows send over fabric links to d->load. */
static void add_loads(const Dp *d, const SimGraph *g)
{
    for (int t = 0; t < (int)sim_graph_num_tasks(g); t++) {
        const int *ls;
        int n = sim_graph_task_links(g, t, &ls);
        for (int i = 0; i < n; i++)
            if (topo_link_is_fabric(d->c->topo, ls[i]))
                d->load[ls[i]] += sim_graph_task_bytes(g, t);
    }
}

/* Unions groups that share a link: owner[link] is the first group seen on it. */
static void components(Dp *d, int nlinks)
{
    int *owner = g_new(int, nlinks);
    for (int l = 0; l < nlinks; l++)
        owner[l] = -1;
    for (int k = 0; k < d->ngroups; k++) {
        progress(d, "group", k + 1, d->ngroups);
        d->comp[k] = k;
        SimGraph *g = group_graph(d, k);
        for (int t = 0; t < (int)sim_graph_num_tasks(g); t++) {
            const int *ls;
            int n = sim_graph_task_links(g, t, &ls);
            for (int i = 0; i < n; i++) {
                if (owner[ls[i]] < 0)
                    owner[ls[i]] = k;
                else
                    d->comp[uf_find(d->comp, k)] = uf_find(d->comp, owner[ls[i]]);
            }
        }
        add_loads(d, g);
        sim_graph_free(g);
    }
    for (int k = 0; k < d->ngroups; k++)
        d->comp[k] = uf_find(d->comp, k);
    g_free(owner);
}

static void put(GByteArray *fp, const void *v, size_t n) { g_byte_array_append(fp, v, (guint)n); }

/* The component's graphs in a form that names links by first appearance,
 * with each link's kind, bandwidth and latency: two components with equal
 * forms are the same simulation. */
static GBytes *canonical(const Dp *d, int root, int *label)
{
    const Topo *t = d->c->topo;
    GByteArray *fp = g_byte_array_new();
    GArray *seen = g_array_new(FALSE, FALSE, sizeof(int));
    for (int k = 0; k < d->ngroups; k++) {
        if (d->comp[k] != root)
            continue;
        SimGraph *g = group_graph(d, k);
        size_t nt = sim_graph_num_tasks(g), ne = sim_graph_num_edges(g);
        put(fp, &nt, sizeof nt);
        put(fp, &ne, sizeof ne);
        for (int i = 0; i < (int)nt; i++) {
            const int *ls;
            int n = sim_graph_task_links(g, i, &ls);
            double b = sim_graph_task_bytes(g, i);
            sim_time_t dur = sim_graph_task_duration(g, i);
            int res = sim_graph_task_resource(g, i);
            put(fp, &b, sizeof b);
            put(fp, &dur, sizeof dur);
            put(fp, &res, sizeof res);
            put(fp, &n, sizeof n);
            for (int j = 0; j < n; j++) {
                int l = ls[j];
                if (label[l] < 0) {
                    label[l] = (int)seen->len;
                    g_array_append_val(seen, l);
                    int kind = topo_link_kind(t, l);
                    double bw = topo_link_bandwidth(t, l), lat = topo_link_latency(t, l);
                    put(fp, &kind, sizeof kind);
                    put(fp, &bw, sizeof bw);
                    put(fp, &lat, sizeof lat);
                }
                put(fp, &label[l], sizeof label[l]);
            }
        }
        for (size_t i = 0; i < ne; i++) {
            int e[2];
            sim_graph_edge(g, i, &e[0], &e[1]);
            put(fp, e, sizeof e);
        }
        sim_graph_free(g);
    }
    for (guint i = 0; i < seen->len; i++)
        label[g_array_index(seen, int, i)] = -1;
    g_array_free(seen, TRUE);
    return g_byte_array_free_to_bytes(fp);
}

/* The span of the given groups run together (those with keep[k]) within
 * `*work` of the network's work (less what it took), or SIM_TIME_NEVER and
 * *overrun when it hit that limit. */
static sim_time_t simulate(const Dp *d, const bool *keep, bool nonblocking, bool loads, uint64_t *work,
                           bool *overrun)
{
    SimGraph *g = sim_graph_new();
    for (int k = 0; k < d->ngroups; k++)
        if (keep[k])
            coll_append(d->groups[k], g, d->op, d->cc.algo, d->cc.proto, d->bytes, NULL, 0, "dp");
    if (loads)
        add_loads(d, g);
    SimEngine *e = sim_engine_new();
    SimNet *net = sim_net_new(e);
    const Topo *t = d->c->topo;
    for (int l = 0; l < topo_num_links(t); l++) {
        double cap = coll_group_link_cap(d->base, l);
        if (nonblocking && topo_link_is_fabric(t, l))
            cap *= DP_NONBLOCKING;
        sim_net_add_link(net, cap, sim_time_from_s(topo_link_latency(t, l)));
    }
    sim_net_set_work_limit(net, *work);
    sim_time_t span = sim_graph_run(g, e, net);
    *overrun = sim_net_overrun(net) || span == SIM_TIME_NEVER;
    *work = *overrun ? 0 : *work - sim_net_work(net);
    sim_net_free(net);
    sim_engine_free(e);
    sim_graph_free(g);
    return span;
}

/* Runs one of each kind of component, the group-0 one first, while the
 * work budget lasts; returns the latest span, the groups simulated and those
 * they stand for (covered: their own and their duplicates').  *overrun when
 * a component did not finish within what was left. */
static sim_time_t run_components(Dp *d, uint64_t work, int *sim_groups, int *covered, int *ncomp, bool *overrun)
{
    int n = d->ngroups, nlinks = topo_num_links(d->c->topo);
    int *size = g_new0(int, n), *order = g_new(int, n), *label = g_new(int, nlinks);
    bool *keep = g_new0(bool, n);
    for (int l = 0; l < nlinks; l++)
        label[l] = -1;
    for (int k = 0; k < n; k++)
        size[d->comp[k]]++;
    *ncomp = 0;
    order[(*ncomp)++] = d->comp[0];
    for (int k = 0; k < n; k++)
        if (d->comp[k] == k && k != d->comp[0])
            order[(*ncomp)++] = k;
    GHashTable *kinds = g_hash_table_new_full(g_bytes_hash, g_bytes_equal, (GDestroyNotify)g_bytes_unref, NULL);
    size_t fp_bytes = 0;
    sim_time_t latest = 0;
    *sim_groups = *covered = 0;
    *overrun = false;
    for (int i = 0; i < *ncomp && !*overrun && work > 0; i++) {
        int root = order[i];
        progress(d, "component", i + 1, *ncomp);
        GBytes *fp = fp_bytes < DP_FP_BUDGET ? canonical(d, root, label) : NULL;
        if (fp && g_hash_table_contains(kinds, fp)) { /* the same simulation as one already run */
            g_bytes_unref(fp);
            *covered += size[root];
            continue;
        }
        for (int k = 0; k < n; k++)
            keep[k] = d->comp[k] == root;
        sim_time_t span = simulate(d, keep, false, false, &work, overrun);
        if (*overrun) {
            if (fp)
                g_bytes_unref(fp);
            break;
        }
        *sim_groups += size[root];
        *covered += size[root];
        if (fp) {
            fp_bytes += g_bytes_get_size(fp);
            g_hash_table_add(kinds, fp);
        }
        if (span > latest)
            latest = span;
    }
    g_hash_table_destroy(kinds);
    g_free(size);
    g_free(order);
    g_free(label);
    g_free(keep);
    return latest;
}

static void set_warning(DpContention *o, const char *method, char *why)
{
    g_strlcpy(o->method, method, sizeof o->method);
    o->warning = why;
}

/* The uplink bound (s): the bytes the groups built send over the busiest
 * fabric link over its capacity; 0 without fabric links. */
static double uplink_bound(const Dp *d)
{
    double worst = 0;
    for (int l = 0; l < topo_num_links(d->c->topo); l++)
        if (d->load[l] > 0 && d->load[l] / coll_group_link_cap(d->base, l) > worst)
            worst = d->load[l] / coll_group_link_cap(d->base, l);
    return worst;
}

/* The closed form's factor when its beta part can go no faster than the
 * uplink bound `up`. */
static double bound_factor(const Dp *d, double up)
{
    double beta = d->cc.time_s - d->cc.latency_s;
    return d->cc.time_s > 0 && up > beta ? (d->cc.latency_s + up) / d->cc.time_s : 1;
}

/* Past the budget: the uplink bound alone scales the DP collectives; it
 * counts the traffic of `counted` groups (group 0 alone when even it is
 * past the budget: on a rail-optimised layout the others' uplinks are other
 * leaves'; elsewhere it may be low). */
static void by_bound(const Dp *d, double fb, int counted, char *why)
{
    d->out->factor = fb;
    set_warning(d->out, "uplink bound",
                g_strdup_printf("%s; the %s collectives are scaled by the uplink bound only (factor %.4g: the "
                                "busiest fabric link takes %.4g s for %d of %d groups)",
                                why, d->what, fb, d->out->uplink_bound_s, counted, d->all));
    g_free(why);
}

/* Group k's ranks into ids; returns how many.  The DP (shard) group of
 * replica k % replicas of (stage, tensor rank) k / replicas; or the
 * replica group of shard position k % shard of (stage, tensor rank)
 * k / shard, as zero_init builds group 0. */
static int group_ranks(const Dp *d, int k, int *ids)
{
    const Ctx *c = d->c;
    int zr = c->zero_ranks, nrep = c->p.dp / zr;
    bool rep = d->base == c->rep_group;
    int per = rep ? zr : nrep, st = k / per, i = k % per, n = rep ? nrep : zr;
    for (int r = 0; r < n; r++) /* replica group i: shard position i; shard group i: replica i */
        ids[r] = step_rank_of(c, st / c->p.tp, rep ? i + r * zr : i * zr + r, st % c->p.tp);
    return n;
}

/* Builds the groups that the search for components may hold
 * (COLL_MAX_FLOWS flows in all); false if one fails. */
static bool build_groups(Dp *d, int64_t per)
{
    if ((int64_t)d->ngroups > COLL_MAX_FLOWS / per)
        d->ngroups = (int)(COLL_MAX_FLOWS / per > 1 ? COLL_MAX_FLOWS / per : 1);
    d->groups = g_new0(CollGroup *, d->ngroups);
    d->comp = g_new(int, d->ngroups);
    int *ids = g_new(int, d->c->p.dp);
    bool ok = true;
    for (int k = 0; k < d->ngroups && ok; k++) {
        int n = group_ranks(d, k, ids);
        ok = (d->groups[k] = step_group_new(d->c, ids, n, NULL)) != NULL;
    }
    g_free(ids);
    return ok;
}

/* The flow simulations once group 0 alone (`alone`, real fabric) and its
 * non-blocking reference (`ref`) are known: the components together, or
 * the bound past the budget. */
static void concurrent(Dp *d, sim_time_t alone, sim_time_t ref, uint64_t work, double fb, int all)
{
    DpContention *o = d->out;
    int sim_groups = 1, covered = 1, ncomp = 1;
    bool overrun = false;
    sim_time_t span = alone;
    if (d->ngroups > 1) /* components() has run */
        span = run_components(d, work, &sim_groups, &covered, &ncomp, &overrun);
    if (sim_groups == 0) {
        by_bound(d, fb, d->ngroups,
                 g_strdup_printf("dp_contention: the %s groups sharing links with the first one take "
                                 "more than the contention run's work budget (%llu)",
                                 d->what, (unsigned long long)work_budget));
        return;
    }
    o->flow_alone_s = sim_time_to_s(alone);
    o->flow_nonblocking_s = sim_time_to_s(ref);
    o->flow_concurrent_s = sim_time_to_s(span);
    o->flow_groups = covered == all ? all : sim_groups;
    double ff = span > ref ? o->flow_concurrent_s / o->flow_nonblocking_s : 1;
    if (covered == all) {
        o->factor = ff;
        g_strlcpy(o->method, "exact", sizeof o->method);
        return;
    }
    o->factor = ff > fb ? ff : fb;
    set_warning(o, "sampled",
                g_strdup_printf("dp_contention: sampled: %d of %d %s groups simulated, standing for %d "
                                "(%d components of link sharing, the rest past the work budget %llu); the factor "
                                "is the larger of theirs (%.4g) and the uplink bound's over %d groups (%.4g)",
                                sim_groups, all, d->what, covered, ncomp, (unsigned long long)work_budget, ff, d->ngroups,
                                fb));
}

/* The collective whose groups run at once across the fabric: the DP
 * groups' reduce-scatter (all-reduce without ZeRO) of one bucket or layer,
 * one group per (stage, tensor rank) and, under hybrid sharding, replica;
 * or (`replicas`) hybrid sharding's all-reduce of a layer's gradient shard
 * across the replicas (par_zero.c), one group per shard position, which
 * share the NICs where a node has fewer NICs than GPUs.  False if there is
 * none. */
static bool dp_which(Ctx *c, Dp *d, bool replicas)
{
    const StepPlan *p = &c->p;
    d->c = c;
    d->what = replicas ? "replica" : "data-parallel";
    d->all = p->pp * p->tp * (replicas ? c->zero_ranks : p->dp / c->zero_ranks);
    if (replicas) {
        d->base = c->rep_group;
        d->op = COLL_ALLREDUCE;
        d->bytes = c->layer_params * c->grad_bytes_per_param * p->compression / c->zero_ranks;
    } else {
        d->base = c->dp_group;
        d->op = p->zero_stage >= 1 ? COLL_REDUCESCATTER : COLL_ALLREDUCE;
        d->bytes = p->zero_stage == 3 ? c->layer_params * c->param_bytes : p->bucket_bytes * p->compression;
    }
    return d->base && coll_cost(d->base, d->op, COLL_ALGO_AUTO, COLL_PROTO_AUTO, d->bytes, &d->cc);
}

/* How much slower one collective of dp_which's gets than the closed form
 * says (into `out`): its groups run it at the same time on the real
 * fabric, against one alone on a non-blocking fabric (the closed form's
 * assumption). */
static void contention(Ctx *c, bool replicas, DpContention *out)
{
    Dp d = {.t0 = g_get_monotonic_time(), .out = out};
    if (!dp_which(c, &d, replicas))
        return;
    int nlinks = topo_num_links(c->topo), all = d.all;
    for (int l = 0; l < nlinks && !d.fabric; l++)
        d.fabric = topo_link_is_fabric(c->topo, l);
    if (all == 1 && !d.fabric)
        return; /* one group, nobody to contend with and nothing above its NICs */
    int64_t per = coll_flow_count(d.base, d.op, d.cc.algo, d.cc.proto, d.bytes);
    if (per > COLL_MAX_FLOWS) {
        set_warning(out, "not simulated",
                    g_strdup_printf("dp_contention: one %s group's %s takes %lld flows, more than a "
                                    "flow simulation holds (%d); its collectives are not scaled for contention",
                                    d.what, coll_algo_name(d.cc.algo), (long long)per, COLL_MAX_FLOWS));
        return;
    }
    d.ngroups = all;
    d.load = g_new0(double, nlinks);
    bool ok = build_groups(&d, per < 1 ? 1 : per);
    uint64_t work = work_budget;
    bool overrun = false;
    bool *keep = g_new0(bool, d.ngroups);
    keep[0] = true;
    sim_time_t alone = ok ? simulate(&d, keep, false, true, &work, &overrun) : SIM_TIME_NEVER;
    sim_time_t ref = alone;
    out->uplink_bound_s = ok ? uplink_bound(&d) : 0; /* group 0's */
    if (ok && !overrun && out->uplink_bound_s > 0) /* else nothing crosses the fabric: the reference is alone */
        ref = simulate(&d, keep, true, false, &work, &overrun);
    g_free(keep);
    if (ok && !overrun && d.ngroups > 1) { /* every group's loads, found with the components */
        memset(d.load, 0, sizeof *d.load * (size_t)nlinks);
        components(&d, nlinks);
        out->uplink_bound_s = uplink_bound(&d);
    }
    double fb = bound_factor(&d, out->uplink_bound_s);
    if (ok && overrun)
        by_bound(&d, fb, 1,
                 g_strdup_printf("dp_contention: one %s group's %s (%lld flows) alone takes more than "
                                 "the contention run's work budget (%llu)",
                                 d.what, coll_algo_name(d.cc.algo), (long long)per, (unsigned long long)work_budget));
    else if (ok && ref > 0)
        concurrent(&d, alone, ref, work, fb, all);
    for (int k = 0; k < d.ngroups; k++)
        coll_group_free(d.groups[k]);
    g_free(d.groups);
    g_free(d.comp);
    g_free(d.load);
    if (d.shown)
        fputs("\r\033[K", stderr);
}

/* The data-parallel groups' contention (c->dp_ct), and under hybrid
 * sharding the replicas' (c->rep_ct). */
void dp_contention(Ctx *c)
{
    c->dp_ct.factor = c->rep_ct.factor = 1;
    if (!c->dp_group || !step_scenario_flow_contention(c->sc))
        return;
    if (c->rep_group)
        contention(c, true, &c->rep_ct);
    contention(c, false, &c->dp_ct);
}
