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

/* osu_bw and osu_bibw send windows of this many messages (OSU's default -W). */
#define OSU_WINDOW 64

/* What one run of a trace says, whatever its format. */
typedef struct {
    char *name;   /* FILE, or FILE#runK for run K of several */
    int run;      /* 0 for a file of one run */
    GArray *rows; /* MRow */
    int ranks, hosts, ranks_per_host, gpus_per_thread;
    OsuMetric metric;       /* what a sendrecv row measured */
    const char *ranks_from; /* "the trace", "busbw/algbw", "--ranks" */
} Measured;

static void measured_free(gpointer p)
{
    Measured *m = p;
    g_free(m->name);
    if (m->rows)
        g_array_free(m->rows, TRUE);
    g_free(m);
}

static Measured *measured_new(const char *name, int run)
{
    Measured *m = g_new0(Measured, 1);
    m->name = g_strdup(name);
    m->run = run;
    m->rows = g_array_new(FALSE, FALSE, sizeof(MRow));
    m->gpus_per_thread = 1;
    m->ranks_from = "the trace";
    return m;
}

static const char *op_label(NcclTestsOp op)
{
    return op == NCCLTESTS_SENDRECV ? "sendrecv" : coll_op_name(op_map[op]);
}

/* The trace's op, or --op where it says none; --op never contradicts it. */
static bool pick_op(const char *name, NcclTestsOp said, int op_override, NcclTestsOp *op, GError **err)
{
    *op = said;
    if (said == NCCLTESTS_UNKNOWN && op_override >= 0)
        *op = (NcclTestsOp)op_override;
    if (said != NCCLTESTS_UNKNOWN && op_override >= 0 && op_override != (int)said) {
        g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "%s: the trace measured %s, not %s", name,
                    nccltests_op_name(said), nccltests_op_name((NcclTestsOp)op_override));
        return false;
    }
    if (*op == NCCLTESTS_UNKNOWN) {
        g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "%s: cannot tell which collective this trace measured (use --op)",
                    name);
        return false;
    }
    return true;
}

static bool from_nccltests(NcclTrace *tr, int op_override, Measured *m, GError **err)
{
    NcclTestsOp op;
    if (!pick_op(m->name, nccltests_op(tr), op_override, &op, err))
        return false;
    nccltests_set_op(tr, op); /* the rank count from busbw/algbw follows the op */
    for (size_t i = 0; i < nccltests_n_rows(tr); i++) {
        const NcclTestsRow *r = nccltests_row(tr, i);
        MRow row = {op, (double)r->size_bytes, r->time_us * 1e-6};
        g_array_append_val(m->rows, row);
    }
    m->ranks = nccltests_n_ranks(tr);
    if (nccltests_ranks_from_bw(tr))
        m->ranks_from = "busbw/algbw";
    m->hosts = nccltests_n_hosts(tr);
    m->ranks_per_host = nccltests_max_ranks_per_host(tr);
    m->gpus_per_thread = nccltests_gpus_per_thread(tr);
    return true;
}

/* OSU prints the per-process count for allgather and the per-peer count for
 * all-to-all; nccl-tests (and the model) take the whole buffer.  Bandwidth
 * rows become the time of one window: OSU_WINDOW messages (each way for
 * osu_bibw) over the printed MB/s. */
