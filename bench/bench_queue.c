/* The classic "hold" benchmark: N pending events; repeatedly pop the earliest
 * and push one at its time plus a random increment.  Prints events/s of wall
 * time and of process CPU time (on a shared machine the wall also counts other
 * programs' turns on the core; tests/doccheck.py checks the CPU rate). */
#include "sim_queue.h"

#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Events per second of wall time; `*cpu_rate` of CPU time. */
static double hold(size_t n, size_t ops, GRand *r, double *cpu_rate)
{
    SimQueue *q = sim_queue_new();
    for (size_t i = 0; i < n; i++)
        sim_queue_push(q, (sim_time_t)g_rand_int_range(r, 0, 1 << 30), NULL);
    /* exponential-ish increments, precomputed so the RNG is not measured */
    enum { NINC = 1 << 16 };
    sim_time_t *inc = g_new(sim_time_t, NINC);
    for (int i = 0; i < NINC; i++)
        inc[i] = (sim_time_t)g_rand_int_range(r, 1, 1 << 30);
    gint64 t0 = g_get_monotonic_time();
    double c0 = cpu_now();
    for (size_t i = 0; i < ops; i++) {
        sim_time_t t;
        sim_queue_pop(q, &t, NULL);
        sim_queue_push(q, t + inc[i & (NINC - 1)], NULL);
    }
    double secs = (double)(g_get_monotonic_time() - t0) / 1e6;
    *cpu_rate = (double)ops / (cpu_now() - c0);
    g_free(inc);
    sim_queue_free(q);
    return (double)ops / secs;
}

int main(int argc, char **argv)
{
    size_t ops = argc > 1 ? strtoull(argv[1], NULL, 10) : 20000000;
    GRand *r = g_rand_new_with_seed(1);
    size_t sizes[] = {1000, 100000, 1000000};
    printf("hold benchmark: %zu pop+push pairs per size\n", ops);
    for (size_t i = 0; i < 3; i++) {
        double cpu_rate, rate = hold(sizes[i], ops, r, &cpu_rate);
        printf("N = %-8zu %8.2f M events/s  (%.2f M events/s CPU)\n", sizes[i], rate / 1e6, cpu_rate / 1e6);
    }
    g_rand_free(r);
    return 0;
}
