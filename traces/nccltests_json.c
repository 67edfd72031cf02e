/* nccl-tests' JSON report (-J FILE, nccl-tests 2.17 and later, written by
 * its src/util.cu): the same run as its printed table, read into the same
 * runs as the text (nccltests.h).  "nccl_version" is the library's version
 * code, "args" the command (its binary names the collective, as "Collective
 * test starting:" does), "config" the parameter line (nthreads, ngpus) and
 * its "devices" the Rank lines; each of "results" is a table row, its
 * "out_of_place" and "in_place" the two halves (time, alg_bw, bus_bw,
 * nwrong; "cpu_time" under -C), checked by the table's own row reader
 * (nccltests_row.c), a change of datatype starting the next run as in the
 * text.  nccl-tests writes the report on one line, so a row's messages name
 * its size as well as its line. */
#include "nccltests_row.h"
#include "sim_json.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

bool nccltests_json_is(const char *text)
{
    const unsigned char *p = (const unsigned char *)text;
    if (p[0] == 0xEF && p[1] == 0xBB && p[2] == 0xBF) /* a UTF-8 byte order mark */
        p += 3;
    while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
        p++;
    return *p == '{';
}

/* `v` as a field of a printed row: a number in full, a string as printed
 * past its leading blanks (the root is "%6i"; NaN is written "nan"), null as
 * "N/A" (no #wrong under -c 0); false for anything else. */
static bool put_field(GString *row, const cJSON *v)
{
    if (cJSON_IsNumber(v)) { /* as few digits as give it back: the row's checks allow for what is printed */
        char buf[40];
        double x = v->valuedouble;
        if (fabs(x) < 9007199254740992.0 && x == (double)(int64_t)x) { /* whole: digits, as a size is printed */
            g_string_append_printf(row, " %" PRId64, (int64_t)x);
            return true;
        }
        for (int p = 1; p <= 17; p++) {
            g_snprintf(buf, sizeof buf, "%.*g", p, v->valuedouble);
            if (g_ascii_strtod(buf, NULL) == v->valuedouble)
                break;
        }
        g_string_append_printf(row, " %s", buf);
        return true;
    }
    if (cJSON_IsNull(v)) {
        g_string_append(row, " N/A");
        return true;
    }
    if (!cJSON_IsString(v))
        return false;
    const char *s = v->valuestring + strspn(v->valuestring, " ");
    if (!*s || strpbrk(s, " \t\r\n"))
        return false;
    g_string_append_printf(row, " %s", s);
    return true;
}

/* One half of a result ("out_of_place" or "in_place"): time, alg_bw,
 * bus_bw, nwrong. */
static bool put_half(GString *row, const cJSON *half, const char *time_key)
{
    static const char *const keys[] = {"alg_bw", "bus_bw", "nwrong"};
    if (!put_field(row, cJSON_GetObjectItemCaseSensitive(half, time_key)))
        return false;
    for (size_t i = 0; i < G_N_ELEMENTS(keys); i++)
        if (!put_field(row, cJSON_GetObjectItemCaseSensitive(half, keys[i])))
            return false;
    return true;
}

/* Result `r` as the row nccl-tests printed for it (size count type redop
 * root, then out-of-place and in-place); NULL with `err` set where it lacks
 * a field.  A report of in-place results only (trace replay) gives them to
 * both halves. */
static char *row_text(const SimJsonDoc *d, const cJSON *r, size_t k, const char *time_key, GError **err)
{
    static const char *const keys[] = {"size", "count", "type", "redop", "root"};
    const cJSON *oop = cJSON_GetObjectItemCaseSensitive(r, "out_of_place");
    const cJSON *ip = cJSON_GetObjectItemCaseSensitive(r, "in_place");
    if (!cJSON_IsObject(oop))
        oop = ip;
    if (!cJSON_IsObject(ip))
        ip = oop;
    GString *row = g_string_new(NULL);
    bool ok = cJSON_IsObject(r) && cJSON_IsObject(oop);
    for (size_t i = 0; ok && i < G_N_ELEMENTS(keys); i++)
        ok = put_field(row, cJSON_GetObjectItemCaseSensitive(r, keys[i]));
    ok = ok && put_half(row, oop, time_key) && put_half(row, ip, time_key);
    if (!ok) {
        sim_json_error(d, r, err,
                       "result %zu: not a row of nccl-tests' report (size, count, type, redop, root and "
                       "out_of_place or in_place with %s, alg_bw, bus_bw, nwrong)", k + 1, time_key);
        g_string_free(row, TRUE);
        return NULL;
    }
    return g_string_free(row, FALSE);
}

