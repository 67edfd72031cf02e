/* Kineto traces: kernels, their launching operators and shapes, the classes
 * (kineto.h), and the comparison with the accelerator model. */
#include "kineto.h"

#include "sim_file.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef enum { K_GEMM, K_ATTENTION, K_ELEMENTWISE, K_CONV, K_OPTIMIZER, K_COMM, K_OTHER, K_NUM } KClass;
static const char *const class_names[] = {"gemm", "attention", "elementwise", "convolution", "optimizer",
                                          "communication", "other"};

typedef struct {
    double ts, dur;
    long tid, pid;
    const cJSON *ev; /* its args hold Input Dims, Input type */
} Op;

typedef struct {
    char *name;
    double dur; /* s */
    double ts;
    KClass cls;
    int op; /* index in ops, -1 */
} Kernel;

struct KinetoProfile {
    char *name;
    cJSON *root;
    GArray *ops;     /* Op, sorted by (pid, tid, ts) */
    GArray *kernels; /* Kernel */
};

static bool has(const char *s, const char *sub) { return strstr(s, sub) != NULL; }

static KClass classify(const char *name)
{
    char *s = g_ascii_strdown(name, -1);
    KClass c = K_OTHER;
    char *fb = strstr(s, "fbgemm");
    bool gemm = has(s, "gemm") && !(fb && !strstr(fb + 6, "gemm"));
    if (has(s, "nccl") || has(s, "rccl"))
        c = K_COMM;
    else if (has(s, "multi_tensor_apply") || has(s, "adam") || (has(s, "lamb") && !has(s, "lambda")) || has(s, "sgd_") || has(s, "fused_sgd"))
        c = K_OPTIMIZER;
    else if (has(s, "flash") || has(s, "fmha") || has(s, "attention"))
        c = K_ATTENTION;
    else if (has(s, "conv") || has(s, "fprop") || has(s, "dgrad") || has(s, "wgrad") || has(s, "cudnn"))
        c = K_CONV;
    else if (gemm || has(s, "gemv") || has(s, "cutlass") || has(s, "xmma") || has(s, "cublas") || has(s, "splitkreduce"))
        c = K_GEMM;
    else if (has(s, "elementwise") || has(s, "vectorized") || has(s, "unrolled") || has(s, "reduce") ||
             has(s, "norm") || has(s, "softmax") || has(s, "dropout") || has(s, "copy") || has(s, "fill") ||
             has(s, "cat"))
        c = K_ELEMENTWISE;
    g_free(s);
    return c;
}

static double num(const cJSON *o, const char *k, double dflt)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsNumber(v) && isfinite(v->valuedouble) ? v->valuedouble : dflt;
}

/* An id (pid, tid, correlation, External id) as an int; dflt outside int's range. */
static long ival(const cJSON *o, const char *k, long dflt)
{
    double v = num(o, k, NAN);
    return v >= -2147483647.0 && v <= 2147483647.0 ? (long)v : dflt;
}

static int op_cmp(const void *a, const void *b)
{
    const Op *x = a, *y = b;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    if (x->tid != y->tid)
        return x->tid < y->tid ? -1 : 1;
    return x->ts < y->ts ? -1 : x->ts > y->ts ? 1 : 0;
}

/* The innermost operator of (pid, tid) enclosing time t: the latest start
 * at or before t whose span covers t (bounded search back). */
