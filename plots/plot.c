/* gnuplot output of scaling curves and memory breakdowns (plot.h); the
 * gnuplot job is plot_job.c's, predicted-versus-measured and Pareto plots
 * plot_compare.c's. */
#include "plot_internal.h"

#include <math.h>
#include <string.h>

/* ---- scaling curves ---- */

enum { P_STEP, P_THROUGHPUT, P_EFFICIENCY, P_MEMORY, N_PANELS };

static const double *series_y(const PlotSeries *s, int panel)
{
    switch (panel) {
    case P_STEP:
        return s->step_time;
    case P_THROUGHPUT:
        return s->throughput;
    case P_EFFICIENCY:
        return s->efficiency;
    default:
        return s->memory;
    }
}

/* Log axes (x always; y for time and throughput) need positive values. */
static bool panel_logy(int panel)
{
    return panel == P_STEP || panel == P_THROUGHPUT;
}

static bool series_has_panel(const PlotSeries *s, int panel)
{
    const double *y = series_y(s, panel);
    if (!y || !s->x)
        return false;
    for (int i = 0; i < s->n; i++)
        if (plot_point_valid(s->x[i], y[i], panel_logy(panel)))
            return true;
    return false;
}

/* Small multiples: the curves of one facet, [first, first + n) of order[]. */
typedef struct {
    char *title; /* NULL: the only facet */
    int first, n;
} Facet;

/* A series' facet: its group, else its label up to the first ", " (the
 * sweep's first varied key), else none. */
static char *series_group(const PlotSeries *s)
{
    if (s->group)
        return g_strdup(s->group);
    const char *l = s->label ? s->label : "", *comma = strstr(l, ", ");
    return comma ? g_strndup(l, (gsize)(comma - l)) : NULL;
}

/* Up to PLOT_MAX_CURVES series: one facet.  More: one facet per group when
 * there are several groups of at most PLOT_MAX_CURVES each, else facets of
 * PLOT_MAX_CURVES series in order.  Fills order[] (series indices by facet). */
static Facet *make_facets(const PlotSeries *series, int nseries, int *order, int *nfacets)
{
    Facet *f = g_new0(Facet, (gsize)nseries + 1);
    for (int k = 0; k < nseries; k++)
        order[k] = k;
    if (nseries <= PLOT_MAX_CURVES) {
        f[0] = (Facet){NULL, 0, nseries};
        *nfacets = 1;
        return f;
    }
    char **group = g_new0(char *, (gsize)nseries);
    bool grouped = true;
    for (int k = 0; k < nseries && grouped; k++)
        grouped = (group[k] = series_group(&series[k])) != NULL;
    int nf = 0, placed = 0;
    if (grouped) { /* groups in order of first appearance */
        bool *done = g_new0(bool, (gsize)nseries);
        for (int k = 0; k < nseries; k++) {
            if (done[k])
                continue;
            f[nf] = (Facet){g_strdup(group[k]), placed, 0};
            for (int j = k; j < nseries; j++)
                if (!done[j] && strcmp(group[j], group[k]) == 0) {
                    done[j] = true;
                    order[placed++] = j;
                    f[nf].n++;
                }
            grouped = grouped && f[nf].n <= PLOT_MAX_CURVES;
            nf++;
        }
        g_free(done);
        grouped = grouped && nf > 1;
        if (!grouped) {
            for (int i = 0; i < nf; i++)
                g_free(f[i].title);
            nf = 0;
            for (int k = 0; k < nseries; k++)
                order[k] = k;
        }
    }
    if (!grouped)
        for (int first = 0; first < nseries; first += PLOT_MAX_CURVES) {
            int n = nseries - first < PLOT_MAX_CURVES ? nseries - first : PLOT_MAX_CURVES;
            f[nf++] = (Facet){g_strdup_printf("curves %d-%d of %d", first + 1, first + n, nseries), first, n};
        }
    for (int k = 0; k < nseries; k++)
        g_free(group[k]);
    g_free(group);
    *nfacets = nf;
    return f;
}

