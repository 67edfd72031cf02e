/* The timeline of a simulated step, written and parsed back with cJSON: its
 * memory counters peak where the memory model says (the reported stage's
 * device, at the reported total), every pipeline send has its arrow to the
 * receiving stage, and events carry their layer, micro-batch and bytes. */
#include "step.h"
#include "test_main.h"
#include "timeline.h"

#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

static const cJSON *item(const cJSON *o, const char *k) { return cJSON_GetObjectItemCaseSensitive(o, k); }
static double num(const cJSON *o, const char *k) { return item(o, k) ? item(o, k)->valuedouble : NAN; }
static const char *str(const cJSON *o, const char *k)
{
    return cJSON_IsString(item(o, k)) ? item(o, k)->valuestring : "";
}

/* The step of `sc`'s first variant: its result and its timeline, written to
 * a file and parsed back. */
static cJSON *run_and_read(StepScenario *sc, cJSON **result)
{
    SimGraph *g = NULL;
    GError *err = NULL;
    *result = step_scenario_run(sc, 0, &g, &err);
    CU_ASSERT_PTR_NULL(err);
    if (!*result || !g) {
        g_clear_error(&err);
        sim_graph_free(g);
        return NULL;
    }
    char *dir = g_dir_make_tmp("shardsim-test-tlstep-XXXXXX", NULL);
    char *path = g_build_filename(dir, "t.json", NULL);
    CU_ASSERT_TRUE(timeline_write(g, path, NULL, &err));
    sim_graph_free(g);
    char *text = NULL;
    CU_ASSERT_TRUE(g_file_get_contents(path, &text, NULL, NULL));
    cJSON *root = cJSON_Parse(text ? text : "");
    g_free(text);
    g_unlink(path);
    g_rmdir(dir);
    g_free(path);
    g_free(dir);
    return root;
}

typedef struct {
    int pid, tid;
    double ts, dur;
    const char *name;
} Slice;

/* The slice on (pid, tid) that holds time ts, or NULL; `tracks` maps
 * pid << 20 | tid to that track's slices. */
static const Slice *slice_at(GHashTable *tracks, int pid, int tid, double ts)
{
    const GArray *slices = g_hash_table_lookup(tracks, GINT_TO_POINTER(pid << 20 | tid));
    for (guint i = 0; slices && i < slices->len; i++) {
        const Slice *s = &g_array_index(slices, Slice, i);
        if (ts >= s->ts - 1e-9 && ts <= s->ts + s->dur + 1e-9)
            return s;
    }
    return NULL;
}

