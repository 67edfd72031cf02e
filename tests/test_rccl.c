/* RCCL as its own library (models/coll_rccl.c): the default on AMD
 * topologies, its latencies, MSCCL on one 8-GPU node, no LL128 on one node, the tuning
 * model's rating, switching back to NCCL, its keys, and validate reading the
 * library from an rccl-tests trace. */
#include "collective.h"
#include "test_load.h"
#include "test_main.h"
#include "validate.h"

#include <math.h>
#include <string.h>

#define DATA SHARDSIM_SOURCE_DIR "/tests/data/traces/"

static double param(const char *key)
{
    CollParams *p = coll_params_new(NULL, NULL);
    int i = coll_params_find(key);
    CU_ASSERT_TRUE_FATAL(p != NULL && i >= 0);
    double v = coll_params_get(p, i);
    coll_params_free(p);
    return v;
}

static void test_default_library(void)
{
    Topo *amd = load("mi300x-node", 0), *amd2 = load("mi355x-cluster", 2), *nv = load("dgx-h100", 0);
    CU_ASSERT_TRUE_FATAL(amd && amd2 && nv);
    CU_ASSERT_EQUAL(coll_library_default(amd), COLL_LIB_RCCL);
    CU_ASSERT_EQUAL(coll_library_default(amd2), COLL_LIB_RCCL);
    CU_ASSERT_EQUAL(coll_library_default(nv), COLL_LIB_NCCL);
    CU_ASSERT_EQUAL(coll_library_parse("RCCL"), COLL_LIB_RCCL);
    CU_ASSERT_EQUAL(coll_library_parse("nccl"), COLL_LIB_NCCL);
    CU_ASSERT_EQUAL(coll_library_parse("mpi"), -1);
    CU_ASSERT_STRING_EQUAL(coll_library_name(COLL_LIB_RCCL), "rccl");
    topo_free(amd);
    topo_free(amd2);
    topo_free(nv);
}

/* One MI300X node: MSCCL's all-pairs from 1 KiB (256 floats) to 16 MiB,
 * the tuner's ring LL below; a direct all-reduce is two steps; none from
 * RCCL 2.28, which removed MSCCL. */
