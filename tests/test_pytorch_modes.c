/* The ways frameworks run a block beyond Megatron-Core's.  PyTorch's, as
 * torchtitan does.  "recompute": "op"
 * (models/workload_sac.c), per-op selective checkpointing: what a block
 * keeps (its input, the 1st, 3rd, 5th and 7th mm's outputs, the attention
 * kernel's output and log-sum-exp), the mm's it runs again (wk, wo, w3; a
 * GPT block's fc2).  "elementwise": "eager" (models/workload_eager.c): the
 * element-wise bytes one kernel per op adds.  JAX's named checkpoints
 * ("recompute_keep" under full recomputation, MaxText's remat policies).
 * FSDP2's copies ("zero_impl": "fsdp2").  PyTorch's context_parallel
 * ("cp_impl").  One XLA program ("framework":
 * "jax"): its memory and its FP8 casts.  And what the model refuses. */
#include "test_steps.h"

#include "workload.h"

/* MODEL on 2 H100 nodes (dp fills them) with the parallelism PAR and TAIL
 * appended to the scenario. */
static cJSON *model_run(const char *model, const char *par, const char *tail, GError **err)
{
    char *h = g_strdup_printf("{\"name\": \"op\", \"accelerator\": \"h100-sxm\", \"topology\": \"dgx-h100-cluster\", "
                              "\"nodes\": 2, \"model\": \"%s\", \"global_batch\": 32, \"micro_batch\": 2, "
                              "\"parallelism\": {",
                              model);
    char *t = g_strdup_printf("}%s}", tail);
    cJSON *r = steps_run_with("op.json", h, par, t, err);
    g_free(h);
    g_free(t);
    return r;
}

/* Llama 2 70B (GQA: 8 KV heads) under FSDP with FlashAttention-2, as
 * torchtitan runs it, PAR appended to its parallelism. */
static cJSON *llama_run(const char *par, const char *tail, GError **err)
{
    char *t = g_strdup_printf(", \"attention\": \"fused-v2\"%s", tail);
    char *p = g_strdup_printf("\"zero_stage\": 3%s", par);
    cJSON *r = model_run("llama2-70b", p, t, err);
    g_free(p);
    g_free(t);
    return r;
}


/* Four llama_run's, the i-th with PAR[i] and TAIL[i] (NULL: none), into R. */
static void llama_runs(const char *const *par, const char *const *tail, cJSON *r[4])
{
    GError *err = NULL;
    for (int i = 0; i < 4; i++) {
        r[i] = llama_run(par ? par[i] : "", tail ? tail[i] : "", &err);
        CU_ASSERT_PTR_NOT_NULL_FATAL(r[i]);
    }
}

/* The rule by hand on Llama 2 70B (h 8192, q 8192, kv 1024, ffn 28672):
 * mm's wq wk wv wo w1 w3 w2, the even ones run again.  Kept per layer and
 * token: the input h, wq's q, wv's kv, w1's ffn, w2's h and the kernel's
 * O (q), in bf16, and 4 bytes of log-sum-exp per head. */
