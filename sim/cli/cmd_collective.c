#include "cli.h"

/* Placeholder until the issue that delivers it lands. */
int cmd_collective(int argc, char **argv)
{
    return cli_usage_error("collective: not implemented yet");
}
