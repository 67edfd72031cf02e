/* `shardsim calibrate` on OSU runs: the MPI model's parameters
 * (mpi_model.h, "mpi." keys) as a CalibModel (calib_core.h). */
#ifndef CALIB_MPI_H
#define CALIB_MPI_H

#include "calib_core.h"

typedef struct CalibMpi CalibMpi;

/* Over the runs of `v`, every one predicted by the MPI model, `nrows` rows
 * in all; the priors are the model's values on o->topology (and o->params
 * when that is an overlay). */
CalibMpi *calib_mpi_new(Validation *v, const ValidateOptions *o, int nrows, GError **err);
void calib_mpi_free(CalibMpi *c);
CalibModel calib_mpi_model(CalibMpi *c);

#endif
