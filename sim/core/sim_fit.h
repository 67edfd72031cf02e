/* sim_fit: robust, bounded nonlinear least squares with priors, the engine
 * behind `shardsim calibrate`.
 *
 * Every parameter is positive and fitted in log space (a bandwidth fraction
 * and a latency move by factors, not by amounts), within [lo, hi], pulled
 * toward its prior by a Gaussian of `prior_sd` in log space (a weak MAP
 * estimate: a parameter the data says nothing about stays where it was).
 * Residuals are compared under a soft-L1 loss of scale `delta`, so a few
 * outlying rows (a noisy size, a mislabelled run) do not drag the fit.
 * Levenberg-Marquardt on the normal equations; the Jacobian by forward
 * differences; the loss scale starts wide (the median residual) and narrows
 * to `delta`, so a model far off at its prior still learns from every row.
 * The result is the MAP estimate: a parameter no row sees stays exactly at
 * its prior.  A parameter whose posterior spread (at the nominal noise
 * `delta`) is not clearly narrower than its prior's is reported as not
 * determined.  Deterministic. */
#ifndef SIM_FIT_H
#define SIM_FIT_H

#include <glib.h>
#include <stdbool.h>

typedef struct SimFit SimFit;

/* Fills r[0..nres) for the parameter values x[0..nparams).  Return false
 * (with err) to abort the fit. */
typedef bool (*SimFitFn)(const double *x, double *r, void *user, GError **err);

#define SIM_FIT_MAX_PARAMS 64

SimFit *sim_fit_new(int nres, SimFitFn fn, void *user);
void sim_fit_free(SimFit *f);

/* Adds a parameter (prior > 0, 0 < lo <= prior <= hi); returns its index or
 * -1 when the arguments are out of range or there are too many. */
int sim_fit_add(SimFit *f, const char *name, double prior, double lo, double hi, double prior_sd);
/* Scale of the soft-L1 loss on the residuals (default 0.05). */
void sim_fit_set_loss_scale(SimFit *f, double delta);

bool sim_fit_run(SimFit *f, GError **err);

int sim_fit_nparams(const SimFit *f);
const char *sim_fit_name(const SimFit *f, int i);
double sim_fit_value(const SimFit *f, int i);
double sim_fit_prior(const SimFit *f, int i);
/* Posterior standard deviation of log(value), at the residuals' variance
 * where that exceeds delta^2. */
double sim_fit_log_sd(const SimFit *f, int i);
bool sim_fit_determined(const SimFit *f, int i);
/* Root mean square of the residuals at the start and at the solution. */
double sim_fit_rms_before(const SimFit *f);
double sim_fit_rms_after(const SimFit *f);
int sim_fit_iterations(const SimFit *f);

#endif
