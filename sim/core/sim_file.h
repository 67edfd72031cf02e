/* Reading one input file whole: size caps, regular files only, "-" for
 * standard input; every reading error is SIM_ERROR_INPUT (exit 2), named by
 * file.  Writing one output whole, without replacing a device or a link.
 * The cells of a line of CSV, as tables are read. */
#ifndef SIM_FILE_H
#define SIM_FILE_H

#include <glib.h>
#include <stddef.h>

/* The caps: JSON inputs (scenarios, presets, topologies, parameters) are
 * hand-written or generated descriptions, far below 64 MiB; traces (text logs
 * of benchmarks) may be long, but not over 1 GiB. */
#define SIM_FILE_JSON_MAX ((size_t)64 << 20)
#define SIM_FILE_TRACE_MAX ((size_t)1 << 30)

/* Reads `path` ("-": standard input, once per process) whole and returns its
 * bytes NUL-terminated (g_free them), their count in *len (may be NULL).
 * Refuses anything but a regular file by name, and more than `cap` bytes;
 * `what` names the kind of input in the message ("JSON input"). */
char *sim_file_read(const char *path, size_t cap, const char *what, size_t *len, GError **err);

/* Writes one output whole.  A new or regular file is replaced atomically
 * (g_file_set_contents: a temporary file renamed over it); an existing
 * device or FIFO (/dev/null, /dev/full, a pipe) is written in place, since
 * renaming over it would, run as root, turn /dev/null into a regular file.
 * Errors are GLib's file errors (G_FILE_ERROR), with the path and errno's
 * text: the caller says which output it was. */
gboolean sim_file_write(const char *path, const char *data, gssize len, GError **err);

/* The name messages use for `path`: "<stdin>" for "-". */
const char *sim_file_display_name(const char *path);

/* The cells of one line of CSV (RFC 4180 within a line): split at commas,
 * spaces around a cell dropped; a cell in double quotes may hold commas,
 * "" for a quote.  NULL with `err` (no position: the caller's line) where a
 * quote is not closed on the line or text follows a closing quote. */
gchar **sim_csv_fields(const char *line, GError **err);

#endif
