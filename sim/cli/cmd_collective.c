/* "shardsim collective": options, then a table or one JSON object of a
 * collective's time and bandwidths over a range of sizes (the model side is
 * models/coll_sweep.c). */
#include "cli.h"
#include "coll_sweep.h"
#include "topo_place.h"
#include "cmd_collective_mpi.h"

#include <math.h>
#include <stdio.h>

static cJSON *row_json(const CollGroup *g, const CollSweepRow *r, bool flows)
{
    cJSON *o = cJSON_CreateObject();
    double p10, p90, widen;
    coll_band(g, r->bytes, r->cost.time_s, &p10, &p90, &widen);
    cJSON_AddNumberToObject(o, "size_bytes", r->bytes);
    cJSON_AddNumberToObject(o, "time_s", r->cost.time_s);
    cJSON_AddNumberToObject(o, "time_p10_s", p10);
    cJSON_AddNumberToObject(o, "time_p90_s", p90);
    cJSON_AddNumberToObject(o, "band_widened", widen);
    cJSON_AddNumberToObject(o, "algbw_Bps", r->algbw_Bps);
    cJSON_AddNumberToObject(o, "busbw_Bps", r->busbw_Bps);
    cJSON_AddStringToObject(o, "algo", coll_algo_name(r->cost.algo));
    cJSON_AddStringToObject(o, "proto", coll_proto_name(r->cost.proto));
    if (r->cost.fabric_factor > 1) /* only where the fabric above the NICs slowed it */
        cJSON_AddNumberToObject(o, "fabric_factor", r->cost.fabric_factor);
    else if (isnan(r->cost.fabric_factor))
        cJSON_AddBoolToObject(o, "fabric_not_routed", true);
    if (flows)
        cJSON_AddNumberToObject(o, "flow_time_s", r->flow_time_s);
    return o;
}

static void print_row(const CollGroup *g, const CollSweepRow *r, bool flows)
{
    double p10, p90, t = r->cost.time_s;
    coll_band(g, r->bytes, t, &p10, &p90, NULL);
    char range[32] = "-"; /* no time (one rank): no band */
    if (t > 0)
        g_snprintf(range, sizeof range, "-%.0f%%/+%.0f%%", (1 - p10 / t) * 100, (p90 / t - 1) * 100);
    printf("%14.0f %12.2f %11s %11.2f %11.2f %8s %7s", r->bytes, t * 1e6, range, r->algbw_Bps / 1e9,
           r->busbw_Bps / 1e9, coll_algo_name(r->cost.algo), coll_proto_name(r->cost.proto));
    if (flows)
        printf(" %10.2f", r->flow_time_s * 1e6);
    printf("\n");
}

/* Where the fabric above the NICs slowed a size (coll_group_set_fabric),
 * by how much, and where its flows were too many to route. */
static void print_fabric(const CollSweepRow *rows, guint nrows)
{
    char *note = nrows ? cli_fabric_note(&rows[0].cost.fabric_factor, nrows, sizeof rows[0]) : NULL;
    printf("%s%s\n", note ? "; " : "", note ? note : "");
    g_free(note);
}

static void print_header(const Topo *topo, const CollGroup *grp, CollOp op, bool flows, const char *placement,
                         const CollSweepRow *rows, guint nrows)
{
    int n = coll_group_size(grp), nn = coll_group_nodes(grp), nch = coll_group_channels(grp);
    printf("# %s on %s: %d rank%s on %d node%s", coll_op_name(op), topo_name(topo), n, n == 1 ? "" : "s", nn,
           nn == 1 ? "" : "s");
    if (placement)
        printf(" (placed %s)", placement);
    if (isfinite(coll_group_intra_bw(grp)))
        printf("; intra-node ring %.1f GB/s per rank (%d channel%s)", coll_group_intra_bw(grp) / 1e9, nch,
               nch == 1 ? "" : "s");
    if (isfinite(coll_group_inter_bw(grp)))
        printf("; %.1f GB/s per node between nodes", coll_group_inter_bw(grp) / 1e9);
    print_fabric(rows, nrows);
    printf("%14s %12s %11s %10s %10s %8s %7s%s\n", "size(B)", "time(us)", "p10/p90", "algbw(GB/s)", "busbw(GB/s)",
           "algo", "proto", flows ? "   flow(us)" : "");
}

