/* Validation's results: the absolute percentage errors summarised per run
 * and over all (medians, below and from 1 MiB), the runs as JSON, and the
 * predicted-versus-measured plot. */
#include "validate_measured.h"
#include "plot.h"

#include <math.h>
#include <stdlib.h>

#define SMALL_LIMIT 1048576.0 /* rows below 1 MiB are "small" */

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

ValidateErrors validate_errors_of(const ValidateRow *rows, size_t n)
{
    GArray *all = g_array_new(FALSE, FALSE, sizeof(double)), *small = g_array_new(FALSE, FALSE, sizeof(double)),
           *large = g_array_new(FALSE, FALSE, sizeof(double));
    for (size_t i = 0; i < n; i++) {
        g_array_append_val(all, rows[i].abs_pct_error);
        g_array_append_val(rows[i].size_bytes < SMALL_LIMIT ? small : large, rows[i].abs_pct_error);
    }
    ValidateErrors e = {.n_rows = (unsigned)n, .n_large = large->len, .n_small = small->len};
    e.max = maxv(all);
    e.median = median(all);
    e.median_small = median(small);
    e.median_large = median(large);
    g_array_free(all, TRUE);
    g_array_free(small, TRUE);
    g_array_free(large, TRUE);
    return e;
}

void validate_errors_json(const ValidateErrors *e, cJSON *o)
{
    cJSON_AddNumberToObject(o, "median_abs_pct_error", e->median);
    cJSON_AddNumberToObject(o, "max_abs_pct_error", e->max);
    if (e->n_large)
        cJSON_AddNumberToObject(o, "median_abs_pct_error_large", e->median_large);
    else
        cJSON_AddNullToObject(o, "median_abs_pct_error_large");
    if (e->n_small)
        cJSON_AddNumberToObject(o, "median_abs_pct_error_small", e->median_small);
    else
        cJSON_AddNullToObject(o, "median_abs_pct_error_small");
    cJSON_AddNumberToObject(o, "n_rows", e->n_rows);
}

ValidateErrors validate_errors(const Validation *v)
{
    GArray *all = g_array_new(FALSE, FALSE, sizeof(ValidateRow));
    for (guint i = 0; i < v->runs->len; i++) {
        const ValidateRun *r = validate_run(v, i);
        if (r->done)
            g_array_append_vals(all, r->rows, r->n_rows);
    }
    ValidateErrors e = validate_errors_of((const ValidateRow *)(void *)all->data, all->len);
    g_array_free(all, TRUE);
    return e;
}

double validate_row_pct_error(const ValidateRow *row) { return 100 * (row->predicted_s / row->measured_s - 1); }

size_t validate_nccl_agrees(const ValidateRow *rows, size_t n, size_t *said)
{
    size_t same = 0;
    *said = 0;
    for (size_t i = 0; i < n; i++) {
        if (!rows[i].nccl_algo)
            continue;
        (*said)++;
        same += strcmp(rows[i].nccl_algo, rows[i].algo) == 0 && strcmp(rows[i].nccl_proto, rows[i].proto) == 0;
    }
    return same;
}

static cJSON *row_json(const ValidateRow *row, bool mixed)
{
    cJSON *jo = cJSON_CreateObject();
    if (mixed)
        cJSON_AddStringToObject(jo, "op", row->op);
    cJSON_AddNumberToObject(jo, "size_bytes", row->size_bytes);
    cJSON_AddNumberToObject(jo, "measured_s", row->measured_s);
    cJSON_AddNumberToObject(jo, "predicted_s", row->predicted_s);
    cJSON_AddNumberToObject(jo, "predicted_p10_s", row->p10_s);
    cJSON_AddNumberToObject(jo, "predicted_p90_s", row->p90_s);
    cJSON_AddNumberToObject(jo, "abs_pct_error", row->abs_pct_error);
    cJSON_AddNumberToObject(jo, "pct_error", validate_row_pct_error(row));
    cJSON_AddStringToObject(jo, "algo", row->algo);
    if (row->fabric_factor > 1) /* only where the fabric above the NICs slowed it, as collective --json */
        cJSON_AddNumberToObject(jo, "fabric_factor", row->fabric_factor);
    cJSON_AddStringToObject(jo, "proto", row->proto);
    if (row->nccl_algo) { /* only where NCCL's log says what it ran */
        cJSON_AddStringToObject(jo, "nccl_algo", row->nccl_algo);
        cJSON_AddStringToObject(jo, "nccl_proto", row->nccl_proto);
    }
    return jo;
}

