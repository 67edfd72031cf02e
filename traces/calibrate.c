/* `shardsim calibrate` for collectives: the traces read as validate reads
 * them, the collective model's parameters as a CalibModel (calib_core.h),
 * and the overlay with what the traces covered. */
#include "calibrate.h"
#include "calib_core.h"
#include "calib_mpi.h"

#include <math.h>
#include <string.h>

struct Calibration {
    ValidateOptions o;
    Validation *v;
    GPtrArray *traces; /* char*, as given */
    CollParams *prior, *work;
    int nrows;
    double *meas, *size;
    int *run_of; /* each row's run */
    CalibFit *fit;
    CalibMpi *mpi; /* OSU runs: the MPI model's parameters instead */
};

Calibration *calib_new(const ValidateOptions *o)
{
    Calibration *c = g_new0(Calibration, 1);
    c->o = *o;
    c->v = validate_new(o);
    c->traces = g_ptr_array_new_with_free_func(g_free);
    return c;
}

void calib_free(Calibration *c)
{
    if (!c)
        return;
    validate_free(c->v);
    g_ptr_array_free(c->traces, TRUE);
    coll_params_free(c->prior);
    coll_params_free(c->work);
    g_free(c->meas);
    g_free(c->size);
    g_free(c->run_of);
    calib_fit_free(c->fit);
    calib_mpi_free(c->mpi);
    g_free(c);
}

bool calib_add_trace(Calibration *c, const char *path, GError **err)
{
    g_ptr_array_add(c->traces, g_strdup(path));
    return validate_trace(c->v, path, err);
}

static void collect_rows(Calibration *c)
{
    c->nrows = 0;
    for (size_t i = 0; i < validate_n_runs(c->v); i++)
        c->nrows += (int)validate_run(c->v, i)->n_rows;
    c->meas = g_new(double, c->nrows + 1);
    c->size = g_new(double, c->nrows + 1);
    c->run_of = g_new(int, c->nrows + 1);
    int k = 0;
    for (size_t i = 0; i < validate_n_runs(c->v); i++) {
        const ValidateRun *r = validate_run(c->v, i);
        for (size_t j = 0; j < r->n_rows; j++, k++) {
            c->meas[k] = r->rows[j].measured_s;
            c->size[k] = r->rows[j].size_bytes;
            c->run_of[k] = (int)i;
        }
    }
}

static const char *m_key(void *u, int i) { return coll_params_key(i); }

static void m_bounds(void *u, int i, double *lo, double *hi, double *sd, bool *fit)
{
    coll_params_bounds(i, lo, hi, sd, fit);
}

static double m_prior(void *u, int i) { return coll_params_get(((Calibration *)u)->prior, i); }

static double m_default(void *u, int i)
{
    static CollParams *def; /* the default file, read once */
    static gsize once;
    if (g_once_init_enter(&once)) {
        def = coll_params_new(NULL, NULL);
        g_once_init_leave(&once, 1);
    }
    return def ? coll_params_get(def, i) : NAN;
}

/* Every row predicted with the parameters at `values`. */
static bool m_predict(void *u, const double *values, const bool *want, double *pred, GError **err)
{
    Calibration *c = u;
    for (int i = 0; i < coll_params_count(); i++)
        if (coll_params_get(c->work, i) != values[i])
            coll_params_set(c->work, i, values[i]);
    if (!validate_repredict(c->v, c->work, err))
        return false;
    validate_predictions(c->v, pred, (size_t)c->nrows);
    return true;
}

bool calib_run(Calibration *c, GError **err)
{
    size_t n = validate_n_runs(c->v), n_mpi = 0;
    for (size_t i = 0; i < n; i++)
        n_mpi += validate_run(c->v, i)->library != NULL;
    if (n_mpi > 0 && n_mpi < n) {
        g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "calibrate: %zu of the %zu runs are predicted by the MPI model "
                    "(OSU) and the others by NCCL's: calibrate each model on its own traces", n_mpi, n);
        return false;
    }
    if (n_mpi > 0) {
        collect_rows(c);
        if (!(c->mpi = calib_mpi_new(c->v, &c->o, c->nrows, err)))
            return false;
        CalibModel m = calib_mpi_model(c->mpi);
        c->fit = calib_fit(&m, c->nrows, c->meas, c->size, c->run_of, err);
        return c->fit != NULL;
    }
    if (!(c->prior = coll_params_new(c->o.params, err)))
        return false;
    c->work = coll_params_copy(c->prior);
    collect_rows(c);
    CalibModel m = {c, coll_params_count(), m_key, m_bounds, m_prior, m_predict};
    c->fit = calib_fit(&m, c->nrows, c->meas, c->size, c->run_of, err);
    return c->fit != NULL;
}

/* ---------------- JSON ---------------- */

static cJSON *trace_list(const Calibration *c)
{
    cJSON *a = cJSON_CreateArray();
    for (guint i = 0; i < c->traces->len; i++)
        cJSON_AddItemToArray(a, cJSON_CreateString(c->traces->pdata[i]));
    return a;
}

cJSON *calib_report_json(const Calibration *c)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "topology", c->o.topology);
    cJSON_AddItemToObject(o, "traces", trace_list(c));
    calib_fit_report(c->fit, o);
    return o;
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
    calib_fit_band(c->fit, false, "log_residual_small", o);
    calib_fit_band(c->fit, true, "log_residual_large", o);
    cJSON_AddItemToObject(o, "size_bytes", cJSON_CreateDoubleArray((double[]){smin, smax}, 2));
    cJSON_AddItemToObject(o, "ranks", cJSON_CreateIntArray((int[]){rmin, rmax}, 2));
    cJSON_AddItemToObject(o, "nodes", cJSON_CreateIntArray((int[]){nmin, nmax}, 2));
    cJSON_AddItemToObject(o, "topologies", topos);
    return o;
}

cJSON *calib_overlay_json(const Calibration *c)
{
    cJSON *o = cJSON_CreateObject();
    GString *src = g_string_new("fitted from");
    for (guint i = 0; i < c->traces->len; i++) {
        char *b = g_path_get_basename(c->traces->pdata[i]);
        g_string_append_printf(src, "%s %s", i ? "," : "", b);
        g_free(b);
    }
    g_string_append_printf(src, " (%d rows) by shardsim calibrate", c->nrows);
    cJSON_AddStringToObject(o, "overlay", c->mpi ? "MPI-model parameters (mpi.*), on models/presets/mpi.json"
                                                 : "collective-model parameters, on models/presets/collectives.json");
    cJSON_AddStringToObject(o, "topology", c->o.topology);
    if (c->o.params)
        cJSON_AddStringToObject(o, "prior", c->o.params);
    cJSON_AddItemToObject(o, "parameters", calib_fit_parameters(c->fit, src->str, c->mpi ? NULL : m_default));
    cJSON_AddItemToObject(o, "calibration", coverage_json(c));
    g_string_free(src, TRUE);
    return o;
}
