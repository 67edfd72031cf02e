/* Times `shardsim plan` on one core: GPT-3 175B on 4,096 A100 80GB GPUs (512
 * DGX A100 nodes), the global batch free, the best 50 simulated in full.
 * Targets (issue 14): at least 10,000 candidates screened (validity and
 * memory checked against the scenario's rules, the step bounded) and the
 * whole plan in under 30 s of CPU on one core. */
#include "plan.h"

#include <glib/gstdio.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

static double now(clockid_t clk)
{
    struct timespec ts;
    clock_gettime(clk, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static const char scenario[] =
    "{\"name\": \"bench-plan\", \"accelerator\": \"a100-80gb\", \"topology\": \"dgx-a100-cluster\", \"nodes\": 512,"
    " \"model\": \"gpt3-175b\", \"global_batch\": 1536, \"micro_batch\": 1,"
    " \"parallelism\": {\"dp\": 32, \"tp\": 8, \"pp\": 16, \"recompute\": \"full\"}}";

int main(void)
{
    char *path = NULL;
    GError *err = NULL;
    int fd = g_file_open_tmp("bench-plan-XXXXXX.json", &path, &err);
    if (fd < 0 || !g_file_set_contents(path, scenario, -1, &err)) {
        fprintf(stderr, "bench_plan: %s\n", err ? err->message : "cannot write the scenario");
        return 1;
    }
    close(fd);
    PlanOptions o;
    plan_options_default(&o);
    o.gpus_lo = o.gpus_hi = 4096;
    o.free_batch = true;
    o.top = 50;
    o.jobs = 1;
    o.train.tokens = 300e9;
    double w0 = now(CLOCK_MONOTONIC), c0 = now(CLOCK_PROCESS_CPUTIME_ID);
    SimDist *d = sim_dist_new(FALSE, &err);
    Plan *p = d ? plan_new(path, &o, &err) : NULL;
    bool ok = p && plan_run(p, d, &err);
    double wall = now(CLOCK_MONOTONIC) - w0, cpu = now(CLOCK_PROCESS_CPUTIME_ID) - c0;
    int rc = 1;
    if (!ok) {
        fprintf(stderr, "bench_plan: %s\n", err ? err->message : "failed");
        g_clear_error(&err);
    } else {
        cJSON *j = plan_result_json(p);
        double screened = cJSON_GetObjectItem(j, "screened")->valuedouble;
        double sims = cJSON_GetObjectItem(j, "screen_simulated")->valuedouble;
        double full = cJSON_GetObjectItem(j, "simulated_in_full")->valuedouble;
        const cJSON *best = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "best"), 0);
        rc = screened >= 10000 && full == 50 && cpu < 30 ? 0 : 1;
        printf("gpt3-175b on 4096 a100-80gb: %d candidates, %.0f screened (%.0f step simulations), %.0f in full; "
               "best %s %.3f s/step; cpu %.2f s, wall %.2f s (targets: >= 10000 screened, cpu < 30 s) %s\n",
               plan_num_candidates(p), screened, sims, full, cJSON_GetObjectItem(best, "label")->valuestring,
               cJSON_GetObjectItem(best, "step_time_s")->valuedouble, cpu, wall, rc ? "SLOW" : "ok");
        cJSON_Delete(j);
    }
    plan_free(p);
    sim_dist_free(d);
    g_unlink(path);
    g_free(path);
    return rc;
}
