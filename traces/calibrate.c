/* `shardsim calibrate` for collectives: which parameters the rows see, the
 * fit (sim_fit.c) on all rows and on each cross-validation fold, and the
 * report and overlay as JSON. */
#include "calibrate.h"
#include "sim_fit.h"

#include <math.h>
#include <string.h>

#define SCREEN_FACTOR 1.1    /* a parameter is "seen" if x1.1 moves some row ... */
#define SCREEN_MIN 1e-4      /* ... by more than 0.01% */
#define FIT_RANGE 1000.0     /* a fit stays within a factor of 1000 of the prior */
#define LOSS_SCALE 0.05      /* residuals within ~5% count as noise */

struct Calibration {
    ValidateOptions o;
    Validation *v;
    GPtrArray *traces; /* char*, as given */
    CollParams *prior, *fitted;
    int nrows;
    double *meas, *size, *pred;
    int *run_of;                 /* each row's run */
    GArray *cand, *unused, *zero; /* key indices */
    double *sd;                  /* per candidate: posterior sd of log(value) */
    bool *det;                   /* per candidate: determined by the data */
    ValidateErrors before, after, cv_before, cv_after;
    double cv_log_before, cv_log_after; /* mean |log(predicted / measured)| held out */
    const char *cv_scheme;
    double *cv_r; /* each row's held-out log(predicted / measured); NaN if never held out */
    bool done;
};

Calibration *calib_new(const ValidateOptions *o)
{
    Calibration *c = g_new0(Calibration, 1);
    c->o = *o;
    c->v = validate_new(o);
    c->traces = g_ptr_array_new_with_free_func(g_free);
    c->cand = g_array_new(FALSE, FALSE, sizeof(int));
    c->unused = g_array_new(FALSE, FALSE, sizeof(int));
    c->zero = g_array_new(FALSE, FALSE, sizeof(int));
    return c;
}

void calib_free(Calibration *c)
{
    if (!c)
        return;
    validate_free(c->v);
    g_ptr_array_free(c->traces, TRUE);
    coll_params_free(c->prior);
    coll_params_free(c->fitted);
    g_free(c->meas);
    g_free(c->size);
    g_free(c->pred);
    g_free(c->run_of);
    g_free(c->sd);
    g_free(c->det);
    g_array_free(c->cand, TRUE);
    g_array_free(c->unused, TRUE);
    g_array_free(c->zero, TRUE);
    g_free(c->cv_r);
    g_free(c);
}

bool calib_add_trace(Calibration *c, const char *path, GError **err)
{
    g_ptr_array_add(c->traces, g_strdup(path));
    return validate_trace(c->v, path, err);
}

/* Predicts every row with `p` into c->pred. */
static bool predict(Calibration *c, const CollParams *p, GError **err)
{
    if (!validate_repredict(c->v, p, err))
        return false;
    int k = 0;
    for (size_t i = 0; i < validate_n_runs(c->v); i++) {
        const ValidateRun *r = validate_run(c->v, i);
        for (size_t j = 0; j < r->n_rows && k < c->nrows; j++)
            c->pred[k++] = r->rows[j].predicted_s;
    }
    return true;
}

static void collect_rows(Calibration *c)
{
    c->nrows = 0;
    for (size_t i = 0; i < validate_n_runs(c->v); i++)
        c->nrows += (int)validate_run(c->v, i)->n_rows;
    c->meas = g_new(double, c->nrows);
    c->size = g_new(double, c->nrows);
    c->pred = g_new(double, c->nrows);
    c->run_of = g_new(int, c->nrows);
    c->cv_r = g_new(double, c->nrows);
    int k = 0;
    for (size_t i = 0; i < validate_n_runs(c->v); i++) {
        const ValidateRun *r = validate_run(c->v, i);
        for (size_t j = 0; j < r->n_rows; j++, k++) {
            c->meas[k] = r->rows[j].measured_s;
            c->size[k] = r->rows[j].size_bytes;
            c->pred[k] = r->rows[j].predicted_s;
            c->run_of[k] = (int)i;
            c->cv_r[k] = NAN;
        }
    }
}

