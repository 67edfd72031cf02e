/* The OTF2 reader's entry: the trace object and its accessors, the check of
 * the anchor file before libotf2 sees it, the load's steps (definitions,
 * events, rows in order) and the note of what was skipped or assumed. */
#include "otf2trace.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

struct Otf2Trace {
    GArray *rows; /* Otf2Row, sorted */
    int n_ranks, n_hosts;
    char *note;
};

void otf2trace_free(Otf2Trace *t)
{
    if (!t)
        return;
    g_array_free(t->rows, TRUE);
    g_free(t->note);
    g_free(t);
}

size_t otf2trace_n_rows(const Otf2Trace *t) { return t ? t->rows->len : 0; }

const Otf2Row *otf2trace_row(const Otf2Trace *t, size_t i)
{
    if (!t || i >= t->rows->len)
        return NULL;
    return &g_array_index(t->rows, Otf2Row, i);
}

int otf2trace_n_ranks(const Otf2Trace *t) { return t ? t->n_ranks : 0; }
int otf2trace_n_hosts(const Otf2Trace *t) { return t ? t->n_hosts : 0; }
const char *otf2trace_note(const Otf2Trace *t) { return t && t->note ? t->note : ""; }

#ifndef SHARDSIM_HAVE_OTF2

bool otf2trace_available(void) { return false; }

Otf2Trace *otf2trace_load(const char *anchor_path, GError **err)
{
    g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "%s: built without OTF2 support",
                anchor_path ? anchor_path : "(null)");
    return NULL;
}

#else

#include "otf2trace_load.h"

/* libotf2 3.0.2 leaks its half-built archive when OTF2_Reader_Open fails on an
 * unreadable anchor; LeakSanitizer is told to ignore what that call allocates
 * (the reader it returns is always closed, so nothing real is hidden). */
#if defined(__SANITIZE_ADDRESS__)
#define OTF2TRACE_LSAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define OTF2TRACE_LSAN 1
#endif
#endif
#ifdef OTF2TRACE_LSAN
#include <sanitizer/lsan_interface.h>
#define LSAN_OFF() __lsan_disable()
#define LSAN_ON() __lsan_enable()
#else
#define LSAN_OFF() ((void)0)
#define LSAN_ON() ((void)0)
#endif

bool otf2trace_available(void) { return true; }

void otf2trace_fail(Load *L, const char *fmt, ...)
{
    if (L->error)
        return;
    va_list ap;
    va_start(ap, fmt);
    L->error = g_strdup_vprintf(fmt, ap);
    va_end(ap);
}

static OTF2_ErrorCode on_otf2_error(void *user, const char *file, uint64_t line, const char *function,
                                    OTF2_ErrorCode code, const char *fmt, va_list va)
{
    Load *L = user;
    if (!L->otf2_error) {
        char *msg = g_strdup_vprintf(fmt, va);
        L->otf2_error = g_strdup_printf("%s%s%s", OTF2_Error_GetDescription(code),
                                        msg[0] ? ": " : "", msg);
        g_free(msg);
    }
    return code;
}

const char *otf2trace_why(Load *L, OTF2_ErrorCode code)
{
    return L->otf2_error ? L->otf2_error : OTF2_Error_GetDescription(code);
}

typedef struct {
    GArray *rows;
    uint64_t resolution;
} RowsOut;

static gboolean emit_row(gpointer k, gpointer v, gpointer u)
{
    const RowKey *key = k;
    const RowAcc *acc = v;
    RowsOut *out = u;
    Otf2Row r = {
        .op = key->op,
        .size_bytes = key->size,
        .time_s = acc->sum_span / acc->count / (double)out->resolution,
        .count = acc->count,
        .rank_time_s = acc->sum_rank / acc->count / (double)out->resolution,
    };
    g_array_append_val(out->rows, r);
    return FALSE;
}

