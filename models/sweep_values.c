/* Sweep values: the text of a --vary list read into JSON values, "..."
 * progressions expanded, values printed back as text, and dotted paths set
 * and read in a scenario. */
#include "sweep_grid.h"

#include <stdlib.h>
#include <string.h>

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
                sweep_input_error(err, "the values before \"...\" have neither a constant ratio nor a constant step");
                return false;
            }
        }
    }
    if (!geometric && d == 0) {
        sweep_input_error(err, "the values before \"...\" do not change");
        return false;
    }
    double last = lit[nlit - 1];
    /* must move toward end */
    bool up = geometric ? (r > 1) == (last > 0) : d > 0;
    if ((up && end <= last) || (!up && end >= last)) {
        char *e = g_strdup_printf("%.15g", end);
        sweep_input_error(err, "the progression before \"...\" moves away from the end value %s", e);
        g_free(e);
        return false;
    }
    bool exact = sweep_is_int(last) && sweep_is_int(end) && (geometric ? sweep_is_int(r) : sweep_is_int(d));
    int k;
    for (k = 1; k <= SWEEP_MAX_POINTS; k++) {
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
    if (k > SWEEP_MAX_POINTS) /* still short of the end: too long, not off it */
        sweep_input_error(err, "the progression up to %s after \"...\" has more than %d values", e, SWEEP_MAX_POINTS);
    else
        sweep_input_error(err, "the end value %s after \"...\" is not a member of the progression", e);
    g_free(e);
    return false;
}

static int by_number(const void *a, const void *b)
{
    double x = (*(const cJSON *const *)a)->valuedouble, y = (*(const cJSON *const *)b)->valuedouble;
    return (x > y) - (x < y);
}

/* A value of `arr` that another equals (cJSON_Compare), or NULL: numbers
 * sorted and their neighbours compared (a 100000-value progression took 25 s
 * pair by pair; review 9), the other values pair by pair. */
static const cJSON *repeated(const cJSON *arr)
{
    int n = cJSON_GetArraySize(arr), nn = 0;
    const cJSON **num = g_new(const cJSON *, n ? n : 1), *found = NULL;
    for (const cJSON *a = arr->child; a; a = a->next)
        if (cJSON_IsNumber(a))
            num[nn++] = a;
    qsort(num, (size_t)nn, sizeof *num, by_number);
    for (int i = 1; i < nn && !found; i++)
        if (cJSON_Compare(num[i - 1], num[i], true))
            found = num[i - 1];
    g_free(num);
    for (const cJSON *a = arr->child; a && !found; a = a->next) {
        if (cJSON_IsNumber(a))
            continue;
        for (const cJSON *b = a->next; b && !found; b = b->next)
            if (!cJSON_IsNumber(b) && cJSON_Compare(a, b, true))
                found = a;
    }
    return found;
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
                sweep_input_error(err, "\"...\" needs two numbers before it (e.g. 8,16,...,64)");
                ok = false;
            } else if (i + 1 >= ntok || !parse_number(g_strstrip(tok[i + 1]), &end)) {
                sweep_input_error(err, "\"...\" needs an end number after it (e.g. 1,2,4,...,1024)");
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
            sweep_input_error(err, "empty value in \"%s\"", SIM_ECHO(text ? text : ""));
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
        sweep_input_error(err, "no values");
        ok = false;
    }
    if (ok && cJSON_GetArraySize(arr) > SWEEP_MAX_POINTS) {
        sweep_input_error(err, "more than %d values", SWEEP_MAX_POINTS);
        ok = false;
    }
    /* repeated values would make points that cannot be told apart */
    const cJSON *twice = ok ? repeated(arr) : NULL;
    if (twice) {
        char *s = sweep_value_text(twice);
        sweep_input_error(err, "value %s is given twice", SIM_ECHO(s));
        g_free(s);
        ok = false;
    }
    if (!ok) {
        cJSON_Delete(arr);
        return NULL;
    }
    return arr;
}

void sweep_model_by_name(cJSON *root, const char *key)
{
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(root, "model");
    if (!g_str_has_prefix(key, "model.") || !cJSON_IsString(m))
        return;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "base", m->valuestring);
    cJSON_ReplaceItemInObjectCaseSensitive(root, "model", o);
}

SweepKeyShape sweep_key_shape(const char *key)
{
    if (!*key)
        return SWEEP_KEY_EMPTY;
    int n = 1;
    for (const char *p = key; *p; p++)
        if (*p == '.') {
            if (p == key || p[1] == '.' || !p[1])
                return SWEEP_KEY_EMPTY_PART;
            n++;
        }
    return n > SWEEP_KEY_MAX_PARTS ? SWEEP_KEY_TOO_DEEP : SWEEP_KEY_OK;
}

bool sweep_set_path(cJSON *root, const char *key, cJSON *value, GError **err)
{
    if (cJSON_IsObject(root))
        sweep_model_by_name(root, key);
    char **parts = g_strsplit(key, ".", -1);
    cJSON *o = root;
    bool ok = cJSON_IsObject(root);
    if (!ok)
        sweep_input_error(err, "the scenario is not an object");
    int n = (int)g_strv_length(parts);
    SweepKeyShape shape = sweep_key_shape(key);
    if (ok && shape != SWEEP_KEY_OK) {
        sweep_input_error(err, shape == SWEEP_KEY_EMPTY_PART ? "\"%s\": empty component in the key"
                               : shape == SWEEP_KEY_TOO_DEEP ? "\"%s\": more than %d components in the key"
                                                             : "\"%s\": an empty key",
                          SIM_ECHO(key), SWEEP_KEY_MAX_PARTS);
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
            sweep_input_error(err, "\"%s\": \"%s\" is not an object in the scenario", SIM_ECHO(key),
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

const cJSON *sweep_get_path(const cJSON *root, const char *key)
{
    char **parts = g_strsplit(key, ".", -1);
    const cJSON *o = root;
    for (char **p = parts; *p && o; p++)
        o = cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, *p) : NULL;
    g_strfreev(parts);
    return o;
}

