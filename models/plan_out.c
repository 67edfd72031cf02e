/* The plan's answer: candidates ranked by the objective (the best k by
 * their full simulation, the rest by the screen), counts of the discarded
 * by reason, the Pareto fronts (GPUs against days, cost against days), and
 * the table, JSON, CSV and plot of all that. */
#include "plan_internal.h"
#include "plot.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GIB (1024.0 * 1024 * 1024)

static const Plan *sort_plan; /* qsort has no user pointer; plan_rank holds it only while sorting */

static int by_value(const void *a, const void *b)
{
    int i = *(const int *)a, j = *(const int *)b;
    const PlanResult *ri = &sort_plan->res[i], *rj = &sort_plan->res[j];
    if (ri->top != rj->top)
        return ri->top ? -1 : 1;
    double vi = plan_objective_value(sort_plan, &g_array_index(sort_plan->cands, PlanCand, i), ri);
    double vj = plan_objective_value(sort_plan, &g_array_index(sort_plan->cands, PlanCand, j), rj);
    if (vi != vj)
        return vi < vj ? -1 : 1;
    /* equal objectives (a cost at $0 an hour, say): the faster first (review 9) */
    if (ri->t.wall_s != rj->t.wall_s)
        return ri->t.wall_s < rj->t.wall_s ? -1 : 1;
    return i < j ? -1 : i > j;
}

static GMutex sort_lock;

void plan_rank(Plan *p)
{
    int n = (int)p->cands->len;
    memset(p->counts, 0, sizeof p->counts);
    g_free(p->order);
    p->order = g_new(int, n ? n : 1);
    p->nranked = 0;
    for (int i = 0; i < n; i++) {
        PlanResult *r = &p->res[i];
        const PlanCand *c = &g_array_index(p->cands, PlanCand, i);
        if (r->reason == PLAN_OK || r->reason == PLAN_DISCARD_DAYS || r->reason == PLAN_DISCARD_FAIL) {
            /* outside the best k the screen ranks, also for a candidate run in full (the reference) */
            plan_train_compute(p, c, r->top || !r->full ? r->step_s : r->screen_s, &r->t);
            r->reason = !isfinite(r->t.wall_s)                            ? PLAN_DISCARD_FAIL
                        : p->o.max_days > 0 && r->t.days > p->o.max_days ? PLAN_DISCARD_DAYS
                                                                          : PLAN_OK;
        }
        p->counts[r->reason]++;
        if (r->reason == PLAN_OK)
            p->order[p->nranked++] = i;
    }
    g_mutex_lock(&sort_lock);
    sort_plan = p;
    qsort(p->order, (size_t)p->nranked, sizeof(int), by_value);
    sort_plan = NULL;
    g_mutex_unlock(&sort_lock);
}

int plan_num_ranked(const Plan *p) { return p->nranked; }

double plan_fewest_days_over(const Plan *p)
{
    double best = NAN;
    for (guint i = 0; i < p->cands->len; i++)
        if (p->res[i].reason == PLAN_DISCARD_DAYS && !(p->res[i].t.days >= best))
            best = p->res[i].t.days;
    return best;
}

static int rank_of(const Plan *p, int cand)
{
    for (int k = 0; k < p->nranked; k++)
        if (p->order[k] == cand)
            return k + 1;
    return 0;
}

/* A rank is exact within the best k, or when nothing was pruned: a pruned
 * candidate's bound was no better than the k-th best of its GPU count. */
static bool rank_exact(const Plan *p, int rank)
{
    return rank > 0 && (rank <= p->nfull || p->counts[PLAN_PRUNED] == 0);
}

static void add_num(cJSON *o, const char *key, double v)
{
    if (isfinite(v))
        cJSON_AddNumberToObject(o, key, v);
    else
        cJSON_AddNullToObject(o, key);
}

