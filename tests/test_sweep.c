#include "sweep.h"

#include <math.h>
#include <string.h>

#include "test_main.h"

/* a small base: GPT-3 125M on 1 DGX A100 node; no dp, so the replicas fill
 * the machine (dp 8) */
static const char *base_text = "{\n"
                               "  \"topology\": \"dgx-a100-cluster\", \"nodes\": 1,\n"
                               "  \"model\": \"gpt3-125m\", \"global_batch\": 64, \"micro_batch\": 2,\n"
                               "  \"parallelism\": {\"weight_update\": \"replicated\"}\n"
                               "}\n";
/* the same with dp fixed at 8 */
static const char *fixed_dp_text = "{\n"
                                   "  \"topology\": \"dgx-a100-cluster\", \"nodes\": 1,\n"
                                   "  \"model\": \"gpt3-125m\", \"global_batch\": 64, \"micro_batch\": 2,\n"
                                   "  \"parallelism\": {\"dp\": 8, \"weight_update\": \"replicated\"}\n"
                                   "}\n";

static int numbers(const char *text, double *out, int cap)
{
    GError *err = NULL;
    cJSON *a = sweep_parse_values(text, &err);
    if (!a) {
        g_error_free(err);
        return -1;
    }
    int n = 0;
    const cJSON *v;
    cJSON_ArrayForEach(v, a)
    {
        if (n < cap)
            out[n] = cJSON_IsNumber(v) ? v->valuedouble : NAN;
        n++;
    }
    cJSON_Delete(a);
    return n;
}

static void test_geometric(void)
{
    double v[16];
    CU_ASSERT_EQUAL_FATAL(numbers("1,2,4,...,64", v, 16), 7);
    for (int i = 0; i < 7; i++)
        CU_ASSERT_EQUAL(v[i], 1 << i);
    CU_ASSERT_EQUAL_FATAL(numbers("1, 2, 4, ..., 1024", v, 16), 11);
    CU_ASSERT_EQUAL(v[10], 1024);
    /* a range, then more values and another range */
    CU_ASSERT_EQUAL_FATAL(numbers("3,9,27,...,243,1000", v, 16), 6);
    CU_ASSERT_EQUAL(v[4], 243);
    CU_ASSERT_EQUAL(v[5], 1000);
    /* descending */
    CU_ASSERT_EQUAL_FATAL(numbers("64,32,16,...,1", v, 16), 7);
    CU_ASSERT_EQUAL(v[6], 1);
}

static void test_arithmetic(void)
{
    double v[16];
    CU_ASSERT_EQUAL_FATAL(numbers("8,16,...,64", v, 16), 8);
    for (int i = 0; i < 8; i++)
        CU_ASSERT_EQUAL(v[i], 8 * (i + 1));
    /* three values that do not share a ratio: a constant step */
    CU_ASSERT_EQUAL_FATAL(numbers("1,2,3,...,6", v, 16), 6);
    CU_ASSERT_EQUAL(v[5], 6);
    CU_ASSERT_EQUAL_FATAL(numbers("0.5,1,...,2.5", v, 16), 5);
    CU_ASSERT_DOUBLE_EQUAL(v[2], 1.5, 1e-12);
    CU_ASSERT_EQUAL(v[4], 2.5);
    CU_ASSERT_EQUAL_FATAL(numbers("0.1,0.2,...,1", v, 16), 10);
    CU_ASSERT_EQUAL(v[2], 0.3); /* not 0.30000000000000004 */
    CU_ASSERT_EQUAL(v[9], 1);
    CU_ASSERT_EQUAL_FATAL(numbers("10,7,...,1", v, 16), 4);
    CU_ASSERT_EQUAL(v[3], 1);
}

