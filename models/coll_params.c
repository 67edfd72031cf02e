/* The collective model's parameters: reading models/presets/collectives.json
 * (or the file --params names) into CollParams, the default file once per
 * process: latencies, protocol and link-kind efficiencies, the host launch
 * cost, and each NIC transport's latency, overhead and bandwidth fraction. */
#include "coll_internal.h"
#include "sim_data.h"

#include <string.h>

static bool get_proto_triple(const SimJsonDoc *d, const cJSON *obj, const char *key, double out[COLL_NUM_PROTOS],
                             double hi, GError **err)
{
    const cJSON *o = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!cJSON_IsObject(o)) {
        sim_json_error(d, o ? o : obj, err, "\"%s\" must be an object with ll, ll128, simple", key);
        return false;
    }
    for (int p = 0; p < COLL_NUM_PROTOS; p++)
        if (!sim_json_get_number(d, o, coll_proto_name(p), true, 0, hi, &out[p], err))
            return false;
    return true;
}

static const cJSON *get_object(const SimJsonDoc *d, const cJSON *obj, const char *key, GError **err)
{
    const cJSON *o = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!cJSON_IsObject(o))
        sim_json_error(d, o ? o : obj, err, "\"%s\" must be an object", key);
    return cJSON_IsObject(o) ? o : NULL;
}

/* A list of names ("algorithms" or "protocols") as a bit mask by what
 * `parse` returns; absent: 0 (no limit). */
static bool get_name_mask(const SimJsonDoc *d, const cJSON *o, const char *key, int (*parse)(const char *), int n,
                          unsigned *mask, GError **err)
{
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(o, key);
    *mask = 0;
    if (!a)
        return true;
    if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) == 0) {
        sim_json_error(d, a, err, "\"%s\" must be a non-empty array of names", key);
        return false;
    }
    for (const cJSON *c = a->child; c; c = c->next) {
        int k = cJSON_IsString(c) ? parse(c->valuestring) : -2;
        if (k < 0 || k >= n) {
            sim_json_error(d, c, err, "\"%s\": unknown name %s%s%s", key, cJSON_IsString(c) ? "\"" : "",
                           cJSON_IsString(c) ? c->valuestring : "(not a string)", cJSON_IsString(c) ? "\"" : "");
            return false;
        }
        *mask |= 1u << k;
    }
    return true;
}

/* An optional NCCL version key of profile `e` ("since", "before"): its
 * code, 0 where absent, -1 (an error set) where it is no version. */
static int get_profile_version(const SimJsonDoc *d, const cJSON *e, const char *key, GError **err)
{
    const char *v = NULL;
    if (!sim_json_get_string(d, e, key, false, &v, err))
        return -1;
    int code = v ? coll_nccl_version_parse(v) : 0;
    if (code < 0)
        sim_json_error(d, cJSON_GetObjectItemCaseSensitive(e, key), err,
                       "\"nccl_profiles\": \"%s\" must be an NCCL version such as \"2.23\"", key);
    return code;
}

/* An optional boolean of profile `e`, `dflt` where absent. */
static bool get_profile_flag(const SimJsonDoc *d, const cJSON *e, const char *key, bool dflt, bool *out, GError **err)
{
    *out = dflt;
    return !cJSON_GetObjectItemCaseSensitive(e, key) || sim_json_get_bool(d, e, key, out, err);
}

/* "gpu_before" of profile `e`: the GEN_* it names, GEN_NUM where absent, -1
 * (an error set) where it names none. */
static int get_profile_gen(const SimJsonDoc *d, const cJSON *e, GError **err)
{
    static const char *gens[GEN_NUM] = {"volta", "ampere", "hopper", "blackwell"};
    const char *v = NULL;
    if (!sim_json_get_string(d, e, "gpu_before", false, &v, err))
        return -1;
    for (int k = 0; v && k < GEN_NUM; k++)
        if (strcmp(v, gens[k]) == 0)
            return k;
    if (v)
        sim_json_error(d, cJSON_GetObjectItemCaseSensitive(e, "gpu_before"), err,
                       "\"nccl_profiles\": \"gpu_before\" must be volta, ampere, hopper or blackwell");
    return v ? -1 : GEN_NUM;
}

/* One of "nccl_profiles" (CollNcclProfile); `prev` the one before it (NULL:
 * the first), `last` whether it ends the list. */
