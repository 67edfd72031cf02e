/* Private to the nccl-tests reader: what one run holds, and the calls between
 * the line reader (nccltests.c) and the runs (nccltests_runs.c). */
#ifndef NCCLTESTS_RUNS_H
#define NCCLTESTS_RUNS_H

#include "nccltests.h"

struct NcclTrace { /* one run */
    char *name;
    GArray *rows;          /* NcclTestsRow */
    GStringChunk *strings; /* row type/redop strings */
    NcclTestsOp op;
    GPtrArray *hkeys, *hvals;
    GHashTable *ranks;     /* set of rank numbers */
    GHashTable *hosts;     /* host name -> ranks on it */
    GHashTable *procs;     /* "host pid" -> ranks of that process */
    bool rank_groups;      /* Rank lines carry "Group" (nccl-tests 2.11 and later) */
    GPtrArray *devices;
    char *nccl_version;
    int nthread, ngpus;
    int sep_nodes;  /* "N-node" on a "=== ... ===" separator line; 0 if none */
    int zero_rows;      /* rows of zero bytes, not kept */
    char **types_before; /* -d all: the datatypes of the runs this one continues (NULL-terminated) */
    /* NCCL's "Launch mode" INFO line (NCCL before 2.12): 0 not printed, 1
     * Parallel or Group without CGMD, 2 Group/CGMD (one multi-device launch) */
    int launch_mode;
    /* NCCL_ALGO and NCCL_PROTO as the run's environment set them, raw (NCCL's
     * "set by environment" log line, a JSON report's env); NULL: not said */
    char *env_algo, *env_proto;
    int first_line; /* where the run starts */
    /* what the run itself says about the collective */
    NcclTestsOp op_stated, op_seen; /* "Collective test starting:"; another line naming a binary */
    int op_stated_line, op_seen_line, op_line;
};

/* A log line's "NCCL_ALGO set by environment to Ring" (or NCCL_PROTO), or a
 * JSON report's env entry "NCCL_ALGO=Ring": the run's value, the first said
 * (nccltests_ran.c). */
void nccltests_env_note(NcclTrace *tr, const char *line);

/* NCCL's tuning lines as the file goes (nccltests_ran.c): each row is given
 * the choice for its size in the last one before it (NcclTestsRow.ran_algo),
 * whatever run the line fell in (-d all's next table, a new cycle). */
typedef struct NcclRanLog NcclRanLog;
NcclRanLog *nccltests_ranlog_new(void);
void nccltests_ranlog_free(NcclRanLog *l);
/* Notes a log line's choice, if it is a tuning line. */
void nccltests_ranlog_note(NcclRanLog *l, const char *log);
/* The row's choice, its collective `op` as far as it is known yet
 * (NCCLTESTS_UNKNOWN: not), over `nranks` ranks (0: not known yet). */
void nccltests_ranlog_apply(const NcclRanLog *l, NcclTestsRow *row, NcclTestsOp op, int nranks);

struct NcclRuns {
    GPtrArray *runs; /* NcclTrace */
};

/* What the file's provenance headers say about the collective (every run). */
typedef struct {
    NcclTestsOp named, command, prov;
    int named_line, command_line, prov_line;
    unsigned prov_mask; /* every binary named in the other headers */
} FileOps;

/* The collective the headers and the run's own lines say, the strongest
 * first ('# op:', "Collective test starting:", '# command:', a binary named
 * on another line, the one binary the other headers name), UNKNOWN if none;
 * *line the run's line that says it, 0 for a header. */
NcclTestsOp nccltests_op_said(const FileOps *F, const NcclTrace *r, int *line);

/* Notes a device line ("Rank 3 Group 0 Pid 123 on host device 3 [0x5d]
 * NVIDIA H100 80GB HBM3", the '#' left off): the rank, its host, process
 * and device (nccltests.c). */
void nccltests_note_rank(NcclTrace *tr, const char *line);
/* "2.18.3" from NCCL_VERSION_CODE (21803; 2708 before 2.9). */
char *nccltests_version_from_code(long code);
/* nccl-tests' JSON report's runs (-J, nccltests_json.c), as
 * nccltests_parse_runs reads the text. */
NcclRuns *nccltests_json_parse_runs(const char *name, const char *text, GError **err);

/* An empty run named `name` whose lines start at `first_line`. */
NcclTrace *nccltests_run_new(const char *name, int first_line);
/* An empty run from `first_line` of the job `t` ran (its Rank lines,
 * processes, devices, version, parameters, what it said of the collective):
 * the next datatype's table of a -d all run, after t's. */
NcclTrace *nccltests_run_fork(const NcclTrace *t, int first_line);

/* The benchmark binaries named as words in `s` ("./build/all_reduce_perf",
 * "all_reduce_perf_mpi"; "reduce_perf" must not match inside
 * "all_reduce_perf"): a mask of 1 << op, and the first one in *first. */
unsigned nccltests_ops_mentioned(const char *s, NcclTestsOp *first);
/* The first binary named in `s`, NCCLTESTS_UNKNOWN when none. */
NcclTestsOp nccltests_op_mentioned(const char *s);

/* Once the whole file is read: each run's collective from the strongest
 * evidence (`F` and what the run said), the file's headers (`hkeys`/`hvals`)
 * copied into it, its name "FILE#runK" when there are several; every run one
 * collective, and its rank lines, busbw/algbw and nThread x nGpus one story.
 * False with `err` set at the first contradiction. */
bool nccltests_finish_runs(GPtrArray *runs, const char *name, const FileOps *F, const GPtrArray *hkeys,
                           const GPtrArray *hvals, GError **err);

#endif
