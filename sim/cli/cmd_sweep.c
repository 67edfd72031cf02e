/* shardsim sweep: its options, the progress bar, the table on stdout and the
 * messages; the grid, the runs and the output files are models/sweep*.c. */
#include "cli.h"
#include "sweep.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define GIB (1024.0 * 1024 * 1024)

static const char sweep_description[] =
    "Runs SCENARIO.json at every point of the grid that the --vary options span (their cartesian\n"
    "product: the first --vary varies slowest), on a pool of threads; rows come out in point order.\n"
    "\n"
    "KEY is a dotted path into the scenario: nodes, model, topology, global_batch, micro_batch,\n"
    "parallelism.dp, parallelism.tp, parallelism.weight_update, parallelism.zero_stage, ...\n"
    "Values that read as JSON numbers, true, false or null are those, others are strings.\n"
    "'...' continues a progression up to the value after it: two numbers before it give a constant\n"
    "step (8,16,...,64 = 8,16,24,...,64), three or more a constant ratio when theirs agree\n"
    "(1,2,4,...,1024), else a constant step.  The end value must be a member.\n"
    "\n"
    "Coupled parameters:\n"
    "  - dp follows one rule, the same as 'shardsim run': parallelism.dp as given (by the scenario\n"
    "    or a --vary); when it is not given, the replicas fill each point's machine:\n"
    "    dp = nodes x ranks per node (of the point's topology) / (tp x pp), / (tp x cp x pp) with\n"
    "    context parallelism.  Leave dp out of the\n"
    "    scenario for dp to follow nodes, tp and pp (a note says when a fixed dp does not);\n"
    "  - --weak-scaling keeps each replica's batch: global_batch = dp x (the base's global_batch / dp);\n"
    "    without it global_batch stays fixed (strong scaling);\n"
    "  - a weight_update list in the scenario (\"weight_update\": [\"replicated\", \"sharded\"]) that is\n"
    "    not varied becomes the last axis.\n"
    "\n"
    "A point whose scenario is invalid (dp x tp x pp beyond the topology, global_batch not a multiple\n"
    "of dp x micro_batch, an unknown key, ...) gets an error in its row; the other points still run.\n"
    "--plot draws step time, throughput, scaling efficiency (samples/s per device relative to the\n"
    "curve's smallest device count) and memory per device against devices, one curve per combination\n"
    "of the varied keys other than nodes (or parallelism.dp).  --plot-memory draws the per-device\n"
    "memory breakdown of every point that ran.\n"
    "\n"
    "--mpi (under mpirun -np N) splits the points into N contiguous blocks, one per rank, each run on\n"
    "its rank's --jobs threads; rank 0 gathers the rows in point order and alone prints and writes,\n"
    "exactly what one process prints.\n"
    "\n"
    "--json and --csv numbers are in SI units (seconds, bytes, FLOP/s: flops_per_device).\n"
    "Exit status: 0 when at least one point ran; 2 for bad input (the base scenario, a --vary, an\n"
    "output file that is the input or another output, or no point ran); 1 when an output file\n"
    "cannot be written.";

