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
#include "sim_file.h"
#include "sim_json.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

/* What splits a printed row into fields (trace_tokenize: isspace), and the
 * longest field a report's row holds (a datatype's name, "nan"). */
static const char BLANKS[] = " \t\r\n\v\f";
enum { FIELD_MAX = 64 };

static const char *past_bom(const char *text)
{
    const unsigned char *p = (const unsigned char *)text;
    return p[0] == 0xEF && p[1] == 0xBB && p[2] == 0xBF ? text + 3 : text; /* a UTF-8 byte order mark */
}

bool nccltests_is_report(const char *text)
{
    const char *p = past_bom(text);
    p += strspn(p, BLANKS);
    return *p == '{';
}

/* `v` as a field of a printed row: a whole number in digits (as a size is
 * printed), another in as few digits as give it back (the row's checks allow
 * for what is printed), a string as printed past its leading blanks (the root
 * is "%6i"; NaN is written "nan"): one field of at most FIELD_MAX characters.
 * A count (#wrong) is a whole number from 0, or null where nccl-tests checked
 * nothing (-c 0: "N/A").  False for anything else. */
static bool put_field(GString *row, const cJSON *v, bool count)
{
    if (cJSON_IsNumber(v)) {
        double x = v->valuedouble;
        bool whole = fabs(x) < 1e18 && x == floor(x);
        if (count && !(whole && x >= 0))
            return false;
        if (whole) {
            g_string_append_printf(row, " %.0f", x);
            return true;
        }
        char buf[40];
        for (int p = 1; p <= 17; p++) {
            g_snprintf(buf, sizeof buf, "%.*g", p, x);
            if (g_ascii_strtod(buf, NULL) == x)
                break;
        }
        g_string_append_printf(row, " %s", buf);
        return true;
    }
    if (cJSON_IsNull(v) && count) {
        g_string_append(row, " N/A");
        return true;
    }
    if (!cJSON_IsString(v) || count)
        return false;
    const char *s = v->valuestring + strspn(v->valuestring, " ");
    size_t n = strlen(s);
    if (n == 0 || n > FIELD_MAX || strpbrk(s, BLANKS))
        return false;
    g_string_append_printf(row, " %s", s);
    return true;
}

/* One half of a result ("out_of_place" or "in_place"): time, alg_bw,
 * bus_bw, nwrong. */
static bool put_half(GString *row, const cJSON *half, const char *time_key)
{
    static const char *const keys[] = {"alg_bw", "bus_bw"};
    if (!put_field(row, cJSON_GetObjectItemCaseSensitive(half, time_key), false))
        return false;
    for (size_t i = 0; i < G_N_ELEMENTS(keys); i++)
        if (!put_field(row, cJSON_GetObjectItemCaseSensitive(half, keys[i]), false))
            return false;
    return put_field(row, cJSON_GetObjectItemCaseSensitive(half, "nwrong"), true);
}

/* Which halves result `r` has: 1 out-of-place, 2 in-place (null or absent:
 * none); -1 where one is neither an object nor null, or `r` no object. */
static int halves_of(const cJSON *r)
{
    if (!cJSON_IsObject(r))
        return -1;
    int mask = 0;
    static const char *const keys[] = {"out_of_place", "in_place"};
    for (int i = 0; i < 2; i++) {
        const cJSON *h = cJSON_GetObjectItemCaseSensitive(r, keys[i]);
        if (cJSON_IsObject(h))
            mask |= 1 << i;
        else if (h && !cJSON_IsNull(h))
            return -1;
    }
    return mask;
}

/* Result `r`'s out-of-place (which 1) or in-place (2) half, of its halves
 * `mask` (halves_of), the other where it has that one only; NULL if none. */
static const cJSON *half_of(const cJSON *r, int mask, int which)
{
    if (mask <= 0)
        return NULL;
    return cJSON_GetObjectItemCaseSensitive(r, (mask & which ? which : 3 - which) == 1 ? "out_of_place" : "in_place");
}

/* Result `r`, whose halves are `mask` (halves_of), as the row nccl-tests
 * printed for it (size count type redop root, then out-of-place and
 * in-place); NULL with `err` set where it lacks a field.  A report of one
 * half only (trace replay prints in-place results only) gives it to both. */
