/* shardsim against SimGrid on the same platform and the same flows.
 *
 * For each case the bench builds a shardsim topology, writes the equivalent
 * SimGrid platform (one SimGrid link per directed shardsim link, with its
 * bandwidth and latency, and one explicit route per communicating pair: the
 * links topo_route gives, so ECMP choices match), runs the traffic in both
 * simulators and prints the predicted times, their difference and the wall
 * times.  Both sides are plain flow models with every correction off:
 * shardsim's sim_net on raw link bandwidths (no link-efficiency factors),
 * SimGrid's CM02 with factors 1 and no TCP window (see sg_side.c).
 *
 * Platforms:
 *  - crossbar: single_switch, every rank one 25 GB/s, 650 ns link each way;
 *  - fat tree 4:1: one rank per node, PCIe to its NIC, 8 nodes per leaf,
 *    2 spines, uplinks sized for 4:1 oversubscription.  The uplinks have no
 *    latency so every route has the same latency: CM02 weights a flow's share
 *    by its route latency (a TCP RTT effect shardsim does not model), and
 *    equal latencies make both sides plain max-min.
 * Traffic: ring all-reduce (2(n-1) steps of bytes/n to the right neighbour,
 * a step starting when the rank's previous send and receive are done) on the
 * crossbar; all-to-all (every rank sends bytes/n to every other at once) on
 * the fat tree. */
#include "sg_side.h"
#include "sim_net.h"
#include "sim_units.h"
#include "topo.h"

#include <errno.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_RANKS 4096

typedef struct {
    SgPattern pat;
    int n;
} Case;

static const char CROSSBAR_JSON[] =
    "{\"name\": \"bench-crossbar\", \"family\": \"single_switch\", \"ranks_per_node\": 1, \"nodes\": 2,\n"
    " \"link\": {\"bandwidth\": \"25GB/s\", \"latency\": \"650ns\", \"kind\": \"net\"}}\n";

static const char FAT_TREE_JSON[] =
    "{\"name\": \"bench-fat-tree-4to1\", \"family\": \"fat_tree\", \"nodes\": 2, \"ranks_per_node\": 1,\n"
    " \"nics_per_node\": 1, \"intra\": \"none\",\n"
    " \"pcie\": {\"bandwidth\": \"31.5GB/s\", \"latency\": \"300ns\"},\n"
    " \"nic\": {\"bandwidth\": \"25GB/s\", \"latency\": \"350ns\"},\n"
    " \"nodes_per_leaf\": 8, \"spines\": 2, \"oversubscription\": 4, \"uplink\": {\"latency\": 0}}\n";

static const char *pattern_name(SgPattern p) { return p == SG_RING ? "ring" : "alltoall"; }
static const char *platform_name(SgPattern p) { return p == SG_RING ? "crossbar" : "fattree-4:1"; }

/* ---- the routes both simulators use ---- */

/* The path of every communicating pair, from topo_route with salt 0. */
typedef struct {
    int n, maxlen;
    int *len;   /* per pair index */
    int *links; /* maxlen per pair */
} Routes;

static int pair_index(SgPattern p, int n, int s, int d) { return p == SG_RING ? s : s * n + d; }

static bool routes_build(Routes *r, const Topo *t, SgPattern p, GError **err)
{
    int n = topo_num_ranks(t);
    size_t pairs = p == SG_RING ? (size_t)n : (size_t)n * (size_t)n;
    r->n = n;
    r->maxlen = topo_max_route_length(t);
    r->len = g_new0(int, pairs);
    r->links = g_new(int, pairs * (size_t)r->maxlen);
    for (int s = 0; s < n; s++) {
        for (int d = 0; d < n; d++) {
            if (d == s || (p == SG_RING && d != (s + 1) % n))
                continue;
            int i = pair_index(p, n, s, d);
            r->len[i] = topo_route(t, s, d, 0, r->links + (size_t)i * (size_t)r->maxlen, r->maxlen);
            if (r->len[i] <= 0) {
                g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "%s: no route from rank %d to rank %d", topo_name(t), s,
                            d);
                return false;
            }
        }
    }
    return true;
}

static void routes_free(Routes *r)
{
    g_free(r->len);
    g_free(r->links);
}

/* ---- the SimGrid platform ---- */

