/* Validation's measured side: a trace file (nccl-tests, rccl-tests, OSU,
 * OTF2) read into runs of measured rows in nccl-tests' conventions, the
 * collective settled with --op and the rank and node counts with --ranks and
 * --nodes (which fill in, never contradict). */
#include "validate_measured.h"
#include "collective.h"
#include "otf2trace.h"
#include "trace_text.h"

#include <math.h>
#include <string.h>

void validate_measured_free(gpointer p)
{
    Measured *m = p;
    g_free(m->name);
    g_free(m->note);
    g_free(m->topology);
    coll_group_free(m->grp);
    topo_free(m->topo);
    g_free(m->mpi_version);
    g_free(m->libfabric);
    g_free(m->pml);
    g_free(m->library);
    g_free(m->device);
    g_free(m->datatype);
    g_free(m->env_algo);
    g_free(m->env_proto);
    g_free(m->env_set[0]);
    g_free(m->env_set[1]);
    g_free(m->accelerator);
    if (m->out)
        g_array_free(m->out, TRUE);
    if (m->rows)
        g_array_free(m->rows, TRUE);
    g_free(m);
}

static Measured *measured_new(const char *name, int run)
{
    Measured *m = g_new0(Measured, 1);
    m->name = g_strdup(name);
    m->run = run;
    m->rows = g_array_new(FALSE, FALSE, sizeof(MRow));
    m->gpus_per_thread = 1;
    m->ranks_from = "the trace";
    m->mpi_lib = -1;
    m->nccl_library = -1;
    return m;
}


/* The trace's op, or --op where it says none; --op never contradicts it. */
static bool pick_op(const char *name, NcclTestsOp said, int op_override, NcclTestsOp *op, GError **err)
{
    *op = said;
    if (said == NCCLTESTS_UNKNOWN && op_override >= 0)
        *op = (NcclTestsOp)op_override;
    if (said != NCCLTESTS_UNKNOWN && op_override >= 0 && op_override != (int)said) {
        g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "%s: the trace measured %s, not %s", name,
                    nccltests_op_name(said), nccltests_op_name((NcclTestsOp)op_override));
        return false;
    }
    if (*op == NCCLTESTS_UNKNOWN) {
        g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "%s: cannot tell which collective this trace measured (use --op)",
                    name);
        return false;
    }
    return true;
}

/* Adds `what` to the run's note. */
static void add_note(Measured *m, char *what)
{
    char *joined = m->note ? g_strdup_printf("%s; %s", m->note, what) : g_strdup(what);
    g_free(m->note);
    g_free(what);
    m->note = joined;
}

/* What the run's environment left NCCL's tuner (NCCL_ALGO, NCCL_PROTO),
 * as the run's NCCL parses them: the model's tuner picks from the same, for
 * the collectives NCCL tunes (all-to-all and send/receive take none); a
 * value NCCL refuses leaves it free; one that leaves nothing is bad input (NCCL
 * had nothing to run).  Said in the run's note. */
static bool env_allowed(const NcclTrace *tr, Measured *m, GError **err)
{
    const char *raw[2] = {nccltests_env_algo(tr), nccltests_env_proto(tr)}, *var[2] = {"NCCL_ALGO", "NCCL_PROTO"};
    char **text[2] = {&m->env_algo, &m->env_proto};
    unsigned *mask[2] = {&m->env_algos, &m->env_protos};
    NcclTestsOp op = m->rows->len ? g_array_index(m->rows, MRow, 0).op : NCCLTESTS_UNKNOWN;
    bool tuned = op != NCCLTESTS_ALLTOALL && op != NCCLTESTS_SENDRECV && op != NCCLTESTS_UNKNOWN;
    for (int i = 0; i < 2 && tuned; i++) {
        const char *names[8];
        int n = raw[i] ? nccltests_env_allowed(raw[i], i == 1, op, m->nccl_version, names) : -2;
        if (n == -2)
            continue;
        m->env_set[i] = g_strdup(raw[i]);
        if (n < 0) {
            add_note(m, g_strdup_printf("the run set %s=%s, which NCCL refuses: the model picks freely", var[i],
                                        SIM_ECHO(raw[i])));
            continue;
        }
        if (n == 0) {
            g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "%s: the run set %s=%s, which leaves NCCL no %s for %s",
                        m->name, var[i], SIM_ECHO(raw[i]), i ? "protocol" : "algorithm", nccltests_op_name(op));
            return false;
        }
        for (int k = 0; k < n; k++)
            *mask[i] |= 1u << (i ? coll_proto_parse(names[k]) : coll_algo_parse(names[k]));
        names[n] = NULL;
        *text[i] = g_strjoinv(",", (char **)names);
        add_note(m, g_strdup_printf("the run set %s=%s: the model's tuner picks from %s", var[i], SIM_ECHO(raw[i]),
                                    *text[i]));
    }
    return true;
}

