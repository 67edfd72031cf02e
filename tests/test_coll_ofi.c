/* NCCL over the aws-ofi-nccl net plugin.  On EFA (AWS p4d) the plugin leaves
 * NCCL the Simple protocol only (it sets NCCL_PROTO=simple where EFA cannot
 * deliver 128-byte stores in order, from its 1.6.0 release, NCCL 2.17's),
 * on the instances of GPUs before Hopper (AWS's Hopper and Blackwell ones
 * run its RDMA protocol, which keeps LL), and each network step costs what
 * AWS's own tuner model says of EFA
 * (collectives.json transports.efa).  On Slingshot (CXI) LL messages past
 * the provider's eager limit take its rendezvous as Simple's do.  A
 * transport's "nccl_profiles" keys are checked. */
#include "collective.h"
#include "sim_data.h"
#include "test_load.h"
#include "test_main.h"
#include "test_tmpfile.h"

#include <string.h>

static CollCost best(const CollGroup *g, double bytes) { return allreduce_cost(g, COLL_ALGO_AUTO, COLL_PROTO_AUTO, bytes); }

/* From NCCL 2.17 on every size across p4d nodes runs Simple; LL still costs
 * when asked for (a user's NCCL_PROTO overrides the plugin's); at 2.8 (the
 * plugin set no protocol then) and on one node (no network) LL is chosen
 * for 8 bytes.  The p4d preset with H100s in place of its A100s: AWS's
 * Hopper instances (p5, p5e, p5en) run the plugin's RDMA protocol, whose
 * in-order writes keep LL and LL128, so NCCL chooses LL for 8 bytes again. */
static void test_efa_simple_only(void)
{
    Topo *t;
    CollGroup *g = group_at(&t, "aws-p4d", NULL, NULL, 2, "2.23.4");
    const double sizes[] = {8, 65536, 1 << 20, 1 << 30};
    for (size_t i = 0; i < G_N_ELEMENTS(sizes); i++)
        CU_ASSERT_EQUAL(best(g, sizes[i]).proto, COLL_SIMPLE);
    CollCost ll = allreduce_cost(g, COLL_RING, COLL_LL, 8);
    CU_ASSERT_TRUE(ll.time_s > 0 && ll.time_s < best(g, 8).time_s);
    group_done(g, t);
    static const struct {
        const char *from, *to;
        int nodes;
        const char *version;
        bool simple; /* whether 8 bytes run Simple */
    } cases[] = {
        {NULL, NULL, 2, "2.16.5", false},
        {NULL, NULL, 2, "2.8.3", false},
        {NULL, NULL, 1, NULL, false},
        {"\"a100-40gb\"", "\"h100-sxm\"", 2, "2.23.4", false},
        {"\"a100-40gb\"", "\"a100-80gb\"", 2, "2.23.4", true},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        g = group_at(&t, "aws-p4d", cases[i].from, cases[i].to, cases[i].nodes, cases[i].version);
        CollProto p = best(g, 8).proto;
        CU_ASSERT_EQUAL(p == COLL_SIMPLE, cases[i].simple);
        CU_ASSERT_TRUE(cases[i].simple || p == COLL_LL || cases[i].from);
        group_done(g, t);
    }
}

/* A Simple ring across 2 nodes of 8 crosses the network 4 times in an
 * all-reduce: each crossing is AWS's 20 us EFA step (in place of NCCL's
 * 14 us) and 3 us of completion, the other 26 steps NVLink's 3.4 us, plus
 * NCCL's 8.4 us base: 188.8 us.  An LL tree's two network hops take the same
 * 20 us (NCCL's table: 5 us), without the completion. */
static void test_efa_step_cost(void)
{
    Topo *t;
    CollGroup *g = group_at(&t, "aws-p4d", NULL, NULL, 2, NULL);
    CollCost c = allreduce_cost(g, COLL_RING, COLL_SIMPLE, 8);
    CU_ASSERT_DOUBLE_EQUAL(c.latency_s, 8.4e-6 + 26 * 3.4e-6 + 4 * (20e-6 + 3e-6), 1e-9);
    CollCost tl = allreduce_cost(g, COLL_TREE, COLL_LL, 8);
    CU_ASSERT_DOUBLE_EQUAL(tl.latency_s, 6.8e-6 + 2 * (7 * 0.6e-6 + 20e-6), 1e-9);
    group_done(g, t);
}

/* GH200 over CXI: a tree LL all-reduce of 2 KiB sends one channel's 4 KiB of
 * LL lines per network hop, under the 4097-byte eager limit; of 4 KiB, 8 KiB,
 * past it: each of the tree's 2 network hops pays the 5 us rendezvous (in
 * the time; NCCL's tuner, which sees no CXI cost, rates both alike).  From
 * 16 KiB NCCL spreads the tree over the 4 channels, each message still past
 * the limit (and posted one after another: 3 us more).  8 bytes stay eager; Simple keeps its per-message overhead. */
