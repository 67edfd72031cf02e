/* Sweeps: one scenario run over the cartesian product of value lists, each
 * point on a thread pool, results in point order (so the output does not
 * depend on completion order or the number of threads).
 *
 * An axis is "KEY=V1,V2,...": KEY is a dotted path into the scenario JSON
 * ("nodes", "parallelism.weight_update"); objects on the way are created.
 * Values that read as JSON numbers, true, false or null are those; anything
 * else is a string.  "..." continues a progression up to the value after it:
 * two numbers before it give a constant step ("8,16,...,64" is 8,16,24,...,64);
 * three or more give a constant ratio when their ratios agree
 * ("1,2,4,...,1024"), else a constant step when their differences agree.  The
 * end value must be a member of the progression.
 *
 * Points: the first axis varies slowest, the last fastest.  Point i's
 * scenario is the base with each axis's value set, then the coupled rules:
 *  - dp follows the scenario's one rule, as "shardsim run" does (see
 *    models/step.h): as given, else the replicas fill the point's machine,
 *    dp = ranks of the point's topology / (tp x pp); a note says which, and
 *    warns when nodes, tp or pp vary under a dp the base fixes;
 *  - with weak scaling, global_batch = (the base's global_batch / dp) x the
 *    point's dp, so each replica keeps its batch;
 *  - a list "weight_update" in the base that is not varied becomes the last
 *    axis, so that every point is a single run.
 * A point whose scenario is invalid (dp does not divide, batch not divisible,
 * unknown key...) gets an "error" instead of a result; the others still run. */
#ifndef SWEEP_H
#define SWEEP_H

#include "sim_dist.h"
#include "sim_json.h"

#define SWEEP_MAX_POINTS 100000

typedef struct Sweep Sweep;

/* Parses a value list ("1,2,4,...,64", "replicated,sharded") into a cJSON
 * array; errors (empty value, bad "...", repeated value) are SIM_ERROR_INPUT. */
cJSON *sweep_parse_values(const char *text, GError **err);

/* Sets the dotted `key` in `root` to `value` (taking ownership of it),
 * creating missing objects; an error when a component on the way exists but
 * is not an object (value is then freed). */
bool sweep_set_path(cJSON *root, const char *key, cJSON *value, GError **err);
/* What is wrong with a dotted key's shape: none, empty, an empty component
 * ("a..b", ".a"), or more than SWEEP_KEY_MAX_PARTS components (a scenario's
 * keys nest a few levels, not thousands); sweep_set_path and calibrate's
 * table columns each say it in their own words. */
#define SWEEP_KEY_MAX_PARTS 16
typedef enum { SWEEP_KEY_OK, SWEEP_KEY_EMPTY, SWEEP_KEY_EMPTY_PART, SWEEP_KEY_TOO_DEEP } SweepKeyShape;
SweepKeyShape sweep_key_shape(const char *key);
/* A dotted KEY into "model" where the scenario names its model (a preset or
 * file): the model becomes {"base": that name}, so that the key sets one of
 * its fields (model.seq_len on a preset); anything else is left alone. */
void sweep_model_by_name(cJSON *root, const char *key);

/* Loads the base scenario and checks that it parses as a scenario; its
 * errors name FILE:LINE. */
Sweep *sweep_load(const char *path, GError **err);
/* Same from text; `name` stands for the file. */
Sweep *sweep_parse(const char *name, const char *text, GError **err);
void sweep_free(Sweep *s);

/* Adds an axis "KEY=V1,V2,..."; a key given twice is an error. */
bool sweep_add_axis(Sweep *s, const char *spec, GError **err);
void sweep_set_weak_scaling(Sweep *s, bool weak);

/* Applies the implicit weight-update axis and checks the whole grid (size,
 * conflicting options, paths that cannot be set).  Call once after the axes
 * and before the functions below. */
bool sweep_prepare(Sweep *s, GError **err);

