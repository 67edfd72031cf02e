#include "cli.h"
#include "collective.h"
#include "nccltests.h"
#include "plot.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define SMALL_LIMIT 1048576.0 /* rows below 1 MiB are "small" */

typedef struct {
    double size, measured, predicted, err_pct;
} Row;

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(GArray *v)
{
    if (v->len == 0)
        return NAN;
    qsort(v->data, v->len, sizeof(double), cmp_double);
    double *d = (double *)(void *)v->data;
    return v->len % 2 ? d[v->len / 2] : 0.5 * (d[v->len / 2 - 1] + d[v->len / 2]);
}

static double maxv(GArray *v)
{
    double m = NAN;
    for (guint i = 0; i < v->len; i++)
        if (isnan(m) || g_array_index(v, double, i) > m)
            m = g_array_index(v, double, i);
    return m;
}

/* Summary of absolute percentage errors; adds the keys to `o` when given. */
static void summarise(GArray *rows, cJSON *o, FILE *human)
{
    GArray *all = g_array_new(FALSE, FALSE, sizeof(double)), *small = g_array_new(FALSE, FALSE, sizeof(double)),
           *large = g_array_new(FALSE, FALSE, sizeof(double));
    for (guint i = 0; i < rows->len; i++) {
        Row *r = &g_array_index(rows, Row, i);
        g_array_append_val(all, r->err_pct);
        g_array_append_val(r->size < SMALL_LIMIT ? small : large, r->err_pct);
    }
    double mx = maxv(all), med = median(all), ms = median(small), ml = median(large);
    if (o) {
        cJSON_AddNumberToObject(o, "median_abs_pct_error", med);
        cJSON_AddNumberToObject(o, "max_abs_pct_error", mx);
        if (large->len)
            cJSON_AddNumberToObject(o, "median_abs_pct_error_large", ml);
        else
            cJSON_AddNullToObject(o, "median_abs_pct_error_large");
        if (small->len)
            cJSON_AddNumberToObject(o, "median_abs_pct_error_small", ms);
        else
            cJSON_AddNullToObject(o, "median_abs_pct_error_small");
        cJSON_AddNumberToObject(o, "n_rows", rows->len);
    }
    if (human)
        fprintf(human,
                "# %u rows: median |error| %.1f%% (sizes >= 1 MiB: %.1f%%, below: %.1f%%), max %.1f%%\n",
                rows->len, med, ml, ms, mx);
    g_array_free(all, TRUE);
    g_array_free(small, TRUE);
    g_array_free(large, TRUE);
}

static const int op_map[] = {
    [NCCLTESTS_ALLREDUCE] = COLL_ALLREDUCE, [NCCLTESTS_REDUCESCATTER] = COLL_REDUCESCATTER,
    [NCCLTESTS_ALLGATHER] = COLL_ALLGATHER, [NCCLTESTS_BROADCAST] = COLL_BROADCAST,
    [NCCLTESTS_REDUCE] = COLL_REDUCE,       [NCCLTESTS_ALLTOALL] = COLL_ALLTOALL,
};

