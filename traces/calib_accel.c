/* `shardsim calibrate --accelerator`: the accelerator model's efficiency
 * parameters fitted (calib_core.h) to GEMM timings (m,n,k,dtype,seconds, as
 * traces/capture's shardsim-gemm prints them) and to measured training steps
 * (a scenario per row: a file and overrides, with a step time or tokens/s);
 * the overlay on the preset. */
#include "calibrate.h"
#include "calib_core.h"
#include "kineto.h"
#include "scenario.h"
#include "sim_data.h"
#include "sim_file.h"
#include "sweep.h"
#include "trace_text.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    bool gemm;
    AccelDtype dt;
    double m, n, k;
    StepScenario *sc; /* a step row */
} Row;

struct AccelCalibration {
    char *name;
    Accel *prior, *work;
    GArray *rows;  /* Row */
    GArray *meas;  /* double: seconds */
    GArray *group; /* int: the file each row came from */
    GPtrArray *files;
    CalibFit *fit;
};

AccelCalibration *calib_accel_new(const char *accel, GError **err)
{
    Accel *a = accel_load(accel, err);
    if (!a)
        return NULL;
    AccelCalibration *c = g_new0(AccelCalibration, 1);
    c->name = g_strdup(accel);
    c->prior = a;
    c->work = accel_copy(a);
    c->rows = g_array_new(FALSE, FALSE, sizeof(Row));
    c->meas = g_array_new(FALSE, FALSE, sizeof(double));
    c->group = g_array_new(FALSE, FALSE, sizeof(int));
    c->files = g_ptr_array_new_with_free_func(g_free);
    return c;
}

void calib_accel_free(AccelCalibration *c)
{
    if (!c)
        return;
    for (guint i = 0; i < c->rows->len; i++)
        step_scenario_free(g_array_index(c->rows, Row, i).sc);
    g_array_free(c->rows, TRUE);
    g_array_free(c->meas, TRUE);
    g_array_free(c->group, TRUE);
    g_ptr_array_free(c->files, TRUE);
    accel_free(c->prior);
    accel_free(c->work);
    calib_fit_free(c->fit);
    g_free(c->name);
    g_free(c);
}

static bool bad(GError **err, const char *file, int line, const char *fmt, ...) G_GNUC_PRINTF(4, 5);

static bool bad(GError **err, const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *what = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "%s:%d: %s", file, line, what);
    g_free(what);
    return false;
}

/* The first name a header gives twice, or NULL. */
static const char *repeated_column(char **f)
{
    for (int j = 0; f[j]; j++)
        for (int q = 0; q < j; q++)
            if (!strcmp(f[q], f[j]))
                return f[j];
    return NULL;
}

/* A number in [lo, hi]: measurements outside any run's range (a step of
 * a nanosecond, 1e-308 tokens/s) are typing errors, and would overflow the
 * fit's residuals far from the row that holds them. */
static bool number_in(const char *s, double lo, double hi, double *out)
{
    char *end;
    if (strpbrk(s, "xX")) /* strtod's hexadecimal floats: not how a table writes a measurement */
        return false;
    *out = g_ascii_strtod(s, &end);
    return end != s && *end == '\0' && isfinite(*out) && *out >= lo && *out <= hi;
}

/* A GEMM dimension: a whole number of elements. */
static bool dim(const char *s, double *out) { return number_in(s, 1, 1e7, out) && *out == floor(*out); }

static void add_row(AccelCalibration *c, const Row *r, double seconds)
{
    int g = (int)c->files->len - 1;
    g_array_append_val(c->rows, *r);
    g_array_append_val(c->meas, seconds);
    g_array_append_val(c->group, g);
}

