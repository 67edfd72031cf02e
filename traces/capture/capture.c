/* shardsim-capture: times MPI collectives over a range of sizes and prints
 * the result as an nccl-tests table, so that `shardsim validate` (and
 * traces/nccltests.h) read it like any nccl-tests output.
 *
 *   mpirun -np 2 shardsim-capture --op allreduce -b 8 -e 64M -f 2 -w 5 -n 20 [-o FILE]
 *
 * Each size: `warmup` untimed calls, a barrier, then `iters` calls timed with
 * MPI_Wtime; a rank's time is the mean per call, and the row shows the mean
 * over ranks (as nccl-tests does).  Out-of-place and in-place (MPI_IN_PLACE)
 * are both timed; after timing, one more call on fresh data is checked
 * element by element (#wrong).  Data are float32, reduction sum, host memory.
 * Sizes follow nccl-tests: the total bytes of the largest buffer, so
 * reduce_scatter, all_gather and alltoall sizes are rounded down to a
 * multiple of 4 x ranks; "count" is the per-rank element count.
 *
 * Only MPI and the C library are needed: `mpicc -std=c11 -O2 capture.c`.
 * Exit status: 0, 1 when any element was wrong, 2 for bad options. */
#include <mpi.h>

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define CAPTURE_VERSION "0.1.0"

typedef enum { OP_ALLREDUCE, OP_REDUCESCATTER, OP_ALLGATHER, OP_BCAST, OP_ALLTOALL } Op;

static const struct {
    const char *name;  /* as `# op:` and nccltests_op_from_name read it */
    const char *alias; /* the OSU/MPI spelling */
    const char *binary; /* the nccl-tests program this mirrors */
} OPS[] = {
    [OP_ALLREDUCE] = { "allreduce", "all_reduce", "all_reduce_perf" },
    [OP_REDUCESCATTER] = { "reducescatter", "reduce_scatter", "reduce_scatter_perf" },
    [OP_ALLGATHER] = { "allgather", "all_gather", "all_gather_perf" },
    [OP_BCAST] = { "broadcast", "bcast", "broadcast_perf" },
    [OP_ALLTOALL] = { "alltoall", "all_to_all", "alltoall_perf" },
};

typedef struct {
    Op op;
    size_t min_bytes, max_bytes;
    int factor, warmup, iters, check;
    const char *output;
} Options;

static int rank, nranks;

static void die_usage(const char *fmt, ...)
{
    if (rank == 0) {
        va_list ap;
        va_start(ap, fmt);
        fprintf(stderr, "shardsim-capture: ");
        vfprintf(stderr, fmt, ap);
        fprintf(stderr, "\nusage: mpirun -np N shardsim-capture [--op allreduce|reduce_scatter|allgather|bcast|"
                        "alltoall] [-b MINBYTES] [-e MAXBYTES] [-f FACTOR] [-w WARMUP] [-n ITERS] [-c 0|1] "
                        "[-o FILE]\n");
        va_end(ap);
    }
    MPI_Finalize();
    exit(2);
}

/* "8", "64K", "1M", "2G" (powers of 1024, as nccl-tests reads -b/-e). */
static int parse_size(const char *s, size_t *out)
{
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (end == s || errno || s[0] == '-')
        return 0;
    unsigned long long mul = 1;
    if (*end == 'K' || *end == 'k')
        mul = 1ULL << 10, end++;
    else if (*end == 'M' || *end == 'm')
        mul = 1ULL << 20, end++;
    else if (*end == 'G' || *end == 'g')
        mul = 1ULL << 30, end++;
    if (*end == 'B')
        end++;
    if (*end || v > SIZE_MAX / mul)
        return 0;
    *out = (size_t)(v * mul);
    return 1;
}

static int parse_int(const char *s, int lo, int hi, int *out)
{
    char *end = NULL;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (end == s || *end || errno || v < lo || v > hi)
        return 0;
    *out = (int)v;
    return 1;
}

