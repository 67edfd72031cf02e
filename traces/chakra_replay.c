/* Chakra ET replay: matching the collectives and point-to-point pairs across
 * ranks, pricing every node (chakra_replay.h says how), and the task graph
 * that runs them. */
#include "chakra_replay.h"

#include "sim_engine.h"
#include "sim_time.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define MAX_NODE_US 1e9 /* 1000 s: a recorded duration past it is a corrupt field */

/* One collective or send/receive pair: its members' (rank, node). */
typedef struct {
    bool p2p;
    GArray *rank, *node; /* int */
    sim_time_t dur;
} Meet;

typedef struct {
    const ChakraTrace *t;
    const ChakraPlatform *pf;
    SimGraph *g;
    GArray *meets;     /* Meet */
    int **meet;        /* [rank][node]: index in meets, -1 */
    sim_time_t **dur;  /* [rank][node] */
    int **own, **first, **last; /* [rank][node]: its task on its stream, the task its deps feed, the task dependents wait for */
    GHashTable *res;   /* "rankR.stream" -> resource + 1 */
    int *topo_rank;
    int ncoll, np2p;
    GHashTable *groups; /* member list -> CollGroup */
} Rep;

static sim_time_t recorded(const ChakraNode *n)
{
    return n->duration_ps >= 0 ? (sim_time_t)n->duration_ps : (sim_time_t)n->duration_us * 1000000u;
}

static bool node_err(GError **err, const ChakraRank *r, int i, const char *what)
{
    const ChakraNode *n = &r->nodes[i];
    g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "%s: node %d (id %" G_GUINT64_FORMAT ", byte %ld): %s", r->path, i,
                n->id, n->offset, what);
    return false;
}

static CollGroup *group_of(Rep *p, const int *ranks, int n, GError **err)
{
    GString *key = g_string_new(NULL);
    for (int i = 0; i < n; i++)
        g_string_append_printf(key, "%d,", ranks[i]);
    CollGroup *g = g_hash_table_lookup(p->groups, key->str);
    if (!g) {
        int *ids = g_new(int, (size_t)(n > 0 ? n : 1));
        for (int i = 0; i < n; i++)
            ids[i] = p->topo_rank[ranks[i]];
        g = p->pf->params ? coll_group_new_with(p->pf->topo, ids, n, p->pf->params, err)
                          : coll_group_new(p->pf->topo, ids, n, NULL, err);
        g_free(ids);
        if (g) {
            if (p->pf->nccl_version)
                coll_group_set_nccl_version(g, p->pf->nccl_version);
            coll_group_set_fabric(g, true); /* each collective alone on the fabric, as `collective` prices it */
            g_hash_table_insert(p->groups, g_strdup(key->str), g);
        }
    }
    g_string_free(key, TRUE);
    return g;
}

static CollOp coll_op_of(int ct)
{
    switch (ct) {
    case CHAKRA_REDUCE:
    case CHAKRA_GATHER: return COLL_REDUCE;
    case CHAKRA_ALL_GATHER: return COLL_ALLGATHER;
    case CHAKRA_SCATTER:
    case CHAKRA_BROADCAST: return COLL_BROADCAST;
    case CHAKRA_ALL_TO_ALL: return COLL_ALLTOALL;
    case CHAKRA_REDUCE_SCATTER:
    case CHAKRA_REDUCE_SCATTER_BLOCK: return COLL_REDUCESCATTER;
    default: return COLL_ALLREDUCE;
    }
}

/* The modelled time of a meeting (the first member's node says what). */
static bool meet_time(Rep *p, Meet *m, GError **err)
{
    const ChakraRank *r0 = &p->t->ranks[g_array_index(m->rank, int, 0)];
    const ChakraNode *n0 = &r0->nodes[g_array_index(m->node, int, 0)];
    m->dur = recorded(n0);
    double bytes = n0->comm_size >= 0 ? (double)n0->comm_size : n0->tensor_size;
    if (p->pf->times == CHAKRA_TIMES_RECORDED || (m->p2p && bytes <= 0) || m->rank->len < 2)
        return true;
    int *ranks = (int *)(void *)m->rank->data;
    if (m->p2p && ranks[0] == ranks[1])
        return true;
    CollGroup *g = group_of(p, ranks, (int)m->rank->len, err);
    if (!g)
        return false;
    CollOp op = m->p2p ? COLL_BROADCAST : coll_op_of(n0->comm_type);
    if (!m->p2p && n0->comm_type == CHAKRA_BARRIER)
        bytes = 0;
    CollCost c;
    if (!coll_cost(g, op, COLL_ALGO_AUTO, COLL_PROTO_AUTO, bytes, &c))
        return node_err(err, r0, g_array_index(m->node, int, 0), "no collective algorithm runs it on this topology");
    m->dur = sim_time_from_s(c.time_s);
    return true;
}

