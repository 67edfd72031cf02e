/* Placement: where a job's ranks sit on the cluster.  A scheduler hands a
 * job nodes and GPUs; which ones decides which links its collectives cross
 * (one leaf or several, one rail or across rails, one dragonfly group or
 * several).  Three policies, all deterministic:
 *  - contiguous: the first nodes, the first GPUs of each (what a job that
 *    fills consecutive nodes gets; the default everywhere);
 *  - rail_aligned: the first nodes, the GPUs of each spread evenly over the
 *    node (so over its NICs, the same local indices on every node: every
 *    rank has a rail of its own and peers on other nodes sit on it too);
 *  - scattered: nodes drawn at random among all the topology's nodes, and
 *    GPUs drawn at random on each (different rails on different nodes), from
 *    a seed, so the same seed gives the same placement. */
#ifndef TOPO_PLACE_H
#define TOPO_PLACE_H

#include "topo.h"

typedef enum { TOPO_PLACE_CONTIGUOUS, TOPO_PLACE_RAIL_ALIGNED, TOPO_PLACE_SCATTERED } TopoPlacement;

#define TOPO_PLACE_CHOICES "contiguous|rail_aligned|scattered"

/* "contiguous", "rail_aligned", "scattered". */
const char *topo_placement_name(TopoPlacement p);
/* The policy named `s` (also "rail-aligned"); false if none. */
bool topo_placement_parse(const char *s, TopoPlacement *out);

/* The topology ranks of `n` job ranks, `per_node` on each node in order (the
 * last node may hold fewer), job rank i at [i]; free with g_free.  NULL with
 * an input error when per_node exceeds the topology's ranks per node or the
 * nodes needed exceed its nodes. */
int *topo_place(const Topo *t, TopoPlacement p, uint64_t seed, int n, int per_node, GError **err);

#endif
