/* The weight update's place: on the device (the optimizer's HBM traffic),
 * or under ZeRO-Offload (Ren et al. 2021) on the host.  There the device's
 * shard of gradients goes down PCIe, the host's CPU Adam streams the fp32
 * master weights, the optimizer state and the gradients through host
 * memory (the same bytes per parameter as on the device, at the node's
 * host-memory bandwidth shared by its devices), and the updated 16-bit
 * weights come back up PCIe.  The transfers sit on the device's host
 * link (its copy engines, apart from the pipeline's sends); the host's update stands on the compute stream as the step's
 * optimizer time (the device waits for its weights).  The optimizer state
 * then lives in host memory, not HBM. */
#include "step_build.h"

static void deps(SimGraph *g, int t, int after, int after2, const GArray *more)
{
    step_dep(g, after, t);
    step_dep(g, after2, t);
    for (guint k = 0; more && k < more->len; k++)
        step_dep(g, g_array_index(more, int, k), t);
}

int offload_update(Build *b, int s, double params, int after, int after2, const GArray *more)
{
    Ctx *c = b->c;
    SimGraph *g = b->g;
    StageRes *r = &b->res[s];
    if (!c->p.offload_optimizer) {
        int o = step_task(g, "optimizer", r->compute, accel_mem_time(c->acc, params * c->opt_bytes_per_param),
                          "optimizer");
        deps(g, o, after, after2, more);
        return o;
    }
    double host_bps = c->p.host_mem_bps / topo_ranks_per_node(c->topo);
    int down = step_task(g, "offload_gradients", r->host, params * c->grad_bytes_per_param / c->p.pcie_bps, "host");
    deps(g, down, after, after2, more);
    int o = step_task(g, "host_optimizer", r->compute, params * c->opt_bytes_per_param / host_bps, "optimizer");
    step_dep(g, down, o);
    int up = step_task(g, "upload_weights", r->host, params * c->param_bytes / c->p.pcie_bps, "host");
    step_dep(g, o, up);
    return up;
}

void offload_memory(const Ctx *c, MemoryBreakdown *mem, double *host)
{
    *host = 0;
    if (!c->p.offload_optimizer)
        return;
    *host = mem->optimizer;
    mem->total -= mem->optimizer;
    mem->model_states -= mem->optimizer;
    mem->optimizer = 0;
}
