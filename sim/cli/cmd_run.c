/* "shardsim run": options, then the step's report (from step.h's JSON
 * result) as text or one JSON object, and the timeline of the first variant. */
#include "chakra_replay.h"
#include "cli.h"
#include "scenario.h"
#include "step.h"
#include "timeline.h"

#include <stdio.h>
#include <string.h>

static void print_gib(const char *label, const cJSON *mem, const char *key)
{
    const cJSON *v = cJSON_GetObjectItem(mem, key);
    if (v)
        printf("    %-18s %9.2f GiB\n", label, v->valuedouble / (1024.0 * 1024 * 1024));
}

static double num(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItem(o, key);
    return v && cJSON_IsNumber(v) ? v->valuedouble : 0;
}

static const char *str(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItem(o, key);
    return v && cJSON_IsString(v) ? v->valuestring : "?";
}

static void print_result(const cJSON *r)
{
    const cJSON *cfg = cJSON_GetObjectItem(r, "config");
    const cJSON *bd = cJSON_GetObjectItem(r, "breakdown");
    const cJSON *mem = cJSON_GetObjectItem(r, "memory_per_device_bytes");
    double step = num(r, "step_time_s");
    printf("== %s: weight update %s ==\n", str(r, "scenario"), str(r, "variant"));
    const cJSON *w;
    cJSON_ArrayForEach(w, cJSON_GetObjectItem(r, "warnings")) printf("  note: %s\n", w->valuestring);
    const cJSON *from = cJSON_GetObjectItem(cfg, "dp_from");
    bool filled = cJSON_IsString(from) && strcmp(from->valuestring, "the scenario") != 0;
    double np = num(cfg, "params"); /* a CNN's millions are not 0.0 B */
    double mbs = num(cfg, "micro_batches");
    char cp[32] = "";
    if (cJSON_GetObjectItem(cfg, "cp"))
        snprintf(cp, sizeof cp, " x cp %g", num(cfg, "cp"));
    printf("  %s (%.1f %s params) on %s: %s of %s (%s), dp %g%s%s%s x tp %g%s x pp %g, %g micro-batch%s of %g\n",
           str(cfg, "model"), np >= 1e9 ? np / 1e9 : np / 1e6, np >= 1e9 ? "B" : "M", str(cfg, "topology"), str(cfg, "devices_used"),
           str(cfg, "topology"), str(cfg, "accelerator"), num(cfg, "dp"), filled ? " (= " : "",
           filled ? from->valuestring : "", filled ? ")" : "", num(cfg, "tp"), cp, num(cfg, "pp"), mbs,
           mbs == 1 ? "" : "es", num(cfg, "micro_batch"));
    const cJSON *cpi = cJSON_GetObjectItem(cfg, "cp_impl");
    if (cpi)
        printf("  context parallel: cp %g (PyTorch's context_parallel, KV %s%s; gradients reduced over dp x cp)\n",
               num(cfg, "cp"), strcmp(cpi->valuestring, "pytorch_allgather") ? "sent round the ring" : "all-gathered",
               cJSON_IsTrue(cJSON_GetObjectItem(cfg, "cp_repeat_kv")) ? ", repeated to the query's heads" : "");
    else if (cJSON_GetObjectItem(cfg, "cp"))
        printf("  context parallel: cp %g (ring attention; gradients reduced over dp x cp)\n", num(cfg, "cp"));
    const cJSON *ft = cJSON_GetObjectItem(cfg, "finetune");
    if (ft) {
        printf("  LoRA: rank %g on", num(ft, "rank"));
        const cJSON *targets = cJSON_GetObjectItem(ft, "targets"), *t;
        cJSON_ArrayForEach(t, targets)
            printf("%s%s", t == targets->child ? " " : ", ", t->valuestring);
        printf("; %.1f M trainable parameters, the base frozen (%s weights)\n", num(ft, "trainable_params") / 1e6,
               str(ft, "base_dtype"));
    }
    bool op = !strcmp(str(cfg, "recompute"), "op"), eager = cJSON_GetObjectItem(cfg, "elementwise") != NULL;
    if (op || eager) /* PyTorch's ways of running a block (models/README.md) */
        printf("  PyTorch: %s%s%s\n", op ? "per-op checkpointing (recompute op)" : "", op && eager ? ", " : "",
               eager ? "eager element-wise kernels" : "");
    if (cJSON_GetObjectItem(cfg, "framework")) /* models/README.md, "JAX" */
        printf("  JAX: one XLA program, its buffers planned when it compiles\n");
    if (cJSON_GetObjectItem(cfg, "fp8_casts"))
        printf("  FP8: the activations' and gradients' casts fused into the ops that produce them\n");
    if (cJSON_GetObjectItem(cfg, "virtual_stages"))
        printf("  interleaved 1F1B: %g model chunks per pipeline stage\n", num(cfg, "virtual_stages"));
    if (!strcmp(str(cfg, "zero_impl"), "fsdp2") && num(cfg, "zero_stage") == 3)
        printf("  FSDP2: each layer's parameters copied out of its all-gather, its gradients into its reduce-scatter, "
               "on the compute stream\n");
    if (cJSON_GetObjectItem(cfg, "shard_group"))
        printf("  hybrid sharding: ZeRO-3 inside groups of %g ranks, replicated across\n", num(cfg, "shard_group"));
    if (cJSON_GetObjectItem(cfg, "offload_optimizer"))
        printf("  optimizer offloaded to the host (ZeRO-Offload): %.2f GiB of state in host memory\n",
               num(mem, "host_optimizer_state") / (1024.0 * 1024 * 1024));
    if (cJSON_GetObjectItem(cfg, "cpu_checkpointing"))
        printf("  checkpoints offloaded to the host (cpu_checkpointing, %s copies): %.2f GiB of host memory per device "
               "(the stage that keeps most)\n",
               str(cfg, "cpu_checkpointing_copy"), num(mem, "host_checkpoints") / (1024.0 * 1024 * 1024));
    if (cJSON_GetObjectItem(cfg, "attention_width")) {
        printf("  attention %g wide (heads x head_dim %g)%s", num(cfg, "attention_width"), num(cfg, "head_dim"),
               cJSON_IsTrue(cJSON_GetObjectItem(cfg, "qk_norm")) ? ", q/k norms" : "");
        if (cJSON_GetObjectItem(cfg, "sliding_window"))
            printf(", a %g-token window on %.0f %% of the layers", num(cfg, "sliding_window"), 100 * num(cfg, "window_share"));
        printf("\n");
    }
    if (cJSON_GetObjectItem(cfg, "experts")) {
        printf("  mixture of experts: %g experts over ep %g", num(cfg, "experts"), num(cfg, "ep"));
        if (cJSON_GetObjectItem(cfg, "expert_tp"))
            printf(" x expert tp %g", num(cfg, "expert_tp"));
        printf(", capacity factor %g, %.1f B params active per token\n", num(cfg, "capacity_factor"),
               num(cfg, "active_params") / 1e9);
        if (cJSON_GetObjectItem(cfg, "ep_dispatcher"))
            printf("  DeepEP dispatch: a token sent once to each of the %.2f ranks its experts are on (%s routing)\n",
                   num(cfg, "ep_ranks_per_token"), str(cfg, "moe_routing"));
    }
    if (num(cfg, "dp") > 1) {
        bool z12 = num(cfg, "zero_stage") == 1 || num(cfg, "zero_stage") == 2;
        printf("  gradients reduced in %s%s\n", str(cfg, "grad_reduce_dtype"),
               !z12 ? ""
               : cJSON_IsTrue(cJSON_GetObjectItem(cfg, "allgather_overlap"))
                   ? "; updated weights all-gathered behind the next forward"
                   : "; updated weights all-gathered at the end of the step");
    }
    printf("  step time          %10.4f s   (%.1f samples/s, %.0f tokens/s)\n", step, num(r, "samples_per_s"),
           num(r, "tokens_per_s"));
    bool moe_band = cJSON_GetObjectItem(cJSON_GetObjectItem(r, "uncertainty"), "moe_log_band") != NULL;
    printf("    p10-p90          %.4f - %.4f s (-%.0f%%/+%.0f%%; %sdocs/UNCERTAINTY.md)\n", num(r, "step_time_p10_s"),
           num(r, "step_time_p90_s"), 100 * (1 - num(r, "step_time_p10_s") / step),
           100 * (num(r, "step_time_p90_s") / step - 1),
           moe_band ? "at least the published MoE steps' spread, most slower than modelled: " : "");
    bool piped = num(cfg, "pp") > 1; /* three stages may be meant below: each line says which (review 9) */
    if (piped)
        printf("    of pipeline stage %g, the busiest:\n", num(bd, "stage"));
    printf("    compute          %10.4f s   %5.1f %%\n", num(bd, "compute"), 100 * num(bd, "compute") / step);
    if (num(bd, "compute_slowed_by_communication") > 0)
        printf("      slowed by comm %10.4f s   %5.1f %%\n", num(bd, "compute_slowed_by_communication"),
               100 * num(bd, "compute_slowed_by_communication") / step);
    printf("    exposed comm     %10.4f s   %5.1f %%\n", num(bd, "exposed_communication"),
           100 * num(bd, "exposed_communication") / step);
    printf("    optimizer        %10.4f s   %5.1f %%\n", num(bd, "optimizer"), 100 * num(bd, "optimizer") / step);
    printf("    pipeline bubble  %10.4f s   %5.1f %%\n", num(bd, "pipeline_bubble"),
           100 * num(bd, "pipeline_bubble") / step);
    printf("  MFU %.1f %% (model FLOPs), %.1f TFLOP/s per device (hardware FLOPs, recomputation included)\n",
           100 * num(r, "mfu"), num(r, "flops_per_device") / 1e12);
    printf("  memory per device (pipeline stage %g):\n", num(mem, "stage"));
    print_gib("weights", mem, "weights");
    print_gib("gradients", mem, "gradients");
    print_gib("optimizer state", mem, "optimizer_state");
    print_gib("activations", mem, "activations");
    print_gib("buffers", mem, "buffers");
    print_gib("working set (peak)", mem, "working_set");
    print_gib("reserve", mem, "reserve");
    print_gib("total", mem, "total");
    double gib = 1024.0 * 1024 * 1024, frac = num(mem, "memory_fraction");
    printf("    %s %.1f GiB of HBM", cJSON_IsTrue(cJSON_GetObjectItem(r, "fits")) ? "fits in" : "DOES NOT FIT in",
           num(mem, "hbm") / gib);
    if (frac < 1) /* the allocator's pool ("memory_fraction"), the reserve outside it */
        printf("; its allocator may hold %.4g %% of it (%.2f GiB) and holds %.2f GiB", 100 * frac,
               frac * num(mem, "hbm") / gib, num(mem, "allocator_reserved") / gib);
    printf("\n");
    const cJSON *colls = cJSON_GetObjectItem(r, "collectives");
    if (cJSON_GetArraySize(colls) > 0) {
        printf("  collectives (one device%s, per step):\n", piped ? " of pipeline stage 0" : "");
        const cJSON *c;
        cJSON_ArrayForEach(c, colls)
        {
            printf("    %-20s %-13s %5g ranks %12.0f B  %-6s %-6s %10.1f us x %g\n", str(c, "name"), str(c, "op"),
                   num(c, "group_size"), num(c, "bytes"), str(c, "algo"), str(c, "proto"), 1e6 * num(c, "time_s"),
                   num(c, "count_per_step"));
        }
    }
}