static bool get_profile(const SimJsonDoc *d, const cJSON *e, const CollNcclProfile *prev, bool last,
                        CollNcclProfile *f, GError **err)
{
    if (!cJSON_IsObject(e)) {
        sim_json_error(d, e, err, "each of \"nccl_profiles\" must be an object");
        return false;
    }
    bool nvls;
    if ((f->since = get_profile_version(d, e, "since", err)) < 0 ||
        (f->before = get_profile_version(d, e, "before", err)) < 0 || (f->gen_below = get_profile_gen(d, e, err)) < 0 ||
        !get_profile_flag(d, e, "plugin", false, &f->plugin, err) || !get_profile_flag(d, e, "nvls", true, &nvls, err))
        return false;
    if ((!f->before && !last) || (prev && f->before && f->before <= prev->before) ||
        (f->since && f->before && f->since >= f->before)) {
        sim_json_error(d, e, err,
                       "\"nccl_profiles\": \"before\" must be an NCCL version such as \"2.23\", increasing, "
                       "after \"since\", and given on every profile but the last");
        return false;
    }
    if (!get_name_mask(d, e, "algorithms", coll_algo_parse, COLL_NUM_ALGOS, &f->algos, err) ||
        !get_name_mask(d, e, "protocols", coll_proto_parse, COLL_NUM_PROTOS, &f->protos, err))
        return false;
    if (!nvls) /* NCCL_NVLS_ENABLE=0 */
        f->algos = (f->algos ? f->algos : (1u << COLL_NUM_ALGOS) - 1) & ~(1u << COLL_NVLS | 1u << COLL_NVLS_TREE);
    return true;
}

/* "nccl_profiles": optional; what the transport's stack leaves NCCL's
 * tuner, by NCCL version and GPU generation (CollNcclProfile), in
 * increasing order of "before", only the last without one. */
static bool get_profiles(const SimJsonDoc *d, const cJSON *c, CollTransport *t, GError **err)
{
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(c, "nccl_profiles");
    t->nprofiles = 0;
    if (!a)
        return true;
    if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) < 1 || cJSON_GetArraySize(a) > COLL_MAX_PROFILES) {
        sim_json_error(d, a, err, "\"nccl_profiles\" must be an array of 1 to %d objects", COLL_MAX_PROFILES);
        return false;
    }
    for (const cJSON *e = a->child; e; e = e->next, t->nprofiles++)
        if (!get_profile(d, e, t->nprofiles ? &t->profile[t->nprofiles - 1] : NULL, !e->next,
                         &t->profile[t->nprofiles], err))
            return false;
    return true;
}

/* "transports": optional; each one named has all three numbers. */
static bool get_transports(const SimJsonDoc *d, const cJSON *r, CollParams *p, GError **err)
{
    const cJSON *o = cJSON_GetObjectItemCaseSensitive(r, "transports");
    if (!o)
        return true;
    if (!cJSON_IsObject(o)) {
        sim_json_error(d, o, err, "\"transports\" must be an object");
        return false;
    }
    for (const cJSON *c = o->child; c; c = c->next) {
        int tr = 1;
        while (tr < TOPO_TRANSPORT_NUM && strcmp(c->string, topo_transport_name((TopoTransport)tr)) != 0)
            tr++;
        if (tr == TOPO_TRANSPORT_NUM) {
            sim_json_error(d, c, err, "unknown transport \"%s\" (known: ib, roce, tcp, tcpx, cxi, efa, tcpxo)", c->string);
            return false;
        }
        CollTransport *t = &p->transport[tr];
        if (!cJSON_IsObject(c)) {
            sim_json_error(d, c, err, "transports.%s must be an object", c->string);
            return false;
        }
        if (!sim_json_get_number(d, c, "latency_s", true, 0, 1e-2, &t->latency, err) ||
            !sim_json_get_number(d, c, "message_overhead_s", true, 0, 1e-2, &t->overhead, err) ||
            !sim_json_get_number(d, c, "bandwidth_fraction", true, 0.01, 1, &t->fraction, err))
            return false;
        if (!sim_json_get_number(d, c, "eager_max_bytes", false, 0, 1e9, &t->eager_max, err) ||
            !sim_json_get_number(d, c, "rendezvous_s", false, 0, 1e-2, &t->rendezvous, err) ||
            !sim_json_get_number(d, c, "step_latency_s", false, 0, 1e-2, &t->step, err))
            return false;
        t->rated = true; /* unless the plugin reports less than the transport adds */
        const cJSON *seen = cJSON_GetObjectItemCaseSensitive(c, "tuner_sees_latency");
        if (seen && !sim_json_get_bool(d, c, "tuner_sees_latency", &t->rated, err))
            return false;
        if (!get_profiles(d, c, t, err))
            return false;
        t->given = true;
    }
    return true;
}

