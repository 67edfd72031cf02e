/* Chakra ET files: the length-prefixed framing, decoding each Node with the
 * protoc-c code of Chakra's schema into a ChakraNode, the checks every file
 * passes (ids, dependencies, cycles), the directory of per-rank files, and
 * the writer. */
#include "chakra_et.h"

#include "sim_file.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHAKRA_FILE_CAP ((size_t)1 << 30) /* 1 GiB per rank */

static const char *const type_names[] = {"INVALID_NODE",   "METADATA_NODE",  "MEM_LOAD_NODE", "MEM_STORE_NODE",
                                         "COMP_NODE",      "COMM_SEND_NODE", "COMM_RECV_NODE", "COMM_COLL_NODE"};
static const char *const comm_names[] = {"ALL_REDUCE", "REDUCE",         "ALL_GATHER",           "GATHER",
                                         "SCATTER",    "BROADCAST",      "ALL_TO_ALL",           "REDUCE_SCATTER",
                                         "REDUCE_SCATTER_BLOCK", "BARRIER"};

const char *chakra_type_name(int type) { return type >= 0 && type <= CHAKRA_COLL ? type_names[type] : "?"; }
const char *chakra_comm_type_name(int c) { return c >= 0 && c < CHAKRA_NUM_COMM_TYPES ? comm_names[c] : "?"; }

void chakra_rank_clear(ChakraRank *r)
{
    for (int i = 0; i < r->n; i++) {
        g_free(r->nodes[i].name);
        g_free(r->nodes[i].deps);
        g_free(r->nodes[i].pg_name);
        g_free(r->nodes[i].dep_idx);
    }
    g_free(r->nodes);
    g_free(r->path);
    g_free(r->version);
    memset(r, 0, sizeof *r);
}

void chakra_trace_free(ChakraTrace *t)
{
    if (!t)
        return;
    for (int i = 0; i < t->nranks; i++)
        chakra_rank_clear(&t->ranks[i]);
    g_free(t->ranks);
    g_free(t);
}

/* A varint of at most 5 bytes (Chakra writes varint32); false if the file
 * ends inside it or it runs longer. */
static int read_varint32(const uint8_t *buf, size_t len, size_t *pos, uint64_t *out)
{
    uint64_t v = 0;
    for (int i = 0; i < 5; i++) {
        if (*pos >= len)
            return -1; /* truncated */
        uint8_t b = buf[(*pos)++];
        v |= (uint64_t)(b & 0x7f) << (7 * i);
        if (!(b & 0x80)) {
            *out = v;
            return 0;
        }
    }
    return -2; /* overlong */
}

/* Cycles inside one file, by Kahn's algorithm over dep_idx; on one, names
 * a node left on it. */
static bool check_acyclic(const char *name, const ChakraRank *r, GError **err)
{
    int *indeg = g_new0(int, r->n);
    GArray **succ = g_new0(GArray *, r->n);
    for (int i = 0; i < r->n; i++)
        for (int k = 0; k < r->nodes[i].ndeps; k++) {
            int d = r->nodes[i].dep_idx[k];
            if (!succ[d])
                succ[d] = g_array_new(FALSE, FALSE, sizeof(int));
            g_array_append_val(succ[d], i);
            indeg[i]++;
        }
    int *queue = g_new(int, r->n), qh = 0, qt = 0;
    for (int i = 0; i < r->n; i++)
        if (indeg[i] == 0)
            queue[qt++] = i;
    while (qh < qt) {
        int i = queue[qh++];
        for (guint k = 0; succ[i] && k < succ[i]->len; k++) {
            int j = g_array_index(succ[i], int, k);
            if (--indeg[j] == 0)
                queue[qt++] = j;
        }
    }
    bool ok = qt == r->n;
    if (!ok)
        for (int i = 0; i < r->n; i++)
            if (indeg[i] > 0) {
                g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT,
                            "%s: node %d (id %" G_GUINT64_FORMAT ", byte %ld): its dependencies form a cycle", name, i,
                            r->nodes[i].id, r->nodes[i].offset);
                break;
            }
    for (int i = 0; i < r->n; i++)
        if (succ[i])
            g_array_free(succ[i], TRUE);
    g_free(succ);
    g_free(queue);
    g_free(indeg);
    return ok;
}

