/* Private to the step's files: the builder's context.  Ctx holds what a
 * variant costs (groups, per-layer times, bytes), Build the task graph being
 * built.  step.c composes the concerns; each par_*.c adds its own tasks and
 * costs through the small interface declared here.
 *
 * Ranks follow Megatron's order: tp fastest, then dp, then pp.  Only one
 * data-parallel replica's pipeline is built: one device per stage stands
 * for its tensor-parallel group. */
#ifndef STEP_BUILD_H
#define STEP_BUILD_H

#include "collective.h"
#include "scenario.h"

#include <cjson/cJSON.h>

/* One collective kind used by the step, for the report.  How many run per
 * step is not stored here: the report counts the graph's tasks tagged with
 * the kind (step_coll_tag), so the listing is what was executed. */
typedef struct {
    const char *name; /* static */
    const char *group;
    CollOp op;           /* for the cost */
    const char *op_name; /* static; NULL: coll_op_name(op) ("send", "recv" for pipeline p2p) */
    const CollGroup *g;
    int group_size;
    double bytes;
    CollCost cost;
} CollUse;

/* Task `task` runs `times` collectives of kind `use` on behalf of stage
 * `stage`'s device (a send is also a receive on the peer's). */
typedef struct {
    int task, use, times, stage;
} CollTag;

/* One contention run's result (par_contention.c): its groups' closed-form
 * time (NIC-bound, the fabric taken as non-blocking) is scaled by factor,
 * the flow simulation of the concurrent groups on the real fabric over one
 * group alone on a non-blocking one, or the uplink bound past the budget
 * (1: neither). */
typedef struct {
    double factor, flow_alone_s, flow_concurrent_s;
    double flow_nonblocking_s; /* group 0 alone with the fabric's uplinks never binding */
    double uplink_bound_s;     /* busiest fabric link's bytes / capacity, all groups built */
    int flow_groups;
    char method[128]; /* "exact", "sampled", "uplink bound", "not simulated"; "": not run */
    char *warning;    /* why the factor is not the full simulation's, or NULL */
} DpContention;

