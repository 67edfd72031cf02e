/* The plan's constraints and locations: `--fix KEY=VALUE,...` pins searched
 * dimensions (recompute=full: what a published run's software had),
 * `--allow` / `--deny FEATURE` opens or closes a feature (selective
 * recomputation, the distributed optimizer, sequence parallelism, ...), and
 * `--locate KEY=VALUE,...` names a layout whose rank, time and gap to the
 * best the plan reports.  A fix and a location share one form (PlanMatch):
 * each key a value or "any". */
#include "plan_internal.h"

#include <stdlib.h>
#include <string.h>

static const struct {
    const char *name, *alias;
} key_names[PLAN_NKEYS] = {
    [PLAN_KEY_GPUS] = {"gpus", NULL},
    [PLAN_KEY_TP] = {"tp", NULL},
    [PLAN_KEY_PP] = {"pp", NULL},
    [PLAN_KEY_VPP] = {"vpp", "virtual_stages"},
    [PLAN_KEY_CP] = {"cp", NULL},
    [PLAN_KEY_DP] = {"dp", NULL},
    [PLAN_KEY_EP] = {"ep", NULL},
    [PLAN_KEY_MB] = {"mb", "micro_batch"},
    [PLAN_KEY_ZERO] = {"zero", "zero_stage"},
    [PLAN_KEY_RECOMPUTE] = {"recompute", NULL},
    [PLAN_KEY_SP] = {"sp", "sequence_parallel"},
    [PLAN_KEY_TPOV] = {"tp_overlap", "tp_comm_overlap"},
    [PLAN_KEY_OFFLOAD] = {"offload", "offload_optimizer"},
};

static const struct {
    const char *name, *what;
} feature_names[PLAN_NFEATURES] = {
    [PLAN_FEAT_OFFLOAD] = {"offload", "ZeRO-Offload of the optimizer"},
    [PLAN_FEAT_SELECTIVE] = {"selective-recompute", "selective recomputation (Korthikanti et al. 2022)"},
    [PLAN_FEAT_FULL] = {"full-recompute", "full recomputation"},
    [PLAN_FEAT_DISTOPT] = {"distributed-optimizer", "optimizer state sharded over dp (ZeRO 1-3)"},
    [PLAN_FEAT_ZERO2] = {"zero-2", "gradients sharded too (ZeRO 2-3)"},
    [PLAN_FEAT_ZERO3] = {"zero-3", "weights sharded too (ZeRO-3, FSDP)"},
    [PLAN_FEAT_SP] = {"sequence-parallel", "sequence parallelism"},
    [PLAN_FEAT_TPOV] = {"tp-comm-overlap", "Megatron-Core's tp_comm_overlap"},
    [PLAN_FEAT_INTERLEAVE] = {"interleaving", "interleaved pipeline stages"},
    [PLAN_FEAT_CP] = {"context-parallel", "context parallelism"},
    [PLAN_FEAT_EP] = {"expert-parallel", "expert parallelism"},
    [PLAN_FEAT_UNEVEN] = {"uneven-pipeline", "pipeline stages of unequal layer counts (Megatron-Core needs "
                                             "decoder_first/last_pipeline_num_layers for them)"},
};

const char *plan_key_name(PlanKey k) { return k >= 0 && k < PLAN_NKEYS ? key_names[k].name : "?"; }
const char *plan_feature_name(PlanFeature f) { return f >= 0 && f < PLAN_NFEATURES ? feature_names[f].name : "?"; }

void plan_match_any(PlanMatch *m)
{
    for (int k = 0; k < PLAN_NKEYS; k++)
        m->v[k] = -1;
}

/* Keys and words in any case, as --objective takes Cost: TP=8, recompute=Full. */
static int key_of(const char *s, size_t n)
{
    for (int k = 0; k < PLAN_NKEYS; k++)
        if ((strlen(key_names[k].name) == n && !g_ascii_strncasecmp(s, key_names[k].name, n)) ||
            (key_names[k].alias && strlen(key_names[k].alias) == n && !g_ascii_strncasecmp(s, key_names[k].alias, n)))
            return k;
    return -1;
}

