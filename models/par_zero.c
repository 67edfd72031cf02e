/* ZeRO's weight gathers (Rajbhandari et al.; FSDP): ZeRO-3 all-gathers each
 * layer's parameters before its forward and again before its backward,
 * prefetched two layers ahead, and reduce-scatters the layer's gradients
 * right after its backward.  A ZeRO-1/2 sharded update with
 * allgather_overlap gathers the updated weights layer by layer, in pieces
 * of at most a bucket (small layers together), behind the next step's
 * first forward (Xu et al.);
 * in the steady state the previous step's update is done when it starts.
 * FSDP's hybrid sharding (HYBRID_SHARD, Zhao et al. 2023) runs ZeRO-3
 * inside shard groups of shard_group dp ranks (dp_group is then that
 * group) and all-reduces each reduce-scattered gradient shard across the
 * dp / shard_group replicas (rep_group, the ranks with the same shard). */
#include "step_build.h"

#include <math.h>

bool zero_init(Ctx *c, GError **err)
{
    int nrep = c->p.dp / c->zero_ranks;
    if (nrep < 2)
        return true;
    int *ids = g_new(int, nrep);
    for (int k = 0; k < nrep; k++)
        ids[k] = step_rank_of(c, 0, k * c->zero_ranks, 0);
    c->rep_group = step_group_new(c, ids, nrep, err);
    g_free(ids);
    dp_group_fabric(c, c->rep_group, c->zero_ranks * c->p.tp, nrep);
    return c->rep_group != NULL;
}

/* FSDP2 ("zero_impl": "fsdp2") shards each parameter on its own, so its
 * collectives work on flat buffers that it copies in and out of (PyTorch
 * torch/distributed/_composable/fsdp/_fsdp_collectives.py):
 * foreach_all_gather_copy_out splits every all-gathered layer into its
 * parameters (split_with_sizes_copy: read and write the gathered bytes) on
 * the compute stream, before the forward and again before the backward;
 * foreach_reduce's copy-in (_chunk_cat) reads the layer's unsharded 16-bit
 * gradients and writes them in the reduce dtype, and the compute stream
 * waits for it before it frees them.  So per layer and pass the compute
 * stream carries 2 P e bytes forward and 2 P e + P (g + r) backward (P the
 * layer's parameters, e the gathered bytes, g and r the gradients' and the
 * reduction's).  FSDP1's flat parameters gather and reduce in place. */
static void fsdp2_copies(const Ctx *c, double P, double *fwd, double *bwd)
{
    double g = memory_param_bytes(step_scenario_precision(c->sc));
    double out = accel_mem_time(c->acc, 2 * P * c->param_bytes);
    *fwd += out;
    *bwd += out + accel_mem_time(c->acc, P * (g + c->grad_bytes_per_param));
}

void zero_fsdp2_costs(Ctx *c)
{
    if (!c->p.zero_fsdp2 || c->p.zero_stage != 3 || c->zero_ranks < 2)
        return;
    /* a MoE layer's experts too where FSDP shards them (over their edp ranks) */
    fsdp2_copies(c, c->layer_params + (c->edp_group ? c->expert_params : 0), &c->t_fwd, &c->t_bwd);
    if (c->dense_layers)
        fsdp2_copies(c, c->layer_params_dense, &c->t_fwd_dense, &c->t_bwd_dense);
}

/* Hybrid sharding: the shard of `grad_bytes` of gradients all-reduced
 * across the replicas after `after`; returns that task, or `after`. */
static int replica_allreduce(Build *b, int s, double grad_bytes, int after)
{
    Ctx *c = b->c;
    int u = step_coll(c, "hybrid_allreduce", "replicas", c->rep_group, COLL_ALLREDUCE, grad_bytes / c->zero_ranks);
    if (u < 0)
        return after;
    int t = step_coll_task(b, NULL, s, b->res[s].comm, u, "comm");
    step_dep(b->g, after, t);
    return t;
}

/* ZeRO-3: all-gather of one layer's parameters on the comm stream (ZeRO++:
 * quantised, or from the node's secondary partition in the backward). */
static int zero3_gather(Build *b, int s, const ZeroPass *z, int after)
{
    const Ctx *c = b->c;
    int u_ag = z->u_ag;
    if (z->bwd && c->p.hpz && c->node_group)
        return zeropp_gather(b, s, "hpz_allgather", c->node_group, c->layer_params, c->param_bytes, after);
    if (c->p.qwz)
        return zeropp_gather(b, s, "qwz_allgather", c->dp_group, c->layer_params, zeropp_weight_wire(c, false), after);
    int t = step_task(b->g, "zero3_allgather", b->res[s].comm, step_coll_time(b->c, u_ag), "comm");
    step_coll_tag(b, t, u_ag, 1, s);
    step_dep(b->g, after, t);
    return t;
}

