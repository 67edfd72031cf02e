/* libFuzzer harness: the OTF2 reader's anchor file check and what libotf2
 * makes of an anchor that passes it (the input is written as the anchor of an
 * archive with no other files). */
#include "otf2trace.h"

#include <glib/gstdio.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char *path;
    if (!path) {
        char *dir = g_dir_make_tmp("fuzz-otf2-XXXXXX", NULL);
        path = g_build_filename(dir, "traces.otf2", NULL);
        g_free(dir);
    }
    if (!g_file_set_contents(path, (const char *)data, (gssize)size, NULL))
        return 0;
    GError *err = NULL;
    Otf2Trace *t = otf2trace_load(path, &err);
    if (t) {
        for (size_t i = 0; i < otf2trace_n_rows(t); i++)
            (void)otf2trace_row(t, i)->op;
        otf2trace_free(t);
    } else if (!err || !g_str_has_prefix(err->message, path)) {
        __builtin_trap(); /* failure without naming the file */
    }
    g_clear_error(&err);
    return 0;
}
