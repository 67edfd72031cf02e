/* The calibration procedure behind calib_core.h: screening the parameters
 * the rows see, the fit on all rows and on each fold, errors and JSON. */
#include "calib_core.h"
#include "sim_fit.h"

#include <math.h>
#include <string.h>

#define SCREEN_FACTOR 1.1 /* a parameter is "seen" if x1.1 moves some row ... */
#define SCREEN_MIN 1e-4   /* ... by more than 0.01% */
#define FIT_RANGE 1000.0  /* a fit stays within a factor of 1000 of the prior */
#define LOSS_SCALE 0.05   /* residuals within ~5% count as noise */
#define SMALL_LIMIT 1048576.0

struct CalibFit {
    CalibModel m;
    int nrows, nkeys;
    double *meas, *size, *pred, *prior_v, *fitted, *cv_r;
    int *group;
    GArray *cand, *unused, *zero; /* key indices */
    double *sd;                   /* per candidate: posterior sd of log(value) */
    bool *det;                    /* per candidate: determined by the data */
    ValidateErrors before, after, cv_before, cv_after;
    double cv_log_before, cv_log_after; /* mean |log(predicted / measured)| held out */
    const char *cv_scheme;
};

void calib_fit_free(CalibFit *f)
{
    if (!f)
        return;
    g_free(f->meas);
    g_free(f->size);
    g_free(f->pred);
    g_free(f->prior_v);
    g_free(f->fitted);
    g_free(f->cv_r);
    g_free(f->group);
    g_free(f->sd);
    g_free(f->det);
    g_array_free(f->cand, TRUE);
    g_array_free(f->unused, TRUE);
    g_array_free(f->zero, TRUE);
    g_free(f);
}

static bool predict(CalibFit *f, const double *values, GError **err)
{
    return f->m.predict(f->m.user, values, NULL, f->pred, err);
}

/* Only `rows` (n of them) predicted, into f->pred. */
static bool predict_rows(CalibFit *f, const double *values, const int *rows, int n, GError **err)
{
    if (n == f->nrows)
        return predict(f, values, err);
    bool *want = g_new0(bool, f->nrows);
    for (int j = 0; j < n; j++)
        want[rows[j]] = true;
    bool ok = f->m.predict(f->m.user, values, want, f->pred, err);
    g_free(want);
    return ok;
}

/* Sorts every fittable key into candidates (some row moves when it moves),
 * unused and structurally zero. */
static bool screen(CalibFit *f, GError **err)
{
    double *base = g_memdup2(f->pred, sizeof(double) * f->nrows), *v = g_memdup2(f->prior_v, sizeof(double) * f->nkeys);
    bool ok = true;
    for (int i = 0; ok && i < f->nkeys; i++) {
        double lo, hi, sd, p = f->prior_v[i];
        bool fit;
        f->m.bounds(f->m.user, i, &lo, &hi, &sd, &fit);
        if (!fit)
            continue;
        if (!(p > 0)) {
            g_array_append_val(f->zero, i);
            continue;
        }
        v[i] = p * SCREEN_FACTOR <= hi ? p * SCREEN_FACTOR : p / SCREEN_FACTOR;
        ok = predict(f, v, err);
        double moved = 0;
        for (int k = 0; ok && k < f->nrows; k++)
            moved = fmax(moved, fabs(log(f->pred[k] / base[k])));
        v[i] = p;
        if (ok)
            g_array_append_val(moved > SCREEN_MIN ? f->cand : f->unused, i);
    }
    g_free(v);
    g_free(base);
    return ok;
}

typedef struct {
    CalibFit *f;
    const int *rows; /* the rows fitted */
    int n;
} FitCtx;

static void candidate_range(const CalibFit *f, int key, double *lo, double *hi, double *sd)
{
    double klo, khi, v = f->prior_v[key];
    bool fit;
    f->m.bounds(f->m.user, key, &klo, &khi, sd, &fit);
    *lo = fmax(klo > 0 ? klo : v / FIT_RANGE, v / FIT_RANGE);
    *hi = fmin(khi, v * FIT_RANGE);
}