typedef struct {
    const StepScenario *sc;
    StepPlan p;
    const Topo *topo; /* the scenario's */
    const Accel *acc;
    const Workload *w;
    WorkloadParallel wp;
    int m;          /* micro-batches per replica */
    bool *dense_of; /* by stage_l0[s] + local layer: one of the model's dense_layers (NULL: none) */
    int m_flush;    /* of them, those one pipeline schedule runs before it drains (m but for pipeline_microbatches) */
    int devices;
    int *stage_l0;  /* first layer of each stage (pp + 1 entries) */
    CollGroup *tp_group, *dp_group;
    CollGroup **p2p_group; /* stage s -> s+1 */
    GArray *colls;  /* CollUse */
    /* per-layer costs (identical layers), seconds */
    double t_fwd, t_bwd, t_recompute;
    double t_tp_fwd, t_tp_bwd, t_tp_recompute;
    /* recompute_modules' recomputation of one of DeepSeek's dense_layers
     * ("mlp" there; t_recompute then is a MoE layer's) and its tp part */
    double t_recompute_dense, t_tp_recompute_dense;
    int tp_use[3];    /* a layer's tp collectives: all-gather (or all-reduce), reduce-scatter,
                         the MLP's all-gather where its bytes differ (-1: none) */
    /* tp_comm_overlap's partners: [0] a (MoE) layer's, [1] a dense layer's
     * forward [.][0] and backward [.][1] GEMM time of attention's input
     * (qkv), attention's output (attn_out), the MLP's input and output */
    double tp_gemm[2][2][4];
    double t_head_fwd, t_head_bwd;
    double layer_params, head_params; /* per device (after tp) */
    double grad_bytes_per_param, param_bytes; /* gradients: in grad_dtype (wire and buckets) */
    double head_param_bytes; /* the embeddings' and output layer's, gathered: 16-bit even in FP8 (not FP8 linears) */
    AccelDtype grad_dtype;
    bool fp32_grads;                  /* fp32 gradient buffers in mixed precision (fp32 reduction) */
    bool ag_overlap;                  /* sharded: updated weights gathered behind the next forward */
    double opt_bytes_per_param;       /* HBM traffic of the update */
    double *t_p2p;                    /* [stage]: one send from stage s to s+1 */
    int *p2p_use;                     /* [4 s + k]: boundary s's send/recv of activations, send/recv of gradients */
    /* data-parallel collectives: all tp x pp groups run at once and share
     * NICs and fabric (par_contention.c): dp_ct for the DP groups' (under
     * hybrid sharding, the shard groups'), rep_ct for hybrid sharding's
     * replica all-reduce (rep_group) */
    DpContention dp_ct, rep_ct;
    char *fabric_warning; /* a group whose flows were too many to route over the fabric (step.c), or NULL */
    /* par_moe.c: a mixture of experts.  layer_params above are the dense
     * part; the routed experts a device holds of one layer are apart. */
    CollGroup *ep_group, *edp_group; /* expert parallel; expert data parallel (dp / ep) */
    CollGroup *ep_rail_group, *ep_node_group; /* DeepEP across nodes: same local index; one node's */
    int ep_use[4];                   /* all-to-all dispatch, combine; DeepEP across nodes: over the
                                        network, then NVLink's dispatch, combine (-1: none) */
    double t_ep, t_ep_recompute;     /* one layer's dispatch + combine */
    double t_ep_fwd, t_ep_bwd;       /* their exposed part after a forward, a backward (moe_overlap_costs) */
    double expert_params;            /* per device and layer (after ep and tp) */
    /* par_cp.c: context parallelism.  p.dp above is dp x cp (the ranks
     * holding the same weights); dp_data the scenario's dp */
    int dp_data;
    CollGroup *cp_group;             /* two neighbours of the cp ring */
    CollGroup *cp_all_group;         /* the cp ranks of a sequence (PyTorch's all-gather rotation) */
    int cp_use[5];                   /* send, recv of KV; send, recv of dKV; all-gather of KV (-1: none) */
    int cp_times[3][5];              /* how often each runs a layer: forward, recompute, backward */
    double t_cp[3];                  /* one layer's exposed ring time: forward, recompute, backward */
    /* par_zero.c: FSDP hybrid sharding shards over zero_ranks (dp_group is
     * then the shard group) and all-reduces the shards over rep_group */
    int zero_ranks;
    CollGroup *rep_group;
    /* step_cnn.c: a CNN's layers differ: per-layer times and parameters
     * (NULL for a transformer, whose layers are all alike); layer_params
     * is then their mean */
    double *l_fwd, *l_bwd, *l_params;
    /* par_zeropp.c: the dp ranks of one node (node_dp of them) and the
     * ranks with the same place in their node (zero_ranks / node_dp) */
    int node_dp;
    CollGroup *node_group, *xnode_group;
    /* DeepSeek's first dense_layers layers (a dense MLP in a mixture of
     * experts): their own times and parameters; t_fwd, t_bwd and
     * layer_params above are then the MoE layers' (step_compute.c) */
    int dense_layers;
    double t_fwd_dense, t_bwd_dense, layer_params_dense;
    /* pipeline_layout (par_layout.c): layers per model chunk, in the
     * layout's order (chunk j of stage s at j x pp + s); NULL: the even split */
    int *chunk_layers;
    /* par_pact.c: one layer's checkpoint (its input) per device, bytes */
    double ckpt_bytes;
    /* par_pact.c: one offloaded layer's activations per micro-batch, bytes
     * ("cpu_offloading_num_layers") */
    double offload_bytes;
    /* par_lora.c: LoRA (wp.frozen_linears).  layer_params and head_params
     * above are then the trainable adapters'; the frozen base's are here */
    double frozen_layer_params, frozen_head_params;
    /* step_scenario_estimate: only the step's lower bound is asked, which
     * the groups' copies elsewhere (step_siblings_*) can only raise: none
     * are given, and a pipeline's boundaries share a group per kind */
    bool bound_only;
} Ctx;

typedef struct {
    int compute, comm, tp, p2p; /* resources */
    int host; /* the copies over the host link (copy engines), where any cross it; else p2p */
    int rank;
} StageRes;

/* A micro-batch's pass through a stage in one direction: its first and
 * last tasks. */
typedef struct {
    int first, last;
} Span;