static Meet *meet_new(Rep *p, bool p2p)
{
    Meet m = {.p2p = p2p, .rank = g_array_new(FALSE, FALSE, sizeof(int)), .node = g_array_new(FALSE, FALSE, sizeof(int))};
    g_array_append_val(p->meets, m);
    return &g_array_index(p->meets, Meet, p->meets->len - 1);
}

static void meet_add(Rep *p, int mi, int r, int n)
{
    Meet *m = &g_array_index(p->meets, Meet, mi);
    g_array_append_val(m->rank, r);
    g_array_append_val(m->node, n);
    p->meet[r][n] = mi;
}

/* Collectives: per pg_name, the k-th on each member rank. */
static bool match_colls(Rep *p, GError **err)
{
    const ChakraTrace *t = p->t;
    GHashTable *by_pg = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, NULL); /* pg -> GPtrArray of per-rank GArray */
    GPtrArray *order = g_ptr_array_new();
    for (int r = 0; r < t->nranks; r++)
        for (int i = 0; i < t->ranks[r].n; i++) {
            const ChakraNode *n = &t->ranks[r].nodes[i];
            if (n->type != CHAKRA_COLL || n->comm_type < 0) /* no comm_type: a host op (chakra_et.c) */
                continue;
            GArray **per = g_hash_table_lookup(by_pg, n->pg_name);
            if (!per) {
                per = g_new0(GArray *, t->nranks);
                g_hash_table_insert(by_pg, n->pg_name, per);
                g_ptr_array_add(order, n->pg_name);
            }
            if (!per[r])
                per[r] = g_array_new(FALSE, FALSE, sizeof(int));
            g_array_append_val(per[r], i);
        }
    bool ok = true;
    for (guint k = 0; k < order->len; k++) {
        GArray **per = g_hash_table_lookup(by_pg, order->pdata[k]);
        int first = -1;
        for (int r = 0; r < t->nranks; r++)
            if (per[r] && first < 0)
                first = r;
        guint cnt = per[first]->len;
        /* a collective naming no group is the whole job's: a rank without it never joins */
        bool world = !*(const char *)order->pdata[k];
        for (int r = 0; ok && world && r < t->nranks; r++)
            if (!per[r]) { /* an empty rank too: it would leave the collective to the others (review 9) */
                char msg[256];
                snprintf(msg, sizeof msg, "rank %d has %u collectives of no group (the whole job's), rank %d has none (a subgroup's need their pg_name)",
                         first, cnt, r);
                ok = node_err(err, &t->ranks[first], g_array_index(per[first], int, 0), msg);
            }
        for (int r = 0; ok && r < t->nranks; r++)
            if (per[r] && per[r]->len != cnt) {
                char msg[256];
                snprintf(msg, sizeof msg, "rank %d has %u collectives of group \"%s\", rank %d has %u", r,
                         per[r]->len, SIM_ECHO(order->pdata[k]), first, cnt);
                ok = node_err(err, &t->ranks[r], g_array_index(per[r], int, 0), msg);
            }
        for (guint c = 0; ok && c < cnt; c++) {
            int mi = (int)p->meets->len;
            meet_new(p, false);
            const ChakraNode *n0 = &t->ranks[first].nodes[g_array_index(per[first], int, c)];
            for (int r = 0; ok && r < t->nranks; r++) {
                if (!per[r])
                    continue;
                int i = g_array_index(per[r], int, c);
                const ChakraNode *n = &t->ranks[r].nodes[i];
                if (n->comm_type != n0->comm_type || n->comm_size != n0->comm_size) {
                    char msg[256];
                    snprintf(msg, sizeof msg, "collective %u of group \"%s\" is %s of %" PRId64 " bytes here, %s of %" PRId64 " bytes on rank %d",
                             c, SIM_ECHO(n->pg_name), chakra_comm_type_name(n->comm_type), n->comm_size,
                             chakra_comm_type_name(n0->comm_type), n0->comm_size, first);
                    ok = node_err(err, &t->ranks[r], i, msg);
                }
                meet_add(p, mi, r, i);
            }
            p->ncoll++;
        }
    }
    for (guint k = 0; k < order->len; k++) {
        GArray **per = g_hash_table_lookup(by_pg, order->pdata[k]);
        for (int r = 0; r < t->nranks; r++)
            if (per[r])
                g_array_free(per[r], TRUE);
        g_free(per);
    }
    g_ptr_array_free(order, TRUE);
    g_hash_table_destroy(by_pg);
    return ok;
}

