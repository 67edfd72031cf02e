/* libFuzzer harness: the nccl-tests / rccl-tests output reader, as one run
 * and as runs. */
#include "nccltests.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_run(const NcclTrace *t)
{
    if (nccltests_n_rows(t) == 0)
        __builtin_trap(); /* a run has rows */
    for (size_t i = 0; i < nccltests_n_rows(t); i++) {
        const NcclTestsRow *r = nccltests_row(t, i);
        if (r->type)
            (void)strlen(r->type);
        if (i > 0 && r->size_bytes <= nccltests_row(t, i - 1)->size_bytes)
            __builtin_trap(); /* sizes grow inside a run */
        if (!(r->time_us >= 0))
            __builtin_trap();
    }
    for (size_t i = 0; i < nccltests_n_headers(t); i++)
        (void)strlen(nccltests_header_value(t, i));
    for (size_t i = 0; i < nccltests_n_devices(t); i++)
        (void)strlen(nccltests_device(t, i));
    if (nccltests_n_ranks(t) < 0 || nccltests_n_hosts(t) < 0)
        __builtin_trap();
    (void)nccltests_busbw_factor(nccltests_op(t), nccltests_n_ranks(t));
    (void)nccltests_max_ranks_per_host(t);
    (void)nccltests_gpus_per_thread(t);
    (void)nccltests_nccl_version(t);
    (void)strlen(nccltests_name(t));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = g_malloc(size + 1);
    memcpy(text, data, size);
    text[size] = 0;
    GError *err = NULL;
    NcclRuns *runs = nccltests_parse_runs("fuzz.txt", text, &err);
    if (runs) {
        NcclTestsOp op = nccltests_op(nccltests_runs_get(runs, 0));
        for (size_t i = 0; i < nccltests_runs_n(runs); i++) {
            const NcclTrace *t = nccltests_runs_get(runs, i);
            check_run(t);
            if (op && nccltests_op(t) && nccltests_op(t) != op)
                __builtin_trap(); /* one collective per file */
        }
        nccltests_runs_free(runs);
    } else if (!err || !strchr(err->message, ':')) {
        __builtin_trap(); /* failure without a FILE:LINE message */
    }
    g_clear_error(&err);
    /* the one-run reader agrees: a file of one run reads, others do not */
    NcclTrace *t = nccltests_parse("fuzz.txt", text, &err);
    if (t) {
        check_run(t);
        nccltests_free(t);
    } else if (!err || !strchr(err->message, ':')) {
        __builtin_trap();
    }
    g_clear_error(&err);
    g_free(text);
    return 0;
}