typedef struct {
    Ctx *c;
    SimGraph *g;
    StageRes *res;       /* [stage] */
    Span *fw, *bw;       /* [step_span(chunk, stage, micro-batch)] */
    int **layer_bwd_end; /* [stage][local layer]: when that layer's gradients are ready (last micro-batch) */
    int *head_bwd_end;   /* [stage] */
    int *offload_d2h;    /* [layer]: the current forward's copy of that layer's activations to the host */
    GArray *tags;        /* CollTag: what each communication task runs */
    sim_time_t *unstretched; /* [task]: its duration before overlapped communication stretched it (step_interfere.c); NULL: none did */
    int interfere_passes; /* runs after the first that settled it (0: none needed) */
    bool interfere_settled; /* false: still moving after the last pass allowed */
} Build;

/* The topology rank of a job rank, through the scenario's placement. */
static inline int step_rank_of(const Ctx *c, int stage, int d, int t)
{
    int r = stage * c->p.dp * c->p.tp + d * c->p.tp + t;
    const int *map = step_scenario_rank_map(c->sc);
    return map ? map[r] : r;
}

static inline int step_stage_layers(const Ctx *c, int s) { return c->stage_l0[s + 1] - c->stage_l0[s]; }

/* The tokens of one micro-batch a device holds: seq_len / cp of each
 * sequence (a transformer's). */
static inline double step_device_tokens(const Ctx *c)
{
    return (double)step_scenario_micro_batch(c->sc) * workload_transformer(c->w)->seq_len / c->p.cp;
}

/* Stage s's first local layer of model chunk j (0..vpp): equal chunks, but
 * the first (last) chunk of the pipeline one short where the embedding
 * (loss) counts as a layer (pipeline_partition). */
static inline int step_chunk_l0(const Ctx *c, int s, int j)
{
    int v = c->p.vpp, nl = step_stage_layers(c, s);
    if (j >= v)
        return nl;
    if (c->chunk_layers) {
        int l0 = 0;
        for (int k = 0; k < j; k++)
            l0 += c->chunk_layers[k * c->p.pp + s];
        return l0;
    }
    if (!c->p.split_embedding && !c->p.split_loss)
        return j * (nl / v);
    int u = (nl + (s == 0 && c->p.split_embedding) + (s == c->p.pp - 1 && c->p.split_loss)) / v;
    return j * u - (s == 0 && j > 0 && c->p.split_embedding);
}

/* Whether local layer l of stage s recomputes its forward in the backward:
 * every layer, or with "recompute_layers" the first N of each model chunk. */
static inline bool step_layer_recomputed(const Ctx *c, int s, int l)
{
    if (c->p.recompute_modules) /* selective by module: every layer */
        return true;
    if (c->p.recompute == WORKLOAD_RECOMPUTE_NONE)
        return false;
    if (!c->p.recompute_layers)
        return true;
    int j = 0;
    while (j + 1 < c->p.vpp && step_chunk_l0(c, s, j + 1) <= l)
        j++;
    return l - step_chunk_l0(c, s, j) < c->p.recompute_layers;
}

/* Whether local layer l of stage s is one of the dense_layers (the model's
 * first: under interleaving in the first model chunks, pipeline_partition). */
static inline bool step_layer_dense(const Ctx *c, int s, int l) { return c->dense_of && c->dense_of[c->stage_l0[s] + l]; }

/* Local layer l of stage s: its parameters, forward and backward times,
 * and its mixture of experts' all-to-alls (none for a dense layer). */
static inline double step_layer_params(const Ctx *c, int s, int l)
{
    if (step_layer_dense(c, s, l))
        return c->layer_params_dense;
    return c->l_params ? c->l_params[c->stage_l0[s] + l] : c->layer_params;
}
static inline double step_layer_fwd(const Ctx *c, int s, int l)
{
    if (step_layer_dense(c, s, l))
        return c->t_fwd_dense;
    return c->l_fwd ? c->l_fwd[c->stage_l0[s] + l] : c->t_fwd;
}
static inline double step_layer_bwd(const Ctx *c, int s, int l)
{
    if (step_layer_dense(c, s, l))
        return c->t_bwd_dense;
    return c->l_bwd ? c->l_bwd[c->stage_l0[s] + l] : c->t_bwd;
}
static inline double step_layer_ep(const Ctx *c, int s, int l, double t_ep)
{
    return step_layer_dense(c, s, l) ? 0 : t_ep;
}
/* Local layer l of stage s's recomputation before its backward (0: none)
 * and its tensor-parallel collectives. */