/* Predicts every row of one trace; rows go to `all` and `out`. */
static bool validate_one(const char *topology, const char *params, const char *path, int op_override, int algo, int proto, GArray *all,
                         cJSON *traces_json, bool human, GError **err)
{
    NcclTrace *tr = nccltests_load(path, err);
    if (!tr)
        return false;
    bool ok = false;
    Topo *topo = NULL;
    CollGroup *grp = NULL;
    int *ids = NULL;
    NcclTestsOp top = op_override >= 0 ? (NcclTestsOp)op_override : nccltests_op(tr);
    if (top == NCCLTESTS_UNKNOWN || top == NCCLTESTS_SENDRECV || top >= (int)G_N_ELEMENTS(op_map)) {
        g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "%s: %s", path,
                    top == NCCLTESTS_UNKNOWN ? "cannot tell which collective this trace measured (use --op)"
                                             : "point-to-point traces are not modelled");
        goto out;
    }
    CollOp op = op_map[top];
    int hosts = nccltests_n_hosts(tr) > 0 ? nccltests_n_hosts(tr) : 1;
    int nranks = nccltests_n_ranks(tr);
    int rph = nccltests_max_ranks_per_host(tr);
    if (nranks <= 0) {
        g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "%s: the trace does not say how many ranks took part", path);
        goto out;
    }
    if (rph <= 0)
        rph = (nranks + hosts - 1) / hosts;
    TopoOptions topt = {.nodes = 0};
    topo = topo_load(topology, &topt, err);
    if (!topo)
        goto out;
    if (topo_num_nodes(topo) != hosts) {
        /* scale the topology to the trace's host count where the family allows */
        topo_free(topo);
        topt.nodes = hosts;
        topo = topo_load(topology, &topt, err);
        if (!topo)
            goto out;
    }
    int tppn = topo_ranks_per_node(topo);
    if (rph > tppn || hosts * rph < nranks) {
        g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "%s: %d ranks on %d hosts do not fit topology %s (%d nodes of %d)",
                    path, nranks, hosts, topo_name(topo), topo_num_nodes(topo), tppn);
        goto out;
    }
    ids = g_new(int, nranks);
    for (int i = 0; i < nranks; i++)
        ids[i] = (i / rph) * tppn + i % rph;
    grp = coll_group_new(topo, ids, nranks, params, err);
    if (!grp)
        goto out;
    coll_group_set_gpus_per_thread(grp, nccltests_gpus_per_thread(tr));
    GArray *rows = g_array_new(FALSE, FALSE, sizeof(Row));
    cJSON *tj = cJSON_CreateObject(), *rj = cJSON_CreateArray();
    cJSON_AddStringToObject(tj, "trace", path);
    cJSON_AddStringToObject(tj, "op", coll_op_name(op));
    cJSON_AddNumberToObject(tj, "ranks", nranks);
    cJSON_AddNumberToObject(tj, "nodes", hosts);
    if (human)
        printf("# %s: %s, %d ranks on %d node(s), topology %s\n%14s %12s %12s %8s %8s %7s\n", path,
               coll_op_name(op), nranks, hosts, topo_name(topo), "size(B)", "measured(us)", "predicted", "error%",
               "algo", "proto");
    for (size_t i = 0; i < nccltests_n_rows(tr); i++) {
        const NcclTestsRow *r = nccltests_row(tr, i);
        if (!(r->time_us > 0))
            continue;
        CollCost c;
        if (!coll_cost(grp, op, algo, proto, (double)r->size_bytes, &c)) {
            g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "%s: %s/%s cannot run %s on %s", path, coll_algo_name(algo),
                        coll_proto_name(proto), coll_op_name(op), topo_name(topo));
            g_array_free(rows, TRUE);
            cJSON_Delete(tj);
            cJSON_Delete(rj);
            goto out;
        }
        Row row = {(double)r->size_bytes, r->time_us * 1e-6, c.time_s, 0};
        row.err_pct = fabs(row.predicted - row.measured) / row.measured * 100;
        g_array_append_val(rows, row);
        g_array_append_val(all, row);
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "size_bytes", row.size);
        cJSON_AddNumberToObject(o, "measured_s", row.measured);
        cJSON_AddNumberToObject(o, "predicted_s", row.predicted);
        cJSON_AddNumberToObject(o, "abs_pct_error", row.err_pct);
        cJSON_AddStringToObject(o, "algo", coll_algo_name(c.algo));
        cJSON_AddStringToObject(o, "proto", coll_proto_name(c.proto));
        cJSON_AddItemToArray(rj, o);
        if (human)
            printf("%14.0f %12.2f %12.2f %8.1f %8s %7s\n", row.size, row.measured * 1e6, row.predicted * 1e6,
                   row.err_pct, coll_algo_name(c.algo), coll_proto_name(c.proto));
    }
    summarise(rows, tj, human ? stdout : NULL);
    cJSON_AddItemToObject(tj, "rows", rj);
    cJSON_AddItemToArray(traces_json, tj);
    g_array_free(rows, TRUE);
    ok = true;
out:
    g_free(ids);
    coll_group_free(grp);
    topo_free(topo);
    nccltests_free(tr);
    return ok;
}

/* Measured points and predicted lines, one colour per trace. */
static bool plot_traces(const char *path, const char *topology, const cJSON *traces, GError **err)
{
    int n = cJSON_GetArraySize(traces), i = 0;
    PlotTrace *pt = g_new0(PlotTrace, n > 0 ? n : 1);
    char **labels = g_new0(char *, n + 1);
    const cJSON *t;
    cJSON_ArrayForEach(t, traces)
    {
        const cJSON *rows = cJSON_GetObjectItem(t, "rows"), *r;
        int m = cJSON_GetArraySize(rows), k = 0;
        double *size = g_new(double, m + 1), *meas = g_new(double, m + 1), *pred = g_new(double, m + 1);
        cJSON_ArrayForEach(r, rows)
        {
            size[k] = cJSON_GetObjectItem(r, "size_bytes")->valuedouble;
            meas[k] = cJSON_GetObjectItem(r, "measured_s")->valuedouble;
            pred[k] = cJSON_GetObjectItem(r, "predicted_s")->valuedouble;
            k++;
        }
        char *base = g_path_get_basename(cJSON_GetObjectItem(t, "trace")->valuestring);
        labels[i] = g_strdup_printf("%s (%s)", base, cJSON_GetObjectItem(t, "op")->valuestring);
        g_free(base);
        pt[i] = (PlotTrace){.label = labels[i], .n = m, .size = size, .measured = meas, .predicted = pred};
        i++;
    }
    char *title = g_strdup_printf("measured (points) and predicted (lines) on %s", topology);
    bool ok = plot_validation(path, title, pt, n, err);
    g_free(title);
    for (int j = 0; j < n; j++) {
        g_free((double *)pt[j].size);
        g_free((double *)pt[j].measured);
        g_free((double *)pt[j].predicted);
    }
    g_free(pt);
    g_strfreev(labels);
    return ok;
}

