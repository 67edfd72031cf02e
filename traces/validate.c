/* Validation's predicted side: each run of measured rows predicted with the
 * collective model on the topology (the group of its ranks, a sendrecv as a
 * pair); the errors' summaries, JSON and plot are validate_out.c's. */
#include "validate_measured.h"
#include "collective.h"
#include "mpi_model.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>


static const int op_map[] = {
    [NCCLTESTS_ALLREDUCE] = COLL_ALLREDUCE, [NCCLTESTS_REDUCESCATTER] = COLL_REDUCESCATTER,
    [NCCLTESTS_ALLGATHER] = COLL_ALLGATHER, [NCCLTESTS_BROADCAST] = COLL_BROADCAST,
    [NCCLTESTS_REDUCE] = COLL_REDUCE,       [NCCLTESTS_ALLTOALL] = COLL_ALLTOALL,
};


static const char *op_label(NcclTestsOp op)
{
    return op == NCCLTESTS_SENDRECV ? "sendrecv" : coll_op_name(op_map[op]);
}


/* The topology rank ids of the trace's ranks (scaled to its node count where
 * the family allows), filling each node's first ranks. */
static int *rank_ids(const char *topology, const Measured *m, Topo **topo, GError **err)
{
    TopoOptions topt = {.nodes = 0};
    *topo = topo_load(topology, &topt, err);
    if (*topo && topo_num_nodes(*topo) != m->hosts) {
        topo_free(*topo);
        topt.nodes = m->hosts;
        *topo = topo_load(topology, &topt, err);
    }
    if (!*topo)
        return NULL;
    int tppn = topo_ranks_per_node(*topo), rph = m->ranks_per_host;
    if (m->hosts_unnamed && m->ranks > tppn) {
        g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "%s: %d ranks, more than one node of topology %s holds (%d), and the "
                    "trace names no hosts: give the run's node count with --nodes", m->name, m->ranks, topo_name(*topo), tppn);
        return NULL;
    }
    if (rph > tppn || m->hosts * rph < m->ranks) {
        g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "%s: %d ranks on %d host%s do not fit topology %s (%d node%s of %d)",
                    m->name, m->ranks, m->hosts, m->hosts == 1 ? "" : "s", topo_name(*topo), topo_num_nodes(*topo),
                    topo_num_nodes(*topo) == 1 ? "" : "s", tppn);
        return NULL;
    }
    int *ids = g_new(int, m->ranks);
    for (int i = 0; i < m->ranks; i++)
        ids[i] = (i / rph) * tppn + i % rph;
    return ids;
}

/* The group the rows are predicted on.  A sendrecv is one message between two
 * ranks: for nccl-tests' sendrecv_perf (every rank sends to the next one at
 * once) the slowest neighbours, the pair across the first node boundary when
 * there are several nodes. */
static CollGroup *group_for(const ValidateOptions *o, Measured *m, bool sendrecv, Topo **topo, GError **err)
{
    int *ids = rank_ids(o->topology, m, topo, err);
    if (!ids)
        return NULL;
    int n = m->ranks;
    if (sendrecv) {
        if (n < 2) {
            g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "%s: a sendrecv needs 2 ranks, the trace has %d", m->name, n);
            g_free(ids);
            return NULL;
        }
        int first = m->hosts > 1 ? m->ranks_per_host - 1 : 0;
        int pair[2] = {ids[first], ids[first + 1]};
        memcpy(ids, pair, sizeof pair);
        n = 2;
    }
    CollGroup *grp = o->param_set ? coll_group_new_with(*topo, ids, n, o->param_set, err)
                                  : coll_group_new(*topo, ids, n, o->params, err);
    g_free(ids);
    if (grp) {
        coll_group_set_gpus_per_thread(grp, m->gpus_per_thread);
        int lib = o->nccl_library ? coll_library_parse(o->nccl_library) : m->nccl_library;
        coll_group_set_library(grp, lib >= 0 ? (CollLibrary)lib : coll_library_default(*topo));
        m->pub.nccl_library = coll_library_name(coll_group_library(grp));
        m->pub.nccl_version = o->nccl_version > 0 ? o->nccl_version : m->nccl_version;
        coll_group_set_nccl_version(grp, m->pub.nccl_version);
        coll_group_set_launch_waits(grp, m->launch_waits);
        coll_group_set_datatype(grp, m->datatype);
        coll_group_set_fabric(grp, true);
    }
    return grp;
}

