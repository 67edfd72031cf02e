/* Simulated time in integer picoseconds: conversions from and to seconds
 * (sim_time.h). */
#include "sim_time.h"

#include <math.h>

sim_time_t sim_time_from_s(double seconds)
{
    if (!(seconds > 0.0))
        return 0;
    double ps = seconds * (double)SIM_TIME_PS_PER_S;
    if (ps >= 18446744073709549568.0) /* largest double below 2^64 */
        return SIM_TIME_NEVER;
    return (sim_time_t)round(ps); /* not llround: its long long wraps from 2^63 ps (107 days; review 9) */
}

double sim_time_to_s(sim_time_t t)
{
    return (double)t / (double)SIM_TIME_PS_PER_S;
}
