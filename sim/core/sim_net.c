/* The flow-level network: links, flows on paths, each flow's drain and
 * delivery events, and the settle once per timestamp that brings the solver's
 * rates into force (sim_net.h; the solver is sim_maxmin.c). */
#include "sim_net_internal.h"

#include <math.h>
#include <string.h>

static void settle(SimEngine *e, void *ctx);

SimNet *sim_net_new(SimEngine *e)
{
    SimNet *n = g_new0(SimNet, 1);
    n->e = e;
    n->work_limit = SIM_NET_DEFAULT_WORK_LIMIT;
    n->removed_level = INFINITY;
    n->dirty = g_array_new(FALSE, FALSE, sizeof(int));
    n->chunks = g_ptr_array_new_with_free_func(g_free);
    n->spare = g_ptr_array_new();
    sim_engine_on_settle(e, settle, n);
    return n;
}

/* Flows come from chunks of the net's own and go back to a list per path
 * length: a run of a million flows makes no million mallocs and frees. */
#define FLOW_CHUNK (256 * 1024)

static size_t flow_size(int nlinks)
{
    size_t s = sizeof(Flow) + 2 * (size_t)nlinks * sizeof(int);
    return (s + 7) & ~(size_t)7; /* its doubles and pointers aligned */
}

static Flow *flow_alloc(SimNet *n, int nlinks)
{
    if ((guint)nlinks < n->spare->len && n->spare->pdata[nlinks]) {
        Flow *f = n->spare->pdata[nlinks];
        n->spare->pdata[nlinks] = f->user;
        return f;
    }
    size_t size = flow_size(nlinks);
    if (size > (size_t)(n->bump_end - n->bump)) {
        size_t c = size > FLOW_CHUNK ? size : FLOW_CHUNK;
        n->bump = g_malloc(c);
        n->bump_end = n->bump + c;
        g_ptr_array_add(n->chunks, n->bump);
    }
    Flow *f = (Flow *)(void *)n->bump;
    n->bump += size;
    return f;
}

static void flow_release(SimNet *n, Flow *f)
{
    int k = f->nlinks;
    if ((guint)k >= n->spare->len)
        g_ptr_array_set_size(n->spare, k + 1);
    f->user = n->spare->pdata[k];
    n->spare->pdata[k] = f;
}

void sim_net_free(SimNet *n)
{
    if (!n)
        return;
    g_ptr_array_free(n->chunks, TRUE);
    g_ptr_array_free(n->spare, TRUE);
    for (int i = 0; i < n->nlinks; i++) {
        g_free(n->links[i].flows);
        g_free(n->links[i].bmax);
        g_free(n->links[i].bcnt);
        g_free(n->links[i].rate);
    }
    g_free(n->links);
    g_free(n->fill);
    g_free(n->mark);
    g_array_free(n->dirty, TRUE);
    g_free(n->comp.v);
    g_free(n->started.v);
    g_free(n->comp_links.v);
    g_free(n->heap);
    g_free(n->sorted);
    g_free(n->sort_tmp);
    g_free(n);
}

int sim_net_add_link(SimNet *n, double bandwidth_Bps, sim_time_t latency)
{
    g_return_val_if_fail(bandwidth_Bps > 0 && isfinite(bandwidth_Bps), -1);
    if (n->nlinks == n->cap) {
        n->cap = n->cap ? 2 * n->cap : 64;
        n->links = g_renew(Link, n->links, n->cap);
        n->fill = g_renew(LinkFill, n->fill, n->cap);
        n->mark = g_renew(uint32_t, n->mark, n->cap);
    }
    n->links[n->nlinks] = (Link){.bw = bandwidth_Bps, .latency = latency, .hole = -1, .dom = LINK_FREE};
    n->fill[n->nlinks] = (LinkFill){0};
    n->mark[n->nlinks] = 0;
    return n->nlinks++;
}

int sim_net_num_links(const SimNet *n) { return n->nlinks; }
size_t sim_net_active_flows(const SimNet *n) { return n->active; }
double sim_net_link_bytes(const SimNet *n, int l) { return n->links[l].bytes_done; }
uint64_t sim_net_recomputes(const SimNet *n) { return n->recomputes; }
uint64_t sim_net_rate_updates(const SimNet *n) { return n->rate_updates; }
void sim_net_set_work_limit(SimNet *n, uint64_t limit) { n->work_limit = limit; }
bool sim_net_overrun(const SimNet *n) { return n->overrun; }
uint64_t sim_net_work(const SimNet *n) { return n->work; }