static void check_step(const char *what, StepScenario *sc)
{
    cJSON *res = NULL;
    cJSON *root = run_and_read(sc, &res);
    CU_ASSERT_PTR_NOT_NULL_FATAL(root);
    const cJSON *events = item(root, "traceEvents");
    const cJSON *mem = item(res, "memory_per_device_bytes"), *cfg = item(res, "config");
    int pp = (int)num(cfg, "pp");

    GHashTable *proc = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, NULL); /* pid -> name */
    GArray *slices = g_array_new(FALSE, FALSE, sizeof(Slice));
    GHashTable *tracks = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, (GDestroyNotify)g_array_unref);
    const cJSON *ev;
    cJSON_ArrayForEach(ev, events)
    {
        const char *ph = str(ev, "ph");
        if (!strcmp(ph, "M") && !strcmp(str(ev, "name"), "process_name"))
            g_hash_table_insert(proc, GINT_TO_POINTER((int)num(ev, "pid")), (gpointer)str(item(ev, "args"), "name"));
        if (!strcmp(ph, "X")) {
            Slice s = {(int)num(ev, "pid"), (int)num(ev, "tid"), num(ev, "ts"), num(ev, "dur"), str(ev, "name")};
            g_array_append_val(slices, s);
            gpointer key = GINT_TO_POINTER(s.pid << 20 | s.tid);
            GArray *track = g_hash_table_lookup(tracks, key);
            if (!track)
                g_hash_table_insert(tracks, key, track = g_array_new(FALSE, FALSE, sizeof(Slice)));
            g_array_append_val(track, s);
        }
    }
    /* memory: one counter per stage's device; the highest peak is the
     * model's total, on the device of the stage the report names */
    GHashTable *peak = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, g_free);
    int nmarks = 0;
    cJSON_ArrayForEach(ev, events)
    {
        const char *ph = str(ev, "ph");
        const char *pname = g_hash_table_lookup(proc, GINT_TO_POINTER((int)num(ev, "pid")));
        if (!strcmp(ph, "C")) {
            CU_ASSERT_PTR_NOT_NULL_FATAL(pname);
            double v = num(item(ev, "args"), "allocated_bytes");
            CU_ASSERT_TRUE(v > 0);
            double *p = g_hash_table_lookup(peak, pname);
            if (!p) {
                p = g_new(double, 1);
                *p = v;
                g_hash_table_insert(peak, (gpointer)pname, p);
            } else if (v > *p) {
                *p = v;
            }
        }
        if (!strcmp(ph, "i") && g_str_has_prefix(str(ev, "name"), "memory peak ")) {
            double *p = g_hash_table_lookup(peak, pname);
            CU_ASSERT_TRUE(p && num(item(ev, "args"), "allocated_bytes") == *p);
            nmarks++;
        }
    }
    CU_ASSERT_EQUAL(g_hash_table_size(peak), (guint)pp);
    CU_ASSERT_EQUAL(nmarks, pp);
    double best = 0;
    const char *best_dev = NULL;
    GHashTableIter it;
    gpointer k, v;
    g_hash_table_iter_init(&it, peak);
    while (g_hash_table_iter_next(&it, &k, &v))
        if (*(double *)v > best || (*(double *)v == best && best_dev && strcmp(k, best_dev) < 0)) {
            best = *(double *)v;
            best_dev = k;
        }
    double total = num(mem, "total");
    if (fabs(best - total) > 1e-9 * total)
        fprintf(stderr, "\n%s: counter peak %.17g B on %s, memory model %.17g B\n", what, best,
                best_dev ? best_dev : "?", total);
    CU_ASSERT_DOUBLE_EQUAL(best, total, 1e-9 * total);
    /* the reported stage's device (ranks: tp fastest, then dp, then pp) */
    char *dev = g_strdup_printf("gpu%d", (int)num(mem, "stage") * (int)num(cfg, "dp") * (int)num(cfg, "tp"));
    double *at = g_hash_table_lookup(peak, dev);
    CU_ASSERT_TRUE(at && fabs(*at - total) <= 1e-9 * total);
    g_free(dev);

    /* every send has one arrow, from its slice to a slice of the next or
     * previous stage's device; and only sends have arrows */
    int nsends = 0, nstart = 0, nend = 0;
    for (guint i = 0; i < slices->len; i++)
        nsends += g_str_has_prefix(g_array_index(slices, Slice, i).name, "send_");
    GHashTable *starts = g_hash_table_new(g_direct_hash, g_direct_equal); /* id -> source pid */
    cJSON_ArrayForEach(ev, events)
    {
        const char *ph = str(ev, "ph");
        if (strcmp(ph, "s") != 0)
            continue;
        const Slice *s = slice_at(tracks, (int)num(ev, "pid"), (int)num(ev, "tid"), num(ev, "ts"));
        CU_ASSERT_TRUE(s && g_str_has_prefix(s->name, "send_") && g_str_has_prefix(s->name, str(ev, "name")));
        CU_ASSERT_FALSE(g_hash_table_contains(starts, GINT_TO_POINTER((int)num(ev, "id"))));
        g_hash_table_insert(starts, GINT_TO_POINTER((int)num(ev, "id")), GINT_TO_POINTER((int)num(ev, "pid")));
        nstart++;
    }
    cJSON_ArrayForEach(ev, events)
    {
        if (strcmp(str(ev, "ph"), "f") != 0)
            continue;
        gpointer from;
        CU_ASSERT_TRUE_FATAL(g_hash_table_lookup_extended(starts, GINT_TO_POINTER((int)num(ev, "id")), NULL, &from));
        CU_ASSERT_NOT_EQUAL(GPOINTER_TO_INT(from), (int)num(ev, "pid"));
        CU_ASSERT_STRING_EQUAL(str(ev, "bp"), "e");
        const Slice *s = slice_at(tracks, (int)num(ev, "pid"), (int)num(ev, "tid"), num(ev, "ts"));
        CU_ASSERT_TRUE(s && (g_str_has_prefix(s->name, "forward") || g_str_has_prefix(s->name, "backward") ||
                             g_str_has_prefix(s->name, "head_backward") || g_str_has_prefix(s->name, "recompute")));
        nend++;
    }
    CU_ASSERT_EQUAL(nstart, nsends);
    CU_ASSERT_EQUAL(nend, nsends);
    if (pp > 1)
        CU_ASSERT_TRUE(nsends >= 2 * (pp - 1));
    CU_ASSERT_EQUAL((int)num(item(root, "otherData"), "flow_arrows"), nsends);

    /* names: a layer's forward names its layer and micro-batch; collectives their bytes */
    bool fwd = false, bytes = false;
    for (guint i = 0; i < slices->len; i++) {
        const char *n = g_array_index(slices, Slice, i).name;
        fwd = fwd || g_str_has_prefix(n, "forward L0 mb0");
        bytes = bytes || ((strstr(n, "grad_") || strstr(n, "zero3_")) && strstr(n, "iB)"));
    }
    CU_ASSERT_TRUE(fwd);
    CU_ASSERT_TRUE(bytes || num(cfg, "dp") == 1);

    g_hash_table_destroy(starts);
    g_hash_table_destroy(peak);
    g_hash_table_destroy(proc);
    g_array_free(slices, TRUE);
    g_hash_table_destroy(tracks);
    cJSON_Delete(root);
    cJSON_Delete(res);
}

