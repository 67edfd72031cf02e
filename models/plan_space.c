/* The plan's search space: the scenario read once (model, machine, its own
 * configuration as the reference), then every candidate of every GPU count
 * in a fixed order, and the checks that need no run (a degree that does not
 * divide what it splits, more nodes than allowed).  What the scenario's own
 * rules reject is found when a candidate is screened (plan_eval.c). */
#include "plan_internal.h"
#include "scenario.h"
#include "sim_file.h"
#include "sim_json.h"

#include <math.h>
#include <string.h>

#define PLAN_MAX_CANDIDATES 2000000

const char *plan_reason_name(PlanReason r)
{
    static const char *const names[PLAN_NREASONS] = {"ranked", "does not divide", "over the node limit", "invalid",
                                                      "does not fit", "over the time limit",
                                                      "fails faster than it checkpoints", "pruned by the bound"};
    return r >= 0 && r < PLAN_NREASONS ? names[r] : "?";
}

void plan_options_default(PlanOptions *o)
{
    *o = (PlanOptions){.objective = PLAN_OBJ_TIME, .top = 50, .deny = 1u << PLAN_FEAT_OFFLOAD, .memory_fraction = 1};
    plan_match_any(&o->fix);
    PlanTrainInputs *t = &o->train;
    t->tokens = t->price_per_gpu_hour = t->failures_per_gpu_hour = t->restart_s = NAN;
    t->storage_bps_per_gpu = t->checkpoint_interval_s = t->board_watts = t->power_utilisation = t->pue = NAN;
}

bool plan_parse_gpus(const char *text, int *lo, int *hi, GError **err)
{
    char *end = NULL;
    long a = strtol(text, &end, 10), b = a;
    if (end != text && *end == '-') {
        const char *s = end + 1;
        b = strtol(s, &end, 10);
        if (end == s)
            end = (char *)s - 1;
    }
    if (end == text || *end || a < 1 || b < a || b > (1L << 20) || !g_ascii_isdigit(text[0])) {
        g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT,
                    "plan: --gpus %s: give a GPU count (512) or a range LO-HI (256-1024), 1 to %d, LO <= HI", SIM_ECHO(text),
                    1 << 20);
        return false;
    }
    *lo = (int)a;
    *hi = (int)b;
    return true;
}

bool plan_parse_objective(const char *text, PlanObjective *o, GError **err)
{
    static const char *const names[] = {"time", "cost", "throughput"};
    for (int i = 0; i < 3; i++)
        if (!g_ascii_strcasecmp(text, names[i])) {
            *o = (PlanObjective)i;
            return true;
        }
    g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "plan: --objective %s is not one of time, cost, throughput", SIM_ECHO(text));
    return false;
}

char *plan_cand_label(const PlanCand *c)
{
    static const char *const rc[] = {"none", "sel", "full"};
    GString *s = g_string_new(NULL);
    g_string_printf(s, "tp%d pp%d", c->tp, c->pp);
    if (c->vpp > 1)
        g_string_append_printf(s, " v%d", c->vpp);
    if (c->cp > 1)
        g_string_append_printf(s, " cp%d", c->cp);
    g_string_append_printf(s, " dp%d", c->dp);
    if (c->ep > 1)
        g_string_append_printf(s, " ep%d", c->ep);
    g_string_append_printf(s, " mb%d z%d %s%s%s%s%s", c->mb, c->zero, rc[c->recompute], c->sp ? " sp" : "",
                           c->tp_overlap ? " tpov" : "", c->offload ? " offload" : "", c->uneven ? " uneven" : "");
    return g_string_free(s, FALSE);
}

/* Whether the layers do not divide over pp x vpp model chunks: stages of
 * unequal layer counts (a candidate's "uneven"). */
static bool uneven_stages(const Plan *p, int pp, int vpp) { return p->layers % (pp * vpp) != 0; }