/* m,n,k,dtype,seconds */
static bool gemm_row(AccelCalibration *c, char **f, const char *file, int line, GError **err)
{
    Row r = {.gemm = true};
    double s;
    if (g_strv_length(f) != 5 || !dim(f[0], &r.m) || !dim(f[1], &r.n) || !dim(f[2], &r.k) ||
        !number_in(f[4], 1e-9, 1e4, &s))
        return bad(err, file, line,
                   "a GEMM row is m,n,k,dtype,seconds: whole dimensions from 1 to 1e7, seconds from 1e-9 to 1e4");
    if (!accel_dtype_from_name(f[3], &r.dt) || !accel_has_dtype(c->prior, r.dt))
        return bad(err, file, line, "the data type is not one this accelerator runs");
    /* no fit can reach a rate above the chip's fastest peak: a unit or a
     * typing slip (fp32's own peak is no bound: PyTorch runs fp32 GEMMs as
     * TF32 on the tensor cores, 20 TFLOP/s on an A100 of 19.5 in a real
     * profile) */
    double rate = 2 * r.m * r.n * r.k / s, peak = 0;
    for (int d = 0; d < ACCEL_NUM_DTYPES; d++)
        peak = fmax(peak, accel_peak_flops(c->prior, (AccelDtype)d));
    if (rate > peak)
        return bad(err, file, line, "%.4g TFLOP/s, above this accelerator's fastest peak of %.4g TFLOP/s: seconds, not ms?",
                   rate / 1e12, peak / 1e12);
    add_row(c, &r, s);
    return true;
}

/* Sets the dotted key (a.b.c) of `root` to the cell: a JSON number, true,
 * false, null or array as such (the whole cell: "2x" is a string, which the
 * scenario then refuses where it wants a number; an array's commas need the
 * cell quoted), anything else as a string. */
void calib_accel_set_key(cJSON *root, const char *key, const char *cell)
{
    sweep_model_by_name(root, key);
    gchar **parts = g_strsplit(key, ".", -1);
    cJSON *o = root;
    for (int i = 0; parts[i + 1]; i++) {
        cJSON *next = cJSON_GetObjectItemCaseSensitive(o, parts[i]);
        if (!cJSON_IsObject(next)) {
            cJSON_DeleteItemFromObjectCaseSensitive(o, parts[i]);
            next = cJSON_AddObjectToObject(o, parts[i]);
        }
        o = next;
    }
    const char *last = parts[g_strv_length(parts) - 1];
    cJSON *v = cJSON_ParseWithOpts(cell, NULL, true);
    /* 1e999 is read as infinity, which would print as null: a string, refused where a number is wanted */
    if (!v || cJSON_IsObject(v) || cJSON_IsString(v) || (cJSON_IsNumber(v) && !isfinite(v->valuedouble))) {
        cJSON_Delete(v);
        v = cJSON_CreateString(cell);
    }
    cJSON_DeleteItemFromObjectCaseSensitive(o, last);
    cJSON_AddItemToObject(o, last, v);
    g_strfreev(parts);
}

void calib_accel_set_file_key(cJSON *root, const char *key, const char *cell, const char *table)
{
    if ((strcmp(key, "model") && strcmp(key, "topology")) || !sim_data_is_path(cell) || g_path_is_absolute(cell) ||
        !strcmp(cell, "-")) {
        calib_accel_set_key(root, key, cell);
        return;
    }
    char *dir = g_path_get_dirname(table), *path = g_build_filename(dir, cell, NULL);
    calib_accel_set_key(root, key, path);
    g_free(dir);
    g_free(path);
}

/* The dotted path of the first value (pre-order) on LINE of DOC under O;
 * NULL if none. */
static char *path_at_line(const SimJsonDoc *doc, const cJSON *o, int line, const char *prefix)
{
    for (const cJSON *c = o->child; c; c = c->next) {
        if (!c->string)
            continue; /* inside arrays: the array's own path is said */
        char *p = *prefix ? g_strdup_printf("%s.%s", prefix, c->string) : g_strdup(c->string);
        if (sim_json_line(doc, c) == line)
            return p;
        char *q = cJSON_IsObject(c) ? path_at_line(doc, c, line, p) : NULL;
        g_free(p);
        if (q)
            return q;
    }
    return NULL;
}

/* Whether the table's columns HEAD set the dotted PATH, what holds it, or
 * something inside it (an error said at "model" when a cell set
 * model.layers). */
