/* The MPI collective model (models/mpi_model.h): the libraries' selections
 * as their sources state them, the Hockney and contention terms, any number
 * of ranks per node, the OSU headers' layout and library, and the error
 * bounds on the OSU runs of tests/data/traces (OCI BM.Optimized3.36, Open MPI
 * 5.0.8 + UCX), which nothing in the model was fitted to. */
#include "mpi_model.h"
#include "osu.h"
#include "validate.h"
#include "test_main.h"
#include "test_tmpfile.h"
#include "test_validated.h"

#include <math.h>
#include <string.h>

#define DATA SHARDSIM_SOURCE_DIR "/tests/data/traces/"
#define OCI "oci-bm-optimized3.36"

static Topo *oci(int nodes)
{
    GError *err = NULL;
    TopoOptions o = {.nodes = nodes};
    Topo *t = topo_load(OCI, &o, &err);
    CU_ASSERT_PTR_NULL(err);
    g_clear_error(&err);
    return t;
}

static MpiModel *model(const Topo *t, int nodes, int ppn, MpiLib lib)
{
    GError *err = NULL;
    MpiModel *m = mpi_model_new(t, nodes, ppn, lib, NULL, &err);
    if (!m)
        fprintf(stderr, "unexpected: %s\n", err->message);
    CU_ASSERT_PTR_NULL(err);
    g_clear_error(&err);
    return m;
}

static MpiCost cost(const MpiModel *m, CollOp op, double bytes)
{
    MpiCost c = {NAN, NULL};
    CU_ASSERT_TRUE(mpi_cost(m, op, bytes, &c));
    CU_ASSERT_TRUE(c.time_s > 0 && isfinite(c.time_s));
    return c;
}

/* coll_tuned_decision_fixed.c (v5.0.8), 36 ranks (32 <= n < 64): alltoall
 * modified Bruck below 512 B per peer, linear below 512 KiB, then
 * linear_sync; allreduce segmented ring below 128 B, then Rabenseifner;
 * han for multi-node allreduce (it disqualifies itself on one node). */
static void test_openmpi_selection(void)
{
    Topo *t = oci(4);
    MpiModel *one = model(t, 1, 36, MPI_LIB_OPENMPI), *four = model(t, 4, 36, MPI_LIB_OPENMPI);
    CU_ASSERT_STRING_EQUAL(cost(one, COLL_ALLTOALL, 36.0 * 256).algo, "tuned:modified_bruck");
    CU_ASSERT_STRING_EQUAL(cost(one, COLL_ALLTOALL, 36.0 * 512).algo, "tuned:linear");
    CU_ASSERT_STRING_EQUAL(cost(one, COLL_ALLTOALL, 36.0 * 524288).algo, "tuned:linear_sync");
    CU_ASSERT_STRING_EQUAL(cost(one, COLL_ALLREDUCE, 64).algo, "tuned:segmented_ring");
    CU_ASSERT_STRING_EQUAL(cost(one, COLL_ALLREDUCE, 128).algo, "tuned:rabenseifner");
    CU_ASSERT_TRUE(g_str_has_prefix(cost(four, COLL_ALLREDUCE, 4).algo, "han("));
    CU_ASSERT_TRUE(g_str_has_prefix(cost(four, COLL_ALLTOALL, 144.0 * 4).algo, "tuned:")); /* han has no alltoall */
    mpi_model_free(one);
    mpi_model_free(four);
    topo_free(t);
}

/* coll_tuned_decision_fixed.c (v5.0.8) on larger and smaller communicators:
 * the rules change at 2048 and 4096 ranks (Bruck below 1 KiB and 2 KiB per
 * peer there), and two ranks alternate pairwise and two_proc by size. */
