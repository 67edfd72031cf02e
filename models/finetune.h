/* Parameter-efficient fine-tuning as a workload the step runs: the
 * scenario's "finetune" key.  LoRA (Hu et al. 2021, "LoRA: Low-Rank
 * Adaptation of Large Language Models") freezes the base model and trains a
 * rank-r update B A beside chosen linear layers:
 *   "finetune": {"method": "lora", "rank": 16,
 *                "targets": ["linear_qkv", "linear_proj"],
 *                "dropout": 0.1, "base_dtype": "bf16"}
 * targets by Megatron-Core's / NeMo 2's PEFT names (linear_qkv, linear_proj,
 * linear_fc1, linear_fc2; default all four, NeMo's LoRA default; MLPerf's
 * Llama 2 70B LoRA recipe adapts linear_qkv and linear_proj), dropout on the
 * adapter's input (NeMo's dropout_position "pre"; default 0), base_dtype the
 * frozen weights' storage: "bf16" (the working weights' 2 bytes; default) or
 * "fp8" (FP8 parameters, Transformer Engine's fp8_model_init: 1 byte, no
 * 16-bit copy and no kept transpose, par_lora.c; only with "precision":
 * "fp8").
 *
 * What it changes (par_lora.c, step_compute.c, workload.c): the base's
 * linear layers and logits run forward and data-gradient GEMMs only (no
 * weight gradient: ~2/3 of full training's matmul FLOPs; the attention core
 * keeps its whole backward), the adapters' small GEMMs run all three; the
 * base keeps no input for a weight gradient; gradients, optimizer state,
 * the data-parallel gradient reduction and the sharded update (ZeRO-1/2,
 * Megatron's distributed optimizer) concern the adapters only; the base's
 * weights are held whole by every data-parallel rank (after tp and pp).
 * ZeRO-3 / FSDP, which shard and gather the frozen base as well, are
 * refused. */
#ifndef FINETUNE_H
#define FINETUNE_H

#include "sim_json.h"
#include "workload.h"

#include <stdbool.h>

typedef enum { FINETUNE_NONE, FINETUNE_LORA } FinetuneMethod;

typedef struct {
    FinetuneMethod method;
    int rank;
    unsigned targets; /* WORKLOAD_LINEAR_* bits */
    double dropout;
    bool fp8_base;    /* "base_dtype": "fp8" */
} Finetune;

/* "finetune" of the scenario `root` into *out (FINETUNE_NONE when absent);
 * errors at the key's line. */
bool finetune_parse(const SimJsonDoc *d, const cJSON *root, Finetune *out, GError **err);
/* A non-empty JSON list of linear layers by Megatron-Core's names
 * ("linear_qkv", "linear_proj", "linear_fc1", "linear_fc2"; with
 * `core_attn`, that name too: WORKLOAD_KEEP_CORE_ATTN), each once, into
 * WORKLOAD_LINEAR_* bits; errors name KEY.  And a bit's name. */
bool finetune_parse_linears(const SimJsonDoc *d, const cJSON *it, const char *key, bool core_attn, unsigned *out,
                            GError **err);
const char *finetune_linear_name(unsigned bit);
/* Its checks against the model and the precision (LoRA on a transformer
 * without experts; an fp8 base only in fp8 training). */
bool finetune_check(const SimJsonDoc *d, const cJSON *root, const Finetune *f, const Workload *w, bool fp8,
                    GError **err);
/* Sets LoRA's fields of `wp` (frozen linears, targets, rank, dropout). */
void finetune_apply(const Finetune *f, WorkloadParallel *wp);

#endif
