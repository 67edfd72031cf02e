/* Mixture of experts with expert parallelism (GShard, Lepikhin et al.
 * 2020; Megatron-Core MoE): the routed experts of each layer are split
 * over ep consecutive data-parallel ranks.  Each MoE layer's forward sends
 * every token's top_k copies to the ranks holding their experts (the
 * dispatch all-to-all) and brings them back (the combine all-to-all); the
 * backward does the same with the gradients, and full recomputation
 * repeats the forward's.  A rank's buffer is its tokens x top_k x capacity
 * factor x hidden.  The all-to-alls sit on the critical path after the
 * layer's compute (no overlap).  The experts' gradients are reduced over
 * the expert-data-parallel group, the dp / ep ranks holding the same
 * experts (all-reduce; reduce-scatter + all-gather of the updated weights
 * under ZeRO-1/2, at the end of the step), layer by layer after its last
 * backward, and their update and memory are sharded over that group. */
#include "step_build.h"

#include <math.h>

/* n ranks `stride` apart in the tp x dp grid of stage 0 (tp fastest, as
 * Megatron orders them: expert groups are etp, ep, edp innermost first). */
static void ids_of(const Ctx *c, int n, int stride, int *ids)
{
    for (int i = 0, tp = c->p.tp; i < n; i++)
        ids[i] = step_rank_of(c, 0, i * stride / tp, i * stride % tp);
}

static CollGroup *group_of(const Ctx *c, int n, int stride, GError **err)
{
    int *ids = g_new(int, n);
    ids_of(c, n, stride, ids);
    CollGroup *g = step_group_new(c, ids, n, err);
    g_free(ids);
    return g;
}

int moe_etp(const Ctx *c) { return c->p.etp > 0 ? c->p.etp : c->p.tp; }

/* The ranks of ep (each holding E / ep consecutive experts) that a token's
 * k experts fall on, on average.  Uniform routing (any k of E, as a
 * balanced router picks them): ep (1 - C(E - E/ep, k) / C(E, k)).  Round
 * robin (NeMo AutoModel's FakeBalancedGate: token i takes experts
 * i k .. i k + k - 1 mod E): averaged over the starts the tokens cycle
 * through, the multiples of gcd(k, E). */
double moe_ranks_per_token(int experts, int top_k, int ep, bool round_robin)
{
    int m = experts / ep;
    if (!round_robin) {
        double none = 1; /* no expert on a given rank */
        for (int i = 0; i < top_k; i++)
            none *= experts - m - i > 0 ? (double)(experts - m - i) / (experts - i) : 0;
        return ep * (1 - none);
    }
    int g = top_k, b = experts;
    while (b) {
        int r = g % b;
        g = b;
        b = r;
    }
    long sum = 0;
    for (int s = 0; s < experts; s += g)
        for (int j = 0; j < top_k; j++) { /* count expert j's rank unless an earlier one had it */
            int r = (s + j) % experts / m, seen = 0;
            for (int i = 0; i < j && !seen; i++)
                seen = (s + i) % experts / m == r;
            sum += !seen;
        }
    return (double)sum / (experts / g);
}

/* The expert-data-parallel ranks: those of tp x dp holding the same experts. */
int moe_edp(const Ctx *c) { return c->p.tp * c->p.dp / (c->p.ep * moe_etp(c)); }

/* The nodes the ep ranks ids fill in equal consecutive blocks, or 0. */
static int ep_nodes(const Ctx *c, const int *ids, int ep)
{
    int nn = 1;
    for (int k = 1; k < ep; k++)
        nn += topo_node_of(c->topo, ids[k]) != topo_node_of(c->topo, ids[k - 1]);
    if (ep % nn)
        return 0;
    for (int k = 0, per = ep / nn; k < ep; k++)
        if (topo_node_of(c->topo, ids[k]) != topo_node_of(c->topo, ids[k / per * per]))
            return 0;
    return nn;
}