/* Sorts every fittable key into candidates (some row moves when it moves),
 * unused and structurally zero. */
static bool screen(Calibration *c, GError **err)
{
    double *base = g_memdup2(c->pred, sizeof(double) * c->nrows);
    CollParams *p = coll_params_copy(c->prior);
    bool ok = true;
    for (int i = 0; ok && i < coll_params_count(); i++) {
        double lo, hi, sd, v = coll_params_get(c->prior, i);
        bool fit;
        coll_params_bounds(i, &lo, &hi, &sd, &fit);
        if (!fit)
            continue;
        if (!(v > 0)) {
            g_array_append_val(c->zero, i);
            continue;
        }
        coll_params_set(p, i, v * SCREEN_FACTOR <= hi ? v * SCREEN_FACTOR : v / SCREEN_FACTOR);
        ok = predict(c, p, err);
        double moved = 0;
        for (int k = 0; ok && k < c->nrows; k++)
            moved = fmax(moved, fabs(log(c->pred[k] / base[k])));
        coll_params_set(p, i, v);
        if (ok)
            g_array_append_val(moved > SCREEN_MIN ? c->cand : c->unused, i);
    }
    coll_params_free(p);
    g_free(base);
    return ok;
}

typedef struct {
    Calibration *c;
    const int *rows; /* the rows fitted */
    int n;
} FitCtx;

static void candidate_range(const Calibration *c, int key, double *lo, double *hi, double *sd)
{
    double klo, khi;
    bool fit;
    double v = coll_params_get(c->prior, key);
    coll_params_bounds(key, &klo, &khi, sd, &fit);
    *lo = fmax(klo > 0 ? klo : v / FIT_RANGE, v / FIT_RANGE);
    *hi = fmin(khi, v * FIT_RANGE);
}

static void apply(const Calibration *c, const double *x, CollParams *p)
{
    for (guint i = 0; i < c->cand->len; i++) {
        int key = g_array_index(c->cand, int, i);
        double lo, hi, sd;
        candidate_range(c, key, &lo, &hi, &sd);
        coll_params_set(p, key, fmax(lo, fmin(hi, x[i])));
    }
}

static bool residuals(const double *x, double *r, void *user, GError **err)
{
    FitCtx *f = user;
    CollParams *p = coll_params_copy(f->c->prior);
    apply(f->c, x, p);
    bool ok = predict(f->c, p, err);
    coll_params_free(p);
    for (int j = 0; ok && j < f->n; j++)
        r[j] = log(f->c->pred[f->rows[j]] / f->c->meas[f->rows[j]]);
    return ok;
}

/* Fits the candidates on `rows`; the parameters into `out`, and when sd/det
 * are given, each candidate's spread and whether the data determined it. */
static bool fit_rows(Calibration *c, const int *rows, int n, CollParams *out, double *sd, bool *det, GError **err)
{
    FitCtx ctx = {c, rows, n};
    SimFit *f = sim_fit_new(n, residuals, &ctx);
    sim_fit_set_loss_scale(f, LOSS_SCALE);
    for (guint i = 0; i < c->cand->len; i++) {
        int key = g_array_index(c->cand, int, i);
        double lo, hi, psd;
        candidate_range(c, key, &lo, &hi, &psd);
        sim_fit_add(f, coll_params_key(key), coll_params_get(c->prior, key), lo, hi, psd);
    }
    bool ok = sim_fit_run(f, err);
    if (ok) {
        double x[SIM_FIT_MAX_PARAMS];
        for (int i = 0; i < sim_fit_nparams(f); i++) {
            x[i] = sim_fit_value(f, i);
            if (sd)
                sd[i] = sim_fit_log_sd(f, i);
            if (det)
                det[i] = sim_fit_determined(f, i);
        }
        apply(c, x, out);
    }
    sim_fit_free(f);
    return ok;
}

static ValidateErrors errors_of(const Calibration *c, const int *rows, int n, const double *pred)
{
    ValidateRow *vr = g_new0(ValidateRow, n > 0 ? n : 1);
    for (int j = 0; j < n; j++) {
        int k = rows[j];
        vr[j].size_bytes = c->size[k];
        vr[j].abs_pct_error = fabs(pred[j] - c->meas[k]) / c->meas[k] * 100;
    }
    ValidateErrors e = validate_errors_of(vr, n);
    g_free(vr);
    return e;
}