int cmd_validate(int argc, char **argv)
{
    char *topology = NULL, *op_s = NULL, *algo_s = NULL, *proto_s = NULL, *params = NULL, *plot = NULL;
    gboolean json = FALSE;
    GOptionEntry entries[] = {
        {"topology", 't', 0, G_OPTION_ARG_STRING, &topology, "topology preset or JSON file", "PRESET|FILE"},
        {"params", 0, 0, G_OPTION_ARG_FILENAME, &params,
         "collective-model parameters (default models/presets/collectives.json)", "FILE"},
        {"op", 0, 0, G_OPTION_ARG_STRING, &op_s, "collective, when the trace does not say", "OP"},
        {"algo", 0, 0, G_OPTION_ARG_STRING, &algo_s, "force an algorithm (default auto)", "ALGO"},
        {"proto", 0, 0, G_OPTION_ARG_STRING, &proto_s, "force a protocol (default auto)", "PROTO"},
        {"json", 0, 0, G_OPTION_ARG_NONE, &json, "print one JSON object", NULL},
        {"plot", 0, 0, G_OPTION_ARG_FILENAME, &plot, "draw measured and predicted times against size",
         "FILE.png|.svg"},
        {NULL, 0, 0, 0, NULL, NULL, NULL},
    };
    GOptionContext *ctx = g_option_context_new("TRACE... - compare predictions with measured nccl-tests output");
    g_option_context_add_main_entries(ctx, entries, NULL);
    int rc = 2;
    if (!cli_parse_options(ctx, &argc, &argv))
        goto out;
    if (!topology) {
        rc = cli_usage_error("validate: --topology is required (see --help)");
        goto out;
    }
    if (argc < 2) {
        rc = cli_usage_error("validate: name at least one trace file");
        goto out;
    }
    if (plot && !g_str_has_suffix(plot, ".png") && !g_str_has_suffix(plot, ".svg")) {
        rc = cli_usage_error("validate: --plot %s: the file must end in .png or .svg", plot);
        goto out;
    }
    int op = -1, algo = algo_s ? coll_algo_parse(algo_s) : COLL_ALGO_AUTO,
        proto = proto_s ? coll_proto_parse(proto_s) : COLL_PROTO_AUTO;
    if (op_s) {
        int c = coll_op_parse(op_s);
        static const NcclTestsOp back[] = {NCCLTESTS_ALLREDUCE, NCCLTESTS_REDUCESCATTER, NCCLTESTS_ALLGATHER,
                                           NCCLTESTS_BROADCAST, NCCLTESTS_REDUCE,        NCCLTESTS_ALLTOALL};
        if (c < 0) {
            rc = cli_usage_error("validate: unknown --op '%s'", op_s);
            goto out;
        }
        op = back[c];
    }
    if (algo == -2 || proto == -2) {
        rc = cli_usage_error("validate: unknown %s", algo == -2 ? "--algo" : "--proto");
        goto out;
    }
    GArray *all = g_array_new(FALSE, FALSE, sizeof(Row));
    cJSON *root = cJSON_CreateObject(), *traces = cJSON_CreateArray();
    cJSON_AddStringToObject(root, "topology", topology);
    rc = 0;
    for (int i = 1; i < argc && rc == 0; i++) {
        GError *err = NULL;
        if (!validate_one(topology, params, argv[i], op, algo, proto, all, traces, !json, &err))
            rc = cli_fail(err);
    }
    if (rc == 0) {
        if (!json && argc > 2)
            printf("# all traces:\n");
        summarise(all, root, !json && argc > 2 ? stdout : NULL);
        /* per-row detail lives under each trace; `rows` at the top joins them */
        cJSON *rows = cJSON_CreateArray();
        cJSON *t;
        cJSON_ArrayForEach(t, traces)
        {
            cJSON *r;
            cJSON_ArrayForEach(r, cJSON_GetObjectItem(t, "rows")) cJSON_AddItemToArray(rows, cJSON_Duplicate(r, 1));
        }
        cJSON_AddItemToObject(root, "rows", rows);
        cJSON_AddItemToObject(root, "traces", traces);
        GError *perr = NULL;
        if (plot && !plot_traces(plot, topology, traces, &perr))
            rc = cli_fail(perr);
        if (json)
            cli_print_json(root);
        else
            cJSON_Delete(root);
    } else {
        cJSON_Delete(root);
        cJSON_Delete(traces);
    }
    g_array_free(all, TRUE);
out:
    g_free(topology);
    g_free(params);
    g_free(plot);
    g_free(op_s);
    g_free(algo_s);
    g_free(proto_s);
    g_option_context_free(ctx);
    return rc;
}