/* The all-gather `name` of `params` parameters of `bpp` bytes each on stage
 * s's comm stream, in pieces of at most a bucket, issued after `after`
 * (layer order): a sharded update's (allgather_overlap) or ZeRO-3's of the
 * parameters outside the layers.  Returns the last piece. */
static int params_gather(Build *b, int s, const char *name, double params, double bpp, int after)
{
    Ctx *c = b->c;
    double bytes = params * bpp;
    int nb = (int)ceil(bytes / c->p.bucket_bytes - 1e-9);
    if (nb < 1)
        nb = 1;
    int prev = after;
    for (int k = 0; k < nb; k++) {
        if (c->p.sdp4bit_weights) { /* SDP4Bit: 4-bit weight differences (par_zeropp.c) */
            prev = zeropp_gather(b, s, "sdp4bit_param_allgather", c->dp_group, params / nb, zeropp_weight_wire(c, true),
                                 prev);
            continue;
        }
        int u = step_coll(c, name, "dp", c->dp_group, COLL_ALLGATHER, bytes / nb);
        int ag = step_task(b->g, name, b->res[s].comm, step_coll_time(c, u), "comm");
        step_coll_tag(b, ag, u, 1, s);
        step_dep(b->g, prev, ag);
        prev = ag;
    }
    return prev;
}

/* Before stage s's pass (model chunk `chunk`, micro-batch mbi, dir 0
 * forward or 1 backward) whose first dependency is `prev`: the gathers'
 * costs, and the embeddings' gather before the first forward of stage 0. */
void zero_pass_begin(ZeroPass *z, Build *b, int s, int chunk, int mbi, int dir, int prev)
{
    Ctx *c = b->c;
    *z = (ZeroPass){.z3 = c->p.zero_stage == 3 && c->p.dp > 1, .bwd = dir == 1, .start = prev, .ag_prev = -1,
                    .hist = {-1, -1}, .u_ag = -1, .u_rs = -1, .u_eag = -1, .u_ers = -1};
    /* Under a pipeline (PyTorch's pipelining over FSDP2, as torchtitan and
     * NeMo AutoModel run it: reshard_after_forward False, and
     * stage.backward_maybe_with_nosync syncs gradients only in a
     * schedule's last backward) a stage's weights are gathered at the
     * schedule's first forward and kept, its gradients accumulated whole
     * and reduce-scattered at its last backward; without one, every pass. */
    int k = mbi % c->m_flush;
    bool piped = c->p.pp > 1;
    z->z3_ag = z->z3 && (piped ? dir == 0 && k == 0 : true);
    z->z3_rs = z->z3 && dir == 1 && (piped ? k == c->m_flush - 1 : true);
    if (z->z3_ag)
        z->u_ag = step_coll(c, "zero3_allgather", "dp", c->dp_group, COLL_ALLGATHER, c->layer_params * c->param_bytes);
    if (z->z3_rs)
        z->u_rs = step_coll(c, "zero3_reducescatter", "dp", c->dp_group, COLL_REDUCESCATTER,
                            c->layer_params * c->grad_bytes_per_param * c->p.compression);
    /* the experts, FSDP-sharded over the ranks holding the same ones */
    if (z->z3_ag && c->edp_group)
        z->u_eag = step_coll(c, "zero3_expert_allgather", "edp", c->edp_group, COLL_ALLGATHER,
                             c->expert_params * c->param_bytes);
    if (z->z3_rs && c->edp_group)
        z->u_ers = step_coll(c, "zero3_expert_reducescatter", "edp", c->edp_group, COLL_REDUCESCATTER,
                             c->expert_params * c->grad_bytes_per_param * c->p.compression);
    z->gather = dir == 0 && c->ag_overlap && mbi == 0;
    z->layer = z->bucket_end = step_chunk_l0(c, s, chunk);
    z->chunk_end = step_chunk_l0(c, s, chunk + 1);
    z->bucket_ag = -1;
    if (z->gather && s == 0 && chunk == 0)
        z->ag_prev = params_gather(b, s, "param_allgather", c->head_params, c->head_param_bytes, -1);
    /* ZeRO-3: the parameters outside the layers (embeddings, final norm,
     * output layer: FSDP's root unit, which stays gathered from its
     * forward through its backward) gathered before the first layer's */
    if (z->z3_ag && dir == 0 && s == 0 && chunk == 0 && c->head_params > 0.5)
        z->ag_prev = params_gather(b, s, "zero3_head_allgather", c->head_params, c->head_param_bytes, prev);
}

