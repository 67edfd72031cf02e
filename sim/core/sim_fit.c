/* sim_fit: the Levenberg-Marquardt loop, the soft-L1 weights, the priors and
 * the undetermined-parameter test behind sim_fit.h. */
#include "sim_fit.h"

#include <math.h>
#include <string.h>
#include <stdlib.h>

#define MAX_ITER 200
#define DIFF_STEP 1e-5   /* forward-difference step in log space */
#define UNDETERMINED 0.5 /* posterior sd above half the prior's: the data did not decide */

typedef struct {
    char *name;
    double prior, lo, hi, prior_sd;
    double u;    /* log of the value */
    double sd;   /* posterior sd of u */
    double sd_id; /* the same at the nominal noise: what identifiability is judged on */
} FitParam;

struct SimFit {
    int nres, np, iters, evals;
    SimFitFn fn;
    void *user;
    double delta, target, rms0, rms1; /* delta: the loss scale now; target: the caller's */
    FitParam p[SIM_FIT_MAX_PARAMS];
    double *r, *r2, *jac; /* residuals, trial residuals, nres x np Jacobian */
};

SimFit *sim_fit_new(int nres, SimFitFn fn, void *user)
{
    SimFit *f = g_new0(SimFit, 1);
    f->nres = nres;
    f->fn = fn;
    f->user = user;
    f->delta = f->target = 0.05;
    return f;
}

void sim_fit_free(SimFit *f)
{
    if (!f)
        return;
    for (int i = 0; i < f->np; i++)
        g_free(f->p[i].name);
    g_free(f->r);
    g_free(f->r2);
    g_free(f->jac);
    g_free(f);
}

int sim_fit_add(SimFit *f, const char *name, double prior, double lo, double hi, double prior_sd)
{
    if (f->np >= SIM_FIT_MAX_PARAMS || !(lo > 0 && lo <= prior && prior <= hi && isfinite(hi)) ||
        !(prior_sd >= 0 && isfinite(prior_sd)))
        return -1;
    FitParam *q = &f->p[f->np];
    *q = (FitParam){.name = g_strdup(name), .prior = prior, .lo = lo, .hi = hi, .prior_sd = prior_sd, .u = log(prior)};
    return f->np++;
}

void sim_fit_set_loss_scale(SimFit *f, double delta)
{
    if (delta > 0 && isfinite(delta))
        f->delta = f->target = delta;
}

static void values(const SimFit *f, const double *u, double *x)
{
    for (int i = 0; i < f->np; i++)
        x[i] = exp(u[i]);
}

static bool eval(SimFit *f, const double *u, double *r, GError **err)
{
    f->evals++;
    double x[SIM_FIT_MAX_PARAMS];
    values(f, u, x);
    if (!f->fn(x, r, f->user, err))
        return false;
    for (int k = 0; k < f->nres; k++)
        if (!isfinite(r[k])) {
            g_set_error(err, g_quark_from_static_string("sim-fit"), 1, "residual %d is not finite", k);
            return false;
        }
    return true;
}

/* Soft-L1 loss of one residual: r^2 / 2 target^2 near 0 (target: the
 * assumed measurement noise), linear beyond delta; and its IRLS weight. */
static double loss(const SimFit *f, double r, double *w)
{
    double z = (r / f->delta) * (r / f->delta);
    if (w)
        *w = 1 / sqrt(1 + z);
    return (f->delta / f->target) * (f->delta / f->target) * (sqrt(1 + z) - 1);
}

static double prior_term(const FitParam *q, double u)
{
    if (q->prior_sd <= 0)
        return 0;
    double z = (u - log(q->prior)) / q->prior_sd;
    return 0.5 * z * z;
}

static double cost(const SimFit *f, const double *r, const double *u)
{
    double c = 0;
    for (int k = 0; k < f->nres; k++)
        c += loss(f, r[k], NULL);
    for (int i = 0; i < f->np; i++)
        c += prior_term(&f->p[i], u[i]);
    return c;
}

static double rms(const SimFit *f, const double *r)
{
    double s = 0;
    for (int k = 0; k < f->nres; k++)
        s += r[k] * r[k];
    return f->nres ? sqrt(s / f->nres) : 0;
}

static bool jacobian(SimFit *f, const double *u, GError **err)
{
    double v[SIM_FIT_MAX_PARAMS];
    memcpy(v, u, sizeof v);
    for (int i = 0; i < f->np; i++) {
        double h = u[i] + DIFF_STEP > log(f->p[i].hi) ? -DIFF_STEP : DIFF_STEP;
        v[i] = u[i] + h;
        if (!eval(f, v, f->r2, err))
            return false;
        v[i] = u[i];
        for (int k = 0; k < f->nres; k++)
            f->jac[(size_t)k * f->np + i] = (f->r2[k] - f->r[k]) / h;
    }
    return true;
}

