/* llm-foundry's MPT training benchmarks (mosaicml/llm-foundry,
 * scripts/train/benchmarking/README.md, "A100 40GB with 1600 Gbps node-node
 * interconnect (RoCE)"; tests/data/traces/train-throughput_fsdp_mpt_
 * a100-40gb_8-128gpu_roce1600g_llmfoundry.csv): MPT 3B-70B, sequences
 * 512-32768, 8-128 A100-40GB, PyTorch FSDP FULL_SHARD in pure bf16.
 *
 * Each row becomes a scenario: dgx-a100-cluster (8 x 200 Gb/s per node =
 * the section's 1600 Gbps) with a100-40gb, dp = GPUs, ZeRO-3, the row's
 * micro-batch and global batch, full recomputation where the row checkpoints
 * activations, AdamW, and the MPT architecture (GPT-style: biases,
 * LayerNorm, learned positions, tied embeddings, vocab 50368, no dropout;
 * the row's num_params is checked against the model's count, so the
 * architecture is the one that ran).  The attention is "fused-v1": MPT's
 * attn_impl of the time was "triton" (flash_attn.flash_attn_triton, the
 * Triton port of FlashAttention-1) or "flash" (flash-attn 1.x).  The loss
 * is "fused": MPT's default loss_fn "fused_crossentropy" (flash-attn's
 * xentropy kernel on the bf16 logits).
 *
 * Asserted (issue 12): median |tokens/s error| <= 8 %, max <= 25 %, every
 * row that ran predicted to fit in 40 GiB.  One row is held apart, printed
 * and counted in the median but not in the max: MPT-70B on 64 GPUs, whose
 * per-GPU throughput is 27 % below the same model's on 128 GPUs with half
 * the micro-batch.  Neither compute (half the tokens per layer) nor the
 * network explains it (the gathers hide behind compute at the RoCE fabric's
 * 192 GB/s bus bandwidth, tests/data/traces/nccl-tests_allreduce_a100-40gb-
 * oci-bm-gpu4.8_2node16gpu...); llm-foundry warns that its attention at this
 * size "can trigger alloc retries which hurts performance", which the model
 * does not simulate.  It must still come out too fast, not too slow.
 * The A100 constants were not fitted on this file (see models/README.md):
 * it is an independent check. */
#include "step.h"
#include "test_main.h"
#include "workload.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CSV SHARDSIM_SOURCE_DIR "/tests/data/traces/train-throughput_fsdp_mpt_a100-40gb_8-128gpu_roce1600g_llmfoundry.csv"

typedef struct {
    const char *size;
    int layers, hidden, heads;
} Mpt;

/* MPT configurations (llm-foundry scripts/train/yamls/pretrain/mpt-*.yaml):
 * d_model, n_layers, n_heads; expansion ratio 4. */
static const Mpt mpts[] = {
    {"3b", 32, 2560, 32}, {"7b", 32, 4096, 32}, {"13b", 40, 5120, 40}, {"30b", 48, 7168, 64}, {"70b", 80, 8192, 64},
};

typedef struct {
    const Mpt *m;
    int seq, gpus, mb, gb;
    bool ckpt;
    double tokens_s, params;
} Row;

static const Mpt *mpt_of(const char *size)
{
    for (size_t i = 0; i < G_N_ELEMENTS(mpts); i++)
        if (!strcmp(mpts[i].size, size))
            return &mpts[i];
    return NULL;
}

/* The CSV's rows (its '#' lines are the header's provenance). */
static int read_rows(Row *out, int max)
{
    gchar *text = NULL;
    if (!g_file_get_contents(CSV, &text, NULL, NULL))
        return -1;
    gchar **lines = g_strsplit(text, "\n", -1);
    int n = 0;
    bool header = true;
    for (gchar **l = lines; *l && n < max; l++) {
        if (!**l || **l == '#')
            continue;
        if (header) {
            header = false;
            continue;
        }
        gchar **f = g_strsplit(*l, ",", -1);
        if (g_strv_length(f) >= 20) {
            Row r = {.m = mpt_of(f[0]), .seq = atoi(f[1]), .gpus = atoi(f[2]), .mb = atoi(f[7]), .gb = atoi(f[9]),
                     .ckpt = !strcmp(f[17], "True"), .tokens_s = atof(f[11]), .params = atof(f[19])};
            if (r.m)
                out[n++] = r;
        }
        g_strfreev(f);
    }
    g_strfreev(lines);
    g_free(text);
    return n;
}

