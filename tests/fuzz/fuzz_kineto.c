/* libFuzzer harness: the PyTorch profiler (Kineto) reader, the comparison
 * with the accelerator model and the GEMM table. */
#include "kineto.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static Accel *acc;
    if (!acc && !(acc = accel_load("a100-80gb", NULL)))
        __builtin_trap();
    GError *err = NULL;
    KinetoProfile *p = kineto_parse("fuzz.json", (const char *)data, size, &err);
    if (p) {
        cJSON *r = kineto_compare(p, acc);
        const cJSON *c;
        cJSON_ArrayForEach(c, cJSON_GetObjectItem(r, "classes"))
        {
            double m = cJSON_GetObjectItem(c, "measured_s")->valuedouble;
            double cov = cJSON_GetObjectItem(c, "measured_covered_s")->valuedouble;
            if (!(m >= 0) || !(cov <= m * (1 + 1e-9) + 1e-300))
                __builtin_trap(); /* covered time is part of the measured */
        }
        char *t = cJSON_PrintUnformatted(r);
        cJSON_free(t);
        cJSON_Delete(r);
        g_free(kineto_gemm_table(p));
        kineto_free(p);
    } else if (!err || err->code != SIM_ERROR_INPUT || !g_str_has_prefix(err->message, "fuzz.json:")) {
        __builtin_trap();
    }
    g_clear_error(&err);
    return 0;
}
