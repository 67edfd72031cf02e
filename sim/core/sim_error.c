/* The error domain of every module (SIM_ERROR with its two codes) and the
 * echo of user text that messages quote (SIM_ECHO). */
#include "sim_error.h"

#include <string.h>

G_DEFINE_QUARK(shardsim - error - quark, sim_error)

const char *sim_echo_into(char *buf, const char *s)
{
    if (!s)
        return "(null)";
    /* whole characters when the text is UTF-8, bytes otherwise; control
     * characters escaped, so that a message stays on its line (each
     * character takes at most 4 bytes of buf: SIM_ECHO_BUF) */
    bool utf8 = g_utf8_validate(s, -1, NULL);
    const char *p = s;
    char *o = buf;
    for (int n = 0; *p && n < SIM_ECHO_MAX; n++) {
        unsigned char ch = (unsigned char)*p;
        if (ch < 0x20 || ch == 0x7f) {
            o += ch == '\n' ? g_snprintf(o, 5, "\\n") : ch == '\t' ? g_snprintf(o, 5, "\\t") : g_snprintf(o, 5, "\\x%02x", ch);
            p++;
            continue;
        }
        const char *next = utf8 ? g_utf8_next_char(p) : p + 1;
        memcpy(o, p, (size_t)(next - p));
        o += next - p;
        p = next;
    }
    memcpy(o, *p ? "..." : "", *p ? 4 : 1);
    return buf;
}