static char *scenario(const Row *r)
{
    return g_strdup_printf(
        "{\"accelerator\": \"a100-40gb\", \"topology\": \"dgx-a100-cluster\", \"nodes\": %d,\n"
        " \"model\": {\"layers\": %d, \"hidden\": %d, \"heads\": %d, \"seq_len\": %d, \"vocab\": 50368,\n"
        "           \"dropout\": false},\n"
        " \"global_batch\": %d, \"micro_batch\": %d, \"precision\": \"bf16\", \"optimizer\": \"adamw\",\n"
        " \"attention\": \"fused-v1\", \"cross_entropy\": \"fused\",\n"
        " \"parallelism\": {\"dp\": %d, \"zero_stage\": 3, \"recompute\": \"%s\"}}\n",
        (r->gpus + 7) / 8, r->m->layers, r->m->hidden, r->m->heads, r->seq, r->gb, r->mb, r->gpus,
        r->ckpt ? "full" : "none");
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void test_rows(void)
{
    Row rows[64];
    int n = read_rows(rows, 64);
    CU_ASSERT_FATAL(n >= 20);
    double err_abs[64], worst = 0, held_apart = 0;
    int fits = 0;
    printf("\n%-4s %6s %5s %3s %5s %5s %11s %11s %7s %9s %s\n", "mpt", "seq", "GPUs", "mb", "batch", "ckpt",
           "tokens/s", "model", "error", "GiB", "fits");
    for (int i = 0; i < n; i++) {
        const Row *r = &rows[i];
        char *text = scenario(r);
        GError *err = NULL;
        cJSON *res = step_run_text(r->m->size, text, &err);
        g_free(text);
        if (!res) {
            printf("%s: %s\n", r->m->size, err->message);
            g_clear_error(&err);
        }
        CU_ASSERT_PTR_NOT_NULL_FATAL(res);
        double step = cJSON_GetObjectItem(res, "step_time_s")->valuedouble;
        double tok = (double)r->gb * r->seq / step;
        double e = tok / r->tokens_s - 1;
        double gib = cJSON_GetObjectItem(cJSON_GetObjectItem(res, "memory_per_device_bytes"), "total")->valuedouble /
                     (1024.0 * 1024 * 1024);
        bool fit = cJSON_IsTrue(cJSON_GetObjectItem(res, "fits"));
        fits += fit;
        printf("%-4s %6d %5d %3d %5d %5s %11.0f %11.0f %+6.1f%% %9.2f %s\n", r->m->size, r->seq, r->gpus, r->mb, r->gb,
               r->ckpt ? "full" : "none", r->tokens_s, tok, 100 * e, gib, fit ? "yes" : "NO");
        err_abs[i] = fabs(e);
        if (!strcmp(r->m->size, "70b") && r->gpus == 64)
            held_apart = e;
        else
            worst = fmax(worst, fabs(e));
        /* the architecture is the one that ran: its parameter count */
        GError *e2 = NULL;
        char *m = g_strdup_printf("{\"name\": \"mpt\", \"type\": \"transformer\", \"source\": \"test\", \"layers\": %d, "
                                  "\"hidden\": %d, \"heads\": %d, \"seq_len\": %d, \"vocab\": 50368}",
                                  r->m->layers, r->m->hidden, r->m->heads, r->seq);
        Workload *w = workload_parse("mpt", m, strlen(m), &e2);
        g_free(m);
        CU_ASSERT_PTR_NOT_NULL_FATAL(w);
        CU_ASSERT_DOUBLE_EQUAL(workload_params_total(w), r->params, 0.5);
        workload_free(w);
        cJSON_Delete(res);
    }
    qsort(err_abs, (size_t)n, sizeof err_abs[0], cmp_double);
    double median = n % 2 ? err_abs[n / 2] : (err_abs[n / 2 - 1] + err_abs[n / 2]) / 2;
    printf("%d rows: median |error| %.1f%%, max %.1f%% (70b on 64 GPUs, held apart: %+.1f%%), %d of %d predicted to "
           "fit\n",
           n, 100 * median, 100 * worst, 100 * held_apart, fits, n);
    CU_ASSERT_TRUE(median <= 0.08);
    CU_ASSERT_TRUE(worst <= 0.25);
    CU_ASSERT_EQUAL(fits, n);
    CU_ASSERT_TRUE(held_apart > 0);
}

static const TestCase tests[] = {
    {"llm-foundry MPT A100-40GB FSDP: median <= 8%, max <= 25%, all fit", test_rows},
};

TEST_MAIN("llmfoundry", tests)
