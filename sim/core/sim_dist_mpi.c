/* sim_dist over MPI: MPI_Init_thread (funneled: only the main thread talks
 * to MPI; worker threads only compute), blocks by rank, and the allgather of
 * every point's result bytes as three collectives (lengths, then bytes).
 * Compiled only where CMake found MPI for C. */
#ifdef SHARDSIM_HAVE_MPI
#include "sim_dist.h"
#include "sim_error.h"

#include <limits.h>
#include <mpi.h>
#include <stdint.h>
#include <string.h>

struct SimDist {
    int rank, size;
    gboolean mpi;     /* --mpi: the ranks of MPI_COMM_WORLD */
    gboolean started; /* we called MPI_Init, so we finalise */
};

SimDist *sim_dist_new(gboolean use_mpi, GError **err)
{
    SimDist *d = g_new0(SimDist, 1);
    d->size = 1;
    if (!use_mpi)
        return d;
    int inited = 0, provided = 0;
    MPI_Initialized(&inited);
    if (!inited) {
        if (MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
            g_set_error(err, SIM_ERROR, SIM_ERROR_INTERNAL, "--mpi: MPI_Init_thread failed");
            g_free(d);
            return NULL;
        }
        d->started = TRUE;
    }
    d->mpi = TRUE;
    MPI_Comm_rank(MPI_COMM_WORLD, &d->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &d->size);
    return d;
}

void sim_dist_free(SimDist *d)
{
    if (d && d->started)
        MPI_Finalize();
    g_free(d);
}

int sim_dist_rank(const SimDist *d) { return d->rank; }
int sim_dist_size(const SimDist *d) { return d->size; }

/* The lowest failing rank's message, on every rank. */
static void fail_message(SimDist *d, gboolean ok, const char *msg, GError **err)
{
    int me = ok ? d->size : d->rank, first = 0;
    MPI_Allreduce(&me, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    int len = (d->rank == first && msg) ? (int)strnlen(msg, 4096) : 0;
    MPI_Bcast(&len, 1, MPI_INT, first, MPI_COMM_WORLD);
    char *buf = g_malloc0((size_t)len + 1);
    if (d->rank == first && len)
        memcpy(buf, msg, (size_t)len);
    MPI_Bcast(buf, len, MPI_CHAR, first, MPI_COMM_WORLD);
    g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "%s", len ? buf : "a point failed");
    g_free(buf);
}

char **sim_dist_allgather(SimDist *d, size_t n, char *const *mine, const size_t *len,
                          gboolean ok, const char *msg, size_t **lens_out, GError **err)
{
    if (!d->mpi)
        return sim_dist_local_gather(n, mine, len, ok, msg, lens_out, err);
    int all_ok = ok ? 1 : 0, every = 0;
    MPI_Allreduce(&all_ok, &every, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!every) {
        fail_message(d, ok, msg, err);
        return NULL;
    }
    int size = d->size;
    int *cnt = g_new(int, size), *disp = g_new(int, size);
    int *bcnt = g_new(int, size), *bdisp = g_new(int, size);
    /* point counts per rank follow from the block rule; bytes are exchanged */
    size_t lo, hi, total = 0;
    for (int r = 0; r < size; r++) {
        sim_dist_block_of(n, r, size, &lo, &hi);
        cnt[r] = (int)(hi - lo);
        disp[r] = (int)lo;
    }
    sim_dist_block(d, n, &lo, &hi);
    uint64_t *mylen = g_new0(uint64_t, hi - lo + 1), *lens64 = g_new0(uint64_t, n + 1);
    uint64_t mybytes = 0;
    for (size_t i = 0; i < hi - lo; i++)
        mybytes += (mylen[i] = len[i]);
    MPI_Allgatherv(mylen, cnt[d->rank], MPI_UINT64_T, lens64, cnt, disp, MPI_UINT64_T, MPI_COMM_WORLD);
    for (int r = 0; r < size; r++) {
        uint64_t b = 0;
        for (int i = 0; i < cnt[r]; i++)
            b += lens64[disp[r] + i];
        bcnt[r] = b > INT_MAX ? INT_MAX : (int)b;
        bdisp[r] = total > INT_MAX ? INT_MAX : (int)total;
        total += b;
    }
    char **all = NULL;
    if (total > INT_MAX) {
        g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "--mpi: the results of %zu points exceed 2 GiB", n);
    } else {
        char *pack = g_malloc(mybytes + 1), *bytes = g_malloc(total + 1);
        for (size_t i = 0, off = 0; i < hi - lo; off += len[i], i++)
            memcpy(pack + off, mine[i], len[i]);
        MPI_Allgatherv(pack, (int)mybytes, MPI_CHAR, bytes, bcnt, bdisp, MPI_CHAR, MPI_COMM_WORLD);
        all = g_new0(char *, n ? n : 1);
        size_t *lens = g_new0(size_t, n ? n : 1);
        for (size_t i = 0, off = 0; i < n; off += lens64[i], i++) {
            all[i] = g_malloc(lens64[i] + 1);
            memcpy(all[i], bytes + off, lens64[i]);
            all[i][lens64[i]] = '\0';
            lens[i] = lens64[i];
        }
        *lens_out = lens;
        g_free(pack);
        g_free(bytes);
    }
    g_free(mylen);
    g_free(lens64);
    g_free(cnt);
    g_free(disp);
    g_free(bcnt);
    g_free(bdisp);
    return all;
}
#endif
