/* Loading a workload preset for the workload suites, the reason printed
 * where it does not load (test_workload, test_workload_attn). */
#ifndef TEST_WORKLOAD_H
#define TEST_WORKLOAD_H

#include "workload.h"

#include <stdio.h>

static inline Workload *load(const char *name)
{
    GError *err = NULL;
    Workload *w = workload_load(name, &err);
    if (!w)
        fprintf(stderr, "%s: %s\n", name, err->message);
    g_clear_error(&err);
    return w;
}

#endif
