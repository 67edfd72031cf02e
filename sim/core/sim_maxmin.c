/* The flow network's solver: max-min fair rates by progressive filling,
 * updated incrementally (a start or finish refills only the flows at or above
 * the lowest level it alters, reached through such flows), and the links'
 * entries it scans (sim_net_internal.h). */
#include "sim_net_internal.h"

#include <math.h>
#include <string.h>

/* ---- a link's entries: flow, rate, slot, and each block's largest rate ---- */

static void link_set_rate(Link *l, int k, double r)
{
    double old = l->rate[k];
    int b = k / LINK_BLOCK;
    l->rate[k] = r;
    if (l->bcnt[b] == 0)
        return;
    if (r > l->bmax[b]) {
        l->bmax[b] = r;
        l->bcnt[b] = 1;
    } else if (r == l->bmax[b]) {
        l->bcnt[b] += old != r;
    } else if (old == l->bmax[b]) {
        l->bcnt[b]--; /* at 0 the largest is unknown: rescan when asked */
    }
}

/* Adds flow `f`, of which this is link `slot` of the path, with no rate
 * yet: into the most recent hole, else at the end. */
int net_link_append(Link *l, Flow *f, int slot)
{
    l->fresh++;
    return net_link_append_rate(l, f, slot, INFINITY);
}

/* The same for a flow that has its rate (a shadowed link made explicit). */
int net_link_append_rate(Link *l, Flow *f, int slot, double rate)
{
    int k = l->hole;
    if (k >= 0) {
        l->hole = l->flows[k].slot;
    } else {
        if (l->len == l->cap) {
            l->cap = l->cap ? 2 * l->cap : 4;
            l->flows = g_renew(Entry, l->flows, l->cap);
            l->rate = g_renew(double, l->rate, l->cap);
            int nb = (l->cap + LINK_BLOCK - 1) / LINK_BLOCK;
            l->bmax = g_renew(double, l->bmax, nb);
            l->bcnt = g_renew(int, l->bcnt, nb);
        }
        k = l->len++;
        if (k % LINK_BLOCK == 0) { /* a new block: its one entry's rate, -inf, is the largest */
            l->bmax[k / LINK_BLOCK] = -INFINITY;
            l->bcnt[k / LINK_BLOCK] = 1;
        }
        l->rate[k] = -INFINITY;
    }
    l->flows[k] = (Entry){f, slot};
    link_set_rate(l, k, rate);
    l->nflows++;
    return k;
}

/* Moves the live entries to the front, in order, and fixes their flows'
 * recorded positions. */
static void link_compact(Link *l)
{
    int k = 0;
    for (int i = 0; i < l->len; i++) {
        Entry m = l->flows[i];
        if (!m.flow)
            continue;
        if (i != k) {
            l->flows[k] = m;
            l->rate[k] = l->rate[i];
            m.flow->links[m.flow->nlinks + m.slot] = k;
        }
        k++;
    }
    l->len = k;
    l->hole = -1;
    for (int b = 0; b < (k + LINK_BLOCK - 1) / LINK_BLOCK; b++)
        l->bcnt[b] = 0; /* unknown: rescanned when asked */
}

/* Leaves a hole at entry p (rate -inf, no flow, the next hole in `slot`):
 * removing touches only that entry, not the last one and its flow; the link
 * is compacted when holes are three quarters of it. */
void net_link_remove(Link *l, int p)
{
    link_set_rate(l, p, -INFINITY);
    l->flows[p] = (Entry){NULL, l->hole};
    l->hole = p;
    if (--l->nflows == 0) {
        l->len = 0;
        l->hole = -1;
    } else if (l->len > 64 && 4 * l->nflows < l->len) {
        link_compact(l);
    }
}

/* Whether a flow on the link is at or above `level`. */
static bool link_reaches(SimNet *n, Link *l, double level)
{
    int nb = (l->len + LINK_BLOCK - 1) / LINK_BLOCK;
    for (int b = 0; b < nb; b++) {
        n->work++;
        if (l->bcnt[b] == 0) {
            int end = (b + 1) * LINK_BLOCK < l->len ? (b + 1) * LINK_BLOCK : l->len;
            double m = -INFINITY;
            int c = 0;
            for (int k = b * LINK_BLOCK; k < end; k++) {
                double r = l->rate[k];
                c = r > m ? 1 : c + (r == m);
                m = r > m ? r : m;
            }
            n->work += (uint64_t)(end - b * LINK_BLOCK);
            l->bmax[b] = m;
            l->bcnt[b] = c;
        }
        if (l->bmax[b] >= level)
            return true;
    }
    return false;
}

