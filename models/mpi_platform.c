/* The MPI model's object: the library names, models/presets/mpi.json (the
 * libraries' constants, the CPU nodes' memory systems and copy rates, the
 * NICs' transport by libfabric version and the Open MPI pml it implies),
 * the platform read off the topology's shared-memory and network paths,
 * and the dispatch to the library's selection (mpi_select.c). */
#include "mpi_internal.h"
#include "sim_data.h"

#include <string.h>

static const char *lib_names[] = {"openmpi", "mpich", "cray-mpich"};

const char *mpi_lib_name(MpiLib l) { return l >= 0 && l < MPI_NUM_LIBS ? lib_names[l] : "?"; }

int mpi_lib_parse(const char *s)
{
    if (!s)
        return -1;
    if (!g_ascii_strcasecmp(s, "openmpi") || !g_ascii_strcasecmp(s, "ompi") || !g_ascii_strcasecmp(s, "open-mpi"))
        return MPI_LIB_OPENMPI;
    if (!g_ascii_strcasecmp(s, "mpich"))
        return MPI_LIB_MPICH;
    if (!g_ascii_strcasecmp(s, "cray-mpich") || !g_ascii_strcasecmp(s, "craympich"))
        return MPI_LIB_CRAY_MPICH;
    return -1;
}

/* ---------------- parameters ---------------- */

static bool is_overlay(const SimJsonDoc *d);

static bool read_lib(const SimJsonDoc *d, const cJSON *libs, MpiLib lib, MpiLibParams *l, GError **err)
{
    const cJSON *o = cJSON_GetObjectItemCaseSensitive(libs, mpi_lib_name(lib));
    if (!cJSON_IsObject(o)) {
        sim_json_error(d, o ? o : libs, err, "\"libraries\" needs an object \"%s\"", mpi_lib_name(lib));
        return false;
    }
    double radix = 4, throttle = 32, rr = 4, br = 64;
    *l = (MpiLibParams){.han_segment = 65536, .bcast_cell = 32768, .rndv_shm = 0, .smp_max = 32768};
    if (!sim_json_get_number(d, o, "overhead", true, 0, 1e-3, &l->overhead, err) ||
        !sim_json_get_number(d, o, "datatype_round", true, 0, 1e-3, &l->ddt_round, err) ||
        !sim_json_get_number(d, o, "datatype_block", true, 0, 1e-3, &l->ddt_block, err) ||
        !sim_json_get_number(d, o, "han_segment", false, 1, 1 << 30, &l->han_segment, err) ||
        !sim_json_get_number(d, o, "knomial_radix", false, 2, 1024, &radix, err) ||
        !sim_json_get_number(d, o, "alltoall_throttle", false, 0, 1 << 20, &throttle, err) ||
        !sim_json_get_number(d, o, "reduce_radix", false, 2, 1024, &rr, err) ||
        !sim_json_get_number(d, o, "bcast_radix", false, 2, 1024, &br, err) ||
        !sim_json_get_number(d, o, "bcast_cell", false, 1, 1 << 30, &l->bcast_cell, err) ||
        !sim_json_get_number(d, o, "rndv_threshold_shm", false, 0, 1e12, &l->rndv_shm, err) ||
        !sim_json_get_number(d, o, "rndv_cost_shm", false, 0, 1e-3, &l->rndv_cost_shm, err) ||
        !sim_json_get_number(d, o, "allreduce_smp_max", false, 0, 1e12, &l->smp_max, err) ||
        !sim_json_get_number(d, o, "cxi_rendezvous_threshold", false, 0, 1e12, &l->cxi_rndv_thr, err))
        return false;
    l->knomial_radix = (int)radix;
    l->throttle = (int)throttle;
    l->reduce_radix = (int)rr;
    l->bcast_radix = (int)br;
    return true;
}