/* `t`: the time to train to show (NULL: the one it ranks by). */
static cJSON *cand_json(const Plan *p, int i, int rank, const PlanTrain *tt)
{
    static const char *const rc[] = {"none", "selective", "full"};
    const PlanCand *c = &g_array_index(p->cands, PlanCand, i);
    const PlanResult *r = &p->res[i];
    cJSON *o = cJSON_CreateObject();
    if (rank > 0)
        cJSON_AddNumberToObject(o, "rank", rank);
    char *label = plan_cand_label(c);
    cJSON_AddStringToObject(o, "label", label);
    g_free(label);
    cJSON *cfg = cJSON_AddObjectToObject(o, "config");
    const char *keys[] = {"gpus", "nodes", "tp", "pp", "virtual_stages", "cp", "dp", "ep", "micro_batch",
                          "global_batch", "zero_stage"};
    int vals[] = {c->gpus, c->nodes, c->tp, c->pp, c->vpp, c->cp, c->dp, c->ep, c->mb, c->gb, c->zero};
    for (size_t k = 0; k < G_N_ELEMENTS(keys); k++)
        cJSON_AddNumberToObject(cfg, keys[k], vals[k]);
    cJSON_AddStringToObject(cfg, "recompute", rc[c->recompute]);
    cJSON_AddBoolToObject(cfg, "sequence_parallel", c->sp);
    cJSON_AddBoolToObject(cfg, "tp_comm_overlap", c->tp_overlap);
    cJSON_AddBoolToObject(cfg, "offload_optimizer", c->offload);
    cJSON_AddBoolToObject(o, "simulated_in_full", r->full);
    add_num(o, "step_time_s", r->step_s);
    /* run's p10-p90 of the step (docs/UNCERTAINTY.md): days, cost and energy are the prediction's */
    add_num(o, "step_time_p10_s", r->step_s * r->band[0]);
    add_num(o, "step_time_p90_s", r->step_s * r->band[1]);
    add_num(o, "screen_step_time_s", r->screen_s);
    cJSON_AddBoolToObject(o, "step_extrapolated", r->extrap[r->full]);
    add_num(o, "step_lower_bound_s", r->lb_s);
    add_num(o, "mfu", r->mfu);
    add_num(o, "memory_per_device_bytes", r->mem_bytes);
    add_num(o, "tokens_per_s", r->tokens_per_s);
    const PlanTrain *tr = tt ? tt : &r->t;
    cJSON *t = cJSON_AddObjectToObject(o, "time_to_train");
    add_num(t, "steps", tr->steps);
    add_num(t, "compute_s", tr->compute_s);
    add_num(t, "checkpoint_bytes", tr->checkpoint_bytes);
    add_num(t, "checkpoint_write_s", tr->checkpoint_write_s);
    add_num(t, "checkpoint_interval_s", tr->checkpoint_interval_s);
    add_num(t, "goodput", tr->goodput);
    add_num(t, "wall_s", tr->wall_s);
    add_num(t, "days", tr->days);
    add_num(o, "gpu_hours", tr->gpu_hours);
    add_num(o, "cost", tr->cost);
    add_num(o, "energy_j", tr->energy_j);
    return o;
}

typedef struct {
    double x, y;
    int k;
} XY;

static int by_xy(const void *a, const void *b)
{
    const XY *u = a, *v = b;
    if (u->x != v->x)
        return u->x < v->x ? -1 : 1;
    if (u->y != v->y)
        return u->y < v->y ? -1 : 1;
    return u->k - v->k; /* ties keep the rank order */
}

/* Candidates on the front of (x, days): no other has both less x and fewer
 * days.  flags[k] for order[k]. */
static void front(const Plan *p, bool by_cost, bool *flags)
{
    int n = p->nranked;
    XY *v = g_new(XY, n ? n : 1);
    for (int k = 0; k < n; k++) {
        const PlanResult *r = &p->res[p->order[k]];
        v[k] = (XY){by_cost ? r->t.cost : g_array_index(p->cands, PlanCand, p->order[k]).gpus, r->t.days, k};
        flags[k] = false;
    }
    qsort(v, (size_t)n, sizeof *v, by_xy);
    double best = INFINITY;
    for (int k = 0; k < n; k++)
        if (v[k].y < best) {
            best = v[k].y;
            flags[v[k].k] = true;
        }
    g_free(v);
}

/* A --locate: its best candidate's exact rank among the ranked, its step
 * and days in full, and the gap to the best. */
typedef struct {
    int rank;
    double step_s, days, best_step_s, best_days, best_obj, obj;
    PlanTrain full;
} Located;

static bool located(const Plan *p, int l, Located *out)
{
    int i = p->loc[l];
    if (i < 0 || p->nranked == 0)
        return false;
    const PlanCand *c = &g_array_index(p->cands, PlanCand, i);
    PlanResult r = p->res[i];
    plan_train_compute(p, c, r.step_s, &r.t); /* its full simulation's */
    const PlanResult *b = &p->res[p->order[0]];
    *out = (Located){rank_of(p, i), r.step_s, r.t.days, b->step_s, b->t.days,
                     plan_objective_value(p, &g_array_index(p->cands, PlanCand, p->order[0]), b),
                     plan_objective_value(p, c, &r), r.t};
    return true;
}

