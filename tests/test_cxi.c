/* MPI point-to-point over HPE Slingshot-11 (libfabric's CXI provider): the
 * transport the MPI model reads off the topology's NICs
 * (models/presets/mpi.json "transports.cxi"), its steps as the provider and
 * the NIC take them (the payload riding with a low-latency command up to 96
 * bytes, the rendezvous past 4097), windows that pipeline each message's
 * software with the NIC's DMA, and the public OSU runs on Slingshot held to
 * their bounds: the runs the per-message cost was fitted on (Santis' two on
 * Grace, Olivia's osu_bibw on Zen 5c), the others independent. */
#include "mpi_model.h"
#include "validate.h"
#include "test_main.h"
#include "test_validated.h"

#include <math.h>


static Topo *topo(const char *name, int nodes)
{
    GError *err = NULL;
    TopoOptions o = {.nodes = nodes};
    Topo *t = topo_load(name, &o, &err);
    CU_ASSERT_PTR_NULL(err);
    g_clear_error(&err);
    return t;
}

static MpiModel *pair(const Topo *t)
{
    GError *err = NULL;
    MpiModel *m = mpi_model_new(t, 2, 1, MPI_LIB_OPENMPI, NULL, &err);
    CU_ASSERT_PTR_NULL(err);
    g_clear_error(&err);
    return m;
}

/* What the model reads: the CXI block for gh200-slingshot's NICs (and the
 * sender's PCIe link, 0.3 us, read twice by the NIC), its per-message cost
 * by the host (Grace's, x86's on Olivia and where the topology says none),
 * nothing for RoCE. */
