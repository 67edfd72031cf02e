/* "shardsim version": the version as text or one JSON object. */
#include "cli.h"

#include <stdio.h>

int cmd_version(int argc, char **argv)
{
    gboolean json = FALSE;
    GOptionEntry entries[] = {
        {"json", 0, 0, G_OPTION_ARG_NONE, &json, "print one JSON object", NULL},
        {NULL, 0, 0, 0, NULL, NULL, NULL},
    };
    GOptionContext *ctx = g_option_context_new("- print the version");
    g_option_context_add_main_entries(ctx, entries, NULL);
    bool ok = cli_parse_options(ctx, entries, &argc, &argv);
    g_option_context_free(ctx);
    if (!ok)
        return 2;
    if (argc > 1)
        return cli_usage_error("version: unexpected argument '%s'", argv[1]);
    if (json) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "version", SHARDSIM_VERSION);
        cli_print_json(o);
    } else {
        printf("shardsim %s\n", SHARDSIM_VERSION);
    }
    return 0;
}