static bool from_osu(const OsuTrace *tr, int op_override, int ranks, int nodes, Measured *m, GError **err)
{
    NcclTestsOp op;
    if (!pick_op(m->name, osu_op(tr), op_override, &op, err))
        return false;
    m->metric = osu_metric(tr);
    if (op == NCCLTESTS_SENDRECV) {
        if (ranks > 0 && ranks != 2) {
            g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "%s: a point-to-point benchmark runs 2 ranks, not %d",
                        m->name, ranks);
            return false;
        }
        m->ranks = 2;
    } else if (ranks <= 0) {
        g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT,
                    "%s: OSU output does not say how many ranks ran; give --ranks (and --nodes)", m->name);
        return false;
    }
    if (nodes <= 0) {
        g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "%s: OSU output does not say on how many nodes its %s ran; give "
                    "--nodes", m->name, op == NCCLTESTS_SENDRECV ? "2 ranks" : "ranks");
        return false;
    }
    double scale = op == NCCLTESTS_ALLGATHER || op == NCCLTESTS_ALLTOALL ? ranks : 1;
    double ways = m->metric == OSU_BIBANDWIDTH ? 2 : 1;
    for (size_t i = 0; i < osu_n_rows(tr); i++) {
        const OsuRow *r = osu_row(tr, i);
        double t = r->avg_us * 1e-6;
        if (m->metric != OSU_LATENCY)
            t = r->bw_mbs > 0 ? ways * OSU_WINDOW * (double)r->size_bytes / (r->bw_mbs * 1e6) : 0;
        MRow row = {op, (double)r->size_bytes * scale, t};
        g_array_append_val(m->rows, row);
    }
    return true;
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

/* --ranks and --nodes fill in what a trace does not say; they never
 * contradict it (that would compare a prediction with another run). */
static bool settle_counts(Measured *m, int ranks, int nodes, GError **err)
{
    if (ranks > 0 && m->ranks > 0 && ranks != m->ranks) {
        bool bw = strcmp(m->ranks_from, "busbw/algbw") == 0;
        g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "%s: the trace says %d ranks%s, not %d", m->name, m->ranks,
                    bw ? " (from busbw/algbw)" : "", ranks);
        return false;
    }
    if (nodes > 0 && m->hosts > 0 && nodes != m->hosts) {
        g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "%s: the trace says %d nodes, not %d", m->name, m->hosts, nodes);
        return false;
    }
    if (ranks > 0 && m->ranks <= 0) {
        m->ranks = ranks;
        m->ranks_from = "--ranks";
    }
    if (nodes > 0 && m->hosts <= 0) {
        m->hosts = nodes;
        m->ranks_per_host = 0;
    }
    if (m->ranks <= 0) {
        g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "%s: the trace does not say how many ranks took part (use --ranks)",
                    m->name);
        return false;
    }
    if (m->hosts <= 0)
        m->hosts = 1;
    if (m->ranks_per_host <= 0)
        m->ranks_per_host = (m->ranks + m->hosts - 1) / m->hosts;
    return true;
}

/* Reads a trace into its runs (`out`, Measured): nccl-tests/rccl-tests output
 * (one or several runs), OSU micro-benchmarks output or an OTF2 archive.
 * `ranks`/`nodes` (> 0) say what the trace does not. */
static bool load_measured(const char *path, int op_override, int ranks, int nodes, GPtrArray *out, GError **err)
{
    if (g_str_has_suffix(path, ".otf2")) {
        Measured *m = measured_new(path, 0);
        g_ptr_array_add(out, m);
        return from_otf2(path, m, err) && settle_counts(m, ranks, nodes, err);
    }
    char *text = trace_read_text(path, err);
    if (!text)
        return false;
    bool ok = false;
    if (strstr(text, "# OSU")) {
        OsuTrace *tr = osu_parse(path, text, err);
        if (tr) {
            Measured *m = measured_new(path, 0);
            g_ptr_array_add(out, m);
            ok = from_osu(tr, op_override, ranks, nodes, m, err) && settle_counts(m, ranks, nodes, err);
            osu_free(tr);
        }
    } else {
        NcclRuns *runs = nccltests_parse_runs(path, text, err);
        ok = runs != NULL;
        size_t n = runs ? nccltests_runs_n(runs) : 0;
        for (size_t i = 0; ok && i < n; i++) {
            NcclTrace *tr = nccltests_runs_get(runs, i);
            Measured *m = measured_new(nccltests_name(tr), n > 1 ? (int)i + 1 : 0);
            g_ptr_array_add(out, m);
            ok = from_nccltests(tr, op_override, m, err) && settle_counts(m, ranks, nodes, err);
        }
        nccltests_runs_free(runs);
    }
    g_free(text);
    return ok;
}

/* The topology rank ids of the trace's ranks (scaled to its node count where
 * the family allows), filling each node's first ranks. */
