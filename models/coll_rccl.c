/* RCCL, AMD's fork of NCCL, as its own library: the "rccl" object of the
 * parameter file (its base and per-step latencies, the corrections it drops),
 * what a group takes from it when the library is rccl, the tuner twin that
 * rates choices on 8-GPU meshes by RCCL's MI300-class tuning model (or the
 * architecture's own, gfx950's), and across nodes the protocol RCCL sets by
 * the bytes per rank (its LL/LL128 ranges by architecture and version). */
#include "coll_internal.h"

#include <string.h>

static const char *lib_names[COLL_NUM_LIBS] = {"nccl", "rccl"};

const char *coll_library_name(CollLibrary lib) { return lib >= 0 && lib < COLL_NUM_LIBS ? lib_names[lib] : "?"; }

int coll_library_parse(const char *s)
{
    for (int i = 0; s && i < COLL_NUM_LIBS; i++)
        if (!g_ascii_strcasecmp(s, lib_names[i]))
            return i;
    return -1;
}

static bool amd_name(const char *s) { return s && (s[0] == 'm' || s[0] == 'M') && (s[1] == 'i' || s[1] == 'I') && g_ascii_isdigit(s[2]); }

CollLibrary coll_library_default(const Topo *t)
{
    return amd_name(topo_accelerator(t)) || amd_name(topo_name(t)) ? COLL_LIB_RCCL : COLL_LIB_NCCL;
}

/* ---------------- reading ---------------- */

static const char *hw_names[HW_NUM] = {"nvlink", "pcie", "net"}, *fam_names[2] = {"ring", "tree"};

static bool get_triple(const SimJsonDoc *d, const cJSON *o, const char *key, double out[COLL_NUM_PROTOS], GError **err)
{
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!cJSON_IsObject(t)) {
        sim_json_error(d, t ? t : o, err, "\"%s\" must be an object with ll, ll128, simple", key);
        return false;
    }
    for (int p = 0; p < COLL_NUM_PROTOS; p++)
        if (!sim_json_get_number(d, t, coll_proto_name(p), true, 0, 1, &out[p], err))
            return false;
    return true;
}

static const cJSON *get_obj(const SimJsonDoc *d, const cJSON *o, const char *key, GError **err)
{
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!cJSON_IsObject(c))
        sim_json_error(d, c ? c : o, err, "\"%s\" must be an object", key);
    return cJSON_IsObject(c) ? c : NULL;
}

/* step_latency: {nvlink|pcie|net: {ring|tree: {ll, ll128, simple}}} */
static bool get_steps(const SimJsonDoc *d, const cJSON *o, double step[HW_NUM][2][COLL_NUM_PROTOS], GError **err)
{
    const cJSON *s = get_obj(d, o, "step_latency", err);
    for (int h = 0; s && h < HW_NUM; h++) {
        const cJSON *x = get_obj(d, s, hw_names[h], err);
        for (int f = 0; f < 2; f++)
            if (!x || !get_triple(d, x, fam_names[f], step[h][f], err))
                return false;
    }
    return s != NULL;
}

/* [lo, hi] of bytes per rank, lo < hi (or both 0: no range) */
static bool get_range(const SimJsonDoc *d, const cJSON *o, const char *key, double out[2], GError **err)
{
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!a) {
        out[0] = out[1] = 0;
        return true;
    }
    for (int i = 0; cJSON_IsArray(a) && cJSON_GetArraySize(a) == 2 && i < 2; i++) {
        const cJSON *v = cJSON_GetArrayItem(a, i);
        out[i] = cJSON_IsNumber(v) ? v->valuedouble : -1;
    }
    if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) != 2 || !(out[0] >= 0 && out[1] >= out[0] && out[1] <= 1e15)) {
        sim_json_error(d, a, err, "\"%s\" must be [min, max] bytes per rank, 0 <= min <= max", key);
        return false;
    }
    return true;
}

