/* The step's parallelism against hand-computed answers: the collectives
 * listed agree with the graph that ran (counted both ways), and the newer
 * parallelisms' counts, bytes, bubbles and memory. */
#include "accel.h"
#include "sim_exec.h"
#include "step.h"
#include "test_json.h"
#include "test_main.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static cJSON *run_graph(const char *text, SimGraph **g)
{
    GError *err = NULL;
    StepScenario *sc = step_scenario_parse("t.json", text, strlen(text), &err);
    if (!sc) {
        printf("\nunexpected error: %s\n", err->message);
        g_error_free(err);
        return NULL;
    }
    cJSON *r = step_scenario_run(sc, 0, g, &err);
    if (!r) {
        printf("\nunexpected error: %s\n", err->message);
        g_error_free(err);
    }
    step_scenario_free(sc);
    return r;
}

/* Sum of count_per_step over listed collectives named `name`; `op` (when
 * not NULL) receives the op of the last one. */
static double listed(const cJSON *r, const char *name, const char **op)
{
    double n = 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(r, "collectives"))
    {
        if (strcmp(cJSON_GetObjectItem(c, "name")->valuestring, name) != 0)
            continue;
        n += get(c, "count_per_step", NULL);
        if (op)
            *op = cJSON_GetObjectItem(c, "op")->valuestring;
    }
    return n;
}

/* Tasks named `name` on device rank 0's streams (stage 0 runs on rank 0). */
static int graph_count(const SimGraph *g, const char *name)
{
    int n = 0;
    for (size_t t = 0; t < sim_graph_num_tasks(g); t++) {
        int rs = sim_graph_task_resource(g, (int)t);
        if (rs >= 0 && !strncmp(sim_graph_resource_name(g, rs), "gpu0.", 5) &&
            !strcmp(sim_graph_task_name(g, (int)t), name))
            n++;
    }
    return n;
}

static char *scen(const char *model, int nodes, int gb, int mb, const char *par)
{
    return g_strdup_printf("{\"topology\": \"dgx-a100-cluster\", \"nodes\": %d, \"model\": %s,\n"
                           " \"global_batch\": %d, \"micro_batch\": %d, \"precision\": \"bf16\", \"optimizer\": \"adam\",\n"
                           " \"parallelism\": %s}\n",
                           nodes, model, gb, mb, par);
}

/* GPT-3 175B on 1024 A100s (tp 8, pp 16, dp 8, full recomputation): stage
 * 0 holds 96 / 16 = 6 layers and runs 1536 / 8 = 192 micro-batches; each
 * layer all-reduces twice in the forward, twice in the recomputation and
 * twice in the backward: 6 x 192 x 6 = 6,912 (the forward and backward
 * alone are 4,608).  One tp task per layer and pass stands for two. */
static void test_listing_gpt3_175b(void)
{
    char *t = g_strdup_printf("{\"accelerator\": \"a100-80gb\", \"topology\": \"dgx-a100-cluster\", \"nodes\": 128,"
                              " \"model\": \"gpt3-175b\", \"global_batch\": 1536, \"micro_batch\": 1,"
                              " \"precision\": \"bf16\", \"optimizer\": \"adam\","
                              " \"parallelism\": {\"dp\": 8, \"tp\": 8, \"pp\": 16, \"recompute\": \"full\"}}");
    SimGraph *g = NULL;
    cJSON *r = run_graph(t, &g);
    g_free(t);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    CU_ASSERT_EQUAL(listed(r, "tp_allreduce", NULL), 6 * 192 * 6);
    int tasks = graph_count(g, "tp_forward") + graph_count(g, "tp_recompute") + graph_count(g, "tp_backward");
    CU_ASSERT_EQUAL(graph_count(g, "tp_recompute"), 6 * 192);
    CU_ASSERT_EQUAL(2 * tasks, listed(r, "tp_allreduce", NULL));
    /* stage 0 sends 192 activations and receives 192 gradients, point to point */
    const char *op = NULL;
    CU_ASSERT_EQUAL(listed(r, "pp_send_activation", &op), 192);
    CU_ASSERT_STRING_EQUAL(op ? op : "", "send");
    CU_ASSERT_EQUAL(listed(r, "pp_recv_gradient", &op), 192);
    CU_ASSERT_STRING_EQUAL(op ? op : "", "recv");
    CU_ASSERT_EQUAL(graph_count(g, "send_activation"), 192);
    CU_ASSERT_EQUAL(listed(r, "pp_send_gradient", NULL), 0); /* the first stage sends none */
    CU_ASSERT_EQUAL(listed(r, "grad_allreduce", NULL), graph_count(g, "grad_allreduce"));
    CU_ASSERT_TRUE(listed(r, "grad_allreduce", NULL) > 0);
    cJSON_Delete(r);
    sim_graph_free(g);
}

/* Every data-parallel collective listed is a task of that name on stage 0,
 * whatever the ZeRO stage; sequence parallelism lists 2 all-gathers and 2
 * reduce-scatters per layer and pass: 4 layers x 4 micro-batches x 2
 * passes x 2 = 64 each; ZeRO-3's counts with and without a pipeline. */