static inline double step_layer_recompute(const Ctx *c, int s, int l)
{
    if (!step_layer_recomputed(c, s, l))
        return 0;
    return step_layer_dense(c, s, l) ? c->t_recompute_dense : c->t_recompute;
}
static inline double step_layer_tp_recompute(const Ctx *c, int s, int l)
{
    return step_layer_dense(c, s, l) ? c->t_tp_recompute_dense : c->t_tp_recompute;
}
/* The parameters of stage s's layers (per device, dense part). */
static inline double step_stage_layer_params(const Ctx *c, int s)
{
    double p = 0;
    for (int l = 0; l < step_stage_layers(c, s); l++)
        p += step_layer_params(c, s, l);
    return p;
}
/* Stage s's mixture-of-experts layers, the MTP modules' on the last stage included. */
static inline int step_stage_moe_layers(const Ctx *c, int s)
{
    int n = 0;
    for (int l = 0; l < step_stage_layers(c, s); l++)
        n += !step_layer_dense(c, s, l);
    const WorkloadTransformer *tr = workload_transformer(c->w);
    return n + (s == c->p.pp - 1 && tr ? tr->mtp_layers : 0);
}

/* Index of micro-batch i's pass through chunk j of stage s in Build's fw,
 * bw (chunk 0 first: b->bw[s * m + m - 1] is every stage's last backward,
 * interleaved or not). */
static inline int step_span(const Ctx *c, int s, int j, int i) { return (j * c->p.pp + s) * c->m + i; }

/* A task of `seconds` on resource `res`, with its category for timelines. */
int step_task(SimGraph *g, const char *name, int res, double seconds, const char *cat);
/* `after` waits for `before`; either may be -1 (none). */
void step_dep(SimGraph *g, int before, int after);
/* Records a collective kind and returns its index in c->colls, or -1 when
 * there is nothing to run (a group of one, no bytes).  DP collectives are
 * scaled by the contention factor. */
int step_coll(Ctx *c, const char *name, const char *group_name, const CollGroup *g, CollOp op, double bytes);
/* A point-to-point send (recv: its receive, for the listing) of `bytes` over
 * the pair g, at NCCL's send/receive protocol (coll_p2p_cost). */
int step_p2p(Ctx *c, const char *name, const char *group_name, const CollGroup *g, double bytes, bool recv);
/* The kind's time, 0 for -1. */
double step_coll_time(const Ctx *c, int use);
/* A group of the step's ranks (topology ids) with the scenario's collective
 * parameters, process layout and NCCL version, seeing the fabric above the
 * NICs (coll_group_set_fabric) as `collective` does; the data-parallel and
 * replica groups see it through their contention runs instead (par_dp.c). */
CollGroup *step_group_new(const Ctx *c, const int *ids, int n, GError **err);
/* Hands g (the group {j + i stride : i < n} of stage s's ranks, j the
 * d tp + t of step_rank_of, at j = 0) the other groups of that shape that
 * partition the stage (s < 0: every stage, with stage 0's group first):
 * they run its collectives at the same time, and load the fabric beside it
 * (coll_group_set_siblings).  None where they do not partition it. */
void step_siblings_strided(const Ctx *c, CollGroup *g, int s, int stride, int n);
/* Hands g (a pair of job ranks: tp x dp index j of stage s to j2 of stage
 * s2, for j, j2 from pair_j) the pairs of every `count` index k
 * (pair_j(c, k, arg, &j, &j2)) but its own, k = 0. */
void step_siblings_pairs(const Ctx *c, CollGroup *g, int s, int s2, int count,
                         void (*pair_j)(const Ctx *c, int k, int arg, int *j, int *j2), int arg);
/* How two ranks of the step's topology meet: 0 in one node, 1 through the
 * NICs and their switches, 2 through a switch-to-switch link of the fabric
 * (which an oversubscribed fabric narrows): a pair of the worst kind stands
 * for a ring's or a pipeline's hops. */
int step_pair_kind(const Ctx *c, int a, int b);
/* Whether a dp or replica group (ranks j = i stride of stage 0, i < n)
 * sees the fabric on its own routes and its copies' (par_dp.c). */
