/* JSON documents that remember lines: parsing (UTF-8, syntax, trailing text,
 * duplicate keys refused), each value's line found by a scan in step with
 * cJSON's tree, "FILE:LINE: ..." errors, and typed getters with bounds. */
#include "sim_json.h"

#include "sim_file.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>

#define SIM_MESSAGE_MAX 1024

struct SimJsonDoc {
    char *path;
    cJSON *root;
    GHashTable *lines; /* const cJSON* -> line number (GINT_TO_POINTER) */
};

static int line_at(const char *text, size_t off)
{
    int line = 1;
    for (size_t i = 0; i < off; i++)
        line += text[i] == '\n';
    return line;
}

/* cJSON keeps no positions.  The text is valid JSON once cJSON accepted it, so
 * one scan that visits values in document order visits them in the same order
 * as a pre-order walk of the tree: pair them up to learn each item's line. */
typedef struct {
    const char *s;
    size_t i;
    int line;
} Scan;

/* cJSON skips every byte up to and including ' ' as whitespace; so must we. */
static void scan_ws(Scan *sc)
{
    while (sc->s[sc->i] && (unsigned char)sc->s[sc->i] <= ' ') {
        sc->line += sc->s[sc->i] == '\n';
        sc->i++;
    }
}

static void scan_string(Scan *sc)
{
    sc->i++; /* opening quote */
    while (sc->s[sc->i] && sc->s[sc->i] != '"') {
        if (sc->s[sc->i] == '\\' && sc->s[sc->i + 1])
            sc->i++;
        sc->i++;
    }
    if (sc->s[sc->i])
        sc->i++;
}

static void scan_value(Scan *sc, const cJSON *item, GHashTable *lines)
{
    scan_ws(sc);
    if (!item)
        return;
    g_hash_table_insert(lines, (gpointer)item, GINT_TO_POINTER(sc->line));
    char c = sc->s[sc->i];
    if (c == '{' || c == '[') {
        char close = c == '{' ? '}' : ']';
        sc->i++;
        const cJSON *child = item->child;
        for (;;) {
            scan_ws(sc);
            if (!sc->s[sc->i] || sc->s[sc->i] == close)
                break;
            if (sc->s[sc->i] == ',') {
                sc->i++;
                continue;
            }
            size_t before = sc->i;
            if (c == '{') { /* key, then ':' */
                scan_string(sc);
                scan_ws(sc);
                if (sc->s[sc->i] == ':')
                    sc->i++;
            }
            scan_value(sc, child, lines);
            if (sc->i == before) /* out of step with the tree: never spin */
                sc->i++;
            if (child)
                child = child->next;
        }
        if (sc->s[sc->i])
            sc->i++;
    } else if (c == '"') {
        scan_string(sc);
    } else {
        while (sc->s[sc->i] && (unsigned char)sc->s[sc->i] > ' ' && !strchr(",]}", sc->s[sc->i]))
            sc->i++;
    }
}

/* cJSON keeps both of two equal keys and lookups take the first: a silent
 * surprise for whoever wrote the second.  Returns the first repeated key. */
static const cJSON *duplicate_key(const cJSON *item, int depth)
{
    if (!item || depth > 10000)
        return NULL;
    GHashTable *seen = cJSON_IsObject(item) ? g_hash_table_new(g_str_hash, g_str_equal) : NULL;
    const cJSON *found = NULL;
    for (const cJSON *c = item->child; c && !found; c = c->next) {
        if (seen && c->string && !g_hash_table_add(seen, c->string))
            found = c;
        else
            found = duplicate_key(c, depth + 1);
    }
    if (seen)
        g_hash_table_destroy(seen);
    return found;
}

/* The offset of a \u0000 escape in TEXT (a backslash itself unescaped),
 * or -1: cJSON decodes it into a NUL that ends the C string early, so
 * "te\u0000x" would read as "te". */
static long nul_escape(const char *text, size_t len)
{
    for (size_t i = 0; i + 5 < len; i++) {
        if (text[i] != '\\')
            continue;
        if (!strncmp(text + i + 1, "u0000", 5))
            return (long)i;
        i++; /* the escaped character: a second backslash is not an escape's start */
    }
    return -1;
}

