#include "sweep.h"
#include "sim_file.h"
#include "step.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    char *key;
    cJSON *values; /* array */
    int n;
} Axis;

struct Sweep {
    char *name;   /* the base file, for messages and the output */
    cJSON *base;  /* the base scenario */
    GArray *axes; /* Axis */
    bool weak;
    bool prepared;
    bool derive_dp; /* the base gives no dp: each point's comes from the scenario's rule */
    long base_per_replica; /* weak scaling: global_batch / dp of the base */
    int npoints;
    cJSON *notes;
};

static void set_input_error(GError **err, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
static void set_input_error(GError **err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *m = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    g_set_error_literal(err, SIM_ERROR, SIM_ERROR_INPUT, m);
    g_free(m);
}

/* ------------------------------------------------------------------ */
/* Values                                                               */
/* ------------------------------------------------------------------ */

static bool parse_number(const char *s, double *out)
{
    if (!*s)
        return false;
    char *end;
    double v = g_ascii_strtod(s, &end);
    if (*end || !isfinite(v))
        return false;
    /* only what JSON would call a number (no "0x10", "inf", ".5") */
    const char *p = s + (*s == '-' || *s == '+');
    if (!g_ascii_isdigit(*p) || g_ascii_strncasecmp(p, "0x", 2) == 0)
        return false;
    *out = v;
    return true;
}

static cJSON *value_from_text(const char *s)
{
    double v;
    if (parse_number(s, &v))
        return cJSON_CreateNumber(v);
    if (!strcmp(s, "true"))
        return cJSON_CreateTrue();
    if (!strcmp(s, "false"))
        return cJSON_CreateFalse();
    if (!strcmp(s, "null"))
        return cJSON_CreateNull();
    return cJSON_CreateString(s);
}

char *sweep_value_text(const cJSON *v)
{
    if (cJSON_IsNumber(v)) {
        char buf[G_ASCII_DTOSTR_BUF_SIZE];
        g_ascii_formatd(buf, sizeof buf, "%.15g", v->valuedouble);
        return g_strdup(buf);
    }
    if (cJSON_IsString(v))
        return g_strdup(v->valuestring);
    if (cJSON_IsTrue(v))
        return g_strdup("true");
    if (cJSON_IsFalse(v))
        return g_strdup("false");
    if (cJSON_IsNull(v))
        return g_strdup("null");
    char *p = cJSON_PrintUnformatted(v);
    char *r = g_strdup(p ? p : "?");
    cJSON_free(p);
    return r;
}

static bool near(double a, double b) { return fabs(a - b) <= 1e-9 * fmax(fabs(a), fabs(b)); }

static bool is_int(double v) { return v == floor(v) && fabs(v) < 9007199254740992.0; }

/* Appends the values after lit[nlit-1] up to and including `end`. */
static bool expand_range(const double *lit, int nlit, double end, cJSON *arr, GError **err)
{
    bool geometric = false;
    double r = 0, d = lit[1] - lit[0];
    if (nlit >= 3) {
        bool ok = lit[0] != 0;
        r = ok ? lit[1] / lit[0] : 0;
        for (int i = 1; i < nlit && ok; i++)
            ok = lit[i - 1] != 0 && near(lit[i] / lit[i - 1], r);
        geometric = ok && r > 0 && !near(r, 1);
        if (!geometric) {
            bool ar = true;
            for (int i = 1; i < nlit && ar; i++)
                ar = near(lit[i] - lit[i - 1], d);
            if (!ar) {
                set_input_error(err, "the values before \"...\" have neither a constant ratio nor a constant step");
                return false;
            }
        }
    }
    if (!geometric && d == 0) {
        set_input_error(err, "the values before \"...\" do not change");
        return false;
    }
    double last = lit[nlit - 1];
    /* must move toward end */
    bool up = geometric ? (r > 1) == (last > 0) : d > 0;
    if ((up && end <= last) || (!up && end >= last)) {
        char *e = g_strdup_printf("%.15g", end);
        set_input_error(err, "the progression before \"...\" moves away from the end value %s", e);
        g_free(e);
        return false;
    }
    bool exact = is_int(last) && is_int(end) && (geometric ? is_int(r) : is_int(d));
    for (int k = 1; k <= SWEEP_MAX_POINTS; k++) {
        double v = geometric ? last * pow(r, k) : last + k * d;
        if (exact) {
            v = round(v);
        } else { /* 0.1 + 2 x 0.1 is 0.30000000000000004: keep what a person would write */
            char buf[G_ASCII_DTOSTR_BUF_SIZE];
            v = g_ascii_strtod(g_ascii_formatd(buf, sizeof buf, "%.12g", v), NULL);
        }
        if (exact ? v == end : near(v, end)) {
            cJSON_AddItemToArray(arr, cJSON_CreateNumber(end));
            return true;
        }
        if ((up && v > end) || (!up && v < end))
            break;
        cJSON_AddItemToArray(arr, cJSON_CreateNumber(v));
    }
    char *e = g_strdup_printf("%.15g", end);
    set_input_error(err, "the end value %s after \"...\" is not a member of the progression", e);
    g_free(e);
    return false;
}

cJSON *sweep_parse_values(const char *text, GError **err)
{
    char **tok = g_strsplit(text ? text : "", ",", -1);
    cJSON *arr = cJSON_CreateArray();
    int ntok = (int)g_strv_length(tok);
    double *lit = g_new(double, ntok + 1);
    int nlit = 0; /* numbers written since the start or the last "..."'s end */
    bool ok = true;
    for (int i = 0; i < ntok && ok; i++) {
        char *t = g_strstrip(tok[i]);
        if (!strcmp(t, "...")) {
            double end;
            if (nlit < 2) {
                set_input_error(err, "\"...\" needs two numbers before it (e.g. 8,16,...,64)");
                ok = false;
            } else if (i + 1 >= ntok || !parse_number(g_strstrip(tok[i + 1]), &end)) {
                set_input_error(err, "\"...\" needs an end number after it (e.g. 1,2,4,...,1024)");
                ok = false;
            } else {
                ok = expand_range(lit, nlit, end, arr, err);
                lit[0] = end;
                nlit = 1;
                i++;
            }
            continue;
        }
        if (!*t) {
            set_input_error(err, "empty value in \"%s\"", SIM_ECHO(text ? text : ""));
            ok = false;
            break;
        }
        cJSON *v = value_from_text(t);
        if (cJSON_IsNumber(v))
            lit[nlit++] = v->valuedouble;
        else
            nlit = 0;
        cJSON_AddItemToArray(arr, v);
    }
    g_free(lit);
    g_strfreev(tok);
    if (ok && cJSON_GetArraySize(arr) == 0) {
        set_input_error(err, "no values");
        ok = false;
    }
    if (ok && cJSON_GetArraySize(arr) > SWEEP_MAX_POINTS) {
        set_input_error(err, "more than %d values", SWEEP_MAX_POINTS);
        ok = false;
    }
    /* repeated values would make points that cannot be told apart */
    for (const cJSON *a = ok ? arr->child : NULL; a && ok; a = a->next)
        for (const cJSON *b = a->next; b && ok; b = b->next)
            if (cJSON_Compare(a, b, true)) {
                char *s = sweep_value_text(a);
                set_input_error(err, "value %s is given twice", SIM_ECHO(s));
                g_free(s);
                ok = false;
            }
    if (!ok) {
        cJSON_Delete(arr);
        return NULL;
    }
    return arr;
}

bool sweep_set_path(cJSON *root, const char *key, cJSON *value, GError **err)
{
    char **parts = g_strsplit(key, ".", -1);
    cJSON *o = root;
    bool ok = cJSON_IsObject(root);
    if (!ok)
        set_input_error(err, "the scenario is not an object");
    int n = (int)g_strv_length(parts);
    for (int i = 0; i < n && ok; i++)
        if (!*parts[i]) {
            set_input_error(err, "\"%s\": empty component in the key", SIM_ECHO(key));
            ok = false;
        }
    for (int i = 0; i + 1 < n && ok; i++) {
        cJSON *c = cJSON_GetObjectItemCaseSensitive(o, parts[i]);
        if (!c || cJSON_IsNull(c)) {
            cJSON_DeleteItemFromObjectCaseSensitive(o, parts[i]);
            c = cJSON_AddObjectToObject(o, parts[i]);
        } else if (!cJSON_IsObject(c)) {
            GString *path = g_string_new(parts[0]);
            for (int j = 1; j <= i; j++)
                g_string_append_printf(path, ".%s", parts[j]);
            set_input_error(err, "\"%s\": \"%s\" is not an object in the scenario", SIM_ECHO(key),
                            SIM_ECHO(path->str));
            g_string_free(path, TRUE);
            ok = false;
            break;
        }
        o = c;
    }
    if (ok) {
        if (cJSON_GetObjectItemCaseSensitive(o, parts[n - 1]))
            cJSON_ReplaceItemInObjectCaseSensitive(o, parts[n - 1], value);
        else
            cJSON_AddItemToObject(o, parts[n - 1], value);
    } else {
        cJSON_Delete(value);
    }
    g_strfreev(parts);
    return ok;
}

static const cJSON *get_path(const cJSON *root, const char *key)
{
    char **parts = g_strsplit(key, ".", -1);
    const cJSON *o = root;
    for (char **p = parts; *p && o; p++)
        o = cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, *p) : NULL;
    g_strfreev(parts);
    return o;
}