/* The node's memory system, when the file describes the topology's nodes. */
static bool read_node(const SimJsonDoc *d, const cJSON *nodes, const char *topo, MpiModel *m, double *nic_eff,
                      GError **err)
{
    const cJSON *o = cJSON_IsObject(nodes) ? cJSON_GetObjectItemCaseSensitive(nodes, topo) : NULL;
    if (!o)
        return true; /* memory not described: only the links bound a step */
    double bw = INFINITY, eff = 1;
    if (!sim_json_get_number(d, o, "memory_bandwidth", false, 1e6, 1e15, &bw, err) ||
        !sim_json_get_number(d, o, "core_copy_bandwidth", false, 1e6, 1e15, &m->core_copy, err) ||
        !sim_json_get_number(d, o, "shm_message_overhead", false, 0, 1e-3, &m->p.shm_overhead, err) ||
        !sim_json_get_number(d, o, "memory_efficiency", false, 0.01, 1, &eff, err) ||
        !sim_json_get_number(d, o, "copy_traffic", false, 1, 10, &m->p.copy_traffic, err) ||
        !sim_json_get_number(d, o, "reduce_streams", false, 1, 10, &m->reduce_streams, err) ||
        !sim_json_get_number(d, o, "nic_payload_efficiency", false, 0.01, 1, nic_eff, err) ||
        !sim_json_get_number(d, o, "llc_bytes", false, 0, 1e13, &m->llc, err))
        return false;
    m->p.bw_mem = bw * eff;
    m->bw_dram = m->p.bw_mem;
    return true;
}

/* The rendezvous threshold's later defaults: {"VERSION": bytes, ...}, each
 * from that libfabric version on, in rising order. */
static bool read_thresholds(const SimJsonDoc *d, const cJSON *o, MpiModel *m, GError **err)
{
    const cJSON *by = cJSON_GetObjectItemCaseSensitive(o, "rendezvous_threshold_from_libfabric");
    if (!by)
        return true;
    if (!cJSON_IsObject(by)) {
        sim_json_error(d, by, err, "\"rendezvous_threshold_from_libfabric\" must be an object {VERSION: bytes}");
        return false;
    }
    for (const cJSON *e = by->child; e; e = e->next) {
        int v = coll_nccl_version_parse(e->string);
        if (v <= 0 || m->n_thr == (int)G_N_ELEMENTS(m->thr_from) || (m->n_thr && v <= m->thr_from[m->n_thr - 1])) {
            sim_json_error(d, e, err, "\"%s\": at most %d libfabric versions, rising", e->string,
                           (int)G_N_ELEMENTS(m->thr_from));
            return false;
        }
        if (!sim_json_get_number(d, by, e->string, true, 0, 1e12, &m->thr_val[m->n_thr], err))
            return false;
        m->thr_from[m->n_thr++] = v;
    }
    return true;
}

/* The eager limit under libfabric version `code` (0: not stated); a library
 * that sets the CXI provider's threshold itself (Cray MPICH) overrides the
 * version's default. */
static void apply_libfabric(MpiModel *m, int code)
{
    double thr = m->rndv_thr;
    for (int i = 0; i < m->n_thr && code >= m->thr_from[i]; i++)
        thr = m->thr_val[i];
    if (m->cxi && m->l.cxi_rndv_thr > 0)
        thr = m->l.cxi_rndv_thr;
    m->p.net_eager = thr + m->rndv_get_min;
    m->p.libfabric_version = code;
}

bool mpi_model_set_libfabric_version(MpiModel *m, const char *version)
{
    int code = coll_nccl_version_parse(version);
    if (code <= 0)
        return false;
    apply_libfabric(m, code);
    return true;
}

/* The NICs' transport, when the file describes it: its per-message software
 * cost, its eager limit (rendezvous threshold + the smallest Get, as
 * libfabric's CXI provider splits them, by libfabric version) and the
 * largest payload the core hands the NIC whole (beyond it the NIC reads
 * the host). */
