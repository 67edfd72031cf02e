/* Private to the step's files: the builder's context.  Ctx holds what a
 * variant costs (groups, per-layer times, bytes), Build the task graph being
 * built.  step.c composes the concerns; each par_*.c adds its own tasks and
 * costs through the small interface declared here.
 *
 * Ranks follow Megatron's order: tp fastest, then dp, then pp.  Only one
 * data-parallel replica's pipeline is built: one device per stage stands
 * for its tensor-parallel group. */
#ifndef STEP_BUILD_H
#define STEP_BUILD_H

#include "collective.h"
#include "scenario.h"

#include <cjson/cJSON.h>

/* One collective kind used by the step, for the report. */
typedef struct {
    const char *name; /* static */
    const char *group;
    CollOp op;
    int group_size;
    double bytes;
    CollCost cost;
    int count; /* per step on one device */
} CollUse;

typedef struct {
    const StepScenario *sc;
    StepPlan p;
    const Topo *topo; /* the scenario's */
    const Accel *acc;
    const Workload *w;
    WorkloadParallel wp;
    int m;          /* micro-batches per replica */
    int devices;
    int *stage_l0;  /* first layer of each stage (pp + 1 entries) */
    CollGroup *tp_group, *dp_group;
    CollGroup **p2p_group; /* stage s -> s+1 */
    GArray *colls;  /* CollUse */
    /* per-layer costs (identical layers), seconds */
    double t_fwd, t_bwd, t_recompute;
    double t_tp_fwd, t_tp_bwd, t_tp_recompute;
    double t_head_fwd, t_head_bwd;
    double layer_params, head_params; /* per device (after tp) */
    double grad_bytes_per_param, param_bytes; /* gradients: in grad_dtype (wire and buckets) */
    AccelDtype grad_dtype;
    bool fp32_grads;                  /* fp32 gradient buffers in mixed precision (fp32 reduction) */
    bool ag_overlap;                  /* sharded: updated weights gathered behind the next forward */
    double opt_bytes_per_param;       /* HBM traffic of the update */
    double *t_p2p;                    /* [stage]: one send from stage s to s+1 */
    /* data-parallel collectives: all tp x pp groups run at once and share
     * NICs and fabric; their closed-form time (NIC-bound, the fabric taken
     * as non-blocking) is scaled by this factor: the flow simulation of the
     * concurrent groups on the real fabric over one group alone on a
     * non-blocking one, or the uplink bound past the budget (1: neither) */
    double dp_factor, dp_flow_alone_s, dp_flow_concurrent_s;
    double dp_flow_nonblocking_s; /* group 0 alone with the fabric's uplinks never binding */
    double dp_uplink_bound_s;     /* busiest fabric link's bytes / capacity, all groups built */
    int dp_flow_groups;
    char dp_method[128]; /* "exact", "sampled", "uplink bound", "not simulated" (par_contention.c) */
    char *dp_warning;    /* why the factor is not the full simulation's, or NULL */
} Ctx;

typedef struct {
    int compute, comm, tp, p2p; /* resources */
    int rank;
} StageRes;

/* A micro-batch's pass through a stage in one direction: its first and
 * last tasks. */
typedef struct {
    int first, last;
} Span;

typedef struct {
    Ctx *c;
    SimGraph *g;
    StageRes *res;       /* [stage] */
    Span *fw, *bw;       /* [stage * m + micro-batch] */
    int **layer_bwd_end; /* [stage][local layer]: when that layer's gradients are ready (last micro-batch) */
    int *head_bwd_end;   /* [stage] */
} Build;

/* The topology rank of a job rank, through the scenario's placement. */
static inline int step_rank_of(const Ctx *c, int stage, int d, int t)
{
    int r = stage * c->p.dp * c->p.tp + d * c->p.tp + t;
    const int *map = step_scenario_rank_map(c->sc);
    return map ? map[r] : r;
}

static inline int step_stage_layers(const Ctx *c, int s) { return c->stage_l0[s + 1] - c->stage_l0[s]; }

