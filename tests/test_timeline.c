#include "timeline.h"
#include "test_main.h"

#include <glib/gstdio.h>
#include <string.h>

#define US(x) ((sim_time_t)(x) * 1000000ULL)

typedef struct {
    SimGraph *g;
    SimEngine *e;
    SimNet *net;
    int fwd0, bwd0, ar0, fwd1, host, f1, f2, f3, p2p;
} Fixture;

/* Two devices with compute and comm streams, a resource without a dot, and
 * resource-less flows: f1 and f2 share one 1 GB/s link (so they overlap),
 * f3 follows f1 in the same category, p2p is another category. */
static void build(Fixture *f)
{
    f->g = sim_graph_new();
    f->e = sim_engine_new();
    f->net = sim_net_new(f->e);
    int l = sim_net_add_link(f->net, 1e9, 0);
    SimGraph *g = f->g;
    int c0 = sim_graph_resource(g, "gpu0.compute"), m0 = sim_graph_resource(g, "gpu0.comm");
    int c1 = sim_graph_resource(g, "gpu1.compute");
    int h = sim_graph_resource(g, "host");
    f->fwd0 = sim_graph_task(g, "fwd", c0, US(10));
    f->bwd0 = sim_graph_task(g, "bwd", c0, US(20));
    f->ar0 = sim_graph_task(g, "allreduce grads", m0, US(5));
    f->fwd1 = sim_graph_task(g, "fwd", c1, US(12));
    f->host = sim_graph_task(g, "load \"batch\"", h, US(3));
    sim_graph_task_set_info(g, f->ar0, "allreduce", 4e6);
    sim_graph_task_set_info(g, f->fwd0, "compute", 0);
    sim_graph_depend(g, f->fwd0, f->bwd0);
    sim_graph_depend(g, f->bwd0, f->ar0);
    sim_graph_depend(g, f->host, f->fwd1);
    f->f1 = sim_graph_flow_task(g, "chunk 0", SIM_NO_RESOURCE, 1e6, &l, 1);
    f->f2 = sim_graph_flow_task(g, "chunk 1", SIM_NO_RESOURCE, 1e6, &l, 1);
    f->f3 = sim_graph_flow_task(g, "chunk 2", SIM_NO_RESOURCE, 5e5, &l, 1);
    f->p2p = sim_graph_flow_task(g, "send", SIM_NO_RESOURCE, 1e3, &l, 1);
    sim_graph_task_set_info(g, f->f1, "allreduce", 1e6);
    sim_graph_task_set_info(g, f->f2, "allreduce", 1e6);
    sim_graph_task_set_info(g, f->f3, "allreduce", 5e5);
    sim_graph_task_set_info(g, f->p2p, "p2p", 1e3);
    sim_graph_depend(g, f->bwd0, f->f1);
    sim_graph_depend(g, f->bwd0, f->f2);
    sim_graph_depend(g, f->f1, f->f3);
    sim_graph_depend(g, f->f3, f->p2p);
    CU_ASSERT_NOT_EQUAL(sim_graph_run(g, f->e, f->net), SIM_TIME_NEVER);
}

static void destroy(Fixture *f)
{
    sim_net_free(f->net);
    sim_graph_free(f->g);
    sim_engine_free(f->e);
}

/* Name of process pid / thread (pid, tid) from the metadata events. */
static const char *meta_name(const cJSON *events, const char *what, int pid, int tid)
{
    const cJSON *ev;
    cJSON_ArrayForEach(ev, events)
    {
        const cJSON *ph = cJSON_GetObjectItem(ev, "ph"), *name = cJSON_GetObjectItem(ev, "name");
        if (!cJSON_IsString(ph) || strcmp(ph->valuestring, "M") != 0 || strcmp(name->valuestring, what) != 0)
            continue;
        if (cJSON_GetObjectItem(ev, "pid")->valueint == pid && cJSON_GetObjectItem(ev, "tid")->valueint == tid)
            return cJSON_GetObjectItem(cJSON_GetObjectItem(ev, "args"), "name")->valuestring;
    }
    return NULL;
}

static const cJSON *event_of_task(const cJSON *events, int task)
{
    const cJSON *ev;
    cJSON_ArrayForEach(ev, events)
    {
        const cJSON *args = cJSON_GetObjectItem(ev, "args");
        const cJSON *t = args ? cJSON_GetObjectItem(args, "task") : NULL;
        if (strcmp(cJSON_GetObjectItem(ev, "ph")->valuestring, "X") == 0 && t && t->valueint == task)
            return ev;
    }
    return NULL;
}

