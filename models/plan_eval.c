/* Running the plan: each candidate becomes a scenario (the base with nodes,
 * batch and parallelism set through sweep_set_path), screened with the fast
 * model ("flow_contention": false) by the step runner; the ranks of the MPI
 * job (sim_dist.h) each take a block of the candidates to screen, threads
 * share a block (sweep_map), and the results travel as text so that every
 * rank ranks the same list; then the best k are simulated in full (flow
 * contention on) the same way and ranked again.  A step of many
 * micro-batches is, both times, extrapolated from three shorter ones
 * (extrap_base). */
#include "plan_internal.h"
#include "sim_file.h"
#include "sim_time.h"
#include "step.h"
#include "sweep.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const char *const rc_names[] = {"none", "selective", "full"};

static void set_num(cJSON *root, const char *key, double v)
{
    sweep_set_path(root, key, cJSON_CreateNumber(v), NULL); /* the base is an object: cannot fail */
}

/* "pipeline_microbatches" says how many samples one pipeline schedule
 * takes (PyTorch's local batch: that x the scenario's micro-batch), which a
 * candidate keeps in its own micro-batches (plan_space_check discards those
 * that cannot); none without a pipeline. */
static void pipeline_batch(const Plan *p, const PlanCand *c, cJSON *par)
{
    int n = plan_cand_pipeline_microbatches(p, c);
    if (!cJSON_GetObjectItemCaseSensitive(par, "pipeline_microbatches"))
        return;
    if (c->pp == 1 || n <= 0)
        cJSON_DeleteItemFromObjectCaseSensitive(par, "pipeline_microbatches");
    else
        cJSON_SetNumberValue(cJSON_GetObjectItemCaseSensitive(par, "pipeline_microbatches"), n);
}

cJSON *plan_cand_scenario(const Plan *p, const PlanCand *c, bool full)
{
    cJSON *s = cJSON_Duplicate(p->base, true);
    /* searched keys and those whose meaning they would contradict go; the
     * rest of the base's "parallelism" (schedule, bucket_bytes, ...) stays */
    cJSON *par = cJSON_GetObjectItemCaseSensitive(s, "parallelism");
    static const char *const drop[] = {"weight_update", "allgather_overlap", "shard_group", "ep", "cp",
                                       "virtual_stages", "offload_optimizer", "host_memory_bandwidth"};
    for (size_t i = 0; cJSON_IsObject(par) && i < G_N_ELEMENTS(drop); i++)
        cJSON_DeleteItemFromObjectCaseSensitive(par, drop[i]);
    /* the checkpoints go to the host only under full recomputation; the
     * host link's bandwidth stays while anything crosses it */
    if (cJSON_IsObject(par) && strcmp(rc_names[c->recompute], "full") != 0) {
        cJSON_DeleteItemFromObjectCaseSensitive(par, "cpu_checkpointing");
        cJSON_DeleteItemFromObjectCaseSensitive(par, "cpu_checkpointing_copy");
    }
    bool host_link = c->offload || cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(par, "cpu_checkpointing")) ||
                     cJSON_GetObjectItemCaseSensitive(par, "cpu_offloading_num_layers");
    if (cJSON_IsObject(par) && !host_link)
        cJSON_DeleteItemFromObjectCaseSensitive(par, "pcie_bandwidth");
    pipeline_batch(p, c, par);
    if (cJSON_IsObject(par) && !plan_cand_layout(p, c)) /* the layout is for the scenario's pp x vpp */
        cJSON_DeleteItemFromObjectCaseSensitive(par, "pipeline_layout");
    if (cJSON_IsObject(par) && c->pp == 1) { /* the split keys need a pipeline */
        cJSON_DeleteItemFromObjectCaseSensitive(par, "account_for_embedding_in_pipeline_split");
        cJSON_DeleteItemFromObjectCaseSensitive(par, "account_for_loss_in_pipeline_split");
    }
    cJSON_DeleteItemFromObjectCaseSensitive(s, "placement");
    cJSON_DeleteItemFromObjectCaseSensitive(s, "placement_seed");
    set_num(s, "nodes", c->nodes);
    set_num(s, "global_batch", c->gb);
    set_num(s, "micro_batch", c->mb);
    sweep_set_path(s, "flow_contention", cJSON_CreateBool(full), NULL);
    set_num(s, "parallelism.dp", c->dp);
    set_num(s, "parallelism.tp", c->tp);
    set_num(s, "parallelism.pp", c->pp);
    set_num(s, "parallelism.zero_stage", c->zero);
    sweep_set_path(s, "parallelism.recompute", cJSON_CreateString(rc_names[c->recompute]), NULL);
    sweep_set_path(s, "parallelism.sequence_parallel", cJSON_CreateBool(c->sp), NULL);
    sweep_set_path(s, "parallelism.tp_comm_overlap", cJSON_CreateBool(c->tp_overlap), NULL);
    if (c->vpp > 1)
        set_num(s, "parallelism.virtual_stages", c->vpp);
    if (c->cp > 1)
        set_num(s, "parallelism.cp", c->cp);
    if (c->ep > 1)
        set_num(s, "parallelism.ep", c->ep);
    if (c->offload) {
        sweep_set_path(s, "parallelism.offload_optimizer", cJSON_CreateTrue(), NULL);
        const cJSON *hm = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(p->base, "parallelism"),
                                                           "host_memory_bandwidth");
        if (hm)
            sweep_set_path(s, "parallelism.host_memory_bandwidth", cJSON_Duplicate(hm, true), NULL);
    }
    return s;
}

