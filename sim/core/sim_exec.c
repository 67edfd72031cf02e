/* The task-graph executor: tasks with dependencies on FIFO resources, timed
 * tasks and flow tasks on the network, cycle detection (sim_exec.h). */
#include "sim_exec.h"
#include "sim_error.h"

#include <glib.h>
#include <stdio.h>
#include <unistd.h>
#include <string.h>

/* What a run touches comes first, in the task's first 56 bytes: a run
 * reaches its tasks in time order, not in memory order, one cache miss each. */
typedef struct {
    SimAction act; /* completion */
    SimGraph *g;
    sim_time_t duration, start, end;
    int resource;
    int nlinks, link_off; /* flow tasks: links in g->link_ids */
    bool is_flow;
    double bytes;
    const char *name, *category;
    int tag[SIM_NUM_TAGS]; /* layer, micro-batch, bucket (-1: none) */
} Task;

typedef struct {
    int task;
    bool at_end;
    double delta;
} CounterChange;

typedef struct {
    const char *name;
    double base;
    GArray *changes; /* CounterChange */
} Counter;

typedef struct {
    const char *name;
    bool busy;
    GQueue ready; /* task ids (GINT_TO_POINTER(id + 1)) */
} Resource;

struct SimGraph {
    GArray *tasks;     /* Task */
    GArray *resources; /* Resource */
    GArray *edges;     /* pairs of int: before, after */
    GArray *link_ids;  /* int */
    GStringChunk *names;
    const char *recent[2];         /* the names interned last */
    GArray *counters;              /* Counter */
    int default_tag[SIM_NUM_TAGS]; /* given to new tasks */
    /* Successors in CSR form, built by the first run and kept while no task
     * or edge is added (a step's interference passes rerun one graph):
     * task i's are succ[row[i]] .. succ[row[i + 1] - 1].  Unfinished
     * dependencies count down in waiting[], apart from the 96-byte tasks,
     * so that a run's one random access per edge stays in cache. */
    int *succ, *row, *indeg, *waiting;
    size_t succ_cap, node_cap;
    guint csr_tasks, csr_edges; /* the graph's size when built */
    bool csr_ok;
    SimEngine *e;
    SimNet *net;
    size_t done;
    sim_time_t last_end; /* of the task finished last */
    bool overflowed;     /* a task's end passed the time range */
};

/* Graphs freed are kept for the next sim_graph_new, emptied but with their
 * arrays' capacity: a planner or a sweep builds graphs of about the same
 * size one after another, and a fresh graph's arrays regrow (a copy at each
 * doubling) onto fresh pages (a page fault per 4 KiB: a fifth of a plan's
 * time).  At most POOL_MAX graphs, none above POOL_MAX_TASKS tasks (2^18: a
 * plan's candidates fit; a 16k-GPU step's graph is let go), so that memory
 * kept is bounded; capacity only, never the results. */
#define POOL_MAX 8
#define POOL_MAX_TASKS (1u << 18)
static GMutex pool_lock;
static SimGraph *pool[POOL_MAX];
static int pool_n;

static void graph_init(SimGraph *g)
{
    for (int k = 0; k < SIM_NUM_TAGS; k++)
        g->default_tag[k] = -1;
}

SimGraph *sim_graph_new(void)
{
    g_mutex_lock(&pool_lock);
    SimGraph *g = pool_n > 0 ? pool[--pool_n] : NULL;
    g_mutex_unlock(&pool_lock);
    if (g)
        return g;
    g = g_new0(SimGraph, 1);
    g->tasks = g_array_new(FALSE, FALSE, sizeof(Task));
    g->resources = g_array_new(FALSE, FALSE, sizeof(Resource));
    g->edges = g_array_new(FALSE, FALSE, 2 * sizeof(int));
    g->link_ids = g_array_new(FALSE, FALSE, sizeof(int));
    g->names = g_string_chunk_new(4096);
    g->counters = g_array_new(FALSE, FALSE, sizeof(Counter));
    graph_init(g);
    return g;
}

