/* Test helper shared by the MPI tests: validate one published trace in
 * tests/data/traces on a preset and print its median errors. */
#ifndef TEST_VALIDATED_H
#define TEST_VALIDATED_H

#include "validate.h"
#include "test_main.h"

#include <stdio.h>

/* The trace FILE (relative to tests/data/traces) on the topology TOPO with
 * RANKS ranks on NODES nodes (0: from the trace); its errors. */
static inline ValidateErrors validated_on(const char *topo, int ranks, int nodes, const char *file)
{
    ValidateOptions o = {.topology = topo, .op = -1, .algo = COLL_ALGO_AUTO, .proto = COLL_PROTO_AUTO,
                         .ranks = ranks, .nodes = nodes};
    Validation *v = validate_new(&o);
    GError *err = NULL;
    char *path = g_strconcat(SHARDSIM_SOURCE_DIR "/tests/data/traces/", file, NULL);
    bool ok = validate_trace(v, path, &err);
    if (!ok)
        fprintf(stderr, "unexpected: %s\n", err->message);
    CU_ASSERT_TRUE(ok);
    g_clear_error(&err);
    ValidateErrors e = validate_errors(v);
    printf("\n  %s: median %.1f%% (>= 1 MiB %.1f%%, below %.1f%%)", file, e.median, e.median_large, e.median_small);
    validate_free(v);
    g_free(path);
    return e;
}

#endif