/* "NAME:LINE: msg" -> "msg": the generated scenario's lines mean nothing. */
static const char *strip_prefix(const char *msg, const char *name)
{
    size_t n = strlen(name);
    if (strncmp(msg, name, n) || msg[n] != ':')
        return msg;
    const char *q = msg + n + 1;
    while (g_ascii_isdigit(*q))
        q++;
    return *q == ':' ? q + 2 : q;
}

typedef enum { EVAL_ESTIMATE, EVAL_SCREEN, EVAL_FULL } EvalMode;

/* Candidate i as a parsed scenario, at global batch gb (0: its own). */
static StepScenario *cand_parse(const Plan *p, int i, int gb, bool full, const char *name, GError **err)
{
    cJSON *sc = plan_cand_scenario(p, &g_array_index(p->cands, PlanCand, i), full);
    if (gb > 0)
        set_num(sc, "global_batch", gb);
    char *text = cJSON_PrintUnformatted(sc);
    cJSON_Delete(sc);
    StepScenario *ss = step_scenario_parse_cached(name, text, strlen(text), p->cache, err);
    cJSON_free(text);
    return ss;
}

/* The shortest micro-batch count m1 a step of m is extrapolated from (its
 * steps at m1, 2 m1 and 3 m1), where that saves at least a quarter of its
 * passes; 0: none.  Past the pipeline's warm-up every micro-batch adds the
 * same passes and traffic (1F1B's steady state, GPipe's, gradient
 * accumulation's without a pipeline), so the step is linear in m from
 * there: warm-up, drain, gradient sync and optimizer are its intercept.
 * m1 is a multiple of pp (interleaving needs one) of at least 2 pp, past
 * every stage's warm-up.  tests/test_plan.c checks it against the step at m. */
static int extrap_base(const Plan *p, int i)
{
    const PlanCand *c = &g_array_index(p->cands, PlanCand, i);
    int m = plan_cand_micro_batches(c), lo = MAX(2 * c->pp, 4), m1 = (lo + c->pp - 1) / c->pp * c->pp;
    /* a step whose bound passes the simulator's range is refused at m,
     * before its graph is built */
    bool in_range = p->res[i].lb_s < sim_time_to_s(SIM_TIME_NEVER);
    return !p->o.exact_steps && m >= 8 * m1 && in_range ? m1 : 0;
}

