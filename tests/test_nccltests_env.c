/* What a run's environment forced, as the nccl-tests reader takes it: NCCL's
 * "NCCL_ALGO set by environment to X" log line (param.cc's wording) in a
 * printed run, a JSON report's "env" entry, and what a value leaves each
 * collective, as the model names it. */
#include "nccltests.h"
#include "test_main.h"

#include <string.h>

static const char *ROWS = "#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   "
                          "algbw   busbw  #wrong\n"
                          "     1048576        262144     float     sum      -1    40.00   26.21   45.88      0    "
                          "40.00   26.21   45.88      0\n";

static NcclTrace *parse_named(const char *name, const char *text)
{
    GError *err = NULL;
    NcclTrace *t = nccltests_parse(name, text, &err);
    if (!t)
        fprintf(stderr, "\n%s\n", err ? err->message : "?");
    g_clear_error(&err);
    return t;
}

static NcclTrace *parse(const char *before_rows)
{
    char *text = g_strdup_printf("# Collective test starting: all_reduce_perf\n%s%s", before_rows, ROWS);
    NcclTrace *t = parse_named("t.txt", text);
    g_free(text);
    return t;
}

static void test_log_line(void)
{
    NcclTrace *t = parse("host:1:1 [0] NCCL INFO NCCL_ALGO set by environment to Ring\n"
                         "host:1:1 [0] NCCL INFO NCCL_PROTO set by environment to LL128.\n"
                         "host:1:1 [0] NCCL INFO NCCL_ALGO set by environment to Tree\n");
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_STRING_EQUAL(nccltests_env_algo(t), "Ring"); /* the first said */
    CU_ASSERT_STRING_EQUAL(nccltests_env_proto(t), "LL128"); /* without the log's full stop */
    nccltests_free(t);
    t = parse("host:1:1 [0] NCCL INFO MY_NCCL_ALGO set by environment to Ring\n");
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_PTR_NULL(nccltests_env_algo(t)); /* another variable */
    nccltests_free(t);
    t = parse("# NCCL_ALGO set by environment to Ring (a comment, not NCCL's log)\n");
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_PTR_NULL(nccltests_env_algo(t));
    nccltests_free(t);
}

/* NCCL's parse (tuning.cc parseList): its own examples, a single name, an
 * exclusion, per-collective lists, and what it refuses. */
static void test_allowed(void)
{
    static const struct {
        const char *value;
        bool proto;
        NcclTestsOp op;
        const char *want; /* the model's names joined, "-" refused */
    } cases[] = {
        {"Ring", false, NCCLTESTS_ALLREDUCE, "ring"},
        {"nvlstree", false, NCCLTESTS_ALLREDUCE, "nvlstree"},
        {"^NVLS", false, NCCLTESTS_ALLREDUCE, "tree,ring,collnet,nvlstree,pat"},
        {"Ring,Tree", false, NCCLTESTS_ALLGATHER, "tree,ring"},
        {"CollnetDirect,CollnetChain", false, NCCLTESTS_ALLREDUCE, "collnet"},
        {"ring,collnetdirect;allreduce:tree,collnetdirect;broadcast:ring", false, NCCLTESTS_ALLREDUCE, "tree,collnet"},
        {"ring,collnetdirect;allreduce:tree,collnetdirect;broadcast:ring", false, NCCLTESTS_ALLGATHER, "ring,collnet"},
        {"ring,collnetdirect;allreduce:tree,collnetdirect;broadcast:ring", false, NCCLTESTS_BROADCAST, "ring"},
        {"LL,Simple;allreduce:^LL", true, NCCLTESTS_ALLREDUCE, "ll128,simple"},
        {"LL,Simple;allreduce:^LL", true, NCCLTESTS_REDUCE, "ll,simple"},
        {"^LL128;allreduce:LL128", true, NCCLTESTS_ALLREDUCE, "ll128"},
        {"^LL128;allreduce:LL128", true, NCCLTESTS_ALLGATHER, "ll,simple"},
        {"Rings", false, NCCLTESTS_ALLREDUCE, "-"},
        {"ring;tree", false, NCCLTESTS_ALLREDUCE, "-"}, /* a second list without its collective */
        {"allreduces:ring", false, NCCLTESTS_ALLREDUCE, "-"},
        {"", false, NCCLTESTS_ALLREDUCE, "-"},
        {"^", false, NCCLTESTS_ALLREDUCE, "-"},
        {"Ring", true, NCCLTESTS_ALLREDUCE, "-"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        const char *names[8];
        int n = nccltests_env_allowed(cases[i].value, cases[i].proto, cases[i].op, names);
        char *got = g_strdup("-");
        if (n >= 0) {
            names[n] = NULL;
            g_free(got);
            got = g_strjoinv(",", (char **)names);
        }
        if (strcmp(got, cases[i].want))
            fprintf(stderr, "\n%s -> %s, want %s\n", cases[i].value, got, cases[i].want);
        CU_ASSERT_STRING_EQUAL(got, cases[i].want);
        g_free(got);
    }
}

static void test_json_env(void)
{
    const char *json = "{\"args\": [\"./build/all_gather_perf\"], \"env\": [\"HOME=/root\", \"XNCCL_ALGO=Tree\", "
                       "\"NCCL_ALGO=NVLS\", 3], \"results\": [{\"size\": 1048576, \"count\": 32768, \"type\": "
                       "\"float\", \"redop\": \"none\", \"root\": \"    -1\", \"out_of_place\": {\"time\": 40, "
                       "\"alg_bw\": 26.21, \"bus_bw\": 24.58, \"nwrong\": 0}}]}";
    NcclTrace *t = parse_named("r.json", json);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_STRING_EQUAL(nccltests_env_algo(t), "NVLS");
    CU_ASSERT_PTR_NULL(nccltests_env_proto(t));
    CU_ASSERT_EQUAL(nccltests_op(t), NCCLTESTS_ALLGATHER); /* from args */
    nccltests_free(t);
}

static const TestCase tests[] = {
    {"NCCL's 'set by environment' log line", test_log_line},
    {"what a value leaves a collective, as NCCL parses it", test_allowed},
    {"a JSON report's env", test_json_env},
};
TEST_MAIN("nccltests_env", tests)