static bool write_platform(const char *path, const Topo *t, const Routes *r, SgPattern p, GError **err)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        g_set_error(err, SIM_ERROR, SIM_ERROR_INTERNAL, "%s: %s", path, g_strerror(errno));
        return false;
    }
    fprintf(f, "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
               "<platform version=\"4.1\">\n<zone id=\"%s\" routing=\"Full\">\n",
            topo_name(t));
    for (int i = 0; i < r->n; i++)
        fprintf(f, "<host id=\"h%d\" speed=\"1Gf\"/>\n", i);
    /* %.17g: the same doubles shardsim uses */
    for (int l = 0; l < topo_num_links(t); l++)
        fprintf(f, "<link id=\"l%d\" bandwidth=\"%.17gBps\" latency=\"%.17gs\"/>\n", l, topo_link_bandwidth(t, l),
                topo_link_latency(t, l));
    for (int s = 0; s < r->n; s++) {
        for (int d = 0; d < r->n; d++) {
            if (d == s || (p == SG_RING && d != (s + 1) % r->n))
                continue;
            int i = pair_index(p, r->n, s, d);
            fprintf(f, "<route src=\"h%d\" dst=\"h%d\" symmetrical=\"NO\">", s, d);
            for (int k = 0; k < r->len[i]; k++)
                fprintf(f, "<link_ctn id=\"l%d\"/>", r->links[(size_t)i * (size_t)r->maxlen + (size_t)k]);
            fputs("</route>\n", f);
        }
    }
    fputs("</zone>\n</platform>\n", f);
    if (fclose(f) != 0) {
        g_set_error(err, SIM_ERROR, SIM_ERROR_INTERNAL, "%s: %s", path, g_strerror(errno));
        return false;
    }
    return true;
}

/* ---- the shardsim side ---- */

typedef struct Run Run;
typedef struct {
    Run *run;
    int rank;
} RankCtx;

struct Run {
    SimNet *net;
    const Routes *routes;
    SgPattern pat;
    int n, steps;
    double chunk;
    int *started, *sent, *recvd; /* ring: steps started, sends and receives done, per rank */
    RankCtx *ctx;
};

static void ring_try_start(Run *r, int i);

static void ring_done(SimEngine *e, void *user)
{
    RankCtx *c = user;
    Run *r = c->run;
    int right = (c->rank + 1) % r->n;
    r->sent[c->rank]++;
    r->recvd[right]++;
    ring_try_start(r, c->rank);
    ring_try_start(r, right);
}

/* Step k of rank i starts once its sends and receives of step k-1 are done. */
static void ring_try_start(Run *r, int i)
{
    int k = r->started[i];
    if (k >= r->steps || r->sent[i] < k || r->recvd[i] < k)
        return;
    r->started[i]++;
    const int *links = r->routes->links + (size_t)i * (size_t)r->routes->maxlen;
    sim_net_flow(r->net, r->chunk, links, r->routes->len[i], ring_done, &r->ctx[i]);
}

static void alltoall_done(SimEngine *e, void *user) {}

/* Returns the simulated time (s) and the wall time of the run in `wall`. */
static double shardsim_run(const Topo *t, const Routes *routes, SgPattern p, double chunk, double *wall)
{
    gint64 t0 = g_get_monotonic_time();
    SimEngine *e = sim_engine_new();
    SimNet *net = sim_net_new(e);
    topo_add_to_net(t, net);
    int n = topo_num_ranks(t);
    Run r = {.net = net, .routes = routes, .pat = p, .n = n, .steps = 2 * (n - 1), .chunk = chunk};
    r.started = g_new0(int, n);
    r.sent = g_new0(int, n);
    r.recvd = g_new0(int, n);
    r.ctx = g_new(RankCtx, n);
    for (int i = 0; i < n; i++)
        r.ctx[i] = (RankCtx){&r, i};
    if (p == SG_RING) {
        for (int i = 0; i < n; i++)
            ring_try_start(&r, i);
    } else {
        for (int s = 0; s < n; s++)
            for (int d = 1; d < n; d++) {
                int i = pair_index(p, n, s, (s + d) % n);
                sim_net_flow(net, chunk, routes->links + (size_t)i * (size_t)routes->maxlen, routes->len[i],
                             alltoall_done, NULL);
            }
    }
    sim_time_t end = sim_engine_run(e);
    *wall = (double)(g_get_monotonic_time() - t0) / 1e6;
    g_free(r.started);
    g_free(r.sent);
    g_free(r.recvd);
    g_free(r.ctx);
    sim_net_free(net);
    sim_engine_free(e);
    return sim_time_to_s(end);
}

/* ---- cases and options ---- */

static bool parse_ranks(const char *what, const char *text, SgPattern p, GArray *cases, GError **err)
{
    if (strcmp(text, "none") == 0)
        return true;
    char **parts = g_strsplit(text, ",", -1);
    bool ok = parts[0] != NULL;
    for (int i = 0; ok && parts[i]; i++) {
        char *end = NULL;
        errno = 0;
        long v = strtol(parts[i], &end, 10);
        if (errno || end == parts[i] || *end || v < 2 || v > MAX_RANKS) {
            g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT,
                        "%s wants rank counts between 2 and %d separated by commas (or none), not \"%s\"", what,
                        MAX_RANKS, text);
            ok = false;
        } else {
            Case c = {p, (int)v};
            g_array_append_val(cases, c);
        }
    }
    if (!parts[0])
        g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "%s wants rank counts (or none)", what);
    g_strfreev(parts);
    return ok;
}