static bool params_read(const char *path, CollParams *p, GError **err);

/* The default file is read once per process (groups are made by the hundred
 * in a step simulation), under a lock since sweep runs steps in threads. */
/* "collnet_sharp_group_channels": how many SHARP operations a job runs at
 * once (optional; 0 or absent: no limit). */
static bool get_sharp_channels(const SimJsonDoc *d, const cJSON *r, CollParams *p, GError **err)
{
    long n = 0;
    if (!sim_json_get_int(d, r, "collnet_sharp_group_channels", false, 0, MAX_CH, &n, err))
        return false;
    p->sharp_group_channels = (int)n;
    return true;
}

bool coll_params_load(const char *path, CollParams *p, GError **err)
{
    static GMutex lock;
    static CollParams cached;
    static char *cached_path;
    if (path)
        return params_read(path, p, err);
    char *def = sim_data_dir("models/presets/collectives.json");
    bool ok = true;
    g_mutex_lock(&lock);
    if (!cached_path || strcmp(cached_path, def) != 0) {
        ok = params_read(def, &cached, err);
        g_free(cached_path);
        cached_path = ok ? g_strdup(def) : NULL;
    }
    if (ok)
        *p = cached;
    g_mutex_unlock(&lock);
    g_free(def);
    return ok;
}

