/* Private to validation: one run of measured rows and what its prediction
 * gave, shared by the trace loading (validate_load.c), the prediction
 * (validate.c) and the results (validate_out.c). */
#ifndef VALIDATE_MEASURED_H
#define VALIDATE_MEASURED_H

#include "validate.h"
#include "nccltests.h"
#include "osu.h"
#include "collective.h"

/* One measured point, in nccl-tests' conventions for the size. */
typedef struct {
    NcclTestsOp op;
    double size, time_s;
    const char *ran_algo, *ran_proto; /* what NCCL's log says it ran (nccltests_nccl_ran); NULL: not said */
} MRow;

/* osu_bw and osu_bibw send windows of this many messages (OSU's default -W). */
#define OSU_WINDOW 64

/* What one run of a trace says, whatever its format. */
typedef struct {
    char *name;   /* FILE, or FILE#runK for run K of several */
    int run;      /* 0 for a file of one run */
    GArray *rows; /* MRow */
    int ranks, hosts, ranks_per_host, gpus_per_thread;
    bool hosts_unnamed; /* neither the trace nor --nodes said the hosts: 1 taken */
    int nccl_version; /* version code the trace printed (or its '# nccl:' header); 0: none */
    int nccl_library; /* CollLibrary the trace shows (rccl-tests, RCCL's log); -1: it does not say */
    bool launch_waits; /* host launch and GPU time add (nccltests_launch_waits) */
    OsuMetric metric;       /* what a sendrecv row measured */
    const char *ranks_from; /* "the trace", "busbw/algbw", "--ranks" */
    char *note;             /* what the reader skipped or assumed */
    bool osu;               /* an OSU trace: MPI unless told otherwise */
    int mpi_lib;            /* MpiLib the trace's headers name, -1 if none */
    char *mpi_version;      /* its version, or NULL */
    char *libfabric;        /* the libfabric version its '# libfabric:' header states, or NULL */
    char *pml;              /* Open MPI's pml its '# pml:' header states (cm, ob1, ucx), or NULL */
    const char *mpi_lib_from; /* "the trace" (a header), "the file name" */
    char *library;          /* what predicted, for the report (validate.c) */
    char *device;           /* the first device name the trace prints ("NVIDIA A100-SXM4-40GB"), or NULL */
    char *datatype;         /* the elements' type nccl-tests prints ("float", "int8"), or NULL */
    char *accelerator;      /* the topology's accelerator, once predicted (NULL: it names none) */
    bool sendrecv_pair;     /* predicted as one pair of ranks */
    int wrong_rows;         /* rows whose "#wrong" column counts wrong results */
    /* what the run's environment left the tuner (NCCL_ALGO, NCCL_PROTO): the
     * model's names joined by ',' and as masks of 1 << CollAlgo / CollProto;
     * NULL and 0 where it set none (or set what NCCL refuses) */
    char *env_algo, *env_proto;
    unsigned env_algos, env_protos;
    char *env_set[2]; /* NCCL_ALGO and NCCL_PROTO as the run set them, for messages; NULL: not set */
    /* the prediction, as far as it got */
    char *topology;
    GArray *out; /* ValidateRow */
    Topo *topo;     /* kept between predictions with parameters in hand */
    CollGroup *grp;
    ValidateRun pub;
} Measured;

void validate_measured_free(gpointer m);

struct Validation {
    ValidateOptions o;
    GPtrArray *runs; /* Measured, of every trace so far */
};

/* Predicts run M's rows with options O (validate.c); the plot's baseline
 * (validate_out.c) predicts them again with the default parameters. */
bool validate_predict_run(const ValidateOptions *o, Measured *m, GError **err);

/* Reads a trace into its runs (`out`, Measured): nccl-tests/rccl-tests output
 * (one or several runs), OSU micro-benchmarks output or an OTF2 archive.
 * `ranks`/`nodes` (> 0) say what the trace does not; `op_override` (an
 * NcclTestsOp, -1 for none) the collective where it says none.  The runs read
 * stay in `out` on failure. */
bool validate_load_measured(const char *path, int op_override, int ranks, int nodes, GPtrArray *out, GError **err);

#endif