static void test_listing_matches_graph(void)
{
    static const char *const pars[] = {
        "{\"dp\": 4, \"tp\": 2, \"pp\": 2}",
        "{\"dp\": 4, \"tp\": 2, \"pp\": 2, \"weight_update\": \"sharded\"}",
        "{\"dp\": 4, \"tp\": 2, \"pp\": 2, \"weight_update\": \"sharded\", \"allgather_overlap\": false}",
        "{\"dp\": 4, \"tp\": 2, \"pp\": 2, \"zero_stage\": 2}",
        "{\"dp\": 4, \"tp\": 2, \"pp\": 2, \"zero_stage\": 3, \"zero_impl\": \"fsdp2\"}",
        "{\"dp\": 4, \"tp\": 2, \"pp\": 2, \"sequence_parallel\": true}",
        "{\"dp\": 8, \"tp\": 2, \"pp\": 1, \"zero_stage\": 3}",
        "{\"dp\": 4, \"tp\": 2, \"pp\": 2, \"zero_stage\": 3, \"zero_impl\": \"fsdp2\", \"pipeline_microbatches\": 2}",
    };
    static const char *const dpnames[] = {"grad_allreduce", "grad_reducescatter", "param_allgather",
                                          "zero3_allgather", "zero3_reducescatter"};
    const char *model = "{\"layers\": 8, \"hidden\": 1024, \"heads\": 16, \"seq_len\": 1024, \"vocab\": 32000}";
    for (size_t i = 0; i < G_N_ELEMENTS(pars); i++) {
        char *t = scen(model, 2, 16, 1, pars[i]);
        SimGraph *g = NULL;
        cJSON *r = run_graph(t, &g);
        g_free(t);
        CU_ASSERT_PTR_NOT_NULL_FATAL(r);
        double total = 0;
        for (size_t k = 0; k < G_N_ELEMENTS(dpnames); k++) {
            CU_ASSERT_EQUAL(listed(r, dpnames[k], NULL), graph_count(g, dpnames[k]));
            total += listed(r, dpnames[k], NULL);
        }
        CU_ASSERT_TRUE(total > 0);
        /* ZeRO-3 under a pipeline: a stage's 4 layers gathered at a
         * schedule's first forward and reduce-scattered at its last
         * backward, once for the one schedule of 4 micro-batches, twice for
         * two of 2; without one, every layer (8) in each forward and
         * backward of its 2 micro-batches, reduce-scattered in each */
        if (i == 4 || i == 7) {
            CU_ASSERT_EQUAL(listed(r, "zero3_allgather", NULL), 4 * (i == 4 ? 1 : 2));
            CU_ASSERT_EQUAL(listed(r, "zero3_reducescatter", NULL), 4 * (i == 4 ? 1 : 2));
        }
        if (i == 6) {
            CU_ASSERT_EQUAL(listed(r, "zero3_allgather", NULL), 8 * 2 * 2);
            CU_ASSERT_EQUAL(listed(r, "zero3_reducescatter", NULL), 8 * 2);
        }
        if (i == 5) {
            /* the backward gathers qkv's and fc1's inputs again (Megatron's
             * sequence parallelism): 3 gathers a block against 2 scatters */
            CU_ASSERT_EQUAL(listed(r, "tp_allgather", NULL), 96);
            CU_ASSERT_EQUAL(listed(r, "tp_reducescatter", NULL), 64);
            CU_ASSERT_EQUAL(listed(r, "tp_allreduce", NULL), 0);
        } else {
            CU_ASSERT_EQUAL(listed(r, "tp_allreduce", NULL), 64);
        }
        cJSON_Delete(r);
        sim_graph_free(g);
    }
}

static cJSON *run(const char *text)
{
    GError *err = NULL;
    cJSON *r = step_run_text("t.json", text, &err);
    if (!r) {
        printf("\nunexpected error: %s\n", err->message);
        g_error_free(err);
    }
    return r;
}

/* The listed collective named `name` (the first), or NULL. */
static const cJSON *coll(const cJSON *r, const char *name)
{
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(r, "collectives"))
    {
        if (!strcmp(cJSON_GetObjectItem(c, "name")->valuestring, name))
            return c;
    }
    return NULL;
}

static char *moe_scen(int nodes, int gb, const char *par)
{
    return g_strdup_printf("{\"topology\": \"dgx-h100-cluster\", \"nodes\": %d, \"model\": \"mixtral-8x7b\",\n"
                           " \"global_batch\": %d, \"micro_batch\": 1, \"precision\": \"bf16\", \"optimizer\": \"adam\",\n"
                           " \"parallelism\": %s}\n",
                           nodes, gb, par);
}

/* Mixtral 8x7B (Jiang et al. 2024, Table 1) per layer: attention 4096 x
 * (4096 + 2 x 1024) + 4096^2 = 41,943,040, router 4096 x 8 = 32,768, two
 * RMSNorms 8,192: 41,984,000 dense; experts 8 x 3 x 4096 x 14336 =
 * 1,409,286,144.  Embeddings 2 x 32000 x 4096 + final norm = 262,148,096. */
