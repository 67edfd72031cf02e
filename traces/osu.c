#include "osu.h"
#include "trace_text.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>

struct OsuTrace {
    char *name;
    GArray *rows;          /* OsuRow */
    GStringChunk *strings; /* datatypes */
    char *title, *version;
    NcclTestsOp op;
    GPtrArray *hkeys, *hvals;
};

typedef enum { COL_SIZE, COL_AVG, COL_MIN, COL_MAX, COL_ITER, COL_VALID, COL_SKIP } ColKind;

#define MAX_COLS 32

typedef struct {
    int n;
    ColKind col[MAX_COLS];
} Layout;







/* "Latency(us)" or "Latency" "(us)" at t[i]; returns tokens used (0 if not). */
static int latency_words(const TraceTok *t, int n, int i)
{
    if (i < n && trace_tok_is(t[i], "Latency(us)"))
        return 1;
    if (i + 1 < n && trace_tok_is(t[i], "Latency") && trace_tok_is(t[i + 1], "(us)"))
        return 2;
    return 0;
}

/* The header's tokens after '#'.  On failure `bad` is the unknown word. */
static bool layout_from_header(const TraceTok *t, int n, Layout *L, TraceTok *bad)
{
    Layout l = { 0 };
    int i = 0;
    while (i < n) {
        int used = 0;
        ColKind k = COL_SKIP;
        if (trace_tok_is(t[i], "Size")) {
            k = COL_SIZE, used = 1;
        } else if ((trace_tok_is(t[i], "Avg") || trace_tok_is(t[i], "Min") || trace_tok_is(t[i], "Max")) &&
                   (used = latency_words(t, n, i + 1)) > 0) {
            k = trace_tok_is(t[i], "Avg") ? COL_AVG : trace_tok_is(t[i], "Min") ? COL_MIN : COL_MAX;
            used += 1;
        } else if ((used = latency_words(t, n, i)) > 0) {
            k = COL_AVG; /* point-to-point "Latency (us)" */
        } else if (trace_tok_is(t[i], "Iterations")) {
            k = COL_ITER, used = 1;
        } else if (trace_tok_is(t[i], "Validation")) {
            k = COL_VALID, used = 1;
        } else if (i + 1 < n && trace_tok_is(t[i], "Transmit") && trace_tok_is(t[i + 1], "Size")) {
            used = 2;
        } else if (i + 2 < n && t[i].len >= 2 && t[i].s[0] == 'P' && isdigit((unsigned char)t[i].s[1]) &&
                   trace_tok_is(t[i + 1], "Tail") && (trace_tok_is(t[i + 2], "Lat(us)") || trace_tok_is(t[i + 2], "BW(MB/s)"))) {
            used = 3;
        } else {
            *bad = t[i];
            return false;
        }
        if (l.n >= MAX_COLS) {
            *bad = t[i];
            return false;
        }
        l.col[l.n++] = k;
        i += used;
    }
    *L = l;
    return true;
}

static const struct {
    const char *title; /* between "OSU MPI[-X] " and " Latency Test" */
    const char *binary;
    NcclTestsOp op;
} OPS[] = {
    { "Allreduce", "osu_allreduce", NCCLTESTS_ALLREDUCE },
    { "Reduce_scatter", "osu_reduce_scatter", NCCLTESTS_REDUCESCATTER },
    { "Reduce_scatter_block", "osu_reduce_scatter_block", NCCLTESTS_REDUCESCATTER },
    { "Allgather", "osu_allgather", NCCLTESTS_ALLGATHER },
    { "Broadcast", "osu_bcast", NCCLTESTS_BROADCAST },
    { "Reduce", "osu_reduce", NCCLTESTS_REDUCE },
    { "All-to-All Personalized Exchange", "osu_alltoall", NCCLTESTS_ALLTOALL },
};
#define N_OPS (sizeof OPS / sizeof OPS[0])

/* "OSU MPI Allreduce Latency Test v7.3" (after '#' and blanks): sets title,
 * version and returns the op named (UNKNOWN for other benchmarks). */