static double num(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

/* The most the three steps may leave a line, relative to the longest: each
 * is solved to 1e-6 (step_interfere.c), which moves the middle one's
 * second difference by up to about 4e-6 */
#define EXTRAP_LINEAR 1e-5

/* Candidate i's step from its steps at m1, 2 m1 and 3 m1 micro-batches
 * (extrap_base), in eval_text's form; throughput and MFU scale with the
 * batch, memory is the estimate's (the run's own, at the candidate's m).
 * NULL where one fails, the three are not on a line or the step passes
 * the simulator's range: it is then simulated at m (which says what is
 * wrong). */
static char *eval_extrapolated(const Plan *p, int i, int m1, bool full, const char *name)
{
    const PlanCand *c = &g_array_index(p->cands, PlanCand, i);
    double t[3], rate = 0, tokens = 0, band[2] = {1, 1}, m = plan_cand_micro_batches(c);
    for (int k = 0; k < 3; k++) {
        int mk = (k + 1) * m1;
        GError *err = NULL;
        StepScenario *ss = cand_parse(p, i, mk * c->dp * c->mb, full, name, &err);
        cJSON *r = ss ? step_scenario_run_all(ss, &err) : NULL;
        step_scenario_free(ss);
        if (!r) { /* the step at m says what is wrong, in its own words */
            g_clear_error(&err);
            return NULL;
        }
        t[k] = num(r, "step_time_s");
        if (k == 2) { /* MFU and tokens/s x step at m: both grow with the batch; the band as at 3 m1 */
            rate = num(r, "mfu") * t[k] * m / mk;
            tokens = num(r, "tokens_per_s") * t[k] * m / mk;
            band[0] = num(r, "step_time_p10_s") / t[k];
            band[1] = num(r, "step_time_p90_s") / t[k];
        }
        cJSON_Delete(r);
    }
    if (!(fabs(t[2] - 2 * t[1] + t[0]) <= EXTRAP_LINEAR * t[2]))
        return NULL;
    /* from the later two, furthest from the warm-up (where interference
     * still settles, a step of 2 pp micro-batches can sit 1e-5 off) */
    double step = t[2] + (m - 3 * m1) * (t[2] - t[1]) / m1;
    if (!(step < sim_time_to_s(SIM_TIME_NEVER)))
        return NULL;
    /* fits: a candidate screened or run in full fitted in the estimate */
    return g_strdup_printf("ok %.17g %.17g %.17g %.17g 1 1 %.17g %.17g", step, rate / step, p->res[i].mem_bytes,
                           tokens / step, band[0], band[1]);
}

/* One candidate's result as one line of text, the form it crosses ranks in:
 * "est MEM FITS LOWER_BOUND", "ok STEP MFU MEM TOKENS FITS EXTRAPOLATED
 * P10/STEP P90/STEP" or "err REASON MESSAGE". */
static char *eval_text(const Plan *p, int i, EvalMode mode)
{
    char name[32];
    snprintf(name, sizeof name, "plan#%d", i);
    GError *err = NULL;
    StepEstimate e;
    cJSON *r = NULL;
    char *out = NULL;
    int m1 = mode == EVAL_ESTIMATE ? 0 : extrap_base(p, i);
    if (m1 > 0)
        out = eval_extrapolated(p, i, m1, mode == EVAL_FULL, name);
    if (!out) {
        StepScenario *ss = cand_parse(p, i, 0, mode == EVAL_FULL, name, &err);
        if (ss && mode == EVAL_ESTIMATE) {
            if (step_scenario_estimate(ss, 0, &e, &err))
                out = g_strdup_printf("est %.17g %d %.17g", e.memory_bytes, e.fits, e.step_lower_bound_s);
        } else if (ss) {
            r = step_scenario_run_all(ss, &err);
        }
        step_scenario_free(ss);
    }
    if (out)
        return out;
    if (!r) {
        const char *msg = strip_prefix(err->message, name);
        const cJSON *nm = cJSON_GetObjectItemCaseSensitive(p->base, "name");
        if (cJSON_IsString(nm))
            msg = strip_prefix(msg, nm->valuestring);
        PlanReason why = strstr(msg, "divide") || strstr(msg, "multiple") ? PLAN_DISCARD_DIVIDE : PLAN_DISCARD_INVALID;
        out = g_strdup_printf("err %d %s", (int)why, msg);
        g_error_free(err);
        return out;
    }
    const cJSON *mj = cJSON_GetObjectItemCaseSensitive(r, "memory_per_device_bytes");
    double step = num(r, "step_time_s");
    out = g_strdup_printf("ok %.17g %.17g %.17g %.17g %d 0 %.17g %.17g", step, num(r, "mfu"), num(mj, "total"),
                          num(r, "tokens_per_s"), cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r, "fits")),
                          step > 0 ? num(r, "step_time_p10_s") / step : 1, step > 0 ? num(r, "step_time_p90_s") / step : 1);
    cJSON_Delete(r);
    return out;
}