static int value_of(PlanKey k, const char *v)
{
    if (k == PLAN_KEY_RECOMPUTE) {
        static const char *const rc[] = {"none", "selective", "full", "sel"};
        for (int i = 0; i < 4; i++)
            if (!g_ascii_strcasecmp(v, rc[i]))
                return i == 3 ? 1 : i;
        return -1;
    }
    if (k == PLAN_KEY_SP || k == PLAN_KEY_TPOV || k == PLAN_KEY_OFFLOAD) {
        static const char *const yes[] = {"on", "true", "yes", "1"}, *const no[] = {"off", "false", "no", "0"};
        for (int i = 0; i < 4; i++)
            if (!g_ascii_strcasecmp(v, yes[i]) || !g_ascii_strcasecmp(v, no[i]))
                return !g_ascii_strcasecmp(v, yes[i]);
        return -1;
    }
    char *end = NULL;
    long x = strtol(v, &end, 10);
    int lo = k == PLAN_KEY_ZERO ? 0 : 1, hi = k == PLAN_KEY_ZERO ? 3 : 1 << 20;
    return g_ascii_isdigit(v[0]) && end && !*end && x >= lo && x <= hi ? (int)x : -1;
}

static void list_keys(GString *s)
{
    for (int k = 0; k < PLAN_NKEYS; k++)
        g_string_append_printf(s, "%s%s", k ? ", " : "", key_names[k].name);
}

bool plan_parse_match(const char *opt, const char *text, PlanMatch *m, GError **err)
{
    char **items = g_strsplit(text, ",", -1);
    bool ok = items[0] != NULL;
    for (char **it = items; ok && *it; it++) {
        const char *eq = strchr(*it, '=');
        int k = eq ? key_of(*it, (size_t)(eq - *it)) : -1;
        int v = k >= 0 ? value_of((PlanKey)k, eq + 1) : -1;
        if (k >= 0 && v < 0) { /* a known key, a value it does not take */
            g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "plan: %s %s: %s takes %s, not '%s'", opt, SIM_ECHO(text),
                        key_names[k].name,
                        k == PLAN_KEY_RECOMPUTE ? "none, selective or full (the ones plan searches)"
                        : k == PLAN_KEY_SP || k == PLAN_KEY_TPOV || k == PLAN_KEY_OFFLOAD ? "on or off"
                        : k == PLAN_KEY_ZERO ? "0-3"
                                             : "a count from 1 to 1048576",
                        SIM_ECHO(eq + 1));
            ok = false;
        } else if (k < 0) {
            GString *keys = g_string_new(NULL);
            list_keys(keys);
            g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT,
                        "plan: %s %s: '%s' is not KEY=VALUE with KEY one of %s (recompute none|selective|full; "
                        "sp, tp_overlap, offload on|off; zero 0-3; the others counts from 1 to 1048576)",
                        opt, SIM_ECHO(text), SIM_ECHO(*it), keys->str);
            g_string_free(keys, TRUE);
            ok = false;
        } else if (m->v[k] >= 0 && m->v[k] != v) {
            g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "plan: %s %s: %s is given two values", opt, SIM_ECHO(text),
                        key_names[k].name);
            ok = false;
        } else {
            m->v[k] = v;
        }
    }
    if (!items[0])
        g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "plan: %s needs KEY=VALUE[,KEY=VALUE...]", opt);
    g_strfreev(items);
    return ok;
}

bool plan_parse_features(const char *opt, const char *text, bool deny, unsigned *mask, GError **err)
{
    char **items = g_strsplit(text, ",", -1);
    bool ok = items[0] != NULL;
    for (char **it = items; ok && *it; it++) {
        int f = -1;
        for (int i = 0; i < PLAN_NFEATURES && f < 0; i++)
            if (!g_ascii_strcasecmp(*it, feature_names[i].name))
                f = i;
        if (f < 0) {
            GString *s = g_string_new(NULL);
            for (int i = 0; i < PLAN_NFEATURES; i++)
                g_string_append_printf(s, "%s%s", i ? ", " : "", feature_names[i].name);
            g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "plan: %s %s: the features are: %s", opt, SIM_ECHO(*it),
                        s->str);
            g_string_free(s, TRUE);
            ok = false;
        } else if (deny) {
            *mask |= 1u << f;
        } else {
            *mask &= ~(1u << f);
        }
    }
    if (!items[0])
        g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "plan: %s needs a feature", opt);
    g_strfreev(items);
    return ok;
}

