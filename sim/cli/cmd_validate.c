/* shardsim validate: its options and the human form of the results (a table
 * per run, the error summaries, the notes on stderr); reading the traces and
 * predicting them is traces/validate.c. */
#include "cli.h"
#include "collective.h"
#include "nccltests.h"
#include "validate.h"
#include "mpi_model.h"
#include "sim_data.h"

#include <stdio.h>
#include <string.h>

static void print_errors(const ValidateErrors *e)
{
    char large_s[32] = "-", small_s[32] = "-";
    if (e->n_large)
        g_snprintf(large_s, sizeof large_s, "%.1f%%", e->median_large);
    if (e->n_small)
        g_snprintf(small_s, sizeof small_s, "%.1f%%", e->median_small);
    printf("# %u rows: median |error| %.1f%% (sizes >= 1 MiB: %s, below: %s), max %.1f%%\n", e->n_rows, e->median,
           large_s, small_s, e->max);
}

/* The fabric's part in a run's predictions, on a line of its own. */
static void print_fabric(const ValidateRun *r)
{
    char *note = r->n_rows ? cli_fabric_note(&r->rows[0].fabric_factor, r->n_rows, sizeof r->rows[0]) : NULL;
    if (note)
        printf("# %s\n", note);
    g_free(note);
}

/* One run as far as it got: the notes go to stderr whatever the form. */
static void print_run(const ValidateRun *r, bool human)
{
    if (r->note)
        fprintf(stderr, "shardsim: %s: %s\n", r->trace, r->note);
    if (!r->topology)
        return;
    if (validate_device_differs(r->device, r->accelerator))
        cli_warn("%s: the trace ran on %s, topology %s models %s", r->trace, r->device, r->topology, r->accelerator);
    if (r->nccl_library)
        cli_warn_version(r->trace, coll_library_parse(r->nccl_library), r->nccl_version);
    if (r->wrong_rows > 0)
        cli_warn("%s: %d row%s failed the benchmark's own check (\"#wrong\" above 0): a faulty run's times", r->trace,
                 r->wrong_rows, r->wrong_rows == 1 ? "" : "s");
    if (human && (r->done || r->n_rows > 0)) { /* a run refused before its first row prints nothing */
        char ver[48] = "";
        bool rccl = r->nccl_library && strcmp(r->nccl_library, "rccl") == 0;
        if (r->nccl_version > 0)
            g_snprintf(ver, sizeof ver, ", %s %d.%d.%d", rccl ? "RCCL" : "NCCL", r->nccl_version / 10000,
                       r->nccl_version / 100 % 100, r->nccl_version % 100);
        else if (rccl)
            g_strlcpy(ver, ", RCCL", sizeof ver);
        printf("# %s: %s, %d ranks on %d node(s)%s, topology %s%s\n", r->trace, r->mixed ? "several collectives" : r->op,
               r->ranks, r->nodes, strcmp(r->ranks_from, "busbw/algbw") == 0 ? " (ranks from busbw/algbw)" : "",
               r->topology, ver);
        if (r->sendrecv)
            printf("# sendrecv: %s\n", r->sendrecv);
        if (r->library)
            printf("# library: %s\n", r->library);
        print_fabric(r);
        size_t said, same = validate_nccl_agrees(r->rows, r->n_rows, &said);
        printf("%14s %12s %12s %8s %8s %7s%s%s\n", "size(B)", "measured(us)", "predicted", "error%", "algo", "proto",
               said ? "  nccl ran" : "", r->mixed ? "  op" : "");
        for (size_t i = 0; i < r->n_rows; i++) {
            const ValidateRow *row = &r->rows[i];
            char ran[48] = "";
            if (said)
                g_snprintf(ran, sizeof ran, "  %s/%s", row->nccl_algo ? row->nccl_algo : "-",
                           row->nccl_proto ? row->nccl_proto : "-");
            printf("%14.0f %12.2f %12.2f %+8.1f %8s %7s%s%s%s\n", row->size_bytes, row->measured_s * 1e6,
                   row->predicted_s * 1e6, validate_row_pct_error(row), row->algo, row->proto, ran,
                   r->mixed ? "  " : "", r->mixed ? row->op : "");
        }
        if (said)
            printf("# NCCL's log says what it ran at %zu size(s): the model runs the same algorithm and protocol "
                   "at %zu\n", said, same);
    }
    if (r->skipped)
        fprintf(stderr, "shardsim: %s: %d row(s) with a zero size or time left out\n", r->trace, r->skipped);
    if (human && r->done)
        print_errors(&r->errors);
}

