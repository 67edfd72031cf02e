/* Chrome trace event JSON of a simulated step, for Perfetto (ui.perfetto.dev)
 * and chrome://tracing.
 *
 * Every task that ran becomes a complete event ("ph": "X") with ts and dur in
 * microseconds, its category as "cat", and args {"bytes", "layer",
 * "micro_batch", "bucket", "task"} (the tags a task has, sim_exec.h); its
 * name is the task's with those tags and bytes: "forward L3 mb2",
 * "grad_allreduce bucket 4 (25 MiB)".
 * A resource named "gpu3.compute" becomes thread "compute" of process "gpu3"
 * (a name without a dot is a process with one thread "main"); processes and
 * threads keep the order in which the graph's resources were made, and "M"
 * metadata events name and order them.  Tasks bound to no resource (the chunk
 * flows of collectives) go, when asked, to a process "network" with one track
 * per category, split into lanes "CATEGORY #k" so that events on one track
 * never overlap.  Tasks that never ran are left out and counted in
 * "otherData".
 *
 * A graph's counters (sim_graph_counter: "gpu3.memory") become counter
 * events ("ph": "C", args {"allocated_bytes"}) in their process, one at time
 * 0 and one at each time the value changes (frees before allocations at one
 * time), and an instant event ("ph": "i", "s": "p") named "memory peak
 * 27.73 GiB" at the first time the peak is reached; "otherData"
 * "counter_peaks" maps each counter's name to its peak.  Each dependency
 * between tasks on resources of different processes (a pipeline stage's
 * send to the next stage) is a flow arrow: "s" and "f" (with "bp": "e")
 * events of one "id", cat "pipeline", named after the sending task, at the
 * midpoints of the two slices; "otherData" "flow_arrows" counts them.
 *
 * Output is deterministic: same graph, byte-identical file. */
#ifndef TIMELINE_H
#define TIMELINE_H

#include "sim_error.h"
#include "sim_exec.h"

typedef struct {
    bool network; /* include the resource-less tasks (default true) */
} TimelineOptions;

/* The trace as a cJSON object {"traceEvents": [...], "displayTimeUnit": "ns",
 * "otherData": {...}}; `opt` NULL means defaults.  Call after sim_graph_run. */
cJSON *timeline_json(const SimGraph *g, const TimelineOptions *opt);

/* Writes timeline_json to `path` ("-" for stdout); I/O errors are
 * SIM_ERROR_INTERNAL. */
bool timeline_write(const SimGraph *g, const char *path, const TimelineOptions *opt, GError **err);

#endif
