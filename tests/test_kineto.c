/* Kineto profiles: a published trace (HTA's, tests/data/traces) read whole,
 * its class totals against sums taken here from the raw JSON; hand-made
 * profiles with known shapes and predictions; malformed files refused. */
#include "kineto.h"
#include "sim_file.h"
#include "test_main.h"

#include <math.h>
#include <string.h>

#define HTA SHARDSIM_SOURCE_DIR "/tests/data/traces/kineto_recsys-train_a100_rank0-of-128_hta-sampled.json"

static Accel *acc(void)
{
    static Accel *a;
    if (!a)
        a = accel_load("a100-80gb", NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    return a;
}

static const cJSON *class_row(const cJSON *r, const char *name)
{
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(r, "classes")) if (!strcmp(cJSON_GetObjectItem(c, "class")->valuestring, name)) return c;
    return NULL;
}

static double field(const cJSON *o, const char *k) { return cJSON_GetObjectItem(o, k)->valuedouble; }

static void test_published(void)
{
    GError *err = NULL;
    KinetoProfile *p = kineto_load(HTA, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    cJSON *r = kineto_compare(p, acc());
    /* the raw sums */
    size_t len;
    char *text = sim_file_read(HTA, SIM_FILE_TRACE_MAX, "t", &len, NULL);
    cJSON *raw = cJSON_Parse(text);
    g_free(text);
    double all = 0, nccl = 0;
    int kernels = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, cJSON_GetObjectItem(raw, "traceEvents"))
    {
        const cJSON *cat = cJSON_GetObjectItem(e, "cat");
        if (!cJSON_IsString(cat) || strcmp(cat->valuestring, "kernel"))
            continue;
        kernels++;
        all += field(e, "dur") * 1e-6;
        if (strstr(cJSON_GetObjectItem(e, "name")->valuestring, "nccl"))
            nccl += field(e, "dur") * 1e-6;
    }
    cJSON_Delete(raw);
    CU_ASSERT_EQUAL(kernels, 1154);
    CU_ASSERT_EQUAL((int)field(r, "kernels"), kernels);
    CU_ASSERT_DOUBLE_EQUAL(field(r, "kernel_time_s"), all, 1e-9);
    double sum = 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(r, "classes"))
    {
        sum += field(c, "measured_s");
        CU_ASSERT_TRUE(field(c, "measured_covered_s") <= field(c, "measured_s") + 1e-12);
    }
    CU_ASSERT_DOUBLE_EQUAL(sum, all, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(field(class_row(r, "communication"), "measured_s"), nccl, 1e-9);
    CU_ASSERT_TRUE(nccl > 0.3); /* most of this rank's kernel time is NCCL */
    /* GEMMs: shapes from the launching aten::addmm / mm, most of their time covered */
    const cJSON *g = class_row(r, "gemm");
    CU_ASSERT_TRUE(field(g, "measured_covered_s") > 0.8 * field(g, "measured_s"));
    double ratio = field(g, "ratio");
    CU_ASSERT_TRUE(ratio > 0.3 && ratio < 3);
    int rows = 0;
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(r, "gemms"))
    {
        rows++;
        CU_ASSERT_TRUE(field(c, "m") >= 1 && field(c, "n") >= 1 && field(c, "k") >= 1);
        CU_ASSERT_TRUE(field(c, "predicted_s") > 0 && field(c, "measured_s") > 0);
    }
    CU_ASSERT_TRUE(rows > 300);
    char *table = kineto_gemm_table(p);
    CU_ASSERT_PTR_NOT_NULL_FATAL(table);
    CU_ASSERT_PTR_NOT_NULL(strstr(table, "\nm,n,k,dtype,seconds\n2048,256,6948,tf32,"));
    int lines = 0;
    for (const char *q = table; *q; q++)
        lines += *q == '\n';
    CU_ASSERT_EQUAL(lines, rows + 2);
    g_free(table);
    cJSON_Delete(r);
    kineto_free(p);
}