static bool cell_sets(char **head, const char *path)
{
    size_t m = strlen(path);
    for (int i = 0; head[i]; i++) {
        size_t n = strlen(head[i]);
        if (!strncmp(path, head[i], n) && (path[n] == 0 || path[n] == '.'))
            return true;
        if (!strncmp(head[i], path, m) && head[i][m] == '.')
            return true;
    }
    return false;
}

/* A row scenario's error is at a line of its merged text (the file with the
 * row's cells set, re-printed), which no one sees: said instead at the
 * key's own line in the scenario's file, or at the table's row where a
 * cell set it.  E's message is left as it is where the line is not found. */
static void say_row_error_where(GError *e, const char *merged_name, const char *merged, const char *scen_path,
                                const char *scen_text, size_t scen_len, char **head, const char *table, int row)
{
    size_t n = strlen(merged_name);
    if (!e || strncmp(e->message, merged_name, n) || e->message[n] != ':')
        return;
    char *end = NULL;
    long line = strtol(e->message + n + 1, &end, 10);
    if (line <= 0 || *end != ':')
        return;
    SimJsonDoc *d1 = sim_json_parse(merged_name, merged, strlen(merged), NULL);
    SimJsonDoc *d0 = sim_json_parse(scen_path, scen_text, scen_len, NULL);
    char *path = d1 ? path_at_line(d1, sim_json_root(d1), (int)line, "") : NULL;
    const cJSON *it = path && d0 && !cell_sets(head, path) ? sim_json_root(d0) : NULL;
    gchar **parts = path ? g_strsplit(path, ".", -1) : NULL;
    for (gchar **p = parts; it && p && *p; p++)
        it = cJSON_GetObjectItemCaseSensitive(it, *p);
    char *msg = NULL;
    if (it && sim_json_line(d0, it) > 0)
        msg = g_strdup_printf("%s:%d: %s:%d:%s", table, row, scen_path, sim_json_line(d0, it), end + 1);
    else if (path)
        msg = g_strdup_printf("%s:%d: \"%s\" as the row sets it:%s", table, row, path, end + 1);
    if (msg) {
        g_free(e->message);
        e->message = msg;
    }
    g_strfreev(parts);
    g_free(path);
    if (d0)
        sim_json_free(d0);
    if (d1)
        sim_json_free(d1);
}

/* The header's column names are keys (sweep_key_shape): a trailing
 * comma's empty column, an empty part or thousands of parts refused at the
 * header's line. */
static bool columns_are_keys(char **head, const char *file, int line, GError **err)
{
    for (int i = 0; head[i]; i++)
        switch (sweep_key_shape(head[i])) {
        case SWEEP_KEY_OK: break;
        case SWEEP_KEY_EMPTY: return bad(err, file, line, "column %d has no name", i + 1);
        case SWEEP_KEY_EMPTY_PART:
            return bad(err, file, line, "column %d (\"%s\") has an empty part in its dotted name", i + 1,
                       SIM_ECHO(head[i]));
        case SWEEP_KEY_TOO_DEEP:
            return bad(err, file, line, "column %d (\"%s\") has too many parts in its dotted name", i + 1,
                       SIM_ECHO(head[i]));
        }
    return true;
}

/* The devices a step row's machine may have: 8x the largest in the
 * published step tables (2304 GPUs of dgxc-benchmarking's H100 rows). */
#define CALIB_MAX_ROW_DEVICES 16384

/* A scenario row: "scenario" (a file, relative to the table's folder), the
 * measurement (step_time_s or tokens_per_s) and overrides by dotted key;
 * ref.* columns (the source's own labels) are not applied. */
