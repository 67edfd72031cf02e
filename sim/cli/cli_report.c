/* What the commands share for --report (plots/report.h): checking the
 * option, plots drawn into a temporary SVG and inlined, the sources of a
 * step's presets, the step's tables, writing the page. */
#include "cli.h"
#include "plot.h"
#include "sim_data.h"

#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#define GIB (1024.0 * 1024 * 1024)

int cli_report_check(const char *cmd, const char *path)
{
    if (!path)
        return 0;
    if (!*path)
        return cli_usage_error("%s: --report needs a file name", cmd);
    if (!g_str_has_suffix(path, ".html") && !g_str_has_suffix(path, ".htm"))
        return cli_usage_error("%s: --report %s: the file must end in .html", cmd, SIM_ECHO(path));
    return 0;
}

char **cli_command_line(int argc, char **argv)
{
    char **out = g_new0(char *, (gsize)argc + 2);
    out[0] = g_strdup("shardsim");
    for (int i = 0; i < argc; i++)
        out[i + 1] = g_strdup(argv[i]);
    return out;
}

void cli_report_plot(Report *r, const char *caption, CliPlotFn draw, const void *user)
{
    GError *e = NULL;
    char *dir = g_dir_make_tmp("shardsim-report-XXXXXX", &e);
    if (!dir) {
        char *w = g_strdup_printf("plot %s not drawn: %s", caption, e->message);
        report_add_warning(r, w);
        g_free(w);
        g_error_free(e);
        return;
    }
    char *svg = g_build_filename(dir, "plot.svg", NULL);
    if (draw(svg, user, &e)) {
        report_add_svg(r, caption, svg);
    } else {
        char *w = g_strdup_printf("plot %s not drawn: %s", caption, e ? e->message : "?");
        report_add_warning(r, w);
        g_free(w);
        g_clear_error(&e);
    }
    g_unlink(svg);
    g_rmdir(dir);
    g_free(svg);
    g_free(dir);
}

