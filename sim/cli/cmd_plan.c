/* shardsim plan: the options of a planner's question, the ranks of an MPI
 * job (--mpi), and the outputs; the search is models/plan*.c. */
#include "cli.h"
#include "plan.h"
#include "sim_data.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const char plan_description[] =
    "Searches the parallel configurations of SCENARIO.json's model on its accelerator and topology:\n"
    "tp, pp, virtual stages, context parallelism, dp, expert parallelism (MoE), micro-batch,\n"
    "ZeRO stage, recomputation, sequence parallelism (and ZeRO-Offload with --allow offload), for\n"
    "each GPU count of --gpus (a range LO-HI takes LO, 2 LO, 4 LO, ... and HI).  Candidates that\n"
    "cannot be valid are counted by reason (does not divide, over the node limit); every other one\n"
    "is screened with the fast model (\"flow_contention\": false), those that do not fit in memory\n"
    "are counted, and the best --top are simulated in full, with contention, and ranked again.\n"
    "The scenario must run as written: its own configuration is the reference, and the output\n"
    "says where it ranks.\n"
    "\n"
    "Time to train: --tokens / (global batch x sequence) steps, plus checkpoint writes (weights and\n"
    "optimizer state over the storage bandwidth, at Young's optimal interval unless given) and\n"
    "failures (per-GPU rate x GPUs; each costs the restart and half an interval of lost work), as\n"
    "goodput.  GPU-hours, cost (--price-per-gpu-hour) and energy (board power x utilisation x\n"
    "PUE).  Defaults and their sources: models/presets/plan.json (also in --json's \"inputs\").\n"
    "\n"
    "--objective time ranks by days to train, cost by dollars, throughput by tokens per GPU-second.\n"
    "--global-batch free lets each candidate round the scenario's global batch to a multiple of\n"
    "its dp x micro-batch (fewer or more steps for the same tokens); fixed (the default) keeps it.\n"
    "The screen simulates the candidates that fit in the order of a lower bound of their step (the\n"
    "busiest pipeline stage's chain of compute and tensor-parallel collectives) and skips those whose\n"
    "bound cannot reach the --top best of their GPU count: the best --top and the Pareto fronts are\n"
    "those of --exhaustive, which simulates them all (and gives every rank exactly).  A step of many\n"
    "micro-batches (16 x pp or more, at least 32), screened or in full, is extrapolated from three\n"
    "shorter ones (2, 4 and 6 x pp, at least 4, 8 and 12): past the pipeline's warm-up each micro-batch\n"
    "adds the same time, so the step is linear in their count (to a few 1e-6, the tolerance the\n"
    "interference of communication with compute is solved to); --exact-steps simulates every step at\n"
    "its own count (slower).\n"
    "Constraints, to ask what a run's software allowed: --fix KEY=VALUE[,...] searches only those\n"
    "values (keys gpus, tp, pp, vpp, cp, dp, ep, mb, zero, recompute none|selective|full, sp, tp_overlap,\n"
    "offload on|off), e.g. --fix recompute=full,zero=0 for Megatron-LM 2021; --deny FEATURE[,...] and\n"
    "--allow FEATURE[,...] close or open selective-recompute, full-recompute, distributed-optimizer\n"
    "(ZeRO 1-3), zero-2, zero-3, sequence-parallel, tp-comm-overlap, interleaving, context-parallel,\n"
    "expert-parallel, uneven-pipeline (stages of unequal layer counts, marked 'uneven'), offload (denied\n"
    "unless allowed; a feature both allowed and denied stays denied).  --locate KEY=VALUE[,...] (repeatable) finds the\n"
    "best candidate that matches, simulates it in full and prints its exact rank, its step and days and\n"
    "how far it is from the best (the screen then also simulates every candidate whose bound beats it).\n"
    "--mpi (under mpirun) splits the candidates over the ranks; the output is the same as one\n"
    "process's.  Exit status: 0 when a configuration is ranked; 2 for bad input or none ranked.";

