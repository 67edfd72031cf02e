/* NCCL's tuner where it depends on more than the link classes: the latency
 * tables each NCCL version rates by (the "nccl.eras" of the parameter file,
 * kept as differences from the newest tables so that an overlay's fitted
 * latencies move every version alike; a tuner twin of the group carries
 * them, the times keep the newest), and the LL bus bandwidth ceilings by
 * GPU generation and host CPU (tuning.cc llMaxBws). */
#include "coll_internal.h"

#include <string.h>

static const char *const era_algos[ERA_ALGOS] = {"ring", "tree"};
static const CollAlgo era_algo_ids[ERA_ALGOS] = {COLL_RING, COLL_TREE};

/* "ll_max_bus_bandwidth": one node by GPU generation, across nodes by host CPU. */
static bool get_ll_max(const SimJsonDoc *d, const cJSON *o, CollParams *p, GError **err)
{
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(o, "ll_max_bus_bandwidth");
    static const char *gens[GEN_NUM] = {"volta", "ampere", "hopper", "blackwell"};
    static const char *scales[2] = {"two_nodes", "more_nodes"}, *cpus[2] = {"intel", "amd"};
    const cJSON *one = cJSON_GetObjectItemCaseSensitive(m, "one_node");
    if (!cJSON_IsObject(m) || !cJSON_IsObject(one)) {
        sim_json_error(d, m ? m : o, err,
                       "\"nccl.ll_max_bus_bandwidth\" must be an object with one_node, two_nodes, more_nodes");
        return false;
    }
    for (int k = 0; k < GEN_NUM; k++)
        if (!sim_json_get_number(d, one, gens[k], true, 1e6, 1e15, &p->ll_max_one[k], err))
            return false;
    for (int s = 0; s < 2; s++) {
        const cJSON *sc = cJSON_GetObjectItemCaseSensitive(m, scales[s]);
        if (!cJSON_IsObject(sc)) {
            sim_json_error(d, sc ? sc : m, err, "\"nccl.ll_max_bus_bandwidth.%s\" must be an object with intel, amd",
                           scales[s]);
            return false;
        }
        for (int c = 0; c < 2; c++)
            if (!sim_json_get_number(d, sc, cpus[c], true, 1e6, 1e15, &p->ll_max_multi[c][s], err))
                return false;
    }
    return true;
}

/* Reads {ll, ll128, simple} at obj.key (when there) as differences from `now`. */
static bool get_delta(const SimJsonDoc *d, const cJSON *obj, const char *key, const double now[COLL_NUM_PROTOS],
                      double out[COLL_NUM_PROTOS], GError **err)
{
    const cJSON *o = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!o)
        return true;
    if (!cJSON_IsObject(o)) {
        sim_json_error(d, o, err, "\"%s\" must be an object with ll, ll128, simple", key);
        return false;
    }
    for (int q = 0; q < COLL_NUM_PROTOS; q++) {
        double v;
        if (!sim_json_get_number(d, o, coll_proto_name(q), true, 0, 1, &v, err))
            return false;
        out[q] = v - now[q];
    }
    return true;
}

/* One era: the versions before "before", with the tables (or parts of them)
 * that differ from the newest. */
static bool get_era(const SimJsonDoc *d, const cJSON *e, CollParams *p, CollEra *era, GError **err)
{
    static const char *hw[HW_NUM] = {"nvlink", "pcie", "net"}, *kinds[2] = {"ring", "tree"};
    memset(era, 0, sizeof *era);
    const char *s = NULL;
    if (!cJSON_IsObject(e) || !sim_json_get_string(d, e, "before", true, &s, err)) {
        if (!cJSON_IsObject(e))
            sim_json_error(d, e, err, "each of \"nccl.eras\" must be an object with \"before\"");
        return false;
    }
    if ((era->before = coll_nccl_version_parse(s)) <= 0) {
        sim_json_error(d, cJSON_GetObjectItemCaseSensitive(e, "before"), err,
                       "\"before\" must be an NCCL version such as \"2.18\"");
        return false;
    }
    const cJSON *base = cJSON_GetObjectItemCaseSensitive(e, "base_latency");
    const cJSON *step = cJSON_GetObjectItemCaseSensitive(e, "step_latency");
    for (int a = 0; a < ERA_ALGOS && base; a++)
        if (!get_delta(d, base, era_algos[a], p->base[era_algo_ids[a]], era->base[a], err))
            return false;
    for (int h = 0; h < HW_NUM && step; h++) {
        const cJSON *o = cJSON_GetObjectItemCaseSensitive(step, hw[h]);
        for (int k = 0; k < 2 && o; k++)
            if (!get_delta(d, o, kinds[k], p->step[h][k], era->step[h][k], err))
                return false;
    }
    return true;
}