#define MIX_DENSE 41984000.0
#define MIX_EXPERTS 1409286144.0
#define MIX_HEAD 262148096.0

/* ep 8 of dp 16 on 2 DGX H100 nodes, tp 1, pp 1: a device holds the dense
 * part and 1/8 of the experts; ZeRO-1 shards the dense optimizer state over
 * 16 and the experts' over dp / ep = 2 (12 bytes per parameter, Adam in
 * mixed precision). */
static void test_moe_memory(void)
{
    char *t = moe_scen(2, 16, "{\"dp\": 16, \"ep\": 8, \"weight_update\": \"sharded\"}");
    cJSON *r = run(t);
    g_free(t);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    double dense = 32 * MIX_DENSE + MIX_HEAD, experts = 32 * MIX_EXPERTS / 8;
    CU_ASSERT_DOUBLE_EQUAL(get(r, "memory_per_device_bytes", "weights"), 2 * (dense + experts), 1);
    CU_ASSERT_DOUBLE_EQUAL(get(r, "memory_per_device_bytes", "gradients"), 2 * (dense + experts), 1);
    CU_ASSERT_DOUBLE_EQUAL(get(r, "memory_per_device_bytes", "optimizer_state"), 12 * (dense / 16 + experts / 2),
                           1);
    CU_ASSERT_DOUBLE_EQUAL(get(r, "config", "params"), 32 * (MIX_DENSE + MIX_EXPERTS) + MIX_HEAD, 1);
    /* 2 of 8 experts per token: the card's 12.9 B active parameters */
    CU_ASSERT_DOUBLE_EQUAL(get(r, "config", "active_params"), 32 * (MIX_DENSE + MIX_EXPERTS / 4) + MIX_HEAD, 1);
    CU_ASSERT_DOUBLE_EQUAL(get(r, "config", "active_params") / 1e9, 12.9, 0.05);
    /* the experts' gradients reduce-scattered over the 2 ranks that hold the same experts */
    const cJSON *rs = coll(r, "expert_reducescatter");
    CU_ASSERT_PTR_NOT_NULL_FATAL(rs);
    CU_ASSERT_EQUAL(get(rs, "group_size", NULL), 2);
    cJSON_Delete(r);
}

/* The dispatch and combine buffer of a rank: its tokens x top_k x capacity
 * factor x hidden x 2 bytes = 4096 x 2 x 1.25 x 4096 x 2 = 83,886,080 B,
 * over the 8 ranks of the expert-parallel group; each layer of each
 * micro-batch dispatches and combines in the forward and the backward (and
 * the recomputed forward): 32 layers x 2 micro-batches x 2 (x 3). */
static void test_moe_alltoall(void)
{
    static const char *const rc[] = {"none", "full"};
    for (int k = 0; k < 2; k++) {
        char par[160];
        snprintf(par, sizeof par, "{\"dp\": 16, \"ep\": 8, \"capacity_factor\": 1.25, \"recompute\": \"%s\"}", rc[k]);
        char *t = moe_scen(2, 32, par);
        SimGraph *g = NULL;
        cJSON *r = run_graph(t, &g);
        g_free(t);
        CU_ASSERT_PTR_NOT_NULL_FATAL(r);
        const char *names[] = {"ep_dispatch", "ep_combine"};
        for (int i = 0; i < 2; i++) {
            const cJSON *a = coll(r, names[i]);
            CU_ASSERT_PTR_NOT_NULL_FATAL(a);
            CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(a, "op")->valuestring, "alltoall");
            CU_ASSERT_EQUAL(get(a, "group_size", NULL), 8);
            CU_ASSERT_DOUBLE_EQUAL(get(a, "bytes", NULL), 4096.0 * 2 * 1.25 * 4096 * 2, 0.5);
            CU_ASSERT_EQUAL(get(a, "count_per_step", NULL), 32 * 2 * (k ? 3 : 2));
        }
        /* one ep task per layer and pass runs both */
        int tasks = graph_count(g, "ep_forward") + graph_count(g, "ep_backward") + graph_count(g, "ep_recompute");
        CU_ASSERT_EQUAL(tasks, listed(r, "ep_dispatch", NULL));
        CU_ASSERT_EQUAL(get(r, "config", "ep"), 8);
        cJSON_Delete(r);
        sim_graph_free(g);
    }
}

/* More capacity pads more: a slower step and more hardware FLOPs, the
 * model FLOPs unchanged; ep 1 holds every expert (8x the expert weights)
 * and has no all-to-all.  A capacity below 1 drops tokens, which no one
 * computes: fewer model FLOPs, the MFU never above 1 (159.8% at 0.01 when
 * the dropped tokens counted). */
