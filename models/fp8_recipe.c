/* Transformer Engine's FP8 recipes: quantization traffic, FP8 weight
 * copies, the "fp8_recipe" key (fp8_recipe.h).  The byte counts follow
 * TE's quantizers (transformer_engine/pytorch/csrc/quantizer.cpp at
 * d0067d0d: Float8Quantizer and Float8CurrentScalingQuantizer keep a
 * transpose only where !nvte_is_non_tn_fp8_gemm_supported(); current
 * scaling's compute_amax pass; MXFP8Quantizer / Float8BlockQuantizer write
 * rowwise and columnwise data with their scale tensors) and TE's recipe
 * docs (docs/examples/fp8_primer.ipynb, MXFP8: "32 consecutive values ...
 * E8M0 scaling factor"; Float8BlockScaling: 1x128 activations and
 * gradients, 128x128 weights, fp32 scales). */
#include "fp8_recipe.h"

#include <string.h>

static const char *const names[] = {"delayed", "tensorwise", "mxfp8", "blockwise", NULL};

const char *fp8_recipe_name(Fp8Recipe r) { return (unsigned)r <= FP8_BLOCKWISE ? names[r] : NULL; }

/* Scale bytes per element of one orientation: MXFP8 one E8M0 byte per 32;
 * blockwise one fp32 per 128 (1x128 tiles) or per 16384 (128x128 blocks). */
static double scale_bytes(Fp8Recipe r, bool weight)
{
    if (r == FP8_MXFP8)
        return 1.0 / 32;
    if (r == FP8_BLOCKWISE)
        return weight ? 4.0 / (128 * 128) : 4.0 / 128;
    return 0;
}

static bool block_scaled(Fp8Recipe r) { return r == FP8_MXFP8 || r == FP8_BLOCKWISE; }

/* The bytes of the columnwise data: a second quantization (block scales),
 * a transpose (per-tensor, TN-only GEMMs), or nothing (per-tensor on a
 * chip whose FP8 GEMMs take any layout: the rowwise data serves). */
static double columnwise_bytes(Fp8Recipe r, bool any_layout, bool weight)
{
    if (block_scaled(r))
        return 1 + scale_bytes(r, weight);
    return any_layout ? 0 : 1;
}

double fp8_cast_bytes(Fp8Recipe r, double e, bool columnwise, bool any_layout, bool weight)
{
    double read = r == FP8_TENSORWISE ? 2 * e : e; /* current scaling reads for the amax first */
    return read + 1 + scale_bytes(r, weight) + (columnwise ? columnwise_bytes(r, any_layout, weight) : 0);
}

double fp8_gathered_bytes(Fp8Recipe r) { return 1 + scale_bytes(r, false); }

double fp8_requant_bytes(Fp8Recipe r, double e, bool any_layout)
{
    double col = columnwise_bytes(r, any_layout, false);
    /* a per-tensor recipe on an any-layout chip writes the rowwise data again */
    return (r == FP8_TENSORWISE ? 2 * e : e) + (col > 0 ? col : 1);
}

double fp8_weight_copy_bytes(Fp8Recipe r, bool any_layout, bool fp8_params)
{
    switch (r) {
    /* both orientations cached; with fp8_param_gather the rowwise one is the
     * parameter itself (an MXFP8 tensor, counted as the weight) */
    case FP8_MXFP8: return (fp8_params ? 1 : 2) * (1 + scale_bytes(r, true));
    case FP8_BLOCKWISE: return (fp8_params ? 0 : 1) + 1;
    case FP8_DELAYED:
    case FP8_TENSORWISE: break;
    }
    return (fp8_params ? 0 : 1) + (any_layout ? 0 : 1);
}

bool fp8_recipe_parse(const SimJsonDoc *d, const cJSON *root, bool fp8, Fp8Recipe *out, GError **err)
{
    const char *s = NULL;
    *out = FP8_DELAYED;
    if (!sim_json_get_string(d, root, "fp8_recipe", false, &s, err))
        return false;
    if (!s)
        return true;
    const cJSON *at = cJSON_GetObjectItemCaseSensitive(root, "fp8_recipe");
    for (int i = 0; names[i]; i++)
        if (!g_ascii_strcasecmp(s, names[i])) { /* as every choice: case aside */
            *out = (Fp8Recipe)i;
            if (fp8)
                return true;
            sim_json_error(d, at, err, "\"fp8_recipe\" needs \"precision\": \"fp8\"");
            return false;
        }
    sim_json_error(d, at, err, "\"fp8_recipe\" = \"%s\" is not one of \"delayed\", \"tensorwise\", \"mxfp8\", \"blockwise\"",
                   SIM_ECHO(s));
    return false;
}

bool fp8_recipe_check(const SimJsonDoc *d, const cJSON *root, Fp8Recipe r, const Accel *a, GError **err)
{
    const cJSON *at = cJSON_GetObjectItemCaseSensitive(root, "fp8_recipe");
    if ((r == FP8_MXFP8 && !accel_fp8_mxfp8(a)) || (r == FP8_BLOCKWISE && !accel_fp8_blockwise(a))) {
        sim_json_error(d, at, err,
                       "\"fp8_recipe\" \"%s\": %s's FP8 GEMMs take no %s scales (its preset's \"fp8_gemm\" does not "
                       "say \"%s\": true)",
                       names[r], SIM_ECHO(accel_name(a)), r == FP8_MXFP8 ? "MXFP8 (1x32 E8M0)" : "1x128 / 128x128 block",
                       names[r]);
        return false;
    }
    return true;
}
