/* The calibration procedure shared by the collective model and the
 * accelerator model (`shardsim calibrate`): which parameters the rows see,
 * the robust fit (sim_fit.h) on all rows and on each cross-validation fold,
 * and the report.  A model is a set of named scalar parameters and a
 * function predicting every measured row from their values. */
#ifndef CALIB_CORE_H
#define CALIB_CORE_H

#include "validate.h"

typedef struct {
    void *user;
    int nkeys;
    const char *(*key)(void *user, int i);
    /* what may be fitted: bounds, the prior's log-space spread, whether at all */
    void (*bounds)(void *user, int i, double *lo, double *hi, double *prior_sd, bool *fit);
    double (*prior)(void *user, int i); /* the value before calibration */
    /* the rows' predictions with the keys at `values` (nkeys of them): every
     * row where `want` is NULL, else at least those where want[k] (a model
     * may skip the others: a fold's fit needs only its own rows) */
    bool (*predict)(void *user, const double *values, const bool *want, double *pred, GError **err);
} CalibModel;

typedef struct CalibFit CalibFit;

/* Fits `m` to `nrows` measurements.  `size` (may be NULL) splits the rows'
 * errors into below / from 1 MiB; `group` (may be NULL) names each row's run:
 * with two or more runs each is predicted by a fit on the others, else every
 * other row by a fit on the rest. */
CalibFit *calib_fit(const CalibModel *m, int nrows, const double *meas, const double *size, const int *group,
                    GError **err);
void calib_fit_free(CalibFit *f);

/* The fitted values of every key (nkeys). */
const double *calib_fit_values(const CalibFit *f);
/* Report members: "n_rows", "method", "before", "after", "cross_validated",
 * "parameters", "unused", "zero_in_model", added to `o`. */
void calib_fit_report(const CalibFit *f, cJSON *o);
/* {KEY: {"value", "source", "log_sd"}} of every key whose value differs from
 * `reference` (may be NULL: the prior) or that was fitted. */
cJSON *calib_fit_parameters(const CalibFit *f, const char *source, double (*reference)(void *user, int i));
/* [p10, p90] of the cross-validated log(predicted / measured) of the rows
 * below 1 MiB (large false) or from 1 MiB, added to `o` as `key` when there
 * are such rows. */
void calib_fit_band(const CalibFit *f, bool large, const char *key, cJSON *o);

#endif
