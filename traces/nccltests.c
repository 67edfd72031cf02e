/* The nccl-tests line reader: each line of the text classified (provenance
 * header, comment, result row, log line, launcher noise), result rows handed
 * to nccltests_row.c with their table's column layout, Rank/parameter/version
 * lines noted, and the lines that open a run splitting the file into runs
 * (nccltests_runs.c then settles each run's collective and rank count).  The
 * format is described in nccltests.h. */
#include "nccltests_row.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* "#  Rank  3 Group  0 Pid 123 on host device  3 [0x5d] NVIDIA H100 80GB HBM3" */
static void parse_rank_line(NcclTrace *tr, const TraceTok *t, int n)
{
    int rank = 0;
    if (n < 2 || !trace_tok_int(t[1], &rank))
        return;
    const char *host = NULL;
    int hostlen = 0;
    const char *devname = NULL;
    TraceTok pid = {NULL, 0};
    for (int i = 2; i + 1 < n && i + 1 < TRACE_MAX_TOKS; i++) {
        if (trace_tok_is(t[i], "Group") && !host)
            tr->rank_groups = true;
        if (trace_tok_is(t[i], "Pid") && !host)
            pid = t[i + 1];
        if (trace_tok_is(t[i], "on") && !host) {
            host = t[i + 1].s;
            hostlen = t[i + 1].len;
        }
        if (trace_tok_is(t[i], "device") && host) {
            int j = i + 2; /* past the device number */
            if (j < n && j < TRACE_MAX_TOKS && t[j].s[0] == '[') {
                const char *close = strchr(t[j].s, ']');
                if (close)
                    devname = close + 1;
            }
            break;
        }
    }
    if (!host)
        return;
    char *h = g_strndup(host, (gsize)hostlen);
    int prev = GPOINTER_TO_INT(g_hash_table_lookup(tr->hosts, h));
    bool fresh = !g_hash_table_contains(tr->ranks, GINT_TO_POINTER(rank));
    if (pid.s && fresh) { /* the process layout: ranks per (host, Pid) */
        char *key = g_strdup_printf("%.*s %.*s", hostlen, host, pid.len, pid.s);
        int k = GPOINTER_TO_INT(g_hash_table_lookup(tr->procs, key));
        g_hash_table_insert(tr->procs, key, GINT_TO_POINTER(k + 1));
    }
    if (fresh)
        g_hash_table_add(tr->ranks, GINT_TO_POINTER(rank));
    /* takes `h` (freed here when the host is already known) */
    g_hash_table_insert(tr->hosts, h, GINT_TO_POINTER(prev + (fresh ? 1 : 0)));
    if (devname) {
        char *d = g_strstrip(g_strdup(devname));
        if (*d && !g_ptr_array_find_with_equal_func(tr->devices, d, g_str_equal, NULL))
            g_ptr_array_add(tr->devices, d);
        else
            g_free(d);
    }
}

void nccltests_note_rank(NcclTrace *tr, const char *line)
{
    TraceTok toks[TRACE_MAX_TOKS];
    int n = trace_tokenize(line, toks);
    if (n >= 2 && trace_tok_is(toks[0], "Rank"))
        parse_rank_line(tr, toks, n);
}

char *nccltests_version_from_code(long code)
{
    /* NCCL_VERSION_CODE: major*10000+minor*100+patch since 2.9, major*1000+minor*100+patch before */
    if (code >= 10000)
        return g_strdup_printf("%ld.%ld.%ld", code / 10000, (code % 10000) / 100, code % 100);
    return g_strdup_printf("%ld.%ld.%ld", code / 1000, (code % 1000) / 100, code % 100);
}

/* The parser's state over the whole file. */
typedef struct {
    const char *name;
    GPtrArray *runs;  /* finished runs */
    NcclTrace *cur;   /* the run being read */
    GPtrArray *hkeys, *hvals;
    FileOps ops;
    NcclLayout layout;
    bool have_layout, in_provenance, last_was_provenance;
    int lineno, rows;
    GString *cut; /* a result row cut by log lines, its fields so far */
    int cut_line; /* where it started */
    bool layout_seen; /* a column layout was read in an earlier run (P->layout keeps it) */
    int words;        /* lines carry a "node001: " prefix, by the first line: 1; not: 0; -1 undecided */
    GHashTable *hosts_seen; /* the hosts of the runs before this one */
    NcclRanLog *ran;  /* NCCL's tuning lines so far */
    GError **err;
} Parser;

