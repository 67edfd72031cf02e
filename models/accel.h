/* Accelerators: peak FLOP/s, HBM and an achievable-efficiency model.
 *
 * An accelerator is data: models/presets/accelerators/NAME.json (every number
 * with its source; see models/README.md for the format and the sources).
 * Presets are searched in $SHARDSIM_DATA_DIR/models/presets/accelerators/
 * (environment variable), else in the source tree the library was built from.
 *
 * Time model (all functions below are pure; results in seconds):
 *
 *   GEMM  C[m x n] = A[m x k] B[k x n], `batch` independent copies:
 *     F  = 2 * batch * m * n * k                      FLOPs
 *     B  = batch * ((m*k + k*n) * dtype_bytes + m*n * max(dtype_bytes, 2))
 *                                                     minimum HBM traffic
 *     t0 = gemm_half_flops / (peak(16-bit) * gemm_eff_max(16-bit))
 *                     the kernel's fixed cost, seconds, whatever the type
 *     t  = max(t0 + F / (peak(dtype) * gemm_eff_max(dtype) * shape * align),
 *              B / (hbm_bandwidth * mem_eff))
 *   shape: the tiles' and waves' use of the SMs (accel.c); align: operand
 *   rows off 16 bytes.  For a 16-bit GEMM of ideal shape this is the
 *   saturating curve eff(F) = gemm_eff_max * F / (F + gemm_half_flops); the
 *   second term is the roofline's memory floor (skinny GEMMs, GEMV).

 *   Memory-bound kernel moving `bytes` (read + written):
 *     t  = bytes / (hbm_bandwidth * mem_eff)
 *
 * Errors: SIM_ERROR_INPUT with "FILE:LINE: what is wrong". */
#ifndef ACCEL_H
#define ACCEL_H

#include "sim_error.h"

#include <stdbool.h>
#include <stddef.h>

typedef enum {
    ACCEL_FP32, /* IEEE fp32 on the vector/SIMT units (no tensor cores) */
    ACCEL_TF32, /* fp32 storage, tensor-core math (NVIDIA TF32, AMD XF32/TF32) */
    ACCEL_FP16,
    ACCEL_BF16,
    ACCEL_FP8,
    ACCEL_NUM_DTYPES
} AccelDtype;

typedef struct Accel Accel;

/* `name_or_path`: a preset name ("a100-80gb") or a path to a JSON file (any
 * argument containing '/' or ending in ".json"). */
Accel *accel_load(const char *name_or_path, GError **err);
/* Parses a description held in memory; `name` stands for the file in messages. */
Accel *accel_parse(const char *name, const char *text, size_t len, GError **err);
void accel_free(Accel *a);

/* The directory searched for presets (no trailing slash); owned by the caller. */
char *accel_preset_dir(void);

const char *accel_name(const Accel *a);
/* "fp32", "tf32", "fp16", "bf16", "fp8"; NULL for an invalid value. */
const char *accel_dtype_name(AccelDtype dt);
bool accel_dtype_from_name(const char *name, AccelDtype *out);
/* Bytes per element as stored in HBM (tf32 is stored as fp32). */
double accel_dtype_bytes(AccelDtype dt);

bool accel_has_dtype(const Accel *a, AccelDtype dt);
/* Dense (not sparse) peak FLOP/s; 0 where the accelerator lacks the dtype. */
double accel_peak_flops(const Accel *a, AccelDtype dt);
double accel_hbm_bytes(const Accel *a);
double accel_hbm_bandwidth(const Accel *a); /* bytes/s, peak */
double accel_sm_count(const Accel *a);      /* SMs / compute units; 0: not given */
double accel_gemm_eff_max(const Accel *a, AccelDtype dt);
double accel_gemm_half_flops(const Accel *a);
double accel_mem_eff(const Accel *a);

/* Fraction of peak a GEMM of this size reaches in the compute-bound regime,
 * eff(F) above; 0 for a dtype the accelerator lacks. */
double accel_gemm_efficiency(const Accel *a, AccelDtype dt, double m, double n, double k);
/* Seconds for one GEMM (m x k) * (k x n); INFINITY for a dtype the
 * accelerator lacks, 0 when any dimension is <= 0. */
double accel_gemm_time(const Accel *a, AccelDtype dt, double m, double n, double k);
/* Seconds for `batch` independent GEMMs of one shape launched together
 * (attention's per-head products, grouped convolutions). */