static void test_moe_capacity_and_ep(void)
{
    cJSON *r[4];
    const char *pars[] = {"{\"dp\": 16, \"ep\": 8, \"capacity_factor\": 1.0}",
                          "{\"dp\": 16, \"ep\": 8, \"capacity_factor\": 2.0}", "{\"dp\": 16, \"ep\": 1}",
                          "{\"dp\": 16, \"ep\": 8, \"capacity_factor\": 0.01}"};
    for (int i = 0; i < 4; i++) {
        char *t = moe_scen(2, 16, pars[i]);
        r[i] = run(t);
        g_free(t);
        CU_ASSERT_PTR_NOT_NULL_FATAL(r[i]);
    }
    CU_ASSERT_TRUE(get(r[1], "step_time_s", NULL) > get(r[0], "step_time_s", NULL));
    CU_ASSERT_DOUBLE_EQUAL(get(r[1], "model_flops_per_step", NULL), get(r[0], "model_flops_per_step", NULL), 1);
    CU_ASSERT_TRUE(get(r[1], "hardware_flops_per_step", NULL) > get(r[0], "hardware_flops_per_step", NULL));
    CU_ASSERT_DOUBLE_EQUAL(get(coll(r[1], "ep_dispatch"), "bytes", NULL), 2 * get(coll(r[0], "ep_dispatch"), "bytes", NULL), 1);
    double w8 = get(r[0], "memory_per_device_bytes", "weights"), w1 = get(r[2], "memory_per_device_bytes", "weights");
    CU_ASSERT_DOUBLE_EQUAL(w1 - w8, 2 * 32 * MIX_EXPERTS * (1 - 1.0 / 8), 1);
    CU_ASSERT_PTR_NULL(coll(r[2], "ep_dispatch"));
    CU_ASSERT_TRUE(get(r[3], "model_flops_per_step", NULL) < get(r[0], "model_flops_per_step", NULL));
    CU_ASSERT_TRUE(get(r[3], "mfu", NULL) > 0 && get(r[3], "mfu", NULL) <= get(r[0], "mfu", NULL));
    for (int i = 0; i < 4; i++)
        cJSON_Delete(r[i]);
}

/* Interleaved 1F1B on uniform stages (a tiny vocabulary makes the head
 * negligible), no data parallelism: the bubble is (p - 1) / (v m) of the
 * ideal time (Narayanan et al. 2021, section 2.2), plus the sends it
 * leaves out. */
static void test_bubble_interleaved(void)
{
    static const int ps[] = {2, 4};
    static const int vs[] = {1, 2, 4};
    static const int ms[] = {4, 8, 16};
    const char *model = "{\"layers\": 16, \"hidden\": 2048, \"heads\": 16, \"seq_len\": 2048, \"vocab\": 8}";
    for (size_t i = 0; i < G_N_ELEMENTS(ps); i++)
        for (size_t k = 0; k < G_N_ELEMENTS(vs); k++)
            for (size_t j = 0; j < G_N_ELEMENTS(ms); j++) {
                int p = ps[i], v = vs[k], m = ms[j];
                char par[128];
                snprintf(par, sizeof par, "{\"dp\": 1, \"pp\": %d, \"virtual_stages\": %d}", p, v);
                char *t = scen(model, 1, m, 1, par);
                cJSON *r = run(t);
                g_free(t);
                CU_ASSERT_PTR_NOT_NULL_FATAL(r);
                double bubble = get(r, "breakdown", "pipeline_bubble"), comp = get(r, "breakdown", "compute");
                double want = (double)(p - 1) / (v * m);
                /* the formula leaves out the sends: the first micro-batch's
                 * trip through the p v chunks and back adds up to 2 p v of them */
                double send = get(coll(r, "pp_send_activation"), "time_s", NULL);
                double lo = want - 0.003, hi = want + 2 * p * v * send / comp + 0.003;
                if (!(bubble / comp >= lo && bubble / comp <= hi))
                    printf("\np %d v %d m %d: bubble / compute %.4f, expected %.4f to %.4f\n", p, v, m, bubble / comp,
                           lo, hi);
                CU_ASSERT_TRUE(bubble / comp >= lo && bubble / comp <= hi);
                CU_ASSERT_TRUE(2 * p * v * send / comp < 0.2 * want); /* and they are small here */
                cJSON_Delete(r);
            }
}

/* Stage 0 of p = 4 with v = 2 chunks and m = 8: it sends every chunk's
 * activations (v m = 16) and receives every chunk's gradients (16); chunk
 * 1 also receives its activations from the last stage and sends its
 * gradients back there (m (v - 1) = 8 each).  Activations: chunks of 16 /
 * (4 x 2) = 2 layers, 2 (p - 1) + (v - 1) p + 1 = 11 of them in flight,
 * 11/8 of the plain 1F1B's 4 stage-micro-batches (1 + (p - 1) / (p v),
 * Korthikanti et al. 2022). */
