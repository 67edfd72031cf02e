"""Shared by the cli_*.sh checks whose body is Python (cli_clouds.sh,
cli_uncertainty.sh): run the shardsim binary, parse its --json output, and
collect failures so a script reports every one before it exits non-zero.
Import it with sys.path.insert(0, SOURCE_DIR + "/tests")."""
import json
import subprocess

fail = 0


def bad(msg):
    """Print one failure and remember it for exit_status()."""
    global fail
    print("FAIL:", msg)
    fail = 1


def runner(binary):
    """A run(*args) that returns the parsed --json object, or None (a failure) when shardsim exits non-zero."""
    def run(*args):
        out = subprocess.run([binary] + list(args), capture_output=True, text=True)
        if out.returncode:
            bad("shardsim %s: %s" % (" ".join(args), out.stderr.strip()))
            return None
        return json.loads(out.stdout)
    return run


def exit_status():
    return fail
