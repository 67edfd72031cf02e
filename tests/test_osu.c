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
    /* '# op:' agreeing with the title; '# command:' is used when nothing else tells */
    OsuTrace *t = parse_ok("# op: allreduce\n# OSU MPI Allreduce Latency Test v7.3\n# Size Avg Latency(us)\n8 1\n");
    CU_ASSERT_EQUAL(osu_op(t), NCCLTESTS_ALLREDUCE);
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
    /* point-to-point: a sendrecv of two ranks, latency or bandwidth */
    t = parse_ok("# OSU MPI Latency Test v7.3\n# Size          Latency (us)\n0                       0.21\n");
    CU_ASSERT_EQUAL(osu_n_rows(t), 1);
    CU_ASSERT_EQUAL(osu_op(t), NCCLTESTS_SENDRECV);
    CU_ASSERT_EQUAL(osu_metric(t), OSU_LATENCY);
    osu_free(t);
    t = parse_ok("# OSU MPI-CUDA Bi-Directional Bandwidth Test v7.3\n# Size      Bandwidth (MB/s)\n1 0.50\n4194304 24000.5\n");
    CU_ASSERT_EQUAL(osu_op(t), NCCLTESTS_SENDRECV);
    CU_ASSERT_EQUAL(osu_metric(t), OSU_BIBANDWIDTH);
    CU_ASSERT_DOUBLE_EQUAL(osu_row(t, 1)->bw_mbs, 24000.5, 0);
    CU_ASSERT_TRUE(isnan(osu_row(t, 1)->avg_us));
    osu_free(t);
    t = parse_ok("# command: mpirun -np 2 ./osu_bw -m 8:8\n# Size      Bandwidth(MB/s)\n8 10\n");
    CU_ASSERT_EQUAL(osu_metric(t), OSU_BANDWIDTH);
    osu_free(t);
    /* the one benchmark the notes name; several name none */
    t = parse_ok("# notes: mpirun -n 8 osu_allgather -f\n# Size Avg Latency(us)\n8 1\n");
    CU_ASSERT_EQUAL(osu_op(t), NCCLTESTS_ALLGATHER);
    osu_free(t);
    t = parse_ok("# notes: osu_latency, then osu_allgather\n# Size Avg Latency(us)\n8 1\n");
    CU_ASSERT_EQUAL(osu_op(t), NCCLTESTS_UNKNOWN);
    osu_free(t);
}