static bool read_transport(const SimJsonDoc *d, const cJSON *trs, TopoTransport tr, TopoHostCpu cpu, MpiModel *m,
                           GError **err)
{
    static const char *const cpus[] = {"", "intel", "amd", "arm", "power"};
    MpiPlatform *p = &m->p;
    const cJSON *o = cJSON_IsObject(trs) && tr != TOPO_TRANSPORT_NONE
                         ? cJSON_GetObjectItemCaseSensitive(trs, topo_transport_name(tr)) : NULL;
    if (!o)
        return true;
    /* the per-message software is the host's: a value by processor family
     * where the file has one, else the default */
    const cJSON *by = cJSON_GetObjectItemCaseSensitive(o, "message_overhead_by_host_cpu");
    if (by && !cJSON_IsObject(by)) {
        sim_json_error(d, by, err, "\"message_overhead_by_host_cpu\" must be an object");
        return false;
    }
    const char *cn = (unsigned)cpu < G_N_ELEMENTS(cpus) ? cpus[cpu] : "";
    bool own = by && *cn && cJSON_GetObjectItemCaseSensitive(by, cn);
    if (!sim_json_get_number(d, own ? by : o, own ? cn : "message_overhead", true, 0, 1e-3, &p->net_overhead, err) ||
        !sim_json_get_number(d, o, "rendezvous_threshold", false, 0, 1e12, &m->rndv_thr, err) ||
        !sim_json_get_number(d, o, "rendezvous_get_min", false, 0, 1e12, &m->rndv_get_min, err) ||
        !sim_json_get_number(d, o, "rendezvous_round_trips", false, 0, 10, &p->net_rndv_trips, err) ||
        !sim_json_get_number(d, o, "rendezvous_events", false, 0, 10, &p->net_rndv_events, err) ||
        !sim_json_get_number(d, o, "low_latency_payload", false, 0, 1e9, &p->net_ll_payload, err) ||
        !read_thresholds(d, o, m, err))
        return false;
    m->cxi = tr == TOPO_TRANSPORT_CXI;
    apply_libfabric(m, 0);
    const char *pml = NULL;
    if (!sim_json_get_string(d, o, "openmpi_pml", false, &pml, err))
        return false;
    if (pml && !mpi_model_set_pml(m, pml)) {
        sim_json_error(d, cJSON_GetObjectItemCaseSensitive(o, "openmpi_pml"), err,
                       "\"openmpi_pml\" must be cm, ob1 or ucx");
        return false;
    }
    return true;
}

bool mpi_model_set_pml(MpiModel *m, const char *pml)
{
    if (!pml || (strcmp(pml, "cm") != 0 && strcmp(pml, "ob1") != 0 && strcmp(pml, "ucx") != 0))
        return false;
    m->p.pml_cm = m->lib == MPI_LIB_OPENMPI && strcmp(pml, "cm") == 0;
    return true;
}

static bool load_params(const char *path, const char *topo, TopoTransport tr, TopoHostCpu cpu, MpiModel *m,
                        double *nic_eff, GError **err)
{
    char *def = path ? NULL : sim_data_dir("models/presets/mpi.json");
    SimJsonDoc *d = sim_json_load_file(path ? path : def, err);
    g_free(def);
    if (!d)
        return false;
    if (path && is_overlay(d)) { /* the default file; the overlay after the platform is read */
        sim_json_free(d);
        return load_params(NULL, topo, tr, cpu, m, nic_eff, err);
    }
    const cJSON *r = sim_json_root(d), *libs = cJSON_GetObjectItemCaseSensitive(r, "libraries");
    bool ok = cJSON_IsObject(libs);
    if (!ok)
        sim_json_error(d, libs ? libs : r, err, "\"libraries\" must be an object");
    ok = ok && read_lib(d, libs, m->lib, &m->l, err) &&
         read_node(d, cJSON_GetObjectItemCaseSensitive(r, "nodes"), topo, m, nic_eff, err) &&
         read_transport(d, cJSON_GetObjectItemCaseSensitive(r, "transports"), tr, cpu, m, err);
    sim_json_free(d);
    return ok;
}

static bool is_overlay(const SimJsonDoc *d)
{
    return cJSON_IsString(cJSON_GetObjectItemCaseSensitive(sim_json_root(d), "overlay"));
}

/* ---------------- the fitted parameters ---------------- */

static const struct {
    const char *key, *unit;
} param_keys[MPI_NUM_PARAMS] = {
    {"mpi.overhead", "s"},       {"mpi.shm_latency", "s"},   {"mpi.shm_bandwidth", "B/s"},
    {"mpi.rndv_cost_shm", "s"},  {"mpi.net_latency", "s"},   {"mpi.net_bandwidth", "B/s"},
    {"mpi.memory_bandwidth", "B/s"}, {"mpi.datatype_round", "s"}, {"mpi.net_message_overhead", "s"},
};

