/* The gnuplot job: quoting, the private directory of a script and its data,
 * finding and running gnuplot, and copying the picture into place
 * (plot_internal.h). */
#include "plot_internal.h"
#include "sim_file.h"

#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

/* Appends `s` as a gnuplot single-quoted string: inside one only '' is
 * special.  Control characters become spaces and invalid UTF-8 is repaired,
 * so the string stays on one line, and "]]>" gets a space (the SVG terminal
 * puts some text in CDATA sections, which it would close), so the SVG
 * terminal emits valid XML. */
void plot_append_quoted(GString *out, const char *s)
{
    char *valid = g_utf8_make_valid(s ? s : "", -1);
    g_string_append_c(out, '\'');
    for (const char *p = valid; *p; p++) {
        unsigned char c = (unsigned char)*p;
        if (c == '\'')
            g_string_append(out, "''");
        else if (c == ']' && p[1] == ']' && p[2] == '>')
            g_string_append(out, "] ");
        else if (c < 0x20 || c == 0x7f)
            g_string_append_c(out, ' ');
        else
            g_string_append_c(out, (char)c);
    }
    g_string_append_c(out, '\'');
    g_free(valid);
}

void plot_append_number(GString *out, double v)
{
    if (!isfinite(v)) {
        g_string_append(out, "NaN");
        return;
    }
    char buf[G_ASCII_DTOSTR_BUF_SIZE];
    g_string_append(out, g_ascii_formatd(buf, sizeof buf, "%.10g", v));
}

#define PLOT_MAX_PIXELS 32767

static const char *plot_format(const char *path)
{
    const char *dot = strrchr(path, '.');
    if (dot && g_ascii_strcasecmp(dot, ".png") == 0)
        return "png";
    if (dot && g_ascii_strcasecmp(dot, ".svg") == 0)
        return "svg";
    return NULL;
}

Job *plot_job_begin(const char *path, int width, int height, GError **err)
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
    /* Cairo draws no picture over 32767 pixels a side (gnuplot: "Cairo is
     * unhappy: invalid value") */
    if (width > PLOT_MAX_PIXELS || height > PLOT_MAX_PIXELS) {
        g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT,
                    "plot: %s would be %d x %d pixels, more than %d a side can be drawn: fewer values or series",
                    path, width, height, PLOT_MAX_PIXELS);
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

void plot_job_free(Job *j)
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
const char *plot_job_data(Job *j, const GString *data, GError **err)
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
bool plot_job_run(Job *j, const char *path, GError **err)
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

bool plot_point_valid(double x, double y, bool logy)
{
    return isfinite(x) && x > 0 && isfinite(y) && (!logy || y > 0);
}
