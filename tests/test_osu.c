/* The OSU reader on inputs laid out as osu_util_mpi.c prints them (header
 * words, column order, "# Datatype:" lines); the numbers are test fixtures,
 * not measurements. */
#include "osu.h"
#include "test_main.h"

#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

static OsuTrace *parse_ok(const char *text)
{
    GError *err = NULL;
    OsuTrace *t = osu_parse("t.txt", text, &err);
    if (!t)
        fprintf(stderr, "unexpected error: %s\n", err->message);
    CU_ASSERT_PTR_NULL(err);
    g_clear_error(&err);
    return t;
}

static void expect_error(const char *text, const char *message)
{
    GError *err = NULL;
    OsuTrace *t = osu_parse("t.txt", text, &err);
    CU_ASSERT_PTR_NULL(t);
    osu_free(t);
    CU_ASSERT_PTR_NOT_NULL_FATAL(err);
    CU_ASSERT_EQUAL(err->code, SIM_ERROR_INPUT);
    if (strcmp(err->message, message) != 0)
        fprintf(stderr, "\n  got:  %s\n  want: %s\n", err->message, message);
    CU_ASSERT_STRING_EQUAL(err->message, message);
    g_clear_error(&err);
}

static void test_osu_v7_avg(void)
{
    const char *text = "# OSU MPI Allreduce Latency Test v7.3\n"
                       "# Datatype: MPI_CHAR.\n"
                       "# Size       Avg Latency(us)\n"
                       "1                       1.91\n"
                       "2                       1.88\n"
                       "4                       1.90\n"
                       "1048576               312.44\n"
                       "\n";
    OsuTrace *t = parse_ok(text);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_EQUAL(osu_n_rows(t), 4);
    CU_ASSERT_EQUAL(osu_op(t), NCCLTESTS_ALLREDUCE);
    CU_ASSERT_STRING_EQUAL(osu_title(t), "OSU MPI Allreduce Latency Test");
    CU_ASSERT_STRING_EQUAL(osu_version(t), "7.3");
    const OsuRow *r = osu_row(t, 3);
    CU_ASSERT_EQUAL(r->size_bytes, 1048576);
    CU_ASSERT_DOUBLE_EQUAL(r->avg_us, 312.44, 1e-12);
    CU_ASSERT_TRUE(isnan(r->min_us) && isnan(r->max_us));
    CU_ASSERT_EQUAL(r->iterations, -1);
    CU_ASSERT_EQUAL(r->validation, -1);
    CU_ASSERT_STRING_EQUAL(r->datatype, "MPI_CHAR");
    CU_ASSERT_EQUAL(r->line, 7);
    CU_ASSERT_PTR_NULL(osu_row(t, 4));
    CU_ASSERT_EQUAL(osu_n_headers(t), 0);
    osu_free(t);
}

/* -f adds Min/Max/Iterations; provenance on top; mpirun prefixes; an
 * accelerator build names itself "OSU MPI-CUDA". */
static void test_osu_full_provenance(void)
{
    const char *text = "# source: test fixture\n"
                       "# hardware: 2 ranks, one host\n"
                       "#   continued notes are not joined by this reader\n"
                       "[1,0]<stdout>:# OSU MPI-CUDA Reduce Latency Test v7.3\n"
                       "[1,0]<stdout>:# Datatype: MPI_CHAR.\n"
                       "[1,0]<stdout>:# Size       Avg Latency(us)   Min Latency(us)   Max Latency(us)  Iterations\n"
                       "[1,0]<stdout>:1                      50.00             20.00            150.00        1000\n"
                       "Warning: some launcher noise\n"
                       "[1,0]<stdout>:2                      51.50             21.25            149.00        1000\n";
    OsuTrace *t = parse_ok(text);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_EQUAL(osu_op(t), NCCLTESTS_REDUCE);
    CU_ASSERT_STRING_EQUAL(osu_title(t), "OSU MPI-CUDA Reduce Latency Test");
    CU_ASSERT_EQUAL(osu_n_headers(t), 2);
    CU_ASSERT_STRING_EQUAL(osu_header(t, "source"), "test fixture");
    CU_ASSERT_STRING_EQUAL(osu_header_key(t, 1), "hardware");
    CU_ASSERT_PTR_NULL(osu_header(t, "nope"));
    CU_ASSERT_EQUAL(osu_n_rows(t), 2);
    const OsuRow *r = osu_row(t, 1);
    CU_ASSERT_DOUBLE_EQUAL(r->avg_us, 51.5, 0);
    CU_ASSERT_DOUBLE_EQUAL(r->min_us, 21.25, 0);
    CU_ASSERT_DOUBLE_EQUAL(r->max_us, 149.0, 0);
    CU_ASSERT_EQUAL(r->iterations, 1000);
    CU_ASSERT_EQUAL(r->line, 9);
    osu_free(t);
}

