/* The collective model's public face: op and protocol names, and the
 * dispatch of coll_cost, coll_why_not, coll_flow_count and coll_append to
 * the table of algorithms (coll_algos.c), with what applies to all of them:
 * the protocols a group allows, the one-rank case, the tuner's choice and
 * the host launch cost (serial per thread, overlapped with the GPUs).  The algorithms live in coll_<family>.c. */
#include "coll_internal.h"

#include <stdlib.h>


static const char *op_names[] = {"allreduce", "reducescatter", "allgather", "broadcast", "reduce", "alltoall"};
static const char *proto_names[] = {"ll", "ll128", "simple"};

const char *coll_op_name(CollOp op) { return op >= 0 && op < COLL_NUM_OPS ? op_names[op] : "?"; }
const char *coll_proto_name(CollProto p) { return p == COLL_PROTO_AUTO ? "auto" : p >= 0 && p < COLL_NUM_PROTOS ? proto_names[p] : "?"; }

/* allreduce, all_reduce, all-reduce, AllReduce: the spellings of NCCL,
 * nccl-tests and MPI all name it. */
int coll_op_parse(const char *s)
{
    char key[32];
    size_t n = 0;
    for (; s && *s && n + 1 < sizeof key; s++)
        if (*s != '_' && *s != '-')
            key[n++] = *s;
    if (!s || *s)
        return -2;
    key[n] = 0;
    for (int i = 0; i < COLL_NUM_OPS; i++)
        if (!g_ascii_strcasecmp(key, op_names[i]))
            return i;
    return -2;
}


int coll_proto_parse(const char *s)
{
    if (!g_ascii_strcasecmp(s, "auto"))
        return COLL_PROTO_AUTO;
    for (int i = 0; i < COLL_NUM_PROTOS; i++)
        if (!g_ascii_strcasecmp(s, proto_names[i]))
            return i;
    return -2;
}

double coll_busbw_factor(CollOp op, int n)
{
    if (n <= 1)
        return 1;
    switch (op) {
    case COLL_ALLREDUCE: return 2.0 * (n - 1) / n;
    case COLL_REDUCESCATTER:
    case COLL_ALLGATHER:
    case COLL_ALLTOALL: return (double)(n - 1) / n;
    default: return 1;
    }
}
/* ---------------- NCCL versions ---------------- */

void coll_group_set_nccl_version(CollGroup *g, int code)
{
    g->nccl_version = code > 0 ? code : 0;
    coll_rccl_apply(g); /* the version's latency tables (and a new tuner twin) */
}
int coll_group_nccl_version(const CollGroup *g) { return g->nccl_version; }

/* A whole number in [0, 99] at *s (advanced past it), or -1. */
static long version_part(const char **s)
{
    if (!g_ascii_isdigit(**s))
        return -1;
    long v = 0;
    while (g_ascii_isdigit(**s) && v <= 99)
        v = v * 10 + (*(*s)++ - '0');
    return v <= 99 ? v : -1;
}

/* "2.18.3+cuda12.2" -> 21803; a bare number is a version code as NCCL prints
 * it: major*10000 + minor*100 + patch since 2.9 (21803), major*1000 + minor*100
 * + patch before (2803 for 2.8.3). */
int coll_nccl_version_parse(const char *s)
{
    if (!s)
        return -1;
    while (*s == ' ' || *s == 'v' || *s == 'V')
        s++;
    size_t digits = strspn(s, "0123456789");
    if (digits >= 4 && digits <= 6 && (s[digits] == 0 || s[digits] == ' ')) {
        long code = strtol(s, NULL, 10);
        return (int)(code < 10000 ? code / 1000 * 10000 + code % 1000 : code);
    }
    long major = version_part(&s), minor = -1, patch = 0;
    if (major < 0 || *s++ != '.' || (minor = version_part(&s)) < 0)
        return -1;
    if (*s == '.' && g_ascii_isdigit(s[1])) {
        s++;
        if ((patch = version_part(&s)) < 0)
            return -1;
    }
    if (*s && *s != '+' && *s != '-' && *s != ' ' && *s != ':')
        return -1;
    return (int)(major * 10000 + minor * 100 + patch);
}