static char *read_back(const Fixture *f, const TimelineOptions *opt, cJSON **root)
{
    char *dir = g_dir_make_tmp("shardsim-test-timeline-XXXXXX", NULL);
    char *path = g_build_filename(dir, "t.json", NULL);
    GError *err = NULL;
    CU_ASSERT_TRUE(timeline_write(f->g, path, opt, &err));
    CU_ASSERT_PTR_NULL(err);
    char *text = NULL;
    CU_ASSERT_TRUE(g_file_get_contents(path, &text, NULL, NULL));
    *root = cJSON_Parse(text ? text : "");
    g_unlink(path);
    g_rmdir(dir);
    g_free(path);
    g_free(dir);
    return text;
}

static void check_task(const cJSON *events, const SimGraph *g, int task, const char *proc, const char *thread)
{
    const cJSON *ev = event_of_task(events, task);
    CU_ASSERT_PTR_NOT_NULL_FATAL(ev);
    /* the task's name, then its tags and bytes */
    CU_ASSERT_TRUE(g_str_has_prefix(cJSON_GetObjectItem(ev, "name")->valuestring, sim_graph_task_name(g, task)));
    double ts = cJSON_GetObjectItem(ev, "ts")->valuedouble, dur = cJSON_GetObjectItem(ev, "dur")->valuedouble;
    CU_ASSERT_DOUBLE_EQUAL(ts, (double)sim_graph_task_start(g, task) / 1e6, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(dur, (double)(sim_graph_task_end(g, task) - sim_graph_task_start(g, task)) / 1e6, 1e-9);
    int pid = cJSON_GetObjectItem(ev, "pid")->valueint, tid = cJSON_GetObjectItem(ev, "tid")->valueint;
    const char *pn = meta_name(events, "process_name", pid, 0);
    const char *tn = meta_name(events, "thread_name", pid, tid);
    CU_ASSERT_STRING_EQUAL(pn ? pn : "(none)", proc);
    CU_ASSERT_STRING_EQUAL(tn ? tn : "(none)", thread);
}

static void test_timeline_roundtrip(void)
{
    Fixture f;
    build(&f);
    cJSON *root = NULL;
    char *text = read_back(&f, NULL, &root);
    CU_ASSERT_PTR_NOT_NULL_FATAL(root);
    const cJSON *events = cJSON_GetObjectItem(root, "traceEvents");
    CU_ASSERT_TRUE_FATAL(cJSON_IsArray(events));

    /* known times: fwd 0-10 us, bwd 10-30 us, allreduce 30-35 us on the comm stream */
    const cJSON *bwd = event_of_task(events, f.bwd0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(bwd);
    CU_ASSERT_DOUBLE_EQUAL(cJSON_GetObjectItem(bwd, "ts")->valuedouble, 10.0, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(cJSON_GetObjectItem(bwd, "dur")->valuedouble, 20.0, 1e-12);
    check_task(events, f.g, f.fwd0, "gpu0", "compute");
    check_task(events, f.g, f.bwd0, "gpu0", "compute");
    check_task(events, f.g, f.ar0, "gpu0", "comm");
    check_task(events, f.g, f.fwd1, "gpu1", "compute");
    check_task(events, f.g, f.host, "host", "main");
    /* f1 and f2 overlap: two lanes; f3 starts when f1 ends and reuses lane 0 */
    check_task(events, f.g, f.f1, "network", "allreduce #0");
    check_task(events, f.g, f.f2, "network", "allreduce #1");
    check_task(events, f.g, f.f3, "network", "allreduce #0");
    check_task(events, f.g, f.p2p, "network", "p2p #0");
    /* two flows sharing 1 GB/s: 1 MB each takes 2 ms */
    const cJSON *e1 = event_of_task(events, f.f1);
    CU_ASSERT_DOUBLE_EQUAL(cJSON_GetObjectItem(e1, "dur")->valuedouble, 2000.0, 1e-6);
    CU_ASSERT_DOUBLE_EQUAL(cJSON_GetObjectItem(cJSON_GetObjectItem(e1, "args"), "bytes")->valuedouble, 1e6, 0);
    CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(e1, "cat")->valuestring, "allreduce");
    const cJSON *ar = event_of_task(events, f.ar0);
    CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(ar, "name")->valuestring, "allreduce grads (3.815 MiB)");
    /* the one dependency across processes (host -> gpu1) is an arrow */
    CU_ASSERT_EQUAL(cJSON_GetObjectItem(cJSON_GetObjectItem(root, "otherData"), "flow_arrows")->valueint, 1);
    CU_ASSERT_DOUBLE_EQUAL(cJSON_GetObjectItem(cJSON_GetObjectItem(ar, "args"), "bytes")->valuedouble, 4e6, 0);
    /* a task without bytes carries none */
    CU_ASSERT_PTR_NULL(cJSON_GetObjectItem(cJSON_GetObjectItem(event_of_task(events, f.fwd0), "args"), "bytes"));

    /* every task became exactly one X event, sorted by ts; no overlap on a track */
    int nx = 0;
    double last_ts = -1;
    GHashTable *track_end = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, g_free);
    const cJSON *ev;
    cJSON_ArrayForEach(ev, events)
    {
        if (strcmp(cJSON_GetObjectItem(ev, "ph")->valuestring, "X") != 0)
            continue;
        nx++;
        double ts = cJSON_GetObjectItem(ev, "ts")->valuedouble, dur = cJSON_GetObjectItem(ev, "dur")->valuedouble;
        CU_ASSERT_TRUE(ts >= last_ts);
        CU_ASSERT_TRUE(dur >= 0);
        last_ts = ts;
        gint64 key = (gint64)cJSON_GetObjectItem(ev, "pid")->valueint << 32 | cJSON_GetObjectItem(ev, "tid")->valueint;
        double *end = g_hash_table_lookup(track_end, &key);
        if (end)
            CU_ASSERT_TRUE(ts >= *end - 1e-9);
        gint64 *k = g_new(gint64, 1);
        double *v = g_new(double, 1);
        *k = key;
        *v = ts + dur;
        g_hash_table_replace(track_end, k, v);
    }
    g_hash_table_destroy(track_end);
    CU_ASSERT_EQUAL(nx, (int)sim_graph_num_tasks(f.g));
    const cJSON *other = cJSON_GetObjectItem(root, "otherData");
    CU_ASSERT_EQUAL(cJSON_GetObjectItem(other, "tasks_not_run")->valueint, 0);
    CU_ASSERT_EQUAL(cJSON_GetObjectItem(other, "tasks_without_resource")->valueint, 4);
    CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(root, "displayTimeUnit")->valuestring, "ns");

    /* deterministic: a second graph built the same way writes the same bytes */
    Fixture f2;
    build(&f2);
    cJSON *root2 = NULL;
    char *text2 = read_back(&f2, NULL, &root2);
    CU_ASSERT_STRING_EQUAL(text, text2);
    cJSON_Delete(root2);
    g_free(text2);
    destroy(&f2);

    cJSON_Delete(root);
    g_free(text);
    destroy(&f);
}

