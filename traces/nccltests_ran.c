/* NCCL's own choices in an nccl-tests log: its tuning lines
 * (NCCL_DEBUG_SUBSYS=TUNING) read as the file goes, and each result row
 * given the algorithm and protocol of the last line for its size before it.
 * NCCL from 2.23 prints "AllReduce: 1048576 Bytes -> Algo RING proto SIMPLE
 * channel{Lo..Hi}={0..23}", the bytes of one rank's share for AllGather and
 * ReduceScatter (enqueue.cc: the task's count, collectives.cc: sendcount,
 * recvcount); before, "1048576 Bytes -> Algo 1 proto 2 time 25.214764", the
 * whole size and no collective (read in the tags; no code copied).  And
 * what the run's environment forced: NCCL_ALGO and NCCL_PROTO. */
#include "nccltests_runs.h"
#include "trace_text.h"

#include <math.h>
#include <string.h>

struct NcclRanLog {
    GHashTable *last; /* (bytes << 3 | collective) -> 1 + (algorithm << 4 | protocol) */
};

/* NCCL's algorithms as its tuning lines name them, numbered 0-6 as in its
 * enum (include/nccl_common.h), then the tuning table's spellings; the model's
 * name of each. */
static const struct {
    const char *nccl, *model;
} algos[] = {
    {"TREE", "tree"},          {"RING", "ring"},         {"COLLNET_DIRECT", "collnet"}, {"COLLNET_CHAIN", "collnet"},
    {"NVLS", "nvls"},          {"NVLS_TREE", "nvlstree"}, {"PAT", "pat"},               {"COLLNETDIRECT", "collnet"},
    {"COLLNETCHAIN", "collnet"}, {"NVLSTREE", "nvlstree"},
};
enum { ALGO_NUMBERS = 7 };
static const char *const protos[] = {"ll", "ll128", "simple"}; /* 0-2, and by name */

/* The index of token `t` among `n` names (case aside) or, a number, below `numbers`; -1 if neither. */
static int name_index(TraceTok t, int n, int numbers, const char *(*name)(int))
{
    int k;
    if (trace_tok_int(t, &k))
        return k >= 0 && k < numbers ? k : -1;
    for (int i = 0; i < n; i++)
        if ((int)strlen(name(i)) == t.len && g_ascii_strncasecmp(t.s, name(i), (gsize)t.len) == 0)
            return i;
    return -1;
}
static const char *algo_name(int i) { return algos[i].nccl; }
static const char *proto_name(int i) { return protos[i]; }

static NcclTestsOp line_op(TraceTok t)
{
    static const struct {
        const char *name;
        NcclTestsOp op;
    } ops[] = {{"AllReduce:", NCCLTESTS_ALLREDUCE}, {"AllGather:", NCCLTESTS_ALLGATHER},
               {"ReduceScatter:", NCCLTESTS_REDUCESCATTER}, {"Broadcast:", NCCLTESTS_BROADCAST},
               {"Reduce:", NCCLTESTS_REDUCE}};
    for (size_t i = 0; i < G_N_ELEMENTS(ops); i++)
        if (trace_tok_is(t, ops[i].name))
            return ops[i].op;
    return NCCLTESTS_UNKNOWN;
}

static gint64 key_of(uint64_t bytes, NcclTestsOp op) { return (gint64)(bytes << 3 | (uint64_t)op); }

NcclRanLog *nccltests_ranlog_new(void) { return g_new0(NcclRanLog, 1); }

void nccltests_ranlog_free(NcclRanLog *l)
{
    if (!l)
        return;
    if (l->last)
        g_hash_table_destroy(l->last);
    g_free(l);
}

void nccltests_ranlog_note(NcclRanLog *l, const char *log)
{
    const char *m = strstr(log, " INFO ");
    TraceTok t[TRACE_MAX_TOKS];
    int n = m ? trace_tokenize(m + 6, t) : 0, at = 0;
    NcclTestsOp op = n > 0 ? line_op(t[0]) : NCCLTESTS_UNKNOWN;
    if (op != NCCLTESTS_UNKNOWN)
        at = 1; /* "AllReduce: N Bytes ..." */
    uint64_t bytes;
    if (n < at + 7 || !trace_tok_u64(t[at], &bytes) || bytes > (uint64_t)TRACE_MAX_BYTES ||
        !trace_tok_is(t[at + 1], "Bytes") || !trace_tok_is(t[at + 2], "->") || !trace_tok_is(t[at + 3], "Algo") ||
        !trace_tok_is(t[at + 5], "proto"))
        return;
    int a = name_index(t[at + 4], (int)G_N_ELEMENTS(algos), ALGO_NUMBERS, algo_name);
    int p = name_index(t[at + 6], (int)G_N_ELEMENTS(protos), (int)G_N_ELEMENTS(protos), proto_name);
    if (a < 0 || p < 0)
        return;
    if (!l->last)
        l->last = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
    gint64 key = key_of(bytes, op);
    if (!g_hash_table_contains(l->last, &key) && g_hash_table_size(l->last) >= TRACE_MAX_ROWS)
        return; /* bounded: a file has at most that many rows */
    g_hash_table_replace(l->last, g_memdup2(&key, sizeof key), GINT_TO_POINTER(1 + (a << 4 | p)));
}

