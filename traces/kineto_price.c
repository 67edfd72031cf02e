/* A profile's operators priced by the accelerator model: the ATen
 * signatures of the GEMM family, the grouped and scaled GEMMs and the SDPA
 * backends, read from the recorded shapes (kineto_price.h). */
#include "kineto_price.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static bool has(const char *s, const char *sub) { return strstr(s, sub) != NULL; }

static const char *op_name(const cJSON *op)
{
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(op, "name");
    return cJSON_IsString(n) ? n->valuestring : "";
}

static const cJSON *arg_list(const cJSON *op, const char *key)
{
    return cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(op, "args"), key);
}

/* Input Dims[i] as up to 4 positive whole sizes; its rank, 0 if it is none
 * (a fractional size is no tensor's: 1e-300 went into --gemm-table). */
static int dims(const cJSON *op, int i, double d[4])
{
    const cJSON *t = cJSON_GetArrayItem(arg_list(op, "Input Dims"), i), *x;
    int n = 0;
    if (!cJSON_IsArray(t) || cJSON_GetArraySize(t) > 4)
        return 0;
    cJSON_ArrayForEach(x, t)
    {
        if (!cJSON_IsNumber(x) || !(x->valuedouble >= 1) || x->valuedouble > 1e9 || x->valuedouble != floor(x->valuedouble))
            return 0;
        d[n++] = x->valuedouble;
    }
    return n;
}

static const char *input_type(const cJSON *op, int i)
{
    const cJSON *t = cJSON_GetArrayItem(arg_list(op, "Input type"), i);
    return cJSON_IsString(t) ? t->valuestring : "";
}

/* Concrete Inputs[i]: a scalar argument as the profiler printed it ("True",
 * "4096", "" for none). */
static const char *concrete(const cJSON *op, int i)
{
    const cJSON *t = cJSON_GetArrayItem(arg_list(op, "Concrete Inputs"), i);
    return cJSON_IsString(t) ? t->valuestring : "";
}

static bool dtype_of(const char *type, const char *kernel, AccelDtype *dt)
{
    if (!strcmp(type, "float")) {
        *dt = has(kernel, "tf32") || has(kernel, "s1688") || has(kernel, "s16816") ? ACCEL_TF32 : ACCEL_FP32;
        return true;
    }
    if (!strcmp(type, "c10::BFloat16"))
        *dt = ACCEL_BF16;
    else if (!strcmp(type, "c10::Half"))
        *dt = ACCEL_FP16;
    else if (has(type, "Float8"))
        *dt = ACCEL_FP8;
    else
        return false;
    return true;
}

static const char *const gemm_ops[] = {
    "aten::mm",         "aten::addmm",         "aten::_addmm_activation", "aten::bmm",
    "aten::baddbmm",    "aten::matmul",        "aten::linear",            "aten::_scaled_mm",
    "aten::_scaled_mm_v2", "aten::_grouped_mm", "aten::_scaled_grouped_mm",
};

/* The SDPA backends' operators: where the query is, its layout, where
 * is_causal (or the efficient kernel's custom_mask_type) and the flash
 * sliding window are among the arguments (ATen's native_functions.yaml). */
typedef struct {
    const char *name;
    bool bshd;     /* query [B, S, H, D]; else [B, H, S, D] */
    bool backward; /* the query is argument 1 (0 is the output's gradient) */
    int causal;    /* index of is_causal, or of custom_mask_type where mask_type */
    bool mask_type;
    int window; /* index of window_size_left; -1: none */
    bool fa2;   /* a FlashAttention-2-generation kernel */
} AttnOp;