static int cand_value(const PlanCand *c, PlanKey k)
{
    const int v[PLAN_NKEYS] = {c->gpus, c->tp, c->pp, c->vpp, c->cp, c->dp, c->ep,
                               c->mb, c->zero, c->recompute, c->sp, c->tp_overlap, c->offload};
    return v[k];
}

bool plan_match(const PlanMatch *m, const PlanCand *c)
{
    for (int k = 0; k < PLAN_NKEYS; k++)
        if (m->v[k] >= 0 && m->v[k] != cand_value(c, (PlanKey)k))
            return false;
    return true;
}

bool plan_cand_uses(const PlanCand *c, PlanFeature f)
{
    switch (f) {
    case PLAN_FEAT_OFFLOAD:
        return c->offload;
    case PLAN_FEAT_SELECTIVE:
        return c->recompute == 1;
    case PLAN_FEAT_FULL:
        return c->recompute == 2;
    case PLAN_FEAT_DISTOPT:
        return c->zero >= 1;
    case PLAN_FEAT_ZERO2:
        return c->zero >= 2;
    case PLAN_FEAT_ZERO3:
        return c->zero >= 3;
    case PLAN_FEAT_SP:
        return c->sp;
    case PLAN_FEAT_TPOV:
        return c->tp_overlap;
    case PLAN_FEAT_INTERLEAVE:
        return c->vpp > 1;
    case PLAN_FEAT_CP:
        return c->cp > 1;
    case PLAN_FEAT_EP:
        return c->ep > 1;
    case PLAN_FEAT_UNEVEN:
        return c->uneven;
    default:
        return false;
    }
}

bool plan_cand_allowed(const Plan *p, const PlanCand *c)
{
    for (int f = 0; f < PLAN_NFEATURES; f++)
        if ((p->o.deny >> f & 1u) && plan_cand_uses(c, (PlanFeature)f))
            return false;
    return plan_match(&p->o.fix, c);
}

char *plan_match_text(const PlanMatch *m)
{
    static const char *const rc[] = {"none", "selective", "full"};
    GString *s = g_string_new(NULL);
    for (int k = 0; k < PLAN_NKEYS; k++) {
        if (m->v[k] < 0)
            continue;
        g_string_append_printf(s, "%s%s=", s->len ? "," : "", key_names[k].name);
        if (k == PLAN_KEY_RECOMPUTE)
            g_string_append(s, rc[m->v[k]]);
        else if (k == PLAN_KEY_SP || k == PLAN_KEY_TPOV || k == PLAN_KEY_OFFLOAD)
            g_string_append(s, m->v[k] ? "on" : "off");
        else
            g_string_append_printf(s, "%d", m->v[k]);
    }
    return g_string_free(s, FALSE);
}

cJSON *plan_constraints_json(const Plan *p)
{
    cJSON *o = cJSON_CreateObject();
    char *fix = plan_match_text(&p->o.fix);
    cJSON_AddStringToObject(o, "fixed", fix);
    g_free(fix);
    cJSON_AddNumberToObject(o, "memory_fraction", p->o.memory_fraction);
    cJSON_AddNumberToObject(o, "allocator_memory_fraction", p->allocator_fraction); /* the scenario's, in "fits" */
    cJSON *d = cJSON_AddArrayToObject(o, "denied");
    for (int f = 0; f < PLAN_NFEATURES; f++)
        if (p->o.deny >> f & 1u)
            cJSON_AddItemToArray(d, cJSON_CreateString(feature_names[f].name));
    return o;
}