static int lookup(const NcclRanLog *l, uint64_t bytes, NcclTestsOp op)
{
    gint64 key = key_of(bytes, op);
    return GPOINTER_TO_INT(g_hash_table_lookup(l->last, &key)) - 1;
}

/* The ranks an AllGather or ReduceScatter row ran on, by its busbw / algbw
 * = (n - 1) / n where the Rank lines have not said: only from 1 GB/s, where
 * nccl-tests' two decimals tell n apart (a wrong n would find another
 * size's line); 0 if not. */
static int ranks_of_row(const NcclTestsRow *row)
{
    if (!(row->algbw_gbs >= 1) || !(row->busbw_gbs < row->algbw_gbs))
        return 0;
    double n = 1 / (1 - row->busbw_gbs / row->algbw_gbs);
    double dn = n * n * 0.01 / row->algbw_gbs; /* what the printed decimals leave of n */
    return n < 1e6 && dn < 0.5 && fabs(n - round(n)) <= dn + 1e-9 ? (int)round(n) : 0;
}

void nccltests_ranlog_apply(const NcclRanLog *l, NcclTestsRow *row, NcclTestsOp op, int nranks)
{
    row->ran_algo = row->ran_proto = NULL;
    if (!l->last || op == NCCLTESTS_ALLTOALL || op == NCCLTESTS_SENDRECV) /* sends and receives take no tuner */
        return;
    uint64_t s = row->size_bytes;
    if (nranks <= 0 && (op == NCCLTESTS_ALLGATHER || op == NCCLTESTS_REDUCESCATTER))
        nranks = ranks_of_row(row);
    int v = -1;
    if (op == NCCLTESTS_ALLGATHER || op == NCCLTESTS_REDUCESCATTER)
        v = nranks > 0 && s % (uint64_t)nranks == 0 ? lookup(l, s / (uint64_t)nranks, op) : -1;
    else if (op != NCCLTESTS_UNKNOWN)
        v = lookup(l, s, op);
    else /* not known yet: the collectives that name the whole size */
        for (int i = 0; i < 3 && v < 0; i++)
            v = lookup(l, s, (NcclTestsOp[]){NCCLTESTS_ALLREDUCE, NCCLTESTS_BROADCAST, NCCLTESTS_REDUCE}[i]);
    if (v < 0)
        v = lookup(l, s, NCCLTESTS_UNKNOWN); /* older NCCL: the whole size, no collective */
    if (v < 0)
        return;
    row->ran_algo = algos[v >> 4].model;
    row->ran_proto = protos[v & 15];
}

/* ---------------- NCCL_ALGO and NCCL_PROTO ---------------- */

void nccltests_env_note(NcclTrace *tr, const char *line)
{
    static const char *const vars[] = {"NCCL_ALGO", "NCCL_PROTO"};
    for (int i = 0; i < 2; i++) {
        char **slot = i ? &tr->env_proto : &tr->env_algo;
        size_t vl = strlen(vars[i]);
        const char *at = strstr(line, vars[i]), *v = NULL;
        if (!at || *slot || (at > line && (g_ascii_isalnum(at[-1]) || at[-1] == '_')))
            continue;
        if (at[vl] == '=') /* a JSON report's env entry */
            v = at + vl + 1;
        else if (g_str_has_prefix(at + vl, " set by environment to ")) /* NCCL's log (param.cc) */
            v = at + vl + strlen(" set by environment to ");
        if (!v)
            continue;
        size_t n = strcspn(v, "\r\n"); /* the value as written, blanks and all */
        while (at[vl] != '=' && n > 0 && (v[n - 1] == '.' || g_ascii_isspace(v[n - 1])))
            n--; /* the log line's full stop */
        *slot = g_strndup(v, n);
    }
}