/* Ids unique, every dependency present: fills dep_idx. */
static bool resolve_deps(const char *name, ChakraRank *r, GError **err)
{
    GHashTable *ids = g_hash_table_new(g_int64_hash, g_int64_equal);
    bool ok = true;
    for (int i = 0; ok && i < r->n; i++) {
        ChakraNode *n = &r->nodes[i];
        if (g_hash_table_contains(ids, &n->id)) {
            g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "%s: node %d (id %" G_GUINT64_FORMAT ", byte %ld): id used twice",
                        name, i, n->id, n->offset);
            ok = false;
        }
        g_hash_table_insert(ids, &n->id, GINT_TO_POINTER(i + 1));
    }
    for (int i = 0; ok && i < r->n; i++) {
        ChakraNode *n = &r->nodes[i];
        n->dep_idx = g_new(int, n->ndeps + 1);
        for (int k = 0; ok && k < n->ndeps; k++) {
            int j = GPOINTER_TO_INT(g_hash_table_lookup(ids, &n->deps[k]));
            if (!j) {
                g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT,
                            "%s: node %d (id %" G_GUINT64_FORMAT ", byte %ld): depends on node id %" G_GUINT64_FORMAT
                            ", which the file lacks",
                            name, i, n->id, n->offset, n->deps[k]);
                ok = false;
            }
            n->dep_idx[k] = j - 1;
        }
    }
    g_hash_table_destroy(ids);
    return ok && check_acyclic(name, r, err);
}

#ifdef SHARDSIM_HAVE_CHAKRA
#include "et_def.pb-c.h"

bool chakra_supported(void) { return true; }

/* Any integer or boolean attribute as int64 (traces differ in the type they
 * give: Chakra's feeder reads comm_size as int64, tensor_size as uint64). */
static bool attr_int(const ChakraProtoMsg__AttributeProto *a, int64_t *out)
{
    switch (a->value_case) {
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT32_VAL: *out = a->int32_val; return true;
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT64_VAL: *out = a->int64_val; return true;
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_UINT32_VAL: *out = a->uint32_val; return true;
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_UINT64_VAL: *out = (int64_t)(a->uint64_val > INT64_MAX ? INT64_MAX : a->uint64_val); return true;
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_SINT32_VAL: *out = a->sint32_val; return true;
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_SINT64_VAL: *out = a->sint64_val; return true;
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_FIXED32_VAL: *out = a->fixed32_val; return true;
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_FIXED64_VAL: *out = (int64_t)(a->fixed64_val > INT64_MAX ? INT64_MAX : a->fixed64_val); return true;
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_SFIXED32_VAL: *out = a->sfixed32_val; return true;
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_SFIXED64_VAL: *out = a->sfixed64_val; return true;
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_BOOL_VAL: *out = a->bool_val; return true;
    default: return false;
    }
}

static bool attr_num(const ChakraProtoMsg__AttributeProto *a, double *out)
{
    int64_t v;
    if (a->value_case == CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_DOUBLE_VAL)
        *out = a->double_val;
    else if (a->value_case == CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_FLOAT_VAL)
        *out = a->float_val;
    else if (attr_int(a, &v))
        *out = (double)v;
    else
        return false;
    return *out >= 0 && *out < 1e30;
}

/* The attributes a replay reads; false (with the attribute's name in
 * `bad`) where one has a type that says nothing. */
