/* Pipeline parallelism: the model's layers split over pp stages, the
 * point-to-point groups between neighbouring stages, the order in which a
 * stage runs its micro-batches (1F1B, Narayanan et al.; or GPipe: every
 * forward, then every backward) and the activation and gradient sends that
 * tie the stages' chains together; a send is listed as "send" on its stage
 * and "recv" on the peer's.  Also what a stage holds: its
 * parameters, and its micro-batches in flight for the memory estimate. */
#include "step_build.h"
#include "par_layout.h"

/* The first L % pp stages take one layer more; with the embedding (loss)
 * counted as a layer (Megatron's account_for_*_in_pipeline_split), every
 * chunk has (L + 1 (+ 1)) / (pp x vpp) and the first (last) one layer less.
 * Parameters per device are after the tensor-parallel split. */
/* A pipeline_layout's chunks (checked with the scenario): stage s holds
 * its chunks' layers, counted from stage 0's. */
static void layout_partition(Ctx *c)
{
    int pp = c->p.pp, chunks = pp * c->p.vpp;
    const WorkloadTransformer *tr = workload_transformer(c->w);
    const char *why;
    c->chunk_layers = g_new0(int, chunks);
    layout_chunks(c->p.pipeline_layout, chunks, tr->layers, tr->mtp_layers, c->chunk_layers, &why);
    c->stage_l0[0] = 0;
    for (int s = 0; s < pp; s++) {
        int n = 0;
        for (int j = 0; j < c->p.vpp; j++)
            n += c->chunk_layers[j * pp + s];
        c->stage_l0[s + 1] = c->stage_l0[s] + n;
    }
}

/* Local layer l of stage s's place in the model: the layers of the model
 * chunks before its chunk (chunk j of stage s is the (j pp + s)-th) and
 * its place in that chunk. */
static int model_layer(const Ctx *c, int s, int l)
{
    int pp = c->p.pp, j = 0, g = 0;
    while (j + 1 < c->p.vpp && step_chunk_l0(c, s, j + 1) <= l)
        j++;
    for (int k = 0; k < j * pp + s; k++)
        g += step_chunk_l0(c, k % pp, k / pp + 1) - step_chunk_l0(c, k % pp, k / pp);
    return g + l - step_chunk_l0(c, s, j);
}

/* DeepSeek's dense_layers: a dense layer's parameters apart (the MoE
 * layers' are layer_params; the last layer is one), and which of each
 * stage's layers they are. */
static void dense_partition(Ctx *c)
{
    const WorkloadTransformer *tr = workload_transformer(c->w);
    c->dense_layers = tr && tr->experts > 0 ? tr->dense_layers : 0;
    if (!c->dense_layers)
        return;
    c->dense_of = g_new0(bool, c->stage_l0[c->p.pp]);
    for (int s = 0; s < c->p.pp; s++)
        for (int l = 0; l < step_stage_layers(c, s); l++)
            c->dense_of[c->stage_l0[s] + l] = model_layer(c, s, l) < c->dense_layers;
    int L = workload_num_layers(c->w);
    c->layer_params = (workload_params_layer(c->w, L - 1) - workload_params_layer_experts(c->w, L - 1)) / c->p.tp;
    c->layer_params_dense = workload_params_layer(c->w, 0) / c->p.tp;
}

void pipeline_partition(Ctx *c)
{
    int pp = c->p.pp, L = workload_num_layers(c->w);
    c->stage_l0 = g_new(int, pp + 1);
    if (c->p.pipeline_layout[0] && workload_transformer(c->w)) {
        layout_partition(c);
        c->layer_params = (workload_params_layer(c->w, 0) - workload_params_layer_experts(c->w, 0)) / c->p.tp;
        c->head_params = workload_params_head(c->w) / c->p.tp;
        dense_partition(c);
        lora_partition(c);
        return;
    }
    bool split = c->p.split_embedding || c->p.split_loss;
    int u = split ? (L + c->p.split_embedding + c->p.split_loss) / pp : 0; /* per stage, counted */
    for (int s = 0; s <= pp; s++)
        c->stage_l0[s] = split ? (s == pp ? L : s * u - (s > 0 && c->p.split_embedding))
                               : s * (L / pp) + (s < L % pp ? s : L % pp);
    /* a mixture of experts' routed experts are apart (par_moe.c) */
    c->layer_params = (workload_params_layer(c->w, 0) - workload_params_layer_experts(c->w, 0)) / c->p.tp;
    c->head_params = workload_params_head(c->w) / c->p.tp;
    dense_partition(c);
    lora_partition(c);
}