#define CLI_MPI_MAX_RANK_SIZES 2e7 /* --library mpi: ranks x sizes, about a minute */

/* Every size computed before anything is printed, so that an error (an
 * algorithm that cannot run, a flow run too big for the simulator) never
 * leaves half a table; the exit status. */
static int compute_rows(const Topo *topo, const CollGroup *grp, CollOp op, CollAlgo algo, CollProto proto,
                        const GArray *sizes, bool flows, CollSweepRow *rows)
{
    int n = coll_group_size(grp);
    /* each size's flows are bounded (COLL_MAX_FLOWS), and so are all of
     * them together: thousands of sizes of a large group would each run */
    int64_t total = 0, most = 0;
    for (guint i = 0; flows && i < sizes->len; i++) {
        CollCost c;
        double bytes = g_array_index(sizes, double, i);
        int64_t k = coll_cost(grp, op, algo, proto, bytes, &c) ? coll_flow_count(grp, op, c.algo, c.proto, bytes) : 0;
        total += k;
        most = k > most ? k : most;
    }
    if (total > 4LL * COLL_MAX_FLOWS && most <= COLL_MAX_FLOWS) /* one size over its own limit: said below */
        return cli_usage_error("collective: --flows: %u sizes on %d ranks make %lld flows in all, more than %lld; "
                               "give fewer sizes (a larger --sizes factor) or drop --flows",
                               sizes->len, n, (long long)total, 4LL * COLL_MAX_FLOWS);
    for (guint i = 0; i < sizes->len; i++) {
        CollSweepRow *r = &rows[i];
        if (!coll_sweep_row(grp, op, algo, proto, g_array_index(sizes, double, i), flows, r))
            return cli_usage_error("collective: %s cannot run %s with protocol %s on %s", coll_algo_name(algo),
                                   coll_op_name(op), coll_proto_name(proto), topo_name(topo));
        if (flows && r->flow_count > COLL_MAX_FLOWS)
            return cli_usage_error("collective: --flows: %s %s on %d ranks is %lld flows, more than the simulator "
                                   "takes (%d); drop --flows or use fewer ranks",
                                   coll_algo_name(r->cost.algo), coll_op_name(op), n, (long long)r->flow_count,
                                   COLL_MAX_FLOWS);
        if (flows && !isfinite(r->flow_time_s))
            return cli_usage_error("collective: --flows: %s %s of %.0f bytes on %d ranks (%lld flows) did not finish "
                                   "within the flow simulator's work limit; drop --flows or use fewer ranks",
                                   coll_algo_name(r->cost.algo), coll_op_name(op), r->bytes, n,
                                   (long long)r->flow_count);
    }
    return 0;
}

/* The table, or one JSON object; the exit status. */
static int print_sweep(const Topo *topo, const CollGroup *grp, CollOp op, CollAlgo algo, CollProto proto,
                       const GArray *sizes, bool flows, bool json, const char *placement)
{
    CollSweepRow *r = g_new0(CollSweepRow, sizes->len);
    int rc = compute_rows(topo, grp, op, algo, proto, sizes, flows, r);
    if (rc != 0) {
        g_free(r);
        return rc;
    }
    cJSON *root = cJSON_CreateObject(), *rows = cJSON_CreateArray();
    cJSON_AddStringToObject(root, "topology", topo_name(topo));
    cJSON_AddStringToObject(root, "op", coll_op_name(op));
    cJSON_AddNumberToObject(root, "ranks", coll_group_size(grp));
    cJSON_AddNumberToObject(root, "nodes", coll_group_nodes(grp));
    if (placement)
        cJSON_AddStringToObject(root, "placement", placement);
    if (!json)
        print_header(topo, grp, op, flows, placement, r, sizes->len);
    for (guint i = 0; i < sizes->len; i++) {
        if (json)
            cJSON_AddItemToArray(rows, row_json(grp, &r[i], flows));
        else
            print_row(grp, &r[i], flows);
    }
    g_free(r);
    cJSON_AddItemToObject(root, "rows", rows);
    if (json)
        cli_print_json(root);
    else
        cJSON_Delete(root);
    return 0;
}