/* What a sendrecv row's measured and predicted times are. */
static const char *sendrecv_definition(const Measured *m)
{
    switch (m->metric) {
    case OSU_BANDWIDTH:
        return "osu_bw: the time of one window of 64 messages, 64 x size / bandwidth; predicted as 64 messages back "
               "to back between the two ranks, the latency paid once (the MPI model runs each message's software "
               "under the previous one's DMA; the NCCL model sends one message of 64 x size)";
    case OSU_BIBANDWIDTH:
        return "osu_bibw: the time of one window of 64 messages each way, 2 x 64 x size / bandwidth; predicted as "
               "osu_bw's window with each direction on its own links (the MPI model: each rank's core also "
               "receives, so pays the per-message software twice)";
    case OSU_LATENCY:
        break;
    }
    return "one-way time of one message of the size (osu_latency: half the round trip; sendrecv_perf: every rank "
           "sends to the next at once), predicted as a message between two ranks (the pair across a node boundary "
           "when there are several nodes)";
}

/* The model number in `s` (upper case, in `out`), or false: a word (between
 * spaces, '-', '_', '/', '.') of 1-3 letters, 3 digits, at most 2 letters. */
static bool chip_model(const char *s, char out[16])
{
    const char *base = strrchr(s, '/'); /* a file's name, not its folders */
    s = base ? base + 1 : s;
    while (*s) {
        size_t n = strcspn(s, " -_/.");
        size_t a = 0, d = 0, b = 0;
        while (a < n && g_ascii_isalpha(s[a]))
            a++;
        while (a + d < n && g_ascii_isdigit(s[a + d]))
            d++;
        while (a + d + b < n && g_ascii_isalpha(s[a + d + b]))
            b++;
        if (a >= 1 && a <= 3 && d == 3 && b <= 2 && a + d + b == n) {
            for (size_t i = 0; i < n; i++)
                out[i] = g_ascii_toupper(s[i]);
            out[n] = 0;
            return true;
        }
        s += n;
        s += *s != 0;
    }
    return false;
}

/* GH200 and GB200 are a Grace CPU with a Hopper or Blackwell GPU (NVIDIA's
 * GH200 and GB200 datasheets): their generation letter, else 0. */
static char superchip_gen(const char *m)
{
    return m[0] == 'G' && (m[1] == 'H' || m[1] == 'B') && g_ascii_isdigit(m[2]) ? m[1] : 0;
}

bool validate_device_differs(const char *device, const char *accelerator)
{
    char d[16], a[16];
    if (!device || !accelerator || !chip_model(device, d) || !chip_model(accelerator, a))
        return false;
    if (strcmp(d, a) == 0)
        return false;
    char gd = superchip_gen(d), ga = superchip_gen(a);
    if (gd || ga)
        return (gd ? gd : d[0]) != (ga ? ga : a[0]);
    return true;
}

/* The public view of `m`, as far as its prediction got. */
static void publish(Measured *m)
{
    ValidateRun *p = &m->pub;
    p->trace = m->name;
    p->run = m->run;
    p->note = m->note;
    p->ranks = m->ranks;
    p->nodes = m->hosts;
    p->ranks_from = m->ranks_from;
    p->topology = m->topology;
    p->library = m->library;
    p->device = m->device;
    p->accelerator = m->accelerator;
    p->env_algo = m->env_algo;
    p->env_proto = m->env_proto;
    p->wrong_rows = m->wrong_rows;
    p->rows = m->out ? (const ValidateRow *)(void *)m->out->data : NULL;
    p->n_rows = m->out ? m->out->len : 0;
}

/* Two ranks of one node under Open MPI's pml cm: the ofi MTL sends every
 * message through its one provider, which is the NICs' (cm's priority 25
 * over ob1's 20 wherever the MTL opens; CSCS's Alps images also exclude the
 * shared-memory btl, OMPI_MCA_btl="^tcp,ofi,vader,openib" in
 * eth-cscs/cray-network-stack's omb-ompi-cxi.toml), each rank on the NIC
 * nearest to it: the pair costs what two ranks on two nodes cost. The pml
 * is the one the two-node model of the same topology runs (its NICs'
 * transport, or the trace's '# pml:'); on ob1 or ucx `mm` stays. */
