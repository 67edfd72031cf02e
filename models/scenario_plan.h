/* Private to the scenario modules (scenario*.c): the "parallelism" object
 * of a scenario, and the key and choice checks they share. */
#ifndef SCENARIO_PLAN_H
#define SCENARIO_PLAN_H

#include "scenario.h"
#include "sim_json.h"

/* The index in `names` (NULL-terminated, any case) of the string at `key`
 * into *out, left as it is when the key is absent; false and an error
 * naming every choice otherwise. */
bool scenario_get_choice(const SimJsonDoc *d, const cJSON *obj, const char *key, const char *const *names, int *out,
                         GError **err);
/* An error at the first key of `obj` not in `allowed` (NULL-terminated). */
bool scenario_check_keys(const SimJsonDoc *d, const cJSON *obj, const char *where, const char *const *allowed,
                         GError **err);

/* Parses "parallelism" (`par`; NULL: not given, the defaults) into `plan`
 * (dp 0 when not given: scenario_machine.c resolves it against the machine) and
 * the variants to compare, 1 or 2, with their ZeRO stages. */
bool scenario_plan_parse(const SimJsonDoc *d, const cJSON *par, StepPlan *plan, int *nvariants, int stages[2],
                         GError **err);

/* scenario_par.c: the keys of the newer parallelisms ("ep",
 * "capacity_factor", "virtual_stages", "cp") into `plan`, and their checks against the model and
 * dp once dp is known (errors at the key's line). */
extern const char *const scenario_par_keys[];
/* A CNN runs data parallel only: an error at the first key that asks for
 * more (tp, pp, ...), ZeRO-3 or recomputation. */
bool scenario_cnn_check(const SimJsonDoc *d, const cJSON *where, const StepPlan *plan, const Workload *w,
                        GError **err);
/* ZeRO-Offload's defaults, assumptions rather than measurements: PCIe 4.0
 * x16 moves 32 GB/s raw, about 25 GB/s achieved host-device; a two-socket
 * node of 8-channel DDR4-3200 (DGX A100: 2 x 204.8 GB/s peak) streams about
 * 250 GB/s, shared by the node's devices. */
#define STEP_DEFAULT_PCIE_BPS 25e9
#define STEP_DEFAULT_HOST_MEM_BPS 250e9
bool scenario_par_parse(const SimJsonDoc *d, const cJSON *par, StepPlan *plan, GError **err);
bool scenario_par_check(const SimJsonDoc *d, const cJSON *where, const StepPlan *plan, int max_zero_stage,
                        const Workload *w, int micro_batches, GError **err);
/* "recompute_modules" against the rest of the scenario: Megatron-Core
 * refuses "layernorm" and "moe_act" in FP8 under delayed scaling
 * (`fp8_delayed`); beyond "core_attn", not modelled with "finetune". */
bool scenario_modules_check(const SimJsonDoc *d, const cJSON *where, const StepPlan *plan, bool fp8_delayed,
                            bool finetune, GError **err);

/* scenario_seed.c: ZeRO++, SDP4Bit, partitioned checkpoints and Lynx's
 * keys, and their checks once dp is known (`min_stage`, `max_stage`: the
 * variants' ZeRO stages). */
extern const char *const scenario_seed_keys[];
bool scenario_seed_parse(const SimJsonDoc *d, const cJSON *par, StepPlan *plan, GError **err);
bool scenario_seed_check(const SimJsonDoc *d, const cJSON *where, const StepPlan *plan, int min_stage, int max_stage,
                         const Workload *w, const Topo *topo, GError **err);

#endif
