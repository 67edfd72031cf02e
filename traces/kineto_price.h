/* The operators of a PyTorch profile that the accelerator model prices, and
 * how: what an ATen operator's recorded "Input Dims", "Input type" and
 * "Concrete Inputs" (record_shapes=True) mean, argument by argument, for
 *  - GEMMs: aten::mm, addmm, _addmm_activation, bmm, baddbmm, matmul,
 *    linear (M, N, K from the operands, the type from the first one's);
 *    aten::_scaled_mm (and _scaled_mm_v2): FP8 A [M, K] x B [K, N] at the
 *    FP8 rate; aten::_grouped_mm and _scaled_grouped_mm (MoE experts):
 *    2-D x 3-D (rows [M, K] split by offsets over E experts [E, K, N]),
 *    2-D x 2-D (the weight gradient: K split over the groups of offsets),
 *    3-D x 2-D (N split) and 3-D x 3-D (batched).  The offsets' values
 *    are not recorded, so a grouped GEMM is priced as E equal GEMMs of
 *    M/E rows (or K/E, N/E): the true split is unknown, and an uneven
 *    one runs longer than the even one priced;
 *  - attention, every SDPA backend and its backward: flash
 *    (_scaled_dot_product_flash_attention, _flash_attention_forward /
 *    _backward), memory-efficient (_scaled_dot_product_efficient_attention,
 *    _efficient_attention_forward / _backward) and cuDNN
 *    (_scaled_dot_product_cudnn_attention, _cudnn_attention_forward /
 *    _backward).  Query heads, query and key lengths, head dim from the
 *    query and key (layout [B, H, S, D] or, in the flash and efficient
 *    kernels' own operators, [B, S, H, D]); causal and the flash sliding
 *    window from Concrete Inputs (absent: not causal, no window).  FLOPs
 *    follow the query heads, so grouped-query attention (fewer K/V heads)
 *    costs what its query heads do.  cuDNN runs at the preset's fused
 *    (FlashAttention-3 / cuDNN generation) rate; flash (FlashAttention-2)
 *    and memory-efficient (xformers' CUTLASS kernel, the same generation:
 *    a reading, not a measurement) at the FlashAttention-2 rate
 *    (accel_attention_v2_slowdown);
 *  - any other operator with tensor inputs: memory-bound, its inputs read
 *    and its largest input written once. */
#ifndef KINETO_PRICE_H
#define KINETO_PRICE_H

#include "accel.h"

#include <cjson/cJSON.h>

typedef enum { KINETO_OP_OTHER, KINETO_OP_GEMM, KINETO_OP_ATTENTION } KinetoOpKind;

/* What the model prices an operator (a cpu_op event) as, by its name. */
KinetoOpKind kineto_op_kind(const cJSON *op);

typedef struct {
    double m, n, k, batch; /* batch: independent GEMMs (bmm's batch, a grouped GEMM's groups) */
    AccelDtype dt;
    bool grouped;
} KinetoGemm;

/* A GEMM operator's shape; `kernel` (one of its kernels' names) tells TF32
 * from FP32 for float inputs.  false where the operator is no GEMM or its
 * shapes are missing or inconsistent. */
bool kineto_gemm_shape(const cJSON *op, const char *kernel, KinetoGemm *g);
double kineto_gemm_time(const Accel *acc, const KinetoGemm *g);
/* Seconds for an attention operator; NAN where it is none or lacks shapes. */
double kineto_attention_time(const cJSON *op, const Accel *acc);
/* Seconds for a memory-bound operator; NAN where no input has a shape. */
double kineto_memory_time(const cJSON *op, const Accel *acc);

#endif
