/* Reader for the OSU Micro-Benchmarks' output: collective latency
 * (osu_allreduce, osu_allgather, osu_reduce_scatter, osu_bcast, osu_alltoall,
 * osu_reduce) and point-to-point latency and bandwidth (osu_latency, osu_bw,
 * osu_bibw); versions 5.x to 7.x:
 *
 *   # OSU MPI Allreduce Latency Test v7.3
 *   # Datatype: MPI_CHAR.
 *   # Size       Avg Latency(us)   Min Latency(us)   Max Latency(us)  Iterations
 *   1                       1.91              1.62              2.20        1000
 *
 * The columns come from the "# Size ..." header line: Avg Latency(us) (or the
 * point-to-point "Latency (us)", or "Bandwidth (MB/s)"), and when present (-f) Min/Max Latency(us)
 * and Iterations; P50/P90/P99 tail-latency, Validation (-c) and Transmit Size
 * columns are recognised and skipped.  A column this reader does not know is
 * an error rather than a guess.  Several "# Datatype:" blocks may follow each
 * other; every row remembers its datatype.  Inside a datatype block sizes must
 * grow (a table pasted twice is bad input), and one file holds one benchmark
 * run: a second title after rows is bad input, naming both.
 *
 * As in nccltests.h, '# key: value' lines at the very top are provenance
 * headers, mpirun "[1,0]<stdout>:" prefixes are removed, and lines that are
 * neither '#' nor start with a digit or a sign (launcher noise) are skipped.  Latencies
 * are in microseconds as printed.  Bad input is SIM_ERROR_INPUT
 * "FILE:LINE: what". */
#ifndef OSU_H
#define OSU_H

#include "nccltests.h"

/* What a row measures. */
typedef enum {
    OSU_LATENCY,     /* avg_us: collective latency, or osu_latency's one-way time (half the round trip) */
    OSU_BANDWIDTH,   /* bw_mbs: osu_bw, one direction, windows of messages back to back */
    OSU_BIBANDWIDTH, /* bw_mbs: osu_bibw, both directions together */
} OsuMetric;

typedef struct {
    uint64_t size_bytes;
    double avg_us;         /* NaN in a bandwidth table */
    double bw_mbs;         /* "Bandwidth (MB/s)", MB = 1e6 bytes; NaN in a latency table */
    double min_us, max_us; /* NaN when not printed */
    long iterations;       /* -1 when not printed */
    int validation;        /* 1 "Pass", 0 "Fail", -1 not printed */
    const char *datatype;  /* "MPI_CHAR" from "# Datatype: MPI_CHAR.", or NULL */
    int line;
} OsuRow;

typedef struct OsuTrace OsuTrace;

OsuTrace *osu_load(const char *path, GError **err);
/* `name` stands for the file name in messages. */
OsuTrace *osu_parse(const char *name, const char *text, GError **err);
void osu_free(OsuTrace *t);

const char *osu_name(const OsuTrace *t);
size_t osu_n_rows(const OsuTrace *t);
/* Rows in file order; NULL past the end.  Pointers live as long as `t`. */
const OsuRow *osu_row(const OsuTrace *t, size_t i);

/* The benchmark's title line without the version ("OSU MPI Allreduce Latency
 * Test", "OSU MPI-CUDA Reduce Latency Test"), and its version ("7.3"); NULL
 * when the output has no title line. */
const char *osu_title(const OsuTrace *t);
const char *osu_version(const OsuTrace *t);

/* The collective, as nccl-tests' enum so that both readers feed the same
 * validation (osu_latency, osu_bw, osu_bibw: NCCLTESTS_SENDRECV): from a
 * '# op:' header, else the title, else a '# command:' header naming
 * osu_allreduce etc., else the one benchmark the other headers name;
 * NCCLTESTS_UNKNOWN when nothing tells (or for benchmarks without an
 * equivalent, such as osu_gather).  '# op:', '# command:' and the title
 * contradicting each other, or the table's columns, is bad input. */
NcclTestsOp osu_op(const OsuTrace *t);
OsuMetric osu_metric(const OsuTrace *t);
void osu_set_op(OsuTrace *t, NcclTestsOp op);

/* Provenance headers, in file order; lookup returns NULL when absent. */
const char *osu_header(const OsuTrace *t, const char *key);
size_t osu_n_headers(const OsuTrace *t);
const char *osu_header_key(const OsuTrace *t, size_t i);
const char *osu_header_value(const OsuTrace *t, size_t i);
/* Launcher lines the output itself shows ("$ srun -N2 ...", "mpirun -np 2
 * ..."), in file order (at most 64). */
size_t osu_n_commands(const OsuTrace *t);
const char *osu_command(const OsuTrace *t, size_t i);

/* The job's layout as the provenance headers state it (never the file
 * name): a launcher command (mpirun/mpiexec -n N, -N/-npernode/-ppn Q,
 * --map-by ppr:Q:node; srun -n N -N NODES --ntasks-per-node Q) or phrases
 * such as "4 nodes", "36 MPI ranks per node", "= 144 ranks", "1 rank per
 * node"; what the headers leave unsaid, from the launcher lines the output
 * shows, where they agree with each other and with the headers.  Each of
 * *ranks, *nodes, *ppn is 0 where nothing says it (a missing one is
 * derived from the other two).  False with SIM_ERROR_INPUT when the
 * headers contradict each other. */
bool osu_layout(const OsuTrace *t, int *ranks, int *nodes, int *ppn, GError **err);

/* The MPI library a header names (an "mpi" or "library" header first, then
 * any): MpiLib as models/mpi_model.h numbers it (0 Open MPI, 1 MPICH and its
 * derivatives, 2 HPE Cray MPICH), -1 when none does; *version (may be NULL) its version or
 * NULL, for a derivative its name and version ("Intel MPI 2021.9"). */
int osu_mpi_library(const OsuTrace *t, char **version);
/* The library a file name names as a word ("..._openmpi_...", "ompi",
 * "mpich", "cray-mpich", "intelmpi"/"impi", "mvapich"), -1 if none: a name may say which
 * library ran, never how many ranks. */
int osu_mpi_library_in_name(const char *path);

#endif