static void test_msccl_one_node(void)
{
    Topo *t = load("mi300x-node", 0);
    CollGroup *g = t ? group(t) : NULL;
    CU_ASSERT_TRUE_FATAL(g != NULL);
    coll_group_set_library(g, COLL_LIB_RCCL);
    CollCost c;
    CU_ASSERT_TRUE_FATAL(coll_cost(g, COLL_ALLREDUCE, COLL_ALGO_AUTO, COLL_PROTO_AUTO, 4096, &c));
    CU_ASSERT_EQUAL(c.algo, COLL_DIRECT);
    CU_ASSERT_EQUAL(c.proto, COLL_LL);
    double lat = param("rccl.base_latency.ll") + 2 * param("rccl.step_latency.nvlink.ring.ll");
    CU_ASSERT_DOUBLE_EQUAL(c.latency_s, lat, 1e-12);
    CU_ASSERT_TRUE_FATAL(coll_cost(g, COLL_ALLREDUCE, COLL_ALGO_AUTO, COLL_PROTO_AUTO, 4 << 20, &c));
    CU_ASSERT_EQUAL(c.algo, COLL_DIRECT);
    CU_ASSERT_EQUAL(c.proto, COLL_SIMPLE);
    CU_ASSERT_TRUE_FATAL(coll_cost(g, COLL_ALLREDUCE, COLL_ALGO_AUTO, COLL_PROTO_AUTO, 512, &c));
    CU_ASSERT_NOT_EQUAL(c.algo, COLL_DIRECT); /* 128 floats: not a whole loop of 256 chunks */
    CU_ASSERT_TRUE_FATAL(coll_cost(g, COLL_ALLREDUCE, COLL_ALGO_AUTO, COLL_PROTO_AUTO, 64.0 * (1 << 20), &c));
    CU_ASSERT_NOT_EQUAL(c.algo, COLL_DIRECT); /* past MSCCL's largest */
    /* RCCL 2.28 removed MSCCL: the tuner's choice again; 2.27 still had it */
    coll_group_set_nccl_version(g, coll_nccl_version_parse("2.28"));
    CU_ASSERT_TRUE_FATAL(coll_cost(g, COLL_ALLREDUCE, COLL_ALGO_AUTO, COLL_PROTO_AUTO, 4096, &c));
    CU_ASSERT_NOT_EQUAL(c.algo, COLL_DIRECT);
    coll_group_set_nccl_version(g, coll_nccl_version_parse("2.27.7"));
    CU_ASSERT_TRUE_FATAL(coll_cost(g, COLL_ALLREDUCE, COLL_ALGO_AUTO, COLL_PROTO_AUTO, 4096, &c));
    CU_ASSERT_EQUAL(c.algo, COLL_DIRECT);
    coll_group_set_nccl_version(g, 0);
    /* no LL128 on one AMD node */
    CU_ASSERT_FALSE(coll_cost(g, COLL_ALLREDUCE, COLL_RING, COLL_LL128, 4096, &c));
    /* NCCL's constants again, exactly as a fresh group has them */
    CollCost r, n;
    coll_group_set_library(g, COLL_LIB_NCCL);
    CollGroup *fresh = group(t);
    CU_ASSERT_TRUE_FATAL(fresh != NULL);
    CU_ASSERT_TRUE(coll_cost(g, COLL_ALLREDUCE, COLL_ALGO_AUTO, COLL_PROTO_AUTO, 4096, &r));
    CU_ASSERT_TRUE(coll_cost(fresh, COLL_ALLREDUCE, COLL_ALGO_AUTO, COLL_PROTO_AUTO, 4096, &n));
    CU_ASSERT_EQUAL(r.algo, n.algo);
    CU_ASSERT_DOUBLE_EQUAL(r.time_s, n.time_s, 0);
    CU_ASSERT_NOT_EQUAL(r.algo, COLL_DIRECT);
    coll_group_free(fresh);
    coll_group_free(g);
    topo_free(t);
}

/* Two MI355X nodes: a small all-reduce on RCCL's tree LL, timed by its
 * default model (base + 2 x (7 GPU hops + 1 network hop)). */
static void test_two_nodes(void)
{
    Topo *t = load("mi355x-cluster", 2);
    CollGroup *g = t ? group(t) : NULL;
    CU_ASSERT_TRUE_FATAL(g != NULL);
    coll_group_set_library(g, COLL_LIB_RCCL);
    CollCost c;
    CU_ASSERT_TRUE_FATAL(coll_cost(g, COLL_ALLREDUCE, COLL_ALGO_AUTO, COLL_PROTO_AUTO, 8, &c));
    CU_ASSERT_EQUAL(c.algo, COLL_TREE);
    CU_ASSERT_EQUAL(c.proto, COLL_LL);
    double lat = param("rccl.base_latency.ll") +
                 2 * (7 * param("rccl.step_latency.nvlink.tree.ll") + param("rccl.step_latency.net.tree.ll"));
    CU_ASSERT_DOUBLE_EQUAL(c.latency_s, lat, 1e-12);
    /* the tuning model rates a ring Simple step across the network at 320 us:
     * RCCL keeps off the ring until the largest sizes */
    CU_ASSERT_TRUE(param("rccl.mesh_tuning.step_latency.net.ring.simple") > 1e-4);
    CU_ASSERT_TRUE_FATAL(coll_cost(g, COLL_ALLREDUCE, COLL_ALGO_AUTO, COLL_PROTO_AUTO, 16 << 20, &c));
    CU_ASSERT_EQUAL(c.algo, COLL_TREE);
    CU_ASSERT_TRUE_FATAL(coll_cost(g, COLL_ALLREDUCE, COLL_ALGO_AUTO, COLL_PROTO_AUTO, 128 << 20, &c));
    CU_ASSERT_EQUAL(c.proto, COLL_SIMPLE); /* past gfx950's LL128 range (70640910 B) */
    /* the time of a forced ring is RCCL's default model, not the rating */
    CollCost ring;
    CU_ASSERT_TRUE_FATAL(coll_cost(g, COLL_ALLREDUCE, COLL_RING, COLL_SIMPLE, 16 << 20, &ring));
    CU_ASSERT_TRUE(ring.latency_s < 1e-3);
    coll_group_free(g);
    topo_free(t);
}