static bool node_attrs(const ChakraProtoMsg__Node *m, ChakraNode *n, const char **bad)
{
    for (size_t i = 0; i < m->n_attr; i++) {
        const ChakraProtoMsg__AttributeProto *a = m->attr[i];
        const char *k = a->name ? a->name : "";
        int64_t v = 0;
        bool ok = true;
        if (!strcmp(k, "num_ops"))
            ok = attr_num(a, &n->num_ops);
        else if (!strcmp(k, "tensor_size"))
            ok = attr_num(a, &n->tensor_size);
        else if (!strcmp(k, "comm_type")) {
            ok = attr_int(a, &v) && v >= 0 && v < CHAKRA_NUM_COMM_TYPES;
            n->comm_type = (int)v;
        } else if (!strcmp(k, "comm_size"))
            ok = attr_int(a, &n->comm_size) && n->comm_size >= 0;
        else if (!strcmp(k, "comm_src"))
            ok = attr_int(a, &n->comm_src) && n->comm_src >= 0;
        else if (!strcmp(k, "comm_dst"))
            ok = attr_int(a, &n->comm_dst) && n->comm_dst >= 0;
        else if (!strcmp(k, "comm_tag"))
            ok = attr_int(a, &n->comm_tag);
        else if (!strcmp(k, "stream"))
            ok = attr_int(a, &n->stream) && n->stream != CHAKRA_NO_STREAM;
        else if (!strcmp(k, "is_cpu_op"))
            n->is_cpu_op = attr_int(a, &v) && v;
        else if (!strcmp(k, "shardsim_duration_ps"))
            ok = attr_int(a, &n->duration_ps) && n->duration_ps >= 0;
        else if (!strcmp(k, "pg_name")) {
            ok = a->value_case == CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_STRING_VAL;
            if (ok) {
                g_free(n->pg_name);
                n->pg_name = g_strdup(a->string_val);
            }
        }
        if (!ok) {
            *bad = k;
            return false;
        }
    }
    return true;
}

static bool decode_node(const char *name, int idx, long off, const uint8_t *p, size_t len, ChakraNode *n,
                        GError **err)
{
    ChakraProtoMsg__Node *m = chakra_proto_msg__node__unpack(NULL, len, p);
    if (!m) {
        g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "%s: node %d (byte %ld): not a Chakra Node message", name, idx, off);
        return false;
    }
    *n = (ChakraNode){.id = m->id, .name = g_strdup(m->name ? m->name : ""), .type = (int)m->type,
                      .duration_us = m->duration_micros, .duration_ps = -1, .comm_type = -1, .comm_size = -1,
                      .comm_src = -1, .comm_dst = -1, .comm_tag = -1, .pg_name = g_strdup(""),
                      .stream = CHAKRA_NO_STREAM, .offset = off};
    /* data_deps order the nodes; ctrl_deps are the PyTorch converter's
     * parent operator (containment, not order), which Chakra's feeder and
     * ASTRA-sim ignore: so does the replay */
    n->deps = g_new(uint64_t, m->n_data_deps + 1);
    for (size_t k = 0; k < m->n_data_deps; k++)
        n->deps[n->ndeps++] = m->data_deps[k];
    const char *bad = NULL;
    bool ok = node_attrs(m, n, &bad);
    if (!ok) /* before the message goes: `bad` is its attribute's name */
        g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT,
                    "%s: node %d (id %" G_GUINT64_FORMAT ", byte %ld): attribute %s has a value of the wrong type or range",
                    name, idx, n->id, off, SIM_ECHO(bad));
    chakra_proto_msg__node__free_unpacked(m, NULL);
    const char *why = NULL;
    if (!ok)
        ;
    else if (n->type < CHAKRA_METADATA || n->type > CHAKRA_COLL)
        why = "unknown node type";
    /* the host side of a communication (PyTorch's record_param_comms, is_cpu_op) says no peers: a host op */
    else if (n->type == CHAKRA_COLL && n->comm_type < 0 && !n->is_cpu_op)
        why = "a COMM_COLL_NODE without comm_type";
    else if (n->type == CHAKRA_SEND && n->comm_dst < 0 && !n->is_cpu_op)
        why = "a COMM_SEND_NODE without comm_dst";
    else if (n->type == CHAKRA_RECV && n->comm_src < 0 && !n->is_cpu_op)
        why = "a COMM_RECV_NODE without comm_src";
    if (why) {
        g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "%s: node %d (id %" G_GUINT64_FORMAT ", byte %ld): %s (type %d)",
                    name, idx, n->id, off, why, n->type);
        ok = false;
    }
    return ok;
}