static void facets_free(Facet *f, int n)
{
    for (int i = 0; i < n; i++)
        g_free(f[i].title);
    g_free(f);
}

/* The panel's value range over every series, as plotted (percent, GiB). */
static void panel_range(const PlotSeries *series, int nseries, int p, double *lo, double *hi)
{
    *lo = INFINITY;
    *hi = -INFINITY;
    double scale = p == P_EFFICIENCY ? 100.0 : p == P_MEMORY ? 1.0 / GIB : 1.0;
    for (int k = 0; k < nseries; k++) {
        const double *y = series_y(&series[k], p);
        for (int i = 0; y && i < series[k].n; i++)
            if (plot_point_valid(series[k].x[i], y[i], panel_logy(p))) {
                *lo = fmin(*lo, y[i] * scale);
                *hi = fmax(*hi, y[i] * scale);
            }
    }
}

/* Writes one data file per series: x, step time, throughput, efficiency %,
 * memory GiB.  NULL entries on failure. */
static const char **scaling_data(Job *j, const PlotSeries *series, int nseries, GError **err)
{
    const char **files = g_new0(const char *, (gsize)nseries);
    for (int k = 0; k < nseries; k++) {
        const PlotSeries *s = &series[k];
        GString *d = g_string_new("# devices step_time_s throughput efficiency_pct memory_gib\n");
        for (int i = 0; i < s->n; i++) {
            double v[N_PANELS];
            for (int p = 0; p < N_PANELS; p++) {
                const double *y = series_y(s, p);
                v[p] = y && plot_point_valid(s->x[i], y[i], panel_logy(p)) ? y[i] : NAN;
            }
            v[P_EFFICIENCY] *= 100.0;
            v[P_MEMORY] /= GIB;
            plot_append_number(d, isfinite(s->x[i]) && s->x[i] > 0 ? s->x[i] : NAN);
            for (int p = 0; p < N_PANELS; p++) {
                g_string_append_c(d, ' ');
                plot_append_number(d, v[p]);
            }
            g_string_append_c(d, '\n');
        }
        files[k] = plot_job_data(j, d, err);
        g_string_free(d, TRUE);
        if (!files[k]) {
            g_free(files);
            return NULL;
        }
    }
    return files;
}

