#!/bin/bash
# shardsim run --chakra / --export-chakra: a step exported and replayed gives
# the same step time (--json, to the last printed digit); hand-made malformed
# traces exit 2 with the file and the node or byte on stderr and nothing on
# stdout.  Exits 77 (skipped) in a build without Chakra support.
set -u
BIN=$1
SRC=$2
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fail=0
SC=$SRC/examples/gpt3-6.7b-tp8-a100.json
step() { python3 -c 'import json,sys; print(repr(json.load(sys.stdin)["step_time_s"]))'; }

if ! "$BIN" run "$SC" --export-chakra "$TMP/ex" > /dev/null 2> "$TMP/err"; then
    if grep -q 'built without Chakra support' "$TMP/err"; then echo "cli_chakra: SKIPPED (built without Chakra support)"; exit 77; fi
    echo "FAIL export:"; cat "$TMP/err"; exit 1
fi
want=$("$BIN" run "$SC" --json | step)
for times in recorded model; do
    got=$("$BIN" run "$SC" --chakra "$TMP/ex" --chakra-times $times --json | step)
    if [ "$got" != "$want" ]; then echo "FAIL round trip ($times): $got s, the step $want s"; fail=1; fi
done
# a 4-stage pipeline: one file per stage, cross-stage dependencies as send/recv pairs
SC2=$SRC/examples/gpt3-175b-1024-a100.json
"$BIN" run "$SC2" --export-chakra "$TMP/pp" > /dev/null || { echo "FAIL export pp"; fail=1; }
n=$(ls "$TMP/pp" | grep -c '^shardsim\.[0-9]*\.et$')
pp=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["parallelism"]["pp"])' "$SC2")
if [ "$n" != "$pp" ]; then echo "FAIL export pp: $n files for pp $pp"; fail=1; fi
want=$("$BIN" run "$SC2" --json | step)
got=$("$BIN" run "$SC2" --chakra "$TMP/pp" --chakra-times recorded --json | step)
if [ "$got" != "$want" ]; then echo "FAIL round trip pp: $got s, the step $want s"; fail=1; fi
# a timeline of the replay loads as JSON
"$BIN" run "$SC" --chakra "$TMP/ex" --timeline "$TMP/tl.json" > /dev/null &&
    python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$TMP/tl.json" || { echo "FAIL replay timeline"; fail=1; }

# Chakra's own published feeder test trace (one rank, PyTorch-converted)
mkdir -p "$TMP/pub" && cp "$SRC/tests/data/traces/chakra-et_pytorch-1rank_chakra-feeder-tests.0.et" "$TMP/pub/" &&
    "$BIN" run "$SC" --chakra "$TMP/pub" --json | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["nodes"] == 3664 and d["collectives"] == 7 and d["step_time_s"] > 0, d' ||
    { echo "FAIL the published Chakra trace"; fail=1; }

bad() { # NAME EXPECTED-FRAGMENT (trace in $TMP/NAME)
    "$BIN" run "$SC" --chakra "$TMP/$1" > "$TMP/out" 2> "$TMP/err"
    rc=$?
    if [ $rc -ne 2 ]; then echo "FAIL $1: exit $rc, expected 2"; cat "$TMP/err"; fail=1; fi
    if ! grep -qF "$2" "$TMP/err"; then echo "FAIL $1: stderr lacks '$2':"; cat "$TMP/err"; fail=1; fi
    if [ -s "$TMP/out" ]; then echo "FAIL $1: stdout not empty"; fail=1; fi
}
mk() { mkdir -p "$TMP/$1"; printf "$3" > "$TMP/$1/$2"; }
mkdir -p "$TMP/empty"
bad empty 'no Chakra trace files'
bad nodir 'nodir'
mk trunc w.0.et '\x00\x04\x08\x01\x18'
bad trunc "w.0.et: node 0 (byte 1): length 4 runs past the end of the file (3 bytes left)"
mk varint w.0.et '\x00\x80'
bad varint "w.0.et: node 0 (byte 1): the file ends inside its length prefix"
mk huge w.0.et '\x00\xff\xff\xff\xff\x0f'
bad huge "node 0 (byte 1): length 4294967295 runs past the end"
mk type w.0.et '\x00\x04\x08\x01\x18\x0b'
bad type "w.0.et: node 0 (id 1, byte 1): unknown node type (type 11)"
# node id 2 (COMP) depends on id 9 (data_deps, field 5)
mk missing w.0.et '\x00\x06\x08\x02\x18\x04\x28\x09'
bad missing "node 0 (id 2, byte 1): depends on node id 9, which the file lacks"
# id 1 depends on 2, id 2 on 1
mk cycle w.0.et '\x00\x06\x08\x01\x18\x04\x28\x02\x06\x08\x02\x18\x04\x28\x01'
bad cycle "its dependencies form a cycle"
# review 9: a rank whose file is empty leaves a whole-job collective to the others (priced 0 before), a send
# to oneself crosses no link (priced 0 before): both refused at the node
mk lone w.0.et '\x07\x0a\x05\x30\x2e\x30\x2e\x34\x27\x08\x01\x12\x02\x61\x72\x18\x07\x52\x0d\x0a\x09\x63\x6f\x6d\x6d\x5f\x74\x79\x70\x65\x48\x00\x52\x0e\x0a\x09\x63\x6f\x6d\x6d\x5f\x73\x69\x7a\x65\x48\xe8\x07'
mk lone w.1.et '\x07\x0a\x05\x30\x2e\x30\x2e\x34'
bad lone "rank 0 has 1 collectives of no group (the whole job's), rank 1 has none"
mk self w.0.et '\x07\x0a\x05\x30\x2e\x30\x2e\x34\x24\x08\x01\x12\x01\x73\x18\x05\x52\x0c\x0a\x08\x63\x6f\x6d\x6d\x5f\x64\x73\x74\x48\x00\x52\x0d\x0a\x09\x63\x6f\x6d\x6d\x5f\x73\x69\x7a\x65\x48\x64\x24\x08\x02\x12\x01\x72\x18\x06\x52\x0c\x0a\x08\x63\x6f\x6d\x6d\x5f\x73\x72\x63\x48\x00\x52\x0d\x0a\x09\x63\x6f\x6d\x6d\x5f\x73\x69\x7a\x65\x48\x64'
bad self "sends to itself, rank 0: a copy on one device, not a send"
mk two a.0.et '\x00'
mk two b.1.et '\x00'
bad two "holds traces of two workloads (a.*.et and b.*.et)"
mk gap w.0.et '\x00'
mk gap w.2.et '\x00'
bad gap "w.1.et is missing"
"$BIN" run "$SC" --chakra "$TMP/ex" --chakra-times guessed > /dev/null 2> "$TMP/err"
[ $? -eq 2 ] && grep -q 'chakra-times must be model or recorded' "$TMP/err" || { echo "FAIL --chakra-times"; fail=1; }
"$BIN" run "$SC" --chakra "$TMP/ex" --export-chakra "$TMP/x2" > /dev/null 2>&1
[ $? -eq 2 ] || { echo "FAIL --chakra with --export-chakra"; fail=1; }
[ $fail -eq 0 ] && echo "cli_chakra: all passed"
exit $fail
