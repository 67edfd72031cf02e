/* The loss over the logits ("cross_entropy"): the HBM traffic of each
 * implementation's passes over the vocabulary and the bytes per logit it
 * holds at its peak, read off the kernels' source.  Which one a run used
 * is a fact of its software stack (the tables in tests/data/steps say, row
 * by row). */
#include "step_build.h"

#include <math.h>

/* Bytes per logit the loss streams through HBM ("cross_entropy"), forward
 * into *fwd and backward into *bwd, e the 16-bit logits' bytes: its passes
 * over the vocabulary read off the kernels' source (a reduction reads, an
 * elementwise pass reads and writes; the per-token parts omitted):
 *  - fp32 (Megatron-Core's tensor_parallel/cross_entropy.py): forward the
 *    cast to fp32 (e + 4), max (4), in-place subtract (8), exp (8), sum (4),
 *    in-place divide (8); backward the in-place multiply by the incoming
 *    gradient (8) and autograd's cast back (4 + e);
 *  - fp32_fused (fusions/fused_cross_entropy.py, the same steps in compiled
 *    graphs, as torch.compile is expected to schedule them, not observed):
 *    cast with max (e + 4), subtract-exp-sum in place (8), divide (8);
 *    backward one pass writing the fp32 result and the 16-bit gradient
 *    (4 + 4 + e);
 *  - te (Transformer Engine's Triton cross entropy): forward an online
 *    max and sum (e), then the gradient written into the logits (2 e);
 *    backward its in-place scaling (2 e);
 *  - fused (apex's xentropy kernel, flash-attn's loss): forward max and
 *    log-sum-exp in two reads (2 e); backward a read and a write (2 e);
 *  - compiled (torch.compile's or XLA's fusion of cross_entropy on the
 *    upcast logits, the cast folded in; expected, not observed): forward
 *    one online max-and-sum read (e); backward a read and a write (2 e);
 *  - bf16 (PyTorch's cross_entropy on the 16-bit logits, no upcast):
 *    forward log_softmax (max, sum of exp, then the output: 4 e); backward
 *    nll_loss's dense zero gradient (e) and log_softmax's backward (a
 *    row-sum read, gradient and output read, input gradient written: 4 e);
 *  - unfused (PyTorch's cross_entropy on upcast logits): forward the cast
 *    (e + 4) and log_softmax, whose rows are too long to stay on chip (max,
 *    sum of exp, then the output: 16); backward nll_loss's dense zero
 *    gradient (4), log_softmax's backward (a row-sum read, then gradient
 *    and output read, input gradient written: 16), the cast back (4 + e);
 *  - loss_parallel with tp > 1 (torch.distributed.tensor.parallel.loss):
 *    forward the cast (e + 4), max (4), shifted copy (8), exp (8), sum (4),
 *    log-softmax (8); backward the zeros_like gradient (4), exp of the
 *    log-softmax (8), their sum (12), the product with the incoming
 *    gradient (8) and the cast back (4 + e); with tp 1, unfused;
 *  - chunked (Liger-Kernel's fused linear cross entropy, ops/
 *    fused_linear_cross_entropy.py): each chunk's logits read for the max
 *    and sum, then read again and overwritten by their gradient (3 e), all
 *    in the forward; the backward only scales the hidden-sized gradient. */
StepCrossEntropy step_loss_kind(const Ctx *c)
{
    StepCrossEntropy ce = step_scenario_cross_entropy(c->sc);
    return ce == STEP_CE_LOSS_PARALLEL && c->p.tp == 1 ? STEP_CE_UNFUSED : ce; /* DTensor's needs sharded logits */
}

void step_loss_traffic(const Ctx *c, double *fwd, double *bwd)
{
    double e = c->wp.act_bytes;
    switch (step_loss_kind(c)) {
    case STEP_CE_FP32:
        *fwd = e + 4 + 4 + 8 + 8 + 4 + 8;
        *bwd = 8 + 4 + e;
        return;
    case STEP_CE_FP32_FUSED:
        *fwd = e + 4 + 8 + 8;
        *bwd = 4 + 4 + e;
        return;
    case STEP_CE_TE:
        *fwd = 3 * e;
        *bwd = 2 * e;
        return;
    case STEP_CE_FUSED:
        *fwd = *bwd = 2 * e;
        return;
    case STEP_CE_COMPILED:
        *fwd = e;
        *bwd = 2 * e;
        return;
    case STEP_CE_BF16:
        *fwd = 4 * e;
        *bwd = e + 4 * e;
        return;
    case STEP_CE_CHUNKED:
        *fwd = 3 * e;
        *bwd = 0;
        return;
    case STEP_CE_LOSS_PARALLEL:
        *fwd = e + 4 + 4 + 8 + 8 + 4 + 8;
        *bwd = 4 + 8 + 12 + 8 + 4 + e;
        return;
    case STEP_CE_UNFUSED: break;
    }
    *fwd = e + 4 + 16;
    *bwd = 4 + 16 + 4 + e;
}

