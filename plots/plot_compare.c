/* gnuplot output of predicted-versus-measured plots and Pareto fronts
 * (plot.h), through plot_job.c. */
#include "plot_internal.h"

#include <math.h>
#include <string.h>

/* ---- predicted versus measured ---- */

/* Points of `y` that a log-log plot shows. */
static int trace_points(const PlotTrace *t, const double *y)
{
    int n = 0;
    for (int i = 0; y && t->size && i < t->n; i++)
        n += plot_point_valid(t->size[i], y[i], true);
    return n;
}

static bool trace_has(const PlotTrace *t, const double *y)
{
    if (!y || !t->size)
        return false;
    for (int i = 0; i < t->n; i++)
        if (plot_point_valid(t->size[i], y[i], true))
            return true;
    return false;
}

bool plot_validation(const char *path, const char *title, const PlotTrace *traces, int ntraces, GError **err)
{
    if (!traces || ntraces <= 0) {
        g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "plot: no traces to plot");
        return false;
    }
    bool any = false;
    for (int k = 0; k < ntraces; k++) {
        if (traces[k].n < 0 || (traces[k].n > 0 && !traces[k].size)) {
            g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "plot: trace %d has no sizes", k);
            return false;
        }
        any = any || trace_has(&traces[k], traces[k].measured) || trace_has(&traces[k], traces[k].predicted);
    }
    if (!any) {
        g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "plot: no trace has a positive time to plot");
        return false;
    }
    /* the legend below the axes: room for each entry; the size axis's
     * tics every factor 16 when the sizes span that much */
    int entries = 0;
    double smin = INFINITY, smax = -INFINITY;
    for (int k = 0; k < ntraces; k++) {
        const PlotTrace *t = &traces[k];
        entries += trace_has(t, t->measured) + trace_has(t, t->predicted) + trace_has(t, t->baseline) +
                   (t->p90 && trace_has(t, t->p10));
        for (int i = 0; i < t->n; i++)
            if (isfinite(t->size[i]) && t->size[i] > 0) {
                smin = fmin(smin, t->size[i]);
                smax = fmax(smax, t->size[i]);
            }
    }
    Job *j = plot_job_begin(path, 900, 480 + 18 * (entries > 6 ? entries : 6), err);
    if (!j)
        return false;
    const char **files = g_new0(const char *, (gsize)ntraces);
    for (int k = 0; k < ntraces; k++) {
        const PlotTrace *t = &traces[k];
        GString *d = g_string_new("# size_bytes measured_s predicted_s p10_s p90_s baseline_s\n");
        for (int i = 0; i < t->n; i++) {
            double col[] = {t->measured ? t->measured[i] : NAN, t->predicted ? t->predicted[i] : NAN,
                            t->p10 ? t->p10[i] : NAN, t->p90 ? t->p90[i] : NAN, t->baseline ? t->baseline[i] : NAN};
            plot_append_number(d, t->size[i] > 0 ? t->size[i] : NAN);
            for (size_t c = 0; c < G_N_ELEMENTS(col); c++) {
                g_string_append_c(d, ' ');
                plot_append_number(d, plot_point_valid(t->size[i], col[c], true) ? col[c] : NAN);
            }
            g_string_append_c(d, '\n');
        }
        files[k] = plot_job_data(j, d, err);
        g_string_free(d, TRUE);
        if (!files[k]) {
            g_free(files);
            plot_job_free(j);
            return false;
        }
    }
    GString *sc = j->script;
    if (title) {
        g_string_append(sc, "set title ");
        plot_append_quoted(sc, title);
        g_string_append_c(sc, '\n');
    }
    /* log2 size axis with a tic every factor 16: 1 B, 16 B, ..., 1 KiB, ... */
    g_string_append(sc, "set logscale x 2\nset logscale y\nset offsets graph 0.02, graph 0.02, 0, 0\n"
                        "set xlabel 'message size (bytes)'\nset ylabel 'time (s)'\n"
                        "set format x '%.0b %BB'\nset format y '%.0s %cs'\nset key below left Left reverse\n");
    g_string_append(sc, smax >= 256 * smin ? "set xtics 1, 16\n" : "set xtics autofreq\n");
    g_string_append(sc, "plot ");
    bool first = true;
    for (int k = 0; k < ntraces; k++) {
        const PlotTrace *t = &traces[k];
        const char *label = t->label ? t->label : "";
        /* the band first, so that points and lines lie on top of it */
        static const char *const what[] = {"p10-p90", "measured", "predicted", NULL};
        for (int which = 0; which < 4; which++) {
            const double *col = which == 0 ? (t->p90 && t->p10 ? t->p10 : NULL)
                                : which == 1 ? t->measured
                                : which == 2 ? t->predicted
                                             : t->baseline;
            if (!trace_has(t, col))
                continue;
            if (!first)
                g_string_append(sc, ", \\\n     ");
            first = false;
            static const char *const style[] = {
                "using 1:4:5 with filledcurves fs transparent solid 0.15 noborder lt %d title ",
                "using 1:2 with points lt %d pt 7 ps 0.8 title ", "using 1:3 with lines lt %d lw 2 title ",
                "using 1:6 with lines lt %d lw 1 dt 2 title "};
            g_string_append_printf(sc, "'%s' ", files[k]);
            if (which == 0 && (trace_points(t, t->p10) < 2 || trace_points(t, t->p90) < 2))
                /* a band needs two sizes: one size's is an error bar */
                g_string_append_printf(sc, "using 1:3:4:5 with yerrorbars lt %d pt 6 ps 0.6 title ", k + 1);
            else if (which == 2 && trace_points(t, t->predicted) < 2) /* one size: no line to draw */
                g_string_append_printf(sc, "using 1:3 with points lt %d pt 6 ps 1.2 title ", k + 1);
            else
                g_string_append_printf(sc, style[which], k + 1);
            const char *w = which == 3 ? (t->baseline_label ? t->baseline_label : "baseline") : what[which];
            char *full = g_strdup_printf("%s%s%s", label, *label ? " " : "", w);
            plot_append_quoted(sc, full);
            g_free(full);
        }
    }
    g_string_append_c(sc, '\n');
    g_free(files);
    bool ok = plot_job_run(j, path, err);
    plot_job_free(j);
    return ok;
}