static bool from_nccltests(NcclTrace *tr, int op_override, Measured *m, GError **err)
{
    NcclTestsOp op;
    if (!pick_op(m->name, nccltests_op(tr), op_override, &op, err))
        return false;
    nccltests_set_op(tr, op); /* the rank count from busbw/algbw follows the op */
    for (size_t i = 0; i < nccltests_n_rows(tr); i++) {
        const NcclTestsRow *r = nccltests_row(tr, i);
        MRow row = {op, (double)r->size_bytes, r->time_us * 1e-6, r->ran_algo, r->ran_proto};
        g_array_append_val(m->rows, row);
        m->wrong_rows += r->wrong;
    }
    m->ranks = nccltests_n_ranks(tr);
    if (nccltests_ranks_from_bw(tr))
        m->ranks_from = "busbw/algbw";
    m->hosts = nccltests_n_hosts(tr);
    int least;
    nccltests_ranks_per_host(tr, &least, &m->ranks_per_host);
    if (least > 0 && least != m->ranks_per_host) { /* the model places equal blocks per node */
        g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT,
                    "%s: the Rank lines put %d to %d ranks on each of %d hosts; the model runs the same number "
                    "of ranks on every node", m->name, least, m->ranks_per_host, m->hosts);
        return false;
    }
    m->gpus_per_thread = nccltests_gpus_per_thread(tr);
    if (nccltests_n_devices(tr) > 0)
        m->device = g_strdup(nccltests_device(tr, 0));
    if (nccltests_n_rows(tr) > 0)
        m->datatype = g_strdup(nccltests_row(tr, 0)->type);
    /* the version the library printed, else the '# nccl: 2.8 ...' provenance header */
    int v = coll_nccl_version_parse(nccltests_nccl_version(tr));
    m->nccl_version = v > 0 ? v : coll_nccl_version_parse(nccltests_header(tr, "nccl"));
    if (m->nccl_version < 0)
        m->nccl_version = 0;
    m->launch_waits = m->gpus_per_thread > 1 && nccltests_launch_waits(tr);
    if (nccltests_zero_rows(tr))
        m->note = g_strdup_printf("%d row(s) of 0 bytes left out", nccltests_zero_rows(tr));
    return env_allowed(tr, m, err);
}

/* OSU prints the per-process count for allgather and the per-peer count for
 * all-to-all; nccl-tests (and the model) take the whole buffer.  Bandwidth
 * rows become the time of one window: OSU_WINDOW messages (each way for
 * osu_bibw) over the printed MB/s. */
