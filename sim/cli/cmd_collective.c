#include "cli.h"
#include "collective.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define MAX_SIZES 10000

static void add_size(GArray *out, double v)
{
    if (out->len == 0 || g_array_index(out, double, out->len - 1) != v)
        g_array_append_val(out, v);
}

/* "8B:8GiB" (factor 2), "1M:64M:4" (factor 4) or a comma list "1K,1M";
 * sizes are whole bytes, repeats after rounding are dropped. */
static bool parse_sizes(const char *spec, GArray *out)
{
    if (strchr(spec, ',')) {
        char **parts = g_strsplit(spec, ",", -1);
        bool ok = true;
        for (char **p = parts; *p && ok; p++) {
            double v;
            ok = sim_parse_size(g_strstrip(*p), &v) && v >= 1;
            if (ok)
                g_array_append_val(out, v);
        }
        g_strfreev(parts);
        return ok && out->len > 0 && out->len <= MAX_SIZES;
    }
    char **parts = g_strsplit(spec, ":", 3);
    double lo = 0, hi = 0, f = 2;
    int n = (int)g_strv_length(parts);
    bool ok = n >= 1 && sim_parse_size(parts[0], &lo);
    hi = lo;
    if (ok && n >= 2)
        ok = sim_parse_size(parts[1], &hi);
    if (ok && n == 3) {
        char *end;
        f = g_ascii_strtod(parts[2], &end);
        ok = *end == 0 && f > 1 && isfinite(f);
    }
    g_strfreev(parts);
    if (!ok || hi < lo || lo < 1 || log(hi / lo) / log(f) > MAX_SIZES)
        return false;
    for (double s = lo; s <= hi * (1 + 1e-12); s *= f)
        add_size(out, round(s));
    return true;
}

