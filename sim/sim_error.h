/* Errors and JSON input shared by every module.
 *
 * Bad input is reported through a GError in SIM_ERROR with code
 * SIM_ERROR_INPUT and a message "FILE:LINE: what is wrong"; the CLI prints it
 * as "shardsim: MESSAGE" and exits 2.  Anything else is SIM_ERROR_INTERNAL
 * (exit 1). */
#ifndef SIM_ERROR_H
#define SIM_ERROR_H

#include <cjson/cJSON.h>
#include <glib.h>
#include <stdbool.h>

#define SIM_ERROR (sim_error_quark())
GQuark sim_error_quark(void);

typedef enum {
    SIM_ERROR_INPUT = 2,    /* the user's input is wrong: exit status 2 */
    SIM_ERROR_INTERNAL = 1, /* I/O failures and the like: exit status 1 */
} SimErrorCode;

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

/* Sets `err` to "FILE:LINE: <fmt>" where LINE is that of `item` in the
 * document's text (found from cJSON's parse order; 0 if unknown). */
void sim_json_error(const SimJsonDoc *doc, const cJSON *item, GError **err, const char *fmt, ...)
    G_GNUC_PRINTF(4, 5);

/* Typed field access with range checks.  Each returns false and sets `err`
 * (naming file and line) when the field is missing-but-required, of the wrong
 * type or outside [lo, hi].  A missing optional field leaves *out unchanged. */
bool sim_json_get_number(const SimJsonDoc *doc, const cJSON *obj, const char *key, bool required,
                         double lo, double hi, double *out, GError **err);
bool sim_json_get_int(const SimJsonDoc *doc, const cJSON *obj, const char *key, bool required,
                      long lo, long hi, long *out, GError **err);
/* An optional true/false; a missing or null field leaves *out unchanged. */
bool sim_json_get_bool(const SimJsonDoc *doc, const cJSON *obj, const char *key, bool *out, GError **err);
/* *out points into the document; it lives as long as the document. */
bool sim_json_get_string(const SimJsonDoc *doc, const cJSON *obj, const char *key, bool required,
                         const char **out, GError **err);

/* Parses a byte size such as "8", "8B", "64KiB", "64k", "1MB", "8GiB", "1PiB"
 * (K/M/G/T/P in either case, with or without the 'i': powers of 1024).  The
 * result must be a whole number of bytes, at most 2^53.  False on bad text. */
bool sim_parse_size(const char *text, double *bytes);

#endif
