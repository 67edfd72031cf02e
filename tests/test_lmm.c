/* The incremental max-min solver of sim_net against a full recomputation:
 * random links and paths, random starts (some from finishing flows, at the
 * same timestamp as a finish), the rates in force checked after every rate
 * update against progressive filling of every active flow from scratch, and
 * the finish times compared with the reference mode that refills whole
 * components. */
#include "sim_net.h"
#include "test_main.h"

#include <math.h>
#include <stdlib.h>

#define MAX_FLOWS 600
#define MAX_HOPS 5

typedef struct {
    uint64_t s;
} Rng;

static uint64_t rng_next(Rng *r)
{
    r->s ^= r->s << 13;
    r->s ^= r->s >> 7;
    r->s ^= r->s << 17;
    return r->s;
}

static int rng_int(Rng *r, int n) { return (int)(rng_next(r) % (uint64_t)n); }

typedef struct Scen Scen;

typedef struct {
    SimAction act;
    Scen *sc;
    int id;
} Start;

struct Scen {
    SimNet *n;
    Rng rng;
    int nlinks;
    bool ties; /* bandwidths and sizes from a few values: many flows at one level */
    int started;
    Start starts[MAX_FLOWS];
    sim_time_t done_at[MAX_FLOWS];
    uint64_t work;
};

static void start_flow(SimEngine *e, Scen *sc);

static void on_done(SimEngine *e, void *user)
{
    Start *st = user;
    Scen *sc = st->sc;
    sc->done_at[st->id] = sim_engine_now(e);
    if (rng_int(&sc->rng, 3) == 0) /* a dependent flow starts as this one ends */
        start_flow(e, sc);
}

static void start_flow(SimEngine *e, Scen *sc)
{
    (void)e;
    if (sc->started == MAX_FLOWS)
        return;
    Start *st = &sc->starts[sc->started];
    st->sc = sc;
    st->id = sc->started++;
    int path[MAX_HOPS], hops = 1 + rng_int(&sc->rng, MAX_HOPS);
    if (hops > sc->nlinks)
        hops = sc->nlinks;
    for (int i = 0; i < hops; i++) { /* distinct links */
        path[i] = rng_int(&sc->rng, sc->nlinks);
        for (int j = 0; j < i; j++)
            if (path[j] == path[i]) {
                path[i] = rng_int(&sc->rng, sc->nlinks);
                j = -1;
            }
    }
    double bytes = sc->ties ? 1e6 * (1 + rng_int(&sc->rng, 3)) : 1e5 + (double)rng_int(&sc->rng, 10000000);
    sim_net_flow(sc->n, bytes, path, hops, on_done, st);
}

static void on_start(SimEngine *e, SimAction *a)
{
    Scen *sc = ((Start *)a)->sc;
    int k = 1 + rng_int(&sc->rng, 6); /* several at one timestamp */
    for (int i = 0; i < k; i++)
        start_flow(e, sc);
}

/* Runs random scenario `seed`; returns the largest relative difference seen
 * between the rates in force and a full filling, and fills `sc`. */
static double run_scenario_shadow(uint64_t seed, bool full, bool ties, bool shadow, Scen *sc)
{
    SimEngine *e = sim_engine_new();
    SimNet *n = sim_net_new(e);
    sim_net_set_full(n, full);
    sim_net_set_shadow(n, shadow);
    sim_net_set_verify(n, true);
    *sc = (Scen){.n = n, .rng = {seed * 0x9E3779B97F4A7C15ULL + 1}, .ties = ties};
    sc->nlinks = 2 + rng_int(&sc->rng, 30);
    for (int l = 0; l < sc->nlinks; l++) {
        double bw = ties ? 1e9 * (1 + rng_int(&sc->rng, 3)) : 1e8 * (1 + rng_int(&sc->rng, 1000));
        sim_net_add_link(n, bw, sim_time_from_s(1e-6 * rng_int(&sc->rng, 3)));
    }
    static Start waves[40];
    for (int w = 0; w < 40; w++) {
        waves[w] = (Start){.act = {on_start}, .sc = sc};
        sim_engine_schedule(e, sim_time_from_s(1e-4 * rng_int(&sc->rng, 100)), &waves[w].act);
    }
    sim_engine_run(e);
    CU_ASSERT_EQUAL(sim_net_active_flows(n), 0);
    CU_ASSERT(sim_net_recomputes(n) > 0);
    for (int i = 0; i < sc->started; i++)
        CU_ASSERT(sc->done_at[i] > 0);
    double d = sim_net_verify_diff(n);
    sc->work = sim_net_work(n);
    sc->n = NULL;
    sim_net_free(n);
    sim_engine_free(e);
    return d;
}

static double run_scenario(uint64_t seed, bool full, bool ties, Scen *sc)
{
    return run_scenario_shadow(seed, full, ties, true, sc);
}

/* After every change the incremental rates are the full max-min solution. */
static void test_rates_match_full_filling(void)
{
    double worst = 0;
    for (uint64_t seed = 1; seed <= 60; seed++) {
        static Scen sc;
        double d = run_scenario(seed, false, seed % 2 == 0, &sc);
        CU_ASSERT(d <= 1e-12);
        worst = fmax(worst, d);
    }
    printf("\n  largest relative difference from a full filling: %.3g\n", worst);
}

/* The reference mode is the full filling itself. */
static void test_full_mode_is_the_reference(void)
{
    static Scen sc;
    for (uint64_t seed = 1; seed <= 10; seed++)
        CU_ASSERT_EQUAL(run_scenario(seed, true, seed % 2 == 0, &sc), 0.0);
}

/* Finish times agree with the reference run's: rates are equal up to rounding,
 * and so are the times (to a picosecond per rate change on the way). */
