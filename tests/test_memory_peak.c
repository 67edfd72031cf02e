/* The memory model's peak against measured runs (issue 12).
 *
 * 1. Steps that ran: every row of the step tables in tests/data/steps is a
 * training run that completed on its GPUs: llm-foundry's MPT FSDP tables on
 * A100-40GB and H100-80GB (mosaicml/llm-foundry scripts/train/benchmarking/
 * README.md; the provenance is in each CSV's header), NeMo 24.07's DGX-H100
 * and 25.02's DGX-B200 Megatron-Core tables.  Each row's predicted peak is
 * printed term by term (weights, gradients, optimizer state, activations,
 * buffers, working set, reserve) beside the chip's HBM, and asserted: every
 * row that ran is predicted to fit.  None of these tables reports a peak or
 * a configuration that failed.
 *
 * 2. Published measured peaks: tests/data/memory/ (a CSV per source, provenance in each
 * .source): torchtitan's Llama 3.1 8B/70B/405B benchmarks, 1D-4D parallel on
 * 8-512 H100, the caching allocator's peak reservation per GPU, against
 * the model's "allocator_reserved".  Every row printed, predicted vs
 * published, with the bounds of test_published. */
#include "test_steps.h"

#define DATA SHARDSIM_SOURCE_DIR "/tests/data/memory/"
#define GIB (1024.0 * 1024 * 1024)

static double term(const cJSON *m, const char *k) { return cJSON_GetObjectItem(m, k)->valuedouble / GIB; }

#define MAX_ROWS 128

/* One row's prediction and, where the table has it, the published peak. */
typedef struct {
    double total_gib, allocator_gib, published_gib; /* NAN without */
    bool fits, modelled;
} Row;

/* Runs every row of `file`, prints its breakdown (and the published peak
 * beside it where the table has one); returns the rows. */
static int peak_table(const char *file, Row *rows)
{
    gchar *text = NULL;
    CU_ASSERT_FATAL(g_file_get_contents(file, &text, NULL, NULL));
    gchar **lines = g_strsplit(text, "\n", -1), **head = NULL;
    int n = 0;
    printf("\n%s (GiB per device)\n%-10s %-20s %6s %4s %4s %3s %4s %6s %6s %6s %6s %6s %6s %6s %7s %6s %4s %9s %7s\n",
           file, "model", "what", "seq", "GPUs", "prec", "mb", "ckpt", "weight", "grad", "optim", "activ", "buffer",
           "work", "resv", "total", "hbm", "fits", "published", "error");
    for (gchar **l = lines; *l && n < MAX_ROWS; l++) {
        if (!**l || **l == '#')
            continue;
        gchar **f = steps_cells(*l);
        if (!head) {
            head = f;
            continue;
        }
        cJSON *root = steps_row_scenario(file, head, f);
        cJSON *res = steps_run_scenario(file, root, *l);
        const cJSON *m = cJSON_GetObjectItem(res, "memory_per_device_bytes");
        Row *r = &rows[n++];
        r->fits = cJSON_IsTrue(cJSON_GetObjectItem(res, "fits"));
        r->total_gib = term(m, "total");
        r->allocator_gib = term(m, "allocator_reserved");
        int pi = col(head, "ref.memory_gib"), mi = col(head, "ref.modelled");
        r->published_gib = pi >= 0 ? atof(f[pi]) : NAN;
        r->modelled = mi < 0 || !strcmp(f[mi], "yes");
        char what[64] = "", err_s[16] = "";
        if (col(head, "ref.table") >= 0)
            snprintf(what, sizeof what, "T%s %s%s", f[col(head, "ref.table")], f[col(head, "ref.technique")],
                     r->modelled ? "" : "*");
        if (pi >= 0)
            snprintf(err_s, sizeof err_s, "%+6.1f%%", 100 * (r->allocator_gib / r->published_gib - 1));
        printf("%-10s %-20s %6s %4s %4s %3s %4s %6.2f %6.2f %6.2f %6.2f %6.2f %6.2f %6.2f %6.2f %7.2f %7.2f %6.2f %4s %9s "
               "%7s\n",
               cell(head, f, "ref.mpt", "ref.model"), what, cell(head, f, "model.seq_len", "ref.seq_len"),
               cell(head, f, "ref.gpus", "parallelism.dp"), cell(head, f, "precision", NULL),
               f[col(head, "micro_batch")], cell(head, f, "parallelism.recompute", NULL), term(m, "weights"),
               term(m, "gradients"), term(m, "optimizer_state"), term(m, "activations"), term(m, "buffers"),
               term(m, "working_set"), term(m, "fragmentation"), term(m, "reserve"), r->total_gib, r->allocator_gib,
               term(m, "hbm"), r->fits ? "yes" : "NO",
               pi >= 0 ? f[pi] : "-", err_s);
        cJSON_Delete(root);
        cJSON_Delete(res);
        g_strfreev(f);
    }
    g_strfreev(head);
    g_strfreev(lines);
    g_free(text);
    return n;
}

