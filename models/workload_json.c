/* Workloads read and checked: transformer and CNN descriptions from JSON
 * (presets under models/presets/workloads, or a path) and from a struct,
 * every key validated with its file and line (workload.h). */
#include "sim_data.h"
#include "workload_internal.h"
#include "workload_mla.h"

#include <string.h>

#define WORKLOAD_PRESETS "models/presets/workloads"

char *workload_preset_dir(void)
{
    return sim_data_dir(WORKLOAD_PRESETS);
}

/* ---- validation shared by JSON and programmatic construction ---- */

static bool check_transformer(const WorkloadTransformer *c, GError **err)
{
    const char *bad = NULL;
    if (c->layers < 1) bad = "layers must be >= 1";
    else if (c->hidden < 1) bad = "hidden must be >= 1";
    else if (c->heads < 1) bad = "heads must be >= 1";
    else if (c->kv_heads < 1 || c->kv_heads > c->heads) bad = "kv_heads must be in [1, heads]";
    else if (c->heads % c->kv_heads) bad = "heads must be a multiple of kv_heads";
    else if (c->head_dim < 0) bad = "head_dim must be >= 1";
    else if (!c->head_dim && c->kv_heads != c->heads && c->hidden % c->heads)
        bad = "grouped-query attention needs hidden divisible by heads (or a head_dim)";
    else if (c->sliding_window < 0 || c->full_attention_every < 0) bad = "sliding_window and full_attention_every must be >= 0";
    else if (c->full_attention_every && !c->sliding_window) bad = "full_attention_every needs a sliding_window";
    else if (c->sliding_window && !c->causal) bad = "sliding_window is a causal (decoder) window: it needs causal attention";
    else if (c->ffn < 1) bad = "ffn must be >= 1";
    else if (c->seq_len < 1) bad = "seq_len must be >= 1";
    else if (c->vocab < 1) bad = "vocab must be >= 1";
    else if (c->type_vocab < 0) bad = "type_vocab must be >= 0";
    else if (c->experts < 0) bad = "experts must be >= 0";
    else if (c->experts > 0 && (c->top_k < 1 || c->top_k > c->experts)) bad = "top_k must be in [1, experts]";
    else if (c->experts > 0 && (c->expert_ffn < 1 || c->shared_experts < 0)) bad = "expert_ffn must be >= 1, shared_experts >= 0";
    else if (c->experts == 0 && (c->top_k || c->shared_experts)) bad = "top_k and shared_experts need experts > 0";
    else bad = workload_mla_check(c);
    if (bad) {
        g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "%s", bad);
        return false;
    }
    return true;
}

Workload *workload_new_transformer(const char *name, const WorkloadTransformer *cfg, GError **err)
{
    if (!check_transformer(cfg, err))
        return NULL;
    Workload *w = g_new0(Workload, 1);
    w->name = g_strdup(name ? name : "transformer");
    w->kind = WORKLOAD_TRANSFORMER;
    w->t = *cfg;
    w->final_norm = true;
    return w;
}

/* ---- JSON ---- */

static bool get_int(const SimJsonDoc *doc, const cJSON *obj, const char *key, bool required, long lo, long hi,
                    int *out, GError **err)
{
    long v = *out;
    if (!sim_json_get_int(doc, obj, key, required, lo, hi, &v, err))
        return false;
    *out = (int)v;
    return true;
}

/* The attention geometry keys (workload.h): head_dim, qk_norm, the sliding window. */
static bool attention_from_doc(const SimJsonDoc *doc, const cJSON *root, WorkloadTransformer *c, GError **err)
{
    return get_int(doc, root, "head_dim", false, 1, 1 << 16, &c->head_dim, err) &&
           sim_json_get_bool(doc, root, "qk_norm", &c->qk_norm, err) &&
           get_int(doc, root, "sliding_window", false, 1, 1 << 24, &c->sliding_window, err) &&
           get_int(doc, root, "full_attention_every", false, 1, 100000, &c->full_attention_every, err);
}

