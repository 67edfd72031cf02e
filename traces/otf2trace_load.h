/* Private to the OTF2 reader: the state of one load, shared by the steps of
 * otf2trace_load (otf2trace.c), the definitions (otf2trace_defs.c) and the
 * events (otf2trace_events.c).  Only with libotf2. */
#ifndef OTF2TRACE_LOAD_H
#define OTF2TRACE_LOAD_H

#include "otf2trace.h"

#include <inttypes.h>
#include <otf2/otf2.h>

/* The locations one load takes (otf2trace_read_defs): every location's events
 * are merged at once, each holding about 5 MiB of libotf2's chunk buffers. */
#define OTF2TRACE_MAX_LOCATIONS 1024

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

/* Sets L->error (the first one only); reading stops at it. */
void otf2trace_fail(Load *L, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
/* libotf2's own message for `code` when its error handler gave one. */
const char *otf2trace_why(Load *L, OTF2_ErrorCode code);

/* A 64-bit hash key (g_int64_hash), freed by the table. */
static inline gint64 *otf2trace_key64(uint64_t v)
{
    gint64 *k = g_new(gint64, 1);
    *k = (gint64)v;
    return k;
}

/* Global definitions: clock, strings, system tree, locations, regions,
 * groups, communicators; then the rank and host counts. */
bool otf2trace_read_defs(Load *L, OTF2_Reader *reader);
/* Local definitions and events of every location, into L->rows (and
 * L->region_rows for the region fallback). */
bool otf2trace_read_events(Load *L, OTF2_Reader *reader);

/* The order of L->rows: by op, then size (NaN last). */
gint otf2trace_row_key_cmp(gconstpointer a, gconstpointer b, gpointer unused);
/* "allreduce", "reduce_scatter_block", ... ("unknown"). */
const char *otf2trace_collective_name(OTF2_CollectiveOp op);

#endif
