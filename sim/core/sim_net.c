/* The flow-level network: links, flows on paths, max-min fair rates by
 * progressive filling over the component a change touched, and each flow's
 * drain event (sim_net.h). */
#include "sim_net.h"

#include <glib.h>
#include <math.h>

typedef struct Flow Flow;

typedef struct {
    double bw;
    sim_time_t latency;
    double bytes_done; /* bytes of drained flows */
    Flow **flows;      /* active flows crossing this link */
    int nflows, cap;
    bool dirty;
    /* progressive-filling scratch */
    double rem;
    int unfrozen;
    uint32_t version; /* of the link's live heap entry */
    double hkey;      /* that entry's share: never above rem / unfrozen */
    bool stale;       /* hkey < rem / unfrozen: refresh when it surfaces */
    uint32_t epoch; /* component-search mark */
} Link;

typedef struct {
    SimAction act;
    Flow *flow;
} FlowEvent;

struct Flow {
    FlowEvent drain, deliver;
    SimNet *net;
    Flow *prev, *next; /* every allocated flow, so the net can free leftovers */
    double bytes, remaining, rate;
    sim_time_t last; /* when `remaining` was last brought up to date */
    SimEventId drain_ev;
    SimFlowDone done;
    void *user;
    uint32_t epoch;
    bool frozen;
    int nlinks;
    int *links; /* nlinks link ids, then nlinks positions in each link's list */
};

typedef struct {
    double share;
    int link;
    uint32_t version;
} HeapItem;

struct SimNet {
    SimEngine *e;
    Link *links;
    int nlinks, cap;
    GArray *dirty;      /* int link ids touched since the last settle */
    GPtrArray *comp;    /* scratch: flows of the component being recomputed */
    GArray *comp_links; /* scratch: its links */
    HeapItem *heap;     /* scratch: min-heap on (share, link) */
    size_t hn, hcap;
    Flow *flows;        /* list head of allocated flows */
    uint32_t epoch;
    size_t active;
    uint64_t recomputes, rate_updates;
    uint64_t work, work_limit; /* links and flow hops visited by rate recomputations, 16 a reschedule */
    bool overrun;              /* past work_limit: the network has stopped */
};

static void settle(SimEngine *e, void *ctx);

SimNet *sim_net_new(SimEngine *e)
{
    SimNet *n = g_new0(SimNet, 1);
    n->e = e;
    n->work_limit = SIM_NET_DEFAULT_WORK_LIMIT;
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
    g_free(f->links);
    g_free(f);
}

void sim_net_free(SimNet *n)
{
    if (!n)
        return;
    while (n->flows)
        flow_unlink_free(n, n->flows);
    for (int i = 0; i < n->nlinks; i++)
        g_free(n->links[i].flows);
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
        int lid = f->links[i];
        Link *l = &n->links[lid];
        l->bytes_done += f->bytes;
        /* swap-remove, then fix the moved flow's recorded position */
        Flow *last = l->flows[--l->nflows];
        l->flows[pos[i]] = last;
        if (last != f)
            for (int j = 0; j < last->nlinks; j++)
                if (last->links[j] == lid) {
                    last->links[last->nlinks + j] = pos[i];
                    break;
                }
        mark_dirty(n, lid);
    }
    n->active--;
    deliver_later(n, f);
    (void)e;
}

void sim_net_flow(SimNet *n, double bytes, const int *links, int nlinks, SimFlowDone done, void *user)
{
    Flow *f = g_new0(Flow, 1);
    f->net = n;
    f->next = n->flows;
    if (n->flows)
        n->flows->prev = f;
    n->flows = f;
    f->bytes = f->remaining = bytes > 0 ? bytes : 0;
    f->done = done;
    f->user = user;
    f->last = sim_engine_now(n->e);
    f->drain.act.fire = on_drain;
    f->drain.flow = f;
    f->links = g_new(int, 2 * (size_t)(nlinks > 0 ? nlinks : 1));
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
        Link *l = &n->links[links[i]];
        if (l->nflows == l->cap) {
            l->cap = l->cap ? 2 * l->cap : 4;
            l->flows = g_renew(Flow *, l->flows, l->cap);
        }
        pos[i] = l->nflows;
        l->flows[l->nflows++] = f;
        mark_dirty(n, links[i]);
    }
    n->active++;
}

/* ---- max-min fair rates by progressive filling, per touched component ---- */

static inline bool item_less(const HeapItem *a, const HeapItem *b)
{
    return a->share < b->share || (a->share == b->share && a->link < b->link);
}

static void sift_down(HeapItem *a, size_t n, size_t i)
{
    HeapItem e = a[i];
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && item_less(&a[c + 1], &a[c]))
            c++;
        if (!item_less(&a[c], &e))
            break;
        a[i] = a[c];
        i = c;
    }
    a[i] = e;
}

static void heap_push(SimNet *n, HeapItem it)
{
    if (n->hn == n->hcap) {
        n->hcap = n->hcap ? 2 * n->hcap : 256;
        n->heap = g_renew(HeapItem, n->heap, n->hcap);
    }
    HeapItem *a = n->heap;
    size_t i = n->hn++;
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!item_less(&it, &a[p]))
            break;
        a[i] = a[p];
        i = p;
    }
    a[i] = it;
}