/* ------------------------------------------------------------------ */
/* The grid                                                             */
/* ------------------------------------------------------------------ */

static Sweep *sweep_from_doc(SimJsonDoc *d, GError **err)
{
    if (!d)
        return NULL;
    Sweep *s = g_new0(Sweep, 1);
    s->name = g_strdup(sim_json_path(d));
    s->base = cJSON_Duplicate(sim_json_root(d), true);
    s->axes = g_array_new(FALSE, TRUE, sizeof(Axis));
    s->notes = cJSON_CreateArray();
    sim_json_free(d);
    if (!s->base) {
        set_input_error(err, "%s: cannot copy the scenario", s->name);
        sweep_free(s);
        return NULL;
    }
    return s;
}

Sweep *sweep_load(const char *path, GError **err)
{
    /* read once: the path may be "-" (standard input) */
    size_t len = 0;
    char *text = sim_file_read(path, SIM_FILE_JSON_MAX, "JSON input", &len, err);
    if (!text)
        return NULL;
    const char *name = sim_file_display_name(path);
    StepScenario *sc = step_scenario_parse(name, text, len, err);
    Sweep *s = NULL;
    if (sc)
        s = sweep_from_doc(sim_json_parse(name, text, len, err), err);
    step_scenario_free(sc);
    g_free(text);
    return s;
}