/* A kernel launched at time t (us) with correlation c, running dur us. */
static void add_kernel(GString *s, const char *kernel, int c, double t, double dur)
{
    g_string_append_printf(s,
                           "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":2,"
                           "\"ts\":%g,\"dur\":5,\"args\":{\"correlation\":%d}},\n",
                           t + 5, c);
    g_string_append_printf(s,
                           "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"%s\",\"pid\":0,\"tid\":7,\"ts\":%g,\"dur\":%g,"
                           "\"args\":{\"correlation\":%d,\"grid\":[1,1,1],\"block\":[128,1,1]}},\n",
                           kernel, t + 30, dur, c);
}

/* An operator (its Concrete Inputs `conc`, or none), its launch and its
 * kernel: correlation c, at time t (us). */
static void add_op_c(GString *s, const char *op, const char *dims, const char *types, const char *conc,
                     const char *kernel, int c, double t, double dur)
{
    g_string_append_printf(s,
                           "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"%s\",\"pid\":1,\"tid\":2,\"ts\":%g,\"dur\":20,"
                           "\"args\":{\"External id\":%d,\"Input Dims\":%s,\"Input type\":%s%s%s}},\n",
                           op, t, c, dims, types, conc ? ",\"Concrete Inputs\":" : "", conc ? conc : "");
    add_kernel(s, kernel, c, t, dur);
}

static void add_op(GString *s, const char *op, const char *dims, const char *types, const char *kernel, int c,
                   double t, double dur)
{
    add_op_c(s, op, dims, types, NULL, kernel, c, t, dur);
}

/* A BF16 aten::mm of the given Input Dims and its Hopper GEMM kernel, 100 us. */
static void add_bf16_mm(GString *s, const char *dims, int c, double t)
{
    add_op(s, "aten::mm", dims, "[\"c10::BFloat16\",\"c10::BFloat16\"]",
           "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64", c, t, 100);
}