static int *rank_ids(const char *topology, const Measured *m, Topo **topo, GError **err)
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
                    m->name, m->ranks, m->hosts, topo_name(*topo), topo_num_nodes(*topo), tppn);
        return NULL;
    }
    int *ids = g_new(int, m->ranks);
    for (int i = 0; i < m->ranks; i++)
        ids[i] = (i / rph) * tppn + i % rph;
    return ids;
}

/* The group the rows are predicted on.  A sendrecv is one message between two
 * ranks: for nccl-tests' sendrecv_perf (every rank sends to the next one at
 * once) the slowest neighbours, the pair across the first node boundary when
 * there are several nodes. */
static CollGroup *group_for(const char *topology, const char *params, const Measured *m, bool sendrecv, Topo **topo,
                            GError **err)
{
    int *ids = rank_ids(topology, m, topo, err);
    if (!ids)
        return NULL;
    int n = m->ranks;
    if (sendrecv) {
        if (n < 2) {
            g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "%s: a sendrecv needs 2 ranks, the trace has %d", m->name, n);
            g_free(ids);
            return NULL;
        }
        int first = m->hosts > 1 ? m->ranks_per_host - 1 : 0;
        int pair[2] = {ids[first], ids[first + 1]};
        memcpy(ids, pair, sizeof pair);
        n = 2;
    }
    CollGroup *grp = coll_group_new(*topo, ids, n, params, err);
    g_free(ids);
    if (grp)
        coll_group_set_gpus_per_thread(grp, m->gpus_per_thread);
    return grp;
}

/* What a sendrecv row's measured and predicted times are. */
static const char *sendrecv_definition(const Measured *m)
{
    switch (m->metric) {
    case OSU_BANDWIDTH:
        return "osu_bw: the time of one window of 64 messages, 64 x size / bandwidth; predicted as one message of "
               "64 x size between the two ranks (the window streams, its latency paid once)";
    case OSU_BIBANDWIDTH:
        return "osu_bibw: the time of one window of 64 messages each way, 2 x 64 x size / bandwidth; predicted as one "
               "message of 64 x size between the two ranks (each direction has its own links)";
    case OSU_LATENCY:
        break;
    }
    return "one-way time of one message of the size (osu_latency: half the round trip; sendrecv_perf: every rank "
           "sends to the next at once), predicted as a message between two ranks (the pair across a node boundary "
           "when there are several nodes)";
}

typedef struct {
    const char *topology, *params;
    int op, algo, proto, ranks, nodes;
    bool human;
} Options;

/* Predicts every row of one run; rows go to `all` and a trace object to
 * `traces_json`. */
