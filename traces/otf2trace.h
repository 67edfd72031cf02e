/* Reader for OTF2 traces of MPI programs (Score-P, or any OTF2 writer), built on
 * libotf2.  It turns the MpiCollectiveBegin/End events of all ranks into
 * nccl-tests-like rows: one per (collective, message size), with the mean time
 * of that collective, so that `shardsim validate` can hold a prediction against
 * a real MPI run.
 *
 * Collective instances are matched across ranks by (communicator, n-th
 * collective of this rank on that communicator).  Only communicators that hold
 * every MPI rank (MPI_COMM_WORLD and its duplicates) are kept: collectives on
 * smaller communicators are skipped and counted in otf2trace_note().  An
 * instance some rank never finished (truncated trace) is skipped and counted.
 *
 * Time of an instance: max(end) - min(begin) over its ranks (time_s), i.e. from
 * the first rank entering to the last rank leaving, which includes the arrival
 * skew of the ranks.  nccl-tests and OSU report each rank's own duration
 * averaged over the ranks; that is rank_time_s (<= time_s).  Seconds are ticks
 * divided by the trace's ClockProperties timerResolution.
 *
 * Sizes: OTF2's sizeSent/sizeReceived are what the tracer recorded.  Score-P
 * (scorep_mpi_coll.inc.c) models every collective as point-to-point messages:
 * MPI_Allreduce of `count` elements records N*count*typesize sent (N ranks),
 * (N-1)*count*typesize with MPI_IN_PLACE; alltoall, allgather and
 * reduce_scatter likewise.  size_bytes is converted to nccl-tests' "size":
 *   allreduce       sizeSent / N           (the per-rank buffer)
 *   reduce_scatter  sizeSent               (total input; also _block)
 *   allgather       sizeReceived           (total gathered)
 *   alltoall        sizeSent               (per-rank send buffer)
 *   bcast           sizeReceived           (the message)
 *   reduce          max sizeSent over ranks (the message; root in-place sends 0)
 * taking the largest value over the ranks of an instance.  The records of an
 * in-place call are (N-1)/N of an out-of-place one: a value that is not a
 * multiple of N but is of N-1 is read as in-place and scaled by N/(N-1) (noted);
 * an in-place call whose bytes are still a multiple of N cannot be told apart and
 * reads as an out-of-place call of (N-1)/N the size.
 *
 * Without any MpiCollective events (a tracer that writes only regions), the
 * Enter/Leave of regions named MPI_Allreduce, MPI_Reduce_scatter(_block),
 * MPI_Allgather, MPI_Bcast, MPI_Reduce, MPI_Alltoall are matched per rank by
 * (region, n-th call), assumed to be on all ranks; size_bytes is NaN then.
 *
 * Ignored: other collectives (barrier, gather, scatter, v-variants of
 * allgather/alltoall, scan), non-blocking collectives (their events differ),
 * point-to-point.  Counts are in otf2trace_note().
 *
 * Bad input (missing file, not an OTF2 anchor, unreadable or inconsistent
 * events) is SIM_ERROR_INPUT "PATH: what is wrong".  libotf2's error handler is
 * replaced during a load (its messages go into the GError instead of stderr), so
 * loads must not run concurrently in several threads. */
#ifndef OTF2TRACE_H
#define OTF2TRACE_H

#include "nccltests.h" /* for NcclTestsOp */

#include <stdbool.h>
#include <stddef.h>

typedef struct {
    NcclTestsOp op;
    double size_bytes; /* nccl-tests convention, see above; NaN when unknown */
    double time_s;     /* mean over instances of max(end) - min(begin) */
    int count;         /* instances */
    double rank_time_s; /* mean over instances of the ranks' mean own duration */
} Otf2Row;

typedef struct Otf2Trace Otf2Trace;

/* false when shardsim was built without libotf2: otf2trace_load then fails
 * with "built without OTF2 support". */
bool otf2trace_available(void);
/* `anchor_path`: the .otf2 anchor file of an archive (traces.otf2). */
Otf2Trace *otf2trace_load(const char *anchor_path, GError **err);
void otf2trace_free(Otf2Trace *t);

size_t otf2trace_n_rows(const Otf2Trace *t);
/* Sorted by op, then size; NULL past the end.  Pointers live as long as `t`. */
const Otf2Row *otf2trace_row(const Otf2Trace *t, size_t i);
/* MPI locations (ranks). */
int otf2trace_n_ranks(const Otf2Trace *t);
/* Distinct system-tree nodes ("node" class, else the location group's parent)
 * holding the ranks; 1 when unknown. */
int otf2trace_n_hosts(const Otf2Trace *t);
/* What was skipped or assumed, one sentence ("" when nothing). */
const char *otf2trace_note(const Otf2Trace *t);

#endif
