/* Accelerators: presets read and checked, peak FLOP/s by dtype, the GEMM
 * efficiency curve with its roofline floor, memory-bound time (accel.h). */
#include "accel.h"
#include "sim_data.h"

#include <math.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>

struct Accel {
    char *name;
    double peak[ACCEL_NUM_DTYPES]; /* 0: not supported */
    double eff_max[ACCEL_NUM_DTYPES];
    double half_flops;
    double hbm_bytes;
    double hbm_bw;
    double mem_eff;
    /* fused attention (FlashAttention-2/3, cuDNN): fraction of the 16-bit
     * peak at long sequences, forward and backward; 0: no fused kernel */
    double attn_fwd, attn_bwd, attn_half_seq;
    /* the FlashAttention-1 generation's plateaus where measured on this chip
     * (0: not given, the caller's generic ratio) */
    double attn_v1_fwd, attn_v1_bwd;
    double attn_v2_fwd, attn_v2_bwd; /* FlashAttention-2 where "fused" is newer (Hopper: FA3) */
    /* the fused kernel with FP8 Q, K, V (Transformer Engine's
     * fp8_dot_product_attention): fraction of the FP8 peak, where measured
     * (0: not given, the 16-bit kernel's rate) */
    double attn_fp8_fwd, attn_fp8_bwd;
    double sm_count; /* streaming multiprocessors / compute units; 0: no tile model */
    /* p10, p90 of log(predicted / measured) step time on the measurements the
     * preset was checked on ("uncertainty"); UNCALIBRATED_BAND otherwise */
    double band[2];
    bool band_given;
    bool band_transferred; /* "basis": "transferred": another chip's rows, carried over */
    bool fp8_any_layout; /* "fp8_gemm": FP8 GEMMs take any operand layout (no FP8 transpose kept) */
    bool fp8_mxfp8, fp8_blockwise; /* "fp8_gemm": block-scaled FP8 GEMMs (MXFP8 1x32 E8M0; 1x128 / 128x128 fp32) */
    bool xla_only;                 /* "runtime": programs run only as XLA-compiled ones */
};

/* A chip no measured step was checked on: judged, not fitted (the presets
 * derived from A100's were off by 10-25% on the runs issue 12 cites). */
#define UNCALIBRATED_BAND 0.3

static const char *const dtype_names[ACCEL_NUM_DTYPES] = {"fp32", "tf32", "fp16", "bf16", "fp8"};

const char *accel_dtype_name(AccelDtype dt)
{
    return (unsigned)dt < ACCEL_NUM_DTYPES ? dtype_names[dt] : NULL;
}

bool accel_dtype_from_name(const char *name, AccelDtype *out)
{
    for (int i = 0; name && i < ACCEL_NUM_DTYPES; i++)
        if (strcmp(name, dtype_names[i]) == 0) {
            *out = (AccelDtype)i;
            return true;
        }
    return false;
}

double accel_dtype_bytes(AccelDtype dt)
{
    switch (dt) {
    case ACCEL_FP32:
    case ACCEL_TF32: return 4;
    case ACCEL_FP16:
    case ACCEL_BF16: return 2;
    case ACCEL_FP8: return 1;
    default: return 0;
    }
}

#define ACCEL_PRESETS "models/presets/accelerators"

char *accel_preset_dir(void)
{
    return sim_data_dir(ACCEL_PRESETS);
}

static const cJSON *need_object(const SimJsonDoc *doc, const cJSON *obj, const char *key, GError **err)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!it) {
        sim_json_error(doc, obj, err, "missing required field \"%s\"", key);
        return NULL;
    }
    if (!cJSON_IsObject(it)) {
        sim_json_error(doc, it, err, "\"%s\" must be an object", key);
        return NULL;
    }
    return it;
}

/* The optional object at `key` of `obj`: *out NULL when absent; else it
 * must be an object of `keys` only, with a "source" (false and `err`). */