/* The rccl keys are parameters like the others: an overlay value moves the time. */
static void test_keys(void)
{
    CollParams *p = coll_params_new(NULL, NULL);
    int i = coll_params_find("rccl.base_latency.ll");
    CU_ASSERT_TRUE_FATAL(p != NULL && i >= 0);
    double lo, hi, sd;
    bool fit = false;
    coll_params_bounds(i, &lo, &hi, &sd, &fit);
    CU_ASSERT_TRUE(fit);
    coll_params_bounds(coll_params_find("rccl.mesh_tuning.step_latency.net.ring.simple"), &lo, &hi, &sd, &fit);
    CU_ASSERT_FALSE(fit); /* a rating, not a time */
    CU_ASSERT_TRUE(coll_params_set(p, i, coll_params_get(p, i) + 10e-6));
    Topo *t = load("mi355x-cluster", 2);
    CU_ASSERT_TRUE_FATAL(t != NULL);
    CollGroup *a = group(t), *b = coll_group_new_with(t, NULL, 0, p, NULL);
    CU_ASSERT_TRUE_FATAL(a && b);
    coll_group_set_library(a, COLL_LIB_RCCL);
    coll_group_set_library(b, COLL_LIB_RCCL);
    CollCost ca, cb;
    CU_ASSERT_TRUE(coll_cost(a, COLL_ALLREDUCE, COLL_TREE, COLL_LL, 8, &ca));
    CU_ASSERT_TRUE(coll_cost(b, COLL_ALLREDUCE, COLL_TREE, COLL_LL, 8, &cb));
    CU_ASSERT_DOUBLE_EQUAL(cb.latency_s - ca.latency_s, 10e-6, 1e-12);
    coll_group_free(a);
    coll_group_free(b);
    coll_params_free(p);
    topo_free(t);
}

/* validate takes the library from the trace (rccl-tests), and --nccl-library over it. */
static void test_validate_reads_library(void)
{
    const char *lib[] = {NULL, "nccl"}, *want[] = {"rccl", "nccl"};
    for (int k = 0; k < 2; k++) {
        ValidateOptions o = {.topology = "mi300x-node", .op = -1, .algo = COLL_ALGO_AUTO, .proto = COLL_PROTO_AUTO,
                             .nccl_library = lib[k]};
        Validation *v = validate_new(&o);
        GError *err = NULL;
        CU_ASSERT_TRUE(validate_trace(v, DATA "rccl-tests_allreduce_mi300x_8gpu_1node.txt", &err));
        g_clear_error(&err);
        CU_ASSERT_TRUE_FATAL(validate_n_runs(v) == 1);
        const ValidateRun *r = validate_run(v, 0);
        CU_ASSERT_TRUE_FATAL(r->nccl_library != NULL);
        CU_ASSERT_STRING_EQUAL(r->nccl_library, want[k]);
        validate_free(v);
    }
    /* an nccl-tests trace on an NVIDIA preset stays NCCL's */
    ValidateOptions o = {.topology = "dgx1-v100", .op = -1, .algo = COLL_ALGO_AUTO, .proto = COLL_PROTO_AUTO};
    Validation *v = validate_new(&o);
    CU_ASSERT_TRUE(validate_trace(v, DATA "nccl-tests_allreduce_v100-sxm2-16gb_8gpu_hybrid-cube-mesh.txt", NULL));
    CU_ASSERT_TRUE_FATAL(validate_n_runs(v) == 1);
    CU_ASSERT_STRING_EQUAL(validate_run(v, 0)->nccl_library, "nccl");
    validate_free(v);
}

static const TestCase tests[] = {
    {"default library", test_default_library},
    {"MSCCL on one node", test_msccl_one_node},
    {"two nodes", test_two_nodes},
    {"keys", test_keys},
    {"validate reads the library", test_validate_reads_library},
};
TEST_MAIN("rccl", tests)