static bool validate_run(const Options *o, const Measured *m, GArray *all, cJSON *traces_json, GError **err)
{
    NcclTestsOp first = m->rows->len ? g_array_index(m->rows, MRow, 0).op : NCCLTESTS_UNKNOWN;
    bool mixed = false;
    for (guint i = 0; i < m->rows->len; i++)
        mixed |= g_array_index(m->rows, MRow, i).op != first;
    bool sendrecv = first == NCCLTESTS_SENDRECV && !mixed;
    Topo *topo = NULL;
    CollGroup *grp = group_for(o->topology, o->params, m, sendrecv, &topo, err);
    bool ok = grp != NULL;
    GArray *rows = g_array_new(FALSE, FALSE, sizeof(Row));
    cJSON *tj = cJSON_CreateObject(), *rj = cJSON_CreateArray();
    if (ok && o->human) {
        printf("# %s: %s, %d ranks on %d node(s)%s, topology %s\n", m->name,
               mixed ? "several collectives" : op_label(first), m->ranks, m->hosts,
               strcmp(m->ranks_from, "busbw/algbw") == 0 ? " (ranks from busbw/algbw)" : "", topo_name(topo));
        if (sendrecv)
            printf("# sendrecv: %s\n", sendrecv_definition(m));
        printf("%14s %12s %12s %8s %8s %7s%s\n", "size(B)", "measured(us)", "predicted", "error%", "algo", "proto",
               mixed ? "  op" : "");
    }
    double window = sendrecv && m->metric != OSU_LATENCY ? OSU_WINDOW : 1;
    int skipped = 0;
    for (guint i = 0; ok && i < m->rows->len; i++) {
        const MRow *r = &g_array_index(m->rows, MRow, i);
        if (!(r->time_s > 0) || !(r->size > 0)) { /* a zero time or size has no relative error */
            skipped++;
            continue;
        }
        /* a message between two ranks is a broadcast of two */
        CollOp op = sendrecv ? COLL_BROADCAST : op_map[r->op];
        CollCost c;
        if (!coll_cost(grp, op, o->algo, o->proto, r->size * window, &c)) {
            g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "%s: %s/%s cannot run %s on %s: %s", m->name,
                        coll_algo_name(o->algo), coll_proto_name(o->proto), op_label(r->op), topo_name(topo),
                        coll_why_not(grp, op, o->algo, o->proto));
            ok = false;
            break;
        }
        Row row = {r->size, r->time_s, c.time_s, fabs(c.time_s - r->time_s) / r->time_s * 100};
        g_array_append_val(rows, row);
        cJSON *jo = cJSON_CreateObject();
        if (mixed)
            cJSON_AddStringToObject(jo, "op", op_label(r->op));
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
                   mixed ? op_label(r->op) : "");
    }
    if (ok && skipped)
        fprintf(stderr, "shardsim: %s: %d row(s) with a zero size or time left out\n", m->name, skipped);
    if (ok && rows->len == 0) {
        g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "%s: no row with a positive size and time", m->name);
        ok = false;
    }
    if (ok) {
        g_array_append_vals(all, rows->data, rows->len);
        cJSON_AddStringToObject(tj, "trace", m->name);
        if (m->run > 0)
            cJSON_AddNumberToObject(tj, "run", m->run);
        cJSON_AddStringToObject(tj, "op", mixed ? "mixed" : op_label(first));
        if (sendrecv)
            cJSON_AddStringToObject(tj, "measured", sendrecv_definition(m));
        cJSON_AddNumberToObject(tj, "ranks", m->ranks);
        cJSON_AddStringToObject(tj, "ranks_from", m->ranks_from);
        cJSON_AddNumberToObject(tj, "nodes", m->hosts);
        summarise(rows, tj, o->human ? stdout : NULL);
        cJSON_AddItemToObject(tj, "rows", rj);
        cJSON_AddItemToArray(traces_json, tj);
    } else {
        cJSON_Delete(tj);
        cJSON_Delete(rj);
    }
    g_array_free(rows, TRUE);
    coll_group_free(grp);
    topo_free(topo);
    return ok;
}

/* Every run of one trace file, each validated and reported on its own. */
static bool validate_one(const Options *o, const char *path, GArray *all, cJSON *traces_json, GError **err)
{
    GPtrArray *runs = g_ptr_array_new_with_free_func(measured_free);
    bool ok = load_measured(path, o->op, o->ranks, o->nodes, runs, err);
    for (guint i = 0; ok && i < runs->len; i++)
        ok = validate_run(o, runs->pdata[i], all, traces_json, err);
    g_ptr_array_free(runs, TRUE);
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
        {"op", 0, 0, G_OPTION_ARG_STRING, &op_s, "collective (or sendrecv), when the trace does not say (never overrides it)", "OP"},
        {"ranks", 'n', 0, G_OPTION_ARG_STRING, &ranks_s, "ranks that ran, when the trace does not say (OSU collectives; nccl-tests without Rank lines); must agree where it does", "N"},
        {"nodes", 0, 0, G_OPTION_ARG_STRING, &nodes_s, "nodes they ran on, when the trace does not say (OSU needs it); must agree where it does", "N"},
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
        if (c < 0 && nccltests_op_from_name(op_s) == NCCLTESTS_SENDRECV) {
            op = NCCLTESTS_SENDRECV;
        } else if (c < 0) {
            rc = cli_usage_error("validate: unknown --op '%s'", op_s);
            goto out;
        } else {
            op = back[c];
        }
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