static void all_fit(const char *file)
{
    Row rows[MAX_ROWS];
    int n = peak_table(file, rows), fits = 0;
    for (int i = 0; i < n; i++)
        fits += rows[i].fits;
    printf("%d of %d rows that ran predicted to fit\n", fits, n);
    CU_ASSERT_TRUE(n > 0);
    CU_ASSERT_EQUAL(fits, n);
}

static void test_a100(void) { all_fit(STEPS "llmfoundry-mpt-a100-40gb.csv"); }
static void test_h100_calib(void) { all_fit(STEPS "llmfoundry-mpt-h100-80gb-calib.csv"); }
static void test_h100_heldout(void) { all_fit(STEPS "llmfoundry-mpt-h100-80gb-heldout.csv"); }
static void test_nemo(void) { all_fit(STEPS "nemo-24.07-h100-fp8.csv"); }
static void test_nemo_b200(void)
{
    all_fit(STEPS "nemo-25.02-b200-fp8-calib.csv");
    all_fit(STEPS "nemo-25.02-b200-fp8-heldout.csv");
}

/* Published measured peaks: every row printed, predicted vs published.
 * The tables publish the caching allocator's peak reservation
 * (torch.cuda.memory_stats()["reserved_bytes.all.peak"]), so the
 * prediction compared is the model's allocator view, "allocator_reserved":
 * the total less the reserve outside the allocator (CUDA context, NCCL's
 * buffers), with the allocator's fragmentation (GMLake's measured 10%, a
 * lower bound, memory.h) and the blocks FSDP's communication streams keep
 * (the root unit gathered, the reduce-scatter pool; step_report.c), and
 * torchtitan's own implementations, each read in its source: DTensor's
 * loss_parallel (16 B per logit), DTensor's tensor parallelism saving the
 * column-parallel linears' gathered inputs ("tp_impl": "dtensor"), FSDP2's
 * fp32 shards with no bf16 copy ("zero_impl": "fsdp").  None of these
 * constants comes from these tables: an independent check.
 * Asserted on the rows the model runs as they ran: no prediction above the
 * published peak by more than OVER (these runs fitted), none below it by
 * more than UNDER, and the median |error| at most MEDIAN.  The bounds are
 * the stated tolerance, set after the run to the residuals printed in the
 * report (-17.5% .. -0.2%, median 7.0%, on the 11 rows run as they ran
 * before "recompute": "op"; -17.5% .. +3.2%, median 3.2%, on 13 with it; with the loss and the tensor and
 * data parallelism as Megatron and DeepSpeed run them -23.5% .. +1.7%,
 * median 10.3%; with a fixed 1.5 GiB reserve and no fragmentation or
 * stream pools -30.4% .. -10.2%, median 12.3%). */
#define OVER 0.10
#define UNDER 0.20
#define MEDIAN 0.08
static void test_published(const char *file)
{
    Row rows[MAX_ROWS];
    double errs[MAX_ROWS];
    int n = peak_table(file, rows), checked = 0;
    double lo = INFINITY, hi = -INFINITY;
    for (int i = 0; i < n; i++) {
        if (!rows[i].modelled)
            continue;
        double e = rows[i].allocator_gib / rows[i].published_gib - 1;
        errs[checked++] = fabs(e);
        lo = fmin(lo, e);
        hi = fmax(hi, e);
    }
    CU_ASSERT_FATAL(checked > 0);
    qsort(errs, (size_t)checked, sizeof errs[0], cmp_double);
    double median = checked % 2 ? errs[checked / 2] : (errs[checked / 2 - 1] + errs[checked / 2]) / 2;
    printf("%d rows (* not run as published: printed only); %d checked: error %+.1f%% .. %+.1f%%, median |error| "
           "%.1f%% (bounds %+.0f%% .. %+.0f%%, median %.0f%%)\n",
           n, checked, 100 * lo, 100 * hi, 100 * median, -100 * UNDER, 100 * OVER, 100 * MEDIAN);
    CU_ASSERT_TRUE(hi <= OVER);
    CU_ASSERT_TRUE(lo >= -UNDER);
    CU_ASSERT_TRUE(median <= MEDIAN);
}