Sweep *sweep_parse(const char *name, const char *text, GError **err)
{
    StepScenario *sc = step_scenario_parse(name, text, strlen(text), err);
    if (!sc)
        return NULL;
    step_scenario_free(sc);
    return sweep_from_doc(sim_json_parse(name, text, strlen(text), err), err);
}

void sweep_free(Sweep *s)
{
    if (!s)
        return;
    for (guint i = 0; s->axes && i < s->axes->len; i++) {
        Axis *a = &g_array_index(s->axes, Axis, i);
        g_free(a->key);
        cJSON_Delete(a->values);
    }
    if (s->axes)
        g_array_free(s->axes, TRUE);
    cJSON_Delete(s->base);
    cJSON_Delete(s->notes);
    g_free(s->name);
    g_free(s);
}

static int find_axis(const Sweep *s, const char *key)
{
    for (guint i = 0; i < s->axes->len; i++)
        if (!strcmp(g_array_index(s->axes, Axis, i).key, key))
            return (int)i;
    return -1;
}

static void add_axis(Sweep *s, const char *key, cJSON *values)
{
    Axis a = {.key = g_strdup(key), .values = values, .n = cJSON_GetArraySize(values)};
    g_array_append_val(s->axes, a);
}

bool sweep_add_axis(Sweep *s, const char *spec, GError **err)
{
    g_return_val_if_fail(!s->prepared, false);
    const char *eq = strchr(spec, '=');
    if (!eq) {
        set_input_error(err, "--vary \"%s\": expected KEY=V1,V2,...", SIM_ECHO(spec));
        return false;
    }
    char *key = g_strstrip(g_strndup(spec, (gsize)(eq - spec)));
    bool ok = true;
    if (!*key || key[0] == '.' || g_str_has_suffix(key, ".") || strstr(key, "..")) {
        set_input_error(err, "--vary \"%s\": bad key \"%s\" (a dotted path such as parallelism.dp)", SIM_ECHO(spec),
                        SIM_ECHO(key));
        ok = false;
    } else if (find_axis(s, key) >= 0) {
        set_input_error(err, "--vary %s: the key is varied twice", SIM_ECHO(key));
        ok = false;
    }
    cJSON *values = NULL;
    if (ok) {
        GError *e = NULL;
        values = sweep_parse_values(eq + 1, &e);
        if (!values) {
            set_input_error(err, "--vary %s: %s", SIM_ECHO(key), e->message);
            g_error_free(e);
            ok = false;
        }
    }
    if (ok)
        add_axis(s, key, values);
    g_free(key);
    return ok;
}