typedef struct {
    GArray *cases;
    double bytes;
    char *keep;
    bool full_update;
} Opts;

static bool parse_opts(int argc, char **argv, Opts *o, GError **err)
{
    gboolean quick = FALSE;
    char *ring = NULL, *a2a = NULL, *bytes = NULL, *optim = NULL;
    GOptionEntry entries[] = {
        {"ring", 0, 0, G_OPTION_ARG_STRING, &ring, "ring all-reduce rank counts (default 16,64,256,1024)", "N,N"},
        {"alltoall", 0, 0, G_OPTION_ARG_STRING, &a2a, "all-to-all rank counts on the 4:1 fat tree (default 16,64,256)",
         "N,N"},
        {"bytes", 0, 0, G_OPTION_ARG_STRING, &bytes, "bytes per rank (default 1GiB); each flow carries bytes/ranks",
         "SIZE"},
        {"quick", 0, 0, G_OPTION_ARG_NONE, &quick, "small cases: ring 16,64 and all-to-all 16, 64 MiB", NULL},
        {"simgrid-optim", 0, 0, G_OPTION_ARG_STRING, &optim,
         "SimGrid's network/optim: Lazy (its default) or Full", "Lazy|Full"},
        {"keep", 0, 0, G_OPTION_ARG_FILENAME, &o->keep, "write the topology and platform files into DIR and keep them",
         "DIR"},
        {NULL, 0, 0, 0, NULL, NULL, NULL}};
    GOptionContext *ctx = g_option_context_new("- shardsim and SimGrid on the same platform and flows");
    g_option_context_add_main_entries(ctx, entries, NULL);
    bool ok = g_option_context_parse(ctx, &argc, &argv, err);
    g_option_context_free(ctx);
    if (ok && argc > 1) {
        g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "unexpected argument \"%s\"", argv[1]);
        ok = false;
    }
    o->bytes = quick ? 64.0 * 1048576 : 1073741824.0;
    if (ok && bytes && (!sim_parse_size(bytes, &o->bytes) || o->bytes < 1)) {
        g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "--bytes wants a size such as 1GiB, not \"%s\"", bytes);
        ok = false;
    }
    if (ok && optim) {
        o->full_update = strcmp(optim, "Full") == 0;
        if (!o->full_update && strcmp(optim, "Lazy") != 0) {
            g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "--simgrid-optim wants Lazy or Full, not \"%s\"", optim);
            ok = false;
        }
    }
    g_free(optim);
    o->cases = g_array_new(FALSE, FALSE, sizeof(Case));
    ok = ok && parse_ranks("--ring", ring ? ring : quick ? "16,64" : "16,64,256,1024", SG_RING, o->cases, err) &&
         parse_ranks("--alltoall", a2a ? a2a : quick ? "16" : "16,64,256", SG_ALLTOALL, o->cases, err);
    for (guint i = 0; ok && i < o->cases->len; i++) {
        int n = g_array_index(o->cases, Case, i).n;
        if (o->bytes / n < 1) {
            g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "--bytes %.0f over %d ranks leaves no byte per flow",
                        o->bytes, n);
            ok = false;
        }
    }
    g_free(ring);
    g_free(a2a);
    g_free(bytes);
    return ok;
}

