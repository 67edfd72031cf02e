/* Chrome trace event JSON of a simulated step, for Perfetto (ui.perfetto.dev)
 * and chrome://tracing.
 *
 * Every task that ran becomes a complete event ("ph": "X") with ts and dur in
 * microseconds, its name, its category as "cat", and args {"bytes", "task"}.
 * A resource named "gpu3.compute" becomes thread "compute" of process "gpu3"
 * (a name without a dot is a process with one thread "main"); processes and
 * threads keep the order in which the graph's resources were made, and "M"
 * metadata events name and order them.  Tasks bound to no resource (the chunk
 * flows of collectives) go, when asked, to a process "network" with one track
 * per category, split into lanes "CATEGORY #k" so that events on one track
 * never overlap.  Tasks that never ran are left out and counted in
 * "otherData".
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
