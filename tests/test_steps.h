/* Running a table of measured steps (the CSV tables of tests/data/steps: a
 * scenario file per row plus overrides by dotted key, and the measured
 * tokens/s) through the step model, every row printed with its error; shared by the suites
 * that check a calibrated or transferred accelerator preset. */
#ifndef TEST_STEPS_H
#define TEST_STEPS_H

#include "accel.h"
#include "calibrate.h"
#include "sim_file.h"
#include "step.h"
#include "test_main.h"
#include "workload.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define STEPS SHARDSIM_SOURCE_DIR "/tests/data/steps/"

/* A preset by name; NULL, the reason printed, where it does not load. */
static inline Accel *steps_accel(const char *name)
{
    GError *err = NULL;
    Accel *a = accel_load(name, &err);
    if (!a)
        printf("%s: %s\n", name, err->message);
    g_clear_error(&err);
    return a;
}

/* Asserts that CHIP's step band is BASE's widened by W on each side; CHIP's
 * band into *lo, *hi where given. */
static inline void steps_band_widened(const char *chip, const char *base, double w, double *lo, double *hi)
{
    Accel *a = steps_accel(chip), *h = steps_accel(base);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_PTR_NOT_NULL_FATAL(h);
    double r10, r90, h10, h90;
    CU_ASSERT_TRUE(accel_band(a, &r10, &r90));
    CU_ASSERT_TRUE(accel_band(h, &h10, &h90));
    printf("%s's band: %s's [%.3f, %.3f] widened by %.3f: [%.3f, %.3f] (the preset: [%.3f, %.3f])\n", chip, base, h10,
           h90, w, h10 - w, h90 + w, r10, r90);
    CU_ASSERT_DOUBLE_EQUAL(r10, h10 - w, 0.003);
    CU_ASSERT_DOUBLE_EQUAL(r90, h90 + w, 0.003);
    if (lo)
        *lo = r10;
    if (hi)
        *hi = r90;
    accel_free(a);
    accel_free(h);
}

static inline int col(gchar **head, const char *name)
{
    for (int i = 0; head[i]; i++)
        if (!strcmp(head[i], name))
            return i;
    return -1;
}

/* The cell of the first of two columns the table has; "-" without. */
static inline const char *cell(gchar **head, gchar **f, const char *a, const char *b)
{
    int i = col(head, a);
    if (i < 0 && b)
        i = col(head, b);
    return i >= 0 ? f[i] : "-";
}

static inline int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

typedef struct {
    int n, fits;
    double median, worst;
    double p10, p90;   /* of log(predicted / measured) step time */
    double logr[128]; /* the same, sorted */
    double row_logr[128]; /* the same, in the table's order */
    double row_bytes[128]; /* each row's predicted device memory (total, bytes) */
    bool row_moe[128]; /* whether the row's model has experts (run --json's config.experts) */
} Summary;

/* The q-quantile, linear between order statistics (as calibrate's band). */
static inline double quantile(const double *sorted, int n, double q)
{
    double pos = q * (n - 1), lo = floor(pos);
    double a = sorted[(int)lo], b = sorted[(int)fmin(lo + 1, n - 1)];
    return a + (b - a) * (pos - lo);
}

/* The architecture is the one that ran: its parameter count, where the
 * table gives it (ref.num_params). */