int coll_newest_version(int lib)
{
    /* collectives.json "source": NVIDIA/nccl src/graph/tuning.cc read at every
     * tag to v2.30.3-1; RCCL's tables from ROCm/rocm-systems 03a89144, taken as
     * RCCL 2.28 ("rccl_from": "2.28", the newest there) */
    return lib == COLL_LIB_RCCL ? 22800 : 23000;
}

/* ---------------- closed form ---------------- */

/* NCCL has LL128 from 2.5.6 (nccl.since.ll128). */
static bool ll128_too_old(const CollGroup *g)
{
    return g->library == COLL_LIB_NCCL && !coll_version_has(g, g->p.ver_ll128);
}

static bool proto_allowed(const CollGroup *g, CollProto p)
{
    /* NCCL enables LL128 by default only over NVLink; across nodes where
     * GPU and NIC share a PCIe switch (tuning.cc: typeInter <= PATH_PXB; here
     * where the topology states "nic_path": "pxb", or ll128_multinode), and
     * on Hopper and later from 2.17 through PXN too
     * (tuning.cc: typeInter <= PATH_PXN when minCompCap >= 90), which every
     * Hopper node with GPUDirect RDMA has; never where the NIC hangs off the
     * host CPU (PATH_PHB: GH200, Slingshot blades). RCCL: off (rccl.ll128)
     * but across nodes where its architecture's table turns it on. */
    if (p == COLL_LL128 && ll128_too_old(g))
        return false;
    if (p == COLL_LL128 && g->library == COLL_LIB_NCCL && (g->allowed_protos >> COLL_LL128 & 1))
        return true; /* the run's NCCL_PROTO named it: on whatever the path (tuning.cc: a set flag, not the default's check) */
    if (g->library == COLL_LIB_RCCL && p == COLL_LL128) /* on one node its tuning rates LL128 as LL */
        return g->p.rccl.ll128 || (g->nnodes > 1 && coll_rccl_ll128(g));
    bool across = g->p.ll128_multinode || g->nic_on_switch ||
                  (g->gpu_gen >= GEN_HOPPER && coll_version_has(g, g->p.ver_ll128_hopper));
    return p != COLL_LL128 || (g->intra_hw == HW_NVLINK && (g->nnodes == 1 || (across && !g->nic_on_host)));
}

/* What the tuner cannot pick although the algorithm could run: RCCL has no
 * NVLS, NVLSTree or PAT kernels (its NCCL_NUM_ALGORITHMS is 6, without PAT,
 * and no AMD fabric reduces in its switches) and does not rate tree Simple
 * on one node of an 8-GPU mesh (tuning.cc line 365: gfx94 with every rank
 * on the node). */
static bool tuner_skips(const CollGroup *g, CollAlgo a, CollProto p)
{
    if (g->library != COLL_LIB_RCCL)
        return false;
    return a == COLL_NVLS || a == COLL_NVLS_TREE || a == COLL_PAT ||
           (a == COLL_TREE && p == COLL_SIMPLE && g->tuner && g->nnodes == 1);
}

/* Whether profile f holds for the group's NCCL version (the newest where
 * none is given) and GPUs. */
static bool profile_holds(const CollGroup *g, const CollNcclProfile *f)
{
    return (f->since == 0 || coll_version_has(g, f->since)) &&
           (f->before == 0 || (g->nccl_version > 0 && g->nccl_version < f->before)) && g->gpu_gen < f->gen_below;
}

/* What the NICs' transport stack leaves the tuner: its first profile that
 * holds, NULL if none: on one node the transport carries nothing, and
 * RCCL's stacks ship no environment here (a net plugin's holds for it). */
static const CollNcclProfile *transport_profile(const CollGroup *g)
{
    const CollTransport *tr = &g->p0.transport[g->transport];
    if (g->nnodes <= 1 || !tr->given)
        return NULL;
    for (int i = 0; i < tr->nprofiles; i++)
        if (profile_holds(g, &tr->profile[i]))
            return tr->profile[i].plugin || g->library == COLL_LIB_NCCL ? &tr->profile[i] : NULL;
    return NULL;
}

/* What the run's NCCL_ALGO / NCCL_PROTO (coll_group_set_allowed), else
 * that profile, keep from the tuner in `pass` (0: NCCL's algorithms; 1:
 * any, where none of them runs the op, which only a plugin's profile binds).
 * An algorithm or protocol asked for by name is run as asked, as NCCL_ALGO /
 * NCCL_PROTO set by hand would be. */
