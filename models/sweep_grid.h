/* Private to the sweep: the grid's state, shared by its files (values and
 * paths in sweep_values.c, the grid in sweep.c, running the points in
 * sweep_run.c, curves, CSV and plots in sweep_out.c). */
#ifndef SWEEP_GRID_H
#define SWEEP_GRID_H

#include "sweep.h"

#include <math.h>

typedef struct {
    char *key;
    cJSON *values; /* array */
    int n;
} Axis;

struct Sweep {
    char *name;   /* the base file, for messages and the output */
    cJSON *base;  /* the base scenario */
    GArray *axes; /* Axis */
    bool weak;
    bool prepared;
    bool derive_dp; /* the base gives no dp: each point's comes from the scenario's rule */
    long base_per_replica; /* weak scaling: global_batch / dp of the base */
    int npoints;
    cJSON *notes;
};

/* SIM_ERROR_INPUT with the message as formatted. */
void sweep_input_error(GError **err, const char *fmt, ...) G_GNUC_PRINTF(2, 3);

/* The value at the dotted `key` of `root`, NULL when absent. */
const cJSON *sweep_get_path(const cJSON *root, const char *key);

/* A whole number that a double holds exactly. */
static inline bool sweep_is_int(double v) { return v == floor(v) && fabs(v) < 9007199254740992.0; }

#endif
