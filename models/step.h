/* The training step: a scenario (model, accelerator, topology, parallelism
 * plan) becomes a task graph that sim/ runs; out come the step time, its
 * breakdown, per-device memory, MFU and achieved FLOP/s.
 *
 * Scenario (JSON; unknown keys are errors, every error is "FILE:LINE: ..."):
 *   { "accelerator": "a100-80gb",          (default: the topology's)
 *     "topology": "dgx-a100-cluster", "nodes": 8,
 *     "model": "gpt3-175b" | { ...transformer hyper-parameters... },
 *     "global_batch": 1536, "micro_batch": 1,
 *     "precision": "bf16"|"fp16"|"fp32"|"tf32"|"fp8", "optimizer": "sgd"|"sgd_momentum"|"adam"|"adamw"|"lamb",
 *     "attention": "fused"|"fused-v1"|"fused-v2"|"unfused",  (default: fused where the
 *                                        accelerator's preset has a fused kernel)
 *     "cross_entropy": "unfused"|"bf16"|"fp32"|"fp32_fused"|"te"|"fused"|"compiled"|"loss_parallel",
 *                                       (the loss's traffic and memory; default unfused,
 *                                        PyTorch's on upcast logits, bf16 without the upcast;
 *                                        fp32, fp32_fused, te: Megatron-Core's unfused, fused
 *                                        and Transformer Engine's; compiled: torch.compile's or
 *                                        XLA's; loss_parallel: PyTorch DTensor's on vocab-sharded logits)
 *     "parallelism": { "dp": 8, "tp": 8, "pp": 1,   (dp not given: ranks / (tp x pp))
 *        "weight_update": "replicated"|"sharded" (or a list of both: compares),
 *        "zero_stage": 0..3, "recompute": "none"|"selective"|"full",
 *        "schedule": "1f1b"|"gpipe", "sequence_parallel": false,
 *        "bucket_bytes": 26214400 or "25MiB", "overlap": true,
 *        "gradient_compression": 1.0,
 *        "allgather_overlap": true,        (ZeRO-1/2: gather the updated weights
 *                                           behind the next forward; false: at the end)
 *        "grad_reduce_dtype": "bf16"|"fp16"|"fp32",   (default: the gradients' type)
 *        "tp_impl": "megatron"|"dtensor",  (memory: dtensor saves the column-parallel
 *                                           linears' all-gathered inputs under sp)
 *        "zero_impl": "deepspeed"|"fsdp" } }  (memory: fsdp keeps no 16-bit shard under stage 3)
 *
 * One rule for dp, for run and sweep alike: "dp" as given, else the replicas
 * fill the machine: dp = ranks of the topology (nodes x ranks per node) /
 * (tp x pp), an error when that does not divide.  Keys that contradict each
 * other ("zero_stage": 0 with "weight_update": "sharded", "allgather_overlap"
 * without a ZeRO-1/2 sharded update, "sequence_parallel" with tp 1) are
 * errors at the key's line, as are errors of the scenario's meaning (the
 * devices against the topology's ranks, a precision the accelerator lacks).
 *
 * Only one data-parallel replica's pipeline is simulated in detail (the
 * replicas are symmetric): one device per pipeline stage stands for its
 * tensor-parallel group.  See models/README.md, "The training step". */
#ifndef STEP_H
#define STEP_H

#include "sim_error.h"
#include "sim_exec.h"

#include <cjson/cJSON.h>

typedef struct StepScenario StepScenario;

StepScenario *step_scenario_load(const char *path, GError **err);
/* `name` stands for the file in error messages. */
StepScenario *step_scenario_parse(const char *name, const char *text, size_t len, GError **err);
void step_scenario_free(StepScenario *sc);

/* The dp a scenario in JSON runs with, by the rule above (the topology is
 * loaded when dp is not given); for the sweep, which needs it before the
 * scenario is complete.  Errors carry no position. */
bool step_json_dp(const cJSON *scenario, long *dp, GError **err);
/* The rule dp follows where the scenario gives none, said as it applies
 * at context parallelism `cp`: "ranks / (tp x pp)", with cp "ranks / (tp x
 * cp x pp)". */
const char *step_dp_fill_rule(int cp);

/* Variants to compare (a list of weight updates); 1 for a plain scenario. */
int step_scenario_num_variants(const StepScenario *sc);
const char *step_scenario_variant_label(const StepScenario *sc, int variant);

/* Runs one variant.  Returns the result object (keys: step_time_s, breakdown,
 * memory_per_device_bytes, fits, mfu, flops_per_device in FLOP/s, ...); when `graph`
 * is not NULL the simulated graph is handed over (free it with
 * sim_graph_free) for timelines. */
cJSON *step_scenario_run(const StepScenario *sc, int variant, SimGraph **graph, GError **err);

/* Runs every variant: one variant's result as is; several: the first
 * variant's keys at top level plus "variants" (each result with its
 * "variant" label) and "comparison". */
cJSON *step_scenario_run_all(const StepScenario *sc, GError **err);

/* What a variant's costs say before its step is built or run: the peak
 * per-device memory and whether it fits, as the run reports them, and a
 * lower bound of the step time (the busiest stage's compute stream: its
 * passes run one after another, and nothing the simulation adds makes them
 * shorter).  The plan screens with these before it simulates. */
typedef struct {
    double memory_bytes;
    bool fits;
    double step_lower_bound_s;
} StepEstimate;
bool step_scenario_estimate(const StepScenario *sc, int variant, StepEstimate *e, GError **err);

/* Topologies loaded once and shared, read-only, by the scenarios parsed
 * with the cache (a plan parses thousands on the same machine); free the
 * scenarios before the cache.  Thread-safe. */
typedef struct StepCache StepCache;
StepCache *step_cache_new(void);
void step_cache_free(StepCache *c);
/* step_scenario_parse, its topology from `cache` (NULL: loaded as usual). */
StepScenario *step_scenario_parse_cached(const char *name, const char *text, size_t len, StepCache *cache,
                                         GError **err);

/* Parses and runs a scenario held in text; thread-safe (no global state).
 * Same object as `shardsim run --json`. */
cJSON *step_run_text(const char *name, const char *json_text, GError **err);

#endif
