/* The event queue (sim_queue.h): events of one time kept together, in push
 * order, in a group; a 4-ary heap of the groups' times; a hash from time to
 * its live group, so that a push at a pending time joins its group.
 *
 * Simulations of bulk-synchronous work have many events at one time (a step's
 * flows drain at the same picosecond), and a heap of one entry per event makes
 * every pop walk ~log4(events) cache lines.  With one heap entry per distinct
 * time the heap stays small and an event of a pending time costs a hash probe
 * and a list link.  The order is (time, push sequence) exactly as with one
 * entry per event: at most one group per time is live, every push at that
 * time while it lives joins its tail, and a group created later at the same
 * time (after the first emptied) holds only later pushes.
 *
 * Where times seldom repeat (the hold benchmark) the hash only costs, so a
 * window of pushes samples how often a time is found; below one in eight,
 * pushes make heap entries of single events for a span (after which a new
 * window samples again), and the hash is emptied: an event pushed then, and
 * any group made later at its time, all come after the groups of that time
 * made before, which the heap's (time, sequence) order keeps.
 *
 * Cancelling unlinks the event at once; a group emptied that way leaves a
 * dead heap entry that is skipped when it surfaces, and the heap is compacted
 * when dead entries outnumber live ones, so memory stays proportional to
 * pending events. */
#include "sim_queue.h"

#include <glib.h>
#include <string.h>

/* An event id and a heap tag: sequence << TAG_SHIFT | SINGLE | index, where
 * a heap entry is a group (index of a group) or, SINGLE, one event (index of
 * its slot).  A slot or group is reused only under a new sequence, so an id
 * never comes back, and comparing tags compares sequences. */
#define SLOT_BITS 26
#define SLOT_MASK ((1ULL << SLOT_BITS) - 1)
#define SINGLE (1ULL << SLOT_BITS)
#define TAG_SHIFT (SLOT_BITS + 1)
#define SEQ_LIMIT (1ULL << (64 - TAG_SHIFT))
#define NONE UINT32_MAX

#if defined(__GNUC__)
#define PREFETCH(p) __builtin_prefetch(p)
#else
#define PREFETCH(p) ((void)(p))
#endif

typedef struct {
    sim_time_t time;
    uint64_t tag; /* of the group; dead when the group's tag differs */
} Entry;

typedef struct {
    void *data;
    uint64_t tag;           /* of the live event in this slot, 0 when free */
    uint32_t prev, next;    /* in its group, in push order */
    uint32_t group;
} Slot;

typedef struct {
    sim_time_t time;
    uint64_t tag; /* 0 when free */
    uint32_t head, tail;
} Group;

typedef struct {
    sim_time_t time;
    uint32_t group; /* NONE: empty */
} Bucket;

typedef struct {
    void *mem;
    uint32_t *free;
    size_t n, cap, nfree;
} Pool;

struct SimQueue {
    Entry *mem;    /* aligned allocation; heap = mem + PAD */
    Entry *heap;
    size_t n, cap; /* heap entries, live and dead */
    Pool slots, groups;
    Bucket *hash;
    size_t hcap, hlive; /* hcap a power of two, or 0 */
    int hshift;         /* 64 - log2(hcap) */
    size_t live, live_entries; /* events; groups and single events in the heap */
    uint64_t seq;
    /* Grouping pays where times repeat.  Pushes in a window of WINDOW look
     * their time up; with under one in eight found, pushes make single heap
     * entries (no hash) for the next OFF_SPAN pushes, then a window again. */
    bool grouping;
    unsigned window, found, off_left;
};

#define WINDOW 4096
#define OFF_SPAN 65536

/* ---- the heap of groups: (time, tag) as one 128-bit key ---- */

__extension__ typedef unsigned __int128 Key;

static inline Key key(const Entry *e)
{
    return ((Key)e->time << 64) | e->tag;
}

/* With the array offset by three entries a node's four children share one
 * 64-byte cache line. */
#define ARITY 4
#define PAD 3

static void sift_up_from(Entry *h, size_t i, size_t top, Entry e)
{
    Key k = key(&e);
    while (i > top) {
        size_t p = (i - 1) / ARITY;
        if (k >= key(&h[p]))
            break;
        h[i] = h[p];
        i = p;
    }
    h[i] = e;
}

