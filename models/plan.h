/* Plan: from a planner's question (a model, a machine, a GPU budget, tokens
 * to train) to the best parallel configuration.
 *
 * plan_space.c enumerates the candidates (tp, pp, virtual stages, cp, dp,
 * ep, micro-batch, ZeRO stage, recomputation, sequence parallelism, offload)
 * for each GPU count and discards what cannot be valid without running it
 * (does not divide, over the node limit); plan_eval.c screens every other
 * candidate with the fast model ("flow_contention": false) on a thread pool
 * and over MPI ranks (sim_dist.h), then simulates the best k in full (a
 * step of many micro-batches from three shorter ones, linear past the
 * pipeline's warm-up);
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

/* The searched dimensions a --fix or a --locate names (plan_constraints.c). */
typedef enum {
    PLAN_KEY_GPUS, PLAN_KEY_TP, PLAN_KEY_PP, PLAN_KEY_VPP, PLAN_KEY_CP, PLAN_KEY_DP, PLAN_KEY_EP, PLAN_KEY_MB,
    PLAN_KEY_ZERO, PLAN_KEY_RECOMPUTE, /* 0 none, 1 selective, 2 full */
    PLAN_KEY_SP, PLAN_KEY_TPOV, PLAN_KEY_OFFLOAD, /* 0 off, 1 on */
    PLAN_NKEYS
} PlanKey;

/* A value per key, -1 for any: "tp=8,pp=12,recompute=full". */
typedef struct {
    int v[PLAN_NKEYS];
} PlanMatch;

/* What --allow / --deny open or close (a candidate that uses a denied
 * feature is not searched): what a published run's software had. */
typedef enum {
    PLAN_FEAT_OFFLOAD,     /* denied unless allowed */
    PLAN_FEAT_SELECTIVE,   /* selective recomputation */
    PLAN_FEAT_FULL,        /* full recomputation */
    PLAN_FEAT_DISTOPT,     /* ZeRO 1-3 (Megatron's distributed optimizer is ZeRO-1) */
    PLAN_FEAT_ZERO2,       /* ZeRO 2-3 */
    PLAN_FEAT_ZERO3,       /* ZeRO-3 */
    PLAN_FEAT_SP,          /* sequence parallelism */
    PLAN_FEAT_TPOV,        /* tp_comm_overlap */
    PLAN_FEAT_INTERLEAVE,  /* virtual stages > 1 */
    PLAN_FEAT_CP,          /* context parallelism */
    PLAN_FEAT_EP,          /* expert parallelism */
    PLAN_FEAT_UNEVEN,      /* pipeline stages of unequal layer counts */
    PLAN_NFEATURES
} PlanFeature;

#define PLAN_MAX_LOCATE 16

void plan_match_any(PlanMatch *m);
/* "KEY=VALUE[,KEY=VALUE...]" merged into m (a key given twice with two
 * values is an error); `opt` names the option in messages. */
bool plan_parse_match(const char *opt, const char *text, PlanMatch *m, GError **err);
/* "FEATURE[,FEATURE...]" set in (deny) or cleared from the mask. */
bool plan_parse_features(const char *opt, const char *text, bool deny, unsigned *mask, GError **err);
const char *plan_key_name(PlanKey k);
const char *plan_feature_name(PlanFeature f);
char *plan_match_text(const PlanMatch *m); /* "tp=8,recompute=full" */

typedef struct {
    int gpus_lo, gpus_hi;      /* 0: the scenario's own */
    int max_nodes;             /* 0: no limit */
    double max_days;           /* 0: no limit */
    PlanObjective objective;
    bool free_batch;           /* the global batch may round to each candidate's dp x micro-batch */
    unsigned deny;             /* bit per PlanFeature; the default denies offload only */
    PlanMatch fix;             /* only candidates that match are searched */
    double memory_fraction;    /* fits: below this share of the accelerator's memory (default 1) */
    PlanMatch locate[PLAN_MAX_LOCATE]; /* layouts whose rank is reported exactly */
    int nlocate;
    int top;                   /* simulated in full; default 50 */
    bool exhaustive;           /* screen every candidate that fits (else prune by the lower bound) */
    bool exact_steps;          /* every step at its own micro-batch count (else long ones extrapolated) */
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
 *  "pareto": {"gpus_days": [...], "cost_days": [...]}, "inputs": {...},
 *  "constraints": {"fixed", "denied"}, "located": [...]} */
cJSON *plan_result_json(const Plan *p);
/* How many candidates are ranked (valid, fit, within the limits). */
int plan_num_ranked(const Plan *p);
/* The days to train of the fastest candidate --days discarded (NaN: none). */
double plan_fewest_days_over(const Plan *p);
void plan_print_table(const Plan *p, FILE *f);
bool plan_write_csv(const Plan *p, const char *path, GError **err);
bool plan_plot_pareto(const Plan *p, const char *path, GError **err);

#endif
