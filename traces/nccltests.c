#include "nccltests.h"
#include "trace_text.h"

#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

struct NcclTrace { /* one run */
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
    int sep_nodes;  /* "N-node" on a "=== ... ===" separator line; 0 if none */
    int first_line; /* where the run starts */
    /* what the run itself says about the collective */
    NcclTestsOp op_stated, op_seen; /* "Collective test starting:"; another line naming a binary */
    int op_stated_line, op_seen_line, op_line;
};

struct NcclRuns {
    GPtrArray *runs; /* NcclTrace */
};

/* Column positions of one result table; -1 where absent. */
typedef struct {
    int n_fields;
    int size, count, type, redop, root;
    int time[2], alg[2], bus[2];
} Layout;

/* What the file's provenance headers say about the collective (every run). */
typedef struct {
    NcclTestsOp named, command, prov;
    int named_line, command_line, prov_line;
    unsigned prov_mask; /* every binary named in the other headers */
} FileOps;

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

/* The benchmark binaries named as words in `s` ("./build/all_reduce_perf",
 * "all_reduce_perf_mpi"; "reduce_perf" must not match inside
 * "all_reduce_perf"): a mask of 1 << op, and the first one in *first. */
static unsigned ops_mentioned(const char *s, NcclTestsOp *first)
{
    const char *best = NULL;
    unsigned mask = 0;
    *first = NCCLTESTS_UNKNOWN;
    for (size_t i = 0; i < N_OPS; i++) {
        size_t n = strlen(OPS[i].binary);
        for (const char *p = strstr(s, OPS[i].binary); p; p = strstr(p + 1, OPS[i].binary)) {
            bool left = p == s || !(isalnum((unsigned char)p[-1]) || p[-1] == '_');
            bool right = !isalnum((unsigned char)p[n]);
            if (left && right) {
                mask |= 1u << OPS[i].op;
                if (!best || p < best) {
                    best = p;
                    *first = OPS[i].op;
                }
                break;
            }
        }
    }
    return mask;
}