static bool sourced_object(const SimJsonDoc *doc, const cJSON *obj, const char *key, const char *const *keys,
                           const cJSON **out, GError **err)
{
    *out = NULL;
    if (!cJSON_GetObjectItemCaseSensitive(obj, key))
        return true;
    *out = need_object(doc, obj, key, err);
    return *out && sim_json_only_keys(doc, *out, keys, NULL, err) && sim_json_need_source(doc, *out, err);
}

/* "fused_attention": {"fwd": 0.7, "bwd": 0.6, "half_seq": 512, "source": ...}
 * inside "efficiency"; absent: the chip has no fused attention kernel.
 * Optional "v1_fwd", "v1_bwd": the FlashAttention-1 generation's plateaus
 * on this chip, where they are not the generic fraction of the preset's
 * (Hopper: FA1/FA2 use no wgmma/TMA, FA3 does); "v2_fwd", "v2_bwd":
 * FlashAttention-2's, where the preset's fused kernel is a later one
 * (Hopper: FA3 / cuDNN); "fp8_fwd", "fp8_bwd": the kernel with FP8 inputs,
 * as fractions of the FP8 peak, where a measured figure exists. */
static bool parse_fused_attention(const SimJsonDoc *doc, const cJSON *eff, Accel *a, GError **err)
{
    static const char *const keys[] = {"fwd", "bwd", "half_seq", "v1_fwd", "v1_bwd", "v2_fwd", "v2_bwd",
                                         "fp8_fwd", "fp8_bwd", "source", NULL};
    const cJSON *fa = NULL;
    if (!sourced_object(doc, eff, "fused_attention", keys, &fa, err))
        return false;
    return !fa ||
           (sim_json_get_number(doc, fa, "fwd", true, 0.01, 1, &a->attn_fwd, err) &&
           sim_json_get_number(doc, fa, "bwd", true, 0.01, 1, &a->attn_bwd, err) &&
           sim_json_get_number(doc, fa, "half_seq", true, 0, 1e7, &a->attn_half_seq, err) &&
           sim_json_get_number(doc, fa, "v1_fwd", false, 0.01, 1, &a->attn_v1_fwd, err) &&
           sim_json_get_number(doc, fa, "v1_bwd", false, 0.01, 1, &a->attn_v1_bwd, err) &&
           sim_json_get_number(doc, fa, "v2_fwd", false, 0.01, 1, &a->attn_v2_fwd, err) &&
           sim_json_get_number(doc, fa, "v2_bwd", false, 0.01, 1, &a->attn_v2_bwd, err) &&
           sim_json_get_number(doc, fa, "fp8_fwd", false, 0.01, 1, &a->attn_fp8_fwd, err) &&
           sim_json_get_number(doc, fa, "fp8_bwd", false, 0.01, 1, &a->attn_fp8_bwd, err));
}

/* {"any_layout": BOOL, "mxfp8": BOOL, "blockwise": BOOL, "source"} (a
 * preset's optional "fp8_gemm"): whether FP8 GEMMs take any operand layout,
 * not only TN (Transformer Engine's is_non_tn_fp8_gemm_supported: compute
 * capability 10.x, 13.x and up), so that TE keeps no FP8 transpose of a
 * weight; whether they take MXFP8's / DeepSeek-style block scales. */
static bool read_fp8_gemm(const SimJsonDoc *doc, const cJSON *root, Accel *a, GError **err)
{
    static const char *const keys[] = {"any_layout", "mxfp8", "blockwise", "source", NULL};
    const cJSON *g = NULL;
    return sourced_object(doc, root, "fp8_gemm", keys, &g, err) &&
           (!g || (sim_json_get_bool(doc, g, "any_layout", &a->fp8_any_layout, err) &&
                   sim_json_get_bool(doc, g, "mxfp8", &a->fp8_mxfp8, err) &&
                   sim_json_get_bool(doc, g, "blockwise", &a->fp8_blockwise, err)));
}

/* {"xla_only": BOOL, "source"} (a preset's optional "runtime"): whether
 * the chip runs only programs XLA compiles (TPUs: JAX, TensorFlow and
 * PyTorch/XLA alike), whose buffers are planned at compile time. */