static const AttnOp attn_ops[] = {
    {"aten::_scaled_dot_product_flash_attention", false, false, 4, false, -1, true},
    {"aten::_scaled_dot_product_flash_attention_backward", false, true, 11, false, -1, true},
    {"aten::_flash_attention_forward", true, false, 8, false, 11, true},
    {"aten::_flash_attention_backward", true, true, 11, false, 15, true},
    {"aten::_scaled_dot_product_efficient_attention", false, false, 6, false, -1, true},
    {"aten::_scaled_dot_product_efficient_attention_backward", false, true, 11, false, -1, true},
    {"aten::_efficient_attention_forward", true, false, 9, true, -1, true},
    {"aten::_efficient_attention_backward", true, true, 14, true, -1, true},
    {"aten::_scaled_dot_product_cudnn_attention", false, false, 6, false, -1, false},
    {"aten::_scaled_dot_product_cudnn_attention_backward", false, true, 14, false, -1, false},
    {"aten::_cudnn_attention_forward", false, false, 10, false, -1, false},
    {"aten::_cudnn_attention_backward", false, true, 14, false, -1, false},
};

static const AttnOp *attn_op(const char *name)
{
    for (size_t i = 0; i < sizeof attn_ops / sizeof *attn_ops; i++)
        if (!strcmp(name, attn_ops[i].name))
            return &attn_ops[i];
    return NULL;
}

KinetoOpKind kineto_op_kind(const cJSON *op)
{
    const char *n = op_name(op);
    for (size_t i = 0; i < sizeof gemm_ops / sizeof *gemm_ops; i++)
        if (!strcmp(n, gemm_ops[i]))
            return KINETO_OP_GEMM;
    return attn_op(n) ? KINETO_OP_ATTENTION : KINETO_OP_OTHER;
}

/* _grouped_mm (offsets argument 2) and _scaled_grouped_mm (4): the groups
 * and each group's shape, as if the offsets split evenly. */
static bool grouped_shape(const cJSON *op, const double *a, int ra, const double *b, int rb, KinetoGemm *g)
{
    double offs[4];
    int ro = dims(op, has(op_name(op), "_scaled_") ? 4 : 2, offs);
    g->grouped = true;
    if (ra == 2 && rb == 3) { /* rows [M, K] over experts [E, K, N] */
        g->batch = b[0], g->m = a[0] / b[0], g->k = a[1], g->n = b[2];
        return b[1] == a[1];
    }
    if (ra == 2 && rb == 2 && ro == 1) { /* [M, K] x [K, N], K split: the weight gradient */
        g->batch = offs[0], g->m = a[0], g->k = a[1] / offs[0], g->n = b[1];
        return b[0] == a[1];
    }
    if (ra == 3 && rb == 2) { /* [G, M, K] x [K, N], N split */
        g->batch = a[0], g->m = a[1], g->k = a[2], g->n = b[1] / a[0];
        return b[0] == a[2];
    }
    if (ra == 3 && rb == 3) {
        g->batch = a[0], g->m = a[1], g->k = a[2], g->n = b[2];
        return b[0] == a[0] && b[1] == a[2];
    }
    return false;
}

/* The operands' elements: no GPU holds a tensor of more than 2^40 (4 TiB of
 * fp32), so a larger one is no GEMM that ran, as a bad size is not (review 9:
 * a [1e9, 1e6] x [1e6, 1e6] bmm was priced at 3.3e12 s) */
#define KINETO_MAX_ELEMS 1099511627776.0

static bool shape_sane(const KinetoGemm *g)
{
    double b = g->batch;
    return b * g->m * g->k <= KINETO_MAX_ELEMS && b * g->k * g->n <= KINETO_MAX_ELEMS &&
           b * g->m * g->n <= KINETO_MAX_ELEMS;
}

static bool shape_of(const cJSON *op, const char *kernel, KinetoGemm *g);

bool kineto_gemm_shape(const cJSON *op, const char *kernel, KinetoGemm *g)
{
    return shape_of(op, kernel, g) && shape_sane(g);
}

