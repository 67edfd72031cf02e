/* The tuner's terms that come from NCCL's tuning.cc beyond base and step
 * latencies: the LL bus bandwidth ceilings (by GPU generation on one node,
 * by host CPU and node count across nodes), the network post overhead of AMD
 * hosts, and what each NCCL version rates by. */
#include "collective.h"
#include "sim_data.h"
#include "test_tmpfile.h"
#include "test_load.h"
#include "test_main.h"

#include <math.h>
#include <string.h>

/* A preset's JSON with "host_cpu" added, loaded from a temporary file. */
static Topo *with_host_cpu(const char *preset, const char *cpu, int nodes, GError **err)
{
    char *name = g_strdup_printf("topologies/presets/%s.json", preset);
    char *path = sim_data_dir(name), *text = NULL;
    g_free(name);
    CU_ASSERT_TRUE_FATAL(g_file_get_contents(path, &text, NULL, NULL));
    g_free(path);
    char *brace = strchr(text, '{');
    CU_ASSERT_PTR_NOT_NULL_FATAL(brace);
    char *edited = g_strdup_printf("{\"host_cpu\": \"%s\",%s", cpu, brace + 1);
    char *file = tmpfile_with("t.json", edited);
    TopoOptions o = {.nodes = nodes};
    Topo *t = topo_load(file, &o, err);
    tmpfile_remove(file);
    g_free(edited);
    g_free(text);
    return t;
}

static double algbw(CollGroup *g, CollAlgo a, CollProto p, double bytes)
{
    CollCost c;
    CU_ASSERT_TRUE_FATAL(coll_cost(g, COLL_ALLREDUCE, a, p, bytes, &c));
    return c.algbw_Bps;
}

/* An LL tree across DGX H100 nodes runs at NCCL's ceiling, half the bus
 * bandwidth cap (39 GB/s on 2 nodes of Intel hosts, 20.4 from 3 on; 22.5 and
 * 19 on AMD hosts); at 1 GiB the tree's size correction is 1. */
static void test_ll_ceiling_across_nodes(void)
{
    const struct {
        const char *cpu;
        int nodes;
        double bus;
    } cases[] = {{NULL, 2, 39e9}, {"intel", 2, 39e9}, {"amd", 2, 22.5e9}, {NULL, 4, 20.4e9}, {"amd", 4, 19.0e9}};
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        GError *err = NULL;
        Topo *t = cases[i].cpu ? with_host_cpu("dgx-h100-cluster", cases[i].cpu, cases[i].nodes, &err)
                               : load("dgx-h100-cluster", cases[i].nodes);
        CU_ASSERT_PTR_NOT_NULL_FATAL(t);
        CollGroup *g = group(t);
        CU_ASSERT_DOUBLE_EQUAL(algbw(g, COLL_TREE, COLL_LL, 1 << 30), 0.5 * cases[i].bus, 1e3);
        /* Simple has no such ceiling: the links bound it */
        CU_ASSERT_TRUE(algbw(g, COLL_TREE, COLL_SIMPLE, 1 << 30) > cases[i].bus);
        coll_group_free(g);
        topo_free(t);
    }
}

/* RCCL rates LL by its bandwidth ratios and has no ceiling: the same
 * 2-node MI355X group is faster on LL under RCCL than NCCL's cap allows. */
