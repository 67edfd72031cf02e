/* A sweep's results as output: the scaling curves against devices, the CSV
 * file of one row per point, and the scaling and memory plots. */
#include "sim_file.h"
#include "sweep_grid.h"
#include "plot.h"

#include <string.h>

static double num_at(const cJSON *o, const char *key)
{
    const cJSON *v = sweep_get_path(o, key);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

typedef struct {
    double devices, step, thr, mem;
} CurvePoint;

static int cmp_curve_point(const void *a, const void *b)
{
    double x = ((const CurvePoint *)a)->devices, y = ((const CurvePoint *)b)->devices;
    return x < y ? -1 : x > y;
}

/* The key's last component ("weight_update") when no other axis ends the
 * same way: legends stay short. */
static const char *short_key(const Sweep *s, int axis)
{
    const char *k = sweep_axis_key(s, axis), *dot = strrchr(k, '.');
    const char *tail = dot ? dot + 1 : k;
    for (int a = 0; a < (int)s->axes->len; a++) {
        const char *o = sweep_axis_key(s, a), *od = strrchr(o, '.');
        if (a != axis && !strcmp(od ? od + 1 : o, tail))
            return k;
    }
    return tail;
}

SweepCurve *sweep_curves(const Sweep *s, const cJSON *run, int *ncurves)
{
    int dev_axis = sweep_device_axis(s);
    const cJSON *pts = cJSON_GetObjectItemCaseSensitive(run, "points");
    GPtrArray *labels = g_ptr_array_new_with_free_func(g_free);
    GPtrArray *members = g_ptr_array_new(); /* GArray of CurvePoint per curve */
    const cJSON *p;
    cJSON_ArrayForEach(p, pts)
    {
        const cJSON *res = cJSON_GetObjectItemCaseSensitive(p, "result");
        int idx = (int)num_at(p, "index");
        if (!res || idx < 0 || idx >= s->npoints)
            continue;
        GString *lab = g_string_new(NULL);
        for (int a = 0; a < (int)s->axes->len; a++) {
            if (a == dev_axis)
                continue;
            char *v = sweep_value_text(sweep_point_value(s, idx, a));
            g_string_append_printf(lab, "%s%s=%s", lab->len ? ", " : "", short_key(s, a), v);
            g_free(v);
        }
        if (!lab->len)
            g_string_append(lab, s->name);
        guint c;
        for (c = 0; c < labels->len; c++)
            if (!strcmp(labels->pdata[c], lab->str))
                break;
        if (c == labels->len) {
            g_ptr_array_add(labels, g_strdup(lab->str));
            g_ptr_array_add(members, g_array_new(FALSE, FALSE, sizeof(CurvePoint)));
        }
        g_string_free(lab, TRUE);
        CurvePoint cp = {num_at(res, "config.devices"), num_at(res, "step_time_s"), num_at(res, "samples_per_s"),
                         num_at(res, "memory_per_device_bytes.total")};
        g_array_append_val(members->pdata[c], cp);
    }
    int nc = (int)labels->len;
    SweepCurve *cv = g_new0(SweepCurve, nc > 0 ? nc : 1);
    for (int c = 0; c < nc; c++) {
        GArray *m = members->pdata[c];
        /* stable order for equal device counts: by point index, as added */
        CurvePoint *cp = (CurvePoint *)(void *)m->data;
        for (guint i = 1; i < m->len; i++) /* insertion sort: stable */
            for (guint j = i; j > 0 && cmp_curve_point(&cp[j - 1], &cp[j]) > 0; j--) {
                CurvePoint t = cp[j];
                cp[j] = cp[j - 1];
                cp[j - 1] = t;
            }
        SweepCurve *k = &cv[c];
        k->label = g_strdup(labels->pdata[c]);
        k->n = (int)m->len;
        k->devices = g_new(double, k->n);
        k->step_time = g_new(double, k->n);
        k->throughput = g_new(double, k->n);
        k->efficiency = g_new(double, k->n);
        k->memory = g_new(double, k->n);
        double ref = k->n ? cp[0].thr / cp[0].devices : NAN;
        for (int i = 0; i < k->n; i++) {
            k->devices[i] = cp[i].devices;
            k->step_time[i] = cp[i].step;
            k->throughput[i] = cp[i].thr;
            k->memory[i] = cp[i].mem;
            k->efficiency[i] = ref > 0 ? cp[i].thr / cp[i].devices / ref : NAN;
        }
        g_array_free(m, TRUE);
    }
    g_ptr_array_free(members, TRUE);
    g_ptr_array_free(labels, TRUE);
    *ncurves = nc;
    return cv;
}

void sweep_curves_free(SweepCurve *c, int ncurves)
{
    if (!c)
        return;
    for (int i = 0; i < ncurves; i++) {
        g_free(c[i].label);
        g_free(c[i].devices);
        g_free(c[i].step_time);
        g_free(c[i].throughput);
        g_free(c[i].efficiency);
        g_free(c[i].memory);
    }
    g_free(c);
}

/* CSV (RFC 4180): CRLF, fields with , " CR LF quoted, quotes doubled. */

static void csv_field(GString *out, const char *s, bool first)
{
    if (!first)
        g_string_append_c(out, ',');
    if (!strpbrk(s, ",\"\r\n")) {
        g_string_append(out, s);
        return;
    }
    g_string_append_c(out, '"');
    for (const char *p = s; *p; p++) {
        if (*p == '"')
            g_string_append_c(out, '"');
        g_string_append_c(out, *p);
    }
    g_string_append_c(out, '"');
}

static void csv_number(GString *out, double v)
{
    char buf[G_ASCII_DTOSTR_BUF_SIZE] = "";
    if (!isnan(v))
        g_ascii_formatd(buf, sizeof buf, "%.10g", v);
    csv_field(out, buf, false);
}

bool sweep_write_csv(const Sweep *s, const cJSON *run, const char *path, GError **err)
{
    static const char *const cols[] = {"devices", "dp", "tp", "pp", "global_batch", "step_time_s", "step_time_p10_s",
                                       "step_time_p90_s", "samples_per_s", "tokens_per_s", "mfu", "flops_per_device", "memory_per_device_bytes", "fits",
                                       "error"};
    GString *out = g_string_new(NULL);
    int na = sweep_num_axes(s);
    for (int a = 0; a < na; a++)
        csv_field(out, sweep_axis_key(s, a), a == 0);
    for (size_t c = 0; c < G_N_ELEMENTS(cols); c++)
        csv_field(out, cols[c], na == 0 && c == 0);
    g_string_append(out, "\r\n");
    const cJSON *p;
    cJSON_ArrayForEach(p, cJSON_GetObjectItem(run, "points"))
    {
        int i = (int)num_at(p, "index");
        for (int a = 0; a < na; a++) {
            char *v = sweep_value_text(sweep_point_value(s, i, a));
            csv_field(out, v, a == 0);
            g_free(v);
        }
        const cJSON *r = cJSON_GetObjectItem(p, "result");
        const cJSON *cfg = cJSON_GetObjectItem(r, "config");
        if (na == 0)
            g_string_append_c(out, ','); /* csv_number adds a leading comma */
        csv_number(out, num_at(cfg, "devices"));
        csv_number(out, num_at(cfg, "dp"));
        csv_number(out, num_at(cfg, "tp"));
        csv_number(out, num_at(cfg, "pp"));
        csv_number(out, num_at(cfg, "global_batch"));
        csv_number(out, num_at(r, "step_time_s"));
        csv_number(out, num_at(r, "step_time_p10_s"));
        csv_number(out, num_at(r, "step_time_p90_s"));
        csv_number(out, num_at(r, "samples_per_s"));
        csv_number(out, num_at(r, "tokens_per_s"));
        csv_number(out, num_at(r, "mfu"));
        csv_number(out, num_at(r, "flops_per_device"));
        csv_number(out, num_at(cJSON_GetObjectItem(r, "memory_per_device_bytes"), "total"));
        csv_field(out, r ? (cJSON_IsTrue(cJSON_GetObjectItem(r, "fits")) ? "true" : "false") : "", false);
        const cJSON *e = cJSON_GetObjectItem(p, "error");
        csv_field(out, e ? e->valuestring : "", false);
        g_string_append(out, "\r\n");
    }
    GError *e = NULL;
    bool ok = sim_file_write(path, out->str, (gssize)out->len, &e);
    if (!ok) {
        g_set_error(err, SIM_ERROR, SIM_ERROR_INTERNAL, "%s: %s", path, e->message);
        g_error_free(e);
    }
    g_string_free(out, TRUE);
    return ok;
}

bool sweep_plot_scaling(const Sweep *s, const cJSON *run, const char *path, GError **err)
{
    int nc = 0;
    SweepCurve *cv = sweep_curves(s, run, &nc);
    PlotSeries *ser = g_new0(PlotSeries, nc > 0 ? nc : 1);
    for (int c = 0; c < nc; c++)
        ser[c] = (PlotSeries){.label = cv[c].label,
                              .n = cv[c].n,
                              .x = cv[c].devices,
                              .step_time = cv[c].step_time,
                              .throughput = cv[c].throughput,
                              .efficiency = cv[c].efficiency,
                              .memory = cv[c].memory};
    bool ok = nc > 0;
    if (!ok)
        g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "%s: no point ran, nothing to plot", path);
    else
        ok = plot_scaling(path, ser, nc, err);
    g_free(ser);
    sweep_curves_free(cv, nc);
    return ok;
}