/* Floyd's bottom-up variant: the element moved to the root almost always
 * belongs near the leaves, so walk the hole down the smaller-child path
 * without comparing against it, then let it rise the few steps back. */
static void sift_down(Entry *h, size_t n, size_t i)
{
    Entry e = h[i];
    size_t hole = i;
    for (;;) {
        size_t c = ARITY * hole + 1;
        if (c >= n)
            break;
        size_t m = c;
        Key km = key(&h[c]);
        size_t end = c + ARITY < n ? c + ARITY : n;
        for (size_t j = c + 1; j < end; j++) {
            Key kj = key(&h[j]);
            if (kj < km) {
                km = kj;
                m = j;
            }
        }
        h[hole] = h[m];
        hole = m;
    }
    sift_up_from(h, hole, i, e);
}

static void heap_push(SimQueue *q, Entry e)
{
    if (q->n == q->cap) {
        size_t cap = q->cap ? 2 * q->cap : 64;
        Entry *mem = g_aligned_alloc(cap + PAD, sizeof(Entry), 64);
        if (q->n)
            memcpy(mem + PAD, q->heap, q->n * sizeof(Entry));
        g_aligned_free(q->mem);
        q->mem = mem;
        q->heap = mem + PAD;
        q->cap = cap;
    }
    q->heap[q->n] = e;
    sift_up_from(q->heap, q->n, 0, e);
    q->n++;
}

static void heap_pop(SimQueue *q)
{
    q->heap[0] = q->heap[--q->n];
    if (q->n > 0)
        sift_down(q->heap, q->n, 0);
}

static inline bool entry_live(const SimQueue *q, const Entry *e)
{
    if (e->tag & SINGLE)
        return ((const Slot *)q->slots.mem)[e->tag & SLOT_MASK].tag == e->tag;
    return ((const Group *)q->groups.mem)[e->tag & SLOT_MASK].tag == e->tag;
}

static void compact(SimQueue *q)
{
    size_t k = 0;
    for (size_t i = 0; i < q->n; i++)
        if (entry_live(q, &q->heap[i]))
            q->heap[k++] = q->heap[i];
    q->n = k;
    for (size_t i = k / ARITY + 1; i-- > 0;)
        sift_down(q->heap, q->n, i);
}

/* ---- slots and groups: arrays with free lists ---- */

static uint32_t pool_take(Pool *p, size_t size)
{
    if (p->nfree > 0)
        return p->free[--p->nfree];
    if (p->n == p->cap) {
        p->cap = p->cap ? 2 * p->cap : 64;
        if (p->cap > SLOT_MASK + 1)
            g_error("sim_queue: more than %llu pending events", (unsigned long long)SLOT_MASK + 1);
        p->mem = g_realloc_n(p->mem, p->cap, size);
        p->free = g_renew(uint32_t, p->free, p->cap);
    }
    return (uint32_t)p->n++;
}

static void pool_give(Pool *p, uint32_t i) { p->free[p->nfree++] = i; }

static uint64_t next_tag(SimQueue *q, uint64_t index)
{
    if (++q->seq >= SEQ_LIMIT)
        g_error("sim_queue: event sequence exhausted");
    return (q->seq << TAG_SHIFT) | index;
}

/* ---- the hash from a time to its live group (linear probing) ---- */

static inline size_t hash_home(const SimQueue *q, sim_time_t t)
{
    return (size_t)((t * 0x9E3779B97F4A7C15ULL) >> q->hshift); /* the product's top bits */
}

static uint32_t hash_find(const SimQueue *q, sim_time_t t)
{
    if (q->hcap == 0)
        return NONE;
    for (size_t i = hash_home(q, t);; i = (i + 1) & (q->hcap - 1)) {
        const Bucket *b = &q->hash[i];
        if (b->group == NONE || b->time == t)
            return b->group;
    }
}

static void hash_put(SimQueue *q, sim_time_t t, uint32_t g)
{
    size_t i = hash_home(q, t);
    while (q->hash[i].group != NONE)
        i = (i + 1) & (q->hcap - 1);
    q->hash[i] = (Bucket){t, g};
}