static bool read_runtime(const SimJsonDoc *doc, const cJSON *root, Accel *a, GError **err)
{
    static const char *const keys[] = {"xla_only", "source", NULL};
    const cJSON *r = NULL;
    return sourced_object(doc, root, "runtime", keys, &r, err) &&
           (!r || sim_json_get_bool(doc, r, "xla_only", &a->xla_only, err));
}

/* A preset's "uncertainty" "basis": "measured" (default: held-out rows of
 * this chip's own steps) or "transferred" (another chip's band, carried over
 * and widened; its source says how). */
static bool read_basis(const SimJsonDoc *doc, const cJSON *o, Accel *a, GError **err)
{
    static const char *const keys[] = {"log_residual", "basis", "source", NULL};
    const char *basis = NULL;
    if (!sim_json_only_keys(doc, o, keys, NULL, err) || !sim_json_get_string(doc, o, "basis", false, &basis, err))
        return false;
    if (basis && strcmp(basis, "measured") && strcmp(basis, "transferred")) {
        sim_json_error(doc, cJSON_GetObjectItemCaseSensitive(o, "basis"), err,
                       "\"basis\" = \"%s\" is not one of \"measured\", \"transferred\"", SIM_ECHO(basis));
        return false;
    }
    a->band_transferred = basis && !strcmp(basis, "transferred");
    return true;
}

/* {"log_residual": [P10, P90], "source"} (a preset's "uncertainty", an
 * overlay's "calibration"); absent: the uncalibrated band. */
static bool read_band(const SimJsonDoc *doc, const cJSON *o, Accel *a, GError **err)
{
    if (!a->band_given) {
        a->band[0] = -UNCALIBRATED_BAND;
        a->band[1] = UNCALIBRATED_BAND;
    }
    if (!o)
        return true;
    const cJSON *r = cJSON_GetObjectItemCaseSensitive(o, "log_residual"), *x = cJSON_GetArrayItem(r, 0),
                *y = cJSON_GetArrayItem(r, 1);
    if (!r) /* a calibration without held-out rows says nothing of it */
        return true;
    if (!cJSON_IsArray(r) || cJSON_GetArraySize(r) != 2 || !cJSON_IsNumber(x) || !cJSON_IsNumber(y) ||
        !(x->valuedouble >= -5 && x->valuedouble <= y->valuedouble && y->valuedouble <= 5)) {
        sim_json_error(doc, r ? r : o, err, "\"log_residual\" must be [P10, P90] with -5 <= P10 <= P90 <= 5");
        return false;
    }
    a->band[0] = x->valuedouble;
    a->band[1] = y->valuedouble;
    a->band_given = true;
    a->band_transferred = false; /* a calibration's rows are this chip's */
    return true;
}

