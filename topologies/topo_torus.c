/* Tori: ring (a 1-D torus of GPUs), torus2d and torus3d (TPU-style chips,
 * reshaped to TopoOptions.nodes hosts).  Chip N sits at x + X*y + X*Y*z; each
 * chip's links come in dimension order, the positive way first, then the
 * negative way where the ring is long enough to need both (topo_route.c
 * computes link ids from that layout). */
#include "topo_internal.h"

#include <math.h>

/* Links per chip and dimension (dslots), their offset among a chip's links
 * (doff), and the longest dimension-order route. */
static void set_torus_layout(Topo *t)
{
    t->per_chip = 0;
    for (int k = 0; k < t->ndims; k++) {
        int d = t->dims[k];
        t->dslots[k] = d >= 3 && t->bidir ? 2 : d >= 2 ? 1 : 0; /* a ring of 2 needs one link each way */
        t->doff[k] = t->per_chip;
        t->per_chip += t->dslots[k];
    }
    t->max_route = 0;
    for (int k = 0; k < t->ndims; k++)
        t->max_route += t->dslots[k] == 2 ? t->dims[k] / 2 : t->dims[k] - 1;
}

/* The chips ("gpuN", "chipN"), then each chip's links: chip r's link j has id
 * r * per_chip + j. */
static void build_torus_links(Topo *t, const char *prefix, const TopoLinkSpec *s)
{
    for (int r = 0; r < t->nranks; r++)
        topo_add_vertexf(t, "%s%d", prefix, r);
    int stride[3] = {1, t->dims[0], t->dims[0] * (t->ndims > 1 ? t->dims[1] : 1)};
    for (int r = 0; r < t->nranks; r++) {
        for (int k = 0; k < t->ndims; k++) {
            int d = t->dims[k], x = (r / stride[k]) % d;
            if (t->dslots[k] >= 1)
                topo_add_link(t, r, r + (((x + 1) % d) - x) * stride[k], s);
            if (t->dslots[k] == 2)
                topo_add_link(t, r, r + (((x + d - 1) % d) - x) * stride[k], s);
        }
    }
}

bool topo_build_ring(Topo *t, const TopoCtx *c, GError **err)
{
    static const char *const keys[] = {"ranks_per_node", "nodes", "link", "bidirectional", NULL};
    long nodes, rpn;
    TopoLinkSpec s;
    t->bidir = true;
    if (!topo_check_family_keys(c, keys, err) || !topo_get_nodes_rpn(c, 0, &nodes, &rpn, err) ||
        !sim_json_get_bool(c->doc, c->root, "bidirectional", &t->bidir, err) ||
        !topo_parse_spec(c->doc, c->root, "link", TOPO_LINK_NVLINK, &s, err))
        return false;
    t->fam = TOPO_ROUTE_TORUS;
    t->nnodes = (int)nodes;
    t->rpn = (int)rpn;
    t->nranks = t->nnodes * t->rpn;
    t->ndims = 1;
    t->dims[0] = t->nranks;
    set_torus_layout(t);
    build_torus_links(t, "gpu", &s);
    return true;
}

/* Splits n chips into `nd` dimensions as close to equal as the divisors allow,
 * largest first, so that a scaled pod stays roughly square/cubic. */
static void factor_dims(long n, int nd, int *dims)
{
    if (nd == 1) {
        dims[0] = (int)n;
        return;
    }
    double root = pow((double)n, 1.0 / nd);
    long a = 1;
    for (long d = 1; d <= (long)(root + 1e-9); d++)
        if (n % d == 0)
            a = d;
    factor_dims(n / a, nd - 1, dims);
    dims[nd - 1] = (int)a;
    /* keep descending order */
    for (int i = nd - 1; i > 0 && dims[i] > dims[i - 1]; i--) {
        int tmp = dims[i];
        dims[i] = dims[i - 1];
        dims[i - 1] = tmp;
    }
}

static bool build_torus(Topo *t, const TopoCtx *c, int nd, GError **err)
{
    static const char *const keys[] = {"dims", "ranks_per_node", "link", NULL};
    long rpn = 1;
    TopoLinkSpec s;
    if (!topo_check_family_keys(c, keys, err) ||
        !sim_json_get_int(c->doc, c->root, "ranks_per_node", false, 1, TOPO_MAX_RANKS, &rpn, err) ||
        !topo_parse_spec(c->doc, c->root, "link", TOPO_LINK_ICI, &s, err))
        return false;
    const cJSON *dims = cJSON_GetObjectItemCaseSensitive(c->root, "dims");
    if (!cJSON_IsArray(dims) || cJSON_GetArraySize(dims) != nd) {
        sim_json_error(c->doc, dims ? dims : c->root, err, "\"dims\" must be an array of %d positive integers", nd);
        return false;
    }
    int64_t chips = 1;
    int i = 0;
    for (const cJSON *d = dims->child; d; d = d->next, i++) {
        if (!cJSON_IsNumber(d) || d->valuedouble < 1 || d->valuedouble > TOPO_MAX_RANKS ||
            d->valuedouble != floor(d->valuedouble)) {
            sim_json_error(c->doc, d, err, "\"dims\" must be an array of %d positive integers", nd);
            return false;
        }
        t->dims[i] = (int)d->valuedouble;
        chips *= t->dims[i];
        if (chips > TOPO_MAX_RANKS) {
            sim_json_error(c->doc, dims, err, "the torus has more than %d chips", TOPO_MAX_RANKS);
            return false;
        }
    }
    if (chips % rpn != 0) {
        sim_json_error(c->doc, dims, err, "%lld chips cannot be split into hosts of %ld", (long long)chips, rpn);
        return false;
    }
    long nodes = (long)(chips / rpn);
    if (!topo_opt_nodes(c, &nodes, err) || !topo_check_ranks(c, nodes, rpn, err))
        return false;
    if (nodes * rpn != chips) {
        chips = nodes * rpn;
        factor_dims((long)chips, nd, t->dims);
    }
    t->fam = TOPO_ROUTE_TORUS;
    t->ndims = nd;
    t->bidir = true;
    t->rpn = (int)rpn;
    t->nnodes = (int)nodes;
    t->nranks = (int)chips;
    set_torus_layout(t);
    build_torus_links(t, "chip", &s);
    return true;
}

int topo_torus_dims(const Topo *t, int dims[3])
{
    if (t->fam != TOPO_ROUTE_TORUS || t->ndims < 2) /* a ring is a 1-D torus of GPUs, not a TPU torus */
        return 0;
    for (int k = 0; k < 3; k++)
        dims[k] = k < t->ndims ? t->dims[k] : 1;
    return t->ndims;
}

bool topo_build_torus2d(Topo *t, const TopoCtx *c, GError **err)
{
    return build_torus(t, c, 2, err);
}

bool topo_build_torus3d(Topo *t, const TopoCtx *c, GError **err)
{
    return build_torus(t, c, 3, err);
}
