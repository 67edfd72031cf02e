/* Times `shardsim run` on the GPT-3 175B scenarios of examples/: 1024 GPUs
 * (target < 2 s) and 16384 GPUs (target < 30 s), one core. */
#include "step.h"

#include <stdio.h>
#include <time.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int bench(const char *file, double target_s)
{
    char *path = g_build_filename(SHARDSIM_DATA_DIR, "examples", file, NULL);
    GError *err = NULL;
    double t0 = now();
    StepScenario *sc = step_scenario_load(path, &err);
    cJSON *r = sc ? step_scenario_run_all(sc, &err) : NULL;
    double t = now() - t0;
    int rc = 0;
    if (!r) {
        fprintf(stderr, "bench_step: %s\n", err->message);
        g_error_free(err);
        rc = 1;
    } else {
        const cJSON *cfg = cJSON_GetObjectItem(r, "config");
        printf("%-28s %6.0f devices %8.0f graph tasks  simulated step %8.3f s  wall %7.3f s  (target < %g s) %s\n",
               file, cJSON_GetObjectItem(cfg, "devices")->valuedouble,
               cJSON_GetObjectItem(cfg, "graph_tasks")->valuedouble,
               cJSON_GetObjectItem(r, "step_time_s")->valuedouble, t, target_s, t < target_s ? "ok" : "SLOW");
        rc = t < target_s ? 0 : 1;
    }
    cJSON_Delete(r);
    step_scenario_free(sc);
    g_free(path);
    return rc;
}

int main(void)
{
    int rc = bench("gpt3-175b-1024-a100.json", 2);
    rc |= bench("gpt3-175b-16384-a100.json", 30);
    return rc;
}