void sweep_set_weak_scaling(Sweep *s, bool weak) { s->weak = weak; }

static long int_at(const cJSON *root, const char *key, long dflt)
{
    const cJSON *v = get_path(root, key);
    return cJSON_IsNumber(v) && is_int(v->valuedouble) ? (long)v->valuedouble : dflt;
}

bool sweep_prepare(Sweep *s, GError **err)
{
    g_return_val_if_fail(!s->prepared, false);
    const cJSON *wu = get_path(s->base, "parallelism.weight_update");
    if (cJSON_IsArray(wu) && find_axis(s, "parallelism.weight_update") < 0) {
        add_axis(s, "parallelism.weight_update", cJSON_Duplicate(wu, true));
        cJSON_AddItemToArray(s->notes, cJSON_CreateString("the base scenario's weight_update list is varied as "
                                                          "parallelism.weight_update (the last axis)"));
    }
    double n = 1;
    for (guint i = 0; i < s->axes->len; i++)
        n *= g_array_index(s->axes, Axis, i).n;
    if (n > SWEEP_MAX_POINTS) {
        set_input_error(err, "the grid has %.0f points, more than %d", n, SWEEP_MAX_POINTS);
        return false;
    }
    s->npoints = (int)n;
    /* a path that cannot be set fails at every point: say so now */
    for (guint i = 0; i < s->axes->len; i++) {
        Axis *a = &g_array_index(s->axes, Axis, i);
        cJSON *copy = cJSON_Duplicate(s->base, true);
        bool ok = sweep_set_path(copy, a->key, cJSON_Duplicate(cJSON_GetArrayItem(a->values, 0), true), err);
        cJSON_Delete(copy);
        if (!ok) {
            g_prefix_error(err, "--vary %s: ", SIM_ECHO(a->key));
            return false;
        }
    }
    /* dp follows the scenario's one rule (models/step.h): as given, else the
     * replicas fill each point's machine.  Say which applies, and say it
     * loudly when the machine changes under a fixed dp. */
    static const char *const shape[] = {"nodes", "parallelism.tp", "parallelism.pp"};
    GString *by = g_string_new(NULL);
    for (size_t k = 0; k < G_N_ELEMENTS(shape); k++)
        if (find_axis(s, shape[k]) >= 0)
            g_string_append_printf(by, "%s%s", by->len ? ", " : "", shape[k]);
    const cJSON *base_dp = get_path(s->base, "parallelism.dp");
    bool dp_varied = find_axis(s, "parallelism.dp") >= 0;
    s->derive_dp = !dp_varied && !cJSON_IsNumber(base_dp);
    char *dp_note = NULL;
    if (s->derive_dp && by->len)
        dp_note = g_strdup_printf("parallelism.dp follows %s: the scenario gives no dp, so the replicas fill each "
                               "point's machine: dp = ranks of the topology (nodes x ranks per node) / (tp x pp)",
                               by->str);
    else if (s->derive_dp)
        dp_note = g_strdup("the scenario gives no dp: the replicas fill the machine, dp = ranks / (tp x pp)");
    else if (!dp_varied && by->len)
        dp_note = g_strdup_printf("parallelism.dp = %.0f is given by the scenario and not varied: every point uses %.0f "
                               "replicas whatever %s (leave dp out of the scenario to fill each point's machine)",
                               base_dp->valuedouble, base_dp->valuedouble, by->str);
    if (dp_note)
        cJSON_AddItemToArray(s->notes, cJSON_CreateString(dp_note));
    g_free(dp_note);
    g_string_free(by, TRUE);
    if (s->weak) {
        if (find_axis(s, "global_batch") >= 0) {
            set_input_error(err, "--weak-scaling sets global_batch: it cannot be varied too");
            return false;
        }
        /* the base's dp as the base would run (it parsed, so these exist) */
        long dp = 0, gb = int_at(s->base, "global_batch", 0);
        if (!step_json_dp(s->base, &dp, err)) {
            g_prefix_error(err, "%s: ", s->name);
            return false;
        }
        if (dp < 1 || gb < 1 || gb % dp) {
            set_input_error(err, "%s: weak scaling needs global_batch (%ld) to be a multiple of dp (%ld)", s->name,
                            gb, dp);
            return false;
        }
        s->base_per_replica = gb / dp;
        char *note = g_strdup_printf("weak scaling: global_batch = %ld x dp (the base's %ld / %ld per replica)",
                                     s->base_per_replica, gb, dp);
        cJSON_AddItemToArray(s->notes, cJSON_CreateString(note));
        g_free(note);
    }
    s->prepared = true;
    return true;
}

