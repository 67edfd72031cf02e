/* Reader for nccl-tests (and rccl-tests) text output: all_reduce_perf,
 * reduce_scatter_perf, all_gather_perf, broadcast_perf, reduce_perf,
 * alltoall_perf, sendrecv_perf.
 *
 * The table layout is taken from the column-header line ("# size count type
 * [redop] [root] time algbw busbw error|#wrong time ...") so that every
 * nccl-tests version reads the same: old ones lack redop (all_gather) or root,
 * new ones add root, "#wrong", per-iteration and timestamp columns.  Without a
 * header the layout is guessed from the number of fields (11, 12 or 13).
 *
 * A file may hold several runs, each with its own banner, parameter, device or
 * column-header lines, "# Testing N cycle." lines or "=== ... ===" separators
 * ("====== 2-node ======" also gives the run's node count): a line of that kind
 * after result rows starts the next run.  Every run must measure the same
 * collective; inside a run sizes must grow (a table pasted twice is bad input).
 *
 * Lines that are not results are skipped: '#' comments, NCCL INFO/WARN log
 * lines, "--(snip)--", blank lines.  mpirun "[1,0]<stdout>:" and srun "0: "
 * prefixes are removed first.  '# key: value' lines at the very top of a file
 * (before anything else) are provenance headers (source, hardware, nccl,
 * command, notes, op, ...); a following line "#  text" (two or more spaces)
 * continues the previous value.  A row whose size has a sign ("-8") is a bad
 * row, never skipped.
 *
 * Units are those nccl-tests prints: time in microseconds, algbw/busbw in
 * GB/s = 1e9 bytes/s.  Bad input is SIM_ERROR_INPUT "FILE:LINE: what". */
#ifndef NCCLTESTS_H
#define NCCLTESTS_H

#include "sim_error.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum {
    NCCLTESTS_UNKNOWN = 0,
    NCCLTESTS_ALLREDUCE,
    NCCLTESTS_REDUCESCATTER,
    NCCLTESTS_ALLGATHER,
    NCCLTESTS_BROADCAST,
    NCCLTESTS_REDUCE,
    NCCLTESTS_ALLTOALL,
    NCCLTESTS_SENDRECV,
} NcclTestsOp;

typedef struct {
    uint64_t size_bytes; /* "size (B)" column */
    uint64_t count;      /* "count (elements)" */
    const char *type;    /* "float", "half", ... */
    const char *redop;   /* "sum", "none", ...; NULL when the column is absent */
    int root;            /* -1 when absent or printed -1 */
    double time_us;      /* out-of-place */
    double algbw_gbs;
    double busbw_gbs;
    double ip_time_us; /* in-place; NaN when not printed */
    double ip_algbw_gbs;
    double ip_busbw_gbs;
    bool wrong; /* its "#wrong" column (out-of-place or in-place) counts wrong results */
    int line;   /* line of the row in the file */
    /* what NCCL said it ran for this size, in the last of its tuning lines
     * before the row was read (NCCL_DEBUG_SUBSYS=TUNING: "AllReduce: 1024
     * Bytes -> Algo RING proto SIMPLE", per rank for AllGather and
     * ReduceScatter; before 2.23 "1024 Bytes -> Algo 1 proto 2 time 25.2",
     * the whole size, no collective named), as the model names them ("ring",
     * "tree", "collnet", "nvls", "nvlstree", "pat"; "ll", "ll128",
     * "simple"); NULL where no line said */
    const char *ran_algo, *ran_proto;
} NcclTestsRow;

typedef struct NcclTrace NcclTrace;

/* The file's runs, in order, each an NcclTrace named "FILE#runK" (just
 * "FILE" when there is one). */
typedef struct NcclRuns NcclRuns;
NcclRuns *nccltests_load_runs(const char *path, GError **err);
/* Whether `text` is nccl-tests' JSON report (-J, 2.17 and later: a JSON
 * object), which nccltests_parse_runs reads as the same runs. */
bool nccltests_is_report(const char *text);
NcclRuns *nccltests_parse_runs(const char *name, const char *text, GError **err);
size_t nccltests_runs_n(const NcclRuns *r);
/* Owned by `r`; NULL past the end. */
NcclTrace *nccltests_runs_get(const NcclRuns *r, size_t i);
void nccltests_runs_free(NcclRuns *r);

/* A file of one run; one holding several is bad input (at the second run). */
NcclTrace *nccltests_load(const char *path, GError **err);
/* `name` stands for the file name in messages. */
NcclTrace *nccltests_parse(const char *name, const char *text, GError **err);
void nccltests_free(NcclTrace *t);

const char *nccltests_name(const NcclTrace *t);
size_t nccltests_n_rows(const NcclTrace *t);
/* Rows in file order; NULL past the end.  Pointers live as long as `t`. */
const NcclTestsRow *nccltests_row(const NcclTrace *t, size_t i);
/* Rows of zero bytes read and not kept. */
int nccltests_zero_rows(const NcclTrace *t);

