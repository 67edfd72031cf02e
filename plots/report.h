/* One self-contained HTML page per answer (`--report out.html` on run,
 * sweep, validate; plan can call it the same way): the inputs, the tables,
 * the SVG plots inline, the warnings, the sources of every preset used, and
 * the command's --json output embedded as
 *   <script type="application/json" id="shardsim-json">...</script>
 * so that a reader (or a test) can compare the page's numbers with it.
 *
 * The page has no external assets and no JavaScript: CSS inline, SVG
 * inline (their prolog dropped, <script> elements and event attributes
 * removed, ids prefixed per plot so that two plots never clash).  All text
 * is escaped for HTML; invalid UTF-8 is repaired.  Output is deterministic.
 *
 * Table cells that show a number carry where it came from:
 *   <td class="num" data-row="I" data-key="KEY" data-value="V" data-scale="S">
 * V is the JSON number as --json prints it (cJSON), the text shown is
 * V x S with the column's decimals; the table's data-source attribute is
 * the dotted path of its rows in the embedded JSON ("" for the whole object
 * as one row).
 *
 * Typical use (plan, in one line per part):
 *   Report *r = report_new("shardsim plan: gpt3-175b");
 *   report_add_inputs(r, argc, argv, scenario_json);
 *   report_add_table(r, "Plans", json, "plans", cols, G_N_ELEMENTS(cols));
 *   report_add_svg(r, "Step time", "plot.svg");
 *   report_add_warnings(r, cJSON_GetObjectItem(json, "warnings"));
 *   report_add_preset_sources(r, "models/presets/accelerators", "accelerator", "a100-80gb");
 *   report_set_json(r, json);
 *   ok = report_write(r, "out.html", &err);
 *   report_free(r); */
#ifndef REPORT_H
#define REPORT_H

#include "sim_error.h"

#include <cjson/cJSON.h>

typedef struct Report Report;

typedef struct {
    const char *heading; /* with its unit: "step time (s)" */
    const char *key;     /* dotted path in a row object: "memory_per_device_bytes.total", "points.0" */
    double scale;        /* shown = value x scale (0: 1), e.g. 1/2^30 for GiB */
    int decimals;        /* decimals shown; < 0: 6 significant digits */
} ReportColumn;

Report *report_new(const char *title);
void report_free(Report *r);

/* The command line (argv[0..argc-1], shell-quoted) and, when not NULL, an
 * input document shown as JSON (the scenario). */
void report_add_inputs(Report *r, int argc, char **argv, const cJSON *input);
/* A table of `rows`: a JSON array of objects, or one object as one row,
 * found at `source` in the embedded JSON.  Strings and booleans are shown
 * as text, a missing value as "-". */
void report_add_table(Report *r, const char *caption, const cJSON *rows, const char *source,
                      const ReportColumn *cols, int ncols);
/* The SVG file at `path` (gnuplot's svg terminal), inline; a file that
 * cannot be read or is no SVG becomes a warning on the page. */
void report_add_svg(Report *r, const char *caption, const char *path);
/* Warnings: a JSON array of strings (others are skipped); NULL adds none. */
void report_add_warnings(Report *r, const cJSON *warnings);
void report_add_warning(Report *r, const char *text);
/* Every string whose key begins with "source", at any depth, of the JSON
 * file `path`, listed under `label`; an unreadable file is a warning.  The
 * same file twice is listed once. */
void report_add_sources(Report *r, const char *label, const char *path);
/* The same for a preset (SUBDIR and NAME as sim_data_resolve); a name that
 * is no preset (an inline model) adds nothing. */
void report_add_preset_sources(Report *r, const char *subdir, const char *label, const char *name_or_path);
/* The --json output to embed (copied; the last call wins). */
void report_set_json(Report *r, const cJSON *json);

/* Writes the page; I/O errors are SIM_ERROR_INTERNAL. */
bool report_write(const Report *r, const char *path, GError **err);

/* The dotted path `key` ("a.b", "points.3.result") in `o`; NULL if absent. */
const cJSON *report_json_at(const cJSON *o, const char *key);

#endif