/* DeepEP across nodes (its README's normal kernels, "NVLink and RDMA
 * forwarding"): a token crosses the network once to each node holding any
 * of its experts, to the rank of its own local index there, which forwards
 * it over NVLink to that node's ranks holding them; the two run pipelined,
 * so a dispatch (and a combine) takes the longer of the network all-to-all
 * among the same-index ranks (nodes-per-token rows a token) and the node's
 * NVLink all-to-all (ranks-per-token rows), over the nn nodes the ep ranks
 * fill in equal blocks. */
static bool deepep_forwarding(Ctx *c, const int *ids, int ep, int nn, double row_bytes, GError **err)
{
    const WorkloadTransformer *tr = workload_transformer(c->w);
    int per = ep / nn;
    int *rail = g_new(int, nn);
    for (int r = 0; r < nn; r++)
        rail[r] = ids[r * per];
    c->ep_rail_group = step_group_new(c, rail, nn, err);
    g_free(rail);
    step_siblings_strided(c, c->ep_rail_group, 0, per * moe_etp(c), nn);
    if (!c->ep_rail_group || (per > 1 && !(c->ep_node_group = step_group_new(c, ids, per, err))))
        return false;
    bool rr = c->p.moe_routing == STEP_ROUTE_ROUND_ROBIN;
    double net = row_bytes * moe_ranks_per_token(tr->experts, tr->top_k, nn, rr),
           nvl = row_bytes * moe_ranks_per_token(tr->experts, tr->top_k, ep, rr);
    c->ep_use[0] = step_coll(c, "ep_dispatch", "ep_rail", c->ep_rail_group, COLL_ALLTOALL, net);
    c->ep_use[1] = step_coll(c, "ep_combine", "ep_rail", c->ep_rail_group, COLL_ALLTOALL, net);
    c->ep_use[2] = step_coll(c, "ep_dispatch_nvlink", "ep_node", c->ep_node_group, COLL_ALLTOALL, nvl);
    c->ep_use[3] = step_coll(c, "ep_combine_nvlink", "ep_node", c->ep_node_group, COLL_ALLTOALL, nvl);
    c->t_ep = 0;
    for (int k = 0; k < 2; k++)
        c->t_ep += fmax(step_coll_time(c, c->ep_use[k]), step_coll_time(c, c->ep_use[k + 2]));
    return true;
}

bool moe_init(Ctx *c, GError **err)
{
    for (int k = 0; k < 4; k++)
        c->ep_use[k] = -1;
    const WorkloadTransformer *tr = workload_transformer(c->w);
    if (!tr || tr->experts == 0)
        return true;
    int ep = c->p.ep, etp = moe_etp(c), edp = moe_edp(c);
    int L = workload_num_layers(c->w); /* a MoE layer (DeepSeek's first are dense) */
    c->expert_params = workload_params_layer_experts(c->w, L - 1) / ((double)ep * etp);
    int *ids = g_new(int, ep);
    ids_of(c, ep, etp, ids);
    c->ep_group = ep > 1 ? step_group_new(c, ids, ep, err) : NULL;
    step_siblings_strided(c, c->ep_group, 0, etp, ep);
    if (ep > 1 && !c->ep_group) {
        g_free(ids);
        return false;
    }
    if (edp > 1 && !(c->edp_group = group_of(c, edp, ep * etp, err))) {
        g_free(ids);
        return false;
    }
    step_siblings_strided(c, c->edp_group, -1, ep * etp, edp); /* every stage's reduce their experts at the end */
    /* with sequence parallelism each tp rank dispatches its 1/tp of the tokens */
    double T = (double)step_scenario_micro_batch(c->sc) * tr->seq_len / (c->p.sequence_parallel ? c->p.tp : 1);
    double row = T * tr->hidden * c->wp.act_bytes;
    bool deepep = c->p.ep_dispatcher == STEP_EP_DEEPEP;
    int nn = deepep && ep > 1 ? ep_nodes(c, ids, ep) : 0;
    bool ok = true;
    if (nn >= 2) {
        ok = deepep_forwarding(c, ids, ep, nn, row, err);
    } else {
        /* Megatron's alltoall dispatcher sends each of a token's top_k
         * copies; DeepEP one per rank holding any of its experts, combining
         * there (in one node, or where the ranks do not fill their nodes in
         * equal blocks) */
        double copies = deepep ? moe_ranks_per_token(tr->experts, tr->top_k, ep,
                                                     c->p.moe_routing == STEP_ROUTE_ROUND_ROBIN)
                               : tr->top_k * c->p.capacity_factor;
        c->ep_use[0] = step_coll(c, "ep_dispatch", "ep", c->ep_group, COLL_ALLTOALL, row * copies);
        c->ep_use[1] = step_coll(c, "ep_combine", "ep", c->ep_group, COLL_ALLTOALL, row * copies);
        c->t_ep = step_coll_time(c, c->ep_use[0]) + step_coll_time(c, c->ep_use[1]);
    }
    g_free(ids);
    if (!ok)
        return false;
    /* full recomputation and a checkpointed MoE layer ("moe") dispatch and combine again */
    if (c->p.recompute == WORKLOAD_RECOMPUTE_FULL || (c->p.recompute_modules & WORKLOAD_RC_MOE))
        c->t_ep_recompute = c->t_ep;
    return true;
}

