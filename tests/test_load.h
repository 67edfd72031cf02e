/* Loading a topology preset and a group of all its ranks for the tests, with
 * the reason printed when it fails (shared by the collective, tuner, routes and
 * topology suites). */
#ifndef TEST_LOAD_H
#define TEST_LOAD_H

#include "collective.h"

#include <CUnit/Basic.h>
#include <stdio.h>

static inline Topo *load(const char *name, int nodes)
{
    GError *err = NULL;
    TopoOptions o = {.nodes = nodes};
    Topo *t = topo_load(name, &o, &err);
    if (!t)
        fprintf(stderr, "\n%s: %s\n", name, err ? err->message : "?");
    g_clear_error(&err);
    return t;
}

static inline CollGroup *group(const Topo *t)
{
    GError *err = NULL;
    CollGroup *g = coll_group_new(t, NULL, 0, NULL, &err);
    if (!g)
        fprintf(stderr, "\n%s\n", err ? err->message : "?");
    g_clear_error(&err);
    return g;
}

/* The all-reduce of BYTES with algorithm A and protocol P on G (it must cost). */
static inline CollCost allreduce_cost(const CollGroup *g, CollAlgo a, CollProto p, double bytes)
{
    CollCost c = {0};
    CU_ASSERT_TRUE_FATAL(coll_cost(g, COLL_ALLREDUCE, a, p, bytes, &c));
    return c;
}

#endif
