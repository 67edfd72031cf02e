/* A simulated step's run graph as Chakra ET, one file per simulated device
 * (chakra_replay.h says what each task becomes). */
#include "chakra_replay.h"

#include "sim_time.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The collective a step task's name says it runs. */
static int comm_type_of(const char *name)
{
    char *s = g_ascii_strdown(name, -1);
    int t = CHAKRA_ALL_REDUCE;
    if (strstr(s, "reduce_scatter") || strstr(s, "reducescatter") || strstr(s, "reduce-scatter"))
        t = CHAKRA_REDUCE_SCATTER;
    else if (strstr(s, "gather"))
        t = CHAKRA_ALL_GATHER;
    else if (strstr(s, "all_to_all") || strstr(s, "alltoall") || strstr(s, "dispatch") || strstr(s, "combine"))
        t = CHAKRA_ALL_TO_ALL;
    else if (strstr(s, "send") || strstr(s, "recv") || strstr(s, "broadcast"))
        t = CHAKRA_BROADCAST;
    g_free(s);
    return t;
}

typedef struct {
    GArray *nodes; /* ChakraNode */
    long topo;
    char key[32];  /* "gpuN" */
} Dev;

static int dev_of(GPtrArray *devs, const char *res_name)
{
    const char *dot = strchr(res_name, '.');
    size_t n = dot ? (size_t)(dot - res_name) : strlen(res_name);
    for (guint i = 0; i < devs->len; i++) {
        Dev *d = devs->pdata[i];
        if (strlen(d->key) == n && !strncmp(d->key, res_name, n))
            return (int)i;
    }
    Dev *d = g_new0(Dev, 1);
    snprintf(d->key, sizeof d->key, "%.*s", (int)(n < 31 ? n : 31), res_name);
    d->topo = !strncmp(d->key, "gpu", 3) ? strtol(d->key + 3, NULL, 10) : (long)devs->len;
    d->nodes = g_array_new(FALSE, TRUE, sizeof(ChakraNode));
    g_ptr_array_add(devs, d);
    return (int)devs->len - 1;
}

static ChakraNode *node_new(Dev *d, uint64_t id, const char *name, int type)
{
    ChakraNode n = {.id = id, .name = g_strdup(name), .type = type, .duration_ps = -1, .comm_type = -1,
                    .comm_size = -1, .comm_src = -1, .comm_dst = -1, .comm_tag = -1, .pg_name = g_strdup(""),
                    .stream = CHAKRA_NO_STREAM};
    g_array_append_val(d->nodes, n);
    return &g_array_index(d->nodes, ChakraNode, d->nodes->len - 1);
}

static void add_dep(ChakraNode *n, uint64_t id)
{
    n->deps = g_renew(uint64_t, n->deps, n->ndeps + 1);
    n->deps[n->ndeps++] = id;
}

