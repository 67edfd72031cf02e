/* Contention between data-parallel collectives: every (pipeline stage,
 * tensor rank) has its own DP group, and all of them reduce their
 * gradients at the same time over shared NICs and fabric.  A flow
 * simulation of them together against one alone gives the factor by which
 * the step's DP collectives (step_coll_use) are slowed; the report shows
 * it as "dp_contention", with how it was found ("method").
 *
 * What is symmetric is simulated once, exactly: groups whose flows share no
 * link cannot contend, so the groups split into components of link sharing
 * (on a rail-optimised fat tree, one per rail); components that are the same
 * graph up to a renaming of links of equal bandwidth and latency finish at
 * the same time, so one of each kind is simulated; the concurrent time is the
 * latest component's.  Past a budget of simulated flows, only a subset is
 * simulated and the method says so. */
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
/* Bytes of canonical forms kept for comparing components. */
#define DP_FP_BUDGET ((size_t)64 << 20)

typedef struct {
    Ctx *c;
    CollOp op;
    CollCost cc;
    double bytes;
    int ngroups;
    CollGroup **groups;
    int *comp;  /* [group]: its component's root */
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
static sim_time_t simulate(const Dp *d, const bool *keep, uint64_t *work, bool *overrun)
{
    SimGraph *g = sim_graph_new();
    for (int k = 0; k < d->ngroups; k++)
        if (keep[k])
            coll_append(d->groups[k], g, d->op, d->cc.algo, d->cc.proto, d->bytes, NULL, 0, "dp");
    SimEngine *e = sim_engine_new();
    SimNet *net = sim_net_new(e);
    coll_net_build(d->c->dp_group, net);
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
        sim_time_t span = simulate(d, keep, &work, overrun);
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

static void set_warning(Ctx *c, const char *method, char *why)
{
    g_strlcpy(c->dp_method, method, sizeof c->dp_method);
    c->dp_warning = why;
}

/* How much slower one data-parallel collective gets when the DP groups of
 * every (pipeline stage, tensor rank) run theirs at the same time: the flow
 * simulation of all of them together against one alone, on one bucket. */
void dp_contention(Ctx *c)
{
    c->dp_factor = 1;
    if (!c->dp_group || !step_scenario_flow_contention(c->sc))
        return;
    const StepPlan *p = &c->p;
    if (c->zero_ranks != p->dp) { /* hybrid sharding: its groups are not the dp groups simulated here */
        snprintf(c->dp_method, sizeof c->dp_method, "not simulated (hybrid sharding)");
        return;
    }
    Dp d = {.c = c, .t0 = g_get_monotonic_time(), .op = p->zero_stage >= 1 ? COLL_REDUCESCATTER : COLL_ALLREDUCE};
    d.bytes = p->bucket_bytes * p->compression;
    if (p->zero_stage == 3)
        d.bytes = c->layer_params * c->param_bytes;
    if (!coll_cost(c->dp_group, d.op, COLL_ALGO_AUTO, COLL_PROTO_AUTO, d.bytes, &d.cc))
        return;
    d.ngroups = p->pp * p->tp;
    if (d.ngroups == 1)
        return; /* one group has nobody to contend with */
    int64_t per = coll_flow_count(c->dp_group, d.op, d.cc.algo, d.cc.proto, d.bytes);
    if (per < 1)
        per = 1;
    /* Groups beyond what the search for components may build are left out. */
    int all = d.ngroups;
    if ((int64_t)d.ngroups > COLL_MAX_FLOWS / per)
        d.ngroups = (int)(COLL_MAX_FLOWS / per > 1 ? COLL_MAX_FLOWS / per : 1);
    d.groups = g_new0(CollGroup *, d.ngroups);
    d.comp = g_new(int, d.ngroups);
    int *ids = g_new(int, p->dp);
    bool ok = true;
    for (int k = 0; k < d.ngroups && ok; k++) {
        int s = k / p->tp, t = k % p->tp;
        for (int r = 0; r < p->dp; r++)
            ids[r] = step_rank_of(c, s, r, t);
        ok = (d.groups[k] = coll_group_new(c->topo, ids, p->dp, NULL, NULL)) != NULL;
    }
    g_free(ids);
    uint64_t work = DP_WORK_BUDGET;
    bool overrun = false;
    bool *keep = g_new0(bool, d.ngroups);
    keep[0] = true;
    sim_time_t alone = ok ? simulate(&d, keep, &work, &overrun) : SIM_TIME_NEVER;
    g_free(keep);
    if (ok && overrun) {
        set_warning(c, "not simulated",
                    g_strdup_printf("dp_contention: one data-parallel group's %s (%lld flows) alone takes more than "
                                    "the contention run's work budget (%llu); DP collectives are not scaled for "
                                    "contention",
                                    coll_algo_name(d.cc.algo), (long long)per, (unsigned long long)DP_WORK_BUDGET));
    } else if (ok && alone > 0) {
        components(&d, topo_num_links(c->topo));
        int sim_groups, covered, ncomp;
        sim_time_t span = run_components(&d, work, &sim_groups, &covered, &ncomp, &overrun);
        if (sim_groups == 0) {
            set_warning(c, "not simulated",
                        g_strdup_printf("dp_contention: the data-parallel groups sharing links with the first one "
                                        "take more than the contention run's work budget (%llu); DP collectives "
                                        "are not scaled for contention",
                                        (unsigned long long)DP_WORK_BUDGET));
        } else {
            c->dp_flow_alone_s = sim_time_to_s(alone);
            c->dp_flow_concurrent_s = sim_time_to_s(span);
            c->dp_flow_groups = covered == all ? all : sim_groups;
            c->dp_factor = (double)span / (double)alone > 1 ? c->dp_flow_concurrent_s / c->dp_flow_alone_s : 1;
            if (covered == all)
                g_strlcpy(c->dp_method, "exact", sizeof c->dp_method);
            else
                set_warning(c, "sampled",
                            g_strdup_printf("dp_contention: sampled: %d of %d data-parallel groups simulated, "
                                            "standing for %d (%d components of link sharing, the rest past the "
                                            "work budget %llu); the factor leaves out the contention of the others",
                                            sim_groups, all, covered, ncomp, (unsigned long long)DP_WORK_BUDGET));
        }
    }
    for (int k = 0; k < d.ngroups; k++)
        coll_group_free(d.groups[k]);
    g_free(d.groups);
    g_free(d.comp);
    if (d.shown)
        fputs("\r\033[K", stderr);
}