int sweep_num_points(const Sweep *s) { return s->prepared ? s->npoints : 0; }
int sweep_num_axes(const Sweep *s) { return (int)s->axes->len; }

const char *sweep_axis_key(const Sweep *s, int axis)
{
    return axis >= 0 && axis < (int)s->axes->len ? g_array_index(s->axes, Axis, axis).key : NULL;
}

const cJSON *sweep_axis_values(const Sweep *s, int axis)
{
    return axis >= 0 && axis < (int)s->axes->len ? g_array_index(s->axes, Axis, axis).values : NULL;
}

int sweep_device_axis(const Sweep *s)
{
    int a = find_axis(s, "nodes");
    return a >= 0 ? a : find_axis(s, "parallelism.dp");
}

const cJSON *sweep_notes(const Sweep *s) { return s->notes; }

const cJSON *sweep_point_value(const Sweep *s, int point, int axis)
{
    if (point < 0 || point >= s->npoints || axis < 0 || axis >= (int)s->axes->len)
        return NULL;
    /* the last axis varies fastest */
    int idx = point;
    for (int a = (int)s->axes->len - 1; a > axis; a--)
        idx /= g_array_index(s->axes, Axis, a).n;
    const Axis *ax = &g_array_index(s->axes, Axis, axis);
    return cJSON_GetArrayItem(ax->values, idx % ax->n);
}

char *sweep_point_label(const Sweep *s, int point)
{
    GString *g = g_string_new(NULL);
    for (int a = 0; a < (int)s->axes->len; a++) {
        char *v = sweep_value_text(sweep_point_value(s, point, a));
        g_string_append_printf(g, "%s%s=%s", a ? ", " : "", sweep_axis_key(s, a), v);
        g_free(v);
    }
    return g_string_free(g, FALSE);
}

