/* Per-device memory: ZeRO 0-3 model states, buffers, activations in flight,
 * the reserve, and whether it fits (memory.h). */
#include "memory.h"

#include <math.h>
#include <string.h>

MemoryConfig memory_config_default(void)
{
    return (MemoryConfig){.params = 0,
                          .dp = 1,
                          .zero_stage = 0,
                          .precision = MEMORY_MIXED_BF16,
                          .optimizer = MEMORY_OPT_ADAM,
                          .inflight_microbatches = 1,
                          .reserve_bytes = MEMORY_DEFAULT_RESERVE_BYTES,
                          .fp8_copy_bytes = 2,
                          .fragmentation = MEMORY_DEFAULT_FRAGMENTATION};
}

/* fp8: the bf16 weight; TE's FP8 copies are fp8_weight_params' */
double memory_param_bytes(MemoryPrecision p) { return p == MEMORY_FP32 ? 4 : 2; }

double memory_grad_bytes(MemoryPrecision p, bool fp32_grad_accum)
{
    return p == MEMORY_FP32 || fp32_grad_accum ? 4 : 2;
}

double memory_optimizer_state_bytes(MemoryOptimizer o, MemoryPrecision p, bool no_master, double moment_bytes)
{
    double moments = 0, b = moment_bytes > 0 ? moment_bytes : 4;
    switch (o) {
    case MEMORY_OPT_SGD: moments = 0; break;
    case MEMORY_OPT_SGD_MOMENTUM: moments = 1; break;
    case MEMORY_OPT_ADAM:
    case MEMORY_OPT_ADAMW:
    case MEMORY_OPT_LAMB: moments = 2; break;
    }
    return moments * b + (p == MEMORY_FP32 || no_master ? 0 : 4); /* fp32 master weights */
}

double memory_optimizer_bytes(MemoryOptimizer o, MemoryPrecision p)
{
    return memory_optimizer_state_bytes(o, p, false, 4);
}

static bool bad(GError **err, const char *msg)
{
    g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "memory: %s", msg);
    return false;
}

bool memory_estimate(const MemoryConfig *c, MemoryBreakdown *out, GError **err)
{
    if (!(c->params >= 0) || !isfinite(c->params))
        return bad(err, "params must be a finite number >= 0");
    if (c->dp < 1)
        return bad(err, "dp must be >= 1");
    if (c->zero_stage < 0 || c->zero_stage > 3)
        return bad(err, "zero_stage must be 0, 1, 2 or 3");
    if ((unsigned)c->precision > MEMORY_MIXED_FP8)
        return bad(err, "unknown precision");
    if ((unsigned)c->optimizer > MEMORY_OPT_LAMB)
        return bad(err, "unknown optimizer");
    if (c->inflight_microbatches < 1)
        return bad(err, "inflight_microbatches must be >= 1");
    if (!(c->bucket_bytes >= 0) || !(c->zero3_gathered_params >= 0) || !(c->activation_bytes >= 0) ||
        !(c->reserve_bytes >= 0) || !(c->working_set_bytes >= 0) || !isfinite(c->working_set_bytes) ||
        !isfinite(c->bucket_bytes) || !isfinite(c->zero3_gathered_params) ||
        !isfinite(c->activation_bytes) || !isfinite(c->reserve_bytes) || !(c->fp8_weight_params >= 0) ||
        !isfinite(c->fp8_weight_params) || !(c->stream_pool_bytes >= 0) || !isfinite(c->stream_pool_bytes) ||
        !(c->tp_overlap_bytes >= 0) || !isfinite(c->tp_overlap_bytes))
        return bad(err, "byte counts must be finite and >= 0");
    if (!(c->fp8_copy_bytes >= 0 && c->fp8_copy_bytes <= 3))
        return bad(err, "fp8_copy_bytes must be in [0, 3]");
    if (!(c->fragmentation >= 0 && c->fragmentation <= 0.9))
        return bad(err, "fragmentation must be in [0, 0.9]");
    if (!(c->moment_bytes == 0 || c->moment_bytes == 2 || c->moment_bytes == 4))
        return bad(err, "moment_bytes must be 0, 2 or 4");

    double psi = c->params, n = c->dp;
    bool fp8 = c->precision == MEMORY_MIXED_FP8;
    double P = fp8 && c->fp8_params ? 1 : memory_param_bytes(c->precision);
    /* FSDP casts the reduced gradient shard to the sharded parameter's type */
    double G = c->no_master && c->fsdp_fp32_shards && c->zero_stage >= 3
                   ? memory_param_bytes(c->precision)
                   : memory_grad_bytes(c->precision, c->fp32_grad_accum);
    double K = memory_optimizer_state_bytes(c->optimizer, c->precision, c->no_master, c->moment_bytes);
    MemoryBreakdown b = {0};
    bool no_shard = c->fsdp_fp32_shards && c->zero_stage >= 3 && c->precision != MEMORY_FP32 && !c->no_master;
    b.params = (no_shard ? 0 : P * psi / (c->zero_stage >= 3 ? n : 1)) +
               (fp8 ? c->fp8_copy_bytes * c->fp8_weight_params : 0);
    b.grads = G * psi / (c->zero_stage >= 2 ? n : 1);
    b.optimizer = K * psi / (c->zero_stage >= 1 ? n : 1);
    b.buffers = c->bucket_bytes + (c->zero_stage >= 3 ? P * c->zero3_gathered_params : 0) + c->stream_pool_bytes;
    b.activations = c->activation_bytes * c->inflight_microbatches;
    b.reserve = c->reserve_bytes + c->tp_overlap_bytes; /* both outside the caching allocator */
    b.working_set = c->working_set_bytes;
    b.model_states = b.params + b.grads + b.optimizer;
    b.total = b.model_states + b.buffers + b.activations + b.working_set + b.reserve;
    memory_apply_fragmentation(&b, c->fragmentation);
    *out = b;
    return true;
}

