/* The event queue: events come out ordered by (time, insertion sequence), so
 * events at equal times come out in the order they were pushed and runs are
 * deterministic.  Events of one time are kept together behind one entry of a
 * 4-ary heap (where times repeat), so a pop of an event whose time has others
 * pending costs no heap walk.
 *
 * Cancelling frees the event at once; a heap entry it leaves empty is skipped
 * when it surfaces, and the heap is compacted when dead entries outnumber
 * live ones, so memory stays proportional to pending events. */
#ifndef SIM_QUEUE_H
#define SIM_QUEUE_H

#include "sim_time.h"

#include <stdbool.h>
#include <stddef.h>

typedef struct SimQueue SimQueue;
/* Names one pushed event; never 0, never reused within a queue's life. */
typedef uint64_t SimEventId;

SimQueue *sim_queue_new(void);
void sim_queue_free(SimQueue *q);

SimEventId sim_queue_push(SimQueue *q, sim_time_t t, void *data);
/* Removes the earliest live event; false when the queue is empty. */
bool sim_queue_pop(SimQueue *q, sim_time_t *t, void **data);
/* Time of the earliest live event, or SIM_TIME_NEVER when empty. */
sim_time_t sim_queue_peek_time(SimQueue *q);
/* False if the event already fired or was cancelled. */
bool sim_queue_cancel(SimQueue *q, SimEventId id);
/* Cancels `id` (if still pending) and pushes its data again at `t`. */
SimEventId sim_queue_reschedule(SimQueue *q, SimEventId id, sim_time_t t, void *data);
/* Number of live (not yet fired, not cancelled) events. */
size_t sim_queue_size(const SimQueue *q);

#endif