static void counters_clear(SimGraph *g)
{
    for (guint i = 0; i < g->counters->len; i++)
        g_array_free(g_array_index(g->counters, Counter, i).changes, TRUE);
    g_array_set_size(g->counters, 0);
}

/* Empties g for the pool: every field as sim_graph_new leaves it, the
 * arrays' (and the successors') storage kept. */
static void graph_reset(SimGraph *g)
{
    g_array_set_size(g->resources, 0);
    g_array_set_size(g->tasks, 0);
    g_array_set_size(g->edges, 0);
    g_array_set_size(g->link_ids, 0);
    counters_clear(g);
    g_string_chunk_clear(g->names);
    g->recent[0] = g->recent[1] = NULL;
    g->e = NULL;
    g->net = NULL;
    g->done = 0;
    g->last_end = 0;
    g->csr_ok = false;
    graph_init(g);
}

void sim_graph_free(SimGraph *g)
{
    if (!g)
        return;
    for (guint i = 0; i < g->resources->len; i++)
        g_queue_clear(&g_array_index(g->resources, Resource, i).ready);
    if (g->tasks->len <= POOL_MAX_TASKS) {
        graph_reset(g);
        g_mutex_lock(&pool_lock);
        bool kept = pool_n < POOL_MAX;
        if (kept)
            pool[pool_n++] = g;
        g_mutex_unlock(&pool_lock);
        if (kept)
            return;
    }
    g_array_free(g->tasks, TRUE);
    g_array_free(g->resources, TRUE);
    g_array_free(g->edges, TRUE);
    g_array_free(g->link_ids, TRUE);
    counters_clear(g);
    g_array_free(g->counters, TRUE);
    g_string_chunk_free(g->names);
    g_free(g->succ);
    g_free(g->row);
    g_free(g->indeg);
    g_free(g->waiting);
    g_free(g);
}

/* Builders name runs of tasks alike ("dp", "comm"): the two names interned
 * last are compared first, which spares a hash of the name per task. */
static const char *intern(SimGraph *g, const char *s)
{
    if (!s)
        return NULL;
    for (int i = 0; i < 2; i++)
        if (g->recent[i] && strcmp(g->recent[i], s) == 0)
            return g->recent[i];
    const char *in = g_string_chunk_insert_const(g->names, s);
    g->recent[1] = g->recent[0];
    g->recent[0] = in;
    return in;
}

int sim_graph_resource(SimGraph *g, const char *name)
{
    Resource r = {.name = intern(g, name)};
    g_queue_init(&r.ready);
    g_array_append_val(g->resources, r);
    return (int)g->resources->len - 1;
}

const char *sim_graph_resource_name(const SimGraph *g, int r) { return g_array_index(g->resources, Resource, r).name; }
int sim_graph_num_resources(const SimGraph *g) { return (int)g->resources->len; }
size_t sim_graph_num_tasks(const SimGraph *g) { return g->tasks->len; }

static Task *task(const SimGraph *g, int id) { return &g_array_index(g->tasks, Task, id); }

static int add_task(SimGraph *g, const char *name, int resource)
{
    if (resource != SIM_NO_RESOURCE && (resource < 0 || resource >= (int)g->resources->len))
        g_error("sim_graph: task '%s' names unknown resource %d", name ? name : "?", resource);
    Task t = {.name = intern(g, name), .resource = resource, .start = SIM_TIME_NEVER, .end = SIM_TIME_NEVER};
    memcpy(t.tag, g->default_tag, sizeof t.tag);
    g_array_append_val(g->tasks, t);
    return (int)g->tasks->len - 1;
}

int sim_graph_task(SimGraph *g, const char *name, int resource, sim_time_t duration)
{
    int id = add_task(g, name, resource);
    task(g, id)->duration = duration;
    return id;
}