static void mark_dirty(SimNet *n, int l)
{
    if (!n->links[l].dirty) {
        n->links[l].dirty = true;
        g_array_append_val(n->dirty, l);
    }
}

static void on_deliver(SimEngine *e, SimAction *a)
{
    Flow *f = (Flow *)(void *)a;
    SimFlowDone done = f->done;
    void *user = f->user;
    flow_release(f->net, f);
    if (done)
        done(e, user);
}

/* The flow has left the network; its last byte arrives one path latency
 * later, and `done` runs after the flow's delay. */
static void deliver_later(SimNet *n, Flow *f)
{
    sim_time_t lat = f->delay;
    for (int i = 0; i < f->nlinks; i++)
        lat = sim_time_add(lat, n->links[f->links[i]].latency);
    f->ev.fire = on_deliver;
    sim_engine_schedule(n->e, sim_time_add(sim_engine_now(n->e), lat), &f->ev);
}

static void on_drain(SimEngine *e, SimAction *a)
{
    Flow *f = (Flow *)(void *)a;
    SimNet *n = f->net;
    f->remaining = 0;
    f->drain_ev = 0;
    int *pos = f->links + f->nlinks;
    for (int i = 0; i < f->nact; i++) {
        const Link *l = &n->links[f->links[i]];
        PREFETCH(&l->flows[pos[i]]);
        PREFETCH(&l->rate[pos[i]]);
    }
    for (int i = 0; i < f->nact; i++) {
        int lid = f->links[i];
        Link *l = &n->links[lid];
        l->bytes_done += f->bytes;
        net_link_remove(l, pos[i]);
        if (l->nflows == 0 && !l->broken)
            l->dom = LINK_FREE;
        mark_dirty(n, lid);
    }
    for (int i = f->nact; i < f->nlinks; i++) {
        Link *l = &n->links[f->links[i]];
        l->bytes_done += f->bytes;
        if (--l->nshadow == 0)
            l->dom = LINK_FREE;
    }
    if (f->rate < n->removed_level)
        n->removed_level = f->rate;
    n->active--;
    deliver_later(n, f);
    (void)e;
}

void sim_net_flow(SimNet *n, double bytes, const int *links, int nlinks, SimFlowDone done, void *user)
{
    sim_net_flow_delayed(n, bytes, links, nlinks, 0, done, user);
}

/* ---- shadowed links ----
 *
 * A link is shadowed by another, of no more bandwidth, that every flow on it
 * also crosses: its constraint (the sum of its flows' rates within its
 * bandwidth) is implied by the other's, so leaving it out of the max-min
 * problem changes no rate, and its flows need no entries there.  A fat
 * tree's PCIe link under its NIC, or a crossbar's downlink in a ring (one
 * flow each), are shadowed for good; a link that a flow crosses without its
 * shadow becomes explicit, and its flows get their entries then.  Chains
 * point to strictly smaller (bandwidth, id), so they end at an explicit link,
 * and its entries hold every flow of the chain. */

static bool path_has(const int *links, int nlinks, int l)
{
    for (int i = 0; i < nlinks; i++)
        if (links[i] == l)
            return true;
    return false;
}

static bool lower(const SimNet *n, int b, int a)
{
    return n->links[b].bw < n->links[a].bw || (n->links[b].bw == n->links[a].bw && b < a);
}

/* Link `a` (shadowed) becomes explicit: each of its flows gets an entry. */
static void make_explicit(SimNet *n, int a)
{
    int e = n->links[a].dom;
    while (n->links[e].dom != LINK_EXPLICIT)
        e = n->links[e].dom;
    Link *la = &n->links[a];
    la->dom = LINK_EXPLICIT;
    la->broken = true;
    const Link *le = &n->links[e];
    for (int k = 0; k < le->len && la->nshadow > 0; k++) {
        Flow *f = le->flows[k].flow;
        if (!f)
            continue;
        for (int i = f->nact; i < f->nlinks; i++) {
            if (f->links[i] != a)
                continue;
            int *pos = f->links + f->nlinks, s = f->nact;
            f->links[i] = f->links[s]; /* both shadowed: no entry moves */
            f->links[s] = a;
            pos[s] = f->fresh ? net_link_append(la, f, s) : net_link_append_rate(la, f, s, f->rate);
            n->started_hops += f->fresh;
            f->nact++;
            la->nshadow--;
            break;
        }
        n->work += (uint64_t)(f->nlinks - f->nact) + 1;
    }
    mark_dirty(n, a);
}

