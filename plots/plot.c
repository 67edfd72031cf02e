/* gnuplot output: the scripts and data of scaling curves, memory breakdowns
 * and predicted-versus-measured plots, and running gnuplot on them (plot.h). */
#include "sim_file.h"
#include "plot.h"

#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#define GIB 1073741824.0

/* One plot being prepared: a script and its data files in a private temporary
 * directory.  gnuplot writes into that directory too, and the picture is
 * copied to the caller's path only once gnuplot has succeeded, so a failure
 * never leaves a half-written file and the caller's path never reaches
 * gnuplot's parser. */
typedef struct {
    char *dir;
    GString *script;
    GPtrArray *files; /* names inside dir, for clean-up */
    const char *ext;
} Job;

/* Appends `s` as a gnuplot single-quoted string: inside one only '' is
 * special.  Control characters become spaces and invalid UTF-8 is repaired,
 * so the string stays on one line and the SVG terminal emits valid XML. */
static void append_quoted(GString *out, const char *s)
{
    char *valid = g_utf8_make_valid(s ? s : "", -1);
    g_string_append_c(out, '\'');
    for (const char *p = valid; *p; p++) {
        unsigned char c = (unsigned char)*p;
        if (c == '\'')
            g_string_append(out, "''");
        else if (c < 0x20 || c == 0x7f)
            g_string_append_c(out, ' ');
        else
            g_string_append_c(out, (char)c);
    }
    g_string_append_c(out, '\'');
    g_free(valid);
}

static void append_number(GString *out, double v)
{
    if (!isfinite(v)) {
        g_string_append(out, "NaN");
        return;
    }
    char buf[G_ASCII_DTOSTR_BUF_SIZE];
    g_string_append(out, g_ascii_formatd(buf, sizeof buf, "%.10g", v));
}

static const char *plot_format(const char *path)
{
    const char *dot = strrchr(path, '.');
    if (dot && g_ascii_strcasecmp(dot, ".png") == 0)
        return "png";
    if (dot && g_ascii_strcasecmp(dot, ".svg") == 0)
        return "svg";
    return NULL;
}

static Job *job_begin(const char *path, int width, int height, GError **err)
{
    if (!path || !*path) {
        g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "plot: no output path");
        return NULL;
    }
    const char *ext = plot_format(path);
    if (!ext) {
        g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "plot: %s: the file name must end in .png or .svg", path);
        return NULL;
    }
    GError *e = NULL;
    char *dir = g_dir_make_tmp("shardsim-plot-XXXXXX", &e);
    if (!dir) {
        g_set_error(err, SIM_ERROR, SIM_ERROR_INTERNAL, "plot: cannot make a temporary directory: %s", e->message);
        g_error_free(e);
        return NULL;
    }
    Job *j = g_new0(Job, 1);
    j->dir = dir;
    j->ext = ext;
    j->files = g_ptr_array_new_with_free_func(g_free);
    j->script = g_string_new(NULL);
    if (strcmp(ext, "png") == 0)
        g_string_append_printf(j->script, "set terminal pngcairo noenhanced size %d,%d font 'sans,10'\n", width,
                               height);
    else
        g_string_append_printf(j->script, "set terminal svg noenhanced size %d,%d font 'sans,10' background 'white'\n",
                               width, height);
    g_string_append_printf(j->script, "set output 'out.%s'\n", ext);
    g_string_append(j->script, "set encoding utf8\nset datafile missing 'NaN'\nset grid\n");
    g_ptr_array_add(j->files, g_strdup_printf("out.%s", ext));
    return j;
}

static void job_free(Job *j)
{
    if (!j)
        return;
    for (guint i = 0; i < j->files->len; i++) {
        char *f = g_build_filename(j->dir, j->files->pdata[i], NULL);
        g_unlink(f);
        g_free(f);
    }
    g_rmdir(j->dir);
    g_free(j->dir);
    g_ptr_array_free(j->files, TRUE);
    g_string_free(j->script, TRUE);
    g_free(j);
}

