/* Megatron-Core's recompute_modules (what each leaves unsaved, what it
 * runs again, what Megatron-Core refuses) and Transformer Engine's FP8
 * recipes (the quantization traffic per recipe, the FP8 weight copies,
 * the chips that take block scales). */
#include "fp8_recipe.h"
#include "test_steps.h"

/* GPT-OSS 120B on 8 B200 nodes, ep 8, micro-batch 4 (25.11's layout), with
 * PAR appended to its parallelism and TAIL to the scenario. */
static cJSON *oss_run(const char *par, const char *tail, GError **err)
{
    char *t = g_strdup_printf("}%s}", tail);
    cJSON *r = steps_run_with("oss.json",
                              "{\"name\": \"oss\", \"accelerator\": \"b200\", \"topology\": \"dgx-b200-cluster\", "
                              "\"nodes\": 8, \"model\": \"gpt-oss-120b\", \"global_batch\": 512, \"micro_batch\": 4, "
                              "\"optimizer\": \"adam\", \"attention\": \"fused\", \"cross_entropy\": \"fp32\", "
                              "\"parallelism\": {\"dp\": 64, \"ep\": 8, \"weight_update\": \"sharded\"",
                              par, t, err);
    g_free(t);
    return r;
}


/* Per MoE layer and micro-batch of 4 x 4096 tokens (bf16, tp 1): "layernorm"
 * frees the pre-MLP norm's output (T h e), "moe_act" the routed experts'
 * fc2 inputs (top_k T expert_ffn e), "moe" everything of the MLP but its
 * input; each adds recomputation time, "moe" most (its all-to-alls). */