/* One table of "multinode_protocol": an architecture from an RCCL version on. */
static bool get_ranges(const SimJsonDoc *d, const cJSON *t, CollRcclRanges *r, GError **err)
{
    memset(r, 0, sizeof *r);
    const cJSON *acc = cJSON_GetObjectItemCaseSensitive(t, "accelerators"), *v;
    const char *from = NULL;
    if (!cJSON_IsObject(t) || !cJSON_IsArray(acc) || cJSON_GetArraySize(acc) < 1 ||
        cJSON_GetArraySize(acc) > RCCL_RANGE_NAMES) {
        sim_json_error(d, cJSON_IsObject(t) ? (acc ? acc : t) : t, err,
                       "a protocol table needs \"accelerators\": 1 to %d name prefixes", RCCL_RANGE_NAMES);
        return false;
    }
    cJSON_ArrayForEach(v, acc)
    {
        if (!cJSON_IsString(v) || !v->valuestring[0] || strlen(v->valuestring) >= sizeof r->names[0]) {
            sim_json_error(d, v, err, "an accelerator prefix must be a string of 1 to %zu characters",
                           sizeof r->names[0] - 1);
            return false;
        }
        g_strlcpy(r->names[r->nnames++], v->valuestring, sizeof r->names[0]);
    }
    if (!sim_json_get_string(d, t, "rccl_from", true, &from, err) || !sim_json_get_bool(d, t, "ll128", &r->ll128, err))
        return false;
    if ((r->from_version = coll_nccl_version_parse(from)) <= 0) {
        sim_json_error(d, cJSON_GetObjectItemCaseSensitive(t, "rccl_from"), err, "\"rccl_from\" must be a version X.Y");
        return false;
    }
    for (int op = 0; op < COLL_NUM_OPS; op++) {
        const cJSON *o = cJSON_GetObjectItemCaseSensitive(t, coll_op_name(op));
        if (!o)
            continue;
        if (!cJSON_IsObject(o) || op == COLL_ALLTOALL) {
            sim_json_error(d, o, err, "\"%s\" must be an object of ll and ll128 ranges", coll_op_name(op));
            return false;
        }
        if (!get_range(d, o, "ll", r->ll[op], err) || !get_range(d, o, "ll128", r->ll128_range[op], err) ||
            !sim_json_get_number(d, o, "ll128_per_node_doubling", false, 0, 1e15, &r->ll128_step[op], err))
            return false;
    }
    return true;
}

static bool get_multinode(const SimJsonDoc *d, const cJSON *o, CollRccl *c, GError **err)
{
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(o, "multinode_protocol"), *t;
    c->nranges = 0;
    if (!m)
        return true;
    const cJSON *ts = cJSON_IsObject(m) ? cJSON_GetObjectItemCaseSensitive(m, "tables") : NULL;
    if (!cJSON_IsArray(ts) || cJSON_GetArraySize(ts) > RCCL_MAX_RANGES) {
        sim_json_error(d, ts ? ts : m, err, "\"multinode_protocol\" needs \"tables\": at most %d", RCCL_MAX_RANGES);
        return false;
    }
    cJSON_ArrayForEach(t, ts)
    {
        if (!get_ranges(d, t, &c->ranges[c->nranges], err))
            return false;
        c->nranges++;
    }
    return true;
}

/* A tuning model: step latencies, bus bandwidth ratios by node count, and
 * the bandwidth correction factors by log2(bytes / 64) (RCCL's own exceed 1
 * in places: tuning_model_6's 2.0 and 5.5). */