static bool profile_excludes(const CollGroup *g, const CollNcclProfile *f, int pass, CollAlgo algo, CollProto proto,
                             int a, int p)
{
    bool prof = f && (pass == 0 || f->plugin);
    unsigned algos = g->allowed_algos ? g->allowed_algos : prof ? f->algos : 0;
    unsigned protos = g->allowed_protos ? g->allowed_protos : prof ? f->protos : 0;
    return (algo == COLL_ALGO_AUTO && algos && !(algos & (1u << a))) ||
           (proto == COLL_PROTO_AUTO && protos && !(protos & (1u << p)));
}

/* `a` with protocol `p`; `fabric` divides the bandwidth the time is taken
 * at, not the tuner's rating (coll_fabric.c). */
static bool cost_one(const CollGroup *g, CollOp op, CollAlgo a, CollProto p, double bytes, double fabric,
                     CollCost *c)
{
    if (!proto_allowed(g, p))
        return false;
    c->fabric_factor = g->fabric ? fabric : 0;
    if (g->n == 1) {
        c->latency_s = 0;
        c->algbw_Bps = INFINITY;
        c->time_s = 0;
        c->algo = a;
        c->proto = p;
        return true;
    }
    const CollAlgoDesc *d = coll_algo_desc(a);
    c->tuner_algbw_Bps = 0;
    c->tuner_latency_s = 0;
    if (!d || !d->cost(g, op, p, bytes, c) || !(c->algbw_Bps > 0))
        return false;
    if (!(c->tuner_algbw_Bps > 0))
        c->tuner_algbw_Bps = c->algbw_Bps;
    if (g->tuner) { /* RCCL's tuning model rates it (coll_rccl.c) */
        CollCost r = {0};
        if (!d->cost(g->tuner, op, p, bytes, &r) || !(r.algbw_Bps > 0))
            return false;
        c->tuner_algbw_Bps = (r.tuner_algbw_Bps > 0 ? r.tuner_algbw_Bps : r.algbw_Bps) *
                             coll_rccl_tuner_correction(g, a, p, bytes);
        if (!(c->tuner_algbw_Bps > 0))
            return false; /* a zero factor: RCCL never rates it there */
        c->tuner_latency_s = r.tuner_latency_s > 0 ? r.tuner_latency_s : r.latency_s;
    }
    c->algbw_Bps /= fabric;
    /* Calls are issued back to back (nccl-tests' timed loop, a training
     * step's buckets): the host launches the next while the GPUs run this
     * one, so a call costs the longer of the two - unless each launch waits
     * for the GPUs (NCCL before 2.12, one thread on several GPUs). */
    c->time_s = c->latency_s + bytes / c->algbw_Bps;
    double host = coll_host_time(g);
    if (g->launch_waits) {
        c->latency_s += host;
        c->tuner_latency_s += c->tuner_latency_s > 0 ? host : 0;
        c->time_s += host;
    } else if (host > c->time_s) {
        /* the tuner rates the GPUs' time, not this floor (as a tuner
         * twin's rating, which never sees it) */
        if (!(c->tuner_latency_s > 0))
            c->tuner_latency_s = c->latency_s;
        c->latency_s += host - c->time_s;
        c->time_s = host;
    }
    c->algo = a;
    c->proto = p;
    return true;
}

/* What NCCL's tuner thinks `c` takes: its rating, not the time. */
static double tuner_time(const CollCost *c, double bytes)
{
    return (c->tuner_latency_s > 0 ? c->tuner_latency_s : c->latency_s) + bytes / c->tuner_algbw_Bps;
}

/* NCCL's and RCCL's sends and receives take no tuner: LL up to the p2p
 * threshold per peer where the environment leaves LL buffers
 * (collectives.json), Simple beyond. */
static CollProto p2p_proto(const CollGroup *g, double bytes_per_peer)
{
    const CollNcclProfile *env = transport_profile(g);
    bool ll = bytes_per_peer <= g->p.p2p_ll_threshold && proto_allowed(g, COLL_LL) &&
              !(env && env->protos && !(env->protos & (1u << COLL_LL)));
    return ll ? COLL_LL : COLL_SIMPLE;
}