static cJSON *located_json(const Plan *p, int l)
{
    Located x;
    cJSON *o;
    if (located(p, l, &x)) {
        o = cand_json(p, p->loc[l], x.rank, &x.full);
        cJSON_AddBoolToObject(o, "rank_exact", true);
        cJSON_AddNumberToObject(o, "rank_fraction", (double)x.rank / p->nranked);
        add_num(o, "step_ratio_to_best", x.step_s / x.best_step_s);
        add_num(o, "days_ratio_to_best", x.days / x.best_days);
        add_num(o, "objective_ratio_to_best", x.obj / x.best_obj);
    } else {
        o = cJSON_CreateObject();
        cJSON_AddNullToObject(o, "rank");
        cJSON *why = cJSON_AddObjectToObject(o, "discarded");
        int n[PLAN_NREASONS] = {0};
        for (guint i = 0; i < p->cands->len; i++)
            if (plan_match(&p->o.locate[l], &g_array_index(p->cands, PlanCand, i)))
                n[p->res[i].reason]++;
        for (int r = 1; r < PLAN_NREASONS; r++)
            if (n[r])
                cJSON_AddNumberToObject(why, plan_reason_name((PlanReason)r), n[r]);
    }
    char *spec = plan_match_text(&p->o.locate[l]);
    cJSON_AddStringToObject(o, "locate", spec);
    g_free(spec);
    cJSON_AddNumberToObject(o, "matches", p->loc_matches[l]);
    return o;
}

/* After "in full": whether that step came from three shorter ones. */
static const char *extrap_mark(const PlanResult *r) { return r->extrap[1] ? " (extrapolated)" : ""; }

static void print_located(const Plan *p, int l, FILE *f)
{
    Located x;
    char *spec = plan_match_text(&p->o.locate[l]);
    if (located(p, l, &x)) {
        /* the screen kept every candidate whose bound beats the located one:
         * the pruned are all slower, ranked or not */
        int valid = p->nranked + p->counts[PLAN_PRUNED];
        char *label = plan_cand_label(&g_array_index(p->cands, PlanCand, p->loc[l]));
        fprintf(f,
                "# located %s (%d matching): %s ranks %d of %d (top %.1f%%, exact; the %d pruned rank below it): step "
                "%.4f s in full%s, %.2f days; %.3fx the best's step (%.4f s), %+.2f days\n",
                spec, p->loc_matches[l], label, x.rank, valid, 100.0 * x.rank / valid, p->counts[PLAN_PRUNED], x.step_s,
                extrap_mark(&p->res[p->loc[l]]), x.days, x.step_s / x.best_step_s, x.best_step_s,
                x.days - x.best_days);
        g_free(label);
    } else {
        fprintf(f, "# located %s (%d matching): none ranks (see --json's \"located\" for why)\n", spec,
                p->loc_matches[l]);
    }
    g_free(spec);
}

static const char *obj_name(PlanObjective o) { return o == PLAN_OBJ_COST ? "cost" : o == PLAN_OBJ_THROUGHPUT ? "throughput" : "time"; }

/* Candidates whose screened step (full step, among the best k) was
 * extrapolated (plan_eval.c). */
static int count_extrap(const Plan *p, bool full)
{
    int n = 0;
    for (guint i = 0; i < p->cands->len; i++)
        n += p->res[i].extrap[full] && (full ? p->res[i].full && p->res[i].top : p->res[i].screen_s > 0);
    return n;
}

