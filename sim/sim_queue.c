#include "sim_queue.h"

#include <glib.h>

/* tag = sequence << SLOT_BITS | slot.  Comparing tags compares sequences,
 * since a slot is reused only under a new sequence. */
#define SLOT_BITS 26
#define SLOT_MASK ((1ULL << SLOT_BITS) - 1)
#define SEQ_LIMIT (1ULL << (64 - SLOT_BITS))

typedef struct {
    sim_time_t time;
    uint64_t tag;
} Entry;

typedef struct {
    void *data;
    uint64_t tag; /* tag of the live event in this slot, 0 when free */
} Slot;

struct SimQueue {
    Entry *heap;
    size_t n, cap; /* heap entries, live and dead */
    Slot *slots;
    uint32_t *free_slots;
    size_t nslots, cap_slots, nfree;
    size_t live;
    uint64_t seq;
};

static inline bool before(const Entry *a, const Entry *b)
{
    return a->time < b->time || (a->time == b->time && a->tag < b->tag);
}

static void sift_up(Entry *h, size_t i)
{
    Entry e = h[i];
    while (i > 0) {
        size_t p = (i - 1) >> 1;
        if (!before(&e, &h[p]))
            break;
        h[i] = h[p];
        i = p;
    }
    h[i] = e;
}

static void sift_down(Entry *h, size_t n, size_t i)
{
    Entry e = h[i];
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && before(&h[c + 1], &h[c]))
            c++;
        if (!before(&h[c], &e))
            break;
        h[i] = h[c];
        i = c;
    }
    h[i] = e;
}

SimQueue *sim_queue_new(void)
{
    return g_new0(SimQueue, 1);
}

void sim_queue_free(SimQueue *q)
{
    if (!q)
        return;
    g_free(q->heap);
    g_free(q->slots);
    g_free(q->free_slots);
    g_free(q);
}

static inline bool entry_live(const SimQueue *q, const Entry *e)
{
    return q->slots[e->tag & SLOT_MASK].tag == e->tag;
}

static void release_slot(SimQueue *q, uint32_t s)
{
    q->slots[s].tag = 0;
    q->slots[s].data = NULL;
    q->free_slots[q->nfree++] = s;
    q->live--;
}

static void compact(SimQueue *q)
{
    size_t k = 0;
    for (size_t i = 0; i < q->n; i++)
        if (entry_live(q, &q->heap[i]))
            q->heap[k++] = q->heap[i];
    q->n = k;
    for (size_t i = k / 2; i-- > 0;)
        sift_down(q->heap, q->n, i);
}

SimEventId sim_queue_push(SimQueue *q, sim_time_t t, void *data)
{
    uint32_t s;
    if (q->nfree > 0) {
        s = q->free_slots[--q->nfree];
    } else {
        if (q->nslots == q->cap_slots) {
            q->cap_slots = q->cap_slots ? 2 * q->cap_slots : 64;
            if (q->cap_slots > SLOT_MASK + 1)
                g_error("sim_queue: more than %llu pending events", (unsigned long long)SLOT_MASK + 1);
            q->slots = g_renew(Slot, q->slots, q->cap_slots);
            q->free_slots = g_renew(uint32_t, q->free_slots, q->cap_slots);
        }
        s = (uint32_t)q->nslots++;
    }
    if (++q->seq >= SEQ_LIMIT)
        g_error("sim_queue: event sequence exhausted");
    uint64_t tag = (q->seq << SLOT_BITS) | s;
    q->slots[s].tag = tag;
    q->slots[s].data = data;
    q->live++;
    if (q->n == q->cap) {
        q->cap = q->cap ? 2 * q->cap : 64;
        q->heap = g_renew(Entry, q->heap, q->cap);
    }
    q->heap[q->n] = (Entry){t, tag};
    sift_up(q->heap, q->n++);
    return tag;
}

/* Drops dead entries from the top so that heap[0], if any, is live. */
static void skip_dead(SimQueue *q)
{
    while (q->n > 0 && !entry_live(q, &q->heap[0])) {
        q->heap[0] = q->heap[--q->n];
        if (q->n > 0)
            sift_down(q->heap, q->n, 0);
    }
}

bool sim_queue_pop(SimQueue *q, sim_time_t *t, void **data)
{
    skip_dead(q);
    if (q->n == 0)
        return false;
    Entry top = q->heap[0];
    uint32_t s = (uint32_t)(top.tag & SLOT_MASK);
    if (t)
        *t = top.time;
    if (data)
        *data = q->slots[s].data;
    release_slot(q, s);
    q->heap[0] = q->heap[--q->n];
    if (q->n > 0)
        sift_down(q->heap, q->n, 0);
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
    if (id == 0 || s >= q->nslots || q->slots[s].tag != id)
        return false;
    release_slot(q, (uint32_t)s);
    if (q->n > 64 && q->n > 2 * q->live)
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
