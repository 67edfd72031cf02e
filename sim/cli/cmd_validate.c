#include "cli.h"
#include "collective.h"
#include "nccltests.h"
#include "osu.h"
#include "otf2trace.h"
#include "trace_text.h"
#include "plot.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    if (human) {
        char large_s[32] = "-", small_s[32] = "-";
        if (large->len)
            g_snprintf(large_s, sizeof large_s, "%.1f%%", ml);
        if (small->len)
            g_snprintf(small_s, sizeof small_s, "%.1f%%", ms);
        fprintf(human, "# %u rows: median |error| %.1f%% (sizes >= 1 MiB: %s, below: %s), max %.1f%%\n", rows->len,
                med, large_s, small_s, mx);
    }
    g_array_free(all, TRUE);
    g_array_free(small, TRUE);
    g_array_free(large, TRUE);
}

static const int op_map[] = {
    [NCCLTESTS_ALLREDUCE] = COLL_ALLREDUCE, [NCCLTESTS_REDUCESCATTER] = COLL_REDUCESCATTER,
    [NCCLTESTS_ALLGATHER] = COLL_ALLGATHER, [NCCLTESTS_BROADCAST] = COLL_BROADCAST,
    [NCCLTESTS_REDUCE] = COLL_REDUCE,       [NCCLTESTS_ALLTOALL] = COLL_ALLTOALL,
};

/* One measured point, in nccl-tests' conventions for the size. */
typedef struct {
    NcclTestsOp op;
    double size, time_s;
} MRow;

/* What a trace says, whatever its format. */
typedef struct {
    GArray *rows; /* MRow */
    int ranks, hosts, ranks_per_host, gpus_per_thread;
} Measured;

static void from_nccltests(const NcclTrace *tr, NcclTestsOp op, Measured *m)
{
    for (size_t i = 0; i < nccltests_n_rows(tr); i++) {
        const NcclTestsRow *r = nccltests_row(tr, i);
        MRow row = {op, (double)r->size_bytes, r->time_us * 1e-6};
        g_array_append_val(m->rows, row);
    }
    m->ranks = nccltests_n_ranks(tr);
    m->hosts = nccltests_n_hosts(tr);
    m->ranks_per_host = nccltests_max_ranks_per_host(tr);
    m->gpus_per_thread = nccltests_gpus_per_thread(tr);
}

/* OSU prints the per-process count for allgather and the per-peer count for
 * all-to-all; nccl-tests (and the model) take the whole buffer. */
static void from_osu(const OsuTrace *tr, NcclTestsOp op, int ranks, Measured *m)
{
    double scale = op == NCCLTESTS_ALLGATHER || op == NCCLTESTS_ALLTOALL ? ranks : 1;
    for (size_t i = 0; i < osu_n_rows(tr); i++) {
        const OsuRow *r = osu_row(tr, i);
        MRow row = {op, (double)r->size_bytes * scale, r->avg_us * 1e-6};
        g_array_append_val(m->rows, row);
    }
}

/* Score-P traces time each call; rank_time_s (each rank's own duration,
 * averaged) is what benchmarks print, so it is the measured time here. */
static bool from_otf2(const char *path, Measured *m, GError **err)
{
    Otf2Trace *tr = otf2trace_load(path, err);
    if (!tr)
        return false;
    for (size_t i = 0; i < otf2trace_n_rows(tr); i++) {
        const Otf2Row *r = otf2trace_row(tr, i);
        if (!isfinite(r->size_bytes) || r->op == NCCLTESTS_UNKNOWN || r->op == NCCLTESTS_SENDRECV)
            continue;
        MRow row = {r->op, r->size_bytes, r->rank_time_s};
        g_array_append_val(m->rows, row);
    }
    m->ranks = otf2trace_n_ranks(tr);
    m->hosts = otf2trace_n_hosts(tr);
    const char *note = otf2trace_note(tr);
    if (note && *note)
        fprintf(stderr, "shardsim: %s: %s\n", path, note);
    otf2trace_free(tr);
    if (m->rows->len == 0) {
        g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "%s: no collective with a known size in this trace", path);
        return false;
    }
    return true;
}

