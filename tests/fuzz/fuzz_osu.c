/* libFuzzer harness: the OSU micro-benchmarks output reader. */
#include "osu.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = g_malloc(size + 1);
    memcpy(text, data, size);
    text[size] = 0;
    GError *err = NULL;
    OsuTrace *t = osu_parse("fuzz.txt", text, &err);
    if (t) {
        if (osu_n_rows(t) == 0)
            __builtin_trap(); /* success promises rows */
        for (size_t i = 0; i < osu_n_rows(t); i++) {
            const OsuRow *r = osu_row(t, i);
            double v = osu_metric(t) == OSU_LATENCY ? r->avg_us : r->bw_mbs;
            if (!(v >= 0) || !isfinite(v))
                __builtin_trap(); /* the measured value of the table's kind */
            if (r->datatype)
                (void)strlen(r->datatype);
        }
        for (size_t i = 0; i < osu_n_headers(t); i++)
            (void)strlen(osu_header_value(t, i));
        if (osu_title(t))
            (void)strlen(osu_title(t));
        osu_free(t);
    } else if (!err || !g_str_has_prefix(err->message, "fuzz.txt:")) {
        __builtin_trap(); /* failure without a FILE:LINE message */
    }
    g_clear_error(&err);
    g_free(text);
    return 0;
}