static bool draw_validation(const char *svg, const void *user, GError **err)
{
    return validate_plot((Validation *)user, svg, err);
}

/* The page of --report: the command line, the error summary, each trace's
 * rows, the predicted-versus-measured plot, the notes, the sources of the
 * topology and the model's parameters, the --json output. */
static int write_report(const char *path, char **cmdline, Validation *v, const ValidateOptions *o)
{
    cJSON *json = validate_json(v);
    char *title = g_strdup_printf("shardsim validate on %s", o->topology);
    Report *r = report_new(title);
    g_free(title);
    report_add_inputs(r, (int)g_strv_length(cmdline), cmdline, NULL);
    const ReportColumn sum[] = {
        {"topology", "topology", 0, 0},
        {"rows", "n_rows", 0, 0},
        {"median |error| (%)", "median_abs_pct_error", 0, 1},
        {"sizes >= 1 MiB (%)", "median_abs_pct_error_large", 0, 1},
        {"below 1 MiB (%)", "median_abs_pct_error_small", 0, 1},
        {"max |error| (%)", "max_abs_pct_error", 0, 1},
    };
    report_add_table(r, "All traces", json, "", sum, G_N_ELEMENTS(sum));
    const ReportColumn tr[] = {
        {"trace", "trace", 0, 0},       {"op", "op", 0, 0},
        {"ranks", "ranks", 0, 0},       {"nodes", "nodes", 0, 0},
        {"library", "library", 0, 0},   {"rows", "n_rows", 0, 0},
        {"median |error| (%)", "median_abs_pct_error", 0, 1},
        {"max |error| (%)", "max_abs_pct_error", 0, 1},
    };
    const cJSON *traces = cJSON_GetObjectItem(json, "traces");
    report_add_table(r, "Per trace", traces, "traces", tr, G_N_ELEMENTS(tr));
    const ReportColumn rows[] = {
        {"op", "op", 0, 0},
        {"size (B)", "size_bytes", 0, 0},
        {"measured (us)", "measured_s", 1e6, 2},
        {"predicted (us)", "predicted_s", 1e6, 2},
        {"p10 (us)", "predicted_p10_s", 1e6, 2},
        {"p90 (us)", "predicted_p90_s", 1e6, 2},
        {"error (%), + slower", "pct_error", 0, 1},
        {"algorithm", "algo", 0, 0},
        {"protocol", "proto", 0, 0},
        {"NCCL ran", "nccl_algo", 0, 0}, /* where its log says (the last two columns) */
        {"NCCL's protocol", "nccl_proto", 0, 0},
    };
    int k = 0;
    const cJSON *t;
    cJSON_ArrayForEach(t, traces)
    {
        char *src = g_strdup_printf("traces.%d.rows", k++);
        char *cap = g_strdup_printf("%s (%s)", cJSON_GetStringValue(cJSON_GetObjectItem(t, "trace")),
                                    cJSON_GetStringValue(cJSON_GetObjectItem(t, "op")));
        size_t ncols = G_N_ELEMENTS(rows) - (cJSON_GetObjectItem(t, "nccl_choice_rows") ? 0 : 2);
        report_add_table(r, cap, cJSON_GetObjectItem(t, "rows"), src, rows, ncols);
        g_free(cap);
        g_free(src);
    }
    cli_report_plot(r, "Measured and predicted times against message size", draw_validation, v);
    bool mpi = false;
    for (size_t i = 0; i < validate_n_runs(v); i++) {
        const ValidateRun *run = validate_run(v, i);
        if (run->note) {
            char *w = g_strdup_printf("%s: %s", run->trace, run->note);
            report_add_warning(r, w);
            g_free(w);
        }
        if (run->skipped) {
            char *w = g_strdup_printf("%s: %d row(s) with a zero size or time left out", run->trace, run->skipped);
            report_add_warning(r, w);
            g_free(w);
        }
        mpi = mpi || (run->library && run->topology);
    }
    report_add_preset_sources(r, "topologies/presets", "topology", o->topology);
    char *def = sim_data_dir("models/presets/collectives.json");
    report_add_sources(r, o->params ? "collective parameters" : "collective parameters (default)",
                       o->params ? o->params : def);
    g_free(def);
    if (mpi) {
        char *m = sim_data_dir("models/presets/mpi.json");
        report_add_sources(r, "MPI model parameters", m);
        g_free(m);
    }
    report_set_json(r, json);
    cJSON_Delete(json);
    return cli_report_write(r, path);
}