static int enclosing(const GArray *ops, long pid, long tid, double t)
{
    long lo = 0, hi = (long)ops->len; /* first index with key > (pid, tid, t) */
    Op key = {.ts = t, .tid = tid, .pid = pid};
    while (lo < hi) {
        long mid = (lo + hi) / 2;
        if (op_cmp(&g_array_index(ops, Op, mid), &key) <= 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (long i = lo - 1, n = 0; i >= 0 && n < 4096; i--, n++) {
        const Op *o = &g_array_index(ops, Op, i);
        if (o->pid != pid || o->tid != tid)
            break;
        if (o->ts + o->dur >= t)
            return (int)i;
    }
    return -1;
}

static bool bad(GError **err, const char *name, const char *what)
{
    g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "%s: %s", name, what);
    return false;
}

bool kineto_looks_like(const char *text)
{
    const char *p = text;
    while (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t')
        p++;
    return *p == '{' && strstr(text, "\"traceEvents\"") != NULL;
}

static bool collect(KinetoProfile *p, const cJSON *evs, GError **err)
{
    GHashTable *launch = g_hash_table_new(g_direct_hash, g_direct_equal); /* correlation -> runtime event */
    GHashTable *by_ext = g_hash_table_new(g_direct_hash, g_direct_equal); /* External id -> op index + 1 */
    const cJSON *e;
    cJSON_ArrayForEach(e, evs)
    {
        const cJSON *cat = cJSON_GetObjectItemCaseSensitive(e, "cat");
        if (!cJSON_IsString(cat))
            continue;
        const cJSON *args = cJSON_GetObjectItemCaseSensitive(e, "args");
        if (!strcmp(cat->valuestring, "cpu_op")) {
            Op o = {.ts = num(e, "ts", NAN), .dur = num(e, "dur", 0), .tid = ival(e, "tid", 0),
                    .pid = ival(e, "pid", 0), .ev = e};
            if (isfinite(o.ts))
                g_array_append_val(p->ops, o);
        } else if (!strcmp(cat->valuestring, "cuda_runtime") || !strcmp(cat->valuestring, "cuda_driver")) {
            long c = ival(args, "correlation", -1);
            if (c >= 0)
                g_hash_table_insert(launch, GINT_TO_POINTER(c), (gpointer)e);
        }
    }
    g_array_sort(p->ops, op_cmp);
    for (guint i = 0; i < p->ops->len; i++) {
        long x = ival(cJSON_GetObjectItemCaseSensitive(g_array_index(p->ops, Op, i).ev, "args"), "External id", -1);
        if (x >= 0 && !g_hash_table_contains(by_ext, GINT_TO_POINTER(x)))
            g_hash_table_insert(by_ext, GINT_TO_POINTER(x), GINT_TO_POINTER(i + 1));
    }
    bool ok = true;
    int idx = 0;
    cJSON_ArrayForEach(e, evs)
    {
        idx++;
        const cJSON *cat = cJSON_GetObjectItemCaseSensitive(e, "cat");
        if (!cJSON_IsString(cat) || g_ascii_strcasecmp(cat->valuestring, "kernel") != 0)
            continue;
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(e, "name");
        double dur = num(e, "dur", NAN), ts = num(e, "ts", NAN);
        if (!cJSON_IsString(name) || !isfinite(dur) || dur < 0 || !isfinite(ts)) {
            char msg[96];
            g_snprintf(msg, sizeof msg, "traceEvents[%d]: a kernel without a name, ts or a dur >= 0", idx - 1);
            ok = bad(err, p->name, msg);
            break;
        }
        const cJSON *args = cJSON_GetObjectItemCaseSensitive(e, "args");
        Kernel k = {.name = name->valuestring, .dur = dur * 1e-6, .ts = ts * 1e-6, .cls = classify(name->valuestring), .op = -1};
        const cJSON *rt = g_hash_table_lookup(launch, GINT_TO_POINTER(ival(args, "correlation", -1)));
        if (rt)
            k.op = enclosing(p->ops, ival(rt, "pid", 0), ival(rt, "tid", 0), num(rt, "ts", 0));
        if (k.op < 0)
            k.op = GPOINTER_TO_INT(g_hash_table_lookup(by_ext, GINT_TO_POINTER(ival(args, "External id", -1)))) - 1;
        g_array_append_val(p->kernels, k);
    }
    if (ok && p->kernels->len == 0)
        ok = bad(err, p->name, "no GPU kernels (cat \"kernel\") in traceEvents: not a GPU profile");
    g_hash_table_destroy(launch);
    g_hash_table_destroy(by_ext);
    return ok;
}

KinetoProfile *kineto_parse(const char *name, const char *text, size_t len, GError **err)
{
    KinetoProfile *p = g_new0(KinetoProfile, 1);
    p->name = g_strdup(name);
    p->ops = g_array_new(FALSE, FALSE, sizeof(Op));
    p->kernels = g_array_new(FALSE, FALSE, sizeof(Kernel));
    p->root = cJSON_ParseWithLength(text, len);
    const cJSON *evs = cJSON_GetObjectItemCaseSensitive(p->root, "traceEvents");
    bool ok;
    if (!p->root)
        ok = bad(err, name, "invalid JSON: not a PyTorch profiler trace");
    else if (!cJSON_IsArray(evs))
        ok = bad(err, name, "no \"traceEvents\" array: not a PyTorch profiler (Kineto) trace");
    else
        ok = collect(p, evs, err);
    if (!ok) {
        kineto_free(p);
        return NULL;
    }
    return p;
}

KinetoProfile *kineto_load(const char *path, GError **err)
{
    size_t len = 0;
    char *text = sim_file_read(path, SIM_FILE_TRACE_MAX, "profile", &len, err);
    if (!text)
        return NULL;
    KinetoProfile *p = kineto_parse(path, text, len, err);
    g_free(text);
    return p;
}

void kineto_free(KinetoProfile *p)
{
    if (!p)
        return;
    cJSON_Delete(p->root);
    g_array_free(p->ops, TRUE);
    g_array_free(p->kernels, TRUE);
    g_free(p->name);
    g_free(p);
}

/* Input Dims[i] as up to 4 positive sizes; its rank, 0 if it is none. */
static int dims(const cJSON *op, int i, double d[4])
{
    const cJSON *all = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(op, "args"), "Input Dims");
    const cJSON *t = cJSON_GetArrayItem(all, i), *x;
    int n = 0;
    if (!cJSON_IsArray(t) || cJSON_GetArraySize(t) > 4)
        return 0;
    cJSON_ArrayForEach(x, t)
    {
        if (!cJSON_IsNumber(x) || !(x->valuedouble > 0) || x->valuedouble > 1e9)
            return 0;
        d[n++] = x->valuedouble;
    }
    return n;
}

static const char *input_type(const cJSON *op, int i)
{
    const cJSON *t = cJSON_GetArrayItem(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(op, "args"), "Input type"), i);
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

typedef struct {
    double m, n, k, batch;
    AccelDtype dt;
} Gemm;

/* A GEMM operator's shape from its inputs (the first matrix's index a). */
static bool gemm_shape(const Op *o, const char *kernel, Gemm *g)
{
    const cJSON *nm = cJSON_GetObjectItemCaseSensitive(o->ev, "name");
    const char *n = cJSON_IsString(nm) ? nm->valuestring : "";
    double a[4], b[4];
    int ia = !strcmp(n, "aten::addmm") || !strcmp(n, "aten::baddbmm") ? 1 : 0;
    bool linear = !strcmp(n, "aten::linear");
    if (!(linear || !strcmp(n, "aten::mm") || !strcmp(n, "aten::addmm") || !strcmp(n, "aten::bmm") ||
          !strcmp(n, "aten::baddbmm") || !strcmp(n, "aten::matmul")))
        return false;
    int ra = dims(o->ev, ia, a), rb = dims(o->ev, ia + 1, b);
    if (ra < 2 || rb < 2 || !dtype_of(input_type(o->ev, ia), kernel, &g->dt))
        return false;
    g->batch = 1;
    g->k = a[ra - 1];
    g->m = 1;
    if (linear) { /* x [..., K] . W [N, K]^T */
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

static double attention_time(const Op *o, const Accel *acc)
{
    const cJSON *nm = cJSON_GetObjectItemCaseSensitive(o->ev, "name");
    const char *n = cJSON_IsString(nm) ? nm->valuestring : "";
    if (!has(n, "_scaled_dot_product_flash_attention") && !has(n, "_scaled_dot_product_efficient_attention"))
        return NAN;
    double q[4];
    AccelDtype dt;
    int bi = has(n, "backward") ? 1 : 0; /* the backward's first input is the gradient, of q's shape */
    if (dims(o->ev, bi, q) != 4 || !dtype_of(input_type(o->ev, bi), "", &dt))
        return NAN;
    double t = accel_attention_time(acc, dt, q[0] * q[1], q[2], q[3], false, bi == 1);
    return isfinite(t) ? t : NAN;
}

static double elementwise_time(const Op *o, const Accel *acc)
{
    const cJSON *all = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(o->ev, "args"), "Input Dims");
    int n = cJSON_GetArraySize(all);
    double bytes = 0, largest = 0;
    for (int i = 0; i < n && i < 16; i++) {
        double d[4];
        int r = dims(o->ev, i, d);
        if (r == 0)
            continue;
        const char *t = input_type(o->ev, i);
        double es = !strcmp(t, "double") || !strcmp(t, "long") ? 8 : has(t, "Half") || has(t, "BFloat16") ? 2 : !strcmp(t, "bool") ? 1 : 4;
        double b = es;
        for (int j = 0; j < r; j++)
            b *= d[j];
        bytes += b;
        largest = b > largest ? b : largest;
    }
    return bytes > 0 ? accel_mem_time(acc, bytes + largest) : NAN;
}

cJSON *kineto_compare(const KinetoProfile *p, const Accel *acc)
{
    double meas[K_NUM] = {0}, pred[K_NUM] = {0}, cov[K_NUM] = {0}, total = 0, t0 = INFINITY, t1 = -INFINITY;
    int cnt[K_NUM] = {0};
    cJSON *gemms = cJSON_CreateArray();
    /* per operator and class: the sum of its kernels, one prediction */
    int nops = (int)p->ops->len;
    double *op_meas = g_new0(double, (size_t)nops * K_NUM + 1);
    const char **op_kernel = g_new0(const char *, (size_t)nops + 1);
    for (guint i = 0; i < p->kernels->len; i++) {
        const Kernel *k = &g_array_index(p->kernels, Kernel, i);
        meas[k->cls] += k->dur;
        cnt[k->cls]++;
        total += k->dur;
        t0 = k->ts < t0 ? k->ts : t0;
        t1 = k->ts + k->dur > t1 ? k->ts + k->dur : t1;
        if (k->op >= 0) {
            op_meas[(size_t)k->op * K_NUM + k->cls] += k->dur;
            if (!op_kernel[k->op] && k->cls == K_GEMM)
                op_kernel[k->op] = k->name;
        }
    }
    for (int o = 0; o < nops; o++) {
        const Op *op = &g_array_index(p->ops, Op, o);
        for (int c = 0; c < K_NUM; c++) {
            double m = op_meas[(size_t)o * K_NUM + c], t = NAN;
            if (m <= 0)
                continue;
            Gemm g;
            if (c == K_GEMM && gemm_shape(op, op_kernel[o] ? op_kernel[o] : "", &g) && accel_has_dtype(acc, g.dt)) {
                t = g.batch > 1 ? accel_bgemm_time(acc, g.dt, g.batch, g.m, g.n, g.k) : accel_gemm_time(acc, g.dt, g.m, g.n, g.k);
                cJSON *r = cJSON_CreateObject();
                cJSON_AddStringToObject(r, "op", cJSON_GetObjectItemCaseSensitive(op->ev, "name")->valuestring);
                cJSON_AddNumberToObject(r, "m", g.m);
                cJSON_AddNumberToObject(r, "n", g.n);
                cJSON_AddNumberToObject(r, "k", g.k);
                cJSON_AddNumberToObject(r, "batch", g.batch);
                cJSON_AddStringToObject(r, "dtype", accel_dtype_name(g.dt));
                cJSON_AddNumberToObject(r, "measured_s", m);
                cJSON_AddNumberToObject(r, "predicted_s", t);
                cJSON_AddItemToArray(gemms, r);
            } else if (c == K_ATTENTION)
                t = attention_time(op, acc);
            else if (c == K_ELEMENTWISE)
                t = elementwise_time(op, acc);
            if (isfinite(t)) {
                pred[c] += t;
                cov[c] += m;
            }
        }
    }
    g_free(op_meas);
    g_free(op_kernel);
    cJSON *out = cJSON_CreateObject(), *cls = cJSON_CreateArray();
    cJSON_AddStringToObject(out, "profile", p->name);
    cJSON_AddStringToObject(out, "accelerator", accel_name(acc));
    cJSON_AddNumberToObject(out, "kernels", p->kernels->len);
    cJSON_AddNumberToObject(out, "kernel_time_s", total);
    cJSON_AddNumberToObject(out, "span_s", t1 - t0);
    for (int c = 0; c < K_NUM; c++) {
        cJSON *r = cJSON_CreateObject();
        cJSON_AddStringToObject(r, "class", class_names[c]);
        cJSON_AddNumberToObject(r, "kernels", cnt[c]);
        cJSON_AddNumberToObject(r, "measured_s", meas[c]);
        cJSON_AddNumberToObject(r, "predicted_s", pred[c]);
        cJSON_AddNumberToObject(r, "measured_covered_s", cov[c]);
        if (cov[c] > 0)
            cJSON_AddNumberToObject(r, "ratio", pred[c] / cov[c]);
        else
            cJSON_AddNullToObject(r, "ratio");
        cJSON_AddItemToArray(cls, r);
    }
    cJSON_AddItemToObject(out, "classes", cls);
    cJSON_AddItemToObject(out, "gemms", gemms);
    return out;
}

char *kineto_gemm_table(const KinetoProfile *p)
{
    /* the comparison's rows, on any accelerator: shapes and times do not depend on it */
    GString *s = g_string_new(NULL);
    int nops = (int)p->ops->len;
    double *m = g_new0(double, (size_t)nops + 1);
    const char **kn = g_new0(const char *, (size_t)nops + 1);
    for (guint i = 0; i < p->kernels->len; i++) {
        const Kernel *k = &g_array_index(p->kernels, Kernel, i);
        if (k->op >= 0 && k->cls == K_GEMM) {
            m[k->op] += k->dur;
            if (!kn[k->op])
                kn[k->op] = k->name;
        }
    }
    int rows = 0;
    for (int o = 0; o < nops; o++) {
        Gemm g;
        if (m[o] > 0 && gemm_shape(&g_array_index(p->ops, Op, o), kn[o], &g)) {
            if (!rows++)
                g_string_append_printf(s, "# GEMM operators of the PyTorch profile %s\nm,n,k,dtype,seconds\n", p->name);
            g_string_append_printf(s, "%.17g,%.17g,%.17g,%s,%.9g\n", g.m * g.batch, g.n, g.k, accel_dtype_name(g.dt), m[o]);
        }
    }
    g_free(m);
    g_free(kn);
    return g_string_free(s, rows == 0);
}