/* ZeRO-3 of a MoE layer: its experts' collective `use` on stage s's comm
 * stream after `after`; returns it, or `after` for a dense layer. */
static int expert_task(Build *b, int s, int l, const char *name, int use, int after)
{
    if (use < 0 || step_layer_dense(b->c, s, l))
        return after;
    int t = step_task(b->g, name, b->res[s].comm, step_coll_time(b->c, use), "comm");
    step_coll_tag(b, t, use, 1, s);
    step_dep(b->g, after, t);
    return t;
}

/* The gather layer l's compute waits for, or -1.  ZeRO-3's gather of layer
 * i waits for layer i-2's compute (z->hist); a MoE layer's experts follow
 * its dense weights. */
int zero_layer_gather(ZeroPass *z, Build *b, int s, int l)
{
    if (z->z3 && !z->z3_ag)
        return -1; /* kept gathered from the schedule's first forward */
    if (z->z3) {
        int ag = zero3_gather(b, s, z, z->hist[0] >= 0 ? z->hist[0] : z->start);
        step_dep(b->g, z->ag_prev, ag);
        return z->ag_prev = expert_task(b, s, l, "zero3_expert_allgather", z->u_eag, ag);
    }
    if (!z->gather)
        return -1;
    /* layers smaller than a bucket share one gather, like the gradients'
     * buckets (XLA's all-gather combiner): it covers the next layers while
     * they fit; a larger layer goes alone, in pieces */
    const Ctx *c = b->c;
    if (z->layer >= z->bucket_end) {
        double params = step_layer_params(c, s, z->layer);
        int end = z->layer + 1;
        while (end < z->chunk_end && (params + step_layer_params(c, s, end)) * c->param_bytes <= c->p.bucket_bytes)
            params += step_layer_params(c, s, end++);
        z->bucket_end = end;
        z->bucket_ag = z->ag_prev = params_gather(b, s, "param_allgather", params, c->param_bytes, z->ag_prev);
    }
    z->layer++;
    return z->bucket_ag;
}

/* The last stage's copy of tied word embeddings (`params`, pp > 1): the
 * gather the head's forward waits for, or -1. */
int zero_head_gather(ZeroPass *z, Build *b, int s, double params)
{
    return z->gather && params > 0.5 ? params_gather(b, s, "param_allgather", params, b->c->head_param_bytes, z->ag_prev)
                                     : -1;
}

/* ZeRO-3: layer l's gradients reduce-scattered after its backward `after`
 * (a MoE layer's experts' then); returns that task (the update waits for
 * it), or `after`. */
int zero_layer_reduce(ZeroPass *z, Build *b, int s, int l, int after)
{
    if (!z->z3_rs)
        return after;
    if (b->c->p.qgz) /* ZeRO++: quantised hierarchical all-to-all (par_zeropp.c) */
        return zeropp_reduce(b, s, b->c->layer_params, after);
    int rs = step_task(b->g, "zero3_reducescatter", b->res[s].comm, step_coll_time(b->c, z->u_rs), "comm");
    step_coll_tag(b, rs, z->u_rs, 1, s);
    step_dep(b->g, after, rs);
    rs = expert_task(b, s, l, "zero3_expert_reducescatter", z->u_ers, rs);
    return replica_allreduce(b, s, b->c->layer_params * b->c->grad_bytes_per_param * b->c->p.compression, rs);
}

/* ZeRO-3: what stage s's update waits for: every layer's reduce-scatter,
 * and one more for the embeddings on the first and last stages. */
void zero3_grad_ends(Build *b, int s, int last_bwd, GArray *ends)
{
    Ctx *c = b->c;
    int nl = step_stage_layers(c, s);
    for (int l = 0; l < nl; l++)
        g_array_append_val(ends, b->layer_bwd_end[s][l]);
    if (s != 0 && s != c->p.pp - 1)
        return;
    double hp = pipeline_stage_params(c, s) - step_stage_layer_params(c, s);
    if (c->p.qgz) {
        int t = hp > 0 ? zeropp_reduce(b, s, hp, last_bwd) : last_bwd;
        g_array_append_val(ends, t);
        return;
    }
    int u = step_coll(c, "grad_reducescatter", "dp", c->dp_group, COLL_REDUCESCATTER,
                      hp * c->grad_bytes_per_param * c->p.compression);
    int rs = step_task(b->g, "grad_reducescatter", b->res[s].comm, step_coll_time(c, u), "comm");
    step_coll_tag(b, rs, u, 1, s);
    step_dep(b->g, last_bwd, rs);
    rs = replica_allreduce(b, s, hp * c->grad_bytes_per_param * c->p.compression, rs);
    g_array_append_val(ends, rs);
}