static void test_cxi_ll_rendezvous(void)
{
    Topo *t;
    CollGroup *g = group_at(&t, "gh200-slingshot", NULL, NULL, 2, NULL);
    CollCost a = allreduce_cost(g, COLL_TREE, COLL_LL, 2048), b = allreduce_cost(g, COLL_TREE, COLL_LL, 4096);
    CollCost c = allreduce_cost(g, COLL_TREE, COLL_LL, 16384), e = allreduce_cost(g, COLL_TREE, COLL_LL, 8);
    CU_ASSERT_DOUBLE_EQUAL(b.latency_s - a.latency_s, 2 * 5e-6, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(c.latency_s - b.latency_s, 3e-6, 1e-12); /* only 3 more channels' posts, 1 us each on Grace */
    CU_ASSERT_DOUBLE_EQUAL(e.latency_s, a.latency_s, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(b.tuner_latency_s, a.tuner_latency_s, 1e-12);
    CollCost s1 = allreduce_cost(g, COLL_RING, COLL_SIMPLE, 8), s2 = allreduce_cost(g, COLL_RING, COLL_SIMPLE, 1024);
    CU_ASSERT_DOUBLE_EQUAL(s1.latency_s, s2.latency_s, 1e-12);
    group_done(g, t);
    /* p4d's EFA sets no eager limit: LL's time does not step (beyond the
     * channels' posts, which the tuner's latency leaves out) */
    g = group_at(&t, "aws-p4d", NULL, NULL, 2, NULL);
    CollCost p2 = allreduce_cost(g, COLL_TREE, COLL_LL, 2048), p64 = allreduce_cost(g, COLL_TREE, COLL_LL, 65536);
    CU_ASSERT_DOUBLE_EQUAL(p2.latency_s, p2.tuner_latency_s, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(p64.latency_s - p2.latency_s, p64.latency_s - p64.tuner_latency_s, 1e-12);
    group_done(g, t);
}

/* NVLSTree's two network steps at 2 nodes are its tree's, Simple's: on EFA
 * AWS's 20 us and 3 us of completion each in place of NCCL's, beside the
 * NVLS step (the newest NCCL rates it at 25 us); InfiniBand (no transport
 * costs) keeps NCCL's rating of 20.9 us (14 before 2.29). */
static void test_nvlstree_pays_transport(void)
{
    const char *names[] = {"aws-p5", "dgx-h100-cluster"};
    const double want[] = {25e-6 + 2 * (20e-6 + 3e-6), 25e-6 + 2 * 20.9e-6};
    for (int i = 0; i < 2; i++) {
        Topo *t;
        CollGroup *g = group_at(&t, names[i], NULL, NULL, 2, NULL);
        CollCost c = allreduce_cost(g, COLL_NVLS_TREE, COLL_SIMPLE, 8);
        CU_ASSERT_DOUBLE_EQUAL(c.tuner_latency_s, want[i], 1e-9);
        group_done(g, t);
    }
}

/* The default parameter file with `from` (which must be in it) replaced by
 * `to`; NULL and the reason where the file is refused. */
static CollGroup *edited_group(const Topo *t, const char *from, const char *to, char **why)
{
    char *path = sim_data_dir("models/presets/collectives.json"), *text = NULL;
    CU_ASSERT_TRUE_FATAL(g_file_get_contents(path, &text, NULL, NULL));
    char *at = strstr(text, from);
    CU_ASSERT_PTR_NOT_NULL_FATAL(at);
    GString *s = g_string_new_len(text, at - text);
    g_string_append(s, to);
    g_string_append(s, at + strlen(from));
    char *file = tmpfile_with("p.json", s->str);
    GError *err = NULL;
    CollGroup *g = coll_group_new(t, NULL, 0, file, &err);
    *why = err ? g_strdup(err->message) : NULL;
    g_clear_error(&err);
    tmpfile_remove(file);
    g_string_free(s, TRUE);
    g_free(text);
    g_free(path);
    return g;
}

#define EFA_PROFILE "{\"since\": \"2.17\", \"gpu_before\": \"hopper\", \"plugin\": true, \"protocols\": [\"simple\"]}"

/* A bad EFA profile or eager key is refused at its line of the file (exit
 * 2: input), saying which key. */
static void test_transport_keys(void)
{
    Topo *t = load("aws-p4d", 2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    static const struct {
        const char *from, *to, *says;
    } bad[] = {
        {EFA_PROFILE, "{\"protocols\": []}", "non-empty array"},
        {EFA_PROFILE, "{\"protocols\": [\"ll256\"]}", "unknown name \"ll256\""},
        {EFA_PROFILE, "{\"protocols\": \"simple\"}", "\"protocols\""},
        {EFA_PROFILE, "{\"since\": \"two\", \"protocols\": [\"simple\"]}", "\"since\" must be an NCCL version"},
        {EFA_PROFILE, "{\"gpu_before\": \"kepler\", \"protocols\": [\"simple\"]}", "\"gpu_before\" must be volta"},
        {EFA_PROFILE, "{\"since\": \"2.23\", \"before\": \"2.17\"}", "after \"since\""},
        {EFA_PROFILE, "{\"plugin\": 1}", "plugin"},
        {EFA_PROFILE, "{\"nvls\": \"off\"}", "nvls"},
        {"\"eager_max_bytes\": 4097", "\"eager_max_bytes\": -1", "eager_max_bytes"},
        {"\"rendezvous_s\": 5.0e-06", "\"rendezvous_s\": \"5 us\"", "rendezvous_s"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
        char *why = NULL;
        CollGroup *g = edited_group(t, bad[i].from, bad[i].to, &why);
        CU_ASSERT_PTR_NULL(g);
        if (!why || !strstr(why, bad[i].says))
            fprintf(stderr, "\n%s: %s\n", bad[i].to, why ? why : "(loaded)");
        CU_ASSERT_TRUE(why && strstr(why, bad[i].says) && strstr(why, "p.json:"));
        coll_group_free(g);
        g_free(why);
    }
    topo_free(t);
}

/* What a profile leaves: at 2.8.3, before the plugin's "since", a profile
 * without one still holds (LL and Simple, not LL128); a profile that is not
 * the plugin's binds the tuner as well; NVLS off keeps NVLS and NVLSTree from
 * TCPXO's newest profile. */
static void test_profile_leaves(void)
{
    Topo *t = load("aws-p4d", 2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    static const struct {
        const char *to;
        CollProto small, large; /* 8 B and 1 GiB */
    } cases[] = {
        {"{\"plugin\": true, \"protocols\": [\"ll\", \"simple\"]}", COLL_LL, COLL_SIMPLE},
        {"{\"plugin\": true, \"protocols\": [\"simple\"]}", COLL_SIMPLE, COLL_SIMPLE},
        {"{\"protocols\": [\"simple\"]}", COLL_SIMPLE, COLL_SIMPLE},
        {"{\"gpu_before\": \"volta\", \"protocols\": [\"simple\"]}", COLL_LL, COLL_SIMPLE},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        char *why = NULL;
        CollGroup *g = edited_group(t, EFA_PROFILE, cases[i].to, &why);
        CU_ASSERT_PTR_NOT_NULL_FATAL(g);
        coll_group_set_nccl_version(g, coll_nccl_version_parse("2.8.3"));
        CU_ASSERT_EQUAL(best(g, 8).proto, cases[i].small);
        CU_ASSERT_EQUAL(best(g, 1 << 30).proto, cases[i].large);
        coll_group_free(g);
        g_free(why);
    }
    topo_free(t);

    Topo *m = load("gcp-a3mega", 2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    const char *last = "{\"protocols\": [\"simple\", \"ll128\"]}";
    char *why = NULL;
    CollGroup *on = group(m);
    CollGroup *off = edited_group(m, last, "{\"protocols\": [\"simple\", \"ll128\"], \"nvls\": false}", &why);
    CU_ASSERT_PTR_NOT_NULL_FATAL(on);
    CU_ASSERT_PTR_NOT_NULL_FATAL(off);
    unsigned seen_on = 0, seen_off = 0;
    for (double b = 8; b <= 8.0 * (1u << 30); b *= 4) {
        seen_on |= 1u << best(on, b).algo;
        seen_off |= 1u << best(off, b).algo;
    }
    CU_ASSERT_TRUE(seen_on & (1u << COLL_NVLS_TREE));
    CU_ASSERT_FALSE(seen_off & (1u << COLL_NVLS_TREE | 1u << COLL_NVLS));
    /* asked for by name, it runs */
    CU_ASSERT_EQUAL(allreduce_cost(off, COLL_NVLS_TREE, COLL_SIMPLE, 1 << 30).algo, COLL_NVLS_TREE);
    coll_group_free(on);
    coll_group_free(off);
    g_free(why);
    topo_free(m);
}

static const TestCase tests[] = {
    {"EFA leaves NCCL Simple only from 2.17, before Hopper", test_efa_simple_only},
    {"an EFA network step costs AWS's model's", test_efa_step_cost},
    {"NVLSTree's network steps pay the transport", test_nvlstree_pays_transport},
    {"LL past CXI's eager limit takes its rendezvous", test_cxi_ll_rendezvous},
    {"a transport's profile and eager keys are checked", test_transport_keys},
    {"what a transport's profile leaves the tuner", test_profile_leaves},
};
TEST_MAIN("coll_ofi", tests)