/* Cholesky solve of the n x n system a x = b in place (a is destroyed);
 * false when a is not positive definite. */
static bool chol_solve(double *a, double *b, int n)
{
    for (int j = 0; j < n; j++) {
        double d = a[j * n + j];
        for (int k = 0; k < j; k++)
            d -= a[j * n + k] * a[j * n + k];
        if (!(d > 0))
            return false;
        a[j * n + j] = sqrt(d);
        for (int i = j + 1; i < n; i++) {
            double s = a[i * n + j];
            for (int k = 0; k < j; k++)
                s -= a[i * n + k] * a[j * n + k];
            a[i * n + j] = s / a[j * n + j];
        }
    }
    for (int i = 0; i < n; i++) {
        for (int k = 0; k < i; k++)
            b[i] -= a[i * n + k] * b[k];
        b[i] /= a[i * n + i];
    }
    for (int i = n - 1; i >= 0; i--) {
        for (int k = i + 1; k < n; k++)
            b[i] -= a[k * n + i] * b[k];
        b[i] /= a[i * n + i];
    }
    return true;
}

/* The fitted parameters' indices (all of them); returns how many. */
static int free_params(const SimFit *f, int *idx)
{
    int n = 0;
    for (int i = 0; i < f->np; i++)
        idx[n++] = i;
    return n;
}

/* The weighted normal matrix J^T W J / s2 + prior precision over the free
 * parameters, and the gradient J^T W r / s2 + prior terms (s2: the data's
 * variance). */
static void normal_eqs(const SimFit *f, const double *u, const int *idx, int n, double s2, double *a, double *g)
{
    memset(a, 0, sizeof(double) * n * n);
    memset(g, 0, sizeof(double) * n);
    for (int k = 0; k < f->nres; k++) {
        double w;
        loss(f, f->r[k], &w);
        const double *jk = &f->jac[(size_t)k * f->np];
        for (int i = 0; i < n; i++) {
            g[i] += w * jk[idx[i]] * f->r[k] / s2;
            for (int j = 0; j < n; j++)
                a[i * n + j] += w * jk[idx[i]] * jk[idx[j]] / s2;
        }
    }
    for (int i = 0; i < n; i++) {
        const FitParam *q = &f->p[idx[i]];
        if (q->prior_sd > 0) {
            a[i * n + i] += 1 / (q->prior_sd * q->prior_sd);
            g[i] += (u[idx[i]] - log(q->prior)) / (q->prior_sd * q->prior_sd);
        }
    }
}

static double clamp_u(const FitParam *q, double u)
{
    return fmax(log(q->lo), fmin(log(q->hi), u));
}

/* One Levenberg-Marquardt run over the free parameters from u. */
static bool lm(SimFit *f, double *u, GError **err)
{
    int idx[SIM_FIT_MAX_PARAMS], n = free_params(f, idx);
    double a[SIM_FIT_MAX_PARAMS * SIM_FIT_MAX_PARAMS], g[SIM_FIT_MAX_PARAMS], trial[SIM_FIT_MAX_PARAMS];
    double lambda = 1e-3;
    if (!eval(f, u, f->r, err))
        return false;
    double c = cost(f, f->r, u);
    for (int it = 0; n > 0 && it < MAX_ITER; it++, f->iters++) {
        if (!jacobian(f, u, err))
            return false;
        bool improved = false;
        while (!improved && lambda < 1e12) {
            normal_eqs(f, u, idx, n, f->target * f->target, a, g);
            for (int i = 0; i < n; i++) {
                a[i * n + i] = a[i * n + i] * (1 + lambda) + 1e-12;
                g[i] = -g[i];
            }
            memcpy(trial, u, sizeof trial);
            if (chol_solve(a, g, n))
                for (int i = 0; i < n; i++)
                    trial[idx[i]] = clamp_u(&f->p[idx[i]], u[idx[i]] + g[i]);
            if (!eval(f, trial, f->r2, err))
                return false;
            double c2 = cost(f, f->r2, trial);
            if (c2 < c) {
                improved = true;
                double dc = c - c2;
                memcpy(u, trial, sizeof trial);
                memcpy(f->r, f->r2, sizeof(double) * f->nres);
                c = c2;
                lambda = fmax(lambda / 10, 1e-9);
                if (dc < 1e-7 * (1 + c))
                    return true;
            } else {
                lambda *= 10;
            }
        }
        if (!improved)
            return true;
    }
    return true;
}

static int cmp_abs(const void *a, const void *b)
{
    double x = fabs(*(const double *)a), y = fabs(*(const double *)b);
    return x < y ? -1 : x > y;
}

/* LM from a loss scale wide enough to take the median residual as data (a
 * model far off at its prior would otherwise see every row as an outlier and
 * learn nothing), narrowed by factors of 4 down to the caller's scale. */