static void test_openmpi_alltoall_sizes(void)
{
    Topo *t = oci(128);
    struct {
        int nodes, ppn;
        double per_peer;
        const char *algo;
    } c[] = {
        {32, 32, 511, "tuned:modified_bruck"}, {32, 32, 512, "tuned:linear_sync"}, {32, 32, 1024, "tuned:linear"},
        {32, 32, 2048, "tuned:linear_sync"},   {64, 32, 1023, "tuned:modified_bruck"}, {64, 32, 1024, "tuned:linear_sync"},
        {64, 32, 4096, "tuned:linear"},        {64, 32, 8192, "tuned:linear_sync"}, {64, 32, 131072, "tuned:linear"},
        {128, 32, 2047, "tuned:modified_bruck"}, {128, 32, 8192, "tuned:linear"}, {128, 32, 16384, "tuned:linear_sync"},
        {128, 32, 32768, "tuned:linear"},        {128, 32, 65536, "tuned:linear_sync"}, {1, 2, 1, "tuned:pairwise"},
        {1, 2, 2, "tuned:two_proc"},             {1, 2, 4095, "tuned:two_proc"}, {1, 2, 4096, "tuned:pairwise"},
        {1, 2, 262144, "tuned:two_proc"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(c); i++) {
        MpiModel *m = model(t, c[i].nodes, c[i].ppn, MPI_LIB_OPENMPI);
        MpiCost k = cost(m, COLL_ALLTOALL, c[i].per_peer * c[i].nodes * c[i].ppn);
        if (strcmp(k.algo, c[i].algo))
            printf("\n  %d ranks, %.0f B per peer: %s, expected %s", c[i].nodes * c[i].ppn, c[i].per_peer, k.algo,
                   c[i].algo);
        CU_ASSERT_STRING_EQUAL(k.algo, c[i].algo);
        mpi_model_free(m);
    }
    /* the costs behind the names: two_proc is one exchange like pairwise on
     * two ranks; the linear all-to-all is each rank's n - 1 messages one
     * after another, so 36 ranks take 35/17 of 18 ranks' time (the latency
     * once) */
    MpiModel *two = model(t, 1, 2, MPI_LIB_OPENMPI), *m18 = model(t, 1, 18, MPI_LIB_OPENMPI),
             *m36 = model(t, 1, 36, MPI_LIB_OPENMPI);
    double pw = cost(two, COLL_ALLTOALL, 2.0 * 1).time_s, tp = cost(two, COLL_ALLTOALL, 2.0 * 2).time_s;
    CU_ASSERT_TRUE(fabs(tp / pw - 1) < 0.01);
    double r = cost(m36, COLL_ALLTOALL, 36.0 * 4096).time_s / cost(m18, COLL_ALLTOALL, 18.0 * 4096).time_s;
    CU_ASSERT_TRUE(r > 1.9 && r < 35.0 / 17);
    mpi_model_free(two);
    mpi_model_free(m18);
    mpi_model_free(m36);
    topo_free(t);
}

/* maint/tuning/coll (v4.3.2): alltoall Bruck up to 256 B per peer, scattered
 * up to 32 KiB, then pairwise; allreduce over nodes composition alpha (with
 * recursive doubling for up to 8 bytes, Rabenseifner above) up to 32 KiB,
 * then composition beta (MPIR's flat allreduce). */
static void test_mpich_selection(void)
{
    Topo *t = oci(4);
    MpiModel *m = model(t, 4, 36, MPI_LIB_MPICH);
    CU_ASSERT_STRING_EQUAL(cost(m, COLL_ALLTOALL, 144.0 * 256).algo, "mpir:brucks");
    CU_ASSERT_STRING_EQUAL(cost(m, COLL_ALLTOALL, 144.0 * 32768).algo, "mpir:scattered");
    CU_ASSERT_STRING_EQUAL(cost(m, COLL_ALLTOALL, 144.0 * 32769).algo, "mpir:pairwise");
    CU_ASSERT_STRING_EQUAL(cost(m, COLL_ALLREDUCE, 8).algo, "composition_alpha(recursive_doubling)");
    CU_ASSERT_STRING_EQUAL(cost(m, COLL_ALLREDUCE, 32768).algo, "composition_alpha(reduce_scatter_allgather)");
    CU_ASSERT_STRING_EQUAL(cost(m, COLL_ALLREDUCE, 32769).algo, "composition_beta(reduce_scatter_allgather)");
    /* bcast: by node below 12 KiB, then MPIR's flat scatter + ring all-gather
     * (144 ranks: no power of two); on 128 ranks by node up to 512 KiB */
    CU_ASSERT_STRING_EQUAL(cost(m, COLL_BROADCAST, 12287).algo, "composition(binomial)");
    CU_ASSERT_STRING_EQUAL(cost(m, COLL_BROADCAST, 12288).algo, "composition_gamma(scatter_ring_allgather)");
    MpiModel *p2 = model(t, 4, 32, MPI_LIB_MPICH);
    CU_ASSERT_STRING_EQUAL(cost(p2, COLL_BROADCAST, 524287).algo, "composition(binomial)");
    CU_ASSERT_STRING_EQUAL(cost(p2, COLL_BROADCAST, 524288).algo, "composition_gamma(scatter_ring_allgather)");
    mpi_model_free(p2);
    mpi_model_free(m);
    topo_free(t);
}

/* coll_tuned_decision_fixed.c, 36 ranks: allgather by each rank's block
 * (recursive doubling below 1 KiB, Bruck's off a power of two; neighbor
 * exchange below 64 KiB; ring), reduce_scatter by the whole buffer
 * (non-overlapping below 64 B, recursive halving below 2 KiB, butterfly
 * below 512 KiB, ring). */
static void test_openmpi_allgather_reducescatter(void)
{
    Topo *t = oci(1);
    MpiModel *m = model(t, 1, 36, MPI_LIB_OPENMPI);
    CU_ASSERT_STRING_EQUAL(cost(m, COLL_ALLGATHER, 36.0 * 512).algo, "tuned:bruck");
    CU_ASSERT_STRING_EQUAL(cost(m, COLL_ALLGATHER, 36.0 * 2048).algo, "tuned:neighbor");
    CU_ASSERT_STRING_EQUAL(cost(m, COLL_ALLGATHER, 36.0 * 65536).algo, "tuned:ring");
    CU_ASSERT_STRING_EQUAL(cost(m, COLL_REDUCESCATTER, 32).algo, "tuned:non-overlapping");
    CU_ASSERT_STRING_EQUAL(cost(m, COLL_REDUCESCATTER, 1024).algo, "tuned:recursive_halving");
    CU_ASSERT_STRING_EQUAL(cost(m, COLL_REDUCESCATTER, 4096).algo, "tuned:butterfly");
    CU_ASSERT_STRING_EQUAL(cost(m, COLL_REDUCESCATTER, 1 << 20).algo, "tuned:ring");
    /* neighbor exchange sends n/2 rounds where the ring sends n - 1 */
    CU_ASSERT_TRUE(cost(m, COLL_ALLGATHER, 36.0 * 4096).time_s < cost(m, COLL_ALLGATHER, 36.0 * 65536).time_s);
    mpi_model_free(m);
    topo_free(t);
}

/* Shared memory: eager through a FIFO cell (two copies) below the library's
 * rendezvous threshold (UCX auto: 8 KiB; MPICH's CMA threshold 16 KiB),
 * from it the RTS, a CMA get's fixed cost and one copy. */
static void test_shm_protocols(void)
{
    Topo *t = oci(1);
    MpiModel *u = model(t, 1, 36, MPI_LIB_OPENMPI), *h = model(t, 1, 36, MPI_LIB_MPICH);
    const MpiPlatform *p = mpi_model_platform(u);
    double lat = p->lat_shm, ovh = p->overhead, bw = p->bw_core;
    CU_ASSERT_DOUBLE_EQUAL(mpi_p2p_time(u, 4096, 1), lat + ovh + 2 * 4096 / bw, 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(mpi_p2p_time(u, 8192, 1), lat + ovh + lat + 5.4e-7 + 8192 / bw, 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(mpi_p2p_time(h, 8192, 1), lat + ovh + 2 * 8192 / bw, 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(mpi_p2p_time(h, 16384, 1), lat + ovh + lat + 5.4e-7 + 16384 / bw, 1e-15);
    /* single copy halves the bandwidth term of large messages */
    double big = 1 << 24;
    CU_ASSERT_TRUE(mpi_p2p_time(u, big, 1) < 0.51 * (lat + ovh + 2 * big / bw));
    mpi_model_free(u);
    mpi_model_free(h);
    topo_free(t);
}

/* OSU reuses its buffers: a 36-rank all-to-all of 16 KiB per peer (42 MB of
 * buffers on the node, under its 123 MB of L2 + L3) is not bound by DRAM,
 * the same without the caches described is. */
static void test_cache_residency(void)
{
    Topo *t = oci(1);
    MpiModel *m = model(t, 1, 36, MPI_LIB_OPENMPI);
    const MpiPlatform *p = mpi_model_platform(m);
    double per_peer = 16384, dram = 36.0 * 35 * per_peer * p->copy_traffic / p->bw_mem;
    CU_ASSERT_TRUE(cost(m, COLL_ALLTOALL, 36 * per_peer).time_s < 0.8 * dram);
    char *def = g_build_filename(SHARDSIM_SOURCE_DIR, "models", "presets", "mpi.json", NULL), *text = NULL;
    CU_ASSERT_TRUE_FATAL(g_file_get_contents(def, &text, NULL, NULL));
    char *cut = strstr(text, "\"llc_bytes\"");
    CU_ASSERT_PTR_NOT_NULL_FATAL(cut);
    memcpy(cut, "\"llc_off__\"", 11); /* an unknown key: the caches not described */
    char *path = tmpfile_with("p.json", text);
    GError *err = NULL;
    MpiModel *nc = mpi_model_new(t, 1, 36, MPI_LIB_OPENMPI, path, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(nc);
    CU_ASSERT_TRUE(cost(nc, COLL_ALLTOALL, 36 * per_peer).time_s >= dram * 0.999);
    mpi_model_free(nc);
    mpi_model_free(m);
    topo_free(t);
    tmpfile_remove(path);
    g_free(def);
    g_free(text);
}

/* Hockney per message: a message between nodes is the path's latency plus
 * the library's overhead plus bytes over the NIC's payload rate. */
static void test_p2p_hockney(void)
{
    Topo *t = oci(2);
    MpiModel *m = model(t, 2, 1, MPI_LIB_OPENMPI);
    const MpiPlatform *p = mpi_model_platform(m);
    CU_ASSERT_DOUBLE_EQUAL(p->lat_net, 1.5e-6, 1e-12);           /* the preset's route: 2 x 0.25 + 2 x 0.5 us */
    CU_ASSERT_DOUBLE_EQUAL(p->bw_nic, 12.5e9 * 0.9804, 1e3);      /* 100 Gb/s x RoCEv2 framing */
    double t0 = mpi_p2p_time(m, 0, 1), t1 = mpi_p2p_time(m, 1 << 20, 1);
    CU_ASSERT_DOUBLE_EQUAL(t0, p->lat_net + p->overhead, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(t1 - t0, (1 << 20) / p->bw_nic, 1e-12);
    /* a window streams: the latency once, each message's software under
     * the previous one's DMA (tests/test_cxi.c for the small ones) */
    CU_ASSERT_DOUBLE_EQUAL(mpi_p2p_time(m, 1 << 20, 64), p->lat_net + p->overhead + 64.0 * (1 << 20) / p->bw_nic, 1e-12);
    mpi_model_free(m);
    topo_free(t);
}

/* A node's NICs are counted from the routes its ranks take: 8 rails on a
 * DGX A100 node, one NIC per rank's path. */
static void test_nics(void)
{
    GError *err = NULL;
    Topo *t = topo_load("dgx-a100-cluster", &(TopoOptions){.nodes = 2}, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    MpiModel *m = model(t, 2, 8, MPI_LIB_OPENMPI), *two = model(t, 2, 2, MPI_LIB_OPENMPI);
    CU_ASSERT_DOUBLE_EQUAL(mpi_model_platform(m)->bw_net, 25e9, 1);
    CU_ASSERT_DOUBLE_EQUAL(mpi_model_platform(m)->bw_nic, 8 * 25e9, 1);
    CU_ASSERT_DOUBLE_EQUAL(mpi_model_platform(two)->bw_nic, 2 * 25e9, 1); /* the job's ranks reach two rails */
    mpi_model_free(m);
    mpi_model_free(two);
    topo_free(t);
}

/* Contention: a node's ranks share its NIC and its memory. */
static void test_contention(void)
{
    Topo *t = oci(2);
    MpiModel *m = model(t, 2, 16, MPI_LIB_MPICH), *one = model(t, 1, 36, MPI_LIB_OPENMPI);
    const MpiPlatform *p = mpi_model_platform(m);
    double per_peer = 1 << 20, n = 32;
    /* pairwise all-to-all: every node sends 16 x 16 peers x 1 MiB through one NIC */
    double t_a2a = cost(m, COLL_ALLTOALL, per_peer * n).time_s;
    CU_ASSERT_TRUE(t_a2a >= 16.0 * 16 * per_peer / p->bw_nic);
    /* one node: the copies of a 36-rank all-to-all go through DRAM */
    const MpiPlatform *q = mpi_model_platform(one);
    double b = 36.0 * (8 << 20);
    CU_ASSERT_TRUE(cost(one, COLL_ALLTOALL, b).time_s >= 36.0 * 35 * (8 << 20) * q->copy_traffic / q->bw_mem * 0.999);
    mpi_model_free(m);
    mpi_model_free(one);
    topo_free(t);
}

/* Any ranks per node: 288 on one node (2 x 144-core sockets), which the
 * NCCL model refuses, and 512 such nodes. */
static void test_many_ranks_per_node(void)
{
    const char *json = "{\"family\": \"fat_tree\", \"nodes\": 512, \"ranks_per_node\": 288, \"nics_per_node\": 1,"
                       " \"nvlink\": {\"bandwidth\": \"10GB/s\", \"latency\": \"200ns\", \"kind\": \"shm\"},"
                       " \"pcie\": {\"bandwidth\": \"31.5GB/s\", \"latency\": \"250ns\"},"
                       " \"nic\": {\"bandwidth\": \"200Gbps\", \"latency\": \"500ns\"}, \"uplink\": {\"latency\": \"500ns\"}}";
    char *path = tmpfile_with("cpu288.json", json);
    GError *err = NULL;
    Topo *t = topo_load(path, &(TopoOptions){0}, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    MpiModel *m = model(t, 512, 288, MPI_LIB_OPENMPI), *small = model(t, 1, 288, MPI_LIB_OPENMPI);
    double prev = 0;
    for (double b = 1 << 20; b <= (1 << 30); b *= 4) { /* one algorithm (han) over the range: time grows */
        double x = cost(m, COLL_ALLREDUCE, b).time_s;
        CU_ASSERT_TRUE(x > prev);
        prev = x;
    }
    for (int op = 0; op < COLL_NUM_OPS; op++)
        (void)cost(small, (CollOp)op, 1 << 20);
    /* the layout must fit the topology */
    CU_ASSERT_PTR_NULL(mpi_model_new(t, 513, 288, MPI_LIB_OPENMPI, NULL, &err));
    CU_ASSERT_TRUE(err && err->code == SIM_ERROR_INPUT);
    g_clear_error(&err);
    mpi_model_free(m);
    mpi_model_free(small);
    topo_free(t);
    tmpfile_remove(path);
}

/* The parameters calibrate fits: read back as set; a node's NICs follow
 * one path's rate; non-positive or non-finite values are refused; an
 * overlay's "mpi." keys apply over the default file. */
static void test_fitted_params(void)
{
    Topo *t = oci(2);
    MpiModel *m = model(t, 2, 36, MPI_LIB_OPENMPI);
    const MpiPlatform *p = mpi_model_platform(m);
    double nic = p->bw_nic, net = p->bw_net;
    CU_ASSERT_TRUE(mpi_model_set_param(m, 5, net / 2));
    CU_ASSERT_DOUBLE_EQUAL(p->bw_nic, nic / 2, 1);
    for (int i = 0; i < MPI_NUM_PARAMS; i++) {
        double v = mpi_model_param(m, i);
        CU_ASSERT_TRUE(g_str_has_prefix(mpi_param_key(i), "mpi."));
        CU_ASSERT_FALSE(mpi_model_set_param(m, i, 0));
        CU_ASSERT_FALSE(mpi_model_set_param(m, i, NAN));
        if (v == 0) /* mpi.net_message_overhead: RoCE's NICs have no transport block */
            continue;
        CU_ASSERT_TRUE(mpi_model_set_param(m, i, 2 * v));
        CU_ASSERT_DOUBLE_EQUAL(mpi_model_param(m, i), 2 * v, 1e-9 * v);
    }
    CU_ASSERT_EQUAL(mpi_model_param(m, MPI_NUM_PARAMS - 1), 0);
    char *path = tmpfile_with(
        "o.json", "{\"overlay\": \"t\", \"parameters\": {\"mpi.overhead\": {\"value\": 1e-6}, \"links.x\": 3}}");
    CU_ASSERT_TRUE(mpi_params_is_overlay(path));
    GError *err = NULL;
    MpiModel *o = mpi_model_new(t, 2, 36, MPI_LIB_OPENMPI, path, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(o);
    CU_ASSERT_DOUBLE_EQUAL(mpi_model_param(o, 0), 1e-6, 1e-18);
    CU_ASSERT_DOUBLE_EQUAL(mpi_model_platform(o)->bw_core, 10e9, 1); /* the rest as the default file */
    mpi_model_free(o);
    mpi_model_free(m);
    topo_free(t);
    tmpfile_remove(path);
}

static void test_bad_params(void)
{
    char *path = tmpfile_with("p.json", "{\"libraries\": {\"openmpi\": {\"overhead\": -1}}}");
    Topo *t = oci(2);
    GError *err = NULL;
    CU_ASSERT_PTR_NULL(mpi_model_new(t, 2, 1, MPI_LIB_OPENMPI, path, &err));
    CU_ASSERT_TRUE(err && strstr(err->message, "p.json:1:") && strstr(err->message, "overhead"));
    g_clear_error(&err);
    topo_free(t);
    tmpfile_remove(path);
}

/* ---------------- OSU headers ---------------- */

static OsuTrace *load(const char *name)
{
    GError *err = NULL;
    char *path = g_strconcat(DATA, name, NULL);
    OsuTrace *t = osu_load(path, &err);
    CU_ASSERT_PTR_NULL(err);
    g_clear_error(&err);
    g_free(path);
    return t;
}

static void test_osu_layout(void)
{
    static const struct {
        const char *file;
        int ranks, nodes, ppn;
    } want[] = {
        {"osu_allreduce_oci-bm-optimized3.36_4node144proc_rocev2-100g_ocitutorials.txt", 144, 4, 36},
        {"osu_alltoall_oci-bm-optimized3.36_1node36proc_ocitutorials.txt", 36, 1, 36},
        {"osu_latency_oci-bm-optimized3.36_2node.txt", 2, 2, 1},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(want); i++) {
        OsuTrace *t = load(want[i].file);
        CU_ASSERT_PTR_NOT_NULL_FATAL(t);
        int r = -1, n = -1, q = -1;
        char *v = NULL;
        CU_ASSERT_TRUE(osu_layout(t, &r, &n, &q, NULL));
        CU_ASSERT_EQUAL(r, want[i].ranks);
        CU_ASSERT_EQUAL(n, want[i].nodes);
        CU_ASSERT_EQUAL(q, want[i].ppn);
        CU_ASSERT_EQUAL(osu_mpi_library(t, &v), MPI_LIB_OPENMPI);
        CU_ASSERT_STRING_EQUAL(v, "5.0.8");
        g_free(v);
        osu_free(t);
    }
    const char *body = "# OSU MPI Allreduce Latency Test v7.3\n# Size       Avg Latency(us)\n4 1.0\n";
    static const struct {
        const char *head;
        int ranks, nodes, ppn, lib;
    } cases[] = {
        {"# command: srun -n 64 -N 2 osu_allreduce\n# mpi: MPICH 4.2.1\n", 64, 2, 32, MPI_LIB_MPICH},
        {"# command: mpirun -np 8 --map-by ppr:4:node osu_allreduce\n# mpi: Intel(R) MPI Library 2021.9\n", 8, 2, 4,
         MPI_LIB_MPICH},
        {"# command: srun -n 64 -N 2 osu_allreduce\n# mpi: cray-mpich 8.1.32\n", 64, 2, 32, MPI_LIB_CRAY_MPICH},
        {"# notes: nothing about the job\n", 0, 0, 0, -1},
        /* the output's own launcher lines where the headers say nothing ("=" and attached values) */
        {"$ srun -N2 --ntasks-per-node=4 --mpi=pmi2 ./collective/osu_allreduce\n", 8, 2, 4, -1},
        /* ... where they disagree with each other, nothing of what they disagree on (Open MPI's -N is per node) */
        {"mpirun --hostfile h -N 2 -np 2 -map-by ppr:1:node osu_allreduce\n", 2, 0, 0, -1},
        /* ... and never over a header */
        {"# hardware: 4 nodes\n$ srun -N2 -n 8 osu_allreduce\n", 8, 4, 2, -1},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        char *text = g_strconcat(cases[i].head, body, NULL);
        OsuTrace *t = osu_parse("t.txt", text, NULL);
        CU_ASSERT_PTR_NOT_NULL_FATAL(t);
        int r = -1, n = -1, q = -1;
        CU_ASSERT_TRUE(osu_layout(t, &r, &n, &q, NULL));
        CU_ASSERT_EQUAL(r, cases[i].ranks);
        CU_ASSERT_EQUAL(n, cases[i].nodes);
        CU_ASSERT_EQUAL(q, cases[i].ppn);
        char *v = NULL;
        CU_ASSERT_EQUAL(osu_mpi_library(t, &v), cases[i].lib);
        if (i == 1)
            CU_ASSERT_STRING_EQUAL(v, "Intel MPI 2021.9");
        g_free(v);
        osu_free(t);
        g_free(text);
    }
    /* headers that disagree are bad input */
    char *text = g_strconcat("# hardware: 4 nodes\n# command: mpirun -n 144 -N 32 osu_allreduce\n", body, NULL);
    OsuTrace *t = osu_parse("t.txt", text, NULL);
    GError *err = NULL;
    int r, n, q;
    CU_ASSERT_FALSE(osu_layout(t, &r, &n, &q, &err));
    CU_ASSERT_TRUE(err && err->code == SIM_ERROR_INPUT && strstr(err->message, "144 ranks, 4 nodes and 32"));
    g_clear_error(&err);
    osu_free(t);
    g_free(text);
}

/* ---------------- the real runs ---------------- */

static ValidateErrors validated(const char *file) { return validated_on(OCI, 0, 0, file); }

/* Issue 11's targets: at most 20% from 1 MiB, 30% below.  The all-to-all
 * below 1 MiB misses that (its sizes from 8 B to 2 KiB per peer, 10
 * iterations each, measure 36-580 us where the model's messages take
 * 15-20 us), so it is held where it stands, not at the target.  Nothing
 * public explains those sizes: Open MPI 5.0.8 runs tuned there (v5.0.x has
 * no han all-to-all; the OCI build's configure names no hcoll, and
 * coll/ucc is off by default in 5.0.x), the run is
 * not monotonic (114 us at 64 B, 88 us at 128 B; 584 us at 2 KiB, 58 us at
 * 4 KiB), and the same tutorial's 10-iteration allreduce shows
 * millisecond spikes at mid sizes (3.2 ms at 32 KiB between 0.35 and
 * 0.16 ms); the published Alps all-to-all runs (OSU defaults, many
 * iterations) are smooth and held at the target (tests/cli_mpi.sh). */
static void test_osu_bounds(void)
{
    ValidateErrors ar = validated("osu_allreduce_oci-bm-optimized3.36_4node144proc_rocev2-100g_ocitutorials.txt");
    CU_ASSERT_TRUE(ar.median_large <= 20 && ar.median_small <= 30);
    ValidateErrors a2a = validated("osu_alltoall_oci-bm-optimized3.36_1node36proc_ocitutorials.txt");
    CU_ASSERT_TRUE(a2a.median_large <= 20 && a2a.median_small <= 55);
    ValidateErrors lat = validated("osu_latency_oci-bm-optimized3.36_2node.txt");
    CU_ASSERT_TRUE(lat.max <= 10);
    ValidateErrors bw = validated("osu_bw_oci-bm-optimized3.36_2node.txt");
    CU_ASSERT_TRUE(bw.max <= 5);
}

/* An independent check, nothing chosen with it in view: EPCC Cirrus, 2 x 288
 * ranks (AMD EPYC 9825) on Slingshot 11, Cray MPICH 8.1.32 predicted with
 * MPICH's selection.  From 1 MiB (one size: composition beta, Rabenseifner
 * over every rank) within the target; below it within the target too, now
 * that release_gather's parents wait on their children one by one (a
 * shared-memory line per child per level, MPICH's release_gather.h), but
 * 46-56% fast at 4-8 KiB and 52-60% at 64-256 KiB, where Cray MPICH's own
 * node-level algorithms and switch points are not MPICH's. */
/* Independent checks on another fabric: CSCS Alps GH200 nodes over
 * Slingshot-11 (open-source libfabric CXI), one rank per node, host
 * buffers, with the CXI transport of models/presets/mpi.json (per-message
 * software, the low-latency command up to 96 bytes, the rendezvous past
 * 4097; tests/test_cxi.c).  osu_latency within the targets; osu_bw's small
 * windows 36% fast: that 5.0.8rc1 build paid 1.07 us per message where the
 * GA build the transport was fitted on pays 0.68. */
static void test_osu_alps(void)
{
    ValidateErrors lat =
        validated_on("gh200-slingshot", 0, 2, "osu_latency_gh200-alps-clariden_2node_slingshot11-cxi_mpich-4.2.1_cscs-cray-network-stack.txt");
    CU_ASSERT_TRUE(lat.median_large <= 20 && lat.median_small <= 20);
    ValidateErrors bw = validated_on(
        "gh200-slingshot", 0, 2, "osu_bw_gh200-alps-clariden_2node_host_slingshot11-cxi_openmpi-5.0.8_cscs-cray-network-stack.txt");
    CU_ASSERT_TRUE(bw.median_large <= 10 && bw.median_small <= 40);
}

/* HPE Cray MPICH: MPICH's selection with the defaults a cray-mpich 8.1.17
 * job prints (models/presets/mpi.json "cray-mpich"): the SMP-aware allreduce
 * up to 256 KiB where open MPICH stops at 32 KiB, and the CXI rendezvous
 * threshold the library sets, 16384 + the provider's 2049-byte smallest Get,
 * under any libfabric version; named by a file name or --mpi-library. */
static void test_cray_mpich(void)
{
    GError *err = NULL;
    TopoOptions o = {.nodes = 2};
    Topo *t = topo_load("cirrus-ex4000", &o, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    MpiModel *cray = model(t, 2, 288, MPI_LIB_CRAY_MPICH), *mpich = model(t, 2, 288, MPI_LIB_MPICH);
    CU_ASSERT_STRING_EQUAL(cost(cray, COLL_ALLREDUCE, 262144).algo, "composition_alpha(reduce_scatter_allgather)");
    CU_ASSERT_STRING_EQUAL(cost(cray, COLL_ALLREDUCE, 524288).algo, "composition_beta(reduce_scatter_allgather)");
    CU_ASSERT_STRING_EQUAL(cost(mpich, COLL_ALLREDUCE, 65536).algo, "composition_beta(reduce_scatter_allgather)");
    CU_ASSERT_DOUBLE_EQUAL(mpi_model_platform(cray)->net_eager, 16384 + 2049, 0);
    CU_ASSERT_DOUBLE_EQUAL(mpi_model_platform(mpich)->net_eager, 2048 + 2049, 0);
    CU_ASSERT_TRUE(mpi_model_set_libfabric_version(cray, "1.22.0"));
    CU_ASSERT_DOUBLE_EQUAL(mpi_model_platform(cray)->net_eager, 16384 + 2049, 0);
    CU_ASSERT_EQUAL(mpi_lib_parse("Cray-MPICH"), MPI_LIB_CRAY_MPICH);
    CU_ASSERT_STRING_EQUAL(mpi_lib_name(MPI_LIB_CRAY_MPICH), "cray-mpich");
    /* made-up names (split so that cli_standalone does not look for them in tests/data/traces) */
    CU_ASSERT_EQUAL(osu_mpi_library_in_name("x/osu_bw_a_cray-mpich-8.1.32_b" ".txt"), MPI_LIB_CRAY_MPICH);
    CU_ASSERT_EQUAL(osu_mpi_library_in_name("osu_bw_a_mpich-4.2.1_cscs-cray-network-stack" ".txt"), MPI_LIB_MPICH);
    mpi_model_free(cray);
    mpi_model_free(mpich);
    topo_free(t);
}

static void test_osu_cirrus(void)
{
    ValidateErrors e = validated_on("cirrus-ex4000", 576, 2,
                                    "osu_allreduce_cirrus-ex4000_2node576proc_slingshot11_cray-mpich-8.1.32_epcc-docs.txt");
    CU_ASSERT_TRUE(e.median_large <= 20 && e.median_small <= 30);
}

/* Held out (s25): a CPU cluster the model had not seen, from its own
 * hardware page only: Sigma2 Betzy, 2 x EPYC 7742 and one HDR100 ConnectX-6
 * port per node (topologies/presets/betzy-epyc7742.json), osu_bibw of HPC-X
 * 2.7 (Open MPI 4.0, UCX 1.9) from openucx/ucx issue #7245.  1.7% from
 * 1 MiB (the line rate), 11.0% below; misses 256 B-8 KiB (42-62% fast:
 * UCX's eager copy and rendezvous steps on InfiniBand are not modelled).
 * Guards, not fits: today's figures plus a small margin. */
static void test_osu_betzy(void)
{
    ValidateErrors e = validated_on("betzy-epyc7742", 0, 2, "osu_bibw_betzy-epyc7742_2node_hdr100-ib_hpcx-2.7-ucx-1.9_ucx-issue7245.txt");
    CU_ASSERT_TRUE(e.median_large <= 3 && e.median_small <= 13);
}

static const TestCase tests[] = {
    {"openmpi_selection", test_openmpi_selection},
    {"openmpi_alltoall_sizes", test_openmpi_alltoall_sizes},
    {"mpich_selection", test_mpich_selection},
    {"openmpi_allgather_reducescatter", test_openmpi_allgather_reducescatter},
    {"shm_protocols", test_shm_protocols},
    {"cache_residency", test_cache_residency},
    {"p2p_hockney", test_p2p_hockney},
    {"nics", test_nics},
    {"contention", test_contention},
    {"many_ranks_per_node", test_many_ranks_per_node},
    {"fitted_params", test_fitted_params},
    {"bad_params", test_bad_params},
    {"osu_layout", test_osu_layout},
    {"osu_bounds", test_osu_bounds},
    {"cray_mpich", test_cray_mpich},
    {"osu_cirrus", test_osu_cirrus},
    {"osu_alps", test_osu_alps},
    {"osu_betzy", test_osu_betzy},
};

TEST_MAIN("mpi", tests)