static void test_finish_times_match_reference(void)
{
    static Scen inc, ref;
    for (uint64_t seed = 1; seed <= 30; seed++) {
        run_scenario(seed, false, seed % 2 == 0, &inc);
        run_scenario(seed, true, seed % 2 == 0, &ref);
        CU_ASSERT_EQUAL(inc.started, ref.started);
        for (int i = 0; i < inc.started && i < ref.started; i++) {
            double a = sim_time_to_s(inc.done_at[i]), b = sim_time_to_s(ref.done_at[i]);
            CU_ASSERT(fabs(a - b) <= 1e-9 * b + 1e-9);
        }
    }
}

/* Shadowed links (left out of the problem while another link of no more
 * bandwidth carries all their flows) change no finish time: the random runs
 * against the same runs with every link in the problem, refilled in full. */
static void test_shadowing_changes_no_time(void)
{
    static Scen inc, ref, plain;
    double worst = 0;
    uint64_t w_shadow = 0, w_plain = 0;
    for (uint64_t seed = 1; seed <= 40; seed++) {
        run_scenario_shadow(seed, false, seed % 2 == 0, true, &inc);
        run_scenario_shadow(seed, true, seed % 2 == 0, false, &ref);
        run_scenario_shadow(seed, false, seed % 2 == 0, false, &plain);
        w_shadow += inc.work;
        w_plain += plain.work;
        CU_ASSERT_EQUAL(inc.started, ref.started);
        for (int i = 0; i < inc.started && i < ref.started; i++) {
            double a = sim_time_to_s(inc.done_at[i]), b = sim_time_to_s(ref.done_at[i]);
            CU_ASSERT(fabs(a - b) <= 1e-9 * b + 1e-9);
            worst = fmax(worst, fabs(a - b) / b);
        }
    }
    printf("\n  largest relative difference of a finish time: %.3g; work %llu shadowed, %llu not\n", worst,
           (unsigned long long)w_shadow, (unsigned long long)w_plain);
    CU_ASSERT(w_shadow < w_plain); /* links were shadowed */
}

/* A chain of links of falling bandwidth: the first three are shadowed, so
 * rates are refilled on the last alone; a flow on the second alone then
 * makes it explicit (its flows get their entries) and it binds that flow. */
static void test_shadow_chain_and_break(void)
{
    SimEngine *e = sim_engine_new();
    SimNet *n = sim_net_new(e);
    sim_net_set_verify(n, true);
    int l[4];
    for (int i = 0; i < 4; i++)
        l[i] = sim_net_add_link(n, 4e9 - 1e9 * i, 0); /* 4, 3, 2, 1 GB/s */
    sim_net_flow(n, 1e9, l, 4, NULL, NULL);  /* 1 GB/s: 1 s */
    sim_net_flow(n, 1e9, l, 4, NULL, NULL);  /* 0.5 GB/s each: 2 s */
    sim_net_flow(n, 5e9, &l[1], 1, NULL, NULL); /* link 1 (3 GB/s): 3 - 0.5 - 0.5 = 2 GB/s */
    sim_engine_run(e);
    CU_ASSERT(sim_net_verify_diff(n) <= 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(sim_net_link_bytes(n, l[0]), 2e9, 1);
    CU_ASSERT_DOUBLE_EQUAL(sim_net_link_bytes(n, l[1]), 7e9, 1);
    /* the big flow: 2 GB/s for 2 s (4e9), then 3 GB/s: 1e9 / 3e9 s more */
    CU_ASSERT_DOUBLE_EQUAL(sim_time_to_s(sim_engine_now(e)), 2 + 1.0 / 3, 1e-9);
    sim_net_free(n);
    sim_engine_free(e);
}

/* Flows held low elsewhere keep their rates: N flows cross a slow link S, a
 * fast link F and two more; M flows on F alone end one by one, each end moving
 * only the other flows on F above the slow ones' level (the incremental solver
 * reads F's rates, not the slow flows' paths).  The full recomputation refills
 * all N + M each time. */
static uint64_t work_of_ends(bool full)
{
    SimEngine *e = sim_engine_new();
    SimNet *n = sim_net_new(e);
    sim_net_set_full(n, full);
    sim_net_set_shadow(n, false); /* the solver's work alone: S would shadow the other three */
    int s = sim_net_add_link(n, 1e9, 0), f = sim_net_add_link(n, 1e12, 0);
    int sf[4] = {s, f, sim_net_add_link(n, 1e12, 0), sim_net_add_link(n, 1e12, 0)};
    for (int i = 0; i < 4000; i++)
        sim_net_flow(n, 4e9, sf, 4, NULL, NULL);
    for (int i = 0; i < 50; i++)
        sim_net_flow(n, 1e6 * (i + 1), &f, 1, NULL, NULL);
    sim_engine_run(e);
    uint64_t w = sim_net_work(n);
    CU_ASSERT_EQUAL(sim_net_active_flows(n), 0);
    sim_net_free(n);
    sim_engine_free(e);
    return w;
}

static void test_low_flows_are_not_refilled(void)
{
    uint64_t inc = work_of_ends(false), full = work_of_ends(true);
    printf("\n  work: incremental %llu, full %llu\n", (unsigned long long)inc, (unsigned long long)full);
    CU_ASSERT(inc * 5 < full);
}

static const TestCase tests[] = {
    {"rates match a full filling after every change", test_rates_match_full_filling},
    {"the full mode is the reference", test_full_mode_is_the_reference},
    {"finish times match the reference mode", test_finish_times_match_reference},
    {"flows held low elsewhere are not refilled", test_low_flows_are_not_refilled},
    {"shadowed links change no finish time", test_shadowing_changes_no_time},
    {"a chain of shadows, broken by a flow", test_shadow_chain_and_break},
};
TEST_MAIN("incremental max-min", tests)