static NcclTestsOp op_mentioned(const char *s)
{
    NcclTestsOp op;
    ops_mentioned(s, &op);
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
    if (tr->rows->len > 0) {
        const NcclTestsRow *prev = &g_array_index(tr->rows, NcclTestsRow, tr->rows->len - 1);
        if (r.size_bytes <= prev->size_bytes) {
            trace_input_error(err, tr->name, line,
                              "size %" PRIu64 " does not grow from %" PRIu64 " at line %d (a second table "
                              "without its own column header?)",
                              r.size_bytes, prev->size_bytes, prev->line);
            return false;
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

static NcclTrace *run_new(const char *name, int first_line)
{
    NcclTrace *tr = g_new0(NcclTrace, 1);
    tr->name = g_strdup(name);
    tr->rows = g_array_new(FALSE, FALSE, sizeof(NcclTestsRow));
    tr->strings = g_string_chunk_new(256);
    tr->hkeys = g_ptr_array_new_with_free_func(g_free);
    tr->hvals = g_ptr_array_new_with_free_func(g_free);
    tr->ranks = g_hash_table_new(g_direct_hash, g_direct_equal);
    tr->hosts = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    tr->devices = g_ptr_array_new_with_free_func(g_free);
    tr->first_line = first_line;
    return tr;
}

void nccltests_free(NcclTrace *t)
{
    if (!t)
        return;
    g_free(t->name);
    g_array_free(t->rows, TRUE);
    g_string_chunk_free(t->strings);
    g_ptr_array_free(t->hkeys, TRUE);
    g_ptr_array_free(t->hvals, TRUE);
    g_hash_table_destroy(t->ranks);
    g_hash_table_destroy(t->hosts);
    g_ptr_array_free(t->devices, TRUE);
    g_free(t->nccl_version);
    g_free(t);
}

void nccltests_runs_free(NcclRuns *r)
{
    if (!r)
        return;
    g_ptr_array_free(r->runs, TRUE);
    g_free(r);
}

size_t nccltests_runs_n(const NcclRuns *r) { return r->runs->len; }

NcclTrace *nccltests_runs_get(const NcclRuns *r, size_t i)
{
    return i < r->runs->len ? r->runs->pdata[i] : NULL;
}

/* nccl-tests prints busbw = algbw * factor(n) (GetBw in src/<op>.cu), both
 * rounded to 2 decimals; the factor c(n-1)/n then gives n back.  Every row
 * (out-of-place and in-place, algbw >= 1 GB/s) bounds n; the rank count when
 * exactly one integer is in all bounds, else 0 (1 with *contradiction set
 * when the rows disagree). */
static int ranks_from_bw(const NcclTrace *t, NcclTestsOp op, bool *contradiction)
{
    double c = op == NCCLTESTS_ALLREDUCE ? 2
               : (op == NCCLTESTS_REDUCESCATTER || op == NCCLTESTS_ALLGATHER || op == NCCLTESTS_ALLTOALL) ? 1
                                                                                                      : 0;
    double lo = 1, hi = 1e6, half = 0.00501; /* half a printed unit, and a little */
    int used = 0;
    *contradiction = false;
    for (guint i = 0; c > 0 && i < t->rows->len; i++) {
        const NcclTestsRow *r = &g_array_index(t->rows, NcclTestsRow, i);
        double a[2] = { r->algbw_gbs, r->ip_algbw_gbs }, b[2] = { r->busbw_gbs, r->ip_busbw_gbs };
        for (int g = 0; g < 2; g++) {
            if (!(a[g] >= 1.0) || !isfinite(b[g]))
                continue;
            double flo = MAX(0.0, b[g] - half) / (a[g] + half), fhi = (b[g] + half) / (a[g] - half);
            lo = MAX(lo, flo < c ? c / (c - flo) : INFINITY);
            hi = MIN(hi, fhi < c ? c / (c - fhi) : INFINITY);
            used++;
        }
    }
    if (!used)
        return 0;
    double nmin = ceil(lo - 1e-9), nmax = floor(hi + 1e-9);
    *contradiction = nmin > nmax;
    return nmin == nmax ? (int)nmin : 0;
}

/* Rank lines, busbw/algbw and nThread x nGpus must tell one story. */
static bool check_ranks(const char *name, const NcclTrace *t, GError **err)
{
    bool contra = false;
    int listed = (int)g_hash_table_size(t->ranks), from_bw = ranks_from_bw(t, t->op, &contra);
    int line = g_array_index(t->rows, NcclTestsRow, 0).line;
    if (contra) {
        trace_input_error(err, name, line, "the rows' busbw/algbw ratios disagree on the rank count (edited rows, "
                          "or two runs in one table?)");
        return false;
    }
    if (listed > 0 && from_bw > 0 && listed != from_bw) {
        trace_input_error(err, name, line, "busbw/algbw of %s says %d ranks, but the Rank lines list %d",
                          nccltests_op_name(t->op), from_bw, listed);
        return false;
    }
    long long per_process = t->nthread > 0 && t->ngpus > 0 ? (long long)t->nthread * t->ngpus : 0;
    int n = listed > 0 ? listed : from_bw;
    if (n > 0 && per_process > n) {
        trace_input_error(err, name, line, "%d ranks, but nThread %d x nGpus %d makes %lld in one process", n,
                          t->nthread, t->ngpus, per_process);
        return false;
    }
    return true;
}

/* The parser's state over the whole file. */
typedef struct {
    const char *name;
    GPtrArray *runs;  /* finished runs */
    NcclTrace *cur;   /* the run being read */
    GPtrArray *hkeys, *hvals;
    FileOps ops;
    Layout layout;
    bool have_layout, in_provenance, last_was_provenance;
    int lineno;
    GError **err;
} Parser;

/* A line that opens a run (banner, parameters, devices, column header,
 * separator): after rows, it starts the next run. */
static void run_boundary(Parser *P)
{
    if (P->cur->rows->len == 0)
        return;
    g_ptr_array_add(P->runs, P->cur);
    P->cur = run_new(P->name, P->lineno);
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
    NcclTestsOp op = op_mentioned(s);
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
    r->op_seen = op_mentioned(s);
    r->op_seen_line = P->lineno;
}

static bool provenance_line(Parser *P, const char *s, int klen)
{
    char *key = g_ascii_strdown(s + 2, klen);
    char *val = g_strstrip(g_strdup(s + 2 + klen + 1));
    FileOps *F = &P->ops;
    bool ok = true;
    if (strcmp(key, "command") == 0 && F->command == NCCLTESTS_UNKNOWN) {
        F->command = op_mentioned(val);
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
        unsigned m = ops_mentioned(val, &first);
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
        if (toks[i].len > 13 && strncmp(toks[i].s, "nccl-library=", 13) == 0) {
            int code = 0;
            TraceTok c = { toks[i].s + 13, toks[i].len - 13 };
            if (trace_tok_int(c, &code) && code > 0)
                tr->nccl_version = version_from_code(code);
        }
    }
}

/* A '#' line that is not provenance (s points at the '#'). */
static bool comment_line(Parser *P, const char *s)
{
    TraceTok toks[TRACE_MAX_TOKS];
    P->in_provenance = P->last_was_provenance = false;
    int n = trace_tokenize(s + 1, toks);
    bool banner = n >= 1 && trace_tok_is(toks[0], "nccl-tests");
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
        trace_tok_int(toks[1], &tr->nthread);
        trace_tok_int(toks[3], &tr->ngpus);
    } else if (header) {
        if (!layout_from_header(toks, n, &P->layout)) {
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
    if (!P->have_layout && !layout_from_count(n, &P->layout)) {
        trace_input_error(P->err, P->name, P->lineno, "result row has %d fields and no column header came before it",
                          n);
        return false;
    }
    P->have_layout = true;
    if (n > TRACE_MAX_TOKS) {
        trace_input_error(P->err, P->name, P->lineno, "result row has %d fields", n);
        return false;
    }
    return parse_row(P->cur, &P->layout, toks, n, P->lineno, P->err);
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
        return result_line(P, s);
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
    const char *s = strip_launcher_prefix(raw);
    while (isspace((unsigned char)*s))
        s++;
    if (*s == 0) {
        /* blank: ends a continuation but not the provenance block */
        P->last_was_provenance = false;
        return true;
    }
    if (*s != '#')
        return other_line(P, s);
    int klen = P->in_provenance ? trace_provenance_key(s) : 0;
    if (klen > 0)
        return provenance_line(P, s, klen);
    if (P->in_provenance && P->last_was_provenance && s[1] == ' ' && s[2] == ' ') {
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

/* The run's collective from the strongest evidence; contradictions are bad input. */
static bool resolve_op(const Parser *P, NcclTrace *r, GError **err)
{
    const FileOps *F = &P->ops;
    if (F->named && r->op_stated && F->named != r->op_stated) {
        trace_input_error(err, P->name, r->op_stated_line, "the output says %s, but '# op:' at line %d says %s",
                          nccltests_op_name(r->op_stated), F->named_line, nccltests_op_name(F->named));
        return false;
    }
    if (F->named && F->command && F->named != F->command) {
        trace_input_error(err, P->name, F->named_line, "'# op:' says %s, but '# command:' at line %d runs %s",
                          nccltests_op_name(F->named), F->command_line, nccltests_op_name(F->command));
        return false;
    }
    if (F->command && r->op_stated && F->command != r->op_stated) {
        trace_input_error(err, P->name, r->op_stated_line, "the output says %s, but '# command:' at line %d runs %s",
                          nccltests_op_name(r->op_stated), F->command_line, nccltests_op_name(F->command));
        return false;
    }
    /* headers that name several benchmarks (notes comparing runs) decide nothing */
    bool prov_one = F->prov_mask && !(F->prov_mask & (F->prov_mask - 1));
    const NcclTestsRow *row0 = &g_array_index(r->rows, NcclTestsRow, 0);
    r->op_line = row0->line;
    if (F->named)
        r->op = F->named;
    else if (r->op_stated)
        r->op = r->op_stated, r->op_line = r->op_stated_line;
    else if (F->command)
        r->op = F->command;
    else if (r->op_seen)
        r->op = r->op_seen, r->op_line = r->op_seen_line;
    else if (prov_one)
        r->op = F->prov;
    else if (row0->root >= 0)
        r->op = (!row0->redop || strcmp(row0->redop, "none") == 0) ? NCCLTESTS_BROADCAST : NCCLTESTS_REDUCE;
    return true;
}

static const char *ordinal(size_t i)
{
    static const char *w[] = { "first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth" };
    return i < G_N_ELEMENTS(w) ? w[i] : "next";
}

/* Per run: the collective, the headers, the name; every run one collective. */
static bool finish_runs(Parser *P)
{
    GPtrArray *runs = P->runs;
    for (guint i = 0; i < runs->len; i++) {
        NcclTrace *r = runs->pdata[i];
        if (!resolve_op(P, r, P->err))
            return false;
        for (guint k = 0; k < P->hkeys->len; k++) {
            g_ptr_array_add(r->hkeys, g_strdup(P->hkeys->pdata[k]));
            g_ptr_array_add(r->hvals, g_strdup(P->hvals->pdata[k]));
        }
        if (runs->len > 1) {
            g_free(r->name);
            r->name = g_strdup_printf("%s#run%u", P->name, i + 1);
        }
        const NcclTrace *r0 = runs->pdata[0];
        if (i > 0 && r->op && r0->op && r->op != r0->op) {
            trace_input_error(P->err, P->name, r->op_line, "%s table is %s at line %d, the first was %s at line %d",
                              ordinal(i), nccltests_op_name(r->op), r->op_line, nccltests_op_name(r0->op),
                              r0->op_line);
            return false;
        }
    }
    for (guint i = 0; i < runs->len; i++)
        if (!check_ranks(P->name, runs->pdata[i], P->err))
            return false;
    return true;
}

NcclRuns *nccltests_parse_runs(const char *name, const char *text, GError **err)
{
    Parser P = { .name = name ? name : "(text)", .in_provenance = true, .err = err };
    P.runs = g_ptr_array_new_with_free_func((GDestroyNotify)nccltests_free);
    P.cur = run_new(P.name, 1);
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
    if (ok && P.cur->rows->len > 0)
        g_ptr_array_add(P.runs, P.cur);
    else
        nccltests_free(P.cur);
    if (ok && P.runs->len == 0) {
        trace_input_error(err, P.name, P.lineno > 0 ? P.lineno : 1, "no nccl-tests result rows");
        ok = false;
    }
    ok = ok && finish_runs(&P);
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
    bool contra;
    int n = (int)g_hash_table_size(t->ranks);
    return n > 0 ? n : ranks_from_bw(t, t->op, &contra);
}

bool nccltests_ranks_from_bw(const NcclTrace *t)
{
    return g_hash_table_size(t->ranks) == 0 && nccltests_n_ranks(t) > 0;
}

int nccltests_n_hosts(const NcclTrace *t)
{
    int n = (int)g_hash_table_size(t->hosts);
    return n > 0 ? n : t->sep_nodes;
}

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