static int parse_double(const char *opt, const char *text, double lo, double *out)
{
    static const struct {
        char c;
        double f;
    } suffix[] = {{'k', 1e3}, {'K', 1e3}, {'M', 1e6}, {'G', 1e9}, {'g', 1e9}, {'B', 1e9}, {'b', 1e9},
                   {'T', 1e12}, {'t', 1e12}, {'P', 1e15}, {'p', 1e15}}; /* m would read as milli */
    char *end = NULL;
    double v = text ? g_ascii_strtod(text, &end) : NAN;
    if (end && end != text && *end)
        for (size_t i = 0; i < G_N_ELEMENTS(suffix); i++)
            if (*end == suffix[i].c && !end[1]) {
                v *= suffix[i].f;
                end++;
            }
    if (!text || end == text || *end || !isfinite(v) || v < lo || v > 1e30)
        return cli_usage_error("plan: %s must be a number from %g to 1e30 (suffixes k, M, G or B, T, P; in either case "
                               "but M), not '%s'", opt, lo, SIM_ECHO(text ? text : ""));
    *out = v;
    return 0;
}

typedef struct {
    char *gpus, *tokens, *days, *objective, *max_nodes, *price, *batch, *top, *jobs, *csv, *plot, *report;
    char **cmdline;
    char *memfrac;
    char *fail, *restart, *storage, *interval, *watts, *util, *pue;
    char **allow, **deny, **fix, **locate;
    gboolean json, mpi, exhaustive, exact_steps;
} Args;

static void args_free(Args *a)
{
    char **all[] = {&a->gpus, &a->tokens, &a->days, &a->objective, &a->max_nodes, &a->price, &a->batch, &a->top,
                    &a->jobs, &a->csv, &a->plot, &a->fail, &a->restart, &a->storage, &a->interval, &a->watts,
                    &a->util, &a->pue, &a->report, &a->memfrac};
    for (size_t i = 0; i < G_N_ELEMENTS(all); i++)
        g_free(*all[i]);
    g_strfreev(a->allow);
    g_strfreev(a->deny);
    g_strfreev(a->fix);
    g_strfreev(a->locate);
    g_strfreev(a->cmdline);
}

/* One value of a repeatable option (--allow, --deny, --fix, --locate) into o. */
typedef bool (*ListParser)(const char *opt, const char *text, PlanOptions *o, GError **err);

static bool parse_allow(const char *opt, const char *text, PlanOptions *o, GError **err)
{
    return plan_parse_features(opt, text, false, &o->deny, err);
}

static bool parse_deny(const char *opt, const char *text, PlanOptions *o, GError **err)
{
    return plan_parse_features(opt, text, true, &o->deny, err);
}

static bool parse_fix(const char *opt, const char *text, PlanOptions *o, GError **err)
{
    return plan_parse_match(opt, text, &o->fix, err);
}

static bool parse_locate(const char *opt, const char *text, PlanOptions *o, GError **err)
{
    if (o->nlocate == PLAN_MAX_LOCATE) {
        g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "plan: at most %d --locate", PLAN_MAX_LOCATE);
        return false;
    }
    plan_match_any(&o->locate[o->nlocate]);
    return plan_parse_match(opt, text, &o->locate[o->nlocate++], err);
}

