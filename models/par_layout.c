/* Megatron-Core's pipeline_model_parallel_layout (PipelineParallelLayerLayout):
 * a string naming what each of the pp x vpp model chunks holds, in model
 * order (chunk j of stage s is the (j x pp + s)-th): 'E' the embedding,
 * 't' a decoder layer, 'm' a multi-token prediction module, 'L' the loss;
 * '|' ends a chunk; "X*N" and "(...)*N" repeat.  DeepSeek-V3's recipes in
 * Megatron-Bridge run such layouts ("Et|(tt|)*30mL" on PP 8 x VP 4). */
#include "par_layout.h"

#include <glib.h>

#include <ctype.h>
#include <stdlib.h>

#define LAYOUT_MAX 65536 /* expanded characters: far above any real model */

/* Expands p up to `close` (or the end) into out; returns where it stopped,
 * NULL on a syntax error or past LAYOUT_MAX. */
static const char *expand(const char *p, char close, GString *out, int depth)
{
    while (*p && *p != close) {
        GString *unit = g_string_new(NULL);
        if (*p == '(' && depth < 8) {
            p = expand(p + 1, ')', unit, depth + 1);
            if (!p || *p != ')') {
                g_string_free(unit, TRUE);
                return NULL;
            }
            p++;
        } else if (*p == 'E' || *p == 't' || *p == 'm' || *p == 'L' || *p == '|') {
            g_string_append_c(unit, *p++);
        } else {
            g_string_free(unit, TRUE);
            return NULL;
        }
        long n = 1;
        if (*p == '*') {
            char *end;
            n = isdigit((unsigned char)p[1]) ? strtol(p + 1, &end, 10) : -1;
            if (n < 1 || n > LAYOUT_MAX) {
                g_string_free(unit, TRUE);
                return NULL;
            }
            p = end;
        }
        for (long i = 0; i < n && out->len <= LAYOUT_MAX; i++)
            g_string_append_len(out, unit->str, (gssize)unit->len);
        g_string_free(unit, TRUE);
        if (out->len > LAYOUT_MAX)
            return NULL;
    }
    return p;
}

bool layout_chunks(const char *layout, int chunks, int layers, int mtp_layers, int *out, const char **why)
{
    GString *s = g_string_new(NULL);
    const char *end = expand(layout, '\0', s, 0);
    bool ok = end && *end == '\0';
    *why = ok ? NULL : "does not parse (E, t, m, L, '|', X*N, (...)*N)";
    int k = 0, t = 0, m = 0, e = 0, l = 0, bars = 0, placed = 0;
    for (int j = 0; j < chunks; j++)
        out[j] = 0;
    for (size_t i = 0; ok && i < s->len; i++)
        bars += s->str[i] == '|';
    if (ok && bars + 1 != chunks) {
        *why = "must have pp x virtual_stages chunks ('|'-separated)";
        ok = false;
    }
    for (size_t i = 0; ok && i <= s->len; i++) {
        char ch = i < s->len ? s->str[i] : '|';
        if (ch == '|') {
            k++;
            continue;
        }
        if (k >= chunks)
            continue; /* counted: too many chunks */
        out[k] += ch == 't';
        t += ch == 't';
        /* Megatron-Core's validate_layer_layout: the embedding first, the
         * loss last, every decoder layer before the MTP modules */
        if (ch == 'E' && (placed || e++))
            *why = "'E' (the embedding) must open the first chunk, once";
        if ((ch == 'L' && l++) || ((ch == 'L' || ch == 'm') && k != chunks - 1))
            *why = "'L' (the loss, once) and 'm' (MTP) belong in the last chunk";
        if (l && ch != 'L')
            *why = "'L' (the loss) must close the last chunk";
        if (ch == 't' && m)
            *why = "every decoder layer ('t') must come before the MTP modules ('m')";
        m += ch == 'm';
        placed++;
    }
    if (ok && !*why) {
        if (t != layers)
            *why = "must place every decoder layer ('t') of the model";
        else if (m != mtp_layers)
            *why = "must place the model's MTP modules ('m'), mtp_layers of them";
        else if (!l || !e)
            *why = "must hold the embedding ('E') and the loss ('L')";
    }
    g_string_free(s, TRUE);
    return *why == NULL;
}
