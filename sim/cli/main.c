/* The shardsim command: dispatch to a sub-command, and the way every command
 * ends (errors on stderr with exit 2 or 1, one JSON document on stdout). */
#include "cli.h"
#include "collective.h"

#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

static const struct {
    const char *name;
    int (*fn)(int, char **);
    const char *help;
} commands[] = {
    {"run", cmd_run, "predict one training step: time, memory, MFU"},
    {"collective", cmd_collective, "time a collective over a size range on a topology"},
    {"validate", cmd_validate, "compare predictions with measured traces (nccl-tests, OSU, ...)"},
    {"calibrate", cmd_calibrate, "fit the collective model to a cluster's own measurements"},
    {"sweep", cmd_sweep, "run a scenario over a grid of values, in parallel; CSV, JSON, plots"},
    {"plan", cmd_plan, "search the best parallel configuration: time to train, cost, energy"},
    {"version", cmd_version, "print the version"},
};

static void usage(FILE *f)
{
    fprintf(f, "Usage: shardsim COMMAND [OPTIONS...]\n\n"
               "Predicts the step time and per-device memory of distributed training.\n\nCommands:\n");
    for (size_t i = 0; i < G_N_ELEMENTS(commands); i++)
        fprintf(f, "  %-12s %s\n", commands[i].name, commands[i].help);
    fprintf(f, "\nRun 'shardsim COMMAND --help' for a command's options.\n");
}

/* glibc gives the top of its heaps back to the system once 128 KiB lie
 * free there, and maps every block from 128 KiB on afresh: a planner or a
 * sweep frees and allocates a step's buffers thousands of times, and each
 * time pays the page faults again (a third of a small plan's time).  Kept
 * up to 256 MiB, freed memory is reused instead. */
static void keep_freed_memory(void)
{
#ifdef __GLIBC__
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    mallopt(M_TRIM_THRESHOLD, 256 << 20);
#endif
}

/* Output lost on the way out (stdout on a full disk, /dev/full, a closed
 * pipe's buffer) fails the run: a result nobody received is not a success. */
static int stdout_flushed(int code)
{
    errno = 0;
    int flushed = fflush(stdout), e = errno;
    if (flushed == 0 && !ferror(stdout))
        return code;
    if (flushed != 0 && e)
        fprintf(stderr, "shardsim: cannot write the output: %s\n", g_strerror(e));
    else /* an earlier write failed; its errno is gone */
        fprintf(stderr, "shardsim: cannot write the output\n");
    return code ? code : 1;
}

int main(int argc, char **argv)
{
    keep_freed_memory();
    /* the terminal's character set, so that GOption reads an option's
     * non-ASCII text (a file name "tö.json") in a UTF-8 locale; numbers
     * stay in the C locale's format, whatever the user's */
    setlocale(LC_CTYPE, "");
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(argv[1], "--version"))
        return cmd_version(1, argv);
    for (size_t i = 0; i < G_N_ELEMENTS(commands); i++)
        if (!strcmp(argv[1], commands[i].name)) {
            /* --help's usage line names the whole command ("shardsim run"), not "run" */
            char *prg = g_strdup_printf("shardsim %s", commands[i].name);
            g_set_prgname(prg);
            g_free(prg);
            return stdout_flushed(commands[i].fn(argc - 1, argv + 1));
        }
    return cli_usage_error("unknown command '%s' (see 'shardsim --help')", argv[1]);
}

int cli_fail(GError *err)
{
    int code = err && err->domain == SIM_ERROR && err->code == SIM_ERROR_INPUT ? 2 : 1;
    fprintf(stderr, "shardsim: %s\n", err ? err->message : "unknown error");
    if (err)
        g_error_free(err);
    return code;
}

/* One stderr line: the prefix, then the formatted message. */
static void cli_vline(const char *prefix, const char *fmt, va_list ap)
{
    fputs(prefix, stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
}

int cli_usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cli_vline("shardsim: ", fmt, ap);
    va_end(ap);
    return 2;
}

void cli_warn(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cli_vline("shardsim: warning: ", fmt, ap);
    va_end(ap);
}

void cli_warn_version(const char *cmd, int lib, int code)
{
    int newest = coll_newest_version(lib);
    if (code > 0 && code / 100 > newest / 100)
        cli_warn("%s: %s %d.%d is newer than the newest the model follows, %s %d.%d: modelled as %d.%d", cmd,
                 lib == COLL_LIB_RCCL ? "RCCL" : "NCCL", code / 10000, code / 100 % 100,
                 lib == COLL_LIB_RCCL ? "RCCL" : "NCCL", newest / 10000, newest / 100 % 100, newest / 10000,
                 newest / 100 % 100);
    /* the tuner tables were read back to NCCL 2.8 (models/presets/collectives.json,
     * nccl.eras_source); an older version's choices are 2.8's guess */
    if (code > 0 && lib == COLL_LIB_NCCL && code < 20800)
        cli_warn("%s: NCCL %d.%d is older than the oldest the model follows, NCCL 2.8: modelled with 2.8's tables", cmd,
                 code / 10000, code / 100 % 100);
}

