/* Chrome trace event JSON of a run task graph: processes per device, threads
 * per stream, network lanes for chunk flows (timeline.h). */
#include "sim_file.h"
#include "timeline.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    int task;
    int pid, tid;
    sim_time_t start;
} Ev;

typedef struct {
    char *name;
    GPtrArray *threads; /* char * */
} Proc;

static int cmp_ev(const void *a, const void *b)
{
    const Ev *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    if (x->tid != y->tid)
        return x->tid < y->tid ? -1 : 1;
    return (x->task > y->task) - (x->task < y->task);
}

static double ps_to_us(sim_time_t t)
{
    return (double)t / 1e6;
}

static void add_meta(cJSON *events, const char *what, int pid, int tid, const char *name)
{
    cJSON *m = cJSON_CreateObject();
    cJSON_AddStringToObject(m, "name", what);
    cJSON_AddStringToObject(m, "ph", "M");
    cJSON_AddNumberToObject(m, "pid", pid);
    cJSON_AddNumberToObject(m, "tid", tid);
    cJSON *args = cJSON_AddObjectToObject(m, "args");
    cJSON_AddStringToObject(args, "name", name);
    cJSON_AddItemToArray(events, m);
}

static void add_sort(cJSON *events, const char *what, int pid, int tid, int index)
{
    cJSON *m = cJSON_CreateObject();
    cJSON_AddStringToObject(m, "name", what);
    cJSON_AddStringToObject(m, "ph", "M");
    cJSON_AddNumberToObject(m, "pid", pid);
    cJSON_AddNumberToObject(m, "tid", tid);
    cJSON *args = cJSON_AddObjectToObject(m, "args");
    cJSON_AddNumberToObject(args, "sort_index", index);
    cJSON_AddItemToArray(events, m);
}

static bool ran(const SimGraph *g, int t)
{
    return sim_graph_task_start(g, t) != SIM_TIME_NEVER && sim_graph_task_end(g, t) != SIM_TIME_NEVER;
}

static int cmp_by_start(const void *a, const void *b, void *user)
{
    const SimGraph *g = user;
    int x = *(const int *)a, y = *(const int *)b;
    sim_time_t sx = sim_graph_task_start(g, x), sy = sim_graph_task_start(g, y);
    if (sx != sy)
        return sx < sy ? -1 : 1;
    return (x > y) - (x < y);
}

/* Processes and threads from resource names ("gpu3.compute": thread
 * "compute" of process "gpu3"), in resource order; each resource's pid/tid. */
static GPtrArray *procs_from_resources(const SimGraph *g, int nres, int *res_pid, int *res_tid)
{
    GPtrArray *procs = g_ptr_array_new();
    GHashTable *proc_index = g_hash_table_new(g_str_hash, g_str_equal);
    for (int r = 0; r < nres; r++) {
        const char *full = sim_graph_resource_name(g, r);
        full = full ? full : "resource";
        const char *dot = strrchr(full, '.');
        char *pname = dot && dot != full && dot[1] ? g_strndup(full, (gsize)(dot - full)) : g_strdup(full);
        const char *tname = dot && dot != full && dot[1] ? dot + 1 : "main";
        gpointer idx;
        Proc *p;
        if (g_hash_table_lookup_extended(proc_index, pname, NULL, &idx)) {
            p = procs->pdata[GPOINTER_TO_INT(idx)];
            res_pid[r] = GPOINTER_TO_INT(idx) + 1;
            g_free(pname);
        } else {
            p = g_new0(Proc, 1);
            p->name = pname;
            p->threads = g_ptr_array_new_with_free_func(g_free);
            g_hash_table_insert(proc_index, p->name, GINT_TO_POINTER((int)procs->len));
            g_ptr_array_add(procs, p);
            res_pid[r] = (int)procs->len;
        }
        g_ptr_array_add(p->threads, g_strdup(tname));
        res_tid[r] = (int)p->threads->len;
    }
    g_hash_table_destroy(proc_index);
    return procs;
}

/* Network lanes for the tasks without a resource (chunk flows): per category
 * (in order of first task), tasks by start time go to the first lane that is
 * free by then.  Appends their events; returns the "network" process. */
