/* Loading a topology preset and a group of all its ranks for the tests, with
 * the reason printed when it fails (shared by the collective, tuner, routes and
 * topology suites). */
#ifndef TEST_LOAD_H
#define TEST_LOAD_H

#include "collective.h"
#include "sim_data.h"
#include "test_tmpfile.h"

#include <CUnit/Basic.h>
#include <stdio.h>
#include <string.h>

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

/* Preset NAME with its first FROM replaced by TO, loaded at NODES nodes from
 * a temporary copy (a variant of a published machine: another GPU, another
 * NIC transport); NULL where FROM is absent or the edit does not load. */
static inline Topo *load_edited(const char *name, const char *from, const char *to, int nodes)
{
    char *rel = g_strdup_printf("topologies/presets/%s.json", name);
    char *path = sim_data_dir(rel), *text = NULL, *at = NULL;
    Topo *t = NULL;
    if (g_file_get_contents(path, &text, NULL, NULL) && (at = strstr(text, from))) {
        char *edited = g_strdup_printf("%.*s%s%s", (int)(at - text), text, to, at + strlen(from));
        char *file = tmpfile_with("t.json", edited);
        t = load(file, nodes);
        tmpfile_remove(file);
        g_free(edited);
    }
    g_free(text);
    g_free(path);
    g_free(rel);
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

/* Preset NAME at NODES nodes, its first FROM replaced by TO where FROM is
 * given (another GPU), and a group of all its ranks at NCCL `version`
 * (NULL: the newest); free both with group_done. */
static inline CollGroup *group_at(Topo **t, const char *name, const char *from, const char *to, int nodes,
                                  const char *version)
{
    *t = from ? load_edited(name, from, to, nodes) : load(name, nodes);
    CU_ASSERT_PTR_NOT_NULL_FATAL(*t);
    CollGroup *g = group(*t);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    if (version)
        coll_group_set_nccl_version(g, coll_nccl_version_parse(version));
    return g;
}

static inline void group_done(CollGroup *g, Topo *t)
{
    coll_group_free(g);
    topo_free(t);
}

#endif
