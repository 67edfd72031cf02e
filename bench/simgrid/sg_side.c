/* The SimGrid half of bench_simgrid: one child process per case runs the
 * traffic with SimGrid's C API and sends back the predicted time and the wall
 * times over a pipe.
 *
 * Model: CM02 (max-min fairness, each flow weighted by its route latency),
 * latency and bandwidth factors 1, no TCP window bound (TCP-gamma 0 gives no
 * bound), no cross-traffic (the 5% reverse-path flow CM02 adds by default).
 * The solver's update is Lazy (SimGrid's default) or Full (every action at
 * every step).  Mailboxes are permanent receivers, so a transfer starts when its sender
 * posts it, as a shardsim flow does, not at the rendezvous with the get. */
#include "sg_side.h"

#include <simgrid/actor.h>
#include <simgrid/comm.h>
#include <simgrid/engine.h>
#include <simgrid/host.h>
#include <simgrid/mailbox.h>
#include <simgrid/version.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static SgTraffic g_tr;
static sg_mailbox_t *g_mb;
static char g_payload; /* comms carry a pointer to it; only the size is simulated */

static double wall_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Every rank declares its mailbox eager before anyone sends. */
static void become_receiver(int i)
{
    sg_mailbox_set_receiver(sg_mailbox_get_name(g_mb[i]));
    sg_actor_yield();
}

static void ring_actor(int argc, char **argv)
{
    int i = atoi(argv[argc - 1]);
    become_receiver(i);
    sg_mailbox_t right = g_mb[(i + 1) % g_tr.n];
    for (int k = 0; k < 2 * (g_tr.n - 1); k++) {
        sg_comm_t c = sg_mailbox_put_async(right, &g_payload, g_tr.chunk);
        sg_mailbox_get(g_mb[i]); /* step k's chunk from the left */
        sg_comm_wait(c);
    }
}

static void alltoall_actor(int argc, char **argv)
{
    int i = atoi(argv[argc - 1]), n = g_tr.n;
    become_receiver(i);
    sg_comm_t *c = malloc(sizeof *c * (size_t)n);
    for (int d = 1; d < n; d++)
        c[d] = sg_mailbox_put_async(g_mb[(i + d) % n], &g_payload, g_tr.chunk);
    for (int d = 1; d < n; d++)
        sg_mailbox_get(g_mb[i]);
    for (int d = 1; d < n; d++)
        sg_comm_wait(c[d]);
    free(c);
}

static void child(const char *xml, int fd)
{
    char *argv[] = {"bench_simgrid",
                    "--cfg=network/model:CM02",
                    "--cfg=network/latency-factor:1",
                    "--cfg=network/bandwidth-factor:1",
                    "--cfg=network/weight-S:0",
                    "--cfg=network/TCP-gamma:0",
                    "--cfg=network/crosstraffic:0",
                    "--cfg=contexts/stack-size:128",
                    "--log=root.thres:warning",
                    g_tr.full_update ? "--cfg=network/optim:Full" : "--cfg=network/optim:Lazy",
                    NULL};
    int argc = (int)(sizeof argv / sizeof *argv) - 1;
    simgrid_init(&argc, argv);
    SgResult r;
    double t0 = wall_now();
    simgrid_load_platform(xml);
    r.load_s = wall_now() - t0;
    g_mb = malloc(sizeof *g_mb * (size_t)g_tr.n);
    for (int i = 0; i < g_tr.n; i++) {
        char name[32];
        snprintf(name, sizeof name, "h%d", i);
        g_mb[i] = sg_mailbox_by_name(name);
    }
    for (int i = 0; i < g_tr.n; i++) {
        char name[32], rank[16];
        snprintf(name, sizeof name, "h%d", i);
        snprintf(rank, sizeof rank, "%d", i);
        sg_host_t h = sg_host_by_name(name);
        if (!h) {
            fprintf(stderr, "bench_simgrid: %s: no host %s\n", xml, name);
            _exit(1);
        }
        char *args[] = {rank, NULL};
        sg_actor_create(name, h, g_tr.pat == SG_RING ? ring_actor : alltoall_actor, 1, args);
    }
    t0 = wall_now();
    simgrid_run();
    r.run_s = wall_now() - t0;
    r.sim_s = simgrid_get_clock();
    ssize_t w = write(fd, &r, sizeof r);
    _exit(w == (ssize_t)sizeof r ? 0 : 1); /* skip SimGrid's teardown: it is not measured */
}

const char *sg_side_version(void) { return SIMGRID_VERSION_STRING; }

bool sg_side_run(const char *platform_xml, const SgTraffic *tr, SgResult *out, char *why, size_t whylen)
{
    int fds[2];
    if (pipe(fds) != 0) {
        snprintf(why, whylen, "pipe: %s", strerror(errno));
        return false;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(why, whylen, "fork: %s", strerror(errno));
        close(fds[0]);
        close(fds[1]);
        return false;
    }
    if (pid == 0) {
        close(fds[0]);
        g_tr = *tr;
        child(platform_xml, fds[1]);
    }
    close(fds[1]);
    SgResult r;
    size_t got = 0;
    while (got < sizeof r) {
        ssize_t k = read(fds[0], (char *)&r + got, sizeof r - got);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            break;
        got += (size_t)k;
    }
    close(fds[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (got != sizeof r || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        if (WIFSIGNALED(status))
            snprintf(why, whylen, "the SimGrid run died of signal %d", WTERMSIG(status));
        else
            snprintf(why, whylen, "the SimGrid run failed (exit %d)", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
        return false;
    }
    *out = r;
    return true;
}