static Proc *network_lanes(const SimGraph *g, GArray *free_tasks, int net_pid, GArray *evs)
{
    g_array_sort_with_data(free_tasks, cmp_by_start, (gpointer)g);
    Proc *net = g_new0(Proc, 1);
    net->name = g_strdup("network");
    net->threads = g_ptr_array_new_with_free_func(g_free);
    GHashTable *cat_lanes = g_hash_table_new_full(g_str_hash, g_str_equal, NULL,
                                                  (GDestroyNotify)g_array_unref); /* cat -> GArray of lane ends */
    GHashTable *cat_tids = g_hash_table_new_full(g_str_hash, g_str_equal, NULL,
                                                 (GDestroyNotify)g_array_unref); /* cat -> GArray of tids */
    for (guint i = 0; i < free_tasks->len; i++) {
        int t = g_array_index(free_tasks, int, i);
        const char *cat = sim_graph_task_category(g, t);
        cat = cat ? cat : "flows";
        GArray *ends = g_hash_table_lookup(cat_lanes, cat);
        GArray *tids = g_hash_table_lookup(cat_tids, cat);
        if (!ends) {
            ends = g_array_new(FALSE, FALSE, sizeof(sim_time_t));
            tids = g_array_new(FALSE, FALSE, sizeof(int));
            g_hash_table_insert(cat_lanes, (gpointer)cat, ends);
            g_hash_table_insert(cat_tids, (gpointer)cat, tids);
        }
        sim_time_t s = sim_graph_task_start(g, t), e = sim_graph_task_end(g, t);
        guint lane = 0;
        while (lane < ends->len && g_array_index(ends, sim_time_t, lane) > s)
            lane++;
        if (lane == ends->len) {
            g_array_append_val(ends, e);
            g_ptr_array_add(net->threads, g_strdup_printf("%s #%u", cat, lane));
            int tid = (int)net->threads->len;
            g_array_append_val(tids, tid);
        } else {
            g_array_index(ends, sim_time_t, lane) = e;
        }
        Ev ev = { t, net_pid, g_array_index(tids, int, lane), s };
        g_array_append_val(evs, ev);
    }
    g_hash_table_destroy(cat_lanes);
    g_hash_table_destroy(cat_tids);
    return net;
}

/* "25 MiB": bytes for an event's name. */
static void append_bytes(GString *out, double bytes)
{
    static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    int u = 0;
    while (bytes >= 1024 && u < (int)G_N_ELEMENTS(unit) - 1) {
        bytes /= 1024;
        u++;
    }
    char buf[G_ASCII_DTOSTR_BUF_SIZE];
    g_string_append_printf(out, "%s %s", g_ascii_formatd(buf, sizeof buf, "%.4g", bytes), unit[u]);
}

/* The task's name with what it works on: "forward L3 mb2",
 * "grad_allreduce bucket 4 (25 MiB)". */
static char *event_name(const SimGraph *g, int task)
{
    const char *name = sim_graph_task_name(g, task);
    GString *n = name ? g_string_new(name) : g_string_new(NULL);
    if (!name)
        g_string_append_printf(n, "task %d", task);
    int layer = sim_graph_task_tag(g, task, SIM_TAG_LAYER), mb = sim_graph_task_tag(g, task, SIM_TAG_MICRO_BATCH),
        bucket = sim_graph_task_tag(g, task, SIM_TAG_BUCKET);
    if (layer >= 0)
        g_string_append_printf(n, " L%d", layer);
    if (mb >= 0)
        g_string_append_printf(n, " mb%d", mb);
    if (bucket >= 0)
        g_string_append_printf(n, " bucket %d", bucket);
    double bytes = sim_graph_task_bytes(g, task);
    if (bytes > 0) {
        g_string_append(n, " (");
        append_bytes(n, bytes);
        g_string_append_c(n, ')');
    }
    return g_string_free(n, FALSE);
}

/* One task's complete ("X") event. */
static cJSON *event_json(const SimGraph *g, const Ev *e)
{
    sim_time_t s = sim_graph_task_start(g, e->task), end = sim_graph_task_end(g, e->task);
    cJSON *o = cJSON_CreateObject();
    char *name = event_name(g, e->task);
    cJSON_AddStringToObject(o, "name", name);
    g_free(name);
    const char *cat = sim_graph_task_category(g, e->task);
    if (cat)
        cJSON_AddStringToObject(o, "cat", cat);
    cJSON_AddStringToObject(o, "ph", "X");
    cJSON_AddNumberToObject(o, "ts", ps_to_us(s));
    cJSON_AddNumberToObject(o, "dur", ps_to_us(end - s));
    cJSON_AddNumberToObject(o, "pid", e->pid);
    cJSON_AddNumberToObject(o, "tid", e->tid);
    cJSON *args = cJSON_AddObjectToObject(o, "args");
    double bytes = sim_graph_task_bytes(g, e->task);
    if (bytes > 0)
        cJSON_AddNumberToObject(args, "bytes", bytes);
    static const char *const tag_key[SIM_NUM_TAGS] = {"layer", "micro_batch", "bucket"};
    for (int k = 0; k < SIM_NUM_TAGS; k++) {
        int v = sim_graph_task_tag(g, e->task, (SimTag)k);
        if (v >= 0)
            cJSON_AddNumberToObject(args, tag_key[k], v);
    }
    cJSON_AddNumberToObject(args, "task", e->task);
    return o;
}