/* "nccl.eras": in increasing order of "before". */
static bool get_eras(const SimJsonDoc *d, const cJSON *o, CollParams *p, GError **err)
{
    const cJSON *arr = cJSON_GetObjectItemCaseSensitive(o, "eras");
    p->n_eras = 0;
    if (!arr)
        return true;
    if (!cJSON_IsArray(arr) || cJSON_GetArraySize(arr) > COLL_MAX_ERAS) {
        sim_json_error(d, arr, err, "\"nccl.eras\" must be an array of at most %d eras", COLL_MAX_ERAS);
        return false;
    }
    for (const cJSON *e = arr->child; e; e = e->next) {
        CollEra *era = &p->era[p->n_eras];
        if (!get_era(d, e, p, era, err))
            return false;
        if (p->n_eras > 0 && era->before <= p->era[p->n_eras - 1].before) {
            sim_json_error(d, e, err, "\"nccl.eras\" must be in increasing order of \"before\"");
            return false;
        }
        p->n_eras++;
    }
    return true;
}

/* "tree_max_bus_bandwidth_per_channel_two_nodes" (optional: without it the
 * tuner rates 2-node trees by the NICs alone, as before). */
static bool get_tree_max(const SimJsonDoc *d, const cJSON *o, CollParams *p, GError **err)
{
    static const char *gens[GEN_NUM] = {"volta", "ampere", "hopper", "blackwell"};
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(o, "tree_max_bus_bandwidth_per_channel_two_nodes");
    for (int k = 0; k < GEN_NUM; k++)
        p->tree_max_ch_two[k] = INFINITY;
    if (!m)
        return true;
    if (!cJSON_IsObject(m)) {
        sim_json_error(d, m, err, "\"nccl.tree_max_bus_bandwidth_per_channel_two_nodes\" must be an object with "
                                  "volta, ampere, hopper, blackwell");
        return false;
    }
    for (int k = 0; k < GEN_NUM; k++)
        if (!sim_json_get_number(d, m, gens[k], true, 1e6, 1e15, &p->tree_max_ch_two[k], err))
            return false;
    return true;
}

/* "tree_ll128_max_bus_bandwidth_per_channel" (optional: without it no
 * ceiling): {one_node|two_nodes|more_nodes: {volta, ampere, hopper, blackwell}}. */
static bool get_tree_ll128_max(const SimJsonDoc *d, const cJSON *o, CollParams *p, GError **err)
{
    static const char *gens[GEN_NUM] = {"volta", "ampere", "hopper", "blackwell"};
    static const char *scales[3] = {"one_node", "two_nodes", "more_nodes"};
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(o, "tree_ll128_max_bus_bandwidth_per_channel");
    for (int k = 0; k < GEN_NUM; k++)
        for (int s = 0; s < 3; s++)
            p->tree_ll128_max_ch[k][s] = INFINITY;
    if (!m)
        return true;
    for (int s = 0; s < 3; s++) {
        const cJSON *sc = cJSON_IsObject(m) ? cJSON_GetObjectItemCaseSensitive(m, scales[s]) : NULL;
        if (!cJSON_IsObject(sc)) {
            sim_json_error(d, sc ? sc : m, err, "\"nccl.tree_ll128_max_bus_bandwidth_per_channel\" must be an object with "
                                               "one_node, two_nodes, more_nodes, each with volta, ampere, hopper, blackwell");
            return false;
        }
        for (int k = 0; k < GEN_NUM; k++)
            if (!sim_json_get_number(d, sc, gens[k], true, 1e6, 1e15, &p->tree_ll128_max_ch[k][s], err))
                return false;
    }
    return true;
}