/* The options into PlanOptions; 0 or the exit status of a bad one. */
static int read_options(const Args *a, PlanOptions *o)
{
    GError *err = NULL;
    int rc = 0;
    if (a->gpus && !plan_parse_gpus(a->gpus, &o->gpus_lo, &o->gpus_hi, &err))
        return cli_fail(err);
    if (a->objective && !plan_parse_objective(a->objective, &o->objective, &err))
        return cli_fail(err);
    if (a->batch && strcmp(a->batch, "fixed") && strcmp(a->batch, "free"))
        return cli_usage_error("plan: --global-batch %s is not fixed or free", SIM_ECHO(a->batch));
    o->free_batch = a->batch && !strcmp(a->batch, "free");
    o->exhaustive = a->exhaustive;
    o->exact_steps = a->exact_steps;
    /* --allow before --deny: a feature both allowed and denied stays denied */
    const struct {
        const char *opt;
        char **values;
        ListParser parse;
    } lists[] = {{"--allow", a->allow, parse_allow},
                 {"--deny", a->deny, parse_deny},
                 {"--fix", a->fix, parse_fix},
                 {"--locate", a->locate, parse_locate}};
    for (size_t i = 0; i < G_N_ELEMENTS(lists); i++)
        for (char **v = lists[i].values; v && *v; v++)
            if (!lists[i].parse(lists[i].opt, *v, o, &err))
                return cli_fail(err);
    const struct {
        const char *opt, *text;
        int lo, hi, *out;
    } counts[] = {{"--max-nodes", a->max_nodes, 1, 1 << 20, &o->max_nodes},
                  {"--top", a->top, 1, 100000, &o->top},
                  {"--jobs", a->jobs, 1, 4096, &o->jobs}};
    for (size_t i = 0; i < G_N_ELEMENTS(counts); i++)
        if (counts[i].text &&
            (rc = cli_parse_count("plan", counts[i].opt, counts[i].text, counts[i].lo, counts[i].hi, counts[i].out)))
            return rc;
    struct {
        const char *opt, *text;
        double lo, *out;
    } nums[] = {{"--tokens", a->tokens, 1, &o->train.tokens},
                {"--days", a->days, 1e-6, &o->max_days},
                {"--price-per-gpu-hour", a->price, 0, &o->train.price_per_gpu_hour},
                {"--failures-per-gpu-hour", a->fail, 0, &o->train.failures_per_gpu_hour},
                {"--restart-s", a->restart, 0, &o->train.restart_s},
                {"--storage-bw-per-gpu", a->storage, 1, &o->train.storage_bps_per_gpu},
                {"--checkpoint-interval-s", a->interval, 1, &o->train.checkpoint_interval_s},
                {"--board-watts", a->watts, 0, &o->train.board_watts},
                {"--power-utilisation", a->util, 0, &o->train.power_utilisation},
                {"--pue", a->pue, 1, &o->train.pue},
                {"--memory-fraction", a->memfrac, 1e-3, &o->memory_fraction}};
    for (size_t i = 0; i < G_N_ELEMENTS(nums); i++)
        if (nums[i].text && (rc = parse_double(nums[i].opt, nums[i].text, nums[i].lo, nums[i].out)))
            return rc;
    if (o->memory_fraction > 1)
        return cli_usage_error("plan: --memory-fraction %s must be at most 1", SIM_ECHO(a->memfrac));
    if (a->util && o->train.power_utilisation > 1) /* an average draw above the board's rating */
        return cli_usage_error("plan: --power-utilisation %s must be at most 1 (average draw / board power)",
                               SIM_ECHO(a->util));
    return 0;
}

static bool draw_pareto(const char *svg, const void *plan, GError **err)
{
    return plan_plot_pareto((Plan *)plan, svg, err);
}

/* The page of --report: the question, the ranked configurations, the
 * Pareto fronts, the presets' sources, the --json output. */
static int write_report(const Args *a, const char *path, Plan *p)
{
    cJSON *res = plan_result_json(p);
    cJSON *scenario;
    Report *r = cli_report_open("plan", path, a->cmdline, path, &scenario);
    static const ReportColumn cols[] = {
        {"rank", "rank", 0, 0},
        {"configuration", "label", 0, 0},
        {"GPUs", "config.gpus", 0, 0},
        {"step time (s)", "step_time_s", 0, 4},
        {"MFU (%)", "mfu", 100, 1},
        {"memory per device (GiB)", "memory_per_device_bytes", 1.0 / (1 << 30), 2},
        {"days to train", "time_to_train.days", 0, 2},
        {"goodput (%)", "time_to_train.goodput", 100, 1},
        {"GPU-hours", "gpu_hours", 0, -1},
        {"cost ($)", "cost", 0, -1},
    };
    report_add_table(r, "The best configurations, simulated in full", cJSON_GetObjectItem(res, "best"), "best", cols,
                     G_N_ELEMENTS(cols));
    cli_report_plot(r, "Pareto fronts: GPUs and cost against days to train", draw_pareto, p);
    cli_report_step_sources(r, path, scenario, NULL);
    char *def = sim_data_dir("models/presets/plan.json");
    report_add_sources(r, "time-to-train defaults", def);
    g_free(def);
    cJSON_Delete(scenario);
    report_set_json(r, res);
    int rc = cli_report_write(r, a->report);
    cJSON_Delete(res);
    return rc;
}