static bool from_osu(const OsuTrace *tr, int op_override, int ranks, int nodes, Measured *m, GError **err)
{
    NcclTestsOp op;
    if (!pick_op(m->name, osu_op(tr), op_override, &op, err))
        return false;
    m->metric = osu_metric(tr);
    m->osu = true;
    m->mpi_lib = osu_mpi_library(tr, &m->mpi_version);
    m->mpi_lib_from = "the trace";
    m->libfabric = g_strdup(osu_header(tr, "libfabric"));
    m->pml = g_strdup(osu_header(tr, "pml"));
    if (m->mpi_lib < 0 && (m->mpi_lib = osu_mpi_library_in_name(m->name)) >= 0)
        m->mpi_lib_from = "the file name";
    /* the layout from the headers only (a file name is no statement) */
    int hr = 0, hn = 0, hq = 0;
    if (!osu_layout(tr, &hr, &hn, &hq, err))
        return false;
    if (op == NCCLTESTS_SENDRECV) {
        if ((ranks > 0 && ranks != 2) || (hr > 0 && hr != 2)) {
            g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "%s: a point-to-point benchmark runs 2 ranks, not %d",
                        m->name, ranks > 0 ? ranks : hr);
            return false;
        }
        hr = 2;
        if (hn == 0 && hq > 0)
            hn = 2 / hq;
        if (hq == 0 && hn > 0)
            hq = (2 + hn - 1) / hn;
    } else if (ranks <= 0 && hr <= 0) {
        g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT,
                    "%s: OSU output does not say how many ranks ran and no header states it; give --ranks (and "
                    "--nodes)", m->name);
        return false;
    }
    if (nodes <= 0 && hn <= 0) {
        g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "%s: OSU output does not say on how many nodes its %s ran and "
                    "no header states it; give --nodes", m->name, op == NCCLTESTS_SENDRECV ? "2 ranks" : "ranks");
        return false;
    }
    m->ranks = hr;
    m->hosts = hn;
    m->ranks_per_host = hq;
    if (ranks <= 0)
        ranks = hr;
    double scale = op == NCCLTESTS_ALLGATHER || op == NCCLTESTS_ALLTOALL ? ranks : 1;
    double ways = m->metric == OSU_BIBANDWIDTH ? 2 : 1;
    for (size_t i = 0; i < osu_n_rows(tr); i++) {
        const OsuRow *r = osu_row(tr, i);
        double t = r->avg_us * 1e-6;
        if (m->metric != OSU_LATENCY)
            t = r->bw_mbs > 0 ? ways * OSU_WINDOW * (double)r->size_bytes / (r->bw_mbs * 1e6) : 0;
        MRow row = {op, (double)r->size_bytes * scale, t, NULL, NULL};
        g_array_append_val(m->rows, row);
    }
    return true;
}

/* Score-P traces time each call; rank_time_s (each rank's own duration,
 * averaged) is what benchmarks print, so it is the measured time here. */
static bool from_otf2(const char *path, Measured *m, GError **err)
{
    Otf2Trace *tr = otf2trace_load(path, err);
    if (!tr)
        return false;
    int tiny = 0;
    for (size_t i = 0; i < otf2trace_n_rows(tr); i++) {
        const Otf2Row *r = otf2trace_row(tr, i);
        if (!isfinite(r->size_bytes) || r->op == NCCLTESTS_UNKNOWN || r->op == NCCLTESTS_SENDRECV)
            continue;
        /* under a byte a rank (a 1-byte flag all-reduced over 4 ranks) prices nothing:
         * skipped, counted; the rest held as the text readers hold theirs, up to 1 TiB, in a
         * time a measurement can take and at a rate a machine can move (review 9: 2^64-1
         * bytes, 584 years and a 0.25-byte row went through) */
        if (r->size_bytes < 1) {
            tiny++;
            continue;
        }
        if (!(r->size_bytes <= TRACE_MAX_BYTES && r->rank_time_s * 1e6 <= TRACE_MAX_US &&
              trace_rate_ok(r->size_bytes, r->rank_time_s * 1e6))) {
            g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "%s: the %s of %.6g bytes per rank in %.6g s is not a "
                        "measurement (up to 1 TiB, within %g s, at most %g TB/s)", path, nccltests_op_name(r->op),
                        r->size_bytes, r->rank_time_s, TRACE_MAX_US * 1e-6, TRACE_MAX_RATE_BPS / 1e12);
            otf2trace_free(tr);
            return false;
        }
        MRow row = {r->op, r->size_bytes, r->rank_time_s, NULL, NULL};
        g_array_append_val(m->rows, row);
    }
    m->ranks = otf2trace_n_ranks(tr);
    m->hosts = otf2trace_n_hosts(tr);
    const char *note = otf2trace_note(tr);
    GString *said = g_string_new(note ? note : "");
    if (tiny)
        g_string_append_printf(said, "%s%d collective size(s) of under a byte a rank skipped", said->len ? "; " : "",
                                tiny);
    m->note = said->len ? g_string_free(said, FALSE) : (g_string_free(said, TRUE), NULL);
    otf2trace_free(tr);
    if (m->rows->len == 0) { /* what the reader skipped says why (review 9: it was dropped) */
        g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "%s: no collective with a known size in this trace%s%s", path,
                    m->note ? ": " : "", m->note ? m->note : "");
        return false;
    }
    return true;
}

/* --ranks and --nodes fill in what a trace does not say; they never
 * contradict it (that would compare a prediction with another run). */
