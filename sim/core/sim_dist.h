/* Spreading independent points (sweep points, plan candidates) over the
 * ranks of an MPI job.  Every rank reads the same input and builds the same
 * point list; each evaluates one contiguous block of it (with threads if it
 * likes), turns each point's result into a byte string, and the allgather
 * hands every rank all results in point order.  So every rank can take the
 * same next decision (a plan's top k) and rank 0 prints exactly what a single
 * process would.  Without --mpi, or in a build without MPI, there is one rank
 * and the calls are local copies. */
#ifndef SIM_DIST_H
#define SIM_DIST_H

#include <glib.h>
#include <stddef.h>

typedef struct SimDist SimDist;

/* use_mpi: initialise MPI (error when the build has none).  Call once per
 * process, before any other thread starts. */
SimDist *sim_dist_new(gboolean use_mpi, GError **err);
void sim_dist_free(SimDist *d);         /* finalises MPI when it started it */

int sim_dist_rank(const SimDist *d);
int sim_dist_size(const SimDist *d);
gboolean sim_dist_is_root(const SimDist *d);

/* This rank's block [*lo, *hi) of n points: contiguous, balanced, in rank
 * order, so the blocks of ranks 0..size-1 concatenate to 0..n-1. */
void sim_dist_block(const SimDist *d, size_t n, size_t *lo, size_t *hi);
/* The same for any rank of any size (pure). */
void sim_dist_block_of(size_t n, int rank, int size, size_t *lo, size_t *hi);

/* mine[i] (len[i] bytes) is the result of point lo + i of this rank's block
 * of n.  Returns all n results in point order on every rank (free with
 * sim_dist_results_free); lens_out gets their lengths.  NULL + err when a
 * rank failed: ok == FALSE on any rank makes every rank return NULL with
 * that rank's message (msg, may be NULL). */
char **sim_dist_allgather(SimDist *d, size_t n, char *const *mine, const size_t *len,
                          gboolean ok, const char *msg, size_t **lens_out, GError **err);
void sim_dist_results_free(char **results, size_t n, size_t *lens);

/* The one-rank gather both transports share (not for callers). */
char **sim_dist_local_gather(size_t n, char *const *mine, const size_t *len, gboolean ok, const char *msg,
                             size_t **lens_out, GError **err);

#endif