/* GOption reads a short option's value only as the next word; getopt also
 * reads it glued ("-j1", "-tdgx-a100"), so such a word is split in two here
 * where its letter is an option that takes a value.  A word that is itself
 * an option's value (after "-o" or "--csv") and words past "--" are left
 * whole.  A long option written with one dash ("-nodes") is refused by name
 * rather than read as "-n odes".  The words stay reachable until exit
 * (GOption rearranges the array it gets). */
static char **split_words, **split_argv;

/* The entry named by `word` ("-j", "--jobs", "--jobs=4"), or NULL. */
static const GOptionEntry *entry_of(const GOptionEntry *e, const char *word)
{
    for (; e && e->long_name; e++) {
        if (word[1] != '-' && word[1] == e->short_name && e->short_name)
            return e;
        size_t n = strlen(e->long_name);
        if (word[1] == '-' && !strncmp(word + 2, e->long_name, n) && (word[2 + n] == 0 || word[2 + n] == '='))
            return e;
    }
    return NULL;
}

/* The long option a one-dash word spells ("-nodes", "-nodes=4"), or NULL. */
static const GOptionEntry *one_dash_long(const GOptionEntry *e, const char *word)
{
    size_t n = strcspn(word + 1, "=");
    for (; e && e->long_name; e++)
        if (n > 1 && strlen(e->long_name) == n && !strncmp(word + 1, e->long_name, n))
            return e;
    return NULL;
}

static bool split_short_values(const GOptionEntry *entries, int *argc, char ***argv)
{
    int n = *argc, k = 0;
    bool value = false, rest = false; /* the word before wants this one as its value; past "--" */
    g_strfreev(split_words);
    g_free(split_argv);
    split_words = g_new0(char *, 2 * (size_t)n + 1);
    for (int i = 0; i < n; i++) {
        const char *a = (*argv)[i];
        bool opt = i > 0 && !rest && !value && a[0] == '-' && a[1];
        const GOptionEntry *l = opt && a[1] != '-' ? one_dash_long(entries, a) : NULL;
        if (l) {
            fprintf(stderr, "shardsim: %s: a long option takes two dashes, --%s (see --help)\n", a, l->long_name);
            return false;
        }
        const GOptionEntry *e = opt ? entry_of(entries, a) : NULL;
        bool glued = e && a[1] != '-' && a[2] && e->arg != G_OPTION_ARG_NONE;
        rest |= !value && !strcmp(a, "--");
        if (glued) {
            split_words[k++] = g_strndup(a, 2);
            split_words[k++] = g_strdup(a + 2);
        } else {
            split_words[k++] = g_strdup(a);
        }
        value = e && e->arg != G_OPTION_ARG_NONE && !glued && !strchr(a, '=');
    }
    split_argv = g_memdup2(split_words, sizeof(char *) * ((size_t)k + 1));
    *argc = k;
    *argv = split_argv;
    return true;
}

bool cli_parse_options(GOptionContext *ctx, const GOptionEntry *entries, int *argc, char ***argv)
{
    GError *err = NULL;
    if (!split_short_values(entries, argc, argv))
        return false;
    if (!g_option_context_parse(ctx, argc, argv, &err)) {
        fprintf(stderr, "shardsim: %s (see --help)\n", err->message);
        g_error_free(err);
        return false;
    }
    for (int i = 1; i < *argc; i++) /* GOption leaves the "--" that ends the options */
        if (!strcmp((*argv)[i], "--")) {
            memmove(*argv + i, *argv + i + 1, sizeof(char *) * (size_t)(*argc - i)); /* the NULL too */
            (*argc)--;
            break;
        }
    return true;
}

char *cli_fabric_note(const double *factor, size_t n, size_t stride)
{
    double lo = INFINITY, hi = 0;
    size_t slowed = 0, unknown = 0;
    for (size_t i = 0; i < n; i++) {
        double f = *(const double *)((const char *)factor + i * stride);
        unknown += isnan(f);
        if (f > 1) {
            lo = fmin(lo, f);
            hi = fmax(hi, f);
            slowed++;
        }
    }
    GString *s = g_string_new(NULL);
    if (slowed)
        g_string_append(s, "the fabric's switch-to-switch links slow the bandwidth term");
    if (slowed && hi > lo * 1.005)
        g_string_append_printf(s, " x%.2f-%.2f", lo, hi);
    else if (slowed)
        g_string_append_printf(s, " x%.2f", hi);
    if (slowed && slowed < n)
        g_string_append_printf(s, " at %zu of %zu sizes", slowed, n);
    if (unknown)
        g_string_append_printf(s, "%sthe fabric above the NICs not routed (too many flows) at %zu of %zu sizes: taken as "
                               "non-blocking", slowed ? "; " : "", unknown, n);
    return g_string_free(s, s->len == 0);
}

void cli_print_json(cJSON *obj)
{
    char *s = cJSON_Print(obj);
    if (!s)
        g_error("out of memory printing JSON");
    fputs(s, stdout);
    fputc('\n', stdout);
    cJSON_free(s);
    cJSON_Delete(obj);
}