static void test_hand_made(void)
{
    GString *s = g_string_new("{\"traceEvents\": [\n");
    add_bf16_mm(s, "[[1024,4096],[4096,2048]]", 1, 0);
    add_op(s, "aten::addmm", "[[2048],[512,1024],[1024,2048],[],[]]", "[\"float\",\"float\",\"float\",\"Scalar\",\"Scalar\"]",
           "ampere_sgemm_128x64_nn", 2, 100, 50);
    add_op(s, "aten::_scaled_dot_product_flash_attention", "[[4,16,2048,128],[4,16,2048,128],[4,16,2048,128],[]]",
           "[\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"Scalar\"]",
           "void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128>>(Flash_fwd_params)", 3, 200, 400);
    add_op(s, "aten::add", "[[1048576],[1048576],[]]", "[\"float\",\"float\",\"Scalar\"]",
           "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>>", 4, 300, 8);
    add_op(s, "nccl:all_reduce", "[[1048576]]", "[\"float\"]", "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*)", 5, 400, 70);
    add_op(s, "Optimizer.step#AdamW.step", "[]", "[]",
           "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<FusedAdamMathFunctor>", 6, 500, 30);
    /* a kernel with no launch in the profile: measured, not covered */
    g_string_append(s, "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"cutlass::Kernel<gemm>\",\"pid\":0,\"tid\":7,"
                       "\"ts\":900,\"dur\":10,\"args\":{\"correlation\":99}}\n]}");
    GError *err = NULL;
    KinetoProfile *p = kineto_parse("hand.json", s->str, s->len, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    cJSON *r = kineto_compare(p, acc());
    const cJSON *g = class_row(r, "gemm");
    CU_ASSERT_EQUAL((int)field(g, "kernels"), 3);
    CU_ASSERT_DOUBLE_EQUAL(field(g, "measured_s"), 160e-6, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(field(g, "measured_covered_s"), 150e-6, 1e-12);
    double mm = accel_gemm_time(acc(), ACCEL_BF16, 1024, 2048, 4096), addmm = accel_gemm_time(acc(), ACCEL_FP32, 512, 2048, 1024);
    CU_ASSERT_DOUBLE_EQUAL(field(g, "predicted_s"), mm + addmm, 1e-12);
    const cJSON *row = cJSON_GetArrayItem(cJSON_GetObjectItem(r, "gemms"), 0);
    CU_ASSERT_EQUAL((int)field(row, "m"), 1024);
    CU_ASSERT_EQUAL((int)field(row, "n"), 2048);
    CU_ASSERT_EQUAL((int)field(row, "k"), 4096);
    CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(row, "dtype")->valuestring, "bf16");
    const cJSON *a = class_row(r, "attention");
    CU_ASSERT_DOUBLE_EQUAL(field(a, "predicted_s"), accel_attention_time(acc(), ACCEL_BF16, 64, 2048, 128, false, false), 1e-12);
    const cJSON *el = class_row(r, "elementwise");
    CU_ASSERT_DOUBLE_EQUAL(field(el, "predicted_s"), accel_mem_time(acc(), 3 * 4 * 1048576.0), 1e-12);
    CU_ASSERT_EQUAL((int)field(class_row(r, "communication"), "kernels"), 1);
    CU_ASSERT_TRUE(cJSON_IsNull(cJSON_GetObjectItem(class_row(r, "communication"), "ratio")));
    CU_ASSERT_EQUAL((int)field(class_row(r, "optimizer"), "kernels"), 1);
    CU_ASSERT_DOUBLE_EQUAL(field(r, "span_s"), 880e-6, 1e-12);
    char *t = kineto_gemm_table(p);
    if (!strstr(t, "\n1024,2048,4096,bf16,0.0001\n512,2048,1024,fp32,5e-05\n"))
        fprintf(stderr, "table:\n%s", t);
    CU_ASSERT_PTR_NOT_NULL(strstr(t, "\n1024,2048,4096,bf16,0.0001\n512,2048,1024,fp32,5e-05\n"));
    g_free(t);
    cJSON_Delete(r);
    kineto_free(p);
    g_string_free(s, TRUE);
}

/* Sizes no tensor has (a fraction, 1e-300) give an operator no shape: it is
 * not written into --gemm-table (calibrate refused the table it made). */
static void test_fractional_dims(void)
{
    GString *s = g_string_new("{\"traceEvents\": [\n");
    add_bf16_mm(s, "[[1e-300,4096],[4096,2048]]", 1, 0);
    add_bf16_mm(s, "[[1024.5,4096],[4096,2048]]", 2, 200);
    g_string_append(s, "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"end\",\"pid\":1,\"tid\":2,\"ts\":900,\"dur\":1}\n]}");
    KinetoProfile *p = kineto_parse("frac.json", s->str, s->len, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    char *t = kineto_gemm_table(p);
    CU_ASSERT_PTR_NULL(t && strchr(t, '\n') ? strstr(strchr(t, '\n'), "bf16") : NULL);
    g_free(t);
    kineto_free(p);
    g_string_free(s, TRUE);
}

static Accel *h200(void)
{
    static Accel *a;
    if (!a)
        a = accel_load("h200", NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    return a;
}

/* One operator of today's stack with its kernel (and a second kernel of the
 * same operator where `kernel2`), compared on h200; the comparison. */
static cJSON *one_op(const char *op, const char *dims, const char *types, const char *conc, const char *kernel,
                     const char *kernel2)
{
    GString *s = g_string_new("{\"traceEvents\": [\n");
    add_op_c(s, op, dims, types, conc, kernel, 1, 0, 100);
    if (kernel2)
        add_kernel(s, kernel2, 2, 10, 20);
    g_string_truncate(s, s->len - 2);
    g_string_append(s, "\n]}");
    KinetoProfile *p = kineto_parse("today.json", s->str, s->len, NULL);
    g_string_free(s, TRUE);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    cJSON *r = kineto_compare(p, h200());
    kineto_free(p);
    return r;
}

/* The operator's kernels all fall in `cls`, all covered, priced at `want`. */
static void expect_priced(cJSON *r, const char *cls, double want)
{
    const cJSON *c = class_row(r, cls);
    CU_ASSERT_DOUBLE_EQUAL(field(c, "measured_s"), field(r, "kernel_time_s"), 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(field(c, "measured_covered_s"), field(r, "kernel_time_s"), 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(field(r, "priced_share"), 1, 1e-12);
    if (fabs(field(c, "predicted_s") - want) > 1e-9 * want) {
        fprintf(stderr, "%s: predicted %.9g, want %.9g\n", cls, field(c, "predicted_s"), want);
        CU_FAIL("prediction");
    }
    cJSON_Delete(r);
}

#define BF2 "[\"c10::BFloat16\",\"c10::BFloat16\"]"
#define BF3I "[\"c10::BFloat16\",\"c10::BFloat16\",\"int\",\"\",\"\"]"
#define GROUPED "_ZN7cutlass13device_kernelIN2at4cuda6detail25enable_3x_kernel_for_sm9xINS_4gemm6kernel13GemmUniversal"

/* Today's names (torch 2.11, cuBLAS 13, cuDNN 9.19 on Hopper, as in
 * tests/data/kernels/h200): cuBLAS's nvjet GEMMs, grouped and FP8 GEMMs,
 * every SDPA backend with GQA and causal masks from Concrete Inputs. */
static void test_today(void)
{
    const Accel *a = h200();
    expect_priced(one_op("aten::mm", "[[4096,4096],[4096,14336]]", BF2, NULL,
                         "nvjet_sm90_tst_320x128_64x3_1x2_h_bz_coopB_NNT", NULL),
                  "gemm", accel_gemm_time(a, ACCEL_BF16, 4096, 14336, 4096));
    expect_priced(one_op("aten::mm", "[[4096,16],[16,2048]]", BF2, NULL, "nvjet_sm100_tst_64x8_64x16_2x2_h_bz_splitK_TNT",
                         "void cublasLt::splitKreduce_kernel<32, 16, int, float, __nv_bfloat16>"),
                  "gemm", accel_gemm_time(a, ACCEL_BF16, 4096, 2048, 16));
    expect_priced(one_op("aten::_scaled_mm", "[[4096,8192],[8192,4096],[],[],[],[],[],[]]",
                         "[\"c10::Float8_e4m3fn\",\"c10::Float8_e4m3fn\",\"float\",\"float\",\"\",\"\",\"Scalar\",\"Scalar\"]",
                         NULL, "sm90_xmma_gemm_e4m3bf16_e4m3f32_f32_tn_n_tilesize128x128x128_warpgroupsize1x1x1", NULL),
                  "gemm", accel_gemm_time(a, ACCEL_FP8, 4096, 4096, 8192));
    /* grouped: 2-D rows over 3-D experts, the weight gradient (K split), N split; the setup kernel is the GEMM's */
    expect_priced(one_op("aten::_grouped_mm", "[[32768,2048],[16,2048,1536],[16],[],[]]", BF3I, NULL, GROUPED,
                         "void at::cuda::detail::prepare_grouped_gemm_data<cutlass::bfloat16_t>"),
                  "gemm", accel_bgemm_time(a, ACCEL_BF16, 16, 2048, 1536, 2048));
    expect_priced(one_op("aten::_grouped_mm", "[[768,32768],[32768,2048],[16],[],[]]", BF3I, NULL, GROUPED, NULL), "gemm",
                  accel_bgemm_time(a, ACCEL_BF16, 16, 768, 2048, 2048));
    expect_priced(one_op("aten::_grouped_mm", "[[4,128,64],[64,512],[4],[],[]]", BF3I, NULL, GROUPED, NULL), "gemm",
                  accel_bgemm_time(a, ACCEL_BF16, 4, 128, 128, 64));
    /* cuDNN backward, GQA (8 K/V heads for 32 query heads), causal at is_causal (argument 14); its
     * dot_do_o preprocessing is the operator's */
    expect_priced(one_op("aten::_cudnn_attention_backward",
                         "[[1,32,4096,128],[1,32,4096,128],[1,8,4096,128],[1,8,4096,128],[1,32,4096,128],[1,32,4096,1],"
                         "[],[],[],[],[],[],[],[],[],[]]",
                         "[\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\","
                         "\"float\",\"long int\",\"long int\",\"\",\"\",\"\",\"Scalar\",\"Scalar\",\"Scalar\",\"Scalar\",\"\"]",
                         "[\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"4096\",\"4096\",\"0.\",\"True\",\"\"]",
                         "cudnn_generated_fort_native_sdpa_sm90_flash_bprop_wgmma_f16_knob_26_64x64x128_1x4x1_cga1x1x1_kernel0_0",
                         "void cudnn::fusion::compute_dot_do_o_specialized<true, 128>(void const*)"),
                  "attention", accel_attention_time(a, ACCEL_BF16, 32, 4096, 128, true, true));
    /* flash's own operator: [B, S, H, D], FlashAttention-2's rate; causal */
    const char *fdims = "[[2,4096,64,64],[2,4096,8,64],[2,4096,8,64],[],[],[],[],[],[],[],[],[],[],[],[]]";
    const char *ftypes = "[\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\"]";
    double fa2 = accel_attention_v2_slowdown(a, false);
    CU_ASSERT_TRUE(fa2 > 1.5);
    expect_priced(one_op("aten::_flash_attention_forward", fdims, ftypes,
                         "[\"\",\"\",\"\",\"\",\"\",\"4096\",\"4096\",\"0.\",\"True\",\"False\",\"0.125\",\"\",\"\",\"\",\"\"]",
                         "void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<64, 128, 128, 4>>", NULL),
                  "attention", fa2 * accel_attention_time(a, ACCEL_BF16, 128, 4096, 64, true, false));
    /* its sliding window (window_size_left, argument 11): a causal window of 1024 keys */
    expect_priced(one_op("aten::_flash_attention_forward", fdims, ftypes,
                         "[\"\",\"\",\"\",\"\",\"\",\"4096\",\"4096\",\"0.\",\"True\",\"False\",\"0.125\",\"1024\",\"0\",\"\",\"\"]",
                         "void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<64, 128, 128, 4>>", NULL),
                  "attention",
                  fa2 * accel_attention_time_keys(a, ACCEL_BF16, 128, 4096, 1024 - 1024.0 * 1024 / 8192, 64, false));
    /* not causal without Concrete Inputs; the efficient backend's causal is custom_mask_type (argument 9) */
    expect_priced(one_op("aten::_scaled_dot_product_flash_attention", "[[2,64,4096,64],[2,8,4096,64],[2,8,4096,64]]",
                         ftypes, NULL, "void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<64>>", NULL),
                  "attention", fa2 * accel_attention_time(a, ACCEL_BF16, 128, 4096, 64, false, false));
    expect_priced(one_op("aten::_efficient_attention_forward", fdims, ftypes,
                         "[\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"0.\",\"1\",\"True\"]",
                         "fmha_cutlassF_bf16_aligned_64x64_rf_sm80(PyTorchMemEffAttention::AttentionKernel)", NULL),
                  "attention", fa2 * accel_attention_time(a, ACCEL_BF16, 128, 4096, 64, true, false));
    /* a memory-bound operator's kernels are priced together: an RMSNorm backward's two */
    expect_priced(one_op("aten::_fused_rms_norm_backward", "[[1,4096,4096],[1,4096,4096],[],[1,4096,1],[4096],[]]",
                         "[\"c10::BFloat16\",\"c10::BFloat16\",\"ScalarList\",\"float\",\"c10::BFloat16\",\"ScalarList\"]", NULL,
                         "void at::native::layer_norm_grad_input_kernel_vectorized<c10::BFloat16, float, true>",
                         "void at::native::GammaBetaBackwardCUDAKernelTemplate<c10::BFloat16, float, 32u>"),
                  "elementwise", accel_mem_time(a, 4096 * 4096 * 2.0 * 3 + 4096 * 4 + 4096 * 2));
    expect_priced(one_op("aten::index_add", "[[4096,2048],[],[32768],[32768,2048],[]]",
                         "[\"c10::BFloat16\",\"Scalar\",\"long int\",\"c10::BFloat16\",\"Scalar\"]", NULL,
                         "void at::native::indexFuncLargeIndex<c10::BFloat16, long, unsigned int>", NULL),
                  "indexing", accel_mem_time(a, 4096 * 2048 * 2.0 + 32768 * 8 + 2 * 32768 * 2048 * 2.0));
}

static void expect_bad(const char *text, const char *part)
{
    GError *err = NULL;
    KinetoProfile *p = kineto_parse("bad.json", text, strlen(text), &err);
    CU_ASSERT_PTR_NULL(p);
    kineto_free(p);
    CU_ASSERT_PTR_NOT_NULL_FATAL(err);
    CU_ASSERT_EQUAL(err->code, SIM_ERROR_INPUT);
    if (!strstr(err->message, part)) {
        fprintf(stderr, "\"%s\" lacks \"%s\"\n", err->message, part);
        CU_FAIL("message");
    }
    g_error_free(err);
}

static void test_malformed(void)
{
    expect_bad("{\"traceEvents\": [", "bad.json:1: invalid JSON near column");
    expect_bad("{\"traceEvents\": [\n{\"cat\": \"kernel\",\n \"name\": x}]}", "bad.json:3: invalid JSON near column 10");
    expect_bad("{\"events\": []}", "no \"traceEvents\" array");
    expect_bad("{\"traceEvents\": [{\"cat\": \"cpu_op\", \"ts\": 1, \"dur\": 2}]}", "no GPU kernels");
    expect_bad("{\"traceEvents\": [{},\n {\"cat\": \"kernel\", \"name\": \"k\", \"ts\": 1}]}",
               "bad.json:2: traceEvents[1]: a kernel needs a name, a ts within +-1e16 us and a dur of 0 or 0.001 to 1e10 us");
    /* a ts so large that its kernel's end rounds onto its start, a dur of centuries */
    expect_bad("{\"traceEvents\": [{\"cat\": \"kernel\", \"name\": \"k\", \"ts\": 1e308, \"dur\": 3}]}", "traceEvents[0]: a kernel needs");
    expect_bad("{\"traceEvents\": [{\"cat\": \"kernel\", \"name\": \"k\", \"ts\": 0, \"dur\": 1e12}]}", "traceEvents[0]: a kernel needs");
    expect_bad("{\"traceEvents\": [{\"cat\": \"kernel\", \"name\": \"k\", \"ts\": 0, \"dur\": 1e-300}]}", "traceEvents[0]: a kernel needs");
    expect_bad("{\"traceEvents\": [{\"cat\": \"kernel\", \"name\": \"k\", \"ts\": 1, \"dur\": -3}]}", "traceEvents[0]");
    /* ids past int's range are no ids (fuzz_kineto: UBSan on the conversion) */
    const char *big = "{\"traceEvents\": [{\"cat\": \"cuda_runtime\", \"tid\": 1e300, \"args\": {\"correlation\": 6e39}},"
                      "{\"cat\": \"kernel\", \"name\": \"k\", \"ts\": 0, \"dur\": 1, \"args\": {\"correlation\": 6e39}}]}";
    KinetoProfile *p = kineto_parse("big.json", big, strlen(big), NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    cJSON *r = kineto_compare(p, acc());
    CU_ASSERT_EQUAL((int)field(class_row(r, "other"), "kernels"), 1);
    CU_ASSERT_DOUBLE_EQUAL(field(class_row(r, "other"), "measured_covered_s"), 0, 0);
    cJSON_Delete(r);
    kineto_free(p);
    /* shapes that do not fit their operator's signature: measured in its class, not priced */
    const char *odd[][3] = {
        {"aten::_grouped_mm", "[[32768,2048],[16,1024,1536],[16]]", "gemm"},   /* K disagrees */
        {"aten::_grouped_mm", "[[768,32768],[32768,2048],[]]", "gemm"},         /* no offsets */
        {"aten::_scaled_mm", "[[4096,\"x\"],[8192,4096]]", "gemm"},             /* not a size */
        {"aten::_cudnn_attention_forward", "[[1,32,4096],[1,8,4096,128]]", "attention"}, /* rank 3 */
        {"aten::_flash_attention_forward", "[[1,4096,64,0],[1,4096,8,64]]", "attention"},
    };
    for (size_t i = 0; i < sizeof odd / sizeof *odd; i++) {
        cJSON *o = one_op(odd[i][0], odd[i][1], "[\"c10::BFloat16\",\"c10::BFloat16\",\"int\"]",
                          "[\"\",\"\",7,{},\"True\",\"1e999\",\"\",\"\",\"True\",\"\",\"\",\"-5\"]", "nvjet_sm90_tst_x", NULL);
        CU_ASSERT_EQUAL((int)field(class_row(o, odd[i][2]), "kernels"), 1);
        CU_ASSERT_DOUBLE_EQUAL(field(o, "priced_share"), 0, 0);
        cJSON_Delete(o);
    }
    CU_ASSERT_TRUE(kineto_looks_like(" {\"traceEvents\": []}"));
    CU_ASSERT_FALSE(kineto_looks_like("m,n,k,dtype,seconds\n"));
}

static const TestCase tests[] = {
    {"published", test_published},
    {"hand_made", test_hand_made},
    {"fractional dims", test_fractional_dims},
    {"today", test_today},
    {"malformed", test_malformed},
};

TEST_MAIN("kineto", tests)
