/* The collective model's parameters by name: every scalar of CollParams as a
 * dotted key of models/presets/collectives.json ("link_efficiency.net",
 * "base_latency.ring.simple"), with its bounds and whether calibration may fit
 * it; the overlay files that `shardsim calibrate` writes and every command
 * reads in place of a full parameter file. */
#include "coll_internal.h"
#include "sim_json.h"

#include <stddef.h>
#include <string.h>

#define MAX_KEYS 256

typedef struct {
    char name[64];
    size_t off;       /* offset of the double in CollParams */
    double lo, hi;    /* what a file may say */
    double prior_sd;  /* log-space spread calibration assumes before seeing data */
    bool fit;         /* calibration may fit it */
} Key;

static Key keys[MAX_KEYS];
static int nkeys;

static void add(const char *name, size_t off, double lo, double hi, double sd, bool fit)
{
    g_assert(nkeys < MAX_KEYS);
    Key *k = &keys[nkeys++];
    *k = (Key){.off = off, .lo = lo, .hi = hi, .prior_sd = sd, .fit = fit};
    g_strlcpy(k->name, name, sizeof k->name);
}

#define OFF(field) offsetof(CollParams, field)
#define LAT_SD 0.7 /* a latency is known to about a factor of 2 before calibration */
#define EFF_SD 0.3 /* an achievable fraction to about 30% */

