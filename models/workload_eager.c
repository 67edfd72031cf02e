/* The element-wise passes whose backward is not twice the forward: the
 * rotary embedding's, and PyTorch eager mode's ("elementwise": "eager"),
 * what a block's element-wise ops move through HBM when each runs as its own
 * kernel, as torchtitan's Llama (9dec370 models/llama/model.py, norms.py
 * RMSNorm) and Meta's reference code write them, beyond the fused kernels
 * the model otherwise prices (one pass per norm, a fused SwiGLU, one
 * rotary pass: Transformer Engine, torch.compile).  Per token, with e bytes
 * per activation and the norms in fp32 (4 bytes):
 *  - RMSNorm x.float(), pow(2), mean, x * rsqrt, type_as, * weight: 28 + 4e
 *    per element forward (fused 2e); its autograd backward 44 + 6e (fused
 *    4e), on each of the two norms (h) and on qk_norm's q and k;
 *  - rotary embedding through complex fp32 (float(), the complex product,
 *    type_as) on q and k: 16 + 2e per element each way (fused: 2e, q and
 *    k read and written once, as TE's fused_rope kernel and a compiled
 *    block do in the forward, its gradient the same in the backward);
 *  - SwiGLU as silu and a product: 5e per ffn element forward (fused 3e),
 *    9e backward (fused 6e).
 * Layer norms (one ATen kernel in eager too), GELU and the residual adds
 * cost the same either way, and so do the copies a program makes in both
 * modes (torchtitan's repeat_kv under GQA, the attention output's
 * transpose), which are left out.  The saved tensors are not changed here:
 * the fp32 intermediates are transients of the norm. */
#include "workload.h"
#include "workload_mla.h"

void workload_layer_pass_bytes(const Workload *w, int layer, int micro_batch, const WorkloadParallel *par,
                               double *fwd, double *bwd)
{
    *fwd = *bwd = 0;
    const WorkloadTransformer *t = workload_transformer(w);
    if (!par || !t || layer < 0 || layer >= t->layers || micro_batch < 1)
        return;
    double e = par->act_bytes > 0 ? par->act_bytes : 2, T = (double)micro_batch * t->seq_len;
    double h = t->hidden, q = workload_q_dim(t), kv = workload_kv_dim(t), f = t->ffn;
    double tp = par->tp > 1 ? par->tp : 1, cp = par->cp > 1 ? par->cp : 1;
    double sp = par->sequence_parallel ? tp : 1;
    double rows_f = 0, rows_b = 0, split_f = 0, split_b = 0; /* rows: h wide (split by sp); split: by tp */
    bool eager = par->eager_elementwise;
    if (t->position == WORKLOAD_POS_ROTARY && !workload_mla_on(t)) { /* MLA's rope: workload_mla.c */
        split_f += (eager ? 16 + 2 * e : 2 * e) * (q + kv);
        split_b += (eager ? 16 + 2 * e : 2 * e) * (q + kv);
    }
    if (eager && t->norm == WORKLOAD_NORM_RMSNORM) {
        rows_f += 2 * (28 + 2 * e) * h;
        rows_b += 2 * (44 + 2 * e) * h;
        if (t->qk_norm) {
            split_f += (28 + 2 * e) * (q + kv);
            split_b += (44 + 2 * e) * (q + kv);
        }
    }
    if (eager && t->gated_mlp) {
        split_f += 2 * e * f;
        split_b += 3 * e * f;
    }
    *fwd = T * (rows_f / sp + split_f / tp) / cp;
    *bwd = T * (rows_b / sp + split_b / tp) / cp;
}