int chakra_export(const SimGraph *g, const char *dir, GError **err)
{
    if (!sim_graph_export_fits(g, "export-chakra", "an export", err))
        return -1;
    if (g_mkdir_with_parents(dir, 0777) != 0) {
        g_set_error(err, SIM_ERROR, SIM_ERROR_INTERNAL, "%s: cannot create the directory: %s", dir, g_strerror(errno));
        return -1;
    }
    GPtrArray *devs = g_ptr_array_new();
    int nt = (int)sim_graph_num_tasks(g), nr = sim_graph_num_resources(g);
    int *res_dev = g_new(int, nr + 1), *res_stream = g_new(int, nr + 1), *task_dev = g_new(int, nt + 1);
    int *task_node = g_new(int, nt + 1);
    for (int r = 0; r < nr; r++) {
        res_dev[r] = dev_of(devs, sim_graph_resource_name(g, r));
        res_stream[r] = 0;
        for (int q = 0; q < r; q++)
            res_stream[r] += res_dev[q] == res_dev[r];
    }
    if (devs->len == 0)
        dev_of(devs, "gpu0");
    /* a pipeline send (resource kind p2p) feeding one other device becomes
     * a send there and a receive on that device, the data's path */
    size_t ne = sim_graph_num_edges(g);
    int *peer = g_new(int, nt + 1);
    for (int i = 0; i < nt; i++)
        peer[i] = -1;
    for (size_t e = 0; e < ne; e++) {
        int a, b;
        sim_graph_edge(g, e, &a, &b);
        int ra = sim_graph_task_resource(g, a), rb = sim_graph_task_resource(g, b);
        const char *an = ra >= 0 ? strchr(sim_graph_resource_name(g, ra), '.') : NULL;
        if (!an || strcmp(an, ".p2p") != 0 || rb < 0 || res_dev[rb] == res_dev[ra])
            continue;
        peer[a] = peer[a] == -1 || peer[a] == res_dev[rb] ? res_dev[rb] : -2; /* -2: several */
    }
    for (int i = 0; i < nt; i++) {
        int res = sim_graph_task_resource(g, i);
        Dev *d = devs->pdata[task_dev[i] = res >= 0 ? res_dev[res] : 0];
        const char *rn = res >= 0 ? sim_graph_resource_name(g, res) : "";
        const char *kind = strchr(rn, '.') ? strchr(rn, '.') + 1 : rn;
        bool comp = res < 0 || !strcmp(kind, "compute"), host = !strcmp(kind, "host");
        const char *name = sim_graph_task_name(g, i);
        /* a copy over the host link: a store to host memory, or a load back */
        int type = comp ? CHAKRA_COMP
                   : host ? (strstr(name, "fetch") || strstr(name, "reload") || strstr(name, "upload") ? CHAKRA_MEM_LOAD
                                                                                                     : CHAKRA_MEM_STORE)
                          : CHAKRA_COLL;
        ChakraNode *n = node_new(d, (uint64_t)i, name, type);
        task_node[i] = (int)d->nodes->len - 1;
        n->duration_ps = (int64_t)(sim_graph_task_end(g, i) - sim_graph_task_start(g, i));
        n->stream = res >= 0 ? res_stream[res] : -1;
        if (host) {
            /* its recorded duration stands: the replay prices memory nodes at HBM's rate */
        } else if (!comp && peer[i] >= 0) {
            n->type = CHAKRA_SEND;
            n->comm_dst = peer[i];
            n->comm_tag = i & 0x7fffffff;
            n->comm_size = (int64_t)sim_graph_task_bytes(g, i);
            /* the peer is another device: n, in this device's array, stays put */
            ChakraNode *r = node_new(devs->pdata[peer[i]], (uint64_t)nt + 2 * ne + (uint64_t)i, n->name, CHAKRA_RECV);
            r->comm_src = task_dev[i];
            r->comm_tag = n->comm_tag;
            r->comm_size = n->comm_size;
            r->stream = -1;
            r->duration_ps = n->duration_ps;
        } else if (!comp) {
            n->comm_type = comm_type_of(n->name);
            n->comm_size = (int64_t)sim_graph_task_bytes(g, i);
            g_free(n->pg_name);
            n->pg_name = g_strdup(rn);
        }
    }
    /* dependencies: within a device as they are, from a send's successors
     * on its peer through the receive, other crossings as zero-byte pairs */
    for (size_t e = 0; e < ne; e++) {
        int a, b;
        sim_graph_edge(g, e, &a, &b);
        Dev *da = devs->pdata[task_dev[a]], *db = devs->pdata[task_dev[b]];
        if (peer[a] >= 0 && peer[a] == task_dev[b]) {
            add_dep(&g_array_index(db->nodes, ChakraNode, task_node[b]), (uint64_t)nt + 2 * ne + (uint64_t)a);
            continue;
        }
        if (da == db) {
            add_dep(&g_array_index(db->nodes, ChakraNode, task_node[b]), (uint64_t)a);
            continue;
        }
        uint64_t sid = (uint64_t)nt + 2 * e, rid = sid + 1;
        ChakraNode *s = node_new(da, sid, "shardsim.sync_send", CHAKRA_SEND);
        s->comm_dst = task_dev[b];
        s->comm_tag = (int64_t)(e & 0x7fffffff);
        s->comm_size = 0;
        s->stream = -1;
        s->duration_ps = 0;
        add_dep(s, (uint64_t)a);
        ChakraNode *r = node_new(db, rid, "shardsim.sync_recv", CHAKRA_RECV);
        r->comm_src = task_dev[a];
        r->comm_tag = s->comm_tag;
        r->comm_size = 0;
        r->stream = -1;
        r->duration_ps = 0;
        add_dep(&g_array_index(db->nodes, ChakraNode, task_node[b]), rid);
    }
    bool ok = true;
    int written = 0;
    for (guint k = 0; k < devs->len; k++) {
        Dev *d = devs->pdata[k];
        if (ok) {
            ChakraRank r = {.version = (char *)"0.0.4", .topo_rank = d->topo, .nodes = (ChakraNode *)(void *)d->nodes->data,
                            .n = (int)d->nodes->len};
            char *path = g_strdup_printf("%s/shardsim.%u.et", dir, k);
            ok = chakra_write_rank(path, &r, err);
            written += ok;
            g_free(path);
        }
        for (guint i = 0; i < d->nodes->len; i++) {
            ChakraNode *n = &g_array_index(d->nodes, ChakraNode, i);
            g_free(n->name);
            g_free(n->deps);
            g_free(n->pg_name);
        }
        g_array_free(d->nodes, TRUE);
        g_free(d);
    }
    /* files of a larger earlier export would join this one's ranks */
    for (int k = written; ok; k++) {
        char *path = g_strdup_printf("%s/shardsim.%d.et", dir, k);
        bool there = g_file_test(path, G_FILE_TEST_EXISTS);
        if (there)
            g_unlink(path);
        g_free(path);
        if (!there)
            break;
    }
    g_ptr_array_free(devs, TRUE);
    g_free(res_dev);
    g_free(res_stream);
    g_free(task_dev);
    g_free(task_node);
    g_free(peer);
    return ok ? written : -1;
}
