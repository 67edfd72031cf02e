/* The shardsim command line: one function per sub-command. */
#ifndef CLI_H
#define CLI_H

#include "sim_error.h"

#include <cjson/cJSON.h>

int cmd_version(int argc, char **argv);
int cmd_collective(int argc, char **argv);
int cmd_validate(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_sweep(int argc, char **argv);
int cmd_calibrate(int argc, char **argv);
int cmd_plan(int argc, char **argv);

/* Prints "shardsim: MESSAGE" on stderr, frees `err` and returns the exit
 * status: 2 for bad input, 1 for anything else. */
int cli_fail(GError *err);
/* Same for a message made here ("shardsim: FMT"), always bad input (2). */
int cli_usage_error(const char *fmt, ...) G_GNUC_PRINTF(1, 2);
/* Parses options; on error prints it with the usage hint and returns false. */
bool cli_parse_options(GOptionContext *ctx, int *argc, char ***argv);
/* A whole-number option given as text (so that 0 is never mistaken for "not
 * given"): 0 when it lies in [lo, hi], else prints "CMD: OPT must be ..." and
 * returns 2. */
int cli_parse_count(const char *cmd, const char *opt, const char *text, int lo, int hi, int *out);
/* Refuses (prints, returns 2) an output that names an input or another
 * output, compared by identity (device and inode, else the resolved path);
 * NULL entries are skipped.  0 when all are distinct. */
int cli_check_outputs(const char *cmd, const char *const *inputs, int nin, const char *const *outs,
                      const char *const *out_opts, int nout);
/* Prints `obj` as one JSON document on stdout and deletes it. */
void cli_print_json(cJSON *obj);

#endif