/* Bytes per logit the loss holds at its peak ("cross_entropy"), and
 * (`kept`) those still held while the layers' backward runs:
 *  - unfused (PyTorch's cross_entropy on fp32 logits, as autocast or a
 *    model's logits.float() runs it): log_softmax saves its fp32 output, and
 *    its backward holds that, the incoming fp32 gradient (nll_loss's,
 *    dense) and the fp32 gradient it makes: 3 x 4 bytes (the forward's
 *    logits, upcast and log-softmax, 2 + 4 + 4, are fewer);
 *  - fp32, fp32_fused (Megatron's vocab_parallel_cross_entropy on
 *    logits.float(): the bf16 logits are freed once cast, exp, softmax and
 *    the gradient are computed in place in the fp32 copy): the fp32 copy
 *    and the 16-bit logits or gradient beside it while casting;
 *  - te (Transformer Engine's Triton kernel): the 16-bit logits, into which
 *    it writes their gradient;
 *  - compiled: the 16-bit logits and their gradient;
 *  - bf16: as unfused, in 16 bits (3 e);
 *  - fused (flash-attn's / apex's xentropy kernel, llm-foundry's MPT
 *    default loss_fn "fused_crossentropy"; fp32 only in registers, the
 *    log-sum-exp per token): the 16-bit logits and, without
 *    inplace_backward (its default), their 16-bit gradient; the logits are
 *    kept to the end of the step, as the model's output that the loop
 *    holds (Composer's state.outputs);
 *  - loss_parallel (PyTorch's torch.distributed.tensor.parallel.loss, on
 *    logits sharded over the vocabulary, as torchtitan runs it with tp):
 *    its log-softmax builds the shifted fp32 copy and its exp beside the
 *    fp32 logits (with the 16-bit ones, 2 + 3 x 4), and its fused
 *    nll/log-softmax backward holds the saved fp32 log-softmax, a zeros_like
 *    gradient, exp of the log-softmax and their sum: 4 x 4 bytes.  With tp
 *    1 there is no DTensor and the loss is PyTorch's own (unfused);
 *  - chunked (Liger's fused linear cross entropy): one chunk's 16-bit
 *    logits, chunk_size = next_pow2(ceil(T / ceil(V / H))) tokens of the T,
 *    so about T x H of them whatever the vocabulary, and the gradients of
 *    the output layer's input (T x H) and weight (V x H) it made in the
 *    forward, kept for the backward; all as bytes per logit of T x V. */
static double chunked_bytes_per_logit(const Ctx *c, double *kept)
{
    const WorkloadTransformer *tr = workload_transformer(c->w);
    double e = c->wp.act_bytes, T = step_device_tokens(c), V = tr->vocab,
           H = tr->hidden;
    double chunk = fmin(T, exp2(ceil(log2(ceil(T / ceil(V / H))))));
    *kept = e * H * (T + V) / (T * V);
    return e * chunk / T + *kept;
}

double step_loss_bytes_per_logit(const Ctx *c, double *kept)
{
    double e = c->wp.act_bytes;
    *kept = 0;
    switch (step_loss_kind(c)) {
    case STEP_CE_CHUNKED: return chunked_bytes_per_logit(c, kept);
    case STEP_CE_FP32:
    case STEP_CE_FP32_FUSED: return 4 + e;
    case STEP_CE_TE: return e; /* the gradient written into the logits */
    case STEP_CE_COMPILED: return 2 * e; /* the logits and their gradient */
    case STEP_CE_BF16: return 3 * e;     /* as unfused, in 16 bits */
    case STEP_CE_FUSED: *kept = e; return 2 * e;
    case STEP_CE_LOSS_PARALLEL: return 4 * 4;
    case STEP_CE_UNFUSED: break;
    }
    return 3 * 4;
}
