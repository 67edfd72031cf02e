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
    t = parse("# host:1:1 [0] NCCL INFO NCCL_ALGO set by environment to Ring (a comment, not NCCL's log)\n");
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_PTR_NULL(nccltests_env_algo(t));
    nccltests_free(t);
}

/* NCCL's parse (tuning.cc parseList): its own examples, a single name, an
 * exclusion, per-collective lists, empty pieces (strtok_r skips them), what
 * 2.24 on refuses, and the one plain list before 2.24 (unknown names
 * skipped). */
static void test_allowed(void)
{
    static const struct {
        const char *value;
        bool proto;
        NcclTestsOp op;
        int version;
        const char *want; /* the model's names joined, "-" refused */
    } cases[] = {
        {"Ring", false, NCCLTESTS_ALLREDUCE, 0, "ring"},
        {"nvlstree", false, NCCLTESTS_ALLREDUCE, 0, "nvlstree"},
        {"^NVLS", false, NCCLTESTS_ALLREDUCE, 0, "tree,ring,collnet,nvlstree,pat"},
        {"Ring,Tree", false, NCCLTESTS_ALLGATHER, 0, "tree,ring"},
        {"CollnetDirect,CollnetChain", false, NCCLTESTS_ALLREDUCE, 0, "collnet"},
        {"ring,collnetdirect;allreduce:tree,collnetdirect;broadcast:ring", false, NCCLTESTS_ALLREDUCE, 0, "tree,collnet"},
        {"ring,collnetdirect;allreduce:tree,collnetdirect;broadcast:ring", false, NCCLTESTS_ALLGATHER, 0, "ring,collnet"},
        {"ring,collnetdirect;allreduce:tree,collnetdirect;broadcast:ring", false, NCCLTESTS_BROADCAST, 0, "ring"},
        {"LL,Simple;allreduce:^LL", true, NCCLTESTS_ALLREDUCE, 0, "ll128,simple"},
        {"LL,Simple;allreduce:^LL", true, NCCLTESTS_REDUCE, 0, "ll,simple"},
        {"^LL128;allreduce:LL128", true, NCCLTESTS_ALLREDUCE, 0, "ll128"},
        {"^LL128;allreduce:LL128", true, NCCLTESTS_ALLGATHER, 0, "ll,simple"},
        {"Ring;", false, NCCLTESTS_ALLREDUCE, 0, "ring"},                 /* empty pieces skipped */
        {"ring,,tree", false, NCCLTESTS_ALLREDUCE, 0, "tree,ring"},
        {"allreduce:ring;;broadcast:tree", false, NCCLTESTS_ALLREDUCE, 0, "ring"},
        {"allreduce:ring:tree", false, NCCLTESTS_ALLREDUCE, 0, "ring"}, /* past a second ':' ignored */
        {"LL;allreduce:^", true, NCCLTESTS_BROADCAST, 0, "ll"},
        {"LL;allreduce:^", true, NCCLTESTS_ALLREDUCE, 0, "ll,ll128,simple"},
        {"^", false, NCCLTESTS_ALLREDUCE, 0, "tree,ring,collnet,nvls,nvlstree,pat"},
        {"", false, NCCLTESTS_ALLREDUCE, 0, "tree,ring,collnet,nvls,nvlstree,pat"},
        {"^Tree,Ring,CollNetDirect,CollNetChain,NVLS,NVLSTree,PAT", false, NCCLTESTS_ALLREDUCE, 0, ""},
        {"Rings", false, NCCLTESTS_ALLREDUCE, 0, "-"},
        {"ring;tree", false, NCCLTESTS_ALLREDUCE, 0, "-"}, /* a second list without its collective */
        {";ring", false, NCCLTESTS_ALLREDUCE, 0, "-"},     /* NCCL: not the value's opening piece */
        {"allreduces:ring", false, NCCLTESTS_ALLREDUCE, 0, "-"},
        {"Ring", true, NCCLTESTS_ALLREDUCE, 0, "-"},
        {"Ring,CollNet", false, NCCLTESTS_ALLREDUCE, 22304, "ring"}, /* 2.23: an unknown name skipped */
        {"Ring,CollNet", false, NCCLTESTS_ALLREDUCE, 22403, "-"},
        {"^Rings", false, NCCLTESTS_ALLREDUCE, 21803, "tree,ring,collnet,nvls,nvlstree,pat"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        const char *names[8];
        int n = nccltests_env_allowed(cases[i].value, cases[i].proto, cases[i].op, cases[i].version, names);
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
