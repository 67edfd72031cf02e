/* One result table of nccl-tests: its column layout (from the header line
 * or a row's field count), the datatype and reduction names nccl-tests
 * prints, and each row read and checked: its size against its count of
 * elements, its times against physics and its own algbw, its datatype
 * against the table it is in (-d all).  The line reader is nccltests.c. */
#include "nccltests_row.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

bool nccltests_layout_from_header(const TraceTok *t, int n, NcclLayout *L)
{
    NcclLayout l = { .size = -1, .count = -1, .type = -1, .redop = -1, .root = -1,
                     .time = { -1, -1 }, .alg = { -1, -1 }, .bus = { -1, -1 }, .wrong = { -1, -1 } };
    int nt = 0, na = 0, nb = 0, nw = 0, extra = 0;
    if (n > TRACE_MAX_TOKS)
        return false;
    for (int i = 0; i < n; i++) {
        if (trace_tok_is(t[i], "size"))
            l.size = i;
        else if (trace_tok_is(t[i], "count"))
            l.count = i;
        else if (trace_tok_is(t[i], "type"))
            l.type = i;
        else if (trace_tok_is(t[i], "redop"))
            l.redop = i;
        else if (trace_tok_is(t[i], "root"))
            l.root = i;
        else if ((trace_tok_is(t[i], "time") || trace_tok_is(t[i], "cputime")) && nt < 2) {
            l.cputime = l.cputime || trace_tok_is(t[i], "cputime");
            l.time[nt++] = i;
        }
        else if (trace_tok_is(t[i], "algbw") && na < 2)
            l.alg[na++] = i;
        else if (trace_tok_is(t[i], "busbw") && nb < 2)
            l.bus[nb++] = i;
        else if (trace_tok_is(t[i], "#wrong") && nw < 2)
            l.wrong[nw++] = i;
        else if (trace_tok_is(t[i], "timestamp"))
            extra++; /* printed as "YYYY-MM-DD HH:MM:SS": two fields */
    }
    if (l.size != 0 || l.count < 0 || l.type < 0 || nt < 1 || na < 1 || nb < 1)
        return false;
    l.n_fields = n + extra;
    *L = l;
    return true;
}

bool nccltests_layout_from_count(int n, NcclLayout *L)
{
    if (n < 11 || n > 13)
        return false;
    int b = n - 8; /* first timing column */
    *L = (NcclLayout){ .n_fields = n, .size = 0, .count = 1, .type = 2,
                       .redop = n >= 12 ? 3 : -1, .root = n == 13 ? 4 : -1,
                       .time = { b, b + 4 }, .alg = { b + 1, b + 5 }, .bus = { b + 2, b + 6 },
                       /* the fourth is "#wrong" from 2.13 on, a maximum error ("4e-07")
                        * before: only a whole number is read as a count */
                       .wrong = { b + 3, b + 7 } };
    return true;
}

static const char *COLNAME[2] = { "out-of-place", "in-place" };

/* nccl-tests' datatype names (src/common.cu test_typenames, old and new):
 * the element's bytes, 0 for a name it never prints. */
static int type_bytes(TraceTok t)
{
    static const struct { const char *name; int bytes; } types[] = {
        {"int8", 1},     {"uint8", 1},  {"int32", 4},    {"uint32", 4},   {"int64", 8},    {"uint64", 8},
        {"half", 2},     {"float", 4},  {"double", 8},   {"bfloat16", 2}, {"f8e4m3", 1},   {"f8e5m2", 1},
        {"fp8_e4m3", 1}, {"fp8_e5m2", 1}, {"char", 1},   {"int", 4},      {"uint", 4},     {"bf16", 2},
        {"fp8e4m3", 1},  {"fp8e5m2", 1}};
    for (size_t i = 0; i < G_N_ELEMENTS(types); i++)
        if (trace_tok_is(t, types[i].name))
            return types[i].bytes;
    return 0;
}

static bool is_type_name(TraceTok t) { return type_bytes(t) > 0; }

/* nccl-tests' reduction names (test_opnames), and "none" where it reduces nothing. */
static bool is_redop_name(TraceTok t)
{
    static const char *const ops[] = {"sum", "prod", "max", "min", "avg", "mulsum", "premulsum", "none"};
    for (size_t i = 0; i < G_N_ELEMENTS(ops); i++)
        if (trace_tok_is(t, ops[i]))
            return true;
    return false;
}

/* Old alltoall_perf prints its header's "redop" column blank: a row one
 * field short whose type field names a datatype and whose redop field
 * holds a time is read without it. */