static void test_interleaved_p2p_memory(void)
{
    const char *model = "{\"layers\": 16, \"hidden\": 2048, \"heads\": 16, \"seq_len\": 2048, \"vocab\": 8}";
    cJSON *r[2];
    for (int k = 0; k < 2; k++) {
        char *t = scen(model, 1, 8, 1, k ? "{\"dp\": 1, \"pp\": 4, \"virtual_stages\": 2}" : "{\"dp\": 1, \"pp\": 4}");
        r[k] = run(t);
        g_free(t);
        CU_ASSERT_PTR_NOT_NULL_FATAL(r[k]);
    }
    CU_ASSERT_EQUAL(listed(r[1], "pp_send_activation", NULL), 16);
    CU_ASSERT_EQUAL(listed(r[1], "pp_recv_gradient", NULL), 16);
    CU_ASSERT_EQUAL(listed(r[1], "pp_recv_activation", NULL), 8);
    CU_ASSERT_EQUAL(listed(r[1], "pp_send_gradient", NULL), 8);
    CU_ASSERT_EQUAL(listed(r[0], "pp_send_activation", NULL), 8);
    CU_ASSERT_EQUAL(listed(r[0], "pp_recv_activation", NULL), 0);
    double a0 = get(r[0], "memory_per_device_bytes", "activations"), a1 = get(r[1], "memory_per_device_bytes", "activations");
    CU_ASSERT_DOUBLE_EQUAL(a1 / a0, 11.0 / 8, 1e-9);
    CU_ASSERT_EQUAL(get(r[1], "config", "virtual_stages"), 2);
    CU_ASSERT_TRUE(get(r[1], "step_time_s", NULL) < get(r[0], "step_time_s", NULL));
    for (int k = 0; k < 2; k++)
        cJSON_Delete(r[k]);
}

/* Sum of the durations of tasks named `name` on rank 0's streams, s. */
static double graph_time(const SimGraph *g, const char *name)
{
    double t = 0;
    for (size_t k = 0; k < sim_graph_num_tasks(g); k++) {
        int rs = sim_graph_task_resource(g, (int)k);
        if (rs >= 0 && !strncmp(sim_graph_resource_name(g, rs), "gpu0.", 5) &&
            !strcmp(sim_graph_task_name(g, (int)k), name))
            t += sim_time_to_s(sim_graph_task_duration(g, (int)k));
    }
    return t;
}

static char *cp_scen(int nodes, int seq, const char *par)
{
    return g_strdup_printf("{\"topology\": \"dgx-h100-cluster\", \"nodes\": %d,\n"
                           " \"model\": {\"layers\": 4, \"hidden\": 4096, \"heads\": 32, \"seq_len\": %d, \"vocab\": 32000,"
                           " \"gated_mlp\": true, \"ffn\": 11008, \"bias\": false, \"dropout\": false},\n"
                           " \"global_batch\": 4, \"micro_batch\": 1, \"precision\": \"bf16\", \"optimizer\": \"adam\",\n"
                           " \"parallelism\": %s}\n",
                           nodes, seq, par);
}

/* Ring attention, cp 4 x tp 2 on one DGX H100 node, dp 1: a KV block is
 * s / cp tokens x 2 (K, V) x 4096 / tp x 2 bytes = 32768 / 4 x 2 x 2048 x
 * 2 = 67,108,864 B; each layer's forward passes cp - 1 = 3 of them, the
 * backward 3 KV and 3 dKV: 4 layers x 4 micro-batches x (3 + 3) KV sends.
 * Activations are 1/cp of cp 1's; gradients are reduced over dp x cp = 4
 * ranks.  Per layer the ring costs what its sends take beyond the step
 * kernels they overlap (t_f, t_b: one step's fused attention kernel, the
 * device's s / cp queries against an s / cp block, causal-balanced, from
 * the accelerator model), the forward (cp - 1) max(0, t_send - t_f), the
 * backward, whose first step sends KV only and last dKV only,
 * 2 max(0, t_send - t_b) + (cp - 2) max(0, 2 t_send - t_b); and Transformer
 * Engine's memory-bound passes: the KV block packed (read, write), the
 * partial outputs merged (a copy, then cp - 1 of read, read, write), in the
 * backward dQ and dKV summed the same way. */
