/* The SimGrid half of bench_simgrid: runs one traffic pattern on a SimGrid
 * platform file with CM02 and every correction factor off, in a child process
 * (SimGrid's engine can be created only once per process). */
#ifndef SG_SIDE_H
#define SG_SIDE_H

#include <stdbool.h>
#include <stddef.h>

typedef enum { SG_RING, SG_ALLTOALL } SgPattern;

/* Ranks are the platform's hosts "h0" ... "h<n-1>".
 *  - SG_RING: 2(n-1) steps; in step k rank i sends `chunk` bytes to i+1 and
 *    receives from i-1; step k+1 starts when both are done.
 *  - SG_ALLTOALL: at time 0 every rank sends `chunk` bytes to every other. */
typedef struct {
    SgPattern pat;
    int n;
    long chunk;
    bool full_update; /* network/optim:Full instead of SimGrid's default Lazy */
} SgTraffic;

typedef struct {
    double sim_s;  /* simulated (predicted) time of the pattern */
    double load_s; /* wall time to load the platform file */
    double run_s;  /* wall time of the simulation itself */
} SgResult;

/* "SimGrid version 3.32" */
const char *sg_side_version(void);

/* False with a reason in `why` if the child failed. */
bool sg_side_run(const char *platform_xml, const SgTraffic *tr, SgResult *out, char *why, size_t whylen);

#endif