/* The scenario's facts the search needs, and its own configuration. */
static bool read_scenario(Plan *p, GError **err)
{
    StepScenario *sc = step_scenario_parse(sim_file_display_name(p->path), p->text, p->text_len, err);
    if (!sc)
        return false;
    const Workload *w = step_scenario_workload(sc);
    const WorkloadTransformer *tr = workload_transformer(w);
    if (!tr) {
        g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "%s: plan searches transformer models; %s is a CNN", p->path,
                    SIM_ECHO(workload_name(w)));
        step_scenario_free(sc);
        return false;
    }
    p->layers = tr->layers, p->heads = tr->heads, p->kv_heads = tr->kv_heads, p->hidden = tr->hidden;
    p->ffn = tr->ffn, p->seq_len = tr->seq_len, p->experts = tr->experts;
    p->etp = step_scenario_plan(sc, 0).etp;
    p->jax = step_scenario_framework(sc) == STEP_FRAMEWORK_JAX;
    p->allocator_fraction = step_scenario_memory_fraction(sc);
    p->rpn = topo_ranks_per_node(step_scenario_topo(sc));
    p->params = workload_params_total(w);
    p->peak_flops = accel_peak_flops(step_scenario_accel(sc), step_scenario_dtype(sc));
    p->hbm_bytes = accel_hbm_bytes(step_scenario_accel(sc));
    p->accel = g_strdup(accel_name(step_scenario_accel(sc)));
    p->model = g_strdup(workload_name(w));
    MemoryPrecision prec = step_scenario_precision(sc);
    p->ckpt_bytes_per_param = memory_param_bytes(prec) +
                              memory_optimizer_state_bytes(step_scenario_optimizer(sc), prec, step_scenario_no_master(sc),
                                                           step_scenario_moment_bytes(sc));
    StepPlan sp = step_scenario_plan(sc, 0);
    WorkloadRecompute rc = sp.recompute;
    if (rc == WORKLOAD_RECOMPUTE_OP || sp.recompute_keep) { /* its candidates would be refused or mislabelled */
        g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT,
                    "%s: plan searches recompute none, selective and full; %s is not searched: %s, or run the scenario "
                    "with 'shardsim run'",
                    p->path,
                    rc == WORKLOAD_RECOMPUTE_OP ? "\"recompute\": \"op\" (PyTorch's per-op checkpointing)"
                                                : "\"recompute_keep\" (named checkpoints under full recomputation)",
                    rc == WORKLOAD_RECOMPUTE_OP ? "set one of those in the scenario" : "leave it out of the scenario");
        step_scenario_free(sc);
        return false;
    }
    p->ref = (PlanCand){.tp = sp.tp, .pp = sp.pp, .vpp = sp.vpp, .cp = sp.cp, .dp = sp.dp, .ep = sp.ep,
                        .mb = step_scenario_micro_batch(sc), .gb = step_scenario_global_batch(sc),
                        .zero = sp.zero_stage, .sp = sp.sequence_parallel, .tp_overlap = sp.tp_comm_overlap, .offload = sp.offload_optimizer,
                        .recompute = rc == WORKLOAD_RECOMPUTE_NONE ? 0 : rc == WORKLOAD_RECOMPUTE_SELECTIVE ? 1 : 2};
    p->ref.gpus = sp.dp * sp.tp * sp.pp * sp.cp;
    p->ref_shard_group = sp.shard_group > 0 && sp.shard_group < sp.dp * sp.cp ? sp.shard_group : 0;
    p->ref.uneven = uneven_stages(p, sp.pp, sp.vpp > 0 ? sp.vpp : 1);
    p->ref_layout = sp.pipeline_layout[0] != 0;
    p->ref_modules = sp.recompute_modules != 0;
    p->ref_local_batch = sp.pp_microbatches * step_scenario_micro_batch(sc);
    p->ref_split = sp.split_embedding + sp.split_loss;
    p->ref.nodes = topo_num_nodes(step_scenario_topo(sc));
    p->ref_variants = step_scenario_num_variants(sc);
    p->ref_variant = g_strdup(step_scenario_variant_label(sc, 0));
    step_scenario_free(sc);
    return true;
}

/* ep over the experts and the dp ranks, or with the scenario's expert_tp
 * below the candidate's tp, over tp x dp (scenario_par.c's MoE folding). */
static bool experts_divide(const Plan *p, const PlanCand *c)
{
    if (p->experts % c->ep)
        return false;
    if (p->etp > 0 && p->etp < c->tp)
        return c->tp % p->etp == 0 && ((long)c->tp * c->dp) % ((long)c->ep * p->etp) == 0;
    return c->dp % c->ep == 0;
}