static void test_cp_ring(void)
{
    static const int seqs[] = {32768, 2048};
    for (int q = 0; q < 2; q++) {
        int seq = seqs[q];
        char *t1 = cp_scen(1, seq, "{\"dp\": 1, \"tp\": 2}");
        char *t4 = cp_scen(1, seq, "{\"dp\": 1, \"tp\": 2, \"cp\": 4}");
        cJSON *r1 = run(t1);
        SimGraph *g = NULL;
        cJSON *r4 = run_graph(t4, &g);
        g_free(t1);
        g_free(t4);
        CU_ASSERT_PTR_NOT_NULL_FATAL(r1);
        CU_ASSERT_PTR_NOT_NULL_FATAL(r4);
        const cJSON *kv = coll(r4, "cp_send_kv");
        CU_ASSERT_PTR_NOT_NULL_FATAL(kv);
        CU_ASSERT_DOUBLE_EQUAL(get(kv, "bytes", NULL), (double)seq / 4 * 2 * 2048 * 2, 0.5);
        CU_ASSERT_EQUAL(get(kv, "count_per_step", NULL), 4 * 4 * 6);
        CU_ASSERT_EQUAL(listed(r4, "cp_send_dkv", NULL), 4 * 4 * 3);
        CU_ASSERT_EQUAL(listed(r4, "cp_recv_kv", NULL), 4 * 4 * 6);
        CU_ASSERT_DOUBLE_EQUAL(get(r4, "memory_per_device_bytes", "activations"),
                               get(r1, "memory_per_device_bytes", "activations") / 4, 1);
        CU_ASSERT_EQUAL(get(coll(r4, "grad_allreduce"), "group_size", NULL), 4);
        CU_ASSERT_EQUAL(get(r4, "config", "cp"), 4);
        CU_ASSERT_EQUAL(get(r4, "config", "dp"), 1);
        CU_ASSERT_EQUAL(get(r4, "config", "devices"), 8);
        /* the exposed part, by hand */
        GError *err = NULL;
        Accel *acc = accel_load("h100-sxm", &err);
        CU_ASSERT_PTR_NOT_NULL_FATAL(acc);
        double d = 128, sq = seq / 4.0, heads = 32 / 2;
        /* one ring step's fused kernel (h100-sxm's default attention), causal */
        double f = accel_attention_time(acc, ACCEL_BF16, heads, sq, d, true, false);
        double b = accel_attention_time(acc, ACCEL_BF16, heads, sq, d, true, true);
        double send = get(kv, "time_s", NULL);
        double out = sq * 4096 / 2 * 2, blk = get(kv, "bytes", NULL), merges = 2 + 3 * 3;
        double hide_f = 3 * fmax(0, send - f), hide_b = 2 * fmax(0, send - b) + 2 * fmax(0, 2 * send - b);
        double fwd = hide_f + accel_mem_time(acc, 2 * blk + merges * out);
        double bwd = hide_b + accel_mem_time(acc, 2 * blk + merges * (out + blk));
        CU_ASSERT_DOUBLE_EQUAL(graph_time(g, "cp_forward"), 4 * 4 * fwd, 1e-9 + 1e-6 * 4 * 4 * fwd);
        CU_ASSERT_DOUBLE_EQUAL(graph_time(g, "cp_backward"), 4 * 4 * bwd, 1e-9 + 1e-6 * 4 * 4 * bwd);
        if (seq == 32768) /* long sequences hide the sends entirely */
            CU_ASSERT_EQUAL(hide_f + hide_b, 0);
        if (seq == 2048) /* short ones do not */
            CU_ASSERT_TRUE(hide_f > 0);
        CU_ASSERT_TRUE(graph_time(g, "cp_forward") > 0); /* the merges always cost */
        accel_free(acc);
        cJSON_Delete(r1);
        cJSON_Delete(r4);
        sim_graph_free(g);
    }
}

static char *gpt_scen(int nodes, int gb, const char *par)
{
    return g_strdup_printf("{\"topology\": \"dgx-a100-cluster\", \"nodes\": %d, \"model\": \"gpt3-1.3b\",\n"
                           " \"global_batch\": %d, \"micro_batch\": 1, \"precision\": \"bf16\", \"optimizer\": \"adam\",\n"
                           " \"parallelism\": %s}\n",
                           nodes, gb, par);
}

/* FSDP hybrid sharding on 4 DGX A100 nodes (dp 32), shards of 8 (a node):
 * every model state is 1/8 of the model's (2 + 2 + 12 bytes per
 * parameter), the gathers and reduce-scatters stay in the 8 ranks and each
 * layer's reduced shard is all-reduced across the 4 replicas: 24 layers +
 * the embeddings' once per micro-batch (2 micro-batches). */
static void test_hybrid_shard(void)
{
    char *t = gpt_scen(4, 64, "{\"zero_stage\": 3, \"shard_group\": 8}");
    cJSON *r = run(t);
    g_free(t);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    double P = get(r, "config", "params");
    CU_ASSERT_DOUBLE_EQUAL(get(r, "memory_per_device_bytes", "weights"), 2 * P / 8, 1);
    CU_ASSERT_DOUBLE_EQUAL(get(r, "memory_per_device_bytes", "optimizer_state"), 12 * P / 8, 1);
    CU_ASSERT_EQUAL(get(coll(r, "zero3_allgather"), "group_size", NULL), 8);
    CU_ASSERT_EQUAL(get(coll(r, "zero3_reducescatter"), "group_size", NULL), 8);
    const cJSON *ar = coll(r, "hybrid_allreduce");
    CU_ASSERT_PTR_NOT_NULL_FATAL(ar);
    CU_ASSERT_EQUAL(get(ar, "group_size", NULL), 4);
    CU_ASSERT_EQUAL(listed(r, "hybrid_allreduce", NULL), 24 * 2 + 1);
    CU_ASSERT_EQUAL(get(r, "config", "shard_group"), 8);
    cJSON_Delete(r);
    /* shards of all 32: plain ZeRO-3, 4x less state, no replica all-reduce */
    t = gpt_scen(4, 64, "{\"zero_stage\": 3}");
    r = run(t);
    g_free(t);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    CU_ASSERT_DOUBLE_EQUAL(get(r, "memory_per_device_bytes", "weights"), 2 * get(r, "config", "params") / 32, 1);
    CU_ASSERT_PTR_NULL(coll(r, "hybrid_allreduce"));
    cJSON_Delete(r);
}

/* The total bytes a step moves in the listed collectives named `name`. */
static double listed_bytes(const cJSON *r, const char *name)
{
    double b = 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(r, "collectives"))
        if (!strcmp(cJSON_GetObjectItem(c, "name")->valuestring, name))
            b += get(c, "bytes", NULL) * get(c, "count_per_step", NULL);
    return b;
}

