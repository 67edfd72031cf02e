/* The OSU micro-benchmarks reader: titles, column headers, datatype blocks,
 * result rows and provenance lines of collective and point-to-point output (osu.h). */
#include "osu.h"
#include "trace_text.h"

#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>

struct OsuTrace {
    char *name;
    GArray *rows;          /* OsuRow */
    GStringChunk *strings; /* datatypes */
    char *title, *version;
    NcclTestsOp op;
    OsuMetric metric;
    GPtrArray *hkeys, *hvals;
    GPtrArray *commands; /* launcher lines in the output itself ("$ mpirun -np 2 ...") */
};

typedef enum { COL_SIZE, COL_AVG, COL_MIN, COL_MAX, COL_ITER, COL_VALID, COL_BW, COL_SKIP } ColKind;

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

/* "Bandwidth (MB/s)" or "Bandwidth(MB/s)" at t[i]; returns tokens used (0 if not). */
static int bandwidth_words(const TraceTok *t, int n, int i)
{
    if (i < n && trace_tok_is(t[i], "Bandwidth(MB/s)"))
        return 1;
    if (i + 1 < n && trace_tok_is(t[i], "Bandwidth") && trace_tok_is(t[i + 1], "(MB/s)"))
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
        } else if ((used = bandwidth_words(t, n, i)) > 0) {
            k = COL_BW;
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
    const char *title; /* between "OSU MPI[-X] " and " Test" */
    const char *binary;
    NcclTestsOp op;
    OsuMetric metric;
} OPS[] = {
    { "Allreduce Latency", "osu_allreduce", NCCLTESTS_ALLREDUCE, OSU_LATENCY },
    { "Reduce_scatter Latency", "osu_reduce_scatter", NCCLTESTS_REDUCESCATTER, OSU_LATENCY },
    { "Reduce_scatter_block Latency", "osu_reduce_scatter_block", NCCLTESTS_REDUCESCATTER, OSU_LATENCY },
    { "Allgather Latency", "osu_allgather", NCCLTESTS_ALLGATHER, OSU_LATENCY },
    { "Broadcast Latency", "osu_bcast", NCCLTESTS_BROADCAST, OSU_LATENCY },
    { "Reduce Latency", "osu_reduce", NCCLTESTS_REDUCE, OSU_LATENCY },
    { "All-to-All Personalized Exchange Latency", "osu_alltoall", NCCLTESTS_ALLTOALL, OSU_LATENCY },
    { "Latency", "osu_latency", NCCLTESTS_SENDRECV, OSU_LATENCY },
    { "Bandwidth", "osu_bw", NCCLTESTS_SENDRECV, OSU_BANDWIDTH },
    { "Bi-Directional Bandwidth", "osu_bibw", NCCLTESTS_SENDRECV, OSU_BIBANDWIDTH },
};
#define N_OPS (sizeof OPS / sizeof OPS[0])

/* "OSU MPI Allreduce Latency Test v7.3" (after '#' and blanks): sets title
 * and version and returns the OPS index of the benchmark, -1 for others. */
static int parse_title(OsuTrace *tr, const char *s)
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
    size_t len = strlen(p);
    if (len < 5 || strcmp(p + len - 5, " Test") != 0)
        return -1;
    len -= 5;
    for (size_t i = 0; i < N_OPS; i++)
        if (strlen(OPS[i].title) == len && g_ascii_strncasecmp(p, OPS[i].title, len) == 0)
            return (int)i;
    return -1;
}

/* The osu_* benchmarks named as whole words in `s`: a mask of 1 << OPS
 * index, and the first one's index in *first (-1 if none). */
static unsigned benchmarks_mentioned(const char *s, int *first)
{
    const char *best = NULL;
    unsigned mask = 0;
    *first = -1;
    for (size_t i = 0; i < N_OPS; i++) {
        size_t n = strlen(OPS[i].binary);
        for (const char *p = strstr(s, OPS[i].binary); p; p = strstr(p + 1, OPS[i].binary)) {
            bool left = p == s || !(isalnum((unsigned char)p[-1]) || p[-1] == '_');
            bool right = !(isalnum((unsigned char)p[n]) || p[n] == '_');
            if (left && right) {
                mask |= 1u << i;
                if (!best || p < best) {
                    best = p;
                    *first = (int)i;
                }
                break;
            }
        }
    }
    return mask;
}