static char *make_note(Load *L, bool fallback)
{
    GString *s = g_string_new(NULL);
    if (fallback)
        g_string_append(s, "no MpiCollective events: times from MPI_* region Enter/Leave, "
                           "sizes unknown, all on all ranks assumed; ");
    GString *ign = g_string_new(NULL);
    for (guint op = 0; op < G_N_ELEMENTS(L->ignored); op++)
        if (L->ignored[op])
            g_string_append_printf(ign, "%s%" G_GUINT64_FORMAT " %s", ign->len ? ", " : "",
                                   (guint64)L->ignored[op], otf2trace_collective_name(op));
    if (L->ignored_other)
        g_string_append_printf(ign, "%s%" G_GUINT64_FORMAT " of unknown type",
                               ign->len ? ", " : "", (guint64)L->ignored_other);
    if (ign->len)
        g_string_append_printf(s, "ignored collective calls: %s; ", ign->str);
    g_string_free(ign, TRUE);
    if (L->subcomm_calls)
        g_string_append_printf(s, "%" G_GUINT64_FORMAT " calls on communicators smaller than "
                               "the %d ranks skipped; ", (guint64)L->subcomm_calls, L->n_ranks);
    GHashTable *left = fallback ? L->region_insts : L->insts;
    if (g_hash_table_size(left))
        g_string_append_printf(s, "%u instances not finished by every rank skipped; ",
                               g_hash_table_size(left));
    if (L->stray_leaves && fallback)
        g_string_append_printf(s, "%" G_GUINT64_FORMAT " Leave events of MPI_* regions "
                               "without their Enter ignored; ", (guint64)L->stray_leaves);
    if (L->in_place && !fallback)
        g_string_append_printf(s, "%" G_GUINT64_FORMAT " instances read as MPI_IN_PLACE; ",
                               (guint64)L->in_place);
    if (s->len >= 2)
        g_string_truncate(s, s->len - 2);
    return g_string_free(s, FALSE);
}

/* Reads definitions and events; false with L->error set on failure. */
static bool read_archive(Load *L, OTF2_Reader *reader)
{
    return otf2trace_read_defs(L, reader) && otf2trace_read_events(L, reader);
}

static void load_init(Load *L, const char *path)
{
    memset(L, 0, sizeof *L);
    L->path = path;
    L->strings = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
    L->st_nodes = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
    L->loc_groups = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
    L->groups = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
    L->comm_size = g_hash_table_new(g_direct_hash, g_direct_equal);
    L->region_op = g_hash_table_new(g_direct_hash, g_direct_equal);
    L->mpi_locations = g_array_new(FALSE, FALSE, sizeof(uint64_t));
    L->locs = g_ptr_array_new();
    L->loc_index = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
    L->insts = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, g_free);
    L->region_insts = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, g_free);
    L->rows = g_tree_new_full(otf2trace_row_key_cmp, NULL, g_free, g_free);
    L->region_rows = g_tree_new_full(otf2trace_row_key_cmp, NULL, g_free, g_free);
}

static void load_clear(Load *L)
{
    for (guint i = 0; i < L->locs->len; i++) {
        Loc *l = g_ptr_array_index(L->locs, i);
        g_hash_table_destroy(l->seq);
        g_free(l);
    }
    g_ptr_array_free(L->locs, TRUE);
    g_hash_table_destroy(L->loc_index);
    g_hash_table_destroy(L->strings);
    g_hash_table_destroy(L->st_nodes);
    g_hash_table_destroy(L->loc_groups);
    g_hash_table_destroy(L->groups);
    g_hash_table_destroy(L->comm_size);
    g_hash_table_destroy(L->region_op);
    g_array_free(L->mpi_locations, TRUE);
    g_hash_table_destroy(L->insts);
    g_hash_table_destroy(L->region_insts);
    g_tree_destroy(L->rows);
    g_tree_destroy(L->region_rows);
    g_free(L->otf2_error);
    g_free(L->error);
}

/* The anchor file's layout (OTF2_AnchorFile_Load): a chunk byte, an
 * endianness byte, "OTF2\0", anchor format, trace format, version (3 bytes),
 * two 8-byte chunk sizes, substrate, compression, two 8-byte counts, three
 * NUL-terminated strings (machine, creator, description); from format 2 a
 * 4-byte property count (in the endianness byte's order), that many name/value string pairs and an 8-byte
 * trace id; from format 3 two 4-byte counts and an end-of-file byte.  Walked
 * here in microseconds; NULL when it holds, else what is wrong. */
