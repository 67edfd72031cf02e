/* The self-contained HTML page of an answer: its parts collected in order,
 * escaped, SVG inlined safely, the --json output embedded (report.h). */
#include "sim_file.h"
#include "report.h"

#include "sim_data.h"

#include <math.h>
#include <string.h>

struct Report {
    char *title;
    GString *inputs, *tables, *plots, *warnings, *sources;
    int nplots, nwarnings;
    GHashTable *source_files; /* paths already listed */
    char *json;               /* printed, or NULL */
};

/* Appends `s` escaped for HTML text and attribute values. */
static void esc(GString *out, const char *s)
{
    char *valid = g_utf8_make_valid(s ? s : "", -1);
    for (const char *p = valid; *p; p++) {
        switch (*p) {
        case '&': g_string_append(out, "&amp;"); break;
        case '<': g_string_append(out, "&lt;"); break;
        case '>': g_string_append(out, "&gt;"); break;
        case '"': g_string_append(out, "&quot;"); break;
        case '\'': g_string_append(out, "&#39;"); break;
        default:
            /* control characters other than tab and newline are not HTML text */
            if ((unsigned char)*p < 0x20 && *p != '\n' && *p != '\t')
                g_string_append_c(out, ' ');
            else
                g_string_append_c(out, *p);
        }
    }
    g_free(valid);
}

Report *report_new(const char *title)
{
    Report *r = g_new0(Report, 1);
    r->title = g_strdup(title ? title : "shardsim");
    r->inputs = g_string_new(NULL);
    r->tables = g_string_new(NULL);
    r->plots = g_string_new(NULL);
    r->warnings = g_string_new(NULL);
    r->sources = g_string_new(NULL);
    r->source_files = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    return r;
}

void report_free(Report *r)
{
    if (!r)
        return;
    g_free(r->title);
    g_string_free(r->inputs, TRUE);
    g_string_free(r->tables, TRUE);
    g_string_free(r->plots, TRUE);
    g_string_free(r->warnings, TRUE);
    g_string_free(r->sources, TRUE);
    g_hash_table_destroy(r->source_files);
    g_free(r->json);
    g_free(r);
}

