/* The scenario object's layout, private to scenario.c (reading and checking
 * its keys, the model and the batch) and scenario_machine.c (the machine it
 * runs on: topology, accelerator, collective parameters, placement and the
 * rule for dp). */
#ifndef SCENARIO_INTERNAL_H
#define SCENARIO_INTERNAL_H

#include "scenario.h"
#include "sim_json.h"

struct StepScenario {
    char *name;        /* the scenario's "name", else its file: the output's label */
    char *path;        /* its file, for messages */
    char *accelerator; /* NULL: the topology's */
    char *topology;
    int nodes;
    Topo *topo;        /* loaded while parsing, to check the plan against it */
    bool topo_shared;  /* owned by a StepCache */
    StepCache *cache;  /* while parsing: where the topology comes from (NULL: load it) */
    Accel *acc;
    Workload *w;
    int global_batch, micro_batch;
    AccelDtype dtype;
    MemoryPrecision precision;
    MemoryOptimizer optimizer;
    bool no_master;      /* "master_weights": false: the 16-bit parameters updated in place */
    double moment_bytes; /* "optimizer_moments": 4 (fp32, default) or 2 */
    StepPlan plan;
    bool flow_contention; /* scale DP collectives by the flow simulation's contention */
    int nccl_version;     /* NCCL version code the collectives follow; 0: the newest */
    int nccl_library;     /* CollLibrary ("nccl_library"); -1: the topology's default */
    StepAttention attention; /* "attention": fused by default where the chip has a fused kernel */
    StepCrossEntropy cross_entropy; /* "cross_entropy": unfused by default */
    bool eager_elementwise;         /* "elementwise": "eager" (PyTorch eager's kernels) */
    StepFramework framework;        /* "framework" */
    double memory_fraction;         /* "memory_fraction", [0.01, 1] */
    bool memory_fraction_given;
    bool fp8_casts_fused;           /* "fp8_casts": "fused" */
    int gpus_per_process; /* GPUs one process drives (launches serially); 1 = one per GPU */
    int par_line;         /* the line of "parallelism" (else of the document), for errors the step finds */
    bool dp_given;        /* else dp = ranks / (tp x pp): the replicas fill the machine */
    int nvariants;
    int variant_stage[2]; /* zero stage per variant (weight_update list) */
    char *variant_label[2];
    CollParams *coll_params; /* "collective_params" (a calibrated overlay), else the default */
    int *rank_map; /* job rank -> topology rank ("placement"); NULL: contiguous, the identity */
    char *placement; /* its name (and seed) for reports */
    Finetune finetune; /* "finetune" (finetune.h): FINETUNE_NONE for training from scratch */
    bool act_func_fp8; /* "activation_func_fp8_input_store" (fp8 only) */
    bool fp8_dpa;      /* "fp8_dot_product_attention" (fp8, fused attention only) */
    bool fp8_params;   /* "fp8_param_gather" (fp8 only) */
    Fp8Recipe fp8_recipe; /* "fp8_recipe" (fp8 only; delayed by default) */
};

static inline const cJSON *key_or(const cJSON *obj, const char *key, const cJSON *fallback)
{
    const cJSON *it = obj ? cJSON_GetObjectItemCaseSensitive(obj, key) : NULL;
    return it && !cJSON_IsNull(it) ? it : fallback;
}

/* scenario_machine.c, each an error at the scenario's line of the key that
 * asked: the topology (through the parse's StepCache, if any) and the
 * accelerator, with "attention", "framework" and "cross_entropy" that
 * depend on it; dp as given or filling the machine (`where`: "parallelism",
 * else the root); "collective_params"; "placement" once dp is known; and,
 * once the plan is read, what "framework": "jax" refuses. */
bool scenario_load_machine(StepScenario *sc, const SimJsonDoc *d, const cJSON *root, GError **err);
bool scenario_check_framework(const StepScenario *sc, const SimJsonDoc *d, const cJSON *where, GError **err);
bool scenario_resolve_dp(StepScenario *sc, const SimJsonDoc *d, const cJSON *root, const cJSON *where, GError **err);
bool scenario_load_coll_params(StepScenario *sc, const SimJsonDoc *d, const cJSON *root, GError **err);
bool scenario_parse_placement(StepScenario *sc, const SimJsonDoc *d, const cJSON *root, GError **err);

#endif