cJSON *plan_result_json(const Plan *p)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "scenario", p->path);
    cJSON_AddStringToObject(o, "model", p->model);
    cJSON_AddNumberToObject(o, "parameters", p->params);
    cJSON_AddStringToObject(o, "accelerator", p->accel);
    cJSON_AddNumberToObject(o, "peak_flops_per_gpu", p->peak_flops); /* MFU's denominator */
    cJSON_AddStringToObject(o, "objective", obj_name(p->o.objective));
    cJSON_AddNumberToObject(o, "candidates", p->cands->len);
    int pre = p->counts[PLAN_DISCARD_NODES];
    for (guint i = 0; i < p->cands->len; i++)
        pre += p->res[i].reason == PLAN_DISCARD_DIVIDE && !p->res[i].error;
    cJSON_AddNumberToObject(o, "screened", (double)p->cands->len - pre);
    cJSON_AddNumberToObject(o, "screen_simulated", p->nsim);
    cJSON_AddNumberToObject(o, "screen_extrapolated", count_extrap(p, false));
    cJSON_AddNumberToObject(o, "full_extrapolated", count_extrap(p, true));
    cJSON_AddNumberToObject(o, "simulated_in_full", p->nfull);
    cJSON *d = cJSON_AddObjectToObject(o, "discarded");
    for (int r = 1; r < PLAN_NREASONS; r++)
        cJSON_AddNumberToObject(d, plan_reason_name((PlanReason)r), p->counts[r]);
    cJSON_AddNumberToObject(o, "ranked", p->nranked);
    cJSON *in = cJSON_AddObjectToObject(o, "inputs");
    const PlanTrainInputs *t = &p->train;
    add_num(in, "tokens", t->tokens);
    add_num(in, "failures_per_gpu_hour", t->failures_per_gpu_hour);
    add_num(in, "restart_s", t->restart_s);
    add_num(in, "storage_bps_per_gpu", t->storage_bps_per_gpu);
    add_num(in, "checkpoint_interval_s", t->checkpoint_interval_s);
    add_num(in, "board_watts", t->board_watts);
    add_num(in, "power_utilisation", t->power_utilisation);
    add_num(in, "pue", t->pue);
    add_num(in, "price_per_gpu_hour", t->price_per_gpu_hour);
    cJSON_AddItemToObject(in, "sources", cJSON_Duplicate(p->sources, true));
    if (p->ref_index >= 0 && p->res) {
        int rk = rank_of(p, p->ref_index);
        /* ranked by its screen like every candidate beyond the best k; its
         * time to train here is its full simulation's */
        const PlanResult *rr = &p->res[p->ref_index];
        PlanTrain full;
        plan_train_compute(p, &g_array_index(p->cands, PlanCand, p->ref_index), rr->step_s, &full);
        cJSON *ref = cand_json(p, p->ref_index, rk, rr->full && rr->reason == PLAN_OK ? &full : NULL);
        cJSON_AddBoolToObject(ref, "rank_exact", rank_exact(p, rk));
        if (!rk)
            cJSON_AddStringToObject(ref, "discarded", plan_reason_name(p->res[p->ref_index].reason));
        cJSON_AddItemToObject(o, "reference", ref);
    } else {
        cJSON_AddNullToObject(o, "reference");
    }
    cJSON_AddItemToObject(o, "constraints", plan_constraints_json(p));
    cJSON *loc = cJSON_AddArrayToObject(o, "located");
    for (int l = 0; p->res && l < p->o.nlocate; l++)
        cJSON_AddItemToArray(loc, located_json(p, l));
    cJSON *ranked = cJSON_AddArrayToObject(o, "best");
    for (int k = 0; k < p->nfull; k++)
        cJSON_AddItemToArray(ranked, cand_json(p, p->order[k], k + 1, NULL));
    bool *f = g_new(bool, p->nranked ? p->nranked : 1);
    cJSON *par = cJSON_AddObjectToObject(o, "pareto");
    const char *names[] = {"gpus_days", "cost_days"};
    for (int b = 0; b < 2; b++) {
        front(p, b == 1, f);
        cJSON *a = cJSON_AddArrayToObject(par, names[b]);
        for (int k = 0; k < p->nranked; k++)
            if (f[k])
                cJSON_AddItemToArray(a, cand_json(p, p->order[k], k + 1, NULL));
    }
    g_free(f);
    return o;
}