static Accel *from_doc(const SimJsonDoc *doc, GError **err)
{
    const cJSON *root = sim_json_root(doc);
    if (!cJSON_IsObject(root)) {
        sim_json_error(doc, root, err, "an accelerator description must be a JSON object");
        return NULL;
    }
    static const char *const top_keys[] = {"name", "description", "source", "peak_flops", "hbm", "efficiency",
                                           "uncertainty", "fp8_gemm", "runtime", NULL};
    static const char *const peak_keys[] = {"fp32", "tf32", "fp16", "bf16", "fp8", "source", NULL};
    static const char *const hbm_keys[] = {"bytes", "bandwidth", "source", NULL};
    static const char *const eff_keys[] = {"gemm_eff_max", "gemm_eff_max_by_dtype", "gemm_half_flops", "mem_eff",
                                           "fused_attention", "sm_count", "source", NULL};
    if (!sim_json_only_keys(doc, root, top_keys, NULL, err))
        return NULL;

    Accel a = {0};
    const char *name = NULL;
    if (!sim_json_get_string(doc, root, "name", true, &name, err))
        return NULL;

    const cJSON *peak = need_object(doc, root, "peak_flops", err);
    if (!peak || !sim_json_only_keys(doc, peak, peak_keys, NULL, err) || !sim_json_need_source(doc, peak, err))
        return NULL;
    bool any = false;
    for (int i = 0; i < ACCEL_NUM_DTYPES; i++) {
        if (!sim_json_get_quantity(doc, peak, dtype_names[i], false, 1e9, 1e18, SIM_UNIT_FLOP_PER_S, &a.peak[i], err))
            return NULL;
        any |= a.peak[i] > 0;
    }
    if (!any) {
        sim_json_error(doc, peak, err, "\"peak_flops\" names no data type");
        return NULL;
    }

    const cJSON *hbm = need_object(doc, root, "hbm", err);
    if (!hbm || !sim_json_only_keys(doc, hbm, hbm_keys, NULL, err) || !sim_json_need_source(doc, hbm, err))
        return NULL;
    /* "80GiB" reads better than 85899345920; today's largest is 288 GB */
    if (!sim_json_get_size(doc, hbm, "bytes", true, 1024.0 * 1024, 16.0 * 1024 * 1024 * 1024 * 1024, &a.hbm_bytes,
                           err))
        return NULL;
    if (!sim_json_get_quantity(doc, hbm, "bandwidth", true, 1e6, 1e15, SIM_UNIT_BYTES_PER_S, &a.hbm_bw, err))
        return NULL;

    const cJSON *eff = need_object(doc, root, "efficiency", err);
    if (!eff || !sim_json_only_keys(doc, eff, eff_keys, NULL, err) || !sim_json_need_source(doc, eff, err))
        return NULL;
    double eff_max = 0;
    if (!sim_json_get_number(doc, eff, "gemm_eff_max", true, 0.01, 1, &eff_max, err) ||
        !sim_json_get_quantity(doc, eff, "gemm_half_flops", true, 0, 1e15, SIM_UNIT_FLOP, &a.half_flops, err) ||
        !sim_json_get_number(doc, eff, "mem_eff", true, 0.01, 1, &a.mem_eff, err))
        return NULL;
    for (int i = 0; i < ACCEL_NUM_DTYPES; i++)
        a.eff_max[i] = eff_max;
    const cJSON *by = cJSON_GetObjectItemCaseSensitive(eff, "gemm_eff_max_by_dtype");
    if (by) {
        if (!cJSON_IsObject(by)) {
            sim_json_error(doc, by, err, "\"gemm_eff_max_by_dtype\" must be an object");
            return NULL;
        }
        for (const cJSON *c = by->child; c; c = c->next) {
            AccelDtype dt;
            if (!accel_dtype_from_name(c->string, &dt)) {
                sim_json_error(doc, c, err, "unknown data type \"%s\"", SIM_ECHO(c->string));
                return NULL;
            }
            if (!sim_json_get_number(doc, by, c->string, true, 0.01, 1, &a.eff_max[dt], err))
                return NULL;
        }
    }

    if (!parse_fused_attention(doc, eff, &a, err) ||
        !sim_json_get_number(doc, eff, "sm_count", false, 1, 100000, &a.sm_count, err))
        return NULL;

    const cJSON *unc = cJSON_GetObjectItemCaseSensitive(root, "uncertainty");
    if (!read_band(doc, unc, &a, err) || (unc && !read_basis(doc, unc, &a, err)) ||
        !read_fp8_gemm(doc, root, &a, err) || !read_runtime(doc, root, &a, err))
        return NULL;
    Accel *out = g_new(Accel, 1);
    *out = a;
    out->name = g_strdup(name);
    return out;
}

Accel *accel_parse(const char *name, const char *text, size_t len, GError **err)
{
    SimJsonDoc *doc = sim_json_parse(name, text, len, err);
    if (!doc)
        return NULL;
    Accel *a = from_doc(doc, err);
    sim_json_free(doc);
    return a;
}

static Accel *from_overlay(const SimJsonDoc *doc, GError **err);

Accel *accel_load(const char *name_or_path, GError **err)
{
    SimJsonDoc *doc = sim_data_load(ACCEL_PRESETS, "accelerator", name_or_path, err);
    if (!doc)
        return NULL;
    bool overlay = cJSON_IsString(cJSON_GetObjectItemCaseSensitive(sim_json_root(doc), "overlay"));
    Accel *a = overlay ? from_overlay(doc, err) : from_doc(doc, err);
    sim_json_free(doc);
    return a;
}