cJSON *sweep_point_scenario(const Sweep *s, int point, cJSON **derived, GError **err)
{
    g_return_val_if_fail(s->prepared && point >= 0 && point < s->npoints, NULL);
    cJSON *sc = cJSON_Duplicate(s->base, true);
    cJSON *der = cJSON_CreateObject();
    for (int a = 0; a < (int)s->axes->len; a++)
        if (!sweep_set_path(sc, sweep_axis_key(s, a), cJSON_Duplicate(sweep_point_value(s, point, a), true), err))
            goto fail;
    long dp = 0;
    if ((s->derive_dp || s->weak) && !step_json_dp(sc, &dp, err))
        goto fail;
    if (s->derive_dp) {
        cJSON_AddNumberToObject(der, "parallelism.dp", (double)dp);
        sweep_set_path(sc, "parallelism.dp", cJSON_CreateNumber((double)dp), NULL);
    }
    if (s->weak) {
        double gb = (double)s->base_per_replica * (double)dp;
        cJSON_AddNumberToObject(der, "global_batch", gb);
        sweep_set_path(sc, "global_batch", cJSON_CreateNumber(gb), NULL);
    }
    if (derived)
        *derived = der;
    else
        cJSON_Delete(der);
    return sc;
fail:
    cJSON_Delete(der);
    cJSON_Delete(sc);
    return NULL;
}

/* "NAME:LINE: msg" or "NAME: msg" -> "msg": the generated text's lines mean
 * nothing to the user, the point's values say where the error is. */
static const char *strip_name(const char *msg, const char *name)
{
    size_t n = strlen(name);
    if (strncmp(msg, name, n) || msg[n] != ':')
        return msg;
    const char *p = msg + n + 1;
    while (g_ascii_isdigit(*p))
        p++;
    if (*p == ':')
        p++;
    while (*p == ' ')
        p++;
    return p;
}

cJSON *sweep_run_point(const Sweep *s, int point)
{
    cJSON *row = cJSON_CreateObject();
    cJSON_AddNumberToObject(row, "index", point);
    cJSON *vals = cJSON_AddObjectToObject(row, "values");
    for (int a = 0; a < (int)s->axes->len; a++)
        cJSON_AddItemToObject(vals, sweep_axis_key(s, a), cJSON_Duplicate(sweep_point_value(s, point, a), true));
    GError *err = NULL;
    cJSON *derived = NULL;
    cJSON *sc = sweep_point_scenario(s, point, &derived, &err);
    cJSON *res = NULL;
    char *name = g_strdup_printf("%s#%d", s->name, point);
    if (sc) {
        if (cJSON_GetArraySize(derived) > 0)
            cJSON_AddItemToObject(row, "derived", derived);
        else
            cJSON_Delete(derived);
        char *text = cJSON_Print(sc);
        cJSON_Delete(sc);
        res = step_run_text(name, text, &err);
        cJSON_free(text);
    }
    if (res) {
        cJSON_AddItemToObject(row, "result", res);
    } else {
        /* the scenario's own "name" is the prefix of run-time errors */
        const cJSON *nm = cJSON_GetObjectItemCaseSensitive(s->base, "name");
        const char *msg = err ? strip_name(err->message, name) : "unknown error";
        if (cJSON_IsString(nm))
            msg = strip_name(msg, nm->valuestring);
        cJSON_AddStringToObject(row, "error", msg);
        g_clear_error(&err);
    }
    g_free(name);
    return row;
}

/* ------------------------------------------------------------------ */
/* Running                                                              */
/* ------------------------------------------------------------------ */

typedef struct {
    const Sweep *s;
    cJSON **rows;
    int done;
    GMutex lock;
    GCond cond;
} RunState;