/* Reads a trace: nccl-tests/rccl-tests output or OSU micro-benchmarks output.
 * `ranks`/`nodes` (> 0) override what the trace says, or say what it does not. */
static bool load_measured(const char *path, int op_override, int ranks, int nodes, Measured *m, GError **err)
{
    if (g_str_has_suffix(path, ".otf2")) {
        m->rows = g_array_new(FALSE, FALSE, sizeof(MRow));
        m->gpus_per_thread = 1;
        bool ok = from_otf2(path, m, err);
        if (ranks > 0)
            m->ranks = ranks;
        if (nodes > 0)
            m->hosts = nodes;
        if (m->hosts <= 0)
            m->hosts = 1;
        m->ranks_per_host = (m->ranks + m->hosts - 1) / m->hosts;
        if (!ok)
            g_array_free(m->rows, TRUE);
        return ok;
    }
    char *text = trace_read_text(path, err);
    if (!text)
        return false;
    bool ok = false;
    m->rows = g_array_new(FALSE, FALSE, sizeof(MRow));
    m->gpus_per_thread = 1;
    NcclTestsOp op = NCCLTESTS_UNKNOWN;
    if (strstr(text, "# OSU")) {
        OsuTrace *tr = osu_parse(path, text, err);
        if (tr) {
            op = osu_op(tr) != NCCLTESTS_UNKNOWN || op_override < 0 ? osu_op(tr) : (NcclTestsOp)op_override;
            if (ranks <= 0)
                g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT,
                            "%s: OSU output does not say how many ranks ran; give --ranks (and --nodes)", path);
            else
                from_osu(tr, op, ranks, m);
            ok = ranks > 0;
            osu_free(tr);
        }
    } else {
        NcclTrace *tr = nccltests_parse(path, text, err);
        if (tr) {
            op = nccltests_op(tr);
            if (op == NCCLTESTS_UNKNOWN && op_override >= 0)
                op = (NcclTestsOp)op_override;
            else if (op_override >= 0 && op_override != (int)op)
                g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "%s: the trace measured %s, not %s", path,
                            nccltests_op_name(op), nccltests_op_name((NcclTestsOp)op_override));
            ok = !(err && *err);
            if (ok)
                from_nccltests(tr, op, m);
            nccltests_free(tr);
        }
    }
    g_free(text);
    if (ok && (op == NCCLTESTS_UNKNOWN || op == NCCLTESTS_SENDRECV)) {
        g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "%s: %s", path,
                    op == NCCLTESTS_UNKNOWN ? "cannot tell which collective this trace measured (use --op)"
                                            : "point-to-point traces are not modelled");
        ok = false;
    }
    /* --ranks and --nodes fill in what a trace does not say; they never
     * contradict it (that would compare a prediction with another run) */
    if (ok && ranks > 0 && m->ranks > 0 && ranks != m->ranks) {
        g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "%s: the trace says %d ranks, not %d", path, m->ranks, ranks);
        ok = false;
    }
    if (ok && nodes > 0 && m->hosts > 0 && nodes != m->hosts) {
        g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "%s: the trace says %d nodes, not %d", path, m->hosts, nodes);
        ok = false;
    }
    if (ranks > 0)
        m->ranks = ranks;
    if (nodes > 0 && m->hosts <= 0) {
        m->hosts = nodes;
        m->ranks_per_host = 0;
    }
    if (ok && m->ranks <= 0) {
        g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "%s: the trace does not say how many ranks took part (use --ranks)",
                    path);
        ok = false;
    }
    if (m->hosts <= 0)
        m->hosts = 1;
    if (m->ranks_per_host <= 0)
        m->ranks_per_host = (m->ranks + m->hosts - 1) / m->hosts;
    if (!ok)
        g_array_free(m->rows, TRUE);
    return ok;
}

/* The trace's ranks on the topology (scaled to its node count where the
 * family allows), filling each node's first ranks. */
