/* The shardsim command line: one function per sub-command. */
#ifndef CLI_H
#define CLI_H

#include "sim_dist.h"
#include "report.h"
#include "sim_error.h"

#include <cjson/cJSON.h>

int cmd_version(int argc, char **argv);
int cmd_collective(int argc, char **argv);
int cmd_validate(int argc, char **argv);
/* validate --kineto (cmd_validate_kineto.c) */
int cmd_validate_kineto(const char *profile, const char *accel, const char *scenario, const char *gemm_table, bool json);
int cmd_run(int argc, char **argv);
int cmd_sweep(int argc, char **argv);
int cmd_calibrate(int argc, char **argv);
int cmd_plan(int argc, char **argv);

/* Prints "shardsim: MESSAGE" on stderr, frees `err` and returns the exit
 * status: 2 for bad input, 1 for anything else. */
int cli_fail(GError *err);
/* --mpi or not: the ranks to spread points over (sim_dist.h).  On ranks
 * other than 0, stdout and stderr go to /dev/null: rank 0 speaks for all. */
SimDist *cli_dist_start(gboolean use_mpi, GError **err);
/* Same for a message made here ("shardsim: FMT"), always bad input (2). */
int cli_usage_error(const char *fmt, ...) G_GNUC_PRINTF(1, 2);
/* "shardsim: warning: FMT" on stderr: the run goes on (stdout untouched). */
void cli_warn(const char *fmt, ...) G_GNUC_PRINTF(1, 2);
/* Warns when `code` (an NCCL/RCCL version code) is past the newest version of
 * `lib` (CollLibrary) the model follows, which it is then modelled as. */
void cli_warn_version(const char *cmd, int lib, int code);
/* What the fabric above the NICs did to n predictions (their CollCost
 * fabric_factor, the first at `factor` and each next `stride` bytes on, as
 * in an array of rows): "the fabric's switch-to-switch links slow the
 * bandwidth term xA-B at K of N sizes", with "; the fabric above the NICs
 * not routed ..." where some were too many flows to route; NULL where
 * neither (free with g_free). */
char *cli_fabric_note(const double *factor, size_t n, size_t stride);
/* Parses options (`entries`: the context's main entries, which say the
 * options that take a value, so that "-j1" reads as "-j 1"); on error prints
 * it with the usage hint and returns false. */
bool cli_parse_options(GOptionContext *ctx, const GOptionEntry *entries, int *argc, char ***argv);
/* A whole-number option given as text (so that 0 is never mistaken for "not
 * given"): 0 when it lies in [lo, hi], else prints "CMD: OPT must be ..." and
 * returns 2. */
int cli_parse_count(const char *cmd, const char *opt, const char *text, int lo, int hi, int *out);
/* Refuses an output that cannot be written, a folder or in a folder that is
 * not there (prints, returns 1), and one that names an input or another
 * output, compared by identity (device and inode, else the resolved path;
 * prints, returns 2).  NULL entries are skipped.  0 when all are fine. */
int cli_check_outputs(const char *cmd, const char *const *inputs, int nin, const char *const *outs,
                      const char *const *out_opts, int nout);
/* Prints `obj` as one JSON document on stdout and deletes it. */
void cli_print_json(cJSON *obj);

/* cli_report.c: --report FILE.html.  0 when `path` is NULL or ends in
 * .html, else prints why and returns 2. */
int cli_report_check(const char *cmd, const char *path);
/* "shardsim" and the sub-command's argv (argv[0] its name), copied before
 * the options are parsed; free with g_strfreev. */
char **cli_command_line(int argc, char **argv);
/* Draws a plot with `draw` into a temporary SVG and inlines it; a plot that
 * fails is a warning on the page. */
typedef bool (*CliPlotFn)(const char *svg_path, const void *user, GError **err);
void cli_report_plot(Report *r, const char *caption, CliPlotFn draw, const void *user);
bool cli_report_memory_plot(const char *svg_path, const void *step_results, GError **err);
/* The sources of a step's scenario file and presets (the scenario's keys,
 * else the result's config names) and of its collective parameters (only
 * with a scenario_path: without, a sweep point's presets). */
void cli_report_step_sources(Report *r, const char *scenario_path, const cJSON *scenario, const cJSON *config);
/* Step results' tables: `rows` (an array of results or one) at `source`. */
void cli_report_step_tables(Report *r, const cJSON *rows, const char *source);
/* A page titled "shardsim CMD: NAME" whose inputs are the command line and
 * the scenario file, parsed into *scenario (NULL when unreadable; the
 * caller deletes it). */
Report *cli_report_open(const char *cmd, const char *name, char **cmdline, const char *scenario_path,
                        cJSON **scenario);
/* Writes and frees the page: 0, or cli_fail's status. */
int cli_report_write(Report *r, const char *path);

#endif
