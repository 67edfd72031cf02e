/* The discrete-event engine: a clock and an event queue of actions.
 *
 * An action is a struct whose first member is a SimAction; when its time comes
 * the engine calls its `fire`.  After every event at one timestamp has fired,
 * the settle hooks run (the flow network recomputes rates there once per
 * timestamp instead of once per event); they may schedule more events, also at
 * the current time. */
#ifndef SIM_ENGINE_H
#define SIM_ENGINE_H

#include "sim_queue.h"
#include "sim_time.h"

typedef struct SimEngine SimEngine;
typedef struct SimAction SimAction;
struct SimAction {
    void (*fire)(SimEngine *e, SimAction *self);
};

typedef void (*SimSettleFn)(SimEngine *e, void *ctx);

SimEngine *sim_engine_new(void);
void sim_engine_free(SimEngine *e);
sim_time_t sim_engine_now(const SimEngine *e);
/* `at` earlier than now is treated as now. */
SimEventId sim_engine_schedule(SimEngine *e, sim_time_t at, SimAction *a);
bool sim_engine_cancel(SimEngine *e, SimEventId id);
void sim_engine_on_settle(SimEngine *e, SimSettleFn fn, void *ctx);
/* Runs until no event is left; returns the time of the last event. */
sim_time_t sim_engine_run(SimEngine *e);
/* Events fired so far (for benchmarks and sanity checks). */
uint64_t sim_engine_events(const SimEngine *e);

#endif
