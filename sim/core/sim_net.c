/* The flow-level network: links, flows on paths, each flow's drain and
 * delivery events, and the settle once per timestamp that brings the solver's
 * rates into force (sim_net.h; the solver is sim_maxmin.c). */
#include "sim_net_internal.h"

#include <math.h>

static void settle(SimEngine *e, void *ctx);

SimNet *sim_net_new(SimEngine *e)
{
    SimNet *n = g_new0(SimNet, 1);
    n->e = e;
    n->work_limit = SIM_NET_DEFAULT_WORK_LIMIT;
    n->removed_level = INFINITY;
    n->dirty = g_array_new(FALSE, FALSE, sizeof(int));
    n->comp = g_ptr_array_new();
    n->comp_links = g_array_new(FALSE, FALSE, sizeof(int));
    sim_engine_on_settle(e, settle, n);
    return n;
}

static void flow_unlink_free(SimNet *n, Flow *f)
{
    if (f->prev)
        f->prev->next = f->next;
    else
        n->flows = f->next;
    if (f->next)
        f->next->prev = f->prev;
    g_free(f);
}

void sim_net_free(SimNet *n)
{
    if (!n)
        return;
    while (n->flows)
        flow_unlink_free(n, n->flows);
    for (int i = 0; i < n->nlinks; i++) {
        g_free(n->links[i].flows);
        g_free(n->links[i].bmax);
        g_free(n->links[i].bcnt);
        g_free(n->links[i].rate);
    }
    g_free(n->links);
    g_array_free(n->dirty, TRUE);
    g_ptr_array_free(n->comp, TRUE);
    g_array_free(n->comp_links, TRUE);
    g_free(n->heap);
    g_free(n);
}

int sim_net_add_link(SimNet *n, double bandwidth_Bps, sim_time_t latency)
{
    g_return_val_if_fail(bandwidth_Bps > 0 && isfinite(bandwidth_Bps), -1);
    if (n->nlinks == n->cap) {
        n->cap = n->cap ? 2 * n->cap : 64;
        n->links = g_renew(Link, n->links, n->cap);
    }
    n->links[n->nlinks] = (Link){.bw = bandwidth_Bps, .latency = latency};
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
    Flow *f = ((FlowEvent *)a)->flow;
    SimFlowDone done = f->done;
    void *user = f->user;
    flow_unlink_free(f->net, f);
    if (done)
        done(e, user);
}

/* The flow has left the network; its last byte arrives one path latency later. */
static void deliver_later(SimNet *n, Flow *f)
{
    sim_time_t lat = 0;
    for (int i = 0; i < f->nlinks; i++)
        lat = sim_time_add(lat, n->links[f->links[i]].latency);
    f->deliver.act.fire = on_deliver;
    f->deliver.flow = f;
    sim_engine_schedule(n->e, sim_time_add(sim_engine_now(n->e), lat), &f->deliver.act);
}

static void on_drain(SimEngine *e, SimAction *a)
{
    Flow *f = ((FlowEvent *)a)->flow;
    SimNet *n = f->net;
    f->remaining = 0;
    f->drain_ev = 0;
    int *pos = f->links + f->nlinks;
    for (int i = 0; i < f->nlinks; i++) {
        const Link *l = &n->links[f->links[i]];
        PREFETCH(&l->flows[pos[i]]);
        PREFETCH(&l->flows[l->nflows - 1]);
        PREFETCH(&l->rate[pos[i]]);
        PREFETCH(&l->rate[l->nflows - 1]);
    }
    for (int i = 0; i < f->nlinks; i++) { /* the flows that will move into the freed entries */
        const Link *l = &n->links[f->links[i]];
        PREFETCH(l->flows[l->nflows - 1].flow);
    }
    for (int i = 0; i < f->nlinks; i++) {
        int lid = f->links[i];
        Link *l = &n->links[lid];
        l->bytes_done += f->bytes;
        net_link_remove(l, pos[i]);
        mark_dirty(n, lid);
    }
    if (f->rate < n->removed_level)
        n->removed_level = f->rate;
    n->active--;
    deliver_later(n, f);
    (void)e;
}

void sim_net_flow(SimNet *n, double bytes, const int *links, int nlinks, SimFlowDone done, void *user)
{
    size_t hops = nlinks > 0 ? (size_t)nlinks : 0;
    Flow *f = g_malloc0(sizeof(Flow) + 2 * hops * sizeof(int));
    f->net = n;
    f->next = n->flows;
    if (n->flows)
        n->flows->prev = f;
    n->flows = f;
    f->bytes = f->remaining = bytes > 0 ? bytes : 0;
    f->done = done;
    f->user = user;
    f->last = sim_engine_now(n->e);
    f->frozen = f->fresh = true;
    f->drain.act.fire = on_drain;
    f->drain.flow = f;
    if (n->overrun) /* stopped: the flow never moves */
        return;
    for (int i = 0; i < nlinks; i++) {
        if (links[i] < 0 || links[i] >= n->nlinks)
            g_error("sim_net_flow: link %d does not exist", links[i]);
        f->links[i] = links[i];
    }
    f->nlinks = nlinks;
    if (nlinks == 0 || f->bytes == 0) {
        deliver_later(n, f);
        return;
    }
    int *pos = f->links + nlinks;
    for (int i = 0; i < nlinks; i++) {
        pos[i] = net_link_append(&n->links[links[i]], f, i);
        mark_dirty(n, links[i]);
    }
    n->active++;
}

/* Past its work limit the network stops: no flow drains any more, so the
 * run ends with the flows' tasks unfinished and the caller can say so. */
static void stop(SimNet *n)
{
    n->overrun = true;
    for (Flow *f = n->flows; f; f = f->next)
        if (f->drain_ev) {
            sim_engine_cancel(n->e, f->drain_ev);
            f->drain_ev = 0;
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
void sim_net_set_verify(SimNet *n, bool on) { n->verify = on; }
double sim_net_verify_diff(const SimNet *n) { return n->verify_diff; }