SimJsonDoc *sim_json_parse(const char *name, const char *text, size_t len, GError **err)
{
    const char *bad = NULL;
    if (!g_utf8_validate(text, (gssize)len, &bad)) {
        g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "%s:%d: not valid UTF-8 text", name,
                    line_at(text, (size_t)(bad - text)));
        return NULL;
    }
    size_t lead = 0; /* an empty file says so, not "invalid JSON near column 1" */
    while (lead < len && g_ascii_isspace(text[lead]))
        lead++;
    if (lead == len) {
        g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "%s:1: the file is empty: no JSON in it", name);
        return NULL;
    }
    long nul = nul_escape(text, len);
    if (nul >= 0) {
        g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "%s:%d: a string holds \\u0000 (a NUL character): not allowed",
                    name, line_at(text, (size_t)nul));
        return NULL;
    }
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
    if (!root) {
        size_t off = end && end >= text ? (size_t)(end - text) : 0;
        if (off > len)
            off = len;
        int line = line_at(text, off);
        size_t bol = off;
        while (bol > 0 && text[bol - 1] != '\n')
            bol--;
        g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "%s:%d: invalid JSON near column %zu", name, line,
                    off - bol + 1);
        return NULL;
    }
    /* Trailing garbage after the value is an error too. */
    if (end) {
        while ((size_t)(end - text) < len && isspace((unsigned char)*end))
            end++;
        if ((size_t)(end - text) < len && *end) {
            g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "%s:%d: unexpected text after the JSON value", name,
                        line_at(text, (size_t)(end - text)));
            cJSON_Delete(root);
            return NULL;
        }
    }
    SimJsonDoc *doc = g_new0(SimJsonDoc, 1);
    doc->path = g_strdup(name);
    doc->root = root;
    doc->lines = g_hash_table_new(g_direct_hash, g_direct_equal);
    char *copy = g_strndup(text, len); /* NUL-terminated for the scanner */
    Scan sc = {copy, 0, 1};
    scan_value(&sc, root, doc->lines);
    g_free(copy);
    const cJSON *dup = duplicate_key(root, 0);
    if (dup) {
        sim_json_error(doc, dup, err, "\"%s\" is given twice in one object", dup->string);
        sim_json_free(doc);
        return NULL;
    }
    return doc;
}

SimJsonDoc *sim_json_load_file(const char *path, GError **err)
{
    size_t len = 0;
    char *text = sim_file_read(path, SIM_FILE_JSON_MAX, "JSON input", &len, err);
    if (!text)
        return NULL;
    SimJsonDoc *doc = sim_json_parse(sim_file_display_name(path), text, len, err);
    g_free(text);
    return doc;
}

void sim_json_free(SimJsonDoc *doc)
{
    if (!doc)
        return;
    cJSON_Delete(doc->root);
    g_hash_table_destroy(doc->lines);
    g_free(doc->path);
    g_free(doc);
}

const cJSON *sim_json_root(const SimJsonDoc *doc) { return doc->root; }
const char *sim_json_path(const SimJsonDoc *doc) { return doc->path; }

int sim_json_line(const SimJsonDoc *doc, const cJSON *item)
{
    return item ? GPOINTER_TO_INT(g_hash_table_lookup(doc->lines, item)) : 0;
}

void sim_json_error(const SimJsonDoc *doc, const cJSON *item, GError **err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *msg = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    /* a net under SIM_ECHO: no message runs to kilobytes of echoed input */
    if (strlen(msg) > SIM_MESSAGE_MAX) {
        const char *cut = g_utf8_find_prev_char(msg, msg + SIM_MESSAGE_MAX - 3);
        strcpy((char *)(cut ? cut : msg + SIM_MESSAGE_MAX - 3), "...");
    }
    int line = sim_json_line(doc, item);
    if (line > 0)
        g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "%s:%d: %s", doc->path, line, msg);
    else
        g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "%s: %s", doc->path, msg);
    g_free(msg);
}

bool sim_json_not_stdin(const SimJsonDoc *doc, const cJSON *item, GError **err)
{
    if (!cJSON_IsString(item) || strcmp(item->valuestring, "-"))
        return true;
    sim_json_error(doc, item, err, "\"%s\" = \"-\": a file named in a file is not read from standard input",
                   item->string ? item->string : "");
    return false;
}

static const cJSON *field(const SimJsonDoc *doc, const cJSON *obj, const char *key, bool required, GError **err,
                          bool *missing)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key);
    *missing = it == NULL || cJSON_IsNull(it);
    if (*missing && required)
        sim_json_error(doc, obj, err, "missing required field \"%s\"", SIM_ECHO(key));
    return it;
}

/* "\"key\" must be between LO and HI, not V" at the item's line. */
static bool json_range(const SimJsonDoc *doc, const cJSON *it, const char *key, double v, double lo, double hi,
                       SimUnit unit, GError **err)
{
    GError *e = NULL;
    char *what = g_strdup_printf("\"%s\"", SIM_ECHO(key));
    bool ok = sim_check_range(what, v, lo, hi, unit, &e);
    g_free(what);
    if (!ok) {
        sim_json_error(doc, it, err, "%s", e->message);
        g_error_free(e);
    }
    return ok;
}

