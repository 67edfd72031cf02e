/* The task-graph executor.
 *
 * A task waits for its dependencies, then for its resource (a device's compute
 * stream, a communication stream): a resource runs one task at a time, and
 * ready tasks take it in FIFO order (ties in the order tasks were added).  A
 * task either takes a fixed time or moves bytes over a path of the flow
 * network.  A task bound to no resource (SIM_NO_RESOURCE) starts as soon as
 * its dependencies are done: collectives use these for their chunk flows. */
#ifndef SIM_EXEC_H
#define SIM_EXEC_H

#include "sim_net.h"

#include <glib.h>
#include <stdbool.h>
#include <stddef.h>

#define SIM_NO_RESOURCE (-1)

typedef struct SimGraph SimGraph;

SimGraph *sim_graph_new(void);
void sim_graph_free(SimGraph *g);
int sim_graph_resource(SimGraph *g, const char *name);
const char *sim_graph_resource_name(const SimGraph *g, int resource);
int sim_graph_num_resources(const SimGraph *g);
/* `name` is copied (tasks of one kind may share a name: it is interned). */
int sim_graph_task(SimGraph *g, const char *name, int resource, sim_time_t duration);
int sim_graph_flow_task(SimGraph *g, const char *name, int resource, double bytes, const int *links, int nlinks);
/* A flow task completes `delay` after its last byte arrives (protocol and
 * synchronisation overheads that are not bandwidth); for a timed task this
 * replaces its duration. */
void sim_graph_task_set_delay(SimGraph *g, int task, sim_time_t delay);
/* `after` starts only once `before` has finished. */
void sim_graph_depend(SimGraph *g, int before, int after);
/* Free-form label for timelines; `category` is interned, `bytes` informative. */
void sim_graph_task_set_info(SimGraph *g, int task, const char *category, double bytes);
size_t sim_graph_num_tasks(const SimGraph *g);

/* What a task works on, for timelines: a layer, a micro-batch, a gradient
 * bucket (-1: none, the default).  A default tag applies to every task added
 * while it is set, so that a builder tags whole passes at once. */
typedef enum { SIM_TAG_LAYER, SIM_TAG_MICRO_BATCH, SIM_TAG_BUCKET, SIM_NUM_TAGS } SimTag;
void sim_graph_task_set_tag(SimGraph *g, int task, SimTag tag, int value);
int sim_graph_task_tag(const SimGraph *g, int task, SimTag tag);
void sim_graph_set_default_tag(SimGraph *g, SimTag tag, int value);

/* Counter tracks for timelines (a device's allocated memory): a named
 * counter starts at `base` and changes by `delta` when a task starts
 * (at_end false) or ends.  Informative only: runs never read them. */
int sim_graph_counter(SimGraph *g, const char *name, double base);
void sim_graph_counter_change(SimGraph *g, int counter, int task, bool at_end, double delta);
int sim_graph_num_counters(const SimGraph *g);
const char *sim_graph_counter_name(const SimGraph *g, int counter);
double sim_graph_counter_base(const SimGraph *g, int counter);
int sim_graph_counter_num_changes(const SimGraph *g, int counter);
void sim_graph_counter_get_change(const SimGraph *g, int counter, int i, int *task, bool *at_end, double *delta);

/* Runs the graph from time 0 on a fresh engine; flow tasks need a network
 * (build it with sim_net_new on `e`), else pass net = NULL.  Returns the
 * makespan, or SIM_TIME_NEVER if a dependency cycle left tasks unrun. */
sim_time_t sim_graph_run(SimGraph *g, SimEngine *e, SimNet *net);
/* Whether the last run left a task unfinished because its end passed the
 * time range (2^64 ps, about 213 days), not for a cycle. */
bool sim_graph_overflowed(const SimGraph *g);
#define SIM_TIME_RANGE_TEXT "the simulator's time range (2^64 ps, about 213 days)"

/* Whether the graph is small enough to write out (a timeline, Chakra ET
 * files): at most SIM_GRAPH_EXPORT_MAX_TASKS tasks, else false with
 * SIM_ERROR_INPUT "WHAT: the step has N tasks, more than HOLDER holds".
 * About 2.7 KiB of memory each while a timeline is printed (8192
 * micro-batches of a pp-8 GPT-3 1.3B: 524,000 tasks, 1.4 GB; Chakra ET's
 * protobuf nodes as much), and past a million events trace viewers
 * (Perfetto, chrome://tracing) stall anyway. */
#define SIM_GRAPH_EXPORT_MAX_TASKS 1000000
bool sim_graph_export_fits(const SimGraph *g, const char *what, const char *holder, GError **err);

/* Progress on a terminal for a long command: after sim_progress_begin, a
 * graph run that is past 2 s of the command's wall time shows how many of
 * its tasks are done on stderr (one line, rewritten, only where stderr is a
 * terminal); sim_progress_end clears the line and turns it off.  Off by
 * default (library use, tests, sweeps' threads print nothing). */
void sim_progress_begin(const char *command);
void sim_progress_end(void);

/* Every task's start and end in the last run, into `times` (2 per task), and
 * back: a caller that reruns a graph with other durations returns to an
 * earlier run, durations set back, without running it again (a run is
 * deterministic: the times are what it would give). */
void sim_graph_save_times(const SimGraph *g, sim_time_t *times);
void sim_graph_restore_times(SimGraph *g, const sim_time_t *times);

sim_time_t sim_graph_task_start(const SimGraph *g, int task);
sim_time_t sim_graph_task_end(const SimGraph *g, int task);
const char *sim_graph_task_name(const SimGraph *g, int task);
const char *sim_graph_task_category(const SimGraph *g, int task);
double sim_graph_task_bytes(const SimGraph *g, int task);
int sim_graph_task_resource(const SimGraph *g, int task);
/* What a graph is made of, for callers that compare or partition graphs:
 * a task's duration (a flow task's delay), its links (a flow task's path;
 * 0 for a timed task), and the dependency edges in order of addition. */
sim_time_t sim_graph_task_duration(const SimGraph *g, int task);
int sim_graph_task_links(const SimGraph *g, int task, const int **links);
size_t sim_graph_num_edges(const SimGraph *g);
void sim_graph_edge(const SimGraph *g, size_t i, int *before, int *after);

#endif
