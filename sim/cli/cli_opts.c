/* Option checks shared by the sub-commands: whole-number options that must be
 * given as positive numbers (0 is never a silent "default"), and output files
 * that must be writable and must not overwrite an input or each other. */
#define _XOPEN_SOURCE 700 /* realpath */
#include "cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int cli_parse_count(const char *cmd, const char *opt, const char *text, int lo, int hi, int *out)
{
    char *end = NULL;
    errno = 0;
    /* digits only, as the other number options read them: strtoll would take ' 8' and '+8' but not '8 ' (review 9) */
    bool digits = text && (g_ascii_isdigit(text[0]) || (text[0] == '-' && g_ascii_isdigit(text[1])));
    long long v = digits ? strtoll(text, &end, 10) : 0;
    bool ok = digits && end && !*end && errno == 0 && v >= lo && v <= hi;
    if (!ok)
        return cli_usage_error("%s: %s must be a whole number between %d and %d, not '%s'", cmd, opt, lo, hi,
                               SIM_ECHO(text ? text : ""));
    *out = (int)v;
    return 0;
}

/* What a path names: the file itself when it exists (so that links and
 * "./x" match), else its resolved folder and name. */
typedef struct {
    bool exists, regular, dir;
    dev_t dev;
    ino_t ino;
    char *canon;
} FileId;

static FileId file_id(const char *path)
{
    FileId id = {0};
    struct stat st;
    if (stat(path, &st) == 0) {
        id.exists = true;
        id.regular = S_ISREG(st.st_mode);
        id.dir = S_ISDIR(st.st_mode);
        id.dev = st.st_dev;
        id.ino = st.st_ino;
    }
    char *real = realpath(path, NULL);
    if (real) {
        id.canon = g_strdup(real);
        free(real);
        return id;
    }
    char *dir = g_path_get_dirname(path), *base = g_path_get_basename(path);
    char *rdir = realpath(dir, NULL);
    id.canon = rdir ? g_build_filename(rdir, base, NULL) : g_canonicalize_filename(path, NULL);
    free(rdir);
    g_free(dir);
    g_free(base);
    return id;
}

/* An output that cannot be written at all (a folder, or in a folder that is
 * not there): refused before any work, not after a long search, with the
 * status of an output that cannot be written (1). */
static int check_writable(const char *cmd, const char *opt, const char *path, const FileId *id)
{
    if (id->dir) {
        fprintf(stderr, "shardsim: %s: %s %s is a folder, not a file\n", cmd, opt, SIM_ECHO(path));
        return 1;
    }
    if (id->exists)
        return 0;
    char *dir = g_path_get_dirname(path);
    struct stat st;
    int rc = 0;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        fprintf(stderr, "shardsim: %s: %s %s: there is no folder %s to write it in\n", cmd, opt, SIM_ECHO(path),
                SIM_ECHO(dir));
        rc = 1;
    }
    g_free(dir);
    return rc;
}

static bool same_file(const FileId *a, const FileId *b)
{
    if (a->exists && b->exists)
        return a->dev == b->dev && a->ino == b->ino;
    return strcmp(a->canon, b->canon) == 0;
}

int cli_check_outputs(const char *cmd, const char *const *inputs, int nin, const char *const *outs,
                      const char *const *out_opts, int nout)
{
    FileId *in = g_new0(FileId, nin > 0 ? nin : 1), *out = g_new0(FileId, nout > 0 ? nout : 1);
    for (int i = 0; i < nin; i++)
        if (inputs[i])
            in[i] = file_id(inputs[i]);
    for (int i = 0; i < nout; i++)
        if (outs[i])
            out[i] = file_id(outs[i]);
    int rc = 0;
    for (int o = 0; o < nout && !rc; o++) {
        /* a device (/dev/null) may take any number of outputs */
        if (!outs[o] || (rc = check_writable(cmd, out_opts[o], outs[o], &out[o])) != 0 ||
            (out[o].exists && !out[o].regular))
            continue;
        for (int i = 0; i < nin && !rc; i++)
            if (inputs[i] && same_file(&out[o], &in[i]))
                rc = cli_usage_error("%s: %s %s is the input file %s: it would be overwritten", cmd, out_opts[o],
                                     SIM_ECHO(outs[o]), SIM_ECHO(inputs[i]));
        for (int p = 0; p < o && !rc; p++)
            if (outs[p] && same_file(&out[o], &out[p]))
                rc = cli_usage_error("%s: %s and %s name the same file %s: one would overwrite the other", cmd,
                                     out_opts[p], out_opts[o], SIM_ECHO(outs[o]));
    }
    for (int i = 0; i < nin; i++)
        g_free(in[i].canon);
    for (int i = 0; i < nout; i++)
        g_free(out[i].canon);
    g_free(in);
    g_free(out);
    return rc;
}

SimDist *cli_dist_start(gboolean use_mpi, GError **err)
{
    SimDist *d = sim_dist_new(use_mpi, err);
    if (d && !sim_dist_is_root(d)) {
        fflush(stdout);
        fflush(stderr);
        if (!freopen("/dev/null", "w", stdout) || !freopen("/dev/null", "w", stderr)) {
            g_set_error(err, SIM_ERROR, SIM_ERROR_INTERNAL, "--mpi: cannot silence rank %d", sim_dist_rank(d));
            sim_dist_free(d);
            return NULL;
        }
    }
    return d;
}
