/* Plan: from a planner's question (a model, a machine, a GPU budget, tokens
 * to train) to the best parallel configuration.
 *
 * plan_space.c enumerates the candidates (tp, pp, virtual stages, cp, dp,
 * ep, micro-batch, ZeRO stage, recomputation, sequence parallelism, offload)
 * for each GPU count and discards what cannot be valid without running it
 * (does not divide, over the node limit); plan_eval.c screens every other
 * candidate with the fast model ("flow_contention": false) on a thread pool
 * and over MPI ranks (sim_dist.h), then simulates the best k in full;
 * plan_train.c turns a step into days, GPU-hours, cost and energy;
 * plan_out.c ranks, finds the Pareto fronts and writes table, JSON, CSV and
 * the plot.  Output never depends on the number of threads or ranks. */
#ifndef PLAN_H
#define PLAN_H

#include "sim_dist.h"
#include "sim_error.h"

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdio.h>

typedef enum { PLAN_OBJ_TIME, PLAN_OBJ_COST, PLAN_OBJ_THROUGHPUT } PlanObjective;

/* Why a candidate left the search; PLAN_OK for one that is ranked. */
typedef enum {
    PLAN_OK,
    PLAN_DISCARD_DIVIDE, /* a degree does not divide what it splits (GPUs, heads, layers, batch, ...) */
    PLAN_DISCARD_NODES,  /* more nodes than --max-nodes */
    PLAN_DISCARD_INVALID, /* the scenario rejects it for another reason (its message is kept) */
    PLAN_DISCARD_FIT,    /* needs more memory than the accelerator has */
    PLAN_DISCARD_DAYS,   /* trains for longer than --days */
    PLAN_DISCARD_FAIL,   /* failures come faster than checkpoints can save work */
    PLAN_PRUNED,         /* valid and fits, but its step's lower bound is worse than the k-th best
                            screened at its GPU count: not simulated (--exhaustive simulates it) */
    PLAN_NREASONS
} PlanReason;
const char *plan_reason_name(PlanReason r); /* "does not fit", ... */

/* Inputs of time to train (plan_train.c; defaults in
 * models/presets/plan.json, each with its source).  NaN: the preset's. */
typedef struct {
    double tokens;                 /* to train; NaN: 20 per parameter */
    double price_per_gpu_hour;     /* $ */
    double failures_per_gpu_hour;
    double restart_s;
    double storage_bps_per_gpu;    /* checkpoint write bandwidth per GPU */
    double checkpoint_interval_s;  /* NaN: Young's optimum sqrt(2 x write x MTBF) */
    double board_watts;            /* NaN: the accelerator's, from the preset */
    double power_utilisation;      /* average draw / board power */
    double pue;
} PlanTrainInputs;

typedef struct {
    int gpus_lo, gpus_hi;      /* 0: the scenario's own */
    int max_nodes;             /* 0: no limit */
    double max_days;           /* 0: no limit */
    PlanObjective objective;
    bool free_batch;           /* the global batch may round to each candidate's dp x micro-batch */
    bool allow_offload;
    int top;                   /* simulated in full; default 50 */
    bool exhaustive;           /* screen every candidate that fits (else prune by the lower bound) */
    int jobs;                  /* threads; <= 0: the processors */
    PlanTrainInputs train;
} PlanOptions;

void plan_options_default(PlanOptions *o);
/* "512" or "256-1024" into lo, hi. */
bool plan_parse_gpus(const char *text, int *lo, int *hi, GError **err);
bool plan_parse_objective(const char *text, PlanObjective *o, GError **err);

typedef struct Plan Plan;

/* Loads the scenario (it must run as written: its own configuration is the
 * reference the ranking reports) and enumerates the candidates. */
Plan *plan_new(const char *path, const PlanOptions *o, GError **err);
void plan_free(Plan *p);
int plan_num_candidates(const Plan *p); /* enumerated, before any discard */

/* Screens every candidate, ranks, simulates the top k in full and ranks
 * again; every rank of `d` takes its block and all agree on the result. */
bool plan_run(Plan *p, SimDist *d, GError **err);

/* {"scenario", "objective", "gpus", "candidates", "screened", "discarded":
 *  {reason: n}, "reference": {...}, "ranked": [...top k in full...],
 *  "pareto": {"gpus_days": [...], "cost_days": [...]}, "inputs": {...}} */
cJSON *plan_result_json(const Plan *p);
void plan_print_table(const Plan *p, FILE *f);
bool plan_write_csv(const Plan *p, const char *path, GError **err);
bool plan_plot_pareto(const Plan *p, const char *path, GError **err);

#endif