/* A task of `seconds` on resource `res`, with its category for timelines. */
int step_task(SimGraph *g, const char *name, int res, double seconds, const char *cat);
/* `after` waits for `before`; either may be -1 (none). */
void step_dep(SimGraph *g, int before, int after);
/* Records a collective kind (`count` per step) and returns its time; 0 for a
 * group of one.  DP collectives are scaled by the contention factor. */
double step_coll_use(Ctx *c, const char *name, const char *group_name, const CollGroup *g, CollOp op, double bytes,
                     int count);

/* The type of activations, gradients and of the GEMMs outside the linear
 * layers (attention core, logits): the working precision, bf16 when it is
 * fp8 (Transformer Engine runs only the linear layers' GEMMs in FP8; its
 * attention and Megatron's output layer stay in 16 bit by default). */
static inline AccelDtype step_activation_dtype(const Ctx *c)
{
    AccelDtype dt = step_scenario_dtype(c->sc);
    return dt == ACCEL_FP8 ? ACCEL_BF16 : dt;
}
#define step_attention_dtype step_activation_dtype

/* step_compute.c: per-layer compute times, recomputation included, and the
 * step's FLOPs. */
void compute_costs(Ctx *c);
void compute_flops(const Ctx *c, double *model_flops, double *hw_flops);
/* Bytes of stage s's transient peak working set (logits and loss, the layer
 * being recomputed, ZeRO-3's unsharded layer gradient). */
double compute_working_set(const Ctx *c, int s);

/* par_tp.c: the tensor-parallel group and its per-layer collectives. */
bool tp_init(Ctx *c, GError **err);
int tp_after(Build *b, int s, const char *name, double seconds, int after);

/* par_pipeline.c: layers per stage, the point-to-point groups, the order of
 * each stage's passes (1F1B or GPipe) and the sends between stages. */
void pipeline_partition(Ctx *c);
bool pipeline_init(Ctx *c, GError **err);
void pipeline_free(Ctx *c);
double pipeline_stage_params(const Ctx *c, int s);
int pipeline_order(const Ctx *c, int s, int *order_mb, int *order_dir);
void pipeline_sends(Build *b);
int pipeline_inflight(const Ctx *c, int s);

/* par_dp.c: the data-parallel group, gradient buckets and the (replicated
 * or sharded) weight update. */
bool dp_init(Ctx *c, GError **err);
void dp_costs(Ctx *c);
void dp_backward_begin(Build *b, int s);
void dp_backward_end(Build *b, int s, int last, bool last_mb);
void dp_sync_and_update(Build *b, int s, GArray *ends, GArray *bucket_params);

/* par_contention.c: the contention factor of DP collectives; tests may
 * lower the flow network's work budget (0: the default) to reach the
 * sampled and bound paths on small scenarios. */
void dp_contention(Ctx *c);
void dp_contention_set_work_budget(uint64_t work);

/* par_zero.c: ZeRO-3's per-layer gathers and reduce-scatters, and the
 * sharded update's gathers behind the next forward (allgather_overlap). */
typedef struct {
    bool z3;        /* ZeRO-3 with dp > 1 */
    bool gather;    /* this forward gathers the updated weights first */
    double t_ag, t_rs;
    int start;      /* the pass's first dependency */
    int ag_prev;    /* the last gather issued */
    int hist[2];    /* the last two compute tasks: ZeRO-3's prefetch window */
} ZeroPass;
void zero_pass_begin(ZeroPass *z, Build *b, int s, int mbi, int dir, int prev);
int zero_layer_gather(ZeroPass *z, Build *b, int s);
int zero_head_gather(ZeroPass *z, Build *b, int s, double params);
int zero_layer_reduce(ZeroPass *z, Build *b, int s, int after);
void zero3_grad_ends(Build *b, int s, int last_bwd, GArray *ends);

/* step_report.c: the result object of a built and run graph (the step took
 * `step_s`); NULL and `err` when the memory estimate fails. */
cJSON *step_report(const Build *b, int variant, double step_s, GError **err);

#endif
