/* Reading one input file whole, safely.
 *
 * Every input shardsim reads (scenarios, presets, topologies, traces) comes
 * through here, so that the rules hold for all of them: a size cap checked
 * before and while reading (a huge or endless input is refused, never
 * swallowed), only regular files by name (a directory, FIFO, socket or device
 * such as /dev/zero is refused before it is opened for reading), and "-" for
 * standard input, which can be read once per process.  Every output goes
 * out through sim_file_write, so that none replaces a device or a link.
 * The tables read line by line split their lines here too (sim_csv_fields). */
/* realpath (XSI) */
#undef _POSIX_C_SOURCE
#define _XOPEN_SOURCE 700
#include "sim_file.h"

#include "sim_error.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static gboolean stdin_taken = FALSE;

const char *sim_file_display_name(const char *path)
{
    return strcmp(path, "-") == 0 ? "<stdin>" : path;
}

static void set_limit_error(GError **err, const char *name, size_t cap, const char *what)
{
    /* the caps are whole KiB/MiB/GiB; GLib's formatter would put a
     * locale-dependent no-break space in the message */
    static const char *unit[] = {"bytes", "KiB", "MiB", "GiB"};
    int u = 0;
    size_t v = cap;
    while (u < 3 && v >= 1024 && v % 1024 == 0) {
        v /= 1024;
        u++;
    }
    g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "%s: larger than %zu %s, the limit for %s", name, v, unit[u], what);
}

static const char *file_kind(mode_t m)
{
    if (S_ISDIR(m))
        return "a directory";
    if (S_ISFIFO(m))
        return "a FIFO";
    if (S_ISCHR(m) || S_ISBLK(m))
        return "a device";
    if (S_ISSOCK(m))
        return "a socket";
    return "not a regular file";
}

/* Opens `path` for reading if it names a regular file; -1 and `err` if not. */
static int open_regular(const char *path, GError **err)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "%s: %s", path, g_strerror(errno));
        return -1;
    }
    if (!S_ISREG(st.st_mode)) {
        g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "%s: is %s, not a file (give a file, or - for standard input)",
                    path, file_kind(st.st_mode));
        return -1;
    }
    /* O_NONBLOCK: should the name be swapped for a FIFO after the stat, the
     * open does not wait for a writer; the fstat below then refuses it. */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "%s: %s", path, g_strerror(errno));
        return -1;
    }
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "%s: is %s, not a file", path, file_kind(st.st_mode));
        close(fd);
        return -1;
    }
    return fd;
}

/* Reads fd to its end, refusing more than `cap` bytes; NUL-terminated. */
static char *read_capped(int fd, const char *name, size_t cap, const char *what, size_t *len, GError **err)
{
    GByteArray *buf = g_byte_array_new();
    guint8 chunk[65536];
    for (;;) {
        ssize_t n = read(fd, chunk, sizeof chunk);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EAGAIN) { /* a non-blocking stdin: wait for data */
            struct pollfd p = {.fd = fd, .events = POLLIN};
            poll(&p, 1, -1);
            continue;
        }
        if (n < 0) {
            g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "%s: %s", name, g_strerror(errno));
            break;
        }
        if (n == 0) {
            *len = buf->len;
            g_byte_array_append(buf, (const guint8 *)"", 1);
            return (char *)g_byte_array_free(buf, FALSE);
        }
        if (buf->len + (size_t)n > cap) {
            set_limit_error(err, name, cap, what);
            break;
        }
        g_byte_array_append(buf, chunk, (guint)n);
    }
    g_byte_array_free(buf, TRUE);
    return NULL;
}

static gboolean write_error(const char *path, int e, GError **err)
{
    g_set_error(err, G_FILE_ERROR, g_file_error_from_errno(e), "Failed to write file \u201c%s\u201d: %s", path,
                g_strerror(e));
    return FALSE;
}

