#include "cli.h"

/* Placeholder until the issue that delivers it lands. */
int cmd_validate(int argc, char **argv)
{
    return cli_usage_error("validate: not implemented yet");
}
