/* Data parallelism: the data-parallel group, the gradients' type on the
 * wire, the gradient buckets (all-reduce for a replicated update,
 * reduce-scatter for a sharded one; ZeRO-2 every micro-batch) overlapping
 * the backward, and the weight update: the optimizer's HBM traffic, on a
 * 1/dp shard when sharded, followed by the all-gather of the updated
 * weights (unless allgather_overlap moves it behind the next forward, see
 * par_zero.c). */
#include "step_build.h"

#include <math.h>

/* HBM bytes moved per parameter by one optimizer update (read + write), on
 * top of the gradient read: fp32 master copy when mixed precision, state
 * tensors, the working weights written back.  LAMB makes a second pass for
 * its trust ratio (norms of weights and update). */
static double optimizer_traffic(const StepScenario *sc, double g)
{
    MemoryOptimizer opt = step_scenario_optimizer(sc);
    bool mixed = step_scenario_precision(sc) != MEMORY_FP32, no_master = step_scenario_no_master(sc);
    double master = no_master ? 2 : 4; /* the weights the update reads and writes: fp32, or the 16-bit ones */
    double state = opt == MEMORY_OPT_SGD ? 0 : opt == MEMORY_OPT_SGD_MOMENTUM ? 1 : 2;
    double bytes = g + 2 * master + 2 * step_scenario_moment_bytes(sc) * state;
    if (mixed && !no_master)
        bytes += 2; /* write the 16-bit working copy */
    if (opt == MEMORY_OPT_LAMB)
        bytes += 4 + 4; /* re-read weights and update for the trust ratio */
    return bytes + g;   /* + the gradient-norm pass (clipping / loss-scale check) */
}

/* A data-parallel or replica group sees the fabric above the NICs through
 * the contention runs (par_contention.c), every group together; without
 * them ("flow_contention": false, plan's screening) through its own routed
 * flows and its copies' in every stage (which reduce at the step's end
 * together), as the other groups do. */
void dp_group_fabric(const Ctx *c, CollGroup *g, int stride, int n)
{
    bool own = g && !step_scenario_flow_contention(c->sc);
    if (g)
        coll_group_set_fabric(g, own);
    if (own)
        step_siblings_strided(c, g, -1, stride, n);
}

/* The group of stage 0, tensor rank 0 (every dp group looks the same). */
bool dp_init(Ctx *c, GError **err)
{
    const StepPlan *p = &c->p;
    if (p->dp == 1)
        return true;
    int n = c->zero_ranks; /* hybrid sharding: the shard group (par_zero.c) */
    int *ids = g_new(int, n);
    for (int d = 0; d < n; d++)
        ids[d] = step_rank_of(c, 0, d, 0);
    c->dp_group = step_group_new(c, ids, n, err);
    g_free(ids);
    dp_group_fabric(c, c->dp_group, p->tp, n);
    return c->dp_group != NULL;
}

void dp_costs(Ctx *c)
{
    const StepPlan *p = &c->p;
    MemoryPrecision prec = step_scenario_precision(c->sc);
    /* fp8: parameters are gathered as FP8 (Megatron-Core fp8_param_gather,
     * torchao float8 FSDP2 all-gather): 1 byte each */
    c->param_bytes = prec == MEMORY_MIXED_FP8 ? 1 : memory_param_bytes(prec);
    /* Transformer Engine's FP8 is its linear layers' (torchao's leaves the
     * output layer in 16 bit too): the embeddings and the output layer stay
     * 16-bit parameters, gathered as such */
    c->head_param_bytes = memory_param_bytes(prec);
    /* gradients travel in grad_reduce_dtype; reducing fp32 gradients in
     * mixed precision means fp32 gradient buffers (Megatron's main_grad),
     * which the optimizer reads too */
    c->grad_dtype = p->grad_reduce_dtype >= 0 ? (AccelDtype)p->grad_reduce_dtype
                    : prec == MEMORY_FP32     ? ACCEL_FP32
                                              : step_activation_dtype(c);
    c->grad_bytes_per_param = accel_dtype_bytes(c->grad_dtype);
    c->fp32_grads = prec != MEMORY_FP32 && c->grad_bytes_per_param == 4;
    c->opt_bytes_per_param = optimizer_traffic(c->sc, memory_grad_bytes(prec, c->fp32_grads));
    c->ag_overlap = (p->zero_stage == 1 || p->zero_stage == 2) && p->dp > 1 && p->allgather_overlap != 0;
}

