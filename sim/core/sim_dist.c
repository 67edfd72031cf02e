/* sim_dist without MPI (and the block arithmetic every build shares): one
 * rank, whose block is everything.  sim_dist_mpi.c replaces the transport
 * when the build has MPI. */
#include "sim_dist.h"
#include "sim_error.h"

#include <string.h>

#ifndef SHARDSIM_HAVE_MPI
struct SimDist {
    int unused;
};

SimDist *sim_dist_new(gboolean use_mpi, GError **err)
{
    if (use_mpi) {
        g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "--mpi: this shardsim was built without MPI");
        return NULL;
    }
    return g_new0(SimDist, 1);
}

void sim_dist_free(SimDist *d) { g_free(d); }
int sim_dist_rank(const SimDist *d) { return 0; }
int sim_dist_size(const SimDist *d) { return 1; }
#endif

gboolean sim_dist_is_root(const SimDist *d) { return sim_dist_rank(d) == 0; }

void sim_dist_block(const SimDist *d, size_t n, size_t *lo, size_t *hi)
{
    sim_dist_block_of(n, sim_dist_rank(d), sim_dist_size(d), lo, hi);
}

void sim_dist_block_of(size_t n, int rank, int nranks, size_t *lo, size_t *hi)
{
    size_t size = (size_t)nranks, r = (size_t)rank;
    size_t base = n / size, extra = n % size;
    *lo = r * base + (r < extra ? r : extra);
    *hi = *lo + base + (r < extra ? 1 : 0);
}

void sim_dist_results_free(char **results, size_t n, size_t *lens)
{
    if (results)
        for (size_t i = 0; i < n; i++)
            g_free(results[i]);
    g_free(results);
    g_free(lens);
}

/* One rank: copies of this rank's results are all the results. */
char **sim_dist_local_gather(size_t n, char *const *mine, const size_t *len, gboolean ok, const char *msg,
                             size_t **lens_out, GError **err)
{
    if (!ok) {
        g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "%s", msg ? msg : "a point failed");
        return NULL;
    }
    char **all = g_new0(char *, n ? n : 1);
    size_t *lens = g_new0(size_t, n ? n : 1);
    for (size_t i = 0; i < n; i++) {
        all[i] = g_malloc(len[i] + 1);
        memcpy(all[i], mine[i], len[i]);
        all[i][len[i]] = '\0';
        lens[i] = len[i];
    }
    *lens_out = lens;
    return all;
}

#ifndef SHARDSIM_HAVE_MPI
char **sim_dist_allgather(SimDist *d, size_t n, char *const *mine, const size_t *len,
                          gboolean ok, const char *msg, size_t **lens_out, GError **err)
{
    return sim_dist_local_gather(n, mine, len, ok, msg, lens_out, err);
}
#endif