const char *mpi_param_key(int i) { return i >= 0 && i < MPI_NUM_PARAMS ? param_keys[i].key : "?"; }
const char *mpi_param_unit(int i) { return i >= 0 && i < MPI_NUM_PARAMS ? param_keys[i].unit : "?"; }

double mpi_model_param(const MpiModel *m, int i)
{
    switch (i) {
    case 0: return m->p.overhead;
    case 1: return m->p.lat_shm;
    case 2: return m->p.bw_core;
    case 3: return m->l.rndv_cost_shm;
    case 4: return m->p.lat_net;
    case 5: return m->p.bw_net;
    case 6: return m->bw_dram;
    case 7: return m->l.ddt_round;
    case 8: return m->p.net_overhead; /* 0 where the NICs have no transport block: not fitted */
    default: return NAN;
    }
}

bool mpi_model_set_param(MpiModel *m, int i, double v)
{
    if (!(v > 0) || !isfinite(v) || i < 0 || i >= MPI_NUM_PARAMS)
        return false;
    switch (i) {
    case 0: m->p.overhead = v; break;
    case 1: m->p.lat_shm = v; break;
    case 2: m->p.bw_core = v; break;
    case 3: m->l.rndv_cost_shm = v; break;
    case 4: m->p.lat_net = v; break;
    case 5: /* one rank's path; the node's NICs in proportion */
        m->p.bw_nic *= v / m->p.bw_net;
        m->p.bw_net = v;
        break;
    case 6: m->p.bw_mem = m->bw_dram = v; break;
    case 7: m->l.ddt_round = v; break;
    default: m->p.net_overhead = v; break;
    }
    return true;
}

/* The "mpi." keys of an overlay file, over the model made from the defaults. */
static bool apply_overlay(const char *path, MpiModel *m, GError **err)
{
    SimJsonDoc *d = sim_json_load_file(path, err);
    if (!d)
        return false;
    const cJSON *ps = cJSON_GetObjectItemCaseSensitive(sim_json_root(d), "parameters");
    bool ok = cJSON_IsObject(ps);
    if (!ok)
        sim_json_error(d, ps ? ps : sim_json_root(d), err, "an overlay needs \"parameters\": {KEY: VALUE, ...}");
    for (const cJSON *e = ok ? ps->child : NULL; ok && e; e = e->next) {
        if (!g_str_has_prefix(e->string, "mpi."))
            continue; /* the NCCL model's */
        int i = 0;
        while (i < MPI_NUM_PARAMS && strcmp(param_keys[i].key, e->string) != 0)
            i++;
        const cJSON *v = cJSON_IsObject(e) ? cJSON_GetObjectItemCaseSensitive(e, "value") : e;
        if (i == MPI_NUM_PARAMS) {
            sim_json_error(d, e, err, "unknown MPI model parameter \"%s\"", e->string);
            ok = false;
        } else if (!cJSON_IsNumber(v) || !mpi_model_set_param(m, i, v->valuedouble)) {
            sim_json_error(d, v ? v : e, err, "\"%s\" must be a positive number (%s)", e->string, param_keys[i].unit);
            ok = false;
        }
    }
    sim_json_free(d);
    return ok;
}

/* ---------------- the platform from the topology ---------------- */

/* Latency (sum) and bandwidth (narrowest link) of the route a -> b. */
static bool path_of(const Topo *t, int a, int b, double *lat, double *bw)
{
    int cap = topo_max_route_length(t);
    int *links = g_new(int, cap > 0 ? cap : 1);
    int n = topo_route(t, a, b, 0, links, cap > 0 ? cap : 1);
    *lat = 0;
    *bw = INFINITY;
    for (int i = 0; i < n; i++) {
        *lat += topo_link_latency(t, links[i]);
        if (topo_link_bandwidth(t, links[i]) < *bw)
            *bw = topo_link_bandwidth(t, links[i]);
    }
    g_free(links);
    return n > 0;
}

/* The transport of the first network link on the route a -> b, and the
 * latency of the PCIe link the sender's NIC hangs off (0: none). */