static Options parse_options(int argc, char **argv)
{
    Options o = { OP_ALLREDUCE, 8, 1 << 20, 2, 5, 20, 1, NULL };
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0)
            die_usage("times MPI collectives; prints an nccl-tests table");
        if (i + 1 >= argc)
            die_usage("option %s needs a value", a);
        const char *v = argv[++i];
        if (strcmp(a, "--op") == 0 || strcmp(a, "-p") == 0) {
            int found = 0;
            for (size_t k = 0; k < sizeof OPS / sizeof OPS[0]; k++)
                if (strcmp(v, OPS[k].name) == 0 || strcmp(v, OPS[k].alias) == 0) {
                    o.op = (Op)k;
                    found = 1;
                }
            if (!found)
                die_usage("unknown --op \"%s\"", v);
        } else if (strcmp(a, "-b") == 0 || strcmp(a, "--minbytes") == 0) {
            if (!parse_size(v, &o.min_bytes) || o.min_bytes == 0)
                die_usage("bad -b \"%s\"", v);
        } else if (strcmp(a, "-e") == 0 || strcmp(a, "--maxbytes") == 0) {
            if (!parse_size(v, &o.max_bytes) || o.max_bytes == 0)
                die_usage("bad -e \"%s\"", v);
        } else if (strcmp(a, "-f") == 0 || strcmp(a, "--stepfactor") == 0) {
            if (!parse_int(v, 2, 1024, &o.factor))
                die_usage("bad -f \"%s\" (an integer >= 2)", v);
        } else if (strcmp(a, "-w") == 0 || strcmp(a, "--warmup_iters") == 0) {
            if (!parse_int(v, 0, 1000000, &o.warmup))
                die_usage("bad -w \"%s\"", v);
        } else if (strcmp(a, "-n") == 0 || strcmp(a, "--iters") == 0) {
            if (!parse_int(v, 1, 100000000, &o.iters))
                die_usage("bad -n \"%s\"", v);
        } else if (strcmp(a, "-c") == 0 || strcmp(a, "--check") == 0) {
            if (!parse_int(v, 0, 1, &o.check))
                die_usage("bad -c \"%s\" (0 or 1)", v);
        } else if (strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0) {
            o.output = v;
        } else {
            die_usage("unknown option %s", a);
        }
    }
    if (o.min_bytes > o.max_bytes)
        die_usage("-b is larger than -e");
    if (o.max_bytes > ((size_t)1 << 40))
        die_usage("-e larger than 1 TiB");
    return o;
}

/* Elements of the largest buffer for `bytes`; 0 when it rounds to nothing. */
static size_t total_count(const Options *o, size_t bytes)
{
    size_t c = bytes / sizeof(float);
    if (o->op == OP_REDUCESCATTER || o->op == OP_ALLGATHER || o->op == OP_ALLTOALL)
        c = c / (size_t)nranks * (size_t)nranks;
    return c;
}

/* The count nccl-tests prints: per rank for the sharded collectives. */
static size_t shown_count(const Options *o, size_t total)
{
    return o->op == OP_ALLREDUCE || o->op == OP_BCAST ? total : total / (size_t)nranks;
}

/* Values are small integers so float sums are exact. */
static float base(size_t i) { return (float)(i % 7 + 1); }
static float a2a_value(int from, int to, size_t j)
{
    return (float)((size_t)from * (size_t)nranks + (size_t)to + (j % 5) * (size_t)nranks * (size_t)nranks % 4096);
}

