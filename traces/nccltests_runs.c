/* nccl-tests runs: the collectives' names and busbw factors, what each run
 * holds and the accessors of nccltests.h, and the checks made once a file is
 * read: which collective each run measured (the strongest evidence wins,
 * contradictions are bad input) and how many ranks ran it. */
#include "nccltests_runs.h"
#include "trace_text.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

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

unsigned nccltests_ops_mentioned(const char *s, NcclTestsOp *first)
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

NcclTestsOp nccltests_op_mentioned(const char *s)
{
    NcclTestsOp op;
    nccltests_ops_mentioned(s, &op);
    return op;
}

NcclTrace *nccltests_run_new(const char *name, int first_line)
{
    NcclTrace *tr = g_new0(NcclTrace, 1);
    tr->name = g_strdup(name);
    tr->rows = g_array_new(FALSE, FALSE, sizeof(NcclTestsRow));
    tr->strings = g_string_chunk_new(256);
    tr->hkeys = g_ptr_array_new_with_free_func(g_free);
    tr->hvals = g_ptr_array_new_with_free_func(g_free);
    tr->ranks = g_hash_table_new(g_direct_hash, g_direct_equal);
    tr->hosts = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    tr->procs = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    tr->devices = g_ptr_array_new_with_free_func(g_free);
    tr->first_line = first_line;
    return tr;
}

static void copy_counts(GHashTable *to, GHashTable *from, bool strings)
{
    GHashTableIter it;
    gpointer k, v;
    g_hash_table_iter_init(&it, from);
    while (g_hash_table_iter_next(&it, &k, &v))
        g_hash_table_insert(to, strings ? g_strdup(k) : k, v);
}

NcclTrace *nccltests_run_fork(const NcclTrace *t, int first_line)
{
    NcclTrace *f = nccltests_run_new(t->name, first_line);
    copy_counts(f->ranks, t->ranks, false);
    copy_counts(f->hosts, t->hosts, true);
    copy_counts(f->procs, t->procs, true);
    for (guint i = 0; i < t->devices->len; i++)
        g_ptr_array_add(f->devices, g_strdup(t->devices->pdata[i]));
    f->rank_groups = t->rank_groups;
    f->nccl_version = g_strdup(t->nccl_version);
    f->nthread = t->nthread;
    f->ngpus = t->ngpus;
    f->sep_nodes = t->sep_nodes;
    f->launch_mode = t->launch_mode;
    f->env_algo = g_strdup(t->env_algo);
    f->env_proto = g_strdup(t->env_proto);
    f->op_stated = t->op_stated, f->op_stated_line = t->op_stated_line;
    f->op_seen = t->op_seen, f->op_seen_line = t->op_seen_line;
    guint n = t->types_before ? g_strv_length(t->types_before) : 0;
    f->types_before = g_new0(char *, n + 2);
    for (guint i = 0; i < n; i++)
        f->types_before[i] = g_strdup(t->types_before[i]);
    f->types_before[n] = g_strdup(t->rows->len ? g_array_index(t->rows, NcclTestsRow, 0).type : "");
    return f;
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
    g_hash_table_destroy(t->procs);
    g_ptr_array_free(t->devices, TRUE);
    g_strfreev(t->types_before);
    g_free(t->nccl_version);
    g_free(t->env_algo);
    g_free(t->env_proto);
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
    if (n > 0 && (per_process > n || (per_process > 0 && n % per_process))) {
        trace_input_error(err, name, line, "%d ranks, but nThread %d x nGpus %d makes %lld in one process%s", n,
                          t->nthread, t->ngpus, per_process, per_process > n ? "" : ": no whole number of processes");
        return false;
    }
    return true;
}

/* With n > 2 ranks listed, busbw/algbw tells the family: 2(n-1)/n only
 * all-reduce, (n-1)/n reduce-scatter where a reduction is printed (all-gather
 * and all-to-all print "none"); NCCLTESTS_UNKNOWN otherwise. */