static double mean_abs_log(const Calibration *c, const int *rows, int n, const double *pred)
{
    double s = 0;
    for (int j = 0; j < n; j++)
        s += fabs(log(pred[j] / c->meas[rows[j]]));
    return n ? s / n : NAN;
}

/* Cross-validation: each run held out in turn, or with one run, the even and
 * the odd sizes in turn; errors and residuals of the held-out rows. */
static bool cross_validate(Calibration *c, const double *prior_pred, GError **err)
{
    int nruns = (int)validate_n_runs(c->v), folds = nruns >= 2 ? nruns : 2;
    c->cv_scheme = nruns >= 2 ? "each run predicted by a fit on the other runs"
                              : "every other size predicted by a fit on the rest (two folds)";
    int *train = g_new(int, c->nrows), *test = g_new(int, c->nrows), *all_test = g_new(int, c->nrows);
    double *before = g_new(double, c->nrows), *after = g_new(double, c->nrows);
    int nall = 0;
    bool ok = true;
    for (int f = 0; ok && f < folds; f++) {
        int ntr = 0, nte = 0;
        for (int k = 0; k < c->nrows; k++) {
            bool held = nruns >= 2 ? c->run_of[k] == f : k % 2 == f;
            if (held)
                test[nte++] = k;
            else
                train[ntr++] = k;
        }
        if (nte == 0 || ntr == 0)
            continue;
        CollParams *p = coll_params_copy(c->prior);
        ok = fit_rows(c, train, ntr, p, NULL, NULL, err) && predict(c, p, err);
        coll_params_free(p);
        for (int j = 0; ok && j < nte; j++) {
            int k = test[j];
            all_test[nall] = k;
            before[nall] = prior_pred[k];
            after[nall++] = c->pred[k];
            c->cv_r[k] = log(c->pred[k] / c->meas[k]);
        }
    }
    if (ok) {
        c->cv_before = errors_of(c, all_test, nall, before);
        c->cv_after = errors_of(c, all_test, nall, after);
        c->cv_log_before = mean_abs_log(c, all_test, nall, before);
        c->cv_log_after = mean_abs_log(c, all_test, nall, after);
    }
    g_free(train);
    g_free(test);
    g_free(all_test);
    g_free(before);
    g_free(after);
    return ok;
}

bool calib_run(Calibration *c, GError **err)
{
    if (!(c->prior = coll_params_new(c->o.params, err)))
        return false;
    collect_rows(c);
    if (c->nrows == 0) {
        g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "calibrate: the traces have no rows to fit");
        return false;
    }
    if (!predict(c, c->prior, err))
        return false;
    int *all = g_new(int, c->nrows);
    for (int k = 0; k < c->nrows; k++)
        all[k] = k;
    double *prior_pred = g_memdup2(c->pred, sizeof(double) * c->nrows);
    c->before = errors_of(c, all, c->nrows, prior_pred);
    bool ok = screen(c, err);
    if (ok && c->cand->len > SIM_FIT_MAX_PARAMS) {
        g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "calibrate: %u parameters to fit, at most %d", c->cand->len,
                    SIM_FIT_MAX_PARAMS);
        ok = false;
    }
    if (ok) {
        c->fitted = coll_params_copy(c->prior);
        c->sd = g_new0(double, c->cand->len + 1);
        c->det = g_new0(bool, c->cand->len + 1);
        ok = fit_rows(c, all, c->nrows, c->fitted, c->sd, c->det, err) && predict(c, c->fitted, err);
    }
    if (ok) {
        c->after = errors_of(c, all, c->nrows, c->pred);
        ok = cross_validate(c, prior_pred, err);
    }
    /* leave the runs' rows predicted with the fitted parameters */
    if (ok)
        ok = predict(c, c->fitted, err);
    c->done = ok;
    g_free(all);
    g_free(prior_pred);
    return ok;
}

/* ---------------- JSON ---------------- */