bool sweep_plot_memory(const Sweep *s, const cJSON *run, const char *path, GError **err)
{
    GArray *bars = g_array_new(FALSE, TRUE, sizeof(PlotMemoryBar));
    GPtrArray *labels = g_ptr_array_new_with_free_func(g_free);
    double cap = -1;
    const cJSON *p;
    cJSON_ArrayForEach(p, cJSON_GetObjectItem(run, "points"))
    {
        const cJSON *r = cJSON_GetObjectItem(p, "result");
        if (!r)
            continue;
        const cJSON *m = cJSON_GetObjectItem(r, "memory_per_device_bytes");
        char *lab = sweep_point_label(s, (int)num_at(p, "index"));
        g_ptr_array_add(labels, lab);
        PlotMemoryBar b = {.label = lab,
                           .weights = num_at(m, "weights"),
                           .gradients = num_at(m, "gradients"),
                           .optimizer = num_at(m, "optimizer_state"),
                           .activations = num_at(m, "activations"),
                           .buffers = num_at(m, "buffers"),
                           .working_set = num_at(m, "working_set"),
                           .reserve = num_at(m, "reserve")};
        g_array_append_val(bars, b);
        double hbm = num_at(m, "hbm");
        cap = cap < 0 ? hbm : cap == hbm ? cap : 0; /* no line when the accelerators differ */
    }
    bool ok = bars->len > 0;
    if (!ok)
        g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "%s: no point ran, nothing to plot", path);
    else
        ok = plot_memory(path, (const PlotMemoryBar *)(void *)bars->data, (int)bars->len, cap, err);
    g_array_free(bars, TRUE);
    g_ptr_array_free(labels, TRUE);
    return ok;
}