static double num(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return v && cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static void progress_bar(int done, int total, void *user)
{
    (void)user;
    enum { W = 30 };
    int fill = total ? (int)((long)W * done / total) : W;
    char bar[W + 1];
    for (int i = 0; i < W; i++)
        bar[i] = i < fill ? '#' : ' ';
    bar[W] = 0;
    fprintf(stderr, "\r[%s] %d/%d", bar, done, total);
    if (done == total)
        fputs("\r\033[K", stderr);
    fflush(stderr);
}

static bool has_plot_ext(const char *path) { return g_str_has_suffix(path, ".png") || g_str_has_suffix(path, ".svg"); }

/* The points' warnings below the table, each once with the points it holds
 * for (what `run` prints as notes: the chips computed are not the
 * topology's own, a machine mostly idle). */
static void print_warnings(const cJSON *run)
{
    GPtrArray *text = g_ptr_array_new();
    GPtrArray *where = g_ptr_array_new();
    const cJSON *p, *w;
    cJSON_ArrayForEach(p, cJSON_GetObjectItem(run, "points"))
    cJSON_ArrayForEach(w, cJSON_GetObjectItem(cJSON_GetObjectItem(p, "result"), "warnings"))
    {
        guint k = 0;
        while (k < text->len && strcmp(text->pdata[k], w->valuestring) != 0)
            k++;
        if (k == text->len) {
            g_ptr_array_add(text, w->valuestring);
            g_ptr_array_add(where, g_string_new(NULL));
        }
        GString *at = where->pdata[k];
        g_string_append_printf(at, "%s%g", at->len ? ", " : "", num(p, "index"));
    }
    for (guint k = 0; k < text->len; k++)
        printf("# warning (point%s %s): %s\n", strchr(((GString *)where->pdata[k])->str, ',') ? "s" : "",
               ((GString *)where->pdata[k])->str, (const char *)text->pdata[k]);
    for (guint k = 0; k < where->len; k++)
        g_string_free(where->pdata[k], TRUE);
    g_ptr_array_free(text, TRUE);
    g_ptr_array_free(where, TRUE);
}

/* ---- table ---- */

static void print_table(const Sweep *s, const cJSON *run)
{
    int na = sweep_num_axes(s), n = sweep_num_points(s);
    int *w = g_new0(int, na > 0 ? na : 1);
    for (int a = 0; a < na; a++) {
        w[a] = (int)strlen(sweep_axis_key(s, a));
        for (int i = 0; i < n; i++) {
            char *v = sweep_value_text(sweep_point_value(s, i, a));
            if ((int)strlen(v) > w[a])
                w[a] = (int)strlen(v);
            g_free(v);
        }
    }
    GString *axes = g_string_new(NULL);
    for (int a = 0; a < na; a++)
        g_string_append_printf(axes, "%s%s", a ? " x " : "", sweep_axis_key(s, a));
    printf("# sweep of %s: %d points (%s), %g ran, %g failed\n", cJSON_GetObjectItem(run, "scenario")->valuestring,
           n, axes->str, num(run, "ran"), num(run, "failed"));
    g_string_free(axes, TRUE);
    const cJSON *note;
    cJSON_ArrayForEach(note, cJSON_GetObjectItem(run, "notes")) printf("# %s\n", note->valuestring);
    for (int a = 0; a < na; a++)
        printf("%-*s  ", w[a], sweep_axis_key(s, a));
    printf("%7s %6s %10s %11s %12s %6s %8s %9s %5s\n", "devices", "dp", "step(s)", "samples/s", "tokens/s", "MFU%",
           "TFLOP/s", "mem(GiB)", "fits");
    const cJSON *p;
    bool share = false; /* a point within HBM but over its allocator's "memory_fraction" */
    cJSON_ArrayForEach(p, cJSON_GetObjectItem(run, "points"))
    {
        int i = (int)num(p, "index");
        for (int a = 0; a < na; a++) {
            char *v = sweep_value_text(sweep_point_value(s, i, a));
            printf("%-*s  ", w[a], v);
            g_free(v);
        }
        const cJSON *r = cJSON_GetObjectItem(p, "result");
        if (!r) {
            printf("error: %s\n", cJSON_GetObjectItem(p, "error")->valuestring);
            continue;
        }
        const cJSON *cfg = cJSON_GetObjectItem(r, "config"), *mem = cJSON_GetObjectItem(r, "memory_per_device_bytes");
        bool fits = cJSON_IsTrue(cJSON_GetObjectItem(r, "fits")), over = !fits && num(mem, "total") <= num(mem, "hbm");
        share |= over;
        printf("%7g %6g %10.4f %11.1f %12.0f %6.1f %8.1f %9.2f %5s\n", num(cfg, "devices"), num(cfg, "dp"),
               num(r, "step_time_s"), num(r, "samples_per_s"), num(r, "tokens_per_s"), 100 * num(r, "mfu"),
               num(r, "flops_per_device") / 1e12, num(mem, "total") / GIB, fits ? "yes" : over ? "NO*" : "NO");
    }
    if (share)
        printf("# NO*: within HBM, but not within the allocator's \"memory_fraction\" of it (run --json: "
               "memory_per_device_bytes.allocator_reserved)\n");
    g_free(w);
    print_warnings(run);
}

typedef struct {
    const Sweep *s;
    const cJSON *run;
} PlotArgs;

static bool draw_scaling(const char *svg, const void *user, GError **err)
{
    const PlotArgs *a = user;
    return sweep_plot_scaling(a->s, a->run, svg, err);
}

static bool draw_memory(const char *svg, const void *user, GError **err)
{
    const PlotArgs *a = user;
    return sweep_plot_memory(a->s, a->run, svg, err);
}

/* The page of --report: the base scenario, a row per point, the scaling
 * curves and memory bars, the notes and the points' warnings (each once),
 * the sources of every preset a point used. */
static int write_report(const char *path, char **cmdline, const char *base, const Sweep *s, const cJSON *run)
{
    cJSON *scenario;
    Report *r = cli_report_open("sweep", cJSON_GetStringValue(cJSON_GetObjectItem(run, "scenario")), cmdline, base,
                                &scenario);
    int na = sweep_num_axes(s);
    ReportColumn *cols = g_new0(ReportColumn, (gsize)na + 12);
    char **keys = g_new0(char *, (gsize)na + 1);
    int nc = 0;
    cols[nc++] = (ReportColumn){"point", "index", 0, 0};
    for (int a = 0; a < na; a++) {
        keys[a] = g_strdup_printf("values.%s", sweep_axis_key(s, a));
        cols[nc++] = (ReportColumn){sweep_axis_key(s, a), keys[a], 0, -1};
    }
    const ReportColumn rest[] = {
        {"devices", "result.config.devices", 0, 0},
        {"dp", "result.config.dp", 0, 0},
        {"step time (s)", "result.step_time_s", 0, 4},
        {"samples/s", "result.samples_per_s", 0, 1},
        {"tokens/s", "result.tokens_per_s", 0, 0},
        {"MFU (%)", "result.mfu", 100, 1},
        {"TFLOP/s per device", "result.flops_per_device", 1e-12, 1},
        {"memory per device (GiB)", "result.memory_per_device_bytes.total", 1 / GIB, 2},
        {"allocator's share of HBM (%)", "result.memory_per_device_bytes.memory_fraction", 100, 1},
        {"fits in HBM", "result.fits", 0, 0},
        {"error", "error", 0, 0},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(rest); i++)
        cols[nc++] = rest[i];
    report_add_table(r, "Points of the sweep", cJSON_GetObjectItem(run, "points"), "points", cols, nc);
    PlotArgs pa = {s, run};
    if (sweep_device_axis(s) >= 0)
        cli_report_plot(r, "Scaling against device count", draw_scaling, &pa);
    cli_report_plot(r, "Memory per device of every point", draw_memory, &pa);
    report_add_warnings(r, cJSON_GetObjectItem(run, "notes"));
    GHashTable *seen = g_hash_table_new(g_str_hash, g_str_equal);
    const cJSON *p, *w;
    cJSON_ArrayForEach(p, cJSON_GetObjectItem(run, "points"))
    {
        cJSON_ArrayForEach(w, cJSON_GetObjectItem(cJSON_GetObjectItem(p, "result"), "warnings"))
        {
            if (cJSON_IsString(w) && !g_hash_table_contains(seen, w->valuestring)) {
                g_hash_table_add(seen, w->valuestring);
                report_add_warning(r, w->valuestring);
            }
        }
    }
    g_hash_table_destroy(seen);
    /* every point's presets: the varied topology, model, accelerator */
    cli_report_step_sources(r, base, scenario, NULL);
    cJSON_ArrayForEach(p, cJSON_GetObjectItem(run, "points"))
        cli_report_step_sources(r, NULL, NULL, report_json_at(p, "result.config"));
    cJSON_Delete(scenario);
    g_free(cols);
    g_strfreev(keys);
    report_set_json(r, run);
    return cli_report_write(r, path);
}

int cmd_sweep(int argc, char **argv)
{
    char **vary = NULL;
    char *csv = NULL, *plot = NULL, *plot_mem = NULL, *jobs_s = NULL, *report = NULL;
    char **cmdline = cli_command_line(argc, argv); /* before options are taken out */
    gboolean json = FALSE, weak = FALSE, mpi = FALSE;
    int jobs = 0; /* not given: the number of CPUs */
    GOptionEntry entries[] = {
        {"vary", 0, 0, G_OPTION_ARG_STRING_ARRAY, &vary, "vary KEY over the values (repeatable)", "KEY=V1,V2,..."},
        {"jobs", 'j', 0, G_OPTION_ARG_STRING, &jobs_s, "points run at once, 1 to 4096 (default: the number of CPUs)",
         "N"},
        {"csv", 0, 0, G_OPTION_ARG_FILENAME, &csv, "write one row per point (RFC 4180)", "FILE"},
        {"json", 0, 0, G_OPTION_ARG_NONE, &json, "print one JSON object with every point's full result", NULL},
        {"plot", 0, 0, G_OPTION_ARG_FILENAME, &plot, "draw scaling curves against device count", "FILE.png|.svg"},
        {"plot-memory", 0, 0, G_OPTION_ARG_FILENAME, &plot_mem, "draw each point's memory per device",
         "FILE.png|.svg"},
        {"weak-scaling", 0, 0, G_OPTION_ARG_NONE, &weak, "scale global_batch with dp (see below)", NULL},
        {"mpi", 0, 0, G_OPTION_ARG_NONE, &mpi, "spread the points over the ranks of mpirun (see below)", NULL},
        {"report", 0, 0, G_OPTION_ARG_FILENAME, &report, "write one self-contained HTML page of the sweep",
         "FILE.html"},
        {NULL, 0, 0, 0, NULL, NULL, NULL},
    };
    GOptionContext *ctx = g_option_context_new("SCENARIO.json - run a scenario over a grid of values");
    g_option_context_add_main_entries(ctx, entries, NULL);
    g_option_context_set_description(ctx, sweep_description);
    int rc = 2;
    Sweep *s = NULL;
    cJSON *run = NULL;
    GError *err = NULL;
    SimDist *dist = NULL;
    if (!cli_parse_options(ctx, entries, &argc, &argv))
        goto out;
    if (!(dist = cli_dist_start(mpi, &err))) {
        rc = cli_fail(err);
        goto out;
    }
    if (argc != 2) {
        rc = cli_usage_error("sweep: expected one SCENARIO.json (see --help)");
        goto out;
    }
    if (!vary || !vary[0]) {
        rc = cli_usage_error("sweep: give at least one --vary KEY=V1,V2,... (see --help)");
        goto out;
    }
    if (jobs_s && (rc = cli_parse_count("sweep", "--jobs", jobs_s, 1, 4096, &jobs)) != 0)
        goto out;
    rc = 2;
    const char *plots[] = {plot, plot_mem};
    const char *plot_opts[] = {"--plot", "--plot-memory"};
    for (int i = 0; i < 2; i++)
        if (plots[i] && !has_plot_ext(plots[i])) {
            rc = cli_usage_error("sweep: %s %s: the file must end in .png or .svg", plot_opts[i], SIM_ECHO(plots[i]));
            goto out;
        }
    if ((rc = cli_report_check("sweep", report)) != 0)
        goto out;
    const char *ins[] = {argv[1]}, *outs[] = {csv, plot, plot_mem, report},
               *opts[] = {"--csv", "--plot", "--plot-memory", "--report"};
    if ((rc = cli_check_outputs("sweep", ins, 1, outs, opts, 4)) != 0)
        goto out;
    rc = 2;
    if (!(s = sweep_load(argv[1], &err))) {
        rc = cli_fail(err);
        goto out;
    }
    sweep_set_weak_scaling(s, weak);
    for (char **v = vary; *v; v++)
        if (!sweep_add_axis(s, *v, &err)) {
            rc = cli_fail(err);
            goto out;
        }
    if (!sweep_prepare(s, &err)) {
        rc = cli_fail(err);
        goto out;
    }
    if (plot && sweep_device_axis(s) < 0) {
        rc = cli_usage_error("sweep: --plot draws against the device count: --vary nodes or parallelism.dp");
        goto out;
    }
    if (!(run = sweep_run_dist(s, dist, jobs, isatty(STDERR_FILENO) ? progress_bar : NULL, NULL, &err))) {
        rc = cli_fail(err);
        goto out;
    }
    int ran = (int)num(run, "ran"), failed = (int)num(run, "failed");
    if (json) {
        cli_print_json(cJSON_Duplicate(run, true)); /* the files below still need it */
    } else {
        print_table(s, run);
    }
    fflush(stdout);
    rc = 0;
    if (ran == 0) {
        /* the first error stands for all: usually one bad key or value */
        char *label = sweep_point_label(s, 0);
        const cJSON *p0 = cJSON_GetArrayItem(cJSON_GetObjectItem(run, "points"), 0);
        rc = cli_usage_error("sweep: no point ran; point 0 (%s): %s", SIM_ECHO(label),
                             cJSON_GetObjectItem(p0, "error")->valuestring);
        g_free(label);
    } else if (failed > 0) {
        fprintf(stderr, "shardsim: sweep: %d of %d points failed (see their error)\n", failed, ran + failed);
    }
    if (!sim_dist_is_root(dist))
        goto out; /* rank 0 writes the files */
    if (csv && !sweep_write_csv(s, run, csv, &err))
        rc = cli_fail(err);
    else if (plot && ran > 0 && !sweep_plot_scaling(s, run, plot, &err))
        rc = cli_fail(err);
    else if (plot_mem && ran > 0 && !sweep_plot_memory(s, run, plot_mem, &err))
        rc = cli_fail(err);
    else if (report && ran > 0) {
        int wr = write_report(report, cmdline, argv[1], s, run);
        rc = wr ? wr : rc;
    }
out:
    cJSON_Delete(run);
    sweep_free(s);
    sim_dist_free(dist);
    g_strfreev(vary);
    g_free(csv);
    g_free(plot);
    g_free(plot_mem);
    g_free(jobs_s);
    g_free(report);
    g_strfreev(cmdline);
    g_option_context_free(ctx);
    return rc;
}