int cmd_collective(int argc, char **argv)
{
    char *topology = NULL, *op_s = NULL, *algo_s = NULL, *proto_s = NULL, *sizes_s = NULL, *params = NULL;
    gboolean json = FALSE, flows = FALSE;
    int ranks = 0, nodes = 0;
    GOptionEntry entries[] = {
        {"topology", 't', 0, G_OPTION_ARG_STRING, &topology, "topology preset or JSON file", "PRESET|FILE"},
        {"nodes", 0, 0, G_OPTION_ARG_INT, &nodes, "number of nodes, for topologies that scale", "N"},
        {"params", 0, 0, G_OPTION_ARG_FILENAME, &params,
         "collective-model parameters (default models/presets/collectives.json)", "FILE"},
        {"op", 0, 0, G_OPTION_ARG_STRING, &op_s,
         "allreduce|reducescatter|allgather|broadcast|reduce|alltoall (default allreduce)", "OP"},
        {"algo", 0, 0, G_OPTION_ARG_STRING, &algo_s, "auto|ring|tree|rhd|direct|hier|collnet|nvls (default auto)", "ALGO"},
        {"proto", 0, 0, G_OPTION_ARG_STRING, &proto_s, "auto|ll|ll128|simple (default auto)", "PROTO"},
        {"ranks", 'n', 0, G_OPTION_ARG_INT, &ranks,
         "ranks taking part, spread evenly over the fewest nodes that hold them (the preset grows if it scales; default all)", "N"},
        {"sizes", 's', 0, G_OPTION_ARG_STRING, &sizes_s, "MIN:MAX[:FACTOR] or a comma list (default 8B:8GiB)", "SIZES"},
        {"flows", 0, 0, G_OPTION_ARG_NONE, &flows, "also run each size on the flow-level network simulator", NULL},
        {"json", 0, 0, G_OPTION_ARG_NONE, &json, "print one JSON object", NULL},
        {NULL, 0, 0, 0, NULL, NULL, NULL},
    };
    GOptionContext *ctx = g_option_context_new("- time a collective over a range of sizes");
    g_option_context_add_main_entries(ctx, entries, NULL);
    int rc = 2;
    Topo *topo = NULL;
    CollGroup *grp = NULL;
    double *ftimes = NULL; /* flow times by size */
    GArray *sizes = g_array_new(FALSE, FALSE, sizeof(double));
    if (!cli_parse_options(ctx, &argc, &argv))
        goto out;
    if (argc > 1) {
        rc = cli_usage_error("collective: unexpected argument '%s'", argv[1]);
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
        rc = cli_usage_error("collective: unknown --op '%s'", op_s);
        goto out;
    }
    if (algo == -2 || proto == -2) {
        rc = cli_usage_error("collective: unknown %s '%s'", algo == -2 ? "--algo" : "--proto",
                             algo == -2 ? algo_s : proto_s);
        goto out;
    }
    if (!parse_sizes(sizes_s ? sizes_s : "8B:8GiB", sizes)) {
        rc = cli_usage_error("collective: bad --sizes '%s' (e.g. 8B:8GiB, 1M:1G:4 or 1K,1M: whole bytes up to 2^53, "
                             "at most %d sizes)",
                             sizes_s, MAX_SIZES);
        goto out;
    }
    if (nodes < 0) {
        rc = cli_usage_error("collective: --nodes must be positive");
        goto out;
    }
    GError *err = NULL;
    TopoOptions topt = {.nodes = nodes};
    topo = topo_load(topology, &topt, &err);
    if (!topo) {
        rc = cli_fail(err);
        goto out;
    }
    int total = topo_num_ranks(topo);
    if (ranks > total && nodes == 0) {
        /* more ranks than the preset's default size: grow it, where the family can */
        int ppn = topo_ranks_per_node(topo);
        topo_free(topo);
        topt.nodes = (ranks + ppn - 1) / ppn;
        topo = topo_load(topology, &topt, &err);
        if (!topo) {
            rc = cli_fail(err);
            goto out;
        }
        total = topo_num_ranks(topo);
    }
    if (ranks < 0 || ranks > total) {
        rc = cli_usage_error("collective: --ranks %d: topology %s has %d ranks", ranks, topo_name(topo), total);
        goto out;
    }
    int n = ranks ? ranks : total;
    /* the fewest nodes that hold n ranks, the same number on each */
    int tppn = topo_ranks_per_node(topo), used = (n + tppn - 1) / tppn;
    if (n % used) {
        rc = cli_usage_error("collective: --ranks %d cannot be spread evenly over %d nodes of %d ranks", n, used, tppn);
        goto out;
    }
    int per = n / used;
    int *ids = g_new(int, n);
    for (int i = 0; i < n; i++)
        ids[i] = (i / per) * tppn + i % per;
    grp = coll_group_new(topo, ids, n, params, &err);
    g_free(ids);
    if (!grp) {
        rc = cli_fail(err);
        goto out;
    }
    /* check the algorithm can run before printing anything */
    CollCost probe;
    if (!coll_cost(grp, op, algo, proto, g_array_index(sizes, double, 0), &probe)) {
        rc = cli_usage_error("collective: %s cannot run %s with protocol %s on %s: %s", coll_algo_name(algo),
                             coll_op_name(op), coll_proto_name(proto), topo_name(topo),
                             coll_why_not(grp, op, algo, proto));
        goto out;
    }
    /* flow runs first: one too big for the simulator is bad input, said
     * before anything is printed */
    ftimes = g_new(double, sizes->len);
    for (guint i = 0; i < sizes->len; i++) {
        double bytes = g_array_index(sizes, double, i);
        CollCost c;
        ftimes[i] = NAN;
        if (!flows || !coll_cost(grp, op, algo, proto, bytes, &c))
            continue;
        int64_t nf = coll_flow_count(grp, op, c.algo, c.proto, bytes);
        if (nf > COLL_MAX_FLOWS) {
            rc = cli_usage_error("collective: --flows: %s %s on %d ranks is %lld flows, more than the simulator "
                                 "takes (%d); drop --flows or use fewer ranks",
                                 coll_algo_name(c.algo), coll_op_name(op), n, (long long)nf, COLL_MAX_FLOWS);
            goto out;
        }
        ftimes[i] = coll_simulate(grp, op, c.algo, c.proto, bytes);
        if (!isfinite(ftimes[i])) {
            rc = cli_usage_error("collective: --flows: %s %s of %.0f bytes on %d ranks (%lld flows) did not finish "
                                 "within the flow simulator's work limit; drop --flows or use fewer ranks",
                                 coll_algo_name(c.algo), coll_op_name(op), bytes, n, (long long)nf);
            goto out;
        }
    }
    cJSON *root = cJSON_CreateObject(), *rows = cJSON_CreateArray();
    cJSON_AddStringToObject(root, "topology", topo_name(topo));
    cJSON_AddStringToObject(root, "op", coll_op_name(op));
    cJSON_AddNumberToObject(root, "ranks", n);
    cJSON_AddNumberToObject(root, "nodes", coll_group_nodes(grp));
    if (!json) {
        int nn = coll_group_nodes(grp), nch = coll_group_channels(grp);
        printf("# %s on %s: %d rank%s on %d node%s", coll_op_name(op), topo_name(topo), n, n == 1 ? "" : "s", nn,
               nn == 1 ? "" : "s");
        if (isfinite(coll_group_intra_bw(grp)))
            printf("; intra-node ring %.1f GB/s per rank (%d channel%s)", coll_group_intra_bw(grp) / 1e9, nch,
                   nch == 1 ? "" : "s");
        if (isfinite(coll_group_inter_bw(grp)))
            printf("; %.1f GB/s per node between nodes", coll_group_inter_bw(grp) / 1e9);
        printf("\n%14s %12s %10s %10s %8s %7s%s\n", "size(B)", "time(us)", "algbw(GB/s)", "busbw(GB/s)", "algo",
               "proto", flows ? "   flow(us)" : "");
    }
    rc = 0;
    for (guint i = 0; i < sizes->len; i++) {
        double bytes = g_array_index(sizes, double, i);
        CollCost c;
        if (!coll_cost(grp, op, algo, proto, bytes, &c)) {
            cJSON_Delete(root);
            cJSON_Delete(rows);
            rc = cli_usage_error("collective: %s cannot run %s with protocol %s on %s", coll_algo_name(algo),
                                 coll_op_name(op), coll_proto_name(proto), topo_name(topo));
            goto out;
        }
        double algbw = c.time_s > 0 ? bytes / c.time_s : 0;
        double busbw = algbw * coll_busbw_factor(op, n);
        double ft = ftimes[i];
        if (json) {
            cJSON *r = cJSON_CreateObject();
            cJSON_AddNumberToObject(r, "size_bytes", bytes);
            cJSON_AddNumberToObject(r, "time_s", c.time_s);
            cJSON_AddNumberToObject(r, "algbw_Bps", algbw);
            cJSON_AddNumberToObject(r, "busbw_Bps", busbw);
            cJSON_AddStringToObject(r, "algo", coll_algo_name(c.algo));
            cJSON_AddStringToObject(r, "proto", coll_proto_name(c.proto));
            if (flows)
                cJSON_AddNumberToObject(r, "flow_time_s", ft);
            cJSON_AddItemToArray(rows, r);
        } else {
            printf("%14.0f %12.2f %11.2f %11.2f %8s %7s", bytes, c.time_s * 1e6, algbw / 1e9, busbw / 1e9,
                   coll_algo_name(c.algo), coll_proto_name(c.proto));
            if (flows)
                printf(" %10.2f", ft * 1e6);
            printf("\n");
        }
    }
    cJSON_AddItemToObject(root, "rows", rows);
    if (json)
        cli_print_json(root);
    else
        cJSON_Delete(root);
out:
    g_free(ftimes);
    coll_group_free(grp);
    topo_free(topo);
    g_array_free(sizes, TRUE);
    g_free(topology);
    g_free(params);
    g_free(op_s);
    g_free(algo_s);
    g_free(proto_s);
    g_free(sizes_s);
    g_option_context_free(ctx);
    return rc;
}