static TopoTransport route_transport(const Topo *t, int a, int b, double *pcie)
{
    int cap = topo_max_route_length(t);
    int *links = g_new(int, cap > 0 ? cap : 1);
    int n = topo_route(t, a, b, 0, links, cap > 0 ? cap : 1);
    TopoTransport tr = TOPO_TRANSPORT_NONE;
    *pcie = 0;
    for (int i = 0; i < n && tr == TOPO_TRANSPORT_NONE; i++) {
        if (topo_link_kind(t, links[i]) == TOPO_LINK_PCIE)
            *pcie = topo_link_latency(t, links[i]);
        if (topo_link_kind(t, links[i]) == TOPO_LINK_NET)
            tr = topo_link_transport(t, links[i]);
    }
    g_free(links);
    return tr;
}

/* A node's NICs: the distinct network links the routes of the job's `ppn`
 * ranks to the next node leave by, and their bandwidth summed. */
static double node_nic_bandwidth(const Topo *t, double path_bw, int ppn)
{
    int tppn = topo_ranks_per_node(t), cap = topo_max_route_length(t);
    int *links = g_new(int, cap > 0 ? cap : 1);
    GHashTable *seen = g_hash_table_new(g_direct_hash, g_direct_equal);
    double sum = 0;
    for (int r = 0; r < ppn && r < tppn; r++) {
        int n = topo_route(t, r, tppn + r, 0, links, cap > 0 ? cap : 1);
        for (int i = 0; i < n; i++)
            if (topo_link_kind(t, links[i]) == TOPO_LINK_NET) {
                if (!g_hash_table_contains(seen, GINT_TO_POINTER(links[i]))) {
                    g_hash_table_add(seen, GINT_TO_POINTER(links[i]));
                    double bw = topo_link_bandwidth(t, links[i]);
                    sum += bw < path_bw ? bw : path_bw;
                }
                break;
            }
    }
    g_hash_table_destroy(seen);
    g_free(links);
    return sum > 0 ? sum : path_bw;
}

bool mpi_params_is_overlay(const char *path)
{
    SimJsonDoc *d = path ? sim_json_load_file(path, NULL) : NULL;
    bool ov = d && is_overlay(d);
    sim_json_free(d);
    return ov;
}

/* An overlay's keys when `path` is one (read again: small files, once per model). */
static bool overlay_file(const char *path, MpiModel *m, GError **err)
{
    SimJsonDoc *d = sim_json_load_file(path, err);
    if (!d)
        return false;
    bool ov = is_overlay(d);
    sim_json_free(d);
    return !ov || apply_overlay(path, m, err);
}

MpiModel *mpi_model_new(const Topo *t, int nodes, int ppn, MpiLib lib, const char *params, GError **err)
{
    int tppn = topo_ranks_per_node(t), tn = topo_num_nodes(t);
    if (nodes < 1 || ppn < 1 || nodes > tn || ppn > tppn || lib < 0 || lib >= MPI_NUM_LIBS) {
        g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "%d nodes of %d ranks do not fit topology %s (%d nodes of %d)",
                    nodes, ppn, topo_name(t), tn, tppn);
        return NULL;
    }
    MpiModel *m = g_new0(MpiModel, 1);
    m->lib = lib;
    m->p.nodes = nodes;
    m->p.ppn = ppn;
    m->p.bw_mem = m->bw_dram = INFINITY;
    m->p.copy_traffic = 1;
    m->reduce_streams = 2;
    m->p.net_eager = m->p.net_ll_payload = m->rndv_thr = INFINITY;
    double nic_eff = 1, pcie = 0;
    TopoTransport tr = tn > 1 && nodes > 1 ? route_transport(t, 0, tppn, &pcie) : TOPO_TRANSPORT_NONE;
    m->p.net_host_read = 2 * pcie;
    if (!load_params(params, topo_name(t), tr, topo_host_cpu(t), m, &nic_eff, err)) {
        g_free(m);
        return NULL;
    }
    m->p.overhead = m->l.overhead;
    const char *lf = topo_libfabric_version(t);
    if (lf && !mpi_model_set_libfabric_version(m, lf)) {
        g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "topology %s: libfabric_version \"%s\" is out of range (numbers "
                    "up to 99)", topo_name(t), lf);
        g_free(m);
        return NULL;
    }
    double bw = INFINITY;
    m->p.bw_core = INFINITY;
    m->p.bw_nic = INFINITY;
    if (tppn > 1 && path_of(t, 0, 1, &m->p.lat_shm, &bw))
        m->p.bw_core = m->core_copy > 0 ? m->core_copy : bw; /* a core copies, whatever links its nodes' GPUs have */
    if (tn > 1 && path_of(t, 0, tppn, &m->p.lat_net, &bw)) {
        m->p.bw_net = bw * nic_eff;
        m->p.bw_nic = node_nic_bandwidth(t, bw, ppn) * nic_eff;
    } else {
        m->p.bw_net = m->p.bw_nic = INFINITY;
    }
    if (!isfinite(m->p.bw_core)) /* one rank per node: no shared-memory path to read */
        m->p.bw_core = isfinite(m->p.bw_net) ? m->p.bw_net : 1e10;
    if (!isfinite(m->p.bw_nic))
        m->p.bw_net = m->p.bw_nic = m->p.bw_core;
    if (params && !overlay_file(params, m, err)) {
        g_free(m);
        return NULL;
    }
    return m;
}