double pipeline_output_layer_params(const Ctx *c)
{
    const WorkloadTransformer *tr = workload_transformer(c->w);
    return tr ? (double)tr->vocab * tr->hidden / c->p.tp : 0;
}

/* Parameters held by stage s's device: its layers, the embeddings on the
 * first stage and, with a pipeline and tied embeddings, the copy of the
 * word embeddings the last stage needs for the logits.  The MTP modules
 * (dense part; their experts are par_moe.c's) sit on the last stage, with
 * a copy of the word embeddings there too when pp > 1 (Megatron-Core's
 * GPTModel builds the embedding where the MTP block is). */
double pipeline_stage_params(const Ctx *c, int s)
{
    const WorkloadTransformer *tr = workload_transformer(c->w);
    double p = step_stage_layer_params(c, s);
    if (s == 0)
        p += c->head_params;
    if (!tr) /* a CNN: no pipeline */
        return p;
    bool copy = tr->tied_embeddings || tr->mtp_layers > 0;
    if (s == c->p.pp - 1 && c->p.pp > 1 && copy && !c->wp.frozen_linears) /* LoRA: frozen */
        p += pipeline_output_layer_params(c);
    if (s == c->p.pp - 1 && tr->mtp_layers > 0) {
        int L = workload_num_layers(c->w);
        p += (workload_params_mtp(c->w) - tr->mtp_layers * workload_params_layer_experts(c->w, L)) / c->p.tp;
    }
    return p;
}

/* Pair k of a stage boundary, counted from the representative's index
 * j0: tp x dp index (j0 + k) mod J on both sides. */
static void same_j(const Ctx *c, int k, int j0, int *j, int *j2)
{
    *j = *j2 = (j0 + k) % (c->p.dp * c->p.tp);
}

/* Boundary s's pair of the slowest kind (step_pair_kind: across the
 * fabric's switch-to-switch links, else between nodes, else in one): its
 * tp x dp index, and the kind in *kind.  Each pipeline step waits for its
 * slowest pair. */
static int worst_pair(const Ctx *c, int s, int *kind)
{
    int J = c->p.dp * c->p.tp, pp = c->p.pp, best = 0;
    *kind = -1;
    for (int j = 0; j < J && *kind < 2; j++) {
        int k = step_pair_kind(c, step_rank_of(c, s, j / c->p.tp, j % c->p.tp),
                               step_rank_of(c, (s + 1) % pp, j / c->p.tp, j % c->p.tp));
        if (k > *kind) {
            best = j;
            *kind = k;
        }
    }
    return best;
}

/* Each stage boundary priced on its pair of the slowest kind.  Where that
 * pair crosses the fabric's switch-to-switch links, the boundary has a
 * group of its own, with every other (data, tensor) rank's pair of the
 * boundary beside it (its siblings: which of them cross, and so the
 * factor, differs between boundaries); the boundaries that stay below the
 * fabric share one group per kind (in one node, across nodes).  Megatron's
 * scatter/gather optimisation sends 1/tp of the activation from each
 * tensor-parallel rank over its own link. */