static void test_transport(void)
{
    Topo *t = topo("gh200-slingshot", 2), *r = topo("oci-bm-optimized3.36", 2), *x = topo("olivia-cpu", 2),
         *c = topo("cirrus-ex4000", 2);
    MpiModel *m = pair(t), *o = pair(r), *ol = pair(x), *ci = pair(c);
    const MpiPlatform *p = mpi_model_platform(m), *q = mpi_model_platform(o);
    CU_ASSERT_DOUBLE_EQUAL(p->net_overhead, 0.5e-6, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(mpi_model_platform(ol)->net_overhead, 0.18e-6, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(mpi_model_platform(ci)->net_overhead, 0.18e-6, 1e-12);
    mpi_model_free(ol);
    mpi_model_free(ci);
    topo_free(x);
    topo_free(c);
    CU_ASSERT_DOUBLE_EQUAL(p->net_eager, 2048 + 2049, 0);
    CU_ASSERT_DOUBLE_EQUAL(p->net_ll_payload, 96, 0);
    CU_ASSERT_DOUBLE_EQUAL(p->net_host_read, 2 * 0.3e-6, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(p->net_rndv_trips, 1, 0);
    CU_ASSERT_DOUBLE_EQUAL(p->net_rndv_events, 2, 0);
    CU_ASSERT_DOUBLE_EQUAL(q->net_overhead, 0, 0);
    CU_ASSERT_TRUE(isinf(q->net_eager) && isinf(q->net_ll_payload));
    mpi_model_free(m);
    mpi_model_free(o);
    topo_free(t);
    topo_free(r);
}

/* osu_latency's steps: a byte more past 96 adds the NIC's read of the host,
 * a byte more past 4097 the rendezvous (a round trip of the path and two
 * completion events); elsewhere a byte costs a byte. */
static void test_latency_steps(void)
{
    Topo *t = topo("gh200-slingshot", 2);
    MpiModel *m = pair(t);
    const MpiPlatform *p = mpi_model_platform(m);
    double byte = 1 / p->bw_net;
    CU_ASSERT_DOUBLE_EQUAL(mpi_p2p_time(m, 1, 1), p->lat_net + p->overhead + 2 * p->net_overhead + byte, 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(mpi_p2p_time(m, 96, 1) - mpi_p2p_time(m, 95, 1), byte, 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(mpi_p2p_time(m, 97, 1) - mpi_p2p_time(m, 96, 1), p->net_host_read + byte, 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(mpi_p2p_time(m, 4097, 1) - mpi_p2p_time(m, 4096, 1), byte, 1e-15);
    double rndv = 2 * p->lat_net + 2 * p->net_overhead;
    CU_ASSERT_DOUBLE_EQUAL(mpi_p2p_time(m, 4098, 1) - mpi_p2p_time(m, 4097, 1), rndv + byte, 1e-15);
    printf("\n  gh200-slingshot one-way: 1 B %.2f us, 97 B %.2f us, 4098 B %.2f us", mpi_p2p_time(m, 1, 1) * 1e6,
           mpi_p2p_time(m, 97, 1) * 1e6, mpi_p2p_time(m, 4098, 1) * 1e6);
    mpi_model_free(m);
    topo_free(t);
}

/* osu_bw / osu_bibw windows: small messages cost the per-message software
 * (the library's and CXI's) each, large ones the wire each (the NIC's DMA
 * overlaps the core's next send); the rendezvous' round trip is paid once;
 * a bidirectional window doubles the software, not the wire. */
static void test_windows(void)
{
    Topo *t = topo("gh200-slingshot", 2);
    MpiModel *m = pair(t);
    const MpiPlatform *p = mpi_model_platform(m);
    double soft = p->overhead + p->net_overhead;
    double one = mpi_p2p_time(m, 1, 1), w1 = mpi_p2p_time(m, 1, 64);
    CU_ASSERT_DOUBLE_EQUAL(w1 - one, 63 * soft, 1e-15);
    double big = 1 << 20, wire = big / p->bw_net;
    CU_ASSERT_DOUBLE_EQUAL(mpi_p2p_time(m, big, 64) - mpi_p2p_time(m, big, 1), 63 * wire, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(mpi_p2p_bidir_time(m, 1, 64) - w1, 64 * soft, 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(mpi_p2p_bidir_time(m, big, 64) - mpi_p2p_time(m, big, 64), soft, 1e-12);
    /* a window's messages overlap their Gets: less than 64 rendezvous */
    CU_ASSERT_TRUE(mpi_p2p_time(m, 8192, 64) < mpi_p2p_time(m, 8192, 1) + 63 * (soft + 8192 / p->bw_net) + 1e-12);
    mpi_model_free(m);
    topo_free(t);
}

#define ALPS(f) validated_on("gh200-slingshot", 0, 2, f)

/* The fit: Santis' Open MPI 5.0.8 osu_bw and osu_bibw gave the per-message
 * cost (0.497 and 0.505 us at 1 byte); both whole curves follow it. */
static void test_fitted_runs(void)
{
    ValidateErrors bw = ALPS("osu_bw_gh200-alps-santis_2node_host_slingshot11-cxi_openmpi-5.0.8_cscs-cray-network-stack.txt");
    CU_ASSERT_TRUE(bw.median_large <= 10 && bw.median_small <= 5);
    ValidateErrors bibw =
        ALPS("osu_bibw_gh200-alps-santis_2node_host_slingshot11-cxi_openmpi-5.0.8_cscs-cray-network-stack.txt");
    CU_ASSERT_TRUE(bibw.median_large <= 10 && bibw.median_small <= 5);
}

/* Independent: the two osu_latency runs (MPICH 4.2.1; Open MPI 5.0.7) meet
 * issue 11's targets; the May 2025 osu_bw (Open MPI 5.0.8rc1) paid 1.07 us
 * per message against the 0.65 fitted on Santis' libfabric 2.1 image, as
 * every Clariden window run does, GA builds and MPICH alike (below), so
 * its small windows stay ~36% above the model: held where it stands. */
static void test_independent_runs(void)
{
    ValidateErrors mpich =
        ALPS("osu_latency_gh200-alps-clariden_2node_slingshot11-cxi_mpich-4.2.1_cscs-cray-network-stack.txt");
    CU_ASSERT_TRUE(mpich.median_large <= 20 && mpich.median_small <= 20);
    ValidateErrors ompi =
        ALPS("osu_latency_gh200-alps-clariden_2node_host_slingshot11-cxi_openmpi-5.0.7_cscs-cray-network-stack.txt");
    CU_ASSERT_TRUE(ompi.median_large <= 20 && ompi.median_small <= 25);
    ValidateErrors rc1 =
        ALPS("osu_bw_gh200-alps-clariden_2node_host_slingshot11-cxi_openmpi-5.0.8_cscs-cray-network-stack.txt");
    CU_ASSERT_TRUE(rc1.median_large <= 10 && rc1.median_small <= 40);
}

/* Held out (cscs-docs' container pages): the Clariden osu_bibw runs of the
 * GA builds, Open MPI 5.0.8 and MPICH 4.3.1 on the host's CXI stack with
 * libfabric 1.22, within 10% from 1 MiB; below it both pay about 1.05 us
 * per message and end (1 byte: 0.93 and 1.03 MB/s, Santis' libfabric 2.1
 * image 1.49), as the Clariden osu_bw runs do, against the 0.65 fitted on
 * Santis: 31-35% there, held where they stand.  One node, two ranks: MPICH's
 * osu_bw is the run the core copy rate was read off (a fit, within 5% from
 * 1 MiB); Open MPI's ran at the NIC's rate (pml cm on one node: this
 * cluster gives single-node jobs Slingshot), which the model, taking
 * shared memory there, misses by 84%: a regression guard, not a goal. */
static void test_clariden_docs_runs(void)
{
    const char *bibw[] = {"osu_bibw_gh200-alps-clariden_2node_host_slingshot11-cxi-hook_openmpi-5.0.8_cscs-docs.txt",
                          "osu_bibw_gh200-alps-clariden_2node_host_slingshot11-cxi-hook_mpich-4.3.1_cscs-docs.txt"};
    for (size_t i = 0; i < G_N_ELEMENTS(bibw); i++) {
        ValidateErrors e = ALPS(bibw[i]);
        CU_ASSERT_TRUE(e.median_large <= 10 && e.median_small <= 40);
    }
    ValidateErrors shm =
        validated_on("gh200-slingshot", 2, 1, "osu_bw_gh200-alps-clariden_1node2proc_host_shm_mpich-4.3.1_cscs-docs.txt");
    CU_ASSERT_TRUE(shm.median_large <= 5 && shm.median_small <= 6); /* the fit of core_copy_bandwidth and shm_message_overhead */
    /* Open MPI's pml cm on one node: the pair through the NICs, as on two
     * nodes (83.9% from 1 MiB while the model took shared memory). Guards,
     * not fits: today's figures plus a small margin. The Santis run is
     * held out (s24); below 1 MiB both pay more per message than the
     * two-node Santis fit (1.05 and 1.14 us against 0.65). */
    ValidateErrors cm = validated_on("gh200-slingshot", 2, 1,
                                     "osu_bw_gh200-alps-clariden_1node2proc_host_slingshot11-cxi-hook_openmpi-5.0.8_cscs-docs.txt");
    ValidateErrors santis = validated_on(
        "gh200-slingshot", 2, 1, "osu_bw_gh200-alps-santis_1node2proc_host_slingshot11-cxi_openmpi-5.0.8_cscs-cray-network-stack.txt");
    printf("\n  one node, pml cm: Clariden %.1f%% / %.1f%%, Santis (held out) %.1f%% / %.1f%% (from 1 MiB / below)",
           cm.median_large, cm.median_small, santis.median_large, santis.median_small);
    CU_ASSERT_TRUE(cm.median_large <= 5 && cm.median_small <= 36);
    CU_ASSERT_TRUE(santis.median_large <= 5 && santis.median_small <= 42);
}

/* Held out (s24): three more CSCS MPICH osu_bw runs on GH200 nodes, none
 * seen before the model was set. The two-node ones land where the Clariden
 * runs do (the wire from 1 MiB; below, the per message cost: 1.03 us on
 * cscs-docs' MPICH page, 0.83 us under MPICH 4.1 / OSU 6.2). The one-node
 * run's 0.83 us per message checks the 0.77 us fitted on the CMA run
 * (models/presets/mpi.json shm_message_overhead: 13.0% below 1 MiB, 80.6%
 * with the library's 0.15 us alone); from 1 MiB a known miss, xpmem's single
 * copy (60 GB/s at 256 KiB) against the CMA copy the model takes. Guards,
 * not fits: today's figures plus a small margin. */
static void test_cscs_mpich_held_out(void)
{
    ValidateErrors page = ALPS("osu_bw_gh200-alps_2node_host_slingshot11-cxi-hook_mpich-4.3.1_cscs-docs-mpich-page.txt");
    CU_ASSERT_TRUE(page.median_large <= 5 && page.median_small <= 35);
    ValidateErrors hook =
        ALPS("osu_bw_gh200-alps_2node_host_slingshot11-cxi-hook_mpich-4.1_osu-6.2_cscs-docs-resource-hook.txt");
    CU_ASSERT_TRUE(hook.median_large <= 5 && hook.median_small <= 20);
    ValidateErrors shm =
        validated_on("gh200-slingshot", 2, 1, "osu_bw_gh200-alps_1node2proc_host_xpmem_mpich-4.3.1_cscs-docs-mpich-page.txt");
    CU_ASSERT_TRUE(shm.median_large <= 125 && shm.median_small <= 16);
}

/* Independent: the Alps 8-rank all-to-all runs on the default transport.
 * Open MPI's run pml cm (every message through the NICs, each rank its
 * own): issue 11's 30% below 1 MiB met (35.6% and 35.4% while node-local
 * messages went through shared memory); from 1 MiB still about 1.5x
 * faster than measured (about 14 GB/s per rank's NIC against osu_bw's 24).
 * MPICH's use shared memory inside a node, at a Grace core's copy rate
 * (13.1 GB/s, fitted on CSCS's intra-node osu_bw, not on these runs: from
 * 1 MiB 76.5% -> 66.6%); below 1 MiB held where they stand. */
static void test_alltoall_runs(void)
{
    const char *ompi[] = {
        "osu_alltoall_gh200-alps-clariden_2node8proc_host_slingshot11-cxi_openmpi-5.0.8_cscs-cray-network-stack.txt",
        "osu_alltoall_gh200-alps-clariden_2node8proc_host_slingshot11-cxi-hook_openmpi-5.0.8_cscs-docs.txt"};
    for (size_t i = 0; i < G_N_ELEMENTS(ompi); i++) {
        ValidateErrors e = validated_on("gh200-slingshot", 8, 2, ompi[i]);
        CU_ASSERT_TRUE(e.median_small <= 15 && e.median_large <= 40);
    }
    ValidateErrors mpich =
        validated_on("gh200-slingshot", 8, 2, "osu_alltoall_gh200-alps-clariden_2node8proc_slingshot11-cxi_mpich-4.2.1_cscs-cray-network-stack.txt");
    CU_ASSERT_TRUE(mpich.median_small <= 40 && mpich.median_large <= 70);
}

#define OLIVIA(f) validated_on("olivia-cpu", 0, 2, f)

/* x86: Olivia's osu_bibw gave the per-message cost on Zen 5c (0.184 us);
 * its osu_latency: 1.65 us where the model gives 2.11 (the presets' link
 * latencies are assumed, not measured); its libfabric 2.x (the topology's
 * "libfabric_version" 2.2, an assumption that run agrees with) starts the
 * rendezvous at 16 KiB + 2049: below 1 MiB 27.7% with 4097 B, 25.5%. */
static void test_x86_runs(void)
{
    ValidateErrors bibw = OLIVIA("osu_bibw_olivia-cpu-epyc9745_2node_host_slingshot11-cxi_openmpi-5_eessi-blog.txt");
    CU_ASSERT_TRUE(bibw.median_large <= 10 && bibw.median_small <= 5);
    ValidateErrors lat = OLIVIA("osu_latency_olivia-cpu-epyc9745_2node_host_slingshot11-cxi_openmpi-5_eessi-blog.txt");
    CU_ASSERT_TRUE(lat.median_large <= 10 && lat.median_small <= 26);
}

/* calibrate can fit the transport's per-message cost: the last MPI
 * parameter, read and replaced like the others. */
static void test_calibrated_overhead(void)
{
    Topo *t = topo("gh200-slingshot", 2);
    MpiModel *m = pair(t);
    int k = MPI_NUM_PARAMS - 1;
    CU_ASSERT_STRING_EQUAL(mpi_param_key(k), "mpi.net_message_overhead");
    CU_ASSERT_DOUBLE_EQUAL(mpi_model_param(m, k), 0.5e-6, 1e-12);
    double before = mpi_p2p_time(m, 1, 64);
    CU_ASSERT_TRUE(mpi_model_set_param(m, k, 1e-6));
    CU_ASSERT_DOUBLE_EQUAL(mpi_p2p_time(m, 1, 64) - before, 65 * 0.5e-6, 1e-12); /* 64 sends and one receive */
    mpi_model_free(m);
    topo_free(t);
}

static MpiModel *model(const Topo *t, int nodes, int ppn, MpiLib lib)
{
    GError *err = NULL;
    MpiModel *m = mpi_model_new(t, nodes, ppn, lib, NULL, &err);
    CU_ASSERT_PTR_NULL(err);
    g_clear_error(&err);
    return m;
}

/* The time `op` of `bytes` gains when the transport's per-message cost
 * grows by `d`, in units of d. */
static double soft_share(MpiModel *m, CollOp op, double bytes, double d)
{
    int k = MPI_NUM_PARAMS - 1;
    double o = mpi_model_param(m, k);
    MpiCost a = {0}, b = {0};
    CU_ASSERT_TRUE(mpi_cost(m, op, bytes, &a));
    CU_ASSERT_TRUE(mpi_model_set_param(m, k, o + d));
    CU_ASSERT_TRUE(mpi_cost(m, op, bytes, &b));
    CU_ASSERT_TRUE(mpi_model_set_param(m, k, o));
    return (b.time_s - a.time_s) / d;
}

/* All-to-all messages cost what the same messages cost point to point:
 * between two nodes of one rank each, MPICH's scattered all-to-all is one
 * exchange, osu_bibw's window of one, at every transport step (the command
 * payload, the host read, the rendezvous), and so is its pairwise exchange
 * besides the copy of its own block; on 8 ranks over 2 nodes Open MPI's
 * linear all-to-all (pml cm, the ofi MTL: every message through the NICs)
 * pays CXI's software at both ends of each of a rank's 7 messages, and
 * one receive in the latency; under ob1 only the 4 off the node do. */
static void test_alltoall_transport(void)
{
    Topo *t = topo("gh200-slingshot", 2);
    GError *err = NULL;
    MpiModel *m = mpi_model_new(t, 2, 1, MPI_LIB_MPICH, NULL, &err);
    CU_ASSERT_PTR_NULL(err);
    g_clear_error(&err);
    const MpiPlatform *p = mpi_model_platform(m);
    MpiCost c = {0};
    for (double pp = 8; pp <= 32768; pp *= 4) {
        CU_ASSERT_TRUE(mpi_cost(m, COLL_ALLTOALL, 2 * pp, &c));
        CU_ASSERT_STRING_EQUAL(c.algo, "mpir:scattered");
        CU_ASSERT_DOUBLE_EQUAL(c.time_s, mpi_p2p_bidir_time(m, pp, 1), 1e-15);
    }
    CU_ASSERT_TRUE(mpi_cost(m, COLL_ALLTOALL, 2 * 65536.0, &c));
    CU_ASSERT_STRING_EQUAL(c.algo, "mpir:pairwise");
    CU_ASSERT_DOUBLE_EQUAL(c.time_s, mpi_p2p_bidir_time(m, 65536, 1) + 65536 / p->bw_core, 1e-12);
    mpi_model_free(m);
    MpiModel *o = model(t, 2, 4, MPI_LIB_OPENMPI);
    CU_ASSERT_TRUE(mpi_model_platform(o)->pml_cm);
    CU_ASSERT_TRUE(mpi_cost(o, COLL_ALLTOALL, 8 * 8.0, &c));
    CU_ASSERT_STRING_EQUAL(c.algo, "tuned:linear_sync");
    CU_ASSERT_DOUBLE_EQUAL(soft_share(o, COLL_ALLTOALL, 64, 1e-7), 2 * 7 + 1, 1e-6);
    CU_ASSERT_TRUE(mpi_model_set_pml(o, "ob1"));
    CU_ASSERT_FALSE(mpi_model_platform(o)->pml_cm);
    CU_ASSERT_DOUBLE_EQUAL(soft_share(o, COLL_ALLTOALL, 64, 1e-7), 2 * 4 + 1, 1e-6);
    mpi_model_free(o);
    topo_free(t);
}

/* The eager limit by libfabric version: CXI's rendezvous threshold is
 * 2048 up to libfabric 2.1 and 16384 from 2.2 (+ the 2049-byte smallest
 * Get); Olivia's topology says 2.2, so its osu_latency steps past 18433
 * bytes, not 4097; a version given later wins; a bad one is refused and
 * changes nothing; without a transport there is no limit to move. */
static void test_libfabric_versions(void)
{
    Topo *t = topo("olivia-cpu", 2), *g = topo("gh200-slingshot", 2), *r = topo("oci-bm-optimized3.36", 2);
    MpiModel *m = pair(t), *a = pair(g), *o = pair(r);
    const MpiPlatform *p = mpi_model_platform(m);
    CU_ASSERT_STRING_EQUAL(topo_libfabric_version(t), "2.2");
    CU_ASSERT_PTR_NULL(topo_libfabric_version(g));
    CU_ASSERT_EQUAL(p->libfabric_version, 20200);
    CU_ASSERT_DOUBLE_EQUAL(p->net_eager, 16384 + 2049, 0);
    CU_ASSERT_DOUBLE_EQUAL(mpi_model_platform(a)->net_eager, 2048 + 2049, 0);
    double byte = 1 / p->bw_net, rndv = 2 * p->lat_net + 2 * p->net_overhead;
    CU_ASSERT_DOUBLE_EQUAL(mpi_p2p_time(m, 8192, 1) - mpi_p2p_time(m, 8191, 1), byte, 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(mpi_p2p_time(m, 18434, 1) - mpi_p2p_time(m, 18433, 1), rndv + byte, 1e-15);
    CU_ASSERT_TRUE(mpi_model_set_libfabric_version(m, "2.1.0"));
    CU_ASSERT_DOUBLE_EQUAL(p->net_eager, 4097, 0);
    CU_ASSERT_TRUE(mpi_model_set_libfabric_version(m, "1.22.0"));
    CU_ASSERT_DOUBLE_EQUAL(p->net_eager, 4097, 0);
    CU_ASSERT_TRUE(mpi_model_set_libfabric_version(a, "v2.4.0"));
    CU_ASSERT_DOUBLE_EQUAL(mpi_model_platform(a)->net_eager, 18433, 0);
    CU_ASSERT_FALSE(mpi_model_set_libfabric_version(a, "two"));
    CU_ASSERT_FALSE(mpi_model_set_libfabric_version(a, NULL));
    CU_ASSERT_DOUBLE_EQUAL(mpi_model_platform(a)->net_eager, 18433, 0);
    CU_ASSERT_TRUE(mpi_model_set_libfabric_version(o, "2.2"));
    CU_ASSERT_TRUE(isinf(mpi_model_platform(o)->net_eager));
    mpi_model_free(m);
    mpi_model_free(a);
    mpi_model_free(o);
    topo_free(t);
    topo_free(g);
    topo_free(r);
}

/* The roots of han's pipelined trees and the linear scatter pay the
 * transport's software per network message as point-to-point does: on 2
 * nodes of 1 rank a second 64 KiB segment of han's reduce or bcast costs
 * the leader's root one receive (or send) more, CXI's software included;
 * Open MPI's reduce_scatter of 4 bytes on 2 x 2 ranks under ob1 (a
 * linear reduce, then a linear scatter) pays it 3 times in the reduce and
 * 3 times in the scatter (2 sends under the window's pipeline, 1
 * receive's event in its latency). */
static void test_roots_transport(void)
{
    Topo *t = topo("gh200-slingshot", 2);
    MpiModel *m = model(t, 2, 1, MPI_LIB_OPENMPI);
    double d = 1e-7, seg = 65536;
    CU_ASSERT_DOUBLE_EQUAL(soft_share(m, COLL_REDUCE, 2 * seg, d) - soft_share(m, COLL_REDUCE, seg, d), 1, 1e-6);
    CU_ASSERT_DOUBLE_EQUAL(soft_share(m, COLL_BROADCAST, 2 * seg, d) - soft_share(m, COLL_BROADCAST, seg, d), 1, 1e-6);
    mpi_model_free(m);
    MpiModel *q = model(t, 2, 2, MPI_LIB_OPENMPI);
    CU_ASSERT_TRUE(mpi_model_set_pml(q, "ob1"));
    MpiCost c = {0};
    CU_ASSERT_TRUE(mpi_cost(q, COLL_REDUCESCATTER, 4, &c));
    CU_ASSERT_STRING_EQUAL(c.algo, "tuned:non-overlapping");
    CU_ASSERT_DOUBLE_EQUAL(soft_share(q, COLL_REDUCESCATTER, 4, d), 6, 1e-6);
    mpi_model_free(q);
    topo_free(t);
}

static const TestCase tests[] = {
    {"transport", test_transport},
    {"latency_steps", test_latency_steps},
    {"windows", test_windows},
    {"fitted_runs", test_fitted_runs},
    {"independent_runs", test_independent_runs},
    {"x86_runs", test_x86_runs},
    {"clariden_docs_runs", test_clariden_docs_runs},
    {"cscs_mpich_held_out", test_cscs_mpich_held_out},
    {"alltoall_runs", test_alltoall_runs},
    {"calibrated_overhead", test_calibrated_overhead},
    {"alltoall_transport", test_alltoall_transport},
    {"roots_transport", test_roots_transport},
    {"libfabric_versions", test_libfabric_versions},
};

TEST_MAIN("cxi", tests)