int cmd_collective(int argc, char **argv)
{
    char *topology = NULL, *op_s = NULL, *algo_s = NULL, *proto_s = NULL, *sizes_s = NULL, *params = NULL;
    char *ranks_s = NULL, *nodes_s = NULL, *place_s = NULL, *seed_s = NULL, *version_s = NULL, *nlib_s = NULL, *gpp_s = NULL,
         *library_s = NULL, *mpi_lib_s = NULL, *dtype_s = NULL;
    gboolean json = FALSE, flows = FALSE;
    int ranks = 0, nodes = 0, seed = 1, gpp = 1; /* 0: not given */
    TopoPlacement place = TOPO_PLACE_CONTIGUOUS;
    char *algo_help = g_strdup_printf("auto|%s (default auto)", coll_algo_choices()); /* the algorithm table's names */
    GOptionEntry entries[] = {
        {"topology", 't', 0, G_OPTION_ARG_FILENAME, &topology, "topology preset or JSON file", "PRESET|FILE"},
        {"nodes", 0, 0, G_OPTION_ARG_STRING, &nodes_s, "number of nodes, for topologies that scale", "N"},
        {"params", 0, 0, G_OPTION_ARG_FILENAME, &params,
         "collective-model parameters (default models/presets/collectives.json)", "FILE"},
        {"op", 0, 0, G_OPTION_ARG_STRING, &op_s,
         "allreduce|reducescatter|allgather|broadcast|reduce|alltoall (default allreduce)", "OP"},
        {"algo", 0, 0, G_OPTION_ARG_STRING, &algo_s, algo_help, "ALGO"},
        {"proto", 0, 0, G_OPTION_ARG_STRING, &proto_s, "auto|ll|ll128|simple (default auto)", "PROTO"},
        {"nccl-version", 0, 0, G_OPTION_ARG_STRING, &version_s,
         "NCCL version whose algorithms and tuner to model, e.g. 2.18.3 (default: the newest)", "X.Y[.Z]"},
        {"nccl-library", 0, 0, G_OPTION_ARG_STRING, &nlib_s,
         "whose tuner and constants: nccl, or rccl (AMD's fork) (default: rccl on AMD topologies, nccl on the others)",
         "nccl|rccl"},
        {"ranks", 'n', 0, G_OPTION_ARG_STRING, &ranks_s,
         "ranks taking part, spread evenly over the fewest nodes that hold them (the preset grows if it scales; default all)", "N"},
        {"placement", 0, 0, G_OPTION_ARG_STRING, &place_s,
         "where the ranks sit: " TOPO_PLACE_CHOICES " (default contiguous)", "POLICY"},
        {"placement-seed", 0, 0, G_OPTION_ARG_STRING, &seed_s, "seed of --placement scattered (default 1)", "N"},
        {"sizes", 's', 0, G_OPTION_ARG_STRING, &sizes_s, "MIN:MAX[:FACTOR] or a comma list (default 8B:8GiB)", "SIZES"},
        {"datatype", 0, 0, G_OPTION_ARG_STRING, &dtype_s,
         "the elements' type, as nccl-tests names it (int8, half, bfloat16, float, f8e4m3, ...): NVLS reduces only 16-, "
         "32- and 64-bit ones (default float)",
         "TYPE"},
        {"gpus-per-process", 0, 0, G_OPTION_ARG_STRING, &gpp_s,
         "GPUs one process (one thread) drives and launches on one after another, as nccl-tests -g N (default 1)",
         "N"},
        {"library", 0, 0, G_OPTION_ARG_STRING, &library_s, "nccl (default) or mpi: the MPI libraries' algorithms",
         "nccl|mpi"},
        {"mpi-library", 0, 0, G_OPTION_ARG_STRING, &mpi_lib_s, "with --library mpi: whose selection (default openmpi)",
         "openmpi|mpich|cray-mpich"},
        {"flows", 0, 0, G_OPTION_ARG_NONE, &flows, "also run each size on the flow-level network simulator", NULL},
        {"json", 0, 0, G_OPTION_ARG_NONE, &json, "print one JSON object", NULL},
        {NULL, 0, 0, 0, NULL, NULL, NULL},
    };
    GOptionContext *ctx = g_option_context_new("- time a collective over a range of sizes");
    g_option_context_add_main_entries(ctx, entries, NULL);
    int rc = 2;
    Topo *topo = NULL;
    CollGroup *grp = NULL;
    GArray *sizes = g_array_new(FALSE, FALSE, sizeof(double));
    if (!cli_parse_options(ctx, entries, &argc, &argv))
        goto out;
    if (argc > 1) {
        rc = cli_usage_error("collective: unexpected argument '%s'", SIM_ECHO(argv[1]));
        goto out;
    }
    if (!topology) {
        rc = cli_usage_error("collective: --topology is required (see --help)");
        goto out;
    }
    int op = op_s ? coll_op_parse(op_s) : COLL_ALLREDUCE;
    int algo = algo_s ? coll_algo_parse(algo_s) : COLL_ALGO_AUTO;
    int proto = proto_s ? coll_proto_parse(proto_s) : COLL_PROTO_AUTO;
    if (op < 0) {
        rc = cli_usage_error("collective: unknown --op '%s' (allreduce, reducescatter, allgather, broadcast, reduce, "
                             "alltoall)", SIM_ECHO(op_s));
        goto out;
    }
    if (algo == -2 || proto == -2) {
        rc = cli_usage_error("collective: unknown %s '%s'", algo == -2 ? "--algo" : "--proto",
                             SIM_ECHO(algo == -2 ? algo_s : proto_s));
        goto out;
    }
    int version = version_s ? coll_nccl_version_parse(version_s) : 0;
    if (version < 0 || (version_s && version == 0)) {
        rc = cli_usage_error("collective: bad --nccl-version '%s' (e.g. 2.18 or 2.18.3)", SIM_ECHO(version_s));
        goto out;
    }
    if (nlib_s && coll_library_parse(nlib_s) < 0) {
        rc = cli_usage_error("collective: unknown --nccl-library '%s' (nccl or rccl)", SIM_ECHO(nlib_s));
        goto out;
    }
    if (!coll_sweep_parse_sizes(sizes_s ? sizes_s : "8B:8GiB", sizes)) {
        rc = cli_usage_error("collective: bad --sizes '%s' (e.g. 8B:8GiB, 1M:1G:4 or 1K,1M: whole bytes between "
                             "1 B and 1 TiB, at most %d sizes)",
                             SIM_ECHO(sizes_s), COLL_SWEEP_MAX_SIZES);
        goto out;
    }
    if ((nodes_s && (rc = cli_parse_count("collective", "--nodes", nodes_s, 1, 1 << 20, &nodes)) != 0) ||
        (ranks_s && (rc = cli_parse_count("collective", "--ranks", ranks_s, 2, 1 << 22, &ranks)) != 0) ||
        (seed_s && (rc = cli_parse_count("collective", "--placement-seed", seed_s, 0, 1 << 30, &seed)) != 0) ||
        (gpp_s && (rc = cli_parse_count("collective", "--gpus-per-process", gpp_s, 1, 64, &gpp)) != 0))
        goto out;
    if (place_s && !topo_placement_parse(place_s, &place)) {
        rc = cli_usage_error("collective: unknown --placement '%s' (known: %s)", SIM_ECHO(place_s),
                             TOPO_PLACE_CHOICES);
        goto out;
    }
    if (seed_s && place != TOPO_PLACE_SCATTERED) { /* the only random placement */
        rc = cli_usage_error("collective: --placement-seed goes with --placement scattered");
        goto out;
    }
    rc = 2;
    GError *err = NULL;
    topo = coll_sweep_topo(topology, nodes, ranks, &err);
    if (!topo) {
        rc = cli_fail(err);
        goto out;
    }
    int total = topo_num_ranks(topo);
    if (ranks > total) {
        rc = cli_usage_error("collective: --ranks %d: topology %s has %d ranks", ranks, topo_name(topo), total);
        goto out;
    }
    int n = ranks ? ranks : total;
    if (n < 2) {
        rc = cli_usage_error("collective: topology %s has %d rank: a collective needs 2 or more", topo_name(topo), n);
        goto out;
    }
    int used;
    int *ids = coll_sweep_ranks(topo, n, &used);
    if (!ids) {
        rc = cli_usage_error("collective: --ranks %d cannot be spread evenly over %d nodes of %d ranks", n, used,
                             topo_ranks_per_node(topo));
        goto out;
    }
    bool mpi = library_s && g_ascii_strcasecmp(library_s, "mpi") == 0;
    if (library_s && !mpi && g_ascii_strcasecmp(library_s, "nccl") != 0) {
        g_free(ids);
        rc = cli_usage_error("collective: unknown --library '%s' (nccl or mpi)", SIM_ECHO(library_s));
        goto out;
    }
    if (mpi || mpi_lib_s) {
        g_free(ids);
        /* the libraries' algorithms step through the ranks: about 3.5 us
         * per rank and size on this project's machine (4.6 million ranks:
         * 16 s a size), so their product is bounded as --flows' flows are */
        double work = (double)n * sizes->len;
        rc = !mpi ? cli_usage_error("collective: --mpi-library goes with --library mpi")
             : algo_s || proto_s || flows
                 ? cli_usage_error("collective: --library mpi takes no --algo, --proto or --flows (the library selects)")
             : version_s || nlib_s || gpp_s || place_s
                 ? cli_usage_error("collective: --library mpi takes no --nccl-version, --nccl-library, "
                                   "--gpus-per-process or --placement (NCCL's, or not modelled for MPI)")
             : work > CLI_MPI_MAX_RANK_SIZES
                 ? cli_usage_error("collective: --library mpi: %u sizes on %d ranks, %.3g rank-sizes in all, more than "
                                   "%.3g: fewer sizes (--sizes) or ranks",
                                   sizes->len, n, work, CLI_MPI_MAX_RANK_SIZES)
                 : cli_collective_mpi(topo, n, used, (CollOp)op, mpi_lib_s, params, sizes, json);
        goto out;
    }
    if (place != TOPO_PLACE_CONTIGUOUS) { /* the same nodes' worth of ranks, placed by the policy */
        g_free(ids);
        if (!(ids = topo_place(topo, place, (uint64_t)seed, n, n / used, &err))) {
            rc = cli_fail(err);
            goto out;
        }
    }
    grp = coll_group_new(topo, ids, n, params, &err);
    g_free(ids);
    if (!grp) {
        rc = cli_fail(err);
        goto out;
    }
    coll_group_set_library(grp, nlib_s ? (CollLibrary)coll_library_parse(nlib_s) : coll_library_default(topo));
    coll_group_set_nccl_version(grp, version);
    cli_warn_version("collective", coll_group_library(grp), version);
    if (gpp > topo_ranks_per_node(topo) || (n / used) % gpp) {
        rc = cli_usage_error("collective: --gpus-per-process %d: a node of %s has %d GPUs, %d of them taking part "
                             "(each process drives the same number)", gpp, topo_name(topo),
                             topo_ranks_per_node(topo), n / used);
        goto out;
    }
    coll_group_set_gpus_per_thread(grp, gpp);
    if (!coll_group_set_datatype(grp, dtype_s)) {
        rc = cli_usage_error("collective: unknown --datatype '%s' (int8, uint8, int32, uint32, int64, uint64, half, "
                             "float, double, bfloat16, f8e4m3, f8e5m2)", SIM_ECHO(dtype_s));
        goto out;
    }
    coll_group_set_fabric(grp, true);
    /* check the algorithm can run before printing anything */
    CollCost probe;
    if (!coll_cost(grp, op, algo, proto, g_array_index(sizes, double, 0), &probe)) {
        rc = cli_usage_error("collective: %s cannot run %s with protocol %s on %s: %s", coll_algo_name(algo),
                             coll_op_name(op), coll_proto_name(proto), topo_name(topo),
                             coll_why_not(grp, op, algo, proto));
        goto out;
    }
    /* said only when not the default, so contiguous output stays as it was */
    char *placed = place == TOPO_PLACE_CONTIGUOUS ? NULL
                   : place == TOPO_PLACE_SCATTERED ? g_strdup_printf("scattered, seed %d", seed)
                                                   : g_strdup(topo_placement_name(place));
    rc = print_sweep(topo, grp, op, algo, proto, sizes, flows, json, placed);
    g_free(placed);
out:
    g_free(algo_help);
    coll_group_free(grp);
    topo_free(topo);
    g_array_free(sizes, TRUE);
    g_free(topology);
    g_free(params);
    g_free(op_s);
    g_free(algo_s);
    g_free(proto_s);
    g_free(sizes_s);
    g_free(ranks_s);
    g_free(nodes_s);
    g_free(place_s);
    g_free(seed_s);
    g_free(version_s);
    g_free(nlib_s);
    g_free(gpp_s);
    g_free(dtype_s);
    g_free(library_s);
    g_free(mpi_lib_s);
    g_option_context_free(ctx);
    return rc;
}