bool chakra_parse_rank(const char *name, const uint8_t *buf, size_t len, ChakraRank *r, GError **err)
{
    r->path = g_strdup(name);
    r->topo_rank = -1;
    size_t pos = 0;
    GArray *nodes = g_array_new(FALSE, TRUE, sizeof(ChakraNode));
    bool ok = true;
    for (int idx = -1; ok && pos < len; idx++) {
        size_t start = pos;
        uint64_t mlen = 0;
        int vr = read_varint32(buf, len, &pos, &mlen);
        const char *what = idx < 0 ? "the global metadata" : "node";
        if (vr < 0 || mlen > len - pos) {
            GString *s = g_string_new(NULL);
            g_string_printf(s, "%s: %s", name, what);
            if (idx >= 0)
                g_string_append_printf(s, " %d", idx);
            if (vr == -1)
                g_string_append_printf(s, " (byte %zu): the file ends inside its length prefix", start);
            else if (vr == -2)
                g_string_append_printf(s, " (byte %zu): its length prefix is longer than a 32-bit varint", start);
            else
                g_string_append_printf(s, " (byte %zu): length %" G_GUINT64_FORMAT " runs past the end of the file (%zu bytes left)",
                                       start, mlen, len - pos);
            g_set_error_literal(err, SIM_ERROR, SIM_ERROR_INPUT, s->str);
            g_string_free(s, TRUE);
            ok = false;
        } else if (idx < 0) {
            ChakraProtoMsg__GlobalMetadata *gm = chakra_proto_msg__global_metadata__unpack(NULL, mlen, buf + pos);
            if (!gm) {
                g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "%s: byte 0: not a Chakra GlobalMetadata message", name);
                ok = false;
            } else {
                r->version = g_strdup(gm->version ? gm->version : "");
                for (size_t k = 0; k < gm->n_attr; k++) {
                    int64_t v;
                    if (gm->attr[k]->name && !strcmp(gm->attr[k]->name, "shardsim_topology_rank") &&
                        attr_int(gm->attr[k], &v) && v >= 0)
                        r->topo_rank = v;
                }
                chakra_proto_msg__global_metadata__free_unpacked(gm, NULL);
            }
        } else {
            ChakraNode n = {0};
            ok = decode_node(name, idx, (long)start, buf + pos, mlen, &n, err);
            g_array_append_val(nodes, n); /* kept even on failure: clear frees it */
        }
        pos += ok ? mlen : 0;
    }
    r->n = (int)nodes->len;
    r->nodes = (ChakraNode *)(void *)g_array_free(nodes, FALSE);
    if (ok && !r->version) {
        g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "%s: an empty file (no global metadata)", name);
        ok = false;
    }
    return ok && resolve_deps(name, r, err);
}