static bool blank_redop(const NcclLayout *L, const TraceTok *t, int n, NcclLayout *out)
{
    double v;
    if (n != L->n_fields - 1 || L->redop < 0 || L->redop >= n || !is_type_name(t[L->type]) ||
        !trace_tok_double(t[L->redop], &v) || v < 0)
        return false;
    *out = *L;
    out->n_fields--;
    out->redop = -1;
    int *cols[] = { &out->root, &out->time[0], &out->time[1], &out->alg[0], &out->alg[1],
                    &out->bus[0], &out->bus[1], &out->wrong[0], &out->wrong[1] };
    for (size_t i = 0; i < G_N_ELEMENTS(cols); i++)
        if (*cols[i] > L->redop)
            (*cols[i])--;
    return true;
}

/* -d all prints each datatype's sizes after the last's, starting over:
 * each datatype's table is a run of its own.  1: `r` belongs to the run
 * `tr` reads; 2: it starts the next datatype's table (a type no table had,
 * its size no larger than the last row's); -1 with `err` where the type
 * changes any other way. */
static int datatype_of_row(const NcclTrace *tr, const NcclTestsRow *r, int line, GError **err)
{
    const NcclTestsRow *first = &g_array_index(tr->rows, NcclTestsRow, 0),
                       *last = &g_array_index(tr->rows, NcclTestsRow, tr->rows->len - 1);
    if (!strcmp(r->type, first->type))
        return 1;
    bool seen = false;
    for (char **p = tr->types_before; p && *p; p++)
        seen = seen || !strcmp(*p, r->type);
    if (!seen && r->size_bytes <= last->size_bytes)
        return 2;
    trace_input_error(err, tr->name, line, "datatype %s at size %" PRIu64 " after %s at %" PRIu64 ": not a "
                      "table per datatype starting over (-d all)", r->type, r->size_bytes, last->type, last->size_bytes);
    return -1;
}

/* Half a unit of a printed number's last digit ("62648" 0.5, "34.73"
 * 0.005, "1.3e+07" 5e5): how far the printed value may be from the one
 * computed. */
static double half_ulp(TraceTok t)
{
    int decimals = 0, exp10 = 0;
    const char *dot = memchr(t.s, '.', (size_t)t.len), *e = NULL;
    for (int i = 0; i < t.len; i++)
        if (t.s[i] == 'e' || t.s[i] == 'E')
            e = t.s + i;
    if (e)
        exp10 = atoi(e + 1);
    if (dot)
        decimals = (int)((e ? e : t.s + t.len) - dot - 1);
    return 0.5 * pow(10, exp10 - decimals);
}

/* A row's times against physics and against its own algbw, which
 * nccl-tests computes from the GPUs' time it prints (size / time, both
 * rounded as printed: the slack is their last digits').  Under -C 1 the
 * time is the host's launch time, which algbw is not made from. */
static bool row_rates_ok(const NcclTrace *tr, const NcclLayout *L, const TraceTok *tok, const NcclTestsRow *r, int line,
                         GError **err)
{
    const double t[2] = {r->time_us, r->ip_time_us}, alg[2] = {r->algbw_gbs, r->ip_algbw_gbs};
    for (int g = 0; g < 2; g++) {
        if (!(t[g] > 0) || r->size_bytes == 0 || L->cputime)
            continue;
        double implied = r->size_bytes / (t[g] * 1e3); /* GB/s */
        if (!trace_rate_ok(r->size_bytes, t[g])) {
            trace_input_error(err, tr->name, line, "%s time %g us moves %" PRIu64 " B at %.3g GB/s: not a measurement",
                              COLNAME[g], t[g], r->size_bytes, implied);
            return false;
        }
        if (L->time[g] < 0 || L->alg[g] < 0 || !(alg[g] > 0))
            continue; /* no algbw printed to hold the time to */
        double slack = implied * half_ulp(tok[L->time[g]]) / t[g] + half_ulp(tok[L->alg[g]]) + 0.001 * implied;
        if (fabs(implied - alg[g]) > slack) {
            trace_input_error(err, tr->name, line, "%s time %g us gives %.2f GB/s for %" PRIu64 " B, the row's algbw says %g",
                              COLNAME[g], t[g], implied, r->size_bytes, alg[g]);
            return false;
        }
    }
    return true;
}

