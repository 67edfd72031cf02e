/* Context parallelism for long sequences (ring attention; Liu et al. 2023,
 * Megatron-LM's context_parallel_size): each sequence is split over cp
 * devices (ranks tp-cp-dp-pp), every device computing its s / cp queries
 * against all s keys (the workload's WorkloadParallel.cp).  In the forward
 * the key/value blocks travel around the cp ring, cp - 1 steps, each send
 * overlapped with the attention of the block already there; the backward
 * passes the KV blocks again and their gradients (dKV) back, cp - 1 steps
 * of each.  Per step the exposed time is what the send takes beyond the
 * block's attention (the attention core over cp blocks, twice that in the
 * backward): (cp - 1) max(0, t_send - t_core / cp).  That exposed part is
 * a task after the layer's compute on the tp stream; the task stands for
 * the cp - 1 sends (and receives), tagged for the listing.  Full
 * recomputation repeats the forward's.  The weights are the same on the
 * cp ranks of a sequence: gradients are reduced and ZeRO shards over
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
    double kv = (double)tr->hidden * tr->kv_heads / tr->heads;
    double bytes = (double)step_scenario_micro_batch(c->sc) * tr->seq_len / cp * 2 * kv / c->p.tp * c->wp.act_bytes;
    static const char *const names[] = {"cp_send_kv", "cp_recv_kv", "cp_send_dkv", "cp_recv_dkv"};
    for (int k = 0; k < 4; k++) {
        c->cp_use[k] = step_coll(c, names[k], "cp", c->cp_group, COLL_BROADCAST, bytes);
        if (c->cp_use[k] >= 0)
            g_array_index(c->colls, CollUse, c->cp_use[k]).op_name = k % 2 ? "recv" : "send";
    }
    double send = step_coll_time(c, c->cp_use[0]), blk = attention_core_time(c) / cp;
    c->t_cp[0] = (cp - 1) * fmax(0, send - blk);
    /* backward: KV and dKV on the ring at once against twice the compute */
    c->t_cp[2] = (cp - 1) * fmax(0, 2 * send - 2 * blk);
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
