/* The discrete-event engine: the clock, the queue of actions and the settle
 * hooks that run once per timestamp (sim_engine.h). */
#include "sim_engine.h"

#include <glib.h>

typedef struct {
    SimSettleFn fn;
    void *ctx;
} Settle;

struct SimEngine {
    SimQueue *q;
    sim_time_t now;
    uint64_t fired;
    GArray *settle; /* of Settle */
};

SimEngine *sim_engine_new(void)
{
    SimEngine *e = g_new0(SimEngine, 1);
    e->q = sim_queue_new();
    e->settle = g_array_new(FALSE, FALSE, sizeof(Settle));
    return e;
}

void sim_engine_free(SimEngine *e)
{
    if (!e)
        return;
    sim_queue_free(e->q);
    g_array_free(e->settle, TRUE);
    g_free(e);
}

sim_time_t sim_engine_now(const SimEngine *e) { return e->now; }
uint64_t sim_engine_events(const SimEngine *e) { return e->fired; }

SimEventId sim_engine_schedule(SimEngine *e, sim_time_t at, SimAction *a)
{
    return sim_queue_push(e->q, at < e->now ? e->now : at, a);
}

bool sim_engine_cancel(SimEngine *e, SimEventId id)
{
    return sim_queue_cancel(e->q, id);
}

void sim_engine_on_settle(SimEngine *e, SimSettleFn fn, void *ctx)
{
    Settle s = {fn, ctx};
    g_array_append_val(e->settle, s);
}

static void settle(SimEngine *e)
{
    for (guint i = 0; i < e->settle->len; i++) {
        Settle *s = &g_array_index(e->settle, Settle, i);
        s->fn(e, s->ctx);
    }
}

sim_time_t sim_engine_run(SimEngine *e)
{
    settle(e); /* work queued before the run (flows started at time 0) */
    for (;;) {
        sim_time_t t = sim_queue_peek_time(e->q);
        if (t == SIM_TIME_NEVER)
            break;
        e->now = t;
        void *data;
        while (sim_queue_peek_time(e->q) == t && sim_queue_pop(e->q, NULL, &data)) {
            SimAction *a = data;
            e->fired++;
            a->fire(e, a);
        }
        settle(e);
    }
    return e->now;
}