bool pipeline_init(Ctx *c, GError **err)
{
    int pp = c->p.pp, tp = c->p.tp;
    c->p2p_group = g_new0(CollGroup *, pp);
    int nb = c->p.vpp > 1 ? pp : pp - 1; /* interleaving: the last stage sends to the first */
    CollGroup *of_kind[3] = {NULL, NULL, NULL};
    for (int s = 0; s < nb; s++) {
        int kind, j = worst_pair(c, s, &kind);
        int pair[2] = {step_rank_of(c, s, j / tp, j % tp), step_rank_of(c, (s + 1) % pp, j / tp, j % tp)};
        CollGroup **g = kind < 2 || c->bound_only ? &of_kind[kind] : &c->p2p_group[s];
        if (!*g && !(*g = step_group_new(c, pair, 2, err)))
            return false;
        if (kind == 2) /* none in a lower bound's (step_siblings_pairs) */
            step_siblings_pairs(c, *g, s, (s + 1) % pp, c->p.dp * tp, same_j, j);
        c->p2p_group[s] = *g;
    }
    const WorkloadTransformer *tr = workload_transformer(c->w);
    if (!tr) /* a CNN runs without a pipeline (scenario.c) */
        return true;
    double act = step_device_tokens(c) * tr->hidden * c->wp.act_bytes;
    c->t_p2p = g_new0(double, pp);
    c->p2p_use = g_new(int, 4 * (size_t)pp);
    static const char *const names[] = {"pp_send_activation", "pp_recv_activation", "pp_send_gradient",
                                        "pp_recv_gradient"};
    for (int s = 0; s < nb; s++) {
        for (int k = 0; k < 4; k++)
            c->p2p_use[4 * s + k] = step_p2p(c, names[k], "pp", c->p2p_group[s], act / c->p.tp, k % 2);
        c->t_p2p[s] = step_coll_time(c, c->p2p_use[4 * s]);
    }
    return true;
}

void pipeline_free(Ctx *c)
{
    if (c->p2p_group) {
        for (int s = 0; s < c->p.pp; s++) {
            bool shared = false; /* the groups below the fabric, one per kind */
            for (int q = s + 1; q < c->p.pp; q++)
                shared |= c->p2p_group[q] == c->p2p_group[s];
            if (!shared)
                coll_group_free(c->p2p_group[s]);
        }
        g_free(c->p2p_group);
    }
    g_free(c->t_p2p);
    g_free(c->p2p_use);
    g_free(c->stage_l0);
    g_free(c->dense_of);
}

/* Interleaved 1F1B (Narayanan et al. 2021, section 2.2; Megatron-LM's
 * forward_backward_pipelining_with_interleaving): the k-th forward of a
 * stage runs model chunk (k mod (pp v)) / pp of micro-batch
 * (k / (pp v)) pp + k mod pp; backwards take the chunks in reverse.  All
 * of one schedule's m_flush micro-batches. */
static int warmup_of(const Ctx *c, int s)
{
    int pp = c->p.pp, v = c->p.vpp, m = c->m_flush, total = m * v;
    if (v == 1)
        return pp - s - 1 < m ? pp - s - 1 : m;
    int w = m == pp ? total : (pp - s - 1) * 2 + (v - 1) * pp;
    return w < total ? w : total;
}

static void order_push(const Ctx *c, int k, int dir, int first_mb, int *n, int *order_mb, int *order_dir,
                       int *order_chunk)
{
    int pp = c->p.pp, v = c->p.vpp, kg = k % (pp * v), j = kg / pp;
    order_mb[*n] = first_mb + (k / (pp * v)) * pp + kg % pp;
    order_chunk[*n] = dir == 0 ? j : v - 1 - j;
    order_dir[*n] = dir;
    (*n)++;
}

/* One schedule's passes of the micro-batches first_mb .. first_mb +
 * m_flush - 1 appended at *n. */
static void schedule_order(const Ctx *c, int s, int first_mb, int *n, int *order_mb, int *order_dir,
                           int *order_chunk)
{
    int m = c->m_flush;
    if (c->p.gpipe) {
        for (int dir = 0; dir < 2; dir++)
            for (int i = 0; i < m; i++, (*n)++)
                order_mb[*n] = first_mb + i, order_dir[*n] = dir, order_chunk[*n] = 0;
        return;
    }
    int total = m * c->p.vpp, warm = warmup_of(c, s);
    for (int k = 0; k < warm; k++)
        order_push(c, k, 0, first_mb, n, order_mb, order_dir, order_chunk);
    for (int i = 0; i < total - warm; i++) {
        order_push(c, warm + i, 0, first_mb, n, order_mb, order_dir, order_chunk);
        order_push(c, i, 1, first_mb, n, order_mb, order_dir, order_chunk);
    }
    for (int i = total - warm > 0 ? total - warm : 0; i < total; i++)
        order_push(c, i, 1, first_mb, n, order_mb, order_dir, order_chunk);
}

