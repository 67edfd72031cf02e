/* PyTorch profiler (Kineto) traces as compute truth.
 *
 * A Kineto trace is Chrome-trace JSON: {"traceEvents": [...]} with GPU
 * kernels (cat "kernel": name, ts and dur in microseconds, args "grid",
 * "block", "correlation"), the CUDA runtime calls that launched them (cat
 * "cuda_runtime", same "correlation") and the host operators around those
 * calls (cat "cpu_op", args "Input Dims", "Input type" when the profile
 * was taken with record_shapes=True).  A kernel's operator is the innermost
 * cpu_op on the launching thread that encloses its launch (else the cpu_op
 * with the kernel's "External id").
 *
 * Kernels fall in the model's classes by name: communication (nccl, rccl),
 * optimizer (multi_tensor_apply, adam, sgd, lamb), attention (flash, fmha,
 * attention), convolution (conv, fprop, dgrad, wgrad, cudnn), GEMM (gemm
 * but not fbgemm, gemv, cutlass, xmma, cublas), elementwise (elementwise,
 * vectorized, unrolled, reduce, norm, softmax, dropout, copy, fill, cat)
 * and other.  Predictions, from the accelerator model:
 *  - GEMM: per operator (aten::mm, addmm, bmm, baddbmm, matmul, linear),
 *    M, N, K (and batch) from its Input Dims, the type from its Input type
 *    (float: fp32, or tf32 where the kernel's name says a TF32 tensor-core
 *    kernel: tf32, s1688, s16816), accel_gemm_time / accel_bgemm_time
 *    against the sum of the operator's GEMM kernels;
 *  - attention: aten::_scaled_dot_product_flash_attention /
 *    _efficient_attention (and their backward) with query [B, H, S, D];
 *  - elementwise: HBM time of the operator's inputs read and its largest
 *    input written once;
 *  - communication, optimizer, convolution, other: measured only.
 * Kernels without an operator with shapes are measured but not predicted;
 * the report says how much of each class's time is covered. */
#ifndef KINETO_H
#define KINETO_H

#include "accel.h"
#include "sim_error.h"

#include <cjson/cJSON.h>

typedef struct KinetoProfile KinetoProfile;

/* Parses a profile (`name` for messages); NULL and SIM_ERROR_INPUT on a file
 * that is not one (no traceEvents, no kernels, a kernel without dur). */
KinetoProfile *kineto_parse(const char *name, const char *text, size_t len, GError **err);
KinetoProfile *kineto_load(const char *path, GError **err);
void kineto_free(KinetoProfile *p);
/* Whether `text` looks like a Kineto trace (an object with "traceEvents"). */
bool kineto_looks_like(const char *text);

/* Measured versus predicted per class on `acc`: {"profile", "accelerator",
 * "kernels", "kernel_time_s", "span_s", "classes": [{"class", "kernels",
 * "measured_s", "predicted_s", "measured_covered_s", "ratio"}],
 * "gemms": [{"op", "m", "n", "k", "batch", "dtype", "measured_s",
 * "predicted_s"}]}; ratio is predicted / measured over the covered kernels
 * (null where none is). */
cJSON *kineto_compare(const KinetoProfile *p, const Accel *acc);

/* The GEMM operators with shapes as calibrate's table: "m,n,k,dtype,seconds"
 * rows (batched GEMMs as batch x m rows); NULL when there is none. */
char *kineto_gemm_table(const KinetoProfile *p);

#endif
