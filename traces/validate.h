/* Validation: measured collective times held against the collective model.
 * A trace (nccl-tests or rccl-tests output of one or several runs, OSU
 * micro-benchmarks output, an OTF2 archive ending in .otf2) is read into runs
 * of measured rows; each run is predicted on the topology, scaled to the
 * run's node count where its family allows, with the run's ranks filling each
 * node's first ranks; every row gets its absolute percentage error.
 *
 * Sizes are nccl-tests' (OSU's allgather and alltoall counts are scaled to
 * the whole buffer); OSU bandwidth rows become the time of one window of 64
 * messages.  A sendrecv (osu_latency, osu_bw, osu_bibw, sendrecv_perf) is
 * predicted as one message between two ranks, the pair across the first node
 * boundary when there are several nodes.  Rows with a zero size or time are
 * left out (counted).  Bad input is SIM_ERROR_INPUT "FILE: what is wrong". */
#ifndef VALIDATE_H
#define VALIDATE_H

#include "collective.h"
#include "sim_error.h"

#include <stdbool.h>
#include <stddef.h>

typedef struct {
    const char *topology; /* preset or JSON file */
    const char *params;   /* collective-model parameters; NULL: the default */
    int op;               /* NcclTestsOp for traces that say none; -1: not given */
    int algo, proto;      /* CollAlgo, CollProto (COLL_*_AUTO: the model picks) */
    int ranks, nodes;     /* > 0: what the traces do not say; never contradicts them */
    const CollParams *param_set; /* in place of `params` when not NULL (calibration) */
    int nccl_version;     /* > 0: the NCCL version code to model, over what a trace prints */
    int library;          /* ValidateLibrary: which collective library's model predicts */
    const char *mpi_library; /* "openmpi" | "mpich" | "cray-mpich" for the MPI model; NULL: the trace header's, else openmpi */
    const char *nccl_library; /* "nccl" | "rccl" for the NCCL model; NULL: the trace's, else the topology's default */
    const double *mpi_values; /* MPI_NUM_PARAMS values over the MPI model's (calibration); NULL: none */
    bool as_logged;           /* price a size with the algorithm and protocol NCCL's log says it ran, where it says */
} ValidateOptions;

/* The collective model a run is predicted with: AUTO takes the MPI model
 * (models/mpi_model.h) for OSU traces and the NCCL model for the others. */
typedef enum { VALIDATE_LIB_AUTO, VALIDATE_LIB_NCCL, VALIDATE_LIB_MPI } ValidateLibrary;

typedef struct {
    double size_bytes, measured_s, predicted_s, abs_pct_error;
    const char *op;           /* the row's collective: "allreduce", ..., "sendrecv" */
    const char *algo, *proto; /* what the model ran */
    double p10_s, p90_s;      /* the prediction's band (coll_band) */
    double fabric_factor;     /* what the fabric above the NICs slowed its bandwidth term by (CollCost's) */
    const char *nccl_algo, *nccl_proto; /* what NCCL's own log says it ran there; NULL where it says nothing */
} ValidateRow;

/* Rows whose NCCL log says what NCCL ran (*said), and of those the ones the
 * model picked the same algorithm and protocol for (returned). */
size_t validate_nccl_agrees(const ValidateRow *rows, size_t n, size_t *said);

/* The row's signed error in percent: + where the model is slower than the
 * run (what validate prints; the medians are over abs_pct_error). */
double validate_row_pct_error(const ValidateRow *row);

/* Absolute percentage errors over rows; the "large" rows are those of 1 MiB
 * and up, the "small" ones those below (their medians mean nothing when
 * n_large or n_small is 0). */
typedef struct {
    unsigned n_rows, n_large, n_small;
    double median, max, median_large, median_small;
} ValidateErrors;

/* The errors of `n` rows, and as JSON members of `o` (the keys below). */
ValidateErrors validate_errors_of(const ValidateRow *rows, size_t n);
void validate_errors_json(const ValidateErrors *e, cJSON *o);