void report_add_inputs(Report *r, int argc, char **argv, const cJSON *input)
{
    GString *cmd = g_string_new(NULL);
    for (int i = 0; i < argc && argv; i++) {
        char *q = g_shell_quote(argv[i] ? argv[i] : "");
        /* plain words need no quotes */
        bool plain = argv[i] && *argv[i] && strspn(argv[i], "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                                             "0123456789-_=./,:+@%") == strlen(argv[i]);
        g_string_append_printf(cmd, "%s%s", i ? " " : "", plain ? argv[i] : q);
        g_free(q);
    }
    g_string_append(r->inputs, "<p>Command:</p>\n<pre class=\"cmd\">");
    esc(r->inputs, cmd->str);
    g_string_append(r->inputs, "</pre>\n");
    g_string_free(cmd, TRUE);
    if (input) {
        char *text = cJSON_Print(input);
        g_string_append(r->inputs, "<details open><summary>Input</summary>\n<pre class=\"input\">");
        esc(r->inputs, text ? text : "");
        g_string_append(r->inputs, "</pre></details>\n");
        cJSON_free(text);
    }
}

/* Keys may hold dots themselves ("parallelism.dp" in a sweep's values): at
 * each level the whole rest is tried first, then ever longer prefixes. */
const cJSON *report_json_at(const cJSON *o, const char *key)
{
    if (!o || !key || !*key)
        return o;
    if (cJSON_IsObject(o)) {
        const cJSON *whole = cJSON_GetObjectItemCaseSensitive(o, key);
        if (whole)
            return whole;
    }
    for (const char *dot = strchr(key, '.'); dot; dot = strchr(dot + 1, '.')) {
        char *head = g_strndup(key, (gsize)(dot - key));
        const cJSON *c = NULL;
        if (cJSON_IsArray(o)) {
            char *end = NULL;
            long i = strtol(head, &end, 10);
            c = end && *end == 0 && end != head && i >= 0 && i <= G_MAXINT ? cJSON_GetArrayItem(o, (int)i) : NULL;
        } else if (cJSON_IsObject(o)) {
            c = cJSON_GetObjectItemCaseSensitive(o, head);
        }
        g_free(head);
        const cJSON *found = c ? report_json_at(c, dot + 1) : NULL;
        if (found)
            return found;
    }
    if (cJSON_IsArray(o)) {
        char *end = NULL;
        long i = strtol(key, &end, 10);
        return end && *end == 0 && end != key && i >= 0 && i <= G_MAXINT ? cJSON_GetArrayItem(o, (int)i) : NULL;
    }
    return NULL;
}

/* As cJSON prints it, so that the value reads the same as in --json. */
static void append_json_number(GString *out, double v)
{
    cJSON *n = cJSON_CreateNumber(v);
    char *s = n ? cJSON_PrintUnformatted(n) : NULL;
    g_string_append(out, s ? s : "null");
    cJSON_free(s);
    cJSON_Delete(n);
}

static void append_g17(GString *out, double v)
{
    char buf[G_ASCII_DTOSTR_BUF_SIZE];
    g_string_append(out, g_ascii_formatd(buf, sizeof buf, "%.17g", v));
}

static void number_cell(GString *t, int row, const ReportColumn *c, double v)
{
    double scale = c->scale != 0 ? c->scale : 1;
    g_string_append_printf(t, "<td class=\"num\" data-row=\"%d\" data-key=\"", row);
    esc(t, c->key);
    g_string_append(t, "\" data-value=\"");
    append_json_number(t, v);
    g_string_append(t, "\" data-scale=\"");
    append_g17(t, scale);
    g_string_append(t, "\">");
    char buf[64];
    if (!isfinite(v))
        g_string_append(t, "-");
    else {
        char fmt[16];
        g_snprintf(fmt, sizeof fmt, c->decimals >= 0 ? "%%.%df" : "%%.6g", c->decimals > 12 ? 12 : c->decimals);
        g_string_append(t, g_ascii_formatd(buf, sizeof buf, fmt, v * scale));
    }
    g_string_append(t, "</td>");
}

void report_add_table(Report *r, const char *caption, const cJSON *rows, const char *source,
                      const ReportColumn *cols, int ncols)
{
    GString *t = r->tables;
    g_string_append(t, "<table data-source=\"");
    esc(t, source ? source : "");
    g_string_append(t, "\">\n<caption>");
    esc(t, caption);
    g_string_append(t, "</caption>\n<thead><tr>");
    for (int c = 0; c < ncols; c++) {
        g_string_append(t, "<th>");
        esc(t, cols[c].heading);
        g_string_append(t, "</th>");
    }
    g_string_append(t, "</tr></thead>\n<tbody>\n");
    int n = cJSON_IsArray(rows) ? cJSON_GetArraySize(rows) : rows ? 1 : 0;
    for (int i = 0; i < n; i++) {
        const cJSON *row = cJSON_IsArray(rows) ? cJSON_GetArrayItem(rows, i) : rows;
        g_string_append(t, "<tr>");
        for (int c = 0; c < ncols; c++) {
            const cJSON *v = report_json_at(row, cols[c].key);
            if (cJSON_IsNumber(v)) {
                number_cell(t, i, &cols[c], v->valuedouble);
                continue;
            }
            g_string_append(t, "<td>");
            if (cJSON_IsString(v))
                esc(t, v->valuestring);
            else if (cJSON_IsBool(v))
                g_string_append(t, cJSON_IsTrue(v) ? "yes" : "no");
            else
                g_string_append(t, "-");
            g_string_append(t, "</td>");
        }
        g_string_append(t, "</tr>\n");
    }
    g_string_append(t, "</tbody></table>\n");
}

/* The SVG element of gnuplot's file, safe to inline: from "<svg" on,
 * scripts and event attributes removed, ids prefixed with `prefix`. */
static char *svg_inline(const char *data, const char *prefix)
{
    const char *start = strstr(data, "<svg");
    const char *end = g_strrstr(data, "</svg>");
    if (!start || !end || end < start)
        return NULL;
    char *svg = g_strndup(start, (gsize)(end - start) + strlen("</svg>"));
    static const char *const rules[][2] = {
        {"<script\\b.*?</script\\s*>", ""},
        {"\\s+on[a-zA-Z]+\\s*=\\s*(\"[^\"]*\"|'[^']*')", ""},
        {"\\bid=([\"'])", "id=\\1@"},
        {"\\bhref=([\"'])#", "href=\\1#@"},
        {"url\\(#", "url(#@"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(rules); i++) {
        char *repl = NULL;
        if (strchr(rules[i][1], '@')) {
            char **parts = g_strsplit(rules[i][1], "@", 2);
            repl = g_strconcat(parts[0], prefix, parts[1], NULL);
            g_strfreev(parts);
        } else {
            repl = g_strdup(rules[i][1]);
        }
        GRegex *re = g_regex_new(rules[i][0], G_REGEX_DOTALL | G_REGEX_CASELESS, 0, NULL);
        char *next = re ? g_regex_replace(re, svg, -1, 0, repl, 0, NULL) : NULL;
        if (re)
            g_regex_unref(re);
        g_free(repl);
        if (next) {
            g_free(svg);
            svg = next;
        }
    }
    return svg;
}

void report_add_svg(Report *r, const char *caption, const char *path)
{
    char *data = NULL;
    GError *e = NULL;
    if (!g_file_get_contents(path, &data, NULL, &e)) {
        char *w = g_strdup_printf("plot %s could not be read: %s", caption ? caption : "", e->message);
        report_add_warning(r, w);
        g_free(w);
        g_error_free(e);
        return;
    }
    char *prefix = g_strdup_printf("p%d-", r->nplots + 1);
    char *valid = g_utf8_make_valid(data, -1);
    char *svg = svg_inline(valid, prefix);
    g_free(valid);
    g_free(data);
    g_free(prefix);
    if (!svg) {
        char *w = g_strdup_printf("plot %s is not an SVG picture", caption ? caption : "");
        report_add_warning(r, w);
        g_free(w);
        return;
    }
    r->nplots++;
    g_string_append(r->plots, "<figure>\n");
    g_string_append(r->plots, svg);
    g_string_append(r->plots, "\n<figcaption>");
    esc(r->plots, caption);
    g_string_append(r->plots, "</figcaption>\n</figure>\n");
    g_free(svg);
}

void report_add_warning(Report *r, const char *text)
{
    g_string_append(r->warnings, "<li>");
    esc(r->warnings, text);
    g_string_append(r->warnings, "</li>\n");
    r->nwarnings++;
}

void report_add_warnings(Report *r, const cJSON *warnings)
{
    const cJSON *w;
    cJSON_ArrayForEach(w, warnings)
    {
        if (cJSON_IsString(w))
            report_add_warning(r, w->valuestring);
    }
}

/* Every string member whose key begins with "source", depth first. */
static void collect_sources(const cJSON *o, const char *path, GString *out)
{
    const cJSON *c;
    int i = 0;
    cJSON_ArrayForEach(c, o)
    {
        char *p = c->string ? (*path ? g_strdup_printf("%s.%s", path, c->string) : g_strdup(c->string))
                            : g_strdup_printf("%s[%d]", path, i);
        i++;
        if (c->string && g_str_has_prefix(c->string, "source") && cJSON_IsString(c)) {
            g_string_append(out, "<dt>");
            esc(out, p);
            g_string_append(out, "</dt><dd>");
            esc(out, c->valuestring);
            g_string_append(out, "</dd>\n");
        } else if (cJSON_IsObject(c) || cJSON_IsArray(c)) {
            collect_sources(c, p, out);
        }
        g_free(p);
    }
}

void report_add_sources(Report *r, const char *label, const char *path)
{
    if (!path || g_hash_table_contains(r->source_files, path))
        return;
    g_hash_table_add(r->source_files, g_strdup(path));
    char *text = NULL;
    GError *e = NULL;
    if (!g_file_get_contents(path, &text, NULL, &e)) {
        char *w = g_strdup_printf("sources of %s: %s", label ? label : path, e->message);
        report_add_warning(r, w);
        g_free(w);
        g_error_free(e);
        return;
    }
    cJSON *doc = cJSON_Parse(text);
    g_free(text);
    if (!doc) {
        char *w = g_strdup_printf("sources of %s: %s is not JSON", label ? label : path, path);
        report_add_warning(r, w);
        g_free(w);
        return;
    }
    GString *list = g_string_new(NULL);
    collect_sources(doc, "", list);
    cJSON_Delete(doc);
    g_string_append(r->sources, "<section class=\"source\"><h3>");
    esc(r->sources, label ? label : path);
    g_string_append(r->sources, "</h3>\n<p class=\"file\">");
    esc(r->sources, path);
    g_string_append(r->sources, "</p>\n");
    if (list->len) {
        g_string_append(r->sources, "<dl>\n");
        g_string_append(r->sources, list->str);
        g_string_append(r->sources, "</dl>\n");
    } else {
        g_string_append(r->sources, "<p>(this file gives no source)</p>\n");
    }
    g_string_append(r->sources, "</section>\n");
    g_string_free(list, TRUE);
}

void report_add_preset_sources(Report *r, const char *subdir, const char *label, const char *name_or_path)
{
    if (!name_or_path || !*name_or_path)
        return;
    char *path = sim_data_resolve(subdir, label ? label : "preset", name_or_path, NULL);
    if (!path)
        return;
    char *full = g_strdup_printf("%s %s", label ? label : "preset", name_or_path);
    report_add_sources(r, full, path);
    g_free(full);
    g_free(path);
}

void report_set_json(Report *r, const cJSON *json)
{
    g_free(r->json);
    r->json = NULL;
    char *s = json ? cJSON_Print(json) : NULL;
    if (!s)
        return;
    /* inside <script> only "</" can end it early: every "<" becomes \u003c
     * (it occurs only inside JSON strings, where that escape means the same) */
    GString *o = g_string_new(NULL);
    for (const char *p = s; *p; p++) {
        if (*p == '<')
            g_string_append(o, "\\u003c");
        else
            g_string_append_c(o, *p);
    }
    cJSON_free(s);
    r->json = g_string_free(o, FALSE);
}

static const char style[] =
    "body{font-family:sans-serif;margin:2em auto;max-width:1200px;padding:0 1em;color:#222}"
    "h1{font-size:1.5em}h2{font-size:1.2em;border-bottom:1px solid #ccc;margin-top:2em}"
    "h3{font-size:1em;margin-bottom:0.2em}pre{background:#f6f6f6;padding:0.5em;overflow-x:auto}"
    "table{border-collapse:collapse;margin:1em 0;font-size:0.9em}caption{text-align:left;font-weight:bold;"
    "padding:0.3em 0}th,td{border:1px solid #ccc;padding:0.2em 0.5em}th{background:#eee}"
    "td.num{text-align:right;font-variant-numeric:tabular-nums}figure{margin:1em 0}"
    "figure svg{max-width:100%;height:auto;display:block}figcaption{font-size:0.9em;color:#555}"
    "ul.warnings li{color:#8a4b00}dt{font-family:monospace;margin-top:0.3em}dd{margin-left:1.5em}"
    "p.file{font-family:monospace;color:#555;margin:0}";

static void section(GString *page, const char *id, const char *heading, const GString *body, const char *pre,
                    const char *post)
{
    g_string_append_printf(page, "<section id=\"%s\">\n<h2>%s</h2>\n", id, heading);
    g_string_append(page, pre);
    g_string_append(page, body->str);
    g_string_append(page, post);
    g_string_append(page, "</section>\n");
}

bool report_write(const Report *r, const char *path, GError **err)
{
    GString *page = g_string_new("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                                 "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>");
    esc(page, r->title);
    g_string_append_printf(page, "</title>\n<style>%s</style>\n</head>\n<body>\n<h1>", style);
    esc(page, r->title);
    g_string_append(page, "</h1>\n<p class=\"generator\">shardsim " SHARDSIM_VERSION "</p>\n");
    GString *none = g_string_new("<p>None.</p>\n");
    section(page, "inputs", "Inputs", r->inputs, "", "");
    section(page, "tables", "Results", r->tables, "", "");
    if (r->nplots)
        section(page, "plots", "Plots", r->plots, "", "");
    section(page, "warnings", "Warnings", r->nwarnings ? r->warnings : none, r->nwarnings ? "<ul class=\"warnings\">\n" : "",
            r->nwarnings ? "</ul>\n" : "");
    section(page, "sources", "Sources of the presets used", r->sources->len ? r->sources : none, "", "");
    g_string_free(none, TRUE);
    if (r->json) {
        g_string_append(page, "<script type=\"application/json\" id=\"shardsim-json\">\n");
        g_string_append(page, r->json);
        g_string_append(page, "\n</script>\n");
    }
    g_string_append(page, "</body>\n</html>\n");
    GError *e = NULL;
    bool ok = sim_file_write(path, page->str, (gssize)page->len, &e);
    g_string_free(page, TRUE);
    if (!ok) {
        g_set_error(err, SIM_ERROR, SIM_ERROR_INTERNAL, "report: %s", e->message);
        g_error_free(e);
    }
    return ok;
}