bool plot_scaling(const char *path, const PlotSeries *series, int nseries, GError **err)
{
    if (!series || nseries <= 0) {
        g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "plot: no series to plot");
        return false;
    }
    for (int k = 0; k < nseries; k++)
        if (series[k].n < 0 || (series[k].n > 0 && !series[k].x)) {
            g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "plot: series %d has no x values", k);
            return false;
        }
    bool present[N_PANELS] = { false };
    int npanels = 0;
    for (int p = 0; p < N_PANELS; p++) {
        for (int k = 0; k < nseries; k++)
            present[p] = present[p] || series_has_panel(&series[k], p);
        npanels += present[p];
    }
    if (npanels == 0) {
        g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "plot: no series has a value to plot");
        return false;
    }
    int *order = g_new(int, (gsize)nseries), nf = 0;
    Facet *facets = make_facets(series, nseries, order, &nf);
    /* one facet: the panels in a square; several: a row of panels per facet */
    int rows = nf > 1 ? nf : npanels <= 2 ? 1 : 2, cols = nf > 1 ? npanels : npanels == 1 ? 1 : 2;
    Job *j = plot_job_begin(path, (nf > 1 ? 440 : 560) * cols, (nf > 1 ? 400 : 480) * rows, err);
    const char **files = j ? scaling_data(j, series, nseries, err) : NULL;
    if (!files) {
        facets_free(facets, nf);
        g_free(order);
        plot_job_free(j);
        return false;
    }

    static const char *ylabel[N_PANELS] = { "step time (s)", "throughput (samples/s)", "scaling efficiency (%)",
                                            "memory per device (GiB)" };
    static const char *title[N_PANELS] = { "Step time", "Throughput", "Scaling efficiency", "Memory per device" };
    double xlo = INFINITY, xhi = -INFINITY;
    for (int k = 0; k < nseries; k++)
        for (int i = 0; i < series[k].n; i++)
            if (isfinite(series[k].x[i]) && series[k].x[i] > 0) {
                xlo = fmin(xlo, series[k].x[i]);
                xhi = fmax(xhi, series[k].x[i]);
            }
    GString *sc = j->script;
    g_string_append_printf(sc, "set multiplot layout %d,%d\n", rows, cols);
    /* legends below the axes, never over the curves */
    g_string_append(sc, "set logscale x 2\nset xlabel 'devices (count)'\nset key below left Left reverse\n");
    for (int fi = 0; fi < nf; fi++) {
        const Facet *f = &facets[fi];
        for (int p = 0; p < N_PANELS; p++) {
            if (!present[p])
                continue;
            g_string_append(sc, "set title ");
            char *t = f->title ? g_strdup_printf("%s: %s", title[p], f->title) : g_strdup(title[p]);
            plot_append_quoted(sc, t);
            g_free(t);
            g_string_append_printf(sc, "\nset ylabel '%s'\n", ylabel[p]);
            g_string_append(sc, panel_logy(p) ? "set logscale y\n" : "unset logscale y\n");
            double lo, hi;
            panel_range(series, nseries, p, &lo, &hi);
            if (nf > 1 && isfinite(xlo) && isfinite(xhi)) { /* facets share each panel's scales */
                g_string_append(sc, "set xrange [");
                plot_append_number(sc, xlo / 1.1);
                g_string_append_c(sc, ':');
                plot_append_number(sc, xhi * 1.1);
                g_string_append(sc, "]\n");
            }
            if (nf > 1 && isfinite(lo) && isfinite(hi)) {
                g_string_append(sc, "set yrange [");
                plot_append_number(sc, panel_logy(p) ? lo / 1.25 : 0);
                g_string_append_c(sc, ':');
                plot_append_number(sc, panel_logy(p) ? hi * 1.25 : (hi > 0 ? hi * 1.1 : 1));
                g_string_append(sc, "]\n");
            } else {
                g_string_append(sc, p == P_STEP || p == P_THROUGHPUT ? "set autoscale y\n" : "set yrange [0:*]\n");
            }
            g_string_append(sc, "plot ");
            bool first = true;
            for (int i = f->first; i < f->first + f->n; i++) {
                int k = order[i];
                if (!series_has_panel(&series[k], p))
                    continue;
                if (!first)
                    g_string_append(sc, ", \\\n     ");
                first = false;
                g_string_append_printf(sc, "'%s' using 1:%d with linespoints lt %d pt 7 title ", files[k], p + 2,
                                       i - f->first + 1);
                plot_append_quoted(sc, series[k].label ? series[k].label : "");
            }
            if (first) /* this facet has no value here: an empty frame keeps the grid */
                g_string_append(sc, "NaN notitle");
            g_string_append(sc, "\n");
        }
    }
    g_string_append(sc, "unset multiplot\n");
    g_free(files);
    facets_free(facets, nf);
    g_free(order);
    bool ok = plot_job_run(j, path, err);
    plot_job_free(j);
    return ok;
}

/* ---- memory breakdown ---- */

enum { N_PARTS = 7 };

static void bar_parts(const PlotMemoryBar *b, double parts[N_PARTS])
{
    double v[N_PARTS] = {b->weights, b->gradients, b->optimizer, b->activations, b->buffers, b->working_set,
                         b->reserve};
    memcpy(parts, v, sizeof v);
}

