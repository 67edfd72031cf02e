#include "otf2trace.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

struct Otf2Trace {
    GArray *rows; /* Otf2Row, sorted */
    int n_ranks, n_hosts;
    char *note;
};

void otf2trace_free(Otf2Trace *t)
{
    if (!t)
        return;
    g_array_free(t->rows, TRUE);
    g_free(t->note);
    g_free(t);
}

size_t otf2trace_n_rows(const Otf2Trace *t) { return t ? t->rows->len : 0; }

const Otf2Row *otf2trace_row(const Otf2Trace *t, size_t i)
{
    if (!t || i >= t->rows->len)
        return NULL;
    return &g_array_index(t->rows, Otf2Row, i);
}

int otf2trace_n_ranks(const Otf2Trace *t) { return t ? t->n_ranks : 0; }
int otf2trace_n_hosts(const Otf2Trace *t) { return t ? t->n_hosts : 0; }
const char *otf2trace_note(const Otf2Trace *t) { return t && t->note ? t->note : ""; }

#ifndef SHARDSIM_HAVE_OTF2

bool otf2trace_available(void) { return false; }

Otf2Trace *otf2trace_load(const char *anchor_path, GError **err)
{
    g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "%s: built without OTF2 support",
                anchor_path ? anchor_path : "(null)");
    return NULL;
}

#else

#include <otf2/otf2.h>

/* libotf2 3.0.2 leaks its half-built archive when OTF2_Reader_Open fails on an
 * unreadable anchor; LeakSanitizer is told to ignore what that call allocates
 * (the reader it returns is always closed, so nothing real is hidden). */
#if defined(__SANITIZE_ADDRESS__)
#define OTF2TRACE_LSAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define OTF2TRACE_LSAN 1
#endif
#endif
#ifdef OTF2TRACE_LSAN
#include <sanitizer/lsan_interface.h>
#define LSAN_OFF() __lsan_disable()
#define LSAN_ON() __lsan_enable()
#else
#define LSAN_OFF() ((void)0)
#define LSAN_ON() ((void)0)
#endif

bool otf2trace_available(void) { return true; }

/* ---- definitions ---- */

typedef struct {
    OTF2_StringRef class_name;
    OTF2_SystemTreeNodeRef parent;
} StNode;

typedef struct {
    OTF2_LocationGroupType type;
    OTF2_SystemTreeNodeRef parent;
} LocGroup;

typedef struct {
    OTF2_GroupType type;
    OTF2_Paradigm paradigm;
    uint32_t n_members;
} Group;

/* Per location: the open collective and the per-communicator sequence. */
typedef struct {
    OTF2_LocationRef id;
    OTF2_LocationGroupRef group;
    bool in_coll;
    uint64_t coll_begin;
    GHashTable *seq;        /* comm -> next sequence number (uint) */
    NcclTestsOp region_op;  /* fallback: the open MPI_* region, 0 when none */
    uint64_t region_begin;
    uint64_t region_seq[NCCLTESTS_SENDRECV + 1];
} Loc;

/* One collective instance being assembled from its ranks' events. */
typedef struct {
    OTF2_CollectiveOp op;
    int n;
    uint64_t first_begin, last_end;
    double sum_rank_ticks;
    uint64_t max_sent, max_recv;
} Inst;

typedef struct {
    NcclTestsOp op;
    double size;
} RowKey;

typedef struct {
    double sum_span, sum_rank; /* ticks */
    int count;
} RowAcc;

typedef struct {
    const char *path;
    char *otf2_error; /* first message of libotf2's error handler */
    char *error;      /* our first error; stops reading */

    uint64_t timer_resolution;
    bool have_clock;
    GHashTable *strings;   /* StringRef -> char* */
    GHashTable *st_nodes;  /* SystemTreeNodeRef -> StNode* */
    GHashTable *loc_groups; /* LocationGroupRef -> LocGroup* */
    GHashTable *groups;    /* GroupRef -> Group* */
    GHashTable *comm_size; /* CommRef -> uint (size + 1, 0 = unknown) */
    GHashTable *region_op; /* RegionRef -> NcclTestsOp, only MPI collectives */
    GArray *mpi_locations; /* uint64 members of the MPI COMM_LOCATIONS group */
    bool have_mpi_locations;
    GPtrArray *locs;        /* Loc*, in definition order */
    GHashTable *loc_index;  /* LocationRef (gint64*) -> index + 1 */

    int n_ranks, n_hosts;
    GHashTable *insts;       /* (comm << 32 | seq) (gint64*) -> Inst* */
    GHashTable *region_insts; /* fallback: (op << 48 | seq) -> Inst* */
    GTree *rows;             /* RowKey* -> RowAcc* */
    GTree *region_rows;

    /* what the note tells */
    uint64_t n_coll_events;
    uint64_t ignored[OTF2_COLLECTIVE_OP_DESTROY_HANDLE_AND_DEALLOCATE + 1];
    uint64_t ignored_other;
    uint64_t subcomm_calls;
    uint64_t in_place;
    uint64_t stray_leaves; /* Leave of an MPI_* region without its Enter */
} Load;

