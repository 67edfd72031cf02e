#!/bin/bash
# --report FILE.html on run, sweep, validate and plan: one self-contained page whose
# numbers equal the --json output (tests/report_check.py), loaded in a real
# headless browser (Debian's chromium, .ci/install-deps): no console errors,
# no failed loads, every <svg> rendered with paths drawn.  Without chromium
# the page checks still run, then the test says the browser part was skipped
# and exits 77 (ctest: skipped), never passing silently.
set -u
BIN=$1
SRC=$2
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fail=0
CHECK="python3 $SRC/tests/report_check.py"
BROWSER=""
for b in chromium chromium-browser google-chrome; do
    if command -v "$b" > /dev/null 2>&1; then BROWSER=$b; break; fi
done

# The probe, put first in <head> of a copy of the page: records errors
# (script errors and failed loads, which do not bubble: capture) and, after
# load, each <svg>'s box and how many of its paths have an area, into a
# <pre id="probe"> that --dump-dom shows.
PROBE='<script>(function(){var errors=[];
window.addEventListener("error",function(e){errors.push(String(e.message||"")+" "+(e.target&&e.target.outerHTML?e.target.outerHTML.slice(0,120):""));},true);
window.addEventListener("load",function(){var out={errors:errors,svgs:0,rendered:[]};var svgs=document.querySelectorAll("svg");out.svgs=svgs.length;
svgs.forEach(function(s){var r=s.getBoundingClientRect(),cs=getComputedStyle(s),paths=s.querySelectorAll("path"),drawn=0;
paths.forEach(function(p){var b=p.getBBox();if(b.width+b.height>0)drawn++;});
out.rendered.push({width:r.width,height:r.height,shapes:drawn,paths:paths.length,visible:cs.display!=="none"&&cs.visibility!=="hidden"});});
var pre=document.createElement("pre");pre.id="probe";pre.textContent=JSON.stringify(out);document.body.appendChild(pre);});})();</script>'

browser_check() { # NAME PAGE JSON MIN_SVG MIN_TABLES
    local name=$1 page=$2 json=$3
    if ! $CHECK "$page" "$json" --min-svg "$4" --min-tables "$5"; then fail=1; return; fi
    [ -n "$BROWSER" ] || return
    python3 - "$page" "$TMP/$name.probe.html" "$PROBE" <<'EOF'
import sys
html = open(sys.argv[1], encoding="utf-8").read()
open(sys.argv[2], "w", encoding="utf-8").write(html.replace("<head>", "<head>\n" + sys.argv[3], 1))
EOF
    timeout 120 "$BROWSER" --headless --no-sandbox --disable-gpu --no-first-run --disable-extensions \
        --user-data-dir="$TMP/profile" --enable-logging=stderr --v=0 --virtual-time-budget=10000 \
        --dump-dom "file://$TMP/$name.probe.html" > "$TMP/$name.dom" 2> "$TMP/$name.log"
    local rc=$?
    if [ $rc -ne 0 ] || [ ! -s "$TMP/$name.dom" ]; then
        echo "FAIL $name: $BROWSER exited $rc with no DOM:"; tail -5 "$TMP/$name.log"; fail=1; return
    fi
    # the page's console messages (errors, warnings, logs): it should have none
    if grep -a ':CONSOLE' "$TMP/$name.log"; then echo "FAIL $name: console messages above"; fail=1; fi
    $CHECK "$page" "$json" --dom "$TMP/$name.dom" --min-svg "$4" --min-tables "$5" || fail=1
}

same_json() { # NAME FILE-A FILE-B: one JSON object, equal
    if ! python3 -c 'import json,sys; sys.exit(json.load(open(sys.argv[1])) != json.load(open(sys.argv[2])))' "$2" "$3"; then
        echo "FAIL $1: --json with --report differs from --json alone"; fail=1
    fi
}

cd "$SRC" || exit 1