/* The collective: from a '# op:' header, else the run's "Collective test
 * starting:/concluded:" lines, else the '# command:' header, else the first
 * benchmark binary named on another line of the run (a command line, a
 * comment), else the one binary named in the other headers ('# notes:'; none
 * when they name several), else the redop/root columns where they decide it
 * (root >= 0: broadcast or reduce).  '# op:', '# command:' and the output
 * contradicting each other is bad input.
 * NCCLTESTS_UNKNOWN when nothing tells; a caller who knows sets it. */
NcclTestsOp nccltests_op(const NcclTrace *t);
void nccltests_set_op(NcclTrace *t, NcclTestsOp op);

/* Ranks: distinct "Rank N" device lines; without them, the n that the printed
 * busbw/algbw = factor(n) of every row allows (allreduce, reducescatter,
 * allgather, alltoall; rows of 1 GB/s and up), when exactly one does; else 0
 * (nThread x nGpus counts one process only, so it is never taken for all).
 * Rank lines, busbw/algbw and nThread x nGpus that disagree are bad input. */
int nccltests_n_ranks(const NcclTrace *t);
/* True when nccltests_n_ranks came from busbw/algbw. */
bool nccltests_ranks_from_bw(const NcclTrace *t);
/* Distinct host names on the Rank lines; without them the "N-node" of a
 * separator line; else 0. */
int nccltests_n_hosts(const NcclTrace *t);
/* Devices driven by one thread ("nGpus N" of the parameter line; 1 if absent):
 * nccl-tests -g N launches on N devices one after another. */
int nccltests_gpus_per_thread(const NcclTrace *t);
/* GPUs one process drives: the most Rank lines sharing a host and Pid, else
 * nThread x nGpus; 1 if neither is printed. */
int nccltests_gpus_per_process(const NcclTrace *t);
/* Whether the run's NCCL made a launch wait for the GPUs' previous work
 * (single-process multi-GPU launches before NCCL 2.12), so that host and GPU
 * time add up instead of overlapping. */
bool nccltests_launch_waits(const NcclTrace *t);
/* The largest number of ranks on one host (0 without Rank lines). */
int nccltests_max_ranks_per_host(const NcclTrace *t);
/* The fewest and most ranks the Rank lines put on one host (0, 0 without them). */
void nccltests_ranks_per_host(const NcclTrace *t, int *least, int *most);
/* Distinct device names in rank order ("NVIDIA A100-SXM4-40GB"). */
size_t nccltests_n_devices(const NcclTrace *t);
const char *nccltests_device(const NcclTrace *t, size_t i);

/* NCCL version as printed ("2.18.3" from "nccl-library=21803" or a
 * "NCCL version 2.18.3+cuda12.2" log line), or NULL. */
const char *nccltests_nccl_version(const NcclTrace *t);

/* NCCL_ALGO and NCCL_PROTO as the run's environment set them (NCCL's
 * "NCCL_ALGO set by environment to Ring" log line; a JSON report's env), as
 * written, or NULL. */
const char *nccltests_env_algo(const NcclTrace *t);
const char *nccltests_env_proto(const NcclTrace *t);
/* The algorithms ("tree", "ring", "collnet", "nvls", "nvlstree", "pat", as
 * the model names them; proto false) or protocols ("ll", "ll128",
 * "simple") that an NCCL_ALGO / NCCL_PROTO `value` leaves collective `op`
 * under NCCL `version` (a version code; 0 the newest), as NCCL parses it
 * (tuning.cc parseList).  From 2.24: ';'-separated lists, all but the
 * opening one prefixed by a collective ("ring,tree;allreduce:^tree"), each
 * replacing what the earlier left that collective, '^' excluding its names;
 * names case aside; empty pieces skipped.  Before: one list, names NCCL
 * does not know skipped.  Fills `names` (room for 8) and returns how many
 * (0: none left); -1 for a value NCCL refuses (from 2.24: a name or
 * collective it does not know, a second list without its collective). */
int nccltests_env_allowed(const char *value, bool proto, NcclTestsOp op, int version, const char **names);

/* Provenance headers, in file order; lookup returns NULL when absent. */
const char *nccltests_header(const NcclTrace *t, const char *key);
size_t nccltests_n_headers(const NcclTrace *t);
const char *nccltests_header_key(const NcclTrace *t, size_t i);
const char *nccltests_header_value(const NcclTrace *t, size_t i);

/* "allreduce", "reducescatter", ... ("unknown"). */
const char *nccltests_op_name(NcclTestsOp op);
/* Accepts "allreduce", "all_reduce", "all_reduce_perf", "AllReduce", ...;
 * NCCLTESTS_UNKNOWN for anything else. */
NcclTestsOp nccltests_op_from_name(const char *name);

/* busbw = algbw * factor, as nccl-tests computes it (src/<op>.cu GetBw):
 * allreduce 2(n-1)/n; reducescatter, allgather, alltoall (n-1)/n;
 * broadcast, reduce, sendrecv 1.  NaN for an unknown op or n < 1. */
double nccltests_busbw_factor(NcclTestsOp op, int nranks);

#endif
