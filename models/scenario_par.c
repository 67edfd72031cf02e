/* A scenario's keys for the newer parallelisms of the step: expert
 * parallelism ("ep") and the experts' "capacity_factor" of a mixture of
 * experts, interleaved 1F1B's "virtual_stages", context parallelism
 * "cp".  Parsed with the rest of "parallelism" (scenario_plan.c), and
 * checked against the model and dp once dp is resolved (scenario.c): each
 * error at the key's line. */
#include "scenario_plan.h"

const char *const scenario_par_keys[] = {"ep", "capacity_factor", "virtual_stages", "cp", NULL};

bool scenario_par_parse(const SimJsonDoc *d, const cJSON *par, StepPlan *p, GError **err)
{
    long ep = 1, vpp = 1, cp = 1;
    if (!sim_json_get_int(d, par, "ep", false, 1, 1 << 16, &ep, err) ||
        !sim_json_get_int(d, par, "cp", false, 1, 1 << 16, &cp, err) ||
        !sim_json_get_int(d, par, "virtual_stages", false, 1, 1 << 16, &vpp, err) ||
        !sim_json_get_number(d, par, "capacity_factor", false, 0.01, 64, &p->capacity_factor, err))
        return false;
    p->ep = (int)ep;
    p->vpp = (int)vpp;
    p->cp = (int)cp;
    return true;
}

static const cJSON *item(const cJSON *where, const char *key)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(where, key);
    return it ? it : where;
}

/* Interleaved 1F1B as Megatron-LM runs it: a pipeline, 1F1B, every stage
 * the same number of chunks of equal layers, whole rounds of pp
 * micro-batches. */
static bool check_interleaving(const SimJsonDoc *d, const cJSON *where, const StepPlan *p, int max_zero_stage,
                               const WorkloadTransformer *tr, int micro_batches, GError **err)
{
    if (p->vpp == 1)
        return true;
    const cJSON *at = item(where, "virtual_stages");
    if (p->pp == 1 || p->gpipe)
        sim_json_error(d, at, err, "\"virtual_stages\" needs a 1F1B pipeline (\"pp\" > 1, \"schedule\": \"1f1b\")");
    else if (tr->layers % (p->pp * p->vpp))
        sim_json_error(d, at, err, "\"virtual_stages\": pp x virtual_stages = %d must divide the %d layers",
                       p->pp * p->vpp, tr->layers);
    else if (micro_batches % p->pp)
        sim_json_error(d, at, err, "\"virtual_stages\" needs the micro-batches (%d) to be a multiple of pp (%d)",
                       micro_batches, p->pp);
    else if (max_zero_stage == 2)
        sim_json_error(d, at, err, "\"virtual_stages\" with ZeRO-2 is not modelled (use zero_stage 0, 1 or 3)");
    else
        return true;
    return false;
}

bool scenario_par_check(const SimJsonDoc *d, const cJSON *where, const StepPlan *p, int max_zero_stage,
                        const Workload *w, int micro_batches, GError **err)
{
    const WorkloadTransformer *tr = workload_transformer(w);
    if (!check_interleaving(d, where, p, max_zero_stage, tr, micro_batches, err))
        return false;
    /* Megatron-LM splits each sequence into 2 cp chunks for causal load balance */
    if (p->cp > 1 && tr->seq_len % (2 * p->cp)) {
        sim_json_error(d, item(where, "cp"), err, "\"cp\" = %d: 2 x cp must divide seq_len (%d)", p->cp, tr->seq_len);
        return false;
    }
    if (p->cp > 1 && p->sequence_parallel && (tr->seq_len / p->cp) % p->tp) {
        sim_json_error(d, item(where, "cp"), err, "\"cp\" = %d: sequence parallelism needs tp (%d) to divide seq_len / cp",
                       p->cp, p->tp);
        return false;
    }
    if (p->cp > 1 && tr->experts > 0) {
        sim_json_error(d, item(where, "cp"), err, "\"cp\" with a mixture of experts is not modelled");
        return false;
    }
    bool given_cf = cJSON_GetObjectItemCaseSensitive(where, "capacity_factor") != NULL;
    if (tr->experts == 0 && (p->ep > 1 || given_cf)) {
        sim_json_error(d, item(where, p->ep > 1 ? "ep" : "capacity_factor"), err,
                       "\"%s\" needs a mixture-of-experts model (\"experts\" > 0); %s is dense",
                       p->ep > 1 ? "ep" : "capacity_factor", SIM_ECHO(workload_name(w)));
        return false;
    }
    if (tr->experts == 0)
        return true;
    if (tr->experts % p->ep || p->dp % p->ep) {
        sim_json_error(d, item(where, "ep"), err, "\"ep\" = %d must divide the experts (%d) and dp (%d)", p->ep,
                       tr->experts, p->dp);
        return false;
    }
    if (tr->expert_ffn % p->tp) {
        sim_json_error(d, item(where, "tp"), err, "\"tp\" = %d must divide expert_ffn (%d)", p->tp, tr->expert_ffn);
        return false;
    }
    if (max_zero_stage == 3) {
        sim_json_error(d, item(where, "zero_stage"), err,
                       "ZeRO-3 of a mixture of experts is not modelled: use zero_stage 0-2 (experts are sharded "
                       "over \"ep\")");
        return false;
    }
    return true;
}
