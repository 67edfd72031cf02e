/* Transformer Engine's FP8 recipes ("fp8_recipe"): what quantizing a
 * linear layer's operands moves through HBM under each, what the FP8
 * copies of a weight hold, and the scenario key's checks.
 *
 *   delayed     DelayedScaling: per-tensor scale from the amax history; the
 *               cast takes the amax in the same pass (Megatron-Core's default)
 *   tensorwise  Float8CurrentScaling ("FP8-CS"): per-tensor scale from the
 *               tensor's own amax, a pass of its own before the cast
 *               (quantizer.cpp, Float8CurrentScalingQuantizer::quantize_impl:
 *               nvte_compute_amax, then nvte_quantize)
 *   mxfp8       MXFP8BlockScaling ("FP8-MX", Blackwell): an E8M0 scale per 32
 *               consecutive elements along the contraction, so a tensor used
 *               on both sides of the backward is quantized in both
 *               orientations (no transpose of one into the other)
 *   blockwise   Float8BlockScaling (DeepSeek-V3's): fp32 scales per 1x128
 *               tile of activations and gradients, 128x128 block of weights;
 *               both orientations, the columnwise one transposed (block
 *               scaled GEMMs take TN only)
 *
 * Every recipe's GEMMs run at the preset's FP8 rate: no measured per-recipe
 * GEMM rate is used.  Pure functions but the parsing. */
#ifndef FP8_RECIPE_H
#define FP8_RECIPE_H

#include "accel.h"
#include "sim_json.h"

#include <stdbool.h>

typedef enum { FP8_DELAYED, FP8_TENSORWISE, FP8_MXFP8, FP8_BLOCKWISE } Fp8Recipe;

const char *fp8_recipe_name(Fp8Recipe r);

/* Bytes moved per element when Transformer Engine quantizes a tensor of
 * `e`-byte elements for a GEMM: the read (and current scaling's amax
 * pass), the rowwise FP8 data with its scales, and where `columnwise` (a
 * weight gradient will contract over the other dimension) the columnwise
 * data: per-tensor recipes a transpose unless the chip's FP8 GEMMs take
 * any layout (`any_layout`), the block-scaled ones a second quantization
 * with its own scales.  `weight`: a 2-D-blocked weight (blockwise's
 * 128x128 scales). */
double fp8_cast_bytes(Fp8Recipe r, double e, bool columnwise, bool any_layout, bool weight);
/* What quantizing again a 16-bit input that a linear saved instead of its
 * FP8 copy (set_save_original_input) adds in the backward, per element:
 * the read (and amax pass) and the columnwise data. */
double fp8_requant_bytes(Fp8Recipe r, double e, bool any_layout);
/* Bytes per weight parameter the FP8 copies hold (memory.h's
 * fp8_copy_bytes): per-tensor recipes 1 (none with FP8 parameters) plus a
 * transpose where the GEMMs are TN only; MXFP8 both orientations with a
 * scale byte per 32 (with FP8 parameters, Megatron's fp8_param_gather,
 * the rowwise one is the parameter: the columnwise alone); blockwise 1 (none with FP8 parameters) plus the
 * transpose on every chip (its scales, 4 bytes per 16384, left out). */
double fp8_weight_copy_bytes(Fp8Recipe r, bool any_layout, bool fp8_params);

/* Bytes per element of a tensor all-gathered quantized (its rowwise data
 * and scales): sequence-parallel tensor parallelism in FP8 gathers the
 * linear's input (and in the backward its output gradient) after the
 * cast, in Transformer Engine (layernorm_linear.py / linear.py: the input
 * quantizer applied before gather_along_first_dim) and torchao's
 * Float8ColwiseParallel / PrepareFloat8ModuleInput alike. */
double fp8_gathered_bytes(Fp8Recipe r);

/* "fp8_recipe" of the scenario root: a recipe name (default "delayed");
 * refused without "precision": "fp8" and where the chip's preset does not
 * state block-scaled GEMMs ("mxfp8", "blockwise"). */
bool fp8_recipe_parse(const SimJsonDoc *d, const cJSON *root, bool fp8, Fp8Recipe *out, GError **err);
bool fp8_recipe_check(const SimJsonDoc *d, const cJSON *root, Fp8Recipe r, const Accel *a, GError **err);

#endif