static void test_bad_ranges(void)
{
    static const char *const bad[] = {
        "...,4",         /* nothing before */
        "1,...,8",       /* one value before */
        "1,2,...",       /* no end */
        "1,2,...,...",   /* end is not a number */
        "1,2,4,...,100", /* 100 is not a power of two */
        "8,16,...,60",   /* not a multiple of the step */
        "8,4,...,64",    /* moves away */
        "1,1,...,4",     /* no change */
        "1,3,4,...,10",  /* neither ratio nor step */
        "a,b,...,4",     /* not numbers */
        "",              /* empty */
        "1,,2",          /* empty value */
        "1,2,1",         /* repeated */
        "1,2,...,4,3",   /* 3 repeats */
    };
    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
        GError *err = NULL;
        cJSON *a = sweep_parse_values(bad[i], &err);
        CU_ASSERT_PTR_NULL(a);
        CU_ASSERT_PTR_NOT_NULL(err);
        if (err) {
            CU_ASSERT_EQUAL(err->code, SIM_ERROR_INPUT);
            g_error_free(err);
        } else {
            fprintf(stderr, "accepted bad range \"%s\"\n", bad[i]);
        }
        cJSON_Delete(a);
    }
}

static void test_value_types(void)
{
    GError *err = NULL;
    cJSON *a = sweep_parse_values("replicated,1.5,true,false,25MiB,0x10,-3,null", &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_EQUAL(cJSON_GetArraySize(a), 8);
    CU_ASSERT_STRING_EQUAL(cJSON_GetArrayItem(a, 0)->valuestring, "replicated");
    CU_ASSERT_DOUBLE_EQUAL(cJSON_GetArrayItem(a, 1)->valuedouble, 1.5, 0);
    CU_ASSERT_TRUE(cJSON_IsTrue(cJSON_GetArrayItem(a, 2)));
    CU_ASSERT_TRUE(cJSON_IsFalse(cJSON_GetArrayItem(a, 3)));
    CU_ASSERT_TRUE(cJSON_IsString(cJSON_GetArrayItem(a, 4)));
    CU_ASSERT_TRUE(cJSON_IsString(cJSON_GetArrayItem(a, 5)));
    CU_ASSERT_EQUAL(cJSON_GetArrayItem(a, 6)->valuedouble, -3);
    CU_ASSERT_TRUE(cJSON_IsNull(cJSON_GetArrayItem(a, 7)));
    char *t = sweep_value_text(cJSON_GetArrayItem(a, 1));
    CU_ASSERT_STRING_EQUAL(t, "1.5");
    g_free(t);
    cJSON_Delete(a);
}

static void test_set_path(void)
{
    cJSON *root = cJSON_Parse("{\"nodes\": 2, \"model\": \"gpt3-125m\", \"topology\": \"dgx-a100\", "
                              "\"parallelism\": {\"dp\": 8}}");
    GError *err = NULL;
    CU_ASSERT_TRUE(sweep_set_path(root, "nodes", cJSON_CreateNumber(4), &err));
    CU_ASSERT_EQUAL(cJSON_GetObjectItem(root, "nodes")->valuedouble, 4);
    CU_ASSERT_TRUE(sweep_set_path(root, "parallelism.dp", cJSON_CreateNumber(16), &err));
    CU_ASSERT_EQUAL(cJSON_GetObjectItem(cJSON_GetObjectItem(root, "parallelism"), "dp")->valuedouble, 16);
    CU_ASSERT_TRUE(sweep_set_path(root, "parallelism.tp", cJSON_CreateNumber(2), &err));
    CU_ASSERT_EQUAL(cJSON_GetArraySize(cJSON_GetObjectItem(root, "parallelism")), 2);
    /* objects on the way are created */
    CU_ASSERT_TRUE(sweep_set_path(root, "a.b.c", cJSON_CreateString("x"), &err));
    const cJSON *c = cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(root, "a"), "b"), "c");
    CU_ASSERT_TRUE(cJSON_IsString(c) && !strcmp(c->valuestring, "x"));
    CU_ASSERT_PTR_NULL(err);
    /* through a string: an error naming the component */
    CU_ASSERT_FALSE(sweep_set_path(root, "topology.nodes", cJSON_CreateNumber(12), &err));
    CU_ASSERT_PTR_NOT_NULL_FATAL(err);
    CU_ASSERT_PTR_NOT_NULL(strstr(err->message, "\"topology\" is not an object"));
    g_clear_error(&err);
    CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(root, "topology")->valuestring, "dgx-a100");
    /* but a model given by name becomes that preset as a base, the key one
     * of its fields */
    CU_ASSERT_TRUE(sweep_set_path(root, "model.layers", cJSON_CreateNumber(12), &err));
    const cJSON *m = cJSON_GetObjectItem(root, "model");
    CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(m, "base")->valuestring, "gpt3-125m");
    CU_ASSERT_EQUAL(cJSON_GetObjectItem(m, "layers")->valueint, 12);
    cJSON_Delete(root);
}