static NcclTestsOp parse_title(OsuTrace *tr, const char *s)
{
    const char *v = NULL;
    for (const char *p = strstr(s, " v"); p; p = strstr(p + 1, " v"))
        if (isdigit((unsigned char)p[2]))
            v = p;
    char *title = v ? g_strndup(s, (gsize)(v - s)) : g_strdup(s);
    g_strstrip(title);
    g_free(tr->title);
    g_free(tr->version);
    tr->title = title;
    tr->version = v ? g_strstrip(g_strdup(v + 2)) : NULL;
    /* skip "OSU MPI" and an accelerator suffix such as "-CUDA" */
    const char *p = title + strlen("OSU MPI");
    while (*p && *p != ' ')
        p++;
    while (*p == ' ')
        p++;
    const char *end = strstr(p, " Latency Test");
    if (!end)
        return NCCLTESTS_UNKNOWN;
    for (size_t i = 0; i < N_OPS; i++)
        if (strlen(OPS[i].title) == (size_t)(end - p) && g_ascii_strncasecmp(p, OPS[i].title, (gsize)(end - p)) == 0)
            return OPS[i].op;
    return NCCLTESTS_UNKNOWN;
}

/* The first osu_* benchmark named as a whole word in `s`. */
static NcclTestsOp op_mentioned(const char *s)
{
    const char *best = NULL;
    NcclTestsOp op = NCCLTESTS_UNKNOWN;
    for (size_t i = 0; i < N_OPS; i++) {
        size_t n = strlen(OPS[i].binary);
        for (const char *p = strstr(s, OPS[i].binary); p; p = strstr(p + 1, OPS[i].binary)) {
            bool left = p == s || !(isalnum((unsigned char)p[-1]) || p[-1] == '_');
            bool right = !(isalnum((unsigned char)p[n]) || p[n] == '_');
            if (left && right) {
                if (!best || p < best) {
                    best = p;
                    op = OPS[i].op;
                }
                break;
            }
        }
    }
    return op;
}

static const char *strip_launcher_prefix(const char *s)
{
    if (*s != '[')
        return s;
    const char *q = s + 1;
    while (isdigit((unsigned char)*q) || *q == ',')
        q++;
    if (*q == ']' && (g_str_has_prefix(q + 1, "<stdout>:") || g_str_has_prefix(q + 1, "<stderr>:")))
        return q + 10;
    return s;
}

static bool parse_row(OsuTrace *tr, const Layout *L, const TraceTok *t, int n, const char *dtype, int line, GError **err)
{
    if (n != L->n) {
        trace_input_error(err, tr->name, line, "result row has %d fields, the column header %d", n, L->n);
        return false;
    }
    OsuRow r = { .min_us = NAN, .max_us = NAN, .iterations = -1, .validation = -1, .datatype = dtype, .line = line };
    bool have_size = false, have_avg = false;
    for (int i = 0; i < n && i < MAX_COLS; i++) {
        double v = 0;
        uint64_t u = 0;
        switch (L->col[i]) {
        case COL_SIZE:
            if (!trace_tok_u64(t[i], &u)) {
                trace_input_error(err, tr->name, line, "size \"%.*s\" is not a whole number of bytes", t[i].len, t[i].s);
                return false;
            }
            r.size_bytes = u;
            have_size = true;
            break;
        case COL_AVG:
        case COL_MIN:
        case COL_MAX:
            if (!trace_tok_double(t[i], &v) || v < 0) {
                trace_input_error(err, tr->name, line, "latency \"%.*s\" is not a number >= 0", t[i].len, t[i].s);
                return false;
            }
            *(L->col[i] == COL_AVG ? &r.avg_us : L->col[i] == COL_MIN ? &r.min_us : &r.max_us) = v;
            have_avg = have_avg || L->col[i] == COL_AVG;
            break;
        case COL_ITER:
            if (!trace_tok_u64(t[i], &u) || u > (uint64_t)G_MAXLONG) {
                trace_input_error(err, tr->name, line, "iterations \"%.*s\" is not a whole number", t[i].len, t[i].s);
                return false;
            }
            r.iterations = (long)u;
            break;
        case COL_VALID:
            if (trace_tok_is(t[i], "Pass"))
                r.validation = 1;
            else if (trace_tok_is(t[i], "Fail"))
                r.validation = 0;
            else {
                trace_input_error(err, tr->name, line, "validation \"%.*s\" is neither Pass nor Fail", t[i].len,
                                t[i].s);
                return false;
            }
            break;
        case COL_SKIP:
            if (!trace_tok_double(t[i], &v)) {
                trace_input_error(err, tr->name, line, "field %d \"%.*s\" is not a number", i + 1, t[i].len, t[i].s);
                return false;
            }
            break;
        }
    }
    if (!have_size || !have_avg) {
        trace_input_error(err, tr->name, line, "the column header has no %s column", have_size ? "latency" : "Size");
        return false;
    }
    if (r.min_us > r.max_us || (!isnan(r.min_us) && r.avg_us < r.min_us * (1 - 1e-6) - 0.01) ||
        (!isnan(r.max_us) && r.avg_us > r.max_us * (1 + 1e-6) + 0.01)) {
        trace_input_error(err, tr->name, line, "average latency %g us is outside [min, max] = [%g, %g]", r.avg_us,
                        r.min_us, r.max_us);
        return false;
    }
    g_array_append_val(tr->rows, r);
    return true;
}