void accel_free(Accel *a)
{
    if (!a)
        return;
    g_free(a->name);
    g_free(a);
}

const char *accel_name(const Accel *a) { return a->name; }

static bool valid_dt(AccelDtype dt) { return (unsigned)dt < ACCEL_NUM_DTYPES; }

bool accel_has_dtype(const Accel *a, AccelDtype dt) { return valid_dt(dt) && a->peak[dt] > 0; }
double accel_peak_flops(const Accel *a, AccelDtype dt) { return valid_dt(dt) ? a->peak[dt] : 0; }
double accel_hbm_bytes(const Accel *a) { return a->hbm_bytes; }
double accel_hbm_bandwidth(const Accel *a) { return a->hbm_bw; }
double accel_sm_count(const Accel *a) { return a->sm_count; }
double accel_gemm_eff_max(const Accel *a, AccelDtype dt) { return valid_dt(dt) ? a->eff_max[dt] : 0; }
double accel_gemm_half_flops(const Accel *a) { return a->half_flops; }
double accel_mem_eff(const Accel *a) { return a->mem_eff; }

/* The fixed cost of one GEMM kernel, in seconds: launch, prologue, the
 * pipeline's fill and drain.  The preset states it as gemm_half_flops, the
 * FLOPs at which a 16-bit GEMM of ideal shape reaches half its ceiling, so
 * it is that many FLOPs at the 16-bit ceiling (bf16, else fp16, else fp32)
 * whatever the GEMM's own type: the kernel's fixed work does not run faster
 * in FP8 (measured on an H200, tests/data/kernels/h200/gemm_graph.csv: the
 * smallest FP8 GEMMs take the BF16 ones' 2.8-4 us, not half). */
static double fixed_time(const Accel *a)
{
    static const AccelDtype ref[] = {ACCEL_BF16, ACCEL_FP16, ACCEL_FP32};
    for (size_t i = 0; i < G_N_ELEMENTS(ref); i++)
        if (accel_has_dtype(a, ref[i]) && a->eff_max[ref[i]] > 0)
            return a->half_flops / (a->peak[ref[i]] * a->eff_max[ref[i]]);
    return 0;
}

/* Tile and wave quantisation (NVIDIA "Matrix Multiplication Background
 * User's Guide", sections on tile and wave quantization): the GEMM library
 * cuts C into tiles, one thread block each, run in waves of sm_count
 * blocks; partial tiles at the edges and a partial last wave do the work of
 * full ones.  Split-K (NVIDIA cuBLAS and CUTLASS do it for short, deep
 * GEMMs) fills the waves with slices of k.  The library picks the tile that wastes least, but smaller
 * tiles run slower per SM (less reuse of each loaded operand); the tiles and
 * their relative rates below are assumptions in the range CUTLASS/cuBLAS
 * tile configurations show, not measurements.  1 for a chip without
 * sm_count (no tile model). */
static const struct { double m, n, rate; } tiles[] = {
    {256, 128, 1.0}, {128, 256, 1.0}, {128, 128, 0.92}, {256, 64, 0.85}, {64, 256, 0.85},
    {128, 64, 0.8},  {64, 128, 0.8},  {64, 64, 0.6},
};

static double shape_efficiency(const Accel *a, double batch, double m, double n, double k)
{
    if (!(a->sm_count > 0))
        return 1;
    double best = 0;
    for (size_t i = 0; i < G_N_ELEMENTS(tiles); i++) {
        /* a dimension below the tile's runs as a narrower tile (skinny GEMMs
         * and GEMVs are memory bound anyway: the roofline floor decides) */
        double tile_m = fmin(m, tiles[i].m), tile_n = fmin(n, tiles[i].n);
        double tm = ceil(m / tile_m), tn = ceil(n / tile_n);
        /* split-K: too few tiles for the SMs cut k into 2 or 4 slices
         * (each at least 256 deep), at the cost of a reduction pass */
        for (int split = 1; split <= 4; split *= 2) {
            if (split > 1 && k / split < 256)
                break;
            double blocks = batch * tm * tn * split, waves = ceil(blocks / a->sm_count);
            double used = batch * m * n * split / (waves * a->sm_count * tile_m * tile_n);
            best = fmax(best, tiles[i].rate * used * (split > 1 ? 0.95 : 1));
        }
    }
    return best;
}

