/* The step's parallelism against hand-computed answers: the collectives
 * listed agree with the graph that ran (counted both ways), and the newer
 * parallelisms' counts, bytes, bubbles and memory. */
#include "sim_exec.h"
#include "step.h"
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

static double get(const cJSON *r, const char *a, const char *b)
{
    const cJSON *o = cJSON_GetObjectItem(r, a);
    if (b)
        o = cJSON_GetObjectItem(o, b);
    return o ? o->valuedouble : NAN;
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
 * passes x 2 = 64 each. */
static void test_listing_matches_graph(void)
{
    static const char *const pars[] = {
        "{\"dp\": 4, \"tp\": 2, \"pp\": 2}",
        "{\"dp\": 4, \"tp\": 2, \"pp\": 2, \"weight_update\": \"sharded\"}",
        "{\"dp\": 4, \"tp\": 2, \"pp\": 2, \"weight_update\": \"sharded\", \"allgather_overlap\": false}",
        "{\"dp\": 4, \"tp\": 2, \"pp\": 2, \"zero_stage\": 2}",
        "{\"dp\": 4, \"tp\": 2, \"pp\": 2, \"zero_stage\": 3}",
        "{\"dp\": 4, \"tp\": 2, \"pp\": 2, \"sequence_parallel\": true}",
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
        if (i == 4) /* ZeRO-3: every layer gathered in each forward and backward */
            CU_ASSERT_EQUAL(listed(r, "zero3_allgather", NULL), 4 * 4 * 2);
        if (i == 5) {
            CU_ASSERT_EQUAL(listed(r, "tp_allgather", NULL), 64);
            CU_ASSERT_EQUAL(listed(r, "tp_reducescatter", NULL), 64);
            CU_ASSERT_EQUAL(listed(r, "tp_allreduce", NULL), 0);
        } else {
            CU_ASSERT_EQUAL(listed(r, "tp_allreduce", NULL), 64);
        }
        cJSON_Delete(r);
        sim_graph_free(g);
    }
}

static const TestCase tests[] = {
    {"listing_gpt3_175b", test_listing_gpt3_175b},
    {"listing_matches_graph", test_listing_matches_graph},
};

TEST_MAIN("step_par", tests)