static bool put_msg(GByteArray *out, const ProtobufCMessage *m)
{
    size_t n = protobuf_c_message_get_packed_size(m);
    if (n > 0xffffffffu)
        return false;
    uint8_t pre[5];
    int k = 0;
    size_t v = n;
    do {
        pre[k++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
        v >>= 7;
    } while (v);
    g_byte_array_append(out, pre, (guint)k);
    guint at = out->len;
    g_byte_array_set_size(out, at + (guint)n);
    protobuf_c_message_pack(m, out->data + at);
    return true;
}

/* Attributes of one node being written: storage lives until the node is packed. */
typedef struct {
    ChakraProtoMsg__AttributeProto a[12];
    ChakraProtoMsg__AttributeProto *p[12];
    int n;
} Attrs;

static ChakraProtoMsg__AttributeProto *attr_add(Attrs *at, const char *name)
{
    ChakraProtoMsg__AttributeProto *a = &at->a[at->n];
    chakra_proto_msg__attribute_proto__init(a);
    a->name = (char *)name;
    at->p[at->n] = a;
    at->n++;
    return a;
}

static void attr_i64(Attrs *at, const char *name, int64_t v)
{
    ChakraProtoMsg__AttributeProto *a = attr_add(at, name);
    a->value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT64_VAL;
    a->int64_val = v;
}

static void attr_u64(Attrs *at, const char *name, uint64_t v)
{
    ChakraProtoMsg__AttributeProto *a = attr_add(at, name);
    a->value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_UINT64_VAL;
    a->uint64_val = v;
}

/* The attribute types Chakra's feeder reads each name as. */
static void node_attrs_out(const ChakraNode *n, Attrs *at)
{
    ChakraProtoMsg__AttributeProto *cpu = attr_add(at, "is_cpu_op");
    cpu->value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_BOOL_VAL;
    cpu->bool_val = n->is_cpu_op;
    if (n->num_ops > 0)
        attr_i64(at, "num_ops", (int64_t)n->num_ops);
    if (n->tensor_size > 0)
        attr_u64(at, "tensor_size", (uint64_t)n->tensor_size);
    if (n->comm_type >= 0)
        attr_i64(at, "comm_type", n->comm_type);
    if (n->comm_size >= 0)
        attr_i64(at, "comm_size", n->comm_size);
    ChakraProtoMsg__AttributeProto *a;
    int64_t v32[] = {n->comm_src, n->comm_dst, n->comm_tag};
    const char *k32[] = {"comm_src", "comm_dst", "comm_tag"};
    for (int k = 0; k < 3; k++)
        if (v32[k] >= 0) {
            a = attr_add(at, k32[k]);
            a->value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT32_VAL;
            a->int32_val = (int32_t)v32[k];
        }
    if (n->pg_name && *n->pg_name) {
        a = attr_add(at, "pg_name");
        a->value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_STRING_VAL;
        a->string_val = n->pg_name;
    }
    if (n->stream != CHAKRA_NO_STREAM)
        attr_i64(at, "stream", n->stream);
    if (n->duration_ps >= 0)
        attr_u64(at, "shardsim_duration_ps", (uint64_t)n->duration_ps);
}

bool chakra_write_rank(const char *path, const ChakraRank *r, GError **err)
{
    GByteArray *out = g_byte_array_new();
    ChakraProtoMsg__GlobalMetadata gm = CHAKRA_PROTO_MSG__GLOBAL_METADATA__INIT;
    gm.version = r->version ? r->version : (char *)"0.0.4";
    Attrs gat = {.n = 0};
    if (r->topo_rank >= 0) {
        attr_i64(&gat, "shardsim_topology_rank", r->topo_rank);
        gm.n_attr = (size_t)gat.n;
        gm.attr = gat.p;
    }
    bool ok = put_msg(out, &gm.base);
    for (int i = 0; ok && i < r->n; i++) {
        const ChakraNode *n = &r->nodes[i];
        ChakraProtoMsg__Node m = CHAKRA_PROTO_MSG__NODE__INIT;
        m.id = n->id;
        m.name = n->name ? n->name : (char *)"";
        m.type = (ChakraProtoMsg__NodeType)n->type;
        m.n_data_deps = (size_t)n->ndeps;
        m.data_deps = n->deps;
        m.duration_micros = n->duration_ps >= 0 ? (uint64_t)((n->duration_ps + 500000) / 1000000) : n->duration_us;
        Attrs at = {.n = 0};
        node_attrs_out(n, &at);
        m.n_attr = (size_t)at.n;
        m.attr = at.p;
        ok = put_msg(out, &m.base);
    }
    if (ok)
        ok = sim_file_write(path, (const char *)out->data, out->len, err);
    else
        g_set_error(err, SIM_ERROR, SIM_ERROR_INTERNAL, "%s: a node too large to write", path);
    g_byte_array_free(out, TRUE);
    return ok;
}

/* "NAME.RANK.et" -> NAME (allocated) and RANK; NULL if it is not one. */
static char *split_name(const char *file, long *rank)
{
    size_t n = strlen(file);
    if (n < 5 || strcmp(file + n - 3, ".et") != 0)
        return NULL;
    const char *end = file + n - 3, *p = end;
    while (p > file && g_ascii_isdigit(p[-1]))
        p--;
    if (p == end || p == file || p[-1] != '.' || end - p > 7)
        return NULL;
    *rank = strtol(p, NULL, 10);
    return g_strndup(file, (gsize)(p - 1 - file));
}

ChakraTrace *chakra_load_dir(const char *dir, GError **err)
{
    GError *e = NULL;
    GDir *d = g_dir_open(dir, 0, &e);
    if (!d) {
        g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "%s: cannot read the directory of a Chakra trace: %s", dir,
                    e->message);
        g_error_free(e);
        return NULL;
    }
    char *prefix = NULL;
    GHashTable *files = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
    long maxr = -1;
    bool ok = true;
    const char *f;
    while (ok && (f = g_dir_read_name(d))) {
        long rk;
        char *pre = split_name(f, &rk);
        if (!pre)
            continue;
        if (!prefix)
            prefix = g_strdup(pre);
        if (strcmp(prefix, pre) != 0) {
            char *a = g_strdup(prefix), *b = g_strdup(pre);
            if (strcmp(a, b) > 0) {
                char *t = a;
                a = b;
                b = t;
            }
            g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "%s: holds traces of two workloads (%s.*.et and %s.*.et)", dir,
                        SIM_ECHO(a), SIM_ECHO(b));
            g_free(a);
            g_free(b);
            ok = false;
        } else if (g_hash_table_contains(files, GINT_TO_POINTER(rk + 1))) {
            g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "%s: two files for rank %ld", dir, rk);
            ok = false;
        } else {
            g_hash_table_insert(files, GINT_TO_POINTER(rk + 1), g_build_filename(dir, f, NULL));
            maxr = rk > maxr ? rk : maxr;
        }
        g_free(pre);
    }
    g_dir_close(d);
    ChakraTrace *t = NULL;
    if (ok && maxr < 0) {
        g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "%s: no Chakra trace files (NAME.RANK.et) in it", dir);
        ok = false;
    }
    for (long r = 0; ok && r <= maxr; r++)
        if (!g_hash_table_contains(files, GINT_TO_POINTER(r + 1))) {
            g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "%s: %s.%ld.et is missing (ranks go up to %ld)", dir, prefix,
                        r, maxr);
            ok = false;
        }
    if (ok) {
        t = g_new0(ChakraTrace, 1);
        t->ranks = g_new0(ChakraRank, maxr + 1);
        t->nranks = (int)maxr + 1;
        for (int r = 0; ok && r < t->nranks; r++) {
            const char *path = g_hash_table_lookup(files, GINT_TO_POINTER(r + 1));
            size_t len = 0;
            char *buf = sim_file_read(path, CHAKRA_FILE_CAP, "Chakra trace", &len, err);
            ok = buf && chakra_parse_rank(path, (const uint8_t *)buf, len, &t->ranks[r], err);
            g_free(buf);
        }
        if (!ok) {
            chakra_trace_free(t);
            t = NULL;
        }
    }
    g_hash_table_destroy(files);
    g_free(prefix);
    return t;
}

#else

bool chakra_supported(void) { return false; }

static gboolean no_chakra(GError **err)
{
    g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT,
                "built without Chakra support (install protobuf-c: libprotobuf-c-dev protobuf-c-compiler, and rebuild)");
    return false;
}

bool chakra_parse_rank(const char *name, const uint8_t *buf, size_t len, ChakraRank *r, GError **err)
{
    (void)resolve_deps;
    (void)read_varint32;
    return no_chakra(err);
}

ChakraTrace *chakra_load_dir(const char *dir, GError **err)
{
    no_chakra(err);
    return NULL;
}

bool chakra_write_rank(const char *path, const ChakraRank *r, GError **err) { return no_chakra(err); }

#endif