static void read_text(const Plan *p, PlanResult *res, const char *text, EvalMode mode)
{
    g_free(res->error);
    res->error = NULL;
    if (!strncmp(text, "err ", 4)) {
        char *end = NULL;
        res->reason = (PlanReason)strtol(text + 4, &end, 10);
        res->error = g_strdup(end && *end ? end + 1 : "");
        return;
    }
    int fits = 0, extrap = 0;
    bool ok = mode == EVAL_ESTIMATE
                  ? sscanf(text, "est %lg %d %lg", &res->mem_bytes, &fits, &res->lb_s) == 3
                  : sscanf(text, "ok %lg %lg %lg %lg %d %d %lg %lg", &res->step_s, &res->mfu, &res->mem_bytes,
                           &res->tokens_per_s, &fits, &extrap, &res->band[0], &res->band[1]) == 8;
    if (!ok) {
        res->reason = PLAN_DISCARD_INVALID;
        res->error = g_strdup("unreadable result");
        return;
    }
    /* --memory-fraction: headroom the memory model does not see (allocator
     * fragmentation, framework buffers) */
    bool room = p->o.memory_fraction >= 1 || res->mem_bytes <= p->o.memory_fraction * p->hbm_bytes;
    res->reason = fits && room ? PLAN_OK : PLAN_DISCARD_FIT;
    res->full = mode == EVAL_FULL;
    if (mode == EVAL_SCREEN)
        res->screen_s = res->step_s;
    res->extrap[mode == EVAL_FULL] = extrap;
}

typedef struct {
    const Plan *p;
    const int *idx; /* candidates of this block */
    char **out;
    EvalMode mode;
} Block;

static void block_one(int k, void *user)
{
    Block *b = user;
    b->out[k] = eval_text(b->p, b->idx[k], b->mode);
}

/* Runs candidates idx[0..n) spread over the ranks; results in order. */
static bool eval_all(Plan *p, SimDist *d, const int *idx, int n, EvalMode mode, GError **err)
{
    size_t lo, hi;
    sim_dist_block(d, (size_t)n, &lo, &hi);
    int mine = (int)(hi - lo);
    char **out = g_new0(char *, mine ? mine : 1);
    size_t *len = g_new0(size_t, mine ? mine : 1);
    Block b = {p, idx + lo, out, mode};
    sweep_map(mine, p->o.jobs, block_one, &b, NULL, NULL);
    for (int k = 0; k < mine; k++)
        len[k] = strlen(out[k]);
    size_t *lens = NULL;
    char **all = sim_dist_allgather(d, (size_t)n, out, len, TRUE, NULL, &lens, err);
    for (int k = 0; k < mine; k++)
        g_free(out[k]);
    g_free(out);
    g_free(len);
    if (!all)
        return false;
    for (int k = 0; k < n; k++)
        read_text(p, &p->res[idx[k]], all[k], mode);
    sim_dist_results_free(all, (size_t)n, lens);
    return true;
}

/* The objective a step time gives a candidate (smaller is better). */
static double objective_at(const Plan *p, int i, double step_s)
{
    PlanResult r = p->res[i];
    const PlanCand *c = &g_array_index(p->cands, PlanCand, i);
    plan_train_compute(p, c, step_s, &r.t);
    return plan_objective_value(p, c, &r);
}

/* The k best screened objectives of each GPU count, sorted (a candidate
 * whose bound is no better than its count's k-th cannot enter its top k, nor
 * the global top k, nor a Pareto front: each front's points are the fastest
 * of their GPU count). */
typedef struct {
    int gpus, n;
    double *best;
} Kth;

static Kth *kth_of(GArray *ks, int gpus, int k)
{
    for (guint j = 0; j < ks->len; j++)
        if (g_array_index(ks, Kth, j).gpus == gpus)
            return &g_array_index(ks, Kth, j);
    Kth z = {gpus, 0, g_new(double, k)};
    g_array_append_val(ks, z);
    return &g_array_index(ks, Kth, ks->len - 1);
}

static void kth_add(Kth *t, int k, double v)
{
    if (t->n == k && v >= t->best[k - 1])
        return;
    int j = t->n < k ? t->n++ : k - 1;
    t->best[j] = v;
    for (; j > 0 && t->best[j] < t->best[j - 1]; j--) {
        double x = t->best[j];
        t->best[j] = t->best[j - 1];
        t->best[j - 1] = x;
    }
}

static double kth_value(const Kth *t, int k) { return t->n < k ? INFINITY : t->best[k - 1]; }

typedef struct {
    double lb;
    int i;
} Bound;

static int by_bound(const void *a, const void *b)
{
    const Bound *u = a, *v = b;
    if (u->lb != v->lb)
        return u->lb < v->lb ? -1 : 1;
    return u->i - v->i;
}

#define PLAN_ROUND 64 /* candidates screened between updates of the bound: fixed, so output never depends on ranks */

/* Screens every candidate that matches a --locate (and fits); returns the
 * worst over the locations of their best objective (-inf: none), the value
 * a bound must beat not to be pruned, so that each location's rank is exact. */
