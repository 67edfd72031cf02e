/* Flow-model speed on the traffic that couples the most flows: a direct
 * all-to-all (every rank sends to every other at once) on a two-level fat
 * tree with 1 rank per node, 16 nodes per leaf, 4 spines and 4:1
 * oversubscription, at 256 and 1024 ranks by default.  All n(n-1) flows share
 * one connected component, so this measures how much of it each rate change
 * recomputes.  Prints wall time, simulated time, flows, rate recomputations
 * and their work.
 * Usage: bench_alltoall [RANKS... [--bytes B]] */
#include "bench_flows.h"

#include <glib/gstdio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *fat_tree_json =
    "{\"name\": \"bench-fat-tree-4to1\", \"family\": \"fat_tree\", \"ranks_per_node\": 1, \"intra\": \"none\",\n"
    " \"nodes\": 16, \"pcie\": {\"bandwidth\": \"31.5GB/s\", \"latency\": \"300ns\"},\n"
    " \"nic\": {\"bandwidth\": \"200Gbps\", \"latency\": \"350ns\"},\n"
    " \"nodes_per_leaf\": 16, \"spines\": 4, \"oversubscription\": 4, \"uplink\": {\"latency\": \"200ns\"}}\n";

int main(int argc, char **argv)
{
    double bytes = 64.0 * 1048576;
    int ranks[16], nr = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--bytes") == 0 && i + 1 < argc)
            bytes = atof(argv[++i]);
        else if (nr < 16)
            ranks[nr++] = atoi(argv[i]);
    }
    if (nr == 0) {
        ranks[nr++] = 256;
        ranks[nr++] = 1024;
    }
    char *path = NULL;
    GError *err = NULL;
    int fd = g_file_open_tmp("bench-alltoall-XXXXXX.json", &path, &err);
    if (fd < 0 || !g_file_set_contents(path, fat_tree_json, -1, &err)) {
        fprintf(stderr, "bench_alltoall: %s\n", err ? err->message : "cannot write the topology");
        return 1;
    }
    g_close(fd, NULL);
    int rc = 0;
    for (int i = 0; i < nr; i++)
        rc |= bench_flows("bench_alltoall", path, ranks[i], COLL_ALLTOALL, COLL_DIRECT, COLL_SIMPLE, bytes,
                          "fat tree, 16 nodes a leaf, 4 spines, 4:1");
    g_unlink(path);
    g_free(path);
    return rc;
}