/* The run's hosts kept for the runs after it (log_start). */
static void keep_hosts(Parser *P)
{
    GHashTableIter it;
    gpointer k;
    g_hash_table_iter_init(&it, P->cur->hosts);
    while (g_hash_table_iter_next(&it, &k, NULL))
        g_hash_table_add(P->hosts_seen, g_strdup(k));
}

/* A line that opens a run (banner, parameters, devices, column header,
 * separator): after rows, it starts the next run. */
static void run_boundary(Parser *P)
{
    if (P->cur->rows->len == 0)
        return;
    keep_hosts(P);
    g_ptr_array_add(P->runs, P->cur);
    P->cur = nccltests_run_new(P->name, P->lineno);
    P->have_layout = false;
}

/* "N-node" or "N nodes" in a separator line; 0 if none. */
static int nodes_in(const char *s)
{
    for (const char *p = s; *p; p++) {
        if (!isdigit((unsigned char)*p) || (p > s && isdigit((unsigned char)p[-1])))
            continue;
        char *end = NULL;
        long v = strtol(p, &end, 10);
        while (*end == '-' || *end == ' ')
            end++;
        if (v > 0 && v < 1000000 && g_ascii_strncasecmp(end, "node", 4) == 0)
            return (int)v;
    }
    return 0;
}

static bool note_stated_op(Parser *P, const char *s)
{
    NcclTestsOp op = nccltests_op_mentioned(s);
    NcclTrace *r = P->cur;
    if (op == NCCLTESTS_UNKNOWN)
        return true;
    if (r->op_stated == NCCLTESTS_UNKNOWN) {
        r->op_stated = op;
        r->op_stated_line = P->lineno;
    } else if (r->op_stated != op) {
        trace_input_error(P->err, P->name, P->lineno, "this run says %s here and %s at line %d",
                          nccltests_op_name(op), nccltests_op_name(r->op_stated), r->op_stated_line);
        return false;
    }
    return true;
}

static void note_seen_op(Parser *P, const char *s)
{
    NcclTrace *r = P->cur;
    if (r->op_seen != NCCLTESTS_UNKNOWN)
        return;
    r->op_seen = nccltests_op_mentioned(s);
    r->op_seen_line = P->lineno;
}

static bool provenance_line(Parser *P, const char *s, int klen)
{
    char *key = g_ascii_strdown(s + 2, klen);
    char *val = g_strstrip(g_strdup(s + 2 + klen + 1));
    FileOps *F = &P->ops;
    bool ok = true;
    if (strcmp(key, "command") == 0 && F->command == NCCLTESTS_UNKNOWN) {
        F->command = nccltests_op_mentioned(val);
        F->command_line = P->lineno;
    } else if (strcmp(key, "op") == 0) {
        F->named = nccltests_op_from_name(val);
        F->named_line = P->lineno;
        if (F->named == NCCLTESTS_UNKNOWN) {
            trace_input_error(P->err, P->name, P->lineno, "unknown collective \"%s\" in '# op:'", val);
            ok = false;
        }
    } else {
        NcclTestsOp first;
        unsigned m = nccltests_ops_mentioned(val, &first);
        if (m && !F->prov_mask) {
            F->prov = first;
            F->prov_line = P->lineno;
        }
        F->prov_mask |= m;
    }
    g_ptr_array_add(P->hkeys, key);
    g_ptr_array_add(P->hvals, val);
    P->last_was_provenance = true;
    return ok;
}

