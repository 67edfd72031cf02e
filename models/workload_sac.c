/* PyTorch's per-op selective activation checkpointing as torchtitan runs it
 * ("recompute": "op"; torchtitan's [activation_checkpoint] mode "selective"
 * with selective_ac_option "op", its default for Llama): each block runs
 * under torch.utils.checkpoint with a policy that keeps the outputs of
 * aten.mm and of the fused attention kernels (and of max/abs, the FP8
 * amaxes) and recomputes everything else, except that every second mm of
 * the block's forward is recomputed too (torchtitan 9dec370
 * parallelize_llama.py _save_list and _custom_policy; the same rule in
 * torchtitan/distributed/activation_checkpoint.py SelectiveAC today).
 * torchao's Float8 linears reach the policy as aten.mm on Float8 tensors
 * (the checkpoint's dispatch mode sees the op before the tensor subclass
 * turns it into a scaled mm), so FP8 blocks follow the same rule.
 *
 * A Llama block's mm's run wq, wk, wv, wo, w1, w3, w2 (models/llama/
 * model.py: w2(silu(w1(x)) * w3(x))), a GPT block's q, k, v, o, fc1, fc2:
 * wk, wo and w3 (fc2) are run again before the block's backward, with the
 * norms, rotary embedding and activation, while the checkpoint keeps the
 * block's input, wq, wv, w1 and w2's outputs (fc1's), and the attention
 * kernel's output and log-sum-exp.  Each mm is costed as its share of the
 * fused GEMM workload_layer_gemms lists. */
#include "workload.h"

#include <string.h>

/* The block's mm's in forward order: the fused GEMM each is part of and
 * its output width. */
static int block_mms(const WorkloadTransformer *t, const char **gemm, double *width)
{
    double q = workload_q_dim(t), kv = workload_kv_dim(t), h = t->hidden, f = t->ffn;
    const char *g[] = {"qkv", "qkv", "qkv", "attn_out", "mlp_up", "mlp_up", "mlp_down"};
    double w[] = {q, kv, kv, h, f, f, h};
    int n = 0;
    for (int i = 0; i < 7; i++) {
        if (!t->gated_mlp && i == 5) /* no w3: fc1, then fc2 */
            continue;
        gemm[n] = g[i];
        width[n++] = w[i];
    }
    return n;
}

double workload_op_sac_share(const WorkloadTransformer *t, const char *gemm)
{
    const char *g[7];
    double w[7], all = 0, rec = 0;
    int n = block_mms(t, g, w);
    for (int i = 0; i < n; i++)
        if (!strcmp(g[i], gemm)) {
            all += w[i];
            rec += i % 2 == 1 ? w[i] : 0; /* the 2nd, 4th, 6th mm */
        }
    return all > 0 ? rec / all : 0;
}

double workload_op_sac_kept(const WorkloadTransformer *t, double batch, double e)
{
    const char *g[7];
    double w[7], T = batch * t->seq_len, kept = t->hidden; /* the block's input */
    int n = block_mms(t, g, w);
    for (int i = 0; i < n; i += 2)
        kept += w[i];
    kept += workload_q_dim(t); /* the attention kernel's output */
    return T * kept * e + 4.0 * batch * t->heads * t->seq_len; /* its fp32 log-sum-exp per query row */
}

const char *workload_op_sac_check(const WorkloadTransformer *t, int tp, int cp)
{
    if (!t)
        return "needs a transformer: it is PyTorch's per-op checkpointing of a transformer block";
    const char *dense = workload_dense_check(t);
    if (dense)
        return dense;
    if (tp > 1 || cp > 1)
        return "is modelled with \"tp\": 1 and \"cp\": 1 (under tensor or context parallelism the policy also "
               "decides which collectives run again)";
    if (t->bias) /* a linear with a bias runs aten.addmm, which the policy does not keep */
        return "is modelled for blocks without biases (their linears run addmm, which the policy recomputes)";
    if (t->qk_norm || t->dropout)
        return "is modelled for Llama- and GPT-style blocks without qk_norm or dropout";
    return NULL;
}