static MpiModel *cm_pair_on_one_node(const ValidateOptions *o, const Measured *m, MpiModel *mm, Topo **topo)
{
    TopoOptions topt = {.nodes = 2};
    GError *e = NULL;
    Topo *t2 = topo_load(o->topology, &topt, &e);
    MpiModel *m2 = t2 && topo_num_nodes(t2) >= 2
                       ? mpi_model_new(t2, 2, 1, MPI_LIB_OPENMPI,
                                       o->params && mpi_params_is_overlay(o->params) ? o->params : NULL, &e)
                       : NULL;
    bool ok = m2 && (!m->libfabric || mpi_model_set_libfabric_version(m2, m->libfabric)) &&
              (!m->pml || mpi_model_set_pml(m2, m->pml));
    g_clear_error(&e); /* a topology that cannot take two nodes: shared memory, as before */
    if (!ok || !mpi_model_platform(m2)->pml_cm) {
        if (m2)
            mpi_model_free(m2);
        if (t2)
            topo_free(t2);
        return mm;
    }
    mpi_model_free(mm);
    topo_free(*topo);
    *topo = t2;
    return m2;
}

/* The MPI model for the run: the library from --mpi-library, else the
 * trace's header, else Open MPI (said in the report). */
static MpiModel *mpi_for(const ValidateOptions *o, Measured *m, Topo **topo, GError **err)
{
    if (o->algo != COLL_ALGO_AUTO || o->proto != COLL_PROTO_AUTO) {
        g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "%s: --algo and --proto name NCCL's algorithms; the MPI model "
                    "runs what the MPI library selects (or give --library nccl)", m->name);
        return NULL;
    }
    int *ids = rank_ids(o->topology, m, topo, err);
    if (!ids)
        return NULL;
    g_free(ids);
    if (m->hosts * m->ranks_per_host != m->ranks) {
        g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "%s: the MPI model needs the same number of ranks on every node "
                    "(%d ranks on %d nodes)", m->name, m->ranks, m->hosts);
        return NULL;
    }
    int lib = o->mpi_library ? mpi_lib_parse(o->mpi_library) : m->mpi_lib;
    const char *from = o->mpi_library ? "--mpi-library"
                       : m->mpi_lib >= 0 ? m->mpi_lib_from
                                         : "neither the headers nor the file name say which; default";
    if (lib < 0)
        lib = MPI_LIB_OPENMPI;
    bool trace_version = !o->mpi_library && m->mpi_lib >= 0 && m->mpi_version;
    bool derived = trace_version && g_ascii_isalpha(m->mpi_version[0]); /* "Intel MPI 2021.9" */
    g_free(m->library); /* calibration predicts a run again and again */
    m->library = derived ? g_strdup_printf("%s's selection for %s (%s)", mpi_lib_name((MpiLib)lib), m->mpi_version, from)
                         : g_strdup_printf("%s%s%s (%s)", mpi_lib_name((MpiLib)lib), trace_version ? " " : "",
                                           trace_version ? m->mpi_version : "", from);
    m->pub.library = m->library;
    int nodes = m->sendrecv_pair ? (m->hosts > 1 ? 2 : 1) : m->hosts;
    int ppn = m->sendrecv_pair ? (m->hosts > 1 ? 1 : 2) : m->ranks_per_host;
    MpiModel *mm = mpi_model_new(*topo, nodes, ppn, (MpiLib)lib,
                                 o->params && mpi_params_is_overlay(o->params) ? o->params : NULL, err);
    if (mm && m->libfabric && !mpi_model_set_libfabric_version(mm, m->libfabric)) { /* over the topology's */
        g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "%s: '# libfabric: %s' is not a version (e.g. 2.2.0)", m->name,
                    m->libfabric);
        g_clear_pointer(&mm, mpi_model_free);
    }
    if (mm && m->pml && !mpi_model_set_pml(mm, m->pml)) { /* over the transport's */
        g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "%s: '# pml: %s' is not cm, ob1 or ucx", m->name, m->pml);
        g_clear_pointer(&mm, mpi_model_free);
    }
    if (mm && m->sendrecv_pair && nodes == 1 && lib == MPI_LIB_OPENMPI)
        mm = cm_pair_on_one_node(o, m, mm, topo);
    for (int i = 0; mm && o->mpi_values && i < MPI_NUM_PARAMS; i++)
        mpi_model_set_param(mm, i, o->mpi_values[i]);
    return mm;
}

