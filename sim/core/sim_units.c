/* Numbers in units, for people and from people: quantities printed with a
 * prefix ("64 GiB", "1.5 TB/s"), bounds messages ("WHAT must be between LO and
 * HI, not V") and byte sizes read from text ("25MiB"). */
#include "sim_units.h"

#include <math.h>
#include <string.h>

char *sim_format_quantity(double v, SimUnit unit)
{
    static const char *const bytes[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    static const char *const rate[] = {"B/s", "kB/s", "MB/s", "GB/s", "TB/s", "PB/s", "EB/s"};
    static const char *const flop[] = {"FLOP", "kFLOP", "MFLOP", "GFLOP", "TFLOP", "PFLOP", "EFLOP"};
    static const char *const flops[] = {"FLOP/s", "kFLOP/s", "MFLOP/s", "GFLOP/s", "TFLOP/s", "PFLOP/s", "EFLOP/s"};
    static const char *const secs[] = {"ps", "ns", "us", "ms", "s"};
    if (!isfinite(v))
        return g_strdup(isnan(v) ? "nan" : v > 0 ? "infinity" : "-infinity");
    if (unit == SIM_UNIT_NONE) {
        if (v == floor(v) && fabs(v) < 1e15)
            return g_strdup_printf("%.0f", v);
        return g_strdup_printf("%.6g", v);
    }
    const char *const *names = unit == SIM_UNIT_BYTES         ? bytes
                               : unit == SIM_UNIT_BYTES_PER_S ? rate
                               : unit == SIM_UNIT_FLOP        ? flop
                               : unit == SIM_UNIT_FLOP_PER_S  ? flops
                                                              : secs;
    int n = unit == SIM_UNIT_SECONDS ? 5 : 7;
    double base = unit == SIM_UNIT_BYTES ? 1024 : 1000;
    if (unit == SIM_UNIT_SECONDS && fabs(v) > 1e15) /* past the scale's top: in seconds, as written */
        return g_strdup_printf("%.4g s", v);
    double scaled = unit == SIM_UNIT_SECONDS ? fabs(v) * 1e12 : fabs(v);
    int k = 0;
    while (k + 1 < n && scaled >= base) {
        scaled /= base;
        k++;
    }
    if (v == 0)
        k = unit == SIM_UNIT_SECONDS ? 4 : 0;
    return g_strdup_printf("%s%.4g %s", v < 0 ? "-" : "", scaled, names[k]);
}

bool sim_check_range(const char *what, double v, double lo, double hi, SimUnit unit, GError **err)
{
    if (isfinite(v) && v >= lo && v <= hi)
        return true;
    char *a = sim_format_quantity(lo, unit), *b = sim_format_quantity(hi, unit), *c = sim_format_quantity(v, unit);
    if (!strcmp(c, a) || !strcmp(c, b)) { /* rounded onto a bound it is past: the value in full */
        char *full = g_strdup_printf("%s (%.17g)", c, v);
        g_free(c);
        c = full;
    }
    g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "%s must be between %s and %s, not %s", what, a, b, c);
    g_free(a);
    g_free(b);
    g_free(c);
    return false;
}

bool sim_parse_size(const char *text, double *bytes)
{
    if (!text || !*text)
        return false;
    char *end = NULL;
    double v = g_ascii_strtod(text, &end);
    if (end == text || !isfinite(v) || v < 0)
        return false;
    double mult = 1;
    switch (*end) {
    case 'K': case 'k': mult = 1024.0; end++; break;
    case 'M': case 'm': mult = 1024.0 * 1024; end++; break;
    case 'G': case 'g': mult = 1024.0 * 1024 * 1024; end++; break;
    case 'T': case 't': mult = 1024.0 * 1024 * 1024 * 1024; end++; break;
    case 'P': case 'p': mult = 1024.0 * 1024 * 1024 * 1024 * 1024; end++; break;
    default: break;
    }
    if (mult > 1 && *end == 'i')
        end++;
    if (*end == 'B')
        end++;
    v *= mult;
    /* whole bytes, and small enough that a double holds every one exactly */
    if (*end || v != floor(v) || v > 9007199254740992.0)
        return false;
    *bytes = v;
    return true;
}
