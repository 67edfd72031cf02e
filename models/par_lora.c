/* LoRA in the step (finetune.h): what a device holds and trains.  The
 * base's parameters are frozen: no gradient, no optimizer state, nothing
 * reduced or sharded over data parallelism (every dp rank keeps its tp/pp
 * shard whole, as Megatron-Core's distributed optimizer and DDP do for
 * parameters that do not require a gradient); the adapters are what
 * layer_params and head_params count from here on, so the gradient
 * buckets, the reduction, ZeRO-1/2 and the update concern them alone
 * (ZeRO-3 / FSDP, which shard the frozen base too, are refused by the
 * scenario). */
#include "step_build.h"

void lora_partition(Ctx *c)
{
    if (!c->wp.frozen_linears)
        return;
    c->frozen_layer_params = c->layer_params;
    c->frozen_head_params = c->head_params;
    c->layer_params = workload_lora_params_layer(c->w, &c->wp);
    c->head_params = 0; /* embeddings, final norm and output layer: frozen */
}

/* Stage s's frozen weights: its layers', the embeddings on the first stage
 * and, with a pipeline and tied embeddings, the last stage's copy. */
double lora_stage_frozen_params(const Ctx *c, int s)
{
    if (!c->wp.frozen_linears)
        return 0;
    const WorkloadTransformer *tr = workload_transformer(c->w);
    double p = step_stage_layers(c, s) * c->frozen_layer_params;
    if (s == 0)
        p += c->frozen_head_params;
    if (s == c->p.pp - 1 && c->p.pp > 1 && tr->tied_embeddings)
        p += pipeline_output_layer_params(c);
    return p;
}

/* The frozen weights in the run's parameter dtype (2 bytes in mixed
 * precision).  Under FP8 the layers' weights also have Transformer Engine's
 * FP8 weight and transpose (2 bytes, as memory.h counts them for training).
 * An FP8 base (fp8_model_init) is its 1-byte weights alone: no 16-bit copy,
 * and no kept transpose (Blackwell's FP8 GEMMs take either layout, TE's
 * non_tn_fp8_gemm_supported() for compute capability >= 10; where the GEMMs
 * need one, Hopper, a frozen weight's transpose is made for its data
 * gradient and freed: MLPerf v5.1's Llama 2 70B LoRA ran tp 1 x cp 2 on
 * 141 GB H200s with an FP8 base, where kept transposes alone would be 138
 * GB); embeddings, norms and the output layer stay 16-bit. */
void lora_memory(const Ctx *c, int s, MemoryBreakdown *mem)
{
    if (!c->wp.frozen_linears)
        return;
    MemoryPrecision prec = step_scenario_precision(c->sc);
    double P = memory_param_bytes(prec), layers = step_stage_layers(c, s) * c->frozen_layer_params;
    double per = prec != MEMORY_MIXED_FP8 ? P : step_scenario_finetune(c->sc)->fp8_base ? 1 : P + 2;
    double bytes = layers * per + (lora_stage_frozen_params(c, s) - layers) * P;
    mem->params += bytes;
    mem->model_states += bytes;
    mem->total += bytes;
}

void lora_report(const Ctx *c, cJSON *cfg)
{
    const Finetune *f = step_scenario_finetune(c->sc);
    if (f->method != FINETUNE_LORA)
        return;
    static const char *const names[] = {"linear_qkv", "linear_proj", "linear_fc1", "linear_fc2"};
    WorkloadParallel one = c->wp;
    one.tp = 1;
    cJSON *o = cJSON_AddObjectToObject(cfg, "finetune");
    cJSON_AddStringToObject(o, "method", "lora");
    cJSON_AddNumberToObject(o, "rank", f->rank);
    cJSON *t = cJSON_AddArrayToObject(o, "targets");
    for (int i = 0; i < 4; i++)
        if (f->targets & (1u << i))
            cJSON_AddItemToArray(t, cJSON_CreateString(names[i]));
    cJSON_AddNumberToObject(o, "dropout", f->dropout);
    cJSON_AddStringToObject(o, "base_dtype", f->fp8_base ? "fp8" : "bf16");
    cJSON_AddNumberToObject(o, "trainable_params", workload_num_layers(c->w) * workload_lora_params_layer(c->w, &one));
}
