/* A NIC transport's shipped NCCL environment (collectives.json
 * transports.*.nccl_profiles): GPUDirect-TCPXO's nccl-env-profile.sh leaves
 * NCCL 2.21 Ring and Tree with Simple and no NVLS, 2.23 LL128 as well, and
 * from 2.26 every algorithm with Simple and LL128; GPUDirect-TCPX's recipes
 * Ring and Simple.  FasTrak reports no latency to the tuner.  The tuner chooses within
 * that; an algorithm or protocol asked for by name still runs; one node
 * (no transport) keeps NCCL's defaults; bad profiles are refused. */
#include "collective.h"
#include "sim_data.h"
#include "test_load.h"
#include "test_main.h"
#include "test_tmpfile.h"

#include <string.h>

static CollGroup *a3mega(Topo **t, int nodes, const char *version)
{
    return group_at(t, "gcp-a3mega", NULL, NULL, nodes, version);
}

/* Whether every auto choice from 8 B to 8 GiB is among ALGOS and PROTOS
 * (bit masks), and which algorithms and protocols came up. */
static bool choices_within(const CollGroup *g, unsigned algos, unsigned protos, unsigned *seen_a, unsigned *seen_p)
{
    bool ok = true;
    *seen_a = *seen_p = 0;
    for (double b = 8; b <= 8.0 * (1u << 30); b *= 2) {
        CollCost c = allreduce_cost(g, COLL_ALGO_AUTO, COLL_PROTO_AUTO, b);
        *seen_a |= 1u << c.algo;
        *seen_p |= 1u << c.proto;
        ok &= ((algos >> c.algo) & 1) && ((protos >> c.proto) & 1);
    }
    return ok;
}

#define BIT(x) (1u << (x))

static void test_tcpxo_profiles_by_version(void)
{
    Topo *t;
    unsigned a, p;
    /* 2.21 (plugin v1.0.1-v1.0.7): Ring,Tree; Simple; NVLS off */
    CollGroup *g = a3mega(&t, 2, "2.21.5");
    CU_ASSERT_TRUE(choices_within(g, BIT(COLL_RING) | BIT(COLL_TREE), BIT(COLL_SIMPLE), &a, &p));
    CU_ASSERT_EQUAL(a, BIT(COLL_RING) | BIT(COLL_TREE)); /* both come up */
    coll_group_free(g);
    topo_free(t);
    /* 2.23: LL128 too, still no NVLS */
    g = a3mega(&t, 2, "2.23.4");
    CU_ASSERT_TRUE(choices_within(g, BIT(COLL_RING) | BIT(COLL_TREE), BIT(COLL_SIMPLE) | BIT(COLL_LL128), &a, &p));
    CU_ASSERT_TRUE(p & BIT(COLL_LL128));
    coll_group_free(g);
    topo_free(t);
    /* the newest: NVLSTree back, LL still off */
    g = a3mega(&t, 2, NULL);
    CU_ASSERT_TRUE(choices_within(g, ~0u, BIT(COLL_SIMPLE) | BIT(COLL_LL128), &a, &p));
    CU_ASSERT_TRUE(a & BIT(COLL_NVLS_TREE));
    coll_group_free(g);
    topo_free(t);
}

/* GPUDirect-TCPX's recipes run NCCL_ALGO=Ring, NCCL_PROTO=Simple: the A3
 * Mega node over TCPX NICs takes nothing else, at any version. */