static CollGroup *group_for(const char *topology, const char *params, const char *path, const Measured *m,
                            Topo **topo, GError **err)
{
    TopoOptions topt = {.nodes = 0};
    *topo = topo_load(topology, &topt, err);
    if (*topo && topo_num_nodes(*topo) != m->hosts) {
        topo_free(*topo);
        topt.nodes = m->hosts;
        *topo = topo_load(topology, &topt, err);
    }
    if (!*topo)
        return NULL;
    int tppn = topo_ranks_per_node(*topo), rph = m->ranks_per_host;
    if (rph > tppn || m->hosts * rph < m->ranks) {
        g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "%s: %d ranks on %d hosts do not fit topology %s (%d nodes of %d)",
                    path, m->ranks, m->hosts, topo_name(*topo), topo_num_nodes(*topo), tppn);
        return NULL;
    }
    int *ids = g_new(int, m->ranks);
    for (int i = 0; i < m->ranks; i++)
        ids[i] = (i / rph) * tppn + i % rph;
    CollGroup *grp = coll_group_new(*topo, ids, m->ranks, params, err);
    g_free(ids);
    if (grp)
        coll_group_set_gpus_per_thread(grp, m->gpus_per_thread);
    return grp;
}

typedef struct {
    const char *topology, *params;
    int op, algo, proto, ranks, nodes;
    bool human;
} Options;

/* Predicts every row of one trace; rows go to `all` and a trace object to
 * `traces_json`. */