static bool step_row(AccelCalibration *c, char **head, char **f, const char *file, int line, GError **err)
{
    if (g_strv_length(f) != g_strv_length(head))
        return bad(err, file, line, "the row has %u cells, the header %u (a cell holding a comma goes in double quotes)",
                   g_strv_length(f), g_strv_length(head));
    const char *scen = NULL;
    double step = 0, tps = 0;
    for (int i = 0; head[i]; i++) {
        if (!strcmp(head[i], "scenario"))
            scen = f[i];
        else if (!strcmp(head[i], "step_time_s") && !number_in(f[i], 1e-6, 1e6, &step))
            return bad(err, file, line, "step_time_s must be a number of seconds from 1e-6 to 1e6");
        else if (!strcmp(head[i], "tokens_per_s") && !number_in(f[i], 1e-3, 1e12, &tps))
            return bad(err, file, line, "tokens_per_s must be a number from 1e-3 to 1e12");
        else if (!strcmp(head[i], "accelerator") && g_ascii_strcasecmp(f[i], accel_name(c->prior)))
            /* every row runs on the accelerator fitted: another one's row would be priced as this one's */
            return bad(err, file, line, "the row ran on \"%s\", the fit is of %s: a table per accelerator (or leave the "
                       "column out)", f[i], accel_name(c->prior));
    }
    if (step > 0 && tps > 0) /* two measurements of one step: which one counts would be a guess */
        return bad(err, file, line, "the row gives both step_time_s and tokens_per_s: give one");
    if (!scen || !*scen)
        return bad(err, file, line, "the row names no scenario");
    for (int i = 0; head[i]; i++) /* standard input is the command line's, read once */
        if (!strcmp(f[i], "-") &&
            (!strcmp(head[i], "scenario") || !strcmp(head[i], "model") || !strcmp(head[i], "topology")))
            return bad(err, file, line, "\"%s\" = \"-\": a table's cell names a file%s, not standard input", head[i],
                       strcmp(head[i], "scenario") ? " or a preset" : "");
    char *dir = g_path_get_dirname(file), *path = g_path_is_absolute(scen) ? g_strdup(scen) : g_build_filename(dir, scen, NULL);
    g_free(dir);
    size_t len = 0;
    char *text0 = sim_file_read(path, SIM_FILE_JSON_MAX, "JSON input", &len, err);
    bool ok = text0 != NULL;
    if (!ok) /* the table's line first: which row named it */
        g_prefix_error(err, "%s:%d: ", file, line);
    cJSON *root = ok ? cJSON_ParseWithLength(text0, len) : NULL;
    if (ok && !root)
        ok = bad(err, path, 1, "not JSON (run it alone for the position)");
    for (int i = 0; ok && head[i]; i++)
        if (strcmp(head[i], "scenario") && strcmp(head[i], "step_time_s") && strcmp(head[i], "tokens_per_s") &&
            !g_str_has_prefix(head[i], "ref.")) /* ref.*: the source's labels, not overrides */
            calib_accel_set_file_key(root, head[i], f[i], file);
    if (ok) {
        char *text = cJSON_Print(root), *name = g_strdup_printf("%s:%d (%s)", file, line, scen);
        Row r = {.sc = step_scenario_parse(name, text, strlen(text), err)};
        ok = r.sc != NULL;
        if (!ok)
            say_row_error_where(*err, name, text, path, text0, len, head, file, line);
        /* each row is run again for every parameter at every iteration (about a hundred
         * times): a machine beyond the largest published step tables' (thousands of GPUs)
         * would hold the fit for hours (review 9: 100000 nodes, still running at 270 s) */
        int devices = ok ? topo_num_ranks(step_scenario_topo(r.sc)) : 0;
        if (ok && devices > CALIB_MAX_ROW_DEVICES) {
            ok = bad(err, file, line, "the row's machine has %d devices, more than the %d a calibration row may have "
                     "(each row runs about a hundred times; run it alone with 'shardsim run')", devices,
                     CALIB_MAX_ROW_DEVICES);
            step_scenario_free(r.sc);
        }
        if (ok) {
            step_scenario_set_accel(r.sc, c->prior);
            add_row(c, &r, tps > 0 ? -tps : step); /* tokens/s turned into seconds once predicted */
        }
        free(text);
        g_free(name);
    }
    cJSON_Delete(root);
    g_free(text0);
    g_free(path);
    return ok;
}