static bool screen_located(Plan *p, SimDist *d, bool *done, GArray *ks, int k, double *worst, GError **err)
{
    *worst = -INFINITY;
    if (p->o.nlocate == 0)
        return true;
    GArray *idx = g_array_new(FALSE, FALSE, sizeof(int));
    for (int i = 0; i < (int)p->cands->len; i++)
        for (int l = 0; l < p->o.nlocate; l++)
            if (p->res[i].reason == PLAN_OK && plan_match(&p->o.locate[l], &g_array_index(p->cands, PlanCand, i))) {
                g_array_append_val(idx, i);
                done[i] = true;
                break;
            }
    bool ok = eval_all(p, d, (const int *)(void *)idx->data, (int)idx->len, EVAL_SCREEN, err);
    p->nsim += (int)idx->len;
    for (int l = 0; ok && l < p->o.nlocate; l++) {
        double best = INFINITY;
        for (guint j = 0; j < idx->len; j++) {
            int i = g_array_index(idx, int, j);
            const PlanCand *c = &g_array_index(p->cands, PlanCand, i);
            if (p->res[i].reason == PLAN_OK && plan_match(&p->o.locate[l], c))
                best = MIN(best, objective_at(p, i, p->res[i].step_s));
        }
        if (isfinite(best))
            *worst = MAX(*worst, best);
    }
    for (guint j = 0; ok && j < idx->len; j++) {
        int i = g_array_index(idx, int, j);
        if (p->res[i].reason == PLAN_OK)
            kth_add(kth_of(ks, g_array_index(p->cands, PlanCand, i).gpus, k), k, objective_at(p, i, p->res[i].step_s));
    }
    g_array_free(idx, TRUE);
    return ok;
}

/* Screens the candidates that fit, best bound first, in rounds; stops
 * where no bound can beat its GPU count's k-th best nor a location's best
 * (all, if exhaustive). */
static bool screen(Plan *p, SimDist *d, GError **err)
{
    int n = (int)p->cands->len, k = MAX(p->o.top, 1), nb = 0;
    Bound *b = g_new(Bound, n ? n : 1);
    for (int i = 0; i < n; i++)
        if (p->res[i].reason == PLAN_OK)
            b[nb++] = (Bound){objective_at(p, i, p->res[i].lb_s), i};
    qsort(b, (size_t)nb, sizeof *b, by_bound);
    GArray *ks = g_array_new(FALSE, FALSE, sizeof(Kth));
    int *batch = g_new(int, PLAN_ROUND + 1);
    bool *done = g_new0(bool, n ? n : 1);
    double located = -INFINITY;
    bool ok = screen_located(p, d, done, ks, k, &located, err);
    int next = 0;
    bool ref_done = p->ref_index < 0 || p->res[p->ref_index].reason != PLAN_OK || done[p->ref_index];
    while (ok && next < nb) {
        int m = 0;
        if (!ref_done) /* the scenario's own configuration is always screened */
            batch[m++] = p->ref_index;
        ref_done = true;
        for (; next < nb && m < PLAN_ROUND; next++) {
            int i = b[next].i;
            if (i == p->ref_index || done[i])
                continue;
            /* strictly worse: a tie could still win on the candidate order */
            double kth = kth_value(kth_of(ks, g_array_index(p->cands, PlanCand, i).gpus, k), k);
            if (!p->o.exhaustive && b[next].lb > MAX(kth, located))
                p->res[i].reason = PLAN_PRUNED;
            else
                batch[m++] = i;
        }
        ok = eval_all(p, d, batch, m, EVAL_SCREEN, err);
        p->nsim += m;
        for (int j = 0; ok && j < m; j++) {
            const PlanResult *r = &p->res[batch[j]];
            if (r->reason == PLAN_OK)
                kth_add(kth_of(ks, g_array_index(p->cands, PlanCand, batch[j]).gpus, k), k,
                        objective_at(p, batch[j], r->step_s));
        }
    }
    for (guint j = 0; j < ks->len; j++)
        g_free(g_array_index(ks, Kth, j).best);
    g_array_free(ks, TRUE);
    g_free(batch);
    g_free(done);
    g_free(b);
    return ok;
}