void plan_print_table(const Plan *p, FILE *f)
{
    cJSON *j = plan_result_json(p);
    fprintf(f, "# plan for %s: %s on %s, objective %s, %.4g tokens\n", p->path, p->model, p->accel,
            obj_name(p->o.objective), p->train.tokens);
    /* what cost($) and MWh assume (--json's "inputs" has them with their sources) */
    fprintf(f, "# cost at $%.4g per GPU-hour; energy at ", p->train.price_per_gpu_hour);
    if (isfinite(p->train.board_watts))
        fprintf(f, "%.4g W per GPU drawn at %.4g%%, PUE %.4g\n", p->train.board_watts,
                100 * p->train.power_utilisation, p->train.pue);
    else
        fputs("no board power known for this chip (--board-watts)\n", f);
    fprintf(f, "# %u candidates: %d ranked, %d simulated in full with contention; discarded:", p->cands->len,
            p->nranked, p->nfull);
    for (int r = 1; r < PLAN_NREASONS; r++)
        fprintf(f, "%s %d %s", r > 1 ? "," : "", p->counts[r], plan_reason_name((PlanReason)r));
    fputc('\n', f);
    int xs = (int)cJSON_GetObjectItem(j, "screen_extrapolated")->valuedouble,
        xf = (int)cJSON_GetObjectItem(j, "full_extrapolated")->valuedouble;
    if (xs + xf > 0)
        fprintf(f, "# steps of many micro-batches, each extrapolated from three shorter ones (linear past the "
                   "pipeline's warm-up, to a few 1e-6; --exact-steps simulates them at their own count): %d screened, "
                   "%d of the best in full\n", xs, xf);
    fprintf(f, "%4s %6s %-47s %9s %6s %8s %8s %7s %10s %11s %8s\n", "rank", "GPUs", "configuration", "step(s)", "MFU%",
            "mem(GiB)", "days", "goodput", "GPU-hours", "cost($)", "MWh");
    for (int k = 0; k < p->nfull; k++) {
        int i = p->order[k];
        const PlanResult *r = &p->res[i];
        char *label = plan_cand_label(&g_array_index(p->cands, PlanCand, i));
        char days[32], mwh[32];
        /* days in the column's width however long the training; no energy
         * where the chip states no board power */
        snprintf(days, sizeof days, r->t.days < 1e5 ? "%.2f" : "%.3g", r->t.days);
        snprintf(mwh, sizeof mwh, isfinite(r->t.energy_j) ? "%.4g" : "-", r->t.energy_j / 3.6e9);
        fprintf(f, "%4d %6d %-47s %9.4f %6.1f %8.2f %8s %6.1f%% %10.4g %11.4g %8s\n", k + 1,
                g_array_index(p->cands, PlanCand, i).gpus, label, r->step_s, 100 * r->mfu, r->mem_bytes / GIB, days,
                100 * r->t.goodput, r->t.gpu_hours, r->t.cost, mwh);
        g_free(label);
    }
    if (p->nfull > 0) /* what the configuration's words mean (text only: --json has them as keys) */
        fputs("# configuration: tpN tensor, ppN pipeline, vN virtual stages, cpN context, dpN data, epN expert "
              "parallel; mbN micro-batch; zN ZeRO stage (z0: replicated weight update); recomputation none, sel "
              "(selective) or full; sp sequence parallelism; tpov TP communication overlapped (Megatron-Core "
              "tp_comm_overlap); offload optimizer state in host memory (offload_optimizer); uneven pipeline stages of "
              "unequal layer counts\n",
              f);
    if (p->nfull > 0) { /* the best's band: the days, cost and energy above are the prediction's */
        const PlanResult *b = &p->res[p->order[0]];
        fprintf(f, "# the best's step p10-p90: %.4f - %.4f s%s (docs/UNCERTAINTY.md); days, cost and energy are the "
                   "prediction's\n",
                b->step_s * b->band[0], b->step_s * b->band[1],
                p->experts > 1 ? ", at least the published mixture-of-experts steps' spread: most ran slower than "
                                 "modelled"
                               : "");
    }
    if (p->ref_index >= 0) {
        int rk = rank_of(p, p->ref_index);
        const PlanResult *r = &p->res[p->ref_index];
        PlanTrain full; /* its full simulation's time to train */
        plan_train_compute(p, &g_array_index(p->cands, PlanCand, p->ref_index), r->step_s, &full);
        char *label = plan_cand_label(&p->ref);
        if (rank_exact(p, rk))
            fprintf(f, "# the scenario's own configuration (%s) ranks %d of %d: step %.4f s in full%s, %.2f days\n",
                    label, rk, p->nranked, r->step_s, extrap_mark(r), full.days);
        else if (rk)
            fprintf(f,
                    "# the scenario's own configuration (%s) ranks %d or worse (%d of the %d simulated; --exhaustive "
                    "ranks the pruned too): step %.4f s in full%s, %.2f days\n",
                    label, rk, rk, p->nranked, r->step_s, extrap_mark(r), full.days);
        else
            fprintf(f, "# the scenario's own configuration (%s) is discarded: %s\n", label,
                    plan_reason_name(r->reason));
        g_free(label);
    } else {
        if (p->ref_shard_group)
            fprintf(f,
                    "# the scenario's own configuration is not in the search space: its hybrid sharding "
                    "(\"shard_group\": %d) is not searched, every candidate shards over all its dp ranks\n",
                    p->ref_shard_group);
        else
            fprintf(f, "# the scenario's own configuration is not in the search space\n");
    }
    if (p->ref_variants > 1)
        fprintf(f, "# the scenario compares %d weight updates: its own configuration is the first (%s)\n",
                p->ref_variants, p->ref_variant ? p->ref_variant : "");

    for (int l = 0; l < p->o.nlocate; l++)
        print_located(p, l, f);
    const cJSON *par = cJSON_GetObjectItem(j, "pareto");
    int ng = cJSON_GetArraySize(cJSON_GetObjectItem(par, "gpus_days"));
    fprintf(f, "# Pareto front, GPUs against days: %d configuration%s; cost against days: %d\n", ng, ng == 1 ? "" : "s",
            cJSON_GetArraySize(cJSON_GetObjectItem(par, "cost_days")));
    cJSON_Delete(j);
}

