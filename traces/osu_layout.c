/* What an OSU trace's provenance headers say about the job: its layout
 * (ranks, nodes, ranks per node from launcher commands and phrases) and
 * the MPI library that ran, from the headers or the file name (osu.h).
 * Only the reader's public accessors: the headers as read. */
#include "osu.h"

#include <ctype.h>
#include <string.h>

/* One stated count: the first value and whether another one disagreed. */
typedef struct {
    int v;
    bool clash;
    int other;
} LayoutSaid;

static void say(LayoutSaid *s, long v)
{
    if (v <= 0 || v > (1 << 24))
        return;
    if (s->v == 0)
        s->v = (int)v;
    else if (s->v != (int)v && !s->clash) {
        s->clash = true;
        s->other = (int)v;
    }
}

/* A word without the punctuation around it. */
static char *bare(const char *w)
{
    char *s = g_strdup(w);
    size_t n = strlen(s);
    while (n > 0 && strchr(",;:()[]\"'.", s[n - 1]))
        s[--n] = '\0';
    size_t i = 0;
    while (s[i] && strchr(",;:()[]\"'", s[i]))
        i++;
    memmove(s, s + i, strlen(s + i) + 1);
    return s;
}

static long whole(const char *s)
{
    if (!s || !*s)
        return -1;
    for (const char *p = s; *p; p++)
        if (!isdigit((unsigned char)*p))
            return -1;
    return strtol(s, NULL, 10);
}

static bool word_is(char **w, int n, int i, const char *a)
{
    return i < n && g_ascii_strcasecmp(w[i], a) == 0;
}

/* Options of a launcher command starting at w[i]. */
/* One launcher option `o` with its value `val`. */
static void option(const char *o, const char *val, bool srun, LayoutSaid *ranks, LayoutSaid *nodes, LayoutSaid *ppn)
{
    long v = whole(val);
    if (!strcmp(o, "-n") || !strcmp(o, "-np") || !strcmp(o, "--np") || !strcmp(o, "--ntasks"))
        say(ranks, v);
    else if (!strcmp(o, "-N") || !strcmp(o, "--nodes"))
        say(srun ? nodes : ppn, v); /* Open MPI's -N is ranks per node; srun's is nodes */
    else if (!strcmp(o, "-npernode") || !strcmp(o, "--npernode") || !strcmp(o, "-ppn") || !strcmp(o, "--ppn") ||
             !strcmp(o, "--ntasks-per-node"))
        say(ppn, v);
    else if ((!strcmp(o, "--map-by") || !strcmp(o, "-map-by")) && g_str_has_prefix(val, "ppr:")) {
        char **f = g_strsplit(val + 4, ":", 3);
        if (f[0] && f[1] && g_ascii_strncasecmp(f[1], "node", 4) == 0)
            say(ppn, whole(f[0]));
        g_strfreev(f);
    }
}

/* Options of a launcher command starting at w[i]: "-n 8", "--ntasks=8",
 * "-N2" alike. */
static void launcher(char **w, int n, int i, LayoutSaid *ranks, LayoutSaid *nodes, LayoutSaid *ppn)
{
    bool srun = g_ascii_strcasecmp(w[i], "srun") == 0;
    for (int k = i + 1; k < n; k++) {
        const char *o = w[k], *eq = strchr(o, '=');
        if (o[0] != '-')
            continue;
        if (eq) {
            char *key = g_strndup(o, (gsize)(eq - o));
            option(key, eq + 1, srun, ranks, nodes, ppn);
            g_free(key);
        } else if (o[1] && o[1] != '-' && g_ascii_isdigit(o[2])) { /* "-N2", "-n8" */
            char key[3] = {o[0], o[1], 0};
            option(key, o + 2, srun, ranks, nodes, ppn);
        } else if (k + 1 < n) {
            option(o, w[k + 1], srun, ranks, nodes, ppn);
        }
    }
}