/* A candidate's pipeline_microbatches: the scenario's local batch in its
 * micro-batches (0: the scenario sets none), -1 where they do not divide it
 * or it does not divide the candidate's micro-batches (a multiple of pp
 * under interleaving). */
int plan_cand_pipeline_microbatches(const Plan *p, const PlanCand *c)
{
    if (p->ref_local_batch <= 0)
        return 0;
    if (p->ref_local_batch % c->mb || c->dp <= 0)
        return -1;
    int n = p->ref_local_batch / c->mb;
    long m = c->gb / ((long)c->dp * c->mb);
    return m % n || (c->vpp > 1 && n % c->pp) ? -1 : n;
}

/* The scenario's pipeline_layout places this candidate's layers: its own
 * pp and virtual stages. */
bool plan_cand_layout(const Plan *p, const PlanCand *c)
{
    return p->ref_layout && c->pp == p->ref.pp && c->vpp == p->ref.vpp;
}

PlanReason plan_space_check(const Plan *p, const PlanCand *c)
{
    if (p->o.max_nodes > 0 && c->nodes > p->o.max_nodes)
        return PLAN_DISCARD_NODES;
    long per = (long)c->tp * c->pp * c->cp;
    /* Megatron's account_for_* split: the counted layers divide evenly */
    int split = c->pp > 1 ? p->ref_split : 0, counted = p->layers + split;
    if (c->nodes == 0 || c->gpus % per || p->heads % c->tp || p->kv_heads % c->tp || p->hidden % c->tp ||
        p->ffn % c->tp || c->pp > p->layers ||
        ((c->vpp > 1 || split) && counted % (c->pp * (c->vpp > 1 ? c->vpp : 1)) && !plan_cand_layout(p, c)))
        return PLAN_DISCARD_DIVIDE;
    if (c->gb % ((long)c->dp * c->mb) || (c->vpp > 1 && plan_cand_micro_batches(c) % c->pp))
        return PLAN_DISCARD_DIVIDE;
    if ((c->sp && (p->seq_len / c->cp) % c->tp) || (c->cp > 1 && p->seq_len % (2 * c->cp)))
        return PLAN_DISCARD_DIVIDE;
    if (c->ep > 1 && !experts_divide(p, c))
        return PLAN_DISCARD_DIVIDE;
    if (c->pp > 1 && plan_cand_pipeline_microbatches(p, c) < 0)
        return PLAN_DISCARD_DIVIDE;
    return PLAN_OK;
}

/* The global batch of a candidate: fixed, or the nearest multiple of
 * dp x micro-batch (x pp for interleaving, which wants m a multiple of pp). */
static int cand_batch(const Plan *p, const PlanCand *c)
{
    int gb0 = p->ref.gb;
    if (!p->o.free_batch || c->dp <= 0)
        return gb0;
    long unit = (long)c->dp * c->mb * (c->vpp > 1 ? c->pp : 1);
    long k = lround((double)gb0 / unit);
    return (int)MIN((k < 1 ? 1 : k) * unit, 1L << 30);
}

static bool add(Plan *p, PlanCand *c, GError **err)
{
    long per = (long)c->tp * c->pp * c->cp;
    c->dp = c->gpus % per ? 0 : (int)(c->gpus / per);
    c->gb = cand_batch(p, c);
    /* --fix, --deny: not searched; nor what a fix could make meaningless
     * (sequence parallelism without tp, tp_comm_overlap without it, offload
     * without ZeRO, virtual stages without a pipeline) */
    if (!plan_cand_allowed(p, c) || (c->sp && c->tp == 1) || (c->tp_overlap && !c->sp) || (c->offload && !c->zero) ||
        (c->vpp > 1 && c->pp == 1))
        return true;
    if (p->cands->len >= PLAN_MAX_CANDIDATES) {
        g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "plan: more than %d candidates; narrow --gpus",
                    PLAN_MAX_CANDIDATES);
        return false;
    }
    g_array_append_val(p->cands, *c);
    return true;
}

