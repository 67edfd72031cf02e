/* The error domain of every module (SIM_ERROR with its two codes) and the
 * echo of user text that messages quote (SIM_ECHO). */
#include "sim_error.h"

#include <string.h>

G_DEFINE_QUARK(shardsim - error - quark, sim_error)

const char *sim_echo_into(char *buf, const char *s)
{
    if (!s)
        return "(null)";
    const char *p = s;
    int n = 0;
    /* whole characters when the text is UTF-8, bytes otherwise */
    bool utf8 = g_utf8_validate(s, -1, NULL);
    while (*p && n < SIM_ECHO_MAX) {
        p = utf8 ? g_utf8_next_char(p) : p + 1;
        n++;
    }
    if (!*p)
        return s;
    size_t len = (size_t)(p - s);
    memcpy(buf, s, len);
    memcpy(buf + len, "...", 4);
    return buf;
}
