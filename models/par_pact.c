/* Activation checkpoints beyond recomputation itself.
 *
 * Partitioned checkpoints (DeepSpeed's partition_activations; ZeRO-R, in
 * Rajbhandari et al. 2020, "ZeRO: Memory Optimizations Toward Training
 * Trillion Parameter Models", sec. 6.1 "Partitioned Activation
 * Checkpointing"): with tensor parallelism and full recomputation, every
 * tp rank holds the same checkpoint (the layer's input); each keeps
 * 1 / tp of it and the tp group all-gathers it right before the layer's
 * recomputation.  cpu_checkpointing (ZeRO-R's Pa+cpu) moves the partitions
 * to host memory over PCIe after the forward and back before the gather:
 * checkpoints then take no HBM beyond the two in transit.  The copies sit
 * on the device's p2p stream, like ZeRO-Offload's (par_offload.c).
 *
 * Lynx (Chen et al., "Optimizing Large Model Training through Overlapped
 * Activation Recomputation", arXiv 2406.08756, secs. 3-4): recomputation
 * runs in the communication windows of the training pipeline instead of
 * on demand on the critical path.  Modelled as Lynx-HEU's policy applied to
 * every (identical) layer: a layer's recomputation starts as soon as the
 * layer above has computed its backward, while that layer's tensor-
 * parallel all-reduce and the gathers are in flight, and the first
 * recomputation of a pass fills the wait for the gradient from the next
 * pipeline stage.  The price is one more layer's full activations held. */
#include "step_build.h"

void pact_costs(Ctx *c)
{
    WorkloadParallel wp = c->wp;
    wp.recompute = WORKLOAD_RECOMPUTE_FULL; /* the checkpoint: the layer's input, whole on each tp rank */
    c->ckpt_bytes = c->p.partition_activations
                        ? workload_layer_activation_bytes(c->w, 0, step_scenario_micro_batch(c->sc), &wp)
                        : 0;
}

int pact_forward_end(Build *b, int s, int after)
{
    Ctx *c = b->c;
    if (c->p.cpu_checkpointing) { /* the partition goes down; nothing waits for it */
        int t = step_task(b->g, "checkpoint_offload", b->res[s].p2p, c->ckpt_bytes / c->p.tp / c->p.pcie_bps, "p2p");
        step_dep(b->g, after, t);
    }
    return after;
}

int pact_before_recompute(Build *b, int s, int after)
{
    Ctx *c = b->c;
    if (!c->p.partition_activations)
        return -1;
    int t = after;
    if (c->p.cpu_checkpointing) {
        t = step_task(b->g, "checkpoint_fetch", b->res[s].p2p, c->ckpt_bytes / c->p.tp / c->p.pcie_bps, "p2p");
        step_dep(b->g, after, t);
    }
    int u = step_coll(c, "checkpoint_allgather", "tp", c->tp_group, COLL_ALLGATHER, c->ckpt_bytes);
    if (u < 0)
        return t;
    int ag = step_coll_task(b, NULL, s, b->res[s].tp, u, "tp");
    step_dep(b->g, t, ag);
    return ag;
}

void pact_memory(const Ctx *c, int s, MemoryBreakdown *mem)
{
    double cut = 0, add = 0;
    if (c->p.partition_activations) /* the checkpoints: 1 / tp kept, or none (two in transit) */
        cut = c->p.cpu_checkpointing ? mem->activations - 2 * c->ckpt_bytes / c->p.tp
                                     : mem->activations * (1 - 1.0 / c->p.tp);
    if (c->p.recompute_overlap && step_stage_layers(c, s) > 0) { /* Lynx: a layer recomputed ahead */
        WorkloadParallel all = c->wp;
        all.recompute = WORKLOAD_RECOMPUTE_NONE;
        add = workload_layer_activation_bytes(c->w, c->stage_l0[s], step_scenario_micro_batch(c->sc), &all);
    }
    if (cut < 0)
        cut = 0;
    mem->activations -= cut;
    mem->working_set += add;
    mem->total += add - cut;
}