static Sweep *make(const char *text, const char *const *axes, bool weak)
{
    GError *err = NULL;
    Sweep *s = sweep_parse("base.json", text, &err);
    CU_ASSERT_PTR_NOT_NULL(s);
    if (!s) {
        fprintf(stderr, "%s\n", err->message);
        g_error_free(err);
        return NULL;
    }
    sweep_set_weak_scaling(s, weak);
    for (const char *const *a = axes; *a; a++)
        CU_ASSERT_TRUE(sweep_add_axis(s, *a, NULL));
    CU_ASSERT_TRUE(sweep_prepare(s, &err));
    if (err) {
        fprintf(stderr, "%s\n", err->message);
        g_error_free(err);
    }
    return s;
}

static void test_cartesian_order(void)
{
    static const char *const axes[] = {"nodes=1,2", "micro_batch=1,2,4", NULL};
    Sweep *s = make(base_text, axes, false);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    CU_ASSERT_EQUAL(sweep_num_points(s), 6);
    CU_ASSERT_EQUAL(sweep_num_axes(s), 2);
    CU_ASSERT_EQUAL(sweep_device_axis(s), 0);
    /* the last axis varies fastest */
    const double want[6][2] = {{1, 1}, {1, 2}, {1, 4}, {2, 1}, {2, 2}, {2, 4}};
    for (int i = 0; i < 6; i++) {
        CU_ASSERT_EQUAL(sweep_point_value(s, i, 0)->valuedouble, want[i][0]);
        CU_ASSERT_EQUAL(sweep_point_value(s, i, 1)->valuedouble, want[i][1]);
    }
    char *l = sweep_point_label(s, 4);
    CU_ASSERT_STRING_EQUAL(l, "nodes=2, micro_batch=2");
    g_free(l);
    /* dp follows nodes: 8 GPUs per node */
    cJSON *der = NULL;
    cJSON *sc = sweep_point_scenario(s, 5, &der, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(sc);
    CU_ASSERT_EQUAL(cJSON_GetObjectItem(cJSON_GetObjectItem(sc, "parallelism"), "dp")->valuedouble, 16);
    CU_ASSERT_EQUAL(cJSON_GetObjectItem(sc, "micro_batch")->valuedouble, 4);
    CU_ASSERT_EQUAL(cJSON_GetObjectItem(der, "parallelism.dp")->valuedouble, 16);
    CU_ASSERT_EQUAL(cJSON_GetArraySize(sweep_notes(s)), 1);
    cJSON_Delete(sc);
    cJSON_Delete(der);
    sweep_free(s);
}

static void test_dp_rules(void)
{
    /* tp 2: dp = 8 nodes x 8 / 2 */
    static const char *const a1[] = {"nodes=8", "parallelism.tp=2,3", NULL};
    Sweep *s = make(base_text, a1, false);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    cJSON *sc = sweep_point_scenario(s, 0, NULL, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(sc);
    CU_ASSERT_EQUAL(cJSON_GetObjectItem(cJSON_GetObjectItem(sc, "parallelism"), "dp")->valuedouble, 32);
    cJSON_Delete(sc);
    GError *err = NULL;
    CU_ASSERT_PTR_NULL(sweep_point_scenario(s, 1, NULL, &err)); /* 64 ranks / 3 */
    CU_ASSERT_PTR_NOT_NULL(err);
    if (err)
        CU_ASSERT_PTR_NOT_NULL(strstr(err->message, "not a multiple of tp x pp"));
    g_clear_error(&err);
    sweep_free(s);

    /* tp alone varied: the replicas still fill the base's 1 node */
    static const char *const a4[] = {"parallelism.tp=1,4", NULL};
    s = make(base_text, a4, false);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    sc = sweep_point_scenario(s, 1, NULL, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(sc);
    CU_ASSERT_EQUAL(cJSON_GetObjectItem(cJSON_GetObjectItem(sc, "parallelism"), "dp")->valuedouble, 2);
    cJSON_Delete(sc);
    CU_ASSERT_EQUAL(sweep_device_axis(s), -1);
    sweep_free(s);

    /* micro_batch alone: the same rule as "run", dp fills the 1 node */
    static const char *const a5[] = {"micro_batch=1,2", NULL};
    s = make(base_text, a5, false);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    CU_ASSERT_EQUAL(cJSON_GetArraySize(sweep_notes(s)), 1);
    cJSON *d5 = NULL;
    sc = sweep_point_scenario(s, 0, &d5, NULL);
    CU_ASSERT_EQUAL(cJSON_GetArraySize(d5), 1);
    CU_ASSERT_EQUAL(cJSON_GetObjectItem(d5, "parallelism.dp")->valuedouble, 8);
    cJSON_Delete(d5);
    cJSON_Delete(sc);
    sweep_free(s);

    /* a dp the base fixes stays, as in "run", and a note says so */
    static const char *const a6[] = {"nodes=1,2", NULL};
    s = make(fixed_dp_text, a6, false);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    CU_ASSERT_EQUAL_FATAL(cJSON_GetArraySize(sweep_notes(s)), 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(cJSON_GetArrayItem(sweep_notes(s), 0)->valuestring, "is given by the scenario"));
    cJSON *d6 = NULL;
    sc = sweep_point_scenario(s, 1, &d6, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(sc);
    CU_ASSERT_EQUAL(cJSON_GetObjectItem(cJSON_GetObjectItem(sc, "parallelism"), "dp")->valuedouble, 8);
    CU_ASSERT_EQUAL(cJSON_GetArraySize(d6), 0);
    cJSON_Delete(d6);
    cJSON_Delete(sc);
    sweep_free(s);

    /* dp varied itself: not derived */
    static const char *const a2[] = {"nodes=2,4", "parallelism.dp=8", NULL};
    s = make(base_text, a2, false);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    sc = sweep_point_scenario(s, 1, NULL, NULL);
    CU_ASSERT_EQUAL(cJSON_GetObjectItem(cJSON_GetObjectItem(sc, "parallelism"), "dp")->valuedouble, 8);
    cJSON_Delete(sc);
    CU_ASSERT_EQUAL(sweep_device_axis(s), 0);
    sweep_free(s);

    /* weak scaling: 64 / 8 = 8 samples per replica */
    static const char *const a3[] = {"nodes=1,2,4", NULL};
    s = make(base_text, a3, true);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    sc = sweep_point_scenario(s, 2, NULL, NULL);
    CU_ASSERT_EQUAL(cJSON_GetObjectItem(sc, "global_batch")->valuedouble, 8 * 32);
    cJSON_Delete(sc);
    sweep_free(s);
}

static void test_bad_axes(void)
{
    GError *err = NULL;
    Sweep *s = sweep_parse("base.json", base_text, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    static const char *const bad[] = {"nodes", "=1,2", "a..b=1", ".a=1", "nodes=1,2,...,x", "micro_batch=", NULL};
    for (const char *const *b = bad; *b; b++) {
        CU_ASSERT_FALSE(sweep_add_axis(s, *b, &err));
        CU_ASSERT_PTR_NOT_NULL(err);
        g_clear_error(&err);
    }
    CU_ASSERT_TRUE(sweep_add_axis(s, "nodes=1,2", &err));
    CU_ASSERT_FALSE(sweep_add_axis(s, "nodes=4", &err));
    CU_ASSERT_PTR_NOT_NULL(err);
    if (err)
        CU_ASSERT_PTR_NOT_NULL(strstr(err->message, "twice"));
    g_clear_error(&err);
    /* a path through a string fails before anything runs */
    CU_ASSERT_TRUE(sweep_add_axis(s, "topology.nodes=2,4", &err));
    CU_ASSERT_FALSE(sweep_prepare(s, &err));
    CU_ASSERT_PTR_NOT_NULL(err);
    if (err)
        CU_ASSERT_PTR_NOT_NULL(strstr(err->message, "--vary topology.nodes"));
    g_clear_error(&err);
    sweep_free(s);

    /* a bad base scenario names its file and line */
    CU_ASSERT_PTR_NULL(sweep_parse("b.json", "{\"topology\": \"dgx-a100-cluster\",\n \"modle\": 1}", &err));
    CU_ASSERT_PTR_NOT_NULL(err);
    if (err)
        CU_ASSERT_TRUE(g_str_has_prefix(err->message, "b.json:"));
    g_clear_error(&err);
}

static char *run_text(const Sweep *s, int jobs)
{
    cJSON *r = sweep_run(s, jobs, NULL, NULL);
    char *t = cJSON_Print(r);
    cJSON_Delete(r);
    return t;
}

static void test_run(void)
{
    /* the list of weight updates becomes the last axis */
    const char *text = "{\"topology\": \"dgx-a100-cluster\", \"nodes\": 1, \"model\": \"gpt3-125m\",\n"
                       " \"global_batch\": 64, \"micro_batch\": 4, \"parallelism\": {\"weight_update\": "
                       "[\"replicated\", \"sharded\"]}}";
    static const char *const axes[] = {"nodes=1,2,4", NULL};
    Sweep *s = make(text, axes, false);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    CU_ASSERT_EQUAL(sweep_num_axes(s), 2);
    CU_ASSERT_STRING_EQUAL(sweep_axis_key(s, 1), "parallelism.weight_update");
    CU_ASSERT_EQUAL(sweep_num_points(s), 6);
    cJSON *r = sweep_run(s, 3, NULL, NULL);
    CU_ASSERT_EQUAL(cJSON_GetObjectItem(r, "ran")->valuedouble, 4);
    CU_ASSERT_EQUAL(cJSON_GetObjectItem(r, "failed")->valuedouble, 2);
    const cJSON *pts = cJSON_GetObjectItem(r, "points");
    CU_ASSERT_EQUAL_FATAL(cJSON_GetArraySize(pts), 6);
    for (int i = 0; i < 6; i++) {
        const cJSON *p = cJSON_GetArrayItem(pts, i);
        CU_ASSERT_EQUAL(cJSON_GetObjectItem(p, "index")->valuedouble, i);
        const cJSON *res = cJSON_GetObjectItem(p, "result");
        const cJSON *e = cJSON_GetObjectItem(p, "error");
        if (i < 4) {
            CU_ASSERT_PTR_NOT_NULL_FATAL(res);
            const cJSON *cfg = cJSON_GetObjectItem(res, "config");
            CU_ASSERT_EQUAL(cJSON_GetObjectItem(cfg, "devices")->valuedouble, 8 << (i / 2));
            CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(cfg, "weight_update")->valuestring,
                                   i % 2 ? "sharded" : "replicated");
            CU_ASSERT_PTR_NULL(cJSON_GetObjectItem(res, "variants"));
        } else {
            /* 4 nodes: dp 32 x micro_batch 4 does not divide 64 */
            CU_ASSERT_PTR_NOT_NULL_FATAL(e);
            CU_ASSERT_PTR_NOT_NULL(strstr(e->valuestring, "global_batch"));
            CU_ASSERT_FALSE(g_str_has_prefix(e->valuestring, "base.json"));
        }
    }
    /* more devices: shorter steps; sharding: less memory */
    const cJSON *r0 = cJSON_GetObjectItem(cJSON_GetArrayItem(pts, 0), "result");
    const cJSON *r1 = cJSON_GetObjectItem(cJSON_GetArrayItem(pts, 1), "result");
    const cJSON *r2 = cJSON_GetObjectItem(cJSON_GetArrayItem(pts, 2), "result");
    CU_ASSERT(cJSON_GetObjectItem(r2, "step_time_s")->valuedouble < cJSON_GetObjectItem(r0, "step_time_s")->valuedouble);
    CU_ASSERT(cJSON_GetObjectItem(cJSON_GetObjectItem(r1, "memory_per_device_bytes"), "total")->valuedouble <
              cJSON_GetObjectItem(cJSON_GetObjectItem(r0, "memory_per_device_bytes"), "total")->valuedouble);

    /* curves: one per weight update, x = devices, efficiency 1 at the first */
    int nc = 0;
    SweepCurve *cv = sweep_curves(s, r, &nc);
    CU_ASSERT_EQUAL_FATAL(nc, 2);
    CU_ASSERT_STRING_EQUAL(cv[0].label, "weight_update=replicated");
    CU_ASSERT_STRING_EQUAL(cv[1].label, "weight_update=sharded");
    for (int c = 0; c < 2; c++) {
        CU_ASSERT_EQUAL_FATAL(cv[c].n, 2);
        CU_ASSERT_EQUAL(cv[c].devices[0], 8);
        CU_ASSERT_EQUAL(cv[c].devices[1], 16);
        CU_ASSERT_DOUBLE_EQUAL(cv[c].efficiency[0], 1, 1e-12);
        const cJSON *rr = cJSON_GetObjectItem(cJSON_GetArrayItem(pts, 2 + c), "result");
        double thr = cJSON_GetObjectItem(rr, "samples_per_s")->valuedouble;
        CU_ASSERT_DOUBLE_EQUAL(cv[c].throughput[1], thr, 0);
        CU_ASSERT_DOUBLE_EQUAL(cv[c].efficiency[1], thr / 16 / (cv[c].throughput[0] / 8), 1e-12);
        CU_ASSERT(cv[c].efficiency[1] > 0.5 && cv[c].efficiency[1] <= 1.0 + 1e-9);
    }
    sweep_curves_free(cv, nc);
    cJSON_Delete(r);

    /* same grid, any number of threads: the same bytes */
    char *t1 = run_text(s, 1), *t4 = run_text(s, 4);
    CU_ASSERT_STRING_EQUAL(t1, t4);
    cJSON_free(t1);
    cJSON_free(t4);
    sweep_free(s);
}

static void test_unknown_key(void)
{
    static const char *const axes[] = {"parallelism.dpp=1,2", NULL};
    Sweep *s = make(base_text, axes, false);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    cJSON *r = sweep_run(s, 2, NULL, NULL);
    CU_ASSERT_EQUAL(cJSON_GetObjectItem(r, "ran")->valuedouble, 0);
    const cJSON *p;
    cJSON_ArrayForEach(p, cJSON_GetObjectItem(r, "points"))
    {
        const cJSON *e = cJSON_GetObjectItem(p, "error");
        CU_ASSERT_PTR_NOT_NULL_FATAL(e);
        CU_ASSERT_PTR_NOT_NULL(strstr(e->valuestring, "dpp"));
        CU_ASSERT_FALSE(g_str_has_prefix(e->valuestring, "base.json"));
    }
    cJSON_Delete(r);
    sweep_free(s);
}

static const TestCase tests[] = {
    {"geometric ranges", test_geometric},
    {"arithmetic ranges", test_arithmetic},
    {"bad ranges", test_bad_ranges},
    {"value types", test_value_types},
    {"dotted paths", test_set_path},
    {"cartesian order", test_cartesian_order},
    {"dp rules", test_dp_rules},
    {"bad axes", test_bad_axes},
    {"run", test_run},
    {"unknown key", test_unknown_key},
};

TEST_MAIN("sweep", tests)