bool calib_accel_add(AccelCalibration *c, const char *path, GError **err)
{
    size_t len = 0;
    char *text = sim_file_read(path, SIM_FILE_TRACE_MAX, "table", &len, err);
    if (!text)
        return false;
    if (!trace_text_has_no_nul(path, text, len, err)) {
        g_free(text);
        return false;
    }
    /* a profile's rows are a derived table's: said so, not as lines of the JSON (review 9) */
    char *where = NULL;
    if (kineto_looks_like(text)) { /* a PyTorch profile: its GEMM operators with shapes as the table */
        where = g_strdup_printf("%s (the table of its GEMM operators)", path);
        KinetoProfile *p = kineto_parse(path, text, len, err);
        g_free(text);
        bool parsed = p != NULL;
        text = p ? kineto_gemm_table(p) : NULL;
        kineto_free(p);
        if (!text) {
            if (parsed)
                g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "%s: no GEMM operator with shapes in this profile (take it with record_shapes=True)", path);
            g_free(where);
            return false;
        }
    }
    const char *name = where ? where : path;
    g_ptr_array_add(c->files, g_strdup(path));
    /* a UTF-8 byte-order mark, as spreadsheets save CSV, is not the header's */
    gchar **lines = g_strsplit(g_str_has_prefix(text, "\xEF\xBB\xBF") ? text + 3 : text, "\n", -1), **head = NULL;
    bool ok = true, gemm = false;
    int rows = 0;
    for (int i = 0; ok && lines[i]; i++) {
        char *l = g_strstrip(lines[i]);
        if (!*l || *l == '#')
            continue;
        gchar **f = sim_csv_fields(l, err);
        if (!f) {
            g_prefix_error(err, "%s:%d: ", name, i + 1);
            ok = false;
            break;
        }
        const char *twice = head ? NULL : repeated_column(f);
        if (twice) {
            ok = bad(err, name, i + 1, "column \"%s\" given twice", twice);
            g_strfreev(f);
            break;
        }
        if (!head && !columns_are_keys(f, name, i + 1, err)) {
            ok = false;
            g_strfreev(f);
            break;
        }
        if (!head) {
            head = g_strdupv(f);
            static const char *const gemm_head[] = {"m", "n", "k", "dtype", "seconds", NULL};
            gemm = g_strv_equal((const gchar *const *)f, gemm_head); /* the cells, as every line is read */
            bool scen = g_strv_contains((const char *const *)f, "scenario") &&
                        (g_strv_contains((const char *const *)f, "step_time_s") ||
                         g_strv_contains((const char *const *)f, "tokens_per_s"));
            if (!gemm && !scen)
                ok = bad(err, name, i + 1, "the header is neither m,n,k,dtype,seconds nor a scenario table "
                                           "(scenario, step_time_s or tokens_per_s, and override keys)");
        } else {
            ok = gemm ? gemm_row(c, f, name, i + 1, err) : step_row(c, head, f, path, i + 1, err);
            rows++;
        }
        g_strfreev(f);
    }
    if (ok && rows == 0)
        ok = bad(err, name, 1, "no rows");
    g_strfreev(head);
    g_strfreev(lines);
    g_free(where);
    g_free(text);
    return ok;
}

static const char *m_key(void *u, int i) { return accel_param_key(i); }

static void m_bounds(void *u, int i, double *lo, double *hi, double *sd, bool *fit)
{
    accel_param_bounds(i, lo, hi, sd);
    *fit = true;
}

static double m_prior(void *u, int i) { return accel_param_get(((AccelCalibration *)u)->prior, i); }

/* One prediction: the rows wanted, each step row's scenario on its own
 * copy of the accelerator, run on a thread pool (the rows are independent:
 * the same results whatever the threads). */
typedef struct {
    AccelCalibration *c;
    const bool *want;
    double *pred;
    GError **errs; /* per row */
} Predict;

static void predict_row(int k, void *user)
{
    Predict *p = user;
    Row *r = &g_array_index(p->c->rows, Row, k);
    if ((p->want && !p->want[k]) || r->gemm)
        return;
    cJSON *out = step_scenario_run(r->sc, 0, NULL, &p->errs[k]);
    if (!out)
        return;
    p->pred[k] = cJSON_GetObjectItem(out, "step_time_s")->valuedouble;
    double *m = &g_array_index(p->c->meas, double, k);
    if (*m < 0) /* tokens/s: the tokens of a step are the scenario's */
        *m = cJSON_GetObjectItem(out, "tokens_per_s")->valuedouble * p->pred[k] / -*m;
    cJSON_Delete(out);
}