# run: two variants (replicated vs sharded), one memory chart
"$BIN" run examples/sweep-gpt3-1.3b-a100.json --json --report "$TMP/run.html" > "$TMP/run.json" 2> "$TMP/err" \
    || { echo "FAIL run: exit $?"; cat "$TMP/err"; fail=1; }
"$BIN" run examples/sweep-gpt3-1.3b-a100.json --json > "$TMP/run2.json"
same_json run "$TMP/run.json" "$TMP/run2.json"
browser_check run "$TMP/run.html" "$TMP/run.json" 1 4
# the presets' sources are on the page
for want in 'accelerator a100-80gb' 'topology dgx-a100-cluster' 'model gpt3-1.3b' 'collective parameters (default)'; do
    grep -qF "<h3>$want</h3>" "$TMP/run.html" || { echo "FAIL run: no sources of '$want'"; fail=1; }
done
# the same page twice: byte-identical
"$BIN" run examples/sweep-gpt3-1.3b-a100.json --report "$TMP/run-b.html" > /dev/null
mv "$TMP/run-b.html" "$TMP/run-c.html"
"$BIN" run examples/sweep-gpt3-1.3b-a100.json --report "$TMP/run-b.html" > /dev/null
cmp -s "$TMP/run-b.html" "$TMP/run-c.html" || { echo "FAIL run: two reports of one input differ"; fail=1; }

# run with pipeline sends and warnings: the text is escaped
cat > "$TMP/odd <name>.json" <<'EOF'
{"name": "odd <b>&\"name\"</b>", "topology": "dgx-a100-cluster", "nodes": 4, "accelerator": "h100-sxm",
 "model": "gpt3-1.3b", "global_batch": 64, "micro_batch": 2, "parallelism": {"dp": 2, "tp": 4, "pp": 2}}
EOF
"$BIN" run "$TMP/odd <name>.json" --json --report "$TMP/odd.html" > "$TMP/odd.json" 2> "$TMP/err" \
    || { echo "FAIL run odd: exit $?"; cat "$TMP/err"; fail=1; }
browser_check odd "$TMP/odd.html" "$TMP/odd.json" 1 4
grep -q '<b>&' "$TMP/odd.html" && { echo "FAIL odd: unescaped markup on the page"; fail=1; }
grep -qF 'odd &lt;b&gt;&amp;&quot;name&quot;&lt;/b&gt;' "$TMP/odd.html" || { echo "FAIL odd: title not escaped"; fail=1; }
grep -qF '<ul class="warnings">' "$TMP/odd.html" || { echo "FAIL odd: the scenario's warning is not on the page"; fail=1; }

# sweep: eight curves (small multiples), memory bars
"$BIN" sweep examples/sweep-gpt3-1.3b-a100.json --vary nodes=1,2 --vary parallelism.tp=1,2,4,8 -j 2 --json \
    --report "$TMP/sweep.html" > "$TMP/sweep.json" 2> "$TMP/err" || { echo "FAIL sweep: exit $?"; cat "$TMP/err"; fail=1; }
"$BIN" sweep examples/sweep-gpt3-1.3b-a100.json --vary nodes=1,2 --vary parallelism.tp=1,2,4,8 -j 2 --json \
    > "$TMP/sweep2.json" 2> /dev/null
same_json sweep "$TMP/sweep.json" "$TMP/sweep2.json"
browser_check sweep "$TMP/sweep.html" "$TMP/sweep.json" 2 1
grep -qF 'Step time: tp=1' "$TMP/sweep.html" || { echo "FAIL sweep: no facet 'tp=1'"; fail=1; }

# plan: the ranked configurations and the Pareto fronts
cat > "$TMP/q.json" <<'EOF'
{"name": "q", "accelerator": "a100-80gb", "topology": "dgx-a100-cluster", "nodes": 1,
 "model": "gpt3-125m", "global_batch": 64, "micro_batch": 1, "parallelism": {"dp": 8, "tp": 1, "pp": 1}}