static void run_one(gpointer data, gpointer user)
{
    RunState *st = user;
    int i = GPOINTER_TO_INT(data) - 1;
    cJSON *row = sweep_run_point(st->s, i);
    g_mutex_lock(&st->lock);
    st->rows[i] = row;
    st->done++;
    g_cond_signal(&st->cond);
    g_mutex_unlock(&st->lock);
}

cJSON *sweep_run(const Sweep *s, int jobs, SweepProgress progress, void *user)
{
    g_return_val_if_fail(s->prepared, NULL);
    int n = s->npoints;
    if (jobs <= 0)
        jobs = (int)g_get_num_processors();
    if (jobs > n)
        jobs = n;
    RunState st = {.s = s, .rows = g_new0(cJSON *, n)};
    g_mutex_init(&st.lock);
    g_cond_init(&st.cond);
    if (progress)
        progress(0, n, user);
    if (jobs <= 1) {
        for (int i = 0; i < n; i++) {
            run_one(GINT_TO_POINTER(i + 1), &st);
            if (progress)
                progress(i + 1, n, user);
        }
    } else {
        GThreadPool *pool = g_thread_pool_new(run_one, &st, jobs, TRUE, NULL);
        if (!pool) /* no threads: run here */
            for (int i = 0; i < n; i++)
                run_one(GINT_TO_POINTER(i + 1), &st);
        for (int i = 0; pool && i < n; i++)
            g_thread_pool_push(pool, GINT_TO_POINTER(i + 1), NULL);
        int seen = 0;
        g_mutex_lock(&st.lock);
        while (st.done < n) {
            g_cond_wait(&st.cond, &st.lock);
            if (progress && st.done != seen) {
                seen = st.done;
                g_mutex_unlock(&st.lock);
                progress(seen, n, user);
                g_mutex_lock(&st.lock);
            }
        }
        g_mutex_unlock(&st.lock);
        if (pool)
            g_thread_pool_free(pool, FALSE, TRUE);
        if (progress && seen != n)
            progress(n, n, user);
    }
    g_mutex_clear(&st.lock);
    g_cond_clear(&st.cond);

    cJSON *out = cJSON_CreateObject();
    cJSON_AddStringToObject(out, "scenario", s->name);
    cJSON *vary = cJSON_AddObjectToObject(out, "vary");
    for (int a = 0; a < (int)s->axes->len; a++)
        cJSON_AddItemToObject(vary, sweep_axis_key(s, a), cJSON_Duplicate(sweep_axis_values(s, a), true));
    cJSON_AddItemToObject(out, "notes", cJSON_Duplicate(s->notes, true));
    int ran = 0;
    cJSON *pts = cJSON_AddArrayToObject(out, "points");
    for (int i = 0; i < n; i++) {
        ran += cJSON_GetObjectItemCaseSensitive(st.rows[i], "result") != NULL;
        cJSON_AddItemToArray(pts, st.rows[i]);
    }
    g_free(st.rows);
    cJSON_AddNumberToObject(out, "ran", ran);
    cJSON_AddNumberToObject(out, "failed", n - ran);
    return out;
}

/* ------------------------------------------------------------------ */
/* Curves                                                               */
/* ------------------------------------------------------------------ */