/* Tensor cores need operand rows aligned to 16 bytes (8 fp16/bf16, 16 fp8
 * elements; NVIDIA "Matrix Multiplication Background User's Guide", "Tensor
 * Core Requirements"): with k or n off that, cuBLAS falls back to kernels
 * with narrower loads, the narrower the slower.  The rates by alignment are
 * assumptions read off the guide's figures, not measurements. */
static double align_rate(double elems, double bytes)
{
    double row = elems * bytes;
    return fmod(row, 16) == 0 ? 1 : fmod(row, 8) == 0 ? 0.8 : fmod(row, 4) == 0 ? 0.7 : 0.6;
}

static double align_efficiency(const Accel *a, AccelDtype dt, double n, double k)
{
    if (!(a->sm_count > 0) || dt == ACCEL_FP32)
        return 1;
    double e = accel_dtype_bytes(dt);
    return fmin(align_rate(n, e), align_rate(k, e));
}

/* Seconds of tensor-core (or SIMT) work: the fixed cost plus the FLOPs at
 * the ceiling, derated by the tiles' and waves' waste and the operands'
 * alignment.  The waste stretches the work, not the fixed cost: a GEMM of
 * a few tiles takes one short wave (a 256^3 BF16 GEMM: 2.9 us measured on
 * an H200, where dividing the whole time by the waves' use gave 30 us). */
static double compute_time(const Accel *a, AccelDtype dt, double batch, double m, double n, double k)
{
    double flops = 2.0 * batch * m * n * k;
    double rate = a->peak[dt] * a->eff_max[dt] * shape_efficiency(a, batch, m, n, k) * align_efficiency(a, dt, n, k);
    return fixed_time(a) + flops / rate;
}

double accel_gemm_efficiency(const Accel *a, AccelDtype dt, double m, double n, double k)
{
    if (!(m > 0 && n > 0 && k > 0) || !accel_has_dtype(a, dt) || !(a->eff_max[dt] > 0))
        return 0;
    return 2.0 * m * n * k / (a->peak[dt] * compute_time(a, dt, 1, m, n, k));
}

/* An FP8 GEMM writes its output in BF16 (Transformer Engine's, cuBLASLt's
 * default): the memory floor counts the inputs at the type's width and the
 * output at least at 2 bytes. */
double accel_bgemm_time(const Accel *a, AccelDtype dt, double batch, double m, double n, double k)
{
    if (!accel_has_dtype(a, dt))
        return INFINITY;
    if (!(batch > 0 && m > 0 && n > 0 && k > 0))
        return 0;
    double e = accel_dtype_bytes(dt);
    double bytes = batch * ((m * k + k * n) * e + m * n * fmax(e, 2));
    return fmax(compute_time(a, dt, batch, m, n, k), accel_mem_time(a, bytes));
}

double accel_gemm_time(const Accel *a, AccelDtype dt, double m, double n, double k)
{
    return accel_bgemm_time(a, dt, 1, m, n, k);
}

double accel_mem_time(const Accel *a, double bytes)
{
    if (!(bytes > 0))
        return 0;
    return bytes / (a->hbm_bw * a->mem_eff);
}

bool accel_has_fused_attention(const Accel *a) { return a->attn_fwd > 0; }

bool accel_fp8_any_layout(const Accel *a) { return a->fp8_any_layout; }
bool accel_xla_only(const Accel *a) { return a->xla_only; }
bool accel_fp8_mxfp8(const Accel *a) { return a->fp8_mxfp8; }
bool accel_fp8_blockwise(const Accel *a) { return a->fp8_blockwise; }

bool accel_has_fp8_attention(const Accel *a, bool backward)
{
    return accel_has_fused_attention(a) && (backward ? a->attn_fp8_bwd : a->attn_fp8_fwd) > 0;
}

