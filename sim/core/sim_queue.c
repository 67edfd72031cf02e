/* The event queue: a 4-ary heap of (time, sequence | slot) keys, slots for
 * the payloads, lazy cancellation with compaction (sim_queue.h). */
#include "sim_queue.h"

#include <glib.h>
#include <string.h>

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
    Entry *mem;    /* aligned allocation; heap = mem + PAD */
    Entry *heap;
    size_t n, cap; /* heap entries, live and dead */
    Slot *slots;
    uint32_t *free_slots;
    size_t nslots, cap_slots, nfree;
    size_t live;
    uint64_t seq;
};

/* (time, tag) as one 128-bit key: a single comparison orders two entries. */
__extension__ typedef unsigned __int128 Key;

static inline Key key(const Entry *e)
{
    return ((Key)e->time << 64) | e->tag;
}

static inline bool before(const Entry *a, const Entry *b)
{
    return key(a) < key(b);
}

/* A 4-ary heap: half the depth of a binary one, and with the array offset by
 * three entries a node's four children share one 64-byte cache line. */
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

static void sift_up(Entry *h, size_t i)
{
    sift_up_from(h, i, 0, h[i]);
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

SimQueue *sim_queue_new(void)
{
    return g_new0(SimQueue, 1);
}

void sim_queue_free(SimQueue *q)
{
    if (!q)
        return;
    g_aligned_free(q->mem);
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
    for (size_t i = k / ARITY + 1; i-- > 0;)
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
        size_t cap = q->cap ? 2 * q->cap : 64;
        Entry *mem = g_aligned_alloc(cap + PAD, sizeof(Entry), 64);
        if (q->n)
            memcpy(mem + PAD, q->heap, q->n * sizeof(Entry));
        g_aligned_free(q->mem);
        q->mem = mem;
        q->heap = mem + PAD;
        q->cap = cap;
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