/* Sends and receives: the k-th of (src, dst, tag) on each side. */
static bool match_p2p(Rep *p, GError **err)
{
    const ChakraTrace *t = p->t;
    GHashTable *q = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL); /* key -> GArray of (rank,node) pairs */
    GPtrArray *keys = g_ptr_array_new();
    bool ok = true;
    for (int r = 0; ok && r < t->nranks; r++)
        for (int i = 0; ok && i < t->ranks[r].n; i++) {
            const ChakraNode *n = &t->ranks[r].nodes[i];
            if ((n->type != CHAKRA_SEND && n->type != CHAKRA_RECV) || (n->type == CHAKRA_SEND ? n->comm_dst : n->comm_src) < 0)
                continue;
            bool send = n->type == CHAKRA_SEND;
            int64_t peer = send ? n->comm_dst : n->comm_src;
            if (peer >= t->nranks || peer == r) { /* to itself: no link carries it, nothing would be priced (review 9) */
                char msg[160];
                if (peer == r)
                    snprintf(msg, sizeof msg, "%s itself, rank %d: a copy on one device, not a send", send ? "sends to" : "receives from", r);
                else
                    snprintf(msg, sizeof msg, "%s rank %" PRId64 ", and the trace has %d ranks",
                             send ? "sends to" : "receives from", peer, t->nranks);
                ok = node_err(err, &t->ranks[r], i, msg);
                break;
            }
            char *key = g_strdup_printf("%s %" PRId64 " %" PRId64 " %" PRId64, send ? "s" : "r", send ? (int64_t)r : peer,
                                        send ? peer : (int64_t)r, n->comm_tag);
            GArray *a = g_hash_table_lookup(q, key);
            if (!a) {
                a = g_array_new(FALSE, FALSE, sizeof(int));
                g_hash_table_insert(q, g_strdup(key), a);
                g_ptr_array_add(keys, a);
            }
            g_free(key);
            int pr[2] = {r, i};
            g_array_append_vals(a, pr, 2);
        }
    /* pair sends (in file order of ranks) with receives */
    for (int r = 0; ok && r < t->nranks; r++)
        for (int i = 0; ok && i < t->ranks[r].n; i++) {
            const ChakraNode *n = &t->ranks[r].nodes[i];
            if ((n->type != CHAKRA_SEND && n->type != CHAKRA_RECV) || (n->type == CHAKRA_SEND ? n->comm_dst : n->comm_src) < 0)
                continue;
            bool send = n->type == CHAKRA_SEND;
            int64_t peer = send ? n->comm_dst : n->comm_src;
            char *other = g_strdup_printf("%s %" PRId64 " %" PRId64 " %" PRId64, send ? "r" : "s", send ? (int64_t)r : peer,
                                          send ? peer : (int64_t)r, n->comm_tag);
            char *mine = g_strdup_printf("%s %" PRId64 " %" PRId64 " %" PRId64, send ? "s" : "r", send ? (int64_t)r : peer,
                                         send ? peer : (int64_t)r, n->comm_tag);
            GArray *a = g_hash_table_lookup(q, mine), *b = g_hash_table_lookup(q, other);
            guint na = a ? a->len / 2 : 0, nb = b ? b->len / 2 : 0;
            if (na != nb) {
                char msg[200];
                snprintf(msg, sizeof msg, "%u %s from rank %" PRId64 " to rank %" PRId64 " (tag %" PRId64 ") but %u %s",
                         na, send ? "sends" : "receives", send ? (int64_t)r : peer, send ? peer : (int64_t)r, n->comm_tag,
                         nb, send ? "receives" : "sends");
                ok = node_err(err, &t->ranks[r], i, msg);
            } else if (send && p->meet[r][i] < 0) {
                for (guint c = 0; ok && c < na; c++) {
                    int sr = g_array_index(a, int, 2 * c), si = g_array_index(a, int, 2 * c + 1);
                    int rr = g_array_index(b, int, 2 * c), ri = g_array_index(b, int, 2 * c + 1);
                    int64_t ss = t->ranks[sr].nodes[si].comm_size, rs = t->ranks[rr].nodes[ri].comm_size;
                    if (ss >= 0 && rs >= 0 && ss != rs) { /* one message: both ends say how long */
                        char msg[200];
                        snprintf(msg, sizeof msg,
                                 "receives %" PRId64 " bytes from rank %d (tag %" PRId64 "), whose matching send has %" PRId64,
                                 rs, sr, n->comm_tag, ss);
                        ok = node_err(err, &t->ranks[rr], ri, msg);
                        break;
                    }
                    int mi = (int)p->meets->len;
                    meet_new(p, true);
                    meet_add(p, mi, g_array_index(a, int, 2 * c), g_array_index(a, int, 2 * c + 1));
                    meet_add(p, mi, g_array_index(b, int, 2 * c), g_array_index(b, int, 2 * c + 1));
                    p->np2p++;
                }
            }
            g_free(other);
            g_free(mine);
        }
    for (guint j = 0; j < keys->len; j++)
        g_array_free(keys->pdata[j], TRUE);
    g_ptr_array_free(keys, TRUE);
    g_hash_table_destroy(q);
    return ok;
}