static bool anneal(SimFit *f, double *u, GError **err)
{
    double target = f->target;
    if (!eval(f, u, f->r, err))
        return false;
    double *a = g_memdup2(f->r, sizeof(double) * f->nres);
    qsort(a, f->nres, sizeof(double), cmp_abs);
    double start = f->nres ? 2 * fabs(a[f->nres / 2]) : 0;
    g_free(a);
    bool ok = true;
    for (f->delta = fmax(start, target); ok; f->delta = fmax(f->delta / 4, target)) {
        ok = lm(f, u, err);
        if (f->delta == target)
            break;
    }
    f->delta = target;
    return ok;
}

/* The posterior sd of each free parameter at u with the data's variance s2
 * into `sd` or `sd_id`. */
static void posterior_sd(SimFit *f, const double *u, const int *idx, int n, double s2, bool id)
{
    double a[SIM_FIT_MAX_PARAMS * SIM_FIT_MAX_PARAMS], g[SIM_FIT_MAX_PARAMS];
    for (int i = 0; i < n; i++) {
        normal_eqs(f, u, idx, n, s2, a, g);
        for (int j = 0; j < n; j++) {
            g[j] = j == i;
            a[j * n + j] += 1e-12;
        }
        double sd = chol_solve(a, g, n) && g[i] > 0 ? sqrt(g[i]) : INFINITY;
        if (id)
            f->p[idx[i]].sd_id = sd;
        else
            f->p[idx[i]].sd = sd;
    }
}

/* Posterior spreads at u: whether the data determine a parameter is judged
 * at the nominal noise (a poor fit says the model is off, not that the rows
 * cannot tell a parameter); the spread reported uses the residuals' variance
 * where it is larger. */
static bool posterior(SimFit *f, const double *u, GError **err)
{
    int idx[SIM_FIT_MAX_PARAMS], n = free_params(f, idx);
    if (n == 0)
        return true;
    if (!eval(f, u, f->r, err) || !jacobian(f, u, err))
        return false;
    double s2 = 0;
    for (int k = 0; k < f->nres; k++) {
        double w;
        loss(f, f->r[k], &w);
        s2 += w * f->r[k] * f->r[k];
    }
    s2 = f->nres > n ? s2 / (f->nres - n) : 1;
    posterior_sd(f, u, idx, n, f->target * f->target, true);
    posterior_sd(f, u, idx, n, fmax(s2, f->target * f->target), false);
    return true;
}

/* Posterior over prior spread: 1 when the data taught nothing. */
static double spread(const FitParam *q)
{
    double s = q->sd_id / (q->prior_sd > 0 ? q->prior_sd : 1);
    return isnan(s) ? INFINITY : s;
}

static bool undetermined(const FitParam *q) { return !(spread(q) < UNDETERMINED); }

bool sim_fit_run(SimFit *f, GError **err)
{
    double u[SIM_FIT_MAX_PARAMS] = {0};
    g_free(f->r);
    g_free(f->r2);
    g_free(f->jac);
    f->r = g_new0(double, f->nres);
    f->r2 = g_new0(double, f->nres);
    f->jac = g_new0(double, (size_t)f->nres * (f->np ? f->np : 1));
    f->iters = 0;
    for (int i = 0; i < f->np; i++) {
        u[i] = log(f->p[i].prior);
    }
    if (!eval(f, u, f->r, err))
        return false;
    f->rms0 = rms(f, f->r);
    /* The MAP estimate of every parameter: one the rows do not see stays at
     * its prior (its gradient is 0); of several that trade off, each moves as
     * far as its prior allows.  Fixing the least determined at their priors
     * instead was tried: it cascades (each one fixed worsens the fit, which
     * widens the rest) and throws away what the rows say jointly. */
    if (!anneal(f, u, err) || !posterior(f, u, err))
        return false;
    for (int i = 0; i < f->np; i++)
        f->p[i].u = u[i];
    if (!eval(f, u, f->r, err))
        return false;
    f->rms1 = rms(f, f->r);
    return true;
}

int sim_fit_nparams(const SimFit *f) { return f->np; }
const char *sim_fit_name(const SimFit *f, int i) { return f->p[i].name; }
double sim_fit_value(const SimFit *f, int i) { return f->p[i].u == log(f->p[i].prior) ? f->p[i].prior : exp(f->p[i].u); }
double sim_fit_prior(const SimFit *f, int i) { return f->p[i].prior; }
double sim_fit_log_sd(const SimFit *f, int i) { return f->p[i].sd; }
bool sim_fit_determined(const SimFit *f, int i) { return !undetermined(&f->p[i]); }
double sim_fit_rms_before(const SimFit *f) { return f->rms0; }
double sim_fit_rms_after(const SimFit *f) { return f->rms1; }
int sim_fit_iterations(const SimFit *f) { return f->iters; }
