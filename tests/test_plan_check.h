/* The published-configuration checks of `plan` (issue 14), shared by
 * tests/test_plan_megatron.c, test_plan_published.c and test_plan_zero.c:
 * a row's scenario planned under the constraints of the run's software,
 * the published layout found with --locate, and one printed line per row.
 *
 * What every row asserts (independent of any fit: the published layouts and
 * times are in tests/data/published with their .source):
 *  - the published layout is a valid candidate that fits in the model, its
 *    rank exact (--locate screens every candidate whose bound beats it);
 *  - the plan's best is at least as fast in the model;
 *  - time to train agrees with 6 x parameters x tokens / (GPUs x peak x
 *    MFU) at the predicted MFU: the simulated compute time may exceed that
 *    estimate by attention's share of the FLOPs that 6 N leaves out
 *    (Narayanan et al. eq. 3: about s / 6h), never fall short;
 *  - "near the top": the published layout ranks in the best 10 % of the
 *    ranked candidates, or its step is within 5 % of the best's (closer than
 *    the model can tell two layouts apart: the A100 step band is -16 %/+1.4 %).
 *    Rows marked `known_low` are asserted NOT to meet it, so that the test
 *    fails when the model changes and the row must be looked at again; why
 *    they rank low is in the row's comment and tests/README. */
#ifndef TEST_PLAN_CHECK_H
#define TEST_PLAN_CHECK_H

#include "plan.h"
#include "test_main.h"

#include <glib/gstdio.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define PUBLISHED SHARDSIM_SOURCE_DIR "/tests/data/published/"