static bool get_mesh(const SimJsonDoc *d, const cJSON *mesh, double step[HW_NUM][2][COLL_NUM_PROTOS],
                     double ratio[2][2][COLL_NUM_PROTOS], double corr[2][COLL_NUM_PROTOS][RCCL_CORR], GError **err)
{
    const cJSON *r;
    if (!get_steps(d, mesh, step, err) || !(r = get_obj(d, mesh, "bandwidth_ratio", err)))
        return false;
    static const char *nodes[2] = {"two_nodes", "more_nodes"};
    for (int n = 0; n < 2; n++) {
        const cJSON *x = get_obj(d, r, nodes[n], err);
        for (int f = 0; f < 2; f++)
            if (!x || !get_triple(d, x, fam_names[f], ratio[n][f], err))
                return false;
    }
    static const char *names[2] = {"ring_correction", "tree_correction"};
    for (int f = 0; f < 2; f++) {
        const cJSON *x = get_obj(d, mesh, names[f], err);
        for (int q = 0; x && q < COLL_NUM_PROTOS; q++) {
            const cJSON *a = cJSON_GetObjectItemCaseSensitive(x, coll_proto_name(q));
            if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) != RCCL_CORR) {
                sim_json_error(d, a ? a : x, err, "%s.%s must be an array of %d numbers", names[f], coll_proto_name(q),
                               RCCL_CORR);
                return false;
            }
            for (int i = 0; i < RCCL_CORR; i++) {
                const cJSON *v = cJSON_GetArrayItem(a, i);
                if (!cJSON_IsNumber(v) || !(v->valuedouble >= 0 && v->valuedouble <= 10)) {
                    sim_json_error(d, v, err, "%s.%s[%d] must be in [0, 10]", names[f], coll_proto_name(q), i);
                    return false;
                }
                corr[f][q][i] = v->valuedouble;
            }
        }
        if (!x)
            return false;
    }
    return true;
}

/* Optional "mesh_tuning_by_architecture": the tuning model RCCL assigns an
 * architecture in place of the platform's (rcclGetTuningIndexForArch). */
static bool get_mesh_by_arch(const SimJsonDoc *d, const cJSON *o, CollRccl *c, GError **err)
{
    const cJSON *l = cJSON_GetObjectItemCaseSensitive(o, "mesh_tuning_by_architecture"), *m;
    c->nalt = 0;
    if (!l)
        return true;
    if (!cJSON_IsArray(l) || cJSON_GetArraySize(l) > RCCL_MAX_ALT) {
        sim_json_error(d, l, err, "\"mesh_tuning_by_architecture\" must be an array of at most %d models", RCCL_MAX_ALT);
        return false;
    }
    cJSON_ArrayForEach(m, l)
    {
        CollRcclMesh *a = &c->alt[c->nalt];
        const cJSON *acc = cJSON_IsObject(m) ? cJSON_GetObjectItemCaseSensitive(m, "accelerators") : NULL, *v;
        memset(a, 0, sizeof *a);
        if (!cJSON_IsArray(acc) || cJSON_GetArraySize(acc) < 1 || cJSON_GetArraySize(acc) > RCCL_RANGE_NAMES) {
            sim_json_error(d, acc ? acc : m, err, "a tuning model needs \"accelerators\": 1 to %d name prefixes",
                           RCCL_RANGE_NAMES);
            return false;
        }
        cJSON_ArrayForEach(v, acc)
        {
            if (!cJSON_IsString(v) || !v->valuestring[0] || strlen(v->valuestring) >= sizeof a->names[0]) {
                sim_json_error(d, v, err, "an accelerator prefix must be a string of 1 to %zu characters",
                               sizeof a->names[0] - 1);
                return false;
            }
            g_strlcpy(a->names[a->nnames++], v->valuestring, sizeof a->names[0]);
        }
        const char *from = NULL;
        if (!sim_json_get_string(d, m, "rccl_from", true, &from, err))
            return false;
        if ((a->from_version = coll_nccl_version_parse(from)) <= 0) {
            sim_json_error(d, cJSON_GetObjectItemCaseSensitive(m, "rccl_from"), err, "\"rccl_from\" must be a version X.Y");
            return false;
        }
        if (!get_mesh(d, m, a->step, a->ratio, a->corr, err))
            return false;
        c->nalt++;
    }
    return true;
}

