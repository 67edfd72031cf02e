/* Running a sweep: one point's scenario run into its row (an error instead of
 * a result when it fails), and every point on a thread pool, the rows kept in
 * point order. */
#include "sweep_grid.h"
#include "step.h"

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

typedef struct {
    const Sweep *s;
    cJSON **rows;
} RunState;

static void run_one(int i, void *user)
{
    RunState *st = user;
    st->rows[i] = sweep_run_point(st->s, i);
}

cJSON *sweep_run(const Sweep *s, int jobs, SweepProgress progress, void *user)
{
    g_return_val_if_fail(s->prepared, NULL);
    int n = s->npoints;
    RunState st = {.s = s, .rows = g_new0(cJSON *, n)};
    sweep_map(n, jobs, run_one, &st, progress, user);

    cJSON *out = cJSON_CreateObject();
    cJSON_AddStringToObject(out, "scenario", s->name);
    cJSON *vary = cJSON_AddObjectToObject(out, "vary");
    for (int a = 0; a < (int)s->axes->len; a++)
        cJSON_AddItemToObject(vary, sweep_axis_key(s, a), cJSON_Duplicate(sweep_axis_values(s, a), true));
    cJSON_AddItemToObject(out, "notes", cJSON_Duplicate(s->notes, true));
    int ran = 0;
    cJSON *pts = cJSON_AddArrayToObject(out, "points");
    for (int i = 0; i < n; i++) {
        ran += cJSON_GetObjectItemCaseSensitive(st.rows[i], "result") != NULL;
        cJSON_AddItemToArray(pts, st.rows[i]);
    }
    g_free(st.rows);
    cJSON_AddNumberToObject(out, "ran", ran);
    cJSON_AddNumberToObject(out, "failed", n - ran);
    return out;
}

