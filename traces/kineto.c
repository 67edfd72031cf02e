/* Kineto traces: kernels, their launching operators and shapes, the classes
 * (kineto.h), and the comparison with the accelerator model. */
#include "kineto.h"

#include "kineto_price.h"
#include "sim_file.h"
#include "sim_json.h"
#include "trace_text.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef enum { K_GEMM, K_ATTENTION, K_ELEMENTWISE, K_INDEXING, K_CONV, K_OPTIMIZER, K_COMM, K_OTHER, K_NUM } KClass;
static const char *const class_names[] = {"gemm",      "attention", "elementwise",   "indexing",
                                          "convolution", "optimizer", "communication", "other"};

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
    else if (has(s, "flash") || has(s, "fmha") || has(s, "attention") || has(s, "sdpa") || has(s, "dot_do_o") ||
             has(s, "convert_dq"))
        c = K_ATTENTION; /* cuDNN's: cudnn_generated_fort_native_sdpa_..., its backward's dot_do_o, convert_dq */
    else if (has(s, "conv") || has(s, "fprop") || has(s, "dgrad") || has(s, "wgrad") || has(s, "cudnn"))
        c = K_CONV;
    else if (gemm || has(s, "nvjet") || has(s, "gemv") || has(s, "cutlass") || has(s, "xmma") || has(s, "cublas") ||
             has(s, "splitkreduce") || (has(s, "triton_tem_") && has(s, "mm")))
        c = K_GEMM; /* cuBLAS's Hopper/Blackwell GEMMs are nvjet_sm90_tst_..., nvjet_sm100_... */
    else if (has(s, "index") || has(s, "gather") || has(s, "scatter") || has(s, "sort") || has(s, "topk") ||
             has(s, "histogram"))
        c = K_INDEXING;
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

/* Whether operator o is ATen's (its shapes describe what its kernels
 * move; an extension's fused operator, FBGEMM's embedding backward, runs
 * kernels its inputs do not describe). */
static bool aten_op(int o, const KinetoProfile *p)
{
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(g_array_index(p->ops, Op, o).ev, "name");
    return cJSON_IsString(n) && !strncmp(n->valuestring, "aten::", 6);
}

/* A kernel's class by its operator where that settles it: a GEMM or
 * attention operator's kernels (split-K reductions, a grouped GEMM's setup,
 * attention backward's preprocessing) are its class, priced as one; a
 * memory-bound operator's elementwise and indexing kernels (and an ATen
 * operator's unnamed ones) are priced as one, in the class holding most of
 * its time. */
static void assign_classes(KinetoProfile *p)
{
    size_t nops = p->ops->len;
    double *t = g_new0(double, nops * K_NUM + 1);
    for (guint i = 0; i < p->kernels->len; i++) {
        const Kernel *k = &g_array_index(p->kernels, Kernel, i);
        if (k->op >= 0)
            t[(size_t)k->op * K_NUM + k->cls] += k->dur;
    }
    for (guint i = 0; i < p->kernels->len; i++) {
        Kernel *k = &g_array_index(p->kernels, Kernel, i);
        if (k->op < 0 || k->cls == K_COMM)
            continue;
        KinetoOpKind kind = kineto_op_kind(g_array_index(p->ops, Op, k->op).ev);
        const double *o = t + (size_t)k->op * K_NUM;
        if (kind != KINETO_OP_OTHER)
            k->cls = kind == KINETO_OP_GEMM ? K_GEMM : K_ATTENTION;
        else if ((k->cls == K_ELEMENTWISE || k->cls == K_INDEXING || (k->cls == K_OTHER && aten_op(k->op, p))) &&
                 (o[K_ELEMENTWISE] > 0 || o[K_INDEXING] > 0))
            k->cls = o[K_INDEXING] > o[K_ELEMENTWISE] ? K_INDEXING : K_ELEMENTWISE;
    }
    g_free(t);
}

/* A kernel's times, in microseconds: a ts past 1e16 (317 years from the
 * profiler's origin) leaves a double less than 2 us apart from the next
 * one, so a kernel's end would round onto its start; a dur past 1e10 (three
 * hours for one kernel) is not a profile of one step, one between 0 and
 * 0.001 not what the profiler prints (nanoseconds). */
#define KINETO_MAX_TS_US 1e16
#define KINETO_MAX_DUR_US 1e10

/* Collects ops and kernels; false with *bad_kernel the index of a malformed
 * kernel event (err unset then), or with err set. */
