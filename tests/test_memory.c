#include "accel.h"
#include "memory.h"
#include "workload.h"
#include "test_main.h"

#include <CUnit/Basic.h>
#include <math.h>
#include <string.h>

static double zero_gb(double psi, int nd, int stage)
{
    MemoryConfig c = memory_config_default();
    c.params = psi;
    c.dp = nd;
    c.zero_stage = stage;
    c.precision = MEMORY_MIXED_FP16;
    c.optimizer = MEMORY_OPT_ADAM;
    c.reserve_bytes = 0;
    MemoryBreakdown b;
    GError *err = NULL;
    CU_ASSERT_TRUE(memory_estimate(&c, &b, &err));
    g_clear_error(&err);
    CU_ASSERT_DOUBLE_EQUAL(b.total, b.model_states, 0);
    return b.model_states / 1e9;
}

/* `printed` as a string: its last digit sets the tolerance (half a unit). */
static void assert_printed(double got, const char *printed)
{
    const char *dot = strchr(printed, '.');
    int decimals = dot ? (int)strlen(dot + 1) : 0;
    double tol = 0.5 * pow(10, -decimals) * (1 + 1e-9);
    double want = g_ascii_strtod(printed, NULL);
    if (fabs(got - want) > tol)
        fprintf(stderr, "\n  got %.6g, printed %s\n", got, printed);
    CU_ASSERT_TRUE(fabs(got - want) <= tol);
}

/* Rajbhandari et al. 2020, Figure 1 / section 5: Psi = 7.5B, N_d = 64, K = 12. */
static void test_zero_figure1(void)
{
    printf("\nZeRO paper, 7.5B parameters on 64 devices, GB per device, stages 0-3: %.3g / %.3g / %.3g / %.3g GB\n",
           zero_gb(7.5e9, 64, 0), zero_gb(7.5e9, 64, 1), zero_gb(7.5e9, 64, 2), zero_gb(7.5e9, 64, 3));
    assert_printed(zero_gb(7.5e9, 64, 0), "120");
    assert_printed(zero_gb(7.5e9, 64, 1), "31.4");
    assert_printed(zero_gb(7.5e9, 64, 2), "16.6");
    assert_printed(zero_gb(7.5e9, 64, 3), "1.88");
}

/* The rest of the paper's Table 1 (per-device model-state memory, GB, for
 * 7.5B, 128B and 1T parameters).  The printed table was not reachable from
 * here, so each row is derived from the paper's formulas by hand and written
 * to three significant figures (integers from 1000 up, halves rounded up);
 * the code computes them through the general stage/precision/optimizer path. */
