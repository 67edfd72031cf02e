/* "shardsim collective --library mpi": the MPI model's table or JSON (the
 * model is models/mpi_model.h); cmd_collective.c parses the options and
 * hands over here. */
#include "cli.h"
#include "coll_sweep.h"
#include "cmd_collective_mpi.h"
#include "mpi_model.h"

#include <math.h>
#include <stdio.h>

int cli_collective_mpi(const Topo *topo, int n, int nodes_used, CollOp op, const char *lib_s, const char *params,
                       const GArray *sizes,
                       bool json)
{
    int lib = lib_s ? mpi_lib_parse(lib_s) : MPI_LIB_OPENMPI;
    if (lib < 0)
        return cli_usage_error("collective: unknown --mpi-library '%s' (openmpi, mpich or cray-mpich)", SIM_ECHO(lib_s));
    GError *err = NULL;
    /* --params: an overlay's "mpi." keys (shardsim calibrate on OSU runs); a full file is the NCCL model's */
    MpiModel *m = mpi_model_new(topo, nodes_used, n / nodes_used, (MpiLib)lib,
                                params && mpi_params_is_overlay(params) ? params : NULL, &err);
    if (!m)
        return cli_fail(err);
    MpiCost *c = g_new0(MpiCost, sizes->len);
    for (guint i = 0; i < sizes->len; i++)
        if (!mpi_cost(m, op, g_array_index(sizes, double, i), &c[i])) {
            g_free(c);
            mpi_model_free(m);
            return cli_usage_error("collective: the MPI model does not cover %s", coll_op_name(op));
        }
    const MpiPlatform *p = mpi_model_platform(m);
    cJSON *root = cJSON_CreateObject(), *rows = cJSON_CreateArray();
    cJSON_AddStringToObject(root, "topology", topo_name(topo));
    cJSON_AddStringToObject(root, "op", coll_op_name(op));
    cJSON_AddStringToObject(root, "library", mpi_lib_name((MpiLib)lib));
    cJSON_AddNumberToObject(root, "ranks", n);
    cJSON_AddNumberToObject(root, "nodes", nodes_used);
    if (isfinite(p->net_eager)) { /* the NICs' transport (models/presets/mpi.json "transports") */
        cJSON *tr = cJSON_AddObjectToObject(root, "transport");
        cJSON_AddNumberToObject(tr, "message_overhead_s", p->net_overhead);
        cJSON_AddNumberToObject(tr, "low_latency_payload_bytes", isfinite(p->net_ll_payload) ? p->net_ll_payload : -1);
        cJSON_AddNumberToObject(tr, "eager_max_bytes", p->net_eager);
    }
    if (!json)
        printf("# %s on %s with the %s model: %d ranks on %d node%s; shared memory %.2f us, %.1f GB/s per rank; "
               "network %.2f us, %.1f GB/s per node\n",
               coll_op_name(op), topo_name(topo), mpi_lib_name((MpiLib)lib), n, nodes_used, nodes_used == 1 ? "" : "s",
               p->lat_shm * 1e6, p->bw_core / 1e9, p->lat_net * 1e6, p->bw_nic / 1e9);
    if (!json && isfinite(p->net_eager))
        printf("# network transport: %.2f us of software per message at each end; the payload rides with the "
               "command up to %.0f B; eager up to %.0f B, then a rendezvous\n",
               p->net_overhead * 1e6, isfinite(p->net_ll_payload) ? p->net_ll_payload : -1, p->net_eager);
    if (!json)
        printf("%14s %12s %11s %11s  %s\n", "size(B)", "time(us)", "algbw(GB/s)", "busbw(GB/s)", "algo");
    for (guint i = 0; i < sizes->len; i++) {
        double b = g_array_index(sizes, double, i), t = c[i].time_s;
        double alg = t > 0 ? b / t : 0, bus = alg * coll_busbw_factor(op, n);
        if (json) {
            cJSON *o = cJSON_CreateObject();
            cJSON_AddNumberToObject(o, "size_bytes", b);
            cJSON_AddNumberToObject(o, "time_s", t);
            cJSON_AddNumberToObject(o, "algbw_Bps", alg);
            cJSON_AddNumberToObject(o, "busbw_Bps", bus);
            cJSON_AddStringToObject(o, "algo", c[i].algo);
            cJSON_AddItemToArray(rows, o);
        } else {
            printf("%14.0f %12.2f %11.2f %11.2f  %s\n", b, t * 1e6, alg / 1e9, bus / 1e9, c[i].algo);
        }
    }
    cJSON_AddItemToObject(root, "rows", rows);
    if (json)
        cli_print_json(root);
    else
        cJSON_Delete(root);
    g_free(c);
    mpi_model_free(m);
    return 0;
}
