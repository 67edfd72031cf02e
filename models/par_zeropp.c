/* Quantised sharded-data-parallel collectives.
 *
 * ZeRO++ (Wang et al. 2023, "ZeRO++: Extremely Efficient Collective
 * Communication for Giant Model Training", sec. 3), on ZeRO-3:
 *  - qwZ (sec. 3.1): each weight all-gather moves block-quantised int8
 *    weights, one fp32 scale per block: about half of bf16's bytes;
 *  - hpZ (sec. 3.2): the forward gather also fills a secondary partition,
 *    the layer split over the dp ranks of one node, so the backward's
 *    gathers stay in the node (16-bit, on NVLink), at the cost of that
 *    secondary copy in HBM (1 / node_dp of the weights per device);
 *  - qgZ (sec. 3.3): the gradients' reduce-scatter becomes int4
 *    quantisation, an all-to-all inside the node, dequantise-reduce-
 *    requantise, an all-to-all across nodes of 1 / node_dp of the data,
 *    and a last dequantise-reduce: the inter-node volume falls by the
 *    node's dp ranks x 4 (int4 against bf16).
 * SDP4Bit (Jia et al. 2024, "SDP4Bit: Toward 4-bit Communication
 * Quantization in Sharded Data Parallelism for LLM Training", sec. 3), on
 * a ZeRO-1/2 sharded update (Megatron-LM's distributed optimizer, where
 * every rank keeps the previous weights whole):
 *  - qWD (sec. 3.1): the updated weights' all-gather moves the 4-bit
 *    quantised difference to the previous step's weights, added back on
 *    arrival;
 *  - TLq-HS (sec. 3.2): the gradients' reduce-scatter is qgZ's two
 *    all-to-alls with 8 bits inside the node and 4 across nodes, after a
 *    Hadamard smoothing pass.
 * The quantisation kernels are memory-bound passes on the compute stream
 * (bytes read + written at the chip's HBM bandwidth).  Assumed, not
 * measured: blocks (groups) of 256 values with one fp32 scale each. */
#include "step_build.h"

#define ZPP_SCALE (4.0 / 256) /* bytes of scale per value */
#define ZPP_INT8 (1 + ZPP_SCALE)
#define ZPP_INT4 (0.5 + ZPP_SCALE)

static bool hierarchy(const StepPlan *p) { return p->hpz || p->qgz || p->sdp4bit_gradients; }

bool zeropp_init(Ctx *c, GError **err)
{
    int rpn = topo_ranks_per_node(c->topo) / c->p.tp;
    c->node_dp = rpn < 1 ? 1 : rpn > c->zero_ranks ? c->zero_ranks : rpn;
    if (!hierarchy(&c->p) || c->p.dp < 2)
        return true;
    int g = c->node_dp, x = c->zero_ranks / g;
    if (g < 2 || x < 2) /* one level: the dp group itself */
        return true;
    int *ids = g_new(int, g > x ? g : x);
    for (int d = 0; d < g; d++)
        ids[d] = step_rank_of(c, 0, d, 0);
    c->node_group = step_group_new(c, ids, g, err);
    for (int k = 0; k < x; k++)
        ids[k] = step_rank_of(c, 0, k * g, 0);
    c->xnode_group = c->node_group ? step_group_new(c, ids, x, err) : NULL;
    g_free(ids);
    step_siblings_strided(c, c->node_group, -1, c->p.tp, g); /* every stage's partitions gather at once */
    step_siblings_strided(c, c->xnode_group, -1, g * c->p.tp, x);
    return c->xnode_group != NULL;
}

void zeropp_free(Ctx *c)
{
    coll_group_free(c->node_group);
    coll_group_free(c->xnode_group);
}

/* Bytes per weight on the wire of a gather: ZeRO++'s int8 (qwZ), SDP4Bit's
 * 4-bit differences; the 16-bit weights otherwise (and when the weights are
 * already as small: FP8). */