/* "config": nthreads and ngpus (1 to 1024, as the text's parameter line),
 * its devices as Rank lines. */
static bool read_config(const SimJsonDoc *d, const cJSON *cfg, NcclTrace *tr, GError **err)
{
    if (!cfg)
        return true;
    long nthreads = 1, ngpus = 1;
    if (!cJSON_IsObject(cfg)) {
        sim_json_error(d, cfg, err, "\"config\" must be an object");
        return false;
    }
    if (!sim_json_get_int(d, cfg, "nthreads", false, 1, 1024, &nthreads, err) ||
        !sim_json_get_int(d, cfg, "ngpus", false, 1, 1024, &ngpus, err))
        return false;
    tr->nthread = (int)nthreads;
    tr->ngpus = (int)ngpus;
    const cJSON *devs = cJSON_GetObjectItemCaseSensitive(cfg, "devices"), *dev;
    if (devs && !cJSON_IsArray(devs)) {
        sim_json_error(d, devs, err, "\"devices\" must be a list");
        return false;
    }
    cJSON_ArrayForEach(dev, devs) {
        long rank, group = 0, pid = 0, device = 0;
        const char *host, *hex = "?", *info = "";
        if (!cJSON_IsObject(dev)) {
            sim_json_error(d, dev, err, "a device must be an object");
            return false;
        }
        if (!sim_json_get_int(d, dev, "rank", true, 0, 1 << 24, &rank, err) ||
            !sim_json_get_int(d, dev, "group", false, -1, 1 << 24, &group, err) ||
            !sim_json_get_int(d, dev, "pid", false, 0, G_MAXINT32, &pid, err) ||
            !sim_json_get_int(d, dev, "device", false, 0, 1 << 16, &device, err) ||
            !sim_json_get_string(d, dev, "hostname", true, &host, err) ||
            !sim_json_get_string(d, dev, "device_hex", false, &hex, err) ||
            !sim_json_get_string(d, dev, "device_info", false, &info, err))
            return false;
        if (!*host || strpbrk(host, " \t\r\n")) {
            sim_json_error(d, dev, err, "device of rank %ld: host name \"%s\" is not one word", rank, host);
            return false;
        }
        char *line = g_strdup_printf("Rank %ld Group %ld Pid %ld on %s device %ld [%s] %s", rank, group, pid, host,
                                     device, hex, info);
        nccltests_note_rank(tr, line);
        g_free(line);
    }
    return true;
}

/* The version code and the binary of the command line. */
static bool read_job(const SimJsonDoc *d, const cJSON *root, NcclTrace *tr, GError **err)
{
    long code = 0;
    if (!sim_json_get_int(d, root, "nccl_version", false, 1, 999999, &code, err))
        return false;
    if (code > 0)
        tr->nccl_version = nccltests_version_from_code(code);
    const cJSON *env = cJSON_GetObjectItemCaseSensitive(root, "env"), *e;
    env = cJSON_IsArray(env) ? env : NULL;
    cJSON_ArrayForEach(e, env) /* "NCCL_ALGO=Ring" */
        if (cJSON_IsString(e) && (g_str_has_prefix(e->valuestring, "NCCL_ALGO=") ||
                                  g_str_has_prefix(e->valuestring, "NCCL_PROTO=")))
            nccltests_env_note(tr, e->valuestring);
    const cJSON *args = cJSON_GetObjectItemCaseSensitive(root, "args");
    const cJSON *bin = cJSON_IsArray(args) ? cJSON_GetArrayItem(args, 0) : NULL;
    if (cJSON_IsString(bin) && (tr->op_stated = nccltests_op_mentioned(bin->valuestring)) != NCCLTESTS_UNKNOWN)
        tr->op_stated_line = sim_json_line(d, bin);
    return true;
}