static bool parse_row(OsuTrace *tr, const Layout *L, const TraceTok *t, int n, const char *dtype, int line, GError **err)
{
    if (n != L->n) {
        trace_input_error(err, tr->name, line, "result row has %d fields, the column header %d", n, L->n);
        return false;
    }
    OsuRow r = { .avg_us = NAN, .min_us = NAN, .max_us = NAN, .bw_mbs = NAN, .iterations = -1, .validation = -1,
                 .datatype = dtype, .line = line };
    bool have_size = false, have_avg = false;
    for (int i = 0; i < n && i < MAX_COLS; i++) {
        double v = 0;
        uint64_t u = 0;
        switch (L->col[i]) {
        case COL_SIZE:
            if (!trace_tok_u64(t[i], &u) || (double)u > TRACE_MAX_BYTES) {
                trace_input_error(err, tr->name, line, "size \"%.*s\" is not a whole number of bytes up to 1 TiB",
                                  t[i].len, t[i].s);
                return false;
            }
            r.size_bytes = u;
            have_size = true;
            break;
        case COL_AVG:
        case COL_MIN:
        case COL_MAX:
            if (!trace_tok_double(t[i], &v) || !trace_measure_ok(v, TRACE_MAX_US)) {
                trace_input_error(err, tr->name, line, "latency \"%.*s\" is not 0 or a number of us from 0.001 to 1e10", t[i].len,
                                  t[i].s);
                return false;
            }
            *(L->col[i] == COL_AVG ? &r.avg_us : L->col[i] == COL_MIN ? &r.min_us : &r.max_us) = v;
            have_avg = have_avg || L->col[i] == COL_AVG;
            break;
        case COL_BW:
            if (!trace_tok_double(t[i], &v) || !trace_measure_ok(v, TRACE_MAX_MBS)) {
                trace_input_error(err, tr->name, line, "bandwidth \"%.*s\" is not 0 or a number of MB/s from 0.001 to 1e9",
                                  t[i].len, t[i].s);
                return false;
            }
            r.bw_mbs = v;
            have_avg = true;
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
        trace_input_error(err, tr->name, line, "the column header has no %s column",
                          have_size ? "latency or bandwidth" : "Size");
        return false;
    }
    if (r.min_us > r.max_us || (!isnan(r.min_us) && r.avg_us < r.min_us * (1 - 1e-6) - 0.01) ||
        (!isnan(r.max_us) && r.avg_us > r.max_us * (1 + 1e-6) + 0.01)) {
        trace_input_error(err, tr->name, line, "average latency %g us is outside [min, max] = [%g, %g]", r.avg_us,
                        r.min_us, r.max_us);
        return false;
    }
    if (!trace_rate_ok((double)r.size_bytes, r.avg_us)) {
        trace_input_error(err, tr->name, line, "%" PRIu64 " B in %g us is %.3g GB/s: not a measurement", r.size_bytes,
                          r.avg_us, r.size_bytes / (r.avg_us * 1e3));
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
    g_ptr_array_free(t->commands, TRUE);
    g_free(t);
}

/* Evidence of which benchmark ran: an OPS index (or -1) and its line. */
typedef struct {
    int bench, line;
} Said;

typedef struct {
    OsuTrace *tr;
    GError **err;
    int lineno;
    Layout layout;
    bool have_layout, in_provenance;
    int layout_metric, layout_line; /* OSU_BANDWIDTH when the header has a Bandwidth column */
    const char *dtype;
    int block_start;   /* first row of the current datatype block */
    NcclTestsOp named; /* '# op:' */
    int named_line;
    Said title, command, prov;
    bool titled;       /* a title line was seen (title.bench -1: a benchmark not listed) */
    unsigned prov_mask;
    int words;         /* lines carry a "node001: " prefix (the first one's): 1, 0; -1 undecided */
} OsuParser;

static bool osu_provenance(OsuParser *P, const char *s, int klen)
{
    OsuTrace *tr = P->tr;
    char *key = g_ascii_strdown(s + 2, klen);
    char *val = g_strstrip(g_strdup(s + 2 + klen + 1));
    bool ok = true;
    int first;
    unsigned m = benchmarks_mentioned(val, &first);
    if (strcmp(key, "command") == 0 && P->command.line == 0) {
        P->command = (Said){ first, P->lineno };
    } else if (strcmp(key, "datatype") == 0 && *val) {
        size_t vl = strlen(val);
        char *d = g_strndup(val, val[vl - 1] == '.' ? vl - 1 : vl);
        P->dtype = g_string_chunk_insert_const(tr->strings, d);
        g_free(d);
    } else if (strcmp(key, "op") == 0) {
        P->named = nccltests_op_from_name(val);
        P->named_line = P->lineno;
        if (P->named == NCCLTESTS_UNKNOWN) {
            trace_input_error(P->err, tr->name, P->lineno, "unknown collective \"%s\" in '# op:'", val);
            ok = false;
        }
    } else if (m) {
        if (!P->prov_mask)
            P->prov = (Said){ first, P->lineno };
        P->prov_mask |= m;
    }
    g_ptr_array_add(tr->hkeys, key);
    g_ptr_array_add(tr->hvals, val);
    return ok;
}

static const char *bench_name(int i) { return i >= 0 ? OPS[i].binary : "another benchmark"; }

static bool osu_title_line(OsuParser *P, const char *body)
{
    int b = parse_title(P->tr, body);
    if (P->titled && P->tr->rows->len > 0) {
        if (b != P->title.bench)
            trace_input_error(P->err, P->tr->name, P->lineno, "second table is %s at line %d, the first was %s at line %d",
                              bench_name(b), P->lineno, bench_name(P->title.bench), P->title.line);
        else
            trace_input_error(P->err, P->tr->name, P->lineno,
                              "a second %s output starts here (the first at line %d): give each run its own file",
                              bench_name(b), P->title.line);
        return false;
    }
    if (P->titled && b != P->title.bench) {
        trace_input_error(P->err, P->tr->name, P->lineno, "title of %s here, of %s at line %d", bench_name(b),
                          bench_name(P->title.bench), P->title.line);
        return false;
    }
    P->titled = true;
    P->title = (Said){ b, P->lineno };
    return true;
}

static bool osu_header_line(OsuParser *P, const TraceTok *toks, int n)
{
    TraceTok bad = { "", 0 };
    if (n > TRACE_MAX_TOKS || !layout_from_header(toks, n, &P->layout, &bad)) {
        trace_input_error(P->err, P->tr->name, P->lineno, "column \"%.*s\" is not one this reader knows", bad.len,
                          bad.s);
        return false;
    }
    bool size = false, avg = false, bw = false;
    for (int i = 0; i < P->layout.n; i++) {
        size = size || P->layout.col[i] == COL_SIZE;
        avg = avg || P->layout.col[i] == COL_AVG;
        bw = bw || P->layout.col[i] == COL_BW;
    }
    if (!size || avg == bw) {
        trace_input_error(P->err, P->tr->name, P->lineno, "column header has %s", !size ? "no Size column"
                          : avg ? "both a latency and a bandwidth column" : "no latency or bandwidth column");
        return false;
    }
    OsuMetric m = bw ? OSU_BANDWIDTH : OSU_LATENCY;
    if (P->have_layout && P->tr->rows->len > 0 && (int)m != (int)P->layout_metric) {
        /* datatype blocks repeat the header; a table of the other kind is another run */
        trace_input_error(P->err, P->tr->name, P->lineno, "second table measures %s, the first (line %d) %s",
                          bw ? "bandwidth" : "latency", P->layout_line, bw ? "latency" : "bandwidth");
        return false;
    }
    P->have_layout = true;
    P->layout_metric = m;
    P->layout_line = P->lineno;
    return true;
}

/* A '#' line that is not provenance; free text at the top ("# converted
 * from ...") does not end the provenance block, OSU's own lines do. */
static bool osu_comment(OsuParser *P, const char *s)
{
    const char *body = s + 1;
    while (isspace((unsigned char)*body))
        body++;
    TraceTok toks[TRACE_MAX_TOKS];
    int n = trace_tokenize(body, toks);
    bool header = n >= 1 && (trace_tok_is(toks[0], "Size") || (trace_tok_is(toks[0], "Avg") && latency_words(toks, n, 1) > 0));
    bool osu = g_str_has_prefix(body, "OSU MPI") || g_str_has_prefix(body, "Datatype:") || header;
    if (osu)
        P->in_provenance = false;
    if (g_str_has_prefix(body, "OSU MPI"))
        return osu_title_line(P, body);
    if (g_str_has_prefix(body, "Datatype:")) {
        char *d = g_strstrip(g_strdup(body + strlen("Datatype:")));
        size_t dl = strlen(d);
        if (dl > 0 && d[dl - 1] == '.')
            d[dl - 1] = 0;
        P->dtype = *d ? g_string_chunk_insert_const(P->tr->strings, d) : NULL;
        g_free(d);
        P->block_start = (int)P->tr->rows->len;
        return true;
    }
    if (header)
        return osu_header_line(P, toks, n);
    return true;
}

static bool osu_row_line(OsuParser *P, const char *s)
{
    OsuTrace *tr = P->tr;
    TraceTok toks[TRACE_MAX_TOKS];
    P->in_provenance = false;
    int n = trace_tokenize(s, toks);
    if (!P->have_layout) {
        trace_input_error(P->err, tr->name, P->lineno, "result row before any \"# Size ...\" column header");
        return false;
    }
    if (n > TRACE_MAX_TOKS) {
        trace_input_error(P->err, tr->name, P->lineno, "result row has %d fields, the column header %d", n,
                          P->layout.n);
        return false;
    }
    if (tr->rows->len >= TRACE_MAX_ROWS) {
        trace_input_error(P->err, tr->name, P->lineno, "more than %d result rows in one file: split it",
                          TRACE_MAX_ROWS);
        return false;
    }
    if (!parse_row(tr, &P->layout, toks, n, P->dtype, P->lineno, P->err))
        return false;
    guint k = tr->rows->len;
    if ((int)k - 1 > P->block_start) {
        const OsuRow *prev = &g_array_index(tr->rows, OsuRow, k - 2), *r = &g_array_index(tr->rows, OsuRow, k - 1);
        if (r->size_bytes <= prev->size_bytes) {
            trace_input_error(P->err, tr->name, P->lineno,
                              "size %" PRIu64 " does not grow from %" PRIu64 " at line %d (a table given twice?)",
                              r->size_bytes, prev->size_bytes, prev->line);
            return false;
        }
    }
    return true;
}

/* nccl-tests' parameter line or column header: another benchmark's output
 * in the file, whose rows this reader would pass over as the job's. */
static bool nccl_tests_line(const char *s)
{
    return (strstr(s, "nThread") && strstr(s, "nGpus")) || strstr(s, "out-of-place") || strstr(s, "(elements)");
}

static bool osu_line(OsuParser *P, char *raw)
{
    g_strchomp(raw);
    if (P->words < 0 && *raw)
        P->words = trace_words_prefixed(raw);
    const char *s = trace_strip_prefix(raw, P->words == 1);
    while (isspace((unsigned char)*s))
        s++;
    if (*s == 0)
        return true;
    int klen = *s == '#' && P->in_provenance ? trace_provenance_key(s) : 0;
    if (klen > 0) /* a provenance note may name anything */
        return osu_provenance(P, s, klen);
    if (nccl_tests_line(s)) {
        trace_input_error(P->err, P->tr->name, P->lineno,
                          "nccl-tests output in an OSU file: one benchmark's output per file");
        return false;
    }
    if (*s == '#')
        return osu_comment(P, s);
    /* a sign before the digits is still a row (and a bad one): never skipped */
    const char *d = (*s == '-' || *s == '+') ? s + 1 : s;
    if (isdigit((unsigned char)*d) && !P->titled && !P->have_layout) {
        P->in_provenance = false; /* before OSU's first line: the job's own output ("1) GCCcore/12.3.0") */
        return true;
    }
    if (isdigit((unsigned char)*d))
        return osu_row_line(P, s);
    P->in_provenance = false; /* launcher or MPI library noise */
    const char *cmd = *s == '$' || *s == '+' ? s + 1 + strspn(s + 1, " \t") : s;
    static const char *const launchers[] = {"mpirun ", "mpiexec ", "srun "};
    for (size_t i = 0; i < G_N_ELEMENTS(launchers) && P->tr->commands->len < 64; i++)
        if (g_str_has_prefix(cmd, launchers[i])) {
            g_ptr_array_add(P->tr->commands, g_strdup(cmd));
            break;
        }
    return true;
}

/* The benchmark from '# op:', the title, '# command:' or the one benchmark
 * the other headers name; contradictions are bad input. */
static bool osu_resolve(OsuParser *P)
{
    OsuTrace *tr = P->tr;
    const Said *said[] = { &P->title, &P->command };
    const char *what[] = { "the title", "'# command:'" };
    for (int i = 0; i < 2; i++) {
        int b = said[i]->bench;
        if (P->named && b >= 0 && OPS[b].op != P->named) {
            trace_input_error(P->err, tr->name, P->named_line, "'# op:' says %s, but %s at line %d is %s",
                              nccltests_op_name(P->named), what[i], said[i]->line, OPS[b].binary);
            return false;
        }
    }
    int tb = P->title.bench, cb = P->command.bench;
    if (P->titled && cb >= 0 && (tb < 0 || OPS[tb].op != OPS[cb].op || OPS[tb].metric != OPS[cb].metric)) {
        trace_input_error(P->err, tr->name, P->command.line, "'# command:' runs %s, but the title at line %d is %s",
                          OPS[cb].binary, P->title.line, bench_name(tb));
        return false;
    }
    bool prov_one = P->prov_mask && !(P->prov_mask & (P->prov_mask - 1));
    int b = P->titled ? tb : cb >= 0 ? cb : prov_one ? P->prov.bench : -1;
    tr->op = P->named ? P->named : b >= 0 ? OPS[b].op : NCCLTESTS_UNKNOWN;
    tr->metric = b >= 0 ? OPS[b].metric : OSU_LATENCY;
    bool table_bw = P->layout_metric == OSU_BANDWIDTH;
    if (b >= 0 && (OPS[b].metric != OSU_LATENCY) != table_bw) {
        trace_input_error(P->err, tr->name, P->layout_line, "a %s column, but %s is a %s test",
                          table_bw ? "bandwidth" : "latency", OPS[b].binary, table_bw ? "latency" : "bandwidth");
        return false;
    }
    if (b < 0 && table_bw) {
        trace_input_error(P->err, tr->name, P->layout_line,
                          "a bandwidth table, but no title or '# command:' tells osu_bw from osu_bibw");
        return false;
    }
    return true;
}

OsuTrace *osu_parse(const char *name, const char *text, GError **err)
{
    OsuTrace *tr = g_new0(OsuTrace, 1);
    tr->name = g_strdup(name ? name : "(text)");
    tr->rows = g_array_new(FALSE, FALSE, sizeof(OsuRow));
    tr->strings = g_string_chunk_new(64);
    tr->hkeys = g_ptr_array_new_with_free_func(g_free);
    tr->hvals = g_ptr_array_new_with_free_func(g_free);
    tr->commands = g_ptr_array_new_with_free_func(g_free);
    OsuParser P = { .tr = tr, .err = err, .in_provenance = true, .words = -1, .title = { -1, 0 }, .command = { -1, 0 },
                    .prov = { -1, 0 } };
    const char *p = text ? text : "";
    bool ok = true;
    while (*p && ok) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        char *raw = g_strndup(p, len);
        p += len + (nl ? 1 : 0);
        P.lineno++;
        ok = osu_line(&P, raw);
        g_free(raw);
    }
    if (ok && tr->rows->len == 0) {
        trace_input_error(err, tr->name, P.lineno, "no result rows (expected OSU latency or bandwidth output)");
        ok = false;
    }
    ok = ok && osu_resolve(&P);
    if (!ok) {
        osu_free(tr);
        return NULL;
    }
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
OsuMetric osu_metric(const OsuTrace *t) { return t->metric; }
void osu_set_op(OsuTrace *t, NcclTestsOp op) { t->op = op; }
size_t osu_n_headers(const OsuTrace *t) { return t->hkeys->len; }
size_t osu_n_commands(const OsuTrace *t) { return t->commands->len; }
const char *osu_command(const OsuTrace *t, size_t i) { return i < t->commands->len ? t->commands->pdata[i] : NULL; }
const char *osu_header_key(const OsuTrace *t, size_t i) { return i < t->hkeys->len ? t->hkeys->pdata[i] : NULL; }
const char *osu_header_value(const OsuTrace *t, size_t i) { return i < t->hvals->len ? t->hvals->pdata[i] : NULL; }
const char *osu_header(const OsuTrace *t, const char *key)
{
    for (guint i = 0; i < t->hkeys->len; i++)
        if (g_ascii_strcasecmp(t->hkeys->pdata[i], key) == 0)
            return t->hvals->pdata[i];
    return NULL;
}