int nccltests_parse_row(NcclTrace *tr, const NcclLayout *L, const TraceTok *t, int n, int line, GError **err)
{
    NcclLayout shifted;
    if (blank_redop(L, t, n, &shifted))
        L = &shifted;
    if (n != L->n_fields) {
        trace_input_error(err, tr->name, line, "result row has %d fields, expected %d", n,
                        L->n_fields);
        return false;
    }
    NcclTestsRow r = { .root = -1, .ip_time_us = NAN, .ip_algbw_gbs = NAN,
                       .ip_busbw_gbs = NAN, .line = line };
    if (!trace_tok_u64(t[L->size], &r.size_bytes) || (double)r.size_bytes > TRACE_MAX_BYTES) {
        trace_input_error(err, tr->name, line, "size \"%.*s\" is not a whole number of bytes up to 1 TiB",
                        t[L->size].len, t[L->size].s);
        return false;
    }
    if (!trace_tok_u64(t[L->count], &r.count)) {
        trace_input_error(err, tr->name, line, "count \"%.*s\" is not a whole number",
                        t[L->count].len, t[L->count].s);
        return false;
    }
    /* a size is its count of elements, times the ranks where the count is per rank */
    int tb = type_bytes(t[L->type]);
    if (!tb) {
        trace_input_error(err, tr->name, line, "datatype \"%.*s\" is not one nccl-tests prints", t[L->type].len,
                          t[L->type].s);
        return false;
    }
    if (r.size_bytes > 0 && (r.count == 0 || r.count > r.size_bytes || r.size_bytes % (r.count * (uint64_t)tb))) {
        trace_input_error(err, tr->name, line, "size %" PRIu64 " is not a whole number of count %" PRIu64 " x %d-byte elements",
                          r.size_bytes, r.count, tb);
        return false;
    }
    r.type = g_string_chunk_insert_len(tr->strings, t[L->type].s, t[L->type].len);
    if (L->redop >= 0 && !is_redop_name(t[L->redop])) {
        trace_input_error(err, tr->name, line, "reduction \"%.*s\" is not one nccl-tests prints", t[L->redop].len,
                          t[L->redop].s);
        return false;
    }
    if (L->redop >= 0)
        r.redop = g_string_chunk_insert_len(tr->strings, t[L->redop].s, t[L->redop].len);
    if (L->root >= 0 && !trace_tok_int(t[L->root], &r.root)) {
        trace_input_error(err, tr->name, line, "root \"%.*s\" is not an integer",
                        t[L->root].len, t[L->root].s);
        return false;
    }
    double *dst[2][3] = { { &r.time_us, &r.algbw_gbs, &r.busbw_gbs },
                          { &r.ip_time_us, &r.ip_algbw_gbs, &r.ip_busbw_gbs } };
    static const char *what[3] = { "time", "algbw", "busbw" };
    for (int g = 0; g < 2; g++) {
        int col[3] = { L->time[g], L->alg[g], L->bus[g] };
        for (int k = 0; k < 3; k++) {
            if (col[k] < 0)
                continue;
            double v = 0;
            if (!trace_tok_double(t[col[k]], &v) || !trace_measure_ok(v, k == 0 ? TRACE_MAX_US : TRACE_MAX_MBS / 1e3)) {
                trace_input_error(err, tr->name, line, "%s %s \"%.*s\" is not 0 or a number from 0.001 to %s", COLNAME[g],
                                  what[k], t[col[k]].len, t[col[k]].s, k == 0 ? "1e10 us" : "1e6 GB/s");
                return false;
            }
            *dst[g][k] = v;
        }
        uint64_t w; /* a count; anything else ("N/A") says nothing */
        if (L->wrong[g] >= 0 && trace_tok_u64(t[L->wrong[g]], &w) && w > 0)
            r.wrong = true;
    }
    if (!row_rates_ok(tr, L, t, &r, line, err))
        return false;
    /* nccl-tests prints rows of 0 bytes where the smallest size does not
     * split over the ranks (reduce_scatter, alltoall below ranks x the type):
     * nothing moved, nothing to check */
    if (r.size_bytes == 0) {
        tr->zero_rows++;
        return true;
    }
    int kind = tr->rows->len > 0 ? datatype_of_row(tr, &r, line, err) : 1;
    if (kind != 1)
        return kind < 0 ? 0 : kind;
    if (tr->rows->len > 0) {
        const NcclTestsRow *prev = &g_array_index(tr->rows, NcclTestsRow, tr->rows->len - 1);
        if (r.size_bytes <= prev->size_bytes) {
            trace_input_error(err, tr->name, line,
                              "size %" PRIu64 " does not grow from %" PRIu64 " at line %d (a second table "
                              "without its own column header?)",
                              r.size_bytes, prev->size_bytes, prev->line);
            return false;
        }
    }
    g_array_append_val(tr->rows, r);
    return true;
}