/* Every row of the run predicted with the MPI model. */
static bool predict_mpi_rows(const ValidateOptions *o, Measured *m, bool sendrecv, int *skipped, GError **err)
{
    Topo *topo = NULL;
    m->sendrecv_pair = sendrecv;
    MpiModel *mm = mpi_for(o, m, &topo, err);
    bool ok = mm != NULL;
    if (ok)
        m->topology = g_strdup(topo_name(topo));
    for (guint i = 0; ok && i < m->rows->len; i++) {
        const MRow *r = &g_array_index(m->rows, MRow, i);
        if (!(r->time_s > 0) || !(r->size > 0)) {
            (*skipped)++;
            continue;
        }
        MpiCost c = {0, "p2p"};
        if (sendrecv && m->metric == OSU_BIBANDWIDTH)
            c.time_s = mpi_p2p_bidir_time(mm, r->size, OSU_WINDOW);
        else if (sendrecv)
            c.time_s = mpi_p2p_time(mm, r->size, m->metric != OSU_LATENCY ? OSU_WINDOW : 1);
        else if (!mpi_cost(mm, op_map[r->op], r->size, &c)) {
            g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "%s: the MPI model does not cover %s", m->name,
                        op_label(r->op));
            ok = false;
            break;
        }
        /* no calibration data behind the MPI model's band yet: the wide
         * default of parameters without a measured basis (coll_params.c) */
        ValidateRow row = {r->size, r->time_s, c.time_s, fabs(c.time_s - r->time_s) / r->time_s * 100,
                           op_label(r->op), c.algo, "mpi", c.time_s * exp(-0.5), c.time_s * exp(0.5), 0, NULL, NULL};
        g_array_append_val(m->out, row);
    }
    mpi_model_free(mm);
    topo_free(topo);
    return ok;
}

/* Predicts every row of one run into m->out. */
bool validate_predict_run(const ValidateOptions *o, Measured *m, GError **err)
{
    NcclTestsOp first = m->rows->len ? g_array_index(m->rows, MRow, 0).op : NCCLTESTS_UNKNOWN;
    bool mixed = false;
    for (guint i = 0; i < m->rows->len; i++)
        mixed |= g_array_index(m->rows, MRow, i).op != first;
    bool sendrecv = first == NCCLTESTS_SENDRECV && !mixed;
    ValidateRun *p = &m->pub;
    p->mixed = mixed;
    p->op = mixed ? "mixed" : op_label(first);
    p->sendrecv = sendrecv ? sendrecv_definition(m) : NULL;
    g_clear_pointer(&m->topology, g_free);
    if (m->out)
        g_array_free(m->out, TRUE);
    if (o->library == VALIDATE_LIB_MPI || (o->library == VALIDATE_LIB_AUTO && m->osu)) {
        m->out = g_array_new(FALSE, FALSE, sizeof(ValidateRow));
        int skipped = 0;
        bool ok = predict_mpi_rows(o, m, sendrecv, &skipped, err);
        if (ok && m->out->len == 0) {
            g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "%s: no row with a positive size and time", m->name);
            ok = false;
        }
        if (ok)
            p->skipped = skipped;
        publish(m);
        if (ok) {
            p->errors = validate_errors_of(p->rows, p->n_rows);
            p->done = true;
        }
        return ok;
    }
    /* Calibration predicts a run many times: the group is kept while only
     * parameters that do not shape it change. */
    if (!m->grp || !o->param_set || !coll_group_set_params(m->grp, o->param_set)) {
        g_clear_pointer(&m->grp, coll_group_free);
        g_clear_pointer(&m->topo, topo_free);
        m->grp = group_for(o, m, sendrecv, &m->topo, err);
    }
    CollGroup *grp = m->grp;
    Topo *topo = m->topo;
    bool ok = grp != NULL;
    if (ok) {
        coll_group_set_allowed(grp, m->env_algos, m->env_protos); /* as the run's environment left NCCL's tuner */
        m->topology = g_strdup(topo_name(topo));
        g_free(m->accelerator);
        m->accelerator = g_strdup(topo_accelerator(topo));
    }
    m->out = g_array_new(FALSE, FALSE, sizeof(ValidateRow));
    double window = sendrecv && m->metric != OSU_LATENCY ? OSU_WINDOW : 1;
    int skipped = 0;
    for (guint i = 0; ok && i < m->rows->len; i++) {
        const MRow *r = &g_array_index(m->rows, MRow, i);
        if (!(r->time_s > 0) || !(r->size > 0)) { /* a zero time or size has no relative error */
            skipped++;
            continue;
        }
        /* a message between two ranks is a broadcast of two, at NCCL's send
         * protocol unless the options force one */
        CollOp op = sendrecv ? COLL_BROADCAST : op_map[r->op];
        CollCost c;
        bool p2p = sendrecv && o->algo == COLL_ALGO_AUTO && o->proto == COLL_PROTO_AUTO;
        double bytes = r->size * window;
        CollAlgo algo = o->algo;
        CollProto proto = o->proto;
        if (o->as_logged && r->ran_algo) { /* what NCCL ran there, as its log says */
            algo = coll_algo_parse(r->ran_algo);
            proto = coll_proto_parse(r->ran_proto);
        }
        if (!(p2p ? coll_p2p_cost(grp, bytes, &c) : coll_cost(grp, op, algo, proto, bytes, &c))) {
            /* the environment bound the choice only where the options left it free */
            bool env_bound = (o->algo == COLL_ALGO_AUTO && m->env_algos) || (o->proto == COLL_PROTO_AUTO && m->env_protos);
            if (algo == COLL_ALGO_AUTO && m->env_algos) /* why the first the run's NCCL_ALGO left cannot */
                for (int a = 0; a < COLL_NUM_ALGOS && algo == COLL_ALGO_AUTO; a++)
                    algo = m->env_algos >> a & 1 ? (CollAlgo)a : algo;
            char *logged = o->as_logged && r->ran_algo
                               ? g_strdup_printf(" (NCCL's log says it ran that at %.0f bytes)", r->size)
                           : env_bound
                               ? g_strdup_printf(" (what the run's NCCL_ALGO=%s, NCCL_PROTO=%s leave it; --algo and "
                                                 "--proto choose for it)",
                                                 m->env_set[0] ? SIM_ECHO(m->env_set[0]) : "(unset)",
                                                 m->env_set[1] ? SIM_ECHO(m->env_set[1]) : "(unset)")
                               : g_strdup("");
            g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "%s: %s/%s cannot run %s on %s%s: %s", m->name,
                        coll_algo_name(algo), coll_proto_name(proto), op_label(r->op), topo_name(topo), logged,
                        coll_why_not(grp, op, algo, proto));
            g_free(logged);
            ok = false;
            break;
        }
        ValidateRow row = {r->size, r->time_s, c.time_s, fabs(c.time_s - r->time_s) / r->time_s * 100,
                           op_label(r->op), coll_algo_name(c.algo), coll_proto_name(c.proto), 0, 0, c.fabric_factor,
                           r->ran_algo, r->ran_proto};
        coll_band(grp, bytes, c.time_s, &row.p10_s, &row.p90_s, NULL);
        g_array_append_val(m->out, row);
    }
    if (ok)
        p->skipped = skipped;
    if (ok && m->out->len == 0) {
        g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "%s: no row with a positive size and time", m->name);
        ok = false;
    }
    publish(m);
    if (ok) {
        p->errors = validate_errors_of(p->rows, p->n_rows);
        p->done = true;
    }
    if (!o->param_set) { /* no calibration: nothing to keep */
        g_clear_pointer(&m->grp, coll_group_free);
        g_clear_pointer(&m->topo, topo_free);
    }
    return ok;
}