static void test_timeline_no_network(void)
{
    Fixture f;
    build(&f);
    TimelineOptions opt = { .network = false };
    cJSON *root = NULL;
    char *text = read_back(&f, &opt, &root);
    CU_ASSERT_PTR_NOT_NULL_FATAL(root);
    const cJSON *events = cJSON_GetObjectItem(root, "traceEvents");
    CU_ASSERT_PTR_NULL(event_of_task(events, f.f1));
    CU_ASSERT_PTR_NOT_NULL(event_of_task(events, f.ar0));
    CU_ASSERT_PTR_NULL(strstr(text, "\"network\""));
    check_task(events, f.g, f.fwd1, "gpu1", "compute");
    cJSON_Delete(root);
    g_free(text);
    destroy(&f);
}

/* Tasks stuck in a dependency cycle never run: left out, and counted. */
static void test_timeline_not_run(void)
{
    SimGraph *g = sim_graph_new();
    SimEngine *e = sim_engine_new();
    int r = sim_graph_resource(g, "gpu0.compute");
    int a = sim_graph_task(g, "a", r, US(1));
    int b = sim_graph_task(g, "b", r, US(1));
    int c = sim_graph_task(g, "c", r, US(1));
    sim_graph_depend(g, b, c);
    sim_graph_depend(g, c, b);
    CU_ASSERT_EQUAL(sim_graph_run(g, e, NULL), SIM_TIME_NEVER);
    cJSON *root = timeline_json(g, NULL);
    const cJSON *events = cJSON_GetObjectItem(root, "traceEvents");
    CU_ASSERT_PTR_NOT_NULL(event_of_task(events, a));
    CU_ASSERT_PTR_NULL(event_of_task(events, b));
    CU_ASSERT_EQUAL(cJSON_GetObjectItem(cJSON_GetObjectItem(root, "otherData"), "tasks_not_run")->valueint, 2);
    cJSON_Delete(root);
    GError *err = NULL;
    CU_ASSERT_FALSE(timeline_write(g, "/nonexistent-dir/x/t.json", NULL, &err));
    CU_ASSERT_TRUE(err && err->code == SIM_ERROR_INTERNAL);
    g_clear_error(&err);
    sim_graph_free(g);
    sim_engine_free(e);
}