int sim_graph_flow_task(SimGraph *g, const char *name, int resource, double bytes, const int *links, int nlinks)
{
    int id = add_task(g, name, resource);
    Task *t = task(g, id);
    t->is_flow = true;
    t->bytes = bytes;
    t->nlinks = nlinks;
    t->link_off = (int)g->link_ids->len;
    g_array_append_vals(g->link_ids, links, (guint)nlinks);
    return id;
}

void sim_graph_depend(SimGraph *g, int before, int after)
{
    int n = (int)g->tasks->len;
    if (before < 0 || before >= n || after < 0 || after >= n)
        g_error("sim_graph_depend: task %d or %d does not exist", before, after);
    int e[2] = {before, after};
    g_array_append_val(g->edges, e);
}

void sim_graph_task_set_delay(SimGraph *g, int id, sim_time_t delay)
{
    task(g, id)->duration = delay;
}

void sim_graph_task_set_info(SimGraph *g, int id, const char *category, double bytes)
{
    task(g, id)->category = intern(g, category);
    task(g, id)->bytes = bytes;
}

static bool tag_ok(SimTag tag) { return (int)tag >= 0 && tag < SIM_NUM_TAGS; }

void sim_graph_task_set_tag(SimGraph *g, int id, SimTag tag, int value)
{
    if (tag_ok(tag))
        task(g, id)->tag[tag] = value < 0 ? -1 : value;
}

int sim_graph_task_tag(const SimGraph *g, int id, SimTag tag) { return tag_ok(tag) ? task(g, id)->tag[tag] : -1; }

void sim_graph_set_default_tag(SimGraph *g, SimTag tag, int value)
{
    if (tag_ok(tag))
        g->default_tag[tag] = value < 0 ? -1 : value;
}

int sim_graph_counter(SimGraph *g, const char *name, double base)
{
    Counter c = {intern(g, name), base, g_array_new(FALSE, FALSE, sizeof(CounterChange))};
    g_array_append_val(g->counters, c);
    return (int)g->counters->len - 1;
}

static Counter *counter(const SimGraph *g, int c) { return &g_array_index(g->counters, Counter, c); }

void sim_graph_counter_change(SimGraph *g, int c, int id, bool at_end, double delta)
{
    if (c < 0 || c >= (int)g->counters->len || id < 0 || id >= (int)g->tasks->len)
        g_error("sim_graph_counter_change: counter %d or task %d does not exist", c, id);
    CounterChange ch = {id, at_end, delta};
    g_array_append_val(counter(g, c)->changes, ch);
}

int sim_graph_num_counters(const SimGraph *g) { return (int)g->counters->len; }
const char *sim_graph_counter_name(const SimGraph *g, int c) { return counter(g, c)->name; }
double sim_graph_counter_base(const SimGraph *g, int c) { return counter(g, c)->base; }
int sim_graph_counter_num_changes(const SimGraph *g, int c) { return (int)counter(g, c)->changes->len; }

void sim_graph_counter_get_change(const SimGraph *g, int c, int i, int *id, bool *at_end, double *delta)
{
    const CounterChange *ch = &g_array_index(counter(g, c)->changes, CounterChange, i);
    *id = ch->task;
    *at_end = ch->at_end;
    *delta = ch->delta;
}

void sim_graph_save_times(const SimGraph *g, sim_time_t *times)
{
    for (guint i = 0; i < g->tasks->len; i++) {
        times[2 * i] = task(g, (int)i)->start;
        times[2 * i + 1] = task(g, (int)i)->end;
    }
}

void sim_graph_restore_times(SimGraph *g, const sim_time_t *times)
{
    for (guint i = 0; i < g->tasks->len; i++) {
        task(g, (int)i)->start = times[2 * i];
        task(g, (int)i)->end = times[2 * i + 1];
    }
}

sim_time_t sim_graph_task_start(const SimGraph *g, int id) { return task(g, id)->start; }
sim_time_t sim_graph_task_end(const SimGraph *g, int id) { return task(g, id)->end; }
const char *sim_graph_task_name(const SimGraph *g, int id) { return task(g, id)->name; }
const char *sim_graph_task_category(const SimGraph *g, int id) { return task(g, id)->category; }
double sim_graph_task_bytes(const SimGraph *g, int id) { return task(g, id)->bytes; }
int sim_graph_task_resource(const SimGraph *g, int id) { return task(g, id)->resource; }
sim_time_t sim_graph_task_duration(const SimGraph *g, int id) { return task(g, id)->duration; }

