/* The MPI model's parameters for `shardsim calibrate`: their priors (the
 * model's own values on the calibration's topology), bounds and spreads,
 * and every OSU row predicted again with a set of values (validate.c's
 * validate_repredict_mpi).  Only the values that differ from the prior are
 * set, so the prior reproduces validate's predictions exactly. */
#include "calib_mpi.h"
#include "mpi_model.h"
#include "topo.h"

#include <math.h>

struct CalibMpi {
    Validation *v;
    int nrows;
    double prior[MPI_NUM_PARAMS], work[MPI_NUM_PARAMS];
};

CalibMpi *calib_mpi_new(Validation *v, const ValidateOptions *o, int nrows, GError **err)
{
    Topo *t = topo_load(o->topology, &(TopoOptions){0}, err);
    if (!t)
        return NULL;
    int nodes = topo_num_nodes(t) > 1 ? 2 : 1;
    const char *params = o->params && mpi_params_is_overlay(o->params) ? o->params : NULL;
    MpiModel *m = mpi_model_new(t, nodes, topo_ranks_per_node(t), MPI_LIB_OPENMPI, params, err);
    topo_free(t);
    if (!m)
        return NULL;
    CalibMpi *c = g_new0(CalibMpi, 1);
    c->v = v;
    c->nrows = nrows;
    for (int i = 0; i < MPI_NUM_PARAMS; i++)
        c->prior[i] = mpi_model_param(m, i);
    mpi_model_free(m);
    return c;
}

void calib_mpi_free(CalibMpi *c) { g_free(c); }

static const char *key(void *u, int i)
{
    (void)u;
    return mpi_param_key(i);
}

/* A decade either way of the prior; the prior's spread a factor of 3 for
 * software costs and latencies (assumed, order of magnitude), 1.65 for
 * bandwidths (stated from hardware figures). */
static void bounds(void *u, int i, double *lo, double *hi, double *sd, bool *fit)
{
    double p = ((CalibMpi *)u)->prior[i];
    *fit = p > 0 && isfinite(p);
    *lo = *fit ? p / 10 : 0;
    *hi = *fit ? p * 10 : 1;
    *sd = g_str_equal(mpi_param_unit(i), "B/s") ? 0.5 : log(3.0);
}

static double prior(void *u, int i) { return ((CalibMpi *)u)->prior[i]; }

static bool predict(void *u, const double *values, const bool *want, double *pred, GError **err)
{
    CalibMpi *c = u;
    for (int i = 0; i < MPI_NUM_PARAMS; i++)
        c->work[i] = values[i] == c->prior[i] ? NAN : values[i];
    if (!validate_repredict_mpi(c->v, c->work, err))
        return false;
    validate_predictions(c->v, pred, (size_t)c->nrows);
    return true;
}

CalibModel calib_mpi_model(CalibMpi *c) { return (CalibModel){c, MPI_NUM_PARAMS, key, bounds, prior, predict}; }