void dp_group_fabric(const Ctx *c, CollGroup *g, int stride, int n);
/* Adds "step_time_p10_s", "step_time_p90_s" and "uncertainty" to a step's
 * report (step_band.c). */
void step_band(const Build *b, double step, double exposed_comm, cJSON *out);
/* Notes that `task` runs `times` collectives `use` for stage `stage`'s device
 * (nothing for use -1). */
void step_coll_tag(Build *b, int task, int use, int times, int stage);
/* A task of one collective `use` on stage s's resource `res` (category
 * "comm" or "tp"), tagged; `name` defaults to the use's. */
int step_coll_task(Build *b, const char *name, int s, int res, int use, const char *cat);

/* The type of activations, gradients and of the GEMMs outside the linear
 * layers (attention core, logits): the working precision, bf16 when it is
 * fp8 (Transformer Engine runs only the linear layers' GEMMs in FP8; its
 * attention and Megatron's output layer stay in 16 bit by default). */
static inline AccelDtype step_activation_dtype(const Ctx *c)
{
    AccelDtype dt = step_scenario_dtype(c->sc);
    return dt == ACCEL_FP8 ? ACCEL_BF16 : dt;
}
#define step_attention_dtype step_activation_dtype

/* step_compute.c: per-layer compute times, recomputation included, and the
 * step's FLOPs. */
void compute_costs(Ctx *c);
void compute_flops(const Ctx *c, double *model_flops, double *hw_flops);
/* One layer's fused attention kernels on a micro-batch of `mb` (under cp:
 * the cp ring steps' kernels together). */
double step_fused_attention_time(const Ctx *c, int mb, bool backward);
/* Bytes of stage s's transient peak working set (logits and loss, the layer
 * being recomputed, ZeRO-3's unsharded layer gradient). */
double compute_working_set(const Ctx *c, int s);

/* step_loss.c: the loss that runs ("cross_entropy"; loss_parallel at tp 1
 * is PyTorch's own, unfused), its bytes per logit through HBM, forward and
 * backward, and those it holds at its peak (*kept: still held while the
 * layers' backward runs). */
StepCrossEntropy step_loss_kind(const Ctx *c);
void step_loss_traffic(const Ctx *c, double *fwd, double *bwd);
double step_loss_bytes_per_logit(const Ctx *c, double *kept);

/* par_tp.c: the tensor-parallel group and its per-layer collectives. */
bool tp_init(Ctx *c, GError **err);
int tp_after(Build *b, int s, const char *name, double seconds, int after);
/* tp_comm_overlap: what of each pass's collectives stays exposed (after
 * compute_costs; the hidden part slows the GEMMs it overlaps). */
void tp_overlap_costs(Ctx *c);
/* Bytes of Transformer Engine's userbuffers under tp_comm_overlap (0 without). */
double tp_userbuffer_bytes(const Ctx *c);

/* step_interfere.c: the shares of the SMs and of HBM bandwidth a
 * collective's kernels take (0 for use -1), and the stretch of every compute task of the run graph
 * by its overlap with communication x share (returns the seconds added;
 * 0 when the scenario turns it off). */
/* the CTAs (= SMs) NCCL's kernels take on a group */
int interfere_ctas(const CollGroup *g);
void interfere_shares(const Ctx *c, int use, double *sm_share, double *hbm_share);
/* Stretches the compute the graph's last run overlapped with communication
 * and reruns it until the step settles; returns the last run's makespan. */
sim_time_t interfere_run(Build *b, sim_time_t span);

/* par_pipeline.c: layers per stage, the point-to-point groups, the order of
 * each stage's passes (1F1B or GPipe) and the sends between stages. */
void pipeline_partition(Ctx *c);

bool pipeline_init(Ctx *c, GError **err);
void pipeline_free(Ctx *c);
double pipeline_stage_params(const Ctx *c, int s);
/* The output layer's weights per device, vocab x hidden over tp (0 for a CNN). */
double pipeline_output_layer_params(const Ctx *c);
int pipeline_order(const Ctx *c, int s, int *order_mb, int *order_dir, int *order_chunk);
void pipeline_sends(Build *b);
int pipeline_inflight(const Ctx *c, int s);

/* par_dp.c: the data-parallel group, gradient buckets and the (replicated
 * or sharded) weight update. */
