/* Running a sweep: one point's scenario run into its row (an error instead of
 * a result when it fails), and every point on a thread pool, the rows kept in
 * point order. */
#include "sweep_grid.h"
#include "step.h"

#include <math.h>
#include <string.h>

/* "NAME:LINE: msg" or "NAME: msg" -> "msg": the generated text's lines mean
 * nothing to the user, the point's values say where the error is. */
static const char *strip_name(const char *msg, const char *name)
{
    size_t n = strlen(name);
    if (strncmp(msg, name, n) || msg[n] != ':')
        return msg;
    const char *p = msg + n + 1;
    while (g_ascii_isdigit(*p))
        p++;
    if (*p == ':')
        p++;
    while (*p == ' ')
        p++;
    return p;
}

cJSON *sweep_run_point(const Sweep *s, int point)
{
    cJSON *row = cJSON_CreateObject();
    cJSON_AddNumberToObject(row, "index", point);
    cJSON *vals = cJSON_AddObjectToObject(row, "values");
    for (int a = 0; a < (int)s->axes->len; a++)
        cJSON_AddItemToObject(vals, sweep_axis_key(s, a), cJSON_Duplicate(sweep_point_value(s, point, a), true));
    GError *err = NULL;
    cJSON *derived = NULL;
    cJSON *sc = sweep_point_scenario(s, point, &derived, &err);
    cJSON *res = NULL;
    char *name = g_strdup_printf("%s#%d", s->name, point);
    if (sc) {
        if (cJSON_GetArraySize(derived) > 0)
            cJSON_AddItemToObject(row, "derived", derived);
        else
            cJSON_Delete(derived);
        char *text = cJSON_Print(sc);
        cJSON_Delete(sc);
        res = step_run_text(name, text, &err);
        cJSON_free(text);
    }
    if (res) {
        /* the point ran with the dp the rule filled in: its result says so, as run's would */
        cJSON *cfg = cJSON_GetObjectItem(res, "config");
        if (cJSON_GetObjectItem(cJSON_GetObjectItem(row, "derived"), "parallelism.dp") && cfg) {
            const cJSON *cp = cJSON_GetObjectItem(cfg, "cp");
            cJSON_ReplaceItemInObject(cfg, "dp_from",
                                      cJSON_CreateString(step_dp_fill_rule(cJSON_IsNumber(cp) ? cp->valueint : 1)));
        }
        cJSON_AddItemToObject(row, "result", res);
    } else {
        /* the scenario's own "name" is the prefix of run-time errors */
        const cJSON *nm = cJSON_GetObjectItemCaseSensitive(s->base, "name");
        const char *msg = err ? strip_name(err->message, name) : "unknown error";
        if (cJSON_IsString(nm))
            msg = strip_name(msg, nm->valuestring);
        cJSON_AddStringToObject(row, "error", msg);
        g_clear_error(&err);
    }
    g_free(name);
    return row;
}

typedef struct {
    SweepMapFn fn;
    void *user;
    int done;
    GMutex lock;
    GCond cond;
} MapState;

static void map_one(gpointer data, gpointer user)
{
    MapState *st = user;
    st->fn(GPOINTER_TO_INT(data) - 1, st->user);
    g_mutex_lock(&st->lock);
    st->done++;
    g_cond_signal(&st->cond);
    g_mutex_unlock(&st->lock);
}

void sweep_map(int n, int jobs, SweepMapFn fn, void *user, SweepProgress progress, void *puser)
{
    if (jobs <= 0)
        jobs = (int)g_get_num_processors();
    if (jobs > n)
        jobs = n;
    MapState st = {.fn = fn, .user = user};
    g_mutex_init(&st.lock);
    g_cond_init(&st.cond);
    if (progress)
        progress(0, n, puser);
    if (jobs <= 1) {
        for (int i = 0; i < n; i++) {
            map_one(GINT_TO_POINTER(i + 1), &st);
            if (progress)
                progress(i + 1, n, puser);
        }
    } else {
        GThreadPool *pool = g_thread_pool_new(map_one, &st, jobs, TRUE, NULL);
        if (!pool) /* no threads: run here */
            for (int i = 0; i < n; i++)
                map_one(GINT_TO_POINTER(i + 1), &st);
        for (int i = 0; pool && i < n; i++)
            g_thread_pool_push(pool, GINT_TO_POINTER(i + 1), NULL);
        int seen = 0;
        g_mutex_lock(&st.lock);
        while (st.done < n) {
            g_cond_wait(&st.cond, &st.lock);
            if (progress && st.done != seen) {
                seen = st.done;
                g_mutex_unlock(&st.lock);
                progress(seen, n, puser);
                g_mutex_lock(&st.lock);
            }
        }
        g_mutex_unlock(&st.lock);
        if (pool)
            g_thread_pool_free(pool, FALSE, TRUE);
        if (progress && seen != n)
            progress(n, n, puser);
    }
    g_mutex_clear(&st.lock);
    g_cond_clear(&st.cond);
}

