/* The model side of "shardsim collective": which sizes a size spec means,
 * which topology and ranks the collective runs on, and what one size costs.
 * The command only parses options and prints. */
#include "coll_sweep.h"

#include "sim_units.h"

#include <math.h>
#include <string.h>

static void add_size(GArray *out, double v)
{
    if (out->len == 0 || g_array_index(out, double, out->len - 1) != v)
        g_array_append_val(out, v);
}

bool coll_sweep_parse_sizes(const char *spec, GArray *out)
{
    if (strchr(spec, ',')) {
        char **parts = g_strsplit(spec, ",", -1);
        bool ok = true;
        for (char **p = parts; *p && ok; p++) {
            double v;
            ok = sim_parse_size(g_strstrip(*p), &v) && v >= 1 && v <= COLL_SWEEP_MAX_BYTES;
            if (ok)
                g_array_append_val(out, v);
        }
        g_strfreev(parts);
        return ok && out->len > 0 && out->len <= COLL_SWEEP_MAX_SIZES;
    }
    char **parts = g_strsplit(spec, ":", 3);
    double lo = 0, hi = 0, f = 2;
    int n = (int)g_strv_length(parts);
    bool ok = n >= 1 && sim_parse_size(parts[0], &lo);
    hi = lo;
    if (ok && n >= 2)
        ok = sim_parse_size(parts[1], &hi);
    if (ok && n == 3) {
        char *end;
        f = g_ascii_strtod(parts[2], &end);
        ok = *end == 0 && f > 1 && isfinite(f);
    }
    g_strfreev(parts);
    if (!ok || hi < lo || lo < 1 || hi > COLL_SWEEP_MAX_BYTES || log(hi / lo) / log(f) > COLL_SWEEP_MAX_SIZES)
        return false;
    for (double s = lo; s <= hi * (1 + 1e-12); s *= f)
        add_size(out, round(s));
    return true;
}

Topo *coll_sweep_topo(const char *name_or_path, int nodes, int ranks, GError **err)
{
    TopoOptions topt = {.nodes = nodes};
    Topo *topo = topo_load(name_or_path, &topt, err);
    if (!topo || ranks <= topo_num_ranks(topo) || nodes != 0)
        return topo;
    /* more ranks than the preset's default size: grow it, where the family can */
    int ppn = topo_ranks_per_node(topo);
    topo_free(topo);
    topt.nodes = (ranks + ppn - 1) / ppn;
    return topo_load(name_or_path, &topt, err);
}

int *coll_sweep_ranks(const Topo *t, int n, int *nodes_used)
{
    int tppn = topo_ranks_per_node(t), used = (n + tppn - 1) / tppn;
    *nodes_used = used;
    if (n % used)
        return NULL;
    int per = n / used;
    int *ids = g_new(int, n);
    for (int i = 0; i < n; i++)
        ids[i] = (i / per) * tppn + i % per;
    return ids;
}

bool coll_sweep_row(const CollGroup *g, CollOp op, CollAlgo algo, CollProto proto, double bytes, bool flows,
                    CollSweepRow *row)
{
    CollCost c;
    if (!coll_cost(g, op, algo, proto, bytes, &c))
        return false;
    double algbw = c.time_s > 0 ? bytes / c.time_s : 0;
    int64_t nf = flows ? coll_flow_count(g, op, c.algo, c.proto, bytes) : 0;
    *row = (CollSweepRow){
        .bytes = bytes,
        .cost = c,
        .algbw_Bps = algbw,
        .busbw_Bps = algbw * coll_busbw_factor(op, coll_group_size(g)),
        .flow_time_s = flows && nf <= COLL_MAX_FLOWS ? coll_simulate(g, op, c.algo, c.proto, bytes) : NAN,
        .flow_count = nf,
    };
    return true;
}