static void hash_insert(SimQueue *q, sim_time_t t, uint32_t g)
{
    if (2 * (q->hlive + 1) > q->hcap) { /* at most half full */
        Bucket *old = q->hash;
        size_t ocap = q->hcap;
        q->hcap = ocap ? 2 * ocap : 64;
        q->hshift = 64 - __builtin_ctzll(q->hcap);
        q->hash = g_new(Bucket, q->hcap);
        for (size_t i = 0; i < q->hcap; i++)
            q->hash[i].group = NONE;
        for (size_t i = 0; i < ocap; i++)
            if (old[i].group != NONE)
                hash_put(q, old[i].time, old[i].group);
        g_free(old);
    }
    hash_put(q, t, g);
    q->hlive++;
}

/* Deletes time t if group g holds it there (a group made while the hash was
 * off is not in it), and shifts back the entries its slot displaced. */
static void hash_delete(SimQueue *q, sim_time_t t, uint32_t g)
{
    if (q->hcap == 0)
        return;
    size_t mask = q->hcap - 1, i = hash_home(q, t);
    for (;; i = (i + 1) & mask) {
        if (q->hash[i].group == NONE)
            return;
        if (q->hash[i].time == t)
            break;
    }
    if (q->hash[i].group != g)
        return;
    for (size_t j = (i + 1) & mask;; j = (j + 1) & mask) {
        if (q->hash[j].group == NONE)
            break;
        size_t home = hash_home(q, q->hash[j].time);
        /* j's entry may fill the hole at i unless its home lies in (i, j] */
        bool stays = i <= j ? (home > i && home <= j) : (home > i || home <= j);
        if (!stays) {
            q->hash[i] = q->hash[j];
            i = j;
        }
    }
    q->hash[i].group = NONE;
    q->hlive--;
}

/* ---- the queue ---- */

SimQueue *sim_queue_new(void)
{
    SimQueue *q = g_new0(SimQueue, 1);
    q->grouping = true;
    return q;
}

void sim_queue_free(SimQueue *q)
{
    if (!q)
        return;
    g_aligned_free(q->mem);
    g_free(q->slots.mem);
    g_free(q->slots.free);
    g_free(q->groups.mem);
    g_free(q->groups.free);
    g_free(q->hash);
    g_free(q);
}

static void group_release(SimQueue *q, uint32_t gi)
{
    Group *g = (Group *)q->groups.mem + gi;
    hash_delete(q, g->time, gi);
    g->tag = 0;
    pool_give(&q->groups, gi);
    q->live_entries--;
}

static void slot_release(SimQueue *q, uint32_t s)
{
    Slot *sl = (Slot *)q->slots.mem + s;
    sl->tag = 0;
    sl->data = NULL;
    pool_give(&q->slots, s);
    q->live--;
}

/* Grouping on or off by how often a window's pushes found their time. */
static void count_push(SimQueue *q, bool found)
{
    if (!q->grouping) {
        if (--q->off_left == 0) {
            q->grouping = true;
            q->window = q->found = 0;
        }
        return;
    }
    q->found += found;
    if (++q->window < WINDOW)
        return;
    if (8 * q->found < q->window) {
        q->grouping = false;
        q->off_left = OFF_SPAN;
        for (size_t i = 0; i < q->hcap; i++)
            q->hash[i].group = NONE;
        q->hlive = 0;
    }
    q->window = q->found = 0;
}

static SimEventId push_single(SimQueue *q, sim_time_t t, void *data)
{
    uint32_t s = pool_take(&q->slots, sizeof(Slot));
    uint64_t tag = next_tag(q, SINGLE | s);
    ((Slot *)q->slots.mem)[s] = (Slot){data, tag, NONE, NONE, NONE};
    q->live++;
    q->live_entries++;
    heap_push(q, (Entry){t, tag});
    return tag;
}