void memory_apply_fragmentation(MemoryBreakdown *b, double f)
{
    double dynamic = b->buffers + b->activations + b->working_set;
    /* whole 2 MiB: the caching allocator rounds large segments up to it
     * (kRoundLarge in PyTorch's CUDACachingAllocator.cpp) */
    const double round = 2.0 * 1024 * 1024;
    double holes = f > 0 && f < 1 && dynamic > 0 ? ceil(dynamic * f / (1 - f) / round) * round : 0;
    b->reserve += holes - b->fragmentation;
    b->total += holes - b->fragmentation;
    b->fragmentation = holes;
}

double memory_allocator_reserved(const MemoryBreakdown *b) { return b->total - (b->reserve - b->fragmentation); }

bool memory_fits(const MemoryBreakdown *b, double hbm_bytes, double pool_fraction, bool preallocated)
{
    double pool = pool_fraction * hbm_bytes, held = memory_allocator_reserved(b), outside = b->total - held;
    return b->total <= hbm_bytes && held <= pool && (!preallocated || pool + outside <= hbm_bytes);
}

int memory_1f1b_inflight(int pp, int stage, int num_microbatches)
{
    if (pp <= 1 || num_microbatches < 1)
        return 1;
    if (stage < 0)
        stage = 0;
    if (stage >= pp)
        stage = pp - 1;
    int k = pp - stage;
    return k < num_microbatches ? k : num_microbatches;
}

bool memory_optimizer_from_name(const char *name, MemoryOptimizer *out)
{
    static const struct { const char *name; MemoryOptimizer o; } t[] = {
        {"sgd", MEMORY_OPT_SGD},   {"sgd_momentum", MEMORY_OPT_SGD_MOMENTUM}, {"momentum", MEMORY_OPT_SGD_MOMENTUM},
        {"adam", MEMORY_OPT_ADAM}, {"adamw", MEMORY_OPT_ADAMW},               {"lamb", MEMORY_OPT_LAMB},
    };
    for (size_t i = 0; name && i < G_N_ELEMENTS(t); i++)
        if (strcmp(name, t[i].name) == 0) {
            *out = t[i].o;
            return true;
        }
    return false;
}

bool memory_precision_from_name(const char *name, MemoryPrecision *out)
{
    if (!name)
        return false;
    if (strcmp(name, "fp32") == 0)
        *out = MEMORY_FP32;
    else if (strcmp(name, "fp16") == 0 || strcmp(name, "mixed_fp16") == 0)
        *out = MEMORY_MIXED_FP16;
    else if (strcmp(name, "bf16") == 0 || strcmp(name, "mixed_bf16") == 0)
        *out = MEMORY_MIXED_BF16;
    else if (strcmp(name, "fp8") == 0)
        *out = MEMORY_MIXED_FP8;
    else
        return false;
    return true;
}