/* The values a dimension takes: the fixed one, else the defaults [lo, hi]
 * (doubling or stepping by one) and the scenario's own value when outside
 * them (its configuration is then a candidate: BLOOM's 12 stages, three
 * virtual stages). */
typedef struct {
    int n, v[72];
} Values;

static Values values(const Plan *p, PlanKey k, int lo, int hi, bool doubling, int own)
{
    Values r = {0};
    if (p->o.fix.v[k] >= 0) {
        r.v[r.n++] = p->o.fix.v[k];
        return r;
    }
    bool has_own = own < lo;
    for (int x = lo; x <= hi && r.n < 64; x = doubling ? 2 * x : x + 1) {
        r.v[r.n++] = x;
        has_own = has_own || x == own;
    }
    if (!has_own)
        r.v[r.n++] = own;
    return r;
}

/* Every combination of the options for one (gpus, tp, pp, vpp, cp, ep),
 * less those that run the same step under another label (review 9): with
 * one data-parallel replica there is nothing to shard, so ZeRO stages
 * only at 0; with recompute_modules listed, the modules decide between
 * none and selective, so only the scenario's and full. */
static bool add_options(Plan *p, PlanCand c, GError **err)
{
    bool one_replica = c.gpus / (c.tp * c.pp * c.cp) == 1;
    Values mb = values(p, PLAN_KEY_MB, 1, 8, true, p->ref.mb), z = values(p, PLAN_KEY_ZERO, 0, one_replica ? 0 : 3, false, 0);
    Values rc = values(p, PLAN_KEY_RECOMPUTE, 0, 2, false, 0);
    if (p->ref_modules && p->o.fix.v[PLAN_KEY_RECOMPUTE] < 0)
        rc = (Values){.n = p->ref.recompute == 2 ? 1 : 2, .v = {p->ref.recompute, 2}};
    for (int a = 0; a < mb.n; a++)
        for (int b = 0; b < z.n; b++)
            for (int r = 0; r < rc.n; r++) {
                c.mb = mb.v[a], c.zero = z.v[b], c.recompute = rc.v[r];
                /* sequence parallelism only with tp; tp_comm_overlap needs it; offload needs ZeRO */
                Values sp = values(p, PLAN_KEY_SP, 0, c.tp > 1, false, 0);
                for (int s = 0; s < sp.n; s++) {
                    Values ov = values(p, PLAN_KEY_TPOV, 0, sp.v[s] && !p->jax, false, 0);
                    Values off = values(p, PLAN_KEY_OFFLOAD, 0, !(p->o.deny >> PLAN_FEAT_OFFLOAD & 1u) && c.zero > 0,
                                        false, 0);
                    for (int o = 0; o < ov.n; o++)
                        for (int f = 0; f < off.n; f++) {
                            c.sp = sp.v[s], c.tp_overlap = ov.v[o], c.offload = off.v[f];
                            if (!add(p, &c, err))
                                return false;
                        }
                }
            }
    return true;
}

/* pp: the divisors of the GPUs per tensor-parallel group, up to the layers
 * (stages may hold unequal layers: BLOOM ran 70 layers on 12 stages). */
static bool pp_value(int gpus, int tp, int pp) { return (gpus / tp) % pp == 0; }

static bool add_gpus(Plan *p, int gpus, GError **err)
{
    PlanCand c = {.gpus = gpus};
    c.nodes = gpus % p->rpn == 0 ? gpus / p->rpn : gpus < p->rpn ? 1 : 0;
    /* context parallelism splits sequences into chunks of at least 1024 tokens */
    int cpmax = MIN(8, MAX(1, p->seq_len / 1024)), epmax = p->experts > 1 ? p->experts : 1;
    Values tp = values(p, PLAN_KEY_TP, 1, MIN(p->rpn, gpus), true, p->ref.tp);
    Values cp = values(p, PLAN_KEY_CP, 1, cpmax, true, p->ref.cp), ep = values(p, PLAN_KEY_EP, 1, epmax, true, p->ref.ep);
    for (int t = 0; t < tp.n; t++) {
        c.tp = tp.v[t];
        int fpp = p->o.fix.v[PLAN_KEY_PP];
        for (c.pp = fpp > 0 ? fpp : 1; c.pp <= (fpp > 0 ? fpp : MIN(p->layers, gpus)); c.pp++) {
            if (c.tp > gpus || !pp_value(gpus, c.tp, c.pp))
                continue;
            Values vpp = c.pp > 1 ? values(p, PLAN_KEY_VPP, 1, 4, true, p->ref.vpp) : values(p, PLAN_KEY_VPP, 1, 1, true, 1);
            for (int v = 0; v < vpp.n; v++)
                for (int a = 0; a < cp.n; a++)
                    for (int e = 0; e < ep.n; e++) {
                        c.vpp = vpp.v[v], c.cp = cp.v[a], c.ep = ep.v[e];
                        c.uneven = uneven_stages(p, c.pp, c.vpp);
                        if (!add_options(p, c, err))
                            return false;
                    }
        }
    }
    return true;
}

