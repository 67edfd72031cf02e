/* The error domain shared by every module.
 *
 * Bad input is reported through a GError in SIM_ERROR with code
 * SIM_ERROR_INPUT and a message "FILE:LINE: what is wrong"; the CLI prints it
 * as "shardsim: MESSAGE" and exits 2.  Anything else is SIM_ERROR_INTERNAL
 * (exit 1).  JSON input with lines is sim_json.h; numbers in units, bounds
 * and size strings are sim_units.h. */
#ifndef SIM_ERROR_H
#define SIM_ERROR_H

#include <glib.h>
#include <stdbool.h>
/* Only for traces/timeline.h, which still takes cJSON from here; goes once it
 * includes <cjson/cJSON.h> itself.  Everything else includes what it uses. */
#include <cjson/cJSON.h>

#define SIM_ERROR (sim_error_quark())
GQuark sim_error_quark(void);

typedef enum {
    SIM_ERROR_INPUT = 2,    /* the user's input is wrong: exit status 2 */
    SIM_ERROR_INTERNAL = 1, /* I/O failures and the like: exit status 1 */
} SimErrorCode;

/* At most SIM_ECHO_MAX characters of a user's value, then "...": messages
 * echo what was given, never a whole 100 kB string.  SIM_ECHO(s) lives until
 * the end of the enclosing full expression's block (a compound literal). */
#define SIM_ECHO_MAX 64
#define SIM_ECHO_BUF (SIM_ECHO_MAX * 4 + 8)
const char *sim_echo_into(char *buf, const char *s);
#define SIM_ECHO(s) sim_echo_into((char[SIM_ECHO_BUF]){0}, (s))

#endif