/* Optional: a file without it (an older full file) leaves RCCL as NCCL. */
bool coll_params_read_rccl(const SimJsonDoc *d, const cJSON *r, CollParams *p, GError **err)
{
    const cJSON *o = cJSON_GetObjectItemCaseSensitive(r, "rccl");
    CollRccl *c = &p->rccl;
    if (!o) {
        c->nranges = c->nalt = 0;
        for (int q = 0; q < COLL_NUM_PROTOS; q++)
            c->base[q] = p->base[COLL_RING][q];
        memcpy(c->step, p->step, sizeof c->step);
        c->ll_intra_factor = p->ll_intra_factor;
        c->ring_plateau = p->ring_plateau;
        c->ll128 = p->ll128_multinode;
        memcpy(c->mesh_step, p->step, sizeof c->mesh_step);
        for (int f = 0; f < 2; f++)
            for (int q = 0; q < COLL_NUM_PROTOS; q++)
                for (int i = 0; i < RCCL_CORR; i++)
                    c->mesh_corr[f][q][i] = 1;
        for (int n = 0; n < 2; n++)
            for (int f = 0; f < 2; f++)
                memcpy(c->mesh_ratio[n][f], p->proto_bw[f], sizeof c->mesh_ratio[n][f]);
        return true;
    }
    if (!cJSON_IsObject(o)) {
        sim_json_error(d, o, err, "\"rccl\" must be an object");
        return false;
    }
    const cJSON *mesh;
    if (!get_triple(d, o, "base_latency", c->base, err) || !get_steps(d, o, c->step, err) ||
        !sim_json_get_number(d, o, "ll_intra_latency_factor_multinode", true, 0, 100, &c->ll_intra_factor, err) ||
        !sim_json_get_number(d, o, "ring_plateau_factor", true, 1, 10, &c->ring_plateau, err) ||
        !sim_json_get_bool(d, o, "ll128", &c->ll128, err) || !(mesh = get_obj(d, o, "mesh_tuning", err)) ||
        !get_mesh(d, mesh, c->mesh_step, c->mesh_ratio, c->mesh_corr, err) || !get_mesh_by_arch(d, o, c, err))
        return false;
    if (!get_multinode(d, o, c, err))
        return false;
    const cJSON *ms = cJSON_GetObjectItemCaseSensitive(o, "msccl");
    c->msccl_before = 0;
    if (!ms)
        return true;
    long ranks = 0;
    if (!cJSON_IsObject(ms)) {
        sim_json_error(d, ms, err, "\"rccl.msccl\" must be an object");
        return false;
    }
    if (!sim_json_get_int(d, ms, "ranks", true, 2, COLL_MAX_PPN, &ranks, err) ||
        !sim_json_get_number(d, ms, "allreduce_ll_max_bytes", true, 0, 1e15, &c->msccl_ll_max, err) ||
        !sim_json_get_number(d, ms, "allreduce_simple_max_bytes", true, 0, 1e15, &c->msccl_simple_max, err) ||
        !sim_json_get_number(d, ms, "small_max_bytes", true, 0, 1e15, &c->msccl_small_max, err) ||
        !sim_json_get_number(d, ms, "small_chunks_per_loop", true, 1, 1e9, &c->msccl_small_chunks, err) ||
        !sim_json_get_number(d, ms, "chunks_per_loop", true, 1, 1e9, &c->msccl_chunks, err) ||
        !sim_json_get_number(d, ms, "element_bytes", true, 1, 64, &c->msccl_elem, err))
        return false;
    c->msccl_ranks = (int)ranks;
    const char *before = NULL;
    if (!sim_json_get_string(d, ms, "rccl_before", false, &before, err))
        return false;
    if (before && (c->msccl_before = coll_nccl_version_parse(before)) <= 0) {
        sim_json_error(d, cJSON_GetObjectItemCaseSensitive(ms, "rccl_before"), err,
                       "\"rccl_before\" must be a version X.Y");
        return false;
    }
    return true;
}

static const char *accel_of(const CollGroup *g)
{
    return topo_accelerator(g->t) ? topo_accelerator(g->t) : topo_name(g->t);
}

static bool has_prefix(const char *acc, const char names[][16], int n)
{
    for (int k = 0; acc && k < n; k++)
        if (!g_ascii_strncasecmp(acc, names[k], strlen(names[k])))
            return true;
    return false;
}

/* The architecture's own tuning model (an index into rccl.alt), the newest
 * from a version at or below the group's; -1: the mesh model's. */
static int alt_of(const CollGroup *g)
{
    int best = -1;
    for (int k = 0; k < g->p.rccl.nalt; k++) {
        const CollRcclMesh *a = &g->p.rccl.alt[k];
        if (has_prefix(accel_of(g), a->names, a->nnames) &&
            (g->nccl_version == 0 || a->from_version <= g->nccl_version) &&
            (best < 0 || a->from_version > g->p.rccl.alt[best].from_version))
            best = k;
    }
    return best;
}