/* Stage s's passes in program order: (micro-batch, direction 0 forward or
 * 1 backward, model chunk) into order_mb, order_dir, order_chunk (2 m vpp
 * entries); returns their count.  1F1B: the warm-up forwards (pp - s - 1
 * without interleaving), then one forward, one backward; GPipe: every
 * forward, then every backward.  pp 1 is 1F1B without warm-up: gradient
 * accumulation's F B F B, holding one micro-batch's activations as the
 * memory model has it.  With pipeline_microbatches the schedule runs
 * m / m_flush times, each draining before the next fills (PyTorch's
 * schedule.step() per accumulation step): a bubble each. */
int pipeline_order(const Ctx *c, int s, int *order_mb, int *order_dir, int *order_chunk)
{
    int n = 0;
    for (int f = 0; f < c->m; f += c->m_flush)
        schedule_order(c, s, f, &n, order_mb, order_dir, order_chunk);
    return n;
}

/* A send from stage s (boundary b's streams and uses) of `what` (0
 * activation, 1 gradient): after pass `from`, before pass `to`. */
static void send_task(Build *b, int s, int bnd, int peer, int what, int from, int to)
{
    const Ctx *c = b->c;
    int t = step_task(b->g, what ? "send_gradient" : "send_activation", b->res[s].p2p, c->t_p2p[bnd], "p2p");
    step_coll_tag(b, t, c->p2p_use[4 * bnd + 2 * what], 1, s);
    step_coll_tag(b, t, c->p2p_use[4 * bnd + 2 * what + 1], 1, peer);
    step_dep(b->g, from, t);
    step_dep(b->g, t, to);
}

/* Every micro-batch's activation to the next stage and gradient to the
 * previous one, on the p2p streams; under interleaving the last stage's
 * chunk j feeds the first stage's chunk j + 1 (boundary pp - 1).  The last
 * stage's last chunk turns forward into backward itself. */
void pipeline_sends(Build *b)
{
    const Ctx *c = b->c;
    int pp = c->p.pp, m = c->m, v = c->p.vpp;
    for (int j = 0; j < v; j++)
        for (int s = 0; s < pp; s++)
            for (int i = 0; i < m; i++) {
                int x = step_span(c, s, j, i);
                bool last = s == pp - 1 && j == v - 1, first = s == 0 && j == 0;
                sim_graph_set_default_tag(b->g, SIM_TAG_MICRO_BATCH, i);
                if (!last) {
                    int y = s + 1 < pp ? step_span(c, s + 1, j, i) : step_span(c, 0, j + 1, i);
                    send_task(b, s, s, (s + 1) % pp, 0, b->fw[x].last, b->fw[y].first);
                }
                if (!first) {
                    int y = s > 0 ? step_span(c, s - 1, j, i) : step_span(c, pp - 1, j - 1, i);
                    send_task(b, s, (s + pp - 1) % pp, (s + pp - 1) % pp, 1, b->bw[x].last, b->bw[y].first);
                }
                if (last)
                    step_dep(b->g, b->fw[x].last, b->bw[x].first);
            }
    sim_graph_set_default_tag(b->g, SIM_TAG_MICRO_BATCH, -1);
}

/* Micro-batches whose activations stage s holds at once; under
 * interleaving, model chunks (1/vpp of the stage's layers each): the
 * warm-up forwards and the one in steady state. */
int pipeline_inflight(const Ctx *c, int s)
{
    int pp = c->p.pp, m = c->m_flush;
    if (c->p.vpp > 1)
        return warmup_of(c, s) + 1 < m * c->p.vpp ? warmup_of(c, s) + 1 : m * c->p.vpp;
    return pp == 1 ? 1 : c->p.gpipe ? m : memory_1f1b_inflight(pp, s, m);
}
