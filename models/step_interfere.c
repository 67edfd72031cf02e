/* Interference of communication kernels with the compute they overlap.
 * NCCL's kernels are CUDA kernels: while one runs next to a GEMM on the
 * same device it holds SMs (one CTA, so one SM, per channel) and HBM
 * bandwidth (each byte sent is read from HBM, each byte received written,
 * and a reduction reads the local operand too), so the compute runs slower
 * (Centauri, ASPLOS'24; T3, ASPLOS'24; Megatron-LM's advice to cap
 * NCCL_NCHANNELS / CUDA_DEVICE_MAX_CONNECTIONS for this reason).
 *
 * The share a collective takes of what binds the compute it overlaps:
 *   NCCL's CTAs / sm_count                     GEMM-bound work (the layers'
 *                                              forward, backward, recompute)
 *   HBM bytes/s of the collective / HBM peak   memory-bound work (the
 *                                              optimizer, gradient compression)
 * A compute task overlapped for o seconds by a collective of share f runs
 * at 1 - f of its rate meanwhile, so finishes o * f later.
 *
 * Mechanism: the graph is run, every compute task is stretched by the sum
 * over the communication tasks of its device (comm, tp, p2p streams) of
 * overlap x share, and the graph is run again.  A stretch moves the
 * overlaps (a longer backward GEMM starts its bucket's all-reduce later,
 * which then overlaps other GEMMs; a GEMM under communication from end to
 * end overlaps more of it once longer, d (1 + f + f^2 ...) = d / (1 - f)),
 * so the stretches are recomputed from each new run, always on the
 * unstretched durations, until two runs in a row give the step within 1e-6
 * of each other: a fixed point of stretch = share x overlap.  Of those two
 * the first stands, so that where one pass settles it the answer is the
 * single pass's to the bit.  A schedule still moving after
 * INTERFERE_MAX_PASSES reruns keeps its last run and says so in the
 * warnings.  The least intrusive change to a FIFO-stream executor that
 * keeps the physical factor; a rate-sharing resource in sim/ would be exact
 * but touch every stream.  "comm_interference": false turns it off. */
#include "step_build.h"

#include <math.h>
#include <string.h>

/* Runs after the first to settle the stretches (each a whole graph run). */
#define INTERFERE_MAX_PASSES 8

/* NCCL's kernel runs one CTA per channel.  Inside a node the model's rings
 * (CollGroup's channels) are ring orders through the topology, one through
 * an NVSwitch; NCCL's search instead cuts the bandwidth into channels of
 * about 20 GB/s on sm80 NVLink and duplicates them (HGX A100: 12 found, 24
 * run, "Channel 23/24" in nccl-tests#100; the duplication is nccl#578), up
 * to MAXCHANNELS 32.  So: 2 x ceil(per-rank bandwidth / 20 GB/s), at least
 * the model's rings, at most 32.
 * Across nodes the search gives each NIC one channel (its speeds per
 * channel top out at 48 GB/s on sm90, src/graph/search.cc
 * sm90SpeedArrayInter: an NDR NIC's rate), and ncclTopoPostset doubles the
 * channels (src/graph/connect.cc: nChannels x 2, at most MAXCHANNELS;
 * "execution channels are typically 2x the search channels", NCCL's
 * maintainer in nccl#1041, where 8 dual-port CX7s gave H100 8): 2 x
 * the ring's channels (a NIC each, or the intra rings where there are
 * more), whatever the NICs' rate.  Not modelled: NCCL's further doubling
 * below 16 channels where a channel runs above 45 GB/s (sm90+), and a
 * second channel per NIC past 48 GB/s (800G).  A rate-driven count here
 * would charge a faster NIC more SMs while the LL128 collective it runs,
 * timed on the ring's channels, takes no less time: the step would slow
 * as the network speeds up. */
#define NCCL_CHANNEL_BPS 20e9
#define NCCL_MAX_CHANNELS 32

int interfere_ctas(const CollGroup *g)
{
    int n;
    if (coll_group_nodes(g) > 1)
        n = 2 * coll_group_ring_channels(g);
    else {
        double bw = coll_group_intra_bw(g);
        n = isfinite(bw) && bw > 0 ? 2 * (int)ceil(bw / NCCL_CHANNEL_BPS - 1e-9) : 2;
        if (n < coll_group_channels(g))
            n = coll_group_channels(g);
    }
    return n < NCCL_MAX_CHANNELS ? n : NCCL_MAX_CHANNELS;
}

/* Whether the collective reduces (reads the local operand as well). */
static bool op_reduces(CollOp op)
{
    return op == COLL_ALLREDUCE || op == COLL_REDUCESCATTER || op == COLL_REDUCE;
}

