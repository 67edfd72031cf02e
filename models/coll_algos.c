/* The one list of collective algorithms, in CollAlgo order (the tuner's
 * ties go to the earlier), and what is read off it: names, parsing and the
 * choices help texts show; and the parameters that came with NCCL versions
 * (the "nccl" object of the parameter file).  Adding an algorithm: see
 * coll_internal.h. */
#include "coll_internal.h"


static const CollAlgoDesc *const algos[COLL_NUM_ALGOS] = {
    [COLL_RING] = &coll_ring_algo,       [COLL_TREE] = &coll_tree_algo, [COLL_RHD] = &coll_rhd_algo,
    [COLL_DIRECT] = &coll_direct_algo,   [COLL_HIER] = &coll_hier_algo, [COLL_COLLNET] = &coll_collnet_algo,
    [COLL_NVLS] = &coll_nvls_algo,       [COLL_NVLS_TREE] = &coll_nvls_tree_algo, [COLL_PAT] = &coll_pat_algo,
    [COLL_TORUS] = &coll_torus_algo,
};

const CollAlgoDesc *coll_algo_desc(CollAlgo a) { return a >= 0 && a < COLL_NUM_ALGOS ? algos[a] : NULL; }

const char *coll_algo_name(CollAlgo a)
{
    return a == COLL_ALGO_AUTO ? "auto" : a >= 0 && a < COLL_NUM_ALGOS ? algos[a]->name : "?";
}

int coll_algo_parse(const char *s)
{
    if (!g_ascii_strcasecmp(s, "auto"))
        return COLL_ALGO_AUTO;
    for (int i = 0; i < COLL_NUM_ALGOS; i++)
        if (!g_ascii_strcasecmp(s, algos[i]->name))
            return i;
    for (int i = 0; i < COLL_NUM_ALGOS; i++)
        if (algos[i]->alias && !g_ascii_strcasecmp(s, algos[i]->alias))
            return i;
    return -2;
}

const char *coll_algo_choices(void)
{
    static gsize once;
    static char buf[COLL_NUM_ALGOS * 16];
    if (g_once_init_enter(&once)) {
        for (int i = 0; i < COLL_NUM_ALGOS; i++) {
            if (i > 0)
                g_strlcat(buf, "|", sizeof buf);
            g_strlcat(buf, algos[i]->name, sizeof buf);
        }
        g_once_init_leave(&once, 1);
    }
    return buf;
}

/* A version "2.18" in the data file, as a code; a key that may be missing
 * (a parameters file of before it) is 0 then: every version has it. */
static bool get_version_of(const SimJsonDoc *d, const cJSON *o, const char *key, bool required, int *out,
                           GError **err)
{
    const char *s = NULL;
    *out = 0;
    if (!sim_json_get_string(d, o, key, required, &s, err))
        return false;
    if (!s)
        return true;
    *out = coll_nccl_version_parse(s);
    if (*out < 0)
        sim_json_error(d, cJSON_GetObjectItemCaseSensitive(o, key), err, "\"%s\" must be an NCCL version such as \"2.18\"",
                       key);
    return *out >= 0;
}

static bool get_version(const SimJsonDoc *d, const cJSON *o, const char *key, int *out, GError **err)
{
    return get_version_of(d, o, key, true, out, err);
}

/* "ring_ll_rating_before": {"allreduce_reduce_or_nodes", "one_node_other"}
 * (optional: without it older versions rate the LL ring by its time's share). */
static bool get_ring_ll_rating_old(const SimJsonDoc *d, const cJSON *o, CollParams *p, GError **err)
{
    const cJSON *r = cJSON_GetObjectItemCaseSensitive(o, "ring_ll_rating_before");
    p->ring_ll_rating_old[0] = p->ring_ll_rating_old[1] = 0;
    if (!r)
        return true;
    if (!cJSON_IsObject(r)) {
        sim_json_error(d, r, err, "\"nccl.ring_ll_rating_before\" must be an object");
        return false;
    }
    return sim_json_get_number(d, r, "allreduce_reduce_or_nodes", true, 0.01, 1, &p->ring_ll_rating_old[0], err) &&
           sim_json_get_number(d, r, "one_node_other", true, 0.01, 1, &p->ring_ll_rating_old[1], err);
}

bool coll_params_read_nccl(const SimJsonDoc *d, const cJSON *r, CollParams *p, GError **err)
{
    const cJSON *o = cJSON_GetObjectItemCaseSensitive(r, "nccl");
    if (!cJSON_IsObject(o)) {
        sim_json_error(d, o ? o : r, err, "\"nccl\" must be an object");
        return false;
    }
    const cJSON *since = cJSON_GetObjectItemCaseSensitive(o, "since");
    if (!cJSON_IsObject(since)) {
        sim_json_error(d, since ? since : o, err, "\"nccl.since\" must be an object");
        return false;
    }
    return get_version(d, since, "nvls", &p->ver_nvls, err) && get_version(d, since, "nvlstree", &p->ver_nvls_tree, err) &&
           get_version(d, since, "pat", &p->ver_pat, err) &&
           get_version(d, since, "net_overhead", &p->ver_net_overhead, err) &&
           get_version(d, since, "ll_max_blackwell", &p->ver_ll_max_blackwell, err) &&
           get_version(d, since, "collnet_simple_only", &p->ver_collnet_simple_only, err) &&
           get_version(d, since, "ring_ll_rating", &p->ver_ring_ll_rating, err) &&
           get_version(d, since, "ll128_hopper_multinode", &p->ver_ll128_hopper, err) &&
           get_version_of(d, since, "ll128", false, &p->ver_ll128, err) &&
           get_version_of(d, since, "nvls_rating_latency", false, &p->ver_nvls_rating_lat, err) &&
           get_version_of(d, since, "nvlstree_net_rating_latency", false, &p->ver_nvls_tree_net_rating, err) &&
           get_version_of(d, since, "tree_pattern_penalty", false, &p->ver_tree_pattern_penalty, err) &&
           get_version(d, since, "nvls_channels_sm100", &p->ver_nvls_ch_sm100, err) &&
           get_version(d, since, "nvls_channels_sm100_nvl", &p->ver_nvls_ch_sm100_nvl, err) &&
           sim_json_get_number(d, o, "ring_ll_rating", true, 0.01, 1, &p->ring_ll_rating, err) &&
           get_ring_ll_rating_old(d, o, p, err) && coll_nccl_read(d, o, p, err) &&
           sim_json_get_number(d, o, "nvls_net_step_latency_s", true, 0, 1, &p->nvls_net_lat, err) &&
           sim_json_get_number(d, o, "nvls_rating_latency_s", false, 0, 1, &p->nvls_rating_lat, err) &&
           sim_json_get_number(d, o, "nvlstree_net_rating_latency_s", false, 0, 1, &p->nvls_tree_net_rating, err) &&
           sim_json_get_number(d, o, "tree_pattern_penalty", false, 0, 1, &p->tree_pattern_penalty, err) &&
           sim_json_get_number(d, o, "nvlstree_net_step_latency_s", true, 0, 1, &p->nvls_tree_net_lat, err) &&
           sim_json_get_number(d, o, "pat_base_latency_s", true, 0, 1, &p->pat_base, err) &&
           sim_json_get_number(d, o, "pat_latency_per_rank_s", true, 0, 1, &p->pat_per_rank, err) &&
           sim_json_get_number(d, o, "pat_log_latency_divisor", true, 0.01, 100, &p->pat_log_div, err) &&
           sim_json_get_number(d, o, "pat_bandwidth_factor", true, 0.01, 1, &p->pat_bw, err);
}