void osu_free(OsuTrace *t)
{
    if (!t)
        return;
    g_free(t->name);
    g_array_free(t->rows, TRUE);
    g_string_chunk_free(t->strings);
    g_free(t->title);
    g_free(t->version);
    g_ptr_array_free(t->hkeys, TRUE);
    g_ptr_array_free(t->hvals, TRUE);
    g_free(t);
}

OsuTrace *osu_parse(const char *name, const char *text, GError **err)
{
    OsuTrace *tr = g_new0(OsuTrace, 1);
    tr->name = g_strdup(name ? name : "(text)");
    tr->rows = g_array_new(FALSE, FALSE, sizeof(OsuRow));
    tr->strings = g_string_chunk_new(64);
    tr->hkeys = g_ptr_array_new_with_free_func(g_free);
    tr->hvals = g_ptr_array_new_with_free_func(g_free);

    NcclTestsOp op_named = NCCLTESTS_UNKNOWN, op_title = NCCLTESTS_UNKNOWN, op_command = NCCLTESTS_UNKNOWN;
    Layout layout = { 0 };
    bool have_layout = false, in_provenance = true, ok = true;
    const char *dtype = NULL;
    int lineno = 0;
    const char *p = text ? text : "";
    TraceTok toks[TRACE_MAX_TOKS];

    while (*p && ok) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        char *raw = g_strndup(p, len);
        p += len + (nl ? 1 : 0);
        lineno++;
        g_strchomp(raw);
        const char *s = strip_launcher_prefix(raw);
        while (isspace((unsigned char)*s))
            s++;
        if (*s == 0) {
            /* blank */
        } else if (*s == '#') {
            int klen = in_provenance ? trace_provenance_key(s) : 0;
            if (klen > 0) {
                char *key = g_ascii_strdown(s + 2, klen);
                char *val = g_strstrip(g_strdup(s + 2 + klen + 1));
                if (strcmp(key, "command") == 0 && op_command == NCCLTESTS_UNKNOWN)
                    op_command = op_mentioned(val);
                if (strcmp(key, "datatype") == 0 && *val) {
                    size_t vl = strlen(val);
                    char *d = g_strndup(val, val[vl - 1] == '.' ? vl - 1 : vl);
                    dtype = g_string_chunk_insert_const(tr->strings, d);
                    g_free(d);
                }
                if (strcmp(key, "op") == 0) {
                    op_named = nccltests_op_from_name(val);
                    if (op_named == NCCLTESTS_UNKNOWN) {
                        trace_input_error(err, tr->name, lineno, "unknown collective \"%s\" in '# op:'", val);
                        ok = false;
                    }
                }
                g_ptr_array_add(tr->hkeys, key);
                g_ptr_array_add(tr->hvals, val);
            } else {
                in_provenance = false;
                const char *body = s + 1;
                while (isspace((unsigned char)*body))
                    body++;
                int n = trace_tokenize(body, toks);
                if (g_str_has_prefix(body, "OSU MPI")) {
                    NcclTestsOp o = parse_title(tr, body);
                    if (op_title == NCCLTESTS_UNKNOWN)
                        op_title = o;
                } else if (g_str_has_prefix(body, "Datatype:")) {
                    char *d = g_strstrip(g_strdup(body + strlen("Datatype:")));
                    size_t dl = strlen(d);
                    if (dl > 0 && d[dl - 1] == '.')
                        d[dl - 1] = 0;
                    dtype = *d ? g_string_chunk_insert_const(tr->strings, d) : NULL;
                    g_free(d);
                } else if (n >= 1 && (trace_tok_is(toks[0], "Size") ||
                                      (trace_tok_is(toks[0], "Avg") && latency_words(toks, n, 1) > 0))) {
                    TraceTok bad = { "", 0 };
                    if (n > TRACE_MAX_TOKS || !layout_from_header(toks, n, &layout, &bad)) {
                        trace_input_error(err, tr->name, lineno, "column \"%.*s\" is not one this reader knows",
                                        bad.len, bad.s);
                        ok = false;
                    } else {
                        bool size = false, avg = false;
                        for (int i = 0; i < layout.n; i++) {
                            size = size || layout.col[i] == COL_SIZE;
                            avg = avg || layout.col[i] == COL_AVG;
                        }
                        if (!size || !avg) {
                            trace_input_error(err, tr->name, lineno, "column header has no %s column",
                                            size ? "latency" : "Size");
                            ok = false;
                        }
                        have_layout = ok;
                    }
                }
            }
        } else if (isdigit((unsigned char)*s)) {
            in_provenance = false;
            int n = trace_tokenize(s, toks);
            if (!have_layout) {
                trace_input_error(err, tr->name, lineno, "result row before any \"# Size ...\" column header");
                ok = false;
            } else if (n > TRACE_MAX_TOKS) {
                trace_input_error(err, tr->name, lineno, "result row has %d fields, the column header %d", n,
                                layout.n);
                ok = false;
            } else {
                ok = parse_row(tr, &layout, toks, n, dtype, lineno, err);
            }
        } else {
            in_provenance = false; /* launcher or MPI library noise */
        }
        g_free(raw);
    }
    if (ok && tr->rows->len == 0) {
        trace_input_error(err, tr->name, lineno, "no result rows (expected OSU collective latency output)");
        ok = false;
    }
    if (!ok) {
        osu_free(tr);
        return NULL;
    }
    tr->op = op_named ? op_named : op_title ? op_title : op_command;
    return tr;
}