/* Phrases: "4 nodes", "36 MPI ranks per node", "144 ranks", "36 processes". */
static void phrases(char **w, int n, LayoutSaid *ranks, LayoutSaid *nodes, LayoutSaid *ppn)
{
    for (int i = 0; i + 1 < n; i++) {
        long v = whole(w[i]);
        if (v <= 0)
            continue;
        int j = i + 1;
        if (word_is(w, n, j, "node") || word_is(w, n, j, "nodes")) {
            say(nodes, v);
            continue;
        }
        if (word_is(w, n, j, "MPI"))
            j++;
        if (word_is(w, n, j, "rank") || word_is(w, n, j, "ranks") || word_is(w, n, j, "processes") ||
            word_is(w, n, j, "procs") || word_is(w, n, j, "process")) {
            if (word_is(w, n, j + 1, "per") && word_is(w, n, j + 2, "node"))
                say(ppn, v);
            else
                say(ranks, v);
        }
    }
}

/* The words of `text` without their surrounding punctuation. */
static GPtrArray *words_of(const char *text)
{
    char **raw = g_strsplit_set(text, " \t", -1);
    GPtrArray *ws = g_ptr_array_new_with_free_func(g_free);
    for (char **p = raw; *p; p++)
        if (**p) {
            char *b = bare(*p);
            if (*b)
                g_ptr_array_add(ws, b);
            else
                g_free(b);
        }
    g_strfreev(raw);
    return ws;
}

/* What `text` says: its phrases (headers only) and its launcher commands. */
static void read_layout(const char *text, bool phrase, LayoutSaid *ranks, LayoutSaid *nodes, LayoutSaid *ppn)
{
    GPtrArray *ws = words_of(text);
    char **w = (char **)ws->pdata;
    int n = (int)ws->len;
    if (phrase)
        phrases(w, n, ranks, nodes, ppn);
    for (int i = 0; i < n; i++)
        if (!g_ascii_strcasecmp(w[i], "mpirun") || !g_ascii_strcasecmp(w[i], "mpiexec") ||
            !g_ascii_strcasecmp(w[i], "srun"))
            launcher(w, n, i, ranks, nodes, ppn);
    g_ptr_array_free(ws, TRUE);
}

/* A missing count from the other two; false where the three disagree. */
static bool complete(int *r, int *nn, int *q)
{
    if (!*r && *nn && *q)
        *r = *nn * *q;
    if (!*nn && *r && *q && *r % *q == 0)
        *nn = *r / *q;
    if (!*q && *r && *nn && *r % *nn == 0)
        *q = *r / *nn;
    return !(*r && *nn && *q && *r != *nn * *q);
}

bool osu_layout(const OsuTrace *t, int *ranks_out, int *nodes_out, int *ppn_out, GError **err)
{
    LayoutSaid ranks = {0}, nodes = {0}, ppn = {0};
    for (size_t h = 0; h < osu_n_headers(t); h++)
        if (!g_str_has_prefix(osu_header_key(t, h), "source")) /* addresses and titles, not the job */
            read_layout(osu_header_value(t, h), true, &ranks, &nodes, &ppn);
    const LayoutSaid *s[] = {&ranks, &nodes, &ppn};
    static const char *what[] = {"ranks", "nodes", "ranks per node"};
    for (int k = 0; k < 3; k++)
        if (s[k]->clash) {
            g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "%s: the headers say both %d and %d %s", osu_name(t), s[k]->v,
                        s[k]->other, what[k]);
            return false;
        }
    int r = ranks.v, nn = nodes.v, q = ppn.v;
    if (!complete(&r, &nn, &q)) {
        g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "%s: the headers say %d ranks, %d nodes and %d ranks per node",
                    osu_name(t), r, nn, q);
        return false;
    }
    /* the output's own launcher lines fill what the headers leave unsaid,
     * where they agree with each other and with what the headers say */
    LayoutSaid cr = {0}, cn = {0}, cq = {0};
    for (size_t i = 0; i < osu_n_commands(t); i++)
        read_layout(osu_command(t, i), false, &cr, &cn, &cq);
    int r2 = r ? r : cr.clash ? 0 : cr.v, n2 = nn ? nn : cn.clash ? 0 : cn.v, q2 = q ? q : cq.clash ? 0 : cq.v;
    if (complete(&r2, &n2, &q2))
        r = r2, nn = n2, q = q2;
    *ranks_out = r;
    *nodes_out = nn;
    *ppn_out = q;
    return true;
}

