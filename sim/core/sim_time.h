/* Simulated time: an integer count of picoseconds.  Integer time keeps runs
 * deterministic and exact to add; 2^64 ps is about 213 days of simulated time. */
#ifndef SIM_TIME_H
#define SIM_TIME_H

#include <stdint.h>

typedef uint64_t sim_time_t;

#define SIM_TIME_PS_PER_S 1000000000000ULL
#define SIM_TIME_NEVER UINT64_MAX

/* Rounds to the nearest picosecond; negative or NaN gives 0, overflow SIM_TIME_NEVER. */
sim_time_t sim_time_from_s(double seconds);
double sim_time_to_s(sim_time_t t);

/* Saturating addition: never wraps past SIM_TIME_NEVER. */
static inline sim_time_t sim_time_add(sim_time_t a, sim_time_t b)
{
    return a > SIM_TIME_NEVER - b ? SIM_TIME_NEVER : a + b;
}

#endif