SimEventId sim_queue_push(SimQueue *q, sim_time_t t, void *data)
{
    uint32_t gi = q->grouping ? hash_find(q, t) : NONE;
    count_push(q, gi != NONE);
    if (gi == NONE) {
        if (!q->grouping)
            return push_single(q, t, data);
        gi = pool_take(&q->groups, sizeof(Group));
        Group *g = (Group *)q->groups.mem + gi;
        *g = (Group){t, next_tag(q, gi), NONE, NONE};
        hash_insert(q, t, gi);
        q->live_entries++;
        heap_push(q, (Entry){t, g->tag});
    }
    uint32_t s = pool_take(&q->slots, sizeof(Slot));
    Slot *slots = q->slots.mem;
    Group *g = (Group *)q->groups.mem + gi;
    uint64_t tag = next_tag(q, s);
    slots[s] = (Slot){data, tag, g->tail, NONE, gi};
    if (g->tail != NONE)
        slots[g->tail].next = s;
    else
        g->head = s;
    g->tail = s;
    q->live++;
    return tag;
}

/* Drops dead entries from the top so that heap[0], if any, is live. */
static void skip_dead(SimQueue *q)
{
    while (q->n > 0 && !entry_live(q, &q->heap[0]))
        heap_pop(q);
}

bool sim_queue_pop(SimQueue *q, sim_time_t *t, void **data)
{
    skip_dead(q);
    if (q->n == 0)
        return false;
    Slot *slots = q->slots.mem;
    if (q->heap[0].tag & SINGLE) {
        uint32_t s = (uint32_t)(q->heap[0].tag & SLOT_MASK);
        if (t)
            *t = q->heap[0].time;
        if (data)
            *data = slots[s].data;
        heap_pop(q);
        q->live_entries--;
        slot_release(q, s);
        return true;
    }
    uint32_t gi = (uint32_t)(q->heap[0].tag & SLOT_MASK);
    Group *g = (Group *)q->groups.mem + gi;
    uint32_t s = g->head;
    if (t)
        *t = g->time;
    if (data)
        *data = slots[s].data;
    g->head = slots[s].next;
    if (g->head != NONE) {
        slots[g->head].prev = NONE;
        /* the next events of this time are likely the next popped: ask for
         * their actions now (an action is seldom in cache in a large run),
         * the next one's and the one's after it (whose slot was asked for
         * by the pop before), and for the slot after those */
        PREFETCH(slots[g->head].data);
        uint32_t after = slots[g->head].next;
        if (after != NONE) {
            PREFETCH(slots[after].data);
            if (slots[after].next != NONE)
                PREFETCH(&slots[slots[after].next]);
        }
    } else {
        group_release(q, gi);
        heap_pop(q);
    }
    slot_release(q, s);
    return true;
}

sim_time_t sim_queue_peek_time(SimQueue *q)
{
    skip_dead(q);
    return q->n ? q->heap[0].time : SIM_TIME_NEVER;
}

bool sim_queue_cancel(SimQueue *q, SimEventId id)
{
    uint64_t s = id & SLOT_MASK;
    Slot *slots = q->slots.mem;
    if (id == 0 || s >= q->slots.n || slots[s].tag != id)
        return false;
    Slot *sl = &slots[s];
    if (sl->group == NONE) { /* a single entry: now dead in the heap */
        q->live_entries--;
        slot_release(q, (uint32_t)s);
        if (q->n > 64 && q->n > 2 * q->live_entries)
            compact(q);
        return true;
    }
    Group *g = (Group *)q->groups.mem + sl->group;
    if (sl->prev != NONE)
        slots[sl->prev].next = sl->next;
    else
        g->head = sl->next;
    if (sl->next != NONE)
        slots[sl->next].prev = sl->prev;
    else
        g->tail = sl->prev;
    if (g->head == NONE) /* its heap entry is now dead */
        group_release(q, sl->group);
    slot_release(q, (uint32_t)s);
    if (q->n > 64 && q->n > 2 * q->live_entries)
        compact(q);
    return true;
}

SimEventId sim_queue_reschedule(SimQueue *q, SimEventId id, sim_time_t t, void *data)
{
    sim_queue_cancel(q, id);
    return sim_queue_push(q, t, data);
}

size_t sim_queue_size(const SimQueue *q)
{
    return q->live;
}
