/* shardsim-capture-check FILE OP RANKS: reads a shardsim-capture output with
 * the nccl-tests reader and checks what the capture promises: its provenance,
 * the collective, the rank count, increasing sizes, positive times and
 * algbw/busbw consistent with size/time.  Prints each problem; exit 1 if any. */
#include "nccltests.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int problems;

static void problem(const char *path, int line, const char *what, double a, double b)
{
    fprintf(stderr, "%s:%d: %s (%g vs %g)\n", path, line, what, a, b);
    problems++;
}

static bool close_to(double printed, double exact, double abs_tol, double rel_tol)
{
    return fabs(printed - exact) <= abs_tol + rel_tol * fabs(exact);
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: shardsim-capture-check FILE OP RANKS\n");
        return 2;
    }
    const char *path = argv[1];
    NcclTestsOp want_op = nccltests_op_from_name(argv[2]);
    int want_ranks = atoi(argv[3]);
    GError *err = NULL;
    NcclTrace *t = nccltests_load(path, &err);
    if (!t) {
        fprintf(stderr, "shardsim-capture-check: %s\n", err->message);
        g_error_free(err);
        return 1;
    }
    const char *source = nccltests_header(t, "source");
    if (!source || !g_str_has_prefix(source, "shardsim-capture")) {
        fprintf(stderr, "%s: '# source:' does not name shardsim-capture\n", path);
        problems++;
    }
    for (const char *const *k = (const char *const[]){ "hostname", "ranks", "mpi", "date", NULL }; *k; k++)
        if (!nccltests_header(t, *k)) {
            fprintf(stderr, "%s: no '# %s:' header\n", path, *k);
            problems++;
        }
    if (want_op == NCCLTESTS_UNKNOWN || nccltests_op(t) != want_op) {
        fprintf(stderr, "%s: op is %s, expected %s\n", path, nccltests_op_name(nccltests_op(t)), argv[2]);
        problems++;
    }
    if (nccltests_n_ranks(t) != want_ranks || nccltests_n_hosts(t) < 1) {
        fprintf(stderr, "%s: %d ranks on %d hosts, expected %d ranks\n", path, nccltests_n_ranks(t),
                nccltests_n_hosts(t), want_ranks);
        problems++;
    }
    double factor = nccltests_busbw_factor(nccltests_op(t), want_ranks);
    size_t n = nccltests_n_rows(t);
    if (n == 0) {
        fprintf(stderr, "%s: no rows\n", path);
        problems++;
    }
    for (size_t i = 0; i < n; i++) {
        const NcclTestsRow *r = nccltests_row(t, i);
        if (i > 0 && r->size_bytes <= nccltests_row(t, i - 1)->size_bytes)
            problem(path, r->line, "sizes do not increase", (double)r->size_bytes,
                    (double)nccltests_row(t, i - 1)->size_bytes);
        double times[2] = { r->time_us, r->ip_time_us }, alg[2] = { r->algbw_gbs, r->ip_algbw_gbs },
               bus[2] = { r->busbw_gbs, r->ip_busbw_gbs };
        for (int k = 0; k < 2; k++) {
            if (!(times[k] > 0)) {
                problem(path, r->line, "time is not positive", times[k], 0);
                continue;
            }
            /* printed: time %.3f us, bandwidths %.2f GB/s */
            double exact_alg = (double)r->size_bytes / (times[k] * 1e3);
            if (!close_to(alg[k], exact_alg, 0.0051, 2e-3 + 0.0005 / times[k]))
                problem(path, r->line, "algbw differs from size/time", alg[k], exact_alg);
            if (!close_to(bus[k], exact_alg * factor, 0.0051, 2e-3 + 0.0005 / times[k]))
                problem(path, r->line, "busbw differs from algbw x factor", bus[k], exact_alg * factor);
        }
    }
    if (!problems)
        printf("%s: %zu rows of %s on %d ranks (%d host%s), sizes %llu..%llu B\n", path, n,
               nccltests_op_name(nccltests_op(t)), nccltests_n_ranks(t), nccltests_n_hosts(t),
               nccltests_n_hosts(t) == 1 ? "" : "s", n ? (unsigned long long)nccltests_row(t, 0)->size_bytes : 0ULL,
               n ? (unsigned long long)nccltests_row(t, n - 1)->size_bytes : 0ULL);
    nccltests_free(t);
    return problems ? 1 : 0;
}
