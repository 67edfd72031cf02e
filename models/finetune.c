/* The scenario's "finetune" key (finetune.h): parsed, checked against the
 * model, and handed to the workload's per-device view. */
#include "finetune.h"
#include "scenario_plan.h"

#include <string.h>

static const struct {
    const char *name;
    unsigned bit;
} targets[] = {{"linear_qkv", WORKLOAD_LINEAR_QKV},
               {"linear_proj", WORKLOAD_LINEAR_PROJ},
               {"linear_fc1", WORKLOAD_LINEAR_FC1},
               {"linear_fc2", WORKLOAD_LINEAR_FC2}};

bool finetune_parse_linears(const SimJsonDoc *d, const cJSON *it, const char *key, bool core_attn, unsigned *out,
                            GError **err)
{
    const char *names = core_attn ? "\"linear_qkv\", \"linear_proj\", \"linear_fc1\", \"linear_fc2\", \"core_attn\""
                                  : "\"linear_qkv\", \"linear_proj\", \"linear_fc1\", \"linear_fc2\"";
    if (!cJSON_IsArray(it) || cJSON_GetArraySize(it) == 0) {
        sim_json_error(d, it, err, "\"%s\" must be a non-empty list of %s", key, names);
        return false;
    }
    *out = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, it) {
        bool attn = core_attn && cJSON_IsString(e) && !strcmp(e->valuestring, "core_attn");
        unsigned bit = attn ? WORKLOAD_KEEP_CORE_ATTN : 0;
        for (size_t i = 0; cJSON_IsString(e) && i < G_N_ELEMENTS(targets); i++)
            if (!strcmp(e->valuestring, targets[i].name))
                bit = targets[i].bit;
        if (!bit || (*out & bit)) {
            sim_json_error(d, e, err, bit ? "\"%s\": \"%s\" is listed twice" : "\"%s\": %s is not one of %s", key,
                           cJSON_IsString(e) ? SIM_ECHO(e->valuestring) : "an entry", names);
            return false;
        }
        *out |= bit;
    }
    return true;
}

const char *finetune_linear_name(unsigned bit)
{
    for (size_t i = 0; i < G_N_ELEMENTS(targets); i++)
        if (targets[i].bit == bit)
            return targets[i].name;
    return NULL;
}

static bool parse_targets(const SimJsonDoc *d, const cJSON *it, unsigned *out, GError **err)
{
    if (!it || cJSON_IsNull(it)) {
        *out = WORKLOAD_LINEAR_QKV | WORKLOAD_LINEAR_PROJ | WORKLOAD_LINEAR_FC1 | WORKLOAD_LINEAR_FC2;
        return true;
    }
    return finetune_parse_linears(d, it, "targets", false, out, err);
}

bool finetune_parse(const SimJsonDoc *d, const cJSON *root, Finetune *out, GError **err)
{
    static const char *const keys[] = {"method", "rank", "targets", "dropout", "base_dtype", NULL};
    *out = (Finetune){FINETUNE_NONE, 0, 0, 0, false};
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(root, "finetune");
    if (!it || cJSON_IsNull(it))
        return true;
    if (!cJSON_IsObject(it)) {
        sim_json_error(d, it, err, "\"finetune\" must be an object such as {\"method\": \"lora\", \"rank\": 16}");
        return false;
    }
    const char *method = NULL, *base = "bf16";
    long rank = 0;
    if (!scenario_check_keys(d, it, "\"finetune\"", keys, err) ||
        !sim_json_get_string(d, it, "method", true, &method, err))
        return false;
    if (strcmp(method, "lora")) {
        sim_json_error(d, cJSON_GetObjectItemCaseSensitive(it, "method"), err,
                       "\"finetune\": \"method\" = \"%s\" is not \"lora\"", SIM_ECHO(method));
        return false;
    }
    out->method = FINETUNE_LORA;
    if (!sim_json_get_int(d, it, "rank", true, 1, 65536, &rank, err) ||
        !parse_targets(d, cJSON_GetObjectItemCaseSensitive(it, "targets"), &out->targets, err) ||
        !sim_json_get_number(d, it, "dropout", false, 0, 0.999, &out->dropout, err) ||
        !sim_json_get_string(d, it, "base_dtype", false, &base, err))
        return false;
    out->rank = (int)rank;
    if (strcmp(base, "bf16") && strcmp(base, "fp8")) {
        sim_json_error(d, cJSON_GetObjectItemCaseSensitive(it, "base_dtype"), err,
                       "\"finetune\": \"base_dtype\" = \"%s\" is not \"bf16\" or \"fp8\"", SIM_ECHO(base));
        return false;
    }
    out->fp8_base = !strcmp(base, "fp8");
    return true;
}

bool finetune_check(const SimJsonDoc *d, const cJSON *root, const Finetune *f, const Workload *w, bool fp8,
                    GError **err)
{
    if (f->method == FINETUNE_NONE)
        return true;
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(root, "finetune");
    const WorkloadTransformer *t = workload_transformer(w);
    if (!t || t->experts > 0) {
        sim_json_error(d, it, err, "\"finetune\": LoRA is modelled on dense transformers only (model %s %s)",
                       workload_name(w), t ? "has experts" : "is not a transformer");
        return false;
    }
    if (f->fp8_base && !fp8) {
        const cJSON *b = cJSON_GetObjectItemCaseSensitive(it, "base_dtype");
        sim_json_error(d, b ? b : it, err, "\"finetune\": \"base_dtype\" \"fp8\" needs \"precision\": \"fp8\"");
        return false;
    }
    return true;
}

void finetune_apply(const Finetune *f, WorkloadParallel *wp)
{
    if (f->method != FINETUNE_LORA)
        return;
    wp->frozen_linears = true;
    wp->lora_targets = f->targets;
    wp->lora_rank = f->rank;
    wp->lora_dropout = f->dropout;
}
