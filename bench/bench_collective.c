/* Flow-model speed: a ring all-reduce on a rail-optimised fat tree of DGX A100
 * nodes, at 1024 GPUs by default, and a tree all-reduce of 1 MiB on a TPU v3
 * pod (2D torus, 1024 chips by default): the tree's long routes couple most
 * of its flows, so every rate recomputation covers hundreds of them.  Prints
 * wall time, simulated time, flows, rate recomputations and their work.
 * Usage: bench_collective [DGX_NODES [BYTES [TPU_HOSTS]]] */
#include "bench_flows.h"

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int nodes = argc > 1 ? atoi(argv[1]) : 128;
    double bytes = argc > 2 ? atof(argv[2]) : 1073741824.0;
    int hosts = argc > 3 ? atoi(argv[3]) : 256;
    int rc = bench_flows("bench_collective", "dgx-a100-cluster", nodes, COLL_ALLREDUCE, COLL_RING, COLL_SIMPLE, bytes,
                         "dgx-a100-cluster");
    if (hosts > 0)
        rc |= bench_flows("bench_collective", "tpu-v3-pod", hosts, COLL_ALLREDUCE, COLL_TREE, COLL_LL, 1048576.0, "tpu-v3-pod");
    return rc;
}