static bool validate_one(const Options *o, const char *path, GArray *all, cJSON *traces_json, GError **err)
{
    Measured m = {0};
    if (!load_measured(path, o->op, o->ranks, o->nodes, &m, err))
        return false;
    Topo *topo = NULL;
    CollGroup *grp = group_for(o->topology, o->params, path, &m, &topo, err);
    bool ok = grp != NULL;
    GArray *rows = g_array_new(FALSE, FALSE, sizeof(Row));
    cJSON *tj = cJSON_CreateObject(), *rj = cJSON_CreateArray();
    NcclTestsOp first = m.rows->len ? g_array_index(m.rows, MRow, 0).op : NCCLTESTS_UNKNOWN;
    bool mixed = false;
    for (guint i = 0; i < m.rows->len; i++)
        mixed |= g_array_index(m.rows, MRow, i).op != first;
    if (ok && o->human)
        printf("# %s: %s, %d ranks on %d node(s), topology %s\n%14s %12s %12s %8s %8s %7s%s\n", path,
               mixed ? "several collectives" : coll_op_name(op_map[first]), m.ranks, m.hosts, topo_name(topo),
               "size(B)", "measured(us)", "predicted", "error%", "algo", "proto", mixed ? "  op" : "");
    int skipped = 0;
    for (guint i = 0; ok && i < m.rows->len; i++) {
        const MRow *r = &g_array_index(m.rows, MRow, i);
        if (!(r->time_s > 0) || !(r->size > 0)) { /* a zero time or size has no relative error */
            skipped++;
            continue;
        }
        CollOp op = op_map[r->op];
        CollCost c;
        if (!coll_cost(grp, op, o->algo, o->proto, r->size, &c)) {
            g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "%s: %s/%s cannot run %s on %s: %s", path,
                        coll_algo_name(o->algo), coll_proto_name(o->proto), coll_op_name(op), topo_name(topo),
                        coll_why_not(grp, op, o->algo, o->proto));
            ok = false;
            break;
        }
        Row row = {r->size, r->time_s, c.time_s, fabs(c.time_s - r->time_s) / r->time_s * 100};
        g_array_append_val(rows, row);
        cJSON *jo = cJSON_CreateObject();
        if (mixed)
            cJSON_AddStringToObject(jo, "op", coll_op_name(op));
        cJSON_AddNumberToObject(jo, "size_bytes", row.size);
        cJSON_AddNumberToObject(jo, "measured_s", row.measured);
        cJSON_AddNumberToObject(jo, "predicted_s", row.predicted);
        cJSON_AddNumberToObject(jo, "abs_pct_error", row.err_pct);
        cJSON_AddStringToObject(jo, "algo", coll_algo_name(c.algo));
        cJSON_AddStringToObject(jo, "proto", coll_proto_name(c.proto));
        cJSON_AddItemToArray(rj, jo);
        if (o->human)
            printf("%14.0f %12.2f %12.2f %8.1f %8s %7s%s%s\n", row.size, row.measured * 1e6, row.predicted * 1e6,
                   row.err_pct, coll_algo_name(c.algo), coll_proto_name(c.proto), mixed ? "  " : "",
                   mixed ? coll_op_name(op) : "");
    }
    if (ok && skipped)
        fprintf(stderr, "shardsim: %s: %d row(s) with a zero size or time left out\n", path, skipped);
    if (ok && rows->len == 0) {
        g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "%s: no row with a positive size and time", path);
        ok = false;
    }
    if (ok) {
        g_array_append_vals(all, rows->data, rows->len);
        cJSON_AddStringToObject(tj, "trace", path);
        cJSON_AddStringToObject(tj, "op", mixed ? "mixed" : coll_op_name(op_map[first]));
        cJSON_AddNumberToObject(tj, "ranks", m.ranks);
        cJSON_AddNumberToObject(tj, "nodes", m.hosts);
        summarise(rows, tj, o->human ? stdout : NULL);
        cJSON_AddItemToObject(tj, "rows", rj);
        cJSON_AddItemToArray(traces_json, tj);
    } else {
        cJSON_Delete(tj);
        cJSON_Delete(rj);
    }
    g_array_free(rows, TRUE);
    g_array_free(m.rows, TRUE);
    coll_group_free(grp);
    topo_free(topo);
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
    int ranks = 0, nodes = 0; /* 0: not given */
    char *ranks_s = NULL, *nodes_s = NULL;
    GOptionEntry entries[] = {
        {"topology", 't', 0, G_OPTION_ARG_STRING, &topology, "topology preset or JSON file", "PRESET|FILE"},
        {"params", 0, 0, G_OPTION_ARG_FILENAME, &params,
         "collective-model parameters (default models/presets/collectives.json)", "FILE"},
        {"op", 0, 0, G_OPTION_ARG_STRING, &op_s, "collective, when the trace does not say (never overrides it)", "OP"},
        {"ranks", 'n', 0, G_OPTION_ARG_STRING, &ranks_s, "ranks that ran, when the trace does not say (OSU); must agree where it does", "N"},
        {"nodes", 0, 0, G_OPTION_ARG_STRING, &nodes_s, "nodes they ran on, when the trace does not say; must agree where it does", "N"},
        {"algo", 0, 0, G_OPTION_ARG_STRING, &algo_s, "force an algorithm (default auto)", "ALGO"},
        {"proto", 0, 0, G_OPTION_ARG_STRING, &proto_s, "force a protocol (default auto)", "PROTO"},
        {"json", 0, 0, G_OPTION_ARG_NONE, &json, "print one JSON object", NULL},
        {"plot", 0, 0, G_OPTION_ARG_FILENAME, &plot, "draw measured and predicted times against size",
         "FILE.png|.svg"},
        {NULL, 0, 0, 0, NULL, NULL, NULL},
    };
    GOptionContext *ctx = g_option_context_new(
        "TRACE... - compare predictions with measured nccl-tests, rccl-tests or OSU output, or Score-P OTF2 traces (.otf2)");
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
    if ((ranks_s && (rc = cli_parse_count("validate", "--ranks", ranks_s, 1, 1 << 22, &ranks)) != 0) ||
        (nodes_s && (rc = cli_parse_count("validate", "--nodes", nodes_s, 1, 1 << 20, &nodes)) != 0))
        goto out;
    const char *plot_opt[] = {"--plot"};
    if ((rc = cli_check_outputs("validate", (const char *const *)argv + 1, argc - 1, (const char *const *)&plot,
                                plot_opt, 1)) != 0)
        goto out;
    rc = 2;
    Options o = {topology, params, op, algo, proto, ranks, nodes, !json};
    GArray *all = g_array_new(FALSE, FALSE, sizeof(Row));
    cJSON *root = cJSON_CreateObject(), *traces = cJSON_CreateArray();
    cJSON_AddStringToObject(root, "topology", topology);
    rc = 0;
    for (int i = 1; i < argc && rc == 0; i++) {
        GError *err = NULL;
        if (!validate_one(&o, argv[i], all, traces, &err))
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
    g_free(ranks_s);
    g_free(nodes_s);
    g_option_context_free(ctx);
    return rc;
}