double coll_rccl_tuner_correction(const CollGroup *g, CollAlgo a, CollProto p, double bytes)
{
    if (!g->tuner || g->library != COLL_LIB_RCCL || !(a == COLL_TREE || (a == COLL_RING && g->nnodes > 1)))
        return 1;
    int lg = 0; /* log2i(bytes >> 6), the last entry for all larger */
    for (double v = floor(bytes / 64); v >= 2 && lg < RCCL_CORR - 1; v /= 2)
        lg++;
    int k = alt_of(g);
    return k < 0 ? g->p.rccl.mesh_corr[a == COLL_TREE][p][lg] : g->p.rccl.alt[k].corr[a == COLL_TREE][p][lg];
}

bool coll_rccl_msccl(const CollGroup *g, CollOp op, double bytes, CollProto *proto)
{
    const CollRccl *c = &g->p.rccl;
    if (g->library != COLL_LIB_RCCL || !g->tuner || op != COLL_ALLREDUCE || g->nnodes != 1 || c->msccl_ranks == 0 ||
        g->n != c->msccl_ranks || !(bytes > 0) || bytes > c->msccl_simple_max)
        return false;
    /* gone from the version that removed it; a run that names no version
     * keeps it (the measured single-node stacks predate the removal) */
    if (c->msccl_before > 0 && g->nccl_version > 0 && g->nccl_version >= c->msccl_before)
        return false;
    /* an algorithm runs whole loops of its chunks: the element count must divide */
    double chunks = bytes <= c->msccl_small_max ? c->msccl_small_chunks : c->msccl_chunks;
    double elems = bytes / c->msccl_elem;
    if (elems != floor(elems) || fmod(elems, chunks) != 0)
        return false;
    *proto = bytes <= c->msccl_ll_max ? COLL_LL : COLL_SIMPLE;
    return true;
}

/* The table for this group's accelerator and RCCL version: the newest one
 * from a version at or below it (the newest of all when the version is not
 * known); NULL where none holds (other GPUs, older RCCL). */
static const CollRcclRanges *ranges_of(const CollGroup *g)
{
    const CollRccl *c = &g->p.rccl;
    const CollRcclRanges *best = NULL;
    if (g->library != COLL_LIB_RCCL)
        return NULL;
    for (int i = 0; i < c->nranges; i++) {
        const CollRcclRanges *r = &c->ranges[i];
        if (has_prefix(accel_of(g), r->names, r->nnames) &&
            (g->nccl_version == 0 || r->from_version <= g->nccl_version) &&
            (!best || r->from_version > best->from_version))
            best = r;
    }
    return best;
}

/* RCCL enables LL128 where built with it for the architecture and the NIC
 * sits at most behind a PCIe switch from the GPU (tuning.cc: typeInter <=
 * PATH_PXB; "nic_path": "phb" says otherwise). */
bool coll_rccl_ll128(const CollGroup *g)
{
    const CollRcclRanges *r = ranges_of(g);
    return g->library == COLL_LIB_RCCL && (g->p.rccl.ll128 || (r && r->ll128 && !g->nic_on_host));
}

bool coll_rccl_multinode_proto(const CollGroup *g, CollOp op, double bytes, CollProto *proto)
{
    const CollRcclRanges *r = g->nnodes >= 2 && op >= 0 && op < COLL_ALLTOALL ? ranges_of(g) : NULL;
    if (!r || (r->ll[op][1] <= 0 && r->ll128_range[op][1] <= 0) || !(bytes >= 0))
        return false;
    /* bytes per rank: an all-reduce's buffer, the others' share of theirs */
    double s = op == COLL_ALLREDUCE ? bytes : floor(bytes / g->n);
    *proto = COLL_SIMPLE;
    if (s > r->ll[op][0] && s <= r->ll[op][1])
        *proto = COLL_LL;
    double hi = r->ll128_range[op][1];
    if (op == COLL_ALLREDUCE) {
        int lg = 0;
        for (int n = g->nnodes; n > 1; n /= 2)
            lg++;
        hi += (lg - 1) * r->ll128_step[op];
    }
    if (coll_rccl_ll128(g) && s > r->ll128_range[op][0] && s <= hi)
        *proto = COLL_LL128;
    return true;
}