static void test_tcpx_ring_simple(void)
{
    Topo *t = load_edited("gcp-a3mega", "\"transport\": \"tcpxo\"", "\"transport\": \"tcpx\"", 2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    const char *versions[] = {"2.21.5", NULL};
    for (size_t i = 0; i < G_N_ELEMENTS(versions); i++) {
        CollGroup *g = group(t);
        CU_ASSERT_PTR_NOT_NULL_FATAL(g);
        if (versions[i])
            coll_group_set_nccl_version(g, coll_nccl_version_parse(versions[i]));
        unsigned a, p;
        CU_ASSERT_TRUE(choices_within(g, BIT(COLL_RING), BIT(COLL_SIMPLE), &a, &p));
        coll_group_free(g);
    }
    topo_free(t);
}

/* Named choices run as asked (NCCL_ALGO / NCCL_PROTO set by hand), and the
 * same node alone keeps LL (the profile governs the network transport). */
static void test_tcpxo_profile_limits(void)
{
    Topo *t;
    CollGroup *g = a3mega(&t, 2, "2.21.5");
    CollCost ll = allreduce_cost(g, COLL_TREE, COLL_LL, 8);
    CU_ASSERT_EQUAL(ll.proto, COLL_LL);
    CollCost ll_auto = allreduce_cost(g, COLL_TREE, COLL_PROTO_AUTO, 8);
    CU_ASSERT_EQUAL(ll_auto.proto, COLL_SIMPLE);
    CollCost nvlstree = allreduce_cost(g, COLL_NVLS_TREE, COLL_PROTO_AUTO, 1 << 30);
    CU_ASSERT_EQUAL(nvlstree.algo, COLL_NVLS_TREE);
    /* what the profile leaves is the tuner's best among them */
    CollCost best = allreduce_cost(g, COLL_ALGO_AUTO, COLL_PROTO_AUTO, 1 << 30);
    CollCost ring = allreduce_cost(g, COLL_RING, COLL_SIMPLE, 1 << 30), tree = allreduce_cost(g, COLL_TREE, COLL_SIMPLE, 1 << 30);
    CU_ASSERT_DOUBLE_EQUAL(best.time_s, best.algo == COLL_RING ? ring.time_s : tree.time_s, 1e-12);
    coll_group_free(g);
    topo_free(t);

    g = a3mega(&t, 1, "2.21.5");
    CU_ASSERT_EQUAL(allreduce_cost(g, COLL_ALGO_AUTO, COLL_PROTO_AUTO, 8).proto, COLL_LL);
    coll_group_free(g);
    topo_free(t);
    /* an all-to-all (no tuner algorithm) still finds one */
    g = a3mega(&t, 2, "2.21.5");
    CollCost c;
    CU_ASSERT_TRUE(coll_cost(g, COLL_ALLTOALL, COLL_ALGO_AUTO, COLL_PROTO_AUTO, 1 << 20, &c));
    coll_group_free(g);
    topo_free(t);
}

/* The default parameters with the TCPXO profiles replaced by `profiles`:
 * whether a group loads, and the error if not. */
static bool loads_with(const char *profiles, char **msg)
{
    char *path = sim_data_dir("models/presets/collectives.json"), *text = NULL;
    CU_ASSERT_TRUE_FATAL(g_file_get_contents(path, &text, NULL, NULL));
    char *at = strstr(text, "\"nccl_profiles\": [");
    CU_ASSERT_PTR_NOT_NULL_FATAL(at);
    char *end = strstr(at, "\n      ],"); /* the list's own closing bracket */
    CU_ASSERT_PTR_NOT_NULL_FATAL(end);
    end += strlen("\n      ");
    *at = 0;
    char *edited = g_strdup_printf("%s\"nccl_profiles\": %s%s", text, profiles, end + 1);
    char *file = tmpfile_with("p.json", edited);
    Topo *t = load("gcp-a3mega", 2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    GError *err = NULL;
    CollGroup *g = coll_group_new(t, NULL, 0, file, &err);
    *msg = err ? g_strdup(err->message) : NULL;
    bool ok = g != NULL;
    g_clear_error(&err);
    coll_group_free(g);
    topo_free(t);
    tmpfile_remove(file);
    g_free(edited);
    g_free(text);
    g_free(path);
    return ok;
}

static void test_profile_errors(void)
{
    static const struct {
        const char *profiles, *says;
    } bad[] = {
        {"[{\"protocols\": [\"ll256\"]}]", "unknown name \"ll256\""},
        {"[{\"algorithms\": [\"ring\", 3]}]", "not a string"},
        {"[{\"algorithms\": []}]", "non-empty array"},
        {"[{\"before\": \"2.26\"}, {\"before\": \"2.23\"}]", "increasing"},
        {"[{\"protocols\": [\"simple\"]}, {\"before\": \"2.23\"}]", "every profile but the last"},
        {"[{\"before\": \"two\"}]", "NCCL version"},
        {"[1]", "must be an object"},
        {"[]", "1 to 4 objects"},
        {"{}", "1 to 4 objects"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
        char *msg = NULL;
        CU_ASSERT_FALSE(loads_with(bad[i].profiles, &msg));
        CU_ASSERT_PTR_NOT_NULL(msg);
        if (msg && !strstr(msg, bad[i].says))
            fprintf(stderr, "\n%s: %s\n", bad[i].profiles, msg);
        CU_ASSERT_TRUE(msg && strstr(msg, bad[i].says));
        CU_ASSERT_TRUE(msg && strstr(msg, "p.json:")); /* at its line */
        g_free(msg);
    }
    char *msg = NULL;
    CU_ASSERT_TRUE(loads_with("[{\"before\": \"2.23\", \"protocols\": [\"Simple\"]}, {}]", &msg));
    g_free(msg);
}

/* The FasTrak plugin reports no latency to NCCL (props.latency = 0): a
 * 2-node ring's 4 network crossings pay TCPXO's 10 us each, and a Simple
 * one its 2 us per message, in the time and not in the rating. */
static void test_tcpxo_latency_unseen_by_tuner(void)
{
    Topo *t;
    CollGroup *g = a3mega(&t, 2, "2.21.5");
    CollCost c = allreduce_cost(g, COLL_RING, COLL_SIMPLE, 8);
    CU_ASSERT_TRUE(c.tuner_latency_s > 0);
    CU_ASSERT_DOUBLE_EQUAL(c.latency_s - c.tuner_latency_s, 4 * (10e-6 + 2e-6), 1e-12);
    coll_group_free(g);
    topo_free(t);
}

static const TestCase tests[] = {
    {"TCPXO's latency is timed, not rated", test_tcpxo_latency_unseen_by_tuner},
    {"TCPXO's NCCL profile by version", test_tcpxo_profiles_by_version},
    {"TCPX: Ring and Simple only", test_tcpx_ring_simple},
    {"named choices, one node and all-to-all", test_tcpxo_profile_limits},
    {"bad profiles are refused at their line", test_profile_errors},
};
TEST_MAIN("nccl_profile", tests)