/* The full vector of values: the prior's, the candidates' from x. */
static void apply(const CalibFit *f, const double *x, double *v)
{
    memcpy(v, f->prior_v, sizeof(double) * f->nkeys);
    for (guint i = 0; i < f->cand->len; i++) {
        int key = g_array_index(f->cand, int, i);
        double lo, hi, sd;
        candidate_range(f, key, &lo, &hi, &sd);
        v[key] = fmax(lo, fmin(hi, x[i]));
    }
}

static bool residuals(const double *x, double *r, void *user, GError **err)
{
    FitCtx *c = user;
    double *v = g_new(double, c->f->nkeys);
    apply(c->f, x, v);
    bool ok = predict_rows(c->f, v, c->rows, c->n, err);
    g_free(v);
    for (int j = 0; ok && j < c->n; j++)
        r[j] = log(c->f->pred[c->rows[j]] / c->f->meas[c->rows[j]]);
    return ok;
}

/* Fits the candidates on `rows` into `out` (nkeys values), with each
 * candidate's spread and determination where sd/det are given. */
static bool fit_rows(CalibFit *f, const int *rows, int n, double *out, double *sd, bool *det, GError **err)
{
    FitCtx ctx = {f, rows, n};
    SimFit *s = sim_fit_new(n, residuals, &ctx);
    sim_fit_set_loss_scale(s, LOSS_SCALE);
    for (guint i = 0; i < f->cand->len; i++) {
        int key = g_array_index(f->cand, int, i);
        double lo, hi, psd;
        candidate_range(f, key, &lo, &hi, &psd);
        sim_fit_add(s, f->m.key(f->m.user, key), f->prior_v[key], lo, hi, psd);
    }
    bool ok = sim_fit_run(s, err);
    if (ok) {
        double x[SIM_FIT_MAX_PARAMS];
        for (int i = 0; i < sim_fit_nparams(s); i++) {
            x[i] = sim_fit_value(s, i);
            if (sd)
                sd[i] = sim_fit_log_sd(s, i);
            if (det)
                det[i] = sim_fit_determined(s, i);
        }
        apply(f, x, out);
    }
    sim_fit_free(s);
    return ok;
}

static ValidateErrors errors_of(const CalibFit *f, const int *rows, int n, const double *pred)
{
    ValidateRow *vr = g_new0(ValidateRow, n > 0 ? n : 1);
    for (int j = 0; j < n; j++) {
        int k = rows[j];
        vr[j].size_bytes = f->size[k];
        vr[j].abs_pct_error = fabs(pred[j] - f->meas[k]) / f->meas[k] * 100;
    }
    ValidateErrors e = validate_errors_of(vr, n);
    g_free(vr);
    return e;
}

static double mean_abs_log(const CalibFit *f, const int *rows, int n, const double *pred)
{
    double s = 0;
    for (int j = 0; j < n; j++)
        s += fabs(log(pred[j] / f->meas[rows[j]]));
    return n ? s / n : NAN;
}

/* Cross-validation: each run held out in turn, or with one run, the even and
 * the odd rows in turn; errors and residuals of the held-out rows. */
static bool cross_validate(CalibFit *f, const double *prior_pred, GError **err)
{
    int nruns = 0;
    for (int k = 0; k < f->nrows; k++)
        nruns = MAX(nruns, f->group[k] + 1);
    int folds = nruns >= 2 ? nruns : 2;
    f->cv_scheme = nruns >= 2 ? "each run predicted by a fit on the other runs"
                              : "every other row predicted by a fit on the rest (two folds)";
    int *train = g_new(int, f->nrows), *test = g_new(int, f->nrows), *all_test = g_new(int, f->nrows);
    double *before = g_new(double, f->nrows), *after = g_new(double, f->nrows), *v = g_new(double, f->nkeys);
    int nall = 0;
    bool ok = true;
    for (int fold = 0; ok && fold < folds; fold++) {
        int ntr = 0, nte = 0;
        for (int k = 0; k < f->nrows; k++) {
            if (nruns >= 2 ? f->group[k] == fold : k % 2 == fold)
                test[nte++] = k;
            else
                train[ntr++] = k;
        }
        if (nte == 0 || ntr == 0)
            continue;
        ok = fit_rows(f, train, ntr, v, NULL, NULL, err) && predict_rows(f, v, test, nte, err);
        for (int j = 0; ok && j < nte; j++) {
            int k = test[j];
            all_test[nall] = k;
            before[nall] = prior_pred[k];
            after[nall++] = f->pred[k];
            f->cv_r[k] = log(f->pred[k] / f->meas[k]);
        }
    }
    if (ok) {
        f->cv_before = errors_of(f, all_test, nall, before);
        f->cv_after = errors_of(f, all_test, nall, after);
        f->cv_log_before = mean_abs_log(f, all_test, nall, before);
        f->cv_log_after = mean_abs_log(f, all_test, nall, after);
    }
    g_free(train);
    g_free(test);
    g_free(all_test);
    g_free(before);
    g_free(after);
    g_free(v);
    return ok;
}