static NcclTestsOp op_from_bw(const NcclTrace *r, const NcclTestsRow *row0)
{
    int n = (int)g_hash_table_size(r->ranks);
    bool contra;
    if (n <= 2)
        return NCCLTESTS_UNKNOWN;
    if (ranks_from_bw(r, NCCLTESTS_ALLREDUCE, &contra) == n)
        return NCCLTESTS_ALLREDUCE;
    bool reduction = row0->redop && strcmp(row0->redop, "none") != 0;
    if (reduction && row0->root < 0 && ranks_from_bw(r, NCCLTESTS_REDUCESCATTER, &contra) == n)
        return NCCLTESTS_REDUCESCATTER;
    return NCCLTESTS_UNKNOWN;
}

NcclTestsOp nccltests_op_said(const FileOps *F, const NcclTrace *r, int *line)
{
    /* headers that name several benchmarks (notes comparing runs) decide nothing */
    bool prov_one = F->prov_mask && !(F->prov_mask & (F->prov_mask - 1));
    *line = 0;
    if (F->named)
        return F->named;
    if (r->op_stated) {
        *line = r->op_stated_line;
        return r->op_stated;
    }
    if (F->command)
        return F->command;
    if (r->op_seen) {
        *line = r->op_seen_line;
        return r->op_seen;
    }
    return prov_one ? F->prov : NCCLTESTS_UNKNOWN;
}

/* The run's collective from the strongest evidence; contradictions are bad input. */
static bool resolve_op(const char *name, const FileOps *F, NcclTrace *r, GError **err)
{
    if (F->named && r->op_stated && F->named != r->op_stated) {
        trace_input_error(err, name, r->op_stated_line, "the output says %s, but '# op:' at line %d says %s",
                          nccltests_op_name(r->op_stated), F->named_line, nccltests_op_name(F->named));
        return false;
    }
    if (F->named && F->command && F->named != F->command) {
        trace_input_error(err, name, F->named_line, "'# op:' says %s, but '# command:' at line %d runs %s",
                          nccltests_op_name(F->named), F->command_line, nccltests_op_name(F->command));
        return false;
    }
    if (F->command && r->op_stated && F->command != r->op_stated) {
        trace_input_error(err, name, r->op_stated_line, "the output says %s, but '# command:' at line %d runs %s",
                          nccltests_op_name(r->op_stated), F->command_line, nccltests_op_name(F->command));
        return false;
    }
    const NcclTestsRow *row0 = &g_array_index(r->rows, NcclTestsRow, 0);
    int line;
    r->op = nccltests_op_said(F, r, &line);
    r->op_line = line > 0 ? line : row0->line;
    if (r->op == NCCLTESTS_UNKNOWN && row0->root >= 0)
        r->op = (!row0->redop || strcmp(row0->redop, "none") == 0) ? NCCLTESTS_BROADCAST : NCCLTESTS_REDUCE;
    else if (r->op == NCCLTESTS_UNKNOWN)
        r->op = op_from_bw(r, row0);
    return true;
}

static const char *ordinal(size_t i)
{
    static const char *w[] = { "first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth" };
    return i < G_N_ELEMENTS(w) ? w[i] : "next";
}

bool nccltests_finish_runs(GPtrArray *runs, const char *name, const FileOps *F, const GPtrArray *hkeys,
                           const GPtrArray *hvals, GError **err)
{
    for (guint i = 0; i < runs->len; i++) {
        NcclTrace *r = runs->pdata[i];
        if (!resolve_op(name, F, r, err))
            return false;
        for (guint k = 0; k < hkeys->len; k++) {
            g_ptr_array_add(r->hkeys, g_strdup(hkeys->pdata[k]));
            g_ptr_array_add(r->hvals, g_strdup(hvals->pdata[k]));
        }
        if (runs->len > 1) {
            g_free(r->name);
            r->name = g_strdup_printf("%s#run%u", name, i + 1);
        }
        const NcclTrace *r0 = runs->pdata[0];
        if (i > 0 && r->op && r0->op && r->op != r0->op) {
            trace_input_error(err, name, r->op_line, "%s table is %s at line %d, the first was %s at line %d",
                              ordinal(i), nccltests_op_name(r->op), r->op_line, nccltests_op_name(r0->op),
                              r0->op_line);
            return false;
        }
    }
    for (guint i = 0; i < runs->len; i++)
        if (!check_ranks(name, runs->pdata[i], err))
            return false;
    return true;
}

