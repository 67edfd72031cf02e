/* A collective timed over a range of sizes, as "shardsim collective" prints
 * it: the sizes of the sweep, the topology and group of ranks it runs on, and
 * each size's time and bandwidths (nccl-tests' algbw and busbw). */
#ifndef COLL_SWEEP_H
#define COLL_SWEEP_H

#include "collective.h"

#define COLL_SWEEP_MAX_SIZES 10000
/* per rank: beyond a TiB no collective fits in any accelerator's memory */
#define COLL_SWEEP_MAX_BYTES (1024.0 * 1024 * 1024 * 1024)

/* Appends to `out` (a GArray of double) the sizes of "8B:8GiB" (factor 2),
 * "1M:64M:4" (factor 4) or a comma list "1K,1M": whole bytes between 1 B and
 * COLL_SWEEP_MAX_BYTES, at most COLL_SWEEP_MAX_SIZES; in a range, repeats
 * after rounding are dropped.  False on bad text. */
bool coll_sweep_parse_sizes(const char *spec, GArray *out);

/* Loads the topology with `nodes` nodes (0: as the file says); when `nodes`
 * is 0 and `ranks` exceeds the preset's default size, grows it to the nodes
 * that hold them, where the family scales (the caller checks the count). */
Topo *coll_sweep_topo(const char *name_or_path, int nodes, int ranks, GError **err);

/* Topology rank ids of `n` ranks spread evenly over the fewest nodes of `t`
 * that hold them, the same number on each; free with g_free.  *nodes_used is
 * that number of nodes; NULL when it does not divide `n`. */
int *coll_sweep_ranks(const Topo *t, int n, int *nodes_used);

typedef struct {
    double bytes;
    CollCost cost;       /* algo and proto as chosen */
    double algbw_Bps;    /* bytes / time */
    double busbw_Bps;    /* algbw x nccl-tests' bus factor */
    double flow_time_s;  /* on the flow-level simulator; NAN unless asked, over
                          * COLL_MAX_FLOWS flows, or past the work limit */
    int64_t flow_count;  /* the flows that run needs (0 unless asked) */
} CollSweepRow;

/* One size of the sweep; `flows` also runs it on the flow network.  False
 * (row untouched) when the algorithm cannot run at that size. */
bool coll_sweep_row(const CollGroup *g, CollOp op, CollAlgo algo, CollProto proto, double bytes, bool flows,
                    CollSweepRow *row);

#endif
