#!/usr/bin/env python3
"""Documentation is tested: runs every command the READMEs show and checks
every figure they quote against what the commands print now.

Commands: every line of a ```sh block in a README.md (continuations joined) is
run with bash in a scratch folder that sees the repository's examples, tests,
presets and traces, with `shardsim` and `./build/shardsim` meaning the binary
under test; it must exit 0.  The install commands (those running
.ci/install-deps) are not rerun here: the test command must be exactly what
.ci/run runs, and the first command's last step (the default run) is run.

Figures: a comment line
    <!-- check "5.1%" = validate --json -t dgx1-v100 TRACE :: median_abs_pct_error_large -->
says that the quoted text appears in the 25 lines above it and equals the
JSON value at that key (dots and [i] for arrays) of that shardsim command,
rounded as printed.  The unit of the quote sets the scale (s, ms, us, GiB,
MiB, GB, GB/s, TB/s, TFLOP/s, %, x); `:: KEY *100` scales a fraction to
percent.  `<= F x` instead of `=` checks that the value is at most F times the
quote, `>= F x` at least 1/F of it (speed figures, measured on another build
and load): `<!-- check "0.2 s" <= 20 x bench_collective :: ring -->` runs a
bench program and reads the wall time (or M events/s) on its first line that
holds KEY, or on one of the two lines below it.  `<!-- check "+7.6%" in
tests/test_megatron -->` (or `in tests/cli_X.sh`, run with the binary and the source folder) says that a figure a test computes is in what
that test program prints.

Speed figures are read as process CPU time (or M events/s of CPU) where the
bench prints one beside the wall: the quote is a wall time on a one-core
Release run, and a CPU time is what a loaded machine cannot inflate, so the
factor keeps its meaning under load (wall only where a bench prints no CPU).

Outputs are shared, not recomputed (the suite runs each once):
 - a figure's command that is a case of tests/data/golden/cases.tsv is read
   from its recorded output there, which tests/cli_golden.sh holds byte for
   byte to what the binary prints now (both in the suite);
 - with --saved DIR, a test program's output for an `in` check is read from
   DIR/NAME.out (and its exit status from DIR/NAME.rc) when the program's own
   ctest run wrote it (tests/saved_run.sh; tests/CMakeLists.txt makes those
   runs fixtures of this one), newer than the program; otherwise it is run.

--part commands|figures|printed|speed runs one kind of check only (ctest runs
the four as separate tests, in parallel); none: all of them.

Usage: doccheck.py SHARDSIM_BINARY SOURCE_DIR [--part KIND] [--saved DIR]"""
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile

BIN, SRC = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
OPTS = dict(zip(sys.argv[3::2], sys.argv[4::2]))
PART = OPTS.get("--part")
SAVED = OPTS.get("--saved")
if set(OPTS) - {"--part", "--saved"} or PART not in (None, "commands", "figures", "printed", "speed"):
    sys.exit("usage: doccheck.py SHARDSIM_BINARY SOURCE_DIR [--part commands|figures|printed|speed] [--saved DIR]")
BUILD = os.path.dirname(BIN)
SCALE = {"M events/s": 1e6, "s": 1, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "GiB": 2**30, "MiB": 2**20, "KiB": 2**10,
         "GB": 1e9, "MB": 1e6, "GB/s": 1e9, "TB/s": 1e12, "TFLOP/s": 1e12, "%": 1, "x": 1, "": 1}
failures = []


def fail(where, msg):
    failures.append(f"{where}: {msg}")
    print(f"FAIL {where}: {msg}")


def readmes():
    out = []
    for root, dirs, files in os.walk(SRC):
        dirs[:] = [d for d in dirs if not d.startswith((".", "build")) and d != "data"]
        if "README.md" in files:
            out.append(os.path.join(root, "README.md"))
        if os.path.relpath(root, SRC) == "docs":  # the pages of their own, too
            out += [os.path.join(root, f) for f in files if f.endswith(".md")]
    return sorted(out)


def scratch():
    d = tempfile.mkdtemp(prefix="shardsim-doc-")
    for name in ("examples", "tests", "topologies", "models", "traces", "bench", "plots", "sim", ".ci"):
        if os.path.exists(os.path.join(SRC, name)):
            os.symlink(os.path.join(SRC, name), os.path.join(d, name))
    os.makedirs(os.path.join(d, "build"))
    os.symlink(BIN, os.path.join(d, "build", "shardsim"))
    for f in os.listdir(BUILD):  # bench programs, capture tools
        p = os.path.join(BUILD, f)
        if f.startswith("bench_") and os.access(p, os.X_OK):
            os.symlink(p, os.path.join(d, "build", f))
    cap = os.path.join(BUILD, "traces", "capture")
    if os.path.isdir(cap):
        os.makedirs(os.path.join(d, "build", "traces"))
        os.symlink(cap, os.path.join(d, "build", "traces", "capture"))
    return d


