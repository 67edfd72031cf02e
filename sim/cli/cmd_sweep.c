#include "cli.h"

/* Placeholder until the issue that delivers it lands. */
int cmd_sweep(int argc, char **argv)
{
    return cli_usage_error("sweep: not implemented yet");
}
