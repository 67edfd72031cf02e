/* OTF2 events: MpiCollectiveBegin/End matched across ranks into instances
 * (by communicator and sequence number), each finished instance's time and
 * nccl-tests size added to its row; without collective events, the Enter/Leave
 * of MPI_* regions matched by (region, n-th call) instead. */
#ifdef SHARDSIM_HAVE_OTF2

#include "otf2trace_load.h"

#include <math.h>

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

const char *otf2trace_collective_name(OTF2_CollectiveOp op)
{
    static const char *names[] = {
        "barrier", "bcast", "gather", "gatherv", "scatter", "scatterv", "allgather", "allgatherv",
        "alltoall", "alltoallv", "alltoallw", "allreduce", "reduce", "reduce_scatter", "scan",
        "exscan", "reduce_scatter_block", "create_handle", "destroy_handle", "allocate",
        "deallocate", "create_handle_and_allocate", "destroy_handle_and_deallocate",
    };
    return op < G_N_ELEMENTS(names) ? names[op] : "unknown";
}

static Loc *find_loc(Load *L, OTF2_LocationRef id)
{
    gpointer v = g_hash_table_lookup(L->loc_index, &(gint64){(gint64)id});
    if (!v) {
        otf2trace_fail(L, "event on undefined location %" G_GUINT64_FORMAT, (guint64)id);
        return NULL;
    }
    return g_ptr_array_index(L->locs, GPOINTER_TO_UINT(v) - 1);
}

gint otf2trace_row_key_cmp(gconstpointer a, gconstpointer b, gpointer unused)
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
        otf2trace_fail(L, "location %" G_GUINT64_FORMAT ": MpiCollectiveBegin inside another collective",
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
        otf2trace_fail(L, "location %" G_GUINT64_FORMAT ": MpiCollectiveEnd without MpiCollectiveBegin",
                  (guint64)loc);
        return OTF2_CALLBACK_INTERRUPT;
    }
    l->in_coll = false;
    if (time < l->coll_begin) {
        otf2trace_fail(L, "location %" G_GUINT64_FORMAT ": collective ends before it begins",
                  (guint64)loc);
        return OTF2_CALLBACK_INTERRUPT;
    }
    L->n_coll_events++;
    gpointer sz = g_hash_table_lookup(L->comm_size, GUINT_TO_POINTER(comm));
    if (!sz) {
        otf2trace_fail(L, "location %" G_GUINT64_FORMAT ": collective on undefined communicator %u",
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
        g_hash_table_insert(L->insts, otf2trace_key64((uint64_t)key), in);
    } else if (in->op != op) {
        otf2trace_fail(L, "collective #%u on communicator %u is %s on one rank and %s on location %"
                  G_GUINT64_FORMAT, seq + 1, (unsigned)comm, otf2trace_collective_name(in->op),
                  otf2trace_collective_name(op), (guint64)loc);
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
        g_hash_table_insert(L->region_insts, otf2trace_key64((uint64_t)key), in);
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

bool otf2trace_read_events(Load *L, OTF2_Reader *reader)
{
    for (guint i = 0; i < L->locs->len; i++)
        OTF2_Reader_SelectLocation(reader, ((Loc *)g_ptr_array_index(L->locs, i))->id);
    /* local definitions carry the mapping tables of tracers that write local
     * ids (Score-P); an archive without them is fine */
    bool defs_open = OTF2_Reader_OpenDefFiles(reader) == OTF2_SUCCESS;
    OTF2_ErrorCode rc = OTF2_Reader_OpenEvtFiles(reader);
    if (rc != OTF2_SUCCESS) {
        if (defs_open)
            OTF2_Reader_CloseDefFiles(reader);
        otf2trace_fail(L, "cannot open the event files: %s", otf2trace_why(L, rc));
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
        /* registers the location with the global event reader; without it its events
         * would be missing, not read (review 9: out of memory read as no collective) */
        if (!OTF2_Reader_GetEvtReader(reader, id)) {
            if (defs_open)
                OTF2_Reader_CloseDefFiles(reader);
            OTF2_Reader_CloseEvtFiles(reader);
            otf2trace_fail(L, "cannot read the events of location %" PRIu64 ": %s", (uint64_t)id,
                           otf2trace_why(L, OTF2_ERROR_MEM_ALLOC_FAILED));
            return false;
        }
    }
    if (defs_open)
        OTF2_Reader_CloseDefFiles(reader);
    g_free(L->otf2_error); /* a location without local definitions is no error */
    L->otf2_error = NULL;

    OTF2_GlobalEvtReader *ger = OTF2_Reader_GetGlobalEvtReader(reader);
    if (!ger) {
        OTF2_Reader_CloseEvtFiles(reader);
        otf2trace_fail(L, "cannot read the events: %s", otf2trace_why(L, OTF2_ERROR_FILE_CAN_NOT_OPEN));
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
        otf2trace_fail(L, "cannot read the events: %s", otf2trace_why(L, rc));
        return false;
    }
    return true;
}


#endif