/* models/mpi_model.h's names, kept here so that the reader needs no model. */
static int library_in(const char *s, char **version)
{
    static const struct {
        const char *word;
        int lib;
        const char *derived; /* a library built on MPICH, named in the version */
    } words[] = {{"open mpi", 0, NULL},   {"openmpi", 0, NULL},         {"open-mpi", 0, NULL},
                 {"mvapich", 1, "MVAPICH"}, {"intel mpi", 1, "Intel MPI"}, {"intel(r) mpi", 1, "Intel MPI"},
                 {"cray-mpich", 2, NULL},   {"cray mpich", 2, NULL},       {"mpich", 1, NULL}};
    char *low = g_ascii_strdown(s, -1);
    int found = -1;
    const char *at = NULL;
    const char *derived = NULL;
    for (size_t i = 0; i < G_N_ELEMENTS(words) && found < 0; i++)
        if ((at = strstr(low, words[i].word)) != NULL) {
            found = words[i].lib;
            derived = words[i].derived;
        }
    if (found >= 0 && version) {
        const char *p = at;
        while (*p && !isdigit((unsigned char)*p))
            p++;
        const char *q = p;
        while (isdigit((unsigned char)*q) || (*q == '.' && isdigit((unsigned char)q[1])))
            q++;
        *version = q > p ? g_strndup(p, (gsize)(q - p)) : NULL;
        if (derived) { /* "Intel MPI 2021.9": whose selection is approximated by MPICH's */
            char *v = *version ? g_strdup_printf("%s %s", derived, *version) : g_strdup(derived);
            g_free(*version);
            *version = v;
        }
    }
    g_free(low);
    return found;
}

int osu_mpi_library(const OsuTrace *t, char **version)
{
    if (version)
        *version = NULL;
    const char *pref[] = {"mpi", "library"};
    for (size_t k = 0; k < G_N_ELEMENTS(pref); k++) {
        const char *v = osu_header(t, pref[k]);
        int lib = v ? library_in(v, version) : -1;
        if (lib >= 0)
            return lib;
    }
    for (size_t h = 0; h < osu_n_headers(t); h++) {
        if (g_str_has_prefix(osu_header_key(t, h), "source"))
            continue;
        int lib = library_in(osu_header_value(t, h), version);
        if (lib >= 0)
            return lib;
    }
    return -1;
}

int osu_mpi_library_in_name(const char *path)
{
    char *base = g_path_get_basename(path);
    char **w = g_strsplit_set(base, "_-.+", -1);
    int lib = -1;
    for (char **p = w; *p && lib < 0; p++) {
        if (!g_ascii_strcasecmp(*p, "openmpi") || !g_ascii_strcasecmp(*p, "ompi"))
            lib = 0;
        else if ((!g_ascii_strcasecmp(*p, "cray") && p[1] && !g_ascii_strcasecmp(p[1], "mpich")) ||
                 !g_ascii_strcasecmp(*p, "craympich"))
            lib = 2; /* "cray-mpich": HPE Cray MPICH */
        else if (!g_ascii_strncasecmp(*p, "mpich", 5) || !g_ascii_strncasecmp(*p, "mvapich", 7) ||
                 !g_ascii_strcasecmp(*p, "intelmpi") || !g_ascii_strcasecmp(*p, "impi"))
            lib = 1;
    }
    g_strfreev(w);
    g_free(base);
    return lib;
}