/* ---- Pareto fronts ---- */

static const char *xy_data(Job *j, int n, const double *x, const double *y, bool logx, GError **err)
{
    GString *d = g_string_new("# x days\n");
    for (int i = 0; i < n; i++) {
        bool ok = plot_point_valid(x[i], y[i], false) && (!logx || x[i] > 0);
        plot_append_number(d, ok ? x[i] : NAN);
        g_string_append_c(d, ' ');
        plot_append_number(d, ok ? y[i] : NAN);
        g_string_append_c(d, '\n');
    }
    const char *name = plot_job_data(j, d, err);
    g_string_free(d, TRUE);
    return name;
}

bool plot_pareto(const char *path, const char *title, const PlotParetoPanel *panels, int npanels, GError **err)
{
    if (!panels || npanels <= 0) {
        g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "plot: no panel to plot");
        return false;
    }
    Job *j = plot_job_begin(path, 560 * npanels, 440, err);
    if (!j)
        return false;
    GString *sc = j->script;
    g_string_append_printf(sc, "set multiplot layout 1,%d title ", npanels);
    plot_append_quoted(sc, title);
    g_string_append(sc, "\nset ylabel 'days to train'\nset key top right\n");
    for (int k = 0; k < npanels; k++) {
        const PlotParetoPanel *pp = &panels[k];
        const char *all = xy_data(j, pp->n, pp->x, pp->y, pp->logx, err);
        const char *fr = all ? xy_data(j, pp->nfront, pp->fx, pp->fy, pp->logx, err) : NULL;
        if (!fr) {
            plot_job_free(j);
            return false;
        }
        /* a linear axis of dollars: SI prefixes ("2M"), so that its labels do
         * not run into each other as 1e+06 2e+06 ... did */
        g_string_append(sc, pp->logx ? "set logscale x 2\nset format x '%g'\n" : "unset logscale x\nset format x '%.1s%c'\n");
        g_string_append(sc, "set xlabel ");
        plot_append_quoted(sc, pp->xlabel);
        g_string_append_printf(sc, "\nplot '%s' using 1:2 with points pt 7 ps 0.4 lc rgb '#a0a0a0' title 'candidates', "
                                   "'%s' using 1:2 with linespoints lt 1 lw 2 pt 7 title 'Pareto front'\n",
                               all, fr);
    }
    g_string_append(sc, "unset multiplot\n");
    bool ok = plot_job_run(j, path, err);
    plot_job_free(j);
    return ok;
}
