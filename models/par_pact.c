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
 * pipeline stage.  The price is one more layer's full activations held.
 *
 * Activation offloading (Megatron-Core's cpu_offloading with
 * cpu_offloading_num_layers N, through Transformer Engine's
 * AsyncDoubleBufferGroupOffloadHandler in cpu_offload.py): each of the
 * first N layers' saved tensors (those TE marks, which Megatron's fused
 * SwiGLU marks too: cpu_offload_input) is copied to pinned host memory on
 * a side stream after the layer's forward, and the forward of the layer
 * after layer_window_map[i] = (L / N)(i + 1) - 1 (+ the remainder spread
 * over the first groups) waits for group i's copy; the backward reloads a
 * layer's activations while the layer above computes its backward.  Those
 * layers hold no HBM at the peak (the last copy is due before the loss);
 * the copies cross the host link at "pcie_bandwidth" (the p2p stream, as
 * ZeRO-Offload's: Megatron-Core refuses a pipeline with it). */
#include "step_build.h"

void pact_costs(Ctx *c)
{
    WorkloadParallel wp = c->wp;
    wp.recompute = WORKLOAD_RECOMPUTE_FULL; /* the checkpoint: the layer's input, whole on each tp rank */
    c->ckpt_bytes = c->p.partition_activations
                        ? workload_layer_activation_bytes(c->w, 0, step_scenario_micro_batch(c->sc), &wp)
                        : 0;
    c->offload_bytes = c->p.offload_layers ? workload_layer_activation_bytes(c->w, 0, step_scenario_micro_batch(c->sc), &c->wp) : 0;
}

bool pact_layer_offloaded(const Ctx *c, int s, int l) { return s == 0 && l < c->p.offload_layers; }

/* TE's layer_window_map: the layer whose forward end waits for group i's copy. */
static int offload_window(int layers, int groups, int i)
{
    int w = layers / groups * (i + 1) - 1, rem = layers % groups;
    return w + (i < rem ? i + 1 : rem);
}

/* A zero-length mark on the compute stream after `a` and `t`. */
static int join(Build *b, int s, int a, int t)
{
    int j = step_task(b->g, "offload_wait", b->res[s].compute, 0, "compute");
    step_dep(b->g, a, j);
    step_dep(b->g, t, j);
    return j;
}

static int offload_forward(Build *b, int s, int l, int after)
{
    Ctx *c = b->c;
    int n = c->p.offload_layers;
    if (pact_layer_offloaded(c, s, l)) {
        b->offload_d2h[l] = step_task(b->g, "activation_offload", b->res[s].p2p, c->offload_bytes / c->p.pcie_bps, "p2p");
        step_dep(b->g, after, b->offload_d2h[l]);
    }
    for (int i = 0; s == 0 && i < n; i++)
        if (offload_window(step_stage_layers(c, s), n, i) == l)
            after = join(b, s, after, b->offload_d2h[i]);
    return after;
}

int pact_before_backward(Build *b, int s, int l, int prefetch_from, int after)
{
    Ctx *c = b->c;
    if (!pact_layer_offloaded(c, s, l))
        return after;
    int t = step_task(b->g, "activation_reload", b->res[s].p2p, c->offload_bytes / c->p.pcie_bps, "p2p");
    step_dep(b->g, prefetch_from, t);
    return join(b, s, after, t);
}

int pact_forward_end(Build *b, int s, int l, int after)
{
    Ctx *c = b->c;
    after = offload_forward(b, s, l, after);
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
