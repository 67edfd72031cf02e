/* Private to workload.c: DeepSeek's multi-head latent attention (MLA), the
 * pieces of a layer that replace multi-head attention's (workload_mla.c,
 * which also defines workload.h's head-dimension, KV-width and MTP
 * functions). */
#ifndef WORKLOAD_MLA_H
#define WORKLOAD_MLA_H

#include "workload.h"

/* Whether the transformer's attention is MLA (kv_lora_rank > 0). */
bool workload_mla_on(const WorkloadTransformer *t);
/* NULL, or what is wrong with the MLA and dense/MTP keys. */
const char *workload_mla_check(const WorkloadTransformer *t);
/* The attention block's parameters: projections and the two latent norms. */
double workload_mla_params(const WorkloadTransformer *t);
/* Key + value width per token across the heads (what a cp ring passes). */
double workload_mla_kv_width(const WorkloadTransformer *t);
/* The attention's forward GEMMs for b sequences of sq queries against
 * seq_len keys on one device (tp; sp: the down projections' tokens are
 * split over tp under sequence parallelism); returns how many (7). */
int workload_mla_gemms(const WorkloadTransformer *t, double b, double sq, double tp, bool sp, WorkloadGemm *out);
/* Element-wise bytes of T tokens' forward beyond multi-head attention's:
 * the latent norms (rows: whole per token, split by sequence
 * parallelism) and the rope/concat kernels building Q, K, V (split: by tp). */
void workload_mla_elementwise(const WorkloadTransformer *t, double T, double e, double *rows, double *split);
/* Saved for the backward, T tokens: the latents' norm inputs and the up
 * projections' inputs (rows), Q, K, V and O (split); `orig`: linear_proj
 * saves its 16-bit input, not an FP8 copy (a non-delayed FP8 recipe). */
void workload_mla_saved(const WorkloadTransformer *t, double T, double e, double li, double ab, bool fused,
                        bool recompute_up, bool orig, double *rows, double *split);

#endif