bool coll_nccl_read(const SimJsonDoc *d, const cJSON *o, CollParams *p, GError **err)
{
    return get_ll_max(d, o, p, err) && get_tree_max(d, o, p, err) && get_tree_ll128_max(d, o, p, err) &&
           get_eras(d, o, p, err);
}

/* The era a version code falls in, or NULL: the newest tables (code 0, the
 * newest the model knows, or past every era). */
static const CollEra *era_of(const CollParams *p, int code)
{
    for (int i = 0; code > 0 && i < p->n_eras; i++)
        if (code < p->era[i].before)
            return &p->era[i];
    return NULL;
}

/* The era's tables on p (from the newest, or an overlay on them). */
static void apply_era(CollParams *p, const CollEra *e)
{
    for (int a = 0; a < ERA_ALGOS; a++)
        for (int q = 0; q < COLL_NUM_PROTOS; q++) {
            int id = era_algo_ids[a];
            p->base[id][q] = fmax(0, p->base[id][q] + e->base[a][q]);
            if (id != COLL_RING)
                continue;
            /* the ring's relatives start as rings do */
            const int rel[] = {COLL_HIER, COLL_TORUS, COLL_RHD, COLL_DIRECT};
            for (size_t r = 0; r < G_N_ELEMENTS(rel); r++)
                p->base[rel[r]][q] = fmax(0, p->base[rel[r]][q] + e->base[a][q]);
        }
    for (int h = 0; h < HW_NUM; h++)
        for (int k = 0; k < 2; k++)
            for (int q = 0; q < COLL_NUM_PROTOS; q++)
                p->step[h][k][q] = fmax(0, p->step[h][k][q] + e->step[h][k][q]);
}

/* A NIC transport whose latency NCCL's tuner does not see: its net plugin
 * reports none (aws-ofi-nccl off AWS: nccl_ofi_param.h NET_LATENCY, 0
 * unless the platform sets one), so the tuner rates by its tables alone. */
static bool transport_unseen(const CollGroup *g)
{
    const CollTransport *tr = &g->p0.transport[g->transport];
    return g->nnodes > 1 && tr->given && !tr->rated && (tr->latency > 0 || tr->overhead > 0);
}

void coll_nccl_make_tuner(CollGroup *g)
{
    if (g->library != COLL_LIB_NCCL)
        return;
    const CollEra *e = era_of(&g->p, g->nccl_version);
    bool unseen = transport_unseen(g);
    if (!e && !unseen)
        return;
    CollGroup *t = coll_group_twin(g);
    if (unseen) {
        t->p = g->p0; /* g->p is p0 with the transport's latency (coll_rccl_apply) */
        t->eager_paid = false;
    }
    if (e)
        apply_era(&t->p, e);
    g->tuner = t;
}

/* ---------------- the 2-node tree's rating ---------------- */

/* NCCL rates a tree at 2 nodes by its graph's intra-node bandwidth (tuning.cc:
 * bw = bwIntra when nNodes <= 2), which its search raised from the channels'
 * NIC share up to twice that where the node's links carry it on every channel
 * (search.cc, pass 2: "increase bwIntra for trees"), and caps the tree's bus
 * bandwidth per channel (perChMaxTreeBws): busBw = min(0.92 x nChannels x
 * bwIntra, nChannels x cap).  What the network part of the rating divides by,
 * in the NICs' terms (inter_bw when no ceiling is given or RCCL rates it). */