static inline void check_params(gchar **head, gchar **f, int seq)
{
    if (col(head, "ref.num_params") < 0)
        return;
    GError *err = NULL;
    char *m = g_strdup_printf("{\"name\": \"mpt\", \"type\": \"transformer\", \"source\": \"test\", \"layers\": %s, "
                              "\"hidden\": %s, \"heads\": %s, \"seq_len\": %d, \"vocab\": 50368}",
                              f[col(head, "model.layers")], f[col(head, "model.hidden")], f[col(head, "model.heads")],
                              seq);
    Workload *w = workload_parse("mpt", m, strlen(m), &err);
    g_free(m);
    g_clear_error(&err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(w);
    CU_ASSERT_DOUBLE_EQUAL(workload_params_total(w), atof(f[col(head, "ref.num_params")]), 0.5);
    workload_free(w);
}

/* A row's override; an accelerator file (overlay) named by the table lives
 * beside it in tests/data/steps. */
static inline void set_key(cJSON *root, const char *key, const char *value)
{
    if (!strcmp(key, "accelerator") && g_str_has_suffix(value, ".json") && !g_path_is_absolute(value)) {
        char *path = g_build_filename(STEPS, value, NULL);
        calib_accel_set_key(root, key, path);
        g_free(path);
    } else {
        calib_accel_set_key(root, key, value);
    }
}

/* The cells of a table's line, as calibrate reads them (quoted cells). */
static inline gchar **steps_cells(const char *line)
{
    GError *err = NULL;
    gchar **f = sim_csv_fields(line, &err);
    if (!f)
        printf("%s: %s\n", line, err->message);
    g_clear_error(&err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    return f;
}

/* A table row's scenario: the file the row names, beside the table, with
 * every other column but tokens_per_s and ref.* set on it (the caller's). */
static inline cJSON *steps_row_scenario(const char *file, gchar **head, gchar **f)
{
    gchar *dir = g_path_get_dirname(file), *base = NULL, *path = g_build_filename(dir, f[col(head, "scenario")], NULL);
    bool read = g_file_get_contents(path, &base, NULL, NULL);
    g_free(dir);
    g_free(path);
    CU_ASSERT_FATAL(read);
    cJSON *root = cJSON_Parse(base);
    g_free(base);
    for (int i = 0; head[i]; i++) {
        if (!strcmp(head[i], "scenario") || !strcmp(head[i], "tokens_per_s") || g_str_has_prefix(head[i], "ref."))
            continue;
        if (!strcmp(head[i], "accelerator"))
            set_key(root, head[i], f[i]);
        else /* model and topology files beside the table, as calibrate reads them */
            calib_accel_set_file_key(root, head[i], f[i], file);
    }
    return root;
}

/* A step result's number KEY; its activations' bytes per device. */
static inline double steps_num(const cJSON *res, const char *key) { return cJSON_GetObjectItem(res, key)->valuedouble; }
static inline double steps_activations(const cJSON *res)
{
    return cJSON_GetObjectItem(cJSON_GetObjectItem(res, "memory_per_device_bytes"), "activations")->valuedouble;
}

/* Asserts that a run gave no result (RES, freed) and an input error
 * holding WHAT (printed beside the message where it does not); clears it. */
static inline void steps_expect_refused(cJSON *res, GError **err, const char *what)
{
    CU_ASSERT_PTR_NULL(res);
    cJSON_Delete(res);
    CU_ASSERT_PTR_NOT_NULL_FATAL(*err);
    if (!strstr((*err)->message, what))
        printf("\n  got: %s\n  want: ...%s...\n", (*err)->message, what);
    CU_ASSERT_PTR_NOT_NULL(strstr((*err)->message, what));
    CU_ASSERT_EQUAL((*err)->code, SIM_ERROR_INPUT);
    g_clear_error(err);
}

/* The step's result for the scenario text HEAD PAR TAIL, named NAME in
 * its errors: a test's fixed scenario with what the case adds. */
static inline cJSON *steps_run_with(const char *name, const char *head, const char *par, const char *tail, GError **err)
{
    char *text = g_strconcat(head, par, tail, NULL);
    cJSON *res = step_run_text(name, text, err);
    g_free(text);
    return res;
}

/* The step's result for the scenario ROOT of the row LINE of FILE (the
 * caller's); the reason printed and a fatal failure where it does not run. */
static inline cJSON *steps_run_scenario(const char *file, const cJSON *root, const char *line)
{
    char *scen = cJSON_Print(root);
    GError *err = NULL;
    cJSON *res = step_run_text(file, scen, &err);
    if (!res)
        printf("%s: %s\n", line, err->message);
    g_clear_error(&err);
    free(scen);
    CU_ASSERT_PTR_NOT_NULL_FATAL(res);
    return res;
}

/* The run --json of scenario NAME of tests/data/steps with the keys KV
 * (NULL-terminated pairs of key and value, or NULL) set on it; the
 * caller's. */
static inline cJSON *steps_file_run(const char *name, const char *const *kv)
{
    char *text = NULL, *path = g_build_filename(STEPS, name, NULL);
    CU_ASSERT_FATAL(g_file_get_contents(path, &text, NULL, NULL));
    g_free(path);
    cJSON *root = cJSON_Parse(text);
    g_free(text);
    for (int k = 0; kv && kv[k]; k += 2)
        set_key(root, kv[k], kv[k + 1]);
    cJSON *res = steps_run_scenario(name, root, name);
    cJSON_Delete(root);
    return res;
}

/* Its step time. */
static inline double steps_file_step(const char *name, const char *const *kv)
{
    cJSON *res = steps_file_run(name, kv);
    double t = cJSON_GetObjectItem(res, "step_time_s")->valuedouble;
    cJSON_Delete(res);
    return t;
}

/* The lines of table FILE that are neither empty nor comments, the header
 * first; *TEXT holds them.  Both the caller's to free. */
static inline gchar **steps_table_rows(const char *file, gchar **text)
{
    CU_ASSERT_FATAL(g_file_get_contents(file, text, NULL, NULL));
    gchar **lines = g_strsplit(*text, "\n", -1);
    int n = 0;
    for (int i = 0; lines[i]; i++)
        if (*lines[i] && *lines[i] != '#')
            lines[n++] = lines[i];
        else
            g_free(lines[i]);
    lines[n] = NULL;
    CU_ASSERT_FATAL(n > 0); /* a header at least */
    return lines;
}

/* Runs every row of the table with the keys KV (NULL-terminated pairs of
 * key and value, set over the rows' own; NULL for none), prints it, checks
 * its parameter count. */
static inline Summary run_table_keys(const char *file, const char *const *kv)
{
    Summary s = {0};
    gchar *text = NULL, **lines = steps_table_rows(file, &text), **head = steps_cells(lines[0]);
    double errs[128], *logr = s.logr;
    printf("\n%s", file);
    for (int k = 0; kv && kv[k]; k += 2)
        printf("%s%s %s", k ? ", " : " with ", kv[k], kv[k + 1]);
    printf("\n%-10s %6s %5s %4s %3s %5s %9s %11s %11s %7s %7s %s\n", "model", "seq", "GPUs", "prec", "mb", "batch",
           "recompute", "tokens/s", "model", "error", "GiB", "fits");
    for (gchar **l = lines + 1; *l && s.n < 128; l++) {
        gchar **f = steps_cells(*l);
        CU_ASSERT_EQUAL_FATAL(g_strv_length(f), g_strv_length(head));
        cJSON *root = steps_row_scenario(file, head, f);
        for (int k = 0; kv && kv[k]; k += 2)
            set_key(root, kv[k], kv[k + 1]);
        cJSON *res = steps_run_scenario(file, root, *l);
        int seq = atoi(cell(head, f, "model.seq_len", "ref.seq_len")), gb = atoi(f[col(head, "global_batch")]);
        double meas = atof(f[col(head, "tokens_per_s")]);
        double tok = gb * (double)seq / cJSON_GetObjectItem(res, "step_time_s")->valuedouble, e = tok / meas - 1;
        s.row_bytes[s.n] = cJSON_GetObjectItem(cJSON_GetObjectItem(res, "memory_per_device_bytes"), "total")->valuedouble;
        s.row_moe[s.n] = cJSON_GetNumberValue(cJSON_GetObjectItem(cJSON_GetObjectItem(res, "config"), "experts")) > 0;
        double gib = s.row_bytes[s.n] / (1024.0 * 1024 * 1024);
        bool fit = cJSON_IsTrue(cJSON_GetObjectItem(res, "fits"));
        const cJSON *par = cJSON_GetObjectItem(root, "parallelism");
        int mb = cJSON_GetNumberValue(cJSON_GetObjectItem(root, "micro_batch")); /* the row's, or a key's over it */
        const char *prec = cJSON_GetStringValue(cJSON_GetObjectItem(root, "precision")),
                   *rc = cJSON_GetStringValue(cJSON_GetObjectItem(par, "recompute"));
        printf("%-10s %6d %5s %4s %3d %5d %9s %11.0f %11.0f %+6.1f%% %7.2f %s%s%s\n", cell(head, f, "ref.mpt", "ref.model"),
               seq, cell(head, f, "ref.gpus", "parallelism.dp"), prec ? prec : "-", mb, gb,
               rc ? rc : "-", meas, tok, 100 * e, gib, fit ? "yes" : "NO", col(head, "ref.system") >= 0 ? "  " : "",
               col(head, "ref.system") >= 0 ? f[col(head, "ref.system")] : "");
        s.fits += fit;
        logr[s.n] = s.row_logr[s.n] = -log1p(e); /* step time: predicted / measured */
        errs[s.n++] = fabs(e);
        s.worst = fmax(s.worst, fabs(e));
        check_params(head, f, seq);
        cJSON_Delete(root);
        cJSON_Delete(res);
        g_strfreev(f);
    }
    CU_ASSERT_FATAL(s.n > 0);
    qsort(errs, (size_t)s.n, sizeof errs[0], cmp_double);
    qsort(logr, (size_t)s.n, sizeof logr[0], cmp_double);
    s.median = s.n % 2 ? errs[s.n / 2] : (errs[s.n / 2 - 1] + errs[s.n / 2]) / 2;
    s.p10 = quantile(logr, s.n, 0.1);
    s.p90 = quantile(logr, s.n, 0.9);
    printf("%d rows: median |error| %.1f%%, max %.1f%%, log(predicted/measured step) p10 %.3f p90 %.3f; %d of %d "
           "predicted to fit\n",
           s.n, 100 * s.median, 100 * s.worst, s.p10, s.p90, s.fits, s.n);
    g_strfreev(head);
    g_strfreev(lines);
    g_free(text);
    return s;
}

/* ...on the accelerator ACCEL, the fabric TOPOLOGY and with "attention"
 * ATTENTION instead of the rows' own, where given. */
static inline Summary run_table_as(const char *file, const char *accel, const char *topology, const char *attention)
{
    const char *kv[7];
    int n = 0;
    const char *keys[] = {"accelerator", "topology", "attention"}, *vals[] = {accel, topology, attention};
    for (int i = 0; i < 3; i++)
        if (vals[i]) {
            kv[n++] = keys[i];
            kv[n++] = vals[i];
        }
    kv[n] = NULL;
    return run_table_keys(file, kv);
}

static inline Summary run_table_with(const char *file, const char *accel, const char *attention)
{
    return run_table_as(file, accel, NULL, attention);
}
static inline Summary run_table_on(const char *file, const char *accel) { return run_table_as(file, accel, NULL, NULL); }

static inline Summary run_table(const char *file) { return run_table_on(file, NULL); }

/* The table on the accelerator the JSON text ACCEL describes (a preset's
 * variant, or an overlay), written to a temporary file of its own (suites
 * may run at once), with "attention" ATTENTION where given. */
static inline Summary run_table_on_text(const char *file, const char *accel, const char *attention)
{
    char *path = NULL;
    int fd = g_file_open_tmp("shardsim-accel-XXXXXX.json", &path, NULL);
    CU_ASSERT_FATAL(fd >= 0);
    close(fd);
    CU_ASSERT_FATAL(g_file_set_contents(path, accel, -1, NULL));
    Summary s = run_table_with(file, path, attention);
    remove(path);
    g_free(path);
    return s;
}

/* The mean of the rows' log(predicted / measured) step times. */
static inline double steps_mean_logr(const Summary *s)
{
    double t = 0;
    for (int i = 0; i < s->n; i++)
        t += s->logr[i];
    return t / s->n;
}

/* The p10/p90 of the log residuals of several tables' rows together. */
static inline void band_of(const Summary *s, int k, double *p10, double *p90)
{
    double all[512];
    int n = 0;
    for (int t = 0; t < k; t++)
        for (int i = 0; i < s[t].n && n < 512; i++)
            all[n++] = s[t].logr[i];
    qsort(all, (size_t)n, sizeof all[0], cmp_double);
    *p10 = quantile(all, n, 0.1);
    *p90 = quantile(all, n, 0.9);
}

#endif