/* Events named by their tags and bytes, a counter per device with its peak
 * marked (frees before allocations at one time), arrows across devices. */
static void test_timeline_tags_counters_flows(void)
{
    SimGraph *g = sim_graph_new();
    SimEngine *e = sim_engine_new();
    int c0 = sim_graph_resource(g, "gpu0.compute"), p0 = sim_graph_resource(g, "gpu0.p2p");
    int c1 = sim_graph_resource(g, "gpu1.compute");
    sim_graph_set_default_tag(g, SIM_TAG_MICRO_BATCH, 1);
    sim_graph_set_default_tag(g, SIM_TAG_LAYER, 2);
    int a = sim_graph_task(g, "forward", c0, US(10));
    sim_graph_set_default_tag(g, SIM_TAG_LAYER, -1);
    int b = sim_graph_task(g, "head_forward", c0, US(10));
    int send = sim_graph_task(g, "send_activation", p0, US(5));
    sim_graph_set_default_tag(g, SIM_TAG_MICRO_BATCH, -1);
    int r = sim_graph_task(g, "forward", c1, US(10));
    sim_graph_task_set_tag(g, r, SIM_TAG_BUCKET, 7);
    sim_graph_task_set_info(g, send, "p2p", 1048576);
    sim_graph_depend(g, a, b);
    sim_graph_depend(g, a, send);
    sim_graph_depend(g, send, r);
    /* gpu0: 100 B all step, 40 during a (0-10 us), 30 during b (10-20 us):
     * never 170, since a frees as b allocates */
    int k = sim_graph_counter(g, "gpu0.memory", 100);
    sim_graph_counter_change(g, k, a, false, 40);
    sim_graph_counter_change(g, k, a, true, -40);
    sim_graph_counter_change(g, k, b, false, 30);
    sim_graph_counter_change(g, k, b, true, -30);
    int k9 = sim_graph_counter(g, "gpu9.memory", 5); /* a process of its own */
    sim_graph_counter_change(g, k9, r, false, 1);
    CU_ASSERT_NOT_EQUAL_FATAL(sim_graph_run(g, e, NULL), SIM_TIME_NEVER);
    cJSON *root = timeline_json(g, NULL);
    const cJSON *events = cJSON_GetObjectItem(root, "traceEvents");
    CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(event_of_task(events, a), "name")->valuestring, "forward L2 mb1");
    CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(event_of_task(events, b), "name")->valuestring, "head_forward mb1");
    CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(event_of_task(events, send), "name")->valuestring,
                           "send_activation mb1 (1 MiB)");
    CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(event_of_task(events, r), "name")->valuestring, "forward bucket 7");
    const cJSON *args = cJSON_GetObjectItem(event_of_task(events, a), "args");
    CU_ASSERT_EQUAL(cJSON_GetObjectItem(args, "layer")->valueint, 2);
    CU_ASSERT_EQUAL(cJSON_GetObjectItem(args, "micro_batch")->valueint, 1);
    CU_ASSERT_PTR_NULL(cJSON_GetObjectItem(args, "bucket"));

    double want_ts[] = {0, 10, 20}, want_v[] = {140, 130, 100};
    int nc = 0, n9 = 0, npeak = 0, ns = 0, nf = 0;
    const cJSON *ev;
    cJSON_ArrayForEach(ev, events)
    {
        const char *ph = cJSON_GetObjectItem(ev, "ph")->valuestring;
        int pid = cJSON_GetObjectItem(ev, "pid")->valueint;
        const char *proc = meta_name(events, "process_name", pid, 0);
        double ts = cJSON_GetObjectItem(ev, "ts") ? cJSON_GetObjectItem(ev, "ts")->valuedouble : -1;
        if (strcmp(ph, "C") == 0 && strcmp(proc, "gpu0") == 0) {
            CU_ASSERT_FATAL(nc < 3);
            CU_ASSERT_DOUBLE_EQUAL(ts, want_ts[nc], 1e-9);
            CU_ASSERT_DOUBLE_EQUAL(cJSON_GetObjectItem(cJSON_GetObjectItem(ev, "args"), "allocated_bytes")->valuedouble,
                                   want_v[nc], 0);
            CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(ev, "name")->valuestring, "memory");
            nc++;
        } else if (strcmp(ph, "C") == 0) {
            CU_ASSERT_STRING_EQUAL(proc, "gpu9");
            n9++;
        } else if (strcmp(ph, "i") == 0 && strcmp(proc, "gpu0") == 0) {
            CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(ev, "name")->valuestring, "memory peak 140 B");
            CU_ASSERT_DOUBLE_EQUAL(ts, 0, 0);
            CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(ev, "s")->valuestring, "p");
            npeak++;
        } else if (strcmp(ph, "s") == 0 || strcmp(ph, "f") == 0) {
            bool start = ph[0] == 's';
            int t = start ? send : r;
            /* the send's arrow: from its slice's middle to the receiver's */
            CU_ASSERT_EQUAL(cJSON_GetObjectItem(ev, "id")->valueint, 1);
            CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(ev, "name")->valuestring, "send_activation");
            CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(ev, "cat")->valuestring, "pipeline");
            CU_ASSERT_STRING_EQUAL(proc, start ? "gpu0" : "gpu1");
            CU_ASSERT_EQUAL(cJSON_GetObjectItem(ev, "tid")->valueint,
                            cJSON_GetObjectItem(event_of_task(events, t), "tid")->valueint);
            CU_ASSERT_DOUBLE_EQUAL(ts, start ? 12.5 : 20.0, 1e-9);
            if (!start)
                CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(ev, "bp")->valuestring, "e");
            ns += start;
            nf += !start;
        }
    }
    CU_ASSERT_EQUAL(nc, 3);
    CU_ASSERT_EQUAL(n9, 2); /* 5 at 0, 6 from r's start */
    CU_ASSERT_EQUAL(npeak, 1);
    CU_ASSERT_EQUAL(ns, 1);
    CU_ASSERT_EQUAL(nf, 1);
    const cJSON *other = cJSON_GetObjectItem(root, "otherData");
    CU_ASSERT_EQUAL(cJSON_GetObjectItem(other, "flow_arrows")->valueint, 1);
    const cJSON *peaks = cJSON_GetObjectItem(other, "counter_peaks");
    CU_ASSERT_DOUBLE_EQUAL(cJSON_GetObjectItem(peaks, "gpu0.memory")->valuedouble, 140, 0);
    CU_ASSERT_DOUBLE_EQUAL(cJSON_GetObjectItem(peaks, "gpu9.memory")->valuedouble, 6, 0);
    cJSON_Delete(root);
    sim_graph_free(g);
    sim_engine_free(e);
}

/* A step of more tasks than a timeline holds (1,000,000: about 2.7 GB
 * while printed, and more than trace viewers take) is refused before a
 * byte is built: exit 2, the count in the message. */
static void test_timeline_too_many_tasks(void)
{
    SimGraph *g = sim_graph_new();
    int r = sim_graph_resource(g, "gpu0.compute");
    for (int i = 0; i <= 1000000; i++)
        sim_graph_task(g, "t", r, 1);
    GError *err = NULL;
    CU_ASSERT_FALSE(timeline_write(g, "/nonexistent-dir/x/t.json", NULL, &err));
    CU_ASSERT_TRUE(err && err->code == SIM_ERROR_INPUT && strstr(err->message, "1000001 tasks, more than a timeline holds"));
    g_clear_error(&err);
    sim_graph_free(g);
}

static const TestCase tests[] = {
    { "timeline tags, counters and flows", test_timeline_tags_counters_flows },
    { "timeline roundtrip", test_timeline_roundtrip },
    { "timeline without network", test_timeline_no_network },
    { "timeline skips tasks not run", test_timeline_not_run },
    { "timeline of too many tasks", test_timeline_too_many_tasks },
};

TEST_MAIN("timeline", tests)
