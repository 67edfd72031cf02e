/* The gnuplot job shared by plot.c and plot_compare.c: a script and its
 * data files in a private directory, run once and copied into place
 * (plot_job.c).  Internal to plots/. */
#ifndef PLOT_INTERNAL_H
#define PLOT_INTERNAL_H

#include "plot.h"

#include <glib.h>

#define GIB 1073741824.0

/* One plot being prepared: a script and its data files in a private temporary
 * directory.  gnuplot writes into that directory too, and the picture is
 * copied to the caller's path only once gnuplot has succeeded, so a failure
 * never leaves a half-written file and the caller's path never reaches
 * gnuplot's parser. */
typedef struct {
    char *dir;
    GString *script;
    GPtrArray *files; /* names inside dir, for clean-up */
    const char *ext;
} Job;

/* `s` as a gnuplot single-quoted string; `v` as a number gnuplot reads back
 * exactly (NaN as a missing point). */
void plot_append_quoted(GString *out, const char *s);
void plot_append_number(GString *out, double v);

/* A job for `path` (.png or .svg) at width x height pixels; NULL with
 * SIM_ERROR_INPUT for another extension. */
Job *plot_job_begin(const char *path, int width, int height, GError **err);
void plot_job_free(Job *j);
/* Writes `data` to a new file of the job; its quoted name for the script. */
const char *plot_job_data(Job *j, const GString *data, GError **err);
/* Runs gnuplot on the script and copies the picture to `path`. */
bool plot_job_run(Job *j, const char *path, GError **err);

/* A point a plot can draw: x > 0 and finite, y finite (and > 0 on a log axis). */
bool plot_point_valid(double x, double y, bool logy);

#endif