bool dp_init(Ctx *c, GError **err);
void dp_costs(Ctx *c);
void dp_backward_begin(Build *b, int s);
void dp_backward_end(Build *b, int s, int last, bool last_mb);
void dp_sync_and_update(Build *b, int s, GArray *ends, GArray *bucket_params);

/* par_contention.c: the contention factor of DP collectives; tests may
 * lower the flow network's work budget (0: the default) to reach the
 * sampled and bound paths on small scenarios. */
void dp_contention(Ctx *c);
void dp_contention_set_work_budget(uint64_t work);

/* par_zero.c: ZeRO-3's per-layer gathers and reduce-scatters, and the
 * sharded update's gathers behind the next forward (allgather_overlap). */
typedef struct {
    bool z3;        /* ZeRO-3 with dp > 1 */
    bool z3_ag, z3_rs; /* this pass gathers the weights, reduce-scatters the gradients (under a
                          pipeline only a schedule's first forward and last backward) */
    bool gather;    /* this forward gathers the updated weights first */
    bool bwd;       /* a backward pass (ZeRO++'s hpZ gathers in the node) */
    int u_ag, u_rs; /* ZeRO-3's collectives (-1: none) */
    int u_eag, u_ers; /* its experts' over the expert-data-parallel group (-1: none) */
    int start;      /* the pass's first dependency */
    int ag_prev;    /* the last gather issued */
    int hist[2];    /* the last two compute tasks: ZeRO-3's prefetch window */
    int layer;      /* the next forward layer (local index) */
    int bucket_end, chunk_end, bucket_ag; /* the gather of layers [.., bucket_end) */
} ZeroPass;
void zero_pass_begin(ZeroPass *z, Build *b, int s, int chunk, int mbi, int dir, int prev);
int zero_layer_gather(ZeroPass *z, Build *b, int s, int l);
int zero_head_gather(ZeroPass *z, Build *b, int s, double params);
int zero_layer_reduce(ZeroPass *z, Build *b, int s, int l, int after);
void zero3_grad_ends(Build *b, int s, int last_bwd, GArray *ends);
bool zero_init(Ctx *c, GError **err);
void zero_fsdp2_costs(Ctx *c);

/* par_zeropp.c: ZeRO++ and SDP4Bit.  The groups; the quantised gather of
 * `params` weights (kind `name`, on `g`) after `after`: quantise the shard,
 * all-gather `wire` bytes per weight, dequantise (returns that task); the
 * quantised hierarchical reduce-scatter of `params` gradients after
 * `after` (returns its last task); ZeRO++'s secondary copy in `mem`. */
bool zeropp_init(Ctx *c, GError **err);
void zeropp_free(Ctx *c);
double zeropp_weight_wire(const Ctx *c, bool sdp4bit);
int zeropp_gather(Build *b, int s, const char *name, const CollGroup *g, double params, double wire, int after);
int zeropp_reduce(Build *b, int s, double params, int after);
void zeropp_memory(const Ctx *c, int s, MemoryBreakdown *mem);
/* scenario keys: "zeropp", "sdp4bit", "partition_activations",
 * "cpu_checkpointing", "recompute_overlap" (scenario_seed.c) */

/* par_pact.c: partitioned and host-held checkpoints, and Lynx.  The
 * layer's checkpoint after its forward `after` (to the host under
 * cpu_checkpointing; returns what the next layer waits for); before a
 * recompute, the task it waits for (fetch and all-gather of the checkpoint
 * after `after`, an async whole checkpoint's fetch from `prefetch_from`,
 * the layer above's backward start), or -1; the memory they change on stage s (what goes to
 * the host added to *host). */
void pact_costs(Ctx *c);
int pact_forward_end(Build *b, int s, int l, int after);
int pact_before_recompute(Build *b, int s, int after, int prefetch_from);
void pact_memory(const Ctx *c, int s, MemoryBreakdown *mem, double *host);
/* Activation offloading ("cpu_offloading_num_layers"): whether layer l of
 * stage s keeps its activations in host memory; before layer l's backward
 * (after `after`), its activations fetched since `prefetch_from` (the
 * layer above's backward start): what the backward waits for. */
bool pact_layer_offloaded(const Ctx *c, int s, int l);
int pact_before_backward(Build *b, int s, int l, int prefetch_from, int after);