EOF
"$BIN" plan "$TMP/q.json" --gpus 8-16 --tokens 2B --top 5 --json --report "$TMP/plan.html" > "$TMP/plan.json" \
    2> "$TMP/err" || { echo "FAIL plan: exit $?"; cat "$TMP/err"; fail=1; }
"$BIN" plan "$TMP/q.json" --gpus 8-16 --tokens 2B --top 5 --json > "$TMP/plan2.json" 2> /dev/null
same_json plan "$TMP/plan.json" "$TMP/plan2.json"
browser_check plan "$TMP/plan.html" "$TMP/plan.json" 1 1
grep -qF '<h3>time-to-train defaults</h3>' "$TMP/plan.html" || { echo "FAIL plan: no sources of the defaults"; fail=1; }

# validate: two traces, the p10-p90 band
T1=tests/data/traces/nccl-tests_allreduce_a100-40gb-oci-bm-gpu4.8_1node8gpu_nccl2.25.1_ocitutorials-ol.txt
T2=tests/data/traces/nccl-tests_allreduce_a100-40gb-oci-bm-gpu4.8_2node16gpu_nccl2.26.5_ocitutorials-ubuntu.txt
"$BIN" validate -t oci-bm-gpu4.8 "$T1" "$T2" --json --report "$TMP/validate.html" > "$TMP/validate.json" 2> "$TMP/err" \
    || { echo "FAIL validate: exit $?"; cat "$TMP/err"; fail=1; }
browser_check validate "$TMP/validate.html" "$TMP/validate.json" 1 4
grep -qF 'p10-p90' "$TMP/validate.html" || { echo "FAIL validate: no uncertainty band on the plot"; fail=1; }
grep -qF '<h3>topology oci-bm-gpu4.8</h3>' "$TMP/validate.html" || { echo "FAIL validate: no topology sources"; fail=1; }
# a log with NCCL's tuning lines: what NCCL ran, in columns of their own
T3=tests/data/traces/nccl-tests_allreduce_h100-sxm_1node6gpu_nvswitch_nccl2.29.2_auto_nccl-collectives-bench-scaling.txt
"$BIN" validate -t dgx-h100 --ranks 6 "$T3" --json --report "$TMP/logged.html" > "$TMP/logged.json" 2> "$TMP/err" \
    || { echo "FAIL validate (logged): exit $?"; cat "$TMP/err"; fail=1; }
browser_check logged "$TMP/logged.html" "$TMP/logged.json" 1 3
grep -qF 'NCCL ran</th>' "$TMP/logged.html" || { echo "FAIL validate (logged): no NCCL ran column"; fail=1; }

# bad --report: not .html, empty, the input itself; exit 2, no file
for args in "--report $TMP/r.txt" "--report=" "--report examples/default.json"; do
    "$BIN" run examples/default.json $args > /dev/null 2> "$TMP/err"
    rc=$?
    if [ $rc -ne 2 ] || ! grep -q '^shardsim: ' "$TMP/err"; then echo "FAIL run $args: exit $rc"; cat "$TMP/err"; fail=1; fi
done
[ -e "$TMP/r.txt" ] && { echo "FAIL: a refused report was written"; fail=1; }
"$BIN" run examples/default.json --report /nonexistent-dir/r.html > /dev/null 2> "$TMP/err"
rc=$?
[ $rc -eq 1 ] && grep -q '^shardsim: .*/nonexistent-dir' "$TMP/err" || { echo "FAIL unwritable report: exit $rc"; cat "$TMP/err"; fail=1; }

if [ $fail -ne 0 ]; then exit 1; fi
if [ -z "$BROWSER" ]; then
    echo "SKIP browser part: chromium not found (Debian: apt-get install chromium; .ci/install-deps installs it)."
    echo "The pages' self-containment, escaping and numbers were checked without it."
    exit 77
fi
echo "ok: run, sweep, validate and plan reports load in $BROWSER with no errors; numbers equal --json"