/* ---- counter tracks (timeline.h) ---- */

typedef struct {
    sim_time_t t;
    double delta;
    int order;
} Change;

/* By time; at one time frees before allocations (a buffer freed as another
 * is allocated is not held twice), then in order of addition. */
static int cmp_change(const void *a, const void *b)
{
    const Change *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    if ((x->delta < 0) != (y->delta < 0))
        return x->delta < 0 ? -1 : 1;
    return (x->order > y->order) - (x->order < y->order);
}

static cJSON *counter_event(const char *label, int pid, sim_time_t t, double value)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", label);
    cJSON_AddStringToObject(o, "ph", "C");
    cJSON_AddNumberToObject(o, "ts", ps_to_us(t));
    cJSON_AddNumberToObject(o, "pid", pid);
    cJSON_AddNumberToObject(o, "tid", 0);
    cJSON *args = cJSON_AddObjectToObject(o, "args");
    cJSON_AddNumberToObject(args, "allocated_bytes", value);
    return o;
}

/* Counter k's "C" events (one per time its value changes, from time 0) in
 * process pid, and an instant event at its peak; returns the peak. */
static double counter_events(const SimGraph *g, int k, int pid, const char *label, cJSON *events)
{
    int n = sim_graph_counter_num_changes(g, k);
    Change *ch = g_new(Change, (gsize)(n > 0 ? n : 1));
    int m = 0;
    for (int i = 0; i < n; i++) {
        int task;
        bool at_end;
        double delta;
        sim_graph_counter_get_change(g, k, i, &task, &at_end, &delta);
        if (task < 0 || task >= (int)sim_graph_num_tasks(g) || !ran(g, task))
            continue;
        ch[m++] = (Change){at_end ? sim_graph_task_end(g, task) : sim_graph_task_start(g, task), delta, i};
    }
    qsort(ch, (size_t)m, sizeof *ch, cmp_change);
    double value = sim_graph_counter_base(g, k), peak = -INFINITY;
    sim_time_t peak_t = 0;
    if (m == 0 || ch[0].t > 0) { /* else the changes at time 0 give the first value */
        cJSON_AddItemToArray(events, counter_event(label, pid, 0, value));
        peak = value;
    }
    for (int i = 0; i < m;) {
        sim_time_t t = ch[i].t;
        for (; i < m && ch[i].t == t; i++)
            value += ch[i].delta;
        cJSON_AddItemToArray(events, counter_event(label, pid, t, value));
        if (value > peak) {
            peak = value;
            peak_t = t;
        }
    }
    g_free(ch);
    cJSON *o = cJSON_CreateObject();
    GString *name = g_string_new(NULL);
    g_string_append_printf(name, "%s peak ", label);
    append_bytes(name, peak);
    cJSON_AddStringToObject(o, "name", name->str);
    g_string_free(name, TRUE);
    cJSON_AddStringToObject(o, "ph", "i");
    cJSON_AddStringToObject(o, "s", "p");
    cJSON_AddNumberToObject(o, "ts", ps_to_us(peak_t));
    cJSON_AddNumberToObject(o, "pid", pid);
    cJSON_AddNumberToObject(o, "tid", 0);
    cJSON *args = cJSON_AddObjectToObject(o, "args");
    cJSON_AddNumberToObject(args, "allocated_bytes", peak);
    cJSON_AddItemToArray(events, o);
    return peak;
}

/* The process a counter "gpu3.memory" belongs to (made when no resource
 * named it), and its label "memory". */