/* The parameters whose gradients become ready k-th in backward order on
 * stage s (head and tied copy on the last stage first, then layers from
 * last to first, the embeddings last on stage 0), and the task after which
 * they are ready. */
static double grad_item(const Build *b, int s, int k, int *ready)
{
    const Ctx *c = b->c;
    int nl = step_stage_layers(c, s);
    *ready = -1;
    if (k == 0) {
        if (s == c->p.pp - 1)
            *ready = b->head_bwd_end[s];
        if (s == c->p.pp - 1) /* a tied copy of the embeddings, the MTP modules */
            return pipeline_stage_params(c, s) - step_stage_layer_params(c, s) - (s == 0 ? c->head_params : 0);
        return 0;
    }
    if (k <= nl) {
        *ready = b->layer_bwd_end[s][nl - k];
        return step_layer_params(c, s, nl - k);
    }
    *ready = b->layer_bwd_end[s][0];
    return s == 0 ? c->head_params : 0;
}

/* One full bucket of `params` gradients after `prev`: compressed first when
 * asked, and split when a layer is larger than a bucket.  Appends each
 * piece's collective to `ends` and its parameters to `bucket_params`. */
static void grad_flush(Build *b, int s, double params, int prev, GArray *ends, GArray *bucket_params, int *bucket)
{
    Ctx *c = b->c;
    SimGraph *g = b->g;
    bool sharded = c->p.zero_stage >= 1;
    CollOp op = sharded ? COLL_REDUCESCATTER : COLL_ALLREDUCE;
    const char *cname = sharded ? "grad_reducescatter" : "grad_allreduce";
    double gb = c->grad_bytes_per_param;
    double bytes = params * gb;
    if (c->p.compression < 1) {
        /* compress before and decompress after: a memory-bound pass over
         * the gradients and the compressed data, twice */
        int cp = step_task(g, "compress", b->res[s].compute,
                           accel_mem_time(c->acc, 2 * bytes * (1 + c->p.compression)), "compute");
        step_dep(g, prev, cp);
        prev = cp;
    }
    int nb = (int)ceil(bytes / c->p.bucket_bytes - 1e-9);
    if (nb < 1)
        nb = 1;
    double piece = params / nb;
    for (int k = 0; k < nb; k++) {
        if (sharded && c->p.sdp4bit_gradients) { /* SDP4Bit: two-level quantised all-to-all (par_zeropp.c) */
            int t = zeropp_reduce(b, s, piece, prev);
            g_array_append_val(ends, t);
            g_array_append_val(bucket_params, piece);
            continue;
        }
        int u = step_coll(c, cname, "dp", c->dp_group, op, piece * gb * c->p.compression);
        int ct = step_task(g, cname, b->res[s].comm, step_coll_time(c, u), "comm");
        sim_graph_task_set_tag(g, ct, SIM_TAG_BUCKET, (*bucket)++);
        step_coll_tag(b, ct, u, 1, s);
        step_dep(g, prev, ct);
        g_array_append_val(ends, ct);
        g_array_append_val(bucket_params, piece);
    }
}

/* Gradient buckets of stage s after the backward tasks recorded in
 * b->layer_bwd_end (last micro-batch, or every micro-batch under ZeRO-2);
 * without overlap, all after `fallback_dep`. */