static bool shape_of(const cJSON *op, const char *kernel, KinetoGemm *g)
{
    const char *n = op_name(op);
    if (kineto_op_kind(op) != KINETO_OP_GEMM)
        return false;
    double a[4], b[4];
    int ia = !strcmp(n, "aten::addmm") || !strcmp(n, "aten::baddbmm") || !strcmp(n, "aten::_addmm_activation") ? 1 : 0;
    int ra = dims(op, ia, a), rb = dims(op, ia + 1, b);
    if (ra < 2 || rb < 2 || !dtype_of(input_type(op, ia), kernel, &g->dt))
        return false;
    g->batch = 1;
    g->grouped = false;
    if (has(n, "grouped_mm"))
        return grouped_shape(op, a, ra, b, rb, g);
    g->k = a[ra - 1];
    g->m = 1;
    if (!strcmp(n, "aten::linear")) { /* x [..., K] . W [N, K]^T */
        for (int i = 0; i < ra - 1; i++)
            g->m *= a[i];
        g->n = b[0];
        return rb == 2 && b[1] == g->k;
    }
    if (ra == 3 && rb == 3) { /* [B, M, K] x [B, K, N] */
        g->batch = a[0];
        g->m = a[1];
        g->n = b[2];
        return b[1] == g->k && b[0] == a[0];
    }
    if (rb != 2 || b[0] != g->k)
        return false;
    for (int i = 0; i < ra - 1; i++)
        g->m *= a[i];
    g->n = b[1];
    return true;
}

double kineto_gemm_time(const Accel *acc, const KinetoGemm *g)
{
    return g->batch > 1 ? accel_bgemm_time(acc, g->dt, g->batch, g->m, g->n, g->k)
                        : accel_gemm_time(acc, g->dt, g->m, g->n, g->k);
}

/* The mean number of keys a query meets: all of them, or causal (PyTorch's
 * top-left alignment: query i sees min(i + 1, sk)), narrowed by a sliding
 * window of w keys (a causal window: w - w^2 / (2 sq), accel.h). */
static double mean_keys(double sq, double sk, bool causal, double w)
{
    if (!causal)
        return sk;
    double keys = sq <= sk ? sq / 2 : sk - sk * sk / (2 * sq);
    if (w > 0 && w < sq && w < sk)
        keys = fmin(keys, w - w * w / (2 * sq));
    return keys;
}

double kineto_attention_time(const cJSON *op, const Accel *acc)
{
    const AttnOp *a = attn_op(op_name(op));
    if (!a)
        return NAN;
    int qi = a->backward ? 1 : 0;
    double q[4], k[4];
    AccelDtype dt;
    if (dims(op, qi, q) != 4 || dims(op, qi + 1, k) != 4 || !dtype_of(input_type(op, qi), "", &dt))
        return NAN;
    double heads = a->bshd ? q[2] : q[1], sq = a->bshd ? q[1] : q[2], sk = a->bshd ? k[1] : k[2];
    const char *c = concrete(op, a->causal);
    bool causal = a->mask_type ? (!strcmp(c, "1") || !strcmp(c, "2")) : !strcmp(c, "True");
    char *end = NULL;
    const char *w = a->window >= 0 ? concrete(op, a->window) : "";
    double win = strtod(w, &end);
    if (end == w || *end)
        win = -1;
    double t = accel_attention_time_keys(acc, dt, q[0] * heads, sq, mean_keys(sq, sk, causal, win), q[3], a->backward);
    if (a->fa2)
        t *= accel_attention_v2_slowdown(acc, a->backward);
    return isfinite(t) ? t : NAN;
}

double kineto_memory_time(const cJSON *op, const Accel *acc)
{
    int n = cJSON_GetArraySize(arg_list(op, "Input Dims"));
    double bytes = 0, largest = 0;
    for (int i = 0; i < n && i < 16; i++) {
        double d[4];
        int r = dims(op, i, d);
        if (r == 0)
            continue;
        const char *t = input_type(op, i);
        double es = !strcmp(t, "double") || has(t, "long") ? 8
                    : has(t, "Half") || has(t, "BFloat16")  ? 2
                    : !strcmp(t, "bool") || has(t, "Float8") ? 1
                                                             : 4;
        double b = es;
        for (int j = 0; j < r; j++)
            b *= d[j];
        bytes += b;
        largest = b > largest ? b : largest;
    }
    return bytes > 0 ? accel_mem_time(acc, bytes + largest) : NAN;
}
