/* Placement of a job's ranks on a topology (topo_place.h): which nodes,
 * which GPUs on each, by policy; scattered draws from a splitmix64 stream
 * of the seed (partial Fisher-Yates), then sorts, as a scheduler's node
 * list is sorted. */
#include "topo_place.h"

#include <stdlib.h>
#include <string.h>

static const char *const names[] = {"contiguous", "rail_aligned", "scattered"};

const char *topo_placement_name(TopoPlacement p)
{
    return (unsigned)p < G_N_ELEMENTS(names) ? names[p] : "?";
}

bool topo_placement_parse(const char *s, TopoPlacement *out)
{
    for (size_t i = 0; i < G_N_ELEMENTS(names); i++)
        if (strcmp(s, names[i]) == 0) {
            *out = (TopoPlacement)i;
            return true;
        }
    if (strcmp(s, "rail-aligned") == 0) {
        *out = TOPO_PLACE_RAIL_ALIGNED;
        return true;
    }
    return false;
}

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* `k` distinct values of 0..m-1 drawn from `rng`, sorted, into out. */
static void draw_sorted(uint64_t *rng, int m, int k, int *pool, int *out)
{
    for (int i = 0; i < m; i++)
        pool[i] = i;
    for (int i = 0; i < k; i++) {
        int j = i + (int)(splitmix64(rng) % (uint64_t)(m - i));
        int tmp = pool[i];
        pool[i] = pool[j];
        pool[j] = tmp;
        out[i] = pool[i];
    }
    qsort(out, (size_t)k, sizeof(int), cmp_int);
}

int *topo_place(const Topo *t, TopoPlacement p, uint64_t seed, int n, int per_node, GError **err)
{
    int rpn = topo_ranks_per_node(t), nodes = topo_num_nodes(t);
    if (n < 1 || per_node < 1 || per_node > rpn) {
        g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "placement: %d ranks per node, but %s has %d", per_node,
                    topo_name(t), rpn);
        return NULL;
    }
    int used = (int)(((int64_t)n + per_node - 1) / per_node);
    if (used > nodes) {
        g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "placement: %d ranks at %d per node need %d nodes, but %s has %d",
                    n, per_node, used, topo_name(t), nodes);
        return NULL;
    }
    int *node = g_new(int, used), *local = g_new(int, per_node), *ids = g_new(int, n);
    uint64_t rng = seed;
    if (p == TOPO_PLACE_SCATTERED) {
        int *pool = g_new(int, nodes > rpn ? nodes : rpn);
        draw_sorted(&rng, nodes, used, pool, node);
        for (int j = 0; j < used; j++) {
            int here = j == used - 1 ? n - j * per_node : per_node;
            draw_sorted(&rng, rpn, here, pool, local);
            for (int k = 0; k < here; k++)
                ids[j * per_node + k] = node[j] * rpn + local[k];
        }
        g_free(pool);
    } else {
        for (int j = 0; j < used; j++)
            node[j] = j;
        for (int k = 0; k < per_node; k++)
            local[k] = p == TOPO_PLACE_RAIL_ALIGNED ? (int)((int64_t)k * rpn / per_node) : k;
        for (int i = 0; i < n; i++)
            ids[i] = node[i / per_node] * rpn + local[i % per_node];
    }
    g_free(node);
    g_free(local);
    return ids;
}
