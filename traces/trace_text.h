/* Whitespace-separated fields of a line of benchmark output, shared by the
 * readers of printed tables (nccl-tests, OSU). */
#ifndef TRACE_TEXT_H
#define TRACE_TEXT_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#define TRACE_MAX_TOKS 64

typedef struct {
    const char *s;
    int len;
} TraceTok;

/* Splits `s` at whitespace into at most TRACE_MAX_TOKS fields (pointing into
 * `s`); returns how many there were, which may be more. */
int trace_tokenize(const char *s, TraceTok *toks);
bool trace_tok_is(TraceTok t, const char *word);
/* Whole-token numbers: digits only (at most 19); an optional '-' then digits
 * (|v| <= 1e9); a finite double as printed by %f or %e. */
bool trace_tok_u64(TraceTok t, uint64_t *out);
bool trace_tok_int(TraceTok t, int *out);
bool trace_tok_double(TraceTok t, double *out);
/* The most a benchmark row can hold: a message of 1 TiB (the collective
 * command's limit too), a time of 1e10 us (3 hours for one call), a rate of
 * 1e9 MB/s (1 PB/s).  Beyond them a row is a typing error, not a run. */
#define TRACE_MAX_BYTES 1099511627776.0
#define TRACE_MAX_US 1e10
#define TRACE_MAX_MBS 1e9
/* Nor can a time or rate lie between 0 and 0.001: the benchmarks print two
 * or three decimals, so such a value (1e-300) is typed, not measured, and
 * its ratios to the model run to 300 digits. */
static inline bool trace_measure_ok(double v, double max) { return v == 0 || (v >= 1e-3 && v <= max); }
/* Nor can a row move its bytes faster than 1e14 B/s (100 TB/s, 50x an
 * NVLink 5 port): a time that says so is typed, not measured.  Nor can one
 * file hold more than TRACE_MAX_ROWS result rows (a sweep of every datatype
 * and size of every collective is a few thousand; -i 1K steps from 1 KiB to
 * 64 MiB, 65536): the rows and what is made of them stay bounded whatever
 * the file's length. */
#define TRACE_MAX_RATE_BPS 1e14
#define TRACE_MAX_ROWS 200000
static inline bool trace_rate_ok(double bytes, double time_us)
{
    return !(time_us > 0) || bytes / (time_us * 1e-6) <= TRACE_MAX_RATE_BPS;
}
/* Past what a launcher or a log collector put before a line of a
 * benchmark's output, several in a row: mpirun's "[1,0]<stdout>:", "[0] ",
 * torchrun's "[default0]:", srun -l's "12: ", an ISO 8601 time stamp
 * (kubectl logs --timestamps, cloud logging), Markdown's "> " quote, and where `words`, pdsh's or
 * clush's "node001: " (a file's "Warning: 2 GPUs ..." line is no prefix:
 * readers allow words where the first line has one, trace_words_prefixed). */
const char *trace_strip_prefix(const char *s, bool words);
/* Whether the line carries a "node001: " prefix before a '#' line: pdsh's
 * on every line of the output. */
bool trace_words_prefixed(const char *s);
/* "# key: value" with key [A-Za-z][A-Za-z0-9_-]*: the key's length, else 0. */
int trace_provenance_key(const char *s);
/* The whole file as text; missing, unreadable or binary (a NUL byte) files
 * are bad input.  Free with g_free. */
char *trace_read_text(const char *path, GError **err);
/* False, with "PATH:LINE: binary file (NUL byte)", where TEXT (LEN bytes
 * read from PATH) holds a NUL byte: a reader splitting it into lines would
 * stop there, silently. */
bool trace_text_has_no_nul(const char *path, const char *text, size_t len, GError **err);
/* "NAME:LINE: message", bad input. */
void trace_input_error(GError **err, const char *name, int line, const char *fmt, ...) G_GNUC_PRINTF(4, 5);

#endif
