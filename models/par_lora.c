/* LoRA in the step (finetune.h): what a device holds and trains.  The
 * base's parameters are frozen: no gradient, no optimizer state, nothing
 * reduced or sharded over data parallelism (every dp rank keeps its tp/pp
 * shard whole, as Megatron-Core's distributed optimizer and DDP do for
 * parameters that do not require a gradient); the adapters are what
 * layer_params and head_params count from here on, so the gradient
 * buckets, the reduction, ZeRO-1/2/3 and the update concern them alone. */
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
        p += (double)tr->vocab * tr->hidden / c->p.tp;
    return p;
}

/* The frozen weights in the run's parameter dtype (2 bytes in mixed
 * precision).  Under FP8 the layers' weights also have Transformer Engine's
 * FP8 weight and transpose (2 bytes, as memory.h counts them for training);
 * with an FP8 base (fp8_model_init) those are the weights, with no 16-bit
 * copy; embeddings, norms and the output layer stay 16-bit. */
void lora_memory(const Ctx *c, int s, MemoryBreakdown *mem)
{
    if (!c->wp.frozen_linears)
        return;
    MemoryPrecision prec = step_scenario_precision(c->sc);
    double P = memory_param_bytes(prec), layers = step_stage_layers(c, s) * c->frozen_layer_params;
    double per = prec != MEMORY_MIXED_FP8 ? P : step_scenario_finetune(c->sc)->fp8_base ? 2 : P + 2;
    double bytes = layers * per + (lora_stage_frozen_params(c, s) - layers) * P;
    mem->params += bytes;
    mem->model_states += bytes;
    mem->total += bytes;
}