/* The page of --report: the scenario, the tables and memory chart of every
 * variant, the warnings, the presets' sources, the --json output. */
static int write_report(const char *path, char **cmdline, const char *scenario_path, const cJSON *res)
{
    const cJSON *vars = cJSON_GetObjectItemCaseSensitive(res, "variants");
    cJSON *scenario;
    Report *r = cli_report_open("run", cJSON_GetStringValue(cJSON_GetObjectItem(res, "scenario")), cmdline,
                                scenario_path, &scenario);
    cli_report_step_tables(r, vars ? vars : res, vars ? "variants" : "");
    cli_report_plot(r, "Memory per device", cli_report_memory_plot, vars ? vars : res);
    const cJSON *v;
    if (vars) {
        cJSON_ArrayForEach(v, vars) report_add_warnings(r, cJSON_GetObjectItemCaseSensitive(v, "warnings"));
    } else {
        report_add_warnings(r, cJSON_GetObjectItemCaseSensitive(res, "warnings"));
    }
    cli_report_step_sources(r, scenario_path, scenario, cJSON_GetObjectItemCaseSensitive(res, "config"));
    cJSON_Delete(scenario);
    report_set_json(r, res);
    return cli_report_write(r, path);
}

static const char run_description[] =
    "dp, the data-parallel degree, is \"parallelism\": {\"dp\": N} when the scenario gives it; when it\n"
    "does not, the replicas fill the machine: dp = ranks of the topology (nodes x ranks per node) /\n"
    "(tp x pp), with context parallelism / (tp x cp x pp), an error when those do not divide the ranks.\n"
    "'shardsim sweep' follows the same rule.\n"
    "Keys that contradict each other (\"zero_stage\": 0 with \"weight_update\": \"sharded\", ...) are\n"
    "errors at the key's line.\n"
    "\n"
    "--json prints SI units: seconds, bytes, bytes/s, FLOP/s (flops_per_device).\n"
    "Exit status: 0 on success, 2 for bad input, 1 when an output file cannot be written.";