static void test_osu_malformed(void)
{
    const char *H = "# OSU MPI Allreduce Latency Test v7.3\n# Size       Avg Latency(us)\n";
    char *s;
    expect_error("# OSU MPI Allreduce Latency Test v7.3\n1  2.0\n",
                 "t.txt:2: result row before any \"# Size ...\" column header");
    /* before OSU's first line, a job's module list is noise, not rows */
    OsuTrace *pre = parse_ok("Currently Loaded Modules:\n  1) GCCcore/12.3.0\n 15) OSU/7.1\n" "# OSU MPI Latency Test v7.1\n"
                             "# Size          Latency (us)\n# Datatype: MPI_CHAR.\n1 1.66\n");
    CU_ASSERT_EQUAL(osu_n_rows(pre), 1);
    osu_free(pre);
    s = g_strconcat(H, "1 2.0\n2 2.0 3.0\n", NULL);
    expect_error(s, "t.txt:4: result row has 3 fields, the column header 2");
    g_free(s);
    s = g_strconcat(H, "1 abc\n", NULL);
    expect_error(s, "t.txt:3: latency \"abc\" is not 0 or a number of us from 0.001 to 1e10");
    g_free(s);
    s = g_strconcat(H, "1 -2.0\n", NULL);
    expect_error(s, "t.txt:3: latency \"-2.0\" is not 0 or a number of us from 0.001 to 1e10");
    g_free(s);
    s = g_strconcat(H, "1 nan\n", NULL);
    expect_error(s, "t.txt:3: latency \"nan\" is not 0 or a number of us from 0.001 to 1e10");
    g_free(s);
    s = g_strconcat(H, "1 1e308\n", NULL);
    expect_error(s, "t.txt:3: latency \"1e308\" is not 0 or a number of us from 0.001 to 1e10");
    g_free(s);
    s = g_strconcat(H, "1 1e-300\n", NULL); /* below what OSU prints: ratios of 300 digits */
    expect_error(s, "t.txt:3: latency \"1e-300\" is not 0 or a number of us from 0.001 to 1e10");
    g_free(s);
    s = g_strconcat(H, "2199023255552 2.0\n", NULL); /* 2 TiB */
    expect_error(s, "t.txt:3: size \"2199023255552\" is not a whole number of bytes up to 1 TiB");
    g_free(s);
    s = g_strconcat(H, "1.5 2.0\n", NULL);
    expect_error(s, "t.txt:3: size \"1.5\" is not a whole number of bytes up to 1 TiB");
    g_free(s);
    s = g_strconcat(H, "99999999999999999999 2.0\n", NULL);
    expect_error(s, "t.txt:3: size \"99999999999999999999\" is not a whole number of bytes up to 1 TiB");
    g_free(s);
    expect_error("# OSU MPI Message Rate Test v7.3\n# Size      Messages/s\n1 0.5\n",
                 "t.txt:2: column \"Messages/s\" is not one this reader knows");
    expect_error("# OSU MPI Allreduce Latency Test v7.3\n# Avg Latency(us)\n1.5\n",
                 "t.txt:2: column header has no Size column");
    expect_error(H, "t.txt:2: no result rows (expected OSU latency or bandwidth output)");
    expect_error("", "t.txt:0: no result rows (expected OSU latency or bandwidth output)");
    /* found by fuzz_osu: a latency table then a bandwidth table read as one
     * bandwidth run whose first rows had no bandwidth */
    expect_error("# OSU MPI Allreduce Latency Test v7.3\n# Size Avg Latency(us)\n1 1.9\n"
                 "# Size      Bandwidth (MB/s)\n268435456 12254.16\n",
                 "t.txt:4: second table measures bandwidth, the first (line 2) latency");
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

/* Files that could be read two ways are bad input, at the line that shows it. */
static void test_osu_contradictions(void)
{
    const char *H = "# OSU MPI Allreduce Latency Test v7.3\n# Size       Avg Latency(us)\n";
    char *s = g_strconcat(H, "4 2.0\n8 2.5\n# OSU MPI Allgather Latency Test v7.3\n# Size       Avg Latency(us)\n4 3.0\n", NULL);
    expect_error(s, "t.txt:5: second table is osu_allgather at line 5, the first was osu_allreduce at line 1");
    g_free(s);
    s = g_strconcat(H, "4 2.0\n", H, "4 2.0\n", NULL);
    expect_error(s, "t.txt:4: a second osu_allreduce output starts here (the first at line 1): give each run its own file");
    g_free(s);
    s = g_strconcat(H, "4 2.0\n8 2.5\n4 2.0\n8 2.5\n", NULL);
    expect_error(s, "t.txt:5: size 4 does not grow from 8 at line 4 (a table given twice?)");
    g_free(s);
    s = g_strconcat(H, "4 2.0\n-8 2.5\n", NULL);
    expect_error(s, "t.txt:4: size \"-8\" is not a whole number of bytes up to 1 TiB");
    g_free(s);
    expect_error("# op: alltoall\n# OSU MPI Allreduce Latency Test v7.3\n# Size Avg Latency(us)\n8 1\n",
                 "t.txt:1: '# op:' says alltoall, but the title at line 2 is osu_allreduce");
    expect_error("# command: mpirun ./osu_bcast\n# OSU MPI Allreduce Latency Test v7.3\n# Size Avg Latency(us)\n8 1\n",
                 "t.txt:1: '# command:' runs osu_bcast, but the title at line 2 is osu_allreduce");
    expect_error("# OSU MPI Bandwidth Test v7.3\n# Size Avg Latency(us)\n8 1\n",
                 "t.txt:2: a latency column, but osu_bw is a bandwidth test");
    expect_error("# OSU MPI Latency Test v7.3\n# Size Bandwidth (MB/s)\n8 1\n",
                 "t.txt:2: a bandwidth column, but osu_latency is a latency test");
    expect_error("# Size Bandwidth (MB/s)\n8 1\n",
                 "t.txt:1: a bandwidth table, but no title or '# command:' tells osu_bw from osu_bibw");
    expect_error("# OSU MPI Bandwidth Test v7.3\n# Size Bandwidth (MB/s)\n8 -1\n",
                 "t.txt:3: bandwidth \"-1\" is not 0 or a number of MB/s from 0.001 to 1e9");
    expect_error("# OSU MPI Latency Test v7.3\n# Size Bandwidth (MB/s) Latency (us)\n8 1 1\n",
                 "t.txt:2: column header has both a latency and a bandwidth column");
    /* each datatype block starts its sizes afresh */
    s = g_strconcat(H, "4 2.0\n8 2.5\n# Datatype: MPI_INT.\n# Size       Avg Latency(us)\n4 2.0\n", NULL);
    OsuTrace *t = parse_ok(s);
    CU_ASSERT_EQUAL(osu_n_rows(t), 3);
    osu_free(t);
    g_free(s);
}

/* The published OSU traces: counted by hand from the files. */
static void test_osu_real_traces(void)
{
    static const struct {
        const char *file;
        size_t rows;
        uint64_t first, last;
        double first_value, last_value; /* avg_us or bw_mbs as printed */
        NcclTestsOp op;
        OsuMetric metric;
        const char *datatype;
        bool verbatim; /* copied unchanged: provenance in FILE.source, not in # headers */
        const char *version; /* OSU's; NULL: 7.5 */
    } cases[] = {
        { "osu_allreduce_oci-bm-optimized3.36_4node144proc_rocev2-100g_ocitutorials.txt", 27, 4, 268435456, 11.69,
          496306.98, NCCLTESTS_ALLREDUCE, OSU_LATENCY, "MPI_INT", false, NULL },
        { "osu_alltoall_oci-bm-optimized3.36_1node36proc_ocitutorials.txt", 27, 1, 67108864, 10.29, 747888.64,
          NCCLTESTS_ALLTOALL, OSU_LATENCY, "MPI_CHAR", false, NULL },
        { "osu_bw_oci-bm-optimized3.36_2node.txt", 1, 268435456, 268435456, 12254.16, 12254.16,
          NCCLTESTS_SENDRECV, OSU_BANDWIDTH, NULL, false, NULL },
        { "osu_latency_oci-bm-optimized3.36_2node.txt", 1, 1, 1, 1.67, 1.67, NCCLTESTS_SENDRECV, OSU_LATENCY, NULL,
          false, NULL },
        { "osu_allreduce_cirrus-ex4000_2node576proc_slingshot11_cray-mpich-8.1.32_epcc-docs.txt", 19, 4, 1048576, 10.05,
          1064.92, NCCLTESTS_ALLREDUCE, OSU_LATENCY, "MPI_INT", true, NULL },
        { "osu_latency_gh200-alps-clariden_2node_slingshot11-cxi_mpich-4.2.1_cscs-cray-network-stack.txt", 23, 1,
          4194304, 3.19, 182.64, NCCLTESTS_SENDRECV, OSU_LATENCY, "MPI_CHAR", true, NULL },
        { "osu_bw_gh200-alps-clariden_2node_host_slingshot11-cxi_openmpi-5.0.8_cscs-cray-network-stack.txt", 23, 1,
          4194304, 0.93, 23979.28, NCCLTESTS_SENDRECV, OSU_BANDWIDTH, "MPI_CHAR", true, NULL },
        { "osu_alltoall_gh200-alps-clariden_2node8proc_host_slingshot11-cxi_openmpi-5.0.8_cscs-cray-network-stack.txt",
          21, 1, 1048576, 12.06, 517.90, NCCLTESTS_ALLTOALL, OSU_LATENCY, "MPI_CHAR", true, NULL },
        { "osu_alltoall_gh200-alps-clariden_2node8proc_slingshot11-cxi_mpich-4.2.1_cscs-cray-network-stack.txt", 21, 1,
          1048576, 22.31, 1824.77, NCCLTESTS_ALLTOALL, OSU_LATENCY, "MPI_CHAR", true, NULL },
        { "osu_alltoall_gh200-alps-clariden_2node8proc_host_slingshot11-cxi-hook_mpich-4.3.1_cscs-docs.txt",
          21, 1, 1048576, 22.25, 1823.52, NCCLTESTS_ALLTOALL, OSU_LATENCY, "MPI_CHAR", true, NULL },
        { "osu_alltoall_gh200-alps-clariden_2node8proc_host_slingshot11-cxi-hook_openmpi-5.0.8_cscs-docs.txt",
          21, 1, 1048576, 12.46, 519.85, NCCLTESTS_ALLTOALL, OSU_LATENCY, "MPI_CHAR", true, NULL },
        { "osu_bw_gh200-alps-clariden_2node_host_slingshot11-cxi-hook_mpich-4.3.1_cscs-docs.txt",
          23, 1, 4194304, 0.88, 24007.69, NCCLTESTS_SENDRECV, OSU_BANDWIDTH, "MPI_CHAR", true, NULL },
        { "osu_bw_gh200-alps-clariden_2node_host_slingshot11-cxi-hook_openmpi-5.0.8_cscs-docs.txt",
          23, 1, 4194304, 0.95, 23982.18, NCCLTESTS_SENDRECV, OSU_BANDWIDTH, "MPI_CHAR", true, NULL },
        { "osu_bibw_gh200-alps-clariden_2node_host_slingshot11-cxi-hook_mpich-4.3.1_cscs-docs.txt",
          23, 1, 4194304, 1.03, 46433.80, NCCLTESTS_SENDRECV, OSU_BIBANDWIDTH, "MPI_CHAR", true, NULL },
        { "osu_bibw_gh200-alps-clariden_2node_host_slingshot11-cxi-hook_openmpi-5.0.8_cscs-docs.txt",
          23, 1, 4194304, 0.93, 46417.59, NCCLTESTS_SENDRECV, OSU_BIBANDWIDTH, "MPI_CHAR", true, NULL },
        { "osu_bw_gh200-alps-clariden_1node2proc_host_shm_mpich-4.3.1_cscs-docs.txt",
          23, 1, 4194304, 1.28, 13187.01, NCCLTESTS_SENDRECV, OSU_BANDWIDTH, "MPI_CHAR", true, NULL },
        { "osu_bw_gh200-alps-clariden_1node2proc_host_slingshot11-cxi-hook_openmpi-5.0.8_cscs-docs.txt",
          23, 1, 4194304, 0.96, 23980.15, NCCLTESTS_SENDRECV, OSU_BANDWIDTH, "MPI_CHAR", true, NULL },
        { "osu_latency_gh200-alps-clariden_2node_host_slingshot11-cxi-hook_mpich-4.3.1_cscs-docs.txt",
          23, 1, 4194304, 3.00, 181.46, NCCLTESTS_SENDRECV, OSU_LATENCY, "MPI_CHAR", true, NULL },
        { "osu_latency_gh200-alps-clariden_2node_host_slingshot11-cxi-hook_openmpi-5.0.8_cscs-docs.txt",
          23, 1, 4194304, 3.34, 182.39, NCCLTESTS_SENDRECV, OSU_LATENCY, "MPI_CHAR", true, NULL },
        { "osu_latency_gh200-alps-clariden_2node_host_slingshot11-cxi_openmpi-5.0.7_cscs-cray-network-stack.txt", 23, 1,
          4194304, 3.34, 183.66, NCCLTESTS_SENDRECV, OSU_LATENCY, "MPI_CHAR", true, NULL },
        { "osu_bw_gh200-alps_2node_host_slingshot11-cxi-hook_mpich-4.3.1_cscs-docs-mpich-page.txt", 23, 1, 4194304,
          0.97, 24037.14, NCCLTESTS_SENDRECV, OSU_BANDWIDTH, "MPI_CHAR", true, NULL },
        { "osu_bw_gh200-alps_1node2proc_host_xpmem_mpich-4.3.1_cscs-docs-mpich-page.txt", 23, 1, 4194304, 1.19,
          23906.16, NCCLTESTS_SENDRECV, OSU_BANDWIDTH, "MPI_CHAR", true, NULL },
        { "osu_bw_gh200-alps_2node_host_slingshot11-cxi-hook_mpich-4.1_osu-6.2_cscs-docs-resource-hook.txt", 23, 1,
          4194304, 1.21, 23925.61, NCCLTESTS_SENDRECV, OSU_BANDWIDTH, NULL, true, "6.2" },
        { "osu_bw_gh200-alps-santis_1node2proc_host_slingshot11-cxi_openmpi-5.0.8_cscs-cray-network-stack.txt", 23, 1,
          4194304, 0.88, 24007.35, NCCLTESTS_SENDRECV, OSU_BANDWIDTH, "MPI_CHAR", true, NULL },
        { "osu_bw_gh200-alps-santis_2node_host_slingshot11-cxi_openmpi-5.0.8_cscs-cray-network-stack.txt", 23, 1,
          4194304, 1.47, 24005.74, NCCLTESTS_SENDRECV, OSU_BANDWIDTH, "MPI_CHAR", true, NULL },
        { "osu_bibw_gh200-alps-santis_2node_host_slingshot11-cxi_openmpi-5.0.8_cscs-cray-network-stack.txt", 23, 1,
          4194304, 1.49, 46506.47, NCCLTESTS_SENDRECV, OSU_BIBANDWIDTH, "MPI_CHAR", true, NULL },
        { "osu_bibw_olivia-cpu-epyc9745_2node_host_slingshot11-cxi_openmpi-5_eessi-blog.txt", 23, 1, 4194304, 2.87,
          46609.10, NCCLTESTS_SENDRECV, OSU_BIBANDWIDTH, "MPI_CHAR", true, "7.1" },
        { "osu_latency_olivia-cpu-epyc9745_2node_host_slingshot11-cxi_openmpi-5_eessi-blog.txt", 23, 1, 4194304, 1.66,
          182.30, NCCLTESTS_SENDRECV, OSU_LATENCY, "MPI_CHAR", true, "7.1" },
        { "osu_bibw_betzy-epyc7742_2node_hdr100-ib_hpcx-2.7-ucx-1.9_ucx-issue7245.txt", 23, 1, 4194304, 5.95,
          24609.96, NCCLTESTS_SENDRECV, OSU_BIBANDWIDTH, NULL, true, "5.7" },
    };
    int listed = 0;
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        char *path = g_build_filename(SHARDSIM_SOURCE_DIR, "tests", "data", "traces", cases[i].file, NULL);
        GError *err = NULL;
        OsuTrace *t = osu_load(path, &err);
        if (!t)
            fprintf(stderr, "\n%s\n", err->message);
        CU_ASSERT_PTR_NOT_NULL_FATAL(t);
        size_t n = osu_n_rows(t);
        CU_ASSERT_EQUAL(n, cases[i].rows);
        CU_ASSERT_EQUAL(osu_op(t), cases[i].op);
        CU_ASSERT_EQUAL(osu_metric(t), cases[i].metric);
        CU_ASSERT_STRING_EQUAL(osu_version(t), cases[i].version ? cases[i].version : "7.5");
        const OsuRow *a = osu_row(t, 0), *b = osu_row(t, n - 1);
        bool bw = cases[i].metric != OSU_LATENCY;
        CU_ASSERT_EQUAL(a->size_bytes, cases[i].first);
        CU_ASSERT_EQUAL(b->size_bytes, cases[i].last);
        CU_ASSERT_DOUBLE_EQUAL(bw ? a->bw_mbs : a->avg_us, cases[i].first_value, 1e-9);
        CU_ASSERT_DOUBLE_EQUAL(bw ? b->bw_mbs : b->avg_us, cases[i].last_value, 1e-9);
        CU_ASSERT_TRUE(cases[i].datatype ? a->datatype && strcmp(a->datatype, cases[i].datatype) == 0
                                         : a->datatype == NULL);
        if (cases[i].verbatim) {
            char *src = g_strconcat(path, ".source", NULL);
            CU_ASSERT_TRUE(g_file_test(src, G_FILE_TEST_IS_REGULAR));
            g_free(src);
        } else {
            CU_ASSERT_PTR_NOT_NULL(osu_header(t, "source"));
            CU_ASSERT_PTR_NOT_NULL(osu_header(t, "hardware"));
        }
        osu_free(t);
        g_free(path);
        g_clear_error(&err);
    }
    /* every OSU file in the folder is listed above */
    GDir *dir = g_dir_open(SHARDSIM_SOURCE_DIR "/tests/data/traces", 0, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(dir);
    const char *name;
    while ((name = g_dir_read_name(dir))) {
        if (!g_str_has_prefix(name, "osu_") || g_str_has_suffix(name, ".source"))
            continue;
        bool found = false;
        for (size_t i = 0; i < G_N_ELEMENTS(cases); i++)
            found |= strcmp(cases[i].file, name) == 0;
        if (!found)
            fprintf(stderr, "\n%s has no expectations in test_osu.c\n", name);
        CU_ASSERT_TRUE(found);
        listed++;
    }
    g_dir_close(dir);
    CU_ASSERT_EQUAL(listed, (int)G_N_ELEMENTS(cases));
}

static const TestCase tests[] = {
    { "v7 average only", test_osu_v7_avg },
    { "full table with provenance", test_osu_full_provenance },
    { "tail latency, validation, datatypes", test_osu_tail_validation_datatypes },
    { "collective from title, op, command", test_osu_ops },
    { "malformed input", test_osu_malformed },
    { "contradictions", test_osu_contradictions },
    { "published traces", test_osu_real_traces },
};

TEST_MAIN("osu", tests)