PRELUDE = f'shardsim() {{ {shlex.quote(BIN)} "$@"; }}\nexport -f shardsim\n'


def run(cmd, cwd, timeout=600):
    return subprocess.run(["bash", "-c", PRELUDE + cmd], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout)


def sh_commands(path):
    """(line number, command) for every command in the file's ```sh blocks."""
    cmds, inside, buf, start = [], False, "", 0
    for n, line in enumerate(open(path, encoding="utf-8"), 1):
        s = line.rstrip("\n")
        if s.strip().startswith("```"):
            inside = not inside and s.strip()[3:].strip() in ("sh", "bash")
            continue
        if not inside or (not buf and (not s.strip() or s.strip().startswith("#"))):
            continue
        if not buf:
            start = n
        if s.endswith("\\"):
            buf += s[:-1] + " "
            continue
        cmds.append((start, buf + s))
        buf = ""
    return cmds


def check_commands(path, cwd):
    rel = os.path.relpath(path, SRC)
    for n, cmd in sh_commands(path):
        where = f"{rel}:{n}"
        if ".ci/install-deps" in cmd:
            ci = open(os.path.join(SRC, ".ci", "run"), encoding="utf-8").read()
            if "ctest" in cmd:
                if cmd.strip() not in ci:
                    fail(where, "the README's test command is not what .ci/run runs")
                continue
            cmd = cmd.split("&&")[-1].strip()  # the build ran already: run its last step
        r = run(cmd, cwd)
        if r.returncode != 0:
            fail(where, f"`{cmd}` exited {r.returncode}: {r.stderr.strip()[-400:]}")
        else:
            print(f"ok   {where}: {cmd[:100]}")


def lookup(obj, key):
    for part in re.findall(r"[^.\[\]]+|\[\d+\]", key):
        obj = obj[int(part[1:-1])] if part.startswith("[") else obj[part]
    return obj


CHECK = re.compile(r'<!--\s*check\s+"([^"]+)"\s*(=|[<>]=\s*([\d.]+)\s*x)\s*(.+?)\s*::\s*(.+?)\s*(\*\s*[\d.e]+)?\s*-->')
QUOTE = re.compile(r"^([+-]?[\d,]*\.?\d+)\s*(.*)$")
cache = {}


BENCH_FIGURE = re.compile(r"total ([\d.]+) s wall|wall\s+([\d.]+) s|([\d.]+) M events/s")
BENCH_CPU = re.compile(r"\(([\d.]+) s CPU\)|cpu\s+([\d.]+) s|([\d.]+) M events/s CPU")


def golden_stdout(cmd):
    """The recorded stdout of a golden case with exactly these arguments
    (tests/cli_golden.sh checks it against the binary), else None."""
    if "golden" not in cache:
        cache["golden"] = {}
        gold = os.path.join(SRC, "tests", "data", "golden")
        try:
            for line in open(os.path.join(gold, "cases.tsv"), encoding="utf-8"):
                name, _, args = line.rstrip("\n").partition("\t")
                cache["golden"][" ".join(args.split())] = os.path.join(gold, name + ".out")
        except OSError:
            pass
    path = cache["golden"].get(" ".join(cmd.split()))
    if not path or not os.path.exists(path):
        return None
    text = open(path, encoding="utf-8").read()
    head, _, rest = text.partition("\n--- stdout\n")
    if head != "exit 0":
        return None
    return rest.rpartition("\n--- stderr\n")[0] + "\n"


def value_of(cmd, key, cwd):
    if cmd.startswith("bench_"):
        # a bench program's text: the figure on the first line that holds KEY
        if cmd not in cache:
            r = run("./build/" + cmd, cwd)
            # 1: a bench missed its own target on this build (a sanitizer
            # build is slower); the quoted figure is what is checked here
            if r.returncode not in (0, 1):
                raise ValueError(f"`{cmd}` exited {r.returncode}")
            cache[cmd] = r.stdout
        out = cache[cmd].splitlines()
        for i, line in enumerate(out):
            if key not in line:
                continue
            for near in out[i:i + 3]:  # the figure is on that line or just below
                m = BENCH_CPU.search(near) or BENCH_FIGURE.search(near)
                if m:
                    return float(next(g for g in m.groups() if g)) * (1e6 if m.group(3) else 1)
        raise ValueError(f"`{cmd}` printed no figure on a line with {key!r}")
    if cmd not in cache:
        text = golden_stdout(cmd)
        if text is None:
            r = run("shardsim " + cmd, cwd)
            if r.returncode != 0:
                raise ValueError(f"`shardsim {cmd}` exited {r.returncode}: {r.stderr.strip()[-300:]}")
            text = r.stdout
        cache[cmd] = json.loads(text)
    return float(lookup(cache[cmd], key))