static double num_at(const cJSON *o, const char *key)
{
    const cJSON *v = get_path(o, key);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

typedef struct {
    double devices, step, thr, mem;
} CurvePoint;

static int cmp_curve_point(const void *a, const void *b)
{
    double x = ((const CurvePoint *)a)->devices, y = ((const CurvePoint *)b)->devices;
    return x < y ? -1 : x > y;
}

/* The key's last component ("weight_update") when no other axis ends the
 * same way: legends stay short. */
static const char *short_key(const Sweep *s, int axis)
{
    const char *k = sweep_axis_key(s, axis), *dot = strrchr(k, '.');
    const char *tail = dot ? dot + 1 : k;
    for (int a = 0; a < (int)s->axes->len; a++) {
        const char *o = sweep_axis_key(s, a), *od = strrchr(o, '.');
        if (a != axis && !strcmp(od ? od + 1 : o, tail))
            return k;
    }
    return tail;
}

SweepCurve *sweep_curves(const Sweep *s, const cJSON *run, int *ncurves)
{
    int dev_axis = sweep_device_axis(s);
    const cJSON *pts = cJSON_GetObjectItemCaseSensitive(run, "points");
    GPtrArray *labels = g_ptr_array_new_with_free_func(g_free);
    GPtrArray *members = g_ptr_array_new(); /* GArray of CurvePoint per curve */
    const cJSON *p;
    cJSON_ArrayForEach(p, pts)
    {
        const cJSON *res = cJSON_GetObjectItemCaseSensitive(p, "result");
        int idx = (int)num_at(p, "index");
        if (!res || idx < 0 || idx >= s->npoints)
            continue;
        GString *lab = g_string_new(NULL);
        for (int a = 0; a < (int)s->axes->len; a++) {
            if (a == dev_axis)
                continue;
            char *v = sweep_value_text(sweep_point_value(s, idx, a));
            g_string_append_printf(lab, "%s%s=%s", lab->len ? ", " : "", short_key(s, a), v);
            g_free(v);
        }
        if (!lab->len)
            g_string_append(lab, s->name);
        guint c;
        for (c = 0; c < labels->len; c++)
            if (!strcmp(labels->pdata[c], lab->str))
                break;
        if (c == labels->len) {
            g_ptr_array_add(labels, g_strdup(lab->str));
            g_ptr_array_add(members, g_array_new(FALSE, FALSE, sizeof(CurvePoint)));
        }
        g_string_free(lab, TRUE);
        CurvePoint cp = {num_at(res, "config.devices"), num_at(res, "step_time_s"), num_at(res, "samples_per_s"),
                         num_at(res, "memory_per_device_bytes.total")};
        g_array_append_val(members->pdata[c], cp);
    }
    int nc = (int)labels->len;
    SweepCurve *cv = g_new0(SweepCurve, nc > 0 ? nc : 1);
    for (int c = 0; c < nc; c++) {
        GArray *m = members->pdata[c];
        /* stable order for equal device counts: by point index, as added */
        CurvePoint *cp = (CurvePoint *)(void *)m->data;
        for (guint i = 1; i < m->len; i++) /* insertion sort: stable */
            for (guint j = i; j > 0 && cmp_curve_point(&cp[j - 1], &cp[j]) > 0; j--) {
                CurvePoint t = cp[j];
                cp[j] = cp[j - 1];
                cp[j - 1] = t;
            }
        SweepCurve *k = &cv[c];
        k->label = g_strdup(labels->pdata[c]);
        k->n = (int)m->len;
        k->devices = g_new(double, k->n);
        k->step_time = g_new(double, k->n);
        k->throughput = g_new(double, k->n);
        k->efficiency = g_new(double, k->n);
        k->memory = g_new(double, k->n);
        double ref = k->n ? cp[0].thr / cp[0].devices : NAN;
        for (int i = 0; i < k->n; i++) {
            k->devices[i] = cp[i].devices;
            k->step_time[i] = cp[i].step;
            k->throughput[i] = cp[i].thr;
            k->memory[i] = cp[i].mem;
            k->efficiency[i] = ref > 0 ? cp[i].thr / cp[i].devices / ref : NAN;
        }
        g_array_free(m, TRUE);
    }
    g_ptr_array_free(members, TRUE);
    g_ptr_array_free(labels, TRUE);
    *ncurves = nc;
    return cv;
}

void sweep_curves_free(SweepCurve *c, int ncurves)
{
    if (!c)
        return;
    for (int i = 0; i < ncurves; i++) {
        g_free(c[i].label);
        g_free(c[i].devices);
        g_free(c[i].step_time);
        g_free(c[i].throughput);
        g_free(c[i].efficiency);
        g_free(c[i].memory);
    }
    g_free(c);
}
