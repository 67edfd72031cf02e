# Sourced by the cli_*.sh scripts that count their checks (after they set
# $bin, the shardsim binary); it makes $tmp, a scratch folder removed on exit.
#   check NAME COMMAND...            runs COMMAND: a pass, or a failure named NAME
#   expect_exit CODE PATTERN ARGS... runs $bin ARGS: true when it exits CODE with
#                                    PATTERN on stderr and nothing on stdout (else
#                                    says what it got)
# A script ends with: echo "NAME: $pass passed, $fail failed"; [ "$fail" -eq 0 ]
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0
check() {
  local name=$1
  shift
  if "$@"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $name"; fi
}
expect_exit() {
  local code=$1 pattern=$2
  shift 2
  "$bin" "$@" >"$tmp/out" 2>"$tmp/err"
  local rc=$?
  [ "$rc" -eq "$code" ] && grep -q -- "$pattern" "$tmp/err" && [ ! -s "$tmp/out" ] ||
    { echo "  exit $rc, stderr: $(head -c 300 "$tmp/err")"; false; }
}
