#!/usr/bin/env bash
# The mistakes a new user plausibly makes with the README's commands, each
# refused with "shardsim: FILE:LINE: what is wrong" (or "shardsim: what is
# wrong" for an option) and exit 2, nothing on stdout: misspelt keys, wrong
# units, out-of-range and huge numbers, empty and non-JSON files, a file of
# the wrong kind; outputs that cannot be written (exit 1, before any work);
# and the spellings that are accepted (all-gather as allgather).
# Usage: bash cli_newuser.sh SHARDSIM_BINARY SOURCE_DIR
set -u
bin=$1
src=$2
. "$(dirname "${BASH_SOURCE[0]}")/lib_check.sh" # $tmp, check, expect_exit
base=$src/examples/default.json

# One edit of the default scenario: exit 2, "shardsim: FILE:LINE: PATTERN".
edited() { # NAME PYTHON-EDIT-OF-t PATTERN
  python3 -c "
import sys
t = open(sys.argv[1]).read()
$2
open(sys.argv[2], 'w').write(t)" "$base" "$tmp/$1.json"
  check "$1" expect_exit 2 "^shardsim: $tmp/$1.json:[0-9][0-9]*: .*$3" run "$tmp/$1.json"
}
edited key-typo "t = t.replace('\"global_batch\"', '\"global_bach\"')" 'unknown key "global_bach"'
edited nested-key-typo "t = t.replace('\"recompute\"', '\"recompte\"')" 'unknown key "recompte" in "parallelism"'
edited size-as-rate "t = t.replace('\"25MiB\"', '\"25 MB/s\"')" 'cannot read "25 MB/s" as a size'
edited huge-size "t = t.replace('\"25MiB\"', '25e99')" '"bucket_bytes" must be between'
edited negative "t = t.replace('512', '-512')" '"global_batch" must be between'
edited huge-count "t = t.replace('512', '1e30')" '"global_batch" must be between'
edited fraction "t = t.replace('512', '512.5')" '"global_batch" must be an integer'
edited many-nodes "t = t.replace('\"nodes\": 8', '\"nodes\": 100000000')" '"nodes" must be between'
edited quoted-number "t = t.replace('\"nodes\": 8', '\"nodes\": \"8\"')" '"nodes" must be a number'
edited model-case "t = t.replace('gpt3-13b\"', 'gpt3-13B\"')" 'unknown workload "gpt3-13B"'
edited accelerator-typo "t = t.replace('a100-80gb', 'a100-80')" 'unknown accelerator "a100-80"'
edited topology-typo "t = t.replace('\"dgx-a100-cluster\"', '\"dgx-a100-clustr\"')" 'unknown topology preset'
edited precision-name "t = t.replace('bf16', 'bfloat16')" '"precision" = "bfloat16" is not one of'
edited tp-not-dividing "t = t.replace('\"tp\": 1', '\"tp\": 3')" '"tp" = 3 must divide'
edited weight-update-typo "t = t.replace('\"sharded\"]', '\"shardd\"]')" '"weight_update" entry "shardd" is not'
edited weight-update-twice "t = t.replace('\"sharded\"]', '\"replicated\"]')" '"weight_update" lists "replicated" twice'
edited trailing-comma "t = t.replace('\"allgather_overlap\": true', '\"allgather_overlap\": true,')" 'invalid JSON'
edited duplicate-key "t = t.replace('\"nodes\": 8', '\"nodes\": 8, \"nodes\": 4')" '"nodes" is given twice'
edited yes-for-true "t = t.replace('\"overlap\": true', '\"overlap\": \"yes\"')" '"overlap" must be true or false'
edited model-file-missing "t = t.replace('\"gpt3-13b\"', '\"$tmp/nosuch-model.json\"')" \
  "$tmp/nosuch-model.json: No such file"
edited topology-file-missing "t = t.replace('\"dgx-a100-cluster\"', '\"$tmp/nosuch-topo.json\"')" \
  "$tmp/nosuch-topo.json: No such file"
edited empty "t = ''" 'the file is empty'
edited blank "t = '  \\n\\n '" 'the file is empty'
edited not-an-object "t = '[]'" 'a scenario must be a JSON object'

# the MoE and DeepSeek keys' mistakes (s24 attack): the layout parser bounds
# its repeats, the folded experts' message says what must divide what
moe=$src/examples/mixtral-8x7b-ep8-h100.json ds=$src/tests/data/steps/nemo-deepseek-v3.json
base=$moe edited etp-ep-not-dividing "t = t.replace('\"ep\": 8,', '\"ep\": 16, \"expert_tp\": 1,')" \
  'ep x expert_tp (16) must divide tp x dp (64)'
base=$ds edited modules-twice "t = t.replace('\"mla_up_proj\"', '\"mla_up_proj\", \"mla_up_proj\"')" \
  '"recompute_modules" lists "mla_up_proj" twice'
base=$ds edited layout-huge-repeat "t = t.replace('Et*4|(t*4|)*14tmL', '(t*99999999|)*99999999')" \
  '"pipeline_layout" does not parse'
base=$ds edited layout-unbalanced "t = t.replace('Et*4|(t*4|)*14tmL', 'Et*4|(t*4|*14tmL')" \
  '"pipeline_layout" does not parse'
base=$ds edited layout-wrong-chunks "t = t.replace('Et*4|(t*4|)*14tmL', 'Et*4|(t*4|)*14t|mL')" \
  '"pipeline_layout" must have pp x virtual_stages chunks'

# a file of the wrong kind says what it is not
check "a scenario as --params" expect_exit 2 "^shardsim: $base:1: not collective-model parameters" \
  collective -t dgx-a100 --params "$base"