static void grad_buckets(Build *b, int s, int fallback_dep, GArray *ends, GArray *bucket_params)
{
    const Ctx *c = b->c;
    double pending = 0;
    int pending_dep = -1, bucket = 0;
    int nitems = step_stage_layers(c, s) + 2;
    for (int k = 0; k < nitems; k++) {
        int ready;
        double params = grad_item(b, s, k, &ready);
        if (!c->p.overlap)
            ready = fallback_dep;
        if (params > 0) {
            pending += params;
            if (ready >= 0)
                pending_dep = ready;
        }
        if (pending > 0 && (pending * c->grad_bytes_per_param >= c->p.bucket_bytes || k == nitems - 1)) {
            grad_flush(b, s, pending, pending_dep >= 0 ? pending_dep : fallback_dep, ends, bucket_params,
                       &bucket);
            pending = 0;
            pending_dep = -1;
        }
    }
}

static bool zero2(const Ctx *c) { return c->p.zero_stage == 2 && c->p.dp > 1; }

/* ZeRO-2 reduce-scatters every micro-batch's gradients: the backward about
 * to be built records its own readiness... */
void dp_backward_begin(Build *b, int s)
{
    if (zero2(b->c))
        for (int l = 0; l < step_stage_layers(b->c, s); l++)
            b->layer_bwd_end[s][l] = -1;
}

/* ...and its buckets go out after it (the last micro-batch's with the
 * update, dp_sync_and_update). */
void dp_backward_end(Build *b, int s, int last, bool last_mb)
{
    if (!zero2(b->c) || last_mb)
        return;
    GArray *e2 = g_array_new(FALSE, FALSE, sizeof(int));
    GArray *p2 = g_array_new(FALSE, FALSE, sizeof(double));
    grad_buckets(b, s, last, e2, p2);
    g_array_free(e2, TRUE);
    g_array_free(p2, TRUE);
}

/* Stage s's last gradient synchronisation and its weight update.  `ends`
 * and `bucket_params` are scratch (emptied here). */
void dp_sync_and_update(Build *b, int s, GArray *ends, GArray *bparams)
{
    Ctx *c = b->c;
    SimGraph *g = b->g;
    const StepPlan *p = &c->p;
    StageRes *r = &b->res[s];
    int last_bwd = b->bw[s * c->m + c->m - 1].last;
    double params = pipeline_stage_params(c, s);
    g_array_set_size(ends, 0);
    g_array_set_size(bparams, 0);
    if (p->dp > 1 && p->zero_stage < 3)
        grad_buckets(b, s, last_bwd, ends, bparams);
    if (p->dp > 1 && p->zero_stage == 3)
        zero3_grad_ends(b, s, last_bwd, ends);
    double shard = p->zero_stage >= 1 ? 1.0 / c->zero_ranks : 1.0; /* dp 1: the whole update */
    if ((p->zero_stage == 1 || p->zero_stage == 2) && p->dp > 1) {
        /* per bucket: update the shard, then all-gather the new weights;
         * the gathers overlap the next bucket's update */
        for (guint k = 0; k < bparams->len; k++) {
            double bp = g_array_index(bparams, double, k);
            sim_graph_set_default_tag(g, SIM_TAG_BUCKET, (int)k); /* its update and gather */
            int o = offload_update(b, s, bp * shard, g_array_index(ends, int, k), last_bwd, NULL);
            if (c->ag_overlap) /* gathered behind the next step's forward (par_zero.c) */
                continue;
            if (p->sdp4bit_weights) { /* SDP4Bit: 4-bit weight differences (par_zeropp.c) */
                zeropp_gather(b, s, "sdp4bit_param_allgather", c->dp_group, bp, zeropp_weight_wire(c, true), o);
                continue;
            }
            int u = step_coll(c, "param_allgather", "dp", c->dp_group, COLL_ALLGATHER, bp * c->param_bytes);
            int ag = step_task(g, "param_allgather", r->comm, step_coll_time(c, u), "comm");
            step_coll_tag(b, ag, u, 1, s);
            step_dep(g, o, ag);
        }
        sim_graph_set_default_tag(g, SIM_TAG_BUCKET, -1);
        return;
    }
    offload_update(b, s, params * shard, last_bwd, -1, ends);
}