static void load_fail(Load *L, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
static void load_fail(Load *L, const char *fmt, ...)
{
    if (L->error)
        return;
    va_list ap;
    va_start(ap, fmt);
    L->error = g_strdup_vprintf(fmt, ap);
    va_end(ap);
}

static OTF2_ErrorCode on_otf2_error(void *user, const char *file, uint64_t line, const char *function,
                                    OTF2_ErrorCode code, const char *fmt, va_list va)
{
    Load *L = user;
    if (!L->otf2_error) {
        char *msg = g_strdup_vprintf(fmt, va);
        L->otf2_error = g_strdup_printf("%s%s%s", OTF2_Error_GetDescription(code),
                                        msg[0] ? ": " : "", msg);
        g_free(msg);
    }
    return code;
}

static const char *otf2_why(Load *L, OTF2_ErrorCode code)
{
    return L->otf2_error ? L->otf2_error : OTF2_Error_GetDescription(code);
}

static gint64 *key64(uint64_t v)
{
    gint64 *k = g_new(gint64, 1);
    *k = (gint64)v;
    return k;
}

static NcclTestsOp op_from_collective(OTF2_CollectiveOp op)
{
    switch (op) {
    case OTF2_COLLECTIVE_OP_ALLREDUCE: return NCCLTESTS_ALLREDUCE;
    case OTF2_COLLECTIVE_OP_REDUCE_SCATTER:
    case OTF2_COLLECTIVE_OP_REDUCE_SCATTER_BLOCK: return NCCLTESTS_REDUCESCATTER;
    case OTF2_COLLECTIVE_OP_ALLGATHER: return NCCLTESTS_ALLGATHER;
    case OTF2_COLLECTIVE_OP_BCAST: return NCCLTESTS_BROADCAST;
    case OTF2_COLLECTIVE_OP_REDUCE: return NCCLTESTS_REDUCE;
    case OTF2_COLLECTIVE_OP_ALLTOALL: return NCCLTESTS_ALLTOALL;
    default: return NCCLTESTS_UNKNOWN;
    }
}

static NcclTestsOp op_from_region(const char *name)
{
    static const struct {
        const char *name;
        NcclTestsOp op;
    } map[] = {
        {"MPI_Allreduce", NCCLTESTS_ALLREDUCE},   {"MPI_Reduce_scatter", NCCLTESTS_REDUCESCATTER},
        {"MPI_Reduce_scatter_block", NCCLTESTS_REDUCESCATTER},
        {"MPI_Allgather", NCCLTESTS_ALLGATHER},   {"MPI_Bcast", NCCLTESTS_BROADCAST},
        {"MPI_Reduce", NCCLTESTS_REDUCE},         {"MPI_Alltoall", NCCLTESTS_ALLTOALL},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(map); i++)
        if (strcmp(name, map[i].name) == 0)
            return map[i].op;
    return NCCLTESTS_UNKNOWN;
}

static const char *collective_name(OTF2_CollectiveOp op)
{
    static const char *names[] = {
        "barrier", "bcast", "gather", "gatherv", "scatter", "scatterv", "allgather", "allgatherv",
        "alltoall", "alltoallv", "alltoallw", "allreduce", "reduce", "reduce_scatter", "scan",
        "exscan", "reduce_scatter_block", "create_handle", "destroy_handle", "allocate",
        "deallocate", "create_handle_and_allocate", "destroy_handle_and_deallocate",
    };
    return op < G_N_ELEMENTS(names) ? names[op] : "unknown";
}

static OTF2_CallbackCode def_clock(void *u, uint64_t resolution, uint64_t offset, uint64_t length,
                                   uint64_t realtime)
{
    Load *L = u;
    if (resolution == 0) {
        load_fail(L, "clock properties give a timer resolution of 0");
        return OTF2_CALLBACK_INTERRUPT;
    }
    L->timer_resolution = resolution;
    L->have_clock = true;
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode def_string(void *u, OTF2_StringRef self, const char *s)
{
    Load *L = u;
    g_hash_table_replace(L->strings, GUINT_TO_POINTER(self), g_strdup(s ? s : ""));
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode def_st_node(void *u, OTF2_SystemTreeNodeRef self, OTF2_StringRef name,
                                     OTF2_StringRef class_name, OTF2_SystemTreeNodeRef parent)
{
    Load *L = u;
    StNode *n = g_new(StNode, 1);
    n->class_name = class_name;
    n->parent = parent;
    g_hash_table_replace(L->st_nodes, GUINT_TO_POINTER(self), n);
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode def_loc_group(void *u, OTF2_LocationGroupRef self, OTF2_StringRef name,
                                       OTF2_LocationGroupType type, OTF2_SystemTreeNodeRef parent,
                                       OTF2_LocationGroupRef creator)
{
    Load *L = u;
    LocGroup *g = g_new(LocGroup, 1);
    g->type = type;
    g->parent = parent;
    g_hash_table_replace(L->loc_groups, GUINT_TO_POINTER(self), g);
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode def_location(void *u, OTF2_LocationRef self, OTF2_StringRef name,
                                      OTF2_LocationType type, uint64_t n_events,
                                      OTF2_LocationGroupRef group)
{
    Load *L = u;
    if (g_hash_table_contains(L->loc_index, &(gint64){(gint64)self})) {
        load_fail(L, "location %" G_GUINT64_FORMAT " is defined twice", (guint64)self);
        return OTF2_CALLBACK_INTERRUPT;
    }
    Loc *l = g_new0(Loc, 1);
    l->id = self;
    l->group = group;
    l->seq = g_hash_table_new(g_direct_hash, g_direct_equal);
    g_ptr_array_add(L->locs, l);
    g_hash_table_insert(L->loc_index, key64(self), GUINT_TO_POINTER(L->locs->len));
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode def_region(void *u, OTF2_RegionRef self, OTF2_StringRef name,
                                    OTF2_StringRef canonical, OTF2_StringRef description,
                                    OTF2_RegionRole role, OTF2_Paradigm paradigm,
                                    OTF2_RegionFlag flags, OTF2_StringRef file, uint32_t begin,
                                    uint32_t end)
{
    Load *L = u;
    const char *s = g_hash_table_lookup(L->strings, GUINT_TO_POINTER(name));
    NcclTestsOp op = s ? op_from_region(s) : NCCLTESTS_UNKNOWN;
    if (op != NCCLTESTS_UNKNOWN)
        g_hash_table_replace(L->region_op, GUINT_TO_POINTER(self), GINT_TO_POINTER(op));
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode def_group(void *u, OTF2_GroupRef self, OTF2_StringRef name,
                                   OTF2_GroupType type, OTF2_Paradigm paradigm,
                                   OTF2_GroupFlag flags, uint32_t n, const uint64_t *members)
{
    Load *L = u;
    Group *g = g_new(Group, 1);
    g->type = type;
    g->paradigm = paradigm;
    g->n_members = n;
    g_hash_table_replace(L->groups, GUINT_TO_POINTER(self), g);
    if (type == OTF2_GROUP_TYPE_COMM_LOCATIONS && paradigm == OTF2_PARADIGM_MPI) {
        g_array_set_size(L->mpi_locations, 0);
        if (n > 0)
            g_array_append_vals(L->mpi_locations, members, n);
        L->have_mpi_locations = true;
    }
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode def_comm(void *u, OTF2_CommRef self, OTF2_StringRef name,
                                  OTF2_GroupRef group, OTF2_CommRef parent, OTF2_CommFlag flags)
{
    Load *L = u;
    const Group *g = g_hash_table_lookup(L->groups, GUINT_TO_POINTER(group));
    unsigned size = 0;
    if (g)
        size = g->type == OTF2_GROUP_TYPE_COMM_SELF ? 1 : g->n_members;
    g_hash_table_replace(L->comm_size, GUINT_TO_POINTER(self), GUINT_TO_POINTER(size + 1));
    return OTF2_CALLBACK_SUCCESS;
}

/* ---- events ---- */

static Loc *find_loc(Load *L, OTF2_LocationRef id)
{
    gpointer v = g_hash_table_lookup(L->loc_index, &(gint64){(gint64)id});
    if (!v) {
        load_fail(L, "event on undefined location %" G_GUINT64_FORMAT, (guint64)id);
        return NULL;
    }
    return g_ptr_array_index(L->locs, GPOINTER_TO_UINT(v) - 1);
}

static gint row_key_cmp(gconstpointer a, gconstpointer b, gpointer unused)
{
    const RowKey *x = a, *y = b;
    if (x->op != y->op)
        return x->op < y->op ? -1 : 1;
    if (isnan(x->size) || isnan(y->size))
        return isnan(x->size) - isnan(y->size);
    return x->size < y->size ? -1 : x->size > y->size;
}

static void add_row(GTree *rows, NcclTestsOp op, double size, const Inst *in)
{
    RowKey key = {op, size};
    RowAcc *acc = g_tree_lookup(rows, &key);
    if (!acc) {
        acc = g_new0(RowAcc, 1);
        g_tree_insert(rows, g_memdup2(&key, sizeof key), acc);
    }
    acc->sum_span += (double)(in->last_end - in->first_begin);
    acc->sum_rank += in->sum_rank_ticks / in->n;
    acc->count++;
}

/* nccl-tests' size of a finished instance on a communicator of n ranks (see
 * otf2trace.h for the conventions). */
static double instance_size(Load *L, const Inst *in, int n)
{
    NcclTestsOp op = op_from_collective(in->op);
    double v;
    int per; /* divisor of the recorded bytes out of place */
    switch (op) {
    case NCCLTESTS_ALLREDUCE: v = (double)in->max_sent; per = n; break;
    case NCCLTESTS_REDUCESCATTER:
    case NCCLTESTS_ALLTOALL: v = (double)in->max_sent; per = 1; break;
    case NCCLTESTS_ALLGATHER: v = (double)in->max_recv; per = 1; break;
    case NCCLTESTS_BROADCAST: return (double)in->max_recv;
    default: return (double)in->max_sent; /* reduce */
    }
    uint64_t raw = op == NCCLTESTS_ALLGATHER ? in->max_recv : in->max_sent;
    if (n >= 2 && raw % (uint64_t)n != 0 && raw % (uint64_t)(n - 1) == 0) {
        L->in_place++;
        return v / (n - 1) * n / per;
    }
    return v / per;
}

static OTF2_CallbackCode ev_coll_begin(OTF2_LocationRef loc, OTF2_TimeStamp time, void *u,
                                       OTF2_AttributeList *attrs)
{
    Load *L = u;
    Loc *l = find_loc(L, loc);
    if (!l)
        return OTF2_CALLBACK_INTERRUPT;
    if (l->in_coll) {
        load_fail(L, "location %" G_GUINT64_FORMAT ": MpiCollectiveBegin inside another collective",
                  (guint64)loc);
        return OTF2_CALLBACK_INTERRUPT;
    }
    l->in_coll = true;
    l->coll_begin = time;
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode ev_coll_end(OTF2_LocationRef loc, OTF2_TimeStamp time, void *u,
                                     OTF2_AttributeList *attrs, OTF2_CollectiveOp op,
                                     OTF2_CommRef comm, uint32_t root, uint64_t sent,
                                     uint64_t recv)
{
    Load *L = u;
    Loc *l = find_loc(L, loc);
    if (!l)
        return OTF2_CALLBACK_INTERRUPT;
    if (!l->in_coll) {
        load_fail(L, "location %" G_GUINT64_FORMAT ": MpiCollectiveEnd without MpiCollectiveBegin",
                  (guint64)loc);
        return OTF2_CALLBACK_INTERRUPT;
    }
    l->in_coll = false;
    if (time < l->coll_begin) {
        load_fail(L, "location %" G_GUINT64_FORMAT ": collective ends before it begins",
                  (guint64)loc);
        return OTF2_CALLBACK_INTERRUPT;
    }
    L->n_coll_events++;
    gpointer sz = g_hash_table_lookup(L->comm_size, GUINT_TO_POINTER(comm));
    if (!sz) {
        load_fail(L, "location %" G_GUINT64_FORMAT ": collective on undefined communicator %u",
                  (guint64)loc, (unsigned)comm);
        return OTF2_CALLBACK_INTERRUPT;
    }
    /* every collective advances the sequence, kept or not, so ranks stay in step */
    unsigned seq = GPOINTER_TO_UINT(g_hash_table_lookup(l->seq, GUINT_TO_POINTER(comm)));
    g_hash_table_insert(l->seq, GUINT_TO_POINTER(comm), GUINT_TO_POINTER(seq + 1));

    if (op_from_collective(op) == NCCLTESTS_UNKNOWN) {
        if (op < G_N_ELEMENTS(L->ignored))
            L->ignored[op]++;
        else
            L->ignored_other++;
        return OTF2_CALLBACK_SUCCESS;
    }
    int n = (int)GPOINTER_TO_UINT(sz) - 1;
    if (n != L->n_ranks || n <= 0) {
        L->subcomm_calls++;
        return OTF2_CALLBACK_SUCCESS;
    }
    gint64 key = (gint64)(((uint64_t)comm << 32) | seq);
    Inst *in = g_hash_table_lookup(L->insts, &key);
    if (!in) {
        in = g_new0(Inst, 1);
        in->op = op;
        in->first_begin = l->coll_begin;
        in->last_end = time;
        g_hash_table_insert(L->insts, key64((uint64_t)key), in);
    } else if (in->op != op) {
        load_fail(L, "collective #%u on communicator %u is %s on one rank and %s on location %"
                  G_GUINT64_FORMAT, seq + 1, (unsigned)comm, collective_name(in->op),
                  collective_name(op), (guint64)loc);
        return OTF2_CALLBACK_INTERRUPT;
    }
    in->n++;
    in->first_begin = MIN(in->first_begin, l->coll_begin);
    in->last_end = MAX(in->last_end, time);
    in->sum_rank_ticks += (double)(time - l->coll_begin);
    in->max_sent = MAX(in->max_sent, sent);
    in->max_recv = MAX(in->max_recv, recv);
    if (in->n == n) {
        add_row(L->rows, op_from_collective(op), instance_size(L, in, n), in);
        g_hash_table_remove(L->insts, &key);
    }
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode ev_enter(OTF2_LocationRef loc, OTF2_TimeStamp time, void *u,
                                  OTF2_AttributeList *attrs, OTF2_RegionRef region)
{
    Load *L = u;
    gpointer op = g_hash_table_lookup(L->region_op, GUINT_TO_POINTER(region));
    if (!op)
        return OTF2_CALLBACK_SUCCESS;
    Loc *l = find_loc(L, loc);
    if (!l)
        return OTF2_CALLBACK_INTERRUPT;
    l->region_op = GPOINTER_TO_INT(op);
    l->region_begin = time;
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode ev_leave(OTF2_LocationRef loc, OTF2_TimeStamp time, void *u,
                                  OTF2_AttributeList *attrs, OTF2_RegionRef region)
{
    Load *L = u;
    gpointer opp = g_hash_table_lookup(L->region_op, GUINT_TO_POINTER(region));
    if (!opp)
        return OTF2_CALLBACK_SUCCESS;
    Loc *l = find_loc(L, loc);
    if (!l)
        return OTF2_CALLBACK_INTERRUPT;
    NcclTestsOp op = GPOINTER_TO_INT(opp);
    if (l->region_op != op || time < l->region_begin) {
        /* only the fallback uses regions: a stray Leave does not spoil the events */
        L->stray_leaves++;
        l->region_op = NCCLTESTS_UNKNOWN;
        return OTF2_CALLBACK_SUCCESS;
    }
    l->region_op = NCCLTESTS_UNKNOWN;
    uint64_t seq = l->region_seq[op]++;
    gint64 key = (gint64)(((uint64_t)op << 48) | seq);
    Inst *in = g_hash_table_lookup(L->region_insts, &key);
    if (!in) {
        in = g_new0(Inst, 1);
        in->first_begin = l->region_begin;
        in->last_end = time;
        g_hash_table_insert(L->region_insts, key64((uint64_t)key), in);
    }
    in->n++;
    in->first_begin = MIN(in->first_begin, l->region_begin);
    in->last_end = MAX(in->last_end, time);
    in->sum_rank_ticks += (double)(time - l->region_begin);
    if (in->n == L->n_ranks) {
        add_row(L->region_rows, op, NAN, in);
        g_hash_table_remove(L->region_insts, &key);
    }
    return OTF2_CALLBACK_SUCCESS;
}

/* ---- ranks, hosts, rows ---- */

static bool is_node_class(Load *L, OTF2_StringRef class_name)
{
    const char *s = g_hash_table_lookup(L->strings, GUINT_TO_POINTER(class_name));
    return s && g_ascii_strcasecmp(s, "node") == 0;
}

/* The host of a location: the nearest system-tree ancestor of class "node",
 * else the location group's own parent. */
static OTF2_SystemTreeNodeRef host_of(Load *L, const Loc *l)
{
    const LocGroup *g = g_hash_table_lookup(L->loc_groups, GUINT_TO_POINTER(l->group));
    if (!g)
        return OTF2_UNDEFINED_SYSTEM_TREE_NODE;
    OTF2_SystemTreeNodeRef ref = g->parent;
    for (guint depth = 0; depth <= g_hash_table_size(L->st_nodes); depth++) {
        const StNode *n = g_hash_table_lookup(L->st_nodes, GUINT_TO_POINTER(ref));
        if (!n)
            break;
        if (is_node_class(L, n->class_name))
            return ref;
        ref = n->parent;
    }
    return g->parent;
}

static void count_ranks_hosts(Load *L)
{
    GHashTable *seen = g_hash_table_new(g_direct_hash, g_direct_equal);
    int ranks = 0;
    if (L->have_mpi_locations) {
        for (guint i = 0; i < L->mpi_locations->len; i++) {
            uint64_t id = g_array_index(L->mpi_locations, uint64_t, i);
            gpointer v = g_hash_table_lookup(L->loc_index, &(gint64){(gint64)id});
            ranks++;
            if (v) {
                const Loc *l = g_ptr_array_index(L->locs, GPOINTER_TO_UINT(v) - 1);
                g_hash_table_add(seen, GUINT_TO_POINTER(host_of(L, l)));
            }
        }
    } else {
        /* no MPI group: one rank per process (its first location) */
        GHashTable *procs = g_hash_table_new(g_direct_hash, g_direct_equal);
        for (guint i = 0; i < L->locs->len; i++) {
            const Loc *l = g_ptr_array_index(L->locs, i);
            const LocGroup *g = g_hash_table_lookup(L->loc_groups, GUINT_TO_POINTER(l->group));
            if (g && g->type != OTF2_LOCATION_GROUP_TYPE_PROCESS)
                continue;
            if (!g_hash_table_add(procs, GUINT_TO_POINTER(l->group)))
                continue;
            ranks++;
            g_hash_table_add(seen, GUINT_TO_POINTER(host_of(L, l)));
        }
        g_hash_table_destroy(procs);
    }
    g_hash_table_remove(seen, GUINT_TO_POINTER(OTF2_UNDEFINED_SYSTEM_TREE_NODE));
    L->n_hosts = MAX(1, (int)g_hash_table_size(seen));
    g_hash_table_destroy(seen);
    L->n_ranks = ranks;
}

typedef struct {
    GArray *rows;
    uint64_t resolution;
} RowsOut;

static gboolean emit_row(gpointer k, gpointer v, gpointer u)
{
    const RowKey *key = k;
    const RowAcc *acc = v;
    RowsOut *out = u;
    Otf2Row r = {
        .op = key->op,
        .size_bytes = key->size,
        .time_s = acc->sum_span / acc->count / (double)out->resolution,
        .count = acc->count,
        .rank_time_s = acc->sum_rank / acc->count / (double)out->resolution,
    };
    g_array_append_val(out->rows, r);
    return FALSE;
}

static char *make_note(Load *L, bool fallback)
{
    GString *s = g_string_new(NULL);
    if (fallback)
        g_string_append(s, "no MpiCollective events: times from MPI_* region Enter/Leave, "
                           "sizes unknown, all on all ranks assumed; ");
    GString *ign = g_string_new(NULL);
    for (guint op = 0; op < G_N_ELEMENTS(L->ignored); op++)
        if (L->ignored[op])
            g_string_append_printf(ign, "%s%" G_GUINT64_FORMAT " %s", ign->len ? ", " : "",
                                   (guint64)L->ignored[op], collective_name(op));
    if (L->ignored_other)
        g_string_append_printf(ign, "%s%" G_GUINT64_FORMAT " of unknown type",
                               ign->len ? ", " : "", (guint64)L->ignored_other);
    if (ign->len)
        g_string_append_printf(s, "ignored collective calls: %s; ", ign->str);
    g_string_free(ign, TRUE);
    if (L->subcomm_calls)
        g_string_append_printf(s, "%" G_GUINT64_FORMAT " calls on communicators smaller than "
                               "the %d ranks skipped; ", (guint64)L->subcomm_calls, L->n_ranks);
    GHashTable *left = fallback ? L->region_insts : L->insts;
    if (g_hash_table_size(left))
        g_string_append_printf(s, "%u instances not finished by every rank skipped; ",
                               g_hash_table_size(left));
    if (L->stray_leaves && fallback)
        g_string_append_printf(s, "%" G_GUINT64_FORMAT " Leave events of MPI_* regions "
                               "without their Enter ignored; ", (guint64)L->stray_leaves);
    if (L->in_place && !fallback)
        g_string_append_printf(s, "%" G_GUINT64_FORMAT " instances read as MPI_IN_PLACE; ",
                               (guint64)L->in_place);
    if (s->len >= 2)
        g_string_truncate(s, s->len - 2);
    return g_string_free(s, FALSE);
}

static void load_init(Load *L, const char *path)
{
    memset(L, 0, sizeof *L);
    L->path = path;
    L->strings = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
    L->st_nodes = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
    L->loc_groups = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
    L->groups = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
    L->comm_size = g_hash_table_new(g_direct_hash, g_direct_equal);
    L->region_op = g_hash_table_new(g_direct_hash, g_direct_equal);
    L->mpi_locations = g_array_new(FALSE, FALSE, sizeof(uint64_t));
    L->locs = g_ptr_array_new();
    L->loc_index = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
    L->insts = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, g_free);
    L->region_insts = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, g_free);
    L->rows = g_tree_new_full(row_key_cmp, NULL, g_free, g_free);
    L->region_rows = g_tree_new_full(row_key_cmp, NULL, g_free, g_free);
}

static void load_clear(Load *L)
{
    for (guint i = 0; i < L->locs->len; i++) {
        Loc *l = g_ptr_array_index(L->locs, i);
        g_hash_table_destroy(l->seq);
        g_free(l);
    }
    g_ptr_array_free(L->locs, TRUE);
    g_hash_table_destroy(L->loc_index);
    g_hash_table_destroy(L->strings);
    g_hash_table_destroy(L->st_nodes);
    g_hash_table_destroy(L->loc_groups);
    g_hash_table_destroy(L->groups);
    g_hash_table_destroy(L->comm_size);
    g_hash_table_destroy(L->region_op);
    g_array_free(L->mpi_locations, TRUE);
    g_hash_table_destroy(L->insts);
    g_hash_table_destroy(L->region_insts);
    g_tree_destroy(L->rows);
    g_tree_destroy(L->region_rows);
    g_free(L->otf2_error);
    g_free(L->error);
}

/* Reads definitions and events; false with L->error set on failure. */
static bool read_archive(Load *L, OTF2_Reader *reader)
{
    OTF2_ErrorCode rc = OTF2_Reader_SetSerialCollectiveCallbacks(reader);
    uint64_t n_locations = 0;
    if (rc == OTF2_SUCCESS)
        rc = OTF2_Reader_GetNumberOfLocations(reader, &n_locations);
    if (rc != OTF2_SUCCESS) {
        load_fail(L, "cannot read the anchor file: %s", otf2_why(L, rc));
        return false;
    }

    OTF2_GlobalDefReader *gdr = OTF2_Reader_GetGlobalDefReader(reader);
    if (!gdr) {
        load_fail(L, "cannot open the global definitions: %s",
                  otf2_why(L, OTF2_ERROR_FILE_CAN_NOT_OPEN));
        return false;
    }
    OTF2_GlobalDefReaderCallbacks *dcb = OTF2_GlobalDefReaderCallbacks_New();
    OTF2_GlobalDefReaderCallbacks_SetClockPropertiesCallback(dcb, def_clock);
    OTF2_GlobalDefReaderCallbacks_SetStringCallback(dcb, def_string);
    OTF2_GlobalDefReaderCallbacks_SetSystemTreeNodeCallback(dcb, def_st_node);
    OTF2_GlobalDefReaderCallbacks_SetLocationGroupCallback(dcb, def_loc_group);
    OTF2_GlobalDefReaderCallbacks_SetLocationCallback(dcb, def_location);
    OTF2_GlobalDefReaderCallbacks_SetRegionCallback(dcb, def_region);
    OTF2_GlobalDefReaderCallbacks_SetGroupCallback(dcb, def_group);
    OTF2_GlobalDefReaderCallbacks_SetCommCallback(dcb, def_comm);
    OTF2_Reader_RegisterGlobalDefCallbacks(reader, gdr, dcb, L);
    OTF2_GlobalDefReaderCallbacks_Delete(dcb);
    uint64_t n_defs = 0;
    rc = OTF2_Reader_ReadAllGlobalDefinitions(reader, gdr, &n_defs);
    OTF2_Reader_CloseGlobalDefReader(reader, gdr);
    if (L->error)
        return false;
    if (rc != OTF2_SUCCESS) {
        load_fail(L, "cannot read the global definitions: %s", otf2_why(L, rc));
        return false;
    }
    if (!L->have_clock) {
        load_fail(L, "no clock properties in the global definitions");
        return false;
    }
    if (L->locs->len == 0) {
        load_fail(L, "no locations defined");
        return false;
    }
    count_ranks_hosts(L);
    g_free(L->otf2_error);
    L->otf2_error = NULL;

    for (guint i = 0; i < L->locs->len; i++)
        OTF2_Reader_SelectLocation(reader, ((Loc *)g_ptr_array_index(L->locs, i))->id);
    /* local definitions carry the mapping tables of tracers that write local
     * ids (Score-P); an archive without them is fine */
    bool defs_open = OTF2_Reader_OpenDefFiles(reader) == OTF2_SUCCESS;
    rc = OTF2_Reader_OpenEvtFiles(reader);
    if (rc != OTF2_SUCCESS) {
        if (defs_open)
            OTF2_Reader_CloseDefFiles(reader);
        load_fail(L, "cannot open the event files: %s", otf2_why(L, rc));
        return false;
    }
    for (guint i = 0; i < L->locs->len; i++) {
        OTF2_LocationRef id = ((Loc *)g_ptr_array_index(L->locs, i))->id;
        if (defs_open) {
            OTF2_DefReader *dr = OTF2_Reader_GetDefReader(reader, id);
            if (dr) {
                uint64_t n = 0;
                OTF2_Reader_ReadAllLocalDefinitions(reader, dr, &n);
                OTF2_Reader_CloseDefReader(reader, dr);
            }
        }
        /* registers the location with the global event reader */
        OTF2_Reader_GetEvtReader(reader, id);
    }
    if (defs_open)
        OTF2_Reader_CloseDefFiles(reader);
    g_free(L->otf2_error); /* a location without local definitions is no error */
    L->otf2_error = NULL;

    OTF2_GlobalEvtReader *ger = OTF2_Reader_GetGlobalEvtReader(reader);
    if (!ger) {
        OTF2_Reader_CloseEvtFiles(reader);
        load_fail(L, "cannot read the events: %s", otf2_why(L, OTF2_ERROR_FILE_CAN_NOT_OPEN));
        return false;
    }
    OTF2_GlobalEvtReaderCallbacks *ecb = OTF2_GlobalEvtReaderCallbacks_New();
    OTF2_GlobalEvtReaderCallbacks_SetMpiCollectiveBeginCallback(ecb, ev_coll_begin);
    OTF2_GlobalEvtReaderCallbacks_SetMpiCollectiveEndCallback(ecb, ev_coll_end);
    OTF2_GlobalEvtReaderCallbacks_SetEnterCallback(ecb, ev_enter);
    OTF2_GlobalEvtReaderCallbacks_SetLeaveCallback(ecb, ev_leave);
    OTF2_Reader_RegisterGlobalEvtCallbacks(reader, ger, ecb, L);
    OTF2_GlobalEvtReaderCallbacks_Delete(ecb);
    uint64_t n_events = 0;
    rc = OTF2_Reader_ReadAllGlobalEvents(reader, ger, &n_events);
    OTF2_Reader_CloseGlobalEvtReader(reader, ger);
    OTF2_Reader_CloseEvtFiles(reader);
    if (L->error)
        return false;
    if (rc != OTF2_SUCCESS) {
        load_fail(L, "cannot read the events: %s", otf2_why(L, rc));
        return false;
    }
    return true;
}

/* The anchor file's layout (OTF2_AnchorFile_Load): a chunk byte, an
 * endianness byte, "OTF2\0", anchor format, trace format, version (3 bytes),
 * two 8-byte chunk sizes, substrate, compression, two 8-byte counts, three
 * NUL-terminated strings (machine, creator, description); from format 2 a
 * 4-byte property count (in the endianness byte's order), that many name/value string pairs and an 8-byte
 * trace id; from format 3 two 4-byte counts and an end-of-file byte.  Walked
 * here in microseconds; NULL when it holds, else what is wrong. */
#define ANCHOR_MAX (1 << 20)
#define ANCHOR_LITTLE 0x42 /* OTF2_LITTLE_ENDIAN */
#define ANCHOR_BIG 0x23    /* OTF2_BIG_ENDIAN */
static const char *anchor_layout(const unsigned char *b, size_t n)
{
    if (n < 7 || memcmp(b + 2, "OTF2", 5) != 0)
        return "no OTF2 signature at its start";
    if (n < 0x2e + 3)
        return "the file ends inside its header";
    unsigned format = b[7];
    if (format == 0)
        return "anchor format 0";
    if (b[1] != ANCHOR_LITTLE && b[1] != ANCHOR_BIG)
        return "unknown byte order";
    if (b[0x1c] > 3 || b[0x1d] > 2)
        return "unknown file substrate or compression";
    size_t p = 0x2e;
    for (int k = 0; k < 3; k++) { /* machine, creator, description */
        const unsigned char *z = memchr(b + p, 0, n - p);
        if (!z)
            return "a string runs past the end of the file";
        p = (size_t)(z - b) + 1;
    }
    if (format < 2)
        return NULL;
    if (n - p < 4)
        return "the file ends before its property count";
    /* in the file's byte order; libotf2 allocates for that many first */
    uint32_t le = (uint32_t)b[p] | (uint32_t)b[p + 1] << 8 | (uint32_t)b[p + 2] << 16 | (uint32_t)b[p + 3] << 24;
    uint32_t be = (uint32_t)b[p + 3] | (uint32_t)b[p + 2] << 8 | (uint32_t)b[p + 1] << 16 | (uint32_t)b[p] << 24;
    uint64_t props = b[1] == ANCHOR_LITTLE ? le : be;
    p += 4;
    if (2 * props > n - p)
        return "more properties than the file has bytes";
    for (uint64_t k = 0; k < 2 * props; k++) {
        const unsigned char *z = memchr(b + p, 0, n - p);
        if (!z)
            return "a property runs past the end of the file";
        p = (size_t)(z - b) + 1;
    }
    size_t tail = 8 + (format > 2 ? 9 : 0); /* trace id; snapshots, thumbnails, end of file */
    if (n - p < tail)
        return "the file ends inside its header";
    return NULL;
}

static const char *anchor_problem(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return "cannot open it";
    unsigned char *b = g_malloc(ANCHOR_MAX + 1);
    size_t n = fread(b, 1, ANCHOR_MAX + 1, f);
    fclose(f);
    const char *why = n > ANCHOR_MAX ? "over 1 MiB, larger than any anchor" : anchor_layout(b, n);
    g_free(b);
    return why;
}

Otf2Trace *otf2trace_load(const char *anchor_path, GError **err)
{
    if (!g_file_test(anchor_path, G_FILE_TEST_IS_REGULAR)) {
        g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "%s: no such file (the .otf2 anchor file "
                    "of an OTF2 archive is expected)", anchor_path);
        return NULL;
    }
    /* libotf2 leaks its archive when the anchor is unreadable, and spends
     * seconds on a corrupted one: its layout is checked here first */
    const char *why = anchor_problem(anchor_path);
    if (why) {
        g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "%s: not an OTF2 archive anchor file (%s)", anchor_path, why);
        return NULL;
    }
    Load L;
    load_init(&L, anchor_path);
    OTF2_ErrorCallback old = OTF2_Error_RegisterCallback(on_otf2_error, &L);
    Otf2Trace *t = NULL;
    LSAN_OFF();
    OTF2_Reader *reader = OTF2_Reader_Open(anchor_path);
    LSAN_ON();
    if (!reader) {
        load_fail(&L, "cannot read the OTF2 anchor file: %s",
                  L.otf2_error ? L.otf2_error : "libotf2 cannot open it");
    } else {
        if (read_archive(&L, reader)) {
            bool fallback = L.n_coll_events == 0 && g_tree_nnodes(L.region_rows) > 0;
            t = g_new0(Otf2Trace, 1);
            t->rows = g_array_new(FALSE, FALSE, sizeof(Otf2Row));
            RowsOut out = {t->rows, L.timer_resolution};
            g_tree_foreach(fallback ? L.region_rows : L.rows, emit_row, &out);
            t->n_ranks = L.n_ranks;
            t->n_hosts = L.n_hosts;
            t->note = make_note(&L, fallback);
        }
        OTF2_Reader_Close(reader);
    }
    OTF2_Error_RegisterCallback(old, NULL);
    if (!t)
        g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "%s: %s", anchor_path,
                    L.error ? L.error : "unreadable OTF2 archive");
    load_clear(&L);
    return t;
}

#endif