/* Whether the new flow on `links` is shadowed on links[i] (and the link's
 * state for it: a free link takes the next or previous link of the path as
 * its shadow where that has no more bandwidth). */
static bool shadowed_on(SimNet *n, const int *links, int nlinks, int i)
{
    int a = links[i];
    Link *l = &n->links[a];
    if (n->no_shadow || l->dom == LINK_EXPLICIT) {
        l->dom = LINK_EXPLICIT;
        return false;
    }
    if (l->dom == LINK_FREE) {
        int b = i + 1 < nlinks && lower(n, links[i + 1], a) ? links[i + 1]
                : i > 0 && lower(n, links[i - 1], a)      ? links[i - 1]
                                                           : LINK_EXPLICIT;
        l->dom = b;
        return b != LINK_EXPLICIT;
    }
    if (path_has(links, nlinks, l->dom))
        return true;
    make_explicit(n, a);
    return false;
}

void sim_net_flow_delayed(SimNet *n, double bytes, const int *links, int nlinks, sim_time_t delay, SimFlowDone done,
                          void *user)
{
    if (nlinks < 0)
        nlinks = 0;
    for (int i = 0; i < nlinks; i++)
        if (links[i] < 0 || links[i] >= n->nlinks)
            g_error("sim_net_flow: link %d does not exist", links[i]);
    if (n->overrun) /* stopped: the flow never moves */
        return;
    Flow *f = flow_alloc(n, nlinks);
    *f = (Flow){.ev = {on_drain}, .net = n, .done = done, .user = user, .delay = delay > 0 ? delay : 0};
    f->bytes = f->remaining = bytes > 0 ? bytes : 0;
    f->last = sim_engine_now(n->e);
    /* A started flow is taken into the next settle's filling: marked for
     * it now, while its memory is at hand, not in a pass over all of them
     * then (that settle's search is the next epoch). */
    f->fresh = true;
    f->frozen = false;
    f->epoch = n->epoch + 1;
    f->nlinks = nlinks;
    if (nlinks == 0 || f->bytes == 0) {
        memcpy(f->links, links, (size_t)nlinks * sizeof(int));
        deliver_later(n, f);
        return;
    }
    /* explicit links first, shadowed ones after */
    int na = 0, ns = nlinks;
    for (int i = 0; i < nlinks; i++)
        f->links[shadowed_on(n, links, nlinks, i) ? --ns : na++] = links[i];
    f->nact = na;
    int *pos = f->links + nlinks;
    for (int i = 0; i < na; i++) {
        pos[i] = net_link_append(&n->links[f->links[i]], f, i);
        mark_dirty(n, f->links[i]);
    }
    for (int i = na; i < nlinks; i++)
        n->links[f->links[i]].nshadow++;
    n->started_hops += (uint64_t)na;
    flow_list_add(&n->started, f);
    n->active++;
}

/* Past its work limit the network stops: no flow drains any more, so the
 * run ends with the flows' tasks unfinished and the caller can say so. */
static void stop(SimNet *n)
{
    n->overrun = true;
    for (int l = 0; l < n->nlinks; l++) /* every flow with a drain event is on a link */
        for (int k = 0; k < n->links[l].len; k++) {
            Flow *f = n->links[l].flows[k].flow;
            if (f && f->drain_ev) {
                sim_engine_cancel(n->e, f->drain_ev);
                f->drain_ev = 0;
            }
        }
}

static void settle(SimEngine *e, void *ctx)
{
    SimNet *n = ctx;
    if (n->dirty->len == 0)
        return;
    if (n->overrun) {
        for (guint i = 0; i < n->dirty->len; i++)
            n->links[g_array_index(n->dirty, int, i)].dirty = false;
        g_array_set_size(n->dirty, 0);
        n->started.len = 0;
        n->started_hops = 0;
        return;
    }
    n->recomputes++;
    double theta = net_change_level(n);
    n->removed_level = INFINITY;
    net_collect_part(n, theta);
    if (n->work > n->work_limit) {
        stop(n);
        return;
    }
    net_fill(n, theta);
    net_apply_rates(n, sim_engine_now(e));
    if (n->verify)
        net_verify_rates(n);
}

void sim_net_set_full(SimNet *n, bool full) { n->full = full; }
void sim_net_set_shadow(SimNet *n, bool on) { n->no_shadow = !on; }
void sim_net_set_verify(SimNet *n, bool on) { n->verify = on; }
double sim_net_verify_diff(const SimNet *n) { return n->verify_diff; }