/* par_offload.c: the update of `params` (this device's shard) after `after`,
 * `after2` and the tasks in `more` (or NULL): the optimizer on the device, or under ZeRO-Offload the
 * gradients down PCIe, the host's update and the weights back up.  Returns
 * the task after which the updated weights are on the device. */
int offload_update(Build *b, int s, double params, int after, int after2, const GArray *more);
/* ZeRO-Offload: the optimizer state moved to host memory (`host` bytes). */
void offload_memory(const Ctx *c, MemoryBreakdown *mem, double *host);

/* par_moe.c: expert parallelism's groups and all-to-all costs, the
 * dispatch and combine after each layer's compute, the experts' gradient
 * synchronisation over the expert-data-parallel group and their update,
 * and their memory on stage s (added to `mem`). */
bool moe_init(Ctx *c, GError **err);
/* The experts' tensor-parallel degree (expert_tp, or tp) and the ranks of
 * tp x dp holding the same experts. */
int moe_etp(const Ctx *c);
int moe_edp(const Ctx *c);
/* The ranks of ep a token's top_k experts fall on, on average (DeepEP sends
 * it once to each): uniform or round-robin routing. */
double moe_ranks_per_token(int experts, int top_k, int ep, bool round_robin);
void moe_free(Ctx *c);
int moe_after(Build *b, int s, const char *name, double seconds, int after);
/* After compute_costs: the all-to-alls' exposed part per pass (all of
 * them, or under "moe_a2a_overlap" what the other pass's layer compute
 * does not cover). */
void moe_overlap_costs(Ctx *c);
void moe_sync_and_update(Build *b, int s);
bool moe_memory(const Ctx *c, int s, const MemoryConfig *dense, MemoryBreakdown *mem, GError **err);

/* par_cp.c: ring attention's costs, and the KV passing after a layer's
 * compute (its exposed part; `tp_name` says which pass). */
bool cp_init(Ctx *c, GError **err);
int cp_after(Build *b, int s, const char *tp_name, int after);
double cp_working_set(const Ctx *c);

/* par_lora.c: LoRA.  After the partition, the trainable parameters become
 * the adapters' and the base's move to frozen_*; stage s's frozen
 * parameters; their weights added to stage s's memory (params and
 * model_states; the caller reapplies fragmentation). */
void lora_partition(Ctx *c);
double lora_stage_frozen_params(const Ctx *c, int s);
void lora_memory(const Ctx *c, int s, MemoryBreakdown *mem);
/* Adds "finetune" (method, rank, targets, dropout, base_dtype and the
 * model's trainable parameters) to a report's config; nothing without. */
void lora_report(const Ctx *c, cJSON *cfg);

/* step_cnn.c: a CNN's per-layer compute costs and its FLOPs. */
void cnn_costs(Ctx *c);
void cnn_flops(const Ctx *c, double *model_flops, double *hw_flops);

/* What a device keeps in host memory: ZeRO-Offload's optimizer state and
 * cpu_checkpointing's checkpoints (bytes). */
typedef struct {
    double optimizer, checkpoints;
} StepHostMemory;

/* step_report.c: stage s's device memory (the memory model's estimate;
 * `host`: what it keeps in host memory)... */
bool step_stage_memory(const Ctx *c, int s, MemoryBreakdown *mem, StepHostMemory *host, GError **err);
/* ...and, for timelines, its counter track "gpuR.memory" on the run graph:
 * the steady state all step, each micro-batch's activations from its
 * forward's start to its backward's end, the working set during each
 * backward, so that the track's peak is the estimate's total (step.c). */
void step_memory_track(Build *b);
/* step_report.c: the result object of a built and run graph (the step took
 * `step_s`); NULL and `err` when the memory estimate fails. */
cJSON *step_report(const Build *b, int variant, double step_s, GError **err);
/* The memory of the stage that needs most (its breakdown, stage) and the
 * most host memory any stage needs. */
bool step_peak_memory(const Ctx *c, MemoryBreakdown *mem, int *mem_stage, StepHostMemory *host, GError **err);
/* Whether `mem` fits the scenario's accelerator (memory_fits, with its
 * "memory_fraction"; a fraction JAX is told to preallocate must leave the
 * memory outside the pool room as well). */
bool step_fits(const Ctx *c, const MemoryBreakdown *mem);

#endif