#define ANCHOR_MAX (1 << 20)
#define ANCHOR_LITTLE 0x42 /* OTF2_LITTLE_ENDIAN */
#define ANCHOR_BIG 0x23    /* OTF2_BIG_ENDIAN */
static const char *anchor_layout(const unsigned char *b, size_t n)
{
    if (n < 7 || memcmp(b + 2, "OTF2", 5) != 0)
        return "no OTF2 signature at its start";
    if (n < 0x2e + 3)
        return "the file ends inside its header";
    unsigned format = b[7];
    if (format == 0)
        return "anchor format 0";
    if (b[1] != ANCHOR_LITTLE && b[1] != ANCHOR_BIG)
        return "unknown byte order";
    if (b[0x1c] > 3 || b[0x1d] > 2)
        return "unknown file substrate or compression";
    size_t p = 0x2e;
    for (int k = 0; k < 3; k++) { /* machine, creator, description */
        const unsigned char *z = memchr(b + p, 0, n - p);
        if (!z)
            return "a string runs past the end of the file";
        p = (size_t)(z - b) + 1;
    }
    if (format < 2)
        return NULL;
    if (n - p < 4)
        return "the file ends before its property count";
    /* in the file's byte order; libotf2 allocates for that many first */
    uint32_t le = (uint32_t)b[p] | (uint32_t)b[p + 1] << 8 | (uint32_t)b[p + 2] << 16 | (uint32_t)b[p + 3] << 24;
    uint32_t be = (uint32_t)b[p + 3] | (uint32_t)b[p + 2] << 8 | (uint32_t)b[p + 1] << 16 | (uint32_t)b[p] << 24;
    uint64_t props = b[1] == ANCHOR_LITTLE ? le : be;
    p += 4;
    if (2 * props > n - p)
        return "more properties than the file has bytes";
    for (uint64_t k = 0; k < 2 * props; k++) {
        const unsigned char *z = memchr(b + p, 0, n - p);
        if (!z)
            return "a property runs past the end of the file";
        p = (size_t)(z - b) + 1;
    }
    size_t tail = 8 + (format > 2 ? 9 : 0); /* trace id; snapshots, thumbnails, end of file */
    if (n - p < tail)
        return "the file ends inside its header";
    return NULL;
}

static const char *anchor_problem(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return "cannot open it";
    unsigned char *b = g_malloc(ANCHOR_MAX + 1);
    size_t n = fread(b, 1, ANCHOR_MAX + 1, f);
    fclose(f);
    const char *why = n > ANCHOR_MAX ? "over 1 MiB, larger than any anchor" : anchor_layout(b, n);
    g_free(b);
    return why;
}

Otf2Trace *otf2trace_load(const char *anchor_path, GError **err)
{
    if (!g_file_test(anchor_path, G_FILE_TEST_IS_REGULAR)) { /* a folder or a FIFO is there, but no anchor (review 9) */
        g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "%s: %s (the .otf2 anchor file of an OTF2 archive is expected)",
                    anchor_path, g_file_test(anchor_path, G_FILE_TEST_EXISTS) ? "not a regular file" : "no such file");
        return NULL;
    }
    /* libotf2 leaks its archive when the anchor is unreadable, and spends
     * seconds on a corrupted one: its layout is checked here first */
    const char *why = anchor_problem(anchor_path);
    if (why) {
        g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "%s: not an OTF2 archive anchor file (%s)", anchor_path, why);
        return NULL;
    }
    Load L;
    load_init(&L, anchor_path);
    OTF2_ErrorCallback old = OTF2_Error_RegisterCallback(on_otf2_error, &L);
    Otf2Trace *t = NULL;
    LSAN_OFF();
    OTF2_Reader *reader = OTF2_Reader_Open(anchor_path);
    LSAN_ON();
    if (!reader) {
        otf2trace_fail(&L, "cannot read the OTF2 anchor file: %s",
                  L.otf2_error ? L.otf2_error : "libotf2 cannot open it");
    } else {
        if (read_archive(&L, reader)) {
            bool fallback = L.n_coll_events == 0 && g_tree_nnodes(L.region_rows) > 0;
            t = g_new0(Otf2Trace, 1);
            t->rows = g_array_new(FALSE, FALSE, sizeof(Otf2Row));
            RowsOut out = {t->rows, L.timer_resolution};
            g_tree_foreach(fallback ? L.region_rows : L.rows, emit_row, &out);
            t->n_ranks = L.n_ranks;
            t->n_hosts = L.n_hosts;
            t->note = make_note(&L, fallback);
        }
        OTF2_Reader_Close(reader);
    }
    OTF2_Error_RegisterCallback(old, NULL);
    if (!t)
        g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "%s: %s", anchor_path,
                    L.error ? L.error : "unreadable OTF2 archive");
    load_clear(&L);
    return t;
}

#endif
