/* Calibration of the collective model to a user's own measurements
 * (`shardsim calibrate`): the traces are read as `validate` reads them, the
 * parameters the rows are sensitive to are fitted by robust least squares on
 * log time (sim_fit.h), and the result is an overlay file that every command
 * accepts in place of models/presets/collectives.json.
 *
 * Reported: the errors before and after, and a cross-validated error (each
 * run predicted by a fit on the other runs; with one run, every other size
 * predicted by a fit on the rest), so over-fitting shows.  Parameters the data
 * cannot determine keep their priors and are reported as such. */
#ifndef CALIBRATE_H
#define CALIBRATE_H

#include "validate.h"

typedef struct Calibration Calibration;

/* `o->params` (a full file or an overlay; NULL: the default) is the prior.
 * The options' strings must outlive the calibration. */
Calibration *calib_new(const ValidateOptions *o);
void calib_free(Calibration *c);

bool calib_add_trace(Calibration *c, const char *path, GError **err);
bool calib_run(Calibration *c, GError **err);

/* After calib_run: the report {"topology", "traces", "n_rows", "method",
 * "before", "after", "cross_validated", "parameters", "unused"}. */
cJSON *calib_report_json(const Calibration *c);
/* The overlay: {"overlay", "topology", "parameters": {KEY: {"value",
 * "source", "log_sd"}}, "calibration": {coverage and residual quantiles}}. */
cJSON *calib_overlay_json(const Calibration *c);

/* The accelerator model: its efficiency parameters (accel_param_*) fitted
 * to tables, each either GEMM timings ("m,n,k,dtype,seconds", as
 * traces/capture's shardsim-gemm prints) or measured steps (columns
 * "scenario", a JSON file relative to the table, "step_time_s" or
 * "tokens_per_s", and any scenario keys by dotted path, which override the
 * file's); '#' lines are comments.  Cross-validated by file when there are
 * several, else by alternate rows. */
typedef struct AccelCalibration AccelCalibration;
AccelCalibration *calib_accel_new(const char *accel, GError **err);
void calib_accel_free(AccelCalibration *c);
bool calib_accel_add(AccelCalibration *c, const char *path, GError **err);
bool calib_accel_run(AccelCalibration *c, GError **err);
cJSON *calib_accel_report_json(const AccelCalibration *c);
/* How a steps table's override column sets its dotted key (a.b.c) in the
 * row's scenario: a JSON number, true, false, null or array as such, anything else
 * as a string; a component on the way that is not an object is replaced. */
void calib_accel_set_key(cJSON *root, const char *key, const char *cell);
/* The same for the cell of column KEY of table TABLE: a "model" or
 * "topology" file named by a relative path is relative to the table's
 * folder, as the "scenario" cell is, not to the working directory. */
void calib_accel_set_file_key(cJSON *root, const char *key, const char *cell, const char *table);
/* {"overlay", "base": PRESET, "parameters", "calibration"}: an accelerator
 * file every scenario accepts as "accelerator". */
cJSON *calib_accel_overlay_json(const AccelCalibration *c);

#endif