/* --chakra DIR: the trace replayed on the scenario's platform. */
static int run_chakra(const StepScenario *sc, const char *dir, const char *times, bool json, const char *timeline)
{
    ChakraPlatform pf = {.topo = step_scenario_topo(sc), .acc = step_scenario_accel(sc),
                         .dtype = step_scenario_dtype(sc), .params = step_scenario_coll_params(sc),
                         .nccl_version = step_scenario_nccl_version(sc), .times = CHAKRA_TIMES_MODEL};
    if (times && !strcmp(times, "recorded"))
        pf.times = CHAKRA_TIMES_RECORDED;
    else if (times && strcmp(times, "model") != 0)
        return cli_usage_error("run: --chakra-times must be model or recorded, not \"%s\"", SIM_ECHO(times));
    GError *err = NULL;
    ChakraTrace *t = chakra_load_dir(dir, &err);
    SimGraph *g = NULL;
    cJSON *res = t ? chakra_replay(t, &pf, timeline ? &g : NULL, &err) : NULL;
    chakra_trace_free(t);
    if (res && timeline && !timeline_write(g, timeline, NULL, &err)) {
        cJSON_Delete(res);
        res = NULL;
    }
    sim_graph_free(g);
    if (!res)
        return cli_fail(err);
    cJSON_AddStringToObject(res, "chakra", dir);
    cJSON_AddStringToObject(res, "scenario", step_scenario_name(sc));
    if (json) {
        cli_print_json(res);
        return 0;
    }
    printf("== Chakra trace %s: %g ranks, %g nodes on %s (%s); times: %s ==\n", dir, num(res, "chakra_ranks"),
           num(res, "nodes"), topo_name(pf.topo), accel_name(pf.acc), str(res, "times"));
    printf("  step time          %10.6f s\n", num(res, "step_time_s"));
    printf("  collectives %g, point-to-point transfers %g\n", num(res, "collectives"), num(res, "point_to_point"));
    const cJSON *r;
    cJSON_ArrayForEach(r, cJSON_GetObjectItem(res, "per_rank"))
    {
        printf("  rank %g (topology rank %g): ends at %.6f s; busy", num(r, "rank"), num(r, "topology_rank"),
               num(r, "end_s"));
        const cJSON *b;
        cJSON_ArrayForEach(b, cJSON_GetObjectItem(r, "busy_s")) printf(" %s %.6f s", b->string, b->valuedouble);
        printf("\n");
    }
    cJSON_Delete(res);
    return 0;
}