/* Whether a trace's device name ("NVIDIA A100-SXM4-40GB", "AMD Instinct
 * MI300X") and an accelerator preset or file ("v100-sxm2-16gb") name different
 * chips: their model numbers (a word of 1-3 letters, 3 digits and at most 2
 * letters: A100, MI300X, GH200) differ.  Memory sizes and form factors are not
 * compared (collectives do not depend on them); a superchip (GH200, GB200)
 * matches its GPU's generation (H100/H200, B200).  False where either has no
 * model number ("AMD Radeon Graphics", "tpu-v3"). */
bool validate_device_differs(const char *device, const char *accelerator);

/* One run of a trace, as far as it got. */
typedef struct {
    const char *trace;    /* FILE, or FILE#runK for run K of several */
    int run;              /* K; 0 for a file of one run */
    const char *note;     /* what the reader skipped or assumed; NULL when nothing */
    bool mixed;           /* rows of several collectives */
    const char *op;       /* "allreduce", ..., "sendrecv"; "mixed" */
    const char *sendrecv; /* what a sendrecv row's times are; NULL for a collective */
    int ranks, nodes;
    const char *ranks_from; /* "the trace", "busbw/algbw", "--ranks" */
    const char *topology;   /* the topology's name; NULL when nothing was predicted */
    int nccl_version;       /* NCCL version code modelled (the trace's or --nccl-version); 0: the newest */
    const char *library;    /* "openmpi 5.0.8 (the trace)" when the MPI model predicted; NULL for NCCL's */
    const char *nccl_library; /* "nccl" or "rccl" when the NCCL model predicted (whose tuner); NULL otherwise */
    const char *device;      /* the device the trace ran on ("Tesla V100-SXM2-16GB"), NULL if it says none */
    const char *accelerator; /* the topology's accelerator preset ("a100-80gb"), NULL if it names none */
    /* the algorithm and protocol the run's environment forced (NCCL_ALGO,
     * NCCL_PROTO) and the model then ran, as it names them; NULL: none */
    const char *env_algo, *env_proto;
    const ValidateRow *rows; /* predicted so far, in trace order */
    size_t n_rows;
    int skipped;   /* once every row is predicted: rows with a zero size or time */
    int wrong_rows; /* rows the benchmark itself found wrong results in ("#wrong" > 0) */
    bool done;     /* every row predicted and `errors` summarised */
    ValidateErrors errors;
} ValidateRun;

typedef struct Validation Validation;

/* The options' strings must outlive the validation. */
Validation *validate_new(const ValidateOptions *o);
void validate_free(Validation *v);

/* Reads every run of the trace at `path`, then predicts each.  False at the
 * first bad input; the runs stay readable as far as they got (the next call
 * is then meaningless). */
bool validate_trace(Validation *v, const char *path, GError **err);

/* Predicts every run read so far again with parameters `p` (NULL: the
 * options' own), for calibration; the rows keep their order. */
bool validate_repredict(Validation *v, const CollParams *p, GError **err);
/* The same for the MPI model's runs, with its parameters at `values` (MPI_NUM_PARAMS). */
bool validate_repredict_mpi(Validation *v, const double *values, GError **err);

/* The runs of every trace so far, in order; NULL past the end. */
size_t validate_n_runs(const Validation *v);
const ValidateRun *validate_run(const Validation *v, size_t i);
/* Over the rows of every run. */
/* Every run's rows' predicted times, in order, into OUT (at most MAX); the count. */
size_t validate_predictions(const Validation *v, double *out, size_t max);
ValidateErrors validate_errors(const Validation *v);

/* {"topology", errors..., "rows": [every row], "traces": [{"trace", ["run"],
 * "op", ["measured"], "ranks", "ranks_from", "nodes", errors..., "rows"}]}
 * with errors "median_abs_pct_error", "max_abs_pct_error",
 * "median_abs_pct_error_large" and "_small" (null without such rows),
 * "n_rows"; SI units.  After every trace succeeded. */
cJSON *validate_json(const Validation *v);

/* Measured points and predicted lines against size, one colour per run,
 * with the predictions' p10-p90 band; where the options name parameters
 * (a calibrated overlay), the default parameters' predictions dashed beside
 * them (FILE.png or FILE.svg).  Leaves the rows predicted as before. */
bool validate_plot(Validation *v, const char *path, GError **err);

#endif