static CalibFit *fit_new(const CalibModel *m, int nrows, const double *meas, const double *size, const int *group)
{
    CalibFit *f = g_new0(CalibFit, 1);
    f->m = *m;
    f->nrows = nrows;
    f->nkeys = m->nkeys;
    f->meas = g_memdup2(meas, sizeof(double) * nrows);
    f->size = g_new(double, nrows);
    f->group = g_new0(int, nrows);
    f->pred = g_new0(double, nrows);
    f->cv_r = g_new(double, nrows);
    for (int k = 0; k < nrows; k++) {
        f->size[k] = size ? size[k] : INFINITY;
        f->group[k] = group ? group[k] : 0;
        f->cv_r[k] = NAN;
    }
    f->prior_v = g_new(double, m->nkeys);
    for (int i = 0; i < m->nkeys; i++)
        f->prior_v[i] = m->prior(m->user, i);
    f->fitted = g_memdup2(f->prior_v, sizeof(double) * m->nkeys);
    f->cand = g_array_new(FALSE, FALSE, sizeof(int));
    f->unused = g_array_new(FALSE, FALSE, sizeof(int));
    f->zero = g_array_new(FALSE, FALSE, sizeof(int));
    return f;
}

CalibFit *calib_fit(const CalibModel *m, int nrows, const double *meas, const double *size, const int *group,
                    GError **err)
{
    if (nrows == 0) {
        g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "calibrate: the inputs have no rows to fit");
        return NULL;
    }
    CalibFit *f = fit_new(m, nrows, meas, size, group);
    int *all = g_new(int, nrows);
    for (int k = 0; k < nrows; k++)
        all[k] = k;
    double *prior_pred = NULL;
    bool ok = predict(f, f->prior_v, err);
    if (ok) {
        prior_pred = g_memdup2(f->pred, sizeof(double) * nrows);
        f->before = errors_of(f, all, nrows, prior_pred);
        ok = screen(f, err);
    }
    if (ok && f->cand->len > SIM_FIT_MAX_PARAMS) {
        g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "calibrate: %u parameters to fit, at most %d", f->cand->len,
                    SIM_FIT_MAX_PARAMS);
        ok = false;
    }
    if (ok) {
        f->sd = g_new0(double, f->cand->len + 1);
        f->det = g_new0(bool, f->cand->len + 1);
        ok = fit_rows(f, all, nrows, f->fitted, f->sd, f->det, err) && predict(f, f->fitted, err);
    }
    if (ok) {
        f->after = errors_of(f, all, nrows, f->pred);
        ok = cross_validate(f, prior_pred, err);
    }
    /* leave the model's rows predicted with the fitted values */
    ok = ok && predict(f, f->fitted, err);
    g_free(all);
    g_free(prior_pred);
    if (!ok) {
        calib_fit_free(f);
        return NULL;
    }
    return f;
}

const double *calib_fit_values(const CalibFit *f) { return f->fitted; }

/* ---------------- JSON ---------------- */

static cJSON *errors_obj(const ValidateErrors *e)
{
    cJSON *o = cJSON_CreateObject();
    validate_errors_json(e, o);
    return o;
}

static cJSON *key_list(const CalibFit *f, const GArray *keys)
{
    cJSON *a = cJSON_CreateArray();
    for (guint i = 0; i < keys->len; i++)
        cJSON_AddItemToArray(a, cJSON_CreateString(f->m.key(f->m.user, g_array_index(keys, int, i))));
    return a;
}

