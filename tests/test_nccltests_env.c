/* What a run's environment forced, as the nccl-tests reader takes it: NCCL's
 * "NCCL_ALGO set by environment to X" log line (param.cc's wording) in a
 * printed run, a JSON report's "env" entry, and the one algorithm or
 * protocol a value names as the model names it (sets, exclusions and
 * per-collective choices name none). */
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

static void test_choice(void)
{
    static const struct {
        const char *value;
        bool proto;
        const char *want;
    } cases[] = {
        {"Ring", false, "ring"},         {"tree", false, "tree"},         {"NVLS", false, "nvls"},
        {"NVLSTree", false, "nvlstree"}, {"CollnetDirect", false, "collnet"}, {"PAT", false, "pat"},
        {"Ring,Tree", false, NULL},      {"^NVLS", false, NULL},          {"allreduce:tree", false, NULL},
        {"Rings", false, NULL},          {"1", false, NULL},              {"", false, NULL},
        {"LL128", true, "ll128"},        {"simple", true, "simple"},      {"LL,LL128", true, NULL},
        {"Ring", true, NULL},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        const char *got = nccltests_env_choice(cases[i].value, cases[i].proto);
        if (cases[i].want ? !got || strcmp(got, cases[i].want) : got != NULL)
            fprintf(stderr, "\n%s -> %s, want %s\n", cases[i].value, got ? got : "NULL",
                    cases[i].want ? cases[i].want : "NULL");
        CU_ASSERT_TRUE(cases[i].want ? got && !strcmp(got, cases[i].want) : got == NULL);
    }
    CU_ASSERT_PTR_NULL(nccltests_env_choice(NULL, false));
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
    {"one algorithm or protocol, or none", test_choice},
    {"a JSON report's env", test_json_env},
};
TEST_MAIN("nccltests_env", tests)