static void build(void)
{
    static const char *algos[] = {[COLL_RING] = "ring", [COLL_TREE] = "tree", [COLL_RHD] = "rhd",
                                  [COLL_DIRECT] = "direct", [COLL_COLLNET] = "collnet"};
    static const int base_algos[] = {COLL_RING, COLL_TREE, COLL_COLLNET, COLL_RHD, COLL_DIRECT};
    static const char *hw[] = {"nvlink", "pcie", "net"}, *fam[] = {"ring", "tree", "collnet"};
    static const char *links[] = {"nvlink", "pcie", "net", "ici", "shm", "nvlink_bridge"};
    char n[64];
    for (size_t a = 0; a < G_N_ELEMENTS(base_algos); a++)
        for (int p = 0; p < COLL_NUM_PROTOS; p++) {
            g_snprintf(n, sizeof n, "base_latency.%s.%s", algos[base_algos[a]], coll_proto_name(p));
            add(n, OFF(base[0][0]) + sizeof(double) * (base_algos[a] * COLL_NUM_PROTOS + p), 0, 1, LAT_SD, true);
        }
    for (int h = 0; h < HW_NUM; h++)
        for (int f = 0; f < 2; f++)
            for (int p = 0; p < COLL_NUM_PROTOS; p++) {
                g_snprintf(n, sizeof n, "step_latency.%s.%s.%s", hw[h], fam[f], coll_proto_name(p));
                add(n, OFF(step[0][0][0]) + sizeof(double) * ((h * 2 + f) * COLL_NUM_PROTOS + p), 0, 1, LAT_SD,
                    true);
            }
    for (int f = 0; f < KIND_NUM; f++)
        for (int p = 0; p < COLL_NUM_PROTOS; p++) {
            g_snprintf(n, sizeof n, "protocol_bandwidth.%s.%s", fam[f], coll_proto_name(p));
            add(n, OFF(proto_bw[0][0]) + sizeof(double) * (f * COLL_NUM_PROTOS + p), 0, 1, EFF_SD, false);
        }
    for (int l = 0; l <= TOPO_LINK_NVLINK_BRIDGE; l++) {
        g_snprintf(n, sizeof n, "link_efficiency.%s", links[l]);
        add(n, OFF(link_eff[0]) + sizeof(double) * l, 0.01, 1, EFF_SD, true);
    }
    add("host_launch_s", OFF(launch_s), 0, 1, LAT_SD, true);
    add("net_overhead_s", OFF(net_overhead), 0, 1, LAT_SD, true);
    add("nvls.latency_s", OFF(nvls_latency), 0, 1, LAT_SD, true);
    add("nvls.bandwidth_fraction", OFF(nvls_fraction), 0.01, 2, EFF_SD, true);
    add("nvls.blackwell_factor", OFF(nvls_blackwell), 0.1, 2, EFF_SD, false);
    add("nccl.nvls_net_step_latency_s", OFF(nvls_net_lat), 0, 1, LAT_SD, true);
    add("nccl.nvlstree_net_step_latency_s", OFF(nvls_tree_net_lat), 0, 1, LAT_SD, true);
    /* NCCL's own ratings, read from its source: not calibrated */
    add("nccl.nvls_rating_latency_s", OFF(nvls_rating_lat), 0, 1, LAT_SD, false);
    add("nccl.nvlstree_net_rating_latency_s", OFF(nvls_tree_net_rating), 0, 1, LAT_SD, false);
    add("nccl.tree_pattern_penalty", OFF(tree_pattern_penalty), 0, 1, EFF_SD, false);
    add("nccl.pat_base_latency_s", OFF(pat_base), 0, 1, LAT_SD, true);
    add("nccl.pat_latency_per_rank_s", OFF(pat_per_rank), 0, 1, LAT_SD, true);
    add("nccl.pat_bandwidth_factor", OFF(pat_bw), 0.01, 1, EFF_SD, true);
    for (int t = 0; t < TOPO_TRANSPORT_NUM; t++) {
        const char *tn = topo_transport_name((TopoTransport)t);
        if (!tn || !*tn || *tn == '?')
            continue;
        g_snprintf(n, sizeof n, "transports.%s.latency_s", tn);
        add(n, OFF(transport[0].latency) + sizeof(CollTransport) * t, 0, 1, LAT_SD, true);
        g_snprintf(n, sizeof n, "transports.%s.message_overhead_s", tn);
        add(n, OFF(transport[0].overhead) + sizeof(CollTransport) * t, 0, 1, LAT_SD, true);
        g_snprintf(n, sizeof n, "transports.%s.bandwidth_fraction", tn);
        add(n, OFF(transport[0].fraction) + sizeof(CollTransport) * t, 0.01, 1, EFF_SD, true);
    }
    /* RCCL's (coll_rccl.c): the times fit, the tuning model's ratings do not */
    for (int p = 0; p < COLL_NUM_PROTOS; p++) {
        g_snprintf(n, sizeof n, "rccl.base_latency.%s", coll_proto_name(p));
        add(n, OFF(rccl.base[0]) + sizeof(double) * p, 0, 1, LAT_SD, true);
    }
    for (int m = 0; m < 2; m++)
        for (int h = 0; h < HW_NUM; h++)
            for (int f = 0; f < 2; f++)
                for (int p = 0; p < COLL_NUM_PROTOS; p++) {
                    g_snprintf(n, sizeof n, "rccl.%sstep_latency.%s.%s.%s", m ? "mesh_tuning." : "", hw[h], fam[f],
                               coll_proto_name(p));
                    size_t at = (m ? OFF(rccl.mesh_step[0][0][0]) : OFF(rccl.step[0][0][0])) +
                                sizeof(double) * ((h * 2 + f) * COLL_NUM_PROTOS + p);
                    add(n, at, 0, 1, LAT_SD, m == 0);
                }
    static const char *nodes[] = {"two_nodes", "more_nodes"};
    for (int k = 0; k < 2; k++)
        for (int f = 0; f < 2; f++)
            for (int p = 0; p < COLL_NUM_PROTOS; p++) {
                g_snprintf(n, sizeof n, "rccl.mesh_tuning.bandwidth_ratio.%s.%s.%s", nodes[k], fam[f], coll_proto_name(p));
                add(n, OFF(rccl.mesh_ratio[0][0][0]) + sizeof(double) * ((k * 2 + f) * COLL_NUM_PROTOS + p), 0, 1, EFF_SD,
                    false);
            }
    add("rccl.ll_intra_latency_factor_multinode", OFF(rccl.ll_intra_factor), 0, 100, EFF_SD, false);
    add("rccl.ring_plateau_factor", OFF(rccl.ring_plateau), 1, 10, EFF_SD, false);
    add("ring_plateau_factor", OFF(ring_plateau), 1, 10, EFF_SD, false);
    add("ll_intra_latency_factor_multinode", OFF(ll_intra_factor), 0, 100, EFF_SD, false);
    add("ll128_max_bw_per_channel", OFF(ll128_max_per_ch), 1, 1e15, EFF_SD, false);
    add("ring_ll_one_node", OFF(ring_ll_one_node), 0.01, 1, EFF_SD, false);
}