/* ZeRO-3 gathers the parameters outside the layers (FSDP's root unit:
 * embeddings, final norm, output layer) before each micro-batch's forward,
 * as it reduce-scatters their gradients (review 9: never gathered before);
 * at 16 bits in FP8 too (Transformer Engine's and torchao's FP8 is the
 * linear layers'), as the sharded update's gather of them. */
static void test_zero3_head_gather(void)
{
    char *t = gpt_scen(2, 64, "{\"zero_stage\": 3}");
    SimGraph *g = NULL;
    cJSON *r = run_graph(t, &g);
    g_free(t);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    double mbs = get(r, "config", "micro_batches"), head = listed_bytes(r, "zero3_head_allgather");
    /* gpt3-1.3b: 50257 x 2048 word and 2048 x 2048 position embeddings, the final norm; bf16 */
    double params = 50257.0 * 2048 + 2048.0 * 2048 + 2 * 2048;
    CU_ASSERT_DOUBLE_EQUAL(head, mbs * 2 * params, 1e-6 * head);
    CU_ASSERT_EQUAL(graph_count(g, "zero3_head_allgather"), listed(r, "zero3_head_allgather", NULL));
    double layers = listed_bytes(r, "zero3_allgather");
    cJSON_Delete(r);
    sim_graph_free(g);
    t = g_strdup_printf("{\"topology\": \"dgx-h100-cluster\", \"nodes\": 2, \"model\": \"gpt3-1.3b\", "
                        "\"global_batch\": 64, \"micro_batch\": 1, \"optimizer\": \"adam\", \"precision\": \"%s\", "
                        "\"parallelism\": {\"zero_stage\": %d}}", "fp8", 3);
    r = run(t);
    g_free(t);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    CU_ASSERT_DOUBLE_EQUAL(listed_bytes(r, "zero3_head_allgather"), head, 1e-6 * head); /* 16-bit in FP8 */
    CU_ASSERT_DOUBLE_EQUAL(listed_bytes(r, "zero3_allgather"), layers / 2, 1e-6 * layers); /* the linears FP8 */
    cJSON_Delete(r);
    /* the sharded update (ZeRO-1) gathers them once a step, 16-bit in FP8 too */
    t = g_strdup_printf("{\"topology\": \"dgx-h100-cluster\", \"nodes\": 2, \"model\": \"gpt3-1.3b\", "
                        "\"global_batch\": 64, \"micro_batch\": 1, \"optimizer\": \"adam\", \"precision\": \"fp8\", "
                        "\"parallelism\": {\"zero_stage\": 1}}");
    r = run(t);
    g_free(t);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    CU_ASSERT_PTR_NULL(coll(r, "zero3_head_allgather"));
    printf("\nZeRO-3 head gather %.1f MB a micro-batch, %g micro-batches\n", head / mbs / 1e6, mbs);
    cJSON_Delete(r);
}

/* ZeRO-Offload with ZeRO-2 on one DGX A100 (dp 8): no optimizer state in
 * HBM, 12 bytes per parameter / 8 in host memory; each device's 1/8 of the
 * bf16 gradients goes down PCIe and its 1/8 of the bf16 weights comes up,
 * 25 GB/s by default: 2 P / 8 / 25e9 s each way.  The host's update takes
 * half as long with twice the host-memory bandwidth. */
static void test_offload(void)
{
    double opt[2];
    for (int k = 0; k < 2; k++) {
        char *t = gpt_scen(1, 16, k ? "{\"zero_stage\": 2, \"offload_optimizer\": true, \"host_memory_bandwidth\": 500e9}"
                                    : "{\"zero_stage\": 2, \"offload_optimizer\": true}");
        SimGraph *g = NULL;
        cJSON *r = run_graph(t, &g);
        g_free(t);
        CU_ASSERT_PTR_NOT_NULL_FATAL(r);
        double P = get(r, "config", "params");
        CU_ASSERT_EQUAL(get(r, "memory_per_device_bytes", "optimizer_state"), 0);
        CU_ASSERT_DOUBLE_EQUAL(get(r, "memory_per_device_bytes", "host_optimizer_state"), 12 * P / 8, 1);
        CU_ASSERT_DOUBLE_EQUAL(graph_time(g, "offload_gradients"), 2 * P / 8 / 25e9, 1e-6);
        CU_ASSERT_DOUBLE_EQUAL(graph_time(g, "upload_weights"), 2 * P / 8 / 25e9, 1e-6);
        opt[k] = graph_time(g, "host_optimizer");
        CU_ASSERT_EQUAL(graph_count(g, "optimizer"), 0);
        cJSON_Delete(r);
        sim_graph_free(g);
    }
    CU_ASSERT_DOUBLE_EQUAL(opt[1], opt[0] / 2, 1e-9 * opt[0] + 1e-11 * 64);
}