double coll_tree_rated_net_bw_two_nodes(const CollGroup *g)
{
    double cap = g->gpu_gen >= 0 && g->gpu_gen < GEN_NUM ? g->p.tree_max_ch_two[g->gpu_gen] : INFINITY;
    if (g->library != COLL_LIB_NCCL || g->nnodes != 2 || !isfinite(cap))
        return g->inter_bw;
    int k = coll_ring_channels(g);
    double inter = g->inter_bw / k, intra = g->ppn > 1 ? g->intra_bw / k : INFINITY;
    double raised = fmax(inter, fmin(2 * inter, intra));
    /* NCCL's bandwidths are the NICs' nominal rates, inter_bw what they
     * carry (their transport's fraction, and the path to them where it is
     * narrower: GPUDirect through a host bridge): the cap in the same terms */
    double eff = isfinite(g->inter_nominal) && isfinite(g->inter_bw) ? g->inter_bw / g->inter_nominal : 1;
    return k * fmin(raised, cap * eff / g->p.proto_bw[KIND_TREE][COLL_SIMPLE]);
}

/* ---------------- the LL ceilings ---------------- */

/* The GPU generation NCCL's tuner sees (compute capability 7.x, 8.x, 9.x,
 * 10.x and up) from the name of the topology's accelerator preset, else of
 * the topology ("dgx-b200"); GEN_NOT_NCCL for TPUs, -1 if neither names a
 * GPU the tuner knows. */
int coll_nccl_gpu_generation(const Topo *t)
{
    static const struct {
        const char *prefix; /* found anywhere in the name */
        int gen;
    } names[] = {{"v100", GEN_VOLTA},  {"a100", GEN_AMPERE},    {"a800", GEN_AMPERE},    {"h100", GEN_HOPPER},
                 {"h200", GEN_HOPPER}, {"h800", GEN_HOPPER},    {"gh200", GEN_HOPPER},   {"b100", GEN_BLACKWELL},
                 {"b200", GEN_BLACKWELL}, {"b300", GEN_BLACKWELL}, {"gb200", GEN_BLACKWELL}, {"gb300", GEN_BLACKWELL}};
    const char *names_of[2] = {topo_accelerator(t), topo_name(t)};
    for (int k = 0; k < 2; k++) {
        if (names_of[k] && strstr(names_of[k], "tpu"))
            return GEN_NOT_NCCL;
        for (size_t i = 0; names_of[k] && i < G_N_ELEMENTS(names); i++)
            if (strstr(names_of[k], names[i].prefix))
                return names[i].gen;
    }
    return -1;
}

double coll_ll_max_bus_bw(const CollGroup *g)
{
    if (g->library == COLL_LIB_RCCL || g->gpu_gen == GEN_NOT_NCCL)
        return INFINITY;
    if (g->nnodes > 1) /* by the hosts: the proxy threads move LL's lines across nodes */
        return g->p.ll_max_multi[g->host_cpu == TOPO_CPU_AMD][g->nnodes > 2];
    int gen = g->gpu_gen;
    if (gen == GEN_BLACKWELL && !coll_version_has(g, g->p.ver_ll_max_blackwell))
        gen = GEN_HOPPER; /* before it NCCL rated compute capability 10 as 9 */
    return gen >= 0 ? g->p.ll_max_one[gen] : INFINITY;
}

/* An LL128 tree moves at most NCCL's per-channel ceiling on each of its
 * graph's channels (one per ring channel, coll_tree.c's pairs): the
 * protocol's throughput per channel, what the tuner rates (tuning.cc:
 * busBw = min(busBw x 120/128, nChannels x perChMaxTreeLL128Bw)) and, as
 * the ring's per-channel LL128 ceiling, what the time takes too. */
double coll_tree_ll128_max_bus_bw(const CollGroup *g)
{
    if (g->library != COLL_LIB_NCCL || g->gpu_gen < 0 || g->gpu_gen >= GEN_NUM)
        return INFINITY;
    int scale = g->nnodes <= 1 ? 0 : g->nnodes == 2 ? 1 : 2;
    return coll_ring_channels(g) * g->p.tree_ll128_max_ch[g->gpu_gen][scale];
}

/* ---------------- messages on the network ---------------- */