static void test_kept_and_recomputed(void)
{
    GError *err = NULL;
    cJSON *none = llama_run("", "", &err), *op = llama_run(", \"recompute\": \"op\"", "", &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(none);
    CU_ASSERT_PTR_NOT_NULL_FATAL(op);
    double L = 80, b = 2, s = 4096, T = b * s, h = 8192, kv = 1024, f = 28672, heads = 64;
    double kept = L * (T * 2 * (h + h + kv + f + h + h) + 4 * b * heads * s);
    CU_ASSERT_DOUBLE_EQUAL(steps_activations(op), kept, 1e-9 * kept);
    CU_ASSERT_TRUE(steps_activations(op) < steps_activations(none));
    /* wk, wo and w3 again for each of the 32 samples: 2 s h (kv + h + f) FLOPs each per layer */
    double again = 32 * L * 2 * s * h * (kv + h + f);
    double extra = steps_num(op, "hardware_flops_per_step") - steps_num(none, "hardware_flops_per_step");
    CU_ASSERT_DOUBLE_EQUAL(extra, again, 1e-9 * again);
    CU_ASSERT_DOUBLE_EQUAL(steps_num(op, "model_flops_per_step"), steps_num(none, "model_flops_per_step"), 1);
    CU_ASSERT_TRUE(steps_num(op, "step_time_s") > steps_num(none, "step_time_s"));
    const cJSON *rc = cJSON_GetObjectItem(cJSON_GetObjectItem(op, "config"), "recompute");
    CU_ASSERT_TRUE(cJSON_IsString(rc) && !strcmp(rc->valuestring, "op"));
    printf("\nllama2-70b, h100 x 16, FSDP, mb 2: none %.3f s / %.1f GiB, op %.3f s / %.1f GiB of activations\n",
           steps_num(none, "step_time_s"), steps_activations(none) / (1 << 30), steps_num(op, "step_time_s"),
           steps_activations(op) / (1 << 30));
    cJSON_Delete(none);
    cJSON_Delete(op);
}

/* The share of each fused GEMM run again: a gated block's wk of qkv, wo,
 * w3 (half of mlp_up); a GPT block (q k v o fc1 fc2) runs fc2 again and
 * keeps fc1. */
static void test_shares(void)
{
    GError *err = NULL;
    Workload *w = workload_load("llama2-70b", &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(w);
    WorkloadTransformer t = *workload_transformer(w);
    CU_ASSERT_DOUBLE_EQUAL(workload_op_sac_share(&t, "qkv"), 1024.0 / (8192 + 2 * 1024), 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(workload_op_sac_share(&t, "attn_out"), 1, 0);
    CU_ASSERT_DOUBLE_EQUAL(workload_op_sac_share(&t, "mlp_up"), 0.5, 0);
    CU_ASSERT_DOUBLE_EQUAL(workload_op_sac_share(&t, "mlp_down"), 0, 0);
    CU_ASSERT_DOUBLE_EQUAL(workload_op_sac_share(&t, "attn_score"), 0, 0);
    t.gated_mlp = false;
    CU_ASSERT_DOUBLE_EQUAL(workload_op_sac_share(&t, "mlp_up"), 0, 0);
    CU_ASSERT_DOUBLE_EQUAL(workload_op_sac_share(&t, "mlp_down"), 1, 0);
    /* kept per token: h + q + kv + fc1's ffn (the 5th mm) + O */
    double kept = workload_op_sac_kept(&t, 1, 2) - 4.0 * t.heads * t.seq_len;
    CU_ASSERT_DOUBLE_EQUAL(kept, t.seq_len * 2.0 * (8192 + 8192 + 1024 + 28672 + 8192), 1);
    workload_free(w);
}

static void refused_on(const char *model, const char *par, const char *tail, const char *what)
{
    GError *err = NULL;
    steps_expect_refused(model_run(model, par, tail, &err), &err, what);
}

static void refused(const char *par, const char *tail, const char *what)
{
    char *p = g_strdup_printf("\"zero_stage\": 3%s", par);
    refused_on("llama2-70b", p, tail, what);
    g_free(p);
}

static void test_refused(void)
{
    refused(", \"recompute\": \"op\", \"tp\": 2", "", "\"recompute\": \"op\" is modelled with \"tp\": 1");
    refused(", \"recompute\": \"op\", \"cp\": 2", "", "\"cp\": 1");
    refused(", \"recompute\": \"op\"", ", \"attention\": \"unfused\"", "not with \"attention\": \"unfused\"");
    refused(", \"recompute\": \"op\", \"recompute_modules\": [\"core_attn\"]", "", "not with \"recompute\": \"op\"");
    refused(", \"recompute\": \"op\", \"recompute_layers\": 2", "", "needs a transformer and \"recompute\": \"full\"");
    refused(", \"recompute\": \"ops\"", "", "\"recompute\" = \"ops\" is not one of");
    refused_on("mixtral-8x7b", "\"ep\": 8, \"recompute\": \"op\"", "", "dense blocks");
    refused_on("gpt3-1.3b", "\"recompute\": \"op\"", "", "addmm");
    refused_on("resnet50", "\"recompute\": \"op\"", "", "(\"recompute\" is for transformers)");
    refused(", \"recompute_keep\": [\"linear_qkv\"]", "", "it needs \"recompute\": \"full\"");
    refused(", \"recompute\": \"full\", \"recompute_keep\": [\"qkv\"]", "", "\"recompute_keep\": qkv is not one of");
    refused(", \"recompute\": \"full\", \"recompute_keep\": []", "", "must be a non-empty list");
    refused(", \"recompute\": \"full\", \"tp\": 2, \"recompute_keep\": [\"linear_fc2\"]", "",
            "\"recompute_keep\" is modelled with \"tp\": 1");
    refused_on("mixtral-8x7b", "\"ep\": 8, \"recompute\": \"full\", \"recompute_keep\": [\"linear_proj\"]", "",
               "\"recompute_keep\" is modelled for dense blocks");
    refused("", ", \"elementwise\": \"jit\"", "\"elementwise\" = \"jit\" is not one of \"fused\", \"eager\"");
    refused("", ", \"elementwise\": 1", "\"elementwise\"");
    refused_on("mixtral-8x7b", "\"ep\": 8", ", \"elementwise\": \"eager\"",
               "\"elementwise\": \"eager\" is modelled for dense blocks");
    refused_on("resnet50", "\"dp\": 16", ", \"elementwise\": \"eager\"", "of a transformer block");
    refused("", ", \"framework\": \"tensorflow\"", "\"framework\" = \"tensorflow\" is not one of \"pytorch\", \"jax\"");
    refused("", ", \"framework\": \"jax\", \"elementwise\": \"eager\"", "\"framework\": \"jax\" runs one compiled program");
    refused("", ", \"memory_fraction\": 0", "\"memory_fraction\"");
    refused("", ", \"fp8_casts\": \"fused\"", "\"fp8_casts\" is for FP8 training");
    refused(", \"recompute\": \"op\"", ", \"framework\": \"jax\"", "\"recompute\": \"op\" is PyTorch's");
    refused(", \"zero_impl\": \"fsdp2\"", ", \"framework\": \"jax\"", "\"zero_impl\": \"fsdp2\" is PyTorch's");
    refused(", \"tp\": 2, \"tp_impl\": \"dtensor\"", ", \"framework\": \"jax\"", "\"tp_impl\": \"dtensor\" is");
    refused(", \"tp\": 2, \"sequence_parallel\": true, \"tp_comm_overlap\": true", ", \"framework\": \"jax\"",
            "\"tp_comm_overlap\": true is");
    refused("", ", \"precision\": \"fp8\", \"fp8_casts\": \"xla\"", "\"fp8_casts\" = \"xla\" is not one of \"kernels\", \"fused\"");
    refused("", ", \"memory_fraction\": 1.5", "\"memory_fraction\"");
}

/* The eager bytes by hand on Llama 2 70B (RMSNorm, rotary, SwiGLU; e = 2):
 * per token, forward 2 (28 + 2e) h + (16 + 2e)(q + kv) + 2e f, backward
 * 2 (44 + 2e) h + (16 + 2e)(q + kv) + 3e f, where fused kernels leave only
 * the rotary pass, 2e (q + kv) each way; under tp 2 with sequence
 * parallelism all of it halves. */
static void test_eager_bytes(void)
{
    GError *err = NULL;
    Workload *w = workload_load("llama2-70b", &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(w);
    WorkloadParallel par = workload_parallel_default();
    double T = 2.0 * 4096, h = 8192, qkv = 8192 + 1024, f = 28672, fwd, bwd;
    workload_layer_pass_bytes(w, 0, 2, &par, &fwd, &bwd); /* fused: the rotary pass alone */
    CU_ASSERT_DOUBLE_EQUAL(fwd, T * 4 * qkv, 1);
    CU_ASSERT_DOUBLE_EQUAL(bwd, T * 4 * qkv, 1);
    par.eager_elementwise = true;
    workload_layer_pass_bytes(w, 0, 2, &par, &fwd, &bwd);
    CU_ASSERT_DOUBLE_EQUAL(fwd, T * (64 * h + 20 * qkv + 4 * f), 1);
    CU_ASSERT_DOUBLE_EQUAL(bwd, T * (96 * h + 20 * qkv + 6 * f), 1);
    par.tp = 2;
    par.sequence_parallel = true;
    double f2, b2;
    workload_layer_pass_bytes(w, 0, 2, &par, &f2, &b2);
    CU_ASSERT_DOUBLE_EQUAL(f2, fwd / 2, 1);
    CU_ASSERT_DOUBLE_EQUAL(b2, bwd / 2, 1);
    workload_free(w);
}

/* Eager's passes cost time in the forward and backward, and again in the
 * recomputation "op" runs; the report says so. */
static void test_eager_step(void)
{
    cJSON *r[4];
    const char *par[] = {"", "", ", \"recompute\": \"op\"", ", \"recompute\": \"op\""};
    const char *eager = ", \"elementwise\": \"eager\"", *tail[] = {"", eager, "", eager};
    llama_runs(par, tail, r);
    double none = steps_num(r[1], "step_time_s") - steps_num(r[0], "step_time_s");
    double op = steps_num(r[3], "step_time_s") - steps_num(r[2], "step_time_s");
    CU_ASSERT_TRUE(none > 0 && op > none);
    CU_ASSERT_DOUBLE_EQUAL(steps_activations(r[1]), steps_activations(r[0]), 0);
    const cJSON *ew = cJSON_GetObjectItem(cJSON_GetObjectItem(r[1], "config"), "elementwise");
    CU_ASSERT_TRUE(cJSON_IsString(ew) && !strcmp(ew->valuestring, "eager"));
    CU_ASSERT_PTR_NULL(cJSON_GetObjectItem(cJSON_GetObjectItem(r[0], "config"), "elementwise"));
    printf("\nllama2-70b, h100 x 16, FSDP, mb 2: eager adds %.3f s (%.3f s with recompute op)\n", none, op);
    for (int i = 0; i < 4; i++)
        cJSON_Delete(r[i]);
}

/* Full recomputation keeping NAME against keeping nothing: KEPT more bytes
 * of activations, SAVED fewer hardware FLOPs, a faster step, the name in
 * the report. */
static void keep_against_full(const char *name, double kept, double saved)
{
    GError *err = NULL;
    char *par = g_strdup_printf(", \"recompute\": \"full\", \"recompute_keep\": [\"%s\"]", name);
    cJSON *full = llama_run(", \"recompute\": \"full\"", "", &err), *keep = llama_run(par, "", &err);
    g_free(par);
    CU_ASSERT_PTR_NOT_NULL_FATAL(full);
    CU_ASSERT_PTR_NOT_NULL_FATAL(keep);
    CU_ASSERT_DOUBLE_EQUAL(steps_activations(keep) - steps_activations(full), kept, 1);
    CU_ASSERT_DOUBLE_EQUAL(steps_num(full, "hardware_flops_per_step") - steps_num(keep, "hardware_flops_per_step"), saved,
                           1e-9 * saved);
    CU_ASSERT_TRUE(steps_num(keep, "step_time_s") < steps_num(full, "step_time_s"));
    const cJSON *k = cJSON_GetObjectItem(cJSON_GetObjectItem(keep, "config"), "recompute_keep");
    CU_ASSERT_TRUE(cJSON_IsArray(k) && !strcmp(cJSON_GetArrayItem(k, 0)->valuestring, name));
    cJSON_Delete(full);
    cJSON_Delete(keep);
}

/* "recompute_keep" under full recomputation (JAX's save_only_these_names,
 * MaxText's remat policies): the kept linears' outputs are held with the
 * layer's input, their GEMMs do not run again.  Llama 2 70B, 2 x 4096
 * tokens a device: keeping linear_qkv adds T (q + 2 kv) bf16 a layer and
 * takes 2 s h (q + 2 kv) FLOPs a sample and layer off the recomputation. */
static void test_keep(void)
{
    double L = 80, T = 2.0 * 4096, s = 4096, h = 8192, qkv = 8192 + 2 * 1024;
    keep_against_full("linear_qkv", L * T * qkv * 2, 32 * L * 2 * s * h * qkv);
}

/* "core_attn" kept (MaxText's "context"): the fused kernel's output O and
 * its log-sum-exp held, T (q x 2 + 4 a) bytes a layer, and its forward,
 * 4 s^2 h FLOPs a sample and layer (the model's count, causal or not), not
 * run again. */
static void test_keep_core_attn(void)
{
    double L = 80, T = 2.0 * 4096, s = 4096, h = 8192, a = 64;
    keep_against_full("core_attn", L * T * (h * 2 + 4 * a), 32 * L * 4 * s * s * h);
    refused(", \"recompute\": \"full\", \"recompute_keep\": [\"core_attn\"]", ", \"attention\": \"unfused\"",
            "not with \"attention\": \"unfused\"");
}

/* "zero_impl": "fsdp2": FSDP2's copies on the compute stream, per layer of
 * P parameters in bf16 (16 GPUs, one micro-batch each): the all-gather's
 * copy-out, 2 P x 2 bytes, before the forward and again before the
 * backward, and the reduce-scatter's copy-in of the bf16 gradients, P x
 * (2 + 2) bytes; the same with "fsdp" adds nothing, and memory is
 * "fsdp"'s. */
static void test_fsdp2_copies(void)
{
    GError *err = NULL;
    cJSON *one = llama_run(", \"zero_impl\": \"fsdp\"", "", &err),
          *two = llama_run(", \"zero_impl\": \"fsdp2\"", "", &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(one);
    CU_ASSERT_PTR_NOT_NULL_FATAL(two);
    Workload *w = workload_load("llama2-70b", &err);
    Accel *a = steps_accel("h100-sxm");
    CU_ASSERT_PTR_NOT_NULL_FATAL(w);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    double P = workload_params_layer(w, 0), L = 80;
    double want = L * (2 * accel_mem_time(a, 2 * P * 2) + accel_mem_time(a, P * (2 + 2)));
    double got = cJSON_GetObjectItem(cJSON_GetObjectItem(two, "breakdown"), "compute")->valuedouble -
                 cJSON_GetObjectItem(cJSON_GetObjectItem(one, "breakdown"), "compute")->valuedouble;
    printf("\nfsdp2 copies: %.4f s per step (expected %.4f)\n", got, want);
    CU_ASSERT_DOUBLE_EQUAL(got, want, 1e-6 * want);
    CU_ASSERT_DOUBLE_EQUAL(steps_num(two, "step_time_s") - steps_num(one, "step_time_s"), want, 0.05 * want);
    CU_ASSERT_DOUBLE_EQUAL(steps_activations(two), steps_activations(one), 0);
    cJSON *mem1 = cJSON_GetObjectItem(one, "memory_per_device_bytes"), *mem2 = cJSON_GetObjectItem(two, "memory_per_device_bytes");
    CU_ASSERT_DOUBLE_EQUAL(cJSON_GetObjectItem(mem2, "total")->valuedouble, cJSON_GetObjectItem(mem1, "total")->valuedouble, 0);
    accel_free(a);
    workload_free(w);
    cJSON_Delete(one);
    cJSON_Delete(two);
}

static double mem_term(const cJSON *r, const char *k)
{
    return cJSON_GetObjectItem(cJSON_GetObjectItem(r, "memory_per_device_bytes"), k)->valuedouble;
}

/* "framework": "jax" on Llama 2 70B under FSDP (16 GPUs): in BF16 the same
 * step; no allocator holes; of the parameters outside the layers only the
 * output layer held gathered, so the buffers lose the input embedding and
 * the final norm, 2 (vocab + 1) h bytes, and the reduce-scatter's full
 * gradients are the largest weight's (fc1, h x 2 ffn) in place of two
 * layers' (bf16); the loss "compiled" unless given.  In FP8 the
 * activations' casts cost nothing (fused into their producers): a faster
 * step, as "fp8_casts": "fused" makes it under PyTorch, and "kernels"
 * under JAX gives PyTorch's.  "memory_fraction" caps what the allocator
 * holds: a hair under it, a run that fits (Llama 2 13B) no longer does;
 * and a share JAX preallocates must leave room for what is outside it. */
static void test_jax(void)
{
    GError *err = NULL;
    const char *tails[] = {", \"cross_entropy\": \"compiled\"", ", \"framework\": \"jax\"",
                           ", \"cross_entropy\": \"compiled\", \"precision\": \"fp8\"",
                           ", \"framework\": \"jax\", \"precision\": \"fp8\""};
    cJSON *r[4];
    llama_runs(NULL, tails, r);
    double h = 8192, vocab = 32000;
    CU_ASSERT_DOUBLE_EQUAL(steps_num(r[1], "step_time_s"), steps_num(r[0], "step_time_s"), 0);
    CU_ASSERT_DOUBLE_EQUAL(mem_term(r[1], "working_set"), mem_term(r[0], "working_set"), 0);
    Workload *w = workload_load("llama2-70b", &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(w);
    double layer = workload_params_layer(w, 0), fc1 = h * 2 * 28672;
    workload_free(w);
    CU_ASSERT_DOUBLE_EQUAL(mem_term(r[0], "buffers") - mem_term(r[1], "buffers"),
                           2 * (vocab + 1) * h + 2 * (2 * layer - fc1), 1);
    CU_ASSERT_TRUE(mem_term(r[0], "fragmentation") > 0);
    CU_ASSERT_DOUBLE_EQUAL(mem_term(r[1], "fragmentation"), 0, 0);
    CU_ASSERT_TRUE(steps_num(r[3], "step_time_s") < steps_num(r[2], "step_time_s"));
    /* the casts follow "fp8_casts", whatever the framework */
    cJSON *kern = llama_run("", ", \"framework\": \"jax\", \"precision\": \"fp8\", \"fp8_casts\": \"kernels\"", &err),
          *fused = llama_run("", ", \"cross_entropy\": \"compiled\", \"precision\": \"fp8\", \"fp8_casts\": \"fused\"", &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(kern);
    CU_ASSERT_PTR_NOT_NULL_FATAL(fused);
    CU_ASSERT_DOUBLE_EQUAL(steps_num(kern, "step_time_s"), steps_num(r[2], "step_time_s"), 0);
    CU_ASSERT_DOUBLE_EQUAL(steps_num(fused, "step_time_s"), steps_num(r[3], "step_time_s"), 0);
    cJSON_Delete(kern);
    cJSON_Delete(fused);
    cJSON *full = model_run("llama2-13b", "\"zero_stage\": 3", ", \"framework\": \"jax\"", &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(full);
    double hbm = mem_term(full, "hbm"), alloc = mem_term(full, "allocator_reserved");
    CU_ASSERT_TRUE(alloc < hbm);
    cJSON_Delete(full);
    printf("\nllama2-70b, h100 x 16, FSDP: jax %.2f GiB (pytorch %.2f), fp8 step %.3f s (pytorch %.3f)\n",
           mem_term(r[1], "total") / 1073741824.0, mem_term(r[0], "total") / 1073741824.0,
           steps_num(r[3], "step_time_s"), steps_num(r[2], "step_time_s"));
    for (int k = 0; k < 2; k++) {
        char *t = g_strdup_printf(", \"framework\": \"jax\", \"memory_fraction\": %.6f", alloc / hbm + (k ? 1e-5 : -1e-5));
        cJSON *f = model_run("llama2-13b", "\"zero_stage\": 3", t, &err);
        CU_ASSERT_PTR_NOT_NULL_FATAL(f);
        CU_ASSERT_EQUAL(cJSON_IsTrue(cJSON_GetObjectItem(f, "fits")), k == 1);
        cJSON_Delete(f);
        g_free(t);
    }
    /* JAX takes its whole share at once: 99.9 % leaves no room for the
     * memory outside its pool; PyTorch's cap is only a cap */
    const char *fw[] = {"jax", "pytorch"};
    for (int k = 0; k < 2; k++) {
        char *t = g_strdup_printf(", \"framework\": \"%s\", \"memory_fraction\": 0.999", fw[k]);
        cJSON *f = model_run("llama2-13b", "\"zero_stage\": 3", t, &err);
        CU_ASSERT_PTR_NOT_NULL_FATAL(f);
        CU_ASSERT_EQUAL(cJSON_IsTrue(cJSON_GetObjectItem(f, "fits")), k == 1);
        cJSON_Delete(f);
        g_free(t);
    }
    for (int i = 0; i < 4; i++)
        cJSON_Delete(r[i]);
}

/* JAX's pipelines (MaxText's, Praxis's) differentiate through a loop over
 * the micro-batches: pp > 1 runs GPipe's schedule unless told otherwise. */
static void test_jax_pipeline(void)
{
    GError *err = NULL;
    const char *sched[] = {"gpipe", "1f1b"}, *pars[] = {"\"pp\": 2", "\"pp\": 2, \"schedule\": \"1f1b\""};
    for (int i = 0; i < 2; i++) {
        cJSON *r = model_run("llama2-13b", pars[i], ", \"framework\": \"jax\"", &err);
        CU_ASSERT_PTR_NOT_NULL_FATAL(r);
        const cJSON *s = cJSON_GetObjectItem(cJSON_GetObjectItem(r, "config"), "schedule");
        CU_ASSERT_TRUE(cJSON_IsString(s) && !strcmp(s->valuestring, sched[i]));
        cJSON_Delete(r);
    }
}

/* A TPU runs only XLA's programs (its preset's "runtime"): its step is
 * jax's without being told, no allocator's holes; "pytorch" is refused. */
static void test_tpu(void)
{
    GError *err = NULL;
    const char *h = "{\"name\": \"tpu\", \"topology\": \"tpu-v3-pod\", \"nodes\": 16, \"model\": \"resnet50\", "
                    "\"global_batch\": 512, \"micro_batch\": 8, \"optimizer\": \"sgd_momentum\", \"parallelism\": {";
    cJSON *r = steps_run_with("tpu.json", h, "", "}}", &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    CU_ASSERT_DOUBLE_EQUAL(mem_term(r, "fragmentation"), 0, 0);
    const cJSON *fw = cJSON_GetObjectItem(cJSON_GetObjectItem(r, "config"), "framework");
    CU_ASSERT_TRUE(cJSON_IsString(fw) && !strcmp(fw->valuestring, "jax"));
    cJSON_Delete(r);
    steps_expect_refused(steps_run_with("tpu.json", h, "", "}, \"framework\": \"pytorch\"}", &err), &err,
                         "runs only XLA-compiled programs");
}

/* The bytes of the collective NAME in a run's listing; -1 where absent. */
static double coll_bytes(const cJSON *r, const char *name)
{
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(r, "collectives"))
    if (!strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(c, "name")), name))
        return cJSON_GetObjectItem(c, "bytes")->valuedouble;
    return -1;
}

/* Llama 2 70B (64 heads, 8 KV heads of 128) under cp 4, micro-batch 2 of
 * 4096 tokens: a device's block is 2 x 1024 tokens.  Transformer Engine's
 * ring sends its grouped K and V (2 x 1024 wide, bf16); PyTorch's gathers
 * the cp blocks with K and V repeated to the query's 8192 where the model
 * repeats them (cp_repeat_kv true; SDPA's enable_gqa, the default, not) and sends the summed dK, dV in fp32; its fp32
 * merges make the step longer than TE's, its buffers the working set
 * larger.  A PyTorch cp_impl changes nothing at cp 1. */
static void test_cp_impl(void)
{
    const char *impl[] = {", \"cp\": 4", ", \"cp\": 4, \"cp_impl\": \"pytorch_allgather\", \"cp_repeat_kv\": true",
                          ", \"cp\": 4, \"cp_impl\": \"pytorch_allgather\", \"cp_repeat_kv\": false",
                          ", \"cp\": 4, \"cp_impl\": \"pytorch_alltoall\", \"cp_repeat_kv\": true"};
    cJSON *r[4];
    llama_runs(impl, NULL, r);
    double tokens = 2 * 1024, grouped = tokens * 2 * 1024, repeated = tokens * 2 * 8192;
    CU_ASSERT_DOUBLE_EQUAL(coll_bytes(r[0], "cp_send_kv"), grouped * 2, 0);
    CU_ASSERT_DOUBLE_EQUAL(coll_bytes(r[0], "cp_send_dkv"), grouped * 2, 0);
    CU_ASSERT_DOUBLE_EQUAL(coll_bytes(r[0], "cp_allgather_kv"), -1, 0);
    CU_ASSERT_DOUBLE_EQUAL(coll_bytes(r[1], "cp_allgather_kv"), 4 * repeated * 2, 0);
    CU_ASSERT_DOUBLE_EQUAL(coll_bytes(r[1], "cp_send_dkv"), repeated * 4, 0);
    CU_ASSERT_DOUBLE_EQUAL(coll_bytes(r[1], "cp_send_kv"), -1, 0);
    CU_ASSERT_DOUBLE_EQUAL(coll_bytes(r[2], "cp_allgather_kv"), 4 * grouped * 2, 0);
    CU_ASSERT_DOUBLE_EQUAL(coll_bytes(r[2], "cp_send_dkv"), grouped * 4, 0);
    CU_ASSERT_DOUBLE_EQUAL(coll_bytes(r[3], "cp_send_kv"), repeated * 2, 0);
    CU_ASSERT_DOUBLE_EQUAL(coll_bytes(r[3], "cp_allgather_kv"), -1, 0);
    double t[4];
    for (int i = 0; i < 4; i++)
        t[i] = steps_num(r[i], "step_time_s");
    CU_ASSERT_TRUE(t[1] > t[0] && t[1] > t[2]);
    /* beside the layer's activations PyTorch's ring holds the cp gathered
     * blocks, and in the backward the fp32 dQ and the received, summed and
     * packed fp32 dK, dV: 4 blocks + 4 E + 12 KV bytes (E the device's
     * query elements, 2 x 1024 x 8192; TE's ring: none counted) */
    double E = tokens * 8192, ws0 = steps_num(cJSON_GetObjectItem(r[0], "memory_per_device_bytes"), "working_set");
    for (int i = 1; i <= 2; i++) {
        double kv = (i == 1 ? repeated : grouped), extra = 4 * 2 * kv + fmax(2 * kv + 4 * E, 4 * E + 12 * kv);
        double ws = steps_num(cJSON_GetObjectItem(r[i], "memory_per_device_bytes"), "working_set");
        CU_ASSERT_DOUBLE_EQUAL(ws - ws0, extra, 1e-6 * extra);
    }
    printf("\nllama2-70b, h100 x 16, cp 4, mb 2: te_p2p %.3f s, pytorch_allgather %.3f s (grouped KV %.3f s), "
           "pytorch_alltoall %.3f s\n", t[0], t[1], t[2], t[3]);
    for (int i = 0; i < 4; i++)
        cJSON_Delete(r[i]);
    GError *e1 = NULL;
    cJSON *cp1 = model_run("llama2-70b", "\"zero_stage\": 3, \"cp_impl\": \"pytorch_allgather\"",
                           ", \"attention\": \"unfused\"", &e1);
    CU_ASSERT_PTR_NOT_NULL(cp1);
    cJSON_Delete(cp1);
    g_clear_error(&e1);
    refused(", \"cp\": 4, \"cp_impl\": \"ring\"", "", "\"cp_impl\" = \"ring\" is not one of \"te_p2p\"");
    refused(", \"cp\": 4, \"cp_repeat_kv\": false", "", "\"cp_repeat_kv\" is PyTorch's context_parallel's");
    refused(", \"cp\": 4, \"cp_impl\": \"pytorch_alltoall\", \"cp_repeat_kv\": 1", "", "\"cp_repeat_kv\"");
    refused(", \"cp\": 4, \"cp_impl\": \"pytorch_allgather\"", ", \"attention\": \"unfused\"",
            "\"cp_impl\": PyTorch's context_parallel replaces SDPA's fused kernels");
    refused(", \"cp\": 4, \"cp_impl\": \"pytorch_allgather\"",
            ", \"precision\": \"fp8\", \"fp8_dot_product_attention\": true", "runs SDPA's 16-bit kernels");
    refused(", \"cp\": 4, \"cp_impl\": \"pytorch_alltoall\"", ", \"framework\": \"jax\"",
            "\"cp_impl\": \"pytorch_alltoall\" is PyTorch's");
}

/* "cross_entropy": "chunked" (Liger's fused linear cross entropy) on
 * TRL's Qwen3-8B at 1M tokens over 8 H100 (cp 8: 131072 tokens a device,
 * vocabulary 151936, hidden 4096): a chunk of next_pow2(ceil(T / 38)) =
 * 4096 tokens' logits, the output layer's input gradient and its weight
 * gradient, in place of the whole 16-bit logits and their gradient
 * ("compiled"), without recomputation (whose layer would outgrow the
 * loss) and on Transformer Engine's ring; its passes over the logits (3 e a logit) are compiled's, all in
 * the forward. */
static void test_chunked_loss(void)
{
    gchar *text = NULL;
    CU_ASSERT_FATAL(g_file_get_contents(STEPS "hf-trl-qwen3-8b-1m.json", &text, NULL, NULL));
    cJSON *root = cJSON_Parse(text);
    g_free(text);
    set_key(root, "parallelism.recompute", "none");
    set_key(root, "parallelism.cpu_checkpointing", "null"); /* no checkpoints to offload without recomputation */
    set_key(root, "parallelism.cpu_checkpointing_copy", "null");
    set_key(root, "parallelism.cp_impl", "te_p2p"); /* PyTorch's ring holds buffers of its own (test_cp_impl) */
    cJSON_DeleteItemFromObject(cJSON_GetObjectItem(root, "parallelism"), "cp_repeat_kv");
    cJSON *r[2];
    const char *ce[2] = {"compiled", "chunked"};
    for (int i = 0; i < 2; i++) {
        set_key(root, "cross_entropy", ce[i]);
        r[i] = steps_run_scenario("hf-trl-qwen3-8b-1m.json", root, ce[i]);
    }
    cJSON_Delete(root);
    const cJSON *m0 = cJSON_GetObjectItem(r[0], "memory_per_device_bytes"), *m1 = cJSON_GetObjectItem(r[1], "memory_per_device_bytes");
    double T = 131072, V = 151936, H = 4096, e = 2;
    double loss = e * (4096 * V + H * (T + V)) + T * H * e; /* chunk, gradients, the output layer's saved input */
    CU_ASSERT_DOUBLE_EQUAL(steps_num(m1, "working_set"), loss, 1e-9 * loss);
    CU_ASSERT_DOUBLE_EQUAL(steps_num(m0, "working_set"), 2 * e * T * V + T * H * e, 1e-9 * T * V);
    CU_ASSERT_DOUBLE_EQUAL(steps_num(r[1], "step_time_s"), steps_num(r[0], "step_time_s"), 1e-9);
    for (int i = 0; i < 2; i++)
        cJSON_Delete(r[i]);
    refused(", \"tp\": 2", ", \"cross_entropy\": \"chunked\"", "\"cross_entropy\": \"chunked\"");
    refused("", ", \"cross_entropy\": \"chunk\"", "\"chunked\"");
}

/* "cpu_checkpointing" without partitions, on TRL's Qwen3-8B at 1M tokens
 * over 8 H100 (cp 8: 131072 tokens a device, hidden 4096, 36 layers, full
 * recomputation): each layer's 16-bit checkpoint, 131072 x 4096 x 2 bytes,
 * goes to the host and back.  Blocking copies (PyTorch's save_on_cpu) add
 * both crossings of every layer at "pcie_bandwidth" to the step; async ones
 * hide behind the forward and behind the layer above's backward; either
 * way HBM keeps two checkpoints and the host the other 34. */
static void test_cpu_checkpointing(void)
{
    gchar *text = NULL;
    CU_ASSERT_FATAL(g_file_get_contents(STEPS "hf-trl-qwen3-8b-1m.json", &text, NULL, NULL));
    cJSON *root = cJSON_Parse(text);
    g_free(text);
    static const char *const copy[3][2] = {{"false", "null"}, {"true", "blocking"}, {"true", "async"}};
    cJSON *r[3];
    for (int i = 0; i < 3; i++) {
        set_key(root, "parallelism.cpu_checkpointing", copy[i][0]);
        set_key(root, "parallelism.cpu_checkpointing_copy", copy[i][1]);
        r[i] = steps_run_scenario("hf-trl-qwen3-8b-1m.json", root, copy[i][1]);
    }
    cJSON_Delete(root);
    double ck = 131072.0 * 4096 * 2, L = 36, pcie = 25e9; /* STEP_DEFAULT_PCIE_BPS */
    double t0 = steps_num(r[0], "step_time_s"), tb = steps_num(r[1], "step_time_s"), ta = steps_num(r[2], "step_time_s");
    printf("1M tokens: in HBM %.2f s, blocking copies %+.3f s, async %+.3f s\n", t0, tb - t0, ta - t0);
    CU_ASSERT_DOUBLE_EQUAL(tb - t0, 2 * L * ck / pcie, 0.01 * 2 * L * ck / pcie);
    CU_ASSERT_DOUBLE_EQUAL(ta, t0, 1e-3 * t0);
    const cJSON *m0 = cJSON_GetObjectItem(r[0], "memory_per_device_bytes");
    for (int i = 1; i < 3; i++) {
        const cJSON *m = cJSON_GetObjectItem(r[i], "memory_per_device_bytes");
        CU_ASSERT_DOUBLE_EQUAL(steps_num(m0, "activations"), L * ck, 1e-6 * ck);
        CU_ASSERT_DOUBLE_EQUAL(steps_num(m, "activations"), 2 * ck, 1e-6 * ck);
        CU_ASSERT_DOUBLE_EQUAL(steps_num(m, "host_checkpoints"), (L - 2) * ck, 1e-6 * ck);
    }
    for (int i = 0; i < 3; i++)
        cJSON_Delete(r[i]);
    /* under 1F1B the first stage holds pp micro-batches' checkpoints: GPT-3
     * 1.3B over pp 4 (6 layers a stage, 2048 x 2048 x 2 bytes a checkpoint)
     * keeps 4 x 6 - 2 of them in host memory, though the last stage's HBM
     * peaks (a review found the peak stage's 4 reported) */
    cJSON *pp = cJSON_Parse("{\"accelerator\": \"a100-80gb\", \"topology\": \"dgx-a100-cluster\", \"nodes\": 2, "
                            "\"model\": \"gpt3-1.3b\", \"global_batch\": 64, \"micro_batch\": 1, \"parallelism\": "
                            "{\"pp\": 4, \"recompute\": \"full\", \"cpu_checkpointing\": true}}");
    CU_ASSERT_PTR_NOT_NULL_FATAL(pp);
    cJSON *rp = steps_run_scenario("pp4.json", pp, "pp 4");
    const cJSON *mp = cJSON_GetObjectItem(rp, "memory_per_device_bytes");
    double ck13 = 2048.0 * 2048 * 2;
    CU_ASSERT_EQUAL(steps_num(mp, "stage"), 3);
    CU_ASSERT_DOUBLE_EQUAL(steps_num(mp, "host_checkpoints"), (4 * 6 - 2) * ck13, 1e-6 * ck13);
    CU_ASSERT_DOUBLE_EQUAL(steps_num(mp, "activations"), 2 * ck13, 1e-6 * ck13);
    cJSON_Delete(rp);
    cJSON_Delete(pp);
}

static const TestCase tests[] = {
    {"recompute op: what a block keeps and runs again (Llama 2 70B)", test_kept_and_recomputed},
    {"recompute op: each GEMM's share, gated and GPT blocks", test_shares},
    {"elementwise eager: the bytes by hand (Llama 2 70B)", test_eager_bytes},
    {"recompute_keep: what full recomputation keeps (Llama 2 70B)", test_keep},
    {"recompute_keep core_attn: the fused kernel's output kept", test_keep_core_attn},
    {"elementwise eager: its time, with and without recompute op", test_eager_step},
    {"recompute op, elementwise eager, recompute_keep: what is refused", test_refused},
    {"zero_impl fsdp2: FSDP2's copy-out and copy-in on the compute stream", test_fsdp2_copies},
    {"framework jax: XLA's planned buffers, gathers and fused FP8 casts", test_jax},
    {"TPU: its step is XLA's", test_tpu},
    {"framework jax: GPipe's schedule for pp > 1", test_jax_pipeline},
    {"cp_impl: Transformer Engine's ring and PyTorch's context_parallel", test_cp_impl},
    {"cross_entropy chunked: a chunk of logits, the gradients made in the forward", test_chunked_loss},
    {"cpu_checkpointing: the checkpoints in host memory, blocking or async copies", test_cpu_checkpointing},
};

TEST_MAIN("pytorch_modes", tests)