/* FlashAttention-style kernel: Q K^T, softmax and P V in one pass over
 * tiles held on chip.  Its FLOPs are the two products' (causal: half of
 * them, the masked tiles are skipped); backward recomputes S and runs five
 * products, 2.5 x the forward's (Dao 2023, section 4).  The efficiency
 * grows with the keys each query sees (the tile loop is longer) and with the
 * head dimension (FA2/FA3 figures: head dim 64 runs at ~85 % of head dim
 * 128's rate), and the kernel cannot beat streaming Q, K, V, O (and dO, dQ,
 * dK, dV backward) through HBM once.  In FP8 the kernel runs at the
 * preset's measured FP8 fraction of the FP8 peak (none: no FP8 kernel). */
double accel_attention_time(const Accel *a, AccelDtype dt, double batch_heads, double seq, double head_dim,
                            bool causal, bool backward)
{
    return accel_attention_time_keys(a, dt, batch_heads, seq, causal ? seq / 2 : seq, head_dim, backward);
}

double accel_attention_time_keys(const Accel *a, AccelDtype dt, double batch_heads, double seq, double keys,
                                 double head_dim, bool backward)
{
    if (!accel_has_dtype(a, dt) || !accel_has_fused_attention(a) ||
        (dt == ACCEL_FP8 && !accel_has_fp8_attention(a, backward)))
        return INFINITY;
    if (!(batch_heads > 0 && seq > 0 && head_dim > 0 && keys > 0))
        return 0;
    double flops = 4 * batch_heads * seq * keys * head_dim * (backward ? 2.5 : 1);
    double plateau = dt == ACCEL_FP8 ? (backward ? a->attn_fp8_bwd : a->attn_fp8_fwd)
                                     : (backward ? a->attn_bwd : a->attn_fwd);
    double eff = plateau * keys / (keys + a->attn_half_seq);
    eff *= pow(fmin(head_dim, 128) / 128, 0.25);
    double t = flops / (a->peak[dt] * eff);
    double e = accel_dtype_bytes(dt);
    double bytes = batch_heads * seq * head_dim * e * (backward ? 8 : 4);
    return fmax(t, accel_mem_time(a, bytes));
}

double accel_attention_v1_slowdown(const Accel *a, bool backward)
{
    double v1 = backward ? a->attn_v1_bwd : a->attn_v1_fwd;
    return v1 > 0 ? (backward ? a->attn_bwd : a->attn_fwd) / v1 : 0;
}

double accel_attention_v2_slowdown(const Accel *a, bool backward)
{
    double v2 = backward ? a->attn_v2_bwd : a->attn_v2_fwd;
    return v2 > 0 ? (backward ? a->attn_bwd : a->attn_fwd) / v2 : 1;
}

/* ---------------- parameters by name, overlays ---------------- */

/* The efficiency parameters calibration may fit, as dotted keys of the
 * preset's JSON; each names a double of Accel. */
static const struct {
    const char *key;
    size_t off;
    double lo, hi, prior_sd;
} params[] = {
    {"efficiency.gemm_eff_max.fp32", offsetof(Accel, eff_max[ACCEL_FP32]), 0.01, 1, 0.3},
    {"efficiency.gemm_eff_max.tf32", offsetof(Accel, eff_max[ACCEL_TF32]), 0.01, 1, 0.3},
    {"efficiency.gemm_eff_max.fp16", offsetof(Accel, eff_max[ACCEL_FP16]), 0.01, 1, 0.3},
    {"efficiency.gemm_eff_max.bf16", offsetof(Accel, eff_max[ACCEL_BF16]), 0.01, 1, 0.3},
    {"efficiency.gemm_eff_max.fp8", offsetof(Accel, eff_max[ACCEL_FP8]), 0.01, 1, 0.3},
    {"efficiency.gemm_half_flops", offsetof(Accel, half_flops), 0, 1e15, 0.7},
    {"efficiency.mem_eff", offsetof(Accel, mem_eff), 0.01, 1, 0.3},
    {"efficiency.fused_attention.fwd", offsetof(Accel, attn_fwd), 0.01, 1, 0.3},
    {"efficiency.fused_attention.bwd", offsetof(Accel, attn_bwd), 0.01, 1, 0.3},
    {"efficiency.fused_attention.v1_fwd", offsetof(Accel, attn_v1_fwd), 0.01, 1, 0.3},
    {"efficiency.fused_attention.v1_bwd", offsetof(Accel, attn_v1_bwd), 0.01, 1, 0.3},
};