/* Tail-latency, Validation and several datatypes (7.4 style). */
static void test_osu_tail_validation_datatypes(void)
{
    const char *text = "# OSU MPI Allgather Latency Test v7.4\n"
                       "# Datatype: MPI_CHAR.\n"
                       "# Size       Avg Latency(us)        Validation  P50 Tail Lat(us)  P90 Tail Lat(us)  P99 "
                       "Tail Lat(us)\n"
                       "1                       2.00              Pass              1.90              2.10          "
                       "    3.00\n"
                       "# Datatype: MPI_INT.\n"
                       "# Size       Avg Latency(us)        Validation  P50 Tail Lat(us)  P90 Tail Lat(us)  P99 "
                       "Tail Lat(us)\n"
                       "4                       2.50              Fail              2.40              2.60          "
                       "    3.10\n";
    OsuTrace *t = parse_ok(text);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_EQUAL(osu_op(t), NCCLTESTS_ALLGATHER);
    CU_ASSERT_STRING_EQUAL(osu_version(t), "7.4");
    CU_ASSERT_EQUAL(osu_n_rows(t), 2);
    CU_ASSERT_STRING_EQUAL(osu_row(t, 0)->datatype, "MPI_CHAR");
    CU_ASSERT_STRING_EQUAL(osu_row(t, 1)->datatype, "MPI_INT");
    CU_ASSERT_EQUAL(osu_row(t, 0)->validation, 1);
    CU_ASSERT_EQUAL(osu_row(t, 1)->validation, 0);
    CU_ASSERT_DOUBLE_EQUAL(osu_row(t, 1)->avg_us, 2.5, 0);
    osu_free(t);
}

static void test_osu_ops(void)
{
    static const struct {
        const char *title;
        NcclTestsOp op;
    } cases[] = {
        { "OSU MPI Broadcast Latency Test v5.6.3", NCCLTESTS_BROADCAST },
        { "OSU MPI All-to-All Personalized Exchange Latency Test v7.2", NCCLTESTS_ALLTOALL },
        { "OSU MPI Reduce_scatter Latency Test v7.1", NCCLTESTS_REDUCESCATTER },
        { "OSU MPI Allgather Latency Test v6.1", NCCLTESTS_ALLGATHER },
        { "OSU MPI Gather Latency Test v7.3", NCCLTESTS_UNKNOWN },
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        char *text = g_strdup_printf("# %s\n# Size       Avg Latency(us)\n8   3.25\n", cases[i].title);
        OsuTrace *t = parse_ok(text);
        CU_ASSERT_PTR_NOT_NULL_FATAL(t);
        CU_ASSERT_EQUAL(osu_op(t), cases[i].op);
        g_free(text);
        osu_free(t);
    }
    /* '# op:' wins over the title; '# command:' is used when nothing else tells */
    OsuTrace *t = parse_ok("# op: alltoall\n# OSU MPI Allreduce Latency Test v7.3\n# Size Avg Latency(us)\n8 1\n");
    CU_ASSERT_EQUAL(osu_op(t), NCCLTESTS_ALLTOALL);
    osu_free(t);
    t = parse_ok("# command: mpirun -np 4 ./osu_reduce_scatter -f\n# Size Avg Latency(us)\n8 1\n");
    CU_ASSERT_EQUAL(osu_op(t), NCCLTESTS_REDUCESCATTER);
    osu_set_op(t, NCCLTESTS_ALLGATHER);
    CU_ASSERT_EQUAL(osu_op(t), NCCLTESTS_ALLGATHER);
    osu_free(t);
    t = parse_ok("# command: mpirun -np 4 ./osu_reduce -f\n# Size Avg Latency(us)\n8 1\n");
    CU_ASSERT_EQUAL(osu_op(t), NCCLTESTS_REDUCE);
    osu_free(t);
    t = parse_ok("# Size Avg Latency(us)\n8 1\n");
    CU_ASSERT_EQUAL(osu_op(t), NCCLTESTS_UNKNOWN);
    CU_ASSERT_PTR_NULL(osu_title(t));
    osu_free(t);
    /* point-to-point latency tables read too (op unknown) */
    t = parse_ok("# OSU MPI Latency Test v7.3\n# Size          Latency (us)\n0                       0.21\n");
    CU_ASSERT_EQUAL(osu_n_rows(t), 1);
    CU_ASSERT_EQUAL(osu_op(t), NCCLTESTS_UNKNOWN);
    osu_free(t);
}