bool coll_p2p_cost(const CollGroup *g, double bytes, CollCost *out)
{
    if (g->n != 2 || g->gpu_gen == GEN_NOT_NCCL) /* TPUs run no NCCL: their own choice */
        return coll_cost(g, COLL_BROADCAST, COLL_ALGO_AUTO, COLL_PROTO_AUTO, bytes, out);
    return coll_cost(g, COLL_BROADCAST, COLL_ALGO_AUTO, p2p_proto(g, bytes), bytes, out);
}

bool coll_cost(const CollGroup *g, CollOp op, CollAlgo algo, CollProto proto, double bytes, CollCost *out)
{
    bool found = false;
    CollCost best = {0};
    CollProto mp;
    if (algo == COLL_ALGO_AUTO && coll_rccl_msccl(g, op, bytes, &mp) && (proto == COLL_PROTO_AUTO || proto == mp) &&
        cost_one(g, op, COLL_DIRECT, mp, bytes, 1, out))
        return true; /* RCCL's MSCCL algorithm runs ahead of its tuner */
    if (proto == COLL_PROTO_AUTO && coll_rccl_multinode_proto(g, op, bytes, &mp) && coll_cost(g, op, algo, mp, bytes, out))
        return true; /* across nodes RCCL sets the protocol by size (coll_rccl.c) */
    const CollNcclProfile *env = transport_profile(g);
    if (proto == COLL_PROTO_AUTO && op == COLL_ALLTOALL && g->n > 1 && g->gpu_gen != GEN_NOT_NCCL)
        return coll_cost(g, op, algo, p2p_proto(g, bytes / g->n), bytes, out); /* sends and receives */
    /* auto: NCCL's choices first, within what the transport's environment
     * leaves it; an op none of them runs (a TPU's all-to-all) takes any */
    for (int pass = 0; pass < 2 && !found; pass++)
    for (int a = 0; a < COLL_NUM_ALGOS; a++) {
        if (algo != COLL_ALGO_AUTO ? a != (int)algo : pass == 0 && !coll_algo_desc(a)->tuner)
            continue;
        for (int p = 0; p < COLL_NUM_PROTOS; p++) {
            if (proto != COLL_PROTO_AUTO && p != (int)proto)
                continue;
            if (algo == COLL_ALGO_AUTO && tuner_skips(g, a, p))
                continue;
            if (profile_excludes(g, env, pass, algo, proto, a, p))
                continue;
            CollCost c = {0};
            if (cost_one(g, op, a, p, bytes, 1, &c) && (!found || tuner_time(&c, bytes) < tuner_time(&best, bytes))) {
                best = c;
                found = true;
            }
        }
    }
    if (!found)
        return false;
    /* the fabric slows what the tuner chose; it never sees it */
    double f = coll_fabric_factor(g, op, best.algo, best.proto);
    if (f > 1)
        cost_one(g, op, best.algo, best.proto, bytes, f, &best);
    else if (!(best.fabric_factor > 1)) /* direct and halving-doubling set their copies' own */
        best.fabric_factor = g->fabric ? f : 0; /* 1, or NAN: not routed */
    *out = best;
    return true;
}

const char *coll_why_not(const CollGroup *g, CollOp op, CollAlgo algo, CollProto proto)
{
    if (proto == COLL_LL128 && !proto_allowed(g, proto))
        return ll128_too_old(g) ? "NCCL has LL128 from 2.5"
               : g->nic_on_host && g->nnodes > 1
                   ? "LL128 does not run across nodes where the NICs hang off the host CPU (\"nic_path\": \"phb\")"
                   : "LL128 runs only over NVLink, across nodes where each GPU shares a PCIe switch with its NIC "
                     "(\"nic_path\": \"pxb\" in the topology) and on Hopper and later from NCCL 2.17";
    const CollAlgoDesc *d = coll_algo_desc(algo);
    return d ? d->why_not(g, op, proto) : "no algorithm can run it";
}

/* ---------------- flows ---------------- */

/* An algorithm that is not concrete (the caller's slip) is counted and built as the ring. */
static const CollAlgoDesc *desc_or_ring(CollAlgo a)
{
    const CollAlgoDesc *d = coll_algo_desc(a);
    return d ? d : &coll_ring_algo;
}