IN_CHECK = re.compile(r'<!--\s*check\s+"([^"]+)"\s+in\s+(\S+)\s*-->')
printed = {}


def saved_output(prog, argv):
    """What `prog` printed in its own ctest run (--saved), if that run wrote
    it after the program (and the binary under test) last changed; a failed
    run gives False (its own test fails, and so does this check).  None: run it."""
    if not SAVED:
        return None
    name = os.path.splitext(os.path.basename(prog))[0]
    out, rc = os.path.join(SAVED, name + ".out"), os.path.join(SAVED, name + ".rc")
    try:
        when = min(os.path.getmtime(out), os.path.getmtime(rc))
        inputs = [argv[1], BIN] if prog.endswith(".sh") else [argv[0]]
        if when < max(os.path.getmtime(f) for f in inputs):
            return None
        status = open(rc, encoding="utf-8").read().strip()
        text = open(out, encoding="utf-8", errors="replace").read()
    except OSError:
        return None
    print(f"     {prog}: its output from its own test run ({out})")
    return text if status == "0" else False


def check_printed(where, quote, prog, above):
    if quote not in above:
        fail(where, f'"{quote}" is not in the 25 lines above the check')
        return
    if prog not in printed:
        argv = ["bash", os.path.join(SRC, prog), BIN, SRC] if prog.endswith(".sh") else [os.path.join(BUILD, prog)]
        printed[prog] = saved_output(prog, argv)
        if printed[prog] is False:
            printed[prog] = None
        elif printed[prog] is None:
            r = subprocess.run(argv, capture_output=True, text=True, timeout=600)
            printed[prog] = r.stdout if r.returncode == 0 else None
    if printed[prog] is None:
        fail(where, f"{prog} failed")
    elif quote not in printed[prog]:
        fail(where, f'{prog} no longer prints "{quote}"')
    else:
        print(f"ok   {where}: {quote} (printed by {prog})")


def check_figures(path, cwd):
    rel = os.path.relpath(path, SRC)
    lines = open(path, encoding="utf-8").read().split("\n")
    for i, line in enumerate(lines):
        if "<!-- check" not in line:
            continue
        where = f"{rel}:{i + 1}"
        above = "\n".join(l for l in lines[max(0, i - 25):i] if "<!-- check" not in l)
        m = IN_CHECK.search(line)
        if m:
            if PART in (None, "printed"):
                check_printed(where, m.group(1), m.group(2), above)
            continue
        m = CHECK.search(line)
        if not m:
            if PART in (None, "figures"):
                fail(where, "malformed check comment")
            continue
        quote, op, factor, cmd, key, mult = m.groups()
        if PART not in (None, "figures" if op == "=" else "speed"):
            continue
        if quote not in above:
            fail(where, f'"{quote}" is not in the 25 lines above the check')
            continue
        q = QUOTE.match(quote.replace("−", "-"))
        unit = q.group(2).strip() if q else None
        if not q or unit not in SCALE:
            fail(where, f'cannot read the figure "{quote}"')
            continue
        try:
            v = value_of(cmd, key, cwd) * (float(mult[1:]) if mult else 1) / SCALE[unit]
        except (ValueError, KeyError, IndexError, TypeError) as e:
            fail(where, f"{cmd} :: {key}: {e}")
            continue
        num = q.group(1).replace(",", "")
        decimals = len(num.split(".")[1]) if "." in num else 0
        if op == "=":
            shown = f"{v:.{decimals}f}"
            if float(shown) != float(num):
                fail(where, f'the document says {quote}, the command gives {shown} {unit}'.rstrip())
                continue
        elif op.startswith("<") and v > float(num) * float(factor):
            fail(where, f"{quote} quoted, measured {v:.3g} {unit}, over {factor}x the quote")
            continue
        elif op.startswith(">") and v < float(num) / float(factor):
            fail(where, f"{quote} quoted, measured {v:.3g} {unit}, under 1/{factor} of the quote")
            continue
        print(f"ok   {where}: {quote} ({key})")


def main():
    cwd = scratch()
    docs = readmes()
    for path in docs:
        if PART in (None, "commands"):
            check_commands(path, cwd)
        if PART != "commands":
            check_figures(path, cwd)
    print(f"{len(docs)} READMEs, {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