/* Repetitions of a case whose walls are short: until they sum to REPEAT_S. */
#define REPEAT_S 0.05
#define SS_REPS_MAX 1000
#define SG_REPS_MAX 25

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* One row of the table; false (and `err`) if a simulator could not run it. */
static bool run_case(const Case *c, const Opts *o, const char *dir, GError **err)
{
    char *json = g_build_filename(dir, c->pat == SG_RING ? "crossbar.json" : "fattree.json", NULL);
    char *xml = g_strdup_printf("%s/%s-%d.xml", dir, pattern_name(c->pat), c->n);
    bool ok = g_file_set_contents(json, c->pat == SG_RING ? CROSSBAR_JSON : FAT_TREE_JSON, -1, err);
    TopoOptions topt = {.nodes = c->n};
    Topo *t = ok ? topo_load(json, &topt, err) : NULL;
    Routes routes = {0};
    ok = t && routes_build(&routes, t, c->pat, err) && write_platform(xml, t, &routes, c->pat, err);
    long chunk = (long)floor(o->bytes / c->n);
    if (ok) {
        /* Sub-millisecond walls are repeated until their sum is REPEAT_S, and
         * the median is taken, so that one run's noise does not make the ratio. */
        double ss_walls[SS_REPS_MAX], sg_walls[SG_REPS_MAX], ss = 0, sum = 0;
        int ss_reps = 0, sg_reps = 0;
        while (ss_reps < SS_REPS_MAX && (ss_reps == 0 || sum < REPEAT_S)) {
            double s = shardsim_run(t, &routes, c->pat, (double)chunk, &ss_walls[ss_reps]);
            if (ss_reps > 0 && s != ss)
                g_error("bench_simgrid: shardsim is not deterministic (%.17g s, then %.17g s)", ss, s);
            ss = s;
            sum += ss_walls[ss_reps++];
        }
        SgTraffic tr = {c->pat, c->n, chunk, o->full_update};
        SgResult sg = {0}, one;
        char why[256];
        sum = 0;
        while (ok && sg_reps < SG_REPS_MAX && (sg_reps == 0 || sum < REPEAT_S)) {
            ok = sg_side_run(xml, &tr, &one, why, sizeof why);
            if (ok) {
                sg_walls[sg_reps++] = one.run_s;
                sum += one.run_s;
                if (sg_reps == 1)
                    sg = one;
            }
        }
        if (!ok) {
            g_set_error(err, SIM_ERROR, SIM_ERROR_INTERNAL, "%s %d ranks: %s", pattern_name(c->pat), c->n, why);
        } else {
            double ss_wall = median(ss_walls, ss_reps);
            sg.run_s = median(sg_walls, sg_reps);
            printf("%-8s %-11s %6d %12ld %14.9g %14.9g %+10.2e %10.6f %10.6f %9.1f %8.3f %5d/%d\n",
                   pattern_name(c->pat), platform_name(c->pat), c->n, chunk, ss, sg.sim_s, (ss - sg.sim_s) / sg.sim_s,
                   ss_wall, sg.run_s, sg.run_s / ss_wall, sg.load_s, ss_reps, sg_reps);
        }
        fflush(stdout);
    }
    if (!o->keep)
        g_unlink(xml);
    routes_free(&routes);
    if (t)
        topo_free(t);
    g_free(json);
    g_free(xml);
    return ok;
}

int main(int argc, char **argv)
{
    Opts o = {0};
    GError *err = NULL;
    if (!parse_opts(argc, argv, &o, &err)) {
        fprintf(stderr, "bench_simgrid: %s\n", err->message);
        g_error_free(err);
        g_array_free(o.cases, TRUE);
        g_free(o.keep);
        return 2;
    }
    char *dir = NULL;
    if (o.keep) {
        if (g_mkdir_with_parents(o.keep, 0755) != 0) {
            fprintf(stderr, "bench_simgrid: %s: %s\n", o.keep, g_strerror(errno));
            return 1;
        }
        dir = g_strdup(o.keep);
    } else if (!(dir = g_dir_make_tmp("bench_simgrid-XXXXXX", &err))) {
        fprintf(stderr, "bench_simgrid: %s\n", err->message);
        return 1;
    }
    printf("# shardsim flow model vs %s, CM02 with correction factors off, network/optim:%s; bytes per rank %.0f\n",
           sg_side_version(), o.full_update ? "Full" : "Lazy", o.bytes);
    printf("# rel = (shardsim - simgrid) / simgrid; walls in s, ratio = simgrid run / shardsim run; each wall the\n"
           "# median of `reps` runs (shardsim/SimGrid), repeated until they sum to %g s\n",
           REPEAT_S);
    printf("%-8s %-11s %6s %12s %14s %14s %10s %10s %10s %9s %8s %7s\n", "pattern", "platform", "ranks", "flow_bytes",
           "shardsim_s", "simgrid_s", "rel", "ss_wall", "sg_wall", "ratio", "sg_load", "reps");
    int rc = 0;
    for (guint i = 0; i < o.cases->len && rc == 0; i++) {
        if (!run_case(&g_array_index(o.cases, Case, i), &o, dir, &err)) {
            fprintf(stderr, "bench_simgrid: %s\n", err->message);
            rc = err->code == SIM_ERROR_INPUT ? 2 : 1;
            g_clear_error(&err);
        }
    }
    if (!o.keep) {
        char *p = g_build_filename(dir, "crossbar.json", NULL);
        g_unlink(p);
        g_free(p);
        p = g_build_filename(dir, "fattree.json", NULL);
        g_unlink(p);
        g_free(p);
        g_rmdir(dir);
    }
    g_free(dir);
    g_free(o.keep);
    g_array_free(o.cases, TRUE);
    return rc;
}