/* How many flows coll_append makes: the builders' loops counted without
 * building (each algorithm keeps its count in step with its builder).  Lets
 * callers refuse a decomposition that would not fit in memory before they
 * start one. */
int64_t coll_flow_count(const CollGroup *g, CollOp op, CollAlgo algo, CollProto proto, double bytes)
{
    if (g->n <= 1 || bytes < 0)
        return 0;
    return desc_or_ring(algo)->flow_count(g, op, proto, bytes);
}

/* coll_append, each flow also recorded where `record` is given. */
static int append(const CollGroup *g, SimGraph *graph, CollOp op, CollAlgo algo, CollProto proto, double bytes,
                  const int *deps, int ndeps, const char *label, GArray *record)
{
    CollBuilder b = {g,
                     graph,
                     label ? label : coll_op_name(op),
                     0,
                     g_array_new(FALSE, FALSE, sizeof(int)),
                     g_new(int, coll_route_cap(g)),
                     record};
    b.start = sim_graph_task(graph, b.label, SIM_NO_RESOURCE,
                             g->n > 1 && algo >= 0 && proto >= 0 ? sim_time_from_s(g->p.base[algo][proto]) : 0);
    for (int i = 0; i < ndeps; i++)
        sim_graph_depend(graph, deps[i], b.start);
    if (g->n > 1 && bytes >= 0)
        desc_or_ring(algo)->build(&b, op, proto, bytes);
    int end = sim_graph_task(graph, b.label, SIM_NO_RESOURCE, 0);
    sim_graph_depend(graph, b.start, end);
    for (guint i = 0; i < b.ends->len; i++)
        sim_graph_depend(graph, g_array_index(b.ends, int, i), end);
    g_array_free(b.ends, TRUE);
    g_free(b.links);
    return end;
}

int coll_append(const CollGroup *g, SimGraph *graph, CollOp op, CollAlgo algo, CollProto proto, double bytes,
                const int *deps, int ndeps, const char *label)
{
    return append(g, graph, op, algo, proto, bytes, deps, ndeps, label, NULL);
}

GArray *coll_flows_of(const CollGroup *g, CollOp op, CollAlgo algo, CollProto proto, double bytes)
{
    GArray *r = g_array_new(FALSE, FALSE, sizeof(CollFlowRec));
    SimGraph *graph = sim_graph_new();
    append(g, graph, op, algo, proto, bytes, NULL, 0, NULL, r);
    sim_graph_free(graph);
    return r;
}

void coll_net_build(const CollGroup *g, SimNet *net)
{
    for (int l = 0; l < topo_num_links(g->t); l++)
        sim_net_add_link(net, coll_link_cap(g, l), sim_time_from_s(topo_link_latency(g->t, l)));
}

double coll_simulate(const CollGroup *g, CollOp op, CollAlgo algo, CollProto proto, double bytes)
{
    if (coll_flow_count(g, op, algo, proto, bytes) > COLL_MAX_FLOWS)
        return NAN;
    SimEngine *e = sim_engine_new();
    SimNet *net = sim_net_new(e);
    SimGraph *graph = sim_graph_new();
    coll_net_build(g, net);
    coll_append(g, graph, op, algo, proto, bytes, NULL, 0, NULL);
    sim_time_t t = sim_graph_run(graph, e, net);
    sim_graph_free(graph);
    sim_net_free(net);
    sim_engine_free(e);
    if (t == SIM_TIME_NEVER) /* the network hit its work limit */
        return NAN;
    double s = sim_time_to_s(t);
    return g->launch_waits ? s + coll_host_time(g) : fmax(s, coll_host_time(g));
}

/* One thread launches the kernels of the GPUs it drives one after another
 * (nccl-tests -g N; threads and processes launch in parallel), each at the
 * hosts' own cost where the topology gives it. */
double coll_host_time(const CollGroup *g)
{
    if (g->n <= 1)
        return 0;
    double per_gpu = topo_host_launch(g->t) > 0 ? topo_host_launch(g->t) : g->p.launch_s;
    return per_gpu * g->gpus_per_thread;
}

double coll_group_host_time(const CollGroup *g) { return coll_host_time(g); }
void coll_group_set_launch_waits(CollGroup *g, bool waits) { g->launch_waits = waits; }