/* ---- max-min fair rates by progressive filling, per touched component ---- */

/* The heap's order, (share, link), as one integer: shares are never
 * negative (rem is clamped at 0), and a non-negative double's bits order as
 * its value.  A 4-ary heap: fewer levels, and picking the least of four
 * children compiles to conditional moves, where the shares' many ties made
 * a binary heap's comparisons mispredict. */
__extension__ typedef unsigned __int128 HeapKey;

static inline HeapKey item_key(const HeapItem *a)
{
    uint64_t bits;
    memcpy(&bits, &a->share, sizeof bits);
    return (HeapKey)bits << 32 | (uint32_t)a->link;
}

#define HEAP_ARITY 4

static void sift_down(HeapItem *a, size_t n, size_t i)
{
    HeapItem e = a[i];
    HeapKey ke = item_key(&e);
    for (;;) {
        size_t c = HEAP_ARITY * i + 1;
        if (c >= n)
            break;
        size_t m = c, end = c + HEAP_ARITY < n ? c + HEAP_ARITY : n;
        HeapKey km = item_key(&a[c]);
        for (size_t j = c + 1; j < end; j++) {
            HeapKey kj = item_key(&a[j]);
            bool less = kj < km;
            km = less ? kj : km;
            m = less ? j : m;
        }
        if (km >= ke)
            break;
        a[i] = a[m];
        i = m;
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
    HeapKey k = item_key(&it);
    while (i > 0) {
        size_t p = (i - 1) / HEAP_ARITY;
        if (k >= item_key(&a[p]))
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

/* ---- the filling's first shares, sorted ----
 *
 * A filling pops every link of its part once or more, and most pop with the
 * share they started with: those are sorted once (least significant digit
 * first, a byte at a time, on the same key as the heap), and only the shares
 * pushed later go through the heap.  The next link is the least of the
 * sorted run's head and the heap's top, which is the least of the whole set
 * as a heap of everything would pop it.  Equal keys are one link's (the key
 * holds its id), and at most one of its entries is live, so the order among
 * them changes nothing. */

#define SORT_SMALL 24

static inline unsigned key_digit(HeapKey k, int d) { return (unsigned)(k >> (8 * d)) & 255; }

static void sort_items(HeapItem *a, HeapItem *tmp, size_t n)
{
    if (n < SORT_SMALL) {
        for (size_t i = 1; i < n; i++) {
            HeapItem e = a[i];
            HeapKey k = item_key(&e);
            size_t j = i;
            for (; j > 0 && item_key(&a[j - 1]) > k; j--)
                a[j] = a[j - 1];
            a[j] = e;
        }
        return;
    }
    enum { DIGITS = 12 }; /* the key's low 96 bits: the link's 32, the share's 64 */
    uint32_t count[DIGITS][256] = {{0}}; /* a filling's part is far below 2^32 links */
    for (size_t i = 0; i < n; i++) {
        HeapKey k = item_key(&a[i]);
        for (int d = 0; d < DIGITS; d++)
            count[d][key_digit(k, d)]++;
    }
    HeapItem *src = a, *dst = tmp;
    for (int d = 0; d < DIGITS; d++) {
        uint32_t *c = count[d];
        if (c[key_digit(item_key(&src[0]), d)] == n) /* one digit for all: the pass keeps the order */
            continue;
        uint32_t sum = 0;
        for (int b = 0; b < 256; b++) {
            uint32_t v = c[b];
            c[b] = sum;
            sum += v;
        }
        for (size_t i = 0; i < n; i++)
            dst[c[key_digit(item_key(&src[i]), d)]++] = src[i];
        HeapItem *t = src;
        src = dst;
        dst = t;
    }
    if (src != a)
        memcpy(a, src, n * sizeof *a);
}

/* A link's share changed to rem / unfrozen.  Shares only grow as flows freeze
 * (a frozen flow took the smallest share), so a grown share leaves the old,
 * lower entry in place and is refreshed when that entry surfaces: the entry
 * popped with a current key is then still the exact minimum, and links cost a
 * heap operation only when they reach the top, not on every flow that froze.
 * A share that rounding made smaller is pushed at once. */
static void share_changed(SimNet *n, LinkFill *o, int lid)
{
    double share = o->rem / o->unfrozen;
    if (share < o->hkey) {
        o->version++;
        o->hkey = share;
        heap_push(n, (HeapItem){share, lid, o->version});
    }
    o->stale = share > o->hkey;
}

/* ---- incremental max-min: which flows a change can move ----
 *
 * Progressive filling raises one water level for every unfrozen flow and
 * freezes a link's flows when the link fills.  Up to the level theta at which
 * the first changed link would fill in the new problem (a removed flow's old
 * rate, or where the old rates plus the added flows fill a link), the new run
 * repeats the old one, so every flow whose old rate is below theta keeps it.
 * Above theta the rest is a max-min problem of its own on what the kept flows
 * leave of each link, and its parts not connected to a changed link repeat
 * their old solution too.  Only the part reached from the changed links
 * through flows at or above theta is filled again (SimGrid's LMM does the
 * same with its "modified" sets, by component). */

/* A lower bound on the level at which link `l` fills once its fresh flows
 * join: the smallest t with sum(min(r, t)) + fresh * t = bw over the old rates
 * r, approached from below by solving the sum as linear above each guess. */
static double fill_level_bound(const Link *l)
{
    double t = l->bw / l->nflows;
    for (int it = 0; it < 4; it++) {
        double below = 0;
        int above = 0;
        for (int k = 0; k < l->len; k++) { /* a fresh flow's +inf counts above */
            double r = l->rate[k];
            if (r == -INFINITY) /* a hole */
                continue;
            if (r < t)
                below += r;
            else
                above++;
        }
        double next = (l->bw - below) / above;
        if (!(next > t))
            break;
        t = next;
    }
    return t;
}

/* The level below which no rate changes, from the changed links. */
double net_change_level(SimNet *n)
{
    if (n->full)
        return -INFINITY;
    double theta = n->removed_level;
    for (guint i = 0; i < n->dirty->len; i++) {
        const Link *l = &n->links[g_array_index(n->dirty, int, i)];
        if (l->fresh > 0)
            theta = fmin(theta, fill_level_bound(l));
    }
    /* Margin for rounding: a flow that is exactly at theta but rounded below
     * it is filled again, which only repeats its rate. */
    return theta > 0 ? theta * (1 - 1e-9) : theta;
}

/* Scans a link of the part being filled again: takes in its flows at or above
 * theta, and leaves it what the kept flows do not use. */
static void take_link(SimNet *n, int lid, double theta, uint32_t ep)
{
    Link *l = &n->links[lid];
    LinkFill *lf = &n->fill[lid];
    double rem = l->bw;
    int unfrozen = 0;
    if (l->fresh == 0 && !link_reaches(n, l, theta)) { /* no flow here can move */
        lf->unfrozen = 0;
        return;
    }
    n->work += (uint64_t)l->len + 1;
    l->fresh = 0;
    for (int k = 0; k < l->len; k++) {
        if (k + 8 < l->len && l->rate[k + 8] >= theta)
            PREFETCH(l->flows[k + 8].flow);
        double r = l->rate[k];
        if (r == -INFINITY) /* a hole */
            continue;
        if (r < theta) {
            rem -= r;
            continue;
        }
        unfrozen++;
        if (r == INFINITY) /* a started flow: taken in already */
            continue;
        Flow *f = l->flows[k].flow;
        if (f->epoch == ep)
            continue;
        f->epoch = ep;
        f->frozen = false;
        flow_list_add(&n->comp, f);
        n->work += (uint64_t)f->nact;
        for (int j = 0; j < f->nact; j++) {
            int lj = f->links[j];
            if (n->mark[lj] != ep) {
                n->mark[lj] = ep;
                link_list_add(&n->comp_links, lj);
            }
        }
    }
    lf->rem = rem > 0 ? rem : 0;
    lf->unfrozen = unfrozen;
}

/* Collects, from the dirty links, the flows that may move and their links. */
void net_collect_part(SimNet *n, double theta)
{
    uint32_t ep = ++n->epoch;
    n->comp.len = 0;
    n->comp_links.len = 0;
    for (guint i = 0; i < n->dirty->len; i++) {
        int l = g_array_index(n->dirty, int, i);
        n->links[l].dirty = false;
        if (n->mark[l] != ep) {
            n->mark[l] = ep;
            link_list_add(&n->comp_links, l);
        }
    }
    g_array_set_size(n->dirty, 0);
    /* Started flows (rate +inf on every link, which are all dirty) are all
     * refilled: taken in order of start, so that the passes over them walk
     * memory in the order it was allocated, and the link scans need not
     * visit them.  They were marked for this epoch when they started. */
    n->work += n->started_hops;
    n->started_hops = 0;
    FlowList empty = n->comp; /* set to size 0 above */
    n->comp = n->started;
    n->started = empty;
    /* the links are all over memory too: each is asked for 8 ahead, and
     * its rates and blocks 4 ahead, once it is at hand */
    for (guint li = 0; li < n->comp_links.len; li++) {
        const int *cl = n->comp_links.v; /* take_link appends to it */
        if (li + 8 < n->comp_links.len)
            PREFETCH(&n->links[cl[li + 8]]);
        if (li + 4 < n->comp_links.len) {
            const Link *a = &n->links[cl[li + 4]];
            PREFETCH(a->rate);
            PREFETCH(a->bcnt);
            PREFETCH(a->bmax);
        }
        take_link(n, cl[li], theta, ep);
    }
}

/* Link `l` fills at `share`: its unfrozen flows of this filling freeze there,
 * and their other links lose what they take. */
static void freeze_link(SimNet *n, int lid, double share, double theta)
{
    const Link *l = &n->links[lid];
    for (int k = 0; k < l->len; k++) {
        if (k + 8 < l->len)
            PREFETCH(l->flows[k + 8].flow);
        double r = l->rate[k];
        if (r < theta || r == -INFINITY) /* kept: not part of this filling; or a hole */
            continue;
        Flow *f = l->flows[k].flow;
        if (f->frozen)
            continue;
        f->frozen = true;
        f->next_rate = share;
        for (int j = 0; j < f->nact; j++) {
            int oj = f->links[j];
            LinkFill *o = &n->fill[oj];
            o->rem -= share;
            if (o->rem < 0)
                o->rem = 0;
            o->unfrozen--;
            if (oj != lid && o->unfrozen > 0)
                share_changed(n, o, oj);
        }
    }
    n->fill[lid].unfrozen = 0;
}

/* Progressive filling of the collected flows (those at or above theta) on the
 * collected links (rem and unfrozen set): each flow's rate goes to next_rate. */
void net_fill(SimNet *n, double theta)
{
    /* Flows on one link each (a ring's hops, their other links shadowed):
     * the links are independent, each fills at its own share, in any order. */
    bool independent = true;
    for (guint i = 0; i < n->comp.len && independent; i++)
        independent = ((const Flow *)n->comp.v[i])->nact == 1;
    if (independent) {
        for (guint i = 0; i < n->comp_links.len; i++) {
            int lid = n->comp_links.v[i];
            const LinkFill *l = &n->fill[lid];
            if (l->unfrozen > 0)
                freeze_link(n, lid, l->rem / l->unfrozen, theta);
        }
        return;
    }
    n->hn = 0;
    if (n->scap < n->comp_links.len) {
        n->scap = n->comp_links.len;
        n->sorted = g_renew(HeapItem, n->sorted, n->scap);
        n->sort_tmp = g_renew(HeapItem, n->sort_tmp, n->scap);
    }
    size_t ns = 0, si = 0;
    for (guint i = 0; i < n->comp_links.len; i++) {
        int lid = n->comp_links.v[i];
        LinkFill *l = &n->fill[lid];
        l->version++;
        l->stale = false;
        if (l->unfrozen > 0) {
            l->hkey = l->rem / l->unfrozen;
            n->sorted[ns++] = (HeapItem){l->hkey, lid, l->version};
        }
    }
    sort_items(n->sorted, n->sort_tmp, ns);
    /* The most constrained link fixes the rate of its flows; repeat. */
    while (si < ns || n->hn > 0) {
        /* the sorted run says which links come next: ask for them ahead */
        if (si + 8 < ns)
            PREFETCH(&n->links[n->sorted[si + 8].link]);
        if (si + 4 < ns) {
            const Link *a = &n->links[n->sorted[si + 4].link];
            PREFETCH(a->rate);
            PREFETCH(a->flows);
        }
        HeapItem it = n->hn > 0 && (si == ns || item_key(&n->heap[0]) < item_key(&n->sorted[si])) ? heap_pop(n)
                                                                                                 : n->sorted[si++];
        LinkFill *l = &n->fill[it.link];
        if (it.version != l->version || l->unfrozen == 0)
            continue;
        if (l->stale) { /* its share grew since: back in at the current one */
            l->version++;
            l->hkey = l->rem / l->unfrozen;
            l->stale = false;
            heap_push(n, (HeapItem){l->hkey, it.link, l->version});
            continue;
        }
        freeze_link(n, it.link, it.share, theta);
    }
}

/* Brings each refilled flow to its new rate; a flow whose rate stands keeps
 * its drain event. */
void net_apply_rates(SimNet *n, sim_time_t now)
{
    Flow **comp = (Flow **)n->comp.v;
    guint len = n->comp.len;
    for (guint i = 0; i < len; i++) {
        /* the flows lie all over memory: ask for them ahead, and for the
         * entries of those asked for before */
        if (i + 16 < len)
            PREFETCH(comp[i + 16]);
        if (i + 8 < len) {
            const Flow *g = comp[i + 8];
            if (g->next_rate != g->rate)
                for (int j = 0; j < g->nact; j++)
                    PREFETCH(&n->links[g->links[j]].rate[g->links[g->nlinks + j]]);
        }
        Flow *f = comp[i];
        double rate = f->next_rate;
        bool was_fresh = f->fresh;
        f->fresh = false;
        if (rate == f->rate && f->drain_ev)
            continue;
        if (!was_fresh) {
            f->remaining -= f->rate * sim_time_to_s(now - f->last);
            if (f->remaining < 0)
                f->remaining = 0;
        }
        f->last = now;
        f->rate = rate;
        const int *pos = f->links + f->nlinks;
        for (int j = 0; j < f->nact; j++)
            link_set_rate(&n->links[f->links[j]], pos[j], rate);
        n->rate_updates++;
        n->work += 16; /* a reschedule: an event-queue cancel and push */
        /* Never let a rounding-starved flow stall forever. */
        double r = rate > 1e-3 ? rate : 1e-3;
        double ps = ceil(f->remaining / r * (double)SIM_TIME_PS_PER_S);
        sim_time_t at = ps >= 1.8e19 ? SIM_TIME_NEVER : sim_time_add(now, (sim_time_t)ps);
        if (f->drain_ev)
            sim_engine_cancel(n->e, f->drain_ev);
        f->drain_ev = sim_engine_schedule(n->e, at, &f->ev);
    }
}

/* Debug check: fills every active flow from scratch and records how far the
 * rates in force are from that (relative). */
void net_verify_rates(SimNet *n)
{
    uint32_t ep = ++n->epoch;
    n->comp.len = 0;
    n->comp_links.len = 0;
    for (int lid = 0; lid < n->nlinks; lid++) {
        Link *l = &n->links[lid];
        n->mark[lid] = ep;
        n->fill[lid].rem = l->bw;
        n->fill[lid].unfrozen = l->nflows;
        link_list_add(&n->comp_links, lid);
        for (int k = 0; k < l->len; k++)
            if (l->flows[k].flow && l->flows[k].flow->epoch != ep) {
                l->flows[k].flow->epoch = ep;
                l->flows[k].flow->frozen = false;
                flow_list_add(&n->comp, l->flows[k].flow);
            }
    }
    net_fill(n, -INFINITY);
    for (guint i = 0; i < n->comp.len; i++) {
        const Flow *f = n->comp.v[i];
        double ref = f->next_rate, d = fabs(f->rate - ref);
        double rel = ref != 0 ? d / ref : d;
        if (!(rel <= n->verify_diff)) /* NaN counts as the worst */
            n->verify_diff = isnan(rel) ? INFINITY : rel;
    }
}