static void test_torchtitan(void) { test_published(DATA "torchtitan-llama3.1-h100.csv"); }

/* The framework's terms of torchtitan's 70B row (Table 4), each against its
 * own closed form: DTensor's loss_parallel holds 16 bytes per logit where
 * PyTorch's cross_entropy holds 12 (step_compute.c), DTensor's output layer
 * keeps its input gathered (Megatron: 1 / tp of it), and FSDP keeps no bf16
 * shard (2 bytes per parameter / N_d less). */
static double ws_of(const char *ce, const char *tp_impl, const char *zero_impl, double *weights)
{
    gchar *text = NULL;
    CU_ASSERT_FATAL(g_file_get_contents(DATA "torchtitan-llama3.1-70b-h100.json", &text, NULL, NULL));
    cJSON *root = cJSON_Parse(text);
    g_free(text);
    static const char *const k[][2] = {{"nodes", "32"}, {"parallelism.dp", "32"}, {"parallelism.tp", "8"},
                                       {"parallelism.sequence_parallel", "true"}, {"micro_batch", "16"},
                                       {"global_batch", "512"}};
    for (size_t i = 0; i < G_N_ELEMENTS(k); i++)
        set_key(root, k[i][0], k[i][1]);
    set_key(root, "cross_entropy", ce);
    set_key(root, "parallelism.tp_impl", tp_impl);
    set_key(root, "parallelism.zero_impl", zero_impl);
    cJSON *res = steps_run_scenario("torchtitan-llama3.1-70b-h100.json", root, ce);
    const cJSON *m = cJSON_GetObjectItem(res, "memory_per_device_bytes");
    double ws = cJSON_GetObjectItem(m, "working_set")->valuedouble;
    *weights = cJSON_GetObjectItem(m, "weights")->valuedouble;
    cJSON_Delete(res);
    cJSON_Delete(root);
    return ws;
}

static void test_torchtitan_terms(void)
{
    double T = 16.0 * 8192, logits = T * 128256 / 8, head = T * 8192 * 2, w_ds, w_fsdp, w;
    double base = ws_of("unfused", "megatron", "deepspeed", &w_ds);
    double lp = ws_of("loss_parallel", "megatron", "fsdp", &w_fsdp);
    double dt = ws_of("loss_parallel", "dtensor", "fsdp", &w);
    printf("\n70B T4 working set: unfused/megatron %.2f GiB, loss_parallel %.2f, + dtensor %.2f; weights %.2f -> %.2f GiB\n",
           base / GIB, lp / GIB, dt / GIB, w_ds / GIB, w_fsdp / GIB);
    CU_ASSERT_DOUBLE_EQUAL(lp - base, 4 * logits, 1);
    CU_ASSERT_DOUBLE_EQUAL(dt - lp, head * (1 - 1.0 / 8), 1);
    CU_ASSERT_DOUBLE_EQUAL(w_fsdp, 0, 0);
    CU_ASSERT_TRUE(w_ds > 0.9 * 2 * 70.6e9 / 256 && w_ds < 1.1 * 2 * 70.6e9 / 256);
}

static const TestCase tests[] = {
    {"llm-foundry MPT A100-40GB: every row that ran fits", test_a100},
    {"llm-foundry MPT H100-80GB (calibration half): every row that ran fits", test_h100_calib},
    {"llm-foundry MPT H100-80GB (held-out half): every row that ran fits", test_h100_heldout},
    {"NeMo 24.07 DGX-H100 FP8: every row that ran fits", test_nemo},
    {"NeMo 25.02 DGX-B200 FP8: every row that ran fits", test_nemo_b200},
    {"torchtitan Llama 3.1 8B-405B, 1D-4D on H100: allocator peaks -20%..+10%, median 8%", test_torchtitan},
    {"torchtitan 70B: loss_parallel, DTensor's gathered head input, FSDP's shards", test_torchtitan_terms},
};

TEST_MAIN("memory_peak", tests)