int cmd_run(int argc, char **argv)
{
    gboolean json = FALSE;
    char *timeline = NULL, *report = NULL, *chakra = NULL, *chakra_times = NULL, *export_chakra = NULL;
    GOptionEntry entries[] = {
        {"chakra", 0, 0, G_OPTION_ARG_FILENAME, &chakra,
         "replay a Chakra execution trace (DIR/NAME.RANK.et) on the scenario's platform", "DIR"},
        {"chakra-times", 0, 0, G_OPTION_ARG_STRING, &chakra_times,
         "with --chakra: price nodes by the models (default) or take their recorded durations", "model|recorded"},
        {"export-chakra", 0, 0, G_OPTION_ARG_FILENAME, &export_chakra,
         "write the simulated step (first variant) as Chakra ET: DIR/shardsim.R.et per simulated device", "DIR"},
        {"json", 0, 0, G_OPTION_ARG_NONE, &json, "print one JSON object", NULL},
        {"timeline", 0, 0, G_OPTION_ARG_FILENAME, &timeline, "write a Chrome trace of the step (first variant)",
         "FILE.json"},
        {"report", 0, 0, G_OPTION_ARG_FILENAME, &report, "write one self-contained HTML page of the answer",
         "FILE.html"},
        {NULL, 0, 0, 0, NULL, NULL, NULL},
    };
    char **cmdline = cli_command_line(argc, argv); /* before options are taken out */
    GOptionContext *ctx = g_option_context_new("SCENARIO.json - predict one training step: time, memory, MFU");
    g_option_context_add_main_entries(ctx, entries, NULL);
    g_option_context_set_description(ctx, run_description);
    int rc = 2;
    StepScenario *sc = NULL;
    if (!cli_parse_options(ctx, entries, &argc, &argv))
        goto out;
    if (argc != 2) {
        rc = cli_usage_error("run: expected one SCENARIO.json (see --help)");
        goto out;
    }
    if (timeline && !*timeline) {
        rc = cli_usage_error("run: --timeline needs a file name");
        goto out;
    }
    if ((rc = cli_report_check("run", report)) != 0)
        goto out;
    const char *ins[] = {argv[1]}, *outs[] = {timeline, report}, *opts[] = {"--timeline", "--report"};
    if ((rc = cli_check_outputs("run", ins, 1, outs, opts, 2)) != 0)
        goto out;
    rc = 2;
    if ((chakra && (!*chakra || export_chakra)) || (export_chakra && !*export_chakra) || (chakra_times && !chakra)) {
        rc = cli_usage_error("run: --chakra DIR replays a trace, --export-chakra DIR writes one: one of them, with a "
                             "directory; --chakra-times goes with --chakra");
        goto out;
    }
    GError *err = NULL;
    sim_progress_begin("run");
    sc = step_scenario_load(argv[1], &err);
    if (!sc) {
        rc = cli_fail(err);
        goto out;
    }
    if (chakra) {
        rc = run_chakra(sc, chakra, chakra_times, json, timeline);
        goto out;
    }
    cJSON *res = step_scenario_run_all(sc, &err);
    sim_progress_end(); /* before any other output */
    if (!res) {
        rc = cli_fail(err);
        goto out;
    }
    if (timeline || export_chakra) {
        /* the first variant once more, keeping its graph */
        SimGraph *g = NULL;
        cJSON *again = step_scenario_run(sc, 0, &g, &err);
        cJSON_Delete(again);
        bool ok = g && (!timeline || timeline_write(g, timeline, NULL, &err)) &&
                  (!export_chakra || chakra_export(g, export_chakra, &err) > 0);
        sim_graph_free(g);
        if (!ok) {
            cJSON_Delete(res);
            rc = cli_fail(err);
            goto out;
        }
    }
    if (report && (rc = write_report(report, cmdline, argv[1], res)) != 0) {
        cJSON_Delete(res);
        goto out;
    }
    rc = 0;
    if (json) {
        cli_print_json(res);
    } else {
        const cJSON *vars = cJSON_GetObjectItem(res, "variants");
        if (vars) {
            const cJSON *v;
            cJSON_ArrayForEach(v, vars)
            {
                print_result(v);
                printf("\n");
            }
            const cJSON *cmp = cJSON_GetObjectItem(res, "comparison");
            printf("%s vs %s: %s is faster, speedup %.3fx (%.4f s per step); memory saved %.2f GiB per device",
                   str(cmp, "other"), str(cmp, "baseline"), str(cmp, "faster"), num(cmp, "speedup"),
                   num(cmp, "step_time_saved_s"), num(cmp, "memory_saved_bytes") / (1024.0 * 1024 * 1024));
            /* the answer to "which wins" must not hide that one cannot run */
            cJSON_ArrayForEach(v, vars)
            {
                if (cJSON_IsFalse(cJSON_GetObjectItem(v, "fits")))
                    printf("; %s does not fit in memory", str(v, "variant"));
            }
            printf("\n");
        } else {
            print_result(res);
        }
        cJSON_Delete(res);
    }
out:
    sim_progress_end();
    step_scenario_free(sc);
    g_free(timeline);
    g_free(report);
    g_strfreev(cmdline);
    g_free(chakra);
    g_free(chakra_times);
    g_free(export_chakra);
    g_option_context_free(ctx);
    return rc;
}