/* NCCL's channel count for a size (enqueue.cc, as at v2.18-v2.30: while
 * bytes < nc x nThreads x threadThreshold, drop a channel): threads per
 * channel 512 for LL and Simple, 640 for LL128; thresholds 8, 8 and 64 bytes
 * per thread (NCCL_LL/LL128/SIMPLE_THREAD_THRESHOLD), a ring's LL one times
 * the ranks (init.cc).  The threads' halving below one channel does not move
 * the message. */
int coll_channels_used(const CollGroup *g, int kind, CollProto p, double bytes)
{
    static const double threads[COLL_NUM_PROTOS] = {512, 640, 512}, per[COLL_NUM_PROTOS] = {8, 8, 64};
    double want = threads[p] * per[p] * (kind == 0 && p == COLL_LL ? g->n : 1);
    int k = coll_ring_channels(g), nc = (int)fmin(k, floor(bytes / want));
    return nc > 1 ? nc : 1;
}

/* LL sends 8 bytes of flag with every 8 of data (16-byte lines), LL128 8 in
 * every 128: the bytes a network message carries. */
double coll_transport_eager_overhead(const CollGroup *g, CollProto p, double msg)
{
    const CollTransport *tr = &g->p.transport[g->transport];
    if (!g->eager_paid || !(tr->eager_max > 0) || p == COLL_SIMPLE)
        return 0;
    double wire = msg * (p == COLL_LL ? 2.0 : 128.0 / 120.0);
    return wire > tr->eager_max ? tr->rendezvous : 0;
}

/* NCCL's graph search inside one NVSwitch domain (src/graph/search.cc),
 * whose speeds its tuner rates rings and NVLS by: per channel a speed from
 * the GPU generation's intra-node array (GB/s, read in the tags named; no
 * code copied), charged on a GPU's NVLink bandwidth as NCCL counts it. */
static const struct {
    int gen, from; /* the first version with this array */
    double gbs[12];
} nvs_speeds[] = {
    {GEN_HOPPER, 0, {66, 33, 24, 20, 15, 12, 6, 3}},                        /* v2.17.1-1 */
    {GEN_HOPPER, 21800, {60, 40, 30, 24, 20, 15, 12, 6, 3}},                /* v2.18.1-1 */
    {GEN_HOPPER, 21900, {60, 50, 40, 30, 24, 20, 15, 12, 6, 3}},            /* v2.19.3-1 */
    {GEN_HOPPER, 22100, {60, 50, 40, 30, 24, 20, 15, 12, 11, 6, 3}},        /* v2.21.5-1 */
    {GEN_BLACKWELL, 22500, {90, 80, 70, 60, 50, 40, 30, 24, 20, 19}},       /* v2.25.1-1 */
    {GEN_BLACKWELL, 22700, {90, 80, 70, 60, 50, 40, 30, 24, 20, 19, 18}},   /* v2.27.3-1 */
    {GEN_BLACKWELL, 22900, {90, 80, 70, 60, 50, 45, 40, 30, 24, 20, 19, 18}}, /* v2.29.2-1 */
};

/* Whether the group's ratings follow that search: NCCL on one NVSwitch
 * domain of Hopper or Blackwell GPUs (the ones with NVLink SHARP). */
bool coll_nccl_nvs_graph(const CollGroup *g)
{
    return g->library == COLL_LIB_NCCL && g->nnodes == 1 && g->ppn > 1 && g->gpu_gen >= GEN_HOPPER &&
           topo_has_nvlink_sharp(g->t);
}

/* The group's speed array (Blackwell before 2.25 searches Hopper's), its
 * length in *n; the speeds in GB/s. */
static const double *nvs_speed_array(const CollGroup *g, int *n)
{
    int v = g->nccl_version ? g->nccl_version : G_MAXINT;
    const double *s = nvs_speeds[0].gbs;
    for (size_t i = 0; i < G_N_ELEMENTS(nvs_speeds); i++)
        if (nvs_speeds[i].from <= v && nvs_speeds[i].gen <= g->gpu_gen)
            s = nvs_speeds[i].gbs;
    for (*n = 0; *n < 12 && s[*n] > 0; (*n)++)
        ;
    return s;
}

