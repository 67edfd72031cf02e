/* Times `shardsim run` on one core: the GPT-3 175B examples (1024 and 16384
 * GPUs), Llama-2 70B tp 8 x pp 8 on the DGX A100 cluster at 256, 512 and
 * 2048 nodes (where simulating every DP group used to take minutes), and
 * 131,072 GPUs (GPT-3 175B tp 8 pp 16, Llama-2 70B tp 8 pp 8 on 16384
 * nodes).  Targets: under 1 s up to 16,384 devices, under 10 s beyond. */
#include "step.h"

#include <glib/gstdio.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <time.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Process CPU seconds: on a shared machine the wall also counts other
 * programs' turns on the core, this does not. */
static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int report(const char *label, StepScenario *sc, GError *err, double t0, double c0, double target_s)
{
    cJSON *r = sc ? step_scenario_run_all(sc, &err) : NULL;
    double t = now() - t0, cpu = cpu_now() - c0;
    int rc = 0;
    if (!r) {
        fprintf(stderr, "bench_step: %s: %s\n", label, err->message);
        g_error_free(err);
        rc = 1;
    } else {
        const cJSON *cfg = cJSON_GetObjectItem(r, "config");
        const cJSON *ct = cJSON_GetObjectItem(r, "dp_contention");
        const cJSON *m = cJSON_GetObjectItem(ct, "method");
        printf("%-30s %7.0f devices %8.0f tasks  step %7.3f s  dp_contention %.4f (%s)  wall %7.3f s  cpu %7.3f s  "
               "(target < %g s) %s\n",
               label, cJSON_GetObjectItem(cfg, "devices")->valuedouble,
               cJSON_GetObjectItem(cfg, "graph_tasks")->valuedouble,
               cJSON_GetObjectItem(r, "step_time_s")->valuedouble, cJSON_GetObjectItem(ct, "factor")->valuedouble,
               cJSON_IsString(m) ? m->valuestring : "-", t, cpu, target_s, t < target_s ? "ok" : "SLOW");
        rc = t < target_s ? 0 : 1;
    }
    cJSON_Delete(r);
    step_scenario_free(sc);
    return rc;
}

static int bench_file(const char *file, double target_s)
{
    char *path = g_build_filename(SHARDSIM_DATA_DIR, "examples", file, NULL);
    GError *err = NULL;
    double t0 = now(), c0 = cpu_now();
    StepScenario *sc = step_scenario_load(path, &err);
    int rc = report(file, sc, err, t0, c0, target_s);
    g_free(path);
    return rc;
}

/* A scenario on `nodes` DGX A100 nodes, dp filling the machine. */
static int bench_json(const char *label, const char *model, int nodes, int tp, int pp, int batch, double target_s)
{
    char *json = g_strdup_printf("{\"name\": \"%s\", \"accelerator\": \"a100-80gb\", \"topology\": \"dgx-a100-cluster\","
                                 " \"nodes\": %d, \"model\": \"%s\", \"global_batch\": %d, \"micro_batch\": 1,"
                                 " \"precision\": \"bf16\", \"optimizer\": \"adam\","
                                 " \"parallelism\": {\"tp\": %d, \"pp\": %d, \"recompute\": \"full\"}}",
                                 label, nodes, model, batch, tp, pp);
    char *path = g_build_filename(g_get_tmp_dir(), "bench_step_XXXXXX.json", NULL);
    GError *err = NULL;
    int fd = g_mkstemp(path);
    StepScenario *sc = NULL;
    double t0 = 0, c0 = 0;
    if (fd < 0 || !g_file_set_contents(path, json, -1, &err)) {
        fprintf(stderr, "bench_step: %s: cannot write a scenario\n", label);
        g_clear_error(&err);
    } else {
        t0 = now();
        c0 = cpu_now();
        sc = step_scenario_load(path, &err);
    }
    int rc = sc || err ? report(label, sc, err, t0, c0, target_s) : 1;
    if (fd >= 0) {
        close(fd);
        g_unlink(path);
    }
    g_free(path);
    g_free(json);
    return rc;
}

/* With arguments, only the benchmarks whose label holds one of them. */
static bool wanted(int argc, char **argv, const char *label)
{
    for (int i = 1; i < argc; i++)
        if (strstr(label, argv[i]))
            return true;
    return argc < 2;
}

int main(int argc, char **argv)
{
    int rc = 0;
    if (wanted(argc, argv, "gpt3-175b-1024-a100.json"))
        rc |= bench_file("gpt3-175b-1024-a100.json", 1);
    if (wanted(argc, argv, "gpt3-175b-16384-a100.json"))
        rc |= bench_file("gpt3-175b-16384-a100.json", 1);
    static const struct {
        const char *label, *model;
        int nodes, tp, pp, batch;
        double target_s;
    } json[] = {{"llama2-70b-tp8-pp8-256n", "llama2-70b", 256, 8, 8, 2048, 1},
                {"llama2-70b-tp8-pp8-512n", "llama2-70b", 512, 8, 8, 4096, 1},
                {"llama2-70b-tp8-pp8-2048n", "llama2-70b", 2048, 8, 8, 16384, 1},
                {"gpt3-175b-tp8-pp16-16384n", "gpt3-175b", 16384, 8, 16, 65536, 10},
                {"llama2-70b-tp8-pp8-16384n", "llama2-70b", 16384, 8, 8, 131072, 10}};
    for (size_t i = 0; i < G_N_ELEMENTS(json); i++)
        if (wanted(argc, argv, json[i].label))
            rc |= bench_json(json[i].label, json[i].model, json[i].nodes, json[i].tp, json[i].pp, json[i].batch,
                             json[i].target_s);
    return rc;
}