static Workload *transformer_from_doc(const SimJsonDoc *doc, const cJSON *root, const char *name, GError **err)
{
    static const char *const keys[] = {"name", "type", "description", "source", "layers", "hidden", "heads",
                                       "kv_heads", "ffn", "seq_len", "vocab", "type_vocab", "gated_mlp",
                                       "tied_embeddings", "bias", "dropout", "embedding_norm", "final_norm",
                                       "norm", "position", "causal", "experts", "top_k", "expert_ffn",
                                       "shared_experts", "head_dim", "qk_norm", "sliding_window",
                                       "full_attention_every", "q_lora_rank", "kv_lora_rank", "qk_nope_head_dim",
                                       "qk_rope_head_dim", "v_head_dim", "dense_layers", "mtp_layers", NULL};
    if (!sim_json_only_keys(doc, root, keys, NULL, err))
        return NULL;
    WorkloadTransformer c = {.tied_embeddings = true, .bias = true, .dropout = true, .causal = true};
    bool final_norm = true;
    const long big = 1L << 24;
    if (!get_int(doc, root, "layers", true, 1, 100000, &c.layers, err) ||
        !get_int(doc, root, "hidden", true, 1, big, &c.hidden, err) ||
        !get_int(doc, root, "heads", true, 1, big, &c.heads, err))
        return NULL;
    c.kv_heads = c.heads;
    c.ffn = 4 * c.hidden;
    if (!get_int(doc, root, "kv_heads", false, 1, c.heads, &c.kv_heads, err) ||
        !get_int(doc, root, "ffn", false, 1, 16 * big, &c.ffn, err) ||
        !get_int(doc, root, "seq_len", true, 1, big, &c.seq_len, err) ||
        !get_int(doc, root, "vocab", true, 1, 16 * big, &c.vocab, err) ||
        !get_int(doc, root, "type_vocab", false, 0, big, &c.type_vocab, err) ||
        !sim_json_get_bool(doc, root, "gated_mlp", &c.gated_mlp, err) ||
        !sim_json_get_bool(doc, root, "tied_embeddings", &c.tied_embeddings, err) ||
        !sim_json_get_bool(doc, root, "bias", &c.bias, err) || !sim_json_get_bool(doc, root, "dropout", &c.dropout, err) ||
        !sim_json_get_bool(doc, root, "embedding_norm", &c.embedding_norm, err) ||
        !sim_json_get_bool(doc, root, "final_norm", &final_norm, err) ||
        !sim_json_get_bool(doc, root, "causal", &c.causal, err) ||
        !get_int(doc, root, "experts", false, 0, 1 << 16, &c.experts, err))
        return NULL;
    /* a mixture of experts: top-2 routing and the dense width unless said */
    c.top_k = c.experts > 0 ? 2 : 0;
    c.expert_ffn = c.ffn;
    if (!get_int(doc, root, "top_k", false, 0, 1 << 16, &c.top_k, err) ||
        !get_int(doc, root, "expert_ffn", false, 1, 16 * big, &c.expert_ffn, err) ||
        !get_int(doc, root, "shared_experts", false, 0, 1 << 16, &c.shared_experts, err) ||
        !attention_from_doc(doc, root, &c, err) ||
        !get_int(doc, root, "q_lora_rank", false, 0, big, &c.q_lora_rank, err) ||
        !get_int(doc, root, "kv_lora_rank", false, 0, big, &c.kv_lora_rank, err) ||
        !get_int(doc, root, "qk_nope_head_dim", false, 0, 1 << 16, &c.qk_nope_head_dim, err) ||
        !get_int(doc, root, "qk_rope_head_dim", false, 0, 1 << 16, &c.qk_rope_head_dim, err) ||
        !get_int(doc, root, "v_head_dim", false, 0, 1 << 16, &c.v_head_dim, err) ||
        !get_int(doc, root, "dense_layers", false, 0, c.layers, &c.dense_layers, err) ||
        !get_int(doc, root, "mtp_layers", false, 0, 64, &c.mtp_layers, err))
        return NULL;
    const char *s = NULL;
    if (!sim_json_get_string(doc, root, "norm", false, &s, err))
        return NULL;
    if (s && strcmp(s, "layernorm") != 0 && strcmp(s, "rmsnorm") != 0) {
        sim_json_error(doc, cJSON_GetObjectItemCaseSensitive(root, "norm"), err,
                       "\"norm\" must be \"layernorm\" or \"rmsnorm\", not \"%s\"", SIM_ECHO(s));
        return NULL;
    }
    c.norm = s && strcmp(s, "rmsnorm") == 0 ? WORKLOAD_NORM_RMSNORM : WORKLOAD_NORM_LAYERNORM;
    s = NULL;
    if (!sim_json_get_string(doc, root, "position", false, &s, err))
        return NULL;
    if (s && strcmp(s, "learned") != 0 && strcmp(s, "rotary") != 0) {
        sim_json_error(doc, cJSON_GetObjectItemCaseSensitive(root, "position"), err,
                       "\"position\" must be \"learned\" or \"rotary\", not \"%s\"", SIM_ECHO(s));
        return NULL;
    }
    c.position = s && strcmp(s, "rotary") == 0 ? WORKLOAD_POS_ROTARY : WORKLOAD_POS_LEARNED;
    GError *local = NULL;
    if (!check_transformer(&c, &local)) {
        sim_json_error(doc, root, err, "%s", local->message);
        g_error_free(local);
        return NULL;
    }
    Workload *w = workload_new_transformer(name, &c, err);
    w->final_norm = final_norm;
    return w;
}