static void version_line(NcclTrace *tr, const TraceTok *toks, int n)
{
    for (int i = 1; i < n && i < TRACE_MAX_TOKS && !tr->nccl_version; i++) {
        /* rccl-tests prints "rccl-library=", RCCL's code in NCCL's encoding */
        if (toks[i].len > 13 &&
            (strncmp(toks[i].s, "nccl-library=", 13) == 0 || strncmp(toks[i].s, "rccl-library=", 13) == 0)) {
            int code = 0;
            TraceTok c = { toks[i].s + 13, toks[i].len - 13 };
            if (trace_tok_int(c, &code) && code > 0)
                tr->nccl_version = nccltests_version_from_code(code);
        }
    }
}

/* A '#' line that is not provenance (s points at the '#'). */
static bool comment_line(Parser *P, const char *s)
{
    TraceTok toks[TRACE_MAX_TOKS];
    P->in_provenance = P->last_was_provenance = false;
    int n = trace_tokenize(s + 1, toks);
    bool banner = n >= 1 && (trace_tok_is(toks[0], "nccl-tests") || trace_tok_is(toks[0], "rccl-tests"));
    bool starting = strstr(s, "Collective test starting") != NULL;
    bool params = n >= 4 && trace_tok_is(toks[0], "nThread") && trace_tok_is(toks[2], "nGpus");
    bool rank = n >= 2 && trace_tok_is(toks[0], "Rank");
    bool header = n >= 1 && trace_tok_is(toks[0], "size");
    bool devices = n >= 2 && trace_tok_is(toks[0], "Using") && trace_tok_is(toks[1], "devices");
    bool cycle = n >= 2 && trace_tok_is(toks[0], "Testing");
    if (banner || starting || params || rank || header || devices || cycle)
        run_boundary(P);
    NcclTrace *tr = P->cur;
    if (rank) {
        parse_rank_line(tr, toks, n);
    } else if (params) {
        /* nccl-tests' -t and -g: 1 and up (a typed 0 or -3 would run as 1) */
        if (!trace_tok_int(toks[1], &tr->nthread) || !trace_tok_int(toks[3], &tr->ngpus) || tr->nthread < 1 ||
            tr->ngpus < 1 || tr->ngpus > 1024 || tr->nthread > 1024) {
            trace_input_error(P->err, P->name, P->lineno, "nThread \"%.*s\" and nGpus \"%.*s\" must be whole numbers "
                              "from 1 to 1024", toks[1].len, toks[1].s, toks[3].len, toks[3].s);
            return false;
        }
    } else if (header) {
        if (!nccltests_layout_from_header(toks, n, &P->layout)) {
            trace_input_error(P->err, P->name, P->lineno, "column header lacks size/count/type/time/algbw/busbw");
            return false;
        }
        P->have_layout = true;
    } else if (banner && n >= 3 && !tr->nccl_version) {
        version_line(tr, toks, n);
    }
    if (starting || strstr(s, "Collective test concluded"))
        return note_stated_op(P, s);
    note_seen_op(P, s);
    return true;
}

static bool result_line(Parser *P, const char *s)
{
    TraceTok toks[TRACE_MAX_TOKS];
    int n = trace_tokenize(s, toks);
    if (!P->have_layout && !nccltests_layout_from_count(n, &P->layout)) {
        trace_input_error(P->err, P->name, P->lineno, "result row has %d fields and no column header came before it",
                          n);
        return false;
    }
    P->have_layout = P->layout_seen = true;
    if (n > TRACE_MAX_TOKS) {
        trace_input_error(P->err, P->name, P->lineno, "result row has %d fields", n);
        return false;
    }
    if (++P->rows > TRACE_MAX_ROWS) {
        trace_input_error(P->err, P->name, P->lineno, "more than %d result rows in one file: split it",
                          TRACE_MAX_ROWS);
        return false;
    }
    guint before = P->cur->rows->len;
    int got = nccltests_parse_row(P->cur, &P->layout, toks, n, P->lineno, P->err);
    if (got == 2) { /* the next datatype's table: a run of the same job */
        NcclTrace *next = nccltests_run_fork(P->cur, P->lineno);
        keep_hosts(P);
        g_ptr_array_add(P->runs, P->cur);
        P->cur = next;
        before = 0;
        got = nccltests_parse_row(P->cur, &P->layout, toks, n, P->lineno, P->err);
    }
    if (got == 1 && P->cur->rows->len > before) { /* NCCL's choice for it, as far as the file has said */
        int line;
        nccltests_ranlog_apply(P->ran, &g_array_index(P->cur->rows, NcclTestsRow, before),
                               nccltests_op_said(&P->ops, P->cur, &line), (int)g_hash_table_size(P->cur->ranks));
    }
    return got == 1;
}