static void test_no_ll_ceiling_on_rccl(void)
{
    Topo *t = load("mi355x-cluster", 2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CollGroup *g = group(t);
    coll_group_set_library(g, COLL_LIB_RCCL);
    double rccl = algbw(g, COLL_TREE, COLL_LL, 1 << 30);
    coll_group_set_library(g, COLL_LIB_NCCL);
    double nccl = algbw(g, COLL_TREE, COLL_LL, 1 << 30);
    CU_ASSERT_DOUBLE_EQUAL(nccl, 0.5 * 39e9, 1e3);
    CU_ASSERT_TRUE(rccl > nccl);
    coll_group_free(g);
    topo_free(t);
}

/* On one node the ceiling is the GPU's: a B200 ring's LL bus bandwidth
 * stops at 282 GB/s from NCCL 2.28, at Hopper's 141 GB/s before. */
static void test_ll_ceiling_one_node(void)
{
    Topo *t = load("dgx-b200", 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CollGroup *g = group(t);
    double f = coll_busbw_factor(COLL_ALLREDUCE, 8), newest = algbw(g, COLL_RING, COLL_LL, 1 << 30) * f;
    coll_group_set_nccl_version(g, coll_nccl_version_parse("2.27.7"));
    double before = algbw(g, COLL_RING, COLL_LL, 1 << 30) * f;
    CU_ASSERT_DOUBLE_EQUAL(before, 141e9, 1e3);
    CU_ASSERT_TRUE(newest > before && newest <= 282e9 * (1 + 1e-9));
    coll_group_free(g);
    topo_free(t);
}

/* A ring across nodes posts every step to the network: at least 1 us on
 * Intel hosts, 2 us on AMD ones (NCCL 2.18 on), beyond NVLink's 0.6 us LL
 * step: 16 ranks on 2 nodes, 30 steps of which 4 cross, 26 x 1 us more. */
static void test_net_overhead_by_host(void)
{
    GError *err = NULL;
    Topo *ti = load("dgx-h100-cluster", 2), *ta = with_host_cpu("dgx-h100-cluster", "amd", 2, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(ti);
    CU_ASSERT_PTR_NOT_NULL_FATAL(ta);
    CollGroup *gi = group(ti), *ga = group(ta);
    CollCost ci, ca;
    CU_ASSERT_TRUE(coll_cost(gi, COLL_ALLREDUCE, COLL_RING, COLL_LL, 8, &ci));
    CU_ASSERT_TRUE(coll_cost(ga, COLL_ALLREDUCE, COLL_RING, COLL_LL, 8, &ca));
    CU_ASSERT_DOUBLE_EQUAL(ca.latency_s - ci.latency_s, 26e-6, 1e-9);
    coll_group_free(gi);
    coll_group_free(ga);
    topo_free(ti);
    topo_free(ta);
}

/* "host_cpu" names one of the families NCCL tells apart, else an error at
 * the key's line. */
static void test_bad_host_cpu(void)
{
    GError *err = NULL;
    CU_ASSERT_PTR_NULL(with_host_cpu("dgx-h100-cluster", "sparc", 2, &err));
    CU_ASSERT_TRUE(err && strstr(err->message, "t.json:1") && strstr(err->message, "host_cpu"));
    g_clear_error(&err);
}

/* A version rates by its own tables, and times by the newest: on 2 DGX A100
 * nodes NCCL 2.14 rates an LL tree at 4.4 + 2 (7 x 0.52 x 1.8 + 5) us
 * (tuning.cc then), the time is 6.8 + 2 (7 x 0.6 x 1.8 + 5) us. */
static void test_version_tables_rate(void)
{
    Topo *t = load("dgx-a100-cluster", 2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CollGroup *g = group(t);
    CollCost now = allreduce_cost(g, COLL_TREE, COLL_LL, 8);
    coll_group_set_nccl_version(g, coll_nccl_version_parse("2.14.3"));
    CollCost old = allreduce_cost(g, COLL_TREE, COLL_LL, 8);
    double host = coll_group_host_time(g);
    CU_ASSERT_DOUBLE_EQUAL(old.tuner_latency_s, 4.4e-6 + 2 * (7 * 0.52e-6 * 1.8 + 5e-6), 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(old.latency_s, 6.8e-6 + 2 * (7 * 0.6e-6 * 1.8 + 5e-6), 1e-9);
    CU_ASSERT_TRUE(host < old.latency_s);
    /* from 2.18 the x1.8 LL factor is gone and the rating is the time */
    CU_ASSERT_DOUBLE_EQUAL(now.latency_s, 6.8e-6 + 2 * (7 * 0.6e-6 + 5e-6), 1e-9);
    coll_group_set_nccl_version(g, 0);
    CU_ASSERT_DOUBLE_EQUAL(allreduce_cost(g, COLL_TREE, COLL_LL, 8).latency_s, now.latency_s, 1e-15);
    coll_group_free(g);
    topo_free(t);
}

/* NCCL 2.23 cut the tree's Simple step rating from 28 us to 4 (NVLink) and
 * 14 (network); the model keeps 2.18-2.22's for every version (the GH200
 * 2 x 4 run, NCCL 2.23.4, runs the ring at 4-8 MiB at the ring's time, where
 * 2.23's figures would have the tree twice as fast: collectives.json
 * "source"). So 2.22 and 2.23 choose alike and the tree costs the same. */
static void test_tree_simple_from_2_23(void)
{
    Topo *t = load("dgx-a100-cluster", 2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CollGroup *g = group(t);
    coll_group_set_nccl_version(g, coll_nccl_version_parse("2.22.3"));
    CollCost a22 = allreduce_cost(g, COLL_ALGO_AUTO, COLL_PROTO_AUTO, 4 << 20), t22 = allreduce_cost(g, COLL_TREE, COLL_SIMPLE, 4 << 20);
    coll_group_set_nccl_version(g, coll_nccl_version_parse("2.23.4"));
    CollCost a23 = allreduce_cost(g, COLL_ALGO_AUTO, COLL_PROTO_AUTO, 4 << 20), t23 = allreduce_cost(g, COLL_TREE, COLL_SIMPLE, 4 << 20);
    CU_ASSERT_EQUAL(a22.algo, a23.algo);
    CU_ASSERT_EQUAL(a22.proto, a23.proto);
    CU_ASSERT_FALSE(a23.algo == COLL_TREE && a23.proto == COLL_SIMPLE); /* what 2.23's cut rating would pick */
    CU_ASSERT_DOUBLE_EQUAL(t22.time_s, t23.time_s, 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(t23.latency_s, 2 * (7 * 28e-6 + 28e-6), 1e-9);
    /* 2.22 rates it by the same rows (tuner_latency_s 0: rated as timed) */
    CU_ASSERT_DOUBLE_EQUAL(t22.tuner_latency_s > 0 ? t22.tuner_latency_s : t22.latency_s, 2 * (7 * 28e-6 + 28e-6), 1e-9);
    coll_group_free(g);
    topo_free(t);
}

/* NCCL 2.21 rates an LL ring at half its bus bandwidth (1/4 before), both
 * under the LL ceiling; the rate stays at a quarter (ABCI: 4 HDR NICs a
 * node, 24 GB/s of bus bandwidth at a quarter, rated at 39 GB/s). */
static void test_ring_ll_rating(void)
{
    Topo *t = load("abci-a100", 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CollGroup *g = group(t);
    CollCost now = allreduce_cost(g, COLL_RING, COLL_LL, 1 << 20);
    coll_group_set_nccl_version(g, coll_nccl_version_parse("2.20.5"));
    CollCost old = allreduce_cost(g, COLL_RING, COLL_LL, 1 << 20);
    CU_ASSERT_DOUBLE_EQUAL(now.algbw_Bps, old.algbw_Bps, 1e-3);
    double f = coll_busbw_factor(COLL_ALLREDUCE, 16);
    CU_ASSERT_DOUBLE_EQUAL(now.algbw_Bps * f, 0.25 * 4 * 25e9 * 0.96, 1e3);
    CU_ASSERT_DOUBLE_EQUAL(now.tuner_algbw_Bps * f, 39e9, 1e3);
    CU_ASSERT_TRUE(old.tuner_algbw_Bps == 0 || fabs(old.tuner_algbw_Bps - old.algbw_Bps) < 1e-3);
    coll_group_free(g);
    topo_free(t);
}

/* CollNet (SHARP) ran LL only before NCCL 2.9. */
static void test_collnet_ll_before_2_9(void)
{
    Topo *t = load("abci-a100", 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CollGroup *g = group(t);
    CollCost c;
    CU_ASSERT_FALSE(coll_cost(g, COLL_ALLREDUCE, COLL_COLLNET, COLL_LL, 8, &c));
    CU_ASSERT_TRUE(coll_cost(g, COLL_ALLREDUCE, COLL_COLLNET, COLL_SIMPLE, 8, &c));
    coll_group_set_nccl_version(g, coll_nccl_version_parse("2.8.4"));
    CU_ASSERT_TRUE(coll_cost(g, COLL_ALLREDUCE, COLL_COLLNET, COLL_LL, 8, &c));
    coll_group_set_library(g, COLL_LIB_RCCL);
    CU_ASSERT_FALSE(coll_cost(g, COLL_ALLREDUCE, COLL_COLLNET, COLL_LL, 8, &c));
    coll_group_free(g);
    topo_free(t);
}

/* NCCL 2.8's CollNet on ABCI (4 NICs: 2 CollNet channels) cuts LL messages
 * into 512-byte chunks per channel below 2 KiB (64 threads x 8 bytes), so
 * from 1 KiB the second channel posts a SHARP operation too, and it waits
 * for the first on the job's one SHARP group channel: one more CollNet
 * network step (5 us) in the time, flat from 1 to 4 KiB (still two
 * channels), none in NCCL's rating (the tuner still picks CollNet LL), and
 * none where the SHARP quota does not limit the channels. */
static void test_sharp_queue(void)
{
    Topo *t = load("abci-a100", 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CollGroup *g = group(t);
    coll_group_set_nccl_version(g, coll_nccl_version_parse("2.8"));
    CollCost a = allreduce_cost(g, COLL_COLLNET, COLL_LL, 512), b = allreduce_cost(g, COLL_COLLNET, COLL_LL, 1024);
    CollCost d = allreduce_cost(g, COLL_COLLNET, COLL_LL, 4096), big = allreduce_cost(g, COLL_COLLNET, COLL_LL, 1 << 18);
    CU_ASSERT_DOUBLE_EQUAL(b.latency_s - a.latency_s, 5e-6, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(d.latency_s, b.latency_s, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(big.latency_s, b.latency_s, 1e-12);
    double ra = a.tuner_latency_s > 0 ? a.tuner_latency_s : a.latency_s;
    CU_ASSERT_DOUBLE_EQUAL(b.tuner_latency_s, ra, 1e-12);
    CU_ASSERT_TRUE(b.tuner_latency_s < b.latency_s - 4e-6);
    CollCost pick;
    CU_ASSERT_TRUE_FATAL(coll_cost(g, COLL_ALLREDUCE, COLL_ALGO_AUTO, COLL_PROTO_AUTO, 1024, &pick));
    CU_ASSERT_EQUAL(pick.algo, COLL_COLLNET);
    CU_ASSERT_EQUAL(pick.proto, COLL_LL);
    coll_group_free(g);
    /* the same without the SHARP limit ("collnet_sharp_group_channels": 0) */
    char *path = sim_data_dir("models/presets/collectives.json"), *text = NULL;
    CU_ASSERT_TRUE_FATAL(g_file_get_contents(path, &text, NULL, NULL));
    char *at = strstr(text, "\"collnet_sharp_group_channels\": 1");
    CU_ASSERT_PTR_NOT_NULL_FATAL(at);
    at[strlen("\"collnet_sharp_group_channels\": ")] = '0';
    char *file = tmpfile_with("p.json", text);
    GError *err = NULL;
    g = coll_group_new(t, NULL, 0, file, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    coll_group_set_nccl_version(g, coll_nccl_version_parse("2.8"));
    CU_ASSERT_DOUBLE_EQUAL(allreduce_cost(g, COLL_COLLNET, COLL_LL, 1024).latency_s, a.latency_s, 1e-12);
    coll_group_free(g);
    tmpfile_remove(file);
    g_free(text);
    g_free(path);
    topo_free(t);
}

/* LL128 across nodes: on Hopper from NCCL 2.17 (tuning.cc: typeInter up to
 * PATH_PXN when compute capability >= 9); before Hopper where each GPU shares
 * a PCIe switch with its NIC (PATH_PXB), which a topology states with
 * "nic_path": "pxb" (DGX A100 does): an A100 preset without it (its layout
 * not known) or with "phb" keeps LL128 inside the node, and the refusal
 * says why. */
static void test_ll128_across_nodes_on_hopper(void)
{
    Topo *h = load("dgx-h100-cluster", 2), *a = load("dgx-a100-cluster", 2);
    Topo *u = load_edited("dgx-a100-cluster", "\"nic_path\": \"pxb\",", "", 2);
    Topo *ph = load_edited("dgx-a100-cluster", "\"nic_path\": \"pxb\"", "\"nic_path\": \"phb\"", 2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(h);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_PTR_NOT_NULL_FATAL(u);
    CU_ASSERT_PTR_NOT_NULL_FATAL(ph);
    CollGroup *gh = group(h), *ga = group(a), *gu = group(u), *gp = group(ph);
    CollCost c;
    CU_ASSERT_TRUE(coll_cost(gh, COLL_ALLREDUCE, COLL_RING, COLL_LL128, 1 << 20, &c));
    CU_ASSERT_TRUE(coll_cost(ga, COLL_ALLREDUCE, COLL_RING, COLL_LL128, 1 << 20, &c));
    CU_ASSERT_FALSE(coll_cost(gu, COLL_ALLREDUCE, COLL_RING, COLL_LL128, 1 << 20, &c));
    CU_ASSERT_FALSE(coll_cost(gp, COLL_ALLREDUCE, COLL_RING, COLL_LL128, 1 << 20, &c));
    CU_ASSERT_PTR_NOT_NULL(strstr(coll_why_not(gu, COLL_ALLREDUCE, COLL_RING, COLL_LL128), "pxb"));
    CU_ASSERT_PTR_NOT_NULL(strstr(coll_why_not(gp, COLL_ALLREDUCE, COLL_RING, COLL_LL128), "phb"));
    /* the tuner picks it on 2 A100 nodes at some size from 1 MiB to 32 MiB */
    bool picked = false;
    for (double b = 1 << 20; b <= 32 << 20; b *= 2)
        picked |= coll_cost(ga, COLL_ALLREDUCE, COLL_ALGO_AUTO, COLL_PROTO_AUTO, b, &c) && c.proto == COLL_LL128;
    CU_ASSERT_TRUE(picked);
    coll_group_set_nccl_version(gh, coll_nccl_version_parse("2.16.5"));
    CU_ASSERT_FALSE(coll_cost(gh, COLL_ALLREDUCE, COLL_RING, COLL_LL128, 1 << 20, &c));
    coll_group_free(gh);
    coll_group_free(ga);
    coll_group_free(gu);
    coll_group_free(gp);
    topo_free(h);
    topo_free(a);
    topo_free(u);
    topo_free(ph);
}

/* NVLSTree's pipeline fill is in the time, not in NCCL's rating: on 2 DGX
 * H100 nodes (8 NICs, 16 NVLS channels) two rounds of 16 MiB (128 KiB chunks)
 * from 64 MiB, of 8 MiB (64 KiB) below, of the whole message below 8 MiB;
 * a round no shorter than the tree's network step (at 2 MiB the step). */
static void test_nvls_tree_fill(void)
{
    Topo *t = load("dgx-h100-cluster", 2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CollGroup *g = group(t);
    const double MiB = 1048576, sizes[] = {2 * MiB, 16 * MiB, 256 * MiB}, round[] = {2 * MiB, 8 * MiB, 16 * MiB};
    /* the tree's network step on InfiniBand: NCCL's 14 us (collectives.json);
     * the time's base, the NVLS step and two network steps (the newest NCCL
     * rates them at 25 and 20.9 us: nvls_rating_latency_s) */
    const double step = 14e-6, base = 23e-6 + 2 * step;
    for (int i = 0; i < 3; i++) {
        CollCost c = allreduce_cost(g, COLL_NVLS_TREE, COLL_SIMPLE, sizes[i]);
        double r = fmax(round[i] / c.algbw_Bps, step);
        CU_ASSERT_DOUBLE_EQUAL(c.latency_s - base, 2 * r, 1e-12);
        CU_ASSERT_DOUBLE_EQUAL(c.tuner_latency_s, 25e-6 + 2 * 20.9e-6, 1e-12);
    }
    CollCost two = allreduce_cost(g, COLL_NVLS_TREE, COLL_SIMPLE, 2 * MiB);
    CU_ASSERT_DOUBLE_EQUAL(two.latency_s - base, 2 * step, 1e-12); /* the step, not the bytes */
    CollCost pick;
    CU_ASSERT_TRUE_FATAL(coll_cost(g, COLL_ALLREDUCE, COLL_ALGO_AUTO, COLL_PROTO_AUTO, 256 * MiB, &pick));
    CU_ASSERT_EQUAL(pick.algo, COLL_NVLS_TREE);
    coll_group_free(g);
    topo_free(t);
}

/* NVLSTree's network operations are posted by each head's proxy thread: per
 * round a send and a receive in every NVLS channel, at NCCL's network post
 * overhead (1 us on Intel hosts, 2 us on AMD).  On 2 DGX B200 nodes (32 NVLS
 * channels from NCCL 2.25, 8 heads) 1 MiB is one round of 32 KiB chunks: 64
 * posts, 64 us on Intel, 128 on AMD, longer than its bytes and fill; at 1 GiB
 * (32 rounds of 128 KiB chunks, 2 ms of posts) the bytes set the pace and only
 * the fill is added.  Hopper's 16 channels at 2 MiB: the fill still binds
 * (test_nvls_tree_fill).  The tuner sees neither. */
static void test_nvls_tree_posts(void)
{
    GError *err = NULL;
    Topo *ti = load("dgx-b200-cluster", 2), *ta = with_host_cpu("dgx-b200-cluster", "amd", 2, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(ti);
    CU_ASSERT_PTR_NOT_NULL_FATAL(ta);
    CollGroup *gi = group(ti), *ga = group(ta);
    const double MiB = 1048576;
    CollCost i1 = allreduce_cost(gi, COLL_NVLS_TREE, COLL_SIMPLE, MiB);
    CollCost a1 = allreduce_cost(ga, COLL_NVLS_TREE, COLL_SIMPLE, MiB);
    const double base = 23e-6 + 2 * 14e-6; /* the time's NVLS step and network steps */
    CU_ASSERT_DOUBLE_EQUAL(i1.time_s - base, 64e-6, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(a1.time_s - base, 128e-6, 1e-9);
    CollCost big = allreduce_cost(gi, COLL_NVLS_TREE, COLL_SIMPLE, 1024 * MiB);
    double fill = 2 * fmax(32 * MiB / big.algbw_Bps, 14e-6);
    CU_ASSERT_DOUBLE_EQUAL(big.latency_s - base, fill, 1e-9);
    coll_group_free(gi);
    coll_group_free(ga);
    topo_free(ti);
    topo_free(ta);
}

/* An LL tree across nodes readies its channels' sends one after another at
 * NCCL's network post overhead: on 2 DGX H100 nodes 32 KiB runs on 8
 * channels (4 KiB each), 7 overheads after the first (7 us on Intel hosts,
 * 14 on AMD); 4 KiB on one channel pays none; LL128 and one node none; the
 * tuner's latency leaves it out; the flows pay it once as the closed form. */
static void test_ll_tree_channel_posts(void)
{
    GError *err = NULL;
    Topo *ti = load("dgx-h100-cluster", 2), *ta = with_host_cpu("dgx-h100-cluster", "amd", 2, &err), *one = load("dgx-h100", 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(ti);
    CU_ASSERT_PTR_NOT_NULL_FATAL(ta);
    CU_ASSERT_PTR_NOT_NULL_FATAL(one);
    CollGroup *gi = group(ti), *ga = group(ta), *g1 = group(one);
    CollCost i4 = allreduce_cost(gi, COLL_TREE, COLL_LL, 4096), i32 = allreduce_cost(gi, COLL_TREE, COLL_LL, 32768);
    CollCost a32 = allreduce_cost(ga, COLL_TREE, COLL_LL, 32768);
    CU_ASSERT_DOUBLE_EQUAL(i4.latency_s, i4.tuner_latency_s, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(i32.latency_s - i32.tuner_latency_s, 7e-6, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(a32.latency_s - a32.tuner_latency_s, 14e-6, 1e-12);
    CollCost l128 = allreduce_cost(gi, COLL_TREE, COLL_LL128, 32768), n32 = allreduce_cost(g1, COLL_TREE, COLL_LL, 32768);
    CU_ASSERT_DOUBLE_EQUAL(l128.latency_s, l128.tuner_latency_s, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(n32.latency_s, n32.tuner_latency_s, 1e-12);
    double flows = coll_simulate(gi, COLL_ALLREDUCE, COLL_TREE, COLL_LL, 32768);
    CU_ASSERT_TRUE(fabs(flows - i32.time_s) < 0.05 * i32.time_s);
    coll_group_free(gi);
    coll_group_free(ga);
    coll_group_free(g1);
    topo_free(ti);
    topo_free(ta);
    topo_free(one);
}

/* An LL ring across nodes runs at its channels' share of NCCL's LL ceiling,
 * as the LL tree does (16 ranks: 64 KiB a channel, so 256 KiB on 4 of the
 * comm's channels); the tuner rates the full ceiling at every size. */
static void test_ring_ll_channel_share(void)
{
    Topo *t = load("dgx-a100-cluster", 2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CollGroup *g = group(t);
    CollCost few = allreduce_cost(g, COLL_RING, COLL_LL, 262144), all = allreduce_cost(g, COLL_RING, COLL_LL, 4194304);
    CU_ASSERT_TRUE(few.algbw_Bps < all.algbw_Bps);
    CU_ASSERT_DOUBLE_EQUAL(few.tuner_algbw_Bps, all.tuner_algbw_Bps, 1e-3);
    coll_group_free(g);
    topo_free(t);
}

/* An LL128 tree moves at most NCCL's per-channel ceiling on each of its
 * channels (perChMaxTreeLL128Bws: Hopper 36.7 GB/s at 2 nodes, 29.0 from 3
 * on), in the time and the rating alike: on DGX H100 nodes (8 channels, one
 * per NIC) half of 8 x that is its algorithm bandwidth at 1 GiB (size
 * correction 1). A malformed ceiling is refused at its line. */
static void test_tree_ll128_ceiling(void)
{
    const struct {
        int nodes;
        double per_ch;
    } cases[] = {{2, 36.7e9}, {4, 29.0e9}};
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        Topo *t = load("dgx-h100-cluster", cases[i].nodes);
        CU_ASSERT_PTR_NOT_NULL_FATAL(t);
        CollGroup *g = group(t);
        CollCost c = allreduce_cost(g, COLL_TREE, COLL_LL128, 1 << 30);
        CU_ASSERT_DOUBLE_EQUAL(c.algbw_Bps, 0.5 * 8 * cases[i].per_ch, 1e3);
        /* rated 0.85 lower from NCCL 2.26: the simple tree pattern's (collectives.json tree_pattern_penalty) */
        CU_ASSERT_DOUBLE_EQUAL(c.tuner_algbw_Bps, 0.85 * c.algbw_Bps, 1e3);
        coll_group_free(g);
        topo_free(t);
    }
    char *path = sim_data_dir("models/presets/collectives.json"), *text = NULL;
    CU_ASSERT_TRUE_FATAL(g_file_get_contents(path, &text, NULL, NULL));
    const char *key = "\"two_nodes\": {\"volta\": 20e9";
    char *at = strstr(text, key);
    CU_ASSERT_PTR_NOT_NULL_FATAL(at);
    GString *bad = g_string_new_len(text, at - text);
    g_string_append(bad, "\"two_nodes\": {\"volta\": -1");
    g_string_append(bad, at + strlen(key));
    char *file = tmpfile_with("c.json", bad->str);
    GError *err = NULL;
    CollParams *p = coll_params_new(file, &err);
    CU_ASSERT_PTR_NULL(p);
    CU_ASSERT_PTR_NOT_NULL_FATAL(err);
    CU_ASSERT_PTR_NOT_NULL(strstr(err->message, "volta"));
    g_clear_error(&err);
    tmpfile_remove(file);
    g_string_free(bad, TRUE);
    g_free(text);
    g_free(path);
}

/* All-to-all is NCCL's (and RCCL's) sends and receives, not the tuner's:
 * LL up to 16 KiB per peer, Simple above, never LL128 (enqueue.cc
 * addP2pToPlan); where the transport's environment leaves no LL buffers
 * (GPUDirect-TCPX's NCCL_PROTO=Simple), Simple at every size; TPUs run no
 * NCCL and take the fastest. */
static void test_alltoall_p2p_protocol(void)
{
    const struct {
        const char *preset;
        int nodes;
    } cases[] = {{"dgx-h100-cluster", 2}, {"dgx-h100", 1}, {"mi355x-cluster", 2}};
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        Topo *t = load(cases[i].preset, cases[i].nodes);
        CollGroup *g = group(t);
        int n = coll_group_size(g);
        CollCost c;
        CU_ASSERT_TRUE_FATAL(coll_cost(g, COLL_ALLTOALL, COLL_ALGO_AUTO, COLL_PROTO_AUTO, 16384.0 * n, &c));
        CU_ASSERT_EQUAL(c.proto, COLL_LL);
        for (double per_peer = 16385; per_peer < 1e9; per_peer *= 4) {
            CU_ASSERT_TRUE_FATAL(coll_cost(g, COLL_ALLTOALL, COLL_ALGO_AUTO, COLL_PROTO_AUTO, per_peer * n, &c));
            CU_ASSERT_EQUAL(c.proto, COLL_SIMPLE);
        }
        coll_group_free(g);
        topo_free(t);
    }
    Topo *t = load("gcp-a3high", 2);
    CollGroup *g = group(t);
    CollCost c;
    CU_ASSERT_TRUE_FATAL(coll_cost(g, COLL_ALLTOALL, COLL_ALGO_AUTO, COLL_PROTO_AUTO, 8, &c));
    CU_ASSERT_EQUAL(c.proto, COLL_SIMPLE);
    coll_group_free(g);
    topo_free(t);
    /* a forced protocol is run as asked */
    t = load("dgx-h100-cluster", 2);
    g = group(t);
    CU_ASSERT_TRUE_FATAL(coll_cost(g, COLL_ALLTOALL, COLL_ALGO_AUTO, COLL_LL, 1 << 30, &c));
    CU_ASSERT_EQUAL(c.proto, COLL_LL);
    coll_group_free(g);
    topo_free(t);
}

static const TestCase tests[] = {
    {"the LL128 tree's per-channel ceiling", test_tree_ll128_ceiling},
    {"the LL ring's channel share across nodes", test_ring_ll_channel_share},
    {"LL128 across nodes: Hopper, or a stated PXB path", test_ll128_across_nodes_on_hopper},
    {"a version rates by its tables, times by the newest", test_version_tables_rate},
    {"tree Simple from NCCL 2.23", test_tree_simple_from_2_23},
    {"the LL ring's rating from NCCL 2.21", test_ring_ll_rating},
    {"CollNet LL before NCCL 2.9", test_collnet_ll_before_2_9},
    {"SHARP queues CollNet's channels in the time, not the rating", test_sharp_queue},
    {"NVLSTree's pipeline fill in the time, not the rating", test_nvls_tree_fill},
    {"NVLSTree's proxy posts by host CPU", test_nvls_tree_posts},
    {"an LL tree's channel posts across nodes", test_ll_tree_channel_posts},
    {"LL ceiling across nodes by host CPU", test_ll_ceiling_across_nodes},
    {"no LL ceiling on RCCL", test_no_ll_ceiling_on_rccl},
    {"LL ceiling on one node by GPU generation", test_ll_ceiling_one_node},
    {"network post overhead by host CPU", test_net_overhead_by_host},
    {"bad host_cpu", test_bad_host_cpu},
    {"all-to-all: NCCL's send/receive protocol rule", test_alltoall_p2p_protocol},
};
TEST_MAIN("tuner", tests)
