/* Context parallelism for long sequences (ring attention; Liu et al. 2023,
 * Megatron-LM's context_parallel_size, Transformer Engine's "p2p"
 * cp_comm_type): each sequence is split over cp devices (ranks
 * tp-cp-dp-pp), every device computing its s / cp queries against all s
 * keys (the workload's WorkloadParallel.cp), one attention kernel per ring
 * step (step_compute.c prices the kernels).  The structure follows TE's
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
 * tp stream, tagged with the cp - 1 sends (and receives) for the listing.
 * Full recomputation repeats the forward's.  The weights are the same on
 * the cp ranks of a sequence: gradients are reduced and ZeRO shards over
 * dp x cp (step.c folds cp into the data-parallel ranks). */
#include "step_build.h"

#include <math.h>
#include <string.h>

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

/* Two ring neighbours; where the ring leaves a node, a pair that does. */
static CollGroup *ring_pair(const Ctx *c, GError **err)
{
    int pair[2] = {step_rank_of(c, 0, 0, 0), step_rank_of(c, 0, 1, 0)};
    for (int k = 0; k < c->p.cp; k++) {
        int a = step_rank_of(c, 0, k, 0), b = step_rank_of(c, 0, (k + 1) % c->p.cp, 0);
        if (topo_node_of(c->topo, a) != topo_node_of(c->topo, b)) {
            pair[0] = a, pair[1] = b;
            break;
        }
    }
    return step_group_new(c, pair, 2, err);
}

bool cp_init(Ctx *c, GError **err)
{
    for (int k = 0; k < 4; k++)
        c->cp_use[k] = -1;
    int cp = c->p.cp;
    if (cp == 1)
        return true;
    if (!(c->cp_group = ring_pair(c, err)))
        return false;
    const WorkloadTransformer *tr = workload_transformer(c->w);
    /* a block: the device's s / cp tokens' keys and values, its tp share of the heads */
    double bytes = (double)step_scenario_micro_batch(c->sc) * tr->seq_len / cp * workload_kv_width(c->w) / c->p.tp *
                   c->wp.act_bytes;
    static const char *const names[] = {"cp_send_kv", "cp_recv_kv", "cp_send_dkv", "cp_recv_dkv"};
    for (int k = 0; k < 4; k++) {
        c->cp_use[k] = step_coll(c, names[k], "cp", c->cp_group, COLL_BROADCAST, bytes);
        if (c->cp_use[k] >= 0)
            g_array_index(c->colls, CollUse, c->cp_use[k]).op_name = k % 2 ? "recv" : "send";
    }
    /* one ring step's kernel, forward and backward */
    double send = step_coll_time(c, c->cp_use[0]), f, b;
    int mb = step_scenario_micro_batch(c->sc);
    if (c->wp.fused_attention) {
        f = step_fused_attention_time(c, mb, false) / cp;
        b = step_fused_attention_time(c, mb, true) / cp;
    } else {
        f = attention_core_time(c) / cp;
        b = 2 * f; /* the core's backward: two GEMMs per product */
    }
    /* the device's queries' output (and dQ), and its KV block, in bytes */
    double out = (double)mb * tr->seq_len / cp * workload_q_dim(tr) / c->p.tp * c->wp.act_bytes;
    double merges = 2 + 3 * (cp - 1.0); /* first step: copy; later ones: read, read, write */
    c->t_cp[0] = (cp - 1) * fmax(0, send - f) + accel_mem_time(c->acc, 2 * bytes + merges * out);
    c->t_cp[2] = 2 * fmax(0, send - b) + (cp - 2) * fmax(0, 2 * send - b) +
                 accel_mem_time(c->acc, 2 * bytes + merges * (out + bytes));
    if (c->p.recompute == WORKLOAD_RECOMPUTE_FULL)
        c->t_cp[1] = c->t_cp[0];
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
    for (int k = 0; k < (pass == 2 ? 4 : 2); k++)
        step_coll_tag(b, t, c->cp_use[k], c->p.cp - 1, s);
    return t;
}
