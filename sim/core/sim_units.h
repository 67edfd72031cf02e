/* Numbers in units: quantities printed the way a person reads them, bounds
 * checked with a message that states them so, and byte sizes read from text. */
#ifndef SIM_UNITS_H
#define SIM_UNITS_H

#include "sim_error.h"

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

/* Parses a byte size such as "8", "8B", "64KiB", "64k", "1MB", "8GiB", "1PiB"
 * (K/M/G/T/P in either case, with or without the 'i': powers of 1024).  The
 * result must be a finite whole number of bytes, at most 2^53.  False on bad
 * text; callers state their own physical bounds. */
bool sim_parse_size(const char *text, double *bytes);

#endif