/* A node's own time where it meets no one. */
static bool node_time(Rep *p, int r, int i, GError **err)
{
    const ChakraRank *rk = &p->t->ranks[r];
    const ChakraNode *n = &rk->nodes[i];
    if (n->duration_us > MAX_NODE_US || (n->duration_ps >= 0 && n->duration_ps > (int64_t)(MAX_NODE_US * 1e6)))
        return node_err(err, rk, i, "a recorded duration over 1000 s");
    sim_time_t d = recorded(n);
    if (p->pf->times == CHAKRA_TIMES_MODEL && p->pf->acc) {
        if (n->type == CHAKRA_COMP && n->num_ops > 0) {
            double peak = accel_peak_flops(p->pf->acc, p->pf->dtype) * accel_gemm_eff_max(p->pf->acc, p->pf->dtype);
            double s = peak > 0 ? n->num_ops / peak : 0;
            double m = n->tensor_size > 0 ? accel_mem_time(p->pf->acc, n->tensor_size) : 0;
            d = sim_time_from_s(s > m ? s : m);
        } else if ((n->type == CHAKRA_MEM_LOAD || n->type == CHAKRA_MEM_STORE) && n->tensor_size > 0)
            d = sim_time_from_s(accel_mem_time(p->pf->acc, n->tensor_size));
    }
    p->dur[r][i] = d;
    return true;
}

static int resource_of(Rep *p, int r, const ChakraNode *n)
{
    if (n->stream == -1)
        return SIM_NO_RESOURCE;
    char name[64];
    if (n->stream != CHAKRA_NO_STREAM)
        snprintf(name, sizeof name, "rank%d.stream%" PRId64, r, n->stream);
    else
        snprintf(name, sizeof name, "rank%d.%s", r,
                 n->is_cpu_op ? "cpu" : n->type >= CHAKRA_SEND ? "comm" : "compute");
    int id = GPOINTER_TO_INT(g_hash_table_lookup(p->res, name));
    if (!id) {
        id = sim_graph_resource(p->g, name) + 1;
        g_hash_table_insert(p->res, g_strdup(name), GINT_TO_POINTER(id));
    }
    return id - 1;
}