/* The rows of "results", each checked as the text's; the next datatype's
 * table forks the next run of the same job. */
static bool read_results(const SimJsonDoc *d, const cJSON *res, GPtrArray *runs, NcclTrace **cur, GError **err)
{
    const cJSON *r0 = cJSON_GetArrayItem(res, 0);
    const cJSON *h0 = r0 ? cJSON_GetObjectItemCaseSensitive(r0, "out_of_place") : NULL;
    if (!cJSON_IsObject(h0) && r0)
        h0 = cJSON_GetObjectItemCaseSensitive(r0, "in_place");
    const char *time_key = h0 && cJSON_GetObjectItemCaseSensitive(h0, "cpu_time") ? "cpu_time" : "time";
    const char *word = strcmp(time_key, "time") ? "cputime" : "time"; /* the printed column */
    char *header = g_strdup_printf("size count type redop root %s algbw busbw #wrong %s algbw busbw #wrong", word,
                                   word);
    TraceTok toks[TRACE_MAX_TOKS];
    NcclLayout L;
    int n = trace_tokenize(header, toks);
    bool ok = nccltests_layout_from_header(toks, n, &L);
    size_t k = 0;
    for (const cJSON *r = res->child; ok && r; r = r->next, k++) {
        if (k >= TRACE_MAX_ROWS) {
            sim_json_error(d, r, err, "more than %d results in one report: split it", TRACE_MAX_ROWS);
            ok = false;
            break;
        }
        char *row = row_text(d, r, k, time_key, err);
        int line = sim_json_line(d, r);
        ok = row != NULL;
        int got = 0;
        if (ok) {
            n = trace_tokenize(row, toks);
            got = nccltests_parse_row(*cur, &L, toks, n, line, err);
        }
        if (got == 2) { /* the next datatype's table: a run of the same job */
            g_ptr_array_add(runs, *cur);
            *cur = nccltests_run_fork(*cur, line);
            got = nccltests_parse_row(*cur, &L, toks, n, line, err);
        }
        ok = ok && got == 1;
        g_free(row);
    }
    g_free(header);
    return ok;
}

NcclRuns *nccltests_json_parse_runs(const char *name, const char *text, GError **err)
{
    name = name ? name : "(text)";
    SimJsonDoc *d = sim_json_parse(name, text, strlen(text), err);
    if (!d)
        return NULL;
    const cJSON *root = sim_json_root(d);
    const cJSON *res = cJSON_GetObjectItemCaseSensitive(root, "results");
    GPtrArray *runs = g_ptr_array_new_with_free_func((GDestroyNotify)nccltests_free);
    NcclTrace *cur = nccltests_run_new(name, sim_json_line(d, res ? res : root));
    bool ok = true;
    if (!cJSON_IsArray(res) || cJSON_GetArraySize(res) == 0) {
        sim_json_error(d, res ? res : root, err, "not an nccl-tests JSON report (-J): no \"results\" list of rows");
        ok = false;
    }
    ok = ok && read_job(d, root, cur, err) && read_config(d, cJSON_GetObjectItemCaseSensitive(root, "config"), cur, err) &&
         read_results(d, res, runs, &cur, err);
    if (ok && cur->rows->len > 0)
        g_ptr_array_add(runs, cur);
    else
        nccltests_free(cur);
    if (ok && runs->len == 0) {
        sim_json_error(d, res, err, "no results of more than 0 bytes");
        ok = false;
    }
    GPtrArray *hkeys = g_ptr_array_new_with_free_func(g_free), *hvals = g_ptr_array_new_with_free_func(g_free);
    FileOps F = {0};
    ok = ok && nccltests_finish_runs(runs, name, &F, hkeys, hvals, err);
    g_ptr_array_free(hkeys, TRUE);
    g_ptr_array_free(hvals, TRUE);
    sim_json_free(d);
    if (!ok) {
        g_ptr_array_free(runs, TRUE);
        return NULL;
    }
    NcclRuns *r = g_new0(NcclRuns, 1);
    r->runs = runs;
    return r;
}
