/* OTF2 global definitions: what each definition record says that the events
 * need (clock resolution, locations, MPI collective regions, communicator
 * sizes), and from the system tree the ranks and the hosts they ran on. */
#ifdef SHARDSIM_HAVE_OTF2

#include "otf2trace_load.h"

#include <string.h>

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

static OTF2_CallbackCode def_clock(void *u, uint64_t resolution, uint64_t offset, uint64_t length,
                                   uint64_t realtime)
{
    Load *L = u;
    if (resolution > 1e15) { /* finer than a femtosecond: no clock (review 9: 2^64-1 read every time as 0) */
        otf2trace_fail(L, "clock properties give a timer resolution of %" PRIu64 " ticks a second: not a clock", resolution);
        return OTF2_CALLBACK_INTERRUPT;
    }
    if (resolution == 0) {
        otf2trace_fail(L, "clock properties give a timer resolution of 0");
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
        otf2trace_fail(L, "location %" G_GUINT64_FORMAT " is defined twice", (guint64)self);
        return OTF2_CALLBACK_INTERRUPT;
    }
    Loc *l = g_new0(Loc, 1);
    l->id = self;
    l->group = group;
    l->seq = g_hash_table_new(g_direct_hash, g_direct_equal);
    g_ptr_array_add(L->locs, l);
    g_hash_table_insert(L->loc_index, otf2trace_key64(self), GUINT_TO_POINTER(L->locs->len));
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

bool otf2trace_read_defs(Load *L, OTF2_Reader *reader)
{
    OTF2_ErrorCode rc = OTF2_Reader_SetSerialCollectiveCallbacks(reader);
    uint64_t n_locations = 0;
    if (rc == OTF2_SUCCESS)
        rc = OTF2_Reader_GetNumberOfLocations(reader, &n_locations);
    if (rc != OTF2_SUCCESS) {
        otf2trace_fail(L, "cannot read the anchor file: %s", otf2trace_why(L, rc));
        return false;
    }
    /* the events of every location are merged at once, and libotf2 holds an event and a
     * definition chunk for each (about 5 MiB; selecting them is quadratic in their number):
     * bounded, said, rather than run out of memory as missing events (review 9) */
    if (n_locations > OTF2TRACE_MAX_LOCATIONS) {
        otf2trace_fail(L, "%" PRIu64 " locations: this reader merges every location's events at once, about 5 MiB "
                       "of libotf2's buffers each, so it takes at most %d", n_locations, OTF2TRACE_MAX_LOCATIONS);
        return false;
    }

    OTF2_GlobalDefReader *gdr = OTF2_Reader_GetGlobalDefReader(reader);
    if (!gdr) {
        otf2trace_fail(L, "cannot open the global definitions: %s",
                  otf2trace_why(L, OTF2_ERROR_FILE_CAN_NOT_OPEN));
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
        otf2trace_fail(L, "cannot read the global definitions: %s", otf2trace_why(L, rc));
        return false;
    }
    if (!L->have_clock) {
        otf2trace_fail(L, "no clock properties in the global definitions");
        return false;
    }
    if (L->locs->len == 0) {
        otf2trace_fail(L, "no locations defined");
        return false;
    }
    count_ranks_hosts(L);
    g_free(L->otf2_error);
    L->otf2_error = NULL;
    return true;
}

#endif
