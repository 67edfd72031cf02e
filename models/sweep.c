/* The sweep's grid: the base scenario, its axes, the checks and notes of
 * sweep_prepare (the implicit weight-update axis, dp's rule, weak scaling),
 * the points' values and each point's scenario with the coupled rules
 * applied. */
#include "sweep_grid.h"
#include "sim_file.h"
#include "step.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void sweep_input_error(GError **err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *m = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    g_set_error_literal(err, SIM_ERROR, SIM_ERROR_INPUT, m);
    g_free(m);
}

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
        sweep_input_error(err, "%s: cannot copy the scenario", s->name);
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
        sweep_input_error(err, "--vary \"%s\": expected KEY=V1,V2,...", SIM_ECHO(spec));
        return false;
    }
    char *key = g_strstrip(g_strndup(spec, (gsize)(eq - spec)));
    bool ok = true;
    if (!*key || key[0] == '.' || g_str_has_suffix(key, ".") || strstr(key, "..")) {
        sweep_input_error(err, "--vary \"%s\": bad key \"%s\" (a dotted path such as parallelism.dp)", SIM_ECHO(spec),
                        SIM_ECHO(key));
        ok = false;
    } else if (find_axis(s, key) >= 0) {
        sweep_input_error(err, "--vary %s: the key is varied twice", SIM_ECHO(key));
        ok = false;
    }
    cJSON *values = NULL;
    if (ok) {
        GError *e = NULL;
        values = sweep_parse_values(eq + 1, &e);
        if (!values) {
            sweep_input_error(err, "--vary %s: %s", SIM_ECHO(key), e->message);
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
    const cJSON *v = sweep_get_path(root, key);
    return cJSON_IsNumber(v) && sweep_is_int(v->valuedouble) ? (long)v->valuedouble : dflt;
}

bool sweep_prepare(Sweep *s, GError **err)
{
    g_return_val_if_fail(!s->prepared, false);
    const cJSON *wu = sweep_get_path(s->base, "parallelism.weight_update");
    if (cJSON_IsArray(wu) && find_axis(s, "parallelism.weight_update") < 0) {
        add_axis(s, "parallelism.weight_update", cJSON_Duplicate(wu, true));
        cJSON_AddItemToArray(s->notes, cJSON_CreateString("the base scenario's weight_update list is varied as "
                                                          "parallelism.weight_update (the last axis)"));
    }
    double n = 1;
    for (guint i = 0; i < s->axes->len; i++)
        n *= g_array_index(s->axes, Axis, i).n;
    if (n > SWEEP_MAX_POINTS) {
        sweep_input_error(err, "the grid has %.0f points, more than %d", n, SWEEP_MAX_POINTS);
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
    const cJSON *base_dp = sweep_get_path(s->base, "parallelism.dp");
    bool dp_varied = find_axis(s, "parallelism.dp") >= 0;
    s->derive_dp = !dp_varied && !cJSON_IsNumber(base_dp);
    char *dp_note = NULL;
    if (s->derive_dp && by->len)
        dp_note = g_strdup_printf("parallelism.dp follows %s: the scenario gives no dp, so the replicas fill each "
                               "point's machine: dp = ranks of the topology (nodes x ranks per node) / (tp x pp), / (tp x cp x pp) with "
                               "context parallelism",
                               by->str);
    else if (s->derive_dp)
        dp_note = g_strdup("the scenario gives no dp: the replicas fill the machine, dp = ranks / (tp x pp), / (tp x "
                           "cp x pp) with context parallelism");
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
            sweep_input_error(err, "--weak-scaling sets global_batch: it cannot be varied too");
            return false;
        }
        /* the base's dp as the base would run (it parsed, so these exist) */
        long dp = 0, gb = int_at(s->base, "global_batch", 0);
        if (!step_json_dp(s->base, &dp, err)) {
            g_prefix_error(err, "%s: ", s->name);
            return false;
        }
        if (dp < 1 || gb < 1 || gb % dp) {
            sweep_input_error(err, "%s: weak scaling needs global_batch (%ld) to be a multiple of dp (%ld)", s->name,
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

double sweep_point_nodes(const Sweep *s, int point)
{
    int a = find_axis(s, "nodes");
    const cJSON *v = a >= 0 ? sweep_point_value(s, point, a) : cJSON_GetObjectItemCaseSensitive(s->base, "nodes");
    return cJSON_IsNumber(v) && v->valuedouble >= 1 ? v->valuedouble : 1;
}

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