/* NCCL_ALGO's names in NCCL's order (tuning.cc), the model's name of each
 * (NCCL_PROTO's are `protos`, case aside); the collectives a list may be
 * prefixed with. */
static const char *const env_algos[][2] = {{"Tree", "tree"},         {"Ring", "ring"},         {"CollnetDirect", "collnet"},
                                           {"CollnetChain", "collnet"}, {"NVLS", "nvls"},       {"NVLSTree", "nvlstree"},
                                           {"PAT", "pat"}};
static const char *env_algo_name(int i) { return env_algos[i][0]; }
static const struct {
    const char *name;
    NcclTestsOp op;
} env_funcs[] = {{"Broadcast", NCCLTESTS_BROADCAST}, {"Reduce", NCCLTESTS_REDUCE}, {"AllGather", NCCLTESTS_ALLGATHER},
                 {"ReduceScatter", NCCLTESTS_REDUCESCATTER}, {"AllReduce", NCCLTESTS_ALLREDUCE}};

/* Sets on[] as NCCL does for one list "[^]name,name" (its pieces as
 * strtok_r gives them: empty ones skipped): every element to unset, those
 * named to set; false for a name NCCL does not know, where `strict` (2.24
 * on; before, NCCL skipped it). */
static bool env_list(const char *list, bool strict, int n, const char *(*name)(int), bool *on)
{
    bool set = list[0] != '^';
    for (int e = 0; e < n; e++)
        on[e] = !set;
    char **names = g_strsplit(list + !set, ",", -1);
    bool ok = true;
    for (char **nm = names; ok && *nm; nm++) {
        if (!**nm) /* an empty piece */
            continue;
        int e = name_index((TraceTok){*nm, (int)strlen(*nm)}, n, 0, name);
        if (e >= 0)
            on[e] = set;
        ok = e >= 0 || !strict;
    }
    g_strfreev(names);
    return ok;
}

/* One ';' piece "[func:][^]name,name" of a 2.24+ value, at offset `at` of
 * it: false where NCCL refuses it; else, where it names `op` (or no
 * collective), on[] as it leaves them.  A piece without a collective must
 * open the value; text after a second ':' is ignored, as strtok_r does. */
static bool env_piece(char *piece, size_t at, int n, const char *(*name)(int), NcclTestsOp op, bool *on)
{
    char **parts = g_strsplit_set(piece, ":", -1), *tok[2] = {NULL, NULL};
    for (int i = 0, k = 0; parts[i] && k < 2; i++)
        if (*parts[i])
            tok[k++] = parts[i];
    bool ok = tok[0] != NULL, mine = true;
    if (ok && tok[1]) { /* "func:list" */
        size_t f = 0;
        while (f < G_N_ELEMENTS(env_funcs) && g_ascii_strcasecmp(tok[0], env_funcs[f].name))
            f++;
        ok = f < G_N_ELEMENTS(env_funcs);
        mine = ok && env_funcs[f].op == op;
    } else if (ok) {
        ok = at == 0; /* only the value's opening list may name no collective */
    }
    bool next[8];
    const char *list = tok[1] ? tok[1] : tok[0];
    ok = ok && env_list(list, true, n, name, next);
    if (ok && mine)
        memcpy(on, next, sizeof next[0] * (size_t)n);
    g_strfreev(parts);
    return ok;
}

int nccltests_env_allowed(const char *value, bool proto, NcclTestsOp op, int version, const char **names)
{
    const char *(*name)(int) = proto ? proto_name : env_algo_name;
    int n = proto ? (int)G_N_ELEMENTS(protos) : (int)G_N_ELEMENTS(env_algos);
    bool on[8];
    for (int e = 0; e < n; e++)
        on[e] = true;
    bool ok = value != NULL;
    if (ok && version > 0 && version < 22400) { /* one list, names NCCL does not know skipped */
        if (*value)
            env_list(value, false, n, name, on);
    } else if (ok) {
        char **pieces = g_strsplit(value, ";", -1);
        size_t at = 0;
        for (int i = 0; ok && pieces[i]; at += strlen(pieces[i]) + 1, i++)
            if (*pieces[i]) /* strtok_r skips empty pieces */
                ok = env_piece(pieces[i], at, n, name, op, on);
        g_strfreev(pieces);
    }
    if (!ok)
        return -1;
    int k = 0;
    for (int e = 0; e < n; e++) { /* the model's names, each once (its collnet is both of NCCL's) */
        const char *model = proto ? protos[e] : env_algos[e][1];
        if (on[e] && !(k > 0 && !strcmp(names[k - 1], model)))
            names[k++] = model;
    }
    return k;
}
