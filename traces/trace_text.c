/* Text of benchmark output: the file read as text, fields of a line, the
 * '# key: value' provenance matcher, input errors at a line (trace_text.h). */
#include "trace_text.h"

#include "sim_error.h"
#include "sim_file.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>

int trace_tokenize(const char *s, TraceTok *toks)
{
    int n = 0;
    while (*s) {
        while (*s && isspace((unsigned char)*s))
            s++;
        if (!*s)
            break;
        const char *b = s;
        while (*s && !isspace((unsigned char)*s))
            s++;
        if (n < TRACE_MAX_TOKS)
            toks[n] = (TraceTok){b, (int)(s - b)};
        n++;
    }
    return n;
}

bool trace_tok_is(TraceTok t, const char *word)
{
    return (size_t)t.len == strlen(word) && strncmp(t.s, word, (size_t)t.len) == 0;
}

bool trace_tok_u64(TraceTok t, uint64_t *out)
{
    if (t.len <= 0 || t.len > 19)
        return false;
    for (int i = 0; i < t.len; i++)
        if (!isdigit((unsigned char)t.s[i]))
            return false;
    char buf[32];
    memcpy(buf, t.s, (size_t)t.len);
    buf[t.len] = 0;
    *out = g_ascii_strtoull(buf, NULL, 10);
    return true;
}

bool trace_tok_int(TraceTok t, int *out)
{
    TraceTok d = t;
    bool neg = t.len > 0 && t.s[0] == '-';
    if (neg) {
        d.s++;
        d.len--;
    }
    uint64_t v = 0;
    if (!trace_tok_u64(d, &v) || v > 1000000000u)
        return false;
    *out = neg ? -(int)v : (int)v;
    return true;
}

bool trace_tok_double(TraceTok t, double *out)
{
    if (t.len <= 0 || t.len > 40)
        return false;
    char buf[48];
    memcpy(buf, t.s, (size_t)t.len);
    buf[t.len] = 0;
    if (strpbrk(buf, "xX")) /* as printed by %f or %e: strtod's hexadecimal is no benchmark's */
        return false;
    char *end = NULL;
    double v = g_ascii_strtod(buf, &end);
    if (end != buf + t.len || !isfinite(v))
        return false;
    *out = v;
    return true;
}

/* "[1,0]", "[3]" or torchrun's "[default3]" and "[rank3]": past the ']',
 * else NULL. */
static const char *rank_tag(const char *p)
{
    if (*p != '[')
        return NULL;
    p++;
    while (isalpha((unsigned char)*p))
        p++;
    if (!isdigit((unsigned char)*p))
        return NULL;
    while (isdigit((unsigned char)*p) || *p == ',')
        p++;
    return *p == ']' ? p + 1 : NULL;
}

/* "2024-05-01T10:00:00.123Z" (or a space for the T, an offset for the Z):
 * past it, else NULL. */
static const char *time_stamp(const char *p)
{
    static const char shape[] = "dddd-dd-ddTdd:dd:dd";
    for (int i = 0; shape[i]; i++, p++)
        if (shape[i] == 'd' ? !isdigit((unsigned char)*p) : shape[i] == 'T' ? *p != 'T' && *p != ' ' : *p != shape[i])
            return NULL;
    if (*p == '.' || *p == ',')
        for (p++; isdigit((unsigned char)*p); p++)
            ;
    if (*p == 'Z')
        p++;
    else if ((*p == '+' || *p == '-') && isdigit((unsigned char)p[1]))
        for (p++; isdigit((unsigned char)*p) || *p == ':'; p++)
            ;
    return p;
}

/* "node001:" (where `words`) or srun's "12:" followed by a blank: past the
 * ':', else NULL. */
static const char *host_tag(const char *p, bool words)
{
    const char *q = p;
    bool digits = true;
    for (; isalnum((unsigned char)*q) || *q == '.' || *q == '_' || *q == '-'; q++)
        digits = digits && isdigit((unsigned char)*q);
    if (q == p || (!digits && !words))
        return NULL;
    return *q == ':' && (q[1] == ' ' || q[1] == '\t' || q[1] == 0) ? q + 1 : NULL;
}

bool trace_words_prefixed(const char *s)
{
    const char *p = trace_strip_prefix(s, false), *q;
    while (*p == ' ' || *p == '\t')
        p++;
    if (!(q = host_tag(p, true)) || host_tag(p, false))
        return false;
    while (*q == ' ' || *q == '\t')
        q++;
    return *q == '#';
}

const char *trace_strip_prefix(const char *s, bool words)
{
    for (int k = 0; k < 4; k++) {
        const char *p = s, *q;
        while (*p == ' ' || *p == '\t')
            p++;
        if ((q = rank_tag(p)) && (g_str_has_prefix(q, "<stdout>:") || g_str_has_prefix(q, "<stderr>:")))
            q += 9;
        else if (q && *q == ':')
            q++;
        else if (q && *q != ' ' && *q != '\t')
            q = NULL;
        if (!q && !(q = time_stamp(p)))
            q = host_tag(p, words);
        if (!q && *p == '>' && (p[1] == ' ' || p[1] == '>' || p[1] == 0)) /* quoted in Markdown */
            q = p + 1;
        if (!q)
            return s;
        s = q;
    }
    return s;
}

int trace_provenance_key(const char *s)
{
    if (s[0] != '#' || s[1] != ' ' || !isalpha((unsigned char)s[2]))
        return 0;
    int i = 2;
    while (isalnum((unsigned char)s[i]) || s[i] == '_' || s[i] == '-')
        i++;
    if (s[i] != ':' || (s[i + 1] != ' ' && s[i + 1] != 0))
        return 0;
    return i - 2;
}

bool trace_text_has_no_nul(const char *path, const char *text, size_t len, GError **err)
{
    const char *nul = memchr(text, 0, len);
    if (!nul)
        return true;
    int line = 1;
    for (const char *p = text; p < nul; p++)
        line += *p == '\n';
    trace_input_error(err, sim_file_display_name(path), line, "binary file (NUL byte)");
    return false;
}

char *trace_read_text(const char *path, GError **err)
{
    size_t len = 0;
    char *text = sim_file_read(path, SIM_FILE_TRACE_MAX, "a trace", &len, err);
    if (text && !trace_text_has_no_nul(path, text, len, err)) {
        g_free(text);
        return NULL;
    }
    return text;
}

void trace_input_error(GError **err, const char *name, int line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *msg = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "%s:%d: %s", name, line, msg);
    g_free(msg);
}
