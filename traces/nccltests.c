#include "nccltests.h"
#include "trace_text.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

struct NcclTrace {
    char *name;
    GArray *rows;          /* NcclTestsRow */
    GStringChunk *strings; /* row type/redop strings */
    NcclTestsOp op;
    GPtrArray *hkeys, *hvals;
    GHashTable *ranks;     /* set of rank numbers */
    GHashTable *hosts;     /* host name -> ranks on it */
    GPtrArray *devices;
    char *nccl_version;
    int nthread, ngpus;
};

/* Column positions of one result table; -1 where absent. */
typedef struct {
    int n_fields;
    int size, count, type, redop, root;
    int time[2], alg[2], bus[2];
} Layout;









static const struct {
    const char *binary;
    const char *name;
    NcclTestsOp op;
} OPS[] = {
    { "all_reduce_perf", "allreduce", NCCLTESTS_ALLREDUCE },
    { "reduce_scatter_perf", "reducescatter", NCCLTESTS_REDUCESCATTER },
    { "all_gather_perf", "allgather", NCCLTESTS_ALLGATHER },
    { "broadcast_perf", "broadcast", NCCLTESTS_BROADCAST },
    { "reduce_perf", "reduce", NCCLTESTS_REDUCE },
    { "alltoall_perf", "alltoall", NCCLTESTS_ALLTOALL },
    { "sendrecv_perf", "sendrecv", NCCLTESTS_SENDRECV },
};
#define N_OPS (sizeof OPS / sizeof OPS[0])

const char *nccltests_op_name(NcclTestsOp op)
{
    for (size_t i = 0; i < N_OPS; i++)
        if (OPS[i].op == op)
            return OPS[i].name;
    return "unknown";
}

NcclTestsOp nccltests_op_from_name(const char *name)
{
    if (!name)
        return NCCLTESTS_UNKNOWN;
    /* Compare lower-cased with '_' and '-' dropped and any "perf" suffix cut. */
    GString *k = g_string_new(NULL);
    for (const char *p = name; *p; p++)
        if (*p != '_' && *p != '-' && !isspace((unsigned char)*p))
            g_string_append_c(k, (char)g_ascii_tolower(*p));
    if (g_str_has_suffix(k->str, "perf"))
        g_string_truncate(k, k->len - 4);
    NcclTestsOp op = NCCLTESTS_UNKNOWN;
    for (size_t i = 0; i < N_OPS; i++)
        if (strcmp(k->str, OPS[i].name) == 0)
            op = OPS[i].op;
    g_string_free(k, TRUE);
    return op;
}

double nccltests_busbw_factor(NcclTestsOp op, int nranks)
{
    if (nranks < 1)
        return NAN;
    double n = nranks;
    switch (op) {
    case NCCLTESTS_ALLREDUCE:
        return 2.0 * (n - 1) / n;
    case NCCLTESTS_REDUCESCATTER:
    case NCCLTESTS_ALLGATHER:
    case NCCLTESTS_ALLTOALL:
        return (n - 1) / n;
    case NCCLTESTS_BROADCAST:
    case NCCLTESTS_REDUCE:
    case NCCLTESTS_SENDRECV:
        return 1.0;
    case NCCLTESTS_UNKNOWN:
        break;
    }
    return NAN;
}

/* The first benchmark binary named as a word in `s` ("./build/all_reduce_perf",
 * "all_reduce_perf_mpi"); "reduce_perf" must not match inside "all_reduce_perf". */
