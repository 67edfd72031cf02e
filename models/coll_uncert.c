/* How sure a collective prediction is: the residual quantiles and coverage of
 * the measurements behind the parameters, read from the default file's
 * "uncertainty" block or an overlay's "calibration" block, and the band of one
 * prediction (docs/UNCERTAINTY.md says why it is built this way). */
#include "coll_internal.h"

#include <string.h>

#define SMALL_LIMIT 1048576.0 /* the two residual classes split at 1 MiB, as validate's */
#define WIDEN_SIZE 0.15       /* per octave of size outside the measured range */
#define WIDEN_SCALE 0.3       /* per octave of nodes (or ranks) beyond the most measured */
#define WIDEN_TOPO 0.5        /* a topology no measurement was made on */

static bool pair(const SimJsonDoc *d, const cJSON *obj, const char *key, double lo, double hi, double out[2],
                 GError **err)
{
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!a)
        return true;
    const cJSON *x = cJSON_GetArrayItem(a, 0), *y = cJSON_GetArrayItem(a, 1);
    if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) != 2 || !cJSON_IsNumber(x) || !cJSON_IsNumber(y) ||
        !(x->valuedouble >= lo && x->valuedouble <= y->valuedouble && y->valuedouble <= hi)) {
        sim_json_error(d, a, err, "\"%s\" must be [LOW, HIGH] with %g <= LOW <= HIGH <= %g", key, lo, hi);
        return false;
    }
    out[0] = x->valuedouble;
    out[1] = y->valuedouble;
    return true;
}

static bool topologies(const SimJsonDoc *d, const cJSON *obj, CollUncert *u, GError **err)
{
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(obj, "topologies"), *e;
    if (!a)
        return true;
    if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) > UNC_MAX_TOPOS) {
        sim_json_error(d, a, err, "\"topologies\" must be an array of at most %d names", UNC_MAX_TOPOS);
        return false;
    }
    u->ntopos = 0;
    cJSON_ArrayForEach(e, a)
    {
        if (!cJSON_IsString(e) || strlen(e->valuestring) >= sizeof u->topos[0]) {
            sim_json_error(d, e, err, "a topology name of at most %zu characters", sizeof u->topos[0] - 1);
            return false;
        }
        g_strlcpy(u->topos[u->ntopos++], e->valuestring, sizeof u->topos[0]);
    }
    return true;
}

bool coll_uncert_read(const SimJsonDoc *d, const cJSON *obj, CollUncert *u, GError **err)
{
    if (!cJSON_IsObject(obj)) {
        sim_json_error(d, obj, err, "an uncertainty block must be an object");
        return false;
    }
    double sm[2] = {u->lo[0], u->hi[0]}, lg[2] = {u->lo[1], u->hi[1]}, sz[2] = {u->size_lo, u->size_hi},
           nodes[2] = {1, u->nodes_hi}, ranks[2] = {1, u->ranks_hi};
    if (!pair(d, obj, "log_residual_small", -5, 5, sm, err) || !pair(d, obj, "log_residual_large", -5, 5, lg, err) ||
        !pair(d, obj, "size_bytes", 0, 1e15, sz, err) || !pair(d, obj, "nodes", 1, 1 << 20, nodes, err) ||
        !pair(d, obj, "ranks", 1, 1 << 22, ranks, err) || !topologies(d, obj, u, err))
        return false;
    u->lo[0] = sm[0];
    u->hi[0] = sm[1];
    u->lo[1] = lg[0];
    u->hi[1] = lg[1];
    u->size_lo = sz[0];
    u->size_hi = sz[1];
    u->nodes_hi = (int)nodes[1];
    u->ranks_hi = (int)ranks[1];
    return true;
}

/* Octaves by which x lies beyond [lo, hi] (0 inside). */
static double octaves_out(double x, double lo, double hi)
{
    if (x > hi && hi > 0)
        return log2(x / hi);
    if (x < lo && x > 0)
        return log2(lo / x);
    return 0;
}

static bool measured_on(const CollUncert *u, const char *topo)
{
    for (int i = 0; i < u->ntopos; i++)
        if (strcmp(u->topos[i], topo) == 0)
            return true;
    return false;
}

void coll_band(const CollGroup *g, double bytes, double time_s, double *p10, double *p90, double *widen)
{
    const CollUncert *u = &g->p.unc;
    int k = bytes >= SMALL_LIMIT;
    double w = 1 + WIDEN_SIZE * octaves_out(bytes, u->size_lo, u->size_hi) +
               WIDEN_SCALE * fmax(octaves_out(g->nnodes, 1, u->nodes_hi), octaves_out(g->n, 1, u->ranks_hi)) +
               (measured_on(u, topo_name(g->t)) ? 0 : WIDEN_TOPO);
    /* a residual r = log(predicted / measured): measured = predicted / e^r, so
     * the low end of the measurement comes from the high end of r */
    double lo = fmin(u->lo[k], 0) * w, hi = fmax(u->hi[k], 0) * w;
    *p10 = time_s * exp(-hi);
    *p90 = time_s * exp(-lo);
    if (widen)
        *widen = w;
}
