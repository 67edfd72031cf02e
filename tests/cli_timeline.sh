#!/bin/bash
# shardsim run --timeline: a Chrome Trace Event file (the JSON object form
# that Perfetto and chrome://tracing read) whose every event is well formed,
# whose memory counters peak at the --json memory total on the reported
# stage's device, and where every pipeline send has one flow arrow ("s" on
# the send's slice, "f" with "bp": "e" on a slice of another device).
set -u
BIN=$1
SRC=$2
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fail=0

check() { # NAME SCENARIO
    "$BIN" run "$2" --json --timeline "$TMP/$1.trace.json" > "$TMP/$1.json" 2> "$TMP/err" \
        || { echo "FAIL $1: exit $?"; cat "$TMP/err"; fail=1; return; }
    python3 - "$TMP/$1.trace.json" "$TMP/$1.json" "$1" <<'EOF' || fail=1
import json, sys
trace, res, name = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), sys.argv[3]
fails = []
ev = trace["traceEvents"]
procs, slices, peaks, marks, flows = {}, {}, {}, {}, {}
for e in ev:
    ph = e.get("ph")
    if ph not in ("X", "M", "C", "i", "s", "f"):
        fails.append(f"unknown phase {ph!r}")
        continue
    if not isinstance(e.get("pid"), int) or not isinstance(e.get("name"), str):
        fails.append(f"event without pid or name: {e}")
        continue
    if ph != "M" and not (isinstance(e.get("ts"), (int, float)) and e["ts"] >= 0):
        fails.append(f"event without a time: {e}")
    if ph == "M" and e["name"] == "process_name":
        procs[e["pid"]] = e["args"]["name"]
    elif ph == "X":
        if not e["dur"] >= 0:
            fails.append(f"negative duration: {e}")
        slices.setdefault((e["pid"], e["tid"]), []).append((e["ts"], e["ts"] + e["dur"], e["name"]))
    elif ph == "C":
        v = e["args"]["allocated_bytes"]
        peaks[e["pid"]] = max(peaks.get(e["pid"], 0), v)
    elif ph == "i":
        if e.get("s") != "p":
            fails.append(f"instant event not process-scoped: {e}")
        marks[e["pid"]] = e["args"]["allocated_bytes"]
    elif ph in ("s", "f"):
        flows.setdefault(e["id"], []).append(e)

def slice_at(pid, tid, ts):
    return next((n for s, t, n in slices.get((pid, tid), []) if s - 1e-9 <= ts <= t + 1e-9), None)

mem = res["memory_per_device_bytes"]
cfg = res["config"]
total = mem["total"]
if len(peaks) != cfg["pp"]:
    fails.append(f"{len(peaks)} memory counters for pp {cfg['pp']}")
best = max(peaks.values()) if peaks else 0
if abs(best - total) > 1e-9 * total:
    fails.append(f"highest counter peak {best} B, memory model {total} B")
dev = f"gpu{int(mem['stage'] * cfg['dp'] * cfg['tp'])}"
on = [p for p, n in procs.items() if n == dev]
if not on or abs(peaks.get(on[0], 0) - total) > 1e-9 * total:
    fails.append(f"the peak is not on {dev}, the reported stage's device")
for pid, v in peaks.items():
    if marks.get(pid) != v:
        fails.append(f"{procs.get(pid)}: peak mark {marks.get(pid)} for a peak of {v}")
sends = sum(1 for sl in slices.values() for _, _, n in sl if n.startswith("send_"))
for i, pair in flows.items():
    phs = sorted(e["ph"] for e in pair)
    if phs != ["f", "s"]:
        fails.append(f"flow {i}: {phs}")
        continue
    s = next(e for e in pair if e["ph"] == "s")
    f = next(e for e in pair if e["ph"] == "f")
    src, dst = slice_at(s["pid"], s["tid"], s["ts"]), slice_at(f["pid"], f["tid"], f["ts"])
    if not (src and src.startswith("send_") and dst and s["pid"] != f["pid"] and f.get("bp") == "e"
            and s["cat"] == f["cat"] and s["name"] == f["name"]):
        fails.append(f"flow {i} from {src!r} to {dst!r} is not a send's arrow to another device")
if len(flows) != sends or trace["otherData"]["flow_arrows"] != sends:
    fails.append(f"{sends} sends, {len(flows)} arrows")
names = [n for sl in slices.values() for _, _, n in sl]
if "forward L0 mb0" not in names:
    fails.append("no event named 'forward L0 mb0'")
if cfg["dp"] > 1 and not any("bucket" in n and "iB)" in n for n in names):
    fails.append("no gradient bucket named with its bytes")
for f in fails:
    print(f"FAIL {name}: {f}")
if not fails:
    print(f"ok {name}: {len(ev)} events, {len(peaks)} memory counters, {sends} sends with arrows")
sys.exit(1 if fails else 0)
EOF
}

cd "$SRC" || exit 1
check default examples/default.json
cat > "$TMP/pp4-scenario.json" <<'END'
{"topology": "dgx-a100-cluster", "nodes": 4, "model": "gpt3-1.3b", "global_batch": 64, "micro_batch": 2,
 "parallelism": {"dp": 2, "tp": 4, "pp": 4}}
END
check pp4 "$TMP/pp4-scenario.json"
sed 's/"pp": 4}/"pp": 4, "virtual_stages": 2}/' "$TMP/pp4-scenario.json" > "$TMP/vpp2-scenario.json"
check interleaved "$TMP/vpp2-scenario.json"
exit $fail