: >"$tmp/empty.json"
check "an empty --params" expect_exit 2 "^shardsim: $tmp/empty.json:1: the file is empty" \
  collective -t dgx-a100 --params "$tmp/empty.json"

# --op: every library's spelling of an operation, and the list when none fits
"$bin" collective --json -t dgx-a100 --op all-gather --sizes 1M >"$tmp/ag1.json" 2>"$tmp/err"
"$bin" collective --json -t dgx-a100 --op allgather --sizes 1M >"$tmp/ag2.json" 2>>"$tmp/err"
check "--op all-gather is allgather" cmp -s "$tmp/ag1.json" "$tmp/ag2.json"
check "--op all-gather ran" grep -q '"op":[[:space:]]*"allgather"' "$tmp/ag1.json"
check "an unknown --op lists the operations" expect_exit 2 \
  "^shardsim: collective: unknown --op 'bcast' (allreduce, reducescatter, allgather, broadcast, reduce, alltoall)" \
  collective -t dgx-a100 --op bcast

# outputs that cannot be written are refused before any work, with the
# status of an output that cannot be written (1)
mkdir "$tmp/folder"
check "--timeline in a folder that is not there" expect_exit 1 \
  "^shardsim: run: --timeline $tmp/no/t.json: there is no folder $tmp/no to write it in" \
  run "$base" --timeline "$tmp/no/t.json"
check "calibrate -o a folder" expect_exit 1 "^shardsim: calibrate: --output $tmp/folder is a folder, not a file" \
  calibrate -t dgx1-v100 "$src/tests/data/traces/nccl-tests_allreduce_v100-sxm2-16gb_8gpu_hybrid-cube-mesh.txt" \
  -o "$tmp/folder"
check "plan --csv in a folder that is not there" expect_exit 1 "^shardsim: plan: --csv $tmp/no/x.csv: there is no folder" \
  plan "$src/examples/plan-llama2-70b-h100.json" --csv "$tmp/no/x.csv"
check "/dev/null still takes an output" "$bin" run "$base" --timeline /dev/null >/dev/null
# written in place: renamed over, as g_file_set_contents does, a root run turned /dev/null into a file
check "/dev/null is still a device after it" test -c /dev/null
# through a link, too: the link stays (as /dev/stdout is one, which a rename would remove as root)
ln -s /dev/null "$tmp/to-null"
check "a link to /dev/null takes an output" "$bin" run "$base" --timeline "$tmp/to-null" >/dev/null
check "and stays a link" test -L "$tmp/to-null"
if [ -c /dev/full ]; then
  check "an output on a full device fails" expect_exit 1 "^shardsim: timeline: cannot write \"/dev/full\": No space left on device" \
    run "$base" --timeline /dev/full
  check "/dev/full is still a device after it" test -c /dev/full
  "$bin" run "$base" >/dev/full 2>"$tmp/full.err"
  check "stdout on a full device fails" [ $? -eq 1 ]
  check "and says so" grep -q "cannot write the output: No space left on device" "$tmp/full.err"
fi

# a progression past the point limit says so (its end is a member)
check "a progression too long" expect_exit 2 "^shardsim: --vary nodes: the progression up to 100000000 .* more than 100000 values" \
  sweep "$src/examples/sweep-gpt3-1.3b-a100.json" --vary nodes=1,2,...,100000000
check "an end off the progression" expect_exit 2 "not a member of the progression" \
  sweep "$src/examples/sweep-gpt3-1.3b-a100.json" --vary nodes=1,3,...,64

# the answer to "replicated or sharded?" says when the faster one's rival cannot run
"$bin" run "$base" >"$tmp/run.txt" 2>&1
check "the comparison says replicated does not fit" \
  grep -q "^sharded (ZeRO-1) vs replicated: .*; replicated does not fit in memory$" "$tmp/run.txt"
"$bin" run "$base" --json >"$tmp/run.json"
check "and the JSON agrees" python3 -c "
import json, sys
v = {x['variant']: x['fits'] for x in json.load(open(sys.argv[1]))['variants']}
assert v == {'replicated': False, 'sharded (ZeRO-1)': True}, v" "$tmp/run.json"

# a sliding window far below seq_len: model and hardware FLOPs count the
# window's keys, so MFU stays below 100 % (it read 149 % when they did not)
python3 -c "
import json, sys
s = json.load(open(sys.argv[1]))
s['model'] = {'name': 'w', 'type': 'transformer', 'layers': 32, 'hidden': 4096, 'heads': 32, 'ffn': 11008,
              'seq_len': 32768, 'vocab': 32000, 'sliding_window': 1024}
s['global_batch'] = 64
s['parallelism'].update(tp=1, pp=1, cp=2, recompute='selective', weight_update='sharded')
json.dump(s, open(sys.argv[2], 'w'))" "$base" "$tmp/window.json"
"$bin" run --json "$tmp/window.json" >"$tmp/window-out.json" 2>"$tmp/err"
check "a narrow window keeps MFU and FLOP/s physical" python3 -c "
import json, sys
r = json.load(open(sys.argv[1]))
assert 0 < r['mfu'] < 1 and r['flops_per_device'] < 312e12, (r['mfu'], r['flops_per_device'])" "$tmp/window-out.json"

# --help names the whole command
for c in run plan sweep collective validate calibrate; do
  "$bin" $c --help >"$tmp/help" 2>&1
  check "$c --help's usage line" grep -q "^  shardsim $c \[OPTION" "$tmp/help"
done

echo "cli_newuser: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