static void fill(const Options *o, float *send, float *recv, size_t total, int in_place)
{
    size_t per = total / (size_t)nranks;
    float *src = in_place ? recv : send;
    switch (o->op) {
    case OP_ALLREDUCE:
    case OP_REDUCESCATTER:
        for (size_t i = 0; i < total; i++)
            src[i] = (float)(rank + 1) * base(i);
        break;
    case OP_ALLGATHER:
        for (size_t j = 0; j < per; j++)
            (in_place ? recv + (size_t)rank * per : send)[j] = (float)(rank + 1) * base(j);
        break;
    case OP_BCAST:
        for (size_t i = 0; i < total; i++)
            recv[i] = rank == 0 ? base(i) : -1.0f;
        break;
    case OP_ALLTOALL:
        for (int p = 0; p < nranks; p++)
            for (size_t j = 0; j < per; j++)
                src[(size_t)p * per + j] = a2a_value(rank, p, j);
        break;
    }
    if (!in_place && o->op != OP_BCAST)
        memset(recv, 0, total * sizeof(float));
}

static long count_wrong(const Options *o, const float *recv, size_t total)
{
    size_t per = total / (size_t)nranks;
    float tri = (float)nranks * (float)(nranks + 1) / 2.0f;
    long wrong = 0;
    switch (o->op) {
    case OP_ALLREDUCE:
        for (size_t i = 0; i < total; i++)
            wrong += recv[i] != tri * base(i);
        break;
    case OP_REDUCESCATTER:
        for (size_t j = 0; j < per; j++)
            wrong += recv[j] != tri * base((size_t)rank * per + j);
        break;
    case OP_ALLGATHER:
        for (int r = 0; r < nranks; r++)
            for (size_t j = 0; j < per; j++)
                wrong += recv[(size_t)r * per + j] != (float)(r + 1) * base(j);
        break;
    case OP_BCAST:
        for (size_t i = 0; i < total; i++)
            wrong += recv[i] != base(i);
        break;
    case OP_ALLTOALL:
        for (int p = 0; p < nranks; p++)
            for (size_t j = 0; j < per; j++)
                wrong += recv[(size_t)p * per + j] != a2a_value(p, rank, j);
        break;
    }
    return wrong;
}

static void run_op(const Options *o, float *send, float *recv, size_t total, int in_place)
{
    int per = (int)(total / (size_t)nranks), all = (int)total;
    const void *sb = in_place ? MPI_IN_PLACE : send;
    switch (o->op) {
    case OP_ALLREDUCE:
        MPI_Allreduce(sb, recv, all, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        break;
    case OP_REDUCESCATTER:
        MPI_Reduce_scatter_block(sb, recv, per, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        break;
    case OP_ALLGATHER:
        MPI_Allgather(in_place ? MPI_IN_PLACE : send, per, MPI_FLOAT, recv, per, MPI_FLOAT, MPI_COMM_WORLD);
        break;
    case OP_BCAST:
        MPI_Bcast(recv, all, MPI_FLOAT, 0, MPI_COMM_WORLD);
        break;
    case OP_ALLTOALL:
        MPI_Alltoall(in_place ? MPI_IN_PLACE : send, per, MPI_FLOAT, recv, per, MPI_FLOAT, MPI_COMM_WORLD);
        break;
    }
}

/* busbw / algbw as nccl-tests computes it (src/<op>.cu GetBw). */
static double bus_factor(Op op)
{
    double n = nranks;
    switch (op) {
    case OP_ALLREDUCE:
        return 2.0 * (n - 1) / n;
    case OP_REDUCESCATTER:
    case OP_ALLGATHER:
    case OP_ALLTOALL:
        return (n - 1) / n;
    case OP_BCAST:
        return 1.0;
    }
    return 1.0;
}

/* Mean seconds per call over ranks, and the number of wrong elements on all ranks. */
static void measure(const Options *o, float *send, float *recv, size_t total, int in_place, double *sec, long *wrong)
{
    fill(o, send, recv, total, in_place);
    for (int i = 0; i < o->warmup; i++)
        run_op(o, send, recv, total, in_place);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int i = 0; i < o->iters; i++)
        run_op(o, send, recv, total, in_place);
    double local = (MPI_Wtime() - t0) / o->iters, sum = 0;
    MPI_Allreduce(&local, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    *sec = sum / nranks;
    long w = 0;
    if (o->check) {
        fill(o, send, recv, total, in_place);
        run_op(o, send, recv, total, in_place);
        w = count_wrong(o, recv, total);
    }
    MPI_Allreduce(&w, wrong, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
}

static void cpu_model(char *out, size_t cap)
{
    snprintf(out, cap, "CPU");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10) == 0) {
            char *c = strchr(line, ':');
            if (c) {
                c++;
                while (*c == ' ' || *c == '\t')
                    c++;
                c[strcspn(c, "\r\n")] = 0;
                if (*c)
                    snprintf(out, cap, "%s", c);
            }
            break;
        }
    }
    fclose(f);
}