/* ---------------- a group on RCCL ---------------- */

/* RCCL's tuning model 5 is for nodes of 8 GPUs each linked to every other
 * (src/graph/rome_models.cc: the MI300X-class platforms): every pair one
 * hop apart over a GPU link. */
static bool mesh8(const CollGroup *g)
{
    if (g->ppn != 8)
        return false;
    const int *local = &g->by_node[g->node_start[0]];
    int cap = coll_route_cap(g), *links = g_new(int, cap);
    bool mesh = true;
    for (int a = 0; a < 8 && mesh; a++)
        for (int b = 0; b < 8 && mesh; b++)
            if (a != b) {
                int n = topo_route(g->t, g->ranks[local[a]], g->ranks[local[b]], 0, links, cap);
                mesh = n == 1 && topo_link_kind(g->t, links[0]) == TOPO_LINK_NVLINK;
            }
    g_free(links);
    return mesh;
}

static void put_rccl_latencies(CollParams *p, const double step[HW_NUM][2][COLL_NUM_PROTOS])
{
    for (int a = 0; a < COLL_NUM_ALGOS; a++)
        if (a != COLL_NVLS && a != COLL_NVLS_TREE && a != COLL_PAT)
            memcpy(p->base[a], p->rccl.base, sizeof p->base[a]);
    memcpy(p->step, step, sizeof p->step);
    p->ll_intra_factor = p->rccl.ll_intra_factor;
    p->ring_plateau = p->rccl.ring_plateau;
    p->ll128_multinode = p->rccl.ll128;
    /* NCCL's per-channel LL128 maxima are in tuning.cc's non-HIP branch
     * only: on AMD LL128 runs at the protocol's share of the bus rate */
    p->ll128_max_per_ch = INFINITY;
}

void coll_rccl_free(CollGroup *g)
{
    g_free(g->tuner);
    g->tuner = NULL;
}

void coll_rccl_apply(CollGroup *g)
{
    coll_fabric_forget(g); /* the factors follow the constants */
    coll_rccl_free(g);
    g->p = g->p0;
    if (g->library == COLL_LIB_RCCL)
        put_rccl_latencies(&g->p, g->p.rccl.step);
    coll_group_add_transport_latency(g);
    if (g->library == COLL_LIB_NCCL)
        coll_nccl_make_tuner(g);
    if (g->library != COLL_LIB_RCCL || !mesh8(g))
        return;
    /* the twin: the tuning model's latencies and, in place of NCCL's
     * protocol factors, its bus bandwidth ratios (tuning.cc: busBw *=
     * bwRatio on AMD builds) */
    CollGroup *t = coll_group_twin(g);
    t->p = g->p0;
    int k = alt_of(g), n = g->nnodes <= 2 ? 0 : 1;
    const CollRcclMesh *alt = k < 0 ? NULL : &g->p.rccl.alt[k];
    put_rccl_latencies(&t->p, alt ? alt->step : g->p.rccl.mesh_step);
    coll_group_add_transport_latency(t);
    memcpy(t->p.proto_bw[KIND_RING], alt ? alt->ratio[n][0] : g->p.rccl.mesh_ratio[n][0], sizeof t->p.proto_bw[KIND_RING]);
    memcpy(t->p.proto_bw[KIND_TREE], alt ? alt->ratio[n][1] : g->p.rccl.mesh_ratio[n][1], sizeof t->p.proto_bw[KIND_TREE]);
    for (int q = 0; q < COLL_NUM_PROTOS; q++)
        for (int i = 0; i < TREE_CORR; i++)
            t->p.tree_correction[q][i] = 1; /* its own correction factors are not modelled */
    g->tuner = t;
}

void coll_group_set_library(CollGroup *g, CollLibrary lib)
{
    CollLibrary l = lib == COLL_LIB_RCCL ? COLL_LIB_RCCL : COLL_LIB_NCCL;
    if (l == g->library)
        return;
    g->library = l;
    coll_rccl_apply(g);
}

CollLibrary coll_group_library(const CollGroup *g) { return g->library; }
