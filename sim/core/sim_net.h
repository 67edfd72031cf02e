/* The flow-level network.
 *
 * A link has a bandwidth (bytes/s, one direction) and a latency.  A flow moves
 * a number of bytes along a path of links.  Flows that are active at the same
 * time share every link by max-min fairness (progressive filling).  Rates are
 * recomputed once per timestamp, and only for the flows a start or finish can
 * move: those at or above the lowest level whose filling the change alters,
 * reached from the changed links through such flows; flows held lower
 * elsewhere keep their rates (the max-min solution of a full recomputation).
 *
 * A flow's bytes drain at its current rate; when the last byte has left, the
 * flow frees its links and its `done` callback runs one path latency later
 * (the sum of its links' latencies), so an uncontended flow takes
 * latency + bytes / bottleneck bandwidth. */
#ifndef SIM_NET_H
#define SIM_NET_H

#include "sim_engine.h"

typedef struct SimNet SimNet;
typedef void (*SimFlowDone)(SimEngine *e, void *user);

SimNet *sim_net_new(SimEngine *e);
void sim_net_free(SimNet *n);
/* Returns the link id: 0, 1, 2, ... in order of addition. */
int sim_net_add_link(SimNet *n, double bandwidth_Bps, sim_time_t latency);
int sim_net_num_links(const SimNet *n);
/* Starts a flow now.  `links` is copied.  A flow of no links takes no time. */
void sim_net_flow(SimNet *n, double bytes, const int *links, int nlinks, SimFlowDone done, void *user);
/* The same with `done` run `delay` after the last byte arrives (a fixed
 * overhead of the receiver), without an event of its own. */
void sim_net_flow_delayed(SimNet *n, double bytes, const int *links, int nlinks, sim_time_t delay, SimFlowDone done,
                          void *user);
/* Flows started and not yet drained. */
size_t sim_net_active_flows(const SimNet *n);
/* Bytes that have crossed link `l` so far (for utilisation reports and tests). */
double sim_net_link_bytes(const SimNet *n, int l);
/* Number of rate recomputations and flow-rate updates (for benchmarks). */
uint64_t sim_net_recomputes(const SimNet *n);
uint64_t sim_net_rate_updates(const SimNet *n);

/* The reference and its check, for tests: `full` refills the whole connected
 * component a change touches instead of only the flows whose rates can move;
 * `verify` fills every active flow from scratch after each rate update and
 * keeps the largest relative difference from the rates in force. */
void sim_net_set_full(SimNet *n, bool full);
/* Shadowing (on by default): a link whose flows all cross another link of no
 * more bandwidth is left out of the max-min problem (its constraint is
 * implied; no rate changes).  Off: every link is in it (the reference). */
void sim_net_set_shadow(SimNet *n, bool on);
void sim_net_set_verify(SimNet *n, bool on);
double sim_net_verify_diff(const SimNet *n);

/* A bound on the work of rate recomputations (links and flow hops visited,
 * and 16 for each flow rescheduled at a new rate, summed over all of them),
 * so that no input runs for hours: past it the network stops, no flow
 * finishes, and sim_net_overrun says so.  The default is about ten minutes
 * of a Release build; a tree all-reduce over an 8192-chip TPU pod fits. */
#define SIM_NET_DEFAULT_WORK_LIMIT (1ULL << 34)
void sim_net_set_work_limit(SimNet *n, uint64_t limit);
bool sim_net_overrun(const SimNet *n);
uint64_t sim_net_work(const SimNet *n);

#endif