/* DeepEP's normal kernels run on a fixed set of SMs (Megatron-Core's
 * moe_deepep_num_sms, "historical default 20", transformer_config.py). */
#define DEEPEP_SMS 20

/* The share of the SMs an all-to-all takes from the compute beside it:
 * DeepEP's own SMs, or NCCL's CTAs (step_interfere.c); none where
 * "comm_interference" is off. */
static double ep_sm_share(const Ctx *c)
{
    if (!c->p.comm_interference)
        return 0;
    double sm = 0, hbm = 0, sms = accel_sm_count(c->acc);
    if (c->wp.ep_deepep)
        sm = sms > 0 ? DEEPEP_SMS / sms : 0;
    else
        interfere_shares(c, c->ep_use[0], &sm, &hbm);
    return fmin(sm, 0.9);
}

/* Megatron-Core's overlap_moe_expert_parallel_comm (with
 * delay_wgrad_compute, under interleaved 1F1B) runs one micro-batch's
 * forward beside another's backward, layer by layer, each pass's dispatch
 * and combine under the other's attention and expert compute: the
 * forward's all-to-alls stay exposed where longer than a layer's backward,
 * the backward's where longer than its forward.  The hidden part holds
 * SMs the compute beside it would use: that compute runs at 1 - f of its
 * rate meanwhile, so finishes hidden x f later (step_interfere.c's rule
 * for the collectives the graph overlaps), charged here with the exposed
 * part, on the layer's all-to-all task.  Warm-up and cool-down, where
 * no pair runs, are counted as overlapped too. */
void moe_overlap_costs(Ctx *c)
{
    c->t_ep_fwd = c->t_ep_bwd = c->t_ep;
    if (!c->p.ep_overlap)
        return;
    c->t_ep_fwd = c->t_ep > c->t_bwd ? c->t_ep - c->t_bwd : 0;
    c->t_ep_bwd = c->t_ep > c->t_fwd ? c->t_ep - c->t_fwd : 0;
    double f = ep_sm_share(c), hidden_fwd = c->t_ep - c->t_ep_fwd, hidden_bwd = c->t_ep - c->t_ep_bwd;
    c->t_ep_fwd += f * hidden_fwd;
    c->t_ep_bwd += f * hidden_bwd;
}

void moe_free(Ctx *c)
{
    coll_group_free(c->ep_group);
    coll_group_free(c->edp_group);
    coll_group_free(c->ep_rail_group);
    coll_group_free(c->ep_node_group);
}

/* The layer's dispatch and combine on stage s's tp stream after `after`;
 * returns the task, or `after` when there are none. */
int moe_after(Build *b, int s, const char *name, double seconds, int after)
{
    if (seconds <= 0)
        return after;
    int t = step_task(b->g, name, b->res[s].tp, seconds, "ep");
    step_dep(b->g, after, t);
    for (int k = 0; k < 4; k++)
        step_coll_tag(b, t, b->c->ep_use[k], 1, s);
    return t;
}

/* `bytes` on the expert-data-parallel group in pieces of at most a bucket,
 * chained after `after`; returns the last piece, or `after`. */