Validation *validate_new(const ValidateOptions *o)
{
    Validation *v = g_new0(Validation, 1);
    v->o = *o;
    v->runs = g_ptr_array_new_with_free_func(validate_measured_free);
    return v;
}

void validate_free(Validation *v)
{
    if (!v)
        return;
    g_ptr_array_free(v->runs, TRUE);
    g_free(v);
}

bool validate_trace(Validation *v, const char *path, GError **err)
{
    guint first = v->runs->len;
    bool ok = validate_load_measured(path, v->o.op, v->o.ranks, v->o.nodes, v->runs, err);
    for (guint i = first; i < v->runs->len; i++)
        publish(v->runs->pdata[i]);
    for (guint i = first; ok && i < v->runs->len; i++)
        ok = validate_predict_run(&v->o, v->runs->pdata[i], err);
    return ok;
}

bool validate_repredict(Validation *v, const CollParams *p, GError **err)
{
    ValidateOptions o = v->o;
    if (p)
        o.param_set = p;
    for (guint i = 0; i < v->runs->len; i++)
        if (!validate_predict_run(&o, v->runs->pdata[i], err))
            return false;
    return true;
}

bool validate_repredict_mpi(Validation *v, const double *values, GError **err)
{
    ValidateOptions o = v->o;
    o.mpi_values = values;
    for (guint i = 0; i < v->runs->len; i++)
        if (!validate_predict_run(&o, v->runs->pdata[i], err))
            return false;
    return true;
}

size_t validate_n_runs(const Validation *v) { return v->runs->len; }

const ValidateRun *validate_run(const Validation *v, size_t i)
{
    return i < v->runs->len ? &((const Measured *)v->runs->pdata[i])->pub : NULL;
}

size_t validate_predictions(const Validation *v, double *out, size_t max)
{
    size_t k = 0;
    for (size_t i = 0; i < validate_n_runs(v); i++) {
        const ValidateRun *r = validate_run(v, i);
        for (size_t j = 0; j < r->n_rows && k < max; j++)
            out[k++] = r->rows[j].predicted_s;
    }
    return k;
}