bool plot_memory(const char *path, const PlotMemoryBar *bars, int nbars, double capacity, GError **err)
{
    if (!bars || nbars <= 0) {
        g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "plot: no memory bars to plot");
        return false;
    }
    double top = isfinite(capacity) && capacity > 0 ? capacity : 0;
    bool used[N_PARTS] = {false};
    for (int k = 0; k < nbars; k++) {
        double parts[N_PARTS], sum = 0;
        bar_parts(&bars[k], parts);
        for (int i = 0; i < N_PARTS; i++) {
            if (!isfinite(parts[i]) || parts[i] < 0) {
                g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT,
                            "plot: memory bar %d (%s) has a negative or non-finite part", k,
                            bars[k].label ? bars[k].label : "");
                return false;
            }
            sum += parts[i];
            used[i] = used[i] || parts[i] > 0;
        }
        if (sum > top)
            top = sum;
    }
    if (top <= 0)
        top = GIB;
    Job *j = plot_job_begin(path, nbars > 6 ? 120 * nbars + 200 : 900, 560, err);
    if (!j)
        return false;
    GString *d = g_string_new("# bar weights gradients optimizer_state activations buffers working_set reserve (GiB)\n");
    for (int k = 0; k < nbars; k++) {
        double parts[N_PARTS];
        bar_parts(&bars[k], parts);
        g_string_append_printf(d, "%d", k);
        for (int i = 0; i < N_PARTS; i++) {
            g_string_append_c(d, ' ');
            plot_append_number(d, parts[i] / GIB);
        }
        g_string_append_c(d, '\n');
    }
    const char *file = plot_job_data(j, d, err);
    g_string_free(d, TRUE);
    if (!file) {
        plot_job_free(j);
        return false;
    }
    GString *sc = j->script;
    g_string_append(sc, "set title 'Memory per device'\nset ylabel 'memory per device (GiB)'\n"
                        "set xlabel 'variant (sweep point)'\nset grid noxtics\n"
                        "set style data histograms\nset style histogram rowstacked\n"
                        "set style fill solid 0.8 border -1\nset boxwidth 0.6\nset key outside right top\n");
    g_string_append(sc, "set xtics (");
    for (int k = 0; k < nbars; k++) {
        if (k)
            g_string_append(sc, ", ");
        plot_append_quoted(sc, bars[k].label ? bars[k].label : "");
        g_string_append_printf(sc, " %d", k);
    }
    g_string_append(sc, ")\n");
    if (nbars > 6)
        g_string_append(sc, "set xtics rotate by -30\n");
    g_string_append(sc, "set yrange [0:");
    plot_append_number(sc, top / GIB * 1.15);
    g_string_append(sc, "]\nset xrange [-0.6:");
    plot_append_number(sc, nbars - 0.4);
    g_string_append(sc, "]\n");
    if (isfinite(capacity) && capacity > 0) {
        g_string_append(sc, "cap = ");
        plot_append_number(sc, capacity / GIB);
        g_string_append(sc, "\nset arrow 1 from graph 0, first cap to graph 1, first cap nohead lw 2 dt 2 lc "
                            "rgb '#c00000' front\n"
                            "set label 1 sprintf('HBM capacity %.4g GiB', cap) at graph 0.01, first cap "
                            "offset 0,0.7 tc rgb '#c00000' front\n");
    }
    static const char *const name[N_PARTS] = {"weights", "gradients", "optimizer state", "activations",
                                              "buffers", "working set (peak)", "reserve"};
    static const char *const colour[N_PARTS] = {"#4472c4", "#ed7d31", "#a5a5a5", "#70ad47",
                                                "#ffc000", "#9e480e", "#7f3f98"};
    g_string_append(sc, "plot ");
    for (int i = 0; i < N_PARTS; i++) {
        g_string_append_printf(sc, "%s'%s' using %d ", i ? ", \\\n     " : "", i ? "" : file, i + 2);
        if (used[i])
            g_string_append_printf(sc, "title '%s'", name[i]);
        else
            g_string_append(sc, "notitle");
        g_string_append_printf(sc, " lc rgb '%s'", colour[i]);
    }
    g_string_append_c(sc, '\n');
    bool ok = plot_job_run(j, path, err);
    plot_job_free(j);
    return ok;
}