static NcclTestsOp op_mentioned(const char *s)
{
    const char *best = NULL;
    NcclTestsOp op = NCCLTESTS_UNKNOWN;
    for (size_t i = 0; i < N_OPS; i++) {
        size_t n = strlen(OPS[i].binary);
        for (const char *p = strstr(s, OPS[i].binary); p; p = strstr(p + 1, OPS[i].binary)) {
            bool left = p == s || !(isalnum((unsigned char)p[-1]) || p[-1] == '_');
            bool right = !isalnum((unsigned char)p[n]);
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


/* Layout from a column-header line's tokens (after the '#'). */
static bool layout_from_header(const TraceTok *t, int n, Layout *L)
{
    Layout l = { .size = -1, .count = -1, .type = -1, .redop = -1, .root = -1,
                 .time = { -1, -1 }, .alg = { -1, -1 }, .bus = { -1, -1 } };
    int nt = 0, na = 0, nb = 0, extra = 0;
    if (n > TRACE_MAX_TOKS)
        return false;
    for (int i = 0; i < n; i++) {
        if (trace_tok_is(t[i], "size"))
            l.size = i;
        else if (trace_tok_is(t[i], "count"))
            l.count = i;
        else if (trace_tok_is(t[i], "type"))
            l.type = i;
        else if (trace_tok_is(t[i], "redop"))
            l.redop = i;
        else if (trace_tok_is(t[i], "root"))
            l.root = i;
        else if ((trace_tok_is(t[i], "time") || trace_tok_is(t[i], "cputime")) && nt < 2)
            l.time[nt++] = i;
        else if (trace_tok_is(t[i], "algbw") && na < 2)
            l.alg[na++] = i;
        else if (trace_tok_is(t[i], "busbw") && nb < 2)
            l.bus[nb++] = i;
        else if (trace_tok_is(t[i], "timestamp"))
            extra++; /* printed as "YYYY-MM-DD HH:MM:SS": two fields */
    }
    if (l.size != 0 || l.count < 0 || l.type < 0 || nt < 1 || na < 1 || nb < 1)
        return false;
    l.n_fields = n + extra;
    *L = l;
    return true;
}

/* Without a header line: the classic layouts by field count. */
static bool layout_from_count(int n, Layout *L)
{
    if (n < 11 || n > 13)
        return false;
    int b = n - 8; /* first timing column */
    *L = (Layout){ .n_fields = n, .size = 0, .count = 1, .type = 2,
                   .redop = n >= 12 ? 3 : -1, .root = n == 13 ? 4 : -1,
                   .time = { b, b + 4 }, .alg = { b + 1, b + 5 }, .bus = { b + 2, b + 6 } };
    return true;
}

static const char *COLNAME[2] = { "out-of-place", "in-place" };

static bool parse_row(NcclTrace *tr, const Layout *L, const TraceTok *t, int n, int line, GError **err)
{
    if (n != L->n_fields) {
        trace_input_error(err, tr->name, line, "result row has %d fields, expected %d", n,
                        L->n_fields);
        return false;
    }
    NcclTestsRow r = { .root = -1, .ip_time_us = NAN, .ip_algbw_gbs = NAN,
                       .ip_busbw_gbs = NAN, .line = line };
    if (!trace_tok_u64(t[L->size], &r.size_bytes)) {
        trace_input_error(err, tr->name, line, "size \"%.*s\" is not a whole number of bytes",
                        t[L->size].len, t[L->size].s);
        return false;
    }
    if (!trace_tok_u64(t[L->count], &r.count)) {
        trace_input_error(err, tr->name, line, "count \"%.*s\" is not a whole number",
                        t[L->count].len, t[L->count].s);
        return false;
    }
    r.type = g_string_chunk_insert_len(tr->strings, t[L->type].s, t[L->type].len);
    if (L->redop >= 0)
        r.redop = g_string_chunk_insert_len(tr->strings, t[L->redop].s, t[L->redop].len);
    if (L->root >= 0 && !trace_tok_int(t[L->root], &r.root)) {
        trace_input_error(err, tr->name, line, "root \"%.*s\" is not an integer",
                        t[L->root].len, t[L->root].s);
        return false;
    }
    double *dst[2][3] = { { &r.time_us, &r.algbw_gbs, &r.busbw_gbs },
                          { &r.ip_time_us, &r.ip_algbw_gbs, &r.ip_busbw_gbs } };
    static const char *what[3] = { "time", "algbw", "busbw" };
    for (int g = 0; g < 2; g++) {
        int col[3] = { L->time[g], L->alg[g], L->bus[g] };
        for (int k = 0; k < 3; k++) {
            if (col[k] < 0)
                continue;
            double v = 0;
            if (!trace_tok_double(t[col[k]], &v) || v < 0) {
                trace_input_error(err, tr->name, line, "%s %s \"%.*s\" is not a number >= 0",
                                COLNAME[g], what[k], t[col[k]].len, t[col[k]].s);
                return false;
            }
            *dst[g][k] = v;
        }
    }
    g_array_append_val(tr->rows, r);
    return true;
}

/* "#  Rank  3 Group  0 Pid 123 on host device  3 [0x5d] NVIDIA H100 80GB HBM3" */
static void parse_rank_line(NcclTrace *tr, const TraceTok *t, int n)
{
    int rank = 0;
    if (n < 2 || !trace_tok_int(t[1], &rank))
        return;
    const char *host = NULL;
    int hostlen = 0;
    const char *devname = NULL;
    for (int i = 2; i + 1 < n && i + 1 < TRACE_MAX_TOKS; i++) {
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

static char *version_from_code(long code)
{
    /* NCCL_VERSION_CODE: major*10000+minor*100+patch since 2.9, major*1000+minor*100+patch before */
    if (code >= 10000)
        return g_strdup_printf("%ld.%ld.%ld", code / 10000, (code % 10000) / 100, code % 100);
    return g_strdup_printf("%ld.%ld.%ld", code / 1000, (code % 1000) / 100, code % 100);
}

/* Removes an mpirun "[1,0]<stdout>:" or srun "12: " prefix. */
static const char *strip_launcher_prefix(const char *s)
{
    const char *p = s;
    if (*p == '[') {
        const char *q = p + 1;
        while (isdigit((unsigned char)*q) || *q == ',')
            q++;
        if (*q == ']' && (g_str_has_prefix(q + 1, "<stdout>:") || g_str_has_prefix(q + 1, "<stderr>:")))
            return q + 10;
        return s;
    }
    while (*p == ' ')
        p++;
    const char *q = p;
    while (isdigit((unsigned char)*q))
        q++;
    if (q > p && *q == ':' && (q[1] == ' ' || q[1] == '\t' || q[1] == 0))
        return q + 1;
    return s;
}

static void trace_free_contents(NcclTrace *t)
{
    g_free(t->name);
    g_array_free(t->rows, TRUE);
    g_string_chunk_free(t->strings);
    g_ptr_array_free(t->hkeys, TRUE);
    g_ptr_array_free(t->hvals, TRUE);
    g_hash_table_destroy(t->ranks);
    g_hash_table_destroy(t->hosts);
    g_ptr_array_free(t->devices, TRUE);
    g_free(t->nccl_version);
}

void nccltests_free(NcclTrace *t)
{
    if (!t)
        return;
    trace_free_contents(t);
    g_free(t);
}

NcclTrace *nccltests_parse(const char *name, const char *text, GError **err)
{
    NcclTrace *tr = g_new0(NcclTrace, 1);
    tr->name = g_strdup(name ? name : "(text)");
    tr->rows = g_array_new(FALSE, FALSE, sizeof(NcclTestsRow));
    tr->strings = g_string_chunk_new(256);
    tr->hkeys = g_ptr_array_new_with_free_func(g_free);
    tr->hvals = g_ptr_array_new_with_free_func(g_free);
    tr->ranks = g_hash_table_new(g_direct_hash, g_direct_equal);
    tr->hosts = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    tr->devices = g_ptr_array_new_with_free_func(g_free);

    NcclTestsOp op_named = NCCLTESTS_UNKNOWN, op_command = NCCLTESTS_UNKNOWN;
    NcclTestsOp op_mention = NCCLTESTS_UNKNOWN;
    Layout layout = {0};
    bool have_layout = false;
    bool in_provenance = true, last_was_provenance = false;
    int lineno = 0;
    const char *p = text ? text : "";
    TraceTok toks[TRACE_MAX_TOKS];

    while (*p) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        char *raw = g_strndup(p, len);
        p += len + (nl ? 1 : 0);
        lineno++;
        g_strchomp(raw); /* also drops a '\r' */
        const char *line = strip_launcher_prefix(raw);
        const char *s = line;
        while (isspace((unsigned char)*s))
            s++;
        bool ok = true;

        if (*s == 0) {
            /* blank: ends a continuation but not the provenance block */
            last_was_provenance = false;
        } else if (*s == '#') {
            int klen = in_provenance ? trace_provenance_key(s) : 0;
            if (klen > 0) {
                char *key = g_ascii_strdown(s + 2, klen);
                char *val = g_strstrip(g_strdup(s + 2 + klen + 1));
                if (strcmp(key, "command") == 0 && op_command == NCCLTESTS_UNKNOWN)
                    op_command = op_mentioned(val);
                if (strcmp(key, "op") == 0) {
                    op_named = nccltests_op_from_name(val);
                    if (op_named == NCCLTESTS_UNKNOWN) {
                        trace_input_error(err, tr->name, lineno, "unknown collective \"%s\" in '# op:'", val);
                        ok = false;
                    }
                }
                g_ptr_array_add(tr->hkeys, key);
                g_ptr_array_add(tr->hvals, val);
                last_was_provenance = true;
            } else if (in_provenance && last_was_provenance && s[1] == ' ' && s[2] == ' ') {
                char *cont = g_strstrip(g_strdup(s + 1));
                char **v = (char **)&tr->hvals->pdata[tr->hvals->len - 1];
                char *joined = g_strconcat(*v, "\n", cont, NULL);
                g_free(*v);
                g_free(cont);
                *v = joined;
            } else {
                in_provenance = last_was_provenance = false;
                int n = trace_tokenize(s + 1, toks);
                if (n >= 2 && trace_tok_is(toks[0], "Rank")) {
                    parse_rank_line(tr, toks, n);
                } else if (n >= 4 && trace_tok_is(toks[0], "nThread") && trace_tok_is(toks[2], "nGpus")) {
                    trace_tok_int(toks[1], &tr->nthread);
                    trace_tok_int(toks[3], &tr->ngpus);
                } else if (n >= 1 && trace_tok_is(toks[0], "size")) {
                    if (!layout_from_header(toks, n, &layout)) {
                        trace_input_error(err, tr->name, lineno,
                                        "column header lacks size/count/type/time/algbw/busbw");
                        ok = false;
                    }
                    have_layout = ok;
                } else if (n >= 3 && trace_tok_is(toks[0], "nccl-tests") && !tr->nccl_version) {
                    for (int i = 1; i < n && i < TRACE_MAX_TOKS && !tr->nccl_version; i++) {
                        if (toks[i].len > 13 && strncmp(toks[i].s, "nccl-library=", 13) == 0) {
                            int code = 0;
                            TraceTok c = { toks[i].s + 13, toks[i].len - 13 };
                            if (trace_tok_int(c, &code) && code > 0)
                                tr->nccl_version = version_from_code(code);
                        }
                    }
                }
                if (ok && op_mention == NCCLTESTS_UNKNOWN)
                    op_mention = op_mentioned(s);
            }
        } else {
            in_provenance = last_was_provenance = false;
            const char *ver = strstr(s, "CCL version ");
            int n = trace_tokenize(s, toks);
            bool log = strstr(s, " NCCL ") || strstr(s, " RCCL ") || ver;
            bool first_numeric = isdigit((unsigned char)s[0]) && !memchr(toks[0].s, ':', (size_t)toks[0].len);
            if (log) {
                if (ver && !tr->nccl_version) {
                    const char *v = ver + strlen("CCL version ");
                    v += strspn(v, " \t:"); /* rccl prints "RCCL version : 2.22.3-HEAD:..." */
                    size_t vl = strspn(v, "0123456789.");
                    if (vl > 0)
                        tr->nccl_version = g_strndup(v, vl);
                }
            } else if (first_numeric) {
                if (!have_layout && !layout_from_count(n, &layout)) {
                    trace_input_error(err, tr->name, lineno,
                                    "result row has %d fields and no column header came before it", n);
                    ok = false;
                } else {
                    have_layout = true;
                    ok = n <= TRACE_MAX_TOKS ? parse_row(tr, &layout, toks, n, lineno, err)
                                       : (trace_input_error(err, tr->name, lineno,
                                                          "result row has %d fields", n), false);
                }
            } else if (op_mention == NCCLTESTS_UNKNOWN) {
                op_mention = op_mentioned(s);
            }
        }
        g_free(raw);
        if (!ok) {
            nccltests_free(tr);
            return NULL;
        }
    }

    if (tr->rows->len == 0) {
        trace_input_error(err, tr->name, lineno > 0 ? lineno : 1, "no nccl-tests result rows");
        nccltests_free(tr);
        return NULL;
    }

    tr->op = op_named != NCCLTESTS_UNKNOWN    ? op_named
             : op_command != NCCLTESTS_UNKNOWN ? op_command
                                               : op_mention;
    if (tr->op == NCCLTESTS_UNKNOWN) {
        const NcclTestsRow *r = &g_array_index(tr->rows, NcclTestsRow, 0);
        if (r->root >= 0)
            tr->op = (!r->redop || strcmp(r->redop, "none") == 0) ? NCCLTESTS_BROADCAST
                                                                   : NCCLTESTS_REDUCE;
    }
    return tr;
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

const char *nccltests_name(const NcclTrace *t) { return t->name; }
size_t nccltests_n_rows(const NcclTrace *t) { return t->rows->len; }

const NcclTestsRow *nccltests_row(const NcclTrace *t, size_t i)
{
    return i < t->rows->len ? &g_array_index(t->rows, NcclTestsRow, i) : NULL;
}

NcclTestsOp nccltests_op(const NcclTrace *t) { return t->op; }
void nccltests_set_op(NcclTrace *t, NcclTestsOp op) { t->op = op; }

int nccltests_n_ranks(const NcclTrace *t)
{
    int n = (int)g_hash_table_size(t->ranks);
    if (n == 0 && t->nthread > 0 && t->ngpus > 0)
        n = t->nthread * t->ngpus;
    return n;
}

int nccltests_n_hosts(const NcclTrace *t) { return (int)g_hash_table_size(t->hosts); }

int nccltests_max_ranks_per_host(const NcclTrace *t)
{
    int best = 0;
    GHashTableIter it;
    gpointer k, v;
    g_hash_table_iter_init(&it, t->hosts);
    while (g_hash_table_iter_next(&it, &k, &v))
        best = MAX(best, GPOINTER_TO_INT(v));
    return best;
}

size_t nccltests_n_devices(const NcclTrace *t) { return t->devices->len; }

const char *nccltests_device(const NcclTrace *t, size_t i)
{
    return i < t->devices->len ? t->devices->pdata[i] : NULL;
}

const char *nccltests_nccl_version(const NcclTrace *t) { return t->nccl_version; }

const char *nccltests_header(const NcclTrace *t, const char *key)
{
    for (guint i = 0; i < t->hkeys->len; i++)
        if (g_ascii_strcasecmp(t->hkeys->pdata[i], key) == 0)
            return t->hvals->pdata[i];
    return NULL;
}

size_t nccltests_n_headers(const NcclTrace *t) { return t->hkeys->len; }

const char *nccltests_header_key(const NcclTrace *t, size_t i)
{
    return i < t->hkeys->len ? t->hkeys->pdata[i] : NULL;
}

const char *nccltests_header_value(const NcclTrace *t, size_t i)
{
    return i < t->hvals->len ? t->hvals->pdata[i] : NULL;
}

int nccltests_gpus_per_thread(const NcclTrace *t)
{
    return t->ngpus > 0 ? t->ngpus : 1;
}