static const char *str_at(const cJSON *o, const char *key)
{
    const cJSON *v = report_json_at(o, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

void cli_report_step_sources(Report *r, const char *scenario_path, const cJSON *scenario, const cJSON *config)
{
    if (scenario_path)
        report_add_sources(r, "scenario", scenario_path);
    const char *topo = str_at(scenario, "topology"), *acc = str_at(scenario, "accelerator");
    const char *model = str_at(scenario, "model"), *params = str_at(scenario, "collective_params");
    report_add_preset_sources(r, "topologies/presets", "topology", topo ? topo : str_at(config, "topology"));
    report_add_preset_sources(r, "models/presets/accelerators", "accelerator", acc ? acc : str_at(config, "accelerator"));
    report_add_preset_sources(r, "models/presets/workloads", "model", model ? model : str_at(config, "model"));
    if (!scenario_path) /* a sweep's other points: their presets only */
        return;
    if (params) {
        report_add_sources(r, "collective parameters", params);
    } else {
        char *def = sim_data_dir("models/presets/collectives.json");
        report_add_sources(r, "collective parameters (default)", def);
        g_free(def);
    }
}

void cli_report_step_tables(Report *r, const cJSON *rows, const char *source)
{
    char *pre = g_strdup_printf("%s%s", source, *source ? "." : "");
    const ReportColumn step[] = {
        {"variant", "variant", 0, 0},
        {"step time (s)", "step_time_s", 0, 4},
        {"p10 (s)", "step_time_p10_s", 0, 4},
        {"p90 (s)", "step_time_p90_s", 0, 4},
        {"samples/s", "samples_per_s", 0, 1},
        {"tokens/s", "tokens_per_s", 0, 0},
        {"MFU (%)", "mfu", 100, 1},
        {"TFLOP/s per device", "flops_per_device", 1e-12, 1},
        {"fits in HBM", "fits", 0, 0},
    };
    report_add_table(r, "Step time and throughput", rows, source, step, G_N_ELEMENTS(step));
    const ReportColumn bd[] = {
        {"variant", "variant", 0, 0},
        {"compute (s)", "breakdown.compute", 0, 4},
        {"exposed communication (s)", "breakdown.exposed_communication", 0, 4},
        {"optimizer (s)", "breakdown.optimizer", 0, 4},
        {"pipeline bubble (s)", "breakdown.pipeline_bubble", 0, 4},
        {"stage", "breakdown.stage", 0, 0},
    };
    report_add_table(r, "Where the step's time goes (busiest stage)", rows, source, bd, G_N_ELEMENTS(bd));
    const ReportColumn mem[] = {
        {"variant", "variant", 0, 0},
        {"weights (GiB)", "memory_per_device_bytes.weights", 1 / GIB, 2},
        {"gradients (GiB)", "memory_per_device_bytes.gradients", 1 / GIB, 2},
        {"optimizer state (GiB)", "memory_per_device_bytes.optimizer_state", 1 / GIB, 2},
        {"activations (GiB)", "memory_per_device_bytes.activations", 1 / GIB, 2},
        {"buffers (GiB)", "memory_per_device_bytes.buffers", 1 / GIB, 2},
        {"working set (GiB)", "memory_per_device_bytes.working_set", 1 / GIB, 2},
        {"reserve (GiB)", "memory_per_device_bytes.reserve", 1 / GIB, 2},
        {"total (GiB)", "memory_per_device_bytes.total", 1 / GIB, 2},
        {"HBM (GiB)", "memory_per_device_bytes.hbm", 1 / GIB, 1},
        {"allocator holds (GiB)", "memory_per_device_bytes.allocator_reserved", 1 / GIB, 2},
        {"its share of HBM (%)", "memory_per_device_bytes.memory_fraction", 100, 1},
        {"stage", "memory_per_device_bytes.stage", 0, 0},
    };
    report_add_table(r, "Memory per device (the stage that needs most)", rows, source, mem, G_N_ELEMENTS(mem));
    /* the collectives of each variant */
    int n = cJSON_IsArray(rows) ? cJSON_GetArraySize(rows) : 1;
    for (int i = 0; i < n; i++) {
        const cJSON *v = cJSON_IsArray(rows) ? cJSON_GetArrayItem(rows, i) : rows;
        const cJSON *colls = cJSON_GetObjectItemCaseSensitive(v, "collectives");
        if (cJSON_GetArraySize(colls) == 0)
            continue;
        const ReportColumn cc[] = {
            {"collective", "name", 0, 0},     {"op", "op", 0, 0},         {"ranks", "group_size", 0, 0},
            {"bytes", "bytes", 0, 0},         {"algorithm", "algo", 0, 0}, {"protocol", "proto", 0, 0},
            {"time (us)", "time_s", 1e6, 1}, {"per step", "count_per_step", 0, 0},
        };
        char *src = cJSON_IsArray(rows) ? g_strdup_printf("%s%d.collectives", pre, i) : g_strdup_printf("%scollectives", pre);
        const char *label = str_at(v, "variant");
        char *cap = g_strdup_printf("Collectives of one device per step (%s)", label ? label : "");
        report_add_table(r, cap, colls, src, cc, G_N_ELEMENTS(cc));
        g_free(cap);
        g_free(src);
    }
    g_free(pre);
}

/* The step results' memory breakdowns as bars (user: an array of results). */
bool cli_report_memory_plot(const char *svg, const void *user, GError **err)
{
    const cJSON *rows = user;
    int n = cJSON_IsArray(rows) ? cJSON_GetArraySize(rows) : 1;
    PlotMemoryBar *bars = g_new0(PlotMemoryBar, (gsize)n);
    double cap = -1;
    for (int i = 0; i < n; i++) {
        const cJSON *v = cJSON_IsArray(rows) ? cJSON_GetArrayItem(rows, i) : rows;
        const cJSON *m = cJSON_GetObjectItemCaseSensitive(v, "memory_per_device_bytes");
        const cJSON *f;
#define PART(k) ((f = report_json_at(m, k)) && cJSON_IsNumber(f) ? f->valuedouble : 0)
        bars[i] = (PlotMemoryBar){str_at(v, "variant"), PART("weights"), PART("gradients"), PART("optimizer_state"),
                                  PART("activations"), PART("buffers"), PART("working_set"), PART("reserve")};
        double hbm = PART("hbm");
#undef PART
        cap = cap < 0 ? hbm : cap == hbm ? cap : 0;
    }
    bool ok = plot_memory(svg, bars, n, cap, err);
    g_free(bars);
    return ok;
}

Report *cli_report_open(const char *cmd, const char *name, char **cmdline, const char *scenario_path,
                        cJSON **scenario)
{
    char *title = g_strdup_printf("shardsim %s: %s", cmd, name ? name : "");
    Report *r = report_new(title);
    g_free(title);
    char *text = NULL;
    *scenario = g_file_get_contents(scenario_path, &text, NULL, NULL) ? cJSON_Parse(text) : NULL;
    g_free(text);
    report_add_inputs(r, (int)g_strv_length(cmdline), cmdline, *scenario);
    return r;
}

int cli_report_write(Report *r, const char *path)
{
    GError *err = NULL;
    bool ok = report_write(r, path, &err);
    report_free(r);
    return ok ? 0 : cli_fail(err);
}