/* Writes `n` bytes into an existing device or FIFO, in place. */
static gboolean write_in_place(const char *path, const char *data, size_t n, GError **err)
{
    int fd = open(path, O_WRONLY | O_NOCTTY);
    if (fd < 0)
        return write_error(path, errno, err);
    for (size_t off = 0; off < n;) {
        ssize_t w = write(fd, data + off, n - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            int e = w < 0 ? errno : EIO;
            close(fd);
            return write_error(path, e, err);
        }
        off += (size_t)w;
    }
    if (close(fd) != 0)
        return write_error(path, errno, err);
    return TRUE;
}

gboolean sim_file_write(const char *path, const char *data, gssize len, GError **err)
{
    size_t n = len < 0 ? strlen(data) : (size_t)len;
    /* a link is written through, never replaced: /dev/stdout is one, and
     * renaming a temporary file over it would, as root, remove it */
    char *real = realpath(path, NULL);
    const char *target = real ? real : path;
    struct stat st;
    GError *e = NULL;
    gboolean ok = stat(target, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)
                      ? write_in_place(target, data, n, &e)
                      : g_file_set_contents(target, data, (gssize)n, &e);
    free(real);
    if (!ok) { /* the path as given: GLib names its temporary file "PATH.XXXXXX" */
        const char *why = strrchr(e->message, ':');
        g_set_error(err, e->domain, e->code, "cannot write \"%s\"%s", path, why ? why : "");
        g_error_free(e);
    }
    return ok;
}

char *sim_file_read(const char *path, size_t cap, const char *what, size_t *len, GError **err)
{
    size_t dummy;
    if (!len)
        len = &dummy;
    if (strcmp(path, "-") == 0) {
        if (g_atomic_int_exchange(&stdin_taken, TRUE)) {
            g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "<stdin>: standard input can be read only once");
            return NULL;
        }
        return read_capped(STDIN_FILENO, "<stdin>", cap, what, len, err);
    }
    int fd = open_regular(path, err);
    if (fd < 0)
        return NULL;
    struct stat st;
    char *text = NULL;
    if (fstat(fd, &st) == 0 && (guint64)st.st_size > cap)
        set_limit_error(err, path, cap, what); /* refused before reading a byte */
    else
        text = read_capped(fd, path, cap, what, len, err);
    close(fd);
    return text;
}

/* A quoted cell: from after its opening quote to its closing one, "" as
 * one quote.  Returns where reading goes on (after the closing quote), or
 * NULL where the line ends first. */
static const char *csv_quoted(const char *p, GString *cell)
{
    for (;; p++) {
        if (!*p)
            return NULL;
        if (*p == '"' && p[1] != '"')
            return p + 1;
        if (*p == '"')
            p++; /* "" */
        g_string_append_c(cell, *p);
    }
}

gchar **sim_csv_fields(const char *line, GError **err)
{
    GPtrArray *out = g_ptr_array_new_with_free_func(g_free);
    const char *p = line;
    for (;;) {
        GString *cell = g_string_new(NULL);
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p == '"') {
            const char *q = csv_quoted(p + 1, cell);
            while (q && (*q == ' ' || *q == '\t'))
                q++;
            if (!q || (*q && *q != ',')) {
                g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "cell %u: %s", out->len + 1,
                            q ? "text after a quoted cell's closing quote" : "a quote opened and not closed on this line");
                g_string_free(cell, TRUE);
                g_ptr_array_free(out, TRUE);
                return NULL;
            }
            p = q;
        } else {
            const char *e = strchr(p, ',');
            g_string_append_len(cell, p, e ? e - p : (gssize)strlen(p));
            while (cell->len && (cell->str[cell->len - 1] == ' ' || cell->str[cell->len - 1] == '\t'))
                g_string_truncate(cell, cell->len - 1);
            p = e ? e : p + strlen(p);
        }
        g_ptr_array_add(out, g_string_free(cell, FALSE));
        if (!*p++)
            break;
    }
    g_ptr_array_add(out, NULL);
    return (gchar **)g_ptr_array_free(out, FALSE);
}