int sim_graph_task_links(const SimGraph *g, int id, const int **links)
{
    const Task *t = task(g, id);
    *links = t->nlinks ? &g_array_index(g->link_ids, int, t->link_off) : NULL;
    return t->nlinks;
}

size_t sim_graph_num_edges(const SimGraph *g) { return g->edges->len; }

void sim_graph_edge(const SimGraph *g, size_t i, int *before, int *after)
{
    const int *e = &g_array_index(g->edges, int, 2 * i);
    *before = e[0];
    *after = e[1];
}

/* ---- progress on a terminal (sim_exec.h) ----
 * Set by the command on the main thread before any run and cleared after:
 * a sweep's worker threads only read it, as off. */
static const char *progress_cmd;
static gint64 progress_t0, progress_last;
static bool progress_shown;

void sim_progress_begin(const char *command)
{
    progress_cmd = isatty(STDERR_FILENO) ? command : NULL;
    progress_t0 = g_get_monotonic_time();
    progress_last = 0;
    progress_shown = false;
}

void sim_progress_end(void)
{
    if (progress_shown)
        fputs("\r\033[K", stderr);
    progress_cmd = NULL;
    progress_shown = false;
}

/* Every 4096 tasks done: a line at most every quarter second, past 2 s. */
static void progress_tick(const SimGraph *g)
{
    gint64 now = g_get_monotonic_time();
    if (now - progress_t0 < 2000000 || now - progress_last < 250000)
        return;
    progress_last = now;
    fprintf(stderr, "\rshardsim: %s: simulating, %zu of %u tasks done, at %.6g s (%.0f s)\033[K", progress_cmd,
            g->done, g->tasks->len, sim_time_to_s(sim_engine_now(g->e)), (double)(now - progress_t0) / 1e6);
    fflush(stderr);
    progress_shown = true;
}

static void start_task(SimGraph *g, int id);
static void ready(SimGraph *g, int id);

static void finish(SimGraph *g, Task *t)
{
    t->end = g->last_end = sim_engine_now(g->e);
    if ((++g->done & 4095) == 0 && progress_cmd)
        progress_tick(g);
    if (t->resource != SIM_NO_RESOURCE) {
        Resource *r = &g_array_index(g->resources, Resource, t->resource);
        r->busy = false;
        if (!g_queue_is_empty(&r->ready))
            start_task(g, GPOINTER_TO_INT(g_queue_pop_head(&r->ready)) - 1);
    }
    int id = (int)(t - (Task *)(void *)g->tasks->data);
    for (int i = g->row[id]; i < g->row[id + 1]; i++) {
        int s = g->succ[i];
        if (--g->waiting[s] == 0)
            ready(g, s);
    }
}

/* Task pointers stay valid during a run: no task is added while it runs. */
static void on_task_done(SimEngine *e, SimAction *a)
{
    (void)e;
    finish(((Task *)a)->g, (Task *)a);
}

/* After the bytes arrive and the task's fixed overhead (the flow's delay). */
static void on_flow_done(SimEngine *e, void *user)
{
    (void)e;
    Task *t = user;
    finish(t->g, t);
}

static void start_task(SimGraph *g, int id)
{
    Task *t = task(g, id);
    if (t->resource != SIM_NO_RESOURCE)
        g_array_index(g->resources, Resource, t->resource).busy = true;
    t->start = sim_engine_now(g->e);
    if (t->is_flow) {
        if (!g->net)
            g_error("sim_graph_run: flow task '%s' needs a network", t->name ? t->name : "?");
        sim_net_flow_delayed(g->net, t->bytes, &g_array_index(g->link_ids, int, t->link_off), t->nlinks, t->duration,
                             on_flow_done, t);
    } else {
        t->act.fire = on_task_done;
        sim_time_t end = sim_time_add(t->start, t->duration);
        if (end == SIM_TIME_NEVER) { /* saturated: it would never end */
            g->overflowed = true;
            return;
        }
        sim_engine_schedule(g->e, end, &t->act);
    }
}