static char *row_text(const SimJsonDoc *d, const cJSON *r, int mask, size_t k, const char *time_key, GError **err)
{
    static const char *const keys[] = {"size", "count", "type", "redop", "root"};
    const cJSON *oop = half_of(r, mask, 1), *ip = half_of(r, mask, 2);
    GString *row = g_string_new(NULL);
    bool ok = oop != NULL;
    for (size_t i = 0; ok && i < G_N_ELEMENTS(keys); i++)
        ok = put_field(row, cJSON_GetObjectItemCaseSensitive(r, keys[i]), false);
    ok = ok && put_half(row, oop, time_key) && put_half(row, ip, time_key);
    if (!ok) {
        sim_json_error(d, r, err,
                       "result %zu: not a row of nccl-tests' report (size, count, type, redop, root of at most %d "
                       "characters, and out_of_place or in_place with %s, alg_bw, bus_bw, nwrong: a count or null)",
                       k + 1, FIELD_MAX, time_key);
        g_string_free(row, TRUE);
        return NULL;
    }
    return g_string_free(row, FALSE);
}

/* The row checks' message "NAME:LINE: what" as "NAME:LINE: result K: what":
 * a report is one line. */
static void name_result(GError **err, const char *name, size_t k)
{
    if (!err || !*err || strncmp((*err)->message, name, strlen(name)) != 0)
        return;
    const char *line = (*err)->message + strlen(name), *what = line[0] == ':' ? strchr(line + 1, ':') : NULL;
    if (!what || what[1] != ' ')
        return;
    char *m = g_strdup_printf("%.*s: result %zu: %s", (int)(what - (*err)->message), (*err)->message, k + 1, what + 2);
    g_free((*err)->message);
    (*err)->message = m;
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
        if (strlen(hex) > FIELD_MAX || strpbrk(hex, "] \t\r\n\v\f") || strlen(info) > 255 || strpbrk(info, "\r\n")) {
            sim_json_error(d, dev, err, "device of rank %ld: its bus id or name is not as nccl-tests prints them", rank);
            return false;
        }
        if (!*host || strlen(host) > 255 || strpbrk(host, BLANKS)) {
            sim_json_error(d, dev, err, "device of rank %ld: host name \"%s\" is not one word of at most 255 characters",
                           rank, SIM_ECHO(host));
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

/* One table: result k, of halves `mask`, measures them as the first did
 * (*halves, set at k 0); a malformed one is left to row_text. */
static bool same_halves(const SimJsonDoc *d, const cJSON *r, int mask, size_t k, int *halves, GError **err)
{
    static const char *const NAMES[] = {"no half", "out_of_place only", "in_place only", "both halves"};
    if (k == 0)
        *halves = mask;
    if (mask > 0 && mask != *halves) {
        sim_json_error(d, r, err, "result %zu has %s, result 1 %s: one report measures the halves alike", k + 1,
                       NAMES[mask], NAMES[*halves > 0 ? *halves : 0]);
        return false;
    }
    return true;
}

/* The rows of "results", each checked as the text's; the next datatype's
 * table forks the next run of the same job. */
static bool read_results(const SimJsonDoc *d, const cJSON *res, GPtrArray *runs, NcclTrace **cur, GError **err)
{
    const cJSON *r0 = cJSON_GetArrayItem(res, 0);
    const cJSON *h0 = half_of(r0, halves_of(r0), 1);
    const char *time_key = h0 && cJSON_GetObjectItemCaseSensitive(h0, "cpu_time") ? "cpu_time" : "time";
    const char *word = strcmp(time_key, "time") ? "cputime" : "time"; /* the printed column */
    char *header = g_strdup_printf("size count type redop root %s algbw busbw #wrong %s algbw busbw #wrong", word,
                                   word);
    TraceTok toks[TRACE_MAX_TOKS];
    NcclLayout L;
    int n = trace_tokenize(header, toks);
    bool ok = nccltests_layout_from_header(toks, n, &L);
    size_t k = 0;
    int halves = 0;
    for (const cJSON *r = res->child; ok && r; r = r->next, k++) {
        if (k >= TRACE_MAX_ROWS) {
            sim_json_error(d, r, err, "more than %d results in one report: split it", TRACE_MAX_ROWS);
            ok = false;
            break;
        }
        int mask = halves_of(r);
        if (!same_halves(d, r, mask, k, &halves, err)) {
            ok = false;
            break;
        }
        char *row = row_text(d, r, mask, k, time_key, err);
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
        if (row && got != 1)
            name_result(err, sim_json_path(d), k);
        ok = ok && got == 1;
        g_free(row);
    }
    g_free(header);
    return ok;
}

NcclRuns *nccltests_json_parse_runs(const char *name, const char *text, GError **err)
{
    name = name ? name : "(text)";
    text = past_bom(text); /* cJSON would skip it, the line count not */
    size_t len = strlen(text);
    if (len > SIM_FILE_JSON_MAX) { /* cJSON holds some 50 bytes a value: bounded memory */
        trace_input_error(err, name, 1, "a JSON report of %zu bytes: nccl-tests writes far smaller ones; at most %zu",
                          len, SIM_FILE_JSON_MAX);
        return NULL;
    }
    SimJsonDoc *d = sim_json_parse(name, text, len, err);
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