static void test_modules_memory_time(void)
{
    GError *err = NULL;
    const char *mods[] = {"", ", \"recompute_modules\": [\"layernorm\"]", ", \"recompute_modules\": [\"moe_act\"]",
                          ", \"recompute_modules\": [\"moe\"]"};
    cJSON *r[4];
    for (int i = 0; i < 4; i++) {
        r[i] = oss_run(mods[i], "", &err);
        CU_ASSERT_PTR_NOT_NULL_FATAL(r[i]);
    }
    Workload *w = workload_load("gpt-oss-120b", &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(w);
    const WorkloadTransformer *t = workload_transformer(w);
    double T = 4.0 * 4096, L = t->layers, a[4], st[4];
    for (int i = 0; i < 4; i++)
        a[i] = steps_activations(r[i]), st[i] = steps_num(r[i], "step_time_s");
    /* pp 1: one micro-batch's layers held at the peak */
    CU_ASSERT_DOUBLE_EQUAL(a[0] - a[1], L * T * t->hidden * 2, 1e-6 * a[0]);
    CU_ASSERT_DOUBLE_EQUAL(a[0] - a[2], L * t->top_k * T * t->expert_ffn * 2, 1e-6 * a[0]);
    CU_ASSERT_TRUE(a[3] < a[2]);
    CU_ASSERT_TRUE(st[1] > st[0] && st[2] > st[0]);
    CU_ASSERT_TRUE(st[3] > st[2]);
    double gib = 1 << 30;
    printf("\ngpt-oss-120b, b200 x 64, ep 8, mb 4: step %.3f s, activations %.1f GiB; layernorm %.3f / %.1f, "
           "moe_act %.3f / %.1f, moe %.3f / %.1f\n",
           st[0], a[0] / gib, st[1], a[1] / gib, st[2], a[2] / gib, st[3], a[3] / gib);
    /* the report lists them */
    const cJSON *m = cJSON_GetObjectItem(cJSON_GetObjectItem(r[2], "config"), "recompute_modules");
    CU_ASSERT_TRUE(cJSON_IsArray(m) && !strcmp(cJSON_GetArrayItem(m, 0)->valuestring, "moe_act"));
    for (int i = 0; i < 4; i++)
        cJSON_Delete(r[i]);
    workload_free(w);
}

/* "mlp" checkpoints a dense layer's MLP (DeepSeek-V3's first three): only
 * its input stays, and a MoE layer keeps everything; "shared_experts" drops
 * the shared expert's activation and fc2 inputs. */
static void test_mlp_shared(void)
{
    GError *err = NULL;
    Workload *w = workload_load("deepseek-v3", &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(w);
    const WorkloadTransformer *t = workload_transformer(w);
    WorkloadParallel a = workload_parallel_default(), b;
    a.fused_attention = true;
    b = a;
    b.recompute_modules = WORKLOAD_RC_MLP;
    double T = t->seq_len, e = 2, f = t->ffn, fe = t->expert_ffn;
    /* dense layer 0: the MLP input, SwiGLU's two inputs and fc2's input */
    CU_ASSERT_DOUBLE_EQUAL(workload_layer_activation_bytes(w, 0, 1, &a) - workload_layer_activation_bytes(w, 0, 1, &b),
                           T * t->hidden * e + 3 * T * f * e, 1);
    CU_ASSERT_DOUBLE_EQUAL(workload_layer_activation_bytes(w, 10, 1, &a), workload_layer_activation_bytes(w, 10, 1, &b), 1);
    b.recompute_modules = WORKLOAD_RC_SHARED;
    CU_ASSERT_DOUBLE_EQUAL(workload_layer_activation_bytes(w, 10, 1, &a) - workload_layer_activation_bytes(w, 10, 1, &b),
                           3 * T * fe * e, 1);
    workload_free(w);
}

static void refused(const char *par, const char *tail, const char *what)
{
    GError *err = NULL;
    steps_expect_refused(oss_run(par, tail, &err), &err, what);
}

/* Unknown modules, repeats, modules the model has nothing for, and what
 * Megatron-Core refuses (delayed scaling with output-discarding
 * recomputation, "moe" with the all-to-all overlap, full granularity). */
static void test_modules_refused(void)
{
    refused(", \"recompute_modules\": [\"attention\"]", "", "\"attention\" is not one of");
    refused(", \"recompute_modules\": [\"moe\", \"moe\"]", "", "lists \"moe\" twice");
    refused(", \"recompute_modules\": [\"mla_up_proj\"]", "", "\"mla_up_proj\" needs multi-head latent attention");
    refused(", \"recompute_modules\": [\"shared_experts\"]", "", "\"shared_experts\" needs shared experts");
    refused(", \"recompute_modules\": [\"mlp\"]", "", "every layer of this model is a mixture of experts");
    refused(", \"recompute\": \"full\", \"recompute_modules\": [\"moe\"]", "", "not with \"recompute\": \"full\"");
    refused(", \"recompute_modules\": 3", "", "must be an array");
    refused(", \"recompute_modules\": [\"moe\"], \"moe_a2a_overlap\": true", "", "cannot run with \"moe_a2a_overlap\"");
    refused(", \"recompute_modules\": [\"layernorm\"]", ", \"precision\": \"fp8\"",
            "\"layernorm\" in FP8 needs a \"fp8_recipe\" other than \"delayed\"");
    refused(", \"recompute_modules\": [\"moe_act\"]", ", \"precision\": \"fp8\", \"fp8_recipe\": \"delayed\"",
            "\"moe_act\" in FP8 needs");
    GError *err = NULL;
    cJSON *ok = oss_run(", \"recompute_modules\": [\"layernorm\", \"moe_act\"]",
                        ", \"precision\": \"fp8\", \"fp8_recipe\": \"mxfp8\"", &err);
    CU_ASSERT_PTR_NOT_NULL(ok);
    cJSON_Delete(ok);
    /* a dense model whose norms Transformer Engine fuses into its linears */
    cJSON *d = steps_run_with("d.json",
                              "{\"name\": \"d\", \"accelerator\": \"h100-sxm\", \"topology\": \"dgx-h100-cluster\", "
                              "\"nodes\": 1, \"model\": \"llama2-7b\", \"global_batch\": 64, \"micro_batch\": 1, "
                              "\"parallelism\": {\"dp\": 8, \"recompute_modules\": [",
                              "\"layernorm\"", "]}}", &err);
    CU_ASSERT_PTR_NULL(d);
    CU_ASSERT_PTR_NOT_NULL_FATAL(err);
    CU_ASSERT_PTR_NOT_NULL(strstr(err->message, "fuses its norms"));
    g_clear_error(&err);
}

/* Bytes per element of TE's quantization, by recipe: delayed reads 2 and
 * writes the FP8 data and (Hopper) its transpose; current scaling reads
 * once more for the amax; MXFP8 and blockwise write both orientations with
 * their scales on any chip; the FP8 weight copies likewise. */
static void test_recipe_bytes(void)
{
    CU_ASSERT_DOUBLE_EQUAL(fp8_cast_bytes(FP8_DELAYED, 2, true, false, false), 4, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(fp8_cast_bytes(FP8_DELAYED, 2, true, true, false), 3, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(fp8_cast_bytes(FP8_TENSORWISE, 2, true, false, false), 6, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(fp8_cast_bytes(FP8_TENSORWISE, 2, true, true, false), 5, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(fp8_cast_bytes(FP8_MXFP8, 2, true, true, false), 4 + 2.0 / 32, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(fp8_cast_bytes(FP8_MXFP8, 2, false, true, false), 3 + 1.0 / 32, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(fp8_cast_bytes(FP8_BLOCKWISE, 2, true, false, false), 4 + 8.0 / 128, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(fp8_cast_bytes(FP8_BLOCKWISE, 2, true, false, true), 4 + 8.0 / 16384, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(fp8_weight_copy_bytes(FP8_DELAYED, false, false), 2, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(fp8_weight_copy_bytes(FP8_TENSORWISE, true, true), 0, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(fp8_weight_copy_bytes(FP8_MXFP8, true, false), 2 + 2.0 / 32, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(fp8_weight_copy_bytes(FP8_BLOCKWISE, true, true), 1, 1e-12);
    CU_ASSERT_STRING_EQUAL(fp8_recipe_name(FP8_MXFP8), "mxfp8");
}

/* Llama 2 7B in FP8 on one H100 node with RECIPE ("" for the default). */
static cJSON *h100_run(const char *accel, const char *recipe, GError **err)
{
    char *head = g_strdup_printf("{\"name\": \"f\", \"accelerator\": \"%s\", \"topology\": \"dgx-h100-cluster\", "
                                 "\"nodes\": 1, \"model\": \"llama2-7b\", \"global_batch\": 64, \"micro_batch\": 1, "
                                 "\"precision\": \"fp8\", \"attention\": \"fused\", \"parallelism\": {\"dp\": 8}",
                                 accel);
    cJSON *r = steps_run_with("f.json", head, recipe, "}", err);
    g_free(head);
    return r;
}

/* On H100: current scaling's amax pass makes the step longer than delayed
 * scaling's, and keeps no FP8 copy of O (linear_proj saves its input);
 * MXFP8 is refused on a chip without it, blockwise runs; the recipe needs
 * FP8 and a known name. */
static void test_recipes_h100(void)
{
    GError *err = NULL;
    cJSON *dl = h100_run("h100-sxm", "", &err), *cs = h100_run("h100-sxm", ", \"fp8_recipe\": \"tensorwise\"", &err),
          *bw = h100_run("h100-sxm", ", \"fp8_recipe\": \"blockwise\"", &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(dl);
    CU_ASSERT_PTR_NOT_NULL_FATAL(cs);
    CU_ASSERT_PTR_NOT_NULL_FATAL(bw);
    CU_ASSERT_TRUE(steps_num(cs, "step_time_s") > steps_num(dl, "step_time_s"));
    CU_ASSERT_TRUE(steps_num(bw, "step_time_s") > steps_num(dl, "step_time_s"));
    CU_ASSERT_TRUE(steps_activations(cs) < steps_activations(dl));
    CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(cJSON_GetObjectItem(cs, "config"), "fp8_recipe")->valuestring,
                           "tensorwise");
    printf("\nllama2-7b fp8 on 8 H100: delayed %.4f s, tensorwise %.4f s, blockwise %.4f s\n",
           steps_num(dl, "step_time_s"), steps_num(cs, "step_time_s"), steps_num(bw, "step_time_s"));
    cJSON_Delete(dl);
    cJSON_Delete(cs);
    cJSON_Delete(bw);
    const struct { const char *accel, *recipe, *what; } bad[] = {
        {"h100-sxm", ", \"fp8_recipe\": \"mxfp8\"", "h100-sxm's FP8 GEMMs take no MXFP8 (1x32 E8M0) scales"},
        {"mi300x", ", \"fp8_recipe\": \"blockwise\"", "mi300x's FP8 GEMMs take no 1x128 / 128x128 block scales"},
        {"h100-sxm", ", \"fp8_recipe\": \"nvfp4\"", "\"fp8_recipe\" = \"nvfp4\" is not one of"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
        CU_ASSERT_PTR_NULL(h100_run(bad[i].accel, bad[i].recipe, &err));
        CU_ASSERT_PTR_NOT_NULL_FATAL(err);
        if (!strstr(err->message, bad[i].what))
            printf("\n  got: %s\n  want: ...%s...\n", err->message, bad[i].what);
        CU_ASSERT_PTR_NOT_NULL(strstr(err->message, bad[i].what));
        g_clear_error(&err);
    }
    refused("", ", \"fp8_recipe\": \"tensorwise\"", "\"fp8_recipe\" needs \"precision\": \"fp8\"");
    /* MXFP8 parameters (Megatron's fp8_param_gather under MXFP8): the
     * weight is the rowwise MXFP8 tensor and the columnwise one is cached,
     * 1 + 1 byte (+ 2 scales per 32) where a bf16 weight and both
     * orientations took 2 + 2 (+ 2 per 32) */
    cJSON *mx = h100_run("b200", ", \"fp8_recipe\": \"mxfp8\"", &err),
          *mxp = h100_run("b200", ", \"fp8_recipe\": \"mxfp8\", \"fp8_param_gather\": true", &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(mx);
    CU_ASSERT_PTR_NOT_NULL_FATAL(mxp);
    double w = cJSON_GetObjectItem(cJSON_GetObjectItem(mx, "memory_per_device_bytes"), "weights")->valuedouble,
           wp = cJSON_GetObjectItem(cJSON_GetObjectItem(mxp, "memory_per_device_bytes"), "weights")->valuedouble;
    CU_ASSERT_TRUE(wp > 0 && wp < 0.55 * w);
    cJSON_Delete(mx);
    cJSON_Delete(mxp);
}

/* The bytes of the step's collective NAME. */
static double coll_bytes(const cJSON *res, const char *name)
{
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(res, "collectives"))
        if (!strcmp(cJSON_GetObjectItem(c, "name")->valuestring, name))
            return cJSON_GetObjectItem(c, "bytes")->valuedouble;
    return -1;
}

/* MODEL on one H100 node's topology with the accelerator ACCEL, the
 * scenario keys TOP (batch, precision) and the parallelism PAR; the
 * result, which must run. */
static cJSON *node_run(const char *accel, const char *model, const char *top, const char *par)
{
    GError *err = NULL;
    char *text = g_strdup_printf("{\"name\": \"n\", \"accelerator\": \"%s\", \"topology\": \"dgx-h100-cluster\", "
                                 "\"nodes\": 1, \"model\": \"%s\", %s, \"parallelism\": {%s}}",
                                 accel, model, top, par);
    cJSON *r = steps_run_with("n.json", text, "", "", &err);
    g_free(text);
    if (!r)
        printf("\n%s\n", err->message);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    return r;
}

/* The step's collective NAME of BYTES, by its count per step (0: none). */
static double coll_count(const cJSON *res, const char *name, double bytes)
{
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(res, "collectives"))
        if (!strcmp(cJSON_GetObjectItem(c, "name")->valuestring, name) &&
            fabs(cJSON_GetObjectItem(c, "bytes")->valuedouble - bytes) < 1)
            return cJSON_GetObjectItem(c, "count_per_step")->valuedouble;
    return 0;
}

/* Sequence-parallel tensor parallelism in FP8 gathers the quantized input
 * (Transformer Engine, torchao): 1 byte per element under per-tensor
 * recipes, plus MXFP8's scale byte per 32 (B200), while the
 * reduce-scatters and the 16-bit run's all-gathers carry 2.  A MoE
 * block's dispatcher and MLA gather 16-bit data: Mixtral with its experts
 * split over tp gathers attention's input in FP8 and the MoE block's in
 * bf16. */
static void test_fp8_tp_allgather(void)
{
    const struct {
        const char *accel, *tail;
        double per_elem_ag;
    } runs[] = {{"h100-sxm", "", 2}, {"h100-sxm", ", \"precision\": \"fp8\"", 1},
                {"h100-sxm", ", \"precision\": \"fp8\", \"fp8_recipe\": \"tensorwise\"", 1},
                {"b200", ", \"precision\": \"fp8\", \"fp8_recipe\": \"mxfp8\"", 1 + 1.0 / 32}};
    double elems = 2.0 * 4096 * 4096; /* micro-batch 2 of Llama 2 7B's 4096 tokens, hidden 4096 */
    for (size_t i = 0; i < G_N_ELEMENTS(runs); i++) {
        char *top = g_strdup_printf("\"global_batch\": 16, \"micro_batch\": 2%s", runs[i].tail);
        cJSON *r = node_run(runs[i].accel, "llama2-7b", top, "\"tp\": 4, \"sequence_parallel\": true");
        g_free(top);
        CU_ASSERT_DOUBLE_EQUAL(coll_bytes(r, "tp_allgather"), elems * runs[i].per_elem_ag, 1);
        CU_ASSERT_DOUBLE_EQUAL(coll_bytes(r, "tp_reducescatter"), elems * 2, 1);
        cJSON_Delete(r);
    }
    cJSON *m = node_run("h100-sxm", "mixtral-8x7b", "\"global_batch\": 16, \"micro_batch\": 1, \"precision\": \"fp8\"",
                        "\"tp\": 2, \"expert_tp\": 2, \"ep\": 4, \"sequence_parallel\": true, \"zero_stage\": 1");
    double mel = 4096.0 * 4096, fp8 = coll_count(m, "tp_allgather", mel), bf16 = coll_count(m, "tp_allgather", 2 * mel);
    /* a layer and micro-batch: attention's gathers forward, backward and again
     * behind qkv's data gradient (test_sp_backward), the MoE block's two,
     * four reduce-scatters */
    CU_ASSERT_TRUE(fp8 > 0 && 2 * fp8 == 3 * bf16);
    CU_ASSERT_DOUBLE_EQUAL(3 * coll_count(m, "tp_reducescatter", 2 * mel), 4 * fp8, 0);
    cJSON_Delete(m);
}

/* FP8 under ZeRO-3: a layer saves the FP8 copy of its gathered weight for
 * the backward (1 B per parameter, with the activations), unless its
 * forward ran checkpointed (full recomputation casts the weight again):
 * then FP8's activations are BF16's. */
static void test_fp8_zero3_copies(void)
{
    const char *rc[] = {"none", "full"};
    double act_of[2][2];
    for (int r = 0; r < 2; r++)
        for (int f = 0; f < 2; f++) {
            char *top = g_strdup_printf("\"global_batch\": 8, \"micro_batch\": 1, \"precision\": \"%s\"", f ? "fp8" : "bf16"),
                 *par = g_strdup_printf("\"dp\": 8, \"zero_stage\": 3, \"recompute\": \"%s\"", rc[r]);
            cJSON *res = node_run("h100-sxm", "llama2-7b", top, par);
            g_free(top);
            g_free(par);
            act_of[r][f] = steps_activations(res);
            cJSON_Delete(res);
        }
    CU_ASSERT_DOUBLE_EQUAL(act_of[1][1], act_of[1][0], 1);
    /* none: the copies (202 MB a layer) stay, beyond what the linears'
     * 1-byte inputs save (about 95 MB a layer at 4096 tokens) */
    CU_ASSERT_TRUE(act_of[0][1] > act_of[0][0]);
}

/* Megatron-Core's sequence-parallel backward (no userbuffers) gathers qkv's
 * and fc1's inputs again, behind their data-gradient GEMMs, and scatters
 * their input gradients behind the weight-gradient GEMMs: 3 gathers a
 * block per micro-batch where PyTorch DTensor, which keeps the gathered
 * input and runs its collectives in line, has 2; and a shorter step. */
static void test_sp_backward(void)
{
    const char *impl[] = {"megatron", "dtensor"};
    double ag[2], rs[2], step[2], elems = 1.0 * 4096 * 4096;
    for (int i = 0; i < 2; i++) {
        char *par = g_strdup_printf("\"tp\": 4, \"dp\": 2, \"sequence_parallel\": true, \"tp_impl\": \"%s\"", impl[i]);
        cJSON *r = node_run("h100-sxm", "llama2-7b", "\"global_batch\": 2, \"micro_batch\": 1", par);
        g_free(par);
        ag[i] = coll_count(r, "tp_allgather", 2 * elems);
        rs[i] = coll_count(r, "tp_reducescatter", 2 * elems);
        step[i] = steps_num(r, "step_time_s");
        cJSON_Delete(r);
    }
    CU_ASSERT_DOUBLE_EQUAL(ag[1], 32 * 2 * 2, 0); /* 32 layers, 2 blocks, forward and backward */
    CU_ASSERT_DOUBLE_EQUAL(ag[0], 32 * 2 * 3, 0);
    CU_ASSERT_DOUBLE_EQUAL(rs[0], rs[1], 0);
    CU_ASSERT_TRUE(step[0] < step[1]);
}

static const TestCase tests[] = {
    {"recompute_modules: memory and time per module (GPT-OSS 120B)", test_modules_memory_time},
    {"recompute_modules: mlp and shared_experts (DeepSeek-V3)", test_mlp_shared},
    {"recompute_modules: what is refused", test_modules_refused},
    {"fp8_recipe: quantization bytes per element", test_recipe_bytes},
    {"fp8_recipe: on H100, and what is refused", test_recipes_h100},
    {"fp8: sequence-parallel all-gathers carry the quantized data", test_fp8_tp_allgather},
    {"fp8 under ZeRO-3: the weight copies a checkpointed layer does not keep", test_fp8_zero3_copies},
    {"sequence parallelism's backward, Megatron-Core against DTensor", test_sp_backward},
};

TEST_MAIN("recompute", tests)