static void csv_field(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

bool plan_write_csv(const Plan *p, const char *path, GError **err)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        g_set_error(err, SIM_ERROR, SIM_ERROR_INTERNAL, "%s: cannot write: %s", path, g_strerror(errno));
        return false;
    }
    fputs("rank,simulated_in_full,label,gpus,nodes,tp,pp,virtual_stages,cp,dp,ep,micro_batch,global_batch,"
          "zero_stage,recompute,sequence_parallel,tp_comm_overlap,offload_optimizer,step_time_s,step_lower_bound_s,mfu,memory_per_device_bytes,"
          "days,goodput,gpu_hours,cost,energy_j,step_extrapolated\r\n",
          f);
    static const char *const rc[] = {"none", "selective", "full"};
    for (int k = 0; k < p->nranked; k++) {
        int i = p->order[k];
        const PlanCand *c = &g_array_index(p->cands, PlanCand, i);
        const PlanResult *r = &p->res[i];
        char *label = plan_cand_label(c);
        fprintf(f, "%d,%s,", k + 1, r->full && r->top ? "true" : "false");
        csv_field(f, label);
        fprintf(f, ",%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%s,%s,%s,%s,%.9g,%.9g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,", c->gpus,
                c->nodes, c->tp, c->pp, c->vpp, c->cp, c->dp, c->ep, c->mb, c->gb, c->zero, rc[c->recompute],
                c->sp ? "true" : "false", c->tp_overlap ? "true" : "false", c->offload ? "true" : "false", r->top ? r->step_s : r->screen_s, r->lb_s, r->mfu,
                r->mem_bytes, r->t.days, r->t.goodput, r->t.gpu_hours, r->t.cost);
        if (isfinite(r->t.energy_j)) /* empty where the chip states no board power */
            fprintf(f, "%.6g", r->t.energy_j);
        fprintf(f, ",%s\r\n", r->extrap[r->top] ? "true" : "false");
        g_free(label);
    }
    bool ok = fclose(f) == 0;
    if (!ok)
        g_set_error(err, SIM_ERROR, SIM_ERROR_INTERNAL, "%s: cannot write", path);
    return ok;
}

bool plan_plot_pareto(const Plan *p, const char *path, GError **err)
{
    int n = p->nranked;
    if (n == 0) {
        g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "plan: no configuration ranked: nothing to plot");
        return false;
    }
    double *gx = g_new(double, n), *cx = g_new(double, n), *y = g_new(double, n);
    double *fgx = g_new(double, n), *fgy = g_new(double, n), *fcx = g_new(double, n), *fcy = g_new(double, n);
    bool *f = g_new(bool, n);
    int ng = 0, nc = 0;
    for (int k = 0; k < n; k++) {
        const PlanResult *r = &p->res[p->order[k]];
        gx[k] = g_array_index(p->cands, PlanCand, p->order[k]).gpus;
        cx[k] = r->t.cost;
        y[k] = r->t.days;
    }
    front(p, false, f);
    for (int k = 0; k < n; k++)
        if (f[k])
            fgx[ng] = gx[k], fgy[ng++] = y[k];
    front(p, true, f);
    for (int k = 0; k < n; k++)
        if (f[k])
            fcx[nc] = cx[k], fcy[nc++] = y[k];
    PlotParetoPanel panels[2] = {{"GPUs", true, n, gx, y, ng, fgx, fgy}, {"cost ($)", false, n, cx, y, nc, fcx, fcy}};
    char *title = g_strdup_printf("%s on %s: days to train", p->model, p->accel);
    bool ok = plot_pareto(path, title, panels, 2, err);
    g_free(title);
    g_free(gx), g_free(cx), g_free(y), g_free(fgx), g_free(fgy), g_free(fcx), g_free(fcy), g_free(f);
    return ok;
}