static void check_example(const char *name)
{
    char *path = g_strdup_printf("%s/examples/%s.json", SHARDSIM_SOURCE_DIR, name);
    GError *err = NULL;
    StepScenario *sc = step_scenario_load(path, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(sc);
    check_step(name, sc);
    step_scenario_free(sc);
    g_free(path);
}

static void check_text(const char *what, const char *text)
{
    GError *err = NULL;
    StepScenario *sc = step_scenario_parse(what, text, strlen(text), &err);
    if (!sc)
        fprintf(stderr, "\n%s: %s\n", what, err ? err->message : "?");
    CU_ASSERT_PTR_NOT_NULL_FATAL(sc);
    check_step(what, sc);
    step_scenario_free(sc);
}

static void test_pipeline_1f1b(void) { check_example("gpt3-175b-1024-a100"); }
static void test_pipeline_interleaved(void)
{
    check_text("interleaved.json", "{\"topology\": \"dgx-a100-cluster\", \"nodes\": 4, \"model\": \"gpt3-1.3b\","
                                   " \"global_batch\": 64, \"micro_batch\": 2, \"parallelism\": {\"dp\": 2, \"tp\": 4,"
                                   " \"pp\": 4, \"virtual_stages\": 2, \"weight_update\": \"sharded\"}}");
}
static void test_fsdp_accumulation(void) { check_example("llama2-70b-fsdp-h100"); }
static void test_default(void) { check_example("default"); }

static void test_gpipe_zero2(void)
{
    check_text("gpipe.json", "{\"topology\": \"dgx-a100-cluster\", \"nodes\": 4, \"model\": \"gpt3-1.3b\","
                             " \"global_batch\": 64, \"micro_batch\": 2, \"parallelism\": {\"dp\": 2, \"tp\": 4,"
                             " \"pp\": 4, \"schedule\": \"gpipe\", \"zero_stage\": 2}}");
}

static const TestCase tests[] = {
    {"timeline of a 1F1B pipeline", test_pipeline_1f1b},
    {"timeline of an interleaved pipeline", test_pipeline_interleaved},
    {"timeline of FSDP with gradient accumulation", test_fsdp_accumulation},
    {"timeline of the default example", test_default},
    {"timeline of GPipe with ZeRO-2", test_gpipe_zero2},
};

TEST_MAIN("timeline_step", tests)
