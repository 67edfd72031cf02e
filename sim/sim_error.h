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

/* Units for numbers in messages: bounds are stated the way a person reads
 * them ("between 1 B and 64 GiB"), never as 6.87195e+10. */
typedef enum {
    SIM_UNIT_NONE,        /* a plain number: integers printed whole */
    SIM_UNIT_BYTES,       /* B, KiB, MiB, ... (powers of 1024) */
    SIM_UNIT_BYTES_PER_S, /* B/s, kB/s, MB/s, GB/s, ... (powers of 1000) */
    SIM_UNIT_SECONDS,     /* ps, ns, us, ms, s */
    SIM_UNIT_FLOP,        /* FLOP, kFLOP, ... GFLOP, ... */
    SIM_UNIT_FLOP_PER_S,  /* FLOP/s, ..., TFLOP/s, PFLOP/s, EFLOP/s */
} SimUnit;

/* `v` with the largest prefix that keeps it >= 1, 4 significant digits:
 * "64 GiB", "1.5 TB/s", "500 ns".  Free with g_free. */
char *sim_format_quantity(double v, SimUnit unit);

/* Sets `err` (SIM_ERROR_INPUT, no position) and returns false unless `v` is
 * finite and within [lo, hi]: "WHAT must be between LO and HI, not V". */
bool sim_check_range(const char *what, double v, double lo, double hi, SimUnit unit, GError **err);

/* At most SIM_ECHO_MAX characters of a user's value, then "...": messages
 * echo what was given, never a whole 100 kB string.  SIM_ECHO(s) lives until
 * the end of the enclosing full expression's block (a compound literal). */
#define SIM_ECHO_MAX 64
#define SIM_ECHO_BUF (SIM_ECHO_MAX * 4 + 8)
const char *sim_echo_into(char *buf, const char *s);
#define SIM_ECHO(s) sim_echo_into((char[SIM_ECHO_BUF]){0}, (s))

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

/* Parses a byte size such as "8", "8B", "64KiB", "64k", "1MB", "8GiB", "1PiB"
 * (K/M/G/T/P in either case, with or without the 'i': powers of 1024).  The
 * result must be a finite whole number of bytes, at most 2^53.  False on bad
 * text; callers state their own physical bounds. */
bool sim_parse_size(const char *text, double *bytes);

#endif
