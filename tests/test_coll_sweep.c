/* models/coll_sweep: the sizes a --sizes spec means, the topology grown for
 * more ranks, ranks spread evenly over nodes, and one size's bandwidths. */
#include "coll_sweep.h"
#include "test_main.h"

#include <math.h>

static GArray *sizes_of(const char *spec, bool *ok)
{
    GArray *a = g_array_new(FALSE, FALSE, sizeof(double));
    *ok = coll_sweep_parse_sizes(spec, a);
    return a;
}

static double at(const GArray *a, guint i) { return g_array_index(a, double, i); }

static void test_sizes_range(void)
{
    bool ok;
    GArray *a = sizes_of("8B:8GiB", &ok);
    CU_ASSERT_TRUE(ok);
    CU_ASSERT_EQUAL(a->len, 31); /* 2^3 .. 2^33 */
    CU_ASSERT_DOUBLE_EQUAL(at(a, 0), 8, 0);
    CU_ASSERT_DOUBLE_EQUAL(at(a, a->len - 1), 8589934592.0, 0);
    g_array_free(a, TRUE);
    a = sizes_of("1M:64M:4", &ok);
    CU_ASSERT_TRUE(ok);
    CU_ASSERT_EQUAL(a->len, 4);
    CU_ASSERT_DOUBLE_EQUAL(at(a, 3), 64.0 * 1048576, 0);
    g_array_free(a, TRUE);
    a = sizes_of("1:4:1.1", &ok); /* 1, 1.1, 1.21 ... round to 1 once, then 2 ... */
    CU_ASSERT_TRUE(ok);
    for (guint i = 1; i < a->len; i++)
        CU_ASSERT_TRUE(at(a, i) > at(a, i - 1));
    g_array_free(a, TRUE);
}

static void test_sizes_list_and_bad(void)
{
    bool ok;
    GArray *a = sizes_of("1K, 1M,8", &ok);
    CU_ASSERT_TRUE(ok);
    CU_ASSERT_EQUAL(a->len, 3);
    CU_ASSERT_DOUBLE_EQUAL(at(a, 1), 1048576, 0);
    CU_ASSERT_DOUBLE_EQUAL(at(a, 2), 8, 0);
    g_array_free(a, TRUE);
    const char *bad[] = {"", "0:8", "8:4", "1:2TiB", "1,0", "1K,", "1:8:1", "1:8:x", "1:1P:1.0000001"};
    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
        a = sizes_of(bad[i], &ok);
        CU_ASSERT_FALSE(ok);
        g_array_free(a, TRUE);
    }
}

static void test_topo_grows_for_ranks(void)
{
    GError *err = NULL;
    Topo *t = coll_sweep_topo("dgx-a100-cluster", 0, 100, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_EQUAL(topo_num_ranks(t), 104); /* 13 nodes of 8 */
    topo_free(t);
    t = coll_sweep_topo("dgx-a100-cluster", 2, 100, &err); /* nodes given: never grown */
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_EQUAL(topo_num_ranks(t), 16);
    topo_free(t);
    CU_ASSERT_PTR_NULL(coll_sweep_topo("no-such-topology", 0, 0, &err));
    CU_ASSERT_PTR_NOT_NULL(err);
    g_clear_error(&err);
}

static void test_ranks_spread(void)
{
    GError *err = NULL;
    Topo *t = coll_sweep_topo("dgx-a100-cluster", 0, 0, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    int used = 0;
    int *ids = coll_sweep_ranks(t, 12, &used);
    CU_ASSERT_PTR_NOT_NULL_FATAL(ids);
    CU_ASSERT_EQUAL(used, 2);
    CU_ASSERT_EQUAL(ids[0], 0);
    CU_ASSERT_EQUAL(ids[5], 5);
    CU_ASSERT_EQUAL(ids[6], 8); /* second node's first rank */
    CU_ASSERT_EQUAL(ids[11], 13);
    g_free(ids);
    CU_ASSERT_PTR_NULL(coll_sweep_ranks(t, 13, &used)); /* 13 over 2 nodes */
    CU_ASSERT_EQUAL(used, 2);
    topo_free(t);
}

static void test_row_bandwidths(void)
{
    GError *err = NULL;
    Topo *t = coll_sweep_topo("ring8", 0, 0, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CollGroup *g = coll_group_new(t, NULL, 0, NULL, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    CollSweepRow r;
    CU_ASSERT_TRUE(coll_sweep_row(g, COLL_ALLREDUCE, COLL_RING, COLL_SIMPLE, 1 << 20, false, &r));
    CU_ASSERT_TRUE(r.cost.time_s > 0);
    CU_ASSERT_DOUBLE_EQUAL(r.algbw_Bps, (1 << 20) / r.cost.time_s, 1e-6 * r.algbw_Bps);
    CU_ASSERT_DOUBLE_EQUAL(r.busbw_Bps, r.algbw_Bps * 2.0 * 7 / 8, 1e-6 * r.busbw_Bps); /* 2(n-1)/n */
    CU_ASSERT_TRUE(isnan(r.flow_time_s));
    CU_ASSERT_TRUE(coll_sweep_row(g, COLL_ALLREDUCE, COLL_RING, COLL_SIMPLE, 1 << 20, true, &r));
    CU_ASSERT_TRUE(r.flow_time_s > 0 && isfinite(r.flow_time_s));
    CU_ASSERT_FALSE(coll_sweep_row(g, COLL_ALLREDUCE, COLL_COLLNET, COLL_SIMPLE, 1 << 20, false, &r));
    coll_group_free(g);
    topo_free(t);
}

static const TestCase tests[] = {
    {"sizes: ranges, factors, repeats dropped", test_sizes_range},
    {"sizes: lists; bad specs refused", test_sizes_list_and_bad},
    {"topology grows for more ranks", test_topo_grows_for_ranks},
    {"ranks spread evenly over the fewest nodes", test_ranks_spread},
    {"one size: algbw, busbw, flow time", test_row_bandwidths},
};

TEST_MAIN("coll_sweep", tests)