/* The best ranked candidate of each --locate (-1: none), and how many match. */
static void find_located(Plan *p)
{
    for (int l = 0; l < p->o.nlocate; l++) {
        p->loc[l] = -1;
        p->loc_matches[l] = 0;
        for (int k = 0; k < p->nranked && p->loc[l] < 0; k++)
            if (plan_match(&p->o.locate[l], &g_array_index(p->cands, PlanCand, p->order[k])))
                p->loc[l] = p->order[k];
        for (guint i = 0; i < p->cands->len; i++)
            p->loc_matches[l] += plan_match(&p->o.locate[l], &g_array_index(p->cands, PlanCand, i));
    }
}

static void add_once(GArray *a, int i)
{
    for (guint j = 0; j < a->len; j++)
        if (g_array_index(a, int, j) == i)
            return;
    g_array_append_val(a, i);
}

bool plan_run(Plan *p, SimDist *d, GError **err)
{
    int n = (int)p->cands->len;
    p->res = g_new0(PlanResult, n ? n : 1);
    GArray *todo = g_array_new(FALSE, FALSE, sizeof(int));
    for (int i = 0; i < n; i++) {
        const PlanCand *c = &g_array_index(p->cands, PlanCand, i);
        p->res[i].reason = plan_space_check(p, c);
        /* failures against checkpoints, whatever the step takes: a step of
         * 0 s loses least (a restart per failure and no work), so a
         * candidate that cannot finish at it finishes at no step.  plan_rank
         * prices it at that step again (step_s stays 0): it stays discarded */
        if (p->res[i].reason == PLAN_OK) {
            PlanTrain t;
            plan_train_compute(p, c, 0, &t);
            if (!isfinite(t.wall_s))
                p->res[i].reason = PLAN_DISCARD_FAIL; /* never simulated */
        }
        if (p->res[i].reason == PLAN_OK)
            g_array_append_val(todo, i);
    }
    /* memory and the bound of every candidate, then the step of those that may rank */
    bool ok = eval_all(p, d, (const int *)(void *)todo->data, (int)todo->len, EVAL_ESTIMATE, err);
    g_array_free(todo, TRUE);
    if (!ok || !screen(p, d, err))
        return false;
    plan_rank(p);
    /* the best k again in full, and the scenario's own configuration */
    int k = MIN(p->o.top, p->nranked);
    GArray *best = g_array_new(FALSE, FALSE, sizeof(int));
    g_array_append_vals(best, p->order, (guint)k);
    bool ref_in = false;
    for (int j = 0; j < k; j++) {
        ref_in = ref_in || p->order[j] == p->ref_index;
        p->res[p->order[j]].top = true;
    }
    if (p->ref_index >= 0 && !ref_in && p->res[p->ref_index].reason == PLAN_OK)
        g_array_append_val(best, p->ref_index);
    find_located(p); /* by the screen: each location's best in full too */
    for (int l = 0; l < p->o.nlocate; l++)
        if (p->loc[l] >= 0)
            add_once(best, p->loc[l]);
    ok = eval_all(p, d, (const int *)(void *)best->data, (int)best->len, EVAL_FULL, err);
    g_array_free(best, TRUE);
    if (!ok)
        return false;
    p->nfull = k;
    plan_rank(p);
    find_located(p);
    return true;
}

Plan *plan_new(const char *path, const PlanOptions *o, GError **err)
{
    Plan *p = g_new0(Plan, 1);
    p->path = g_strdup(path);
    p->o = *o;
    p->ref_index = -1;
    p->cache = step_cache_new();
    /* read once: the scenario and the candidates' base are the same bytes
     * (and standard input can be read only once) */
    p->text = sim_file_read(path, SIM_FILE_JSON_MAX, "JSON input", &p->text_len, err);
    if (!p->text || !plan_space_build(p, err)) {
        plan_free(p);
        return NULL;
    }
    p->base = cJSON_ParseWithLength(p->text, p->text_len); /* parsed as a scenario above: valid JSON */
    if (!p->base || !plan_train_defaults(p, err)) {
        if (!p->base)
            g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "%s: cannot read the scenario again", path);
        plan_free(p);
        return NULL;
    }
    return p;
}

int plan_num_candidates(const Plan *p) { return (int)p->cands->len; }

void plan_free(Plan *p)
{
    if (!p)
        return;
    for (guint i = 0; p->res && i < p->cands->len; i++)
        g_free(p->res[i].error);
    g_free(p->res);
    g_free(p->order);
    if (p->cands)
        g_array_free(p->cands, TRUE);
    cJSON_Delete(p->base);
    step_cache_free(p->cache);
    cJSON_Delete(p->sources);
    g_free(p->accel);
    g_free(p->model);
    g_free(p->ref_variant);
    g_free(p->path);
    g_free(p->text);
    g_free(p);
}