void interfere_shares(const Ctx *c, int use, double *sm_share, double *hbm_share)
{
    *sm_share = *hbm_share = 0;
    if (use < 0)
        return;
    const CollUse *u = &g_array_index(c->colls, CollUse, use);
    double sms = accel_sm_count(c->acc), hbm = accel_hbm_bandwidth(c->acc);
    double sm = sms > 0 ? interfere_ctas(u->g) / sms : 0;
    double mem = 0;
    if (hbm > 0 && u->cost.time_s > 0) {
        double wire = u->bytes * coll_busbw_factor(u->op, u->group_size) / u->cost.time_s;
        mem = wire * (op_reduces(u->op) ? 3 : 2) / hbm;
    }
    /* compute keeps some of the chip whatever NCCL asks */
    *sm_share = sm < 0.9 ? sm : 0.9;
    *hbm_share = mem < 0.9 ? mem : 0.9;
}

/* Memory-bound compute tasks (the rest are the layers' GEMMs). */
static bool memory_bound(const SimGraph *g, int t)
{
    return !strcmp(sim_graph_task_category(g, t), "optimizer") || !strcmp(sim_graph_task_name(g, t), "compress");
}

typedef struct {
    sim_time_t start, end;
    int task;
    double sm, hbm; /* a communication task's shares; a compute task's: which applies (hbm 1: memory-bound) */
} Span1;

static int by_start(const void *a, const void *b)
{
    const Span1 *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start ? 1 : x->task - y->task;
}

static void spans_sort(GArray *a)
{
    if (a->len > 1) /* an empty GArray has no data */
        qsort(a->data, a->len, sizeof(Span1), by_start);
}

/* Adds to extra[] what the tasks of `comm` (one FIFO stream, so disjoint)
 * cost the compute tasks `comp` (another, disjoint too): a sweep. */
static void add_overlaps(const GArray *comp, const GArray *comm, double *extra)
{
    guint j = 0;
    for (guint i = 0; i < comp->len; i++) {
        const Span1 *a = &g_array_index(comp, Span1, i);
        while (j < comm->len && g_array_index(comm, Span1, j).end <= a->start)
            j++;
        for (guint k = j; k < comm->len; k++) {
            const Span1 *x = &g_array_index(comm, Span1, k);
            if (x->start >= a->end)
                break;
            sim_time_t lo = x->start > a->start ? x->start : a->start;
            sim_time_t hi = x->end < a->end ? x->end : a->end;
            if (hi > lo)
                extra[a->task] += sim_time_to_s(hi - lo) * (a->hbm > 0 ? x->hbm : x->sm);
        }
    }
}

/* What the passes share: each task's SM and HBM shares (constant: from
 * the tags), and per-pass buffers sized once, since a plan runs this on
 * every candidate and fresh buffers cost their pages each pass. */
typedef struct {
    int n, nres;
    double *sm, *hbm, *extra;
    bool *comp;
    int *res;      /* a task's stream in the sweep, or -1 */
    GArray **on;   /* per stream: its spans */
} Scratch;

static void scratch_init(Scratch *x, const Build *b)
{
    x->n = (int)sim_graph_num_tasks(b->g);
    x->nres = sim_graph_num_resources(b->g);
    x->sm = g_new0(double, x->n);
    x->hbm = g_new0(double, x->n);
    x->extra = g_new(double, x->n);
    x->comp = g_new(bool, x->n);
    x->res = g_new(int, x->n);
    x->on = g_new(GArray *, x->nres);
    for (int k = 0; k < x->nres; k++)
        x->on[k] = g_array_new(FALSE, FALSE, sizeof(Span1));
    for (guint i = 0; i < b->tags->len; i++) { /* a task running several kinds: the largest share */
        const CollTag *t = &g_array_index(b->tags, CollTag, i);
        double f, h;
        interfere_shares(b->c, t->use, &f, &h);
        x->sm[t->task] = f > x->sm[t->task] ? f : x->sm[t->task];
        x->hbm[t->task] = h > x->hbm[t->task] ? h : x->hbm[t->task];
    }
}

static void scratch_free(Scratch *x)
{
    for (int k = 0; k < x->nres; k++)
        g_array_free(x->on[k], TRUE);
    g_free(x->on);
    g_free(x->sm);
    g_free(x->hbm);
    g_free(x->extra);
    g_free(x->comp);
    g_free(x->res);
}

/* Each stream's spans in the graph's last run (a FIFO stream's are
 * disjoint), sorted: which tasks count is decided first, so that each
 * stream's array is sized once. */