int cmd_validate(int argc, char **argv)
{
    char *kineto = NULL, *accel_s = NULL, *scenario = NULL, *gemm_table = NULL; /* --kineto's */
    char *topology = NULL, *op_s = NULL, *algo_s = NULL, *proto_s = NULL, *params = NULL, *plot = NULL, *report = NULL;
    char **cmdline = cli_command_line(argc, argv); /* before options are taken out */
    gboolean json = FALSE, as_logged = FALSE;
    int ranks = 0, nodes = 0; /* 0: not given */
    char *ranks_s = NULL, *nodes_s = NULL, *version_s = NULL, *library_s = NULL, *mpi_lib_s = NULL, *nlib_s = NULL;
    GOptionEntry entries[] = {
        {"kineto", 0, 0, G_OPTION_ARG_FILENAME, &kineto,
         "instead of collective traces: a PyTorch profiler (Kineto) trace of one step on one GPU, its kernels' time "
         "per class against the accelerator model", "PROFILE.json"},
        {"accelerator", 'a', 0, G_OPTION_ARG_FILENAME, &accel_s, "with --kineto: the GPU it ran on", "PRESET|FILE"},
        {"scenario", 0, 0, G_OPTION_ARG_FILENAME, &scenario, "with --kineto: take the accelerator from this scenario",
         "SCENARIO.json"},
        {"gemm-table", 0, 0, G_OPTION_ARG_FILENAME, &gemm_table,
         "with --kineto: write its GEMM operators as calibrate --accelerator's table", "FILE.csv"},
        {"topology", 't', 0, G_OPTION_ARG_FILENAME, &topology, "topology preset or JSON file", "PRESET|FILE"},
        {"params", 0, 0, G_OPTION_ARG_FILENAME, &params,
         "collective-model parameters (default models/presets/collectives.json)", "FILE"},
        {"op", 0, 0, G_OPTION_ARG_STRING, &op_s, "collective (or sendrecv), when the trace does not say (never overrides it)", "OP"},
        {"ranks", 'n', 0, G_OPTION_ARG_STRING, &ranks_s, "ranks that ran, when the trace does not say (OSU collectives whose headers do not state it; nccl-tests without Rank lines); must agree where it does", "N"},
        {"nodes", 0, 0, G_OPTION_ARG_STRING, &nodes_s, "nodes they ran on, when the trace does not say (OSU needs it unless a header states it); must agree where it does", "N"},
        {"algo", 0, 0, G_OPTION_ARG_STRING, &algo_s, "force an algorithm (default auto)", "ALGO"},
        {"proto", 0, 0, G_OPTION_ARG_STRING, &proto_s, "force a protocol (default auto)", "PROTO"},
        {"as-logged", 0, 0, G_OPTION_ARG_NONE, &as_logged,
         "price each size with the algorithm and protocol NCCL's log says it ran there (NCCL_DEBUG_SUBSYS=TUNING), "
         "the model's pick where it says nothing", NULL},
        {"nccl-version", 0, 0, G_OPTION_ARG_STRING, &version_s,
         "NCCL version whose algorithms and tuner to model, e.g. 2.18.3 (default: what the trace prints, else the newest)",
         "X.Y[.Z]"},
        {"nccl-library", 0, 0, G_OPTION_ARG_STRING, &nlib_s,
         "whose tuner and constants the NCCL model follows: nccl, or rccl (AMD's fork) (default: the trace's "
         "(rccl-tests, RCCL's log), else rccl on AMD topologies, nccl on the others)",
         "nccl|rccl"},
        {"library", 0, 0, G_OPTION_ARG_STRING, &library_s,
         "collective model: nccl or mpi (default: mpi for OSU traces, nccl for the others)", "nccl|mpi"},
        {"mpi-library", 0, 0, G_OPTION_ARG_STRING, &mpi_lib_s,
         "the MPI library whose selection the MPI model follows (default: the trace header's, else openmpi)",
         "openmpi|mpich|cray-mpich"},
        {"json", 0, 0, G_OPTION_ARG_NONE, &json, "print one JSON object", NULL},
        {"plot", 0, 0, G_OPTION_ARG_FILENAME, &plot, "draw measured and predicted times against size",
         "FILE.png|.svg"},
        {"report", 0, 0, G_OPTION_ARG_FILENAME, &report, "write one self-contained HTML page of the comparison",
         "FILE.html"},
        {NULL, 0, 0, 0, NULL, NULL, NULL},
    };
    GOptionContext *ctx = g_option_context_new(
        "TRACE... - compare predictions with measured nccl-tests, rccl-tests or OSU output, or Score-P OTF2 traces (.otf2)");
    g_option_context_add_main_entries(ctx, entries, NULL);
    int rc = 2;
    if (!cli_parse_options(ctx, entries, &argc, &argv))
        goto out;
    if (kineto || accel_s || scenario || gemm_table) {
        rc = argc != 1 || !kineto || topology ? cli_usage_error("validate: --kineto PROFILE.json takes no trace files "
                                                                "nor --topology; --accelerator, --scenario and "
                                                                "--gemm-table go with it")
                                              : cmd_validate_kineto(kineto, accel_s, scenario, gemm_table, json);
        goto out;
    }
    if (!topology) {
        rc = cli_usage_error("validate: --topology is required (see --help)");
        goto out;
    }
    if (argc < 2) {
        rc = cli_usage_error("validate: name at least one trace file");
        goto out;
    }
    if (plot && !g_str_has_suffix(plot, ".png") && !g_str_has_suffix(plot, ".svg")) {
        rc = cli_usage_error("validate: --plot %s: the file must end in .png or .svg", plot);
        goto out;
    }
    int op = -1, algo = algo_s ? coll_algo_parse(algo_s) : COLL_ALGO_AUTO,
        proto = proto_s ? coll_proto_parse(proto_s) : COLL_PROTO_AUTO;
    if (op_s) {
        int c = coll_op_parse(op_s);
        static const NcclTestsOp back[] = {NCCLTESTS_ALLREDUCE, NCCLTESTS_REDUCESCATTER, NCCLTESTS_ALLGATHER,
                                           NCCLTESTS_BROADCAST, NCCLTESTS_REDUCE,        NCCLTESTS_ALLTOALL};
        if (c < 0 && nccltests_op_from_name(op_s) == NCCLTESTS_SENDRECV) {
            op = NCCLTESTS_SENDRECV;
        } else if (c < 0) {
            rc = cli_usage_error("validate: unknown --op '%s' (allreduce, reducescatter, allgather, broadcast, reduce, "
                                 "alltoall, sendrecv)", SIM_ECHO(op_s));
            goto out;
        } else {
            op = back[c];
        }
    }
    if (algo == -2 || proto == -2) {
        rc = cli_usage_error("validate: unknown %s", algo == -2 ? "--algo" : "--proto");
        goto out;
    }
    if (as_logged && (algo_s || proto_s)) {
        rc = cli_usage_error("validate: --as-logged prices what NCCL's log says it ran; it takes no --algo or --proto");
        goto out;
    }
    int version = version_s ? coll_nccl_version_parse(version_s) : 0;
    if (version < 0 || (version_s && version == 0)) {
        rc = cli_usage_error("validate: bad --nccl-version '%s' (e.g. 2.18 or 2.18.3)", SIM_ECHO(version_s));
        goto out;
    }
    if ((ranks_s && (rc = cli_parse_count("validate", "--ranks", ranks_s, 1, 1 << 22, &ranks)) != 0) ||
        (nodes_s && (rc = cli_parse_count("validate", "--nodes", nodes_s, 1, 1 << 20, &nodes)) != 0))
        goto out;
    if ((rc = cli_report_check("validate", report)) != 0)
        goto out;
    const char *plot_opt[] = {"--plot", "--report"}, *outs[] = {plot, report};
    if ((rc = cli_check_outputs("validate", (const char *const *)argv + 1, argc - 1, outs, plot_opt, 2)) != 0)
        goto out;
    rc = 2;
    int library = VALIDATE_LIB_AUTO;
    if (library_s && g_ascii_strcasecmp(library_s, "nccl") == 0)
        library = VALIDATE_LIB_NCCL;
    else if (library_s && g_ascii_strcasecmp(library_s, "mpi") == 0)
        library = VALIDATE_LIB_MPI;
    else if (library_s) {
        rc = cli_usage_error("validate: unknown --library '%s' (nccl or mpi)", SIM_ECHO(library_s));
        goto out;
    }
    if (mpi_lib_s && mpi_lib_parse(mpi_lib_s) < 0) {
        rc = cli_usage_error("validate: unknown --mpi-library '%s' (openmpi, mpich or cray-mpich)", SIM_ECHO(mpi_lib_s));
        goto out;
    }
    if (nlib_s && coll_library_parse(nlib_s) < 0) {
        rc = cli_usage_error("validate: unknown --nccl-library '%s' (nccl or rccl)", SIM_ECHO(nlib_s));
        goto out;
    }
    ValidateOptions o = {topology, params, op,        algo,    proto, ranks, nodes, NULL, version, library, mpi_lib_s,
                         nlib_s,   NULL,   as_logged};
    Validation *v = validate_new(&o);
    rc = 0;
    for (int i = 1; i < argc && rc == 0; i++) {
        GError *err = NULL;
        if (!validate_trace(v, argv[i], &err))
            rc = cli_fail(err);
    }
    /* a flag of a model no trace ran on would be passed over silently */
    size_t on_nccl = 0, runs = validate_n_runs(v);
    for (size_t k = 0; k < runs; k++)
        on_nccl += validate_run(v, k)->nccl_library != NULL;
    const char *unused = rc != 0 || !runs               ? NULL
                         : mpi_lib_s && on_nccl == runs ? "--mpi-library"
                         : (version_s || nlib_s) && on_nccl == 0 ? (version_s ? "--nccl-version" : "--nccl-library")
                                                                 : NULL;
    if (unused)
        rc = cli_usage_error("validate: %s is for the %s model, and no trace here runs on it%s", unused,
                             strcmp(unused, "--mpi-library") ? "NCCL" : "MPI",
                             strcmp(unused, "--mpi-library") ? "" : " (--library mpi runs a trace on MPI's)");
    for (size_t k = 0; rc == 0 && k < runs; k++) /* printed once every trace is read: bad input prints nothing */
        print_run(validate_run(v, k), !json);
    if (rc == 0) {
        if (!json && argc > 2) {
            printf("# all traces:\n");
            ValidateErrors all = validate_errors(v);
            print_errors(&all);
        }
        GError *perr = NULL;
        if (plot && !validate_plot(v, plot, &perr))
            rc = cli_fail(perr);
        if (rc == 0 && report)
            rc = write_report(report, cmdline, v, &o);
        if (json)
            cli_print_json(validate_json(v));
    }
    validate_free(v);
out:
    g_free(kineto);
    g_free(accel_s);
    g_free(scenario);
    g_free(gemm_table);
    g_free(topology);
    g_free(params);
    g_free(plot);
    g_free(op_s);
    g_free(algo_s);
    g_free(proto_s);
    g_free(ranks_s);
    g_free(nodes_s);
    g_free(version_s);
    g_free(library_s);
    g_free(mpi_lib_s);
    g_free(nlib_s);
    g_free(report);
    g_strfreev(cmdline);
    g_option_context_free(ctx);
    return rc;
}