static int edp_pieces(Build *b, int s, const char *name, CollOp op, double bytes, int after)
{
    Ctx *c = b->c;
    int nb = (int)ceil(bytes / c->p.bucket_bytes - 1e-9);
    if (nb < 1)
        nb = 1;
    int u = step_coll(c, name, "edp", c->edp_group, op, bytes / nb);
    if (u < 0)
        return after;
    int prev = after;
    for (int k = 0; k < nb; k++) {
        int t = step_coll_task(b, NULL, s, b->res[s].comm, u, "comm");
        step_dep(b->g, prev, t);
        prev = t;
    }
    return prev;
}

void moe_sync_and_update(Build *b, int s)
{
    Ctx *c = b->c;
    if (c->expert_params <= 0)
        return;
    const StepPlan *p = &c->p;
    int edp = moe_edp(c), nl = step_stage_layers(c, s);
    bool sharded = p->zero_stage >= 1 && edp > 1;
    int last_bwd = b->bw[s * c->m + c->m - 1].last;
    double gbytes = c->expert_params * c->grad_bytes_per_param * p->compression;
    /* the MTP modules' experts first, ready with the head's backward */
    int mtp = s == p->pp - 1 ? workload_transformer(c->w)->mtp_layers : 0;
    for (int l = nl - 1 + mtp; l >= 0; l--) {
        if (l < nl && step_layer_dense(c, s, l))
            continue;
        int end = l < nl ? b->layer_bwd_end[s][l] : b->head_bwd_end[s];
        int ready = p->overlap && end >= 0 ? end : last_bwd;
        /* ZeRO-3 reduce-scattered a layer's experts with it (par_zero.c)
         * and gathers them again before each use */
        bool z3 = p->zero_stage == 3 && l < nl;
        int synced = z3 ? ready
                        : edp_pieces(b, s, sharded ? "expert_reducescatter" : "expert_allreduce",
                                     sharded ? COLL_REDUCESCATTER : COLL_ALLREDUCE, gbytes, ready);
        double shard = sharded ? 1.0 / edp : 1;
        int o = offload_update(b, s, c->expert_params * shard, synced, last_bwd, NULL);
        if (sharded && !z3)
            edp_pieces(b, s, "expert_allgather", COLL_ALLGATHER, c->expert_params * c->param_bytes, o);
    }
}

bool moe_memory(const Ctx *c, int s, const MemoryConfig *dense, MemoryBreakdown *mem, GError **err)
{
    if (c->expert_params <= 0)
        return true;
    MemoryConfig e = *dense;
    e.params = step_stage_moe_layers(c, s) * c->expert_params;
    e.dp = moe_edp(c);
    e.bucket_bytes = 0;
    /* ZeRO-3 over the expert-data-parallel ranks: two layers' experts
     * gathered at once, as the dense weights (step_stage_memory) */
    e.zero3_gathered_params = e.zero_stage == 3 && e.dp > 1 ? 2 * c->expert_params : 0;
    e.stream_pool_bytes = 0; /* ZeRO-3's reduce-scatter pool: the dense estimate's */
    if (e.zero3_gathered_params > 0 && c->p.pp > 1) { /* kept gathered, gradients whole (step_stage_memory) */
        e.zero3_gathered_params = e.params;
        e.stream_pool_bytes = e.params * c->grad_bytes_per_param;
    }
    e.activation_bytes = 0;
    e.inflight_microbatches = 1;
    e.reserve_bytes = 0;
    e.working_set_bytes = 0; /* the dense estimate has it */
    e.tp_overlap_bytes = 0;
    e.fragmentation = 0; /* the caller's holes cover every buffer (memory_apply_fragmentation) */
    e.fp8_weight_params = dense->fp8_weight_params > 0 ? e.params : 0; /* experts are linear layers */
    MemoryBreakdown x;
    if (!memory_estimate(&e, &x, err))
        return false;
    mem->params += x.params;
    mem->grads += x.grads;
    mem->optimizer += x.optimizer;
    mem->model_states += x.model_states;
    mem->buffers += x.buffers; /* the gathered experts */
    mem->total += x.total;
    return true;
}