static Workload *cnn_from_doc(const SimJsonDoc *doc, const cJSON *root, const char *name, GError **err)
{
    static const char *const keys[] = {"name", "type", "description", "source", "input_hw", "layers", NULL};
    static const char *const lkeys[] = {"name", "type", "in", "out", "kernel", "stride", "out_hw", "groups",
                                        "bn", "bias", "residual", NULL};
    if (!sim_json_only_keys(doc, root, keys, NULL, err))
        return NULL;
    int input_hw = 0;
    if (!get_int(doc, root, "input_hw", true, 1, 1 << 20, &input_hw, err))
        return NULL;
    const cJSON *layers = cJSON_GetObjectItemCaseSensitive(root, "layers");
    if (!cJSON_IsArray(layers) || cJSON_GetArraySize(layers) < 1) {
        sim_json_error(doc, layers ? layers : root, err, "\"layers\" must be a non-empty array");
        return NULL;
    }
    int n = cJSON_GetArraySize(layers);
    CnnLayer *ls = g_new0(CnnLayer, n);
    int i = 0;
    bool ok = true;
    for (const cJSON *l = layers->child; l && ok; l = l->next, i++) {
        CnnLayer *c = &ls[i];
        const char *lname = NULL, *type = NULL;
        ok = cJSON_IsObject(l);
        if (!ok) {
            sim_json_error(doc, l, err, "each layer must be an object");
            break;
        }
        ok = sim_json_only_keys(doc, l, lkeys, NULL, err) && sim_json_get_string(doc, l, "name", true, &lname, err) &&
             sim_json_get_string(doc, l, "type", true, &type, err);
        if (!ok)
            break;
        c->name = g_strdup(lname);
        if (strcmp(type, "conv") == 0) {
            c->type = CNN_CONV;
        } else if (strcmp(type, "fc") == 0) {
            c->type = CNN_FC;
        } else {
            sim_json_error(doc, cJSON_GetObjectItemCaseSensitive(l, "type"), err,
                           "layer type must be \"conv\" or \"fc\", not \"%s\"", SIM_ECHO(type));
            ok = false;
            break;
        }
        c->kernel = 1;
        c->stride = 1;
        c->out_hw = 1;
        c->groups = 1;
        c->bn = c->type == CNN_CONV;
        c->bias = c->type == CNN_FC;
        ok = get_int(doc, l, "in", true, 1, 1 << 24, &c->in, err) &&
             get_int(doc, l, "out", true, 1, 1 << 24, &c->out, err) &&
             get_int(doc, l, "kernel", c->type == CNN_CONV, 1, 1024, &c->kernel, err) &&
             get_int(doc, l, "stride", false, 1, 1024, &c->stride, err) &&
             get_int(doc, l, "out_hw", c->type == CNN_CONV, 1, 1 << 20, &c->out_hw, err) &&
             get_int(doc, l, "groups", false, 1, 1 << 24, &c->groups, err) && sim_json_get_bool(doc, l, "bn", &c->bn, err) &&
             sim_json_get_bool(doc, l, "bias", &c->bias, err) && sim_json_get_bool(doc, l, "residual", &c->residual, err);
        if (ok && (c->in % c->groups || c->out % c->groups)) {
            sim_json_error(doc, l, err, "in and out channels must be multiples of groups");
            ok = false;
        }
    }
    if (!ok) {
        for (int j = 0; j < n; j++)
            g_free(ls[j].name);
        g_free(ls);
        return NULL;
    }
    Workload *w = g_new0(Workload, 1);
    w->name = g_strdup(name);
    w->kind = WORKLOAD_CNN;
    w->cnn = ls;
    w->n_cnn = n;
    w->input_hw = input_hw;
    return w;
}

static Workload *from_doc(const SimJsonDoc *doc, GError **err)
{
    const cJSON *root = sim_json_root(doc);
    if (!cJSON_IsObject(root)) {
        sim_json_error(doc, root, err, "a workload description must be a JSON object");
        return NULL;
    }
    const char *name = NULL, *type = NULL;
    if (!sim_json_get_string(doc, root, "name", true, &name, err) ||
        !sim_json_get_string(doc, root, "type", true, &type, err) || !sim_json_need_source(doc, root, err))
        return NULL;
    if (strcmp(type, "transformer") == 0)
        return transformer_from_doc(doc, root, name, err);
    if (strcmp(type, "cnn") == 0)
        return cnn_from_doc(doc, root, name, err);
    sim_json_error(doc, cJSON_GetObjectItemCaseSensitive(root, "type"), err,
                   "\"type\" must be \"transformer\" or \"cnn\", not \"%s\"", SIM_ECHO(type));
    return NULL;
}

Workload *workload_parse(const char *name, const char *text, size_t len, GError **err)
{
    SimJsonDoc *doc = sim_json_parse(name, text, len, err);
    if (!doc)
        return NULL;
    Workload *w = from_doc(doc, err);
    sim_json_free(doc);
    return w;
}

cJSON *workload_load_json(const char *name_or_path, GError **err)
{
    SimJsonDoc *doc = sim_data_load(WORKLOAD_PRESETS, "workload", name_or_path, err);
    if (!doc)
        return NULL;
    cJSON *copy = cJSON_Duplicate(sim_json_root(doc), true);
    sim_json_free(doc);
    return copy;
}

Workload *workload_load(const char *name_or_path, GError **err)
{
    SimJsonDoc *doc = sim_data_load(WORKLOAD_PRESETS, "workload", name_or_path, err);
    if (!doc)
        return NULL;
    Workload *w = from_doc(doc, err);
    sim_json_free(doc);
    return w;
}