/* `p` backed over the digits ending just before it; NULL unless there is one. */
static const char *back_digits(const char *s, const char *p)
{
    const char *d = p;
    while (d > s && isdigit((unsigned char)d[-1]))
        d--;
    return d < p ? d : NULL;
}

/* The end of a number ("-1", "0", "4e-07") at the start of `p`, else `p`. */
static const char *past_number(const char *p)
{
    const char *q = p + (*p == '-' || *p == '+');
    const char *d = q;
    while (isdigit((unsigned char)*q))
        q++;
    if (*q == '.')
        for (q++; isdigit((unsigned char)*q); q++)
            ;
    if (q > d && (*q == 'e' || *q == 'E')) {
        const char *e = q + 1 + (q[1] == '-' || q[1] == '+');
        if (isdigit((unsigned char)*e))
            for (q = e; isdigit((unsigned char)*q); q++)
                ;
    }
    return q > d ? q : p;
}

/* Whether `s`'s text [a, b) is a host the Rank lines named. */
static bool known_host(const Parser *P, const char *a, const char *b)
{
    char name[256];
    if (b - a >= (ptrdiff_t)sizeof name)
        return false;
    memcpy(name, a, (size_t)(b - a));
    name[b - a] = 0;
    return g_hash_table_contains(P->cur->hosts, name) || g_hash_table_contains(P->hosts_seen, name);
}

/* Where an NCCL or RCCL log line, "host:pid:tid [dev] NCCL INFO ..." (with
 * NCCL's "[2025-05-01 10:00:00] " time stamp before it, where set), starts in
 * `s`, else NULL.  NCCL_DEBUG=INFO prints them between nccl-tests' fields
 * too, glued to the field before: "... sum  -1host:12:12 [0] NCCL INFO ...".
 * The host is the longest end of the word that a Rank line named (a name
 * that starts with a digit cannot be told from the field otherwise); with
 * none named, the word that begins the line, or what follows the number a
 * word inside it starts with. */
static const char *log_start(const Parser *P, const char *s)
{
    for (const char *q = strstr(s, "CCL "); q; q = strstr(q + 1, "CCL ")) {
        if (q - s < 6 || (q[-1] != 'N' && q[-1] != 'R') || q[-2] != ' ' || q[-3] != ']')
            continue;
        const char *d = back_digits(s, q - 3); /* the device */
        if (!d || d - s < 3 || d[-1] != '[' || d[-2] != ' ')
            continue;
        const char *tid = back_digits(s, d - 2);
        const char *pid = tid && tid - s >= 2 && tid[-1] == ':' ? back_digits(s, tid - 1) : NULL;
        if (!pid || pid - s < 1 || pid[-1] != ':')
            continue;
        const char *end = pid - 1, *word = end, *start = NULL; /* the host: [start, end) */
        while (word > s && !isspace((unsigned char)word[-1]))
            word--;
        for (const char *a = word; a < end && !start; a++)
            if (known_host(P, a, end))
                start = a;
        if (!start) /* a line of its own, else a field glued before the host */
            start = word == s ? word : past_number(word);
        if (start >= end)
            continue;
        /* NCCL's own time stamp before the host: "[2025-05-01 10:00:00] " */
        if (start - s >= 3 && start[-1] == ' ' && start[-2] == ']') {
            const char *b = start - 3;
            while (b > s && (isdigit((unsigned char)*b) || strchr(" -:.", *b)))
                b--;
            if (*b == '[')
                start = b;
        }
        return start;
    }
    return NULL;
}

/* A result row's text, whole or a piece of one that log lines cut (its
 * fields go on after them): complete rows go to result_line, numbered by the
 * line they started on. */
