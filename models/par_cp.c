/* Context parallelism for long sequences (ring attention; Liu et al. 2023,
 * Megatron-LM's context_parallel_size, Transformer Engine's "p2p"
 * cp_comm_type): each sequence is split over cp devices (ranks
 * tp-cp-dp-pp), every device computing its s / cp queries against all s
 * keys (the workload's WorkloadParallel.cp), one attention kernel per ring
 * step (step_compute.c prices the kernels).  "cp_impl" "pytorch_*" is
 * PyTorch's context_parallel instead (pytorch_costs below).  By default the
 * structure follows TE's
 * AttnFuncWithCPAndKVP2P (transformer_engine/pytorch/attention/
 * dot_product_attention/context_parallel.py):
 *  - forward: the KV block is packed into the send buffer (torch.cat, one
 *    read and write), cp - 1 sends, step i's launched before step i's
 *    kernel, so each costs max(0, t_send - t_step) beyond the kernel; after
 *    the loop the partial outputs are merged one step after another
 *    (out * exp(lse_i - lse), added into out: read out_i, read and write
 *    out; the first step a read and a write), for the slowest rank all
 *    full-length (the causal chunking halves the later ones on low ranks);
 *  - backward: step 0 sends KV, steps 1..cp-2 KV and the dKV summed so far,
 *    the last dKV only, each against that step's backward kernel; dQ and
 *    dKV are summed step by step (a copy, then read + read + write).
 * These merges and copies are memory-bound passes on the compute stream;
 * with the exposed sends they make a task after the layer's compute on the
 * tp stream, tagged with the exchanges it ran (cp_times) for the listing.
 * Full recomputation repeats the forward's.  The weights are the same on
 * the cp ranks of a sequence: gradients are reduced and ZeRO shards over
 * dp x cp (step.c folds cp into the data-parallel ranks). */
#include "step_build.h"

#include <math.h>
#include <string.h>

#define FP32_BYTES 4.0 /* PyTorch's ring sums and sends dK, dV in fp32 (convert_to_f32) */

/* One forward's attention core on a device: Q K^T and P V. */
static double attention_core_time(const Ctx *c)
{
    WorkloadGemm g[WORKLOAD_MAX_GEMMS];
    int n = workload_layer_gemms(c->w, 0, step_scenario_micro_batch(c->sc), &c->wp, g);
    double t = 0;
    for (int i = 0; i < n; i++)
        if (!strcmp(g[i].name, "attn_score") || !strcmp(g[i].name, "attn_value"))
            t += accel_bgemm_time(c->acc, step_scenario_dtype(c->sc), g[i].batch, g[i].m, g[i].n, g[i].k);
    return t;
}

/* Hop k of ring b's copy at tensor rank t, for pair index i (k0's hop of
 * ring 0 at tensor rank 0 first): every ring's hops run at once. */
static void ring_hop_j(const Ctx *c, int i, int k0, int *j, int *j2)
{
    int cp = c->p.cp, tp = c->p.tp, k = (i % cp + k0) % cp, t = i / cp % tp, base = i / (cp * tp) * cp * tp;
    *j = base + k * tp + t;
    *j2 = base + (k + 1) % cp * tp + t;
}

/* Two ring neighbours, of the ring's slowest kind of hop (step_pair_kind:
 * one that crosses the fabric's switch-to-switch links, else one that
 * leaves a node): each ring step waits for its slowest hop.  Every other
 * hop of every ring is its sibling. */
static CollGroup *ring_pair(const Ctx *c, GError **err)
{
    int pair[2] = {step_rank_of(c, 0, 0, 0), step_rank_of(c, 0, 1, 0)}, k0 = 0;
    for (int k = 0, worst = -1; k < c->p.cp && worst < 2; k++) {
        int a = step_rank_of(c, 0, k, 0), b = step_rank_of(c, 0, (k + 1) % c->p.cp, 0), kind = step_pair_kind(c, a, b);
        if (kind > worst) {
            pair[0] = a, pair[1] = b, k0 = k;
            worst = kind;
        }
    }
    CollGroup *g = step_group_new(c, pair, 2, err);
    if ((c->p.dp * c->p.tp) % (c->p.cp * c->p.tp) == 0)
        step_siblings_pairs(c, g, 0, 0, c->p.dp * c->p.tp, ring_hop_j, k0);
    return g;
}

/* One ring step's attention kernel, forward or backward. */
static double step_kernel(const Ctx *c, bool backward)
{
    if (c->wp.fused_attention)
        return step_fused_attention_time(c, step_scenario_micro_batch(c->sc), backward) / c->p.cp;
    double f = attention_core_time(c) / c->p.cp;
    return backward ? 2 * f : f; /* the core's backward: two GEMMs per product */
}

/* The device's queries (its output, dQ) per layer and micro-batch, in
 * elements. */
static double out_elems(const Ctx *c)
{
    const WorkloadTransformer *tr = workload_transformer(c->w);
    return step_device_tokens(c) * workload_q_dim(tr) / c->p.tp;
}