static void test_zero_table1(void)
{
    static const struct {
        double psi;
        int nd;
        const char *os, *osg, *osgp;
    } rows[] = {
        {7.5e9, 1, "120", "120", "120"},        {7.5e9, 4, "52.5", "41.3", "30.0"},
        {7.5e9, 16, "35.6", "21.6", "7.50"},    {7.5e9, 64, "31.4", "16.6", "1.88"},
        {7.5e9, 256, "30.4", "15.4", "0.469"},  {7.5e9, 1024, "30.1", "15.1", "0.117"},
        {128e9, 1, "2048", "2048", "2048"},     {128e9, 4, "896", "704", "512"},
        {128e9, 16, "608", "368", "128"},       {128e9, 64, "536", "284", "32.0"},
        {128e9, 256, "518", "263", "8.00"},     {128e9, 1024, "514", "258", "2.00"},
        {1e12, 1, "16000", "16000", "16000"},   {1e12, 4, "7000", "5500", "4000"},
        {1e12, 16, "4750", "2875", "1000"},     {1e12, 64, "4188", "2219", "250"},
        {1e12, 256, "4047", "2055", "62.5"},    {1e12, 1024, "4012", "2014", "15.6"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(rows); i++) {
        assert_printed(zero_gb(rows[i].psi, rows[i].nd, 1), rows[i].os);
        assert_printed(zero_gb(rows[i].psi, rows[i].nd, 2), rows[i].osg);
        assert_printed(zero_gb(rows[i].psi, rows[i].nd, 3), rows[i].osgp);
    }
}

static void test_optimizers_and_precision(void)
{
    CU_ASSERT_EQUAL(memory_optimizer_bytes(MEMORY_OPT_ADAM, MEMORY_MIXED_BF16), 12);
    CU_ASSERT_EQUAL(memory_optimizer_bytes(MEMORY_OPT_ADAMW, MEMORY_FP32), 8);
    CU_ASSERT_EQUAL(memory_optimizer_bytes(MEMORY_OPT_LAMB, MEMORY_MIXED_FP16), 12);
    CU_ASSERT_EQUAL(memory_optimizer_bytes(MEMORY_OPT_SGD_MOMENTUM, MEMORY_FP32), 4);
    CU_ASSERT_EQUAL(memory_optimizer_bytes(MEMORY_OPT_SGD_MOMENTUM, MEMORY_MIXED_BF16), 8);
    CU_ASSERT_EQUAL(memory_optimizer_bytes(MEMORY_OPT_SGD, MEMORY_FP32), 0);
    CU_ASSERT_EQUAL(memory_param_bytes(MEMORY_FP32), 4);
    CU_ASSERT_EQUAL(memory_grad_bytes(MEMORY_MIXED_BF16, true), 4);

    /* fp32 Adam, replicated: 4 + 4 + 8 = 16 bytes per parameter, like mixed. */
    MemoryConfig c = memory_config_default();
    c.params = 1e9;
    c.precision = MEMORY_FP32;
    c.reserve_bytes = 0;
    MemoryBreakdown b;
    CU_ASSERT_TRUE_FATAL(memory_estimate(&c, &b, NULL));
    CU_ASSERT_DOUBLE_EQUAL(b.total, 16e9, 1);
    /* SGD with momentum, weight-update sharding over 8: 4 + 4 + 4/8 */
    c.optimizer = MEMORY_OPT_SGD_MOMENTUM;
    c.zero_stage = 1;
    c.dp = 8;
    CU_ASSERT_TRUE_FATAL(memory_estimate(&c, &b, NULL));
    CU_ASSERT_DOUBLE_EQUAL(b.total, 8.5e9, 1);

    MemoryOptimizer o;
    MemoryPrecision p;
    CU_ASSERT_TRUE(memory_optimizer_from_name("lamb", &o) && o == MEMORY_OPT_LAMB);
    CU_ASSERT_FALSE(memory_optimizer_from_name("adagrad", &o));
    CU_ASSERT_TRUE(memory_precision_from_name("bf16", &p) && p == MEMORY_MIXED_BF16);
    CU_ASSERT_FALSE(memory_precision_from_name("int8", &p));
    /* FP8 (Transformer Engine): bf16 weight, bf16 gradients, fp32 master and
     * Adam state: 2 + 2 + 12 B per parameter, and 2 B more (the FP8 copy and
     * transpose) per linear-layer parameter: 18 B when all are linear */
    CU_ASSERT_TRUE(memory_precision_from_name("fp8", &p) && p == MEMORY_MIXED_FP8);
    CU_ASSERT_EQUAL(memory_param_bytes(MEMORY_MIXED_FP8), 2);
    CU_ASSERT_EQUAL(memory_grad_bytes(MEMORY_MIXED_FP8, false), 2);
    CU_ASSERT_EQUAL(memory_optimizer_bytes(MEMORY_OPT_ADAM, MEMORY_MIXED_FP8), 12);
    MemoryConfig f = memory_config_default();
    f.params = 1e9;
    f.precision = MEMORY_MIXED_FP8;
    f.reserve_bytes = 0;
    f.fragmentation = 0;
    f.working_set_bytes = 3e8;
    f.fp8_weight_params = 1e9;
    MemoryBreakdown fb;
    CU_ASSERT_TRUE_FATAL(memory_estimate(&f, &fb, NULL));
    CU_ASSERT_DOUBLE_EQUAL(fb.total, 18e9 + 3e8, 1);
    /* embeddings (a quarter here) have no FP8 copies; ZeRO-3 does not shard them */
    f.fp8_weight_params = 0.75e9;
    f.zero_stage = 3;
    f.dp = 8;
    CU_ASSERT_TRUE_FATAL(memory_estimate(&f, &fb, NULL));
    CU_ASSERT_DOUBLE_EQUAL(fb.params, 2e9 / 8 + 1.5e9, 1);
    CU_ASSERT_DOUBLE_EQUAL(fb.total, 16e9 / 8 + 1.5e9 + 3e8, 1);
    /* FP8 parameters (fp8_param_gather): 1 B each, a transpose cached only
     * (fp8_copy_bytes 1), none on Blackwell (0); out of [0, 2] refused */
    f.zero_stage = 1;
    f.fp8_params = true;
    f.fp8_copy_bytes = 1;
    CU_ASSERT_TRUE_FATAL(memory_estimate(&f, &fb, NULL));
    CU_ASSERT_DOUBLE_EQUAL(fb.params, 1e9 + 0.75e9, 1);
    f.fp8_copy_bytes = 0;
    CU_ASSERT_TRUE_FATAL(memory_estimate(&f, &fb, NULL));
    CU_ASSERT_DOUBLE_EQUAL(fb.params, 1e9, 1);
    f.fp8_copy_bytes = 3.5; /* beyond MXFP8's two orientations and scales */
    CU_ASSERT_FALSE(memory_estimate(&f, &fb, NULL));
    f.fp8_copy_bytes = 2;
    f.fp8_params = false;
    f.zero_stage = 3;
    f.fp8_weight_params = NAN;
    CU_ASSERT_FALSE(memory_estimate(&f, &fb, NULL));
    f.fp8_weight_params = 0;
    CU_ASSERT_DOUBLE_EQUAL(fb.working_set, 3e8, 1e-6);
    f.working_set_bytes = -1;
    CU_ASSERT_FALSE(memory_estimate(&f, &fb, NULL));
}

static void test_buffers_activations_fit(void)
{
    CU_ASSERT_EQUAL(memory_1f1b_inflight(8, 0, 64), 8);
    CU_ASSERT_EQUAL(memory_1f1b_inflight(8, 7, 64), 1);
    CU_ASSERT_EQUAL(memory_1f1b_inflight(8, 0, 3), 3);
    CU_ASSERT_EQUAL(memory_1f1b_inflight(1, 0, 64), 1);

    /* GPT-3 175B as Megatron trains it (t = 8, p = 8, s = 2048, micro-batch 1,
     * sequence parallel + selective recomputation) on A100 80GB: the first
     * stage holds 12 layers' states and 8 micro-batches of activations. */
    GError *err = NULL;
    Workload *w = workload_load("gpt3-175b", &err);
    Accel *a = accel_load("a100-80gb", &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(w);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    WorkloadParallel par = workload_parallel_default();
    par.tp = 8;
    par.sequence_parallel = true;
    par.recompute = WORKLOAD_RECOMPUTE_SELECTIVE;
    int layers = 96 / 8;
    MemoryConfig c = memory_config_default();
    c.params = (workload_params_layer(w, 0) * layers + workload_params_embedding(w)) / 8;
    c.dp = 1;
    c.activation_bytes = layers * workload_layer_activation_bytes(w, 0, 1, &par);
    c.inflight_microbatches = memory_1f1b_inflight(8, 0, 64);
    c.bucket_bytes = 2 * 25.0 * 1024 * 1024;
    MemoryBreakdown b;
    CU_ASSERT_TRUE_FATAL(memory_estimate(&c, &b, &err));
    CU_ASSERT_TRUE(memory_fits(&b, accel_hbm_bytes(a), 1, false));
    CU_ASSERT_DOUBLE_EQUAL(b.activations, 8 * c.activation_bytes, 1);
    CU_ASSERT_DOUBLE_EQUAL(b.total, b.model_states + b.buffers + b.activations + b.reserve, 1);
    /* Without recomputation and sequence parallelism the s x s scores blow it. */
    par.sequence_parallel = false;
    par.recompute = WORKLOAD_RECOMPUTE_NONE;
    c.activation_bytes = layers * workload_layer_activation_bytes(w, 0, 1, &par);
    CU_ASSERT_TRUE_FATAL(memory_estimate(&c, &b, &err));
    CU_ASSERT_FALSE(memory_fits(&b, accel_hbm_bytes(a), 1, false));
    /* Nor does the whole model replicated on one device. */
    c = memory_config_default();
    c.params = workload_params_total(w);
    CU_ASSERT_TRUE_FATAL(memory_estimate(&c, &b, &err));
    CU_ASSERT_FALSE(memory_fits(&b, accel_hbm_bytes(a), 1, false));
    /* ZeRO-3 over 1024 GPUs gathers a layer at a time. */
    c.zero_stage = 3;
    c.dp = 1024;
    c.zero3_gathered_params = 2 * workload_params_layer(w, 0);
    CU_ASSERT_TRUE_FATAL(memory_estimate(&c, &b, &err));
    CU_ASSERT_DOUBLE_EQUAL(b.buffers, 2 * 2 * workload_params_layer(w, 0), 1);
    CU_ASSERT_TRUE(memory_fits(&b, accel_hbm_bytes(a), 1, false));
    workload_free(w);
    accel_free(a);
}

static void test_bad_config(void)
{
    MemoryConfig c = memory_config_default();
    MemoryBreakdown b;
    GError *err = NULL;
    c.zero_stage = 4;
    CU_ASSERT_FALSE(memory_estimate(&c, &b, &err));
    CU_ASSERT_PTR_NOT_NULL_FATAL(err);
    CU_ASSERT_EQUAL(err->code, SIM_ERROR_INPUT);
    CU_ASSERT_STRING_EQUAL(err->message, "memory: zero_stage must be 0, 1, 2 or 3");
    g_clear_error(&err);
    c = memory_config_default();
    c.dp = 0;
    CU_ASSERT_FALSE(memory_estimate(&c, &b, &err));
    g_clear_error(&err);
    c = memory_config_default();
    c.params = NAN;
    CU_ASSERT_FALSE(memory_estimate(&c, &b, &err));
    g_clear_error(&err);
    c = memory_config_default();
    c.activation_bytes = -1;
    CU_ASSERT_FALSE(memory_estimate(&c, &b, &err));
    g_clear_error(&err);
    c = memory_config_default();
    c.inflight_microbatches = 0;
    CU_ASSERT_FALSE(memory_estimate(&c, &b, &err));
    g_clear_error(&err);
    double bad_f[] = {-0.1, 0.95, NAN};
    for (size_t i = 0; i < G_N_ELEMENTS(bad_f); i++) {
        c = memory_config_default();
        c.fragmentation = bad_f[i];
        CU_ASSERT_FALSE(memory_estimate(&c, &b, &err));
        CU_ASSERT_PTR_NOT_NULL(err);
        g_clear_error(&err);
    }
    c = memory_config_default();
    c.stream_pool_bytes = INFINITY;
    CU_ASSERT_FALSE(memory_estimate(&c, &b, &err));
    g_clear_error(&err);
}

/* The allocator's view: fragmentation f is the share of the allocator's
 * reservation no tensor holds, taken on what comes and goes (buffers,
 * stream pools, activations, working set), not on the model states; the
 * reserve outside the allocator is not in its reservation. */
static void test_fragmentation(void)
{
    CU_ASSERT_DOUBLE_EQUAL(memory_config_default().fragmentation, MEMORY_DEFAULT_FRAGMENTATION, 0);
    MemoryConfig c = memory_config_default();
    c.params = 1e9; /* 16 GB of model states */
    c.reserve_bytes = 1e9;
    c.activation_bytes = 6e9;
    c.working_set_bytes = 2e9;
    c.stream_pool_bytes = 1e9;
    c.fragmentation = 0.1;
    MemoryBreakdown b;
    CU_ASSERT_TRUE_FATAL(memory_estimate(&c, &b, NULL));
    CU_ASSERT_DOUBLE_EQUAL(b.buffers, 1e9, 1);
    const double MIB2 = 2.0 * 1024 * 1024; /* the allocator's rounding */
    CU_ASSERT_DOUBLE_EQUAL(b.fragmentation, ceil(1e9 / MIB2) * MIB2, 0);
    CU_ASSERT_DOUBLE_EQUAL(b.reserve, 1e9 + b.fragmentation, 1);
    CU_ASSERT_DOUBLE_EQUAL(b.total, 16e9 + 9e9 + 1e9 + b.fragmentation, 1);
    /* the allocator's peak: f of it is holes, as the definition says */
    double alloc = memory_allocator_reserved(&b);
    CU_ASSERT_DOUBLE_EQUAL(alloc, b.total - 1e9, 1);
    CU_ASSERT_DOUBLE_EQUAL((alloc - 16e9 - 9e9) / (alloc - 16e9), 0.1, MIB2 / 9e9);
    /* applying it again changes nothing; after a caller moves memory it follows */
    MemoryBreakdown again = b;
    memory_apply_fragmentation(&again, 0.1);
    CU_ASSERT_DOUBLE_EQUAL(again.total, b.total, 1e-3);
    again.activations -= 3e9;
    again.total -= 3e9;
    memory_apply_fragmentation(&again, 0.1);
    CU_ASSERT_DOUBLE_EQUAL(again.fragmentation, ceil(6e9 / 9 / MIB2) * MIB2, 0);
    CU_ASSERT_DOUBLE_EQUAL(again.total, 16e9 + 6e9 + 1e9 + again.fragmentation, 1);
    /* model states alone fragment nothing */
    c.activation_bytes = c.working_set_bytes = c.stream_pool_bytes = 0;
    CU_ASSERT_TRUE_FATAL(memory_estimate(&c, &b, NULL));
    CU_ASSERT_EQUAL(b.fragmentation, 0);
    CU_ASSERT_DOUBLE_EQUAL(b.total, 17e9, 1);
}

/* FSDP's mixed precision keeps no 16-bit shard under stage 3: (G + K) Psi
 * / N_d; stages 0-2, fp32 and DeepSpeed's ZeRO-3 as before. */
/* 8 B parameters under stage 3 over 8 ranks, no reserve or fragmentation. */
static MemoryConfig stage3_8b(void)
{
    MemoryConfig c = memory_config_default();
    c.params = 8e9;
    c.dp = 8;
    c.zero_stage = 3;
    c.reserve_bytes = 0;
    c.fragmentation = 0;
    return c;
}

static void test_fsdp_shards(void)
{
    MemoryConfig c = stage3_8b();
    MemoryBreakdown ds, fsdp;
    CU_ASSERT_TRUE_FATAL(memory_estimate(&c, &ds, NULL));
    c.fsdp_fp32_shards = true;
    CU_ASSERT_TRUE_FATAL(memory_estimate(&c, &fsdp, NULL));
    CU_ASSERT_DOUBLE_EQUAL(ds.model_states, 16 * 8e9 / 8, 1);
    CU_ASSERT_DOUBLE_EQUAL(fsdp.params, 0, 0);
    CU_ASSERT_DOUBLE_EQUAL(fsdp.model_states, 14 * 8e9 / 8, 1);
    CU_ASSERT_DOUBLE_EQUAL(fsdp.grads, ds.grads, 0);
    CU_ASSERT_DOUBLE_EQUAL(fsdp.optimizer, ds.optimizer, 0);
    c.zero_stage = 2; /* the unsharded 16-bit weights are kept */
    CU_ASSERT_TRUE_FATAL(memory_estimate(&c, &fsdp, NULL));
    CU_ASSERT_DOUBLE_EQUAL(fsdp.params, 2 * 8e9, 1);
    c.zero_stage = 3;
    c.precision = MEMORY_FP32; /* the fp32 shard is the weight: no master to drop */
    CU_ASSERT_TRUE_FATAL(memory_estimate(&c, &fsdp, NULL));
    CU_ASSERT_DOUBLE_EQUAL(fsdp.params, 4 * 8e9 / 8, 1);
}

/* The optimizer's own precision: no master copy (torch.optim.Adam on bf16
 * parameters: bf16 moments, 2 + 2 + 4 = 8 bytes a parameter; Transformer
 * Engine's FusedAdam by default: fp32 moments, 2 + 2 + 8 = 12), and under
 * FSDP the shard is then the bf16 parameter, its gradient shard bf16 even
 * where reduced in fp32. */
static void test_no_master(void)
{
    CU_ASSERT_EQUAL(memory_optimizer_state_bytes(MEMORY_OPT_ADAM, MEMORY_MIXED_BF16, true, 2), 4);
    CU_ASSERT_EQUAL(memory_optimizer_state_bytes(MEMORY_OPT_ADAM, MEMORY_MIXED_BF16, true, 4), 8);
    CU_ASSERT_EQUAL(memory_optimizer_state_bytes(MEMORY_OPT_ADAM, MEMORY_MIXED_BF16, false, 2), 8);
    CU_ASSERT_EQUAL(memory_optimizer_state_bytes(MEMORY_OPT_SGD_MOMENTUM, MEMORY_MIXED_BF16, true, 2), 2);
    CU_ASSERT_EQUAL(memory_optimizer_state_bytes(MEMORY_OPT_ADAM, MEMORY_MIXED_BF16, false, 0),
                    memory_optimizer_bytes(MEMORY_OPT_ADAM, MEMORY_MIXED_BF16));
    MemoryConfig c = stage3_8b();
    c.fsdp_fp32_shards = true;
    c.fp32_grad_accum = true; /* reduced in fp32 */
    c.no_master = true;
    c.moment_bytes = 2;
    MemoryBreakdown b;
    CU_ASSERT_TRUE_FATAL(memory_estimate(&c, &b, NULL));
    CU_ASSERT_DOUBLE_EQUAL(b.params, 2 * 8e9 / 8, 1);
    CU_ASSERT_DOUBLE_EQUAL(b.grads, 2 * 8e9 / 8, 1);
    CU_ASSERT_DOUBLE_EQUAL(b.model_states, 8 * 8e9 / 8, 1);
    c.moment_bytes = 3;
    CU_ASSERT_FALSE(memory_estimate(&c, &b, NULL));
}

static const TestCase tests[] = {
    {"zero figure 1", test_zero_figure1},
    {"zero table 1", test_zero_table1},
    {"optimizers and precision", test_optimizers_and_precision},
    {"buffers, activations, fit", test_buffers_activations_fit},
    {"bad config", test_bad_config},
    {"fragmentation and the allocator's reservation", test_fragmentation},
    {"FSDP: no 16-bit shard under stage 3", test_fsdp_shards},
    {"no master copy, 16-bit moments", test_no_master},
};
TEST_MAIN("memory", tests)