static bool settle_counts(Measured *m, int ranks, int nodes, GError **err)
{
    if (ranks > 0 && m->ranks > 0 && ranks != m->ranks) {
        bool bw = strcmp(m->ranks_from, "busbw/algbw") == 0;
        g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "%s: the trace says %d ranks%s, not %d", m->name, m->ranks,
                    bw ? " (from busbw/algbw)" : "", ranks);
        return false;
    }
    if (nodes > 0 && m->hosts > 0 && nodes != m->hosts) {
        g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "%s: the trace says %d nodes, not %d", m->name, m->hosts, nodes);
        return false;
    }
    if (ranks > 0 && m->ranks <= 0) {
        m->ranks = ranks;
        m->ranks_from = "--ranks";
    }
    if (nodes > 0 && m->hosts <= 0) {
        m->hosts = nodes;
        m->ranks_per_host = 0;
    }
    if (m->ranks <= 0) {
        g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "%s: the trace does not say how many ranks took part (use --ranks)",
                    m->name);
        return false;
    }
    if (m->ranks == 1) { /* NCCL copies the buffer locally: what a run measures is its launch, not a collective */
        g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT,
                    "%s: one rank took part: its collective moves nothing between devices, nothing to predict",
                    m->name);
        return false;
    }
    m->hosts_unnamed = m->hosts <= 0;
    if (m->hosts <= 0)
        m->hosts = 1;
    if (m->ranks_per_host <= 0)
        m->ranks_per_host = (m->ranks + m->hosts - 1) / m->hosts;
    return true;
}

/* The library an nccl-tests-style file ran: rccl-tests prints "rccl-tests:
 * Version", RCCL logs "RCCL version"; a '# nccl:' provenance header naming
 * RCCL says the same; nccl-tests' banner or NCCL's log says NCCL.  -1 where
 * nothing says (the topology's default then). */
static int library_in(const char *text, NcclTrace *first)
{
    if (nccltests_is_report(text)) { /* JSON: its strings are anything; the devices say whose GPUs */
        const char *dev = first && nccltests_n_devices(first) ? nccltests_device(first, 0) : "";
        return strstr(dev, "AMD") ? COLL_LIB_RCCL : strstr(dev, "NVIDIA") ? COLL_LIB_NCCL : -1;
    }
    const char *prov = first ? nccltests_header(first, "nccl") : NULL;
    if (strstr(text, "rccl-tests: Version") || strstr(text, "RCCL version") || (prov && strstr(prov, "RCCL")) ||
        (prov && strstr(prov, "rccl-tests")))
        return COLL_LIB_RCCL;
    if (strstr(text, "# nccl-tests") || strstr(text, "NCCL version") || strstr(text, "nccl-library="))
        return COLL_LIB_NCCL;
    return -1;
}

bool validate_load_measured(const char *path, int op_override, int ranks, int nodes, GPtrArray *out, GError **err)
{
    if (g_str_has_suffix(path, ".otf2")) {
        Measured *m = measured_new(path, 0);
        g_ptr_array_add(out, m);
        return from_otf2(path, m, err) && settle_counts(m, ranks, nodes, err);
    }
    char *text = trace_read_text(path, err);
    if (!text)
        return false;
    bool ok = false;
    if (!nccltests_is_report(text) && strstr(text, "# OSU")) {
        OsuTrace *tr = osu_parse(path, text, err);
        if (tr) {
            Measured *m = measured_new(path, 0);
            g_ptr_array_add(out, m);
            ok = from_osu(tr, op_override, ranks, nodes, m, err) && settle_counts(m, ranks, nodes, err);
            osu_free(tr);
        }
    } else {
        NcclRuns *runs = nccltests_parse_runs(path, text, err);
        ok = runs != NULL;
        size_t n = runs ? nccltests_runs_n(runs) : 0;
        int lib = n > 0 ? library_in(text, nccltests_runs_get(runs, 0)) : -1;
        for (size_t i = 0; ok && i < n; i++) {
            NcclTrace *tr = nccltests_runs_get(runs, i);
            Measured *m = measured_new(nccltests_name(tr), n > 1 ? (int)i + 1 : 0);
            g_ptr_array_add(out, m);
            m->nccl_library = lib;
            ok = from_nccltests(tr, op_override, m, err) && settle_counts(m, ranks, nodes, err);
        }
        nccltests_runs_free(runs);
    }
    g_free(text);
    return ok;
}