/* The KV block, keys and values of the device's s / cp tokens, its tp
 * share of the heads (repeated to the query's where the model does), in
 * elements. */
static double kv_elems(const Ctx *c)
{
    if (c->p.cp_impl != CP_IMPL_TE_P2P && c->p.cp_repeat_kv)
        return 2 * out_elems(c);
    return step_device_tokens(c) * workload_kv_width(c->w) / c->p.tp;
}

static const char *const cp_names[] = {"cp_send_kv", "cp_recv_kv", "cp_send_dkv", "cp_recv_dkv", "cp_allgather_kv"};

/* A send or receive on the ring pair. */
static int ring_use(Ctx *c, int k, double bytes) { return step_p2p(c, cp_names[k], "cp", c->cp_group, bytes, k % 2); }

/* Transformer Engine's P2P ring (the file's opening comment). */
static void te_costs(Ctx *c)
{
    int cp = c->p.cp;
    double bytes = kv_elems(c) * c->wp.act_bytes;
    for (int k = 0; k < 4; k++)
        c->cp_use[k] = ring_use(c, k, bytes);
    for (int pass = 0; pass < 3; pass++)
        for (int k = 0; k < (pass == 2 ? 4 : 2); k++)
            c->cp_times[pass][k] = cp - 1;
    double send = step_coll_time(c, c->cp_use[0]), f = step_kernel(c, false), b = step_kernel(c, true);
    double out = out_elems(c) * c->wp.act_bytes;
    double merges = 2 + 3 * (cp - 1.0); /* first step: copy; later ones: read, read, write */
    c->t_cp[0] = (cp - 1) * fmax(0, send - f) + accel_mem_time(c->acc, 2 * bytes + merges * out);
    c->t_cp[2] = 2 * fmax(0, send - b) + (cp - 2) * fmax(0, 2 * send - b) +
                 accel_mem_time(c->acc, 2 * bytes + merges * (out + bytes));
}

/* PyTorch's context_parallel (torch.distributed.tensor.experimental.
 * _attention: _templated_ring_attention and its backward), what torchtitan
 * runs.  Its memory-bound passes, per element, on the slowest rank (the
 * last, whose later steps all take full-length queries):
 *  - forward: K and V made contiguous (a copy), packed by torch.cat before
 *    each of the cp - 1 rotations; each step's output and log-sum-exp cast
 *    to fp32 (a + 4 bytes an element) and merged into the fp32 output
 *    (out - sigmoid(lse_i - lse) x (out - out_i): the difference 12, the
 *    row-wise scale 8, the subtraction 12), cast back at the end;
 *  - backward: fp32 dQ, dK, dV zeroed; each step's dK, dV added into the
 *    received fp32 sums (on the steps after the first a half-length add and
 *    a torch.cat of the whole), packed for the next rank (fp32), dQ added;
 *    all cast back at the end.
 * Compiled ("elementwise": "fused": torchtitan compiles each block with the
 * ring inside, torch.compile fullgraph): each step's merge one pass (read
 * the fp32 output and the step's, write the output: a + 8 bytes), each
 * step's dK, dV and dQ sums one pass (the received sum and the step's
 * gradient read, the packed sum written), the zeroing folded in, and with
 * the all-gather only the first packed KV kept (the later ones feed no
 * exchange); an assumption about the compiler's fusion, not observed.
 * Rotation: "allgather" (torchtitan's default) gathers every KV block once,
 * behind the first step's kernel; "alltoall" sends each block to the next
 * rank behind each step's kernel.  The summed dKV always goes round in
 * fp32, one send behind each step's kernel, the last one waited for after
 * the loop.  Read from torch.distributed.tensor.experimental._attention as
 * stored for pytorch/pytorch (a 2025 version; the ring's loops are those of
 * torch 1963fc8, the torchtitan rows'), with its default
 * enable_load_balance. */