static cJSON *errors_obj(const ValidateErrors *e)
{
    cJSON *o = cJSON_CreateObject();
    validate_errors_json(e, o);
    return o;
}

static cJSON *key_list(const GArray *keys)
{
    cJSON *a = cJSON_CreateArray();
    for (guint i = 0; i < keys->len; i++)
        cJSON_AddItemToArray(a, cJSON_CreateString(coll_params_key(g_array_index(keys, int, i))));
    return a;
}

static cJSON *trace_list(const Calibration *c)
{
    cJSON *a = cJSON_CreateArray();
    for (guint i = 0; i < c->traces->len; i++)
        cJSON_AddItemToArray(a, cJSON_CreateString(c->traces->pdata[i]));
    return a;
}

cJSON *calib_report_json(const Calibration *c)
{
    cJSON *o = cJSON_CreateObject(), *ps = cJSON_CreateArray(), *cv = errors_obj(&c->cv_after);
    cJSON_AddStringToObject(o, "topology", c->o.topology);
    cJSON_AddItemToObject(o, "traces", trace_list(c));
    cJSON_AddNumberToObject(o, "n_rows", c->nrows);
    cJSON_AddStringToObject(o, "method", "robust least squares on log time (soft-L1 loss, scale 5%), each parameter "
                                         "in log space with a prior; undetermined parameters keep their priors");
    cJSON_AddItemToObject(o, "before", errors_obj(&c->before));
    cJSON_AddItemToObject(o, "after", errors_obj(&c->after));
    cJSON_AddStringToObject(cv, "scheme", c->cv_scheme);
    cJSON_AddItemToObject(cv, "before", errors_obj(&c->cv_before));
    cJSON_AddNumberToObject(cv, "mean_abs_log_error", c->cv_log_after);
    cJSON_AddNumberToObject(cJSON_GetObjectItem(cv, "before"), "mean_abs_log_error", c->cv_log_before);
    cJSON_AddItemToObject(o, "cross_validated", cv);
    for (guint i = 0; i < c->cand->len; i++) {
        int key = g_array_index(c->cand, int, i);
        cJSON *p = cJSON_CreateObject();
        cJSON_AddStringToObject(p, "key", coll_params_key(key));
        cJSON_AddNumberToObject(p, "prior", coll_params_get(c->prior, key));
        cJSON_AddNumberToObject(p, "value", coll_params_get(c->fitted, key));
        cJSON_AddNumberToObject(p, "log_sd", c->sd[i]);
        double prior = coll_params_get(c->prior, key), v = coll_params_get(c->fitted, key);
        cJSON_AddStringToObject(p, "status", c->det[i]                    ? "fitted"
                                             : fabs(log(v / prior)) < 0.01 ? "not determined by the data: keeps its prior"
                                                                           : "only jointly determined: moved as far as its prior allows");
        cJSON_AddItemToArray(ps, p);
    }
    cJSON_AddItemToObject(o, "parameters", ps);
    cJSON_AddItemToObject(o, "unused", key_list(c->unused));
    cJSON_AddItemToObject(o, "zero_in_model", key_list(c->zero));
    return o;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The q-quantile (linear between order statistics) of `v` (sorted in place). */
static double quantile(GArray *v, double q)
{
    if (v->len == 0)
        return NAN;
    qsort(v->data, v->len, sizeof(double), cmp_double);
    double pos = q * (v->len - 1), lo = floor(pos);
    double a = g_array_index(v, double, (guint)lo), b = g_array_index(v, double, (guint)fmin(lo + 1, v->len - 1));
    return a + (b - a) * (pos - lo);
}

/* [p10, p90] of the held-out residuals of one size class, added as `key`
 * when the class has rows (else the prior's band stands). */
static void band_json(const Calibration *c, bool large, const char *key, cJSON *o)
{
    GArray *v = g_array_new(FALSE, FALSE, sizeof(double));
    for (int k = 0; k < c->nrows; k++)
        if (isfinite(c->cv_r[k]) && (c->size[k] >= 1048576.0) == large)
            g_array_append_val(v, c->cv_r[k]);
    if (v->len > 0)
        cJSON_AddItemToObject(o, key, cJSON_CreateDoubleArray((double[]){quantile(v, 0.1), quantile(v, 0.9)}, 2));
    g_array_free(v, TRUE);
}

/* What the data covered and how far off the held-out predictions were: the
 * basis of the band of every prediction made with the overlay. */
static cJSON *coverage_json(const Calibration *c)
{
    cJSON *o = cJSON_CreateObject(), *topos = cJSON_CreateArray();
    double smin = INFINITY, smax = 0;
    int rmin = 1 << 30, rmax = 0, nmin = 1 << 30, nmax = 0;
    for (int k = 0; k < c->nrows; k++) {
        smin = fmin(smin, c->size[k]);
        smax = fmax(smax, c->size[k]);
    }
    for (size_t i = 0; i < validate_n_runs(c->v); i++) {
        const ValidateRun *r = validate_run(c->v, i);
        rmin = MIN(rmin, r->ranks);
        rmax = MAX(rmax, r->ranks);
        nmin = MIN(nmin, r->nodes);
        nmax = MAX(nmax, r->nodes);
        bool seen = false;
        const cJSON *e;
        cJSON_ArrayForEach(e, topos) seen |= strcmp(e->valuestring, r->topology) == 0;
        if (!seen && cJSON_GetArraySize(topos) < 16)
            cJSON_AddItemToArray(topos, cJSON_CreateString(r->topology));
    }
    cJSON_AddItemToObject(o, "traces", trace_list(c));
    cJSON_AddNumberToObject(o, "n_rows", c->nrows);
    cJSON_AddStringToObject(o, "residuals", "p10 and p90 of log(predicted / measured) of the cross-validated "
                                            "predictions, below 1 MiB (small) and from 1 MiB (large)");
    band_json(c, false, "log_residual_small", o);
    band_json(c, true, "log_residual_large", o);
    cJSON_AddItemToObject(o, "size_bytes", cJSON_CreateDoubleArray((double[]){smin, smax}, 2));
    cJSON_AddItemToObject(o, "ranks", cJSON_CreateIntArray((int[]){rmin, rmax}, 2));
    cJSON_AddItemToObject(o, "nodes", cJSON_CreateIntArray((int[]){nmin, nmax}, 2));
    cJSON_AddItemToObject(o, "topologies", topos);
    return o;
}

cJSON *calib_overlay_json(const Calibration *c)
{
    cJSON *o = cJSON_CreateObject(), *ps = cJSON_CreateObject();
    GString *src = g_string_new("fitted from");
    for (guint i = 0; i < c->traces->len; i++) {
        char *b = g_path_get_basename(c->traces->pdata[i]);
        g_string_append_printf(src, "%s %s", i ? "," : "", b);
        g_free(b);
    }
    g_string_append_printf(src, " (%d rows) by shardsim calibrate", c->nrows);
    cJSON_AddStringToObject(o, "overlay", "collective-model parameters, on models/presets/collectives.json");
    cJSON_AddStringToObject(o, "topology", c->o.topology);
    if (c->o.params)
        cJSON_AddStringToObject(o, "prior", c->o.params);
    CollParams *def = coll_params_new(NULL, NULL);
    for (int key = 0; def && key < coll_params_count(); key++) {
        int ci = -1;
        for (guint i = 0; i < c->cand->len; i++)
            if (g_array_index(c->cand, int, i) == key)
                ci = (int)i;
        double v = coll_params_get(c->fitted, key);
        bool fitted = ci >= 0 && v != coll_params_get(c->prior, key);
        if (!fitted && v == coll_params_get(def, key))
            continue; /* the default stands */
        cJSON *p = cJSON_CreateObject();
        cJSON_AddNumberToObject(p, "value", v);
        cJSON_AddStringToObject(p, "source", fitted ? src->str : "the prior's parameter file");
        if (fitted)
            cJSON_AddNumberToObject(p, "log_sd", c->sd[ci]);
        cJSON_AddItemToObject(ps, coll_params_key(key), p);
    }
    coll_params_free(def);
    cJSON_AddItemToObject(o, "parameters", ps);
    cJSON_AddItemToObject(o, "calibration", coverage_json(c));
    g_string_free(src, TRUE);
    return o;
}
