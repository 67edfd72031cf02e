/* A convolutional network's step (data parallel only, as in Xu et al.
 * 2020's ResNet-50 runs): every layer of the workload's table costs what
 * its own convolution or fully connected layer costs, as an implicit GEMM
 * (backward: its two GEMMs, dgrad and wgrad), plus its batch-norm/ReLU and
 * residual passes over memory (twice in the backward), and holds its own
 * parameters, so the gradient buckets fill as the real backward frees them:
 * the last layers' large weights first, the early layers' little ones
 * last.  Pooling is not modelled (the workload's table has none). */
#include "step_build.h"

void cnn_costs(Ctx *c)
{
    int L = workload_num_layers(c->w), mb = step_scenario_micro_batch(c->sc);
    AccelDtype dt = step_scenario_dtype(c->sc);
    c->l_fwd = g_new(double, L);
    c->l_bwd = g_new(double, L);
    c->l_params = g_new(double, L);
    double sum = 0;
    for (int l = 0; l < L; l++) {
        WorkloadGemm g[WORKLOAD_MAX_GEMMS], bw[2];
        int n = workload_layer_gemms(c->w, l, mb, &c->wp, g);
        double ew = workload_layer_elementwise_bytes(c->w, l, mb, &c->wp);
        c->l_fwd[l] = accel_mem_time(c->acc, ew);
        c->l_bwd[l] = accel_mem_time(c->acc, 2 * ew);
        for (int i = 0; i < n; i++) {
            c->l_fwd[l] += accel_bgemm_time(c->acc, dt, g[i].batch, g[i].m, g[i].n, g[i].k);
            workload_gemm_backward(&g[i], bw);
            for (int k = 0; k < 2; k++)
                c->l_bwd[l] += accel_bgemm_time(c->acc, dt, bw[k].batch, bw[k].m, bw[k].n, bw[k].k);
        }
        c->l_params[l] = workload_params_layer(c->w, l);
        sum += c->l_params[l];
    }
    c->layer_params = sum / L; /* pp 1: L x the mean is the model */
    c->head_params = workload_params_head(c->w);
}

/* Forward and backward (twice the forward) of the global batch. */
void cnn_flops(const Ctx *c, double *model_flops, double *hw_flops)
{
    *model_flops = *hw_flops = 3.0 * step_scenario_global_batch(c->sc) * workload_forward_flops_per_sample(c->w);
}