static void build_tasks(Rep *p)
{
    const ChakraTrace *t = p->t;
    for (int r = 0; r < t->nranks; r++)
        for (int i = 0; i < t->ranks[r].n; i++) {
            const ChakraNode *n = &t->ranks[r].nodes[i];
            int mi = p->meet[r][i];
            sim_time_t d = mi >= 0 ? g_array_index(p->meets, Meet, mi).dur : p->dur[r][i];
            if (mi >= 0 && g_array_index(p->meets, Meet, mi).p2p && n->type == CHAKRA_RECV &&
                p->pf->times == CHAKRA_TIMES_RECORDED)
                d = recorded(n);
            p->own[r][i] = p->first[r][i] = p->last[r][i] =
                sim_graph_task(p->g, *n->name ? n->name : chakra_type_name(n->type), resource_of(p, r, n), d);
            sim_graph_task_set_info(p->g, p->own[r][i], n->type >= CHAKRA_SEND ? "comm" : "compute",
                                    n->comm_size > 0 ? (double)n->comm_size : 0);
        }
    for (guint mi = 0; mi < p->meets->len; mi++) {
        const Meet *m = &g_array_index(p->meets, Meet, mi);
        int gate = sim_graph_task(p->g, "chakra.meet", SIM_NO_RESOURCE, 0);
        for (guint k = 0; k < m->rank->len; k++) {
            int r = g_array_index(m->rank, int, k), i = g_array_index(m->node, int, k);
            sim_graph_depend(p->g, gate, p->own[r][i]);
            p->first[r][i] = gate;
        }
        if (m->p2p) { /* the receive ends once the transfer has */
            int rs = g_array_index(m->rank, int, 0), is = g_array_index(m->node, int, 0);
            int rr = g_array_index(m->rank, int, 1), ir = g_array_index(m->node, int, 1);
            int join = sim_graph_task(p->g, "chakra.recv_done", SIM_NO_RESOURCE, 0);
            sim_graph_depend(p->g, p->own[rs][is], join);
            sim_graph_depend(p->g, p->own[rr][ir], join);
            p->last[rr][ir] = join;
        }
    }
    for (int r = 0; r < t->nranks; r++)
        for (int i = 0; i < t->ranks[r].n; i++) {
            const ChakraNode *n = &t->ranks[r].nodes[i];
            for (int k = 0; k < n->ndeps; k++)
                sim_graph_depend(p->g, p->last[r][n->dep_idx[k]], p->first[r][i]);
        }
}

static cJSON *report(Rep *p, sim_time_t span)
{
    const ChakraTrace *t = p->t;
    cJSON *o = cJSON_CreateObject();
    long nodes = 0;
    cJSON *pr = cJSON_CreateArray();
    for (int r = 0; r < t->nranks; r++) {
        nodes += t->ranks[r].n;
        cJSON *x = cJSON_CreateObject(), *busy = cJSON_CreateObject();
        sim_time_t end = 0;
        for (int i = 0; i < t->ranks[r].n; i++) {
            sim_time_t e = sim_graph_task_end(p->g, p->last[r][i]);
            end = e > end ? e : end;
            int res = sim_graph_task_resource(p->g, p->own[r][i]);
            if (res == SIM_NO_RESOURCE)
                continue;
            const char *nm = strchr(sim_graph_resource_name(p->g, res), '.') + 1;
            sim_time_t d = sim_graph_task_end(p->g, p->own[r][i]) - sim_graph_task_start(p->g, p->own[r][i]);
            cJSON *b = cJSON_GetObjectItem(busy, nm);
            if (b)
                cJSON_SetNumberValue(b, b->valuedouble + sim_time_to_s(d));
            else
                cJSON_AddNumberToObject(busy, nm, sim_time_to_s(d));
        }
        cJSON_AddNumberToObject(x, "rank", r);
        cJSON_AddNumberToObject(x, "topology_rank", p->topo_rank[r]);
        cJSON_AddNumberToObject(x, "end_s", sim_time_to_s(end));
        cJSON_AddItemToObject(x, "busy_s", busy);
        cJSON_AddItemToArray(pr, x);
    }
    cJSON_AddNumberToObject(o, "chakra_ranks", t->nranks);
    cJSON_AddNumberToObject(o, "nodes", (double)nodes);
    cJSON_AddNumberToObject(o, "step_time_s", sim_time_to_s(span));
    cJSON_AddNumberToObject(o, "collectives", p->ncoll);
    cJSON_AddNumberToObject(o, "point_to_point", p->np2p);
    cJSON_AddStringToObject(o, "times", p->pf->times == CHAKRA_TIMES_MODEL ? "model" : "recorded");
    cJSON_AddItemToObject(o, "per_rank", pr);
    return o;
}

static bool map_ranks(Rep *p, GError **err)
{
    int nt = topo_num_ranks(p->pf->topo);
    GHashTable *taken = g_hash_table_new(g_direct_hash, g_direct_equal); /* topology rank + 1 -> trace rank + 1 */
    bool ok = true;
    for (int r = 0; ok && r < p->t->nranks; r++) {
        int64_t tr = p->t->ranks[r].topo_rank >= 0 ? p->t->ranks[r].topo_rank : r;
        int before = tr < nt ? GPOINTER_TO_INT(g_hash_table_lookup(taken, GINT_TO_POINTER((int)tr + 1))) : 0;
        if (tr >= nt) {
            g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "%s: rank %d runs on topology rank %" PRId64 ", and the topology has %d ranks",
                        p->t->ranks[r].path, r, tr, nt);
            ok = false;
        } else if (before) { /* two processes on one device: each would get its streams to itself */
            g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "%s: rank %d runs on topology rank %" PRId64 ", as rank %d does",
                        p->t->ranks[r].path, r, tr, before - 1);
            ok = false;
        } else {
            g_hash_table_insert(taken, GINT_TO_POINTER((int)tr + 1), GINT_TO_POINTER(r + 1));
            p->topo_rank[r] = (int)tr;
        }
    }
    g_hash_table_destroy(taken);
    return ok;
}

