#include "sim_exec.h"
#include "test_main.h"

#define US(x) ((sim_time_t)(x) * 1000000ULL)

static SimGraph *g;
static SimEngine *e;

static void setup(void)
{
    g = sim_graph_new();
    e = sim_engine_new();
}

static void teardown(void)
{
    sim_graph_free(g);
    sim_engine_free(e);
}

/* A -> {B, C} -> D with B, C on different resources: makespan = A + max(B, C) + D. */
static void test_diamond(void)
{
    setup();
    int r0 = sim_graph_resource(g, "gpu0.compute"), r1 = sim_graph_resource(g, "gpu0.comm");
    int a = sim_graph_task(g, "A", r0, US(3));
    int b = sim_graph_task(g, "B", r0, US(5));
    int c = sim_graph_task(g, "C", r1, US(7));
    int d = sim_graph_task(g, "D", r0, US(2));
    sim_graph_depend(g, a, b);
    sim_graph_depend(g, a, c);
    sim_graph_depend(g, b, d);
    sim_graph_depend(g, c, d);
    CU_ASSERT_EQUAL(sim_graph_run(g, e, NULL), US(3 + 7 + 2));
    CU_ASSERT_EQUAL(sim_graph_task_start(g, b), US(3));
    CU_ASSERT_EQUAL(sim_graph_task_start(g, c), US(3));
    CU_ASSERT_EQUAL(sim_graph_task_start(g, d), US(10));
    teardown();
}

/* The same diamond with B and C on one resource: they serialise. */
static void test_resource_exclusive(void)
{
    setup();
    int r0 = sim_graph_resource(g, "gpu0.compute");
    int a = sim_graph_task(g, "A", r0, US(3));
    int b = sim_graph_task(g, "B", r0, US(5));
    int c = sim_graph_task(g, "C", r0, US(7));
    int d = sim_graph_task(g, "D", r0, US(2));
    sim_graph_depend(g, a, b);
    sim_graph_depend(g, a, c);
    sim_graph_depend(g, b, d);
    sim_graph_depend(g, c, d);
    CU_ASSERT_EQUAL(sim_graph_run(g, e, NULL), US(3 + 5 + 7 + 2));
    /* FIFO: B was made ready first, so it runs first */
    CU_ASSERT_EQUAL(sim_graph_task_start(g, b), US(3));
    CU_ASSERT_EQUAL(sim_graph_task_start(g, c), US(8));
    /* no two tasks on the resource overlap */
    int ids[4] = {a, b, c, d};
    for (int i = 0; i < 4; i++)
        for (int j = i + 1; j < 4; j++) {
            bool overlap = sim_graph_task_start(g, ids[i]) < sim_graph_task_end(g, ids[j]) &&
                           sim_graph_task_start(g, ids[j]) < sim_graph_task_end(g, ids[i]);
            CU_ASSERT_FALSE(overlap);
        }
    teardown();
}

/* Independent tasks on one resource run in the order they were added. */
static void test_fifo_and_dependency_order(void)
{
    setup();
    int r = sim_graph_resource(g, "s");
    int t[5];
    for (int i = 0; i < 5; i++)
        t[i] = sim_graph_task(g, "t", r, US(1));
    int x = sim_graph_task(g, "x", SIM_NO_RESOURCE, US(10));
    sim_graph_depend(g, t[4], x);
    sim_graph_depend(g, x, t[0]); /* t0 must wait for x although added first */
    CU_ASSERT_EQUAL(sim_graph_run(g, e, NULL), US(4 + 10 + 1));
    for (int i = 1; i < 5; i++)
        CU_ASSERT_EQUAL(sim_graph_task_start(g, t[i]), US(i - 1));
    CU_ASSERT_EQUAL(sim_graph_task_start(g, t[0]), US(14));
    CU_ASSERT_TRUE(sim_graph_task_end(g, x) <= sim_graph_task_start(g, t[0]));
    teardown();
}

static void test_cycle_reported(void)
{
    setup();
    int a = sim_graph_task(g, "a", SIM_NO_RESOURCE, US(1));
    int b = sim_graph_task(g, "b", SIM_NO_RESOURCE, US(1));
    int c = sim_graph_task(g, "c", SIM_NO_RESOURCE, US(1));
    sim_graph_depend(g, a, b);
    sim_graph_depend(g, b, a);
    CU_ASSERT_EQUAL(sim_graph_run(g, e, NULL), SIM_TIME_NEVER);
    CU_ASSERT_EQUAL(sim_graph_task_end(g, c), US(1));
    teardown();
}

/* Flow tasks: two 1 MB transfers share a 1 GB/s link, a third waits on both. */
static void test_flow_tasks(void)
{
    setup();
    SimNet *net = sim_net_new(e);
    int l = sim_net_add_link(net, 1e9, 0);
    int f1 = sim_graph_flow_task(g, "f1", SIM_NO_RESOURCE, 1e6, &l, 1);
    int f2 = sim_graph_flow_task(g, "f2", SIM_NO_RESOURCE, 1e6, &l, 1);
    int k = sim_graph_task(g, "k", SIM_NO_RESOURCE, US(1));
    sim_graph_depend(g, f1, k);
    sim_graph_depend(g, f2, k);
    CU_ASSERT_EQUAL(sim_graph_run(g, e, net), US(2000 + 1));
    CU_ASSERT_EQUAL(sim_graph_task_end(g, f1), US(2000));
    sim_net_free(net);
    teardown();
}

static const TestCase tests[] = {
    {"diamond makespan by hand", test_diamond},
    {"resource exclusivity", test_resource_exclusive},
    {"FIFO and dependency order", test_fifo_and_dependency_order},
    {"cycle leaves tasks unrun", test_cycle_reported},
    {"flow tasks on the network", test_flow_tasks},
};
TEST_MAIN("executor", tests)