int sweep_num_points(const Sweep *s);
int sweep_num_axes(const Sweep *s);
const char *sweep_axis_key(const Sweep *s, int axis);
/* The axis's values (a cJSON array owned by the sweep). */
const cJSON *sweep_axis_values(const Sweep *s, int axis);
/* The axis whose values change the device count for plots: "nodes" when
 * varied, else "parallelism.dp", else -1. */
int sweep_device_axis(const Sweep *s);
/* Human-readable rules that were applied ("parallelism.dp follows nodes..."). */
const cJSON *sweep_notes(const Sweep *s);

/* A value as text: numbers with %.15g, strings as they are.  Free with g_free. */
char *sweep_value_text(const cJSON *v);
/* The value of `axis` at point i (owned by the sweep). */
const cJSON *sweep_point_value(const Sweep *s, int point, int axis);
/* The nodes point i runs on: its "nodes" value, the base's where not
 * varied, 1 where neither gives one (what its memory scales with). */
double sweep_point_nodes(const Sweep *s, int point);
/* "nodes=4, parallelism.weight_update=sharded"; free with g_free. */
char *sweep_point_label(const Sweep *s, int point);

/* The scenario of point i with the coupled rules applied; `derived` (may be
 * NULL) receives an object of the keys those rules set.  NULL and an error
 * (without a point prefix) when the rules cannot be applied. */
cJSON *sweep_point_scenario(const Sweep *s, int point, cJSON **derived, GError **err);

/* Runs point i: {"index", "values", ["derived"], "result" | "error"}. */
cJSON *sweep_run_point(const Sweep *s, int point);

/* Called on the calling thread as points finish. */
typedef void (*SweepProgress)(int done, int total, void *user);

/* Calls fn(i, user) for i in [0, n) on `jobs` threads (<= 0: the number of
 * processors; 1: here, in order); returns when all are done.  fn writes its
 * result to slot i, so what comes out is in index order whatever the threads
 * do (sweep_run and the plan's screening). */
typedef void (*SweepMapFn)(int i, void *user);
void sweep_map(int n, int jobs, SweepMapFn fn, void *user, SweepProgress progress, void *puser);

/* Runs every point on `jobs` threads (<= 0: the number of processors).
 * Returns {"scenario", "vary": {KEY: [values]}, "notes": [...],
 * "points": [...], "ran": N, "failed": N}. */
cJSON *sweep_run(const Sweep *s, int jobs, SweepProgress progress, void *user);
/* The same over the ranks of `d` (sim_dist.h): each rank runs its block of
 * points on `jobs` threads, every rank returns the whole object, identical
 * to sweep_run's.  NULL + err only when the gather fails. */
cJSON *sweep_run_dist(const Sweep *s, SimDist *d, int jobs, SweepProgress progress, void *user, GError **err);

/* Scaling curves from a sweep_run object: x = devices, one curve per
 * combination of the axes other than the device axis (all points in one curve
 * when there is no other axis); points that failed are left out; sorted by
 * devices.  efficiency = (samples/s per device) / that of the curve's
 * smallest device count. */
typedef struct {
    char *label;
    int n;
    double *devices, *step_time, *throughput, *efficiency, *memory;
} SweepCurve;

SweepCurve *sweep_curves(const Sweep *s, const cJSON *run, int *ncurves);
void sweep_curves_free(SweepCurve *c, int ncurves);

/* Output files of a sweep_run object.  The CSV has one row per point (RFC
 * 4180): the axes, then devices, dp, tp, pp, global_batch, step_time_s,
 * samples_per_s, tokens_per_s, mfu, flops_per_device,
 * memory_per_device_bytes, fits, error; a file that cannot be written is
 * SIM_ERROR_INTERNAL.  The plots (.png or .svg) draw the curves above and
 * each point's memory per device; no point that ran is SIM_ERROR_INPUT. */
bool sweep_write_csv(const Sweep *s, const cJSON *run, const char *path, GError **err);
bool sweep_plot_scaling(const Sweep *s, const cJSON *run, const char *path, GError **err);
bool sweep_plot_memory(const Sweep *s, const cJSON *run, const char *path, GError **err);

#endif