cJSON *chakra_replay(const ChakraTrace *t, const ChakraPlatform *pf, SimGraph **graph, GError **err)
{
    Rep p = {.t = t, .pf = pf, .g = sim_graph_new(), .meets = g_array_new(FALSE, FALSE, sizeof(Meet))};
    int R = t->nranks;
    int ***tabs[] = {&p.meet, &p.own, &p.first, &p.last};
    for (int k = 0; k < 4; k++) {
        *tabs[k] = g_new0(int *, R);
        for (int r = 0; r < R; r++)
            (*tabs[k])[r] = g_new(int, t->ranks[r].n + 1);
    }
    p.dur = g_new0(sim_time_t *, R);
    for (int r = 0; r < R; r++) {
        p.dur[r] = g_new0(sim_time_t, t->ranks[r].n + 1);
        for (int i = 0; i < t->ranks[r].n; i++)
            p.meet[r][i] = -1;
    }
    p.res = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    p.groups = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, (GDestroyNotify)coll_group_free);
    p.topo_rank = g_new(int, R);
    bool ok = map_ranks(&p, err) && match_colls(&p, err) && match_p2p(&p, err);
    for (int r = 0; ok && r < R; r++)
        for (int i = 0; ok && i < t->ranks[r].n; i++)
            ok = node_time(&p, r, i, err);
    for (guint mi = 0; ok && mi < p.meets->len; mi++)
        ok = meet_time(&p, &g_array_index(p.meets, Meet, mi), err);
    cJSON *out = NULL;
    if (ok) {
        build_tasks(&p);
        SimEngine *e = sim_engine_new();
        sim_time_t span = sim_graph_run(p.g, e, NULL);
        sim_engine_free(e);
        if (span == SIM_TIME_NEVER && sim_graph_overflowed(p.g)) {
            /* the longest node is the one past the range, not one waiting behind it: a
             * collective's or pair's time is its meeting's, as build_tasks prices it (review 9) */
            int br = 0, bi = 0;
            sim_time_t longest = 0;
            for (int r = 0; r < R; r++)
                for (int i = 0; i < t->ranks[r].n; i++) {
                    int mi = p.meet[r][i];
                    sim_time_t d = mi >= 0 ? g_array_index(p.meets, Meet, mi).dur : p.dur[r][i];
                    if (d > longest)
                        longest = d, br = r, bi = i;
                }
            ok = node_err(err, &t->ranks[br], bi, "takes so long that the replay runs past " SIM_TIME_RANGE_TEXT);
        } else if (span == SIM_TIME_NEVER) {
            for (int r = 0; ok && r < R; r++)
                for (int i = 0; ok && i < t->ranks[r].n; i++)
                    if (sim_graph_task_end(p.g, p.last[r][i]) == SIM_TIME_NEVER)
                        ok = node_err(err, &t->ranks[r], i,
                                      "never runs: the ranks wait for each other (a collective or send/receive order that deadlocks)");
            if (ok)
                g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "the trace deadlocks");
        } else
            out = report(&p, span);
    }
    for (guint mi = 0; mi < p.meets->len; mi++) {
        g_array_free(g_array_index(p.meets, Meet, mi).rank, TRUE);
        g_array_free(g_array_index(p.meets, Meet, mi).node, TRUE);
    }
    g_array_free(p.meets, TRUE);
    for (int k = 0; k < 4; k++) {
        for (int r = 0; r < R; r++)
            g_free((*tabs[k])[r]);
        g_free(*tabs[k]);
    }
    for (int r = 0; r < R; r++)
        g_free(p.dur[r]);
    g_free(p.dur);
    g_free(p.topo_rank);
    g_hash_table_destroy(p.res);
    g_hash_table_destroy(p.groups);
    if (out && graph)
        *graph = p.g;
    else
        sim_graph_free(p.g);
    return out;
}