/* Writes `data` as the next data file; returns its name (owned by the job). */
static const char *job_data(Job *j, const GString *data, GError **err)
{
    char *name = g_strdup_printf("d%u.dat", j->files->len);
    char *full = g_build_filename(j->dir, name, NULL);
    GError *e = NULL;
    bool ok = sim_file_write(full, data->str, (gssize)data->len, &e);
    g_free(full);
    g_ptr_array_add(j->files, name);
    if (!ok) {
        g_set_error(err, SIM_ERROR, SIM_ERROR_INTERNAL, "plot: %s", e->message);
        g_error_free(e);
        return NULL;
    }
    return name;
}

static char *find_gnuplot(void)
{
    const char *env = g_getenv("SHARDSIM_GNUPLOT");
    if (env && *env)
        return g_find_program_in_path(env);
    return g_find_program_in_path("gnuplot");
}

/* Runs gnuplot on the script and copies the picture to `path`. */
static bool job_run(Job *j, const char *path, GError **err)
{
    g_string_append(j->script, "unset output\n");
    char *script = g_build_filename(j->dir, "plot.gp", NULL);
    g_ptr_array_add(j->files, g_strdup("plot.gp"));
    GError *e = NULL;
    if (!sim_file_write(script, j->script->str, (gssize)j->script->len, &e)) {
        g_set_error(err, SIM_ERROR, SIM_ERROR_INTERNAL, "plot: %s", e->message);
        g_error_free(e);
        g_free(script);
        return false;
    }
    g_free(script);
    char *gp = find_gnuplot();
    if (!gp) {
        g_set_error(err, SIM_ERROR, SIM_ERROR_INTERNAL,
                    "plot: gnuplot not found in PATH (Debian: apt-get install gnuplot-nox)");
        return false;
    }
    /* -d: ignore the user's ~/.gnuplot so that output is the same everywhere */
    char *argv[] = { gp, (char *)"-d", (char *)"plot.gp", NULL };
    char **envp = g_environ_setenv(g_get_environ(), "LC_ALL", "C", TRUE);
    char *out = NULL, *errout = NULL;
    int status = 0;
    GSpawnFlags flags = G_SPAWN_DEFAULT;
#if GLIB_CHECK_VERSION(2, 74, 0)
    flags |= G_SPAWN_STDIN_FROM_DEV_NULL;
#endif
    bool ok = g_spawn_sync(j->dir, argv, envp, flags, NULL, NULL, &out, &errout, &status, &e);
    g_strfreev(envp);
    if (!ok) {
        g_set_error(err, SIM_ERROR, SIM_ERROR_INTERNAL, "plot: cannot run %s: %s", gp, e->message);
        g_error_free(e);
        g_free(gp);
        return false;
    }
    g_free(gp);
#if GLIB_CHECK_VERSION(2, 70, 0)
    ok = g_spawn_check_wait_status(status, &e);
#else
    ok = g_spawn_check_exit_status(status, &e);
#endif
    if (!ok) {
        g_set_error(err, SIM_ERROR, SIM_ERROR_INTERNAL, "plot: gnuplot failed (%s): %s", e->message,
                    g_strstrip(errout));
        g_error_free(e);
        g_free(out);
        g_free(errout);
        return false;
    }
    g_free(out);
    g_free(errout);
    char *pic = g_strdup_printf("%s/out.%s", j->dir, j->ext);
    char *bytes = NULL;
    gsize len = 0;
    ok = g_file_get_contents(pic, &bytes, &len, &e);
    g_free(pic);
    if (!ok || len == 0) {
        g_set_error(err, SIM_ERROR, SIM_ERROR_INTERNAL, "plot: gnuplot wrote no picture%s%s", e ? ": " : "",
                    e ? e->message : "");
        g_clear_error(&e);
        g_free(bytes);
        return false;
    }
    ok = sim_file_write(path, bytes, (gssize)len, &e);
    g_free(bytes);
    if (!ok) {
        g_set_error(err, SIM_ERROR, SIM_ERROR_INTERNAL, "plot: %s", e->message);
        g_error_free(e);
    }
    return ok;
}

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
static bool point_valid(double x, double y, bool logy)
{
    return isfinite(x) && x > 0 && isfinite(y) && (!logy || y > 0);
}

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
        if (point_valid(s->x[i], y[i], panel_logy(panel)))
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
            if (point_valid(series[k].x[i], y[i], panel_logy(p))) {
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
                v[p] = y && point_valid(s->x[i], y[i], panel_logy(p)) ? y[i] : NAN;
            }
            v[P_EFFICIENCY] *= 100.0;
            v[P_MEMORY] /= GIB;
            append_number(d, isfinite(s->x[i]) && s->x[i] > 0 ? s->x[i] : NAN);
            for (int p = 0; p < N_PANELS; p++) {
                g_string_append_c(d, ' ');
                append_number(d, v[p]);
            }
            g_string_append_c(d, '\n');
        }
        files[k] = job_data(j, d, err);
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
    Job *j = job_begin(path, (nf > 1 ? 440 : 560) * cols, (nf > 1 ? 400 : 480) * rows, err);
    const char **files = j ? scaling_data(j, series, nseries, err) : NULL;
    if (!files) {
        facets_free(facets, nf);
        g_free(order);
        job_free(j);
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
            append_quoted(sc, t);
            g_free(t);
            g_string_append_printf(sc, "\nset ylabel '%s'\n", ylabel[p]);
            g_string_append(sc, panel_logy(p) ? "set logscale y\n" : "unset logscale y\n");
            double lo, hi;
            panel_range(series, nseries, p, &lo, &hi);
            if (nf > 1 && isfinite(xlo) && isfinite(xhi)) { /* facets share each panel's scales */
                g_string_append(sc, "set xrange [");
                append_number(sc, xlo / 1.1);
                g_string_append_c(sc, ':');
                append_number(sc, xhi * 1.1);
                g_string_append(sc, "]\n");
            }
            if (nf > 1 && isfinite(lo) && isfinite(hi)) {
                g_string_append(sc, "set yrange [");
                append_number(sc, panel_logy(p) ? lo / 1.25 : 0);
                g_string_append_c(sc, ':');
                append_number(sc, panel_logy(p) ? hi * 1.25 : (hi > 0 ? hi * 1.1 : 1));
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
                append_quoted(sc, series[k].label ? series[k].label : "");
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
    bool ok = job_run(j, path, err);
    job_free(j);
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
    Job *j = job_begin(path, nbars > 6 ? 120 * nbars + 200 : 900, 560, err);
    if (!j)
        return false;
    GString *d = g_string_new("# bar weights gradients optimizer_state activations buffers working_set reserve (GiB)\n");
    for (int k = 0; k < nbars; k++) {
        double parts[N_PARTS];
        bar_parts(&bars[k], parts);
        g_string_append_printf(d, "%d", k);
        for (int i = 0; i < N_PARTS; i++) {
            g_string_append_c(d, ' ');
            append_number(d, parts[i] / GIB);
        }
        g_string_append_c(d, '\n');
    }
    const char *file = job_data(j, d, err);
    g_string_free(d, TRUE);
    if (!file) {
        job_free(j);
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
        append_quoted(sc, bars[k].label ? bars[k].label : "");
        g_string_append_printf(sc, " %d", k);
    }
    g_string_append(sc, ")\n");
    if (nbars > 6)
        g_string_append(sc, "set xtics rotate by -30\n");
    g_string_append(sc, "set yrange [0:");
    append_number(sc, top / GIB * 1.15);
    g_string_append(sc, "]\nset xrange [-0.6:");
    append_number(sc, nbars - 0.4);
    g_string_append(sc, "]\n");
    if (isfinite(capacity) && capacity > 0) {
        g_string_append(sc, "cap = ");
        append_number(sc, capacity / GIB);
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
    bool ok = job_run(j, path, err);
    job_free(j);
    return ok;
}

/* ---- predicted versus measured ---- */

/* Points of `y` that a log-log plot shows. */
static int trace_points(const PlotTrace *t, const double *y)
{
    int n = 0;
    for (int i = 0; y && t->size && i < t->n; i++)
        n += point_valid(t->size[i], y[i], true);
    return n;
}

static bool trace_has(const PlotTrace *t, const double *y)
{
    if (!y || !t->size)
        return false;
    for (int i = 0; i < t->n; i++)
        if (point_valid(t->size[i], y[i], true))
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
    Job *j = job_begin(path, 900, 480 + 18 * (entries > 6 ? entries : 6), err);
    if (!j)
        return false;
    const char **files = g_new0(const char *, (gsize)ntraces);
    for (int k = 0; k < ntraces; k++) {
        const PlotTrace *t = &traces[k];
        GString *d = g_string_new("# size_bytes measured_s predicted_s p10_s p90_s baseline_s\n");
        for (int i = 0; i < t->n; i++) {
            double col[] = {t->measured ? t->measured[i] : NAN, t->predicted ? t->predicted[i] : NAN,
                            t->p10 ? t->p10[i] : NAN, t->p90 ? t->p90[i] : NAN, t->baseline ? t->baseline[i] : NAN};
            append_number(d, t->size[i] > 0 ? t->size[i] : NAN);
            for (size_t c = 0; c < G_N_ELEMENTS(col); c++) {
                g_string_append_c(d, ' ');
                append_number(d, point_valid(t->size[i], col[c], true) ? col[c] : NAN);
            }
            g_string_append_c(d, '\n');
        }
        files[k] = job_data(j, d, err);
        g_string_free(d, TRUE);
        if (!files[k]) {
            g_free(files);
            job_free(j);
            return false;
        }
    }
    GString *sc = j->script;
    if (title) {
        g_string_append(sc, "set title ");
        append_quoted(sc, title);
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
            append_quoted(sc, full);
            g_free(full);
        }
    }
    g_string_append_c(sc, '\n');
    g_free(files);
    bool ok = job_run(j, path, err);
    job_free(j);
    return ok;
}

/* ---- Pareto fronts ---- */

static const char *xy_data(Job *j, int n, const double *x, const double *y, bool logx, GError **err)
{
    GString *d = g_string_new("# x days\n");
    for (int i = 0; i < n; i++) {
        bool ok = point_valid(x[i], y[i], false) && (!logx || x[i] > 0);
        append_number(d, ok ? x[i] : NAN);
        g_string_append_c(d, ' ');
        append_number(d, ok ? y[i] : NAN);
        g_string_append_c(d, '\n');
    }
    const char *name = job_data(j, d, err);
    g_string_free(d, TRUE);
    return name;
}

bool plot_pareto(const char *path, const char *title, const PlotParetoPanel *panels, int npanels, GError **err)
{
    if (!panels || npanels <= 0) {
        g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "plot: no panel to plot");
        return false;
    }
    Job *j = job_begin(path, 560 * npanels, 440, err);
    if (!j)
        return false;
    GString *sc = j->script;
    g_string_append_printf(sc, "set multiplot layout 1,%d title ", npanels);
    append_quoted(sc, title);
    g_string_append(sc, "\nset ylabel 'days to train'\nset key top right\n");
    for (int k = 0; k < npanels; k++) {
        const PlotParetoPanel *pp = &panels[k];
        const char *all = xy_data(j, pp->n, pp->x, pp->y, pp->logx, err);
        const char *fr = all ? xy_data(j, pp->nfront, pp->fx, pp->fy, pp->logx, err) : NULL;
        if (!fr) {
            job_free(j);
            return false;
        }
        g_string_append(sc, pp->logx ? "set logscale x 2\n" : "unset logscale x\n");
        g_string_append(sc, "set xlabel ");
        append_quoted(sc, pp->xlabel);
        g_string_append_printf(sc, "\nplot '%s' using 1:2 with points pt 7 ps 0.4 lc rgb '#a0a0a0' title 'candidates', "
                                   "'%s' using 1:2 with linespoints lt 1 lw 2 pt 7 title 'Pareto front'\n",
                               all, fr);
    }
    g_string_append(sc, "unset multiplot\n");
    bool ok = job_run(j, path, err);
    job_free(j);
    return ok;
}