static void test_osu_malformed(void)
{
    const char *H = "# OSU MPI Allreduce Latency Test v7.3\n# Size       Avg Latency(us)\n";
    char *s;
    expect_error("# OSU MPI Allreduce Latency Test v7.3\n1  2.0\n",
                 "t.txt:2: result row before any \"# Size ...\" column header");
    s = g_strconcat(H, "1 2.0\n2 2.0 3.0\n", NULL);
    expect_error(s, "t.txt:4: result row has 3 fields, the column header 2");
    g_free(s);
    s = g_strconcat(H, "1 abc\n", NULL);
    expect_error(s, "t.txt:3: latency \"abc\" is not a number >= 0");
    g_free(s);
    s = g_strconcat(H, "1 -2.0\n", NULL);
    expect_error(s, "t.txt:3: latency \"-2.0\" is not a number >= 0");
    g_free(s);
    s = g_strconcat(H, "1 nan\n", NULL);
    expect_error(s, "t.txt:3: latency \"nan\" is not a number >= 0");
    g_free(s);
    s = g_strconcat(H, "1.5 2.0\n", NULL);
    expect_error(s, "t.txt:3: size \"1.5\" is not a whole number of bytes");
    g_free(s);
    s = g_strconcat(H, "99999999999999999999 2.0\n", NULL);
    expect_error(s, "t.txt:3: size \"99999999999999999999\" is not a whole number of bytes");
    g_free(s);
    expect_error("# OSU MPI Bandwidth Test v7.3\n# Size      Bandwidth (MB/s)\n1 0.5\n",
                 "t.txt:2: column \"Bandwidth\" is not one this reader knows");
    expect_error("# OSU MPI Allreduce Latency Test v7.3\n# Avg Latency(us)\n1.5\n",
                 "t.txt:2: column header has no Size column");
    expect_error(H, "t.txt:2: no result rows (expected OSU collective latency output)");
    expect_error("", "t.txt:0: no result rows (expected OSU collective latency output)");
    expect_error("# op: gather\n# Size Avg Latency(us)\n1 1\n", "t.txt:1: unknown collective \"gather\" in '# op:'");
    expect_error("# Size Avg Latency(us) Min Latency(us) Max Latency(us) Iterations\n1 5.0 6.0 7.0 10\n",
                 "t.txt:2: average latency 5 us is outside [min, max] = [6, 7]");
    expect_error("# Size Avg Latency(us) Iterations\n1 5.0 1e3\n", "t.txt:2: iterations \"1e3\" is not a whole number");
    expect_error("# Size Avg Latency(us) Validation\n1 5.0 maybe\n",
                 "t.txt:2: validation \"maybe\" is neither Pass nor Fail");

    /* files: a missing one and a binary one are input errors naming the file */
    GError *err = NULL;
    CU_ASSERT_PTR_NULL(osu_load("/nonexistent/osu.txt", &err));
    CU_ASSERT_TRUE(err && err->code == SIM_ERROR_INPUT && strstr(err->message, "/nonexistent/osu.txt"));
    g_clear_error(&err);
    char *dir = g_dir_make_tmp("shardsim-test-osu-XXXXXX", NULL);
    char *path = g_build_filename(dir, "bin.txt", NULL);
    CU_ASSERT_TRUE(g_file_set_contents(path, "# Size Avg Latency(us)\n1 1\0\n", 27, NULL));
    CU_ASSERT_PTR_NULL(osu_load(path, &err));
    CU_ASSERT_TRUE(err && strstr(err->message, "NUL"));
    g_clear_error(&err);
    CU_ASSERT_TRUE(g_file_set_contents(path, "# OSU MPI Broadcast Latency Test v7.3\n# Size Avg Latency(us)\n64 9.5\n",
                                       -1, NULL));
    OsuTrace *t = osu_load(path, &err);
    CU_ASSERT_PTR_NOT_NULL(t);
    if (t) {
        CU_ASSERT_STRING_EQUAL(osu_name(t), path);
        CU_ASSERT_EQUAL(osu_op(t), NCCLTESTS_BROADCAST);
    }
    osu_free(t);
    g_unlink(path);
    g_rmdir(dir);
    g_free(path);
    g_free(dir);
}

static const TestCase tests[] = {
    { "v7 average only", test_osu_v7_avg },
    { "full table with provenance", test_osu_full_provenance },
    { "tail latency, validation, datatypes", test_osu_tail_validation_datatypes },
    { "collective from title, op, command", test_osu_ops },
    { "malformed input", test_osu_malformed },
};

TEST_MAIN("osu", tests)
