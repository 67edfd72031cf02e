#include "sim_net.h"
#include "test_main.h"

#include <math.h>

typedef struct {
    sim_time_t done_at;
} Probe;

static void on_done(SimEngine *e, void *user)
{
    ((Probe *)user)->done_at = sim_engine_now(e);
}

static double secs(sim_time_t t) { return sim_time_to_s(t); }

/* Two equal flows on one link each get half of it. */
static void test_two_flows_share(void)
{
    SimEngine *e = sim_engine_new();
    SimNet *n = sim_net_new(e);
    int l = sim_net_add_link(n, 100e9, 0);
    Probe a = {0}, b = {0};
    sim_net_flow(n, 1e9, &l, 1, on_done, &a);
    sim_net_flow(n, 1e9, &l, 1, on_done, &b);
    sim_engine_run(e);
    CU_ASSERT_DOUBLE_EQUAL(secs(a.done_at), 0.02, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(secs(b.done_at), 0.02, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(sim_net_link_bytes(n, l), 2e9, 1);
    sim_net_free(n);
    sim_engine_free(e);
}

/* Flow A crosses links 0 (10 GB/s) and 1 (2 GB/s); flow B uses link 0 only.
 * A is held to 2 GB/s by link 1, so B gets the remaining 8 GB/s of link 0. */
static void test_bottleneck_elsewhere(void)
{
    SimEngine *e = sim_engine_new();
    SimNet *n = sim_net_new(e);
    int l0 = sim_net_add_link(n, 10e9, 0), l1 = sim_net_add_link(n, 2e9, 0);
    int pa[2] = {l0, l1};
    Probe a = {0}, b = {0};
    sim_net_flow(n, 2e9, pa, 2, on_done, &a); /* 1 s at 2 GB/s */
    sim_net_flow(n, 8e9, &l0, 1, on_done, &b); /* 1 s at 8 GB/s */
    sim_engine_run(e);
    CU_ASSERT_DOUBLE_EQUAL(secs(a.done_at), 1.0, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(secs(b.done_at), 1.0, 1e-9);
    sim_net_free(n);
    sim_engine_free(e);
}

/* Latency adds once per path: 3 links of 1 us each, 1 MB at 1 GB/s -> 1 ms + 3 us. */
static void test_latency_once_per_path(void)
{
    SimEngine *e = sim_engine_new();
    SimNet *n = sim_net_new(e);
    int p[3];
    for (int i = 0; i < 3; i++)
        p[i] = sim_net_add_link(n, 1e9, sim_time_from_s(1e-6));
    Probe a = {0}, z = {0};
    sim_net_flow(n, 1e6, p, 3, on_done, &a);
    sim_net_flow(n, 0, p, 3, on_done, &z); /* an empty message still pays the latency */
    sim_engine_run(e);
    CU_ASSERT_DOUBLE_EQUAL(secs(a.done_at), 1e-3 + 3e-6, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(secs(z.done_at), 3e-6, 1e-12);
    sim_net_free(n);
    sim_engine_free(e);
}

/* A flow that joins later slows the first one only while both are active.
 * A: 3 GB alone on 1 GB/s from t=0; B: 1 GB from t=1 s.
 * [0,1): A 1 GB; [1,3): both at 0.5 -> A has 1 GB left at t=3, B done at 3;
 * [3,4): A alone finishes its last 1 GB at t=4. */
typedef struct {
    SimAction act;
    SimNet *n;
    int link;
    Probe *p;
} Delayed;

static void delayed_fire(SimEngine *e, SimAction *a)
{
    (void)e;
    Delayed *d = (Delayed *)a;
    sim_net_flow(d->n, 1e9, &d->link, 1, on_done, d->p);
}

static void test_late_joiner(void)
{
    SimEngine *e = sim_engine_new();
    SimNet *n = sim_net_new(e);
    int l = sim_net_add_link(n, 1e9, 0);
    Probe a = {0}, b = {0};
    sim_net_flow(n, 3e9, &l, 1, on_done, &a);
    Delayed d = {{delayed_fire}, n, l, &b};
    sim_engine_schedule(e, sim_time_from_s(1.0), &d.act);
    sim_engine_run(e);
    CU_ASSERT_DOUBLE_EQUAL(secs(b.done_at), 3.0, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(secs(a.done_at), 4.0, 1e-9);
    sim_net_free(n);
    sim_engine_free(e);
}

/* The textbook max-min example: links L0 (1), L1 (1); flows f0 on L0+L1, f1 on L0,
 * f2 on L1, f3 on L1.  L1 is the bottleneck (3 flows -> 1/3 each); f1 then gets
 * L0's remaining 2/3. */
static void test_maxmin_textbook(void)
{
    SimEngine *e = sim_engine_new();
    SimNet *n = sim_net_new(e);
    int l0 = sim_net_add_link(n, 3e9, 0), l1 = sim_net_add_link(n, 3e9, 0);
    int p01[2] = {l0, l1};
    Probe f[4] = {{0}};
    /* bytes chosen so that every flow would finish at exactly 1 s at its fair rate */
    sim_net_flow(n, 1e9, p01, 2, on_done, &f[0]);
    sim_net_flow(n, 2e9, &l0, 1, on_done, &f[1]);
    sim_net_flow(n, 1e9, &l1, 1, on_done, &f[2]);
    sim_net_flow(n, 1e9, &l1, 1, on_done, &f[3]);
    sim_engine_run(e);
    for (int i = 0; i < 4; i++)
        CU_ASSERT_DOUBLE_EQUAL(secs(f[i].done_at), 1.0, 1e-9);
    sim_net_free(n);
    sim_engine_free(e);
}

/* Many staggered flows on a shared link conserve bytes: the link is never idle,
 * so the last one ends at total bytes / bandwidth. */
static void test_work_conserving(void)
{
    SimEngine *e = sim_engine_new();
    SimNet *n = sim_net_new(e);
    int l = sim_net_add_link(n, 1e9, 0);
    Probe p[100] = {{0}};
    double total = 0;
    for (int i = 0; i < 100; i++) {
        double bytes = 1e6 * (1 + i % 7);
        total += bytes;
        sim_net_flow(n, bytes, &l, 1, on_done, &p[i]);
    }
    sim_time_t end = sim_engine_run(e);
    CU_ASSERT_DOUBLE_EQUAL(secs(end), total / 1e9, 1e-9);
    CU_ASSERT_EQUAL(sim_net_active_flows(n), 0);
    sim_net_free(n);
    sim_engine_free(e);
}

static const TestCase tests[] = {
    {"two flows on one link get half each", test_two_flows_share},
    {"a flow bottlenecked elsewhere leaves the rest", test_bottleneck_elsewhere},
    {"latency adds once per path", test_latency_once_per_path},
    {"a late joiner shares only while active", test_late_joiner},
    {"max-min textbook example", test_maxmin_textbook},
    {"work conserving", test_work_conserving},
};
TEST_MAIN("network", tests)