static inline double jnum(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItem(o, key);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

/* The plan's JSON for a scenario text (NULL on error, printed). */
static inline cJSON *plan_check_json(const char *scenario, const PlanOptions *o)
{
    char *path = NULL;
    int fd = g_file_open_tmp("test-plan-XXXXXX.json", &path, NULL);
    CU_ASSERT_FATAL(fd >= 0);
    close(fd);
    CU_ASSERT_FATAL(g_file_set_contents(path, scenario, -1, NULL));
    GError *err = NULL;
    SimDist *d = sim_dist_new(FALSE, &err);
    Plan *p = plan_new(path, o, &err);
    cJSON *j = p && plan_run(p, d, &err) ? plan_result_json(p) : NULL;
    if (!j)
        printf("plan: %s\n", err ? err->message : "?");
    g_clear_error(&err);
    plan_free(p);
    sim_dist_free(d);
    g_unlink(path);
    g_free(path);
    return j;
}

/* The rows of a CSV file with a header line, fields split on commas. */
static inline char ***plan_check_csv(const char *file, int *nrows)
{
    char *path = g_strconcat(PUBLISHED, file, NULL), *text = NULL;
    CU_ASSERT_FATAL(g_file_get_contents(path, &text, NULL, NULL));
    g_free(path);
    char **lines = g_strsplit(text, "\n", -1);
    g_free(text);
    GPtrArray *rows = g_ptr_array_new();
    for (char **l = lines + 1; *l; l++)
        if (**l)
            g_ptr_array_add(rows, g_strsplit(*l, ",", -1));
    g_strfreev(lines);
    *nrows = (int)rows->len;
    g_ptr_array_add(rows, NULL);
    return (char ***)g_ptr_array_free(rows, FALSE);
}

static inline void plan_check_csv_free(char ***rows)
{
    for (char ***r = rows; *r; r++)
        g_strfreev(*r);
    g_free(rows);
}

/* SHARDSIM_TEST_ROWS=K/N: only the rows i with i % N == K (ctest runs a long
 * table as N tests that -j spreads, tests/CMakeLists.txt); unset, every row. */
static inline bool plan_check_wanted(int row)
{
    const char *s = g_getenv("SHARDSIM_TEST_ROWS");
    int k, n;
    if (!s || sscanf(s, "%d/%d", &k, &n) != 2 || n < 1)
        return true;
    return row % n == k;
}

G_GNUC_UNUSED static void plan_check_header(void)
{
    printf("\n%-22s %-32s %9s %9s %9s %12s %-30s %9s %6s %8s %8s\n", "row", "published (in the model)", "step(s)",
           "paper(s)", "model/pap", "rank", "the plan's best", "step(s)", "pub/bst", "days", "C/6NT");
}

/* Plans `scenario` under `o` (its locate[0] the published layout), prints
 * one line and asserts the checks above; `published_s` the paper's step
 * (NaN: not published); `hidden`, `seq_len` for attention's share. */
G_GNUC_UNUSED static void plan_check_row(const char *what, const char *scenario, PlanOptions *o, double published_s, int hidden,
                           int seq_len, bool known_low)
{
    cJSON *j = plan_check_json(scenario, o);
    CU_ASSERT_FATAL(j != NULL);
    const cJSON *loc = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "located"), 0);
    const cJSON *best = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "best"), 0);
    CU_ASSERT_FATAL(loc && best);
    bool ranked = cJSON_IsNumber(cJSON_GetObjectItem(loc, "rank"));
    CU_ASSERT(ranked);
    if (!ranked) {
        char *s = cJSON_PrintUnformatted(loc);
        printf("%s: the published layout does not rank: %s\n", what, s);
        cJSON_free(s);
        cJSON_Delete(j);
        return;
    }
    CU_ASSERT(cJSON_IsTrue(cJSON_GetObjectItem(loc, "rank_exact")));
    double ls = jnum(loc, "step_time_s"), bs = jnum(best, "step_time_s");
    double rank = jnum(loc, "rank"), n = jnum(j, "ranked"), frac = jnum(loc, "rank_fraction");
    /* time to train of the best against 6 N T / (G x peak x MFU) */
    const cJSON *t = cJSON_GetObjectItem(best, "time_to_train");
    const cJSON *cfg = cJSON_GetObjectItem(best, "config");
    double gpus = jnum(cfg, "gpus"), tokens = jnum(t, "steps") * jnum(cfg, "global_batch") * seq_len;
    double est = 6 * jnum(j, "parameters") * tokens / (gpus * jnum(j, "peak_flops_per_gpu") * jnum(best, "mfu"));
    double ratio = jnum(t, "compute_s") / est, share = seq_len / (6.0 * hidden);
    CU_ASSERT(ratio >= 1 - 1e-9 && ratio <= 1 + share + 0.03);
    char *lab = g_strdup(cJSON_GetObjectItem(loc, "label")->valuestring);
    printf("%-22s %-32s %9.3f %9.3f %9.3f %5.0f/%-3.0f%3.0f%% %-30s %9.3f %6.3f %8.2f %8.3f\n", what, lab, ls,
           published_s, ls / published_s, rank, n, 100 * frac, cJSON_GetObjectItem(best, "label")->valuestring, bs,
           ls / bs, jnum(t, "days"), ratio);
    g_free(lab);
    CU_ASSERT(bs <= ls * (1 + 1e-12));
    if (known_low) {
        /* the same plan with 10 % of the memory kept free (headroom the
         * memory model does not see): printed; every layout ranked fits in it */
        PlanOptions m = *o;
        m.memory_fraction = 0.9;
        cJSON *h = plan_check_json(scenario, &m);
        CU_ASSERT_FATAL(h != NULL);
        const cJSON *hl = cJSON_GetArrayItem(cJSON_GetObjectItem(h, "located"), 0);
        const cJSON *hb = cJSON_GetArrayItem(cJSON_GetObjectItem(h, "best"), 0);
        if (hl && hb && cJSON_IsNumber(cJSON_GetObjectItem(hl, "rank"))) {
            printf("  with 90%% of the memory: rank %.0f/%.0f (%.0f%%), best %s %.3f s, published/best %.3f\n",
                   jnum(hl, "rank"), jnum(h, "ranked"), 100 * jnum(hl, "rank_fraction"),
                   cJSON_GetObjectItem(hb, "label")->valuestring, jnum(hb, "step_time_s"), jnum(hl, "step_ratio_to_best"));
            const cJSON *b;
            cJSON_ArrayForEach(b, cJSON_GetObjectItem(h, "best"))
            CU_ASSERT(jnum(b, "memory_per_device_bytes") <= 0.9 * 80.0 * (1u << 30));
        } else {
            printf("  with 90%% of the memory: the published layout does not fit\n");
        }
        cJSON_Delete(h);
    }
    bool near = frac <= 0.10 || ls / bs <= 1.05;
    CU_ASSERT(near != known_low);
    if (near == known_low)
        printf("  %s: near the top is now %s, the row says known_low=%d: look at it again\n", what,
               near ? "met" : "not met", known_low);
    cJSON_Delete(j);
}

#endif