bool sim_json_get_quantity(const SimJsonDoc *doc, const cJSON *obj, const char *key, bool required, double lo,
                           double hi, SimUnit unit, double *out, GError **err)
{
    bool missing;
    const cJSON *it = field(doc, obj, key, required, err, &missing);
    if (missing)
        return !required;
    if (!cJSON_IsNumber(it)) {
        sim_json_error(doc, it, err, "\"%s\" must be a number", SIM_ECHO(key));
        return false;
    }
    if (!isfinite(it->valuedouble)) {
        sim_json_error(doc, it, err, "\"%s\" must be a finite number", SIM_ECHO(key));
        return false;
    }
    if (!json_range(doc, it, key, it->valuedouble, lo, hi, unit, err))
        return false;
    *out = it->valuedouble;
    return true;
}

bool sim_json_get_number(const SimJsonDoc *doc, const cJSON *obj, const char *key, bool required, double lo,
                         double hi, double *out, GError **err)
{
    return sim_json_get_quantity(doc, obj, key, required, lo, hi, SIM_UNIT_NONE, out, err);
}

bool sim_json_get_size(const SimJsonDoc *doc, const cJSON *obj, const char *key, bool required, double lo,
                       double hi, double *out, GError **err)
{
    bool missing;
    const cJSON *it = field(doc, obj, key, required, err, &missing);
    if (missing)
        return !required;
    if (!cJSON_IsString(it))
        return sim_json_get_quantity(doc, obj, key, required, lo, hi, SIM_UNIT_BYTES, out, err);
    double v = 0;
    if (!sim_parse_size(it->valuestring, &v)) {
        sim_json_error(doc, it, err, "\"%s\": cannot read \"%s\" as a size in whole bytes (e.g. 25MiB)",
                       SIM_ECHO(key), SIM_ECHO(it->valuestring));
        return false;
    }
    if (!json_range(doc, it, key, v, lo, hi, SIM_UNIT_BYTES, err))
        return false;
    *out = v;
    return true;
}

bool sim_json_get_int(const SimJsonDoc *doc, const cJSON *obj, const char *key, bool required, long lo, long hi,
                      long *out, GError **err)
{
    double v = 0;
    bool missing;
    const cJSON *it = field(doc, obj, key, required, err, &missing);
    if (missing)
        return !required;
    if (!sim_json_get_number(doc, obj, key, true, (double)lo, (double)hi, &v, err))
        return false;
    if (v != floor(v)) {
        sim_json_error(doc, it, err, "\"%s\" must be an integer, not %g", SIM_ECHO(key), v);
        return false;
    }
    *out = (long)v;
    return true;
}

bool sim_json_get_bool(const SimJsonDoc *doc, const cJSON *obj, const char *key, bool *out, GError **err)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!it || cJSON_IsNull(it))
        return true;
    if (!cJSON_IsBool(it)) {
        sim_json_error(doc, it, err, "\"%s\" must be true or false", SIM_ECHO(key));
        return false;
    }
    *out = cJSON_IsTrue(it);
    return true;
}

bool sim_json_get_string(const SimJsonDoc *doc, const cJSON *obj, const char *key, bool required, const char **out,
                         GError **err)
{
    bool missing;
    const cJSON *it = field(doc, obj, key, required, err, &missing);
    if (missing)
        return !required;
    if (!cJSON_IsString(it)) {
        sim_json_error(doc, it, err, "\"%s\" must be a string", SIM_ECHO(key));
        return false;
    }
    *out = it->valuestring;
    return true;
}

bool sim_json_only_keys(const SimJsonDoc *doc, const cJSON *obj, const char *const *allowed,
                        bool (*skip)(const char *key), GError **err)
{
    for (const cJSON *c = obj->child; c; c = c->next) {
        if (skip && skip(c->string))
            continue;
        bool ok = false;
        for (const char *const *a = allowed; *a && !ok; a++)
            ok = strcmp(*a, c->string) == 0;
        if (!ok) {
            GString *s = g_string_new(NULL);
            for (const char *const *a = allowed; *a; a++)
                g_string_append_printf(s, "%s%s", a == allowed ? "" : ", ", *a);
            sim_json_error(doc, c, err, "unknown field \"%s\" (known here: %s)", SIM_ECHO(c->string), s->str);
            g_string_free(s, TRUE);
            return false;
        }
    }
    return true;
}

bool sim_json_need_source(const SimJsonDoc *doc, const cJSON *obj, GError **err)
{
    const char *src = NULL;
    if (!sim_json_get_string(doc, obj, "source", true, &src, err))
        return false;
    if (!*src) {
        sim_json_error(doc, cJSON_GetObjectItemCaseSensitive(obj, "source"), err, "\"source\" must not be empty");
        return false;
    }
    return true;
}