static int run_plan(const Args *a, const char *path, const PlanOptions *o, SimDist *d)
{
    GError *err = NULL;
    Plan *p = plan_new(path, o, &err);
    if (!p || !plan_run(p, d, &err)) {
        plan_free(p);
        if (sim_dist_is_root(d))
            return cli_fail(err);
        /* the other ranks fail alike, silently: the root says why */
        int code = err && err->domain == SIM_ERROR && err->code == SIM_ERROR_INPUT ? 2 : 1;
        g_clear_error(&err);
        return code;
    }
    int rc = 0;
    if (sim_dist_is_root(d)) {
        if (a->json)
            cli_print_json(plan_result_json(p));
        else
            plan_print_table(p, stdout);
        fflush(stdout);
        int ranked = plan_num_ranked(p);
        double over = plan_fewest_days_over(p);
        if (ranked == 0 && isfinite(over))
            rc = cli_usage_error("plan: no configuration trains within --days %g: the fastest that fits takes %.4g "
                                 "days (see the counts)",
                                 o->max_days, over);
        else if (ranked == 0)
            rc = cli_usage_error("plan: no configuration is valid, fits and meets the limits (see the counts)");
        else if (a->csv && !plan_write_csv(p, a->csv, &err))
            rc = cli_fail(err);
        else if (a->plot && !plan_plot_pareto(p, a->plot, &err))
            rc = cli_fail(err);
        else if (a->report)
            rc = write_report(a, path, p);
    }
    plan_free(p);
    return rc;
}