/* The first (fastest) speed of the array that `channels` channels fit in
 * `link` GB/s, else the slowest: the index. */
static int nvs_first_fit(const double *s, int n, double channels, double link)
{
    int k = 0;
    while (k + 1 < n && channels * s[k] > link)
        k++;
    return k;
}

/* A GPU's NVLink bandwidth as NCCL counts it: its links at NCCL's per-link
 * figure (topo.h SM90_NVLINK_BW 20.6 GB/s, SM100_NVLINK_BW 40.1), which the
 * hardware's per-direction link rate (NVLink 4: 25 GB/s, NVLink 5: 50) and
 * the topology's GPU bandwidth give the link count for. */
static double nvs_gpu_bw(const CollGroup *g)
{
    return g->gpu_gen >= GEN_BLACKWELL ? g->gpu_link / 50e9 * 40.1e9 : g->gpu_link / 25e9 * 20.6e9;
}

/* A ring's channels cross every GPU's NVLink once each way: the search
 * starts at the fastest speed one channel fits, takes as many channels as fit
 * at it, and short of the link's whole bandwidth tries slower speeds while
 * they are above 0.49 of the best one's, keeping the first best total (8
 * H100s: 6 x 60 = 360 GB/s, as NCCL 2.29.2 prints for 2, 4 and 6 of them; 8
 * NVLinks, 164.8 GB/s: 4 x 40 = 160; duplicating channels later halves each
 * one's speed).  B/s. */
double coll_nccl_ring_rated_bus_bw(const CollGroup *g)
{
    int n;
    const double *s = nvs_speed_array(g, &n);
    double link = nvs_gpu_bw(g) / 1e9, best = 0, best_s = 0;
    for (int k = nvs_first_fit(s, n, 1, link); k < n && (best_s == 0 || s[k] / best_s > 0.49) && best < link;
         k++) {
        double total = floor(link / s[k]) * s[k];
        if (total > best) {
            best = total;
            best_s = s[k];
        }
    }
    return best * 1e9;
}

/* NVLS: a channel per head GPU, min(n, NCCL_MAX_NVLS_ARITY 32), each one's
 * speed charged once on every GPU's NVLink and twice on its head's, so
 * (heads + 1) x speed must fit; then the search steps the inter speed up the
 * array while it is below twice that.  The tuner's algorithm bandwidth:
 * heads x min(intra, inter) x 3/4 in 2.18.1, 5/6 from 2.18.3 to 2.27; from 2.28 heads
 * x min(intra x nvlsEfficiency (0.85 Hopper, 0.74 Blackwell) x (heads - 1) /
 * heads x 2, inter), a bus bandwidth turned algorithm by n / (2 (n - 1))
 * (tuning.cc).  NCCL 2.29.2 prints 102, 160 and 216 GB/s on 2, 4 and 6 H100s. */
enum { NVLS_RATED_5_6 = 21803, NVLS_RATED_EFF = 22800 }; /* v2.18.3-1, v2.28.3-1: the first tags with each */
double coll_nccl_nvls_rated_algbw(const CollGroup *g)
{
    int n;
    const double *s = nvs_speed_array(g, &n);
    double heads = fmin(g->ppn, 32), link = nvs_gpu_bw(g) / 1e9;
    int k = nvs_first_fit(s, n, heads + 1, link), j = k;
    while (j > 0 && s[j] < 2 * s[k])
        j--;
    double intra = s[k] * 1e9, inter = s[j] * 1e9;
    if (coll_version_has(g, NVLS_RATED_EFF)) {
        double eff = g->gpu_gen >= GEN_BLACKWELL ? 0.74 : 0.85;
        return heads * fmin(intra * eff * (heads - 1) / heads * 2, inter) * g->ppn / (2.0 * (g->ppn - 1));
    }
    return heads * fmin(intra, inter) * (coll_version_has(g, NVLS_RATED_5_6) ? 5.0 / 6 : 0.75);
}
