#include "cli.h"

/* Placeholder until the issue that delivers it lands. */
int cmd_run(int argc, char **argv)
{
    return cli_usage_error("run: not implemented yet");
}
