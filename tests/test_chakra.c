/* Chakra ET: hand-made traces with known answers (a chain of compute, an
 * all-reduce between computes, a send/receive pair, FLOPs through the
 * accelerator model), the round trip of a simulated step (export, replay,
 * the same step time to the picosecond), and every malformed file refused
 * with its file and node. */
#include "chakra_replay.h"
#include "sim_time.h"
#include "scenario.h"
#include "step.h"
#include "test_main.h"

#include <glib/gstdio.h>
#include <string.h>

#define US 1000000ULL /* ps */

static ChakraNode mk(uint64_t id, int type, uint64_t us)
{
    return (ChakraNode){.id = id, .name = g_strdup("n"), .type = type, .duration_us = us, .duration_ps = -1,
                        .comm_type = -1, .comm_size = -1, .comm_src = -1, .comm_dst = -1, .comm_tag = -1,
                        .pg_name = g_strdup(""), .stream = CHAKRA_NO_STREAM};
}

static void dep(ChakraNode *n, uint64_t id)
{
    n->deps = g_renew(uint64_t, n->deps, n->ndeps + 1);
    n->deps[n->ndeps++] = id;
}

static void free_nodes(ChakraNode *n, int k)
{
    for (int i = 0; i < k; i++) {
        g_free(n[i].name);
        g_free(n[i].deps);
        g_free(n[i].pg_name);
    }
}