static bool collect(KinetoProfile *p, const cJSON *evs, int *bad_kernel, GError **err)
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
        if (!cJSON_IsString(name) || !trace_measure_ok(dur, KINETO_MAX_DUR_US) || !(fabs(ts) <= KINETO_MAX_TS_US)) {
            *bad_kernel = idx - 1;
            ok = false;
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
    if (ok)
        assign_classes(p);
    g_hash_table_destroy(launch);
    g_hash_table_destroy(by_ext);
    return ok;
}

/* "FILE:LINE: traceEvents[i]: ...": the line from a second parse that keeps
 * lines, taken only on this error path (a profile is large). */
static void bad_kernel_error(const char *name, const char *text, size_t len, int i, GError **err)
{
    char msg[128];
    g_snprintf(msg, sizeof msg, "traceEvents[%d]: a kernel needs a name, a ts within +-1e16 us and a dur of 0 or 0.001 to 1e10 us", i);
    SimJsonDoc *d = sim_json_parse(name, text, len, NULL);
    const cJSON *ev = d ? cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(sim_json_root(d), "traceEvents"), i) : NULL;
    if (ev)
        sim_json_error(d, ev, err, "%s", msg);
    else
        bad(err, name, msg);
    sim_json_free(d);
}

KinetoProfile *kineto_parse(const char *name, const char *text, size_t len, GError **err)
{
    KinetoProfile *p = g_new0(KinetoProfile, 1);
    p->name = g_strdup(name);
    p->ops = g_array_new(FALSE, FALSE, sizeof(Op));
    p->kernels = g_array_new(FALSE, FALSE, sizeof(Kernel));
    const char *end = NULL;
    p->root = cJSON_ParseWithLengthOpts(text, len, &end, false);
    const cJSON *evs = cJSON_GetObjectItemCaseSensitive(p->root, "traceEvents");
    bool ok;
    int bad_kernel = -1;
    if (!p->root) {
        size_t off = end && end >= text && end <= text + len ? (size_t)(end - text) : 0, line = 1, col = 1;
        for (size_t i = 0; i < off; i++)
            text[i] == '\n' ? (line++, col = 1) : col++;
        g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "%s:%zu: invalid JSON near column %zu: not a PyTorch profiler trace",
                    name, line, col);
        ok = false;
    } else if (!cJSON_IsArray(evs))
        ok = bad(err, name, "no \"traceEvents\" array: not a PyTorch profiler (Kineto) trace");
    else if (!(ok = collect(p, evs, &bad_kernel, err)) && bad_kernel >= 0)
        bad_kernel_error(name, text, len, bad_kernel, err);
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
            KinetoGemm g;
            if (c == K_GEMM && kineto_gemm_shape(op->ev, op_kernel[o] ? op_kernel[o] : "", &g) &&
                accel_has_dtype(acc, g.dt)) {
                t = kineto_gemm_time(acc, &g);
                cJSON *r = cJSON_CreateObject();
                cJSON_AddStringToObject(r, "op", cJSON_GetObjectItemCaseSensitive(op->ev, "name")->valuestring);
                cJSON_AddNumberToObject(r, "m", g.m);
                cJSON_AddNumberToObject(r, "n", g.n);
                cJSON_AddNumberToObject(r, "k", g.k);
                cJSON_AddNumberToObject(r, "batch", g.batch);
                cJSON_AddBoolToObject(r, "grouped", g.grouped);
                cJSON_AddStringToObject(r, "dtype", accel_dtype_name(g.dt));
                cJSON_AddNumberToObject(r, "measured_s", m);
                cJSON_AddNumberToObject(r, "predicted_s", t);
                cJSON_AddItemToArray(gemms, r);
            } else if (c == K_ATTENTION)
                t = kineto_attention_time(op->ev, acc);
            else if (c == K_ELEMENTWISE || (c == K_INDEXING && aten_op(o, p))) /* an extension's sorts: unknown */
                t = kineto_memory_time(op->ev, acc);
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
    double priced = 0;
    for (int c = 0; c < K_NUM; c++)
        priced += cov[c];
    cJSON_AddNumberToObject(out, "priced_share", total > 0 ? priced / total : 0);
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
        KinetoGemm g; /* grouped GEMMs are no calibration rows: their split is unknown */
        if (m[o] > 0 && kineto_gemm_shape(g_array_index(p->ops, Op, o).ev, kn[o], &g) && !g.grouped) {
            if (!rows++)
                g_string_append_printf(s, "# GEMM operators of the PyTorch profile %s\nm,n,k,dtype,seconds\n", p->name);
            g_string_append_printf(s, "%.17g,%.17g,%.17g,%s,%.9g\n", g.m * g.batch, g.n, g.k, accel_dtype_name(g.dt), m[o]);
        }
    }
    g_free(m);
    g_free(kn);
    return g_string_free(s, rows == 0);
}
