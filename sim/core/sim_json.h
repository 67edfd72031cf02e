/* JSON input that remembers where each value was, so that semantic checks
 * long after parsing can name FILE:LINE; typed getters with bounds. */
#ifndef SIM_JSON_H
#define SIM_JSON_H

#include "sim_units.h"

#include <cjson/cJSON.h>

/* A JSON document with the file it came from, so that later semantic checks
 * can name FILE:LINE of the offending value. */
typedef struct SimJsonDoc SimJsonDoc;

/* Reads and parses a JSON file; a syntax error names the line and column. */
SimJsonDoc *sim_json_load_file(const char *path, GError **err);
/* Parses text held in memory; `name` stands in for the file name in messages. */
SimJsonDoc *sim_json_parse(const char *name, const char *text, size_t len, GError **err);
void sim_json_free(SimJsonDoc *doc);
const cJSON *sim_json_root(const SimJsonDoc *doc);
const char *sim_json_path(const SimJsonDoc *doc);

/* The line of `item` in the document's text; 0 if it is not the document's. */
int sim_json_line(const SimJsonDoc *doc, const cJSON *item);

/* False, with the error at its line, where the string `item` (a file or a
 * preset named inside a JSON file) is "-": only a command line's own files
 * may be standard input, read once; a second reader finds it empty, or
 * waits on a pipe that stays open.  True otherwise. */
bool sim_json_not_stdin(const SimJsonDoc *doc, const cJSON *item, GError **err);

/* Sets `err` to "FILE:LINE: <fmt>" where LINE is that of `item` in the
 * document's text (found from cJSON's parse order; 0 if unknown). */
void sim_json_error(const SimJsonDoc *doc, const cJSON *item, GError **err, const char *fmt, ...)
    G_GNUC_PRINTF(4, 5);

/* Typed field access with range checks.  Each returns false and sets `err`
 * (naming file and line) when the field is missing-but-required, of the wrong
 * type, not finite or outside [lo, hi].  A missing optional field leaves *out
 * unchanged. */
bool sim_json_get_number(const SimJsonDoc *doc, const cJSON *obj, const char *key, bool required,
                         double lo, double hi, double *out, GError **err);
/* Same, bounds stated in `unit` in the message. */
bool sim_json_get_quantity(const SimJsonDoc *doc, const cJSON *obj, const char *key, bool required, double lo,
                           double hi, SimUnit unit, double *out, GError **err);
/* A byte count given as a number or a size string ("25MiB", see
 * sim_parse_size), within [lo, hi] bytes. */
bool sim_json_get_size(const SimJsonDoc *doc, const cJSON *obj, const char *key, bool required, double lo,
                       double hi, double *out, GError **err);
bool sim_json_get_int(const SimJsonDoc *doc, const cJSON *obj, const char *key, bool required,
                      long lo, long hi, long *out, GError **err);
/* An optional true/false; a missing or null field leaves *out unchanged. */
bool sim_json_get_bool(const SimJsonDoc *doc, const cJSON *obj, const char *key, bool *out, GError **err);
/* *out points into the document; it lives as long as the document. */
bool sim_json_get_string(const SimJsonDoc *doc, const cJSON *obj, const char *key, bool required,
                         const char **out, GError **err);

/* Rejects a key of `obj` outside `allowed` (NULL-terminated) at its line,
 * naming the keys known there: a misspelt key must not silently leave a
 * default in place.  Keys for which `skip` (when given) is true pass. */
bool sim_json_only_keys(const SimJsonDoc *doc, const cJSON *obj, const char *const *allowed,
                        bool (*skip)(const char *key), GError **err);
/* A required, non-empty "source" string: every number in a data file names
 * where it comes from. */
bool sim_json_need_source(const SimJsonDoc *doc, const cJSON *obj, GError **err);

#endif