/* The candidate that is the scenario's own configuration, if searched. */
static int find_ref(const Plan *p)
{
    if (p->ref_shard_group) /* every candidate shards over all its dp ranks */
        return -1;
    for (guint i = 0; i < p->cands->len; i++) {
        const PlanCand *c = &g_array_index(p->cands, PlanCand, i);
        const PlanCand *r = &p->ref;
        if (c->gpus == r->gpus && c->tp == r->tp && c->pp == r->pp && c->vpp == r->vpp && c->cp == r->cp &&
            c->dp == r->dp && c->ep == r->ep && c->mb == r->mb && c->gb == r->gb && c->zero == r->zero &&
            c->recompute == r->recompute && c->sp == r->sp && c->tp_overlap == r->tp_overlap && c->offload == r->offload)
            return (int)i;
    }
    return -1;
}

/* "512" or "256-1024", as --gpus wrote it. */
static char *range_text(int lo, int hi)
{
    return lo == hi ? g_strdup_printf("%d", lo) : g_strdup_printf("%d-%d", lo, hi);
}

/* The GPU counts of --gpus LO-HI: LO, 2 LO, 4 LO, ... and HI. */
static long next_count(long g, long hi) { return g < hi && g * 2 > hi ? hi : g * 2; }

/* A GPU count past one node is whole nodes (add_gpus): a search where no
 * count is says so, rather than discarding every candidate. */
static bool some_whole_nodes(const Plan *p, int lo, int hi, GError **err)
{
    for (long g = lo; g <= hi; g = next_count(g, hi))
        if (g <= p->rpn || g % p->rpn == 0)
            return true;
    char *range = range_text(lo, hi);
    g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT,
                "plan: --gpus %s: a job of more than one node takes whole nodes, %d GPUs each on this topology", range,
                p->rpn);
    g_free(range);
    return false;
}

bool plan_space_build(Plan *p, GError **err)
{
    if (!read_scenario(p, err))
        return false;
    int lo = p->o.gpus_lo > 0 ? p->o.gpus_lo : p->ref.gpus, hi = p->o.gpus_hi > 0 ? p->o.gpus_hi : lo;
    p->cands = g_array_new(FALSE, FALSE, sizeof(PlanCand));
    if (!some_whole_nodes(p, lo, hi, err))
        return false;
    for (long g = lo; g <= hi; g = next_count(g, hi))
        if (!add_gpus(p, (int)g, err))
            return false;
    p->ref_index = find_ref(p);
    if (p->cands->len == 0) {
        char *fix = plan_match_text(&p->o.fix);
        bool denied = p->o.deny != 1u << PLAN_FEAT_OFFLOAD; /* more than the default closes */
        char *who = *fix ? g_strdup_printf("--fix %s%s", fix, denied ? " and --deny leave" : " leaves")
                         : g_strdup(denied ? "--deny leaves" : "the GPU range leaves");
        char *range = range_text(lo, hi);
        /* offload is closed unless --allow opens it: fixing it on finds nothing */
        bool offload = p->o.fix.v[PLAN_KEY_OFFLOAD] == 1 && (p->o.deny & 1u << PLAN_FEAT_OFFLOAD);
        g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "plan: %s no candidate to search on %s GPUs%s", who, range,
                    offload ? " (offload is searched only with --allow offload)" : "");
        g_free(range);
        g_free(who);
        g_free(fix);
        return false;
    }
    return true;
}
