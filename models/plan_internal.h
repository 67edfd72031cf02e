/* Private to the plan's files: a candidate, its result and the plan's state
 * (plan_space.c fills the candidates, plan_eval.c their results, plan_train.c
 * time to train, plan_out.c the outputs). */
#ifndef PLAN_INTERNAL_H
#define PLAN_INTERNAL_H

#include "plan.h"
#include "step.h"

typedef struct {
    int gpus, nodes, tp, pp, vpp, cp, dp, ep, mb, gb;
    int zero;      /* 0..3 */
    int recompute; /* 0 none, 1 selective, 2 full */
    bool sp, tp_overlap, offload; /* tp_overlap: Megatron-Core's tp_comm_overlap */
    bool uneven;                  /* the layers do not divide over pp x vpp: stages of unequal layers */
} PlanCand;

/* Micro-batches per step of a candidate: gb / (dp x mb), its data-parallel
 * degree without cp, as the step model counts them. */
static inline int plan_cand_micro_batches(const PlanCand *c) { return (int)(c->gb / ((long)c->dp * c->mb)); }

/* Time to train from one step (plan_train.c). */
typedef struct {
    double steps, compute_s, checkpoint_bytes, checkpoint_write_s, checkpoint_interval_s, goodput, wall_s, days;
    double gpu_hours, cost, energy_j; /* energy NaN: no board power known */
} PlanTrain;

typedef struct {
    PlanReason reason;
    char *error;       /* PLAN_DISCARD_INVALID: the scenario's message */
    double step_s, mfu, mem_bytes, tokens_per_s;
    double band[2]; /* the step's p10 and p90 over the step (run's step_time_p10_s, _p90_s) */
    PlanTrain t;
    double screen_s;   /* the step of the fast model (step_s is the full one when full) */
    double lb_s;       /* the step's lower bound (step_scenario_estimate) */
    bool full;         /* simulated in full (with contention) */
    bool top;          /* among the best k of the screen */
    bool extrap[2];    /* the screen's step, the full one: from three shorter steps (plan_eval.c, extrap_base) */
} PlanResult;

struct Plan {
    char *path;
    char *text;           /* the scenario file's bytes, read once ("-": standard input) */
    size_t text_len;
    cJSON *base;          /* the scenario as written */
    PlanOptions o;
    int layers, heads, kv_heads, hidden, ffn, seq_len, experts, rpn; /* what the search divides */
    bool jax;                  /* "framework": "jax": no Megatron tp_comm_overlap to search */
    double allocator_fraction; /* the scenario's "memory_fraction" (its allocator's share; fits applies it) */
    int etp; /* the scenario's "expert_tp" (0: none), which every candidate keeps */
    double params, peak_flops, hbm_bytes, ckpt_bytes_per_param;
    char *accel, *model;
    PlanTrainInputs train; /* with the preset's defaults filled */
    cJSON *sources;        /* the preset's "source" of each input */
    PlanCand ref;          /* the scenario's own configuration */
    bool ref_layout;       /* it places its layers with a pipeline_layout (for its pp x vpp only) */
    bool ref_modules;      /* it lists Megatron-Core's recompute_modules: they set none vs selective */
    int ref_local_batch;   /* its pipeline_microbatches x micro_batch: samples a pipeline schedule (0: none) */
    int ref_split;         /* the embedding and loss it counts as layers in the pipeline split (account_for_*) */
    int ref_shard_group;   /* its hybrid sharding's shard group, which the search does not vary (0: none) */
    int ref_variants;      /* the weight updates the scenario compares; the reference is the first */
    char *ref_variant;     /* its label */
    int ref_index;         /* its candidate, -1 when the search does not hold it */
    GArray *cands;         /* PlanCand */
    StepCache *cache;      /* the topologies of the GPU counts, loaded once */
    PlanResult *res;       /* per candidate, after plan_run */
    int *order;            /* ranked candidates (PLAN_OK), best first */
    int nranked, nfull;
    int nsim; /* candidates the screen simulated */
    int counts[PLAN_NREASONS];
    int loc[PLAN_MAX_LOCATE];  /* the best candidate of each --locate, -1: none ranks */
    int loc_matches[PLAN_MAX_LOCATE]; /* candidates that match it */
};

/* plan_space.c */
bool plan_space_build(Plan *p, GError **err);
/* The cheap checks, without running anything: PLAN_OK or why not. */
PlanReason plan_space_check(const Plan *p, const PlanCand *c);
/* The candidate's pipeline_microbatches (0 none, -1 its micro-batches do
 * not hold the scenario's local batch). */
int plan_cand_pipeline_microbatches(const Plan *p, const PlanCand *c);
/* Whether the scenario's pipeline_layout places the candidate's layers. */
bool plan_cand_layout(const Plan *p, const PlanCand *c);
/* "tp8 pp16 v2 dp8 mb1 z1 full sp" */
char *plan_cand_label(const PlanCand *c);

/* plan_constraints.c */
bool plan_match(const PlanMatch *m, const PlanCand *c);
bool plan_cand_uses(const PlanCand *c, PlanFeature f);
/* Not denied, and matches --fix. */
bool plan_cand_allowed(const Plan *p, const PlanCand *c);
cJSON *plan_constraints_json(const Plan *p);

/* plan_eval.c: the candidate's scenario (flow contention as asked). */
cJSON *plan_cand_scenario(const Plan *p, const PlanCand *c, bool full);

/* plan_train.c */
bool plan_train_defaults(Plan *p, GError **err);
void plan_train_compute(const Plan *p, const PlanCand *c, double step_s, PlanTrain *t);
/* The objective's value, smaller is better. */
double plan_objective_value(const Plan *p, const PlanCand *c, const PlanResult *r);

/* plan_out.c */
void plan_rank(Plan *p);

#endif