static void ready(SimGraph *g, int id)
{
    Task *t = task(g, id);
    if (t->resource == SIM_NO_RESOURCE) {
        start_task(g, id);
        return;
    }
    Resource *r = &g_array_index(g->resources, Resource, t->resource);
    if (r->busy)
        g_queue_push_tail(&r->ready, GINT_TO_POINTER(id + 1));
    else
        start_task(g, id);
}

/* Counting sort of the edges by their first task: each task's successors
 * in the order the dependencies were added. */
static void csr_build(SimGraph *g)
{
    guint n = g->tasks->len, m = g->edges->len;
    if (g->csr_ok && g->csr_tasks == n && g->csr_edges == m)
        return;
    if (!g->succ || g->succ_cap < m) {
        g_free(g->succ);
        g->succ_cap = m ? m : 1;
        g->succ = g_new(int, g->succ_cap);
    }
    if (!g->row || g->node_cap < n) {
        g->node_cap = n ? n : 1;
        g->row = g_renew(int, g->row, g->node_cap + 1);
        g->indeg = g_renew(int, g->indeg, g->node_cap);
        g->waiting = g_renew(int, g->waiting, g->node_cap);
    }
    memset(g->row, 0, (n + 1) * sizeof(int));
    memset(g->indeg, 0, n * sizeof(int));
    const int *ed = (const int *)(void *)g->edges->data;
    for (guint i = 0; i < m; i++) {
        g->row[ed[2 * i] + 1]++;
        g->indeg[ed[2 * i + 1]]++;
    }
    for (guint i = 0; i < n; i++)
        g->row[i + 1] += g->row[i];
    for (guint i = 0; i < m; i++) /* row[b] advances to row[b + 1] */
        g->succ[g->row[ed[2 * i]]++] = ed[2 * i + 1];
    for (guint i = n; i > 0; i--) /* and back */
        g->row[i] = g->row[i - 1];
    g->row[0] = 0;
    g->csr_tasks = n;
    g->csr_edges = m;
    g->csr_ok = true;
}

sim_time_t sim_graph_run(SimGraph *g, SimEngine *e, SimNet *net)
{
    int n = (int)g->tasks->len;
    g->e = e;
    g->net = net;
    g->done = 0;
    g->last_end = 0;
    g->overflowed = false;
    csr_build(g);
    memcpy(g->waiting, g->indeg, (size_t)n * sizeof(int));
    for (int i = 0; i < n; i++) {
        Task *t = task(g, i);
        t->g = g;
        t->start = t->end = SIM_TIME_NEVER;
    }
    for (guint i = 0; i < g->resources->len; i++) {
        Resource *r = &g_array_index(g->resources, Resource, i);
        r->busy = false;
        g_queue_clear(&r->ready);
    }
    for (int i = 0; i < n; i++)
        if (g->waiting[i] == 0)
            ready(g, i);
    sim_engine_run(e);
    /* Tasks finish in time order: the last to finish ends the latest (no
     * pass over a million tasks to find it). */
    return g->done < (size_t)n ? SIM_TIME_NEVER : g->last_end;
}

bool sim_graph_overflowed(const SimGraph *g) { return g->overflowed; }

bool sim_graph_export_fits(const SimGraph *g, const char *what, const char *holder, GError **err)
{
    size_t n = sim_graph_num_tasks(g);
    if (n <= SIM_GRAPH_EXPORT_MAX_TASKS)
        return true;
    g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT,
                "%s: the step has %zu tasks, more than %s holds (%d): fewer micro-batches or layers give one of its "
                "pattern", what, n, holder, SIM_GRAPH_EXPORT_MAX_TASKS);
    return false;
}
