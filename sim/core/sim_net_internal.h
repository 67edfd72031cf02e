/* Private to the flow network's two files: its data (links with their flows'
 * entries, flows, the net) and what sim_net.c (flows, events, settling) calls
 * in sim_maxmin.c (the incremental max-min solver and the links' entries). */
#ifndef SIM_NET_INTERNAL_H
#define SIM_NET_INTERNAL_H

#include "sim_net.h"

#include <glib.h>

typedef struct Flow Flow;

/* A flow on a link.  Its rate is kept in the link too (in an array of its
 * own, so that scans for rates at or above a level read 8 bytes an entry)
 * and scans do not visit the flows. */
typedef struct {
    Flow *flow;
    int slot; /* where this link is on the flow's path */
} Entry;

typedef struct {
    double bw;
    sim_time_t latency;
    double bytes_done; /* bytes of drained flows */
    Entry *flows;      /* active flows crossing this link */
    double *rate;      /* their rates; +inf for a flow with none yet */
    double *bmax;      /* per block of LINK_BLOCK entries: the largest rate, */
    int *bcnt;         /* and how many entries have it; 0: unknown until rescanned */
    int nflows;        /* live entries */
    int len, cap;      /* entries in use (live and holes), allocated */
    int hole;          /* the latest hole, or -1; holes chain through `slot` */
    /* Shadowing (sim_net.c): LINK_FREE with no flows; LINK_EXPLICIT with
     * every flow in the entries; else the id of a link of no more bandwidth
     * that every flow here also crosses, so this link's constraint is implied
     * and its flows (nshadow of them) have no entries here. */
    int dom;
    int nshadow;
    bool broken; /* made explicit once: stays so (each link's flows are searched at most once) */
    int fresh;         /* flows started since the last settle */
    bool dirty;
} Link;

/* A link's progressive-filling scratch, apart from the link: the solver
 * reaches a flow's other links by id, and a 24-byte record (against a
 * 96-byte Link) keeps those random reads close; the component search's
 * marks are an array of their own, 4 bytes a link. */
typedef struct {
    double rem;
    double hkey;      /* the share of the link's live heap entry: never above rem / unfrozen */
    int unfrozen;
    uint32_t version : 31; /* of that entry */
    uint32_t stale : 1;    /* hkey < rem / unfrozen: refresh when it surfaces */
} LinkFill;

/* A link's entries come in blocks whose largest rate is kept, so that finding
 * whether any flow on it is at or above a level reads a block, not a flow. */
#define LINK_BLOCK 16

#define LINK_FREE (-2)
#define LINK_EXPLICIT (-1)

/* The flows' entries on their links lie all over memory: asking for several
 * at once overlaps the cache misses (no effect on results). */
#if defined(__GNUC__)
#define PREFETCH(p) __builtin_prefetch(p)
#else
#define PREFETCH(p) ((void)(p))
#endif

struct Flow {
    SimAction ev; /* its drain, then its delivery; first, so that the action is the flow */
    SimNet *net;
    double bytes, remaining, rate;
    sim_time_t last;  /* when `remaining` was last brought up to date */
    sim_time_t delay; /* after the path latency, before `done` */
    SimEventId drain_ev;
    SimFlowDone done;
    void *user;
    uint32_t epoch;
    double next_rate; /* filling's result */
    bool frozen;      /* outside a filling, true but for a started flow (set up for its first) */
    bool fresh;       /* started since the last settle: no rate yet */
    int nlinks;
    int nact;    /* the first nact links have entries; the rest are shadowed */
    int links[]; /* nlinks link ids, then nlinks positions in each link's list (with the flow: one cache miss) */
};

typedef struct {
    double share;
    int link;
    uint32_t version;
} HeapItem;

/* The solver's lists, appended to once per flow or link taken in: inline,
 * where a GArray's append is a call and a memcpy. */
typedef struct {
    Flow **v;
    guint len, cap;
} FlowList;

typedef struct {
    int *v;
    guint len, cap;
} LinkList;

static inline void flow_list_add(FlowList *a, Flow *f)
{
    if (a->len == a->cap) {
        a->cap = a->cap ? 2 * a->cap : 64;
        a->v = g_renew(Flow *, a->v, a->cap);
    }
    a->v[a->len++] = f;
}

static inline void link_list_add(LinkList *a, int l)
{
    if (a->len == a->cap) {
        a->cap = a->cap ? 2 * a->cap : 64;
        a->v = g_renew(int, a->v, a->cap);
    }
    a->v[a->len++] = l;
}

struct SimNet {
    SimEngine *e;
    Link *links;
    LinkFill *fill; /* [link], beside links */
    uint32_t *mark; /* [link]: the component search's epoch */
    int nlinks, cap;
    GArray *dirty;      /* int link ids touched since the last settle */
    FlowList comp;      /* scratch: flows of the component being recomputed */
    FlowList started;   /* flows started since the last settle, in order (all refilled) */
    uint64_t started_hops; /* their explicit links: the work of taking them in */
    LinkList comp_links; /* scratch: its links */
    HeapItem *heap;     /* scratch: min-heap on (share, link) of the shares pushed during a filling */
    size_t hn, hcap;
    HeapItem *sorted, *sort_tmp; /* scratch: the filling's first shares, in order */
    size_t scap;
    GPtrArray *chunks;  /* the flows' memory, freed with the net */
    char *bump, *bump_end;
    GPtrArray *spare;   /* per path length: a list of freed flows (linked through `user`) */
    uint32_t epoch;
    size_t active;
    uint64_t recomputes, rate_updates;
    uint64_t work, work_limit; /* links and flow hops visited by rate recomputations, 16 a reschedule */
    bool overrun;              /* past work_limit: the network has stopped */
    double removed_level;      /* the lowest rate of a flow drained since the last settle */
    bool full;                 /* refill whole components (the reference) */
    bool no_shadow;            /* every link explicit (the reference for shadowing) */
    bool verify;               /* check every settle against a full filling */
    double verify_diff;        /* the largest relative difference seen */
};

/* sim_maxmin.c: a link's entries (flow, rate, slot; the blocks' largest rate) */
int net_link_append(Link *l, Flow *f, int slot);
int net_link_append_rate(Link *l, Flow *f, int slot, double rate);
void net_link_remove(Link *l, int p);
/* sim_maxmin.c: one settle's update: the level below which no rate changes,
 * the flows that may move, their filling, the rates brought into force (and
 * the debug check against a full filling) */
double net_change_level(SimNet *n);
void net_collect_part(SimNet *n, double theta);
void net_fill(SimNet *n, double theta);
void net_apply_rates(SimNet *n, sim_time_t now);
void net_verify_rates(SimNet *n);

#endif