static cJSON *resnet(int hosts, int per_replica, const char *opt, const char *par)
{
    char *t = g_strdup_printf("{\"topology\": \"tpu-v3-pod\", \"nodes\": %d, \"model\": \"resnet50\",\n"
                              " \"global_batch\": %d, \"micro_batch\": %d, \"precision\": \"bf16\", \"optimizer\": \"%s\",\n"
                              " \"parallelism\": %s}\n",
                              hosts, hosts * 4 * per_replica, per_replica, opt, par);
    cJSON *r = run(t);
    g_free(t);
    return r;
}

/* ResNet-50 runs as a data-parallel step on a TPU v3 torus (16 hosts, 64
 * chips, an 8 x 8 torus): its 25,557,032 parameters (torchvision's card),
 * 3 x its forward FLOPs per sample, and a sharded update that moves 1/64
 * of the replicated update's bytes and holds 1/64 of its optimizer state
 * (momentum and fp32 master weights, 8 bytes per parameter). */
static void test_resnet_step(void)
{
    /* the update's bytes alone: not slowed by the collectives it overlaps */
    cJSON *r = resnet(16, 32, "sgd_momentum",
                      "{\"weight_update\": [\"replicated\", \"sharded\"], \"comm_interference\": false}");
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    const cJSON *v = cJSON_GetObjectItem(r, "variants");
    const cJSON *rep = cJSON_GetArrayItem(v, 0), *sh = cJSON_GetArrayItem(v, 1);
    CU_ASSERT_DOUBLE_EQUAL(get(rep, "config", "params"), 25557032, 0.5);
    CU_ASSERT_DOUBLE_EQUAL(get(rep, "memory_per_device_bytes", "optimizer_state"), 8 * 25557032.0, 1);
    CU_ASSERT_DOUBLE_EQUAL(get(sh, "memory_per_device_bytes", "optimizer_state"), 8 * 25557032.0 / 64, 1);
    double o_rep = get(rep, "breakdown", "optimizer"), o_sh = get(sh, "breakdown", "optimizer");
    CU_ASSERT_TRUE(o_rep > 0);
    CU_ASSERT_DOUBLE_EQUAL(o_sh, o_rep / 64, 1e-6 * o_rep + 2e-12 * 64);
    /* a ResNet-50 forward is 4.09 G multiply-accumulates (the card's "GFLOPS"), pooling left out */
    CU_ASSERT_DOUBLE_EQUAL(get(rep, "model_flops_per_step", NULL) / (3 * 2 * 64 * 32.0) / 1e9, 4.09, 0.05);
    CU_ASSERT_EQUAL(get(rep, "config", "dp"), 64);
    CU_ASSERT_TRUE(get(rep, "step_time_s", NULL) > get(rep, "breakdown", "compute"));
    cJSON_Delete(r);
}

/* Xu et al. 2020 ("Automatic Cross-Replica Sharding of Weight Update in
 * Data-Parallel Training"), qualitatively: on a TPU v3 torus the sharded
 * weight update's gain over the replicated one grows as the per-replica
 * batch shrinks (the update's cost is per replica and fixed, the compute
 * shrinks with the batch): a speedup that falls with the batch, well
 * above 1 at 2 images per replica, close to 1 at 128. */
static void test_xu_sharding_gain_trend(void)
{
    static const int batches[] = {2, 4, 8, 16, 32, 64, 128};
    double prev = INFINITY;
    printf("\n");
    for (size_t i = 0; i < G_N_ELEMENTS(batches); i++) {
        cJSON *r = resnet(16, batches[i], "sgd_momentum", "{\"weight_update\": [\"replicated\", \"sharded\"]}");
        CU_ASSERT_PTR_NOT_NULL_FATAL(r);
        double sp = get(r, "comparison", "speedup");
        printf("    per-replica batch %3d: replicated %.3f ms, sharded %.3f ms, speedup %.3f\n", batches[i],
               1e3 * get(cJSON_GetArrayItem(cJSON_GetObjectItem(r, "variants"), 0), "step_time_s", NULL),
               1e3 * get(cJSON_GetArrayItem(cJSON_GetObjectItem(r, "variants"), 1), "step_time_s", NULL), sp);
        CU_ASSERT_TRUE(sp < prev);
        if (i == 0)
            CU_ASSERT_TRUE(sp > 1.15);
        if (batches[i] == 128)
            CU_ASSERT_TRUE(sp > 1 && sp < 1.03);
        prev = sp;
        cJSON_Delete(r);
    }
}

static const TestCase tests[] = {
    {"listing_gpt3_175b", test_listing_gpt3_175b},
    {"listing_matches_graph", test_listing_matches_graph},
    {"moe_memory", test_moe_memory},
    {"moe_alltoall", test_moe_alltoall},
    {"moe_capacity_and_ep", test_moe_capacity_and_ep},
    {"bubble_interleaved", test_bubble_interleaved},
    {"interleaved_p2p_memory", test_interleaved_p2p_memory},
    {"cp_ring", test_cp_ring},
    {"hybrid_shard", test_hybrid_shard},
    {"offload", test_offload},
    {"resnet_step", test_resnet_step},
    {"xu_sharding_gain_trend", test_xu_sharding_gain_trend},
    {"ZeRO-3 gathers the parameters outside the layers, 16-bit in FP8 (review 9)", test_zero3_head_gather},
};

TEST_MAIN("step_par", tests)