static const char *status(const CalibFit *f, guint i)
{
    int key = g_array_index(f->cand, int, i);
    if (f->det[i])
        return "fitted";
    return fabs(log(f->fitted[key] / f->prior_v[key])) < 0.01
               ? "not determined by the data: stays near its prior"
               : "only jointly determined: moved with the others, its own spread barely narrowed";
}

void calib_fit_report(const CalibFit *f, cJSON *o)
{
    cJSON *ps = cJSON_CreateArray(), *cv = errors_obj(&f->cv_after);
    cJSON_AddNumberToObject(o, "n_rows", f->nrows);
    cJSON_AddStringToObject(o, "method", "robust least squares on log time (soft-L1 loss, scale 5%), each parameter "
                                         "in log space with a prior; the MAP estimate (docs/UNCERTAINTY.md)");
    cJSON_AddItemToObject(o, "before", errors_obj(&f->before));
    cJSON_AddItemToObject(o, "after", errors_obj(&f->after));
    cJSON_AddStringToObject(cv, "scheme", f->cv_scheme);
    cJSON_AddNumberToObject(cv, "mean_abs_log_error", f->cv_log_after);
    cJSON *cvb = errors_obj(&f->cv_before);
    cJSON_AddNumberToObject(cvb, "mean_abs_log_error", f->cv_log_before);
    cJSON_AddItemToObject(cv, "before", cvb);
    cJSON_AddItemToObject(o, "cross_validated", cv);
    for (guint i = 0; i < f->cand->len; i++) {
        int key = g_array_index(f->cand, int, i);
        cJSON *p = cJSON_CreateObject();
        cJSON_AddStringToObject(p, "key", f->m.key(f->m.user, key));
        cJSON_AddNumberToObject(p, "prior", f->prior_v[key]);
        cJSON_AddNumberToObject(p, "value", f->fitted[key]);
        cJSON_AddNumberToObject(p, "log_sd", f->sd[i]);
        cJSON_AddStringToObject(p, "status", status(f, i));
        cJSON_AddItemToArray(ps, p);
    }
    cJSON_AddItemToObject(o, "parameters", ps);
    cJSON_AddItemToObject(o, "unused", key_list(f, f->unused));
    cJSON_AddItemToObject(o, "zero_in_model", key_list(f, f->zero));
}

cJSON *calib_fit_parameters(const CalibFit *f, const char *source, double (*reference)(void *user, int i))
{
    cJSON *ps = cJSON_CreateObject();
    for (int key = 0; key < f->nkeys; key++) {
        int ci = -1;
        for (guint i = 0; i < f->cand->len; i++)
            if (g_array_index(f->cand, int, i) == key)
                ci = (int)i;
        double v = f->fitted[key], ref = reference ? reference(f->m.user, key) : f->prior_v[key];
        bool fitted = ci >= 0 && v != f->prior_v[key];
        if (!fitted && v == ref)
            continue; /* the reference stands */
        cJSON *p = cJSON_CreateObject();
        cJSON_AddNumberToObject(p, "value", v);
        cJSON_AddStringToObject(p, "source", fitted ? source : "the prior's file");
        if (fitted)
            cJSON_AddNumberToObject(p, "log_sd", f->sd[ci]);
        cJSON_AddItemToObject(ps, f->m.key(f->m.user, key), p);
    }
    return ps;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The q-quantile (linear between order statistics) of `v` (sorted in place). */
static double quantile(GArray *v, double q)
{
    qsort(v->data, v->len, sizeof(double), cmp_double);
    double pos = q * (v->len - 1), lo = floor(pos);
    double a = g_array_index(v, double, (guint)lo), b = g_array_index(v, double, (guint)fmin(lo + 1, v->len - 1));
    return a + (b - a) * (pos - lo);
}

void calib_fit_band(const CalibFit *f, bool large, const char *key, cJSON *o)
{
    GArray *v = g_array_new(FALSE, FALSE, sizeof(double));
    for (int k = 0; k < f->nrows; k++)
        if (isfinite(f->cv_r[k]) && (f->size[k] >= SMALL_LIMIT) == large)
            g_array_append_val(v, f->cv_r[k]);
    if (v->len > 0)
        cJSON_AddItemToObject(o, key, cJSON_CreateDoubleArray((double[]){quantile(v, 0.1), quantile(v, 0.9)}, 2));
    g_array_free(v, TRUE);
}