int cmd_plan(int argc, char **argv)
{
    Args a = {0};
    a.cmdline = cli_command_line(argc, argv); /* before options are taken out */
    GOptionEntry entries[] = {
        {"gpus", 0, 0, G_OPTION_ARG_STRING, &a.gpus, "GPU count or range (default: the scenario's)", "N|LO-HI"},
        {"tokens", 0, 0, G_OPTION_ARG_STRING, &a.tokens, "tokens to train, e.g. 300B or 2t (default: 20 per parameter)", "N"},
        {"days", 0, 0, G_OPTION_ARG_STRING, &a.days, "keep configurations that train within D days", "D"},
        {"objective", 0, 0, G_OPTION_ARG_STRING, &a.objective, "rank by time (default), cost or throughput", "OBJ"},
        {"max-nodes", 0, 0, G_OPTION_ARG_STRING, &a.max_nodes, "at most N nodes", "N"},
        {"price-per-gpu-hour", 0, 0, G_OPTION_ARG_STRING, &a.price, "dollars per GPU-hour", "P"},
        {"global-batch", 0, 0, G_OPTION_ARG_STRING, &a.batch, "fixed (default) or free", "MODE"},
        {"allow", 0, 0, G_OPTION_ARG_STRING_ARRAY, &a.allow, "also search a feature (offload is denied by default)",
         "FEATURE[,...]"},
        {"deny", 0, 0, G_OPTION_ARG_STRING_ARRAY, &a.deny, "do not search a feature (see below)", "FEATURE[,...]"},
        {"fix", 0, 0, G_OPTION_ARG_STRING_ARRAY, &a.fix, "search only candidates with these values", "KEY=V[,...]"},
        {"locate", 0, 0, G_OPTION_ARG_STRING_ARRAY, &a.locate,
         "report the rank, step and gap to the best of the best candidate that matches (exact rank)", "KEY=V[,...]"},
        {"memory-fraction", 0, 0, G_OPTION_ARG_STRING, &a.memfrac,
         "a candidate fits below F x the accelerator's memory (default 1; headroom on top of the scenario's "
         "\"memory_fraction\", its allocator's share)", "F"},
        {"top", 0, 0, G_OPTION_ARG_STRING, &a.top, "simulate the best K in full (default 50)", "K"},
        {"jobs", 'j', 0, G_OPTION_ARG_STRING, &a.jobs, "threads (default: the number of CPUs)", "N"},
        {"json", 0, 0, G_OPTION_ARG_NONE, &a.json, "print one JSON object", NULL},
        {"csv", 0, 0, G_OPTION_ARG_FILENAME, &a.csv, "write every ranked configuration (RFC 4180)", "FILE"},
        {"plot", 0, 0, G_OPTION_ARG_FILENAME, &a.plot, "draw the Pareto fronts", "FILE.png|.svg"},
        {"report", 0, 0, G_OPTION_ARG_FILENAME, &a.report, "write one self-contained HTML page of the plan",
         "FILE.html"},
        {"exhaustive", 0, 0, G_OPTION_ARG_NONE, &a.exhaustive,
         "simulate every candidate that fits (default: skip those whose lower bound cannot rank)", NULL},
        {"exact-steps", 0, 0, G_OPTION_ARG_NONE, &a.exact_steps,
         "simulate every step at its own micro-batch count (default: one of 16 x pp or more from three shorter ones)", NULL},
        {"mpi", 0, 0, G_OPTION_ARG_NONE, &a.mpi, "split the candidates over the ranks of mpirun", NULL},
        {"failures-per-gpu-hour", 0, 0, G_OPTION_ARG_STRING, &a.fail, "failure rate", "R"},
        {"restart-s", 0, 0, G_OPTION_ARG_STRING, &a.restart, "seconds from a failure to training again", "S"},
        {"storage-bw-per-gpu", 0, 0, G_OPTION_ARG_STRING, &a.storage, "checkpoint bytes/s per GPU", "B"},
        {"checkpoint-interval-s", 0, 0, G_OPTION_ARG_STRING, &a.interval, "seconds between checkpoints", "S"},
        {"board-watts", 0, 0, G_OPTION_ARG_STRING, &a.watts, "accelerator board power", "W"},
        {"power-utilisation", 0, 0, G_OPTION_ARG_STRING, &a.util, "average draw / board power", "U"},
        {"pue", 0, 0, G_OPTION_ARG_STRING, &a.pue, "power usage effectiveness", "X"},
        {NULL, 0, 0, 0, NULL, NULL, NULL},
    };
    GOptionContext *ctx = g_option_context_new("SCENARIO.json - the best parallel configuration for a question");
    g_option_context_add_main_entries(ctx, entries, NULL);
    g_option_context_set_description(ctx, plan_description);
    int rc = 2;
    SimDist *d = NULL;
    PlanOptions o;
    plan_options_default(&o);
    if (!cli_parse_options(ctx, entries, &argc, &argv))
        goto out;
    if (argc != 2) {
        rc = cli_usage_error("plan: expected one SCENARIO.json (see --help)");
        goto out;
    }
    if ((rc = read_options(&a, &o)) != 0)
        goto out;
    rc = 2;
    if (a.plot && !g_str_has_suffix(a.plot, ".png") && !g_str_has_suffix(a.plot, ".svg")) {
        rc = cli_usage_error("plan: --plot %s: the file must end in .png or .svg", SIM_ECHO(a.plot));
        goto out;
    }
    if ((rc = cli_report_check("plan", a.report)) != 0)
        goto out;
    const char *ins[] = {argv[1]}, *outs[] = {a.csv, a.plot, a.report}, *opts[] = {"--csv", "--plot", "--report"};
    if ((rc = cli_check_outputs("plan", ins, 1, outs, opts, 3)) != 0)
        goto out;
    GError *err = NULL;
    if (!(d = sim_dist_new(a.mpi, &err))) { /* before any thread starts */
        rc = cli_fail(err);
        goto out;
    }
    rc = run_plan(&a, argv[1], &o, d);
out:
    sim_dist_free(d);
    args_free(&a);
    g_option_context_free(ctx);
    return rc;
}