/* One line of text: newlines and tabs become "; " and spaces. */
static void one_line(char *s)
{
    size_t n = strlen(s);
    while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == ' ' || s[n - 1] == '\r'))
        s[--n] = 0;
    for (char *p = s; *p; p++)
        if (*p == '\n' || *p == '\r' || *p == '\t')
            *p = ' ';
}

#define NAME_LEN 256

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    Options o = parse_options(argc, argv);

    /* who runs where */
    char host[MPI_MAX_PROCESSOR_NAME] = { 0 };
    int hl = 0;
    MPI_Get_processor_name(host, &hl);
    char mine[2 * NAME_LEN] = { 0 }, model[NAME_LEN];
    cpu_model(model, sizeof model);
    snprintf(mine, sizeof mine, "%d %.*s|%s", (int)getpid(), NAME_LEN - 16, host, model);
    char *all = rank == 0 ? calloc((size_t)nranks, sizeof mine) : NULL;
    MPI_Gather(mine, (int)sizeof mine, MPI_CHAR, all, (int)sizeof mine, MPI_CHAR, 0, MPI_COMM_WORLD);

    size_t max_total = total_count(&o, o.max_bytes);
    if (max_total == 0)
        max_total = (size_t)nranks;
    float *send = malloc(max_total * sizeof(float)), *recv = malloc(max_total * sizeof(float));
    if (!send || !recv) {
        fprintf(stderr, "shardsim-capture: rank %d: cannot allocate 2 x %zu bytes\n", rank, max_total * sizeof(float));
        MPI_Abort(MPI_COMM_WORLD, 1);
    }

    FILE *out = stdout;
    if (rank == 0 && o.output) {
        out = fopen(o.output, "w");
        if (!out) {
            fprintf(stderr, "shardsim-capture: %s: %s\n", o.output, strerror(errno));
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    if (rank == 0) {
        char lib[MPI_MAX_LIBRARY_VERSION_STRING] = { 0 };
        int ll = 0;
        MPI_Get_library_version(lib, &ll);
        one_line(lib);
        int major = 0, minor = 0;
        MPI_Get_version(&major, &minor);
        time_t now = time(NULL);
        struct tm tm;
        char date[64];
        gmtime_r(&now, &tm);
        strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &tm);
        int nhosts = 0;
        for (int r = 0; r < nranks; r++) {
            const char *h = strchr(all + (size_t)r * sizeof mine, ' ') + 1;
            size_t len = strcspn(h, "|");
            int seen = 0;
            for (int q = 0; q < r && !seen; q++) {
                const char *g = strchr(all + (size_t)q * sizeof mine, ' ') + 1;
                seen = strcspn(g, "|") == len && strncmp(g, h, len) == 0;
            }
            nhosts += !seen;
        }
        fprintf(out, "# source: shardsim-capture %s, a measurement made on this machine (MPI_Wtime around MPI "
                     "collectives)\n",
                CAPTURE_VERSION);
        fprintf(out, "# hostname: %s\n", host);
        fprintf(out, "# ranks: %d\n", nranks);
        fprintf(out, "# hosts: %d\n", nhosts);
        fprintf(out, "# mpi: %s (MPI %d.%d)\n", lib, major, minor);
        fprintf(out, "# date: %s\n", date);
        fprintf(out, "# op: %s\n", OPS[o.op].name);
        fprintf(out, "# command: shardsim-capture --op %s -b %zu -e %zu -f %d -w %d -n %d -c %d (mirrors %s)\n",
                OPS[o.op].alias, o.min_bytes, o.max_bytes, o.factor, o.warmup, o.iters, o.check, OPS[o.op].binary);
        fprintf(out, "# notes: float32%s in host memory; time = mean per call over %d timed calls after %d "
                     "warm-up calls, averaged over ranks; in-place uses MPI_IN_PLACE\n",
                o.op == OP_ALLREDUCE || o.op == OP_REDUCESCATTER ? " sum" : "", o.iters, o.warmup);
        fprintf(out, "# nThread 1 nGpus 1 minBytes %zu maxBytes %zu step: %d(factor) warmup iters: %d iters: %d "
                     "agg iters: 1 validation: %d graph: 0\n",
                o.min_bytes, o.max_bytes, o.factor, o.warmup, o.iters, o.check);
        fprintf(out, "#\n# Using devices\n");
        for (int r = 0; r < nranks; r++) {
            const char *e = all + (size_t)r * sizeof mine;
            int pid = atoi(e);
            const char *h = strchr(e, ' ') + 1;
            int len = (int)strcspn(h, "|");
            fprintf(out, "#  Rank %2d Group  0 Pid %6d on %.*s device %2d [cpu] %s\n", r, pid, len, h, r,
                    h + len + 1);
        }
        fprintf(out, "#\n");
        fprintf(out, "#                                                              out-of-place                "
                     "          in-place\n");
        fprintf(out, "#       size         count      type   redop    root       time   algbw   busbw #wrong    "
                     "   time   algbw   busbw #wrong\n");
        fprintf(out, "#        (B)    (elements)                                 (us)  (GB/s)  (GB/s)           "
                     "   (us)  (GB/s)  (GB/s)\n");
        fflush(out);
    }
    free(all);

    long wrong_total = 0;
    double busbw_sum = 0;
    int nrows = 0;
    for (size_t bytes = o.min_bytes; bytes <= o.max_bytes;) {
        size_t total = total_count(&o, bytes);
        if (total > 0 && total <= (size_t)0x7fffffff) {
            double sec[2];
            long wrong[2];
            for (int ip = 0; ip < 2; ip++)
                measure(&o, send, recv, total, ip, &sec[ip], &wrong[ip]);
            size_t size = total * sizeof(float);
            if (rank == 0) {
                fprintf(out, "%12zu  %12zu  %8s  %6s  %6d", size, shown_count(&o, total), "float",
                        o.op == OP_ALLREDUCE || o.op == OP_REDUCESCATTER ? "sum" : "none",
                        o.op == OP_BCAST ? 0 : -1);
                for (int ip = 0; ip < 2; ip++) {
                    double us = sec[ip] * 1e6, algbw = (double)size / sec[ip] / 1e9;
                    fprintf(out, "  %9.3f  %6.2f  %6.2f  %5ld", us, algbw, algbw * bus_factor(o.op), wrong[ip]);
                }
                fprintf(out, "\n");
                fflush(out);
                busbw_sum += (double)size / sec[0] / 1e9 * bus_factor(o.op);
            }
            wrong_total += wrong[0] + wrong[1];
            nrows++;
        }
        if (bytes > o.max_bytes / (size_t)o.factor)
            break;
        bytes *= (size_t)o.factor;
    }
    if (rank == 0) {
        fprintf(out, "# Out of bounds values : %ld %s\n", wrong_total, wrong_total ? "FAILED" : "OK");
        fprintf(out, "# Avg bus bandwidth    : %g\n#\n", nrows ? busbw_sum / nrows : 0.0);
        if (out != stdout && fclose(out) != 0) {
            fprintf(stderr, "shardsim-capture: %s: %s\n", o.output, strerror(errno));
            wrong_total = wrong_total ? wrong_total : -1;
        }
    }
    MPI_Bcast(&wrong_total, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    free(send);
    free(recv);
    MPI_Finalize();
    return wrong_total ? 1 : 0;
}