OsuTrace *osu_load(const char *path, GError **err)
{
    char *text = trace_read_text(path, err);
    if (!text)
        return NULL;
    OsuTrace *t = osu_parse(path, text, err);
    g_free(text);
    return t;
}

const char *osu_name(const OsuTrace *t) { return t->name; }
size_t osu_n_rows(const OsuTrace *t) { return t->rows->len; }
const OsuRow *osu_row(const OsuTrace *t, size_t i)
{
    return i < t->rows->len ? &g_array_index(t->rows, OsuRow, i) : NULL;
}
const char *osu_title(const OsuTrace *t) { return t->title; }
const char *osu_version(const OsuTrace *t) { return t->version; }
NcclTestsOp osu_op(const OsuTrace *t) { return t->op; }
void osu_set_op(OsuTrace *t, NcclTestsOp op) { t->op = op; }
size_t osu_n_headers(const OsuTrace *t) { return t->hkeys->len; }
const char *osu_header_key(const OsuTrace *t, size_t i) { return i < t->hkeys->len ? t->hkeys->pdata[i] : NULL; }
const char *osu_header_value(const OsuTrace *t, size_t i) { return i < t->hvals->len ? t->hvals->pdata[i] : NULL; }
const char *osu_header(const OsuTrace *t, const char *key)
{
    for (guint i = 0; i < t->hkeys->len; i++)
        if (g_ascii_strcasecmp(t->hkeys->pdata[i], key) == 0)
            return t->hvals->pdata[i];
    return NULL;
}