double zeropp_weight_wire(const Ctx *c, bool sdp4bit)
{
    double q = sdp4bit ? ZPP_INT4 : ZPP_INT8;
    return q < c->param_bytes ? q : c->param_bytes;
}

static int pass(Build *b, int s, const char *name, double bytes, int after)
{
    int t = step_task(b->g, name, b->res[s].compute, accel_mem_time(b->c->acc, bytes), "compute");
    step_dep(b->g, after, t);
    return t;
}

static int coll_task(Build *b, int s, const char *name, const char *gname, const CollGroup *g, CollOp op, double bytes,
                     int after)
{
    int u = step_coll(b->c, name, gname, g, op, bytes);
    if (u < 0)
        return after;
    int t = step_coll_task(b, NULL, s, b->res[s].comm, u, "comm");
    step_dep(b->g, after, t);
    return t;
}

int zeropp_gather(Build *b, int s, const char *name, const CollGroup *g, double params, double wire, int after)
{
    Ctx *c = b->c;
    double P = c->param_bytes;
    bool q = wire < P, sdp = c->p.sdp4bit_weights;
    const char *gname = g == c->dp_group ? "dp" : "dp node";
    if (!q)
        return coll_task(b, s, name, gname, g, COLL_ALLGATHER, params * P, after);
    /* quantise the own shard (SDP4Bit: its difference to the old one,
     * read both); dequantise the whole layer (SDP4Bit: and add it to the
     * old weights, read and written) */
    double shard = params / coll_group_size(g);
    int t = pass(b, s, "quantize", shard * ((sdp ? 2 : 1) * P + wire), after);
    t = coll_task(b, s, name, gname, g, COLL_ALLGATHER, params * wire, t);
    return pass(b, s, "dequantize", params * (wire + (sdp ? 2 : 1) * P), t);
}

int zeropp_reduce(Build *b, int s, double params, int after)
{
    Ctx *c = b->c;
    bool sdp = c->p.sdp4bit_gradients;
    double gb = c->grad_bytes_per_param;
    int g = c->node_dp, n = c->zero_ranks, x = n / g;
    double qi = g > 1 ? (sdp ? ZPP_INT8 : ZPP_INT4) : ZPP_INT4, qo = ZPP_INT4;
    const char *intra = sdp ? "sdp4bit_grad_alltoall_intra" : "qgz_alltoall_intra";
    const char *inter = sdp ? "sdp4bit_grad_alltoall_inter" : "qgz_alltoall_inter";
    /* SDP4Bit smooths the gradients with a Hadamard transform first (one
     * read and one write more) */
    int t = pass(b, s, "quantize", params * (gb + qi) + (sdp ? 2 * params * gb : 0), after);
    if (g > 1) {
        t = coll_task(b, s, intra, "dp node", x > 1 ? c->node_group : c->dp_group, COLL_ALLTOALL, params * qi, t);
        /* the node's g pieces of params / g reduced, requantised for the
         * next level or written out */
        t = pass(b, s, "dequantize", params * qi + params / g * (x > 1 ? qo : gb), t);
    }
    if (x > 1) {
        t = coll_task(b, s, inter, "dp nodes", g > 1 ? c->xnode_group : c->dp_group, COLL_ALLTOALL, params / g * qo, t);
        t = pass(b, s, "dequantize", params / g * qo + params / n * gb, t);
    }
    return t;
}

void zeropp_memory(const Ctx *c, int s, MemoryBreakdown *mem)
{
    if (!c->p.hpz || c->p.zero_stage != 3 || !c->node_group)
        return; /* one node: the primary partition is the node's already */
    /* hpZ's secondary partition: the stage's 16-bit weights over the node's dp ranks */
    double b = pipeline_stage_params(c, s) * c->param_bytes / c->node_dp;
    mem->params += b;
    mem->model_states += b;
    mem->total += b;
}