void mpi_model_free(MpiModel *m) { g_free(m); }

const MpiPlatform *mpi_model_platform(const MpiModel *m) { return &m->p; }

/* One rank's buffers in a collective of `bytes` (mpi_cost's convention) on
 * n ranks: its send and receive buffers. */
static double working_set(CollOp op, double bytes, int n)
{
    switch (op) {
    case COLL_ALLGATHER: return bytes + bytes / n;
    case COLL_REDUCESCATTER: return bytes + bytes / n;
    case COLL_BROADCAST: return bytes;
    default: return 2 * bytes;
    }
}

bool mpi_cost(const MpiModel *m, CollOp op, double bytes, MpiCost *out)
{
    if (!(bytes >= 0) || op < 0 || op >= COLL_NUM_OPS)
        return false;
    if (m->p.nodes * m->p.ppn == 1) {
        *out = (MpiCost){0, "none"};
        return true;
    }
    MpiModel c = *m;
    double ws = working_set(op, bytes, m->p.nodes * m->p.ppn) * m->p.ppn;
    /* OSU reuses its buffers every iteration: buffers that fit the node's
     * caches stay there; a cyclic sweep over more than an LRU-like cache
     * holds misses on every line, so then everything streams from DRAM */
    if (m->llc > 0 && ws <= m->llc)
        c.p.bw_mem = INFINITY;
    /* under pml cm a message between two ranks of a node leaves one's NIC
     * and enters the other's, as one between nodes does: each rank is an
     * endpoint of its own, with its share of the node's NICs and memory */
    if (m->p.pml_cm && m->p.nodes > 1 && m->p.ppn > 1) {
        c.p.nodes = m->p.nodes * m->p.ppn;
        c.p.bw_nic /= m->p.ppn;
        c.p.bw_mem /= m->p.ppn;
        c.p.ppn = 1;
    }
    return m->lib == MPI_LIB_OPENMPI ? mpi_select_openmpi(&c, op, bytes, out) : mpi_select_mpich(&c, op, bytes, out);
}

/* `window` messages back to back, each rank's core running `ops` MPI
 * operations per message (1: it sends or receives; 2: both): the latency
 * once; over the network the core's software per message and the NIC's
 * DMA of the previous message overlap (a pipeline); in shared memory the
 * core copies, so they add. */
static double window_time(const MpiModel *m, double bytes, int window, int ops)
{
    const MpiPlatform *p = &m->p;
    int w = window > 1 ? window : 1;
    if (p->nodes < 2) {
        double send = ops * mpi_shm_soft(m) + mpi_shm_copy(m, bytes);
        return p->lat_shm + w * send;
    }
    return mpi_net_train(m, bytes, w, ops, 0, mpi_net_latency(m, bytes));
}

double mpi_p2p_time(const MpiModel *m, double bytes, int window) { return window_time(m, bytes, window, 1); }

double mpi_p2p_bidir_time(const MpiModel *m, double bytes, int window) { return window_time(m, bytes, window, 2); }