static cJSON *run_json(const ValidateRun *r)
{
    cJSON *tj = cJSON_CreateObject(), *rj = cJSON_CreateArray();
    cJSON_AddStringToObject(tj, "trace", r->trace);
    if (r->run > 0)
        cJSON_AddNumberToObject(tj, "run", r->run);
    cJSON_AddStringToObject(tj, "op", r->op);
    if (r->sendrecv)
        cJSON_AddStringToObject(tj, "measured", r->sendrecv);
    cJSON_AddNumberToObject(tj, "ranks", r->ranks);
    cJSON_AddStringToObject(tj, "ranks_from", r->ranks_from);
    if (r->library)
        cJSON_AddStringToObject(tj, "library", r->library);
    cJSON_AddNumberToObject(tj, "nodes", r->nodes);
    if (r->nccl_version > 0)
        cJSON_AddNumberToObject(tj, "nccl_version", r->nccl_version);
    if (r->nccl_library)
        cJSON_AddStringToObject(tj, "nccl_library", r->nccl_library);
    if (r->env_algo) /* what the run's NCCL_ALGO / NCCL_PROTO forced */
        cJSON_AddStringToObject(tj, "env_algo", r->env_algo);
    if (r->env_proto)
        cJSON_AddStringToObject(tj, "env_proto", r->env_proto);
    validate_errors_json(&r->errors, tj);
    size_t said, same = validate_nccl_agrees(r->rows, r->n_rows, &said);
    if (said) {
        cJSON_AddNumberToObject(tj, "nccl_choice_rows", (double)said);
        cJSON_AddNumberToObject(tj, "nccl_choice_same", (double)same);
    }
    for (size_t i = 0; i < r->n_rows; i++)
        cJSON_AddItemToArray(rj, row_json(&r->rows[i], r->mixed));
    cJSON_AddItemToObject(tj, "rows", rj);
    return tj;
}

cJSON *validate_json(const Validation *v)
{
    cJSON *root = cJSON_CreateObject(), *rows = cJSON_CreateArray(), *traces = cJSON_CreateArray();
    cJSON_AddStringToObject(root, "topology", v->o.topology);
    ValidateErrors e = validate_errors(v);
    validate_errors_json(&e, root);
    for (guint i = 0; i < v->runs->len; i++) {
        const ValidateRun *r = validate_run(v, i);
        if (!r->done)
            continue;
        /* per-row detail lives under each trace; `rows` at the top joins them */
        for (size_t k = 0; k < r->n_rows; k++)
            cJSON_AddItemToArray(rows, row_json(&r->rows[k], r->mixed));
        cJSON_AddItemToArray(traces, run_json(r));
    }
    cJSON_AddItemToObject(root, "rows", rows);
    cJSON_AddItemToObject(root, "traces", traces);
    return root;
}

/* Each done run's predictions with the default parameters, for the plot's
 * baseline (NULL when the options name none); the runs are predicted with
 * their own parameters again afterwards. */
static double **default_predictions(Validation *v, GError **err)
{
    if (!v->o.params && !v->o.param_set)
        return NULL;
    ValidateOptions def = v->o;
    def.params = NULL;
    def.param_set = NULL;
    double **out = g_new0(double *, v->runs->len + 1);
    bool ok = true;
    for (guint i = 0; ok && i < v->runs->len; i++) {
        Measured *m = v->runs->pdata[i];
        if (!m->pub.done)
            continue;
        ok = validate_predict_run(&def, m, err);
        out[i] = g_new(double, m->pub.n_rows + 1);
        for (size_t k = 0; ok && k < m->pub.n_rows; k++)
            out[i][k] = m->pub.rows[k].predicted_s;
        ok = ok && validate_predict_run(&v->o, m, err);
    }
    if (!ok) {
        for (guint i = 0; i < v->runs->len; i++)
            g_free(out[i]);
        g_free(out);
        return NULL;
    }
    return out;
}

bool validate_plot(Validation *v, const char *path, GError **err)
{
    GError *e = NULL;
    double **base = default_predictions(v, &e);
    if (e) {
        g_propagate_error(err, e);
        return false;
    }
    int n = 0;
    PlotTrace *pt = g_new0(PlotTrace, v->runs->len > 0 ? v->runs->len : 1);
    char **labels = g_new0(char *, v->runs->len + 1);
    for (guint i = 0; i < v->runs->len; i++) {
        const ValidateRun *r = validate_run(v, i);
        if (!r->done)
            continue;
        size_t len = r->n_rows + 1;
        double *size = g_new(double, len), *meas = g_new(double, len), *pred = g_new(double, len),
               *lo = g_new(double, len), *hi = g_new(double, len);
        for (size_t k = 0; k < r->n_rows; k++) {
            size[k] = r->rows[k].size_bytes;
            meas[k] = r->rows[k].measured_s;
            pred[k] = r->rows[k].predicted_s;
            lo[k] = r->rows[k].p10_s;
            hi[k] = r->rows[k].p90_s;
        }
        char *b = g_path_get_basename(r->trace);
        labels[n] = g_strdup_printf("%s (%s)", b, r->op);
        g_free(b);
        pt[n] = (PlotTrace){.label = labels[n], .n = (int)r->n_rows, .size = size, .measured = meas,
                            .predicted = pred, .p10 = lo, .p90 = hi, .baseline = base ? base[i] : NULL,
                            .baseline_label = "default parameters"};
        n++;
    }
    char *title = g_strdup_printf("measured (points) and predicted (lines, p10-p90 shaded%s) on %s",
                                  base ? "; dashed: default parameters" : "", v->o.topology);
    bool ok = plot_validation(path, title, pt, n, err);
    g_free(title);
    for (int j = 0; j < n; j++) {
        g_free((double *)pt[j].size);
        g_free((double *)pt[j].measured);
        g_free((double *)pt[j].predicted);
        g_free((double *)pt[j].p10);
        g_free((double *)pt[j].p90);
    }
    for (guint i = 0; base && i < v->runs->len; i++)
        g_free(base[i]);
    g_free(base);
    g_free(pt);
    g_strfreev(labels);
    return ok;
}