static int counter_pid(GPtrArray *procs, const char *full, const char **label)
{
    full = full ? full : "counter";
    const char *dot = strrchr(full, '.');
    bool split = dot && dot != full && dot[1];
    char *pname = split ? g_strndup(full, (gsize)(dot - full)) : g_strdup(full);
    *label = split ? dot + 1 : "value";
    for (guint i = 0; i < procs->len; i++)
        if (strcmp(((Proc *)procs->pdata[i])->name, pname) == 0) {
            g_free(pname);
            return (int)i + 1;
        }
    Proc *p = g_new0(Proc, 1);
    p->name = pname;
    p->threads = g_ptr_array_new_with_free_func(g_free);
    g_ptr_array_add(procs, p);
    return (int)procs->len;
}

/* A flow arrow ("s" then "f", Chrome's flow events) per dependency between
 * tasks on different processes: the pipeline's sends to the next stage.
 * Each end sits at its slice's midpoint, so that it binds to that slice
 * even when another ends or starts at the same time on its thread. */
static int flow_events(const SimGraph *g, const int *pid_of, const int *tid_of, cJSON *events)
{
    int id = 0;
    for (size_t i = 0; i < sim_graph_num_edges(g); i++) {
        int a, b;
        sim_graph_edge(g, i, &a, &b);
        if (pid_of[a] <= 0 || pid_of[b] <= 0 || pid_of[a] == pid_of[b] || sim_graph_task_resource(g, a) < 0 ||
            sim_graph_task_resource(g, b) < 0)
            continue;
        id++;
        const char *name = sim_graph_task_name(g, a);
        for (int end = 0; end < 2; end++) {
            int t = end ? b : a;
            sim_time_t s = sim_graph_task_start(g, t), e = sim_graph_task_end(g, t);
            cJSON *o = cJSON_CreateObject();
            cJSON_AddStringToObject(o, "name", name ? name : "send");
            cJSON_AddStringToObject(o, "cat", "pipeline");
            cJSON_AddStringToObject(o, "ph", end ? "f" : "s");
            if (end)
                cJSON_AddStringToObject(o, "bp", "e");
            cJSON_AddNumberToObject(o, "id", id);
            cJSON_AddNumberToObject(o, "ts", ps_to_us(s) + ps_to_us(e - s) / 2);
            cJSON_AddNumberToObject(o, "pid", pid_of[t]);
            cJSON_AddNumberToObject(o, "tid", tid_of[t]);
            cJSON *args = cJSON_AddObjectToObject(o, "args");
            cJSON_AddNumberToObject(args, "from_task", a);
            cJSON_AddNumberToObject(args, "to_task", b);
            cJSON_AddItemToArray(events, o);
        }
    }
    return id;
}

static void procs_free(GPtrArray *procs)
{
    for (guint i = 0; i < procs->len; i++) {
        Proc *p = procs->pdata[i];
        g_free(p->name);
        g_ptr_array_free(p->threads, TRUE);
        g_free(p);
    }
    g_ptr_array_free(procs, TRUE);
}