static void collect_spans(const Build *b, Scratch *x)
{
    guint *count = g_new0(guint, x->nres);
    for (int t = 0; t < x->n; t++) {
        int res = sim_graph_task_resource(b->g, t);
        x->res[t] = -1;
        x->comp[t] = false;
        if (res < 0 || sim_graph_task_end(b->g, t) <= sim_graph_task_start(b->g, t) ||
            !strcmp(sim_graph_task_name(b->g, t), "host_optimizer"))
            continue;
        x->comp[t] = !strcmp(sim_graph_task_category(b->g, t), "compute") ||
                     !strcmp(sim_graph_task_category(b->g, t), "optimizer");
        if (!x->comp[t] && !(x->sm[t] > 0 || x->hbm[t] > 0))
            continue;
        x->res[t] = res;
        count[res]++;
    }
    for (int k = 0; k < x->nres; k++) {
        g_array_set_size(x->on[k], count[k]);
        count[k] = 0;
    }
    for (int t = 0; t < x->n; t++) {
        int res = x->res[t];
        if (res < 0)
            continue;
        Span1 sp = {sim_graph_task_start(b->g, t), sim_graph_task_end(b->g, t), t, x->sm[t], x->hbm[t]};
        if (x->comp[t])
            sp.sm = 0, sp.hbm = memory_bound(b->g, t); /* a compute task: which share applies */
        g_array_index(x->on[res], Span1, count[res]++) = sp;
    }
    for (int k = 0; k < x->nres; k++)
        spans_sort(x->on[k]);
    g_free(count);
}

/* Sets every compute task to its unstretched duration (base) plus its
 * overlap x share in the graph's last run; *changed: whether any duration
 * moved. */
static void stretch(Build *b, Scratch *x, const sim_time_t *base, bool *changed)
{
    const Ctx *c = b->c;
    collect_spans(b, x);
    memset(x->extra, 0, sizeof(double) * x->n);
    for (int s = 0; s < c->p.pp; s++) {
        const StageRes *r = &b->res[s];
        add_overlaps(x->on[r->compute], x->on[r->comm], x->extra);
        add_overlaps(x->on[r->compute], x->on[r->tp], x->extra);
        add_overlaps(x->on[r->compute], x->on[r->p2p], x->extra);
    }
    *changed = false;
    for (int t = 0; t < x->n; t++) {
        sim_time_t d = x->comp[t] ? sim_time_add(base[t], sim_time_from_s(x->extra[t])) : base[t];
        if (d != sim_graph_task_duration(b->g, t)) {
            sim_graph_task_set_delay(b->g, t, d);
            *changed = true;
        }
    }
}

static sim_time_t rerun(Build *b)
{
    SimEngine *e = sim_engine_new();
    sim_time_t span = sim_graph_run(b->g, e, NULL);
    sim_engine_free(e);
    return span;
}

/* The durations the graph's tasks run with now, into d. */
static void durations(const SimGraph *g, sim_time_t *d, int n)
{
    for (int t = 0; t < n; t++)
        d[t] = sim_graph_task_duration(g, t);
}

sim_time_t interfere_run(Build *b, sim_time_t span)
{
    g_free(b->unstretched);
    b->unstretched = NULL;
    b->interfere_passes = 0;
    b->interfere_settled = true;
    if (!b->c->p.comm_interference || span == SIM_TIME_NEVER)
        return span;
    int n = (int)sim_graph_num_tasks(b->g);
    sim_time_t *base = g_new(sim_time_t, n), *prev = g_new(sim_time_t, n), *times = g_new(sim_time_t, 2 * (size_t)n);
    durations(b->g, base, n);
    Scratch x;
    scratch_init(&x, b);
    bool settled = false;
    for (int pass = 1; pass <= INTERFERE_MAX_PASSES && !settled; pass++) {
        durations(b->g, prev, n);
        sim_graph_save_times(b->g, times);
        bool changed;
        stretch(b, &x, base, &changed);
        if (!changed) { /* the last run's overlaps give its own stretches: it stands */
            settled = true;
            break;
        }
        sim_time_t next = rerun(b);
        if (next == SIM_TIME_NEVER) {
            span = next;
            break;
        }
        b->interfere_passes = pass;
        if (pass > 1 && fabs((double)next - (double)span) < 1e-6 * (double)span) {
            /* settled: the run that reached it stands (where one pass was
             * enough, the single pass's answer, to the bit), as it ran */
            for (int t = 0; t < n; t++)
                if (prev[t] != sim_graph_task_duration(b->g, t))
                    sim_graph_task_set_delay(b->g, t, prev[t]);
            sim_graph_restore_times(b->g, times);
            settled = true;
            break;
        }
        span = next;
    }
    b->interfere_settled = settled;
    scratch_free(&x);
    b->unstretched = base; /* the report sets what the stretches added against it */
    g_free(prev);
    g_free(times);
    return span;
}