static HeapItem heap_pop(SimNet *n)
{
    HeapItem top = n->heap[0];
    n->heap[0] = n->heap[--n->hn];
    if (n->hn > 0)
        sift_down(n->heap, n->hn, 0);
    return top;
}

/* A link's share changed to rem / unfrozen.  Shares only grow as flows freeze
 * (a frozen flow took the smallest share), so a grown share leaves the old,
 * lower entry in place and is refreshed when that entry surfaces: the entry
 * popped with a current key is then still the exact minimum, and links cost a
 * heap operation only when they reach the top, not on every flow that froze.
 * A share that rounding made smaller is pushed at once. */
static void share_changed(SimNet *n, Link *o, int lid)
{
    double share = o->rem / o->unfrozen;
    if (share < o->hkey) {
        o->version++;
        o->hkey = share;
        heap_push(n, (HeapItem){share, lid, o->version});
    }
    o->stale = share > o->hkey;
}

/* Collects, from the dirty links, every flow and link connected to them. */
static void collect_component(SimNet *n)
{
    uint32_t ep = ++n->epoch;
    g_ptr_array_set_size(n->comp, 0);
    g_array_set_size(n->comp_links, 0);
    for (guint i = 0; i < n->dirty->len; i++) {
        int l = g_array_index(n->dirty, int, i);
        n->links[l].dirty = false;
        if (n->links[l].epoch != ep) {
            n->links[l].epoch = ep;
            g_array_append_val(n->comp_links, l);
        }
    }
    g_array_set_size(n->dirty, 0);
    for (guint li = 0; li < n->comp_links->len; li++) {
        Link *l = &n->links[g_array_index(n->comp_links, int, li)];
        for (int k = 0; k < l->nflows; k++) {
            Flow *f = l->flows[k];
            if (f->epoch == ep)
                continue;
            f->epoch = ep;
            g_ptr_array_add(n->comp, f);
            for (int j = 0; j < f->nlinks; j++) {
                int lj = f->links[j];
                if (n->links[lj].epoch != ep) {
                    n->links[lj].epoch = ep;
                    g_array_append_val(n->comp_links, lj);
                }
            }
        }
    }
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
    collect_component(n);
    sim_time_t now = sim_engine_now(e);
    uint64_t work = n->comp_links->len;
    for (guint i = 0; i < n->comp->len; i++)
        work += (uint64_t)((Flow *)n->comp->pdata[i])->nlinks;
    n->work += work;
    if (n->work > n->work_limit) {
        stop(n);
        return;
    }

    for (guint i = 0; i < n->comp->len; i++) {
        Flow *f = n->comp->pdata[i];
        f->remaining -= f->rate * sim_time_to_s(now - f->last);
        if (f->remaining < 0)
            f->remaining = 0;
        f->last = now;
        f->frozen = false;
    }
    n->hn = 0;
    if (n->hcap < n->comp_links->len) {
        n->hcap = n->comp_links->len;
        n->heap = g_renew(HeapItem, n->heap, n->hcap);
    }
    for (guint i = 0; i < n->comp_links->len; i++) {
        int lid = g_array_index(n->comp_links, int, i);
        Link *l = &n->links[lid];
        l->rem = l->bw;
        l->unfrozen = l->nflows;
        l->version++;
        l->stale = false;
        if (l->nflows > 0) {
            l->hkey = l->rem / l->nflows;
            n->heap[n->hn++] = (HeapItem){l->hkey, lid, l->version};
        }
    }
    for (size_t i = n->hn / 2; i-- > 0;) /* keys are distinct: any heap pops the same order */
        sift_down(n->heap, n->hn, i);
    /* The most constrained link fixes the rate of its flows; repeat. */
    while (n->hn > 0) {
        HeapItem it = heap_pop(n);
        Link *l = &n->links[it.link];
        if (it.version != l->version || l->unfrozen == 0)
            continue;
        if (l->stale) { /* its share grew since: back in at the current one */
            l->version++;
            l->hkey = l->rem / l->unfrozen;
            l->stale = false;
            heap_push(n, (HeapItem){l->hkey, it.link, l->version});
            continue;
        }
        double share = it.share;
        for (int k = 0; k < l->nflows; k++) {
            Flow *f = l->flows[k];
            if (f->frozen)
                continue;
            f->frozen = true;
            double old = f->rate;
            f->rate = share;
            for (int j = 0; j < f->nlinks; j++) {
                Link *o = &n->links[f->links[j]];
                o->rem -= share;
                if (o->rem < 0)
                    o->rem = 0;
                o->unfrozen--;
                if (o != l && o->unfrozen > 0)
                    share_changed(n, o, f->links[j]);
            }
            if (share == old && f->drain_ev)
                continue; /* same rate: its drain event stands */
            n->rate_updates++;
            n->work += 16; /* a reschedule: an event-queue cancel and push */
            /* Never let a rounding-starved flow stall forever. */
            double rate = share > 1e-3 ? share : 1e-3;
            double ps = ceil(f->remaining / rate * (double)SIM_TIME_PS_PER_S);
            sim_time_t at = ps >= 1.8e19 ? SIM_TIME_NEVER : sim_time_add(now, (sim_time_t)ps);
            if (f->drain_ev)
                sim_engine_cancel(e, f->drain_ev);
            f->drain_ev = sim_engine_schedule(e, at, &f->drain.act);
        }
        l->unfrozen = 0;
    }
}
