/* libFuzzer harness: the nccl-tests / rccl-tests output reader. */
#include "nccltests.h"

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
    NcclTrace *t = nccltests_parse("fuzz.txt", text, &err);
    if (t) {
        /* every accessor on the result */
        for (size_t i = 0; i < nccltests_n_rows(t); i++) {
            const NcclTestsRow *r = nccltests_row(t, i);
            if (r->type)
                (void)strlen(r->type);
        }
        for (size_t i = 0; i < nccltests_n_headers(t); i++)
            (void)strlen(nccltests_header_value(t, i));
        for (size_t i = 0; i < nccltests_n_devices(t); i++)
            (void)strlen(nccltests_device(t, i));
        (void)nccltests_busbw_factor(nccltests_op(t), nccltests_n_ranks(t));
        (void)nccltests_n_hosts(t);
        (void)nccltests_max_ranks_per_host(t);
        (void)nccltests_gpus_per_thread(t);
        (void)nccltests_nccl_version(t);
        nccltests_free(t);
    } else if (!err || !strchr(err->message, ':')) {
        __builtin_trap(); /* failure without a FILE:LINE message */
    }
    g_clear_error(&err);
    g_free(text);
    return 0;
}
