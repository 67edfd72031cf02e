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
 * attention, sdpa: cuDNN's fused kernels; dot_do_o, convert_dq: its
 * backward's), convolution (conv, fprop, dgrad, wgrad, cudnn), GEMM (gemm
 * but not fbgemm, nvjet: cuBLAS's Hopper/Blackwell kernels, gemv, cutlass,
 * xmma, cublas, Inductor's mm templates), indexing (index, gather, scatter,
 * sort, topk, histogram), elementwise (elementwise, vectorized, unrolled,
 * reduce, norm, softmax, dropout, copy, fill, cat) and other; then by
 * operator: a GEMM or attention operator's kernels are all its class (a
 * split-K reduction, a grouped GEMM's setup), and a memory-bound operator's
 * elementwise and indexing kernels (with an ATen operator's unnamed ones)
 * join the one of those two holding most of its time.  Predictions, per
 * operator and class against the sum of its kernels, from the accelerator
 * model (kineto_price.h says what each operator's shapes mean):
 *  - GEMM: the aten::mm family, _scaled_mm (FP8), _grouped_mm (E equal
 *    GEMMs: the offsets' split is not recorded);
 *  - attention: every SDPA backend's operators, forward and backward;
 *  - elementwise and indexing (ATen's operators): HBM time of the
 *    operator's inputs read and its largest input written once;
 *  - communication, optimizer, convolution, other: measured only.
 * Kernels without an operator with shapes are measured but not predicted;
 * the report says how much of each class's time is covered, and the share
 * of all kernel time priced. */
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
 * "kernels", "kernel_time_s", "span_s", "priced_share", "classes":
 * [{"class", "kernels", "measured_s", "predicted_s", "measured_covered_s",
 * "ratio"}], "gemms": [{"op", "m", "n", "k", "batch", "grouped", "dtype",
 * "measured_s", "predicted_s"}]}; ratio is predicted / measured over the
 * covered kernels (null where none is); priced_share the covered kernels'
 * share of all kernel time; batch a grouped GEMM's groups. */
cJSON *kineto_compare(const KinetoProfile *p, const Accel *acc);

/* The GEMM operators with shapes as calibrate's table: "m,n,k,dtype,seconds"
 * rows (batched GEMMs as batch x m rows; grouped GEMMs left out, their split
 * being unknown); NULL when there is none. */
char *kineto_gemm_table(const KinetoProfile *p);

#endif