static void pytorch_costs(Ctx *c)
{
    int cp = c->p.cp;
    bool gather = c->p.cp_impl == CP_IMPL_PYTORCH_ALLGATHER;
    double a = c->wp.act_bytes, e = out_elems(c), kv = kv_elems(c), bkv = kv * a;
    if (gather) {
        c->cp_use[4] = step_coll(c, cp_names[4], "cp", c->cp_all_group, COLL_ALLGATHER, cp * bkv);
        c->cp_times[0][4] = c->cp_times[2][4] = 1;
    } else {
        c->cp_use[0] = ring_use(c, 0, bkv);
        c->cp_use[1] = ring_use(c, 1, bkv);
        for (int pass = 0; pass < 3; pass++)
            c->cp_times[pass][0] = c->cp_times[pass][1] = cp - 1;
    }
    c->cp_use[2] = ring_use(c, 2, kv * FP32_BYTES);
    c->cp_use[3] = ring_use(c, 3, kv * FP32_BYTES);
    c->cp_times[2][2] = c->cp_times[2][3] = cp;
    double f = step_kernel(c, false), b = step_kernel(c, true);
    double kv_t = gather ? step_coll_time(c, c->cp_use[4]) : step_coll_time(c, c->cp_use[0]);
    double dkv_t = step_coll_time(c, c->cp_use[2]);
    double fwd_merge, bwd_kv, bwd_q, copies;
    if (c->wp.eager_elementwise) { /* one kernel an op */
        copies = 2 * bkv + (cp - 1) * 2 * bkv;
        fwd_merge = e * ((a + 4) + (cp - 1) * (a + 36) + (4 + a));
        bwd_kv = kv * (4 + (8 + a) + (cp - 1) * ((8 + a) / 2 + 8) + cp * 8 + (4 + a));
        bwd_q = e * (4 + cp * (8 + a) + (4 + a));
    } else { /* compiled: each step's merge and sums one pass */
        copies = 2 * bkv + (gather ? 1 : cp - 1) * 2 * bkv;
        fwd_merge = e * ((a + 4) + (cp - 1) * (a + 8) + (4 + a));
        bwd_kv = kv * (cp * (a + 8) + (4 + a));
        bwd_q = e * (cp * (a + 8) + (4 + a));
    }
    double fwd_comm = gather ? fmax(0, kv_t - f) : (cp - 1) * fmax(0, kv_t - f);
    /* all-to-all: step 0 sends KV alone, steps 1..cp-2 KV and dKV, the last dKV alone */
    double bwd_comm = gather ? fmax(0, kv_t - b) + (cp - 1) * fmax(0, dkv_t - b) + dkv_t
                             : fmax(0, kv_t - b) + (cp - 2) * fmax(0, kv_t + dkv_t - b) + fmax(0, dkv_t - b) + dkv_t;
    c->t_cp[0] = fwd_comm + accel_mem_time(c->acc, copies + fwd_merge);
    c->t_cp[2] = bwd_comm + accel_mem_time(c->acc, copies + bwd_kv + bwd_q);
}

/* What PyTorch's ring holds beside a layer's activations while it runs,
 * in bytes: forward, every gathered KV block (cp of them; with the
 * all-to-all rotation the block in flight), the packed copy and the fp32
 * output; backward, the blocks again, fp32 dQ and the received and summed
 * fp32 dK, dV with their packed copy.  Transformer Engine's ring holds a
 * block or two, left out. */
double cp_working_set(const Ctx *c)
{
    if (c->p.cp == 1 || c->p.cp_impl == CP_IMPL_TE_P2P)
        return 0;
    double kv = kv_elems(c), bkv = kv * c->wp.act_bytes, e = out_elems(c);
    double blocks = (c->p.cp_impl == CP_IMPL_PYTORCH_ALLGATHER ? c->p.cp : 2) * bkv;
    return blocks + fmax(bkv + FP32_BYTES * e, FP32_BYTES * (e + 3 * kv));
}

bool cp_init(Ctx *c, GError **err)
{
    for (int k = 0; k < 5; k++)
        c->cp_use[k] = -1;
    memset(c->cp_times, 0, sizeof c->cp_times);
    int cp = c->p.cp;
    if (cp == 1)
        return true;
    if (!(c->cp_group = ring_pair(c, err)))
        return false;
    if (c->p.cp_impl == CP_IMPL_PYTORCH_ALLGATHER) {
        int *ids = g_new(int, cp);
        for (int k = 0; k < cp; k++)
            ids[k] = step_rank_of(c, 0, k, 0);
        c->cp_all_group = step_group_new(c, ids, cp, err);
        g_free(ids);
        if (!c->cp_all_group)
            return false;
        step_siblings_strided(c, c->cp_all_group, 0, c->p.tp, cp);
    }
    if (c->p.cp_impl == CP_IMPL_TE_P2P)
        te_costs(c);
    else
        pytorch_costs(c);
    if (c->p.recompute == WORKLOAD_RECOMPUTE_FULL) {
        c->t_cp[1] = c->t_cp[0];
        memcpy(c->cp_times[1], c->cp_times[0], sizeof c->cp_times[0]);
    }
    return true;
}

int cp_after(Build *b, int s, const char *tp_name, int after)
{
    const Ctx *c = b->c;
    if (c->p.cp == 1)
        return after;
    int pass = !strcmp(tp_name, "tp_forward") ? 0 : !strcmp(tp_name, "tp_recompute") ? 1 : 2;
    if (pass == 1 && c->p.recompute != WORKLOAD_RECOMPUTE_FULL)
        return after; /* selective recomputation redoes the core, not the ring */
    int t = step_task(b->g, pass == 0 ? "cp_forward" : pass == 1 ? "cp_recompute" : "cp_backward", b->res[s].tp,
                      c->t_cp[pass], "cp");
    step_dep(b->g, after, t);
    for (int k = 0; k < 5; k++)
        step_coll_tag(b, t, c->cp_use[k], c->cp_times[pass][k], s);
    return t;
}