static bool params_read(const char *path, CollParams *p, GError **err)
{
    SimJsonDoc *d = sim_json_load_file(path, err);
    if (!d)
        return false;
    if (coll_params_is_overlay(d)) {
        bool applied = coll_params_load(NULL, p, err) && coll_params_apply_overlay(d, p, err);
        sim_json_free(d);
        return applied;
    }
    const cJSON *r = sim_json_root(d);
    bool ok = false;
    const cJSON *base, *step, *pbw, *eff;
    memset(p, 0, sizeof *p);
    if (!cJSON_GetObjectItemCaseSensitive(r, "base_latency")) { /* a scenario or a topology given by mistake */
        sim_json_error(d, r, err, "not collective-model parameters: neither an overlay (\"overlay\", as calibrate "
                                  "writes) nor a full file (\"base_latency\", ..., as models/presets/collectives.json)");
        goto out;
    }
    if (!(base = get_object(d, r, "base_latency", err)) || !(step = get_object(d, r, "step_latency", err)) ||
        !(pbw = get_object(d, r, "protocol_bandwidth", err)) || !(eff = get_object(d, r, "link_efficiency", err)))
        goto out;
    static const struct {
        int algo;
        const char *key;
    } bases[] = {{COLL_RING, "ring"}, {COLL_TREE, "tree"}, {COLL_COLLNET, "collnet"}, {COLL_RHD, "rhd"},
                 {COLL_DIRECT, "direct"}};
    for (size_t i = 0; i < G_N_ELEMENTS(bases); i++)
        if (!get_proto_triple(d, base, bases[i].key, p->base[bases[i].algo], 1, err))
            goto out;
    memcpy(p->base[COLL_HIER], p->base[COLL_RING], sizeof p->base[COLL_HIER]);
    memcpy(p->base[COLL_TORUS], p->base[COLL_RING], sizeof p->base[COLL_TORUS]); /* rings too */
    static const char *hw[] = {"nvlink", "pcie", "net"};
    for (int h = 0; h < HW_NUM; h++) {
        const cJSON *o = get_object(d, step, hw[h], err);
        if (!o || !get_proto_triple(d, o, "ring", p->step[h][0], 1, err) ||
            !get_proto_triple(d, o, "tree", p->step[h][1], 1, err))
            goto out;
    }
    static const char *kinds[] = {"ring", "tree", "collnet"};
    for (int k = 0; k < KIND_NUM; k++)
        if (!get_proto_triple(d, pbw, kinds[k], p->proto_bw[k], 1, err))
            goto out;
    static const char *lk[] = {"nvlink", "pcie", "net", "ici", "shm", "nvlink_bridge"};
    for (int k = 0; k <= TOPO_LINK_NVLINK_BRIDGE; k++)
        if (!sim_json_get_number(d, eff, lk[k], true, 0.01, 1, &p->link_eff[k], err))
            goto out;
    long maxch = 16;
    p->ll_intra_factor = 1;
    p->p2p_ll_threshold = 16384; /* NCCL's default, for a parameters file of before the key */
    p->ring_ll_one_node = p->proto_bw[KIND_RING][COLL_LL]; /* before the key: the rate across nodes */
    if (!sim_json_get_number(d, r, "ll_intra_latency_factor_multinode", false, 0, 100, &p->ll_intra_factor, err) ||
        !sim_json_get_number(d, r, "ll128_max_bw_per_channel", true, 1, 1e15, &p->ll128_max_per_ch, err) ||
        !sim_json_get_number(d, r, "ring_ll128_one_rank_per_node", true, 0.01, 1, &p->ring_ll128_one_per_node, err) ||
        !sim_json_get_number(d, r, "ring_ll_one_node", false, 0.01, 1, &p->ring_ll_one_node, err) ||
        !sim_json_get_int(d, r, "max_channels", false, 1, MAX_CH, &maxch, err) ||
        !sim_json_get_number(d, r, "host_launch_s", true, 0, 1, &p->launch_s, err) ||
        !sim_json_get_number(d, r, "p2p_ll_threshold", false, 0, 1e12, &p->p2p_ll_threshold, err))
        goto out;
    p->max_channels = (int)maxch;
    if (!sim_json_get_bool(d, r, "ll128_multinode", &p->ll128_multinode, err))
        goto out;
    const cJSON *nv = get_object(d, r, "nvls", err);
    if (!nv || !sim_json_get_number(d, nv, "latency_s", true, 0, 1, &p->nvls_latency, err) ||
        !sim_json_get_number(d, nv, "bandwidth_fraction", true, 0.01, 2, &p->nvls_fraction, err))
        goto out;
    p->nvls_blackwell = 1;
    if (!sim_json_get_number(d, nv, "blackwell_factor", false, 0.1, 2, &p->nvls_blackwell, err))
        goto out;
    p->ring_plateau = 1;
    p->ring_plateau_volta = 1;
    if (!sim_json_get_number(d, r, "ring_plateau_factor", false, 1, 10, &p->ring_plateau, err) ||
        !sim_json_get_number(d, r, "ring_plateau_factor_volta", false, 1, 10, &p->ring_plateau_volta, err) ||
        !sim_json_get_number(d, r, "net_overhead_s", false, 0, 1, &p->net_overhead, err) ||
        !sim_json_get_number(d, r, "net_overhead_amd_s", true, 0, 1, &p->net_overhead_amd, err) ||
        !get_sharp_channels(d, r, p, err) ||
        !coll_params_read_nccl(d, r, p, err) || !get_transports(d, r, p, err) || !coll_params_read_rccl(d, r, p, err))
        goto out;
    for (int q = 0; q < COLL_NUM_PROTOS; q++)
        for (int i = 0; i < TREE_CORR; i++)
            p->tree_correction[q][i] = 1;
    const cJSON *tc = cJSON_GetObjectItemCaseSensitive(r, "tree_correction");
    if (tc) {
        for (int q = 0; q < COLL_NUM_PROTOS; q++) {
            const cJSON *arr = cJSON_GetObjectItemCaseSensitive(tc, coll_proto_name(q));
            if (!cJSON_IsArray(arr) || cJSON_GetArraySize(arr) != TREE_CORR) {
                sim_json_error(d, arr ? arr : tc, err, "tree_correction.%s must be an array of %d numbers",
                               coll_proto_name(q), TREE_CORR);
                goto out;
            }
            for (int i = 0; i < TREE_CORR; i++) {
                const cJSON *v = cJSON_GetArrayItem(arr, i);
                if (!cJSON_IsNumber(v) || !(v->valuedouble > 0 && v->valuedouble <= 1)) {
                    sim_json_error(d, v, err, "tree_correction.%s[%d] must be in (0, 1]", coll_proto_name(q), i);
                    goto out;
                }
                p->tree_correction[q][i] = v->valuedouble;
            }
        }
    }
    /* without a measured basis, a wide band and no coverage */
    p->unc = (CollUncert){.lo = {-0.5, -0.5}, .hi = {0.5, 0.5}};
    const cJSON *un = cJSON_GetObjectItemCaseSensitive(r, "uncertainty");
    if (un && !coll_uncert_read(d, un, &p->unc, err))
        goto out;
    ok = true;
out:
    sim_json_free(d);
    return ok;
}