double accel_bgemm_time(const Accel *a, AccelDtype dt, double batch, double m, double n, double k);
/* Seconds for a memory-bound kernel that reads and writes `bytes` in total. */
double accel_mem_time(const Accel *a, double bytes);

/* The chip runs fused attention (FlashAttention-2/3, cuDNN): its preset has
 * "efficiency": {"fused_attention": {...}}. */
bool accel_has_fused_attention(const Accel *a);
/* The preset measured its fused kernel with FP8 inputs (Transformer
 * Engine's fp8_dot_product_attention), forward or backward:
 * "fused_attention": {"fp8_fwd", "fp8_bwd"}, fractions of the FP8 peak. */
bool accel_has_fp8_attention(const Accel *a, bool backward);
/* The chip runs only XLA-compiled programs (the preset's "runtime"). */
bool accel_xla_only(const Accel *a);
/* The preset's "fp8_gemm" "any_layout": FP8 GEMMs take any operand layout
 * (Blackwell data-center parts), so Transformer Engine keeps no FP8
 * transpose of a weight; false (Hopper, Ada: TN only) where not given. */
bool accel_fp8_any_layout(const Accel *a);
/* The preset's "fp8_gemm" "mxfp8" / "blockwise": its FP8 GEMMs take block
 * scales, MXFP8's 1x32 E8M0 (Transformer Engine's check_mxfp8_support:
 * compute capability 10.x) / DeepSeek-style 1x128 and 128x128 fp32
 * (check_fp8_block_scaling_support: 9.0 and up, CUDA >= 12.9); false where
 * not given. */
bool accel_fp8_mxfp8(const Accel *a);
bool accel_fp8_blockwise(const Accel *a);
/* Seconds for fused attention over `batch_heads` heads of `seq` queries and
 * keys (self-attention) of `head_dim`: the forward, or its backward (which
 * recomputes the scores); causal skips the masked half.  INFINITY where the
 * chip has no fused kernel or lacks the dtype (FP8: no measured FP8 kernel,
 * accel_has_fp8_attention).  Formula in accel.c. */
double accel_attention_time(const Accel *a, AccelDtype dt, double batch_heads, double seq, double head_dim,
                            bool causal, bool backward);
/* The same kernel with `keys` the mean number of keys a query meets (causal:
 * seq / 2; a causal sliding window w: w - w^2 / (2 seq)): FLOPs and the
 * key loop's efficiency follow it, the HBM floor does not. */
double accel_attention_time_keys(const Accel *a, AccelDtype dt, double batch_heads, double seq, double keys,
                                 double head_dim, bool backward);
/* How much slower the FlashAttention-1 generation (flash-attn 1.x, its
 * Triton port) runs than accel_attention_time's kernel, where the preset
 * measured it ("v1_fwd", "v1_bwd"); 0: not given. */
double accel_attention_v1_slowdown(const Accel *a, bool backward);
/* How much slower FlashAttention-2 (flash-attn 2.x, PyTorch SDPA's flash
 * backend) runs than accel_attention_time's kernel: from the preset's
 * "v2_fwd", "v2_bwd" where its fused kernel is a later generation (Hopper:
 * FA3 / cuDNN); 1 where it states none (its fused kernel is FA2's class:
 * Ampere, MI300X). */
double accel_attention_v2_slowdown(const Accel *a, bool backward);

/* The efficiency parameters by dotted key ("efficiency.gemm_eff_max.bf16",
 * "efficiency.mem_eff", ...), for calibration; a file may also be an
 * overlay {"overlay", "base": PRESET, "parameters": {KEY: VALUE}} on a
 * preset (what `shardsim calibrate --accelerator -o` writes). */
int accel_param_count(void);
const char *accel_param_key(int i);
double accel_param_get(const Accel *a, int i); /* 0: the chip has no such thing */
bool accel_param_set(Accel *a, int i, double v); /* false outside the bounds or where 0 */
void accel_param_bounds(int i, double *lo, double *hi, double *prior_sd);
Accel *accel_copy(const Accel *a);
/* p10 and p90 of log(predicted / measured) step time behind the preset (its
 * "uncertainty", or a calibrated overlay's); false (and a wide judged band,
 * +-0.3) for a chip no measured step was checked on. */
bool accel_band(const Accel *a, double *r10, double *r90);
/* Whether that band is another chip's, carried over ("basis": "transferred"). */
bool accel_band_transferred(const Accel *a);

#endif