static bool row_text(Parser *P, const char *s, bool cut)
{
    if (!P->cut && !cut)
        return result_line(P, s);
    if (!P->have_layout && !P->layout_seen) {
        trace_input_error(P->err, P->name, P->lineno, "a result row cut by a log line before any column header");
        return false;
    }
    if (!P->cut) {
        P->cut = g_string_new(NULL);
        P->cut_line = P->lineno;
    }
    g_string_append_printf(P->cut, " %s", s);
    TraceTok toks[TRACE_MAX_TOKS];
    if (trace_tokenize(P->cut->str, toks) < P->layout.n_fields)
        return true; /* the rest comes after the log lines */
    char *row = g_string_free(P->cut, FALSE);
    P->cut = NULL;
    int line = P->lineno;
    P->lineno = P->cut_line;
    bool ok = result_line(P, row);
    P->lineno = line;
    g_free(row);
    return ok;
}

/* A line that is neither a log line nor the rest of a row cut by them ends
 * a cut row unfinished: bad input. */
static bool cut_row_unfinished(Parser *P, bool at_end)
{
    if (!P->cut)
        return false;
    TraceTok toks[TRACE_MAX_TOKS];
    char *where = at_end ? g_strdup("the file ends") : g_strdup_printf("line %d comes", P->lineno);
    trace_input_error(P->err, P->name, P->cut_line, "result row cut by log lines has %d of its %d fields when %s",
                      trace_tokenize(P->cut->str, toks), P->layout.n_fields, where);
    g_free(where);
    return true;
}

/* A line neither blank nor '#': a result row, a log line or launcher noise. */
static bool other_line(Parser *P, const char *s)
{
    P->in_provenance = P->last_was_provenance = false;
    NcclTrace *tr = P->cur;
    const char *ver = strstr(s, "CCL version ");
    bool log = strstr(s, " NCCL ") || strstr(s, " RCCL ") || ver;
    size_t tok0 = strcspn(s, " \t");
    /* a sign before the digits is still a row (and a bad one): never skipped */
    const char *d = (*s == '-' || *s == '+') ? s + 1 : s;
    bool numeric = isdigit((unsigned char)*d) && !memchr(s, ':', tok0);
    if (log) {
        nccltests_ranlog_note(P->ran, s);
        nccltests_env_note(tr, s);
        const char *mode = strstr(s, "Launch mode ");
        if (mode && !tr->launch_mode)
            tr->launch_mode = strstr(mode, "/CGMD") ? 2 : 1;
        if (ver && !tr->nccl_version) {
            const char *v = ver + strlen("CCL version ");
            v += strspn(v, " \t:"); /* rccl prints "RCCL version : 2.22.3-HEAD:..." */
            size_t vl = strspn(v, "0123456789.");
            if (vl > 0)
                tr->nccl_version = g_strndup(v, vl);
        }
        return true;
    }
    if (numeric)
        return row_text(P, s, false);
    if (cut_row_unfinished(P, false))
        return false;
    if (g_str_has_prefix(s, "===")) {
        run_boundary(P);
        P->cur->sep_nodes = nodes_in(s);
    } else if (g_str_has_prefix(s, "rccl-tests: Version")) {
        run_boundary(P);
    }
    note_seen_op(P, s);
    return true;
}