cJSON *timeline_json(const SimGraph *g, const TimelineOptions *opt)
{
    bool network = opt ? opt->network : true;
    int nres = sim_graph_num_resources(g);
    int ntasks = (int)sim_graph_num_tasks(g);
    int *res_pid = g_new0(int, (gsize)(nres > 0 ? nres : 1));
    int *res_tid = g_new0(int, (gsize)(nres > 0 ? nres : 1));
    GPtrArray *procs = procs_from_resources(g, nres, res_pid, res_tid);

    GArray *evs = g_array_new(FALSE, FALSE, sizeof(Ev));
    int not_run = 0, unbound = 0;
    GArray *free_tasks = g_array_new(FALSE, FALSE, sizeof(int));
    for (int t = 0; t < ntasks; t++) {
        if (!ran(g, t)) {
            not_run++;
            continue;
        }
        int r = sim_graph_task_resource(g, t);
        if (r >= 0 && r < nres) {
            Ev e = { t, res_pid[r], res_tid[r], sim_graph_task_start(g, t) };
            g_array_append_val(evs, e);
        } else {
            unbound++;
            if (network)
                g_array_append_val(free_tasks, t);
        }
    }
    if (free_tasks->len > 0)
        g_ptr_array_add(procs, network_lanes(g, free_tasks, (int)procs->len + 1, evs));
    g_array_sort(evs, cmp_ev);

    /* counters may name processes of their own: before the metadata */
    int ncounters = sim_graph_num_counters(g);
    int *counter_pids = g_new0(int, (gsize)(ncounters > 0 ? ncounters : 1));
    const char **counter_labels = g_new0(const char *, (gsize)(ncounters > 0 ? ncounters : 1));
    for (int k = 0; k < ncounters; k++)
        counter_pids[k] = counter_pid(procs, sim_graph_counter_name(g, k), &counter_labels[k]);

    cJSON *root = cJSON_CreateObject();
    cJSON *events = cJSON_AddArrayToObject(root, "traceEvents");
    for (guint i = 0; i < procs->len; i++) {
        Proc *p = procs->pdata[i];
        int pid = (int)i + 1;
        add_meta(events, "process_name", pid, 0, p->name);
        add_sort(events, "process_sort_index", pid, 0, pid);
        for (guint k = 0; k < p->threads->len; k++) {
            add_meta(events, "thread_name", pid, (int)k + 1, p->threads->pdata[k]);
            add_sort(events, "thread_sort_index", pid, (int)k + 1, (int)k + 1);
        }
    }
    sim_time_t makespan = 0;
    int *pid_of = g_new0(int, (gsize)(ntasks > 0 ? ntasks : 1)), *tid_of = g_new0(int, (gsize)(ntasks > 0 ? ntasks : 1));
    for (guint i = 0; i < evs->len; i++) {
        const Ev *e = &g_array_index(evs, Ev, i);
        if (sim_graph_task_end(g, e->task) > makespan)
            makespan = sim_graph_task_end(g, e->task);
        pid_of[e->task] = e->pid;
        tid_of[e->task] = e->tid;
        cJSON_AddItemToArray(events, event_json(g, e));
    }
    int nflows = flow_events(g, pid_of, tid_of, events);
    g_free(pid_of);
    g_free(tid_of);
    cJSON *peaks = ncounters > 0 ? cJSON_CreateObject() : NULL;
    for (int k = 0; k < ncounters; k++) {
        double peak = counter_events(g, k, counter_pids[k], counter_labels[k], events);
        const char *cname = sim_graph_counter_name(g, k);
        if (!cJSON_GetObjectItemCaseSensitive(peaks, cname ? cname : "counter"))
            cJSON_AddNumberToObject(peaks, cname ? cname : "counter", peak);
    }
    g_free(counter_pids);
    g_free(counter_labels);
    cJSON_AddStringToObject(root, "displayTimeUnit", "ns");
    cJSON *other = cJSON_AddObjectToObject(root, "otherData");
    cJSON_AddStringToObject(other, "generator", "shardsim " SHARDSIM_VERSION);
    cJSON_AddNumberToObject(other, "tasks", ntasks);
    cJSON_AddNumberToObject(other, "tasks_not_run", not_run);
    cJSON_AddNumberToObject(other, "tasks_without_resource", unbound);
    cJSON_AddBoolToObject(other, "network_tracks", network);
    cJSON_AddNumberToObject(other, "makespan_s", (double)makespan / (double)SIM_TIME_PS_PER_S);
    cJSON_AddNumberToObject(other, "flow_arrows", nflows);
    if (peaks)
        cJSON_AddItemToObject(other, "counter_peaks", peaks);

    procs_free(procs);
    g_free(res_pid);
    g_free(res_tid);
    g_array_free(evs, TRUE);
    g_array_free(free_tasks, TRUE);
    return root;
}

bool timeline_write(const SimGraph *g, const char *path, const TimelineOptions *opt, GError **err)
{
    if (!sim_graph_export_fits(g, "timeline", "a timeline", err))
        return false;
    cJSON *root = timeline_json(g, opt);
    char *text = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    if (!text) {
        g_set_error(err, SIM_ERROR, SIM_ERROR_INTERNAL, "timeline: out of memory printing JSON");
        return false;
    }
    size_t len = strlen(text);
    bool ok = true;
    if (strcmp(path, "-") == 0) {
        ok = fwrite(text, 1, len, stdout) == len && fputc('\n', stdout) != EOF && fflush(stdout) == 0;
        if (!ok)
            g_set_error(err, SIM_ERROR, SIM_ERROR_INTERNAL, "timeline: cannot write to standard output");
    } else {
        char *withnl = g_strconcat(text, "\n", NULL);
        GError *e = NULL;
        ok = sim_file_write(path, withnl, (gssize)len + 1, &e);
        g_free(withnl);
        if (!ok) {
            g_set_error(err, SIM_ERROR, SIM_ERROR_INTERNAL, "timeline: %s", e->message);
            g_error_free(e);
        }
    }
    cJSON_free(text);
    return ok;
}
