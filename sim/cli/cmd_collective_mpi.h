/* collective --library mpi (cmd_collective_mpi.c). */
#ifndef CMD_COLLECTIVE_MPI_H
#define CMD_COLLECTIVE_MPI_H

#include "collective.h"

/* The table or JSON of the MPI model for `n` ranks on `nodes_used` nodes of
 * `topo` (`lib` "openmpi" | "mpich" | "cray-mpich", NULL for openmpi; `params` --params,
 * whose "mpi." keys apply when it is an overlay); the exit status. */
int cli_collective_mpi(const Topo *topo, int n, int nodes_used, CollOp op, const char *lib, const char *params,
                       const GArray *sizes, bool json);

#endif