static bool parse_line(Parser *P, char *raw)
{
    g_strchomp(raw); /* also drops a '\r' */
    if (P->words < 0 && *raw)
        P->words = trace_words_prefixed(raw);
    const char *s = trace_strip_prefix(raw, P->words == 1);
    while (isspace((unsigned char)*s))
        s++;
    if (*s == 0) {
        /* blank: ends a continuation but not the provenance block */
        P->last_was_provenance = false;
        return true;
    }
    if (*s != '#') {
        const char *lg = log_start(P, s);
        if (!lg || lg == s)
            return other_line(P, s);
        /* fields of a row, then a log line glued on */
        char *head = g_strndup(s, (gsize)(lg - s));
        const char *d = (*head == '-' || *head == '+') ? head + 1 : head;
        bool ok = isdigit((unsigned char)*d) ? row_text(P, head, true) : other_line(P, head);
        g_free(head);
        return ok && other_line(P, lg);
    }
    if (cut_row_unfinished(P, false))
        return false;
    int klen = P->in_provenance ? trace_provenance_key(s) : 0;
    if (klen > 0)
        return provenance_line(P, s, klen);
    /* an indented '#' line continues the last provenance value, but for a
     * column header (nccl-tests indents "#  size  count ..." too) */
    TraceTok first[TRACE_MAX_TOKS];
    bool header = trace_tokenize(s + 1, first) >= 1 && trace_tok_is(first[0], "size");
    if (P->in_provenance && P->last_was_provenance && s[1] == ' ' && s[2] == ' ' && !header) {
        char *cont = g_strstrip(g_strdup(s + 1));
        char **v = (char **)&P->hvals->pdata[P->hvals->len - 1];
        char *joined = g_strconcat(*v, "\n", cont, NULL);
        g_free(*v);
        g_free(cont);
        *v = joined;
        return true;
    }
    return comment_line(P, s);
}


NcclRuns *nccltests_parse_runs(const char *name, const char *text, GError **err)
{
    if (text && nccltests_is_report(text))
        return nccltests_json_parse_runs(name, text, err);
    Parser P = { .name = name ? name : "(text)", .in_provenance = true, .words = -1, .err = err };
    P.hosts_seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    P.ran = nccltests_ranlog_new();
    P.runs = g_ptr_array_new_with_free_func((GDestroyNotify)nccltests_free);
    P.cur = nccltests_run_new(P.name, 1);
    P.hkeys = g_ptr_array_new_with_free_func(g_free);
    P.hvals = g_ptr_array_new_with_free_func(g_free);
    const char *p = text ? text : "";
    bool ok = true;
    while (*p && ok) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        char *raw = g_strndup(p, len);
        p += len + (nl ? 1 : 0);
        P.lineno++;
        ok = parse_line(&P, raw);
        g_free(raw);
    }
    if (ok && P.cut)
        ok = !cut_row_unfinished(&P, true);
    g_hash_table_destroy(P.hosts_seen);
    nccltests_ranlog_free(P.ran);
    if (P.cut)
        g_string_free(P.cut, TRUE);
    if (ok && P.cur->rows->len > 0)
        g_ptr_array_add(P.runs, P.cur);
    else
        nccltests_free(P.cur);
    if (ok && P.runs->len == 0) {
        trace_input_error(err, P.name, P.lineno > 0 ? P.lineno : 1, "no nccl-tests result rows");
        ok = false;
    }
    ok = ok && nccltests_finish_runs(P.runs, P.name, &P.ops, P.hkeys, P.hvals, err);
    g_ptr_array_free(P.hkeys, TRUE);
    g_ptr_array_free(P.hvals, TRUE);
    if (!ok) {
        g_ptr_array_free(P.runs, TRUE);
        return NULL;
    }
    NcclRuns *r = g_new0(NcclRuns, 1);
    r->runs = P.runs;
    return r;
}

NcclTrace *nccltests_parse(const char *name, const char *text, GError **err)
{
    NcclRuns *runs = nccltests_parse_runs(name, text, err);
    if (!runs)
        return NULL;
    NcclTrace *t = NULL;
    if (runs->runs->len > 1) {
        const NcclTrace *second = runs->runs->pdata[1];
        trace_input_error(err, name ? name : "(text)", second->first_line,
                          "a second run starts here (the file holds %u runs; read it as runs)", runs->runs->len);
    } else {
        t = g_ptr_array_steal_index(runs->runs, 0);
    }
    nccltests_runs_free(runs);
    return t;
}

NcclRuns *nccltests_load_runs(const char *path, GError **err)
{
    char *text = trace_read_text(path, err);
    if (!text)
        return NULL;
    NcclRuns *r = nccltests_parse_runs(path, text, err);
    g_free(text);
    return r;
}

NcclTrace *nccltests_load(const char *path, GError **err)
{
    char *text = trace_read_text(path, err);
    if (!text)
        return NULL;
    NcclTrace *t = nccltests_parse(path, text, err);
    g_free(text);
    return t;
}