static void ensure(void)
{
    static gsize once;
    if (g_once_init_enter(&once)) {
        build();
        g_once_init_leave(&once, 1);
    }
}

int coll_params_count(void)
{
    ensure();
    return nkeys;
}

const char *coll_params_key(int i)
{
    ensure();
    return i >= 0 && i < nkeys ? keys[i].name : NULL;
}

int coll_params_find(const char *key)
{
    ensure();
    for (int i = 0; i < nkeys; i++)
        if (strcmp(keys[i].name, key) == 0)
            return i;
    return -1;
}

static double *slot(CollParams *p, int i) { return (double *)(void *)((char *)p + keys[i].off); }

double coll_params_get(const CollParams *p, int i) { return *slot((CollParams *)p, i); }

bool coll_params_set(CollParams *p, int i, double v)
{
    if (!(v >= keys[i].lo && v <= keys[i].hi))
        return false;
    *slot(p, i) = v;
    /* the hierarchical all-reduce runs rings: it shares their base latency */
    memcpy(p->base[COLL_HIER], p->base[COLL_RING], sizeof p->base[COLL_HIER]);
    memcpy(p->base[COLL_TORUS], p->base[COLL_RING], sizeof p->base[COLL_TORUS]);
    return true;
}

void coll_params_bounds(int i, double *lo, double *hi, double *prior_sd, bool *fit)
{
    *lo = keys[i].lo;
    *hi = keys[i].hi;
    *prior_sd = keys[i].prior_sd;
    *fit = keys[i].fit;
}

CollParams *coll_params_new(const char *path, GError **err)
{
    CollParams *p = g_new0(CollParams, 1);
    if (!coll_params_load(path, p, err)) {
        g_free(p);
        return NULL;
    }
    return p;
}

CollParams *coll_params_copy(const CollParams *p) { return g_memdup2(p, sizeof *p); }

void coll_params_free(CollParams *p) { g_free(p); }

bool coll_group_set_params(CollGroup *g, const CollParams *p)
{
    /* link efficiencies (by kind and by NIC transport) and the channel limit
     * shape the group (its rings, NICs and trees); the rest is read at each
     * cost */
    if (memcmp(g->p.link_eff, p->link_eff, sizeof p->link_eff) != 0 || g->p.max_channels != p->max_channels ||
        memcmp(g->p.transport, p->transport, sizeof p->transport) != 0)
        return false;
    g->p0 = *p;
    coll_rccl_apply(g);
    return true;
}

/* ---------------- overlays ---------------- */

bool coll_params_is_overlay(const SimJsonDoc *d)
{
    return cJSON_IsString(cJSON_GetObjectItemCaseSensitive(sim_json_root(d), "overlay"));
}

/* Applies {"parameters": {KEY: VALUE or {"value": VALUE, ...}}} onto p. */
bool coll_params_apply_overlay(const SimJsonDoc *d, CollParams *p, GError **err)
{
    ensure();
    const cJSON *r = sim_json_root(d), *ps = cJSON_GetObjectItemCaseSensitive(r, "parameters");
    if (!cJSON_IsObject(ps)) {
        sim_json_error(d, ps ? ps : r, err, "an overlay needs \"parameters\": {KEY: VALUE, ...}");
        return false;
    }
    const cJSON *cal = cJSON_GetObjectItemCaseSensitive(r, "calibration");
    if (cal && !coll_uncert_read(d, cal, &p->unc, err))
        return false;
    for (const cJSON *e = ps->child; e; e = e->next) {
        if (!strncmp(e->string, "mpi.", 4))
            continue; /* the MPI model's (mpi_model.h) */
        int i = coll_params_find(e->string);
        const cJSON *v = cJSON_IsObject(e) ? cJSON_GetObjectItemCaseSensitive(e, "value") : e;
        if (i < 0) {
            sim_json_error(d, e, err, "unknown collective parameter \"%s\"", e->string);
            return false;
        }
        if (!cJSON_IsNumber(v) || !coll_params_set(p, i, v->valuedouble)) {
            sim_json_error(d, v ? v : e, err, "\"%s\" must be a number in [%g, %g]", e->string, keys[i].lo,
                           keys[i].hi);
            return false;
        }
    }
    return true;
}
