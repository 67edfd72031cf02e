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
 * on the device's host link, like ZeRO-Offload's (par_offload.c): copy
 * engines over PCIe, apart from the pipeline's NCCL sends.
 * Without partitioning, cpu_checkpointing moves each whole checkpoint:
 * "async" on a side stream, the copy back prefetched while the layer above
 * runs its backward (axolotl's hidden-state offload, axolotl-ai-cloud/
 * axolotl #3733: "async d2h ... backward h2d prefetch"; DeepSpeed's
 * non-reentrant offload, deepspeedai/DeepSpeed #8282), or "blocking" on
 * the compute stream: PyTorch's save_on_cpu(pin_memory=True), whose pack
 * copies to pinned memory in stream order and whose unpack copies back
 * when the recomputation asks for it (torch/autograd/graph.py), as
 * transformers' gradient-checkpointing offload (huggingface/transformers
 * #48444) runs it.  The partitions' copies (above) go on demand.
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
 * the copies cross the host link at "pcie_bandwidth" (as ZeRO-Offload's;
 * Megatron-Core refuses a pipeline with it). */
#include "step_build.h"

#include <math.h>

void pact_costs(Ctx *c)
{
    WorkloadParallel wp = c->wp;
    wp.recompute = WORKLOAD_RECOMPUTE_FULL; /* the checkpoint: the layer's input, whole on each tp rank */
    c->ckpt_bytes = c->p.partition_activations || c->p.cpu_checkpointing
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
        b->offload_d2h[l] = step_task(b->g, "activation_offload", b->res[s].host, c->offload_bytes / c->p.pcie_bps, "host");
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
    int t = step_task(b->g, "activation_reload", b->res[s].host, c->offload_bytes / c->p.pcie_bps, "host");
    step_dep(b->g, prefetch_from, t);
    return join(b, s, after, t);
}

/* What one device moves to the host per layer: its partition, or the whole
 * checkpoint (already split over tp under sequence parallelism). */
static double moved_bytes(const Ctx *c)
{
    return c->p.partition_activations ? c->ckpt_bytes / c->p.tp : c->ckpt_bytes;
}

/* A checkpoint's copy to or from the host after `after`, on the host
 * link's copy engines, or the compute stream when blocking. */
static int checkpoint_copy(Build *b, int s, const char *name, int after)
{
    Ctx *c = b->c;
    bool blocking = c->p.cpu_checkpointing_blocking;
    int t = step_task(b->g, name, blocking ? b->res[s].compute : b->res[s].host, moved_bytes(c) / c->p.pcie_bps,
                      blocking ? "compute" : "host");
    step_dep(b->g, after, t);
    return t;
}

int pact_forward_end(Build *b, int s, int l, int after)
{
    Ctx *c = b->c;
    after = offload_forward(b, s, l, after);
    if (c->p.cpu_checkpointing) { /* the checkpoint goes down; only a blocking copy holds the stream */
        int t = checkpoint_copy(b, s, "checkpoint_offload", after);
        if (c->p.cpu_checkpointing_blocking)
            after = t;
    }
    return after;
}

int pact_before_recompute(Build *b, int s, int after, int prefetch_from)
{
    Ctx *c = b->c;
    if (!c->p.partition_activations && !c->p.cpu_checkpointing)
        return -1;
    if (!c->p.partition_activations) /* an async copy comes back while the layer above runs its backward */
        return c->p.cpu_checkpointing_blocking ? checkpoint_copy(b, s, "checkpoint_fetch", after)
                                               : join(b, s, after, checkpoint_copy(b, s, "checkpoint_fetch", prefetch_from));
    int t = c->p.cpu_checkpointing ? checkpoint_copy(b, s, "checkpoint_fetch", after) : after;
    int u = step_coll(c, "checkpoint_allgather", "tp", c->tp_group, COLL_ALLGATHER, c->ckpt_bytes);
    if (u < 0)
        return t;
    int ag = step_coll_task(b, NULL, s, b->res[s].tp, u, "tp");
    step_dep(b->g, t, ag);
    return ag;
}

void pact_memory(const Ctx *c, int s, MemoryBreakdown *mem, double *host)
{
    double cut = 0, add = 0;
    *host = 0;
    if (c->p.cpu_checkpointing) /* the checkpoints (or partitions) in host memory, two in transit */
        cut = mem->activations - 2 * moved_bytes(c);
    else if (c->p.partition_activations) /* 1 / tp kept */
        cut = mem->activations * (1 - 1.0 / c->p.tp);
    if (c->p.recompute_overlap && step_stage_layers(c, s) > 0) { /* Lynx: a layer recomputed ahead */
        WorkloadParallel all = c->wp;
        all.recompute = WORKLOAD_RECOMPUTE_NONE;
        add = workload_layer_activation_bytes(c->w, c->stage_l0[s], step_scenario_micro_batch(c->sc), &all);
    }
    if (cut < 0)
        cut = 0;
    if (c->p.cpu_checkpointing) /* each device sends its partition, or its whole checkpoints */
        *host = c->p.partition_activations ? fmax(0, mem->activations / c->p.tp - 2 * moved_bytes(c)) : cut;
    mem->activations -= cut;
    mem->working_set += add;
    mem->total += add - cut;
}