const char *nccltests_name(const NcclTrace *t) { return t->name; }
size_t nccltests_n_rows(const NcclTrace *t) { return t->rows->len; }

int nccltests_zero_rows(const NcclTrace *t) { return t->zero_rows; }

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
    int least, most;
    nccltests_ranks_per_host(t, &least, &most);
    return most;
}

void nccltests_ranks_per_host(const NcclTrace *t, int *least, int *most)
{
    *least = *most = 0;
    GHashTableIter it;
    gpointer k, v;
    g_hash_table_iter_init(&it, t->hosts);
    while (g_hash_table_iter_next(&it, &k, &v)) {
        int n = GPOINTER_TO_INT(v);
        *most = MAX(*most, n);
        *least = *least == 0 ? n : MIN(*least, n);
    }
}

size_t nccltests_n_devices(const NcclTrace *t) { return t->devices->len; }

const char *nccltests_device(const NcclTrace *t, size_t i)
{
    return i < t->devices->len ? t->devices->pdata[i] : NULL;
}

const char *nccltests_nccl_version(const NcclTrace *t) { return t->nccl_version; }
const char *nccltests_env_algo(const NcclTrace *t) { return t->env_algo; }
const char *nccltests_env_proto(const NcclTrace *t) { return t->env_proto; }

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

int nccltests_gpus_per_process(const NcclTrace *t)
{
    int most = 0;
    GHashTableIter it;
    gpointer v;
    g_hash_table_iter_init(&it, t->procs);
    while (g_hash_table_iter_next(&it, NULL, &v))
        most = MAX(most, GPOINTER_TO_INT(v));
    if (most > 0)
        return most;
    return t->ngpus > 0 ? t->ngpus * MAX(t->nthread, 1) : 1;
}

/* nGpus where printed; else the ranks of one Pid over its threads. */
int nccltests_gpus_per_thread(const NcclTrace *t)
{
    if (t->ngpus > 0)
        return t->ngpus;
    int per = nccltests_gpus_per_process(t) / MAX(t->nthread, 1);
    return per > 0 ? per : 1;
}

/* NCCL 2.12 rewrote its kernel launch: before, one thread's devices were
 * launched together with cudaLaunchCooperativeKernelMultiDevice, which waits
 * for the prior work of every stream it launches on (CUDA driver API), so
 * host launch and GPU time added up.  A run that does not print its NCCL
 * version is taken for that era when its Rank lines lack "Group" (nccl-tests
 * before 2.11, early 2022, about when NCCL 2.12 came out).  Where the run's
 * NCCL INFO log says how it launched, that decides: "Launch mode Parallel"
 * (NCCL_LAUNCH_MODE=PARALLEL, or one GPU per process) is a plain
 * cudaLaunchKernel per GPU, and "Group" waits only with "/CGMD", the
 * multi-device launch (NCCL 2.8.3 src/init.cc: GROUP where a process has
 * several GPUs unless the environment says PARALLEL; src/enqueue.cc). */
bool nccltests_launch_waits(const NcclTrace *t)
{
    if (t->launch_mode)
        return t->launch_mode == 2;
    if (t->nccl_version) {
        int major = 0, minor = 0;
        if (sscanf(t->nccl_version, "%d.%d", &major, &minor) == 2)
            return major < 2 || (major == 2 && minor < 12);
    }
    return g_hash_table_size(t->procs) > 0 && !t->rank_groups;
}