static char *tmpdir(void)
{
    GError *err = NULL;
    char *d = g_dir_make_tmp("chakra-XXXXXX", &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    return d;
}

static void rmdir_all(char *d)
{
    GDir *dir = g_dir_open(d, 0, NULL);
    const char *f;
    while (dir && (f = g_dir_read_name(dir))) {
        char *p = g_build_filename(d, f, NULL);
        g_unlink(p);
        g_free(p);
    }
    if (dir)
        g_dir_close(dir);
    g_rmdir(d);
    g_free(d);
}

/* Writes the first n of `total` nodes as rank r's file, and frees all of them. */
static void write_some(const char *dir, int r, ChakraNode *nodes, int n, int total)
{
    ChakraRank rk = {.version = (char *)"0.0.4", .topo_rank = -1, .nodes = nodes, .n = n};
    char *p = g_strdup_printf("%s/t.%d.et", dir, r);
    GError *err = NULL;
    CU_ASSERT_TRUE(chakra_write_rank(p, &rk, &err));
    g_free(p);
    free_nodes(nodes, total);
}

static void write_rank(const char *dir, int r, ChakraNode *nodes, int n) { write_some(dir, r, nodes, n, n); }

static Topo *topo;
static Accel *acc;

static ChakraPlatform platform(ChakraTimes times)
{
    GError *err = NULL;
    if (!topo)
        topo = topo_load("dgx-a100", NULL, &err);
    if (!acc)
        acc = accel_load("a100-80gb", &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(topo);
    CU_ASSERT_PTR_NOT_NULL_FATAL(acc);
    return (ChakraPlatform){.topo = topo, .acc = acc, .dtype = ACCEL_BF16, .times = times};
}

/* The step time of DIR's trace in picoseconds; SIM_TIME_NEVER on an error (its message in *msg). */
static sim_time_t replay_on(const char *dir, ChakraPlatform pf, char **msg)
{
    GError *err = NULL;
    ChakraTrace *t = chakra_load_dir(dir, &err);
    cJSON *res = t ? chakra_replay(t, &pf, NULL, &err) : NULL;
    chakra_trace_free(t);
    sim_time_t out = SIM_TIME_NEVER;
    if (res)
        out = sim_time_from_s(cJSON_GetObjectItem(res, "step_time_s")->valuedouble);
    if (msg)
        *msg = err ? g_strdup(err->message) : NULL;
    if (err)
        CU_ASSERT_EQUAL(err->code, SIM_ERROR_INPUT);
    g_clear_error(&err);
    cJSON_Delete(res);
    return out;
}

static sim_time_t replay(const char *dir, ChakraTimes times, char **msg) { return replay_on(dir, platform(times), msg); }

static bool near(sim_time_t a, sim_time_t b) { return (a > b ? a - b : b - a) <= 2; /* ps of rounding through seconds */ }

static void test_chain(void)
{
    char *d = tmpdir();
    ChakraNode n[3] = {mk(5, CHAKRA_COMP, 10), mk(7, CHAKRA_COMP, 20), mk(9, CHAKRA_COMP, 30)};
    dep(&n[1], 5);
    dep(&n[2], 7);
    write_rank(d, 0, n, 3);
    CU_ASSERT_TRUE(near(replay(d, CHAKRA_TIMES_MODEL, NULL), 60 * US));
    CU_ASSERT_TRUE(near(replay(d, CHAKRA_TIMES_RECORDED, NULL), 60 * US));
    rmdir_all(d);
}

/* Independent nodes on one stream queue; on two streams they overlap. */
static void test_streams(void)
{
    char *d = tmpdir();
    ChakraNode n[2] = {mk(1, CHAKRA_COMP, 10), mk(2, CHAKRA_COMP, 20)};
    write_rank(d, 0, n, 2);
    CU_ASSERT_TRUE(near(replay(d, CHAKRA_TIMES_MODEL, NULL), 30 * US));
    ChakraNode m[2] = {mk(1, CHAKRA_COMP, 10), mk(2, CHAKRA_COMP, 20)};
    m[0].stream = 7;
    m[1].stream = 8;
    write_rank(d, 0, m, 2);
    CU_ASSERT_TRUE(near(replay(d, CHAKRA_TIMES_MODEL, NULL), 20 * US));
    rmdir_all(d);
}

/* rank 0: 10 us, all-reduce, 5 us; rank 1: 40 us, all-reduce, 5 us: the
 * all-reduce starts when rank 1 reaches it. */
static void test_allreduce(void)
{
    char *d = tmpdir();
    for (int r = 0; r < 2; r++) {
        ChakraNode n[3] = {mk(0, CHAKRA_COMP, r ? 40 : 10), mk(1, CHAKRA_COLL, 100), mk(2, CHAKRA_COMP, 5)};
        n[1].comm_type = CHAKRA_ALL_REDUCE;
        n[1].comm_size = 64 << 20;
        dep(&n[1], 0);
        dep(&n[2], 1);
        write_rank(d, r, n, 3);
    }
    ChakraPlatform pf = platform(CHAKRA_TIMES_MODEL);
    int ranks[] = {0, 1};
    GError *err = NULL;
    CollGroup *g = coll_group_new(pf.topo, ranks, 2, NULL, &err);
    CollCost c;
    CU_ASSERT_TRUE_FATAL(g && coll_cost(g, COLL_ALLREDUCE, COLL_ALGO_AUTO, COLL_PROTO_AUTO, 64 << 20, &c));
    coll_group_free(g);
    CU_ASSERT_TRUE(c.time_s > 100e-6); /* 64 MiB over NVLink: more than the recorded 100 us */
    sim_time_t model = replay(d, CHAKRA_TIMES_MODEL, NULL);
    CU_ASSERT_TRUE(near(model, 45 * US + sim_time_from_s(c.time_s)));
    CU_ASSERT_TRUE(near(replay(d, CHAKRA_TIMES_RECORDED, NULL), 145 * US));
    rmdir_all(d);
}

/* rank 0 computes 10 us and sends 8 MiB; rank 1 receives it, computes 7 us. */
static void test_send_recv(void)
{
    char *d = tmpdir();
    ChakraNode a[2] = {mk(0, CHAKRA_COMP, 10), mk(1, CHAKRA_SEND, 50)};
    a[1].comm_dst = 1;
    a[1].comm_size = 8 << 20;
    dep(&a[1], 0);
    write_rank(d, 0, a, 2);
    ChakraNode b[2] = {mk(0, CHAKRA_RECV, 50), mk(1, CHAKRA_COMP, 7)};
    b[0].comm_src = 0;
    b[0].comm_size = 8 << 20;
    dep(&b[1], 0);
    write_rank(d, 1, b, 2);
    ChakraPlatform pf = platform(CHAKRA_TIMES_MODEL);
    int ranks[] = {0, 1};
    CollGroup *g = coll_group_new(pf.topo, ranks, 2, NULL, NULL);
    CollCost c;
    CU_ASSERT_TRUE_FATAL(g && coll_cost(g, COLL_BROADCAST, COLL_ALGO_AUTO, COLL_PROTO_AUTO, 8 << 20, &c));
    coll_group_free(g);
    CU_ASSERT_TRUE(near(replay(d, CHAKRA_TIMES_MODEL, NULL), 17 * US + sim_time_from_s(c.time_s)));
    CU_ASSERT_TRUE(near(replay(d, CHAKRA_TIMES_RECORDED, NULL), 67 * US));
    rmdir_all(d);
}

/* A compute node with FLOPs goes through the accelerator's peak x best efficiency. */
static void test_num_ops(void)
{
    char *d = tmpdir();
    ChakraNode n[1] = {mk(0, CHAKRA_COMP, 1)};
    n[0].num_ops = 1e12;
    write_rank(d, 0, n, 1);
    ChakraPlatform pf = platform(CHAKRA_TIMES_MODEL);
    double s = 1e12 / (accel_peak_flops(pf.acc, ACCEL_BF16) * accel_gemm_eff_max(pf.acc, ACCEL_BF16));
    CU_ASSERT_TRUE(s > 1e-3 && s < 1e-2);
    CU_ASSERT_TRUE(near(replay(d, CHAKRA_TIMES_MODEL, NULL), sim_time_from_s(s)));
    CU_ASSERT_TRUE(near(replay(d, CHAKRA_TIMES_RECORDED, NULL), 1 * US));
    rmdir_all(d);
}

/* A step with pipeline, tensor and data parallelism: exported, replayed, the same step time. */
static void test_round_trip(void)
{
    static const char scen[] =
        "{\"accelerator\": \"a100-80gb\", \"topology\": \"dgx-a100-cluster\", \"nodes\": 2, \"model\": \"gpt3-1.3b\","
        " \"global_batch\": 32, \"micro_batch\": 2, \"precision\": \"bf16\", \"optimizer\": \"adam\","
        " \"parallelism\": {\"tp\": 2, \"pp\": 4, \"weight_update\": \"sharded\", \"zero_stage\": 1}}";
    GError *err = NULL;
    StepScenario *sc = step_scenario_parse("rt.json", scen, strlen(scen), &err);
    if (!sc)
        fprintf(stderr, "%s\n", err->message);
    CU_ASSERT_PTR_NOT_NULL_FATAL(sc);
    SimGraph *g = NULL;
    cJSON *res = step_scenario_run(sc, 0, &g, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(res);
    char *d = tmpdir();
    CU_ASSERT_EQUAL(chakra_export(g, d, &err), 4); /* one file per pipeline stage */
    sim_time_t step = sim_time_from_s(cJSON_GetObjectItem(res, "step_time_s")->valuedouble);
    ChakraPlatform pf = {.topo = step_scenario_topo(sc), .acc = step_scenario_accel(sc), .dtype = ACCEL_BF16,
                         .times = CHAKRA_TIMES_RECORDED};
    sim_time_t rec = replay_on(d, pf, NULL);
    pf.times = CHAKRA_TIMES_MODEL;
    sim_time_t mod = replay_on(d, pf, NULL);
    if (!near(rec, step) || !near(mod, step))
        fprintf(stderr, "step %" G_GUINT64_FORMAT " ps, replayed %" G_GUINT64_FORMAT " (recorded), %" G_GUINT64_FORMAT " (model)\n", step, rec, mod);
    CU_ASSERT_TRUE(near(rec, step));
    CU_ASSERT_TRUE(near(mod, step));
    ChakraTrace *t = chakra_load_dir(d, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    long nodes = 0;
    for (int r = 0; r < t->nranks; r++)
        nodes += t->ranks[r].n;
    CU_ASSERT_TRUE(nodes >= (long)sim_graph_num_tasks(g)); /* every task, plus the sync pairs */
    CU_ASSERT_EQUAL(t->ranks[1].topo_rank, 1 * 2 * 2); /* stage 1's device: Megatron's order, tp x dp ranks per stage */
    chakra_trace_free(t);
    rmdir_all(d);
    sim_graph_free(g);
    cJSON_Delete(res);
    step_scenario_free(sc);
}

/* Bytes as one rank's file: the parse's message, NULL if it parsed. */
static char *parse_bytes(const uint8_t *b, size_t n)
{
    ChakraRank r = {0};
    GError *err = NULL;
    bool ok = chakra_parse_rank("x.0.et", b, n, &r, &err);
    chakra_rank_clear(&r);
    char *m = ok ? NULL : g_strdup(err->message);
    if (err)
        CU_ASSERT_EQUAL(err->code, SIM_ERROR_INPUT);
    g_clear_error(&err);
    return m;
}

static void expect(char *msg, const char *part)
{
    CU_ASSERT_PTR_NOT_NULL(msg);
    if (msg && !strstr(msg, part)) {
        fprintf(stderr, "message \"%s\" lacks \"%s\"\n", msg, part);
        CU_FAIL("message");
    }
    g_free(msg);
}

static void test_malformed_bytes(void)
{
    /* metadata: empty GlobalMetadata (length 0) */
    expect(parse_bytes((const uint8_t *)"", 0), "empty file");
    expect(parse_bytes((const uint8_t *)"\x80", 1), "the global metadata (byte 0): the file ends inside its length");
    expect(parse_bytes((const uint8_t *)"\x00\x80\x80", 3), "node 0 (byte 1): the file ends inside its length");
    expect(parse_bytes((const uint8_t *)"\x00\x80\x80\x80\x80\x80\x01", 7), "node 0 (byte 1): its length prefix is longer");
    expect(parse_bytes((const uint8_t *)"\x00\x7f\x08\x01", 4), "node 0 (byte 1): length 127 runs past the end");
    /* field 1 as a length-delimited field of 10 bytes with 1 left: protobuf refuses */
    expect(parse_bytes((const uint8_t *)"\x00\x02\x0a\x0a", 4), "node 0 (byte 1): not a Chakra Node message");
    /* a Node with type 9 (field 3 varint) */
    expect(parse_bytes((const uint8_t *)"\x00\x04\x08\x01\x18\x09", 6), "node 0 (id 1, byte 1): unknown node type (type 9)");
    /* type INVALID_NODE (0): an empty Node */
    expect(parse_bytes((const uint8_t *)"\x00\x00", 2), "unknown node type (type 0)");
    /* a collective without comm_type */
    expect(parse_bytes((const uint8_t *)"\x00\x02\x18\x07", 4), "COMM_COLL_NODE without comm_type");
    /* comm_size as a string: the message names the attribute (fuzz_chakra found it read after the node was freed) */
    expect(parse_bytes((const uint8_t *)"\x00\x15\x08\x01\x18\x07\x52\x0f\x0a\x09\x63\x6f\x6d\x6d\x5f\x73\x69\x7a\x65\xea\x01\x01\x78", 23),
           "node 0 (id 1, byte 1): attribute comm_size has a value of the wrong type or range");
    /* a good file: metadata, one COMP node id 1 */
    char *ok = parse_bytes((const uint8_t *)"\x00\x04\x08\x01\x18\x04", 6);
    CU_ASSERT_PTR_NULL(ok);
    g_free(ok);
}

static void test_malformed_graphs(void)
{
    char *d = tmpdir();
    char *msg = NULL;
    CU_ASSERT_EQUAL(replay(d, CHAKRA_TIMES_MODEL, &msg), SIM_TIME_NEVER);
    expect(msg, "no Chakra trace files");
    ChakraNode a[2] = {mk(1, CHAKRA_COMP, 1), mk(2, CHAKRA_COMP, 1)};
    dep(&a[1], 3);
    write_rank(d, 0, a, 2);
    replay(d, CHAKRA_TIMES_MODEL, &msg);
    expect(msg, "node 1 (id 2, byte ");
    ChakraNode b[2] = {mk(1, CHAKRA_COMP, 1), mk(2, CHAKRA_COMP, 1)};
    dep(&b[0], 2);
    dep(&b[1], 1);
    write_rank(d, 0, b, 2);
    replay(d, CHAKRA_TIMES_MODEL, &msg);
    expect(msg, "form a cycle");
    ChakraNode c[2] = {mk(1, CHAKRA_COMP, 1), mk(1, CHAKRA_COMP, 1)};
    write_rank(d, 0, c, 2);
    replay(d, CHAKRA_TIMES_MODEL, &msg);
    expect(msg, "node 1 (id 1, byte 34): id used twice");
    /* rank 2 without rank 1 */
    ChakraNode e[1] = {mk(1, CHAKRA_COMP, 1)};
    write_rank(d, 0, e, 1);
    ChakraNode f[1] = {mk(1, CHAKRA_COMP, 1)};
    write_rank(d, 2, f, 1);
    replay(d, CHAKRA_TIMES_MODEL, &msg);
    expect(msg, "t.1.et is missing");
    /* rank 1: two all-reduces, rank 0 and 2 one */
    for (int r = 0; r < 3; r++) {
        ChakraNode n[2] = {mk(1, CHAKRA_COLL, 1), mk(2, CHAKRA_COLL, 1)};
        n[0].comm_type = n[1].comm_type = CHAKRA_ALL_REDUCE;
        write_some(d, r, n, r == 1 ? 2 : 1, 2);
    }
    replay(d, CHAKRA_TIMES_MODEL, &msg);
    expect(msg, "rank 1 has 2 collectives of group \"\", rank 0 has 1");
    /* both ranks receive before they send: a deadlock */
    for (int r = 0; r < 3; r++) {
        ChakraNode n[2] = {mk(1, CHAKRA_RECV, 1), mk(2, CHAKRA_SEND, 1)};
        n[0].comm_src = n[1].comm_dst = r == 2 ? 1 : 1 - r;
        n[0].comm_size = n[1].comm_size = 4;
        dep(&n[1], 1);
        write_some(d, r, n, r == 2 ? 0 : 2, 2);
    }
    replay(d, CHAKRA_TIMES_MODEL, &msg);
    expect(msg, "never runs: the ranks wait for each other");
    /* a send without its receive */
    ChakraNode s[1] = {mk(1, CHAKRA_SEND, 1)};
    s[0].comm_dst = 1;
    write_rank(d, 0, s, 1);
    ChakraNode s1[1] = {mk(1, CHAKRA_COMP, 1)};
    write_rank(d, 1, s1, 1);
    replay(d, CHAKRA_TIMES_MODEL, &msg);
    expect(msg, "1 sends from rank 0 to rank 1 (tag -1) but 0 receives");
    /* a send of 100 bytes met by a receive of 1e15: one message, two lengths */
    for (int r = 0; r < 2; r++) {
        ChakraNode n[1] = {mk(1, r == 0 ? CHAKRA_SEND : CHAKRA_RECV, 1)};
        n[0].comm_dst = n[0].comm_src = 1 - r;
        n[0].comm_size = r == 0 ? 100 : 1000000000000000LL;
        write_rank(d, r, n, 1);
    }
    replay(d, CHAKRA_TIMES_MODEL, &msg);
    expect(msg, "t.1.et: node 0 (id 1, byte 8): receives 1000000000000000 bytes from rank 0 (tag -1), whose matching send has 100");
    /* an all-reduce of no named group (the whole job's) on rank 0 alone */
    ChakraNode c0[1] = {mk(1, CHAKRA_COLL, 1)}, c1[1] = {mk(1, CHAKRA_COMP, 1)};
    c0[0].comm_type = CHAKRA_ALL_REDUCE;
    write_rank(d, 0, c0, 1);
    write_rank(d, 1, c1, 1);
    replay(d, CHAKRA_TIMES_MODEL, &msg);
    expect(msg, "rank 0 has 1 collectives of no group (the whole job's), rank 1 has none");
    rmdir_all(d);
}

/* Chakra's own feeder test trace: what Chakra's tests/feeder/tests.cpp
 * expects of it, then a replay (one rank: recorded times). */
static void test_published(void)
{
    const char *path = SHARDSIM_SOURCE_DIR "/tests/data/traces/chakra-et_pytorch-1rank_chakra-feeder-tests.0.et";
    size_t len = 0;
    GError *err = NULL;
    char *buf = NULL;
    CU_ASSERT_TRUE_FATAL(g_file_get_contents(path, &buf, &len, &err));
    ChakraRank r = {0};
    bool ok = chakra_parse_rank(path, (const uint8_t *)buf, len, &r, &err);
    if (!ok)
        fprintf(stderr, "%s\n", err->message);
    CU_ASSERT_TRUE_FATAL(ok);
    uint64_t free1 = UINT64_MAX, free2 = UINT64_MAX; /* the two smallest ids without data deps */
    int i216 = -1, i432 = -1;
    for (int i = 0; i < r.n; i++) {
        uint64_t id = r.nodes[i].id;
        if (r.nodes[i].ndeps == 0 && id < free2) {
            free2 = id < free1 ? free1 : id;
            free1 = id < free1 ? id : free1;
        }
        i216 = id == 216 ? i : i216;
        i432 = id == 432 ? i : i432;
    }
    CU_ASSERT_EQUAL(free1, 216);
    CU_ASSERT_EQUAL(free2, 432);
    CU_ASSERT_TRUE_FATAL(i216 >= 0 && i432 >= 0);
    CU_ASSERT_EQUAL(r.nodes[i216].type, CHAKRA_COMP);
    CU_ASSERT_TRUE(r.nodes[i216].is_cpu_op);
    CU_ASSERT_EQUAL(r.nodes[i432].type, CHAKRA_COLL);
    CU_ASSERT_TRUE(r.nodes[i432].is_cpu_op);
    int kids[3] = {0};
    for (int i = 0; i < r.n; i++)
        for (int k = 0; k < r.nodes[i].ndeps; k++)
            if (r.nodes[i].deps[k] == 216)
                for (int j = 0; j < 3; j++)
                    kids[j] += r.nodes[i].id == (uint64_t)(j == 0 ? 217 : j == 1 ? 430 : 435);
    CU_ASSERT_TRUE(kids[0] == 1 && kids[1] == 1 && kids[2] == 1);
    ChakraTrace t = {.ranks = &r, .nranks = 1};
    ChakraPlatform pf = platform(CHAKRA_TIMES_MODEL);
    cJSON *res = chakra_replay(&t, &pf, NULL, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(res);
    CU_ASSERT_EQUAL((int)cJSON_GetObjectItem(res, "nodes")->valuedouble, r.n);
    CU_ASSERT_EQUAL((int)cJSON_GetObjectItem(res, "collectives")->valuedouble, 7);
    /* one rank: the step is at least the longest chain of recorded times and
     * at most their sum */
    double step = cJSON_GetObjectItem(res, "step_time_s")->valuedouble, sum = 0, longest = 0;
    for (int i = 0; i < r.n; i++) {
        sum += r.nodes[i].duration_us * 1e-6;
        longest = r.nodes[i].duration_us * 1e-6 > longest ? r.nodes[i].duration_us * 1e-6 : longest;
    }
    CU_ASSERT_TRUE(step >= longest && step <= sum + 1e-9);
    cJSON_Delete(res);
    chakra_rank_clear(&r);
    g_free(buf);
}

static void test_cleanup(void)
{
    topo_free(topo);
    accel_free(acc);
    topo = NULL;
    acc = NULL;
}

static const TestCase tests[] = {
    {"chain", test_chain},
    {"streams", test_streams},
    {"allreduce", test_allreduce},
    {"send_recv", test_send_recv},
    {"num_ops", test_num_ops},
    {"round_trip", test_round_trip},
    {"malformed_bytes", test_malformed_bytes},
    {"malformed_graphs", test_malformed_graphs},
    {"published", test_published},
    {"cleanup", test_cleanup},
};

int main(void)
{
    if (!chakra_supported()) {
        printf("built without Chakra support: test_chakra skipped\n");
        return 0;
    }
    return run_tests("chakra", tests, sizeof tests / sizeof tests[0]);
}