int accel_param_count(void) { return (int)G_N_ELEMENTS(params); }
const char *accel_param_key(int i) { return params[i].key; }

static double *param_slot(Accel *a, int i) { return (double *)(void *)((char *)a + params[i].off); }

/* An efficiency of a dtype the chip lacks, or of a fused kernel it has not,
 * stays 0: there is nothing to fit. */
double accel_param_get(const Accel *a, int i)
{
    if (i < ACCEL_NUM_DTYPES && a->peak[i] <= 0)
        return 0;
    return *param_slot((Accel *)a, i);
}

bool accel_param_set(Accel *a, int i, double v)
{
    if (!(v >= params[i].lo && v <= params[i].hi) || accel_param_get(a, i) <= 0)
        return false;
    *param_slot(a, i) = v;
    return true;
}

void accel_param_bounds(int i, double *lo, double *hi, double *prior_sd)
{
    *lo = params[i].lo;
    *hi = params[i].hi;
    *prior_sd = params[i].prior_sd;
}

Accel *accel_copy(const Accel *a)
{
    Accel *c = g_memdup2(a, sizeof *a);
    c->name = g_strdup(a->name);
    return c;
}

/* {"overlay": ..., "base": PRESET, "parameters": {KEY: VALUE or {"value"}}}:
 * the base description with the values given (what calibrate writes). */
static Accel *from_overlay(const SimJsonDoc *doc, GError **err)
{
    const cJSON *r = sim_json_root(doc), *base = cJSON_GetObjectItemCaseSensitive(r, "base"),
                *ps = cJSON_GetObjectItemCaseSensitive(r, "parameters");
    if (!cJSON_IsString(base) || !cJSON_IsObject(ps)) {
        sim_json_error(doc, cJSON_IsString(base) ? (ps ? ps : r) : (base ? base : r), err,
                       "an accelerator overlay needs \"base\": PRESET and \"parameters\": {KEY: VALUE}");
        return NULL;
    }
    if (!sim_json_not_stdin(doc, base, err))
        return NULL;
    GError *e = NULL;
    SimJsonDoc *bd = sim_data_load(ACCEL_PRESETS, "accelerator", base->valuestring, &e);
    Accel *a = bd ? from_doc(bd, &e) : NULL; /* a full description: overlays do not stack */
    sim_json_free(bd);
    if (!a) {
        sim_json_error(doc, base, err, "%s", e->message);
        g_error_free(e);
        return NULL;
    }
    if (!read_band(doc, cJSON_GetObjectItemCaseSensitive(r, "calibration"), a, err)) {
        accel_free(a);
        return NULL;
    }
    for (const cJSON *p = ps->child; p; p = p->next) {
        int i = 0;
        while (i < accel_param_count() && strcmp(params[i].key, p->string) != 0)
            i++;
        const cJSON *v = cJSON_IsObject(p) ? cJSON_GetObjectItemCaseSensitive(p, "value") : p;
        if (i == accel_param_count() || !cJSON_IsNumber(v) || !accel_param_set(a, i, v->valuedouble)) {
            sim_json_error(doc, v ? v : p, err,
                           i == accel_param_count() ? "unknown accelerator parameter \"%s\""
                                                    : "\"%s\" must be a number in its bounds, on a chip that has it",
                           SIM_ECHO(p->string));
            accel_free(a);
            return NULL;
        }
    }
    return a;
}

bool accel_band_transferred(const Accel *a) { return a->band_transferred; }

bool accel_band(const Accel *a, double *r10, double *r90)
{
    *r10 = a->band[0];
    *r90 = a->band[1];
    return a->band_given;
}