static bool m_predict(void *u, const double *values, const bool *want, double *pred, GError **err)
{
    AccelCalibration *c = u;
    for (int i = 0; i < accel_param_count(); i++)
        if (accel_param_get(c->work, i) > 0)
            accel_param_set(c->work, i, values[i]);
    int n = (int)c->rows->len;
    Predict p = {c, want, pred, g_new0(GError *, n > 0 ? n : 1)};
    for (int k = 0; k < n; k++) {
        Row *r = &g_array_index(c->rows, Row, k);
        if (want && !want[k])
            continue;
        if (r->gemm)
            pred[k] = accel_gemm_time(c->work, r->dt, r->m, r->n, r->k);
        else
            step_scenario_set_accel(r->sc, c->work);
    }
    sweep_map(n, 0, predict_row, &p, NULL, NULL);
    bool ok = true;
    for (int k = 0; k < n; k++) {
        if (p.errs[k] && ok) {
            g_propagate_error(err, p.errs[k]);
            ok = false;
        } else if (p.errs[k]) {
            g_error_free(p.errs[k]);
        }
    }
    g_free(p.errs);
    return ok;
}

bool calib_accel_run(AccelCalibration *c, GError **err)
{
    double *meas = (double *)(void *)c->meas->data;
    CalibModel m = {c, accel_param_count(), m_key, m_bounds, m_prior, m_predict};
    /* one prediction turns tokens/s into seconds before the fit sees them */
    double *pred = g_new(double, c->rows->len + 1), *v = g_new(double, accel_param_count());
    for (int i = 0; i < accel_param_count(); i++)
        v[i] = m_prior(c, i);
    bool ok = c->rows->len > 0 && m_predict(c, v, NULL, pred, err);
    g_free(pred);
    g_free(v);
    if (!ok) {
        if (c->rows->len == 0)
            g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "calibrate: no rows to fit");
        return false;
    }
    c->fit = calib_fit(&m, (int)c->rows->len, meas, NULL, (int *)(void *)c->group->data, err);
    return c->fit != NULL;
}

cJSON *calib_accel_report_json(const AccelCalibration *c)
{
    cJSON *o = cJSON_CreateObject(), *files = cJSON_CreateArray();
    cJSON_AddStringToObject(o, "accelerator", c->name);
    for (guint i = 0; i < c->files->len; i++)
        cJSON_AddItemToArray(files, cJSON_CreateString(c->files->pdata[i]));
    cJSON_AddItemToObject(o, "traces", files);
    calib_fit_report(c->fit, o);
    return o;
}

cJSON *calib_accel_overlay_json(const AccelCalibration *c)
{
    cJSON *o = cJSON_CreateObject(), *cal = cJSON_CreateObject();
    GString *src = g_string_new("fitted from");
    for (guint i = 0; i < c->files->len; i++) {
        char *b = g_path_get_basename(c->files->pdata[i]);
        g_string_append_printf(src, "%s %s", i ? "," : "", b);
        g_free(b);
    }
    g_string_append_printf(src, " (%u rows) by shardsim calibrate", c->rows->len);
    cJSON_AddStringToObject(o, "overlay", "accelerator efficiencies, on the preset named by base");
    cJSON_AddStringToObject(o, "base", accel_name(c->prior));
    cJSON_AddItemToObject(o, "parameters", calib_fit_parameters(c->fit, src->str, NULL));
    cJSON_AddNumberToObject(cal, "n_rows", c->rows->len);
    cJSON_AddStringToObject(cal, "residuals", "p10 and p90 of log(predicted / measured) of the cross-validated "
                                              "predictions");
    calib_fit_band(c->fit, true, "log_residual", cal);
    cJSON_AddItemToObject(o, "calibration", cal);
    g_string_free(src, TRUE);
    return o;
}