/* The nodes the points running at once may hold between them: a point's
 * memory grows with its machine (16384 DGX nodes, 131072 GPUs: 2.1 GB,
 * measured on the sweep example), so --jobs alone would let a grid of large
 * machines take --jobs times that and run out (review 9: 8 GB at -j 4).
 * About 2 GB in flight; a larger point runs alone.  The rows stay in point
 * order whatever runs when. */
#define SWEEP_NODES_IN_FLIGHT 16384.0

typedef struct {
    const Sweep *s;
    cJSON **rows; /* of points lo.. */
    int lo;
    GMutex lock;
    GCond freed;
    double nodes; /* of the points running */
} RunState;

static void run_one(int i, void *user)
{
    RunState *st = user;
    double w = fmin(sweep_point_nodes(st->s, st->lo + i), SWEEP_NODES_IN_FLIGHT);
    g_mutex_lock(&st->lock);
    while (st->nodes > 0 && st->nodes + w > SWEEP_NODES_IN_FLIGHT)
        g_cond_wait(&st->freed, &st->lock);
    st->nodes += w;
    g_mutex_unlock(&st->lock);
    st->rows[i] = sweep_run_point(st->s, st->lo + i);
    g_mutex_lock(&st->lock);
    st->nodes -= w;
    g_cond_broadcast(&st->freed);
    g_mutex_unlock(&st->lock);
}

/* Points [lo, hi) on `jobs` threads; their rows in point order. */
static cJSON **run_block(const Sweep *s, int lo, int hi, int jobs, SweepProgress progress, void *user)
{
    RunState st = {.s = s, .rows = g_new0(cJSON *, hi > lo ? hi - lo : 1), .lo = lo};
    g_mutex_init(&st.lock);
    g_cond_init(&st.freed);
    sweep_map(hi - lo, jobs, run_one, &st, progress, user);
    g_mutex_clear(&st.lock);
    g_cond_clear(&st.freed);
    return st.rows;
}

/* Every rank's rows, in point order: each row travels as its unformatted
 * JSON, which cJSON reads back to the same numbers, so the printed result is
 * the one a single process prints. */
static cJSON **gather_rows(const Sweep *s, SimDist *d, cJSON **mine, int lo, int hi, GError **err)
{
    int n = s->npoints, k = hi - lo;
    char **text = g_new0(char *, k ? k : 1);
    size_t *len = g_new0(size_t, k ? k : 1), *lens = NULL;
    for (int i = 0; i < k; i++) {
        text[i] = cJSON_PrintUnformatted(mine[i]);
        len[i] = strlen(text[i]);
        cJSON_Delete(mine[i]);
    }
    char **all = sim_dist_allgather(d, (size_t)n, text, len, TRUE, NULL, &lens, err);
    for (int i = 0; i < k; i++)
        cJSON_free(text[i]);
    g_free(text);
    g_free(len);
    if (!all)
        return NULL;
    cJSON **rows = g_new0(cJSON *, n ? n : 1);
    for (int i = 0; i < n; i++)
        rows[i] = cJSON_ParseWithLength(all[i], lens[i]);
    sim_dist_results_free(all, (size_t)n, lens);
    return rows;
}

cJSON *sweep_run(const Sweep *s, int jobs, SweepProgress progress, void *user)
{
    return sweep_run_dist(s, NULL, jobs, progress, user, NULL);
}

cJSON *sweep_run_dist(const Sweep *s, SimDist *d, int jobs, SweepProgress progress, void *user, GError **err)
{
    g_return_val_if_fail(s->prepared, NULL);
    int n = s->npoints;
    size_t lo = 0, hi = (size_t)n;
    if (d)
        sim_dist_block(d, (size_t)n, &lo, &hi);
    cJSON **rows = run_block(s, (int)lo, (int)hi, jobs, progress, user);
    if (d) {
        cJSON **all = gather_rows(s, d, rows, (int)lo, (int)hi, err);
        g_free(rows);
        if (!(rows = all))
            return NULL;
    }

    cJSON *out = cJSON_CreateObject();
    cJSON_AddStringToObject(out, "scenario", s->name);
    cJSON *vary = cJSON_AddObjectToObject(out, "vary");
    for (int a = 0; a < (int)s->axes->len; a++)
        cJSON_AddItemToObject(vary, sweep_axis_key(s, a), cJSON_Duplicate(sweep_axis_values(s, a), true));
    cJSON_AddItemToObject(out, "notes", cJSON_Duplicate(s->notes, true));
    int ran = 0;
    cJSON *pts = cJSON_AddArrayToObject(out, "points");
    for (int i = 0; i < n; i++) {
        ran += cJSON_GetObjectItemCaseSensitive(rows[i], "result") != NULL;
        cJSON_AddItemToArray(pts, rows[i]);
    }
    g_free(rows);
    cJSON_AddNumberToObject(out, "ran", ran);
    cJSON_AddNumberToObject(out, "failed", n - ran);
    return out;
}
